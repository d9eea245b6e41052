/* The smooth plush surface's two parts: binding weights smoothed over the detailed surface
 * (plush_proxy_binding_smooth) and patch frames (plush_proxy_patch, and the skin that uses them).
 *
 * The fixture is a wavy coarse sheet (the proxy) under a fine grid (the detailed surface): a vertex's
 * nearest four triangles change from one grid vertex to the next, which is where the nearest-four
 * weights jump. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/proxy.h"
#include "plush/sys/proxy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { CN = 7 };   /* coarse nodes per side */
#define SIZE 6.0f
static int FN = 61;   /* fine nodes per side: test_smooth_is_continuous refines it */

typedef struct fixture {
    float cage[CN * CN][3];
    uint32_t cage_tris[2 * (CN - 1) * (CN - 1)][3];
    float (*fine)[3];
    uint32_t (*fine_tris)[3];
} fixture;

static void grid_tris(uint32_t (*t)[3], int n)
{
    size_t k = 0;
    for (int j = 0; j + 1 < n; j++)
        for (int i = 0; i + 1 < n; i++) {
            uint32_t a = (uint32_t)(j * n + i), b = a + 1, c = a + (uint32_t)n, d = c + 1;
            t[k][0] = a, t[k][1] = b, t[k][2] = d, k++;
            t[k][0] = a, t[k][1] = d, t[k][2] = c, k++;
        }
}

static fixture *make_fixture(void)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->fine = calloc((size_t)(FN * FN), sizeof *f->fine);
    f->fine_tris = calloc((size_t)(2 * (FN - 1) * (FN - 1)), sizeof *f->fine_tris);
    assert_true(f->fine && f->fine_tris);
    for (int j = 0; j < CN; j++)
        for (int i = 0; i < CN; i++) {
            float x = SIZE * (float)i / (CN - 1), y = SIZE * (float)j / (CN - 1);
            f->cage[j * CN + i][0] = x, f->cage[j * CN + i][1] = y;
            f->cage[j * CN + i][2] = 0.3f * sinf(1.7f * x) * cosf(1.3f * y);
        }
    for (int j = 0; j < FN; j++)
        for (int i = 0; i < FN; i++) {
            float x = SIZE * (float)i / (FN - 1), y = SIZE * (float)j / (FN - 1);
            f->fine[j * FN + i][0] = x, f->fine[j * FN + i][1] = y, f->fine[j * FN + i][2] = 0.25f;
        }
    grid_tris(f->cage_tris, CN);
    grid_tris(f->fine_tris, FN);
    return f;
}

static void free_fixture(fixture *f)
{
    free(f->fine);
    free(f->fine_tris);
    free(f);
}

static plush_proxy_mesh cage_mesh(const fixture *f)
{
    return (plush_proxy_mesh){.nodes = (const float(*)[3])f->cage, .node_count = CN * CN,
                              .triangles = (const uint32_t(*)[3])f->cage_tris,
                              .triangle_count = 2 * (CN - 1) * (CN - 1)};
}

/* The smoothing reach the fixture's bindings use, in cage edges (0: the default for the cage). */
static float smooth_radius = (float)PLUSH_PROXY_SMOOTH_RADIUS;

/* The fixture bound, and smoothed with `smooth` when it is not NULL. */
static plush_proxy_binding *bind_with(const fixture *f, const plush_proxy_smooth_options *smooth)
{
    plush_proxy_mesh mesh = cage_mesh(f);
    plush_proxy_binding *b = NULL;
    plush_diag d;
    plush_diag_reset(&d);
    plush_proxy_bind_options o = {.search = PLUSH_PROXY_SEARCH_BRUTE};
    assert_int_equal(plush_proxy_bind(&mesh, (const float(*)[3])f->fine, (size_t)(FN * FN), &o, &b, &d), PLUSH_OK);
    if (smooth)
        assert_int_equal(plush_proxy_binding_smooth(b, &mesh, (const float(*)[3])f->fine,
                                                    (const uint32_t(*)[3])f->fine_tris, (size_t)(2 * (FN - 1) * (FN - 1)),
                                                    smooth, &d),
                         PLUSH_OK);
    return b;
}

static plush_proxy_binding *bind(const fixture *f, bool smooth)
{
    return bind_with(f, smooth ? &(plush_proxy_smooth_options){.radius = smooth_radius} : NULL);
}

/* Sum over triangles of |w_a - w_b| of vertex va in binding a and vb in b: 0 for equal weights, 2 for disjoint
 * sets. */
static double jump_pair(const plush_proxy_binding *a, size_t va, const plush_proxy_binding *b, size_t vb);

/* The same vertex in two bindings. */
static double jump_between(const plush_proxy_binding *a, const plush_proxy_binding *b, size_t v)
{
    return jump_pair(a, v, b, v);
}

/* Sum over triangles of |w_a - w_b|: 0 for equal weights, 2 for disjoint sets. */
static double jump(const plush_proxy_binding *b, size_t va, size_t vb)
{
    return jump_pair(b, va, b, vb);
}

static double jump_pair(const plush_proxy_binding *a, size_t va, const plush_proxy_binding *b, size_t vb)
{
    double sum = 0;
    for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++) {
        int32_t t = a->triangles[va][k];
        if (t < 0)
            continue;
        double other = 0;
        for (int q = 0; q < PLUSH_PROXY_INFLUENCES; q++)
            if (b->triangles[vb][q] == t)
                other = b->weights[vb][q];
        sum += fabs(a->weights[va][k] - other);
    }
    for (int q = 0; q < PLUSH_PROXY_INFLUENCES; q++) {
        int32_t t = b->triangles[vb][q];
        bool shared = false;
        for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++)
            shared = shared || (t >= 0 && a->triangles[va][k] == t);
        if (t >= 0 && !shared)
            sum += b->weights[vb][q];
    }
    return sum;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The share of neighbouring pairs (along the grid) whose weights change by more than `limit`, and the
 * 99th percentile of the change. */
static void jumps(const plush_proxy_binding *b, double limit, double *share, double *p99)
{
    size_t n = (size_t)(2 * FN * (FN - 1)), k = 0, over = 0;
    double *all = malloc(n * sizeof *all);
    assert_non_null(all);
    for (int j = 0; j < FN; j++)
        for (int i = 0; i + 1 < FN; i++) {
            all[k++] = jump(b, (size_t)(j * FN + i), (size_t)(j * FN + i + 1));
            all[k++] = jump(b, (size_t)(i * FN + j), (size_t)((i + 1) * FN + j));
        }
    for (size_t q = 0; q < n; q++)
        over += all[q] > limit;
    qsort(all, n, sizeof *all, cmp_double);
    *share = (double)over / (double)n;
    *p99 = all[(size_t)(0.99 * (double)(n - 1))];
    free(all);
}

static void test_smooth_rows_are_bindings(void **state)
{
    (void)state;
    fixture *f = make_fixture();
    plush_proxy_binding *b = bind(f, true);
    plush_proxy_mesh mesh = cage_mesh(f);
    for (size_t v = 0; v < (size_t)(FN * FN); v++) {
        double sum = 0;
        float last = -1;
        for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++) {
            int32_t t = b->triangles[v][k];
            if (t < 0) {
                assert_true(b->weights[v][k] == 0);
                continue;
            }
            assert_true(t < (int32_t)mesh.triangle_count);
            assert_true(b->weights[v][k] > 0);
            sum += b->weights[v][k];
            /* nearest first, with the exact distance */
            const uint32_t *tri = mesh.triangles[t];
            float d = plush_proxy_point_triangle_distance(f->fine[v], mesh.nodes[tri[0]], mesh.nodes[tri[1]],
                                                          mesh.nodes[tri[2]]);
            assert_true(b->distances[v][k] == d);
            assert_true(d >= last);
            last = d;
        }
        assert_true(fabs(sum - 1) < 1e-5);
    }
    plush_proxy_binding_free(b);
    free_fixture(f);
}

/* Continuity, seen by refining the detailed grid over the same proxy: between neighbouring vertices the
 * nearest-four weights jump by the same amount at every change of the four however fine the grid (their
 * 99th percentile stays near 0.5), while the smoothed weights' changes shrink with the grid step (a
 * continuous function; the reduction to four is steep where five averaged weights are nearly equal, so
 * a coarse grid still shows large steps there). */
static void test_smooth_is_continuous(void **state)
{
    (void)state;
    static const int sizes[] = {61, 121, 241};
    double rough_p99[3], smooth_p99[3], rough_share[3], smooth_share[3];
    for (int s = 0; s < 3; s++) {
        FN = sizes[s];
        fixture *f = make_fixture();
        plush_proxy_binding *rough = bind(f, false), *smooth = bind(f, true);
        jumps(rough, 0.25, &rough_share[s], &rough_p99[s]);
        jumps(smooth, 0.25, &smooth_share[s], &smooth_p99[s]);
        print_message("grid %dx%d: neighbours whose weights change by more than 0.25: nearest four %.2f%%, smoothed "
                      "%.2f%%; 99th percentile of the change %.3f and %.3f\n",
                      FN, FN, 100 * rough_share[s], 100 * smooth_share[s], rough_p99[s], smooth_p99[s]);
        plush_proxy_binding_free(rough);
        plush_proxy_binding_free(smooth);
        free_fixture(f);
    }
    FN = 61;
    assert_true(rough_p99[2] > 0.4);                    /* jumps stay */
    assert_true(smooth_p99[2] < 0.3 * smooth_p99[0]);   /* changes shrink with the step */
    assert_true(smooth_p99[2] < 0.5 * rough_p99[2]);
    assert_true(smooth_share[2] < 0.1 * rough_share[2]);
}

/* The default reach on a coarse cage (72 triangles, under PLUSH_PROXY_SMOOTH_TRIANGLES): the length the full
 * reach has on a cage of that many, sqrt(72 / 240) of the full count of its own edges -- the same binding as
 * that radius asked for, another than the full count's (which reaches across most of this sheet). */
static void test_smooth_default_on_a_coarse_cage(void **state)
{
    (void)state;
    fixture *f = make_fixture();
    size_t tc = 2 * (CN - 1) * (CN - 1);
    assert_true((double)tc < PLUSH_PROXY_SMOOTH_TRIANGLES);
    smooth_radius = 0;
    plush_proxy_binding *dflt = bind(f, true);
    smooth_radius = (float)(PLUSH_PROXY_SMOOTH_RADIUS * sqrt((double)tc / PLUSH_PROXY_SMOOTH_TRIANGLES));
    plush_proxy_binding *scaled = bind(f, true);
    smooth_radius = (float)PLUSH_PROXY_SMOOTH_RADIUS;
    plush_proxy_binding *full = bind(f, true);
    /* the same as the scaled radius asked for (that one rounded to a float: within 1e-4 by jump()), unlike the
     * full count's */
    size_t n = (size_t)(FN * FN), like_scaled = 0, like_full = 0;
    for (size_t v = 0; v < n; v++) {
        like_scaled += jump_between(dflt, scaled, v) < 1e-4;
        like_full += jump_between(dflt, full, v) < 1e-4;
    }
    assert_true(like_scaled > 99 * n / 100);
    assert_true(like_full < n / 2);
    /* the full count averages over more of the sheet: neighbouring vertices' weights differ less */
    double share_full, p99_full, share_dflt, p99_dflt;
    jumps(full, 0.25, &share_full, &p99_full);
    jumps(dflt, 0.25, &share_dflt, &p99_dflt);
    assert_true(p99_dflt > p99_full);
    plush_proxy_binding_free(dflt);
    plush_proxy_binding_free(scaled);
    plush_proxy_binding_free(full);
    free_fixture(f);
}

/* The fixture smoothed with the cage's nodes held by bones (node_bone), at the default reach for its cage. */
static plush_proxy_binding *bind_held(const fixture *f, const int32_t *node_bone)
{
    return bind_with(f, &(plush_proxy_smooth_options){.node_bone = node_bone});
}

/* Mean over the fine vertices within a cage edge of the sheet's lower or upper border (where the held rows are) of
 * how far their weights lie from the nearest four's. */
static double from_nearest_at_rows(const fixture *f, const plush_proxy_binding *b, const plush_proxy_binding *rough)
{
    double sum = 0, edge = SIZE / (CN - 1);
    size_t n = 0;
    for (size_t v = 0; v < (size_t)(FN * FN); v++)
        if (f->fine[v][1] < edge || f->fine[v][1] > SIZE - edge)
            sum += jump_between(b, rough, v), n++;
    return sum / (double)n;
}

/* The cage held by bones: held by none or by one bone (hair on the head) the smoothing is the same to the bit;
 * held across a joint (its lower row by one bone, its upper row by another) the reach shrinks where it is held:
 * the weights there lie nearer the nearest four's, and stay continuous. */
static void test_smooth_held_across_a_joint(void **state)
{
    (void)state;
    fixture *f = make_fixture();
    int32_t none[CN * CN], one[CN * CN], two[CN * CN];
    for (int j = 0; j < CN; j++)
        for (int i = 0; i < CN; i++) {
            none[j * CN + i] = -1;
            one[j * CN + i] = j == 0 || j == CN - 1 ? 3 : -1;
            two[j * CN + i] = j == 0 ? 3 : j == CN - 1 ? 4 : -1;
        }
    smooth_radius = 0;
    plush_proxy_binding *plain = bind(f, true), *rough = bind(f, false);
    smooth_radius = (float)PLUSH_PROXY_SMOOTH_RADIUS;
    plush_proxy_binding *by_none = bind_held(f, none), *by_one = bind_held(f, one), *by_two = bind_held(f, two);
    size_t n = (size_t)(FN * FN), same_none = 0, same_one = 0, same_two = 0;
    for (size_t v = 0; v < n; v++) {
        same_none += !memcmp(plain->weights[v], by_none->weights[v], sizeof plain->weights[v]) &&
                     !memcmp(plain->triangles[v], by_none->triangles[v], sizeof plain->triangles[v]);
        same_one += !memcmp(plain->weights[v], by_one->weights[v], sizeof plain->weights[v]) &&
                    !memcmp(plain->triangles[v], by_one->triangles[v], sizeof plain->triangles[v]);
        same_two += jump_between(plain, by_two, v) < 1e-4;
    }
    double plain_near = from_nearest_at_rows(f, plain, rough), two_near = from_nearest_at_rows(f, by_two, rough);
    double share_plain, p99_plain, share_two, p99_two, share_rough, p99_rough;
    jumps(plain, 0.25, &share_plain, &p99_plain);
    jumps(by_two, 0.25, &share_two, &p99_two);
    jumps(rough, 0.25, &share_rough, &p99_rough);
    plush_proxy_binding_free(plain);
    plush_proxy_binding_free(rough);
    plush_proxy_binding_free(by_none);
    plush_proxy_binding_free(by_one);
    plush_proxy_binding_free(by_two);
    free_fixture(f);
    /* continuous: on a grid four times as fine the neighbours' changes shrink with the step, and the share of
     * large ones with it (a jump would keep both) */
    FN = 241;
    f = make_fixture();
    plush_proxy_binding *fine_two = bind_held(f, two);
    double share_fine, p99_fine;
    jumps(fine_two, 0.25, &share_fine, &p99_fine);
    plush_proxy_binding_free(fine_two);
    free_fixture(f);
    FN = 61;
    print_message("held by none / one bone: %zu / %zu of %zu vertices as without; across a joint %zu; at the held rows "
                  "the weights lie %.3f from the nearest four's (%.3f without); neighbours' changes p99 %.3f (%.3f "
                  "without, %.3f the nearest four), %.3f on a grid four times as fine; changes over 0.25 %.2f%% -> "
                  "%.2f%%\n",
                  same_none, same_one, n, same_two, two_near, plain_near, p99_two, p99_plain, p99_rough, p99_fine,
                  100 * share_two, 100 * share_fine);
    assert_int_equal(same_none, n);
    assert_int_equal(same_one, n);
    assert_true(same_two < n / 2);
    assert_true(two_near < 0.8 * plain_near);
    assert_true(p99_fine < 0.4 * p99_two);
    assert_true(share_fine < 0.25 * share_two);
}

/* Mean over the fine vertices within a cage edge of the sheet's upper border (its free edge below) of how far their
 * weights lie from the nearest four's. */
static double from_nearest_at_top(const fixture *f, const plush_proxy_binding *b, const plush_proxy_binding *rough)
{
    double sum = 0, edge = SIZE / (CN - 1);
    size_t n = 0;
    for (size_t v = 0; v < (size_t)(FN * FN); v++)
        if (f->fine[v][1] > SIZE - edge)
            sum += jump_between(b, rough, v), n++;
    return sum / (double)n;
}

/* A piece the author's chains swing (point_swung), pinned along its lower rows so that its free length (2 cage edges)
 * is under the reach (4.4 edges on this coarse cage): the reach there is held to the free length, so the free edge's
 * weights lie nearer its own triangles' and no longer reach past the pins, and stay continuous. A part that is not
 * mostly the chains' (a quarter of its weight on them), or no point_swung at all, binds as before to the bit. */
static void test_smooth_within_a_swung_piece_free_length(void **state)
{
    (void)state;
    fixture *f = make_fixture();
    int32_t held[CN * CN];
    for (int j = 0; j < CN; j++)
        for (int i = 0; i < CN; i++)
            held[j * CN + i] = j <= CN - 3 ? 3 : -1;
    float *chains = malloc((size_t)(FN * FN) * sizeof *chains), *some = malloc((size_t)(FN * FN) * sizeof *some);
    assert_true(chains && some);
    for (int v = 0; v < FN * FN; v++)
        chains[v] = 1.0f, some[v] = 0.25f;
    smooth_radius = 0;
    plush_proxy_binding *rough = bind(f, false);
    plush_proxy_binding *pinned = bind_with(f, &(plush_proxy_smooth_options){.node_bone = held});
    plush_proxy_binding *partly = bind_with(f, &(plush_proxy_smooth_options){.node_bone = held, .point_swung = some});
    plush_proxy_binding *swung = bind_with(f, &(plush_proxy_smooth_options){.node_bone = held, .point_swung = chains});
    size_t n = (size_t)(FN * FN), same_partly = 0, same_swung = 0;
    for (size_t v = 0; v < n; v++) {
        same_partly += !memcmp(pinned->weights[v], partly->weights[v], sizeof pinned->weights[v]) &&
                       !memcmp(pinned->triangles[v], partly->triangles[v], sizeof pinned->triangles[v]);
        same_swung += jump_between(pinned, swung, v) < 1e-4;
    }
    double pinned_near = from_nearest_at_top(f, pinned, rough), swung_near = from_nearest_at_top(f, swung, rough);
    double share_swung, p99_swung;
    jumps(swung, 0.25, &share_swung, &p99_swung);
    plush_proxy_binding_free(rough);
    plush_proxy_binding_free(pinned);
    plush_proxy_binding_free(partly);
    plush_proxy_binding_free(swung);
    free_fixture(f);
    free(chains), free(some);
    /* continuous: on a grid four times as fine the neighbours' changes shrink with the step */
    FN = 241;
    f = make_fixture();
    chains = malloc((size_t)(FN * FN) * sizeof *chains);
    assert_non_null(chains);
    for (int v = 0; v < FN * FN; v++)
        chains[v] = 1.0f;
    plush_proxy_binding *fine = bind_with(f, &(plush_proxy_smooth_options){.node_bone = held, .point_swung = chains});
    double share_fine, p99_fine;
    jumps(fine, 0.25, &share_fine, &p99_fine);
    plush_proxy_binding_free(fine);
    free_fixture(f);
    free(chains);
    FN = 61;
    smooth_radius = (float)PLUSH_PROXY_SMOOTH_RADIUS;
    print_message("a quarter on chains: %zu of %zu vertices as without; all on them: %zu; at the free edge the weights "
                  "lie %.3f from the nearest four's (%.3f without); neighbours' changes p99 %.3f, %.3f on a grid four "
                  "times as fine\n",
                  same_partly, n, same_swung, swung_near, pinned_near, p99_swung, p99_fine);
    assert_int_equal(same_partly, n);
    assert_true(same_swung < n / 2);
    assert_true(swung_near < 0.8 * pinned_near);
    assert_true(p99_fine < 0.4 * p99_swung);
}

/* Bad faces, a bad radius and a seed binding (the original method stays as it is) are refused. */
static void test_smooth_refuses(void **state)
{
    (void)state;
    fixture *f = make_fixture();
    plush_proxy_mesh mesh = cage_mesh(f);
    plush_diag d;
    plush_diag_reset(&d);
    plush_proxy_binding *b = bind(f, false);
    uint32_t bad[1][3] = {{0, 1, (uint32_t)(FN * FN)}};
    assert_int_equal(plush_proxy_binding_smooth(b, &mesh, (const float(*)[3])f->fine, (const uint32_t(*)[3])bad, 1,
                                                NULL, &d),
                     PLUSH_E_RANGE);
    plush_proxy_smooth_options o = {.radius = -1};
    plush_diag_reset(&d);
    assert_int_equal(plush_proxy_binding_smooth(b, &mesh, (const float(*)[3])f->fine,
                                                (const uint32_t(*)[3])f->fine_tris, 1, &o, &d),
                     PLUSH_E_ARGUMENT);
    plush_proxy_binding_free(b);
    plush_diag_reset(&d);
    plush_proxy_binding *seed = NULL;
    plush_proxy_bind_options so = {.seed = true};
    assert_int_equal(plush_proxy_bind(&mesh, (const float(*)[3])f->fine, (size_t)(FN * FN), &so, &seed, &d), PLUSH_OK);
    assert_int_equal(plush_proxy_binding_smooth(seed, &mesh, (const float(*)[3])f->fine,
                                                (const uint32_t(*)[3])f->fine_tris, 1, NULL, &d),
                     PLUSH_E_CONFLICT);
    plush_proxy_binding_free(seed);
    free_fixture(f);
}

/* ---- patch frames ------------------------------------------------------------------------------- */

static void rotate(const double q[4], const float in[3], double out[3])
{
    double x = q[0], y = q[1], z = q[2], w = q[3];
    double r[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                      {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                      {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}};
    for (int k = 0; k < 3; k++)
        out[k] = r[k][0] * in[0] + r[k][1] * in[1] + r[k][2] * in[2];
}

/* A rigid motion of the whole cage, even a half turn from the identity, is every patch's motion. */
static void test_patch_rigid(void **state)
{
    (void)state;
    fixture *f = make_fixture();
    plush_proxy_mesh mesh = cage_mesh(f);
    plush_proxy_patch *p = NULL;
    plush_diag d;
    plush_diag_reset(&d);
    assert_int_equal(plush_proxy_patch_create(&mesh, (plush_proxy_patch_shape){2, 0}, &p, &d), PLUSH_OK);
    assert_true(plush_proxy_patch_size(p, 0) > 3);
    double q[4], t[3];
    plush_proxy_patch_motion(p, 5, q, t);
    assert_true(q[3] == 1 && q[0] == 0 && t[0] == 0 && t[2] == 0);
    static const double turns[][4] = {{0.1, 0.2, -0.3, 0.927}, {0.0, 0.0, 1.0, 0.0}, {0.6, -0.5, 0.3, 0.5}};
    for (size_t s = 0; s < sizeof turns / sizeof turns[0]; s++) {
        double want[4], len = 0;
        for (int k = 0; k < 4; k++)
            len += turns[s][k] * turns[s][k];
        for (int k = 0; k < 4; k++)
            want[k] = turns[s][k] / sqrt(len);
        const double shift[3] = {1.5, -2.0, 0.25};
        float moved[CN * CN][3];
        for (size_t v = 0; v < CN * CN; v++) {
            double r[3];
            rotate(want, f->cage[v], r);
            for (int k = 0; k < 3; k++)
                moved[v][k] = (float)(r[k] + shift[k]);
        }
        plush_proxy_patch_update(p, (const float(*)[3])moved);
        for (size_t i = 0; i < mesh.triangle_count; i++) {
            plush_proxy_patch_motion(p, i, q, t);
            double dot = fabs(q[0] * want[0] + q[1] * want[1] + q[2] * want[2] + q[3] * want[3]);
            assert_true(dot > 1 - 1e-9);
            assert_true(q[3] >= 0);
            for (int k = 0; k < 3; k++)
                assert_float_equal(t[k], shift[k], 1e-5);
        }
    }
    plush_proxy_patch_destroy(p);
    assert_int_equal(plush_proxy_patch_create(&mesh, (plush_proxy_patch_shape){65, 0}, &p, &d), PLUSH_E_ARGUMENT);
    assert_null(p);
    free_fixture(f);
}

/* A flat cage turned a half turn in one step (about an axis in its plane, or about its normal) leaves the
 * warm start -- last frame's rotation, the identity -- exactly where the fit's gradient is zero: not at the
 * fit but a half turn from it. Every patch must still find the turn (a braid swinging round stayed
 * mirrored for frames and squeezed a twentieth of Alicia's hair edges to under two thirds). */
static void test_patch_flat_half_turns(void **state)
{
    (void)state;
    fixture *f = make_fixture();
    for (size_t v = 0; v < CN * CN; v++)
        f->cage[v][2] = 0;
    plush_proxy_mesh mesh = cage_mesh(f);
    static const double turns[][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0.6, 0.8, 0, 0}};
    for (size_t s = 0; s < sizeof turns / sizeof turns[0]; s++) {
        plush_proxy_patch *p = NULL;
        plush_diag d;
        plush_diag_reset(&d);
        assert_int_equal(plush_proxy_patch_create(&mesh, (plush_proxy_patch_shape){2, 0}, &p, &d), PLUSH_OK);
        float moved[CN * CN][3];
        for (size_t v = 0; v < CN * CN; v++) {
            double r[3];
            rotate(turns[s], f->cage[v], r);
            for (int k = 0; k < 3; k++)
                moved[v][k] = (float)r[k];
        }
        plush_proxy_patch_update(p, (const float(*)[3])moved);
        for (size_t i = 0; i < mesh.triangle_count; i++) {
            double q[4], t[3];
            plush_proxy_patch_motion(p, i, q, t);
            double dot = fabs(q[0] * turns[s][0] + q[1] * turns[s][1] + q[2] * turns[s][2] + q[3] * turns[s][3]);
            assert_true(dot > 1 - 1e-9);
        }
        plush_proxy_patch_destroy(p);
    }
    free_fixture(f);
}

/* Patches by reach: shortest paths over edge lengths out to reach x the piece's diagonal, never into
 * another piece; the rings add their steps; out-of-range shapes are refused. Two ladders of unit squares
 * (20 and 5 nodes long), far apart: from triangle 0 of the long one, (i, 0) lies i - 1 along the edges
 * and (i, 1) lies i, so a reach of 3.5 units holds 2 x 3 + 3 = 9 nodes. */
enum { LADDER = 20, SHORT = 5 };

static void test_patch_reach(void **state)
{
    (void)state;
    float nodes[2 * (LADDER + SHORT)][3];
    uint32_t tris[2 * (LADDER - 1 + SHORT - 1)][3];
    size_t nt = 0, at = 0;
    const int length[2] = {LADDER, SHORT};
    for (int piece = 0; piece < 2; piece++) {
        size_t first = at;
        for (int i = 0; i < length[piece]; i++)
            for (int y = 0; y < 2; y++, at++) {
                nodes[at][0] = (float)i;
                nodes[at][1] = (float)y;
                nodes[at][2] = piece ? 10.0f : 0.0f;
            }
        for (int i = 0; i + 1 < length[piece]; i++) {
            uint32_t a = (uint32_t)(first + 2 * (size_t)i), b = a + 2, c = a + 1, e = a + 3;
            tris[nt][0] = a, tris[nt][1] = b, tris[nt][2] = c, nt++;
            tris[nt][0] = b, tris[nt][1] = e, tris[nt][2] = c, nt++;
        }
    }
    plush_proxy_mesh mesh = {.nodes = (const float(*)[3])nodes, .node_count = at,
                             .triangles = (const uint32_t(*)[3])tris, .triangle_count = nt};
    double diagonal = sqrt((double)(LADDER - 1) * (LADDER - 1) + 1);
    plush_diag d;
    plush_diag_reset(&d);
    struct {
        plush_proxy_patch_shape shape;
        size_t first, last; /* patch size of triangle 0 and of the short ladder's last triangle */
    } cases[] = {
        {{0, 0}, 3, 3},
        {{0, (float)(3.5 / diagonal)}, 9, 3},           /* the short ladder's: 0.76 units, no neighbour */
        {{0, 4.0f}, 2 * LADDER, 2 * SHORT},            /* all of each piece, nothing of the other */
        {{2, 0}, 7, 7},                                  /* rings alone: each step one square and a corner */
        {{6, (float)(3.5 / diagonal)}, 15, 2 * SHORT},  /* the rings reach further than the reach here */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        plush_proxy_patch *p = NULL;
        assert_int_equal(plush_proxy_patch_create(&mesh, cases[c].shape, &p, &d), PLUSH_OK);
        assert_int_equal(plush_proxy_patch_size(p, 0), cases[c].first);
        assert_int_equal(plush_proxy_patch_size(p, nt - 1), cases[c].last);
        /* a rigid motion of both pieces is every patch's motion */
        const double turn[4] = {0.2, -0.1, 0.3, 0.92736184955};
        float moved[2 * (LADDER + SHORT)][3];
        for (size_t v = 0; v < at; v++) {
            double r[3];
            rotate(turn, nodes[v], r);
            for (int k = 0; k < 3; k++)
                moved[v][k] = (float)(r[k] + 0.5 * k);
        }
        plush_proxy_patch_update(p, (const float(*)[3])moved);
        for (size_t i = 0; i < nt; i++) {
            double q[4], t[3];
            plush_proxy_patch_motion(p, i, q, t);
            assert_true(fabs(q[0] * turn[0] + q[1] * turn[1] + q[2] * turn[2] + q[3] * turn[3]) > 1 - 1e-6);
            for (int k = 0; k < 3; k++)
                assert_float_equal(t[k], 0.5 * k, 1e-4);
        }
        plush_proxy_patch_destroy(p);
    }
    static const float bad[] = {-0.1f, 4.5f, NAN};
    for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
        plush_proxy_patch *p = NULL;
        plush_diag_reset(&d);
        assert_int_equal(plush_proxy_patch_create(&mesh, (plush_proxy_patch_shape){0, bad[c]}, &p, &d),
                         PLUSH_E_ARGUMENT);
        assert_null(p);
    }
}


/* A thin ribbon's cage (a tube of four sides, 24 long, 0.1 wide and 0.04 thick) beside a plate (3 x 3) at its
 * root: the ribbon's patches' nodes lie nearly on a line, and how they sit about it is all its nodes tell of its
 * twist. Turned with the plate, then squeezed across (to a twentieth of its width at the root, a quarter at the
 * tip) with its two faces passed through each other -- as a fast swing leaves a thin strand's cage -- its nodes
 * alone tell a half turn of twist wherever the ribbon is left narrower than it is thick (neighbouring patches
 * turned 100 degrees apart on Alicia's twintail, and the detailed strand between them was squeezed to half its
 * volume for a frame). Its twist is carried from the plate, which tells its own turn, along the ribbon; the
 * ribbon caged alone has nothing to carry it from and keeps its nodes' fit. */
enum { RIBBON_RINGS = 49, PLATE = 7, RIBBON_NODES = 4 * RIBBON_RINGS + PLATE * PLATE };

static double ribbon_worst_turn(const plush_proxy_patch *p, size_t from, size_t to, const double turn[4])
{
    double worst = 0;
    for (size_t i = from; i < to; i++) {
        double q[4], t[3];
        plush_proxy_patch_motion(p, i, q, t);
        double dot = fabs(q[0] * turn[0] + q[1] * turn[1] + q[2] * turn[2] + q[3] * turn[3]);
        double angle = 2 * acos(dot > 1 ? 1 : dot) * 57.29577951308232;
        worst = angle > worst ? angle : worst;
    }
    return worst;
}

static void test_patch_thin_ribbon(void **state)
{
    (void)state;
    static const double corner[4][2] = {{-0.05, 0.02}, {0.05, 0.02}, {0.05, -0.02}, {-0.05, -0.02}};
    static float nodes[RIBBON_NODES][3], turned[RIBBON_NODES][3], squeezed[RIBBON_NODES][3];
    static uint32_t tris[8 * (RIBBON_RINGS - 1) + 2 * (PLATE - 1) * (PLATE - 1)][3];
    size_t nt = 0;
    for (int i = 0; i < RIBBON_RINGS; i++)
        for (int k = 0; k < 4; k++) {
            nodes[4 * i + k][0] = 0.5f * (float)i;
            nodes[4 * i + k][1] = (float)corner[k][0];
            nodes[4 * i + k][2] = (float)corner[k][1];
        }
    for (int i = 0; i + 1 < RIBBON_RINGS; i++)
        for (int k = 0; k < 4; k++) {
            uint32_t a = (uint32_t)(4 * i + k), b = (uint32_t)(4 * i + (k + 1) % 4);
            tris[nt][0] = a, tris[nt][1] = b + 4, tris[nt][2] = b, nt++;
            tris[nt][0] = a, tris[nt][1] = a + 4, tris[nt][2] = b + 4, nt++;
        }
    size_t ribbon_tris = nt;
    for (int j = 0; j < PLATE; j++)
        for (int i = 0; i < PLATE; i++) {
            float *v = nodes[4 * RIBBON_RINGS + j * PLATE + i];
            v[0] = -3.2f + 0.5f * (float)i, v[1] = -1.5f + 0.5f * (float)j, v[2] = 0;
        }
    grid_tris(tris + nt, PLATE);
    for (size_t t = nt; t < nt + 2 * (PLATE - 1) * (PLATE - 1); t++)
        for (int k = 0; k < 3; k++)
            tris[t][k] += 4 * RIBBON_RINGS;
    nt += 2 * (PLATE - 1) * (PLATE - 1);
    const double turn[4] = {0.2, -0.1, 0.3, 0.92736184955};
    for (size_t v = 0; v < RIBBON_NODES; v++) {
        double squeeze = v < 4 * RIBBON_RINGS ? 0.05 + 0.2 * (double)(v / 4) / (RIBBON_RINGS - 1) : 1, r[3];
        const float at[3] = {nodes[v][0], (float)(squeeze * nodes[v][1]),
                             v < 4 * RIBBON_RINGS ? -0.8f * nodes[v][2] : nodes[v][2]};
        rotate(turn, nodes[v], r);
        for (int k = 0; k < 3; k++)
            turned[v][k] = (float)(r[k] + k);
        rotate(turn, at, r);
        for (int k = 0; k < 3; k++)
            squeezed[v][k] = (float)(r[k] + k);
    }
    double worst[2][2]; /* [with the plate][turned, squeezed] */
    for (int plate = 0; plate < 2; plate++) {
        plush_proxy_mesh mesh = {.nodes = (const float(*)[3])nodes,
                                 .node_count = plate ? RIBBON_NODES : 4 * RIBBON_RINGS,
                                 .triangles = (const uint32_t(*)[3])tris, .triangle_count = plate ? nt : ribbon_tris};
        plush_proxy_patch *p = NULL;
        plush_diag d;
        plush_diag_reset(&d);
        assert_int_equal(plush_proxy_patch_create(&mesh, (plush_proxy_patch_shape){4, 0.4f}, &p, &d), PLUSH_OK);
        plush_proxy_patch_update(p, (const float(*)[3])turned);
        worst[plate][0] = ribbon_worst_turn(p, 0, mesh.triangle_count, turn);
        plush_proxy_patch_update(p, (const float(*)[3])squeezed);
        worst[plate][1] = ribbon_worst_turn(p, 0, ribbon_tris, turn);
        plush_proxy_patch_destroy(p);
    }
    print_message("thin ribbon: worst patch turn from the ribbon's %.2g degrees turned, %.2g squeezed (caged alone "
                  "%.2g and %.2f)\n", worst[1][0], worst[1][1], worst[0][0], worst[0][1]);
    assert_true(worst[1][0] < 1e-3 && worst[0][0] < 1e-3);
    assert_true(worst[1][1] < 1e-3);
    assert_true(worst[0][1] > 170);
}

/* The skin with patch frames: a rigid motion moves every bound vertex rigidly; stretch-aware frames are
 * each triangle's own, so asking for both is refused. */
static void test_patch_skin(void **state)
{
    (void)state;
    fixture *f = make_fixture();
    plush_proxy_mesh mesh = cage_mesh(f);
    plush_proxy_binding *b = bind(f, true);
    plush_proxy_skin *skin = NULL;
    plush_diag d;
    plush_diag_reset(&d);
    plush_proxy_skin_options o = {.patch = {4, 0}, .stretch = true};
    assert_int_equal(plush_proxy_skin_create(&mesh, b, (const float(*)[3])f->fine, NULL, &o, &skin, &d),
                     PLUSH_E_CONFLICT);
    o.stretch = false;
    o.patch.reach = NAN;
    plush_diag_reset(&d);
    assert_int_equal(plush_proxy_skin_create(&mesh, b, (const float(*)[3])f->fine, NULL, &o, &skin, &d),
                     PLUSH_E_ARGUMENT);
    o.patch.reach = 0;
    o.patch.rings = 3;
    assert_int_equal(plush_proxy_skin_create(&mesh, b, (const float(*)[3])f->fine, NULL, &o, &skin, &d), PLUSH_OK);
    const double turn[4] = {0, 0.38268343236, 0, 0.92387953251}; /* 45 degrees about y */
    float moved[CN * CN][3];
    for (size_t v = 0; v < CN * CN; v++) {
        double r[3];
        rotate(turn, f->cage[v], r);
        for (int k = 0; k < 3; k++)
            moved[v][k] = (float)(r[k] + (k == 1 ? 3.0 : 0.0));
    }
    plush_proxy_skin_update(skin, (const float(*)[3])moved);
    float(*pos)[3] = malloc((size_t)(FN * FN) * sizeof *pos);
    memcpy(pos, f->fine, (size_t)(FN * FN) * sizeof *pos);
    plush_proxy_skin_apply(skin, pos, NULL);
    for (size_t v = 0; v < (size_t)(FN * FN); v++) {
        double r[3];
        rotate(turn, f->fine[v], r);
        r[1] += 3.0;
        for (int k = 0; k < 3; k++)
            assert_float_equal(pos[v][k], r[k], 2e-5);
    }
    free(pos);
    plush_proxy_skin_destroy(skin);
    plush_proxy_binding_free(b);
    free_fixture(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_smooth_rows_are_bindings),
        cmocka_unit_test(test_smooth_is_continuous),
        cmocka_unit_test(test_smooth_default_on_a_coarse_cage),
        cmocka_unit_test(test_smooth_held_across_a_joint),
        cmocka_unit_test(test_smooth_within_a_swung_piece_free_length),
        cmocka_unit_test(test_smooth_refuses),
        cmocka_unit_test(test_patch_rigid), cmocka_unit_test(test_patch_flat_half_turns),
        cmocka_unit_test(test_patch_reach), cmocka_unit_test(test_patch_thin_ribbon),
        cmocka_unit_test(test_patch_skin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
