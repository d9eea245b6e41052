/* bulletc: plush's own small C ABI over Bullet (the part libbulletc plays for other languages).
 *
 * src/physics/bulletc*.cpp are the only C++ files of plush. They are built into libplush_physics.so,
 * which exports one symbol, plush_bulletc_get; world_library.c loads it through the core loader and
 * world*.c call Bullet only through the table below. Every entry catches C++ exceptions: a function that creates something returns NULL and
 * fills err (when given, BC_ERR bytes) on failure; nothing throws across the boundary.
 *
 * Terms are Bullet's, not PMX's: mapping PMX fields onto these (joint kinds, soft-body config, rigid
 * body modes) is world.c's job. Transforms are float[16] column-major rigid transforms (cglm layout).
 * Handles are owned by their world: bc_world_destroy frees every body, constraint, soft body and shape
 * made for it.
 */
#ifndef PLUSH_BULLETC_H
#define PLUSH_BULLETC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PLUSH_BULLETC_VERSION 6u
enum { BC_ERR = 256 };

typedef struct bc_world bc_world;
typedef struct bc_shape bc_shape;
typedef struct bc_body bc_body;
typedef struct bc_constraint bc_constraint;
typedef struct bc_soft bc_soft;

typedef struct bc_world_desc {
    float gravity[3];
    float air_density;
    float water_density;            /* 0 */
} bc_world_desc;

/* A C caller may pass any int here (shape_create refuses an unknown kind). C++ gives the enum int as its
 * underlying type, so that such a value is defined there too (clang's -fsanitize=enum stops on it). */
#ifdef __cplusplus
typedef enum bc_shape_kind : int { BC_SPHERE = 0, BC_BOX = 1, BC_CAPSULE = 2 } bc_shape_kind;
#else
typedef enum bc_shape_kind { BC_SPHERE = 0, BC_BOX = 1, BC_CAPSULE = 2 } bc_shape_kind;
#endif

typedef struct bc_body_desc {
    float transform[16];
    float mass;                     /* 0 with kinematic false: static */
    bool kinematic;                 /* CF_KINEMATIC_OBJECT, mass ignored */
    float linear_damping, angular_damping, restitution, friction;
    int16_t group;                  /* collision filter group bits (1 << pmx group) */
    int16_t mask;                   /* collision filter mask bits */
} bc_body_desc;

/* btGeneric6DofSpringConstraint (springs may all be off: a plain 6DOF). Index 0..2 linear x y z,
 * 3..5 angular x y z. */
typedef struct bc_6dof_desc {
    float frame_a[16], frame_b[16];  /* joint frame in each body's local space */
    bool use_linear_reference_frame_a;
    float linear_lower[3], linear_upper[3];
    float angular_lower[3], angular_upper[3];
    bool spring[6];
    float stiffness[6];
    float damping[6];                /* Bullet's spring damping (1 = none) where spring[i] */
    float stop_erp;                  /* applied to all six DOF when > 0 (BT_CONSTRAINT_STOP_ERP) */
    bool set_equilibrium;            /* setEquilibriumPoint() after the springs are set */
} bc_6dof_desc;

typedef struct bc_p2p_desc {
    float pivot_a[3], pivot_b[3];    /* in each body's local space */
} bc_p2p_desc;

typedef struct bc_cone_twist_desc {
    float frame_a[16], frame_b[16];
    float swing_span1, swing_span2, twist_span;
    float softness, bias_factor, relaxation_factor;
    float damping;                   /* setDamping */
    float fix_threshold;             /* setFixThresh */
    bool motor;                      /* enableMotor */
    float max_motor_impulse;         /* setMaxMotorImpulse (when motor) */
    float motor_target[4];           /* setMotorTarget quaternion x y z w (when motor) */
} bc_cone_twist_desc;

typedef struct bc_slider_desc {
    float frame_a[16], frame_b[16];
    bool use_linear_reference_frame_a;
    float lower_linear, upper_linear, lower_angular, upper_angular;
    bool powered_linear;
    float target_linear_velocity, max_linear_force;
    bool powered_angular;
    float target_angular_velocity, max_angular_force;
} bc_slider_desc;

typedef struct bc_hinge_desc {
    float frame_a[16], frame_b[16];
    bool use_reference_frame_a;
    float low, high, softness, bias_factor, relaxation_factor;
    bool motor;                      /* enableAngularMotor */
    float target_velocity, max_motor_impulse;
} bc_hinge_desc;

/* btSoftBody::Config and friends, in Bullet's names. */
typedef struct bc_soft_config {
    int aero_model;                  /* btSoftBody::eAeroModel::_ value */
    float kVCF, kDP, kDG, kLF, kPR, kVC, kDF, kMT, kCHR, kKHR, kSHR, kAHR;
    float kSRHR_CL, kSKHR_CL, kSSHR_CL, kSR_SPLT_CL, kSK_SPLT_CL, kSS_SPLT_CL;
    int viterations, piterations, diterations, citerations;
    int collisions;                  /* btSoftBody::fCollision bits (set, not or-ed) */
    float margin;
} bc_soft_config;

/* Node and link storage of one soft body as it is built. */
typedef struct bc_soft_desc {
    size_t node_count;
    const float (*positions)[3];
    const float *masses;             /* per node; 0 pins the node (inverse mass 0) */
    int16_t group, mask;
} bc_soft_desc;

typedef struct plush_bulletc_api {
    uint32_t version;                /* PLUSH_BULLETC_VERSION */
    bool (*scalar_is_float)(void);

    /* btSoftRigidDynamicsWorld with the default soft-body solver, single-threaded; the soft-body
     * world info carries gravity, air/water density and a sparse SDF (initialised). */
    bc_world *(*world_create)(const bc_world_desc *desc, char *err);
    void (*world_destroy)(bc_world *world);
    /* Exactly one internal step of dt: stepSimulation(dt, 1, dt). */
    void (*world_step)(bc_world *world, float dt);

    bc_shape *(*shape_create)(bc_world *world, bc_shape_kind kind, const float size[3], char *err);
    /* Sphere: size[0] radius. Box: half extents. Capsule: size[0] radius, size[1] height of the
     * cylinder part, along Y (btCapsuleShape). */

    bc_body *(*body_create)(bc_world *world, bc_shape *shape, const bc_body_desc *desc, char *err);
    /* Sleeping is off for every body (DISABLE_DEACTIVATION). */
    void (*body_set_transform)(bc_body *body, const float m[16]); /* world transform + motion state +
                                                                     interpolation transform */
    void (*body_get_transform)(const bc_body *body, float m[16]);
    /* On a kinematic body (whose velocity Bullet derives from its move over each step) this also makes
     * the current pose the start of the next move: set_transform + set_velocity teleports it (reset). */
    void (*body_set_velocity)(bc_body *body, const float linear[3], const float angular[3]);
    void (*body_get_velocity)(const bc_body *body, float linear[3], float angular[3]);
    void (*body_clear_forces)(bc_body *body);

    bc_constraint *(*constraint_6dof)(bc_world *world, bc_body *a, bc_body *b, const bc_6dof_desc *desc, char *err);
    bc_constraint *(*constraint_p2p)(bc_world *world, bc_body *a, bc_body *b, const bc_p2p_desc *desc, char *err);
    bc_constraint *(*constraint_cone_twist)(bc_world *world, bc_body *a, bc_body *b, const bc_cone_twist_desc *desc,
                                            char *err);
    bc_constraint *(*constraint_slider)(bc_world *world, bc_body *a, bc_body *b, const bc_slider_desc *desc, char *err);
    bc_constraint *(*constraint_hinge)(bc_world *world, bc_body *a, bc_body *b, const bc_hinge_desc *desc, char *err);
    /* Constraints are added with disableCollisionsBetweenLinkedBodies = true, as MMD does. */

    /* A soft body made of desc's nodes (no links, no faces yet); added to the world by soft_finish. */
    bc_soft *(*soft_create)(bc_world *world, const bc_soft_desc *desc, char *err);
    void (*soft_append_link)(bc_soft *soft, uint32_t a, uint32_t b);
    void (*soft_append_face)(bc_soft *soft, uint32_t a, uint32_t b, uint32_t c);
    /* Material 0's LST, AST, VST. */
    void (*soft_set_material)(bc_soft *soft, float lst, float ast, float vst);
    /* generateBendingConstraints(distance, material 0). */
    void (*soft_bending)(bc_soft *soft, int distance);
    /* randomizeConstraints(): shuffles links and faces with Bullet's own fixed-seed generator. */
    void (*soft_randomize)(bc_soft *soft);
    /* generateClusters(k). */
    void (*soft_clusters)(bc_soft *soft, int k);
    void (*soft_set_config)(bc_soft *soft, const bc_soft_config *config);
    /* setTotalMass(mass, from_faces = false) -- keeps nodes whose mass was 0 pinned. */
    void (*soft_set_total_mass)(bc_soft *soft, float mass);
    /* appendAnchor(node, body, disableCollisionBetweenLinkedBodies = true, influence 1). */
    void (*soft_append_anchor)(bc_soft *soft, uint32_t node, bc_body *body);
    /* Adds the soft body to the world (after links, faces, config, mass). */
    void (*soft_finish)(bc_soft *soft);

    size_t (*soft_node_count)(const bc_soft *soft);
    /* Copies node positions, velocities and normals (each may be NULL) for nodes first..first+count. */
    void (*soft_get_nodes)(const bc_soft *soft, size_t first, size_t count, float (*x)[3], float (*v)[3],
                           float (*n)[3]);
    /* Sets one node's position (m_x and m_q) and velocity. */
    void (*soft_set_node)(bc_soft *soft, uint32_t node, const float x[3], const float v[3]);
    /* Sets one node's inverse mass (0 pins it; its velocity is then zeroed so it stands still). */
    void (*soft_set_node_inverse_mass)(bc_soft *soft, uint32_t node, float im);
    /* Whole-body state for restore after a blow-up: every node's x and v (node_count entries each). */
    void (*soft_set_all_nodes)(bc_soft *soft, const float (*x)[3], const float (*v)[3]);
    /* Removes the soft body from the simulation without freeing it (a frozen, failed body). */
    void (*soft_freeze)(bc_soft *soft);
    /* setPose(volume, frame) from the current nodes and masses (after soft_set_total_mass): the rest
     * volume that kVC conserves and the rest shape that kMT matches. Without it Bullet's kVC squeezes
     * the body toward zero volume and kMT does nothing. Ignored when no node has mass. (version 2) */
    void (*soft_set_pose)(bc_soft *soft, bool volume, bool frame);
    /* One bending link a-b on material 0, flagged m_bbending, exactly what generateBendingConstraints
     * appends for each pair it finds: plush finds the pairs itself on large bodies, where Bullet's n*n
     * distance table would not fit in memory (60k nodes: 14 GB). (version 3) */
    void (*soft_append_bending_link)(bc_soft *soft, uint32_t a, uint32_t b);
    /* Puts a dynamic body at pose m at rest (velocities and forces zero) and drops its contact points,
     * whose cached impulses would carry a blown-up state into the next solve. A non-finite m is
     * ignored. (version 4) */
    void (*body_reset)(bc_body *body, const float m[16]);
    /* Bullet leaves the pair soft-body, rigid-body alone (no node contacts): plush collides the soft body's
     * faces with that body itself. (version 5) */
    void (*soft_ignore_body)(bc_soft *soft, bc_body *body);
    /* Every link's rest length (the mesh's and the bending ones) set to its two nodes' distance in x (one
     * position per node), held within [1 / most, most] times their distance in rest (a non-finite or zero
     * distance keeps the link's length). (version 6) */
    void (*soft_link_rest)(bc_soft *soft, const float (*x)[3], const float (*rest)[3], float most);
} plush_bulletc_api;

/* The one exported symbol. Returns NULL when version differs from the library's. */
#define PLUSH_BULLETC_SYMBOL "plush_bulletc_get"
typedef const plush_bulletc_api *(*plush_bulletc_get_fn)(uint32_t version);
#if defined(_WIN32) && defined(PLUSH_BULLETC_BUILD)
__declspec(dllexport) /* a DLL that names one export exports nothing else */
#elif defined(__GNUC__) && !defined(_WIN32)
__attribute__((visibility("default")))
#endif
const plush_bulletc_api *plush_bulletc_get(uint32_t version);

#ifdef __cplusplus
}
#endif
#endif
