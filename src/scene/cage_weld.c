/* The detailed surface a cage is built around: the chosen materials of a PMX model, welded by position
 * into one plain mesh for src/proxy's cage functions (plush_scene_cage_weld, plush/scene_proxy.h). */
#include "plush/scene_proxy.h"
#include "plush/sys/core.h"
#include "plush/sys/pmx.h"
#include "plush/sys/scene.h"
#include "core/common.h"
#include "core/geom.h"

#include <stdlib.h>
#include <string.h>

/* ---- welding across materials ------------------------------------------------------------------ */

static plush_status choose(const plush_pmx_model *model, const char *const *names, size_t count, bool *chosen,
                           plush_diag *diag)
{
    for (size_t m = 0; m < model->material_count; m++)
        chosen[m] = count == 0;
    plush_status st = PLUSH_OK;
    for (size_t k = 0; st == PLUSH_OK && k < count; k++)
        st = plush_pmx_material_choose(model, names[k] ? names[k] : "", chosen, diag);
    return st;
}

/* The kernel's weld, plus each node's summed normal and first vertex. */
typedef struct welder {
    plush__weld weld;
    float (*nrm)[3];
    int32_t *source;
} welder;

static uint32_t weld_vertex(welder *w, const plush_pmx_vertex *v, uint32_t index)
{
    bool added;
    uint32_t node = plush__weld_add(&w->weld, v->position, &added);
    if (added) {
        memcpy(w->nrm[node], v->normal, sizeof w->nrm[node]);
        w->source[node] = (int32_t)index;
    } else {
        for (int k = 0; k < 3; k++)
            w->nrm[node][k] += v->normal[k];
    }
    return node;
}

/* The chosen faces, each index checked; *total gets their index count. */
static plush_status chosen_faces(const plush_pmx_model *model, const bool *chosen, size_t *total,
                                 plush_diag *diag)
{
    size_t first = 0;
    *total = 0;
    for (size_t m = 0; m < model->material_count; m++) {
        int32_t n = model->materials[m].index_count;
        if (n < 0 || n % 3 != 0 || (size_t)n > model->index_count - first)
            return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "material", (int64_t)m,
                                   "face index count %ld does not fit the %zu face indices", (long)n,
                                   model->index_count);
        for (size_t i = first; chosen[m] && i < first + (size_t)n; i++)
            if (model->indices[i] >= model->vertex_count)
                return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "material", (int64_t)m,
                                       "face index %zu: vertex %lu out of range (%zu vertices)", i,
                                       (unsigned long)model->indices[i], model->vertex_count);
        *total += chosen[m] ? (size_t)n : 0;
        first += (size_t)n;
    }
    return PLUSH_OK;
}

static plush_status weld_faces(const plush_pmx_model *model, const bool *chosen, size_t total, welder *w,
                               plush_arena *arena, plush_cage_mesh *out, plush_diag *diag)
{
    int32_t *node_of = malloc((model->vertex_count ? model->vertex_count : 1) * sizeof *node_of);
    uint32_t(*tris)[3] = malloc((total / 3 ? total / 3 : 1) * sizeof *tris);
    if (!node_of || !tris) {
        free(node_of);
        free(tris);
        return plush__no_memory(diag);
    }
    for (size_t v = 0; v < model->vertex_count; v++)
        node_of[v] = -1;
    size_t first = 0, t = 0;
    for (size_t m = 0; m < model->material_count; m++) {
        size_t n = (size_t)model->materials[m].index_count;
        for (size_t i = first; chosen[m] && i < first + n; i += 3) {
            uint32_t f[3];
            for (int k = 0; k < 3; k++) {
                uint32_t v = model->indices[i + (size_t)k];
                if (node_of[v] < 0)
                    node_of[v] = (int32_t)weld_vertex(w, &model->vertices[v], v);
                f[k] = (uint32_t)node_of[v];
            }
            if (f[0] != f[1] && f[1] != f[2] && f[0] != f[2])
                memcpy(tris[t++], f, sizeof f);
        }
        first += n;
    }
    size_t nv = w->weld.count ? w->weld.count : 1, nt = t ? t : 1;
    out->positions = plush_arena_array(arena, nv, sizeof *out->positions);
    out->normals = plush_arena_array(arena, nv, sizeof *out->normals);
    out->source = plush_arena_array(arena, nv, sizeof *out->source);
    out->triangles = plush_arena_array(arena, nt, sizeof *out->triangles);
    plush_status st = PLUSH_OK;
    if (out->positions && out->normals && out->source && out->triangles) {
        memcpy(out->positions, w->weld.positions, w->weld.count * sizeof *out->positions);
        memcpy(out->normals, w->nrm, w->weld.count * sizeof *w->nrm);
        memcpy(out->source, w->source, w->weld.count * sizeof *w->source);
        memcpy(out->triangles, tris, t * sizeof *tris);
        out->vertex_count = w->weld.count;
        out->triangle_count = t;
    } else {
        st = plush__no_memory(diag);
    }
    free(node_of);
    free(tris);
    return st;
}

plush_status plush_scene_cage_weld(const plush_pmx_model *model, const char *const *materials, size_t material_count,
                             plush_arena *arena, plush_cage_mesh *out, plush_diag *diag)
{
    memset(out, 0, sizeof *out);
    if (model->vertex_count > INT32_MAX || model->index_count > (size_t)UINT32_MAX)
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, NULL, -1, "mesh too large");
    bool *chosen = calloc(model->material_count ? model->material_count : 1, sizeof *chosen);
    if (!chosen)
        return plush__no_memory(diag);
    size_t total = 0;
    plush_status st = choose(model, materials, material_count, chosen, diag);
    if (st == PLUSH_OK)
        st = chosen_faces(model, chosen, &total, diag);
    if (st != PLUSH_OK) {
        free(chosen);
        return st;
    }
    /* Distinct vertices bound the node count. */
    size_t most = total < model->vertex_count ? total : model->vertex_count;
    welder w = {.nrm = malloc((most + 1) * sizeof *w.nrm), .source = malloc((most + 1) * sizeof *w.source)};
    st = plush__weld_init(&w.weld, most) && w.nrm && w.source ? weld_faces(model, chosen, total, &w, arena, out, diag)
                                                              : plush__no_memory(diag);
    plush__weld_free(&w.weld);
    free(w.nrm);
    free(w.source);
    free(chosen);
    return st;
}
