/* Private pieces of plush_proxy_bind shared by bind.c (driver, brute force), distance.c (the exact
 * distance), seed.c (the original method's arithmetic) and bvh_embree.c (the Embree search). Frames and
 * skinning do not need any of this. */
#ifndef PLUSH_PROXY_BIND_INTERNAL_H
#define PLUSH_PROXY_BIND_INTERNAL_H

#include "plush/proxy.h"

/* What the exact distance precomputes per triangle: the dual vectors that give the barycentric
 * coordinates (s, t) of p's projection as dot products, the unit normal, and the edges' inverse squared
 * lengths. flat: no meaningful normal, the edges alone decide. */
typedef struct proxy_exact {
    double gs[3], gt[3], unit_normal[3];
    double inv_len2[3];      /* 1 / |edge|^2 for ab, bc, ca (0 for a zero-length edge) */
    bool flat;
} proxy_exact;

void plush__proxy_exact_prepare(const float a[3], const float b[3], const float c[3], proxy_exact *e);
/* plush_proxy_point_triangle_distance with the precomputed part: the public routine prepares and calls
 * this, so cached and public give the same bits. */
float plush__proxy_exact_distance(const proxy_exact *e, const float p[3], const float a[3], const float b[3],
                           const float c[3]);

/* A usable proxy triangle, corners copied side by side. n is the seed routine's unit normal, computed
 * once with exactly the operations plush_proxy_seed_distance uses. */
typedef struct proxy_tri {
    float v[3][3];
    float n[3];
    uint32_t index;          /* triangle index in the proxy */
    proxy_exact exact;
} proxy_tri;

/* The seed routine's unit normal; false when the original's arithmetic would give NaN (zero or
 * non-finite cross product): such a triangle is never a seed candidate (the original's scan measures NaN
 * for it and never places it). */
bool plush__proxy_seed_normal(const float a[3], const float b[3], const float c[3], float n[3]);
/* plush_proxy_seed_distance with the normal from plush__proxy_seed_normal. */
float plush__proxy_seed_distance_n(const float p[3], const float a[3], const float b[3], const float c[3],
                            const float n[3]);
/* Default mode rejects a triangle whose area is zero relative to its size (twice the area at most
 * 1e-6 of the longest edge squared): its normal, and so its frame, would be noise. */
bool plush__proxy_tri_degenerate(const float a[3], const float b[3], const float c[3]);

/* A sphere around a triangle's corners, kept apart from the triangles so the cheap test that skips most
 * of them reads 16 bytes: a lower bound on the distance is |p - center| - radius. */
typedef struct proxy_bound {
    float center[3], radius;
} proxy_bound;

/* What a search needs: the usable triangles (in increasing triangle index, so a position in tris orders
 * like the index it stands for) and the mode. scale is the largest coordinate magnitude of their
 * corners, which bounds the rounding error of a distance (see proxy_search_radius). */
typedef struct proxy_search {
    const proxy_tri *tris;
    const proxy_bound *bounds;
    size_t tri_count;
    bool seed;
    float scale;
} proxy_search;

static inline float proxy_search_distance(const proxy_search *s, const proxy_tri *t, const float p[3])
{
    if (s->seed)
        return plush__proxy_seed_distance_n(p, t->v[0], t->v[1], t->v[2], t->n);
    return plush__proxy_exact_distance(&t->exact, p, t->v[0], t->v[1], t->v[2]);
}

/* The best four candidates so far, best first, as positions in the search's tris (which order like
 * triangle indices). The order is total, so the result does not depend on
 * the order candidates arrive in: default mode (d, index) ascending; seed mode d ascending and, for
 * equal d, the higher index first (the original's scan lets a later equal distance go first). */
typedef struct proxy_best {
    float d[PLUSH_PROXY_INFLUENCES];
    uint32_t t[PLUSH_PROXY_INFLUENCES];
    int n;
} proxy_best;

static inline bool proxy_best_before(float d, uint32_t t, float od, uint32_t ot, bool seed)
{
    if (d != od)
        return d < od;
    return seed ? t > ot : t < ot;
}

static inline bool proxy_best_holds(const proxy_best *b, uint32_t t)
{
    for (int i = 0; i < b->n; i++)
        if (b->t[i] == t)
            return true;
    return false;
}

/* Offers one candidate; true when it was kept. A triangle already held is ignored (a BVH may report a
 * triangle twice, and a hint pre-fills the list); a non-finite distance is never kept. */
static inline bool proxy_best_offer(proxy_best *b, float d, uint32_t t, bool seed)
{
    if (!(d <= 3.0e38f))
        return false;
    int n = b->n;
    if (n == PLUSH_PROXY_INFLUENCES && !proxy_best_before(d, t, b->d[n - 1], b->t[n - 1], seed))
        return false;
    if (proxy_best_holds(b, t))
        return false;
    int k = n < PLUSH_PROXY_INFLUENCES ? n : n - 1;
    while (k > 0 && proxy_best_before(d, t, b->d[k - 1], b->t[k - 1], seed)) {
        b->d[k] = b->d[k - 1];
        b->t[k] = b->t[k - 1];
        k--;
    }
    b->d[k] = d;
    b->t[k] = t;
    if (n < PLUSH_PROXY_INFLUENCES)
        b->n = n + 1;
    return true;
}

/* A pruning radius that cannot cut off a triangle whose computed distance is <= d. Both distance
 * routines can only be pruned by a box test because each is, before rounding, at least the true
 * distance (the seed routine measures to a point of the triangle, or to the plane when the projection
 * lies inside); the margin covers rounding on both sides: ours (a few ulps of the coordinates, hence
 * the scale term) and the search's box distance (a few ulps of d). */
static inline float proxy_search_radius(float d, float point_scale)
{
    return d + 1e-5f * (d + point_scale);
}

/* ---- seed mode (seed.c, built without FMA contraction) ------------------------------------------ */

/* The original's bounding-box pre-check: true when a component of p - max or min - p exceeds far. */
bool plush__proxy_seed_box_skips(const proxy_tri *t, const float p[3], float far);
/* The original's search for p, literally: s->tris in index order, the box pre-check and the d > far skip
 * against its far, four slots where an equal distance goes before the held one. best is overwritten.
 * Its result is the best four of proxy_best's seed order over the triangles it does not skip; it skips
 * none of the overall best four unless the box pre-check rejects one of them at a far >= its distance,
 * so a search that finds the overall best four (the BVH) gives the scan's answer whenever
 * plush__proxy_seed_box_skips(t, p, d) is false for each of them (bind.c checks, and scans otherwise). */
void plush__proxy_seed_scan(const proxy_search *s, const float p[3], proxy_best *best);
/* The original's percents from the n (0..4) sorted distances d: none -> 100 on slot 0 (the original's
 * "triangle 0"); d0 < 0.00001 -> 100 on slot 0 alone; slots with d_b / d0 > drop_ratio dropped; each
 * (uint32)(100 (d0 / d_b / sum) + 0.00001) with sum = 1 + the sum of d0 / d_b over the kept b >= 1, then
 * plush__proxy_seed_settle. Returns the number of slots kept (0 for none). */
int plush__proxy_seed_percent(const float d[PLUSH_PROXY_INFLUENCES], int n, float drop_ratio,
                              uint32_t pct[PLUSH_PROXY_INFLUENCES]);
/* The rounding remainder: the difference of the total to 100 added to (or, when over, taken from, down
 * to 0) the first percent, which is capped at 100. */
void plush__proxy_seed_settle(uint32_t pct[PLUSH_PROXY_INFLUENCES]);

/* ---- Embree search (bvh_embree.c) --------------------------------------------------------------- */

typedef struct proxy_bvh proxy_bvh;

/* Loads Embree (dlopen, no link-time dependency) and builds a BVH over s->tris. On failure returns
 * NULL with a reason in why; the caller then falls back to brute force. The search must outlive it. */
proxy_bvh *plush__proxy_bvh_create(const proxy_search *s, char *why, size_t why_size);
/* The best four for p; best may arrive pre-filled (a hint), which only shrinks the starting radius.
 * Safe to call from several threads at once. */
void plush__proxy_bvh_query(const proxy_bvh *bvh, const float p[3], proxy_best *best);
void plush__proxy_bvh_destroy(proxy_bvh *bvh);

#endif
