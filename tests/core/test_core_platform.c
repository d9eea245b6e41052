/* The platform layer's file calls (src/core/platform_posix.c, platform_win32.c), on both systems: a file
 * plush holds open can still be deleted (what a cleanup after Ctrl+C needs on Windows, where the suspended
 * main thread may hold a handle the cleanup cannot close), creating a file that exists fails with EEXIST,
 * and opening for writing with truncation empties it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/platform.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A new file in the system's folder for temporary files, holding text; its name in path. */
static void make_temp(char *path, size_t size, const char *text)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = getenv("TEMP");
    if (!dir || !*dir)
        dir = "/tmp";
    snprintf(path, size, "%s/plush-platform-XXXXXX", dir);
    int fd = plush__os_mkstemp(path);
    assert_true(fd >= 0);
    size_t n = strlen(text);
    assert_int_equal(write(fd, text, (unsigned)n), (int)n);
    assert_int_equal(close(fd), 0);
}

static bool exists(const char *path)
{
    plush__os_info st;
    return plush__os_stat(path, false, &st);
}

static void test_open_file_deleted(void **state)
{
    (void)state;
    char path[1024];
    make_temp(path, sizeof path, "12345\n");

    int fd = plush__os_open_read(path);
    assert_true(fd >= 0);
    assert_int_equal(plush__os_unlink(path), 0); /* held open for reading, deleted all the same */
    char text[8] = "";
    assert_int_equal(read(fd, text, 6), 6);       /* what was open reads on */
    assert_memory_equal(text, "12345\n", 6);
    assert_int_equal(close(fd), 0);
    assert_false(exists(path));                   /* and is gone once closed */

    make_temp(path, sizeof path, "ab");
    fd = plush__os_open_write(path, false);
    assert_true(fd >= 0);
    assert_int_equal(plush__os_unlink(path), 0); /* held open for writing too */
    assert_int_equal(close(fd), 0);
    assert_false(exists(path));

    make_temp(path, sizeof path, "ab");
    FILE *f = plush__os_fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(plush__os_unlink(path), 0); /* and through a stream */
    assert_int_equal(fgetc(f), 'a');
    assert_int_equal(fclose(f), 0);
    assert_false(exists(path));
}

static void test_create_and_truncate(void **state)
{
    (void)state;
    char path[1024];
    make_temp(path, sizeof path, "old text");
    errno = 0;
    assert_int_equal(plush__os_create_new(path), -1);
    assert_int_equal(errno, EEXIST);

    int fd = plush__os_open_write(path, true);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "new", 3), 3);
    assert_int_equal(close(fd), 0);
    plush__os_info st;
    assert_true(plush__os_stat(path, false, &st));
    assert_int_equal(st.size, 3);
    assert_int_equal(plush__os_unlink(path), 0);

    errno = 0;
    assert_int_equal(plush__os_open_read(path), -1); /* gone */
    assert_int_equal(errno, ENOENT);
    assert_int_equal(plush__os_open_write(path, false), -1); /* writing never creates */
    assert_int_equal(errno, ENOENT);
    fd = plush__os_create_new(path);
    assert_true(fd >= 0);
    assert_int_equal(close(fd), 0);
    assert_int_equal(plush__os_unlink(path), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_file_deleted),
        cmocka_unit_test(test_create_and_truncate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
