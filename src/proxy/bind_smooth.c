/* plush_proxy_binding_smooth: the nearest-four weights smoothed over the detailed surface, then reduced
 * to four again in a way that keeps them continuous.
 *
 * Nearest-four weights jump wherever the set of four changes (a fifth triangle comes closer than the
 * fourth) or a triangle crosses the drop ratio: two neighbouring vertices then follow unrelated
 * triangles, and when those move differently the edge between them tears. Here the welded surface is cut
 * into clusters (its nodes per cell of a grid radius/2 mean proxy edges wide, and per connected piece);
 * each cluster gets the mean of its nodes' weights; and every node takes the average of the clusters of
 * its own piece around it, each weighted by a smooth kernel (1 - r^2/R^2)^3 of its distance, R two cells
 * (radius proxy edges) or, for a point deep under the proxy, radius times its distance to the proxy (a
 * long lever needs a wider average; d_0 is continuous, so R is).
 * That is a continuous function of the node's position, the same on both sides of a seam, and spreads
 * each triangle's influence over a patch a few proxy triangles wide. The eight strongest are
 * kept, then the four strongest minus the fifth's weight: a triangle that leaves the four does so at
 * weight zero, so the result stays continuous.
 *
 * Deterministic: clusters are ordered by cell and piece, every sum runs in that order, ties go to the
 * lower triangle index. */
#include "plush/proxy.h"
#include "plush/sys/core.h"
#include "plush/sys/proxy.h"

#include "core/geom.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { KEEP = 8 };
/* The share of the reach a point whose triangles are all held loses (plush_proxy_smooth_options.node_bone). */
#define HELD_SHRINK 0.5
/* The least share of a part's held nodes a second bone holds for the part to be held across a joint. */
#define JOINT_SHARE 0.1

typedef struct sparse {
    int32_t t[KEEP];   /* triangle, -1 unused; strongest first */
    float w[KEEP];
} sparse;

/* A dense accumulator over the triangles with the list of those touched, so adding is O(1) and
 * clearing costs only what was used. */
typedef struct accum {
    double *w;         /* triangle_count, zero between uses */
    int32_t *touched;
    size_t count, cap;
} accum;

static void acc_add(accum *a, const sparse *src, double weight)
{
    for (int k = 0; k < KEEP && src->t[k] >= 0; k++) {
        int32_t t = src->t[k];
        double add = weight * src->w[k];
        if (!(add > 0))
            continue;   /* nothing to add; a zero would also list t twice */
        if (a->w[t] == 0) {
            if (a->count == a->cap)
                continue;   /* cannot happen (cap is the triangle count), but never leave one unlisted */
            a->touched[a->count++] = t;
        }
        a->w[t] += add;
    }
}

/* The strongest KEEP of the accumulator, strongest first (ties: lower triangle), summing to 1; clears it. */
static void acc_take(accum *a, sparse *out)
{
    for (int k = 0; k < KEEP; k++) {
        out->t[k] = -1;
        out->w[k] = 0;
    }
    double best_w[KEEP] = {0};
    int n = 0;
    for (size_t j = 0; j < a->count; j++) {
        int32_t t = a->touched[j];
        double w = a->w[t];
        a->w[t] = 0;
        if (!(w > 0))
            continue;
        int k = n < KEEP ? n : KEEP;
        if (k == KEEP && !(w > best_w[KEEP - 1] || (w == best_w[KEEP - 1] && t < out->t[KEEP - 1])))
            continue;
        if (k == KEEP)
            k--;
        while (k > 0 && (w > best_w[k - 1] || (w == best_w[k - 1] && t < out->t[k - 1]))) {
            best_w[k] = best_w[k - 1];
            out->t[k] = out->t[k - 1];
            k--;
        }
        best_w[k] = w;
        out->t[k] = t;
        if (n < KEEP)
            n++;
    }
    a->count = 0;
    double sum = 0;
    for (int k = 0; k < n; k++)
        sum += best_w[k];
    for (int k = 0; k < n; k++)
        out->w[k] = (float)(best_w[k] / sum);
}

/* The four strongest minus the fifth, renormalised: continuous where the set of four changes. */
static void reduce_to_four(const sparse *s, int32_t tri[PLUSH_PROXY_INFLUENCES], float w[PLUSH_PROXY_INFLUENCES])
{
    float fifth = s->t[PLUSH_PROXY_INFLUENCES] >= 0 ? s->w[PLUSH_PROXY_INFLUENCES] : 0;
    double sum = 0;
    for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++) {
        float v = s->t[k] >= 0 ? s->w[k] - fifth : 0;
        tri[k] = v > 0 ? s->t[k] : -1;
        w[k] = v > 0 ? v : 0;
        sum += w[k];
    }
    if (!(sum > 0)) {   /* five equal weights: nothing is continuous here, keep the four */
        sum = 0;
        for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++) {
            tri[k] = s->t[k];
            w[k] = s->t[k] >= 0 ? s->w[k] : 0;
            sum += w[k];
        }
    }
    for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++)
        w[k] = (float)(w[k] / sum);
}

/* A node's grid cell and piece; sorting these groups the nodes into clusters. */
typedef struct cell_key {
    int32_t c[3];
    uint32_t piece;
    uint32_t node;
} cell_key;

static int cmp_cell(const int32_t *a, const int32_t *b)
{
    for (int k = 0; k < 3; k++)
        if (a[k] != b[k])
            return a[k] < b[k] ? -1 : 1;
    return 0;
}

static int cmp_key(const void *pa, const void *pb)
{
    const cell_key *a = pa, *b = pb;
    int c = cmp_cell(a->c, b->c);
    if (c)
        return c;
    if (a->piece != b->piece)
        return a->piece < b->piece ? -1 : 1;
    return (a->node > b->node) - (a->node < b->node);
}

typedef struct cluster {
    int32_t c[3];
    uint32_t piece;
    double center[3];
    sparse w;
} cluster;

/* The first cluster whose cell is not before c (clusters are sorted by cell). */
static size_t lower_bound(const cluster *cl, size_t n, const int32_t c[3])
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_cell(cl[mid].c, c) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

typedef struct smooth_work {
    uint32_t *node_of, *first, *parent;
    cell_key *keys;
    cluster *clusters;
    sparse *node_w;
    bool *fixed;
    size_t *candidates;
    accum acc;
} smooth_work;

static void work_free(smooth_work *w)
{
    free(w->node_of);
    free(w->first);
    free(w->parent);
    free(w->keys);
    free(w->clusters);
    free(w->node_w);
    free(w->fixed);
    free(w->candidates);
    free(w->acc.w);
    free(w->acc.touched);
}

/* Writes node n's smoothed weights to every point welded into it, nearest first with exact distances. */
static void write_rows(plush_proxy_binding *b, const plush_proxy_mesh *proxy, const float (*points)[3],
                       const smooth_work *w)
{
    for (size_t i = 0; i < b->vertex_count; i++) {
        size_t n = w->node_of[i];
        if (w->fixed[n] || b->triangles[i][0] < 0)
            continue;
        int32_t tri[PLUSH_PROXY_INFLUENCES];
        float wt[PLUSH_PROXY_INFLUENCES], d[PLUSH_PROXY_INFLUENCES];
        reduce_to_four(&w->node_w[n], tri, wt);
        for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++) {
            const uint32_t *t = tri[k] >= 0 ? proxy->triangles[tri[k]] : NULL;
            d[k] = t ? plush_proxy_point_triangle_distance(points[i], proxy->nodes[t[0]], proxy->nodes[t[1]],
                                                           proxy->nodes[t[2]])
                     : INFINITY;
        }
        for (int k = 1; k < PLUSH_PROXY_INFLUENCES; k++)
            for (int q = k; q > 0 && (d[q] < d[q - 1] || (d[q] == d[q - 1] && tri[q] >= 0 && tri[q] < tri[q - 1])); q--) {
                float td = d[q], tw = wt[q];
                int32_t tt = tri[q];
                d[q] = d[q - 1], wt[q] = wt[q - 1], tri[q] = tri[q - 1];
                d[q - 1] = td, wt[q - 1] = tw, tri[q - 1] = tt;
            }
        for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++) {
            b->triangles[i][k] = tri[k];
            b->weights[i][k] = tri[k] >= 0 ? wt[k] : 0;
            b->distances[i][k] = tri[k] >= 0 ? d[k] : 0;
        }
    }
}

static int cmp_bone(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

/* Whether the held nodes (node_bone[n] >= 0; NULL: none) are held by two bones or more, the second of them
 * holding at least JOINT_SHARE of them; by has a slot per proxy node. */
static bool held_across_joint(const plush_proxy_mesh *proxy, const int32_t *node_bone, int32_t *by)
{
    size_t held = 0, most = 0, second = 0;
    for (size_t n = 0; node_bone && n < proxy->node_count; n++)
        if (node_bone[n] >= 0)
            by[held++] = node_bone[n];
    qsort(by, held, sizeof *by, cmp_bone);
    for (size_t i = 0, j; i < held; i = j) {
        for (j = i; j < held && by[j] == by[i]; j++)
            ;
        size_t run = j - i;
        if (run > most)
            second = most, most = run;
        else if (run > second)
            second = run;
    }
    return held && (double)second >= JOINT_SHARE * (double)held;
}

/* A part the author's physics swings on chains -- a skirt, a lock -- bends where its chains bend, and its cage, which
 * takes the chains' shape (plush run's default), bends with them, within a pinned piece's free length L (the
 * farthest its free nodes lie from a pinned one along its edges). Where the reach passes L -- sample_finish's
 * skirt, 2.81 units from the waistband's pins to the hem under a reach of 4.53 -- a hem point averaged in the
 * triangles held at the waistband, and the detailed skirt hung from its waist like one shell while its cage went up
 * over a raised thigh with the author's (the hem 0.9 units below the cage node it lies on at rest). So on a piece
 * whose part is mostly the chains' (the mean share of its points' skinning weight on bones in chains of rigid
 * bodies, SWUNG_PART or more) the reach is at most L, and at least FREE_LEAST of it; per point, its pieces' shares
 * weighted by its smoothed weights, so it varies as smoothly. A piece its bones carry -- a bodice, a bob no physics
 * moves, whose locks lie between layers of her other hair and parted under a narrower reach -- keeps the whole
 * reach. Only the reach in cage edges shrinks, not the wider one of a point deep under the cage. *out stays NULL
 * when no point's reach shrinks. */
#define FREE_LEAST 0.25
#define SWUNG_PART 0.5
static plush_status free_length_scale(const plush_proxy_mesh *proxy, const int32_t *node_bone, const float *swung,
                                      const smooth_work *w, const sparse *wts, size_t nodes, double reach, double **out,
                                      plush_diag *diag)
{
    *out = NULL;
    size_t nn = proxy->node_count, nt = proxy->triangle_count;
    uint32_t *parent = malloc((nn ? nn : 1) * sizeof *parent), *group = malloc((nt ? nt : 1) * sizeof *group);
    uint32_t *id = malloc((nn ? nn : 1) * sizeof *id);
    bool *pinned = malloc(nn ? nn : 1), *has_pin = calloc(nn ? nn : 1, 1);
    double *far = calloc(nn ? nn : 1, sizeof *far), *share = malloc((nn ? nn : 1) * sizeof *share);
    bool ok = parent && group && id && pinned && has_pin && far && share;
    size_t groups = 0;
    if (ok) {
        plush__uf_init(parent, nn);
        for (size_t t = 0; t < nt; t++)
            for (int k = 0; k < 2; k++)
                plush__uf_union(parent, proxy->triangles[t][k], proxy->triangles[t][k + 1]);
        for (size_t n = 0; n < nn; n++)
            id[n] = plush__uf_find(parent, (uint32_t)n) == n ? (uint32_t)groups++ : UINT32_MAX;
        for (size_t n = 0; n < nn; n++) {
            uint32_t g = id[plush__uf_find(parent, (uint32_t)n)];
            pinned[n] = node_bone[n] >= 0;
            has_pin[g] = has_pin[g] || pinned[n];
        }
        for (size_t t = 0; t < nt; t++)
            group[t] = id[plush__uf_find(parent, proxy->triangles[t][0])];
        ok = plush__farthest_along_faces(proxy->nodes, nn, proxy->triangles, nt, group, groups, pinned, far);
    }
    /* how much of each piece's part the chains swing: the mean share of the points whose strongest triangle it holds */
    double *swung_sum = ok ? calloc(groups ? groups : 1, sizeof *swung_sum) : NULL;
    size_t *points_of = ok ? calloc(groups ? groups : 1, sizeof *points_of) : NULL;
    ok = ok && swung_sum && points_of;
    for (size_t n = 0; ok && n < nodes; n++)
        if (wts[n].t[0] >= 0) {
            swung_sum[group[wts[n].t[0]]] += swung[w->first[n]];
            points_of[group[wts[n].t[0]]]++;
        }
    bool shorter = false;
    for (size_t g = 0; ok && g < groups; g++) {
        bool chains = points_of[g] && swung_sum[g] >= SWUNG_PART * (double)points_of[g];
        share[g] = chains && has_pin[g] && far[g] > 0 ? fmax(FREE_LEAST, fmin(1.0, far[g] / reach)) : 1.0;
        shorter = shorter || share[g] < 1;
    }
    free(swung_sum), free(points_of);
    double *edge = ok && shorter ? malloc((nodes ? nodes : 1) * sizeof *edge) : NULL;
    bool any = false;
    for (size_t n = 0; edge && n < nodes; n++) {
        double sum = 0, total = 0;
        for (int k = 0; k < KEEP && wts[n].t[k] >= 0; k++) {
            sum += wts[n].w[k] * share[group[wts[n].t[k]]];
            total += wts[n].w[k];
        }
        edge[n] = total > 0 ? sum / total : 1.0;
        any = any || edge[n] < 1;
    }
    free(parent), free(group), free(id), free(pinned), free(has_pin), free(far), free(share);
    if (!ok || (shorter && !edge))
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory smoothing %zu points", nodes);
    if (!any) {
        free(edge);
        edge = NULL;
    }
    *out = edge;
    return PLUSH_OK;
}

/* One smoothing of the nodes' weights (w->node_w: the nearest four, w->fixed: no triangle) into *out_w: clusters
 * per grid cell and piece, each node the kernel-weighted mean of its piece's clusters within its reach (its reach
 * in cage edges times edge_scale[node] when edge_scale is not NULL; the whole times scale[node] when scale is not
 * NULL, none under 1 - HELD_SHRINK; the cells are then as much smaller as the least of them). */
static plush_status smooth_pass(const plush_proxy_binding *b, const float (*points)[3], smooth_work *w, size_t nodes,
                                double radius, double cage_edge, const double *scale, const double *edge_scale,
                                sparse **out_w, plush_diag *diag)
{
    size_t count = b->vertex_count;
    double least = 1.0;
    for (size_t n = 0; edge_scale && n < nodes; n++)
        least = fmin(least, edge_scale[n]);
    double reach = radius * cage_edge, cell = 0.5 * reach * (scale ? 1 - HELD_SHRINK : 1.0) * least;
    float lo[3] = {INFINITY, INFINITY, INFINITY};
    for (size_t n = 0; n < nodes; n++)
        for (int k = 0; k < 3; k++)
            lo[k] = fminf(lo[k], points[w->first[n]][k]);
    size_t keyed = 0;
    for (size_t n = 0; n < nodes; n++) {
        size_t i = w->first[n];
        if (w->fixed[n])
            continue;
        cell_key *key = &w->keys[keyed++];
        for (int k = 0; k < 3; k++) {
            double c = floor(((double)points[i][k] - lo[k]) / cell);
            key->c[k] = (int32_t)(c < 1e9 ? c : 1e9);
        }
        key->piece = plush__uf_find(w->parent, (uint32_t)n);
        key->node = (uint32_t)n;
    }
    qsort(w->keys, keyed, sizeof *w->keys, cmp_key);
    /* Clusters: mean position and mean weights of the nodes sharing a cell and a piece. */
    size_t clusters = 0;
    for (size_t j = 0; j < keyed;) {
        size_t e = j;
        double c[3] = {0, 0, 0};
        while (e < keyed && cmp_cell(w->keys[e].c, w->keys[j].c) == 0 && w->keys[e].piece == w->keys[j].piece) {
            const float *p = points[w->first[w->keys[e].node]];
            for (int k = 0; k < 3; k++)
                c[k] += p[k];
            acc_add(&w->acc, &w->node_w[w->keys[e].node], 1.0);
            e++;
        }
        cluster *cl = &w->clusters[clusters++];
        memcpy(cl->c, w->keys[j].c, sizeof cl->c);
        cl->piece = w->keys[j].piece;
        for (int k = 0; k < 3; k++)
            cl->center[k] = c[k] / (double)(e - j);
        acc_take(&w->acc, &cl->w);
        j = e;
    }
    /* Each node: the kernel-weighted mean of the clusters of its piece within reach. Nodes of one cell
     * share the candidate list. */
    sparse *out = malloc(nodes * sizeof *out);
    if (!out) {
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory smoothing %zu points", count);
    }
    memcpy(out, w->node_w, nodes * sizeof *out);
    for (size_t j = 0; j < keyed;) {
        size_t e = j, found = 0;
        double far = 0;
        while (e < keyed && cmp_cell(w->keys[e].c, w->keys[j].c) == 0) {
            double d0 = b->distances[w->first[w->keys[e].node]][0];
            far = fmax(far, fmax(reach * (edge_scale ? edge_scale[w->keys[e].node] : 1.0), d0 * radius));
            e++;
        }
        int span = (int)ceil(far / cell);
        for (int dx = -span; dx <= span; dx++)
            for (int dy = -span; dy <= span; dy++)
                for (int dz = -span; dz <= span; dz++) {
                    int32_t c[3] = {w->keys[j].c[0] + dx, w->keys[j].c[1] + dy, w->keys[j].c[2] + dz};
                    for (size_t q = lower_bound(w->clusters, clusters, c); q < clusters && cmp_cell(w->clusters[q].c, c) == 0; q++)
                        w->candidates[found++] = q;
                }
        for (size_t m = j; m < e; m++) {
            uint32_t n = w->keys[m].node;
            const float *p = points[w->first[n]];
            double d0 = b->distances[w->first[n]][0];
            double total = 0,
                   my = fmax(reach * (edge_scale ? edge_scale[n] : 1.0), d0 * radius) * (scale ? scale[n] : 1.0);
            for (size_t q = 0; q < found; q++) {
                const cluster *cl = &w->clusters[w->candidates[q]];
                if (cl->piece != w->keys[m].piece)
                    continue;
                double d[3] = {p[0] - cl->center[0], p[1] - cl->center[1], p[2] - cl->center[2]};
                double r2 = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) / (my * my);
                if (r2 >= 1)
                    continue;
                double k = (1 - r2) * (1 - r2) * (1 - r2);
                acc_add(&w->acc, &cl->w, k);
                total += k;
            }
            if (total > 0)
                acc_take(&w->acc, &out[n]);
            else
                w->acc.count = 0;
        }
        j = e;
    }
    *out_w = out;
    return PLUSH_OK;
}

plush_status plush_proxy_binding_smooth(plush_proxy_binding *b, const plush_proxy_mesh *proxy,
                                        const float (*points)[3], const uint32_t (*faces)[3], size_t face_count,
                                        const plush_proxy_smooth_options *options, plush_diag *diag)
{
    if (!b || !proxy || (b->vertex_count && !points) || (face_count && !faces) ||
        (proxy->triangle_count && (!proxy->nodes || !proxy->triangles)))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "plush_proxy_binding_smooth: missing argument");
    if (b->seed)
        return plush_diag_fail(diag, PLUSH_E_CONFLICT, -1, NULL, -1, "a seed binding stays the original method");
    if (b->triangle_count != proxy->triangle_count)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "binding made for %zu proxy triangles, proxy has %zu",
                               b->triangle_count, proxy->triangle_count);
    plush_proxy_smooth_options zero = {0};
    if (!options)
        options = &zero;
    if (!(options->radius >= 0) || options->radius > 1000)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "options", -1, "radius must be in [0, 1000] proxy edges");
    size_t count = b->vertex_count;
    for (size_t f = 0; f < face_count; f++)
        for (int k = 0; k < 3; k++)
            if (faces[f][k] >= count)
                return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "face", (int64_t)f,
                                       "vertex %u out of range (%zu points)", (unsigned)faces[f][k], count);
    for (size_t t = 0; t < proxy->triangle_count; t++)
        for (int k = 0; k < 3; k++)
            if (proxy->triangles[t][k] >= proxy->node_count)
                return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "triangle", (int64_t)t, "node index %u out of range",
                                       (unsigned)proxy->triangles[t][k]);
    double cage_edge = plush__mean_edge(&(proxy->nodes)[0][0], sizeof (proxy->nodes)[0], &(proxy->triangles)[0][0], 3 * (proxy->triangle_count));
    if (count == 0 || face_count == 0 || !(cage_edge > 0))
        return PLUSH_OK;

    smooth_work w = {0};
    size_t tc = proxy->triangle_count;
    w.node_of = malloc(count * sizeof *w.node_of);
    w.first = malloc(count * sizeof *w.first);
    size_t nodes = w.node_of && w.first ? plush__weld_positions(points, count, w.node_of, w.first) : SIZE_MAX;
    if (nodes != SIZE_MAX) {
        w.parent = malloc(nodes * sizeof *w.parent);
        w.keys = malloc(nodes * sizeof *w.keys);
        w.clusters = malloc(nodes * sizeof *w.clusters);
        w.node_w = malloc(nodes * sizeof *w.node_w);
        w.fixed = malloc(nodes * sizeof *w.fixed);
        w.candidates = malloc(nodes * sizeof *w.candidates);
        w.acc.w = calloc(tc, sizeof *w.acc.w);
        w.acc.touched = malloc(tc * sizeof *w.acc.touched);
        w.acc.cap = tc;
    }
    if (nodes == SIZE_MAX || !w.parent || !w.keys || !w.clusters || !w.node_w || !w.fixed || !w.candidates ||
        !w.acc.w || !w.acc.touched) {
        work_free(&w);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory smoothing %zu points", count);
    }
    /* Pieces: the welded surface's connected parts. */
    plush__uf_init(w.parent, nodes);
    for (size_t f = 0; f < face_count; f++)
        for (int k = 0; k < 2; k++)
            plush__uf_union(w.parent, w.node_of[faces[f][k]], w.node_of[faces[f][k + 1]]);
    /* the default reach: PLUSH_PROXY_SMOOTH_RADIUS edges of a cage of PLUSH_PROXY_SMOOTH_TRIANGLES or more; a
     * coarser cage's edges are sqrt(PLUSH_PROXY_SMOOTH_TRIANGLES / T) times as long, and it smooths over the
     * same length, not the same count of its edges */
    double radius = options->radius > 0 ? options->radius
                                        : PLUSH_PROXY_SMOOTH_RADIUS *
                                              fmin(1.0, sqrt((double)proxy->triangle_count / PLUSH_PROXY_SMOOTH_TRIANGLES));
    /* Where the cage is held (pinned to bones) across a joint -- by two bones or more, the second holding at least
     * JOINT_SHARE of the held nodes: a dress held at the chest and the hips -- the smoothing reaches less: each
     * held triangle moves as its bone does, and a wide average over triangles the joint turns apart cuts the
     * body's corner there (the waist, a hip). Its reach shrinks with how held a point's triangles are, to half
     * where all of them are, and the part's grid cells halve with it. A cage held by one bone (hair on
     * the head; a few of a bob's nodes on a lock's root bone) moves rigidly where it is held, and is smoothed as
     * before. How held a point is comes from its weights smoothed at the full reach, so it varies as smoothly. */
    for (size_t n = 0; n < nodes; n++) {
        size_t i = w.first[n];
        w.fixed[n] = b->triangles[i][0] < 0;
        for (int k = 0; k < KEEP; k++) {
            w.node_w[n].t[k] = k < PLUSH_PROXY_INFLUENCES && b->triangles[i][k] >= 0 ? b->triangles[i][k] : -1;
            w.node_w[n].w[k] = w.node_w[n].t[k] >= 0 ? b->weights[i][k] : 0;
        }
    }
    sparse *out = NULL;
    plush_status st = smooth_pass(b, points, &w, nodes, radius, cage_edge, NULL, NULL, &out, diag);
    int32_t *by = st == PLUSH_OK && options->node_bone ? malloc((proxy->node_count ? proxy->node_count : 1) * sizeof *by)
                                                       : NULL;
    if (st == PLUSH_OK && options->node_bone && !by) {
        free(out);
        work_free(&w);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory smoothing %zu points", count);
    }
    bool joint = by && held_across_joint(proxy, options->node_bone, by);
    free(by);
    double *scale = NULL, *edge = NULL;
    if (st == PLUSH_OK && joint) {
        scale = malloc(nodes * sizeof *scale);
        st = scale ? PLUSH_OK
                   : plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory smoothing %zu points", count);
        for (size_t n = 0; scale && n < nodes; n++) {
            double h = 0;
            for (int k = 0; k < KEEP && out[n].t[k] >= 0; k++)
                for (int c = 0; c < 3; c++)
                    h += options->node_bone[proxy->triangles[out[n].t[k]][c]] >= 0 ? out[n].w[k] / 3.0 : 0;
            scale[n] = 1 - HELD_SHRINK * (h < 1 ? h : 1);
        }
    }
    if (st == PLUSH_OK && options->node_bone && options->point_swung)
        st = free_length_scale(proxy, options->node_bone, options->point_swung, &w, out, nodes, radius * cage_edge,
                               &edge, diag);
    if (st == PLUSH_OK && (scale || edge)) {
        free(out);
        out = NULL;
        st = smooth_pass(b, points, &w, nodes, radius, cage_edge, scale, edge, &out, diag);
    }
    free(scale);
    free(edge);
    if (st != PLUSH_OK) {
        free(out);
        work_free(&w);
        return st;
    }
    free(w.node_w);
    w.node_w = out;
    write_rows(b, proxy, points, &w);
    work_free(&w);
    return PLUSH_OK;
}
