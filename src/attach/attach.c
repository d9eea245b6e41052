/* Attach: the model with the cage added as a PMX 2.1 TriMesh soft body (pins, anchors, one piece per
 * connected part of the cage). Presets and fields are in attach_params.c, reading the cage in
 * attach_proxy.c. */
#include "plush/attach.h"
#include "plush/sys/physics.h"
#include "plush/sys/core.h"
#include "plush/sys/pmx.h"
#include "core/common.h"
#include "core/geom.h"
#include "physics/rigid_shape.h"
#include "attach/attach_internal.h"
#include "scene/internal.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char default_name[] = "plush cage";

/* ---- the attached model -------------------------------------------------------------------------- */

static bool str_is(const plush_str *name, const char *s)
{
    size_t n = strlen(s);
    return name->len == n && (n == 0 || memcmp(name->s, s, n) == 0);
}

static plush_status check_cage(const plush_cage_mesh *cage, plush_diag *diag)
{
    if (!cage || cage->triangle_count == 0 || cage->vertex_count == 0)
        return plush_diag_fail(diag, PLUSH_E_GEOMETRY, -1, "proxy", -1, "the proxy has no triangles");
    for (size_t v = 0; v < cage->vertex_count; v++)
        for (int k = 0; k < 3; k++)
            if (!isfinite(cage->positions[v][k]))
                return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "proxy vertex", (int64_t)v,
                                       "position is not finite");
    for (size_t t = 0; t < cage->triangle_count; t++)
        for (int k = 0; k < 3; k++)
            if (cage->triangles[t][k] >= cage->vertex_count)
                return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "proxy face", (int64_t)t,
                                       "vertex %lu out of range (%zu vertices)",
                                       (unsigned long)cage->triangles[t][k], cage->vertex_count);
    return PLUSH_OK;
}

/* What PMX indices can hold: every count is read as a signed 32-bit number. Checked before anything
 * touches the model's arrays. */
static plush_status check_limits(const plush_pmx_model *m, const plush_cage_mesh *cage, plush_diag *diag)
{
    const size_t most = INT32_MAX;
    const char *what = NULL, *section = NULL;
    if (m->vertex_count > most || cage->vertex_count > most - m->vertex_count)
        what = "vertices", section = "vertex";
    else if (cage->triangle_count > most / 3 || m->index_count > most - 3 * cage->triangle_count)
        what = "face indices", section = "face";
    else if (m->material_count >= most)
        what = "materials", section = "material";
    else if (m->soft_body_count >= most)
        what = "soft bodies", section = "soft body";
    if (what)
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, section, -1,
                               "the model is at the PMX index limit: with the cage it would have more than "
                               "%zu %s",
                               most, what);
    if (m->vertex_count == 0)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1,
                               "the model has no vertices to copy skin weights from");
    /* a cage no run could take is refused before its pieces, pins and weights are worked out */
    if (cage->triangle_count > PLUSH_CAGE_MAX_TRIANGLES)
        return plush_diag_fail(diag, PLUSH_E_BUDGET, -1, "face", -1,
                               "the cage has %zu triangles; a proxy has at most %d (plush proxy --triangles N makes "
                               "one of fewer)",
                               cage->triangle_count, PLUSH_CAGE_MAX_TRIANGLES);
    return PLUSH_OK;
}

/* Marks every bone (or rigid body) with each name; a name that matches none fails. */
static plush_status mark_names(const char *const *names, size_t count, const plush_str *(*name_of)(const void *, size_t),
                               const void *items, size_t item_count, const char *kind, bool *marked,
                               plush_diag *diag)
{
    for (size_t k = 0; k < count; k++) {
        const char *want = names[k] ? names[k] : "";
        bool found = false;
        for (size_t i = 0; i < item_count; i++)
            if (str_is(name_of(items, i), want))
                marked[i] = found = true;
        if (!found)
            return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, kind, -1, "no %s named \"%s\"", kind, want);
    }
    return PLUSH_OK;
}

static const plush_str *bone_name(const void *items, size_t i)
{
    return &((const plush_pmx_bone *)items)[i].name;
}

static const plush_str *body_name(const void *items, size_t i)
{
    return &((const plush_pmx_rigid_body *)items)[i].name;
}

/* The cage's vertices after the model's: positions, area-weighted normals oriented like the model's, and
 * the skin weights of the nearest model vertex. */
static plush_status cage_vertices(const plush_pmx_model *m, const plush_cage_mesh *cage, plush_pmx_vertex *out,
                                  plush__attach_progress *progress, plush_diag *diag)
{
    size_t n = cage->vertex_count;
    float(*hint)[3] = malloc(n * sizeof *hint), (*normal)[3] = malloc(n * sizeof *normal);
    plush__point_grid grid;
    const float *first = m->vertex_count ? m->vertices[0].position : NULL;
    if (!plush__point_grid_init(&grid, first, m->vertex_count, sizeof m->vertices[0]) || !hint || !normal) {
        plush__point_grid_free(&grid);
        free(hint);
        free(normal);
        return plush__no_memory(diag);
    }
    for (size_t k = 0; k < n; k++) {
        size_t nearest = plush__point_grid_nearest(&grid, cage->positions[k]);
        plush__attach_progress_step(progress);
        const plush_pmx_vertex *src = &m->vertices[nearest == SIZE_MAX ? 0 : nearest];
        memcpy(hint[k], src->normal, sizeof hint[k]);
        plush_pmx_vertex *v = &out[k];
        *v = (plush_pmx_vertex){.edge_scale = 1, .weight_type = src->weight_type, .sdef = -1};
        memcpy(v->bones, src->bones, sizeof v->bones);
        memcpy(v->weights, src->weights, sizeof v->weights);
        /* SDEF's extra parameters belong to the source vertex's shape; the same bones and weights blend
         * linearly as BDEF2. */
        if (v->weight_type == PLUSH_PMX_SDEF)
            v->weight_type = PLUSH_PMX_BDEF2;
        memcpy(v->position, cage->positions[k], sizeof v->position);
    }
    plush__point_grid_free(&grid);
    plush_cage_mesh oriented = *cage;
    oriented.normals = hint;
    plush_cage_vertex_normals(&oriented, normal);
    for (size_t k = 0; k < n; k++)
        memcpy(out[k].normal, normal[k], sizeof out[k].normal);
    free(hint);
    free(normal);
    return PLUSH_OK;
}

typedef struct attach_work {
    const plush_pmx_model *model;
    const plush_attach_options *o;
    plush_pmx_model *out;
    const plush_pmx_vertex *cage;          /* out->vertices + first */
    size_t first;
    bool *pinned;                          /* per cage vertex */
    bool *auto_pinned;                     /* per cage vertex: pinned by auto_pins */
    plush_attach_piece *info;              /* per piece */
    int32_t *anchor;                       /* per cage vertex: the rigid body, or -1 */
    uint32_t *face_piece;                  /* per cage face: its piece (faces joined by shared edges) */
    bool derive_shape_memory;              /* the default preset: a piece standing out gets its mt from its length */
    size_t pieces;
    uint32_t *slot_vertex;                 /* per new model vertex: the cage vertex it copies */
    size_t slots;
    plush__attach_progress progress;
} attach_work;

static plush_status find_pins(attach_work *w, plush_diag *diag)
{
    const plush_pmx_model *m = w->model;
    const plush_attach_options *o = w->o;
    size_t n = o->cage->vertex_count;
    bool *pin_bone = calloc(m->bone_count ? m->bone_count : 1, sizeof *pin_bone);
    bool *one = calloc(m->bone_count ? m->bone_count : 1, sizeof *one);
    plush_status st = pin_bone && one ? PLUSH_OK : plush__no_memory(diag);
    if (st == PLUSH_OK)
        st = mark_names(o->pin_bones, o->pin_bone_count, bone_name, m->bones, m->bone_count, "bone", pin_bone, diag);
    double need = o->pin_share > 0 ? o->pin_share : 0.5;
    for (size_t k = 0; st == PLUSH_OK && k < n; k++)
        w->pinned[k] = o->pin_bone_count > 0 &&
                       plush_pmx_vertex_bone_share(&w->cage[k], pin_bone, m->bone_count) >= need - 1e-6;
    /* Each named bone must pin something, or the user is told before a soft body falls away. */
    for (size_t b = 0; st == PLUSH_OK && b < o->pin_bone_count; b++) {
        memset(one, 0, m->bone_count * sizeof *one);
        mark_names(o->pin_bones + b, 1, bone_name, m->bones, m->bone_count, "bone", one, diag);
        bool any = false;
        for (size_t k = 0; k < n && !any; k++)
            any = w->pinned[k] && plush_pmx_vertex_bone_share(&w->cage[k], one, m->bone_count) > 0;
        if (!any)
            st = plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "pin bone", (int64_t)b,
                                 "bone \"%s\" pins no cage vertex (none has %g of its weight on the pin bones)",
                                 o->pin_bones[b], need);
    }
    free(pin_bone);
    free(one);
    for (size_t i = 0; st == PLUSH_OK && i < o->pin_vertex_count; i++) {
        if (o->pin_vertices[i] >= n)
            return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1,
                                   "pin vertex %lu out of range (the proxy has %zu vertices)",
                                   (unsigned long)o->pin_vertices[i], n);
        w->pinned[o->pin_vertices[i]] = true;
    }
    return st;
}

static plush_status find_anchors(attach_work *w, plush_diag *diag)
{
    const plush_pmx_model *m = w->model;
    const plush_attach_options *o = w->o;
    size_t n = o->cage->vertex_count;
    bool *named = calloc(m->rigid_body_count ? m->rigid_body_count : 1, sizeof *named);
    plush_status st = named ? PLUSH_OK : plush__no_memory(diag);
    for (size_t k = 0; k < n; k++)
        w->anchor[k] = -1;
    for (size_t a = 0; st == PLUSH_OK && a < o->anchor_count; a++) {
        memset(named, 0, (m->rigid_body_count ? m->rigid_body_count : 1) * sizeof *named);
        st = mark_names(o->anchors + a, 1, body_name, m->rigid_bodies, m->rigid_body_count, "rigid body", named,
                        diag);
        bool any = false;
        for (size_t b = 0; st == PLUSH_OK && b < m->rigid_body_count; b++) {
            float pose[16];
            if (named[b])
                plush_world_rigid_rest_transform(&m->rigid_bodies[b], pose);
            for (size_t k = 0; named[b] && k < n; k++)
                if (plush__rigid_inside(&m->rigid_bodies[b], pose, w->cage[k].position)) {
                    any = true;
                    if (w->anchor[k] < 0 && !w->pinned[k])
                        w->anchor[k] = (int32_t)b;
                }
        }
        if (st == PLUSH_OK && !any)
            st = plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "anchor", (int64_t)a,
                                 "rigid body \"%s\" holds no cage vertex: nothing to anchor", o->anchors[a]);
    }
    free(named);
    return st;
}

/* Bullet's TriMesh soft body cannot hold separate pieces (building its face tree pairs faces that share an
 * edge, and never ends when some cannot be reached that way), so each piece of faces joined by shared
 * edges becomes a soft body of its own; a vertex two pieces share (a bow tie) is copied into each.
 * Pieces are numbered by their first face. */
typedef struct edge_key {
    uint32_t lo, hi, face;
} edge_key;

static int edge_key_cmp(const void *pa, const void *pb)
{
    const edge_key *a = pa, *b = pb;
    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    if (a->hi != b->hi)
        return a->hi < b->hi ? -1 : 1;
    return a->face < b->face ? -1 : a->face > b->face;
}

static plush_status find_pieces(attach_work *w, plush_diag *diag)
{
    const plush_cage_mesh *c = w->o->cage;
    size_t nt = c->triangle_count;
    uint32_t *parent = malloc(nt * sizeof *parent);
    edge_key *edges = malloc(3 * nt * sizeof *edges);
    if (!parent || !edges) {
        free(parent);
        free(edges);
        return plush__no_memory(diag);
    }
    for (size_t t = 0; t < nt; t++) {
        parent[t] = (uint32_t)t;
        for (int k = 0; k < 3; k++) {
            uint32_t a = c->triangles[t][k], b = c->triangles[t][(k + 1) % 3];
            edges[3 * t + (size_t)k] = (edge_key){a < b ? a : b, a < b ? b : a, (uint32_t)t};
        }
    }
    qsort(edges, 3 * nt, sizeof *edges, edge_key_cmp);
    for (size_t i = 1; i < 3 * nt; i++)
        if (edges[i].lo == edges[i - 1].lo && edges[i].hi == edges[i - 1].hi)
            plush__uf_union(parent, edges[i].face, edges[i - 1].face); /* the first face stands for the piece */
    w->pieces = 0;
    for (size_t t = 0; t < nt; t++) {
        uint32_t r = plush__uf_find(parent, (uint32_t)t);
        w->face_piece[t] = r == t ? (uint32_t)w->pieces++ : w->face_piece[r];
    }
    free(parent);
    free(edges);
    return PLUSH_OK;
}

/* The new model vertices: piece by piece, each piece's cage vertices in increasing order. */
static plush_status make_slots(attach_work *w, plush_diag *diag)
{
    const plush_cage_mesh *c = w->o->cage;
    size_t nv = c->vertex_count;
    uint32_t *mark = malloc(nv * sizeof *mark);
    size_t cap = nv + 16, n = 0;
    uint32_t *slots = malloc(cap * sizeof *slots);
    plush_status st = mark && slots ? PLUSH_OK : plush__no_memory(diag);
    for (size_t v = 0; st == PLUSH_OK && v < nv; v++)
        mark[v] = UINT32_MAX;
    for (size_t p = 0; st == PLUSH_OK && p < w->pieces; p++) {
        for (size_t t = 0; t < c->triangle_count; t++)
            for (int k = 0; k < 3 && w->face_piece[t] == p; k++)
                mark[c->triangles[t][k]] = (uint32_t)p;
        for (size_t v = 0; v < nv && st == PLUSH_OK; v++) {
            if (mark[v] != p)
                continue;
            if (n == cap) {
                uint32_t *more = cap <= SIZE_MAX / 2 / sizeof *slots ? realloc(slots, 2 * cap * sizeof *slots) : NULL;
                if (!more) {
                    st = plush__no_memory(diag);
                    break;
                }
                slots = more, cap *= 2;
            }
            slots[n++] = (uint32_t)v;
        }
    }
    if (st == PLUSH_OK && n > (size_t)INT32_MAX - w->model->vertex_count)
        st = plush_diag_fail(diag, PLUSH_E_RANGE, -1, NULL, -1,
                             "the model is at the PMX index limit: with the cage it would have more than %ld vertices",
                             (long)INT32_MAX);
    if (st == PLUSH_OK) {
        w->slot_vertex = plush_arena_array(plush_pmx_arena(w->out), n, sizeof *w->slot_vertex);
        if (!w->slot_vertex)
            st = plush__no_memory(diag);
        else
            memcpy(w->slot_vertex, slots, n * sizeof *slots);
        w->slots = n;
    }
    free(mark);
    free(slots);
    return st;
}

/* Collides with every group but the soft body's own and those of rigid bodies physics moves that hold a
 * free cage vertex at rest: such a body stands inside the part (the model's own hair or skirt bodies) and
 * would push the cage from inside from the first frame. The mask leaves out the bodies that follow bones:
 * the physics collides the faces with every one of those itself (plush/physics.h), whatever the mask. */
static uint16_t auto_mask(const attach_work *w, uint8_t group)
{
    const plush_pmx_model *m = w->model;
    uint16_t mask = (uint16_t)(0xFFFFu & ~(1u << (group & 15)));
    for (size_t b = 0; b < m->rigid_body_count; b++) {
        const plush_pmx_rigid_body *rb = &m->rigid_bodies[b];
        if (rb->mode == PLUSH_PMX_RIGID_FOLLOW_BONE)
            continue; /* the physics collides the faces with these itself, leaving out the faces on one at rest */
        bool holds = false;
        float pose[16];
        plush_world_rigid_rest_transform(rb, pose);
        for (size_t k = 0; k < w->o->cage->vertex_count && !holds; k++)
            holds = !w->pinned[k] && plush__rigid_inside(rb, pose, w->o->cage->positions[k]);
        if (holds)
            mask = (uint16_t)(mask & ~(1u << (rb->group & 15)));
    }
    return mask;
}

static void warn_index_sizes(const plush_pmx_model *m, const plush_pmx_model *out, plush_diag *diag)
{
    static const struct { int kind; const char *what; } kinds[] = {
        {PLUSH_PMX_INDEX_VERTEX, "vertex"}, {PLUSH_PMX_INDEX_MATERIAL, "material"}};
    size_t counts[2] = {out->vertex_count, out->material_count};
    for (int i = 0; i < 2; i++) {
        uint8_t have = m->index_sizes[kinds[i].kind], need = plush_pmx_min_index_size(kinds[i].kind, counts[i]);
        if (have != 0 && need > have)
            plush_diag_warn(diag, -1, NULL, -1,
                            "%s indices widen from %u to %u bytes: sections holding them are rewritten wider "
                            "(same values)",
                            kinds[i].what, (unsigned)have, (unsigned)need);
    }
}

/* Piece p's faces (in cage order), its material and its soft body with its pins and anchors. *slot is the
 * piece's first slot on entry (make_slots laid them out piece by piece), the next piece's on return. */
static plush_status add_piece(attach_work *w, size_t p, size_t *slot, const plush_str *name, uint32_t *idx,
                              size_t *at, plush_pmx_material *mat, plush_pmx_soft_body *sb, plush_diag *diag)
{
    const plush_cage_mesh *cage = w->o->cage;
    plush_arena *a = plush_pmx_arena(w->out);
    size_t start = *at, first_slot = *slot, pins = 0, anchors = 0;
    /* This piece's slots: the cage vertices its faces use, in increasing order. */
    uint32_t *local = calloc(cage->vertex_count, sizeof *local);
    if (!local)
        return plush__no_memory(diag);
    size_t count = 0;
    for (size_t t = 0; t < cage->triangle_count; t++)
        for (int k = 0; k < 3 && w->face_piece[t] == p; k++) {
            count += local[cage->triangles[t][k]] == 0;
            local[cage->triangles[t][k]] = UINT32_MAX;
        }
    size_t end = first_slot + count;
    for (size_t s2 = first_slot; s2 < end; s2++)
        local[w->slot_vertex[s2]] = (uint32_t)s2;
    *slot = end;
    for (size_t t = 0; t < cage->triangle_count; t++)
        if (w->face_piece[t] == p)
            for (int k = 0; k < 3; k++)
                idx[(*at)++] = (uint32_t)(w->first + local[cage->triangles[t][k]]);
    free(local);
    plush_attach_piece *info = &w->info[p];
    info->triangles = (*at - start) / 3, info->vertices = count;
    for (size_t s2 = first_slot; s2 < end; s2++) {
        pins += w->pinned[w->slot_vertex[s2]];
        anchors += w->anchor[w->slot_vertex[s2]] >= 0;
        info->auto_pinned += w->auto_pinned[w->slot_vertex[s2]];
    }
    info->pinned = pins, info->anchored = anchors;
    *mat = (plush_pmx_material){.name = *name, .name_en = *name, .diffuse = {1, 1, 1, 0}, .specular_power = 1,
                                .ambient = {0.5f, 0.5f, 0.5f}, .flags = 0, .edge_color = {0, 0, 0, 1},
                                .edge_size = 0, .texture = -1, .sphere_texture = -1, .toon_shared = 0, .toon = -1,
                                .index_count = (int32_t)(*at - start)};
    *sb = w->o->soft;
    sb->name = sb->name_en = *name;
    sb->shape = PLUSH_PMX_SOFT_TRIMESH;
    sb->material = (int32_t)(mat - w->out->materials);
    sb->anchor_count = 0, sb->pin_count = 0;
    sb->pins = plush_arena_array(a, pins ? pins : 1, sizeof *sb->pins);
    sb->anchors = plush_arena_array(a, anchors ? anchors : 1, sizeof *sb->anchors);
    if (!sb->pins || !sb->anchors)
        return plush__no_memory(diag);
    for (size_t s2 = first_slot; s2 < end; s2++) {
        uint32_t k = w->slot_vertex[s2];
        if (w->pinned[k])
            sb->pins[sb->pin_count++] = (int32_t)(w->first + s2);
        if (w->anchor[k] >= 0)
            sb->anchors[sb->anchor_count++] =
                (plush_pmx_soft_anchor){.rigid_body = w->anchor[k], .vertex = (int32_t)(w->first + s2), .near_mode = 0};
    }
    if (w->o->auto_mask)
        sb->mask = auto_mask(w, sb->group);
    if (sb->margin < 0) /* in mean edges of the piece */
        sb->margin = (float)(-sb->margin * plush__mean_edge(&w->out->vertices[0].position[0], sizeof w->out->vertices[0], idx + start, *at - start));
    return PLUSH_OK;
}

/* A piece nothing pins or anchors falls (refused with require_hold); one pinned along a line and not
 * anchored spins about it. */
static plush_status check_hold(attach_work *w, size_t p, const plush_pmx_soft_body *sb, const plush_pmx_vertex *verts,
                               size_t index, plush_diag *diag)
{
    const plush_attach_options *o = w->o;
    plush_attach_piece *info = &w->info[p];
    if (sb->pin_count == 0 && sb->anchor_count == 0) {
        if (o->require_hold)
            return plush_diag_fail(diag, PLUSH_E_UNHELD, -1, "soft body", (int64_t)index,
                                   "cage piece %zu (%zu triangles) has no pinned or anchored vertex: it would fall",
                                   p + 1, info->triangles);
        if (o->pin_bone_count || o->pin_vertex_count || o->anchor_count || o->auto_pins)
            plush_diag_warn(diag, -1, "soft body", (int64_t)index, "\"%s\" has no pinned or anchored vertex: it falls freely",
                            sb->name.s);
        return PLUSH_OK;
    }
    if (sb->anchor_count > 0)
        return PLUSH_OK;
    float(*pts)[3] = malloc(sb->pin_count * sizeof *pts);
    if (!pts)
        return plush__no_memory(diag);
    for (size_t i = 0; i < sb->pin_count; i++)
        memcpy(pts[i], verts[sb->pins[i]].position, sizeof pts[i]);
    info->spins = !plush__attach_points_span((const float(*)[3])pts, sb->pin_count);
    free(pts);
    if (info->spins)
        plush_diag_warn(diag, -1, "soft body", (int64_t)index,
                        "\"%s\" is pinned by %zu vertices on one line and anchored by none: it can spin about them",
                        sb->name.s, (size_t)sb->pin_count);
    return PLUSH_OK;
}

/* "plush cage", or "plush cage 1", "plush cage 2", ... for several pieces. */
static plush_status piece_name(attach_work *w, size_t p, plush_str *out, plush_diag *diag)
{
    const char *base = w->o->name ? w->o->name : default_name;
    size_t len = strlen(base);
    char *s = plush_arena_alloc(plush_pmx_arena(w->out), len + 24);
    if (!s)
        return plush__no_memory(diag);
    int n = w->pieces > 1 ? snprintf(s, len + 24, "%s %zu", base, p + 1) : snprintf(s, len + 24, "%s", base);
    *out = (plush_str){.s = s, .len = (uint32_t)n};
    return PLUSH_OK;
}

/* Whether piece p's cage nodes lie close to a plane or a line (core/geom.h's measure, as the physics takes it). */
static bool piece_flat(const attach_work *w, size_t p)
{
    const plush_cage_mesh *c = w->o->cage;
    bool *use = calloc(c->vertex_count ? c->vertex_count : 1, sizeof *use);
    if (!use)
        return false;
    for (size_t f = 0; f < c->triangle_count; f++)
        for (int k = 0; w->face_piece[f] == p && k < 3; k++)
            use[c->triangles[f][k]] = true;
    bool flat = !(plush__points_spread((const float(*)[3])c->positions, c->vertex_count, use) >= PLUSH__FLAT_SPREAD);
    free(use);
    return flat;
}

/* Copies the model (sharing its arrays), then replaces the arrays that grow. */
static plush_status build(attach_work *w, plush_pmx_vertex *cage_verts, plush_attach_result *res, plush_diag *diag)
{
    const plush_pmx_model *m = w->model;
    const plush_cage_mesh *cage = w->o->cage;
    plush_pmx_model *out = w->out;
    plush_arena *a = plush_pmx_arena(out);
    plush_status st = find_pieces(w, diag);
    /* each piece becomes a soft body, whose set-up walks the cage's faces */
    if (st == PLUSH_OK && w->pieces > PLUSH_SCENE_MAX_SOFT_BODIES - (m->soft_body_count < PLUSH_SCENE_MAX_SOFT_BODIES
                                                                        ? m->soft_body_count
                                                                        : PLUSH_SCENE_MAX_SOFT_BODIES))
        return plush_diag_fail(diag, PLUSH_E_BUDGET, -1, "face", -1,
                               "the cage is in %zu pieces (faces joined by shared edges), each a soft body; with the "
                               "model's %zu a run takes at most %d (weld the cage's pieces, or plush proxy --wrap)",
                               w->pieces, m->soft_body_count, PLUSH_SCENE_MAX_SOFT_BODIES);
    if (st == PLUSH_OK)
        st = make_slots(w, diag);
    if (st != PLUSH_OK)
        return st;
    if (m->material_count > (size_t)INT32_MAX - w->pieces || m->soft_body_count > (size_t)INT32_MAX - w->pieces)
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, NULL, -1,
                               "the model is at the PMX index limit: no room for %zu more materials", w->pieces);
    size_t nv = m->vertex_count + w->slots, ni = m->index_count + 3 * cage->triangle_count;
    plush_pmx_vertex *verts = plush_arena_array(a, nv, sizeof *verts);
    uint32_t *idx = plush_arena_array(a, ni, sizeof *idx);
    plush_pmx_material *mats = plush_arena_array(a, m->material_count + w->pieces, sizeof *mats);
    plush_pmx_soft_body *sbs = plush_arena_array(a, m->soft_body_count + w->pieces, sizeof *sbs);
    float(*auv)[4] = m->additional_uv ? plush_arena_array(a, nv * m->additional_uv, sizeof *auv) : NULL;
    if (!verts || !idx || !mats || !sbs || (m->additional_uv && !auv))
        return plush__no_memory(diag);
    memcpy(verts, m->vertices, m->vertex_count * sizeof *verts);
    if (m->index_count)
        memcpy(idx, m->indices, m->index_count * sizeof *idx);
    if (m->material_count)
        memcpy(mats, m->materials, m->material_count * sizeof *mats);
    if (m->soft_body_count)
        memcpy(sbs, m->soft_bodies, m->soft_body_count * sizeof *sbs);
    if (auv)
        memcpy(auv, m->additional_uvs, m->vertex_count * m->additional_uv * sizeof *auv);
    w->first = m->vertex_count;
    w->cage = cage_verts;
    w->info = plush_arena_array(a, w->pieces, sizeof *w->info);
    if (!w->info)
        return plush__no_memory(diag);
    memset(w->info, 0, w->pieces * sizeof *w->info);
    /* the searches: each cage vertex's nearest model vertex; with auto_pins each model vertex's nearest cage
     * vertex, and without named materials each cage vertex's nearest vertex of a material */
    w->progress = (plush__attach_progress){.o = w->o, .total = cage->vertex_count};
    if (w->o->auto_pins)
        w->progress.total += m->vertex_count + (w->o->material_count ? 0 : cage->vertex_count);
    if ((st = cage_vertices(m, cage, cage_verts, &w->progress, diag)) != PLUSH_OK || (st = find_pins(w, diag)) != PLUSH_OK)
        return st;
    if (w->o->auto_pins && (st = plush__attach_auto_pins(m, w->o, w->face_piece, w->pieces, cage_verts, w->pinned,
                                                         w->auto_pinned, w->info, &w->progress, diag)) != PLUSH_OK)
        return st;
    if ((st = find_anchors(w, diag)) != PLUSH_OK)
        return st;
    for (size_t s2 = 0; s2 < w->slots; s2++)
        verts[w->first + s2] = cage_verts[w->slot_vertex[s2]];
    out->version = 2.1f;
    out->vertices = verts, out->vertex_count = nv, out->additional_uvs = auv;
    out->indices = idx, out->index_count = ni;
    out->materials = mats, out->material_count = m->material_count + w->pieces;
    out->soft_bodies = sbs, out->soft_body_count = m->soft_body_count + w->pieces;
    size_t at = m->index_count, slot = 0, pinned = 0, anchored = 0;
    for (size_t p = 0; p < w->pieces; p++) {
        plush_str name;
        if ((st = piece_name(w, p, &name, diag)) != PLUSH_OK ||
            (st = add_piece(w, p, &slot, &name, idx, &at, &mats[m->material_count + p], &sbs[m->soft_body_count + p],
                            diag)) != PLUSH_OK)
            return st;
        const plush_pmx_soft_body *sb = &sbs[m->soft_body_count + p];
        if ((st = check_hold(w, p, sb, verts, m->soft_body_count + p, diag)) != PLUSH_OK)
            return st;
        pinned += sb->pin_count;
        anchored += sb->anchor_count;
    }
    bool *held = malloc((cage->vertex_count ? cage->vertex_count : 1) * sizeof *held);
    if (!held)
        return plush__no_memory(diag);
    for (size_t k = 0; k < cage->vertex_count; k++)
        held[k] = w->pinned[k] || w->anchor[k] >= 0;
    st = plush__attach_free_lengths(cage, w->face_piece, w->pieces, held, w->info, diag);
    free(held);
    if (st != PLUSH_OK)
        return st;
    /* a flat piece standing out from where it touches the model (a tail, an ear) rests in a shape gravity does
     * not hold, as a hanging one does, and bends under its own weight (a piece with volume keeps its shape by
     * its links): with the default preset its shape memory is no stronger than gravity's pull on a pendulum of
     * its free length, so it droops as a piece that long would */
    for (size_t p = 0; w->derive_shape_memory && p < w->pieces; p++)
        if (w->info[p].from_contact && piece_flat(w, p))
            sbs[m->soft_body_count + p].config.mt =
                plush__attach_shape_memory(sbs[m->soft_body_count + p].config.mt, w->info[p].free_length);
    warn_index_sizes(m, out, diag);
    size_t auto_pinned = 0;
    for (size_t k = 0; k < cage->vertex_count; k++)
        auto_pinned += w->auto_pinned[k];
    *res = (plush_attach_result){.first_vertex = w->first, .vertex_count = w->slots, .cage_vertex = w->slot_vertex,
                                 .material = m->material_count, .soft_body = m->soft_body_count,
                                 .pieces = w->pieces, .pinned = pinned, .anchored = anchored,
                                 .mask = sbs[m->soft_body_count].mask, .piece_info = w->info,
                                 .auto_pinned = auto_pinned};
    return plush_pmx_validate(out, diag);
}

plush_status plush_attach(const plush_pmx_model *model, const plush_attach_options *options, plush_pmx_model **out,
                          plush_attach_result *result, plush_diag *diag)
{
    *out = NULL;
    memset(result, 0, sizeof *result);
    if (!model || !options)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no model or options");
    plush_status st = plush_pmx_require_geometry(model, diag);
    if (st == PLUSH_OK)
        st = check_cage(options->cage, diag);
    if (st == PLUSH_OK)
        st = check_limits(model, options->cage, diag);
    if (st == PLUSH_OK)
        st = plush_pmx_validate(model, diag);
    if (st != PLUSH_OK)
        return st;
    plush_attach_options o = *options;
    bool derive = plush__attach_soft_unset(&o.soft);
    if (derive) {
        plush_attach_preset("plush", &o.soft);
    }
    plush_pmx_model *m = plush_pmx_create();
    size_t n = o.cage->vertex_count;
    bool *pinned = calloc(n, sizeof *pinned), *auto_pinned = calloc(n, sizeof *auto_pinned);
    int32_t *anchor = malloc(n * sizeof *anchor);
    uint32_t *piece = malloc(o.cage->triangle_count * sizeof *piece);
    plush_pmx_vertex *cage_verts = malloc(n * sizeof *cage_verts);
    if (!m || !pinned || !auto_pinned || !anchor || !piece || !cage_verts) {
        plush_pmx_free(m);
        free(pinned);
        free(auto_pinned);
        free(anchor);
        free(piece);
        free(cage_verts);
        return plush__no_memory(diag);
    }
    /* Everything the model holds, its arrays shared; the arena stays the new model's own. */
    plush_arena own = m->arena;
    *m = *model;
    m->arena = own;
    attach_work w = {.model = model, .o = &o, .out = m, .pinned = pinned, .auto_pinned = auto_pinned, .anchor = anchor,
                     .face_piece = piece, .derive_shape_memory = derive};
    st = build(&w, cage_verts, result, diag);
    free(pinned);
    free(auto_pinned);
    free(anchor);
    free(piece);
    free(cage_verts);
    if (st != PLUSH_OK) {
        plush_pmx_free(m);
        memset(result, 0, sizeof *result);
        return st;
    }
    *out = m;
    return PLUSH_OK;
}
