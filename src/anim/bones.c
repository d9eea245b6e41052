/* Bones: set-up (deform order, tree order, cycle check), the per-frame deform (append, globals, IK) and
 * the hand-over to and from physics.
 *
 * Facts this file relies on (PMX notes on bone deformation, and how saba / nanoem / babylon-mmd follow
 * MMD):
 * - Deform order: bones without the after-physics flag first, then by deform layer, then by index.
 * - A bone's local transform is T(rest offset from its parent + translations) * R, and in MMD's row-vector
 *   terms R = append * motion * morph * IK: the append rotation acts first, the IK rotation last. In the
 *   column-vector quaternions used here that is q = q_ik * q_morph * q_motion * q_append.
 * - Append (付与): the source is the append parent's motion + morph; when the append parent is itself an
 *   append bone, its stored append (its own ratio already applied), so chains multiply their ratios;
 *   with the local-append flag, the append parent's whole local transform (as we specify it; saba
 *   takes motion + morph there too, which differs only when the append parent appends itself). The
 *   append parent's IK rotation is included. A ratio other than 1 slerps the rotation from the identity
 *   (and may be negative) and scales the translation.
 * - Motion and bone-morph rotations compose in the order the PMX notes give (motion, then morph); saba
 *   applies the morph first. They differ only for a bone that a morph and a key turn about different
 *   axes at once.
 * - A pass computes every local, then the globals from the roots down, then walks the deform order doing
 *   append and IK; each change recomputes the globals of the changed bone's subtree.
 * - Fixed axis and local axes constrain editing only; deformation ignores them. External parents (a bone
 *   following another model) are not supported here and are reported. */
#include "anim/anim_internal.h"
#include "plush/sys/core.h"
#include "plush/sys/pmx.h"
#include "plush/sys/anim.h"

#include <stdio.h>
#include <stdlib.h>

/* ---- set-up ------------------------------------------------------------------------------------------ */


typedef struct order_key {
    uint32_t after, index;
    int32_t layer;
} order_key;

static int cmp_order(const void *pa, const void *pb)
{
    const order_key *a = pa, *b = pb;
    if (a->after != b->after)
        return a->after < b->after ? -1 : 1;
    if (a->layer != b->layer)
        return a->layer < b->layer ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

static bool bone_ref_ok(int32_t ref, size_t count)
{
    return ref >= -1 && (ref < 0 || (size_t)ref < count);
}

static plush_status check_bones(const plush_pmx_model *model, plush_diag *diag)
{
    size_t nb = model->bone_count;
    for (size_t i = 0; i < nb; i++) {
        const plush_pmx_bone *b = &model->bones[i];
        if (!bone_ref_ok(b->parent, nb))
            return plush_diag_fail(diag, PLUSH_E_FORMAT, -1, "bone", (int64_t)i,
                                   "parent index %d out of range (%zu bones)", (int)b->parent, nb);
        if ((b->flags & (PLUSH_PMX_BONE_APPEND_ROTATE | PLUSH_PMX_BONE_APPEND_TRANSLATE)) &&
            !bone_ref_ok(b->append_parent, nb))
            return plush_diag_fail(diag, PLUSH_E_FORMAT, -1, "bone", (int64_t)i,
                                   "append parent index %d out of range (%zu bones)", (int)b->append_parent, nb);
        if (b->flags & PLUSH_PMX_BONE_IK) {
            if (!bone_ref_ok(b->ik_target, nb))
                return plush_diag_fail(diag, PLUSH_E_FORMAT, -1, "bone", (int64_t)i,
                                       "IK target index %d out of range (%zu bones)", (int)b->ik_target, nb);
            if (b->ik_link_count && !b->ik_links)
                return plush_diag_fail(diag, PLUSH_E_FORMAT, -1, "bone", (int64_t)i, "IK links missing");
            for (uint32_t k = 0; k < b->ik_link_count; k++)
                if (!bone_ref_ok(b->ik_links[k].bone, nb) || b->ik_links[k].bone < 0)
                    return plush_diag_fail(diag, PLUSH_E_FORMAT, -1, "bone", (int64_t)i,
                                           "IK link %u: bone index %d out of range (%zu bones)", (unsigned)k,
                                           (int)b->ik_links[k].bone, nb);
        }
    }
    return PLUSH_OK;
}

/* Depth-first preorder from the roots; a bone never reached hangs in (or below) a parent cycle. */
static plush_status build_tree(plush_anim *a, plush_diag *diag)
{
    size_t nb = a->bone_count;
    uint32_t *child_first = plush_arena_array(&a->arena, nb + 1, sizeof *child_first);
    uint32_t *children = plush_arena_array(&a->arena, nb ? nb : 1, sizeof *children);
    uint32_t *stack = plush_arena_array(&a->arena, nb ? nb : 1, sizeof *stack);
    uint32_t *next_child = plush_arena_array(&a->arena, nb ? nb : 1, sizeof *next_child);
    if (!child_first || !children || !stack || !next_child)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "anim", -1, "out of memory");
    for (size_t i = 0; i < nb; i++)
        if (a->parent[i] >= 0)
            child_first[a->parent[i] + 1]++;
    for (size_t i = 0; i < nb; i++)
        child_first[i + 1] += child_first[i];
    for (size_t i = 0; i < nb; i++)
        next_child[i] = child_first[i];
    for (size_t i = 0; i < nb; i++)
        if (a->parent[i] >= 0)
            children[next_child[a->parent[i]]++] = (uint32_t)i;   /* by index: stable child order */

    uint32_t pos = 0;
    for (size_t root = 0; root < nb; root++) {
        if (a->parent[root] >= 0)
            continue;
        size_t depth = 0;
        stack[depth++] = (uint32_t)root;
        a->tree_pos[root] = pos;
        a->tree[pos++] = (uint32_t)root;
        next_child[root] = child_first[root];
        while (depth) {
            uint32_t b = stack[depth - 1];
            if (next_child[b] < child_first[b + 1]) {
                uint32_t c = children[next_child[b]++];
                a->tree_pos[c] = pos;
                a->tree[pos++] = c;
                next_child[c] = child_first[c];
                stack[depth++] = c;
            } else {
                a->subtree_end[b] = pos;
                depth--;
            }
        }
    }
    if (pos != nb) {
        /* Name the lowest bone that was never reached. */
        bool *seen = plush_arena_array(&a->arena, nb, sizeof *seen);
        size_t first = 0;
        if (seen) {
            for (uint32_t i = 0; i < pos; i++)
                seen[a->tree[i]] = true;
            while (first < nb && seen[first])
                first++;
        }
        return plush_diag_fail(diag, PLUSH_E_FORMAT, -1, "bone", (int64_t)first,
                               "parent chain forms a cycle");
    }
    return PLUSH_OK;
}

/* The parent chain from an IK bone's effector up to its root-most link, stored root first, when every
 * link lies on it; an empty path otherwise. */
static plush_status build_ik_paths(plush_anim *a)
{
    const plush_pmx_model *model = a->model;
    size_t nb = a->bone_count, total = 0;
    a->ik_path_first = plush_arena_array(&a->arena, nb ? nb : 1, sizeof *a->ik_path_first);
    a->ik_path_count = plush_arena_array(&a->arena, nb ? nb : 1, sizeof *a->ik_path_count);
    a->path_pos = plush_arena_array(&a->arena, nb ? nb : 1, sizeof *a->path_pos);
    if (!a->ik_path_first || !a->ik_path_count || !a->path_pos)
        return PLUSH_E_NOMEM;
    for (size_t i = 0; i < nb; i++)
        a->path_pos[i] = UINT32_MAX;
    /* Path lengths first (a walk stops after nb steps, so a parent cycle cannot trap it). */
    for (size_t i = 0; i < nb; i++) {
        if (!a->is_ik[i])
            continue;
        const plush_pmx_bone *b = &model->bones[i];
        int32_t root = b->ik_links[b->ik_link_count - 1].bone;
        size_t len = 0;
        int32_t c = b->ik_target;
        while (c >= 0 && len <= nb) {
            len++;
            if (c == root)
                break;
            c = a->parent[c];
        }
        if (c != root || len > nb)
            continue;
        a->ik_path_count[i] = (uint32_t)len;
        total += len;
    }
    a->ik_paths = plush_arena_array(&a->arena, total ? total : 1, sizeof *a->ik_paths);
    if (!a->ik_paths)
        return PLUSH_E_NOMEM;
    uint32_t next = 0;
    for (size_t i = 0; i < nb; i++) {
        uint32_t len = a->ik_path_count[i];
        if (!len)
            continue;
        a->ik_path_first[i] = next;
        int32_t c = model->bones[i].ik_target;
        for (uint32_t k = len; k-- > 0;) {
            a->ik_paths[next + k] = (uint32_t)c;
            c = a->parent[c];
        }
        /* Every link must be on the path, or a step could move a link the path does not refresh. */
        const plush_pmx_bone *b = &model->bones[i];
        bool all = true;
        for (uint32_t l = 0; l < b->ik_link_count && all; l++) {
            bool on = false;
            for (uint32_t k = 0; k < len; k++)
                on = on || a->ik_paths[next + k] == (uint32_t)b->ik_links[l].bone;
            all = on;
        }
        /* A goal hanging below a link moves with it: only whole subtrees keep it current. */
        int32_t up = a->parent[i];
        for (size_t steps = 0; up >= 0 && steps <= nb && all; steps++, up = a->parent[up])
            for (uint32_t k = 0; k < len; k++)
                all = all && a->ik_paths[next + k] != (uint32_t)up;
        if (!all) {
            a->ik_path_count[i] = 0;
            continue;
        }
        next += len;
    }
    return PLUSH_OK;
}

static void note_unsupported(plush_anim *a, const char *what, size_t index, const char *name)
{
    if (a->unsupported++ == 0)
        snprintf(a->unsupported_message, sizeof a->unsupported_message, "bone %zu (\"%s\"): %s", index,
                 name ? name : "", what);
}

#define ANIM_ARRAY(field, n)                                                               \
    do {                                                                                   \
        a->field = plush_arena_array(&a->arena, (n) ? (n) : 1, sizeof *a->field);          \
        if (!a->field)                                                                     \
            goto nomem;                                                                    \
    } while (0)

plush_status plush_anim_create(const plush_pmx_model *model, plush_anim **out, plush_diag *diag)
{
    if (out)
        *out = NULL;
    if (!model || !out)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "anim", -1, "no model");
    plush_status st = plush_pmx_require_geometry(model, diag); /* skinning reads the vertices */
    if (st == PLUSH_OK)
        st = check_bones(model, diag);
    if (st != PLUSH_OK)
        return st;
    plush_anim *a = calloc(1, sizeof *a);
    if (!a)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "anim", -1, "out of memory");
    a->model = model;
    size_t nb = model->bone_count;
    a->bone_count = nb;
    a->morph_count = model->morph_count;
    a->vertex_count = model->vertex_count;
    a->material_count = model->material_count;

    ANIM_ARRAY(deform_order, nb);
    ANIM_ARRAY(tree, nb);
    ANIM_ARRAY(tree_pos, nb);
    ANIM_ARRAY(subtree_end, nb);
    ANIM_ARRAY(parent, nb);
    ANIM_ARRAY(append, nb);
    ANIM_ARRAY(rel, nb);
    ANIM_ARRAY(stage, nb);
    ANIM_ARRAY(is_ik, nb);
    ANIM_ARRAY(ik_link, nb);
    ANIM_ARRAY(motion_t, nb);
    ANIM_ARRAY(motion_q, nb);
    ANIM_ARRAY(morph_t, nb);
    ANIM_ARRAY(morph_q, nb);
    ANIM_ARRAY(ik_enabled, nb);
    ANIM_ARRAY(append_t, nb);
    ANIM_ARRAY(append_q, nb);
    ANIM_ARRAY(ik_q, nb);
    ANIM_ARRAY(local_t, nb);
    ANIM_ARRAY(local_q, nb);
    ANIM_ARRAY(global, nb);
    ANIM_ARRAY(skin, nb);
    ANIM_ARRAY(driven, nb);
    ANIM_ARRAY(dirty, nb);

    for (size_t i = 0; i < nb; i++) {
        const plush_pmx_bone *b = &model->bones[i];
        a->parent[i] = b->parent;
        bool has_append = (b->flags & (PLUSH_PMX_BONE_APPEND_ROTATE | PLUSH_PMX_BONE_APPEND_TRANSLATE)) &&
                          b->append_parent >= 0;
        /* A bone appending itself would read the value it is writing; MMD shows no effect for it. */
        a->append[i] = has_append && (size_t)b->append_parent != i ? b->append_parent : -1;
        for (int k = 0; k < 3; k++)
            a->rel[i][k] = b->position[k] - (b->parent >= 0 ? model->bones[b->parent].position[k] : 0.0f);
        a->stage[i] = (b->flags & PLUSH_PMX_BONE_AFTER_PHYSICS) ? PLUSH_ANIM_AFTER_PHYSICS : PLUSH_ANIM_BEFORE_PHYSICS;
        a->is_ik[i] = (b->flags & PLUSH_PMX_BONE_IK) && b->ik_target >= 0 && (size_t)b->ik_target != i &&
                      b->ik_link_count > 0;
        if (a->is_ik[i])
            for (uint32_t k = 0; k < b->ik_link_count; k++)
                a->ik_link[b->ik_links[k].bone] = true;
        if (b->flags & PLUSH_PMX_BONE_EXTERNAL_PARENT)
            note_unsupported(a, "external parent deformation is not supported (the bone moves as if it had none)",
                             i, b->name.s);
    }
    st = build_ik_paths(a);
    if (st != PLUSH_OK)
        goto nomem;
    st = build_tree(a, diag);
    if (st != PLUSH_OK) {
        plush_anim_destroy(a);
        return st;
    }
    order_key *keys = malloc((nb ? nb : 1) * sizeof *keys);
    if (!keys)
        goto nomem;
    for (size_t i = 0; i < nb; i++)
        keys[i] = (order_key){.after = a->stage[i], .layer = model->bones[i].layer, .index = (uint32_t)i};
    qsort(keys, nb, sizeof *keys, cmp_order);
    for (size_t i = 0; i < nb; i++)
        a->deform_order[i] = keys[i].index;
    free(keys);

    st = plush__anim_morph_setup(a, diag);
    if (st != PLUSH_OK) {
        plush_anim_destroy(a);
        return st;
    }
    plush_anim_reset(a);
    *out = a;
    return PLUSH_OK;
nomem:
    plush_anim_destroy(a);
    return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "anim", -1, "out of memory");
}

void plush_anim_destroy(plush_anim *anim)
{
    if (!anim)
        return;
    plush_arena_free(&anim->arena);
    free(anim);
}

static void update_skin(plush_anim *a)
{
    const plush_pmx_bone *bones = a->model->bones;
    for (size_t b = 0; b < a->bone_count; b++) {
        const float *g = a->global[b];
        float *s = a->skin[b];
        memcpy(s, g, 12 * sizeof(float));
        const float *p = bones[b].position;
        for (int k = 0; k < 3; k++)
            s[12 + k] = g[12 + k] - (g[k] * p[0] + g[4 + k] * p[1] + g[8 + k] * p[2]);
        s[15] = 1.0f;
    }
}

void plush_anim_reset(plush_anim *anim)
{
    if (!anim)
        return;
    for (size_t b = 0; b < anim->bone_count; b++) {
        memset(anim->motion_t[b], 0, sizeof anim->motion_t[b]);
        anim_q_identity(anim->motion_q[b]);
        memset(anim->morph_t[b], 0, sizeof anim->morph_t[b]);
        anim_q_identity(anim->morph_q[b]);
        memset(anim->append_t[b], 0, sizeof anim->append_t[b]);
        anim_q_identity(anim->append_q[b]);
        anim_q_identity(anim->ik_q[b]);
        anim->ik_enabled[b] = true;
        anim->driven[b] = false;
    }
    for (size_t i = 0; i < anim->morph_count; i++)
        anim->weights_in[i] = 0.0f;
    plush__anim_morph_reset(anim);
    /* The rest pose: every global the translation to the bone's position. */
    for (size_t i = 0; i < anim->bone_count; i++) {
        uint32_t b = anim->tree[i];
        plush__anim_update_local(anim, b);
        anim_compose(anim->parent[b] >= 0 ? anim->global[anim->parent[b]] : NULL, anim->local_t[b],
                     anim->local_q[b], anim->global[b]);
    }
    update_skin(anim);
}

void plush_anim_sample(plush_anim *anim, const plush_motion *motion, float frame)
{
    if (!anim || !motion)
        return;
    plush__anim_motion_sample(anim, motion, frame);
}

void plush_anim_set_bone_motion(plush_anim *anim, size_t bone, const float translation[3], const float rotation[4])
{
    if (!anim || bone >= anim->bone_count)
        return;
    if (translation)
        for (int k = 0; k < 3; k++)
            anim->motion_t[bone][k] = isfinite(translation[k]) ? translation[k] : 0.0f;
    else
        memset(anim->motion_t[bone], 0, sizeof anim->motion_t[bone]);
    if (rotation) {
        memcpy(anim->motion_q[bone], rotation, sizeof anim->motion_q[bone]);
        anim_q_normalize(anim->motion_q[bone]);
    } else {
        anim_q_identity(anim->motion_q[bone]);
    }
}

void plush_anim_set_morph(plush_anim *anim, size_t morph, float weight)
{
    if (anim && morph < anim->morph_count)
        anim->weights_in[morph] = isfinite(weight) ? weight : 0.0f;
}

void plush_anim_set_ik(plush_anim *anim, size_t bone, bool enabled)
{
    if (anim && bone < anim->bone_count)
        anim->ik_enabled[bone] = enabled;
}

/* ---- deform ---------------------------------------------------------------------------------------- */

static void compute_append(plush_anim *a, uint32_t b)
{
    const plush_pmx_bone *bone = &a->model->bones[b];
    uint32_t p = (uint32_t)a->append[b];
    const plush_pmx_bone *src = &a->model->bones[p];
    bool local = (bone->flags & PLUSH_PMX_BONE_APPEND_LOCAL) != 0;
    float ratio = isfinite(bone->append_ratio) ? bone->append_ratio : 0.0f;
    if (bone->flags & PLUSH_PMX_BONE_APPEND_ROTATE) {
        float q[4];
        if (local) {
            memcpy(q, a->local_q[p], sizeof q);   /* already holds the parent's IK rotation */
        } else {
            if (a->append[p] >= 0 && (src->flags & PLUSH_PMX_BONE_APPEND_ROTATE))
                memcpy(q, a->append_q[p], sizeof q);
            else
                anim_q_mul(a->morph_q[p], a->motion_q[p], q);
            anim_q_mul(a->ik_q[p], q, q);
        }
        if (ratio == 1.0f)
            memcpy(a->append_q[b], q, sizeof q);
        else
            plush__anim_q_scale(q, ratio, a->append_q[b]);
    }
    if (bone->flags & PLUSH_PMX_BONE_APPEND_TRANSLATE) {
        vec3 t;
        if (local)
            glm_vec3_sub(a->local_t[p], a->rel[p], t);
        else if (a->append[p] >= 0 && (src->flags & PLUSH_PMX_BONE_APPEND_TRANSLATE))
            glm_vec3_copy(a->append_t[p], t);
        else
            glm_vec3_add(a->motion_t[p], a->morph_t[p], t);
        glm_vec3_scale(t, ratio, a->append_t[b]);
    }
}

void plush_anim_deform(plush_anim *anim, plush_anim_stage stage)
{
    if (!anim)
        return;
    plush_anim *a = anim;
    int st = (int)stage;
    for (size_t b = 0; b < a->bone_count; b++) {
        if (!plush__anim_in_stage(a, (uint32_t)b, st))
            continue;
        memset(a->append_t[b], 0, sizeof a->append_t[b]);
        anim_q_identity(a->append_q[b]);
        anim_q_identity(a->ik_q[b]);
        plush__anim_update_local(a, (uint32_t)b);
    }
    for (size_t i = 0; i < a->bone_count; i++) {
        uint32_t b = a->tree[i];
        if (!plush__anim_in_stage(a, b, st))
            continue;
        int32_t p = a->parent[b];
        anim_compose(p >= 0 ? a->global[p] : NULL, a->local_t[b], a->local_q[b], a->global[b]);
    }
    for (size_t i = 0; i < a->bone_count; i++) {
        uint32_t b = a->deform_order[i];
        if (!plush__anim_in_stage(a, b, st))
            continue;
        if (a->append[b] >= 0) {
            compute_append(a, b);
            plush__anim_update_local(a, b);
            plush__anim_update_subtree(a, b, st);
        }
        if (a->is_ik[b] && a->ik_enabled[b])
            plush__anim_ik_solve(a, b, st);
    }
    update_skin(a);
}

static bool finite16(const float m[16])
{
    for (int k = 0; k < 16; k++)
        if (!isfinite(m[k]))
            return false;
    return true;
}

void plush_anim_apply_physics(plush_anim *anim, const float (*globals)[16], const bool *driven)
{
    if (!anim || !globals || !driven)
        return;
    plush_anim *a = anim;
    for (size_t i = 0; i < a->bone_count; i++) {
        uint32_t b = a->tree[i];
        int32_t p = a->parent[b];
        a->driven[b] = driven[b] && finite16(globals[b]);
        if (a->driven[b]) {
            memcpy(a->global[b], globals[b], sizeof a->global[b]);
            a->dirty[b] = true;
        } else if (p >= 0 && a->dirty[p] && a->stage[b] == PLUSH_ANIM_BEFORE_PHYSICS) {
            anim_compose(a->global[p], a->local_t[b], a->local_q[b], a->global[b]);
            a->dirty[b] = true;
        } else {
            a->dirty[b] = false;
        }
    }
    update_skin(a);
}

const float (*plush_anim_bone_globals(const plush_anim *anim))[16]
{
    return anim ? (const float (*)[16])anim->global : NULL;
}

const float (*plush_anim_skin_matrices(const plush_anim *anim))[16]
{
    return anim ? (const float (*)[16])anim->skin : NULL;
}

void plush_anim_bone_local(const plush_anim *anim, size_t bone, float translation[3], float rotation[4])
{
    if (!anim || bone >= anim->bone_count)
        return;
    if (translation)
        memcpy(translation, anim->local_t[bone], 3 * sizeof(float));
    if (rotation)
        memcpy(rotation, anim->local_q[bone], 4 * sizeof(float));
}

uint32_t plush_anim_unsupported(const plush_anim *anim, char *message, size_t size)
{
    if (!anim)
        return 0;
    if (message && size) {
        size_t n = strlen(anim->unsupported_message);
        if (n >= size)
            n = size - 1;
        memcpy(message, anim->unsupported_message, n);
        message[n] = '\0';
    }
    return anim->unsupported;
}
