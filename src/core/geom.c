/* The geometry kernel cglm lacks: the best rotation of a covariance, weld by position, union-find, matrix ->
 * quaternion (see core/geom.h). */
#include "core/geom.h"
#include "core/common.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the best rotation of a covariance --------------------------------------------------------------- */

enum { MAX_STEPS = 64 };

/* Solves h x = g for a symmetric 3x3 h by Cholesky; false when h is not positive definite enough. */
static bool solve_spd(double h[3][3], const double g[3], double x[3])
{
    double l00 = h[0][0];
    if (!(l00 > 0))
        return false;
    l00 = sqrt(l00);
    double l10 = h[1][0] / l00, l20 = h[2][0] / l00;
    double d1 = h[1][1] - l10 * l10;
    if (!(d1 > 0))
        return false;
    double l11 = sqrt(d1), l21 = (h[2][1] - l20 * l10) / l11;
    double d2 = h[2][2] - l20 * l20 - l21 * l21;
    if (!(d2 > 1e-12 * (h[0][0] + h[1][1] + h[2][2])))
        return false;
    double l22 = sqrt(d2);
    double y0 = g[0] / l00, y1 = (g[1] - l10 * y0) / l11, y2 = (g[2] - l20 * y0 - l21 * y1) / l22;
    x[2] = y2 / l22;
    x[1] = (y1 - l21 * x[2]) / l11;
    x[0] = (y0 - l10 * x[1] - l20 * x[2]) / l00;
    return true;
}

/* a[c] is column c of A (read only); q is refined in place. Each step turns R by w, Newton's step for
 * the best fit (maximum of trace(R^T A)): gradient g = sum_c r_c x a_c, Hessian trace(S) I - S with S the
 * symmetric part of A R^T. Where that Hessian is not positive definite (far from the fit, or a patch
 * on one line) the step is Müller's, g / |trace|, which always climbs. */
static bool climb(double a[3][3], double q[4])
{
    bool at_max = false;
    for (int step = 0; step < MAX_STEPS; step++) {
        double r[3][3], g[3] = {0, 0, 0}, b[3][3] = {{0}};
        plush__quat_to_mat3(q, &r[0][0], 3);   /* r[c] is column c */
        for (int c = 0; c < 3; c++) {
            g[0] += r[c][1] * a[c][2] - r[c][2] * a[c][1];
            g[1] += r[c][2] * a[c][0] - r[c][0] * a[c][2];
            g[2] += r[c][0] * a[c][1] - r[c][1] * a[c][0];
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    b[i][j] += a[c][i] * r[c][j];   /* B = A R^T = sum_c a_c r_c^T */
        }
        double tr = b[0][0] + b[1][1] + b[2][2], h[3][3], w[3];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                h[i][j] = (i == j ? tr : 0) - 0.5 * (b[i][j] + b[j][i]);
        at_max = solve_spd(h, g, w);
        if (!at_max) {
            double scale = 1.0 / (fabs(tr) + 1e-300);
            for (int k = 0; k < 3; k++)
                w[k] = g[k] * scale;
        }
        double angle = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
        if (!(angle > 1e-12))
            break;
        if (angle > 1.0) {   /* a trust region: a long Newton step from far away may overshoot */
            for (int k = 0; k < 3; k++)
                w[k] /= angle;
            angle = 1.0;
        }
        double s = sin(0.5 * angle) / angle, d[4] = {w[0] * s, w[1] * s, w[2] * s, cos(0.5 * angle)};
        double n[4] = {d[3] * q[0] + d[0] * q[3] + d[1] * q[2] - d[2] * q[1],
                       d[3] * q[1] - d[0] * q[2] + d[1] * q[3] + d[2] * q[0],
                       d[3] * q[2] + d[0] * q[1] - d[1] * q[0] + d[2] * q[3],
                       d[3] * q[3] - d[0] * q[0] - d[1] * q[1] - d[2] * q[2]};
        double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2] + n[3] * n[3]);
        for (int k = 0; k < 4; k++)
            q[k] = n[k] / len;
    }
    return at_max;
}

/* trace(R^T A), what the fit maximises. */
static double fit_of(double a[3][3], const double q[4])
{
    double r[3][3], t = 0;
    plush__quat_to_mat3(q, &r[0][0], 3);
    for (int c = 0; c < 3; c++)
        for (int k = 0; k < 3; k++)
            t += r[c][k] * a[c][k];
    return t;
}

/* The climb from last frame's rotation; where it stops anywhere but at the maximum (a gradient of zero with
 * a Hessian that is not definite: a half turn away from the fit about one of its axes, where a fast turn
 * of a flat patch -- a braid swinging round -- can leave the warm start), it climbs again from the half
 * turns about the three axes and from no rotation, and keeps the best. */
void plush__fit_rotation(double a[3][3], double q[4])
{
    if (!climb(a, q)) {
        double best[4], best_fit = fit_of(a, q);
        memcpy(best, q, sizeof best);
        for (int start = 0; start < 4; start++) {
            double t[4];
            if (start < 3) { /* q times the half turn about body axis `start` */
                double d[4] = {0, 0, 0, 0};
                d[start] = 1;
                t[0] = q[3] * d[0] + q[0] * d[3] + q[1] * d[2] - q[2] * d[1];
                t[1] = q[3] * d[1] - q[0] * d[2] + q[1] * d[3] + q[2] * d[0];
                t[2] = q[3] * d[2] + q[0] * d[1] - q[1] * d[0] + q[2] * d[3];
                t[3] = q[3] * d[3] - q[0] * d[0] - q[1] * d[1] - q[2] * d[2];
            } else {
                t[0] = t[1] = t[2] = 0, t[3] = 1;
            }
            climb(a, t);
            double f = fit_of(a, t);
            if (f > best_fit)
                best_fit = f, memcpy(best, t, sizeof best);
        }
        memcpy(q, best, sizeof best);
    }
    if (q[3] < 0)
        for (int k = 0; k < 4; k++)
            q[k] = -q[k];
}

/* ---- welding by position ---------------------------------------------------------------------------- */

/* FNV-1a over the coordinates' bits, each step folded so the low bits (the table index) see the high ones.
 * Adding 0.0f turns -0 into +0, so positions that compare equal hash equally. */
static size_t position_hash(const float p[3])
{
    uint64_t h = 1469598103934665603u;
    for (int k = 0; k < 3; k++) {
        float f = p[k] + 0.0f;
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        h = (h ^ bits) * 1099511628211u;
        h ^= h >> 29;
    }
    return (size_t)h;
}

bool plush__weld_init(plush__weld *w, size_t most)
{
    memset(w, 0, sizeof *w);
    size_t cap = 16;
    while (cap < 2 * most)
        cap *= 2;
    w->slots = calloc(cap, sizeof *w->slots);
    w->positions = malloc((most ? most : 1) * sizeof *w->positions);
    w->mask = cap - 1;
    w->most = most;
    if (w->slots && w->positions)
        return true;
    plush__weld_free(w);
    return false;
}

uint32_t plush__weld_add(plush__weld *w, const float p[3], bool *added)
{
    size_t i = position_hash(p) & w->mask;
    for (;; i = (i + 1) & w->mask) {
        uint32_t s = w->slots[i];
        if (s == 0)
            break;
        const float *q = w->positions[s - 1];
        if (q[0] == p[0] && q[1] == p[1] && q[2] == p[2]) {
            if (added)
                *added = false;
            return s - 1;
        }
    }
    assert(w->count < w->most); /* more distinct points than the table was made for: a caller's bug */
    uint32_t node = (uint32_t)w->count++;
    memcpy(w->positions[node], p, sizeof w->positions[node]);
    w->slots[i] = node + 1;
    if (added)
        *added = true;
    return node;
}

void plush__weld_free(plush__weld *w)
{
    free(w->slots);
    free(w->positions);
    memset(w, 0, sizeof *w);
}

size_t plush__weld_positions(const float (*points)[3], size_t count, uint32_t *node_of, uint32_t *first)
{
    plush__weld w;
    if (!plush__weld_init(&w, count))
        return SIZE_MAX;
    for (size_t i = 0; i < count; i++) {
        bool added;
        node_of[i] = plush__weld_add(&w, points[i], &added);
        if (added && first)
            first[node_of[i]] = (uint32_t)i;
    }
    size_t nodes = w.count;
    plush__weld_free(&w);
    return nodes;
}

/* ---- union-find --------------------------------------------------------------------------------------- */

void plush__uf_init(uint32_t *parent, size_t n)
{
    for (size_t i = 0; i < n; i++)
        parent[i] = (uint32_t)i;
}

uint32_t plush__uf_find(uint32_t *parent, uint32_t x)
{
    while (parent[x] != x)
        x = parent[x] = parent[parent[x]];
    return x;
}

bool plush__uf_union(uint32_t *parent, uint32_t a, uint32_t b)
{
    a = plush__uf_find(parent, a);
    b = plush__uf_find(parent, b);
    if (a == b)
        return false;
    /* The smaller root wins, so a set's root is its first member: callers number sets by it. */
    if (a < b)
        parent[b] = a;
    else
        parent[a] = b;
    return true;
}

/* ---- matrix -> quaternion ----------------------------------------------------------------------------- */

/* One body for both precisions (T the float type, SQRT its square root). The arithmetic is written in a
 * fixed order and the result divided by its length (not multiplied by the reciprocal): skinning, physics,
 * bake and pose outputs are compared byte for byte, and these are the operations they were made with. */
#define PLUSH__MAT3_TO_QUAT_BODY(T, SQRT)                                                                   \
    const T r00 = m[0], r10 = m[1], r20 = m[2];                                                             \
    const T r01 = m[stride], r11 = m[stride + 1], r21 = m[stride + 2];                                      \
    const T r02 = m[2 * stride], r12 = m[2 * stride + 1], r22 = m[2 * stride + 2];                          \
    const T trace = r00 + r11 + r22;                                                                        \
    if (trace > 0) {                                                                                        \
        T s = (T)2 * SQRT(trace + (T)1);                                                                    \
        q[0] = (r21 - r12) / s;                                                                             \
        q[1] = (r02 - r20) / s;                                                                             \
        q[2] = (r10 - r01) / s;                                                                             \
        q[3] = (T)0.25 * s;                                                                                 \
    } else if (r00 > r11 && r00 > r22) {                                                                    \
        T s = (T)2 * SQRT((T)1 + r00 - r11 - r22);                                                          \
        q[0] = (T)0.25 * s;                                                                                 \
        q[1] = (r01 + r10) / s;                                                                             \
        q[2] = (r02 + r20) / s;                                                                             \
        q[3] = (r21 - r12) / s;                                                                             \
    } else if (r11 > r22) {                                                                                 \
        T s = (T)2 * SQRT((T)1 + r11 - r00 - r22);                                                          \
        q[0] = (r01 + r10) / s;                                                                             \
        q[1] = (T)0.25 * s;                                                                                 \
        q[2] = (r12 + r21) / s;                                                                             \
        q[3] = (r02 - r20) / s;                                                                             \
    } else {                                                                                                \
        T s = (T)2 * SQRT((T)1 + r22 - r00 - r11);                                                          \
        q[0] = (r02 + r20) / s;                                                                             \
        q[1] = (r12 + r21) / s;                                                                             \
        q[2] = (T)0.25 * s;                                                                                 \
        q[3] = (r10 - r01) / s;                                                                             \
    }                                                                                                       \
    const T len = SQRT(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);                              \
    for (int k = 0; k < 4; k++)                                                                             \
        q[k] /= len;

void plush__mat3_to_quat(const double *m, size_t stride, double q[4])
{
    PLUSH__MAT3_TO_QUAT_BODY(double, sqrt)
}

void plush__mat3_to_quatf(const float *m, size_t stride, float q[4])
{
    PLUSH__MAT3_TO_QUAT_BODY(float, sqrtf)
}

void plush__quat_to_mat3(const double q[4], double *m, size_t stride)
{
    double x = q[0], y = q[1], z = q[2], w = q[3];
    const double r[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                            {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                            {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}};
    for (int c = 0; c < 3; c++)
        for (int row = 0; row < 3; row++)
            m[stride * (size_t)c + (size_t)row] = r[row][c];
}

void plush__quat_slerp(const double a[4], const double b[4], double t, double out[4])
{
    double d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3], s = 1.0;
    if (d < 0)
        d = -d, s = -1.0;
    double wa = 1.0 - t, wb = t;
    if (d <= 0.9995) {
        double theta = acos(d), sn = sin(theta);
        wa = sin((1.0 - t) * theta) / sn;
        wb = sin(t * theta) / sn;
    }
    double q[4], n = 0;
    for (int k = 0; k < 4; k++) {
        q[k] = wa * a[k] + wb * s * b[k];
        n += q[k] * q[k];
    }
    n = n > 0 ? 1.0 / sqrt(n) : 0.0;
    for (int k = 0; k < 4; k++)
        out[k] = q[k] * n;
}

void plush__dist_heap_push(plush__dist_item *h, size_t *n, plush__dist_item x)
{
    size_t i = (*n)++;
    while (i > 0 && h[(i - 1) / 2].d > x.d) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = x;
}

plush__dist_item plush__dist_heap_pop(plush__dist_item *h, size_t *n)
{
    plush__dist_item top = h[0], x = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && h[c + 1].d < h[c].d)
            c++;
        if (h[c].d >= x.d)
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n)
        h[i] = x;
    return top;
}

/* Shortest paths over the faces' edges from every source vertex at once, one walk per group of faces. */
bool plush__farthest_along_faces(const float (*positions)[3], size_t nv, const uint32_t (*triangles)[3], size_t nt,
                                 const uint32_t *face_group, size_t groups, const bool *source, double *farthest)
{
    size_t half = 6 * nt;
    uint32_t *first = calloc(nv + 1, sizeof *first), *to = malloc((half ? half : 1) * sizeof *to);
    uint32_t *piece_of = malloc((half ? half : 1) * sizeof *piece_of);
    double *dist = malloc((nv ? nv : 1) * sizeof *dist);
    /* each directed edge is pushed at most once per piece walk, plus the sources */
    plush__dist_item *heap = malloc((half + nv + 1) * sizeof *heap);
    bool ok = first && to && piece_of && dist && heap;
    if (!ok)
        goto done;
    for (size_t t = 0; t < nt; t++)
        for (int k = 0; k < 3; k++)
            first[triangles[t][k] + 1] += 2;
    for (size_t k = 0; k < nv; k++)
        first[k + 1] += first[k];
    for (size_t t = 0; t < nt; t++)
        for (int k = 0; k < 3; k++) {
            uint32_t a = triangles[t][k];
            for (int j = 1; j < 3; j++) {
                to[first[a]] = triangles[t][(k + j) % 3];
                piece_of[first[a]++] = face_group ? face_group[t] : 0;
            }
        }
    for (size_t k = nv; k > 0; k--)
        first[k] = first[k - 1];
    first[0] = 0;
    for (size_t p = 0; p < groups; p++) {
        size_t n = 0;
        for (size_t k = 0; k < nv; k++) {
            dist[k] = INFINITY;
            for (uint32_t e = first[k]; e < first[k + 1]; e++)
                if (piece_of[e] == p && source[k]) {
                    dist[k] = 0;
                    plush__dist_heap_push(heap, &n, (plush__dist_item){0, (uint32_t)k});
                    break;
                }
        }
        double longest = 0;
        while (n > 0) {
            plush__dist_item x = plush__dist_heap_pop(heap, &n);
            if (x.d > dist[x.v])
                continue;
            longest = fmax(longest, x.d);
            const float *a = positions[x.v];
            for (uint32_t e = first[x.v]; e < first[x.v + 1]; e++) {
                if (piece_of[e] != p)
                    continue;
                const float *b = positions[to[e]];
                double d = x.d + sqrt(((double)a[0] - b[0]) * ((double)a[0] - b[0]) +
                                      ((double)a[1] - b[1]) * ((double)a[1] - b[1]) +
                                      ((double)a[2] - b[2]) * ((double)a[2] - b[2]));
                if (d < dist[to[e]]) {
                    dist[to[e]] = d;
                    plush__dist_heap_push(heap, &n, (plush__dist_item){d, to[e]});
                }
            }
        }
        farthest[p] = longest;
    }
done:
    free(first);
    free(to);
    free(piece_of);
    free(dist);
    free(heap);
    return ok;
}

/* ---- the nearest point --------------------------------------------------------------------------------- */

/* The cell coordinate of x on an axis, clamped into the grid. */
static size_t grid_coord(const plush__point_grid *g, int k, double x)
{
    double c = floor((x - g->lo[k]) / g->cell);
    if (!(c > 0))
        return 0;
    return c >= (double)g->n[k] ? g->n[k] - 1 : (size_t)c;
}

static size_t grid_cell(const plush__point_grid *g, const size_t c[3])
{
    return (c[2] * g->n[1] + c[1]) * g->n[0] + c[0];
}

bool plush__point_grid_init(plush__point_grid *g, const float *first, size_t count, size_t stride)
{
    memset(g, 0, sizeof *g);
    if (count > UINT32_MAX)
        return false;
    const char *base = (const char *)first;
    double hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    g->lo[0] = g->lo[1] = g->lo[2] = INFINITY;
    size_t finite = 0;
    for (size_t i = 0; i < count; i++) {
        const float *p = (const float *)(const void *)(base + i * stride);
        if (!plush__finite3(p))
            continue;
        finite++;
        for (int k = 0; k < 3; k++)
            g->lo[k] = fmin(g->lo[k], p[k]), hi[k] = fmax(hi[k], p[k]);
    }
    double side = 0;
    for (int k = 0; finite && k < 3; k++)
        side = fmax(side, hi[k] - g->lo[k]);
    /* about two points per cell: start as if the points filled a cube of the box's largest side, and make
     * the cells smaller while a flat or thin box (a standing figure, a skirt, a sheet) has too few of them */
    double target = finite > 2 ? (double)finite / 2.0 : 1;
    g->cell = side > 0 ? side / ceil(cbrt(target)) : 1;
    double cells = 1;
    for (int round = 0; round < 200; round++) {
        cells = 1;
        for (int k = 0; k < 3; k++)
            cells *= finite ? floor((hi[k] - g->lo[k]) / g->cell) + 1 : 1;
        if (cells * 1.25 * 1.25 * 1.25 > target || side <= 0)
            break;
        g->cell *= 0.8;
    }
    for (int k = 0; k < 3; k++)
        g->n[k] = finite ? (size_t)floor((hi[k] - g->lo[k]) / g->cell) + 1 : 1;
    size_t count_cells = g->n[0] * g->n[1] * g->n[2];
    g->start = calloc(count_cells + 1, sizeof *g->start);
    g->points = malloc((finite ? finite : 1) * sizeof *g->points);
    uint32_t *cell_of = malloc((finite ? finite : 1) * sizeof *cell_of);
    if (!g->start || !g->points || !cell_of) {
        free(cell_of);
        plush__point_grid_free(g);
        return false;
    }
    /* counting sort by cell, each cell's points in index order */
    for (size_t i = 0, j = 0; i < count; i++) {
        const float *p = (const float *)(const void *)(base + i * stride);
        if (!plush__finite3(p))
            continue;
        size_t c[3] = {grid_coord(g, 0, p[0]), grid_coord(g, 1, p[1]), grid_coord(g, 2, p[2])};
        cell_of[j] = (uint32_t)grid_cell(g, c);
        g->start[cell_of[j] + 1]++;
        j++;
    }
    for (size_t c = 0; c < count_cells; c++)
        g->start[c + 1] += g->start[c];
    uint32_t *fill = malloc(count_cells * sizeof *fill);
    if (!fill) {
        free(cell_of);
        plush__point_grid_free(g);
        return false;
    }
    memcpy(fill, g->start, count_cells * sizeof *fill);
    for (size_t i = 0, j = 0; i < count; i++) {
        const float *p = (const float *)(const void *)(base + i * stride);
        if (!plush__finite3(p))
            continue;
        plush__grid_point *q = &g->points[fill[cell_of[j++]]++];
        memcpy(q->p, p, sizeof q->p);
        q->index = (uint32_t)i;
    }
    free(fill);
    free(cell_of);
    return true;
}

typedef struct grid_best {
    double d;
    size_t index;
} grid_best;

static void grid_visit(const plush__point_grid *g, const size_t c[3], const float p[3], grid_best *best)
{
    size_t cell = grid_cell(g, c);
    for (uint32_t i = g->start[cell]; i < g->start[cell + 1]; i++) {
        const plush__grid_point *q = &g->points[i];
        double dx = (double)q->p[0] - p[0], dy = (double)q->p[1] - p[1], dz = (double)q->p[2] - p[2];
        double d = dx * dx + dy * dy + dz * dz;
        if (d < best->d || (d == best->d && q->index < best->index))
            best->d = d, best->index = q->index;
    }
}

/* How near (squared) a point in a cell more than r from c along some axis can be to p; INFINITY when no such
 * cell is left. Along the other axes such a point is still inside the grid's box, which p may lie outside
 * of: that distance counts too, so a query far from every point stops after a few shells. */
static double grid_beyond(const plush__point_grid *g, const size_t c[3], size_t r, const float p[3])
{
    double outside[3], sum = 0;
    for (int k = 0; k < 3; k++) {
        double lo = g->lo[k], hi = g->lo[k] + (double)g->n[k] * g->cell;
        outside[k] = p[k] < lo ? lo - p[k] : p[k] > hi ? p[k] - hi : 0;
        sum += outside[k] * outside[k];
    }
    double bound = INFINITY;
    for (int k = 0; k < 3; k++) {
        double rest = sum - outside[k] * outside[k], d = INFINITY;
        if (c[k] + r + 1 < g->n[k])
            d = fmax(0.0, g->lo[k] + (double)(c[k] + r + 1) * g->cell - p[k]);
        if (c[k] > r)
            d = fmin(d, fmax(0.0, p[k] - (g->lo[k] + (double)(c[k] - r) * g->cell)));
        /* a point on a cell's border may have been rounded into its neighbour */
        d = fmax(0.0, d - 1e-6 * g->cell);
        bound = fmin(bound, d * d + rest);
    }
    return bound;
}

size_t plush__point_grid_nearest(const plush__point_grid *g, const float p[3])
{
    if (!g->points || !plush__finite3(p) || g->start[g->n[0] * g->n[1] * g->n[2]] == 0)
        return SIZE_MAX;
    size_t c[3] = {grid_coord(g, 0, p[0]), grid_coord(g, 1, p[1]), grid_coord(g, 2, p[2])};
    grid_best best = {INFINITY, SIZE_MAX};
    for (size_t r = 0;; r++) {
        /* the shell: cells whose largest per-axis offset from c is r */
        size_t lo[3], hi[3];
        for (int k = 0; k < 3; k++) {
            lo[k] = c[k] > r ? c[k] - r : 0;
            hi[k] = c[k] + r < g->n[k] ? c[k] + r : g->n[k] - 1;
        }
        size_t at[3];
        for (at[0] = lo[0]; at[0] <= hi[0]; at[0]++)
            for (at[1] = lo[1]; at[1] <= hi[1]; at[1]++) {
                bool side = at[0] + r == c[0] || at[0] == c[0] + r || at[1] + r == c[1] || at[1] == c[1] + r;
                for (at[2] = lo[2]; at[2] <= hi[2]; at[2]++) {
                    if (!side && at[2] + r != c[2] && at[2] != c[2] + r) {
                        /* inside the shell's z range: jump to its far face */
                        if (c[2] + r > at[2] && c[2] + r <= hi[2])
                            at[2] = c[2] + r - 1;
                        else
                            break;
                        continue;
                    }
                    grid_visit(g, at, p, &best);
                }
            }
        double bound = grid_beyond(g, c, r, p);
        if (bound == INFINITY || bound > best.d)
            return best.index;
    }
}

void plush__point_grid_free(plush__point_grid *g)
{
    free(g->start);
    free(g->points);
    memset(g, 0, sizeof *g);
}

double plush__mean_edge(const float *first, size_t stride, const uint32_t *idx, size_t index_count)
{
    double sum = 0;
    size_t n = 0;
    for (size_t f = 0; f + 2 < index_count; f += 3)
        for (int k = 0; k < 3; k++) {
            uint32_t ia = idx[f + k], ib = idx[f + (k + 1) % 3];
            if (ia == ib)
                continue;
            const float *a = (const float *)((const char *)first + (size_t)ia * stride),
                        *b = (const float *)((const char *)first + (size_t)ib * stride);
            double d0 = (double)a[0] - b[0], d1 = (double)a[1] - b[1], d2 = (double)a[2] - b[2];
            sum += sqrt(d0 * d0 + d1 * d1 + d2 * d2);
            n++;
        }
    return n ? sum / (double)n : 0;
}

plush__face_key plush__face_key_of(uint32_t a, uint32_t b, uint32_t c, uint32_t face)
{
    uint32_t t;
    if (a > b)
        t = a, a = b, b = t;
    if (b > c)
        t = b, b = c, c = t;
    if (a > b)
        t = a, a = b, b = t;
    return (plush__face_key){{a, b, c}, face};
}

int plush__face_key_order(const void *pa, const void *pb)
{
    const plush__face_key *a = pa, *b = pb;
    for (int k = 0; k < 3; k++)
        if (a->v[k] != b->v[k])
            return a->v[k] < b->v[k] ? -1 : 1;
    return a->face < b->face ? -1 : a->face > b->face;
}

bool plush__repeated_faces(const uint32_t *idx, size_t faces, uint8_t *drop)
{
    plush__face_key *keys = malloc((faces ? faces : 1) * sizeof *keys);
    if (!keys)
        return false;
    for (size_t f = 0; f < faces; f++) {
        keys[f] = plush__face_key_of(idx[3 * f], idx[3 * f + 1], idx[3 * f + 2], (uint32_t)f);
        if (keys[f].v[0] == keys[f].v[1] || keys[f].v[1] == keys[f].v[2])
            drop[f] = 1;
    }
    qsort(keys, faces, sizeof *keys, plush__face_key_order);
    for (size_t f = 1; f < faces; f++)
        if (memcmp(keys[f].v, keys[f - 1].v, sizeof keys[f].v) == 0)
            drop[keys[f].face] = 1;
    free(keys);
    return true;
}

double plush__points_spread(const float (*points)[3], size_t count, const bool *use)
{
    double c[3] = {0, 0, 0}, m[3][3] = {{0}}, n = 0;
    for (size_t i = 0; i < count; i++)
        if (!use || use[i]) {
            n++;
            for (int k = 0; k < 3; k++)
                c[k] += points[i][k];
        }
    if (n == 0)
        return 1;
    for (int k = 0; k < 3; k++)
        c[k] /= n;
    for (size_t i = 0; i < count; i++)
        if (!use || use[i])
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++)
                    m[a][b] += ((double)points[i][a] - c[a]) * ((double)points[i][b] - c[b]);
    double det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                 m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
    double third = (m[0][0] + m[1][1] + m[2][2]) / 3;
    return third > 0 ? det / (third * third * third) : 0;
}

int plush__edge_order(const void *pa, const void *pb)
{
    const plush__edge *a = pa, *b = pb;
    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    if (a->hi != b->hi)
        return a->hi < b->hi ? -1 : 1;
    return (a->owner > b->owner) - (a->owner < b->owner);
}
