/* Private to src/physics: the world and model records shared by world.c (world, rigid bodies, joints,
 * bone exchange, stepping) and world_soft.c (PMX 2.1 soft bodies). */
#ifndef PLUSH_PHYSICS_WORLD_INTERNAL_H
#define PLUSH_PHYSICS_WORLD_INTERNAL_H

#include "core/platform.h"
#include "physics/bulletc.h"
#include "plush/physics.h"
#include "plush/sys/core.h"

typedef struct world_body {
    bc_body *bc;
    float offset[16];        /* body pose relative to its bone's rest global (T(bone.position)) */
    float offset_inv[16];
    float from[16], to[16];  /* the pose the bone's animated global gives: mode 0's targets over the current
                                plush_world_step; for modes 1 and 2, where the guard puts a body that blew up */
    /* world.c only (p2): */
    int32_t bone;            /* the body's bone, -1 when it has none (or named one out of range) */
    uint8_t mode;            /* plush_pmx_rigid_mode, a known one (an unknown mode is simulated as PHYSICS) */
    float bone_from[3], bone_to[3]; /* mode 2: the bone's position at the start / end of the step */
    int32_t above;           /* mode 2: the body that drives the nearest bone above this one's that physics moves
                                (-1: none, and bone_from / bone_to are the bone's position) */
    float rel_from[3], rel_to[3]; /* mode 2 with a body above: the bone's position in that bone's frame, as the
                                     animation poses both, at the start / end of the step */
    uint32_t resets;         /* times the guard put it back (warnings thin out as this grows) */
} world_body;

typedef struct world_soft world_soft; /* world_soft.c */

struct plush_world_model {
    plush_world *world;
    const plush_pmx_model *model;
    world_body *bodies;      /* model->rigid_body_count */
    uint32_t *chained;       /* the mode-2 bodies with a body above, each after the one above it */
    size_t chained_count;
    bc_constraint **joints;  /* model->joint_count; NULL where a joint was skipped */
    world_soft *soft;        /* model->soft_body_count entries, owned by world_soft.c */
    struct world_soft_tie *ties; /* world_soft_tie.c: soft bodies tied where they lay against each other */
    size_t tie_count;
    bool ties_made;
    bool *tie_moved;         /* per soft body, scratch: a tie moved one of its nodes this fixed step */
    plush_arena arena;       /* owns everything above but the Bullet handles */
    /* world_soft_collide.c, the first time a soft body asks, in the arena (else NULL): per PMX vertex the model's
     * visible skin (plush__rigid_skin_vertices), per rigid body whether it holds any at rest (0 not known yet,
     * 1 no, 2 yes) */
    bool *skin;
    uint8_t *skin_held;
    plush_world_model *next;
    /* world.c only (p2): add_model failed part way; the model is never stepped, only destroyed
     * (plush__world_soft_destroy is still called: wm->soft may be NULL or partly built). */
    bool broken;
};

struct plush_world {
    const plush_bulletc_api *bc;
    bc_world *bw;
    plush_world_desc desc;   /* defaults applied */
    double carry;            /* time not yet stepped, seconds */
    uint64_t steps;
    double dropped;          /* simulated time dropped by the max_substeps guard, seconds */
    plush_world_model *models;
    /* world.c only (p2): */
    bc_body *ground;         /* NULL without a ground */
};

/* How far from the origin a position may lie and still be simulated, in units. Beyond it a float's spacing
 * is a whole unit (8 cm), so nothing there is physics any more; and Bullet's sparse distance field, which
 * rigid-versus-soft contacts read, turns coordinates into int cell indices (cells of 0.75 units) that
 * overflow at 1.6e9 and send it reading far outside its cells. A pin, a bone or a body beyond is treated
 * as a non-finite one. */
#define PLUSH__WORLD_REACH 16777216.0f

/* A point that is finite and within PLUSH__WORLD_REACH of the origin on every axis. */
static inline bool plush__world_in_reach(const float p[3])
{
    for (int k = 0; k < 3; k++)
        if (!(p[k] >= -PLUSH__WORLD_REACH && p[k] <= PLUSH__WORLD_REACH)) /* also false for NaN */
            return false;
    return true;
}

/* ---- world.c / world_joints.c / world_math.c (p2); world_soft*.c may use the math ------------- */

/* Rigid transforms, column-major float[16] (cglm layout). out may alias neither input. */
void plush__world_mat_identity(float out[16]);
void plush__world_mat_mul(const float a[16], const float b[16], float out[16]);
/* Inverse of a rotation + translation. */
void plush__world_mat_rigid_inverse(const float m[16], float out[16]);
/* T(position) * Ry(y) * Rx(x) * Rz(z): a PMX rigid body's or joint's pose. */
void plush__world_mat_pmx(const float position[3], const float rotation[3], float out[16]);
/* Unit quaternion (x y z w) of the rotation part, and back (with a translation). */
void plush__world_mat_to_quat(const float m[16], float q[4]);
void plush__world_mat_from_quat(const float q[4], const float t[3], float out[16]);
/* Shortest-arc slerp of unit quaternions (t in [0, 1]). */
void plush__world_quat_slerp(const float a[4], const float b[4], float t, float out[4]);
/* Pose between a and b: lerp of the translations, slerp of the rotations. */
void plush__world_mat_interpolate(const float a[16], const float b[16], float t, float out[16]);
/* m * p for a point. */
void plush__world_mat_point(const float m[16], const float p[3], float out[3]);

/* libplush_physics.so, plush_physics.dll */
#define PLUSH_PHYSICS_LIBRARY PLUSH__OS_LIBRARY("plush_physics")
/* The process's physics table (world_library.c), loaded on first call through the core loader; NULL with
 * PLUSH_E_LIBRARY in diag when no candidate of physics.h's list gives a matching table. */
const plush_bulletc_api *plush__world_library(plush_diag *diag);
/* Opens the first of candidates that gives a matching table, without the cache (tests name paths). */
plush_status plush__world_library_open(const char *const *candidates, size_t count, const plush_bulletc_api **api,
                                       plush_diag *diag);
/* Creates joint j of wm's model (bodies exist). NULL with a warning when the joint is skipped. */
bc_constraint *plush__world_joint_create(plush_world_model *wm, size_t j, plush_diag *diag);

/* world_soft.c. Called by world.c at these points: */
/* after the model's rigid bodies exist (anchors need them); skipped bodies are warnings */
plush_status plush__world_soft_add(plush_world_model *wm, plush_diag *diag);
/* plush_world_set_pins */
void plush__world_soft_set_pins(plush_world_model *wm, const float (*vertex_positions)[3]);
/* plush_world_reset */
void plush__world_soft_reset(plush_world_model *wm, const float (*vertex_positions)[3]);
/* before fixed step k of n inside one plush_world_step (pins move along; anchors' near mode) */
void plush__world_soft_before_substep(plush_world_model *wm, int k, int n, float dt);
/* after that fixed step; step is the world's step index; blow-ups become warnings in diag */
void plush__world_soft_after_substep(plush_world_model *wm, int k, int n, uint64_t step, plush_diag *diag);
/* frees world_soft state (the Bullet soft bodies go with the world) */
void plush__world_soft_destroy(plush_world_model *wm);

#endif
