/* Behind the visible skin (plush/sys/quality.h) on a cube built here: points left out at rest (behind it,
 * on it), points in front, behind after a move of theirs or of the skin, a point beyond the depth bound, an
 * open skin, bad indices (a real character at rest, which must read 0: test_scene_quality). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/sys/quality.h"
#include "support/pmx_fixture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The unit cube: 8 corners with outward normals (along the diagonals), 12 outward triangles; then the points
 * measured, from vertex 8. */
enum { CORNERS = 8, POINTS = 5, VERTICES = CORNERS + POINTS };
static const uint32_t cube_t[12][3] = {{0, 2, 1}, {0, 3, 2}, {4, 5, 6}, {4, 6, 7}, {0, 1, 5}, {0, 5, 4},
                                       {1, 2, 6}, {1, 6, 5}, {2, 3, 7}, {2, 7, 6}, {3, 0, 4}, {3, 4, 7}};

typedef struct scene {
    float positions[VERTICES][3];
    float normals[VERTICES][3];
    uint32_t points[POINTS];
} scene;

/* Points: 8 inside (behind at rest), 9 above the top face, 10 on the top face, 11 far away, 12 beside a side. */
static void make(scene *s)
{
    memset(s, 0, sizeof *s);
    for (int c = 0; c < CORNERS; c++) {
        float p[3] = {(float)((c == 1 || c == 2 || c == 5 || c == 6) ? 1 : 0), (float)((c == 2 || c == 3 || c == 6 || c == 7) ? 1 : 0),
                      (float)(c >= 4 ? 1 : 0)};
        memcpy(s->positions[c], p, sizeof p);
        for (int k = 0; k < 3; k++)
            s->normals[c][k] = (p[k] - 0.5f) / (float)(0.5 * sqrt(3.0));
    }
    const float pts[POINTS][3] = {{0.5f, 0.5f, 0.5f}, {0.5f, 0.5f, 1.5f}, {0.5f, 0.5f, 1.0f}, {5, 5, 5}, {1.25f, 0.5f, 0.5f}};
    memcpy(s->positions[CORNERS], pts, sizeof pts);
    for (int i = 0; i < POINTS; i++)
        s->points[i] = (uint32_t)(CORNERS + i);
}

static plush_quality_skin *skin_of(const scene *s, size_t triangles, double depth)
{
    plush_quality_skin *skin = NULL;
    plush_diag d = pmx_fx_diag();
    pmx_fx_ok(plush_quality_skin_create((const float(*)[3])s->positions, (const float(*)[3])s->normals, VERTICES, cube_t, triangles, s->points, POINTS, depth,
                                        &skin, &d),
              &d);
    return skin;
}

static void test_rest_reads_zero(void **state)
{
    (void)state;
    scene s;
    make(&s);
    plush_quality_skin *skin = skin_of(&s, 12, 1.0);
    /* inside and on the face: left out; above, beside and far: measured */
    assert_int_equal(plush_quality_skin_left_out(skin, 1), 2);
    assert_int_equal(plush_quality_skin_measured(skin, 1), 3);
    plush_quality_skin_pose(skin, (const float(*)[3])s.positions, (const float(*)[3])s.normals);
    double deepest = -1;
    assert_int_equal(plush_quality_skin_behind(skin, 0, (const float(*)[3])s.positions, 1, NULL, &deepest), 0);
    assert_true(deepest == 0);
    plush_quality_skin_destroy(skin);
}

/* The cube's skin posed at rest, and the points where at puts them: the point above (1) 0.2 under the top face,
 * the others where they are. */
static plush_quality_skin *cube_with_a_point_under(scene *s, float at[VERTICES][3])
{
    make(s);
    plush_quality_skin *skin = skin_of(s, 12, 1.0);
    memcpy(at, s->positions, sizeof s->positions);
    at[9][2] = 0.8f;
    plush_quality_skin_pose(skin, (const float(*)[3])s->positions, (const float(*)[3])s->normals);
    return skin;
}

static void test_points_and_skin_move(void **state)
{
    (void)state;
    scene s;
    float at[VERTICES][3];
    /* the point above goes 0.2 under the top face; the one beside stays out */
    plush_quality_skin *skin = cube_with_a_point_under(&s, at);
    double deepest = 0;
    assert_int_equal(plush_quality_skin_behind(skin, 0, (const float(*)[3])at, 1, NULL, &deepest), 1);
    assert_true(fabs(deepest - 0.2) < 1e-5);
    /* the far point comes in (0.1 from the bottom face): within the depth bound, so found behind */
    at[11][0] = 0.5f;
    at[11][1] = 0.5f;
    at[11][2] = 0.1f;
    assert_int_equal(plush_quality_skin_behind(skin, 0, (const float(*)[3])at, 1, NULL, &deepest), 2);
    /* a second set keeps its own hints and gives its own answer from the same pose */
    assert_int_equal(plush_quality_skin_behind(skin, 1, (const float(*)[3])s.positions, 1, NULL, NULL), 0);
    /* the skin moves instead: the cube slides 1 along x, over the point beside it (0.25 in from its face) */
    float moved[VERTICES][3];
    memcpy(moved, s.positions, sizeof moved);
    for (int c = 0; c < CORNERS; c++)
        moved[c][0] += 1.0f;
    plush_quality_skin_pose(skin, (const float(*)[3])moved, (const float(*)[3])s.normals);
    assert_int_equal(plush_quality_skin_behind(skin, 1, (const float(*)[3])s.positions, 1, NULL, &deepest), 1);
    assert_true(fabs(deepest - 0.25) < 1e-5);
    plush_quality_skin_destroy(skin);
}

/* A slot's points measured in ranges (as the measure splits them over two threads) add up to the whole: the
 * counts, how many were measured, the deepest; a range of every other point starts at a multiple of the step. */
static void test_ranges_add_up(void **state)
{
    (void)state;
    scene s;
    float at[VERTICES][3];
    plush_quality_skin *skin = cube_with_a_point_under(&s, at); /* point 1: 0.2 under the top face */
    at[12][0] = 0.7f;                                            /* point 4: 0.3 inside the side */
    size_t measured = 0, m1 = 0, m2 = 0;
    double deepest = 0, d1 = 0, d2 = 0;
    size_t whole = plush_quality_skin_behind(skin, 0, (const float(*)[3])at, 1, &measured, &deepest);
    assert_int_equal(whole, 2);
    assert_int_equal(measured, 3);
    size_t a = plush_quality_skin_behind_range(skin, 1, (const float(*)[3])at, 1, 0, 3, &m1, &d1);
    size_t b = plush_quality_skin_behind_range(skin, 1, (const float(*)[3])at, 1, 3, SIZE_MAX, &m2, &d2);
    assert_int_equal(a, 1);
    assert_int_equal(b, 1);
    assert_int_equal(m1 + m2, measured);
    assert_true(fabs(d1 - 0.2) < 1e-5 && fabs(d2 - 0.3) < 1e-5 && fabs(deepest - 0.3) < 1e-5);
    /* every other point (0, 2, 4): a range from 1 starts at 2 */
    size_t even = plush_quality_skin_behind_range(skin, 1, (const float(*)[3])at, 2, 1, SIZE_MAX, &m1, &d1);
    assert_int_equal(even, 1);                      /* point 4; 2 is on the face (left out) */
    assert_int_equal(m1, 1);
    assert_true(fabs(d1 - 0.3) < 1e-5);
    plush_quality_skin_destroy(skin);
}

static void test_depth_bound(void **state)
{
    (void)state;
    scene s;
    make(&s);
    /* a point 0.45 deep in a cube said to be at most 0.3 thick inside: the search ends before any face, so
     * it reads as in front; with no bound it is behind */
    float at[VERTICES][3];
    memcpy(at, s.positions, sizeof at);
    at[9][2] = 0.55f;
    plush_quality_skin *skin = skin_of(&s, 12, 0.3);
    plush_quality_skin_pose(skin, (const float(*)[3])s.positions, (const float(*)[3])s.normals);
    assert_int_equal(plush_quality_skin_behind(skin, 0, (const float(*)[3])at, 1, NULL, NULL), 0);
    plush_quality_skin_destroy(skin);
    skin = skin_of(&s, 12, 0);
    plush_quality_skin_pose(skin, (const float(*)[3])s.positions, (const float(*)[3])s.normals);
    assert_int_equal(plush_quality_skin_behind(skin, 0, (const float(*)[3])at, 1, NULL, NULL), 1);
    plush_quality_skin_destroy(skin);
}

/* The side comes from the surface, not the normals the model interpolates: a flat square whose normals face
 * up but one corner's, which leans away (an authored normal at a sharp feature), and a point above the
 * square near that corner. The interpolated normal there points away from it; the square's own faces say it
 * is in front, so it is measured and not behind. */
static void test_side_from_the_surface(void **state)
{
    (void)state;
    const float pos[5][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0.05f, 0.05f, 0.3f}};
    float nrm[5][3] = {{0, 0, 1}, {0, 0, 1}, {0, 0, 1}, {0, 0, 1}, {0, 0, 1}};
    float lean = 1.0f / sqrtf(1.04f);
    nrm[0][0] = -lean, nrm[0][1] = 0, nrm[0][2] = -0.2f * lean;
    const uint32_t tris[2][3] = {{0, 1, 2}, {0, 2, 3}}, point = 4;
    plush_quality_skin *skin = NULL;
    plush_diag d = pmx_fx_diag();
    pmx_fx_ok(plush_quality_skin_create(pos, (const float(*)[3])nrm, 5, tris, 2, &point, 1, 0, &skin, &d), &d);
    assert_int_equal(plush_quality_skin_measured(skin, 1), 1);
    plush_quality_skin_pose(skin, pos, (const float(*)[3])nrm);
    assert_int_equal(plush_quality_skin_behind(skin, 0, pos, 1, NULL, NULL), 0);
    /* below the square it is behind */
    float below[5][3];
    memcpy(below, pos, sizeof below);
    below[4][2] = -0.3f;
    double deepest = 0;
    assert_int_equal(plush_quality_skin_behind(skin, 0, (const float(*)[3])below, 1, NULL, &deepest), 1);
    assert_true(fabs(deepest - 0.3) < 1e-5);
    plush_quality_skin_destroy(skin);
}

/* A surface as a cover over points (plush_quality_skin_keep_covered, _uncovered): a cloth square 0.3 above a body
 * point facing up, a point beside the square, one beyond reach below it, and a second layer of the cloth (wound the
 * other way, as a lock's inner side is) 0.1 below the first over the same point. Only the point under the square
 * within reach is measured; it shows when the cloth sinks below it or slides off it, not while either layer
 * covers it. */
static void test_covered_points(void **state)
{
    (void)state;
    float pos[11][3] = {{0, 0, 0.3f}, {1, 0, 0.3f}, {1, 1, 0.3f}, {0, 1, 0.3f},      /* the outer layer */
                        {0, 0, 0.2f}, {0, 1, 0.2f}, {1, 1, 0.2f}, {1, 0, 0.2f},      /* the inner, wound back */
                        {0.5f, 0.5f, 0}, {2.5f, 0.5f, 0}, {0.5f, 0.5f, -5.0f}}; /* under, beside, far below */
    float nrm[11][3] = {{0}};
    for (int v = 0; v < 11; v++)
        nrm[v][2] = 1;
    const uint32_t tris[4][3] = {{0, 1, 2}, {0, 2, 3}, {4, 5, 6}, {4, 6, 7}}, points[3] = {8, 9, 10};
    plush_quality_skin *skin = NULL;
    plush_diag d = pmx_fx_diag();
    pmx_fx_ok(plush_quality_skin_create((const float(*)[3])pos, NULL, 11, tris, 4, points, 3, 1.0, &skin, &d), &d);
    assert_int_equal(plush_quality_skin_keep_covered(skin, (const float(*)[3])pos, (const float(*)[3])nrm, 1.0), 1);
    assert_int_equal(plush_quality_skin_measured(skin, 1), 1);
    assert_int_equal(plush_quality_skin_left_out(skin, 1), 2);
    plush_quality_skin_pose(skin, (const float(*)[3])pos, NULL);
    size_t measured = 0;
    assert_int_equal(plush_quality_skin_uncovered(skin, (const float(*)[3])pos, (const float(*)[3])nrm, 1, 1.0,
                                                  &measured),
                     0);
    assert_int_equal(measured, 1);
    float moved[11][3];
    memcpy(moved, pos, sizeof moved);
    for (int v = 4; v < 8; v++)
        moved[v][2] = 0.5f; /* the inner layer above the outer: still covered, by both */
    plush_quality_skin_pose(skin, (const float(*)[3])moved, NULL);
    assert_int_equal(plush_quality_skin_uncovered(skin, (const float(*)[3])pos, (const float(*)[3])nrm, 1, 1.0, NULL), 0);
    for (int v = 0; v < 8; v++)
        moved[v][2] = -0.2f; /* the cloth sunk below the body point: it shows */
    plush_quality_skin_pose(skin, (const float(*)[3])moved, NULL);
    assert_int_equal(plush_quality_skin_uncovered(skin, (const float(*)[3])pos, (const float(*)[3])nrm, 1, 1.0, NULL), 1);
    memcpy(moved, pos, sizeof moved);
    for (int v = 0; v < 8; v++)
        moved[v][0] += 2.0f; /* slid off it sideways */
    plush_quality_skin_pose(skin, (const float(*)[3])moved, NULL);
    assert_int_equal(plush_quality_skin_uncovered(skin, (const float(*)[3])pos, (const float(*)[3])nrm, 1, 1.0, NULL), 1);
    plush_quality_skin_destroy(skin);
}

static void test_open_skin_and_bad_input(void **state)
{
    (void)state;
    scene s;
    make(&s);
    /* only the bottom face, its normals down: the points above it are behind it and left out at rest; the far
     * point and the one beside the cube lie beyond its rim (nearest a border corner or edge), where an open
     * skin has no inside, so they are in front and measured */
    plush_quality_skin *skin = skin_of(&s, 2, 0);
    assert_int_equal(plush_quality_skin_measured(skin, 1), 2);
    plush_quality_skin_pose(skin, (const float(*)[3])s.positions, (const float(*)[3])s.normals);
    assert_int_equal(plush_quality_skin_behind(skin, 0, (const float(*)[3])s.positions, 1, NULL, NULL), 0);
    plush_quality_skin_destroy(skin);
    /* no triangle: nothing measured */
    skin = skin_of(&s, 0, 0);
    assert_int_equal(plush_quality_skin_measured(skin, 1), 0);
    plush_quality_skin_destroy(skin);
    plush_quality_skin_destroy(NULL);
    /* an index out of range */
    const uint32_t bad[1][3] = {{0, 1, VERTICES}};
    plush_quality_skin *out = (plush_quality_skin *)&s;
    plush_diag d = pmx_fx_diag();
    assert_int_equal(plush_quality_skin_create((const float(*)[3])s.positions, (const float(*)[3])s.normals, VERTICES, bad, 1, s.points, POINTS, 0, &out, &d),
                     PLUSH_E_RANGE);
    assert_null(out);
    const uint32_t far_point[1] = {VERTICES};
    assert_int_equal(plush_quality_skin_create((const float(*)[3])s.positions, (const float(*)[3])s.normals, VERTICES, cube_t, 12, far_point, 1, 0, &out, &d),
                     PLUSH_E_RANGE);
}

/* The push's question: how far a point must move to lie the margin in front, along the skin's normal; a
 * point left out at rest is never pushed; beyond reach nothing is seen; between a point's turns only a search
 * asked for looks again. */
static void test_depth(void **state)
{
    (void)state;
    scene s;
    make(&s);
    plush_quality_skin *skin = skin_of(&s, 12, 1.0);
    plush_quality_skin_pose(skin, (const float(*)[3])s.positions, (const float(*)[3])s.normals);
    float dir[3];
    /* point 1 (vertex 9) 0.2 under the top face: up by 0.2 + margin */
    float p[3] = {0.5f, 0.5f, 0.8f};
    double d = plush_quality_skin_depth(skin, 0, 1, p, 0.05, 0.5, false, dir);
    assert_true(fabs(d - 0.25) < 1e-5);
    assert_true(fabs(dir[2] - 1) < 1e-5 && fabs(dir[0]) < 1e-5 && fabs(dir[1]) < 1e-5);
    /* 0.3 above it: may come 0.3 nearer; dir zero */
    p[2] = 1.3f;
    d = plush_quality_skin_depth(skin, 0, 1, p, 0.05, 0.5, false, dir);
    assert_true(fabs(d + 0.3) < 1e-5 && dir[0] == 0 && dir[1] == 0 && dir[2] == 0);
    /* deeper than reach (0.45 under the top, 0.45 from the bottom, 0.5 from the sides) with reach 0.4: not
     * seen, the answer is -reach */
    p[2] = 0.55f;
    d = plush_quality_skin_depth(skin, 0, 1, p, 0.05, 0.4, false, dir);
    assert_true(fabs(d + 0.4) < 1e-5);
    /* point 0 (inside at rest) is left out */
    assert_true(plush_quality_skin_depth(skin, 0, 0, p, 0.05, 0.4, false, dir) == -INFINITY);
    /* a point found beyond reach is taken to be still until its turn for a full search; with search it is
     * looked for anew (a push moved it) */
    while (plush_quality_skin_turn(skin, 1))
        plush_quality_skin_pose(skin, (const float(*)[3])s.positions, (const float(*)[3])s.normals);
    float away[3] = {0.5f, 0.5f, 3.0f};
    assert_true(fabs(plush_quality_skin_depth(skin, 0, 1, away, 0.05, 0.5, true, dir) + 0.5) < 1e-5);
    p[2] = 0.8f;
    assert_true(fabs(plush_quality_skin_depth(skin, 0, 1, p, 0.05, 0.5, false, dir) + 0.5) < 1e-5);
    d = plush_quality_skin_depth(skin, 0, 1, p, 0.05, 0.5, true, dir);
    assert_true(fabs(d - 0.25) < 1e-5 && fabs(dir[2] - 1) < 1e-5);
    plush_quality_skin_destroy(skin);
}

/* The nearest of triangles abc to p, squared (the test's own, by the regions of the corners, edges and face). */
static double triangle_distance2(const double p[3], const double a[3], const double b[3], const double c[3])
{
    double best = INFINITY;
    /* the face: p projected, when it falls inside */
    double ab[3], ac[3], n[3], ap[3];
    for (int k = 0; k < 3; k++)
        ab[k] = b[k] - a[k], ac[k] = c[k] - a[k], ap[k] = p[k] - a[k];
    n[0] = ab[1] * ac[2] - ab[2] * ac[1];
    n[1] = ab[2] * ac[0] - ab[0] * ac[2];
    n[2] = ab[0] * ac[1] - ab[1] * ac[0];
    double nn = n[0] * n[0] + n[1] * n[1] + n[2] * n[2];
    if (nn > 0) {
        double t = (ap[0] * n[0] + ap[1] * n[1] + ap[2] * n[2]) / nn, q[3], bary[3];
        for (int k = 0; k < 3; k++)
            q[k] = p[k] - t * n[k];
        const double *v[3] = {a, b, c};
        int inside = 1;
        for (int e = 0; e < 3; e++) { /* q on the inner side of each edge */
            const double *u = v[e], *w = v[(e + 1) % 3];
            double ew[3] = {w[0] - u[0], w[1] - u[1], w[2] - u[2]}, uq[3] = {q[0] - u[0], q[1] - u[1], q[2] - u[2]};
            double x[3] = {ew[1] * uq[2] - ew[2] * uq[1], ew[2] * uq[0] - ew[0] * uq[2], ew[0] * uq[1] - ew[1] * uq[0]};
            bary[e] = x[0] * n[0] + x[1] * n[1] + x[2] * n[2];
            inside &= bary[e] >= 0;
        }
        if (inside)
            best = t * t * nn;
    }
    const double *v[3] = {a, b, c};
    for (int e = 0; e < 3; e++) { /* each edge's nearest point, its ends included */
        const double *u = v[e], *w = v[(e + 1) % 3];
        double d[3] = {w[0] - u[0], w[1] - u[1], w[2] - u[2]}, dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        double t = dd > 0 ? ((p[0] - u[0]) * d[0] + (p[1] - u[1]) * d[1] + (p[2] - u[2]) * d[2]) / dd : 0;
        t = t < 0 ? 0 : t > 1 ? 1 : t;
        double e2 = 0;
        for (int k = 0; k < 3; k++)
            e2 += (u[k] + t * d[k] - p[k]) * (u[k] + t * d[k] - p[k]);
        best = e2 < best ? e2 : best;
    }
    return best;
}

/* On a skin of many triangles (a sphere of 1,920, the search's tree many levels deep), every point's distance from
 * the skin as plush_quality_skin_depth finds it is the nearest of all the triangles' (looked at one by one here),
 * in front and behind, and the skin moved and bent keeps it so: the tree's walk misses no triangle. */
static void test_nearest_of_many(void **state)
{
    (void)state;
    enum { RINGS = 24, SECTORS = 40, POINTS_N = 300 };
    size_t nv = (RINGS + 1) * SECTORS + POINTS_N, nt = 0;
    float(*pos)[3] = calloc(nv, sizeof *pos), (*nor)[3] = calloc(nv, sizeof *nor);
    uint32_t(*tri)[3] = calloc(2 * RINGS * SECTORS, sizeof *tri), *pts = calloc(POINTS_N, sizeof *pts);
    assert_non_null(pos);
    assert_non_null(nor);
    assert_non_null(tri);
    assert_non_null(pts);
    for (int r = 0; r <= RINGS; r++)
        for (int q = 0; q < SECTORS; q++) {
            double th = M_PI * (0.02 + 0.96 * r / RINGS), ph = 2 * M_PI * q / SECTORS; /* the poles left open */
            float *v = pos[r * SECTORS + q], *n = nor[r * SECTORS + q];
            n[0] = (float)(sin(th) * cos(ph)), n[1] = (float)(cos(th)), n[2] = (float)(sin(th) * sin(ph));
            for (int k = 0; k < 3; k++)
                v[k] = n[k];
        }
    for (int r = 0; r < RINGS; r++)
        for (int q = 0; q < SECTORS; q++) {
            uint32_t a = (uint32_t)(r * SECTORS + q), b = (uint32_t)(r * SECTORS + (q + 1) % SECTORS);
            uint32_t c = a + SECTORS, d = b + SECTORS;
            uint32_t t1[3] = {a, b, c}, t2[3] = {b, d, c};
            memcpy(tri[nt++], t1, sizeof t1);
            memcpy(tri[nt++], t2, sizeof t2);
        }
    size_t first = (RINGS + 1) * SECTORS;
    for (size_t i = 0; i < POINTS_N; i++) { /* measured: far from the skin at rest */
        pts[i] = (uint32_t)(first + i);
        pos[first + i][0] = 10.0f + (float)i;
    }
    plush_quality_skin *skin = NULL;
    plush_diag d = pmx_fx_diag();
    pmx_fx_ok(plush_quality_skin_create((const float(*)[3])pos, (const float(*)[3])nor, nv, (const uint32_t(*)[3])tri, nt, pts,
                                        POINTS_N, 0.8, &skin, &d),
              &d);
    assert_int_equal(plush_quality_skin_measured(skin, 1), POINTS_N);
    unsigned seed = 12345;
    for (int pose = 0; pose < 3; pose++) {
        /* the skin stretched along y and bent over (pose 1 and 2), its normals left as they were */
        float(*now)[3] = calloc(nv, sizeof *now);
        assert_non_null(now);
        for (size_t v = 0; v < first; v++) {
            now[v][0] = pos[v][0] + (float)(0.3 * pose * pos[v][1] * pos[v][1]);
            now[v][1] = pos[v][1] * (float)(1 + 0.25 * pose);
            now[v][2] = pos[v][2];
        }
        plush_quality_skin_pose(skin, (const float(*)[3])now, (const float(*)[3])nor);
        size_t behind = 0;
        for (size_t i = 0; i < POINTS_N; i++) {
            double p[3];
            for (int k = 0; k < 3; k++) {
                seed = seed * 1103515245u + 12345u;
                p[k] = 2.2 * ((seed >> 8) / 16777216.0) - 1.1;
            }
            float pf[3] = {(float)p[0], (float)p[1], (float)p[2]}, dir[3];
            for (int k = 0; k < 3; k++) /* the point as the search sees it, in float */
                p[k] = pf[k];
            double best = INFINITY;
            for (size_t t = 0; t < nt; t++) {
                double a[3], b[3], c[3];
                for (int k = 0; k < 3; k++)
                    a[k] = now[tri[t][0]][k], b[k] = now[tri[t][1]][k], c[k] = now[tri[t][2]][k];
                double e2 = triangle_distance2(p, a, b, c);
                best = e2 < best ? e2 : best;
            }
            /* each slot's first look searches; after that a point searches only at its turn */
            if (pose == 2 && !plush_quality_skin_turn(skin, i))
                continue;
            double got = plush_quality_skin_depth(skin, pose % 2, i, pf, 0, 0.8, false, dir);
            double want = sqrt(best);
            if (want >= 0.8) {
                assert_true(fabs(got + 0.8) < 1e-6); /* beyond reach: -reach */
                continue;
            }
            behind += got > 0;
            if (fabs(fabs(got) - want) > 1e-5)
                fail_msg("pose %d point %zu: %.7f from the skin, the nearest triangle %.7f", pose, i, fabs(got), want);
        }
        if (pose < 2)
            assert_true(behind > 20 && behind < POINTS_N - 20); /* both sides seen */
        free(now);
    }
    plush_quality_skin_destroy(skin);
    free(pos), free(nor), free(tri), free(pts);
}

/* A sheet the model draws from both sides (the same corners twice, facing opposite ways, as MMD models draw a
 * cloth or a ribbon seen from behind) has no inside: a point near it, on either side, is in front of it, whichever
 * of the two coincident faces the search finds first. Drawn from one side only, the point under it is behind. */
static void test_two_sided_sheet(void **state)
{
    (void)state;
    /* corners 0-3 face up, 4-7 the same places facing down; points 8 (above) and 9 (below), measured far away */
    float pos[10][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {5, 5, 5}, {6, 6, 6}};
    float nor[10][3] = {{0, 0, 1}, {0, 0, 1}, {0, 0, 1}, {0, 0, 1}, {0, 0, -1}, {0, 0, -1}, {0, 0, -1}, {0, 0, -1}, {0, 0, 1}, {0, 0, 1}};
    const uint32_t tri[4][3] = {{0, 1, 2}, {0, 2, 3}, {4, 6, 5}, {4, 7, 6}};
    const uint32_t pts[2] = {8, 9};
    for (int sides = 1; sides <= 2; sides++) {
        plush_quality_skin *skin = NULL;
        plush_diag d = pmx_fx_diag();
        pmx_fx_ok(plush_quality_skin_create((const float(*)[3])pos, (const float(*)[3])nor, 10, tri, 2 * (size_t)sides, pts, 2, 1.0,
                                            &skin, &d),
                  &d);
        float at[10][3];
        memcpy(at, pos, sizeof at);
        const float above[3] = {0.4f, 0.6f, 0.1f}, below[3] = {0.6f, 0.3f, -0.1f};
        memcpy(at[8], above, sizeof above);
        memcpy(at[9], below, sizeof below);
        plush_quality_skin_pose(skin, (const float(*)[3])pos, (const float(*)[3])nor);
        double deepest = 0;
        size_t behind = plush_quality_skin_behind(skin, 0, (const float(*)[3])at, 1, NULL, &deepest);
        assert_int_equal(behind, sides == 1 ? 1 : 0);
        float dir[3];
        double depth = plush_quality_skin_depth(skin, 1, 1, below, 0.05, 0.5, false, dir);
        if (sides == 1)
            assert_true(fabs(depth - 0.15) < 1e-5 && fabs(dir[2] - 1) < 1e-5);
        else
            assert_true(fabs(depth + 0.1) < 1e-5); /* in front, 0.1 from it */
        plush_quality_skin_destroy(skin);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rest_reads_zero),
        cmocka_unit_test(test_points_and_skin_move),
        cmocka_unit_test(test_ranges_add_up),
        cmocka_unit_test(test_depth_bound),
        cmocka_unit_test(test_depth),
        cmocka_unit_test(test_nearest_of_many),
        cmocka_unit_test(test_two_sided_sheet),
        cmocka_unit_test(test_side_from_the_surface),
        cmocka_unit_test(test_covered_points),
        cmocka_unit_test(test_open_skin_and_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
