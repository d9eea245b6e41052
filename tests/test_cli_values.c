/* Issue 15, as a user meets it on the command line: physics time is never dropped at low frame rates or
 * high physics rates, and non-finite values in a model are warnings for info and convert and refusals
 * naming the model's byte for the commands that need them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/plush.h"
#include "support/cli_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BEAR "proxies/plush_bear.pmx"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_low_frame_rate_takes_every_step, setup, teardown),
        cmocka_unit_test_setup_teardown(test_high_physics_rate_runs_full_time, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
