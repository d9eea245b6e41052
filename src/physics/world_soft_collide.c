/* A TriMesh soft body's faces against the rigid bodies that follow bones (the model's own body: legs,
 * hips, torso, arms, head). Bullet collides soft bodies by their nodes only (a node against a sparse
 * distance field), so a coarse cage lets a leg or an arm through between its nodes, and the detailed
 * surface bound to the cage with it. Here each face is sampled at ten points and pushed out of the body's
 * exact shape (sphere, box, capsule) by the deepest one, the push shared among its free nodes by their
 * barycentric weights (a position-based contact), and the nodes lose the velocity that carried them in.
 *
 * Which bodies: every one that follows its bone (mode 0), whatever the soft body's collision mask says (the
 * mask still filters the bodies physics moves, with Bullet's node contacts); Bullet is told to leave the
 * pairs handled here alone. A face that lay within the margin of a body at rest (a waistband on the
 * hips, a hair root in the head) is left alone with that body: pushing it out would move the rest shape. */
#include "physics/rigid_shape.h"
#include "physics/world_soft_internal.h"

#include <math.h>
#include <string.h>

/* Barycentric sample points of a face: its corners, edge midpoints, centre and three inner points. */
static const float samples[][3] = {
    {1, 0, 0},       {0, 1, 0},       {0, 0, 1},       {0.5f, 0.5f, 0},           {0, 0.5f, 0.5f},
    {0.5f, 0, 0.5f}, {1 / 3.0f, 1 / 3.0f, 1 / 3.0f}, {2 / 3.0f, 1 / 6.0f, 1 / 6.0f}, {1 / 6.0f, 2 / 3.0f, 1 / 6.0f},
    {1 / 6.0f, 1 / 6.0f, 2 / 3.0f}};
enum { SAMPLES = sizeof samples / sizeof samples[0] };

static void sample(const float (*x)[3], const uint32_t f[3], const float b[3], float out[3])
{
    for (int k = 0; k < 3; k++)
        out[k] = b[0] * x[f[0]][k] + b[1] * x[f[1]][k] + b[2] * x[f[2]][k];
}

/* The deepest sample of face f within margin of the body at pose t: its depth below the margin (0: none),
 * its barycentric point and the outward normal in the world. */
static double deepest(const plush_pmx_rigid_body *rb, const float t[16], const float (*x)[3], const uint32_t f[3],
                      float margin, int *which, float normal[3])
{
    double best = 0, n[3];
    for (int q = 0; q < SAMPLES; q++) {
        float p[3];
        double local[3];
        sample(x, f, samples[q], p);
        plush__rigid_local(t, p, local);
        double d = plush__rigid_shape_distance(rb, local, n);
        if ((double)margin - d > best) {
            best = (double)margin - d;
            *which = q;
            for (int k = 0; k < 3; k++) /* the body's axes are t's columns */
                normal[k] = (float)(t[k] * n[0] + t[4 + k] * n[1] + t[8 + k] * n[2]);
        }
    }
    return best;
}

/* How far face f of the rest nodes lies from the body at its rest pose t: the nearest of its samples (negative:
 * into the body). */
static double rest_clearance(const world_soft *s, const plush_pmx_rigid_body *rb, const float t[16], const uint32_t f[3])
{
    double nearest = INFINITY;
    for (int q = 0; q < SAMPLES; q++) {
        float p[3];
        double local[3];
        sample((const float(*)[3])s->rest, f, samples[q], p);
        plush__rigid_local(t, p, local);
        double d = plush__rigid_shape_distance(rb, local, NULL);
        nearest = d < nearest ? d : nearest;
    }
    return nearest;
}

plush_status plush__world_soft_collide_init(soft_ctx *c)
{
    plush_world_model *wm = c->wm;
    world_soft *s = c->s;
    const plush_pmx_model *m = wm->model;
    s->margin = c->sb->margin > 0 ? c->sb->margin : 0;
    if (s->rope || s->triangle_count == 0)
        return PLUSH_OK;
    size_t count = 0;
    for (size_t r = 0; r < m->rigid_body_count; r++) {
        const plush_pmx_rigid_body *rb = &m->rigid_bodies[r];
        count += rb->mode == PLUSH_PMX_RIGID_FOLLOW_BONE && rb->shape <= PLUSH_PMX_RIGID_CAPSULE && wm->bodies[r].bc;
    }
    if (count == 0)
        return PLUSH_OK;
    s->collide_bodies = plush_arena_array(&wm->arena, count, sizeof *s->collide_bodies);
    s->collide_rest = plush_arena_array(&wm->arena, count * s->triangle_count, sizeof *s->collide_rest);
    s->touched = plush_arena_array(&wm->arena, s->node_count, 1);
    if (!s->collide_bodies || !s->collide_rest || !s->touched)
        return world_soft_no_memory(c);
    const plush_bulletc_api *bc = wm->world->bc;
    for (size_t r = 0; r < m->rigid_body_count; r++) {
        const plush_pmx_rigid_body *rb = &m->rigid_bodies[r];
        if (rb->mode != PLUSH_PMX_RIGID_FOLLOW_BONE || rb->shape > PLUSH_PMX_RIGID_CAPSULE || !wm->bodies[r].bc)
            continue;
        size_t slot = s->collide_count++;
        s->collide_bodies[slot] = (uint32_t)r;
        float t[16];
        plush_world_rigid_rest_transform(rb, t);
        for (size_t f = 0; f < s->triangle_count; f++) {
            double d = rest_clearance(s, rb, t, s->triangles[f]);
            s->collide_rest[slot * s->triangle_count + f] = d < 0 ? -1.0f : d < s->margin ? (float)d : s->margin;
        }
        bc->soft_ignore_body(s->bc, wm->bodies[r].bc);
    }
    return PLUSH_OK;
}

void plush__world_soft_collide(plush_world_model *wm, world_soft *s)
{
    if (s->collide_count == 0)
        return;
    const plush_bulletc_api *bc = wm->world->bc;
    const plush_pmx_model *m = wm->model;
    memset(s->touched, 0, s->node_count);
    for (size_t slot = 0; slot < s->collide_count; slot++) {
        const plush_pmx_rigid_body *rb = &m->rigid_bodies[s->collide_bodies[slot]];
        float t[16];
        bc->body_get_transform(wm->bodies[s->collide_bodies[slot]].bc, t);
        double reach = plush__rigid_shape_reach(rb) + s->margin;
        for (size_t f = 0; f < s->triangle_count; f++) {
            float margin = s->collide_rest[slot * s->triangle_count + f];
            if (margin < 0)
                continue;
            const uint32_t *tri = s->triangles[f];
            float w[3] = {!s->pinned[tri[0]], !s->pinned[tri[1]], !s->pinned[tri[2]]};
            if (w[0] + w[1] + w[2] == 0)
                continue;
            /* Far from the body: the face's centre is farther from the body's origin than the face's own
             * radius and the body's reach together. */
            float centre[3];
            sample((const float(*)[3])s->x, tri, samples[6], centre);
            double radius = 0, d0 = 0;
            for (int i = 0; i < 3; i++) {
                double e = 0;
                for (int k = 0; k < 3; k++)
                    e += ((double)s->x[tri[i]][k] - centre[k]) * ((double)s->x[tri[i]][k] - centre[k]);
                radius = e > radius ? e : radius;
            }
            for (int k = 0; k < 3; k++)
                d0 += ((double)centre[k] - t[12 + k]) * ((double)centre[k] - t[12 + k]);
            if (sqrt(d0) > sqrt(radius) + reach)
                continue;
            int which = 0;
            float n[3];
            double depth = deepest(rb, t, (const float(*)[3])s->x, tri, margin, &which, n);
            if (!(depth > 0) || !isfinite(depth))
                continue;
            const float *b = samples[which];
            double denom = 0;
            for (int i = 0; i < 3; i++)
                denom += (double)b[i] * b[i] * w[i];
            if (!(denom > 0))
                continue;
            double scale = depth / denom;
            for (int i = 0; i < 3; i++) {
                if (w[i] == 0 || b[i] == 0)
                    continue;
                float *x = s->x[tri[i]], *v = s->v[tri[i]], push = (float)(scale * b[i]);
                for (int k = 0; k < 3; k++)
                    x[k] += push * n[k];
                /* the velocity that brought it in is spent on the body (no bounce); the push itself is not
                 * turned into speed, which would fling a face off a body that stops */
                float vn = v[0] * n[0] + v[1] * n[1] + v[2] * n[2];
                if (vn < 0)
                    for (int k = 0; k < 3; k++)
                        v[k] -= vn * n[k];
                s->touched[tri[i]] = 1;
            }
            s->contacts++;
        }
    }
    for (size_t i = 0; i < s->node_count; i++)
        if (s->touched[i])
            bc->soft_set_node(s->bc, (uint32_t)i, s->x[i], s->v[i]);
}
