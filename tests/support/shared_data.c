#include "shared_data.h"

#include "core/platform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint8_t *test_read_file(const char *path, size_t *size)
{
    FILE *f = plush__os_fopen(path, "rb"); /* UTF-8 names on Windows too */
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *data = malloc(n > 0 ? (size_t)n : 1);
    if (data && n > 0 && fread(data, 1, (size_t)n, f) != (size_t)n) {
        free(data);
        data = NULL;
    }
    fclose(f);
    *size = n > 0 ? (size_t)n : 0;
    return data;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

size_t test_each_shared_file(const char *ext, void (*fn)(const char *path, void *ctx), void *ctx)
{
    char *paths[512];
    size_t n = 0;
    plush__os_dir *top = plush__os_dir_open(SHARED_MMD);
    if (!top)
        return 0;
    const char *d;
    while ((d = plush__os_dir_next(top)) && n < 512) {
        if (d[0] == '.')
            continue;
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/%s", SHARED_MMD, d);
        plush__os_dir *sub = plush__os_dir_open(dir);
        if (!sub)
            continue;
        const char *e;
        while ((e = plush__os_dir_next(sub)) && n < 512) {
            size_t len = strlen(e), el = strlen(ext);
            if (len > el && strcmp(e + len - el, ext) == 0) {
                char *p = malloc(strlen(dir) + len + 2);
                sprintf(p, "%s/%s", dir, e);
                paths[n++] = p;
            }
        }
        plush__os_dir_close(sub);
    }
    plush__os_dir_close(top);
    qsort(paths, n, sizeof *paths, cmp_str);
    for (size_t i = 0; i < n; i++) {
        fn(paths[i], ctx);
        free(paths[i]);
    }
    return n;
}
