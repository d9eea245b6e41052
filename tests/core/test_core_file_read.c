/* Reading files: a large input is mapped, not copied, so a 2 GB file whose first bytes
 * are no known magic is refused at byte 0 having touched a page or two; small files are read into memory;
 * the bytes are the file's either way. Memory is measured (ru_maxrss), time never is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/plush.h"
#include "plush/sys/core.h"
#include "support/cli_run.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define SPARSE_SIZE ((off_t)2 << 30)
#define RSS_BOUND_KB (64 * 1024)

static int setup(void **state)
{
    (void)state;
    return cli_tmp_setup("plush_file_read");
}

static int teardown(void **state)
{
    (void)state;
    return cli_tmp_teardown();
}

static long max_rss_kb(int who)
{
    struct rusage ru;
    assert_int_equal(getrusage(who, &ru), 0);
    return ru.ru_maxrss;
}

/* A sparse file of SPARSE_SIZE bytes starting with head. */
static void make_sparse(const char *path, const char *head)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_true(write(fd, head, strlen(head)) == (ssize_t)strlen(head));
    if (ftruncate(fd, SPARSE_SIZE) != 0) {
        close(fd);
        skip(); /* a file system without room for a 2 GB sparse file */
    }
    close(fd);
}

static void expect_refused_at_0(plush_status st, const plush_diag *d)
{
    assert_int_not_equal(st, PLUSH_OK);
    assert_int_not_equal(st, PLUSH_E_NOMEM);
    assert_true(d->offset == 0);
}

static void test_sparse_file_with_bad_magic(void **state)
{
    (void)state;
    char path[512];
    cli_tmp_path(path, sizeof path, "huge.bin");
    make_sparse(path, "garbage, not a magic of any format plush reads");
    long before = max_rss_kb(RUSAGE_SELF);
    plush_diag d = {0};
    plush_pmx_model *pmx = NULL;
    expect_refused_at_0(plush_pmx_read_file(path, NULL, &pmx, &d), &d);
    assert_null(pmx);
    d = (plush_diag){0};
    plush_pmx_model *summary = NULL;
    expect_refused_at_0(plush_pmx_read_file(path, &(plush_pmx_read_options){.summary_only = true}, &summary, &d), &d);
    d = (plush_diag){0};
    plush_vmd_motion *vmd = NULL;
    expect_refused_at_0(plush_vmd_read_file(path, &vmd, &d), &d);
    d = (plush_diag){0};
    plush_vpd_pose *vpd = NULL;
    assert_int_not_equal(plush_vpd_read_file(path, &vpd, &d), PLUSH_OK);
    assert_int_not_equal(d.status, PLUSH_E_NOMEM);
    d = (plush_diag){0};
    plush_im2_map *im2 = NULL;
    /* im2 is text: refused at the first NUL byte, within the first line */
    assert_int_not_equal(plush_im2_read_file(path, &im2, &d), PLUSH_OK);
    assert_true(d.status != PLUSH_E_NOMEM && d.offset >= 0 && d.offset < 64);
    long after = max_rss_kb(RUSAGE_SELF);
    assert_true(after - before < RSS_BOUND_KB);

    /* the CLI likewise (info maps what it reads): one error line, a small peak (an ASan build's own
     * baseline included, so the bound is wider than the in-process one) */
    cli_result r;
    CLI_RUN(&r, "info", path);
    cli_expect_one_error_line(&r);
    assert_non_null(strstr(r.err, "at byte 0"));
    cli_result_free(&r);
    assert_true(max_rss_kb(RUSAGE_CHILDREN) < 4 * RSS_BOUND_KB);
    unlink(path);
}

/* Small files are read, large ones mapped; both give the file's bytes and release cleanly. */
static void test_map_small_and_large(void **state)
{
    (void)state;
    char small[512], large[512];
    cli_tmp_path(small, sizeof small, "small.bin");
    cli_tmp_path(large, sizeof large, "large.bin");
    cli_write_all(small, "abc", 3);
    size_t n = (size_t)PLUSH_FILE_MAP_MIN + 4097;
    uint8_t *want = malloc(n);
    assert_non_null(want);
    for (size_t i = 0; i < n; i++)
        want[i] = (uint8_t)(i * 131 + (i >> 12));
    cli_write_all(large, want, n);
    plush_diag d = {0};
    plush_file_bytes b;
    assert_int_equal(plush_file_map(small, &b, &d), PLUSH_OK);
    assert_false(b.mapped);
    assert_true(b.size == 3 && memcmp(b.data, "abc", 3) == 0);
    plush_file_unmap(&b);
    assert_null(b.data);
    plush_file_unmap(&b); /* twice is harmless */
    assert_int_equal(plush_file_map(large, &b, &d), PLUSH_OK);
    assert_true(b.mapped && b.size == n);
    assert_memory_equal(b.data, want, n);
    plush_file_unmap(&b);
    free(want);
    /* not a regular file */
    assert_int_equal(plush_file_map(cli_tmp_dir(), &b, &d), PLUSH_E_IO);
    assert_null(b.data);
    d = (plush_diag){0};
    cli_tmp_path(small, sizeof small, "missing.bin");
    assert_int_equal(plush_file_map(small, &b, &d), PLUSH_E_IO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sparse_file_with_bad_magic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_map_small_and_large, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
