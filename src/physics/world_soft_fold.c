/* A TriMesh soft body's folds held open. A cage is coarse: where two neighbouring faces turn back onto each
 * other the detailed surface bound across their shared edge cannot follow (it creases, or its vertices are
 * carried to the other side of a face whose normal flipped), so no cage fold is a fold a fabric makes at
 * that scale. Bullet's bending links resist folds, but they resist every bend alike -- a piece's swing where
 * it is held as much as its folding -- and a contact push or a fast turn still folds a face past them. So
 * every edge two faces share carries a guard: after the substep's solve and plush's contacts (and again after the
 * ties between bodies, world_soft_tie.c), the faces' opening angle at the edge (180 degrees flat) is kept within
 * SOFT_FOLD_LIMIT_DEG of its rest angle either way (a ridge the cage has at rest, two faces nearly back to back,
 * no more flattened out than a flat pair folded), moving the four nodes along the angle's gradient by their
 * inverse masses (a pinned node stays where its bone puts it; a one-sided position-based constraint, as in
 * Mueller et al. 2007's bending constraint), and the speed that was taking the angle past it is spent. Within
 * the limits it pulls nothing back: the piece bends freely there. Like the strain limit it goes with plush's
 * contacts (a soft body that meets a rigid body that follows a bone: every cage on a character).
 *
 * The gradient: with r_q, r_f the unit directions from the edge to the facing nodes q and f (perpendicular
 * to it) and h_q, h_f their heights over it, the angle opens at 1/h_q per unit q moves along its face's
 * normal away from f, likewise f; an edge node takes the facing node's reaction by where that node projects
 * onto the edge. A sliver (a facing node nearly on the edge) turns fast for a small move and is held by one. */
#include "physics/world_soft_internal.h"
#include "core/geom.h"
#include "plush/sys/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Faces whose normals turn more than a right angle from their rest turn are folding back (or a ridge
 * flattening out); the surface bar counts a cage crease past 120 degrees from rest as a fold, this keeps a
 * margin under it. */
#define SOFT_FOLD_LIMIT_DEG 90.0
/* Passes over the guards a round (neighbouring guards share nodes); the rounds of passes and the strain limit
 * are the caller's (PLUSH__SOFT_FOLD_ROUNDS a substep). */
enum { FOLD_PASSES = 4 };
/* The most a guard moves a node in one pass, as a share of its edge's length. */
#define SOFT_FOLD_STEP_SHARE 0.5

/* The opening angle at edge p[0]-p[1] between the faces through p[2] and p[3], and its gradient g[4][3] with
 * respect to the four; false when the edge or a face has no length or height. */
static bool opening(const float (*x)[3], const uint32_t p[4], double *angle, double g[4][3])
{
    const float *a = x[p[0]], *b = x[p[1]];
    double e[3], el = 0, r[2][3], h[2], t[2];
    for (int k = 0; k < 3; k++)
        e[k] = (double)b[k] - a[k], el += e[k] * e[k];
    el = sqrt(el);
    if (!(el > 0))
        return false;
    for (int k = 0; k < 3; k++)
        e[k] /= el;
    for (int i = 0; i < 2; i++) {
        const float *q = x[p[2 + i]];
        double d[3];
        for (int k = 0; k < 3; k++)
            d[k] = (double)q[k] - a[k];
        t[i] = plush__dot3d(d, e);
        for (int k = 0; k < 3; k++)
            r[i][k] = d[k] - t[i] * e[k];
        h[i] = sqrt(plush__dot3d(r[i], r[i]));
        if (!(h[i] > 0))
            return false;
        for (int k = 0; k < 3; k++)
            r[i][k] /= h[i];
        t[i] /= el;
    }
    double c = plush__dot3d(r[0], r[1]);
    *angle = acos(c < -1 ? -1 : c > 1 ? 1 : c);
    /* the facing nodes' way to open the angle: each face's normal (e x r), turned away from the other facing
     * node. The two turn opposite ways (e x r_f . r_q = -(e x r_q . r_f)); shut flat or lying flat, neither
     * way is away, and either opens (or closes) it: q's normal is taken as it is. */
    double n[2][3];
    plush__cross3d(e, r[0], n[0]);
    plush__cross3d(e, r[1], n[1]);
    double away = -plush__dot3d(n[0], r[1]);
    double sq = away < 0 ? -1.0 : 1.0;
    for (int k = 0; k < 3; k++) {
        g[2][k] = sq * n[0][k] / h[0];
        g[3][k] = -sq * n[1][k] / h[1];
    }
    for (int k = 0; k < 3; k++) {
        g[0][k] = -(1 - t[0]) * g[2][k] - (1 - t[1]) * g[3][k];
        g[1][k] = -t[0] * g[2][k] - t[1] * g[3][k];
    }
    return true;
}

plush_status plush__world_soft_fold_init(soft_ctx *c)
{
    world_soft *s = c->s;
    s->fold_count = 0;
    if (s->rope || s->triangle_count == 0)
        return PLUSH_OK;
    size_t n = 3 * s->triangle_count;
    plush__edge *h = malloc(n * sizeof *h);
    if (!h)
        return world_soft_no_memory(c);
    for (size_t t = 0; t < s->triangle_count; t++)
        for (int k = 0; k < 3; k++) {
            uint32_t p = s->triangles[t][k], r = s->triangles[t][(k + 1) % 3];
            h[3 * t + k] = (plush__edge){p < r ? p : r, p < r ? r : p, s->triangles[t][(k + 2) % 3], 0};
        }
    qsort(h, n, sizeof *h, plush__edge_order);
    size_t count = 0;
    for (size_t i = 0; i + 1 < n; i++)
        count += h[i].lo == h[i + 1].lo && h[i].hi == h[i + 1].hi;
    s->folds = count ? plush_arena_array(&c->wm->arena, count, sizeof *s->folds) : NULL;
    s->fold_moved = count ? plush_arena_array(&c->wm->arena, s->node_count, 1) : NULL;
    if (count && (!s->folds || !s->fold_moved)) {
        free(h);
        return world_soft_no_memory(c);
    }
    const double pi = 3.14159265358979323846, limit = SOFT_FOLD_LIMIT_DEG * pi / 180.0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && h[j].lo == h[i].lo && h[j].hi == h[i].hi)
            j++;
        /* an edge of exactly two faces, facing two different nodes, one of the four free */
        soft_fold g = {{h[i].lo, h[i].hi, h[i].owner, j == i + 2 ? h[i + 1].owner : h[i].owner}, 0, 0};
        double angle, grad[4][3];
        bool free_node = false;
        for (int k = 0; k < 4; k++)
            free_node |= !s->pinned[g.node[k]];
        if (j == i + 2 && g.node[2] != g.node[3] && free_node &&
            opening((const float(*)[3])s->rest, g.node, &angle, grad)) {
            g.least = (float)fmax(angle - limit, 0);
            g.most = (float)fmin(angle + limit, pi);
            s->folds[s->fold_count++] = g;
        }
        i = j;
    }
    free(h);
    return PLUSH_OK;
}

/* One pass over the guards: each past its limit moved back to it along its gradient; whether any moved. */
static bool guard_pass(world_soft *s)
{
    bool moved = false;
    for (size_t i = 0; i < s->fold_count; i++) {
        const soft_fold *f = &s->folds[i];
        double angle, g[4][3], w[4], sum = 0, rate = 0;
        if (!opening((const float(*)[3])s->x, f->node, &angle, g) || !(angle < f->least || angle > f->most))
            continue;
        for (int j = 0; j < 4; j++) {
            w[j] = !s->pinned[f->node[j]];
            sum += w[j] * plush__dot3d(g[j], g[j]);
        }
        if (!(sum > 0))
            continue;
        double step = ((angle < f->least ? f->least : f->most) - angle) / sum;
        /* The gradient holds for moves small beside the faces: where the free nodes' gradients nearly cancel (only
         * the edge's nodes free, their facing nodes' pulls opposed) the step solved for would carry a node far off
         * (a 180-degree turn of the body in one frame sent sample_finish's hair's nodes 1e10 units away). No node
         * moves more than a SOFT_FOLD_STEP_SHARE of the edge a pass; the later passes and rounds go on from there. */
        const float *a = s->x[f->node[0]], *b = s->x[f->node[1]];
        double most = 0, edge[3] = {(double)b[0] - a[0], (double)b[1] - a[1], (double)b[2] - a[2]};
        for (int j = 0; j < 4; j++)
            most = fmax(most, w[j] * fabs(step) * sqrt(plush__dot3d(g[j], g[j])));
        double cap = SOFT_FOLD_STEP_SHARE * sqrt(plush__dot3d(edge, edge));
        if (most > cap)
            step *= cap / most;
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 3; k++) {
                s->x[f->node[j]][k] += (float)(w[j] * step * g[j][k]);
                rate += (double)s->v[f->node[j]][k] * w[j] * g[j][k];
            }
        /* the speed taking the angle past its limit is spent (rate: how fast the angle opens) */
        for (int j = 0; (step > 0 ? rate < 0 : rate > 0) && j < 4; j++)
            for (int k = 0; k < 3; k++)
                s->v[f->node[j]][k] -= (float)(w[j] * rate / sum * g[j][k]);
        for (int j = 0; j < 4; j++)
            s->fold_moved[f->node[j]] |= w[j] > 0;
        moved = true;
    }
    return moved;
}

void plush__world_soft_hold_folds(plush_world_model *wm, world_soft *s, int rounds)
{
    /* it goes with plush's contacts, as the strain limit does: a soft body that meets no body that follows a
     * bone (a toy on its own, make bench's sphere) is left as Bullet steps it */
    if (s->fold_count == 0 || s->collide_count == 0)
        return;
    memset(s->fold_moved, 0, s->node_count);
    memset(s->touched, 0, s->node_count);
    bool any = false;
    /* the guards' passes, then the links they stretched back within the strain limit, which may turn a face
     * again: a few rounds of both */
    for (int round = 0; round < rounds; round++) {
        bool moved = false;
        for (int pass = 0; pass < FOLD_PASSES && guard_pass(s); pass++)
            moved = true;
        if (!moved)
            break;
        any = true;
        plush__world_soft_limit_strain(s);
    }
    if (!any)
        return;
    const plush_bulletc_api *bc = wm->world->bc;
    for (size_t i = 0; i < s->node_count; i++)
        if (s->fold_moved[i] || s->touched[i])
            bc->soft_set_node(s->bc, (uint32_t)i, s->x[i], s->v[i]);
}
