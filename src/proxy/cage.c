/* Cages: welding the chosen materials, simplifying with meshoptimizer (core/loader.h), offsetting along normals,
 * the topology check and the distance from the detailed surface. */
#define _GNU_SOURCE
#include "plush/cage.h"
#include "plush/proxy.h"
#include "core/loader.h"
#include "proxy/cage_internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static plush_status no_memory(plush_diag *diag)
{
    return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
}

/* ---- welding across materials ------------------------------------------------------------------ */

static bool name_is(const plush_str *name, const char *s)
{
    size_t n = strlen(s);
    return name->len == n && (n == 0 || memcmp(name->s, s, n) == 0);
}

static plush_status choose(const plush_pmx_model *model, const char *const *names, size_t count, bool *chosen,
                           plush_diag *diag)
{
    for (size_t m = 0; m < model->material_count; m++)
        chosen[m] = count == 0;
    for (size_t k = 0; k < count; k++) {
        const char *want = names[k] ? names[k] : "";
        bool found = false;
        for (size_t m = 0; m < model->material_count; m++)
            if (name_is(&model->materials[m].name, want))
                chosen[m] = found = true;
        if (!found)
            return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no material named \"%s\"", want);
    }
    return PLUSH_OK;
}

/* Adding 0.0f turns -0 into +0, so positions that compare equal hash equally. */
static size_t position_hash(const float p[3])
{
    uint64_t h = 1469598103934665603u;
    for (int k = 0; k < 3; k++) {
        float f = p[k] + 0.0f;
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        h = (h ^ bits) * 1099511628211u;
        h ^= h >> 31;
    }
    return (size_t)h;
}

typedef struct welder {
    uint32_t *slots;              /* node + 1, 0 empty */
    size_t mask;
    float (*pos)[3];
    float (*nrm)[3];
    int32_t *source;
    size_t count;
} welder;

static uint32_t weld_vertex(welder *w, const plush_pmx_vertex *v, uint32_t index)
{
    size_t i = position_hash(v->position) & w->mask;
    for (;; i = (i + 1) & w->mask) {
        uint32_t s = w->slots[i];
        if (s == 0)
            break;
        const float *q = w->pos[s - 1];
        if (q[0] == v->position[0] && q[1] == v->position[1] && q[2] == v->position[2]) {
            for (int k = 0; k < 3; k++)
                w->nrm[s - 1][k] += v->normal[k];
            return s - 1;
        }
    }
    uint32_t node = (uint32_t)w->count++;
    memcpy(w->pos[node], v->position, sizeof w->pos[node]);
    memcpy(w->nrm[node], v->normal, sizeof w->nrm[node]);
    w->source[node] = (int32_t)index;
    w->slots[i] = node + 1;
    return node;
}

/* The chosen faces, each index checked; *total gets their index count. */
static plush_status chosen_faces(const plush_pmx_model *model, const bool *chosen, size_t *total,
                                 plush_diag *diag)
{
    size_t first = 0;
    *total = 0;
    for (size_t m = 0; m < model->material_count; m++) {
        int32_t n = model->materials[m].index_count;
        if (n < 0 || n % 3 != 0 || (size_t)n > model->index_count - first)
            return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "material", (int64_t)m,
                                   "face index count %ld does not fit the %zu face indices", (long)n,
                                   model->index_count);
        for (size_t i = first; chosen[m] && i < first + (size_t)n; i++)
            if (model->indices[i] >= model->vertex_count)
                return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "material", (int64_t)m,
                                       "face index %zu: vertex %lu out of range (%zu vertices)", i,
                                       (unsigned long)model->indices[i], model->vertex_count);
        *total += chosen[m] ? (size_t)n : 0;
        first += (size_t)n;
    }
    return PLUSH_OK;
}

static plush_status weld_faces(const plush_pmx_model *model, const bool *chosen, size_t total, welder *w,
                               plush_arena *arena, plush_cage_mesh *out, plush_diag *diag)
{
    int32_t *node_of = malloc((model->vertex_count ? model->vertex_count : 1) * sizeof *node_of);
    uint32_t(*tris)[3] = malloc((total / 3 ? total / 3 : 1) * sizeof *tris);
    if (!node_of || !tris) {
        free(node_of);
        free(tris);
        return no_memory(diag);
    }
    for (size_t v = 0; v < model->vertex_count; v++)
        node_of[v] = -1;
    size_t first = 0, t = 0;
    for (size_t m = 0; m < model->material_count; m++) {
        size_t n = (size_t)model->materials[m].index_count;
        for (size_t i = first; chosen[m] && i < first + n; i += 3) {
            uint32_t f[3];
            for (int k = 0; k < 3; k++) {
                uint32_t v = model->indices[i + (size_t)k];
                if (node_of[v] < 0)
                    node_of[v] = (int32_t)weld_vertex(w, &model->vertices[v], v);
                f[k] = (uint32_t)node_of[v];
            }
            if (f[0] != f[1] && f[1] != f[2] && f[0] != f[2])
                memcpy(tris[t++], f, sizeof f);
        }
        first += n;
    }
    size_t nv = w->count ? w->count : 1, nt = t ? t : 1;
    out->positions = plush_arena_array(arena, nv, sizeof *out->positions);
    out->normals = plush_arena_array(arena, nv, sizeof *out->normals);
    out->source = plush_arena_array(arena, nv, sizeof *out->source);
    out->triangles = plush_arena_array(arena, nt, sizeof *out->triangles);
    plush_status st = PLUSH_OK;
    if (out->positions && out->normals && out->source && out->triangles) {
        memcpy(out->positions, w->pos, w->count * sizeof *w->pos);
        memcpy(out->normals, w->nrm, w->count * sizeof *w->nrm);
        memcpy(out->source, w->source, w->count * sizeof *w->source);
        memcpy(out->triangles, tris, t * sizeof *tris);
        out->vertex_count = w->count;
        out->triangle_count = t;
    } else {
        st = no_memory(diag);
    }
    free(node_of);
    free(tris);
    return st;
}

plush_status plush_cage_weld(const plush_pmx_model *model, const char *const *materials, size_t material_count,
                             plush_arena *arena, plush_cage_mesh *out, plush_diag *diag)
{
    memset(out, 0, sizeof *out);
    if (model->vertex_count > INT32_MAX || model->index_count > (size_t)UINT32_MAX)
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, NULL, -1, "mesh too large");
    bool *chosen = calloc(model->material_count ? model->material_count : 1, sizeof *chosen);
    if (!chosen)
        return no_memory(diag);
    size_t total = 0;
    plush_status st = choose(model, materials, material_count, chosen, diag);
    if (st == PLUSH_OK)
        st = chosen_faces(model, chosen, &total, diag);
    if (st != PLUSH_OK) {
        free(chosen);
        return st;
    }
    /* Distinct vertices bound the node count; the table stays at most half full. */
    size_t most = total < model->vertex_count ? total : model->vertex_count;
    size_t cap = 16;
    while (cap < 2 * most)
        cap *= 2;
    welder w = {.slots = calloc(cap, sizeof *w.slots), .mask = cap - 1, .pos = malloc((most + 1) * sizeof *w.pos),
                .nrm = malloc((most + 1) * sizeof *w.nrm), .source = malloc((most + 1) * sizeof *w.source)};
    st = w.slots && w.pos && w.nrm && w.source ? weld_faces(model, chosen, total, &w, arena, out, diag)
                                               : no_memory(diag);
    free(w.slots);
    free(w.pos);
    free(w.nrm);
    free(w.source);
    free(chosen);
    return st;
}

/* ---- meshoptimizer, loaded on first use by the core loader ------------------------------------ */

bool plush_proxy_simplify_available(plush_diag *diag)
{
    return plush__meshopt_load(diag) != NULL;
}

/* ---- simplification ---------------------------------------------------------------------------- */

typedef struct face_key {
    uint32_t v[3];
    uint32_t face;
} face_key;

static int face_key_cmp(const void *pa, const void *pb)
{
    const face_key *a = pa, *b = pb;
    for (int k = 0; k < 3; k++)
        if (a->v[k] != b->v[k])
            return a->v[k] < b->v[k] ? -1 : 1;
    return a->face < b->face ? -1 : a->face > b->face;
}

static void sort3(const unsigned in[3], uint32_t out[3])
{
    uint32_t a = in[0], b = in[1], c = in[2], t;
    if (a > b) t = a, a = b, b = t;
    if (b > c) t = b, b = c, c = t;
    if (a > b) t = a, a = b, b = t;
    out[0] = a, out[1] = b, out[2] = c;
}

/* Drops faces naming a vertex twice and repeats of the same three vertices (the first one stays), in
 * place; returns the index count left. */
static size_t clean_faces(unsigned *idx, size_t n, plush_diag *diag, bool *ok)
{
    size_t faces = n / 3;
    face_key *keys = malloc((faces ? faces : 1) * sizeof *keys);
    uint8_t *drop = calloc(faces ? faces : 1, 1);
    *ok = keys && drop;
    if (!*ok) {
        free(keys);
        free(drop);
        no_memory(diag);
        return 0;
    }
    for (size_t f = 0; f < faces; f++) {
        sort3(idx + 3 * f, keys[f].v);
        keys[f].face = (uint32_t)f;
        drop[f] = keys[f].v[0] == keys[f].v[1] || keys[f].v[1] == keys[f].v[2];
    }
    qsort(keys, faces, sizeof *keys, face_key_cmp);
    for (size_t f = 1; f < faces; f++)
        if (memcmp(keys[f].v, keys[f - 1].v, sizeof keys[f].v) == 0)
            drop[keys[f].face] = 1;
    size_t kept = 0;
    for (size_t f = 0; f < faces; f++)
        if (!drop[f]) {
            memmove(idx + 3 * kept, idx + 3 * f, 3 * sizeof *idx);
            kept++;
        }
    free(keys);
    free(drop);
    return 3 * kept;
}

/* The ladder: each step starts from the best result so far and runs only while it is above the limit. */
static size_t run_ladder(const plush__meshopt *mo, const plush_cage_mesh *src, size_t target, size_t limit, bool sloppy,
                         unsigned *idx, unsigned *tmp, plush_cage_result *res)
{
    size_t n = 3 * src->triangle_count;
    const float *pos = &src->positions[0][0];
    float scale = mo->meshopt_simplifyScale(pos, src->vertex_count, sizeof *src->positions);
    float err = 0;
    res->method = PLUSH_CAGE_COPY;
    if (n / 3 <= target)
        return n;
    static const unsigned flags[2] = {meshopt_SimplifyLockBorder, 0};
    for (int step = 0; step < 2 && n / 3 > limit; step++) {
        size_t m = mo->meshopt_simplify(tmp, idx, n, pos, src->vertex_count, sizeof *src->positions, 3 * target,
                                        FLT_MAX, flags[step], &err);
        res->method = step == 0 ? PLUSH_CAGE_LOCKED_BORDER : PLUSH_CAGE_BORDER;
        if (m > 0 && m < n) {
            memcpy(idx, tmp, m * sizeof *idx);
            n = m;
            res->error = err * scale;
        }
    }
    if (sloppy && n / 3 > limit) {
        size_t m = mo->meshopt_simplifySloppy(tmp, idx, n, pos, src->vertex_count, sizeof *src->positions,
                                              3 * target, FLT_MAX, &err);
        res->method = PLUSH_CAGE_SLOPPY;
        if (m > 0) {
            memcpy(idx, tmp, m * sizeof *idx);
            n = m;
            res->error = fmaxf(res->error, err * scale);
        }
    }
    return n;
}

/* Keeps the vertices the faces use, in increasing source order, into out. */
static plush_status compact(const plush_cage_mesh *src, unsigned *idx, size_t n, plush_arena *arena,
                            plush_cage_mesh *out, plush_diag *diag)
{
    uint32_t *remap = malloc((src->vertex_count ? src->vertex_count : 1) * sizeof *remap);
    if (!remap)
        return no_memory(diag);
    for (size_t v = 0; v < src->vertex_count; v++)
        remap[v] = UINT32_MAX;
    for (size_t i = 0; i < n; i++)
        remap[idx[i]] = 0;
    size_t count = 0;
    for (size_t v = 0; v < src->vertex_count; v++)
        if (remap[v] == 0)
            remap[v] = (uint32_t)count++;
    out->positions = plush_arena_array(arena, count ? count : 1, sizeof *out->positions);
    out->normals = plush_arena_array(arena, count ? count : 1, sizeof *out->normals);
    out->source = plush_arena_array(arena, count ? count : 1, sizeof *out->source);
    out->triangles = plush_arena_array(arena, n / 3 ? n / 3 : 1, sizeof *out->triangles);
    if (!out->positions || !out->normals || !out->source || !out->triangles) {
        free(remap);
        return no_memory(diag);
    }
    for (size_t v = 0; v < src->vertex_count; v++) {
        if (remap[v] == UINT32_MAX)
            continue;
        memcpy(out->positions[remap[v]], src->positions[v], sizeof *out->positions);
        if (src->normals)
            memcpy(out->normals[remap[v]], src->normals[v], sizeof *out->normals);
        out->source[remap[v]] = (int32_t)v;
    }
    for (size_t i = 0; i < n; i++)
        out->triangles[i / 3][i % 3] = remap[idx[i]];
    out->vertex_count = count;
    out->triangle_count = n / 3;
    if (!src->normals)
        out->normals = NULL;
    free(remap);
    return PLUSH_OK;
}

static plush_status check_source(const plush_cage_mesh *src, const plush_cage_options *o, plush_diag *diag)
{
    if (!o || o->target_triangles == 0)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "the target triangle count must be at least 1");
    if (!isfinite(o->offset) || !(o->tolerance >= 0) || !isfinite(o->tolerance))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "offset and tolerance must be finite");
    if (src->triangle_count == 0)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "the mesh has no triangles");
    if (src->vertex_count > UINT32_MAX || src->triangle_count > (size_t)UINT32_MAX / 3)
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, NULL, -1, "mesh too large");
    for (size_t v = 0; v < src->vertex_count; v++)
        for (int k = 0; k < 3; k++)
            if (!isfinite(src->positions[v][k]))
                return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "vertex", (int64_t)v, "position is not finite");
    for (size_t t = 0; t < src->triangle_count; t++)
        for (int k = 0; k < 3; k++)
            if (src->triangles[t][k] >= src->vertex_count)
                return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "face", (int64_t)t,
                                       "vertex %lu out of range (%zu vertices)",
                                       (unsigned long)src->triangles[t][k], src->vertex_count);
    return PLUSH_OK;
}

static void offset_vertices(plush_cage_mesh *m, float d, plush_diag *diag, bool *ok)
{
    float(*n)[3] = malloc((m->vertex_count ? m->vertex_count : 1) * sizeof *n);
    *ok = n != NULL;
    if (!n) {
        no_memory(diag);
        return;
    }
    plush_cage_vertex_normals(m, n);
    for (size_t v = 0; v < m->vertex_count; v++)
        for (int k = 0; k < 3; k++)
            m->positions[v][k] += d * n[v][k];
    free(n);
}

plush_status plush_cage_simplify(const plush_cage_mesh *src, const plush_cage_options *options, plush_arena *arena,
                                 plush_cage_mesh *out, plush_cage_result *result, plush_diag *diag)
{
    memset(out, 0, sizeof *out);
    memset(result, 0, sizeof *result);
    plush_status st = check_source(src, options, diag);
    if (st != PLUSH_OK)
        return st;
    if (options->wrap)
        return plush_cage_wrap_simplify(src, options, arena, out, result, diag);
    return plush_cage_simplify_ladder(src, options, true, arena, out, result, diag);
}

plush_status plush_cage_simplify_ladder(const plush_cage_mesh *src, const plush_cage_options *options, bool sloppy,
                                        plush_arena *arena, plush_cage_mesh *out, plush_cage_result *result,
                                        plush_diag *diag)
{
    memset(out, 0, sizeof *out);
    memset(result, 0, sizeof *result);
    plush_status st = check_source(src, options, diag);
    if (st != PLUSH_OK)
        return st;
    const plush__meshopt *mo = plush__meshopt_load(diag);
    if (!mo)
        return PLUSH_E_LIBRARY;
    size_t n = 3 * src->triangle_count;
    unsigned *idx = malloc(n * sizeof *idx), *tmp = malloc(n * sizeof *tmp);
    if (!idx || !tmp) {
        st = no_memory(diag);
        goto done;
    }
    memcpy(idx, src->triangles, n * sizeof *idx);
    float tolerance = options->tolerance > 0 ? options->tolerance : 0.1f;
    size_t target = options->target_triangles;
    double limit_d = floor((double)target * (1.0 + tolerance));
    size_t limit = limit_d > (double)SIZE_MAX / 2 ? SIZE_MAX / 2 : (size_t)limit_d;
    result->source_triangles = src->triangle_count;
    n = run_ladder(mo, src, target, limit, sloppy, idx, tmp, result);
    bool ok;
    n = clean_faces(idx, n, diag, &ok);
    if (!ok) {
        st = PLUSH_E_NOMEM;
        goto done;
    }
    st = compact(src, idx, n, arena, out, diag);
    if (st == PLUSH_OK && options->offset != 0) {
        offset_vertices(out, options->offset, diag, &ok);
        st = ok ? PLUSH_OK : PLUSH_E_NOMEM;
    }
    result->triangles = out->triangle_count;
    result->vertices = out->vertex_count;
    result->reached = out->triangle_count <= limit;
done:
    free(idx);
    free(tmp);
    return st;
}

/* ---- normals ----------------------------------------------------------------------------------- */

void plush_cage_vertex_normals(const plush_cage_mesh *mesh, float (*out)[3])
{
    size_t nv = mesh->vertex_count;
    for (size_t v = 0; v < nv; v++)
        out[v][0] = out[v][1] = out[v][2] = 0;
    for (size_t t = 0; t < mesh->triangle_count; t++) {
        const uint32_t *f = mesh->triangles[t];
        if (f[0] >= nv || f[1] >= nv || f[2] >= nv)
            continue;
        const float *a = mesh->positions[f[0]], *b = mesh->positions[f[1]], *c = mesh->positions[f[2]];
        float e[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, g[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        float n[3] = {e[1] * g[2] - e[2] * g[1], e[2] * g[0] - e[0] * g[2], e[0] * g[1] - e[1] * g[0]};
        for (int k = 0; k < 3; k++)
            for (int j = 0; j < 3; j++)
                out[f[k]][j] += n[j];
    }
    /* The winding convention is the model's: its own normals say which side is out. */
    double agree = 0;
    for (size_t v = 0; mesh->normals && v < nv; v++)
        agree += (double)out[v][0] * mesh->normals[v][0] + (double)out[v][1] * mesh->normals[v][1] +
                 (double)out[v][2] * mesh->normals[v][2];
    float sign = agree < 0 ? -1.0f : 1.0f;
    for (size_t v = 0; v < nv; v++) {
        float *n = out[v];
        float len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]), s = sign;
        if (!(len > 0 && isfinite(len)) && mesh->normals) {
            memcpy(n, mesh->normals[v], 3 * sizeof *n);
            len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
            s = 1.0f;
        }
        s = len > 0 && isfinite(len) ? s / len : 0;
        for (int k = 0; k < 3; k++)
            n[k] *= s;
    }
}

/* ---- topology ---------------------------------------------------------------------------------- */

typedef struct half_edge {
    uint32_t lo, hi;
    uint32_t face;
    uint8_t forward;              /* the face runs lo -> hi */
} half_edge;

static int half_edge_cmp(const void *pa, const void *pb)
{
    const half_edge *a = pa, *b = pb;
    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    if (a->hi != b->hi)
        return a->hi < b->hi ? -1 : 1;
    if (a->forward != b->forward)
        return (int)a->forward - (int)b->forward;
    return a->face < b->face ? -1 : a->face > b->face;
}

static uint32_t find_root(uint32_t *parent, uint32_t x);

/* face_root: union-find over faces; faces sharing an edge join one piece. */
static void count_edges(half_edge *he, size_t n, uint32_t *face_root, plush_cage_topology *t)
{
    qsort(he, n, sizeof *he, half_edge_cmp);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && he[j].lo == he[i].lo && he[j].hi == he[i].hi) {
            uint32_t ra = find_root(face_root, he[i].face), rb = find_root(face_root, he[j].face);
            if (ra != rb)
                face_root[ra > rb ? ra : rb] = ra < rb ? ra : rb;
            j++;
        }
        t->edges++;
        if (j - i == 1)
            t->border_edges++;
        else if (j - i > 2)
            t->nonmanifold_edges++;
        else if (he[i].forward == he[i + 1].forward)
            t->misoriented_edges++;
        i = j;
    }
}

static uint32_t find_root(uint32_t *parent, uint32_t x)
{
    while (parent[x] != x)
        x = parent[x] = parent[parent[x]];
    return x;
}

static int u32_cmp(const void *pa, const void *pb)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    return a < b ? -1 : a > b;
}

static size_t local_id(const uint32_t *ids, size_t n, uint32_t v)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ids[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The faces around a vertex make one fan when their opposite edges (the vertex's link) form one path or
 * one cycle: every link vertex meets at most two link edges, and the link is connected. */
static bool vertex_fan_ok(const uint32_t (*link)[2], size_t k, uint32_t *ids, uint32_t *parent, uint8_t *degree)
{
    for (size_t i = 0; i < k; i++)
        ids[2 * i] = link[i][0], ids[2 * i + 1] = link[i][1];
    qsort(ids, 2 * k, sizeof *ids, u32_cmp);
    size_t n = 0;
    for (size_t i = 0; i < 2 * k; i++)
        if (n == 0 || ids[n - 1] != ids[i])
            ids[n++] = ids[i];
    for (size_t i = 0; i < n; i++)
        parent[i] = (uint32_t)i, degree[i] = 0;
    size_t components = n;
    for (size_t i = 0; i < k; i++) {
        uint32_t a = (uint32_t)local_id(ids, n, link[i][0]), b = (uint32_t)local_id(ids, n, link[i][1]);
        if (++degree[a] > 2 || ++degree[b] > 2)
            return false;
        uint32_t ra = find_root(parent, a), rb = find_root(parent, b);
        if (ra != rb)
            parent[ra] = rb, components--;
    }
    return components == 1;
}

static plush_status count_fans(const plush_cage_mesh *m, const uint8_t *bad_face, plush_cage_topology *t,
                               plush_diag *diag)
{
    size_t nv = m->vertex_count, nt = m->triangle_count;
    size_t *start = calloc(nv + 1, sizeof *start);
    uint32_t(*link)[2] = malloc((3 * nt + 1) * sizeof *link);
    uint32_t *ids = malloc((6 * nt + 1) * sizeof *ids), *parent = malloc((6 * nt + 1) * sizeof *parent);
    uint8_t *degree = malloc(6 * nt + 1);
    plush_status st = start && link && ids && parent && degree ? PLUSH_OK : no_memory(diag);
    for (size_t f = 0; st == PLUSH_OK && f < nt; f++)
        for (int k = 0; k < 3 && !bad_face[f]; k++)
            start[m->triangles[f][k] + 1]++;
    for (size_t v = 0; st == PLUSH_OK && v < nv; v++)
        start[v + 1] += start[v];
    for (size_t f = 0; st == PLUSH_OK && f < nt; f++)
        for (int k = 0; k < 3 && !bad_face[f]; k++) {
            const uint32_t *tri = m->triangles[f];
            size_t at = start[tri[k]]++;
            link[at][0] = tri[(k + 1) % 3];
            link[at][1] = tri[(k + 2) % 3];
        }
    /* The fill moved each start to the next vertex's; walk back down. */
    for (size_t v = nv; st == PLUSH_OK && v > 0; v--)
        start[v] = start[v - 1];
    if (st == PLUSH_OK)
        start[0] = 0;
    for (size_t v = 0; st == PLUSH_OK && v < nv; v++) {
        size_t k = start[v + 1] - start[v];
        if (k == 0)
            t->isolated_vertices++;
        else if (!vertex_fan_ok((const uint32_t(*)[2])(link + start[v]), k, ids, parent, degree))
            t->nonmanifold_vertices++;
    }
    free(start);
    free(link);
    free(ids);
    free(parent);
    free(degree);
    return st;
}

plush_status plush_cage_check(const plush_cage_mesh *mesh, plush_cage_topology *out, plush_diag *diag)
{
    memset(out, 0, sizeof *out);
    size_t nt = mesh->triangle_count;
    for (size_t f = 0; f < nt; f++)
        for (int k = 0; k < 3; k++)
            if (mesh->triangles[f][k] >= mesh->vertex_count)
                return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "face", (int64_t)f,
                                       "vertex %lu out of range (%zu vertices)",
                                       (unsigned long)mesh->triangles[f][k], mesh->vertex_count);
    if (nt > SIZE_MAX / 6 / sizeof(uint32_t) || nt >= UINT32_MAX)
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, NULL, -1, "mesh too large");
    half_edge *he = malloc((3 * nt + 1) * sizeof *he);
    uint8_t *bad = calloc(nt + 1, 1);
    uint32_t *face_root = malloc((nt + 1) * sizeof *face_root);
    if (!he || !bad || !face_root) {
        free(he);
        free(bad);
        free(face_root);
        return no_memory(diag);
    }
    size_t n = 0;
    for (size_t f = 0; f < nt; f++) {
        const uint32_t *v = mesh->triangles[f];
        face_root[f] = (uint32_t)f;
        bad[f] = v[0] == v[1] || v[1] == v[2] || v[0] == v[2];
        out->degenerate_faces += bad[f];
        for (int k = 0; k < 3 && !bad[f]; k++) {
            uint32_t a = v[k], b = v[(k + 1) % 3];
            he[n++] = (half_edge){.lo = a < b ? a : b, .hi = a < b ? b : a, .face = (uint32_t)f, .forward = a < b};
        }
    }
    count_edges(he, n, face_root, out);
    for (size_t f = 0; f < nt; f++)
        out->pieces += !bad[f] && find_root(face_root, (uint32_t)f) == f;
    free(he);
    free(face_root);
    plush_status st = count_fans(mesh, bad, out, diag);
    free(bad);
    out->closed_manifold = st == PLUSH_OK && nt > 0 && out->border_edges == 0 && out->nonmanifold_edges == 0 &&
                           out->misoriented_edges == 0 && out->nonmanifold_vertices == 0 &&
                           out->degenerate_faces == 0 && out->isolated_vertices == 0;
    return st;
}

/* ---- distance ---------------------------------------------------------------------------------- */

plush_status plush_cage_distance(const plush_cage_mesh *cage, const float (*points)[3], size_t count, float *max,
                                 float *mean, plush_diag *diag)
{
    *max = *mean = 0;
    if (count == 0)
        return PLUSH_OK;
    plush_proxy_mesh proxy = {.nodes = (const float(*)[3])cage->positions,
                              .node_count = cage->vertex_count,
                              .triangles = (const uint32_t(*)[3])cage->triangles,
                              .triangle_count = cage->triangle_count};
    plush_proxy_binding *b = NULL;
    plush_status st = plush_proxy_bind(&proxy, points, count, &(plush_proxy_bind_options){.threads = 2}, &b, diag);
    if (st != PLUSH_OK)
        return st;
    double sum = 0, top = 0;
    for (size_t i = 0; i < count; i++) {
        double d = b->distances[i][0];
        sum += d;
        top = d > top ? d : top;
    }
    *max = (float)top;
    *mean = (float)(sum / (double)count);
    plush_proxy_binding_free(b);
    return PLUSH_OK;
}
