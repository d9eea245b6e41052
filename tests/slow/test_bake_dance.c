/* The bake on a dancing character as a user makes it (make test-slow: a minute of CPU): Alicia's hair caged,
 * the first 1,000 frames of the shared long dance, default options and --bake-physics. The baked VMD keeps
 * within a player's budget (600,000 keys, 60 MB), and the baked PMX + VMD replayed by plush pose (the bone
 * pipeline, no physics) lies within 0.2% of her height RMS and 1% at the worst vertex of the run's own frames,
 * frames between the fit's samples included. */
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

#define LONG_DANCE SHARED_CHARACTERS "/mmd_base/サンプルモーション2.vmd"

static int setup(void **state)
{
    (void)state;
    return cli_tmp_setup("plush_bake_dance");
}

static int teardown(void **state)
{
    (void)state;
    return cli_tmp_teardown();
}

static void test_alicia_hair_bake(void **state)
{
    (void)state;
    if (!cli_exists(ALICIA) || !cli_exists(LONG_DANCE)) {
        print_message("skipped: %s or %s is absent\n", ALICIA, LONG_DANCE);
        skip();
    }
    char out[512];
    cli_tmp_path(out, sizeof out, "alicia");
    cli_result r;
    CLI_RUN(&r, "run", ALICIA, "--cage", "hair:300", "--motion", LONG_DANCE, "--frames", "1000", "--bake-physics",
            "--export", "pmx+vmd,obj", "--every", "111", "-o", out);
    cli_expect_code(&r, 0);
    const char *line = strstr(r.out, " keys (");
    assert_non_null(line);
    while (line > r.out && line[-1] != '\n')
        line--;
    unsigned long bones = 0, keys = 0;
    assert_int_equal(sscanf(line, " %lu bones, %lu keys", &bones, &keys), 2);
    assert_null(strstr(r.out, "too many for MMD"));
    assert_true(keys <= 600000);
    char pmx[600], vmd[600];
    snprintf(pmx, sizeof pmx, "%s/Alicia_solid_plush.pmx", out);
    snprintf(vmd, sizeof vmd, "%s/Alicia_solid_plush.vmd", out);
    size_t vmd_size = 0;
    free(cli_read_all(vmd, &vmd_size));
    assert_true(vmd_size <= 60000000);
    cli_result_free(&r);

    plush_pmx_model *m = NULL;
    plush_diag d = {.file = ALICIA, .offset = -1, .index = -1};
    assert_int_equal(plush_pmx_read_file(ALICIA, NULL, &m, &d), PLUSH_OK);
    double height = plush_pmx_height(m);
    plush_pmx_free(m);
    double worst_rms = 0, worst = 0;
    for (int f = 111; f < 1000; f += 111) {
        char fs[16], frame[600], posed[600];
        snprintf(fs, sizeof fs, "%d", f);
        snprintf(frame, sizeof frame, "%s/frames/frame_%05d.obj", out, f);
        cli_tmp_path(posed, sizeof posed, "posed.obj");
        CLI_RUN(&r, "pose", pmx, "--motion", vmd, "--frame", fs, "--mesh", posed);
        cli_expect_code(&r, 0);
        cli_result_free(&r);
        size_t na = 0, nb = 0;
        float(*a)[3] = cli_obj_positions(frame, &na), (*b)[3] = cli_obj_positions(posed, &nb);
        assert_int_equal(na, nb);
        double sq = 0, far = 0;
        for (size_t i = 0; i < na; i++) {
            double dx = (double)a[i][0] - b[i][0], dy = (double)a[i][1] - b[i][1], dz = (double)a[i][2] - b[i][2];
            double dd = dx * dx + dy * dy + dz * dz;
            sq += dd;
            far = fmax(far, sqrt(dd));
        }
        free(a), free(b);
        double rms = na ? sqrt(sq / (double)na) : 0;
        print_message("frame %d: RMS %.3g (%.3f%% of the height), worst %.3g (%.3f%%)\n", f, rms, 100 * rms / height,
                      far, 100 * far / height);
        worst_rms = fmax(worst_rms, rms);
        worst = fmax(worst, far);
    }
    print_message("%lu bones, %lu keys, VMD %.1f MB; replayed within %.3f%% RMS, %.3f%% worst of %.1f units\n",
                  bones, keys, vmd_size / 1e6, 100 * worst_rms / height, 100 * worst / height, height);
    assert_true(worst_rms <= 0.002 * height);
    assert_true(worst <= 0.01 * height);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_alicia_hair_bake, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
