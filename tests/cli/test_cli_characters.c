/* The shared characters with their soft parts, caged the way a user cages them (plush run MODEL --cage
 * MATERIAL --motion DANCE), on a short version of each case tools/soak.sh runs in full: the first FRAMES
 * frames of the long dance and the whole of the short one. Every case must end with status 0, write every
 * frame with finite figures, blow nothing up and leave the soft part alive (its bound vertices on average
 * at least 0.5% of its size from where bone skinning puts them). The cases that meet the surface bar
 * (p99.9 strain <= 1.5, <= 0.5% of edges beyond 1.5x, crease p99 <= 30 degrees at every frame) are held
 * to it, and none of their pieces may be more than half pinned; those whose cage does not fold (crease p99
 * within 120 degrees, the bar's fold) are held to that; the summary's count of frames over the bar and
 * quality.csv's over_bar count the folds. The body figure is printed, and held to
 * the level reached with the push out of the body; the bar of 1% at every frame, held on the short dance
 * by every case but Luka's hair, dress and trims and sample_finish's hair, is not met on the long one (docs/measured.md). The cage's
 * p99.9 strain stays under 2 on every case (every link held to 1.5, pinned ones too). The full-length runs
 * are tools/soak.sh's. Skipped, visibly, without ../shared/data. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "support/cli_run.h"
#include "support/shared_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DATA SHARED_DATA "/"
#define LONG_DANCE DATA "characters/mmd_base/サンプルモーション2.vmd"
#define SHORT_DANCE DATA "characters/blender_mmd_tools/test.vmd"
#define FRAMES "120"

typedef struct character_case {
    const char *model, *cage;
    bool surface_bar;      /* meets the surface bar and has no piece more than half pinned */
    double most_inside;    /* the body figure reached: the worst frame's share inside, at most (or the
                              author's skinning's worst plus one point, when that is more) */
    bool short_inside;     /* on the whole short dance at most 1% inside at every frame (the bar) */
    bool unfolded;         /* its cage's crease p99 stays within 120 degrees at every frame (the bar's fold) */
} character_case;

static const character_case cases[] = {
    {DATA "mmd/pmx_tailor/01_基本の使い方.pmx", "スカート", true, 0.04, true, true},
    {DATA "mmd/pmx_tailor/04_色々な使い方_裾.pmx", "スカート", true, 0.04, true, true},
    {DATA "characters/pmx_tailor/03_扱えるメッシュ_裾不均等.pmx", "スカート", true, 0.04, true, true},
    /* Alicia's hair: its cage folds past 120 degrees at her fastest head turns (crease p99 127 on the long
     * dance's first frames, 166 on the short one), and one frame of the short dance has 1.04% of its surface's
     * edges beyond 1.5x since the cage's caps are flipped (docs/surface.md) */
    {DATA "mmd/alicia/Alicia_solid.pmx", "hair", false, 0.05, true, false},
    /* Luka's hair: 1.2% inside at the short dance's worst frame since the cage's caps are flipped (0.8% before) */
    {DATA "characters/blender_mmd_tools/巡音ルカ_f14b5a4.pmx", "材質3", true, 0.08, false, true},
    /* her skirt is the lower half of her dress (材質18 is its waistband and hem trims); its cage folds to crease
     * p99 122 degrees at one frame of the long dance's first 120 */
    {DATA "characters/blender_mmd_tools/巡音ルカ_f14b5a4.pmx", "材質8", true, 0.14, false, false},
    /* the cape (its crease p99 over 30 degrees at 4 frames of the long dance; none with a cage of 150, which
     * the summary's hint names) and Luka's trims do not meet the bar (docs/measured.md) */
    {DATA "characters/pmx_tailor/04_色々な使い方_裏面.pmx", "表マント,裏マント", false, 0.09, true, true},
    {DATA "characters/blender_mmd_tools/巡音ルカ_f14b5a4.pmx", "材質18", false, 0.25, false, false},
    /* blender2pmxem's sample character: her ponytailed hair has 0.72% of its edges beyond 1.5x at a frame of the
     * short dance and 1.4% inside the body at another (0% and under 1% before the cage's caps were flipped), its
     * cage folding to 123 degrees; her pleated skirt, whose detailed mesh is barely finer than a 300-triangle
     * cage, misses the bar at some frames of the long dance (docs/measured.md) */
    {DATA "mmd/blender2pmxem/sample_finish.pmx", "髪", false, 0.03, false, false},
    {DATA "mmd/blender2pmxem/sample_finish.pmx", "スカート", false, 0.09, true, true},
};

static int setup(void **state)
{
    (void)state;
    return cli_tmp_setup("plush_characters");
}

static int teardown(void **state)
{
    (void)state;
    return cli_tmp_teardown();
}

static bool present(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f)
        fclose(f);
    return f != NULL;
}

/* Column `name` of every data row of csv into out (at most cap rows); the number of rows. */
static size_t column(const char *csv, const char *name, double *out, size_t cap)
{
    int col = cli_csv_column(csv, name);
    assert_true(col >= 0);
    size_t rows = 0;
    for (const char *p = strchr(csv, '\n'); p && p[1] && rows < cap; p = strchr(p + 1, '\n')) {
        const char *q = p + 1;
        for (int k = 0; k < col; k++)
            q = strchr(q, ',') + 1;
        out[rows++] = *q == ',' || *q == '\n' || *q == '\r' ? NAN : strtod(q, NULL); /* empty: no figure */
    }
    return rows;
}

/* The largest "pinned (N%)" of the summary's piece lines. */
static int most_pinned(const char *out)
{
    int most = 0;
    for (const char *p = strstr(out, " pinned ("); p; p = strstr(p + 1, " pinned (")) {
        int pct = atoi(p + 9);
        most = pct > most ? pct : most;
    }
    return most;
}

static double max_of(const double *v, size_t n)
{
    double m = -INFINITY;
    for (size_t i = 0; i < n; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

static void run_case(const character_case *c, const char *dance, const char *frames, size_t want)
{
    char out[600], csv_path[700];
    snprintf(out, sizeof out, "%s/run", cli_tmp_dir());
    snprintf(csv_path, sizeof csv_path, "%s/quality.csv", out);
    cli_result r;
    if (frames)
        CLI_RUN(&r, "run", c->model, "--cage", c->cage, "--motion", dance, "--frames", frames, "--export", "quality",
                "-o", out);
    else
        CLI_RUN(&r, "run", c->model, "--cage", c->cage, "--motion", dance, "--export", "quality", "-o", out);
    cli_expect_code(&r, 0);
    assert_null(strstr(r.out, "blow-ups"));
    /* every figure the summary words is a number or says what it is not (an open hair has no volume) */
    assert_null(strstr(r.out, " nan"));
    assert_null(strstr(r.out, "-nan"));
    /* the cage: within 20% of its target (300), no degenerate triangle */
    const char *cage_line = strstr(r.out, "\n  cage ");
    assert_non_null(cage_line);
    long triangles = strtol(cage_line + 8, NULL, 10);
    assert_true(triangles >= 240 && triangles <= 360);
    assert_null(strstr(r.err, "degenerate"));
    size_t n = 0;
    char *csv = cli_read_all(csv_path, &n);
    assert_non_null(csv);
    enum { CAP = 8192 };
    static double p999[CAP], outside[CAP], crease[CAP], inside[CAP], bones[CAP], offset[CAP], cage[CAP],
        cage_crease[CAP], over_bar[CAP], crossing[CAP];
    size_t rows = column(csv, "surface_strain_p999", p999, CAP);
    assert_int_equal(rows, want);
    assert_int_equal(column(csv, "surface_strain_outside", outside, CAP), rows);
    assert_int_equal(column(csv, "surface_crease_p99", crease, CAP), rows);
    assert_int_equal(column(csv, "body_inside_share", inside, CAP), rows);
    assert_int_equal(column(csv, "bones_inside_share", bones, CAP), rows);
    assert_int_equal(column(csv, "soft_offset_share", offset, CAP), rows);
    assert_int_equal(column(csv, "cage_strain_p999", cage, CAP), rows);
    assert_int_equal(column(csv, "cage_crease_p99", cage_crease, CAP), rows);
    assert_int_equal(column(csv, "over_bar", over_bar, CAP), rows);
    assert_int_equal(column(csv, "crossing_stretch_max", crossing, CAP), rows);
    double alive = 0;
    for (size_t i = 0; i < rows; i++) {
        assert_true(isfinite(p999[i]) && isfinite(outside[i]) && isfinite(crease[i]) && isfinite(inside[i]) &&
                    isfinite(bones[i]) && isfinite(offset[i]));
        alive += offset[i] / (double)rows;
    }
    const char *name = strrchr(c->model, '/') + 1;
    print_message("      %s %s, %zu frames of %s: cage %ld triangles, p99.9 %.3f; surface p99.9 %.3f, beyond 1.5x "
                  "%.2f%%, crease p99 %.1f, cage crease p99 %.1f, across pieces %.3fx, alive %.2f%%, inside %.2f%% (bone skinning %.2f%%), most pinned %d%%\n",
                  name, c->cage, rows, strrchr(dance, '/') + 1, triangles, max_of(cage, rows), max_of(p999, rows),
                  100 * max_of(outside, rows), max_of(crease, rows), max_of(cage_crease, rows), max_of(crossing, rows) > 0 ? max_of(crossing, rows) : 1.0, 100 * alive, 100 * max_of(inside, rows),
                  100 * max_of(bones, rows), most_pinned(r.out));
    assert_true(alive >= 0.005);
    /* held to the case's figure, or to the author's level where the author's own skinning goes deeper
     * (the pmx_tailor skirts: 4.6% inside at the long dance's first frames, plush 4.1-4.7%) */
    assert_true(max_of(inside, rows) <= fmax(c->most_inside, max_of(bones, rows) + 0.01));
    if (c->short_inside && !frames)
        assert_true(max_of(inside, rows) <= 0.01);
    assert_true(max_of(cage, rows) < 2); /* every link held to 1.5, pinned ones too */
    /* the summary counts the frames that miss the surface bar, a cage folded back onto itself (crease p99 over
     * 120 degrees) included, as the file has them (a figure the file rounds to the limit may fall either side),
     * and where some do, names the coarser cage to try; the file's over_bar column marks the same frames */
    size_t over_lo = 0, over_hi = 0, flagged = 0;
    for (size_t i = 0; i < rows; i++) {
        over_lo += p999[i] > 1.5 * (1 + 1e-5) || outside[i] > 0.005 * (1 + 1e-5) || crease[i] > 30 * (1 + 1e-5) ||
                   cage_crease[i] > 120 * (1 + 1e-3);
        over_hi += p999[i] > 1.5 * (1 - 1e-5) || outside[i] > 0.005 * (1 - 1e-5) || crease[i] > 30 * (1 - 1e-5) ||
                   cage_crease[i] > 120 * (1 - 1e-3);
        flagged += over_bar[i] == 1;
        assert_true(isnan(crossing[i]) || crossing[i] >= 1); /* empty: no edge crosses between pieces */
    }
    assert_true(flagged >= over_lo && flagged <= over_hi);
    const char *bar = strstr(r.out, "surface bar (");
    assert_non_null(bar);
    bar = strstr(bar, "): ");
    assert_non_null(bar);
    char hint[256];
    snprintf(hint, sizeof hint, "\n  hint            where the surface misses its bar, a cage of half the triangles often "
             "meets it: --cage %s:%ld\n", c->cage, triangles / 2);
    if (strncmp(bar, "): every frame meets it", 23) == 0) {
        assert_int_equal(over_lo, 0);
        assert_null(strstr(r.out, "\n  hint "));
    } else {
        unsigned long long miss = 0, of = 0;
        assert_int_equal(sscanf(bar, "): %llu of %llu frames miss it", &miss, &of), 2);
        assert_int_equal(of, rows);
        assert_true(miss >= over_lo && miss <= over_hi && miss > 0);
        assert_non_null(strstr(r.out, hint));
    }
    if (c->unfolded)
        assert_true(max_of(cage_crease, rows) <= 120);
    if (c->surface_bar) {
        assert_true(max_of(p999, rows) <= 1.5);
        assert_true(max_of(outside, rows) <= 0.005);
        assert_true(max_of(crease, rows) <= 30);
        assert_true(most_pinned(r.out) <= 50);
    }
    free(csv);
    cli_result_free(&r);
}

static void test_characters_dance(void **state)
{
    (void)state;
    if (!present(LONG_DANCE) || !present(SHORT_DANCE)) {
        print_message("skipped: the shared dances are absent (%s, %s)\n", LONG_DANCE, SHORT_DANCE);
        skip();
    }
    size_t ran = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (!present(cases[i].model)) {
            print_message("      absent, not run: %s\n", cases[i].model);
            continue;
        }
        run_case(&cases[i], LONG_DANCE, FRAMES, (size_t)atoi(FRAMES));
        run_case(&cases[i], SHORT_DANCE, NULL, 25); /* the short dance whole: 25 frames */
        ran++;
    }
    if (ran == 0)
        skip();
}

/* A cape of two layers (表マント outside, 裏マント inside, sharing every position): caged by one layer or
 * both, the layers stay together (tear <= 0.01 units at every frame), and the summary names the layer it
 * pulled in. */
static void test_layers_stay_together(void **state)
{
    (void)state;
    const char *cape = DATA "characters/pmx_tailor/04_色々な使い方_裏面.pmx";
    if (!present(cape) || !present(LONG_DANCE)) {
        print_message("skipped: %s or %s is absent\n", cape, LONG_DANCE);
        skip();
    }
    static const char *const cages[] = {"表マント", "表マント,裏マント"};
    for (int k = 0; k < 2; k++) {
        char out[600], csv_path[700];
        snprintf(out, sizeof out, "%s/cape%d", cli_tmp_dir(), k);
        snprintf(csv_path, sizeof csv_path, "%s/quality.csv", out);
        cli_result r;
        CLI_RUN(&r, "run", cape, "--cage", cages[k], "--motion", LONG_DANCE, "--frames", FRAMES, "--export",
                "quality", "-o", out);
        cli_expect_code(&r, 0);
        if (k == 0)
            assert_non_null(strstr(r.out, "\"裏マント\""));
        size_t n = 0;
        char *csv = cli_read_all(csv_path, &n);
        assert_non_null(csv);
        enum { CAP = 1024 };
        static double tear[CAP];
        size_t rows = column(csv, "surface_tear", tear, CAP);
        assert_int_equal(rows, (size_t)atoi(FRAMES));
        print_message("      --cage %s: layers apart at most %.3g over %zu frames\n", cages[k], max_of(tear, rows), rows);
        assert_true(max_of(tear, rows) <= 0.01);
        free(csv);
        cli_result_free(&r);
    }
}

/* Luka's material caged on the long dance's first 700 frames, in OUTDIR name: it ends with status 0, no
 * figure nan, no blow-up; warned (when not NULL) is in what it warned. */
static void luka_part_runs_clean(const char *cage, const char *name, const char *warned)
{
    const char *luka = DATA "characters/blender_mmd_tools/巡音ルカ_f14b5a4.pmx";
    if (!present(luka) || !present(LONG_DANCE)) {
        print_message("skipped: %s or %s is absent\n", luka, LONG_DANCE);
        skip();
    }
    char out[600];
    snprintf(out, sizeof out, "%s/%s", cli_tmp_dir(), name);
    cli_result r;
    CLI_RUN(&r, "run", luka, "--cage", cage, "--motion", LONG_DANCE, "--frames", "700", "--export", "quality",
            "-o", out);
    cli_expect_code(&r, 0);
    if (warned)
        assert_non_null(strstr(r.err, warned));
    assert_null(strstr(r.err, "blew up"));
    assert_null(strstr(r.out, " nan"));
    assert_null(strstr(r.out, "blow-ups"));
    cli_result_free(&r);
}

/* Luka's eyes (材質30) caged on the long dance's first 700 frames: two small domes held by three pins each.
 * Bullet's pose matching turned their rest shape with the three pins, whose moment is singular, and went
 * non-finite at frame 644: the process died inside Bullet's contact test (SIGSEGV). Plush keeps such a
 * body's shape itself and says so; the run ends, every figure finite. */
static void test_eyes_on_three_pins(void **state)
{
    (void)state;
    luka_part_runs_clean("材質30", "eyes", "pinned nodes lie close to a plane");
}

/* Luka's choker (材質10) caged on the long dance's first 700 frames: a hair body her own physics swings met
 * the cage's pinned collar, which Bullet's contact treats as immovable, and was thrown at 1e26 units/s at
 * frame 611, the cage with it (two blow-ups, reset). Pinned nodes now make no contact with bodies physics
 * moves: none. */
static void test_choker_and_hair_bodies(void **state)
{
    (void)state;
    luka_part_runs_clean("材質10", "choker", NULL);
}

/* The pmx_tailor character's bob (23 locks, most nearly flat, held by three or four pins at the crown) on the
 * long dance's first 120 frames, with a fast turn at 60-85. Matched to its rest shape turned with all its
 * nodes alike, the locks flew out and up around the head (11% of the hair's size from bone skinning, edges
 * squeezed beyond 2/3 at 30 frames, 7.4% of them at worst); with Bullet's own matching, turned with the
 * pins, the bob sways and stays a bob (5.9%, 2 frames, 1.5%); with the flat locks' matching pulling twice
 * as hard, no frame squeezed (4.8%). */
static void test_bob_stays_a_bob(void **state)
{
    (void)state;
    const char *model = DATA "characters/pmx_tailor/03_扱えるメッシュ_裾不均等.pmx";
    if (!present(model) || !present(LONG_DANCE)) {
        print_message("skipped: %s or %s is absent\n", model, LONG_DANCE);
        skip();
    }
    char out[600], csv_path[700];
    snprintf(out, sizeof out, "%s/bob", cli_tmp_dir());
    snprintf(csv_path, sizeof csv_path, "%s/quality.csv", out);
    cli_result r;
    CLI_RUN(&r, "run", model, "--cage", "N00_000_Hair_00_HAIR", "--motion", LONG_DANCE, "--frames", "120", "--export",
            "quality", "-o", out);
    cli_expect_code(&r, 0);
    size_t n = 0;
    char *csv = cli_read_all(csv_path, &n);
    assert_non_null(csv);
    enum { CAP = 1024 };
    static double offset[CAP], outside[CAP];
    size_t rows = column(csv, "soft_offset_share", offset, CAP);
    assert_int_equal(rows, 120);
    assert_int_equal(column(csv, "surface_strain_outside", outside, CAP), rows);
    size_t over = 0;
    for (size_t i = 0; i < rows; i++)
        over += outside[i] > 0.005;
    print_message("      the bob: at most %.1f%% of its size from bone skinning, %zu of %zu frames with edges beyond "
                  "1.5x over 0.5%% (%.2f%% at worst)\n",
                  100 * max_of(offset, rows), over, rows, 100 * max_of(outside, rows));
    assert_true(max_of(offset, rows) < 0.08);
    assert_true(max_of(offset, rows) > 0.01); /* it sways */
    assert_true(over == 0 && max_of(outside, rows) <= 0.005);
    free(csv);
    cli_result_free(&r);
}

/* Alicia's hair caged and hanging still (no motion) for 120 frames: the binding does not pull its strands
 * apart at rest (surface p99.9 strain at most 1.1 at every frame). */
static void test_hair_hanging_still(void **state)
{
    (void)state;
    const char *alicia = DATA "mmd/alicia/Alicia_solid.pmx";
    if (!present(alicia)) {
        print_message("skipped: %s is absent\n", alicia);
        skip();
    }
    char out[600], csv_path[700];
    snprintf(out, sizeof out, "%s/still", cli_tmp_dir());
    snprintf(csv_path, sizeof csv_path, "%s/quality.csv", out);
    cli_result r;
    CLI_RUN(&r, "run", alicia, "--cage", "hair", "--frames", "120", "--export", "quality", "-o", out);
    cli_expect_code(&r, 0);
    size_t n = 0;
    char *csv = cli_read_all(csv_path, &n);
    assert_non_null(csv);
    enum { CAP = 256 };
    static double p999[CAP];
    size_t rows = column(csv, "surface_strain_p999", p999, CAP);
    assert_int_equal(rows, 120);
    print_message("      Alicia's hair hanging still: surface p99.9 at most %.3f over 120 frames\n", max_of(p999, rows));
    assert_true(max_of(p999, rows) <= 1.1);
    free(csv);
    cli_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_characters_dance, setup, teardown),
        cmocka_unit_test_setup_teardown(test_layers_stay_together, setup, teardown),
        cmocka_unit_test_setup_teardown(test_eyes_on_three_pins, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bob_stays_a_bob, setup, teardown),
        cmocka_unit_test_setup_teardown(test_choker_and_hair_bodies, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hair_hanging_still, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
