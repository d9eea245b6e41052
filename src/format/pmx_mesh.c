/* PMX mesh geometry: material faces, welding by position, the soft-body proxy and the bound set. */
#include "plush/pmx_mesh.h"

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
static plush_status faces_checked(const plush_pmx_model *model, size_t material, const uint32_t **out,
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
    plush_status st = faces_checked(model, material, &faces, &count, diag);
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

/* Open addressing over node numbers + 1 (0 = empty), keyed by position. Adding 0.0f turns -0 into +0,
 * so positions that compare equal hash equally. */
typedef struct weld_table {
    uint32_t *slots;
    size_t mask;
} weld_table;

static size_t position_hash(const float p[3])
{
    uint64_t h = 1469598103934665603u;
    for (int k = 0; k < 3; k++) {
        float f = p[k] + 0.0f;
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        h = (h ^ bits) * 1099511628211u;
        h ^= h >> 29;
    }
    return (size_t)h;
}

static bool same_position(const float a[3], const float b[3])
{
    return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
}

/* The node at position p, or a new one (node_vertex[new] = vertex). */
static uint32_t weld_find(weld_table *t, float (*nodes)[3], int32_t *node_vertex, size_t *node_count,
                          const float p[3], uint32_t vertex)
{
    size_t i = position_hash(p) & t->mask;
    for (;; i = (i + 1) & t->mask) {
        uint32_t s = t->slots[i];
        if (s == 0)
            break;
        if (same_position(nodes[s - 1], p))
            return s - 1;
    }
    uint32_t node = (uint32_t)(*node_count)++;
    memcpy(nodes[node], p, sizeof nodes[node]);
    node_vertex[node] = (int32_t)vertex;
    t->slots[i] = node + 1;
    return node;
}

plush_status plush_pmx_weld(const plush_pmx_model *model, size_t material, plush_arena *arena,
                            plush_pmx_welded_mesh *out, plush_diag *diag)
{
    memset(out, 0, sizeof *out);
    const uint32_t *faces;
    size_t count;
    plush_status st = faces_checked(model, material, &faces, &count, diag);
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

    /* Distinct vertices bound the node count; the table stays at most half full. */
    size_t most = count < model->vertex_count ? count : model->vertex_count;
    size_t cap = 16;
    while (cap < 2 * most)
        cap *= 2;
    weld_table table = {.slots = calloc(cap, sizeof *table.slots), .mask = cap - 1};
    float(*nodes)[3] = malloc((most ? most : 1) * sizeof *nodes);
    int32_t *node_vertex = malloc((most ? most : 1) * sizeof *node_vertex);
    size_t node_count = 0;
    if (table.slots && nodes && node_vertex) {
        for (size_t i = 0; i < count; i++) {
            uint32_t v = faces[i];
            if (out->vertex_node[v] < 0)
                out->vertex_node[v] = (int32_t)weld_find(&table, nodes, node_vertex, &node_count,
                                                         model->vertices[v].position, v);
            out->triangles[i / 3][i % 3] = (uint32_t)out->vertex_node[v];
        }
        out->nodes = plush_arena_array(arena, node_count ? node_count : 1, sizeof *out->nodes);
        out->node_vertex = plush_arena_array(arena, node_count ? node_count : 1, sizeof *out->node_vertex);
    }
    if (out->nodes && out->node_vertex) {
        memcpy(out->nodes, nodes, node_count * sizeof *nodes);
        memcpy(out->node_vertex, node_vertex, node_count * sizeof *node_vertex);
        out->node_count = node_count;
    }
    free(table.slots);
    free(nodes);
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

/* ---- the proxy ------------------------------------------------------------------------------- */

static const char *material_name(const plush_pmx_model *model, int32_t material)
{
    return model->materials[material].name.s ? model->materials[material].name.s : "";
}

/* Welds soft body i into part when it can carry a proxy; otherwise warns and leaves *used false. */
static plush_status proxy_part(const plush_pmx_model *model, size_t i, plush_arena *arena,
                               plush_pmx_proxy_part *part, bool *used, plush_diag *diag)
{
    const plush_pmx_soft_body *sb = &model->soft_bodies[i];
    *used = false;
    if (sb->material < 0) {
        plush_diag_warn(diag, -1, "soft body", (int64_t)i, "TriMesh without a material: skipped");
        return PLUSH_OK;
    }
    plush_status st = plush_pmx_weld(model, (size_t)sb->material, arena, &part->mesh, diag);
    if (st != PLUSH_OK)
        return st;
    if (part->mesh.triangle_count == 0) {
        plush_diag_warn(diag, -1, "soft body", (int64_t)i, "material %ld \"%s\" has no faces: skipped",
                        (long)sb->material, material_name(model, sb->material));
        return PLUSH_OK;
    }
    if (!plush_pmx_welded_mesh_usable(&part->mesh)) {
        plush_diag_warn(diag, -1, "soft body", (int64_t)i,
                        "material %ld \"%s\" is degenerate (no triangle with area, or a non-finite "
                        "position): skipped",
                        (long)sb->material, material_name(model, sb->material));
        return PLUSH_OK;
    }
    part->soft_body = (int32_t)i;
    *used = true;
    return PLUSH_OK;
}

/* Copies the parts' nodes and triangles into the proxy's arrays, renumbered. */
static plush_status proxy_concatenate(plush_pmx_proxy *proxy, plush_arena *arena, plush_diag *diag)
{
    size_t nodes = 0, triangles = 0;
    for (size_t p = 0; p < proxy->part_count; p++) {
        proxy->parts[p].first_node = nodes;
        proxy->parts[p].first_triangle = triangles;
        nodes += proxy->parts[p].mesh.node_count;
        triangles += proxy->parts[p].mesh.triangle_count;
    }
    if (nodes > UINT32_MAX)
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "soft body", -1, "proxy too large");
    proxy->nodes = plush_arena_array(arena, nodes ? nodes : 1, sizeof *proxy->nodes);
    proxy->node_vertex = plush_arena_array(arena, nodes ? nodes : 1, sizeof *proxy->node_vertex);
    proxy->triangles = plush_arena_array(arena, triangles ? triangles : 1, sizeof *proxy->triangles);
    if (!proxy->nodes || !proxy->node_vertex || !proxy->triangles)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "soft body", -1, "out of memory");
    for (size_t p = 0; p < proxy->part_count; p++) {
        const plush_pmx_proxy_part *part = &proxy->parts[p];
        const plush_pmx_welded_mesh *m = &part->mesh;
        memcpy(proxy->nodes + part->first_node, m->nodes, m->node_count * sizeof *m->nodes);
        memcpy(proxy->node_vertex + part->first_node, m->node_vertex, m->node_count * sizeof *m->node_vertex);
        for (size_t t = 0; t < m->triangle_count; t++)
            for (int k = 0; k < 3; k++)
                proxy->triangles[part->first_triangle + t][k] = (uint32_t)part->first_node + m->triangles[t][k];
    }
    proxy->node_count = nodes;
    proxy->triangle_count = triangles;
    return PLUSH_OK;
}

plush_status plush_pmx_proxy_build(const plush_pmx_model *model, plush_arena *arena, plush_pmx_proxy *out,
                                   plush_diag *diag)
{
    memset(out, 0, sizeof *out);
    plush_status checked = plush_pmx_require_geometry(model, diag);
    if (checked != PLUSH_OK)
        return checked;
    out->material_count = model->material_count;
    out->soft_material = plush_arena_array(arena, model->material_count ? model->material_count : 1, sizeof(bool));
    out->parts = plush_arena_array(arena, model->soft_body_count ? model->soft_body_count : 1, sizeof *out->parts);
    if (!out->soft_material || !out->parts)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "soft body", -1, "out of memory");
    for (size_t i = 0; i < model->soft_body_count; i++) {
        int32_t m = model->soft_bodies[i].material;
        if (m < -1 || (m >= 0 && (size_t)m >= model->material_count))
            return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "soft body", (int64_t)i,
                                   "material %ld out of range (%zu materials)", (long)m, model->material_count);
        if (m >= 0)
            out->soft_material[m] = true;
    }
    for (size_t i = 0; i < model->soft_body_count; i++) {
        if (model->soft_bodies[i].shape != PLUSH_PMX_SOFT_TRIMESH)
            continue;
        bool used;
        plush_status st = proxy_part(model, i, arena, &out->parts[out->part_count], &used, diag);
        if (st != PLUSH_OK)
            return st;
        out->part_count += used;
    }
    return proxy_concatenate(out, arena, diag);
}

/* ---- the bound set --------------------------------------------------------------------------- */

static bool name_is(const plush_str *name, const char *s)
{
    size_t n = strlen(s);
    return name->len == n && (n == 0 || memcmp(name->s, s, n) == 0);
}

/* Marks the materials options choose (all non-soft ones without options). */
static plush_status choose_materials(const plush_pmx_model *model, const plush_pmx_proxy *proxy,
                                     const plush_pmx_bound_options *options, bool *chosen, plush_diag *diag)
{
    if (!options || options->material_count == 0) {
        for (size_t m = 0; m < model->material_count; m++)
            chosen[m] = !(m < proxy->material_count && proxy->soft_material[m]);
        return PLUSH_OK;
    }
    for (size_t k = 0; k < options->material_count; k++) {
        const char *want = options->materials[k] ? options->materials[k] : "";
        bool found = false;
        for (size_t m = 0; m < model->material_count; m++) {
            if (!name_is(&model->materials[m].name, want))
                continue;
            if (m < proxy->material_count && proxy->soft_material[m])
                return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "material", (int64_t)m,
                                       "\"%s\" is a soft body's own mesh, not a mesh to bind", want);
            chosen[m] = found = true;
        }
        if (!found)
            return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no material named \"%s\"", want);
    }
    return PLUSH_OK;
}

plush_status plush_pmx_bound_vertices(const plush_pmx_model *model, const plush_pmx_proxy *proxy,
                                      const plush_pmx_bound_options *options, plush_arena *arena, uint32_t **out,
                                      size_t *out_count, plush_diag *diag)
{
    *out = NULL;
    *out_count = 0;
    plush_status checked = plush_pmx_require_geometry(model, diag);
    if (checked != PLUSH_OK)
        return checked;
    bool *chosen = calloc(model->material_count ? model->material_count : 1, sizeof *chosen);
    uint8_t *used = calloc(model->vertex_count ? model->vertex_count : 1, 1);
    plush_status st = chosen && used ? PLUSH_OK
                                     : plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    if (st == PLUSH_OK)
        st = choose_materials(model, proxy, options, chosen, diag);
    size_t n = 0;
    for (size_t m = 0; st == PLUSH_OK && m < model->material_count; m++) {
        const uint32_t *faces;
        size_t count;
        if (!chosen[m])
            continue;
        st = faces_checked(model, m, &faces, &count, diag);
        for (size_t i = 0; st == PLUSH_OK && i < count; i++) {
            n += !used[faces[i]];
            used[faces[i]] = 1;
        }
    }
    if (st == PLUSH_OK) {
        uint32_t *list = plush_arena_array(arena, n ? n : 1, sizeof *list);
        if (!list) {
            st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        } else {
            size_t k = 0;
            for (size_t v = 0; v < model->vertex_count; v++)
                if (used[v])
                    list[k++] = (uint32_t)v;
            *out = n ? list : NULL;
            *out_count = n;
        }
    }
    free(chosen);
    free(used);
    return st;
}
