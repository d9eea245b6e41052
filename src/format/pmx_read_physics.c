/* PMX sections from the morphs on: morphs, display frames, rigid bodies, joints, soft bodies. */
#include "pmx_reader.h"

static size_t morph_offset_size(const plush_pmx_model *m, uint8_t kind)
{
    const uint8_t *s = m->index_sizes;
    switch (kind) {
    case PLUSH_PMX_MORPH_GROUP:
    case PLUSH_PMX_MORPH_FLIP: return s[PLUSH_PMX_INDEX_MORPH] + 4u;
    case PLUSH_PMX_MORPH_VERTEX: return s[PLUSH_PMX_INDEX_VERTEX] + 12u;
    case PLUSH_PMX_MORPH_BONE: return s[PLUSH_PMX_INDEX_BONE] + 28u;
    case PLUSH_PMX_MORPH_UV:
    case PLUSH_PMX_MORPH_UV1:
    case PLUSH_PMX_MORPH_UV2:
    case PLUSH_PMX_MORPH_UV3:
    case PLUSH_PMX_MORPH_UV4: return s[PLUSH_PMX_INDEX_VERTEX] + 16u;
    case PLUSH_PMX_MORPH_MATERIAL: return s[PLUSH_PMX_INDEX_MATERIAL] + 1u + 112u;
    case PLUSH_PMX_MORPH_IMPULSE: return s[PLUSH_PMX_INDEX_RIGID_BODY] + 1u + 24u;
    default: return 0;
    }
}

static void read_morph_offset(cursor *c, const plush_pmx_model *m, plush_pmx_morph *mo, size_t k)
{
    const uint8_t *s = m->index_sizes;
    switch (mo->kind) {
    case PLUSH_PMX_MORPH_GROUP:
    case PLUSH_PMX_MORPH_FLIP:
        mo->offsets.group[k].morph = idx_signed(c, s[PLUSH_PMX_INDEX_MORPH]);
        mo->offsets.group[k].weight = cur_f32(c);
        break;
    case PLUSH_PMX_MORPH_VERTEX:
        mo->offsets.vertex[k].vertex = idx_vertex(c, s[PLUSH_PMX_INDEX_VERTEX]);
        cur_floats(c, mo->offsets.vertex[k].offset, 3);
        break;
    case PLUSH_PMX_MORPH_BONE:
        mo->offsets.bone[k].bone = idx_signed(c, s[PLUSH_PMX_INDEX_BONE]);
        cur_floats(c, mo->offsets.bone[k].translation, 3);
        cur_floats(c, mo->offsets.bone[k].rotation, 4);
        break;
    case PLUSH_PMX_MORPH_MATERIAL: {
        plush_pmx_morph_material *o = &mo->offsets.material[k];
        o->material = idx_signed(c, s[PLUSH_PMX_INDEX_MATERIAL]);
        o->operation = cur_u8(c);
        cur_floats(c, o->diffuse, 4);
        cur_floats(c, o->specular, 3);
        o->specular_power = cur_f32(c);
        cur_floats(c, o->ambient, 3);
        cur_floats(c, o->edge_color, 4);
        o->edge_size = cur_f32(c);
        cur_floats(c, o->texture_tint, 4);
        cur_floats(c, o->sphere_tint, 4);
        cur_floats(c, o->toon_tint, 4);
        break;
    }
    case PLUSH_PMX_MORPH_IMPULSE: {
        plush_pmx_morph_impulse *o = &mo->offsets.impulse[k];
        o->rigid_body = idx_signed(c, s[PLUSH_PMX_INDEX_RIGID_BODY]);
        o->local = cur_u8(c);
        cur_floats(c, o->velocity, 3);
        cur_floats(c, o->torque, 3);
        break;
    }
    default: /* UV and additional UV1..4 */
        mo->offsets.uv[k].vertex = idx_vertex(c, s[PLUSH_PMX_INDEX_VERTEX]);
        cur_floats(c, mo->offsets.uv[k].offset, 4);
        break;
    }
}

static size_t morph_offset_struct_size(uint8_t kind)
{
    switch (kind) {
    case PLUSH_PMX_MORPH_GROUP:
    case PLUSH_PMX_MORPH_FLIP: return sizeof(plush_pmx_morph_group);
    case PLUSH_PMX_MORPH_VERTEX: return sizeof(plush_pmx_morph_vertex);
    case PLUSH_PMX_MORPH_BONE: return sizeof(plush_pmx_morph_bone);
    case PLUSH_PMX_MORPH_MATERIAL: return sizeof(plush_pmx_morph_material);
    case PLUSH_PMX_MORPH_IMPULSE: return sizeof(plush_pmx_morph_impulse);
    default: return sizeof(plush_pmx_morph_uv);
    }
}

/* Bytes of a morph offset before its floats: the index, and the operation or local flag. */
static size_t morph_head_size(const plush_pmx_model *m, uint8_t kind)
{
    const uint8_t *s = m->index_sizes;
    switch (kind) {
    case PLUSH_PMX_MORPH_GROUP:
    case PLUSH_PMX_MORPH_FLIP: return s[PLUSH_PMX_INDEX_MORPH];
    case PLUSH_PMX_MORPH_BONE: return s[PLUSH_PMX_INDEX_BONE];
    case PLUSH_PMX_MORPH_MATERIAL: return s[PLUSH_PMX_INDEX_MATERIAL] + 1u;
    case PLUSH_PMX_MORPH_IMPULSE: return s[PLUSH_PMX_INDEX_RIGID_BODY] + 1u;
    default: return s[PLUSH_PMX_INDEX_VERTEX];
    }
}

static uint32_t load_u32(const uint8_t *p)
{
    uint32_t u;
    memcpy(&u, p, 4);
    return u;
}

/* Whether the floats of count offsets (floats of them at p, then every rec bytes) are all finite; the
 * vertex morph's three written out, as they are most of a model's offsets. */
static bool offsets_finite(const uint8_t *p, size_t count, size_t rec, size_t floats)
{
    uint32_t bad = 0;
    if (floats == 3)
        for (size_t k = 0; k < count; k++, p += rec)
            bad |= PMX_NONFINITE_BIT(load_u32(p)) | PMX_NONFINITE_BIT(load_u32(p + 4)) | PMX_NONFINITE_BIT(load_u32(p + 8));
    else
        for (size_t k = 0; k < count; k++, p += rec)
            for (size_t j = 0; j < floats; j++)
                bad |= PMX_NONFINITE_BIT(load_u32(p + 4 * j));
    return !(bad & 0x80000000u);
}

/* The n bytes of floats of one morph offset, as stored at offset `at` of the file. */
static void check_morph_floats(reader *r, size_t at, size_t n)
{
    float v[32];
    size_t count = n / 4 < 32 ? n / 4 : 32;
    memcpy(v, r->c.base + at, count * 4);
    plush__pmx_rd_finite(r, v, count, at, "an offset value is not finite");
}

bool plush__pmx_rd_morphs(reader *r)
{
    plush_pmx_model *m = r->m;
    r->section = PMX_SEC_MORPH;
    size_t n;
    if (!plush__pmx_rd_section_start(r) || !plush__pmx_rd_count(r, "morph", 8 + 2 + 4, &n))
        return false;
    m->morph_count = n;
    if (!(m->morphs = plush__pmx_rd_alloc(r, n, sizeof *m->morphs)))
        return false;
    for (size_t i = 0; i < n; i++) {
        ITEM(r, PMX_SEC_MORPH, i);
        plush_pmx_morph *mo = &m->morphs[i];
        if (!plush__pmx_rd_text(r, &mo->name, "morph name") || !plush__pmx_rd_text(r, &mo->name_en, "English morph name"))
            return false;
        if (!plush__pmx_rd_need(r, 2, "the morph"))
            return false;
        mo->panel = cur_u8(&r->c);
        size_t at = r->c.pos;
        mo->kind = cur_u8(&r->c);
        size_t rec = morph_offset_size(m, mo->kind);
        if (!rec || (mo->kind >= PLUSH_PMX_MORPH_FLIP && !pmx_is_21(m->version)))
            return plush__pmx_rd_fail(r, PLUSH_E_FORMAT, at, "morph kind %d is not valid in PMX %s", mo->kind,
                        pmx_is_21(m->version) ? "2.1" : "2.0");
        size_t count;
        if (!plush__pmx_rd_count(r, "morph offset", rec, &count))
            return false;
        mo->offset_count = (uint32_t)count;
        void *offsets = plush__pmx_rd_alloc(r, count, morph_offset_struct_size(mo->kind));
        if (!offsets)
            return false;
        mo->offsets.group = offsets; /* every union member is a pointer to the same storage */
        const size_t first = r->c.pos, head = morph_head_size(m, mo->kind), floats = (rec - head) / 4;
        for (size_t k = 0; k < count; k++)
            read_morph_offset(&r->c, m, mo, k);
        /* the floats again, apart from the reading loop (which stays as tight as it was) */
        bool finite = r->find_section || offsets_finite(r->c.base + first + head, count, rec, floats);
        for (size_t k = 0; !finite && k < count; k++)
            if (!pmx_stored_finite(r->c.base + first + k * rec + head, floats))
                check_morph_floats(r, first + k * rec + head, rec - head);
    }
    return true;
}

bool plush__pmx_rd_frames(reader *r)
{
    plush_pmx_model *m = r->m;
    const uint8_t bs = m->index_sizes[PLUSH_PMX_INDEX_BONE], ms = m->index_sizes[PLUSH_PMX_INDEX_MORPH];
    r->section = PMX_SEC_FRAME;
    size_t n;
    if (!plush__pmx_rd_section_start(r) || !plush__pmx_rd_count(r, "display frame", 8 + 1 + 4, &n))
        return false;
    m->display_frame_count = n;
    if (!(m->display_frames = plush__pmx_rd_alloc(r, n, sizeof *m->display_frames)))
        return false;
    for (size_t i = 0; i < n; i++) {
        ITEM(r, PMX_SEC_FRAME, i);
        plush_pmx_display_frame *f = &m->display_frames[i];
        if (!plush__pmx_rd_text(r, &f->name, "frame name") || !plush__pmx_rd_text(r, &f->name_en, "English frame name") ||
            !plush__pmx_rd_need(r, 1, "the frame"))
            return false;
        f->special = cur_u8(&r->c);
        size_t count;
        if (!plush__pmx_rd_count(r, "frame element", 1u + (bs < ms ? bs : ms), &count))
            return false;
        f->element_count = (uint32_t)count;
        if (!(f->elements = plush__pmx_rd_alloc(r, count, sizeof *f->elements)))
            return false;
        for (size_t k = 0; k < count; k++) {
            if (!plush__pmx_rd_need(r, 1, "the frame element"))
                return false;
            size_t at = r->c.pos;
            uint8_t type = cur_u8(&r->c);
            if (type > 1)
                return plush__pmx_rd_fail(r, PLUSH_E_FORMAT, at, "element %zu: type %d is not 0 (bone) or 1 (morph)", k, type);
            if (!plush__pmx_rd_need(r, type ? ms : bs, "the frame element"))
                return false;
            f->elements[k].is_morph = type;
            f->elements[k].index = idx_signed(&r->c, type ? ms : bs);
        }
    }
    return true;
}

bool plush__pmx_rd_rigid_bodies(reader *r)
{
    plush_pmx_model *m = r->m;
    const uint8_t bs = m->index_sizes[PLUSH_PMX_INDEX_BONE];
    const size_t rec = bs + 1u + 2 + 1 + 36 + 20 + 1;
    r->section = PMX_SEC_RIGID;
    size_t n;
    if (!plush__pmx_rd_section_start(r) || !plush__pmx_rd_count(r, "rigid body", 8 + rec, &n))
        return false;
    m->rigid_body_count = n;
    if (!(m->rigid_bodies = plush__pmx_rd_alloc(r, n, sizeof *m->rigid_bodies)))
        return false;
    for (size_t i = 0; i < n; i++) {
        ITEM(r, PMX_SEC_RIGID, i);
        plush_pmx_rigid_body *b = &m->rigid_bodies[i];
        if (!plush__pmx_rd_text(r, &b->name, "rigid body name") || !plush__pmx_rd_text(r, &b->name_en, "English rigid body name") ||
            !plush__pmx_rd_need(r, rec, "the rigid body"))
            return false;
        b->bone = idx_signed(&r->c, bs);
        b->group = cur_u8(&r->c);
        b->mask = cur_u16(&r->c);
        b->shape = cur_u8(&r->c);
        size_t at = r->c.pos;
        cur_floats(&r->c, b->size, 3);
        cur_floats(&r->c, b->position, 3);
        cur_floats(&r->c, b->rotation, 3);
        b->mass = cur_f32(&r->c);
        b->linear_damping = cur_f32(&r->c);
        b->angular_damping = cur_f32(&r->c);
        b->restitution = cur_f32(&r->c);
        b->friction = cur_f32(&r->c);
        b->mode = cur_u8(&r->c);
        if (!r->find_section) {
            const float f[5] = {b->mass, b->linear_damping, b->angular_damping, b->restitution, b->friction};
            if (plush__pmx_rd_finite(r, b->size, 3, at, "size is not finite") &&
                plush__pmx_rd_finite(r, b->position, 3, at + 12, "position is not finite") &&
                plush__pmx_rd_finite(r, b->rotation, 3, at + 24, "rotation is not finite"))
                plush__pmx_rd_finite(r, f, 5, at + 36, "mass, damping, restitution or friction is not finite");
        }
    }
    return true;
}

bool plush__pmx_rd_joints(reader *r)
{
    plush_pmx_model *m = r->m;
    const uint8_t rs = m->index_sizes[PLUSH_PMX_INDEX_RIGID_BODY];
    const size_t rec = 1 + 2u * rs + 96;
    r->section = PMX_SEC_JOINT;
    size_t n;
    if (!plush__pmx_rd_section_start(r) || !plush__pmx_rd_count(r, "joint", 8 + rec, &n))
        return false;
    m->joint_count = n;
    if (!(m->joints = plush__pmx_rd_alloc(r, n, sizeof *m->joints)))
        return false;
    for (size_t i = 0; i < n; i++) {
        ITEM(r, PMX_SEC_JOINT, i);
        plush_pmx_joint *j = &m->joints[i];
        if (!plush__pmx_rd_text(r, &j->name, "joint name") || !plush__pmx_rd_text(r, &j->name_en, "English joint name") ||
            !plush__pmx_rd_need(r, rec, "the joint"))
            return false;
        size_t at = r->c.pos;
        j->type = cur_u8(&r->c);
        if (j->type > PLUSH_PMX_JOINT_HINGE || (j->type && !pmx_is_21(m->version)))
            return plush__pmx_rd_fail(r, PLUSH_E_FORMAT, at, "joint type %d is not valid in PMX %s", j->type,
                        pmx_is_21(m->version) ? "2.1" : "2.0");
        j->body_a = idx_signed(&r->c, rs);
        j->body_b = idx_signed(&r->c, rs);
        at = r->c.pos;
        cur_floats(&r->c, j->position, 3);
        cur_floats(&r->c, j->rotation, 3);
        cur_floats(&r->c, j->linear_lower, 3);
        cur_floats(&r->c, j->linear_upper, 3);
        cur_floats(&r->c, j->angular_lower, 3);
        cur_floats(&r->c, j->angular_upper, 3);
        cur_floats(&r->c, j->spring_linear, 3);
        cur_floats(&r->c, j->spring_angular, 3);
        if (!r->find_section) {
            float f[24];
            memcpy(f, r->c.base + at, sizeof f);
            if (plush__pmx_rd_finite(r, f, 6, at, "position or rotation is not finite"))
                if (plush__pmx_rd_finite(r, f + 6, 12, at + 24, "a limit is not finite"))
                    plush__pmx_rd_finite(r, f + 18, 6, at + 72, "a spring is not finite");
        }
    }
    return true;
}

bool plush__pmx_rd_soft_bodies(reader *r)
{
    plush_pmx_model *m = r->m;
    const uint8_t ms = m->index_sizes[PLUSH_PMX_INDEX_MATERIAL], rs = m->index_sizes[PLUSH_PMX_INDEX_RIGID_BODY],
                  vs = m->index_sizes[PLUSH_PMX_INDEX_VERTEX];
    /* shape, material, group, mask, flags, blink, clusters, mass, margin, aero, 18 config, 4 iterations, 3 material */
    const size_t rec = 1 + ms + 1 + 2 + 1 + 4 + 4 + 4 + 4 + 4 + 72 + 16 + 12u;
    r->section = PMX_SEC_SOFT;
    size_t n;
    if (!plush__pmx_rd_section_start(r) || !plush__pmx_rd_count(r, "soft body", 8 + rec + 8, &n))
        return false;
    m->soft_body_count = n;
    if (!(m->soft_bodies = plush__pmx_rd_alloc(r, n, sizeof *m->soft_bodies)))
        return false;
    for (size_t i = 0; i < n; i++) {
        ITEM(r, PMX_SEC_SOFT, i);
        plush_pmx_soft_body *s = &m->soft_bodies[i];
        if (!plush__pmx_rd_text(r, &s->name, "soft body name") || !plush__pmx_rd_text(r, &s->name_en, "English soft body name") ||
            !plush__pmx_rd_need(r, rec, "the soft body"))
            return false;
        s->shape = cur_u8(&r->c);
        s->material = idx_signed(&r->c, ms);
        s->group = cur_u8(&r->c);
        s->mask = cur_u16(&r->c);
        s->flags = cur_u8(&r->c);
        s->blink_distance = cur_i32(&r->c);
        s->cluster_count = cur_i32(&r->c);
        size_t at = r->c.pos;
        s->total_mass = cur_f32(&r->c);
        s->margin = cur_f32(&r->c);
        s->aero_model = cur_i32(&r->c);
        float cfg[PMX_SOFT_CONFIG_COUNT];
        cur_floats(&r->c, cfg, PMX_SOFT_CONFIG_COUNT);
        pmx_soft_config_set(&s->config, cfg);
        s->v_iterations = cur_i32(&r->c);
        s->p_iterations = cur_i32(&r->c);
        s->d_iterations = cur_i32(&r->c);
        s->c_iterations = cur_i32(&r->c);
        s->lst = cur_f32(&r->c);
        s->ast = cur_f32(&r->c);
        s->vst = cur_f32(&r->c);
        if (!r->find_section) {
            const float mass[2] = {s->total_mass, s->margin}, stiffness[3] = {s->lst, s->ast, s->vst};
            if (plush__pmx_rd_finite(r, mass, 2, at, "total mass or margin is not finite") &&
                plush__pmx_rd_finite(r, cfg, PMX_SOFT_CONFIG_COUNT, at + 12, "a config value is not finite"))
                plush__pmx_rd_finite(r, stiffness, 3, at + 12 + 72 + 16, "a material stiffness is not finite");
        }
        size_t count;
        if (!plush__pmx_rd_count(r, "soft body anchor", rs + vs + 1u, &count))
            return false;
        s->anchor_count = (uint32_t)count;
        if (!(s->anchors = plush__pmx_rd_alloc(r, count, sizeof *s->anchors)))
            return false;
        for (size_t a = 0; a < count; a++) {
            s->anchors[a].rigid_body = idx_signed(&r->c, rs);
            s->anchors[a].vertex = idx_vertex(&r->c, vs);
            s->anchors[a].near_mode = cur_u8(&r->c);
        }
        if (!plush__pmx_rd_count(r, "soft body pin", vs, &count))
            return false;
        s->pin_count = (uint32_t)count;
        if (!(s->pins = plush__pmx_rd_alloc(r, count, sizeof *s->pins)))
            return false;
        for (size_t p = 0; p < count; p++)
            s->pins[p] = idx_vertex(&r->c, vs);
    }
    return true;
}

/* Walks the whole file; false on the first failure (or when the locate target is reached). */
