/* A reference PMX encoder for tests, written from the format description and independent of the
 * library: it checks nothing, so it also makes the broken files the reader must refuse. */
#include "pmx_fixture.h"
#include "plush/sys/core.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

uint8_t pmx_fx_min_size(int kind, size_t count)
{
    /* The largest index is count - 1. Vertex indices are unsigned at 1 and 2 bytes, others signed. */
    size_t top = count ? count - 1 : 0;
    if (kind == PLUSH_PMX_INDEX_VERTEX)
        return top <= 0xFF ? 1 : top <= 0xFFFF ? 2 : 4;
    return top <= 0x7F ? 1 : top <= 0x7FFF ? 2 : 4;
}

pmx_fx_raw_options pmx_fx_raw_defaults(void)
{
    pmx_fx_raw_options o;
    memset(&o, 0, sizeof o);
    o.encoding = -1;
    o.additional_uv = -1;
    return o;
}

typedef struct raw {
    plush_buf *out;
    uint8_t enc;
    uint8_t sizes[PLUSH_PMX_INDEX_KINDS];
} raw;

static size_t pos(const raw *r) { return r->out->size; }

static void put(raw *r, const void *p, size_t n)
{
    assert_true(plush_buf_append(r->out, p, n));
}

static void u8(raw *r, unsigned v)
{
    uint8_t b = (uint8_t)v;
    put(r, &b, 1);
}

static void u16(raw *r, unsigned v)
{
    uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    put(r, b, 2);
}

static void i32(raw *r, int64_t v)
{
    uint32_t u = (uint32_t)v;
    uint8_t b[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
    put(r, b, 4);
}

static void f32s(raw *r, const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &v[i], 4);
        i32(r, u);
    }
}

static void f32(raw *r, float v) { f32s(r, &v, 1); }

/* An index of the kind's size: its low bytes, little-endian (so -1 is all 0xFF). */
static void idx(raw *r, int kind, int64_t v)
{
    uint32_t u = (uint32_t)v;
    for (unsigned i = 0; i < r->sizes[kind]; i++)
        u8(r, (u >> (8 * i)) & 0xFF);
}

/* Decodes one UTF-8 character (valid input assumed; a stray byte stands for U+FFFD). */
static uint32_t utf8_char(const uint8_t *s, size_t n, size_t *i)
{
    uint8_t c = s[*i];
    size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (c >= 0x80 && c < 0xC0)
        len = 0;
    if (len == 0 || *i + len > n) {
        (*i)++;
        return 0xFFFD;
    }
    uint32_t v = len == 1 ? c : len == 2 ? c & 0x1Fu : len == 3 ? c & 0x0Fu : c & 0x07u;
    for (size_t k = 1; k < len; k++)
        v = (v << 6) | (s[*i + k] & 0x3Fu);
    *i += len;
    return v;
}

static void text(raw *r, const plush_str *s)
{
    const uint8_t *p = (const uint8_t *)(s->s ? s->s : "");
    if (r->enc == PLUSH_ENC_UTF8) {
        i32(r, s->len);
        put(r, p, s->len);
        return;
    }
    size_t units = 0;
    for (size_t i = 0; i < s->len;)
        units += utf8_char(p, s->len, &i) >= 0x10000 ? 2 : 1;
    i32(r, (int64_t)(units * 2));
    for (size_t i = 0; i < s->len;) {
        uint32_t cp = utf8_char(p, s->len, &i);
        if (cp >= 0x10000) {
            u16(r, 0xD800 + ((cp - 0x10000) >> 10));
            u16(r, 0xDC00 + ((cp - 0x10000) & 0x3FF));
        } else {
            u16(r, cp);
        }
    }
}

static void vertices(raw *r, const plush_pmx_model *m, int auv, pmx_fx_layout *lay)
{
    i32(r, (int64_t)m->vertex_count);
    for (size_t i = 0; i < m->vertex_count; i++) {
        const plush_pmx_vertex *v = &m->vertices[i];
        f32s(r, v->position, 3);
        f32s(r, v->normal, 3);
        f32s(r, v->uv, 2);
        for (int k = 0; k < auv; k++) {
            static const float zero[4];
            f32s(r, k < m->additional_uv ? m->additional_uvs[i * m->additional_uv + (size_t)k] : zero, 4);
        }
        u8(r, v->weight_type);
        if (i == 0)
            lay->first_vertex_bone = pos(r);
        switch (v->weight_type) {
        case PLUSH_PMX_BDEF2:
        case PLUSH_PMX_SDEF:
            idx(r, PLUSH_PMX_INDEX_BONE, v->bones[0]);
            idx(r, PLUSH_PMX_INDEX_BONE, v->bones[1]);
            f32(r, v->weights[0]);
            if (v->weight_type == PLUSH_PMX_SDEF) {
                const plush_pmx_sdef *s = &m->sdefs[v->sdef];
                f32s(r, s->c, 3);
                f32s(r, s->r0, 3);
                f32s(r, s->r1, 3);
            }
            break;
        case PLUSH_PMX_BDEF4:
        case PLUSH_PMX_QDEF:
            for (int k = 0; k < 4; k++)
                idx(r, PLUSH_PMX_INDEX_BONE, v->bones[k]);
            f32s(r, v->weights, 4);
            break;
        default: /* BDEF1, and any unknown type is followed by BDEF1 data */
            idx(r, PLUSH_PMX_INDEX_BONE, v->bones[0]);
            break;
        }
        f32(r, v->edge_scale);
    }
}

static void materials(raw *r, const plush_pmx_model *m)
{
    i32(r, (int64_t)m->material_count);
    for (size_t i = 0; i < m->material_count; i++) {
        const plush_pmx_material *mat = &m->materials[i];
        text(r, &mat->name);
        text(r, &mat->name_en);
        f32s(r, mat->diffuse, 4);
        f32s(r, mat->specular, 3);
        f32(r, mat->specular_power);
        f32s(r, mat->ambient, 3);
        u8(r, mat->flags);
        f32s(r, mat->edge_color, 4);
        f32(r, mat->edge_size);
        idx(r, PLUSH_PMX_INDEX_TEXTURE, mat->texture);
        idx(r, PLUSH_PMX_INDEX_TEXTURE, mat->sphere_texture);
        u8(r, mat->sphere_mode);
        u8(r, mat->toon_shared);
        if (mat->toon_shared)
            u8(r, (unsigned)mat->toon);
        else
            idx(r, PLUSH_PMX_INDEX_TEXTURE, mat->toon);
        text(r, &mat->memo);
        i32(r, mat->index_count);
    }
}

static void bones(raw *r, const plush_pmx_model *m, pmx_fx_layout *lay)
{
    i32(r, (int64_t)m->bone_count);
    for (size_t i = 0; i < m->bone_count; i++) {
        const plush_pmx_bone *b = &m->bones[i];
        if (i == 0)
            lay->first_bone_name = pos(r);
        text(r, &b->name);
        text(r, &b->name_en);
        f32s(r, b->position, 3);
        idx(r, PLUSH_PMX_INDEX_BONE, b->parent);
        i32(r, b->layer);
        u16(r, b->flags);
        if (b->flags & PLUSH_PMX_BONE_TAIL_IS_BONE)
            idx(r, PLUSH_PMX_INDEX_BONE, b->tail_bone);
        else
            f32s(r, b->tail_offset, 3);
        if (b->flags & (PLUSH_PMX_BONE_APPEND_ROTATE | PLUSH_PMX_BONE_APPEND_TRANSLATE)) {
            idx(r, PLUSH_PMX_INDEX_BONE, b->append_parent);
            f32(r, b->append_ratio);
        }
        if (b->flags & PLUSH_PMX_BONE_FIXED_AXIS)
            f32s(r, b->fixed_axis, 3);
        if (b->flags & PLUSH_PMX_BONE_LOCAL_AXES) {
            f32s(r, b->local_x, 3);
            f32s(r, b->local_z, 3);
        }
        if (b->flags & PLUSH_PMX_BONE_EXTERNAL_PARENT)
            i32(r, b->external_key);
        if (b->flags & PLUSH_PMX_BONE_IK) {
            idx(r, PLUSH_PMX_INDEX_BONE, b->ik_target);
            i32(r, b->ik_loop_count);
            f32(r, b->ik_limit_angle);
            if (!lay->first_ik_link_count)
                lay->first_ik_link_count = pos(r);
            i32(r, b->ik_link_count);
            for (uint32_t k = 0; k < b->ik_link_count; k++) {
                const plush_pmx_ik_link *l = &b->ik_links[k];
                idx(r, PLUSH_PMX_INDEX_BONE, l->bone);
                u8(r, l->has_limits);
                if (l->has_limits) {
                    f32s(r, l->lower, 3);
                    f32s(r, l->upper, 3);
                }
            }
        }
    }
}

static void morph_offsets(raw *r, const plush_pmx_morph *mo)
{
    for (uint32_t k = 0; k < mo->offset_count; k++) {
        switch (mo->kind) {
        case PLUSH_PMX_MORPH_GROUP:
        case PLUSH_PMX_MORPH_FLIP:
            idx(r, PLUSH_PMX_INDEX_MORPH, mo->offsets.group[k].morph);
            f32(r, mo->offsets.group[k].weight);
            break;
        case PLUSH_PMX_MORPH_VERTEX:
            idx(r, PLUSH_PMX_INDEX_VERTEX, mo->offsets.vertex[k].vertex);
            f32s(r, mo->offsets.vertex[k].offset, 3);
            break;
        case PLUSH_PMX_MORPH_BONE:
            idx(r, PLUSH_PMX_INDEX_BONE, mo->offsets.bone[k].bone);
            f32s(r, mo->offsets.bone[k].translation, 3);
            f32s(r, mo->offsets.bone[k].rotation, 4);
            break;
        case PLUSH_PMX_MORPH_MATERIAL: {
            const plush_pmx_morph_material *x = &mo->offsets.material[k];
            idx(r, PLUSH_PMX_INDEX_MATERIAL, x->material);
            u8(r, x->operation);
            f32s(r, x->diffuse, 4);
            f32s(r, x->specular, 3);
            f32(r, x->specular_power);
            f32s(r, x->ambient, 3);
            f32s(r, x->edge_color, 4);
            f32(r, x->edge_size);
            f32s(r, x->texture_tint, 4);
            f32s(r, x->sphere_tint, 4);
            f32s(r, x->toon_tint, 4);
            break;
        }
        case PLUSH_PMX_MORPH_IMPULSE:
            idx(r, PLUSH_PMX_INDEX_RIGID_BODY, mo->offsets.impulse[k].rigid_body);
            u8(r, mo->offsets.impulse[k].local);
            f32s(r, mo->offsets.impulse[k].velocity, 3);
            f32s(r, mo->offsets.impulse[k].torque, 3);
            break;
        default: /* UV and additional UV1..4 */
            idx(r, PLUSH_PMX_INDEX_VERTEX, mo->offsets.uv[k].vertex);
            f32s(r, mo->offsets.uv[k].offset, 4);
            break;
        }
    }
}

static void morphs(raw *r, const plush_pmx_model *m, pmx_fx_layout *lay)
{
    i32(r, (int64_t)m->morph_count);
    for (size_t i = 0; i < m->morph_count; i++) {
        const plush_pmx_morph *mo = &m->morphs[i];
        text(r, &mo->name);
        text(r, &mo->name_en);
        u8(r, mo->panel);
        u8(r, mo->kind);
        if (!lay->first_morph_offset_count && mo->offset_count)
            lay->first_morph_offset_count = pos(r);
        i32(r, mo->offset_count);
        morph_offsets(r, mo);
    }
}

static void frames(raw *r, const plush_pmx_model *m, pmx_fx_layout *lay)
{
    i32(r, (int64_t)m->display_frame_count);
    for (size_t i = 0; i < m->display_frame_count; i++) {
        const plush_pmx_display_frame *f = &m->display_frames[i];
        text(r, &f->name);
        text(r, &f->name_en);
        u8(r, f->special);
        if (!lay->first_frame_element_count && f->element_count)
            lay->first_frame_element_count = pos(r);
        i32(r, f->element_count);
        for (uint32_t k = 0; k < f->element_count; k++) {
            u8(r, f->elements[k].is_morph);
            idx(r, f->elements[k].is_morph ? PLUSH_PMX_INDEX_MORPH : PLUSH_PMX_INDEX_BONE, f->elements[k].index);
        }
    }
}

static void physics(raw *r, const plush_pmx_model *m, pmx_fx_layout *lay)
{
    lay->section[PMX_FX_SEC_RIGID] = pos(r);
    i32(r, (int64_t)m->rigid_body_count);
    for (size_t i = 0; i < m->rigid_body_count; i++) {
        const plush_pmx_rigid_body *b = &m->rigid_bodies[i];
        text(r, &b->name);
        text(r, &b->name_en);
        idx(r, PLUSH_PMX_INDEX_BONE, b->bone);
        u8(r, b->group);
        u16(r, b->mask);
        u8(r, b->shape);
        f32s(r, b->size, 3);
        f32s(r, b->position, 3);
        f32s(r, b->rotation, 3);
        f32(r, b->mass);
        f32(r, b->linear_damping);
        f32(r, b->angular_damping);
        f32(r, b->restitution);
        f32(r, b->friction);
        u8(r, b->mode);
    }
    lay->section[PMX_FX_SEC_JOINT] = pos(r);
    i32(r, (int64_t)m->joint_count);
    for (size_t i = 0; i < m->joint_count; i++) {
        const plush_pmx_joint *j = &m->joints[i];
        text(r, &j->name);
        text(r, &j->name_en);
        u8(r, j->type);
        idx(r, PLUSH_PMX_INDEX_RIGID_BODY, j->body_a);
        idx(r, PLUSH_PMX_INDEX_RIGID_BODY, j->body_b);
        f32s(r, j->position, 3);
        f32s(r, j->rotation, 3);
        f32s(r, j->linear_lower, 3);
        f32s(r, j->linear_upper, 3);
        f32s(r, j->angular_lower, 3);
        f32s(r, j->angular_upper, 3);
        f32s(r, j->spring_linear, 3);
        f32s(r, j->spring_angular, 3);
    }
}

static void soft_bodies(raw *r, const plush_pmx_model *m, pmx_fx_layout *lay)
{
    lay->section[PMX_FX_SEC_SOFT] = pos(r);
    i32(r, (int64_t)m->soft_body_count);
    for (size_t i = 0; i < m->soft_body_count; i++) {
        const plush_pmx_soft_body *s = &m->soft_bodies[i];
        const plush_pmx_soft_config *c = &s->config;
        text(r, &s->name);
        text(r, &s->name_en);
        u8(r, s->shape);
        idx(r, PLUSH_PMX_INDEX_MATERIAL, s->material);
        u8(r, s->group);
        u16(r, s->mask);
        u8(r, s->flags);
        i32(r, s->blink_distance);
        i32(r, s->cluster_count);
        f32(r, s->total_mass);
        f32(r, s->margin);
        i32(r, s->aero_model);
        const float cfg[18] = {c->vcf, c->dp, c->dg, c->lf, c->pr, c->vc, c->df, c->mt, c->chr,
                               c->khr, c->shr, c->ahr, c->srhr_cl, c->skhr_cl, c->sshr_cl,
                               c->sr_splt_cl, c->sk_splt_cl, c->ss_splt_cl};
        f32s(r, cfg, 18);
        i32(r, s->v_iterations);
        i32(r, s->p_iterations);
        i32(r, s->d_iterations);
        i32(r, s->c_iterations);
        f32(r, s->lst);
        f32(r, s->ast);
        f32(r, s->vst);
        if (!lay->first_anchor_count)
            lay->first_anchor_count = pos(r);
        i32(r, s->anchor_count);
        for (uint32_t k = 0; k < s->anchor_count; k++) {
            idx(r, PLUSH_PMX_INDEX_RIGID_BODY, s->anchors[k].rigid_body);
            idx(r, PLUSH_PMX_INDEX_VERTEX, s->anchors[k].vertex);
            u8(r, s->anchors[k].near_mode);
        }
        if (!lay->first_pin_count)
            lay->first_pin_count = pos(r);
        i32(r, s->pin_count);
        for (uint32_t k = 0; k < s->pin_count; k++)
            idx(r, PLUSH_PMX_INDEX_VERTEX, s->pins[k]);
    }
}

static size_t kind_count(const plush_pmx_model *m, int kind)
{
    switch (kind) {
    case PLUSH_PMX_INDEX_VERTEX: return m->vertex_count;
    case PLUSH_PMX_INDEX_TEXTURE: return m->texture_count;
    case PLUSH_PMX_INDEX_MATERIAL: return m->material_count;
    case PLUSH_PMX_INDEX_BONE: return m->bone_count;
    case PLUSH_PMX_INDEX_MORPH: return m->morph_count;
    default: return m->rigid_body_count;
    }
}

void pmx_fx_raw_write(const plush_pmx_model *m, const pmx_fx_raw_options *options, plush_buf *out,
                      pmx_fx_layout *layout)
{
    pmx_fx_raw_options o = options ? *options : pmx_fx_raw_defaults();
    pmx_fx_layout scratch;
    pmx_fx_layout *lay = layout ? layout : &scratch;
    memset(lay, 0, sizeof *lay);
    size_t base = out->size;
    raw r = {.out = out};
    float version = o.version != 0.0f ? o.version : m->version;
    r.enc = (uint8_t)(o.encoding >= 0 ? o.encoding : m->encoding);
    int auv = o.additional_uv >= 0 ? o.additional_uv : m->additional_uv;
    for (int k = 0; k < PLUSH_PMX_INDEX_KINDS; k++) {
        r.sizes[k] = o.sizes[k] ? o.sizes[k] : m->index_sizes[k];
        if (!r.sizes[k])
            r.sizes[k] = pmx_fx_min_size(k, kind_count(m, k));
    }

    lay->section[PMX_FX_SEC_HEADER] = pos(&r) - base;
    put(&r, "PMX ", 4);
    lay->version = pos(&r) - base;
    f32(&r, version);
    u8(&r, 8u + m->header_extra_size);
    u8(&r, r.enc);
    u8(&r, (unsigned)auv);
    put(&r, r.sizes, PLUSH_PMX_INDEX_KINDS);
    if (m->header_extra_size)
        put(&r, m->header_extra, m->header_extra_size);
    lay->section[PMX_FX_SEC_INFO] = lay->name_length = pos(&r);
    text(&r, &m->name);
    text(&r, &m->name_en);
    text(&r, &m->comment);
    text(&r, &m->comment_en);
    lay->section[PMX_FX_SEC_VERTEX] = pos(&r);
    vertices(&r, m, auv, lay);
    lay->section[PMX_FX_SEC_FACE] = pos(&r);
    i32(&r, (int64_t)m->index_count);
    for (size_t i = 0; i < m->index_count; i++)
        idx(&r, PLUSH_PMX_INDEX_VERTEX, m->indices[i]);
    lay->section[PMX_FX_SEC_TEXTURE] = pos(&r);
    i32(&r, (int64_t)m->texture_count);
    for (size_t i = 0; i < m->texture_count; i++)
        text(&r, &m->textures[i]);
    lay->section[PMX_FX_SEC_MATERIAL] = pos(&r);
    materials(&r, m);
    lay->section[PMX_FX_SEC_BONE] = pos(&r);
    bones(&r, m, lay);
    lay->section[PMX_FX_SEC_MORPH] = pos(&r);
    morphs(&r, m, lay);
    lay->section[PMX_FX_SEC_FRAME] = pos(&r);
    frames(&r, m, lay);
    physics(&r, m, lay);
    if (version > 2.05f && !o.omit_soft_section)
        soft_bodies(&r, m, lay);
    else
        lay->section[PMX_FX_SEC_SOFT] = pos(&r);
    lay->section[PMX_FX_SEC_END] = pos(&r);
    if (m->trailing_size)
        put(&r, m->trailing, m->trailing_size);

    /* offsets relative to the start of this file */
    size_t *fields[] = {&lay->name_length, &lay->first_vertex_bone, &lay->first_ik_link_count,
                        &lay->first_morph_offset_count, &lay->first_frame_element_count, &lay->first_anchor_count,
                        &lay->first_pin_count, &lay->first_bone_name};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (*fields[i])
            *fields[i] -= base;
    for (int s = PMX_FX_SEC_INFO; s < PMX_FX_SECTIONS; s++)
        lay->section[s] -= base;
}
