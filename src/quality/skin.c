/* Points behind a surface (plush/sys/quality.h): a bounding volume hierarchy over the skin's triangles,
 * built once at rest and refitted each frame (the skin is skinned by bones: its triangles keep their
 * neighbours, so boxes refitted over the same tree stay tight enough), searched for each point's nearest
 * triangle, starting from the triangle that was nearest the frame before. */
#include "plush/sys/quality.h"
#include "core/common.h"
#include "core/geom.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

enum { LEAF_SIZE = 4 };

/* A search's stack of nodes to look at, each with its box's squared distance. The binary tree halves its
 * triangles at every level, so it is at most 33 levels deep for any count a uint32_t holds and the wide tree the
 * searches walk 17, and a depth-first search that takes one node and puts back at most its four children holds at
 * most 3 * 17 + 1. Each search keeps its stack on its own call stack, so searches may run at once on any number
 * of threads. */
enum { SEARCH_STACK = 64 };
typedef struct search_entry {
    uint32_t node, count; /* a wide node (count 0), or a leaf's triangles node .. node + count */
    float d2;
} search_entry;

typedef struct node {
    float lo[3], hi[3];
    uint32_t first, count; /* a leaf: triangles first .. first + count of the ordered list; else count 0 and
                            * first the left child (the right one follows it) */
} node;

/* The tree the searches walk: the binary tree above taken two levels at a time, so each step tests the boxes of up
 * to four children at once (side by side, axis by axis: one vector operation each where the machine has them) and
 * the walk takes half the steps. A child is another wide node, or a leaf's run of triangles; an unused slot's box
 * is empty (lo above hi), which no point comes near. The boxes are copied from the binary tree's at each refit. */
enum { WIDE = 4 };
typedef struct wide {
    float lo[3][WIDE], hi[3][WIDE];
    uint32_t child[WIDE]; /* a wide node, or with count > 0 a leaf's first triangle */
    uint32_t count[WIDE]; /* a leaf's triangles; 0 for a wide node or an unused slot */
} wide;

struct plush_quality_skin {
    size_t vertex_count;
    uint32_t (*triangles)[3]; /* in the tree's leaf order */
    size_t triangle_count;
    node *nodes;
    size_t node_count;
    wide *wides;              /* the tree the searches walk (wide node 0 its root) */
    uint32_t (*wide_from)[WIDE]; /* per wide node: the binary node each slot's box is copied from (UINT32_MAX:
                                    unused) */
    size_t wide_count;
    size_t split_node;        /* the root's subtrees (when it is not a leaf), refit on two threads: node 1 and nodes
                                 3 .. split_node, node 2 and the nodes from split_node on */
    uint32_t *points;
    size_t point_count;
    double depth2;            /* the squared depth a point can lie behind the skin: the search's radius */
    uint64_t frame;           /* poses so far: whose turn it is for a full search in plush_quality_skin_depth */
    uint8_t *measured;        /* per point: 1 when measured */
    uint32_t *last[PLUSH_QUALITY_SKIN_SLOTS]; /* per point: the nearest triangle the last time, or UINT32_MAX */
    uint8_t *far[PLUSH_QUALITY_SKIN_SLOTS];   /* per point: plush_quality_skin_depth found none within reach */
    float (*sphere)[4];       /* per triangle at the pose: its vertices' mean and the radius that holds them */
    /* which side is out (after Baerentzen and Aanaes 2005), worked out at the pose where a search lands: each
     * welded vertex's triangles and corners (node_first .. node_first[+1] of node_corner: 3 * triangle +
     * corner), each triangle's neighbour across its edge c (corner c to c + 1), UINT32_MAX on a border or
     * where more than two triangles share the edge */
    uint32_t *node_first, *node_corner;
    uint8_t *node_border;     /* per welded vertex: on an edge of one triangle (or of more than two) */
    uint8_t *two_sided;       /* per triangle: another lies on the same welded corners facing the other way (a
                                 sheet the model draws from both sides, which has no inside) */
    float (*corner_angle)[3]; /* per triangle: its corners' angles at rest (skinning hardly changes them) */
    uint32_t (*corner_node)[3];
    uint32_t (*across)[3];
    const float (*positions)[3];
    const float (*normals)[3];
};

/* ---- building the tree ---- */

typedef struct build {
    plush_quality_skin *skin;
    const float (*rest)[3];
    float (*centroid)[3];
    uint32_t *order; /* triangle indices being partitioned */
} build;

/* Puts the k-th smallest centroid along axis at order[k], smaller ones before it (Hoare's selection). */
static void select_kth(build *b, size_t lo, size_t hi, size_t k, int axis)
{
    uint32_t *o = b->order;
    while (hi > lo + 1) {
        float pivot = b->centroid[o[lo + (hi - 1 - lo) / 2]][axis]; /* never the last: the right part is never empty */
        size_t i = lo, j = hi - 1;
        for (;;) {
            while (b->centroid[o[i]][axis] < pivot)
                i++;
            while (b->centroid[o[j]][axis] > pivot)
                j--;
            if (i >= j)
                break;
            uint32_t t = o[i];
            o[i] = o[j];
            o[j] = t;
            i++;
            j--;
        }
        /* o[lo..j] <= pivot <= o[j+1..hi) */
        if (k <= j)
            hi = j + 1;
        else
            lo = j + 1;
    }
}

/* Splits triangles first .. first + count into node n, children allocated next to each other. */
static void build_node(build *b, size_t n, size_t first, size_t count)
{
    plush_quality_skin *s = b->skin;
    if (count <= LEAF_SIZE) {
        s->nodes[n].first = (uint32_t)first;
        s->nodes[n].count = (uint32_t)count;
        return;
    }
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t i = first; i < first + count; i++)
        for (int k = 0; k < 3; k++) {
            float c = b->centroid[b->order[i]][k];
            lo[k] = c < lo[k] ? c : lo[k];
            hi[k] = c > hi[k] ? c : hi[k];
        }
    int axis = 0;
    for (int k = 1; k < 3; k++)
        if (hi[k] - lo[k] > hi[axis] - lo[axis])
            axis = k;
    size_t half = count / 2;
    select_kth(b, first, first + count, first + half, axis);
    size_t left = s->node_count;
    s->node_count += 2;
    s->nodes[n].first = (uint32_t)left;
    s->nodes[n].count = 0;
    build_node(b, left, first, half);
    if (n == 0) /* the root's two subtrees: nodes 1 and 3 .. split_node, 2 and split_node .. */
        s->split_node = s->node_count;
    build_node(b, left + 1, first + half, count - half);
}

/* Wide node w with every slot unused. */
static void clear_wide(plush_quality_skin *s, size_t w)
{
    for (int k = 0; k < WIDE; k++) {
        s->wides[w].count[k] = 0;
        s->wides[w].child[k] = 0;
        s->wide_from[w][k] = UINT32_MAX;
        for (int a = 0; a < 3; a++)
            s->wides[w].lo[a][k] = INFINITY, s->wides[w].hi[a][k] = -INFINITY;
    }
}

/* Wide node w from binary node n (not a leaf): its children, or for a child that is not a leaf its own two, each
 * a leaf slot or a wide node of its own, made after it. */
static void collapse(plush_quality_skin *s, size_t w, size_t n)
{
    uint32_t slot[WIDE];
    int used = 0;
    for (int c = 0; c < 2; c++) {
        uint32_t b = s->nodes[n].first + (uint32_t)c;
        if (s->nodes[b].count) {
            slot[used++] = b;
        } else {
            slot[used++] = s->nodes[b].first;
            slot[used++] = s->nodes[b].first + 1;
        }
    }
    clear_wide(s, w);
    for (int k = 0; k < used; k++) {
        s->wide_from[w][k] = slot[k];
        const node *b = &s->nodes[slot[k]];
        if (b->count) {
            s->wides[w].child[k] = b->first;
            s->wides[w].count[k] = b->count;
        } else {
            uint32_t made = (uint32_t)s->wide_count++;
            s->wides[w].child[k] = made;
            collapse(s, made, slot[k]);
        }
    }
}

/* The wide tree of the binary one (built): a root that is a leaf is a wide node with that one leaf. */
static void make_wide(plush_quality_skin *s)
{
    s->wide_count = 1;
    if (!s->nodes[0].count) {
        collapse(s, 0, 0);
        return;
    }
    clear_wide(s, 0);
    s->wide_from[0][0] = 0;
    s->wides[0].child[0] = s->nodes[0].first;
    s->wides[0].count[0] = s->nodes[0].count;
}

/* Triangle t's unit normal at the pose, turned to the side the model's normals give (zero when degenerate). */
static void face_normal(const plush_quality_skin *s, size_t t, double out[3])
{
    const float (*p)[3] = s->positions;
    const uint32_t *tri = s->triangles[t];
    double e0[3], e1[3], given[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++)
        e0[k] = (double)p[tri[1]][k] - p[tri[0]][k], e1[k] = (double)p[tri[2]][k] - p[tri[1]][k];
    out[0] = e0[1] * e1[2] - e0[2] * e1[1];
    out[1] = e0[2] * e1[0] - e0[0] * e1[2];
    out[2] = e0[0] * e1[1] - e0[1] * e1[0];
    for (int c = 0; s->normals && c < 3; c++)
        for (int k = 0; k < 3; k++)
            given[k] += s->normals[tri[c]][k];
    double len = sqrt(plush__dot3d(out, out)), turn = plush__dot3d(out, given) < 0 ? -1.0 : 1.0;
    for (int k = 0; k < 3; k++)
        out[k] = len > 0 && isfinite(len) ? turn * out[k] / len : 0.0;
}

/* Node n's box from its children, or for a leaf from its triangles, whose spheres it sets too (each triangle
 * lies in one leaf: the leaves' passes set every sphere once). */
static void refit_node(plush_quality_skin *s, const float (*p)[3], size_t n)
{
    node *nd = &s->nodes[n];
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    if (nd->count) {
        for (uint32_t t = nd->first; t < nd->first + nd->count; t++) {
            const float *q[3] = {p[s->triangles[t][0]], p[s->triangles[t][1]], p[s->triangles[t][2]]};
            float m[3], r2 = 0;
            for (int k = 0; k < 3; k++) {
                m[k] = (q[0][k] + q[1][k] + q[2][k]) / 3.0f;
                for (int c = 0; c < 3; c++) {
                    lo[k] = q[c][k] < lo[k] ? q[c][k] : lo[k];
                    hi[k] = q[c][k] > hi[k] ? q[c][k] : hi[k];
                }
            }
            for (int c = 0; c < 3; c++) {
                float d2 = (q[c][0] - m[0]) * (q[c][0] - m[0]) + (q[c][1] - m[1]) * (q[c][1] - m[1]) +
                           (q[c][2] - m[2]) * (q[c][2] - m[2]);
                r2 = d2 > r2 ? d2 : r2;
            }
            memcpy(s->sphere[t], m, sizeof m);
            s->sphere[t][3] = sqrtf(r2) * 1.0001f;
        }
    } else {
        const node *a = &s->nodes[nd->first], *c = &s->nodes[nd->first + 1];
        for (int k = 0; k < 3; k++) {
            lo[k] = a->lo[k] < c->lo[k] ? a->lo[k] : c->lo[k];
            hi[k] = a->hi[k] > c->hi[k] ? a->hi[k] : c->hi[k];
        }
    }
    memcpy(nd->lo, lo, sizeof lo);
    memcpy(nd->hi, hi, sizeof hi);
}

/* One of the root's subtrees (part 0: node 1, part 1: node 2). Children come after their parent: a backward
 * pass sees them first. */
static void refit_part(void *ctx, size_t from, size_t to)
{
    plush_quality_skin *s = ctx;
    const float(*p)[3] = s->positions;
    for (size_t h = from; h < to; h++) {
        for (size_t n = h ? s->node_count : s->split_node; n-- > (h ? s->split_node : 3);)
            refit_node(s, p, n);
        refit_node(s, p, 1 + h);
    }
}

/* Each triangle's sphere and each node's box at the pose, the root's two subtrees on two threads. */
static void refit(plush_quality_skin *s, const float (*p)[3])
{
    if (s->nodes[0].count) { /* a leaf */
        refit_node(s, p, 0);
        return;
    }
    plush__two_parts(refit_part, s, 1, 2);
    refit_node(s, p, 0);
}

/* The wide tree's boxes from the binary tree's (refit). */
static void refit_wide(plush_quality_skin *s)
{
    for (size_t w = 0; w < s->wide_count; w++)
        for (int k = 0; k < WIDE; k++) {
            uint32_t b = s->wide_from[w][k];
            if (b == UINT32_MAX)
                continue;
            for (int a = 0; a < 3; a++) {
                s->wides[w].lo[a][k] = s->nodes[b].lo[a];
                s->wides[w].hi[a][k] = s->nodes[b].hi[a];
            }
        }
}

/* ---- the nearest triangle ---- */


/* The point of triangle abc nearest p, as barycentric weights w (of a, b, c), and the squared distance: by the
 * Voronoi regions of the triangle's corners, edges and face (as in Ericson, Real-Time Collision Detection). */
static double nearest_on_triangle(const float pf[3], const float af[3], const float bf[3], const float cf[3],
                                  double w[3])
{
    double ab[3], ac[3], ap[3];
    for (int k = 0; k < 3; k++) {
        ab[k] = (double)bf[k] - af[k];
        ac[k] = (double)cf[k] - af[k];
        ap[k] = (double)pf[k] - af[k];
    }
    double d1 = plush__dot3d(ab, ap), d2 = plush__dot3d(ac, ap);
    double u = 0, v = 0; /* the nearest point is a + u ab + v ac */
    bool on_bc = false;  /* on edge bc: a's weight exactly 0, not 1 - u - v's rounding (the side there is the edge's) */
    if (d1 <= 0 && d2 <= 0) {
        u = v = 0;
    } else {
        double bp[3], cp[3];
        for (int k = 0; k < 3; k++) {
            bp[k] = (double)pf[k] - bf[k];
            cp[k] = (double)pf[k] - cf[k];
        }
        double d3 = plush__dot3d(ab, bp), d4 = plush__dot3d(ac, bp), d5 = plush__dot3d(ab, cp), d6 = plush__dot3d(ac, cp);
        double vc = d1 * d4 - d3 * d2, vb = d5 * d2 - d1 * d6, va = d3 * d6 - d5 * d4;
        if (d3 >= 0 && d4 <= d3) {
            u = 1;
        } else if (d6 >= 0 && d5 <= d6) {
            v = 1;
        } else if (vc <= 0 && d1 >= 0 && d3 <= 0) {
            u = d1 - d3 != 0 ? d1 / (d1 - d3) : 0;
        } else if (vb <= 0 && d2 >= 0 && d6 <= 0) {
            v = d2 - d6 != 0 ? d2 / (d2 - d6) : 0;
        } else if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0) {
            double t = (d4 - d3) + (d5 - d6);
            v = t != 0 ? (d4 - d3) / t : 0;
            u = 1 - v;
            on_bc = true;
        } else {
            double sum = va + vb + vc;
            if (sum != 0) {
                u = vb / sum;
                v = vc / sum;
            }
        }
    }
    w[0] = on_bc ? 0 : 1 - u - v;
    w[1] = u;
    w[2] = v;
    double d2sum = 0;
    for (int k = 0; k < 3; k++) {
        double q = af[k] + u * ab[k] + v * ac[k] - pf[k];
        d2sum += q * q;
    }
    return d2sum;
}

typedef struct hit {
    uint32_t triangle;
    double d2, w[3];
    float d; /* sqrt(d2), rounded up */
} hit;

static void try_triangle(const plush_quality_skin *s, uint32_t t, const float p[3], hit *best)
{
    const float *sp = s->sphere[t];
    float dx = p[0] - sp[0], dy = p[1] - sp[1], dz = p[2] - sp[2], within = sp[3] + best->d;
    if (!(dx * dx + dy * dy + dz * dz < within * within)) /* no point of the triangle is nearer than the best */
        return;
    const uint32_t *tri = s->triangles[t];
    double w[3];
    double d2 = nearest_on_triangle(p, s->positions[tri[0]], s->positions[tri[1]], s->positions[tri[2]], w);
    /* of triangles as near, the first in the tree's order: the answer does not depend on the order of the search */
    if (d2 < best->d2 || (d2 == best->d2 && t < best->triangle)) {
        best->d2 = d2;
        best->d = (float)sqrt(d2) * 1.0001f;
        best->triangle = t;
        memcpy(best->w, w, sizeof w);
    }
}

/* The squared distances of p from the four boxes of wide node x: along each axis how far p lies below the box or
 * above it, squared and summed (an empty box: infinite; a point that is not finite comes near every box, and no
 * triangle is nearer than its best). */
static void wide_distance2(const wide *x, const float p[3], float out[WIDE])
{
#if defined(__SSE2__)
    __m128 zero = _mm_setzero_ps(), sum = zero;
    for (int a = 0; a < 3; a++) {
        __m128 q = _mm_set1_ps(p[a]);
        __m128 below = _mm_sub_ps(_mm_loadu_ps(x->lo[a]), q), above = _mm_sub_ps(q, _mm_loadu_ps(x->hi[a]));
        __m128 out_a = _mm_max_ps(_mm_max_ps(below, above), zero);
        sum = _mm_add_ps(sum, _mm_mul_ps(out_a, out_a));
    }
    _mm_storeu_ps(out, sum);
#else
    for (int k = 0; k < WIDE; k++) {
        float d2 = 0;
        for (int a = 0; a < 3; a++) {
            float below = x->lo[a][k] - p[a], above = p[a] - x->hi[a][k];
            float o = below > above ? below : above;
            o = o > 0 ? o : 0;
            d2 += o * o;
        }
        out[k] = d2;
    }
#endif
}

/* The triangle nearest p within sqrt(r2) (none: UINT32_MAX), trying hint first; of triangles as near, the first
 * in the tree's order (try_triangle), so the answer is the same whatever order the walk takes. */
static void nearest(const plush_quality_skin *s, const float p[3], uint32_t hint, double r2, hit *best)
{
    search_entry stack[SEARCH_STACK];
    best->triangle = UINT32_MAX;
    best->d2 = r2;
    best->d = (float)sqrt(r2) * 1.0001f;
    if (hint < s->triangle_count)
        try_triangle(s, hint, p, best);
    /* each entry: a wide node or a leaf and its box's squared distance, so it is dropped without measuring it
     * again once a nearer triangle is found */
    size_t top = 0;
    stack[top++] = (search_entry){.node = 0, .count = 0, .d2 = 0};
    while (top) {
        search_entry e = stack[--top];
        if (!(e.d2 <= best->d2))
            continue;
        if (e.count) {
            for (uint32_t t = e.node; t < e.node + e.count; t++)
                try_triangle(s, t, p, best);
            continue;
        }
        const wide *x = &s->wides[e.node];
        float d2[WIDE];
        wide_distance2(x, p, d2);
        /* the children within reach, the nearest pushed last (searched first) */
        search_entry near[WIDE];
        int n = 0;
        for (int k = 0; k < WIDE; k++) {
            if (!(d2[k] <= best->d2))
                continue;
            int i = n++;
            for (; i > 0 && near[i - 1].d2 < d2[k]; i--)
                near[i] = near[i - 1];
            near[i] = (search_entry){.node = x->child[k], .count = x->count[k], .d2 = d2[k]};
        }
        for (int i = 0; i < n; i++)
            stack[top++] = near[i];
    }
}

/* Signed distance of p from its nearest triangle: negative behind it; normal, when not NULL, gets the side's
 * normal there (not unit). The side is the pseudo-normal of the feature nearest p (Baerentzen and Aanaes
 * 2005): the triangle's own normal inside it, the two triangles' sum on an edge, the angle-weighted sum of a
 * vertex's triangles at a corner; on a closed surface it tells inside from outside wherever p lies, where
 * the normals interpolated at a corner or an edge could point away from p (a hair beside a fingertip read
 * 2.5 units behind the hand). */
static double signed_distance(const plush_quality_skin *s, const float p[3], const hit *h, double normal[3])
{
    const uint32_t *tri = s->triangles[h->triangle];
    double q[3] = {0, 0, 0}, n[3] = {0, 0, 0};
    int zeros = 0, kept = 0, gone = 0;
    for (int c = 0; c < 3; c++) {
        for (int k = 0; k < 3; k++)
            q[k] += h->w[c] * s->positions[tri[c]][k];
        if (h->w[c] == 0)
            zeros++, gone = c;
        else
            kept = c;
    }
    bool rim = false; /* nearest a border of the skin: p lies beyond its rim, where an open skin has no inside */
    double f[3];
    if (zeros == 2) { /* a corner: its triangles' normals weighted by their angles there */
        uint32_t at = s->corner_node[h->triangle][kept];
        for (uint32_t i = s->node_first[at]; i < s->node_first[at + 1]; i++) {
            uint32_t t = s->node_corner[i] / 3, c = s->node_corner[i] % 3;
            face_normal(s, t, f);
            for (int k = 0; k < 3; k++)
                n[k] += s->corner_angle[t][c] * f[k];
        }
        rim = s->node_border[at];
    } else {
        face_normal(s, h->triangle, n);
        uint32_t other = zeros == 1 ? s->across[h->triangle][(gone + 1) % 3] : UINT32_MAX;
        if (other != UINT32_MAX) { /* an edge: the edge opposite the zero weight */
            face_normal(s, other, f);
            for (int k = 0; k < 3; k++)
                n[k] += f[k];
        }
        rim = (zeros == 1 && other == UINT32_MAX) || (zeros == 0 && s->two_sided[h->triangle]);
    }
    double d[3] = {p[0] - q[0], p[1] - q[1], p[2] - q[2]};
    double dist = sqrt(h->d2);
    if (normal)
        memcpy(normal, n, sizeof n);
    return plush__dot3d(d, n) < 0 && !rim ? -dist : dist;
}

/* The vertices welded by rest position (the model splits them at seams of its textures and normals, which the
 * surface does not have) and each triangle's neighbours across its edges, for the sides. */
static plush_status side_setup(plush_quality_skin *s, const float (*rest)[3], size_t vertex_count)
{
    size_t nt = s->triangle_count;
    uint32_t *node_of = malloc((vertex_count ? vertex_count : 1) * sizeof *node_of);
    plush__edge *edges = malloc((nt ? 3 * nt : 1) * sizeof *edges);
    s->corner_node = malloc((nt ? nt : 1) * sizeof *s->corner_node);
    s->across = malloc((nt ? nt : 1) * sizeof *s->across);
    s->node_corner = malloc((nt ? 3 * nt : 1) * sizeof *s->node_corner);
    s->corner_angle = malloc((nt ? nt : 1) * sizeof *s->corner_angle);
    size_t nodes = node_of && edges && s->corner_node && s->across && s->node_corner && s->corner_angle
                       ? plush__weld_positions(rest, vertex_count, node_of, NULL)
                       : SIZE_MAX;
    if (nodes == SIZE_MAX || !(s->node_first = calloc(nodes + 1, sizeof *s->node_first)) ||
        !(s->node_border = calloc(nodes ? nodes : 1, 1))) {
        free(node_of), free(edges);
        return PLUSH_E_NOMEM;
    }
    for (size_t t = 0; t < nt; t++)
        for (int c = 0; c < 3; c++) { /* between the two edges leaving the corner */
            const float *a = rest[s->triangles[t][c]], *b = rest[s->triangles[t][(c + 1) % 3]],
                        *d = rest[s->triangles[t][(c + 2) % 3]];
            double out[3], in[3];
            for (int k = 0; k < 3; k++)
                out[k] = (double)b[k] - a[k], in[k] = (double)d[k] - a[k];
            double lo = sqrt(plush__dot3d(out, out) * plush__dot3d(in, in));
            double cosv = lo > 0 ? plush__dot3d(out, in) / lo : 1;
            s->corner_angle[t][c] = (float)acos(cosv < -1 ? -1 : cosv > 1 ? 1 : cosv);
        }
    size_t ne = 0;
    for (size_t t = 0; t < nt; t++)
        for (int c = 0; c < 3; c++) {
            s->corner_node[t][c] = node_of[s->triangles[t][c]];
            s->across[t][c] = UINT32_MAX;
            s->node_first[s->corner_node[t][c] + 1]++;
        }
    for (size_t v = 0; v < nodes; v++) /* each vertex's corners, in triangle order */
        s->node_first[v + 1] += s->node_first[v];
    for (size_t t = 0; t < nt; t++)
        for (int c = 0; c < 3; c++)
            s->node_corner[s->node_first[s->corner_node[t][c]]++] = (uint32_t)(3 * t + (size_t)c);
    for (size_t v = nodes; v > 0; v--)
        s->node_first[v] = s->node_first[v - 1];
    s->node_first[0] = 0;
    for (size_t t = 0; t < nt; t++)
        for (int c = 0; c < 3; c++) {
            uint32_t a = s->corner_node[t][c], b = s->corner_node[t][(c + 1) % 3];
            if (a != b)
                edges[ne++] = (plush__edge){.lo = a < b ? a : b, .hi = a < b ? b : a, .owner = (uint32_t)t,
                                           .slot = (uint32_t)c};
        }
    qsort(edges, ne, sizeof *edges, plush__edge_order);
    for (size_t i = 0; i < ne;) {
        size_t j = i + 1;
        while (j < ne && edges[j].lo == edges[i].lo && edges[j].hi == edges[i].hi)
            j++;
        if (j - i == 2) {
            s->across[edges[i].owner][edges[i].slot] = edges[i + 1].owner;
            s->across[edges[i + 1].owner][edges[i + 1].slot] = edges[i].owner;
        } else {
            s->node_border[edges[i].lo] = s->node_border[edges[i].hi] = 1;
        }
        i = j;
    }
    free(node_of), free(edges);
    return PLUSH_OK;
}

/* Marks the triangles on welded corners another triangle shares, facing the other way (at rest: the skin posed
 * there), as two-sided; false when out of memory. */
static bool find_two_sided(plush_quality_skin *s)
{
    size_t nt = s->triangle_count;
    plush__face_key *list = malloc((nt ? nt : 1) * sizeof *list);
    s->two_sided = calloc(nt ? nt : 1, 1);
    if (!list || !s->two_sided) {
        free(list);
        return false;
    }
    for (size_t t = 0; t < nt; t++)
        list[t] = plush__face_key_of(s->corner_node[t][0], s->corner_node[t][1], s->corner_node[t][2], (uint32_t)t);
    qsort(list, nt, sizeof *list, plush__face_key_order);
    for (size_t i = 0; i < nt;) {
        size_t j = i + 1;
        while (j < nt && !memcmp(list[j].v, list[i].v, sizeof list[i].v))
            j++;
        bool opposite = false;
        double a[3], b[3];
        for (size_t x = i; x + 1 < j && !opposite; x++)
            for (size_t y = x + 1; y < j && !opposite; y++) {
                face_normal(s, list[x].face, a);
                face_normal(s, list[y].face, b);
                opposite = plush__dot3d(a, b) < 0;
            }
        for (size_t x = i; opposite && x < j; x++)
            s->two_sided[list[x].face] = 1;
        i = j;
    }
    free(list);
    return true;
}

/* ---- the interface ---- */

plush_status plush_quality_skin_create(const float (*rest)[3], const float (*rest_normals)[3], size_t vertex_count,
                                       const uint32_t (*triangles)[3], size_t triangle_count, const uint32_t *points,
                                       size_t point_count, double depth, plush_quality_skin **out, plush_diag *diag)
{
    *out = NULL;
    for (size_t t = 0; t < triangle_count; t++)
        for (int c = 0; c < 3; c++)
            if (triangles[t][c] >= vertex_count)
                return plush_diag_fail(diag, PLUSH_E_RANGE, -1, NULL, (int64_t)t,
                                       "skin triangle %zu: vertex %u out of range (%zu vertices)", t, triangles[t][c],
                                       vertex_count);
    for (size_t i = 0; i < point_count; i++)
        if (points[i] >= vertex_count)
            return plush_diag_fail(diag, PLUSH_E_RANGE, -1, NULL, (int64_t)i, "point %zu: vertex %u out of range (%zu vertices)",
                                   i, points[i], vertex_count);
    plush_quality_skin *s = calloc(1, sizeof *s);
    if (!s)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    s->vertex_count = vertex_count;
    s->triangle_count = triangle_count;
    s->point_count = point_count;
    s->depth2 = depth > 0 ? depth * depth : INFINITY;
    size_t max_nodes = triangle_count ? 2 * triangle_count : 1;
    s->triangles = malloc((triangle_count ? triangle_count : 1) * sizeof *s->triangles);
    s->nodes = calloc(max_nodes, sizeof *s->nodes);
    s->sphere = malloc((triangle_count ? triangle_count : 1) * sizeof *s->sphere);
    s->points = malloc((point_count ? point_count : 1) * sizeof *s->points);
    s->measured = calloc(point_count ? point_count : 1, 1);
    bool ok = s->triangles && s->nodes && s->sphere && s->points && s->measured;
    for (int k = 0; k < PLUSH_QUALITY_SKIN_SLOTS; k++) {
        s->last[k] = malloc((point_count ? point_count : 1) * sizeof *s->last[k]);
        s->far[k] = calloc(point_count ? point_count : 1, 1);
        ok = ok && s->last[k] && s->far[k];
        for (size_t i = 0; s->last[k] && i < point_count; i++)
            s->last[k][i] = UINT32_MAX;
    }
    build b = {.skin = s, .rest = rest};
    b.centroid = malloc((triangle_count ? triangle_count : 1) * sizeof *b.centroid);
    b.order = malloc((triangle_count ? triangle_count : 1) * sizeof *b.order);
    if (!ok || !b.centroid || !b.order) {
        free(b.centroid);
        free(b.order);
        plush_quality_skin_destroy(s);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    if (point_count)
        memcpy(s->points, points, point_count * sizeof *points);
    double edges = 0;
    for (size_t t = 0; t < triangle_count; t++) {
        b.order[t] = (uint32_t)t;
        for (int k = 0; k < 3; k++)
            b.centroid[t][k] = (rest[triangles[t][0]][k] + rest[triangles[t][1]][k] + rest[triangles[t][2]][k]) / 3.0f;
        for (int c = 0; c < 3; c++) {
            const float *a = rest[triangles[t][c]], *e = rest[triangles[t][(c + 1) % 3]];
            edges += sqrt(((double)a[0] - e[0]) * ((double)a[0] - e[0]) + ((double)a[1] - e[1]) * ((double)a[1] - e[1]) +
                          ((double)a[2] - e[2]) * ((double)a[2] - e[2]));
        }
    }
    if (triangle_count) {
        s->node_count = 1;
        build_node(&b, 0, 0, triangle_count);
        /* the wide tree has fewer nodes than the binary one has */
        s->wides = malloc(s->node_count * sizeof *s->wides);
        s->wide_from = malloc(s->node_count * sizeof *s->wide_from);
        if (s->wides && s->wide_from)
            make_wide(s);
        for (size_t t = 0; t < triangle_count; t++)
            memcpy(s->triangles[t], triangles[b.order[t]], sizeof s->triangles[t]);
    }
    free(b.centroid);
    free(b.order);
    if (triangle_count && (!s->wides || !s->wide_from)) {
        plush_quality_skin_destroy(s);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    if (side_setup(s, rest, vertex_count) != PLUSH_OK) {
        plush_quality_skin_destroy(s);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    /* At rest: a point behind its nearest triangle, or within a twentieth of the skin's mean edge of it
     * (sewn to it, where the sign says nothing), is left out. */
    double touch = triangle_count ? 0.05 * edges / (3.0 * (double)triangle_count) : 0;
    if (triangle_count)
        plush_quality_skin_pose(s, rest, rest_normals);
    if (!find_two_sided(s)) {
        plush_quality_skin_destroy(s);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    for (size_t i = 0; i < point_count; i++) {
        bool keep = false;
        if (triangle_count) {
            hit h;
            nearest(s, rest[points[i]], UINT32_MAX, s->depth2, &h);
            keep = h.triangle == UINT32_MAX || signed_distance(s, rest[points[i]], &h, NULL) > touch;
        }
        s->measured[i] = keep;
    }
    s->positions = NULL;
    s->normals = NULL;
    *out = s;
    return PLUSH_OK;
}

void plush_quality_skin_pose(plush_quality_skin *s, const float (*positions)[3], const float (*normals)[3])
{
    s->positions = positions;
    s->normals = normals;
    s->frame++;
    if (s->triangle_count) {
        refit(s, positions);
        refit_wide(s);
    }
}

size_t plush_quality_skin_behind(plush_quality_skin *s, int slot, const float (*at)[3], size_t step, size_t *measured,
                                 double *deepest)
{
    return plush_quality_skin_behind_range(s, slot, at, step, 0, SIZE_MAX, measured, deepest);
}

size_t plush_quality_skin_behind_range(plush_quality_skin *s, int slot, const float (*at)[3], size_t step, size_t first,
                                       size_t end, size_t *measured, double *deepest)
{
    double deep = 0;
    size_t behind = 0, looked = 0;
    if (slot < 0 || slot >= PLUSH_QUALITY_SKIN_SLOTS)
        slot = 0;
    step = step ? step : 1;
    end = end < s->point_count ? end : s->point_count;
    for (size_t i = (first + step - 1) / step * step; s->positions && i < end; i += step) {
        if (!s->measured[i])
            continue;
        looked++;
        const float *p = at[s->points[i]];
        hit h;
        nearest(s, p, s->last[slot][i], s->depth2, &h);
        s->last[slot][i] = h.triangle;
        if (h.triangle == UINT32_MAX)
            continue;
        double d = signed_distance(s, p, &h, NULL);
        if (d < 0) {
            behind++;
            deep = -d > deep ? -d : deep;
        }
    }
    if (measured)
        *measured = looked;
    if (deepest)
        *deepest = deep;
    return behind;
}

bool plush_quality_skin_turn(const plush_quality_skin *s, size_t i)
{
    return s && (i + s->frame) % PLUSH_QUALITY_SKIN_RECHECK == 0;
}

double plush_quality_skin_depth(plush_quality_skin *s, int slot, size_t i, const float p[3], double margin,
                                double reach, bool search, float dir[3])
{
    dir[0] = dir[1] = dir[2] = 0;
    if (!s || !s->positions || i >= s->point_count || !s->measured[i])
        return -INFINITY;
    if (slot < 0 || slot >= PLUSH_QUALITY_SKIN_SLOTS)
        slot = 0;
    double r2 = reach * reach < s->depth2 ? reach * reach : s->depth2, clear = -sqrt(r2);
    hit h;
    uint32_t hint = s->last[slot][i];
    if (!search && !plush_quality_skin_turn(s, i)) {
        /* beyond reach the last time: clear until its turn; in front of the triangle nearest it the last time
         * by the margin: clear by that much without a search (another triangle coming nearer is seen at the
         * point's next turn) */
        if (hint == UINT32_MAX && s->far[slot][i])
            return clear;
        h.triangle = UINT32_MAX;
        h.d2 = INFINITY;
        h.d = INFINITY;
        if (hint < s->triangle_count)
            try_triangle(s, hint, p, &h);
        if (h.triangle != UINT32_MAX) { /* not when p or the triangle is not finite */
            double ahead = signed_distance(s, p, &h, NULL);
            if (ahead >= margin)
                return ahead * ahead < r2 ? -ahead : clear;
        }
    }
    nearest(s, p, hint, r2, &h);
    s->last[slot][i] = h.triangle;
    s->far[slot][i] = h.triangle == UINT32_MAX;
    if (h.triangle == UINT32_MAX)
        return clear;
    double n[3];
    double d = signed_distance(s, p, &h, n), len = sqrt(plush__dot3d(n, n));
    if (!(d < 0) || !(len > 0))
        return -d;
    for (int k = 0; k < 3; k++)
        dir[k] = (float)(n[k] / len);
    return margin - d;
}

/* Whether the ray from o along unit d meets a triangle of the posed skin within length reach (either side of it):
 * the binary tree's boxes by slabs, each triangle by Moller and Trumbore's test. */
static bool ray_meets(const plush_quality_skin *s, const float o[3], const double d[3], double reach)
{
    double inv[3];
    for (int k = 0; k < 3; k++)
        inv[k] = 1.0 / d[k]; /* infinite along an axis the ray does not move on: the slab test still holds */
    uint32_t stack[SEARCH_STACK];
    size_t top = 0;
    stack[top++] = 0;
    while (top) {
        const node *nd = &s->nodes[stack[--top]];
        double near = 0, far = reach;
        for (int k = 0; k < 3 && near <= far; k++) {
            double a = (nd->lo[k] - (double)o[k]) * inv[k], b = (nd->hi[k] - (double)o[k]) * inv[k];
            if (a > b) {
                double t = a;
                a = b, b = t;
            }
            if (!(a == a)) /* 0 * infinity: o on the slab's plane, moving along it */
                a = -INFINITY, b = INFINITY;
            near = a > near ? a : near;
            far = b < far ? b : far;
        }
        if (!(near <= far))
            continue;
        if (!nd->count) {
            if (top + 2 > SEARCH_STACK)
                return false; /* not reached: the tree is at most 33 deep */
            stack[top++] = nd->first;
            stack[top++] = nd->first + 1;
            continue;
        }
        for (uint32_t t = nd->first; t < nd->first + nd->count; t++) {
            const float *a = s->positions[s->triangles[t][0]], *b = s->positions[s->triangles[t][1]],
                        *c = s->positions[s->triangles[t][2]];
            double e1[3], e2[3], q[3], r[3], w[3];
            for (int k = 0; k < 3; k++)
                e1[k] = (double)b[k] - a[k], e2[k] = (double)c[k] - a[k], w[k] = (double)o[k] - a[k];
            plush__cross3d(d, e2, q);
            double det = plush__dot3d(e1, q);
            if (!(fabs(det) > 1e-18))
                continue;
            double u = plush__dot3d(w, q) / det;
            if (!(u >= 0 && u <= 1))
                continue;
            plush__cross3d(w, e1, r);
            double v = plush__dot3d(d, r) / det, at = plush__dot3d(e2, r) / det;
            if (v >= 0 && u + v <= 1 && at > 0 && at <= reach)
                return true;
        }
    }
    return false;
}

/* Of every step-th point -- all of them when mark is given, which gets whether each is covered; else the measured
 * ones -- how many are covered: the ray from it along its normal (at, normals: indexed by vertex) meets the posed
 * skin within reach. looked gets how many were looked at. */
static size_t count_covered(const plush_quality_skin *s, const float (*at)[3], const float (*normals)[3], size_t step,
                            double reach, uint8_t *mark, size_t *looked)
{
    size_t covered = 0, n = 0;
    step = step ? step : 1;
    for (size_t i = 0; i < s->point_count; i += step) {
        if (!mark && !s->measured[i])
            continue;
        n++;
        const float *p = at[s->points[i]], *nf = normals[s->points[i]];
        double d[3] = {nf[0], nf[1], nf[2]}, len = sqrt(plush__dot3d(d, d));
        bool meets = false;
        if (len > 0 && isfinite(len)) {
            for (int k = 0; k < 3; k++)
                d[k] /= len;
            meets = ray_meets(s, p, d, reach);
        }
        if (mark)
            mark[i] = meets;
        covered += meets;
    }
    *looked = n;
    return covered;
}

size_t plush_quality_skin_keep_covered(plush_quality_skin *s, const float (*rest)[3], const float (*rest_normals)[3],
                                       double reach)
{
    if (!s)
        return 0;
    if (!s->triangle_count || !(reach > 0)) {
        memset(s->measured, 0, s->point_count ? s->point_count : 1);
        return 0;
    }
    const float(*positions)[3] = s->positions, (*normals)[3] = s->normals;
    s->positions = rest; /* the rest pose: the tree's boxes fitted to it there */
    s->normals = NULL;
    refit(s, rest);
    refit_wide(s);
    size_t looked;
    size_t kept = count_covered(s, rest, rest_normals, 1, reach, s->measured, &looked);
    s->positions = positions, s->normals = normals;
    return kept;
}

size_t plush_quality_skin_uncovered(const plush_quality_skin *s, const float (*at)[3], const float (*normals)[3],
                                    size_t step, double reach, size_t *measured)
{
    size_t looked = 0, covered = s && s->positions && s->triangle_count
                                     ? count_covered(s, at, normals, step, reach, NULL, &looked)
                                     : 0;
    if (measured)
        *measured = looked;
    return looked - covered;
}

size_t plush_quality_skin_measured(const plush_quality_skin *s, size_t step)
{
    size_t n = 0;
    step = step ? step : 1;
    for (size_t i = 0; s && i < s->point_count; i += step)
        n += s->measured[i];
    return n;
}

size_t plush_quality_skin_left_out(const plush_quality_skin *s, size_t step)
{
    size_t n = 0;
    step = step ? step : 1;
    for (size_t i = 0; s && i < s->point_count; i += step)
        n += !s->measured[i];
    return n;
}

void plush_quality_skin_destroy(plush_quality_skin *s)
{
    if (!s)
        return;
    free(s->triangles);
    free(s->node_first);
    free(s->node_corner);
    free(s->node_border);
    free(s->two_sided);
    free(s->corner_angle);
    free(s->corner_node);
    free(s->across);
    free(s->nodes);
    free(s->wides);
    free(s->wide_from);
    free(s->sphere);
    free(s->points);
    free(s->measured);
    for (int k = 0; k < PLUSH_QUALITY_SKIN_SLOTS; k++) {
        free(s->last[k]);
        free(s->far[k]);
    }
    free(s);
}
