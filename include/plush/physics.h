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
/* The settle bar a soft part is judged by (plush/scene.h): standing still, within this share of its size of
 * where the author's physics lets it hang. A piece that follows the author's physics keeps its goal's shape
 * against its own weight to within it (docs/attach.md). */
#define PLUSH_SOFT_SETTLE_BAR 0.05
/* The fixed physics rate when none is given (MMD steps at 60 Hz). */
#define PLUSH_WORLD_DEFAULT_HZ 60

/* A TriMesh soft body stepped as cloth by plush instead of Bullet (plush compare --direct-cloth): backward
 * Euler in substeps, each a conjugate-gradient solve, with constants in physical units, so that its motion
 * depends on the material rather than the mesh's resolution. The areal density is the body's total mass
 * over its area; damping (kDP per fixed step, and a relaxation time of one fixed step), pressure (kPR) and
 * the world's gravity are the body's as Bullet reads them; pins, anchors and the bodies that follow bones
 * hold and push it as they do a Bullet body. Other fields of the soft body (LST, iterations, B-links,
 * clusters, aerodynamics, self-collision) are not used. */
typedef struct plush_world_cloth {
    float stretch;            /* stretch modulus: force per unit length per unit strain (mass / s^2); 0 or
                                 INFINITY: as stiff as a substep resolves (a stretch wave crossing one mean
                                 edge a substep) */
    float bending_length;     /* the cloth's bending length (B = areal density x gravity x length^3),
                                 units; 0: no bending stiffness */
    int substeps;             /* per fixed step; 0: 8 */
    float shape_k;            /* shape memory, as Bullet's kMT: the share of the way a free node is pulled
                                 each fixed step from where its speed takes it toward its rest place turned
                                 and moved as the body goes (a spring of kMT / dt^2 and a damping of kMT / dt
                                 of its speed against the body's own motion, per unit mass); 0: none */
    float compression;        /* the share of the stretch modulus a shortened edge holds (a fabric buckles
                                 rather than pushes); 0: 0.05; 1: as stretched */
    bool on;                  /* false: Bullet steps this soft body */
} plush_world_cloth;

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
    const plush_world_cloth *cloth; /* per soft body of each model added (cloth_count entries, indexed as
                                       its soft bodies), may be NULL; must outlive the world */
    size_t cloth_count;
} plush_world_desc;

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
    const bool *pinned;           /* per node: pinned (it goes where its bones put it) */
    uint64_t cloth_solves;        /* stepped as cloth (plush_world_cloth): its linear solves so far, and how */
    uint64_t cloth_unfinished;    /* many stopped at the iteration cap short of their tolerance */
} plush_world_soft_info;

#ifdef __cplusplus
}
#endif
#endif
