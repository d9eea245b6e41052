/* PMX 2.1 soft bodies, building: the node mesh (welded TriMesh or Rope), pins and anchors with their
 * repairs, and the per-step state; world_soft_bullet.c hands every PMX field to Bullet. */
#include "core/geom.h"
#include "core/common.h"
#include "physics/world_soft_internal.h"
#include "plush/pmx.h"
#include "plush/sys/core.h"
#include "plush/sys/pmx.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *soft_name(const plush_pmx_soft_body *sb)
{
    return sb->name.s ? sb->name.s : "";
}

/* ---- geometry ----------------------------------------------------------------------------------- */

/* How many pieces the faces with area make when faces sharing an edge are joined; 0 when out of memory.
 * With VF_SS collisions Bullet builds a face tree by merging edge-adjacent faces until one is left, so
 * for a body of several pieces it never finishes (btSoftBody::initializeFaceTree loops forever). */
static size_t face_pieces(const float (*rest)[3], const uint32_t (*tris)[3], size_t count)
{
    plush__edge *edges = malloc((count ? count : 1) * 3 * sizeof *edges);
    uint32_t *parent = malloc((count ? count : 1) * sizeof *parent);
    bool *used = calloc(count ? count : 1, 1);
    size_t n = 0, pieces = 0;
    if (!edges || !parent || !used) {
        free(edges);
        free(parent);
        free(used);
        return 0;
    }
    for (size_t t = 0; t < count; t++) {
        parent[t] = (uint32_t)t;
        if (!(used[t] = plush__world_soft_has_area(rest, tris[t])))
            continue;
        for (int k = 0; k < 3; k++) {
            uint32_t a = tris[t][k], b = tris[t][(k + 1) % 3];
            edges[n++] = (plush__edge){a < b ? a : b, a < b ? b : a, (uint32_t)t, 0};
        }
    }
    qsort(edges, n, sizeof *edges, plush__edge_order);
    for (size_t i = 1; i < n; i++)
        if (edges[i].lo == edges[i - 1].lo && edges[i].hi == edges[i - 1].hi)
            plush__uf_union(parent, edges[i].owner, edges[i - 1].owner);
    for (size_t t = 0; t < count; t++)
        pieces += used[t] && plush__uf_find(parent, (uint32_t)t) == t;
    free(edges);
    free(parent);
    free(used);
    return pieces;
}

/* The PMX vertices with a node (increasing) and their nodes, from a map over every vertex of the model
 * (vertex_node, -1 outside the body): what the body keeps instead of that map. */
static plush_status keep_members(soft_ctx *c, const int32_t *vertex_node)
{
    world_soft *s = c->s;
    size_t vertex_count = c->wm->model->vertex_count, count = 0;
    for (size_t v = 0; v < vertex_count; v++)
        count += vertex_node[v] >= 0;
    s->members = plush_arena_array(&c->wm->arena, count ? count : 1, sizeof *s->members);
    s->member_node = plush_arena_array(&c->wm->arena, count ? count : 1, sizeof *s->member_node);
    if (!s->members || !s->member_node)
        return PLUSH_E_NOMEM;
    s->member_count = 0;
    for (size_t v = 0; v < vertex_count; v++)
        if (vertex_node[v] >= 0) {
            s->members[s->member_count] = (uint32_t)v;
            s->member_node[s->member_count++] = vertex_node[v];
        }
    return PLUSH_OK;
}

/* TriMesh: the material welded exactly as plush_pmx_weld (and so the proxy) numbers it. *usable false
 * means the body was reported and is to be skipped. */
static plush_status build_trimesh(soft_ctx *c, bool *usable)
{
    const plush_pmx_model *model = c->wm->model;
    plush_diag local = {.offset = -1, .index = -1};
    plush_pmx_welded_mesh mesh;
    /* welded in a scratch arena: its vertex -> node map spans the whole model, and a model of many soft bodies
     * (a cage in thousands of pieces) must not keep one such map per body */
    plush_arena scratch = {0};
    plush_status st = plush_pmx_weld(model, (size_t)c->sb->material, &scratch, &mesh, &local);
    if (st == PLUSH_E_NOMEM) {
        plush_arena_free(&scratch);
        return world_soft_no_memory(c);
    }
    if (st != PLUSH_OK) {
        plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index, "\"%s\": material %ld: %s: skipped", c->name,
                        (long)c->sb->material, local.message);
        plush_arena_free(&scratch);
        return PLUSH_OK;
    }
    if (mesh.triangle_count == 0 || !plush_pmx_welded_mesh_usable(&mesh)) {
        plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index,
                        "\"%s\": material %ld has %s: skipped", c->name, (long)c->sb->material,
                        mesh.triangle_count == 0 ? "no faces"
                                                 : "no triangle with area, or a non-finite position (degenerate)");
        plush_arena_free(&scratch);
        return PLUSH_OK;
    }
    c->pieces = face_pieces((const float(*)[3])mesh.nodes, (const uint32_t(*)[3])mesh.triangles,
                            mesh.triangle_count);
    world_soft *s = c->s;
    plush_arena *a = &c->wm->arena;
    size_t n = mesh.node_count, t = mesh.triangle_count;
    s->rest = plush_arena_array(a, n, sizeof *s->rest);
    s->node_vertex = plush_arena_array(a, n, sizeof *s->node_vertex);
    s->triangles = plush_arena_array(a, t, sizeof *s->triangles);
    st = c->pieces && s->rest && s->node_vertex && s->triangles ? keep_members(c, mesh.vertex_node) : PLUSH_E_NOMEM;
    if (st == PLUSH_OK) {
        memcpy(s->rest, mesh.nodes, n * sizeof *s->rest);
        memcpy(s->node_vertex, mesh.node_vertex, n * sizeof *s->node_vertex);
        memcpy(s->triangles, mesh.triangles, t * sizeof *s->triangles);
        s->node_count = n;
        s->triangle_count = t;
        *usable = true;
    }
    plush_arena_free(&scratch);
    return st == PLUSH_OK ? st : world_soft_no_memory(c);
}

/* Rope: the material's distinct vertices in order of first use, unwelded. */
static plush_status build_rope(soft_ctx *c, bool *usable)
{
    const plush_pmx_model *model = c->wm->model;
    plush_diag local = {.offset = -1, .index = -1};
    uint32_t *order;
    size_t n;
    plush_status st = plush_pmx_material_vertices(model, (size_t)c->sb->material, &c->wm->arena, &order, &n, &local);
    if (st == PLUSH_E_NOMEM)
        return world_soft_no_memory(c);
    if (st != PLUSH_OK) {
        plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index, "\"%s\": material %ld: %s: skipped", c->name,
                        (long)c->sb->material, local.message);
        return PLUSH_OK;
    }
    bool finite = true;
    for (size_t i = 0; i < n; i++)
        finite = finite && plush__finite3(model->vertices[order[i]].position);
    if (n < 2 || !finite) {
        plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index, "\"%s\": rope on material %ld has %s: skipped",
                        c->name, (long)c->sb->material,
                        n < 2 ? "fewer than two vertices" : "a non-finite vertex position");
        return PLUSH_OK;
    }
    world_soft *s = c->s;
    plush_arena *a = &c->wm->arena;
    s->rest = plush_arena_array(a, n, sizeof *s->rest);
    s->node_vertex = plush_arena_array(a, n, sizeof *s->node_vertex);
    int32_t *vertex_node = malloc(model->vertex_count * sizeof *vertex_node); /* scratch, as in build_trimesh */
    if (!s->rest || !s->node_vertex || !vertex_node) {
        free(vertex_node);
        return world_soft_no_memory(c);
    }
    for (size_t v = 0; v < model->vertex_count; v++)
        vertex_node[v] = -1;
    for (size_t i = 0; i < n; i++) {
        memcpy(s->rest[i], model->vertices[order[i]].position, sizeof s->rest[i]);
        s->node_vertex[i] = (int32_t)order[i];
        vertex_node[order[i]] = (int32_t)i;
    }
    st = keep_members(c, vertex_node);
    free(vertex_node);
    if (st != PLUSH_OK)
        return world_soft_no_memory(c);
    s->node_count = n;
    s->rope = true;
    *usable = true;
    return PLUSH_OK;
}

/* ---- pins and anchors --------------------------------------------------------------------------- */

/* The node a PMX vertex landed in, or -1 when the vertex is not part of the soft body's material. */
static int64_t node_of(const world_soft *s, const plush_pmx_model *model, int32_t vertex)
{
    if (vertex < 0 || (size_t)vertex >= model->vertex_count)
        return -1;
    size_t lo = 0, hi = s->member_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->members[mid] < (uint32_t)vertex)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->member_count && s->members[lo] == (uint32_t)vertex ? s->member_node[lo] : -1;
}

static plush_status resolve_pins(soft_ctx *c)
{
    const plush_pmx_model *model = c->wm->model;
    world_soft *s = c->s;
    s->pinned = plush_arena_array(&c->wm->arena, s->node_count, sizeof *s->pinned);
    s->pins = plush_arena_array(&c->wm->arena, c->sb->pin_count ? c->sb->pin_count : 1, sizeof *s->pins);
    if (!s->pinned || !s->pins)
        return world_soft_no_memory(c);
    for (uint32_t k = 0; k < c->sb->pin_count; k++) {
        int32_t v = c->sb->pins[k];
        int64_t node = node_of(s, model, v);
        if (node < 0) {
            plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index,
                            "\"%s\": pin %lu names vertex %ld outside material %ld: dropped", c->name,
                            (unsigned long)k, (long)v, (long)c->sb->material);
            continue;
        }
        if (s->pinned[node])
            continue; /* two pinned vertices welded into one node: the first one leads it */
        s->pinned[node] = true;
        soft_pin *p = &s->pins[s->pin_count++];
        p->node = (uint32_t)node;
        p->vertex = v;
        memcpy(p->from, s->rest[node], sizeof p->from);
        memcpy(p->to, s->rest[node], sizeof p->to);
    }
    return PLUSH_OK;
}

/* local = R^T (p - t) for a column-major rigid transform m. */
static void to_local(const float m[16], const float p[3], float out[3])
{
    float d[3] = {p[0] - m[12], p[1] - m[13], p[2] - m[14]};
    for (int i = 0; i < 3; i++)
        out[i] = m[4 * i + 0] * d[0] + m[4 * i + 1] * d[1] + m[4 * i + 2] * d[2];
}

static int by_key(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Near-mode anchors on one simulated body move that body together (by their mean offset), so they are
 * kept grouped by body, in file order within a body: sorted on (body << 32 | anchor index). */
static plush_status near_dynamic_groups(soft_ctx *c)
{
    world_soft *s = c->s;
    const plush_pmx_model *model = c->wm->model;
    size_t cap = s->anchor_count ? s->anchor_count : 1;
    s->near_dynamic = plush_arena_array(&c->wm->arena, cap, sizeof *s->near_dynamic);
    uint64_t *keys = malloc(cap * sizeof *keys);
    if (!s->near_dynamic || !keys) {
        free(keys);
        return world_soft_no_memory(c);
    }
    size_t n = 0;
    for (size_t k = 0; k < s->anchor_count; k++)
        if (s->anchors[k].near_mode && model->rigid_bodies[s->anchors[k].body].mode == PLUSH_PMX_RIGID_PHYSICS)
            keys[n++] = (uint64_t)(uint32_t)s->anchors[k].body << 32 | (uint32_t)k;
    qsort(keys, n, sizeof *keys, by_key);
    for (size_t i = 0; i < n; i++)
        s->near_dynamic[i] = (uint32_t)keys[i];
    s->near_dynamic_count = n;
    free(keys);
    return PLUSH_OK;
}

static plush_status resolve_anchors(soft_ctx *c)
{
    const plush_pmx_model *model = c->wm->model;
    const plush_bulletc_api *bc = c->wm->world->bc;
    world_soft *s = c->s;
    s->anchors = plush_arena_array(&c->wm->arena, c->sb->anchor_count ? c->sb->anchor_count : 1, sizeof *s->anchors);
    bool *seen = calloc(s->node_count, sizeof *seen); /* counts anchored nodes once each */
    if (!s->anchors || !seen) {
        free(seen);
        return world_soft_no_memory(c);
    }
    for (uint32_t k = 0; k < c->sb->anchor_count; k++) {
        const plush_pmx_soft_anchor *a = &c->sb->anchors[k];
        int64_t node = node_of(s, model, a->vertex);
        bool body_ok = a->rigid_body >= 0 && (size_t)a->rigid_body < model->rigid_body_count &&
                       c->wm->bodies[a->rigid_body].bc;
        if (node < 0 || !body_ok) {
            if (node < 0)
                plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index,
                                "\"%s\": anchor %lu names vertex %ld outside material %ld: dropped", c->name,
                                (unsigned long)k, (long)a->vertex, (long)c->sb->material);
            else
                plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index,
                                "\"%s\": anchor %lu names rigid body %ld, which does not exist in the world: "
                                "dropped",
                                c->name, (unsigned long)k, (long)a->rigid_body);
            continue;
        }
        if (s->pinned[node]) {
            /* Bullet's anchor impulse divides by the node's mass, which a pin makes 0: the pin wins */
            plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index,
                            "\"%s\": anchor %lu is on vertex %ld, which is pinned: the pin wins, anchor dropped",
                            c->name, (unsigned long)k, (long)a->vertex);
            continue;
        }
        soft_anchor *out = &s->anchors[s->anchor_count++];
        out->node = (uint32_t)node;
        out->body = a->rigid_body;
        out->near_mode = a->near_mode != 0;
        float m[16];
        bc->body_get_transform(c->wm->bodies[a->rigid_body].bc, m);
        to_local(m, s->rest[node], out->local);
        s->anchored_nodes += !seen[node];
        seen[node] = true;
    }
    free(seen);
    return near_dynamic_groups(c);
}

/* The per-step state, sized once here so that stepping never allocates. */
static plush_status alloc_state(soft_ctx *c)
{
    world_soft *s = c->s;
    plush_arena *a = &c->wm->arena;
    size_t n = s->node_count;
    s->x = plush_arena_array(a, n, sizeof *s->x);
    s->v = plush_arena_array(a, n, sizeof *s->v);
    s->normals = plush_arena_array(a, n, sizeof *s->normals);
    s->scratch_x = plush_arena_array(a, n, sizeof *s->scratch_x);
    s->scratch_v = plush_arena_array(a, n, sizeof *s->scratch_v);
    if (!s->x || !s->v || !s->normals || !s->scratch_x || !s->scratch_v)
        return world_soft_no_memory(c);
    memcpy(s->x, s->rest, n * sizeof *s->x);
    plush__world_soft_update_normals(s);
    return PLUSH_OK;
}

static plush_status add_one(plush_world_model *wm, size_t i, plush_diag *diag)
{
    const plush_pmx_model *model = wm->model;
    const plush_pmx_soft_body *sb = &model->soft_bodies[i];
    soft_ctx c = {.wm = wm, .sb = sb, .index = i, .name = soft_name(sb), .s = &wm->soft[i], .diag = diag};
    c.s->state = PLUSH_SOFT_SKIPPED;
    c.s->failed_step = -1;
    if (sb->material < 0 || (size_t)sb->material >= model->material_count) {
        if (sb->material == -1)
            plush_diag_warn(diag, -1, "soft body", (int64_t)i, "\"%s\": no material (-1): skipped", c.name);
        else
            plush_diag_warn(diag, -1, "soft body", (int64_t)i, "\"%s\": material %ld out of range (%zu materials): "
                            "skipped", c.name, (long)sb->material, model->material_count);
        return PLUSH_OK;
    }
    const plush_pmx_soft_config *k = &sb->config;
    const float values[] = {sb->total_mass, sb->margin, sb->lst, sb->ast, sb->vst, k->vcf, k->dp, k->dg, k->lf,
                            k->pr, k->vc, k->df, k->mt, k->chr, k->khr, k->shr, k->ahr, k->srhr_cl, k->skhr_cl,
                            k->sshr_cl, k->sr_splt_cl, k->sk_splt_cl, k->ss_splt_cl};
    for (size_t v = 0; v < sizeof values / sizeof values[0]; v++)
        if (!isfinite(values[v])) {
            const plush_pmx_value_issue *q = plush_pmx_value_issue_find(model, "soft body", (int64_t)i);
            plush_diag_warn(diag, q ? q->offset : -1, "soft body", (int64_t)i, "\"%s\": %s; left out of the "
                            "simulation", c.name, q ? q->what : "a mass, margin, config or stiffness value is not finite");
            return PLUSH_OK;
        }
    if (sb->shape > PLUSH_PMX_SOFT_ROPE) {
        plush_diag_warn(diag, -1, "soft body", (int64_t)i, "\"%s\": unknown shape %u: skipped", c.name,
                        (unsigned)sb->shape);
        return PLUSH_OK;
    }
    bool usable = false;
    plush_status st = sb->shape == PLUSH_PMX_SOFT_TRIMESH ? build_trimesh(&c, &usable) : build_rope(&c, &usable);
    if (st != PLUSH_OK || !usable) {
        c.s->node_count = 0;
        c.s->triangle_count = 0;
        return st;
    }
    st = resolve_pins(&c);
    if (st == PLUSH_OK)
        st = resolve_anchors(&c);
    if (st == PLUSH_OK)
        st = alloc_state(&c);
    if (st == PLUSH_OK)
        st = plush__world_soft_create_bullet(&c);
    if (st == PLUSH_OK)
        st = plush__world_soft_collide_init(&c);
    if (st == PLUSH_OK)
        st = plush__world_soft_fold_init(&c);
    const plush_world_desc *wd = &wm->world->desc;
    if (st == PLUSH_OK && !c.s->rope && wd->cloth && i < wd->cloth_count && wd->cloth[i].on) {
        st = plush__world_soft_cloth_init(&c, &wd->cloth[i]);
        if (st == PLUSH_OK)
            wm->world->bc->soft_freeze(c.s->bc);
    }
    if (st != PLUSH_OK)
        return st;
    c.s->state = PLUSH_SOFT_ACTIVE;
    return PLUSH_OK;
}

plush_status plush__world_soft_add(plush_world_model *wm, plush_diag *diag)
{
    size_t n = wm->model->soft_body_count;
    wm->soft = plush_arena_array(&wm->arena, n ? n : 1, sizeof *wm->soft);
    if (!wm->soft)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "soft body", -1, "out of memory");
    for (size_t i = 0; i < n; i++) {
        wm->soft[i].state = PLUSH_SOFT_SKIPPED;
        wm->soft[i].failed_step = -1;
        wm->soft[i].carry_reach = -1;
        wm->soft[i].closed = -1;
    }
    for (size_t i = 0; i < n; i++) {
        plush_status st = add_one(wm, i, diag);
        if (st != PLUSH_OK)
            return st;
    }
    return PLUSH_OK;
}
