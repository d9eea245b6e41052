/* Cages (plush/cage.h; plush_scene_cage_weld in plush/scene_proxy.h): welding materials, simplification
 * toward a target, offset, topology, distances. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/cage.h"
#include "plush/scene_proxy.h"
#include "plush/sys/core.h"
#include "plush/sys/scene.h"
#include "support/pmx_fixture.h"
#include "support/mesh_fixture.h"
#include "proxy/cage_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A model with one material: a UV sphere (seams and poles split as a textured sphere has them). */
static plush_pmx_model *sphere_model(float radius, unsigned rings, unsigned segments)
{
    plush_pmx_model *m = mesh_fx_model(1);
    mesh_fx s = mesh_fx_uv_sphere(radius, rings, segments);
    mesh_fx_add_material(m, "ball", &s, 0);
    mesh_fx_free(&s);
    return m;
}

/* ---- an independent closest point on a triangle (Voronoi regions, Ericson's formulation) ------------ */

static void sub(const double a[3], const double b[3], double o[3]) { o[0] = a[0] - b[0], o[1] = a[1] - b[1], o[2] = a[2] - b[2]; }
static double dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static double brute_distance(const float pf[3], const float af[3], const float bf[3], const float cf[3])
{
    double p[3], a[3], b[3], c[3], ab[3], ac[3], ap[3], bp[3], cp[3], q[3];
    for (int k = 0; k < 3; k++)
        p[k] = pf[k], a[k] = af[k], b[k] = bf[k], c[k] = cf[k];
    sub(b, a, ab), sub(c, a, ac), sub(p, a, ap);
    double d1 = dot(ab, ap), d2 = dot(ac, ap);
    if (d1 <= 0 && d2 <= 0) {
        memcpy(q, a, sizeof q);
        goto out;
    }
    sub(p, b, bp);
    double d3 = dot(ab, bp), d4 = dot(ac, bp);
    if (d3 >= 0 && d4 <= d3) {
        memcpy(q, b, sizeof q);
        goto out;
    }
    double vc = d1 * d4 - d3 * d2;
    if (vc <= 0 && d1 >= 0 && d3 <= 0) {
        double v = d1 / (d1 - d3);
        for (int k = 0; k < 3; k++)
            q[k] = a[k] + v * ab[k];
        goto out;
    }
    sub(p, c, cp);
    double d5 = dot(ab, cp), d6 = dot(ac, cp);
    if (d6 >= 0 && d5 <= d6) {
        memcpy(q, c, sizeof q);
        goto out;
    }
    double vb = d5 * d2 - d1 * d6;
    if (vb <= 0 && d2 >= 0 && d6 <= 0) {
        double w = d2 / (d2 - d6);
        for (int k = 0; k < 3; k++)
            q[k] = a[k] + w * ac[k];
        goto out;
    }
    double va = d3 * d6 - d5 * d4;
    if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
        double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        for (int k = 0; k < 3; k++)
            q[k] = b[k] + w * (c[k] - b[k]);
        goto out;
    }
    double denom = 1 / (va + vb + vc), v = vb * denom, w = vc * denom;
    for (int k = 0; k < 3; k++)
        q[k] = a[k] + ab[k] * v + ac[k] * w;
out:;
    double d[3];
    sub(p, q, d);
    return sqrt(dot(d, d));
}

/* ---- tests ---------------------------------------------------------------------------------------- */

/* A UV sphere welds into a closed 2-manifold: seam columns and pole rows join, pole faces collapse. */
static void test_weld_sphere(void **state)
{
    (void)state;
    plush_pmx_model *m = sphere_model(1.0f, 8, 12);
    plush_arena arena = {0};
    plush_diag d = pmx_fx_diag();
    plush_cage_mesh mesh;
    pmx_fx_ok(plush_scene_cage_weld(m, NULL, 0, &arena, &mesh, &d), &d);
    assert_int_equal(mesh.vertex_count, 2 + 7 * 12);       /* two poles, seven inner rings */
    assert_int_equal(mesh.triangle_count, 2 * 12 + 2 * 6 * 12); /* pole fans + quads between inner rings */
    plush_cage_topology topo;
    pmx_fx_ok(plush_cage_check(&mesh, &topo, &d), &d);
    assert_true(topo.closed_manifold);
    assert_int_equal(topo.edges, 3 * mesh.triangle_count / 2);
    for (size_t v = 0; v < mesh.vertex_count; v++) {
        int32_t src = mesh.source[v];
        assert_true(src >= 0 && (size_t)src < m->vertex_count);
        assert_memory_equal(mesh.positions[v], m->vertices[src].position, sizeof mesh.positions[v]);
    }
    plush_arena_free(&arena);
    plush_pmx_free(m);
}

/* Several materials weld into one surface; names choose them; an unknown name fails. */
static void test_weld_materials(void **state)
{
    (void)state;
    plush_pmx_model *m = mesh_fx_plush(); /* body sphere, cage icosahedron, eyes cube */
    plush_arena arena = {0};
    plush_diag d = pmx_fx_diag();
    plush_cage_mesh mesh;
    const char *eyes[] = {"eyes"};
    pmx_fx_ok(plush_scene_cage_weld(m, eyes, 1, &arena, &mesh, &d), &d);
    assert_int_equal(mesh.vertex_count, 8);
    assert_int_equal(mesh.triangle_count, 12);
    const char *two[] = {"cage", "eyes"};
    pmx_fx_ok(plush_scene_cage_weld(m, two, 2, &arena, &mesh, &d), &d);
    assert_int_equal(mesh.vertex_count, 12 + 8);
    assert_int_equal(mesh.triangle_count, 20 + 12);
    plush_cage_topology topo;
    pmx_fx_ok(plush_cage_check(&mesh, &topo, &d), &d);
    assert_true(topo.closed_manifold); /* two closed pieces, each a manifold */
    assert_int_equal(topo.pieces, 2);
    const char *bad[] = {"nope"};
    assert_int_equal(plush_scene_cage_weld(m, bad, 1, &arena, &mesh, &d), PLUSH_E_ARGUMENT);
    plush_arena_free(&arena);
    plush_pmx_free(m);
}

/* The topology check on small meshes whose answers are known. */
static void test_topology(void **state)
{
    (void)state;
    float pos[6][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {-1, 0, 0}, {0, -1, 0}};
    uint32_t tetra[4][3] = {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}};
    plush_cage_mesh m = {.vertex_count = 4, .positions = pos, .triangle_count = 4, .triangles = tetra};
    plush_diag d = pmx_fx_diag();
    plush_cage_topology t;
    pmx_fx_ok(plush_cage_check(&m, &t, &d), &d);
    assert_true(t.closed_manifold);
    assert_int_equal(t.edges, 6);

    /* One face flipped: three edges now run the same way in both faces. */
    uint32_t flipped[4][3] = {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 3, 2}};
    m.triangles = flipped;
    pmx_fx_ok(plush_cage_check(&m, &t, &d), &d);
    assert_false(t.closed_manifold);
    assert_int_equal(t.misoriented_edges, 3);
    assert_int_equal(t.border_edges, 0);

    /* An open fan: borders only. */
    m.triangle_count = 3;
    m.triangles = tetra;
    pmx_fx_ok(plush_cage_check(&m, &t, &d), &d);
    assert_int_equal(t.border_edges, 3);
    assert_int_equal(t.nonmanifold_vertices, 0);
    assert_false(t.closed_manifold);

    /* Two triangles touching at one vertex (a bow tie): the vertex is not a manifold fan. */
    uint32_t bow[2][3] = {{0, 1, 2}, {0, 4, 5}};
    m = (plush_cage_mesh){.vertex_count = 6, .positions = pos, .triangle_count = 2, .triangles = bow};
    pmx_fx_ok(plush_cage_check(&m, &t, &d), &d);
    assert_int_equal(t.nonmanifold_vertices, 1);
    assert_int_equal(t.isolated_vertices, 1); /* vertex 3 */

    /* Three faces on one edge. */
    uint32_t fin[3][3] = {{0, 1, 2}, {1, 0, 3}, {0, 1, 5}};
    m.triangle_count = 3;
    m.triangles = fin;
    pmx_fx_ok(plush_cage_check(&m, &t, &d), &d);
    assert_int_equal(t.nonmanifold_edges, 1);

    uint32_t out_of_range[1][3] = {{0, 1, 6}};
    m.triangle_count = 1;
    m.triangles = out_of_range;
    assert_int_equal(plush_cage_check(&m, &t, &d), PLUSH_E_RANGE);
}

/* A large detailed sphere reaches the target within 10%, stays a closed manifold, and the reported
 * distances agree with an independent brute force over every cage face. */
static void test_simplify_large(void **state)
{
    (void)state;
    plush_pmx_model *m = sphere_model(10.0f, 150, 300);
    plush_arena arena = {0};
    plush_diag d = pmx_fx_diag();
    plush_cage_mesh skin, cage;
    pmx_fx_ok(plush_scene_cage_weld(m, NULL, 0, &arena, &skin, &d), &d);
    assert_true(skin.triangle_count > 80000);
    const size_t targets[] = {2000, 500, 100};
    for (size_t k = 0; k < sizeof targets / sizeof targets[0]; k++) {
        plush_cage_result res;
        pmx_fx_ok(plush_cage_simplify(&skin, &(plush_cage_options){.target_triangles = targets[k]}, &arena, &cage,
                                      &res, &d),
                  &d);
        assert_true(res.reached);
        assert_true(fabs((double)res.triangles - (double)targets[k]) <= 0.1 * (double)targets[k]);
        assert_int_equal(res.triangles, cage.triangle_count);
        assert_int_equal(res.source_triangles, skin.triangle_count);
        plush_cage_topology topo;
        pmx_fx_ok(plush_cage_check(&cage, &topo, &d), &d);
        assert_true(topo.closed_manifold);
        /* Cage vertices are source vertices. */
        for (size_t v = 0; v < cage.vertex_count; v++)
            assert_memory_equal(cage.positions[v], skin.positions[cage.source[v]], sizeof cage.positions[v]);

        float max, mean;
        pmx_fx_ok(plush_cage_distance(&cage, (const float(*)[3])skin.positions, skin.vertex_count, &max, &mean, &d),
                  &d);
        double bmax = 0, bsum = 0;
        for (size_t i = 0; i < skin.vertex_count; i += 7) { /* every seventh point keeps the brute force short */
            double best = INFINITY;
            for (size_t t = 0; t < cage.triangle_count; t++) {
                const uint32_t *f = cage.triangles[t];
                double dd = brute_distance(skin.positions[i], cage.positions[f[0]], cage.positions[f[1]],
                                           cage.positions[f[2]]);
                best = dd < best ? dd : best;
            }
            bmax = best > bmax ? best : bmax;
            bsum += best;
        }
        float sub_max, sub_mean;
        size_t n = (skin.vertex_count + 6) / 7;
        float(*pts)[3] = malloc(n * sizeof *pts);
        for (size_t i = 0, j = 0; i < skin.vertex_count; i += 7, j++)
            memcpy(pts[j], skin.positions[i], sizeof pts[j]);
        pmx_fx_ok(plush_cage_distance(&cage, (const float(*)[3])pts, n, &sub_max, &sub_mean, &d), &d);
        free(pts);
        assert_true(fabs(sub_max - bmax) <= 1e-5 * (1 + bmax));
        assert_true(fabs(sub_mean - bsum / (double)n) <= 1e-5 * (1 + bmax));
        assert_true(sub_max <= max && max > 0 && mean > 0 && mean <= max);
        /* Against an ideal cage of equal equilateral faces on the sphere: its largest gap is the sagitta
         * over a face's circumradius. meshoptimizer keeps within four times that. */
        double area = 4 * 3.14159265358979 * 100.0 / (double)targets[k], edge = sqrt(4 * area / sqrt(3.0));
        double rc = edge / sqrt(3.0), sagitta = 10.0 - sqrt(100.0 - rc * rc);
        assert_true(max < 4 * sagitta);
    }
    plush_arena_free(&arena);
    plush_pmx_free(m);
}

/* The offset moves every vertex of a sphere outward by exactly the offset (its normals are radial). */
static void test_offset(void **state)
{
    (void)state;
    plush_pmx_model *m = sphere_model(1.0f, 40, 80);
    plush_arena arena = {0};
    plush_diag d = pmx_fx_diag();
    plush_cage_mesh skin, cage;
    pmx_fx_ok(plush_scene_cage_weld(m, NULL, 0, &arena, &skin, &d), &d);
    plush_cage_result res;
    for (int sign = -1; sign <= 1; sign += 2) {
        float off = 0.25f * (float)sign;
        pmx_fx_ok(plush_cage_simplify(&skin, &(plush_cage_options){.target_triangles = 300, .offset = off}, &arena,
                                      &cage, &res, &d),
                  &d);
        for (size_t v = 0; v < cage.vertex_count; v++) {
            const float *p = cage.positions[v];
            double r = sqrt((double)p[0] * p[0] + (double)p[1] * p[1] + (double)p[2] * p[2]);
            assert_true(fabs(r - (1.0 + off)) < 0.02);
        }
    }
    /* The same faces wound the other way (normals still say outward) still push outward. */
    for (size_t t = 0; t < skin.triangle_count; t++) {
        uint32_t x = skin.triangles[t][1];
        skin.triangles[t][1] = skin.triangles[t][2];
        skin.triangles[t][2] = x;
    }
    pmx_fx_ok(plush_cage_simplify(&skin, &(plush_cage_options){.target_triangles = 300, .offset = 0.25f}, &arena,
                                  &cage, &res, &d),
              &d);
    for (size_t v = 0; v < cage.vertex_count; v++) {
        const float *p = cage.positions[v];
        assert_true(sqrt((double)p[0] * p[0] + (double)p[1] * p[1] + (double)p[2] * p[2]) > 1.2);
    }
    plush_arena_free(&arena);
    plush_pmx_free(m);
}

/* A target at or above the source copies it; bad options and inputs fail with the documented status. */
static void test_simplify_edges(void **state)
{
    (void)state;
    plush_pmx_model *m = sphere_model(1.0f, 8, 12);
    plush_arena arena = {0};
    plush_diag d = pmx_fx_diag();
    plush_cage_mesh skin, cage;
    plush_cage_result res;
    pmx_fx_ok(plush_scene_cage_weld(m, NULL, 0, &arena, &skin, &d), &d);
    pmx_fx_ok(plush_cage_simplify(&skin, &(plush_cage_options){.target_triangles = 100000}, &arena, &cage, &res, &d),
              &d);
    assert_int_equal(res.method, PLUSH_CAGE_COPY);
    assert_int_equal(cage.triangle_count, skin.triangle_count);
    assert_true(res.reached);

    /* A target the simplifier cannot keep topology for still ends near it (the sloppy fallback). */
    pmx_fx_ok(plush_cage_simplify(&skin, &(plush_cage_options){.target_triangles = 4}, &arena, &cage, &res, &d), &d);
    assert_true(cage.triangle_count >= 1);

    d = pmx_fx_diag();
    assert_int_equal(plush_cage_simplify(&skin, &(plush_cage_options){0}, &arena, &cage, &res, &d), PLUSH_E_ARGUMENT);
    d = pmx_fx_diag();
    assert_int_equal(
        plush_cage_simplify(&skin, &(plush_cage_options){.target_triangles = 5, .offset = NAN}, &arena, &cage, &res, &d),
        PLUSH_E_ARGUMENT);
    plush_cage_mesh empty = {0};
    d = pmx_fx_diag();
    assert_int_equal(plush_cage_simplify(&empty, &(plush_cage_options){.target_triangles = 5}, &arena, &cage, &res, &d),
                     PLUSH_E_ARGUMENT);
    skin.positions[3][1] = INFINITY;
    d = pmx_fx_diag();
    assert_int_equal(plush_cage_simplify(&skin, &(plush_cage_options){.target_triangles = 5}, &arena, &cage, &res, &d),
                     PLUSH_E_ARGUMENT);
    plush_arena_free(&arena);
    plush_pmx_free(m);
}


/* The shortest edge of a cage and its mean edge. */
static void edge_range(const plush_cage_mesh *cage, double *shortest, double *mean)
{
    double sum = 0;
    size_t n = 0;
    *shortest = INFINITY;
    for (size_t f = 0; f < cage->triangle_count; f++)
        for (int k = 0; k < 3; k++, n++) {
            const float *p = cage->positions[cage->triangles[f][k]], *q = cage->positions[cage->triangles[f][(k + 1) % 3]];
            double e = sqrt((double)(p[0] - q[0]) * (p[0] - q[0]) + (double)(p[1] - q[1]) * (p[1] - q[1]) +
                            (double)(p[2] - q[2]) * (p[2] - q[2]));
            *shortest = e < *shortest ? e : *shortest;
            sum += e;
        }
    *mean = n ? sum / (double)n : 0;
}

/* A sheet of 10 x 10 unit squares in the XY plane, two triangles each, with one interior vertex moved to
 * within 0.005 of its neighbour, and a separate speck of two triangles 0.1 across off to one side: after
 * the simplifier (here it copies: the target is above the count), the short edge is collapsed and the
 * speck dropped, leaving one piece whose shortest edge is no longer a few thousandths of the others. */
static void test_simplify_specks_and_short_edges(void **state)
{
    (void)state;
    enum { N = 10, GRID = (N + 1) * (N + 1) };
    float pos[GRID + 4][3];
    uint32_t tri[2 * N * N + 2][3];
    for (int y = 0; y <= N; y++)
        for (int x = 0; x <= N; x++) {
            pos[y * (N + 1) + x][0] = (float)x;
            pos[y * (N + 1) + x][1] = (float)y;
            pos[y * (N + 1) + x][2] = 0;
        }
    pos[5 * (N + 1) + 5][0] = 4.005f; /* next to (4, 5) */
    size_t t = 0;
    for (int y = 0; y < N; y++)
        for (int x = 0; x < N; x++) {
            uint32_t a = (uint32_t)(y * (N + 1) + x), b = a + 1, c = a + N + 1, d = c + 1;
            tri[t][0] = a, tri[t][1] = b, tri[t][2] = d, t++;
            tri[t][0] = a, tri[t][1] = d, tri[t][2] = c, t++;
        }
    const float speck[4][3] = {{20, 0, 0}, {20.1f, 0, 0}, {20.1f, 0.1f, 0}, {20, 0.1f, 0}};
    memcpy(pos[GRID], speck, sizeof speck);
    tri[t][0] = GRID, tri[t][1] = GRID + 1, tri[t][2] = GRID + 2, t++;
    tri[t][0] = GRID, tri[t][1] = GRID + 2, tri[t][2] = GRID + 3, t++;
    plush_cage_mesh skin = {.vertex_count = GRID + 4, .positions = pos, .triangle_count = t, .triangles = tri};
    plush_arena arena = {0};
    plush_diag d = pmx_fx_diag();
    plush_cage_mesh cage;
    plush_cage_result res;
    pmx_fx_ok(plush_cage_simplify(&skin, &(plush_cage_options){.target_triangles = 1000}, &arena, &cage, &res, &d), &d);
    plush_cage_topology topo;
    pmx_fx_ok(plush_cage_check(&cage, &topo, &d), &d);
    assert_int_equal(topo.pieces, 1);
    assert_int_equal(topo.degenerate_faces, 0);
    /* the two triangles on the short edge are gone with it, and the speck's two */
    assert_int_equal(cage.triangle_count, 2 * N * N - 2);
    double shortest, mean;
    edge_range(&cage, &shortest, &mean);
    assert_true(shortest > 0.5);
    plush_arena_free(&arena);
}

/* A 10 x 10 sheet of 0.5 squares (20 x 20, two triangles each) in the XY plane and, apart at x = 15, a strip
 * of six quads 0.5 long and `width` wide: the source of the small-piece tests. Fills pos and tri; the
 * triangle count. */
enum { SHEET_N = 20, SHEET_GRID = (SHEET_N + 1) * (SHEET_N + 1), STRIP_VERTICES = 2 * 7 };
static size_t sheet_and_strip(float width, float (*pos)[3], uint32_t (*tri)[3])
{
    enum { N = SHEET_N, GRID = SHEET_GRID };
    size_t t = 0;
    for (int y = 0; y <= N; y++)
        for (int x = 0; x <= N; x++)
            pos[y * (N + 1) + x][0] = 0.5f * (float)x, pos[y * (N + 1) + x][1] = 0.5f * (float)y,
            pos[y * (N + 1) + x][2] = 0;
    for (int y = 0; y < N; y++)
        for (int x = 0; x < N; x++) {
            uint32_t a = (uint32_t)(y * (N + 1) + x), b = a + 1, c = a + N + 1, d = c + 1;
            tri[t][0] = a, tri[t][1] = b, tri[t][2] = d, t++;
            tri[t][0] = a, tri[t][1] = d, tri[t][2] = c, t++;
        }
    for (int y = 0; y <= 1; y++)
        for (int x = 0; x <= 6; x++)
            pos[GRID + 7 * y + x][0] = 15 + 0.5f * (float)x, pos[GRID + 7 * y + x][1] = width * (float)y,
            pos[GRID + 7 * y + x][2] = 0;
    for (int x = 0; x < 6; x++) {
        uint32_t a = (uint32_t)(GRID + x), b = a + 1, c = a + 7, d = c + 1;
        tri[t][0] = a, tri[t][1] = b, tri[t][2] = d, t++;
        tri[t][0] = a, tri[t][1] = d, tri[t][2] = c, t++;
    }
    return t;
}

/* sheet_and_strip(width) simplified together toward 40 triangles into *cage (in arena); the cage's triangles
 * on the strip's side (x > 12). */
static size_t simplified_sheet_and_strip(float width, plush_arena *arena, plush_cage_mesh *cage)
{
    float pos[SHEET_GRID + STRIP_VERTICES][3];
    uint32_t tri[2 * SHEET_N * SHEET_N + 12][3];
    size_t t = sheet_and_strip(width, pos, tri);
    plush_cage_mesh skin = {.vertex_count = SHEET_GRID + STRIP_VERTICES, .positions = pos, .triangle_count = t,
                            .triangles = tri};
    plush_diag d = pmx_fx_diag();
    plush_cage_result res;
    pmx_fx_ok(plush_cage_simplify(&skin, &(plush_cage_options){.target_triangles = 40}, arena, cage, &res, &d), &d);
    size_t strip = 0;
    for (size_t f = 0; f < cage->triangle_count; f++)
        strip += cage->positions[cage->triangles[f][0]][0] > 12;
    return strip;
}

/* A sheet simplified to a coarse cage (mean edge about 2.5) beside a separate strand of six quads 0.5 long
 * and 0.03 wide: the strand is simplified again alone to keep a few triangles of its own, where 0.03 is
 * well above a fiftieth of its own mean edge but about a hundredth of the cage's; its short edges go with the
 * cage's too (a link a few hundredths long reads every small movement as a large strain). */
static void test_raised_strand_short_edges(void **state)
{
    (void)state;
    plush_arena arena = {0};
    plush_cage_mesh cage;
    size_t strand = simplified_sheet_and_strip(0.03f, &arena, &cage);
    double shortest, mean;
    edge_range(&cage, &shortest, &mean);
    print_message("      cage %zu triangles (%zu of the strand): shortest edge %.4f, mean %.3f\n", cage.triangle_count,
                  strand, shortest, mean);
    assert_true(shortest >= 0.02 * mean);
    plush_cage_topology topo;
    plush_diag d = pmx_fx_diag();
    pmx_fx_ok(plush_cage_check(&cage, &topo, &d), &d);
    assert_int_equal(topo.degenerate_faces, 0);
    plush_arena_free(&arena);
}

/* Two sheets that touch at one corner only (a bow tie: what the simplifier leaves where it narrows a strand's
 * neck to a point) are joined there by one triangle over a border edge of each, so that they make one soft
 * body: one piece, one triangle more than the sheets' sixteen. */
static void test_simplify_joins_bow_ties(void **state)
{
    (void)state;
    /* sheet A: the unit square [0,2]x[0,2] in 2x2 cells; sheet B: [2,4]x[2,4], sharing only corner (2,2) */
    float pos[18][3];
    uint32_t tri[16][3];
    size_t t = 0;
    for (int s = 0; s < 2; s++)
        for (int y = 0; y <= 2; y++)
            for (int x = 0; x <= 2; x++) {
                float *p = pos[9 * s + 3 * y + x];
                p[0] = (float)(2 * s + x), p[1] = (float)(2 * s + y), p[2] = 0;
            }
    for (int s = 0; s < 2; s++)
        for (int y = 0; y < 2; y++)
            for (int x = 0; x < 2; x++) {
                uint32_t a = (uint32_t)(9 * s + 3 * y + x), b = a + 1, c = a + 3, d = c + 1;
                tri[t][0] = a, tri[t][1] = b, tri[t][2] = d, t++;
                tri[t][0] = a, tri[t][1] = d, tri[t][2] = c, t++;
            }
    /* B's corner (2,2) is vertex 9, the same position as A's vertex 8: one vertex, as a welded surface has it */
    for (size_t f = 0; f < t; f++)
        for (int k = 0; k < 3; k++)
            if (tri[f][k] == 9)
                tri[f][k] = 8;
    plush_cage_mesh skin = {.vertex_count = 18, .positions = pos, .triangle_count = t, .triangles = tri};
    plush_arena arena = {0};
    plush_diag d = pmx_fx_diag();
    plush_cage_mesh cage;
    plush_cage_result res;
    plush_cage_topology topo;
    pmx_fx_ok(plush_cage_check(&skin, &topo, &d), &d);
    assert_int_equal(topo.pieces, 2);
    pmx_fx_ok(plush_cage_simplify(&skin, &(plush_cage_options){.target_triangles = 100}, &arena, &cage, &res, &d), &d);
    pmx_fx_ok(plush_cage_check(&cage, &topo, &d), &d);
    assert_int_equal(topo.pieces, 1);
    assert_int_equal(cage.triangle_count, 17);
    assert_int_equal(topo.misoriented_edges, 0);
    assert_int_equal(topo.nonmanifold_edges, 0);
    plush_arena_free(&arena);
}

/* A cap -- a vertex nearly on the edge opposite it, as the simplifier leaves along straight runs of vertices --
 * turns its normal over at the smallest movement of that vertex (a cage read as folded back onto itself): the
 * cage flips the cap's long edge to its neighbour's diagonal, keeping the faces, their winding and the
 * vertices. Two caps in a flat sheet: afterwards no face has an angle over 150 degrees. */
static void test_simplify_flips_caps(void **state)
{
    (void)state;
    /* a, b along x; c 0.02 above the middle of a-b (a cap on a-b); d and e further out on both sides */
    float pos[6][3] = {{0, 0, 0}, {2, 0, 0}, {1, 0.02f, 0}, {1, -1, 0}, {1, 1, 0}, {3, 0.5f, 0}};
    uint32_t tri[5][3] = {{0, 1, 2}, {1, 0, 3}, {0, 2, 4}, {2, 1, 4}, {1, 5, 4}};
    plush_cage_mesh skin = {.vertex_count = 6, .positions = pos, .triangle_count = 5, .triangles = tri};
    plush_arena arena = {0};
    plush_diag d = pmx_fx_diag();
    plush_cage_mesh cage;
    plush_cage_result res;
    pmx_fx_ok(plush_cage_simplify(&skin, &(plush_cage_options){.target_triangles = 100}, &arena, &cage, &res, &d), &d);
    assert_int_equal(cage.triangle_count, 5);
    assert_int_equal(cage.vertex_count, 6);
    plush_cage_topology topo;
    pmx_fx_ok(plush_cage_check(&cage, &topo, &d), &d);
    assert_int_equal(topo.misoriented_edges, 0);
    assert_int_equal(topo.nonmanifold_edges, 0);
    assert_int_equal(topo.pieces, 1);
    for (size_t f = 0; f < cage.triangle_count; f++) {
        double n = 0;
        for (int k = 0; k < 3; k++) {
            const float *p = cage.positions[cage.triangles[f][k]], *q = cage.positions[cage.triangles[f][(k + 1) % 3]],
                        *r = cage.positions[cage.triangles[f][(k + 2) % 3]];
            double u[3], w[3], uu = 0, ww = 0, uw = 0;
            for (int i = 0; i < 3; i++)
                u[i] = (double)q[i] - p[i], w[i] = (double)r[i] - p[i], uu += u[i] * u[i], ww += w[i] * w[i],
                uw += u[i] * w[i];
            double angle = acos(uw / sqrt(uu * ww)) * 180 / M_PI;
            assert_true(angle < 150);
        }
        /* every face still faces +z, as the sheet did */
        const float *a = cage.positions[cage.triangles[f][0]], *b = cage.positions[cage.triangles[f][1]],
                    *c = cage.positions[cage.triangles[f][2]];
        n = ((double)b[0] - a[0]) * ((double)c[1] - a[1]) - ((double)b[1] - a[1]) * ((double)c[0] - a[0]);
        assert_true(n > 0);
    }
    plush_arena_free(&arena);
}

/* One surface, one cage piece: a ribbon of 12 quads whose simplified faces kept only its first four and last
 * four (its middle thinned away: two cage pieces that would follow different things and stretch the strand
 * between them into a wire) is bridged into one piece by a quad between the nearest border edges, wound as
 * its neighbours; a second ribbon beside it, a surface piece of its own, stays apart. */
static void test_bridge_split_strand(void **state)
{
    (void)state;
    enum { QUADS = 12 };
    float pos[2 * 2 * (QUADS + 1)][3];
    uint32_t tri[2 * 2 * QUADS][3];
    unsigned idx[2 * 3 * 2 * QUADS * 2];
    size_t t = 0, n = 0;
    for (int r = 0; r < 2; r++)
        for (int y = 0; y <= QUADS; y++)
            for (int x = 0; x < 2; x++) {
                float *p = pos[r * 2 * (QUADS + 1) + 2 * y + x];
                p[0] = (float)(x + 3 * r), p[1] = (float)-y, p[2] = 0.05f * (float)(y * y) / QUADS;
            }
    for (int r = 0; r < 2; r++)
        for (int y = 0; y < QUADS; y++) {
            uint32_t a = (uint32_t)(r * 2 * (QUADS + 1) + 2 * y), b = a + 1, c = a + 2, d = a + 3;
            uint32_t f[2][3] = {{a, c, d}, {a, d, b}};
            for (int k = 0; k < 2; k++) {
                memcpy(tri[t++], f[k], sizeof f[k]);
                if (r == 1 || y < 4 || y >= QUADS - 4) /* the first ribbon's middle is gone */
                    for (int j = 0; j < 3; j++)
                        idx[n++] = f[k][j];
            }
        }
    plush_cage_mesh skin = {.vertex_count = 2 * 2 * (QUADS + 1), .positions = pos, .triangle_count = t,
                            .triangles = tri};
    size_t before = n;
    assert_true(plush__cage_bridge_pieces(&skin, idx, &n, sizeof idx / sizeof idx[0]));
    assert_int_equal(n, before + 6);
    uint32_t out[sizeof idx / sizeof idx[0] / 3][3];
    memcpy(out, idx, n * sizeof idx[0]);
    plush_cage_mesh cage = {.vertex_count = skin.vertex_count, .positions = pos, .triangle_count = n / 3,
                            .triangles = out};
    plush_cage_topology topo;
    plush_diag d = pmx_fx_diag();
    pmx_fx_ok(plush_cage_check(&cage, &topo, &d), &d);
    assert_int_equal(topo.pieces, 2); /* the bridged ribbon, and the other one */
    assert_int_equal(topo.misoriented_edges, 0);
    assert_int_equal(topo.nonmanifold_edges, 0);
    /* the bridge spans the gap: its faces use vertices of both ends of the first ribbon */
    bool top = false, bottom = false;
    for (size_t f = before / 3; f < n / 3; f++)
        for (int k = 0; k < 3; k++)
            top |= pos[out[f][k]][1] == -4.0f, bottom |= pos[out[f][k]][1] == -(float)(QUADS - 4);
    assert_true(top && bottom);
}

/* A small separate piece (a strip of 6 x 1 cells, 12 triangles, 3 units long) beside a large sheet (20 x 20
 * cells over 10 units): simplified together toward 40 triangles (below what the sheet's locked border
 * allows, so the border slides) the flat strip would keep two; it keeps at least eight, so that it can bend
 * and be pinned at its root by a minority of its nodes. */
static void test_simplify_small_piece_floor(void **state)
{
    (void)state;
    plush_arena arena = {0};
    plush_cage_mesh cage;
    size_t strip = simplified_sheet_and_strip(0.5f, &arena, &cage);
    print_message("      %zu triangles, %zu of them the strip's\n", cage.triangle_count, strip);
    assert_true(strip >= 8);
    assert_true(cage.triangle_count >= 32 && cage.triangle_count <= 60);
    plush_arena_free(&arena);
}

/* ---- wraps ---------------------------------------------------------------------------------------- */

/* Two UV spheres of radius 1 centred at x = -c and x = +c, as two materials. */
static plush_pmx_model *two_spheres(float c)
{
    plush_pmx_model *m = mesh_fx_model(1);
    for (int side = -1; side <= 1; side += 2) {
        mesh_fx s = mesh_fx_uv_sphere(1.0f, 16, 32);
        for (size_t v = 0; v < s.vertex_count; v++)
            s.positions[v][0] += (float)side * c;
        mesh_fx_add_material(m, side < 0 ? "left" : "right", &s, 0);
        mesh_fx_free(&s);
    }
    return m;
}

/* The winding number of a closed mesh around p (van Oosterom and Strackee's solid angle per face): 1
 * inside an outward-wound surface, 0 outside. */
static double winding(const plush_cage_mesh *m, const float pf[3])
{
    double sum = 0;
    for (size_t t = 0; t < m->triangle_count; t++) {
        double v[3][3], len[3];
        for (int j = 0; j < 3; j++) {
            for (int k = 0; k < 3; k++)
                v[j][k] = (double)m->positions[m->triangles[t][j]][k] - pf[k];
            len[j] = sqrt(dot(v[j], v[j]));
        }
        double bc[3] = {v[1][1] * v[2][2] - v[1][2] * v[2][1], v[1][2] * v[2][0] - v[1][0] * v[2][2],
                        v[1][0] * v[2][1] - v[1][1] * v[2][0]};
        double den = len[0] * len[1] * len[2] + dot(v[0], v[1]) * len[2] + dot(v[0], v[2]) * len[1] +
                     dot(v[1], v[2]) * len[0];
        sum += 2 * atan2(dot(v[0], bc), den);
    }
    return sum / (4 * 3.14159265358979323846);
}

static double nearest_face(const plush_cage_mesh *m, const float p[3])
{
    double best = INFINITY;
    for (size_t t = 0; t < m->triangle_count; t++) {
        const uint32_t *f = m->triangles[t];
        double d = brute_distance(p, m->positions[f[0]], m->positions[f[1]], m->positions[f[2]]);
        best = d < best ? d : best;
    }
    return best;
}

/* One closed, outward-wound piece; every detailed vertex inside it or within `slack` of it (brute force). */
static void expect_encloses(const plush_cage_mesh *cage, const plush_cage_mesh *skin, double slack)
{
    plush_diag d = pmx_fx_diag();
    plush_cage_topology topo;
    pmx_fx_ok(plush_cage_check(cage, &topo, &d), &d);
    assert_true(topo.closed_manifold);
    assert_int_equal(topo.pieces, 1);
    float far_away[3] = {1e4f, 0, 0};
    assert_true(fabs(winding(cage, far_away)) < 1e-6);
    size_t outside = 0;
    for (size_t v = 0; v < skin->vertex_count; v++) {
        double w = winding(cage, skin->positions[v]);
        assert_true(fabs(w - 1) < 1e-3 || fabs(w) < 1e-3); /* closed and outward: 1 or 0, never -1 */
        if (w < 0.5) {
            outside++;
            assert_true(nearest_face(cage, skin->positions[v]) <= slack);
        }
    }
    print_message("      %zu of %zu detailed vertices outside the cage (each within %.3g of it)\n", outside,
                  skin->vertex_count, slack);
}

/* Two spheres 0.6 apart (more than twice the offset: the band leaves them apart and a tube joins them)
 * wrap into one closed piece: the raw wrap lies about `offset` from the spheres (within a cell), and after
 * simplification every sphere vertex is inside it or within the offset of it. */
static void test_wrap_two_spheres(void **state)
{
    (void)state;
    plush_pmx_model *m = two_spheres(1.3f);
    plush_arena arena = {0};
    plush_diag d = pmx_fx_diag();
    plush_cage_mesh skin, wrap, cage;
    pmx_fx_ok(plush_scene_cage_weld(m, NULL, 0, &arena, &skin, &d), &d);
    plush_cage_topology topo;
    pmx_fx_ok(plush_cage_check(&skin, &topo, &d), &d);
    assert_int_equal(topo.pieces, 2);

    const float cell = 0.1f, offset = 0.2f;
    pmx_fx_ok(plush_cage_wrap(&skin, cell, offset, &arena, &wrap, &d), &d);
    expect_encloses(&wrap, &skin, 0);
    assert_null(wrap.source);
    /* every wrap vertex about `offset` from the spheres, but the tube's, which lie between them */
    for (size_t v = 0; v < wrap.vertex_count; v++) {
        double dist = nearest_face(&skin, wrap.positions[v]);
        if (fabsf(wrap.positions[v][0]) > 0.6f)
            assert_true(fabs(dist - offset) < cell);
        else
            assert_true(dist < 0.3 + offset + cell);
    }

    const size_t targets[] = {200, 600};
    for (size_t k = 0; k < 2; k++) {
        plush_cage_result res;
        pmx_fx_ok(plush_cage_simplify(&skin, &(plush_cage_options){.target_triangles = targets[k], .wrap = true,
                                                                   .offset = offset},
                                      &arena, &cage, &res, &d),
                  &d);
        assert_true(res.wrapped && res.reached);
        assert_true(fabs((double)res.triangles - (double)targets[k]) <= 0.1 * (double)targets[k]);
        assert_int_equal(res.triangles, cage.triangle_count);
        assert_float_equal(res.wrap_offset, offset, 1e-6);
        assert_true(res.wrap_triangles > targets[k]);
        expect_encloses(&cage, &skin, offset);
        /* the normals given are the outward ones */
        for (size_t v = 0; v < cage.vertex_count; v++) {
            const float *p = cage.positions[v], *n = cage.normals[v];
            float c = p[0] < 0 ? -1.3f : 1.3f;
            if (fabsf(p[0]) > 1.3f)
                assert_true((p[0] - c) * n[0] + p[1] * n[1] + p[2] * n[2] > 0);
        }
    }
    plush_arena_free(&arena);
    plush_pmx_free(m);
}

/* Spheres that nearly touch merge in the band itself (no tube); the same input gives the same bytes. */
static void test_wrap_deterministic(void **state)
{
    (void)state;
    plush_pmx_model *m = two_spheres(1.1f);
    plush_arena arena = {0};
    plush_diag d = pmx_fx_diag();
    plush_cage_mesh skin, a, b;
    pmx_fx_ok(plush_scene_cage_weld(m, NULL, 0, &arena, &skin, &d), &d);
    plush_cage_options o = {.target_triangles = 400, .wrap = true};
    plush_cage_result ra, rb;
    pmx_fx_ok(plush_cage_simplify(&skin, &o, &arena, &a, &ra, &d), &d);
    pmx_fx_ok(plush_cage_simplify(&skin, &o, &arena, &b, &rb, &d), &d);
    assert_int_equal(a.vertex_count, b.vertex_count);
    assert_int_equal(a.triangle_count, b.triangle_count);
    assert_memory_equal(a.positions, b.positions, a.vertex_count * sizeof *a.positions);
    assert_memory_equal(a.normals, b.normals, a.vertex_count * sizeof *a.normals);
    assert_memory_equal(a.triangles, b.triangles, a.triangle_count * sizeof *a.triangles);
    /* the default offset: 2% of the bounding box's diagonal (4.2 x 2 x 2) */
    assert_float_equal(ra.wrap_offset, 0.02 * sqrt(4.2 * 4.2 + 8), 1e-4);
    expect_encloses(&a, &skin, ra.wrap_offset);
    plush_arena_free(&arena);
    plush_pmx_free(m);
}

/* Bad wraps fail with the documented status, the cage untouched. */
/* Wraps whose cell the plan clamps to its largest (1.25 offsets: a small target on a large surface) are
 * made at every size: the check that the offset is at least 0.8 cells must not fail on that cell's own
 * rounding (it did for about a third of all sizes, "offset 0.2328 too small (at least 0.2328)"). */
static void test_wrap_largest_cell_every_size(void **state)
{
    (void)state;
    plush_pmx_model *m = two_spheres(1.3f);
    plush_arena arena = {0};
    plush_diag d = pmx_fx_diag();
    plush_cage_mesh skin, cage;
    plush_cage_result res;
    pmx_fx_ok(plush_scene_cage_weld(m, NULL, 0, &arena, &skin, &d), &d);
    float(*rest)[3] = malloc(skin.vertex_count * sizeof *rest);
    memcpy(rest, skin.positions, skin.vertex_count * sizeof *rest);
    for (int i = 0; i < 24; i++) {
        float scale = 0.05f + 0.0137f * (float)i;
        for (size_t v = 0; v < skin.vertex_count; v++)
            for (int k = 0; k < 3; k++)
                skin.positions[v][k] = rest[v][k] * scale;
        d = pmx_fx_diag();
        pmx_fx_ok(plush_cage_simplify(&skin, &(plush_cage_options){.target_triangles = 8, .wrap = true}, &arena,
                                      &cage, &res, &d),
                  &d);
        assert_true(res.wrapped && cage.triangle_count > 0);
    }
    free(rest);
    plush_arena_free(&arena);
    plush_pmx_free(m);
}

static void test_wrap_errors(void **state)
{
    (void)state;
    plush_pmx_model *m = two_spheres(1.3f);
    plush_arena arena = {0};
    plush_diag d = pmx_fx_diag();
    plush_cage_mesh skin, cage;
    plush_cage_result res;
    pmx_fx_ok(plush_scene_cage_weld(m, NULL, 0, &arena, &skin, &d), &d);
    assert_int_equal(plush_cage_simplify(&skin, &(plush_cage_options){.target_triangles = 100, .wrap = true,
                                                                     .offset = -0.1f},
                                         &arena, &cage, &res, &d),
                     PLUSH_E_ARGUMENT);
    d = pmx_fx_diag();
    assert_int_equal(plush_cage_simplify(&skin, &(plush_cage_options){.target_triangles = 100, .wrap = true,
                                                                     .offset = 0.1f, .cell = 0.5f},
                                         &arena, &cage, &res, &d),
                     PLUSH_E_ARGUMENT); /* the band would have gaps */
    d = pmx_fx_diag();
    assert_int_equal(plush_cage_wrap(&skin, 0.1f, 0.05f, &arena, &cage, &d), PLUSH_E_ARGUMENT);
    d = pmx_fx_diag();
    assert_int_equal(plush_cage_wrap(&skin, NAN, 0.2f, &arena, &cage, &d), PLUSH_E_ARGUMENT);
    d = pmx_fx_diag();
    assert_int_equal(plush_cage_wrap(&skin, 1e-4f, 0.2f, &arena, &cage, &d), PLUSH_E_RANGE); /* too fine */
    plush_cage_mesh empty = {0};
    d = pmx_fx_diag();
    assert_int_equal(plush_cage_wrap(&empty, 0.1f, 0.2f, &arena, &cage, &d), PLUSH_E_ARGUMENT);
    assert_int_equal(cage.triangle_count, 0);
    plush_arena_free(&arena);
    plush_pmx_free(m);
}

/* Beads sewn on in a lattice (studs, sequins), their gaps wider than twice the default band: the wrap joins them
 * by tubes into a net whose every hole is a handle the simplifier may not close, and at the band's first width
 * it stayed in the thousands of triangles where 300 were asked. With the default band (no offset given) the
 * band is widened until the target is reached in one closed piece; an offset given is kept. */
enum { BEADS = 10, BEAD_FACES = 12 };
static void test_wrap_lattice_of_beads(void **state)
{
    (void)state;
    static float pos[BEADS * BEADS * 8][3];
    static uint32_t tri[BEADS * BEADS * BEAD_FACES][3];
    static const uint32_t cube[BEAD_FACES][3] = {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6}, {0, 1, 4}, {1, 5, 4},
                                                 {2, 6, 3}, {3, 6, 7}, {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}};
    for (uint32_t b = 0; b < BEADS * BEADS; b++) {
        float x = 0.15f * (float)(b % BEADS), z = 0.15f * (float)(b / BEADS), h = 0.01f;
        for (uint32_t c = 0; c < 8; c++) {
            pos[8 * b + c][0] = x + (c & 1 ? h : -h);
            pos[8 * b + c][1] = c & 2 ? h : -h;
            pos[8 * b + c][2] = z + (c & 4 ? h : -h);
        }
        for (int f = 0; f < BEAD_FACES; f++)
            for (int k = 0; k < 3; k++)
                tri[BEAD_FACES * b + (uint32_t)f][k] = 8 * b + cube[f][k];
    }
    plush_cage_mesh beads = {.vertex_count = BEADS * BEADS * 8, .positions = pos,
                             .triangle_count = BEADS * BEADS * BEAD_FACES, .triangles = tri};
    plush_arena arena = {0};
    plush_diag d = pmx_fx_diag();
    plush_cage_mesh cage;
    plush_cage_result res;
    pmx_fx_ok(plush_cage_simplify(&beads, &(plush_cage_options){.target_triangles = 300, .wrap = true}, &arena, &cage,
                                  &res, &d),
              &d);
    print_message("      lattice of %d beads, default band: %zu triangles (wrap %zu, offset %.3f)\n", BEADS * BEADS,
                  cage.triangle_count, res.wrap_triangles, (double)res.wrap_offset);
    assert_true(res.wrapped && res.reached);
    assert_true(cage.triangle_count <= 330);
    expect_encloses(&cage, &beads, 0);
    /* the band at the default's width, given: kept, and the target out of reach */
    double diagonal = sqrt(2 * 1.37 * 1.37 + 0.02 * 0.02);
    float given = (float)(0.02 * diagonal);
    pmx_fx_ok(plush_cage_simplify(&beads, &(plush_cage_options){.target_triangles = 300, .wrap = true, .offset = given},
                                  &arena, &cage, &res, &d),
              &d);
    print_message("      the same, offset %.3f given: %zu triangles\n", (double)given, cage.triangle_count);
    assert_float_equal(res.wrap_offset, given, 1e-6);
    assert_false(res.reached);
    plush_arena_free(&arena);
}

/* A torus keeps its hole: the wrap is one closed piece of Euler characteristic 0. A target no torus can
 * reach (4 triangles) is missed, not cheated: the closed cage nearest to it comes back, reached false. */
static void test_wrap_torus(void **state)
{
    (void)state;
    enum { RING = 48, TUBE = 16 };
    float pos[RING * TUBE][3];
    uint32_t tri[2 * RING * TUBE][3];
    for (int i = 0; i < RING; i++)
        for (int j = 0; j < TUBE; j++) {
            double u = 2 * 3.14159265358979 * i / RING, v = 2 * 3.14159265358979 * j / TUBE;
            float *p = pos[i * TUBE + j];
            p[0] = (float)((2 + 0.5 * cos(v)) * cos(u)), p[1] = (float)(0.5 * sin(v));
            p[2] = (float)((2 + 0.5 * cos(v)) * sin(u));
            uint32_t a = (uint32_t)(i * TUBE + j), b = (uint32_t)(((i + 1) % RING) * TUBE + j),
                     c = (uint32_t)(((i + 1) % RING) * TUBE + (j + 1) % TUBE), d = (uint32_t)(i * TUBE + (j + 1) % TUBE);
            memcpy(tri[2 * a], (uint32_t[3]){a, b, c}, sizeof tri[0]);
            memcpy(tri[2 * a + 1], (uint32_t[3]){a, c, d}, sizeof tri[0]);
        }
    plush_cage_mesh torus = {.vertex_count = RING * TUBE, .positions = pos, .triangle_count = 2 * RING * TUBE,
                             .triangles = tri};
    plush_arena arena = {0};
    plush_diag d = pmx_fx_diag();
    plush_cage_mesh cage;
    plush_cage_result res;
    const size_t targets[] = {300, 4};
    for (size_t k = 0; k < 2; k++) {
        pmx_fx_ok(plush_cage_simplify(&torus, &(plush_cage_options){.target_triangles = targets[k], .wrap = true,
                                                                    .offset = 0.2f},
                                      &arena, &cage, &res, &d),
                  &d);
        plush_cage_topology topo;
        pmx_fx_ok(plush_cage_check(&cage, &topo, &d), &d);
        assert_true(topo.closed_manifold);
        assert_int_equal(topo.pieces, 1);
        assert_int_equal((long)cage.vertex_count - (long)topo.edges + (long)cage.triangle_count, 0);
        assert_true(res.reached == (k == 0));
        assert_true(cage.triangle_count >= (k == 0 ? 270 : 14)); /* the fewest faces a torus can have */
        print_message("      torus wrap toward %zu: %zu triangles\n", targets[k], cage.triangle_count);
        if (k == 0)
            expect_encloses(&cage, &torus, 0.2);
    }
    plush_arena_free(&arena);
}

/* The case that matters: the demo bear's fur (made by `make` into proxies/), a dozen separate pieces, wraps
 * into one closed piece at 300 and 1000 triangles (within 10%). How long it takes is make bench's
 * (tools/bench/bench_cage.c), not a test's. */
static void test_wrap_bear(void **state)
{
    (void)state;
    plush_pmx_model *m = NULL;
    plush_diag d = pmx_fx_diag();
    pmx_fx_ok(plush_pmx_read_file("proxies/plush_bear.pmx", NULL, &m, &d), &d);
    plush_arena arena = {0};
    const char *fur[] = {"体", "頭", "口元", "耳", "腕", "足"};
    plush_cage_mesh skin, cage;
    pmx_fx_ok(plush_scene_cage_weld(m, fur, 6, &arena, &skin, &d), &d);
    plush_cage_topology topo;
    pmx_fx_ok(plush_cage_check(&skin, &topo, &d), &d);
    assert_true(topo.pieces >= 10); /* 15 ellipsoids; welding joins those that share a seam */
    print_message("      bear fur: %zu triangles in %zu pieces\n", skin.triangle_count, topo.pieces);
    const size_t targets[] = {300, 1000};
    for (size_t k = 0; k < 2; k++) {
        plush_cage_result res;
        pmx_fx_ok(plush_cage_simplify(&skin, &(plush_cage_options){.target_triangles = targets[k], .wrap = true},
                                      &arena, &cage, &res, &d),
                  &d);
        pmx_fx_ok(plush_cage_check(&cage, &topo, &d), &d);
        assert_true(topo.closed_manifold);
        assert_int_equal(topo.pieces, 1);
        assert_true(fabs((double)cage.triangle_count - (double)targets[k]) <= 0.1 * (double)targets[k]);
        float max, mean;
        pmx_fx_ok(plush_cage_distance(&cage, (const float(*)[3])skin.positions, skin.vertex_count, &max, &mean, &d),
                  &d);
        print_message("      bear wrap %zu: %zu triangles (wrap %zu on a cell of %.3g, offset %.3g), distance max "
                      "%.3g mean %.3g\n",
                      targets[k], cage.triangle_count, res.wrap_triangles, (double)res.wrap_cell,
                      (double)res.wrap_offset, (double)max, (double)mean);
    }
    plush_arena_free(&arena);
    plush_pmx_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_weld_sphere),    cmocka_unit_test(test_weld_materials),
        cmocka_unit_test(test_topology),       cmocka_unit_test(test_simplify_large),
        cmocka_unit_test(test_offset),         cmocka_unit_test(test_simplify_edges),
        cmocka_unit_test(test_simplify_specks_and_short_edges),
        cmocka_unit_test(test_raised_strand_short_edges),
        cmocka_unit_test(test_simplify_joins_bow_ties),
        cmocka_unit_test(test_simplify_small_piece_floor),
        cmocka_unit_test(test_bridge_split_strand),
        cmocka_unit_test(test_simplify_flips_caps),
        cmocka_unit_test(test_wrap_two_spheres), cmocka_unit_test(test_wrap_deterministic),
        cmocka_unit_test(test_wrap_largest_cell_every_size), cmocka_unit_test(test_wrap_errors),    cmocka_unit_test(test_wrap_torus),
        cmocka_unit_test(test_wrap_lattice_of_beads), cmocka_unit_test(test_wrap_bear),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
