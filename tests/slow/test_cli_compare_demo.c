/* plush compare on the demo bear, as a user runs it (make test-slow: the direct simulation of 60,000
 * vertices costs some 0.2 s a frame, minutes in all): over 40 frames it writes every file, the CSV holds
 * what the report sums up, the pictures show the model, and generated cages compare by size. The bear is
 * made by `make` (proxies/). The suite runs the bear once (group setup: its own cage and two generated
 * ones) and the tests read that one report. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/plush.h"
#include "support/cli_run.h"
#include "support/report_read.h"
#include "support/shared_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The run's length, and the first frames, before the shake swings the bear, where a generated cage that
 * fell would show against plain bones. */
enum { FRAMES = 40, FALL_FRAMES = 20 };

/* The one run every test of the bear reads: its exit status and report. */
static struct {
    char out[512];
    cli_result r;
} bear;

static int setup(void **state)
{
    (void)state;
    if (cli_tmp_setup("plush_compare") != 0)
        return -1;
    cli_tmp_path(bear.out, sizeof bear.out, "bear");
    char frames[16];
    snprintf(frames, sizeof frames, "%d", FRAMES);
    CLI_RUN(&bear.r, "compare", BEAR, "--motion", BEAR_VMD, "--im2", BEAR_IM2, "--frames", frames,
            "--proxy-triangles", "300,1000", "-o", bear.out);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    cli_result_free(&bear.r);
    return cli_tmp_teardown();
}

/* The shared run's directory, once it is known to have succeeded. */
static const char *bear_run(void)
{
    cli_expect_code(&bear.r, 0);
    assert_non_null(strstr(bear.r.out, "plush compare"));
    return bear.out;
}

/* The chosen frames, side by side: the model drawn in each run's panel (a silhouette that neither
 * vanishes nor fills the panel), the error panel in colour where the model is. */
static void check_picture(const char *path, bool direct)
{
    int w = 0, h = 0;
    uint8_t *px = report_load_png(path, &w, &h);
    assert_int_equal(w, 4 * 300);
    /* panels: x 300k .. 300k + 300, y 44 .. 424 (labels above, the colour bar below) */
    for (int k = 0; k < 4; k++) {
        panel_content c = report_panel(px, w, 300 * k + 2, 300 * k + 298, 46, 422);
        if (k == 2 && !direct) {
            assert_true(c.model < 0.01); /* "not run" in small letters */
            continue;
        }
        assert_true(c.model > 0.02 && c.model < 0.7); /* one camera for all: a stretched run makes the others small */
        if (k < 3)
            assert_true(c.coloured < 0.01 * c.model); /* shaded grey */
        else
            assert_true(c.coloured > 0.5 * c.model);  /* the error's colours */
    }
    report_png_free(px);
}

/* metrics.csv's quality columns (surface for every run, the cage for a proxy run only), report.md's worst
 * frames and quality.png. */
static void check_quality(const char *csv, const char *out)
{
    static const char *const names[] = {"strain_p50_a", "strain_p99_a", "strain_p999_a", "strain_max_a",
                                        "strain_outside_a", "crease_p99_deg_a", "crease_max_deg_a",
                                        "cage_strain_p999_a", "cage_volume_ratio_a", "strain_p999_b",
                                        "cage_strain_p999_b", "cage_strain_p50_a", "cage_strain_p99_a",
                                        "cage_strain_max_a", "cage_crease_p99_deg_a", "cage_crease_max_deg_a"};
    enum { COLS = sizeof names / sizeof names[0] };
    int col[COLS];
    for (int k = 0; k < COLS; k++) {
        col[k] = cli_csv_column(csv, names[k]);
        assert_true(col[k] >= 14); /* after the 14 columns that were there before */
    }
    size_t rows = 0;
    for (const char *line = strchr(csv, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        const char *comma = strchr(line + 1, ',');
        if (!comma || strncmp(comma + 1, "proxy,bones,", 12) != 0)
            continue;
        double v[COLS];
        for (int k = 0; k < COLS; k++)
            v[k] = report_csv_field(line + 1, col[k]);
        /* no percentile above its maximum, as printed */
        assert_true(v[0] > 0.5 && v[0] <= v[1] && v[1] <= v[2] && v[2] <= v[3]);
        assert_true(v[4] >= 0 && v[4] <= 1 && v[5] >= 0 && v[5] <= v[6] && v[6] <= 180);
        assert_true(v[11] <= v[12] && v[12] <= v[7] && v[7] <= v[13] && v[14] <= v[15]);
        assert_true(v[7] >= 1 && isfinite(v[8]));   /* proxy: its cage */
        assert_true(v[9] >= 1 && isnan(v[10]));     /* bones: no cage */
        rows++;
    }
    assert_int_equal(rows, FRAMES);
    char p[700];
    size_t len = 0;
    snprintf(p, sizeof p, "%s/report.md", out);
    char *md = cli_read_all(p, &len);
    assert_non_null(md);
    const char *table = strstr(md, "## Surface quality, worst frame");
    assert_non_null(table);
    const char *row = strstr(table, "\n| proxy | ");
    assert_non_null(row);
    /* its worst frame as printed: strain p50 / p99 / p99.9 / max, beyond, crease p99 / max, cage p99.9 / max */
    double fig[9];
    assert_int_equal(sscanf(row, "\n| proxy | %*d | %lf / %lf / %lf / %lf | %lf%% | %lf / %lf | %lf / %lf", &fig[0],
                            &fig[1], &fig[2], &fig[3], &fig[4], &fig[5], &fig[6], &fig[7], &fig[8]),
                     9);
    assert_true(fig[0] <= fig[1] && fig[1] <= fig[2] && fig[2] <= fig[3] && fig[5] <= fig[6] && fig[7] <= fig[8]);
    free(md);
    int w = 0, h = 0;
    snprintf(p, sizeof p, "%s/quality.png", out);
    uint8_t *px = report_load_png(p, &w, &h);
    assert_int_equal(w, 900);
    assert_int_equal(h, 3 * 420);
    for (int c = 0; c < 3; c++) {
        panel_content pc = report_panel(px, w, 0, w, 420 * c, 420 * c + 420);
        assert_true(pc.model > 0.01 && pc.model < 0.5 && pc.coloured > 0.001); /* each chart has its lines */
    }
    report_png_free(px);
}

static void test_demo_bear_writes_every_file(void **state)
{
    (void)state;
    char p[700];
    const char *out = bear_run();

    snprintf(p, sizeof p, "%s/metrics.csv", out);
    size_t len = 0;
    char *csv = cli_read_all(p, &len);
    assert_non_null(csv);
    /* the columns before the quality figures, as they always were (those follow them) */
    assert_true(strncmp(csv, "frame,run_a,run_b,rms,p95,max,normal_mean_deg,normal_max_deg,volume_ratio_a,"
                             "volume_ratio_b,physics_ms_a,skinning_ms_a,physics_ms_b,skinning_ms_b,",
                        140) == 0);
    check_quality(csv, out);
    static csv_row rows[200];
    size_t n = report_csv_rows(csv, "proxy,bones", rows, 200);
    assert_int_equal(n, FRAMES);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(rows[i].frame, i);
        const double *v = rows[i].v;
        /* rms <= p95-ish bounds: p95 <= max, rms <= max, all finite and non-negative */
        assert_true(v[0] >= 0 && v[1] >= 0 && v[1] <= v[2] && v[0] <= v[2]);
        assert_true(v[3] >= 0 && v[3] <= v[4] && v[4] <= 180);
        assert_true(isfinite(v[5]) && isfinite(v[6]));   /* the bear's ellipsoids are closed */
        assert_float_equal(v[6], 1.0, 1e-4);             /* plain bones keep the volume */
        assert_true(v[7] > 0 && v[8] >= 0 && v[9] >= 0 && v[10] > 0);
    }
    assert_true(rows[30].v[0] > 0.01); /* the soft body moves the surface away from plain bones */

    snprintf(p, sizeof p, "%s/report.md", out);
    char *md = cli_read_all(p, &len);
    assert_non_null(md);
    assert_true(strncmp(md, "# plush compare: plush_bear.pmx\n\n**", 35) == 0);
    assert_non_null(strstr(md, "| proxy vs bones |"));
    assert_non_null(strstr(md, "## What it means"));
    /* the verdict opens the report */
    size_t direct_rows = report_csv_rows(csv, "proxy,direct", rows, 200);
    assert_int_equal(direct_rows, FRAMES);
    assert_true(strncmp(md + 33, "**proxy is ", 11) == 0);
    assert_non_null(strstr(md, "× faster than direct**"));
    assert_non_null(strstr(md, "% of the model's size"));
    assert_non_null(strstr(md, "| proxy vs direct |"));
    assert_non_null(strstr(md, "| bones vs direct |"));
    /* one verdict, a convergence sentence either way, and with two generated sizes the size to use */
    assert_true((strstr(md, "**proxy is better than plain bones**") != NULL) !=
                (strstr(md, "**proxy is no better than plain bones**") != NULL));
    assert_true((strstr(md, "**The reference converges**") != NULL) !=
                (strstr(md, "**The reference does not converge**") != NULL));
    assert_non_null(strstr(md, "## Which cage size"));
    assert_non_null(strstr(md, "**Use "));
    /* which run is faster is make bench's (tools/bench/bench_compare.c), not a test's: here the verdict only
     * has to be the CSV's times */
    double tp = 0, td = 0;
    for (size_t i = 0; i < direct_rows; i++) {
        assert_true(isfinite(rows[i].v[0]) && rows[i].v[1] <= rows[i].v[2]);
        tp += rows[i].v[7] + rows[i].v[8], td += rows[i].v[9] + rows[i].v[10];
    }
    assert_true(tp > 0 && td > 0);
    double speedup = strtod(strstr(md, "**proxy is ") + 11, NULL);
    assert_float_equal(speedup, td / tp, 0.05 * td / tp); /* the verdict is the CSV's times */
    bool direct = direct_rows > 0;
    const char *plots[] = {"error.png", "time.png"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(p, sizeof p, "%s/%s", out, plots[i]);
        report_check_plot(p);
    }
    /* the middle frame, the last, and the worst (wherever it is) */
    snprintf(p, sizeof p, "%s/frame_%05d.png", out, FRAMES / 2);
    check_picture(p, direct);
    snprintf(p, sizeof p, "%s/frame_%05d.png", out, FRAMES - 1);
    check_picture(p, direct);
    free(csv);
    free(md);
}

/* Generated cages on the demo bear, whose visible surface is fifteen separate pieces: each cage is one wrap
 * around them, in one piece, reaching its size within 10%, pinned at the top of the head where the hook
 * holds the model's own cage, and nothing falls (each stays within 15% of the model's size of plain bones,
 * where a fallen piece would drop some 20 units in the first 20 frames, before the swing moves every cage
 * away from the bones on its own). The by-size plots are drawn. */
static void test_generated_cages(void **state)
{
    (void)state;
    char p[700];
    const char *out = bear_run();
    snprintf(p, sizeof p, "%s/metrics.csv", out);
    size_t len = 0;
    char *csv = cli_read_all(p, &len);
    assert_non_null(csv);
    /* one run per generated cage, named by its triangle count (within 10%) */
    unsigned small = 0, large = 0;
    for (const char *s = strstr(csv, ",proxy "); s; s = strstr(s + 1, ",proxy ")) {
        unsigned t = (unsigned)strtoul(s + 7, NULL, 10);
        small = t >= 270 && t <= 330 ? t : small;
        large = t >= 900 && t <= 1100 ? t : large;
    }
    assert_true(small && large);
    snprintf(p, sizeof p, "%s/report.md", out);
    char *md = cli_read_all(p, &len);
    assert_non_null(md);
    double size = report_number_after(md, "the model's size is its bounding-box diagonal at rest, ");
    assert_true(size > 5 && size < 50);
    const unsigned sizes[] = {small, large};
    for (size_t k = 0; k < 2; k++) {
        char run[32], pair[48];
        snprintf(run, sizeof run, "| proxy %u |", sizes[k]);
        const char *row = strstr(md, run);
        assert_non_null(row);
        const char *note = strstr(row, "generated cage (one wrap around the surface's ");
        assert_non_null(note);
        assert_true(note < strchr(row + 1, '\n'));
        assert_true(report_number_after(note, "surface's ") > 1);
        assert_non_null(strstr(note, "in 1 piece,"));
        assert_true(report_number_after(note, "piece, ") >= 1); /* pinned vertices */
        const char *pins = strstr(note, "pinned vertices (y "), *spans = strstr(note, "the cage spans y ");
        assert_non_null(pins);
        assert_non_null(spans);
        double pin_lo = report_number_after(pins, "(y "), pin_hi = report_number_after(pins, "… ");
        double bottom = report_number_after(spans, "spans y "), top = report_number_after(spans, "… ");
        /* the hook holds the top of the head: the pins sit in the cage's top tenth */
        assert_true(pin_lo <= pin_hi && pin_hi <= top + 1e-3);
        assert_true(pin_lo > top - 0.1 * (top - bottom));
        /* nothing falls: every frame's worst vertex stays near plain bones */
        static csv_row rows[200];
        snprintf(pair, sizeof pair, "proxy %u,bones", sizes[k]);
        size_t n = report_csv_rows(csv, pair, rows, 200);
        assert_int_equal(n, FRAMES);
        for (size_t i = 0; i < FALL_FRAMES; i++)
            assert_true(rows[i].v[2] < 0.15 * size);
    }
    free(csv);
    free(md);
    const char *plots[] = {"error_by_size.png", "time_by_size.png"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(p, sizeof p, "%s/%s", out, plots[i]);
        report_check_plot(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_demo_bear_writes_every_file),
        cmocka_unit_test(test_generated_cages),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
