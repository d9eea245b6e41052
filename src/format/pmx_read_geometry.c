/* PMX sections up to the bones: header, vertices, faces, textures, materials, bones. */
#include "pmx_reader.h"
#include "plush/sys/core.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

bool plush__pmx_rd_header(reader *r)
{
    plush_pmx_model *m = r->m;
    r->section = PMX_SEC_HEADER;
    r->index = -1;
    if (!plush__pmx_rd_need(r, 9, "the header"))
        return false;
    if (memcmp(cur_ptr(&r->c), "PMX ", 4) != 0)
        return plush__pmx_rd_fail(r, PLUSH_E_FORMAT, 0, "not a PMX file (magic is not \"PMX \")");
    cur_skip(&r->c, 4);
    m->version = cur_f32(&r->c);
    if (m->version != PMX_V20 && m->version != PMX_V21) {
        char v[32];
        snprintf(v, sizeof v, "%g", (double)m->version);
        return plush__pmx_rd_fail(r, PLUSH_E_VERSION, 4, "version %s is not 2.0 or 2.1", v);
    }
    size_t at = r->c.pos;
    uint8_t globals = cur_u8(&r->c);
    if (globals < 8)
        return plush__pmx_rd_fail(r, PLUSH_E_FORMAT, at, "header holds %d settings, PMX needs 8", globals);
    if (!plush__pmx_rd_need(r, globals, "the header settings"))
        return false;
    at = r->c.pos;
    uint8_t enc = cur_u8(&r->c);
    if (enc > 1)
        return plush__pmx_rd_fail(r, PLUSH_E_FORMAT, at, "text encoding %d is not 0 (UTF-16LE) or 1 (UTF-8)", enc);
    m->encoding = enc;
    m->additional_uv = cur_u8(&r->c);
    if (m->additional_uv > 4)
        return plush__pmx_rd_fail(r, PLUSH_E_FORMAT, at + 1, "additional UV count %d is not 0-4", m->additional_uv);
    static const char *const kinds[] = {"vertex", "texture", "material", "bone", "morph", "rigid body"};
    for (int k = 0; k < PLUSH_PMX_INDEX_KINDS; k++) {
        uint8_t s = cur_u8(&r->c);
        if (s != 1 && s != 2 && s != 4)
            return plush__pmx_rd_fail(r, PLUSH_E_FORMAT, at + 2 + (size_t)k, "%s index size %d is not 1, 2 or 4", kinds[k], s);
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
    return plush__pmx_rd_text(r, &m->name, "model name") && plush__pmx_rd_text(r, &m->name_en, "English model name") &&
           plush__pmx_rd_text(r, &m->comment, "comment") && plush__pmx_rd_text(r, &m->comment_en, "English comment");
}

/* Decodes the vertex at the cursor into every field of *v: additional UVs into uvs (4 * auv floats),
 * SDEF data into *sdef when the type has it. v->sdef is left at -1 for the caller; *type_at is the
 * offset of the weight type byte. */
static PMX_ALWAYS_INLINE bool read_vertex(reader *r, size_t auv, uint8_t bs, plush_pmx_vertex *v, float *uvs,
                                          plush_pmx_sdef *sdef, size_t *type_at)
{
    if (!plush__pmx_rd_need(r, 32 + 16 * auv + 1, "the vertex"))
        return false;
    cur_floats(&r->c, v->position, 3);
    cur_floats(&r->c, v->normal, 3);
    cur_floats(&r->c, v->uv, 2);
    if (auv)
        cur_floats(&r->c, uvs, 4 * auv);
    size_t at = r->c.pos;
    *type_at = at;
    v->weight_type = cur_u8(&r->c);
    v->sdef = -1;
    v->bones[1] = v->bones[2] = v->bones[3] = -1;
    v->weights[1] = v->weights[2] = v->weights[3] = 0.0f;
    switch (v->weight_type) {
    case PLUSH_PMX_BDEF1:
        if (!plush__pmx_rd_need(r, bs + 4u, "the BDEF1 weights"))
            return false;
        v->bones[0] = idx_signed(&r->c, bs);
        v->weights[0] = 1.0f;
        break;
    case PLUSH_PMX_BDEF2:
    case PLUSH_PMX_SDEF: {
        size_t extra = v->weight_type == PLUSH_PMX_SDEF ? 36 : 0;
        if (!plush__pmx_rd_need(r, 2u * bs + 4 + extra + 4, "the BDEF2/SDEF weights"))
            return false;
        v->bones[0] = idx_signed(&r->c, bs);
        v->bones[1] = idx_signed(&r->c, bs);
        v->weights[0] = cur_f32(&r->c);
        v->weights[1] = 1.0f - v->weights[0];
        if (extra) {
            cur_floats(&r->c, sdef->c, 3);
            cur_floats(&r->c, sdef->r0, 3);
            cur_floats(&r->c, sdef->r1, 3);
        }
        break;
    }
    case PLUSH_PMX_BDEF4:
    case PLUSH_PMX_QDEF:
        if (!plush__pmx_rd_need(r, 4u * bs + 16 + 4, "the BDEF4/QDEF weights"))
            return false;
        for (int k = 0; k < 4; k++)
            v->bones[k] = idx_signed(&r->c, bs);
        cur_floats(&r->c, v->weights, 4);
        break;
    default:
        return plush__pmx_rd_fail(r, PLUSH_E_FORMAT, at,
                           "weight type %d is not 0-4 (BDEF1, BDEF2, BDEF4, SDEF, QDEF); does the header's bone index "
                           "size %d match the data?",
                           v->weight_type, bs);
    }
    v->edge_scale = cur_f32(&r->c);
    return true;
}

/* A summary-only read keeps the weight-type histogram and the range of the bone indices. */
static void summarize_vertex(reader *r, const plush_pmx_vertex *v)
{
    r->m->summary.weight_types[v->weight_type]++; /* read_vertex admits 0..4 only */
    pmx_unkept *u = r->unkept;
    for (int k = 0; k < 4; k++) {
        if (v->bones[k] < u->bone_min)
            u->bone_min = v->bones[k];
        if (v->bones[k] > u->bone_max)
            u->bone_max = v->bones[k];
    }
}

/* The kept vertices (and their SDEF data, still in the reader's scratch array) without a closer look:
 * every float finite (exponent bits not all ones), every weight a fraction. */
#if defined(__GNUC__)
/* Four lanes at once (GCC and Clang vector extensions): the check costs a few instructions a vertex. */
typedef uint32_t pmx_u32x4 __attribute__((vector_size(16)));
typedef int32_t pmx_i32x4 __attribute__((vector_size(16)));
typedef float pmx_f32x4 __attribute__((vector_size(16)));
#endif

static bool kept_values_ok(const plush_pmx_model *m, const plush_pmx_sdef *sdefs)
{
    const float lo = -PMX_WEIGHT_SLACK, hi = 1 + PMX_WEIGHT_SLACK;
    bool ok = true;
#if defined(__GNUC__)
    const pmx_u32x4 exp = {0x7f800000u, 0x7f800000u, 0x7f800000u, 0x7f800000u},
                    one = {0x00800000u, 0x00800000u, 0x00800000u, 0x00800000u};
    const pmx_f32x4 lo4 = {lo, lo, lo, lo}, hi4 = {hi, hi, hi, hi};
    pmx_u32x4 bad = {0, 0, 0, 0};
    pmx_i32x4 in = {-1, -1, -1, -1};
    uint32_t edge = 0;
    for (size_t i = 0; i < m->vertex_count; i++) {
        const plush_pmx_vertex *v = &m->vertices[i];
        pmx_u32x4 a, b;
        pmx_f32x4 w;
        uint32_t e;
        memcpy(&a, v->position, 16); /* position, normal[0] */
        memcpy(&b, v->normal + 1, 16); /* normal[1..2], uv */
        memcpy(&w, v->weights, 16);
        memcpy(&e, &v->edge_scale, 4);
        bad |= ((a & exp) + one) | ((b & exp) + one);
        edge |= PMX_NONFINITE_BIT(e);
        in &= (w >= lo4) & (w <= hi4);
    }
    ok = !((bad[0] | bad[1] | bad[2] | bad[3] | edge) & 0x80000000u) && (in[0] & in[1] & in[2] & in[3]);
#else
    for (size_t i = 0; i < m->vertex_count && ok; i++) {
        const plush_pmx_vertex *v = &m->vertices[i];
        ok = pmx_stored_finite((const uint8_t *)v->position, 8) && pmx_stored_finite((const uint8_t *)&v->edge_scale, 1);
        for (int k = 0; k < 4; k++)
            ok = ok && v->weights[k] >= lo && v->weights[k] <= hi;
    }
#endif
    const float *uvs = m->additional_uvs ? m->additional_uvs[0] : NULL;
    return ok && pmx_stored_finite((const uint8_t *)uvs, uvs ? m->vertex_count * m->additional_uv * 4 : 0) &&
           pmx_stored_finite((const uint8_t *)sdefs, sdefs ? m->sdef_count * 9 : 0);
}

bool plush__pmx_rd_vertices(reader *r)
{
    plush_pmx_model *m = r->m;
    const size_t auv = m->additional_uv;
    const uint8_t bs = m->index_sizes[PLUSH_PMX_INDEX_BONE];
    const bool keep = !r->drop_geometry;
    r->section = PMX_SEC_VERTEX;
    size_t n;
    /* smallest vertex: 32 + 16 auv + type + one bone index + edge scale */
    if (!plush__pmx_rd_section_start(r) || !plush__pmx_rd_count(r, "vertex", 32 + 16 * auv + 1 + bs + 4, &n))
        return false;
    m->vertex_count = n;
    if (keep) {
        if (!(m->vertices = plush__pmx_rd_alloc(r, n, sizeof *m->vertices)))
            return false;
        if (auv && !(m->additional_uvs = plush__pmx_rd_alloc(r, n * auv, sizeof *m->additional_uvs)))
            return false;
    }
    if (r->unkept)
        r->unkept->vertex_start = r->c.pos;
    const size_t first = r->c.pos;
    bool values_ok = true; /* no call in the loop: a vertex with an odd value is found by a second walk */
    size_t sdef_cap = 0;
    int qdef_warned = 0;
    plush_pmx_sdef *sdefs = NULL;
    for (size_t i = 0; i < n; i++) {
        r->index = (int64_t)i;
        if (r->find_section && r->find_index == (int64_t)i && !strcmp(r->find_section, PMX_SEC_VERTEX)) {
            r->found_offset = (int64_t)r->c.pos;
            goto fail;
        }
        plush_pmx_vertex dropped;
        float dropped_uvs[4 * 4];
        plush_pmx_sdef sdef;
        plush_pmx_vertex *v = keep ? &m->vertices[i] : &dropped;
        size_t at, start = r->c.pos;
        float *uvs = keep && auv ? m->additional_uvs[i * auv] : dropped_uvs;
        if (!read_vertex(r, auv, bs, v, uvs, &sdef, &at))
            goto fail;
        if (!keep) /* a kept model's vertices are looked at after the loop, in one pass over the array */
            values_ok &= pmx_vertex_values_ok(r, v, start, auv);
        if (v->weight_type == PLUSH_PMX_SDEF) {
            if (keep) {
                if (m->sdef_count == sdef_cap) {
                    sdef_cap = sdef_cap ? sdef_cap * 2 : 256;
                    plush_pmx_sdef *grown = realloc(sdefs, sdef_cap * sizeof *sdefs);
                    if (!grown) {
                        plush__pmx_rd_fail(r, PLUSH_E_NOMEM, at, "out of memory for SDEF data");
                        goto fail;
                    }
                    sdefs = grown;
                }
                sdefs[m->sdef_count] = sdef;
            }
            v->sdef = (int32_t)m->sdef_count++;
        }
        if (v->weight_type == PLUSH_PMX_QDEF && !pmx_is_21(m->version) && !r->find_section && !qdef_warned++)
            plush_diag_warn(r->diag, (int64_t)at, r->section, r->index,
                            "QDEF is a PMX 2.1 weight type in a 2.0 file; kept as it is");
        if (r->unkept)
            summarize_vertex(r, v);
    }
    if (keep && !r->find_section)
        values_ok = kept_values_ok(m, sdefs);
    if (!values_ok && !r->find_section)
        plush__pmx_rd_check_vertices(r, first, n);
    if (keep && m->sdef_count && !r->find_section) {
        m->sdefs = plush__pmx_rd_alloc(r, m->sdef_count, sizeof *sdefs);
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

void plush__pmx_rd_check_vertices(reader *r, size_t first, size_t n)
{
    const size_t auv = r->m->additional_uv;
    const uint8_t bs = r->m->index_sizes[PLUSH_PMX_INDEX_BONE];
    reader w = *r; /* the same bytes again, on a cursor of its own; notes go to r's model and diag */
    w.c.pos = first;
    for (size_t i = 0; i < n; i++) {
        w.index = (int64_t)i;
        plush_pmx_vertex v;
        float uvs[4 * 4];
        plush_pmx_sdef sdef;
        size_t at, start = w.c.pos;
        if (!read_vertex(&w, auv, bs, &v, uvs, &sdef, &at))
            break; /* read once already: cannot happen */
        if (!pmx_vertex_values_ok(&w, &v, start, auv))
            plush__pmx_rd_check_vertex(&w, &v, uvs, auv, &sdef, start, at, bs);
    }
    r->issues = w.issues;
    r->index = (int64_t)n - 1;
}

bool plush__pmx_recheck_vertices(const pmx_unkept *u, const plush_pmx_model *m, pmx_vertex_check check, void *ctx,
                                 plush_diag *diag)
{
    plush_diag quiet = {0};
    reader r = {.diag = &quiet, .section = PMX_SEC_VERTEX, .drop_geometry = true};
    cur_init(&r.c, u->data, u->size);
    cur_skip(&r.c, u->vertex_start);
    int32_t sdefs = 0;
    for (size_t i = 0; i < m->vertex_count; i++) {
        r.index = (int64_t)i;
        plush_pmx_vertex v;
        float uvs[4 * 4];
        plush_pmx_sdef sdef;
        size_t at;
        /* The first walk read these bytes without fault; failing now means they are not the same. */
        if (!read_vertex(&r, m->additional_uv, m->index_sizes[PLUSH_PMX_INDEX_BONE], &v, uvs, &sdef, &at)) {
            plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, PMX_SEC_VERTEX, (int64_t)i, "vertex data changed while read");
            return false;
        }
        if (v.weight_type == PLUSH_PMX_SDEF)
            v.sdef = sdefs++;
        if (!check(ctx, &v, i))
            return false;
    }
    return true;
}

static uint32_t face_index(const uint8_t *p, uint8_t vs, size_t i)
{
    switch (vs) {
    case 1: return p[i];
    case 2: return (uint32_t)p[2 * i] | ((uint32_t)p[2 * i + 1] << 8);
    default: {
        uint32_t v;
        memcpy(&v, p + 4 * i, 4);
        return v;
    }
    }
}

bool plush__pmx_rd_faces(reader *r)
{
    plush_pmx_model *m = r->m;
    const uint8_t vs = m->index_sizes[PLUSH_PMX_INDEX_VERTEX];
    r->section = PMX_SEC_FACE;
    size_t n;
    if (!plush__pmx_rd_section_start(r) || !plush__pmx_rd_count(r, "face index", vs, &n))
        return false;
    size_t base = r->c.pos;
    if (r->find_section && !strcmp(r->find_section, PMX_SEC_FACE)) { /* items are fixed size: no walk needed */
        r->found_offset = (int64_t)(base + (size_t)r->find_index * vs);
        return false;
    }
    m->index_count = n;
    const uint8_t *p = cur_ptr(&r->c);
    if (r->drop_geometry) {
        /* The one face rule that needs the indices themselves, judged here while they pass. */
        for (size_t i = 0; r->unkept && i < n; i++) {
            uint32_t v = face_index(p, vs, i);
            if (v >= m->vertex_count) {
                r->unkept->bad_face = (int64_t)i;
                r->unkept->bad_face_vertex = v;
                break;
            }
        }
        cur_skip(&r->c, n * vs);
        return true;
    }
    if (!(m->indices = plush__pmx_rd_alloc(r, n, sizeof *m->indices)))
        return false;
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

bool plush__pmx_rd_textures(reader *r)
{
    plush_pmx_model *m = r->m;
    r->section = PMX_SEC_TEXTURE;
    size_t n;
    if (!plush__pmx_rd_section_start(r) || !plush__pmx_rd_count(r, "texture", 4, &n))
        return false;
    m->texture_count = n;
    if (!(m->textures = plush__pmx_rd_alloc(r, n, sizeof *m->textures)))
        return false;
    for (size_t i = 0; i < n; i++) {
        ITEM(r, PMX_SEC_TEXTURE, i);
        if (!plush__pmx_rd_text(r, &m->textures[i], "texture path"))
            return false;
    }
    return true;
}

bool plush__pmx_rd_materials(reader *r)
{
    plush_pmx_model *m = r->m;
    const uint8_t ts = m->index_sizes[PLUSH_PMX_INDEX_TEXTURE];
    r->section = PMX_SEC_MATERIAL;
    size_t n;
    if (!plush__pmx_rd_section_start(r) || !plush__pmx_rd_count(r, "material", 4 + 4 + 65 + 2u * ts + 2 + 1 + 4 + 4, &n))
        return false;
    m->material_count = n;
    if (!(m->materials = plush__pmx_rd_alloc(r, n, sizeof *m->materials)))
        return false;
    for (size_t i = 0; i < n; i++) {
        ITEM(r, PMX_SEC_MATERIAL, i);
        plush_pmx_material *mt = &m->materials[i];
        if (!plush__pmx_rd_text(r, &mt->name, "material name") || !plush__pmx_rd_text(r, &mt->name_en, "English material name"))
            return false;
        if (!plush__pmx_rd_need(r, 4 * 11 + 1 + 4 * 5 + 2u * ts + 2, "the material"))
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
            return plush__pmx_rd_fail(r, PLUSH_E_FORMAT, at, "toon flag %d is not 0 (texture) or 1 (shared)", mt->toon_shared);
        if (!plush__pmx_rd_need(r, mt->toon_shared ? 1u : ts, "the toon reference"))
            return false;
        mt->toon = mt->toon_shared ? (int32_t)cur_u8(&r->c) : idx_signed(&r->c, ts);
        if (!plush__pmx_rd_text(r, &mt->memo, "material memo") || !plush__pmx_rd_need(r, 4, "the material face count"))
            return false;
        mt->index_count = cur_i32(&r->c);
    }
    return true;
}

static bool read_ik(reader *r, plush_pmx_bone *b, uint8_t bs)
{
    if (!plush__pmx_rd_need(r, bs + 12u, "the IK settings"))
        return false;
    b->ik_target = idx_signed(&r->c, bs);
    b->ik_loop_count = cur_i32(&r->c);
    size_t angle_at = r->c.pos;
    b->ik_limit_angle = cur_f32(&r->c);
    if (!r->find_section)
        plush__pmx_rd_finite(r, &b->ik_limit_angle, 1, angle_at, "IK angle limit is not finite");
    size_t links;
    if (!plush__pmx_rd_count(r, "IK link", bs + 1u, &links))
        return false;
    b->ik_link_count = (uint32_t)links;
    if (!(b->ik_links = plush__pmx_rd_alloc(r, links, sizeof *b->ik_links)))
        return false;
    for (size_t k = 0; k < links; k++) {
        plush_pmx_ik_link *l = &b->ik_links[k];
        if (!plush__pmx_rd_need(r, bs + 1u, "the IK link"))
            return false;
        l->bone = idx_signed(&r->c, bs);
        size_t at = r->c.pos;
        l->has_limits = cur_u8(&r->c);
        if (l->has_limits > 1)
            return plush__pmx_rd_fail(r, PLUSH_E_FORMAT, at, "IK link %zu: limit flag %d is not 0 or 1", k, l->has_limits);
        if (l->has_limits) {
            if (!plush__pmx_rd_need(r, 24, "the IK link limits"))
                return false;
            cur_floats(&r->c, l->lower, 3);
            cur_floats(&r->c, l->upper, 3);
            if (!r->find_section && plush__pmx_rd_finite(r, l->lower, 3, r->c.pos - 24, "IK link limit is not finite"))
                plush__pmx_rd_finite(r, l->upper, 3, r->c.pos - 12, "IK link limit is not finite");
        }
    }
    return true;
}

static bool read_bones(reader *r, size_t n, uint8_t bs, size_t *parent_at);

bool plush__pmx_rd_bones(reader *r)
{
    plush_pmx_model *m = r->m;
    const uint8_t bs = m->index_sizes[PLUSH_PMX_INDEX_BONE];
    r->section = PMX_SEC_BONE;
    size_t n;
    if (!plush__pmx_rd_section_start(r) || !plush__pmx_rd_count(r, "bone", 8 + 12 + bs + 4 + 2 + bs, &n))
        return false;
    m->bone_count = n;
    if (!(m->bones = plush__pmx_rd_alloc(r, n, sizeof *m->bones)))
        return false;
    /* where each parent index lies, for a cycle's warning (a locate walk needs none) */
    size_t *parent_at = r->find_section ? NULL : malloc((n ? n : 1) * sizeof *parent_at);
    if (!r->find_section && !parent_at)
        return plush__pmx_rd_fail(r, PLUSH_E_NOMEM, r->c.pos, "out of memory for the bones");
    bool ok = read_bones(r, n, bs, parent_at);
    if (ok && parent_at)
        plush__pmx_rd_check_bone_cycles(r, parent_at);
    free(parent_at);
    return ok;
}

static bool read_bones(reader *r, size_t n, uint8_t bs, size_t *parent_at)
{
    plush_pmx_model *m = r->m;
    for (size_t i = 0; i < n; i++) {
        ITEM(r, PMX_SEC_BONE, i);
        plush_pmx_bone *b = &m->bones[i];
        if (!plush__pmx_rd_text(r, &b->name, "bone name") || !plush__pmx_rd_text(r, &b->name_en, "English bone name"))
            return false;
        if (!plush__pmx_rd_need(r, 12 + bs + 4 + 2u, "the bone"))
            return false;
        cur_floats(&r->c, b->position, 3);
        if (parent_at) {
            plush__pmx_rd_finite(r, b->position, 3, r->c.pos - 12, "position is not finite");
            parent_at[i] = r->c.pos;
        }
        b->parent = idx_signed(&r->c, bs);
        b->layer = cur_i32(&r->c);
        b->flags = cur_u16(&r->c);
        b->tail_bone = b->append_parent = b->ik_target = -1;
        if (b->flags & PLUSH_PMX_BONE_TAIL_IS_BONE) {
            if (!plush__pmx_rd_need(r, bs, "the tail bone"))
                return false;
            b->tail_bone = idx_signed(&r->c, bs);
        } else {
            if (!plush__pmx_rd_need(r, 12, "the tail offset"))
                return false;
            cur_floats(&r->c, b->tail_offset, 3);
            /* the tail only draws the bone in an editor: a warning, not an issue anything refuses */
            if (parent_at && !(isfinite(b->tail_offset[0]) && isfinite(b->tail_offset[1]) && isfinite(b->tail_offset[2])))
                plush_diag_warn(r->diag, (int64_t)r->c.pos - 12, r->section, r->index, "tail offset is not finite");
        }
        if (b->flags & (PLUSH_PMX_BONE_APPEND_ROTATE | PLUSH_PMX_BONE_APPEND_TRANSLATE)) {
            if (!plush__pmx_rd_need(r, bs + 4u, "the append parent"))
                return false;
            b->append_parent = idx_signed(&r->c, bs);
            b->append_ratio = cur_f32(&r->c);
            if (parent_at)
                plush__pmx_rd_finite(r, &b->append_ratio, 1, r->c.pos - 4, "append ratio is not finite");
        }
        if (b->flags & PLUSH_PMX_BONE_FIXED_AXIS) {
            if (!plush__pmx_rd_need(r, 12, "the fixed axis"))
                return false;
            cur_floats(&r->c, b->fixed_axis, 3);
            if (parent_at)
                plush__pmx_rd_finite(r, b->fixed_axis, 3, r->c.pos - 12, "fixed axis is not finite");
        }
        if (b->flags & PLUSH_PMX_BONE_LOCAL_AXES) {
            if (!plush__pmx_rd_need(r, 24, "the local axes"))
                return false;
            cur_floats(&r->c, b->local_x, 3);
            cur_floats(&r->c, b->local_z, 3);
            if (parent_at && plush__pmx_rd_finite(r, b->local_x, 3, r->c.pos - 24, "local axis is not finite"))
                plush__pmx_rd_finite(r, b->local_z, 3, r->c.pos - 12, "local axis is not finite");
        }
        if (b->flags & PLUSH_PMX_BONE_EXTERNAL_PARENT) {
            if (!plush__pmx_rd_need(r, 4, "the external parent key"))
                return false;
            b->external_key = cur_i32(&r->c);
        }
        if ((b->flags & PLUSH_PMX_BONE_IK) && !read_ik(r, b, bs))
            return false;
    }
    return true;
}

/* Bytes of one morph offset of a kind (0 for an unknown kind). */
