/* Private to src/scene: the bake's recorded frames, shared by bake.c (frames, motion, files) and
 * bake_model.c (the re-weighted model); which vertices the bake keeps, shared with the mesh exports
 * (sink_mesh.c) so that a PLY/OBJ frame has the baked PMX's vertices in its order. */
#ifndef PLUSH_SCENE_BAKE_INTERNAL_H
#define PLUSH_SCENE_BAKE_INTERNAL_H

#include "scene/internal.h"

struct plush_scene_bake {
    const plush_scene_binding *binding;
    const plush_vmd_motion *motion;      /* may be NULL */
    size_t triangle_count;
    float (*centroids)[3];               /* rest centroid per triangle (the pseudo-bone's position) */
    double (*rest_axes)[3][3];           /* rest frame axes per triangle (columns X Y Z) */
    bool *rest_ok;                       /* false: degenerate at rest, its key stays the identity */
    float (*last)[7];                    /* last key per triangle: translation xyz, rotation xyzw */
    uint32_t *frames;                    /* recorded frame numbers */
    float (*keys)[7];                    /* frame_count * triangle_count keys */
    size_t frame_count, frame_capacity;
    plush_arena arena;                   /* everything but frames and keys (grown with realloc) */
};

/* "pb0001" for triangle 0: short ASCII that fits VMD's 15-byte bone names. */
void plush__bake_pseudo_name(size_t triangle, char name[16]);

/* Per material: a soft body owns it (the materials the model's soft bodies name; out-of-range ones are
 * ignored): the proxy's soft_material for a model that has a proxy. In arena; NULL when out of memory. */
bool *plush__bake_soft_materials(const plush_pmx_model *m, plush_arena *arena);

/* The vertices the bake keeps, in source order: every vertex a material no soft body owns draws, and
 * vertices no material draws (harmless, and a model may use them for morph tricks); a vertex only
 * soft-body materials draw goes. map[v] is v's index among the kept, -1 when it goes. In arena. */
plush_status plush__bake_keep_vertices(const plush_pmx_model *m, const bool *soft_material, plush_arena *arena,
                                       int32_t **map, size_t *kept, plush_diag *diag);

#endif
