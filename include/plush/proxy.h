/* Proxy skinning: bind detailed vertices to the four nearest triangles of a coarse proxy, rebuild each
 * proxy triangle's frame from simulated nodes, and skin the detailed mesh with those frames.
 * Plain arrays only: this module knows nothing of PMX or Bullet.
 *
 *   plush_proxy_mesh proxy = { .nodes = rest_nodes, .node_count = n, .triangles = tris, .triangle_count = t };
 *   plush_proxy_binding *bind = NULL;
 *   plush_proxy_bind(&proxy, rest_positions, vertex_count, NULL, &bind, &diag);
 *   plush_proxy_skin *skin = NULL;
 *   plush_proxy_skin_create(&proxy, bind, rest_positions, rest_normals, NULL, &skin, &diag);
 *   each frame:
 *       plush_proxy_skin_update(skin, simulated_nodes);            // F_i(t) * F_i(0)^-1 per triangle
 *       plush_proxy_skin_apply(skin, positions, normals);          // in: bone-skinned, out: proxy-skinned
 *   plush_proxy_skin_destroy(skin);
 *   plush_proxy_binding_free(bind);
 *
 * Frame of triangle (p0, p1, p2): origin = centroid c, Z = unit((p1-p0) x (p2-p0)),
 * Y = unit(p0 - c), X = unit(Y x Z). Matrices are column-major 4x4 (cglm layout), v' = M * v.
 */
#ifndef PLUSH_PROXY_H
#define PLUSH_PROXY_H

#include "plush/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct plush_proxy_mesh {
    const float (*nodes)[3];
    size_t node_count;
    const uint32_t (*triangles)[3];   /* node indices */
    size_t triangle_count;
} plush_proxy_mesh;

enum { PLUSH_PROXY_INFLUENCES = 4 };
/* Coordinates the binding accepts (beyond it, distances lose every digit a weight needs). */
#define PLUSH_PROXY_COORDINATE_LIMIT 1e15f

typedef enum plush_proxy_search {
    PLUSH_PROXY_SEARCH_BVH = 0,     /* Embree point queries; libembree3.so.3 is dlopen'ed on first use (never
                                     * linked); when it cannot be loaded the call binds by brute force
                                     * (same result) and adds a warning to diag */
    PLUSH_PROXY_SEARCH_BRUTE = 1    /* every triangle for every vertex: the reference for tests */
} plush_proxy_search;

/* Zero fields mean the defaults. */
typedef struct plush_proxy_bind_options {
    bool seed;              /* reproduce the original method: its distance routine, tie order, integer percents */
    float drop_ratio;       /* a triangle with d_i / d_0 above this is dropped; 0: 3; else at least 1 */
    float falloff;          /* default mode: w_i proportional to d_i^-falloff; 0: 1; at most 64 */
    float max_distance;     /* default mode: vertices with d_0 beyond this stay on bone skinning; 0: no limit */
    float handover;         /* default mode: width of the smooth hand-over band that ends at max_distance */
    plush_proxy_search search;
    int threads;            /* 0 or 1: the calling thread; results are identical for any count (max 64) */
} plush_proxy_bind_options;

/* The binding: per detailed vertex, up to four triangles (nearest first, ties by lower triangle index;
 * in seed mode by higher index, as the original's scan; unused slots -1 with weight and distance 0).
 * Owned by its arena; free with plush_proxy_binding_free. */
typedef struct plush_proxy_binding {
    size_t vertex_count;
    size_t triangle_count;               /* of the proxy it was bound to */
    int32_t (*triangles)[PLUSH_PROXY_INFLUENCES];
    float (*weights)[PLUSH_PROXY_INFLUENCES];  /* sum to 1 over used slots (seed: percent / 100) */
    float (*distances)[PLUSH_PROXY_INFLUENCES];/* distance to each used triangle (seed: the original routine's) */
    uint8_t (*percent)[PLUSH_PROXY_INFLUENCES];/* seed mode: integer weights summing to 100; NULL otherwise */
    float *proxy_share;                  /* 1: skinned by the proxy; 0: stays on bone skinning; between: hand-over
                                          * (smoothstep over the band; seed mode: always 1) */
    bool seed;
    plush_arena arena;
} plush_proxy_binding;

/* Binds count points (the detailed rest positions). Both searches and any thread count give the same
 * binding to the bit. A triangle is never chosen when it is degenerate: in the default mode when twice
 * its area is at most 1e-6 of its longest edge squared or plush_proxy_triangle_frame rejects it; in seed
 * mode only when the original's arithmetic has no normal for it (zero cross product: its distance would
 * be NaN). d_0 below 1e-5 binds to that triangle alone, in both modes. Fails with PLUSH_E_ARGUMENT on
 * no usable triangle, a coordinate that is not finite or beyond 1e15, bad options or NULL arguments, and
 * with PLUSH_E_RANGE on a node index out of range; diag names the triangle, node or point. count 0
 * gives an empty binding. */
plush_status plush_proxy_bind(const plush_proxy_mesh *proxy, const float (*points)[3], size_t count,
                              const plush_proxy_bind_options *options, plush_proxy_binding **out, plush_diag *diag);
/* Frees a binding and its arrays; NULL is a no-op. */
void plush_proxy_binding_free(plush_proxy_binding *binding);
/* Smoothing a default-mode binding along the detailed surface (plush_proxy_binding_smooth). Zero fields
 * mean the defaults. */
/* The default reach: 4 on the demo bear's figures first, 8 on the shared characters' long hair and dresses,
 * checked on the demo, the test toy and every shared character (docs/surface.md). */
#define PLUSH_PROXY_SMOOTH_RADIUS 8.0
/* ... for a cage of at least this many triangles (the default cage's target, 300, less the 20% a made cage may
 * miss it by). A coarser cage of T triangles smooths over the length that reach has on a cage of this many:
 * PLUSH_PROXY_SMOOTH_RADIUS x sqrt(T / PLUSH_PROXY_SMOOTH_TRIANGLES) of its edges. Eight of its own longer
 * edges reached across a whole part: every vertex took the same weights, and the detailed surface one rigid
 * motion (a skirt caged with 100 triangles read strain 1.000 and crease 0 at every frame while its cage bent
 * 34 degrees). */
#define PLUSH_PROXY_SMOOTH_TRIANGLES 240.0
typedef struct plush_proxy_smooth_options {
    float radius;           /* smoothing reach in mean proxy edge lengths; 0: PLUSH_PROXY_SMOOTH_RADIUS, or
                               less on a cage under PLUSH_PROXY_SMOOTH_TRIANGLES */
    const int32_t *node_bone; /* per proxy node, the bone that holds it (pinned), -1 where free; NULL: none.
                                 A cage held across a joint (a second bone holds a tenth of its held nodes or
                                 more) is smoothed over a reach that shrinks with how held a point's triangles
                                 are, to half where all of them are */
    const float *point_swung; /* per point, the share of its skinning weight on bones in chains the model's own
                                 physics swings (0..1; NULL: none). A pinned cage piece whose points are half so or
                                 more is smoothed over at most its free length (the farthest its free nodes lie from
                                 a pinned one along its edges) */
} plush_proxy_smooth_options;
/* Makes the weights continuous across the detailed surface: faces (indices into the binding's points,
 * which are welded by position first so seams count as joined) define the surface and its connected
 * pieces. Each point's weights become the mean of the weights around it on its own piece (clusters of
 * nodes per grid cell radius/2 proxy edges wide, weighted by a smooth kernel of their distance, reaching
 * radius times the larger of the mean proxy edge and the point's distance d_0 to the proxy), keeping the
 * eight strongest triangles; then the four strongest minus the fifth's
 * weight (so a triangle leaves the four at weight zero), listed nearest first with exact distances.
 * Points with no triangle stay as they are and take no part. proxy must be the mesh the binding was made
 * for. PLUSH_E_CONFLICT on a seed binding (the original method stays as it is), PLUSH_E_RANGE on a face
 * index beyond the points. */
plush_status plush_proxy_binding_smooth(plush_proxy_binding *binding, const plush_proxy_mesh *proxy,
                                        const float (*points)[3], const uint32_t (*faces)[3], size_t face_count,
                                        const plush_proxy_smooth_options *options, plush_diag *diag);

/* Whether the optional libraries can be loaded (each is, on the first call, once per process). False with
 * PLUSH_E_LIBRARY in diag (may be NULL) naming what was tried; callers can ask before starting.
 * Embree, for PLUSH_PROXY_SEARCH_BVH: without it plush_proxy_bind searches by brute force (same result). */
bool plush_proxy_search_available(plush_diag *diag);
/* meshoptimizer, for plush_cage_simplify (plush/cage.h): without it cages cannot be simplified. */
bool plush_proxy_simplify_available(plush_diag *diag);

typedef enum plush_proxy_blend {
    PLUSH_PROXY_BLEND_LINEAR = 0,          /* linear blend of the skin matrices */
    PLUSH_PROXY_BLEND_DUAL_QUATERNION = 1  /* dual-quaternion blend of the rigid frames */
} plush_proxy_blend;

/* The nodes a patch holds: the triangle's corners, those within `rings` in [0, 64] edge steps of them,
 * and those within reach x D along the cage's edges (shortest paths over edge lengths from the corners),
 * D the bounding-box diagonal of the triangle's connected piece. The reach is the same share of the
 * piece whatever the cage's resolution, so cages of 300 and 3,000 triangles smooth at the same scale;
 * the rings keep a patch of a few steps on small pieces (a strand of hair of a dozen nodes). */
typedef struct plush_proxy_patch_shape {
    int rings;
    float reach;
} plush_proxy_patch_shape;

typedef struct plush_proxy_skin_options {
    plush_proxy_blend blend;
    bool stretch;           /* stretch-aware frames: each triangle's deformation gradient, blended linearly
                             * (with DUAL_QUATERNION, create fails with PLUSH_E_CONFLICT) */
    plush_proxy_patch_shape patch; /* {0, 0}: each triangle's own frame (above); rings >= 1 or reach > 0:
                                    * patch frames (plush_proxy_patch), the rigid motion fitted to the
                                    * nodes of that shape around the triangle; not with stretch
                                    * (PLUSH_E_CONFLICT) */
} plush_proxy_skin_options;
/* Patch frames: per proxy triangle, the best rigid motion (shape matching) of the nodes within `rings`
 * edge steps of its corners: x -> R (x - m0) + m with m0, m the patch's mean node at rest and now and R
 * the rotation of sum (p - m)(p0 - m0)^T, found by an iteration warm-started from the last update (so
 * a sequence of updates is deterministic, and any sequence converges to the same rotation to about
 * 1e-13). Each triangle turns with its neighbourhood rather than its own corners: detailed vertices off
 * the cage no longer swing with every wrinkle. A patch whose nodes lie nearly on a line (a strand an edge or
 * less across, whose nodes cannot tell its twist) takes its turn about the line from the patch it hangs from.
 * A rigid motion of the whole proxy is reproduced exactly. Nodes that are not finite leave a patch's motion as
 * it was. */
typedef struct plush_proxy_patch plush_proxy_patch;
/* Stretch-aware: S_i maps x to c(t) + A (x - c(0)) with A = [e1 e2 n'][E1 E2 N]^-1 (edges from p0 now
 * and at rest, N the rest unit normal, n' the current one scaled by sqrt(area / rest area)); normals go
 * through the inverse transpose of the blended A. A uniform scale of the proxy is reproduced exactly
 * everywhere, any affine map exactly on the proxy's surface; off it, distance along the normal scales
 * by sqrt(area ratio). */

typedef struct plush_proxy_skin plush_proxy_skin;

/* Sizes every buffer once; per-frame calls allocate nothing. rest_normals may be NULL (normals are then
 * never skinned). The rest proxy, binding and rest arrays must outlive the skin, and the binding's
 * triangle indices must not change after create (they are checked once, not per frame). Every S_i is the
 * identity until the first update; a triangle degenerate at rest has no frame to invert and keeps the
 * identity for good (counted as a warning in diag). Fails on a binding made for another triangle count
 * (PLUSH_E_ARGUMENT) or a node or triangle index out of range (PLUSH_E_RANGE). */
plush_status plush_proxy_skin_create(const plush_proxy_mesh *rest, const plush_proxy_binding *binding,
                                     const float (*rest_positions)[3], const float (*rest_normals)[3],
                                     const plush_proxy_skin_options *options, plush_proxy_skin **out,
                                     plush_diag *diag);
/* Rebuilds S_i = F_i(t) * F_i(0)^-1 for every triangle from the current node positions (same count and
 * order as the rest proxy). A triangle that degenerates keeps its last valid matrix. */
void plush_proxy_skin_update(plush_proxy_skin *skin, const float (*nodes)[3]);
/* Skins every bound vertex: Sum w_i S_i p (linear) or the blended dual quaternion, normals through the
 * blend's linear part and renormalised. positions/normals hold the bone-skinned values on entry and the
 * result on return: with s = proxy_share, s * proxy + (1 - s) * input, normals renormalised after the
 * mix; s = 0 leaves the vertex untouched and s = 1 never reads the input. A binding without proxy_share
 * (NULL) counts as s = 1 everywhere. normals may be NULL. On x86 CPUs with AVX2 wider kernels run; they
 * give the same results as the portable ones. From 8,192 vertices two threads share them (the same
 * results). */
void plush_proxy_skin_apply(const plush_proxy_skin *skin, float (*positions)[3], float (*normals)[3]);
/* Moves every triangle's current skin transform by offsets[i] (count = the proxy's triangles; added to the
 * translation, so the linear blend moves a vertex by sum w_i offsets[i]), until the next update. A host
 * that nudges the skinned surface, as plush's scene does to keep it out of the body, keeps its
 * matrices (plush_proxy_skin_matrix, the bake) saying where the vertices went. Non-finite offsets are
 * ignored. */
void plush_proxy_skin_translate(plush_proxy_skin *skin, const float (*offsets)[3]);
/* The skin's patch frames (updated by plush_proxy_skin_update), or NULL when it uses each triangle's own. */
const plush_proxy_patch *plush_proxy_skin_patch(const plush_proxy_skin *skin);
/* The current skin matrix of a triangle (16 floats, column-major); NULL when out of range. */
const float *plush_proxy_skin_matrix(const plush_proxy_skin *skin, size_t triangle);
void plush_proxy_skin_destroy(plush_proxy_skin *skin);

#ifdef __cplusplus
}
#endif
#endif
