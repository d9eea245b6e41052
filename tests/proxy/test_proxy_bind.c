/* plush_proxy_bind and the two distance routines: the BVH and the brute force agree to the bit on random
 * and on tie-heavy proxies in both modes, the seed mode matches hand-computed percents, the default
 * mode's options do what they say, and bad input fails with the right status. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/proxy.h"
#include "plush/sys/core.h"
#include "plush/sys/proxy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ----------------------------------------------------------------------------------- */

static uint64_t rng = 88172645463325252u;
static double rnd(void)   /* xorshift64*, [0, 1) */
{
    rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
    return (double)((rng * 0x2545f4914f6cdd1du) >> 11) / 9007199254740992.0;
}
static float rndf(float lo, float hi) { return lo + (hi - lo) * (float)rnd(); }

/* A proxy built in a test: up to a few thousand nodes and triangles. */
typedef struct proxy {
    float nodes[4096][3];
    uint32_t tris[4096][3];
    size_t node_count, tri_count;
} proxy;

static plush_proxy_mesh mesh_of(const proxy *p)
{
    return (plush_proxy_mesh){.nodes = (const float(*)[3])p->nodes, .node_count = p->node_count,
                              .triangles = (const uint32_t(*)[3])p->tris, .triangle_count = p->tri_count};
}

static uint32_t add_node(proxy *p, float x, float y, float z)
{
    p->nodes[p->node_count][0] = x, p->nodes[p->node_count][1] = y, p->nodes[p->node_count][2] = z;
    return (uint32_t)p->node_count++;
}

static void add_tri(proxy *p, uint32_t a, uint32_t b, uint32_t c)
{
    p->tris[p->tri_count][0] = a, p->tris[p->tri_count][1] = b, p->tris[p->tri_count][2] = c;
    p->tri_count++;
}

/* A triangle in the plane `axis` = at, wide enough to hold the projection of any point near the axis. */
static void add_plane_tri(proxy *p, int axis, float at)
{
    float v[3][3] = {{-10, -10, 0}, {30, -10, 0}, {-10, 30, 0}};
    uint32_t id[3];
    for (int i = 0; i < 3; i++) {
        float c[3];
        c[axis] = at, c[(axis + 1) % 3] = v[i][0], c[(axis + 2) % 3] = v[i][1];
        id[i] = add_node(p, c[0], c[1], c[2]);
    }
    add_tri(p, id[0], id[1], id[2]);
}

static plush_proxy_binding *bind_ok(const proxy *p, const float (*pts)[3], size_t n, plush_proxy_bind_options o)
{
    plush_proxy_mesh m = mesh_of(p);
    plush_proxy_binding *b = NULL;
    plush_diag diag = {0};
    plush_status st = plush_proxy_bind(&m, pts, n, &o, &b, &diag);
    if (st != PLUSH_OK)
        fail_msg("bind failed: %s", diag.message);
    assert_int_equal(diag.warning_count, 0);   /* for the BVH: Embree was loaded, not the fallback */
    assert_non_null(b);
    assert_int_equal(b->vertex_count, n);
    return b;
}

static void assert_same(const plush_proxy_binding *a, const plush_proxy_binding *b)
{
    size_t n = a->vertex_count;
    assert_int_equal(b->vertex_count, n);
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++) {
            if (a->triangles[i][k] != b->triangles[i][k])
                fail_msg("vertex %zu slot %d: triangle %d vs %d", i, k, a->triangles[i][k], b->triangles[i][k]);
            assert_memory_equal(&a->weights[i][k], &b->weights[i][k], sizeof(float));
            assert_memory_equal(&a->distances[i][k], &b->distances[i][k], sizeof(float));
        }
    assert_memory_equal(a->proxy_share, b->proxy_share, n * sizeof(float));
    assert_int_equal(a->percent != NULL, b->percent != NULL);
    if (a->percent)
        assert_memory_equal(a->percent, b->percent, n * sizeof *a->percent);
}

/* Binds with the BVH and with the brute force (each on one and on four threads) in both modes and
 * requires all four answers per mode to be identical; checks the invariants of every binding. */
static void check_searches_agree(const proxy *p, const float (*pts)[3], size_t n)
{
    for (int seed = 0; seed <= 1; seed++) {
        plush_proxy_bind_options o = {.seed = seed, .search = PLUSH_PROXY_SEARCH_BRUTE};
        plush_proxy_binding *ref = bind_ok(p, pts, n, o);
        o.threads = 4;
        plush_proxy_binding *brute3 = bind_ok(p, pts, n, o);
        o.search = PLUSH_PROXY_SEARCH_BVH;
        plush_proxy_binding *bvh3 = bind_ok(p, pts, n, o);
        o.threads = 1;
        plush_proxy_binding *bvh = bind_ok(p, pts, n, o);
        assert_same(ref, bvh);
        assert_same(ref, bvh3);
        assert_same(ref, brute3);
        for (size_t i = 0; i < n; i++) {
            float sum = 0;
            unsigned pct = 0;
            for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++) {
                sum += ref->weights[i][k];
                if (ref->triangles[i][k] < 0)
                    assert_true(ref->weights[i][k] == 0);
                if (seed) {
                    pct += ref->percent[i][k];
                    assert_true(ref->weights[i][k] == ref->percent[i][k] / 100.0f);
                }
            }
            assert_true(fabsf(sum - 1) < 1e-6f);
            if (seed)
                assert_int_equal(pct, 100);
            if (ref->distances[i][0] < 1e-5f)
                assert_int_equal(ref->triangles[i][1], -1);
        }
        plush_proxy_binding_free(ref);
        plush_proxy_binding_free(brute3);
        plush_proxy_binding_free(bvh3);
        plush_proxy_binding_free(bvh);
    }
}

/* ---- distance routines -------------------------------------------------------------------------- */

/* The minimum over a fine barycentric grid is an upper bound within one grid step of the truth. */
static double sampled_distance(const float p[3], const float a[3], const float b[3], const float c[3], int steps)
{
    double best = INFINITY;
    for (int i = 0; i <= steps; i++)
        for (int j = 0; i + j <= steps; j++) {
            double u = (double)i / steps, v = (double)j / steps, d2 = 0;
            for (int k = 0; k < 3; k++) {
                double x = a[k] + u * ((double)b[k] - a[k]) + v * ((double)c[k] - a[k]) - p[k];
                d2 += x * x;
            }
            best = fmin(best, sqrt(d2));
        }
    return best;
}

static double longest_edge(const float a[3], const float b[3], const float c[3])
{
    double e = 0;
    const float *v[3] = {a, b, c};
    for (int i = 0; i < 3; i++) {
        double d2 = 0;
        for (int k = 0; k < 3; k++)
            d2 += ((double)v[i][k] - v[(i + 1) % 3][k]) * ((double)v[i][k] - v[(i + 1) % 3][k]);
        e = fmax(e, sqrt(d2));
    }
    return e;
}

static void check_against_oracle(const float p[3], const float a[3], const float b[3], const float c[3])
{
    enum { STEPS = 300 };
    double oracle = sampled_distance(p, a, b, c, STEPS);
    double d = plush_proxy_point_triangle_distance(p, a, b, c);
    double step = longest_edge(a, b, c) / STEPS;
    if (!(d <= oracle + 1e-5 && d >= oracle - step - 1e-5))
        fail_msg("distance %.9g, sampled %.9g (step %.3g)", d, oracle, step);
    /* The seed routine measures to a point of the triangle, or to its plane from inside. */
    float s = plush_proxy_seed_distance(p, a, b, c);
    if (!isnan(s))
        assert_true(s >= d - 1e-5);
}

static void test_distance_against_sampling(void **state)
{
    (void)state;
    for (int t = 0; t < 300; t++) {
        float v[3][3], p[3];
        for (int k = 0; k < 9; k++)
            v[k / 3][k % 3] = rndf(-1, 1);
        if (t % 5 == 0)   /* slivers and needles */
            for (int k = 0; k < 3; k++)
                v[2][k] = v[0][k] + (v[1][k] - v[0][k]) * 0.3f + rndf(-1e-3f, 1e-3f);
        for (int k = 0; k < 3; k++)
            p[k] = rndf(-2, 2) * (t % 7 == 0 ? 20 : 1);
        check_against_oracle(p, v[0], v[1], v[2]);
    }
}

static void test_distance_degenerate_triangles(void **state)
{
    (void)state;
    const float a[3] = {0, 0, 0}, b[3] = {2, 0, 0}, mid[3] = {1, 0, 0}, far[3] = {5, 0, 0};
    const float p[3] = {1, 1, 0}, q[3] = {-3, 0, 4}, r[3] = {7, 0, 0};
    /* Collinear corners: the segment from a to the far end. */
    assert_float_equal(plush_proxy_point_triangle_distance(p, a, mid, b), 1, 1e-6);
    assert_float_equal(plush_proxy_point_triangle_distance(q, a, b, mid), 5, 1e-6);
    assert_float_equal(plush_proxy_point_triangle_distance(r, b, far, a), 2, 1e-6);
    /* Two and three coincident corners. */
    assert_float_equal(plush_proxy_point_triangle_distance(p, a, a, b), 1, 1e-6);
    assert_float_equal(plush_proxy_point_triangle_distance(q, a, a, a), 5, 1e-6);
    for (int t = 0; t < 50; t++) {
        float pt[3] = {rndf(-3, 3), rndf(-3, 3), rndf(-3, 3)};
        check_against_oracle(pt, a, mid, far);
        check_against_oracle(pt, b, b, far);
    }
    /* The original's arithmetic has no normal for a zero-area triangle. */
    assert_true(isnan(plush_proxy_seed_distance(p, a, mid, b)));
}

static void test_seed_distance_first_outside_edge(void **state)
{
    (void)state;
    /* Obtuse at p1: the point lies outside edges p0p1 and p1p2. The original measures to p0p1 (the first
     * it tries), clamped to p1; the true closest point is inside edge p1p2. */
    const float p0[3] = {0, 0, 0}, p1[3] = {1, 0, 0}, p2[3] = {2, 1, 0}, pt[3] = {2, -0.1f, 0};
    assert_float_equal(plush_proxy_seed_distance(pt, p0, p1, p2), sqrt(1.01), 1e-6);
    assert_float_equal(plush_proxy_point_triangle_distance(pt, p0, p1, p2), 0.55 * sqrt(2.0), 1e-6);
    /* Inside: the plane distance; outside one edge: that edge's segment. */
    const float above[3] = {1.2f, 0.3f, -2}, beside[3] = {-1, -1, 0.5f};
    assert_float_equal(plush_proxy_seed_distance(above, p0, p1, p2), 2, 1e-6);
    assert_float_equal(plush_proxy_seed_distance(beside, p0, p1, p2), 1.5, 1e-6);
}

/* ---- weights ------------------------------------------------------------------------------------ */

/* Triangles in the planes z = 2.5, z = 3.5, z = 1 and z = -2, seen from the origin. */
static void stacked_proxy(proxy *p)
{
    memset(p, 0, sizeof *p);
    add_plane_tri(p, 2, 2.5f);
    add_plane_tri(p, 2, 3.5f);
    add_plane_tri(p, 2, 1);
    add_plane_tri(p, 2, -2);
}

static const float origin[1][3] = {{0, 0, 0}};

static void assert_slots(const plush_proxy_binding *b, size_t i, const int32_t want[4])
{
    for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++)
        assert_int_equal(b->triangles[i][k], want[k]);
}

static void test_seed_percent_by_hand(void **state)
{
    (void)state;
    static proxy p;
    stacked_proxy(&p);
    /* d = 1, 2, 2.5, 3.5: 3.5 / 1 > 3 is dropped; r = 1, 0.5, 0.4, S = 1.9; 100 r / S = 52.6, 26.3, 21.05
     * truncate to 52, 26, 21 and the missing 1 goes to the nearest. */
    plush_proxy_binding *b = bind_ok(&p, origin, 1, (plush_proxy_bind_options){.seed = true});
    assert_slots(b, 0, (const int32_t[]){2, 3, 0, -1});
    const uint8_t want[4] = {53, 26, 21, 0};
    assert_memory_equal(b->percent[0], want, 4);
    assert_true(b->weights[0][0] == 0.53f && b->weights[0][1] == 0.26f && b->weights[0][2] == 0.21f);
    assert_true(b->distances[0][0] == 1 && b->distances[0][1] == 2 && b->distances[0][2] == 2.5f);
    assert_true(b->proxy_share[0] == 1);
    plush_proxy_binding_free(b);
}

static void test_default_weights_drop_and_falloff(void **state)
{
    (void)state;
    static proxy p;
    stacked_proxy(&p);
    plush_proxy_binding *b = bind_ok(&p, origin, 1, (plush_proxy_bind_options){0});
    assert_null(b->percent);
    assert_slots(b, 0, (const int32_t[]){2, 3, 0, -1});
    assert_float_equal(b->weights[0][0], 1 / 1.9, 1e-6);
    assert_float_equal(b->weights[0][1], 0.5 / 1.9, 1e-6);
    assert_float_equal(b->weights[0][2], 0.4 / 1.9, 1e-6);
    plush_proxy_binding_free(b);

    b = bind_ok(&p, origin, 1, (plush_proxy_bind_options){.drop_ratio = 4});   /* keeps 3.5 */
    assert_slots(b, 0, (const int32_t[]){2, 3, 0, 1});
    assert_float_equal(b->weights[0][3], (1 / 3.5) / (1.9 + 1 / 3.5), 1e-6);
    plush_proxy_binding_free(b);

    b = bind_ok(&p, origin, 1, (plush_proxy_bind_options){.drop_ratio = 1.5f});   /* 2 / 1 > 1.5 */
    assert_slots(b, 0, (const int32_t[]){2, -1, -1, -1});
    assert_true(b->weights[0][0] == 1);
    plush_proxy_binding_free(b);

    b = bind_ok(&p, origin, 1, (plush_proxy_bind_options){.falloff = 2});   /* 1, 1/4, 1/6.25 */
    double sum = 1 + 0.25 + 0.16;
    assert_float_equal(b->weights[0][0], 1 / sum, 1e-6);
    assert_float_equal(b->weights[0][1], 0.25 / sum, 1e-6);
    assert_float_equal(b->weights[0][2], 0.16 / sum, 1e-6);
    plush_proxy_binding_free(b);

    b = bind_ok(&p, origin, 1, (plush_proxy_bind_options){.seed = true, .drop_ratio = 1.5f});
    assert_int_equal(b->percent[0][0], 100);
    assert_int_equal(b->triangles[0][1], -1);
    plush_proxy_binding_free(b);
}

static void test_touching_binds_alone(void **state)
{
    (void)state;
    static proxy p;
    stacked_proxy(&p);
    const float pts[3][3] = {{0, 0, 1}, {0, 0, 1 + 5e-6f}, {0, 0, 1.001f}};
    for (int seed = 0; seed <= 1; seed++) {
        plush_proxy_binding *b = bind_ok(&p, pts, 3, (plush_proxy_bind_options){.seed = seed, .drop_ratio = 1e6f});
        for (int i = 0; i < 2; i++) {
            assert_slots(b, (size_t)i, (const int32_t[]){2, -1, -1, -1});
            assert_true(b->weights[i][0] == 1);
        }
        assert_int_equal(b->triangles[2][3], 3);   /* 1e-3 away: all four */
        plush_proxy_binding_free(b);
    }
}

static void test_max_distance_handover(void **state)
{
    (void)state;
    static proxy p;
    memset(&p, 0, sizeof p);
    add_plane_tri(&p, 2, 0);
    const float pts[5][3] = {{0, 0, 0.5f}, {0, 0, 1.5f}, {0, 0, 1.75f}, {0, 0, 2}, {0, 0, 2.5f}};
    plush_proxy_binding *b = bind_ok(&p, pts, 5, (plush_proxy_bind_options){.max_distance = 2, .handover = 1});
    assert_true(b->proxy_share[0] == 1);
    assert_float_equal(b->proxy_share[1], 0.5, 1e-6);
    assert_float_equal(b->proxy_share[2], 0.15625, 1e-6);   /* t = 0.25: 3t^2 - 2t^3 */
    assert_true(b->proxy_share[3] == 0);
    assert_true(b->proxy_share[4] == 0);
    assert_int_equal(b->triangles[4][0], 0);   /* still bound, for whoever wants it */
    plush_proxy_binding_free(b);
    b = bind_ok(&p, pts, 5, (plush_proxy_bind_options){.max_distance = 2});   /* hard edge */
    assert_true(b->proxy_share[3] == 1 && b->proxy_share[4] == 0);
    plush_proxy_binding_free(b);
    b = bind_ok(&p, pts, 5, (plush_proxy_bind_options){.seed = true, .max_distance = 2, .handover = 1});
    for (int i = 0; i < 5; i++)
        assert_true(b->proxy_share[i] == 1);
    plush_proxy_binding_free(b);
}

/* ---- ties ---------------------------------------------------------------------------------------- */

static void test_equidistant_ties(void **state)
{
    (void)state;
    static proxy p;
    memset(&p, 0, sizeof p);
    /* Five planes at distance 1 from the origin: the default keeps the four lowest indices, the seed
     * scan the four highest, latest first. */
    add_plane_tri(&p, 2, 1), add_plane_tri(&p, 2, -1), add_plane_tri(&p, 0, 1), add_plane_tri(&p, 0, -1);
    add_plane_tri(&p, 1, 1);
    plush_proxy_binding *b = bind_ok(&p, origin, 1, (plush_proxy_bind_options){0});
    assert_slots(b, 0, (const int32_t[]){0, 1, 2, 3});
    for (int k = 0; k < 4; k++)
        assert_true(b->weights[0][k] == 0.25f);
    plush_proxy_binding_free(b);
    b = bind_ok(&p, origin, 1, (plush_proxy_bind_options){.seed = true});
    assert_slots(b, 0, (const int32_t[]){4, 3, 2, 1});
    const uint8_t quarter[4] = {25, 25, 25, 25};
    assert_memory_equal(b->percent[0], quarter, 4);
    plush_proxy_binding_free(b);
    check_searches_agree(&p, origin, 1);

    /* A shared edge and a shared corner: distance 0 to several triangles, one is chosen. */
    memset(&p, 0, sizeof p);
    uint32_t c = add_node(&p, 0, 0, 0);
    for (int i = 0; i < 6; i++)
        add_node(&p, cosf((float)i * 1.0471976f), sinf((float)i * 1.0471976f), 0);
    for (uint32_t i = 0; i < 6; i++)
        add_tri(&p, c, 1 + i, 1 + (i + 1) % 6);
    const float on[2][3] = {{0, 0, 0}, {0.5f, 0, 0}};
    b = bind_ok(&p, on, 2, (plush_proxy_bind_options){0});
    assert_slots(b, 0, (const int32_t[]){0, -1, -1, -1});
    assert_slots(b, 1, (const int32_t[]){0, -1, -1, -1});
    plush_proxy_binding_free(b);
    b = bind_ok(&p, on, 2, (plush_proxy_bind_options){.seed = true});
    assert_int_equal(b->triangles[0][0], 5);
    assert_int_equal(b->percent[0][0], 100);
    plush_proxy_binding_free(b);
    check_searches_agree(&p, on, 2);
}

/* An integer grid of squares, each split in two, and points on the half-integer lattice above it:
 * nearly every point is equidistant from several triangles, so any pruning that is not exact shows. */
static void test_grid_ties_agree(void **state)
{
    (void)state;
    static proxy p;
    static float pts[2000][3];
    memset(&p, 0, sizeof p);
    enum { N = 12 };
    for (int y = 0; y <= N; y++)
        for (int x = 0; x <= N; x++)
            add_node(&p, (float)x, (float)y, 0);
    for (uint32_t y = 0; y < N; y++)
        for (uint32_t x = 0; x < N; x++) {
            uint32_t a = y * (N + 1) + x, b = a + 1, c = a + N + 1, d = c + 1;
            add_tri(&p, a, b, d), add_tri(&p, a, d, c);
        }
    size_t n = 0;
    for (int i = 0; i < 1700; i++) {
        pts[n][0] = (float)((int)(rnd() * 2 * N) - 4) / 2;
        pts[n][1] = (float)((int)(rnd() * 2 * N) - 4) / 2;
        pts[n][2] = (float)((int)(rnd() * 6) - 2) / 2;
        n++;
    }
    /* Then in sweeps, so each query starts from the previous point's answer (a small first radius). */
    for (int row = 0; row < 4; row++)
        for (int x = -8; x < 64; x++) {
            pts[n][0] = (float)x / 4, pts[n][1] = 1.5f + (float)row * 2.25f, pts[n][2] = (float)(row % 3) / 4;
            n++;
        }
    check_searches_agree(&p, (const float(*)[3])pts, n);
    /* The sweeps alone: a walk the search keeps in the given order rather than its own spatial one. */
    check_searches_agree(&p, (const float(*)[3])pts + 1700, n - 1700);
}

/* ---- random proxies ------------------------------------------------------------------------------ */

/* A noisy closed surface (a bumpy sphere from a latitude-longitude grid, poles included, so it also has
 * zero-area triangles) or a soup of random triangles; points on triangles, on edges, at corners, near
 * and far. */
static void random_case(proxy *p, float (*pts)[3], size_t n, bool soup)
{
    memset(p, 0, sizeof *p);
    if (soup) {
        for (int t = 0; t < 300; t++) {
            uint32_t a = add_node(p, rndf(-1, 1), rndf(-1, 1), rndf(-1, 1));
            uint32_t b = add_node(p, p->nodes[a][0] + rndf(-.3f, .3f), p->nodes[a][1] + rndf(-.3f, .3f),
                                  p->nodes[a][2] + rndf(-.3f, .3f));
            uint32_t c = add_node(p, p->nodes[a][0] + rndf(-.3f, .3f), p->nodes[a][1] + rndf(-.3f, .3f),
                                  p->nodes[a][2] + rndf(-.3f, .3f));
            add_tri(p, a, b, t % 17 == 0 ? a : c);
        }
    } else {
        enum { ROWS = 14, COLS = 20 };
        for (int r = 0; r <= ROWS; r++)
            for (int c = 0; c < COLS; c++) {
                float th = 3.14159265f * (float)r / ROWS, ph = 6.2831853f * (float)c / COLS;
                float rad = 1 + rndf(-0.1f, 0.1f);
                add_node(p, rad * sinf(th) * cosf(ph), rad * cosf(th), rad * sinf(th) * sinf(ph));
            }
        for (uint32_t r = 0; r < ROWS; r++)
            for (uint32_t c = 0; c < COLS; c++) {
                uint32_t a = r * COLS + c, b = r * COLS + (c + 1) % COLS, d = a + COLS, e = b + COLS;
                add_tri(p, a, b, e), add_tri(p, a, e, d);
            }
    }
    for (size_t i = 0; i < n; i++) {
        const uint32_t *t = p->tris[(size_t)(rnd() * (double)p->tri_count)];
        const float *a = p->nodes[t[0]], *b = p->nodes[t[1]], *c = p->nodes[t[2]];
        float u = (float)rnd(), v = (float)rnd() * (1 - u), w = 1 - u - v;
        switch (i % 6) {
        case 0: v = 0, w = 1 - u; break;             /* on an edge */
        case 1: u = 1, v = w = 0; break;             /* at a corner */
        default: break;                              /* on the triangle, then moved off it */
        }
        float off = i % 6 == 5 ? 30.0f : i % 6 >= 3 ? 0.2f : 0;
        for (int k = 0; k < 3; k++)
            pts[i][k] = u * a[k] + v * b[k] + w * c[k] + rndf(-off, off);
    }
}

static void test_random_proxies_agree(void **state)
{
    (void)state;
    static proxy p;
    static float pts[1500][3];
    for (int round = 0; round < 6; round++) {
        random_case(&p, pts, 1500, round % 2);
        check_searches_agree(&p, (const float(*)[3])pts, 1500);
    }
}

static void test_degenerate_never_chosen(void **state)
{
    (void)state;
    static proxy p;
    memset(&p, 0, sizeof p);
    add_plane_tri(&p, 2, 2);
    /* Right under the point: a collapsed triangle, a sliver (twice its area is 1e-8 of its longest edge
     * squared) and a triangle whose corners coincide. */
    uint32_t a = add_node(&p, -1, 0, 0.5f), b = add_node(&p, 1, 0, 0.5f), m = add_node(&p, 0, 0, 0.5f);
    uint32_t s = add_node(&p, 0, 1e-8f, 0.5f);
    add_tri(&p, a, m, b), add_tri(&p, a, b, s), add_tri(&p, m, m, m);
    const float pt[1][3] = {{0, 0, 0}};
    plush_proxy_binding *b1 = bind_ok(&p, pt, 1, (plush_proxy_bind_options){0});
    assert_slots(b1, 0, (const int32_t[]){0, -1, -1, -1});
    plush_proxy_binding_free(b1);
    /* Seed mode skips only what the original cannot measure (NaN): the sliver has a normal. */
    b1 = bind_ok(&p, pt, 1, (plush_proxy_bind_options){.seed = true});
    assert_int_equal(b1->triangles[0][0], 2);
    for (int k = 0; k < 4; k++)
        assert_true(b1->triangles[0][k] != 1 && b1->triangles[0][k] != 3);
    plush_proxy_binding_free(b1);
    check_searches_agree(&p, pt, 1);
}

/* ---- errors -------------------------------------------------------------------------------------- */

static plush_status bind_status(const proxy *p, const float (*pts)[3], size_t n, plush_proxy_bind_options o,
                                plush_diag *diag)
{
    plush_proxy_mesh m = mesh_of(p);
    plush_proxy_binding *b = (plush_proxy_binding *)&m;   /* must come back NULL */
    *diag = (plush_diag){0};
    plush_status st = plush_proxy_bind(&m, pts, n, &o, &b, diag);
    assert_null(b);
    assert_int_equal(diag->status, st);
    return st;
}

static void test_errors(void **state)
{
    (void)state;
    static proxy p;
    plush_diag d;
    memset(&p, 0, sizeof p);
    assert_int_equal(bind_status(&p, origin, 1, (plush_proxy_bind_options){0}, &d), PLUSH_E_ARGUMENT);
    uint32_t a = add_node(&p, 0, 0, 0), b = add_node(&p, 1, 0, 0), c = add_node(&p, 2, 0, 0);
    add_tri(&p, a, b, c);   /* only a collinear one: no usable triangle in either mode */
    assert_int_equal(bind_status(&p, origin, 1, (plush_proxy_bind_options){0}, &d), PLUSH_E_ARGUMENT);
    assert_int_equal(bind_status(&p, origin, 1, (plush_proxy_bind_options){.seed = true}, &d), PLUSH_E_ARGUMENT);
    p.nodes[c][1] = 1;
    add_tri(&p, a, b, 7);
    assert_int_equal(bind_status(&p, origin, 1, (plush_proxy_bind_options){0}, &d), PLUSH_E_RANGE);
    assert_int_equal(d.index, 1);
    p.tri_count = 1;
    p.nodes[b][2] = NAN;
    assert_int_equal(bind_status(&p, origin, 1, (plush_proxy_bind_options){0}, &d), PLUSH_E_ARGUMENT);
    assert_int_equal(d.index, b);
    p.nodes[b][2] = 0;
    const float bad[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, INFINITY, 0}};
    assert_int_equal(bind_status(&p, bad, 3, (plush_proxy_bind_options){0}, &d), PLUSH_E_ARGUMENT);
    assert_int_equal(d.index, 2);
    assert_int_equal(bind_status(&p, NULL, 3, (plush_proxy_bind_options){0}, &d), PLUSH_E_ARGUMENT);
    const plush_proxy_bind_options bad_options[] = {
        {.drop_ratio = 0.5f}, {.drop_ratio = NAN}, {.falloff = -1}, {.max_distance = -1},
        {.handover = -0.5f}, {.search = 7}, {.threads = -2}};
    for (size_t i = 0; i < sizeof bad_options / sizeof bad_options[0]; i++)
        assert_int_equal(bind_status(&p, origin, 1, bad_options[i], &d), PLUSH_E_ARGUMENT);
    plush_proxy_binding *out = NULL;
    assert_int_equal(plush_proxy_bind(NULL, origin, 1, NULL, &out, NULL), PLUSH_E_ARGUMENT);
    plush_proxy_mesh m = mesh_of(&p);
    assert_int_equal(plush_proxy_bind(&m, origin, 1, NULL, NULL, NULL), PLUSH_E_ARGUMENT);
    /* No points is not an error: an empty binding. */
    assert_int_equal(plush_proxy_bind(&m, NULL, 0, NULL, &out, NULL), PLUSH_OK);
    assert_int_equal(out->vertex_count, 0);
    plush_proxy_binding_free(out);
    plush_proxy_binding_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_distance_against_sampling),
        cmocka_unit_test(test_distance_degenerate_triangles),
        cmocka_unit_test(test_seed_distance_first_outside_edge),
        cmocka_unit_test(test_seed_percent_by_hand),
        cmocka_unit_test(test_default_weights_drop_and_falloff),
        cmocka_unit_test(test_touching_binds_alone),
        cmocka_unit_test(test_max_distance_handover),
        cmocka_unit_test(test_equidistant_ties),
        cmocka_unit_test(test_grid_ties_agree),
        cmocka_unit_test(test_random_proxies_agree),
        cmocka_unit_test(test_degenerate_never_chosen),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
