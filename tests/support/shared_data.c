#include "shared_data.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint8_t *test_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
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
    DIR *top = opendir(SHARED_MMD);
    if (!top)
        return 0;
    struct dirent *d;
    while ((d = readdir(top)) && n < 512) {
        if (d->d_name[0] == '.')
            continue;
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/%s", SHARED_MMD, d->d_name);
        DIR *sub = opendir(dir);
        if (!sub)
            continue;
        struct dirent *e;
        while ((e = readdir(sub)) && n < 512) {
            size_t len = strlen(e->d_name), el = strlen(ext);
            if (len > el && strcmp(e->d_name + len - el, ext) == 0) {
                char *p = malloc(strlen(dir) + len + 2);
                sprintf(p, "%s/%s", dir, e->d_name);
                paths[n++] = p;
            }
        }
        closedir(sub);
    }
    closedir(top);
    qsort(paths, n, sizeof *paths, cmp_str);
    for (size_t i = 0; i < n; i++) {
        fn(paths[i], ctx);
        free(paths[i]);
    }
    return n;
}
