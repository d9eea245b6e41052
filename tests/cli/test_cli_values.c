/* Time and values as a user meets them on the command line: physics time is never dropped at low frame rates or
 * high physics rates, and non-finite values in a model are warnings for info and convert and refusals
 * naming the model's byte for the commands that need them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/plush.h"
#include "support/cli_run.h"
#include "support/mesh_fixture.h"
#include "support/pmx_fixture.h"
#include "support/shared_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SENTINEL 7654.3213f

static int setup(void **state)
{
    (void)state;
    return cli_tmp_setup("plush_values");
}

static int teardown(void **state)
{
    (void)state;
    return cli_tmp_teardown();
}

/* The bytes of a PLY frame after its header (the header names the frame number). */
static char *ply_body(const char *path, size_t *len)
{
    size_t n = 0;
    char *all = cli_read_all(path, &n);
    assert_non_null(all);
    const char *end = strstr(all, "end_header\n");
    assert_non_null(end);
    size_t skip = (size_t)(end - all) + 11;
    *len = n - skip;
    memmove(all, all + skip, *len);
    return all;
}

/* Item 4: the bear resting without motion, two seconds as 2 frames at 1 fps and as 60 frames at 30 fps,
 * gives the same mesh (the 1 fps run takes its 60 physics steps per frame, none dropped). */
static void test_low_frame_rate_takes_every_step(void **state)
{
    (void)state;
    char a[512], b[512], pa[600], pb[600];
    cli_tmp_path(a, sizeof a, "fps1");
    cli_tmp_path(b, sizeof b, "fps30");
    cli_result r;
    CLI_RUN(&r, "run", BEAR, "--frames", "3", "--fps", "1", "--export", "ply", "-o", a);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    CLI_RUN(&r, "run", BEAR, "--frames", "61", "--fps", "30", "--export", "ply", "-o", b);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    snprintf(pa, sizeof pa, "%s/frames/frame_00002.ply", a);
    snprintf(pb, sizeof pb, "%s/frames/frame_00060.ply", b);
    size_t na = 0, nb = 0;
    char *da = ply_body(pa, &na), *db = ply_body(pb, &nb);
    assert_true(na == nb);
    assert_memory_equal(da, db, na);
    free(da);
    free(db);
}

/* Item 4: 10000 Hz under 30 fps is 333 steps a frame; all are taken, so the run has nothing to warn
 * about (a dropped step would be a warning line on stderr). */
static void test_high_physics_rate_runs_full_time(void **state)
{
    (void)state;
    char out[512];
    cli_tmp_path(out, sizeof out, "hz");
    cli_result r;
    CLI_RUN(&r, "run", BEAR, "--frames", "3", "--physics-hz", "10000", "--fps", "30", "--export", "ply", "-o", out);
    cli_expect_code(&r, 0);
    assert_int_equal(cli_count_lines(r.err, r.err_len), 0);
    cli_result_free(&r);
}

/* ---- item 5: non-finite values -------------------------------------------------------------- */

/* The small plush, written by plush to path, with *field set to bad; returns the byte of the value
 * (found through a sentinel written first). */
static size_t write_plush_with(const char *path, plush_pmx_model *m, float *field, float bad)
{
    *field = SENTINEL;
    plush_buf b = pmx_fx_write_ok(m, NULL, NULL);
    const float s = SENTINEL;
    size_t at = pmx_fx_find_unique(b.data, b.size, &s, 4);
    memcpy(b.data + at, &bad, 4);
    cli_write_all(path, b.data, b.size);
    plush_buf_free(&b);
    return at;
}

/* info reads and warns at the byte (exit 0), convert keeps the bytes, run and pose refuse naming the
 * model file and the byte, and run leaves no OUTDIR. */
static void expect_refused_by_run_and_pose(const char *model, size_t at, bool info_warns)
{
    char out[512], conv[512], mesh[512], byte[64];
    snprintf(byte, sizeof byte, "(at byte %zu)", at);
    cli_tmp_path(out, sizeof out, "out");
    cli_tmp_path(conv, sizeof conv, "converted.pmx");
    cli_tmp_path(mesh, sizeof mesh, "pose.obj");
    cli_result r;
    CLI_RUN(&r, "info", model);
    cli_expect_code(&r, 0);
    if (info_warns)
        assert_true(strstr(r.out, byte) || strstr(r.err, byte));
    cli_result_free(&r);
    CLI_RUN(&r, "convert", model, "-o", conv);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    size_t na = 0, nb = 0;
    char *a = cli_read_all(model, &na), *b = cli_read_all(conv, &nb);
    assert_true(a && b && na == nb);
    assert_memory_equal(a, b, na);
    free(a);
    free(b);
    CLI_RUN(&r, "run", model, "--frames", "2", "-o", out);
    cli_expect_one_error_line(&r);
    assert_non_null(strstr(r.err, byte));
    assert_non_null(strstr(r.err, "m.pmx"));
    assert_null(strstr(r.err, ".ply"));
    cli_result_free(&r);
    assert_false(cli_exists(out));
    CLI_RUN(&r, "pose", model, "--frame", "0", "--mesh", mesh);
    cli_expect_one_error_line(&r);
    assert_non_null(strstr(r.err, byte));
    assert_non_null(strstr(r.err, "m.pmx"));
    cli_result_free(&r);
    assert_false(cli_exists(mesh));
}

static void test_non_finite_vertex(void **state)
{
    (void)state;
    char model[512];
    cli_tmp_path(model, sizeof model, "m.pmx");
    plush_pmx_model *m = mesh_fx_plush();
    size_t at = write_plush_with(model, m, &m->vertices[0].position[1], NAN);
    expect_refused_by_run_and_pose(model, at, true);
    plush_pmx_free(m);
}

/* A BDEF4 weight of 1e38 is out of range: the same. */
static void test_weight_out_of_range(void **state)
{
    (void)state;
    char model[512];
    cli_tmp_path(model, sizeof model, "m.pmx");
    plush_pmx_model *m = mesh_fx_plush();
    plush_pmx_vertex *v = &m->vertices[5];
    v->weight_type = PLUSH_PMX_BDEF4;
    v->bones[1] = 0, v->bones[2] = v->bones[3] = -1;
    v->weights[0] = 0.5f, v->weights[1] = 0.5f;
    size_t at = write_plush_with(model, m, &v->weights[2], 1e38f);
    expect_refused_by_run_and_pose(model, at, true);
    plush_pmx_free(m);
}

/* A NaN in a vertex of the cage (the TriMesh soft body's material): the vertex is named, not "no
 * TriMesh soft body". */
static void test_non_finite_cage_vertex(void **state)
{
    (void)state;
    char model[512];
    cli_tmp_path(model, sizeof model, "m.pmx");
    plush_pmx_model *m = mesh_fx_plush();
    uint32_t cage_vertex = m->indices[m->materials[0].index_count];
    size_t at = write_plush_with(model, m, &m->vertices[cage_vertex].position[0], INFINITY);
    expect_refused_by_run_and_pose(model, at, true);
    plush_pmx_free(m);
}

/* Bones 0 and 1 each other's parent: info warns at bone 0's parent index, run and pose refuse there. */
static void test_bone_cycle(void **state)
{
    (void)state;
    char model[512];
    cli_tmp_path(model, sizeof model, "m.pmx");
    plush_pmx_model *m = mesh_fx_plush();
    m->bones[0].parent = 1;
    assert_int_equal(m->bones[1].parent, 0);
    size_t at = write_plush_with(model, m, &m->bones[0].position[2], 0.0f) + 4; /* z, then the parent */
    expect_refused_by_run_and_pose(model, at, true);
    plush_pmx_free(m);
}

/* A rigid body with a NaN rotation (as a 54k-vertex model from the wild has): run leaves it out and
 * simulates the rest (exit 0). */
static void test_nan_rigid_body_runs(void **state)
{
    (void)state;
    char model[512], out[512];
    cli_tmp_path(model, sizeof model, "m.pmx");
    cli_tmp_path(out, sizeof out, "out");
    plush_pmx_model *m = mesh_fx_plush();
    plush_pmx_rigid_body *rb = pmx_fx_rigid_bodies(m, 2);
    for (int i = 0; i < 2; i++) {
        rb[i].bone = 1;
        rb[i].mode = 0;
        rb[i].size[0] = 0.2f;
        rb[i].group = 1;
        rb[i].mask = 0;
    }
    size_t at = write_plush_with(model, m, &rb[1].rotation[2], NAN);
    char byte[64];
    snprintf(byte, sizeof byte, "(at byte %zu)", at);
    cli_result r;
    CLI_RUN(&r, "run", model, "--frames", "3", "--export", "ply", "-o", out);
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.err, byte));
    cli_result_free(&r);
    CLI_RUN(&r, "info", model);
    cli_expect_code(&r, 0);
    assert_true(strstr(r.out, byte) || strstr(r.err, byte));
    cli_result_free(&r);
    plush_pmx_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_low_frame_rate_takes_every_step, setup, teardown),
        cmocka_unit_test_setup_teardown(test_high_physics_rate_runs_full_time, setup, teardown),
        cmocka_unit_test_setup_teardown(test_non_finite_vertex, setup, teardown),
        cmocka_unit_test_setup_teardown(test_weight_out_of_range, setup, teardown),
        cmocka_unit_test_setup_teardown(test_non_finite_cage_vertex, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bone_cycle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nan_rigid_body_runs, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
