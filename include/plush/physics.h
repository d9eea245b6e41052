/* Physics: a PMX model's rigid bodies, joints and PMX 2.1 soft bodies, simulated by Bullet with MMD's
 * semantics.
 *
 *   plush_world *world = NULL;
 *   if (plush_world_create(&(plush_world_desc){ .ground = true }, &world, &diag) != PLUSH_OK) ...;
 *   plush_world_model *wm = NULL;
 *   plush_world_add_model(world, model, bone_globals, &wm, &diag);   // warnings: skipped soft bodies
 *   for each frame (1/30 s):
 *       plush_world_set_bones(wm, bone_globals);     // kinematic bodies (mode 0) and mode-2 positions
 *       plush_world_set_pins(wm, skinned_positions); // pinned soft-body nodes follow their PMX vertices
 *       plush_world_step(world, 1.0f / 30, &diag);   // fixed steps at physics_hz
 *       plush_world_get_bones(wm, bone_globals);     // bones of simulated bodies (modes 1 and 2)
 *       plush_world_soft_vertices(wm, positions, normals);
 *   plush_world_destroy(world);
 *
 * Coordinates are PMX's own (left-handed, Y up, 1 unit ~ 8 cm) and used as stored: a rigid body's or a
 * joint's rotation (x, y, z radians) is the matrix Ry(y) * Rx(x) * Rz(z) acting on column vectors, which
 * is what MMD's D3DX "yaw pitch roll" gives. Bone matrices are cglm column-major mat4 global transforms:
 * rotation = the bone's accumulated rotation, translation = the bone's current position (a bone at rest
 * is the translation to its PMX position).
 *
 * Bullet itself lives in a shared object (libplush_physics.so, built from src/physics/bulletc*.cpp) that
 * plush_world_create loads on first use (once per process), so programs that never simulate never map
 * Bullet or libstdc++.
 * It is looked up in: $PLUSH_PHYSICS_LIB (a path), the executable's directory, its parent directory, and
 * the install directory (PREFIX/lib/plush).
 *
 * Deterministic: the same calls with the same inputs give bit-identical results (single-threaded
 * Bullet, fixed steps, no clock). Nothing non-finite ever reaches the caller: a soft body that blows up
 * is restored to its last good state, frozen and reported (plush_world_soft_get_info); a simulated rigid
 * body that blows up is put back on its bone's pose at rest, with a warning, and simulates on.
 */
#ifndef PLUSH_PHYSICS_H
#define PLUSH_PHYSICS_H

#include "plush/pmx.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct plush_world plush_world;
typedef struct plush_world_model plush_world_model;

/* The default step guard: 2^20 fixed steps per plush_world_step (4.8 hours of simulated time at 60 Hz),
 * so every real frame, at any frame and physics rate, simulates all of its time. */
#define PLUSH_WORLD_MAX_SUBSTEPS (1 << 20)
/* The fixed physics rate when none is given (MMD steps at 60 Hz). */
#define PLUSH_WORLD_DEFAULT_HZ 60

/* Zero fields mean the defaults. */
typedef struct plush_world_desc {
    float gravity[3];         /* all zero: (0, -98, 0) */
    bool no_gravity;          /* a weightless world (gravity is then ignored) */
    float physics_hz;         /* fixed step rate; 0: PLUSH_WORLD_DEFAULT_HZ (120 works as well) */
    int max_substeps;         /* guard against a pathological dt: fixed steps one plush_world_step may
                                 take; 0: PLUSH_WORLD_MAX_SUBSTEPS. Time beyond is dropped with a warning
                                 and counted (plush_world_dropped_time) */
    float air_density;        /* soft-body aerodynamics; 0: 1.2 */
    bool ground;              /* a static box whose top face is the plane y = ground_y (Bullet's plane
                                 shape lets soft bodies through, a box does not) */
    float ground_y;
    uint16_t ground_mask;     /* groups the ground collides with; 0: all. The ground is in every group */
    float max_node_speed;     /* blow-up guard, units per second, for soft-body nodes and mode-1 rigid
                                 bodies; 0: 10000 */
} plush_world_desc;

/* True when the physics library can be loaded (it is, on the first call, once per process); false with
 * PLUSH_E_LIBRARY in diag (may be NULL) naming every place looked in. Callers can ask before starting. */
bool plush_world_available(plush_diag *diag);

/* Creates an empty world. Fails with PLUSH_E_LIBRARY (diag says why) when the physics library cannot be
 * loaded. */
plush_status plush_world_create(const plush_world_desc *desc, plush_world **out, plush_diag *diag);
/* Frees the world, its models and everything Bullet holds; NULL is a no-op. */
void plush_world_destroy(plush_world *world);

/* Adds everything the model declares: rigid bodies (placed from bone_globals, NULL = rest pose), joints
 * and soft bodies. The model must outlive the world. A soft body that cannot be built (material -1, an
 * empty or degenerate mesh) is skipped, and anchors or pins naming vertices outside its material are
 * dropped, each with a warning in diag naming the soft body; the rest of the model still simulates.
 * Valid fields Bullet cannot run together are overridden with a warning: an anchor on a pinned node is
 * dropped (the pin wins), pressure on a body that encloses no volume (a rope, a flat cloth) is 0.
 * A TriMesh soft body's faces collide with every rigid body that follows its bone (mode 0: the model's
 * body), whatever the soft body's mask: after each fixed step each face is pushed out of the body's exact
 * shape by its deepest of ten sample points, keeping the soft body's margin (or its rest distance, when
 * less), and a face that reaches into a body at rest is left alone with it. Bullet's own node contacts
 * (filtered by group and mask) handle the bodies physics moves.
 * Fails only on bad arguments or when Bullet refuses (PLUSH_E_NOMEM, PLUSH_E_ARGUMENT). */
plush_status plush_world_add_model(plush_world *world, const plush_pmx_model *model,
                                   const float (*bone_globals)[16], plush_world_model **out, plush_diag *diag);

/* Targets for the next plush_world_step: bodies of mode 0 follow their bone, bodies of mode 2 take their
 * bone's position (keeping their simulated rotation). Over the fixed steps of one plush_world_step,
 * kinematic bodies move smoothly (lerp / slerp) from where they were to these targets. Bodies without a
 * bone stay where they are. */
void plush_world_set_bones(plush_world_model *wm, const float (*bone_globals)[16]);
/* Puts every rigid body at its bone's pose (bodies without a bone at their PMX pose) and every soft-body
 * node at its vertex's position (vertex_positions, model->vertex_count entries; NULL: rest positions),
 * with zero velocities: MMD's "reset physics", used at the first frame and after a jump in time. */
void plush_world_reset(plush_world_model *wm, const float (*bone_globals)[16], const float (*vertex_positions)[3]);
/* Positions of every PMX vertex after bone skinning (model->vertex_count entries). Pinned soft-body
 * nodes move to their vertex's position over the next step (smoothly across its fixed steps) and end
 * the step exactly there. */
void plush_world_set_pins(plush_world_model *wm, const float (*vertex_positions)[3]);
/* An impulse morph's offset, applied before the next step: velocity (units/s) and torque (rad/s) for the
 * rigid body, in its local frame when local is set; all zero stops the body. Bodies of mode 0 ignore it. */
plush_status plush_world_impulse(plush_world_model *wm, int32_t rigid_body, const float velocity[3],
                                 const float torque[3], bool local);

/* Advances dt seconds in fixed steps of 1 / physics_hz (time left over is carried to the next call).
 * Every step is taken, up to the max_substeps guard; time beyond it is dropped with a warning in diag
 * (the seconds dropped) and added to plush_world_dropped_time. A soft body that blows up during the step gets a warning in diag (its name and the step) and is
 * frozen from then on; a rigid body that does is put back on its bone (a warning at its first reset and
 * at every tenfold count after). Fails only on a bad argument (dt negative or not finite). */
plush_status plush_world_step(plush_world *world, float dt, plush_diag *diag);
/* Fixed steps taken since the world was created. */
uint64_t plush_world_step_count(const plush_world *world);
/* Simulated seconds dropped by the max_substeps guard since the world was created (0 normally). */
double plush_world_dropped_time(const plush_world *world);

/* In/out: on input the animated bone globals (as handed to plush_world_set_bones); on output the bones
 * of mode-1 bodies take their body's pose and the bones of mode-2 bodies their body's rotation (with the
 * input position). Other bones are left as they were. driven (may be NULL) gets, per bone, whether a
 * body wrote it. */
void plush_world_get_bones(const plush_world_model *wm, float (*bone_globals)[16], bool *driven);

/* A rigid body's current pose (column-major, rotation + translation) and velocities. */
void plush_world_body_transform(const plush_world_model *wm, size_t rigid_body, float out[16]);
/* A rigid body's pose as the PMX file places it (its position, and its rotation as Ry * Rx * Rz), column-major:
 * where plush_world_body_transform starts for a body at rest. */
void plush_world_rigid_rest_transform(const plush_pmx_rigid_body *rb, float out[16]);
void plush_world_body_velocity(const plush_world_model *wm, size_t rigid_body, float linear[3], float angular[3]);

typedef enum plush_world_soft_state {
    PLUSH_SOFT_ACTIVE = 0,
    PLUSH_SOFT_SKIPPED,       /* never built (see the warning add_model gave) */
    PLUSH_SOFT_FAILED         /* blew up PLUSH_WORLD_SOFT_RESETS + 1 times, the last at failed_step; frozen at
                                 its last good state */
} plush_world_soft_state;

/* A soft body that blows up (a node not finite, out of reach or faster than max_node_speed) is put back
 * to its last good state at rest, with a warning, and goes on; the time after this many it is frozen. */
#define PLUSH_WORLD_SOFT_RESETS 8

/* One soft body as simulated. TriMesh nodes are numbered as plush_pmx_weld numbers them (so node n of
 * soft body s is proxy node parts[k].first_node + n of plush_scene_proxy_build); Rope nodes are the
 * material's distinct vertices in order of first use (plush_pmx_material_vertices). */
typedef struct plush_world_soft_info {
    plush_world_soft_state state;
    int64_t failed_step;          /* step index of the last blow-up, -1 */
    uint32_t resets;              /* blow-ups it was put back from and went on */
    size_t node_count;            /* 0 when skipped */
    const float (*rest_nodes)[3];
    const int32_t *node_vertex;   /* node -> a PMX vertex welded into it */
    size_t triangle_count;        /* TriMesh faces (node indices); 0 for a rope */
    const uint32_t (*triangles)[3];
    size_t pinned_count;          /* nodes pinned / anchored after repairs */
    size_t anchored_count;
} plush_world_soft_info;

/* model->soft_body_count entries, in file order. */
void plush_world_soft_get_info(const plush_world_model *wm, size_t soft_body, plush_world_soft_info *out);
/* Current node positions and (for a TriMesh, else zero) unit normals; normals may be NULL. */
void plush_world_soft_nodes(const plush_world_model *wm, size_t soft_body, float (*positions)[3],
                            float (*normals)[3]);
/* Writes the simulated position (and normal; may be NULL) of every PMX vertex that belongs to a built
 * soft body, through the node <-> vertex map; other entries are left untouched. Arrays hold
 * model->vertex_count entries. */
void plush_world_soft_vertices(const plush_world_model *wm, float (*positions)[3], float (*normals)[3]);

#ifdef __cplusplus
}
#endif
#endif
