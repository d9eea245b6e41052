/* PMX module, proved on fixtures built in code: every field of every element survives
 * write -> read -> write byte for byte, in both versions, both encodings and every index size;
 * the bytes match an independent reference encoder; broken text, version rules, validation, truncated
 * and hostile files fail (or warn) the way the header promises. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>

#include "plush/pmx.h"
#include "plush/sys/core.h"
#include "plush/sys/pmx.h"
#include "support/pmx_fixture.h"

#define TEDDY "\xF0\x9F\xA7\xB8"
#define REPLACEMENT "\xEF\xBF\xBD"

enum { HDR_SIZE_BYTE = 8, HDR_ENCODING = 9, HDR_AUV = 10, HDR_INDEX_SIZES = 11 };

static const char *const kind_names[PLUSH_PMX_INDEX_KINDS] = {"vertex", "texture", "material",
                                                              "bone", "morph", "rigid body"};

static plush_pmx_model sentinel_model;

static void print_diag(const char *what, const plush_diag *d)
{
    print_message("%s: status %d (%s), section %s, index %lld, offset %lld: %s\n", what, (int)d->status,
                  plush_status_text(d->status), d->section ? d->section : "(none)", (long long)d->index,
                  (long long)d->offset, d->message);
}

static void weight_histogram(const plush_pmx_model *m, size_t out[PLUSH_PMX_QDEF + 1])
{
    memset(out, 0, (PLUSH_PMX_QDEF + 1) * sizeof *out);
    for (size_t i = 0; i < m->vertex_count; i++) {
        assert_true(m->vertices[i].weight_type <= PLUSH_PMX_QDEF);
        out[m->vertices[i].weight_type]++;
    }
}

static bool same_str(const plush_str *a, const plush_str *b)
{
    return a->len == b->len && (a->len == 0 || memcmp(a->s, b->s, a->len) == 0);
}

/* The same bytes read summary-only reach the same verdict as the full read: on success the same
 * counts, names and weight-type histogram with no geometry kept; on failure the same diagnostic
 * (status, section, item, byte offset, message) and the same warnings. */
static void expect_same_summary(const uint8_t *data, size_t size, const plush_pmx_read_options *options,
                                const plush_pmx_model *full, const plush_diag *fd)
{
    plush_pmx_read_options so = options ? *options : (plush_pmx_read_options){0};
    so.summary_only = true;
    uint8_t *copy = pmx_fx_copy(data, size);
    plush_diag d = pmx_fx_diag();
    plush_pmx_model *m = &sentinel_model;
    plush_status st = plush_pmx_read(copy, size, &so, &m, &d);
    free(copy);
    bool same = st == fd->status && d.status == fd->status && d.offset == fd->offset && d.index == fd->index &&
                (d.section == fd->section || (d.section && fd->section && !strcmp(d.section, fd->section))) &&
                !strcmp(d.message, fd->message) && d.warning_count == fd->warning_count;
    for (uint32_t w = 0; same && w < d.warning_count && w < PLUSH_DIAG_KEPT_WARNINGS; w++)
        same = !strcmp(d.warnings[w], fd->warnings[w]);
    if (!same) {
        print_diag("full read", fd);
        print_diag("summary-only read", &d);
        fail();
    }
    if (st != PLUSH_OK) {
        assert_null(m);
        return;
    }
    assert_non_null(m);
    assert_true(m->summary_only && !full->summary_only);
    assert_null(m->vertices);
    assert_null(m->additional_uvs);
    assert_null(m->sdefs);
    assert_null(m->indices);
    assert_true(m->version == full->version);
    assert_int_equal(m->encoding, full->encoding);
    assert_int_equal(m->additional_uv, full->additional_uv);
    assert_memory_equal(m->index_sizes, full->index_sizes, PLUSH_PMX_INDEX_KINDS);
    assert_true(same_str(&m->name, &full->name) && same_str(&m->name_en, &full->name_en) &&
                same_str(&m->comment, &full->comment) && same_str(&m->comment_en, &full->comment_en));
    assert_int_equal(m->vertex_count, full->vertex_count);
    assert_int_equal(m->sdef_count, full->sdef_count);
    assert_int_equal(m->index_count, full->index_count);
    assert_int_equal(m->texture_count, full->texture_count);
    assert_int_equal(m->material_count, full->material_count);
    assert_int_equal(m->bone_count, full->bone_count);
    assert_int_equal(m->morph_count, full->morph_count);
    assert_int_equal(m->display_frame_count, full->display_frame_count);
    assert_int_equal(m->rigid_body_count, full->rigid_body_count);
    assert_int_equal(m->joint_count, full->joint_count);
    assert_int_equal(m->soft_body_count, full->soft_body_count);
    assert_int_equal(m->trailing_size, full->trailing_size);
    size_t hist[PLUSH_PMX_QDEF + 1];
    weight_histogram(full, hist);
    assert_memory_equal(m->summary.weight_types, hist, sizeof hist);
    plush_pmx_free(m);
}

/* Reads bytes from an exact-size copy; on failure checks the promises every failure keeps. Every
 * read is made twice, the second time summary-only, and the two must agree. */
static plush_status read_bytes(const uint8_t *data, size_t size, const plush_pmx_read_options *options,
                               plush_pmx_model **out, plush_diag *d)
{
    uint8_t *copy = pmx_fx_copy(data, size);
    *d = pmx_fx_diag();
    *out = &sentinel_model;
    plush_status st = plush_pmx_read(copy, size, options, out, d);
    free(copy);
    if (st != PLUSH_OK) {
        assert_null(*out);
        assert_int_equal(d->status, st);
    } else {
        assert_non_null(*out);
        assert_true(*out != &sentinel_model);
    }
    expect_same_summary(data, size, options, *out, d);
    return st;
}

static void expect_read_fails(const uint8_t *data, size_t size, plush_diag *d)
{
    plush_pmx_model *m;
    plush_status st = read_bytes(data, size, NULL, &m, d);
    if (st == PLUSH_OK)
        plush_pmx_free(m);
    assert_int_not_equal(st, PLUSH_OK);
    if (d->offset < 0 || (uint64_t)d->offset > size)
        print_diag("read failed, but the offset is not in the file", d);
    assert_true(d->offset >= 0);
    assert_true((uint64_t)d->offset <= size);
}

static bool section_is(const plush_diag *d, const char *section)
{
    return d->section && strcmp(d->section, section) == 0;
}

static plush_pmx_model *reread(const plush_buf *b)
{
    return pmx_fx_read_ok(b->data, b->size, NULL);
}

/* ---- index sizes ------------------------------------------------------------------------------ */

static void test_min_index_size(void **state)
{
    (void)state;
    static const struct { size_t count; uint8_t size; } vtx[] = {
        {0, 1}, {1, 1}, {255, 1}, {256, 1}, {257, 2}, {65535, 2}, {65536, 2}, {65537, 4}, {0x7fffffff, 4}};
    static const struct { size_t count; uint8_t size; } other[] = {
        {0, 1}, {1, 1}, {127, 1}, {128, 1}, {129, 2}, {32767, 2}, {32768, 2}, {32769, 4}, {0x7fffffff, 4}};
    for (size_t i = 0; i < sizeof vtx / sizeof vtx[0]; i++) {
        assert_int_equal(plush_pmx_min_index_size(PLUSH_PMX_INDEX_VERTEX, vtx[i].count), vtx[i].size);
        assert_int_equal(pmx_fx_min_size(PLUSH_PMX_INDEX_VERTEX, vtx[i].count), vtx[i].size);
    }
    for (int k = PLUSH_PMX_INDEX_TEXTURE; k < PLUSH_PMX_INDEX_KINDS; k++)
        for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
            if (plush_pmx_min_index_size(k, other[i].count) != other[i].size)
                print_message("%s: count %zu\n", kind_names[k], other[i].count);
            assert_int_equal(plush_pmx_min_index_size(k, other[i].count), other[i].size);
            assert_int_equal(pmx_fx_min_size(k, other[i].count), other[i].size);
        }
}

/* ---- round trips -------------------------------------------------------------------------------- */

static void test_fixtures_validate(void **state)
{
    (void)state;
    for (int v = 0; v < 2; v++)
        for (uint8_t auv = 0; auv <= 4; auv++) {
            plush_pmx_model *m = pmx_fx_rich(v ? 2.1f : 2.0f, PLUSH_ENC_UTF16LE, auv);
            plush_diag d = pmx_fx_diag();
            plush_status st = plush_pmx_validate(m, &d);
            if (st != PLUSH_OK)
                print_diag("validate rich", &d);
            assert_int_equal(st, PLUSH_OK);
            plush_pmx_free(m);
        }
    plush_pmx_model *m = pmx_fx_minimal(2.0f);
    plush_diag d = pmx_fx_diag();
    assert_int_equal(plush_pmx_validate(m, &d), PLUSH_OK);
    plush_pmx_free(m);
    plush_pmx_free(NULL);
}

static void roundtrip_rich(float version, uint8_t enc, uint8_t auv)
{
    plush_pmx_model *m = pmx_fx_rich(version, enc, auv);
    plush_buf bytes;
    plush_pmx_model *back = pmx_fx_roundtrip(m, NULL, &bytes);
    /* the header says what was asked for */
    assert_memory_equal(bytes.data, "PMX ", 4);
    float fv;
    memcpy(&fv, bytes.data + 4, 4);
    assert_true(fv == version);
    assert_int_equal(bytes.data[HDR_SIZE_BYTE], 8);
    assert_int_equal(bytes.data[HDR_ENCODING], enc);
    assert_int_equal(bytes.data[HDR_AUV], auv);
    for (int k = 0; k < PLUSH_PMX_INDEX_KINDS; k++)
        assert_int_equal(back->index_sizes[k], bytes.data[HDR_INDEX_SIZES + k]);
    assert_true(back->version == version);
    assert_int_equal(back->encoding, enc);
    assert_string_equal(back->bones[0].name.s, "センター");
    assert_string_equal(back->bones[2].name.s, "左ひざ");
    assert_string_equal(back->bones[4].name.s, TEDDY);
    assert_int_equal(back->bones[3].name.len, 0);
    assert_non_null(back->bones[3].name.s);
    plush_buf_free(&bytes);
    plush_pmx_free(back);
    plush_pmx_free(m);
}

static void test_roundtrip_rich_21(void **state)
{
    (void)state;
    for (uint8_t auv = 0; auv <= 4; auv++) {
        roundtrip_rich(2.1f, PLUSH_ENC_UTF16LE, auv);
        roundtrip_rich(2.1f, PLUSH_ENC_UTF8, auv);
    }
}

static void test_roundtrip_rich_20(void **state)
{
    (void)state;
    for (uint8_t auv = 0; auv <= 4; auv++) {
        roundtrip_rich(2.0f, PLUSH_ENC_UTF16LE, auv);
        roundtrip_rich(2.0f, PLUSH_ENC_UTF8, auv);
    }
}

static void test_roundtrip_minimal(void **state)
{
    (void)state;
    plush_pmx_model *m = pmx_fx_minimal(2.0f);
    plush_pmx_model *back = pmx_fx_roundtrip(m, NULL, NULL);
    plush_pmx_free(back);
    plush_pmx_free(m);
    /* an empty model is a valid model too */
    m = plush_pmx_create();
    assert_non_null(m);
    assert_true(m->version == 2.0f);
    assert_int_equal(m->encoding, PLUSH_ENC_UTF16LE);
    back = pmx_fx_roundtrip(m, NULL, NULL);
    assert_int_equal(back->vertex_count, 0);
    plush_pmx_free(back);
    plush_pmx_free(m);
}

/* The library's bytes are exactly what an independent reading of the format gives, and the library
 * reads the independent bytes back to the same model. */
static void reference_check(plush_pmx_model *m, const uint8_t sizes[PLUSH_PMX_INDEX_KINDS])
{
    memcpy(m->index_sizes, sizes, PLUSH_PMX_INDEX_KINDS);
    plush_buf ref = {0};
    pmx_fx_raw_write(m, NULL, &ref, NULL);
    plush_buf lib = pmx_fx_write_ok(m, NULL, NULL);
    if (lib.size != ref.size || memcmp(lib.data, ref.data, ref.size) != 0) {
        size_t i = 0;
        while (i < lib.size && i < ref.size && lib.data[i] == ref.data[i])
            i++;
        print_message("library bytes differ from the reference at byte %zu (sizes %zu vs %zu)\n", i, lib.size,
                      ref.size);
    }
    assert_int_equal(lib.size, ref.size);
    assert_memory_equal(lib.data, ref.data, ref.size);
    plush_pmx_model *back = reread(&ref);
    pmx_fx_assert_same(m, back, PMX_FX_CMP_ALL);
    plush_pmx_free(back);
    plush_buf_free(&lib);
    plush_buf_free(&ref);
}

static void test_reference_bytes(void **state)
{
    (void)state;
    static const uint8_t mixed[PLUSH_PMX_INDEX_KINDS] = {2, 1, 4, 2, 1, 4};
    static const uint8_t ones[PLUSH_PMX_INDEX_KINDS] = {1, 1, 1, 1, 1, 1};
    static const uint8_t fours[PLUSH_PMX_INDEX_KINDS] = {4, 4, 4, 4, 4, 4};
    const uint8_t *sets[] = {mixed, ones, fours};
    for (int v = 0; v < 2; v++)
        for (int e = 0; e < 2; e++)
            for (size_t s = 0; s < 3; s++) {
                plush_pmx_model *m = pmx_fx_rich(v ? 2.1f : 2.0f, (uint8_t)e, (uint8_t)(v ? 4 : 2));
                reference_check(m, sets[s]);
                plush_pmx_free(m);
            }
}

static void test_encodings(void **state)
{
    (void)state;
    plush_pmx_model *m = pmx_fx_rich(2.1f, PLUSH_ENC_UTF16LE, 1);
    /* UTF-16 -> UTF-8 -> UTF-16: the same text, the same bytes as the first UTF-16 write */
    plush_buf b16 = pmx_fx_write_ok(m, NULL, NULL);
    plush_pmx_model *u8m = pmx_fx_roundtrip(m, &(plush_pmx_write_options){.encoding = PLUSH_PMX_WRITE_UTF8}, NULL);
    assert_int_equal(u8m->encoding, PLUSH_ENC_UTF8);
    assert_string_equal(u8m->name.s, "ぬいぐるみ" TEDDY);
    plush_buf again = pmx_fx_write_ok(u8m, &(plush_pmx_write_options){.encoding = PLUSH_PMX_WRITE_UTF16}, NULL);
    assert_int_equal(again.size, b16.size);
    assert_memory_equal(again.data, b16.data, b16.size);

    /* U+1F9F8 is one surrogate pair in UTF-16 (3E D8 F8 DD) and four bytes in UTF-8 */
    plush_pmx_model *t = plush_pmx_create();
    t->name = pmx_fx_lit(TEDDY);
    plush_buf tb = pmx_fx_write_ok(t, NULL, NULL);
    static const uint8_t pair[] = {4, 0, 0, 0, 0x3E, 0xD8, 0xF8, 0xDD};
    assert_memory_equal(tb.data + 17, pair, sizeof pair);
    plush_buf_free(&tb);
    tb = pmx_fx_write_ok(t, &(plush_pmx_write_options){.encoding = PLUSH_PMX_WRITE_UTF8}, NULL);
    static const uint8_t utf8[] = {4, 0, 0, 0, 0xF0, 0x9F, 0xA7, 0xB8};
    assert_memory_equal(tb.data + 17, utf8, sizeof utf8);
    plush_buf_free(&tb);
    plush_pmx_free(t);

    plush_buf_free(&again);
    plush_buf_free(&b16);
    plush_pmx_free(u8m);
    plush_pmx_free(m);
}

static void test_version_upgrade(void **state)
{
    (void)state;
    plush_pmx_model *m = pmx_fx_rich(2.0f, PLUSH_ENC_UTF8, 3);
    plush_buf b;
    plush_pmx_model *back = pmx_fx_roundtrip(m, &(plush_pmx_write_options){.version = PLUSH_PMX_WRITE_21}, &b);
    assert_true(back->version == 2.1f);
    assert_int_equal(back->soft_body_count, 0);
    float fv;
    memcpy(&fv, b.data + 4, 4);
    assert_true(fv == 2.1f);
    plush_buf_free(&b);
    plush_pmx_free(back);
    plush_pmx_free(m);
}

static void test_header_extra_and_trailing(void **state)
{
    (void)state;
    plush_pmx_model *m = pmx_fx_rich(2.1f, PLUSH_ENC_UTF8, 2);
    static const uint8_t extra[] = {7, 9, 0xFF};
    m->header_extra = extra;
    m->header_extra_size = sizeof extra;
    plush_buf b;
    plush_pmx_model *back = pmx_fx_roundtrip(m, NULL, &b);
    assert_int_equal(b.data[HDR_SIZE_BYTE], 8 + sizeof extra);
    assert_memory_equal(b.data + 17, extra, sizeof extra);
    plush_pmx_free(back);

    /* bytes after the last section: kept with a warning, written back */
    static const uint8_t tail[] = {'t', 'a', 'i', 'l', 0};
    assert_true(plush_buf_append(&b, tail, sizeof tail));
    plush_diag d;
    back = pmx_fx_read_ok(b.data, b.size, &d);
    assert_true(d.warning_count > 0);
    assert_int_equal(back->trailing_size, sizeof tail);
    assert_memory_equal(back->trailing, tail, sizeof tail);
    plush_buf again = pmx_fx_write_ok(back, NULL, NULL);
    assert_int_equal(again.size, b.size);
    assert_memory_equal(again.data, b.data, b.size);
    plush_buf_free(&again);
    plush_buf_free(&b);
    plush_pmx_free(back);
    plush_pmx_free(m);
}

/* ---- index sizes in files ------------------------------------------------------------------- */

static void check_header_sizes(const plush_buf *b, const uint8_t want[PLUSH_PMX_INDEX_KINDS])
{
    for (int k = 0; k < PLUSH_PMX_INDEX_KINDS; k++) {
        if (b->data[HDR_INDEX_SIZES + k] != want[k])
            print_message("%s index size %u, want %u\n", kind_names[k], b->data[HDR_INDEX_SIZES + k], want[k]);
        assert_int_equal(b->data[HDR_INDEX_SIZES + k], want[k]);
    }
}

static void test_explicit_index_sizes(void **state)
{
    (void)state;
    static const uint8_t sizes[] = {1, 2, 4};
    for (int k = 0; k < PLUSH_PMX_INDEX_KINDS; k++)
        for (int s = 0; s < 3; s++) {
            plush_pmx_model *m = pmx_fx_rich(2.1f, PLUSH_ENC_UTF16LE, 1);
            uint8_t want[PLUSH_PMX_INDEX_KINDS];
            for (int j = 0; j < PLUSH_PMX_INDEX_KINDS; j++)
                want[j] = pmx_fx_min_size(j, 1);
            m->index_sizes[k] = want[k] = sizes[s];
            plush_buf b;
            plush_pmx_model *back = pmx_fx_roundtrip(m, NULL, &b);
            check_header_sizes(&b, want);
            assert_memory_equal(back->index_sizes, want, PLUSH_PMX_INDEX_KINDS);
            /* the same as the reference encoder at these sizes */
            plush_buf ref = {0};
            pmx_fx_raw_write(m, NULL, &ref, NULL);
            assert_int_equal(ref.size, b.size);
            assert_memory_equal(ref.data, b.data, b.size);
            /* minimal_indices overrides what the model asks for */
            plush_buf mb = pmx_fx_write_ok(m, &(plush_pmx_write_options){.minimal_indices = true}, NULL);
            uint8_t mins[PLUSH_PMX_INDEX_KINDS];
            for (int j = 0; j < PLUSH_PMX_INDEX_KINDS; j++)
                mins[j] = 1;
            check_header_sizes(&mb, mins);
            plush_buf_free(&mb);
            plush_buf_free(&ref);
            plush_buf_free(&b);
            plush_pmx_free(back);
            plush_pmx_free(m);
        }
}

/* A model with n items of kind, the last one referenced so the largest index is really written. */
static plush_pmx_model *sized_model(int kind, size_t n)
{
    plush_pmx_model *m = pmx_fx_minimal(2.1f);
    int32_t last = (int32_t)n - 1;
    switch (kind) {
    case PLUSH_PMX_INDEX_VERTEX: {
        pmx_fx_vertices(m, n);
        m->indices[0] = (uint32_t)last, m->indices[1] = (uint32_t)(last - 1), m->indices[2] = 0;
        plush_pmx_morph *mo = pmx_fx_morphs(m, 2);
        plush_pmx_morph_vertex *mv = pmx_fx_morph_offsets(m, &mo[0], PLUSH_PMX_MORPH_VERTEX, 1);
        mv[0].vertex = last;
        plush_pmx_morph_uv *mu = pmx_fx_morph_offsets(m, &mo[1], PLUSH_PMX_MORPH_UV, 1);
        mu[0].vertex = last - 1;
        plush_pmx_soft_body *sb = pmx_fx_soft_bodies(m, 1);
        sb[0].anchor_count = 1;
        sb[0].anchors = pmx_fx_alloc(m, 1, sizeof *sb[0].anchors);
        sb[0].anchors[0].vertex = last;
        sb[0].pin_count = 2;
        sb[0].pins = pmx_fx_alloc(m, 2, sizeof *sb[0].pins);
        sb[0].pins[0] = last - 1, sb[0].pins[1] = last;
        break;
    }
    case PLUSH_PMX_INDEX_TEXTURE:
        pmx_fx_textures(m, n);
        m->materials[0].texture = last;
        m->materials[0].sphere_texture = last - 1;
        m->materials[0].toon = last;
        break;
    case PLUSH_PMX_INDEX_MATERIAL: {
        plush_pmx_material *mat = pmx_fx_materials(m, n);
        mat[last].index_count = 3;
        plush_pmx_morph *mo = &m->morphs[0];
        plush_pmx_morph_material *mm = pmx_fx_morph_offsets(m, mo, PLUSH_PMX_MORPH_MATERIAL, 2);
        mm[0].material = last;
        mm[1].material = -1;
        pmx_fx_soft_bodies(m, 1)[0].material = last;
        break;
    }
    case PLUSH_PMX_INDEX_BONE: {
        plush_pmx_bone *b = pmx_fx_bones(m, n);
        b[0].parent = last;
        b[last].parent = -1;
        m->vertices[1].bones[0] = last;
        m->display_frames[0].elements[0].index = last;
        m->rigid_bodies[0].bone = last;
        plush_pmx_morph_bone *mb = pmx_fx_morph_offsets(m, &m->morphs[0], PLUSH_PMX_MORPH_BONE, 1);
        mb[0].bone = last;
        break;
    }
    case PLUSH_PMX_INDEX_MORPH: {
        pmx_fx_morphs(m, n);
        plush_pmx_morph_group *g = pmx_fx_morph_offsets(m, &m->morphs[0], PLUSH_PMX_MORPH_GROUP, 1);
        g[0].morph = last;
        g[0].weight = 1.0f;
        m->display_frames[0].elements[0].is_morph = 1;
        m->display_frames[0].elements[0].index = last;
        plush_pmx_morph_group *fl = pmx_fx_morph_offsets(m, &m->morphs[1], PLUSH_PMX_MORPH_FLIP, 1);
        fl[0].morph = last - 1;
        break;
    }
    default: {
        pmx_fx_rigid_bodies(m, n);
        plush_pmx_joint *j = pmx_fx_joints(m, 1);
        j[0].body_a = last;
        j[0].body_b = 0;
        plush_pmx_morph_impulse *im = pmx_fx_morph_offsets(m, &m->morphs[0], PLUSH_PMX_MORPH_IMPULSE, 1);
        im[0].rigid_body = last;
        plush_pmx_soft_body *sb = pmx_fx_soft_bodies(m, 1);
        sb[0].anchor_count = 1;
        sb[0].anchors = pmx_fx_alloc(m, 1, sizeof *sb[0].anchors);
        sb[0].anchors[0].rigid_body = last - 1;
        break;
    }
    }
    return m;
}

static void check_sized(int kind, size_t n, uint8_t expect)
{
    uint8_t want[PLUSH_PMX_INDEX_KINDS];
    /* index_sizes 0: the writer picks the smallest */
    plush_pmx_model *m = sized_model(kind, n);
    for (int j = 0; j < PLUSH_PMX_INDEX_KINDS; j++)
        want[j] = 1;
    want[kind] = expect;
    assert_int_equal(plush_pmx_min_index_size(kind, n), expect);
    plush_buf b;
    plush_pmx_model *back = pmx_fx_roundtrip(m, NULL, &b);
    if (b.data[HDR_INDEX_SIZES + kind] != expect)
        print_message("%s count %zu\n", kind_names[kind], n);
    check_header_sizes(&b, want);
    plush_buf_free(&b);
    plush_pmx_free(back);

    /* minimal_indices over a model that asks for 4 everywhere */
    memset(m->index_sizes, 4, PLUSH_PMX_INDEX_KINDS);
    back = pmx_fx_roundtrip(m, &(plush_pmx_write_options){.minimal_indices = true}, &b);
    check_header_sizes(&b, want);
    assert_memory_equal(back->index_sizes, want, PLUSH_PMX_INDEX_KINDS);
    plush_buf_free(&b);
    plush_pmx_free(back);

    /* a size too small for the count is grown */
    memset(m->index_sizes, 1, PLUSH_PMX_INDEX_KINDS);
    back = pmx_fx_roundtrip(m, NULL, &b);
    check_header_sizes(&b, want);
    plush_buf_free(&b);
    plush_pmx_free(back);
    plush_pmx_free(m);
}

static void test_vertex_index_boundaries(void **state)
{
    (void)state;
    static const struct { size_t n; uint8_t size; } cases[] = {
        {255, 1}, {256, 1}, {257, 2}, {65535, 2}, {65536, 2}, {65537, 4}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_sized(PLUSH_PMX_INDEX_VERTEX, cases[i].n, cases[i].size);
}

static void test_signed_index_boundaries(void **state)
{
    (void)state;
    static const struct { size_t n; uint8_t size; } cases[] = {
        {127, 1}, {128, 1}, {129, 2}, {32767, 2}, {32768, 2}, {32769, 4}};
    for (int k = PLUSH_PMX_INDEX_TEXTURE; k < PLUSH_PMX_INDEX_KINDS; k++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            check_sized(k, cases[i].n, cases[i].size);
}

/* ---- broken text ---------------------------------------------------------------------------------- */

static void broken_text(uint8_t enc, const uint8_t *bad, size_t bad_len)
{
    plush_pmx_model *m = pmx_fx_minimal(2.0f);
    m->encoding = enc;
    m->bones[0].name = pmx_fx_lit("QZ"); /* a unique pattern to patch */
    m->name = pmx_fx_lit("ok");
    plush_buf b = pmx_fx_write_ok(m, NULL, NULL);
    const uint8_t pat16[] = {'Q', 0, 'Z', 0};
    const uint8_t pat8[] = {'Q', 'Z'};
    size_t at = enc == PLUSH_ENC_UTF8 ? pmx_fx_find_unique(b.data, b.size, pat8, 2)
                                      : pmx_fx_find_unique(b.data, b.size, pat16, 4);
    assert_true(bad_len <= (enc == PLUSH_ENC_UTF8 ? 2u : 4u));
    memcpy(b.data + at, bad, bad_len);

    plush_diag d;
    plush_pmx_model *back = pmx_fx_read_ok(b.data, b.size, &d);
    assert_true(d.warning_count > 0);
    const plush_str *name = &back->bones[0].name;
    assert_non_null(strstr(name->s, REPLACEMENT));
    assert_true(plush_utf8_valid(name->s, name->len));
    assert_non_null(name->raw);
    /* written back in the same encoding: the very same bytes */
    plush_buf again = pmx_fx_write_ok(back, NULL, NULL);
    assert_int_equal(again.size, b.size);
    assert_memory_equal(again.data, b.data, b.size);
    plush_buf_free(&again);

    /* in the other encoding the raw bytes cannot be used: the text (with U+FFFD) is written */
    plush_pmx_write_options other = {.encoding = enc == PLUSH_ENC_UTF8 ? PLUSH_PMX_WRITE_UTF16 : PLUSH_PMX_WRITE_UTF8};
    plush_buf conv = pmx_fx_write_ok(back, &other, NULL);
    plush_diag d2;
    plush_pmx_model *conv_back = pmx_fx_read_ok(conv.data, conv.size, &d2);
    assert_int_equal(d2.warning_count, 0);
    assert_int_equal(conv_back->bones[0].name.len, name->len);
    assert_memory_equal(conv_back->bones[0].name.s, name->s, name->len);
    assert_null(conv_back->bones[0].name.raw);
    plush_pmx_free(conv_back);
    plush_buf_free(&conv);

    plush_buf_free(&b);
    plush_pmx_free(back);
    plush_pmx_free(m);
}

static void test_broken_utf16(void **state)
{
    (void)state;
    static const uint8_t lone_high[] = {0x00, 0xD8};             /* D800, then 'Z' */
    static const uint8_t lone_low[] = {'Q', 0, 0x00, 0xDC};      /* 'Q', DC00 */
    static const uint8_t reversed[] = {0x00, 0xDC, 0x00, 0xD8};  /* DC00 D800 */
    broken_text(PLUSH_ENC_UTF16LE, lone_high, sizeof lone_high);
    broken_text(PLUSH_ENC_UTF16LE, lone_low, sizeof lone_low);
    broken_text(PLUSH_ENC_UTF16LE, reversed, sizeof reversed);
}

static void test_broken_utf8(void **state)
{
    (void)state;
    static const uint8_t ff[] = {0xFF};
    static const uint8_t cut[] = {'Q', 0xE3};        /* a 3-byte lead with nothing after */
    static const uint8_t overlong[] = {0xC0, 0xAF};  /* overlong '/' */
    broken_text(PLUSH_ENC_UTF8, ff, sizeof ff);
    broken_text(PLUSH_ENC_UTF8, cut, sizeof cut);
    broken_text(PLUSH_ENC_UTF8, overlong, sizeof overlong);
}

/* A UTF-16 text of odd byte length: the odd byte reads as U+FFFD and is written back. */
static void test_odd_utf16_length(void **state)
{
    (void)state;
    plush_pmx_model *m = pmx_fx_minimal(2.0f);
    m->bones[0].name = pmx_fx_lit("QZ");
    plush_buf b = pmx_fx_write_ok(m, NULL, NULL);
    const uint8_t pat[] = {4, 0, 0, 0, 'Q', 0, 'Z', 0};
    size_t at = pmx_fx_find_unique(b.data, b.size, pat, sizeof pat);
    pmx_fx_put_i32(b.data + at, 3);
    memmove(b.data + at + 7, b.data + at + 8, b.size - (at + 8)); /* drop the high byte of 'Z' */
    b.size--;
    plush_diag d;
    plush_pmx_model *back = pmx_fx_read_ok(b.data, b.size, &d);
    assert_true(d.warning_count > 0);
    assert_non_null(strstr(back->bones[0].name.s, REPLACEMENT));
    assert_int_equal(back->bones[0].name.s[0], 'Q');
    plush_buf again = pmx_fx_write_ok(back, NULL, NULL);
    assert_int_equal(again.size, b.size);
    assert_memory_equal(again.data, b.data, b.size);
    plush_buf_free(&again);
    plush_buf_free(&b);
    plush_pmx_free(back);
    plush_pmx_free(m);
}

/* Text built in code that is not UTF-8 is never written broken: it goes out as U+FFFD. */
static void test_built_invalid_utf8(void **state)
{
    (void)state;
    for (int e = 0; e < 2; e++) {
        plush_pmx_model *m = pmx_fx_minimal(2.1f);
        m->encoding = (uint8_t)e;
        m->name = pmx_fx_lit("a\xFF" "b");
        m->bones[0].name = pmx_fx_lit("\xE3\x81");
        plush_buf b = pmx_fx_write_ok(m, NULL, NULL);
        plush_diag d;
        plush_pmx_model *back = pmx_fx_read_ok(b.data, b.size, &d);
        assert_int_equal(d.warning_count, 0);
        assert_string_equal(back->name.s, "a" REPLACEMENT "b");
        assert_true(plush_utf8_valid(back->bones[0].name.s, back->bones[0].name.len));
        assert_null(back->name.raw);
        plush_pmx_free(back);
        plush_buf_free(&b);
        plush_pmx_free(m);
    }
}

/* ---- versions --------------------------------------------------------------------------------------- */

static void test_read_bad_version(void **state)
{
    (void)state;
    plush_pmx_model *m = pmx_fx_minimal(2.0f);
    plush_buf b = pmx_fx_write_ok(m, NULL, NULL);
    static const float bad[] = {2.2f, 1.0f, 0.0f, 3.0f, -2.0f};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint8_t *c = pmx_fx_copy(b.data, b.size);
        pmx_fx_put_f32(c + 4, bad[i]);
        plush_diag d;
        expect_read_fails(c, b.size, &d);
        assert_int_equal(d.status, PLUSH_E_VERSION);
        assert_true(section_is(&d, "header"));
        free(c);
    }
    uint32_t nan_bits = 0x7FC00000u;
    uint8_t *c = pmx_fx_copy(b.data, b.size);
    memcpy(c + 4, &nan_bits, 4);
    plush_diag d;
    expect_read_fails(c, b.size, &d);
    assert_int_equal(d.status, PLUSH_E_VERSION);
    /* not a PMX file */
    memcpy(c, "PMD ", 4);
    expect_read_fails(c, b.size, &d);
    assert_int_equal(d.status, PLUSH_E_FORMAT);
    assert_true(section_is(&d, "header"));
    free(c);
    plush_buf_free(&b);
    plush_pmx_free(m);
}

typedef struct feature21 {
    const char *what;
    void (*add)(plush_pmx_model *m);
    const char *section;
    int64_t index;
    bool version_bound; /* a 2.0 model holding it is invalid (material flag bits are only ignored by 2.0 readers) */
} feature21;

static void add_soft(plush_pmx_model *m) { pmx_fx_soft_bodies(m, 1); }
static void add_qdef(plush_pmx_model *m)
{
    m->vertices[1].weight_type = PLUSH_PMX_QDEF;
}
static void add_morph(plush_pmx_model *m, uint8_t kind)
{
    plush_pmx_morph *mo = pmx_fx_alloc(m, 2, sizeof *mo);
    mo[0] = m->morphs[0];
    mo[1].name = pmx_fx_lit("2.1");
    mo[1].name_en = pmx_fx_lit("");
    void *p = pmx_fx_morph_offsets(m, &mo[1], kind, 1);
    if (kind == PLUSH_PMX_MORPH_FLIP)
        ((plush_pmx_morph_group *)p)->weight = 1.0f;
    m->morphs = mo;
    m->morph_count = 2;
}
static void add_flip(plush_pmx_model *m) { add_morph(m, PLUSH_PMX_MORPH_FLIP); }
static void add_impulse(plush_pmx_model *m) { add_morph(m, PLUSH_PMX_MORPH_IMPULSE); }
static void add_joint(plush_pmx_model *m, uint8_t type)
{
    plush_pmx_joint *j = pmx_fx_joints(m, 2);
    j[1].type = type;
}
static void add_joint_6dof(plush_pmx_model *m) { add_joint(m, PLUSH_PMX_JOINT_6DOF); }
static void add_joint_p2p(plush_pmx_model *m) { add_joint(m, PLUSH_PMX_JOINT_P2P); }
static void add_joint_cone(plush_pmx_model *m) { add_joint(m, PLUSH_PMX_JOINT_CONE_TWIST); }
static void add_joint_slider(plush_pmx_model *m) { add_joint(m, PLUSH_PMX_JOINT_SLIDER); }
static void add_joint_hinge(plush_pmx_model *m) { add_joint(m, PLUSH_PMX_JOINT_HINGE); }
static void add_vertex_color(plush_pmx_model *m) { m->materials[0].flags |= PLUSH_PMX_MATERIAL_VERTEX_COLOR; }
static void add_point(plush_pmx_model *m) { m->materials[0].flags |= PLUSH_PMX_MATERIAL_POINT; }
static void add_line(plush_pmx_model *m) { m->materials[0].flags |= PLUSH_PMX_MATERIAL_LINE; }

static const feature21 features21[] = {
    {"soft body", add_soft, "soft body", 0, true},
    {"QDEF", add_qdef, "vertex", 1, false}, /* real 2.0 files carry QDEF: the reader keeps it */
    {"flip morph", add_flip, "morph", 1, true},
    {"impulse morph", add_impulse, "morph", 1, true},
    {"6DOF joint", add_joint_6dof, "joint", 1, true},
    {"P2P joint", add_joint_p2p, "joint", 1, true},
    {"cone twist joint", add_joint_cone, "joint", 1, true},
    {"slider joint", add_joint_slider, "joint", 1, true},
    {"hinge joint", add_joint_hinge, "joint", 1, true},
    {"vertex colour flag", add_vertex_color, "material", 0, false},
    {"point flag", add_point, "material", 0, false},
    {"line flag", add_line, "material", 0, false},
};

static void test_write_20_refuses_21_features(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof features21 / sizeof features21[0]; i++) {
        const feature21 *f = &features21[i];
        plush_pmx_model *m = pmx_fx_minimal(2.1f);
        f->add(m);
        /* fine as 2.1 */
        plush_pmx_model *back = pmx_fx_roundtrip(m, NULL, NULL);
        plush_pmx_free(back);

        plush_buf out = {0};
        assert_true(plush_buf_append(&out, "abc", 3));
        plush_diag d = pmx_fx_diag();
        plush_status st = plush_pmx_write(m, &(plush_pmx_write_options){.version = PLUSH_PMX_WRITE_20}, &out, &d);
        if (st == PLUSH_OK || !section_is(&d, f->section) || d.index != f->index) {
            print_message("2.0 with %s:\n", f->what);
            print_diag("write", &d);
        }
        assert_int_not_equal(st, PLUSH_OK);
        assert_true(section_is(&d, f->section));
        assert_int_equal(d.index, f->index);
        assert_int_equal(out.size, 3);
        plush_buf_free(&out);

        /* lossy: written without it, with a warning */
        plush_diag wd;
        plush_buf lb = pmx_fx_write_ok(m, &(plush_pmx_write_options){.version = PLUSH_PMX_WRITE_20, .lossy = true}, &wd);
        assert_true(wd.warning_count > 0);
        plush_pmx_model *l = reread(&lb);
        assert_true(l->version == 2.0f);
        assert_int_equal(l->soft_body_count, 0);
        assert_int_equal(l->vertices[1].weight_type, f->add == add_qdef ? PLUSH_PMX_BDEF4 : PLUSH_PMX_BDEF1);
        assert_int_equal(l->morph_count, 1);
        assert_int_equal(l->joint_count, m->joint_count ? 1 : 0);
        assert_int_equal(l->materials[0].flags, m->materials[0].flags & 0x1F);
        plush_pmx_free(l);
        plush_buf_free(&lb);

        /* a model that says 2.0 but holds a 2.1 element does not validate */
        if (!f->version_bound) {
            plush_pmx_free(m);
            continue;
        }
        m->version = 2.0f;
        d = pmx_fx_diag();
        st = plush_pmx_validate(m, &d);
        if (st == PLUSH_OK)
            print_message("validate accepts a 2.0 model with %s\n", f->what);
        assert_int_not_equal(st, PLUSH_OK);
        assert_true(section_is(&d, f->section));
        plush_pmx_free(m);
    }
}

/* The rich 2.1 model as the lossy 2.0 writer should leave it. */
static plush_pmx_model *rich_as_lossy_20(uint8_t auv)
{
    plush_pmx_model *e = pmx_fx_rich(2.1f, PLUSH_ENC_UTF16LE, auv);
    e->version = 2.0f;
    e->vertices[4].weight_type = PLUSH_PMX_BDEF4; /* QDEF */
    for (size_t i = 0; i < e->material_count; i++)
        e->materials[i].flags &= 0x1F;
    /* morphs 9 (flip) and 10 (impulse) go; 11 becomes 9 */
    e->morphs[9] = e->morphs[11];
    e->morph_count = 10;
    plush_pmx_display_frame *f = &e->display_frames[1];
    for (uint32_t i = 0; i < f->element_count; i++)
        if (f->elements[i].is_morph && f->elements[i].index == 11)
            f->elements[i].index = 9;
    e->joint_count = 1; /* only the spring 6DOF joint (the first) stays */
    e->soft_body_count = 0;
    e->soft_bodies = NULL;
    return e;
}

static void test_write_20_lossy_rich(void **state)
{
    (void)state;
    plush_pmx_model *m = pmx_fx_rich(2.1f, PLUSH_ENC_UTF16LE, 4);
    /* group members pointing past the removed morphs are remapped too */
    plush_pmx_morph_group *g = pmx_fx_morph_offsets(m, &m->morphs[1], PLUSH_PMX_MORPH_GROUP, 3);
    g[0].morph = 0, g[0].weight = 0.5f;
    g[1].morph = 11, g[1].weight = 0.25f;
    g[2].morph = 8, g[2].weight = 1.0f;

    plush_diag wd;
    plush_buf b = pmx_fx_write_ok(m, &(plush_pmx_write_options){.version = PLUSH_PMX_WRITE_20, .lossy = true}, &wd);
    assert_true(wd.warning_count > 0);
    plush_pmx_model *back = reread(&b);

    plush_pmx_model *want = rich_as_lossy_20(4);
    plush_pmx_morph_group *wg = pmx_fx_morph_offsets(want, &want->morphs[1], PLUSH_PMX_MORPH_GROUP, 3);
    wg[0].morph = 0, wg[0].weight = 0.5f;
    wg[1].morph = 9, wg[1].weight = 0.25f;
    wg[2].morph = 8, wg[2].weight = 1.0f;
    pmx_fx_assert_same(want, back, PMX_FX_CMP_VERSION | PMX_FX_CMP_ENCODING);

    /* and the 2.0 result round-trips as itself */
    plush_buf again = pmx_fx_write_ok(back, NULL, NULL);
    assert_int_equal(again.size, b.size);
    assert_memory_equal(again.data, b.data, b.size);
    plush_buf_free(&again);
    plush_pmx_free(want);
    plush_pmx_free(back);
    plush_buf_free(&b);
    plush_pmx_free(m);
}

/* References to a removed morph cannot stay: display-frame elements and group members that pointed at
 * a flip or impulse morph are dropped, and the result is a valid 2.0 file. */
static void test_write_20_lossy_dangling(void **state)
{
    (void)state;
    plush_pmx_model *m = pmx_fx_rich(2.1f, PLUSH_ENC_UTF8, 0);
    plush_pmx_display_frame *f = &m->display_frames[1];
    f->element_count = 4;
    f->elements = pmx_fx_alloc(m, 4, sizeof *f->elements);
    f->elements[0] = (plush_pmx_frame_element){1, 9};  /* flip: dropped */
    f->elements[1] = (plush_pmx_frame_element){1, 11}; /* -> 9 */
    f->elements[2] = (plush_pmx_frame_element){1, 10}; /* impulse: dropped */
    f->elements[3] = (plush_pmx_frame_element){0, 3};
    plush_pmx_morph_group *g = pmx_fx_morph_offsets(m, &m->morphs[1], PLUSH_PMX_MORPH_GROUP, 2);
    g[0].morph = 10, g[0].weight = 1.0f; /* impulse: dropped */
    g[1].morph = 2, g[1].weight = 0.5f;

    plush_buf b = pmx_fx_write_ok(m, &(plush_pmx_write_options){.version = PLUSH_PMX_WRITE_20, .lossy = true}, NULL);
    plush_pmx_model *back = reread(&b);
    assert_int_equal(back->morph_count, 10);
    const plush_pmx_display_frame *bf = &back->display_frames[1];
    if (bf->element_count != 2)
        for (uint32_t i = 0; i < bf->element_count; i++)
            print_message("element %u: is_morph %u index %d\n", i, bf->elements[i].is_morph, bf->elements[i].index);
    assert_int_equal(bf->element_count, 2);
    assert_int_equal(bf->elements[0].is_morph, 1);
    assert_int_equal(bf->elements[0].index, 9);
    assert_int_equal(bf->elements[1].is_morph, 0);
    assert_int_equal(bf->elements[1].index, 3);
    const plush_pmx_morph *bg = &back->morphs[1];
    assert_int_equal(bg->kind, PLUSH_PMX_MORPH_GROUP);
    assert_int_equal(bg->offset_count, 1);
    assert_int_equal(bg->offsets.group[0].morph, 2);
    plush_pmx_free(back);
    plush_buf_free(&b);
    plush_pmx_free(m);
}

/* ---- validation ------------------------------------------------------------------------------------ */

typedef struct broken {
    const char *what;
    void (*mutate)(plush_pmx_model *m);
    plush_status status, alt_status; /* alt_status: a second acceptable status (or PLUSH_OK for none) */
    const char *section;
    int64_t index, alt_index;        /* alt_index: a second acceptable index (-2 for none) */
    bool model_only;                 /* has no byte form (the file holds SDEF data inline) */
} broken;

#define MUTATION(name, body) \
    static void mut_##name(plush_pmx_model *m) { body; }

MUTATION(bone_parent, m->bones[2].parent = 10)
MUTATION(bone_parent_negative, m->bones[2].parent = -2)
MUTATION(bone_tail, m->bones[0].tail_bone = 10)
MUTATION(bone_append, m->bones[4].append_parent = 10)
MUTATION(bone_ik_target, m->bones[8].ik_target = 10)
MUTATION(bone_ik_link, m->bones[8].ik_links[1].bone = 10)
MUTATION(vertex_bone, m->vertices[1].bones[1] = 10)
MUTATION(vertex_bone_bdef4, m->vertices[2].bones[3] = 11)
MUTATION(vertex_sdef, m->vertices[3].sdef = 2)
MUTATION(face_index, m->indices[4] = 12)
MUTATION(material_sum_over, m->materials[1].index_count = 6)
MUTATION(material_sum_under, m->materials[4].index_count = 0; m->materials[3].index_count = 0)
MUTATION(material_texture, m->materials[1].texture = 4)
MUTATION(material_sphere, m->materials[2].sphere_texture = 4)
MUTATION(material_toon, m->materials[1].toon = 4)
MUTATION(morph_vertex, m->morphs[0].offsets.vertex[1].vertex = 12)
MUTATION(morph_group, m->morphs[1].offsets.group[1].morph = 12)
MUTATION(morph_bone, m->morphs[2].offsets.bone[0].bone = 10)
MUTATION(morph_uv, m->morphs[3].offsets.uv[0].vertex = 12)
MUTATION(morph_uv4, m->morphs[7].offsets.uv[0].vertex = 12)
MUTATION(morph_material, m->morphs[8].offsets.material[1].material = 5)
MUTATION(morph_flip, m->morphs[9].offsets.group[0].morph = 12)
MUTATION(morph_impulse, m->morphs[10].offsets.impulse[1].rigid_body = 4)
MUTATION(frame_bone, m->display_frames[2].elements[0].index = 10)
MUTATION(frame_morph, m->display_frames[1].elements[2].index = 12)
MUTATION(rigid_bone, m->rigid_bodies[2].bone = 10)
MUTATION(joint_body_a, m->joints[3].body_a = 4)
MUTATION(joint_body_b, m->joints[1].body_b = 4)
MUTATION(soft_material, m->soft_bodies[0].material = 5)
MUTATION(soft_anchor_body, m->soft_bodies[0].anchors[1].rigid_body = 4)
MUTATION(soft_anchor_vertex, m->soft_bodies[0].anchors[0].vertex = 12)
MUTATION(soft_pin, m->soft_bodies[0].pins[2] = 12)
MUTATION(weight_type_5, m->vertices[2].weight_type = 5)
MUTATION(morph_kind_11, m->morphs[3].kind = 11)
MUTATION(joint_type_6, m->joints[4].type = 6)
MUTATION(face_count_not_triangles, m->index_count = 14)
MUTATION(frame_element_type_2, m->display_frames[2].elements[1].is_morph = 2)
MUTATION(toon_flag_2, m->materials[2].toon_shared = 2)
MUTATION(material_morph_operation_2, m->morphs[8].offsets.material[0].operation = 2)
MUTATION(rigid_shape_3, m->rigid_bodies[1].shape = 3)
MUTATION(rigid_mode_3, m->rigid_bodies[2].mode = 3)
MUTATION(rigid_group_16, m->rigid_bodies[3].group = 16)
MUTATION(soft_shape_2, m->soft_bodies[1].shape = 2)

#define NOALT PLUSH_OK, /* no second status */
static const broken brokens[] = {
    {"bone parent out of range", mut_bone_parent, PLUSH_E_RANGE, NOALT "bone", 2, -2, false},
    {"bone parent -2", mut_bone_parent_negative, PLUSH_E_RANGE, NOALT "bone", 2, -2, false},
    {"bone tail out of range", mut_bone_tail, PLUSH_E_RANGE, NOALT "bone", 0, -2, false},
    {"append parent out of range", mut_bone_append, PLUSH_E_RANGE, NOALT "bone", 4, -2, false},
    {"IK target out of range", mut_bone_ik_target, PLUSH_E_RANGE, NOALT "bone", 8, -2, false},
    {"IK link out of range", mut_bone_ik_link, PLUSH_E_RANGE, NOALT "bone", 8, -2, false},
    {"vertex bone out of range", mut_vertex_bone, PLUSH_E_RANGE, NOALT "vertex", 1, -2, false},
    {"BDEF4 bone out of range", mut_vertex_bone_bdef4, PLUSH_E_RANGE, NOALT "vertex", 2, -2, false},
    {"SDEF index out of range", mut_vertex_sdef, PLUSH_E_RANGE, NOALT "vertex", 3, -2, true},
    {"face index >= vertex count", mut_face_index, PLUSH_E_RANGE, NOALT "face index", 4, 1, false},
    {"material counts over faces", mut_material_sum_over, PLUSH_E_FORMAT, PLUSH_E_RANGE, "material", -1, 1, false},
    {"material counts under faces", mut_material_sum_under, PLUSH_E_FORMAT, PLUSH_E_RANGE, "material", -1, 4, false},
    {"material texture out of range", mut_material_texture, PLUSH_E_RANGE, NOALT "material", 1, -2, false},
    {"material sphere out of range", mut_material_sphere, PLUSH_E_RANGE, NOALT "material", 2, -2, false},
    {"material toon out of range", mut_material_toon, PLUSH_E_RANGE, NOALT "material", 1, -2, false},
    {"vertex morph vertex", mut_morph_vertex, PLUSH_E_RANGE, NOALT "morph", 0, -2, false},
    {"group morph member", mut_morph_group, PLUSH_E_RANGE, NOALT "morph", 1, -2, false},
    {"bone morph bone", mut_morph_bone, PLUSH_E_RANGE, NOALT "morph", 2, -2, false},
    {"UV morph vertex", mut_morph_uv, PLUSH_E_RANGE, NOALT "morph", 3, -2, false},
    {"UV4 morph vertex", mut_morph_uv4, PLUSH_E_RANGE, NOALT "morph", 7, -2, false},
    {"material morph material", mut_morph_material, PLUSH_E_RANGE, NOALT "morph", 8, -2, false},
    {"flip morph member", mut_morph_flip, PLUSH_E_RANGE, NOALT "morph", 9, -2, false},
    {"impulse morph body", mut_morph_impulse, PLUSH_E_RANGE, NOALT "morph", 10, -2, false},
    {"display frame bone", mut_frame_bone, PLUSH_E_RANGE, NOALT "display frame", 2, -2, false},
    {"display frame morph", mut_frame_morph, PLUSH_E_RANGE, NOALT "display frame", 1, -2, false},
    {"rigid body bone", mut_rigid_bone, PLUSH_E_RANGE, NOALT "rigid body", 2, -2, false},
    {"joint body A", mut_joint_body_a, PLUSH_E_RANGE, NOALT "joint", 3, -2, false},
    {"joint body B", mut_joint_body_b, PLUSH_E_RANGE, NOALT "joint", 1, -2, false},
    {"soft body material", mut_soft_material, PLUSH_E_RANGE, NOALT "soft body", 0, -2, false},
    {"soft body anchor body", mut_soft_anchor_body, PLUSH_E_RANGE, NOALT "soft body", 0, -2, false},
    {"soft body anchor vertex", mut_soft_anchor_vertex, PLUSH_E_RANGE, NOALT "soft body", 0, -2, false},
    {"soft body pin", mut_soft_pin, PLUSH_E_RANGE, NOALT "soft body", 0, -2, false},
    {"weight type 5", mut_weight_type_5, PLUSH_E_FORMAT, NOALT "vertex", 2, -2, false},
    {"morph kind 11", mut_morph_kind_11, PLUSH_E_FORMAT, NOALT "morph", 3, -2, false},
    {"joint type 6", mut_joint_type_6, PLUSH_E_FORMAT, NOALT "joint", 4, -2, false},
    {"face index count 14", mut_face_count_not_triangles, PLUSH_E_FORMAT, NOALT "face index", -1, -2, false},
    {"frame element type 2", mut_frame_element_type_2, PLUSH_E_FORMAT, NOALT "display frame", 2, -2, false},
    {"toon flag 2", mut_toon_flag_2, PLUSH_E_FORMAT, NOALT "material", 2, -2, false},
    {"material morph operation 2", mut_material_morph_operation_2, PLUSH_E_FORMAT, NOALT "morph", 8, -2, false},
    {"rigid body shape 3", mut_rigid_shape_3, PLUSH_E_FORMAT, NOALT "rigid body", 1, -2, false},
    {"rigid body mode 3", mut_rigid_mode_3, PLUSH_E_FORMAT, NOALT "rigid body", 2, -2, false},
    {"rigid body group 16", mut_rigid_group_16, PLUSH_E_RANGE, PLUSH_E_FORMAT, "rigid body", 3, -2, false},
    {"soft body shape 2", mut_soft_shape_2, PLUSH_E_FORMAT, NOALT "soft body", 1, -2, false},
};

static bool matches(const broken *c, const plush_diag *d)
{
    bool status_ok = d->status == c->status || (c->alt_status != PLUSH_OK && d->status == c->alt_status);
    bool index_ok = d->index == c->index || (c->alt_index != -2 && d->index == c->alt_index);
    return status_ok && section_is(d, c->section) && index_ok;
}

static void test_validate_failures(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof brokens / sizeof brokens[0]; i++) {
        const broken *c = &brokens[i];
        plush_pmx_model *m = pmx_fx_rich(2.1f, PLUSH_ENC_UTF16LE, 4);
        c->mutate(m);
        plush_diag d = pmx_fx_diag();
        plush_status st = plush_pmx_validate(m, &d);
        if (st != d.status || !matches(c, &d) || d.offset != -1) {
            print_message("validate, %s:\n", c->what);
            print_diag("validate", &d);
            failures++;
        }

        /* the writer validates first and leaves the buffer as it was */
        plush_buf out = {0};
        assert_true(plush_buf_append(&out, "xy", 2));
        plush_diag wd = pmx_fx_diag();
        st = plush_pmx_write(m, NULL, &out, &wd);
        if (st == PLUSH_OK || !matches(c, &wd) || out.size != 2) {
            print_message("write, %s:\n", c->what);
            print_diag("write", &wd);
            failures++;
        }
        plush_buf_free(&out);
        plush_pmx_free(m);
    }
    assert_int_equal(failures, 0);
}

static int section_id(const char *name)
{
    static const char *const names[PMX_FX_SECTIONS] = {"header", "model info", "vertex", "face index",
                                                        "texture", "material", "bone", "morph",
                                                        "display frame", "rigid body", "joint", "soft body"};
    for (int s = 0; s < PMX_FX_SEC_END; s++)
        if (strcmp(names[s], name) == 0)
            return s;
    return -1;
}

/* The same broken models as bytes (from the reference encoder, which checks nothing). */
static void test_read_failures(void **state)
{
    (void)state;
    int failures = 0;
    for (int wide = 0; wide < 2; wide++)
        for (size_t i = 0; i < sizeof brokens / sizeof brokens[0]; i++) {
            const broken *c = &brokens[i];
            if (c->model_only)
                continue;
            plush_pmx_model *m = pmx_fx_rich(2.1f, (uint8_t)wide, 4);
            if (wide)
                memset(m->index_sizes, 4, PLUSH_PMX_INDEX_KINDS);
            c->mutate(m);
            plush_buf b = {0};
            pmx_fx_layout lay;
            pmx_fx_raw_write(m, NULL, &b, &lay);
            plush_diag d;
            plush_pmx_model *bad;
            plush_status bst = read_bytes(b.data, b.size, NULL, &bad, &d);
            if (bst == PLUSH_OK)
                plush_pmx_free(bad);
            /* the right status, section and item; the offset points into the section of the element */
            int s = section_id(c->section);
            assert_true(s >= 0);
            if (bst == PLUSH_OK || !matches(c, &d) || d.offset < 0 || (size_t)d.offset < lay.section[s] ||
                (size_t)d.offset >= lay.section[s + 1]) {
                print_message("read, %s (index size %s; %s at [%zu, %zu)):\n", c->what, wide ? "4" : "smallest",
                              c->section, lay.section[s], lay.section[s + 1]);
                print_diag("read", &d);
                failures++;
            }
            /* skip_validation trusts indices: only structure errors remain */
            plush_pmx_model *out;
            plush_status st = read_bytes(b.data, b.size, &(plush_pmx_read_options){.skip_validation = true}, &out, &d);
            if (c->status == PLUSH_E_RANGE && c->alt_status == PLUSH_OK) {
                assert_int_equal(st, PLUSH_OK);
                plush_pmx_free(out);
            } else if (st == PLUSH_OK) {
                plush_pmx_free(out);
            }
            plush_buf_free(&b);
            plush_pmx_free(m);
        }
    assert_int_equal(failures, 0);
}

/* Reads bytes of a model (any model: the reference encoder checks nothing) in both modes. */
static plush_status read_raw(plush_pmx_model *m, const plush_pmx_read_options *options, plush_diag *d)
{
    plush_buf b = {0};
    pmx_fx_raw_write(m, NULL, &b, NULL);
    plush_pmx_model *out;
    plush_status st = read_bytes(b.data, b.size, options, &out, d); /* compares the summary-only read */
    if (st == PLUSH_OK)
        plush_pmx_free(out);
    plush_buf_free(&b);
    return st;
}

/* Several faults at once: both modes report the one a full validation finds first. */
static void test_summary_first_fault(void **state)
{
    (void)state;
    static const struct {
        const char *what;
        int32_t vertex_a, bone_a, vertex_b, bone_b; /* vertex_b -1: one fault only */
        bool bad_face;
        const char *section;
        int64_t index;
    } cases[] = {
        {"two vertices, the later with the larger index", 1, 10, 2, 11, false, "vertex", 1},
        {"two vertices, the earlier with the larger index", 1, 100, 6, 10, false, "vertex", 1},
        {"-2 before an index past the end", 4, -2, 5, 10, false, "vertex", 4},
        {"an SDEF vertex after a BDEF1 one", 0, 10, 5, 11, false, "vertex", 0},
        {"an SDEF vertex alone", 5, 12, -1, 0, false, "vertex", 5},
        {"a vertex and a face", 6, 10, -1, 0, true, "vertex", 6},
        {"a face alone", -1, 0, -1, 0, true, "face index", 4},
        {"bone -1 everywhere is fine", 1, -1, 2, -1, false, NULL, -1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int wide = 0; wide < 2; wide++) {
            plush_pmx_model *m = pmx_fx_rich(2.1f, PLUSH_ENC_UTF16LE, 2);
            if (wide)
                memset(m->index_sizes, 4, PLUSH_PMX_INDEX_KINDS);
            if (cases[c].vertex_a >= 0)
                m->vertices[cases[c].vertex_a].bones[0] = cases[c].bone_a;
            if (cases[c].vertex_b >= 0)
                m->vertices[cases[c].vertex_b].bones[1] = cases[c].bone_b;
            if (cases[c].bad_face)
                m->indices[4] = 12, m->indices[7] = 13;
            plush_diag d;
            plush_status st = read_raw(m, NULL, &d);
            if (!cases[c].section) {
                assert_int_equal(st, PLUSH_OK);
            } else if (st != PLUSH_E_RANGE || !section_is(&d, cases[c].section) || d.index != cases[c].index) {
                print_message("%s:\n", cases[c].what);
                print_diag("read", &d);
                fail();
            }
            /* trusted indices: the summary still counts every vertex */
            assert_int_equal(read_raw(m, &(plush_pmx_read_options){.skip_validation = true}, &d), PLUSH_OK);
            plush_pmx_free(m);
        }
}

/* A summary-only model reads like the full one where it can and is refused where it cannot. */
static void test_summary_refused(void **state)
{
    (void)state;
    plush_pmx_model *rich = pmx_fx_rich(2.1f, PLUSH_ENC_UTF8, 3);
    plush_buf b = pmx_fx_write_ok(rich, NULL, NULL);
    plush_pmx_model *full = pmx_fx_read_ok(b.data, b.size, NULL);
    plush_diag d = pmx_fx_diag();
    assert_int_equal(plush_pmx_require_geometry(full, &d), PLUSH_OK);
    assert_int_equal(d.status, PLUSH_OK);

    plush_pmx_model *m = NULL;
    d = pmx_fx_diag();
    assert_int_equal(plush_pmx_read(b.data, b.size, &(plush_pmx_read_options){.summary_only = true}, &m, &d), PLUSH_OK);
    assert_true(m->summary_only);
    assert_int_equal(m->vertex_count, rich->vertex_count);
    assert_int_equal(m->sdef_count, 2);
    size_t hist[PLUSH_PMX_QDEF + 1];
    weight_histogram(rich, hist);
    assert_memory_equal(m->summary.weight_types, hist, sizeof hist);
    assert_int_equal(m->summary.weight_types[PLUSH_PMX_SDEF], 2);
    assert_int_equal(m->summary.weight_types[PLUSH_PMX_QDEF], 1);

    d = pmx_fx_diag();
    assert_int_equal(plush_pmx_require_geometry(m, &d), PLUSH_E_NO_GEOMETRY);
    d = pmx_fx_diag();
    assert_int_equal(plush_pmx_validate(m, &d), PLUSH_E_NO_GEOMETRY);
    assert_int_equal(plush_pmx_validate(m, NULL), PLUSH_E_NO_GEOMETRY);
    /* every write path, the 2.0 downgrade (which reads the vertices first) included, leaves out as it was */
    const plush_pmx_write_options writes[] = {{0}, {.version = PLUSH_PMX_WRITE_20, .lossy = true},
                                              {.version = PLUSH_PMX_WRITE_20},
                                              {.encoding = PLUSH_PMX_WRITE_UTF16, .minimal_indices = true}};
    for (size_t i = 0; i < sizeof writes / sizeof writes[0]; i++) {
        plush_buf out = {0};
        assert_true(plush_buf_append(&out, "xy", 2));
        d = pmx_fx_diag();
        assert_int_equal(plush_pmx_write(m, &writes[i], &out, &d), PLUSH_E_NO_GEOMETRY);
        assert_int_equal(out.size, 2);
        plush_buf_free(&out);
    }
    assert_int_equal(plush_pmx_write(m, NULL, &(plush_buf){0}, NULL), PLUSH_E_NO_GEOMETRY);
    plush_pmx_free(m);
    plush_pmx_free(full);
    plush_buf_free(&b);
    plush_pmx_free(rich);
}

static void test_read_bad_header(void **state)
{
    (void)state;
    plush_pmx_model *m = pmx_fx_rich(2.1f, PLUSH_ENC_UTF16LE, 4);
    plush_diag d;
    /* additional UV count 5 (the vertices even carry five) */
    pmx_fx_raw_options o = pmx_fx_raw_defaults();
    o.additional_uv = 5;
    plush_buf b = {0};
    pmx_fx_raw_write(m, &o, &b, NULL);
    expect_read_fails(b.data, b.size, &d);
    assert_int_equal(d.status, PLUSH_E_FORMAT);
    assert_true(section_is(&d, "header"));
    assert_true(d.offset < 17);
    plush_buf_free(&b);
    /* index sizes 3, 0 and 8 for each kind */
    static const uint8_t bad_sizes[] = {3, 0, 8};
    for (int k = 0; k < PLUSH_PMX_INDEX_KINDS; k++)
        for (size_t s = 0; s < sizeof bad_sizes; s++) {
            o = pmx_fx_raw_defaults();
            o.sizes[k] = 4;
            pmx_fx_raw_write(m, &o, &b, NULL);
            b.data[HDR_INDEX_SIZES + k] = bad_sizes[s];
            expect_read_fails(b.data, b.size, &d);
            if (d.status != PLUSH_E_FORMAT || !section_is(&d, "header"))
                print_diag(kind_names[k], &d);
            assert_int_equal(d.status, PLUSH_E_FORMAT);
            assert_true(section_is(&d, "header"));
            assert_true(d.offset < 17);
            b.size = 0;
        }
    /* encoding byte 2 */
    pmx_fx_raw_write(m, NULL, &b, NULL);
    b.data[HDR_ENCODING] = 2;
    expect_read_fails(b.data, b.size, &d);
    assert_int_equal(d.status, PLUSH_E_FORMAT);
    assert_true(section_is(&d, "header"));
    /* a header that declares fewer than eight globals */
    b.data[HDR_ENCODING] = 0;
    b.data[HDR_SIZE_BYTE] = 7;
    expect_read_fails(b.data, b.size, &d);
    assert_int_equal(d.status, PLUSH_E_FORMAT);
    plush_buf_free(&b);
    plush_pmx_free(m);
}

/* 2.1-only elements inside a file that says 2.0. */
static void test_read_21_elements_in_20(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof features21 / sizeof features21[0]; i++) {
        const feature21 *f = &features21[i];
        if (f->add == add_soft || !f->version_bound)
            continue; /* a 2.0 file has no soft body section at all */
        plush_pmx_model *m = pmx_fx_minimal(2.0f);
        f->add(m);
        plush_buf b = {0};
        pmx_fx_raw_write(m, NULL, &b, NULL);
        plush_diag d;
        plush_pmx_model *out;
        plush_status st = read_bytes(b.data, b.size, NULL, &out, &d);
        if (st == PLUSH_OK) {
            print_message("2.0 file with %s reads\n", f->what);
            plush_pmx_free(out);
        }
        assert_int_not_equal(st, PLUSH_OK);
        assert_true(section_is(&d, f->section));
        plush_buf_free(&b);
        plush_pmx_free(m);
    }
}

/* QDEF occurs in real 2.0 files: read with a warning, kept, and written back as it was. */
static void test_read_qdef_in_20(void **state)
{
    (void)state;
    plush_pmx_model *m = pmx_fx_minimal(2.0f);
    add_qdef(m);
    plush_buf b = {0};
    pmx_fx_raw_write(m, NULL, &b, NULL);
    plush_diag d;
    plush_pmx_model *back = pmx_fx_read_ok(b.data, b.size, &d);
    assert_true(d.warning_count > 0);
    assert_true(back->version == 2.0f);
    pmx_fx_assert_same(m, back, PMX_FX_CMP_VERSION | PMX_FX_CMP_ENCODING);
    plush_buf again = pmx_fx_write_ok(back, NULL, NULL);
    assert_int_equal(again.size, b.size);
    assert_memory_equal(again.data, b.data, b.size);
    plush_buf_free(&again);
    plush_buf_free(&b);
    plush_pmx_free(back);
    plush_pmx_free(m);
}

/* ---- hostile and truncated bytes ------------------------------------------------------------ */

static void sweep(const plush_buf *b)
{
    size_t truncated = 0;
    for (size_t n = 0; n < b->size; n++) {
        plush_diag d;
        plush_pmx_model *out;
        plush_status st = read_bytes(b->data, n, NULL, &out, &d);
        if (st == PLUSH_OK) {
            print_message("a prefix of %zu of %zu bytes reads\n", n, b->size);
            plush_pmx_free(out);
            fail();
        }
        if (d.offset < 0 || (size_t)d.offset > n) {
            print_message("prefix %zu: offset %lld\n", n, (long long)d.offset);
            fail();
        }
        if (st == PLUSH_E_TRUNCATED)
            truncated++;
        else if (st != PLUSH_E_FORMAT)
            print_diag("prefix failed with", &d);
        assert_true(st == PLUSH_E_TRUNCATED || st == PLUSH_E_FORMAT);
    }
    print_message("%zu prefixes: %zu truncated, the rest malformed\n", b->size, truncated);
    assert_true(truncated * 2 > b->size);
}

static void test_truncation_sweep(void **state)
{
    (void)state;
    plush_pmx_model *m = pmx_fx_rich(2.1f, PLUSH_ENC_UTF16LE, 2);
    plush_buf b = pmx_fx_write_ok(m, NULL, NULL);
    sweep(&b);
    plush_buf_free(&b);
    plush_pmx_free(m);

    m = pmx_fx_rich(2.0f, PLUSH_ENC_UTF8, 1);
    memset(m->index_sizes, 2, PLUSH_PMX_INDEX_KINDS);
    b = pmx_fx_write_ok(m, NULL, NULL);
    sweep(&b);
    plush_buf_free(&b);
    plush_pmx_free(m);
}

static void test_wrong_index_size_in_header(void **state)
{
    (void)state;
    for (int k = 0; k < PLUSH_PMX_INDEX_KINDS; k++) {
        plush_pmx_model *m = pmx_fx_rich(2.1f, PLUSH_ENC_UTF16LE, 1);
        m->index_sizes[k] = 2;
        plush_buf b = pmx_fx_write_ok(m, NULL, NULL);
        assert_int_equal(b.data[HDR_INDEX_SIZES + k], 2);
        b.data[HDR_INDEX_SIZES + k] = 1;
        plush_diag d;
        plush_pmx_model *out;
        plush_status st = read_bytes(b.data, b.size, NULL, &out, &d);
        if (st == PLUSH_OK) {
            print_message("%s indices declared 1 byte, stored 2: reads\n", kind_names[k]);
            plush_pmx_free(out);
        }
        assert_int_not_equal(st, PLUSH_OK);
        /* the other way round too: declared 4, stored 2 */
        b.data[HDR_INDEX_SIZES + k] = 4;
        st = read_bytes(b.data, b.size, NULL, &out, &d);
        if (st == PLUSH_OK)
            plush_pmx_free(out);
        assert_int_not_equal(st, PLUSH_OK);
        plush_buf_free(&b);
        plush_pmx_free(m);
    }
}

static long max_rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* Counts that the remaining bytes cannot hold fail before anything is allocated for them.
 * Runs first so that the peak resident size still tells whether a big allocation happened. */
static void test_absurd_counts(void **state)
{
    (void)state;
    long rss0 = max_rss_kib();
    plush_pmx_model *m = pmx_fx_rich(2.1f, PLUSH_ENC_UTF16LE, 4);
    plush_buf b = {0};
    pmx_fx_layout lay;
    pmx_fx_raw_write(m, NULL, &b, &lay);
    plush_pmx_model *ok = pmx_fx_read_ok(b.data, b.size, NULL); /* the unpatched bytes are fine */
    plush_pmx_free(ok);
    struct { const char *what; size_t at; } fields[] = {
        {"vertex count", lay.section[PMX_FX_SEC_VERTEX]},
        {"face index count", lay.section[PMX_FX_SEC_FACE]},
        {"texture count", lay.section[PMX_FX_SEC_TEXTURE]},
        {"material count", lay.section[PMX_FX_SEC_MATERIAL]},
        {"bone count", lay.section[PMX_FX_SEC_BONE]},
        {"morph count", lay.section[PMX_FX_SEC_MORPH]},
        {"display frame count", lay.section[PMX_FX_SEC_FRAME]},
        {"rigid body count", lay.section[PMX_FX_SEC_RIGID]},
        {"joint count", lay.section[PMX_FX_SEC_JOINT]},
        {"soft body count", lay.section[PMX_FX_SEC_SOFT]},
        {"model name length", lay.name_length},
        {"bone name length", lay.first_bone_name},
        {"IK link count", lay.first_ik_link_count},
        {"morph offset count", lay.first_morph_offset_count},
        {"display frame element count", lay.first_frame_element_count},
        {"anchor count", lay.first_anchor_count},
        {"pin count", lay.first_pin_count},
    };
    static const uint32_t values[] = {0x7fffffffu, 0xffffffffu, 0x80000000u, 0x10000000u, 0x00100000u};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        assert_true(fields[i].at > 0 && fields[i].at + 4 <= b.size);
        for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
            uint8_t *c = pmx_fx_copy(b.data, b.size);
            pmx_fx_put_i32(c + fields[i].at, (int32_t)values[v]);
            plush_diag d;
            expect_read_fails(c, b.size, &d);
            if (d.status == PLUSH_E_NOMEM)
                print_message("%s 0x%x: out of memory instead of a format error\n", fields[i].what, values[v]);
            assert_int_not_equal(d.status, PLUSH_E_NOMEM);
            free(c);
        }
    }
    long grown = max_rss_kib() - rss0;
    print_message("absurd counts: peak RSS grew %ld KiB\n", grown);
    assert_true(grown < 64 * 1024);
    plush_buf_free(&b);
    plush_pmx_free(m);
}

/* ---- files ------------------------------------------------------------------------------------------ */

static void test_file_io(void **state)
{
    (void)state;
    char dir[] = "/tmp/plush-pmx-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/model.pmx", dir);
    plush_pmx_model *m = pmx_fx_rich(2.1f, PLUSH_ENC_UTF8, 3);
    plush_diag d = pmx_fx_diag();
    assert_int_equal(plush_pmx_write_file(m, NULL, path, &d), PLUSH_OK);
    plush_pmx_model *back = NULL;
    d = pmx_fx_diag();
    assert_int_equal(plush_pmx_read_file(path, NULL, &back, &d), PLUSH_OK);
    assert_non_null(d.file);
    assert_string_equal(d.file, path);
    pmx_fx_assert_same(m, back, PMX_FX_CMP_VERSION | PMX_FX_CMP_ENCODING);
    plush_pmx_free(back);

    /* a missing file: an I/O error and no model */
    char missing[80];
    snprintf(missing, sizeof missing, "%s/none.pmx", dir);
    d = pmx_fx_diag();
    back = &sentinel_model;
    assert_int_equal(plush_pmx_read_file(missing, NULL, &back, &d), PLUSH_E_IO);
    assert_null(back);

    /* a failed write leaves no file behind */
    m->bones[1].parent = 99;
    d = pmx_fx_diag();
    char other[80];
    snprintf(other, sizeof other, "%s/bad.pmx", dir);
    assert_int_equal(plush_pmx_write_file(m, NULL, other, &d), PLUSH_E_RANGE);
    assert_int_not_equal(access(other, F_OK), 0);

    unlink(path);
    rmdir(dir);
    plush_pmx_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_absurd_counts), /* first: it watches the peak memory */
        cmocka_unit_test(test_min_index_size),
        cmocka_unit_test(test_fixtures_validate),
        cmocka_unit_test(test_roundtrip_minimal),
        cmocka_unit_test(test_roundtrip_rich_21),
        cmocka_unit_test(test_roundtrip_rich_20),
        cmocka_unit_test(test_reference_bytes),
        cmocka_unit_test(test_encodings),
        cmocka_unit_test(test_version_upgrade),
        cmocka_unit_test(test_header_extra_and_trailing),
        cmocka_unit_test(test_explicit_index_sizes),
        cmocka_unit_test(test_vertex_index_boundaries),
        cmocka_unit_test(test_signed_index_boundaries),
        cmocka_unit_test(test_broken_utf16),
        cmocka_unit_test(test_broken_utf8),
        cmocka_unit_test(test_odd_utf16_length),
        cmocka_unit_test(test_built_invalid_utf8),
        cmocka_unit_test(test_read_bad_version),
        cmocka_unit_test(test_write_20_refuses_21_features),
        cmocka_unit_test(test_write_20_lossy_rich),
        cmocka_unit_test(test_write_20_lossy_dangling),
        cmocka_unit_test(test_validate_failures),
        cmocka_unit_test(test_read_failures),
        cmocka_unit_test(test_summary_first_fault),
        cmocka_unit_test(test_summary_refused),
        cmocka_unit_test(test_read_bad_header),
        cmocka_unit_test(test_read_21_elements_in_20),
        cmocka_unit_test(test_read_qdef_in_20),
        cmocka_unit_test(test_truncation_sweep),
        cmocka_unit_test(test_wrong_index_size_in_header),
        cmocka_unit_test(test_file_io),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
