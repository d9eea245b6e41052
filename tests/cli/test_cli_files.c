/* The CLI and hostile files or paths: text from a file reaches stderr escaped (exact bytes), an output
 * of /dev/stdout is written through, an interrupted write leaves the previous output and no
 * temporary file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/plush.h"
#include "plush/sys/core.h"
#include "support/cli_run.h"
#include "support/pmx_fixture.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char hostile_name[] = "a\nplush: fake\x1b[2J\xc2\x9b" "b";

static void write_model(const char *path, plush_pmx_model *m)
{
    plush_buf b = pmx_fx_write_ok(m, NULL, NULL);
    cli_write_all(path, b.data, b.size);
    plush_buf_free(&b);
}

static void test_warning_text_escaped(void **state)
{
    (void)state;
    plush_pmx_model *m = pmx_fx_minimal(2.0f);
    m->rigid_bodies[0].name = pmx_fx_str(m, hostile_name);
    /* A dynamic body without mass: physics warns, naming the body. */
    m->rigid_bodies[0].mode = PLUSH_PMX_RIGID_PHYSICS;
    m->rigid_bodies[0].mass = 0;
    char model[512], out[512];
    cli_tmp_path(model, sizeof model, "hostile.pmx");
    cli_tmp_path(out, sizeof out, "hostile_out");
    write_model(model, m);
    plush_pmx_free(m);
    cli_result r;
    CLI_RUN(&r, "run", model, "--mode", "bones", "--frames", "2", "-o", out);
    cli_expect_code(&r, 0);
    char want[1024];
    snprintf(want, sizeof want,
             "plush: warning: %s: rigid body 0: \"a\\nplush: fake\\x1b[2J\\u009bb\": dynamic body with mass 0 "
             "would be static; simulated with mass 1\n",
             model);
    /* Exactly that line, and no raw control character anywhere on stderr. */
    assert_non_null(r.err);
    assert_non_null(strstr(r.err, want));
    for (size_t i = 0; i < r.err_len; i++) {
        unsigned char c = (unsigned char)r.err[i];
        assert_true(c == '\n' || c == '\r' || (c >= 0x20 && c != 0x7f));
        assert_false(c == 0xc2 && i + 1 < r.err_len && (unsigned char)r.err[i + 1] < 0xa0);
    }
    cli_result_free(&r);
}

static void test_output_to_stdout(void **state)
{
    (void)state;
    plush_pmx_model *m = pmx_fx_minimal(2.0f);
    char model[512];
    cli_tmp_path(model, sizeof model, "plain.pmx");
    write_model(model, m);
    plush_pmx_free(m);
    size_t len;
    char *want = cli_read_all(model, &len);
    assert_non_null(want);
    cli_result r;
    CLI_RUN(&r, "convert", model, "-o", "/dev/stdout");
    cli_expect_code(&r, 0);
    assert_int_equal(r.out_len, len);
    assert_memory_equal(r.out, want, len);
    cli_result_free(&r);
    free(want);
    /* A directory given as the output is refused with one line. */
    char dir[512];
    cli_tmp_path(dir, sizeof dir, "");
    CLI_RUN(&r, "convert", model, "-o", dir);
    cli_expect_one_error_line(&r);
    assert_non_null(strstr(r.err, "is a directory"));
    cli_result_free(&r);
}

static int count_temps(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strstr(e->d_name, "plush-tmp") || strstr(e->d_name, ".tmp")) {
            printf("test_cli_files: left behind: %s\n", e->d_name);
            n++;
        }
    closedir(d);
    return n;
}

/* plush convert of a big model, signalled the moment its temporary file appears (inotify on the
 * folder). Whether the signal lands before the rename or after the process is done is up to the
 * scheduler; either way the output must be the old bytes or the new ones, and no temporary file
 * may remain. */
static void test_interrupted_write(void **state)
{
    (void)state;
    const char *bin = getenv("PLUSH_BIN") ? getenv("PLUSH_BIN") : "build/plush";
    char dir[400], model[512], out[512];
    cli_tmp_path(dir, sizeof dir, "sigdir");
    mkdir(dir, 0777);
    cli_tmp_path(model, sizeof model, "big.pmx");
    snprintf(out, sizeof out, "%s/out.pmx", dir);
    plush_pmx_model *m = pmx_fx_minimal(2.0f);
    pmx_fx_vertices(m, 400000);
    write_model(model, m);
    plush_pmx_free(m);
    size_t new_len;
    char *fresh = cli_read_all(model, &new_len);
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    int interrupted = 0;
    for (int t = 0; t < 9; t++) {
        cli_write_all(out, "old output", 10);
        int in = inotify_init1(IN_CLOEXEC);
        assert_true(in >= 0);
        assert_true(inotify_add_watch(in, dir, IN_CREATE) >= 0);
        pid_t child = fork();
        assert_true(child >= 0);
        if (child == 0) {
            execl(bin, bin, "convert", model, "-o", out, "--pmx-version", "2.0", (char *)NULL);
            _exit(127);
        }
        char ev[4096];
        ssize_t n = read(in, ev, sizeof ev); /* the temporary file has been created */
        assert_true(n > 0);
        kill(child, sigs[t % 3]);
        close(in);
        int status;
        assert_int_equal(waitpid(child, &status, 0), child);
        if (WIFSIGNALED(status)) {
            assert_int_equal(WTERMSIG(status), sigs[t % 3]);
            interrupted++;
        } else {
            assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        }
        size_t len;
        char *got = cli_read_all(out, &len);
        assert_non_null(got);
        assert_true((len == 10 && memcmp(got, "old output", 10) == 0) ||
                    (len == new_len && memcmp(got, fresh, len) == 0));
        free(got);
        assert_int_equal(count_temps(dir), 0);
    }
    printf("test_cli_files: %d of 9 writes interrupted before their rename\n", interrupted);
    free(fresh);
}

/* plush run's bake into an OUTDIR that holds an earlier pair, signalled at the moment its staging folder
 * appears (before any output exists) and at the moment its commit starts (the folder that takes the
 * replaced entries appears): afterwards OUTDIR holds the old pair or the new pair, never one of each, and
 * no temporary file or staging folder. */
/* "old pmx" and "old vmd" as the bake's two files, put in dir as plush's own (a commit records them in
 * dir/.plush-set): a run may replace them, as it replaces its last outputs. */
static void plant_old_set(const char *dir)
{
    plush_diag d = {0};
    plush_file_stage *stage;
    assert_int_equal(plush_file_stage_begin(dir, &stage, &d), PLUSH_OK);
    char path[600];
    snprintf(path, sizeof path, "%s/plush_bear_plush.pmx", plush_file_stage_path(stage));
    cli_write_all(path, "old pmx", 7);
    snprintf(path, sizeof path, "%s/plush_bear_plush.vmd", plush_file_stage_path(stage));
    cli_write_all(path, "old vmd", 7);
    assert_int_equal(plush_file_stage_commit(stage, &d), PLUSH_OK);
    plush_file_stage_destroy(stage);
}

static void test_interrupted_bake_pair(void **state)
{
    (void)state;
    const char *bin = getenv("PLUSH_BIN") ? getenv("PLUSH_BIN") : "build/plush";
    char dir[400], pmx[512], vmd[512];
    cli_tmp_path(dir, sizeof dir, "bake_pair");
    mkdir(dir, 0777);
    snprintf(pmx, sizeof pmx, "%s/plush_bear_plush.pmx", dir);
    snprintf(vmd, sizeof vmd, "%s/plush_bear_plush.vmd", dir);
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    int interrupted = 0;
    for (int t = 0; t < 6; t++) {
        plant_old_set(dir);
        int in = inotify_init1(IN_CLOEXEC);
        assert_true(in >= 0);
        assert_true(inotify_add_watch(in, dir, IN_CREATE) >= 0);
        pid_t child = fork();
        assert_true(child >= 0);
        if (child == 0) {
            int null = open("/dev/null", O_WRONLY);
            dup2(null, 1), dup2(null, 2);
            execl(bin, bin, "run", "proxies/plush_bear.pmx", "--frames", "4", "-o", dir, (char *)NULL);
            _exit(127);
        }
        /* even t: the staging folder; odd t: the commit's folder for replaced entries */
        const char *want = t % 2 ? ".plush-old" : ".plush-tmp";
        bool seen = false;
        while (!seen) {
            char ev[4096] __attribute__((aligned(8)));
            ssize_t n = read(in, ev, sizeof ev);
            assert_true(n > 0);
            for (char *p = ev; p < ev + n;) {
                struct inotify_event *e = (struct inotify_event *)p;
                seen |= e->len && strncmp(e->name, want, strlen(want)) == 0;
                p += sizeof *e + e->len;
            }
        }
        kill(child, sigs[t % 3]);
        close(in);
        int status;
        assert_int_equal(waitpid(child, &status, 0), child);
        interrupted += WIFSIGNALED(status);
        size_t lp = 0, lv = 0;
        char *gp = cli_read_all(pmx, &lp), *gv = cli_read_all(vmd, &lv);
        assert_non_null(gp);
        assert_non_null(gv);
        bool old_p = lp == 7 && memcmp(gp, "old pmx", 7) == 0, old_v = lv == 7 && memcmp(gv, "old vmd", 7) == 0;
        assert_true(old_p == old_v); /* never a mix */
        if (!old_p)
            assert_true(lp > 1000 && lv > 1000 && memcmp(gp, "PMX ", 4) == 0);
        free(gp);
        free(gv);
        assert_int_equal(count_temps(dir), 0);
        DIR *d = opendir(dir);
        for (struct dirent *e; (e = readdir(d));)
            assert_true(strncmp(e->d_name, ".plush-tmp", 10) != 0 && strncmp(e->d_name, ".plush-old", 10) != 0 &&
                        strcmp(e->d_name, ".plush.lock") != 0);
        closedir(d);
    }
    printf("test_cli_files: %d of 6 bake runs ended by the signal\n", interrupted);
}

static int setup(void **state)
{
    (void)state;
    return cli_tmp_setup("plush_cli_files");
}

static int teardown(void **state)
{
    (void)state;
    return cli_tmp_teardown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_warning_text_escaped),
        cmocka_unit_test(test_output_to_stdout),
        cmocka_unit_test(test_interrupted_write),
        cmocka_unit_test(test_interrupted_bake_pair),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
