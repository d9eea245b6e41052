/* Private to the glTF export (sink_gltf.c, sink_gltf_model.c): the baked PMX in glTF's convention.
 *
 * glTF is right-handed, Y up, in metres; PMX left-handed, Y up, 1 unit = 8 cm. A PMX point (x, y, z) becomes
 * (x, y, -z) * 0.08, a direction (x, y, -z), a rotation quaternion (x, y, z, w) becomes (-x, -y, z, w) (the
 * rotation conjugated by the mirror z -> -z), and the mirror turns clockwise faces counter-clockwise, so
 * every triangle's winding is reversed. Node 0 is a root of plush's own (the validator wants the joints
 * under one common root; PMX models have several root bones); node 1 + b is baked bone b. */
#ifndef PLUSH_SCENE_SINK_GLTF_INTERNAL_H
#define PLUSH_SCENE_SINK_GLTF_INTERNAL_H

#include "plush/gltf.h"
#include "plush/pmx.h"
#include "plush/sys/core.h"
#include "scene/textures.h"

#define PLUSH_GLTF_METRES_PER_UNIT 0.08

typedef struct gltf_model {
    plush_gltf_desc desc;        /* every array below, ready for plush_gltf_write but for the animation */
    size_t vertex_morphs;        /* the baked model's vertex morphs */
    int32_t *vertex_morph;       /* their morph indices */
    size_t sdef_qdef;            /* SDEF and QDEF vertices written as linear blends */
    plush_buf *image_data;       /* image_count encoded pictures */
    plush_arena arena;           /* owns everything but image_data */
} gltf_model;

/* PMX point -> glTF point (scaled) and direction (not scaled). */
void plush__gltf_point(const float p[3], float out[3]);
/* The mesh, the skin (nodes, inverse bind matrices, JOINTS_0 / WEIGHTS_0) and the materials of a baked
 * model; textures (source_textures: the source model's paths, as stored) are read as scene/textures.h
 * says, relative to model_file's folder (NULL: none), and embedded: a JPEG as it is, anything else decoded
 * by the run's store and encoded as PNG, each file once; one that cannot be used is a warning in diag. */
plush_status plush__gltf_model_build(const plush_pmx_model *baked, const plush_str *source_textures,
                                     size_t source_texture_count, const char *model_file, plush__texture_store *store,
                                     gltf_model *g, plush_diag *diag);
/* The vertex morphs whose flag is set become the description's morph targets, in morph order. */
plush_status plush__gltf_model_targets(const plush_pmx_model *baked, const bool *used, gltf_model *g,
                                       plush_diag *diag);
void plush__gltf_model_free(gltf_model *g);

#endif
