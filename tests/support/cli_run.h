/* Running the plush binary from a test: a private temporary directory, captured stdout/stderr, exit
 * status, and a test failure on a signal or a hang. The binary is $PLUSH_BIN (build/plush otherwise). */
#ifndef PLUSH_TEST_CLI_RUN_H
#define PLUSH_TEST_CLI_RUN_H

#include <stdbool.h>
#include <stddef.h>

typedef struct cli_result {
    int code;
    char *out, *err;
    size_t out_len, err_len;
    long peak_kb;           /* the run's peak resident memory (getrusage's ru_maxrss of that child) */
    double seconds;         /* its wall-clock time */
} cli_result;

/* Makes (0) or removes with everything under it the temporary directory; prefix names it ("plush_cli"). */
int cli_tmp_setup(const char *prefix);
int cli_tmp_teardown(void);
const char *cli_tmp_dir(void);
/* A path inside the temporary directory, written into buf. */
const char *cli_tmp_path(char *buf, size_t size, const char *name);

/* A whole file, NUL-terminated, or NULL when it cannot be opened. */
char *cli_read_all(const char *path, size_t *len);
void cli_write_all(const char *path, const void *data, size_t len);
/* The index of the column named name in a CSV's header line (its first), or -1. */
int cli_csv_column(const char *csv, const char *name);
bool cli_exists(const char *path);

/* The "v x y z" lines of an OBJ file (malloc'd; the test fails on a line without three numbers). */
float (*cli_obj_positions(const char *path, size_t *count))[3];

/* Runs plush with args (NULL-terminated). */
void cli_run_list(cli_result *r, const char *const *args);
#define CLI_RUN(r, ...) cli_run_list((r), (const char *const[]){__VA_ARGS__, NULL})
void cli_result_free(cli_result *r);

void cli_expect_code(const cli_result *r, int code);
/* Runs `plush compare` with argv (NULL-terminated) and -o the temporary directory's sub, requires status 0 and
 * returns its report.md (malloc'd). */
char *cli_compare_report(const char *sub, const char *const *argv);
int cli_count_lines(const char *s, size_t len);
/* The bad-input contract: exit 1 and exactly one line "plush: ..." on stderr. */
void cli_expect_one_error_line(const cli_result *r);

#endif
