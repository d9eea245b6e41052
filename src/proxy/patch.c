/* Patch frames: each proxy triangle's rigid motion fitted to the nodes around it.
 *
 * A triangle's own frame turns with every wrinkle of the simulated cage, and a detailed vertex some way
 * off the cage (inside a limb, under a thick fur) turns with it on a long lever: neighbouring vertices
 * bound to neighbouring triangles then part. Fitting each triangle's rotation and translation to the
 * nodes within a few rings of it (the best rigid motion of that patch, as in shape matching) keeps what
 * the cage does at the scale of a patch -- sway, sag, squash -- and drops the wrinkles below it.
 *
 * The rotation of the patch's covariance A = sum (p - m)(p0 - m0)^T is found by the iteration of Müller
 * et al., "A Robust Method to Extract the Rotational Part of Deformations" (2016): starting from last
 * frame's rotation, turn R by the axis sum_c r_c x a_c / |sum_c r_c . a_c| until it no longer moves. It
 * never meets a division by a small determinant (flat or collapsed patches keep the nearest rotation)
 * and, warm-started, takes two or three steps per frame (plush__fit_rotation, core/geom.c, which the flat
 * soft bodies' shape uses too).
 *
 * A patch whose nodes lie nearly on one line -- a strand of hair whose cage is an edge or less across -- has its
 * turn about that line told only by how its nodes sit around it, and a cage so thin sits there as the
 * simulation's last step left it: on Alicia's braid (its patches' nodes within a quarter of an edge of their
 * line) one patch's best fit turned 100 degrees about the strand from its neighbour's for a frame, where the
 * strand's cross-section came out mirrored, and squeezed the braid between them to half its volume. Such a
 * patch takes its turn about its line from the patch it hangs from, as a strand's twist follows its root: that
 * patch's turn, then the least turn that takes the line where the patch's own fit puts it (which its nodes do
 * tell). The patches carry it breadth first from those whose nodes tell their turn, over triangles sharing a
 * corner; a piece nearly a line all through (a strand caged on its own) from the nearest triangle at rest that
 * tells its turn; from nothing, where no triangle does (the fit alone, as before). Blended with the patch's own
 * fit from a strand an edge across to half an edge (LINE_WIDTH), so neighbouring patches differ little. A rigid
 * motion is still every patch's motion. */
#include "plush/proxy.h"
#include "plush/sys/core.h"
#include "plush/sys/proxy.h"

#include "core/common.h"
#include "core/geom.h"
#include "proxy/skin_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct plush_proxy_patch {
    size_t triangle_count, node_count;
    size_t *start;           /* patch of triangle i: node[start[i] .. start[i + 1]) */
    uint32_t *node;
    double origin[3];        /* the rest nodes' mean: coordinates below are taken from it */
    double (*rest_node)[3];  /* p0 - origin per node */
    double (*moment)[12];    /* per node, each update: (x - origin) (p0 - origin)^T, then x - origin */
    double (*rest_mean)[3];  /* m0 per triangle */
    double (*now_mean)[3];   /* m per triangle, after the last update */
    double (*q)[4];          /* rotation per triangle, x y z w, w >= 0 */
    /* Patches nearly on a line (below): each one's rest axis, how much of its turn about it is carried from its
     * neighbour (0: none, its nodes tell it), and the order they are carried in, each after carry_from. */
    double (*axis)[3];
    double *edge;            /* per triangle while it is made: the mean rest length of the cage edges in its patch */
    double *carried;
    int32_t *carry_from;
    uint32_t *carry;
    size_t carry_count;
    /* Neighbouring patches share most of their nodes: each triangle's sums are its parent's (a triangle
     * before it in `order` that shares a corner) plus the nodes only it holds, minus those only the
     * parent holds; a triangle without a parent close enough adds its whole patch. */
    uint32_t *order;         /* triangles, each after its parent */
    int32_t *parent;         /* -1: the whole patch */
    size_t *diff_start;      /* triangle i's own nodes node[diff_start[i] .. + added[i]), then the parent's */
    uint32_t *diff_node;
    uint32_t *added;
    double (*sum)[12];       /* per triangle, each update: its patch's moments added up */
};

/* A patch whose nodes lie within this share of its mean cage edge of its line (root mean square: half a strand's
 * width, for nodes round a tube or along a ribbon's two edges) has its turn about the line carried from its
 * neighbour, in full within half of it: a strand less than an edge across, in full less than half an edge, which
 * the cage does not resolve across. */
#define LINE_WIDTH 0.5

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* ---- patches by reach: shortest paths over the cage's edges, a binary heap of (distance, node) ---- */


static double node_distance(const plush_proxy_mesh *rest, uint32_t a, uint32_t b)
{
    double d0 = (double)rest->nodes[a][0] - rest->nodes[b][0], d1 = (double)rest->nodes[a][1] - rest->nodes[b][1],
           d2 = (double)rest->nodes[a][2] - rest->nodes[b][2];
    return sqrt(d0 * d0 + d1 * d1 + d2 * d2);
}

/* Per node, reach x the bounding-box diagonal of its connected piece (pieces joined by triangles). */
static bool piece_reach(const plush_proxy_mesh *rest, double reach, double *out)
{
    size_t nn = rest->node_count;
    uint32_t *root = malloc((nn ? nn : 1) * sizeof *root);
    double(*box)[6] = malloc((nn ? nn : 1) * sizeof *box);
    if (!root || !box) {
        free(root);
        free(box);
        return false;
    }
    plush__uf_init(root, nn);
    for (size_t v = 0; v < nn; v++)
        for (int k = 0; k < 3; k++)
            box[v][k] = INFINITY, box[v][3 + k] = -INFINITY;
    for (size_t i = 0; i < rest->triangle_count; i++)
        for (int k = 1; k < 3; k++)
            plush__uf_union(root, rest->triangles[i][0], rest->triangles[i][k]);
    for (size_t v = 0; v < nn; v++) {
        uint32_t r = plush__uf_find(root, (uint32_t)v);
        for (int k = 0; k < 3; k++) {
            box[r][k] = fmin(box[r][k], rest->nodes[v][k]);
            box[r][3 + k] = fmax(box[r][3 + k], rest->nodes[v][k]);
        }
    }
    for (size_t v = 0; v < nn; v++) {
        const double *b = box[plush__uf_find(root, (uint32_t)v)];
        out[v] = reach * sqrt((b[3] - b[0]) * (b[3] - b[0]) + (b[4] - b[1]) * (b[4] - b[1]) + (b[5] - b[2]) * (b[5] - b[2]));
    }
    free(root);
    free(box);
    return true;
}

/* Each node's triangles (CSR: node v's are tri[start[v] .. start[v + 1])); false when out of memory, both NULL. */
static bool triangles_by_node(const plush_proxy_mesh *rest, size_t nn, size_t **start_out, uint32_t **tri_out)
{
    size_t tn = rest->triangle_count;
    size_t *start = calloc(nn + 1, sizeof *start), *fill = malloc((nn + 1) * sizeof *fill);
    uint32_t *tri = malloc((3 * tn + 1) * sizeof *tri);
    if (!start || !fill || !tri) {
        free(start);
        free(fill);
        free(tri);
        *start_out = NULL, *tri_out = NULL;
        return false;
    }
    for (size_t i = 0; i < tn; i++)
        for (int k = 0; k < 3; k++)
            start[rest->triangles[i][k] + 1]++;
    for (size_t v = 0; v < nn; v++)
        start[v + 1] += start[v];
    memcpy(fill, start, (nn + 1) * sizeof *fill);
    for (size_t i = 0; i < tn; i++)
        for (int k = 0; k < 3; k++)
            tri[fill[rest->triangles[i][k]]++] = (uint32_t)i;
    free(fill);
    *start_out = start, *tri_out = tri;
    return true;
}

/* The order the sums are made in and what each triangle takes from its parent: a breadth-first walk over
 * triangles that share a corner, each one's parent the triangle it was reached from, when the nodes the
 * two patches do not share are fewer than the triangle's own patch (else it adds its patch up alone).
 * False when out of memory. */
static bool share_sums(plush_proxy_patch *p, const plush_proxy_mesh *rest, const size_t *tstart, const uint32_t *tri)
{
    size_t tn = p->triangle_count;
    bool *seen = calloc(tn ? tn : 1, 1);
    p->order = malloc((tn ? tn : 1) * sizeof *p->order);
    p->parent = malloc((tn ? tn : 1) * sizeof *p->parent);
    p->diff_start = calloc(tn + 1, sizeof *p->diff_start);
    p->added = calloc(tn ? tn : 1, sizeof *p->added);
    p->sum = malloc((tn ? tn : 1) * sizeof *p->sum);
    size_t cap = 2 * p->start[tn] / (tn ? tn : 1) * tn / 2 + 64, used = 0;
    p->diff_node = malloc(cap * sizeof *p->diff_node);
    bool ok = seen && p->order && p->parent && p->diff_start && p->added && p->sum && p->diff_node;
    /* the walk: order doubles as its queue */
    size_t head = 0, tail = 0;
    for (size_t first = 0; ok && first < tn; first++) {
        if (seen[first])
            continue;
        seen[first] = true;
        p->parent[first] = -1;
        p->order[tail++] = (uint32_t)first;
        while (head < tail) {
            uint32_t i = p->order[head++];
            for (int k = 0; k < 3; k++) {
                uint32_t v = rest->triangles[i][k];
                for (size_t e = tstart[v]; e < tstart[v + 1]; e++) {
                    uint32_t j = tri[e];
                    if (seen[j])
                        continue;
                    seen[j] = true;
                    p->parent[j] = (int32_t)i;
                    p->order[tail++] = j;
                }
            }
        }
    }
    /* per triangle (in index order, so that the lists are found by diff_start), the two differences of
     * the sorted node lists */
    for (size_t i = 0; ok && i < tn; i++) {
        p->diff_start[i] = used;
        if (p->parent[i] < 0)
            continue;
        size_t j = (size_t)p->parent[i], own = p->start[i + 1] - p->start[i];
        size_t need = own + (p->start[j + 1] - p->start[j]);
        if (used + need > cap) {
            size_t grown = 2 * (used + need);
            uint32_t *d = realloc(p->diff_node, grown * sizeof *d);
            if (!d) {
                ok = false;
                break;
            }
            p->diff_node = d;
            cap = grown;
        }
        const uint32_t *a = p->node + p->start[i], *ae = p->node + p->start[i + 1];
        const uint32_t *b = p->node + p->start[j], *be = p->node + p->start[j + 1];
        size_t mine = 0, theirs = 0;
        uint32_t *out = p->diff_node + used;
        for (const uint32_t *x = a, *y = b; x < ae; x++) { /* a \ b */
            while (y < be && *y < *x)
                y++;
            if (y == be || *y != *x)
                out[mine++] = *x;
        }
        for (const uint32_t *y = b, *x = a; y < be; y++) { /* b \ a */
            while (x < ae && *x < *y)
                x++;
            if (x == ae || *x != *y)
                out[mine + theirs++] = *y;
        }
        if (mine + theirs >= own) {
            p->parent[i] = -1;   /* as cheap alone */
            continue;
        }
        p->added[i] = (uint32_t)mine;
        used += mine + theirs;
    }
    if (ok)
        p->diff_start[tn] = used;
    free(seen);
    return ok;
}

plush_status plush__proxy_patch_shape_check(plush_proxy_patch_shape shape, const char *what, plush_diag *diag)
{
    if (shape.rings < 0 || shape.rings > 64)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, what, -1, "patch rings must be in [0, 64], not %d",
                               shape.rings);
    if (!(shape.reach >= 0 && shape.reach <= 4))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, what, -1, "patch reach must be in [0, 4], not %g",
                               (double)shape.reach);
    return PLUSH_OK;
}

/* Triangle i's patch at rest: its main axis (the moment's largest eigenvector, by power iteration) and the share
 * of its turn to carry from a neighbour (LINE_WIDTH). */
static void patch_line(plush_proxy_patch *p, size_t i)
{
    double c[3][3] = {{0}};
    size_t n = p->start[i + 1] - p->start[i];
    for (size_t e = p->start[i]; e < p->start[i + 1]; e++) {
        double d[3];
        for (int k = 0; k < 3; k++)
            d[k] = p->rest_node[p->node[e]][k] - p->rest_mean[i][k];
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                c[a][b] += d[a] * d[b] / (double)n;
    }
    int best = 0;
    for (int k = 1; k < 3; k++)
        if (c[k][k] > c[best][best])
            best = k;
    double v[3] = {c[0][best], c[1][best], c[2][best]}, along = 0;
    for (int it = 0; it < 64; it++) {
        double w[3], len = 0;
        for (int a = 0; a < 3; a++)
            w[a] = c[a][0] * v[0] + c[a][1] * v[1] + c[a][2] * v[2];
        len = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
        if (!(len > 0))
            break;
        along = len;
        for (int a = 0; a < 3; a++)
            v[a] = w[a] / len;
    }
    double across = c[0][0] + c[1][1] + c[2][2] - along, width = sqrt(fmax(across, 0)) / p->edge[i];
    p->carried[i] = !(along > across && p->edge[i] > 0) || width >= LINE_WIDTH ? 0
                    : width <= LINE_WIDTH / 2                       ? 1
                                                                    : 2 - 2 * width / LINE_WIDTH;
    memcpy(p->axis[i], v, sizeof v);
}

/* The order turns are carried in: from every patch whose nodes tell its turn, breadth first over triangles that
 * share a corner, to the patches nearly on a line; one reached from none (a piece all of it nearly a line) keeps
 * its own. False when out of memory. */
static bool carry_order(plush_proxy_patch *p, const plush_proxy_mesh *rest, const size_t *tstart, const uint32_t *tri)
{
    size_t tn = p->triangle_count;
    uint32_t *queue = malloc((tn + 1) * sizeof *queue);
    p->carry_from = malloc((tn ? tn : 1) * sizeof *p->carry_from);
    p->carry = malloc((tn ? tn : 1) * sizeof *p->carry);
    uint32_t *near_from = malloc((tn ? tn : 1) * sizeof *near_from);
    double *near_d2 = malloc((tn ? tn : 1) * sizeof *near_d2);
    double(*centroid)[3] = malloc((tn ? tn : 1) * sizeof *centroid);
    bool ok = queue && p->carry_from && p->carry && near_from && near_d2 && centroid;
    for (size_t i = 0; ok && i < tn; i++)
        for (int k = 0; k < 3; k++) {
            double d = 0;
            for (int c = 0; c < 3; c++)
                d += (double)rest->nodes[rest->triangles[i][c]][k] / 3;
            centroid[i][k] = d;
        }
    if (ok) {
        size_t head = 0, tail = 0;
        for (size_t i = 0; i < tn; i++) {
            p->carry_from[i] = -1;
            near_from[i] = UINT32_MAX;
            if (p->carried[i] == 0)
                queue[tail++] = (uint32_t)i;
        }
        size_t sources = tail;
        p->carry_count = 0;
        for (;;) {
            while (head < tail) {
                uint32_t i = queue[head++];
                for (int k = 0; k < 3; k++) {
                    uint32_t v = rest->triangles[i][k];
                    for (size_t e = tstart[v]; e < tstart[v + 1]; e++) {
                        uint32_t j = tri[e];
                        if (p->carried[j] == 0 || p->carry_from[j] >= 0)
                            continue;
                        p->carry_from[j] = (int32_t)i;
                        p->carry[p->carry_count++] = j;
                        queue[tail++] = j;
                    }
                }
            }
            /* a piece nearly a line all through (a strand caged on its own): carried from the nearest triangle at
             * rest that tells its turn, of the piece it hangs from, and on along it (the piece whose triangle is
             * nearest first; each line triangle's nearest found once, so strands by the thousand stay quick) */
            double best = INFINITY;
            uint32_t to = 0, from = 0;
            for (size_t j = 0; j < tn; j++) {
                if (p->carried[j] == 0 || p->carry_from[j] >= 0)
                    continue;
                if (near_from[j] == UINT32_MAX) {
                    near_d2[j] = INFINITY;
                    for (size_t h = 0; h < sources; h++) {
                        const double *a = centroid[j], *b = centroid[queue[h]];
                        double d = (a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                                   (a[2] - b[2]) * (a[2] - b[2]);
                        if (d < near_d2[j])
                            near_d2[j] = d, near_from[j] = queue[h];
                    }
                }
                if (near_d2[j] < best)
                    best = near_d2[j], to = (uint32_t)j, from = near_from[j];
            }
            if (!(best < INFINITY))
                break;
            p->carry_from[to] = (int32_t)from;
            p->carry[p->carry_count++] = to;
            queue[tail++] = to;
        }
    }
    free(queue);
    free(near_from);
    free(near_d2);
    free(centroid);
    return ok;
}

plush_status plush_proxy_patch_create(const plush_proxy_mesh *rest, plush_proxy_patch_shape shape,
                                      plush_proxy_patch **out, plush_diag *diag)
{
    if (out)
        *out = NULL;
    if (!rest || !out || (rest->triangle_count && (!rest->nodes || !rest->triangles)))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "patch", -1, "missing proxy or output");
    plush_status st = plush__proxy_patch_shape_check(shape, "patch", diag);
    if (st != PLUSH_OK)
        return st;
    int rings = shape.rings;
    bool by_reach = shape.reach > 0;
    size_t tn = rest->triangle_count, nn = rest->node_count;
    for (size_t i = 0; i < tn; i++)
        for (int k = 0; k < 3; k++)
            if (rest->triangles[i][k] >= nn)
                return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "proxy triangle", (int64_t)i,
                                       "node %u out of range (%zu nodes)", rest->triangles[i][k], nn);
    plush_proxy_patch *p = calloc(1, sizeof *p);
    /* Node neighbours (CSR, repeats kept: they only cost a visit). */
    size_t *nstart = calloc(nn + 1, sizeof *nstart), *fill = calloc(nn + 1, sizeof *fill);
    uint32_t *nadj = malloc((6 * tn + 1) * sizeof *nadj);
    uint32_t *mark = calloc(nn ? nn : 1, sizeof *mark), *list = malloc((nn ? nn : 1) * sizeof *list);
    size_t cap = 3 * tn + 16;
    if (p)
        p->start = calloc(tn + 1, sizeof *p->start), p->node = malloc(cap * sizeof *p->node),
        p->edge = calloc(tn ? tn : 1, sizeof *p->edge);
    /* by reach: per node its piece's reach, the best distance found (INFINITY outside the current walk)
     * and a heap that holds at most one entry per edge end plus the corners */
    double *radius = NULL, *dist = NULL;
    plush__dist_item *heap = NULL;
    if (by_reach) {
        radius = malloc((nn ? nn : 1) * sizeof *radius);
        dist = malloc((nn ? nn : 1) * sizeof *dist);
        heap = malloc((6 * tn + 4) * sizeof *heap);
    }
    bool ok = p && nstart && fill && nadj && mark && list && p->start && p->node && p->edge &&
              (!by_reach || (radius && dist && heap && piece_reach(rest, shape.reach, radius)));
    for (size_t v = 0; ok && by_reach && v < nn; v++)
        dist[v] = INFINITY;
    if (ok) {
        for (size_t i = 0; i < tn; i++)
            for (int k = 0; k < 3; k++)
                nstart[rest->triangles[i][k] + 1] += 2;
        for (size_t v = 0; v < nn; v++)
            nstart[v + 1] += nstart[v];
        memcpy(fill, nstart, (nn + 1) * sizeof *fill);
        for (size_t i = 0; i < tn; i++)
            for (int k = 0; k < 3; k++) {
                uint32_t a = rest->triangles[i][k];
                nadj[fill[a]++] = rest->triangles[i][(k + 1) % 3];
                nadj[fill[a]++] = rest->triangles[i][(k + 2) % 3];
            }
    }
    /* Each patch by a breadth-first walk of `rings` steps, then by shortest paths from the corners out to
     * the piece's reach; mark[v] == i + 1 means v is in patch i. */
    size_t used = 0;
    for (size_t i = 0; ok && i < tn; i++) {
        size_t count = 0, begin = 0;
        for (int k = 0; k < 3; k++) {
            uint32_t v = rest->triangles[i][k];
            if (mark[v] != i + 1)
                mark[v] = (uint32_t)(i + 1), list[count++] = v;
        }
        size_t corners = count;
        for (int r = 0; r < rings; r++) {
            size_t end = count;
            for (size_t e = begin; e < end; e++)
                for (size_t k = nstart[list[e]]; k < nstart[list[e] + 1]; k++) {
                    uint32_t v = nadj[k];
                    if (mark[v] != i + 1)
                        mark[v] = (uint32_t)(i + 1), list[count++] = v;
                }
            begin = end;
        }
        if (by_reach) {
            size_t hn = 0;
            double limit = radius[rest->triangles[i][0]];
            for (size_t e = 0; e < corners; e++) {
                dist[list[e]] = 0;
                plush__dist_heap_push(heap, &hn, (plush__dist_item){0, list[e]});
            }
            while (hn) {
                plush__dist_item it = plush__dist_heap_pop(heap, &hn);
                if (it.d > dist[it.v])
                    continue;   /* a stale entry: the node was reached shorter since */
                for (size_t k = nstart[it.v]; k < nstart[it.v + 1]; k++) {
                    uint32_t v = nadj[k];
                    double d = it.d + node_distance(rest, it.v, v);
                    if (!(d <= limit) || d >= dist[v])   /* beyond the reach (a NaN too) or no shorter */
                        continue;
                    if (mark[v] != i + 1)
                        mark[v] = (uint32_t)(i + 1), list[count++] = v;
                    dist[v] = d;
                    plush__dist_heap_push(heap, &hn, (plush__dist_item){d, v});
                }
            }
            for (size_t e = 0; e < count; e++)
                dist[list[e]] = INFINITY;
        }
        qsort(list, count, sizeof *list, cmp_u32);   /* sums in node order: the same on every run */
        double length = 0;
        size_t edges = 0;
        for (size_t e = 0; e < count; e++)
            for (size_t k = nstart[list[e]]; k < nstart[list[e] + 1]; k++)
                if (mark[nadj[k]] == i + 1)
                    length += node_distance(rest, list[e], nadj[k]), edges++;
        p->edge[i] = edges ? length / (double)edges : 0;
        if (used + count > cap) {
            size_t grown = 2 * (used + count);
            uint32_t *node = realloc(p->node, grown * sizeof *node);
            if (!node) {
                ok = false;
                break;
            }
            p->node = node;
            cap = grown;
        }
        memcpy(p->node + used, list, count * sizeof *list);
        p->start[i] = used;
        used += count;
    }
    if (ok) {
        p->start[tn] = used;
        p->triangle_count = tn;
        p->node_count = nn;
        p->rest_node = malloc((nn ? nn : 1) * sizeof *p->rest_node);
        p->moment = malloc((nn ? nn : 1) * sizeof *p->moment);
        p->rest_mean = malloc((tn ? tn : 1) * sizeof *p->rest_mean);
        p->now_mean = malloc((tn ? tn : 1) * sizeof *p->now_mean);
        p->q = malloc((tn ? tn : 1) * sizeof *p->q);
        ok = p->rest_node && p->moment && p->rest_mean && p->now_mean && p->q;
    }
    free(radius);
    free(dist);
    free(heap);
    free(nstart);
    free(fill);
    free(nadj);
    free(mark);
    free(list);
    if (!ok) {
        plush_proxy_patch_destroy(p);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "patch", -1, "out of memory for %zu triangles", tn);
    }
    size_t *tstart = NULL;   /* each node's triangles, for the sums' walk and the carried turns' */
    uint32_t *tri = NULL;
    if (!triangles_by_node(rest, nn, &tstart, &tri) || !share_sums(p, rest, tstart, tri)) {
        free(tstart), free(tri);
        plush_proxy_patch_destroy(p);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "patch", -1, "out of memory for %zu triangles", tn);
    }
    for (size_t v = 0; v < nn; v++)
        for (int k = 0; k < 3; k++)
            p->origin[k] += rest->nodes[v][k];
    for (int k = 0; k < 3; k++)
        p->origin[k] = nn ? p->origin[k] / (double)nn : 0;
    for (size_t v = 0; v < nn; v++)
        for (int k = 0; k < 3; k++)
            p->rest_node[v][k] = rest->nodes[v][k] - p->origin[k];
    for (size_t i = 0; i < tn; i++) {
        double m[3] = {0, 0, 0};
        size_t n = p->start[i + 1] - p->start[i];
        for (size_t e = p->start[i]; e < p->start[i + 1]; e++)
            for (int k = 0; k < 3; k++)
                m[k] += p->rest_node[p->node[e]][k];
        for (int k = 0; k < 3; k++)
            m[k] /= (double)n;
        memcpy(p->rest_mean[i], m, sizeof m);   /* from the origin, like rest_node */
        for (int k = 0; k < 3; k++)
            p->now_mean[i][k] = m[k] + p->origin[k];
        p->q[i][0] = p->q[i][1] = p->q[i][2] = 0;
        p->q[i][3] = 1;
    }
    p->axis = malloc((tn ? tn : 1) * sizeof *p->axis);
    p->carried = malloc((tn ? tn : 1) * sizeof *p->carried);
    for (size_t i = 0; p->axis && p->carried && i < tn; i++)
        patch_line(p, i);
    free(p->edge);   /* what patch_line needed of the walk */
    p->edge = NULL;
    bool carried = p->axis && p->carried && carry_order(p, rest, tstart, tri);
    free(tstart), free(tri);
    if (!carried) {
        plush_proxy_patch_destroy(p);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "patch", -1, "out of memory for %zu triangles", tn);
    }
    *out = p;
    return PLUSH_OK;
}

/* Triangles fitted on two threads from this many (each fit is its own: the same results). */
enum { TWO_THREADS_FROM = 256 };

/* The rotations and means of triangles from .. to - 1 from their sums. */
static void fit_part(void *ctx, size_t from, size_t to)
{
    plush_proxy_patch *p = ctx;
    for (size_t i = from; i < to; i++) {
        const double *sum = p->sum[i];
        double n = (double)(p->start[i + 1] - p->start[i]), a[3][3];
        const double *m0 = p->rest_mean[i];
        bool finite = true;
        for (int c = 0; c < 3; c++)
            for (int r = 0; r < 3; r++) {
                a[c][r] = sum[3 * c + r] - sum[9 + r] * m0[c];
                finite = finite && isfinite(a[c][r]);
            }
        if (!finite)
            continue;   /* keep the last motion, as a collapsed triangle keeps its frame */
        plush__fit_rotation(a, p->q[i]);
        for (int k = 0; k < 3; k++)
            p->now_mean[i][k] = sum[9 + k] / n + p->origin[k];
    }
}

/* q rotating v (x y z w). */
static void quat_rotate(const double q[4], const double v[3], double out[3])
{
    double t[3] = {2 * (q[1] * v[2] - q[2] * v[1]), 2 * (q[2] * v[0] - q[0] * v[2]), 2 * (q[0] * v[1] - q[1] * v[0])};
    out[0] = v[0] + q[3] * t[0] + q[1] * t[2] - q[2] * t[1];
    out[1] = v[1] + q[3] * t[1] + q[2] * t[0] - q[0] * t[2];
    out[2] = v[2] + q[3] * t[2] + q[0] * t[1] - q[1] * t[0];
}

/* Triangle i's turn about its line carried from the triangle it is reached from: that one's turn, then the least
 * turn that takes i's axis where i's own fit puts it (what i's nodes do tell); blended with i's own fit by
 * how far i's patch is from telling its turn itself. */
static void carry_turn(plush_proxy_patch *p, uint32_t i)
{
    int32_t from = p->carry_from[i];
    if (from < 0)
        return;
    double *q = p->q[i], *r = p->q[from], b[3], c[3];
    quat_rotate(q, p->axis[i], b);
    quat_rotate(r, p->axis[i], c);
    double d = b[0] * c[0] + b[1] * c[1] + b[2] * c[2];
    if (!(d > -0.999))
        return;   /* the axis turned about opposite: no least turn to speak of */
    /* the least turn from c to b: (c x b, 1 + c.b), normalised */
    double s[4] = {c[1] * b[2] - c[2] * b[1], c[2] * b[0] - c[0] * b[2], c[0] * b[1] - c[1] * b[0], 1 + d};
    double sl = sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2] + s[3] * s[3]);
    for (int k = 0; k < 4; k++)
        s[k] /= sl;
    double t[4] = {s[3] * r[0] + s[0] * r[3] + s[1] * r[2] - s[2] * r[1],
                   s[3] * r[1] - s[0] * r[2] + s[1] * r[3] + s[2] * r[0],
                   s[3] * r[2] + s[0] * r[1] - s[1] * r[0] + s[2] * r[3],
                   s[3] * r[3] - s[0] * r[0] - s[1] * r[1] - s[2] * r[2]};
    double w = p->carried[i], sign = t[0] * q[0] + t[1] * q[1] + t[2] * q[2] + t[3] * q[3] < 0 ? -1 : 1, n[4], len = 0;
    for (int k = 0; k < 4; k++)
        n[k] = (1 - w) * q[k] + w * sign * t[k], len += n[k] * n[k];
    len = sqrt(len);
    if (!(len > 0))
        return;
    for (int k = 0; k < 4; k++)
        q[k] = (n[3] < 0 ? -n[k] : n[k]) / len;
}

/* sum over the patch of (x - m)(p0 - m0)^T = sum x p0^T - (sum x) m0^T (both from the origin): each
 * node's outer product is made once per update and patches only add them up, each from its parent's. */
void plush_proxy_patch_update(plush_proxy_patch *p, const float (*nodes)[3])
{
    for (size_t v = 0; v < p->node_count; v++) {
        double y[3] = {nodes[v][0] - p->origin[0], nodes[v][1] - p->origin[1], nodes[v][2] - p->origin[2]};
        const double *o = p->rest_node[v];
        double *mo = p->moment[v];
        for (int c = 0; c < 3; c++)
            for (int r = 0; r < 3; r++)
                mo[3 * c + r] = y[r] * o[c];
        mo[9] = y[0], mo[10] = y[1], mo[11] = y[2];
    }
    for (size_t at = 0; at < p->triangle_count; at++) {
        size_t i = p->order[at];
        double *sum = p->sum[i];
        if (p->parent[i] < 0) {
            memset(sum, 0, sizeof p->sum[i]);
            for (size_t e = p->start[i]; e < p->start[i + 1]; e++) {
                const double *mo = p->moment[p->node[e]];
                for (int k = 0; k < 12; k++)
                    sum[k] += mo[k];
            }
            continue;
        }
        memcpy(sum, p->sum[p->parent[i]], sizeof p->sum[i]);
        size_t e = p->diff_start[i], mid = e + p->added[i];
        for (; e < mid; e++) {
            const double *mo = p->moment[p->diff_node[e]];
            for (int k = 0; k < 12; k++)
                sum[k] += mo[k];
        }
        for (; e < p->diff_start[i + 1]; e++) {
            const double *mo = p->moment[p->diff_node[e]];
            for (int k = 0; k < 12; k++)
                sum[k] -= mo[k];
        }
    }
    plush__two_halves(fit_part, p, p->triangle_count, TWO_THREADS_FROM);
    for (size_t c = 0; c < p->carry_count; c++)
        carry_turn(p, p->carry[c]);
}

void plush_proxy_patch_motion(const plush_proxy_patch *p, size_t triangle, double q[4], double translation[3])
{
    const double *r = p->q[triangle], *m = p->now_mean[triangle];
    double c[3][3], m0[3];
    for (int k = 0; k < 3; k++)
        m0[k] = p->rest_mean[triangle][k] + p->origin[k];
    plush__quat_to_mat3(r, &c[0][0], 3);
    memcpy(q, r, 4 * sizeof *q);
    for (int k = 0; k < 3; k++)
        translation[k] = m[k] - (c[0][k] * m0[0] + c[1][k] * m0[1] + c[2][k] * m0[2]);
}

size_t plush_proxy_patch_size(const plush_proxy_patch *p, size_t triangle)
{
    return triangle < p->triangle_count ? p->start[triangle + 1] - p->start[triangle] : 0;
}

void plush_proxy_patch_destroy(plush_proxy_patch *p)
{
    if (!p)
        return;
    free(p->start);
    free(p->node);
    free(p->rest_node);
    free(p->moment);
    free(p->rest_mean);
    free(p->now_mean);
    free(p->q);
    free(p->axis);
    free(p->edge);
    free(p->carried);
    free(p->carry_from);
    free(p->carry);
    free(p->order);
    free(p->parent);
    free(p->diff_start);
    free(p->diff_node);
    free(p->added);
    free(p->sum);
    free(p);
}
