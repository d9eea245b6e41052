/* The rest shape of a nearly flat soft body (plush__world_soft_match_shape). Bullet's pose matching (kMT)
 * inverts the moment of the nodes' rest offsets, which a piece lying close to a plane or a line leaves
 * nearly singular (world_soft_bullet.c turns it off there). Such a piece -- a flap of hair at the back of the
 * head, a strand -- then kept its shape by its links alone and folded over onto itself at a fast turn, and
 * the detailed surface bound to it folded too. Here its nodes are pulled toward the rest shape turned by
 * the best rotation of their covariance against rest (plush__fit_rotation, which needs no inverse: a flat
 * piece's rotation is still fixed by its plane, and a line-like piece's turn about its line moves no node),
 * each free node by kMT of the way every substep, as Bullet's pose matching does. */
#include "physics/world_soft_internal.h"
#include "core/geom.h"

#include <math.h>
#include <string.h>

/* The weight of a node in the shape's centre and rotation: 1, or with_pins (as Bullet's setPose weighs
 * them) a pinned node 1000 times the node count times the free node count. */
static double shape_weight(const world_soft *s, size_t i)
{
    return s->shape_with_pins && s->pinned[i] ? s->shape_pin_weight : 1.0;
}

bool plush__world_soft_shape_init(plush_world_model *wm, world_soft *s, float k, bool with_pins)
{
    s->shape_rest = plush_arena_array(&wm->arena, s->node_count ? s->node_count : 1, sizeof *s->shape_rest);
    if (!s->shape_rest)
        return false;
    size_t free_count = 0;
    for (size_t i = 0; i < s->node_count; i++)
        free_count += !s->pinned[i];
    s->shape_with_pins = with_pins && free_count < s->node_count;
    s->shape_pin_weight = 1000.0 * (double)s->node_count * (double)(free_count ? free_count : 1);
    double c[3] = {0, 0, 0}, w = 0;
    for (size_t i = 0; i < s->node_count; i++) {
        double wi = shape_weight(s, i);
        w += wi;
        for (int d = 0; d < 3; d++)
            c[d] += wi * s->rest[i][d];
    }
    for (int d = 0; w > 0 && d < 3; d++)
        c[d] /= w;
    for (size_t i = 0; i < s->node_count; i++)
        for (int d = 0; d < 3; d++)
            s->shape_rest[i][d] = (float)(s->rest[i][d] - c[d]);
    s->shape_q[0] = s->shape_q[1] = s->shape_q[2] = 0, s->shape_q[3] = 1;
    s->shape_k = k;
    return true;
}

void plush__world_soft_match_shape(plush_world_model *wm, world_soft *s)
{
    if (!(s->shape_k > 0) || s->node_count == 0)
        return;
    double c[3] = {0, 0, 0}, a[3][3] = {{0}}, r[3][3], w = 0;
    for (size_t i = 0; i < s->node_count; i++) {
        double wi = shape_weight(s, i);
        w += wi;
        for (int d = 0; d < 3; d++)
            c[d] += wi * s->x[i][d];
    }
    for (int d = 0; d < 3; d++)
        c[d] /= w;
    for (size_t i = 0; i < s->node_count; i++) {
        double wi = shape_weight(s, i), y[3] = {s->x[i][0] - c[0], s->x[i][1] - c[1], s->x[i][2] - c[2]};
        for (int col = 0; col < 3; col++)
            for (int row = 0; row < 3; row++)
                a[col][row] += wi * y[row] * s->shape_rest[i][col];
    }
    plush__fit_rotation(a, s->shape_q);
    plush__quat_to_mat3(s->shape_q, &r[0][0], 3); /* r[c] is column c */
    for (size_t i = 0; i < s->node_count; i++) {
        if (s->pinned[i])
            continue;
        const float *o = s->shape_rest[i];
        for (int d = 0; d < 3; d++) {
            double goal = c[d] + r[0][d] * o[0] + r[1][d] * o[1] + r[2][d] * o[2];
            s->x[i][d] += (float)(s->shape_k * (goal - s->x[i][d]));
        }
    }
    wm->world->bc->soft_set_all_nodes(s->bc, (const float(*)[3])s->x, (const float(*)[3])s->v);
}

/* A body whose pins leave Bullet's pose singular (world_soft_bullet.c, pins_flat) gets Bullet's own pose
 * matching done here, before the step, with a rotation fit that needs no inverse. Inside its step Bullet
 * would move each free node by its speed (gravity added) and then pull it kMT of the way toward the rest
 * shape turned and moved with the pins (updatePose, then the match, in predictMotion); it takes every
 * node's new speed from where the step leaves it. Adding kMT times that pull, over dt, to each free node's
 * speed before the step lands it where Bullet's match would have. */
void plush__world_soft_pose_before_step(plush_world_model *wm, world_soft *s, float dt)
{
    if (!(s->pose_k > 0) || !(dt > 0) || s->node_count == 0)
        return;
    const float *g = wm->world->desc.gravity;
    double c[3] = {0, 0, 0}, a[3][3] = {{0}}, r[3][3], w = 0;
    for (size_t i = 0; i < s->node_count; i++) {
        double wi = shape_weight(s, i);
        w += wi;
        for (int d = 0; d < 3; d++) {
            double v = (double)s->v[i][d] + (s->pinned[i] ? 0.0 : (double)g[d] * dt);
            s->scratch_x[i][d] = (float)((double)s->x[i][d] + v * dt); /* where the step takes it */
            c[d] += wi * s->scratch_x[i][d];
        }
    }
    for (int d = 0; d < 3; d++)
        c[d] /= w;
    for (size_t i = 0; i < s->node_count; i++) {
        double wi = shape_weight(s, i);
        for (int col = 0; col < 3; col++)
            for (int row = 0; row < 3; row++)
                a[col][row] += wi * ((double)s->scratch_x[i][row] - c[row]) * s->shape_rest[i][col];
    }
    plush__fit_rotation(a, s->shape_q);
    plush__quat_to_mat3(s->shape_q, &r[0][0], 3);
    for (size_t i = 0; i < s->node_count; i++) {
        if (s->pinned[i])
            continue;
        const float *o = s->shape_rest[i];
        for (int d = 0; d < 3; d++) {
            double goal = c[d] + r[0][d] * o[0] + r[1][d] * o[1] + r[2][d] * o[2];
            s->v[i][d] += (float)(s->pose_k * (goal - s->scratch_x[i][d]) / dt);
        }
        wm->world->bc->soft_set_node(s->bc, (uint32_t)i, NULL, s->v[i]);
    }
}
