/* Cages: simplifying with meshoptimizer (core/loader.h) and offsetting along normals. The normals, the topology
 * check and the distance are in cage_topology.c, the wrap in cage_wrap.c. */
#define _GNU_SOURCE
#include "plush/cage.h"
#include "core/common.h"
#include "plush/proxy.h"
#include "plush/sys/core.h"
#include "plush/sys/proxy.h"
#include "core/geom.h"
#include "core/loader.h"
#include "proxy/cage_internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- meshoptimizer, loaded on first use by the core loader ------------------------------------ */

bool plush_proxy_simplify_available(plush_diag *diag)
{
    return plush__meshopt_load(diag) != NULL;
}

/* ---- simplification ---------------------------------------------------------------------------- */

/* Drops faces naming a vertex twice and repeats of the same three vertices (the first one stays), in
 * place; returns the index count left. */
static size_t clean_faces(unsigned *idx, size_t n, plush_diag *diag, bool *ok)
{
    size_t faces = n / 3;
    uint8_t *drop = calloc(faces ? faces : 1, 1);
    *ok = drop && plush__repeated_faces((const uint32_t *)idx, faces, drop);
    if (!*ok) {
        free(drop);
        plush__no_memory(diag);
        return 0;
    }
    size_t kept = 0;
    for (size_t f = 0; f < faces; f++)
        if (!drop[f]) {
            memmove(idx + 3 * kept, idx + 3 * f, 3 * sizeof *idx);
            kept++;
        }
    free(drop);
    return 3 * kept;
}

static double dist2(const float *a, const float *b)
{
    double d0 = (double)a[0] - b[0], d1 = (double)a[1] - b[1], d2 = (double)a[2] - b[2];
    return d0 * d0 + d1 * d1 + d2 * d2;
}

/* A triangle this thin (twice its area below SLIVER times its longest edge squared: its height under a
 * ten-thousandth of its base) has no usable frame: its skin matrix would stay the identity while its
 * neighbours move, tearing the surface bound to it. Simplifying with the border locked makes them where a
 * border runs straight through several vertices (a T-junction between two halves of a skirt). */
#define SLIVER 1e-4

/* What one collapse rule does with a face (its three distinct vertices, as collapsed so far): moves some
 * onto others (to[from] = onto, from and onto still their own), and says whether it moved any. */
typedef bool (*collapse_rule)(const float (*pos)[3], const unsigned v[3], double limit2, unsigned *to);

/* Applies rule to every face over rounds until nothing moves (a vertex collapsed onto one that collapses in
 * turn follows it), then points idx at the vertices that stay; faces that then name a vertex twice are
 * dropped by clean_faces. */
static void collapse(const float (*pos)[3], size_t vertex_count, unsigned *idx, size_t n, collapse_rule rule,
                     double limit2, bool *ok)
{
    unsigned *to = malloc((vertex_count ? vertex_count : 1) * sizeof *to);
    *ok = to != NULL;
    if (!to)
        return;
    for (size_t v = 0; v < vertex_count; v++)
        to[v] = (unsigned)v;
    for (int round = 0; round < 32; round++) {
        bool changed = false;
        for (size_t f = 0; f + 2 < n; f += 3) {
            unsigned v[3];
            for (int k = 0; k < 3; k++) {
                unsigned x = idx[f + k];
                while (to[x] != x)
                    x = to[x];
                v[k] = idx[f + k] = x;
            }
            if (v[0] == v[1] || v[1] == v[2] || v[0] == v[2])
                continue;
            changed |= rule(pos, v, limit2, to);
        }
        if (!changed)
            break;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned x = idx[i];
        while (to[x] != x)
            x = to[x];
        idx[i] = x;
    }
    free(to);
}

/* A sliver's shortest edge goes: the vertex opposite the longest edge, else the later one, moves onto the
 * other. */
static bool sliver_rule(const float (*pos)[3], const unsigned v[3], double limit2, unsigned *to)
{
    (void)limit2;
    double e[3], longest = 0;
    int lo = 0, hi = 0;
    for (int k = 0; k < 3; k++) {
        e[k] = dist2(pos[v[k]], pos[v[(k + 1) % 3]]); /* edge k: v[k] - v[k+1] */
        if (e[k] < e[lo])
            lo = k;
        if (e[k] > e[hi])
            hi = k;
        longest = e[k] > longest ? e[k] : longest;
    }
    const float *a = pos[v[0]], *b = pos[v[1]], *c = pos[v[2]];
    double u[3], w[3];
    for (int k = 0; k < 3; k++)
        u[k] = (double)b[k] - a[k], w[k] = (double)c[k] - a[k];
    double cx = u[1] * w[2] - u[2] * w[1], cy = u[2] * w[0] - u[0] * w[2], cz = u[0] * w[1] - u[1] * w[0];
    if (cx * cx + cy * cy + cz * cz > SLIVER * SLIVER * longest * longest)
        return false;
    unsigned p = v[lo], q = v[(lo + 1) % 3], apex = v[(hi + 2) % 3];
    unsigned from = p == apex ? p : q == apex ? q : (p > q ? p : q);
    to[from] = from == p ? q : p;
    return true;
}

/* An edge shorter than this share of the cage's mean edge is collapsed: a cage edge a few thousandths
 * long (where the simplifier left two vertices of a strand's tip side by side) reads every small
 * movement of its ends as a large strain, and gives the soft body a link too stiff to step. */
#define SHORT_EDGE 0.02
/* The most passes of it a simplified cage is given, each against the mean edge the one before left. */
#define SHORT_EDGE_PASSES 4

/* Each edge of the face whose squared length is under limit2 goes (the later vertex onto the earlier), while
 * both its ends are still their own. */
static bool short_edge_rule(const float (*pos)[3], const unsigned v[3], double limit2, unsigned *to)
{
    bool moved = false;
    for (int k = 0; k < 3; k++) {
        unsigned a = v[k], b = v[(k + 1) % 3];
        if (a == b || to[a] != a || to[b] != b || dist2(pos[a], pos[b]) >= limit2)
            continue;
        to[a > b ? a : b] = a > b ? b : a;
        moved = true;
    }
    return moved;
}

static void collapse_slivers(const float (*pos)[3], size_t vertex_count, unsigned *idx, size_t n, bool *ok)
{
    collapse(pos, vertex_count, idx, n, sliver_rule, 0, ok);
}

/* Every edge shorter than SHORT_EDGE times the mean edge, collapsed. */
static void collapse_short_edges(const float (*pos)[3], size_t vertex_count, unsigned *idx, size_t n, bool *ok)
{
    double mean = plush__mean_edge(&pos[0][0], sizeof pos[0], (const uint32_t *)idx, n);
    collapse(pos, vertex_count, idx, n, short_edge_rule, SHORT_EDGE * mean * SHORT_EDGE * mean, ok);
}

typedef struct edge_face {
    unsigned a, b;
    uint32_t face;
} edge_face;

static int edge_face_cmp(const void *pa, const void *pb)
{
    const edge_face *x = pa, *y = pb;
    if (x->a != y->a)
        return x->a < y->a ? -1 : 1;
    if (x->b != y->b)
        return x->b < y->b ? -1 : 1;
    return x->face < y->face ? -1 : x->face > y->face;
}

/* The faces' edges sorted (e: 3 per face) and the pieces they join (parent: a union-find over the faces,
 * faces sharing an edge in one set). */
static void edge_pieces(const unsigned *idx, size_t faces, edge_face *e, uint32_t *parent)
{
    for (size_t f = 0; f < faces; f++)
        for (int k = 0; k < 3; k++) {
            unsigned a = idx[3 * f + k], b = idx[3 * f + (k + 1) % 3];
            e[3 * f + k] = (edge_face){a < b ? a : b, a < b ? b : a, (uint32_t)f};
        }
    qsort(e, 3 * faces, sizeof *e, edge_face_cmp);
    plush__uf_init(parent, faces);
    for (size_t i = 1; i < 3 * faces; i++)
        if (e[i].a == e[i - 1].a && e[i].b == e[i - 1].b)
            plush__uf_union(parent, e[i].face, e[i - 1].face);
}

/* A piece of the cage (faces joined by edges) whose box's diagonal is under this share of the largest
 * piece's is a speck the simplifier left where a strand's tip or a thin bridge was: a triangle or two, a
 * hundredth of a unit across, that nothing can pin sensibly. The detailed vertices around it bind to the
 * cage that is left. (The same share leaves a surface's small separate details out of the cage.) */
#define SPECK_SHARE 0.05

/* Drops the specks from the faces idx (n indices, in place); returns the count left, or n when out of
 * memory (nothing dropped, *ok false). */
static size_t drop_specks(const float (*pos)[3], unsigned *idx, size_t n, bool *ok)
{
    size_t faces = n / 3;
    edge_face *e = malloc((faces ? 3 * faces : 1) * sizeof *e);
    uint32_t *parent = malloc((faces ? faces : 1) * sizeof *parent);
    float(*lo)[3] = malloc((faces ? faces : 1) * sizeof *lo), (*hi)[3] = malloc((faces ? faces : 1) * sizeof *hi);
    *ok = e && parent && lo && hi;
    size_t kept = n;
    if (!*ok)
        goto done;
    edge_pieces(idx, faces, e, parent);
    for (size_t f = 0; f < faces; f++)
        for (int k = 0; k < 3; k++)
            lo[f][k] = INFINITY, hi[f][k] = -INFINITY;
    for (size_t f = 0; f < faces; f++) {
        uint32_t r = plush__uf_find(parent, (uint32_t)f);
        for (int c = 0; c < 3; c++)
            for (int k = 0; k < 3; k++) {
                lo[r][k] = fminf(lo[r][k], pos[idx[3 * f + c]][k]);
                hi[r][k] = fmaxf(hi[r][k], pos[idx[3 * f + c]][k]);
            }
    }
    double largest = 0;
    for (size_t f = 0; f < faces; f++)
        if (plush__uf_find(parent, (uint32_t)f) == f) {
            double d = 0;
            for (int k = 0; k < 3; k++)
                d += ((double)hi[f][k] - lo[f][k]) * ((double)hi[f][k] - lo[f][k]);
            lo[f][0] = (float)sqrt(d); /* the root keeps its piece's diagonal */
            largest = fmax(largest, lo[f][0]);
        }
    kept = 0;
    for (size_t f = 0; f < faces; f++)
        if (lo[plush__uf_find(parent, (uint32_t)f)][0] >= SPECK_SHARE * largest)
            memmove(idx + kept, idx + 3 * f, 3 * sizeof *idx), kept += 3;
done:
    free(e), free(parent), free(lo), free(hi);
    return kept;
}

/* Pieces of the cage that touch at one vertex only (a bow tie: the simplifier narrowed a strand's neck to a
 * point) become separate soft bodies, and a strand then swings apart from the hair it grows from while the
 * detailed surface across the neck is bound to both: it tears. Each such piece is joined to the largest
 * piece at that vertex by one triangle over a border edge of each, the pair of edges nearest in direction
 * (the triangle runs against the larger piece's face along their shared edge, as a manifold's faces do). */
typedef struct corner_piece {
    unsigned v;
    uint32_t piece;
} corner_piece;

static int corner_piece_cmp(const void *pa, const void *pb)
{
    const corner_piece *a = pa, *b = pb;
    if (a->v != b->v)
        return a->v < b->v ? -1 : 1;
    return a->piece < b->piece ? -1 : a->piece > b->piece;
}

/* The edge (v, other) of `piece` at v (with `border`, a border edge) nearest in direction to dir (NULL:
 * any), as the other end and whether the piece's face runs v -> other; false when the piece has none. e
 * holds the sorted edges with their faces, piece_of each face's piece. */
/* The sorted edges with their faces, each face's piece, and per vertex the edges at it (at[at_start[v]]
 * .. at[at_start[v + 1] - 1], indices into e). */
typedef struct edge_index {
    const edge_face *e;
    size_t ne;
    const uint32_t *piece_of;
    const size_t *at_start;
    const uint32_t *at;
} edge_index;

static bool edge_at(const edge_index *x, const unsigned *idx, unsigned v, uint32_t piece, const float (*pos)[3],
                    const double *dir, bool border, unsigned *other, bool *forward, double *best_cos);

/* A border edge when the piece has one at v (the join then stays manifold there), else any edge. */
static bool border_at(const edge_index *x, const unsigned *idx, unsigned v, uint32_t piece, const float (*pos)[3],
                      const double *dir, unsigned *other, bool *forward, double *best_cos)
{
    return edge_at(x, idx, v, piece, pos, dir, true, other, forward, best_cos) ||
           edge_at(x, idx, v, piece, pos, dir, false, other, forward, best_cos);
}

static bool edge_at(const edge_index *x, const unsigned *idx, unsigned v, uint32_t piece, const float (*pos)[3],
                    const double *dir, bool border, unsigned *other, bool *forward, double *best_cos)
{
    const edge_face *e = x->e;
    size_t ne = x->ne;
    const uint32_t *piece_of = x->piece_of;
    bool found = false;
    for (size_t j = x->at_start[v]; j < x->at_start[v + 1]; j++) {
        size_t i = x->at[j];
        bool single = (i == 0 || e[i - 1].a != e[i].a || e[i - 1].b != e[i].b) &&
                      (i + 1 == ne || e[i + 1].a != e[i].a || e[i + 1].b != e[i].b);
        if ((border && !single) || piece_of[e[i].face] != piece)
            continue;
        unsigned o = e[i].a == v ? e[i].b : e[i].a;
        double d[3], len = 0, c = 1;
        for (int k = 0; k < 3; k++)
            d[k] = (double)pos[o][k] - pos[v][k], len += d[k] * d[k];
        len = sqrt(len);
        if (dir && len > 0)
            c = (d[0] * dir[0] + d[1] * dir[1] + d[2] * dir[2]) / len;
        if (found && c <= *best_cos)
            continue;
        const unsigned *f = idx + 3 * e[i].face;
        bool fw = false;
        for (int k = 0; k < 3; k++)
            fw |= f[k] == v && f[(k + 1) % 3] == o;
        *other = o, *forward = fw, *best_cos = c, found = true;
    }
    return found;
}

/* Adds the joining triangles to idx (n indices; room for `room`); returns the new count. */
static size_t join_bow_ties(const float (*pos)[3], unsigned *idx, size_t n, size_t room, bool *ok)
{
    size_t faces = n / 3;
    edge_face *e = malloc((faces ? 3 * faces : 1) * sizeof *e);
    uint32_t *parent = malloc((faces ? faces : 1) * sizeof *parent), *size = calloc(faces ? faces : 1, sizeof *size);
    uint32_t *piece_of = malloc((faces ? faces : 1) * sizeof *piece_of);
    corner_piece *cp = malloc((faces ? 3 * faces : 1) * sizeof *cp);
    size_t *at_start = NULL;
    uint32_t *at = malloc((faces ? 6 * faces : 1) * sizeof *at);
    *ok = e && parent && size && piece_of && cp && at;
    if (!*ok)
        goto done;
    edge_pieces(idx, faces, e, parent);
    for (size_t f = 0; f < faces; f++) {
        piece_of[f] = plush__uf_find(parent, (uint32_t)f);
        size[piece_of[f]]++;
    }
    for (size_t f = 0; f < faces; f++)
        for (int k = 0; k < 3; k++)
            cp[3 * f + k] = (corner_piece){idx[3 * f + k], piece_of[f]};
    qsort(cp, 3 * faces, sizeof *cp, corner_piece_cmp);
    /* per vertex, the edges at it */
    size_t nv = faces ? (size_t)cp[3 * faces - 1].v + 1 : 0;
    at_start = calloc(nv + 1, sizeof *at_start);
    if (!at_start) {
        *ok = false;
        goto done;
    }
    for (size_t i = 0; i < 3 * faces; i++)
        at_start[e[i].a + 1]++, at_start[e[i].b + 1]++;
    for (size_t v = 0; v < nv; v++)
        at_start[v + 1] += at_start[v];
    for (size_t i = 0; i < 3 * faces; i++)
        at[at_start[e[i].a]++] = (uint32_t)i, at[at_start[e[i].b]++] = (uint32_t)i;
    for (size_t v = nv; v > 0; v--) /* the fill moved each start to the next one's: back one vertex */
        at_start[v] = at_start[v - 1];
    at_start[0] = 0;
    const edge_index index = {.e = e, .ne = 3 * faces, .piece_of = piece_of, .at_start = at_start, .at = at};
    /* pieces joined so far (by a triangle added here): a second union-find over the pieces' roots */
    uint32_t *joined = parent; /* reused: every face's root is its piece, roots stay roots */
    for (size_t i = 0; i < 3 * faces;) {
        size_t j = i;
        while (j < 3 * faces && cp[j].v == cp[i].v)
            j++;
        unsigned v = cp[i].v;
        uint32_t main = cp[i].piece;
        for (size_t k = i; k < j; k++)
            if (size[cp[k].piece] > size[main] || (size[cp[k].piece] == size[main] && cp[k].piece < main))
                main = cp[k].piece;
        for (size_t k = i; k < j; k++) {
            uint32_t other = cp[k].piece;
            if ((k > i && cp[k - 1].piece == other) || plush__uf_find(joined, other) == plush__uf_find(joined, main))
                continue;
            unsigned b = 0, a = 0;
            bool fb = false, fa = false;
            double cb = -2, ca = -2, dir[3], len = 0;
            if (!border_at(&index, idx, v, other, pos, NULL, &b, &fb, &cb))
                continue;
            for (int c = 0; c < 3; c++)
                dir[c] = (double)pos[b][c] - pos[v][c], len += dir[c] * dir[c];
            len = sqrt(len);
            for (int c = 0; c < 3 && len > 0; c++)
                dir[c] /= len;
            if (!border_at(&index, idx, v, main, pos, dir, &a, &fa, &ca) || a == b)
                continue;
            /* a well-shaped triangle only: its height over its longest edge (as the slivers are judged) */
            double u[3], w[3], longest = 0;
            for (int c = 0; c < 3; c++)
                u[c] = (double)pos[a][c] - pos[v][c], w[c] = (double)pos[b][c] - pos[v][c];
            double cx = u[1] * w[2] - u[2] * w[1], cy = u[2] * w[0] - u[0] * w[2], cz = u[0] * w[1] - u[1] * w[0];
            longest = fmax(dist2(pos[v], pos[a]), fmax(dist2(pos[v], pos[b]), dist2(pos[a], pos[b])));
            if (cx * cx + cy * cy + cz * cz <= 1e-4 * longest * longest || n + 3 > room)
                continue;
            /* against the main piece's face along v-a: that face runs v -> a, so this one runs a -> v */
            unsigned t[3] = {v, a, b};
            if (fa)
                t[1] = b, t[2] = a;
            memcpy(idx + n, t, sizeof t);
            n += 3;
            plush__uf_union(joined, other, main);
        }
        i = j;
    }
done:
    free(e), free(parent), free(size), free(piece_of), free(cp), free(at_start), free(at);
    return n;
}

/* ---- flips: no cap or needle left where a flip mends it ------------------------------------------ */

/* A cap -- a face with an angle over this many degrees, its vertex nearly on the edge opposite -- flips that
 * edge to its neighbour's where that raises the smaller angle of the pair: the simplifier leaves caps along straight runs of vertices (a vertex nearly on
 * the edge opposite it, an angle near 180 degrees at it and two near 0), and a cap's normal turns over at the
 * smallest movement of that vertex -- read as the cage folding back onto itself (crease over 120 degrees on
 * a skirt's cage whose surface stayed within 3), and no frame for the surface bound to it. */
#define FLIP_CAP 150.0

/* The two faces on an interior edge, once flipped, must bend from the pair's mean normal by no more than
 * this cosine (about 30 degrees): a flip across a ridge would change the cage's shape. */
#define FLIP_FLAT 0.866

/* The smallest angle of the face, in degrees; *largest, when not NULL, gets its largest. */
static double smallest_angle(const float (*pos)[3], unsigned a, unsigned b, unsigned c, double *largest)
{
    const unsigned v[3] = {a, b, c};
    double least = 180, most = 0;
    for (int k = 0; k < 3; k++) {
        const float *p = pos[v[k]], *q = pos[v[(k + 1) % 3]], *r = pos[v[(k + 2) % 3]];
        double u[3], w[3], uu = 0, ww = 0, uw = 0;
        for (int i = 0; i < 3; i++) {
            u[i] = (double)q[i] - p[i], w[i] = (double)r[i] - p[i];
            uu += u[i] * u[i], ww += w[i] * w[i], uw += u[i] * w[i];
        }
        double c2 = uu > 0 && ww > 0 ? uw / sqrt(uu * ww) : 1;
        double deg = acos(c2 > 1 ? 1 : c2 < -1 ? -1 : c2) * 180.0 / M_PI;
        least = deg < least ? deg : least;
        most = deg > most ? deg : most;
    }
    if (largest)
        *largest = most;
    return least;
}

/* The angle at p between the edges to q and r, in degrees. */
static double vertex_angle(const float (*pos)[3], unsigned p, unsigned q, unsigned r)
{
    double u[3], w[3], uu = 0, ww = 0, uw = 0;
    for (int i = 0; i < 3; i++) {
        u[i] = (double)pos[q][i] - pos[p][i], w[i] = (double)pos[r][i] - pos[p][i];
        uu += u[i] * u[i], ww += w[i] * w[i], uw += u[i] * w[i];
    }
    double c = uu > 0 && ww > 0 ? uw / sqrt(uu * ww) : 1;
    return acos(c > 1 ? 1 : c < -1 ? -1 : c) * 180.0 / M_PI;
}

static void face_normal(const float (*pos)[3], unsigned a, unsigned b, unsigned c, double n[3])
{
    double u[3], w[3];
    for (int i = 0; i < 3; i++)
        u[i] = (double)pos[b][i] - pos[a][i], w[i] = (double)pos[c][i] - pos[a][i];
    n[0] = u[1] * w[2] - u[2] * w[1], n[1] = u[2] * w[0] - u[0] * w[2], n[2] = u[0] * w[1] - u[1] * w[0];
}

/* Whether the faces (a, b, c) and (b, a, d), flipped to (a, d, c) and (b, c, d), are better: one of them is
 * a cap whose wide angle faces the edge a-b (over FLIP_CAP at c or d), the smaller angle grows, and each new
 * face lies within FLIP_FLAT of the pair's normal (both facing its way). */
static bool flip_mends(const float (*pos)[3], unsigned a, unsigned b, unsigned c, unsigned d)
{
    if (!(vertex_angle(pos, c, a, b) > FLIP_CAP || vertex_angle(pos, d, a, b) > FLIP_CAP))
        return false;
    double before = fmin(smallest_angle(pos, a, b, c, NULL), smallest_angle(pos, b, a, d, NULL));
    double after = fmin(smallest_angle(pos, a, d, c, NULL), smallest_angle(pos, b, c, d, NULL));
    if (!(after > before))
        return false;
    double n1[3], n2[3], m[3], f[3], g[3];
    face_normal(pos, a, b, c, n1), face_normal(pos, b, a, d, n2);
    for (int i = 0; i < 3; i++)
        m[i] = n1[i] + n2[i];
    face_normal(pos, a, d, c, f), face_normal(pos, b, c, d, g);
    double mm = m[0] * m[0] + m[1] * m[1] + m[2] * m[2], ff = f[0] * f[0] + f[1] * f[1] + f[2] * f[2],
           gg = g[0] * g[0] + g[1] * g[1] + g[2] * g[2];
    if (!(mm > 0 && ff > 0 && gg > 0))
        return false;
    double cf = (m[0] * f[0] + m[1] * f[1] + m[2] * f[2]) / sqrt(mm * ff),
           cg = (m[0] * g[0] + m[1] * g[1] + m[2] * g[2]) / sqrt(mm * gg);
    return cf >= FLIP_FLAT && cg >= FLIP_FLAT;
}

/* The third vertex of face f (idx) besides a and b, and whether the face runs a -> b. */
static unsigned third(const unsigned *idx, uint32_t f, unsigned a, unsigned b, bool *forward)
{
    const unsigned *t = idx + 3 * f;
    *forward = false;
    unsigned o = t[0];
    for (int k = 0; k < 3; k++) {
        if (t[k] != a && t[k] != b)
            o = t[k];
        if (t[k] == a && t[(k + 1) % 3] == b)
            *forward = true;
    }
    return o;
}

/* Flips interior edges (two faces, wound against each other) in rounds while one mends a cap (flip_mends)
 * and makes no edge that is already there; a vertex takes part in one flip a round (the edges are those at
 * the round's start). The face count
 * and the vertices stay. false when out of memory. */
static bool flip_caps(const float (*pos)[3], size_t vertex_count, unsigned *idx, size_t n)
{
    size_t faces = n / 3;
    edge_face *e = malloc((faces ? 3 * faces : 1) * sizeof *e);
    uint32_t *parent = malloc((faces ? faces : 1) * sizeof *parent);
    uint8_t *touched = malloc(vertex_count ? vertex_count : 1);
    bool ok = e && parent && touched;
    for (int round = 0; ok && round < 8; round++) {
        edge_pieces(idx, faces, e, parent);
        memset(touched, 0, vertex_count ? vertex_count : 1);
        bool flipped = false;
        for (size_t i = 0; i + 1 < 3 * faces; i++) {
            if (e[i].a != e[i + 1].a || e[i].b != e[i + 1].b ||
                (i + 2 < 3 * faces && e[i + 2].a == e[i].a && e[i + 2].b == e[i].b) ||
                (i > 0 && e[i - 1].a == e[i].a && e[i - 1].b == e[i].b))
                continue; /* not an edge of exactly two faces */
            uint32_t f1 = e[i].face, f2 = e[i + 1].face;
            bool fw1, fw2;
            unsigned a = e[i].a, b = e[i].b, c = third(idx, f1, a, b, &fw1), d = third(idx, f2, a, b, &fw2);
            if (fw1 == fw2 || c == d)
                continue; /* wound alike: not a manifold pair */
            if (touched[a] || touched[b] || touched[c] || touched[d])
                continue; /* the edges round a vertex flipped this round are not in e */
            if (!fw1) { /* name the ends so that f1 runs a -> b (f2 then runs b -> a) */
                unsigned x = a;
                a = b, b = x;
            }
            if (!flip_mends(pos, a, b, c, d))
                continue;
            /* the new edge c-d must not be there already (a fold would doubly cover it) */
            edge_face key = {c < d ? c : d, c < d ? d : c, 0};
            size_t lo = 0, hi = 3 * faces;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (e[mid].a < key.a || (e[mid].a == key.a && e[mid].b < key.b))
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo < 3 * faces && e[lo].a == key.a && e[lo].b == key.b)
                continue;
            const unsigned t1[3] = {a, d, c}, t2[3] = {b, c, d};
            memcpy(idx + 3 * f1, t1, sizeof t1);
            memcpy(idx + 3 * f2, t2, sizeof t2);
            touched[a] = touched[b] = touched[c] = touched[d] = 1;
            flipped = true;
        }
        if (!flipped)
            break;
    }
    free(e), free(parent), free(touched);
    return ok;
}

/* ---- bridges: one surface, one cage piece --------------------------------------------------------- */

/* A border edge of a cage piece: its ends as its face runs them (a -> b). */
typedef struct border_edge {
    unsigned a, b;
    uint32_t piece;
} border_edge;

/* The bridge between border edge p of one piece and q of another: the quad p.b -> p.a -> q.b -> q.a, wound
 * against both pieces' faces (a manifold's neighbours run their shared edge both ways), when `crossed`
 * pairs p.a with q.a instead (pieces wound apart). Its length: the two new edges between the pieces. */
static double bridge_length(const float (*pos)[3], const border_edge *p, const border_edge *q, bool crossed)
{
    unsigned u0 = p->a, w0 = crossed ? q->a : q->b, u1 = p->b, w1 = crossed ? q->b : q->a;
    return sqrt(dist2(pos[u0], pos[w0])) + sqrt(dist2(pos[u1], pos[w1]));
}

/* Whether the triangle has a usable frame (the sliver rule's measure). */
static bool well_shaped(const float (*pos)[3], unsigned a, unsigned b, unsigned c)
{
    double u[3], w[3];
    for (int k = 0; k < 3; k++)
        u[k] = (double)pos[b][k] - pos[a][k], w[k] = (double)pos[c][k] - pos[a][k];
    double cx = u[1] * w[2] - u[2] * w[1], cy = u[2] * w[0] - u[0] * w[2], cz = u[0] * w[1] - u[1] * w[0];
    double longest = fmax(dist2(pos[a], pos[b]), fmax(dist2(pos[b], pos[c]), dist2(pos[a], pos[c])));
    return cx * cx + cy * cy + cz * cz > SLIVER * SLIVER * longest * longest;
}

/* A border edge's or a cage piece's place in the bridging: its surface piece (the source's root vertex), then
 * its own number. */
typedef struct group_key {
    uint32_t surface, item;
} group_key;

static int group_key_cmp(const void *pa, const void *pb)
{
    const group_key *a = pa, *b = pb;
    if (a->surface != b->surface)
        return a->surface < b->surface ? -1 : 1;
    return a->item < b->item ? -1 : a->item > b->item;
}

/* Bridges the cage pieces of one surface piece (roots[0..k), their border edges border[bk[0..nb)]) into one,
 * as plush__cage_bridge_pieces says; false when idx has no room left. */
static bool bridge_group(const float (*pos)[3], const border_edge *border, const group_key *bk, size_t nb,
                         const group_key *roots, size_t k, uint32_t *joined, uint32_t *size, unsigned *idx, size_t *n,
                         size_t room)
{
    for (size_t sets = k; sets > 1; sets--) {
        /* the smallest set of pieces joined so far */
        uint32_t mine = UINT32_MAX;
        for (size_t i = 0; i < k; i++) {
            uint32_t r = plush__uf_find(joined, roots[i].item);
            if (mine == UINT32_MAX || size[r] < size[mine])
                mine = r;
        }
        double best = INFINITY;
        size_t bp = 0, bq = 0;
        bool bcross = false;
        for (size_t i = 0; i < nb; i++) {
            const border_edge *p = &border[bk[i].item];
            if (plush__uf_find(joined, p->piece) != mine)
                continue;
            for (size_t j = 0; j < nb; j++) {
                const border_edge *q = &border[bk[j].item];
                if (plush__uf_find(joined, q->piece) == mine)
                    continue;
                for (int crossed = 0; crossed < 2; crossed++) {
                    double len = bridge_length(pos, p, q, crossed);
                    if (len < best)
                        best = len, bp = bk[i].item, bq = bk[j].item, bcross = crossed;
                }
            }
        }
        if (!(best < INFINITY))
            return true; /* no border to bridge from (a closed piece): left as it is */
        if (*n + 6 > room)
            return false;
        const border_edge *p = &border[bp], *q = &border[bq];
        unsigned u0 = p->a, u1 = p->b, w0 = bcross ? q->a : q->b, w1 = bcross ? q->b : q->a;
        /* the quad u1 -> u0 -> w0 -> w1 (wound against the piece's face along u0 -> u1), split along its shorter
         * diagonal */
        unsigned t1[3], t2[3];
        if (dist2(pos[u1], pos[w0]) <= dist2(pos[u0], pos[w1])) {
            t1[0] = u1, t1[1] = u0, t1[2] = w0, t2[0] = u1, t2[1] = w0, t2[2] = w1;
        } else {
            t1[0] = u1, t1[1] = u0, t1[2] = w1, t2[0] = u0, t2[1] = w0, t2[2] = w1;
        }
        uint32_t other = plush__uf_find(joined, q->piece), total = size[mine] + size[other];
        /* a pair whose quad has no usable frame (its nearest edges meet end to end) joins the sets unbridged
         * rather than be tried again */
        if (u0 != w0 && u1 != w1 && well_shaped(pos, t1[0], t1[1], t1[2]) && well_shaped(pos, t2[0], t2[1], t2[2])) {
            memcpy(idx + *n, t1, sizeof t1);
            memcpy(idx + *n + 3, t2, sizeof t2);
            *n += 6;
        }
        plush__uf_union(joined, mine, other);
        size[plush__uf_find(joined, mine)] = total;
    }
    return true;
}

bool plush__cage_bridge_pieces(const plush_cage_mesh *src, unsigned *idx, size_t *n, size_t room)
{
    size_t faces = *n / 3, nv = src->vertex_count;
    const float(*pos)[3] = (const float(*)[3])src->positions;
    uint32_t *surface = malloc((nv ? nv : 1) * sizeof *surface), *parent = malloc((faces ? faces : 1) * sizeof *parent);
    edge_face *e = malloc((faces ? 3 * faces : 1) * sizeof *e);
    border_edge *border = malloc((faces ? 3 * faces : 1) * sizeof *border);
    group_key *bk = malloc((faces ? 3 * faces : 1) * sizeof *bk), *roots = malloc((faces ? faces : 1) * sizeof *roots);
    uint32_t *joined = malloc((faces ? faces : 1) * sizeof *joined), *size = calloc(faces ? faces : 1, sizeof *size);
    bool ok = surface && parent && e && border && bk && roots && joined && size;
    if (!ok || faces == 0)
        goto done;
    /* the source surface's pieces (faces joined by vertices: the weld has joined positions) */
    plush__uf_init(surface, nv);
    for (size_t t = 0; t < src->triangle_count; t++)
        for (int k = 0; k < 2; k++)
            plush__uf_union(surface, src->triangles[t][k], src->triangles[t][k + 1]);
    edge_pieces(idx, faces, e, parent);
    size_t nb = 0, nr = 0;
    for (size_t i = 0; i < 3 * faces; i++) {
        bool single = (i == 0 || e[i - 1].a != e[i].a || e[i - 1].b != e[i].b) &&
                      (i + 1 == 3 * faces || e[i + 1].a != e[i].a || e[i + 1].b != e[i].b);
        if (!single)
            continue;
        bool forward;
        third(idx, e[i].face, e[i].a, e[i].b, &forward);
        border[nb] = (border_edge){forward ? e[i].a : e[i].b, forward ? e[i].b : e[i].a,
                                   plush__uf_find(parent, e[i].face)};
        bk[nb] = (group_key){plush__uf_find(surface, e[i].a), (uint32_t)nb};
        nb++;
    }
    for (size_t f = 0; f < faces; f++) {
        uint32_t r = plush__uf_find(parent, (uint32_t)f);
        size[r]++;
        if (r == f)
            roots[nr++] = (group_key){plush__uf_find(surface, idx[3 * f]), r};
    }
    qsort(bk, nb, sizeof *bk, group_key_cmp);
    qsort(roots, nr, sizeof *roots, group_key_cmp);
    plush__uf_init(joined, faces);
    /* each surface piece cut into 2 .. PLUSH_CAGE_PIECE_FLOOR cage pieces (more is no strand cut apart but a
     * surface the simplifier could not follow -- a soup of triangles -- and is left as it is) */
    for (size_t r = 0, b = 0; ok && r < nr;) {
        size_t r_end = r, b_start;
        while (r_end < nr && roots[r_end].surface == roots[r].surface)
            r_end++;
        while (b < nb && bk[b].surface < roots[r].surface)
            b++;
        b_start = b;
        while (b < nb && bk[b].surface == roots[r].surface)
            b++;
        if (r_end - r > 1 && r_end - r <= PLUSH_CAGE_PIECE_FLOOR)
            ok = bridge_group(pos, border, bk + b_start, b - b_start, roots + r, r_end - r, joined, size, idx, n, room);
        r = r_end;
    }
    ok = true; /* out of room: the pieces bridged so far stay, the others as they were */
done:
    free(surface), free(parent), free(e), free(border), free(bk), free(roots), free(joined), free(size);
    return ok;
}

/* The ladder: each step starts from the best result so far and runs only while it is above the limit. */
static size_t run_ladder(const plush__meshopt *mo, const plush_cage_mesh *src, size_t n, size_t target, size_t limit,
                         bool sloppy, unsigned *idx, unsigned *tmp, plush_cage_result *res)
{
    const float *pos = &src->positions[0][0];
    float scale = mo->meshopt_simplifyScale(pos, src->vertex_count, sizeof *src->positions);
    float err = 0;
    res->method = PLUSH_CAGE_COPY;
    if (n / 3 <= limit) /* within the tolerance already: simplifying in batches could only undershoot */
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
        return plush__no_memory(diag);
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
        return plush__no_memory(diag);
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

plush_status plush__cage_check_source(const plush_cage_mesh *src, const plush_cage_options *o, plush_diag *diag)
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
        plush__no_memory(diag);
        return;
    }
    plush_cage_vertex_normals(m, n);
    for (size_t v = 0; v < m->vertex_count; v++)
        for (int k = 0; k < 3; k++)
            m->positions[v][k] += d * n[v][k];
    free(n);
}

/* The surface's faces (idx, n indices, cleaned) simplified toward target into idx (its count returned in
 * *out_n; idx and tmp have room for twice n): the ladder, then slivers and very short edges collapsed,
 * specks dropped and bow ties joined, asked again as below for a count within 20% of the target. false
 * when out of memory. */
static bool simplify_faces(const plush__meshopt *mo, const plush_cage_mesh *src, unsigned *idx, size_t n,
                           size_t target, float tolerance, bool sloppy, int passes, unsigned *tmp, size_t *out_n,
                           plush_cage_result *result, plush_diag *diag)
{
    double limit_d = floor((double)target * (1.0 + tolerance));
    size_t limit = limit_d > (double)SIZE_MAX / 2 ? SIZE_MAX / 2 : (size_t)limit_d;
    /* The simplifier collapses edges in batches, and collapsing the slivers it leaves along straight
     * borders can take a sixth of the faces (Luka's skirt: 282 -> 234 for 300): the ladder is asked again
     * for proportionally more, from the source (halving the gap once the cage overshoots the limit), for a
     * cage within 20% of the target. */
    /* room for what the joins add: at most a triangle per piece, fewer pieces than faces */
    unsigned *source = malloc((n ? n : 1) * sizeof *source), *best = malloc((n ? 2 * n : 1) * sizeof *best);
    if (!source || !best) {
        free(source), free(best);
        return false;
    }
    memcpy(source, idx, n * sizeof *source);
    size_t source_n = n, best_n = 0, ask = target, low = target, high = 0;
    plush_cage_result best_result = *result;
    bool ok = true;
    for (int tries = 0; tries < 6 && ok; tries++) {
        memcpy(idx, source, source_n * sizeof *idx);
        plush_cage_result r = *result;
        /* the ladder's own limit follows what it is asked for: the outer one is for the cage after the
         * slivers (held to it below), and a ladder held to it when asked for more would fall through to
         * the sloppy simplifier, which tears the surface into pieces */
        double ask_limit = floor((double)ask * (1.0 + tolerance));
        size_t m = run_ladder(mo, src, source_n, ask, ask == target ? limit : (size_t)ask_limit, sloppy, idx, tmp, &r);
        collapse_slivers((const float(*)[3])src->positions, src->vertex_count, idx, m, &ok);
        /* the mean edge grows as short ones go (and as the slivers' faces are cleaned out): up to passes
         * times, until none is left */
        for (size_t was = 0, pass = 0; ok && m != was && pass < (size_t)passes; pass++) {
            was = m;
            collapse_short_edges((const float(*)[3])src->positions, src->vertex_count, idx, m, &ok);
            if (ok)
                m = clean_faces(idx, m, diag, &ok);
        }
        if (ok)
            m = drop_specks((const float(*)[3])src->positions, idx, m, &ok);
        if (ok)
            m = join_bow_ties((const float(*)[3])src->positions, idx, m, 2 * source_n, &ok);
        if (!ok)
            break;
        bool better = best_n == 0 || (m / 3 <= limit && (best_n / 3 > limit || m > best_n));
        if (better) {
            memcpy(best, idx, m * sizeof *best);
            best_n = m, best_result = r;
        }
        if (m / 3 >= target - target / 5 && m / 3 <= limit)
            break;
        if (m / 3 > limit)
            high = ask;
        else
            low = ask;
        size_t next = high ? low + (high - low) / 2
                           : (size_t)((double)ask * (double)target / (double)(m / 3 ? m / 3 : 1));
        if (3 * next >= source_n) /* no more than the source has: the source itself (copied, slivers collapsed) */
            next = source_n / 3;
        if (next <= low || (high && next >= high) || next == ask)
            break;
        ask = next;
    }
    if (ok) {
        memcpy(idx, best, best_n * sizeof *idx);
        *out_n = best_n;
        *result = best_result;
    }
    free(source), free(best);
    return ok;
}

/* The fewest triangles a separate piece of the surface keeps (PLUSH_CAGE_PIECE_FLOOR). Simplified with the
 * rest, a piece of a few dozen faces beside a large one keeps two or three triangles, and all but one of its
 * nodes are its root. */
#define PIECE_FLOOR PLUSH_CAGE_PIECE_FLOOR

/* raise_small_pieces marks a piece's slot taken with the top bit (slots are below SIZE_MAX / 2). */
#define RAISE_TAKEN (~(SIZE_MAX >> 1))

/* A piece that could be raised: its source faces and its root, the largest first (ties by root). */
typedef struct raise_order {
    size_t whole, piece;
} raise_order;

static int raise_order_cmp(const void *pa, const void *pb)
{
    const raise_order *a = pa, *b = pb;
    if (a->whole != b->whole)
        return a->whole > b->whole ? -1 : 1;
    return a->piece < b->piece ? -1 : a->piece > b->piece;
}

/* Each separate piece of the source (faces joined by vertices; cleaned, cleaned_n indices) that the
 * simplified faces (idx, *n) keep with fewer than PIECE_FLOOR triangles, though it has more, is simplified
 * again alone toward PIECE_FLOOR and its faces replaced (a piece dropped as a speck stays dropped), while the
 * cage stays within limit triangles (the caller's: 20% over the target, the bar a cage is held to): a surface of hundreds of separate pieces (a hair of closed strands) at
 * PIECE_FLOOR each would be several times the target asked for, so the pieces raised are those the limit
 * leaves room for, the largest first. idx has room for twice cleaned_n. false when out of memory. */
static bool raise_small_pieces(const plush__meshopt *mo, const plush_cage_mesh *src, const unsigned *cleaned,
                               size_t cleaned_n, size_t limit, float tolerance, bool sloppy, unsigned *idx,
                               size_t *n, unsigned *tmp, plush_diag *diag)
{
    size_t nv = src->vertex_count, faces = cleaned_n / 3;
    uint32_t *parent = malloc((nv ? nv : 1) * sizeof *parent);
    size_t *have = calloc(nv ? nv : 1, sizeof *have), *whole = calloc(nv ? nv : 1, sizeof *whole);
    /* at: a raised piece's slot in repl (SIZE_MAX: not raised); got: its faces filled in, then the indices
     * its simplification gave (0: it keeps what it had) */
    size_t *at = malloc((nv ? nv : 1) * sizeof *at), *got = calloc(nv ? nv : 1, sizeof *got);
    /* each raised piece's source faces, then its new ones, in a slot of twice its source (joins add faces) */
    unsigned *repl = malloc((cleaned_n ? 2 * cleaned_n : 1) * sizeof *repl);
    raise_order *order = malloc((nv ? nv : 1) * sizeof *order);
    bool ok = parent && have && whole && at && got && repl && order;
    if (!ok)
        goto done;
    plush__uf_init(parent, nv);
    for (size_t f = 0; f < faces; f++)
        for (int k = 0; k < 2; k++)
            plush__uf_union(parent, cleaned[3 * f + k], cleaned[3 * f + k + 1]);
    for (size_t f = 0; f < faces; f++)
        whole[plush__uf_find(parent, cleaned[3 * f])]++;
    for (size_t f = 0; f < *n / 3; f++)
        have[plush__uf_find(parent, idx[3 * f])]++;
    /* the pieces to raise: kept (not dropped as a speck), under the floor, with more faces in the source */
    size_t slots = 0;
    for (size_t r = 0; r < nv; r++) {
        at[r] = SIZE_MAX;
        if (plush__uf_find(parent, (uint32_t)r) == r && have[r] > 0 && have[r] < PIECE_FLOOR && whole[r] > have[r])
            at[r] = slots, slots += 6 * whole[r];
    }
    if (slots == 0)
        goto done;
    for (size_t f = 0; f < faces; f++) {
        uint32_t r = plush__uf_find(parent, cleaned[3 * f]);
        if (at[r] != SIZE_MAX)
            memcpy(repl + at[r] + 3 * got[r], cleaned + 3 * f, 3 * sizeof *repl), got[r]++;
    }
    bool any = false;
    size_t room = limit > *n / 3 ? limit - *n / 3 : 0;
    for (size_t r = 0; ok && r < nv; r++) {
        if (at[r] == SIZE_MAX)
            continue;
        plush_cage_result ignored = {0};
        size_t m = 0;
        ok = simplify_faces(mo, src, repl + at[r], 3 * whole[r], PIECE_FLOOR, tolerance, sloppy, 1, tmp, &m, &ignored,
                            diag);
        got[r] = ok && m / 3 > have[r] ? m : 0; /* 0: the piece keeps what it had */
    }
    /* the raises the limit has room for, the largest source pieces first */
    size_t raised = 0;
    for (size_t r = 0; ok && r < nv; r++)
        if (at[r] != SIZE_MAX && got[r] > 0)
            order[raised++] = (raise_order){whole[r], r};
    qsort(order, raised, sizeof *order, raise_order_cmp);
    for (size_t i = 0; ok && i < raised; i++) {
        size_t r = order[i].piece, add = got[r] / 3 - have[r];
        if (add <= room)
            room -= add, at[r] |= RAISE_TAKEN, any = true;
        else
            got[r] = 0;
    }
    if (!ok || !any)
        goto done;
    /* the other pieces' faces in their order, then the raised pieces' new ones (within idx's room: it holds
     * twice the source, and a piece never gets back more than twice its source) */
    size_t kept = 0;
    for (size_t f = 0; f < *n / 3; f++) {
        uint32_t r = plush__uf_find(parent, idx[3 * f]);
        if (at[r] == SIZE_MAX || got[r] == 0)
            memmove(idx + kept, idx + 3 * f, 3 * sizeof *idx), kept += 3;
    }
    for (size_t r = 0; r < nv; r++)
        if (at[r] != SIZE_MAX && got[r] > 0 && kept + got[r] <= 2 * cleaned_n)
            memcpy(idx + kept, repl + (at[r] & ~RAISE_TAKEN), got[r] * sizeof *idx), kept += got[r];
    *n = kept;
done:
    free(parent), free(have), free(whole), free(at), free(got), free(repl), free(order);
    return ok;
}

/* The cleaned faces (cleaned_n indices) simplified toward target into idx (room for twice cleaned_n; its count
 * in *n): the ladder with its short edges collapsed up to passes times a try (simplify_faces), the small
 * pieces raised, and a raised piece's short edges once more against the whole cage's mean edge (a strand's tip
 * in a piece of seven nodes kept an edge 0.015 long beside a mean of 1.2, whose every hundredth of movement
 * read as a cage strain above 2). false when out of memory. */
static bool simplify_whole(const plush__meshopt *mo, const plush_cage_mesh *src, const unsigned *cleaned,
                           size_t cleaned_n, size_t target, float tolerance, bool sloppy, int passes, unsigned *idx,
                           unsigned *tmp, size_t *n, plush_cage_result *result, plush_diag *diag)
{
    memcpy(idx, cleaned, cleaned_n * sizeof *idx);
    *n = cleaned_n;
    bool ok = simplify_faces(mo, src, idx, cleaned_n, target, tolerance, sloppy, passes, tmp, n, result, diag) &&
              raise_small_pieces(mo, src, cleaned, cleaned_n, target + target / 5, tolerance, sloppy, idx, n, tmp,
                                 diag);
    if (ok)
        collapse_short_edges((const float(*)[3])src->positions, src->vertex_count, idx, *n, &ok);
    if (ok)
        *n = clean_faces(idx, *n, diag, &ok);
    return ok;
}

plush_status plush_cage_simplify_ladder(const plush_cage_mesh *src, const plush_cage_options *options, bool sloppy,
                                        plush_arena *arena, plush_cage_mesh *out, plush_cage_result *result,
                                        plush_diag *diag)
{
    memset(out, 0, sizeof *out);
    memset(result, 0, sizeof *result);
    plush_status st = plush__cage_check_source(src, options, diag);
    if (st != PLUSH_OK)
        return st;
    const plush__meshopt *mo = plush__meshopt_load(diag);
    if (!mo)
        return PLUSH_E_LIBRARY;
    size_t n = 3 * src->triangle_count;
    unsigned *idx = malloc(2 * n * sizeof *idx), *tmp = malloc(2 * n * sizeof *tmp); /* joins add faces */
    if (!idx || !tmp) {
        st = plush__no_memory(diag);
        goto done;
    }
    memcpy(idx, src->triangles, n * sizeof *idx);
    /* Layers that share positions (an outer and an inner shell, front and back faces) are one surface: its
     * faces once, before the simplifier sees edges shared by four faces and stops short of the target. */
    bool ok;
    n = clean_faces(idx, n, diag, &ok);
    if (!ok) {
        st = PLUSH_E_NOMEM;
        goto done;
    }
    float tolerance = options->tolerance > 0 ? options->tolerance : 0.1f;
    size_t target = options->target_triangles;
    double limit_d = floor((double)target * (1.0 + tolerance));
    size_t limit = limit_d > (double)SIZE_MAX / 2 ? SIZE_MAX / 2 : (size_t)limit_d;
    result->source_triangles = src->triangle_count;
    result->surface_triangles = n / 3;
    unsigned *cleaned = malloc((n ? n : 1) * sizeof *cleaned);
    size_t cleaned_n = n;
    if (!cleaned) {
        st = plush__no_memory(diag);
        goto done;
    }
    memcpy(cleaned, idx, n * sizeof *idx);
    plush_cage_result asked = *result;
    ok = simplify_whole(mo, src, cleaned, cleaned_n, target, tolerance, sloppy, 1, idx, tmp, &n, result, diag);
    if (ok && n / 3 < target - target / 5 && cleaned_n / 3 > target) {
        /* Short of a target its surface has the faces for by more than a fifth: the short edges' pass after the
         * ladder took more than the ladder was asked to make up for (a plane of 127,008 faces with its border locked: 247 -> 184 for
         * 300, each pass against the larger mean edge the one before left). Asked again with the short edges
         * collapsed in each try as far as they go; the nearer cage of the two is kept. */
        unsigned *again = malloc((cleaned_n ? 2 * cleaned_n : 1) * sizeof *again);
        plush_cage_result r = asked;
        size_t m = 0;
        ok = again && simplify_whole(mo, src, cleaned, cleaned_n, target, tolerance, sloppy, SHORT_EDGE_PASSES,
                                     again, tmp, &m, &r, diag);
        if (ok && (m / 3 > target ? m / 3 - target : target - m / 3) < target - n / 3) {
            memcpy(idx, again, m * sizeof *idx);
            n = m, *result = r;
        }
        free(again);
    }
    /* the caps flipped and cut pieces bridged on a cage a run may take (one over PLUSH_CAGE_MAX_TRIANGLES is
     * refused: a soup of random triangles took three times as long with them) */
    if (ok && n / 3 <= PLUSH_CAGE_MAX_TRIANGLES)
        ok = flip_caps((const float(*)[3])src->positions, src->vertex_count, idx, n);
    if (ok && n / 3 <= PLUSH_CAGE_MAX_TRIANGLES)
        ok = plush__cage_bridge_pieces(src, idx, &n, 2 * 3 * src->triangle_count);
    free(cleaned);
    if (!ok) {
        st = plush__no_memory(diag);
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
    free(idx), free(tmp);
    return st;
}
