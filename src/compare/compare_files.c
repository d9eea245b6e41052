/* Where plush compare's study writes: each file's path in the output folder, and the file a failure names
 * (the study, its CSV and report, its plots and pictures all go through here). */
#include "compare/compare_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *plush__compare_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

void plush__compare_name_file(plush_compare_study *s, const char *name, plush_diag *diag)
{
    free(s->failed_file);
    s->failed_file = plush__compare_path(s->desc.out_dir, name);
    diag->file = s->failed_file;
}
