/* A model's detailed vertices bound to its soft-body proxy, and the binding written as an influence map. */
#include "scene/internal.h"
#include "plush/sys/core.h"
#include "plush/sys/pmx.h"
#include "plush/sys/scene.h"
#include "core/geom.h"
#include "physics/rigid_shape.h"

#include <stdlib.h>
#include <string.h>

/* Keeps a copy of the rows so that CALC_ONESKIN0 can give a vertex back its computed blend. */
static struct plush_scene_computed *keep_computed(plush_arena *arena, const plush_proxy_binding *bind)
{
    size_t n = bind->vertex_count ? bind->vertex_count : 1;
    struct plush_scene_computed *c = plush_arena_alloc(arena, sizeof *c);
    if (!c)
        return NULL;
    c->triangles = plush_arena_array(arena, n, sizeof *c->triangles);
    c->weights = plush_arena_array(arena, n, sizeof *c->weights);
    c->distances = plush_arena_array(arena, n, sizeof *c->distances);
    c->share = plush_arena_array(arena, n, sizeof *c->share);
    c->percent = bind->percent ? plush_arena_array(arena, n, sizeof *c->percent) : NULL;
    if (!c->triangles || !c->weights || !c->distances || !c->share || (bind->percent && !c->percent))
        return NULL;
    size_t rows = bind->vertex_count;
    memcpy(c->triangles, bind->triangles, rows * sizeof *c->triangles);
    memcpy(c->weights, bind->weights, rows * sizeof *c->weights);
    memcpy(c->distances, bind->distances, rows * sizeof *c->distances);
    memcpy(c->share, bind->proxy_share, rows * sizeof *c->share);
    if (c->percent)
        memcpy(c->percent, bind->percent, rows * sizeof *c->percent);
    return c;
}

/* The PMX bone that moves a vertex most (first of equal weights), or -1. */
static int32_t strongest_bone(const plush_pmx_model *model, const plush_pmx_vertex *v)
{
    int32_t best = -1;
    float w = 0;
    for (int k = 0; k < 4; k++)
        if (v->bones[k] >= 0 && (size_t)v->bones[k] < model->bone_count && (best < 0 || v->weights[k] > w)) {
            best = v->bones[k];
            w = v->weights[k];
        }
    return best;
}

/* The model's faces whose three vertices are all bound, as binding rows, for the smoothing. */
static plush_status smooth_rows(plush_scene_binding *b, const plush_proxy_mesh *mesh, const float (*points)[3],
                                const plush_scene_bind_options *options, plush_diag *diag)
{
    const plush_pmx_model *model = b->model;
    size_t tris = model->index_count / 3;
    uint32_t(*faces)[3] = malloc((tris ? tris : 1) * sizeof *faces);
    if (!faces)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    size_t n = 0;
    for (size_t f = 0; f < tris; f++) {
        int64_t r[3];
        for (int k = 0; k < 3; k++)
            r[k] = plush_scene_binding_row(b, model->indices[3 * f + k]);
        if (r[0] >= 0 && r[1] >= 0 && r[2] >= 0) {
            for (int k = 0; k < 3; k++)
                faces[n][k] = (uint32_t)r[k];
            n++;
        }
    }
    plush_proxy_smooth_options so = options ? options->smooth : (plush_proxy_smooth_options){0};
    /* the proxy's nodes its soft bodies pin to bones, each with the bone that carries it most: the smoothing
     * reaches less where they hold the cage across a joint */
    int32_t *held = NULL;
    if (!so.node_bone) {
        held = malloc((b->proxy.node_count ? b->proxy.node_count : 1) * sizeof *held);
        if (!held) {
            free(faces);
            return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        }
        for (size_t i = 0; i < b->proxy.node_count; i++)
            held[i] = -1;
        for (size_t p = 0; p < b->proxy.part_count; p++) {
            const plush_scene_proxy_part *part = &b->proxy.parts[p];
            const plush_pmx_soft_body *sb = &model->soft_bodies[part->soft_body];
            for (uint32_t k = 0; k < sb->pin_count; k++) {
                int32_t v = sb->pins[k];
                int32_t node = v >= 0 && (size_t)v < part->mesh.vertex_count ? part->mesh.vertex_node[v] : -1;
                if (node >= 0 && (size_t)node < part->mesh.node_count)
                    held[part->first_node + (size_t)node] = strongest_bone(model, &model->vertices[v]);
            }
        }
        so.node_bone = held;
    }
    /* per bound vertex, the share of its skinning weight on bones in chains the model's own physics swings: a chain
     * bends, a body alone (a chest ornament hung on one rigid body) moves its part whole -- of the bones physics
     * moves, those with a parent or a child it moves too */
    float *swung = NULL;
    bool *driven = NULL, *chained = NULL;
    if (!so.point_swung && model->rigid_body_count) {
        swung = malloc((b->binding->vertex_count ? b->binding->vertex_count : 1) * sizeof *swung);
        driven = calloc(model->bone_count ? model->bone_count : 1, sizeof *driven);
        chained = calloc(model->bone_count ? model->bone_count : 1, sizeof *chained);
        if (!swung || !driven || !chained) {
            free(swung), free(driven), free(chained), free(held), free(faces);
            return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        }
        plush__rigid_moved_bones(model, driven);
        for (size_t i = 0; i < model->bone_count; i++) {
            int32_t up = model->bones[i].parent;
            if (driven[i] && up >= 0 && (size_t)up < model->bone_count && driven[up])
                chained[i] = chained[up] = true;
        }
        for (size_t r = 0; r < b->binding->vertex_count; r++) {
            const plush_pmx_vertex *v = &model->vertices[b->vertices[r]];
            double on = 0, all = 0;
            for (int k = 0; k < 4; k++)
                if (v->bones[k] >= 0 && (size_t)v->bones[k] < model->bone_count && v->weights[k] > 0) {
                    all += v->weights[k];
                    on += chained[v->bones[k]] ? v->weights[k] : 0;
                }
            swung[r] = all > 0 ? (float)(on / all) : 0.0f;
        }
        so.point_swung = swung;
    }
    plush_status st = plush_proxy_binding_smooth(b->binding, mesh, points, (const uint32_t(*)[3])faces, n, &so, diag);
    free(swung);
    free(driven);
    free(chained);
    free(held);
    free(faces);
    return st;
}

/* A detailed piece bound to the cage pieces made of it. The nearest triangles of a vertex can belong to other
 * pieces of the cage than the one made of its own piece of the surface: where a bob's locks meet at the crown,
 * a small piece of the surface lies among the roots of several locks, each its own cage piece, and its vertices
 * took triangles of all of them. When the locks turn apart (their triangles' rotations 116 degrees apart at the
 * median, a made-up dance's frame 100) a blend of their motions shrinks what it carries, as a linear blend of
 * rotations that far apart does: that patch shrank to 37% of its area, every one of its faces past the surface
 * bar's squeeze. A cage --cage makes has its nodes at vertices of the surface (plush_cage_simplify), so each
 * cage piece knows the surface pieces it was made of; a surface piece (its faces and the rows sharing a rest
 * position joined) whose every row has some weight on those cage pieces keeps only that weight, renormalised
 * (the same rule over the whole piece: its weights stay continuous). Any other piece -- left out of the cage
 * as a detail, or bound to a proxy of another mesh (a model's own soft body), whose nodes lie at no row -- keeps
 * its weights. */
/* The surface pieces a cage piece holds, at most PART_PIECES; more, and it is taken as holding every piece. */
enum { PART_PIECES = 8 };
typedef struct part_pieces {
    uint32_t piece[PART_PIECES];
    uint8_t count;
    bool every;
} part_pieces;

static bool holds(const part_pieces *pp, uint32_t piece)
{
    if (!pp) /* a triangle of no part: no rule for it */
        return true;
    if (pp->every)
        return true;
    for (int j = 0; j < pp->count; j++)
        if (pp->piece[j] == piece)
            return true;
    return false;
}

static const part_pieces *part_of(const part_pieces *pp, const int32_t *tri_part, int32_t t)
{
    return tri_part[t] >= 0 ? &pp[tri_part[t]] : NULL;
}

static bool bind_to_own_pieces(plush_scene_binding *b, const float (*points)[3])
{
    const plush_pmx_model *model = b->model;
    plush_proxy_binding *bd = b->binding;
    size_t n = b->vertex_count, parts = b->proxy.part_count;
    if (n == 0 || parts < 2)
        return true;
    uint32_t *parent = malloc(n * sizeof *parent), *first_row = malloc(n * sizeof *first_row);
    int32_t *tri_part = malloc(b->proxy.triangle_count * sizeof *tri_part);
    part_pieces *pp = calloc(parts, sizeof *pp);
    double *own = malloc(n * sizeof *own); /* each row's weight on its own piece's cage pieces */
    uint8_t *foreign_only = calloc(n, 1);
    /* the rows' rest positions, then the cage nodes looked up among them */
    plush__weld at = {0};
    bool ok = parent && first_row && tri_part && pp && own && foreign_only &&
              plush__weld_init(&at, n + b->proxy.node_count);
    if (ok) {
        plush__uf_init(parent, n);
        for (size_t f = 0; 3 * f + 2 < model->index_count; f++) {
            int64_t r[3];
            for (int k = 0; k < 3; k++)
                r[k] = plush_scene_binding_row(b, model->indices[3 * f + k]);
            for (int k = 0; k < 2; k++)
                if (r[k] >= 0 && r[k + 1] >= 0)
                    plush__uf_union(parent, (uint32_t)r[k], (uint32_t)r[k + 1]);
        }
        for (size_t i = 0; i < n; i++) {
            bool added;
            uint32_t node = plush__weld_add(&at, points[i], &added);
            if (added)
                first_row[node] = (uint32_t)i;
            else
                plush__uf_union(parent, first_row[node], (uint32_t)i);
        }
        size_t row_nodes = at.count;
        for (size_t t = 0; t < b->proxy.triangle_count; t++)
            tri_part[t] = -1;
        for (size_t q = 0; q < parts; q++) {
            const plush_scene_proxy_part *part = &b->proxy.parts[q];
            for (size_t t = 0; t < part->mesh.triangle_count; t++)
                tri_part[part->first_triangle + t] = (int32_t)q;
            for (size_t k = 0; k < part->mesh.node_count; k++) {
                uint32_t node = plush__weld_add(&at, b->proxy.nodes[part->first_node + k], NULL);
                uint32_t piece = node < row_nodes ? plush__uf_find(parent, first_row[node]) : 0;
                if (node >= row_nodes || holds(&pp[q], piece))
                    continue;
                if (pp[q].count == PART_PIECES)
                    pp[q].every = true;
                else
                    pp[q].piece[pp[q].count++] = piece;
            }
        }
        /* a piece with a row that has no weight on its own cage pieces keeps its weights (marked at its root) */
        for (size_t i = 0; i < n; i++) {
            uint32_t piece = plush__uf_find(parent, (uint32_t)i);
            own[i] = 0;
            for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++)
                if (bd->triangles[i][k] >= 0 && holds(part_of(pp, tri_part, bd->triangles[i][k]), piece))
                    own[i] += bd->weights[i][k];
            if (!(own[i] > 0))
                foreign_only[piece] = 1;
        }
        for (size_t i = 0; i < n; i++) {
            uint32_t piece = plush__uf_find(parent, (uint32_t)i);
            if (foreign_only[piece])
                continue;
            int kept = 0;
            for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++) {
                int32_t t = bd->triangles[i][k];
                if (t < 0 || !holds(part_of(pp, tri_part, t), piece))
                    continue;
                bd->triangles[i][kept] = t, bd->weights[i][kept] = (float)(bd->weights[i][k] / own[i]);
                bd->distances[i][kept] = bd->distances[i][k];
                kept++;
            }
            for (int k = kept; k < PLUSH_PROXY_INFLUENCES; k++)
                bd->triangles[i][k] = -1, bd->weights[i][k] = 0, bd->distances[i][k] = 0;
        }
    }
    plush__weld_free(&at);
    free(parent), free(first_row), free(tri_part), free(pp), free(own), free(foreign_only);
    return ok;
}

static plush_status bind_rows(plush_scene_binding *b, const plush_scene_bind_options *options, plush_diag *diag)
{
    const plush_pmx_model *model = b->model;
    float(*points)[3] = plush_arena_array(&b->arena, b->vertex_count ? b->vertex_count : 1, sizeof *points);
    if (!points)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    for (size_t i = 0; i < b->vertex_count; i++)
        memcpy(points[i], model->vertices[b->vertices[i]].position, sizeof points[i]);
    /* The proxy module takes const arrays; the casts only add const. */
    plush_proxy_mesh mesh = {.nodes = (const float(*)[3])b->proxy.nodes, .node_count = b->proxy.node_count,
                             .triangles = (const uint32_t(*)[3])b->proxy.triangles,
                             .triangle_count = b->proxy.triangle_count};
    plush_status st = plush_proxy_bind(&mesh, (const float(*)[3])points, b->vertex_count,
                                       options ? &options->proxy : NULL, &b->binding, diag);
    if (st == PLUSH_OK && !b->binding->seed && !(options && options->rough))
        st = smooth_rows(b, &mesh, (const float(*)[3])points, options, diag);
    if (st != PLUSH_OK)
        return st;
    if (!b->binding->seed && !bind_to_own_pieces(b, (const float(*)[3])points))
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    b->computed = keep_computed(&b->arena, b->binding);
    return b->computed ? PLUSH_OK : plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
}

plush_status plush_scene_bind(const plush_pmx_model *model, const plush_scene_bind_options *options,
                              plush_scene_binding **out, plush_diag *diag)
{
    if (!out || !model)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no model or no place for the binding");
    *out = NULL;
    plush_status geometry = plush_pmx_require_geometry(model, diag);
    if (geometry != PLUSH_OK)
        return geometry;
    plush_scene_binding *b = calloc(1, sizeof *b);
    if (!b)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    b->model = model;
    plush_status st = plush_scene_proxy_build(model, &b->arena, &b->proxy, diag);
    if (st == PLUSH_OK && b->proxy.triangle_count == 0)
        st = plush_diag_fail(diag, PLUSH_E_NO_PROXY, -1, "soft body", -1,
                             "no usable TriMesh soft body to serve as the proxy (%zu soft bodies)",
                             model->soft_body_count);
    if (st == PLUSH_OK)
        st = plush_scene_bound_vertices(model, &b->proxy, options ? &options->bound : NULL, &b->arena, &b->vertices,
                                      &b->vertex_count, diag);
    if (st == PLUSH_OK)
        st = bind_rows(b, options, diag);
    if (st != PLUSH_OK) {
        plush_scene_binding_free(b);
        return st;
    }
    *out = b;
    return PLUSH_OK;
}

void plush_scene_binding_free(plush_scene_binding *binding)
{
    if (!binding)
        return;
    plush_proxy_binding_free(binding->binding);
    plush_arena_free(&binding->arena);
    free(binding);
}

int64_t plush_scene_binding_row(const plush_scene_binding *binding, uint32_t vertex)
{
    size_t lo = 0, hi = binding->vertex_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (binding->vertices[mid] < vertex)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < binding->vertex_count && binding->vertices[lo] == vertex ? (int64_t)lo : -1;
}

plush_status plush__scene_im2_materials(const plush_scene_binding *b, plush_arena *arena, scene_material_vertices **out,
                                 plush_diag *diag)
{
    const plush_pmx_model *model = b->model;
    scene_material_vertices *mv = plush_arena_array(arena, model->material_count ? model->material_count : 1,
                                                    sizeof *mv);
    if (!mv)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    for (size_t m = 0; m < model->material_count; m++) {
        if (b->proxy.soft_material[m])
            continue;
        plush_status st = plush_pmx_material_vertices(model, m, arena, &mv[m].vertices, &mv[m].count, diag);
        if (st != PLUSH_OK)
            return st;
        bool any = false;
        for (size_t k = 0; k < mv[m].count && !any; k++)
            any = plush_scene_binding_row(b, mv[m].vertices[k]) >= 0;
        if (!any)
            mv[m].count = 0;
    }
    *out = mv;
    return PLUSH_OK;
}

/* ---- export ---------------------------------------------------------------------------------- */

/* One vertex's line; false when it cannot have one (left to bones, but no bone). */
static bool export_entry(const plush_scene_binding *b, size_t row, int32_t local, plush_im2_entry *e)
{
    const plush_proxy_binding *bind = b->binding;
    const plush_pmx_model *model = b->model;
    *e = (plush_im2_entry){.vertex = local, .parent = -1, .method = PLUSH_IM2_ONESKIN, .offset = -1};
    if (bind->proxy_share[row] > 0) {
        int strongest = 0, used = 0;
        for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++) {
            if (bind->triangles[row][k] < 0)
                continue;
            used++;
            if (bind->weights[row][k] > bind->weights[row][strongest])
                strongest = k;
        }
        if (used > 0) {
            e->child = (int32_t)model->bone_count + bind->triangles[row][strongest];
            e->method = used == 1 ? PLUSH_IM2_NOSKIN : PLUSH_IM2_ONESKIN;
            return true;
        }
    }
    int32_t bone = strongest_bone(model, &model->vertices[b->vertices[row]]);
    if (bone < 0)
        return false;
    e->child = bone;
    e->parent = model->bones[bone].parent;
    return true;
}

static plush_status export_part(const plush_scene_binding *b, size_t m, const scene_material_vertices *mv,
                                plush_im2_map *map, plush_diag *diag)
{
    const plush_pmx_material *mat = &b->model->materials[m];
    plush_im2_part *part = &map->parts[map->part_count];
    part->name.s = plush_arena_strdup(&map->arena, mat->name.s ? mat->name.s : "", mat->name.len);
    part->name.len = mat->name.len;
    part->offset = -1;
    part->entries = plush_arena_array(&map->arena, mv->count, sizeof *part->entries);
    if (!part->name.s || !part->entries)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    for (size_t k = 0; k < mv->count; k++) {
        int64_t row = plush_scene_binding_row(b, mv->vertices[k]);
        if (row < 0)
            continue;
        if (export_entry(b, (size_t)row, (int32_t)k, &part->entries[part->entry_count]))
            part->entry_count++;
        else
            plush_diag_warn(diag, -1, "vertex", (int64_t)mv->vertices[k],
                            "stays on bone skinning but has no bone: left out of the influence map");
    }
    map->part_count++;
    return PLUSH_OK;
}

plush_status plush_scene_binding_to_im2(const plush_scene_binding *b, plush_im2_map **out, plush_diag *diag)
{
    if (!b || !out)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no binding or no place for the map");
    *out = NULL;
    const plush_pmx_model *model = b->model;
    if (model->bone_count > (size_t)INT32_MAX - b->proxy.triangle_count)
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, NULL, -1, "too many bones and proxy triangles to number");
    plush_im2_map *map = plush_im2_create();
    if (!map)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    plush_arena scratch = {0};
    scene_material_vertices *mv = NULL;
    plush_status st = plush__scene_im2_materials(b, &scratch, &mv, diag);
    if (st == PLUSH_OK) {
        map->parts = plush_arena_array(&map->arena, model->material_count ? model->material_count : 1,
                                       sizeof *map->parts);
        if (!map->parts)
            st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    for (size_t m = 0; st == PLUSH_OK && m < model->material_count; m++)
        if (mv[m].count)
            st = export_part(b, m, &mv[m], map, diag);
    plush_arena_free(&scratch);
    if (st != PLUSH_OK) {
        plush_im2_free(map);
        return st;
    }
    *out = map;
    return PLUSH_OK;
}
