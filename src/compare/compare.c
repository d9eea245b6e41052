/* plush compare's engine: the measured surface, the metrics, and runs of the pipeline in lockstep. */
#include "plush/compare.h"
#include "plush/sys/core.h"
#include "plush/sys/pmx.h"
#include "plush/sys/scene.h"
#include "compare/compare_internal.h"
#include "core/common.h"

#include "core/geom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the surface ---------------------------------------------------------------------------------- */

/* Marks the faces of closed pieces and counts pieces. weld[v] is the welded id of vertex v (ids 0..ids-1). */
static plush_status find_closed_pieces(plush_compare_surface *s, const uint32_t *weld, uint32_t ids,
                                       plush_diag *diag)
{
    size_t nf = s->triangle_count;
    uint32_t *parent = malloc((ids ? ids : 1) * sizeof *parent);
    bool *open = calloc(ids ? ids : 1, 1), *counted = calloc(ids ? ids : 1, 1);
    plush__edge *edges = malloc((nf ? 3 * nf : 1) * sizeof *edges);
    if (!parent || !open || !counted || !edges) {
        free(parent), free(open), free(counted), free(edges);
        return plush__no_memory(diag);
    }
    plush__uf_init(parent, ids);
    size_t ne = 0;
    for (size_t f = 0; f < nf; f++) {
        uint32_t w[3] = {weld[s->triangles[f][0]], weld[s->triangles[f][1]], weld[s->triangles[f][2]]};
        if (w[0] == w[1] || w[1] == w[2] || w[0] == w[2])
            continue; /* degenerate after welding: no edges, encloses nothing */
        for (int k = 0; k < 3; k++) {
            uint32_t a = w[k], b = w[(k + 1) % 3];
            edges[ne++] = (plush__edge){.lo = a < b ? a : b, .hi = a < b ? b : a, .owner = (uint32_t)f, .slot = a < b};
            plush__uf_union(parent, a, b);
        }
    }
    qsort(edges, ne, sizeof *edges, plush__edge_order);
    for (size_t i = 0; i < ne;) {
        size_t j = i + 1;
        while (j < ne && edges[j].lo == edges[i].lo && edges[j].hi == edges[i].hi)
            j++;
        bool manifold = j - i == 2 && edges[i].slot != edges[i + 1].slot; /* slot: the face walks lo -> hi */
        if (!manifold)
            open[plush__uf_find(parent, edges[i].lo)] = true;
        i = j;
    }
    s->pieces = s->closed_pieces = 0;
    for (size_t f = 0; f < nf; f++) {
        uint32_t w0 = weld[s->triangles[f][0]], w1 = weld[s->triangles[f][1]], w2 = weld[s->triangles[f][2]];
        if (w0 == w1 || w1 == w2 || w0 == w2)
            continue;
        uint32_t r = plush__uf_find(parent, w0);
        s->triangle_closed[f] = !open[r];
        if (!counted[r]) {
            counted[r] = true;
            s->pieces++;
            s->closed_pieces += !open[r];
        }
    }
    free(parent), free(open), free(counted), free(edges);
    return PLUSH_OK;
}

/* Welded ids by exact position for the used vertices (weld[v] for used v). */
static plush_status weld_vertices(const plush_compare_surface *s, const float (*rest)[3], uint32_t *weld,
                                  uint32_t *ids, plush_diag *diag)
{
    size_t n = s->vertex_count;
    float(*points)[3] = malloc((n ? n : 1) * sizeof *points);
    uint32_t *node_of = malloc((n ? n : 1) * sizeof *node_of);
    size_t nodes = points && node_of ? 0 : SIZE_MAX;
    for (size_t i = 0; nodes == 0 && i < n; i++)
        memcpy(points[i], rest[s->vertices[i]], sizeof points[i]);
    if (nodes == 0)
        nodes = plush__weld_positions((const float(*)[3])points, n, node_of, NULL);
    for (size_t i = 0; nodes != SIZE_MAX && i < n; i++)
        weld[s->vertices[i]] = node_of[i];
    free(points);
    free(node_of);
    if (nodes == SIZE_MAX)
        return plush__no_memory(diag);
    *ids = (uint32_t)nodes;
    return PLUSH_OK;
}

plush_status plush__compare_surface_create(const float (*rest)[3], size_t vertex_count, const uint32_t *indices,
                                          size_t index_count, plush_compare_surface **out, plush_diag *diag)
{
    if (!out)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no place for the surface");
    *out = NULL;
    if (index_count % 3 != 0)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "face", -1, "%zu face indices is not whole triangles",
                               index_count);
    if (vertex_count > UINT32_MAX)
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "vertex", -1, "too many vertices (%zu)", vertex_count);
    for (size_t i = 0; i < index_count; i++)
        if (indices[i] >= vertex_count)
            return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "face", (int64_t)(i / 3),
                                   "vertex index %u out of range (%zu vertices)", indices[i], vertex_count);
    plush_compare_surface *s = calloc(1, sizeof *s);
    bool *used = calloc(vertex_count ? vertex_count : 1, 1);
    uint32_t *weld = malloc((vertex_count ? vertex_count : 1) * sizeof *weld);
    plush_status st = PLUSH_OK;
    if (!s || !used || !weld) {
        st = plush__no_memory(diag);
        goto fail;
    }
    s->triangle_count = index_count / 3;
    for (size_t i = 0; i < index_count; i++)
        s->vertex_count += !used[indices[i]], used[indices[i]] = true;
    s->vertices = plush_arena_array(&s->arena, s->vertex_count ? s->vertex_count : 1, sizeof *s->vertices);
    s->triangles = plush_arena_array(&s->arena, s->triangle_count ? s->triangle_count : 1, sizeof *s->triangles);
    s->triangle_closed = plush_arena_array(&s->arena, s->triangle_count ? s->triangle_count : 1, 1);
    if (!s->vertices || !s->triangles || !s->triangle_closed) {
        st = plush__no_memory(diag);
        goto fail;
    }
    memcpy(s->triangles, indices, index_count * sizeof *indices);
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    size_t n = 0;
    for (size_t v = 0; v < vertex_count; v++) {
        if (!used[v])
            continue;
        for (int k = 0; k < 3; k++) {
            if (!isfinite(rest[v][k])) {
                st = plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "vertex", (int64_t)v, "position is not finite");
                goto fail;
            }
            lo[k] = fminf(lo[k], rest[v][k]);
            hi[k] = fmaxf(hi[k], rest[v][k]);
        }
        s->vertices[n++] = (uint32_t)v;
    }
    if (n > 0)
        s->diagonal = sqrtf((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                            (hi[2] - lo[2]) * (hi[2] - lo[2]));
    uint32_t ids = 0;
    st = weld_vertices(s, rest, weld, &ids, diag);
    if (st == PLUSH_OK)
        st = find_closed_pieces(s, weld, ids, diag);
    if (st != PLUSH_OK)
        goto fail;
    s->rest_volume = plush__compare_volume(s, rest);
    free(used);
    free(weld);
    *out = s;
    return PLUSH_OK;
fail:
    free(used);
    free(weld);
    plush_compare_surface_free(s);
    return st;
}

plush_status plush__compare_part_mask(const plush_pmx_model *model, const char *const *materials, size_t count,
                                      bool *in_part, plush_diag *diag)
{
    memset(in_part, 0, model->material_count ? model->material_count : 1);
    for (size_t i = 0; i < count; i++) {
        plush_status st = plush_pmx_material_choose(model, materials[i], in_part, diag);
        if (st != PLUSH_OK)
            return st;
    }
    for (size_t mat = 0; mat < model->material_count; mat++)
        in_part[mat] = (count == 0 || in_part[mat]) && plush_pmx_material_soft_body(model, mat) < 0;
    return PLUSH_OK;
}

plush_status plush_compare_surface_from_model(const plush_pmx_model *model, plush_compare_surface **out,
                                              plush_diag *diag)
{
    return plush__compare_surface_of(model, NULL, 0, out, diag);
}

plush_status plush__compare_surface_of(const plush_pmx_model *model, const char *const *materials, size_t count,
                                      plush_compare_surface **out, plush_diag *diag)
{
    if (!model || !out)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no model or no place for the surface");
    *out = NULL;
    plush_status geometry = plush_pmx_require_geometry(model, diag);
    if (geometry != PLUSH_OK)
        return geometry;
    bool *in_part = calloc(model->material_count ? model->material_count : 1, 1);
    uint32_t *faces = malloc((model->index_count ? model->index_count : 1) * sizeof *faces);
    float(*rest)[3] = malloc((model->vertex_count ? model->vertex_count : 1) * sizeof *rest);
    plush_status st = PLUSH_OK;
    if (!in_part || !faces || !rest) {
        st = plush__no_memory(diag);
        goto done;
    }
    st = plush__compare_part_mask(model, materials, count, in_part, diag);
    size_t n = 0;
    for (size_t mat = 0; mat < model->material_count && st == PLUSH_OK; mat++) {
        size_t first = 0, faces_in = 0;
        st = plush_pmx_material_faces(model, mat, &first, &faces_in, diag);
        if (st == PLUSH_OK && in_part[mat]) {
            memcpy(faces + n, model->indices + first, faces_in * sizeof *faces);
            n += faces_in;
        }
    }
    for (size_t v = 0; v < model->vertex_count; v++)
        memcpy(rest[v], model->vertices[v].position, sizeof rest[v]);
    if (st == PLUSH_OK)
        st = plush__compare_surface_create((const float(*)[3])rest, model->vertex_count, faces, n, out, diag);
done:
    free(in_part);
    free(faces);
    free(rest);
    return st;
}

void plush_compare_surface_free(plush_compare_surface *surface)
{
    if (!surface)
        return;
    plush_arena_free(&surface->arena);
    free(surface);
}

double plush__compare_volume(const plush_compare_surface *s, const float (*p)[3])
{
    if (s->closed_pieces == 0 || s->vertex_count == 0)
        return NAN;
    /* The volume of a closed surface does not depend on the origin; one near the model keeps the products
     * small, so less cancels. */
    const float *o = p[s->vertices[0]];
    double sum = 0;
    for (size_t f = 0; f < s->triangle_count; f++) {
        if (!s->triangle_closed[f])
            continue;
        double a[3], b[3], c[3];
        for (int k = 0; k < 3; k++) {
            a[k] = (double)p[s->triangles[f][0]][k] - o[k];
            b[k] = (double)p[s->triangles[f][1]][k] - o[k];
            c[k] = (double)p[s->triangles[f][2]][k] - o[k];
        }
        sum += a[0] * (b[1] * c[2] - b[2] * c[1]) + a[1] * (b[2] * c[0] - b[0] * c[2]) +
               a[2] * (b[0] * c[1] - b[1] * c[0]);
    }
    return sum / 6.0;
}

/* The k-th smallest (0-based) of v[0..n), rearranging v: Hoare's selection with the middle element as pivot. */
static float select_kth(float *v, size_t n, size_t k)
{
    ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;
    while (lo < hi) {
        float pivot = v[lo + (hi - lo) / 2];
        ptrdiff_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                float t = v[i];
                v[i++] = v[j];
                v[j--] = t;
            }
        }
        /* now v[lo..j] <= pivot <= v[i..hi], and everything strictly between equals the pivot */
        if (kk <= j)
            hi = j;
        else if (kk >= i)
            lo = i;
        else
            return v[kk];
    }
    return v[kk];
}

void plush__compare_measure(const plush_compare_surface *s, const float (*pa)[3], const float (*na)[3],
                           const float (*pb)[3], const float (*nb)[3], float *distances, float *scratch,
                           plush_compare_error *out)
{
    memset(out, 0, sizeof *out);
    size_t n = s->vertex_count, normals = 0;
    if (n == 0)
        return;
    double sq = 0, angle_sum = 0, angle_max = 0;
    float dmax = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t v = s->vertices[i];
        double dx = (double)pa[v][0] - pb[v][0], dy = (double)pa[v][1] - pb[v][1], dz = (double)pa[v][2] - pb[v][2];
        double d2 = dx * dx + dy * dy + dz * dz;
        float d = (float)sqrt(d2);
        sq += d2;
        dmax = d > dmax ? d : dmax;
        scratch[i] = d;
        if (distances)
            distances[i] = d;
        double la = sqrt((double)na[v][0] * na[v][0] + (double)na[v][1] * na[v][1] + (double)na[v][2] * na[v][2]);
        double lb = sqrt((double)nb[v][0] * nb[v][0] + (double)nb[v][1] * nb[v][1] + (double)nb[v][2] * nb[v][2]);
        if (!(la > 0) || !(lb > 0) || !isfinite(la) || !isfinite(lb))
            continue;
        /* atan2 of |a x b| and a . b: exact 0 for equal normals, and accurate for small angles where acos
         * of the dot product is not */
        double ax = na[v][0], ay = na[v][1], az = na[v][2], bx = nb[v][0], by = nb[v][1], bz = nb[v][2];
        double cx = ay * bz - az * by, cy = az * bx - ax * bz, cz = ax * by - ay * bx;
        double deg = atan2(sqrt(cx * cx + cy * cy + cz * cz), ax * bx + ay * by + az * bz) *
                     (180.0 / 3.14159265358979323846);
        angle_sum += deg;
        angle_max = deg > angle_max ? deg : angle_max;
        normals++;
    }
    out->rms = sqrt(sq / (double)n);
    out->max = dmax;
    size_t rank = (size_t)ceil(0.95 * (double)n); /* nearest rank, 1-based */
    out->p95 = select_kth(scratch, n, (rank ? rank : 1) - 1);
    out->normal_mean = normals ? angle_sum / (double)normals : 0;
    out->normal_max = angle_max;
}

void plush__compare_surface_normals(const plush_compare_surface *s, const float (*positions)[3], float (*out)[3])
{
    for (size_t i = 0; i < s->vertex_count; i++)
        memset(out[s->vertices[i]], 0, sizeof out[0]);
    for (size_t f = 0; f < s->triangle_count; f++) {
        const uint32_t *t = s->triangles[f];
        const float *a = positions[t[0]], *b = positions[t[1]], *c = positions[t[2]];
        double u[3], w[3];
        for (int k = 0; k < 3; k++)
            u[k] = (double)b[k] - a[k], w[k] = (double)c[k] - a[k];
        /* the cross product is twice the face's area along its normal: area-weighted */
        float n[3] = {(float)(u[1] * w[2] - u[2] * w[1]), (float)(u[2] * w[0] - u[0] * w[2]),
                      (float)(u[0] * w[1] - u[1] * w[0])};
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++)
                out[t[j]][k] += n[k];
    }
}

/* ---- runs in lockstep ----------------------------------------------------------------------------- */

typedef struct compare_run {
    plush_compare_run_info info;
    char name[64];
    const plush_pmx_model *model;
    plush_scene *scene;
    plush_scene_timing last;
} compare_run;

struct plush_compare {
    plush_compare_desc desc;
    plush_compare_surface *surface;
    plush_compare_surface **pair_surface;  /* per pair: its own surface (pair.surface), or NULL */
    compare_run *runs;
    plush_compare_pair *pairs;
    plush_compare_run_frame *run_frames;
    plush_compare_pair_frame *pair_frames;
    float *distances;                /* pair_count * surface->vertex_count */
    float *scratch;
    float (*normals_a)[3], (*normals_b)[3]; /* a pair's own surface's normals of its two runs */
    float (*run_normals)[3];               /* per run (`normals_room` each): the compare's surface's normals */
    bool *run_normals_now;                 /* per run: computed for this step */
    size_t normals_room;
};

/* The scene mode a kind runs in; false with the reason when this build cannot run it. */
static bool scene_mode(int kind, int *mode, char *reason, size_t size)
{
    switch (kind) {
    case PLUSH_COMPARE_BONES:
        *mode = PLUSH_SCENE_BONES;
        return true;
    case PLUSH_COMPARE_PROXY:
        *mode = PLUSH_SCENE_PROXY;
        return true;
    case PLUSH_COMPARE_DIRECT:
        *mode = PLUSH_SCENE_DIRECT;
        return true;
    default:
        snprintf(reason, size, "unknown run kind %d", kind);
        return false;
    }
}

/* Passes a run's warnings on to the caller's diag, named by the run ("proxy run: ..."). */
static void forward_warnings(const compare_run *r, const plush_diag *local, plush_diag *diag)
{
    char prefix[96];
    snprintf(prefix, sizeof prefix, "%s run", r->name);
    plush__diag_forward(diag, local, prefix);
}

static plush_status create_run(plush_compare *c, size_t i, plush_diag *diag)
{
    const plush_compare_run_desc *rd = &c->desc.runs[i];
    compare_run *r = &c->runs[i];
    snprintf(r->name, sizeof r->name, "%s", rd->name ? rd->name : "run");
    r->info.name = r->name;
    r->info.kind = rd->kind;
    r->info.first_failure = -1;
    r->model = rd->model ? rd->model : c->desc.model;
    if (r->model->vertex_count < c->desc.model->vertex_count)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, (int64_t)i,
                               "run '%s': its model has %zu vertices, fewer than the %zu compared", r->name,
                               r->model->vertex_count, c->desc.model->vertex_count);
    int mode = 0;
    if (!scene_mode(rd->kind, &mode, r->info.reason, sizeof r->info.reason)) {
        if (rd->optional)
            return PLUSH_OK;
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, (int64_t)i, "run '%s': %s", r->name,
                               r->info.reason);
    }
    bool own = r->model == c->desc.model && rd->kind == PLUSH_COMPARE_PROXY;
    plush_scene_desc sd = {.model = r->model,
                           .motion = c->desc.motion,
                           .mode = mode,
                           .fps = c->desc.fps,
                           .world = c->desc.world,
                           .bind = c->desc.bind,
                           .skin = c->desc.skin,
                           .overrides = own ? c->desc.overrides : NULL,
                           .overrides_file = own ? c->desc.overrides_file : NULL,
                           .direct_cloth = c->desc.direct_cloth};
    plush_diag local;
    memset(&local, 0, sizeof local);
    local.file = diag->file;
    plush_diag_reset(&local);
    plush_status st = plush_scene_create(&sd, &r->scene, &local);
    if (st == PLUSH_OK) {
        r->info.available = true;
        forward_warnings(r, &local, diag);
        return PLUSH_OK;
    }
    if (!rd->optional) {
        const char *file = diag->file;
        *diag = local;
        diag->file = file;
        return st;
    }
    plush_diag shown = local;
    shown.file = NULL;
    plush_diag_format(&shown, r->info.reason, sizeof r->info.reason);
    return PLUSH_OK;
}

plush_status plush_compare_create(const plush_compare_desc *desc, plush_compare **out, plush_diag *diag)
{
    if (!desc || !desc->model || !out || !desc->runs || desc->run_count == 0 || (desc->pair_count && !desc->pairs))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no model, no runs or no place for the compare");
    *out = NULL;
    for (size_t p = 0; p < desc->pair_count; p++)
        if (desc->pairs[p].a >= desc->run_count || desc->pairs[p].b >= desc->run_count)
            return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, (int64_t)p, "pair %zu names a run out of range",
                                   p);
    plush_compare *c = calloc(1, sizeof *c);
    if (!c)
        return plush__no_memory(diag);
    c->desc = *desc;
    const plush_scene_bound_options *part = &desc->bind.bound;
    plush_status st = plush__compare_surface_of(desc->model, part->materials, part->material_count, &c->surface, diag);
    size_t nv = c->surface ? c->surface->vertex_count : 0, np = desc->pair_count;
    if (st == PLUSH_OK) {
        c->runs = calloc(desc->run_count, sizeof *c->runs);
        c->pairs = malloc((np ? np : 1) * sizeof *c->pairs);
        c->run_frames = calloc(desc->run_count, sizeof *c->run_frames);
        c->pair_frames = calloc(np ? np : 1, sizeof *c->pair_frames);
        c->distances = calloc((np ? np : 1) * (nv ? nv : 1), sizeof *c->distances);
        c->scratch = malloc((nv ? nv : 1) * sizeof *c->scratch);
        c->pair_surface = calloc(np ? np : 1, sizeof *c->pair_surface);
        if (!c->runs || !c->pairs || !c->run_frames || !c->pair_frames || !c->distances || !c->scratch ||
            !c->pair_surface)
            st = plush__no_memory(diag);
    }
    for (size_t p = 0; st == PLUSH_OK && p < np; p++) {
        if (!desc->pairs[p].surface)
            continue;
        st = plush__compare_surface_of(desc->pairs[p].surface, part->materials, part->material_count,
                                       &c->pair_surface[p], diag);
        if (st == PLUSH_OK && c->pair_surface[p]->vertex_count > nv)
            st = plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, (int64_t)p,
                                 "pair %zu: its surface has more vertices than the compare's", p);
    }
    if (st == PLUSH_OK && np) {
        memcpy(c->pairs, desc->pairs, np * sizeof *c->pairs);
        c->desc.pairs = c->pairs;
        /* room for the highest vertex any measured surface names (surfaces list theirs in increasing order) */
        size_t most = nv ? c->surface->vertices[nv - 1] + 1 : 1;
        for (size_t p = 0; p < np; p++) {
            const plush_compare_surface *ps = c->pair_surface[p];
            if (ps && ps->vertex_count && ps->vertices[ps->vertex_count - 1] + 1 > most)
                most = ps->vertices[ps->vertex_count - 1] + 1;
        }
        c->normals_a = malloc(most * sizeof *c->normals_a);
        c->normals_b = malloc(most * sizeof *c->normals_b);
        c->normals_room = most;
        c->run_normals = malloc(desc->run_count * most * sizeof *c->run_normals);
        c->run_normals_now = calloc(desc->run_count, sizeof *c->run_normals_now);
        if (!c->normals_a || !c->normals_b || !c->run_normals || !c->run_normals_now)
            st = plush__no_memory(diag);
    }
    for (size_t i = 0; st == PLUSH_OK && i < desc->run_count; i++)
        st = create_run(c, i, diag);
    if (st != PLUSH_OK) {
        plush_compare_destroy(c);
        return st;
    }
    *out = c;
    return PLUSH_OK;
}

static void step_run(plush_compare *c, size_t i, uint32_t frame, plush_diag *diag)
{
    compare_run *r = &c->runs[i];
    plush_compare_run_frame *rf = &c->run_frames[i];
    memset(rf, 0, sizeof *rf);
    rf->volume_ratio = NAN;
    if (!r->scene || r->info.stopped)
        return;
    plush_diag local;
    memset(&local, 0, sizeof local);
    local.file = diag->file;
    plush_diag_reset(&local);
    if (plush_scene_step(r->scene, frame, &local) != PLUSH_OK) {
        r->info.stopped = true;
        r->info.stopped_at = frame;
        plush_diag shown = local;
        shown.file = NULL;
        plush_diag_format(&shown, r->info.reason, sizeof r->info.reason);
        return;
    }
    forward_warnings(r, &local, diag);
    plush_scene_timing t;
    plush_scene_get_timing(r->scene, &t);
    rf->valid = true;
    rf->physics = t.physics - r->last.physics;
    rf->skinning = (t.skinning - r->last.skinning) + (t.frames - r->last.frames);
    r->last = t;
    double rest = c->surface->rest_volume;
    if (isfinite(rest) && rest != 0)
        rf->volume_ratio = plush__compare_volume(c->surface, plush_scene_positions(r->scene)) / rest;
    r->info.frames++;
    r->info.failures = plush_scene_failures(r->scene, &r->info.first_failure);
    r->info.cloth_solves = plush_scene_cloth_solves(r->scene, &r->info.cloth_unfinished);
}

/* Run i's normals of the compare's surface at this step, computed on first use. */
static float (*run_normals(plush_compare *c, size_t i))[3]
{
    float(*n)[3] = c->run_normals + i * c->normals_room;
    if (!c->run_normals_now[i]) {
        plush__compare_surface_normals(c->surface, plush_scene_positions(c->runs[i].scene), n);
        c->run_normals_now[i] = true;
    }
    return n;
}

plush_status plush_compare_step(plush_compare *c, uint32_t frame, plush_diag *diag)
{
    if (!c)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no compare");
    for (size_t i = 0; i < c->desc.run_count; i++)
        step_run(c, i, frame, diag);
    size_t nv = c->surface->vertex_count;
    for (size_t i = 0; c->run_normals_now && i < c->desc.run_count; i++)
        c->run_normals_now[i] = false;
    for (size_t p = 0; p < c->desc.pair_count; p++) {
        plush_compare_pair_frame *pf = &c->pair_frames[p];
        memset(pf, 0, sizeof *pf);
        size_t a = c->pairs[p].a, b = c->pairs[p].b;
        if (!c->run_frames[a].valid || !c->run_frames[b].valid)
            continue;
        pf->valid = true;
        /* The normals compared are the surface's own, from each run's positions the same way: the runs'
         * shading normals come from different places (the proxy rotates the model's authored normals, a
         * direct run has the soft body's geometric ones) and disagree by tens of degrees where the
         * positions agree to 1e-8. */
        const plush_compare_surface *surface = c->pair_surface[p] ? c->pair_surface[p] : c->surface;
        const float(*pa)[3] = plush_scene_positions(c->runs[a].scene), (*pb)[3] = plush_scene_positions(c->runs[b].scene);
        float(*na)[3] = c->normals_a, (*nb)[3] = c->normals_b;
        if (!c->pair_surface[p]) /* the compare's own surface: each run's normals once a step, for every pair */
            na = run_normals(c, a), nb = run_normals(c, b);
        else
            plush__compare_surface_normals(surface, pa, na), plush__compare_surface_normals(surface, pb, nb);
        plush__compare_measure(surface, pa, (const float(*)[3])na, pb, (const float(*)[3])nb, c->distances + p * nv,
                               c->scratch, &pf->error);
    }
    return PLUSH_OK;
}

const plush_compare_run_frame *plush_compare_run_frames(const plush_compare *c) { return c->run_frames; }
const plush_compare_pair_frame *plush_compare_pair_frames(const plush_compare *c) { return c->pair_frames; }
const plush_compare_surface *plush_compare_get_surface(const plush_compare *c) { return c->surface; }

void plush_compare_get_run_info(const plush_compare *c, size_t run, plush_compare_run_info *out)
{
    *out = c->runs[run].info;
}

const float (*plush_compare_positions(const plush_compare *c, size_t run))[3]
{
    return c->runs[run].scene ? plush_scene_positions(c->runs[run].scene) : NULL;
}

const float (*plush_compare_normals(const plush_compare *c, size_t run))[3]
{
    return c->runs[run].scene ? plush_scene_normals(c->runs[run].scene) : NULL;
}

const plush_scene *plush_compare_scene(const plush_compare *c, size_t run)
{
    return run < c->desc.run_count ? c->runs[run].scene : NULL;
}

const float *plush_compare_distances(const plush_compare *c, size_t pair)
{
    return c->distances + pair * c->surface->vertex_count;
}

void plush_compare_destroy(plush_compare *c)
{
    if (!c)
        return;
    if (c->runs)
        for (size_t i = 0; i < c->desc.run_count; i++)
            plush_scene_destroy(c->runs[i].scene);
    plush_compare_surface_free(c->surface);
    for (size_t p = 0; c->pair_surface && p < c->desc.pair_count; p++)
        plush_compare_surface_free(c->pair_surface[p]);
    free(c->pair_surface);
    free(c->runs);
    free(c->pairs);
    free(c->run_frames);
    free(c->pair_frames);
    free(c->distances);
    free(c->scratch);
    free(c->normals_a);
    free(c->normals_b);
    free(c->run_normals);
    free(c->run_normals_now);
    free(c);
}
