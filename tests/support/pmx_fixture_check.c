/* PMX fixtures: field-by-field comparison, library calls that must succeed, byte helpers. */
#include "pmx_fixture.h"
#include "plush/sys/core.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* ---- comparing ---------------------------------------------------------------------------------- */

typedef struct cmp {
    char *why;
    size_t cap;
    char where[96];
} cmp;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static bool differ(cmp *c, const char *fmt, ...)
{
    if (!c->why || !c->cap)
        return false;
    int k = snprintf(c->why, c->cap, "%s", c->where);
    if (k < 0 || (size_t)k >= c->cap)
        return false;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why + k, c->cap - (size_t)k, fmt, ap);
    va_end(ap);
    return false;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void at(cmp *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->where, sizeof c->where, fmt, ap);
    va_end(ap);
}

static bool same_i(cmp *c, const char *field, long long a, long long b)
{
    return a == b || differ(c, "%s %lld != %lld", field, a, b);
}

static bool same_f(cmp *c, const char *field, const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof(float)) != 0)
            return differ(c, "%s[%zu] %.9g != %.9g", field, i, (double)a[i], (double)b[i]);
    return true;
}

static bool same_str(cmp *c, const char *field, const plush_str *a, const plush_str *b)
{
    if (a->len != b->len || (a->len && memcmp(a->s, b->s, a->len) != 0))
        return differ(c, "%s \"%.*s\" != \"%.*s\"", field, (int)a->len, a->s ? a->s : "", (int)b->len,
                      b->s ? b->s : "");
    if (b->s && b->s[b->len] != '\0')
        return differ(c, "%s is not NUL-terminated", field);
    if (a->raw_len != b->raw_len || (a->raw_len && memcmp(a->raw, b->raw, a->raw_len) != 0))
        return differ(c, "%s raw bytes differ (%u vs %u bytes)", field, a->raw_len, b->raw_len);
    return true;
}

#define SAME_I(f) \
    if (!same_i(c, #f, (long long)x->f, (long long)y->f)) return false
#define SAME_F(f) \
    if (!same_f(c, #f, &x->f, &y->f, 1)) return false
#define SAME_FV(f) \
    if (!same_f(c, #f, x->f, y->f, sizeof x->f / sizeof x->f[0])) return false
#define SAME_S(f) \
    if (!same_str(c, #f, &x->f, &y->f)) return false

static bool same_vertex(cmp *c, const plush_pmx_vertex *x, const plush_pmx_vertex *y)
{
    SAME_FV(position);
    SAME_FV(normal);
    SAME_FV(uv);
    SAME_I(weight_type);
    for (int k = 0; k < 4; k++)
        if (!same_i(c, "bones[k]", x->bones[k], y->bones[k]))
            return false;
    SAME_FV(weights);
    SAME_F(edge_scale);
    SAME_I(sdef);
    return true;
}

static bool same_material(cmp *c, const plush_pmx_material *x, const plush_pmx_material *y)
{
    SAME_S(name);
    SAME_S(name_en);
    SAME_FV(diffuse);
    SAME_FV(specular);
    SAME_F(specular_power);
    SAME_FV(ambient);
    SAME_I(flags);
    SAME_FV(edge_color);
    SAME_F(edge_size);
    SAME_I(texture);
    SAME_I(sphere_texture);
    SAME_I(sphere_mode);
    SAME_I(toon_shared);
    SAME_I(toon);
    SAME_S(memo);
    SAME_I(index_count);
    return true;
}

static bool same_bone(cmp *c, const plush_pmx_bone *x, const plush_pmx_bone *y)
{
    SAME_S(name);
    SAME_S(name_en);
    SAME_FV(position);
    SAME_I(parent);
    SAME_I(layer);
    SAME_I(flags);
    SAME_I(tail_bone);
    SAME_FV(tail_offset);
    SAME_I(append_parent);
    SAME_F(append_ratio);
    SAME_FV(fixed_axis);
    SAME_FV(local_x);
    SAME_FV(local_z);
    SAME_I(external_key);
    SAME_I(ik_target);
    SAME_I(ik_loop_count);
    SAME_F(ik_limit_angle);
    SAME_I(ik_link_count);
    for (uint32_t i = 0; i < x->ik_link_count; i++) {
        const plush_pmx_ik_link *a = &x->ik_links[i], *b = &y->ik_links[i];
        if (!same_i(c, "ik_links[].bone", a->bone, b->bone) ||
            !same_i(c, "ik_links[].has_limits", a->has_limits, b->has_limits) ||
            !same_f(c, "ik_links[].lower", a->lower, b->lower, 3) ||
            !same_f(c, "ik_links[].upper", a->upper, b->upper, 3))
            return false;
    }
    return true;
}

static bool same_morph_offset(cmp *c, uint8_t kind, const plush_pmx_morph *mx, const plush_pmx_morph *my, uint32_t i)
{
    switch (kind) {
    case PLUSH_PMX_MORPH_GROUP:
    case PLUSH_PMX_MORPH_FLIP: {
        const plush_pmx_morph_group *x = &mx->offsets.group[i], *y = &my->offsets.group[i];
        SAME_I(morph);
        SAME_F(weight);
        return true;
    }
    case PLUSH_PMX_MORPH_VERTEX: {
        const plush_pmx_morph_vertex *x = &mx->offsets.vertex[i], *y = &my->offsets.vertex[i];
        SAME_I(vertex);
        SAME_FV(offset);
        return true;
    }
    case PLUSH_PMX_MORPH_BONE: {
        const plush_pmx_morph_bone *x = &mx->offsets.bone[i], *y = &my->offsets.bone[i];
        SAME_I(bone);
        SAME_FV(translation);
        SAME_FV(rotation);
        return true;
    }
    case PLUSH_PMX_MORPH_MATERIAL: {
        const plush_pmx_morph_material *x = &mx->offsets.material[i], *y = &my->offsets.material[i];
        SAME_I(material);
        SAME_I(operation);
        SAME_FV(diffuse);
        SAME_FV(specular);
        SAME_F(specular_power);
        SAME_FV(ambient);
        SAME_FV(edge_color);
        SAME_F(edge_size);
        SAME_FV(texture_tint);
        SAME_FV(sphere_tint);
        SAME_FV(toon_tint);
        return true;
    }
    case PLUSH_PMX_MORPH_IMPULSE: {
        const plush_pmx_morph_impulse *x = &mx->offsets.impulse[i], *y = &my->offsets.impulse[i];
        SAME_I(rigid_body);
        SAME_I(local);
        SAME_FV(velocity);
        SAME_FV(torque);
        return true;
    }
    case PLUSH_PMX_MORPH_UV:
    case PLUSH_PMX_MORPH_UV1:
    case PLUSH_PMX_MORPH_UV2:
    case PLUSH_PMX_MORPH_UV3:
    case PLUSH_PMX_MORPH_UV4: {
        const plush_pmx_morph_uv *x = &mx->offsets.uv[i], *y = &my->offsets.uv[i];
        SAME_I(vertex);
        SAME_FV(offset);
        return true;
    }
    default:
        return differ(c, "unknown morph kind %u", kind);
    }
}

static bool same_morph(cmp *c, size_t index, const plush_pmx_morph *x, const plush_pmx_morph *y)
{
    SAME_S(name);
    SAME_S(name_en);
    SAME_I(panel);
    SAME_I(kind);
    SAME_I(offset_count);
    for (uint32_t i = 0; i < x->offset_count; i++) {
        at(c, "morph %zu (\"%.*s\") offset %u: ", index, (int)x->name.len, x->name.s ? x->name.s : "", i);
        if (!same_morph_offset(c, x->kind, x, y, i))
            return false;
    }
    return true;
}

static bool same_frame(cmp *c, const plush_pmx_display_frame *x, const plush_pmx_display_frame *y)
{
    SAME_S(name);
    SAME_S(name_en);
    SAME_I(special);
    SAME_I(element_count);
    for (uint32_t i = 0; i < x->element_count; i++)
        if (!same_i(c, "elements[].is_morph", x->elements[i].is_morph, y->elements[i].is_morph) ||
            !same_i(c, "elements[].index", x->elements[i].index, y->elements[i].index))
            return false;
    return true;
}

static bool same_rigid(cmp *c, const plush_pmx_rigid_body *x, const plush_pmx_rigid_body *y)
{
    SAME_S(name);
    SAME_S(name_en);
    SAME_I(bone);
    SAME_I(group);
    SAME_I(mask);
    SAME_I(shape);
    SAME_FV(size);
    SAME_FV(position);
    SAME_FV(rotation);
    SAME_F(mass);
    SAME_F(linear_damping);
    SAME_F(angular_damping);
    SAME_F(restitution);
    SAME_F(friction);
    SAME_I(mode);
    return true;
}

static bool same_joint(cmp *c, const plush_pmx_joint *x, const plush_pmx_joint *y)
{
    SAME_S(name);
    SAME_S(name_en);
    SAME_I(type);
    SAME_I(body_a);
    SAME_I(body_b);
    SAME_FV(position);
    SAME_FV(rotation);
    SAME_FV(linear_lower);
    SAME_FV(linear_upper);
    SAME_FV(angular_lower);
    SAME_FV(angular_upper);
    SAME_FV(spring_linear);
    SAME_FV(spring_angular);
    return true;
}

static bool same_soft_config(cmp *c, const plush_pmx_soft_config *x, const plush_pmx_soft_config *y)
{
    SAME_F(vcf);
    SAME_F(dp);
    SAME_F(dg);
    SAME_F(lf);
    SAME_F(pr);
    SAME_F(vc);
    SAME_F(df);
    SAME_F(mt);
    SAME_F(chr);
    SAME_F(khr);
    SAME_F(shr);
    SAME_F(ahr);
    SAME_F(srhr_cl);
    SAME_F(skhr_cl);
    SAME_F(sshr_cl);
    SAME_F(sr_splt_cl);
    SAME_F(sk_splt_cl);
    SAME_F(ss_splt_cl);
    return true;
}

static bool same_soft(cmp *c, const plush_pmx_soft_body *x, const plush_pmx_soft_body *y)
{
    SAME_S(name);
    SAME_S(name_en);
    SAME_I(shape);
    SAME_I(material);
    SAME_I(group);
    SAME_I(mask);
    SAME_I(flags);
    SAME_I(blink_distance);
    SAME_I(cluster_count);
    SAME_F(total_mass);
    SAME_F(margin);
    SAME_I(aero_model);
    if (!same_soft_config(c, &x->config, &y->config))
        return false;
    SAME_I(v_iterations);
    SAME_I(p_iterations);
    SAME_I(d_iterations);
    SAME_I(c_iterations);
    SAME_F(lst);
    SAME_F(ast);
    SAME_F(vst);
    SAME_I(anchor_count);
    for (uint32_t i = 0; i < x->anchor_count; i++)
        if (!same_i(c, "anchors[].rigid_body", x->anchors[i].rigid_body, y->anchors[i].rigid_body) ||
            !same_i(c, "anchors[].vertex", x->anchors[i].vertex, y->anchors[i].vertex) ||
            !same_i(c, "anchors[].near_mode", x->anchors[i].near_mode, y->anchors[i].near_mode))
            return false;
    SAME_I(pin_count);
    for (uint32_t i = 0; i < x->pin_count; i++)
        if (!same_i(c, "pins[]", x->pins[i], y->pins[i]))
            return false;
    return true;
}

static bool same_bytes(cmp *c, const char *field, const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
    if (na != nb)
        return differ(c, "%s size %zu != %zu", field, na, nb);
    if (na && memcmp(a, b, na) != 0)
        return differ(c, "%s bytes differ", field);
    return true;
}

static const char *name_of(const plush_str *s) { return s->s ? s->s : ""; }

#define EACH(count, array, what, fn)                                                          \
    do {                                                                                      \
        SAME_I(count);                                                                        \
        for (size_t i_ = 0; i_ < x->count; i_++) {                                            \
            at(c, what " %zu (\"%s\"): ", i_, name_of(&x->array[i_].name));                   \
            if (!fn(c, &x->array[i_], &y->array[i_]))                                         \
                return false;                                                                 \
        }                                                                                     \
        at(c, "%s", "");                                                                      \
    } while (0)

static bool same_model(cmp *c, const plush_pmx_model *x, const plush_pmx_model *y, unsigned what)
{
    at(c, "%s", "header: ");
    if (what & PMX_FX_CMP_VERSION)
        SAME_F(version);
    if (what & PMX_FX_CMP_ENCODING)
        SAME_I(encoding);
    if (what & PMX_FX_CMP_INDEX_SIZES)
        for (int k = 0; k < PLUSH_PMX_INDEX_KINDS; k++)
            if (!same_i(c, "index_sizes[k]", x->index_sizes[k], y->index_sizes[k]))
                return false;
    SAME_I(additional_uv);
    if (!same_bytes(c, "header_extra", x->header_extra, x->header_extra_size, y->header_extra, y->header_extra_size))
        return false;
    SAME_S(name);
    SAME_S(name_en);
    SAME_S(comment);
    SAME_S(comment_en);

    SAME_I(vertex_count);
    for (size_t i = 0; i < x->vertex_count; i++) {
        at(c, "vertex %zu: ", i);
        if (!same_vertex(c, &x->vertices[i], &y->vertices[i]))
            return false;
        if (x->additional_uv && !same_f(c, "additional_uvs", x->additional_uvs[i * x->additional_uv],
                                        y->additional_uvs[i * x->additional_uv], 4u * x->additional_uv))
            return false;
    }
    at(c, "%s", "");
    SAME_I(sdef_count);
    for (size_t i = 0; i < x->sdef_count; i++) {
        at(c, "sdef %zu: ", i);
        if (!same_f(c, "c", x->sdefs[i].c, y->sdefs[i].c, 3) || !same_f(c, "r0", x->sdefs[i].r0, y->sdefs[i].r0, 3) ||
            !same_f(c, "r1", x->sdefs[i].r1, y->sdefs[i].r1, 3))
            return false;
    }
    at(c, "%s", "");
    SAME_I(index_count);
    for (size_t i = 0; i < x->index_count; i++)
        if (x->indices[i] != y->indices[i])
            return differ(c, "face index %zu: %u != %u", i, x->indices[i], y->indices[i]);
    SAME_I(texture_count);
    for (size_t i = 0; i < x->texture_count; i++) {
        at(c, "texture %zu: ", i);
        if (!same_str(c, "path", &x->textures[i], &y->textures[i]))
            return false;
    }
    EACH(material_count, materials, "material", same_material);
    EACH(bone_count, bones, "bone", same_bone);
    SAME_I(morph_count);
    for (size_t i = 0; i < x->morph_count; i++) {
        at(c, "morph %zu (\"%s\"): ", i, name_of(&x->morphs[i].name));
        if (!same_morph(c, i, &x->morphs[i], &y->morphs[i]))
            return false;
    }
    at(c, "%s", "");
    EACH(display_frame_count, display_frames, "display frame", same_frame);
    EACH(rigid_body_count, rigid_bodies, "rigid body", same_rigid);
    EACH(joint_count, joints, "joint", same_joint);
    EACH(soft_body_count, soft_bodies, "soft body", same_soft);
    return same_bytes(c, "trailing", x->trailing, x->trailing_size, y->trailing, y->trailing_size);
}

bool pmx_fx_same(const plush_pmx_model *want, const plush_pmx_model *got, unsigned what, char *why, size_t cap)
{
    cmp c = {.why = why, .cap = cap};
    if (why && cap)
        why[0] = '\0';
    if (!want || !got)
        return want == got || differ(&c, "%s", "one model is NULL");
    return same_model(&c, want, got, what);
}

void pmx_fx_assert_same_at(const plush_pmx_model *want, const plush_pmx_model *got, unsigned what, const char *file,
                           int line)
{
    char why[512];
    if (!pmx_fx_same(want, got, what, why, sizeof why)) {
        print_error("models differ: %s\n", why);
        _fail(file, line);
    }
}

/* ---- library calls that must succeed ----------------------------------------------------------- */

plush_diag pmx_fx_diag(void)
{
    plush_diag d;
    memset(&d, 0, sizeof d);
    plush_diag_reset(&d);
    return d;
}

static void print_diag(const char *what, const plush_diag *d)
{
    char line[512];
    plush_diag_format(d, line, sizeof line);
    print_error("%s failed: %s (status %d, section %s, index %lld, offset %lld)\n", what, line, (int)d->status,
                d->section ? d->section : "-", (long long)d->index, (long long)d->offset);
}

void pmx_fx_ok(plush_status st, const plush_diag *d)
{
    if (st != PLUSH_OK) {
        char line[600];
        plush_diag_format(d, line, sizeof line);
        fail_msg("%s", line);
    }
}

plush_buf pmx_fx_write_ok(const plush_pmx_model *m, const plush_pmx_write_options *options, plush_diag *diag_out)
{
    plush_buf out = {0};
    plush_diag d = pmx_fx_diag();
    plush_status st = plush_pmx_write(m, options, &out, &d);
    if (st != PLUSH_OK)
        print_diag("plush_pmx_write", &d);
    assert_int_equal(st, PLUSH_OK);
    assert_true(out.size > 0);
    if (diag_out)
        *diag_out = d;
    return out;
}

plush_pmx_model *pmx_fx_read_ok(const uint8_t *data, size_t size, plush_diag *diag_out)
{
    uint8_t *copy = pmx_fx_copy(data, size);
    plush_pmx_model *m = NULL;
    plush_diag d = pmx_fx_diag();
    plush_status st = plush_pmx_read(copy, size, NULL, &m, &d);
    free(copy); /* a read model must not point into the caller's bytes */
    if (st != PLUSH_OK)
        print_diag("plush_pmx_read", &d);
    assert_int_equal(st, PLUSH_OK);
    assert_non_null(m);
    if (diag_out)
        *diag_out = d;
    return m;
}

plush_pmx_model *pmx_fx_roundtrip(const plush_pmx_model *m, const plush_pmx_write_options *options, plush_buf *bytes)
{
    plush_buf first = pmx_fx_write_ok(m, options, NULL);
    plush_diag rd;
    plush_pmx_model *back = pmx_fx_read_ok(first.data, first.size, &rd);
    assert_int_equal(rd.warning_count, 0);

    unsigned what = 0;
    if (!options || options->version == PLUSH_PMX_WRITE_KEEP)
        what |= PMX_FX_CMP_VERSION;
    if (!options || options->encoding == 0)
        what |= PMX_FX_CMP_ENCODING;
    pmx_fx_assert_same(m, back, what);

    plush_buf second = pmx_fx_write_ok(back, NULL, NULL);
    assert_int_equal(second.size, first.size);
    assert_memory_equal(second.data, first.data, first.size);
    plush_buf_free(&second);
    if (bytes)
        *bytes = first;
    else
        plush_buf_free(&first);
    return back;
}

/* ---- bytes ------------------------------------------------------------------------------------- */

size_t pmx_fx_find_unique(const uint8_t *hay, size_t n, const void *needle, size_t k)
{
    size_t found = SIZE_MAX;
    for (size_t i = 0; k <= n && i <= n - k; i++)
        if (memcmp(hay + i, needle, k) == 0) {
            assert_true(found == SIZE_MAX); /* the pattern must be unique */
            found = i;
        }
    assert_true(found != SIZE_MAX);
    return found;
}

void pmx_fx_put_i32(uint8_t *at, int32_t v) { memcpy(at, &v, 4); }
void pmx_fx_put_f32(uint8_t *at, float v) { memcpy(at, &v, 4); }
int32_t pmx_fx_get_i32(const uint8_t *at)
{
    int32_t v;
    memcpy(&v, at, 4);
    return v;
}

uint8_t *pmx_fx_copy(const uint8_t *data, size_t n)
{
    uint8_t *p = malloc(n ? n : 1);
    assert_non_null(p);
    if (n)
        memcpy(p, data, n);
    return p;
}
