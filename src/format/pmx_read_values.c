/* The values a PMX read warns about: a structurally valid file is read and kept as it is,
 * and each non-finite or out-of-range value becomes a warning naming the item and the byte of the value,
 * kept in the model (plush_pmx_model.value_issues) for what needs the value to refuse (vertices, bones:
 * plush_pmx_require_geometry) or to leave out (rigid bodies, joints, soft bodies: the physics world). */
#include "pmx_reader.h"
#include "plush/sys/core.h"

#include <math.h>
#include <stdlib.h>

void plush__pmx_rd_note(reader *r, size_t offset, const char *what)
{
    if (r->find_section || !r->m)
        return;
    plush_diag_warn(r->diag, (int64_t)offset, r->section, r->index, "%s", what);
    plush_pmx_model *m = r->m;
    if (m->value_issue_count < PLUSH_PMX_KEPT_VALUE_ISSUES) {
        if (!r->issues) {
            r->issues = plush_arena_array(&m->arena, PLUSH_PMX_KEPT_VALUE_ISSUES, sizeof *r->issues);
            m->value_issues = r->issues;
        }
        if (!r->issues)
            return; /* out of memory: the warning alone */
        r->issues[m->value_issue_count] = (plush_pmx_value_issue){
            .section = r->section, .index = r->index, .offset = (int64_t)offset, .what = what};
    }
    m->value_issue_count++;
}

bool plush__pmx_rd_finite(reader *r, const float *v, size_t n, size_t offset, const char *what)
{
    for (size_t k = 0; k < n; k++)
        if (!isfinite(v[k])) {
            plush__pmx_rd_note(r, offset + 4 * k, what);
            return false;
        }
    return true;
}

static void check_weights(reader *r, const float *w, int n, size_t at)
{
    static const char *const bad[4] = {"weight 0 is outside 0..1", "weight 1 is outside 0..1",
                                       "weight 2 is outside 0..1", "weight 3 is outside 0..1"};
    for (int k = 0; k < n; k++) {
        if (!isfinite(w[k]))
            plush__pmx_rd_note(r, at + 4 * (size_t)k, "weight is not finite");
        else if (w[k] < -PMX_WEIGHT_SLACK || w[k] > 1 + PMX_WEIGHT_SLACK)
            plush__pmx_rd_note(r, at + 4 * (size_t)k, bad[k]);
        else
            continue;
        return; /* one issue per vertex's weights */
    }
}

void plush__pmx_rd_check_vertex(reader *r, const plush_pmx_vertex *v, const float *uvs, size_t auv,
                                const plush_pmx_sdef *sdef, size_t start, size_t type_at, uint8_t bs)
{
    plush__pmx_rd_finite(r, v->position, 3, start, "position is not finite");
    plush__pmx_rd_finite(r, v->normal, 3, start + 12, "normal is not finite");
    plush__pmx_rd_finite(r, v->uv, 2, start + 24, "UV is not finite");
    if (auv)
        plush__pmx_rd_finite(r, uvs, 4 * auv, start + 32, "additional UV is not finite");
    size_t w = type_at + 1;
    switch (v->weight_type) {
    case PLUSH_PMX_BDEF2:
        check_weights(r, v->weights, 1, w + 2u * bs);
        break;
    case PLUSH_PMX_SDEF:
        check_weights(r, v->weights, 1, w + 2u * bs);
        if (plush__pmx_rd_finite(r, sdef->c, 3, w + 2u * bs + 4, "SDEF C is not finite"))
            if (plush__pmx_rd_finite(r, sdef->r0, 3, w + 2u * bs + 16, "SDEF R0 is not finite"))
                plush__pmx_rd_finite(r, sdef->r1, 3, w + 2u * bs + 28, "SDEF R1 is not finite");
        break;
    case PLUSH_PMX_BDEF4:
    case PLUSH_PMX_QDEF:
        check_weights(r, v->weights, 4, w + 4u * bs);
        break;
    default:
        break;
    }
    /* the edge scale only draws outlines: a warning, not an issue anything refuses */
    if (!isfinite(v->edge_scale) && !r->find_section)
        plush_diag_warn(r->diag, (int64_t)r->c.pos - 4, r->section, r->index, "edge scale is not finite");
}

void plush__pmx_rd_check_bone_cycles(reader *r, const size_t *parent_at)
{
    const plush_pmx_model *m = r->m;
    const size_t n = m->bone_count;
    /* 0 unvisited, 1 on the current walk, 2 done (reaches a root) */
    uint8_t *state = calloc(n ? n : 1, 1);
    if (!state)
        return; /* the deform's own check still refuses a cycle, without the byte */
    for (size_t i = 0; i < n; i++) {
        size_t b = i;
        while (state[b] == 0) {
            state[b] = 1;
            int32_t p = m->bones[b].parent;
            if (p < 0 || (size_t)p >= n)
                break;
            b = (size_t)p;
        }
        if (state[b] == 1 && m->bones[b].parent >= 0 && (size_t)m->bones[b].parent < n) {
            /* b is on a cycle just closed: blame its lowest-numbered bone, at its parent index */
            size_t low = b;
            for (size_t c = (size_t)m->bones[b].parent; c != b; c = (size_t)m->bones[c].parent)
                low = c < low ? c : low;
            r->index = (int64_t)low;
            plush__pmx_rd_note(r, parent_at[low], "parent chain forms a cycle");
        }
        for (size_t c = i; state[c] == 1;) { /* close the walk */
            state[c] = 2;
            int32_t p = m->bones[c].parent;
            if (p < 0 || (size_t)p >= n)
                break;
            c = (size_t)p;
        }
    }
    free(state);
}
