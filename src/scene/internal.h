/* Private to src/scene: what the binding and its im2 view share. */
#ifndef PLUSH_SCENE_INTERNAL_H
#define PLUSH_SCENE_INTERNAL_H

#include "plush/physics.h"
#include "plush/scene.h"

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

/* ---- rigid body shapes (rigid_shape.c) ---- */

/* The signed distance from p, in the body's frame, to its shape's surface (sphere: radius size[0]; box: half
 * extents size; capsule: radius size[0], cylinder height size[1] along local Y): negative inside, infinity
 * for an unknown shape. */
double plush__rigid_shape_distance(const plush_pmx_rigid_body *rb, const double p[3]);
/* p in the frame of a column-major rigid transform m. */
void plush__rigid_local(const float m[16], const float p[3], double out[3]);
/* p inside (or on) the body's shape placed by `pose`, a column-major rigid transform: its PMX pose is
 * plush_world_rigid_rest_transform's (worked out once per body, not per point). */
bool plush__rigid_inside(const plush_pmx_rigid_body *rb, const float pose[16], const float p[3]);

#endif
