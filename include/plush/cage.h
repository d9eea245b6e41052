/* Cages: a coarse surface around a detailed mesh, to become a soft body's TriMesh (plush proxy).
 * Plain meshes only (positions and triangles in, a cage out): the surface of a PMX model's materials comes
 * from plush_scene_cage_weld (plush/scene_proxy.h).
 *
 *   plush_arena arena = {0};
 *   plush_cage_mesh skin, cage;
 *   const char *names[] = {"hair"};
 *   plush_scene_cage_weld(model, names, 1, &arena, &skin, &diag);                  // the detailed surface
 *   plush_cage_result res;
 *   plush_cage_simplify(&skin, &(plush_cage_options){.target_triangles = 500, .offset = 0.05f}, &arena,
 *                       &cage, &res, &diag);
 *   plush_cage_topology topo;
 *   plush_cage_check(&cage, &topo, &diag);                                  // closed 2-manifold?
 *   float max, mean;
 *   plush_cage_distance(&cage, skin.positions, skin.vertex_count, &max, &mean, &diag);
 *   plush_arena_free(&arena);
 *
 * A model made of several separate closed pieces (a plush toy's body, head, ears and limbs) simplifies into
 * as many pieces, and a piece nothing holds falls. options.wrap makes one closed 2-manifold around all of
 * them instead (plush_cage_wrap, then simplified):
 *
 *   plush_cage_simplify(&skin, &(plush_cage_options){.target_triangles = 500, .wrap = true}, &arena, &cage,
 *                       &res, &diag);                                   // one closed piece
 *
 * Simplification is meshoptimizer's, loaded with dlopen (libmeshoptimizer.so.2d) on the first call and
 * never linked: it is a C++ library, and mapping libstdc++ into every plush process costs the memory
 * `plush info` cannot afford. Everything here writes into the caller's arena; nothing is kept between calls.
 */
#ifndef PLUSH_CAGE_H
#define PLUSH_CAGE_H

#include "plush/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An indexed triangle mesh. normals, when not NULL, are orientation hints per vertex (not necessarily
 * unit length): the sum of the model's own vertex normals welded into the vertex. */
typedef struct plush_cage_mesh {
    size_t vertex_count;
    float (*positions)[3];
    float (*normals)[3];
    int32_t *source;              /* per vertex: the PMX vertex (weld) or source-mesh vertex (simplify) it came
                                   * from; may be NULL */
    size_t triangle_count;
    uint32_t (*triangles)[3];
} plush_cage_mesh;

typedef enum plush_cage_method {
    PLUSH_CAGE_COPY = 0,          /* the input had no more triangles than the target, within its
                                   * tolerance: copied */
    PLUSH_CAGE_LOCKED_BORDER,     /* meshopt_simplify with meshopt_SimplifyLockBorder */
    PLUSH_CAGE_BORDER,            /* meshopt_simplify; border vertices only slide along the border */
    PLUSH_CAGE_SLOPPY             /* meshopt_simplifySloppy: any topology (the last resort) */
} plush_cage_method;

/* The most triangles a cage plush simulates may have (docs/run.md derives it): a proxy's TriMesh soft bodies
 * together, a cage plush attach takes, and what plush_cage_simplify may give (PLUSH_E_BUDGET beyond). */
enum { PLUSH_CAGE_MAX_TRIANGLES = 10000 };

/* Zero fields mean the defaults. */
typedef struct plush_cage_options {
    size_t target_triangles;      /* required, at least 1 */
    float offset;                 /* move every vertex this far along its area-weighted normal (outward,
                                   * as the source normals point); negative moves inward */
    float tolerance;              /* reached when triangles <= target * (1 + tolerance); 0: 0.1 */
    bool wrap;                    /* one closed 2-manifold around every piece (plush_cage_wrap), simplified
                                   * toward the target; offset is then the wrap's distance from the source
                                   * surface (0: 2% of the source's bounding-box diagonal, widened by half
                                   * up to three times while no grid reaches the target; negative fails) */
    float cell;                   /* wrap only: the grid's cell size; 0: chosen from the source's area and
                                   * the target (the wrap has some 4-16 times the target's triangles before
                                   * simplification), between offset / 4 and 1.25 * offset (the band has
                                   * no gap) and at least 1/200 of the model's extent */
} plush_cage_options;

typedef struct plush_cage_result {
    size_t source_triangles;
    size_t triangles;             /* after simplification and cleanup */
    size_t vertices;
    plush_cage_method method;     /* the first of the ladder that reached the target (or the last tried) */
    bool reached;                 /* triangles <= target * (1 + tolerance) */
    float error;                  /* meshoptimizer's resulting error, in model units */
    bool wrapped;                 /* options.wrap: the cage is a simplified wrap (one closed 2-manifold) */
    float wrap_cell, wrap_offset; /* the wrap's grid cell and its distance from the source surface */
    size_t wrap_triangles;        /* the wrap's triangles before simplification */
    size_t surface_triangles;     /* the source's faces with its layers once (0 for a wrap): what is simplified */
    size_t target;                /* the triangle count it was made toward */
} plush_cage_result;

/* Without options->wrap: simplifies src toward options->target_triangles, trying in turn: a locked border,
 * a sliding border, the sloppy simplifier (each only when the one before it stopped above the target). Then drops faces
 * that name a vertex twice and repeated faces (same three vertices), keeps only used vertices (in
 * increasing source order, out->source naming them) and applies the offset. Output vertices are source
 * vertices (moved only by the offset).
 * With options->wrap: plush_cage_wrap at options->offset, simplified as above but never by the sloppy
 * simplifier; the result is kept only when it is one closed 2-manifold within the tolerance of the target,
 * else the wrap is remade on a grid 1.25 times coarser (up to eight times, the band kept gap-free), and with
 * the default offset all that again on a band half as wide again (up to three times). When no grid gives that (a torus cannot have 4 faces), the last grid's wrap is simplified toward 1.25, 1.25^2, ...
 * times the target until the result is one closed piece (at worst the wrap itself), result->reached false;
 * an open cage or one in pieces is never returned. Output vertices are
 * wrap vertices (out->source NULL, out->normals the outward vertex normals); (p1 - p0) x (p2 - p0) points
 * out of every face. The same source and options give the same bytes.
 * Fails with PLUSH_E_ARGUMENT on a target of 0, an empty source or a non-finite position or offset (with
 * wrap: a negative offset or cell, an offset below 0.8 cell), PLUSH_E_RANGE when the wrap's grid would
 * pass 16M points, PLUSH_E_LIBRARY when meshoptimizer cannot be loaded (plush_proxy_simplify_available asks
 * beforehand), PLUSH_E_GEOMETRY when no closed wrap in one piece can be made, PLUSH_E_BUDGET when the cage
 * comes out over both PLUSH_CAGE_MAX_TRIANGLES and its target (a surface no simplifier makes a cage of: a
 * soup of random triangles comes out at twice its source). */
plush_status plush_cage_simplify(const plush_cage_mesh *src, const plush_cage_options *options, plush_arena *arena,
                                 plush_cage_mesh *out, plush_cage_result *result, plush_diag *diag);

/* The wrap: one closed, outward-oriented 2-manifold enclosing every face of src at about `offset` from it.
 * On a grid of `cell`, points within `offset` of a face (exact distance) are solid, the outside is what the
 * grid border reaches through the rest (enclosed hollows fill); the solid is made well-composed (no two
 * cells meeting only along an edge or at a corner: an outside point is added to the solid until none does),
 * separate solid pieces are joined by tubes one cell in radius between their nearest boundary points, and
 * the boundary is extracted as surface nets (a vertex per cell the boundary crosses, at the mean of its
 * edges' crossings of distance = offset, two triangles per crossed grid edge, split along the shorter
 * diagonal). Well-composed, each cell's boundary is one disk, so the result is a closed 2-manifold.
 * Vertices in grid order, out->source NULL, out->normals the outward vertex normals. An offset below half
 * a cell can leave gaps in the band (the outside then leaks into a closed piece: the wrap becomes a shell);
 * below 0.8 cell it fails with PLUSH_E_ARGUMENT. Fails with PLUSH_E_ARGUMENT on a non-positive or
 * non-finite cell or offset, an empty source, PLUSH_E_RANGE over 16M grid points. */
plush_status plush_cage_wrap(const plush_cage_mesh *src, float cell, float offset, plush_arena *arena,
                             plush_cage_mesh *out, plush_diag *diag);

/* Area-weighted unit vertex normals ((b - a) x (c - a) summed over the faces around each vertex), all
 * flipped when the mesh's hints (mesh->normals) say the faces wind the other way; a vertex without area
 * gets its hint normalised, or zero. out holds vertex_count entries. */
void plush_cage_vertex_normals(const plush_cage_mesh *mesh, float (*out)[3]);

typedef struct plush_cage_topology {
    size_t edges;                 /* distinct undirected edges */
    size_t border_edges;          /* used by one face */
    size_t nonmanifold_edges;     /* used by three faces or more */
    size_t misoriented_edges;     /* used by two faces in the same direction */
    size_t nonmanifold_vertices;  /* faces around the vertex do not make one fan (or one disk when closed) */
    size_t degenerate_faces;      /* a vertex named twice */
    size_t isolated_vertices;     /* used by no face */
    size_t pieces;                /* edge-connected pieces of faces (as plush_attach splits soft bodies) */
    bool closed_manifold;         /* every count above is 0 and there is a face */
} plush_cage_topology;

/* Edge and vertex topology of the mesh: a closed, consistently oriented 2-manifold is what a TriMesh soft
 * body with pressure needs. Fails with PLUSH_E_RANGE on an index out of range, PLUSH_E_NOMEM. */
plush_status plush_cage_check(const plush_cage_mesh *mesh, plush_cage_topology *out, plush_diag *diag);

/* Exact distance from each point to the nearest cage face (plush_proxy_bind's exact search, Embree when it
 * loads): the largest and the mean. Faces of zero area are not measured (their points lie on their
 * neighbours' edges). count 0 gives 0 and 0. Fails when the cage has no face of nonzero area. */
plush_status plush_cage_distance(const plush_cage_mesh *cage, const float (*points)[3], size_t count, float *max,
                                 float *mean, plush_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
