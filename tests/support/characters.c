/* The shared characters' soft parts and the checks every run of them is held to (characters.h). Every run
 * must end with status 0, write every frame with finite figures, blow nothing up and leave the soft part alive;
 * the cases that meet the surface bar (p99.9 strain <= 1.5, <= 0.5% of edges beyond 1.5x, crease p99 <= 30
 * degrees at every frame) are held to it, and none of their pieces may be more than half pinned; those whose
 * cage does not fold (crease p99 within 120 degrees, the bar's fold) are held to that; the summary's count of
 * frames over the bar and quality.csv's over_bar count the folds. The body
 * figure is printed, and held to the level reached with the push out of the body. The cage's p99.9 strain
 * stays under 2 on every case (every link held to 1.5, pinned ones too). The two hairs that follow their
 * author's physics within the swing bar on every motion run here are held to it (their ratios: Alicia's 1.13 on
 * the long dance's first 120 frames, 0.59 on the short dance, 0.76-0.82 on the hard motions; sample_finish's 1.02,
 * 1.81, 0.84-1.06); the ratio is the summary's, over the frames where the author's part stays whole: Luka's
 * hair swings 0.41 of hers there on the short dance, so it is not held (docs/measured.md). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/scene.h"
#include "support/characters.h"
#include "support/cli_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>




/* Behind the visible skin, the runs here (the long dance's first 120 frames, the short dance): the two
 * pmx_tailor skirts and the cape keep within the bar (the second skirt by one sampled vertex: not held); on
 * average within its half point all but Luka's dress (材質8, 材質18: where the dress lies on her waist and
 * hips at rest the cage's blend dips a hair behind the skin, and the hem passes through her raised knees); at a few frames more than 2 points above the author's: the uneven
 * skirt (5 of 120), Alicia's hair (19), Luka's hair (2), sample_finish's skirt (2) and her hair (5 of the
 * short dance's 25) (docs/measured.md, "Behind the visible skin"). */
const character_case characters_cases[] = {
    {CHARACTERS_DATA "mmd/pmx_tailor/01_基本の使い方.pmx", "スカート", true, 0.04, true, true, true, false, false},
    /* within the skin bar on these runs too, but by one sampled vertex (1.84 points over the author's at the
     * short dance's worst frame): not held to it, so a rounding elsewhere cannot fail the suite */
    {CHARACTERS_DATA "mmd/pmx_tailor/04_色々な使い方_裾.pmx", "スカート", true, 0.04, true, true, false, false, false},
    /* the uneven skirt: 1.15% inside the thigh capsules at a frame of the short dance since the vertices pushed out
     * from behind the visible skin lie on it, inside the capsules (fatter than the legs; 0.89% before) */
    {CHARACTERS_DATA "characters/pmx_tailor/03_扱えるメッシュ_裾不均等.pmx", "スカート", true, 0.04, false, true, false, false, false},
    /* Alicia's hair: one frame of the short dance has 1.45% of its surface's edges beyond 1.5x since the cage's
     * caps are flipped (docs/surface.md); its cage folded past 120 degrees at her fastest head turns before the
     * fold guards (crease p99 127 on the long dance's first frames, 166 on the short one; 90 now) */
    {CHARACTERS_DATA "mmd/alicia/Alicia_solid.pmx", "hair", false, 0.05, true, true, false, false, true},
    /* Luka's hair: 1.2% inside at the short dance's worst frame since the cage's caps are flipped (0.8% before);
     * following the author's physics (the default) it missed the surface bar where the author's locks are flung
     * apart (53 of the spin's 151 frames, every one a frame the author's own hair tore); following it only as far
     * as a whole surface can, it met the bar on every motion here. Its cage pinned where the hair lies on her head
     * (the fitted pins), it swings 0.67 of the author's on the spin (0.48 before) and misses the surface bar at 2
     * of its frames (p99.9 1.53 and 1.57, its tips' long edges): held to the bar on the dances */
    {CHARACTERS_DATA "characters/blender_mmd_tools/巡音ルカ_f14b5a4.pmx", "材質3", true, 0.08, false, true, false, true, false},
    /* her skirt is the lower half of her dress (材質18 is its waistband and hem trims); its cage folded to crease
     * p99 122 degrees at one frame of the long dance's first 120 before the fold guards */
    {CHARACTERS_DATA "characters/blender_mmd_tools/巡音ルカ_f14b5a4.pmx", "材質8", true, 0.14, false, true, false, false, false},
    /* the cape does not meet the bar (its crease p99 over 30 degrees at 4 frames of the long dance; none with a
     * cage of 150, which the summary's hint names: docs/measured.md) */
    {CHARACTERS_DATA "characters/pmx_tailor/04_色々な使い方_裏面.pmx", "表マント,裏マント", false, 0.09, true, true, true, false, false},
    /* Luka's trims, sewn onto her dress where the author's physics swings it: --cage joins the dress, and the
     * garment's cage meets the bar (caged alone they tore at the seam: 448 of 450 frames over) */
    {CHARACTERS_DATA "characters/blender_mmd_tools/巡音ルカ_f14b5a4.pmx", "材質18", true, 0.25, false, true, false, false, false},
    /* blender2pmxem's sample character: her ponytailed hair has 0.72% of its edges beyond 1.5x at a frame of the
     * short dance and 1.4% inside the body at another (0% and under 1% before the cage's caps were flipped), its
     * cage folding to 123 degrees before the fold guards */
    {CHARACTERS_DATA "mmd/blender2pmxem/sample_finish.pmx", "髪", false, 0.03, false, true, false, false, true},
    /* her pleated skirt, whose detailed mesh is barely finer than a 300-triangle cage: the blend stretched two of
     * its edges past the bar where a thigh lifts into its front (1 frame of the spin, 51 of the long dance); the
     * push's strain pass pulls them back, and it meets the bar on every run here (9 frames of the long dance still
     * miss it: docs/measured.md) */
    {CHARACTERS_DATA "mmd/blender2pmxem/sample_finish.pmx", "スカート", true, 0.09, true, true, false, false, false},
};
const size_t characters_case_count = sizeof characters_cases / sizeof characters_cases[0];

bool characters_present(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f)
        fclose(f);
    return f != NULL;
}

size_t characters_column(const char *csv, const char *name, double *out, size_t cap)
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

size_t characters_check_torn(const char *out, const char *csv)
{
    enum { CAP = 8192 };
    static double p999[CAP], outside[CAP], swing[CAP], author[CAP];
    size_t rows = characters_column(csv, "author_surface_strain_p999", p999, CAP);
    assert_int_equal(characters_column(csv, "author_surface_strain_outside", outside, CAP), rows);
    assert_int_equal(characters_column(csv, "soft_swing_share", swing, CAP), rows);
    assert_int_equal(characters_column(csv, "author_swing_share", author, CAP), rows);
    /* a figure the file rounds to the bar may fall either side of it */
    size_t lo = 0, hi = 0, whole = 0;
    double mine = 0, theirs = 0;
    for (size_t i = 0; i < rows; i++) {
        if (isnan(p999[i])) { /* not measured: the author gave the part no physics, so nothing tears */
            assert_true(isnan(outside[i]));
            p999[i] = 1, outside[i] = 0;
        }
        assert_true(p999[i] >= 1 && outside[i] >= 0 && outside[i] <= 1);
        lo += p999[i] > 1.5 * (1 + 1e-5) || outside[i] > 0.005 * (1 + 1e-5);
        bool torn = p999[i] > 1.5 * (1 - 1e-5) || outside[i] > 0.005 * (1 - 1e-5);
        hi += torn;
        if (!torn)
            whole++, mine += swing[i], theirs += author[i];
    }
    /* the swing line's own line under it (the swing line may say "(no ratio judged: the author's part tears at
     * every frame)") */
    const char *line = strstr(out, "\n                  the author's part tears at ");
    if (line)
        line += 19;
    else {
        assert_int_equal(lo, 0);
        return 0;
    }
    unsigned long long n = 0, of = 0;
    assert_int_equal(sscanf(line, "the author's part tears at %llu of %llu frames", &n, &of), 2);
    assert_true(n >= lo && n <= hi && of == rows && n > 0);
    if (strstr(out, "(no ratio judged: the author's part tears at every frame)"))
        assert_true(n == rows);
    const char *kept = strstr(out, "where the author's part stays whole (");
    assert_true((kept != NULL) == (n < rows));
    if (kept && lo == hi) {
        unsigned long long w = 0, wof = 0;
        double said_mine = -1, said_theirs = -1;
        assert_int_equal(sscanf(kept, "where the author's part stays whole (%llu of %llu frames) %lf%% against %lf%%",
                                &w, &wof, &said_mine, &said_theirs),
                         4);
        assert_true(w == whole && wof == rows);
        assert_true(fabs(said_mine - 100 * mine / (double)whole) <= 0.006 &&
                    fabs(said_theirs - 100 * theirs / (double)whole) <= 0.006);
    }
    return (size_t)n;
}

double characters_max_of(const double *v, size_t n)
{
    double m = -INFINITY;
    for (size_t i = 0; i < n; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

void characters_run_case(const character_case *c, const char *dance, const char *frames, size_t want,
                         double alive_min, characters_motion kind)
{
    bool stress = kind != CHARACTERS_DANCE;
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
    /* the cage: within 20% of its target (300, or a fifth of a coarse surface's faces, which the line names), no
     * degenerate triangle */
    const char *cage_line = strstr(r.out, "\n  cage ");
    assert_non_null(cage_line);
    long triangles = strtol(cage_line + 8, NULL, 10), target = 300;
    const char *line_end = strchr(cage_line + 1, '\n'), *aim = strstr(cage_line, "; target ");
    if (aim && (!line_end || aim < line_end))
        target = strtol(aim + 9, NULL, 10);
    assert_true(triangles * 5 >= target * 4 && triangles * 5 <= target * 6);
    assert_null(strstr(r.err, "degenerate"));
    size_t n = 0;
    char *csv = cli_read_all(csv_path, &n);
    assert_non_null(csv);
    enum { CAP = 8192 };
    static double p999[CAP], outside[CAP], crease[CAP], inside[CAP], bones[CAP], offset[CAP], cage[CAP],
        swing[CAP], author[CAP], cage_crease[CAP], over_bar[CAP], crossing[CAP], skin[CAP], author_skin[CAP];
    size_t rows = characters_column(csv, "surface_strain_p999", p999, CAP);
    assert_int_equal(rows, want);
    assert_int_equal(characters_column(csv, "surface_strain_outside", outside, CAP), rows);
    assert_int_equal(characters_column(csv, "surface_crease_p99", crease, CAP), rows);
    assert_int_equal(characters_column(csv, "body_inside_share", inside, CAP), rows);
    assert_int_equal(characters_column(csv, "bones_inside_share", bones, CAP), rows);
    assert_int_equal(characters_column(csv, "soft_offset_share", offset, CAP), rows);
    assert_int_equal(characters_column(csv, "cage_strain_p999", cage, CAP), rows);
    assert_int_equal(characters_column(csv, "cage_crease_p99", cage_crease, CAP), rows);
    assert_int_equal(characters_column(csv, "over_bar", over_bar, CAP), rows);
    assert_int_equal(characters_column(csv, "crossing_stretch_max", crossing, CAP), rows);
    assert_int_equal(characters_column(csv, "soft_swing_share", swing, CAP), rows);
    assert_int_equal(characters_column(csv, "author_swing_share", author, CAP), rows);
    assert_int_equal(characters_column(csv, "skin_inside_share", skin, CAP), rows);
    assert_int_equal(characters_column(csv, "author_skin_inside_share", author_skin, CAP), rows);
    /* behind the visible skin against the author's model: the file's frames, the summary's means and count */
    double skin_mean = 0, author_skin_mean = 0, skin_gap = -1;
    size_t skin_over = 0;
    for (size_t i = 0; i < rows; i++) {
        assert_true(skin[i] >= 0 && skin[i] <= 1 && author_skin[i] >= 0 && author_skin[i] <= 1);
        skin_mean += skin[i] / (double)rows, author_skin_mean += author_skin[i] / (double)rows;
        skin_gap = fmax(skin_gap, skin[i] - author_skin[i]);
        skin_over += skin[i] - author_skin[i] > PLUSH_SOFT_SKIN_FRAME_BAR;
    }
    const char *skin_line = strstr(r.out, "\n  skin ");
    assert_non_null(skin_line);
    double said_skin = -1, said_author_skin = -1;
    assert_non_null(strstr(skin_line, "on average"));
    assert_int_equal(sscanf(strstr(skin_line, "on average"), "on average %lf%% of the vertices, the author's model %lf%%",
                            &said_skin, &said_author_skin),
                     2);
    assert_true(fabs(said_skin - 100 * skin_mean) <= 0.006 && fabs(said_author_skin - 100 * author_skin_mean) <= 0.006);
    assert_true((strstr(r.out, "frames more than 2 points above the author's") != NULL) == (skin_over > 0));
    /* the skin through the part: the file's frames where it is measured, and the summary's means of them */
    static double show[CAP], author_show[CAP];
    assert_int_equal(characters_column(csv, "show_share", show, CAP), rows);
    assert_int_equal(characters_column(csv, "author_show_share", author_show, CAP), rows);
    double show_mean = 0, author_show_mean = 0;
    size_t shown = 0;
    for (size_t i = 0; i < rows; i++) {
        assert_true(isnan(show[i]) == isnan(author_show[i]));
        if (isnan(show[i]))
            continue;
        assert_true(show[i] >= 0 && show[i] <= 1 && author_show[i] >= 0 && author_show[i] <= 1);
        show_mean += show[i], author_show_mean += author_show[i], shown++;
    }
    const char *show_line = strstr(r.out, "\n  showing ");
    assert_true((show_line != NULL) == (shown > 0));
    if (show_line) {
        double said_show = -1, said_author_show = -1;
        assert_int_equal(sscanf(strstr(show_line, "shows through it on average"),
                                "shows through it on average %lf%%, the author's model %lf%%", &said_show,
                                &said_author_show),
                         2);
        assert_true(fabs(said_show - 100 * show_mean / (double)shown) <= 0.006 &&
                    fabs(said_author_show - 100 * author_show_mean / (double)shown) <= 0.006);
        /* its verdict: judged on the means where the author's part has physics (the swing line then), else none */
        char line[1024];
        size_t len = strcspn(show_line + 1, "\n");
        snprintf(line, sizeof line, "%.*s", (int)len, show_line + 1);
        bool within = strstr(line, "; within the bar (bar: within 5 points on average);") != NULL;
        bool over = strstr(line, "; over the bar (bar: within 5 points on average);") != NULL;
        bool none = strstr(line, "; no bar: the author gave it no physics") != NULL;
        assert_int_equal(within + over + none, 1);
        if (within || over) /* the summary's own means, before its rounding to two places */
            assert_true(within == (100 * (show_mean - author_show_mean) / (double)shown <= 100 * PLUSH_SOFT_SHOW_MEAN_BAR + 1e-9));
    }
    /* the swing: plush's and the author's physics' from the pose without physics, per frame in the file and
     * their means in the summary (or, where the author gave the part no physics, plush's alone) */
    double mean_swing = 0, mean_author = 0;
    for (size_t i = 0; i < rows; i++) {
        assert_true(isfinite(swing[i]) && swing[i] >= 0 && isfinite(author[i]) && author[i] >= 0);
        mean_swing += swing[i] / (double)rows, mean_author += author[i] / (double)rows;
    }
    double said_swing = -1, said_author = -1;
    const char *swing_line = strstr(r.out, "\n  swing ");
    const char *no_physics = strstr(r.out, "the author gave it no physics");
    assert_true((swing_line != NULL) != (no_physics != NULL));
    if (swing_line) {
        assert_int_equal(sscanf(swing_line, "\n  swing %lf%% of its size from the pose without physics on average, "
                                            "the author's physics %lf%%", &said_swing, &said_author), 2);
        assert_true(fabs(said_author - 100 * mean_author) <= 0.006);
    } else {
        assert_non_null(strstr(no_physics, "so gravity judges it: it swings "));
        said_swing = strtod(strstr(no_physics, "it swings ") + 10, NULL);
        assert_true(mean_author < 1e-6); /* no physics bone: bone skinning is the pose without physics */
    }
    assert_true(fabs(said_swing - 100 * mean_swing) <= 0.006);
    /* the frames where the author's part tears, left out of the swing bar */
    size_t torn = characters_check_torn(r.out, csv);
    /* the swing bar, where the summary judges by it (the author's part moves) */
    if (c->swing_bar && swing_line && strstr(swing_line, ", bar "))
        assert_non_null(strstr(swing_line, "bar 0.5-2: meets it)"));
    double alive = 0;
    for (size_t i = 0; i < rows; i++) {
        assert_true(isfinite(p999[i]) && isfinite(outside[i]) && isfinite(crease[i]) && isfinite(inside[i]) &&
                    isfinite(bones[i]) && isfinite(offset[i]));
        alive += offset[i] / (double)rows;
    }
    const char *name = strrchr(c->model, '/') + 1;
    print_message("      %s %s, %zu frames of %s: cage %ld triangles, p99.9 %.3f; surface p99.9 %.3f, beyond 1.5x "
                  "%.2f%%, crease p99 %.1f, cage crease p99 %.1f, across pieces %.3fx, alive %.2f%%, inside %.2f%% "
                  "(bone skinning %.2f%%), most pinned %d%%; swing %.2f%%, the author's %.2f%% (it tears at %zu frames); "
                  "behind the skin %.2f%% "
                  "(the author's %.2f%%), at most %.2f points above it, at %zu frames over 2\n",
                  name, c->cage, rows, strrchr(dance, '/') + 1, triangles, characters_max_of(cage, rows),
                  characters_max_of(p999, rows), 100 * characters_max_of(outside, rows), characters_max_of(crease, rows),
                  characters_max_of(cage_crease, rows),
                  characters_max_of(crossing, rows) > 0 ? characters_max_of(crossing, rows) : 1.0, 100 * alive,
                  100 * characters_max_of(inside, rows), 100 * characters_max_of(bones, rows), most_pinned(r.out),
                  100 * mean_swing, 100 * mean_author, torn, 100 * skin_mean, 100 * author_skin_mean, 100 * skin_gap, skin_over);
    if (c->skin_bar && !stress)
        assert_true(skin_over == 0 && skin_mean - author_skin_mean <= PLUSH_SOFT_SKIN_MEAN_BAR);
    assert_true(alive >= alive_min);
    /* held to the case's figure, or to the author's level where the author's own skinning goes deeper
     * (the pmx_tailor skirts: 4.6% inside at the long dance's first frames, plush 4.1-4.7%) */
    if (!stress)
        assert_true(characters_max_of(inside, rows) <= fmax(c->most_inside, characters_max_of(bones, rows) + 0.01));
    for (size_t i = 0; c->short_inside && !frames && i < rows; i++)
        assert_true(inside[i] <= fmax(0.01, bones[i]));
    assert_true(characters_max_of(cage, rows) < 2); /* every link held to 1.5, pinned ones too */
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
        /* no hint for the bar (others may speak: the swing's, a sewn part's) */
        assert_null(strstr(r.out, "\n  hint            where the surface misses its bar"));
        assert_null(strstr(r.out, "\n  hint            a finer physics step"));
    } else {
        unsigned long long miss = 0, of = 0;
        assert_int_equal(sscanf(bar, "): %llu of %llu frames miss it", &miss, &of), 2);
        assert_int_equal(of, rows);
        assert_true(miss >= over_lo && miss <= over_hi && miss > 0);
        assert_non_null(strstr(r.out, hint));
        /* at the default 60 Hz, a finer physics step is the other thing to try */
        assert_non_null(strstr(r.out, "\n  hint            a finer physics step often meets it too"));
        assert_non_null(strstr(r.out, "--physics-hz 120"));
    }
    if (c->unfolded && kind != CHARACTERS_MADE_UP) /* the fold is the surface bar's: printed there */
        assert_true(characters_max_of(cage_crease, rows) <= 120);
    if (c->surface_bar && !(stress && c->bar_on_dances) && kind != CHARACTERS_MADE_UP) {
        assert_true(characters_max_of(p999, rows) <= 1.5);
        assert_true(characters_max_of(outside, rows) <= 0.005);
        assert_true(characters_max_of(crease, rows) <= 30);
        assert_true(most_pinned(r.out) <= 50);
    }
    free(csv);
    cli_result_free(&r);
}

void characters_stress_motion(const char *name, char *out, size_t cap)
{
    const char *bin = getenv("PLUSH_BIN");
    char dir[600];
    snprintf(dir, sizeof dir, "%.500s", bin ? bin : "build/plush");
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    snprintf(out, cap, "%s/stress/%s.vmd", dir, name);
}
