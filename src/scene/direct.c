/* Direct mode: the bound detailed vertices, welded, simulated as the soft body themselves -- the
 * expensive reference a proxy is measured against. The rules (faces, seams, pins, anchors, what mass and
 * pressure mean) are documented at plush_scene_direct_build in include/plush/scene.h. */
#include "core/geom.h"
#include "core/common.h"
#include "scene/internal.h"
#include "plush/sys/core.h"
#include "plush/sys/pmx.h"
#include "plush/sys/proxy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Seam search radius cap, in mean edge lengths: one huge triangle must not make the grid search all. */
#define SEAM_RADIUS_CAP 4.0f
/* The physics module's own cap on an iteration count. */
#define DIRECT_MAX_ITERATIONS 1000

typedef struct direct_part {
    size_t face_count;
    uint32_t *faces;              /* 3 PMX vertices per face, malloc'd */
    size_t seam_count;
    uint32_t (*seams)[2];         /* PMX vertex pairs, malloc'd */
    size_t material;              /* in the derived model; meaningful when face_count > 0 */
} direct_part;

typedef struct direct_ctx {
    const plush_scene_binding *b;
    const plush_pmx_model *src;
    plush_pmx_model *out;
    direct_part *parts;
    plush_pmx_vertex *vertices;   /* the derived model's copy (pinned vertices take the proxy's weights) */
    plush_scene_direct_stats *stats;
    plush_world_cloth *cloth;     /* per soft body of the derived model, or NULL: calibrate for Bullet */
    float hz;
    plush_diag *diag;
} direct_ctx;

static float dist2(const float a[3], const float b[3])
{
    float d0 = a[0] - b[0], d1 = a[1] - b[1], d2 = a[2] - b[2];
    return d0 * d0 + d1 * d1 + d2 * d2;
}

/* ---- faces --------------------------------------------------------------------------------------- */

/* The proxy part a bound vertex belongs to: that of its nearest triangle; -1 when it has none. */
static int32_t vertex_part(const plush_scene_binding *b, const int32_t *row, uint32_t v)
{
    int32_t r = row[v];
    if (r < 0)
        return -1;
    int32_t t = b->binding->triangles[r][0];
    if (t < 0)
        return -1;
    for (size_t k = 0; k < b->proxy.part_count; k++) {
        const plush_scene_proxy_part *p = &b->proxy.parts[k];
        if ((size_t)t >= p->first_triangle && (size_t)t < p->first_triangle + p->mesh.triangle_count)
            return (int32_t)k;
    }
    return -1;
}

/* Every face of a material no soft body owns whose vertices are all bound, to the part of its first
 * vertex that has a nearest triangle (part 0 when none has). */
static plush_status collect_faces(direct_ctx *c)
{
    const plush_scene_binding *b = c->b;
    const plush_pmx_model *m = c->src;
    size_t parts = b->proxy.part_count;
    int32_t *row = malloc((m->vertex_count ? m->vertex_count : 1) * sizeof *row);
    uint32_t *face_part = malloc((m->index_count / 3 + 1) * sizeof *face_part);
    if (!row || !face_part) {
        free(row);
        free(face_part);
        return plush__no_memory(c->diag);
    }
    for (size_t v = 0; v < m->vertex_count; v++)
        row[v] = -1;
    for (size_t i = 0; i < b->vertex_count; i++)
        row[b->vertices[i]] = (int32_t)i;
    size_t first = 0;
    for (size_t mat = 0; mat < m->material_count; mat++) {
        size_t count = (size_t)m->materials[mat].index_count;
        for (size_t i = first; i + 3 <= first + count && i + 3 <= m->index_count; i += 3) {
            const uint32_t *f = &m->indices[i];
            face_part[i / 3] = UINT32_MAX;
            if (b->proxy.soft_material[mat] || row[f[0]] < 0 || row[f[1]] < 0 || row[f[2]] < 0)
                continue;
            int32_t k = vertex_part(b, row, f[0]);
            k = k >= 0 ? k : vertex_part(b, row, f[1]);
            k = k >= 0 ? k : vertex_part(b, row, f[2]);
            face_part[i / 3] = (uint32_t)(k >= 0 ? k : 0);
            c->parts[face_part[i / 3]].face_count++;
        }
        first += count;
    }
    plush_status st = PLUSH_OK;
    for (size_t k = 0; k < parts && st == PLUSH_OK; k++) {
        c->parts[k].faces = malloc((c->parts[k].face_count ? c->parts[k].face_count : 1) * 3 * sizeof(uint32_t));
        if (!c->parts[k].faces)
            st = plush__no_memory(c->diag);
        c->parts[k].face_count = 0;
    }
    first = 0;
    for (size_t mat = 0; mat < m->material_count && st == PLUSH_OK; mat++) {
        size_t count = (size_t)m->materials[mat].index_count;
        for (size_t i = first; i + 3 <= first + count && i + 3 <= m->index_count; i += 3) {
            if (face_part[i / 3] == UINT32_MAX)
                continue;
            direct_part *p = &c->parts[face_part[i / 3]];
            memcpy(p->faces + 3 * p->face_count++, &m->indices[i], 3 * sizeof(uint32_t));
        }
        first += count;
    }
    free(row);
    free(face_part);
    return st;
}

/* ---- the derived model ---------------------------------------------------------------------------- */

/* Materials and indices: the source's, then per part with faces its faces and its seams (as degenerate
 * faces a, b, b). Called once before the seams are known and once after. */
static plush_status lay_out_faces(direct_ctx *c)
{
    const plush_pmx_model *m = c->src;
    plush_pmx_model *out = c->out;
    plush_arena *arena = plush_pmx_arena(out);
    size_t parts = c->b->proxy.part_count, used = 0, extra = 0;
    for (size_t k = 0; k < parts; k++) {
        used += c->parts[k].face_count > 0;
        extra += 3 * (c->parts[k].face_count + c->parts[k].seam_count);
    }
    if (extra > (size_t)INT32_MAX || m->index_count > SIZE_MAX / 2 - extra)
        return plush_diag_fail(c->diag, PLUSH_E_RANGE, -1, NULL, -1, "the detailed mesh is too large (%zu faces)",
                               extra / 3);
    plush_pmx_material *mats = plush_arena_array(arena, m->material_count + used, sizeof *mats);
    uint32_t *idx = plush_arena_array(arena, m->index_count + extra, sizeof *idx);
    if (!mats || !idx)
        return plush__no_memory(c->diag);
    memcpy(mats, m->materials, m->material_count * sizeof *mats);
    memcpy(idx, m->indices, m->index_count * sizeof *idx);
    size_t mat = m->material_count, at = m->index_count;
    for (size_t k = 0; k < parts; k++) {
        direct_part *p = &c->parts[k];
        if (!p->face_count)
            continue;
        const plush_pmx_soft_body *sb = &m->soft_bodies[c->b->proxy.parts[k].soft_body];
        plush_pmx_material *x = &mats[mat];
        memset(x, 0, sizeof *x);
        char name[160];
        snprintf(name, sizeof name, "direct %s", sb->name.s ? sb->name.s : "");
        x->name.s = plush_arena_strdup(arena, name, strlen(name));
        x->name.len = (uint32_t)strlen(name);
        if (!x->name.s)
            return plush__no_memory(c->diag);
        x->diffuse[0] = x->diffuse[1] = x->diffuse[2] = x->diffuse[3] = 1;
        x->texture = x->sphere_texture = x->toon = -1;
        x->index_count = (int32_t)(3 * (p->face_count + p->seam_count));
        memcpy(idx + at, p->faces, 3 * p->face_count * sizeof *idx);
        at += 3 * p->face_count;
        for (size_t s = 0; s < p->seam_count; s++) {
            idx[at++] = p->seams[s][0];
            idx[at++] = p->seams[s][1];
            idx[at++] = p->seams[s][1];
        }
        p->material = mat++;
    }
    out->materials = mats;
    out->material_count = mat;
    out->indices = idx;
    out->index_count = at;
    return PLUSH_OK;
}

/* ---- one part: pieces, seams, pins, anchors -------------------------------------------------------- */

typedef struct cell_node {
    uint64_t key;
    uint32_t node;
} cell_node;

static int by_key(const void *pa, const void *pb)
{
    const cell_node *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return (a->node > b->node) - (a->node < b->node);
}

static uint64_t cell_key(int64_t x, int64_t y, int64_t z)
{
    /* 21 bits per axis, offset so that every cell of a sane model is non-negative */
    const int64_t bias = 1 << 20, mask = (1 << 21) - 1;
    return (uint64_t)((x + bias) & mask) << 42 | (uint64_t)((y + bias) & mask) << 21 | (uint64_t)((z + bias) & mask);
}

/* The grid cell of coordinate x; far-out coordinates share the outermost cells (no overflowing casts). */
static int64_t cell_of(float x, float h)
{
    float c = floorf(x / h);
    const float lim = (float)(1 << 20);
    return (int64_t)(c < -lim ? -lim : c > lim ? lim : c);
}

/* First entry of the sorted grid with this key, or count. */
static size_t grid_find(const cell_node *grid, size_t count, uint64_t key)
{
    size_t lo = 0, hi = count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (grid[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

typedef struct part_work {
    plush_pmx_welded_mesh mesh;
    float *reach;                 /* per node: mean length of its edges (its seam search radius) */
    uint32_t *piece;              /* per node: union-find parent over edges (and seams) */
    int32_t *hold_node;           /* per detailed node: the proxy node whose pin/anchor it takes, -1 */
} part_work;

/* Mean incident edge length per node, and the pieces the edges make. */
static void edges_and_pieces(part_work *w, uint32_t *degree)
{
    const plush_pmx_welded_mesh *mesh = &w->mesh;
    for (size_t i = 0; i < mesh->node_count; i++)
        w->piece[i] = (uint32_t)i;
    /* every face edge once per face: a shared edge counts twice on both ends, which leaves the mean alone */
    for (size_t t = 0; t < mesh->triangle_count; t++)
        for (int e = 0; e < 3; e++) {
            uint32_t a = mesh->triangles[t][e], b = mesh->triangles[t][(e + 1) % 3];
            if (a == b)
                continue;
            float len = sqrtf(dist2(mesh->nodes[a], mesh->nodes[b]));
            w->reach[a] += len, w->reach[b] += len;
            degree[a]++, degree[b]++;
            plush__uf_union(w->piece, a, b);
        }
    for (size_t i = 0; i < mesh->node_count; i++)
        w->reach[i] = degree[i] ? w->reach[i] / (float)degree[i] : 0;
}

static int by_key_pair(const void *pa, const void *pb)
{
    const uint32_t *a = pa, *b = pb;
    if (a[0] != b[0])
        return a[0] < b[0] ? -1 : 1;
    return (a[1] > b[1]) - (a[1] < b[1]);
}

/* One seam link per node to the nearest node of another piece within its reach (PMX vertex pairs,
 * each pair once). */
static plush_status sew(direct_ctx *c, direct_part *p, part_work *w)
{
    const plush_pmx_welded_mesh *mesh = &w->mesh;
    size_t n = mesh->node_count;
    double sum = 0;
    size_t with = 0;
    for (size_t i = 0; i < n; i++)
        if (w->reach[i] > 0)
            sum += w->reach[i], with++;
    if (!with)
        return PLUSH_OK;
    float h = (float)(sum / (double)with), cap = SEAM_RADIUS_CAP * h;
    cell_node *grid = malloc(n * sizeof *grid);
    uint32_t(*pairs)[2] = malloc(n * sizeof *pairs);
    if (!grid || !pairs) {
        free(grid);
        free(pairs);
        return plush__no_memory(c->diag);
    }
    for (size_t i = 0; i < n; i++) {
        const float *x = mesh->nodes[i];
        grid[i] = (cell_node){cell_key(cell_of(x[0], h), cell_of(x[1], h), cell_of(x[2], h)), (uint32_t)i};
    }
    qsort(grid, n, sizeof *grid, by_key);
    size_t count = 0;
    for (size_t a = 0; a < n; a++) {
        float r = w->reach[a] < cap ? w->reach[a] : cap;
        if (!(r > 0))
            continue;
        const float *x = mesh->nodes[a];
        int64_t cx = cell_of(x[0], h), cy = cell_of(x[1], h), cz = cell_of(x[2], h);
        int64_t span = (int64_t)ceilf(r / h);
        uint32_t pa = plush__uf_find(w->piece, (uint32_t)a);
        float best = r * r;
        int64_t best_node = -1;
        for (int64_t dx = -span; dx <= span; dx++)
            for (int64_t dy = -span; dy <= span; dy++)
                for (int64_t dz = -span; dz <= span; dz++) {
                    uint64_t key = cell_key(cx + dx, cy + dy, cz + dz);
                    for (size_t g = grid_find(grid, n, key); g < n && grid[g].key == key; g++) {
                        uint32_t b = grid[g].node;
                        float d = dist2(x, mesh->nodes[b]);
                        /* ties to the lower node: the same seams whatever the scan order */
                        if (plush__uf_find(w->piece, b) != pa && (d < best || (d == best && (int64_t)b < best_node))) {
                            best = d;
                            best_node = b;
                        }
                    }
                }
        if (best_node >= 0) {
            uint32_t lo = (uint32_t)(a < (size_t)best_node ? a : (size_t)best_node);
            uint32_t hi = (uint32_t)(a < (size_t)best_node ? (size_t)best_node : a);
            pairs[count][0] = lo, pairs[count++][1] = hi;
        }
    }
    free(grid);
    /* each pair once, in node order */
    qsort(pairs, count, sizeof *pairs, by_key_pair);
    size_t unique = 0;
    for (size_t i = 0; i < count; i++)
        if (!unique || pairs[i][0] != pairs[unique - 1][0] || pairs[i][1] != pairs[unique - 1][1])
            pairs[unique][0] = pairs[i][0], pairs[unique++][1] = pairs[i][1];
    p->seams = malloc((unique ? unique : 1) * sizeof *p->seams);
    if (!p->seams) {
        free(pairs);
        return plush__no_memory(c->diag);
    }
    for (size_t i = 0; i < unique; i++) {
        p->seams[i][0] = (uint32_t)mesh->node_vertex[pairs[i][0]];
        p->seams[i][1] = (uint32_t)mesh->node_vertex[pairs[i][1]];
    }
    p->seam_count = unique;
    c->stats->seam_links += unique;
    free(pairs);
    return PLUSH_OK;
}

enum { HOLD_PIN = 1, HOLD_ANCHOR = 2 };

/* Per proxy node of the part: HOLD_* bits from the soft body's pins and anchors (those on its
 * material; the world warns about the rest), its longest edge, and whether it is a corner of a triangle
 * whose three nodes are held (patch); per proxy triangle, whether it is one (held_triangle). */
static void proxy_holds(const plush_pmx_soft_body *sb, const plush_pmx_welded_mesh *pm, uint8_t *hold,
                                float *longest, bool *patch, bool *held_triangle)
{
    for (uint32_t i = 0; i < sb->pin_count; i++) {
        int32_t v = sb->pins[i];
        if (v >= 0 && (size_t)v < pm->vertex_count && pm->vertex_node[v] >= 0)
            hold[pm->vertex_node[v]] |= HOLD_PIN;
    }
    for (uint32_t i = 0; i < sb->anchor_count; i++) {
        int32_t v = sb->anchors[i].vertex;
        if (v >= 0 && (size_t)v < pm->vertex_count && pm->vertex_node[v] >= 0)
            hold[pm->vertex_node[v]] |= HOLD_ANCHOR;
    }
    for (size_t t = 0; t < pm->triangle_count; t++)
        for (int e = 0; e < 3; e++) {
            uint32_t a = pm->triangles[t][e], b = pm->triangles[t][(e + 1) % 3];
            float len = sqrtf(dist2(pm->nodes[a], pm->nodes[b]));
            longest[a] = len > longest[a] ? len : longest[a];
            longest[b] = len > longest[b] ? len : longest[b];
        }
    for (size_t t = 0; t < pm->triangle_count; t++) {
        const uint32_t *f = pm->triangles[t];
        held_triangle[t] = hold[f[0]] && hold[f[1]] && hold[f[2]];
        for (int e = 0; e < 3 && held_triangle[t]; e++)
            patch[f[e]] = true;
    }
}

/* The nearest proxy node to x (ties to the lower index). */
static size_t nearest_proxy_node(const plush_pmx_welded_mesh *pm, const float x[3])
{
    size_t best = 0;
    float bd = INFINITY;
    for (size_t q = 0; q < pm->node_count; q++) {
        float d = dist2(x, pm->nodes[q]);
        if (d < bd)
            bd = d, best = q;
    }
    return best;
}

/* The nearest proxy triangle to x (ties to the lower index). */
static size_t nearest_proxy_triangle(const plush_pmx_welded_mesh *pm, const float x[3])
{
    size_t best = 0;
    float bd = INFINITY;
    for (size_t t = 0; t < pm->triangle_count; t++) {
        const uint32_t *f = pm->triangles[t];
        float d = plush_proxy_point_triangle_distance(x, pm->nodes[f[0]], pm->nodes[f[1]], pm->nodes[f[2]]);
        if (d < bd)
            bd = d, best = t;
    }
    return best;
}

/* Which detailed nodes take a pinned or anchored proxy node's hold (w->hold_node). held lists the held
 * proxy nodes (held_count of them); patch[q] says that q is a corner of a proxy triangle whose three
 * nodes are held, and held_triangle[t] that triangle t is one. */
static void choose_holders(const plush_pmx_welded_mesh *pm, const uint8_t *hold, const float *longest,
                           const uint32_t *held, size_t held_count, const bool *patch, const bool *held_triangle,
                           part_work *w)
{
    const plush_pmx_welded_mesh *mesh = &w->mesh;
    for (size_t a = 0; a < mesh->node_count; a++) {
        w->hold_node[a] = -1;
        bool near = false;
        for (size_t i = 0; i < held_count && !near; i++)
            near = dist2(mesh->nodes[a], pm->nodes[held[i]]) <= longest[held[i]] * longest[held[i]];
        if (!near)
            continue;
        size_t q = nearest_proxy_node(pm, mesh->nodes[a]);
        if (!hold[q] || dist2(mesh->nodes[a], pm->nodes[q]) > longest[q] * longest[q])
            continue;
        /* where the cage is held over whole triangles, only the surface under them is: a link from a held
         * node to a free one stretches in the proxy, so the detailed surface under it stays free */
        if (patch[q] && !held_triangle[nearest_proxy_triangle(pm, mesh->nodes[a])])
            continue;
        w->hold_node[a] = (int32_t)q;
    }
    /* a held proxy node no detailed node chose: its nearest free detailed node takes it */
    for (size_t i = 0; i < held_count; i++) {
        int32_t q = (int32_t)held[i];
        bool taken = false;
        for (size_t a = 0; a < mesh->node_count && !taken; a++)
            taken = w->hold_node[a] == q;
        size_t best = 0;
        float bd = INFINITY;
        for (size_t a = 0; a < mesh->node_count && !taken; a++) {
            float d = dist2(mesh->nodes[a], pm->nodes[q]);
            if (d < bd && w->hold_node[a] < 0)
                bd = d, best = a;
        }
        if (!taken && bd < INFINITY)
            w->hold_node[best] = q;
    }
}

/* The direct soft body's pins and anchors from the holders; pinned vertices take the proxy pin's weights. */
static plush_status write_holds(direct_ctx *c, size_t k, const uint8_t *hold, part_work *w, plush_pmx_soft_body *dsb)
{
    const plush_scene_proxy_part *part = &c->b->proxy.parts[k];
    const plush_pmx_welded_mesh *pm = &part->mesh, *mesh = &w->mesh;
    const plush_pmx_soft_body *sb = &c->src->soft_bodies[part->soft_body];
    plush_arena *arena = plush_pmx_arena(c->out);
    size_t pins = 0, anchors = 0;
    for (size_t a = 0; a < mesh->node_count; a++) {
        int32_t q = w->hold_node[a];
        if (q < 0)
            continue;
        pins += (hold[q] & HOLD_PIN) != 0;
        for (uint32_t i = 0; i < sb->anchor_count; i++) {
            int32_t v = sb->anchors[i].vertex;
            anchors += v >= 0 && (size_t)v < pm->vertex_count && pm->vertex_node[v] == q;
        }
        c->stats->pinned_nodes += (hold[q] & HOLD_PIN) != 0;
        c->stats->anchored_nodes += (hold[q] & HOLD_ANCHOR) != 0;
    }
    if (pins > UINT32_MAX || anchors > UINT32_MAX)
        return plush_diag_fail(c->diag, PLUSH_E_RANGE, -1, "soft body", part->soft_body, "too many pins");
    dsb->pins = plush_arena_array(arena, pins ? pins : 1, sizeof *dsb->pins);
    dsb->anchors = plush_arena_array(arena, anchors ? anchors : 1, sizeof *dsb->anchors);
    if (!dsb->pins || !dsb->anchors)
        return plush__no_memory(c->diag);
    dsb->pin_count = dsb->anchor_count = 0;
    for (size_t a = 0; a < mesh->node_count; a++) {
        int32_t q = w->hold_node[a];
        if (q < 0)
            continue;
        if (hold[q] & HOLD_PIN)
            dsb->pins[dsb->pin_count++] = mesh->node_vertex[a];
        for (uint32_t i = 0; i < sb->anchor_count; i++) {
            int32_t v = sb->anchors[i].vertex;
            if (v >= 0 && (size_t)v < pm->vertex_count && pm->vertex_node[v] == q)
                dsb->anchors[dsb->anchor_count++] =
                    (plush_pmx_soft_anchor){sb->anchors[i].rigid_body, mesh->node_vertex[a], sb->anchors[i].near_mode};
        }
    }
    /* every PMX vertex welded into a pinned node follows the bones the proxy's pin follows */
    for (size_t v = 0; v < mesh->vertex_count; v++) {
        int32_t a = mesh->vertex_node[v];
        int32_t q = a >= 0 ? w->hold_node[a] : -1;
        if (q < 0 || !(hold[q] & HOLD_PIN))
            continue;
        const plush_pmx_vertex *from = &c->src->vertices[pm->node_vertex[q]];
        plush_pmx_vertex *to = &c->vertices[v];
        memcpy(to->bones, from->bones, sizeof to->bones);
        memcpy(to->weights, from->weights, sizeof to->weights);
        to->weight_type = from->weight_type;
        to->sdef = from->sdef;
    }
    return PLUSH_OK;
}

/* Pieces after sewing (w->piece holds each node's root) that hold to nothing, in a body that holds
 * somewhere. held is scratch, one per node. */
static size_t loose_pieces(const part_work *w, const plush_pmx_soft_body *dsb, bool *held)
{
    const plush_pmx_welded_mesh *mesh = &w->mesh;
    if (!dsb->pin_count && !dsb->anchor_count)
        return 0;
    for (size_t a = 0; a < mesh->node_count; a++)
        if (w->hold_node[a] >= 0)
            held[w->piece[a]] = true;
    size_t loose = 0;
    for (size_t a = 0; a < mesh->node_count; a++)
        loose += w->piece[a] == a && !held[a];
    return loose;
}

/* Area and enclosed volume (|sum of signed tetrahedra|, every piece) of a mesh's faces. */
static void area_volume(const plush_pmx_welded_mesh *mesh, double *area, double *volume)
{
    double a = 0, v = 0;
    for (size_t t = 0; t < mesh->triangle_count; t++) {
        const float *p = mesh->nodes[mesh->triangles[t][0]], *q = mesh->nodes[mesh->triangles[t][1]],
                    *r = mesh->nodes[mesh->triangles[t][2]];
        double u[3] = {q[0] - p[0], q[1] - p[1], q[2] - p[2]}, w[3] = {r[0] - p[0], r[1] - p[1], r[2] - p[2]};
        double n[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
        a += sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]) / 2;
        v += (p[0] * n[0] + p[1] * n[1] + p[2] * n[2]) / 6;
    }
    *area = a;
    *volume = fabs(v);
}

/* The direct body's material made the proxy's (see plush_scene_direct_build): per-step link stiffness the
 * proxy reaches, LST_eff = 1 - (1 - LST)^P, given to every sweep, and sweeps scaled by the ratio of the
 * meshes' mean edge lengths so that a correction crosses the body in as many steps as on the cage; the
 * pressure scaled so that a node gets the proxy's pressure acceleration (kPR x node area / volume / node
 * mass: at equal kPR and total mass that goes with area / volume, larger on the detailed pieces). */
static void calibrate(direct_ctx *c, const plush_pmx_welded_mesh *pm, const plush_pmx_welded_mesh *mesh,
                      plush_pmx_soft_body *dsb)
{
    double dp = plush__mean_edge(&(pm)->nodes[0][0], sizeof (pm)->nodes[0], &(pm)->triangles[0][0], 3 * (pm)->triangle_count), dd = plush__mean_edge(&(mesh)->nodes[0][0], sizeof (mesh)->nodes[0], &(mesh)->triangles[0][0], 3 * (mesh)->triangle_count);
    double scale = dp > 0 && dd > 0 && dp > dd ? dp / dd : 1;
    int32_t p = dsb->p_iterations > 0 ? dsb->p_iterations : 1;
    double lst = dsb->lst >= 0 && dsb->lst <= 1 ? (double)dsb->lst : 1;
    double piter = ceil((double)p * scale);
    dsb->p_iterations = (int32_t)(piter > DIRECT_MAX_ITERATIONS ? DIRECT_MAX_ITERATIONS : piter);
    dsb->lst = (float)(1 - pow(1 - lst, (double)p));
    double ap, vp, ad, vd;
    area_volume(pm, &ap, &vp);
    area_volume(mesh, &ad, &vd);
    if (ap > 0 && vp > 0 && ad > 0 && vd > 0)
        dsb->config.pr = (float)((double)dsb->config.pr * (ap / vp) / (ad / vd) / scale);
    c->stats->resolution = c->stats->resolution > scale ? c->stats->resolution : scale;
    c->stats->p_iterations = c->stats->p_iterations > dsb->p_iterations ? c->stats->p_iterations : dsb->p_iterations;
    c->stats->lst = dsb->lst;
    c->stats->pressure = dsb->config.pr;
}

/* The cloth the proxy is, in physical units (plush_world_cloth), for a solver whose result does not depend
 * on the resolution:
 * - stretch: Bullet's P position sweeps a step carry a correction P links across the cage, so the proxy's
 *   stretch waves travel c = P L / dt (L its mean edge); a sheet whose waves travel so fast has the modulus
 *   E = rho c^2, rho its areal density (total mass over its area);
 * - bending: the proxy cannot bend within one of its faces, so the cloth it stands for bends over about
 *   its edge: the bending length is the proxy's mean edge. */
static void cloth_of_proxy(const direct_ctx *c, const plush_pmx_welded_mesh *pm, const plush_pmx_soft_body *sb,
                           plush_world_cloth *out)
{
    double edge = plush__mean_edge(&pm->nodes[0][0], sizeof pm->nodes[0], &pm->triangles[0][0], 3 * pm->triangle_count);
    double area, volume;
    area_volume(pm, &area, &volume);
    int32_t p = sb->p_iterations > 0 ? sb->p_iterations : 1;
    double hz = c->hz > 0 ? c->hz : PLUSH_WORLD_DEFAULT_HZ;
    double mass = isfinite(sb->total_mass) && sb->total_mass > 0 ? sb->total_mass : 1;
    double speed = (double)p * edge * hz, density = area > 0 ? mass / area : 0;
    out->on = true;
    out->stretch = (float)(density * speed * speed);
    out->bending_length = (float)edge;
    /* In time as in space, the cage's resolution: substeps such that the stretch wave, which crosses P cage
     * edges a fixed step, crosses one a substep (the default 8 at fewer iterations). On the skirt of
     * docs/compare.md, 4x its detail, 8 substeps were not converged in time (direct/4 0.37 from it over 70
     * frames; 0.106 at 16, 0.104 at 24, 0.118 at 64 substeps). */
    out->substeps = p > 8 ? (int)p : 0;
    /* the proxy's shape memory, a pull per unit mass: the same at any resolution */
    out->shape_k = isfinite(sb->config.mt) && sb->config.mt > 0 && sb->config.mt <= 1 ? sb->config.mt : 0.0f;
    c->stats->cloth = true;
    c->stats->stretch = out->stretch;
    c->stats->bending_length = out->bending_length;
}

static plush_status build_part(direct_ctx *c, size_t k, plush_pmx_soft_body *dsb)
{
    direct_part *p = &c->parts[k];
    const plush_scene_proxy_part *part = &c->b->proxy.parts[k];
    const plush_pmx_welded_mesh *pm = &part->mesh;
    plush_arena tmp = {0};
    part_work w = {0};
    plush_diag local = {.offset = -1, .index = -1};
    plush_status st = plush_pmx_weld(c->out, p->material, &tmp, &w.mesh, &local);
    if (st != PLUSH_OK) {
        plush_arena_free(&tmp);
        return st == PLUSH_E_NOMEM ? plush__no_memory(c->diag)
                                   : plush_diag_fail(c->diag, st, -1, "soft body", part->soft_body, "%s", local.message);
    }
    size_t n = w.mesh.node_count;
    w.reach = plush_arena_array(&tmp, n ? n : 1, sizeof *w.reach);
    w.piece = plush_arena_array(&tmp, n ? n : 1, sizeof *w.piece);
    w.hold_node = plush_arena_array(&tmp, n ? n : 1, sizeof *w.hold_node);
    uint32_t *degree = plush_arena_array(&tmp, n ? n : 1, sizeof *degree);
    uint8_t *hold = plush_arena_array(&tmp, pm->node_count ? pm->node_count : 1, sizeof *hold);
    float *longest = plush_arena_array(&tmp, pm->node_count ? pm->node_count : 1, sizeof *longest);
    uint32_t *held = plush_arena_array(&tmp, pm->node_count ? pm->node_count : 1, sizeof *held);
    bool *patch = plush_arena_array(&tmp, pm->node_count ? pm->node_count : 1, sizeof *patch);
    bool *held_triangle = plush_arena_array(&tmp, pm->triangle_count ? pm->triangle_count : 1, sizeof *held_triangle);
    bool *scratch = plush_arena_array(&tmp, n ? n : 1, sizeof *scratch);
    if (!w.reach || !w.piece || !w.hold_node || !degree || !hold || !longest || !held || !patch || !held_triangle ||
        !scratch) {
        plush_arena_free(&tmp);
        return plush__no_memory(c->diag);
    }
    edges_and_pieces(&w, degree);
    size_t pieces = 0;
    for (size_t a = 0; a < n; a++)
        pieces += plush__uf_find(w.piece, (uint32_t)a) == a;
    c->stats->nodes += n;
    c->stats->pieces += pieces;
    if (pieces > 1)
        st = sew(c, p, &w);
    /* the seams join pieces: node numbers of their ends through the weld */
    for (size_t s = 0; st == PLUSH_OK && s < p->seam_count; s++)
        plush__uf_union(w.piece, (uint32_t)w.mesh.vertex_node[p->seams[s][0]],
                        (uint32_t)w.mesh.vertex_node[p->seams[s][1]]);
    for (size_t a = 0; st == PLUSH_OK && a < n; a++)
        w.piece[a] = plush__uf_find(w.piece, (uint32_t)a);
    if (st == PLUSH_OK) {
        proxy_holds(&c->src->soft_bodies[part->soft_body], pm, hold, longest, patch, held_triangle);
        size_t held_count = 0;
        for (size_t q = 0; q < pm->node_count; q++)
            if (hold[q])
                held[held_count++] = (uint32_t)q;
        choose_holders(pm, hold, longest, held, held_count, patch, held_triangle, &w);
        st = write_holds(c, k, hold, &w, dsb);
    }
    if (st == PLUSH_OK && c->cloth)
        cloth_of_proxy(c, pm, &c->src->soft_bodies[part->soft_body], &c->cloth[part->soft_body]);
    else if (st == PLUSH_OK)
        calibrate(c, pm, &w.mesh, dsb);
    if (st == PLUSH_OK) {
        size_t loose = loose_pieces(&w, dsb, scratch);
        c->stats->loose_pieces += loose;
        if (loose)
            plush_diag_warn(c->diag, -1, "soft body", part->soft_body,
                            "\"%s\": direct mode: %zu of the detailed mesh's pieces touch no other piece and hold to "
                            "no pin or anchor: they fall freely",
                            dsb->name.s ? dsb->name.s : "", loose);
    }
    plush_arena_free(&tmp);
    return st;
}

plush_status plush_scene_direct_build(const plush_scene_binding *b, plush_pmx_model **out,
                                      plush_scene_direct_stats *stats, plush_diag *diag)
{
    return plush__scene_direct_build(b, 0, out, stats, NULL, diag);
}

plush_status plush__scene_direct_build(const plush_scene_binding *b, float physics_hz, plush_pmx_model **out,
                                      plush_scene_direct_stats *stats, plush_world_cloth **cloth, plush_diag *diag)
{
    if (cloth)
        *cloth = NULL;
    if (!b || !out)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no binding or no place for the model");
    *out = NULL;
    plush_scene_direct_stats local_stats;
    if (!stats)
        stats = &local_stats;
    memset(stats, 0, sizeof *stats);
    const plush_pmx_model *m = b->model;
    if (b->proxy.part_count == 0)
        return plush_diag_fail(diag, PLUSH_E_NO_PROXY, -1, "soft body", -1,
                               "no usable TriMesh soft body whose parameters the detailed mesh could take");
    direct_ctx c = {.b = b, .src = m, .stats = stats, .hz = physics_hz, .diag = diag};
    c.parts = calloc(b->proxy.part_count, sizeof *c.parts);
    if (cloth && !(c.cloth = calloc(m->soft_body_count ? m->soft_body_count : 1, sizeof *c.cloth))) {
        free(c.parts);
        return plush__no_memory(diag);
    }
    c.out = plush_pmx_create();
    plush_status st = c.parts && c.out ? collect_faces(&c) : plush__no_memory(diag);
    for (size_t k = 0; st == PLUSH_OK && k < b->proxy.part_count; k++) {
        stats->faces += c.parts[k].face_count;
        stats->bodies += c.parts[k].face_count > 0;
    }
    if (st == PLUSH_OK && stats->faces == 0)
        st = plush_diag_fail(diag, PLUSH_E_GEOMETRY, -1, NULL, -1,
                             "no face of the detailed mesh has all its vertices bound: nothing to simulate directly");
    if (st == PLUSH_OK) {
        /* the source's fields and arrays, its own arena kept */
        plush_arena keep = c.out->arena;
        *c.out = *m;
        c.out->arena = keep;
        plush_arena *arena = plush_pmx_arena(c.out);
        c.vertices = plush_arena_array(arena, m->vertex_count ? m->vertex_count : 1, sizeof *c.vertices);
        plush_pmx_soft_body *bodies = plush_arena_array(arena, m->soft_body_count, sizeof *bodies);
        if (!c.vertices || !bodies) {
            st = plush__no_memory(diag);
        } else {
            memcpy(c.vertices, m->vertices, m->vertex_count * sizeof *c.vertices);
            memcpy(bodies, m->soft_bodies, m->soft_body_count * sizeof *bodies);
            c.out->vertices = c.vertices;
            c.out->soft_bodies = bodies;
            st = lay_out_faces(&c);
        }
        for (size_t k = 0; st == PLUSH_OK && k < b->proxy.part_count; k++) {
            plush_pmx_soft_body *dsb = &bodies[b->proxy.parts[k].soft_body];
            if (!c.parts[k].face_count) {
                /* no detailed face chose this part: it is dropped, not simulated as its cage */
                plush_diag_warn(diag, -1, "soft body", b->proxy.parts[k].soft_body,
                                "\"%s\": direct mode: no detailed face binds to this proxy: not simulated",
                                dsb->name.s ? dsb->name.s : "");
                dsb->material = -1;
                dsb->pin_count = dsb->anchor_count = 0;
                continue;
            }
            dsb->material = (int32_t)c.parts[k].material;
            st = build_part(&c, k, dsb);
        }
        if (st == PLUSH_OK)
            st = lay_out_faces(&c);
    }
    for (size_t k = 0; c.parts && k < b->proxy.part_count; k++) {
        free(c.parts[k].faces);
        free(c.parts[k].seams);
    }
    free(c.parts);
    if (st != PLUSH_OK) {
        plush_pmx_free(c.out);
        free(c.cloth);
        return st;
    }
    *out = c.out;
    if (cloth)
        *cloth = c.cloth;
    return PLUSH_OK;
}
