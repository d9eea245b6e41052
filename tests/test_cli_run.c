/* plush run and plush demo, run as a user runs them: the demo bear through the main job, its baked PMX 2.0
 * + VMD replayed by plush pose (the way an MMD player skins) against the proxy-skinned mesh, bones mode on
 * a real model, determinism, and the errors a user can meet. The bear is made by `make` (proxies/). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/plush.h"
#include "support/cli_run.h"
#include "support/shared_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALICIA SHARED_MMD "/alicia/Alicia_solid.pmx"
#define MOTION_0046 SHARED_MMD "/mmd_base/サンプルモーション_0046.vmd"
#define BEAR "proxies/plush_bear.pmx"
#define BEAR_VMD "proxies/plush_bear_shake.vmd"
#define BEAR_IM2 "proxies/plush_bear.im2"

static int setup(void **state)
{
    (void)state;
    return cli_tmp_setup("plush_run");
}

static int teardown(void **state)
{
    (void)state;
    return cli_tmp_teardown();
}

/* The "v x y z" lines of an OBJ file. */
static float (*obj_positions(const char *path, size_t *count))[3]
{
    size_t len = 0;
    char *text = cli_read_all(path, &len);
    assert_non_null(text);
    size_t cap = 1024, n = 0;
    float(*v)[3] = malloc(cap * sizeof *v);
    for (char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (line[0] != 'v' || line[1] != ' ')
            continue;
        if (n == cap)
            v = realloc(v, (cap *= 2) * sizeof *v);
        assert_int_equal(sscanf(line + 2, "%f %f %f", &v[n][0], &v[n][1], &v[n][2]), 3);
        n++;
    }
    free(text);
    *count = n;
    return v;
}

static void test_bake_replays_as_the_proxy_run(void **state)
{
    (void)state;
    char out[512], pmx[600], vmd[600], frame[600], posed[600];
    cli_tmp_path(out, sizeof out, "bear");
    cli_result r;
    CLI_RUN(&r, "run", BEAR, "--motion", BEAR_VMD, "--im2", BEAR_IM2, "--frames", "101", "--every", "50", "--export",
            "pmx+vmd,obj", "-o", out);
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.out, "frames          101"));
    cli_result_free(&r);
    snprintf(pmx, sizeof pmx, "%s/plush_bear_plush.pmx", out);
    snprintf(vmd, sizeof vmd, "%s/plush_bear_plush.vmd", out);
    snprintf(frame, sizeof frame, "%s/frames/frame_00100.obj", out);
    cli_tmp_path(posed, sizeof posed, "posed.obj");
    assert_true(cli_exists(pmx) && cli_exists(vmd) && cli_exists(frame));
    char f0[600];
    snprintf(f0, sizeof f0, "%s/frames/frame_00050.obj", out);
    assert_true(cli_exists(f0));
    snprintf(f0, sizeof f0, "%s/frames/frame_00001.obj", out);
    assert_false(cli_exists(f0)); /* --every 50 */

    /* the baked files are plain PMX 2.0 with one pseudo-bone per cage triangle */
    plush_diag d = {0};
    plush_diag_reset(&d);
    plush_pmx_model *m = NULL;
    assert_int_equal(plush_pmx_read_file(pmx, NULL, &m, &d), PLUSH_OK);
    assert_true(m->version == 2.0f);
    assert_int_equal(m->soft_body_count, 0);
    assert_int_equal(m->bone_count, 12 + 1 + 1000);
    size_t baked_vertices = m->vertex_count;
    plush_pmx_free(m);

    /* replayed by the bone pipeline, the bake gives the proxy-skinned mesh of the run */
    CLI_RUN(&r, "pose", pmx, "--motion", vmd, "--frame", "100", "--mesh", posed);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    size_t na = 0, nb = 0;
    float(*a)[3] = obj_positions(frame, &na), (*b)[3] = obj_positions(posed, &nb);
    assert_int_equal(nb, baked_vertices);
    assert_true(na > nb); /* the run's mesh still has the cage's vertices, after the bear's own */
    double worst = 0, moved = 0;
    plush_pmx_model *bear = NULL;
    assert_int_equal(plush_pmx_read_file(BEAR, NULL, &bear, &d), PLUSH_OK);
    for (size_t i = 0; i < nb; i++)
        for (int k = 0; k < 3; k++) {
            worst = fmax(worst, fabs((double)a[i][k] - b[i][k]));
            moved = fmax(moved, fabs((double)a[i][k] - bear->vertices[i].position[k]));
        }
    assert_true(moved > 1.0);    /* the bear did move */
    assert_true(worst < 1e-3);   /* and the bake reproduces it (the OBJ's 9 digits included) */
    plush_pmx_free(bear);
    free(a);
    free(b);
}

static void test_deterministic(void **state)
{
    (void)state;
    char o1[512], o2[512], v1[600], v2[600];
    cli_tmp_path(o1, sizeof o1, "one");
    cli_tmp_path(o2, sizeof o2, "two");
    cli_result r;
    CLI_RUN(&r, "run", BEAR, "--motion", BEAR_VMD, "--frames", "40", "-o", o1);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    CLI_RUN(&r, "run", BEAR, "--motion", BEAR_VMD, "--frames", "40", "-o", o2);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    snprintf(v1, sizeof v1, "%s/plush_bear_plush.vmd", o1);
    snprintf(v2, sizeof v2, "%s/plush_bear_plush.vmd", o2);
    size_t l1 = 0, l2 = 0;
    char *a = cli_read_all(v1, &l1), *b = cli_read_all(v2, &l2);
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(l1, l2);
    assert_memory_equal(a, b, l1);
    free(a);
    free(b);
}

static void test_bones_mode_on_alicia(void **state)
{
    (void)state;
    char out[512], p[600];
    cli_tmp_path(out, sizeof out, "alicia");
    cli_result r;
    CLI_RUN(&r, "run", ALICIA, "--motion", MOTION_0046, "--mode", "bones", "--frames", "6", "--every", "5", "-o",
            out);
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.out, "mode bones"));
    cli_result_free(&r);
    snprintf(p, sizeof p, "%s/frames/frame_00005.ply", out);
    assert_true(cli_exists(p));
    snprintf(p, sizeof p, "%s/frames/frame_00004.ply", out);
    assert_false(cli_exists(p));
}

static void test_errors(void **state)
{
    (void)state;
    char out[512], junk[512], p[600];
    cli_tmp_path(out, sizeof out, "err");
    cli_result r;
    /* proxy mode needs a TriMesh soft body */
    CLI_RUN(&r, "run", ALICIA, "-o", out);
    cli_expect_one_error_line(&r);
    assert_non_null(strstr(r.err, "no TriMesh soft body"));
    assert_non_null(strstr(r.err, "plush attach"));
    cli_result_free(&r);
    snprintf(p, sizeof p, "%s/Alicia_solid_plush.pmx", out);
    assert_false(cli_exists(p));
    /* a broken model */
    cli_tmp_path(junk, sizeof junk, "junk.pmx");
    cli_write_all(junk, "PMX \0\0\0@", 8);
    CLI_RUN(&r, "run", junk, "-o", out);
    cli_expect_one_error_line(&r);
    assert_non_null(strstr(r.err, "junk.pmx"));
    cli_result_free(&r);
    /* a broken motion */
    CLI_RUN(&r, "run", BEAR, "--motion", junk, "-o", out);
    cli_expect_one_error_line(&r);
    cli_result_free(&r);
    /* usage */
    CLI_RUN(&r, "run", BEAR);
    cli_expect_code(&r, 2);
    cli_result_free(&r);
    CLI_RUN(&r, "run", BEAR, "--mode", "bones", "--export", "pmx+vmd", "-o", out);
    cli_expect_code(&r, 2);
    cli_result_free(&r);
    CLI_RUN(&r, "run", BEAR, "--export", "gltf", "-o", out);
    cli_expect_code(&r, 2);
    cli_result_free(&r);
    CLI_RUN(&r, "run", BEAR, "--frames", "1.5", "-o", out);
    cli_expect_code(&r, 2);
    cli_result_free(&r);
    CLI_RUN(&r, "run", "--help");
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.out, "--export"));
    cli_result_free(&r);
    /* the output directory cannot be made */
    snprintf(p, sizeof p, "%s/no/such/dir", cli_tmp_dir());
    CLI_RUN(&r, "run", BEAR, "--frames", "2", "-o", p);
    cli_expect_one_error_line(&r);
    cli_result_free(&r);
}

static void test_demo(void **state)
{
    (void)state;
    char out[512], p[600];
    cli_tmp_path(out, sizeof out, "demo");
    cli_result r;
    CLI_RUN(&r, "demo", "-o", out);
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.out, "open the results"));
    cli_result_free(&r);
    const char *files[] = {"plush_bear.pmx", "plush_bear_shake.vmd", "plush_bear.im2", "plush_bear_plush.pmx",
                           "plush_bear_plush.vmd", "frames/frame_00000.ply", "frames/frame_00240.ply"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(p, sizeof p, "%s/%s", out, files[i]);
        assert_true(cli_exists(p));
    }
    /* the demo's inputs are the generator's files, byte for byte */
    snprintf(p, sizeof p, "%s/plush_bear.pmx", out);
    size_t l1 = 0, l2 = 0;
    char *a = cli_read_all(p, &l1), *b = cli_read_all(BEAR, &l2);
    assert_int_equal(l1, l2);
    assert_memory_equal(a, b, l1);
    free(a);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_bake_replays_as_the_proxy_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deterministic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bones_mode_on_alicia, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_demo, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
