/* PMX model lifetime and index-size rules. */
#include "pmx_internal.h"

#include <stdlib.h>

plush_pmx_model *plush_pmx_create(void)
{
    plush_pmx_model *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->version = PMX_V20;
    m->encoding = PLUSH_ENC_UTF16LE;
    return m;
}

plush_arena *plush_pmx_arena(plush_pmx_model *model) { return &model->arena; }

plush_status plush_pmx_require_geometry(const plush_pmx_model *model, plush_diag *diag)
{
    if (!model->summary_only)
        return PLUSH_OK;
    return plush_diag_fail(diag, PLUSH_E_NO_GEOMETRY, -1, NULL, -1,
                           "summary-only model: its vertices and faces were read without being kept");
}

void plush_pmx_free(plush_pmx_model *model)
{
    if (!model)
        return;
    plush_arena_free(&model->arena);
    free(model);
}

uint8_t plush_pmx_min_index_size(int kind, size_t count)
{
    /* Vertex indices are unsigned at 1 and 2 bytes, so the largest index (count - 1) may reach
     * 255 or 65535; every other kind is signed and keeps -1 for "none". */
    if (kind == PLUSH_PMX_INDEX_VERTEX)
        return count <= 256u ? 1 : count <= 65536u ? 2 : 4;
    return count <= 128u ? 1 : count <= 32768u ? 2 : 4;
}

size_t plush__pmx_index_kind_count(const plush_pmx_model *m, int kind)
{
    switch (kind) {
    case PLUSH_PMX_INDEX_VERTEX: return m->vertex_count;
    case PLUSH_PMX_INDEX_TEXTURE: return m->texture_count;
    case PLUSH_PMX_INDEX_MATERIAL: return m->material_count;
    case PLUSH_PMX_INDEX_BONE: return m->bone_count;
    case PLUSH_PMX_INDEX_MORPH: return m->morph_count;
    default: return m->rigid_body_count;
    }
}
