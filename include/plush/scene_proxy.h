/* The proxy a model makes, and the surface a cage is built around: the scene's PMX-facing side of the proxy
 * module (which materials, which soft bodies; src/proxy itself works on plain arrays). The types are
 * here; the functions that make them are in plush/sys/scene.h (a host gets them through the scene).
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
 *   plush_scene_cage_weld(model, names, 1, &arena, &skin, &diag);   // then plush_cage_simplify (plush/cage.h)
 *   plush_arena_free(&arena);
 *
 * Everything here reads a model and writes into the caller's arena; nothing is kept between calls.
 */
#ifndef PLUSH_SCENE_PROXY_H
#define PLUSH_SCENE_PROXY_H

#include "plush/pmx.h"
#include "plush/cage.h"

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

/* Which materials give bound vertices; zero means every material no soft body owns. */
typedef struct plush_scene_bound_options {
    const char *const *materials; /* materials as a user names them (UTF-8): a name, English name or
                                   * number (plush_pmx_material_lookup); every material of the name counts */
    size_t material_count;
    size_t *pulled;               /* out, optional (model->material_count entries): per material, its
                                   * vertices bound as a layer of the named ones (below) */
    size_t *sewn;                 /* out, optional (model->material_count entries): of pulled, the vertices
                                   * of pieces bound only where they share a position with the named ones
                                   * (the rest keeps its own skinning) and carried there by bones the
                                   * model's physics moves: a trim caged alone, sewn onto a dress the
                                   * author's physics swings, parts from the dress there */
    const float (*left_out)[3];   /* rest positions whose vertices are not bound (details the cage left out,
                                   * plush_attach_details), nor layers pulled in through them */
    size_t left_out_count;
} plush_scene_bound_options;

#ifdef __cplusplus
}
#endif
#endif
