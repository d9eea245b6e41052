/* Every shared character's soft part (as tools/soak.sh runs them) through the short hard motions make writes
 * beside the binary (tools/stress/stress_motions.c): a 720-degree-a-second spin, a jump and landing, a head
 * shake, arms crossing the body and a deep squat, each 150 frames then standing still. Held to what the
 * characters suite holds the long dance's first frames to -- status 0, every frame written with finite
 * figures, no blow-up, the cage's links within 2, the surface bar where the case meets it on the dances, the
 * swing figures in the file and the summary alike, the swing bar where the case meets it on every motion; the body figure and the cage's fold are printed, not held:
 * the squat presses the thighs into the skirts, and fast turns fold some cages past 120 degrees
 * (docs/measured.md). Skipped, visibly, without
 * ../shared/data. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "support/characters.h"
#include "support/cli_run.h"

#include <stdio.h>

static int setup(void **state)
{
    (void)state;
    return cli_tmp_setup("plush_stress");
}

static int teardown(void **state)
{
    (void)state;
    return cli_tmp_teardown();
}

static void test_characters_stress(void **state)
{
    (void)state;
    static const char *const motions[] = {"spin", "jump", "head_shake", "arms_cross", "kneel"};
    enum { MOTIONS = sizeof motions / sizeof motions[0] };
    char paths[MOTIONS][700];
    for (size_t m = 0; m < MOTIONS; m++) {
        characters_stress_motion(motions[m], paths[m], sizeof paths[m]);
        assert_true(characters_present(paths[m])); /* make writes them before any suite runs */
    }
    size_t ran = 0;
    for (size_t i = 0; i < characters_case_count; i++) {
        if (!characters_present(characters_cases[i].model)) {
            print_message("      absent, not run: %s\n", characters_cases[i].model);
            continue;
        }
        for (size_t m = 0; m < MOTIONS; m++)
            characters_run_case(&characters_cases[i], paths[m], "151", 151, 0, true);
        ran++;
    }
    if (ran == 0)
        skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_characters_stress, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
