/* Private to src/physics: the world and model records shared by world.c (world, rigid bodies, joints,
 * bone exchange, stepping) and world_soft.c (PMX 2.1 soft bodies). */
#ifndef PLUSH_PHYSICS_WORLD_INTERNAL_H
#define PLUSH_PHYSICS_WORLD_INTERNAL_H

#include "physics/bulletc.h"
#include "plush/physics.h"

typedef struct world_body {
    bc_body *bc;
    float offset[16];        /* body pose relative to its bone's rest global (T(bone.position)) */
    float offset_inv[16];
    float from[16], to[16];  /* kinematic targets of the current plush_world_step */
} world_body;

typedef struct world_soft world_soft; /* world_soft.c */

struct plush_world_model {
    plush_world *world;
    const plush_pmx_model *model;
    world_body *bodies;      /* model->rigid_body_count */
    bc_constraint **joints;  /* model->joint_count; NULL where a joint was skipped */
    world_soft *soft;        /* model->soft_body_count entries, owned by world_soft.c */
    plush_arena arena;       /* owns everything above but the Bullet handles */
    plush_world_model *next;
};

struct plush_world {
    const plush_bulletc_api *bc;
    bc_world *bw;
    plush_world_desc desc;   /* defaults applied */
    double carry;            /* time not yet stepped, seconds */
    uint64_t steps;
    plush_world_model *models;
};

/* world_soft.c. Called by world.c at these points: */
/* after the model's rigid bodies exist (anchors need them); skipped bodies are warnings */
plush_status world_soft_add(plush_world_model *wm, plush_diag *diag);
/* plush_world_set_pins */
void world_soft_set_pins(plush_world_model *wm, const float (*vertex_positions)[3]);
/* plush_world_reset */
void world_soft_reset(plush_world_model *wm, const float (*vertex_positions)[3]);
/* before fixed step k of n inside one plush_world_step (pins move along; anchors' near mode) */
void world_soft_before_substep(plush_world_model *wm, int k, int n, float dt);
/* after that fixed step; step is the world's step index; blow-ups become warnings in diag */
void world_soft_after_substep(plush_world_model *wm, int k, int n, uint64_t step, plush_diag *diag);
/* frees world_soft state (the Bullet soft bodies go with the world) */
void world_soft_destroy(plush_world_model *wm);

#endif
