/* The small geometry kernel cglm lacks (internal; not installed): welding points by position, union-find,
 * and the rotation of a matrix as a quaternion. Every module uses these instead of its own copy.
 *
 *     plush__weld w;                                  // weld a stream of points (faces' vertices, ...)
 *     if (!plush__weld_init(&w, most_distinct)) ...
 *     bool added;
 *     uint32_t node = plush__weld_add(&w, p, &added); // nodes numbered in order of first appearance
 *     ... w.positions[0 .. w.count-1] ...
 *     plush__weld_free(&w);
 *
 *     uint32_t *node_of = ...;                        // or a whole array at once
 *     size_t n = plush__weld_positions(points, count, node_of, first_point);
 *
 *     plush__uf_init(parent, n);                      // union-find over 0..n-1
 *     plush__uf_union(parent, a, b);                  // the smaller root stands for the joined set
 *     if (plush__uf_find(parent, x) == x) ...         // x is its set's smallest member
 *
 *     double q[4];
 *     plush__mat3_to_quat(m, 3, q);                   // column-major 3x3 (stride 4 for a mat4) -> x y z w
 *
 *     plush__point_grid g;                            // the nearest of many points, asked many times
 *     if (!plush__point_grid_init(&g, &verts[0].position, count, sizeof verts[0])) ...
 *     size_t v = plush__point_grid_nearest(&g, p);    // what a scan by index would pick
 *     plush__point_grid_free(&g);
 *
 *     double d = plush__dot3d(a, b);                  // vectors in double (cglm's are float)
 *     plush__cross3d(a, b, n);                        // n may be a or b
 */
#ifndef PLUSH_CORE_GEOM_H
#define PLUSH_CORE_GEOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- vectors in double precision (cglm's are float) ----------------------------------------------- */

static inline double plush__dot3d(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* out = a x b; out may be a or b. */
static inline void plush__cross3d(const double a[3], const double b[3], double out[3])
{
    double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

/* ---- welding by position ---------------------------------------------------------------------------- */

/* Points weld when all three coordinates compare equal (+0 equals -0; a NaN coordinate never welds).
 * Nodes are numbered in the order their first point was added, whatever the table's hashing does, so
 * the numbering is the one a scan in input order gives. positions[n] is the first point of node n, as
 * given (a -0 stays -0). */
typedef struct plush__weld {
    uint32_t *slots;         /* open addressing: node + 1, 0 empty */
    size_t mask;
    float (*positions)[3];   /* count of them; room for most */
    size_t count, most;
} plush__weld;

/* A table for at most `most` distinct points (it stays at most half full). False when out of memory
 * (w is then safe to free). */
bool plush__weld_init(plush__weld *w, size_t most);
/* The node of p, a new one when no earlier point sits there (*added, when not NULL, tells which). Adding a
 * new point beyond `most` is a programming error. */
uint32_t plush__weld_add(plush__weld *w, const float p[3], bool *added);
/* Frees the table; plush__weld_free on a zeroed or freed weld is a no-op. */
void plush__weld_free(plush__weld *w);

/* Welds points[0..count-1] in index order: node_of[i] gets the node of point i and, when first is not
 * NULL, first[n] the smallest point index of node n. Returns the node count, SIZE_MAX when out of memory. */
size_t plush__weld_positions(const float (*points)[3], size_t count, uint32_t *node_of, uint32_t *first);

/* ---- edges shared by faces ----------------------------------------------------------------------------------- */

/* One face's edge as its two vertex (or node) numbers, lo < hi, the face or other number it belongs to
 * (owner) and a number of the caller's (slot). Sorted by plush__edge_order -- lo, hi, then owner -- the
 * records of one edge come together, its faces in order: how the cage's fold guards, the compare's closed
 * pieces and its finer reference, and the skin's neighbours find the faces that share an edge. */
typedef struct plush__edge {
    uint32_t lo, hi, owner, slot;
} plush__edge;
int plush__edge_order(const void *a, const void *b);

/* One face as its three vertex (or node) numbers, sorted, and the face's own number: sorted by
 * plush__face_key_order -- the numbers, then the face -- the faces on the same three come together (a face
 * repeated, a sheet drawn from both sides). */
typedef struct plush__face_key {
    uint32_t v[3], face;
} plush__face_key;
plush__face_key plush__face_key_of(uint32_t a, uint32_t b, uint32_t c, uint32_t face);
int plush__face_key_order(const void *a, const void *b);

/* ---- the mean edge ----------------------------------------------------------------------------------------- */

/* The mean length of the faces' edges (index_count / 3 faces of idx, each one's three edges; an edge naming
 * one point twice is skipped) over points at `first`, each `stride` bytes after the one before (a float[3]
 * at the start of each). The scale every cage rule is measured in: margins, smoothing cells, the direct
 * reference's calibration. 0 for no edge. */
double plush__mean_edge(const float *first, size_t stride, const uint32_t *idx, size_t index_count);

/* ---- repeated faces -------------------------------------------------------------------------------------- */

/* Marks in drop (faces entries, set to 1; others left as they are) every face of idx (3 indices each) that
 * names a point twice or names the same three points as an earlier face, in any order (two layers sharing
 * positions, front and back faces). False when out of memory (nothing marked). */
bool plush__repeated_faces(const uint32_t *idx, size_t faces, uint8_t *drop);

/* ---- union-find --------------------------------------------------------------------------------------- */

/* parent[i] = i for i < n: n singleton sets. */
void plush__uf_init(uint32_t *parent, size_t n);
/* The root of x's set (path halving on the way). The root is always the set's smallest member. */
uint32_t plush__uf_find(uint32_t *parent, uint32_t x);
/* Joins the sets of a and b under the smaller root; false when they were one set already. */
bool plush__uf_union(uint32_t *parent, uint32_t a, uint32_t b);

/* ---- the best rotation of a covariance ---------------------------------------------------------------- */

/* The rotation R that maximises trace(R^T A), A = sum (p - m)(p0 - m0)^T the covariance of points now (p,
 * about their mean m) against the same points at rest (p0, about m0), as unit quaternion q (x y z w), refined
 * in place from q (last frame's: two or three steps). a[c] is column c of A; a may be changed. Newton steps,
 * Müller et al.'s 2016 step where the Hessian is not positive, restarts from half turns where the climb stops
 * short of the maximum (patch frames, proxy/patch.c; the flat soft bodies' shape, physics/world_soft_shape.c).
 * q ends with w >= 0. */
void plush__fit_rotation(double a[3][3], double q[4]);

/* ---- matrix -> quaternion ----------------------------------------------------------------------------- */

/* The unit quaternion (x y z w) of a rotation matrix stored column-major: element (row r, column c) at
 * m[stride * c + r], so stride 3 reads a mat3 and stride 4 the rotation part of a mat4. Shepperd's method:
 * the square root is taken of the largest of 4w², 4x², 4y², 4z² (the trace or a diagonal term), so it never
 * divides by a small number, also for half-turns where w ≈ 0. w may come out negative; q and -q are the
 * same rotation, and a caller that wants one hemisphere negates all four.
 *
 * One method in two precisions: the float form is what skinning and physics compute in (their outputs are
 * compared byte for byte), the double form what the bake, proxy frames and pose output compute in. */
void plush__mat3_to_quat(const double *m, size_t stride, double q[4]);
/* The other way: the rotation of a unit quaternion (x y z w) into a column-major 3x3, the same layout. */
void plush__quat_to_mat3(const double q[4], double *m, size_t stride);
void plush__mat3_to_quatf(const float *m, size_t stride, float q[4]);
/* Spherical interpolation from a (t = 0) to b (t = 1) along the shorter arc, as MMD players slerp bone
 * keys (a normalised lerp where the two are within 1.8 degrees, where sin(theta) would divide by almost
 * nothing). Unit inputs; out may alias either. */
void plush__quat_slerp(const double a[4], const double b[4], double t, double out[4]);

/* ---- a binary min-heap of (distance, node), for shortest paths over a mesh's edges ------------------- */

typedef struct plush__dist_item {
    double d;
    uint32_t v;
} plush__dist_item;

/* h holds *n items and has room for one more. */
void plush__dist_heap_push(plush__dist_item *h, size_t *n, plush__dist_item x);
/* The nearest item, removed; *n > 0. */
plush__dist_item plush__dist_heap_pop(plush__dist_item *h, size_t *n);
/* For each group of faces (face_group[t] in 0 .. groups; NULL: one group of them all), the farthest any vertex
 * lies from a source vertex of the group along the group's edges (shortest paths from all its sources at once,
 * each edge its length at positions; 0 when it has none) into farthest[group]: a cage piece's free length
 * from its pins. false when out of memory. */
bool plush__farthest_along_faces(const float (*positions)[3], size_t nv, const uint32_t (*triangles)[3], size_t nt,
                                 const uint32_t *face_group, size_t groups, const bool *source, double *farthest);

/* ---- the nearest point --------------------------------------------------------------------------------- */

typedef struct plush__grid_point {
    float p[3];
    uint32_t index;
} plush__grid_point;

/* Points bucketed in a uniform grid of about two points per cell over their box: a query looks at the cells
 * in growing shells around its own and stops once no unseen cell can hold a nearer point, so a query costs
 * about the same whatever the count (a scan costs the count). */
typedef struct plush__point_grid {
    double lo[3], cell;
    size_t n[3];
    uint32_t *start;              /* cell c holds points[start[c] .. start[c + 1] - 1] */
    plush__grid_point *points;    /* the finite points, by cell */
} plush__point_grid;

/* A grid over count points, the first at `first` and each `stride` bytes after the one before (an array of
 * structs holding a float[3]); non-finite points are left out. False when out of memory or count is over
 * UINT32_MAX (g is then safe to free). */
bool plush__point_grid_init(plush__point_grid *g, const float *first, size_t count, size_t stride);
/* The index of the point nearest p (squared distance in double), the smallest index among equally near
 * ones: what a scan in index order keeping the first strictly nearer point picks. SIZE_MAX when no point is
 * finite or p is not. */
size_t plush__point_grid_nearest(const plush__point_grid *g, const float p[3]);
/* Frees the grid; a zeroed or freed grid is a no-op. */
void plush__point_grid_free(plush__point_grid *g);

/* ---- how flat a set of points is ----------------------------------------------------------------------- */

/* 27 l1 l2 l3 / (l1 + l2 + l3)^3 of the moment of points[i] (those with use[i], or all when use is NULL) about
 * their centre, l the moment's eigenvalues: 1 for points spread alike in every direction, 0 on a plane or a
 * line; 1 when there are none. */
double plush__points_spread(const float (*points)[3], size_t count, const bool *use);
/* Nearly flat: a spread under a twentieth (a sheet thinner than about a fiftieth of its width). A soft body so
 * flat has no links across its thickness, and Bullet's pose matching cannot turn its rest shape. */
#define PLUSH__FLAT_SPREAD 0.05

#endif
