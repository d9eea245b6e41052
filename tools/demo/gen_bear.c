/* gen_bear: writes the embedded plush demo (the model, its shake motion, its rigid-eyes override).
 *
 *   gen_bear [-o DIR]      DIR/plush_bear.pmx, DIR/plush_bear_shake.vmd, DIR/plush_bear.im2 (default proxies)
 *
 * The output is the same to the byte on every run: nothing here reads a clock or draws random numbers. */
#include "plush/demo.h"

#include <stdio.h>
#include <string.h>

static int usage(FILE *to, int code)
{
    fprintf(to, "usage: gen_bear [-o DIR]\n"
                "writes DIR/plush_bear.pmx (PMX 2.1 with a soft-body proxy), DIR/plush_bear_shake.vmd and\n"
                "DIR/plush_bear.im2 (default DIR: proxies)\n");
    return code;
}

static int report(const plush_diag *diag)
{
    char line[600];
    plush_diag_format(diag, line, sizeof line);
    fprintf(stderr, "gen_bear: %s\n", line);
    return 1;
}

int main(int argc, char **argv)
{
    const char *dir = "proxies";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return usage(stdout, 0);
        if (!strcmp(argv[i], "-o") && i + 1 < argc)
            dir = argv[++i];
        else
            return usage(stderr, 2);
    }
    plush_diag diag = {0};
    plush_diag_reset(&diag);
    plush_demo_files files;
    if (plush_demo_write_files(dir, &files, &diag) != PLUSH_OK)
        return report(&diag);
    printf("gen_bear: %s (%zu vertices, %zu triangles, cage %zu nodes / %zu triangles at cell %.3f, %u pins), "
           "%s (%zu keys), %s\n",
           files.pmx, files.vertex_count, files.triangle_count, files.cage_nodes, files.cage_triangles,
           (double)files.cage_cell, files.pin_count, files.vmd, files.key_count, files.im2);
    return 0;
}
