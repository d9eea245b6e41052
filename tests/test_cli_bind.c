/* plush bind, run as a user runs it: the binary from PLUSH_BIN (build/plush by default) on PMX 2.1 models
 * built in code (a UV-sphere body and a cube of eyes inside an icosahedron cage with a TriMesh soft body),
 * written into a temporary directory that is removed afterwards. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/plush.h"
#include "support/mesh_fixture.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum { RUN_TIMEOUT_MS = 120 * 1000, SPHERE = 9 * 13, CAGE = 60, EYES = 24, TRIANGLES = 20 };

static char tmp_dir[256];
static char model_path[300], bare_path[300];

static const char *tmp_path(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", tmp_dir, name);
    return buf;
}

static char *read_all(const char *path, size_t *len)
{
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    buf[n] = '\0';
    *len = (size_t)n;
    return buf;
}

static void write_all(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    assert_int_equal(fclose(f), 0);
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* ---- running the binary ---------------------------------------------------------------------- */

typedef struct run_result {
    int code;
    char *out, *err;
    size_t out_len, err_len;
} run_result;

static void run_free(run_result *r)
{
    free(r->out);
    free(r->err);
    memset(r, 0, sizeof *r);
}

static void run_list(run_result *r, const char *const *args)
{
    char out_path[300], err_path[300];
    tmp_path(out_path, sizeof out_path, "_stdout");
    tmp_path(err_path, sizeof err_path, "_stderr");
    const char *bin = getenv("PLUSH_BIN");
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)(bin && *bin ? bin : "build/plush");
    for (; *args && argc < 31; args++)
        argv[argc++] = (char *)*args;
    argv[argc] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        fail_msg("cannot run %s: %s (set PLUSH_BIN)", argv[0], strerror(rc));
    int status = 0;
    for (int waited = 0;; waited += 5) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR)
            fail_msg("waitpid: %s", strerror(errno));
        if (waited >= RUN_TIMEOUT_MS) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            fail_msg("plush did not finish in %d s", RUN_TIMEOUT_MS / 1000);
        }
        nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
    }
    r->out = read_all(out_path, &r->out_len);
    r->err = read_all(err_path, &r->err_len);
    assert_non_null(r->out);
    assert_non_null(r->err);
    if (!WIFEXITED(status))
        fail_msg("plush was killed by signal %d; stderr:\n%s", WIFSIGNALED(status) ? WTERMSIG(status) : -1, r->err);
    r->code = WEXITSTATUS(status);
}

#define RUN(r, ...) run_list((r), (const char *const[]){__VA_ARGS__, NULL})

static void expect_code(const run_result *r, int code)
{
    if (r->code != code)
        fail_msg("exit status %d, expected %d; stderr:\n%s", r->code, code, r->err);
}

/* Exit 1 and exactly one line "plush: ..." holding want. */
static void expect_failure(const run_result *r, const char *want)
{
    expect_code(r, 1);
    int lines = 0;
    for (size_t i = 0; i < r->err_len; i++)
        lines += r->err[i] == '\n';
    if (lines != 1 || strncmp(r->err, "plush: ", 7) != 0 || !strstr(r->err, want))
        fail_msg("expected one line with \"%s\", got:\n%s", want, r->err);
}

/* ---- fixtures -------------------------------------------------------------------------------- */

static void write_model(plush_pmx_model *m, const char *path)
{
    plush_diag d = {0};
    plush_diag_reset(&d);
    plush_status st = plush_pmx_write_file(m, NULL, path, &d);
    plush_pmx_free(m);
    if (st != PLUSH_OK) {
        char line[600];
        plush_diag_format(&d, line, sizeof line);
        fail_msg("cannot write the fixture: %s", line);
    }
}

static int setup(void **state)
{
    (void)state;
    const char *base = getenv("TMPDIR");
    snprintf(tmp_dir, sizeof tmp_dir, "%s/plush_bind_XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmp_dir))
        return -1;
    tmp_path(model_path, sizeof model_path, "plush.pmx");
    tmp_path(bare_path, sizeof bare_path, "bare.pmx");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    DIR *d = opendir(tmp_dir);
    if (d) {
        struct dirent *e;
        char path[600];
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
                snprintf(path, sizeof path, "%s/%s", tmp_dir, e->d_name);
                unlink(path);
            }
        closedir(d);
    }
    rmdir(tmp_dir);
    return 0;
}

/* The models are written by the first test that needs them (cmocka group setup runs before any test). */
static void need_models(void)
{
    if (exists(model_path))
        return;
    write_model(mesh_fx_plush(), model_path);
    plush_pmx_model *bare = mesh_fx_plush();
    bare->soft_body_count = 0;
    write_model(bare, bare_path);
}

/* ---- the CSV --------------------------------------------------------------------------------- */

typedef struct csv_row {
    long vertex, t[4];
    double w[4];
} csv_row;

/* Parses the CSV strictly; returns the rows (malloc'd). integers: weights must be whole numbers. */
static csv_row *parse_csv(const char *text, size_t *count, bool integers)
{
    static const char header[] = "vertex,t0,t1,t2,t3,w0,w1,w2,w3\n";
    assert_memory_equal(text, header, sizeof header - 1);
    const char *p = text + sizeof header - 1;
    size_t cap = 256, n = 0;
    csv_row *rows = malloc(cap * sizeof *rows);
    assert_non_null(rows);
    while (*p) {
        if (n == cap) {
            cap *= 2;
            rows = realloc(rows, cap * sizeof *rows);
            assert_non_null(rows);
        }
        csv_row *r = &rows[n++];
        char *end;
        r->vertex = strtol(p, &end, 10);
        for (int k = 0; k < 4; k++) {
            assert_int_equal(*end, ',');
            r->t[k] = strtol(end + 1, &end, 10);
        }
        for (int k = 0; k < 4; k++) {
            assert_int_equal(*end, ',');
            const char *at = end + 1;
            r->w[k] = integers ? (double)strtol(at, &end, 10) : strtod(at, &end);
            assert_true(end > at);
        }
        assert_int_equal(*end, '\n');
        p = end + 1;
    }
    *count = n;
    return rows;
}

/* Every row: increasing vertices of the body and eyes, triangles in range, used slots first, weights
 * summing to total. */
static void check_rows(const csv_row *rows, size_t n, double total, size_t expected)
{
    assert_int_equal(n, expected);
    for (size_t i = 0; i < n; i++) {
        const csv_row *r = &rows[i];
        assert_true(i == 0 || r->vertex > rows[i - 1].vertex);
        assert_true(r->vertex < SPHERE || (r->vertex >= SPHERE + CAGE && r->vertex < SPHERE + CAGE + EYES));
        double sum = 0;
        for (int k = 0; k < 4; k++) {
            assert_true(r->t[k] >= -1 && r->t[k] < TRIANGLES);
            if (r->t[k] < 0)
                assert_true(r->w[k] == 0);
            if (k > 0 && r->t[k] >= 0)
                assert_true(r->t[k - 1] >= 0);
            sum += r->w[k];
        }
        assert_true(r->t[0] >= 0);
        assert_true(fabs(sum - total) < 1e-5 * total);
    }
}

/* ---- tests ----------------------------------------------------------------------------------- */

static void test_help_and_usage(void **state)
{
    (void)state;
    run_result r;
    RUN(&r, "bind", "--help");
    expect_code(&r, 0);
    assert_non_null(strstr(r.out, "usage: plush bind"));
    run_free(&r);
    RUN(&r, "help", "bind");
    expect_code(&r, 0);
    run_free(&r);
    RUN(&r, "--help");
    assert_non_null(strstr(r.out, "bind MODEL.pmx"));
    run_free(&r);
    char out[300];
    tmp_path(out, sizeof out, "usage.csv");
    const char *const cases[][8] = {
        {"bind"},
        {"bind", "m.pmx"},
        {"bind", "-o", out},
        {"bind", "m.pmx", "-o", "out.txt"},
        {"bind", "m.pmx", "-o", out, "--frobnicate"},
        {"bind", "m.pmx", "-o", out, "--seed=yes"},
        {"bind", "m.pmx", "n.pmx", "-o", out},
        {"bind", "m.pmx", "-o", out, "-o", out},
        {"bind", "m.pmx", "-o", out, "--im2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_list(&r, cases[i]);
        if (r.code != 2)
            fail_msg("case %zu: exit %d, expected 2", i, r.code);
        assert_memory_equal(r.err, "plush: ", 7);
        assert_int_equal(r.out_len, 0);
        run_free(&r);
        assert_false(exists(out));
    }
}

static void test_csv(void **state)
{
    (void)state;
    need_models();
    char out[300];
    tmp_path(out, sizeof out, "binding.csv");
    run_result r;
    RUN(&r, "bind", model_path, "-o", out);
    expect_code(&r, 0);
    assert_int_equal(r.err_len, 0);
    run_free(&r);
    size_t len, n;
    char *text = read_all(out, &len);
    assert_non_null(text);
    csv_row *rows = parse_csv(text, &n, false);
    check_rows(rows, n, 1.0, SPHERE + EYES);
    free(rows);
    free(text);

    RUN(&r, "bind", "--seed", model_path, "-o", out);
    expect_code(&r, 0);
    run_free(&r);
    text = read_all(out, &len);
    rows = parse_csv(text, &n, true);
    check_rows(rows, n, 100.0, SPHERE + EYES);
    free(rows);
    free(text);

    RUN(&r, "bind", model_path, "-o", out, "--materials", "eyes");
    expect_code(&r, 0);
    run_free(&r);
    text = read_all(out, &len);
    rows = parse_csv(text, &n, false);
    assert_int_equal(n, EYES);
    assert_int_equal(rows[0].vertex, SPHERE + CAGE);
    free(rows);
    free(text);
}

/* -o x.im2, then --im2 x.im2 gives the binding it came from; an override file changes what it says. */
static void test_im2_round_trip(void **state)
{
    (void)state;
    need_models();
    char im2[300], plain[300], through[300], edited[300], over[300];
    tmp_path(im2, sizeof im2, "binding.im2");
    tmp_path(plain, sizeof plain, "plain.csv");
    tmp_path(through, sizeof through, "through.csv");
    tmp_path(edited, sizeof edited, "edited.csv");
    tmp_path(over, sizeof over, "over.im2");
    for (int seed = 0; seed < 2; seed++) {
        run_result r;
        const char *mode = seed ? "--seed" : "--materials=body,eyes";
        RUN(&r, "bind", model_path, mode, "-o", im2);
        expect_code(&r, 0);
        run_free(&r);
        size_t len;
        char *text = read_all(im2, &len);
        assert_non_null(text);
        assert_memory_equal(text, "InfluenceMapFile2 : ver1001\r\n", 29);
        assert_non_null(strstr(text, "PARTSTART\r\nbody\r\n0, "));
        assert_non_null(strstr(text, "PARTSTART\r\neyes\r\n"));
        free(text);
        RUN(&r, "bind", model_path, mode, "-o", plain);
        expect_code(&r, 0);
        run_free(&r);
        RUN(&r, "bind", model_path, mode, "--im2", im2, "-o", through);
        expect_code(&r, 0);
        run_free(&r);
        size_t a, b;
        char *x = read_all(plain, &a), *y = read_all(through, &b);
        assert_int_equal(a, b);
        assert_memory_equal(x, y, a);
        free(x);
        free(y);
    }
    write_all(over, "InfluenceMapFile2 : ver1001\r\n\r\nPARTSTART\r\neyes\r\n-1, 7, -1, CALC_NOSKIN0\r\nPARTEND\r\n"
                    "PARTSTART\r\nbody\r\n0, 1, 0, CALC_NOSKIN0\r\nPARTEND\r\n");
    run_result r;
    RUN(&r, "bind", model_path, "--im2", over, "-o", edited);
    expect_code(&r, 0);
    run_free(&r);
    size_t len, n;
    char *text = read_all(edited, &len);
    csv_row *rows = parse_csv(text, &n, false);
    assert_int_equal(n, SPHERE + EYES);
    for (size_t i = SPHERE; i < n; i++) {
        assert_int_equal(rows[i].t[0], 5);
        assert_int_equal(rows[i].t[1], -1);
        assert_true(rows[i].w[0] == 1.0);
    }
    /* Body vertex 0 (the sphere's first used vertex is PMX vertex 0) went back to bones: no triangle. */
    assert_int_equal(rows[0].vertex, 0);
    for (int k = 0; k < 4; k++) {
        assert_int_equal(rows[0].t[k], -1);
        assert_true(rows[0].w[k] == 0);
    }
    free(rows);
    free(text);
}

static void test_failures(void **state)
{
    (void)state;
    need_models();
    char out[300], bad[300];
    tmp_path(out, sizeof out, "never.csv");
    tmp_path(bad, sizeof bad, "bad.im2");
    run_result r;
    RUN(&r, "bind", bare_path, "-o", out);
    expect_failure(&r, "TriMesh");
    assert_non_null(strstr(r.err, bare_path));
    run_free(&r);
    assert_false(exists(out));

    write_all(bad, "InfluenceMapFile2 : ver1001\r\nPARTSTART\r\neyes\r\n0, 1, -1, CALC_SOMETIMES\r\nPARTEND\r\n");
    RUN(&r, "bind", model_path, "--im2", bad, "-o", out);
    expect_failure(&r, "line 4: unknown method");
    assert_non_null(strstr(r.err, "bad.im2"));
    assert_non_null(strstr(r.err, "(at byte "));
    run_free(&r);
    write_all(bad, "InfluenceMapFile2 : ver1001\r\nPARTSTART\r\nears\r\n0, 1, -1, CALC_NOSKIN0\r\nPARTEND\r\n");
    RUN(&r, "bind", model_path, "--im2", bad, "-o", out);
    expect_failure(&r, "line 3: part \"ears\"");
    run_free(&r);
    write_all(bad, "InfluenceMapFile2 : ver1001\r\nPARTSTART\r\neyes\r\n3, -1, -1, CALC_NOSKIN0\r\nPARTEND\r\n");
    RUN(&r, "bind", model_path, "--im2", bad, "-o", out);
    expect_failure(&r, "line 4: child bone -1");
    run_free(&r);
    assert_false(exists(out));

    RUN(&r, "bind", model_path, "--materials", "tail", "-o", out);
    expect_failure(&r, "tail");
    run_free(&r);
    RUN(&r, "bind", "/nonexistent/model.pmx", "-o", out);
    expect_failure(&r, "/nonexistent/model.pmx");
    run_free(&r);
    RUN(&r, "bind", model_path, "--im2", "/nonexistent/o.im2", "-o", out);
    expect_failure(&r, "/nonexistent/o.im2");
    run_free(&r);
    assert_false(exists(out));

    /* A failed run leaves an existing output as it was. */
    write_all(out, "old");
    RUN(&r, "bind", bare_path, "-o", out);
    expect_code(&r, 1);
    run_free(&r);
    size_t len;
    char *text = read_all(out, &len);
    assert_int_equal(len, 3);
    free(text);
    unlink(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_and_usage),
        cmocka_unit_test(test_csv),
        cmocka_unit_test(test_im2_round_trip),
        cmocka_unit_test(test_failures),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
