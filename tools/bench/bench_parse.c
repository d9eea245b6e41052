/* make bench: PMX parse throughput (MB/s, from memory) and peak memory of `plush info`.
 *
 * References measured in the same run: memcpy of the same bytes (the memory-bandwidth ceiling a
 * parser cannot beat) and the target of 1 GB/s per core; for memory, the file size (target:
 * peak resident memory of `plush info` below 4x the file). */
#define _GNU_SOURCE
#include "plush/pmx.h"
#include "plush/sys/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint8_t *slurp(const char *path, size_t *size)
{
    plush_diag d = {.file = path};
    uint8_t *data = NULL;
    if (plush_file_read(path, &data, size, &d) != PLUSH_OK) {
        fprintf(stderr, "bench: cannot read %s\n", path);
        exit(1);
    }
    return data;
}

/* Best of several rounds, each long enough to time reliably. */
static double best_mbps(const uint8_t *data, size_t size, bool parse)
{
    double best = 0;
    uint8_t *copy = parse ? NULL : malloc(size);
    for (int round = 0; round < 7; round++) {
        int reps = 0;
        double t0 = now(), t;
        do {
            if (parse) {
                plush_pmx_model *m = NULL;
                if (plush_pmx_read(data, size, NULL, &m, NULL) != PLUSH_OK) {
                    fprintf(stderr, "bench: parse failed\n");
                    exit(1);
                }
                plush_pmx_free(m);
            } else {
                memcpy(copy, data, size);
                __asm__ __volatile__("" : : "r"(copy) : "memory");
            }
            reps++;
            t = now() - t0;
        } while (t < 0.2);
        double mbps = (double)size * reps / t / 1e6;
        if (mbps > best)
            best = mbps;
    }
    free(copy);
    return best;
}

static void bench_parse(const char *path)
{
    size_t size;
    uint8_t *data = slurp(path, &size);
    double parse = best_mbps(data, size, true);
    double copy = best_mbps(data, size, false);
    const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    printf("pmx parse  %-28s %8.2f MB  %8.0f MB/s  = %5.2fx the 1000 MB/s target  (memcpy %6.0f MB/s, parse/memcpy %.3f)\n",
           name, (double)size / 1e6, parse, parse / 1000.0, copy, parse / copy);
    free(data);
}

static void bench_info_memory(const char *bin, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "bench: cannot read %s\n", path);
        exit(1);
    }
    size_t size = (size_t)st.st_size;
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", 1);
        dup2(devnull, 1);
        execl(bin, bin, "info", path, (char *)NULL);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "bench: plush info failed\n");
        exit(1);
    }
    double peak = (double)ru.ru_maxrss * 1024.0;
    printf("plush info peak memory on %s: %.2f MB = %.2fx the file (%.2f MB); target below 4x\n",
           strrchr(path, '/') + 1, peak / 1e6, peak / (double)size, (double)size / 1e6);
}

int main(void)
{
    /* First, while this process is small: a child's peak counts the memory it inherited at fork. */
    const char *bin = getenv("PLUSH_BIN");
    if (bin)
        bench_info_memory(bin, "../shared/data/mmd/alicia/Alicia_solid.pmx");
    bench_parse("../shared/data/mmd/alicia/Alicia_solid.pmx");
    bench_parse("../shared/data/mmd/blender2pmxem/test_02_vertex_66409.pmx");
    return 0;
}
