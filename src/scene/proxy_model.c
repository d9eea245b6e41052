/* The proxy a model's TriMesh soft bodies make together, and the set of vertices bound to it: which soft
 * bodies and which materials is scene policy, so it lives here, not in the format module. */
#include "plush/scene_proxy.h"
#include "core/geom.h"
#include "plush/sys/core.h"
#include "plush/sys/pmx.h"
#include "plush/sys/scene.h"
#include "physics/rigid_shape.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the proxy ------------------------------------------------------------------------------- */

static const char *material_name(const plush_pmx_model *model, int32_t material)
{
    return model->materials[material].name.s ? model->materials[material].name.s : "";
}

/* Welds soft body i into part when it can carry a proxy; otherwise warns and leaves *used false. */
static plush_status proxy_part(const plush_pmx_model *model, size_t i, plush_arena *arena,
                               plush_scene_proxy_part *part, bool *used, plush_diag *diag)
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
static plush_status proxy_concatenate(plush_scene_proxy *proxy, plush_arena *arena, plush_diag *diag)
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
        const plush_scene_proxy_part *part = &proxy->parts[p];
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

plush_status plush_scene_proxy_build(const plush_pmx_model *model, plush_arena *arena, plush_scene_proxy *out,
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

/* Marks the materials options choose (all non-soft ones without options). */
static plush_status choose_materials(const plush_pmx_model *model, const plush_scene_proxy *proxy,
                                     const plush_scene_bound_options *options, bool *chosen, plush_diag *diag)
{
    if (!options || options->material_count == 0) {
        for (size_t m = 0; m < model->material_count; m++)
            chosen[m] = !(m < proxy->material_count && proxy->soft_material[m]);
        return PLUSH_OK;
    }
    for (size_t k = 0; k < options->material_count; k++) {
        plush_status st = plush_pmx_material_choose(model, options->materials[k] ? options->materials[k] : "", chosen,
                                                    diag);
        if (st != PLUSH_OK)
            return st;
    }
    for (size_t m = 0; m < model->material_count; m++)
        if (chosen[m] && m < proxy->material_count && proxy->soft_material[m])
            return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "material", (int64_t)m,
                                   "\"%s\" is a soft body's own mesh, not a mesh to bind",
                                   material_name(model, (int32_t)m));
    return PLUSH_OK;
}

/* ---- layers ---------------------------------------------------------------------------------- */

static int by_position(const void *a, const void *b)
{
    const float *x = a, *y = b;
    for (int k = 0; k < 3; k++)
        if (x[k] != y[k])
            return x[k] < y[k] ? -1 : 1;
    return 0;
}

/* Two vertices this near (a millionth of the chosen vertices' extent, per axis) share a position. */
#define LAYER_TOLERANCE 1e-6
/* Rounds of layers of layers (each pulls in what shares a position with the last one's): a model's stack of
 * coincident materials is a handful deep. */
enum { LAYER_ROUNDS = 8 };

typedef struct cell_point {
    int64_t cell[3];
    uint32_t vertex;
} cell_point;

static int by_cell(const void *a, const void *b)
{
    const cell_point *x = a, *y = b;
    for (int k = 0; k < 3; k++)
        if (x->cell[k] != y->cell[k])
            return x->cell[k] < y->cell[k] ? -1 : 1;
    return (x->vertex > y->vertex) - (x->vertex < y->vertex);
}

/* Whether a point of `points` (sorted by cell) lies within tol of p on every axis: cells are tol wide, so
 * such a point lies in one of the 27 cells around p's. */
static bool near_point(const plush_pmx_model *model, const cell_point *points, size_t count, const float p[3],
                       double tol)
{
    int64_t c[3];
    for (int k = 0; k < 3; k++)
        c[k] = (int64_t)floor((double)p[k] / tol);
    for (int dx = -1; dx <= 1; dx++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dz = -1; dz <= 1; dz++) {
                cell_point key = {{c[0] + dx, c[1] + dy, c[2] + dz}, 0};
                size_t lo = 0, hi = count;
                while (lo < hi) { /* the first point of the cell */
                    size_t mid = lo + (hi - lo) / 2;
                    if (by_cell(&points[mid], &key) < 0)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                for (size_t i = lo; i < count && memcmp(points[i].cell, key.cell, sizeof key.cell) == 0; i++) {
                    const float *q = model->vertices[points[i].vertex].position;
                    if (fabs((double)q[0] - p[0]) <= tol && fabs((double)q[1] - p[1]) <= tol &&
                        fabs((double)q[2] - p[2]) <= tol)
                        return true;
                }
            }
    return false;
}

/* The pieces of material m's faces (joined by their edges and by shared positions, so a piece is what
 * looks like one piece whatever way its vertices were split) that hold a vertex sharing a position with a
 * chosen one (`shared`), each added to used whole when every vertex of it lies within `reach` of a chosen
 * vertex (`near`, the chosen vertices before any layer was pulled): a trim sewn onto a hem at a few
 * vertices, a fringe of bangs meeting the hair at their roots. A piece that reaches further -- a body's skin
 * meeting a skirt at the waist, reaching up to the neck -- keeps its own skinning but for the shared
 * vertices. *added counts the vertices marked. */
static plush_status pull_pieces(const plush_pmx_model *model, size_t m, const uint8_t *shared,
                                const plush__point_grid *near, const float (*near_points)[3], double reach,
                                const bool *moved, uint8_t *used, size_t *added, size_t *sewn, plush_diag *diag)
{
    const uint32_t *faces;
    size_t fc;
    plush_status st = plush_pmx_material_faces_checked(model, m, &faces, &fc, diag);
    if (st != PLUSH_OK || fc == 0)
        return st;
    /* the material's distinct vertices, numbered locally in face order */
    uint32_t *local = malloc(model->vertex_count * sizeof *local);
    uint32_t *vertex = malloc(fc * sizeof *vertex);
    uint32_t *parent = malloc(fc * sizeof *parent);
    uint32_t *node = malloc(fc * sizeof *node), *first = malloc(fc * sizeof *first);
    float(*pos)[3] = malloc(fc * sizeof *pos);
    uint8_t *far = calloc(fc, 1), *seeded = calloc(fc, 1);
    if (!local || !vertex || !parent || !node || !first || !pos || !far || !seeded) {
        st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        goto done;
    }
    size_t n = 0;
    for (size_t i = 0; i < fc; i++)
        local[faces[i]] = UINT32_MAX;
    for (size_t i = 0; i < fc; i++)
        if (local[faces[i]] == UINT32_MAX) {
            vertex[n] = faces[i];
            memcpy(pos[n], model->vertices[faces[i]].position, sizeof pos[n]);
            local[faces[i]] = (uint32_t)n++;
        }
    plush__uf_init(parent, n);
    for (size_t i = 0; i + 2 < fc; i += 3) {
        plush__uf_union(parent, local[faces[i]], local[faces[i + 1]]);
        plush__uf_union(parent, local[faces[i]], local[faces[i + 2]]);
    }
    if (plush__weld_positions((const float(*)[3])pos, n, node, first) == SIZE_MAX) {
        st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        goto done;
    }
    /* vertices at one position join the first of them (its local number is first[] of the node) */
    for (size_t i = 0; i < n; i++)
        plush__uf_union(parent, first[node[i]], (uint32_t)i);
    for (size_t i = 0; i < n; i++) {
        uint32_t r = plush__uf_find(parent, (uint32_t)i);
        if (shared[vertex[i]])
            seeded[r] = 1;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t r = plush__uf_find(parent, (uint32_t)i);
        if (!seeded[r] || far[r])
            continue;
        size_t q = plush__point_grid_nearest(near, pos[i]);
        double d2 = 0;
        for (int k = 0; q != SIZE_MAX && k < 3; k++)
            d2 += ((double)pos[i][k] - near_points[q][k]) * ((double)pos[i][k] - near_points[q][k]);
        if (q == SIZE_MAX || !(d2 <= reach * reach))
            far[r] = 1;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t r = plush__uf_find(parent, (uint32_t)i);
        if (seeded[r] && !far[r] && !used[vertex[i]]) {
            used[vertex[i]] = 1;
            (*added)++;
        }
        /* a shared vertex of a piece left to its own skinning, which the model's physics moves there */
        if (far[r] && shared[vertex[i]] && moved &&
            plush_pmx_vertex_bone_share(&model->vertices[vertex[i]], moved, model->bone_count) >= 0.5)
            (*sewn)++;
    }
done:
    free(local);
    free(vertex);
    free(parent);
    free(node);
    free(first);
    free(pos);
    free(far);
    free(seeded);
    return st;
}


/* The used vertices as cell points (cells of side tol), sorted by cell for near_point; their count. */
static size_t used_points(const plush_pmx_model *model, const uint8_t *used, double tol, cell_point *points)
{
    size_t count = 0;
    for (size_t v = 0; v < model->vertex_count; v++)
        if (used[v]) {
            for (int k = 0; k < 3; k++)
                points[count].cell[k] = (int64_t)floor((double)model->vertices[v].position[k] / tol);
            points[count++].vertex = (uint32_t)v;
        }
    qsort(points, count, sizeof *points, by_cell);
    return count;
}
/* Layers move as one: a vertex of another material (not a soft body's) that shares its rest position with
 * a chosen vertex -- the inner layer of a cape, the back faces of hair, an outline shell -- is bound too,
 * so the two stay together whatever material the user named; and so is the whole piece it belongs to
 * when that piece lies within one mean cage edge of the chosen vertices (pull_pieces). *n counts the
 * vertices marked in used; pulled[m], material m's; sewn[m], those of its pieces not bound whole that
 * the model's physics moves (plush_scene_bound_options.sewn). */
static plush_status pull_layers(const plush_pmx_model *model, const plush_scene_proxy *proxy, const bool *chosen,
                                uint8_t *used, size_t *n, size_t *pulled, size_t *sewn, plush_diag *diag)
{
    if (*n == 0)
        return PLUSH_OK;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t v = 0; v < model->vertex_count; v++)
        for (int k = 0; used[v] && k < 3; k++) {
            lo[k] = fmin(lo[k], model->vertices[v].position[k]);
            hi[k] = fmax(hi[k], model->vertices[v].position[k]);
        }
    double extent = fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2]));
    double tol = extent > 0 ? LAYER_TOLERANCE * extent : 1e-9;
    cell_point *points = malloc(*n * sizeof *points);
    if (!points)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    size_t count = used_points(model, used, tol, points);
    /* the chosen vertices' positions, for how far a piece reaches from them */
    float(*near_points)[3] = malloc(count * sizeof *near_points);
    uint8_t *shared = calloc(model->vertex_count, 1);
    plush__point_grid near = {0};
    for (size_t i = 0; near_points && i < count; i++)
        memcpy(near_points[i], model->vertices[points[i].vertex].position, sizeof near_points[i]);
    plush_status st = near_points && shared && plush__point_grid_init(&near, &near_points[0][0], count,
                                                                      sizeof near_points[0])
                          ? PLUSH_OK
                          : plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    double reach = proxy->triangle_count ? plush__mean_edge(&proxy->nodes[0][0], sizeof proxy->nodes[0],
                                                            &proxy->triangles[0][0], proxy->triangle_count * 3)
                                         : 0;
    /* the bones the model's physics moves, for the sewn count (none counted when out of memory for it) */
    bool *moved = sewn ? calloc(model->bone_count ? model->bone_count : 1, sizeof *moved) : NULL;
    if (moved)
        plush__rigid_moved_bones(model, moved);
    for (size_t m = 0; st == PLUSH_OK && m < model->material_count; m++) {
        if (chosen[m] || (m < proxy->material_count && proxy->soft_material[m]))
            continue;
        const uint32_t *faces = NULL;
        size_t fc = 0, before = *n;
        bool meets = false;
        st = plush_pmx_material_faces_checked(model, m, &faces, &fc, diag);
        for (size_t i = 0; st == PLUSH_OK && i < fc; i++) {
            uint32_t v = faces[i];
            if (shared[v] || !near_point(model, points, count, model->vertices[v].position, tol))
                continue;
            shared[v] = 1;
            meets = true;
            if (!used[v]) {
                used[v] = 1;
                (*n)++;
            }
        }
        size_t sewn_here = 0;
        if (st == PLUSH_OK && meets)
            st = pull_pieces(model, m, shared, &near, (const float(*)[3])near_points, reach, moved, used, n,
                             &sewn_here, diag);
        if (pulled)
            pulled[m] = *n - before;
        if (sewn)
            sewn[m] = sewn_here;
        for (size_t i = 0; i < fc; i++)
            shared[faces[i]] = 0;
    }
    /* A vertex sharing its rest position with one pulled in moves with it too (a lining on a trim the
     * chosen material's pieces brought along: Luka's 材質14 on 材質4, caging her skin, parted from it by
     * 1.6 units), and so on to the end; whole pieces only come along with the chosen material's. */
    for (int round = 0; st == PLUSH_OK && round < LAYER_ROUNDS; round++) {
        cell_point *grown = realloc(points, *n * sizeof *points);
        if (!grown) {
            st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
            break;
        }
        points = grown;
        count = used_points(model, used, tol, points);
        size_t added = 0;
        for (size_t m = 0; st == PLUSH_OK && m < model->material_count; m++) {
            if (chosen[m] || (m < proxy->material_count && proxy->soft_material[m]))
                continue;
            const uint32_t *faces = NULL;
            size_t fc = 0;
            st = plush_pmx_material_faces_checked(model, m, &faces, &fc, diag);
            for (size_t i = 0; st == PLUSH_OK && i < fc; i++) {
                uint32_t v = faces[i];
                if (used[v] || !near_point(model, points, count, model->vertices[v].position, tol))
                    continue;
                used[v] = 1;
                (*n)++;
                added++;
                if (pulled)
                    pulled[m]++;
            }
        }
        if (!added)
            break;
    }
    plush__point_grid_free(&near);
    free(moved);
    free(near_points);
    free(shared);
    free(points);
    return st;
}

/* Unmarks the used vertices at one of the left-out positions (exactly: they are the welded positions of the
 * same vertices). */
static plush_status leave_out(const plush_pmx_model *model, const float (*positions)[3], size_t count, uint8_t *used,
                              size_t *n, plush_diag *diag)
{
    float(*sorted)[3] = malloc(count * sizeof *sorted);
    if (!sorted)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    memcpy(sorted, positions, count * sizeof *sorted);
    qsort(sorted, count, sizeof *sorted, by_position);
    for (size_t v = 0; v < model->vertex_count; v++)
        if (used[v] && bsearch(model->vertices[v].position, sorted, count, sizeof *sorted, by_position)) {
            used[v] = 0;
            (*n)--;
        }
    free(sorted);
    return PLUSH_OK;
}

plush_status plush_scene_bound_vertices(const plush_pmx_model *model, const plush_scene_proxy *proxy,
                                      const plush_scene_bound_options *options, plush_arena *arena, uint32_t **out,
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
        st = plush_pmx_material_faces_checked(model, m, &faces, &count, diag);
        for (size_t i = 0; st == PLUSH_OK && i < count; i++) {
            n += !used[faces[i]];
            used[faces[i]] = 1;
        }
    }
    if (options && options->pulled)
        memset(options->pulled, 0, model->material_count * sizeof *options->pulled);
    if (options && options->sewn)
        memset(options->sewn, 0, model->material_count * sizeof *options->sewn);
    if (st == PLUSH_OK && options && options->left_out_count > 0)
        st = leave_out(model, options->left_out, options->left_out_count, used, &n, diag);
    if (st == PLUSH_OK && options && options->material_count > 0)
        st = pull_layers(model, proxy, chosen, used, &n, options->pulled, options->sewn, diag);
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
