/* plush animation internals: the stages of the bone pipeline one by one, for the scene and the tests.
 * Extension-level API (as libgit2's sys/): what plush's own modules, its command-line tool and its
 * tests use beside the public plush/anim.h; a host program needs none of it. */
#ifndef PLUSH_SYS_ANIM_H
#define PLUSH_SYS_ANIM_H

#include "plush/anim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most loops an IK bone runs: MMD models use tens; a corrupt count must not stall a frame (the
 * solver and the run's budget both hold to it). */
#define PLUSH_ANIM_IK_MAX_LOOPS 1024

void plush_anim_set_ik(plush_anim *anim, size_t bone, bool enabled);
/* Resolves group and flip morphs (two passes, as the PMX notes order them) into effective weights and
 * computes bone-morph offsets, vertex / UV / additional-UV offsets, material values and impulses. */
void plush_anim_update_morphs(plush_anim *anim);
/* After the physics step: bones with driven[i] take globals[i] as their global transform; before-physics
 * bones that are not driven but hang below a driven bone are recomputed from their parent. */
void plush_anim_apply_physics(plush_anim *anim, const float (*globals)[16], const bool *driven);
/* Skinning matrices, global * T(-rest position), kept current by deform and apply_physics. */
const float (*plush_anim_skin_matrices(const plush_anim *anim))[16];
/* A bone's local transform after the last deform: translation from the parent's origin (rest offset +
 * motion + morph + append) and rotation (IK * morph * motion * append, column-vector order). */
void plush_anim_bone_local(const plush_anim *anim, size_t bone, float translation[3], float rotation[4]);
/* Effective weight of every morph after group/flip resolution. */
const float *plush_anim_morph_weights(const plush_anim *anim);
/* Per vertex: position offset of vertex morphs; NULL when no vertex morph is active. */
const float (*plush_anim_vertex_offsets(const plush_anim *anim))[3];
const plush_anim_material *plush_anim_materials(const plush_anim *anim);
size_t plush_anim_impulses(const plush_anim *anim, const plush_anim_impulse **out);
/* Unsupported features the model uses (external parent bones move as if they had none): the count, and
 * the first one as text in message (may be NULL). */
uint32_t plush_anim_unsupported(const plush_anim *anim, char *message, size_t size);
/* The skinning itself, for any bone matrices: skin[b] = global[b] * T(-rest position of b), offsets
 * per vertex (NULL: none) added to the rest position before skinning. BDEF1/2/4 blend matrices with the
 * stored weights, SDEF blends rotations spherically around C with the corrected R0/R1, QDEF blends dual
 * quaternions. A vertex whose weights sum to 0 keeps its (offset) rest position. */
void plush_anim_skin_vertices(const plush_pmx_model *model, const float (*skin)[16], const float (*offsets)[3],
                              size_t first, size_t count, float (*positions)[3], float (*normals)[3]);

#ifdef __cplusplus
}
#endif
#endif
