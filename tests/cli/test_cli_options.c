/* Option values: integers are decimal only, fractions are refused where a whole number
 * is expected, no hexadecimal, inf or blanks anywhere; plush attach refuses what plush run would repair or
 * reject (iteration counts, k-values outside Bullet's range, a cage coordinate the binding cannot use),
 * naming the cage file, its line and byte. Usage errors exit 2 before any file is read. */
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

#define NO_MODEL "no-such-model.pmx"

static void expect_usage(const char *const *args)
{
    cli_result r;
    cli_run_list(&r, args);
    if (r.code != 2)
        fprintf(stderr, "%s %s %s: exit %d: %s", args[0], args[2], args[3] ? args[3] : "", r.code, r.err);
    cli_expect_code(&r, 2);
    cli_result_free(&r);
}

static void test_whole_numbers(void **state)
{
    (void)state;
    char out[512];
    cli_tmp_path(out, sizeof out, "out");
    static const char *const frames[] = {"0x10", "1.5", "1e3", " 5", "+5", "-5", "5 ", "", "inf", "10000001"};
    for (size_t i = 0; i < sizeof frames / sizeof *frames; i++) {
        expect_usage((const char *const[]){"run", NO_MODEL, "--frames", frames[i], "-o", out, NULL});
        expect_usage((const char *const[]){"run", NO_MODEL, "--every", frames[i], "-o", out, NULL});
        expect_usage((const char *const[]){"compare", NO_MODEL, "--frames", frames[i], "-o", out, NULL});
        if (strcmp(frames[i], "10000001") != 0) /* proxy takes up to 1431655765 triangles */
            expect_usage((const char *const[]){"proxy", NO_MODEL, "--triangles", frames[i], "-o", "p.obj", NULL});
    }
    expect_usage((const char *const[]){"compare", NO_MODEL, "--proxy-triangles", "300, 1000", "-o", out, NULL});
    expect_usage((const char *const[]){"compare", NO_MODEL, "--proxy-triangles", "0x100", "-o", out, NULL});
    /* plain decimal values pass parsing (then the missing model is the error, exit 1) */
    cli_result r;
    CLI_RUN(&r, "run", NO_MODEL, "--frames", "16", "--every", "2", "--fps", "2.5e1", "-o", out);
    cli_expect_code(&r, 1);
    cli_result_free(&r);
}

/* --cage MATERIAL,...[:TRIANGLES]: no material, no count after the colon or a count of no triangle is bad
 * usage (exit 2), told before the model is read. */
static void test_cage_spec(void **state)
{
    (void)state;
    char out[512];
    cli_tmp_path(out, sizeof out, "out");
    static const char *const bad[] = {"skirt:0", ":100", "skirt:", ":", "", "skirt:1.5", "skirt:0x10", "skirt:-3"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        expect_usage((const char *const[]){"run", NO_MODEL, "--cage", bad[i], "-o", out, NULL});
    cli_result r;
    CLI_RUN(&r, "run", NO_MODEL, "--cage", "skirt:100", "-o", out);
    cli_expect_code(&r, 1); /* the syntax passes; the missing model is the error */
    cli_result_free(&r);
    /* the two shapes a soft part can keep, asked for at once; each alone passes */
    CLI_RUN(&r, "run", NO_MODEL, "--follow-author", "--own-shape", "-o", out);
    cli_expect_code(&r, 2);
    assert_non_null(strstr(r.err, "--follow-author (the default) and --own-shape ask for opposite shapes"));
    cli_result_free(&r);
    for (int k = 0; k < 2; k++) {
        CLI_RUN(&r, "run", NO_MODEL, k ? "--own-shape" : "--follow-author", "-o", out);
        cli_expect_code(&r, 1);
        cli_result_free(&r);
    }
}

static void test_decimal_numbers(void **state)
{
    (void)state;
    char out[512];
    cli_tmp_path(out, sizeof out, "out");
    static const char *const bad[] = {"0x1e", "0x1p4", "nan", "inf", " 30", "30 ", "3,5", "1e", "."};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        expect_usage((const char *const[]){"run", NO_MODEL, "--fps", bad[i], "-o", out, NULL});
        expect_usage((const char *const[]){"pose", NO_MODEL, "--frame", bad[i], "--bones", "b.csv", NULL});
        expect_usage((const char *const[]){"proxy", NO_MODEL, "--triangles", "10", "--offset", bad[i], "-o", "p.obj",
                                           NULL});
    }
    cli_result r;
    CLI_RUN(&r, "pose", NO_MODEL, "--frame", "12.5", "--bones", "b.csv");
    cli_expect_code(&r, 1);
    cli_result_free(&r);
}

/* attach refuses, as a usage error, a field value plush run would clamp or replace. */
static void test_attach_fields_as_run_takes_them(void **state)
{
    (void)state;
    static const char *const sets[] = {"iterations.p=2147483647", "iterations.v=1001", "mask=0xFFFF", "lst=1.5",
                                       "config.dp=2", "config.ahr=-0.1", "aero_model=5", "total_mass=0",
                                       "group=1.5"};
    for (size_t i = 0; i < sizeof sets / sizeof *sets; i++)
        expect_usage((const char *const[]){"attach", ALICIA, "--proxy", "proxies/alicia_hair_cage.obj", "--pin-bone",
                                           "頭", "--set", sets[i], "-o", "x.pmx", NULL});
}

/* A cage coordinate of 1e38 reads as a number, but no binding can use it: attach refuses it at its line. */
static void test_attach_cage_coordinate(void **state)
{
    (void)state;
    static const char obj[] = "# a cage\nv 0 0 0\nv 1e38 0 0\nv 0 1 0\nf 1 2 3\n";
    char cage[512], out[512];
    cli_tmp_path(cage, sizeof cage, "cage.obj");
    cli_tmp_path(out, sizeof out, "with_cage.pmx");
    cli_write_all(cage, obj, sizeof obj - 1);
    cli_result r;
    CLI_RUN(&r, "attach", ALICIA, "--proxy", cage, "--pin-bone", "頭", "-o", out);
    cli_expect_one_error_line(&r);
    char want[700];
    snprintf(want, sizeof want, "plush: %s: line 3: ", cage);
    assert_non_null(strstr(r.err, want));
    assert_non_null(strstr(r.err, "(at byte 17)"));
    assert_false(cli_exists(out));
    cli_result_free(&r);
}

static int setup(void **state)
{
    (void)state;
    return cli_tmp_setup("plush_options");
}

static int teardown(void **state)
{
    (void)state;
    return cli_tmp_teardown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_numbers),
        cmocka_unit_test(test_decimal_numbers),
        cmocka_unit_test(test_cage_spec),
        cmocka_unit_test(test_attach_fields_as_run_takes_them),
        cmocka_unit_test(test_attach_cage_coordinate),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
