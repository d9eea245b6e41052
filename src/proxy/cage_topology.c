/* Cages: vertex normals, the topology check (closed 2-manifold or not) and the distance from the detailed
 * surface. */
#include "plush/cage.h"
#include "core/common.h"
#include "core/geom.h"
#include "plush/proxy.h"
#include "plush/sys/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* face_root: union-find over faces; faces sharing an edge join one piece. */
static void count_edges(half_edge *he, size_t n, uint32_t *face_root, plush_cage_topology *t)
{
    qsort(he, n, sizeof *he, half_edge_cmp);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && he[j].lo == he[i].lo && he[j].hi == he[i].hi) {
            plush__uf_union(face_root, he[i].face, he[j].face);
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
    plush__uf_init(parent, n);
    memset(degree, 0, n);
    size_t components = n;
    for (size_t i = 0; i < k; i++) {
        uint32_t a = (uint32_t)local_id(ids, n, link[i][0]), b = (uint32_t)local_id(ids, n, link[i][1]);
        if (++degree[a] > 2 || ++degree[b] > 2)
            return false;
        components -= plush__uf_union(parent, a, b);
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
    plush_status st = start && link && ids && parent && degree ? PLUSH_OK : plush__no_memory(diag);
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
        return plush__no_memory(diag);
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
        out->pieces += !bad[f] && plush__uf_find(face_root, (uint32_t)f) == f;
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
