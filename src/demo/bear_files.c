/* The three demo files written together: gen_bear and `plush demo` both use this. */
#include "demo/internal.h"
#include "plush/sys/core.h"

#include <stdio.h>

static bool join(char *buf, size_t size, const char *dir, const char *name)
{
    int n = snprintf(buf, size, "%s/%s", dir, name);
    return n > 0 && (size_t)n < size;
}

plush_status plush_demo_write_files(const char *dir, plush_demo_files *out, plush_diag *diag)
{
    if (!join(out->pmx, sizeof out->pmx, dir, "plush_bear.pmx") ||
        !join(out->vmd, sizeof out->vmd, dir, "plush_bear_shake.vmd") ||
        !join(out->im2, sizeof out->im2, dir, "plush_bear.im2"))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "%s: path too long", dir);
    plush_arena arena = {0};
    bear_cage cage;
    plush_pmx_model *model = NULL;
    plush_vmd_motion *motion = NULL;
    plush_im2_map *map = NULL;
    plush_status st = plush__demo_cage_build(&arena, &cage, diag);
    if (st == PLUSH_OK)
        st = plush__demo_model_build(&cage, &model, diag);
    if (st == PLUSH_OK)
        st = plush__demo_motion_build(&motion, diag);
    if (st == PLUSH_OK)
        st = plush__demo_im2_build(model, &cage, &map, diag);
    if (st == PLUSH_OK) {
        diag->file = out->pmx;
        st = plush_pmx_write_file(model, &(plush_pmx_write_options){.version = PLUSH_PMX_WRITE_21}, out->pmx, diag);
    }
    if (st == PLUSH_OK) {
        diag->file = out->vmd;
        st = plush_vmd_write_file(motion, NULL, out->vmd, diag);
    }
    if (st == PLUSH_OK) {
        diag->file = out->im2;
        st = plush_im2_write_file(map, out->im2, diag);
    }
    if (st == PLUSH_OK) {
        out->vertex_count = model->vertex_count;
        out->triangle_count = model->index_count / 3;
        out->cage_nodes = cage.node_count;
        out->cage_triangles = cage.triangle_count;
        out->cage_cell = cage.cell;
        out->pin_count = model->soft_bodies[0].pin_count;
        out->key_count = motion->bone_key_count;
    }
    plush_im2_free(map);
    plush_vmd_free(motion);
    plush_pmx_free(model);
    plush_arena_free(&arena);
    return st;
}
