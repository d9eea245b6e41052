/* PMX 2.0 / 2.1 reader: one bounded cursor, arena allocation, counts checked before allocating.
 *
 * Only what decides the layout is checked here (sizes, counts, weight types, morph kinds, flags);
 * every index and value rule lives in pmx_validate.c. When validation fails, the file is walked a
 * second time to find the byte offset of the failing item, so the rules exist once. */
#include "cursor.h"
#include "pmx_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct reader {
    cursor c;
    plush_pmx_model *m;
    plush_diag *diag;
    const char *section;
    int64_t index;
    /* Locating: when set, the walk stops at the start of this item and records its offset. */
    const char *find_section;
    int64_t find_index;
    int64_t found_offset;
} reader;

/* Stops the walk when the locate target is reached. */
#define ITEM(r, sec, i)                                                                             \
    do {                                                                                            \
        (r)->section = (sec);                                                                       \
        (r)->index = (int64_t)(i);                                                                  \
        if ((r)->find_section && (r)->find_index == (int64_t)(i) && !strcmp((r)->find_section, sec)) { \
            (r)->found_offset = (int64_t)(r)->c.pos;                                                \
            return false;                                                                           \
        }                                                                                           \
    } while (0)

static bool fail(reader *r, plush_status st, size_t offset, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static bool fail(reader *r, plush_status st, size_t offset, const char *fmt, ...)
{
    if (r->find_section)
        return false;
    char what[PLUSH_DIAG_MESSAGE];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    (void)k;
    plush_diag_fail(r->diag, st, (int64_t)offset, r->section, r->index, "%s", what);
    return false;
}

/* Checks room for n bytes of `what`; a short file is PLUSH_E_TRUNCATED at the field's offset. */
static bool need(reader *r, size_t n, const char *what)
{
    if (cur_need(&r->c, n))
        return true;
    return fail(r, PLUSH_E_TRUNCATED, r->c.pos, "data ends inside %s: needs %zu bytes, %zu left", what, n,
                cur_left(&r->c));
}

static inline int32_t idx_signed(cursor *c, uint8_t size)
{
    switch (size) {
    case 1: return (int8_t)cur_u8(c);
    case 2: return (int16_t)cur_u16(c);
    default: return cur_i32(c);
    }
}

static inline int32_t idx_vertex(cursor *c, uint8_t size)
{
    switch (size) {
    case 1: return (int32_t)cur_u8(c);
    case 2: return (int32_t)cur_u16(c);
    default: return cur_i32(c);
    }
}

static bool read_text(reader *r, plush_str *out, const char *what)
{
    if (!need(r, 4, what))
        return false;
    size_t at = r->c.pos;
    int32_t len = cur_i32(&r->c);
    if (len < 0)
        return fail(r, PLUSH_E_FORMAT, at, "%s length %d is negative", what, (int)len);
    if ((size_t)len > cur_left(&r->c))
        return fail(r, PLUSH_E_TRUNCATED, at, "%s of %d bytes runs past the end (%zu left)", what, (int)len,
                    cur_left(&r->c));
    if (r->find_section) { /* locating: no need to decode */
        cur_skip(&r->c, (size_t)len);
        return true;
    }
    bool lossy = false;
    if (plush_text_decode(&r->m->arena, (plush_encoding)r->m->encoding, cur_ptr(&r->c), (size_t)len, out, &lossy) !=
        PLUSH_OK)
        return fail(r, PLUSH_E_NOMEM, at, "out of memory decoding %s", what);
    if (lossy)
        plush_diag_warn(r->diag, (int64_t)at, r->section, r->index, "%s is not valid %s; broken characters read as U+FFFD",
                        what, r->m->encoding == PLUSH_ENC_UTF8 ? "UTF-8" : "UTF-16LE");
    cur_skip(&r->c, (size_t)len);
    return true;
}

/* Starts a section (r->section set): no item yet; stops a locate walk aimed at the section itself. */
static bool section_start(reader *r)
{
    r->index = -1;
    if (r->find_section && r->find_index < 0 && !strcmp(r->find_section, r->section)) {
        r->found_offset = (int64_t)r->c.pos;
        return false;
    }
    return true;
}

/* Reads an i32 count and checks that count records of at least min_size bytes can follow. */
static bool read_count(reader *r, const char *what, size_t min_size, size_t *out)
{
    if (!need(r, 4, what))
        return false;
    size_t at = r->c.pos;
    int32_t n = cur_i32(&r->c);
    if (n < 0)
        return fail(r, PLUSH_E_FORMAT, at, "%s count %d is negative", what, (int)n);
    if (min_size && (size_t)n > cur_left(&r->c) / min_size)
        return fail(r, PLUSH_E_TRUNCATED, at, "%s count %d needs more bytes than the %zu left", what, (int)n,
                    cur_left(&r->c));
    *out = (size_t)n;
    return true;
}

static void *alloc_array(reader *r, size_t n, size_t size)
{
    void *p = plush_arena_array(&r->m->arena, n, size);
    if (!p)
        fail(r, PLUSH_E_NOMEM, r->c.pos, "out of memory for %s", r->section);
    return p;
}

static bool read_header(reader *r)
{
    plush_pmx_model *m = r->m;
    r->section = PMX_SEC_HEADER;
    r->index = -1;
    if (!need(r, 9, "the header"))
        return false;
    if (memcmp(cur_ptr(&r->c), "PMX ", 4) != 0)
        return fail(r, PLUSH_E_FORMAT, 0, "not a PMX file (magic is not \"PMX \")");
    cur_skip(&r->c, 4);
    m->version = cur_f32(&r->c);
    if (m->version != PMX_V20 && m->version != PMX_V21) {
        char v[32];
        snprintf(v, sizeof v, "%g", (double)m->version);
        return fail(r, PLUSH_E_VERSION, 4, "version %s is not 2.0 or 2.1", v);
    }
    size_t at = r->c.pos;
    uint8_t globals = cur_u8(&r->c);
    if (globals < 8)
        return fail(r, PLUSH_E_FORMAT, at, "header holds %d settings, PMX needs 8", globals);
    if (!need(r, globals, "the header settings"))
        return false;
    at = r->c.pos;
    uint8_t enc = cur_u8(&r->c);
    if (enc > 1)
        return fail(r, PLUSH_E_FORMAT, at, "text encoding %d is not 0 (UTF-16LE) or 1 (UTF-8)", enc);
    m->encoding = enc;
    m->additional_uv = cur_u8(&r->c);
    if (m->additional_uv > 4)
        return fail(r, PLUSH_E_FORMAT, at + 1, "additional UV count %d is not 0-4", m->additional_uv);
    static const char *const kinds[] = {"vertex", "texture", "material", "bone", "morph", "rigid body"};
    for (int k = 0; k < PLUSH_PMX_INDEX_KINDS; k++) {
        uint8_t s = cur_u8(&r->c);
        if (s != 1 && s != 2 && s != 4)
            return fail(r, PLUSH_E_FORMAT, at + 2 + (size_t)k, "%s index size %d is not 1, 2 or 4", kinds[k], s);
        m->index_sizes[k] = s;
    }
    m->header_extra_size = (uint8_t)(globals - 8);
    if (m->header_extra_size) {
        uint8_t *extra = r->find_section ? NULL : plush_arena_alloc(&m->arena, m->header_extra_size);
        if (extra)
            memcpy(extra, cur_ptr(&r->c), m->header_extra_size);
        m->header_extra = extra;
        cur_skip(&r->c, m->header_extra_size);
    }
    r->section = PMX_SEC_INFO;
    return read_text(r, &m->name, "model name") && read_text(r, &m->name_en, "English model name") &&
           read_text(r, &m->comment, "comment") && read_text(r, &m->comment_en, "English comment");
}

static bool read_vertices(reader *r)
{
    plush_pmx_model *m = r->m;
    const size_t auv = m->additional_uv;
    const uint8_t bs = m->index_sizes[PLUSH_PMX_INDEX_BONE];
    r->section = PMX_SEC_VERTEX;
    size_t n;
    /* smallest vertex: 32 + 16 auv + type + one bone index + edge scale */
    if (!section_start(r) || !read_count(r, "vertex", 32 + 16 * auv + 1 + bs + 4, &n))
        return false;
    m->vertex_count = n;
    m->vertices = alloc_array(r, n, sizeof *m->vertices);
    if (!m->vertices)
        return false;
    if (auv && !(m->additional_uvs = alloc_array(r, n * auv, sizeof *m->additional_uvs)))
        return false;
    size_t sdef_cap = 0;
    int qdef_warned = 0;
    plush_pmx_sdef *sdefs = NULL;
    const size_t fixed = 32 + 16 * auv + 1;
    for (size_t i = 0; i < n; i++) {
        r->index = (int64_t)i;
        if (r->find_section && r->find_index == (int64_t)i && !strcmp(r->find_section, PMX_SEC_VERTEX)) {
            r->found_offset = (int64_t)r->c.pos;
            goto fail;
        }
        plush_pmx_vertex *v = &m->vertices[i];
        if (!need(r, fixed, "the vertex"))
            goto fail;
        cur_floats(&r->c, v->position, 3);
        cur_floats(&r->c, v->normal, 3);
        cur_floats(&r->c, v->uv, 2);
        if (auv)
            cur_floats(&r->c, m->additional_uvs[i * auv], 4 * auv);
        size_t at = r->c.pos;
        v->weight_type = cur_u8(&r->c);
        v->sdef = -1;
        v->bones[1] = v->bones[2] = v->bones[3] = -1;
        switch (v->weight_type) {
        case PLUSH_PMX_BDEF1:
            if (!need(r, bs + 4u, "the BDEF1 weights"))
                goto fail;
            v->bones[0] = idx_signed(&r->c, bs);
            v->weights[0] = 1.0f;
            break;
        case PLUSH_PMX_BDEF2:
        case PLUSH_PMX_SDEF: {
            size_t extra = v->weight_type == PLUSH_PMX_SDEF ? 36 : 0;
            if (!need(r, 2u * bs + 4 + extra + 4, "the BDEF2/SDEF weights"))
                goto fail;
            v->bones[0] = idx_signed(&r->c, bs);
            v->bones[1] = idx_signed(&r->c, bs);
            v->weights[0] = cur_f32(&r->c);
            v->weights[1] = 1.0f - v->weights[0];
            if (extra) {
                if (m->sdef_count == sdef_cap) {
                    sdef_cap = sdef_cap ? sdef_cap * 2 : 256;
                    plush_pmx_sdef *grown = realloc(sdefs, sdef_cap * sizeof *sdefs);
                    if (!grown) {
                        fail(r, PLUSH_E_NOMEM, at, "out of memory for SDEF data");
                        goto fail;
                    }
                    sdefs = grown;
                }
                plush_pmx_sdef *s = &sdefs[m->sdef_count];
                cur_floats(&r->c, s->c, 3);
                cur_floats(&r->c, s->r0, 3);
                cur_floats(&r->c, s->r1, 3);
                v->sdef = (int32_t)m->sdef_count++;
            }
            break;
        }
        case PLUSH_PMX_BDEF4:
        case PLUSH_PMX_QDEF:
            if (!need(r, 4u * bs + 16 + 4, "the BDEF4/QDEF weights"))
                goto fail;
            for (int k = 0; k < 4; k++)
                v->bones[k] = idx_signed(&r->c, bs);
            cur_floats(&r->c, v->weights, 4);
            break;
        default:
            fail(r, PLUSH_E_FORMAT, at,
                 "weight type %d is not 0-4 (BDEF1, BDEF2, BDEF4, SDEF, QDEF); does the header's bone index size %d "
                 "match the data?",
                 v->weight_type, bs);
            goto fail;
        }
        if (v->weight_type == PLUSH_PMX_QDEF && !pmx_is_21(m->version) && !r->find_section && !qdef_warned++)
            plush_diag_warn(r->diag, (int64_t)at, r->section, r->index,
                            "QDEF is a PMX 2.1 weight type in a 2.0 file; kept as it is");
        v->edge_scale = cur_f32(&r->c);
    }
    if (m->sdef_count && !r->find_section) {
        m->sdefs = alloc_array(r, m->sdef_count, sizeof *sdefs);
        if (!m->sdefs)
            goto fail;
        memcpy(m->sdefs, sdefs, m->sdef_count * sizeof *sdefs);
    }
    free(sdefs);
    return true;
fail:
    free(sdefs);
    return false;
}

static bool read_faces(reader *r)
{
    plush_pmx_model *m = r->m;
    const uint8_t vs = m->index_sizes[PLUSH_PMX_INDEX_VERTEX];
    r->section = PMX_SEC_FACE;
    size_t n;
    if (!section_start(r) || !read_count(r, "face index", vs, &n))
        return false;
    size_t base = r->c.pos;
    if (r->find_section && !strcmp(r->find_section, PMX_SEC_FACE)) { /* items are fixed size: no walk needed */
        r->found_offset = (int64_t)(base + (size_t)r->find_index * vs);
        return false;
    }
    m->index_count = n;
    if (!(m->indices = alloc_array(r, n, sizeof *m->indices)))
        return false;
    const uint8_t *p = cur_ptr(&r->c);
    uint32_t *out = m->indices;
    if (vs == 1) {
        for (size_t i = 0; i < n; i++)
            out[i] = p[i];
    } else if (vs == 2) {
        for (size_t i = 0; i < n; i++)
            out[i] = (uint32_t)p[2 * i] | ((uint32_t)p[2 * i + 1] << 8);
    } else {
        memcpy(out, p, n * 4);
    }
    cur_skip(&r->c, n * vs);
    return true;
}

static bool read_textures(reader *r)
{
    plush_pmx_model *m = r->m;
    r->section = PMX_SEC_TEXTURE;
    size_t n;
    if (!section_start(r) || !read_count(r, "texture", 4, &n))
        return false;
    m->texture_count = n;
    if (!(m->textures = alloc_array(r, n, sizeof *m->textures)))
        return false;
    for (size_t i = 0; i < n; i++) {
        ITEM(r, PMX_SEC_TEXTURE, i);
        if (!read_text(r, &m->textures[i], "texture path"))
            return false;
    }
    return true;
}

static bool read_materials(reader *r)
{
    plush_pmx_model *m = r->m;
    const uint8_t ts = m->index_sizes[PLUSH_PMX_INDEX_TEXTURE];
    r->section = PMX_SEC_MATERIAL;
    size_t n;
    if (!section_start(r) || !read_count(r, "material", 4 + 4 + 65 + 2u * ts + 2 + 1 + 4 + 4, &n))
        return false;
    m->material_count = n;
    if (!(m->materials = alloc_array(r, n, sizeof *m->materials)))
        return false;
    for (size_t i = 0; i < n; i++) {
        ITEM(r, PMX_SEC_MATERIAL, i);
        plush_pmx_material *mt = &m->materials[i];
        if (!read_text(r, &mt->name, "material name") || !read_text(r, &mt->name_en, "English material name"))
            return false;
        if (!need(r, 4 * 11 + 1 + 4 * 5 + 2u * ts + 2, "the material"))
            return false;
        cur_floats(&r->c, mt->diffuse, 4);
        cur_floats(&r->c, mt->specular, 3);
        mt->specular_power = cur_f32(&r->c);
        cur_floats(&r->c, mt->ambient, 3);
        mt->flags = cur_u8(&r->c);
        cur_floats(&r->c, mt->edge_color, 4);
        mt->edge_size = cur_f32(&r->c);
        mt->texture = idx_signed(&r->c, ts);
        mt->sphere_texture = idx_signed(&r->c, ts);
        mt->sphere_mode = cur_u8(&r->c);
        size_t at = r->c.pos;
        mt->toon_shared = cur_u8(&r->c);
        if (mt->toon_shared > 1)
            return fail(r, PLUSH_E_FORMAT, at, "toon flag %d is not 0 (texture) or 1 (shared)", mt->toon_shared);
        if (!need(r, mt->toon_shared ? 1u : ts, "the toon reference"))
            return false;
        mt->toon = mt->toon_shared ? (int32_t)cur_u8(&r->c) : idx_signed(&r->c, ts);
        if (!read_text(r, &mt->memo, "material memo") || !need(r, 4, "the material face count"))
            return false;
        mt->index_count = cur_i32(&r->c);
    }
    return true;
}

static bool read_ik(reader *r, plush_pmx_bone *b, uint8_t bs)
{
    if (!need(r, bs + 12u, "the IK settings"))
        return false;
    b->ik_target = idx_signed(&r->c, bs);
    b->ik_loop_count = cur_i32(&r->c);
    b->ik_limit_angle = cur_f32(&r->c);
    size_t links;
    if (!read_count(r, "IK link", bs + 1u, &links))
        return false;
    b->ik_link_count = (uint32_t)links;
    if (!(b->ik_links = alloc_array(r, links, sizeof *b->ik_links)))
        return false;
    for (size_t k = 0; k < links; k++) {
        plush_pmx_ik_link *l = &b->ik_links[k];
        if (!need(r, bs + 1u, "the IK link"))
            return false;
        l->bone = idx_signed(&r->c, bs);
        size_t at = r->c.pos;
        l->has_limits = cur_u8(&r->c);
        if (l->has_limits > 1)
            return fail(r, PLUSH_E_FORMAT, at, "IK link %zu: limit flag %d is not 0 or 1", k, l->has_limits);
        if (l->has_limits) {
            if (!need(r, 24, "the IK link limits"))
                return false;
            cur_floats(&r->c, l->lower, 3);
            cur_floats(&r->c, l->upper, 3);
        }
    }
    return true;
}

static bool read_bones(reader *r)
{
    plush_pmx_model *m = r->m;
    const uint8_t bs = m->index_sizes[PLUSH_PMX_INDEX_BONE];
    r->section = PMX_SEC_BONE;
    size_t n;
    if (!section_start(r) || !read_count(r, "bone", 8 + 12 + bs + 4 + 2 + bs, &n))
        return false;
    m->bone_count = n;
    if (!(m->bones = alloc_array(r, n, sizeof *m->bones)))
        return false;
    for (size_t i = 0; i < n; i++) {
        ITEM(r, PMX_SEC_BONE, i);
        plush_pmx_bone *b = &m->bones[i];
        if (!read_text(r, &b->name, "bone name") || !read_text(r, &b->name_en, "English bone name"))
            return false;
        if (!need(r, 12 + bs + 4 + 2u, "the bone"))
            return false;
        cur_floats(&r->c, b->position, 3);
        b->parent = idx_signed(&r->c, bs);
        b->layer = cur_i32(&r->c);
        b->flags = cur_u16(&r->c);
        b->tail_bone = b->append_parent = b->ik_target = -1;
        if (b->flags & PLUSH_PMX_BONE_TAIL_IS_BONE) {
            if (!need(r, bs, "the tail bone"))
                return false;
            b->tail_bone = idx_signed(&r->c, bs);
        } else {
            if (!need(r, 12, "the tail offset"))
                return false;
            cur_floats(&r->c, b->tail_offset, 3);
        }
        if (b->flags & (PLUSH_PMX_BONE_APPEND_ROTATE | PLUSH_PMX_BONE_APPEND_TRANSLATE)) {
            if (!need(r, bs + 4u, "the append parent"))
                return false;
            b->append_parent = idx_signed(&r->c, bs);
            b->append_ratio = cur_f32(&r->c);
        }
        if (b->flags & PLUSH_PMX_BONE_FIXED_AXIS) {
            if (!need(r, 12, "the fixed axis"))
                return false;
            cur_floats(&r->c, b->fixed_axis, 3);
        }
        if (b->flags & PLUSH_PMX_BONE_LOCAL_AXES) {
            if (!need(r, 24, "the local axes"))
                return false;
            cur_floats(&r->c, b->local_x, 3);
            cur_floats(&r->c, b->local_z, 3);
        }
        if (b->flags & PLUSH_PMX_BONE_EXTERNAL_PARENT) {
            if (!need(r, 4, "the external parent key"))
                return false;
            b->external_key = cur_i32(&r->c);
        }
        if ((b->flags & PLUSH_PMX_BONE_IK) && !read_ik(r, b, bs))
            return false;
    }
    return true;
}

/* Bytes of one morph offset of a kind (0 for an unknown kind). */
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

static bool read_morphs(reader *r)
{
    plush_pmx_model *m = r->m;
    r->section = PMX_SEC_MORPH;
    size_t n;
    if (!section_start(r) || !read_count(r, "morph", 8 + 2 + 4, &n))
        return false;
    m->morph_count = n;
    if (!(m->morphs = alloc_array(r, n, sizeof *m->morphs)))
        return false;
    for (size_t i = 0; i < n; i++) {
        ITEM(r, PMX_SEC_MORPH, i);
        plush_pmx_morph *mo = &m->morphs[i];
        if (!read_text(r, &mo->name, "morph name") || !read_text(r, &mo->name_en, "English morph name"))
            return false;
        if (!need(r, 2, "the morph"))
            return false;
        mo->panel = cur_u8(&r->c);
        size_t at = r->c.pos;
        mo->kind = cur_u8(&r->c);
        size_t rec = morph_offset_size(m, mo->kind);
        if (!rec || (mo->kind >= PLUSH_PMX_MORPH_FLIP && !pmx_is_21(m->version)))
            return fail(r, PLUSH_E_FORMAT, at, "morph kind %d is not valid in PMX %s", mo->kind,
                        pmx_is_21(m->version) ? "2.1" : "2.0");
        size_t count;
        if (!read_count(r, "morph offset", rec, &count))
            return false;
        mo->offset_count = (uint32_t)count;
        void *offsets = alloc_array(r, count, morph_offset_struct_size(mo->kind));
        if (!offsets)
            return false;
        mo->offsets.group = offsets; /* every union member is a pointer to the same storage */
        for (size_t k = 0; k < count; k++)
            read_morph_offset(&r->c, m, mo, k);
    }
    return true;
}

static bool read_frames(reader *r)
{
    plush_pmx_model *m = r->m;
    const uint8_t bs = m->index_sizes[PLUSH_PMX_INDEX_BONE], ms = m->index_sizes[PLUSH_PMX_INDEX_MORPH];
    r->section = PMX_SEC_FRAME;
    size_t n;
    if (!section_start(r) || !read_count(r, "display frame", 8 + 1 + 4, &n))
        return false;
    m->display_frame_count = n;
    if (!(m->display_frames = alloc_array(r, n, sizeof *m->display_frames)))
        return false;
    for (size_t i = 0; i < n; i++) {
        ITEM(r, PMX_SEC_FRAME, i);
        plush_pmx_display_frame *f = &m->display_frames[i];
        if (!read_text(r, &f->name, "frame name") || !read_text(r, &f->name_en, "English frame name") ||
            !need(r, 1, "the frame"))
            return false;
        f->special = cur_u8(&r->c);
        size_t count;
        if (!read_count(r, "frame element", 1u + (bs < ms ? bs : ms), &count))
            return false;
        f->element_count = (uint32_t)count;
        if (!(f->elements = alloc_array(r, count, sizeof *f->elements)))
            return false;
        for (size_t k = 0; k < count; k++) {
            if (!need(r, 1, "the frame element"))
                return false;
            size_t at = r->c.pos;
            uint8_t type = cur_u8(&r->c);
            if (type > 1)
                return fail(r, PLUSH_E_FORMAT, at, "element %zu: type %d is not 0 (bone) or 1 (morph)", k, type);
            if (!need(r, type ? ms : bs, "the frame element"))
                return false;
            f->elements[k].is_morph = type;
            f->elements[k].index = idx_signed(&r->c, type ? ms : bs);
        }
    }
    return true;
}

static bool read_rigid_bodies(reader *r)
{
    plush_pmx_model *m = r->m;
    const uint8_t bs = m->index_sizes[PLUSH_PMX_INDEX_BONE];
    const size_t rec = bs + 1u + 2 + 1 + 36 + 20 + 1;
    r->section = PMX_SEC_RIGID;
    size_t n;
    if (!section_start(r) || !read_count(r, "rigid body", 8 + rec, &n))
        return false;
    m->rigid_body_count = n;
    if (!(m->rigid_bodies = alloc_array(r, n, sizeof *m->rigid_bodies)))
        return false;
    for (size_t i = 0; i < n; i++) {
        ITEM(r, PMX_SEC_RIGID, i);
        plush_pmx_rigid_body *b = &m->rigid_bodies[i];
        if (!read_text(r, &b->name, "rigid body name") || !read_text(r, &b->name_en, "English rigid body name") ||
            !need(r, rec, "the rigid body"))
            return false;
        b->bone = idx_signed(&r->c, bs);
        b->group = cur_u8(&r->c);
        b->mask = cur_u16(&r->c);
        b->shape = cur_u8(&r->c);
        cur_floats(&r->c, b->size, 3);
        cur_floats(&r->c, b->position, 3);
        cur_floats(&r->c, b->rotation, 3);
        b->mass = cur_f32(&r->c);
        b->linear_damping = cur_f32(&r->c);
        b->angular_damping = cur_f32(&r->c);
        b->restitution = cur_f32(&r->c);
        b->friction = cur_f32(&r->c);
        b->mode = cur_u8(&r->c);
    }
    return true;
}

static bool read_joints(reader *r)
{
    plush_pmx_model *m = r->m;
    const uint8_t rs = m->index_sizes[PLUSH_PMX_INDEX_RIGID_BODY];
    const size_t rec = 1 + 2u * rs + 96;
    r->section = PMX_SEC_JOINT;
    size_t n;
    if (!section_start(r) || !read_count(r, "joint", 8 + rec, &n))
        return false;
    m->joint_count = n;
    if (!(m->joints = alloc_array(r, n, sizeof *m->joints)))
        return false;
    for (size_t i = 0; i < n; i++) {
        ITEM(r, PMX_SEC_JOINT, i);
        plush_pmx_joint *j = &m->joints[i];
        if (!read_text(r, &j->name, "joint name") || !read_text(r, &j->name_en, "English joint name") ||
            !need(r, rec, "the joint"))
            return false;
        size_t at = r->c.pos;
        j->type = cur_u8(&r->c);
        if (j->type > PLUSH_PMX_JOINT_HINGE || (j->type && !pmx_is_21(m->version)))
            return fail(r, PLUSH_E_FORMAT, at, "joint type %d is not valid in PMX %s", j->type,
                        pmx_is_21(m->version) ? "2.1" : "2.0");
        j->body_a = idx_signed(&r->c, rs);
        j->body_b = idx_signed(&r->c, rs);
        cur_floats(&r->c, j->position, 3);
        cur_floats(&r->c, j->rotation, 3);
        cur_floats(&r->c, j->linear_lower, 3);
        cur_floats(&r->c, j->linear_upper, 3);
        cur_floats(&r->c, j->angular_lower, 3);
        cur_floats(&r->c, j->angular_upper, 3);
        cur_floats(&r->c, j->spring_linear, 3);
        cur_floats(&r->c, j->spring_angular, 3);
    }
    return true;
}

static bool read_soft_bodies(reader *r)
{
    plush_pmx_model *m = r->m;
    const uint8_t ms = m->index_sizes[PLUSH_PMX_INDEX_MATERIAL], rs = m->index_sizes[PLUSH_PMX_INDEX_RIGID_BODY],
                  vs = m->index_sizes[PLUSH_PMX_INDEX_VERTEX];
    /* shape, material, group, mask, flags, blink, clusters, mass, margin, aero, 18 config, 4 iterations, 3 material */
    const size_t rec = 1 + ms + 1 + 2 + 1 + 4 + 4 + 4 + 4 + 4 + 72 + 16 + 12u;
    r->section = PMX_SEC_SOFT;
    size_t n;
    if (!section_start(r) || !read_count(r, "soft body", 8 + rec + 8, &n))
        return false;
    m->soft_body_count = n;
    if (!(m->soft_bodies = alloc_array(r, n, sizeof *m->soft_bodies)))
        return false;
    for (size_t i = 0; i < n; i++) {
        ITEM(r, PMX_SEC_SOFT, i);
        plush_pmx_soft_body *s = &m->soft_bodies[i];
        if (!read_text(r, &s->name, "soft body name") || !read_text(r, &s->name_en, "English soft body name") ||
            !need(r, rec, "the soft body"))
            return false;
        s->shape = cur_u8(&r->c);
        s->material = idx_signed(&r->c, ms);
        s->group = cur_u8(&r->c);
        s->mask = cur_u16(&r->c);
        s->flags = cur_u8(&r->c);
        s->blink_distance = cur_i32(&r->c);
        s->cluster_count = cur_i32(&r->c);
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
        size_t count;
        if (!read_count(r, "soft body anchor", rs + vs + 1u, &count))
            return false;
        s->anchor_count = (uint32_t)count;
        if (!(s->anchors = alloc_array(r, count, sizeof *s->anchors)))
            return false;
        for (size_t a = 0; a < count; a++) {
            s->anchors[a].rigid_body = idx_signed(&r->c, rs);
            s->anchors[a].vertex = idx_vertex(&r->c, vs);
            s->anchors[a].near_mode = cur_u8(&r->c);
        }
        if (!read_count(r, "soft body pin", vs, &count))
            return false;
        s->pin_count = (uint32_t)count;
        if (!(s->pins = alloc_array(r, count, sizeof *s->pins)))
            return false;
        for (size_t p = 0; p < count; p++)
            s->pins[p] = idx_vertex(&r->c, vs);
    }
    return true;
}

/* Walks the whole file; false on the first failure (or when the locate target is reached). */
static bool walk(reader *r)
{
    if (!read_header(r) || !read_vertices(r) || !read_faces(r) || !read_textures(r) || !read_materials(r) ||
        !read_bones(r) || !read_morphs(r) || !read_frames(r) || !read_rigid_bodies(r) || !read_joints(r))
        return false;
    if (pmx_is_21(r->m->version) && !read_soft_bodies(r))
        return false;
    return true;
}

/* Byte offset where item `index` of `section` starts, by walking the file again. */
static int64_t locate(const uint8_t *data, size_t size, const char *section, int64_t index)
{
    plush_pmx_model *scratch = plush_pmx_create();
    if (!scratch)
        return -1;
    plush_diag quiet = {0};
    reader r = {.m = scratch, .diag = &quiet, .find_section = section, .find_index = index, .found_offset = -1};
    cur_init(&r.c, data, size);
    walk(&r);
    plush_pmx_free(scratch);
    return r.found_offset;
}

plush_status plush_pmx_read(const uint8_t *data, size_t size, const plush_pmx_read_options *options,
                            plush_pmx_model **out, plush_diag *diag)
{
    plush_diag local = {0};
    if (!diag)
        diag = &local;
    *out = NULL;
    plush_pmx_model *m = plush_pmx_create();
    if (!m)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    /* One arena block sized from the file keeps the model in a few large allocations. */
    m->arena.block_size = size / 2 + 4096 < 64 * 1024 ? 64 * 1024 : size / 2 + 4096;
    reader r = {.m = m, .diag = diag};
    cur_init(&r.c, data, size);
    if (!walk(&r)) {
        if (diag->status == PLUSH_OK) /* a failure always leaves a diagnostic */
            plush_diag_fail(diag, PLUSH_E_FORMAT, (int64_t)r.c.pos, r.section, r.index, "unreadable data");
        plush_pmx_free(m);
        return diag->status;
    }
    if (r.c.pos < size) {
        m->trailing_size = size - r.c.pos;
        uint8_t *t = plush_arena_alloc(&m->arena, m->trailing_size);
        if (!t) {
            plush_pmx_free(m);
            return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        }
        memcpy(t, data + r.c.pos, m->trailing_size);
        m->trailing = t;
        plush_diag_warn(diag, (int64_t)r.c.pos, NULL, -1, "%zu bytes after the last section are kept as they are",
                        m->trailing_size);
    }
    if (!(options && options->skip_validation)) {
        plush_status st = pmx_validate_as(m, pmx_is_21(m->version), diag);
        if (st != PLUSH_OK) {
            if (diag->section)
                diag->offset = locate(data, size, diag->section, diag->index);
            plush_pmx_free(m);
            return st;
        }
    }
    *out = m;
    return PLUSH_OK;
}

plush_status plush_pmx_read_file(const char *path, const plush_pmx_read_options *options, plush_pmx_model **out,
                                 plush_diag *diag)
{
    *out = NULL;
    if (diag && !diag->file)
        diag->file = path;
    uint8_t *data;
    size_t size;
    plush_status st = plush_file_read(path, &data, &size, diag);
    if (st != PLUSH_OK)
        return st;
    st = plush_pmx_read(data, size, options, out, diag);
    free(data);
    return st;
}
