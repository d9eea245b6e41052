#include "cli_run.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum { RUN_TIMEOUT_MS = 900 * 1000 }; /* a hang guard: the calibrated direct run under ASan takes minutes */

/* One directory per test binary: each suite is one process. */
static char tmp_dir[256];

int cli_tmp_setup(const char *prefix)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmp_dir, sizeof tmp_dir, "%s/%s_XXXXXX", base && *base ? base : "/tmp", prefix);
    return mkdtemp(tmp_dir) ? 0 : -1;
}

/* Removes what is inside dir, subdirectories included (the runs make OUTDIRs with frames/ inside). */
static void remove_contents(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[1024];
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            chmod(path, 0755); /* a test's read-only directory */
            remove_contents(path);
            rmdir(path);
        } else {
            unlink(path);
        }
    }
    closedir(d);
}

int cli_tmp_teardown(void)
{
    remove_contents(tmp_dir);
    rmdir(tmp_dir);
    return 0;
}

const char *cli_tmp_dir(void) { return tmp_dir; }

const char *cli_tmp_path(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", tmp_dir, name);
    return buf;
}

int cli_csv_column(const char *csv, const char *name)
{
    size_t n = strlen(name);
    int k = 0;
    for (const char *p = csv; *p && *p != '\n'; k++) {
        size_t len = strcspn(p, ",\n");
        if (len == n && strncmp(p, name, n) == 0)
            return k;
        p += len;
        if (*p == ',')
            p++;
    }
    return -1;
}

char *cli_read_all(const char *path, size_t *len)
{
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    assert_non_null(buf);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
            assert_non_null(buf);
        }
    }
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

void cli_write_all(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

bool cli_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

void cli_result_free(cli_result *r)
{
    free(r->out);
    free(r->err);
    memset(r, 0, sizeof *r);
}

void cli_run_list(cli_result *r, const char *const *args)
{
    char out_path[300], err_path[300];
    cli_tmp_path(out_path, sizeof out_path, "_stdout");
    cli_tmp_path(err_path, sizeof err_path, "_stderr");
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
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    for (int waited = 0;; waited += 5) {
        pid_t w = wait4(pid, &status, WNOHANG, &ru); /* this child's own figures, not all children's */
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR)
            fail_msg("waitpid: %s", strerror(errno));
        if (waited >= RUN_TIMEOUT_MS) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            fail_msg("plush %s %s did not finish in %d s", argc > 1 ? argv[1] : "", argc > 2 ? argv[2] : "",
                     RUN_TIMEOUT_MS / 1000);
        }
        nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    r->peak_kb = ru.ru_maxrss;
    r->seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    r->out = cli_read_all(out_path, &r->out_len);
    r->err = cli_read_all(err_path, &r->err_len);
    assert_non_null(r->out);
    assert_non_null(r->err);
    if (!WIFEXITED(status))
        fail_msg("plush %s %s was killed by signal %d; stderr:\n%s", argc > 1 ? argv[1] : "",
                 argc > 2 ? argv[2] : "", WIFSIGNALED(status) ? WTERMSIG(status) : -1, r->err);
    r->code = WEXITSTATUS(status);
}

void cli_expect_code(const cli_result *r, int code)
{
    if (r->code != code)
        fail_msg("exit status %d, expected %d; stderr:\n%s", r->code, code, r->err);
}

int cli_count_lines(const char *s, size_t len)
{
    int n = 0;
    for (size_t i = 0; i < len; i++)
        n += s[i] == '\n';
    return n;
}

void cli_expect_one_error_line(const cli_result *r)
{
    cli_expect_code(r, 1);
    if (cli_count_lines(r->err, r->err_len) != 1 || r->err[r->err_len - 1] != '\n')
        fail_msg("expected one line on stderr, got:\n%s", r->err);
    assert_memory_equal(r->err, "plush: ", 7);
}

/* The "v x y z" lines of an OBJ file. (strtof, not sscanf: glibc's sscanf measures the whole rest of the
 * text on every call, which made this loop quadratic and the suite's slowest part.) */
float (*cli_obj_positions(const char *path, size_t *count))[3]
{
    size_t len = 0;
    char *text = cli_read_all(path, &len);
    assert_non_null(text);
    size_t cap = 1024, n = 0;
    float(*v)[3] = malloc(cap * sizeof *v);
    for (char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (line[0] != 'v' || line[1] != ' ')
            continue;
        if (n == cap)
            v = realloc(v, (cap *= 2) * sizeof *v);
        char *at = line + 2;
        for (int k = 0; k < 3; k++) {
            char *end;
            v[n][k] = strtof(at, &end);
            assert_true(end > at); /* three numbers on every vertex line */
            at = end;
        }
        n++;
    }
    free(text);
    *count = n;
    return v;
}

char *cli_compare_report(const char *sub, const char *const *argv)
{
    char dir[700], md_path[760];
    snprintf(dir, sizeof dir, "%s/%s", cli_tmp_dir(), sub);
    const char *args[16] = {"compare"};
    size_t n = 1;
    for (size_t i = 0; argv[i] && n + 3 < 16; i++)
        args[n++] = argv[i];
    args[n++] = "-o", args[n++] = dir, args[n] = NULL;
    cli_result r;
    cli_run_list(&r, args);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    snprintf(md_path, sizeof md_path, "%s/report.md", dir);
    size_t len = 0;
    char *md = cli_read_all(md_path, &len);
    assert_non_null(md);
    return md;
}
