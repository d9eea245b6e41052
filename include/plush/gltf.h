/* glTF 2.0 binary (.glb) writer: one skinned mesh, its materials and images, its joints and one animation.
 *
 *   plush_gltf_desc d = {
 *       .vertex_count = n, .positions = pos, .normals = nrm, .uvs = uv, .joints = jnt, .weights = wgt,
 *       .index_count = k, .indices = idx,
 *       .primitives = prims, .primitive_count = 2, .materials = mats, .material_count = 2,
 *       .nodes = joints, .node_count = j, .inverse_bind = ibm,
 *       .animation = &(plush_gltf_animation){ .key_count = f, .times = t, .translations = tr, .rotations = rot },
 *   };
 *   plush_buf glb = {0};
 *   plush_gltf_write(&d, &glb, &diag);      // or plush_gltf_write_file(&d, "out/bear.glb", &diag)
 *
 * The description is already in glTF's convention (right-handed, Y up, metres, counter-clockwise front
 * faces): this module converts nothing and knows nothing of PMX. Every node is a joint of the one skin;
 * the writer adds the mesh's own node as a root (a skinned mesh's node carries no transform). Nodes with
 * parent -1 are the scene's roots; the Khronos validator wants the joints under one common root, so give
 * the hierarchy one. Every array is read, never kept: the caller owns it.
 */
#ifndef PLUSH_GLTF_H
#define PLUSH_GLTF_H

#include "plush/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An encoded picture, embedded as it is. */
typedef struct plush_gltf_image {
    const char *name;                /* may be NULL */
    const char *mime_type;           /* "image/png" or "image/jpeg" */
    const uint8_t *data;
    size_t size;
} plush_gltf_image;

/* A metallic-roughness material with metallic 0 and roughness 1 (a matte, MMD-like look). */
typedef struct plush_gltf_material {
    const char *name;                /* may be NULL */
    float base_color[4];             /* linear RGBA factor */
    int32_t image;                   /* baseColorTexture: index into images, -1: none */
    bool double_sided;
    bool blend;                      /* alphaMode BLEND (otherwise OPAQUE) */
} plush_gltf_material;

/* Triangles first_index .. first_index + index_count - 1 of the shared index list (3 per triangle). */
typedef struct plush_gltf_primitive {
    size_t first_index, index_count; /* index_count > 0 */
    int32_t material;                /* -1: the default material */
} plush_gltf_primitive;

/* A morph target: position offsets of every vertex (zeros where it does not move). */
typedef struct plush_gltf_target {
    const char *name;                /* written to mesh.extras.targetNames; may be NULL */
    const float (*positions)[3];     /* vertex_count */
} plush_gltf_target;

/* A joint: its rest transform relative to its parent. */
typedef struct plush_gltf_node {
    const char *name;                /* may be NULL */
    int32_t parent;                  /* index into nodes, -1: a root */
    float translation[3];
    float rotation[4];               /* x y z w, unit */
} plush_gltf_node;

/* One animation, LINEAR. Per-node arrays are node-major: node n's keys are entries n * key_count .. n *
 * key_count + key_count - 1, key k at times[k]; a node writes the keys kept marks (its translation and
 * rotation alike, with their own time list), or all of them. */
typedef struct plush_gltf_animation {
    const char *name;                /* may be NULL */
    size_t key_count;                /* > 0 */
    const float *times;              /* seconds, >= 0, strictly increasing */
    const bool *animated;            /* node_count: which nodes get channels; NULL: all */
    const bool *kept;                /* node_count * key_count: the keys written, at least one per animated
                                      * node; NULL: every key (one time list shared by every channel) */
    const float (*translations)[3];  /* node_count * key_count */
    const float (*rotations)[4];     /* node_count * key_count, unit x y z w */
    const float *weights;            /* key-major: key_count * target_count morph weights; NULL: none */
} plush_gltf_animation;

typedef struct plush_gltf_desc {
    const char *generator;           /* asset.generator; NULL: "plush" */
    const char *mesh_name;           /* may be NULL */
    size_t vertex_count;             /* > 0 */
    const float (*positions)[3];
    const float (*normals)[3];       /* unit length; NULL: none */
    const float (*uvs)[2];           /* NULL: none */
    const uint16_t (*joints)[4];     /* with weights: indices into nodes; NULL: an unskinned mesh */
    const float (*weights)[4];       /* non-negative, summing to 1; a joint appears once with weight > 0 */
    size_t index_count;
    const uint32_t *indices;
    const plush_gltf_primitive *primitives;
    size_t primitive_count;          /* > 0 */
    const plush_gltf_material *materials;
    size_t material_count;
    const plush_gltf_image *images;
    size_t image_count;
    const plush_gltf_target *targets;
    size_t target_count;
    const plush_gltf_node *nodes;
    size_t node_count;               /* the skin's joints in this order; at most 65536 */
    const float (*inverse_bind)[16]; /* node_count column-major matrices; needed with joints */
    const plush_gltf_animation *animation;   /* NULL: none */
} plush_gltf_desc;

/* Appends the GLB bytes to out: a JSON chunk and one BIN chunk holding every accessor (POSITION with its
 * min/max, each in its own 4-byte aligned buffer view with its target), the images, the inverse bind
 * matrices and the animation. Checks the description first (index, material, image, parent and joint
 * ranges, parent cycles, counts, finite numbers) and fails with PLUSH_E_ARGUMENT or PLUSH_E_RANGE (section
 * and item named) leaving out as it was. */
plush_status plush_gltf_write(const plush_gltf_desc *desc, plush_buf *out, plush_diag *diag);
/* The same, written atomically to path (diag->file is set to path when empty). */
plush_status plush_gltf_write_file(const plush_gltf_desc *desc, const char *path, plush_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
