/* The proxy a model makes, and the surface a cage is built around: the scene's PMX-facing side of the proxy
 * module (which materials, which soft bodies; src/proxy itself works on plain arrays).
 *
 *   plush_arena arena = {0};
 *   plush_scene_proxy proxy;
 *   if (plush_scene_proxy_build(model, &arena, &proxy, &diag) == PLUSH_OK && proxy.triangle_count > 0) {
 *       uint32_t *bound; size_t bound_count;
 *       plush_scene_bound_vertices(model, &proxy, NULL, &arena, &bound, &bound_count, &diag);
 *       ... bind model->vertices[bound[i]].position to proxy.nodes / proxy.triangles ...
 *   }
 *   plush_cage_mesh skin;
 *   const char *names[] = {"hair"};
 *   plush_scene_cage_weld(model, names, 1, &arena, &skin, &diag);   // then plush_cage_simplify (plush/proxy_cage.h)
 *   plush_arena_free(&arena);
 *
 * Everything here reads a model and writes into the caller's arena; nothing is kept between calls.
 */
#ifndef PLUSH_SCENE_PROXY_H
#define PLUSH_SCENE_PROXY_H

#include "plush/pmx.h"
#include "plush/proxy_cage.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One TriMesh soft body inside the proxy. */
typedef struct plush_scene_proxy_part {
    int32_t soft_body;            /* index into model->soft_bodies */
    size_t first_node;            /* its nodes are proxy nodes first_node .. first_node + mesh.node_count */
    size_t first_triangle;        /* its triangles likewise */
    plush_pmx_welded_mesh mesh;   /* node and triangle numbers local to the part */
} plush_scene_proxy_part;

/* Every usable TriMesh soft body of a model, concatenated in file order: proxy triangle
 * first_triangle + k is face k of the part's material (degenerate faces keep their place, so triangle
 * numbers never depend on geometry). */
typedef struct plush_scene_proxy {
    size_t node_count;
    float (*nodes)[3];
    int32_t *node_vertex;         /* node -> PMX vertex */
    size_t triangle_count;
    uint32_t (*triangles)[3];     /* proxy node indices */
    size_t part_count;
    plush_scene_proxy_part *parts;
    size_t material_count;        /* model->material_count */
    bool *soft_material;          /* per material: a soft body (TriMesh or Rope, used or skipped) owns it */
} plush_scene_proxy;

/* Builds the proxy. A TriMesh soft body whose material is -1, or whose mesh is empty or degenerate, is
 * skipped with a warning in diag (section "soft body", its index). A model with no usable soft body
 * gives PLUSH_OK and an empty proxy: the caller decides whether that is an error. */
plush_status plush_scene_proxy_build(const plush_pmx_model *model, plush_arena *arena, plush_scene_proxy *out,
                                   plush_diag *diag);

/* Which materials give bound vertices; zero means every material no soft body owns. */
typedef struct plush_scene_bound_options {
    const char *const *materials; /* material names (UTF-8); every material with such a name counts */
    size_t material_count;
    size_t *pulled;               /* out, optional (model->material_count entries): per material, its
                                   * vertices bound as a layer of the named ones (below) */
    const float (*left_out)[3];   /* rest positions whose vertices are not bound (details the cage left out,
                                   * plush_attach_details), nor layers pulled in through them */
    size_t left_out_count;
} plush_scene_bound_options;

/* The vertices to skin with the proxy: those used by the faces of the chosen materials, in increasing
 * order. With materials named, the vertices of the other materials (not a soft body's) that share their
 * rest position with a chosen vertex (within a millionth of the chosen vertices' extent) are bound too:
 * layers -- an inner and an outer shell, back faces, an outline -- move as one. Naming a material that
 * does not exist, or one a soft body owns, fails (PLUSH_E_ARGUMENT). */
plush_status plush_scene_bound_vertices(const plush_pmx_model *model, const plush_scene_proxy *proxy,
                                      const plush_scene_bound_options *options, plush_arena *arena, uint32_t **out,
                                      size_t *out_count, plush_diag *diag);

/* The faces of the named materials (NULL or count 0: every material), in material order, over vertices
 * welded by exact position across all of them (+0 and -0 are equal). Vertices are numbered in order of
 * first use; faces that name one vertex twice after welding are dropped. Fails with PLUSH_E_ARGUMENT on a
 * name no material has (every material with the name counts), PLUSH_E_RANGE on face counts or indices
 * out of range. */
plush_status plush_scene_cage_weld(const plush_pmx_model *model, const char *const *materials, size_t material_count,
                             plush_arena *arena, plush_cage_mesh *out, plush_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
