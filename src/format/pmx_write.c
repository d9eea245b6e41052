/* PMX writer: canonical bytes, chosen version / encoding / index sizes, 2.1 -> 2.0 downgrade. */
#include "cursor.h"
#include "pmx_internal.h"
#include "plush/sys/core.h"
#include "plush/sys/pmx.h"

#include <string.h>

typedef struct writer {
    plush_buf *out;
    plush_encoding enc;
    bool same_encoding;              /* raw bytes of broken text can be written back */
    uint8_t isz[PLUSH_PMX_INDEX_KINDS];
} writer;

static uint8_t *room(writer *w, size_t n)
{
    if (!plush_buf_reserve(w->out, n))
        return NULL;
    uint8_t *p = w->out->data + w->out->size;
    w->out->size += n;
    return p;
}

static void w_bytes(writer *w, const void *data, size_t n)
{
    uint8_t *p = room(w, n);
    if (p && n)
        memcpy(p, data, n);
}
static void w_u8(writer *w, uint8_t v) { w_bytes(w, &v, 1); }
static void w_u16(writer *w, uint16_t v) { w_bytes(w, &v, 2); }
static void w_i32(writer *w, int32_t v) { w_bytes(w, &v, 4); }
static void w_f32(writer *w, float v) { w_bytes(w, &v, 4); }
static void w_f32s(writer *w, const float *v, size_t n) { w_bytes(w, v, n * 4); }

static void w_index(writer *w, int kind, int32_t v)
{
    switch (w->isz[kind]) {
    case 1: w_u8(w, (uint8_t)v); break;
    case 2: w_u16(w, (uint16_t)v); break;
    default: w_i32(w, v); break;
    }
}

static void w_text(writer *w, const plush_str *s)
{
    if (s->raw && w->same_encoding) {
        w_i32(w, (int32_t)s->raw_len);
        w_bytes(w, s->raw, s->raw_len);
        return;
    }
    const char *text = s->s ? s->s : "";
    size_t len = s->s ? s->len : 0;
    size_t n = plush_text_encoded_size(w->enc, text, len);
    w_i32(w, (int32_t)n);
    uint8_t *p = room(w, n);
    if (p)
        plush_text_encode(w->enc, text, len, p);
}

static void write_header(writer *w, const plush_pmx_model *m, float version)
{
    w_bytes(w, "PMX ", 4);
    w_f32(w, version);
    w_u8(w, (uint8_t)(8 + m->header_extra_size));
    w_u8(w, (uint8_t)w->enc);
    w_u8(w, m->additional_uv);
    w_bytes(w, w->isz, PLUSH_PMX_INDEX_KINDS);
    w_bytes(w, m->header_extra, m->header_extra_size);
    w_text(w, &m->name);
    w_text(w, &m->name_en);
    w_text(w, &m->comment);
    w_text(w, &m->comment_en);
}

static void write_vertices(writer *w, const plush_pmx_model *m)
{
    const size_t auv = m->additional_uv;
    w_i32(w, (int32_t)m->vertex_count);
    for (size_t i = 0; i < m->vertex_count; i++) {
        const plush_pmx_vertex *v = &m->vertices[i];
        w_f32s(w, v->position, 3);
        w_f32s(w, v->normal, 3);
        w_f32s(w, v->uv, 2);
        if (auv)
            w_f32s(w, m->additional_uvs[i * auv], 4 * auv);
        w_u8(w, v->weight_type);
        switch (v->weight_type) {
        case PLUSH_PMX_BDEF1: w_index(w, PLUSH_PMX_INDEX_BONE, v->bones[0]); break;
        case PLUSH_PMX_BDEF2:
        case PLUSH_PMX_SDEF:
            w_index(w, PLUSH_PMX_INDEX_BONE, v->bones[0]);
            w_index(w, PLUSH_PMX_INDEX_BONE, v->bones[1]);
            w_f32(w, v->weights[0]);
            if (v->weight_type == PLUSH_PMX_SDEF) {
                const plush_pmx_sdef *s = &m->sdefs[v->sdef];
                w_f32s(w, s->c, 3);
                w_f32s(w, s->r0, 3);
                w_f32s(w, s->r1, 3);
            }
            break;
        default: /* BDEF4, QDEF */
            for (int k = 0; k < 4; k++)
                w_index(w, PLUSH_PMX_INDEX_BONE, v->bones[k]);
            w_f32s(w, v->weights, 4);
            break;
        }
        w_f32(w, v->edge_scale);
    }
}

static void write_faces_textures_materials(writer *w, const plush_pmx_model *m)
{
    w_i32(w, (int32_t)m->index_count);
    const uint8_t vs = w->isz[PLUSH_PMX_INDEX_VERTEX];
    uint8_t *p = room(w, m->index_count * vs);
    if (p) {
        for (size_t i = 0; i < m->index_count; i++) {
            uint32_t v = m->indices[i];
            if (vs == 1)
                p[i] = (uint8_t)v;
            else if (vs == 2)
                put_u16(p + 2 * i, (uint16_t)v);
            else
                put_u32(p + 4 * i, v);
        }
    }
    w_i32(w, (int32_t)m->texture_count);
    for (size_t i = 0; i < m->texture_count; i++)
        w_text(w, &m->textures[i]);
    w_i32(w, (int32_t)m->material_count);
    for (size_t i = 0; i < m->material_count; i++) {
        const plush_pmx_material *mt = &m->materials[i];
        w_text(w, &mt->name);
        w_text(w, &mt->name_en);
        w_f32s(w, mt->diffuse, 4);
        w_f32s(w, mt->specular, 3);
        w_f32(w, mt->specular_power);
        w_f32s(w, mt->ambient, 3);
        w_u8(w, mt->flags);
        w_f32s(w, mt->edge_color, 4);
        w_f32(w, mt->edge_size);
        w_index(w, PLUSH_PMX_INDEX_TEXTURE, mt->texture);
        w_index(w, PLUSH_PMX_INDEX_TEXTURE, mt->sphere_texture);
        w_u8(w, mt->sphere_mode);
        w_u8(w, mt->toon_shared);
        if (mt->toon_shared)
            w_u8(w, (uint8_t)mt->toon);
        else
            w_index(w, PLUSH_PMX_INDEX_TEXTURE, mt->toon);
        w_text(w, &mt->memo);
        w_i32(w, mt->index_count);
    }
}

static void write_bones(writer *w, const plush_pmx_model *m)
{
    w_i32(w, (int32_t)m->bone_count);
    for (size_t i = 0; i < m->bone_count; i++) {
        const plush_pmx_bone *b = &m->bones[i];
        w_text(w, &b->name);
        w_text(w, &b->name_en);
        w_f32s(w, b->position, 3);
        w_index(w, PLUSH_PMX_INDEX_BONE, b->parent);
        w_i32(w, b->layer);
        w_u16(w, b->flags);
        if (b->flags & PLUSH_PMX_BONE_TAIL_IS_BONE)
            w_index(w, PLUSH_PMX_INDEX_BONE, b->tail_bone);
        else
            w_f32s(w, b->tail_offset, 3);
        if (b->flags & (PLUSH_PMX_BONE_APPEND_ROTATE | PLUSH_PMX_BONE_APPEND_TRANSLATE)) {
            w_index(w, PLUSH_PMX_INDEX_BONE, b->append_parent);
            w_f32(w, b->append_ratio);
        }
        if (b->flags & PLUSH_PMX_BONE_FIXED_AXIS)
            w_f32s(w, b->fixed_axis, 3);
        if (b->flags & PLUSH_PMX_BONE_LOCAL_AXES) {
            w_f32s(w, b->local_x, 3);
            w_f32s(w, b->local_z, 3);
        }
        if (b->flags & PLUSH_PMX_BONE_EXTERNAL_PARENT)
            w_i32(w, b->external_key);
        if (b->flags & PLUSH_PMX_BONE_IK) {
            w_index(w, PLUSH_PMX_INDEX_BONE, b->ik_target);
            w_i32(w, b->ik_loop_count);
            w_f32(w, b->ik_limit_angle);
            w_i32(w, (int32_t)b->ik_link_count);
            for (uint32_t l = 0; l < b->ik_link_count; l++) {
                const plush_pmx_ik_link *link = &b->ik_links[l];
                w_index(w, PLUSH_PMX_INDEX_BONE, link->bone);
                w_u8(w, link->has_limits ? 1 : 0);
                if (link->has_limits) {
                    w_f32s(w, link->lower, 3);
                    w_f32s(w, link->upper, 3);
                }
            }
        }
    }
}

static void write_morph_offset(writer *w, const plush_pmx_morph *mo, uint32_t k)
{
    switch (mo->kind) {
    case PLUSH_PMX_MORPH_GROUP:
    case PLUSH_PMX_MORPH_FLIP:
        w_index(w, PLUSH_PMX_INDEX_MORPH, mo->offsets.group[k].morph);
        w_f32(w, mo->offsets.group[k].weight);
        break;
    case PLUSH_PMX_MORPH_VERTEX:
        w_index(w, PLUSH_PMX_INDEX_VERTEX, mo->offsets.vertex[k].vertex);
        w_f32s(w, mo->offsets.vertex[k].offset, 3);
        break;
    case PLUSH_PMX_MORPH_BONE:
        w_index(w, PLUSH_PMX_INDEX_BONE, mo->offsets.bone[k].bone);
        w_f32s(w, mo->offsets.bone[k].translation, 3);
        w_f32s(w, mo->offsets.bone[k].rotation, 4);
        break;
    case PLUSH_PMX_MORPH_MATERIAL: {
        const plush_pmx_morph_material *o = &mo->offsets.material[k];
        w_index(w, PLUSH_PMX_INDEX_MATERIAL, o->material);
        w_u8(w, o->operation);
        w_f32s(w, o->diffuse, 4);
        w_f32s(w, o->specular, 3);
        w_f32(w, o->specular_power);
        w_f32s(w, o->ambient, 3);
        w_f32s(w, o->edge_color, 4);
        w_f32(w, o->edge_size);
        w_f32s(w, o->texture_tint, 4);
        w_f32s(w, o->sphere_tint, 4);
        w_f32s(w, o->toon_tint, 4);
        break;
    }
    case PLUSH_PMX_MORPH_IMPULSE: {
        const plush_pmx_morph_impulse *o = &mo->offsets.impulse[k];
        w_index(w, PLUSH_PMX_INDEX_RIGID_BODY, o->rigid_body);
        w_u8(w, o->local);
        w_f32s(w, o->velocity, 3);
        w_f32s(w, o->torque, 3);
        break;
    }
    default:
        w_index(w, PLUSH_PMX_INDEX_VERTEX, mo->offsets.uv[k].vertex);
        w_f32s(w, mo->offsets.uv[k].offset, 4);
        break;
    }
}

static void write_morphs_frames(writer *w, const plush_pmx_model *m)
{
    w_i32(w, (int32_t)m->morph_count);
    for (size_t i = 0; i < m->morph_count; i++) {
        const plush_pmx_morph *mo = &m->morphs[i];
        w_text(w, &mo->name);
        w_text(w, &mo->name_en);
        w_u8(w, mo->panel);
        w_u8(w, mo->kind);
        w_i32(w, (int32_t)mo->offset_count);
        for (uint32_t k = 0; k < mo->offset_count; k++)
            write_morph_offset(w, mo, k);
    }
    w_i32(w, (int32_t)m->display_frame_count);
    for (size_t i = 0; i < m->display_frame_count; i++) {
        const plush_pmx_display_frame *f = &m->display_frames[i];
        w_text(w, &f->name);
        w_text(w, &f->name_en);
        w_u8(w, f->special);
        w_i32(w, (int32_t)f->element_count);
        for (uint32_t k = 0; k < f->element_count; k++) {
            w_u8(w, f->elements[k].is_morph);
            w_index(w, f->elements[k].is_morph ? PLUSH_PMX_INDEX_MORPH : PLUSH_PMX_INDEX_BONE, f->elements[k].index);
        }
    }
}

static void write_physics(writer *w, const plush_pmx_model *m, bool as_21)
{
    w_i32(w, (int32_t)m->rigid_body_count);
    for (size_t i = 0; i < m->rigid_body_count; i++) {
        const plush_pmx_rigid_body *b = &m->rigid_bodies[i];
        w_text(w, &b->name);
        w_text(w, &b->name_en);
        w_index(w, PLUSH_PMX_INDEX_BONE, b->bone);
        w_u8(w, b->group);
        w_u16(w, b->mask);
        w_u8(w, b->shape);
        w_f32s(w, b->size, 3);
        w_f32s(w, b->position, 3);
        w_f32s(w, b->rotation, 3);
        float f[5] = {b->mass, b->linear_damping, b->angular_damping, b->restitution, b->friction};
        w_f32s(w, f, 5);
        w_u8(w, b->mode);
    }
    w_i32(w, (int32_t)m->joint_count);
    for (size_t i = 0; i < m->joint_count; i++) {
        const plush_pmx_joint *j = &m->joints[i];
        w_text(w, &j->name);
        w_text(w, &j->name_en);
        w_u8(w, j->type);
        w_index(w, PLUSH_PMX_INDEX_RIGID_BODY, j->body_a);
        w_index(w, PLUSH_PMX_INDEX_RIGID_BODY, j->body_b);
        w_f32s(w, j->position, 3);
        w_f32s(w, j->rotation, 3);
        w_f32s(w, j->linear_lower, 3);
        w_f32s(w, j->linear_upper, 3);
        w_f32s(w, j->angular_lower, 3);
        w_f32s(w, j->angular_upper, 3);
        w_f32s(w, j->spring_linear, 3);
        w_f32s(w, j->spring_angular, 3);
    }
    if (!as_21)
        return;
    w_i32(w, (int32_t)m->soft_body_count);
    for (size_t i = 0; i < m->soft_body_count; i++) {
        const plush_pmx_soft_body *s = &m->soft_bodies[i];
        w_text(w, &s->name);
        w_text(w, &s->name_en);
        w_u8(w, s->shape);
        w_index(w, PLUSH_PMX_INDEX_MATERIAL, s->material);
        w_u8(w, s->group);
        w_u16(w, s->mask);
        w_u8(w, s->flags);
        w_i32(w, s->blink_distance);
        w_i32(w, s->cluster_count);
        w_f32(w, s->total_mass);
        w_f32(w, s->margin);
        w_i32(w, s->aero_model);
        float cfg[PMX_SOFT_CONFIG_COUNT];
        pmx_soft_config_get(&s->config, cfg);
        w_f32s(w, cfg, PMX_SOFT_CONFIG_COUNT);
        w_i32(w, s->v_iterations);
        w_i32(w, s->p_iterations);
        w_i32(w, s->d_iterations);
        w_i32(w, s->c_iterations);
        w_f32(w, s->lst);
        w_f32(w, s->ast);
        w_f32(w, s->vst);
        w_i32(w, (int32_t)s->anchor_count);
        for (uint32_t a = 0; a < s->anchor_count; a++) {
            w_index(w, PLUSH_PMX_INDEX_RIGID_BODY, s->anchors[a].rigid_body);
            w_index(w, PLUSH_PMX_INDEX_VERTEX, s->anchors[a].vertex);
            w_u8(w, s->anchors[a].near_mode);
        }
        w_i32(w, (int32_t)s->pin_count);
        for (uint32_t p = 0; p < s->pin_count; p++)
            w_index(w, PLUSH_PMX_INDEX_VERTEX, s->pins[p]);
    }
}

/* Does an index size hold every index of a kind with count items? */
static bool size_fits(int kind, uint8_t size, size_t count)
{
    return size == 4 || plush_pmx_min_index_size(kind, count) <= size;
}

plush_status plush_pmx_write(const plush_pmx_model *model, const plush_pmx_write_options *options, plush_buf *out,
                             plush_diag *diag)
{
    plush_diag local = {0};
    if (!diag)
        diag = &local;
    if (plush__pmx_require_kept(model, diag) != PLUSH_OK) /* before the downgrade reads the vertices */
        return diag->status;
    const plush_pmx_write_options defaults = {0};
    const plush_pmx_write_options *o = options ? options : &defaults;
    bool as_21 = o->version == PLUSH_PMX_WRITE_21 || (o->version == PLUSH_PMX_WRITE_KEEP && pmx_is_21(model->version));
    if (o->version != PLUSH_PMX_WRITE_KEEP && o->version != PLUSH_PMX_WRITE_20 && o->version != PLUSH_PMX_WRITE_21)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "PMX version %d is not 20 or 21", o->version);

    /* A 2.0 target for a 2.1 model: refuse, or drop what 2.0 cannot hold into a shallow view. */
    plush_arena scratch = {0};
    plush_pmx_model view;
    const plush_pmx_model *m = model;
    if (!as_21 && pmx_is_21(model->version)) {
        plush_status st = plush__pmx_downgrade(model, o->lossy, &scratch, &view, diag);
        if (st != PLUSH_OK) {
            plush_arena_free(&scratch);
            return st;
        }
        m = &view;
    }
    plush_status st = plush__pmx_validate_as(m, as_21, diag);
    if (st != PLUSH_OK) {
        plush_arena_free(&scratch);
        return st;
    }
    writer w = {.out = out};
    w.enc = o->encoding == PLUSH_PMX_WRITE_UTF8    ? PLUSH_ENC_UTF8
            : o->encoding == PLUSH_PMX_WRITE_UTF16 ? PLUSH_ENC_UTF16LE
                                                   : (plush_encoding)m->encoding;
    w.same_encoding = w.enc == (plush_encoding)m->encoding;
    for (int k = 0; k < PLUSH_PMX_INDEX_KINDS; k++) {
        size_t count = plush__pmx_index_kind_count(m, k);
        uint8_t s = m->index_sizes[k];
        w.isz[k] = (o->minimal_indices || s == 0 || !size_fits(k, s, count)) ? plush_pmx_min_index_size(k, count) : s;
    }
    size_t start = out->size;
    write_header(&w, m, as_21 ? PMX_V21 : PMX_V20);
    write_vertices(&w, m);
    write_faces_textures_materials(&w, m);
    write_bones(&w, m);
    write_morphs_frames(&w, m);
    write_physics(&w, m, as_21);
    bool same_version = as_21 == pmx_is_21(model->version);
    if (m->trailing_size && same_version)
        w_bytes(&w, m->trailing, m->trailing_size);
    plush_arena_free(&scratch);
    if (out->failed) {
        out->failed = false;
        out->size = start;
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory writing the model");
    }
    return PLUSH_OK;
}

plush_status plush_pmx_write_file(const plush_pmx_model *model, const plush_pmx_write_options *options,
                                  const char *path, plush_diag *diag)
{
    if (diag && !diag->file)
        diag->file = path;
    plush_buf buf = {0};
    plush_status st = plush_pmx_write(model, options, &buf, diag);
    if (st == PLUSH_OK)
        st = plush_file_write_atomic(path, buf.data, buf.size, diag);
    plush_buf_free(&buf);
    return st;
}
