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
    plush_proxy_patch *patch;            /* patch frames (the skin's), or NULL for each triangle's own */
    const plush_proxy_patch *shared;     /* the scene's, read instead of updating patch; NULL: our own */
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
/* The faces every material draws but those soft bodies own (what the bake, the mesh frames and the quality
 * measure show), whole triangles in file order, as the model's vertex numbers. In arena. */
plush_status plush__bake_visible_faces(const plush_pmx_model *m, const bool *soft_material, plush_arena *arena,
                                       uint32_t (**faces)[3], size_t *count, plush_diag *diag);

/* Rewrites o's texture paths (new strings in o's arena) for a PMX written to pmx_path (beside vmd_path),
 * per options (NULL or no model_file: nothing changes); missing textures are warnings. With copy_textures
 * each texture is copied beside pmx_path as it goes (bake_textures.c says under which rules); a copy that
 * would replace a file plush did not write fails with PLUSH_E_EXISTS. */
plush_status plush__bake_textures(plush_pmx_model *o, const char *pmx_path, const char *vmd_path,
                                  const plush_scene_bake_write_options *options, plush_diag *diag);

#endif
