/* plush physics: the Bullet world the scene steps (plush_world_*).
 * Extension-level API (as libgit2's sys/): what plush's own modules, its command-line tool and its
 * tests use beside the public plush/physics.h; a host program needs none of it. */
#ifndef PLUSH_SYS_PHYSICS_H
#define PLUSH_SYS_PHYSICS_H

#include "plush/physics.h"
#include "plush/sys/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most solver iterations of each kind a soft body runs (larger counts are clamped, with a warning):
 * Bullet runs each count per fixed step, and a hostile file must not hang a step (the world and the run's
 * budget both hold to it). */
#define PLUSH_WORLD_SOFT_MAX_ITERATIONS 1000

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
/* The length of the world's gravity, its defaults applied (98 units/s^2 when none was given; 0 in a weightless
 * world or with no world). */
double plush_world_gravity(const plush_world *world);
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
/* Soft body i keeps the shape the model's own rig gives the part, not its rest shape, from now on: its shape
 * memory (kMT, matched by plush) pulls each free node toward its rest shape turned as its pins turn (the
 * rest of it does not turn the frame: a swing cannot feed itself) plus the offset plush_world_set_goal_offsets
 * hands in for it (how far the author's physics moves the part there from the pose without physics), and its
 * links' rest lengths follow that goal within PLUSH_WORLD_FOLLOW_STRETCH of their own. False (nothing
 * changes) for a rope, a body without shape memory or free nodes, or out of memory. */
bool plush_world_soft_follow(plush_world_model *wm, size_t soft_body);
/* Per PMX vertex (model->vertex_count entries), the following soft bodies' nodes' offsets, read from their PMX
 * vertices before each plush_world_step (not finite or out of reach: none). */
void plush_world_set_goal_offsets(plush_world_model *wm, const float (*vertex_offsets)[3]);
/* Per PMX vertex, where the model's bones carry the following soft bodies' nodes whose part no physics moves
 * (NULL, not finite or out of reach: none), read before each plush_world_step: a node given one takes it as its
 * goal in place of its rest shape turned as its pins turn, pulled there hard enough that its own weight leaves it
 * within the piece's collision margin (at least as hard as its piece's shape memory; docs/run.md), so
 * the rows its author carried with the body move with it (a dress's front weighted to the legs goes with a rising
 * knee), where one turn of the whole piece does not. */
void plush_world_set_goal_bases(plush_world_model *wm, const float (*vertex_positions)[3]);
/* A link's rest length follows the author's shape within this factor of its own, either way: the part bends
 * and turns as the author's rig does but a cloth of it does not stretch or shrink by more than a few percent
 * (docs/attach.md). */
#define PLUSH_WORLD_FOLLOW_STRETCH 1.05f
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
