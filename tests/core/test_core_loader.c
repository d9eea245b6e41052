/* The one loader (src/core/loader.c): candidates in order, versioned sonames, a status per failure, the
 * tables loaded once per process, and the public availability queries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/loader.h"
#include "plush/sys/render.h"
#include "plush/physics.h"
#include "plush/proxy.h"
#include "plush/sys/physics.h"

#include <stdio.h>
#include <string.h>

/* A system library every machine has, exporting cos and sin. */
#ifdef _WIN32
#define LIBM "msvcrt.dll"
#else
#define LIBM "libm.so.6"
#endif

/* Embree is not built for Windows yet (docs/windows.md): a check that needs it is skipped there, visibly. */
static void need_embree(void)
{
#ifdef _WIN32
    if (!plush_render_available(NULL)) {
        print_message("skipped on Windows: no Embree DLL (plush binds by brute force without it)\n");
        skip();
    }
#endif
}

static void test_first_candidate_that_loads(void **state)
{
    (void)state;
    const char *const sonames[] = {"libplush-no-such-library.so.9", NULL, "", LIBM};
    const char *const symbols[] = {"cos", "sin"};
    void *fn[2] = {0};
    const plush__library lib = {.name = "libm", .candidates = sonames, .candidate_count = 4, .symbols = symbols,
                                .symbol_count = 2};
    plush_diag d = {0};
    assert_int_equal(plush__library_open(&lib, fn, &d), PLUSH_OK);
    assert_int_equal(d.status, PLUSH_OK);
    assert_non_null(fn[0]);
    assert_non_null(fn[1]);
    double (*cosine)(double);
    PLUSH__FN_SET(cosine, fn[0]);
    assert_true(cosine(0) == 1.0);
}

static void test_failures_are_library_status(void **state)
{
    (void)state;
    const char *const missing[] = {"libplush-no-such-library.so.9", "/nonexistent/libplush-no-such.so.1"};
    const char *const symbols[] = {"cos", "plush_no_such_symbol"};
    void *fn[2] = {(void *)1, (void *)1};
    plush__library lib = {.name = "nothing", .candidates = missing, .candidate_count = 2, .symbols = symbols,
                          .symbol_count = 1};
    plush_diag d = {0};
    assert_int_equal(plush__library_open(&lib, fn, &d), PLUSH_E_LIBRARY);
    assert_int_equal(d.status, PLUSH_E_LIBRARY);
    assert_null(fn[0]);
    /* A library that loads but lacks a symbol is refused the same way. */
    const char *const libm[] = {LIBM};
    lib.candidates = libm;
    lib.candidate_count = 1;
    lib.symbol_count = 2;
    d = (plush_diag){0};
    assert_int_equal(plush__library_open(&lib, fn, &d), PLUSH_E_LIBRARY);
    /* Nothing to try at all. */
    lib.candidate_count = 0;
    d = (plush_diag){0};
    assert_int_equal(plush__library_open(&lib, fn, &d), PLUSH_E_LIBRARY);
    /* A hint ends the message: where to put the library, or which variable names it. */
    lib.hint = "; set NOTHING_LIB to its path";
    d = (plush_diag){0};
    assert_int_equal(plush__library_open(&lib, fn, &d), PLUSH_E_LIBRARY);
    char line[PLUSH_DIAG_MESSAGE + 64];
    plush_diag_format(&d, line, sizeof line);
    assert_non_null(strstr(line, "nothing: cannot load"));
    assert_non_null(strstr(line, "; set NOTHING_LIB to its path"));
}

static const char *refuse(void *const *functions, void *ctx)
{
    (void)functions;
    ++*(int *)ctx;
    return "refused by the check";
}

static void test_check_refuses(void **state)
{
    (void)state;
    const char *const libm[] = {LIBM, LIBM};
    const char *const symbols[] = {"cos"};
    void *fn[1];
    int calls = 0;
    const plush__library lib = {.name = "libm", .candidates = libm, .candidate_count = 2, .symbols = symbols,
                                .symbol_count = 1, .check = refuse, .ctx = &calls};
    plush_diag d = {0};
    assert_int_equal(plush__library_open(&lib, fn, &d), PLUSH_E_LIBRARY);
    assert_int_equal(calls, 2); /* every candidate asked */
}

/* The tables are the process's own: every call gives the same pointer. */
static void test_loaded_once(void **state)
{
    (void)state;
    plush_diag d = {0};
    const plush__meshopt *m = plush__meshopt_load(&d), *n = plush__meshopt_load(&d);
    assert_non_null(m);
    assert_ptr_equal(m, n);
    assert_non_null(m->meshopt_simplify);
    need_embree();
    const plush__embree *a = plush__embree_load(&d), *b = plush__embree_load(&d);
    assert_non_null(a);
    assert_ptr_equal(a, b);
    assert_non_null(a->rtcNewDevice);
    assert_int_equal(d.status, PLUSH_OK);
}

static void test_available(void **state)
{
    (void)state;
    plush_diag d = {0};
    assert_true(plush_world_available(&d));
    assert_true(plush_proxy_simplify_available(NULL));
    need_embree();
    assert_true(plush_render_available(&d));
    assert_true(plush_proxy_search_available(&d));
    assert_int_equal(d.status, PLUSH_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_candidate_that_loads), cmocka_unit_test(test_failures_are_library_status),
        cmocka_unit_test(test_check_refuses),             cmocka_unit_test(test_loaded_once),
        cmocka_unit_test(test_available),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
