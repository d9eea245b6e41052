/* Animation: the PMX bone pipeline -- motion sampling (VMD Bezier curves, VPD poses), morphs, bone deform
 * (deform order, append, IK) and vertex skinning (BDEF1/2/4, SDEF, QDEF).
 *
 *   plush_motion *motion = NULL;
 *   plush_motion_bind_vmd(model, vmd, &motion, &diag);   // warning once: keys for names the model lacks
 *   plush_anim *anim = NULL;
 *   plush_anim_create(model, &anim, &diag);
 *   for each frame f:
 *       plush_anim_sample(anim, motion, f);               // bone keys, morph weights, IK switches
 *       plush_anim_update_morphs(anim);                   // group/flip, bone/vertex/UV/material offsets
 *       plush_anim_deform(anim, PLUSH_ANIM_BEFORE_PHYSICS);
 *       ... physics: plush_world_set_bones(wm, plush_anim_bone_globals(anim)); step; get_bones ...
 *       plush_anim_apply_physics(anim, globals, driven);
 *       plush_anim_deform(anim, PLUSH_ANIM_AFTER_PHYSICS);
 *       plush_anim_skin(anim, 0, model->vertex_count, positions, normals);
 *   plush_anim_destroy(anim); plush_motion_free(motion);
 *
 * Semantics follow MMD and the PMX notes. Coordinates and quaternions are used as stored (PMX's
 * left-handed frame); quaternions are x y z w. Bone globals are cglm column-major mat4: rotation = the
 * bone's accumulated rotation, translation = its current position; at rest a bone's global is the
 * translation to its PMX position. A bone's skinning matrix is global * T(-rest position).
 */
#ifndef PLUSH_ANIM_H
#define PLUSH_ANIM_H

#include "plush/pmx.h"
#include "plush/vmd.h"
#include "plush/vpd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- motion: a VMD or VPD bound to one model's bone and morph names ---------------------------- */

typedef struct plush_motion plush_motion;

typedef struct plush_motion_stats {
    size_t bone_tracks, morph_tracks;         /* model bones / morphs the motion has keys for */
    size_t missing_bone_names, missing_bone_keys;   /* names the model lacks, and their keys */
    size_t missing_morph_names, missing_morph_keys;
    size_t missing_ik_names;                  /* property-key IK names that are no IK bone of the model */
    uint32_t last_frame;
} plush_motion_stats;

/* Binds keys to the model's bones and morphs by name (keys sorted by frame; for two keys on one frame
 * the later in the file wins). Names the model lacks are counted (plush_motion_stats) and reported as
 * one warning in diag, not an error. The model and vmd may be freed after binding. */
plush_status plush_motion_bind_vmd(const plush_pmx_model *model, const plush_vmd_motion *vmd, plush_motion **out,
                                   plush_diag *diag);
/* Per VMD bone key and morph key: whether the model has its name, matched as plush_motion_bind_vmd
 * matches it (whole text, or a longer model name cut to the stored field). bone_known holds
 * vmd->bone_key_count entries, morph_known vmd->morph_key_count. Nothing is warned. */
plush_status plush_motion_vmd_known(const plush_pmx_model *model, const plush_vmd_motion *vmd, bool *bone_known,
                                    bool *morph_known, plush_diag *diag);
/* A pose is a motion of one key per bone / morph at frame 0. */
plush_status plush_motion_bind_vpd(const plush_pmx_model *model, const plush_vpd_pose *pose, plush_motion **out,
                                   plush_diag *diag);
/* What binding the motion found: its tracks and the names the model lacks (the counts warned of). */
void plush_motion_stats_get(const plush_motion *motion, plush_motion_stats *out);
/* Frees a bound motion; NULL is a no-op. */
void plush_motion_free(plush_motion *motion);

/* ---- anim: one model instance's pose ------------------------------------------------------------ */

typedef struct plush_anim plush_anim;

typedef enum plush_anim_stage {
    PLUSH_ANIM_BEFORE_PHYSICS = 0,   /* bones without the after-physics flag */
    PLUSH_ANIM_AFTER_PHYSICS = 1     /* bones with it */
} plush_anim_stage;

/* Material values after material morphs: each field is the PMX material's value * mul + add, where
 * mul is the product of lerp(1, m, weight) over multiply offsets and add the sum of weight * a over add
 * offsets. The texture / sphere / toon tints have no stored value: *_tint is their mul (1 at rest) and
 * *_add their add (0 at rest), so a texture colour becomes colour * texture_tint + texture_add. */
typedef struct plush_anim_material {
    float diffuse[4], specular[3], specular_power, ambient[3], edge_color[4], edge_size;
    float texture_tint[4], sphere_tint[4], toon_tint[4];
    float texture_add[4], sphere_add[4], toon_add[4];
} plush_anim_material;

/* An impulse morph's offset at its current weight, for plush_world_impulse before the next step. */
typedef struct plush_anim_impulse {
    int32_t rigid_body;
    bool local;
    float velocity[3], torque[3];
} plush_anim_impulse;

/* Buffers for every bone, morph, vertex and material are sized here; per-frame calls do not allocate.
 * The model must outlive the anim. Fails on a model whose bone parents form a cycle (PLUSH_E_FORMAT). */
plush_status plush_anim_create(const plush_pmx_model *model, plush_anim **out, plush_diag *diag);
void plush_anim_destroy(plush_anim *anim);

/* Rest: no bone motion, morph weights 0, every IK on. */
void plush_anim_reset(plush_anim *anim);
/* Sets bone motion, morph weights and IK switches from the motion at a (fractional) frame; bones and
 * morphs without keys keep rest / 0. Before the first key the first value holds, after the last the
 * last. */
void plush_anim_sample(plush_anim *anim, const plush_motion *motion, float frame);
/* Direct control (for tools and tests). */
void plush_anim_set_bone_motion(plush_anim *anim, size_t bone, const float translation[3], const float rotation[4]);
void plush_anim_set_morph(plush_anim *anim, size_t morph, float weight);

/* Deforms the stage's bones in deform order (after-physics flag, then layer, then index): local =
 * append * motion * morph * IK (MMD's row-vector order: append acts first), then globals; append and
 * IK bones act in that order. Bones physics drove (apply_physics) keep their globals in the
 * after-physics stage. */
void plush_anim_deform(plush_anim *anim, plush_anim_stage stage);

/* Every bone's global transform after the last plush_anim_deform (column-major, model->bone_count of them),
 * valid until the next call that changes the pose. */
const float (*plush_anim_bone_globals(const plush_anim *anim))[16];

/* Skins vertices first..first+count of the anim's model with its current bone globals and vertex-morph
 * offsets: positions and (unit) normals; normals may be NULL. */
void plush_anim_skin(const plush_anim *anim, size_t first, size_t count, float (*positions)[3],
                     float (*normals)[3]);

#ifdef __cplusplus
}
#endif
#endif
