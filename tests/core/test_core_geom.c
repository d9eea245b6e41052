/* The geometry kernel (src/core/geom.h): position weld (numbering, -0 / +0, NaN, against a brute-force
 * scan), union-find (smallest root, against naive relabelling), matrix -> quaternion in both precisions
 * (every Shepperd branch, half-turns where w is 0, both strides), the nearest-point grid against a scan
 * (a cloud, a thin figure, a flat sheet, a line, repeated points, non-finite points, queries far outside). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/geom.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- weld --------------------------------------------------------------------------------------------- */

static void test_weld_numbering(void **state)
{
    (void)state;
    const float pts[][3] = {
        {1, 2, 3}, {0, 0, 0}, {1, 2, 3}, {-0.0f, 0, -0.0f}, {4, 5, 6}, {0, 0, 0}, {1, 2, 3.0000005f},
    };
    size_t n = sizeof pts / sizeof pts[0];
    uint32_t node_of[7], first[7];
    size_t nodes = plush__weld_positions(pts, n, node_of, first);
    assert_int_equal(nodes, 4);
    const uint32_t want[] = {0, 1, 0, 1, 2, 1, 3}; /* first appearance order; -0 welds with +0 */
    for (size_t i = 0; i < n; i++)
        assert_int_equal(node_of[i], want[i]);
    const uint32_t want_first[] = {0, 1, 4, 6};
    for (size_t k = 0; k < nodes; k++)
        assert_int_equal(first[k], want_first[k]);
}

static void test_weld_stream(void **state)
{
    (void)state;
    plush__weld w;
    assert_true(plush__weld_init(&w, 3));
    bool added;
    const float a[3] = {-0.0f, 1, 2}, b[3] = {0, 1, 2}, c[3] = {NAN, 0, 0};
    assert_int_equal(plush__weld_add(&w, a, &added), 0);
    assert_true(added);
    assert_int_equal(plush__weld_add(&w, b, &added), 0);
    assert_false(added);
    assert_true(signbit(w.positions[0][0])); /* the first point as given */
    /* NaN never equals anything, so each one is its own node */
    assert_int_equal(plush__weld_add(&w, c, &added), 1);
    assert_true(added);
    assert_int_equal(plush__weld_add(&w, c, NULL), 2);
    assert_int_equal(w.count, 3);
    plush__weld_free(&w);
    plush__weld_free(&w); /* freed twice: a no-op */
}

static void test_weld_against_scan(void **state)
{
    (void)state;
    enum { N = 3000 };
    float(*pts)[3] = malloc(N * sizeof *pts);
    uint32_t *node_of = malloc(N * sizeof *node_of), *first = malloc(N * sizeof *first);
    assert_non_null(pts);
    assert_non_null(node_of);
    assert_non_null(first);
    uint32_t seed = 12345;
    for (size_t i = 0; i < N; i++)
        for (int k = 0; k < 3; k++) {
            seed = seed * 1664525u + 1013904223u;
            pts[i][k] = (float)((seed >> 16) % 5) * 0.25f - 0.5f; /* 125 distinct points, many repeats */
        }
    size_t nodes = plush__weld_positions((const float(*)[3])pts, N, node_of, first);
    /* brute force: a point's node is that of the first earlier equal point, else the next number */
    size_t count = 0;
    for (size_t i = 0; i < N; i++) {
        size_t j = 0;
        while (j < i && !(pts[j][0] == pts[i][0] && pts[j][1] == pts[i][1] && pts[j][2] == pts[i][2]))
            j++;
        if (j == i) {
            assert_int_equal(node_of[i], count);
            assert_int_equal(first[count], i);
            count++;
        } else {
            assert_int_equal(node_of[i], node_of[j]);
        }
    }
    assert_int_equal(nodes, count);
    assert_int_equal(nodes, 125);
    free(pts);
    free(node_of);
    free(first);
}

static void test_weld_empty(void **state)
{
    (void)state;
    uint32_t node_of[1];
    assert_int_equal(plush__weld_positions(NULL, 0, node_of, NULL), 0);
}

/* ---- union-find --------------------------------------------------------------------------------------- */

static void test_uf_basic(void **state)
{
    (void)state;
    uint32_t parent[8];
    plush__uf_init(parent, 8);
    for (uint32_t i = 0; i < 8; i++)
        assert_int_equal(plush__uf_find(parent, i), i);
    assert_true(plush__uf_union(parent, 5, 3));
    assert_true(plush__uf_union(parent, 7, 5));
    assert_false(plush__uf_union(parent, 3, 7));
    assert_int_equal(plush__uf_find(parent, 7), 3); /* the smallest member stands for the set */
    assert_true(plush__uf_union(parent, 7, 1));
    for (uint32_t i = 0; i < 8; i++) {
        uint32_t want = (i == 1 || i == 3 || i == 5 || i == 7) ? 1 : i;
        assert_int_equal(plush__uf_find(parent, i), want);
    }
}

static void test_uf_against_relabel(void **state)
{
    (void)state;
    enum { N = 500, JOINS = 400 };
    uint32_t parent[N], label[N];
    plush__uf_init(parent, N);
    for (uint32_t i = 0; i < N; i++)
        label[i] = i;
    uint32_t seed = 7;
    for (int j = 0; j < JOINS; j++) {
        seed = seed * 1664525u + 1013904223u;
        uint32_t a = (seed >> 8) % N;
        seed = seed * 1664525u + 1013904223u;
        uint32_t b = (seed >> 8) % N;
        bool joined = label[a] != label[b];
        assert_int_equal(plush__uf_union(parent, a, b), joined);
        uint32_t from = label[a] > label[b] ? label[a] : label[b], to = label[a] < label[b] ? label[a] : label[b];
        for (uint32_t i = 0; i < N; i++)
            if (label[i] == from)
                label[i] = to;
    }
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(plush__uf_find(parent, i), label[i]); /* naive labels are each set's minimum */
}

/* ---- matrix -> quaternion ----------------------------------------------------------------------------- */

/* Column-major rotation matrix (stride 4, the mat4 layout) of a unit quaternion, in double. */
static void quat_matrix(const double q[4], double m[16])
{
    double x = q[0], y = q[1], z = q[2], w = q[3];
    memset(m, 0, 16 * sizeof *m);
    m[0] = 1 - 2 * (y * y + z * z), m[1] = 2 * (x * y + w * z), m[2] = 2 * (x * z - w * y);
    m[4] = 2 * (x * y - w * z), m[5] = 1 - 2 * (x * x + z * z), m[6] = 2 * (y * z + w * x);
    m[8] = 2 * (x * z + w * y), m[9] = 2 * (y * z - w * x), m[10] = 1 - 2 * (x * x + y * y);
    m[15] = 1;
}

/* q equals want up to the sign of the whole quaternion. */
static void assert_same_rotation(const double q[4], const double want[4], double tol)
{
    double dot = q[0] * want[0] + q[1] * want[1] + q[2] * want[2] + q[3] * want[3];
    double s = dot < 0 ? -1.0 : 1.0;
    for (int k = 0; k < 4; k++)
        assert_true(fabs(q[k] - s * want[k]) <= tol);
    assert_true(fabs(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3] - 1) <= tol);
}

static void check_both(const double want[4])
{
    double m4[16], m3[9], q[4];
    float f4[16], fq[4];
    quat_matrix(want, m4);
    for (int c = 0; c < 3; c++)
        for (int r = 0; r < 3; r++)
            m3[3 * c + r] = m4[4 * c + r];
    for (int k = 0; k < 16; k++)
        f4[k] = (float)m4[k];
    plush__mat3_to_quat(m4, 4, q);
    assert_same_rotation(q, want, 1e-12);
    plush__mat3_to_quat(m3, 3, q);
    assert_same_rotation(q, want, 1e-12);
    plush__mat3_to_quatf(f4, 4, fq);
    double dq[4] = {fq[0], fq[1], fq[2], fq[3]};
    assert_same_rotation(dq, want, 1e-6);
}

static void test_quat_branches(void **state)
{
    (void)state;
    const double h = sqrt(0.5);
    const double cases[][4] = {
        {0, 0, 0, 1},                        /* identity: the trace branch */
        {0.1, -0.2, 0.3, sqrt(1 - 0.14)},     /* a small turn: trace */
        {1, 0, 0, 0},                        /* half-turns, w = 0: each diagonal branch */
        {0, 1, 0, 0},
        {0, 0, 1, 0},
        {h, h, 0, 0},                        /* x and y tie: the y branch takes it */
        {0.6, 0, 0.8, 0},
        {0.9, 0.3, -0.3, sqrt(1 - 0.99)},    /* w small, x largest */
        {-0.2, 0.95, 0.1, sqrt(1 - 0.9525)}, /* w small, y largest */
        {0.1, -0.1, -0.98, sqrt(1 - 0.9804)}, /* w small, z largest */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_both(cases[i]);
}

static void test_quat_exact_cases(void **state)
{
    (void)state;
    /* The identity and the axis half-turns come out exact, with w >= 0 for the identity. */
    double m[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, q[4];
    plush__mat3_to_quat(m, 3, q);
    assert_true(q[0] == 0 && q[1] == 0 && q[2] == 0 && q[3] == 1);
    double rx[9] = {1, 0, 0, 0, -1, 0, 0, 0, -1};
    plush__mat3_to_quat(rx, 3, q);
    assert_true(q[0] == 1 && q[1] == 0 && q[2] == 0 && q[3] == 0);
    float rz[16] = {-1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 1, 0, 5, 6, 7, 1}, fq[4];
    plush__mat3_to_quatf(rz, 4, fq);
    assert_true(fq[0] == 0 && fq[1] == 0 && fq[2] == 1 && fq[3] == 0);
}


/* ---- nearest point ------------------------------------------------------------------------------------ */

static size_t scan_nearest(const float (*pts)[3], size_t n, const float p[3])
{
    size_t best = SIZE_MAX;
    double bd = INFINITY;
    for (size_t i = 0; i < n; i++) {
        double dx = (double)pts[i][0] - p[0], dy = (double)pts[i][1] - p[1], dz = (double)pts[i][2] - p[2];
        double d = dx * dx + dy * dy + dz * dz;
        if (d < bd)
            bd = d, best = i;
    }
    return best;
}

static float rnd(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)(*s >> 8) / (float)(1u << 24);
}

/* Shapes: 0 a cube cloud, 1 a tall thin figure, 2 a flat sheet, 3 a line, 4 points on a coarse lattice
 * (many exact ties and repeats). */
static void shape_points(int shape, float (*pts)[3], size_t n, uint32_t *seed)
{
    for (size_t i = 0; i < n; i++) {
        float x = rnd(seed), y = rnd(seed), z = rnd(seed);
        switch (shape) {
        case 0: pts[i][0] = x, pts[i][1] = y, pts[i][2] = z; break;
        case 1: pts[i][0] = 0.1f * x, pts[i][1] = 20 * y, pts[i][2] = 0.05f * z; break;
        case 2: pts[i][0] = x, pts[i][1] = 3, pts[i][2] = 5 * z; break;
        case 3: pts[i][0] = 7, pts[i][1] = y, pts[i][2] = -2; break;
        default: pts[i][0] = floorf(4 * x), pts[i][1] = floorf(4 * y), pts[i][2] = floorf(2 * z); break;
        }
    }
}

static void test_grid_against_scan(void **state)
{
    (void)state;
    uint32_t seed = 7;
    enum { N = 3000 };
    float(*pts)[3] = malloc(N * sizeof *pts);
    assert_non_null(pts);
    for (int shape = 0; shape < 5; shape++) {
        shape_points(shape, pts, N, &seed);
        pts[17][1] = NAN; /* never the answer */
        pts[18][0] = INFINITY;
        plush__point_grid g;
        assert_true(plush__point_grid_init(&g, pts[0], N, sizeof pts[0]));
        for (int q = 0; q < 2000; q++) {
            /* near the points, and far outside their box */
            float s = q % 4 == 0 ? 60.0f : 1.5f;
            float p[3] = {s * (rnd(&seed) - 0.3f), s * (rnd(&seed) - 0.3f) * (shape == 1 ? 20 : 1), s * (rnd(&seed) - 0.3f)};
            if (shape == 4 && q % 2)
                p[0] = floorf(p[0] * 4) * 0.5f, p[1] = floorf(p[1] * 4) * 0.5f, p[2] = 0.5f; /* between lattice points */
            size_t want = scan_nearest((const float(*)[3])pts, N, p), got = plush__point_grid_nearest(&g, p);
            if (want != got)
                fail_msg("shape %d query %d: grid %zu, scan %zu", shape, q, got, want);
        }
        float nan_p[3] = {NAN, 0, 0};
        assert_int_equal(plush__point_grid_nearest(&g, nan_p), SIZE_MAX);
        plush__point_grid_free(&g);
    }
    free(pts);
}

static void test_grid_small(void **state)
{
    (void)state;
    plush__point_grid g;
    float p[3] = {1, 2, 3};
    assert_true(plush__point_grid_init(&g, NULL, 0, sizeof p));
    assert_int_equal(plush__point_grid_nearest(&g, p), SIZE_MAX);
    plush__point_grid_free(&g);
    const float one[2][3] = {{5, 5, 5}, {5, 5, 5}}; /* equal points: the first */
    assert_true(plush__point_grid_init(&g, one[0], 2, sizeof one[0]));
    assert_int_equal(plush__point_grid_nearest(&g, p), 0);
    plush__point_grid_free(&g);
    plush__point_grid_free(&g); /* twice is fine */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_weld_numbering),
        cmocka_unit_test(test_weld_stream),
        cmocka_unit_test(test_weld_against_scan),
        cmocka_unit_test(test_weld_empty),
        cmocka_unit_test(test_uf_basic),
        cmocka_unit_test(test_uf_against_relabel),
        cmocka_unit_test(test_quat_branches),
        cmocka_unit_test(test_quat_exact_cases),
        cmocka_unit_test(test_grid_against_scan),
        cmocka_unit_test(test_grid_small),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
