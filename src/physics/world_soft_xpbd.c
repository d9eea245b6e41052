/* A TriMesh soft body stepped as cloth by plush itself (plush_world_cloth), not by Bullet: extended
 * position-based dynamics (XPBD, Macklin et al. 2016) in many small substeps of one iteration each
 * (Macklin et al. 2019, "Small steps in physics simulation"), so that the result is that of the
 * continuum the constants describe rather than of the mesh's resolution or an iteration count.
 *
 * - Mass: one areal density (the body's total mass over its area), a node a third of each face's area.
 * - Stretch: one distance constraint per edge with compliance L^2 / (E A_e), A_e a third of the areas of
 *   the faces beside it: a sheet of stretch modulus E (force per unit length per unit strain) at any
 *   resolution. E infinite: inextensible (compliance 0). A seam link (a face a, b, b) is held rigidly.
 * - Bending: one dihedral-angle constraint per interior edge, C = theta - theta_rest, with compliance
 *   (A_1 + A_2) / (3 B |e|^2), the discrete shells' hinge energy (Grinspun et al. 2003): B theta^2 |e|^2 /
 *   (2 A_e) is B kappa^2 / 2 over the hinge's area. B = rho g l^3 from the bending length l (how far a
 *   strip of the cloth reaches out straight before it bends under its weight).
 * - Gravity, damping and pressure as the world gives them to every soft body: the world's gravity; the
 *   body's kDP per fixed step (Bullet takes that share of the speed off each step) spread over the
 *   substeps, so the same share per second; kPR times a node's area over the enclosed volume along its
 *   normal (Bullet's pressure force).
 * - Pins: on the straight path to their target across the fixed step, as for Bullet; anchored nodes follow
 *   their rigid body. Contacts: each substep every free node is pushed out of the rigid bodies that
 *   follow bones (those world_soft_collide.c pushes faces out of), to the body's margin, unless it lay
 *   nearer at rest; the faces' own pushes follow each fixed step as for every soft body.
 * The Bullet soft body exists (the world's readers and guards keep their one path) but is out of the
 * simulation. */
#include "core/common.h"
#include "physics/rigid_shape.h"
#include "physics/world_soft_internal.h"
#include "plush/sys/physics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Substeps per fixed step when plush_world_cloth.substeps is 0: at 60 Hz a substep of about 1 ms, where
 * one iteration of XPBD's stiff constraints is converged (Macklin et al. 2019 use 1-2 ms). */
#define XPBD_DEFAULT_SUBSTEPS 16

typedef struct xpbd_hinge {
    uint32_t v[4];                /* the edge's ends, then the opposite corner of each face */
    float rest, compliance;
} xpbd_hinge;

struct world_xpbd {
    int substeps;
    float *inv_mass;              /* 0 for pinned and anchored nodes */
    float *area;                  /* per node: a third of its faces' areas (pressure) */
    size_t edge_count;
    uint32_t (*edges)[2];
    float *edge_rest, *edge_compliance;
    size_t hinge_count;
    xpbd_hinge *hinges;
    double (*x)[3], (*v)[3], (*prev)[3]; /* the state within a fixed step, in double: a substep moves a node
                                              by less than a float resolves at the model's size */
    float (*force)[3];
    float (*push)[3];             /* per node: this substep's push out of the bodies (not made speed) */
    double (*anchor_from)[3];     /* per anchor: its node at the start of the fixed step */
    float *node_clear;            /* per slot and node: rest clearance from that body (collide_count x nodes) */
    float pressure;               /* kPR, 0 when the body encloses no volume */
    float damping;                /* kDP: the share of the speed taken off each fixed step */
};

static double dot3(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void cross3(const double a[3], const double b[3], double out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

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
    cross3(e, g, n);
    return sqrt(dot3(n, n)) / 2;
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
    cross3(e, a, n1);             /* face 1's normal, |n1| = 2 A1 */
    cross3(b, e, n2);             /* face 2's, wound the same way round */
    double l2 = dot3(e, e), q1 = dot3(n1, n1), q2 = dot3(n2, n2);
    if (!(l2 > 0) || !(q1 > 1e-24 * l2 * l2) || !(q2 > 1e-24 * l2 * l2))
        return false;
    double l = sqrt(l2), c[3];
    cross3(n1, n2, c);
    *theta = atan2(dot3(c, e) / l, dot3(n1, n2));
    if (!grad)
        return true;
    double s1 = dot3(a, e) / l2, s2 = dot3(b, e) / l2;
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
static plush_status build_edges(soft_ctx *c, struct world_xpbd *xp, float stretch, float bending_stiffness,
                                const double *face_areas)
{
    world_soft *s = c->s;
    size_t rows = 3 * s->triangle_count;
    uint32_t(*e)[4] = malloc((rows ? rows : 1) * sizeof *e);
    if (!e)
        return world_soft_no_memory(c);
    size_t n = 0;
    for (size_t t = 0; t < s->triangle_count; t++) {
        const uint32_t *f = s->triangles[t];
        for (int k = 0; k < 3; k++) {
            uint32_t a = f[k], b = f[(k + 1) % 3];
            if (a == b)
                continue;
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
    xp->edge_compliance = plush_arena_array(arena, n ? n : 1, sizeof *xp->edge_compliance);
    xp->hinges = plush_arena_array(arena, n ? n : 1, sizeof *xp->hinges);
    if (!xp->edges || !xp->edge_rest || !xp->edge_compliance || !xp->hinges) {
        free(e);
        return world_soft_no_memory(c);
    }
    for (size_t i = 0; i < n;) {
        size_t j = i;
        double area = 0;
        size_t faces[2], with_area = 0;
        for (; j < n && e[j][0] == e[i][0] && e[j][1] == e[i][1]; j++)
            if (face_areas[e[j][2]] > 0) {
                area += face_areas[e[j][2]] / 3;
                if (with_area < 2)
                    faces[with_area] = j;
                with_area++;
            }
        uint32_t a = e[i][0], b = e[i][1];
        double d[3];
        sub3(s->rest[b], s->rest[a], d);
        double len = sqrt(dot3(d, d));
        size_t k = xp->edge_count++;
        xp->edges[k][0] = a;
        xp->edges[k][1] = b;
        xp->edge_rest[k] = (float)len;
        /* a seam (no face with area) and an inextensible sheet are held rigidly */
        xp->edge_compliance[k] = area > 0 && isfinite(stretch) && stretch > 0 ? (float)(len * len / (stretch * area)) : 0;
        if (with_area == 2 && bending_stiffness > 0) {
            /* orient the hinge by face 1's winding: v0 -> v1 as face 1 runs */
            const uint32_t *f1 = s->triangles[e[faces[0]][2]];
            uint32_t v0 = a, v1 = b;
            for (int q = 0; q < 3; q++)
                if (f1[q] == b && f1[(q + 1) % 3] == a)
                    v0 = b, v1 = a;
            xpbd_hinge *h = &xp->hinges[xp->hinge_count];
            h->v[0] = v0, h->v[1] = v1, h->v[2] = e[faces[0]][3], h->v[3] = e[faces[1]][3];
            double theta;
            double a12 = face_areas[e[faces[0]][2]] + face_areas[e[faces[1]][2]];
            double at[4][3];
            for (int q = 0; q < 4; q++)
                for (int r = 0; r < 3; r++)
                    at[q][r] = s->rest[h->v[q]][r];
            if (h->v[2] != h->v[3] && len > 0 && dihedral((const double(*)[3])at, &theta, NULL)) {
                h->rest = (float)theta;
                h->compliance = (float)(a12 / (3.0 * bending_stiffness * len * len));
                xp->hinge_count++;
            }
        }
        i = j;
    }
    free(e);
    return PLUSH_OK;
}

plush_status plush__world_soft_xpbd_init(soft_ctx *c, const plush_world_cloth *cloth)
{
    world_soft *s = c->s;
    plush_world_model *wm = c->wm;
    plush_arena *arena = &wm->arena;
    size_t n = s->node_count;
    struct world_xpbd *xp = plush_arena_array(arena, 1, sizeof *xp);
    double *face_areas = malloc((s->triangle_count ? s->triangle_count : 1) * sizeof *face_areas);
    if (!xp || !face_areas) {
        free(face_areas);
        return world_soft_no_memory(c);
    }
    memset(xp, 0, sizeof *xp);
    xp->substeps = cloth->substeps > 0 ? cloth->substeps : XPBD_DEFAULT_SUBSTEPS;
    xp->inv_mass = plush_arena_array(arena, n, sizeof *xp->inv_mass);
    xp->area = plush_arena_array(arena, n, sizeof *xp->area);
    xp->prev = plush_arena_array(arena, n, sizeof *xp->prev);
    xp->x = plush_arena_array(arena, n, sizeof *xp->x);
    xp->v = plush_arena_array(arena, n, sizeof *xp->v);
    xp->force = plush_arena_array(arena, n, sizeof *xp->force);
    xp->push = plush_arena_array(arena, n, sizeof *xp->push);
    xp->anchor_from = plush_arena_array(arena, s->anchor_count ? s->anchor_count : 1, sizeof *xp->anchor_from);
    xp->node_clear = plush_arena_array(arena, s->collide_count * n + 1, sizeof *xp->node_clear);
    if (!xp->inv_mass || !xp->area || !xp->prev || !xp->x || !xp->v || !xp->force || !xp->push || !xp->anchor_from || !xp->node_clear) {
        free(face_areas);
        return world_soft_no_memory(c);
    }
    double total_area = 0;
    memset(xp->area, 0, n * sizeof *xp->area);
    for (size_t t = 0; t < s->triangle_count; t++) {
        face_areas[t] = plush__world_soft_has_area((const float(*)[3])s->rest, s->triangles[t])
                            ? face_area((const float(*)[3])s->rest, s->triangles[t])
                            : 0;
        total_area += face_areas[t];
        for (int k = 0; k < 3; k++)
            xp->area[s->triangles[t][k]] += (float)(face_areas[t] / 3);
    }
    double mass = isfinite(c->sb->total_mass) && c->sb->total_mass > 0 ? c->sb->total_mass : 1;
    double density = total_area > 0 ? mass / total_area : 0, mean = n ? mass / (double)n : 1;
    bool *held = calloc(n ? n : 1, 1);
    if (!held) {
        free(face_areas);
        return world_soft_no_memory(c);
    }
    for (size_t k = 0; k < s->anchor_count; k++)
        held[s->anchors[k].node] = true;
    for (size_t i = 0; i < n; i++) {
        double m = density * xp->area[i];
        xp->inv_mass[i] = s->pinned[i] || held[i] ? 0.0f : (float)(1.0 / (m > 0 ? m : mean));
    }
    free(held);
    /* B = rho g l^3: the bending length in the world's gravity */
    const float *g = wm->world->desc.gravity;
    double gravity = sqrt((double)g[0] * g[0] + (double)g[1] * g[1] + (double)g[2] * g[2]);
    double l = cloth->bending_length > 0 && isfinite(cloth->bending_length) ? cloth->bending_length : 0;
    double bending = density * (gravity > 0 ? gravity : 98.0) * l * l * l;
    plush_status st = build_edges(c, xp, cloth->stretch, (float)bending, face_areas);
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
        cross3(a, b, cr);
        v += dot3(p, cr) / 6;
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
    s->xpbd = xp;
    return PLUSH_OK;
}

static void to_world(const float m[16], const float p[3], float out[3])
{
    for (int i = 0; i < 3; i++)
        out[i] = m[i] * p[0] + m[4 + i] * p[1] + m[8 + i] * p[2] + m[12 + i];
}

/* kPR x node area / volume along the node's area-weighted normal (Bullet's pressure), into xp->force. */
static void pressure_forces(const world_soft *s, struct world_xpbd *xp, const double (*x)[3])
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
        cross3(a, b, n);
        volume += dot3(x[f[0]], n) / 6;
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

/* gamma: the material's relaxation time over the substep (XPBD's constraint damping, Macklin et al. 2016:
 * gamma = alpha beta / h with beta = tau / alpha): a link or a hinge loses the speed at which its error grows
 * as a viscous sheet with stress E (strain + tau d strain / dt) would. */
static void solve_edges(const struct world_xpbd *xp, double (*x)[3], double h2, double gamma)
{
    for (size_t e = 0; e < xp->edge_count; e++) {
        uint32_t a = xp->edges[e][0], b = xp->edges[e][1];
        double wa = xp->inv_mass[a], wb = xp->inv_mass[b];
        double d[3];
        sub3d(x[b], x[a], d);
        double len = sqrt(dot3(d, d)), alpha = xp->edge_compliance[e] / h2;
        if (wa + wb == 0 || !(len > 0))
            continue;
        double g[3] = {d[0] / len, d[1] / len, d[2] / len}, rate = 0;
        for (int k = 0; k < 3; k++)
            rate += g[k] * ((x[b][k] - xp->prev[b][k]) - (x[a][k] - xp->prev[a][k]));
        double damp = alpha > 0 ? gamma : 0;
        double lambda = -((len - xp->edge_rest[e]) + damp * rate) / ((1 + damp) * (wa + wb) + alpha);
        for (int k = 0; k < 3; k++) {
            x[a][k] -= wa * lambda * g[k];
            x[b][k] += wb * lambda * g[k];
        }
    }
}

static void solve_hinges(const struct world_xpbd *xp, double (*x)[3], double h2, double gamma)
{
    for (size_t i = 0; i < xp->hinge_count; i++) {
        const xpbd_hinge *hg = &xp->hinges[i];
        double theta, grad[4][3], w[4], denom = 0, at[4][3];
        for (int k = 0; k < 4; k++)
            memcpy(at[k], x[hg->v[k]], sizeof at[k]);
        if (!dihedral((const double(*)[3])at, &theta, grad))
            continue;
        for (int k = 0; k < 4; k++) {
            w[k] = xp->inv_mass[hg->v[k]];
            denom += w[k] * dot3(grad[k], grad[k]);
        }
        double alpha = hg->compliance / h2, rate = 0;
        if (!(denom + alpha > 0))
            continue;
        for (int k = 0; k < 4; k++)
            for (int j = 0; j < 3; j++)
                rate += grad[k][j] * (x[hg->v[k]][j] - xp->prev[hg->v[k]][j]);
        double lambda = -(wrap_angle(theta - hg->rest) + gamma * rate) / ((1 + gamma) * denom + alpha);
        for (int k = 0; k < 4; k++)
            for (int j = 0; j < 3; j++)
                x[hg->v[k]][j] += w[k] * lambda * grad[k][j];
    }
}

/* Free nodes out of the bodies that follow bones, to the margin (or what they kept at rest); each push is
 * added to xp->push. */
static void push_nodes(const plush_world_model *wm, const world_soft *s, struct world_xpbd *xp, double (*x)[3])
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
            if (dot3(r, r) > reach * reach)
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

void plush__world_soft_xpbd_step(plush_world_model *wm, world_soft *s, int k, int n, float dt)
{
    struct world_xpbd *xp = s->xpbd;
    const plush_bulletc_api *bc = wm->world->bc;
    const float *g = wm->world->desc.gravity;
    int subs = xp->substeps;
    double h = (double)dt / subs, h2 = h * h;
    float dp = xp->damping;
    double keep = dp > 0 && dp < 1 ? pow(1.0 - dp, 1.0 / subs) : dp >= 1 ? 0.0 : 1.0;
    /* the material's relaxation time: one fixed step, within which Bullet's solver takes every vibration of
     * the proxy's links out */
    double gamma = (double)dt / h;
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
        pressure_forces(s, xp, (const double(*)[3])x);
        for (size_t i = 0; i < s->node_count; i++) {
            memcpy(xp->prev[i], x[i], sizeof xp->prev[i]);
            if (xp->inv_mass[i] == 0)
                continue;
            for (int j = 0; j < 3; j++) {
                v[i][j] = (v[i][j] + h * (g[j] + (double)xp->force[i][j] * xp->inv_mass[i])) * keep;
                x[i][j] += h * v[i][j];
            }
        }
        /* pins on their path across the fixed step, anchors toward their body */
        double along = ((double)k + (double)(sub + 1) / subs) / n;
        for (size_t q = 0; q < s->pin_count; q++) {
            const soft_pin *p = &s->pins[q];
            for (int j = 0; j < 3; j++)
                x[p->node][j] = p->from[j] + ((double)p->to[j] - p->from[j]) * along;
        }
        for (size_t q = 0; q < s->anchor_count; q++) {
            const soft_anchor *a = &s->anchors[q];
            if (s->pinned[a->node])
                continue;
            float m[16], w[3];
            double t = (double)(sub + 1) / subs;
            bc->body_get_transform(wm->bodies[a->body].bc, m);
            to_world(m, a->local, w);
            for (int j = 0; j < 3 && plush__finite3(w); j++)
                x[a->node][j] = xp->anchor_from[q][j] + ((double)w[j] - xp->anchor_from[q][j]) * t;
        }
        solve_edges(xp, x, h2, gamma);
        solve_hinges(xp, x, h2, gamma);
        push_nodes(wm, s, xp, x);
        /* the velocity the constraints give; a push out of a body is not made speed, and the speed that
         * carried the node into it is spent (a position-based contact without bounce) */
        for (size_t i = 0; i < s->node_count; i++) {
            double p[3] = {xp->push[i][0], xp->push[i][1], xp->push[i][2]}, pp = dot3(p, p), vn = 0;
            for (int j = 0; j < 3; j++) {
                v[i][j] = (x[i][j] - xp->prev[i][j] - p[j]) / h;
                vn += v[i][j] * p[j];
            }
            for (int j = 0; pp > 0 && vn < 0 && j < 3; j++)
                v[i][j] -= vn * p[j] / pp;
        }
    }
    for (size_t i = 0; i < s->node_count; i++)
        for (int j = 0; j < 3; j++)
            s->scratch_x[i][j] = (float)x[i][j], s->scratch_v[i][j] = (float)v[i][j];
}
