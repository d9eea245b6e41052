/* plush proxy internals: patch frames on their own, the distance and frame of one triangle.
 * Extension-level API (as libgit2's sys/): what plush's own modules, its command-line tool and its
 * tests use beside the public plush/proxy.h; a host program needs none of it. */
#ifndef PLUSH_SYS_PROXY_H
#define PLUSH_SYS_PROXY_H

#include "plush/cage.h"
#include "plush/proxy.h"
#include "plush/sys/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Exact closest-point distance from p to triangle (a, b, c) (also correct for degenerate triangles:
 * collapsed to a segment or a point). Computed in double from float input. */
float plush_proxy_point_triangle_distance(const float p[3], const float a[3], const float b[3], const float c[3]);
/* The original method's distance routine (seed mode), operation for operation in float like the original
 * (docs/binding.md): move p along the unit normal by its plane distance; if that
 * point lies strictly outside an edge (tried in the order p0p1, p1p2, p2p0), the distance from p to the
 * first such edge's segment, measured along the normalised edge and clamped at its ends; otherwise the
 * plane distance. Never below the exact distance (up to rounding). NaN for a triangle with a zero cross
 * product, as the original. */
float plush_proxy_seed_distance(const float p[3], const float a[3], const float b[3], const float c[3]);
/* The fewest triangles a separate piece of a cage keeps when the target leaves room (a strip of four quads:
 * a small strand can bend and be pinned at its root by a minority of its nodes). */
#define PLUSH_CAGE_PIECE_FLOOR 8

/* The surface area of a cage mesh (plush/cage.h): its triangles' areas summed in double. */
double plush_cage_mesh_area(const plush_cage_mesh *mesh);

/* A triangle's frame as plush/proxy.h defines it; false (out untouched) when the triangle is degenerate: a
 * non-finite coordinate, or zero area to float precision (the sine of the angle at p0 below 1e-6). */
bool plush_proxy_triangle_frame(const float p0[3], const float p1[3], const float p2[3], float out[16]);
/* PLUSH_E_ARGUMENT on rings outside [0, 64] or a reach that is negative, not finite or above 4;
 * PLUSH_E_RANGE on a node index out of range. The motion is the identity until the first update. */
plush_status plush_proxy_patch_create(const plush_proxy_mesh *rest, plush_proxy_patch_shape shape,
                                      plush_proxy_patch **out, plush_diag *diag);
void plush_proxy_patch_update(plush_proxy_patch *patch, const float (*nodes)[3]);
/* Triangle's current motion: x -> R(q) x + translation, q = (x y z w) with w >= 0. */
void plush_proxy_patch_motion(const plush_proxy_patch *patch, size_t triangle, double q[4], double translation[3]);
/* Nodes in a triangle's patch (0 out of range). */
size_t plush_proxy_patch_size(const plush_proxy_patch *patch, size_t triangle);
void plush_proxy_patch_destroy(plush_proxy_patch *patch);

#ifdef __cplusplus
}
#endif
#endif
