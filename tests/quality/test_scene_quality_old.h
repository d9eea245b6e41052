/* The quality measure as it was before the kernels were rewritten (gather every node, then per face and
 * per edge): the reference tests/quality/test_scene_quality.c holds the new one to. Included by that test only. */
#include "core/geom.h"
#include "plush/sys/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Strain histogram over the float's bits: exponent and 8 mantissa bits (0.4% wide bins), 2^-10 .. 2^10. */
#define Q_SHIFT 15
#define Q_LOW 0x3A800000u   /* 2^-10 */
#define Q_HIGH 0x44800000u  /* 2^10 */
#define Q_BINS (((Q_HIGH - Q_LOW) >> Q_SHIFT) + 1)
/* Crease histogram: 0.05 degree bins over 0 .. 180. */
#define C_BINS 3601

typedef struct old_quality old_quality;
static void old_quality_destroy(old_quality *q);

typedef struct q_edge {
    uint32_t lo, hi;
    int32_t f0, f1;               /* the faces of a fold (f1 -1: not a fold) */
    float rest_length, rest_angle;
} q_edge;

struct old_quality {
    size_t vertex_count, node_count, face_count, edge_count, fold_count;
    uint32_t *first;              /* per node: a vertex standing for it */
    uint32_t (*faces)[3];         /* over nodes, degenerate ones left out */
    q_edge *edges;
    bool closed;
    double rest_volume;
    float (*nodes)[3], (*normals)[3];
    uint32_t *strain_bins, *crease_bins;
};

typedef struct half_edge {
    uint32_t lo, hi, face;
} half_edge;

static int half_cmp(const void *pa, const void *pb)
{
    const half_edge *a = pa, *b = pb;
    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    if (a->hi != b->hi)
        return a->hi < b->hi ? -1 : 1;
    return a->face < b->face ? -1 : a->face > b->face;
}

static void face_normal(const float (*p)[3], const uint32_t f[3], float n[3])
{
    float u[3], v[3];
    for (int k = 0; k < 3; k++)
        u[k] = p[f[1]][k] - p[f[0]][k], v[k] = p[f[2]][k] - p[f[0]][k];
    n[0] = u[1] * v[2] - u[2] * v[1];
    n[1] = u[2] * v[0] - u[0] * v[2];
    n[2] = u[0] * v[1] - u[1] * v[0];
}

/* acos within 7e-5 rad (Abramowitz & Stegun 4.4.45): the crease of 180k folds per frame must cost little,
 * and its histogram bins are 0.05 degrees (9e-4 rad) wide. */
static float fast_acos(float x)
{
    float a = fabsf(x);
    a = a > 1.0f ? 1.0f : a;
    float r = sqrtf(1.0f - a) * (1.5707288f + a * (-0.2121144f + a * (0.0742610f - 0.0187293f * a)));
    return x < 0 ? 3.14159265f - r : r;
}

/* The angle between two unit normals, in degrees (NaN when a face has no area). */
static float normal_angle(const float a[3], const float b[3])
{
    return fast_acos(a[0] * b[0] + a[1] * b[1] + a[2] * b[2]) * (180.0f / 3.14159265f);
}

static float edge_length(const float (*p)[3], uint32_t a, uint32_t b)
{
    float d0 = p[a][0] - p[b][0], d1 = p[a][1] - p[b][1], d2 = p[a][2] - p[b][2];
    return sqrtf(d0 * d0 + d1 * d1 + d2 * d2);
}

static double volume(const float (*p)[3], const uint32_t (*faces)[3], size_t n)
{
    double v = 0;
    for (size_t f = 0; f < n; f++) {
        const float *a = p[faces[f][0]], *b = p[faces[f][1]], *c = p[faces[f][2]];
        v += (double)a[0] * ((double)b[1] * c[2] - (double)b[2] * c[1]) -
             (double)a[1] * ((double)b[0] * c[2] - (double)b[2] * c[0]) +
             (double)a[2] * ((double)b[0] * c[1] - (double)b[1] * c[0]);
    }
    return v / 6.0;
}

static void gather(old_quality *q, const float (*positions)[3])
{
    for (size_t k = 0; k < q->node_count; k++)
        memcpy(q->nodes[k], positions[q->first[k]], sizeof q->nodes[k]);
    for (size_t f = 0; f < q->face_count; f++) {
        float *n = q->normals[f];
        face_normal((const float(*)[3])q->nodes, q->faces[f], n);
        float len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        float inv = len > 0 ? 1.0f / len : NAN;
        n[0] *= inv, n[1] *= inv, n[2] *= inv;
    }
}

/* Edges from the faces' half-edges, sorted: an edge shared by exactly two faces is a fold. */
static bool build_edges(old_quality *q)
{
    size_t nh = 3 * q->face_count;
    half_edge *h = malloc((nh ? nh : 1) * sizeof *h);
    q->edges = malloc((nh ? nh : 1) * sizeof *q->edges);
    if (!h || !q->edges) {
        free(h);
        return false;
    }
    for (size_t f = 0; f < q->face_count; f++)
        for (int k = 0; k < 3; k++) {
            uint32_t a = q->faces[f][k], b = q->faces[f][(k + 1) % 3];
            h[3 * f + (size_t)k] = (half_edge){.lo = a < b ? a : b, .hi = a < b ? b : a, .face = (uint32_t)f};
        }
    qsort(h, nh, sizeof *h, half_cmp);
    q->closed = nh > 0;
    for (size_t i = 0; i < nh;) {
        size_t j = i + 1;
        while (j < nh && h[j].lo == h[i].lo && h[j].hi == h[i].hi)
            j++;
        q_edge *e = &q->edges[q->edge_count++];
        *e = (q_edge){.lo = h[i].lo, .hi = h[i].hi, .f0 = (int32_t)h[i].face, .f1 = j - i == 2 ? (int32_t)h[i + 1].face : -1};
        q->closed &= j - i == 2;
        q->fold_count += e->f1 >= 0;
        i = j;
    }
    free(h);
    return true;
}

static plush_status old_quality_create(const float (*rest)[3], size_t vertex_count, const uint32_t (*triangles)[3],
                                  size_t triangle_count, old_quality **out, plush_diag *diag)
{
    *out = NULL;
    old_quality *q = calloc(1, sizeof *q);
    uint32_t *node_of = malloc((vertex_count ? vertex_count : 1) * sizeof *node_of);
    if (q) {
        q->vertex_count = vertex_count;
        q->first = malloc((vertex_count ? vertex_count : 1) * sizeof *q->first);
        q->faces = malloc((triangle_count ? triangle_count : 1) * sizeof *q->faces);
        q->strain_bins = malloc(Q_BINS * sizeof *q->strain_bins);
        q->crease_bins = malloc(C_BINS * sizeof *q->crease_bins);
    }
    bool ok = q && node_of && q->first && q->faces && q->strain_bins && q->crease_bins;
    size_t nodes = ok ? plush__weld_positions(rest, vertex_count, node_of, q->first) : SIZE_MAX;
    ok = ok && nodes != SIZE_MAX;
    for (size_t t = 0; ok && t < triangle_count; t++) {
        uint32_t f[3];
        for (int k = 0; k < 3; k++) {
            if (triangles[t][k] >= vertex_count) {
                free(node_of);
                old_quality_destroy(q);
                return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "face", (int64_t)t, "vertex %u out of range",
                                       (unsigned)triangles[t][k]);
            }
            f[k] = node_of[triangles[t][k]];
        }
        if (f[0] != f[1] && f[1] != f[2] && f[0] != f[2])
            memcpy(q->faces[q->face_count++], f, sizeof f);
    }
    free(node_of);
    if (ok) {
        q->node_count = nodes;
        q->nodes = malloc((nodes ? nodes : 1) * sizeof *q->nodes);
        q->normals = malloc((q->face_count ? q->face_count : 1) * sizeof *q->normals);
        ok = q->nodes && q->normals && build_edges(q);
    }
    if (!ok) {
        old_quality_destroy(q);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    gather(q, rest);
    for (size_t i = 0; i < q->edge_count; i++) {
        q_edge *e = &q->edges[i];
        e->rest_length = edge_length((const float(*)[3])q->nodes, e->lo, e->hi);
        if (e->f1 >= 0)
            e->rest_angle = normal_angle(q->normals[e->f0], q->normals[e->f1]);
    }
    q->rest_volume = q->closed ? volume((const float(*)[3])q->nodes, (const uint32_t(*)[3])q->faces, q->face_count) : 0;
    *out = q;
    return PLUSH_OK;
}

static uint32_t strain_bin(float s)
{
    uint32_t bits;
    memcpy(&bits, &s, sizeof bits);
    if (!(s > 0) || bits < Q_LOW)
        return 0;
    return bits >= Q_HIGH ? Q_BINS - 1 : (bits - Q_LOW) >> Q_SHIFT;
}

/* The middle of a bin, as a strain. */
static double strain_of(uint32_t bin)
{
    uint32_t bits = Q_LOW + (bin << Q_SHIFT) + (1u << (Q_SHIFT - 1));
    float s;
    memcpy(&s, &bits, sizeof s);
    return s;
}

/* The bin where the cumulative count reaches share of total. */
static uint32_t percentile_bin(const uint32_t *bins, uint32_t count, size_t total, double share)
{
    double want = ceil(share * (double)total);
    double seen = 0;
    for (uint32_t b = 0; b < count; b++)
        if ((seen += bins[b]) >= want && want > 0)
            return b;
    return count - 1;
}

static void old_quality_measure(old_quality *q, const float (*positions)[3], plush_quality_figures *out)
{
    memset(out, 0, sizeof *out);
    gather(q, positions);
    memset(q->strain_bins, 0, Q_BINS * sizeof *q->strain_bins);
    memset(q->crease_bins, 0, C_BINS * sizeof *q->crease_bins);
    const float (*p)[3] = (const float(*)[3])q->nodes;
    size_t measured = 0, outside = 0, folds = 0;
    double smax = 0, cmax = 0;
    for (size_t i = 0; i < q->edge_count; i++) {
        const q_edge *e = &q->edges[i];
        if (e->rest_length > 0) {
            float s = edge_length(p, e->lo, e->hi) / e->rest_length;
            q->strain_bins[strain_bin(s)]++;
            measured++;
            outside += !(s >= 2.0f / 3.0f && s <= 1.5f);
            smax = s > smax || s != s ? s : smax;
        }
        if (e->f1 >= 0) {
            float c = fabsf(normal_angle(q->normals[e->f0], q->normals[e->f1]) - e->rest_angle);
            if (c == c) {
                q->crease_bins[(uint32_t)(c * 20.0f + 0.5f) < C_BINS ? (uint32_t)(c * 20.0f + 0.5f) : C_BINS - 1]++;
                folds++;
                cmax = c > cmax ? c : cmax;
            }
        }
    }
    out->edges = measured, out->folds = folds;
    if (measured) {
        /* a bin's middle can lie above the largest value in it: no percentile above the maximum */
        out->strain_p50 = fmin(strain_of(percentile_bin(q->strain_bins, Q_BINS, measured, 0.5)), smax);
        out->strain_p99 = fmin(strain_of(percentile_bin(q->strain_bins, Q_BINS, measured, 0.99)), smax);
        out->strain_p999 = fmin(strain_of(percentile_bin(q->strain_bins, Q_BINS, measured, 0.999)), smax);
        out->strain_max = smax;
        out->strain_outside = (double)outside / (double)measured;
    }
    if (folds) {
        out->crease_p99 = fmin(percentile_bin(q->crease_bins, C_BINS, folds, 0.99) / 20.0, cmax);
        out->crease_max = cmax;
    }
    out->volume_ratio = q->closed && q->rest_volume != 0
                            ? volume(p, (const uint32_t(*)[3])q->faces, q->face_count) / q->rest_volume
                            : NAN;
}

static void old_quality_destroy(old_quality *q)
{
    if (!q)
        return;
    free(q->first);
    free(q->faces);
    free(q->edges);
    free(q->nodes);
    free(q->normals);
    free(q->strain_bins);
    free(q->crease_bins);
    free(q);
}
