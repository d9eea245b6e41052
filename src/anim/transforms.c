/* The bone hierarchy's transforms: a bone's local transform from its parts (rest offset, motion, morph,
 * append, IK), and the globals of a subtree or of a path down the tree from the locals, for the bones of
 * the stage being deformed. The deform (bones.c) and the IK solver (ik.c), which turns a chain and
 * updates it as it goes, both call these. */
#include "anim/anim_internal.h"

void plush__anim_update_local(plush_anim *a, uint32_t b)
{
    vec3 t;
    glm_vec3_add(a->rel[b], a->motion_t[b], t);
    glm_vec3_add(t, a->morph_t[b], t);
    glm_vec3_add(t, a->append_t[b], a->local_t[b]);
    float q[4];
    anim_q_mul(a->morph_q[b], a->motion_q[b], q);
    anim_q_mul(q, a->append_q[b], q);
    anim_q_mul(a->ik_q[b], q, a->local_q[b]);
    anim_q_normalize(a->local_q[b]);
}

void plush__anim_update_subtree(plush_anim *a, uint32_t b, int stage)
{
    for (uint32_t i = a->tree_pos[b]; i < a->subtree_end[b]; i++) {
        uint32_t c = a->tree[i];
        if (!plush__anim_in_stage(a, c, stage))
            continue;
        int32_t p = a->parent[c];
        anim_compose(p >= 0 ? a->global[p] : NULL, a->local_t[c], a->local_q[c], a->global[c]);
    }
}

void plush__anim_update_path(plush_anim *a, const uint32_t *path, uint32_t from, uint32_t count, int stage)
{
    for (uint32_t i = from; i < count; i++) {
        uint32_t c = path[i];
        if (!plush__anim_in_stage(a, c, stage))
            continue;
        int32_t p = a->parent[c];
        anim_compose(p >= 0 ? a->global[p] : NULL, a->local_t[c], a->local_q[c], a->global[c]);
    }
}
