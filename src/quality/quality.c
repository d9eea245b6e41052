/* Surface quality against rest: edge strain, crease, volume (plush/quality.h).
 *
 * Every figure is computed from the positions as given: each welded node is read through one vertex that
 * stands for it, fixed at create, so a frame needs no copy of the nodes. A frame is one pass over the
 * faces (unit normals and the volume, from the same three loads) and one over the edges (strain) and the
 * folds (crease), each over compact arrays built at create. */
#include "plush/quality.h"
#include "plush/sys/quality.h"
#include "plush/sys/core.h"
#include "core/geom.h"

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

/* Edges under this share of the mean edge at rest are not measured. */
#define SHORT_EDGE 1e-3

/* One edge (its two vertices) or fold (its two faces) and its value at rest, read together. */
typedef struct q_pair {
    uint32_t a, b;
    float rest;
} q_pair;

struct plush_quality {
    size_t vertex_count, face_count, edge_count, fold_count;
    size_t short_edges;           /* edges left out of the strain: too short at rest to measure */
    uint32_t (*faces)[3];         /* vertex indices (one per welded node), degenerate faces left out */
    q_pair *edges;                /* the edges with a rest length: vertex indices, rest length */
    q_pair *folds;                /* the edges with exactly two faces: those faces, rest dihedral (degrees) */
    bool closed;                  /* some piece is closed (every edge of it has exactly two faces) */
    uint8_t *face_closed;         /* per face: its piece is closed (the volume counts it) */
    double rest_volume;
    float (*normals)[3];          /* per face, this frame's */
    size_t layer_count;           /* vertices sharing a surface node's rest position with the one standing */
    q_pair *layers;               /* for it (a: the vertex, b: that one): where a layer can tear away */
    uint32_t *strain_bins, *crease_bins;
    uint32_t *node_of;            /* per vertex: its welded node */
    size_t node_count;
};

/* acos within 7e-5 rad (Abramowitz & Stegun 4.4.45): the crease of 180k folds per frame must cost little,
 * and its histogram bins are 0.05 degrees (9e-4 rad) wide. */
static inline float fast_acos(float x)
{
    float a = fabsf(x);
    a = a > 1.0f ? 1.0f : a;
    float r = sqrtf(1.0f - a) * (1.5707288f + a * (-0.2121144f + a * (0.0742610f - 0.0187293f * a)));
    return x < 0 ? 3.14159265f - r : r;
}

/* The angle between two unit normals, in degrees (NaN when a face has no area). */
static inline float normal_angle(const float a[3], const float b[3])
{
    return fast_acos(a[0] * b[0] + a[1] * b[1] + a[2] * b[2]) * (180.0f / 3.14159265f);
}

/* Unit normals of the faces and, with them, the signed volume of the closed pieces (1/6 sum of
 * a . (b x c) over their faces, in double). */
static double faces_pass(const plush_quality *q, const float (*p)[3], float (*normals)[3])
{
    double v = 0;
    for (size_t f = 0; f < q->face_count; f++) {
        const float *a = p[q->faces[f][0]], *b = p[q->faces[f][1]], *c = p[q->faces[f][2]];
        float u0 = b[0] - a[0], u1 = b[1] - a[1], u2 = b[2] - a[2];
        float v0 = c[0] - a[0], v1 = c[1] - a[1], v2 = c[2] - a[2];
        float n0 = u1 * v2 - u2 * v1, n1 = u2 * v0 - u0 * v2, n2 = u0 * v1 - u1 * v0;
        float len = sqrtf(n0 * n0 + n1 * n1 + n2 * n2);
        float inv = len > 0 ? 1.0f / len : NAN;
        normals[f][0] = n0 * inv, normals[f][1] = n1 * inv, normals[f][2] = n2 * inv;
        if (!q->face_closed[f])
            continue;
        v += (double)a[0] * ((double)b[1] * c[2] - (double)b[2] * c[1]) -
             (double)a[1] * ((double)b[0] * c[2] - (double)b[2] * c[0]) +
             (double)a[2] * ((double)b[0] * c[1] - (double)b[1] * c[0]);
    }
    return v / 6.0;
}

static inline float edge_length(const float (*p)[3], uint32_t a, uint32_t b)
{
    float d0 = p[a][0] - p[b][0], d1 = p[a][1] - p[b][1], d2 = p[a][2] - p[b][2];
    return sqrtf(d0 * d0 + d1 * d1 + d2 * d2);
}

typedef struct half_edge {
    uint32_t hi, face;
} half_edge;

/* Edges from the faces' half-edges, by (lower node, higher node, face): a counting sort on the lower node,
 * an insertion sort within each (a node has a handful of edges). An edge with exactly two faces is a fold.
 * Writes node pairs into edge_a/edge_b (turned into vertices by the caller). Faces joined by edges make
 * pieces; a piece is closed when every edge of it has exactly two faces, and only closed pieces enclose a
 * volume (a skirt beside a closed toy does not make the toy's volume unmeasurable; plush compare's rule). */
static bool build_edges(plush_quality *q, const uint32_t (*faces)[3], size_t node_count)
{
    size_t nh = 3 * q->face_count;
    size_t *start = calloc(node_count + 1, sizeof *start);
    half_edge *h = malloc((nh ? nh : 1) * sizeof *h);
    q->edges = malloc((nh ? nh : 1) * sizeof *q->edges);
    q->folds = malloc((nh ? nh : 1) * sizeof *q->folds);
    q->face_closed = malloc(q->face_count ? q->face_count : 1);
    uint32_t *piece = malloc((q->face_count ? q->face_count : 1) * sizeof *piece);
    uint8_t *open = calloc(q->face_count ? q->face_count : 1, 1);
    bool ok = start && h && q->edges && q->folds && q->face_closed && piece && open;
    if (ok)
        plush__uf_init(piece, q->face_count);
    for (size_t f = 0; ok && f < q->face_count; f++)
        for (int k = 0; k < 3; k++) {
            uint32_t a = faces[f][k], b = faces[f][(k + 1) % 3];
            start[(a < b ? a : b) + 1]++;
        }
    for (size_t n = 0; ok && n < node_count; n++)
        start[n + 1] += start[n];
    for (size_t f = 0; ok && f < q->face_count; f++)
        for (int k = 0; k < 3; k++) {
            uint32_t a = faces[f][k], b = faces[f][(k + 1) % 3];
            h[start[a < b ? a : b]++] = (half_edge){.hi = a < b ? b : a, .face = (uint32_t)f};
        }
    /* start[n] is now the end of node n's run (the start of n + 1's) */
    for (size_t n = 0, i = 0; ok && n < node_count; n++) {
        size_t end = start[n];
        for (size_t j = i + 1; j < end; j++) {
            half_edge x = h[j];
            size_t k = j;
            for (; k > i && (h[k - 1].hi > x.hi || (h[k - 1].hi == x.hi && h[k - 1].face > x.face)); k--)
                h[k] = h[k - 1];
            h[k] = x;
        }
        while (i < end) {
            size_t j = i + 1;
            while (j < end && h[j].hi == h[i].hi)
                j++;
            q->edges[q->edge_count++] = (q_pair){.a = (uint32_t)n, .b = h[i].hi};
            if (j - i == 2)
                q->folds[q->fold_count++] = (q_pair){.a = h[i].face, .b = h[i + 1].face};
            for (size_t k = i + 1; k < j; k++)
                plush__uf_union(piece, h[i].face, h[k].face);
            if (j - i != 2)
                open[h[i].face] = 1; /* its piece is open (or pinched) */
            i = j;
        }
    }
    for (size_t f = 0; ok && f < q->face_count; f++)
        if (open[f])
            open[plush__uf_find(piece, (uint32_t)f)] = 1;
    q->closed = false;
    for (size_t f = 0; ok && f < q->face_count; f++) {
        q->face_closed[f] = !open[plush__uf_find(piece, (uint32_t)f)];
        q->closed |= q->face_closed[f] != 0;
    }
    free(start);
    free(h);
    free(piece);
    free(open);
    return ok;
}

/* Every vertex welded into a node of the measured faces, other than the one standing for that node: an
 * inner layer, a back face, a seam's other side, whether or not its own faces are measured. */
static bool build_layers(plush_quality *q, const uint32_t (*node_faces)[3], const uint32_t *node_of,
                         const uint32_t *first, size_t nodes)
{
    uint8_t *on = calloc(nodes ? nodes : 1, 1);
    if (!on)
        return false;
    for (size_t f = 0; f < q->face_count; f++)
        for (int k = 0; k < 3; k++)
            on[node_faces[f][k]] = 1;
    size_t n = 0;
    for (size_t v = 0; v < q->vertex_count; v++)
        n += on[node_of[v]] && first[node_of[v]] != v;
    q->layers = malloc((n ? n : 1) * sizeof *q->layers);
    if (q->layers)
        for (size_t v = 0; v < q->vertex_count; v++)
            if (on[node_of[v]] && first[node_of[v]] != v)
                q->layers[q->layer_count++] = (q_pair){.a = (uint32_t)v, .b = first[node_of[v]]};
    free(on);
    return q->layers != NULL;
}

/* A surface of two layers sharing positions (a cape's outer and inner cloth, front and back faces) welds
 * into faces on the same three nodes twice, and each edge then has four faces: no edge would count as a
 * fold and the crease would read 0 whatever the cloth did. Each node triple is kept once (the first face
 * in order), for the edges, folds and volume; the layers' own vertices still count in the tear. false
 * when out of memory. */
static bool drop_layer_faces(plush_quality *q, uint32_t (*node_faces)[3])
{
    size_t n = q->face_count;
    uint8_t *drop = calloc(n ? n : 1, 1);
    bool ok = drop && plush__repeated_faces(&node_faces[0][0], n, drop);
    if (ok) {
        size_t kept = 0;
        for (size_t f = 0; f < n; f++)
            if (!drop[f]) {
                memmove(node_faces[kept], node_faces[f], sizeof node_faces[f]);
                memmove(q->faces[kept], q->faces[f], sizeof q->faces[f]);
                kept++;
            }
        q->face_count = kept;
    }
    free(drop);
    return ok;
}

plush_status plush_quality_create(const float (*rest)[3], size_t vertex_count, const uint32_t (*triangles)[3],
                                  size_t triangle_count, plush_quality **out, plush_diag *diag)
{
    *out = NULL;
    plush_quality *q = calloc(1, sizeof *q);
    uint32_t *node_of = malloc((vertex_count ? vertex_count : 1) * sizeof *node_of);
    uint32_t *first = malloc((vertex_count ? vertex_count : 1) * sizeof *first);
    uint32_t(*node_faces)[3] = malloc((triangle_count ? triangle_count : 1) * sizeof *node_faces);
    if (q) {
        q->vertex_count = vertex_count;
        q->faces = malloc((triangle_count ? triangle_count : 1) * sizeof *q->faces);
        q->normals = malloc((triangle_count ? triangle_count : 1) * sizeof *q->normals);
        q->strain_bins = malloc(Q_BINS * sizeof *q->strain_bins);
        q->crease_bins = malloc(C_BINS * sizeof *q->crease_bins);
    }
    bool ok = q && node_of && first && node_faces && q->faces && q->normals && q->strain_bins && q->crease_bins;
    size_t nodes = ok ? plush__weld_positions(rest, vertex_count, node_of, first) : SIZE_MAX;
    ok = ok && nodes != SIZE_MAX;
    for (size_t t = 0; ok && t < triangle_count; t++) {
        uint32_t f[3];
        for (int k = 0; k < 3; k++) {
            if (triangles[t][k] >= vertex_count) {
                free(node_of), free(first), free(node_faces);
                plush_quality_destroy(q);
                return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "face", (int64_t)t, "vertex %u out of range",
                                       (unsigned)triangles[t][k]);
            }
            f[k] = node_of[triangles[t][k]];
        }
        if (f[0] != f[1] && f[1] != f[2] && f[0] != f[2]) {
            memcpy(node_faces[q->face_count], f, sizeof f);
            for (int k = 0; k < 3; k++)
                q->faces[q->face_count][k] = first[f[k]];
            q->face_count++;
        }
    }
    ok = ok && drop_layer_faces(q, node_faces);
    ok = ok && build_edges(q, (const uint32_t(*)[3])node_faces, nodes);
    ok = ok && build_layers(q, (const uint32_t(*)[3])node_faces, node_of, first, nodes);
    free(node_faces);
    if (q)
        q->node_of = node_of, q->node_count = ok ? nodes : 0;
    else
        free(node_of);
    if (!ok) {
        free(first);
        plush_quality_destroy(q);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    /* nodes to the vertices standing for them; an edge under SHORT_EDGE of the mean at rest measures no
     * strain: its ends lie a few float steps apart, and any movement of them reads as a strain of
     * thousands (the summary's p99.9 was the histogram's ceiling on such a cage) */
    double mean = 0;
    size_t with_length = 0;
    for (size_t i = 0; i < q->edge_count; i++) {
        float len = edge_length(rest, first[q->edges[i].a], first[q->edges[i].b]);
        if (len > 0)
            mean += len, with_length++;
    }
    mean = with_length ? mean / (double)with_length : 0;
    size_t kept = 0;
    for (size_t i = 0; i < q->edge_count; i++) {
        uint32_t a = first[q->edges[i].a], b = first[q->edges[i].b];
        float len = edge_length(rest, a, b);
        if (len > 0 && len >= SHORT_EDGE * mean)
            q->edges[kept++] = (q_pair){.a = a, .b = b, .rest = len};
    }
    q->short_edges = q->edge_count - kept;
    q->edge_count = kept;
    if (q->short_edges)
        plush_diag_warn(diag, -1, NULL, -1,
                        "%zu of the surface's %zu edges are shorter than a thousandth of its mean edge at rest: "
                        "their strain is not measured",
                        q->short_edges, q->short_edges + kept);
    free(first);
    double v = faces_pass(q, rest, q->normals);
    for (size_t i = 0; i < q->fold_count; i++)
        q->folds[i].rest = normal_angle(q->normals[q->folds[i].a], q->normals[q->folds[i].b]);
    q->rest_volume = q->closed ? v : 0;
    *out = q;
    return PLUSH_OK;
}

static inline uint32_t strain_bin(float s)
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

/* For each share (increasing), the bin where the cumulative count reaches share of total: one scan. */
static void percentile_bins(const uint32_t *bins, uint32_t count, size_t total, const double *share, int n,
                            uint32_t *out)
{
    double seen = 0;
    int k = 0;
    for (uint32_t b = 0; b < count && k < n; b++) {
        seen += bins[b];
        while (k < n && ceil(share[k] * (double)total) > 0 && seen >= ceil(share[k] * (double)total))
            out[k++] = b;
    }
    while (k < n)
        out[k++] = count - 1;
}

/* A bin stands for its values by its middle, which can lie above every value in it: a percentile is the
 * bin's figure or the largest value measured, whichever is less, so it never exceeds the maximum (and
 * stays within the bin's width of the exact percentile, since the maximum lies in or above that bin). */
static double at_most(double percentile, double max)
{
    return percentile > max ? max : percentile;
}

/* The edges' strain figures into out (the rest of it untouched). */
static void measure_strain(plush_quality *q, const float (*positions)[3], plush_quality_figures *out)
{
    memset(q->strain_bins, 0, Q_BINS * sizeof *q->strain_bins);
    uint32_t *sb = q->strain_bins;
    size_t outside = 0;
    float smax = 0;
    for (size_t i = 0; i < q->edge_count; i++) {
        const q_pair *e = &q->edges[i];
        float s = edge_length(positions, e->a, e->b) / e->rest;
        sb[strain_bin(s)]++;
        outside += !(s >= 2.0f / 3.0f && s <= 1.5f);
        smax = s > smax || s != s ? s : smax;
    }
    out->edges = q->edge_count;
    out->short_edges = q->short_edges;
    if (q->edge_count) {
        static const double shares[3] = {0.5, 0.99, 0.999};
        uint32_t b[3];
        percentile_bins(sb, Q_BINS, q->edge_count, shares, 3, b);
        out->strain_max = smax;
        out->strain_p50 = at_most(strain_of(b[0]), smax);
        out->strain_p99 = at_most(strain_of(b[1]), smax);
        out->strain_p999 = at_most(strain_of(b[2]), smax);
        out->strain_outside = (double)outside / (double)q->edge_count;
    }
}

void plush_quality_measure_strain(plush_quality *q, const float (*positions)[3], plush_quality_figures *out)
{
    memset(out, 0, sizeof *out);
    out->volume_ratio = NAN;
    measure_strain(q, positions, out);
}

void plush_quality_measure(plush_quality *q, const float (*positions)[3], plush_quality_figures *out)
{
    memset(out, 0, sizeof *out);
    memset(q->crease_bins, 0, C_BINS * sizeof *q->crease_bins);
    double vol = faces_pass(q, positions, q->normals);
    uint32_t *cb = q->crease_bins;
    measure_strain(q, positions, out);
    const float (*n)[3] = (const float(*)[3])q->normals;
    size_t folds = 0;
    float cmax = 0;
    for (size_t i = 0; i < q->fold_count; i++) {
        const q_pair *e = &q->folds[i];
        float c = fabsf(normal_angle(n[e->a], n[e->b]) - e->rest);
        if (c == c) {
            uint32_t bin = (uint32_t)(c * 20.0f + 0.5f);
            cb[bin < C_BINS ? bin : C_BINS - 1]++;
            folds++;
            cmax = c > cmax ? c : cmax;
        }
    }
    float tear = 0;
    for (size_t i = 0; i < q->layer_count; i++) {
        float d = edge_length(positions, q->layers[i].a, q->layers[i].b);
        tear = d > tear || d != d ? d : tear;
    }
    out->tear = tear;
    out->folds = folds;
    if (folds) {
        static const double share = 0.99;
        uint32_t b;
        percentile_bins(cb, C_BINS, folds, &share, 1, &b);
        out->crease_max = cmax;
        out->crease_p99 = at_most(b / 20.0, cmax);
    }
    out->volume_ratio = q->closed && q->rest_volume != 0 ? vol / q->rest_volume : NAN;
}

void plush_quality_drop_layers(plush_quality *q, const bool *dropped)
{
    size_t kept = 0;
    for (size_t i = 0; i < q->layer_count; i++)
        if (!dropped[q->layers[i].a] && !dropped[q->layers[i].b])
            q->layers[kept++] = q->layers[i];
    q->layer_count = kept;
}

size_t plush_quality_hold_folds(plush_quality *q, const bool *held)
{
    /* a welded node is held when every vertex welded into it is */
    uint8_t *node_held = malloc(q->node_count ? q->node_count : 1);
    if (!node_held)
        return 0;
    memset(node_held, 1, q->node_count);
    for (size_t v = 0; v < q->vertex_count; v++)
        node_held[q->node_of[v]] &= held[v] ? 1 : 0;
    size_t kept = 0;
    for (size_t i = 0; i < q->fold_count; i++) {
        const uint32_t *a = q->faces[q->folds[i].a], *b = q->faces[q->folds[i].b];
        bool all = true;
        for (int k = 0; k < 3; k++)
            all = all && node_held[q->node_of[a[k]]] && node_held[q->node_of[b[k]]];
        if (!all)
            q->folds[kept++] = q->folds[i];
    }
    free(node_held);
    size_t dropped = q->fold_count - kept;
    q->fold_count = kept;
    return dropped;
}

void plush_quality_destroy(plush_quality *q)
{
    if (!q)
        return;
    free(q->faces);
    free(q->edges);
    free(q->face_closed);
    free(q->folds);
    free(q->layers);
    free(q->normals);
    free(q->strain_bins);
    free(q->crease_bins);
    free(q->node_of);
    free(q);
}

bool plush_quality_meets_bar(const plush_quality_figures *f)
{
    return f->strain_p999 <= PLUSH_QUALITY_BAR_STRAIN_P999 && f->strain_outside <= PLUSH_QUALITY_BAR_OUTSIDE &&
           f->crease_p99 <= PLUSH_QUALITY_BAR_CREASE_P99;
}
