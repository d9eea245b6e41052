/* The proxy cage: surface nets over plush__demo_field at an offset outside the fur, relaxed along the surface.
 *
 * Surface nets (one vertex per grid cell the surface crosses, one quad per crossed grid edge) gives a
 * closed surface made of near-square quads: good triangles for a soft body, unlike marching cubes'
 * slivers. Each crossed edge's quad is oriented by which end is inside, so the whole surface faces out.
 * The grid is made coarser step by step until the triangle budget holds and the result is a 2-manifold
 * (a cell holding two sheets of surface would pinch a vertex). */
#include "demo/internal.h"
#include "plush/sys/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { RELAX_ITERATIONS = 12, NEWTON_STEPS = 3, MAX_ATTEMPTS = 80 };

#define CAGE_OFFSET 0.3f
#define CELL_FIRST 0.45f
#define CELL_GROWTH 1.03f

typedef struct net {
    int n[3];                 /* grid points per axis */
    float origin[3];
    float h;
    float *f;                 /* field at the grid points */
    int32_t *cell;            /* cell -> surface vertex or -1 */
    size_t vertex_count;
    float (*p)[3];
    size_t quad_count;
    uint32_t (*quads)[4];
} net;

static size_t point_index(const net *g, int i, int j, int k)
{
    return ((size_t)k * (size_t)g->n[1] + (size_t)j) * (size_t)g->n[0] + (size_t)i;
}

static size_t cell_index(const net *g, int i, int j, int k)
{
    return ((size_t)k * (size_t)(g->n[1] - 1) + (size_t)j) * (size_t)(g->n[0] - 1) + (size_t)i;
}

/* X is measured from the middle column so that mirrored grid points are exact negatives of each other:
 * the field is mirror-symmetric to the bit, and so is the cage's topology (the bear hangs straight). */
static void grid_point(const net *g, int i, int j, int k, float out[3])
{
    out[0] = g->h * (float)(i - (g->n[0] - 1) / 2);
    out[1] = g->origin[1] + g->h * (float)j;
    out[2] = g->origin[2] + g->h * (float)k;
}

/* The grid: the pieces' bounding spheres, the offset and two spare cells on every side. */
static bool grid_setup(net *g, float h, plush_arena *arena)
{
    const bear_piece *pc = plush__demo_pieces();
    float lo[3] = {1e9f, 1e9f, 1e9f}, hi[3] = {-1e9f, -1e9f, -1e9f};
    for (int i = 0; i < BEAR_PIECE_COUNT; i++) {
        float r = pc[i].radii[0];
        r = pc[i].radii[1] > r ? pc[i].radii[1] : r;
        r = pc[i].radii[2] > r ? pc[i].radii[2] : r;
        for (int a = 0; a < 3; a++) {
            lo[a] = pc[i].center[a] - r < lo[a] ? pc[i].center[a] - r : lo[a];
            hi[a] = pc[i].center[a] + r > hi[a] ? pc[i].center[a] + r : hi[a];
        }
    }
    g->h = h;
    for (int a = 0; a < 3; a++) {
        float margin = CAGE_OFFSET + 2.0f * h;
        g->origin[a] = lo[a] - margin;
        g->n[a] = (int)((hi[a] - lo[a] + 2.0f * margin) / h) + 2;
    }
    /* The pieces are symmetric about x = 0: an odd count of columns centred there (see grid_point). */
    float half = (hi[0] > -lo[0] ? hi[0] : -lo[0]) + CAGE_OFFSET + 2.0f * h;
    g->n[0] = 2 * ((int)(half / h) + 1) + 1;
    g->origin[0] = -h * (float)((g->n[0] - 1) / 2);
    size_t points = (size_t)g->n[0] * (size_t)g->n[1] * (size_t)g->n[2];
    size_t cells = (size_t)(g->n[0] - 1) * (size_t)(g->n[1] - 1) * (size_t)(g->n[2] - 1);
    g->f = plush_arena_array(arena, points, sizeof *g->f);
    g->cell = plush_arena_array(arena, cells, sizeof *g->cell);
    g->p = plush_arena_array(arena, cells, sizeof *g->p);
    /* Every crossed grid edge is a quad; there are fewer crossed edges than 3 per point. */
    g->quads = plush_arena_array(arena, 3 * points, sizeof *g->quads);
    if (!g->f || !g->cell || !g->p || !g->quads)
        return false;
    for (int k = 0; k < g->n[2]; k++)
        for (int j = 0; j < g->n[1]; j++)
            for (int i = 0; i < g->n[0]; i++) {
                float p[3];
                grid_point(g, i, j, k, p);
                g->f[point_index(g, i, j, k)] = plush__demo_field(p, CAGE_OFFSET);
            }
    return true;
}

/* One vertex per crossed cell: the mean of the crossings on its twelve edges. */
static void place_vertices(net *g)
{
    static const int corner[8][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0},
                                     {0, 0, 1}, {1, 0, 1}, {0, 1, 1}, {1, 1, 1}};
    static const int edge[12][2] = {{0, 1}, {2, 3}, {4, 5}, {6, 7}, {0, 2}, {1, 3},
                                    {4, 6}, {5, 7}, {0, 4}, {1, 5}, {2, 6}, {3, 7}};
    g->vertex_count = 0;
    for (int k = 0; k + 1 < g->n[2]; k++)
        for (int j = 0; j + 1 < g->n[1]; j++)
            for (int i = 0; i + 1 < g->n[0]; i++) {
                float f[8];
                int inside = 0;
                for (int c = 0; c < 8; c++) {
                    f[c] = g->f[point_index(g, i + corner[c][0], j + corner[c][1], k + corner[c][2])];
                    inside += f[c] < 0;
                }
                size_t ci = cell_index(g, i, j, k);
                if (inside == 0 || inside == 8) {
                    g->cell[ci] = -1;
                    continue;
                }
                float sum[3] = {0, 0, 0};
                int n = 0;
                for (int e = 0; e < 12; e++) {
                    int a = edge[e][0], b = edge[e][1];
                    if ((f[a] < 0) == (f[b] < 0))
                        continue;
                    float t = f[a] / (f[a] - f[b]);
                    for (int x = 0; x < 3; x++)
                        sum[x] += (float)corner[a][x] + t * (float)(corner[b][x] - corner[a][x]);
                    n++;
                }
                float base[3];
                grid_point(g, i, j, k, base);
                for (int x = 0; x < 3; x++)
                    g->p[g->vertex_count][x] = base[x] + g->h * sum[x] / (float)n;
                g->cell[ci] = (int32_t)g->vertex_count++;
            }
}

/* One quad per crossed grid edge, from the four cells around it, facing the outside end. */
static bool make_quads(net *g)
{
    g->quad_count = 0;
    for (int a = 0; a < 3; a++) {
        int b = (a + 1) % 3, c = (a + 2) % 3;
        int at[3];
        for (at[2] = 0; at[2] < g->n[2]; at[2]++)
            for (at[1] = 0; at[1] < g->n[1]; at[1]++)
                for (at[0] = 0; at[0] < g->n[0]; at[0]++) {
                    if (at[a] + 1 >= g->n[a])
                        continue;
                    int to[3] = {at[0], at[1], at[2]};
                    to[a]++;
                    bool in0 = g->f[point_index(g, at[0], at[1], at[2])] < 0;
                    bool in1 = g->f[point_index(g, to[0], to[1], to[2])] < 0;
                    if (in0 == in1)
                        continue;
                    if (at[b] < 1 || at[c] < 1 || at[b] + 1 >= g->n[b] || at[c] + 1 >= g->n[c])
                        return false; /* the surface reached the grid's border */
                    /* Cells (b-1,c-1) (b,c-1) (b,c) (b-1,c): counter-clockwise about +a, since e_b x e_c = e_a. */
                    static const int steps[4][2] = {{-1, -1}, {0, -1}, {0, 0}, {-1, 0}};
                    uint32_t q[4];
                    for (int s = 0; s < 4; s++) {
                        int cc[3] = {at[0], at[1], at[2]};
                        cc[b] += steps[s][0];
                        cc[c] += steps[s][1];
                        int32_t v = g->cell[cell_index(g, cc[0], cc[1], cc[2])];
                        if (v < 0)
                            return false;
                        q[s] = (uint32_t)v;
                    }
                    uint32_t *out = g->quads[g->quad_count++];
                    if (in0) { /* inside at the low end: the outside is +a */
                        out[0] = q[0], out[1] = q[1], out[2] = q[2], out[3] = q[3];
                    } else {
                        out[0] = q[3], out[1] = q[2], out[2] = q[1], out[3] = q[0];
                    }
                }
    }
    return true;
}

static void field_gradient(const float p[3], float eps, float out[3])
{
    for (int a = 0; a < 3; a++) {
        float hi[3] = {p[0], p[1], p[2]}, lo[3] = {p[0], p[1], p[2]};
        hi[a] += eps;
        lo[a] -= eps;
        out[a] = (plush__demo_field(hi, CAGE_OFFSET) - plush__demo_field(lo, CAGE_OFFSET)) / (2.0f * eps);
    }
}

/* Newton steps onto the level set along the gradient. */
static void project(float p[3], float eps)
{
    for (int s = 0; s < NEWTON_STEPS; s++) {
        float g[3];
        field_gradient(p, eps, g);
        float gg = g[0] * g[0] + g[1] * g[1] + g[2] * g[2];
        if (gg < 1e-8f)
            return;
        float f = plush__demo_field(p, CAGE_OFFSET) / gg;
        for (int a = 0; a < 3; a++)
            p[a] -= f * g[a];
    }
}

/* Laplacian steps over the quad edges, each followed by a projection: evens out the quads and puts the
 * vertices on the offset surface itself (surface nets leaves them inside convex bumps). */
static bool relax(net *g, plush_arena *arena)
{
    float (*sum)[3] = plush_arena_array(arena, g->vertex_count, sizeof *sum);
    uint32_t *count = plush_arena_array(arena, g->vertex_count, sizeof *count);
    if (!sum || !count)
        return false;
    for (int it = 0; it < RELAX_ITERATIONS; it++) {
        memset(sum, 0, g->vertex_count * sizeof *sum);
        memset(count, 0, g->vertex_count * sizeof *count);
        for (size_t q = 0; q < g->quad_count; q++)
            for (int e = 0; e < 4; e++) {
                uint32_t u = g->quads[q][e], v = g->quads[q][(e + 1) & 3];
                for (int a = 0; a < 3; a++) {
                    sum[u][a] += g->p[v][a];
                    sum[v][a] += g->p[u][a];
                }
                count[u]++;
                count[v]++;
            }
        for (size_t v = 0; v < g->vertex_count; v++) {
            for (int a = 0; a < 3; a++)
                g->p[v][a] += 0.5f * (sum[v][a] / (float)count[v] - g->p[v][a]);
            project(g->p[v], 0.02f * g->h);
        }
    }
    return true;
}

static float dist2(const float a[3], const float b[3])
{
    float d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
    return d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
}

typedef struct directed_edge {
    uint32_t from, to, triangle;
} directed_edge;

static int edge_order(const void *a, const void *b)
{
    const directed_edge *x = a, *y = b;
    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    if (x->to != y->to)
        return x->to < y->to ? -1 : 1;
    return (x->triangle > y->triangle) - (x->triangle < y->triangle);
}

static const directed_edge *find_edge(const directed_edge *e, size_t n, uint32_t from, uint32_t to)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = e[mid].from != from ? (e[mid].from < from ? -1 : 1) : e[mid].to != to ? (e[mid].to < to ? -1 : 1) : 0;
        if (c == 0)
            return &e[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Closed, consistently oriented 2-manifold: every directed edge once, its reverse present, and the
 * triangles around every vertex one single fan. */
static bool is_closed_manifold(const uint32_t (*tri)[3], size_t tri_count, size_t vertex_count, plush_arena *arena)
{
    size_t n = 3 * tri_count;
    directed_edge *e = plush_arena_array(arena, n, sizeof *e);
    if (!e)
        return false;
    for (size_t t = 0; t < tri_count; t++)
        for (int k = 0; k < 3; k++)
            e[3 * t + (size_t)k] = (directed_edge){tri[t][k], tri[t][(k + 1) % 3], (uint32_t)t};
    qsort(e, n, sizeof *e, edge_order);
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n && e[i].from == e[i + 1].from && e[i].to == e[i + 1].to)
            return false;
        if (e[i].from == e[i].to || !find_edge(e, n, e[i].to, e[i].from))
            return false;
    }
    size_t s = 0;
    for (uint32_t v = 0; v < vertex_count; v++) {
        size_t end = s;
        while (end < n && e[end].from == v)
            end++;
        if (end == s)
            return false; /* a vertex no triangle uses */
        /* In triangle (v, a, b) the next triangle around v is the one with edge v -> b. */
        const directed_edge *cur = &e[s];
        size_t steps = 0;
        do {
            const uint32_t *t = tri[cur->triangle];
            int k = t[0] == v ? 0 : t[1] == v ? 1 : 2;
            cur = find_edge(e, n, v, t[(k + 2) % 3]);
            steps++;
        } while (cur && cur != &e[s] && steps <= end - s);
        if (cur != &e[s] || steps != end - s)
            return false;
        s = end;
    }
    return true;
}

/* Quads to triangles along the shorter diagonal. */
static void triangulate(const net *g, uint32_t (*tri)[3])
{
    for (size_t q = 0; q < g->quad_count; q++) {
        const uint32_t *v = g->quads[q];
        uint32_t *a = tri[2 * q], *b = tri[2 * q + 1];
        if (dist2(g->p[v[0]], g->p[v[2]]) <= dist2(g->p[v[1]], g->p[v[3]])) {
            a[0] = v[0], a[1] = v[1], a[2] = v[2];
            b[0] = v[0], b[1] = v[2], b[2] = v[3];
        } else {
            a[0] = v[0], a[1] = v[1], a[2] = v[3];
            b[0] = v[1], b[1] = v[2], b[2] = v[3];
        }
    }
}

static void cage_normals(bear_cage *c)
{
    memset(c->normals, 0, c->node_count * sizeof *c->normals);
    for (size_t t = 0; t < c->triangle_count; t++) {
        const float *p0 = c->nodes[c->triangles[t][0]], *p1 = c->nodes[c->triangles[t][1]],
                    *p2 = c->nodes[c->triangles[t][2]];
        float u[3] = {p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]};
        float w[3] = {p2[0] - p0[0], p2[1] - p0[1], p2[2] - p0[2]};
        float n[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
        for (int k = 0; k < 3; k++)
            for (int a = 0; a < 3; a++)
                c->normals[c->triangles[t][k]][a] += n[a];
    }
    for (size_t v = 0; v < c->node_count; v++) {
        float *n = c->normals[v];
        float len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        for (int a = 0; a < 3; a++)
            n[a] = len > 0 ? n[a] / len : (float)(a == 1);
    }
}

/* One attempt at cell size h: 1 built, 0 over budget or not a manifold, -1 out of memory. */
static int attempt(float h, plush_arena *arena, bear_cage *out)
{
    plush_arena scratch = {0};
    net g = {0};
    int result = -1;
    if (!grid_setup(&g, h, &scratch))
        goto done;
    place_vertices(&g);
    result = 0;
    if (!make_quads(&g) || 2 * g.quad_count > BEAR_CAGE_MAX_TRIANGLES)
        goto done;
    result = -1;
    uint32_t (*tri)[3] = plush_arena_array(&scratch, 2 * g.quad_count, sizeof *tri);
    if (!tri || !relax(&g, &scratch))
        goto done;
    triangulate(&g, tri);
    result = 0;
    if (!is_closed_manifold((const uint32_t (*)[3])tri, 2 * g.quad_count, g.vertex_count, &scratch))
        goto done;
    result = -1;
    out->node_count = g.vertex_count;
    out->triangle_count = 2 * g.quad_count;
    out->nodes = plush_arena_array(arena, g.vertex_count, sizeof *out->nodes);
    out->normals = plush_arena_array(arena, g.vertex_count, sizeof *out->normals);
    out->triangles = plush_arena_array(arena, out->triangle_count, sizeof *out->triangles);
    if (!out->nodes || !out->normals || !out->triangles)
        goto done;
    memcpy(out->nodes, g.p, g.vertex_count * sizeof *out->nodes);
    memcpy(out->triangles, tri, out->triangle_count * sizeof *out->triangles);
    out->cell = h;
    out->offset = CAGE_OFFSET;
    cage_normals(out);
    result = 1;
done:
    plush_arena_free(&scratch);
    return result;
}

plush_status plush__demo_cage_build(plush_arena *arena, bear_cage *out, plush_diag *diag)
{
    memset(out, 0, sizeof *out);
    float h = CELL_FIRST;
    for (int i = 0; i < MAX_ATTEMPTS; i++, h *= CELL_GROWTH) {
        int r = attempt(h, arena, out);
        if (r > 0)
            return PLUSH_OK;
        if (r < 0)
            return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "cage", -1, "out of memory");
    }
    return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "cage", -1,
                           "no grid gives a closed 2-manifold cage of at most %d triangles",
                           BEAR_CAGE_MAX_TRIANGLES);
}
