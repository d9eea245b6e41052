/* plush compare's sweep on a real skirt, as the comparison's acceptance asks it (make test-slow: the reference at four
 * times the skirt's detail costs about a second a frame). 03's skirt caged, test.vmd's first 100 frames (the
 * skirt swings for some 60 and then stands), cages of 100, 300 and 1,000 triangles asked: the reference converges
 * at every frame, the error against it falls with the cage's size, and the report advises the finest. Every
 * cage has the preset's bending links whatever its size (docs/compare.md, "Which bending links a finer cage
 * takes"): the 966-triangle cage with links matched to hang as the model's own cage does lay further from the
 * reference than the 256-triangle one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "support/cli_run.h"
#include "support/shared_data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SKIRT SHARED_CHARACTERS "/pmx_tailor/03_扱えるメッシュ_裾不均等.pmx"
#define SHORT_DANCE SHARED_CHARACTERS "/blender_mmd_tools/test.vmd"

static int setup(void **state)
{
    (void)state;
    return cli_tmp_setup("plush_compare_sizes");
}

static int teardown(void **state)
{
    (void)state;
    return cli_tmp_teardown();
}

static void test_error_falls_with_cage_size(void **state)
{
    (void)state;
    char *md = cli_compare_report("sizes", (const char *const[]){SKIRT, "--cage", "スカート", "--motion", SHORT_DANCE,
                                                               "--frames", "100", "--proxy-triangles", "100,300,1000",
                                                               NULL});
    assert_non_null(strstr(md, "**The reference converges**"));
    /* the size table: | triangles | mean RMS (share) | worst frame's RMS | ms/frame | speed-up | */
    const char *at = strstr(md, "## Which cage size");
    assert_non_null(at);
    at = strstr(at, "|---:|"); /* the header's rule; the rows follow, one a size */
    assert_non_null(at);
    size_t triangles[3] = {0};
    double rms[3] = {0};
    for (int i = 0; i < 3; i++) {
        at = strchr(at, '\n');
        assert_non_null(at);
        at++;
        assert_int_equal(sscanf(at, "| %zu | %lf", &triangles[i], &rms[i]), 2);
        print_message("%zu triangles: %.4f from direct (RMS, mean)\n", triangles[i], rms[i]);
    }
    assert_true(triangles[0] < triangles[1] && triangles[1] < triangles[2]);
    assert_true(rms[1] < rms[0] && rms[2] < rms[1]);
    char advice[64];
    snprintf(advice, sizeof advice, "**Use %zu triangles**", triangles[2]);
    assert_non_null(strstr(md, advice));
    free(md);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_falls_with_cage_size),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
