/* PMX 2.1 soft bodies, stepping: pins moved along their path across the fixed steps, anchors' near
 * mode, the blow-up guard (restore the last good state and freeze), reset and read-back.
 *
 * What readers see is the last good state kept here (x, normals), never Bullet's arrays directly, so a
 * body that blew up between two checks can never hand out a NaN. */
#include "physics/world_soft_internal.h"
#include "core/common.h"
#include "core/geom.h"
#include "plush/sys/physics.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* Rounds of the fold guards at a reset: eight substeps' worth. */
enum { RESET_FOLD_ROUNDS = 8 * PLUSH__SOFT_FOLD_ROUNDS };

void plush__world_soft_update_normals(world_soft *s)
{
    memset(s->normals, 0, s->node_count * sizeof *s->normals);
    if (s->rope)
        return;
    /* Unnormalised face normals summed per node weight each face by its area, as Bullet does. */
    for (size_t t = 0; t < s->triangle_count; t++) {
        const uint32_t *f = s->triangles[t];
        const float *a = s->x[f[0]], *b = s->x[f[1]], *c = s->x[f[2]];
        float e[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        float g[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        float n[3] = {e[1] * g[2] - e[2] * g[1], e[2] * g[0] - e[0] * g[2], e[0] * g[1] - e[1] * g[0]};
        for (int k = 0; k < 3; k++)
            for (int j = 0; j < 3; j++)
                s->normals[f[k]][j] += n[j];
    }
    for (size_t i = 0; i < s->node_count; i++) {
        float *n = s->normals[i];
        float len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        if (len > 0 && isfinite(len))
            for (int j = 0; j < 3; j++)
                n[j] /= len;
        else
            n[0] = n[1] = n[2] = 0;
    }
}

static world_soft *active(const plush_world_model *wm, size_t i)
{
    world_soft *s = &wm->soft[i];
    return s->state == PLUSH_SOFT_ACTIVE ? s : NULL;
}

/* ---- pins ----------------------------------------------------------------------------------------- */

void plush__world_soft_set_pins(plush_world_model *wm, const float (*vertex_positions)[3])
{
    if (!wm->soft || !vertex_positions)
        return;
    for (size_t i = 0; i < wm->model->soft_body_count; i++) {
        world_soft *s = active(wm, i);
        for (size_t k = 0; s && k < s->pin_count; k++) {
            soft_pin *p = &s->pins[k];
            /* A non-finite skinned position would poison Bullet, one out of reach would send the
             * contacts reading outside their cells: the pin keeps its last target. */
            if (plush__world_in_reach(vertex_positions[p->vertex]))
                memcpy(p->to, vertex_positions[p->vertex], sizeof p->to);
        }
        if (s)
            plush__world_soft_limit_pin_targets(s);
    }
}

bool plush_world_soft_follow(plush_world_model *wm, size_t soft_body)
{
    if (!wm || !wm->soft || soft_body >= wm->model->soft_body_count)
        return false;
    world_soft *s = active(wm, soft_body);
    return s && !s->rope && plush__world_soft_follow_init(wm, s);
}

void plush_world_set_goal_offsets(plush_world_model *wm, const float (*vertex_offsets)[3])
{
    if (!wm || !wm->soft || !vertex_offsets)
        return;
    for (size_t i = 0; i < wm->model->soft_body_count; i++) {
        world_soft *s = active(wm, i);
        for (size_t k = 0; s && s->goal_off && k < s->node_count; k++) {
            const float *o = vertex_offsets[s->node_vertex[k]];
            bool ok = plush__finite3(o) && plush__world_in_reach(o); /* else none: the rest shape there */
            for (int d = 0; d < 3; d++)
                s->goal_off[k][d] = ok ? o[d] : 0.0f;
        }
    }
}

void plush_world_set_goal_bases(plush_world_model *wm, const float (*vertex_positions)[3])
{
    if (!wm || !wm->soft)
        return;
    for (size_t i = 0; i < wm->model->soft_body_count; i++) {
        world_soft *s = active(wm, i);
        for (size_t k = 0; s && s->goal_base && k < s->node_count; k++) {
            const float *p = vertex_positions ? vertex_positions[s->node_vertex[k]] : NULL;
            bool ok = p && plush__finite3(p) && plush__world_in_reach(p); /* else none: the rest shape turned */
            for (int d = 0; d < 3; d++)
                s->goal_base[k][d] = ok ? p[d] : NAN;
        }
    }
}

static void lerp3(const float a[3], const float b[3], float t, float out[3])
{
    for (int j = 0; j < 3; j++)
        out[j] = a[j] + (b[j] - a[j]) * t;
}

/* Pins that jump further in one substep than this share of their piece's reach (its rest nodes' farthest
 * distance from their centre) carry its free nodes with them: see carry_with_pins. */
#define CARRY_SHARE 1.0

static float piece_reach(const world_soft *s)
{
    double c[3] = {0, 0, 0}, most = 0;
    for (size_t i = 0; i < s->node_count; i++)
        for (int k = 0; k < 3; k++)
            c[k] += s->rest[i][k] / (double)s->node_count;
    for (size_t i = 0; i < s->node_count; i++) {
        double d = 0;
        for (int k = 0; k < 3; k++)
            d += (s->rest[i][k] - c[k]) * (s->rest[i][k] - c[k]);
        most = d > most ? d : most;
    }
    return (float)sqrt(most);
}

/* A piece whose pins jump further in one substep than its own reach (a bead or a sleeve's cuff 0.04 across
 * on a hand that moves 0.1 a substep) cannot follow by its links: they pull its free nodes the
 * whole way in one projection, through the piece and out the other side, and a closed piece turns inside out
 * (and stays so). No fabric is jerked five times its size in a sixtieth of a second; such a piece moves with
 * its pins as a whole: each free node is given the velocity that carries it, over the substep, by the rigid
 * motion that best takes the pins from where the substep starts them to where it ends them (their own
 * motion beside it is dropped). Below that nothing changes: a flap thrown 0.44 of its reach a substep folds
 * as its guards let it (test_folds_held_open), a skirt on a 720 degree/s spin moves an eighth of its. */
/* The rigid motion that best takes the n points a[i] to b[i]: their centres ca, cb and the rotation r (r[c]
 * column c); with fewer than three points a translation only. */
static void best_rigid(const double (*a)[3], const double (*b)[3], size_t n, double ca[3], double cb[3], double r[3][3])
{
    double q[4] = {0, 0, 0, 1}, m[3][3] = {{0}};
    for (int k = 0; k < 3; k++)
        ca[k] = cb[k] = 0;
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++)
            ca[k] += a[i][k] / (double)n, cb[k] += b[i][k] / (double)n;
    if (n >= 3) {
        for (size_t i = 0; i < n; i++)
            for (int col = 0; col < 3; col++)
                for (int row = 0; row < 3; row++)
                    m[col][row] += (b[i][row] - cb[row]) * (a[i][col] - ca[col]);
        plush__fit_rotation(m, q);
    }
    plush__quat_to_mat3(q, &r[0][0], 3);
}

/* Where the rigid motion (ca, cb, r) takes p. */
static void carried(const double ca[3], const double cb[3], double r[3][3], const float p[3], double out[3])
{
    double o[3] = {p[0] - ca[0], p[1] - ca[1], p[2] - ca[2]};
    for (int k = 0; k < 3; k++)
        out[k] = cb[k] + r[0][k] * o[0] + r[1][k] * o[1] + r[2][k] * o[2];
}

static void carry_with_pins(plush_world_model *wm, world_soft *s, int k, int n, float dt)
{
    if (s->cloth || s->pin_count == 0 || s->node_count == 0)
        return;
    if (s->carry_reach < 0)
        s->carry_reach = piece_reach(s);
    /* the pins' motion this substep is the same for each (their straight paths split evenly): the largest */
    double most = 0;
    for (size_t q = 0; q < s->pin_count; q++) {
        const soft_pin *p = &s->pins[q];
        double d = 0;
        for (int j = 0; j < 3; j++)
            d += ((double)p->to[j] - p->from[j]) * ((double)p->to[j] - p->from[j]);
        most = d > most ? d : most;
    }
    if (!(sqrt(most) / n > CARRY_SHARE * s->carry_reach))
        return;
    double(*ends)[3] = malloc(2 * s->pin_count * sizeof *ends), ca[3], cb[3], r[3][3];
    if (!ends)
        return; /* out of memory: the substep goes on as Bullet takes it */
    for (size_t q = 0; q < s->pin_count; q++)
        for (int j = 0; j < 3; j++) {
            const soft_pin *p = &s->pins[q];
            ends[q][j] = p->from[j] + ((double)p->to[j] - p->from[j]) * k / n;
            ends[s->pin_count + q][j] = p->from[j] + ((double)p->to[j] - p->from[j]) * (k + 1) / n;
        }
    best_rigid((const double(*)[3])ends, (const double(*)[3])ends + s->pin_count, s->pin_count, ca, cb, r);
    free(ends);
    const plush_bulletc_api *bc = wm->world->bc;
    /* pins faster than the blow-up guard lets any node go (a motion that puts the model somewhere else from one
     * frame to the next): the free nodes are put where the pins' motion takes them, keeping their own speed, where
     * a speed that carried them there would read as a blow-up at every step of the jump */
    bool jump = sqrt(most) / n / dt > wm->world->desc.max_node_speed;
    for (size_t i = 0; i < s->node_count; i++) {
        if (s->pinned[i])
            continue;
        double to[3];
        carried(ca, cb, r, s->x[i], to);
        if (jump) {
            for (int j = 0; j < 3; j++)
                s->x[i][j] = (float)to[j];
            bc->soft_set_node(s->bc, (uint32_t)i, s->x[i], s->v[i]);
            continue;
        }
        for (int j = 0; j < 3; j++)
            s->v[i][j] = (float)((to[j] - s->x[i][j]) / dt);
        bc->soft_set_node(s->bc, (uint32_t)i, NULL, s->v[i]);
    }
}

/* A closed piece turned inside out by more than this share of its rest volume is put back. */
#define INVERTED_SHARE 0.25

/* Whether each edge of the faces is shared by exactly two of them and the rest mesh encloses a volume of its
 * own (as Bullet's pressure asks: a shell sealed flat has next to none, and its sign is noise), and the rest
 * volume: once. */
static void closed_setup(world_soft *s)
{
    s->closed = 0;
    size_t n = 3 * s->triangle_count;
    plush__edge *e = n ? malloc(n * sizeof *e) : NULL;
    if (!e)
        return; /* out of memory: taken as open, nothing repaired */
    for (size_t t = 0; t < s->triangle_count; t++)
        for (int k = 0; k < 3; k++) {
            uint32_t a = s->triangles[t][k], b = s->triangles[t][(k + 1) % 3];
            e[3 * t + (size_t)k] = (plush__edge){.lo = a < b ? a : b, .hi = a < b ? b : a, .owner = (uint32_t)t};
        }
    qsort(e, n, sizeof *e, plush__edge_order);
    bool closed = true;
    for (size_t i = 0; closed && i < n;) {
        size_t j = i;
        while (j < n && e[j].lo == e[i].lo && e[j].hi == e[i].hi)
            j++;
        closed = j - i == 2;
        i = j;
    }
    free(e);
    const double origin[3] = {s->rest[0][0], s->rest[0][1], s->rest[0][2]};
    s->rest_volume = closed ? plush__world_soft_volume(s, (const float(*)[3])s->rest, origin) : 0;
    s->closed = closed && plush__world_soft_encloses(s);
}

/* A closed piece turned inside out (its volume the other way round: a jerk pulled its free nodes through it,
 * or a contact pushed one side through the other) stays so: its links hold the mirrored shape as well as the
 * right one. With three pins or more, its free nodes are put back where its rest shape lies carried by the
 * pins' best rigid motion from rest, at the pins' mean speed. 03's bob, whose thin locks are closed pieces:
 * 11 frames of the long dance over the surface bar where 26. */
static void repair_inverted(plush_world_model *wm, world_soft *s)
{
    if (s->cloth || s->rope || s->pin_count < 3 || s->triangle_count == 0)
        return;
    if (s->closed < 0)
        closed_setup(s);
    if (!s->closed)
        return;
    const double origin[3] = {s->x[0][0], s->x[0][1], s->x[0][2]};
    if (!(plush__world_soft_volume(s, (const float(*)[3])s->x, origin) / s->rest_volume < -INVERTED_SHARE))
        return;
    double(*ends)[3] = malloc(2 * s->pin_count * sizeof *ends), ca[3], cb[3], r[3][3], u[3] = {0, 0, 0};
    if (!ends)
        return;
    for (size_t q = 0; q < s->pin_count; q++) {
        uint32_t node = s->pins[q].node;
        for (int k = 0; k < 3; k++) {
            ends[q][k] = s->rest[node][k];
            ends[s->pin_count + q][k] = s->x[node][k];
            u[k] += s->v[node][k] / (double)s->pin_count;
        }
    }
    best_rigid((const double(*)[3])ends, (const double(*)[3])ends + s->pin_count, s->pin_count, ca, cb, r);
    free(ends);
    const plush_bulletc_api *bc = wm->world->bc;
    for (size_t i = 0; i < s->node_count; i++) {
        if (s->pinned[i])
            continue;
        double to[3];
        carried(ca, cb, r, s->rest[i], to);
        for (int k = 0; k < 3; k++)
            s->x[i][k] = (float)to[k], s->v[i][k] = (float)u[k];
        bc->soft_set_node(s->bc, (uint32_t)i, s->x[i], s->v[i]);
    }
}

/* A pinned node has inverse mass 0, so Bullet's integration moves it by exactly its velocity: each
 * fixed step starts it on the straight path from where it was to its target and gives it the velocity
 * that carries it to the next point of that path. */
void plush__world_soft_before_substep(plush_world_model *wm, int k, int n, float dt)
{
    if (!wm->soft || n <= 0 || !(dt > 0))
        return;
    const plush_bulletc_api *bc = wm->world->bc;
    for (size_t i = 0; i < wm->model->soft_body_count; i++) {
        world_soft *s = active(wm, i);
        if (!s)
            continue;
        s->dt = dt;
        for (size_t q = 0; q < s->pin_count; q++) {
            soft_pin *p = &s->pins[q];
            if (k == 0)
                memcpy(p->from, s->x[p->node], sizeof p->from);
            float p0[3], p1[3], v[3];
            lerp3(p->from, p->to, (float)k / (float)n, p0);
            if (k + 1 >= n)
                memcpy(p1, p->to, sizeof p1);
            else
                lerp3(p->from, p->to, (float)(k + 1) / (float)n, p1);
            for (int j = 0; j < 3; j++)
                v[j] = (p1[j] - p0[j]) / dt;
            bc->soft_set_node(s->bc, p->node, p0, v);
            if (s->pose_k > 0) { /* the pose below is taken where the step takes the pins */
                memcpy(s->x[p->node], p0, sizeof p0);
                memcpy(s->v[p->node], v, sizeof v);
            }
        }
        carry_with_pins(wm, s, k, n, dt);
        if (!s->cloth)
            plush__world_soft_pose_before_step(wm, s, dt);
    }
}

/* ---- after a fixed step ------------------------------------------------------------------------- */

/* The first node at x (speed v) out of reach, or not pinned and moving faster than limit (from `was` over dt, or by v),
 * or -1. Bullet's step is checked so (x the step's result, was where it began), and plush's passes after it (x
 * where they left the nodes, was the step's result). */
static int64_t find_blowup(const world_soft *s, const float (*x)[3], const float (*v)[3], const float (*was)[3],
                           float dt, float limit, double *speed)
{
    double limit2 = (double)limit * limit;
    for (size_t i = 0; i < s->node_count; i++) {
        *speed = INFINITY;
        if (!plush__world_in_reach(x[i]) || !plush__finite3(v[i]))
            return (int64_t)i;
        if (s->pinned[i])
            continue;
        double d2 = 0, v2 = 0;
        for (int j = 0; j < 3; j++) {
            double d = ((double)x[i][j] - was[i][j]) / dt;
            d2 += d * d;
            v2 += (double)v[i][j] * v[i][j];
        }
        *speed = sqrt(d2 > v2 ? d2 : v2);
        if (d2 > limit2 || v2 > limit2)
            return (int64_t)i;
    }
    return -1;
}

/* A soft body that blew up is put back to its last good state, at rest, and goes on; one that blows up
 * PLUSH_WORLD_SOFT_RESETS times is frozen there (something in it fails every time). */
static void fail(plush_world_model *wm, size_t i, int64_t node, double speed, uint64_t step, plush_diag *diag)
{
    const plush_bulletc_api *bc = wm->world->bc;
    world_soft *s = &wm->soft[i];
    const char *name = wm->model->soft_bodies[i].name.s ? wm->model->soft_bodies[i].name.s : "";
    bool freeze = s->resets >= PLUSH_WORLD_SOFT_RESETS;
    if (!freeze) {
        s->resets++;
        memset(s->v, 0, s->node_count * sizeof *s->v);
    }
    bc->soft_set_all_nodes(s->bc, (const float(*)[3])s->x, (const float(*)[3])s->v);
    if (freeze) {
        bc->soft_freeze(s->bc);
        s->state = PLUSH_SOFT_FAILED;
    }
    s->failed_step = (int64_t)step;
    plush__world_soft_update_normals(s);
    char what[96];
    if (freeze)
        snprintf(what, sizeof what, "it blew up %u times before: frozen there", (unsigned)s->resets);
    else
        snprintf(what, sizeof what, "it goes on from there, at rest (%u of %u)", (unsigned)s->resets,
                 (unsigned)PLUSH_WORLD_SOFT_RESETS);
    if (isfinite(speed))
        plush_diag_warn(diag, -1, "soft body", (int64_t)i,
                        "\"%s\" blew up at step %llu: node %lld moved at %.6g units/s (limit %g); restored to its "
                        "last good state; %s",
                        name, (unsigned long long)step, (long long)node, speed, (double)wm->world->desc.max_node_speed,
                        what);
    else
        plush_diag_warn(diag, -1, "soft body", (int64_t)i,
                        "\"%s\" blew up at step %llu: node %lld is not finite or out of reach; restored to its last "
                        "good state; %s",
                        name, (unsigned long long)step, (long long)node, what);
}

/* x = R * local + t for a column-major rigid transform m. */
static void to_world(const float m[16], const float p[3], float out[3])
{
    for (int i = 0; i < 3; i++)
        out[i] = m[i] * p[0] + m[4 + i] * p[1] + m[8 + i] * p[2] + m[12 + i];
}

/* Near mode (a reading of the PMX notes, which only name the flag): after the step the
 * anchored node and its body are made to meet exactly. A body whose position is prescribed (mode 0
 * follows its bone, mode 2 takes its bone's position) pulls the node onto the anchor point; a simulated
 * body (mode 1) is moved, without turning, so that its anchor points lie on their nodes (by their mean
 * offset when several near anchors hold it). Pinned nodes stay with their pin. */
static void near_mode_pull(plush_world_model *wm, world_soft *s)
{
    const plush_bulletc_api *bc = wm->world->bc;
    for (size_t k = 0; k < s->anchor_count; k++) {
        const soft_anchor *a = &s->anchors[k];
        if (!a->near_mode || s->pinned[a->node] || wm->model->rigid_bodies[a->body].mode == PLUSH_PMX_RIGID_PHYSICS)
            continue;
        float m[16], w[3];
        bc->body_get_transform(wm->bodies[a->body].bc, m);
        to_world(m, a->local, w);
        if (plush__finite3(w)) {
            memcpy(s->x[a->node], w, sizeof w);
            bc->soft_set_node(s->bc, a->node, w, s->v[a->node]);
        }
    }
}

static void near_mode_move_bodies(plush_world_model *wm, const world_soft *s)
{
    const plush_bulletc_api *bc = wm->world->bc;
    for (size_t g = 0; g < s->near_dynamic_count;) {
        int32_t body = s->anchors[s->near_dynamic[g]].body;
        float m[16];
        bc->body_get_transform(wm->bodies[body].bc, m);
        double sum[3] = {0, 0, 0};
        size_t count = 0;
        for (; g < s->near_dynamic_count && s->anchors[s->near_dynamic[g]].body == body; g++, count++) {
            const soft_anchor *a = &s->anchors[s->near_dynamic[g]];
            float w[3];
            to_world(m, a->local, w);
            for (int j = 0; j < 3; j++)
                sum[j] += (double)s->x[a->node][j] - w[j];
        }
        for (int j = 0; j < 3; j++)
            m[12 + j] += (float)(sum[j] / (double)count);
        if (isfinite(m[12]) && isfinite(m[13]) && isfinite(m[14]))
            bc->body_set_transform(wm->bodies[body].bc, m);
    }
}

void plush__world_soft_after_substep(plush_world_model *wm, int k, int n, uint64_t step, plush_diag *diag)
{
    if (!wm->soft)
        return;
    const plush_bulletc_api *bc = wm->world->bc;
    float limit = wm->world->desc.max_node_speed; /* the world's defaults make it positive */
    for (size_t i = 0; i < wm->model->soft_body_count; i++) {
        world_soft *s = active(wm, i);
        if (!s)
            continue;
        float dt = s->dt > 0 ? s->dt : 1.0f / (wm->world->desc.physics_hz > 0 ? wm->world->desc.physics_hz : (float)PLUSH_WORLD_DEFAULT_HZ);
        if (s->cloth)
            plush__world_soft_cloth_step(wm, s, k, n, dt);
        else
            bc->soft_get_nodes(s->bc, 0, s->node_count, s->scratch_x, s->scratch_v, NULL);
        double speed = 0;
        int64_t bad = find_blowup(s, (const float(*)[3])s->scratch_x, (const float(*)[3])s->scratch_v,
                                  (const float(*)[3])s->x, dt, limit, &speed);
        if (bad >= 0) {
            fail(wm, i, bad, speed, step, diag);
            continue;
        }
        memcpy(s->x, s->scratch_x, s->node_count * sizeof *s->x);
        memcpy(s->v, s->scratch_v, s->node_count * sizeof *s->v);
        near_mode_pull(wm, s);
        near_mode_move_bodies(wm, s);
        plush__world_soft_collide(wm, s);
        plush__world_soft_hold_folds(wm, s, PLUSH__SOFT_FOLD_ROUNDS);
        repair_inverted(wm, s);
        /* plush's own passes answer to the same guard as Bullet's step: a node they sent out of reach (Bullet's
         * contacts then read a distance field off its cells) puts the body back to the step's checked state */
        bad = find_blowup(s, (const float(*)[3])s->x, (const float(*)[3])s->v, (const float(*)[3])s->scratch_x, dt,
                          limit, &speed);
        if (bad >= 0) {
            memcpy(s->x, s->scratch_x, s->node_count * sizeof *s->x);
            fail(wm, i, bad, speed, step, diag);
            continue;
        }
        if (k + 1 >= n) {
            /* Float integration lands within rounding of the target; the step ends exactly on it. */
            for (size_t q = 0; q < s->pin_count; q++) {
                const soft_pin *p = &s->pins[q];
                memcpy(s->x[p->node], p->to, sizeof p->to);
                bc->soft_set_node(s->bc, p->node, p->to, s->v[p->node]);
            }
            plush__world_soft_update_normals(s);
        }
    }
    /* the soft bodies that lay against each other at rest, tied (world_soft_tie.c) */
    plush__world_soft_tie(wm);
    for (size_t i = 0; k + 1 >= n && wm->tie_count && i < wm->model->soft_body_count; i++)
        if (active(wm, i))
            plush__world_soft_update_normals(&wm->soft[i]);
}

/* ---- reset and destroy --------------------------------------------------------------------------- */

void plush__world_soft_reset(plush_world_model *wm, const float (*vertex_positions)[3])
{
    if (!wm->soft)
        return;
    const plush_bulletc_api *bc = wm->world->bc;
    for (size_t i = 0; i < wm->model->soft_body_count; i++) {
        world_soft *s = active(wm, i); /* a failed body stays frozen where it was last good */
        if (!s)
            continue;
        for (size_t q = 0; q < s->node_count; q++) {
            const float *p = vertex_positions ? vertex_positions[s->node_vertex[q]] : s->rest[q];
            memcpy(s->x[q], plush__finite3(p) ? p : s->rest[q], sizeof s->x[q]);
            s->v[q][0] = s->v[q][1] = s->v[q][2] = 0;
        }
        for (size_t q = 0; q < s->pin_count; q++) {
            soft_pin *p = &s->pins[q];
            if (vertex_positions && plush__finite3(vertex_positions[p->vertex]))
                memcpy(s->x[p->node], vertex_positions[p->vertex], sizeof s->x[p->node]);
            memcpy(p->to, s->x[p->node], sizeof p->to);
        }
        plush__world_soft_limit_pin_targets(s);
        for (size_t q = 0; q < s->pin_count; q++) {
            soft_pin *p = &s->pins[q];
            memcpy(s->x[p->node], p->to, sizeof s->x[p->node]);
            memcpy(p->from, p->to, sizeof p->from);
        }
        /* bone skinning can part two free nodes further than a link stretches (a hem's nodes weighted to
         * either leg, the legs apart at the first pose), and fold two faces back onto each other (a dress's
         * cage between the legs of a dance's first pose: crease p99 129 degrees at its frame 0): both held,
         * as after a step -- the guards' rounds a few times over, as a whole first pose can fold a face
         * further than a substep does */
        if (s->collide_side) /* where each face lay against the bodies is known again from the next step */
            memset(s->collide_side, 0, s->collide_count * s->triangle_count * sizeof *s->collide_side);
        plush__world_soft_limit_strain(s);
        plush__world_soft_hold_folds(wm, s, RESET_FOLD_ROUNDS);
        plush__world_soft_cloth_reset(s);
        bc->soft_set_all_nodes(s->bc, (const float(*)[3])s->x, (const float(*)[3])s->v);
        plush__world_soft_update_normals(s);
    }
}

void plush__world_soft_destroy(plush_world_model *wm)
{
    /* Every world_soft buffer lives in wm->arena (freed by world.c with the model) and the Bullet soft
     * bodies, frozen ones included, belong to the Bullet world: only the pointer is left to drop. */
    wm->soft = NULL;
}

/* ---- read-back ----------------------------------------------------------------------------------- */

void plush_world_soft_get_info(const plush_world_model *wm, size_t soft_body, plush_world_soft_info *out)
{
    memset(out, 0, sizeof *out);
    out->state = PLUSH_SOFT_SKIPPED;
    out->failed_step = -1;
    if (!wm || !wm->soft || soft_body >= wm->model->soft_body_count)
        return;
    const world_soft *s = &wm->soft[soft_body];
    out->state = s->state;
    out->failed_step = s->failed_step;
    out->resets = s->resets;
    if (s->state == PLUSH_SOFT_SKIPPED)
        return;
    out->node_count = s->node_count;
    out->rest_nodes = (const float(*)[3])s->rest;
    out->node_vertex = s->node_vertex;
    out->triangle_count = s->triangle_count;
    out->triangles = (const uint32_t(*)[3])s->triangles;
    out->pinned_count = s->pin_count;
    out->anchored_count = s->anchored_nodes;
    out->pinned = s->pinned;
    plush__world_soft_cloth_counts(s, &out->cloth_solves, &out->cloth_unfinished);
}

void plush_world_soft_nodes(const plush_world_model *wm, size_t soft_body, float (*positions)[3],
                            float (*normals)[3])
{
    if (!wm || !wm->soft || soft_body >= wm->model->soft_body_count)
        return;
    const world_soft *s = &wm->soft[soft_body];
    if (s->state == PLUSH_SOFT_SKIPPED)
        return;
    if (positions)
        memcpy(positions, s->x, s->node_count * sizeof *s->x);
    if (normals)
        memcpy(normals, s->normals, s->node_count * sizeof *s->normals);
}

void plush_world_soft_vertices(const plush_world_model *wm, float (*positions)[3], float (*normals)[3])
{
    if (!wm || !wm->soft)
        return;
    for (size_t i = 0; i < wm->model->soft_body_count; i++) {
        const world_soft *s = &wm->soft[i];
        if (s->state == PLUSH_SOFT_SKIPPED)
            continue;
        /* Every vertex of the material, not only the one node_vertex names: seams share a node. */
        for (size_t m = 0; m < s->member_count; m++) {
            uint32_t v = s->members[m];
            int32_t node = s->member_node[m];
            if (positions)
                memcpy(positions[v], s->x[node], sizeof positions[v]);
            if (normals)
                memcpy(normals[v], s->normals[node], sizeof normals[v]);
        }
    }
}
