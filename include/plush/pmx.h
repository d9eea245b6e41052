/* PMX 2.0 / 2.1 models: read, validate, write.
 *
 *   plush_diag diag = { .file = "model.pmx" };
 *   plush_pmx_model *model = NULL;
 *   if (plush_pmx_read(data, size, NULL, &model, &diag) != PLUSH_OK) { ...diag... }
 *   printf("%s has %zu vertices\n", model->name.s, model->vertex_count);
 *   plush_buf out = {0};
 *   plush_pmx_write(model, &(plush_pmx_write_options){ .version = PLUSH_PMX_WRITE_20 }, &out, &diag);
 *   plush_pmx_free(model);
 *
 * A read model is one tree of plain structs in one arena, freed by plush_pmx_free. Arrays come as
 * `x` + `x_count`. Indices are int32_t with -1 meaning "none" (vertex indices are never -1). Text is
 * UTF-8 (plush_str). Everything the file holds is kept, so writing a model back with the same version,
 * encoding and index sizes gives the same bytes.
 *
 * To build a model in code: plush_pmx_create(), then fill the fields with memory from
 * plush_pmx_arena(model) (or any memory that outlives the model).
 */
#ifndef PLUSH_PMX_H
#define PLUSH_PMX_H

#include "plush/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Index kinds, the order of the header's six index-size bytes. */
enum {
    PLUSH_PMX_INDEX_VERTEX = 0,
    PLUSH_PMX_INDEX_TEXTURE,
    PLUSH_PMX_INDEX_MATERIAL,
    PLUSH_PMX_INDEX_BONE,
    PLUSH_PMX_INDEX_MORPH,
    PLUSH_PMX_INDEX_RIGID_BODY,
    PLUSH_PMX_INDEX_KINDS
};

typedef enum plush_pmx_weight_type {
    PLUSH_PMX_BDEF1 = 0,
    PLUSH_PMX_BDEF2 = 1,
    PLUSH_PMX_BDEF4 = 2,
    PLUSH_PMX_SDEF = 3,
    PLUSH_PMX_QDEF = 4 /* PMX 2.1 */
} plush_pmx_weight_type;

typedef struct plush_pmx_vertex {
    float position[3];
    float normal[3];
    float uv[2];
    /* BDEF1: bones[0], weights {1,0,0,0}. BDEF2/SDEF: bones[0..1], weights[0] as stored and
     * weights[1] = 1 - weights[0]. BDEF4/QDEF: four bones and four weights as stored.
     * Slots the type does not use hold bone -1 and weight 0. */
    int32_t bones[4];
    float weights[4];
    float edge_scale;
    uint8_t weight_type;   /* plush_pmx_weight_type */
    int32_t sdef;          /* SDEF: index into model->sdefs; otherwise -1 */
} plush_pmx_vertex;

typedef struct plush_pmx_sdef {
    float c[3], r0[3], r1[3];
} plush_pmx_sdef;

/* Material draw flags. */
enum {
    PLUSH_PMX_MATERIAL_DOUBLE_SIDED = 0x01,
    PLUSH_PMX_MATERIAL_GROUND_SHADOW = 0x02,
    PLUSH_PMX_MATERIAL_SHADOW_CASTER = 0x04,  /* draws into the self-shadow map */
    PLUSH_PMX_MATERIAL_SHADOW_RECEIVER = 0x08, /* draws self-shadow */
    PLUSH_PMX_MATERIAL_EDGE = 0x10,
    PLUSH_PMX_MATERIAL_VERTEX_COLOR = 0x20,   /* 2.1: additional UV1 is the vertex colour */
    PLUSH_PMX_MATERIAL_POINT = 0x40,          /* 2.1: draw as points */
    PLUSH_PMX_MATERIAL_LINE = 0x80            /* 2.1: draw as lines */
};

typedef enum plush_pmx_sphere_mode {
    PLUSH_PMX_SPHERE_OFF = 0, PLUSH_PMX_SPHERE_MULTIPLY = 1, PLUSH_PMX_SPHERE_ADD = 2, PLUSH_PMX_SPHERE_SUBTEXTURE = 3
} plush_pmx_sphere_mode;

typedef struct plush_pmx_material {
    plush_str name, name_en;
    float diffuse[4];
    float specular[3];
    float specular_power;
    float ambient[3];
    uint8_t flags;          /* PLUSH_PMX_MATERIAL_* */
    float edge_color[4];
    float edge_size;
    int32_t texture;        /* texture index or -1 */
    int32_t sphere_texture; /* texture index or -1 */
    uint8_t sphere_mode;    /* plush_pmx_sphere_mode */
    uint8_t toon_shared;    /* 1: toon is a shared toon number 0..9 (toon01.bmp..toon10.bmp); 0: a texture index */
    int32_t toon;
    plush_str memo;
    int32_t index_count;    /* face indices drawn by this material (3 per triangle), in order */
} plush_pmx_material;

/* Bone flags. */
enum {
    PLUSH_PMX_BONE_TAIL_IS_BONE = 0x0001,
    PLUSH_PMX_BONE_ROTATABLE = 0x0002,
    PLUSH_PMX_BONE_TRANSLATABLE = 0x0004,
    PLUSH_PMX_BONE_VISIBLE = 0x0008,
    PLUSH_PMX_BONE_ENABLED = 0x0010,
    PLUSH_PMX_BONE_IK = 0x0020,
    PLUSH_PMX_BONE_APPEND_LOCAL = 0x0080,
    PLUSH_PMX_BONE_APPEND_ROTATE = 0x0100,
    PLUSH_PMX_BONE_APPEND_TRANSLATE = 0x0200,
    PLUSH_PMX_BONE_FIXED_AXIS = 0x0400,
    PLUSH_PMX_BONE_LOCAL_AXES = 0x0800,
    PLUSH_PMX_BONE_AFTER_PHYSICS = 0x1000,
    PLUSH_PMX_BONE_EXTERNAL_PARENT = 0x2000
};

typedef struct plush_pmx_ik_link {
    int32_t bone;
    uint8_t has_limits;
    float lower[3], upper[3]; /* radians, only when has_limits */
} plush_pmx_ik_link;

/* Fields whose flag is not set are zero (indices -1) and are not written. */
typedef struct plush_pmx_bone {
    plush_str name, name_en;
    float position[3];
    int32_t parent;
    int32_t layer;               /* deform layer */
    uint16_t flags;              /* PLUSH_PMX_BONE_* */
    int32_t tail_bone;           /* TAIL_IS_BONE */
    float tail_offset[3];        /* otherwise */
    int32_t append_parent;       /* APPEND_ROTATE or APPEND_TRANSLATE */
    float append_ratio;
    float fixed_axis[3];         /* FIXED_AXIS */
    float local_x[3], local_z[3];/* LOCAL_AXES */
    int32_t external_key;        /* EXTERNAL_PARENT */
    int32_t ik_target;           /* IK */
    int32_t ik_loop_count;
    float ik_limit_angle;        /* radians per step */
    uint32_t ik_link_count;
    plush_pmx_ik_link *ik_links;
} plush_pmx_bone;

typedef enum plush_pmx_morph_kind {
    PLUSH_PMX_MORPH_GROUP = 0,
    PLUSH_PMX_MORPH_VERTEX = 1,
    PLUSH_PMX_MORPH_BONE = 2,
    PLUSH_PMX_MORPH_UV = 3,
    PLUSH_PMX_MORPH_UV1 = 4, /* additional UV1..UV4 */
    PLUSH_PMX_MORPH_UV2 = 5,
    PLUSH_PMX_MORPH_UV3 = 6,
    PLUSH_PMX_MORPH_UV4 = 7,
    PLUSH_PMX_MORPH_MATERIAL = 8,
    PLUSH_PMX_MORPH_FLIP = 9,    /* 2.1 */
    PLUSH_PMX_MORPH_IMPULSE = 10, /* 2.1 */
    PLUSH_PMX_MORPH_KINDS
} plush_pmx_morph_kind;

typedef struct plush_pmx_morph_group { int32_t morph; float weight; } plush_pmx_morph_group; /* group and flip */
typedef struct plush_pmx_morph_vertex { int32_t vertex; float offset[3]; } plush_pmx_morph_vertex;
typedef struct plush_pmx_morph_bone { int32_t bone; float translation[3]; float rotation[4]; /* x y z w */ } plush_pmx_morph_bone;
typedef struct plush_pmx_morph_uv { int32_t vertex; float offset[4]; } plush_pmx_morph_uv;
typedef struct plush_pmx_morph_material {
    int32_t material;       /* -1: every material */
    uint8_t operation;      /* 0 multiply, 1 add */
    float diffuse[4], specular[3], specular_power, ambient[3], edge_color[4], edge_size;
    float texture_tint[4], sphere_tint[4], toon_tint[4];
} plush_pmx_morph_material;
typedef struct plush_pmx_morph_impulse {
    int32_t rigid_body;
    uint8_t local;
    float velocity[3], torque[3];
} plush_pmx_morph_impulse;

typedef struct plush_pmx_morph {
    plush_str name, name_en;
    uint8_t panel;           /* 0 system, 1 eyebrow, 2 eye, 3 mouth, 4 other */
    uint8_t kind;            /* plush_pmx_morph_kind */
    uint32_t offset_count;
    union {                  /* chosen by kind */
        plush_pmx_morph_group *group;   /* GROUP and FLIP */
        plush_pmx_morph_vertex *vertex;
        plush_pmx_morph_bone *bone;
        plush_pmx_morph_uv *uv;         /* UV and UV1..UV4 */
        plush_pmx_morph_material *material;
        plush_pmx_morph_impulse *impulse;
    } offsets;
} plush_pmx_morph;

typedef struct plush_pmx_frame_element {
    uint8_t is_morph; /* 0 bone, 1 morph */
    int32_t index;
} plush_pmx_frame_element;

typedef struct plush_pmx_display_frame {
    plush_str name, name_en;
    uint8_t special;  /* 1 for the fixed Root and 表情 frames */
    uint32_t element_count;
    plush_pmx_frame_element *elements;
} plush_pmx_display_frame;

typedef enum plush_pmx_rigid_shape {
    PLUSH_PMX_RIGID_SPHERE = 0,     /* size[0] radius */
    PLUSH_PMX_RIGID_BOX = 1,        /* size: half extents */
    PLUSH_PMX_RIGID_CAPSULE = 2     /* size[0] radius, size[1] height of the cylinder part (Y) */
} plush_pmx_rigid_shape;

typedef enum plush_pmx_rigid_mode {
    PLUSH_PMX_RIGID_FOLLOW_BONE = 0,     /* kinematic: placed at its bone */
    PLUSH_PMX_RIGID_PHYSICS = 1,         /* dynamic: drives its bone */
    PLUSH_PMX_RIGID_PHYSICS_BONE = 2     /* dynamic rotation, its bone's position */
} plush_pmx_rigid_mode;

typedef struct plush_pmx_rigid_body {
    plush_str name, name_en;
    int32_t bone;            /* -1: no bone */
    uint8_t group;           /* 0..15 */
    uint16_t mask;           /* collision mask as stored */
    uint8_t shape;           /* plush_pmx_rigid_shape (kept as stored: validation reports others) */
    float size[3];
    float position[3];
    float rotation[3];       /* radians */
    float mass, linear_damping, angular_damping, restitution, friction;
    uint8_t mode;            /* plush_pmx_rigid_mode (kept as stored: validation reports others) */
} plush_pmx_rigid_body;

typedef enum plush_pmx_joint_type {
    PLUSH_PMX_JOINT_SPRING_6DOF = 0,
    PLUSH_PMX_JOINT_6DOF = 1,       /* 2.1 */
    PLUSH_PMX_JOINT_P2P = 2,        /* 2.1 */
    PLUSH_PMX_JOINT_CONE_TWIST = 3, /* 2.1 */
    PLUSH_PMX_JOINT_SLIDER = 4,     /* 2.1 */
    PLUSH_PMX_JOINT_HINGE = 5       /* 2.1 */
} plush_pmx_joint_type;

/* Every joint kind shares this layout; each kind reads its own meaning into the fields. */
typedef struct plush_pmx_joint {
    plush_str name, name_en;
    uint8_t type;            /* plush_pmx_joint_type */
    int32_t body_a, body_b;
    float position[3];
    float rotation[3];
    float linear_lower[3], linear_upper[3];
    float angular_lower[3], angular_upper[3];
    float spring_linear[3], spring_angular[3];
} plush_pmx_joint;

/* Soft body flags. */
enum {
    PLUSH_PMX_SOFT_BLINK = 0x01,
    PLUSH_PMX_SOFT_CLUSTERS = 0x02,
    PLUSH_PMX_SOFT_LINK_RANDOMIZE = 0x04
};

typedef struct plush_pmx_soft_config {
    float vcf, dp, dg, lf, pr, vc, df, mt, chr, khr, shr, ahr;
    float srhr_cl, skhr_cl, sshr_cl, sr_splt_cl, sk_splt_cl, ss_splt_cl;
} plush_pmx_soft_config;

typedef struct plush_pmx_soft_anchor {
    int32_t rigid_body;
    int32_t vertex;
    uint8_t near_mode;
} plush_pmx_soft_anchor;

typedef enum plush_pmx_soft_shape {
    PLUSH_PMX_SOFT_TRIMESH = 0,     /* the faces of the material, welded by position */
    PLUSH_PMX_SOFT_ROPE = 1         /* the material's vertices in order, linked one after another */
} plush_pmx_soft_shape;

typedef struct plush_pmx_soft_body {
    plush_str name, name_en;
    uint8_t shape;           /* plush_pmx_soft_shape (kept as stored: validation reports others) */
    int32_t material;        /* -1: none */
    uint8_t group;
    uint16_t mask;
    uint8_t flags;           /* PLUSH_PMX_SOFT_* */
    int32_t blink_distance;
    int32_t cluster_count;
    float total_mass;
    float margin;
    int32_t aero_model;
    plush_pmx_soft_config config;
    int32_t v_iterations, p_iterations, d_iterations, c_iterations;
    float lst, ast, vst;
    uint32_t anchor_count;
    plush_pmx_soft_anchor *anchors;
    uint32_t pin_count;
    int32_t *pins;           /* vertex indices */
} plush_pmx_soft_body;

/* What a summary-only read keeps of the vertices it does not store. */
typedef struct plush_pmx_summary {
    size_t weight_types[PLUSH_PMX_QDEF + 1]; /* vertices of each plush_pmx_weight_type */
} plush_pmx_summary;

/* A value a read found non-finite or out of range, kept as stored: the item and the byte of the value in
 * the file. The reader also gave it as a warning ("vertex 0: position is not finite (at byte 1234)"). */
typedef struct plush_pmx_value_issue {
    const char *section;                 /* static: "vertex", "bone", "morph", "rigid body", "joint", "soft body" */
    int64_t index;                       /* item in its section */
    int64_t offset;                      /* byte of the value (of the parent index for a parent cycle) */
    const char *what;                    /* static: "position is not finite", "weight 2 is outside 0..1", ... */
} plush_pmx_value_issue;

/* How many issues a model keeps (each one is a warning however many there are). */
enum { PLUSH_PMX_KEPT_VALUE_ISSUES = 256 };

typedef struct plush_pmx_model {
    float version;                       /* 2.0f or 2.1f */
    uint8_t encoding;                    /* plush_encoding */
    uint8_t additional_uv;               /* 0..4 */
    uint8_t index_sizes[PLUSH_PMX_INDEX_KINDS]; /* 1, 2 or 4; 0 in a built model means "smallest" */
    uint8_t header_extra_size;           /* globals beyond the eight the format defines, kept as bytes */
    const uint8_t *header_extra;
    plush_str name, name_en, comment, comment_en;

    size_t vertex_count;
    plush_pmx_vertex *vertices;
    float (*additional_uvs)[4];          /* vertex_count * additional_uv, vertex-major */
    size_t sdef_count;
    plush_pmx_sdef *sdefs;
    size_t index_count;                  /* face indices; triangles = index_count / 3 */
    uint32_t *indices;
    size_t texture_count;
    plush_str *textures;                 /* paths as stored */
    size_t material_count;
    plush_pmx_material *materials;
    size_t bone_count;
    plush_pmx_bone *bones;
    size_t morph_count;
    plush_pmx_morph *morphs;
    size_t display_frame_count;
    plush_pmx_display_frame *display_frames;
    size_t rigid_body_count;
    plush_pmx_rigid_body *rigid_bodies;
    size_t joint_count;
    plush_pmx_joint *joints;
    size_t soft_body_count;              /* 2.1 */
    plush_pmx_soft_body *soft_bodies;

    size_t trailing_size;                /* bytes after the last section (kept, with a warning) */
    const uint8_t *trailing;

    /* The non-finite and out-of-range values the read found (the file's policy: read and kept, warned
     * about; refused by what needs them): value_issue_count counts all, value_issues holds the first
     * PLUSH_PMX_KEPT_VALUE_ISSUES in file order. Zero in a built model. */
    size_t value_issue_count;
    const plush_pmx_value_issue *value_issues;

    /* Set by a summary-only read (plush_pmx_read_options.summary_only): vertices, additional_uvs,
     * sdefs and indices are NULL while vertex_count, sdef_count and index_count hold the file's
     * counts, and `summary` holds what is known of the vertices. Zero in every other model. */
    bool summary_only;
    plush_pmx_summary summary;

    plush_arena arena;                   /* owns everything above */
} plush_pmx_model;

typedef struct plush_pmx_read_options {
    bool skip_validation;                /* trust indices (only for files plush wrote itself) */
    /* Read the vertices (with their additional UVs and SDEF data) and the faces as they stream past,
     * with every check a full read makes, but do not keep them: the model then holds a few dozen
     * bytes for them instead of 76 per vertex (+16 per additional UV) and 4 per face index. For listing a file (plush info); anything that
     * needs the geometry (write, validate, simulate, bind, ...) refuses such a model with
     * PLUSH_E_NO_GEOMETRY, see plush_pmx_require_geometry. */
    bool summary_only;
} plush_pmx_read_options;

/* Parses size bytes. On failure *out is NULL and diag names section, item and byte offset.
 * Warnings (broken text read as U+FFFD, trailing bytes) go to diag and do not fail. */
plush_status plush_pmx_read(const uint8_t *data, size_t size, const plush_pmx_read_options *options,
                            plush_pmx_model **out, plush_diag *diag);
/* Reads a file (diag->file is set to path when empty). */
plush_status plush_pmx_read_file(const char *path, const plush_pmx_read_options *options,
                                 plush_pmx_model **out, plush_diag *diag);
/* Checks every index (or -1 where allowed), material index counts against the faces, weight types, morph
 * kinds per version: the structure. Values (non-finite, out of range) are not its business: the reader
 * warns about them and what uses them refuses or skips (plush_pmx_require_geometry, the physics world).
 * Offsets in diag are -1 here.
 * A summary-only model is refused (PLUSH_E_NO_GEOMETRY): its reader has already validated it. */
plush_status plush_pmx_validate(const plush_pmx_model *model, plush_diag *diag);

/* An empty PMX 2.0 UTF-16LE model (index sizes 0: smallest that fits); free with plush_pmx_free. */
plush_pmx_model *plush_pmx_create(void);
plush_arena *plush_pmx_arena(plush_pmx_model *model);
void plush_pmx_free(plush_pmx_model *model);

/* The model's version stays the float the file's header holds (2.0f or 2.1f, compared exactly); what a
 * writer is asked for is one of these. */
typedef enum plush_pmx_write_version {
    PLUSH_PMX_WRITE_KEEP = 0,            /* the model's */
    PLUSH_PMX_WRITE_20 = 20,
    PLUSH_PMX_WRITE_21 = 21
} plush_pmx_write_version;

typedef enum plush_pmx_write_encoding {
    PLUSH_PMX_WRITE_UTF16 = 1,           /* 0 keeps the model's */
    PLUSH_PMX_WRITE_UTF8 = 2
} plush_pmx_write_encoding;

typedef struct plush_pmx_write_options {
    plush_pmx_write_version version;
    plush_pmx_write_encoding encoding;   /* 0 keeps the model's */
    bool minimal_indices;    /* smallest index sizes; otherwise the model's (grown when too small) */
    bool lossy;              /* 2.0 output: drop 2.1-only elements with a warning each instead of failing */
} plush_pmx_write_options;

/* Appends the PMX bytes to out. Fails (out unchanged in size) when the model does not validate or
 * when 2.0 is asked for a model with 2.1-only elements and lossy is off (PLUSH_E_CONFLICT; diag names the
 * first one). */
plush_status plush_pmx_write(const plush_pmx_model *model, const plush_pmx_write_options *options, plush_buf *out,
                             plush_diag *diag);
/* Writes atomically to path. */
plush_status plush_pmx_write_file(const plush_pmx_model *model, const plush_pmx_write_options *options,
                                  const char *path, plush_diag *diag);

/* ---- mesh geometry: a material's faces and vertices, welded soft-body meshes (src/format/pmx_mesh.c) ----
 *
 * A PMX mesh splits vertices wherever the UVs or normals split (seams), so a simulated surface built
 * straight from the vertices would tear there: welding joins vertices with exactly equal positions
 * (+0 and -0 are equal; a NaN position is never equal to anything) into one node. Everything here reads a
 * model and writes into the caller's arena; nothing is kept between calls. */

/* The model's height: the extent along Y of its finite vertex positions at rest (0 without any). The
 * measure plush's shares of "the model's size" are taken of. */
double plush_pmx_height(const plush_pmx_model *model);

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

/* ---- materials as a user finds them: by name, by owner, by the bones that move them (pmx_material.c) ---- */

/* A bone's part of a material's skinning weight, 0..1. */
typedef struct plush_pmx_bone_share {
    int32_t bone;
    float share;
} plush_pmx_bone_share;

#ifdef __cplusplus
}
#endif
#endif
