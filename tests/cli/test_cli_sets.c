/* A command's outputs appear as one set or not at all: plush pose's two files, plush
 * compare's report folder, plush run's OUTDIR locked against a second writer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "support/cli_run.h"
#include "support/shared_data.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>


/* --bones and --mesh: when the mesh cannot be written, the bones CSV is not written either. */
static void test_pose_both_or_neither(void **state)
{
    (void)state;
    char csv[512], blocked[512], mesh[600];
    cli_tmp_path(csv, sizeof csv, "bones.csv");
    cli_tmp_path(blocked, sizeof blocked, "no_dir");
    snprintf(mesh, sizeof mesh, "%s/mesh.obj", blocked); /* its folder does not exist */
    cli_write_all(csv, "old", 3);
    cli_result r;
    CLI_RUN(&r, "pose", ALICIA, "--frame", "0", "--bones", csv, "--mesh", mesh);
    cli_expect_one_error_line(&r);
    assert_non_null(strstr(r.err, "mesh.obj"));
    cli_result_free(&r);
    size_t n = 0;
    char *got = cli_read_all(csv, &n);
    assert_true(n == 3 && memcmp(got, "old", 3) == 0);
    free(got);
    /* and both when both can be */
    snprintf(mesh, sizeof mesh, "%s/mesh.obj", cli_tmp_dir());
    CLI_RUN(&r, "pose", ALICIA, "--frame", "0", "--bones", csv, "--mesh", mesh);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    assert_true(cli_exists(mesh));
    got = cli_read_all(csv, &n);
    assert_true(n > 3 && strncmp(got, "index,", 6) == 0);
    free(got);
}

/* A second writer of one OUTDIR is refused while the first holds it; a lock left by a dead process is
 * taken over with a warning. */
static void test_run_locked(void **state)
{
    (void)state;
    char out[512], lock[600];
    cli_tmp_path(out, sizeof out, "locked_out");
    assert_int_equal(mkdir(out, 0777), 0);
    snprintf(lock, sizeof lock, "%s/.plush.lock", out);
    pid_t holder = fork();
    assert_true(holder >= 0);
    if (holder == 0) {
        pause();
        _exit(0);
    }
    char pid[32];
    int len = snprintf(pid, sizeof pid, "%ld\n", (long)holder);
    cli_write_all(lock, pid, (size_t)len);
    cli_result r;
    CLI_RUN(&r, "run", BEAR, "--frames", "2", "-o", out);
    cli_expect_one_error_line(&r);
    assert_non_null(strstr(r.err, "lock"));
    cli_result_free(&r);
    assert_true(cli_exists(lock)); /* the holder's lock stays */
    kill(holder, SIGKILL);
    waitpid(holder, NULL, 0);
    CLI_RUN(&r, "run", BEAR, "--frames", "2", "-o", out);
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.err, "warning"));
    cli_result_free(&r);
    assert_false(cli_exists(lock)); /* released at the end */
}

/* compare whose CSV name is taken by a folder of the user's: nothing of the report appears. */
static void test_compare_one_set(void **state)
{
    (void)state;
    char out[512], p[600];
    cli_tmp_path(out, sizeof out, "report");
    assert_int_equal(mkdir(out, 0777), 0);
    snprintf(p, sizeof p, "%s/metrics.csv", out);
    assert_int_equal(mkdir(p, 0777), 0);
    cli_result r;
    CLI_RUN(&r, "compare", BEAR, "--frames", "3", "-o", out);
    cli_expect_code(&r, 1); /* after the run's warnings, one error line naming the clash */
    assert_non_null(strstr(r.err, "metrics.csv"));
    cli_result_free(&r);
    snprintf(p, sizeof p, "%s/report.md", out);
    assert_false(cli_exists(p));
    snprintf(p, sizeof p, "%s/error.png", out);
    assert_false(cli_exists(p));
}

/* A run too large for the machine is refused before its first frame with the figure, and leaves no
 * OUTDIR behind. */
static void test_run_too_large(void **state)
{
    (void)state;
    char out[512];
    cli_tmp_path(out, sizeof out, "huge");
    cli_result r;
    CLI_RUN(&r, "run", BEAR, "--frames", "10000000", "-o", out);
    cli_expect_one_error_line(&r);
    assert_non_null(strstr(r.err, "GB in memory"));
    cli_result_free(&r);
    assert_false(cli_exists(out));
}

static int setup(void **state)
{
    (void)state;
    return cli_tmp_setup("plush_cli_sets");
}

static int teardown(void **state)
{
    (void)state;
    return cli_tmp_teardown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pose_both_or_neither),
        cmocka_unit_test(test_run_locked),
        cmocka_unit_test(test_compare_one_set),
        cmocka_unit_test(test_run_too_large),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
