/* Seed mode against an independent port of the original AssignTriangle, written here straight from
 * docs/binding.md (the original method's arithmetic): row for row (triangles, their order, percents,
 * distances to the bit) on regular grid cages full of exact ties, on the demo bear and on Alicia with the
 * committed hair cage; plus hand-computed rows and the percent rounding cases. This file is built with
 * -ffp-contract=off like src/proxy/seed.c (Makefile), so the port rounds where the original does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/pmx.h"
#include "plush/proxy.h"
#include "plush/attach.h"
#include "plush/scene_proxy.h"
#include "plush/sys/core.h"
#include "plush/sys/proxy.h"
#include "plush/sys/scene.h"
#include "proxy/bind_internal.h"
#include "support/shared_data.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the port: the design's pseudo-code, one step per line, nothing shared with src/proxy -------- */

typedef struct port_tri {
    float p[3][3];
    float n[3];
    float min[3], max[3];
} port_tri;

static float pdot(const float a[3], const float b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static void psub(const float a[3], const float b[3], float o[3])
{
    for (int k = 0; k < 3; k++)
        o[k] = a[k] - b[k];
}
static void pcross(const float a[3], const float b[3], float o[3])
{
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}
static float plength(const float v[3]) { return sqrtf(pdot(v, v)); }
static void pnormalize(const float v[3], float o[3])
{
    float len = plength(v);
    for (int k = 0; k < 3; k++)
        o[k] = v[k] / len;
}

static void port_prepare(const float a[3], const float b[3], const float c[3], port_tri *t)
{
    memcpy(t->p[0], a, sizeof t->p[0]);
    memcpy(t->p[1], b, sizeof t->p[1]);
    memcpy(t->p[2], c, sizeof t->p[2]);
    float e1[3], e2[3], x[3];
    psub(b, a, e1);
    psub(c, a, e2);
    pcross(e1, e2, x);
    pnormalize(x, t->n);   /* NaN for a zero cross product, as the original */
    for (int k = 0; k < 3; k++) {
        t->min[k] = a[k] < b[k] ? a[k] : b[k];
        t->min[k] = c[k] < t->min[k] ? c[k] : t->min[k];
        t->max[k] = a[k] > b[k] ? a[k] : b[k];
        t->max[k] = c[k] > t->max[k] ? c[k] : t->max[k];
    }
}

static float port_distance(const port_tri *t, const float p[3])
{
    float p0p[3];
    psub(t->p[0], p, p0p);
    float dp = pdot(p0p, t->n);
    float q[3];
    for (int k = 0; k < 3; k++)
        q[k] = p[k] - t->n[k] * dp;
    for (int i = 0; i < 3; i++) {
        const float *a = t->p[i], *b = t->p[(i + 1) % 3];
        float e[3], qa[3], x[3];
        psub(b, a, e);
        psub(q, a, qa);
        pcross(e, qa, x);
        if (pdot(t->n, x) < 0) {
            float u[3], pa[3], r[3];
            pnormalize(e, u);
            float len = plength(e);
            psub(p, a, pa);
            float l = pdot(u, pa);
            if (l < 0) {
                psub(a, p, r);
                return plength(r);
            }
            if (l > len) {
                psub(b, p, r);
                return plength(r);
            }
            float foot[3];
            for (int k = 0; k < 3; k++)
                foot[k] = u[k] * l + a[k];
            psub(p, foot, r);
            return plength(r);
        }
    }
    return fabsf(dp);
}

typedef struct port_row {
    int32_t tri[4];
    uint32_t pct[4];
    float d[4];
} port_row;

static port_row port_assign(const port_tri *tris, size_t count, const float p[3])
{
    float dist[4] = {FLT_MAX, FLT_MAX, FLT_MAX, FLT_MAX};
    int32_t idx[4] = {-1, -1, -1, -1};
    float far = FLT_MAX;
    for (size_t t = 0; t < count; t++) {
        const port_tri *tr = &tris[t];
        bool skip = false;
        for (int k = 0; k < 3; k++)
            if (p[k] - tr->max[k] > far || tr->min[k] - p[k] > far)
                skip = true;
        if (skip)
            continue;
        float d = port_distance(tr, p);
        if (d > far)
            continue;
        for (int j = 0; j < 4; j++)
            if (d <= dist[j]) {   /* an equal distance goes before the held one */
                for (int m = 3; m > j; m--)
                    dist[m] = dist[m - 1], idx[m] = idx[m - 1];
                dist[j] = d, idx[j] = (int32_t)t;
                if (j == 3)
                    far = d;
                break;
            }
    }
    port_row r = {{-1, -1, -1, -1}, {0, 0, 0, 0}, {0, 0, 0, 0}};
    if (idx[0] < 0) {
        r.tri[0] = 0, r.pct[0] = 100;
        return r;
    }
    float d0 = dist[0];
    r.tri[0] = idx[0], r.d[0] = d0;
    if (d0 < 0.00001f) {
        r.pct[0] = 100;
        return r;
    }
    bool keep[4] = {true, false, false, false};
    float sum = 1;
    for (int b = 1; b < 4; b++)
        if (idx[b] >= 0 && !(dist[b] / d0 > 3)) {
            keep[b] = true;
            sum += d0 / dist[b];
        }
    uint32_t total = 0;
    for (int b = 0; b < 4; b++)
        if (keep[b]) {
            r.tri[b] = idx[b], r.d[b] = dist[b];
            r.pct[b] = (uint32_t)(100 * (d0 / dist[b] / sum) + 0.00001f);
            total += r.pct[b];
        }
    if (total < 100)
        r.pct[0] += 100 - total;
    else if (total > 100)
        r.pct[0] -= total - 100;
    if (r.pct[0] > 100)
        r.pct[0] = 100;
    return r;
}

static port_tri *port_prepare_all(const plush_proxy_mesh *m)
{
    port_tri *t = calloc(m->triangle_count ? m->triangle_count : 1, sizeof *t);
    assert_non_null(t);
    for (size_t i = 0; i < m->triangle_count; i++)
        port_prepare(m->nodes[m->triangles[i][0]], m->nodes[m->triangles[i][1]], m->nodes[m->triangles[i][2]], &t[i]);
    return t;
}

/* ---- plush against the port ------------------------------------------------------------------------ */

typedef struct tally {
    size_t rows, ties, kept[5];
    size_t differ, differ_bits;   /* rows with other triangles or percents; with other distance bits only */
} tally;

/* 0: the same row; 1: the same triangles and percents (a CSV row) but other distance bits; 2: other
 * triangles or percents. */
static int row_differs(const plush_proxy_binding *b, size_t i, const port_row *r)
{
    int worst = 0;
    for (int k = 0; k < 4; k++) {
        if (b->triangles[i][k] != r->tri[k] || b->percent[i][k] != r->pct[k])
            return 2;
        if (memcmp(&b->distances[i][k], &r->d[k], sizeof(float)) != 0)
            worst = 1;
    }
    return worst;
}

/* Binds in seed mode with every search (BVH and brute force, one and three threads) and compares each
 * row with the port; fails on the first difference unless allow_differ (to measure, not assert: set
 * PLUSH_SEED_MEASURE for the real-file cases to count the rows an older seed mode gets wrong). */
static tally compare_with_port(const plush_proxy_mesh *m, const float (*pts)[3], size_t n, bool allow_differ)
{
    port_tri *tris = port_prepare_all(m);
    port_row *rows = malloc((n ? n : 1) * sizeof *rows);
    assert_non_null(rows);
    tally t = {.rows = n};
    for (size_t i = 0; i < n; i++) {
        rows[i] = port_assign(tris, m->triangle_count, pts[i]);
        int kept = 0;
        while (kept < 4 && rows[i].tri[kept] >= 0)
            kept++;
        t.kept[kept]++;
        for (int k = 0; k + 1 < kept; k++)
            if (rows[i].d[k] == rows[i].d[k + 1]) {
                t.ties++;
                break;
            }
    }
    const plush_proxy_search searches[2] = {PLUSH_PROXY_SEARCH_BVH, PLUSH_PROXY_SEARCH_BRUTE};
    for (int s = 0; s < 2; s++)
        for (int threads = 1; threads <= 3; threads += 2) {
            plush_proxy_bind_options o = {.seed = true, .search = searches[s], .threads = threads};
            plush_proxy_binding *b = NULL;
            plush_diag diag = {0};
            if (plush_proxy_bind(m, pts, n, &o, &b, &diag) != PLUSH_OK)
                fail_msg("bind failed: %s", diag.message);
            assert_int_equal(diag.warning_count, 0);   /* the BVH really ran */
            size_t differ[3] = {0, 0, 0};
            for (size_t i = 0; i < n; i++) {
                int how = row_differs(b, i, &rows[i]);
                differ[how]++;
                if (how == 0)
                    continue;
                if (!allow_differ)
                    fail_msg("point %zu (%.9g %.9g %.9g), search %d: plush %d %d %d %d / %u %u %u %u, port %d %d %d %d / "
                             "%u %u %u %u",
                             i, (double)pts[i][0], (double)pts[i][1], (double)pts[i][2], s, b->triangles[i][0],
                             b->triangles[i][1], b->triangles[i][2], b->triangles[i][3], b->percent[i][0],
                             b->percent[i][1], b->percent[i][2], b->percent[i][3], rows[i].tri[0], rows[i].tri[1],
                             rows[i].tri[2], rows[i].tri[3], rows[i].pct[0], rows[i].pct[1], rows[i].pct[2],
                             rows[i].pct[3]);
            }
            if (s == 0 && threads == 1)
                t.differ = differ[2], t.differ_bits = differ[1];
            plush_proxy_binding_free(b);
        }
    free(rows);
    free(tris);
    return t;
}

/* ---- regular grid cages ------------------------------------------------------------------------------ */

typedef struct cage {
    float (*nodes)[3];
    uint32_t (*tris)[3];
    size_t node_count, tri_count;
} cage;

static plush_proxy_mesh mesh_of(const cage *c)
{
    return (plush_proxy_mesh){.nodes = (const float(*)[3])c->nodes, .node_count = c->node_count,
                              .triangles = (const uint32_t(*)[3])c->tris, .triangle_count = c->tri_count};
}

static uint32_t add_node(cage *c, float x, float y, float z)
{
    c->nodes[c->node_count][0] = x, c->nodes[c->node_count][1] = y, c->nodes[c->node_count][2] = z;
    return (uint32_t)c->node_count++;
}

static void add_tri(cage *c, uint32_t a, uint32_t b, uint32_t d)
{
    c->tris[c->tri_count][0] = a, c->tris[c->tri_count][1] = b, c->tris[c->tri_count][2] = d;
    c->tri_count++;
}

static cage new_cage(size_t nodes, size_t tris)
{
    cage c = {.nodes = calloc(nodes, sizeof *c.nodes), .tris = calloc(tris, sizeof *c.tris)};
    assert_non_null(c.nodes);
    assert_non_null(c.tris);
    return c;
}

static void free_cage(cage *c)
{
    free(c->nodes);
    free(c->tris);
}

/* An n x n grid of unit squares in the plane z = 0, square (x, y) split along its diagonal from (x, y)
 * to (x + 1, y + 1) into triangles 2 (y n + x) = (a, b, d) and 2 (y n + x) + 1 = (a, d, c). */
static void flat_grid(cage *c, int n)
{
    for (int y = 0; y <= n; y++)
        for (int x = 0; x <= n; x++)
            add_node(c, (float)x, (float)y, 0);
    for (uint32_t y = 0; y < (uint32_t)n; y++)
        for (uint32_t x = 0; x < (uint32_t)n; x++) {
            uint32_t a = y * (uint32_t)(n + 1) + x, b = a + 1, cc = a + (uint32_t)n + 1, d = cc + 1;
            add_tri(c, a, b, d), add_tri(c, a, d, cc);
        }
}

/* The surface of the cube [0, n]^3, each face an n x n grid of split squares, normals outward. */
static void box_grid(cage *c, int n)
{
    for (int axis = 0; axis < 3; axis++)
        for (int side = 0; side < 2; side++) {
            uint32_t first = (uint32_t)c->node_count;
            for (int v = 0; v <= n; v++)
                for (int u = 0; u <= n; u++) {
                    float pt[3];
                    pt[axis] = side ? (float)n : 0;
                    pt[(axis + 1) % 3] = (float)u, pt[(axis + 2) % 3] = (float)v;
                    add_node(c, pt[0], pt[1], pt[2]);
                }
            for (uint32_t v = 0; v < (uint32_t)n; v++)
                for (uint32_t u = 0; u < (uint32_t)n; u++) {
                    uint32_t a = first + v * (uint32_t)(n + 1) + u, b = a + 1, cc = a + (uint32_t)n + 1, d = cc + 1;
                    if (side)
                        add_tri(c, a, b, d), add_tri(c, a, d, cc);
                    else
                        add_tri(c, a, d, b), add_tri(c, a, cc, d);
                }
        }
}

/* Points on a lattice of step `step` over [lo, hi]^2 x heights: on shared vertices, on shared edges, at
 * square centres, and above them, where several triangles are exactly equally far. */
static size_t lattice(float (*pts)[3], size_t cap, float lo, float hi, float step, const float *zs, int z_count)
{
    size_t n = 0;
    for (int iz = 0; iz < z_count; iz++)
        for (float y = lo; y <= hi; y += step)
            for (float x = lo; x <= hi; x += step) {
                assert_true(n < cap);
                pts[n][0] = x, pts[n][1] = y, pts[n][2] = zs[iz];
                n++;
            }
    return n;
}

static void test_flat_grid_ties_match_port(void **state)
{
    (void)state;
    enum { N = 8 };
    cage c = new_cage((N + 1) * (N + 1), 2 * N * N);
    flat_grid(&c, N);
    static float pts[9000][3];
    const float zs[] = {0, 0.25f, -0.5f, 1, 3};
    size_t n = lattice(pts, 9000, -1, N + 1, 0.25f, zs, 5);
    plush_proxy_mesh m = mesh_of(&c);
    tally t = compare_with_port(&m, (const float(*)[3])pts, n, false);
    print_message("flat grid: %zu rows, %zu with exact ties among the kept slots\n", t.rows, t.ties);
    assert_true(t.ties * 2 > t.rows);   /* the case is about ties */
    assert_true(t.kept[4] > 0 && t.kept[1] > 0);
    free_cage(&c);
}

static void test_box_grid_ties_match_port(void **state)
{
    (void)state;
    enum { N = 4 };
    cage c = new_cage(6 * (N + 1) * (N + 1), 12 * N * N);
    box_grid(&c, N);
    static float pts[12000][3];
    size_t n = 0;
    for (float z = -1; z <= N + 1; z += 0.5f) {
        const float zs[1] = {z};
        n += lattice(pts + n, 12000 - n, -1, N + 1, 0.5f, zs, 1);
    }
    plush_proxy_mesh m = mesh_of(&c);
    tally t = compare_with_port(&m, (const float(*)[3])pts, n, false);
    print_message("box grid: %zu rows, %zu with exact ties among the kept slots\n", t.rows, t.ties);
    assert_true(t.ties * 2 > t.rows);
    free_cage(&c);
}

/* Slightly off the lattice: ties that float rounding decides, the case the operation order is for. */
static void test_grid_near_ties_match_port(void **state)
{
    (void)state;
    enum { N = 6 };
    cage c = new_cage(6 * (N + 1) * (N + 1) + (N + 1) * (N + 1), 12 * N * N + 2 * N * N);
    box_grid(&c, N);
    static float pts[6000][3];
    uint64_t r = 0x9e3779b97f4a7c15u;
    for (size_t i = 0; i < 6000; i++)
        for (int k = 0; k < 3; k++) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            float base = (float)(int)(r % (uint64_t)(4 * N + 9)) / 4 - 1;
            pts[i][k] = base + (float)((int)(r >> 40 & 7) - 3) * 1e-7f * (float)(i % 3);
        }
    plush_proxy_mesh m = mesh_of(&c);
    compare_with_port(&m, (const float(*)[3])pts, 6000, false);
    free_cage(&c);
}

/* ---- hand-computed rows ------------------------------------------------------------------------------ */

static void test_shared_vertex_by_hand(void **state)
{
    (void)state;
    enum { N = 4 };
    cage c = new_cage((N + 1) * (N + 1), 2 * N * N);
    flat_grid(&c, N);
    plush_proxy_mesh m = mesh_of(&c);
    /* Vertex (2, 2) is a corner of six triangles: both of square 5 (x 1, y 1; its d) = 10, 11; of square 6
     * (x 2, y 1; its c) the (a, d, c) = 13; of square 9 (x 1, y 2; its b) the (a, b, d) = 18; both of
     * square 10 (its a) = 20, 21. */
    const float pts[3][3] = {{2, 2, 0}, {2, 2, 0.5f}, {2, 2, -0.75f}};
    plush_proxy_binding *b = NULL;
    plush_diag diag = {0};
    plush_proxy_bind_options o = {.seed = true};
    assert_int_equal(plush_proxy_bind(&m, pts, 3, &o, &b, &diag), PLUSH_OK);
    /* On the vertex: distance 0 to all six; the scan's last equal one first, and d0 < 0.00001 binds it
     * alone. */
    const int32_t alone[4] = {21, -1, -1, -1};
    const uint8_t all[4] = {100, 0, 0, 0};
    assert_memory_equal(b->triangles[0], alone, sizeof alone);
    assert_memory_equal(b->percent[0], all, 4);
    /* Above and below it: the plane distance to all six; the four latest, latest first, 25 each
     * (sum = 1 + 1 + 1 + 1, 100 * (1 / 4) = 25). */
    const int32_t four[4] = {21, 20, 18, 13};
    const uint8_t quarter[4] = {25, 25, 25, 25};
    for (int i = 1; i < 3; i++) {
        assert_memory_equal(b->triangles[i], four, sizeof four);
        assert_memory_equal(b->percent[i], quarter, 4);
        for (int k = 0; k < 4; k++)
            assert_true(b->distances[i][k] == fabsf(pts[i][2]));
    }
    plush_proxy_binding_free(b);
    free_cage(&c);
}

/* Above the middle of square 0's diagonal in a 2 x 2 grid, worked through by hand. Square 0: a (0,0),
 * b (1,0), c (0,1), d (1,1); triangles 0 = (a, b, d), 1 = (a, d, c) hold the diagonal, so the point is
 * inside both (on an edge the cross product is 0, not < 0): plane distance 1. Square 1's (a, d, c) =
 * triangle 3, corners (1,0) (2,1) (1,1): outside its third edge (1,1)->(1,0), l = 0.5, foot (1, 0.5, 0),
 * distance sqrt(0.25 + 1); square 2's (a, b, d) = triangle 4 likewise through (0.5, 1, 0). Triangle 2
 * (corners (1,0) (2,0) (2,1)) measures to its corner (1,0): sqrt(1.5), and so does triangle 6 to (1,1). */
static void test_unequal_rows_by_hand(void **state)
{
    (void)state;
    cage c = new_cage(9, 8);
    flat_grid(&c, 2);
    plush_proxy_mesh m = mesh_of(&c);
    const float pts[1][3] = {{0.5f, 0.5f, 1}};
    plush_proxy_binding *b = NULL;
    plush_diag diag = {0};
    plush_proxy_bind_options o = {.seed = true};
    assert_int_equal(plush_proxy_bind(&m, pts, 1, &o, &b, &diag), PLUSH_OK);
    /* Ties latest first: 1, 0, then 4, 3. sum = 1 + 1 + 2 / sqrt(1.25) = 3.78885; 100 / sum = 26.39 -> 26,
     * 100 / sqrt(1.25) / sum = 23.6 -> 23; total 98, so the first gets 28. */
    const int32_t want_t[4] = {1, 0, 4, 3};
    const uint8_t want_p[4] = {28, 26, 23, 23};
    assert_memory_equal(b->triangles[0], want_t, sizeof want_t);
    assert_memory_equal(b->percent[0], want_p, 4);
    assert_true(b->distances[0][0] == 1 && b->distances[0][1] == 1);
    assert_true(b->distances[0][2] == sqrtf(1.25f) && b->distances[0][3] == sqrtf(1.25f));
    plush_proxy_binding_free(b);
    free_cage(&c);
}

/* The box pre-check decides: a slightly tilted triangle T whose rounded box distance in z is one ulp
 * above its computed plane distance d (found by a random search). Three nearer triangles fill slots 0-2,
 * then an exact copy of T (index 3) lands in the fourth slot itself and sets far = d; T (index 4) has the
 * same d, which would win the tie, but its box distance exceeds far, so the original never measures it.
 * Plush's BVH finds T among the overall best four and must notice that the scan skips it. */
static void test_box_precheck_skips_a_tie(void **state)
{
    (void)state;
    const float t[3][3] = {{0x1.a0e5eep-6f, -0x1.6284e8p-7f, 0},
                           {0x1.037e8cp+0f, -0x1.cc557p-7f, 0},
                           {0x1.0c5662p-5f, 0x1.084c88p+0f, 0x1.361ce8p-12f}};
    const float pts[1][3] = {{0x1.0cfb0ap-5f, 0x1.07e308p+0f, 0x1.8053dp+1f}};
    const float *p = pts[0];
    float d = plush_proxy_seed_distance(p, t[0], t[1], t[2]);
    assert_true(p[2] - t[2][2] > d);   /* the premise: box distance above the distance */
    cage c = new_cage(15, 5);
    for (int i = 0; i < 3; i++) {   /* three copies of a flat triangle 2.5 below the point */
        float z = p[2] - 2.5f;
        uint32_t a = add_node(&c, p[0] - 1, p[1] - 1, z), b = add_node(&c, p[0] + 2, p[1] - 1, z);
        add_tri(&c, a, b, add_node(&c, p[0] - 1, p[1] + 2, z));
    }
    for (int copy = 0; copy < 2; copy++) {
        uint32_t a = add_node(&c, t[0][0], t[0][1], t[0][2]), b = add_node(&c, t[1][0], t[1][1], t[1][2]);
        add_tri(&c, a, b, add_node(&c, t[2][0], t[2][1], t[2][2]));
    }
    plush_proxy_mesh m = mesh_of(&c);
    compare_with_port(&m, pts, 1, false);
    plush_proxy_binding *b = NULL;
    plush_diag diag = {0};
    plush_proxy_bind_options o = {.seed = true};
    assert_int_equal(plush_proxy_bind(&m, pts, 1, &o, &b, &diag), PLUSH_OK);
    const int32_t want[4] = {2, 1, 0, 3};
    assert_memory_equal(b->triangles[0], want, sizeof want);
    assert_true(b->distances[0][3] == d);
    plush_proxy_binding_free(b);
    free_cage(&c);
}

/* ---- the percent rounding ------------------------------------------------------------------------------ */

static void assert_pct(const uint32_t got[4], uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    assert_int_equal(got[0], a);
    assert_int_equal(got[1], b);
    assert_int_equal(got[2], c);
    assert_int_equal(got[3], d);
}

static void test_percent_rounding(void **state)
{
    (void)state;
    uint32_t p[4];
    /* r = 1, 0.5, 0.4, sum 1.9: 52.63, 26.3, 21.05 -> 52, 26, 21; the missing 1 goes to the first. */
    assert_int_equal(plush__proxy_seed_percent((const float[4]){1, 2, 2.5f, 0}, 3, 3, p), 3);
    assert_pct(p, 53, 26, 21, 0);
    /* Thirds: 33, 33, 33 and the first takes 34. */
    assert_int_equal(plush__proxy_seed_percent((const float[4]){2, 2, 2, 0}, 3, 3, p), 3);
    assert_pct(p, 34, 33, 33, 0);
    /* A slot beyond three times the nearest is dropped (3 exactly is kept). */
    assert_int_equal(plush__proxy_seed_percent((const float[4]){1, 3, 3.0001f, 5}, 4, 3, p), 2);
    assert_pct(p, 75, 25, 0, 0);
    /* d0 below 0.00001: 100 on the nearest alone; at 0.00001 (as float) the blend. */
    assert_int_equal(plush__proxy_seed_percent((const float[4]){5e-6f, 6e-6f, 7e-6f, 8e-6f}, 4, 3, p), 1);
    assert_pct(p, 100, 0, 0, 0);
    assert_int_equal(plush__proxy_seed_percent((const float[4]){0.00001f, 0.00001f, 0, 0}, 2, 3, p), 2);
    assert_pct(p, 50, 50, 0, 0);
    /* No triangle at all: the original's 100 on triangle 0. */
    assert_int_equal(plush__proxy_seed_percent((const float[4]){0, 0, 0, 0}, 0, 3, p), 0);
    assert_pct(p, 100, 0, 0, 0);
    /* Shares that are whole numbers: r = 1, 1/3, 1/3, sum 5/3: 60, 20, 20; r = 1, 0.5, 0.5: 50, 25, 25. */
    assert_int_equal(plush__proxy_seed_percent((const float[4]){1, 3, 3, 0}, 3, 3, p), 3);
    assert_pct(p, 60, 20, 20, 0);
    assert_int_equal(plush__proxy_seed_percent((const float[4]){1, 2, 2, 0}, 3, 3, p), 3);
    assert_pct(p, 50, 25, 25, 0);
    /* The remainder's other direction (a total over 100 cannot come out of the distances: each percent
     * is at most its share + 0.00001): taken from the first, not below 0, capped at 100. */
    uint32_t over[4] = {60, 30, 20, 0};
    plush__proxy_seed_settle(over);
    assert_pct(over, 50, 30, 20, 0);
    uint32_t deep[4] = {5, 60, 50, 0};
    plush__proxy_seed_settle(deep);
    assert_pct(deep, 0, 60, 50, 0);
    uint32_t big[4] = {150, 0, 0, 0};
    plush__proxy_seed_settle(big);
    assert_pct(big, 100, 0, 0, 0);
    uint32_t none[4] = {0, 0, 0, 0};
    plush__proxy_seed_settle(none);
    assert_pct(none, 100, 0, 0, 0);
    /* Every split the distances can give sums to 100 with the first the largest share. */
    for (int i = 1; i < 2000; i++) {
        float d[4] = {1, 1 + (float)i / 1000, 1 + (float)(i % 7) / 3 + (float)i / 1000, 3};
        if (d[2] < d[1])
            d[2] = d[1];
        int n = plush__proxy_seed_percent(d, 4, 3, p);
        assert_int_equal(p[0] + p[1] + p[2] + p[3], 100);
        for (int k = 1; k < n; k++)
            assert_true(p[k] <= p[0]);
    }
}

/* ---- real files -------------------------------------------------------------------------------------- */

static void test_demo_bear_matches_port(void **state)
{
    (void)state;
    plush_pmx_model *model = NULL;
    plush_diag diag = {0};
    if (plush_pmx_read_file("proxies/plush_bear.pmx", NULL, &model, &diag) != PLUSH_OK)
        fail_msg("proxies/plush_bear.pmx (made by make): %s", diag.message);
    plush_arena arena = {0};
    plush_scene_proxy proxy;
    uint32_t *bound = NULL;
    size_t count = 0;
    assert_int_equal(plush_scene_proxy_build(model, &arena, &proxy, &diag), PLUSH_OK);
    assert_int_equal(plush_scene_bound_vertices(model, &proxy, NULL, &arena, &bound, &count, &diag), PLUSH_OK);
    float (*pts)[3] = malloc(count * sizeof *pts);
    assert_non_null(pts);
    for (size_t i = 0; i < count; i++)
        memcpy(pts[i], model->vertices[bound[i]].position, sizeof pts[i]);
    plush_proxy_mesh m = {.nodes = (const float(*)[3])proxy.nodes, .node_count = proxy.node_count,
                          .triangles = (const uint32_t(*)[3])proxy.triangles, .triangle_count = proxy.triangle_count};
    tally t = compare_with_port(&m, (const float(*)[3])pts, count, getenv("PLUSH_SEED_MEASURE") != NULL);
    print_message("demo bear: %zu rows, %zu differ from the port (%zu more in distance bits only)\n", t.rows,
                  t.differ, t.differ_bits);
    assert_true(count > 50000);
    free(pts);
    plush_arena_free(&arena);
    plush_pmx_free(model);
}

static void test_alicia_hair_cage_matches_port(void **state)
{
    (void)state;
    plush_pmx_model *model = NULL;
    plush_diag diag = {0};
    if (plush_pmx_read_file(SHARED_MMD "/alicia/Alicia_solid.pmx", NULL, &model, &diag) != PLUSH_OK)
        fail_msg("Alicia: %s", diag.message);
    plush_arena arena = {0};
    plush_cage_mesh hair;
    assert_int_equal(plush_attach_read_proxy_file("proxies/alicia_hair_cage.obj", &arena, &hair, &diag), PLUSH_OK);
    float (*pts)[3] = malloc(model->vertex_count * sizeof *pts);
    assert_non_null(pts);
    for (size_t i = 0; i < model->vertex_count; i++)
        memcpy(pts[i], model->vertices[i].position, sizeof pts[i]);
    plush_proxy_mesh m = {.nodes = (const float(*)[3])hair.positions, .node_count = hair.vertex_count,
                          .triangles = (const uint32_t(*)[3])hair.triangles, .triangle_count = hair.triangle_count};
    tally t = compare_with_port(&m, (const float(*)[3])pts, model->vertex_count, getenv("PLUSH_SEED_MEASURE") != NULL);
    print_message("Alicia, hair cage: %zu rows, %zu differ from the port (%zu more in distance bits only)\n",
                  t.rows, t.differ, t.differ_bits);
    free(pts);
    plush_arena_free(&arena);
    plush_pmx_free(model);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flat_grid_ties_match_port),
        cmocka_unit_test(test_box_grid_ties_match_port),
        cmocka_unit_test(test_grid_near_ties_match_port),
        cmocka_unit_test(test_shared_vertex_by_hand),
        cmocka_unit_test(test_unequal_rows_by_hand),
        cmocka_unit_test(test_box_precheck_skips_a_tie),
        cmocka_unit_test(test_percent_rounding),
        cmocka_unit_test(test_demo_bear_matches_port),
        cmocka_unit_test(test_alicia_hair_cage_matches_port),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
