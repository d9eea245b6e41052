/* Private to src/scene: what the binding and its im2 view share. */
#ifndef PLUSH_SCENE_INTERNAL_H
#define PLUSH_SCENE_INTERNAL_H

#include "plush/physics.h"
#include "plush/scene.h"
#include "plush/sys/core.h"

/* The rows of a binding as plush_proxy_bind made them: CALC_ONESKIN0 restores these. */
struct plush_scene_computed {
    int32_t (*triangles)[PLUSH_PROXY_INFLUENCES];
    float (*weights)[PLUSH_PROXY_INFLUENCES];
    float (*distances)[PLUSH_PROXY_INFLUENCES];
    uint8_t (*percent)[PLUSH_PROXY_INFLUENCES];   /* NULL outside seed mode */
    float *share;
};

/* Per material, its vertices in order of first use when it takes part in im2 files (a material no soft
 * body owns, with at least one bound vertex); otherwise count 0. Arrays in arena. */
typedef struct scene_material_vertices {
    uint32_t *vertices;
    size_t count;
} scene_material_vertices;

plush_status plush__scene_im2_materials(const plush_scene_binding *b, plush_arena *arena, scene_material_vertices **out,
                                 plush_diag *diag);

/* plush_scene_default_frames before a scene exists: the frames a run of motion (NULL: none) at fps computes
 * by default; PLUSH_E_RANGE beyond PLUSH_SCENE_MAX_FRAME. */
plush_status plush__scene_motion_frames(const plush_vmd_motion *motion, double fps, uint32_t *frames,
                                       plush_diag *diag);

/* The scene's shared bake (sink.c, plush__sink_bake_get): NULL until a sink makes it, then the bake, the
 * tolerance it was made with and how to free it. The scene outlives every sink, so it calls destroy at its
 * end; the export that made the bake names the function (the scene knows no export). */
typedef struct plush__bake_share {
    struct plush_scene_bake *bake;
    double tolerance;
    void (*destroy)(struct plush_scene_bake *bake);
} plush__bake_share;
plush__bake_share *plush__scene_bake_share(const plush_scene *scene);
/* Per proxy triangle, how far this frame's push out of the body moved its transform (soft_push.c), or NULL
 * when the scene pushes nothing. Valid for the scene's life, rewritten by each step. */
const float (*plush__scene_push_offsets(const plush_scene *scene))[3];

/* plush_scene_direct_build, and when cloth is non-NULL the direct bodies made cloth stepped by plush
 * (plush_world_cloth) instead of calibrated for Bullet: *cloth gets one entry per soft body of the derived
 * model (malloc'd; the caller frees it), the material from each proxy's own parameters at physics_hz. */
plush_status plush__scene_direct_build(const plush_scene_binding *binding, float physics_hz, plush_pmx_model **out,
                                      plush_scene_direct_stats *stats, plush_world_cloth **cloth, plush_diag *diag);

#endif
