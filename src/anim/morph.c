/* Morphs: group / flip resolution and every morph kind's effect at its effective weight.
 *
 * Facts this file relies on (PMX notes, "モーフ"; MMD as saba / nanoem / babylon-mmd reproduce it):
 * - Vertex, UV and additional-UV morphs add weight * offset per vertex.
 * - Bone morphs add weight * translation to the bone's translation and slerp(identity, rotation, weight)
 *   to its rotation, on top of the motion.
 * - Material morphs name one material or all (-1). Multiply offsets blend from 1: lerp(1, m, weight),
 *   multiplied together; add offsets sum weight * a. The two are kept apart and applied as
 *   value = base * mul + add. For the texture / sphere / toon tints the base is 1 (the tint multiplies
 *   the texture colour) and the add part is kept as its own colour.
 * - A group morph applies its members at group weight * member factor, added to the members' own
 *   weights. Members that are group morphs are ignored (the notes forbid nesting groups).
 * - A flip morph picks one member: index = (int)((count + 1) * weight) - 1, clamped to the last member;
 *   below 0 it picks none. The picked member's morph gets the member's value as its weight (overwrite).
 * - Impulse morphs hand weight * velocity / torque to one rigid body (local or global axes) before the
 *   next physics step.
 * Two passes, flip then group: flips choose among morphs (commonly group morphs, e.g. alternative
 * expressions) from the sampled weights, then groups expand with the weights flips left. */
#include "anim/anim_internal.h"
#include "plush/sys/core.h"
#include "plush/sys/anim.h"

#include <stdio.h>

static bool uv_kind(uint8_t kind)
{
    return kind >= PLUSH_PMX_MORPH_UV && kind <= PLUSH_PMX_MORPH_UV4;
}

static plush_status check_morph(const plush_pmx_model *model, size_t i, plush_diag *diag)
{
    const plush_pmx_morph *m = &model->morphs[i];
    if (m->offset_count && !m->offsets.group && m->kind < PLUSH_PMX_MORPH_KINDS)
        return plush_diag_fail(diag, PLUSH_E_FORMAT, -1, "morph", (int64_t)i, "offsets missing");
    for (uint32_t k = 0; k < m->offset_count; k++) {
        int64_t ref = 0, count = 0;
        const char *what = "";
        switch (m->kind) {
        case PLUSH_PMX_MORPH_GROUP:
        case PLUSH_PMX_MORPH_FLIP:
            ref = m->offsets.group[k].morph, count = (int64_t)model->morph_count, what = "morph";
            break;
        case PLUSH_PMX_MORPH_VERTEX:
            ref = m->offsets.vertex[k].vertex, count = (int64_t)model->vertex_count, what = "vertex";
            break;
        case PLUSH_PMX_MORPH_BONE:
            ref = m->offsets.bone[k].bone, count = (int64_t)model->bone_count, what = "bone";
            break;
        case PLUSH_PMX_MORPH_MATERIAL:
            ref = m->offsets.material[k].material, count = (int64_t)model->material_count, what = "material";
            if (ref == -1)
                continue;
            break;
        case PLUSH_PMX_MORPH_IMPULSE:
            ref = m->offsets.impulse[k].rigid_body, count = (int64_t)model->rigid_body_count, what = "rigid body";
            break;
        default:
            if (!uv_kind(m->kind))
                return PLUSH_OK;   /* an unknown kind does nothing (the reader rejects it anyway) */
            ref = m->offsets.uv[k].vertex, count = (int64_t)model->vertex_count, what = "vertex";
            if (m->kind > PLUSH_PMX_MORPH_UV && m->kind - PLUSH_PMX_MORPH_UV > model->additional_uv)
                return plush_diag_fail(diag, PLUSH_E_FORMAT, -1, "morph", (int64_t)i,
                                       "additional UV%d morph on a model with %d additional UVs",
                                       m->kind - PLUSH_PMX_MORPH_UV, model->additional_uv);
            break;
        }
        if (ref < 0 || ref >= count)
            return plush_diag_fail(diag, PLUSH_E_FORMAT, -1, "morph", (int64_t)i,
                                   "offset %u: %s index %lld out of range (%lld)", (unsigned)k, what,
                                   (long long)ref, (long long)count);
    }
    return PLUSH_OK;
}

plush_status plush__anim_morph_setup(plush_anim *a, plush_diag *diag)
{
    const plush_pmx_model *model = a->model;
    size_t nm = a->morph_count, nv = a->vertex_count;
    bool has_vertex = false, has_uv[ANIM_UV_SETS] = {false};
    size_t impulses = 0;
    for (size_t i = 0; i < nm; i++) {
        plush_status st = check_morph(model, i, diag);
        if (st != PLUSH_OK)
            return st;
        const plush_pmx_morph *m = &model->morphs[i];
        if (m->kind == PLUSH_PMX_MORPH_VERTEX && m->offset_count)
            has_vertex = true;
        if (uv_kind(m->kind) && m->offset_count)
            has_uv[m->kind - PLUSH_PMX_MORPH_UV] = true;
        if (m->kind == PLUSH_PMX_MORPH_IMPULSE)
            impulses += m->offset_count;
    }
    a->weights_in = plush_arena_array(&a->arena, nm ? nm : 1, sizeof *a->weights_in);
    a->weights = plush_arena_array(&a->arena, nm ? nm : 1, sizeof *a->weights);
    a->morph_applied = plush_arena_array(&a->arena, nm ? nm : 1, sizeof *a->morph_applied);
    a->material_ops = plush_arena_array(&a->arena, a->material_count ? a->material_count : 1, sizeof *a->material_ops);
    a->materials = plush_arena_array(&a->arena, a->material_count ? a->material_count : 1, sizeof *a->materials);
    a->impulses = plush_arena_array(&a->arena, impulses ? impulses : 1, sizeof *a->impulses);
    a->impulse_capacity = impulses;
    bool ok = a->weights_in && a->weights && a->morph_applied && a->material_ops && a->materials && a->impulses;
    if (ok && has_vertex) {
        a->vertex_offsets = plush_arena_array(&a->arena, nv, sizeof *a->vertex_offsets);
        ok = a->vertex_offsets != NULL;
    }
    for (int k = 0; ok && k < ANIM_UV_SETS; k++) {
        if (has_uv[k]) {
            a->uv_offsets[k] = plush_arena_array(&a->arena, nv, sizeof *a->uv_offsets[k]);
            ok = a->uv_offsets[k] != NULL;
        }
    }
    if (!ok)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "anim", -1, "out of memory");
    return PLUSH_OK;
}

static void ops_neutral(anim_material_ops *ops)
{
    plush_anim_material *m = &ops->mul;
    for (int k = 0; k < 4; k++)
        m->diffuse[k] = m->edge_color[k] = m->texture_tint[k] = m->sphere_tint[k] = m->toon_tint[k] = 1.0f;
    for (int k = 0; k < 3; k++)
        m->specular[k] = m->ambient[k] = 1.0f;
    m->specular_power = m->edge_size = 1.0f;
    memset(&ops->add, 0, sizeof ops->add);
}

/* Material values = base * mul + add (tints: base 1; their add part stays apart in *_add). */
static void materials_compute(plush_anim *a)
{
    for (size_t i = 0; i < a->material_count; i++) {
        const plush_pmx_material *src = &a->model->materials[i];
        const anim_material_ops *ops = &a->material_ops[i];
        plush_anim_material *dst = &a->materials[i];
        for (int k = 0; k < 4; k++) {
            dst->diffuse[k] = src->diffuse[k] * ops->mul.diffuse[k] + ops->add.diffuse[k];
            dst->edge_color[k] = src->edge_color[k] * ops->mul.edge_color[k] + ops->add.edge_color[k];
            dst->texture_tint[k] = ops->mul.texture_tint[k];
            dst->sphere_tint[k] = ops->mul.sphere_tint[k];
            dst->toon_tint[k] = ops->mul.toon_tint[k];
            dst->texture_add[k] = ops->add.texture_tint[k];
            dst->sphere_add[k] = ops->add.sphere_tint[k];
            dst->toon_add[k] = ops->add.toon_tint[k];
        }
        for (int k = 0; k < 3; k++) {
            dst->specular[k] = src->specular[k] * ops->mul.specular[k] + ops->add.specular[k];
            dst->ambient[k] = src->ambient[k] * ops->mul.ambient[k] + ops->add.ambient[k];
        }
        dst->specular_power = src->specular_power * ops->mul.specular_power + ops->add.specular_power;
        dst->edge_size = src->edge_size * ops->mul.edge_size + ops->add.edge_size;
    }
}

void plush__anim_morph_reset(plush_anim *a)
{
    for (size_t i = 0; i < a->morph_count; i++) {
        a->weights[i] = 0.0f;
        a->morph_applied[i] = false;
    }
    if (a->vertex_offsets)
        memset(a->vertex_offsets, 0, a->vertex_count * sizeof *a->vertex_offsets);
    a->vertex_active = false;
    for (int k = 0; k < ANIM_UV_SETS; k++) {
        if (a->uv_offsets[k])
            memset(a->uv_offsets[k], 0, a->vertex_count * sizeof *a->uv_offsets[k]);
        a->uv_active[k] = false;
    }
    for (size_t i = 0; i < a->material_count; i++)
        ops_neutral(&a->material_ops[i]);
    materials_compute(a);
    a->impulse_count = 0;
}

/* Per-field blend of one material offset into ops. */
static void material_apply(anim_material_ops *ops, const plush_pmx_morph_material *o, float w)
{
    if (o->operation == 0) {
        plush_anim_material *m = &ops->mul;
        for (int k = 0; k < 4; k++) {
            m->diffuse[k] *= 1.0f + (o->diffuse[k] - 1.0f) * w;
            m->edge_color[k] *= 1.0f + (o->edge_color[k] - 1.0f) * w;
            m->texture_tint[k] *= 1.0f + (o->texture_tint[k] - 1.0f) * w;
            m->sphere_tint[k] *= 1.0f + (o->sphere_tint[k] - 1.0f) * w;
            m->toon_tint[k] *= 1.0f + (o->toon_tint[k] - 1.0f) * w;
        }
        for (int k = 0; k < 3; k++) {
            m->specular[k] *= 1.0f + (o->specular[k] - 1.0f) * w;
            m->ambient[k] *= 1.0f + (o->ambient[k] - 1.0f) * w;
        }
        m->specular_power *= 1.0f + (o->specular_power - 1.0f) * w;
        m->edge_size *= 1.0f + (o->edge_size - 1.0f) * w;
    } else {
        plush_anim_material *m = &ops->add;
        for (int k = 0; k < 4; k++) {
            m->diffuse[k] += o->diffuse[k] * w;
            m->edge_color[k] += o->edge_color[k] * w;
            m->texture_tint[k] += o->texture_tint[k] * w;
            m->sphere_tint[k] += o->sphere_tint[k] * w;
            m->toon_tint[k] += o->toon_tint[k] * w;
        }
        for (int k = 0; k < 3; k++) {
            m->specular[k] += o->specular[k] * w;
            m->ambient[k] += o->ambient[k] * w;
        }
        m->specular_power += o->specular_power * w;
        m->edge_size += o->edge_size * w;
    }
}

static void resolve_weights(plush_anim *a)
{
    const plush_pmx_morph *morphs = a->model->morphs;
    size_t nm = a->morph_count;
    memcpy(a->weights, a->weights_in, nm * sizeof *a->weights);
    for (size_t i = 0; i < nm; i++) {
        const plush_pmx_morph *m = &morphs[i];
        float w = a->weights_in[i];
        if (m->kind != PLUSH_PMX_MORPH_FLIP || !(w > 0.0f) || !m->offset_count)
            continue;
        int64_t index = (int64_t)((float)(m->offset_count + 1) * w) - 1;
        if (index >= (int64_t)m->offset_count)
            index = (int64_t)m->offset_count - 1;
        if (index < 0)
            continue;
        const plush_pmx_morph_group *pick = &m->offsets.group[index];
        a->weights[pick->morph] = pick->weight;
    }
    for (size_t i = 0; i < nm; i++) {
        const plush_pmx_morph *m = &morphs[i];
        float w = a->weights[i];
        if (m->kind != PLUSH_PMX_MORPH_GROUP || w == 0.0f)
            continue;
        for (uint32_t k = 0; k < m->offset_count; k++) {
            const plush_pmx_morph_group *g = &m->offsets.group[k];
            if (morphs[g->morph].kind == PLUSH_PMX_MORPH_GROUP)
                continue;
            a->weights[g->morph] += w * g->weight;
        }
    }
}

/* Takes the vertex / UV offsets of morphs applied last time back out, vertex by vertex, so the buffers
 * never need a full clear. */
static void clear_applied(plush_anim *a)
{
    const plush_pmx_morph *morphs = a->model->morphs;
    for (size_t i = 0; i < a->morph_count; i++) {
        if (!a->morph_applied[i])
            continue;
        const plush_pmx_morph *m = &morphs[i];
        if (m->kind == PLUSH_PMX_MORPH_VERTEX) {
            for (uint32_t k = 0; k < m->offset_count; k++)
                memset(a->vertex_offsets[m->offsets.vertex[k].vertex], 0, sizeof a->vertex_offsets[0]);
        } else {
            float (*uv)[4] = a->uv_offsets[m->kind - PLUSH_PMX_MORPH_UV];
            for (uint32_t k = 0; k < m->offset_count; k++)
                memset(uv[m->offsets.uv[k].vertex], 0, sizeof uv[0]);
        }
        a->morph_applied[i] = false;
    }
    a->vertex_active = false;
    for (int k = 0; k < ANIM_UV_SETS; k++)
        a->uv_active[k] = false;
}

void plush_anim_update_morphs(plush_anim *anim)
{
    if (!anim)
        return;
    plush_anim *a = anim;
    const plush_pmx_morph *morphs = a->model->morphs;
    resolve_weights(a);
    clear_applied(a);
    for (size_t b = 0; b < a->bone_count; b++) {
        memset(a->morph_t[b], 0, sizeof a->morph_t[b]);
        anim_q_identity(a->morph_q[b]);
    }
    for (size_t i = 0; i < a->material_count; i++)
        ops_neutral(&a->material_ops[i]);
    a->impulse_count = 0;

    for (size_t i = 0; i < a->morph_count; i++) {
        const plush_pmx_morph *m = &morphs[i];
        float w = a->weights[i];
        if (w == 0.0f || !m->offset_count)
            continue;
        switch (m->kind) {
        case PLUSH_PMX_MORPH_VERTEX:
            for (uint32_t k = 0; k < m->offset_count; k++) {
                const plush_pmx_morph_vertex *o = &m->offsets.vertex[k];
                for (int c = 0; c < 3; c++)
                    a->vertex_offsets[o->vertex][c] += w * o->offset[c];
            }
            a->morph_applied[i] = true;
            a->vertex_active = true;
            break;
        case PLUSH_PMX_MORPH_BONE:
            for (uint32_t k = 0; k < m->offset_count; k++) {
                const plush_pmx_morph_bone *o = &m->offsets.bone[k];
                for (int c = 0; c < 3; c++)
                    a->morph_t[o->bone][c] += w * o->translation[c];
                float q[4], r[4];
                memcpy(q, o->rotation, sizeof q);
                anim_q_normalize(q);
                plush__anim_q_scale(q, w, r);
                anim_q_mul(a->morph_q[o->bone], r, a->morph_q[o->bone]);
            }
            break;
        case PLUSH_PMX_MORPH_MATERIAL:
            for (uint32_t k = 0; k < m->offset_count; k++) {
                const plush_pmx_morph_material *o = &m->offsets.material[k];
                if (o->material < 0)
                    for (size_t t = 0; t < a->material_count; t++)
                        material_apply(&a->material_ops[t], o, w);
                else
                    material_apply(&a->material_ops[o->material], o, w);
            }
            break;
        case PLUSH_PMX_MORPH_IMPULSE:
            for (uint32_t k = 0; k < m->offset_count && a->impulse_count < a->impulse_capacity; k++) {
                const plush_pmx_morph_impulse *o = &m->offsets.impulse[k];
                plush_anim_impulse *dst = &a->impulses[a->impulse_count++];
                dst->rigid_body = o->rigid_body;
                dst->local = o->local != 0;
                for (int c = 0; c < 3; c++) {
                    dst->velocity[c] = w * o->velocity[c];
                    dst->torque[c] = w * o->torque[c];
                }
            }
            break;
        default:
            if (uv_kind(m->kind)) {
                int set = m->kind - PLUSH_PMX_MORPH_UV;
                for (uint32_t k = 0; k < m->offset_count; k++) {
                    const plush_pmx_morph_uv *o = &m->offsets.uv[k];
                    for (int c = 0; c < 4; c++)
                        a->uv_offsets[set][o->vertex][c] += w * o->offset[c];
                }
                a->morph_applied[i] = true;
                a->uv_active[set] = true;
            }
            break;   /* group and flip act through their members */
        }
    }
    materials_compute(a);
}

const float *plush_anim_morph_weights(const plush_anim *anim)
{
    return anim ? anim->weights : NULL;
}

const float (*plush_anim_vertex_offsets(const plush_anim *anim))[3]
{
    return anim && anim->vertex_active ? (const float (*)[3])anim->vertex_offsets : NULL;
}

const plush_anim_material *plush_anim_materials(const plush_anim *anim)
{
    return anim ? anim->materials : NULL;
}

size_t plush_anim_impulses(const plush_anim *anim, const plush_anim_impulse **out)
{
    if (out)
        *out = anim ? anim->impulses : NULL;
    return anim ? anim->impulse_count : 0;
}
