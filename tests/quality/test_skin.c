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
 * point left out at rest is never pushed; beyond reach nothing is seen. */
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
    double d = plush_quality_skin_depth(skin, 0, 1, p, 0.05, 0.5, dir);
    assert_true(fabs(d - 0.25) < 1e-5);
    assert_true(fabs(dir[2] - 1) < 1e-5 && fabs(dir[0]) < 1e-5 && fabs(dir[1]) < 1e-5);
    /* 0.3 above it: may come 0.3 nearer; dir zero */
    p[2] = 1.3f;
    d = plush_quality_skin_depth(skin, 0, 1, p, 0.05, 0.5, dir);
    assert_true(fabs(d + 0.3) < 1e-5 && dir[0] == 0 && dir[1] == 0 && dir[2] == 0);
    /* deeper than reach (0.45 under the top, 0.45 from the bottom, 0.5 from the sides) with reach 0.4: not
     * seen, the answer is -reach */
    p[2] = 0.55f;
    d = plush_quality_skin_depth(skin, 0, 1, p, 0.05, 0.4, dir);
    assert_true(fabs(d + 0.4) < 1e-5);
    /* point 0 (inside at rest) is left out */
    assert_true(plush_quality_skin_depth(skin, 0, 0, p, 0.05, 0.4, dir) == -INFINITY);
    plush_quality_skin_destroy(skin);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rest_reads_zero),
        cmocka_unit_test(test_points_and_skin_move),
        cmocka_unit_test(test_ranges_add_up),
        cmocka_unit_test(test_depth_bound),
        cmocka_unit_test(test_depth),
        cmocka_unit_test(test_side_from_the_surface),
        cmocka_unit_test(test_open_skin_and_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
