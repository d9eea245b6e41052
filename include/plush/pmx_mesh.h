/* PMX mesh geometry: a material's faces and vertices, welded soft-body meshes, and the proxy a model's
 * TriMesh soft bodies make together.
 *
 *   plush_arena arena = {0};
 *   plush_pmx_proxy proxy;
 *   if (plush_pmx_proxy_build(model, &arena, &proxy, &diag) == PLUSH_OK && proxy.triangle_count > 0) {
 *       uint32_t *bound; size_t bound_count;
 *       plush_pmx_bound_vertices(model, &proxy, NULL, &arena, &bound, &bound_count, &diag);
 *       ... bind model->vertices[bound[i]].position to proxy.nodes / proxy.triangles ...
 *   }
 *   plush_arena_free(&arena);
 *
 * Everything here reads a model and writes into the caller's arena; nothing is kept between calls.
 * A PMX mesh splits vertices wherever the UVs or normals split (seams), so a simulated surface built
 * straight from the vertices would tear there: welding joins vertices with exactly equal positions
 * (+0 and -0 are equal; a NaN position is never equal to anything) into one node.
 */
#ifndef PLUSH_PMX_MESH_H
#define PLUSH_PMX_MESH_H

#include "plush/pmx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The faces a material draws: model->indices[*out_first .. *out_first + *out_count), *out_count a
 * multiple of 3, in file order. Fails when the material does not exist or the materials' face counts
 * run past the face list. */
plush_status plush_pmx_material_faces(const plush_pmx_model *model, size_t material, size_t *out_first,
                                      size_t *out_count, plush_diag *diag);

/* The distinct vertices a material's faces use, in order of first use (the numbering Influence Map
 * files use for a part's vertices). *out is arena memory (NULL when the count is 0). */
plush_status plush_pmx_material_vertices(const plush_pmx_model *model, size_t material, plush_arena *arena,
                                         uint32_t **out, size_t *out_count, plush_diag *diag);

/* A material's faces over welded nodes. Nodes are numbered in order of first use by the faces. */
typedef struct plush_pmx_welded_mesh {
    int32_t material;
    size_t node_count;
    float (*nodes)[3];            /* rest positions */
    int32_t *node_vertex;         /* node -> the first PMX vertex (in face order) welded into it */
    size_t triangle_count;        /* every face of the material, degenerate ones included, in face order */
    uint32_t (*triangles)[3];     /* node indices */
    size_t vertex_count;          /* model->vertex_count */
    int32_t *vertex_node;         /* PMX vertex -> node; -1 for vertices the material does not use */
} plush_pmx_welded_mesh;

/* Welds a material's vertices by position into out (arrays in arena). */
plush_status plush_pmx_weld(const plush_pmx_model *model, size_t material, plush_arena *arena,
                            plush_pmx_welded_mesh *out, plush_diag *diag);

/* True when the mesh can carry a soft body: at least one triangle of nonzero area, and every node
 * finite. */
bool plush_pmx_welded_mesh_usable(const plush_pmx_welded_mesh *mesh);

/* One TriMesh soft body inside the proxy. */
typedef struct plush_pmx_proxy_part {
    int32_t soft_body;            /* index into model->soft_bodies */
    size_t first_node;            /* its nodes are proxy nodes first_node .. first_node + mesh.node_count */
    size_t first_triangle;        /* its triangles likewise */
    plush_pmx_welded_mesh mesh;   /* node and triangle numbers local to the part */
} plush_pmx_proxy_part;

/* Every usable TriMesh soft body of a model, concatenated in file order: proxy triangle
 * first_triangle + k is face k of the part's material (degenerate faces keep their place, so triangle
 * numbers never depend on geometry). */
typedef struct plush_pmx_proxy {
    size_t node_count;
    float (*nodes)[3];
    int32_t *node_vertex;         /* node -> PMX vertex */
    size_t triangle_count;
    uint32_t (*triangles)[3];     /* proxy node indices */
    size_t part_count;
    plush_pmx_proxy_part *parts;
    size_t material_count;        /* model->material_count */
    bool *soft_material;          /* per material: a soft body (TriMesh or Rope, used or skipped) owns it */
} plush_pmx_proxy;

/* Builds the proxy. A TriMesh soft body whose material is -1, or whose mesh is empty or degenerate, is
 * skipped with a warning in diag (section "soft body", its index). A model with no usable soft body
 * gives PLUSH_OK and an empty proxy: the caller decides whether that is an error. */
plush_status plush_pmx_proxy_build(const plush_pmx_model *model, plush_arena *arena, plush_pmx_proxy *out,
                                   plush_diag *diag);

/* Which materials give bound vertices; zero means every material no soft body owns. */
typedef struct plush_pmx_bound_options {
    const char *const *materials; /* material names (UTF-8); every material with such a name counts */
    size_t material_count;
} plush_pmx_bound_options;

/* The vertices to skin with the proxy: those used by the faces of the chosen materials, in increasing
 * order. Naming a material that does not exist, or one a soft body owns, fails (PLUSH_E_ARGUMENT). */
plush_status plush_pmx_bound_vertices(const plush_pmx_model *model, const plush_pmx_proxy *proxy,
                                      const plush_pmx_bound_options *options, plush_arena *arena, uint32_t **out,
                                      size_t *out_count, plush_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
