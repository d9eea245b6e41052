/* Every external symbol of libplush.a starts with plush_ (public: plush_<module>_...; private to the
 * library: plush__...), so that the library links into a host program without clashing. Read with nm
 * from the archive beside $PLUSH_BIN. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_every_symbol_is_prefixed(void **state)
{
    (void)state;
    const char *bin = getenv("PLUSH_BIN");
    char lib[1024];
    const char *slash = bin ? strrchr(bin, '/') : NULL;
    if (slash)
        snprintf(lib, sizeof lib, "%.*s/libplush.a", (int)(slash - bin), bin);
    else
        snprintf(lib, sizeof lib, "build/libplush.a");
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "nm -g --defined-only '%s' 2>/dev/null", lib);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char line[1024];
    size_t symbols = 0, bad = 0;
    while (fgets(line, sizeof line, p)) {
        char addr[64], type[8], name[900];
        if (sscanf(line, "%63s %7s %899s", addr, type, name) != 3)
            continue; /* member headers ("x.o:") and blank lines */
        symbols++;
        /* AddressSanitizer's ODR indicator for a global variable carries the variable's name */
        const char *own = strncmp(name, "__odr_asan.", 11) == 0 ? name + 11 : name;
        if (strncmp(own, "plush_", 6) != 0) {
            fprintf(stderr, "unprefixed symbol: %s (%s)\n", name, type);
            bad++;
        }
    }
    int rc = pclose(p);
    if (rc != 0 && symbols == 0) {
        /* no nm on this machine: say so rather than pass silently */
        fprintf(stderr, "test_symbols: SKIPPED: nm could not read %s\n", lib);
        skip();
    }
    fprintf(stderr, "test_symbols: %zu external symbols in %s\n", symbols, lib);
    assert_true(symbols > 100);
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_symbol_is_prefixed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
