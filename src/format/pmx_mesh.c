/* PMX mesh geometry: material faces and vertices, welding by position. The proxy the soft bodies make is
 * scene policy (src/scene/proxy_model.c). */
#include "plush/pmx.h"
#include "plush/sys/core.h"
#include "plush/sys/pmx.h"

#include "core/geom.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

plush_status plush_pmx_material_faces(const plush_pmx_model *model, size_t material, size_t *out_first,
                                      size_t *out_count, plush_diag *diag)
{
    *out_first = *out_count = 0;
    if (material >= model->material_count)
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "material", (int64_t)material,
                               "no such material (%zu materials)", model->material_count);
    size_t first = 0;
    for (size_t m = 0;; m++) {
        int32_t n = model->materials[m].index_count;
        if (n < 0 || n % 3 != 0 || (size_t)n > model->index_count - first)
            return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "material", (int64_t)m,
                                   "face index count %ld does not fit the %zu face indices", (long)n,
                                   model->index_count);
        if (m == material) {
            *out_first = first;
            *out_count = (size_t)n;
            return PLUSH_OK;
        }
        first += (size_t)n;
    }
}

/* The material's face indices, each checked against the vertex count. */
plush_status plush_pmx_material_faces_checked(const plush_pmx_model *model, size_t material, const uint32_t **out,
                                              size_t *count, plush_diag *diag)
{
    size_t first;
    plush_status st = plush_pmx_require_geometry(model, diag);
    if (st == PLUSH_OK)
        st = plush_pmx_material_faces(model, material, &first, count, diag);
    if (st != PLUSH_OK)
        return st;
    *out = model->indices + first;
    for (size_t i = 0; i < *count; i++)
        if ((*out)[i] >= model->vertex_count)
            return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "material", (int64_t)material,
                                   "face index %zu: vertex %lu out of range (%zu vertices)", first + i,
                                   (unsigned long)(*out)[i], model->vertex_count);
    return PLUSH_OK;
}

static plush_status no_memory(plush_diag *diag, size_t material)
{
    return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "material", (int64_t)material, "out of memory");
}

plush_status plush_pmx_material_vertices(const plush_pmx_model *model, size_t material, plush_arena *arena,
                                         uint32_t **out, size_t *out_count, plush_diag *diag)
{
    *out = NULL;
    *out_count = 0;
    const uint32_t *faces;
    size_t count;
    plush_status st = plush_pmx_material_faces_checked(model, material, &faces, &count, diag);
    if (st != PLUSH_OK || count == 0)
        return st;
    uint8_t *seen = calloc(model->vertex_count, 1);
    uint32_t *order = malloc(count * sizeof *order);
    size_t n = 0;
    if (seen && order)
        for (size_t i = 0; i < count; i++)
            if (!seen[faces[i]]) {
                seen[faces[i]] = 1;
                order[n++] = faces[i];
            }
    uint32_t *kept = seen && order ? plush_arena_array(arena, n, sizeof *kept) : NULL;
    if (kept) {
        memcpy(kept, order, n * sizeof *kept);
        *out = kept;
        *out_count = n;
    }
    free(seen);
    free(order);
    return kept ? PLUSH_OK : no_memory(diag, material);
}

/* ---- welding --------------------------------------------------------------------------------- */

plush_status plush_pmx_weld(const plush_pmx_model *model, size_t material, plush_arena *arena,
                            plush_pmx_welded_mesh *out, plush_diag *diag)
{
    memset(out, 0, sizeof *out);
    const uint32_t *faces;
    size_t count;
    plush_status st = plush_pmx_material_faces_checked(model, material, &faces, &count, diag);
    if (st != PLUSH_OK)
        return st;
    if (model->vertex_count > INT32_MAX || count > (size_t)INT32_MAX)
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "material", (int64_t)material, "mesh too large");
    out->material = (int32_t)material;
    out->vertex_count = model->vertex_count;
    out->vertex_node = plush_arena_array(arena, model->vertex_count ? model->vertex_count : 1, sizeof(int32_t));
    out->triangle_count = count / 3;
    out->triangles = plush_arena_array(arena, out->triangle_count ? out->triangle_count : 1, sizeof *out->triangles);
    if (!out->vertex_node || !out->triangles)
        return no_memory(diag, material);
    for (size_t v = 0; v < model->vertex_count; v++)
        out->vertex_node[v] = -1;

    /* Distinct vertices bound the node count. */
    size_t most = count < model->vertex_count ? count : model->vertex_count;
    plush__weld weld;
    bool ok = plush__weld_init(&weld, most);
    int32_t *node_vertex = malloc((most ? most : 1) * sizeof *node_vertex);
    if (ok && node_vertex) {
        for (size_t i = 0; i < count; i++) {
            uint32_t v = faces[i];
            if (out->vertex_node[v] < 0) {
                bool added;
                out->vertex_node[v] = (int32_t)plush__weld_add(&weld, model->vertices[v].position, &added);
                if (added)
                    node_vertex[out->vertex_node[v]] = (int32_t)v;
            }
            out->triangles[i / 3][i % 3] = (uint32_t)out->vertex_node[v];
        }
        size_t node_count = weld.count;
        out->nodes = plush_arena_array(arena, node_count ? node_count : 1, sizeof *out->nodes);
        out->node_vertex = plush_arena_array(arena, node_count ? node_count : 1, sizeof *out->node_vertex);
        if (out->nodes && out->node_vertex) {
            memcpy(out->nodes, weld.positions, node_count * sizeof *out->nodes);
            memcpy(out->node_vertex, node_vertex, node_count * sizeof *node_vertex);
            out->node_count = node_count;
        }
    }
    plush__weld_free(&weld);
    free(node_vertex);
    return out->nodes && out->node_vertex ? PLUSH_OK : no_memory(diag, material);
}

bool plush_pmx_welded_mesh_usable(const plush_pmx_welded_mesh *mesh)
{
    for (size_t i = 0; i < mesh->node_count; i++)
        if (!isfinite(mesh->nodes[i][0]) || !isfinite(mesh->nodes[i][1]) || !isfinite(mesh->nodes[i][2]))
            return false;
    for (size_t t = 0; t < mesh->triangle_count; t++) {
        const float *a = mesh->nodes[mesh->triangles[t][0]];
        const float *b = mesh->nodes[mesh->triangles[t][1]];
        const float *c = mesh->nodes[mesh->triangles[t][2]];
        /* In double: a float cross product of a tiny triangle can round to zero. */
        double e[3], f[3];
        for (int k = 0; k < 3; k++) {
            e[k] = (double)b[k] - a[k];
            f[k] = (double)c[k] - a[k];
        }
        double x = e[1] * f[2] - e[2] * f[1], y = e[2] * f[0] - e[0] * f[2], z = e[0] * f[1] - e[1] * f[0];
        if (x * x + y * y + z * z > 0)
            return true;
    }
    return false;
}

double plush_pmx_height(const plush_pmx_model *model)
{
    double lo = INFINITY, hi = -INFINITY;
    for (size_t v = 0; model && v < model->vertex_count; v++) {
        double y = model->vertices[v].position[1];
        if (isfinite(y)) {
            lo = y < lo ? y : lo;
            hi = y > hi ? y : hi;
        }
    }
    return hi >= lo ? hi - lo : 0.0;
}

double plush_pmx_vertex_bone_share(const plush_pmx_vertex *v, const bool *marked, size_t bone_count)
{
    double share = 0;
    for (int j = 0; j < 4; j++)
        if (v->bones[j] >= 0 && (size_t)v->bones[j] < bone_count && marked[v->bones[j]])
            share += v->weights[j];
    return share;
}
