/* Surface quality (plush/scene_quality.h) on meshes built here: a cube at rest, scaled, with a corner pushed
 * in, split at a seam, and opened; and the quality export on the small plush. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/scene_quality.h"
#include "plush/scene_sink.h"
#include "support/cli_run.h"
#include "support/mesh_fixture.h"
#include "support/pmx_fixture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The unit cube: 8 corners, 12 outward triangles. */
static const float cube_v[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};
static const uint32_t cube_t[12][3] = {{0, 2, 1}, {0, 3, 2}, {4, 5, 6}, {4, 6, 7}, {0, 1, 5}, {0, 5, 4},
                                       {1, 2, 6}, {1, 6, 5}, {2, 3, 7}, {2, 7, 6}, {3, 0, 4}, {3, 4, 7}};

static plush_quality *make(const float (*v)[3], size_t nv, const uint32_t (*t)[3], size_t nt)
{
    plush_quality *q = NULL;
    plush_diag d = pmx_fx_diag();
    pmx_fx_ok(plush_quality_create(v, nv, t, nt, &q, &d), &d);
    return q;
}

static void test_cube(void **state)
{
    (void)state;
    plush_quality *q = make(cube_v, 8, cube_t, 12);
    plush_quality_figures f;
    plush_quality_measure(q, cube_v, &f);
    assert_int_equal(f.edges, 18); /* 12 cube edges + 6 face diagonals */
    assert_int_equal(f.folds, 18);
    assert_true(fabs(f.strain_p50 - 1) < 0.005 && fabs(f.strain_max - 1) < 1e-6 && f.strain_outside == 0);
    assert_true(f.crease_p99 < 0.1 && f.crease_max < 0.1);
    assert_true(fabs(f.volume_ratio - 1) < 1e-9);
    /* twice the size: every edge 2x, all outside [2/3, 3/2], eight times the volume, no crease */
    float big[8][3];
    for (int i = 0; i < 8; i++)
        for (int k = 0; k < 3; k++)
            big[i][k] = 2 * cube_v[i][k];
    plush_quality_measure(q, (const float(*)[3])big, &f);
    assert_true(fabs(f.strain_p50 - 2) < 0.01 && fabs(f.strain_max - 2) < 1e-6 && f.strain_outside == 1);
    assert_true(f.crease_max < 0.1 && fabs(f.volume_ratio - 8) < 1e-6);
    /* a corner pushed to the middle: folds, less volume */
    float dent[8][3];
    memcpy(dent, cube_v, sizeof dent);
    dent[6][0] = dent[6][1] = dent[6][2] = 0.5f;
    plush_quality_measure(q, (const float(*)[3])dent, &f);
    assert_true(f.crease_max > 30 && f.volume_ratio < 1);
    plush_quality_destroy(q);
}

/* A cube split at a seam (corner 0 twice, as a UV seam does) measures as the closed cube; an open one has
 * no volume. */
static void test_seam_and_open(void **state)
{
    (void)state;
    float v[9][3];
    memcpy(v, cube_v, sizeof cube_v);
    memcpy(v[8], cube_v[0], sizeof v[8]);
    uint32_t t[12][3];
    memcpy(t, cube_t, sizeof t);
    t[10][1] = 8, t[11][0] = 3; /* the left face uses the copy */
    plush_quality *q = make((const float(*)[3])v, 9, (const uint32_t(*)[3])t, 12);
    plush_quality_figures f;
    plush_quality_measure(q, (const float(*)[3])v, &f);
    assert_int_equal(f.edges, 18);
    assert_true(fabs(f.volume_ratio - 1) < 1e-9);
    plush_quality_destroy(q);
    q = make(cube_v, 8, cube_t, 10); /* one face missing */
    plush_quality_measure(q, cube_v, &f);
    assert_true(isnan(f.volume_ratio));
    plush_quality_destroy(q);
}

/* The export: a row per frame, the summary names the worst frame. */
static void test_quality_export(void **state)
{
    (void)state;
    plush_pmx_model *m = mesh_fx_plush();
    plush_diag d = pmx_fx_diag();
    plush_scene *sc = NULL;
    pmx_fx_ok(plush_scene_create(&(plush_scene_desc){.model = m}, &sc, &d), &d);
    plush_scene_output out = {.dir = cli_tmp_dir(), .stem = "q"};
    plush_scene_sink *sink = NULL;
    pmx_fx_ok(plush_scene_sink_create(plush_scene_export_find("quality", 7), sc, &out, &sink, &d), &d);
    plush_scene_run_result r;
    pmx_fx_ok(plush_scene_run(sc, &(plush_scene_run_options){.frames = 12, .sinks = &sink, .sink_count = 1}, &r, &d),
              &d);
    char path[600], text[2048];
    snprintf(path, sizeof path, "%.580s/quality.csv", cli_tmp_dir());
    size_t n = 0;
    char *csv = cli_read_all(path, &n);
    assert_non_null(csv);
    assert_int_equal(cli_count_lines(csv, n), 13); /* the header and 12 frames */
    free(csv);
    plush_scene_sink_describe(sink, text, sizeof text);
    assert_non_null(strstr(text, "worst frame"));
    assert_non_null(strstr(text, "cage at that frame"));
    plush_scene_sink_destroy(sink);
    plush_scene_destroy(sc);
    plush_pmx_free(m);
}

static int setup(void **state)
{
    (void)state;
    return cli_tmp_setup("plush_quality");
}

static int teardown(void **state)
{
    (void)state;
    return cli_tmp_teardown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cube),
        cmocka_unit_test(test_seam_and_open),
        cmocka_unit_test(test_quality_export),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
