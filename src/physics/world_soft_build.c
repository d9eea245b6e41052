/* PMX 2.1 soft bodies, building: the node mesh (welded TriMesh or Rope), pins and anchors with their
 * repairs, and every PMX field handed to Bullet through the bulletc ABI. */
#include "physics/world_soft_internal.h"
#include "plush/pmx_mesh.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* btSoftBody::eAeroModel::_ as Bullet 3.24 numbers it. Bullet added V_TwoSidedLiftDrag and
 * F_TwoSidedLiftDrag between the names the PMX notes list (V_Point, V_TwoSided, V_OneSided, F_TwoSided,
 * F_OneSided = 0..4), so the models are mapped by name. */
enum {
    BT_AERO_V_POINT = 0,
    BT_AERO_V_TWO_SIDED = 1,
    BT_AERO_V_ONE_SIDED = 3,
    BT_AERO_F_TWO_SIDED = 4,
    BT_AERO_F_ONE_SIDED = 6
};
static const int aero_by_pmx[5] = {BT_AERO_V_POINT, BT_AERO_V_TWO_SIDED, BT_AERO_V_ONE_SIDED, BT_AERO_F_TWO_SIDED,
                                   BT_AERO_F_ONE_SIDED};

/* btSoftBody::fCollision::_ bits. */
enum { BT_SDF_RS = 0x0001, BT_CL_RS = 0x0002, BT_VF_SS = 0x0010, BT_CL_SS = 0x0020 };

/* Bounds that keep a hostile file from hanging a step: Bullet runs each iteration count per fixed
 * step, and bending constraints beyond distance 2 run Floyd-Warshall over all node pairs (n^3). */
enum { SOFT_MAX_ITERATIONS = 1000, SOFT_FLOYD_MAX_NODES = 1500 };
/* Nodes the bending-pair searches of one large body may visit in all (about a second of work). */
#define SOFT_BENDING_BUDGET 100000000u

typedef struct soft_ctx {
    plush_world_model *wm;
    const plush_pmx_soft_body *sb;
    size_t index;
    const char *name;
    world_soft *s;
    plush_diag *diag;
    size_t pieces;                /* TriMesh: edge-connected pieces of its faces with area */
} soft_ctx;

static const char *soft_name(const plush_pmx_soft_body *sb)
{
    return sb->name.s ? sb->name.s : "";
}

static plush_status no_memory(soft_ctx *c)
{
    return plush_diag_fail(c->diag, PLUSH_E_NOMEM, -1, "soft body", (int64_t)c->index, "\"%s\": out of memory",
                           c->name);
}

static bool finite3(const float p[3])
{
    return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]);
}

/* ---- geometry ----------------------------------------------------------------------------------- */

static bool has_area(const float (*rest)[3], const uint32_t f[3])
{
    const float *a = rest[f[0]], *b = rest[f[1]], *d = rest[f[2]];
    double e[3], g[3];
    for (int k = 0; k < 3; k++) {
        e[k] = (double)b[k] - a[k];
        g[k] = (double)d[k] - a[k];
    }
    double x = e[1] * g[2] - e[2] * g[1], y = e[2] * g[0] - e[0] * g[2], z = e[0] * g[1] - e[1] * g[0];
    return x * x + y * y + z * z > 0;
}

typedef struct face_edge {
    uint32_t lo, hi, face;
} face_edge;

static int by_edge(const void *pa, const void *pb)
{
    const face_edge *a = pa, *b = pb;
    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    if (a->hi != b->hi)
        return a->hi < b->hi ? -1 : 1;
    return (a->face > b->face) - (a->face < b->face);
}

static uint32_t find_root(uint32_t *parent, uint32_t x)
{
    while (parent[x] != x)
        x = parent[x] = parent[parent[x]];
    return x;
}

/* How many pieces the faces with area make when faces sharing an edge are joined; 0 when out of memory.
 * With VF_SS collisions Bullet builds a face tree by merging edge-adjacent faces until one is left, so
 * for a body of several pieces it never finishes (btSoftBody::initializeFaceTree loops forever). */
static size_t face_pieces(const float (*rest)[3], const uint32_t (*tris)[3], size_t count)
{
    face_edge *edges = malloc((count ? count : 1) * 3 * sizeof *edges);
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
        if (!(used[t] = has_area(rest, tris[t])))
            continue;
        for (int k = 0; k < 3; k++) {
            uint32_t a = tris[t][k], b = tris[t][(k + 1) % 3];
            edges[n++] = (face_edge){a < b ? a : b, a < b ? b : a, (uint32_t)t};
        }
    }
    qsort(edges, n, sizeof *edges, by_edge);
    for (size_t i = 1; i < n; i++)
        if (edges[i].lo == edges[i - 1].lo && edges[i].hi == edges[i - 1].hi)
            parent[find_root(parent, edges[i].face)] = find_root(parent, edges[i - 1].face);
    for (size_t t = 0; t < count; t++)
        pieces += used[t] && find_root(parent, (uint32_t)t) == t;
    free(edges);
    free(parent);
    free(used);
    return pieces;
}

/* TriMesh: the material welded exactly as plush_pmx_weld (and so the proxy) numbers it. *usable false
 * means the body was reported and is to be skipped. */
static plush_status build_trimesh(soft_ctx *c, bool *usable)
{
    const plush_pmx_model *model = c->wm->model;
    plush_diag local = {.offset = -1, .index = -1};
    plush_pmx_welded_mesh mesh;
    plush_status st = plush_pmx_weld(model, (size_t)c->sb->material, &c->wm->arena, &mesh, &local);
    if (st == PLUSH_E_NOMEM)
        return no_memory(c);
    if (st != PLUSH_OK) {
        plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index, "\"%s\": material %ld: %s: skipped", c->name,
                        (long)c->sb->material, local.message);
        return PLUSH_OK;
    }
    if (mesh.triangle_count == 0 || !plush_pmx_welded_mesh_usable(&mesh)) {
        plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index,
                        "\"%s\": material %ld has %s: skipped", c->name, (long)c->sb->material,
                        mesh.triangle_count == 0 ? "no faces"
                                                 : "no triangle with area, or a non-finite position (degenerate)");
        return PLUSH_OK;
    }
    c->pieces = face_pieces((const float(*)[3])mesh.nodes, (const uint32_t(*)[3])mesh.triangles,
                            mesh.triangle_count);
    if (c->pieces == 0)
        return no_memory(c);
    world_soft *s = c->s;
    s->node_count = mesh.node_count;
    s->rest = mesh.nodes;
    s->node_vertex = mesh.node_vertex;
    s->vertex_node = mesh.vertex_node;
    s->triangle_count = mesh.triangle_count;
    s->triangles = mesh.triangles;
    *usable = true;
    return PLUSH_OK;
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
        return no_memory(c);
    if (st != PLUSH_OK) {
        plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index, "\"%s\": material %ld: %s: skipped", c->name,
                        (long)c->sb->material, local.message);
        return PLUSH_OK;
    }
    bool finite = true;
    for (size_t i = 0; i < n; i++)
        finite = finite && finite3(model->vertices[order[i]].position);
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
    s->vertex_node = plush_arena_array(a, model->vertex_count, sizeof *s->vertex_node);
    if (!s->rest || !s->node_vertex || !s->vertex_node)
        return no_memory(c);
    for (size_t v = 0; v < model->vertex_count; v++)
        s->vertex_node[v] = -1;
    for (size_t i = 0; i < n; i++) {
        memcpy(s->rest[i], model->vertices[order[i]].position, sizeof s->rest[i]);
        s->node_vertex[i] = (int32_t)order[i];
        s->vertex_node[order[i]] = (int32_t)i;
    }
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
    return s->vertex_node[vertex];
}

static plush_status resolve_pins(soft_ctx *c)
{
    const plush_pmx_model *model = c->wm->model;
    world_soft *s = c->s;
    s->pinned = plush_arena_array(&c->wm->arena, s->node_count, sizeof *s->pinned);
    s->pins = plush_arena_array(&c->wm->arena, c->sb->pin_count ? c->sb->pin_count : 1, sizeof *s->pins);
    if (!s->pinned || !s->pins)
        return no_memory(c);
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
        return no_memory(c);
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
        return no_memory(c);
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

/* ---- Bullet ------------------------------------------------------------------------------------- */

/* One k-value on its way to Bullet: non-finite gives Bullet's default, outside the range btSoftBody.h
 * documents it is clamped (Bullet's solvers overshoot and diverge there: a hardness of 11.5 moves a node
 * 11.5 times past its target every iteration). */
typedef struct soft_value {
    const char *name;
    float value, fallback, lo, hi;
    float *out;
} soft_value;

/* Writes each value, appending the names it repaired to list. */
static void apply_values(const soft_value *vals, size_t count, char *list, size_t cap)
{
    for (size_t i = 0; i < count; i++) {
        float x = vals[i].value;
        float y = !isfinite(x) ? vals[i].fallback : x < vals[i].lo ? vals[i].lo : x > vals[i].hi ? vals[i].hi : x;
        *vals[i].out = y;
        if (y != x) {
            size_t n = strlen(list);
            snprintf(list + n, cap - n, "%s%s %g->%g", n ? ", " : "", vals[i].name, (double)x, (double)y);
        }
    }
}

static int iterations(int32_t n, bool *repaired)
{
    if (n < 0 || n > SOFT_MAX_ITERATIONS) {
        *repaired = true;
        return n < 0 ? 0 : SOFT_MAX_ITERATIONS;
    }
    return (int)n;
}

static void fill_config(soft_ctx *c, bc_soft_config *out)
{
    const plush_pmx_soft_body *sb = c->sb;
    const plush_pmx_soft_config *k = &sb->config;
    memset(out, 0, sizeof *out);
    if (sb->aero_model >= 0 && sb->aero_model < 5) {
        out->aero_model = aero_by_pmx[sb->aero_model];
    } else {
        out->aero_model = BT_AERO_V_POINT;
        plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index,
                        "\"%s\": unknown aero model %ld: V_Point used", c->name, (long)sb->aero_model);
    }
    const float inf = INFINITY;
    const soft_value vals[] = {
        {"VCF", k->vcf, 1, -inf, inf, &out->kVCF},      {"DP", k->dp, 0, 0, 1, &out->kDP},
        {"DG", k->dg, 0, 0, inf, &out->kDG},            {"LF", k->lf, 0, 0, inf, &out->kLF},
        {"PR", k->pr, 0, -inf, inf, &out->kPR},         {"VC", k->vc, 0, 0, inf, &out->kVC},
        {"DF", k->df, 0.2f, 0, 1, &out->kDF},           {"MT", k->mt, 0, 0, 1, &out->kMT},
        {"CHR", k->chr, 1, 0, 1, &out->kCHR},           {"KHR", k->khr, 0.1f, 0, 1, &out->kKHR},
        {"SHR", k->shr, 1, 0, 1, &out->kSHR},           {"AHR", k->ahr, 0.7f, 0, 1, &out->kAHR},
        {"SRHR_CL", k->srhr_cl, 0.1f, 0, 1, &out->kSRHR_CL}, {"SKHR_CL", k->skhr_cl, 1, 0, 1, &out->kSKHR_CL},
        {"SSHR_CL", k->sshr_cl, 0.5f, 0, 1, &out->kSSHR_CL}, {"SR_SPLT_CL", k->sr_splt_cl, 0.5f, 0, 1, &out->kSR_SPLT_CL},
        {"SK_SPLT_CL", k->sk_splt_cl, 0.5f, 0, 1, &out->kSK_SPLT_CL},
        {"SS_SPLT_CL", k->ss_splt_cl, 0.5f, 0, 1, &out->kSS_SPLT_CL},
    };
    char list[PLUSH_DIAG_MESSAGE] = "";
    apply_values(vals, sizeof vals / sizeof vals[0], list, sizeof list);
    if (list[0])
        plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index,
                        "\"%s\": config outside Bullet's range, clamped: %s", c->name, list);
    bool repaired = false;
    out->viterations = iterations(sb->v_iterations, &repaired);
    out->piterations = iterations(sb->p_iterations, &repaired);
    out->diterations = iterations(sb->d_iterations, &repaired);
    out->citerations = iterations(sb->c_iterations, &repaired);
    if (repaired)
        plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index,
                        "\"%s\": iteration counts clamped to 0..%d", c->name, SOFT_MAX_ITERATIONS);
    bool clusters = (sb->flags & PLUSH_PMX_SOFT_CLUSTERS) != 0;
    out->collisions = clusters ? BT_CL_SS | BT_CL_RS : BT_SDF_RS | BT_VF_SS;
    if ((out->collisions & BT_VF_SS) && c->pieces > 1) {
        out->collisions &= ~BT_VF_SS;
        plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index,
                        "\"%s\": its faces are %zu separate pieces (not joined by edges); Bullet cannot build "
                        "self-collision (VF_SS) for that, so it is off (give each piece its own soft body, as "
                        "plush attach does)",
                        c->name, c->pieces);
    }
    out->margin = isfinite(sb->margin) && sb->margin >= 0 ? sb->margin : 0;
    if (out->margin != sb->margin)
        plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index, "\"%s\": margin %g replaced by 0", c->name,
                        (double)sb->margin);
}

/* The links in the order they are appended: a rope's nodes one after another; a TriMesh's every
 * triangle edge once, in face order (open addressing over (low, high) node pairs). *out is malloc'd. */
static bool collect_links(const world_soft *s, uint32_t (**out)[2], size_t *out_count)
{
    size_t max = s->rope ? (s->node_count ? s->node_count - 1 : 0) : 3 * s->triangle_count;
    uint32_t(*links)[2] = malloc((max ? max : 1) * sizeof *links);
    if (!links)
        return false;
    size_t n = 0;
    if (s->rope) {
        for (size_t i = 0; i + 1 < s->node_count; i++)
            links[n][0] = (uint32_t)i, links[n++][1] = (uint32_t)i + 1;
        *out = links;
        *out_count = n;
        return true;
    }
    size_t cap = 16;
    while (cap < 6 * s->triangle_count)
        cap *= 2;
    uint64_t *slots = calloc(cap, sizeof *slots); /* 0 = empty: a stored key always has low < high */
    if (!slots) {
        free(links);
        return false;
    }
    for (size_t t = 0; t < s->triangle_count; t++)
        for (int e = 0; e < 3; e++) {
            uint32_t a = s->triangles[t][e], b = s->triangles[t][(e + 1) % 3];
            if (a == b)
                continue;
            uint64_t key = a < b ? (uint64_t)a << 32 | b : (uint64_t)b << 32 | a;
            size_t h = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
            while (slots[h] && slots[h] != key)
                h = (h + 1) & (cap - 1);
            if (slots[h])
                continue;
            slots[h] = key;
            links[n][0] = a, links[n++][1] = b;
        }
    free(slots);
    *out = links;
    *out_count = n;
    return true;
}

static int by_u32(const void *pa, const void *pb)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    return (a > b) - (a < b);
}

/* Declared for the tests in tests/test_scene_direct.c, which hold it against Bullet's own generator.
 *
 * The node pairs btSoftBody::generateBendingConstraints(distance) links, in the order it appends them,
 * without its n*n table: every pair (i, j), i > j, whose shortest path over the links is exactly
 * `distance` links, ordered by j and then i; pair k is to be appended as appendLink(i, j) with
 * m_bbending set. Bullet finds the distances with its table (a two-step scan for distance 2,
 * Floyd-Warshall beyond); a breadth-first search from every node, cut at `distance`, finds the same
 * distances, since both are exact shortest path lengths. PLUSH_E_RANGE when the searches would
 * visit more than budget nodes in all (a hostile distance on a large body); PLUSH_E_NOMEM. *out is
 * malloc'd (the caller frees it), NULL when no pair is found. */
plush_status world_soft_bending_pairs(size_t node_count, const uint32_t (*links)[2], size_t link_count, int distance,
                                      uint64_t budget, uint32_t (**out)[2], size_t *out_count);
plush_status world_soft_bending_pairs(size_t node_count, const uint32_t (*links)[2], size_t link_count, int distance,
                                      uint64_t budget, uint32_t (**out)[2], size_t *out_count)
{
    *out = NULL;
    *out_count = 0;
    if (distance < 2 || node_count < 2)
        return PLUSH_OK;
    size_t n = node_count;
    size_t *first = calloc(n + 1, sizeof *first);
    uint32_t *adj = malloc((link_count ? 2 * link_count : 1) * sizeof *adj);
    uint32_t *stamp = calloc(n, sizeof *stamp), *queue = malloc(n * sizeof *queue);
    int *dist = malloc(n * sizeof *dist);
    uint32_t(*pairs)[2] = NULL, *found = malloc(n * sizeof *found);
    plush_status st = PLUSH_OK;
    size_t count = 0, cap = 0;
    if (!first || !adj || !stamp || !queue || !dist || !found) {
        st = PLUSH_E_NOMEM;
        goto done;
    }
    for (size_t k = 0; k < link_count; k++)
        first[links[k][0] + 1]++, first[links[k][1] + 1]++;
    for (size_t i = 0; i < n; i++)
        first[i + 1] += first[i];
    /* dist doubles as each node's fill cursor until the searches start */
    for (size_t i = 0; i < n; i++)
        dist[i] = 0;
    for (size_t k = 0; k < link_count; k++) {
        uint32_t a = links[k][0], b = links[k][1];
        adj[first[a] + (size_t)dist[a]++] = b;
        adj[first[b] + (size_t)dist[b]++] = a;
    }
    uint64_t visits = 0;
    for (size_t j = 0; j < n; j++) {
        size_t head = 0, tail = 0, nfound = 0;
        queue[tail++] = (uint32_t)j;
        stamp[j] = (uint32_t)j + 1;
        dist[j] = 0;
        while (head < tail) {
            uint32_t u = queue[head++];
            if (dist[u] == distance)
                continue;
            for (size_t e = first[u]; e < first[u + 1]; e++) {
                uint32_t v = adj[e];
                if (stamp[v] == (uint32_t)j + 1)
                    continue;
                stamp[v] = (uint32_t)j + 1;
                dist[v] = dist[u] + 1;
                queue[tail++] = v;
                if (dist[v] == distance && v > j)
                    found[nfound++] = v;
            }
        }
        visits += tail;
        if (visits > budget) {
            st = PLUSH_E_RANGE;
            goto done;
        }
        qsort(found, nfound, sizeof *found, by_u32);
        if (count + nfound > cap) {
            size_t grow = cap ? cap : 1024;
            while (grow < count + nfound)
                grow *= 2;
            void *p = realloc(pairs, grow * sizeof *pairs);
            if (!p) {
                st = PLUSH_E_NOMEM;
                goto done;
            }
            pairs = p;
            cap = grow;
        }
        for (size_t k = 0; k < nfound; k++)
            pairs[count][0] = found[k], pairs[count++][1] = (uint32_t)j;
    }
done:
    free(first);
    free(adj);
    free(stamp);
    free(queue);
    free(dist);
    free(found);
    if (st != PLUSH_OK) {
        free(pairs);
        return st;
    }
    *out = pairs;
    *out_count = count;
    return PLUSH_OK;
}

static void append_links(soft_ctx *c, const uint32_t (*links)[2], size_t count)
{
    const plush_bulletc_api *bc = c->wm->world->bc;
    for (size_t k = 0; k < count; k++)
        bc->soft_append_link(c->s->bc, links[k][0], links[k][1]);
}

/* Faces with area only: Bullet normalises face normals, and a zero one would turn into NaN. */
static void append_faces(soft_ctx *c)
{
    const plush_bulletc_api *bc = c->wm->world->bc;
    world_soft *s = c->s;
    for (size_t t = 0; t < s->triangle_count; t++) {
        const uint32_t *f = s->triangles[t];
        if (has_area((const float(*)[3])s->rest, f))
            bc->soft_append_face(s->bc, f[0], f[1], f[2]);
    }
}

/* Bending links at the B-link distance. Small bodies: Bullet's own generateBendingConstraints. Large ones
 * (more than SOFT_FLOYD_MAX_NODES nodes): its n*n table would not fit (60k nodes: 14 GB) and beyond
 * distance 2 its Floyd-Warshall is n^3, so plush finds the same pairs by breadth-first search and appends
 * them in Bullet's order, flagged as bending (world_soft_bending_pairs) -- the same links, the same
 * simulation. A distance whose searches would exceed SOFT_BENDING_BUDGET visits falls back to 2. */
static plush_status add_bending(soft_ctx *c, const uint32_t (*links)[2], size_t link_count)
{
    const plush_bulletc_api *bc = c->wm->world->bc;
    world_soft *s = c->s;
    int d = c->sb->blink_distance < 0 ? 0 : c->sb->blink_distance > INT32_MAX / 2 ? INT32_MAX / 2
                                                                                : (int)c->sb->blink_distance;
    if (s->node_count <= SOFT_FLOYD_MAX_NODES) {
        bc->soft_bending(s->bc, d);
        return PLUSH_OK;
    }
    for (;;) {
        uint32_t(*pairs)[2] = NULL;
        size_t count = 0;
        plush_status st = world_soft_bending_pairs(s->node_count, links, link_count, d, SOFT_BENDING_BUDGET, &pairs,
                                                   &count);
        if (st == PLUSH_E_NOMEM)
            return no_memory(c);
        if (st == PLUSH_OK) {
            for (size_t k = 0; k < count; k++)
                bc->soft_append_bending_link(s->bc, pairs[k][0], pairs[k][1]);
            free(pairs);
            return PLUSH_OK;
        }
        if (d <= 2) {
            plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index,
                            "\"%s\": bending links on %zu nodes would take too long to find: none made", c->name,
                            s->node_count);
            return PLUSH_OK;
        }
        plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index,
                        "\"%s\": B-link distance %d on %zu nodes would take too long to find: 2 used", c->name, d,
                        s->node_count);
        d = 2;
    }
}

static float total_mass(soft_ctx *c)
{
    float m = c->sb->total_mass;
    if (isfinite(m) && m > 0)
        return m;
    plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index, "\"%s\": total mass %g replaced by 1", c->name,
                    (double)m);
    return 1;
}

static plush_status create_bullet(soft_ctx *c)
{
    const plush_bulletc_api *bc = c->wm->world->bc;
    world_soft *s = c->s;
    const plush_pmx_soft_body *sb = c->sb;
    float *masses = malloc(s->node_count * sizeof *masses);
    if (!masses)
        return no_memory(c);
    size_t free_nodes = 0;
    for (size_t i = 0; i < s->node_count; i++) {
        masses[i] = s->pinned[i] ? 0.0f : 1.0f;
        free_nodes += !s->pinned[i];
    }
    bc_soft_desc desc = {
        .node_count = s->node_count,
        .positions = (const float(*)[3])s->rest,
        .masses = masses,
        .group = (int16_t)(uint16_t)(1u << (sb->group & 15)),
        .mask = (int16_t)sb->mask,
    };
    char err[BC_ERR] = "";
    s->bc = bc->soft_create(c->wm->world->bw, &desc, err);
    free(masses);
    if (!s->bc)
        return plush_diag_fail(c->diag, PLUSH_E_NOMEM, -1, "soft body", (int64_t)c->index,
                               "\"%s\": Bullet refused the soft body: %s", c->name, err[0] ? err : "no reason given");
    uint32_t(*links)[2] = NULL;
    size_t link_count = 0;
    if (!collect_links(s, &links, &link_count))
        return no_memory(c);
    append_links(c, (const uint32_t(*)[2])links, link_count);
    if (!s->rope)
        append_faces(c);
    float lst, ast, vst;
    const soft_value stiffness[] = {
        {"LST", sb->lst, 1, 0, 1, &lst}, {"AST", sb->ast, 1, 0, 1, &ast}, {"VST", sb->vst, 1, 0, 1, &vst}};
    char list[PLUSH_DIAG_MESSAGE] = "";
    apply_values(stiffness, 3, list, sizeof list);
    if (list[0])
        plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index,
                        "\"%s\": material stiffness outside 0..1, clamped: %s", c->name, list);
    bc->soft_set_material(s->bc, lst, ast, vst);
    plush_status st = PLUSH_OK;
    if (sb->flags & PLUSH_PMX_SOFT_BLINK)
        st = add_bending(c, (const uint32_t(*)[2])links, link_count);
    free(links);
    if (st != PLUSH_OK)
        return st;
    /* Before the clusters: generateClusters takes its cluster masses from the nodes. Pinned nodes keep
     * inverse mass 0; a body that is all pins has no mass to spread. */
    float mass = total_mass(c);
    if (free_nodes)
        bc->soft_set_total_mass(s->bc, mass);
    if (sb->flags & PLUSH_PMX_SOFT_CLUSTERS) {
        int32_t k = sb->cluster_count < 0 ? 0 : sb->cluster_count;
        bc->soft_clusters(s->bc, (size_t)k > s->node_count ? (int)s->node_count : (int)k);
    }
    if (sb->flags & PLUSH_PMX_SOFT_LINK_RANDOMIZE)
        bc->soft_randomize(s->bc);
    bc_soft_config config;
    fill_config(c, &config);
    bc->soft_set_config(s->bc, &config);
    /* kVC keeps the rest volume and kMT the rest shape: both need Bullet's pose taken at rest. */
    if (free_nodes && (config.kVC > 0 || config.kMT > 0))
        bc->soft_set_pose(s->bc, config.kVC > 0, config.kMT > 0);
    for (size_t k = 0; k < s->anchor_count; k++)
        bc->soft_append_anchor(s->bc, s->anchors[k].node, c->wm->bodies[s->anchors[k].body].bc);
    bc->soft_finish(s->bc);
    return PLUSH_OK;
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
        return no_memory(c);
    size_t vertex_count = c->wm->model->vertex_count;
    for (size_t v = 0; v < vertex_count; v++)
        s->member_count += s->vertex_node[v] >= 0;
    s->members = plush_arena_array(a, s->member_count ? s->member_count : 1, sizeof *s->members);
    if (!s->members)
        return no_memory(c);
    for (size_t v = 0, m = 0; v < vertex_count; v++)
        if (s->vertex_node[v] >= 0)
            s->members[m++] = (uint32_t)v;
    memcpy(s->x, s->rest, n * sizeof *s->x);
    world_soft_update_normals(s);
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
        st = create_bullet(&c);
    if (st != PLUSH_OK)
        return st;
    c.s->state = PLUSH_SOFT_ACTIVE;
    return PLUSH_OK;
}

plush_status world_soft_add(plush_world_model *wm, plush_diag *diag)
{
    size_t n = wm->model->soft_body_count;
    wm->soft = plush_arena_array(&wm->arena, n ? n : 1, sizeof *wm->soft);
    if (!wm->soft)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "soft body", -1, "out of memory");
    for (size_t i = 0; i < n; i++) {
        wm->soft[i].state = PLUSH_SOFT_SKIPPED;
        wm->soft[i].failed_step = -1;
    }
    for (size_t i = 0; i < n; i++) {
        plush_status st = add_one(wm, i, diag);
        if (st != PLUSH_OK)
            return st;
    }
    return PLUSH_OK;
}
