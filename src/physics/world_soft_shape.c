/* Bullet's pose matching (kMT), done by plush where Bullet's own would go non-finite.
 *
 * Inside its step Bullet moves each free node by its speed (gravity added), then pulls it kMT of the way
 * toward the rest shape turned and moved as the body is now (updatePose, then the match, in
 * predictMotion), and takes every node's new speed from where the step leaves it. The turn is the polar
 * decomposition of the moment of the nodes' offsets against their rest offsets, weighted as setPose
 * weighs them: a pinned node a thousand times the node count over a free one, so the pins lead the centre
 * and the turn. Bullet inverts that moment on the way, and a body whose nodes lie close to a plane or a
 * line -- or whose pins do (three pins, a row of them), whatever its other nodes -- leaves it singular:
 * the decomposition went non-finite at a fast turn, every node with it, and Bullet's contact test indexed
 * its distance cache with them and killed the process (world_soft_bullet.c decides which bodies).
 *
 * For those, plush does the same match before the step with a rotation fit that needs no inverse
 * (plush__fit_rotation: a flat piece's turn is still fixed by its plane, and a line-like piece's turn about
 * its line moves no node): adding kMT times the pull, over the step, to each free node's speed lands it
 * where Bullet's match would have (with no velocity pass, as the plush preset runs: a velocity pass rebuilds
 * the positions from the speeds, which undoes Bullet's own match but keeps this one). An earlier form pulled the nodes after the step toward the rest shape
 * turned by all nodes alike; turning with the body, not with its pins, it let a bob's locks swing out and
 * up around the head at a fast turn. */
#include "physics/world_soft_internal.h"
#include "core/geom.h"
#include "plush/sys/physics.h"

#include <math.h>
#include <string.h>

/* A node's weight in the centre and the turn, as Bullet's setPose gives it (relative to a free node's). */
static double pose_weight(const world_soft *s, size_t i)
{
    return s->pinned[i] ? s->pose_pin_weight : 1.0;
}

bool plush__world_soft_pose_init(plush_world_model *wm, world_soft *s, float k)
{
    s->pose_rest = plush_arena_array(&wm->arena, s->node_count ? s->node_count : 1, sizeof *s->pose_rest);
    if (!s->pose_rest)
        return false;
    size_t free_count = 0;
    for (size_t i = 0; i < s->node_count; i++)
        free_count += !s->pinned[i];
    /* setPose: a free node weighs its mass over the total, a pinned one the total times the node count
     * times 1000 over the total: with equal free masses, 1000 n f times a free node */
    s->pose_pin_weight = 1000.0 * (double)s->node_count * (double)(free_count ? free_count : 1);
    double c[3] = {0, 0, 0}, w = 0;
    for (size_t i = 0; i < s->node_count; i++) {
        double wi = pose_weight(s, i);
        w += wi;
        for (int d = 0; d < 3; d++)
            c[d] += wi * s->rest[i][d];
    }
    for (int d = 0; w > 0 && d < 3; d++)
        c[d] /= w;
    for (size_t i = 0; i < s->node_count; i++)
        for (int d = 0; d < 3; d++)
            s->pose_rest[i][d] = (float)(s->rest[i][d] - c[d]);
    s->pose_q[0] = s->pose_q[1] = s->pose_q[2] = 0, s->pose_q[3] = 1;
    s->pose_k = k;
    return true;
}

/* The free length of a piece: the farthest a free node lies from a pinned one along its faces' edges at rest; 0
 * when none is pinned or out of memory. */
static double free_length(const world_soft *s)
{
    double most = 0;
    return plush__farthest_along_faces((const float(*)[3])s->rest, s->node_count, (const uint32_t(*)[3])s->triangles,
                                       s->triangle_count, NULL, 1, s->pinned, &most)
               ? most
               : 0;
}

/* The shape memory a piece that follows the author's physics needs at least: its goal is where that physics holds
 * the part, gravity and the author's joints included, so it is to keep that shape against its own weight. Held by
 * the matching alone a node sags g dt^2 (1 - k) / k below its goal (a step's fall, pulled back k of the way each
 * step); within the settle bar of the piece's free length L that is k = g dt^2 / (bar L + g dt^2): 0.052 for a
 * lock 10 units long (the preset's 0.05), 0.21 for a ribbon's loop of 2 standing over its knot, which at the
 * preset sagged a quarter of its size and folded over. A piece whose kMT is stronger keeps it (Luka's hair, 12
 * long: 0.0425 let it follow her author's spin at 0.50 of its swing where 0.67). 0 when the piece has no free
 * length. */
static double follow_shape_memory(const plush_world_model *wm, const world_soft *s)
{
    double hz = wm->world->desc.physics_hz > 0 ? wm->world->desc.physics_hz : PLUSH_WORLD_DEFAULT_HZ;
    double fall = plush_world_gravity(wm->world) / (hz * hz);
    double length = free_length(s);
    return length > 0 && fall > 0 ? fall / (PLUSH_SOFT_SETTLE_BAR * length + fall) : 0;
}

bool plush__world_soft_follow_init(plush_world_model *wm, world_soft *s)
{
    if (s->goal_off)
        return true;
    size_t n = s->node_count ? s->node_count : 1, free_count = 0;
    for (size_t i = 0; i < s->node_count; i++)
        free_count += !s->pinned[i];
    if (!free_count)
        return false;
    s->goal_shape = plush_arena_array(&wm->arena, n, sizeof *s->goal_shape);
    float(*off)[3] = s->goal_shape ? plush_arena_array(&wm->arena, n, sizeof *off) : NULL;
    if (!off)
        return false;
    if (!(s->pose_k > 0)) { /* Bullet's matching, whose goal cannot move: plush's from now on, at its kMT */
        if (!(s->config.kMT > 0) || !plush__world_soft_pose_init(wm, s, s->config.kMT))
            return false;
        bc_soft_config config = s->config;
        config.kMT = 0;
        wm->world->bc->soft_set_config(s->bc, &config);
    }
    memset(off, 0, n * sizeof *off);
    s->goal_base = plush_arena_array(&wm->arena, n, sizeof *s->goal_base);
    if (!s->goal_base)
        return false;
    for (size_t i = 0; i < n; i++)
        s->goal_base[i][0] = s->goal_base[i][1] = s->goal_base[i][2] = NAN;
    for (int d = 0; d < 3; d++) /* the rest centre, as plush__world_soft_pose_init took it */
        s->pose_c[d] = (double)s->rest[0][d] - s->pose_rest[0][d];
    s->goal_off = off;
    double k = follow_shape_memory(wm, s);
    if (k > s->pose_k)
        s->pose_k = (float)k;
    return true;
}

/* Where node i's goal lies: its rest offset o turned by r about the centre c -- or, following, where the model's
 * bones carry its place when no physics moves it (its base) -- plus its offset when it follows the author's physics
 * (a pinned node: where its pin takes it). */
static bool based(const world_soft *s, size_t i)
{
    return s->goal_base && isfinite(s->goal_base[i][0]);
}

static void goal_of(const world_soft *s, size_t i, const double c[3], double r[3][3], double out[3])
{
    const float *o = s->pose_rest[i];
    for (int d = 0; d < 3; d++)
        out[d] = s->pinned[i] ? (double)s->scratch_x[i][d]
                 : (based(s, i) ? (double)s->goal_base[i][d] : c[d] + r[0][d] * o[0] + r[1][d] * o[1] + r[2][d] * o[2]) +
                       (s->goal_off ? s->goal_off[i][d] : 0.0);
}

void plush__world_soft_pose_before_step(plush_world_model *wm, world_soft *s, float dt)
{
    if (!(s->pose_k > 0) || !(dt > 0) || s->node_count == 0)
        return;
    const float *g = wm->world->desc.gravity;
    double c[3] = {0, 0, 0}, a[3][3] = {{0}}, r[3][3], w = 0;
    for (size_t i = 0; i < s->node_count; i++) {
        double wi = pose_weight(s, i);
        w += wi;
        for (int d = 0; d < 3; d++) {
            double v = (double)s->v[i][d] + (s->pinned[i] ? 0.0 : (double)g[d] * dt);
            s->scratch_x[i][d] = (float)((double)s->x[i][d] + v * dt); /* where the step takes it */
            c[d] += wi * s->scratch_x[i][d];
        }
    }
    double last[3][3]; /* following: the free nodes enter the fit where the last frame had them, not where they swing */
    plush__quat_to_mat3(s->pose_q, &last[0][0], 3);
    if (s->goal_off) {
        w = 0, c[0] = c[1] = c[2] = 0;
        for (size_t i = 0; i < s->node_count; i++) {
            double wi = pose_weight(s, i), at[3];
            for (int d = 0; d < 3; d++) {
                const float *o = s->pose_rest[i];
                at[d] = s->pinned[i] ? (double)s->scratch_x[i][d]
                                     : s->pose_c[d] + last[0][d] * o[0] + last[1][d] * o[1] + last[2][d] * o[2];
                s->goal_shape[i][d] = (float)at[d];
                c[d] += wi * at[d];
            }
            w += wi;
        }
    }
    for (int d = 0; d < 3; d++)
        c[d] /= w;
    const float(*fit)[3] = s->goal_off ? (const float(*)[3])s->goal_shape : (const float(*)[3])s->scratch_x;
    for (size_t i = 0; i < s->node_count; i++) {
        double wi = pose_weight(s, i);
        for (int col = 0; col < 3; col++)
            for (int row = 0; row < 3; row++)
                a[col][row] += wi * ((double)fit[i][row] - c[row]) * s->pose_rest[i][col];
    }
    plush__fit_rotation(a, s->pose_q);
    plush__quat_to_mat3(s->pose_q, &r[0][0], 3); /* r[c] is column c */
    if (s->goal_off) { /* the links' rest lengths from the goal's distances */
        memcpy(s->pose_c, c, sizeof c);
        for (size_t i = 0; i < s->node_count; i++) {
            double gi[3];
            goal_of(s, i, c, r, gi);
            for (int d = 0; d < 3; d++)
                s->goal_shape[i][d] = (float)gi[d];
        }
        wm->world->bc->soft_link_rest(s->bc, (const float(*)[3])s->goal_shape, (const float(*)[3])s->rest,
                                      PLUSH_WORLD_FOLLOW_STRETCH);
    }
    /* a node its bones carry is held within the piece's collision margin of where they carry it against its own
     * weight: matched alone it hangs g dt^2 (1 - k) / k below its goal, so k = g dt^2 / (margin + g dt^2) */
    double fall = (double)plush_world_gravity(wm->world) * (double)dt * (double)dt;
    double carried = s->margin > 0 && fall > 0 ? fall / ((double)s->margin + fall) : 0.0;
    for (size_t i = 0; i < s->node_count; i++) {
        if (s->pinned[i])
            continue;
        double goal[3], k = s->pose_k;
        goal_of(s, i, c, r, goal);
        if (based(s, i) && carried > k)
            k = carried;
        for (int d = 0; d < 3; d++)
            s->v[i][d] += (float)(k * (goal[d] - s->scratch_x[i][d]) / dt);
        wm->world->bc->soft_set_node(s->bc, (uint32_t)i, NULL, s->v[i]);
    }
}
