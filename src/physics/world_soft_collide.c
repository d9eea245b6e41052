/* A TriMesh soft body's faces against the rigid bodies that follow bones (the model's own body: legs,
 * hips, torso, arms, head). Bullet collides soft bodies by their nodes only (a node against a sparse
 * distance field), so a coarse cage lets a leg or an arm through between its nodes, and the detailed
 * surface bound to the cage with it. Here each face is sampled at ten points and pushed out of the body's
 * exact shape (sphere, box, capsule) by the deepest one, the push shared among its free nodes by their
 * barycentric weights (a position-based contact), and the nodes lose the velocity that carried them in.
 *
 * Which bodies: every one that follows its bone (mode 0), whatever the soft body's collision mask says (the
 * mask still filters the bodies physics moves, with Bullet's node contacts); Bullet is told to leave the
 * pairs handled here alone. One exception: a body the cage lies into at rest, where the model's own physics
 * carries the part (its nodes weighted to bones that rigid bodies move), the model's collision groups keep
 * that physics apart from the body, and the body holds none of the model's visible skin at rest (vertices
 * drawn, of other materials, carried by bones no rigid body moves), is a helper of the part's own rig (a
 * capsule holding a braid's root), not the body (a head holding its skin stays the body, whatever the groups
 * say): a face meets it only when one of its nodes' bodies collides with
 * it. An arm or a leg the part's chains are merely kept apart from (to calm MMD's own physics) stays the
 * body. A face that lay within the margin of a body at rest (a waistband on the hips, a hair
 * root in the head) keeps only what it kept at rest, and one that lay into it goes no deeper: pushing it out
 * would move the rest shape. A face found deeper than half the body's thickness (a kick went into it between
 * two steps) goes back out the side it lay on when last within the body's reach, not out the far side: the
 * limb carries the cloth along instead of going through it. */
#include "physics/rigid_shape.h"
#include "physics/world_soft_internal.h"
#include "plush/sys/physics.h"
#include "plush/sys/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Barycentric sample points of a face: its corners, edge midpoints, centre and three inner points. */
static const float samples[][3] = {
    {1, 0, 0},       {0, 1, 0},       {0, 0, 1},       {0.5f, 0.5f, 0},           {0, 0.5f, 0.5f},
    {0.5f, 0, 0.5f}, {1 / 3.0f, 1 / 3.0f, 1 / 3.0f}, {2 / 3.0f, 1 / 6.0f, 1 / 6.0f}, {1 / 6.0f, 2 / 3.0f, 1 / 6.0f},
    {1 / 6.0f, 1 / 6.0f, 2 / 3.0f}};
enum { SAMPLES = sizeof samples / sizeof samples[0] };
/* The most face-body pairs a soft body keeps between its passes (8 bytes each). */
enum { NEAR_MOST = 1 << 20 };

static void sample(const float (*x)[3], const uint32_t f[3], const float b[3], float out[3])
{
    for (int k = 0; k < 3; k++)
        out[k] = b[0] * x[f[0]][k] + b[1] * x[f[1]][k] + b[2] * x[f[2]][k];
}

/* The deepest sample of face f against the body at pose t: how far it lies inside the shape (negative: the
 * nearest sample's distance out of it), its barycentric point and the outward normal in the world. The
 * corners are taken into the body's frame once; the samples, being affine combinations, follow. */
static double deepest(const plush_pmx_rigid_body *rb, const float t[16], const float (*x)[3], const uint32_t f[3],
                      int *which, float normal[3], double local_normal[3], double local_point[3])
{
    double corner[3][3], best = -INFINITY, n[3], keep[3] = {0, 1, 0};
    for (int i = 0; i < 3; i++)
        plush__rigid_local(t, x[f[i]], corner[i]);
    for (int q = 0; q < SAMPLES; q++) {
        double local[3];
        for (int k = 0; k < 3; k++)
            local[k] = samples[q][0] * corner[0][k] + samples[q][1] * corner[1][k] + samples[q][2] * corner[2][k];
        double d = -plush__rigid_shape_distance(rb, local, n);
        if (d > best) {
            best = d;
            *which = q;
            memcpy(keep, n, sizeof keep);
            memcpy(local_point, local, sizeof local);
        }
    }
    memcpy(local_normal, keep, sizeof keep);
    for (int k = 0; k < 3; k++) /* the body's axes are t's columns */
        normal[k] = (float)(t[k] * keep[0] + t[4 + k] * keep[1] + t[8 + k] * keep[2]);
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

/* How far the pushes of one substep may move a node, in its shortest edge at rest: two edges when one
 * body pushes it, one when two do. A limb that got deep into the cloth between two steps (a kick) pushes it
 * out over a few steps instead of throwing one node across, and a node pinched between two bodies (a shin
 * and a foot, two knees) is not thrown back and forth between them: either stretched its edges to twice
 * their length and more (the cage's p99.9 strain above 2 on a skirt at 9% of a dance's frames). Three edges
 * for one body left a kick room to throw a skirt's node four units in a substep: measured on 3,000 frames of
 * the long dance, two edges take the frames whose cage strain passes 2 from 6 and 3 to none on two skirts,
 * from 10 to 5 on Alicia's hair and from 85 to 41 on Luka's dress, with the same share inside the body. */
#define PUSH_SHARE 1.0f
#define PUSH_ONE_BODY 2.0f

/* The faces' distinct edges (the soft body's links) and their rest lengths, and each node's push cap;
 * false when out of memory. */
static bool edges(soft_ctx *c)
{
    world_soft *s = c->s;
    uint32_t(*links)[2];
    size_t n;
    if (!plush__world_soft_links(s, &links, &n))
        return false;
    s->collide_edges = plush_arena_array(&c->wm->arena, n ? n : 1, sizeof *s->collide_edges);
    s->collide_rest_length = plush_arena_array(&c->wm->arena, n ? n : 1, sizeof *s->collide_rest_length);
    bool ok = s->collide_edges && s->collide_rest_length;
    for (size_t i = 0; ok && i < n; i++) {
        memcpy(s->collide_edges[i], links[i], sizeof links[i]);
        double d = 0;
        for (int k = 0; k < 3; k++)
            d += ((double)s->rest[links[i][1]][k] - s->rest[links[i][0]][k]) *
                 ((double)s->rest[links[i][1]][k] - s->rest[links[i][0]][k]);
        s->collide_rest_length[i] = (float)sqrt(d);
    }
    s->collide_edge_count = ok ? n : 0;
    free(links);
    s->pin_of = ok ? plush_arena_array(&c->wm->arena, s->node_count ? s->node_count : 1, sizeof *s->pin_of) : NULL;
    ok = ok && s->pin_of;
    for (size_t v = 0; ok && v < s->node_count; v++)
        s->pin_of[v] = -1;
    for (size_t q = 0; ok && q < s->pin_count; q++)
        s->pin_of[s->pins[q].node] = (int32_t)q;
    s->push_cap = ok ? plush_arena_array(&c->wm->arena, s->node_count ? s->node_count : 1, sizeof *s->push_cap) : NULL;
    s->pushed = ok ? plush_arena_array(&c->wm->arena, s->node_count ? s->node_count : 1, sizeof *s->pushed) : NULL;
    s->pusher = ok ? plush_arena_array(&c->wm->arena, s->node_count ? s->node_count : 1, sizeof *s->pusher) : NULL;
    ok = ok && s->push_cap && s->pushed && s->pusher;
    for (size_t v = 0; ok && v < s->node_count; v++)
        s->push_cap[v] = INFINITY;
    for (size_t i = 0; ok && i < s->collide_edge_count; i++)
        for (int e = 0; e < 2; e++) {
            float *cap = &s->push_cap[s->collide_edges[i][e]], l = PUSH_SHARE * s->collide_rest_length[i];
            *cap = l < *cap ? l : *cap;
        }
    return ok;
}

/* Whether face f meets the body: one of its nodes' vertices does (plush__rigid_vertex_meets: the model's
 * collision groups decide for the parts its physics carries). */
static bool meets(const world_soft *s, const plush_pmx_model *m, const int32_t *dynamic, const uint32_t f[3],
                  uint32_t body)
{
    for (int i = 0; i < 3; i++) {
        int32_t v = s->node_vertex[f[i]];
        if (v < 0 || plush__rigid_vertex_meets(m, dynamic, (uint32_t)v, body))
            return true;
    }
    return false;
}

/* Whether rigid body r (t: its rest pose) holds any of the model's visible skin at rest: 1 or 0, -1 when out
 * of memory. Worked out once per model and body (wm->skin, wm->skin_held), whichever soft body asks first. */
static int holds_skin(plush_world_model *wm, size_t r, const float t[16])
{
    const plush_pmx_model *m = wm->model;
    if (!wm->skin) {
        bool *skin = plush_arena_array(&wm->arena, m->vertex_count ? m->vertex_count : 1, sizeof *skin);
        uint8_t *held = plush_arena_array(&wm->arena, m->rigid_body_count ? m->rigid_body_count : 1, 1);
        if (!skin || !held || !plush__rigid_skin_vertices(m, skin))
            return -1;
        memset(held, 0, m->rigid_body_count);
        wm->skin = skin, wm->skin_held = held;
    }
    if (!wm->skin_held[r]) {
        bool any = false;
        for (size_t v = 0; v < m->vertex_count && !any; v++) {
            if (!wm->skin[v])
                continue;
            double local[3];
            plush__rigid_local(t, m->vertices[v].position, local);
            any = plush__rigid_shape_distance(&m->rigid_bodies[r], local, NULL) < 0;
        }
        wm->skin_held[r] = any ? 2 : 1;
    }
    return wm->skin_held[r] == 2;
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
    s->collide_poses = plush_arena_array(&wm->arena, count, sizeof *s->collide_poses);
    s->collide_side = plush_arena_array(&wm->arena, count * s->triangle_count, sizeof *s->collide_side);
    /* every face against every body at most: a coarse cage's large faces each reach several bodies (a skirt of
     * 100 triangles: some 600 pairs a substep), and a list that did not hold them sent every later pass back
     * over all the pairs (36,000 shape tests a substep instead of 2,300, the physics step three times the finer
     * cage's); held to NEAR_MOST pairs, past which the passes go over all of them again */
    size_t pairs = s->triangle_count * count;
    s->near_capacity = pairs < NEAR_MOST ? pairs : NEAR_MOST;
    s->near = plush_arena_array(&wm->arena, s->near_capacity, sizeof *s->near);
    s->near_gap = plush_arena_array(&wm->arena, s->near_capacity, sizeof *s->near_gap);
    if (!s->collide_bodies || !s->collide_rest || !s->touched || !s->collide_poses || !s->collide_side || !s->near ||
        !s->near_gap || !edges(c))
        return world_soft_no_memory(c);
    const plush_bulletc_api *bc = wm->world->bc;
    int32_t *dynamic = malloc((m->bone_count ? m->bone_count : 1) * sizeof *dynamic);
    if (!dynamic)
        return world_soft_no_memory(c);
    plush__rigid_dynamic_per_bone(m, dynamic);
    for (size_t r = 0; r < m->rigid_body_count; r++) {
        const plush_pmx_rigid_body *rb = &m->rigid_bodies[r];
        if (rb->mode != PLUSH_PMX_RIGID_FOLLOW_BONE || rb->shape > PLUSH_PMX_RIGID_CAPSULE || !wm->bodies[r].bc)
            continue;
        size_t slot = s->collide_count++;
        s->collide_bodies[slot] = (uint32_t)r;
        float t[16];
        plush_world_rigid_rest_transform(rb, t);
        bool overlaps = false;
        for (size_t f = 0; f < s->triangle_count; f++) {
            double d = rest_clearance(s, rb, t, s->triangles[f]);
            s->collide_rest[slot * s->triangle_count + f] = (float)fmin(d, 1e30);
            overlaps |= d < 0;
        }
        /* a body the cage lies into at rest, holding none of the model's visible skin, whose collision groups
         * keep the part's physics apart from it, is a helper of the part's own rig, not the body; one that
         * holds skin is a head or a limb, whatever the groups say */
        int held = overlaps ? holds_skin(wm, r, t) : 0;
        if (held < 0) {
            free(dynamic);
            return world_soft_no_memory(c);
        }
        bool helper = overlaps && held == 0;
        for (size_t f = 0; helper && f < s->triangle_count; f++)
            if (!meets(s, m, dynamic, s->triangles[f], (uint32_t)r))
                s->collide_rest[slot * s->triangle_count + f] = -INFINITY;
        bc->soft_ignore_body(s->bc, wm->bodies[r].bc);
    }
    free(dynamic);
    return PLUSH_OK;
}

/* Face f against the body in slot: when its deepest sample lies within the face's margin, the face is
 * pushed out along the body's normal, shared among its free nodes by their barycentric weights (a
 * position-based contact: the sample lands on the margin); with `spend`, the velocity that brought a node in
 * is spent on the body (no bounce; the push itself is not made speed, which would fling a face off). */
static bool push_face(world_soft *s, const plush_pmx_rigid_body *rb, size_t slot, size_t f, bool spend, double *gap)
{
    float rest = s->collide_rest[slot * s->triangle_count + f];
    const uint32_t *tri = s->triangles[f];
    float w[3] = {!s->pinned[tri[0]], !s->pinned[tri[1]], !s->pinned[tri[2]]};
    int which = 0;
    float n[3];
    /* the face keeps the margin, or what it kept at rest when that is less (its rest clearance, negative
     * into the body: what lay that near or that deep at rest may lie so again, no deeper) */
    float margin = rest < s->margin ? rest : s->margin;
    const float *t = s->collide_poses[slot];
    double local_n[3], local_p[3];
    double depth = deepest(rb, t, (const float(*)[3])s->x, tri, &which, n, local_n, local_p) + margin;
    *gap = depth;
    if (!isfinite(depth))
        return false;
    float *side = s->collide_side[slot * s->triangle_count + f];
    double thickness = plush__rigid_shape_thickness(rb);
    if (!(depth > (margin > 0 ? margin : 0) + 0.5 * thickness)) {
        for (int k = 0; k < 3; k++) /* the side it lies on */
            side[k] = (float)local_n[k];
        if (!(depth > 0))
            return false;
    } else {
        /* More than half the body's thickness deeper than it may lie (past the margin, or past its depth at
         * rest), the nearest way out is more likely the far side: the face is getting through between two
         * steps (a fast kick), and pushed on that way the cloth would be dragged through the limb and left
         * behind it. It goes back out the side it lay on before, along that side's normal to the margin there.
         * A face whose side is not known (it came from beyond the body's reach in one step) is left to come
         * out as the body moves on. */
        double travel = plush__rigid_way_out(rb, local_p, side, margin);
        if (!(travel > 0))
            return false;
        depth = travel;
        *gap = depth;
        for (int k = 0; k < 3; k++) /* the body's axes are t's columns */
            n[k] = (float)(t[k] * side[0] + t[4 + k] * side[1] + t[8 + k] * side[2]);
    }
    const float *b = samples[which];
    /* The push is shared as if every corner took its part (a pinned corner's is dropped): a sample next to
     * a pinned corner would otherwise throw the whole depth, many times over, onto the far free corner
     * (1/6 of the way there: six times the depth), stretching its edges (a skirt's node below a waistband
     * pinned into the hips, 8 times its length). */
    double denom = 0, free_share = 0;
    for (int i = 0; i < 3; i++)
        denom += (double)b[i] * b[i], free_share += (double)b[i] * b[i] * w[i];
    if (!(free_share > 0))
        return false;
    if (!(denom > 0))
        return false;
    double scale = depth / denom;
    for (int i = 0; i < 3; i++) {
        if (w[i] == 0 || b[i] == 0)
            continue;
        float *x = s->x[tri[i]], *v = s->v[tri[i]], push = (float)(scale * b[i]);
        /* the substep's pushes on this node added up, held to its cap (a third of it once two bodies push it) */
        uint32_t node = tri[i], by = (uint32_t)slot + 1;
        if (s->pusher[node] != by)
            s->pusher[node] = s->pusher[node] ? UINT32_MAX : by;
        float *acc = s->pushed[node], cap = s->push_cap[node] * (s->pusher[node] == UINT32_MAX ? 1.0f : PUSH_ONE_BODY), to[3];
        for (int k = 0; k < 3; k++)
            to[k] = acc[k] + push * n[k];
        float len = sqrtf(to[0] * to[0] + to[1] * to[1] + to[2] * to[2]);
        for (int k = 0; len > cap && k < 3; k++)
            to[k] *= cap / len;
        for (int k = 0; k < 3; k++) {
            x[k] += to[k] - acc[k];
            acc[k] = to[k];
        }
        float vn = v[0] * n[0] + v[1] * n[1] + v[2] * n[2];
        if (spend && vn < 0)
            for (int k = 0; k < 3; k++)
                v[k] -= vn * n[k];
        s->touched[tri[i]] = 1;
    }
    return true;
}

/* Whether face f can reach the body in slot: every point of the face lies within the face's radius of its
 * centre, and a distance moves no faster than the point, so a centre farther from the shape than that
 * radius and the margin together keeps the whole face off. */
static bool within_reach(const world_soft *s, const plush_pmx_rigid_body *rb, size_t slot, size_t f)
{
    const uint32_t *tri = s->triangles[f];
    float centre[3];
    sample((const float(*)[3])s->x, tri, samples[6], centre);
    double radius = 0, local[3];
    for (int i = 0; i < 3; i++) {
        double e = 0;
        for (int k = 0; k < 3; k++)
            e += ((double)s->x[tri[i]][k] - centre[k]) * ((double)s->x[tri[i]][k] - centre[k]);
        radius = e > radius ? e : radius;
    }
    plush__rigid_local(s->collide_poses[slot], centre, local);
    return plush__rigid_shape_distance(rb, local, NULL) <= sqrt(radius) + s->margin;
}

/* The first pass: every face with a free node against every body it can reach. The pairs that may still
 * touch after the later passes' edges move the nodes (within the deepest push of this pass of the margin)
 * are kept in s->near while they fit. The faces pushed. */
static size_t push_all(world_soft *s, const plush_pmx_model *m)
{
    size_t pushes = 0;
    double most = 0;
    s->near_count = 0;
    s->near_overflow = false;
    for (size_t slot = 0; slot < s->collide_count; slot++) {
        const plush_pmx_rigid_body *rb = &m->rigid_bodies[s->collide_bodies[slot]];
        for (size_t f = 0; f < s->triangle_count; f++) {
            const uint32_t *tri = s->triangles[f];
            if (s->collide_rest[slot * s->triangle_count + f] == -INFINITY ||
                (s->pinned[tri[0]] && s->pinned[tri[1]] && s->pinned[tri[2]]))
                continue;
            if (!within_reach(s, rb, slot, f)) { /* its side is known only while it stays within reach */
                memset(s->collide_side[slot * s->triangle_count + f], 0, sizeof *s->collide_side);
                continue;
            }
            double gap = -INFINITY;
            pushes += push_face(s, rb, slot, f, true, &gap);
            most = gap > most ? gap : most;
            if (s->near_count < s->near_capacity) {
                s->near[s->near_count] = (uint32_t)(slot * s->triangle_count + f);
                s->near_gap[s->near_count++] = (float)gap;
            } else {
                s->near_overflow = true;
            }
        }
    }
    size_t kept = 0;
    for (size_t i = 0; i < s->near_count; i++)
        if (s->near_gap[i] > -2 * most)
            s->near[kept++] = s->near[i];
    s->near_count = kept;
    return pushes;
}

/* A later pass: the pairs the first pass kept (all of them again if they did not fit). */
static size_t push_near(world_soft *s, const plush_pmx_model *m)
{
    if (s->near_overflow)
        return push_all(s, m);
    size_t pushes = 0;
    for (size_t i = 0; i < s->near_count; i++) {
        size_t slot = s->near[i] / s->triangle_count, f = s->near[i] % s->triangle_count;
        double gap;
        /* a push smaller than a hundredth of the margin is done: the face is on it */
        pushes += push_face(s, &m->rigid_bodies[s->collide_bodies[slot]], slot, f, false, &gap) &&
                  gap > 0.01 * s->margin;
    }
    return pushes;
}

/* One pass of the cage's edges back toward their rest lengths (free nodes only, each edge's error shared by
 * its free ends), so that a pushed node takes its neighbours along instead of stretching its edges. */
static void relax_edges(world_soft *s)
{
    for (size_t e = 0; e < s->collide_edge_count; e++) {
        uint32_t a = s->collide_edges[e][0], b = s->collide_edges[e][1];
        float wa = !s->pinned[a], wb = !s->pinned[b];
        if (wa + wb == 0)
            continue;
        double d[3], len = 0;
        for (int k = 0; k < 3; k++)
            d[k] = (double)s->x[b][k] - s->x[a][k], len += d[k] * d[k];
        len = sqrt(len);
        if (!(len > 0))
            continue;
        double err = (len - s->collide_rest_length[e]) / (len * (wa + wb));
        for (int k = 0; k < 3; k++) {
            s->x[a][k] += (float)(wa * err * d[k]);
            s->x[b][k] -= (float)(wb * err * d[k]);
        }
        s->touched[a] |= wa > 0, s->touched[b] |= wb > 0;
    }
}

/* Rounds of edges and pushes after the first push: each lets the faces pushed carry their neighbours. */
enum { RELAX_ROUNDS = 16 };

/* The most a link may stretch at the end of a substep, in its rest length, and the rounds spent on it. A
 * fabric's threads do not stretch by half again: where a limb's push (capped at two of a node's shortest
 * edges a substep) or a fast swing outruns Bullet's links, a link was left at 2-3 times its length for a
 * frame (a skirt's node pushed past its neighbours by a kick, a short link at a strand's side). Each such
 * link is brought back to the limit by moving its free ends toward each other, and the ends lose the speed
 * that was parting them (strain limiting, as cloth simulators since Provot 1995 do). It goes with plush's own
 * contacts: a soft body that meets no body that follows a bone is left as Bullet steps it, node for node. */
#define STRAIN_LIMIT 1.5
enum { LIMIT_ROUNDS = 32 };

int plush__world_soft_hold_within(float xa[3], float va[3], double wa, float xb[3], float vb[3], double wb, double most)
{
    double d[3], len = 0;
    for (int k = 0; k < 3; k++)
        d[k] = (double)xb[k] - xa[k], len += d[k] * d[k];
    len = sqrt(len);
    if (!(len > most))
        return 0;
    double err = (len - most) / (len * (wa + wb)), parting = 0;
    for (int k = 0; k < 3; k++) {
        xa[k] += (float)(wa * err * d[k]);
        xb[k] -= (float)(wb * err * d[k]);
        parting += ((double)vb[k] - va[k]) * d[k] / len;
    }
    for (int k = 0; parting > 0 && k < 3; k++) {
        va[k] += (float)(wa / (wa + wb) * parting * d[k] / len);
        vb[k] -= (float)(wb / (wa + wb) * parting * d[k] / len);
    }
    return len > most * (1 + 1e-3) ? 2 : 1;
}

void plush__world_soft_limit_strain(world_soft *s)
{
    if (s->collide_count == 0)
        return;
    for (int round = 0; round < LIMIT_ROUNDS; round++) {
        bool any = false;
        for (size_t e = 0; e < s->collide_edge_count; e++) {
            uint32_t a = s->collide_edges[e][0], b = s->collide_edges[e][1];
            double wa = !s->pinned[a], wb = !s->pinned[b];
            if (wa + wb == 0)
                continue;
            int held = plush__world_soft_hold_within(s->x[a], s->v[a], wa, s->x[b], s->v[b], wb,
                                                     STRAIN_LIMIT * s->collide_rest_length[e]);
            if (!held)
                continue;
            any |= held > 1; /* the rounds go on while one is over by a thousandth */
            s->touched[a] |= wa > 0, s->touched[b] |= wb > 0;
        }
        if (!any)
            break;
    }
}

/* The same limit on the links whose two ends are pinned, applied to the pins' targets: bone skinning
 * stretches a model's own surface where two bones meet (a collar between the neck and the chest, a
 * waistband between the hips and a thigh), and a link between a node following one and a node following
 * the other went to 2.7 times its length. Both ends give way alike, so the pins stay within a fraction of an
 * edge of their bones. */
void plush__world_soft_limit_pin_targets(world_soft *s)
{
    if (s->collide_count == 0 || !s->pin_of)
        return;
    for (int round = 0; round < LIMIT_ROUNDS; round++) {
        bool any = false;
        for (size_t e = 0; e < s->collide_edge_count; e++) {
            int32_t pa = s->pin_of[s->collide_edges[e][0]], pb = s->pin_of[s->collide_edges[e][1]];
            if (pa < 0 || pb < 0)
                continue;
            float *a = s->pins[pa].to, *b = s->pins[pb].to;
            double d[3], len = 0, most = STRAIN_LIMIT * s->collide_rest_length[e];
            for (int k = 0; k < 3; k++)
                d[k] = (double)b[k] - a[k], len += d[k] * d[k];
            len = sqrt(len);
            if (!(len > most))
                continue;
            double err = (len - most) / (2 * len);
            any |= len > most * (1 + 1e-3);
            for (int k = 0; k < 3; k++) {
                a[k] += (float)(err * d[k]);
                b[k] -= (float)(err * d[k]);
            }
        }
        if (!any)
            break;
    }
}

void plush__world_soft_collide(plush_world_model *wm, world_soft *s)
{
    if (s->collide_count == 0)
        return;
    const plush_bulletc_api *bc = wm->world->bc;
    memset(s->touched, 0, s->node_count);
    memset(s->pushed, 0, s->node_count * sizeof *s->pushed);
    memset(s->pusher, 0, s->node_count * sizeof *s->pusher);
    for (size_t slot = 0; slot < s->collide_count; slot++)
        bc->body_get_transform(wm->bodies[s->collide_bodies[slot]].bc, s->collide_poses[slot]);
    size_t pushes = push_all(s, wm->model);
    s->contacts += pushes;
    for (int round = 0; pushes && round < RELAX_ROUNDS; round++) {
        relax_edges(s);
        pushes = push_near(s, wm->model);
    }
    plush__world_soft_limit_strain(s);
    for (size_t i = 0; i < s->node_count; i++)
        if (s->touched[i])
            bc->soft_set_node(s->bc, (uint32_t)i, s->x[i], s->v[i]);
}
