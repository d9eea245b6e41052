/* The cages plush compare makes (--proxy-triangles): the model without its soft bodies, a cage simplified
 * (or wrapped) from its visible surface, the old cage's pins and anchors carried over, attached in place. */
#include "compare/compare_internal.h"
#include "core/geom.h"
#include "plush/attach.h"
#include "plush/compare.h"
#include "plush/scene_proxy.h"
#include "plush/sys/attach.h"
#include "plush/sys/core.h"
#include "plush/sys/pmx.h"
#include "plush/sys/scene.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The model seen without its soft bodies and the materials they own. Those materials must come last (as
 * plush attach and the demo put them): removing one from the middle would renumber the rest, and every
 * morph and soft body naming a material would have to follow. */
static plush_status strip_soft_bodies(const plush_pmx_model *m, plush_pmx_model *out, plush_diag *diag)
{
    *out = *m;
    memset(&out->arena, 0, sizeof out->arena);
    bool *soft = calloc(m->material_count ? m->material_count : 1, 1);
    if (!soft)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    for (size_t mat = 0; mat < m->material_count; mat++)
        soft[mat] = plush_pmx_material_soft_body(m, mat) >= 0;
    size_t keep = m->material_count, faces = m->index_count;
    while (keep > 0 && soft[keep - 1])
        faces -= (size_t)m->materials[--keep].index_count;
    for (size_t i = 0; i < keep; i++)
        if (soft[i]) {
            free(soft);
            return plush_diag_fail(diag, PLUSH_E_CONFLICT, -1, "material", (int64_t)i,
                                   "--proxy-triangles: the soft body's material is not after every visible one");
        }
    free(soft);
    for (size_t i = 0; i < m->morph_count; i++)
        if (m->morphs[i].kind == PLUSH_PMX_MORPH_MATERIAL)
            for (uint32_t k = 0; k < m->morphs[i].offset_count; k++)
                if (m->morphs[i].offsets.material[k].material >= (int32_t)keep)
                    return plush_diag_fail(diag, PLUSH_E_CONFLICT, -1, "morph", (int64_t)i,
                                           "--proxy-triangles: a material morph changes the soft body's material");
    out->material_count = keep;
    out->index_count = faces;
    out->soft_body_count = 0;
    out->soft_bodies = NULL;
    return PLUSH_OK;
}

/* Pins and anchors carried from the model's soft bodies to the new cage: a cage vertex is pinned when the
 * nearest node of the old cages is pinned, and the nearest cage vertex of every old pinned node is pinned
 * too, so a coarse cage still holds where the old one held. Anchors go by rigid body (plush_attach anchors
 * the cage vertices inside it). */
static plush_status carry_pins(const plush_pmx_model *m, const plush_cage_mesh *cage, plush_arena *arena,
                               plush_attach_options *opt, plush_diag *diag)
{
    size_t nodes = 0, pins = 0, anchors = 0;
    bool *pinned = calloc(m->vertex_count ? m->vertex_count : 1, 1);
    bool *on_cage = calloc(m->vertex_count ? m->vertex_count : 1, 1);
    uint32_t *old = NULL;
    uint32_t *out = plush_arena_array(arena, cage->vertex_count + 1, sizeof *out);
    bool *take = calloc(cage->vertex_count ? cage->vertex_count : 1, 1);
    const char **names = NULL;
    plush_status st = PLUSH_OK;
    if (!pinned || !on_cage || !out || !take) {
        st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        goto done;
    }
    for (size_t s = 0; s < m->soft_body_count; s++) {
        const plush_pmx_soft_body *sb = &m->soft_bodies[s];
        for (uint32_t k = 0; k < sb->pin_count; k++)
            if (sb->pins[k] >= 0 && (size_t)sb->pins[k] < m->vertex_count)
                pinned[sb->pins[k]] = true;
        anchors += sb->anchor_count;
        size_t first = 0, count = 0;
        if (sb->material < 0 || plush_pmx_material_faces(m, (size_t)sb->material, &first, &count, diag) != PLUSH_OK)
            continue;
        for (size_t i = first; i < first + count; i++)
            on_cage[m->indices[i]] = true;
    }
    for (size_t v = 0; v < m->vertex_count; v++)
        nodes += on_cage[v], pins += pinned[v];
    old = malloc((nodes ? nodes : 1) * sizeof *old);
    if (!old) {
        st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        goto done;
    }
    nodes = 0;
    for (size_t v = 0; v < m->vertex_count; v++)
        if (on_cage[v] || pinned[v])
            old[nodes++] = (uint32_t)v;
    for (size_t c = 0; c < cage->vertex_count && nodes; c++) {
        float best = INFINITY;
        uint32_t which = 0;
        for (size_t i = 0; i < nodes; i++) {
            const float *p = m->vertices[old[i]].position;
            float dx = p[0] - cage->positions[c][0], dy = p[1] - cage->positions[c][1], dz = p[2] - cage->positions[c][2];
            float d = dx * dx + dy * dy + dz * dz;
            if (d < best)
                best = d, which = old[i];
        }
        take[c] = pinned[which];
    }
    for (size_t i = 0; i < nodes; i++) {
        if (!pinned[old[i]])
            continue;
        const float *p = m->vertices[old[i]].position;
        float best = INFINITY;
        size_t which = 0;
        for (size_t c = 0; c < cage->vertex_count; c++) {
            float dx = p[0] - cage->positions[c][0], dy = p[1] - cage->positions[c][1], dz = p[2] - cage->positions[c][2];
            float d = dx * dx + dy * dy + dz * dz;
            if (d < best)
                best = d, which = c;
        }
        take[which] = true;
    }
    opt->pin_vertex_count = 0;
    for (size_t c = 0; c < cage->vertex_count; c++)
        if (take[c])
            out[opt->pin_vertex_count++] = (uint32_t)c;
    opt->pin_vertices = out;
    if (anchors) {
        names = plush_arena_array(arena, anchors, sizeof *names);
        if (!names) {
            st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
            goto done;
        }
        size_t n = 0;
        for (size_t s = 0; s < m->soft_body_count; s++)
            for (uint32_t k = 0; k < m->soft_bodies[s].anchor_count; k++) {
                int32_t rb = m->soft_bodies[s].anchors[k].rigid_body;
                if (rb < 0 || (size_t)rb >= m->rigid_body_count)
                    continue;
                bool seen = false;
                for (size_t j = 0; j < n; j++)
                    seen |= strcmp(names[j], m->rigid_bodies[rb].name.s) == 0;
                if (!seen)
                    names[n++] = m->rigid_bodies[rb].name.s;
            }
        opt->anchors = names;
        opt->anchor_count = n;
    }
    (void)pins;
done:
    free(pinned);
    free(on_cage);
    free(old);
    free(take);
    return st;
}

static const plush_pmx_soft_body *first_trimesh(const plush_pmx_model *m)
{
    for (size_t s = 0; s < m->soft_body_count; s++)
        if (m->soft_bodies[s].shape == PLUSH_PMX_SOFT_TRIMESH && m->soft_bodies[s].material >= 0)
            return &m->soft_bodies[s];
    return NULL;
}

bool plush_compare_has_proxy(const plush_pmx_model *model)
{
    return first_trimesh(model) != NULL;
}

plush_status plush__compare_variant_make(const plush_pmx_model *m, size_t target, float size, plush_compare_variant *v,
                                        plush_diag *diag)
{
    v->target = target;
    const plush_pmx_soft_body *sb = first_trimesh(m);
    if (!sb)
        return plush_diag_fail(diag, PLUSH_E_NO_PROXY, -1, "soft body", -1,
                               "--proxy-triangles copies the model's TriMesh soft body, and it has none: make one "
                               "(plush proxy MODEL.pmx --triangles 300 --materials NAME -o cage.obj; plush attach "
                               "MODEL.pmx --proxy cage.obj -o soft.pmx) and compare soft.pmx");
    plush_status st = strip_soft_bodies(m, &v->base, diag);
    plush_cage_mesh skin, cage;
    plush_cage_result res;
    plush_cage_options copt = {.target_triangles = v->target, .offset = 0.02f * size};
    plush_cage_topology topo;
    if (st == PLUSH_OK)
        st = plush_scene_cage_weld(&v->base, NULL, 0, &v->arena, &skin, diag);
    /* A surface in several pieces would give a cage in as many pieces, one soft body each, and those
     * without a pin fall: one wrap around them all instead, at the same distance. */
    if (st == PLUSH_OK)
        st = plush_cage_check(&skin, &topo, diag);
    if (st == PLUSH_OK) {
        v->source_pieces = topo.pieces;
        copt.wrap = v->wrapped = topo.pieces > 1;
        st = plush_cage_simplify(&skin, &copt, &v->arena, &cage, &res, diag);
    }
    plush_attach_options opt = {.cage = &cage, .soft = *sb, .auto_mask = true};
    if (st == PLUSH_OK)
        st = carry_pins(m, &cage, &v->arena, &opt, diag);
    plush_attach_result ares;
    if (st == PLUSH_OK)
        st = plush_attach(&v->base, &opt, &v->model, &ares, diag);
    if (st == PLUSH_OK)
        v->triangles = cage.triangle_count, v->pieces = ares.pieces, v->pinned = ares.pinned;
    /* where the pins landed, for the report: a cage held away from where the model's own was swings */
    v->pin_y[0] = v->cage_y[0] = INFINITY;
    v->pin_y[1] = v->cage_y[1] = -INFINITY;
    for (size_t i = 0; st == PLUSH_OK && i < cage.vertex_count; i++)
        v->cage_y[0] = fminf(v->cage_y[0], cage.positions[i][1]), v->cage_y[1] = fmaxf(v->cage_y[1], cage.positions[i][1]);
    for (size_t i = 0; st == PLUSH_OK && i < opt.pin_vertex_count; i++) {
        float y = cage.positions[opt.pin_vertices[i]][1];
        v->pin_y[0] = fminf(v->pin_y[0], y), v->pin_y[1] = fmaxf(v->pin_y[1], y);
    }
    return st;
}

plush_status plush__compare_part_variant_make(const plush_pmx_model *m, const char *const *materials, size_t count,
                                             size_t target, float pin_band, bool own_preset,
                                             plush_compare_variant *v, plush_diag *diag)
{
    v->target = target;
    v->part = true;
    plush_status st = strip_soft_bodies(m, &v->base, diag);
    plush_attach_part part;
    if (st == PLUSH_OK)
        st = plush_attach_part_make(&v->base, materials, count, target, own_preset ? NULL : first_trimesh(m), pin_band,
                                    &v->arena, &part, diag);
    if (st != PLUSH_OK)
        return st;
    v->model = part.model;
    v->made = part.made;
    v->triangles = part.cage.triangle_count;
    v->pieces = part.attached.pieces;
    v->pinned = part.attached.pinned;
    v->wrapped = part.made.wrapped;
    v->source_pieces = part.made.source_triangles; /* here: the part's triangles */
    /* where the pins landed, for the report (the cage's vertices follow the model's in v->model) */
    v->pin_y[0] = v->cage_y[0] = INFINITY;
    v->pin_y[1] = v->cage_y[1] = -INFINITY;
    for (size_t i = 0; i < part.cage.vertex_count; i++)
        v->cage_y[0] = fminf(v->cage_y[0], part.cage.positions[i][1]),
        v->cage_y[1] = fmaxf(v->cage_y[1], part.cage.positions[i][1]);
    for (size_t b = 0; b < v->model->soft_body_count; b++)
        for (uint32_t k = 0; k < v->model->soft_bodies[b].pin_count; k++) {
            int32_t pin = v->model->soft_bodies[b].pins[k];
            if (pin < 0 || (size_t)pin >= v->model->vertex_count)
                continue;
            float y = v->model->vertices[pin].position[1];
            v->pin_y[0] = fminf(v->pin_y[0], y), v->pin_y[1] = fmaxf(v->pin_y[1], y);
        }
    return PLUSH_OK;
}

void plush__compare_variant_free(plush_compare_variant *variant)
{
    if (!variant)
        return;
    plush_pmx_free(variant->model);
    variant->model = NULL;
    plush_arena_free(&variant->arena);
}

plush_status plush__compare_quarter_make(const plush_pmx_model *m, const char *const *materials, size_t count,
                                        plush_compare_variant *v, plush_diag *diag)
{
    /* the measured materials, by name: the surface plush compare measures */
    bool *measured = calloc(m->material_count ? m->material_count : 1, 1);
    const char **names = plush_arena_array(&v->arena, m->material_count ? m->material_count : 1, sizeof *names);
    if (!measured || !names) {
        free(measured);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    plush_status mask = plush__compare_part_mask(m, materials, count, measured, diag);
    if (mask != PLUSH_OK) {
        free(measured);
        return mask;
    }
    size_t visible = 0, first = SIZE_MAX;
    for (size_t i = 0; i < m->material_count; i++)
        if (measured[i] && m->materials[i].index_count > 0) {
            names[visible++] = m->materials[i].name.s ? m->materials[i].name.s : "";
            first = first == SIZE_MAX ? i : first;
        }
    plush_cage_mesh skin, cage;
    plush_cage_result res;
    plush_status st = visible ? plush_scene_cage_weld(m, names, visible, &v->arena, &skin, diag)
                              : plush_diag_fail(diag, PLUSH_E_GEOMETRY, -1, NULL, -1, "no visible face");
    if (st == PLUSH_OK) {
        v->target = skin.triangle_count / 4 ? skin.triangle_count / 4 : 1;
        st = plush_cage_simplify(&skin, &(plush_cage_options){.target_triangles = v->target}, &v->arena, &cage, &res,
                                 diag);
    }
    if (st == PLUSH_OK && (!skin.source || !cage.source))
        st = plush_diag_fail(diag, PLUSH_E_GEOMETRY, -1, NULL, -1, "the simplified surface lost its vertices");
    if (st == PLUSH_OK && !(v->model = plush_pmx_create()))
        st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    if (st != PLUSH_OK) {
        free(measured);
        return st;
    }
    /* the model with its measured faces replaced: the simplified ones, on the same vertices, in the first
     * measured material (the other measured ones keep no face); every other material keeps its faces */
    plush_arena keep = v->model->arena;
    *v->model = *m;
    v->model->arena = keep;
    plush_arena *arena = plush_pmx_arena(v->model);
    plush_pmx_material *mats = plush_arena_array(arena, m->material_count, sizeof *mats);
    uint32_t *idx = plush_arena_array(arena, 3 * cage.triangle_count + m->index_count + 1, sizeof *idx);
    if (!mats || !idx) {
        free(measured);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    memcpy(mats, m->materials, m->material_count * sizeof *mats);
    size_t at = 0, from = 0;
    for (size_t i = 0; i < m->material_count; i++) {
        size_t faces = (size_t)(m->materials[i].index_count > 0 ? m->materials[i].index_count : 0);
        if (!measured[i]) {
            memcpy(idx + at, m->indices + from, faces * sizeof *idx);
            at += faces;
        } else if (i == first) {
            for (size_t t = 0; t < cage.triangle_count; t++)
                for (int k = 0; k < 3; k++)
                    idx[at++] = (uint32_t)skin.source[cage.source[cage.triangles[t][k]]];
            mats[i].index_count = (int32_t)(3 * cage.triangle_count);
        } else {
            mats[i].index_count = 0;
        }
        from += faces;
    }
    free(measured);
    v->model->materials = mats;
    v->model->indices = idx;
    v->model->index_count = at;
    v->triangles = cage.triangle_count;
    v->source_pieces = skin.triangle_count; /* here: the full surface's triangles */
    return PLUSH_OK;
}

/* ---- direct at four times the detail: the measured faces split at their edges' midpoints ------------- */

/* A midpoint's bones: each end's bones at half their weight, the same bone summed, the four heaviest kept
 * and their weights made to sum to one (as BDEF1, BDEF2 or BDEF4; an SDEF or QDEF end blends linearly). */
static void mid_weights(const plush_pmx_vertex *a, const plush_pmx_vertex *b, plush_pmx_vertex *out)
{
    int32_t bone[8];
    float weight[8];
    int n = 0;
    const plush_pmx_vertex *ends[2] = {a, b};
    for (int e = 0; e < 2; e++)
        for (int k = 0; k < 4; k++) {
            if (ends[e]->bones[k] < 0 || !(ends[e]->weights[k] > 0))
                continue;
            int at = 0;
            while (at < n && bone[at] != ends[e]->bones[k])
                at++;
            if (at == n)
                bone[n] = ends[e]->bones[k], weight[n++] = 0;
            weight[at] += 0.5f * ends[e]->weights[k];
        }
    for (int i = 1; i < n; i++) /* heaviest first */
        for (int j = i; j > 0 && weight[j] > weight[j - 1]; j--) {
            float w = weight[j];
            int32_t bb = bone[j];
            weight[j] = weight[j - 1], bone[j] = bone[j - 1];
            weight[j - 1] = w, bone[j - 1] = bb;
        }
    n = n > 4 ? 4 : n;
    float sum = 0;
    for (int i = 0; i < n; i++)
        sum += weight[i];
    for (int k = 0; k < 4; k++) {
        out->bones[k] = k < n ? bone[k] : -1;
        out->weights[k] = k < n && sum > 0 ? weight[k] / sum : 0;
    }
    if (n == 0) /* ends with no bone: the first end's */
        memcpy(out->bones, a->bones, sizeof out->bones), memcpy(out->weights, a->weights, sizeof out->weights);
    out->weight_type = n <= 1 ? PLUSH_PMX_BDEF1 : n == 2 ? PLUSH_PMX_BDEF2 : PLUSH_PMX_BDEF4;
    out->sdef = -1;
}

plush_status plush__compare_finer_make(const plush_pmx_model *m, const char *const *materials, size_t count,
                                      plush_compare_variant *v, plush_diag *diag)
{
    bool *measured = calloc(m->material_count ? m->material_count : 1, 1);
    if (!measured)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    plush_status st = plush__compare_part_mask(m, materials, count, measured, diag);
    size_t faces = 0, from = 0;
    for (size_t i = 0; st == PLUSH_OK && i < m->material_count; i++) {
        size_t n = (size_t)(m->materials[i].index_count > 0 ? m->materials[i].index_count : 0) / 3;
        if (measured[i])
            faces += n;
    }
    if (st == PLUSH_OK && faces == 0)
        st = plush_diag_fail(diag, PLUSH_E_GEOMETRY, -1, NULL, -1, "no visible face");
    plush__edge *edges = st == PLUSH_OK ? malloc(3 * faces * sizeof *edges) : NULL;
    uint32_t *mid_of = st == PLUSH_OK ? malloc(3 * faces * sizeof *mid_of) : NULL;
    if (st == PLUSH_OK && (!edges || !mid_of))
        st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    if (st != PLUSH_OK) {
        free(measured), free(edges), free(mid_of);
        return st;
    }
    /* every measured face's edges (owner: 3 x the face, in the measured faces' order, + the edge's place),
     * sorted so that the faces sharing an edge (by vertex) share its midpoint; faces on coincident vertices
     * get coincident midpoints, which direct welds like their corners */
    size_t at = 0;
    from = 0;
    for (size_t i = 0; i < m->material_count; i++) {
        size_t n = (size_t)(m->materials[i].index_count > 0 ? m->materials[i].index_count : 0);
        for (size_t t = 0; measured[i] && t < n; t += 3)
            for (int k = 0; k < 3; k++) {
                uint32_t a = m->indices[from + t + k], b = m->indices[from + t + (k + 1) % 3];
                edges[at] = (plush__edge){.lo = a < b ? a : b, .hi = a < b ? b : a, .owner = (uint32_t)at};
                at++;
            }
        from += n;
    }
    qsort(edges, at, sizeof *edges, plush__edge_order);
    size_t mids = 0;
    for (size_t i = 0; i < at; i++) {
        if (i > 0 && (edges[i].lo != edges[i - 1].lo || edges[i].hi != edges[i - 1].hi))
            mids++;
        mid_of[edges[i].owner] = (uint32_t)(m->vertex_count + mids);
    }
    mids += at > 0;
    if (!(v->model = plush_pmx_create())) {
        free(measured), free(edges), free(mid_of);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    plush_arena keep = v->model->arena;
    *v->model = *m;
    v->model->arena = keep;
    plush_arena *arena = plush_pmx_arena(v->model);
    size_t nv = m->vertex_count + mids, ni = m->index_count + 9 * faces;
    plush_pmx_vertex *verts = plush_arena_array(arena, nv, sizeof *verts);
    float(*uvs)[4] = m->additional_uv ? plush_arena_array(arena, nv * m->additional_uv, sizeof *uvs) : NULL;
    plush_pmx_material *mats = plush_arena_array(arena, m->material_count, sizeof *mats);
    uint32_t *idx = plush_arena_array(arena, ni, sizeof *idx);
    if (!verts || (m->additional_uv && !uvs) || !mats || !idx) {
        free(measured), free(edges), free(mid_of);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    memcpy(verts, m->vertices, m->vertex_count * sizeof *verts);
    if (uvs)
        memcpy(uvs, m->additional_uvs, m->vertex_count * m->additional_uv * sizeof *uvs);
    for (size_t i = 0; i < at; i++) {
        if (i > 0 && edges[i].lo == edges[i - 1].lo && edges[i].hi == edges[i - 1].hi)
            continue;
        size_t id = mid_of[edges[i].owner];
        const plush_pmx_vertex *a = &m->vertices[edges[i].lo], *b = &m->vertices[edges[i].hi];
        plush_pmx_vertex *c = &verts[id];
        *c = *a;
        float len = 0;
        for (int k = 0; k < 3; k++) {
            c->position[k] = 0.5f * (a->position[k] + b->position[k]);
            c->normal[k] = a->normal[k] + b->normal[k];
            len += c->normal[k] * c->normal[k];
        }
        for (int k = 0; k < 3; k++)
            c->normal[k] = len > 0 ? c->normal[k] / sqrtf(len) : a->normal[k];
        for (int k = 0; k < 2; k++)
            c->uv[k] = 0.5f * (a->uv[k] + b->uv[k]);
        c->edge_scale = 0.5f * (a->edge_scale + b->edge_scale);
        mid_weights(a, b, c);
        for (size_t u = 0; uvs && u < m->additional_uv; u++)
            for (int k = 0; k < 4; k++)
                uvs[id * m->additional_uv + u][k] = 0.5f * (m->additional_uvs[edges[i].lo * m->additional_uv + u][k] +
                                                            m->additional_uvs[edges[i].hi * m->additional_uv + u][k]);
    }
    /* each measured face becomes its three corners' triangles and the middle one, wound as it was */
    memcpy(mats, m->materials, m->material_count * sizeof *mats);
    size_t out = 0, slot = 0;
    from = 0;
    for (size_t i = 0; i < m->material_count; i++) {
        size_t n = (size_t)(m->materials[i].index_count > 0 ? m->materials[i].index_count : 0);
        if (!measured[i]) {
            memcpy(idx + out, m->indices + from, n * sizeof *idx);
            out += n;
        } else {
            for (size_t t = 0; t < n; t += 3, slot += 3) {
                uint32_t c0 = m->indices[from + t], c1 = m->indices[from + t + 1], c2 = m->indices[from + t + 2];
                uint32_t m01 = mid_of[slot], m12 = mid_of[slot + 1], m20 = mid_of[slot + 2];
                uint32_t tri[4][3] = {{c0, m01, m20}, {m01, c1, m12}, {m20, m12, c2}, {m01, m12, m20}};
                memcpy(idx + out, tri, sizeof tri);
                out += 12;
            }
            mats[i].index_count = (int32_t)(4 * n);
        }
        from += n;
    }
    free(measured), free(edges), free(mid_of);
    v->model->vertex_count = nv;
    v->model->vertices = verts;
    v->model->additional_uvs = uvs;
    v->model->materials = mats;
    v->model->indices = idx;
    v->model->index_count = out;
    v->target = 4 * faces;
    v->triangles = 4 * faces;
    v->source_pieces = faces; /* here: the detailed surface's triangles */
    return PLUSH_OK;
}
