/* make bench: making the embedded demo (the generator tools/gen_bear writing the bear, its shake motion and
 * its rigid-eyes override) against the 2 s target, beside the reference measured in the same run:
 * reading the model it wrote back and writing it again with plush's PMX reader and writer (the file work
 * any generator of that model does). Wall time, best of three. test_demo_bear checks what the generator
 * makes; how long it takes is measured only here.
 *
 * The generator is $PLUSH_GEN_BEAR, else tools/gen_bear beside $PLUSH_BIN (build/plush). */
#include "plush/pmx.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TARGET_SECONDS 2.0

extern char **environ;

static void die(const char *what, const plush_diag *d)
{
    char line[600];
    plush_diag_format(d, line, sizeof line);
    fprintf(stderr, "bench_demo: %s: %s\n", what, line);
    exit(1);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static const char *generator(char *buf, size_t size)
{
    const char *g = getenv("PLUSH_GEN_BEAR");
    if (g && *g)
        return g;
    const char *bin = getenv("PLUSH_BIN");
    if (!bin || !*bin)
        bin = "build/plush";
    const char *slash = strrchr(bin, '/');
    snprintf(buf, size, "%.*s/tools/gen_bear", slash ? (int)(slash - bin) : 1, slash ? bin : ".");
    return buf;
}

/* One generator run into dir (its report dropped), in seconds. */
static double generate(const char *gen, const char *dir)
{
    char *argv[] = {(char *)gen, "-o", (char *)dir, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    double t0 = now();
    pid_t pid;
    int rc = posix_spawn(&pid, gen, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        fprintf(stderr, "bench_demo: cannot run %s: %s (set PLUSH_GEN_BEAR or PLUSH_BIN)\n", gen, strerror(rc));
        exit(1);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "bench_demo: %s -o %s failed\n", gen, dir);
        exit(1);
    }
    return now() - t0;
}

/* Reading path and writing it to copy, in seconds; *vertices is the model's vertex count. */
static double read_write(const char *path, const char *copy, size_t *vertices)
{
    plush_diag d = {0};
    plush_diag_reset(&d);
    double t0 = now();
    plush_pmx_model *m = NULL;
    if (plush_pmx_read_file(path, NULL, &m, &d) != PLUSH_OK)
        die("read", &d);
    if (plush_pmx_write_file(m, NULL, copy, &d) != PLUSH_OK)
        die("write", &d);
    double took = now() - t0;
    *vertices = m->vertex_count;
    plush_pmx_free(m);
    return took;
}

int main(void)
{
    char buf[600], dir[300], pmx[400], copy[400];
    const char *gen = generator(buf, sizeof buf);
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/plush_bench_demo_XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir)) {
        perror("bench_demo: mkdtemp");
        return 1;
    }
    snprintf(pmx, sizeof pmx, "%s/plush_bear.pmx", dir);
    snprintf(copy, sizeof copy, "%s/copy.pmx", dir);
    double tg = 1e30, tio = 1e30;
    size_t vertices = 0;
    for (int run = 0; run < 3; run++) {
        double t = generate(gen, dir);
        tg = t < tg ? t : tg;
        t = read_write(pmx, copy, &vertices);
        tio = t < tio ? t : tio;
    }
    static const char *const files[] = {"plush_bear.pmx", "plush_bear_shake.vmd", "plush_bear.im2", "copy.pmx"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(copy, sizeof copy, "%s/%s", dir, files[i]);
        unlink(copy);
    }
    rmdir(dir);
    printf("demo bear generation (%zu vertices, three files): %.3f s = %.2fx under the %.0f s target, %s; "
           "reading + writing its PMX %.3f s, generation/io %.1fx\n",
           vertices, tg, TARGET_SECONDS / tg, TARGET_SECONDS, tg <= TARGET_SECONDS ? "meets it" : "ABOVE it", tio,
           tg / tio);
    return 0;
}
