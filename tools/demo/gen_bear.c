/* gen_bear: writes the embedded plush demo (the model, its shake motion, its rigid-eyes override).
 *
 *   gen_bear [-o DIR]      DIR/plush_bear.pmx, DIR/plush_bear_shake.vmd, DIR/plush_bear.im2 (default proxies)
 *
 * The output is the same to the byte on every run: nothing here reads a clock or draws random numbers. */
#include "bear.h"

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

static bool join(char *buf, size_t size, const char *dir, const char *name)
{
    int n = snprintf(buf, size, "%s/%s", dir, name);
    return n > 0 && (size_t)n < size;
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
    char pmx_path[4096], vmd_path[4096], im2_path[4096];
    if (!join(pmx_path, sizeof pmx_path, dir, "plush_bear.pmx") ||
        !join(vmd_path, sizeof vmd_path, dir, "plush_bear_shake.vmd") ||
        !join(im2_path, sizeof im2_path, dir, "plush_bear.im2")) {
        fprintf(stderr, "gen_bear: %s: path too long\n", dir);
        return 1;
    }

    plush_diag diag = {0};
    plush_diag_reset(&diag);
    plush_arena arena = {0};
    bear_cage cage;
    plush_pmx_model *model = NULL;
    plush_vmd_motion *motion = NULL;
    plush_im2_map *map = NULL;
    int code = 1;
    if (bear_cage_build(&arena, &cage, &diag) != PLUSH_OK || bear_model_build(&cage, &model, &diag) != PLUSH_OK ||
        bear_motion_build(&motion, &diag) != PLUSH_OK || bear_im2_build(model, &cage, &map, &diag) != PLUSH_OK) {
        code = report(&diag);
        goto done;
    }
    diag.file = pmx_path;
    if (plush_pmx_write_file(model, &(plush_pmx_write_options){.version = PLUSH_PMX_WRITE_21}, pmx_path, &diag) !=
        PLUSH_OK) {
        code = report(&diag);
        goto done;
    }
    diag.file = vmd_path;
    if (plush_vmd_write_file(motion, NULL, vmd_path, &diag) != PLUSH_OK) {
        code = report(&diag);
        goto done;
    }
    diag.file = im2_path;
    if (plush_im2_write_file(map, im2_path, &diag) != PLUSH_OK) {
        code = report(&diag);
        goto done;
    }
    printf("gen_bear: %s (%zu vertices, %zu triangles, cage %zu nodes / %zu triangles at cell %.3f, %u pins), "
           "%s (%zu keys), %s\n",
           pmx_path, model->vertex_count, model->index_count / 3, cage.node_count, cage.triangle_count,
           (double)cage.cell, model->soft_bodies[0].pin_count, vmd_path, motion->bone_key_count, im2_path);
    code = 0;
done:
    plush_im2_free(map);
    plush_vmd_free(motion);
    plush_pmx_free(model);
    plush_arena_free(&arena);
    return code;
}
