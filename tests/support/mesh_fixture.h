/* Meshes for PMX models built in code: materials made of whole meshes, soft bodies on them.
 *
 *   plush_pmx_model *m = mesh_fx_model(2);                  // PMX 2.1, two bones, no geometry yet
 *   mesh_fx sphere = mesh_fx_uv_sphere(1.0f, 8, 12);       // seams split as a UV-mapped sphere has them
 *   mesh_fx_add_material(m, "body", &sphere, 1);           // BDEF1 on bone 1
 *   mesh_fx cage = mesh_fx_icosahedron(1.3f);              // three vertices per face (flat shaded)
 *   size_t mat = mesh_fx_add_material(m, "cage", &cage, 0);
 *   mesh_fx_add_soft_body(m, (int32_t)mat, 0);              // a TriMesh on the cage
 *   mesh_fx_free(&sphere); mesh_fx_free(&cage);
 *
 * Needs cmocka (helpers fail the running test when out of memory).
 */
#ifndef PLUSH_TESTS_MESH_FIXTURE_H
#define PLUSH_TESTS_MESH_FIXTURE_H

#include "plush/pmx.h"

#include <stdbool.h>

typedef struct mesh_fx {
    size_t vertex_count;
    float (*positions)[3];
    size_t index_count;
    uint32_t *indices;
} mesh_fx;

/* A valid PMX 2.1 model with bone_count bones (each parent of the next), nothing else. */
plush_pmx_model *mesh_fx_model(size_t bone_count);

/* Appends the mesh's vertices (BDEF1 on bone, normal pointing away from the origin) and faces as a new
 * material named name; returns the material's index. */
size_t mesh_fx_add_material(plush_pmx_model *m, const char *name, const mesh_fx *mesh, int32_t bone);
/* Appends a soft body (shape 0 TriMesh, 1 Rope) on material (-1: none); returns its index. */
size_t mesh_fx_add_soft_body(plush_pmx_model *m, int32_t material, uint8_t shape);

/* The small plush: PMX 2.1, bones 0 "root" and 1 "body" (child of 0); materials 0 "body" (a UV sphere of
 * radius 1, 8 rings x 12 segments, on bone 1), 1 "cage" (an icosahedron of radius 1.4 on bone 0, a
 * TriMesh soft body on it) and 2 "eyes" (a cube of half-size 0.1 at (0, 0.3, -0.95), on bone 1). */
plush_pmx_model *mesh_fx_plush(void);

/* An n x n grid of quads (two triangles each) size wide in the x-z plane at y = 0, centred on the origin;
 * vertex j * (n + 1) + i at column i, row j. */
mesh_fx mesh_fx_grid(unsigned n, float size);
/* A cube of half-size h, four vertices per face (24), as a UV-mapped cube is split. */
mesh_fx mesh_fx_cube(float h);
/* A UV sphere: rings x segments quads, the seam column and the pole rows duplicated (their positions
 * are exactly equal, the poles' x/z are +0 and -0). */
mesh_fx mesh_fx_uv_sphere(float radius, unsigned rings, unsigned segments);
/* An icosahedron of circumradius r, three vertices per face (60). */
mesh_fx mesh_fx_icosahedron(float r);
void mesh_fx_free(mesh_fx *mesh);

/* Whether every coordinate of the n rows is finite (positions, normals, nodes after a run). */
bool mesh_fx_all_finite(const float (*p)[3], size_t n);

#endif
