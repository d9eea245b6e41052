/* Surface quality (plush/quality.h) on meshes built here: a cube at rest, scaled, with a corner pushed
 * in, split at a seam, and opened; and the quality export on the small plush. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/quality.h"
#include "plush/sys/quality.h"
#include "plush/scene_sink.h"
#include "plush/vmd.h"
#include "plush/sys/core.h"
#include "scene/internal.h"
#include "support/cli_run.h"
#include "support/mesh_fixture.h"
#include "support/pmx_fixture.h"
#include "support/scene_fixture.h"
#include "test_scene_quality_old.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    /* a closed cube beside an open sheet (a toy with a skirt): the cube's volume is measured, as plush
     * compare measures the closed pieces; squashing the cube shows, moving the sheet does not */
    float w[12][3];
    memcpy(w, cube_v, sizeof cube_v);
    const float sheet[4][3] = {{3, 0, 0}, {4, 0, 0}, {4, 1, 0}, {3, 1, 0}};
    memcpy(w[8], sheet, sizeof sheet);
    uint32_t u[14][3];
    memcpy(u, cube_t, sizeof cube_t);
    const uint32_t st[2][3] = {{8, 9, 10}, {8, 10, 11}};
    memcpy(u[12], st, sizeof st);
    q = make((const float(*)[3])w, 12, (const uint32_t(*)[3])u, 14);
    for (int k = 4; k < 8; k++)
        w[k][2] = 0.5f;   /* the cube squashed to half its height */
    w[10][2] = 2;         /* and the sheet lifted at a corner */
    plush_quality_measure(q, (const float(*)[3])w, &f);
    assert_true(fabs(f.volume_ratio - 0.5) < 1e-6);
    plush_quality_destroy(q);
}

/* Two layers: the cube's faces, and a second copy of its first corner (vertex 8, an inner layer's vertex
 * with faces of its own that are not measured). The tear is the copy's distance from the corner it shared
 * its rest position with, whichever moves; a dropped vertex takes no part. */
static void test_layers_tear(void **state)
{
    (void)state;
    float v[9][3];
    memcpy(v, cube_v, sizeof cube_v);
    memcpy(v[8], cube_v[0], sizeof v[8]);
    plush_quality *q = make((const float(*)[3])v, 9, cube_t, 12);
    plush_quality_figures f;
    plush_quality_measure(q, (const float(*)[3])v, &f);
    assert_true(f.tear == 0);
    v[8][1] += 0.25f; /* the inner layer's vertex comes away */
    plush_quality_measure(q, (const float(*)[3])v, &f);
    assert_true(fabs(f.tear - 0.25) < 1e-6);
    memcpy(v[8], cube_v[0], sizeof v[8]);
    v[0][0] -= 0.5f; /* or the measured corner does */
    plush_quality_measure(q, (const float(*)[3])v, &f);
    assert_true(fabs(f.tear - 0.5) < 1e-6);
    assert_int_equal(f.edges, 18); /* the copy measures no strain of its own */
    bool dropped[9] = {false};
    dropped[8] = true;
    plush_quality_drop_layers(q, dropped);
    plush_quality_measure(q, (const float(*)[3])v, &f);
    assert_true(f.tear == 0);
    plush_quality_destroy(q);
}

static uint32_t lcg(uint32_t *seed)
{
    *seed = *seed * 1664525u + 1013904223u;
    return *seed >> 8;
}

/* Every percentile at most the maximum, and in order. */
static void assert_in_order(const plush_quality_figures *f)
{
    assert_true(f->strain_p50 <= f->strain_p99 && f->strain_p99 <= f->strain_p999);
    assert_true(f->strain_p999 <= f->strain_max);
    assert_true(f->crease_p99 <= f->crease_max);
}

/* No percentile above the maximum, whatever the values: every edge at one strain (which a bin's middle
 * overshoots), a sweep of uniform scales across many bins, a crease smaller than half a crease bin, and
 * the small plush jittered from rest to torn. */
/* An edge a millionth of the others' length at rest (two vertices of a strip a float step apart) is not
 * measured -- any movement of its ends would read as a strain of thousands -- and create warns of it. */
static void test_short_edges_not_measured(void **state)
{
    (void)state;
    /* a strip of two triangles, then a third sharing edge 1-2 whose far corner lies 1e-6 from corner 2 */
    float v[5][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {0, 1.000001f, 0}};
    const uint32_t t[3][3] = {{0, 1, 2}, {1, 3, 2}, {1, 2, 4}};
    plush_quality *q = NULL;
    plush_diag d = pmx_fx_diag();
    pmx_fx_ok(plush_quality_create((const float(*)[3])v, 5, t, 3, &q, &d), &d);
    assert_int_equal(d.warning_count, 1);
    assert_non_null(strstr(d.warnings[0], "1 of the surface's 7 edges are shorter than a thousandth"));
    plush_quality_figures f;
    v[4][0] += 0.01f; /* the short edge's end moves a hundredth: ten thousand times its length */
    plush_quality_measure(q, (const float(*)[3])v, &f);
    assert_int_equal(f.short_edges, 1);
    assert_int_equal(f.edges, 6);
    assert_true(f.strain_max < 1.01);
    plush_quality_destroy(q);
}

/* A sheet of two layers sharing positions (a cape's outer and inner cloth: vertices 0-3 and 4-7, the inner
 * faces wound the other way) folded along its diagonal: the crease is measured (each welded face once),
 * not read as 0 because every edge has four faces. */
static void test_two_layers_crease(void **state)
{
    (void)state;
    float v[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}};
    const uint32_t t[4][3] = {{0, 1, 2}, {0, 2, 3}, {4, 6, 5}, {4, 7, 6}};
    plush_quality *q = make((const float(*)[3])v, 8, t, 4);
    plush_quality_figures f;
    v[3][2] = v[7][2] = 1; /* corner 3 (both layers' copies) lifted: a 90 degree fold along 0-2 */
    v[3][0] = v[7][0] = 0.5f, v[3][1] = v[7][1] = 0.5f;
    plush_quality_measure(q, (const float(*)[3])v, &f);
    print_message("      folded two-layer sheet: crease max %.1f deg over %zu folds\n", f.crease_max, f.folds);
    assert_int_equal(f.folds, 1);
    assert_true(f.crease_max > 45);
    assert_true(f.tear == 0);
    plush_quality_destroy(q);
}

/* A fold between two faces pinned at every corner is the bones' (the back of a bent knee): left out of the
 * crease once held. A node is held only when every vertex welded into it is. */
static void test_held_folds(void **state)
{
    (void)state;
    /* the unit square split along 0-2, a third face across 2-3 to vertex 4, and vertex 5 a copy of corner 1 */
    float v[6][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0.5f, 2, 0}, {1, 0, 0}};
    const uint32_t t[3][3] = {{0, 1, 2}, {0, 2, 3}, {3, 2, 4}};
    bool held[6] = {true, true, true, true, false, false};
    for (int copy_held = 0; copy_held < 2; copy_held++) {
        plush_quality *q = make((const float(*)[3])v, 6, t, 3);
        float w[6][3];
        memcpy(w, v, sizeof w);
        w[1][0] = w[5][0] = 0.5f, w[1][1] = w[5][1] = 0.5f, w[1][2] = w[5][2] = 0.7f; /* corner 1 folded up */
        plush_quality_figures f;
        plush_quality_measure(q, (const float(*)[3])w, &f);
        assert_int_equal(f.folds, 2);
        assert_true(f.crease_max > 45);
        held[5] = copy_held;
        assert_int_equal(plush_quality_hold_folds(q, held), copy_held ? 1 : 0);
        plush_quality_measure(q, (const float(*)[3])w, &f);
        assert_int_equal(f.folds, copy_held ? 1 : 2);
        if (copy_held)
            assert_true(f.crease_max < 1e-3); /* the fold left is flat */
        else
            assert_true(f.crease_max > 45);
        plush_quality_destroy(q);
    }
}

static void test_percentiles_at_most_max(void **state)
{
    (void)state;
    plush_quality *q = make(cube_v, 8, cube_t, 12);
    plush_quality_figures f;
    plush_quality_measure(q, cube_v, &f);
    assert_in_order(&f);
    assert_true(f.strain_max == 1 && f.strain_p50 == 1); /* at rest: exactly 1, not the bin's middle */
    float p[8][3];
    for (int k = 0; k < 600; k++) {
        float scale = 0.9f + 0.00037f * (float)k;
        for (int i = 0; i < 8; i++)
            for (int j = 0; j < 3; j++)
                p[i][j] = scale * cube_v[i][j];
        plush_quality_measure(q, (const float(*)[3])p, &f);
        assert_in_order(&f);
    }
    /* a corner moved by a hair: creases of a few hundredths of a degree */
    memcpy(p, cube_v, sizeof p);
    p[6][0] += 2e-4f;
    plush_quality_measure(q, (const float(*)[3])p, &f);
    assert_true(f.crease_max > 0 && f.crease_max < 0.025);
    assert_in_order(&f);
    plush_quality_destroy(q);

    plush_pmx_model *m = mesh_fx_plush();
    size_t nv = m->vertex_count, nt = m->index_count / 3;
    float(*rest)[3] = malloc(nv * sizeof *rest), (*pos)[3] = malloc(nv * sizeof *pos);
    uint32_t(*tris)[3] = malloc(nt * sizeof *tris);
    assert_non_null(rest), assert_non_null(pos), assert_non_null(tris);
    for (size_t v = 0; v < nv; v++)
        memcpy(rest[v], m->vertices[v].position, sizeof rest[v]);
    for (size_t t = 0; t < nt; t++)
        for (int k = 0; k < 3; k++)
            tris[t][k] = (uint32_t)m->indices[3 * t + (size_t)k];
    q = make((const float(*)[3])rest, nv, (const uint32_t(*)[3])tris, nt);
    uint32_t seed = 11;
    for (int frame = 0; frame < 60; frame++) {
        float amp = frame < 20 ? 1e-5f * (float)frame : 0.003f * (float)(frame - 20);
        for (size_t v = 0; v < nv; v++)
            for (int k = 0; k < 3; k++)
                pos[v][k] = rest[v][k] + amp * ((float)(lcg(&seed) % 2001) / 1000 - 1);
        plush_quality_measure(q, (const float(*)[3])pos, &f);
        assert_in_order(&f);
        /* the strain alone (the author's surface's measure): the same strain figures, nothing else */
        plush_quality_figures s;
        plush_quality_measure_strain(q, (const float(*)[3])pos, &s);
        assert_true(s.strain_p50 == f.strain_p50 && s.strain_p99 == f.strain_p99 && s.strain_p999 == f.strain_p999 &&
                    s.strain_max == f.strain_max && s.strain_outside == f.strain_outside && s.edges == f.edges);
        assert_true(s.crease_p99 == 0 && s.crease_max == 0 && s.tear == 0 && isnan(s.volume_ratio));
    }
    plush_quality_destroy(q);
    free(rest), free(pos), free(tris);
    plush_pmx_free(m);
}

/* The figures as printed: in each "strain p50 A p99 B p99.9 C max D" and "crease p99 E max F" of text,
 * no percentile reads above its maximum. Returns how many groups it found. */
static int assert_printed_in_order(const char *text)
{
    int groups = 0;
    for (const char *s = strstr(text, "strain p50 "); s; s = strstr(s + 1, "strain p50 ")) {
        double v[4];
        assert_int_equal(sscanf(s, "strain p50 %lf p99 %lf p99.9 %lf max %lf", &v[0], &v[1], &v[2], &v[3]), 4);
        assert_true(v[0] <= v[1] && v[1] <= v[2] && v[2] <= v[3]);
        groups++;
    }
    for (const char *s = strstr(text, "crease p99 "); s; s = strstr(s + 1, "crease p99 ")) {
        double v[2];
        assert_int_equal(sscanf(s, "crease p99 %lf max %lf", &v[0], &v[1]), 2);
        assert_true(v[0] <= v[1]);
        groups++;
    }
    return groups;
}

/* The surface bar: each of its three figures at its limit meets it, just over misses it, and a figure that is
 * not a number misses it too. */
static void test_surface_bar(void **state)
{
    (void)state;
    plush_quality_figures f = {.strain_p999 = 1.5, .strain_outside = 0.005, .crease_p99 = 30};
    assert_true(plush_quality_meets_bar(&f));
    plush_quality_figures g = f;
    g.strain_p999 = 1.5001;
    assert_false(plush_quality_meets_bar(&g));
    g = f, g.strain_outside = 0.0051;
    assert_false(plush_quality_meets_bar(&g));
    g = f, g.crease_p99 = 30.01;
    assert_false(plush_quality_meets_bar(&g));
    g = f, g.crease_p99 = NAN;
    assert_false(plush_quality_meets_bar(&g));
    g = f, g.volume_ratio = NAN; /* an open surface has no volume: the bar does not look at it */
    assert_true(plush_quality_meets_bar(&g));
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
    assert_int_equal(assert_printed_in_order(text), 4); /* strain and crease, surface and cage */
    /* the plush at rest under gravity meets the surface bar at every frame, and says so */
    uint64_t measured = 0;
    assert_int_equal(plush_scene_quality_sink_over(sink, &measured), 0);
    assert_int_equal(measured, 12);
    assert_non_null(strstr(text, "): every frame meets it"));
    plush_scene_sink_destroy(sink);
    plush_scene_destroy(sc);
    plush_pmx_free(m);
}

/* The summary's worst frame is the one of the largest p99.9 strain; a run whose frames miss the bar by edges
 * squeezed below 2/3 (or a crease) alone can have its worst frame meet it. The summary then also names the
 * frame furthest over the bar and the figures that miss there: a sheet half on a bone that slides toward the
 * other half by three quarters of a row and back squeezes the row between (p99.9 stays 1), and before the
 * summary showed only a frame that met the bar beside "N of M frames miss it". */
static void test_quality_furthest_miss(void **state)
{
    (void)state;
    plush_pmx_model *m = mesh_fx_model(2);
    m->bones[1].name = pmx_fx_str(m, "half");
    mesh_fx g = mesh_fx_grid(10, 2.0f); /* rows 0.2 apart */
    mesh_fx_add_material(m, "sheet", &g, 0);
    for (size_t v = 0; v < m->vertex_count; v++)
        if (m->vertices[v].position[0] > 0.01f)
            m->vertices[v].bones[0] = 1;
    mesh_fx_free(&g);
    plush_vmd_motion *v = plush_vmd_create();
    assert_non_null(v);
    v->bone_keys = plush_arena_array(plush_vmd_arena(v), 3, sizeof *v->bone_keys);
    assert_non_null(v->bone_keys);
    v->bone_key_count = 3;
    for (int k = 0; k < 3; k++) {
        plush_vmd_bone_key *key = &v->bone_keys[k];
        memset(key, 0, sizeof *key);
        key->name = (plush_str){.s = "half", .len = 4};
        key->frame = (uint32_t)(5 * k);
        key->translation[0] = k == 1 ? -0.15f : 0.0f;
        key->rotation[3] = 1;
        pmx_fx_linear_curves(key->interpolation);
    }
    plush_diag d = pmx_fx_diag();
    plush_scene *sc = NULL;
    pmx_fx_ok(plush_scene_create(&(plush_scene_desc){.model = m, .motion = v, .mode = PLUSH_SCENE_BONES,
                                                     .no_physics = true},
                                 &sc, &d),
              &d);
    plush_scene_sink *sink = NULL;
    pmx_fx_ok(plush_scene_sink_create(plush_scene_export_find("quality", 7), sc,
                                      &(plush_scene_output){.dir = cli_tmp_dir(), .stem = "q"}, &sink, &d),
              &d);
    plush_scene_run_result r;
    pmx_fx_ok(plush_scene_run(sc, &(plush_scene_run_options){.frames = 11, .sinks = &sink, .sink_count = 1}, &r, &d),
              &d);
    char text[2048];
    plush_scene_sink_describe(sink, text, sizeof text);
    print_message("      %s\n", text);
    int64_t worst = -1;
    plush_quality_figures wf, wc;
    assert_true(plush_scene_quality_sink_worst(sink, &worst, &wf, &wc));
    assert_true(plush_quality_meets_bar(&wf));   /* the worst frame by p99.9 meets the bar */
    uint64_t measured = 0;
    assert_true(plush_scene_quality_sink_over(sink, &measured) > 0); /* and frames miss it */
    const char *far = strstr(text, "; furthest over it frame ");
    assert_non_null(far);
    long long frame = -1;
    double p999 = 0, beyond = 0, crease = 0;
    assert_int_equal(sscanf(far, "; furthest over it frame %lld: p99.9 %lf, %lf%% of edges beyond 1.5x, 99th percentile "
                                 "crease %lf deg", &frame, &p999, &beyond, &crease), 4);
    assert_true(frame >= 3 && frame <= 7); /* a frame of the squeeze (beyond 2/3 from frame 3 to 7) */
    assert_true(beyond > 100 * 0.005);
    plush_scene_sink_destroy(sink);
    plush_scene_destroy(sc);
    plush_vmd_free(v);
    plush_pmx_free(m);
}

/* Every figure of two measures, bit for bit (a NaN volume equals a NaN volume). */
static void assert_same(const plush_quality_figures *a, const plush_quality_figures *b)
{
    const double x[8] = {a->strain_p50, a->strain_p99, a->strain_p999, a->strain_max,
                         a->strain_outside, a->crease_p99, a->crease_max, a->volume_ratio};
    const double y[8] = {b->strain_p50, b->strain_p99, b->strain_p999, b->strain_max,
                         b->strain_outside, b->crease_p99, b->crease_max, b->volume_ratio};
    for (int k = 0; k < 8; k++)
        assert_true(memcmp(&x[k], &y[k], sizeof x[k]) == 0 || (isnan(x[k]) && isnan(y[k])));
    assert_int_equal(a->edges, b->edges);
    assert_int_equal(a->folds, b->folds);
}

/* The rewritten kernels (no gather, one face pass, compact edge and fold arrays, one percentile scan) give
 * exactly the old path's figures: the small plush's whole mesh, seams and open pieces included, at rest,
 * scaled, jittered hard enough to fold and tear, and with a face collapsed. */
static void test_kernels_equal_old(void **state)
{
    (void)state;
    plush_pmx_model *m = mesh_fx_plush();
    size_t nv = m->vertex_count, nt = m->index_count / 3;
    float(*rest)[3] = malloc(nv * sizeof *rest), (*p)[3] = malloc(nv * sizeof *p);
    uint32_t(*tris)[3] = malloc(nt * sizeof *tris);
    assert_non_null(rest), assert_non_null(p), assert_non_null(tris);
    for (size_t v = 0; v < nv; v++)
        memcpy(rest[v], m->vertices[v].position, sizeof rest[v]);
    for (size_t t = 0; t < nt; t++)
        for (int k = 0; k < 3; k++)
            tris[t][k] = (uint32_t)m->indices[3 * t + (size_t)k];
    plush_quality *q = make((const float(*)[3])rest, nv, (const uint32_t(*)[3])tris, nt);
    old_quality *o = NULL;
    plush_diag d = pmx_fx_diag();
    pmx_fx_ok(old_quality_create((const float(*)[3])rest, nv, (const uint32_t(*)[3])tris, nt, &o, &d), &d);
    uint32_t seed = 7;
    for (int frame = 0; frame < 40; frame++) {
        float amp = frame == 0 ? 0 : 0.002f * (float)frame;
        for (size_t v = 0; v < nv; v++)
            for (int k = 0; k < 3; k++)
                p[v][k] = rest[v][k] * (1 + 0.01f * (float)(frame % 5)) + amp * ((float)(lcg(&seed) % 2001) / 1000 - 1);
        if (frame == 39) /* a face with no area: NaN normals, left out of the crease */
            memcpy(p[tris[0][1]], p[tris[0][0]], sizeof p[0]), memcpy(p[tris[0][2]], p[tris[0][0]], sizeof p[0]);
        plush_quality_figures a, b;
        plush_quality_measure(q, (const float(*)[3])p, &a);
        old_quality_measure(o, (const float(*)[3])p, &b);
        assert_same(&a, &b);
    }
    /* the cube cases too (closed, seamed, open) */
    const size_t counts[2] = {12, 10};
    for (int i = 0; i < 2; i++) {
        plush_quality *qc = make(cube_v, 8, cube_t, counts[i]);
        old_quality *oc = NULL;
        pmx_fx_ok(old_quality_create(cube_v, 8, cube_t, counts[i], &oc, &d), &d);
        float dent[8][3];
        memcpy(dent, cube_v, sizeof dent);
        dent[6][0] = dent[6][1] = 0.5f;
        plush_quality_figures a, b;
        plush_quality_measure(qc, (const float(*)[3])dent, &a);
        old_quality_measure(oc, (const float(*)[3])dent, &b);
        assert_same(&a, &b);
        plush_quality_destroy(qc);
        old_quality_destroy(oc);
    }
    plush_quality_destroy(q);
    old_quality_destroy(o);
    free(rest), free(p), free(tris);
    plush_pmx_free(m);
}

/* A sink of the test's own: the old path measured in line, the export's CSV rows as it would write them. */
typedef struct ref_sink {
    plush_scene_sink base;
    old_quality *surface, *cage;
    char rows[64][512];
    double swing[64][4]; /* the swings and the skin shares */
    char author_surface[64][200]; /* the author's surface strain, the through-a-limb, the jitter and the skin
                                   * showing columns, as the file gives them */
    uint32_t frames;
} ref_sink;

static void ref_row(char *dst, size_t cap, uint32_t frame, const plush_quality_figures *f,
                    const plush_quality_figures *c, const plush_scene_soft_figures *soft)
{
    int n = snprintf(dst, cap, "%u,%.6g,%.6g,%.6g,%.6g,%.6g,%.4g,%.4g,%.6g", frame, f->strain_p50, f->strain_p99,
                     f->strain_p999, f->strain_max, f->strain_outside, f->crease_p99, f->crease_max, f->volume_ratio);
    n += snprintf(dst + n, cap - (size_t)n, ",%.6g,%.6g,%.6g,%.6g,%.6g,%.4g,%.4g,%.6g", c->strain_p50,
                  c->strain_p99, c->strain_p999, c->strain_max, c->strain_outside, c->crease_p99, c->crease_max,
                  c->volume_ratio);
    snprintf(dst + n, cap - (size_t)n, ",%.6g,%.6g,%.6g,%.6g,", soft->inside_share, soft->inside_depth,
             soft->bones_inside_share, soft->offset_share);
}

/* Appends a pair of the file's columns to dst: ",a,b" as it writes them, or ",," where not measured. */
static void add_pair(char *dst, size_t cap, bool measured, double a, double b)
{
    size_t used = strlen(dst);
    if (measured)
        snprintf(dst + used, cap - used, ",%.6g,%.6g", a, b);
    else
        snprintf(dst + used, cap - used, ",,");
}

static plush_status ref_frame(plush_scene_sink *s, const plush_scene *scene, uint32_t frame, plush_diag *diag)
{
    (void)diag;
    ref_sink *r = (ref_sink *)s;
    plush_quality_figures f, c;
    old_quality_measure(r->surface, plush_scene_positions(scene), &f);
    old_quality_measure(r->cage, plush_scene_proxy_nodes(scene), &c);
    assert_true(frame < 64);
    plush_scene_soft_figures soft;
    plush_scene_soft(scene, &soft, NULL);
    ref_row(r->rows[frame], sizeof r->rows[frame], frame, &f, &c, &soft);
    r->swing[frame][0] = soft.swing_share, r->swing[frame][1] = soft.author_swing_share;
    r->swing[frame][2] = soft.skin_share, r->swing[frame][3] = soft.author_skin_share;
    r->author_surface[frame][0] = '\0';
    add_pair(r->author_surface[frame], sizeof r->author_surface[frame], soft.author_surface, soft.author_strain_p999,
             soft.author_strain_outside);
    add_pair(r->author_surface[frame], sizeof r->author_surface[frame], soft.through_measured, soft.through_share,
             soft.author_through_share);
    add_pair(r->author_surface[frame], sizeof r->author_surface[frame], soft.jitter_measured, soft.jitter_share,
             soft.author_jitter_share);
    add_pair(r->author_surface[frame], sizeof r->author_surface[frame], soft.show_measured, soft.show_share,
             soft.author_show_share);
    r->frames = frame + 1;
    return PLUSH_OK;
}

static plush_status ref_end(plush_scene_sink *s, const plush_scene *scene, plush_diag *diag)
{
    (void)s, (void)scene, (void)diag;
    return PLUSH_OK;
}

static void ref_destroy(plush_scene_sink *s)
{
    (void)s;
}

/* The export measures on its own thread while the run goes on: its rows are the old path's measured in
 * line, frame for frame, to the byte; the measure-only sink (what plush run always adds) finds the same
 * worst frame and writes no file. */
static void test_thread_equals_inline(void **state)
{
    (void)state;
    plush_pmx_model *m = mesh_fx_plush();
    plush_diag d = pmx_fx_diag();
    plush_scene *sc = NULL;
    pmx_fx_ok(plush_scene_create(&(plush_scene_desc){.model = m}, &sc, &d), &d);
    static const plush_scene_sink_ops ref_ops = {.frame = ref_frame, .end = ref_end, .destroy = ref_destroy};
    static ref_sink ref;
    memset(&ref, 0, sizeof ref);
    ref.base.ops = &ref_ops;
    /* the surface the export measures: the faces of the materials no soft body owns (body and eyes) */
    size_t nt = (m->materials[0].index_count + m->materials[2].index_count) / 3, t = 0;
    uint32_t(*tris)[3] = malloc(nt * sizeof *tris);
    float(*rest)[3] = malloc(m->vertex_count * sizeof *rest);
    assert_non_null(tris), assert_non_null(rest);
    for (size_t v = 0; v < m->vertex_count; v++)
        memcpy(rest[v], m->vertices[v].position, sizeof rest[v]);
    size_t first = 0;
    for (size_t mat = 0; mat < m->material_count; mat++) {
        for (size_t i = 0; mat != 1 && i < (size_t)m->materials[mat].index_count; i += 3, t++)
            for (int k = 0; k < 3; k++)
                tris[t][k] = (uint32_t)m->indices[first + i + (size_t)k];
        first += (size_t)m->materials[mat].index_count;
    }
    assert_int_equal(t, nt);
    pmx_fx_ok(old_quality_create((const float(*)[3])rest, m->vertex_count, (const uint32_t(*)[3])tris, nt,
                                 &ref.surface, &d), &d);
    const plush_scene_binding *b = plush_scene_get_binding(sc);
    pmx_fx_ok(old_quality_create((const float(*)[3])b->proxy.nodes, b->proxy.node_count,
                                 (const uint32_t(*)[3])b->proxy.triangles, b->proxy.triangle_count, &ref.cage, &d), &d);
    plush_scene_output out = {.dir = cli_tmp_dir(), .stem = "t"};
    plush_scene_sink *sinks[3] = {&ref.base, NULL, NULL};
    pmx_fx_ok(plush_scene_sink_create(plush_scene_export_find("quality", 7), sc, &out, &sinks[1], &d), &d);
    pmx_fx_ok(plush_scene_quality_sink_create(sc, &sinks[2], &d), &d);
    assert_ptr_equal(sinks[2]->kind, plush_scene_export_find("quality", 7));
    plush_scene_run_result r;
    pmx_fx_ok(plush_scene_run(sc, &(plush_scene_run_options){.frames = 40, .sinks = sinks, .sink_count = 3}, &r, &d),
              &d);
    char path[600];
    snprintf(path, sizeof path, "%.580s/quality.csv", cli_tmp_dir());
    size_t n = 0;
    char *csv = cli_read_all(path, &n);
    assert_non_null(csv);
    const char *row = strchr(csv, '\n') + 1;
    for (uint32_t f = 0; f < 40; f++) {
        size_t len = strlen(ref.rows[f]);
        assert_true(strncmp(row, ref.rows[f], len) == 0);
        row += len;
        char *end; /* the tear, which the old path does not measure: a distance; then over_bar and the
                    * stretch across cage pieces (a flag, and a ratio or nothing) */
        double tear = strtod(row, &end);
        assert_true(end > row && *end == ',' && tear >= 0 && tear < 1e-3);
        row = end + 1;
        long over = strtol(row, &end, 10);
        assert_true(end > row && *end == ',' && (over == 0 || over == 1));
        row = end + 1;
        if (*row != ',') {
            double stretch = strtod(row, &end);
            assert_true(end > row && stretch >= 1);
            row = end;
        }
        char swing[260]; /* then the swings, the skin and the author's surface, which the old path does not
                          * measure: the scene's own */
        snprintf(swing, sizeof swing, ",%.6g,%.6g,%.6g,%.6g%s\n", ref.swing[f][0], ref.swing[f][1], ref.swing[f][2],
                 ref.swing[f][3], ref.author_surface[f]);
        assert_true(strncmp(row, swing, strlen(swing)) == 0);
        row += strlen(swing);
    }
    assert_int_equal(*row, '\0');
    free(csv);
    int64_t wf[2];
    plush_quality_figures ws[2], wc[2];
    assert_true(plush_scene_quality_sink_worst(sinks[1], &wf[0], &ws[0], &wc[0]));
    assert_true(plush_scene_quality_sink_worst(sinks[2], &wf[1], &ws[1], &wc[1]));
    assert_int_equal(wf[0], wf[1]);
    assert_same(&ws[0], &ws[1]);
    assert_same(&wc[0], &wc[1]);
    assert_false(plush_scene_quality_sink_worst(sinks[0], NULL, NULL, NULL));
    plush_scene_sink_destroy(sinks[1]);
    plush_scene_sink_destroy(sinks[2]);
    old_quality_destroy(ref.surface);
    old_quality_destroy(ref.cage);
    free(tris), free(rest);
    plush_scene_destroy(sc);
    plush_pmx_free(m);
}

/* The soft measure runs beside the next frame's physics, and the export takes each frame's soft figures once
 * the next frame is stepped: its columns are, frame for frame, the figures a scene stepped alone gives after
 * each step (plush_scene_soft, which waits for the measure), and the measure did run on its own thread. */
static void test_soft_figures_beside_physics(void **state)
{
    (void)state;
    enum { FRAMES = 30 };
    static const char *const columns[] = {"body_inside_share", "body_inside_depth", "bones_inside_share",
                                          "soft_offset_share", "soft_swing_share", "author_swing_share",
                                          "skin_inside_share", "author_skin_inside_share", "through_share",
                                          "author_through_share", "jitter_share", "author_jitter_share",
                                          "show_share", "author_show_share"};
    enum { COLUMNS = sizeof columns / sizeof columns[0] };
    plush_pmx_model *m = mesh_fx_plush();
    plush_diag d = pmx_fx_diag();
    plush_scene *alone = NULL, *sc = NULL;
    pmx_fx_ok(plush_scene_create(&(plush_scene_desc){.model = m}, &alone, &d), &d);
    char want[FRAMES][COLUMNS][32];
    bool moved = false;
    for (uint32_t f = 0; f < FRAMES; f++) {
        pmx_fx_ok(plush_scene_step(alone, (double)f, &d), &d);
        plush_scene_soft_figures s;
        plush_scene_soft(alone, &s, NULL);
        double v[COLUMNS] = {s.inside_share, s.inside_depth,  s.bones_inside_share, s.offset_share,
                             s.swing_share,  s.author_swing_share, s.skin_share, s.author_skin_share,
                             s.through_share, s.author_through_share, s.jitter_share, s.author_jitter_share,
                             s.show_share, s.author_show_share};
        for (int c = 0; c < COLUMNS; c++) /* through a limb and jitter: empty where not measured (the first frames) */
            snprintf(want[f][c], sizeof want[f][c], "%.6g", v[c]);
        for (int c = COLUMNS - 6; !s.through_measured && c < COLUMNS - 4; c++)
            want[f][c][0] = '\0';
        for (int c = COLUMNS - 4; !s.jitter_measured && c < COLUMNS - 2; c++)
            want[f][c][0] = '\0';
        for (int c = COLUMNS - 2; !s.show_measured && c < COLUMNS; c++)
            want[f][c][0] = '\0';
        assert_true(s.jitter_measured == (f >= 2));
        moved |= s.offset_share > 0 || s.swing_share > 0;
    }
    assert_true(moved); /* figures that say something */
    plush_scene_destroy(alone);

    pmx_fx_ok(plush_scene_create(&(plush_scene_desc){.model = m}, &sc, &d), &d);
    plush_scene_output out = {.dir = cli_tmp_dir(), .stem = "t"};
    plush_scene_sink *sink = NULL;
    pmx_fx_ok(plush_scene_sink_create(plush_scene_export_find("quality", 7), sc, &out, &sink, &d), &d);
    plush_scene_run_result r;
    pmx_fx_ok(plush_scene_run(sc, &(plush_scene_run_options){.frames = FRAMES, .sinks = &sink, .sink_count = 1}, &r,
                              &d),
              &d);
    plush_scene_timing t;
    plush_scene_get_timing(sc, &t);
    assert_true(t.measure_beside > 0);
    char path[600];
    snprintf(path, sizeof path, "%.580s/quality.csv", cli_tmp_dir());
    size_t n = 0;
    char *csv = cli_read_all(path, &n);
    assert_non_null(csv);
    /* each column's place in the header */
    int at[COLUMNS];
    char *line = csv, *next = strchr(line, '\n');
    assert_non_null(next);
    *next = '\0';
    for (int c = 0; c < COLUMNS; c++) {
        at[c] = -1;
        int k = 0;
        for (char *f = line, *e; f; f = e ? e + 1 : NULL, k++) {
            e = strchr(f, ',');
            size_t len = e ? (size_t)(e - f) : strlen(f);
            if (len == strlen(columns[c]) && strncmp(f, columns[c], len) == 0)
                at[c] = k;
        }
        assert_true(at[c] >= 0);
    }
    for (uint32_t f = 0; f < FRAMES; f++) {
        line = next + 1;
        next = strchr(line, '\n');
        assert_non_null(next);
        *next = '\0';
        assert_int_equal(strtol(line, NULL, 10), f);
        for (int c = 0; c < COLUMNS; c++) {
            int k = 0;
            char *field = line;
            while (k < at[c] && field)
                field = strchr(field, ','), field = field ? field + 1 : NULL, k++;
            assert_non_null(field);
            size_t len = strcspn(field, ",");
            if (len != strlen(want[f][c]) || strncmp(field, want[f][c], len) != 0)
                fail_msg("frame %u, %s: the export has %.*s, the scene stepped alone %s", f, columns[c], (int)len,
                         field, want[f][c]);
        }
    }
    free(csv);
    plush_scene_sink_destroy(sink);
    plush_scene_destroy(sc);
    plush_pmx_free(m);
}

/* A small plush of bone_count bones (0 "root", 1 "body" its child, the rest unnamed): a sphere of radius 1 on
 * "body" (the bound part; its vertices first, their count into *sphere_vertices when not NULL) and an icosahedron
 * cage of radius 1.4 on "root", its soft body pinned at its top. */
static plush_pmx_model *pinned_plush(size_t bone_count, size_t *sphere_vertices)
{
    plush_pmx_model *m = mesh_fx_model(bone_count);
    m->bones[0].name = pmx_fx_str(m, "root");
    m->bones[1].name = pmx_fx_str(m, "body");
    mesh_fx sphere = mesh_fx_uv_sphere(1.0f, 8, 12), cage = mesh_fx_icosahedron(1.4f);
    mesh_fx_add_material(m, "body", &sphere, 1);
    size_t mat = mesh_fx_add_material(m, "cage", &cage, 0);
    if (sphere_vertices)
        *sphere_vertices = sphere.vertex_count;
    mesh_fx_free(&sphere);
    mesh_fx_free(&cage);
    scene_fx_pin_top(m, mat, mesh_fx_add_soft_body(m, (int32_t)mat, 0));
    return m;
}

/* The small plush (pinned_plush, three bones) beside an upright capsule 3 long of the given radius on bone "arm",
 * a child of "root", at x at rest; *motion keys "arm" at the four frames at, along x by shift (linear curves). */
static plush_pmx_model *plush_beside_arm(float radius, float x, const uint32_t at[4], const float shift[4],
                                         plush_vmd_motion **motion)
{
    plush_pmx_model *m = pinned_plush(3, NULL);
    m->bones[2].name = pmx_fx_str(m, "arm");
    m->bones[2].parent = 0;
    plush_pmx_rigid_body *rb = pmx_fx_rigid_bodies(m, 1);
    rb->name = pmx_fx_str(m, "arm");
    rb->bone = 2;
    rb->mode = PLUSH_PMX_RIGID_FOLLOW_BONE;
    rb->shape = PLUSH_PMX_RIGID_CAPSULE;
    rb->size[0] = radius, rb->size[1] = 3.0f;
    rb->position[0] = x, rb->position[1] = 0, rb->position[2] = 0;
    plush_vmd_motion *v = plush_vmd_create();
    assert_non_null(v);
    v->bone_key_count = 4;
    v->bone_keys = plush_arena_array(plush_vmd_arena(v), 4, sizeof *v->bone_keys);
    assert_non_null(v->bone_keys);
    for (int i = 0; i < 4; i++) {
        plush_vmd_bone_key *key = &v->bone_keys[i];
        key->name = (plush_str){.s = "arm", .len = 3};
        key->frame = at[i];
        key->translation[0] = shift[i];
        key->rotation[3] = 1;
        pmx_fx_linear_curves(key->interpolation);
    }
    *motion = v;
    return m;
}

/* Through a limb: the small plush (its cage pinned at its top to "root") beside a fat capsule that follows
 * bone "arm", which leaps from one side of the plush to the other between frames 9 and 10 (6 units in a frame:
 * through it). At that frame both sides -- plush's and the author's bone skinning, neither of which the capsule
 * can push that far -- count the vertices whose way through the capsule's frame crossed its core; at the
 * frames before and after, when nothing passes anything, none; at the first frame and after a jump, nothing is
 * measured. */
static void test_through_a_limb(void **state)
{
    (void)state;
    static const uint32_t at[4] = {0, 9, 10, 30};
    static const float shift[4] = {0, 0, 6, 6};
    plush_vmd_motion *v = NULL;
    plush_pmx_model *m = plush_beside_arm(1.0f, -3.0f, at, shift, &v); /* its core 0.5 about its axis */
    plush_diag d = pmx_fx_diag();
    plush_scene *sc = NULL;
    pmx_fx_ok(plush_scene_create(&(plush_scene_desc){.model = m, .motion = v}, &sc, &d), &d);
    for (int f = 0; f <= 14; f++) {
        pmx_fx_ok(plush_scene_step(sc, f, &d), &d);
        plush_scene_soft_figures s;
        plush_scene_soft(sc, &s, NULL);
        assert_true(s.through_measured == (f > 0));
        if (f == 10) {
            print_message("      the capsule's leap: %.1f%% of plush's vertices and %.1f%% of the author's through it\n",
                          100 * s.through_share, 100 * s.author_through_share);
            assert_true(s.through_share > 0.05 && s.author_through_share > 0.05);
        } else {
            assert_true(s.through_share == 0 && s.author_through_share == 0);
        }
    }
    pmx_fx_ok(plush_scene_step(sc, 40, &d), &d); /* a jump: physics reset, no way measured */
    plush_scene_soft_figures s;
    plush_scene_soft(sc, &s, NULL);
    assert_false(s.through_measured);
    plush_scene_soft_summary u;
    plush_scene_soft(sc, NULL, &u);
    assert_int_equal(u.through_frames, 14);
    assert_int_equal(u.through_frames_plush, 1);
    assert_int_equal(u.through_frames_author, 1);
    assert_true(u.mean_through_share > 0.05 / 14 && u.mean_author_through_share > 0.05 / 14);
    plush_scene_destroy(sc);
    plush_vmd_free(v);
    plush_pmx_free(m);
}

/* Jitter: the small plush's root shaken by A every frame (0, A, 0, A ... over frames 0 to 12, then still). Bone
 * skinning (the author's side: the part has no physics of the author's) moves every bound vertex with the root,
 * so its way changes by 2 A from one frame to the next: the author's share is 2 A over the bound vertices' size,
 * exactly; plush's part, its cage pinned to the root, shakes too. Nothing is measured at the first two frames,
 * nor at a jump and the frame after it. */
static void test_jitter(void **state)
{
    (void)state;
    enum { SHAKEN = 12 };
    const float shake = 0.2f;
    size_t sphere_vertices = 0;
    plush_pmx_model *m = pinned_plush(2, &sphere_vertices);
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY}, size = 0;
    for (size_t i = 0; i < sphere_vertices; i++)
        for (int k = 0; k < 3; k++) {
            lo[k] = fmin(lo[k], m->vertices[i].position[k]);
            hi[k] = fmax(hi[k], m->vertices[i].position[k]);
        }
    for (int k = 0; k < 3; k++)
        size += (hi[k] - lo[k]) * (hi[k] - lo[k]);
    size = sqrt(size);
    plush_vmd_motion *v = plush_vmd_create();
    assert_non_null(v);
    v->bone_key_count = SHAKEN + 1;
    v->bone_keys = plush_arena_array(plush_vmd_arena(v), SHAKEN + 1, sizeof *v->bone_keys);
    assert_non_null(v->bone_keys);
    for (uint32_t f = 0; f <= SHAKEN; f++) {
        plush_vmd_bone_key *key = &v->bone_keys[f];
        key->name = (plush_str){.s = "root", .len = 4};
        key->frame = f;
        key->translation[0] = f % 2 ? shake : 0.0f;
        key->rotation[3] = 1;
        pmx_fx_linear_curves(key->interpolation);
    }
    plush_diag d = pmx_fx_diag();
    plush_scene *sc = NULL;
    /* at 30 frames a second each frame is a key's */
    pmx_fx_ok(plush_scene_create(&(plush_scene_desc){.model = m, .motion = v, .fps = 30}, &sc, &d), &d);
    for (int f = 0; f <= SHAKEN; f++) {
        pmx_fx_ok(plush_scene_step(sc, f, &d), &d);
        plush_scene_soft_figures s;
        plush_scene_soft(sc, &s, NULL);
        assert_true(s.jitter_measured == (f >= 2));
        if (f < 2)
            continue;
        if (f == SHAKEN)
            print_message("      shaken by %.1f a frame: the author's way changes by %.3f%% of its size a frame, "
                          "plush's %.3f%%\n",
                          shake, 100 * s.author_jitter_share, 100 * s.jitter_share);
        assert_float_equal(s.author_jitter_share, 2 * shake / size, 1e-4 * 2 * shake / size);
        assert_true(s.jitter_share > 0.1 * 2 * shake / size);
    }
    for (int f = 40; f <= 42; f++) { /* a jump: physics reset; measured again two frames on */
        pmx_fx_ok(plush_scene_step(sc, f, &d), &d);
        plush_scene_soft_figures s;
        plush_scene_soft(sc, &s, NULL);
        assert_true(s.jitter_measured == (f == 42));
        if (f == 42)
            assert_true(s.author_jitter_share < 1e-6); /* still since frame 12 */
    }
    plush_scene_soft_summary u;
    plush_scene_soft(sc, NULL, &u);
    assert_int_equal(u.jitter_frames, SHAKEN - 1 + 1);
    /* plush's part, held by its cage, shakes less than the bones while shaken: its worst frame against the
     * author's is the still one after the jump */
    assert_int_equal(u.worst_jitter_frame, 42);
    assert_true(u.mean_author_jitter_share > 0.9 * 2 * shake / size * (SHAKEN - 1) / SHAKEN);
    plush_scene_destroy(sc);
    plush_vmd_free(v);
    plush_pmx_free(m);
}

/* The push's warm start falls back as a surface under gravity, in time, however the scene is stepped: a fat
 * capsule on bone "arm" comes into the small plush's side over the motion's first two frames (its sphere pushed
 * out of it), stays a frame, and leaves over the next; the push's offsets, kept from frame to frame, go back to
 * nothing over the frames after it as a fall would. Stepped by half frames (at 120 a second), they are back at
 * nothing as many frames later within two, not in about 1 / sqrt(2) of the time, as falling a whole frame's worth
 * at each half step would. */
static int frames_to_fall(double step, int *pushed_frames)
{
    static const uint32_t at[4] = {0, 2, 3, 4};
    static const float shift[4] = {0, 6, 6, 0}; /* clear of it at rest */
    plush_vmd_motion *v = NULL;
    plush_pmx_model *m = plush_beside_arm(0.6f, -7.3f, at, shift, &v);
    size_t triangles = 0;
    for (size_t i = 0; i < m->material_count; i++)
        triangles = m->materials[i].index_count / 3; /* the cage is the last material */
    plush_diag d = pmx_fx_diag();
    plush_scene *sc = NULL;
    pmx_fx_ok(plush_scene_create(&(plush_scene_desc){.model = m, .motion = v, .fps = 120}, &sc, &d), &d);
    int back = -1;
    *pushed_frames = 0;
    for (int i = 0; back < 0 && i * step <= 120; i++) {
        double f = i * step;
        pmx_fx_ok(plush_scene_step(sc, f, &d), &d);
        if (f != floor(f))
            continue;
        const float(*offsets)[3] = plush__scene_push_offsets(sc);
        assert_non_null(offsets);
        double most = 0;
        for (size_t t = 0; t < triangles; t++)
            most = fmax(most, sqrt((double)offsets[t][0] * offsets[t][0] + (double)offsets[t][1] * offsets[t][1] +
                                   (double)offsets[t][2] * offsets[t][2]));
        *pushed_frames += f >= 8 && f <= 12 && most > 0.05;
        back = f > 16 && most == 0 ? (int)f : -1;
    }
    plush_scene_destroy(sc);
    plush_vmd_free(v);
    plush_pmx_free(m);
    return back;
}

static void test_push_falls_back_in_time(void **state)
{
    (void)state;
    int pushed_whole = 0, pushed_half = 0;
    int whole = frames_to_fall(1.0, &pushed_whole), half = frames_to_fall(0.5, &pushed_half);
    print_message("      pushed at %d and %d of frames 8-12; back on the cage at frame %d stepping whole frames, %d "
                  "stepping halves (the capsule gone at 16)\n",
                  pushed_whole, pushed_half, whole, half);
    assert_true(pushed_whole == 5 && pushed_half == 5);
    assert_true(whole > 16 + 4 && half > 16 + 4);
    assert_true(abs(whole - half) <= 2);
}

/* A destroy that hangs ends the suite with this message and a failing status, not a make test that
 * never returns. */
static void destroy_hung(int sig)
{
    (void)sig;
    static const char msg[] = "test_destroy_mid_run: the sink's frames or its destroy did not return within "
                              "the alarm's 60 s\n";
    ssize_t n = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)n;
    _exit(1);
}

/* A run stopped before its end destroys the sink with frames still handed to the thread: nothing leaks
 * (ASan), nothing hangs (an alarm: the destroy waits for the thread, which takes milliseconds here; 60 s
 * leave room for a sanitized build on a loaded machine). */
static void test_destroy_mid_run(void **state)
{
    (void)state;
    plush_pmx_model *m = mesh_fx_plush();
    plush_diag d = pmx_fx_diag();
    plush_scene *sc = NULL;
    pmx_fx_ok(plush_scene_create(&(plush_scene_desc){.model = m}, &sc, &d), &d);
    plush_scene_sink *sink = NULL;
    pmx_fx_ok(plush_scene_quality_sink_create(sc, &sink, &d), &d);
    void (*was)(int) = signal(SIGALRM, destroy_hung);
    alarm(60);
    for (uint32_t f = 0; f < 5; f++) {
        pmx_fx_ok(plush_scene_step(sc, f, &d), &d);
        pmx_fx_ok(sink->ops->frame(sink, sc, f, &d), &d);
    }
    plush_scene_sink_destroy(sink);
    alarm(0);
    signal(SIGALRM, was);
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

/* A real character standing at rest (no motion, one frame): plush and the author's model both read 0 behind
 * the skin, and the summary says what it measured. */
static void test_character_at_rest_reads_zero(void **state)
{
    (void)state;
    const char *model = "../shared/data/mmd/alicia/Alicia_solid.pmx";
    FILE *f = fopen(model, "rb");
    if (!f) {
        print_message("%s missing\n", model);
        skip();
    }
    fclose(f);
    char dir[512], path[600];
    cli_tmp_path(dir, sizeof dir, "rest");
    cli_result r;
    CLI_RUN(&r, "run", model, "--cage", "hair:150", "--frames", "1", "--export", "quality", "-o", dir);
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.out, "behind the visible skin"));
    snprintf(path, sizeof path, "%s/quality.csv", dir);
    size_t len = 0;
    char *csv = cli_read_all(path, &len);
    assert_non_null(csv);
    /* behind the skin, and the skin under the hair showing through it (the head's skin under the hair) */
    assert_non_null(strstr(r.out, "shows through it on average"));
    static const char *const names[2][2] = {{"skin_inside_share", "author_skin_inside_share"},
                                            {"show_share", "author_show_share"}};
    for (int fig = 0; fig < 2; fig++) {
        int plush_col = cli_csv_column(csv, names[fig][0]), author_col = cli_csv_column(csv, names[fig][1]);
        assert_true(plush_col > 0 && author_col > plush_col);
        /* frame 0's row: the fields at those columns */
        const char *row = strchr(csv, '\n');
        assert_non_null(row);
        row++;
        double value[2] = {-1, -1};
        int col = 0;
        for (const char *c = row; *c && *c != '\n'; col++) {
            if (col == plush_col || col == author_col)
                value[col == author_col] = strtod(c, NULL);
            const char *comma = strchr(c, ',');
            if (!comma)
                break;
            c = comma + 1;
        }
        assert_true(value[0] == 0 && value[1] == 0);
    }
    free(csv);
    cli_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cube),
        cmocka_unit_test(test_seam_and_open),
        cmocka_unit_test(test_layers_tear),
        cmocka_unit_test(test_short_edges_not_measured), cmocka_unit_test(test_two_layers_crease), cmocka_unit_test(test_held_folds),
        cmocka_unit_test(test_percentiles_at_most_max),
        cmocka_unit_test(test_quality_export),
        cmocka_unit_test(test_quality_furthest_miss),
        cmocka_unit_test(test_surface_bar),
        cmocka_unit_test(test_kernels_equal_old),
        cmocka_unit_test(test_thread_equals_inline),
        cmocka_unit_test(test_soft_figures_beside_physics),
        cmocka_unit_test(test_through_a_limb),
        cmocka_unit_test(test_jitter),
        cmocka_unit_test(test_push_falls_back_in_time),
        cmocka_unit_test(test_destroy_mid_run),
        cmocka_unit_test(test_character_at_rest_reads_zero),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
