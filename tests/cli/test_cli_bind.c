/* plush bind, run as a user runs it: the binary from PLUSH_BIN (build/plush by default) on PMX 2.1 models
 * built in code (a UV-sphere body and a cube of eyes inside an icosahedron cage with a TriMesh soft body),
 * written into a temporary directory that is removed afterwards. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/plush.h"
#include "plush/sys/core.h"
#include "support/cli_run.h"
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


enum { SPHERE = 9 * 13, CAGE = 60, EYES = 24, TRIANGLES = 20 };

static char model_path[300], bare_path[300];

static void write_text(const char *path, const char *text) { cli_write_all(path, text, strlen(text)); }

/* Exit 1 and exactly one line "plush: ..." holding want. */
static void expect_failure(const cli_result *r, const char *want)
{
    cli_expect_code(r, 1);
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
    if (cli_tmp_setup("plush_bind") != 0)
        return -1;
    cli_tmp_path(model_path, sizeof model_path, "plush.pmx");
    cli_tmp_path(bare_path, sizeof bare_path, "bare.pmx");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return cli_tmp_teardown();
}

/* The models are written by the first test that needs them (cmocka group setup runs before any test). */
static void need_models(void)
{
    if (cli_exists(model_path))
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
    cli_result r;
    CLI_RUN(&r, "bind", "--help");
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.out, "usage: plush bind"));
    cli_result_free(&r);
    CLI_RUN(&r, "help", "bind");
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    CLI_RUN(&r, "--help");
    assert_non_null(strstr(r.out, "bind MODEL.pmx"));
    cli_result_free(&r);
    char out[300];
    cli_tmp_path(out, sizeof out, "usage.csv");
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
        cli_run_list(&r, cases[i]);
        if (r.code != 2)
            fail_msg("case %zu: exit %d, expected 2", i, r.code);
        assert_memory_equal(r.err, "plush: ", 7);
        assert_int_equal(r.out_len, 0);
        cli_result_free(&r);
        assert_false(cli_exists(out));
    }
}

static void test_csv(void **state)
{
    (void)state;
    need_models();
    char out[300];
    cli_tmp_path(out, sizeof out, "binding.csv");
    cli_result r;
    CLI_RUN(&r, "bind", model_path, "-o", out);
    cli_expect_code(&r, 0);
    assert_int_equal(r.err_len, 0);
    cli_result_free(&r);
    size_t len, n;
    char *text = cli_read_all(out, &len);
    assert_non_null(text);
    csv_row *rows = parse_csv(text, &n, false);
    check_rows(rows, n, 1.0, SPHERE + EYES);
    free(rows);
    free(text);

    CLI_RUN(&r, "bind", "--seed", model_path, "-o", out);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    text = cli_read_all(out, &len);
    rows = parse_csv(text, &n, true);
    check_rows(rows, n, 100.0, SPHERE + EYES);
    free(rows);
    /* --original is the option's name, --seed its older spelling: the same bytes */
    CLI_RUN(&r, "bind", "--original", model_path, "-o", out);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    size_t len2;
    char *again = cli_read_all(out, &len2);
    assert_non_null(again);
    assert_true(len2 == len && memcmp(again, text, len) == 0);
    free(again);
    free(text);

    CLI_RUN(&r, "bind", model_path, "-o", out, "--materials", "eyes");
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    text = cli_read_all(out, &len);
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
    cli_tmp_path(im2, sizeof im2, "binding.im2");
    cli_tmp_path(plain, sizeof plain, "plain.csv");
    cli_tmp_path(through, sizeof through, "through.csv");
    cli_tmp_path(edited, sizeof edited, "edited.csv");
    cli_tmp_path(over, sizeof over, "over.im2");
    for (int seed = 0; seed < 2; seed++) {
        cli_result r;
        const char *mode = seed ? "--seed" : "--materials=body,eyes";
        CLI_RUN(&r, "bind", model_path, mode, "-o", im2);
        cli_expect_code(&r, 0);
        cli_result_free(&r);
        size_t len;
        char *text = cli_read_all(im2, &len);
        assert_non_null(text);
        assert_memory_equal(text, "InfluenceMapFile2 : ver1001\r\n", 29);
        assert_non_null(strstr(text, "PARTSTART\r\nbody\r\n0, "));
        assert_non_null(strstr(text, "PARTSTART\r\neyes\r\n"));
        free(text);
        CLI_RUN(&r, "bind", model_path, mode, "-o", plain);
        cli_expect_code(&r, 0);
        cli_result_free(&r);
        CLI_RUN(&r, "bind", model_path, mode, "--im2", im2, "-o", through);
        cli_expect_code(&r, 0);
        cli_result_free(&r);
        size_t a, b;
        char *x = cli_read_all(plain, &a), *y = cli_read_all(through, &b);
        assert_int_equal(a, b);
        assert_memory_equal(x, y, a);
        free(x);
        free(y);
    }
    write_text(over, "InfluenceMapFile2 : ver1001\r\n\r\nPARTSTART\r\neyes\r\n-1, 7, -1, CALC_NOSKIN0\r\nPARTEND\r\n"
                    "PARTSTART\r\nbody\r\n0, 1, 0, CALC_NOSKIN0\r\nPARTEND\r\n");
    cli_result r;
    CLI_RUN(&r, "bind", model_path, "--im2", over, "-o", edited);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    size_t len, n;
    char *text = cli_read_all(edited, &len);
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
    cli_tmp_path(out, sizeof out, "never.csv");
    cli_tmp_path(bad, sizeof bad, "bad.im2");
    cli_result r;
    CLI_RUN(&r, "bind", bare_path, "-o", out);
    expect_failure(&r, "TriMesh");
    assert_non_null(strstr(r.err, bare_path));
    cli_result_free(&r);
    assert_false(cli_exists(out));

    write_text(bad, "InfluenceMapFile2 : ver1001\r\nPARTSTART\r\neyes\r\n0, 1, -1, CALC_SOMETIMES\r\nPARTEND\r\n");
    CLI_RUN(&r, "bind", model_path, "--im2", bad, "-o", out);
    expect_failure(&r, "line 4: unknown method");
    assert_non_null(strstr(r.err, "bad.im2"));
    assert_non_null(strstr(r.err, "(at byte "));
    cli_result_free(&r);
    write_text(bad, "InfluenceMapFile2 : ver1001\r\nPARTSTART\r\nears\r\n0, 1, -1, CALC_NOSKIN0\r\nPARTEND\r\n");
    CLI_RUN(&r, "bind", model_path, "--im2", bad, "-o", out);
    expect_failure(&r, "line 3: part \"ears\"");
    cli_result_free(&r);
    write_text(bad, "InfluenceMapFile2 : ver1001\r\nPARTSTART\r\neyes\r\n3, -1, -1, CALC_NOSKIN0\r\nPARTEND\r\n");
    CLI_RUN(&r, "bind", model_path, "--im2", bad, "-o", out);
    expect_failure(&r, "line 4: child bone -1");
    cli_result_free(&r);
    assert_false(cli_exists(out));

    CLI_RUN(&r, "bind", model_path, "--materials", "tail", "-o", out);
    expect_failure(&r, "tail");
    cli_result_free(&r);
    CLI_RUN(&r, "bind", "/nonexistent/model.pmx", "-o", out);
    expect_failure(&r, "/nonexistent/model.pmx");
    cli_result_free(&r);
    CLI_RUN(&r, "bind", model_path, "--im2", "/nonexistent/o.im2", "-o", out);
    expect_failure(&r, "/nonexistent/o.im2");
    cli_result_free(&r);
    assert_false(cli_exists(out));

    /* A failed run leaves an existing output as it was. */
    write_text(out, "old");
    CLI_RUN(&r, "bind", bare_path, "-o", out);
    cli_expect_code(&r, 1);
    cli_result_free(&r);
    size_t len;
    char *text = cli_read_all(out, &len);
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
