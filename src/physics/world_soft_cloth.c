/* A TriMesh soft body stepped as cloth by plush itself (plush_world_cloth), not by Bullet: backward Euler
 * in a few substeps a fixed step, each a linear solve by conjugate gradients (Baraff and Witkin 1998) with the
 * Gauss-Newton stiffness of the links and hinges, so that a correction crosses the whole mesh in one solve
 * (preconditioned by each free node's 3 x 3 block of the matrix, started from the substep before's answer).
 * Position-based solvers (Bullet's PBD, or XPBD in small steps) carry it one link a sweep, which makes a finer
 * mesh softer until enough sweeps have crossed it (docs/compare.md: a sheet clamped by one edge dropped 1.71
 * at 8 x 8 quads and 3.48 at 16 x 16 with XPBD at 128 substeps; here 1.60 and 1.43, test_cloth_sheet).
 *
 * - Mass: one areal density (the body's total mass over its area), a node a third of each face's area.
 * - Stretch: one spring per edge of stiffness E A_e / L^2, A_e a third of the areas of the faces beside it:
 *   a sheet of stretch modulus E (force per unit length per unit strain) at any resolution. A seam link (a
 *   face a, b, b) has no area: it takes the stiffness its length would have in a square of its own.
 * - Bending: one dihedral-angle spring per interior edge, stiffness 3 B |e|^2 / (A_1 + A_2), the discrete
 *   shells' hinge energy (Grinspun et al. 2003): B theta^2 |e|^2 / (2 A_e) is B kappa^2 / 2 over the hinge's
 *   area. B = rho g l^3 from the bending length l (how far a strip reaches out straight before it bends
 *   under its weight).
 * - Damping: the body's kDP per fixed step (Bullet takes that share of the speed off each step), spread over
 *   the substeps; and a material relaxation time of one fixed step (Rayleigh damping tau K: stress
 *   E (strain + tau d strain / dt)), within which Bullet's solver takes the proxy's vibrations out.
 * - Shape memory (Bullet's kMT, plush_world_cloth.shape_k): each free node pulled toward its rest place turned
 *   and moved as the body goes, a spring of kMT / dt^2 per unit mass (dt the fixed step) and a damping of kMT / dt
 *   of its speed against the body's own turn and move, implicit (below).
 * - Pressure kPR times a node's area over the enclosed volume along its normal (Bullet's force), explicit;
 *   the world's gravity.
 * - Pins on their straight path across the fixed step, as for Bullet; anchored nodes toward their rigid
 *   body. Contacts: after each substep every free node is pushed out of the rigid bodies that follow bones
 *   (those world_soft_collide.c pushes faces out of), to the body's margin unless it lay nearer at rest; the
 *   push is not made speed, the speed into the body is spent; the faces' pass follows each fixed step as
 *   for every soft body.
 * The Bullet soft body exists (the world's readers and guards keep their one path) but is out of the
 * simulation. */
#include "core/common.h"
#include "core/geom.h"
#include "physics/rigid_shape.h"
#include "physics/world_soft_internal.h"
#include "plush/sys/physics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Substeps per fixed step when plush_world_cloth.substeps is 0: the skirt of docs/compare.md, at its own
 * detail, moved the same at 8 and 32 (0.73 and 0.75 from bones over 30 frames); at four times its detail it
 * needs 16 (plush compare's direct asks for the proxy's position iterations). */
#define CLOTH_DEFAULT_SUBSTEPS 8
/* Conjugate-gradient iterations a solve, at most, and the residual it stops at (over the right-hand side's).
 * Preconditioned by the masses alone, as first built, every solve of the skirt of docs/compare.md at four
 * times its detail stopped at 200 iterations with the residual at 3e-3 to 1e-2 (at its own detail 2e-4 to
 * 7e-4): the finer mesh was solved less, and an unfinished solve takes speed off like a damper. With each
 * node's block and the substep before's answer to start from, both finish: about 160 and 100 iterations at
 * 1e-5, and at 1e-6 every figure of the comparison is the same. With compression at its share (below) a stiff
 * link and a soft one meet at a node, and a few solves needed more than 400 (1 of 9,568 in that comparison,
 * the nested skirt of tests/compare at its first frames): the cap is 800. */
#define CLOTH_CG_ITERATIONS 800
#define CLOTH_CG_TOLERANCE 1e-5
/* The share of the stretch modulus a shortened edge holds (plush_world_cloth.compression when 0): a woven
 * fabric resists compression far less than stretch, it buckles. Held at the whole modulus, a mesh's straight
 * edges lock: a cone of them cannot bend where a finer mesh of the same cloth does, and compare's reference
 * moved with its resolution (docs/compare.md, "The reference locked"). Measured on 03's skirt at its own and
 * four times its detail: 1 and 0.3 lock (21 and 10 of 70 frames where the two lie over half the proxy's
 * distance apart), 0.1 and 0.03 converge (0.36 and 0.20 of it at worst), 0.01 and 0 crumple into pleats; the
 * value is the window's middle, and every shared cloth part was checked at it. */
#define CLOTH_DEFAULT_COMPRESSION 0.05f
/* Nodes closer than this share of the mean edge, along an edge, are welded into one (weld_nodes). */
#define CLOTH_WELD_SHARE 0.01

typedef struct cloth_hinge {
    uint32_t v[4];                /* the edge's ends, then the opposite corner of each face */
    float rest, stiffness;        /* the rest angle; 3 B |e|^2 / (A_1 + A_2) */
} cloth_hinge;

struct world_cloth {
    int substeps;
    float *inv_mass;              /* 0 for pinned and anchored nodes */
    float *area;                  /* per node: a third of its faces' areas (pressure) */
    size_t edge_count;
    uint32_t (*edges)[2];
    float *edge_rest, *edge_k;    /* rest length; stiffness E A_e / L^2 */
    float compression;            /* the share of edge_k an edge holds shortened (plush_world_cloth.compression) */
    uint32_t *rep;                /* per node: the node it is welded to (itself unless it follows one) */
    size_t followers;             /* free nodes that follow another (rep != itself) */
    double *edge_now;             /* this substep's stiffness along each edge: edge_k, or its compressed share */
    size_t hinge_count;
    cloth_hinge *hinges;
    double (*x)[3], (*v)[3];      /* the state within a fixed step, in double: a substep moves a node by
                                     less than a float resolves at the model's size */
    double (*f)[3];               /* the forces, per node */
    float (*force)[3];            /* per node: the pressure force this substep */
    float (*push)[3];             /* per node: this substep's push out of the bodies (not made speed) */
    double (*anchor_from)[3];     /* per anchor: its node at the start of the fixed step */
    float *node_clear;            /* per slot and node: rest clearance from that body (collide_count x nodes) */
    double (*r)[3], (*z)[3], (*p)[3], (*ap)[3], (*dv)[3]; /* the solve's vectors, per node */
    double (*pre)[9];             /* per node: the inverse of its 3 x 3 block of the solve's matrix (the
                                     preconditioner; zero for pinned and anchored nodes) */
    double (*hinge_grad)[4][3];   /* implicit step: each hinge's gradient this substep */
    double *edge_dir;             /* implicit step: each edge's unit direction, 3 per edge */
    double shape_k;               /* shape memory: kMT / dt^2, a spring per unit mass (0: none) */
    double (*shape_rest)[3];      /* per node: its rest place less the rest centre */
    double *shape_w;              /* per node: its weight in the centre and the turn (pins lead) */
    double (*goal)[3];            /* per node: this substep's goal */
    double shape_q[4];            /* the turn, warm-started from the substep before */
    double shape_dt;              /* the fixed step: the goal is fitted where the nodes' speeds take them in it */
    double shape_drag;            /* kMT / dt: the pull's damping, from where the step's speed takes a node */
    double (*shape_at)[3];        /* per node: where its speed takes it in a fixed step (the fit's input) */
    float pressure;               /* kPR, 0 when the body encloses no volume */
    float damping;                /* kDP: the share of the speed taken off each fixed step */
    uint64_t solves, unfinished;  /* linear solves, and those the iteration cap stopped short */
};



static void sub3(const float a[3], const float b[3], double out[3])
{
    for (int k = 0; k < 3; k++)
        out[k] = (double)a[k] - b[k];
}

static double face_area(const float (*x)[3], const uint32_t f[3])
{
    double e[3], g[3], n[3];
    sub3(x[f[1]], x[f[0]], e);
    sub3(x[f[2]], x[f[0]], g);
    plush__cross3d(e, g, n);
    return sqrt(plush__dot3d(n, n)) / 2;
}

/* The signed dihedral angle of a hinge at its four points p, and its gradient there (grad may be NULL). The
 * edge is p0 -> p1; faces (v0, v1, v2) and (v1, v0, v3) as wound consistently. Returns false on a
 * degenerate hinge. The gradients are those of Bridson et al. 2003: the opposite corner moves the angle by
 * its face's unit normal over its height. */
static void sub3d(const double a[3], const double b[3], double out[3])
{
    for (int k = 0; k < 3; k++)
        out[k] = a[k] - b[k];
}

static bool dihedral(const double p[4][3], double *theta, double grad[4][3])
{
    double e[3], a[3], b[3], n1[3], n2[3];
    sub3d(p[1], p[0], e);
    sub3d(p[2], p[0], a);
    sub3d(p[3], p[0], b);
    plush__cross3d(e, a, n1);             /* face 1's normal, |n1| = 2 A1 */
    plush__cross3d(b, e, n2);             /* face 2's, wound the same way round */
    double l2 = plush__dot3d(e, e), q1 = plush__dot3d(n1, n1), q2 = plush__dot3d(n2, n2);
    if (!(l2 > 0) || !(q1 > 1e-24 * l2 * l2) || !(q2 > 1e-24 * l2 * l2))
        return false;
    double l = sqrt(l2), c[3];
    plush__cross3d(n1, n2, c);
    *theta = atan2(plush__dot3d(c, e) / l, plush__dot3d(n1, n2));
    if (!grad)
        return true;
    double s1 = plush__dot3d(a, e) / l2, s2 = plush__dot3d(b, e) / l2;
    for (int k = 0; k < 3; k++) {
        double g2 = -l * n1[k] / q1, g3 = -l * n2[k] / q2;
        grad[2][k] = g2;
        grad[3][k] = g3;
        grad[1][k] = -(s1 * g2 + s2 * g3);
        grad[0][k] = -(grad[1][k] + g2 + g3);
    }
    return true;
}

static double wrap_angle(double a)
{
    while (a > M_PI)
        a -= 2 * M_PI;
    while (a < -M_PI)
        a += 2 * M_PI;
    return a;
}

static int by_edge(const void *pa, const void *pb)
{
    const uint32_t *a = pa, *b = pb;
    return a[0] != b[0] ? (a[0] > b[0]) - (a[0] < b[0]) : (a[1] > b[1]) - (a[1] < b[1]);
}

/* Each face's three edges as (low, high, face, corner opposite); sorted, equal keys are one edge. */
static plush_status build_edges(soft_ctx *c, struct world_cloth *xp, float stretch, float bending_stiffness,
                                const double *face_areas)
{
    world_soft *s = c->s;
    size_t rows = 3 * s->triangle_count;
    uint32_t(*e)[4] = malloc((rows ? rows : 1) * sizeof *e);
    if (!e)
        return world_soft_no_memory(c);
    size_t n = 0;
    for (size_t t = 0; t < s->triangle_count; t++) {
        /* on the welded nodes: a face two of whose corners are welded into one is no face */
        uint32_t f[3] = {xp->rep[s->triangles[t][0]], xp->rep[s->triangles[t][1]], xp->rep[s->triangles[t][2]]};
        if (f[0] == f[1] || f[1] == f[2] || f[2] == f[0])
            continue;
        for (int k = 0; k < 3; k++) {
            uint32_t a = f[k], b = f[(k + 1) % 3];
            e[n][0] = a < b ? a : b;
            e[n][1] = a < b ? b : a;
            e[n][2] = (uint32_t)t;
            e[n][3] = f[(k + 2) % 3];
            n++;
        }
    }
    qsort(e, n, sizeof *e, by_edge);
    plush_arena *arena = &c->wm->arena;
    xp->edges = plush_arena_array(arena, n ? n : 1, sizeof *xp->edges);
    xp->edge_rest = plush_arena_array(arena, n ? n : 1, sizeof *xp->edge_rest);
    xp->edge_k = plush_arena_array(arena, n ? n : 1, sizeof *xp->edge_k);
    xp->edge_dir = plush_arena_array(arena, 3 * n + 1, sizeof *xp->edge_dir);
    xp->edge_now = plush_arena_array(arena, n ? n : 1, sizeof *xp->edge_now);
    xp->hinge_grad = plush_arena_array(arena, n ? n : 1, sizeof *xp->hinge_grad);
    xp->hinges = plush_arena_array(arena, n ? n : 1, sizeof *xp->hinges);
    if (!xp->edges || !xp->edge_rest || !xp->edge_k || !xp->edge_now || !xp->hinges || !xp->edge_dir ||
        !xp->hinge_grad) {
        free(e);
        return world_soft_no_memory(c);
    }
    for (size_t i = 0; i < n;) {
        size_t j = i;
        double area = 0;
        /* the hinge's two faces: the first, and the first after it with another far corner (a surface and
         * its back layer on the same nodes, a cape's two sides, give each edge its faces twice) */
        size_t faces[2] = {0, 0}, with_area = 0;
        for (; j < n && e[j][0] == e[i][0] && e[j][1] == e[i][1]; j++)
            if (face_areas[e[j][2]] > 0) {
                area += face_areas[e[j][2]] / 3;
                if (with_area == 0 || (with_area == 1 && e[j][3] != e[faces[0]][3]))
                    faces[with_area++] = j;
            }
        uint32_t a = e[i][0], b = e[i][1];
        double d[3];
        sub3(s->rest[b], s->rest[a], d);
        double len = sqrt(plush__dot3d(d, d));
        size_t k = xp->edge_count++;
        xp->edges[k][0] = a;
        xp->edges[k][1] = b;
        xp->edge_rest[k] = (float)len;
        /* a seam (no face with area) as if it were the side of a square of its own */
        xp->edge_k[k] = len > 0 ? (float)(stretch * (area > 0 ? area / (len * len) : 1.0)) : 0;
        if (with_area == 2 && bending_stiffness > 0) {
            /* orient the hinge by face 1's winding: v0 -> v1 as face 1 runs */
            const uint32_t *t1 = s->triangles[e[faces[0]][2]];
            uint32_t f1[3] = {xp->rep[t1[0]], xp->rep[t1[1]], xp->rep[t1[2]]};
            uint32_t v0 = a, v1 = b;
            for (int q = 0; q < 3; q++)
                if (f1[q] == b && f1[(q + 1) % 3] == a)
                    v0 = b, v1 = a;
            cloth_hinge *h = &xp->hinges[xp->hinge_count];
            h->v[0] = v0, h->v[1] = v1, h->v[2] = e[faces[0]][3], h->v[3] = e[faces[1]][3];
            double theta;
            double a12 = face_areas[e[faces[0]][2]] + face_areas[e[faces[1]][2]];
            double at[4][3];
            for (int q = 0; q < 4; q++)
                for (int r = 0; r < 3; r++)
                    at[q][r] = s->rest[h->v[q]][r];
            if (h->v[2] != h->v[3] && len > 0 && dihedral((const double(*)[3])at, &theta, NULL)) {
                h->rest = (float)theta;
                h->stiffness = (float)(3.0 * bending_stiffness * len * len / a12);
                xp->hinge_count++;
            }
        }
        i = j;
    }
    free(e);
    return PLUSH_OK;
}

/* Shape memory (Bullet's pose matching, kMT): each free node pulled toward its rest place turned and moved
 * as the body is now -- the centre and the turn fitted to the nodes with their masses as weights and a pinned
 * or anchored node as a thousand times the node count of free nodes (as Bullet's setPose weighs them), so the
 * pins lead. Bullet moves a node kMT of the way each fixed step dt from where the step's speed takes it toward
 * the goal fitted there (x + dt v): per unit mass a spring of kMT / dt^2 toward that goal and a damping of
 * kMT / dt of the node's speed, and since the goal is fitted where the speeds take the nodes, a piece turning or
 * moving as a whole has its goal go with it: only its speed against the piece's own motion is damped (a
 * spinning skirt keeps spinning). Both go with a node's mass: the same field at any resolution. Without the
 * damping the cloth reference rang on after a swing where the cage settles (docs/compare.md). */
static plush_status shape_init(soft_ctx *c, struct world_cloth *xp, const plush_world_cloth *cloth)
{
    world_soft *s = c->s;
    size_t n = s->node_count;
    double k = cloth->shape_k, hz = c->wm->world->desc.physics_hz;
    if (!(isfinite(k) && k > 0 && k <= 1) || n == 0)
        return PLUSH_OK;
    plush_arena *arena = &c->wm->arena;
    xp->shape_rest = plush_arena_array(arena, n, sizeof *xp->shape_rest);
    xp->shape_w = plush_arena_array(arena, n, sizeof *xp->shape_w);
    xp->goal = plush_arena_array(arena, n, sizeof *xp->goal);
    xp->shape_at = plush_arena_array(arena, n, sizeof *xp->shape_at);
    if (!xp->shape_rest || !xp->shape_w || !xp->goal || !xp->shape_at)
        return world_soft_no_memory(c);
    double free_mass = 0, w = 0, c0[3] = {0, 0, 0};
    size_t free_count = 0;
    for (size_t i = 0; i < n; i++)
        if (xp->inv_mass[i] > 0)
            free_mass += 1.0 / xp->inv_mass[i], free_count++;
    if (!free_count)
        return PLUSH_OK;
    /* as plush__world_soft_pose_init weighs them (Bullet's setPose): a pinned node 1000 n f free nodes' worth */
    double held = 1000.0 * (double)n * free_mass;
    for (size_t i = 0; i < n; i++) {
        xp->shape_w[i] = xp->inv_mass[i] > 0 ? 1.0 / xp->inv_mass[i] : xp->rep[i] != i ? 0.0 : held;
        w += xp->shape_w[i];
        for (int j = 0; j < 3; j++)
            c0[j] += xp->shape_w[i] * s->rest[i][j];
    }
    for (size_t i = 0; i < n; i++)
        for (int j = 0; j < 3; j++)
            xp->shape_rest[i][j] = s->rest[i][j] - c0[j] / w;
    xp->shape_q[0] = xp->shape_q[1] = xp->shape_q[2] = 0, xp->shape_q[3] = 1;
    xp->shape_k = k * (hz > 0 ? hz : PLUSH_WORLD_DEFAULT_HZ) * (hz > 0 ? hz : PLUSH_WORLD_DEFAULT_HZ);
    xp->shape_drag = k * (hz > 0 ? hz : PLUSH_WORLD_DEFAULT_HZ);
    xp->shape_dt = 1.0 / (hz > 0 ? hz : PLUSH_WORLD_DEFAULT_HZ);
    return PLUSH_OK;
}

/* This substep's goals (xp->goal), fitted as Bullet fits them: to where the nodes' speeds take them in a fixed
 * step, so a piece turning or moving as a whole has its goal turn and move with it. False when a node has gone
 * non-finite (the world's guard takes the body out): no pull this substep. */
static bool shape_goals(const world_soft *s, struct world_cloth *xp, const double (*x)[3], const double (*v)[3])
{
    size_t n = s->node_count;
    double c[3] = {0, 0, 0}, w = 0, a[3][3] = {{0}}, r[3][3];
    double (*at)[3] = xp->shape_at;
    for (size_t i = 0; i < n; i++) {
        w += xp->shape_w[i];
        for (int j = 0; j < 3; j++) {
            at[i][j] = x[i][j] + xp->shape_dt * v[i][j];
            c[j] += xp->shape_w[i] * at[i][j];
        }
    }
    for (int j = 0; j < 3; j++)
        c[j] /= w;
    bool finite = isfinite(c[0]) && isfinite(c[1]) && isfinite(c[2]);
    for (size_t i = 0; i < n; i++)
        for (int col = 0; col < 3; col++)
            for (int row = 0; row < 3; row++)
                a[col][row] += xp->shape_w[i] * (at[i][row] - c[row]) * xp->shape_rest[i][col];
    for (int k = 0; k < 9; k++)
        finite = finite && isfinite(a[k / 3][k % 3]);
    if (!finite)
        return false;
    plush__fit_rotation(a, xp->shape_q);
    plush__quat_to_mat3(xp->shape_q, &r[0][0], 3); /* r[c] is column c */
    for (size_t i = 0; i < n; i++) {
        const double *o = xp->shape_rest[i];
        for (int j = 0; j < 3; j++)
            xp->goal[i][j] = c[j] + r[0][j] * o[0] + r[1][j] * o[1] + r[2][j] * o[2];
    }
    return true;
}

/* Nodes joined by an edge under a hundredth of the mean edge at rest are welded: one node moves for them all,
 * the others follow it. A real model's mesh has such near-coincident vertices (strand tips gathered to a point,
 * seams split by a hair): their edges would take a stiffness E A / L^2 hundreds of times the mean, their hinges
 * likewise, and the solve diverged on them (docs/compare.md: Luka's hair blew up standing still). Welding moves
 * a node by under a hundredth of an edge. A pinned or anchored node stands for its group and keeps its path;
 * two of them in one group each keep theirs. */
static plush_status weld_nodes(const world_soft *s, struct world_cloth *xp, const bool *held)
{
    size_t n = s->node_count;
    for (size_t i = 0; i < n; i++)
        xp->rep[i] = (uint32_t)i;
    xp->followers = 0;
    if (n == 0 || s->triangle_count == 0)
        return PLUSH_OK;
    double mean = plush__mean_edge(&s->rest[0][0], sizeof s->rest[0], &s->triangles[0][0], 3 * s->triangle_count);
    double close = CLOTH_WELD_SHARE * mean;
    uint32_t *parent = malloc(n * sizeof *parent), *lead = malloc(n * sizeof *lead);
    if (!parent || !lead) {
        free(parent), free(lead);
        return PLUSH_E_NOMEM;
    }
    plush__uf_init(parent, n);
    size_t joined = 0;
    for (size_t t = 0; t < s->triangle_count; t++)
        for (int k = 0; k < 3; k++) {
            uint32_t a = s->triangles[t][k], b = s->triangles[t][(k + 1) % 3];
            double d[3];
            sub3(s->rest[b], s->rest[a], d);
            if (a != b && plush__dot3d(d, d) < close * close)
                joined += plush__uf_union(parent, a, b);
        }
    if (joined) {
        for (size_t i = 0; i < n; i++)
            lead[i] = UINT32_MAX;
        for (size_t i = 0; i < n; i++) { /* a held member leads its group, else its root */
            uint32_t r = plush__uf_find(parent, (uint32_t)i);
            if (held[i] && lead[r] == UINT32_MAX)
                lead[r] = (uint32_t)i;
        }
        for (size_t i = 0; i < n; i++) {
            uint32_t r = plush__uf_find(parent, (uint32_t)i);
            xp->rep[i] = held[i] ? (uint32_t)i : lead[r] != UINT32_MAX ? lead[r] : r;
            xp->followers += xp->rep[i] != i;
        }
    }
    free(parent), free(lead);
    return PLUSH_OK;
}

plush_status plush__world_soft_cloth_init(soft_ctx *c, const plush_world_cloth *cloth)
{
    world_soft *s = c->s;
    plush_world_model *wm = c->wm;
    plush_arena *arena = &wm->arena;
    size_t n = s->node_count;
    struct world_cloth *xp = plush_arena_array(arena, 1, sizeof *xp);
    double *face_areas = malloc((s->triangle_count ? s->triangle_count : 1) * sizeof *face_areas);
    if (!xp || !face_areas) {
        free(face_areas);
        return world_soft_no_memory(c);
    }
    memset(xp, 0, sizeof *xp);
    xp->substeps = cloth->substeps > 0 ? cloth->substeps : CLOTH_DEFAULT_SUBSTEPS;
    xp->inv_mass = plush_arena_array(arena, n, sizeof *xp->inv_mass);
    xp->area = plush_arena_array(arena, n, sizeof *xp->area);
    xp->f = plush_arena_array(arena, n, sizeof *xp->f);
    xp->x = plush_arena_array(arena, n, sizeof *xp->x);
    xp->v = plush_arena_array(arena, n, sizeof *xp->v);
    xp->force = plush_arena_array(arena, n, sizeof *xp->force);
    xp->push = plush_arena_array(arena, n, sizeof *xp->push);
    xp->r = plush_arena_array(arena, n, sizeof *xp->r);
    xp->z = plush_arena_array(arena, n, sizeof *xp->z);
    xp->p = plush_arena_array(arena, n, sizeof *xp->p);
    xp->ap = plush_arena_array(arena, n, sizeof *xp->ap);
    xp->dv = plush_arena_array(arena, n, sizeof *xp->dv);
    xp->pre = plush_arena_array(arena, n, sizeof *xp->pre);
    xp->anchor_from = plush_arena_array(arena, s->anchor_count ? s->anchor_count : 1, sizeof *xp->anchor_from);
    xp->node_clear = plush_arena_array(arena, s->collide_count * n + 1, sizeof *xp->node_clear);
    if (!xp->inv_mass || !xp->area || !xp->f || !xp->x || !xp->v || !xp->force || !xp->push || !xp->r || !xp->z ||
        !xp->p || !xp->ap || !xp->dv || !xp->pre || !xp->anchor_from || !xp->node_clear) {
        free(face_areas);
        return world_soft_no_memory(c);
    }
    xp->rep = plush_arena_array(arena, n ? n : 1, sizeof *xp->rep);
    /* the nodes that keep a path of their own: pinned or anchored */
    bool *held = calloc(n ? n : 1, 1);
    if (held) {
        for (size_t k = 0; k < s->anchor_count; k++)
            held[s->anchors[k].node] = true;
        for (size_t i = 0; i < n; i++)
            held[i] = held[i] || s->pinned[i];
    }
    if (!xp->rep || !held || weld_nodes(s, xp, held) != PLUSH_OK) {
        free(held);
        free(face_areas);
        return world_soft_no_memory(c);
    }
    double total_area = 0;
    memset(xp->area, 0, n * sizeof *xp->area);
    memset(xp->dv, 0, n * sizeof *xp->dv);
    for (size_t t = 0; t < s->triangle_count; t++) {
        face_areas[t] = plush__world_soft_has_area((const float(*)[3])s->rest, s->triangles[t])
                            ? face_area((const float(*)[3])s->rest, s->triangles[t])
                            : 0;
        total_area += face_areas[t];
        for (int k = 0; k < 3; k++)
            xp->area[xp->rep[s->triangles[t][k]]] += (float)(face_areas[t] / 3);
    }
    double mass = isfinite(c->sb->total_mass) && c->sb->total_mass > 0 ? c->sb->total_mass : 1;
    double density = total_area > 0 ? mass / total_area : 0, mean = n ? mass / (double)n : 1;
    for (size_t i = 0; i < n; i++) {
        double m = density * xp->area[i];
        xp->inv_mass[i] = held[i] || xp->rep[i] != i ? 0.0f : (float)(1.0 / (m > 0 ? m : mean));
    }
    free(held);
    plush_status sst = shape_init(c, xp, cloth);
    if (sst != PLUSH_OK) {
        free(face_areas);
        return sst;
    }
    /* B = rho g l^3: the bending length in the world's gravity */
    double gravity = plush_world_gravity(wm->world);
    double l = cloth->bending_length > 0 && isfinite(cloth->bending_length) ? cloth->bending_length : 0;
    double bending = density * (gravity > 0 ? gravity : 98.0) * l * l * l;
    /* no modulus given: as stiff as a substep resolves, a stretch wave crossing one mean edge a substep */
    double stretch = cloth->stretch;
    if (!(isfinite(stretch) && stretch > 0)) {
        double edge = plush__mean_edge(&s->rest[0][0], sizeof s->rest[0], &s->triangles[0][0], 3 * s->triangle_count);
        double rate = (double)wm->world->desc.physics_hz * xp->substeps;
        stretch = density * edge * edge * rate * rate;
    }
    xp->compression = cloth->compression > 0 && cloth->compression <= 1 ? cloth->compression
                                                                        : CLOTH_DEFAULT_COMPRESSION;
    plush_status st = build_edges(c, xp, (float)stretch, (float)bending, face_areas);
    free(face_areas);
    if (st != PLUSH_OK)
        return st;
    /* Bullet's pressure needs a closed volume; the Bullet side has warned when there is none */
    double v = 0;
    for (size_t t = 0; t < s->triangle_count; t++) {
        double a[3], b[3], cr[3], p[3] = {s->rest[s->triangles[t][0]][0], s->rest[s->triangles[t][0]][1],
                                           s->rest[s->triangles[t][0]][2]};
        sub3(s->rest[s->triangles[t][1]], s->rest[s->triangles[t][0]], a);
        sub3(s->rest[s->triangles[t][2]], s->rest[s->triangles[t][0]], b);
        plush__cross3d(a, b, cr);
        v += plush__dot3d(p, cr) / 6;
    }
    xp->damping = c->sb->config.dp >= 0 && c->sb->config.dp <= 1 ? c->sb->config.dp : 0;
    xp->pressure = fabs(v) > 0 && isfinite(c->sb->config.pr) ? c->sb->config.pr : 0;
    for (size_t slot = 0; slot < s->collide_count; slot++) {
        const plush_pmx_rigid_body *rb = &wm->model->rigid_bodies[s->collide_bodies[slot]];
        float t[16];
        plush_world_rigid_rest_transform(rb, t);
        for (size_t i = 0; i < n; i++) {
            double local[3];
            plush__rigid_local(t, s->rest[i], local);
            xp->node_clear[slot * n + i] = (float)fmin(plush__rigid_shape_distance(rb, local, NULL), 1e30);
        }
    }
    s->cloth = xp;
    return PLUSH_OK;
}

static void to_world(const float m[16], const float p[3], float out[3])
{
    for (int i = 0; i < 3; i++)
        out[i] = m[i] * p[0] + m[4 + i] * p[1] + m[8 + i] * p[2] + m[12 + i];
}

/* kPR x node area / volume along the node's area-weighted normal (Bullet's pressure), into xp->force. */
static void pressure_forces(const world_soft *s, struct world_cloth *xp, const double (*x)[3])
{
    memset(xp->force, 0, s->node_count * sizeof *xp->force);
    if (xp->pressure == 0)
        return;
    double volume = 0;
    for (size_t t = 0; t < s->triangle_count; t++) {
        const uint32_t *f = s->triangles[t];
        double a[3], b[3], n[3];
        sub3d(x[f[1]], x[f[0]], a);
        sub3d(x[f[2]], x[f[0]], b);
        plush__cross3d(a, b, n);
        volume += plush__dot3d(x[f[0]], n) / 6;
        for (int k = 0; k < 3; k++)
            for (int j = 0; j < 3; j++)
                xp->force[f[k]][j] += (float)(n[j] / 6); /* a third of the face's area vector */
    }
    volume = fabs(volume);
    if (!(volume > 0)) {
        memset(xp->force, 0, s->node_count * sizeof *xp->force);
        return;
    }
    double scale = xp->pressure / volume;
    for (size_t i = 0; i < s->node_count; i++)
        for (int j = 0; j < 3; j++)
            xp->force[i][j] = (float)(xp->force[i][j] * scale);
}

/* Free nodes out of the bodies that follow bones, to the margin (or what they kept at rest); each push is
 * added to xp->push. */
static void push_nodes(const plush_world_model *wm, const world_soft *s, struct world_cloth *xp, double (*x)[3])
{
    size_t n = s->node_count;
    memset(xp->push, 0, n * sizeof *xp->push);
    for (size_t slot = 0; slot < s->collide_count; slot++) {
        const plush_pmx_rigid_body *rb = &wm->model->rigid_bodies[s->collide_bodies[slot]];
        const float *m = s->collide_poses[slot];
        double reach = plush__rigid_shape_reach(rb) + s->margin;
        for (size_t i = 0; i < n; i++) {
            if (xp->inv_mass[i] == 0)
                continue;
            double r[3] = {x[i][0] - m[12], x[i][1] - m[13], x[i][2] - m[14]};
            if (plush__dot3d(r, r) > reach * reach)
                continue;
            double local[3], normal[3];
            float xf[3] = {(float)x[i][0], (float)x[i][1], (float)x[i][2]};
            plush__rigid_local(m, xf, local);
            double d = plush__rigid_shape_distance(rb, local, normal);
            double keep = fmin((double)s->margin, (double)xp->node_clear[slot * n + i]);
            /* deeper than half the body: it went through between substeps; the faces' pass decides */
            if (!(d < keep) || !isfinite(d) || keep - d > 0.5 * plush__rigid_shape_reach(rb))
                continue;
            double push = keep - d;
            for (int k = 0; k < 3; k++) {
                double dk = push * (m[k] * normal[0] + m[4 + k] * normal[1] + m[8 + k] * normal[2]);
                x[i][k] += dk;
                xp->push[i][k] += (float)dk;
            }
        }
    }
}

/* ---- the implicit step (experiment): backward Euler, Gauss-Newton stiffness, conjugate gradients ---- */

/* y = K p over the free nodes: each link's and hinge's Gauss-Newton stiffness (k g g^T) */
static void stiffness_times(const struct world_cloth *xp, const double (*p)[3], double (*y)[3])
{
    for (size_t e = 0; e < xp->edge_count; e++) {
        uint32_t a = xp->edges[e][0], b = xp->edges[e][1];
        const double *d = &xp->edge_dir[3 * e];
        double k = xp->edge_now[e];
        if (!(k > 0) || (xp->inv_mass[a] == 0 && xp->inv_mass[b] == 0))
            continue;
        double t = 0;
        for (int j = 0; j < 3; j++)
            t += d[j] * (p[b][j] - p[a][j]);
        for (int j = 0; j < 3; j++) {
            y[b][j] += k * t * d[j];
            y[a][j] -= k * t * d[j];
        }
    }
    for (size_t i = 0; i < xp->hinge_count; i++) {
        const cloth_hinge *hg = &xp->hinges[i];
        double k = hg->stiffness, t = 0;
        for (int q = 0; q < 4; q++)
            for (int j = 0; j < 3; j++)
                t += xp->hinge_grad[i][q][j] * p[hg->v[q]][j];
        for (int q = 0; q < 4; q++)
            for (int j = 0; j < 3; j++)
                y[hg->v[q]][j] += k * t * xp->hinge_grad[i][q][j];
    }
}

/* Each free node's 3 x 3 block of M + scale K (its mass, and the Gauss-Newton stiffness k g g^T of the links
 * and hinges it is in), inverted: block Jacobi. Stiff links dominate the masses, and a node's block holds
 * their directions, so the solve converges where the masses alone left it short (docs/compare.md). */
static void block_preconditioner(const world_soft *s, struct world_cloth *xp, double scale, double shape)
{
    size_t n = s->node_count;
    memset(xp->pre, 0, n * sizeof *xp->pre);
    for (size_t e = 0; e < xp->edge_count; e++) {
        double k = xp->edge_now[e];
        if (!(k > 0))
            continue;
        const double *d = &xp->edge_dir[3 * e];
        for (int end = 0; end < 2; end++) {
            double *b = xp->pre[xp->edges[e][end]];
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    b[3 * i + j] += k * d[i] * d[j];
        }
    }
    for (size_t h = 0; h < xp->hinge_count; h++) {
        const cloth_hinge *hg = &xp->hinges[h];
        double k = hg->stiffness;
        for (int q = 0; q < 4; q++) {
            const double *g = xp->hinge_grad[h][q];
            double *b = xp->pre[hg->v[q]];
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    b[3 * i + j] += k * g[i] * g[j];
        }
    }
    for (size_t v = 0; v < n; v++) {
        double *b = xp->pre[v];
        if (!(xp->inv_mass[v] > 0)) {
            memset(b, 0, sizeof xp->pre[v]);
            continue;
        }
        double a[9];
        for (int i = 0; i < 9; i++)
            a[i] = scale * b[i] + (i % 4 == 0 ? (1.0 + shape) / xp->inv_mass[v] : 0);
        /* the inverse by cofactors (the block is symmetric positive definite: the mass makes it so) */
        double c0 = a[4] * a[8] - a[5] * a[7], c1 = a[5] * a[6] - a[3] * a[8], c2 = a[3] * a[7] - a[4] * a[6];
        double det = a[0] * c0 + a[1] * c1 + a[2] * c2;
        if (!(det > 0) || !isfinite(det)) {
            memset(b, 0, sizeof xp->pre[v]);
            b[0] = b[4] = b[8] = xp->inv_mass[v];
            continue;
        }
        b[0] = c0 / det, b[1] = (a[2] * a[7] - a[1] * a[8]) / det, b[2] = (a[1] * a[5] - a[2] * a[4]) / det;
        b[3] = c1 / det, b[4] = (a[0] * a[8] - a[2] * a[6]) / det, b[5] = (a[2] * a[3] - a[0] * a[5]) / det;
        b[6] = c2 / det, b[7] = (a[1] * a[6] - a[0] * a[7]) / det, b[8] = (a[0] * a[4] - a[1] * a[3]) / det;
    }
}

static void precondition(const struct world_cloth *xp, size_t v, const double r[3], double z[3])
{
    const double *b = xp->pre[v];
    for (int i = 0; i < 3; i++)
        z[i] = b[3 * i] * r[0] + b[3 * i + 1] * r[1] + b[3 * i + 2] * r[2];
}

/* One backward Euler substep of the free nodes: (M + h (h + tau) K) dv = h (f - (h + tau) K v), K the
 * Gauss-Newton stiffness at x, by conjugate gradients preconditioned by each node's block; then v += dv (less
 * the kDP share), x += h v. The pinned and anchored nodes' v is their path's speed. */
static void implicit_substep(const world_soft *s, struct world_cloth *xp, double h, double tau, const float g[3],
                             double (*x)[3], double (*v)[3], double keep)
{
    size_t n = s->node_count;
    double (*f)[3] = xp->f, (*r)[3] = xp->r, (*z)[3] = xp->z, (*p)[3] = xp->p, (*ap)[3] = xp->ap;
    double (*dv)[3] = xp->dv, scale = h * (h + tau);
    /* the shape memory's spring k M toward the goal and damping c M of the speed (c = kMT / dt), implicit
     * without the material's relaxation time: the mass term M (1 + h^2 k + h c) */
    double shape = xp->shape_k > 0 && shape_goals(s, xp, (const double(*)[3])x, (const double(*)[3])v)
                       ? h * h * xp->shape_k + h * xp->shape_drag
                       : 0;
    double mass_scale = 1.0 + shape;
    pressure_forces(s, xp, (const double(*)[3])x);
    for (size_t i = 0; i < n; i++)
        for (int j = 0; j < 3; j++) {
            double m = xp->inv_mass[i] > 0 ? 1.0 / xp->inv_mass[i] : 0;
            f[i][j] = m > 0 ? g[j] * m + xp->force[i][j] : 0;
            if (m > 0 && shape > 0) /* the pull, less its implicit part's h k m v, and the damping */
                f[i][j] += m * (xp->shape_k * (xp->goal[i][j] - x[i][j] - h * v[i][j]) - xp->shape_drag * v[i][j]);
        }
    for (size_t e = 0; e < xp->edge_count; e++) {
        uint32_t a = xp->edges[e][0], b = xp->edges[e][1];
        double d[3];
        sub3d(x[b], x[a], d);
        double len = sqrt(plush__dot3d(d, d)), k = xp->edge_k[e];
        for (int j = 0; j < 3; j++)
            xp->edge_dir[3 * e + j] = len > 0 ? d[j] / len : 0;
        /* the link's pull; shortened, its push at the compressed share of its stiffness */
        double pull = k * (len - xp->edge_rest[e]);
        xp->edge_now[e] = k;
        if (pull < 0)
            pull *= xp->compression, xp->edge_now[e] = k * xp->compression;
        for (int j = 0; j < 3; j++) {
            double fj = -pull * xp->edge_dir[3 * e + j];
            f[b][j] += fj;
            f[a][j] -= fj;
        }
    }
    for (size_t i = 0; i < xp->hinge_count; i++) {
        cloth_hinge *hg = &xp->hinges[i];
        double at[4][3], theta = hg->rest;
        for (int q = 0; q < 4; q++)
            memcpy(at[q], x[hg->v[q]], sizeof at[q]);
        if (!dihedral((const double(*)[3])at, &theta, xp->hinge_grad[i]))
            memset(xp->hinge_grad[i], 0, sizeof xp->hinge_grad[i]);
        double k = hg->stiffness, c = wrap_angle(theta - hg->rest);
        for (int q = 0; q < 4; q++)
            for (int j = 0; j < 3; j++)
                f[hg->v[q]][j] -= k * c * xp->hinge_grad[i][q][j];
    }
    /* b = h (f - (h + tau) K v); the solve starts from the substep before's change of speed (accelerations
     * change little from one substep to the next): r = b - A dv; z = P r; p = z */
    block_preconditioner(s, xp, scale, shape);
    for (size_t i = 0; i < n; i++) /* a held node's change is its path's, not the solve's */
        for (int j = 0; j < 3; j++)
            dv[i][j] = xp->inv_mass[i] > 0 && isfinite(dv[i][j]) ? dv[i][j] : 0;
    memset(ap, 0, n * sizeof *ap);
    stiffness_times(xp, (const double(*)[3])v, ap);
    memset(p, 0, n * sizeof *p);
    stiffness_times(xp, (const double(*)[3])dv, p);
    double rz = 0, b0 = 0;
    for (size_t i = 0; i < n; i++) {
        double m = xp->inv_mass[i] > 0 ? 1.0 / xp->inv_mass[i] : 0;
        for (int j = 0; j < 3; j++) {
            double bj = m > 0 ? h * (f[i][j] - (h + tau) * ap[i][j]) : 0;
            r[i][j] = m > 0 ? bj - (m * mass_scale * dv[i][j] + scale * p[i][j]) : 0;
            b0 += bj * bj;
        }
        precondition(xp, i, r[i], z[i]);
        for (int j = 0; j < 3; j++) {
            p[i][j] = z[i][j];
            rz += r[i][j] * z[i][j];
        }
    }
    bool finished = !(rz > 0);
    for (int it = 0; it < CLOTH_CG_ITERATIONS && rz > 0; it++) {
        memset(ap, 0, n * sizeof *ap);
        stiffness_times(xp, (const double(*)[3])p, ap);
        double pap = 0;
        for (size_t i = 0; i < n; i++) {
            double m = xp->inv_mass[i] > 0 ? 1.0 / xp->inv_mass[i] : 0;
            for (int j = 0; j < 3; j++) {
                ap[i][j] = m > 0 ? m * mass_scale * p[i][j] + scale * ap[i][j] : 0;
                pap += p[i][j] * ap[i][j];
            }
        }
        if (!(pap > 0)) {
            finished = true; /* nothing left to solve along p */
            break;
        }
        double alpha = rz / pap, rz1 = 0, rr = 0;
        for (size_t i = 0; i < n; i++) {
            for (int j = 0; j < 3; j++) {
                dv[i][j] += alpha * p[i][j];
                r[i][j] -= alpha * ap[i][j];
            }
            precondition(xp, i, r[i], z[i]);
            for (int j = 0; j < 3; j++) {
                rz1 += r[i][j] * z[i][j];
                rr += r[i][j] * r[i][j];
            }
        }
        if (rr < CLOTH_CG_TOLERANCE * CLOTH_CG_TOLERANCE * b0) {
            finished = true;
            break;
        }
        for (size_t i = 0; i < n; i++)
            for (int j = 0; j < 3; j++)
                p[i][j] = z[i][j] + rz1 / rz * p[i][j];
        rz = rz1;
    }
    xp->solves++;
    xp->unfinished += !finished;
    for (size_t i = 0; i < n; i++) {
        if (xp->inv_mass[i] == 0)
            continue;
        for (int j = 0; j < 3; j++) {
            v[i][j] = (v[i][j] + dv[i][j]) * keep;
            x[i][j] += h * v[i][j];
        }
    }
}

void plush__world_soft_cloth_counts(const world_soft *s, uint64_t *solves, uint64_t *unfinished)
{
    *solves = s->cloth ? s->cloth->solves : 0;
    *unfinished = s->cloth ? s->cloth->unfinished : 0;
}

void plush__world_soft_cloth_reset(world_soft *s)
{
    if (s->cloth)
        memset(s->cloth->dv, 0, s->node_count * sizeof *s->cloth->dv);
}

void plush__world_soft_cloth_step(plush_world_model *wm, world_soft *s, int k, int n, float dt)
{
    struct world_cloth *xp = s->cloth;
    const plush_bulletc_api *bc = wm->world->bc;
    const float *g = wm->world->desc.gravity;
    int subs = xp->substeps;
    double h = (double)dt / subs;
    float dp = xp->damping;
    double keep = dp > 0 && dp < 1 ? pow(1.0 - dp, 1.0 / subs) : dp >= 1 ? 0.0 : 1.0;
    double (*x)[3] = xp->x, (*v)[3] = xp->v;
    for (size_t i = 0; i < s->node_count; i++)
        for (int j = 0; j < 3; j++)
            x[i][j] = s->x[i][j], v[i][j] = s->v[i][j];
    for (size_t q = 0; q < s->anchor_count; q++)
        for (int j = 0; j < 3; j++)
            xp->anchor_from[q][j] = s->x[s->anchors[q].node][j];
    for (size_t slot = 0; slot < s->collide_count; slot++)
        bc->body_get_transform(wm->bodies[s->collide_bodies[slot]].bc, s->collide_poses[slot]);
    for (int sub = 0; sub < subs; sub++) {
        /* pins and anchors at the substep's end, at the speed that takes them there */
        double along = ((double)k + (double)(sub + 1) / subs) / n;
        for (size_t q = 0; q < s->pin_count; q++) {
            const soft_pin *p = &s->pins[q];
            for (int j = 0; j < 3; j++) {
                double to = p->from[j] + ((double)p->to[j] - p->from[j]) * along;
                v[p->node][j] = (to - x[p->node][j]) / h;
                x[p->node][j] = to;
            }
        }
        for (size_t q = 0; q < s->anchor_count; q++) {
            const soft_anchor *a = &s->anchors[q];
            float m[16], w[3];
            if (s->pinned[a->node])
                continue;
            bc->body_get_transform(wm->bodies[a->body].bc, m);
            to_world(m, a->local, w);
            for (int j = 0; j < 3 && plush__finite3(w); j++) {
                double to = xp->anchor_from[q][j] + ((double)w[j] - xp->anchor_from[q][j]) * (sub + 1) / subs;
                v[a->node][j] = (to - x[a->node][j]) / h;
                x[a->node][j] = to;
            }
        }
        implicit_substep(s, xp, h, (double)dt, g, x, v, keep);
        push_nodes(wm, s, xp, x);
        /* a push out of a body is not made speed; the speed that carried the node in is spent */
        for (size_t i = 0; i < s->node_count; i++) {
            double p[3] = {xp->push[i][0], xp->push[i][1], xp->push[i][2]}, pp = plush__dot3d(p, p), vn = 0;
            for (int j = 0; j < 3; j++)
                vn += v[i][j] * p[j];
            for (int j = 0; pp > 0 && vn < 0 && j < 3; j++)
                v[i][j] -= vn * p[j] / pp;
        }
        for (size_t i = 0; xp->followers && i < s->node_count; i++)
            if (xp->rep[i] != i)
                for (int j = 0; j < 3; j++)
                    x[i][j] = x[xp->rep[i]][j], v[i][j] = v[xp->rep[i]][j];
    }
    for (size_t i = 0; i < s->node_count; i++)
        for (int j = 0; j < 3; j++)
            s->scratch_x[i][j] = (float)x[i][j], s->scratch_v[i][j] = (float)(s->pinned[i] ? 0 : v[i][j]);
}
