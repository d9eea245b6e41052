/* A PMX rigid body's shape as plain geometry (rigid_shape.c): where a point lies against it. Used by the
 * soft bodies' faces against the body (world_soft_collide.c) and by the scene's attach and body measure. */
#ifndef PLUSH_PHYSICS_RIGID_SHAPE_H
#define PLUSH_PHYSICS_RIGID_SHAPE_H

#include "plush/pmx.h"

#include <stdbool.h>

/* The signed distance from p, in the body's frame, to its shape's surface (sphere: radius size[0]; box: half
 * extents size; capsule: radius size[0], cylinder height size[1] along local Y): negative inside, infinity
 * for an unknown shape. With normal non-NULL, the unit direction in the body's frame in which the distance
 * grows fastest (out of the shape) is written there. */
double plush__rigid_shape_distance(const plush_pmx_rigid_body *rb, const double p[3], double normal[3]);
/* The body's half thickness: its radius, or a box's smallest half extent. */
double plush__rigid_shape_thickness(const plush_pmx_rigid_body *rb);
/* The radius of a sphere about the body's origin that holds its shape. */
double plush__rigid_shape_reach(const plush_pmx_rigid_body *rb);
/* Whether a point that moved in a straight line from `from` to `to` (both in the body's frame) went through the
 * body: its path comes within half the body's thickness of the shape's axis (a capsule's segment, a sphere's
 * centre), both its ends lie outside that core, and it ends on the other side of the axis from where it began
 * (their directions from the axis more than a right angle apart). A point that slides round a limb's surface
 * stays further from the axis, unless it turns more than 120 degrees about it in one step; one that stays deep
 * inside does not count. False for a box or an unknown shape. */
bool plush__rigid_passed_through(const plush_pmx_rigid_body *rb, const double from[3], const double to[3]);
/* How far p (in the body's frame) must move along the unit direction dir to lie margin outside the shape
 * (negative margin: that deep inside), found by steps that never overshoot; 0 when it already does, when dir is
 * zero, or when that way does not lead there within twice the body's thickness (and the margin). */
double plush__rigid_way_out(const plush_pmx_rigid_body *rb, const double p[3], const float dir[3], double margin);
/* p in the frame of a column-major rigid transform m. */
void plush__rigid_local(const float m[16], const float p[3], double out[3]);
/* p inside (or on) the body's shape placed by `pose`, a column-major rigid transform (its PMX pose is
 * plush_world_rigid_rest_transform's, worked out once per body, not per point). */
bool plush__rigid_inside(const plush_pmx_rigid_body *rb, const float pose[16], const float p[3]);

/* Per bone of m, a rigid body physics moves (mode 1 or 2) that drives it, or -1: map has bone_count slots. */
void plush__rigid_dynamic_per_bone(const plush_pmx_model *m, int32_t *map);
/* Per bone of m, whether physics moves it: a rigid body physics moves (mode 1 or 2) drives it or one of its
 * ancestors. moved has bone_count slots. */
void plush__rigid_moved_bones(const plush_pmx_model *m, bool *moved);
/* The share of the listed vertices the model's own physics moves: weighted to a bone a dynamic rigid body drives
 * or hangs below one (0 when none is listed, or out of memory). */
double plush__rigid_moved_share(const plush_pmx_model *m, const uint32_t *vertices, size_t count);
/* The model's visible skin, per vertex (vertex_count slots): a vertex of a material drawn at all (diffuse alpha
 * above 0) that is no soft body's, carried by bones no rigid body's physics moves (the body as its bones carry
 * it: bangs or a skirt on the author's physics are soft parts of their own). False when out of memory. */
bool plush__rigid_skin_vertices(const plush_pmx_model *m, bool *skin);
/* Whether vertex v of m meets the rigid body `body` (one that follows its bone) by the model's own collision
 * groups: a vertex weighted to bones that physics moves meets it when at least one of those bones' bodies
 * collides with it (each in the other's mask, as Bullet filters pairs); a vertex that only bones carry (a
 * skirt weighted to the hips) meets every body. The callers ask it only of a body the soft part lies into at
 * rest (a helper capsule holding a braid's root): a limb stays the body whatever the groups say. `dynamic`
 * is plush__rigid_dynamic_per_bone's map. */
bool plush__rigid_vertex_meets(const plush_pmx_model *m, const int32_t *dynamic, uint32_t v, uint32_t body);

#endif
