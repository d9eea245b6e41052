/* The physics world: MMD rigid bodies, the bone <-> body exchange and fixed-rate stepping, over
 * libplush_physics.so (loaded once per process, world_library.c). Joints are in world_joints.c, soft bodies in world_soft*.c.
 *
 * A body's pose is its bone's global transform times a fixed offset: offset = T(bone.position)^-1 *
 * (the body's PMX pose), taken at rest, so a bone at rest puts its body exactly where the file does.
 * Modes (PMX):
 *   0  kinematic: placed at bone * offset before every fixed step, moving smoothly (lerp / slerp) from
 *      where it was at the start of plush_world_step to the target set_bones gave.
 *   1  dynamic: simulated; get_bones writes body * offset^-1 to its bone.
 *   2  dynamic for rotation: around every fixed step its position is moved so that its bone, as
 *      get_bones reports it (the body's rotation, the bone's position), sits at the bone's position;
 *      during the step its linear velocity is the bone's own velocity, its angular velocity is simulated.
 *      The bone's position is where the bones above it put it, as the MMD runtimes propagate a physics
 *      bone's pose to the bones below it (saba, three.js): with no bone above it that physics moves, the
 *      animated position (interpolated like mode 0); else where the nearest such bone, as physics leaves
 *      it, carries it (its place in that bone's frame, as the animation poses both). So a chain of mode-2
 *      bodies (a hair's, a skirt's) swings link by link; before, every link sat on its animated position
 *      and the chain could only turn in place (Alicia's hair: 0.59% of its size from the pose without
 *      physics on the long dance).
 * A dynamic body with mass 0 (or a mass that is not a positive finite number) would be static in
 * Bullet; it is simulated with mass 1 and a warning instead, since the author asked for a moving body. */
#define _GNU_SOURCE
#include "physics/world_internal.h"
#include "core/common.h"
#include "plush/sys/physics.h"
#include "plush/sys/core.h"
#include "plush/sys/pmx.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { GROUND_HALF_XZ = 1000, GROUND_HALF_Y = 50 };

/* ---- the world --------------------------------------------------------------------------------- */

static bool finite16(const float m[16])
{
    for (int k = 0; k < 16; k++)
        if (!isfinite(m[k]))
            return false;
    return true;
}

static plush_status apply_defaults(const plush_world_desc *in, plush_world_desc *d, plush_diag *diag)
{
    *d = in ? *in : (plush_world_desc){0};
    if (!plush__finite3(d->gravity) || !isfinite(d->physics_hz) || !isfinite(d->air_density) || !isfinite(d->ground_y) ||
        !isfinite(d->max_node_speed))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "physics", -1, "world settings must be finite numbers");
    if (d->physics_hz < 0 || d->max_substeps < 0 || d->air_density < 0 || d->max_node_speed < 0)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "physics", -1,
                               "physics rate, substeps, air density and node speed must not be negative");
    if (d->no_gravity)
        d->gravity[0] = d->gravity[1] = d->gravity[2] = 0;
    else if (d->gravity[0] == 0 && d->gravity[1] == 0 && d->gravity[2] == 0)
        d->gravity[1] = -98.0f;
    if (d->physics_hz == 0)
        d->physics_hz = PLUSH_WORLD_DEFAULT_HZ;
    if (d->max_substeps == 0)
        d->max_substeps = PLUSH_WORLD_MAX_SUBSTEPS;
    if (d->air_density == 0)
        d->air_density = 1.2f;
    if (d->ground_mask == 0)
        d->ground_mask = 0xffff;
    if (d->max_node_speed == 0)
        d->max_node_speed = 10000;
    return PLUSH_OK;
}

/* Bullet keeps collision filters in shorts; PMX's 16 bits are carried over bit for bit. */
static int16_t filter_bits(uint32_t bits)
{
    uint16_t u = (uint16_t)bits;
    int16_t s;
    memcpy(&s, &u, sizeof s);
    return s;
}

static plush_status make_ground(plush_world *w, plush_diag *diag)
{
    char err[BC_ERR] = "";
    const float half[3] = {GROUND_HALF_XZ, GROUND_HALF_Y, GROUND_HALF_XZ};
    bc_shape *shape = w->bc->shape_create(w->bw, BC_BOX, half, err);
    bc_body_desc bd = {.mass = 0, .friction = 0.5f, .restitution = 0, .group = filter_bits(0xffff),
                       .mask = filter_bits(w->desc.ground_mask)};
    plush__world_mat_identity(bd.transform);
    bd.transform[13] = w->desc.ground_y - GROUND_HALF_Y;
    w->ground = shape ? w->bc->body_create(w->bw, shape, &bd, err) : NULL;
    if (!w->ground)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "physics", -1, "cannot create the ground: %s", err);
    return PLUSH_OK;
}

plush_status plush_world_create(const plush_world_desc *desc, plush_world **out, plush_diag *diag)
{
    if (!out)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "physics", -1, "no output for the world");
    *out = NULL;
    plush_world_desc d;
    plush_status st = apply_defaults(desc, &d, diag);
    if (st != PLUSH_OK)
        return st;
    plush_world *w = calloc(1, sizeof *w);
    if (!w)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "physics", -1, "out of memory");
    w->desc = d;
    if ((w->bc = plush__world_library(diag)) == NULL) {
        free(w);
        return PLUSH_E_LIBRARY;
    }
    char err[BC_ERR] = "";
    bc_world_desc bwd = {.gravity = {d.gravity[0], d.gravity[1], d.gravity[2]}, .air_density = d.air_density};
    w->bw = w->bc->world_create(&bwd, err);
    if (!w->bw) {
        plush_world_destroy(w);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "physics", -1, "cannot create the Bullet world: %s", err);
    }
    if (d.ground && (st = make_ground(w, diag)) != PLUSH_OK) {
        plush_world_destroy(w);
        return st;
    }
    *out = w;
    return PLUSH_OK;
}

void plush_world_destroy(plush_world *world)
{
    if (!world)
        return;
    for (plush_world_model *wm = world->models, *next; wm; wm = next) {
        next = wm->next;
        plush__world_soft_destroy(wm);
        plush_arena_free(&wm->arena);
        free(wm);
    }
    if (world->bw)
        world->bc->world_destroy(world->bw);
    free(world);
}

/* ---- rigid bodies ------------------------------------------------------------------------------ */

static void rest_bone(const plush_pmx_model *m, int32_t bone, float out[16])
{
    plush__world_mat_identity(out);
    if (bone >= 0)
        memcpy(out + 12, m->bones[bone].position, 3 * sizeof(float));
}

/* The bone's global now: the caller's, or its rest pose; identity for no bone. */
static void bone_global(const plush_world_model *wm, int32_t bone, const float (*globals)[16], float out[16])
{
    if (bone >= 0 && globals)
        memcpy(out, globals[bone], 16 * sizeof(float));
    else
        rest_bone(wm->model, bone, out);
}

/* Bullet's sizes from PMX's: sphere radius; box half extents; capsule radius and cylinder height. A
 * radius or half extent below 0.001 (or NaN) becomes 0.001 with a warning; a capsule's height may be 0
 * (a sphere). */
static void shape_size(const plush_pmx_rigid_body *rb, size_t i, float size[3], plush_diag *diag)
{
    int used = rb->shape == PLUSH_PMX_RIGID_BOX ? 3 : rb->shape == PLUSH_PMX_RIGID_CAPSULE ? 2 : 1;
    bool clamped = false;
    for (int k = 0; k < 3; k++) {
        size[k] = k < used ? rb->size[k] : 0;
        bool height = rb->shape == PLUSH_PMX_RIGID_CAPSULE && k == 1;
        if (k < used && !(size[k] >= (height ? 0.0f : 1e-3f))) { /* also catches NaN */
            size[k] = height ? 0 : 1e-3f;
            clamped = true;
        }
    }
    if (clamped)
        plush_diag_warn(diag, -1, "rigid body", (int64_t)i,
                        "\"%s\": size %g %g %g is too small for its shape; simulated with %g %g %g instead", rb->name.s,
                        (double)rb->size[0], (double)rb->size[1], (double)rb->size[2], (double)size[0],
                        (double)size[1], (double)size[2]);
}

/* An unknown shape is simulated as a sphere (shape_size reads it as one too). */
static bc_shape_kind bullet_shape(uint8_t shape)
{
    switch (shape) {
    case PLUSH_PMX_RIGID_BOX: return BC_BOX;
    case PLUSH_PMX_RIGID_CAPSULE: return BC_CAPSULE;
    default: return BC_SPHERE;
    }
}

static plush_status add_body(plush_world_model *wm, size_t i, const float (*globals)[16], plush_diag *diag)
{
    const plush_bulletc_api *bc = wm->world->bc;
    const plush_pmx_rigid_body *rb = &wm->model->rigid_bodies[i];
    world_body *b = &wm->bodies[i];
    b->above = -1; /* chain_mode2 links it once every body is made */
    if (!plush__finite3(rb->position) || !plush__finite3(rb->rotation) || !plush__finite3(rb->size) || !isfinite(rb->mass) ||
        !isfinite(rb->linear_damping) || !isfinite(rb->angular_damping) || !isfinite(rb->restitution) ||
        !isfinite(rb->friction)) {
        /* left out (b->bc stays NULL, every loop over the bodies skips it); the rest simulates */
        const plush_pmx_value_issue *q = plush_pmx_value_issue_find(wm->model, "rigid body", (int64_t)i);
        plush_diag_warn(diag, q ? q->offset : -1, "rigid body", (int64_t)i,
                        "\"%s\": %s; left out of the simulation", rb->name.s ? rb->name.s : "",
                        q ? q->what : "a value is not finite");
        b->bone = -1;
        b->mode = PLUSH_PMX_RIGID_FOLLOW_BONE;
        plush__world_mat_identity(b->offset);
        plush__world_mat_identity(b->offset_inv);
        return PLUSH_OK;
    }
    b->bone = rb->bone;
    if (rb->bone < -1 || (rb->bone >= 0 && (size_t)rb->bone >= wm->model->bone_count)) {
        plush_diag_warn(diag, -1, "rigid body", (int64_t)i, "\"%s\": bone %d out of range; the body has no bone",
                        rb->name.s, (int)rb->bone);
        b->bone = -1;
    }
    b->mode = rb->mode <= PLUSH_PMX_RIGID_PHYSICS_BONE ? rb->mode : PLUSH_PMX_RIGID_PHYSICS;
    if (rb->mode > PLUSH_PMX_RIGID_PHYSICS_BONE)
        plush_diag_warn(diag, -1, "rigid body", (int64_t)i, "\"%s\": unknown mode %d, simulated as mode 1",
                        rb->name.s, (int)rb->mode);

    float pose[16], rest[16], rest_inv[16], bone[16];
    plush__world_mat_pmx(rb->position, rb->rotation, pose);
    rest_bone(wm->model, b->bone, rest);
    plush__world_mat_rigid_inverse(rest, rest_inv);
    plush__world_mat_mul(rest_inv, pose, b->offset);
    plush__world_mat_rigid_inverse(b->offset, b->offset_inv);
    bone_global(wm, b->bone, globals, bone);
    if (!finite16(bone))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "rigid body", (int64_t)i,
                               "\"%s\": the global matrix of bone %d is not finite", rb->name.s, (int)b->bone);
    plush__world_mat_mul(bone, b->offset, b->to);
    memcpy(b->from, b->to, sizeof b->from);
    memcpy(b->bone_from, bone + 12, sizeof b->bone_from);
    memcpy(b->bone_to, bone + 12, sizeof b->bone_to);

    float size[3];
    shape_size(rb, i, size, diag);
    bc_body_desc bd = {.kinematic = b->mode == PLUSH_PMX_RIGID_FOLLOW_BONE, .mass = rb->mass, .linear_damping = rb->linear_damping,
                       .angular_damping = rb->angular_damping, .restitution = rb->restitution,
                       .friction = rb->friction, .group = filter_bits(1u << (rb->group & 15)),
                       .mask = filter_bits(rb->mask)};
    if (rb->group > 15)
        plush_diag_warn(diag, -1, "rigid body", (int64_t)i, "\"%s\": group %d out of range, used as %d", rb->name.s,
                        (int)rb->group, (int)(rb->group & 15));
    if (b->mode != PLUSH_PMX_RIGID_FOLLOW_BONE && !(rb->mass > 0)) {
        plush_diag_warn(diag, -1, "rigid body", (int64_t)i,
                        "\"%s\": dynamic body with mass %g would be static; simulated with mass 1", rb->name.s,
                        (double)rb->mass);
        bd.mass = 1;
    }
    memcpy(bd.transform, b->to, sizeof bd.transform);
    char err[BC_ERR] = "";
    bc_shape *shape = bc->shape_create(wm->world->bw, bullet_shape(rb->shape), size, err);
    b->bc = shape ? bc->body_create(wm->world->bw, shape, &bd, err) : NULL;
    if (!b->bc)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "rigid body", (int64_t)i, "\"%s\": Bullet refused it: %s",
                               rb->name.s, err);
    return PLUSH_OK;
}

/* A mode-2 body's place in the frame of the bone of the body above it, as the globals pose both: R^T (p - t). A
 * pose that is not finite leaves it as it was. */
static void chain_rel(const plush_world_model *wm, const world_body *b, const float (*globals)[16], float rel[3])
{
    float a[16], g[16];
    bone_global(wm, wm->bodies[b->above].bone, globals, a);
    bone_global(wm, b->bone, globals, g);
    if (!finite16(a) || !finite16(g))
        return;
    float d[3] = {g[12] - a[12], g[13] - a[13], g[14] - a[14]};
    for (int r = 0; r < 3; r++)
        rel[r] = a[4 * r] * d[0] + a[4 * r + 1] * d[1] + a[4 * r + 2] * d[2];
}

/* Point rel of the frame m (a bone's global): m's rotation times rel, plus its translation (chain_rel's inverse). */
static void carry(const float m[16], const float rel[3], float p[3])
{
    for (int r = 0; r < 3; r++)
        p[r] = m[r] * rel[0] + m[4 + r] * rel[1] + m[8 + r] * rel[2] + m[12 + r];
}

/* The mode-2 chains: for each mode-2 body, the body that drives the nearest bone above its bone that physics
 * moves (the last such body on that bone, as get_bones writes them in order), and an order of those bodies in
 * which each comes after the one above it. Linear in the bones and bodies, whatever the tree (each walk up stops
 * at a bone or body already settled and settles the ones it passed); a loop of bones or of bodies (a broken file)
 * leaves the bones on it where they are animated. */
static plush_status chain_mode2(plush_world_model *wm, const float (*globals)[16], plush_diag *diag)
{
    const plush_pmx_model *m = wm->model;
    size_t nb = m->bone_count, nr = m->rigid_body_count, most = (nb > nr ? nb : nr) + 1;
    int32_t *driver = malloc((nb ? nb : 1) * sizeof *driver), *nearest = malloc((nb ? nb : 1) * sizeof *nearest);
    uint32_t *path = malloc(most * sizeof *path), *level = malloc((nr ? nr : 1) * sizeof *level);
    size_t *first = calloc(nr + 2, sizeof *first);
    wm->chained = plush_arena_array(&wm->arena, nr ? nr : 1, sizeof *wm->chained);
    plush_status st = PLUSH_OK;
    if (!driver || !nearest || !path || !level || !first || !wm->chained) {
        st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "physics", -1, "out of memory");
        goto done;
    }
    enum { UNKNOWN = -2 };
    for (size_t k = 0; k < nb; k++)
        driver[k] = -1, nearest[k] = UNKNOWN;
    for (size_t i = 0; i < nr; i++) {
        const world_body *b = &wm->bodies[i];
        if (b->bc && b->bone >= 0 && b->mode != PLUSH_PMX_RIGID_FOLLOW_BONE)
            driver[b->bone] = (int32_t)i;
    }
    /* nearest[k]: the body driving the nearest bone strictly above bone k that physics moves (-1: none) */
    for (size_t k = 0; k < nb; k++) {
        size_t len = 0;
        int32_t found = -1;
        for (uint32_t at = (uint32_t)k; nearest[at] == UNKNOWN;) {
            if (len == most) /* round a loop of bones */
                break;
            path[len++] = at;
            int32_t p = m->bones[at].parent;
            if (p < 0 || (size_t)p >= nb)
                break;
            if (driver[p] >= 0) {
                found = driver[p];
                break;
            }
            if (nearest[p] != UNKNOWN) {
                found = nearest[p];
                break;
            }
            at = (uint32_t)p;
        }
        for (size_t j = 0; j < len; j++)
            nearest[path[j]] = found;
    }
    /* level: 0 for a body with no body above it, else one more than the one above it */
    for (size_t i = 0; i < nr; i++) {
        world_body *b = &wm->bodies[i];
        b->above = -1;
        if (b->bc && b->bone >= 0 && b->mode == PLUSH_PMX_RIGID_PHYSICS_BONE && nearest[b->bone] != (int32_t)i)
            b->above = nearest[b->bone];
        level[i] = b->above < 0 ? 0 : UINT32_MAX;
    }
    for (size_t i = 0; i < nr; i++) {
        size_t len = 0;
        uint32_t at = (uint32_t)i;
        while (level[at] == UINT32_MAX && len < nr) {
            path[len++] = at;
            at = (uint32_t)wm->bodies[at].above;
        }
        if (level[at] == UINT32_MAX) { /* round a loop of bodies: the bones on it stay where they are animated */
            for (size_t j = 0; j < len; j++)
                wm->bodies[path[j]].above = -1, level[path[j]] = 0;
            continue;
        }
        for (size_t j = len; j-- > 0;)
            level[path[j]] = level[at] + (uint32_t)(len - j);
    }
    /* the chained bodies by level (a counting sort) */
    for (size_t i = 0; i < nr; i++)
        if (level[i] > 0)
            first[level[i] + 1]++;
    for (size_t d = 1; d <= nr; d++)
        first[d + 1] += first[d];
    for (size_t i = 0; i < nr; i++) {
        world_body *b = &wm->bodies[i];
        if (level[i] == 0)
            continue;
        wm->chained[first[level[i]]++] = (uint32_t)i;
        chain_rel(wm, b, globals, b->rel_to);
        memcpy(b->rel_from, b->rel_to, sizeof b->rel_from);
    }
    wm->chained_count = nr ? first[nr] : 0;
done:
    free(driver);
    free(nearest);
    free(path);
    free(level);
    free(first);
    return st;
}

static plush_status build_model(plush_world_model *wm, const float (*globals)[16], plush_diag *diag)
{
    const plush_pmx_model *m = wm->model;
    wm->bodies = plush_arena_array(&wm->arena, m->rigid_body_count ? m->rigid_body_count : 1, sizeof *wm->bodies);
    wm->joints = plush_arena_array(&wm->arena, m->joint_count ? m->joint_count : 1, sizeof *wm->joints);
    if (!wm->bodies || !wm->joints)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "physics", -1, "out of memory");
    for (size_t i = 0; i < m->rigid_body_count; i++) {
        plush_status st = add_body(wm, i, globals, diag);
        if (st != PLUSH_OK)
            return st;
    }
    plush_status st = chain_mode2(wm, globals, diag);
    if (st != PLUSH_OK)
        return st;
    for (size_t j = 0; j < m->joint_count; j++)
        wm->joints[j] = plush__world_joint_create(wm, j, diag);
    return plush__world_soft_add(wm, diag);
}

plush_status plush_world_add_model(plush_world *world, const plush_pmx_model *model, const float (*bone_globals)[16],
                                   plush_world_model **out, plush_diag *diag)
{
    if (out)
        *out = NULL;
    if (!world || !model || !out)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "physics", -1, "add_model needs a world, a model and out");
    plush_status geometry = plush_pmx_require_geometry(model, diag); /* soft bodies are built from the vertices */
    if (geometry != PLUSH_OK)
        return geometry;
    if ((model->rigid_body_count && !model->rigid_bodies) || (model->joint_count && !model->joints) ||
        (model->bone_count && !model->bones))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "physics", -1, "model arrays missing");
    plush_world_model *wm = calloc(1, sizeof *wm);
    if (!wm)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "physics", -1, "out of memory");
    wm->world = world;
    wm->model = model;
    /* Linked first: whatever Bullet made before a failure is owned by the world and freed with it. The
     * bodies made so far stay in the simulation (the C ABI has no removal), so a failed model's bodies
     * keep falling until the world is destroyed; the only failures are out-of-memory and bad values. */
    wm->next = world->models;
    world->models = wm;
    plush_status st = build_model(wm, bone_globals, diag);
    if (st != PLUSH_OK) {
        wm->broken = true;
        return st;
    }
    *out = wm;
    return PLUSH_OK;
}

/* ---- bone exchange ----------------------------------------------------------------------------- */

void plush_world_set_bones(plush_world_model *wm, const float (*bone_globals)[16])
{
    if (!wm)
        return;
    for (size_t i = 0; i < wm->model->rigid_body_count; i++) {
        world_body *b = &wm->bodies[i];
        if (!b->bc || b->bone < 0)
            continue;
        float bone[16], to[16];
        bone_global(wm, b->bone, bone_globals, bone);
        plush__world_mat_mul(bone, b->offset, to);
        /* a broken input keeps the last target rather than poisoning Bullet */
        if (!finite16(bone) || !finite16(to) || !plush__world_in_reach(to + 12))
            continue;
        memcpy(b->to, to, sizeof b->to); /* mode 1 keeps it only as the guard's place to put it back */
        if (b->mode == PLUSH_PMX_RIGID_PHYSICS_BONE)
            memcpy(b->bone_to, bone + 12, sizeof b->bone_to);
        if (b->above >= 0)
            chain_rel(wm, b, bone_globals, b->rel_to);
    }
}

void plush_world_reset(plush_world_model *wm, const float (*bone_globals)[16], const float (*vertex_positions)[3])
{
    if (!wm)
        return;
    const plush_bulletc_api *bc = wm->world->bc;
    static const float zero[3] = {0, 0, 0};
    for (size_t i = 0; i < wm->model->rigid_body_count; i++) {
        world_body *b = &wm->bodies[i];
        if (!b->bc)
            continue;
        float bone[16];
        bone_global(wm, b->bone, bone_globals, bone);
        if (!finite16(bone))
            rest_bone(wm->model, b->bone, bone);
        plush__world_mat_mul(bone, b->offset, b->to);
        memcpy(b->from, b->to, sizeof b->from);
        memcpy(b->bone_from, bone + 12, sizeof b->bone_from);
        memcpy(b->bone_to, bone + 12, sizeof b->bone_to);
        if (b->above >= 0) {
            chain_rel(wm, b, bone_globals, b->rel_to);
            memcpy(b->rel_from, b->rel_to, sizeof b->rel_from);
        }
        bc->body_set_transform(b->bc, b->to);
        bc->body_set_velocity(b->bc, zero, zero);
        bc->body_clear_forces(b->bc);
    }
    plush__world_soft_reset(wm, vertex_positions);
}

void plush_world_set_pins(plush_world_model *wm, const float (*vertex_positions)[3])
{
    if (wm)
        plush__world_soft_set_pins(wm, vertex_positions);
}

void plush_world_get_bones(const plush_world_model *wm, float (*bone_globals)[16], bool *driven)
{
    if (!wm || !bone_globals)
        return;
    if (driven)
        memset(driven, 0, wm->model->bone_count * sizeof *driven);
    for (size_t i = 0; i < wm->model->rigid_body_count; i++) {
        const world_body *b = &wm->bodies[i];
        if (!b->bc || b->bone < 0 || b->mode == PLUSH_PMX_RIGID_FOLLOW_BONE || b->above >= 0)
            continue;
        float body[16], bone[16];
        wm->world->bc->body_get_transform(b->bc, body);
        plush__world_mat_mul(body, b->offset_inv, bone);
        if (b->mode == PLUSH_PMX_RIGID_PHYSICS_BONE)
            memcpy(bone + 12, bone_globals[b->bone] + 12, 3 * sizeof(float));
        memcpy(bone_globals[b->bone], bone, sizeof bone);
        if (driven)
            driven[b->bone] = true;
    }
    /* a chained mode-2 bone where the bone above it, as physics left it, carries it */
    for (size_t k = 0; k < wm->chained_count; k++) {
        const world_body *b = &wm->bodies[wm->chained[k]];
        const float *a = bone_globals[wm->bodies[b->above].bone];
        float body[16], bone[16];
        wm->world->bc->body_get_transform(b->bc, body);
        plush__world_mat_mul(body, b->offset_inv, bone);
        carry(a, b->rel_to, bone + 12);
        memcpy(bone_globals[b->bone], bone, sizeof bone);
        if (driven)
            driven[b->bone] = true;
    }
}

plush_status plush_world_impulse(plush_world_model *wm, int32_t rigid_body, const float velocity[3],
                                 const float torque[3], bool local)
{
    if (!wm || !velocity || !torque || rigid_body < 0 || (size_t)rigid_body >= wm->model->rigid_body_count ||
        !plush__finite3(velocity) || !plush__finite3(torque))
        return PLUSH_E_ARGUMENT;
    const world_body *b = &wm->bodies[rigid_body];
    if (!b->bc || b->mode == PLUSH_PMX_RIGID_FOLLOW_BONE)
        return PLUSH_OK;
    const plush_bulletc_api *bc = wm->world->bc;
    float lin[3] = {0, 0, 0}, ang[3] = {0, 0, 0};
    bool stop = velocity[0] == 0 && velocity[1] == 0 && velocity[2] == 0 && torque[0] == 0 && torque[1] == 0 &&
                torque[2] == 0;
    if (!stop) {
        /* An impulse changes the velocities by the given amounts (PMX 2.1: the morph's offset is an
         * impulse); all zeros is the format's special case that stops the body. */
        float m[16], dv[3], dw[3];
        bc->body_get_transform(b->bc, m);
        bc->body_get_velocity(b->bc, lin, ang);
        for (int r = 0; r < 3; r++) {
            dv[r] = local ? m[r] * velocity[0] + m[4 + r] * velocity[1] + m[8 + r] * velocity[2] : velocity[r];
            dw[r] = local ? m[r] * torque[0] + m[4 + r] * torque[1] + m[8 + r] * torque[2] : torque[r];
            lin[r] += dv[r];
            ang[r] += dw[r];
        }
    }
    bc->body_set_velocity(b->bc, lin, ang);
    return PLUSH_OK;
}

void plush_world_body_transform(const plush_world_model *wm, size_t rigid_body, float out[16])
{
    if (!wm || rigid_body >= wm->model->rigid_body_count || !wm->bodies[rigid_body].bc) {
        plush__world_mat_identity(out);
        return;
    }
    wm->world->bc->body_get_transform(wm->bodies[rigid_body].bc, out);
}

void plush_world_body_velocity(const plush_world_model *wm, size_t rigid_body, float linear[3], float angular[3])
{
    if (!wm || rigid_body >= wm->model->rigid_body_count || !wm->bodies[rigid_body].bc) {
        memset(linear, 0, 3 * sizeof(float));
        memset(angular, 0, 3 * sizeof(float));
        return;
    }
    wm->world->bc->body_get_velocity(wm->bodies[rigid_body].bc, linear, angular);
}

/* ---- stepping ---------------------------------------------------------------------------------- */

/* The bone position of a mode-2 body at fraction t of the current plush_world_step. */
static void bone_position(const world_body *b, float t, float p[3])
{
    for (int r = 0; r < 3; r++)
        p[r] = t >= 1 ? b->bone_to[r] : b->bone_from[r] + (b->bone_to[r] - b->bone_from[r]) * t;
}

/* Moves a mode-2 body, keeping its rotation, so that body * offset^-1 has translation p:
 * body.t = p - R_body * offset_inv.t. */
static void place_mode2(const plush_bulletc_api *bc, const world_body *b, const float p[3])
{
    float m[16];
    bc->body_get_transform(b->bc, m);
    for (int r = 0; r < 3; r++)
        m[12 + r] = p[r] - (m[r] * b->offset_inv[12] + m[4 + r] * b->offset_inv[13] + m[8 + r] * b->offset_inv[14]);
    bc->body_set_transform(b->bc, m);
}

/* The bone above a chained mode-2 body as the body that drives it lies now: that body's transform (into body)
 * times its offset's inverse. */
static void above_bone(const plush_world_model *wm, const world_body *b, float body[16], float bone[16])
{
    const world_body *a = &wm->bodies[b->above];
    wm->world->bc->body_get_transform(a->bc, body);
    plush__world_mat_mul(body, a->offset_inv, bone);
}

/* Where the bone above carries a chained mode-2 body's bone at fraction t of the current plush_world_step: its
 * place in that bone's frame, interpolated like mode 0's targets. */
static void chain_position(const world_body *b, const float above[16], float t, float p[3])
{
    float rel[3];
    for (int r = 0; r < 3; r++)
        rel[r] = t >= 1 ? b->rel_to[r] : b->rel_from[r] + (b->rel_to[r] - b->rel_from[r]) * t;
    carry(above, rel, p);
}

/* Before fixed step k of n: kinematic bodies at their interpolated targets; mode-2 bodies at their
 * bone's position with the bone's velocity over this step (so contacts and joints see it move): a chained
 * one's, that of its place on the body above (that body's velocity there, and its place's own change). */
static void place_before(plush_world_model *wm, int k, int n, float dt)
{
    const plush_bulletc_api *bc = wm->world->bc;
    float t = (float)(k + 1) / (float)n, t0 = (float)k / (float)n;
    for (size_t i = 0; i < wm->model->rigid_body_count; i++) {
        world_body *b = &wm->bodies[i];
        if (!b->bc)
            continue;
        if (b->mode == PLUSH_PMX_RIGID_FOLLOW_BONE) {
            float m[16];
            plush__world_mat_interpolate(b->from, b->to, t, m);
            bc->body_set_transform(b->bc, m);
        } else if (b->mode == PLUSH_PMX_RIGID_PHYSICS_BONE && b->bone >= 0 && b->above < 0) {
            float lin[3], ang[3], p[3], p0[3];
            bone_position(b, t, p);
            bone_position(b, t0, p0);
            place_mode2(bc, b, p0);
            bc->body_get_velocity(b->bc, lin, ang);
            for (int r = 0; r < 3; r++)
                lin[r] = (p[r] - p0[r]) / dt;
            bc->body_set_velocity(b->bc, lin, ang);
        }
    }
    for (size_t j = 0; j < wm->chained_count; j++) {
        const world_body *b = &wm->bodies[wm->chained[j]], *a = &wm->bodies[b->above];
        float lin[3], ang[3], p[3], p0[3], above[16], bone[16], a_lin[3], a_ang[3];
        above_bone(wm, b, above, bone);
        chain_position(b, bone, t, p);
        chain_position(b, bone, t0, p0);
        place_mode2(bc, b, p0);
        bc->body_get_velocity(a->bc, a_lin, a_ang);
        bc->body_get_velocity(b->bc, lin, ang);
        float arm[3] = {p0[0] - above[12], p0[1] - above[13], p0[2] - above[14]};
        lin[0] = a_lin[0] + a_ang[1] * arm[2] - a_ang[2] * arm[1] + (p[0] - p0[0]) / dt;
        lin[1] = a_lin[1] + a_ang[2] * arm[0] - a_ang[0] * arm[2] + (p[1] - p0[1]) / dt;
        lin[2] = a_lin[2] + a_ang[0] * arm[1] - a_ang[1] * arm[0] + (p[2] - p0[2]) / dt;
        bc->body_set_velocity(b->bc, lin, ang);
    }
}

/* After fixed step k of n: the step moved mode-2 bodies by their velocity and gravity; put them back
 * on their bone so that what get_bones and body_transform read agrees with the animated position. */
static void place_after(plush_world_model *wm, int k, int n)
{
    float t = (float)(k + 1) / (float)n;
    for (size_t i = 0; i < wm->model->rigid_body_count; i++) {
        const world_body *b = &wm->bodies[i];
        if (b->bc && b->mode == PLUSH_PMX_RIGID_PHYSICS_BONE && b->bone >= 0 && b->above < 0) {
            float p[3];
            bone_position(b, t, p);
            place_mode2(wm->world->bc, b, p);
        }
    }
    for (size_t j = 0; j < wm->chained_count; j++) {
        const world_body *b = &wm->bodies[wm->chained[j]];
        float above[16], bone[16], p[3];
        above_bone(wm, b, above, bone);
        chain_position(b, bone, t, p);
        place_mode2(wm->world->bc, b, p);
    }
}

/* A simulated body whose pose or velocity is no longer finite, that left PLUSH__WORLD_REACH, or (mode 1,
 * whose velocity is its own) that runs faster than the blow-up guard's limit is put back on its bone's
 * animated pose, at rest. Bullet would go on integrating it, and its joints spread it to their other
 * bodies. Worse, a sphere whose rotation went NaN keeps a finite bounding box (a sphere's ignores the
 * rotation), so soft-body nodes beside it reach Bullet's sparse distance field with NaN coordinates,
 * whose cell index then points anywhere: the process dies in btSoftBody::checkContact. Checked after
 * every fixed step, before the next step's contacts read the pose. */
static bool body_blew_up(const plush_bulletc_api *bc, const world_body *b, float limit, double *speed)
{
    float m[16], lin[3], ang[3];
    bc->body_get_transform(b->bc, m);
    bc->body_get_velocity(b->bc, lin, ang);
    *speed = INFINITY;
    if (!finite16(m) || !plush__finite3(lin) || !plush__finite3(ang) || !plush__world_in_reach(m + 12))
        return true;
    *speed = sqrt((double)lin[0] * lin[0] + (double)lin[1] * lin[1] + (double)lin[2] * lin[2]);
    return b->mode == PLUSH_PMX_RIGID_PHYSICS && *speed > limit;
}

static void guard_bodies(plush_world_model *wm, uint64_t step, plush_diag *diag)
{
    const plush_bulletc_api *bc = wm->world->bc;
    float limit = wm->world->desc.max_node_speed;
    for (size_t i = 0; i < wm->model->rigid_body_count; i++) {
        world_body *b = &wm->bodies[i];
        double speed;
        if (!b->bc || b->mode == PLUSH_PMX_RIGID_FOLLOW_BONE || !body_blew_up(bc, b, limit, &speed))
            continue;
        bc->body_reset(b->bc, b->to);
        /* One warning per power of ten of resets: a body its joints fling every step stays visible
         * without burying the other warnings. */
        uint32_t n = ++b->resets;
        uint32_t p = 1;
        while (p <= n / 10)
            p *= 10;
        if (n != p)
            continue;
        const char *name = wm->model->rigid_bodies[i].name.s ? wm->model->rigid_bodies[i].name.s : "";
        char count[48] = "";
        if (n > 1)
            snprintf(count, sizeof count, " (%u times so far)", n);
        if (isfinite(speed))
            plush_diag_warn(diag, -1, "rigid body", (int64_t)i,
                            "\"%s\" blew up at step %llu: it moved at %.6g units/s (limit %g); put back on its "
                            "bone's pose at rest%s",
                            name, (unsigned long long)step, speed, (double)limit, count);
        else
            plush_diag_warn(diag, -1, "rigid body", (int64_t)i,
                            "\"%s\" blew up at step %llu: its pose or velocity is not finite or out of reach; put "
                            "back on its bone's pose at rest%s",
                            name, (unsigned long long)step, count);
    }
}

static void finish_step(plush_world_model *wm)
{
    for (size_t i = 0; i < wm->model->rigid_body_count; i++) {
        world_body *b = &wm->bodies[i];
        memcpy(b->from, b->to, sizeof b->from);
        memcpy(b->bone_from, b->bone_to, sizeof b->bone_from);
        memcpy(b->rel_from, b->rel_to, sizeof b->rel_from);
    }
}

plush_status plush_world_step(plush_world *world, float dt, plush_diag *diag)
{
    if (!world || !isfinite(dt) || dt < 0)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "physics", -1, "step: time %g is not a finite, "
                               "non-negative number", (double)dt);
    double fixed = 1.0 / world->desc.physics_hz;
    world->carry += dt;
    /* The small tolerance keeps 1/30 s from giving 1.9999 steps of 1/60 s through rounding. */
    double whole = floor(world->carry / fixed + 1e-6);
    world->carry -= whole * fixed;
    if (world->carry < 0)
        world->carry = 0;
    int n = (int)whole;
    if (whole > world->desc.max_substeps) {
        /* Only a pathological dt gets here (the default guard is hours of simulated time per call):
         * the time beyond the guard is dropped, loudly, never silently. */
        n = world->desc.max_substeps;
        double dropped = (whole - n) * fixed;
        world->dropped += dropped;
        plush_diag_warn(diag, -1, "physics", -1, "step of %g s needs %.0f fixed steps, more than the %d allowed: "
                        "%g s of simulated time dropped", (double)dt, whole, n, dropped);
    }
    float h = (float)fixed;
    for (int k = 0; k < n; k++) {
        for (plush_world_model *wm = world->models; wm; wm = wm->next)
            if (!wm->broken) {
                place_before(wm, k, n, h);
                plush__world_soft_before_substep(wm, k, n, h);
            }
        world->bc->world_step(world->bw, h);
        for (plush_world_model *wm = world->models; wm; wm = wm->next)
            if (!wm->broken) {
                place_after(wm, k, n);
                guard_bodies(wm, world->steps, diag);
                plush__world_soft_after_substep(wm, k, n, world->steps, diag);
            }
        world->steps++;
    }
    if (n > 0)
        for (plush_world_model *wm = world->models; wm; wm = wm->next)
            if (!wm->broken)
                finish_step(wm);
    return PLUSH_OK;
}

uint64_t plush_world_step_count(const plush_world *world)
{
    return world ? world->steps : 0;
}

double plush_world_dropped_time(const plush_world *world)
{
    return world ? world->dropped : 0;
}

double plush_world_gravity(const plush_world *world)
{
    if (!world)
        return 0;
    const float *g = world->desc.gravity;
    return sqrt((double)g[0] * g[0] + (double)g[1] * g[1] + (double)g[2] * g[2]);
}
