/* PMX model lifetime and index-size rules. */
#include "pmx_internal.h"
#include "plush/sys/core.h"
#include "plush/sys/pmx.h"

#include <stdlib.h>
#include <string.h>

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

plush_status plush__pmx_require_kept(const plush_pmx_model *model, plush_diag *diag)
{
    if (!model->summary_only)
        return PLUSH_OK;
    return plush_diag_fail(diag, PLUSH_E_NO_GEOMETRY, -1, NULL, -1,
                           "summary-only model: its vertices and faces were read without being kept");
}

plush_status plush_pmx_require_geometry(const plush_pmx_model *model, plush_diag *diag)
{
    plush_status st = plush__pmx_require_kept(model, diag);
    if (st != PLUSH_OK)
        return st;
    /* kept in file order, vertices before bones: the first vertex or bone issue is always kept */
    size_t kept = model->value_issue_count < PLUSH_PMX_KEPT_VALUE_ISSUES ? model->value_issue_count
                                                                         : PLUSH_PMX_KEPT_VALUE_ISSUES;
    for (size_t i = 0; i < kept; i++) {
        const plush_pmx_value_issue *q = &model->value_issues[i];
        if (!strcmp(q->section, PMX_SEC_VERTEX) || !strcmp(q->section, PMX_SEC_BONE))
            return plush_diag_fail(diag, PLUSH_E_RANGE, q->offset, q->section, q->index, "%s", q->what);
    }
    return PLUSH_OK;
}

const plush_pmx_value_issue *plush_pmx_value_issue_find(const plush_pmx_model *model, const char *section,
                                                        int64_t index)
{
    size_t kept = model->value_issue_count < PLUSH_PMX_KEPT_VALUE_ISSUES ? model->value_issue_count
                                                                         : PLUSH_PMX_KEPT_VALUE_ISSUES;
    for (size_t i = 0; i < kept; i++)
        if (model->value_issues[i].index == index && !strcmp(model->value_issues[i].section, section))
            return &model->value_issues[i];
    return NULL;
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
