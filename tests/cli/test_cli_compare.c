/* plush compare, run as a user runs it, on the small plush (a sphere in an icosahedron cage, written here):
 * every file is written, the CSV holds what the report sums up, the pictures and plots show the model, and
 * the errors a user can meet, the frame bound among them. The same on the demo bear, with its direct
 * simulation of 60,000 vertices and generated cages, is make test-slow's (tests/slow/). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/plush.h"
#include "plush/sys/core.h"
#include "support/cli_run.h"
#include "support/pmx_fixture.h"
#include "support/report_read.h"
#include "support/scene_fixture.h"
#include "support/shared_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FRAMES = 12 };

/* A character without a soft body whose skirt is a material of its own. */
#define SKIRT SHARED_CHARACTERS "/pmx_tailor/03_扱えるメッシュ_裾不均等.pmx"

/* The runs the small plush's tests read: their exit status and report, with the reference the part's size
 * chooses (plush's cloth solver) and with Bullet's (--direct-bullet). */
static struct {
    char out[512], bullet_out[512];
    cli_result r, bullet;
} small;

static int setup(void **state)
{
    (void)state;
    if (cli_tmp_setup("plush_compare") != 0)
        return -1;
    char pmx[512], vmd[512], frames[16];
    cli_tmp_path(pmx, sizeof pmx, "small_plush.pmx");
    cli_tmp_path(vmd, sizeof vmd, "sway.vmd");
    cli_tmp_path(small.out, sizeof small.out, "small");
    plush_pmx_model *m = scene_fx_pinned_plush();
    plush_vmd_motion *v = scene_fx_sway();
    plush_diag d = {0};
    plush_diag_reset(&d);
    if (plush_pmx_write_file(m, NULL, pmx, &d) != PLUSH_OK || plush_vmd_write_file(v, NULL, vmd, &d) != PLUSH_OK)
        return -1;
    plush_vmd_free(v);
    plush_pmx_free(m);
    snprintf(frames, sizeof frames, "%d", FRAMES);
    CLI_RUN(&small.r, "compare", pmx, "--motion", vmd, "--frames", frames, "-o", small.out);
    cli_tmp_path(small.bullet_out, sizeof small.bullet_out, "small_bullet");
    CLI_RUN(&small.bullet, "compare", pmx, "--motion", vmd, "--frames", frames, "--direct-bullet", "-o",
            small.bullet_out);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    cli_result_free(&small.r);
    cli_result_free(&small.bullet);
    return cli_tmp_teardown();
}

/* The chosen frames, side by side: the model drawn in each run's panel (bones, proxy, direct: a silhouette
 * that neither vanishes nor fills the panel, shaded grey), the error panel in colour where the model is. */
static void check_picture(const char *path)
{
    int w = 0, h = 0;
    uint8_t *px = report_load_png(path, &w, &h);
    assert_int_equal(w, 4 * 300);
    for (int k = 0; k < 4; k++) {
        panel_content c = report_panel(px, w, 300 * k + 2, 300 * k + 298, 46, 422);
        assert_true(c.model > 0.02 && c.model < 0.7);
        if (k < 3)
            assert_true(c.coloured < 0.01 * c.model);
        else
            assert_true(c.coloured > 0.5 * c.model);
    }
    report_png_free(px);
}

/* Every file, the CSV's pairs row for row, the report's verdict from the CSV's times. */
static void test_small_plush_writes_every_file(void **state)
{
    (void)state;
    cli_expect_code(&small.r, 0);
    assert_non_null(strstr(small.r.out, "plush compare"));
    const char *out = small.out;
    char p[700];
    size_t len = 0;
    snprintf(p, sizeof p, "%s/metrics.csv", out);
    char *csv = cli_read_all(p, &len);
    assert_non_null(csv);
    assert_true(strncmp(csv, "frame,run_a,run_b,rms,p95,max,normal_mean_deg,normal_max_deg,volume_ratio_a,"
                             "volume_ratio_b,physics_ms_a,skinning_ms_a,physics_ms_b,skinning_ms_b,",
                        140) == 0);
    static csv_row rows[64];
    size_t n = report_csv_rows(csv, "proxy,bones", rows, 64);
    assert_int_equal(n, FRAMES);
    double moved = 0;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(rows[i].frame, i);
        const double *v = rows[i].v;
        assert_true(v[0] >= 0 && v[1] >= 0 && v[1] <= v[2] && v[0] <= v[2]);
        assert_true(v[3] >= 0 && v[3] <= v[4] && v[4] <= 180);
        assert_true(isfinite(v[5]) && isfinite(v[6]));   /* the sphere is closed */
        assert_float_equal(v[6], 1.0, 1e-4);             /* plain bones keep the volume */
        assert_true(v[7] > 0 && v[8] >= 0 && v[9] >= 0 && v[10] > 0);
        moved = fmax(moved, v[0]);
    }
    assert_true(moved > 0); /* the soft body moves the surface away from plain bones */
    size_t direct_rows = report_csv_rows(csv, "proxy,direct", rows, 64);
    assert_int_equal(direct_rows, FRAMES);
    double tp = 0, td = 0;
    for (size_t i = 0; i < direct_rows; i++) {
        assert_true(isfinite(rows[i].v[0]) && rows[i].v[1] <= rows[i].v[2]);
        tp += rows[i].v[7] + rows[i].v[8], td += rows[i].v[9] + rows[i].v[10];
    }
    assert_true(tp > 0 && td > 0);
    snprintf(p, sizeof p, "%s/report.md", out);
    char *md = cli_read_all(p, &len);
    assert_non_null(md);
    assert_true(strncmp(md, "# plush compare: small_plush.pmx\n\n**proxy is ", 45) == 0);
    assert_non_null(strstr(md, "| proxy vs bones |"));
    assert_non_null(strstr(md, "| proxy vs direct |"));
    assert_non_null(strstr(md, "| bones vs direct |"));
    assert_non_null(strstr(md, "## What it means"));
    assert_non_null(strstr(md, "## Surface quality, worst frame"));
    double speedup = strtod(strstr(md, "**proxy is ") + 11, NULL);
    assert_float_equal(speedup, td / tp, 0.05 * td / tp); /* the verdict is the CSV's times */
    const char *plots[] = {"error.png", "time.png"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(p, sizeof p, "%s/%s", out, plots[i]);
        report_check_plot(p);
    }
    snprintf(p, sizeof p, "%s/frame_%05d.png", out, FRAMES - 1);
    check_picture(p);
    free(csv);
    free(md);
}

/* The verdict can say no and says one thing: on the small plush Bullet's direct (--direct-bullet) pleats at
 * most frames (the plush surface bar: p99.9 strain 1.5, 0.5% of edges beyond 1.5x, crease p99 30 deg), and
 * those frames are left out of the verdict, as many as the CSV's direct figures miss the bar; of the
 * others, direct on a quarter of the triangles lies over half the proxy's distance from direct at one, so
 * the report prints no "converges" and says the verdict is limited; one sentence says whether the proxy
 * beats plain bones. The cloth reference the small part gets by default converges: direct at four times
 * the detail and the plush as it is lie within half the proxy's distance of each other at every frame, and
 * the report says so and why that reference. */
static void test_small_plush_verdict(void **state)
{
    (void)state;
    cli_expect_code(&small.r, 0);
    char p[700];
    size_t len = 0;
    snprintf(p, sizeof p, "%s/report.md", small.out);
    char *cloth = cli_read_all(p, &len);
    assert_non_null(cloth);
    assert_non_null(strstr(cloth, "**The reference converges**: at every one of the 12 frames kept"));
    assert_null(strstr(cloth, "limited by it"));
    assert_non_null(strstr(cloth, "Direct is plush's cloth solver because the part is small enough for it"));
    free(cloth);
    cli_expect_code(&small.bullet, 0);
    snprintf(p, sizeof p, "%s/metrics.csv", small.bullet_out);
    char *csv = cli_read_all(p, &len);
    assert_non_null(csv);
    int c999 = cli_csv_column(csv, "strain_p999_b"), cout = cli_csv_column(csv, "strain_outside_b"),
        ccr = cli_csv_column(csv, "crease_p99_deg_b");
    assert_true(c999 > 0 && cout > 0 && ccr > 0);
    int crms = cli_csv_column(csv, "rms");
    assert_true(crms > 0);
    unsigned off_bar = 0, rows = 0, worst = 0;
    double worst_rms = -1;
    for (const char *line = strchr(csv, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        const char *row = line + 1;
        const char *pair = strchr(row, ',') + 1;
        if (strncmp(pair, "proxy,direct,", 13) != 0)
            continue;
        if (report_csv_field(row, crms) > worst_rms)
            worst_rms = report_csv_field(row, crms), worst = (unsigned)strtoul(row, NULL, 10);
        rows++;
        off_bar += report_csv_field(row, c999) > 1.5 || report_csv_field(row, cout) > 0.005 ||
                   report_csv_field(row, ccr) > 30;
    }
    assert_int_equal(rows, FRAMES);
    snprintf(p, sizeof p, "%s/report.md", small.bullet_out);
    char *md = cli_read_all(p, &len);
    assert_non_null(md);
    /* the error table leads with each pair's worst frame, the metrics' largest RMS */
    char lead[64];
    snprintf(lead, sizeof lead, "| proxy vs direct | %u | ", worst);
    assert_non_null(strstr(md, "## Error, worst frame first"));
    assert_non_null(strstr(md, lead));
    bool better = strstr(md, "**proxy is better than plain bones**") != NULL,
         no_better = strstr(md, "**proxy is no better than plain bones**") != NULL;
    assert_true(better != no_better);
    char left[120];
    snprintf(left, sizeof left, "%u of the %u frames are left out of the verdict: direct misses the plush surface bar",
             off_bar, rows);
    if (off_bar)
        assert_non_null(strstr(md, left));
    else
        assert_null(strstr(md, "left out of the verdict"));
    assert_null(strstr(md, "converges"));
    assert_non_null(strstr(md, "**The reference does not converge**"));
    assert_non_null(strstr(md, "the verdict above is limited by it"));
    free(csv);
    free(md);
}

/* A motion of one key on the bear's first bone at frame 4,000,000,000. */
static void write_far_motion(const char *path)
{
    plush_diag d = {0};
    plush_diag_reset(&d);
    plush_pmx_model *m = NULL;
    assert_int_equal(plush_pmx_read_file(BEAR, NULL, &m, &d), PLUSH_OK);
    plush_vmd_motion *v = plush_vmd_create();
    v->bone_key_count = 1;
    v->bone_keys = plush_arena_array(plush_vmd_arena(v), 1, sizeof *v->bone_keys);
    v->bone_keys[0] = (plush_vmd_bone_key){.name = m->bones[0].name, .frame = 4000000000u, .rotation = {0, 0, 0, 1}};
    assert_int_equal(plush_vmd_write_file(v, NULL, path, &d), PLUSH_OK);
    plush_vmd_free(v);
    plush_pmx_free(m);
}

/* The frames a motion makes by default are bounded as plush run bounds them: both refuse, at once. */
static void test_frames_beyond_the_bound(void **state)
{
    (void)state;
    char far[512], out[512];
    cli_tmp_path(far, sizeof far, "far.vmd");
    cli_tmp_path(out, sizeof out, "far");
    write_far_motion(far);
    cli_result r;
    CLI_RUN(&r, "compare", BEAR, "--motion", far, "-o", out);
    cli_expect_one_error_line(&r);
    assert_false(cli_exists(out));
    cli_result_free(&r);
    CLI_RUN(&r, "run", BEAR, "--motion", far, "-o", out);
    cli_expect_one_error_line(&r);
    cli_result_free(&r);
    /* and the largest count either takes by hand is the same */
    char max[32], over[32];
    snprintf(max, sizeof max, "%.0f", PLUSH_SCENE_MAX_FRAME);
    snprintf(over, sizeof over, "%.0f", PLUSH_SCENE_MAX_FRAME + 1);
    CLI_RUN(&r, "compare", BEAR, "--frames", over, "-o", out);
    cli_expect_code(&r, 2);
    cli_result_free(&r);
    CLI_RUN(&r, "run", BEAR, "--frames", over, "-o", out);
    cli_expect_code(&r, 2);
    cli_result_free(&r);
}

static void test_errors(void **state)
{
    (void)state;
    char out[512], junk[512];
    cli_tmp_path(out, sizeof out, "err");
    cli_result r;
    /* no soft body and no cage to make */
    CLI_RUN(&r, "compare", ALICIA, "--frames", "2", "-o", out);
    cli_expect_one_error_line(&r);
    assert_non_null(strstr(r.err, "plush attach"));
    assert_non_null(strstr(r.err, "--cage MATERIAL"));
    cli_result_free(&r);
    /* sizes to sweep and no soft body to copy: the next command is the same sweep on a part */
    CLI_RUN(&r, "compare", ALICIA, "--proxy-triangles", "100,300", "--frames", "2", "-o", out);
    cli_expect_one_error_line(&r);
    assert_non_null(strstr(r.err, "--cage MATERIAL[:TRIANGLES] --proxy-triangles 100,300 -o"));
    cli_result_free(&r);
    cli_tmp_path(junk, sizeof junk, "junk.pmx");
    cli_write_all(junk, "PMX \0\0\0@", 8);
    CLI_RUN(&r, "compare", junk, "-o", out);
    cli_expect_one_error_line(&r);
    assert_non_null(strstr(r.err, "junk.pmx"));
    cli_result_free(&r);
    CLI_RUN(&r, "compare", BEAR, "--motion", junk, "-o", out);
    cli_expect_one_error_line(&r);
    cli_result_free(&r);
    /* usage */
    const char *const bad[][6] = {
        {"compare", BEAR, NULL},
        {"compare", "-o", out, NULL},
        {"compare", BEAR, "--proxy-triangles", "0", "-o", out},
        {"compare", BEAR, "--proxy-triangles", "100,x", "-o", out},
        {"compare", BEAR, "--frames", "1.5", "-o", out},
        {"compare", BEAR, "--colour", "red", "-o", out},
        {"compare", BEAR, "--direct-cloth", "--direct-bullet", "-o", out},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        size_t n = 0;
        while (n < 6 && bad[i][n])
            n++;
        const char *args[7] = {0};
        memcpy(args, bad[i], n * sizeof *args);
        cli_run_list(&r, args);
        cli_expect_code(&r, 2);
        cli_result_free(&r);
    }
    CLI_RUN(&r, "compare", "--help");
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.out, "--proxy-triangles"));
    assert_non_null(strstr(r.out, "--original"));
    cli_result_free(&r);
    CLI_RUN(&r, "compare", BEAR, "--seed=1", "-o", out);
    cli_expect_code(&r, 2);
    cli_result_free(&r);
    /* the original method's proxy (the 'before' picture), and the report says so */
    char md_path[800];
    size_t md_len = 0;
    char *md =
        cli_compare_report("seeded", (const char *const[]){BEAR, "--motion", BEAR_VMD, "--frames", "2", "--seed", NULL});
    assert_non_null(strstr(md, "the original method (`--seed`)"));
    free(md);
    /* a part: --cage and --materials as plush run takes them, refused as it refuses them */
    CLI_RUN(&r, "compare", BEAR, "--cage", "fur", "--frames", "2", "-o", out);
    cli_expect_one_error_line(&r); /* the bear has a cage of its own */
    cli_result_free(&r);
    CLI_RUN(&r, "compare", SKIRT, "--cage", "no such material", "--frames", "2", "-o", out);
    cli_expect_one_error_line(&r);
    cli_result_free(&r);
    CLI_RUN(&r, "compare", SKIRT, "--cage", ":300", "--frames", "2", "-o", out);
    cli_expect_code(&r, 2);
    cli_result_free(&r);
    CLI_RUN(&r, "compare", BEAR, "--materials", "no such material", "--frames", "2", "-o", out);
    cli_expect_one_error_line(&r);
    cli_result_free(&r);
    assert_false(cli_exists(out));
    /* the refusal of a model without a soft body names the commands that give it one */
    CLI_RUN(&r, "compare", SKIRT, "--frames", "2", "-o", out);
    cli_expect_one_error_line(&r);
    assert_non_null(strstr(r.err, "--cage"));
    cli_result_free(&r);
    char part_dir[700];
    snprintf(part_dir, sizeof part_dir, "%s/part", cli_tmp_dir());
    CLI_RUN(&r, "compare", SKIRT, "--cage", "スカート:100", "--frames", "2", "-o", part_dir);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    snprintf(md_path, sizeof md_path, "%s/report.md", part_dir);
    md = cli_read_all(md_path, &md_len);
    assert_non_null(md);
    assert_non_null(strstr(md, "the part's size is its bounding-box diagonal"));
    free(md);
    /* the report directory cannot be made */
    char p[700];
    snprintf(p, sizeof p, "%s/no/such/dir", cli_tmp_dir());
    CLI_RUN(&r, "compare", BEAR, "--frames", "2", "-o", p);
    cli_expect_one_error_line(&r);
    cli_result_free(&r);
}

/* A part the author's physics swings (sample_finish's skirt on its rigid-body chains): the report says the proxy
 * is compared on its cage's own shape, where plush run follows the author's physics by default. */
static void test_part_on_author_physics_said(void **state)
{
    (void)state;
    char *md = cli_compare_report("author", (const char *const[]){SHARED_MMD "/blender2pmxem/sample_finish.pmx", "--cage",
                                                               "スカート", "--frames", "2", NULL});
    assert_non_null(strstr(md, "The model's own physics (its author's rigid bodies) swings bones of the part"));
    assert_non_null(strstr(md, "`plush run --own-shape`"));
    free(md);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_plush_writes_every_file),
        cmocka_unit_test(test_small_plush_verdict),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_frames_beyond_the_bound),
        cmocka_unit_test(test_part_on_author_physics_said),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
