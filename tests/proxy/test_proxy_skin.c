/* Proxy frames and skinning: the frame definition on a hand example, rigid motions reproduced by linear
 * and dual-quaternion blending, scales and stretches reproduced by stretch-aware frames, degenerate
 * triangles, the hand-over to bone skinning, both kernel sets and input validation. Most bindings are
 * built here by hand (random triangles and weights, 1 to 4 influences); one test uses plush_proxy_bind. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/proxy.h"
#include "plush/sys/core.h"
#include "plush/sys/proxy.h"
#include "proxy/skin_internal.h"
#include "support/skin_fixture.h"

#include <math.h>
#include <string.h>

/* ---- frames ------------------------------------------------------------------------------------ */

static void expect_frame(const float m[16], const float x[3], const float y[3], const float z[3], const float c[3])
{
    for (int k = 0; k < 3; k++) {
        assert_float_equal(m[k], x[k], 1e-6);
        assert_float_equal(m[4 + k], y[k], 1e-6);
        assert_float_equal(m[8 + k], z[k], 1e-6);
        assert_float_equal(m[12 + k], c[k], 1e-6);
    }
    assert_true(m[3] == 0 && m[7] == 0 && m[11] == 0 && m[15] == 1);
}

static void test_frame_hand_example(void **state)
{
    (void)state;
    /* Centroid (1, 2, 3); p0 - c = (2, 0, 0); e1 x e2 = (-3, 1, 0) x (-3, -1, 0) = (0, 0, 6). */
    const float p0[3] = {3, 2, 3}, p1[3] = {0, 3, 3}, p2[3] = {0, 1, 3};
    float m[16];
    assert_true(plush_proxy_triangle_frame(p0, p1, p2, m));
    expect_frame(m, (const float[3]){0, -1, 0}, (const float[3]){1, 0, 0}, (const float[3]){0, 0, 1},
                 (const float[3]){1, 2, 3});
    /* The other winding flips Z, and X = Y x Z follows it. */
    assert_true(plush_proxy_triangle_frame(p0, p2, p1, m));
    expect_frame(m, (const float[3]){0, 1, 0}, (const float[3]){1, 0, 0}, (const float[3]){0, 0, -1},
                 (const float[3]){1, 2, 3});
}

static void test_frame_degenerate(void **state)
{
    (void)state;
    float m[16], before[16];
    for (int k = 0; k < 16; k++)
        m[k] = before[k] = (float)k;
    const float a[3] = {0, 0, 0}, b[3] = {1, 1, 1}, c[3] = {2, 2, 2}, far[3] = {5, -1, 2};
    const float nan[3] = {NAN, 0, 0}, inf[3] = {INFINITY, 0, 0};
    assert_false(plush_proxy_triangle_frame(a, b, c, m));       /* collinear */
    assert_false(plush_proxy_triangle_frame(b, a, c, m));       /* p0 is the centroid */
    assert_false(plush_proxy_triangle_frame(a, a, far, m));     /* two points equal */
    assert_false(plush_proxy_triangle_frame(a, a, a, m));
    assert_false(plush_proxy_triangle_frame(nan, b, far, m));
    assert_false(plush_proxy_triangle_frame(a, inf, far, m));
    assert_memory_equal(m, before, sizeof m);
}

/* S_i = F_i(t) F_i(0)^-1, checked against frames built through the public function. */
static void test_matrix_is_frame_product(void **state)
{
    (void)state;
    skin_fx f;
    skin_fx_soup(&f, 12, 10, 8);
    plush_proxy_skin *skin = skin_fx_skin(&f, PLUSH_PROXY_BLEND_LINEAR, false);
    const float *m = plush_proxy_skin_matrix(skin, 3);
    assert_non_null(m);
    for (int k = 0; k < 16; k++)
        assert_true(m[k] == (k % 5 == 0 ? 1.0f : 0.0f)); /* identity until the first update */
    assert_null(plush_proxy_skin_matrix(skin, 10));
    for (size_t i = 0; i < f.node_count; i++)
        for (int k = 0; k < 3; k++)
            f.moved[i][k] = f.nodes[i][k] + (float)skin_fx_rnd(-0.3, 0.3);
    plush_proxy_skin_update(skin, (const float(*)[3])f.moved);
    for (size_t i = 0; i < f.tri_count; i++) {
        float r[16], n[16];
        const uint32_t *t = f.tris[i];
        assert_true(plush_proxy_triangle_frame(f.nodes[t[0]], f.nodes[t[1]], f.nodes[t[2]], r));
        assert_true(plush_proxy_triangle_frame(f.moved[t[0]], f.moved[t[1]], f.moved[t[2]], n));
        m = plush_proxy_skin_matrix(skin, i);
        /* Rigid frame inverse: [R^T | -R^T c]. */
        for (int row = 0; row < 3; row++) {
            for (int col = 0; col < 4; col++) {
                double want = 0;
                for (int k = 0; k < 3; k++) {
                    double inv = col < 3 ? r[4 * k + col]
                                         : -(r[4 * k] * r[12] + r[4 * k + 1] * r[13] + r[4 * k + 2] * r[14]);
                    want += n[4 * k + row] * inv;
                }
                if (col == 3)
                    want += n[12 + row];
                assert_float_equal(m[4 * col + row], want, 1e-5);
            }
            assert_true(m[4 * row + 3] == 0);
        }
        assert_true(m[15] == 1);
    }
    plush_proxy_skin_destroy(skin);
    plush_arena_free(&f.arena);
}

/* ---- rigid and stretched motions --------------------------------------------------------------- */

/* Rotations and translations of the proxy, times scale: every vertex and normal follows exactly. */
static void similar_motions(skin_fx *f, plush_proxy_blend blend, bool stretch, const double *scales, int rounds)
{
    plush_proxy_skin *skin = skin_fx_skin(f, blend, stretch);
    for (int round = 0; round < rounds; round++) {
        skin_fx_affine a = {.b = {skin_fx_rnd(-3, 3), skin_fx_rnd(-3, 3), skin_fx_rnd(-3, 3)}};
        skin_fx_random_rotation(a.m);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                a.m[i][j] *= scales ? scales[round] : 1.0;
        skin_fx_move(f, skin, &a);
        skin_fx_expect(f, &a);
    }
    plush_proxy_skin_destroy(skin);
}

/* Every way the skin blends: linear, dual quaternions, stretch-aware (linear). */
static const struct { plush_proxy_blend blend; bool stretch; } blends[] = {
    {PLUSH_PROXY_BLEND_LINEAR, false}, {PLUSH_PROXY_BLEND_DUAL_QUATERNION, false}, {PLUSH_PROXY_BLEND_LINEAR, true}};

static void test_rigid(void **state)
{
    (void)state;
    for (int m = 0; m < 3; m++) {
        skin_fx f;
        skin_fx_soup(&f, 40, 50, 3000);
        similar_motions(&f, blends[m].blend, blends[m].stretch, NULL, 5);
        plush_arena_free(&f.arena);
    }
}

/* Uniform scale (with a rotation and translation): every vertex anywhere, every normal. */
static void test_stretch_uniform_scale(void **state)
{
    (void)state;
    skin_fx f;
    skin_fx_soup(&f, 40, 50, 3000);
    const double scales[] = {2.5, 0.4, 1.0 / 3.0};
    similar_motions(&f, PLUSH_PROXY_BLEND_LINEAR, true, scales, 3);
    plush_arena_free(&f.arena);
}

/* Any skin_fx_affine map moves points of the plane exactly; their normals are checked along the plane's
 * normal, the one direction the gradient and the map agree on for normals. */
static void test_stretch_affine_on_plane(void **state)
{
    (void)state;
    skin_fx f;
    double u[3], v[3], w[3];
    skin_fx_sheet(&f, true, u, v, w);
    for (size_t p = 0; p < f.count; p++)
        for (int k = 0; k < 3; k++)
            f.normals[p][k] = (float)(w[k] * (p % 2 ? 1 : -2));
    plush_proxy_skin *skin = skin_fx_skin(&f, PLUSH_PROXY_BLEND_LINEAR, true);
    for (int round = 0; round < 5; round++) {
        skin_fx_affine a = {.b = {skin_fx_rnd(-3, 3), skin_fx_rnd(-3, 3), skin_fx_rnd(-3, 3)}};
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                a.m[i][j] = (i == j) + skin_fx_rnd(-0.6, 0.6);
        skin_fx_move(&f, skin, &a);
        skin_fx_expect(&f, &a);
    }
    plush_proxy_skin_destroy(skin);
    plush_arena_free(&f.arena);
}

/* Off the plane, the gradient scales the normal direction by sqrt(area ratio):
 * a stretch that does the same, M = Q [B 0; 0 sqrt(det B)] in the plane's axes, is exact everywhere. */
static void test_stretch_affine_everywhere(void **state)
{
    (void)state;
    skin_fx f;
    double u[3], v[3], w[3];
    skin_fx_sheet(&f, false, u, v, w);
    plush_proxy_skin *skin = skin_fx_skin(&f, PLUSH_PROXY_BLEND_LINEAR, true);
    for (int round = 0; round < 5; round++) {
        double bm[2][2] = {{skin_fx_rnd(0.4, 2.5), skin_fx_rnd(-0.8, 0.8)}, {skin_fx_rnd(-0.8, 0.8), skin_fx_rnd(0.4, 2.5)}};
        double det = bm[0][0] * bm[1][1] - bm[0][1] * bm[1][0];
        if (det <= 0.1)
            bm[0][1] = 0, bm[1][0] = 0, det = bm[0][0] * bm[1][1];
        double q[3][3];
        skin_fx_affine a = {.b = {skin_fx_rnd(-3, 3), skin_fx_rnd(-3, 3), skin_fx_rnd(-3, 3)}};
        skin_fx_random_rotation(q);
        /* Image of each plane axis, then m = Q [image of u, v, w] [u v w]^T. */
        double img[3][3];
        for (int k = 0; k < 3; k++) {
            img[0][k] = bm[0][0] * u[k] + bm[1][0] * v[k];
            img[1][k] = bm[0][1] * u[k] + bm[1][1] * v[k];
            img[2][k] = sqrt(det) * w[k];
        }
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) {
                for (int k = 0; k < 3; k++)
                    a.m[r][c] += q[r][k] * (img[0][k] * u[c] + img[1][k] * v[c] + img[2][k] * w[c]);
            }
        skin_fx_move(&f, skin, &a);
        skin_fx_expect(&f, &a);
    }
    plush_proxy_skin_destroy(skin);
    plush_arena_free(&f.arena);
}

/* Two influences rotated by +170 and -170 degrees about z: aligned dual quaternions blend the short way
 * (180 degrees, length kept); the linear blend shrinks the vertex towards the axis. */
static void test_dual_quaternion_sign_alignment(void **state)
{
    (void)state;
    skin_fx f;
    skin_fx_alloc(&f, 6, 2, 1);
    const float nodes[6][3] = {{0, 1, 0}, {-1, -1, 0}, {1, -1, 0}, {0, 1, 2}, {-1, -1, 2}, {1, -1, 2}};
    memcpy(f.nodes, nodes, sizeof nodes);
    const uint32_t tris[2][3] = {{0, 1, 2}, {3, 4, 5}};
    memcpy(f.tris, tris, sizeof tris);
    f.points[0][0] = 1, f.points[0][1] = 0, f.points[0][2] = 1;
    f.normals[0][0] = 1;
    f.binding.triangles[0][0] = 0, f.binding.triangles[0][1] = 1;
    f.binding.triangles[0][2] = f.binding.triangles[0][3] = -1;
    f.binding.weights[0][0] = f.binding.weights[0][1] = 0.5f;
    f.binding.proxy_share[0] = 1;
    plush_proxy_skin *dq = skin_fx_skin(&f, PLUSH_PROXY_BLEND_DUAL_QUATERNION, false);
    plush_proxy_skin *lin = skin_fx_skin(&f, PLUSH_PROXY_BLEND_LINEAR, false);
    double up[3] = {0, 0, 1}, turn[2][3][3];
    skin_fx_rotation(up, 170 * M_PI / 180, turn[0]);
    skin_fx_rotation(up, -170 * M_PI / 180, turn[1]);
    for (int i = 0; i < 6; i++)
        for (int r = 0; r < 3; r++) {
            double(*m)[3] = turn[i / 3];
            f.moved[i][r] = (float)(m[r][0] * nodes[i][0] + m[r][1] * nodes[i][1] + m[r][2] * nodes[i][2]);
        }
    plush_proxy_skin_update(dq, (const float(*)[3])f.moved);
    plush_proxy_skin_update(lin, (const float(*)[3])f.moved);
    float p[1][3], n[1][3];
    plush_proxy_skin_apply(dq, p, n);
    assert_float_equal(p[0][0], -1, 1e-5);
    assert_float_equal(p[0][1], 0, 1e-5);
    assert_float_equal(p[0][2], 1, 1e-5);
    assert_float_equal(n[0][0], -1, 1e-5);
    plush_proxy_skin_apply(lin, p, n);
    assert_float_equal(p[0][0], cos(170 * M_PI / 180), 1e-5);
    assert_float_equal(n[0][0], -1, 1e-5); /* renormalised */
    plush_proxy_skin_destroy(dq);
    plush_proxy_skin_destroy(lin);
    plush_arena_free(&f.arena);
}

/* plush_proxy_skin_translate: one offset for every triangle moves every vertex by it, in every blend (a rigid
 * motion followed by the offset); offsets per triangle move a vertex, blended linearly, by sum w_i offset_i;
 * the matrices say so, and the next update forgets them. */
static void test_translate(void **state)
{
    (void)state;
    for (int m = 0; m < 3; m++) {
        skin_fx f;
        skin_fx_soup(&f, 40, 50, 3000);
        plush_proxy_skin *skin = skin_fx_skin(&f, blends[m].blend, blends[m].stretch);
        skin_fx_affine a = {.b = {0.5, -1, 2}};
        skin_fx_random_rotation(a.m);
        skin_fx_move(&f, skin, &a);
        float(*same)[3] = skin_fx_array(&f.arena, f.tri_count, sizeof *same);
        for (size_t t = 0; t < f.tri_count; t++)
            same[t][0] = 0.25f, same[t][1] = -0.5f, same[t][2] = 0.125f;
        plush_proxy_skin_translate(skin, (const float(*)[3])same);
        plush_proxy_skin_apply(skin, f.out_p, f.out_n);
        skin_fx_affine moved = a;
        moved.b[0] += 0.25, moved.b[1] -= 0.5, moved.b[2] += 0.125;
        skin_fx_expect(&f, &moved);
        /* the next update starts from the cage again */
        skin_fx_move(&f, skin, &a);
        skin_fx_expect(&f, &a);
        plush_proxy_skin_destroy(skin);
        plush_arena_free(&f.arena);
    }

    skin_fx f;
    skin_fx_soup(&f, 40, 50, 3000);
    plush_proxy_skin *skin = skin_fx_skin(&f, PLUSH_PROXY_BLEND_LINEAR, false);
    skin_fx_affine a = {.b = {1, 2, 3}};
    skin_fx_random_rotation(a.m);
    skin_fx_move(&f, skin, &a);
    float(*before)[3] = skin_fx_array(&f.arena, f.count, sizeof *before);
    memcpy(before, f.out_p, f.count * sizeof *before);
    float(*offsets)[3] = skin_fx_array(&f.arena, f.tri_count, sizeof *offsets);
    for (size_t t = 0; t < f.tri_count; t++)
        for (int k = 0; k < 3; k++)
            offsets[t][k] = (float)skin_fx_rnd(-1, 1);
    offsets[3][0] = NAN; /* ignored */
    float was[16], four[16];
    memcpy(was, plush_proxy_skin_matrix(skin, 3), sizeof was);
    memcpy(four, plush_proxy_skin_matrix(skin, 4), sizeof four);
    plush_proxy_skin_translate(skin, (const float(*)[3])offsets);
    assert_memory_equal(was, plush_proxy_skin_matrix(skin, 3), sizeof was);
    for (int k = 0; k < 3; k++)
        assert_float_equal(plush_proxy_skin_matrix(skin, 4)[12 + k], four[12 + k] + offsets[4][k], 1e-6);
    plush_proxy_skin_apply(skin, f.out_p, f.out_n);
    for (size_t v = 0; v < f.count; v++) {
        double want[3] = {before[v][0], before[v][1], before[v][2]};
        for (int j = 0; j < PLUSH_PROXY_INFLUENCES; j++) {
            int32_t t = f.binding.triangles[v][j];
            if (t < 0 || t == 3)
                continue;
            for (int k = 0; k < 3; k++)
                want[k] += f.binding.weights[v][j] * offsets[t][k];
        }
        for (int k = 0; k < 3; k++)
            assert_float_equal(f.out_p[v][k], want[k], 1e-4);
    }
    plush_proxy_skin_destroy(skin);
    plush_arena_free(&f.arena);
}

/* Bindings made by plush_proxy_bind, default mode (with a hand-over band) and seed mode. */
static void test_with_bind(void **state)
{
    (void)state;
    for (int mode = 0; mode < 3; mode++) {
        skin_fx f;
        skin_fx_soup(&f, 40, 50, 2000);
        plush_proxy_bind_options opt = {.seed = mode == 2, .search = PLUSH_PROXY_SEARCH_BRUTE,
                                        .max_distance = mode == 1 ? 0.6f : 0, .handover = mode == 1 ? 0.3f : 0};
        plush_proxy_binding *bound = NULL;
        assert_int_equal(plush_proxy_bind(&f.mesh, (const float(*)[3])f.points, f.count, &opt, &bound, NULL),
                         PLUSH_OK);
        f.binding = *bound;
        size_t between = 0;
        for (size_t v = 0; v < f.count; v++)
            between += bound->proxy_share[v] > 0 && bound->proxy_share[v] < 1;
        assert_true(mode == 1 ? between > 50 : between == 0);
        similar_motions(&f, mode == 2 ? PLUSH_PROXY_BLEND_LINEAR : PLUSH_PROXY_BLEND_DUAL_QUATERNION, false, NULL, 2);
        plush_proxy_binding_free(bound);
        plush_arena_free(&f.arena);
    }
}

/* ---- degenerate triangles ---------------------------------------------------------------------- */

static void test_degenerate_keeps_last_matrix(void **state)
{
    (void)state;
    skin_fx f;
    skin_fx_soup(&f, 12, 10, 50);
    plush_proxy_skin *skin = skin_fx_skin(&f, PLUSH_PROXY_BLEND_DUAL_QUATERNION, false);
    skin_fx_affine a = {.b = {1, 2, 3}};
    skin_fx_random_rotation(a.m);
    skin_fx_move(&f, skin, &a);
    float kept[16];
    memcpy(kept, plush_proxy_skin_matrix(skin, 0), sizeof kept);
    /* Collapse triangle 0 onto a line, and move everything else on. */
    double r[3][3];
    skin_fx_random_rotation(r);
    for (size_t i = 0; i < f.node_count; i++)
        for (int k = 0; k < 3; k++)
            f.moved[i][k] = (float)(r[k][0] * f.nodes[i][0] + r[k][1] * f.nodes[i][1] + r[k][2] * f.nodes[i][2]);
    const uint32_t *t = f.tris[0];
    for (int k = 0; k < 3; k++)
        f.moved[t[2]][k] = 2 * f.moved[t[1]][k] - f.moved[t[0]][k];
    plush_proxy_skin_update(skin, (const float(*)[3])f.moved);
    assert_memory_equal(plush_proxy_skin_matrix(skin, 0), kept, sizeof kept);
    /* Triangles that share no node with triangle 0 have moved on. */
    for (size_t i = 1; i < f.tri_count; i++) {
        bool shares = false;
        for (int j = 0; j < 3; j++)
            for (int c = 0; c < 3; c++)
                shares |= f.tris[i][j] == t[c];
        if (!shares)
            assert_memory_not_equal(plush_proxy_skin_matrix(skin, i), kept, sizeof kept);
    }
    /* Vertices bound only to triangle 0 follow its kept matrix. */
    f.binding.triangles[0][0] = 0;
    f.binding.triangles[0][1] = f.binding.triangles[0][2] = f.binding.triangles[0][3] = -1;
    f.binding.weights[0][0] = 1;
    f.binding.weights[0][1] = f.binding.weights[0][2] = f.binding.weights[0][3] = 0;
    plush_proxy_skin_apply(skin, f.out_p, f.out_n);
    for (int k = 0; k < 3; k++)
        assert_float_equal(f.out_p[0][k], kept[k] * f.points[0][0] + kept[4 + k] * f.points[0][1] +
                                              kept[8 + k] * f.points[0][2] + kept[12 + k], 1e-5);
    /* A NaN node is no frame either. */
    f.moved[t[0]][0] = NAN;
    plush_proxy_skin_update(skin, (const float(*)[3])f.moved);
    assert_memory_equal(plush_proxy_skin_matrix(skin, 0), kept, sizeof kept);
    plush_proxy_skin_destroy(skin);
    plush_arena_free(&f.arena);
}

static void test_degenerate_at_rest(void **state)
{
    (void)state;
    skin_fx f;
    skin_fx_soup(&f, 12, 10, 50);
    const uint32_t *t = f.tris[4];
    for (int k = 0; k < 3; k++)
        f.nodes[t[2]][k] = f.nodes[t[0]][k];
    plush_proxy_skin *skin = NULL;
    plush_diag diag = {0};
    assert_int_equal(plush_proxy_skin_create(&f.mesh, &f.binding, (const float(*)[3])f.points, NULL, NULL,
                                             &skin, &diag),
                     PLUSH_OK);
    assert_true(diag.warning_count >= 1);
    assert_int_equal(diag.status, PLUSH_OK);
    for (size_t i = 0; i < f.node_count; i++)
        for (int k = 0; k < 3; k++)
            f.moved[i][k] = f.nodes[i][k] * 2 + 1;
    plush_proxy_skin_update(skin, (const float(*)[3])f.moved);
    const float *m = plush_proxy_skin_matrix(skin, 4);
    for (int k = 0; k < 16; k++)
        assert_true(m[k] == (k % 5 == 0 ? 1.0f : 0.0f));
    /* No rest normals: positions are skinned, normals left alone. */
    for (size_t v = 0; v < f.count; v++)
        f.out_n[v][0] = f.out_n[v][1] = f.out_n[v][2] = 7;
    plush_proxy_skin_apply(skin, f.out_p, f.out_n);
    for (size_t v = 0; v < f.count; v++)
        assert_true(f.out_n[v][0] == 7 && f.out_n[v][1] == 7 && f.out_n[v][2] == 7);
    plush_proxy_skin_destroy(skin);
    plush_arena_free(&f.arena);
}

/* ---- hand-over to bone skinning ---------------------------------------------------------------- */

static void test_proxy_share(void **state)
{
    (void)state;
    skin_fx f;
    skin_fx_soup(&f, 20, 16, 300);
    const float shares[3] = {0, 0.5f, 1};
    for (size_t v = 0; v < f.count; v++)
        f.binding.proxy_share[v] = shares[v % 3];
    plush_proxy_skin *skin = skin_fx_skin(&f, PLUSH_PROXY_BLEND_LINEAR, false);
    skin_fx_affine a = {.b = {0.5, -1, 2}};
    skin_fx_random_rotation(a.m);
    /* The full proxy result first: share 1 everywhere. */
    float *saved = f.binding.proxy_share;
    f.binding.proxy_share = NULL; /* no hand-over at all counts as 1 everywhere */
    skin_fx_move(&f, skin, &a);
    f.binding.proxy_share = saved;
    float (*proxy_p)[3] = skin_fx_array(&f.arena, f.count, sizeof *proxy_p);
    float (*proxy_n)[3] = skin_fx_array(&f.arena, f.count, sizeof *proxy_n);
    memcpy(proxy_p, f.out_p, f.count * sizeof *proxy_p);
    memcpy(proxy_n, f.out_n, f.count * sizeof *proxy_n);
    /* Bone-skinned inputs: something else, with share-1 vertices holding NaN (never read). */
    for (size_t v = 0; v < f.count; v++) {
        double n[3] = {skin_fx_rnd(-1, 1), skin_fx_rnd(-1, 1), 0.5};
        for (int k = 0; k < 3; k++) {
            f.out_p[v][k] = v % 3 == 2 ? NAN : (float)skin_fx_rnd(-3, 3);
            f.out_n[v][k] = v % 3 == 2 ? NAN : (float)n[k];
        }
    }
    float (*in_p)[3] = skin_fx_array(&f.arena, f.count, sizeof *in_p);
    float (*in_n)[3] = skin_fx_array(&f.arena, f.count, sizeof *in_n);
    memcpy(in_p, f.out_p, f.count * sizeof *in_p);
    memcpy(in_n, f.out_n, f.count * sizeof *in_n);
    plush_proxy_skin_apply(skin, f.out_p, f.out_n);
    for (size_t v = 0; v < f.count; v++) {
        if (v % 3 == 0) {
            assert_memory_equal(f.out_p[v], in_p[v], sizeof in_p[v]); /* untouched, not even renormalised */
            assert_memory_equal(f.out_n[v], in_n[v], sizeof in_n[v]);
            continue;
        }
        if (v % 3 == 2) {
            assert_memory_equal(f.out_p[v], proxy_p[v], sizeof proxy_p[v]);
            assert_memory_equal(f.out_n[v], proxy_n[v], sizeof proxy_n[v]);
            continue;
        }
        double n[3], len = 0;
        for (int k = 0; k < 3; k++) {
            assert_float_equal(f.out_p[v][k], 0.5 * proxy_p[v][k] + 0.5 * in_p[v][k], 1e-5);
            n[k] = 0.5 * proxy_n[v][k] + 0.5 * in_n[v][k];
            len += n[k] * n[k];
        }
        for (int k = 0; k < 3; k++)
            assert_float_equal(f.out_n[v][k], n[k] / sqrt(len), 1e-5);
    }
    plush_proxy_skin_destroy(skin);
    plush_arena_free(&f.arena);
}

/* The kernels this CPU runs (AVX2 here) and the portable ones give the same numbers, in every mode,
 * on a motion that is neither rigid nor skin_fx_affine, with hand-over shares in between. */
static void test_portable_kernels_match(void **state)
{
    (void)state;
    const plush_proxy_skin_options modes[] = {
        {.blend = PLUSH_PROXY_BLEND_LINEAR}, {.blend = PLUSH_PROXY_BLEND_DUAL_QUATERNION}, {.stretch = true}};
    for (size_t m = 0; m < 3; m++) {
        skin_fx f;
        skin_fx_soup(&f, 40, 50, 2000);
        for (size_t v = 0; v < f.count; v++)
            f.binding.proxy_share[v] = v % 5 == 0 ? (float)skin_fx_rnd(0, 1) : 1.0f;
        plush_proxy_skin *skin = NULL;
        assert_int_equal(plush_proxy_skin_create(&f.mesh, &f.binding, (const float(*)[3])f.points,
                                                 (const float(*)[3])f.normals, &modes[m], &skin, NULL),
                         PLUSH_OK);
        for (size_t i = 0; i < f.node_count; i++)
            for (int k = 0; k < 3; k++)
                f.moved[i][k] = f.nodes[i][k] * 1.3f + (float)skin_fx_rnd(-0.4, 0.4);
        plush_proxy_skin_update(skin, (const float(*)[3])f.moved);
        float(*p)[3] = skin_fx_array(&f.arena, f.count, sizeof *p);
        float(*n)[3] = skin_fx_array(&f.arena, f.count, sizeof *n);
        for (size_t v = 0; v < f.count; v++)
            for (int k = 0; k < 3; k++) {
                p[v][k] = f.out_p[v][k] = (float)skin_fx_rnd(-1, 1);
                n[v][k] = f.out_n[v][k] = (float)skin_fx_rnd(-1, 1);
            }
        plush_proxy_skin_apply(skin, f.out_p, f.out_n);
        plush__proxy_skin_apply_portable(skin, p, n);
        for (size_t v = 0; v < f.count; v++)
            for (int k = 0; k < 3; k++) {
                assert_true(p[v][k] == f.out_p[v][k]);
                assert_true(n[v][k] == f.out_n[v][k]);
            }
        plush_proxy_skin_destroy(skin);
        plush_arena_free(&f.arena);
    }
}

/* ---- set-up errors ----------------------------------------------------------------------------- */

static plush_status try_create(skin_fx *f, const plush_proxy_skin_options *opt)
{
    plush_proxy_skin *skin = (plush_proxy_skin *)&skin;
    plush_diag diag = {0};
    plush_status st = plush_proxy_skin_create(&f->mesh, &f->binding, (const float(*)[3])f->points,
                                              (const float(*)[3])f->normals, opt, &skin, &diag);
    assert_int_equal(diag.status, st);
    if (st != PLUSH_OK)
        assert_null(skin);
    plush_proxy_skin_destroy(skin);
    return st;
}

static void test_create_errors(void **state)
{
    (void)state;
    skin_fx f;
    skin_fx_soup(&f, 12, 10, 50);
    assert_int_equal(try_create(&f, NULL), PLUSH_OK);
    plush_proxy_skin_options opt = {.blend = 7};
    assert_int_equal(try_create(&f, &opt), PLUSH_E_ARGUMENT);
    opt = (plush_proxy_skin_options){.blend = PLUSH_PROXY_BLEND_DUAL_QUATERNION, .stretch = true};
    assert_int_equal(try_create(&f, &opt), PLUSH_E_CONFLICT);
    f.binding.triangle_count = 9;
    assert_int_equal(try_create(&f, NULL), PLUSH_E_ARGUMENT);
    f.binding.triangle_count = 10;
    f.binding.triangles[17][2] = 10;
    assert_int_equal(try_create(&f, NULL), PLUSH_E_RANGE);
    f.binding.triangles[17][2] = -2;
    assert_int_equal(try_create(&f, NULL), PLUSH_E_RANGE);
    f.binding.triangles[17][2] = -1;
    f.tris[3][1] = 12;
    assert_int_equal(try_create(&f, NULL), PLUSH_E_RANGE);
    f.tris[3][1] = 11;
    plush_proxy_skin *skin = NULL;
    assert_int_equal(plush_proxy_skin_create(NULL, &f.binding, NULL, NULL, NULL, &skin, NULL), PLUSH_E_ARGUMENT);
    plush_proxy_skin_destroy(NULL);
    assert_null(plush_proxy_skin_matrix(NULL, 0));
    plush_arena_free(&f.arena);
}

/* An empty binding and a proxy without triangles are fine: nothing to skin. */
static void test_empty(void **state)
{
    (void)state;
    skin_fx f;
    skin_fx_alloc(&f, 3, 0, 0);
    plush_proxy_skin *skin = skin_fx_skin(&f, PLUSH_PROXY_BLEND_LINEAR, false);
    plush_proxy_skin_update(skin, (const float(*)[3])f.nodes);
    plush_proxy_skin_apply(skin, f.out_p, f.out_n);
    assert_null(plush_proxy_skin_matrix(skin, 0));
    plush_proxy_skin_destroy(skin);
    plush_arena_free(&f.arena);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frame_hand_example),
        cmocka_unit_test(test_frame_degenerate),
        cmocka_unit_test(test_matrix_is_frame_product),
        cmocka_unit_test(test_rigid),
        cmocka_unit_test(test_stretch_uniform_scale),
        cmocka_unit_test(test_stretch_affine_on_plane),
        cmocka_unit_test(test_stretch_affine_everywhere),
        cmocka_unit_test(test_dual_quaternion_sign_alignment),
        cmocka_unit_test(test_translate),
        cmocka_unit_test(test_with_bind),
        cmocka_unit_test(test_degenerate_keeps_last_matrix),
        cmocka_unit_test(test_degenerate_at_rest),
        cmocka_unit_test(test_proxy_share),
        cmocka_unit_test(test_portable_kernels_match),
        cmocka_unit_test(test_create_errors),
        cmocka_unit_test(test_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
