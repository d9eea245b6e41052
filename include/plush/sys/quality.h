/* Which points lie behind a surface: the visible skin a soft part must not pass through (docs/measured.md,
 * "Behind the visible skin").
 *
 *   plush_quality_skin *skin = NULL;
 *   plush_quality_skin_create(rest, rest_normals, vertex_count, triangles, triangle_count, points,
 *                             point_count, &skin, &diag);
 *   each frame: plush_quality_skin_pose(skin, positions, normals);
 *               size_t n = plush_quality_skin_behind(skin, 0, positions, 1, &measured, &deepest);
 *   plush_quality_skin_destroy(skin);
 *
 * A point is behind the skin when it lies on the back of its nearest skin triangle, the side told by the
 * pseudo-normal of the nearest feature (Baerentzen and Aanaes 2005): the triangle's normal inside it, the sum
 * of the two triangles' on an edge, the angle-weighted sum of a vertex's triangles at a corner (vertices
 * welded by rest position; each triangle's normal turned to the side the model's normals give, so a face
 * wound the other way still faces out). On a closed surface this tells inside from outside wherever the
 * point lies. The skin is usually open (a body under clothes, a head under hair, a sleeve's cuff): a point
 * nearest a border edge or a border corner lies beyond the rim, where there is no inside, and is in front.
 * Points behind the skin or touching it at rest (a hair root in the scalp, a collar sewn to the neck) are
 * left out: the measure reads 0 on the model at rest by construction, and says how many it left out.
 */
#ifndef PLUSH_SYS_QUALITY_H
#define PLUSH_SYS_QUALITY_H

#include "plush/core.h"
#include "plush/quality.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct plush_quality_skin plush_quality_skin;

/* How many point sets plush_quality_skin_behind keeps apart (each remembers its points' last nearest
 * triangles, which makes the next frame's search short). */
#define PLUSH_QUALITY_SKIN_SLOTS 2

/* The strain figures alone (strain_p50 .. strain_max, strain_outside, edges, short_edges; no crease, volume or
 * tear: crease_* 0, volume_ratio NaN), as plush_quality_measure gives them: for a surface only its stretch is
 * asked of (the author's own part, against which plush's swing is judged). */
void plush_quality_measure_strain(plush_quality *q, const float (*positions)[3], plush_quality_figures *out);

/* The skin: triangles over vertex indices (< vertex_count) with the rest positions and unit normals; the
 * points measured: vertex indices into the same numbering (points on the skin's own triangles are allowed
 * but are usually left out, touching it); depth: the deepest a point can lie behind the skin (the body's
 * half-thickness), so a point farther than it from every triangle is in front of it (0: no bound; a bound
 * makes the search short). Nothing is kept of the arrays but points. Fails on an index out of range
 * (PLUSH_E_RANGE) or no memory; with no triangle every point is left out. */
plush_status plush_quality_skin_create(const float (*rest)[3], const float (*rest_normals)[3], size_t vertex_count,
                                       const uint32_t (*triangles)[3], size_t triangle_count, const uint32_t *points,
                                       size_t point_count, double depth, plush_quality_skin **out, plush_diag *diag);
/* The skin at this frame: vertex_count positions and unit normals, borrowed until the next pose. */
void plush_quality_skin_pose(plush_quality_skin *skin, const float (*positions)[3], const float (*normals)[3]);
/* How many of the points measured lie behind the posed skin where `at` (indexed by vertex, like positions)
 * puts them, looking at every step-th point (0 or 1: all); measured (when not NULL) gets how many of those
 * were measured, deepest (when not NULL) the largest distance behind the skin. slot < PLUSH_QUALITY_SKIN_SLOTS
 * names the set (one per source of positions: where plush puts the points, where the author's skinning does);
 * calls may run at once on several threads when no two of them look at the same point of the same slot (each
 * search keeps its own stack). */
size_t plush_quality_skin_behind(plush_quality_skin *skin, int slot, const float (*at)[3], size_t step, size_t *measured,
                                 double *deepest);
/* The same over the step-th points i with first <= i < end (SIZE_MAX: to the last): a slot's points split into
 * ranges may be measured on several threads at once, and the counts added give the whole's. */
size_t plush_quality_skin_behind_range(plush_quality_skin *skin, int slot, const float (*at)[3], size_t step,
                                       size_t first, size_t end, size_t *measured, double *deepest);
/* How far point i (of those given at create) at p, behind the posed skin, must move along dir (unit, the
 * skin's normals at its nearest point) to lie margin in front of it: positive when it is behind; else minus
 * its distance in front (how much nearer it may come), at least -reach: no skin triangle lies within reach of
 * it, nor within the depth bound, so a point behind the skin deeper than reach is not seen; dir is zero unless
 * it is behind; -INFINITY for a point left out at rest. For speed, but at every PLUSH_QUALITY_SKIN_RECHECK-th
 * pose (points take turns), a point found beyond reach the last time (in this slot) is taken to be still, and
 * one in front of its nearest triangle the last time by at least the margin is answered from that triangle
 * alone, without a search: what it answers is for keeping points out of the skin, not for counting them
 * (plush_quality_skin_behind always searches). With search, it searches whatever the turn: for a point moved
 * since its last answer by more than that triangle can vouch for (a push carries it past the triangle). */
#define PLUSH_QUALITY_SKIN_RECHECK 8
double plush_quality_skin_depth(plush_quality_skin *skin, int slot, size_t i, const float p[3], double margin,
                                double reach, bool search, float dir[3]);
/* The skin as a cover over the points (a garment over the visible skin): a point is covered when the ray from it
 * along its normal (outward, away from what it is the skin of) meets a triangle of the skin, either side, within
 * reach. plush_quality_skin_keep_covered measures, from now on, the points covered at rest (rest and rest_normals:
 * vertex_count each; the next pose takes the skin from there), whatever create kept, and says how many;
 * plush_quality_skin_uncovered gives how many of every step-th point measured are not covered at the pose where
 * at and normals put them (measured, when not NULL: how many were looked at). The two sides of a layered part
 * cover alike. */
size_t plush_quality_skin_keep_covered(plush_quality_skin *skin, const float (*rest)[3], const float (*rest_normals)[3],
                                       double reach);
size_t plush_quality_skin_uncovered(const plush_quality_skin *skin, const float (*at)[3], const float (*normals)[3],
                                    size_t step, double reach, size_t *measured);
/* Whether point i's turn for a full search in plush_quality_skin_depth is this pose. */
bool plush_quality_skin_turn(const plush_quality_skin *skin, size_t i);
/* Of every step-th point (0 or 1: all), those measured (not left out at rest) and those left out. */
size_t plush_quality_skin_measured(const plush_quality_skin *skin, size_t step);
size_t plush_quality_skin_left_out(const plush_quality_skin *skin, size_t step);
void plush_quality_skin_destroy(plush_quality_skin *skin);

/* Folds whose two faces have every corner marked in held (vertex_count entries) take no part in the crease
 * from now on: a cage's faces pinned at every corner move with the bones that carry their pins, so a crease
 * between two of them is the model's own skinning (the back of a bent knee), not a fold of the simulated
 * cloth. The number of folds left out. */
size_t plush_quality_hold_folds(plush_quality *q, const bool *held);

#ifdef __cplusplus
}
#endif

#endif
