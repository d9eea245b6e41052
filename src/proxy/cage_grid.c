/* The wrap's voxel grid: the band within the offset of the source's faces, the outside the border reaches,
 * repairs to a well-composed solid, tubes joining separate pieces, and the surface nets of its boundary
 * (plush__cage_wrap_grid; plush_cage_wrap and the simplification after it are in cage_wrap.c). */
#include "plush/cage.h"
#include "core/common.h"
#include "plush/proxy.h"
#include "plush/sys/core.h"
#include "proxy/cage_internal.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { GRID_MAX_POINTS = 16u << 20 };
enum { UNKNOWN = 0, SOLID = 1, OUTSIDE = 2 };

typedef struct grid {
    size_t n[3], stride[3], count;
    double origin[3], h;
    float *f;          /* distance to the surface minus the offset, clamped to [-h, h]; negative when solid */
    uint8_t *state;    /* UNKNOWN, SOLID, OUTSIDE */
    uint32_t *queue;   /* breadth-first searches */
    uint32_t *label;   /* the solid piece of each point; later the surface vertex of each cell */
} grid;

static void grid_free(grid *g)
{
    free(g->f);
    free(g->state);
    free(g->queue);
    free(g->label);
    memset(g, 0, sizeof *g);
}

static void coords(const grid *g, size_t i, size_t c[3])
{
    c[0] = i % g->n[0];
    c[1] = i / g->n[0] % g->n[1];
    c[2] = i / g->stride[2];
}

/* The bounding box of the faces' vertices (isolated vertices are not wrapped). */
void plush__cage_face_bounds(const plush_cage_mesh *src, double lo[3], double hi[3])
{
    for (int k = 0; k < 3; k++)
        lo[k] = DBL_MAX, hi[k] = -DBL_MAX;
    for (size_t t = 0; t < src->triangle_count; t++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++) {
                double x = src->positions[src->triangles[t][j]][k];
                lo[k] = x < lo[k] ? x : lo[k];
                hi[k] = x > hi[k] ? x : hi[k];
            }
}

/* A margin of three cells past the band keeps the solid two points away from the border, so every
 * boundary cell and every crossed edge's four cells lie inside the grid. */
static plush_status grid_create(const plush_cage_mesh *src, double h, double offset, grid *g, plush_diag *diag)
{
    memset(g, 0, sizeof *g);
    double lo[3], hi[3], margin = offset + 3 * h, total = 1;
    plush__cage_face_bounds(src, lo, hi);
    for (int k = 0; k < 3; k++) {
        double n = ceil((hi[k] - lo[k] + 2 * margin) / h) + 1;
        total *= n;
        if (!(total <= GRID_MAX_POINTS))
            return plush_diag_fail(diag, PLUSH_E_RANGE, -1, NULL, -1,
                                   "the wrap's grid would pass %u points (cell %g for a model %g across)",
                                   (unsigned)GRID_MAX_POINTS, h, hi[k] - lo[k]);
        g->n[k] = (size_t)n;
        g->origin[k] = (lo[k] + hi[k]) / 2 - (n - 1) * h / 2;
    }
    g->h = h;
    g->count = g->n[0] * g->n[1] * g->n[2];
    g->stride[0] = 1, g->stride[1] = g->n[0], g->stride[2] = g->n[0] * g->n[1];
    g->f = malloc(g->count * sizeof *g->f);
    g->state = calloc(g->count, 1);
    g->queue = malloc(g->count * sizeof *g->queue);
    g->label = malloc(g->count * sizeof *g->label);
    if (!g->f || !g->state || !g->queue || !g->label) {
        grid_free(g);
        return plush__no_memory(diag);
    }
    for (size_t i = 0; i < g->count; i++)
        g->f[i] = (float)h;
    return PLUSH_OK;
}

static size_t clamp_index(double x, size_t n)
{
    return x <= 0 ? 0 : x >= (double)(n - 1) ? n - 1 : (size_t)x;
}

/* Exact distances (plush_proxy_bind's search) at the points within offset + h of a face's bounding box;
 * the others stay at f = h. Points within offset are solid. */
static plush_status grid_distances(const plush_cage_mesh *src, double offset, grid *g, plush_diag *diag)
{
    double reach = offset + g->h;
    size_t marked = 0;
    for (size_t t = 0; t < src->triangle_count; t++) {
        size_t a[3], b[3];
        for (int k = 0; k < 3; k++) {
            const uint32_t *f = src->triangles[t];
            double lo = fmin(fmin(src->positions[f[0]][k], src->positions[f[1]][k]), src->positions[f[2]][k]);
            double hi = fmax(fmax(src->positions[f[0]][k], src->positions[f[1]][k]), src->positions[f[2]][k]);
            a[k] = clamp_index(ceil((lo - reach - g->origin[k]) / g->h), g->n[k]);
            b[k] = clamp_index(floor((hi + reach - g->origin[k]) / g->h), g->n[k]);
        }
        for (size_t z = a[2]; z <= b[2]; z++)
            for (size_t y = a[1]; y <= b[1]; y++)
                for (size_t x = a[0], i = z * g->stride[2] + y * g->stride[1] + a[0]; x <= b[0]; x++, i++)
                    if (!g->state[i]) {
                        g->state[i] = SOLID; /* "to measure" for now: set below from the distance */
                        marked++;
                    }
    }
    float(*points)[3] = malloc((marked ? marked : 1) * sizeof *points);
    if (!points)
        return plush__no_memory(diag);
    size_t m = 0;
    for (size_t i = 0; i < g->count; i++)
        if (g->state[i]) {
            size_t c[3];
            coords(g, i, c);
            for (int k = 0; k < 3; k++)
                points[m][k] = (float)(g->origin[k] + (double)c[k] * g->h);
            g->queue[m++] = (uint32_t)i;
        }
    plush_proxy_mesh mesh = {.nodes = (const float(*)[3])src->positions, .node_count = src->vertex_count,
                             .triangles = (const uint32_t(*)[3])src->triangles,
                             .triangle_count = src->triangle_count};
    plush_proxy_binding *b = NULL;
    plush_status st = plush_proxy_bind(&mesh, (const float(*)[3])points, marked,
                                       &(plush_proxy_bind_options){.threads = 2}, &b, diag);
    free(points);
    if (st != PLUSH_OK)
        return st;
    for (size_t j = 0; j < marked; j++) {
        size_t i = g->queue[j];
        double d = b->distances[j][0] - offset;
        g->f[i] = (float)fmax(-g->h, fmin(g->h, d));
        g->state[i] = d <= 0 ? SOLID : UNKNOWN;
    }
    plush_proxy_binding_free(b);
    return PLUSH_OK;
}

/* A point that joins the solid after the band was measured (an enclosed hollow, a repair, a tube) lies a
 * quarter cell inside, so the surface passes between it and its outside neighbours. */
static void make_solid(grid *g, size_t i)
{
    g->state[i] = SOLID;
    if (g->f[i] >= 0)
        g->f[i] = (float)(-0.25 * g->h);
}

static bool on_border(const grid *g, const size_t c[3])
{
    for (int k = 0; k < 3; k++)
        if (c[k] == 0 || c[k] == g->n[k] - 1)
            return true;
    return false;
}

/* Outside: what the grid border reaches through points that are not solid (6-connected). Everything else
 * becomes solid: hollows inside closed pieces fill. Returns the points that became solid. */
static size_t grid_fill(grid *g)
{
    size_t head = 0, tail = 0, added = 0;
    for (size_t i = 0; i < g->count; i++) {
        if (g->state[i] == SOLID)
            continue;
        g->state[i] = UNKNOWN;
        size_t c[3];
        coords(g, i, c);
        if (on_border(g, c)) {
            g->state[i] = OUTSIDE;
            g->queue[tail++] = (uint32_t)i;
        }
    }
    while (head < tail) {
        size_t i = g->queue[head++], c[3];
        coords(g, i, c);
        for (int k = 0; k < 3; k++) {
            if (c[k] > 0 && g->state[i - g->stride[k]] == UNKNOWN) {
                g->state[i - g->stride[k]] = OUTSIDE;
                g->queue[tail++] = (uint32_t)(i - g->stride[k]);
            }
            if (c[k] + 1 < g->n[k] && g->state[i + g->stride[k]] == UNKNOWN) {
                g->state[i + g->stride[k]] = OUTSIDE;
                g->queue[tail++] = (uint32_t)(i + g->stride[k]);
            }
        }
    }
    for (size_t i = 0; i < g->count; i++)
        if (g->state[i] == UNKNOWN) {
            make_solid(g, i);
            added++;
        }
    return added;
}

/* One pass making the solid well-composed: no square with solid and outside on its two diagonals, no
 * cube whose two opposite corners differ from the six others. Each such place gets an outside point made
 * solid (solid only grows, so the passes end); well-composed, the boundary in every cell is one disk. */
static size_t grid_repair(grid *g)
{
    static const int faces[3][4] = {{0, 1, 3, 2}, {0, 2, 6, 4}, {0, 4, 5, 1}};
    size_t corner[8], flips = 0;
    for (int c = 0; c < 8; c++)
        corner[c] = (c & 1 ? g->stride[0] : 0) + (c & 2 ? g->stride[1] : 0) + (c & 4 ? g->stride[2] : 0);
    for (size_t z = 0; z + 1 < g->n[2]; z++)
        for (size_t y = 0; y + 1 < g->n[1]; y++)
            for (size_t x = 0, p = z * g->stride[2] + y * g->stride[1]; x + 1 < g->n[0]; x++, p++) {
                bool s[8];
                for (int c = 0; c < 8; c++)
                    s[c] = g->state[p + corner[c]] == SOLID;
                for (int k = 0; k < 3; k++) {
                    const int *q = faces[k];
                    if (s[q[0]] == s[q[2]] && s[q[1]] == s[q[3]] && s[q[0]] != s[q[1]]) {
                        int flip = s[q[0]] ? q[1] : q[0];
                        make_solid(g, p + corner[flip]);
                        s[flip] = true;
                        flips++;
                    }
                }
                for (int a = 0; a < 4; a++) {
                    int b = 7 - a;
                    bool lone = s[a] == s[b];
                    for (int c = 0; c < 8 && lone; c++)
                        lone = c == a || c == b || s[c] != s[a];
                    if (lone) {
                        int flip = s[a] ? a ^ 1 : a;
                        make_solid(g, p + corner[flip]);
                        s[flip] = true;
                        flips++;
                    }
                }
            }
    return flips;
}

/* Labels the solid's 6-connected pieces 1, 2, ... in grid order (0: outside); returns their count. */
static uint32_t grid_label(grid *g)
{
    uint32_t pieces = 0;
    for (size_t i = 0; i < g->count; i++)
        g->label[i] = 0;
    for (size_t s = 0; s < g->count; s++) {
        if (g->state[s] != SOLID || g->label[s])
            continue;
        size_t head = 0, tail = 0;
        g->label[s] = ++pieces;
        g->queue[tail++] = (uint32_t)s;
        while (head < tail) {
            size_t i = g->queue[head++], c[3];
            coords(g, i, c);
            for (int k = 0; k < 3; k++)
                for (int dir = 0; dir < 2; dir++) {
                    if (dir ? c[k] + 1 >= g->n[k] : c[k] == 0)
                        continue;
                    size_t j = dir ? i + g->stride[k] : i - g->stride[k];
                    if (g->state[j] == SOLID && !g->label[j]) {
                        g->label[j] = pieces;
                        g->queue[tail++] = (uint32_t)j;
                    }
                }
        }
    }
    return pieces;
}

/* Points within one cell of the segment between grid points a and b become solid: a 6-connected tube. */
static void grid_tube(grid *g, size_t a, size_t b)
{
    size_t ca[3], cb[3], lo[3], hi[3];
    coords(g, a, ca);
    coords(g, b, cb);
    double d[3], dd = 0;
    for (int k = 0; k < 3; k++) {
        lo[k] = (ca[k] < cb[k] ? ca[k] : cb[k]) - 1;
        hi[k] = (ca[k] > cb[k] ? ca[k] : cb[k]) + 1;
        d[k] = (double)cb[k] - (double)ca[k];
        dd += d[k] * d[k];
    }
    for (size_t z = lo[2]; z <= hi[2]; z++)
        for (size_t y = lo[1]; y <= hi[1]; y++)
            for (size_t x = lo[0]; x <= hi[0]; x++) {
                double p[3] = {(double)x - (double)ca[0], (double)y - (double)ca[1], (double)z - (double)ca[2]};
                double t = dd > 0 ? (p[0] * d[0] + p[1] * d[1] + p[2] * d[2]) / dd : 0, r = 0;
                t = t < 0 ? 0 : t > 1 ? 1 : t;
                for (int k = 0; k < 3; k++)
                    r += (p[k] - t * d[k]) * (p[k] - t * d[k]);
                if (r <= 1.0 + 1e-9)
                    make_solid(g, z * g->stride[2] + y * g->stride[1] + x);
            }
}

static bool touches_outside(const grid *g, size_t i)
{
    size_t c[3];
    coords(g, i, c);
    for (int k = 0; k < 3; k++)
        if ((c[k] > 0 && g->state[i - g->stride[k]] == OUTSIDE) ||
            (c[k] + 1 < g->n[k] && g->state[i + g->stride[k]] == OUTSIDE))
            return true;
    return false;
}

static int64_t grid_distance2(const grid *g, size_t a, size_t b)
{
    size_t ca[3], cb[3];
    coords(g, a, ca);
    coords(g, b, cb);
    int64_t s = 0;
    for (int k = 0; k < 3; k++) {
        int64_t d = (int64_t)ca[k] - (int64_t)cb[k];
        s += d * d;
    }
    return s;
}

/* Joins the labelled pieces with tubes, as a minimum spanning tree over their boundary points (Prim's,
 * from the largest piece): each step adds the piece nearest to those already joined, by its nearest pair
 * of boundary points. Quadratic in the boundary points, which is fine for the few pieces a band of a
 * couple of cells leaves apart. */
static plush_status grid_bridge(grid *g, uint32_t pieces, plush_diag *diag)
{
    size_t *size = calloc((size_t)pieces + 1, sizeof *size), nb = 0;
    bool *joined = calloc((size_t)pieces + 1, sizeof *joined);
    if (!size || !joined) {
        free(size);
        free(joined);
        return plush__no_memory(diag);
    }
    for (size_t i = 0; i < g->count; i++)
        if (g->label[i]) {
            size[g->label[i]]++;
            nb += touches_outside(g, i);
        }
    uint32_t main_piece = 1;
    for (uint32_t k = 2; k <= pieces; k++)
        main_piece = size[k] > size[main_piece] ? k : main_piece;
    uint32_t *border = malloc((nb + 1) * sizeof *border), *nearest = malloc((nb + 1) * sizeof *nearest);
    int64_t *best = malloc((nb + 1) * sizeof *best);
    if (!border || !nearest || !best) {
        free(size), free(joined), free(border), free(nearest), free(best);
        return plush__no_memory(diag);
    }
    nb = 0;
    for (size_t i = 0; i < g->count; i++)
        if (g->label[i] && touches_outside(g, i))
            border[nb++] = (uint32_t)i;
    for (size_t j = 0; j < nb; j++)
        best[j] = INT64_MAX, nearest[j] = 0;
    uint32_t added = main_piece;
    for (uint32_t step = 1; step < pieces; step++) {
        joined[added] = true;
        for (size_t a = 0; a < nb; a++) {
            if (g->label[border[a]] != added)
                continue;
            for (size_t j = 0; j < nb; j++) {
                if (joined[g->label[border[j]]])
                    continue;
                int64_t d = grid_distance2(g, border[a], border[j]);
                if (d < best[j])
                    best[j] = d, nearest[j] = border[a];
            }
        }
        size_t pick = nb;
        for (size_t j = 0; j < nb; j++)
            if (!joined[g->label[border[j]]] && (pick == nb || best[j] < best[pick]))
                pick = j;
        if (pick == nb)
            break;
        added = g->label[border[pick]];
        grid_tube(g, border[pick], nearest[pick]);
    }
    free(size), free(joined), free(border), free(nearest), free(best);
    return PLUSH_OK;
}

/* ---- surface nets -------------------------------------------------------------------------------- */

static void corner_position(const grid *g, size_t i, double p[3])
{
    size_t c[3];
    coords(g, i, c);
    for (int k = 0; k < 3; k++)
        p[k] = g->origin[k] + (double)c[k] * g->h;
}

/* The cell's vertex: the mean of its edges' crossings of f = 0 (linear along each edge). */
static void cell_vertex(const grid *g, size_t p, float out[3])
{
    double sum[3] = {0, 0, 0};
    int n = 0;
    for (int c = 0; c < 8; c++)
        for (int k = 0; k < 3; k++) {
            if (c & (1 << k))
                continue;
            size_t a = p + (c & 1 ? g->stride[0] : 0) + (c & 2 ? g->stride[1] : 0) + (c & 4 ? g->stride[2] : 0);
            size_t b = a + g->stride[k];
            if ((g->state[a] == SOLID) == (g->state[b] == SOLID))
                continue;
            double fa = g->f[a], fb = g->f[b], t = fa / (fa - fb), pa[3];
            corner_position(g, a, pa);
            for (int j = 0; j < 3; j++)
                sum[j] += pa[j];
            sum[k] += t * g->h;
            n++;
        }
    for (int j = 0; j < 3; j++)
        out[j] = (float)(sum[j] / n);
}

static bool cell_mixed(const grid *g, size_t p)
{
    bool any_solid = false, any_outside = false;
    for (int c = 0; c < 8; c++) {
        size_t i = p + (c & 1 ? g->stride[0] : 0) + (c & 2 ? g->stride[1] : 0) + (c & 4 ? g->stride[2] : 0);
        any_solid |= g->state[i] == SOLID;
        any_outside |= g->state[i] != SOLID;
    }
    return any_solid && any_outside;
}

static double distance2(const float a[3], const float b[3])
{
    double s = 0;
    for (int k = 0; k < 3; k++)
        s += ((double)a[k] - b[k]) * ((double)a[k] - b[k]);
    return s;
}

/* Two triangles per grid edge from a solid to an outside point, over the four cells around the edge,
 * wound so that (p1 - p0) x (p2 - p0) points from the solid to the outside. */
static size_t edge_quads(const grid *g, plush_cage_mesh *out, size_t t)
{
    for (size_t i = 0; i < g->count; i++) {
        size_t c[3];
        coords(g, i, c);
        for (int a = 0; a < 3; a++) {
            if (c[a] + 1 >= g->n[a] || (g->state[i] == SOLID) == (g->state[i + g->stride[a]] == SOLID))
                continue;
            size_t su = g->stride[(a + 1) % 3], sv = g->stride[(a + 2) % 3];
            /* (u, v, a) is right-handed: this order turns counter-clockwise seen from +a */
            uint32_t q[4] = {g->label[i - su - sv], g->label[i - sv], g->label[i], g->label[i - su]};
            if (g->state[i] != SOLID) {
                uint32_t x = q[1];
                q[1] = q[3], q[3] = x;
            }
            /* Either diagonal is safe: two cells differing in two coordinates share one grid edge. */
            if (distance2(out->positions[q[0]], out->positions[q[2]]) <=
                distance2(out->positions[q[1]], out->positions[q[3]])) {
                memcpy(out->triangles[t++], (uint32_t[3]){q[0], q[1], q[2]}, sizeof *out->triangles);
                memcpy(out->triangles[t++], (uint32_t[3]){q[0], q[2], q[3]}, sizeof *out->triangles);
            } else {
                memcpy(out->triangles[t++], (uint32_t[3]){q[0], q[1], q[3]}, sizeof *out->triangles);
                memcpy(out->triangles[t++], (uint32_t[3]){q[1], q[2], q[3]}, sizeof *out->triangles);
            }
        }
    }
    return t;
}

static plush_status grid_surface(grid *g, plush_arena *arena, plush_cage_mesh *out, plush_diag *diag)
{
    /* Keep every value away from 0 so no crossing sits exactly on a grid point (no zero-length edges). */
    float tiny = (float)(1e-3 * g->h);
    size_t nv = 0, nq = 0;
    for (size_t i = 0; i < g->count; i++) {
        g->f[i] = g->state[i] == SOLID ? fminf(g->f[i], -tiny) : fmaxf(g->f[i], tiny);
        g->label[i] = UINT32_MAX;
    }
    for (size_t i = 0; i < g->count; i++) {
        size_t c[3];
        coords(g, i, c);
        for (int k = 0; k < 3; k++)
            nq += c[k] + 1 < g->n[k] && (g->state[i] == SOLID) != (g->state[i + g->stride[k]] == SOLID);
        if (c[0] + 1 < g->n[0] && c[1] + 1 < g->n[1] && c[2] + 1 < g->n[2] && cell_mixed(g, i))
            g->label[i] = (uint32_t)nv++;
    }
    if (nq == 0)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "the wrap is empty");
    out->positions = plush_arena_array(arena, nv, sizeof *out->positions);
    out->normals = plush_arena_array(arena, nv, sizeof *out->normals);
    out->triangles = plush_arena_array(arena, 2 * nq, sizeof *out->triangles);
    if (!out->positions || !out->normals || !out->triangles)
        return plush__no_memory(diag);
    for (size_t i = 0; i < g->count; i++)
        if (g->label[i] != UINT32_MAX)
            cell_vertex(g, i, out->positions[g->label[i]]);
    out->vertex_count = nv;
    out->triangle_count = edge_quads(g, out, 0);
    out->source = NULL;
    /* outward by construction: the normals are the faces' own (no hints to flip them by) */
    float(*hints)[3] = out->normals;
    out->normals = NULL;
    plush_cage_vertex_normals(out, hints);
    out->normals = hints;
    return PLUSH_OK;
}

/* ---- the wrap ------------------------------------------------------------------------------------ */

plush_status plush__cage_wrap_grid(const plush_cage_mesh *src, double h, double offset, plush_arena *arena,
                                   plush_cage_mesh *out, plush_diag *diag)
{
    memset(out, 0, sizeof *out);
    grid g;
    plush_status st = grid_create(src, h, offset, &g, diag);
    if (st != PLUSH_OK)
        return st;
    st = grid_distances(src, offset, &g, diag);
    /* Each round only adds solid points, so it ends; a piece the tubes join stays joined. */
    for (int round = 0; st == PLUSH_OK; round++) {
        grid_fill(&g);
        while (grid_repair(&g) > 0)
            grid_fill(&g);
        uint32_t pieces = grid_label(&g);
        if (pieces == 0) {
            st = plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "the wrap is empty");
            break;
        }
        if (pieces == 1)
            break;
        if (round == 16) {
            st = plush_diag_fail(diag, PLUSH_E_GEOMETRY, -1, NULL, -1,
                                 "the wrap stays in %u pieces after joining them", pieces);
            break;
        }
        st = grid_bridge(&g, pieces, diag);
    }
    if (st == PLUSH_OK)
        st = grid_surface(&g, arena, out, diag);
    grid_free(&g);
    return st;
}
