/* VMD reader and writer: the real files in ../shared/data/mmd, fixtures built here, every prefix of both,
 * and the crasher inputs the fuzzer found. Run from the project root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/vmd.h"
#include "plush/sys/core.h"
#include "support/shared_data.h"
#include "core/platform.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CRASHER_DIR "tests/crashers/vmd"

/* The VMD rows of ../shared/data/mmd/SOURCES.md (counts read by an independent reader). */
static const struct vmd_row {
    const char *path;
    const char *model;
    size_t bones, morphs, cameras, lights, shadows, properties;
} vmd_rows[] = {
    {"mmd_base/サンプルモーション3.vmd", "v2配布用素体03", 113, 0, 0, 0, 0, 0},
    {"mmd_base/サンプルモーション4.vmd", "LatミクVer2.31N", 87, 0, 0, 0, 0, 0},
    {"mmd_base/サンプルモーション_0046.vmd", "初音ミク準標準", 97, 0, 0, 0, 0, 0},
    {"mmd_base/ボーン_左腕.vmd", "初音ミク準標準", 1, 0, 0, 0, 0, 0},
    {"mmd_base/ボーン_顎.vmd", "和洋折衷", 1, 0, 0, 0, 0, 0},
    {"mmd_base/モーフ_UV回転.vmd", "柱", 0, 1, 0, 0, 0, 0},
    {"mmd_base/モーフ_あ.vmd", "モーフチェック", 0, 1, 0, 0, 0, 0},
    {"mmd_base/モーフ_あ分離.vmd", "CSV Convert Model", 0, 2, 0, 0, 0, 0},
    {"mmd_base/モーフ_しいたけ.vmd", "あげぱん式陸奥守吉行", 0, 1, 0, 0, 0, 0},
    {"mmd_base/モーフ_はぅ.vmd", "モーフチェック", 0, 1, 0, 0, 0, 0},
    {"mmd_base/モーフ_照れ.vmd", "モーフチェック", 0, 1, 0, 0, 0, 0},
    {"mmd_base/平面3つ01.vmd", "Null_00", 1, 0, 0, 0, 0, 0},
    {"mmd_base/平面3つ02.vmd", "Null_00", 4, 0, 0, 0, 0, 0},
    {"mmd_base/平面3つ03.vmd", "Null_00", 4, 0, 0, 0, 0, 0},
    {"mmd_base/曲げ柱tex01.vmd", "柱", 4, 0, 0, 0, 0, 0},
    {"mmd_base/曲げ柱tex02.vmd", "柱", 5, 0, 0, 0, 0, 0},
    {"unity-mmd-loader/mmt_test_model_test_motion.vmd", "MMTテスト用モデル", 125, 0, 0, 0, 0, 0},
    {"unity-mmd-loader/test_1bone_cube_motion.vmd", "テスト用モデル_arm", 6, 0, 0, 0, 0, 0},
    {"unity-mmd-loader/test_append_bone.vmd", "test_given_bone", 13, 0, 0, 0, 0, 1},
    {"unity-mmd-loader/test_vertex_morph_motion.vmd", "test_vertex_morph", 0, 2, 0, 0, 0, 0},
};
enum { VMD_ROWS = sizeof vmd_rows / sizeof vmd_rows[0] };

/* ---- helpers ----------------------------------------------------------------------------------- */

static uint8_t *load(const char *path, size_t *size)
{
    plush_diag diag = {.file = path};
    uint8_t *data = NULL;
    assert_int_equal(plush_file_read(path, &data, size, &diag), PLUSH_OK);
    return data;
}

static plush_str text(const char *s) { return (plush_str){.s = s, .len = (uint32_t)strlen(s)}; }

static void assert_text(plush_str s, const char *want)
{
    assert_non_null(s.s);
    assert_string_equal(s.s, want);
    assert_int_equal(s.len, strlen(want));
}

/* Writes a motion into a fresh buffer; the caller frees it. */
static plush_buf write_ok(const plush_vmd_motion *m, bool truncate)
{
    plush_buf buf = {0};
    plush_diag diag = {0};
    plush_vmd_write_options opt = {.truncate_names = truncate};
    plush_status st = plush_vmd_write(m, &opt, &buf, &diag);
    if (st != PLUSH_OK)
        fail_msg("write failed: %s", diag.message);
    return buf;
}

static plush_vmd_motion *read_ok(const uint8_t *data, size_t size)
{
    plush_diag diag = {0};
    plush_vmd_motion *m = NULL;
    plush_status st = plush_vmd_read(data, size, &m, &diag);
    if (st != PLUSH_OK)
        fail_msg("read failed: %s (at byte %lld)", diag.message, (long long)diag.offset);
    assert_non_null(m);
    return m;
}

/* Collects files ending in ext under dir, any depth. */
typedef struct path_list {
    char *paths[512];
    size_t count;
} path_list;

static void walk(const char *dir, const char *ext, path_list *list)
{
    plush__os_dir *d = plush__os_dir_open(dir); /* UTF-8 names on Windows too */
    if (!d)
        return;
    const char *e;
    while ((e = plush__os_dir_next(d)) && list->count < 512) {
        if (e[0] == '.')
            continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, e);
        plush__os_info st;
        if (!plush__os_stat(path, true, &st))
            continue;
        size_t len = strlen(e), el = strlen(ext);
        if (st.kind == PLUSH__OS_DIR)
            walk(path, ext, list);
        else if (st.kind == PLUSH__OS_FILE && len >= el && strcmp(e + len - el, ext) == 0)
            list->paths[list->count++] = strdup(path);
    }
    plush__os_dir_close(d);
}

static void free_list(path_list *list)
{
    for (size_t i = 0; i < list->count; i++)
        free(list->paths[i]);
    list->count = 0;
}

/* ---- real files -------------------------------------------------------------------------------- */

static void test_real_files(void **state)
{
    (void)state;
    path_list list = {.count = 0};
    walk(SHARED_MMD, ".vmd", &list);
    assert_true(list.count >= VMD_ROWS);
    bool seen[VMD_ROWS] = {false};
    for (size_t f = 0; f < list.count; f++) {
        const char *rel = list.paths[f] + strlen(SHARED_MMD "/");
        size_t row = VMD_ROWS;
        for (size_t i = 0; i < VMD_ROWS; i++)
            if (strcmp(vmd_rows[i].path, rel) == 0)
                row = i;
        if (row == VMD_ROWS)
            fail_msg("%s is not in the SOURCES.md table of this test", rel);
        seen[row] = true;
        const struct vmd_row *want = &vmd_rows[row];

        size_t size;
        uint8_t *data = load(list.paths[f], &size);
        plush_vmd_motion *m = read_ok(data, size);
        assert_text(m->model_name, want->model);
        assert_int_equal(m->bone_key_count, want->bones);
        assert_int_equal(m->morph_key_count, want->morphs);
        assert_int_equal(m->camera_key_count, want->cameras);
        assert_int_equal(m->light_key_count, want->lights);
        assert_int_equal(m->shadow_key_count, want->shadows);
        assert_int_equal(m->property_key_count, want->properties);
        for (size_t i = 0; i < m->bone_key_count; i++)
            assert_non_null(m->bone_keys[i].name.s);

        plush_buf out = write_ok(m, false);
        assert_int_equal(out.size, size);
        assert_memory_equal(out.data, data, size);
        plush_buf_free(&out);
        plush_vmd_free(m);
        free(data);
    }
    for (size_t i = 0; i < VMD_ROWS; i++)
        if (!seen[i])
            fail_msg("%s listed in SOURCES.md was not found", vmd_rows[i].path);
    free_list(&list);
}

static void test_read_file_and_names(void **state)
{
    (void)state;
    plush_diag diag = {0};
    plush_vmd_motion *m = NULL;
    const char *path = SHARED_MMD "/unity-mmd-loader/test_append_bone.vmd";
    assert_int_equal(plush_vmd_read_file(path, &m, &diag), PLUSH_OK);
    assert_ptr_equal(diag.file, path);
    assert_int_equal(m->sections_present, PLUSH_VMD_SECTION_PROPERTIES);
    assert_text(m->bone_keys[0].name, "全ての親");
    /* Keys naming the same bone share the text. */
    size_t shared = 0;
    for (size_t i = 1; i < m->bone_key_count; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(m->bone_keys[i].name.s, m->bone_keys[j].name.s) == 0) {
                assert_ptr_equal(m->bone_keys[i].name.s, m->bone_keys[j].name.s);
                shared++;
            }
    assert_true(shared > 0);
    assert_int_equal(m->property_keys[0].visible, 1);
    assert_int_equal(plush_vmd_last_frame(m), 5);
    plush_vmd_free(m);

    plush_diag missing = {0};
    m = (plush_vmd_motion *)&missing; /* must be reset to NULL */
    assert_int_equal(plush_vmd_read_file("no/such/file.vmd", &m, &missing), PLUSH_E_IO);
    assert_null(m);
    assert_string_equal(missing.file, "no/such/file.vmd");
}

/* ---- a motion with every section and field ---------------------------------------------------- */

/* "センターセンタ" and the lead byte of "ー": a name cut inside a character, as MMD leaves them. */
static const uint8_t cut_name[15] = {0x83, 0x5A, 0x83, 0x93, 0x83, 0x5E, 0x81, 0x5B,
                                     0x83, 0x5A, 0x83, 0x93, 0x83, 0x5E, 0x81};
/* "abc", its NUL and the 0xFD filler some writers leave behind. */
static const uint8_t padded_name[15] = {'a', 'b', 'c', 0, 0xFD, 0xFD, 0xFD, 0xFD, 0xFD, 0xFD, 0xFD, 0xFD, 0xFD, 0xFD, 0xFD};

static plush_vmd_motion *build_motion(void)
{
    plush_vmd_motion *m = plush_vmd_create();
    assert_non_null(m);
    plush_arena *a = plush_vmd_arena(m);
    m->model_name = text("初音ミク");

    m->bone_key_count = 5;
    m->bone_keys = plush_arena_array(a, 5, sizeof *m->bone_keys);
    const char *bone_names[5] = {"センター", "右足首ＩＫ_1234", "センターセンタ", "abc", "センター"};
    for (size_t i = 0; i < 5; i++) {
        plush_vmd_bone_key *k = &m->bone_keys[i];
        k->name = text(bone_names[i]);
        k->frame = (uint32_t)(i * 7 + 1);
        for (int c = 0; c < 3; c++)
            k->translation[c] = (float)i + 0.25f * (float)c;
        for (int c = 0; c < 4; c++)
            k->rotation[c] = c == 3 ? 0.5f : -0.5f / (float)(i + 1);
        for (int b = 0; b < 64; b++)
            k->interpolation[b] = (uint8_t)((b * 3 + i) & 0x7F);
    }
    memcpy(m->bone_keys[2].name_raw, cut_name, 15);
    memcpy(m->bone_keys[3].name_raw, padded_name, 15);

    m->morph_key_count = 2;
    m->morph_keys = plush_arena_array(a, 2, sizeof *m->morph_keys);
    m->morph_keys[0] = (plush_vmd_morph_key){.name = text("まばたき"), .frame = 3, .weight = 0.5f};
    m->morph_keys[1] = (plush_vmd_morph_key){.name = text("あ"), .frame = 900, .weight = 1.0f};

    m->camera_key_count = 2;
    m->camera_keys = plush_arena_array(a, 2, sizeof *m->camera_keys);
    for (size_t i = 0; i < 2; i++) {
        plush_vmd_camera_key *k = &m->camera_keys[i];
        k->frame = (uint32_t)(10 * i);
        k->distance = -45.0f + (float)i;
        for (int c = 0; c < 3; c++) {
            k->position[c] = 1.5f * (float)c;
            k->rotation[c] = 0.1f * (float)(c + 1);
        }
        for (int b = 0; b < 24; b++)
            k->interpolation[b] = (uint8_t)(20 + b + i);
        k->view_angle = 30 + (uint32_t)i;
        k->perspective_off = (uint8_t)i;
    }

    m->light_key_count = 1;
    m->light_keys = plush_arena_array(a, 1, sizeof *m->light_keys);
    m->light_keys[0] = (plush_vmd_light_key){.frame = 4, .color = {0.6f, 0.6f, 0.6f}, .direction = {-0.5f, -1.0f, 0.5f}};

    m->shadow_key_count = 3;
    m->shadow_keys = plush_arena_array(a, 3, sizeof *m->shadow_keys);
    for (uint8_t i = 0; i < 3; i++)
        m->shadow_keys[i] = (plush_vmd_shadow_key){.frame = 2u * i, .mode = i, .distance = 0.0875f + (float)i};

    m->property_key_count = 2;
    m->property_keys = plush_arena_array(a, 2, sizeof *m->property_keys);
    plush_vmd_ik_state *ik = plush_arena_array(a, 3, sizeof *ik);
    ik[0] = (plush_vmd_ik_state){.name = text("右足ＩＫ"), .enabled = 1};
    ik[1] = (plush_vmd_ik_state){.name = text("左足ＩＫ"), .enabled = 0};
    ik[2] = (plush_vmd_ik_state){.name = text("右つま先ＩＫ"), .enabled = 1};
    m->property_keys[0] = (plush_vmd_property_key){.frame = 0, .visible = 1, .ik_count = 3, .ik = ik};
    m->property_keys[1] = (plush_vmd_property_key){.frame = 1200, .visible = 0, .ik_count = 0, .ik = NULL};
    return m;
}

static void assert_same_motion(const plush_vmd_motion *a, const plush_vmd_motion *b)
{
    assert_int_equal(a->header_version, b->header_version);
    assert_string_equal(a->model_name.s, b->model_name.s);
    assert_int_equal(a->bone_key_count, b->bone_key_count);
    for (size_t i = 0; i < a->bone_key_count; i++) {
        const plush_vmd_bone_key *x = &a->bone_keys[i], *y = &b->bone_keys[i];
        assert_string_equal(x->name.s, y->name.s);
        assert_int_equal(x->frame, y->frame);
        assert_memory_equal(x->translation, y->translation, sizeof x->translation);
        assert_memory_equal(x->rotation, y->rotation, sizeof x->rotation);
        assert_memory_equal(x->interpolation, y->interpolation, sizeof x->interpolation);
    }
    assert_int_equal(a->morph_key_count, b->morph_key_count);
    for (size_t i = 0; i < a->morph_key_count; i++) {
        assert_string_equal(a->morph_keys[i].name.s, b->morph_keys[i].name.s);
        assert_int_equal(a->morph_keys[i].frame, b->morph_keys[i].frame);
        assert_true(a->morph_keys[i].weight == b->morph_keys[i].weight);
    }
    assert_int_equal(a->camera_key_count, b->camera_key_count);
    for (size_t i = 0; i < a->camera_key_count; i++)
        assert_memory_equal(&a->camera_keys[i], &b->camera_keys[i], sizeof a->camera_keys[i]);
    assert_int_equal(a->light_key_count, b->light_key_count);
    for (size_t i = 0; i < a->light_key_count; i++)
        assert_memory_equal(&a->light_keys[i], &b->light_keys[i], sizeof a->light_keys[i]);
    assert_int_equal(a->shadow_key_count, b->shadow_key_count);
    for (size_t i = 0; i < a->shadow_key_count; i++) {
        assert_int_equal(a->shadow_keys[i].frame, b->shadow_keys[i].frame);
        assert_int_equal(a->shadow_keys[i].mode, b->shadow_keys[i].mode);
        assert_true(a->shadow_keys[i].distance == b->shadow_keys[i].distance);
    }
    assert_int_equal(a->property_key_count, b->property_key_count);
    for (size_t i = 0; i < a->property_key_count; i++) {
        const plush_vmd_property_key *x = &a->property_keys[i], *y = &b->property_keys[i];
        assert_int_equal(x->frame, y->frame);
        assert_int_equal(x->visible, y->visible);
        assert_int_equal(x->ik_count, y->ik_count);
        for (uint32_t j = 0; j < x->ik_count; j++) {
            assert_string_equal(x->ik[j].name.s, y->ik[j].name.s);
            assert_int_equal(x->ik[j].enabled, y->ik[j].enabled);
        }
    }
}

static void test_built_round_trip(void **state)
{
    (void)state;
    plush_vmd_motion *src = build_motion();
    plush_buf first = write_ok(src, false);
    size_t want = 50 + 4 + 5 * 111 + 4 + 2 * 23 + 4 + 2 * 61 + 4 + 28 + 4 + 3 * 9 + 4 + (9 + 3 * 21) + 9;
    assert_int_equal(first.size, want);
    assert_memory_equal(first.data, "Vocaloid Motion Data 0002\0", 26);

    plush_vmd_motion *back = read_ok(first.data, first.size);
    assert_same_motion(src, back);
    assert_int_equal(back->sections_present, PLUSH_VMD_SECTION_PROPERTIES);
    assert_int_equal(back->trailing_size, 0);
    assert_int_equal(plush_vmd_last_frame(back), 1200);

    /* Stored fields: the name exactly 15 bytes long, the cut one, the padded one. */
    const uint8_t ik15[15] = {0x89, 0x45, 0x91, 0xAB, 0x8E, 0xF1, 0x82, 0x68, 0x82, 0x6A, '_', '1', '2', '3', '4'};
    assert_memory_equal(back->bone_keys[1].name_raw, ik15, 15);
    assert_memory_equal(back->bone_keys[2].name_raw, cut_name, 15);
    assert_non_null(back->bone_keys[2].name.raw); /* read as far as it decodes, the bytes kept */
    assert_memory_equal(back->bone_keys[3].name_raw, padded_name, 15);
    assert_null(back->bone_keys[0].name.raw);
    /* Equal stored names share one text. */
    assert_ptr_equal(back->bone_keys[0].name.s, back->bone_keys[4].name.s);
    const uint8_t miku[20] = {0x8F, 0x89, 0x89, 0xB9, 0x83, 0x7E, 0x83, 0x4E};
    assert_memory_equal(back->model_name_raw, miku, 20);

    /* What was read writes back byte for byte, padding and cut characters included. */
    plush_buf second = write_ok(back, false);
    assert_int_equal(second.size, first.size);
    assert_memory_equal(second.data, first.data, first.size);

    plush_buf_free(&first);
    plush_buf_free(&second);
    plush_vmd_free(back);
    plush_vmd_free(src);
}

static void test_renamed_key_is_encoded(void **state)
{
    (void)state;
    plush_vmd_motion *src = build_motion();
    plush_buf first = write_ok(src, false);
    plush_vmd_motion *m = read_ok(first.data, first.size);
    /* A changed name no longer matches its stored field: it is encoded and zero-padded. */
    plush_vmd_bone_key *k = &m->bone_keys[3];
    k->name = text("xy");
    plush_buf second = write_ok(m, false);
    plush_vmd_motion *back = read_ok(second.data, second.size);
    const uint8_t want[15] = {'x', 'y'};
    assert_memory_equal(back->bone_keys[3].name_raw, want, 15);
    assert_text(back->bone_keys[3].name, "xy");
    plush_vmd_free(back);
    plush_vmd_free(m);
    plush_vmd_free(src);
    plush_buf_free(&first);
    plush_buf_free(&second);
}

static void test_v1_header(void **state)
{
    (void)state;
    plush_vmd_motion *m = plush_vmd_create();
    m->header_version = 1;
    memset(m->header_raw, 0, sizeof m->header_raw);
    m->model_name = text("ABCDEFGHIJ");
    m->sections_present = PLUSH_VMD_SECTION_MORPHS;
    m->morph_key_count = 1;
    m->morph_keys = plush_arena_array(plush_vmd_arena(m), 1, sizeof *m->morph_keys);
    m->morph_keys[0] = (plush_vmd_morph_key){.name = text("a"), .frame = 2, .weight = 0.25f};
    plush_buf buf = write_ok(m, false);
    assert_int_equal(buf.size, 30 + 10 + 4 + 4 + 23);
    assert_memory_equal(buf.data, "Vocaloid Motion Data file\0", 26);
    plush_vmd_motion *back = read_ok(buf.data, buf.size);
    assert_int_equal(back->header_version, 1);
    assert_text(back->model_name, "ABCDEFGHIJ");
    assert_int_equal(back->sections_present, PLUSH_VMD_SECTION_MORPHS);
    assert_same_motion(m, back);
    plush_buf again = write_ok(back, false);
    assert_int_equal(again.size, buf.size);
    assert_memory_equal(again.data, buf.data, buf.size);

    /* Eleven bytes fit a version-2 name but not a version-1 one. */
    m->model_name = text("ABCDEFGHIJK");
    plush_buf none = {0};
    plush_diag diag = {0};
    assert_int_equal(plush_vmd_write(m, NULL, &none, &diag), PLUSH_E_RANGE);
    assert_string_equal(diag.section, "header");
    assert_int_equal(none.size, 0);
    plush_buf_free(&none);

    plush_buf_free(&buf);
    plush_buf_free(&again);
    plush_vmd_free(back);
    plush_vmd_free(m);
}

static void test_file_ending_after_morphs(void **state)
{
    (void)state;
    plush_vmd_motion *m = build_motion();
    m->camera_key_count = m->light_key_count = m->shadow_key_count = m->property_key_count = 0;
    m->sections_present = PLUSH_VMD_SECTION_MORPHS;
    plush_buf buf = write_ok(m, false);
    assert_int_equal(buf.size, 50 + 4 + 5 * 111 + 4 + 2 * 23);
    plush_vmd_motion *back = read_ok(buf.data, buf.size);
    assert_int_equal(back->sections_present, PLUSH_VMD_SECTION_MORPHS);
    assert_int_equal(back->camera_key_count, 0);
    assert_null(back->camera_keys);
    assert_same_motion(m, back);
    plush_buf again = write_ok(back, false);
    assert_int_equal(again.size, buf.size);
    assert_memory_equal(again.data, buf.data, buf.size);
    plush_buf_free(&again);

    /* A light key makes the writer go on through the light section, with empty cameras before it. */
    plush_vmd_light_key light = {.frame = 9, .color = {1, 1, 1}};
    back->light_keys = &light;
    back->light_key_count = 1;
    again = write_ok(back, false);
    assert_int_equal(again.size, buf.size + 4 + 4 + 28);
    plush_vmd_motion *more = read_ok(again.data, again.size);
    assert_int_equal(more->sections_present, PLUSH_VMD_SECTION_LIGHTS);
    assert_int_equal(more->light_key_count, 1);
    assert_int_equal(more->light_keys[0].frame, 9);
    plush_vmd_free(more);
    plush_buf_free(&again);

    plush_buf_free(&buf);
    plush_vmd_free(back);
    plush_vmd_free(m);
}

static void test_name_too_long(void **state)
{
    (void)state;
    plush_vmd_motion *m = build_motion();
    /* 24 bytes of CP932 in a 15-byte field; the 15th byte would be half of "ー". */
    m->bone_keys[1].name = text("センターセンターセンター");
    plush_buf buf = {0};
    plush_diag diag = {0};
    assert_int_equal(plush_vmd_write(m, NULL, &buf, &diag), PLUSH_E_RANGE);
    assert_string_equal(diag.section, "bone key");
    assert_int_equal(diag.index, 1);
    assert_int_equal(buf.size, 0);
    plush_buf_free(&buf);

    buf = write_ok(m, true);
    plush_vmd_motion *back = read_ok(buf.data, buf.size);
    assert_text(back->bone_keys[1].name, "センターセンタ");
    assert_null(back->bone_keys[1].name.raw); /* no broken character was written */
    assert_int_equal(back->bone_keys[1].name_raw[14], 0);

    /* IK names have a 20-byte field. */
    m->bone_keys[1].name = text("ok");
    plush_vmd_ik_state *ik = &m->property_keys[0].ik[2];
    ik->name = text("abcdefghijklmnopqrstu");
    plush_diag diag2 = {0};
    plush_buf none = {0};
    assert_int_equal(plush_vmd_write(m, NULL, &none, &diag2), PLUSH_E_RANGE);
    assert_int_equal(diag2.index, 0);
    assert_string_equal(diag2.section, "property key");
    plush_buf_free(&none);

    plush_vmd_free(back);
    plush_buf_free(&buf);
    plush_vmd_free(m);
}

static void test_unencodable_name(void **state)
{
    (void)state;
    plush_vmd_motion *m = build_motion();
    m->morph_keys[1].name = text("\xF0\x9F\x98\x80");
    plush_buf buf = {0};
    plush_diag diag = {0};
    assert_int_equal(plush_vmd_write(m, NULL, &buf, &diag), PLUSH_E_ENCODING);
    assert_string_equal(diag.section, "morph key");
    assert_int_equal(diag.index, 1);
    assert_int_equal(buf.size, 0);
    plush_diag diag2 = {0};
    plush_vmd_write_options opt = {.truncate_names = true};
    assert_int_equal(plush_vmd_write(m, &opt, &buf, &diag2), PLUSH_E_ENCODING);
    plush_buf_free(&buf);
    plush_vmd_free(m);
}

static void test_write_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/plush_vmd_XXXXXX";
    assert_true(plush__os_mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/out.vmd", dir);
    plush_vmd_motion *m = build_motion();
    plush_diag diag = {0};
    assert_int_equal(plush_vmd_write_file(m, NULL, path, &diag), PLUSH_OK);
    plush_vmd_motion *back = NULL;
    assert_int_equal(plush_vmd_read_file(path, &back, &diag), PLUSH_OK);
    assert_same_motion(m, back);
    plush_vmd_free(back);
    plush_vmd_free(m);
    unlink(path);
    rmdir(dir);
}

static void test_empty_and_trailing(void **state)
{
    (void)state;
    /* A fresh motion: a header and six empty sections. */
    plush_vmd_motion *m = plush_vmd_create();
    assert_int_equal(plush_vmd_last_frame(m), 0);
    plush_buf buf = write_ok(m, false);
    assert_int_equal(buf.size, 50 + 6 * 4);
    plush_vmd_free(m);

    const uint8_t extra[5] = {1, 2, 3, 4, 5};
    plush_buf_append(&buf, extra, sizeof extra);
    plush_diag diag = {0};
    m = NULL;
    assert_int_equal(plush_vmd_read(buf.data, buf.size, &m, &diag), PLUSH_OK);
    assert_int_equal(diag.warning_count, 1);
    assert_int_equal(m->trailing_size, 5);
    assert_memory_equal(m->trailing, extra, 5);
    plush_buf again = write_ok(m, false);
    assert_int_equal(again.size, buf.size);
    assert_memory_equal(again.data, buf.data, buf.size);
    plush_buf_free(&again);
    plush_buf_free(&buf);
    plush_vmd_free(m);
}

/* ---- corrupt input ---------------------------------------------------------------------------- */

static plush_status read_fails(const uint8_t *data, size_t size, plush_diag *diag)
{
    plush_vmd_motion *m = (plush_vmd_motion *)diag; /* anything but NULL: the reader must clear it */
    plush_status st = plush_vmd_read(data, size, &m, diag);
    assert_int_not_equal(st, PLUSH_OK);
    assert_null(m);
    assert_int_equal(diag->status, st);
    assert_true(diag->offset >= 0 && (size_t)diag->offset <= size);
    return st;
}

static void test_corrupt(void **state)
{
    (void)state;
    plush_vmd_motion *src = build_motion();
    plush_buf good = write_ok(src, false);
    uint8_t *d = malloc(good.size);

    memcpy(d, good.data, good.size);
    d[0] = 'X';
    plush_diag diag = {0};
    assert_int_equal(read_fails(d, good.size, &diag), PLUSH_E_FORMAT);
    assert_int_equal(diag.offset, 0);
    assert_string_equal(diag.section, "header");

    memcpy(d, good.data, good.size);
    d[24] = '3';
    diag = (plush_diag){0};
    assert_int_equal(read_fails(d, good.size, &diag), PLUSH_E_VERSION);

    /* A count no file of this size can hold is refused before anything is allocated. */
    memcpy(d, good.data, good.size);
    memset(d + 50, 0xFF, 4);
    diag = (plush_diag){0};
    assert_int_equal(read_fails(d, good.size, &diag), PLUSH_E_TRUNCATED);
    assert_string_equal(diag.section, "bone key");
    assert_int_equal(diag.index, (good.size - 54) / 111);

    /* NaN in bone key 2's rotation w. */
    memcpy(d, good.data, good.size);
    size_t at = 54 + 2 * 111 + 15 + 4 + 12 + 12;
    memset(d + at, 0xFF, 4);
    diag = (plush_diag){0};
    assert_int_equal(read_fails(d, good.size, &diag), PLUSH_E_FORMAT);
    assert_int_equal(diag.offset, at);
    assert_int_equal(diag.index, 2);
    assert_string_equal(diag.section, "bone key");

    /* Infinite morph weight. */
    memcpy(d, good.data, good.size);
    at = 54 + 5 * 111 + 4 + 23 + 19;
    const float inf = INFINITY;
    memcpy(d + at, &inf, 4);
    diag = (plush_diag){0};
    assert_int_equal(read_fails(d, good.size, &diag), PLUSH_E_FORMAT);
    assert_int_equal(diag.offset, at);
    assert_int_equal(diag.index, 1);
    assert_string_equal(diag.section, "morph key");

    /* Property key 0 claims more IK states than there are bytes. */
    memcpy(d, good.data, good.size);
    size_t props = 54 + 5 * 111 + 4 + 2 * 23 + 4 + 2 * 61 + 4 + 28 + 4 + 3 * 9;
    memset(d + props + 4 + 5, 0xEE, 4);
    diag = (plush_diag){0};
    assert_int_equal(read_fails(d, good.size, &diag), PLUSH_E_TRUNCATED);
    assert_string_equal(diag.section, "property key");
    assert_int_equal(diag.index, 0);

    /* Without a diagnostic the status still tells what happened. */
    plush_vmd_motion *m = NULL;
    assert_int_equal(plush_vmd_read(good.data, 60, &m, NULL), PLUSH_E_TRUNCATED);
    assert_null(m);
    assert_int_equal(plush_vmd_read(good.data, 10, &m, NULL), PLUSH_E_TRUNCATED);

    free(d);
    plush_buf_free(&good);
    plush_vmd_free(src);
}

/* ---- truncation sweep ------------------------------------------------------------------------- */

/* Every prefix, from an exact-size copy so that ASan sees any read past its end. A prefix is a valid
 * (older) file exactly where it ends after the header or a complete section, or anywhere behind the
 * last section (the rest is then trailing data); every other prefix fails cleanly. */
static void sweep(const uint8_t *data, size_t size)
{
    plush_vmd_motion *full = read_ok(data, size);
    assert_int_equal(full->sections_present, PLUSH_VMD_SECTION_PROPERTIES);
    size_t ends[PLUSH_VMD_SECTION_PROPERTIES + 1];
    ends[0] = full->header_version == 1 ? 40 : 50;
    ends[1] = ends[0] + 4 + full->bone_key_count * 111;
    ends[2] = ends[1] + 4 + full->morph_key_count * 23;
    ends[3] = ends[2] + 4 + full->camera_key_count * 61;
    ends[4] = ends[3] + 4 + full->light_key_count * 28;
    ends[5] = ends[4] + 4 + full->shadow_key_count * 9;
    ends[6] = ends[5] + 4;
    for (size_t i = 0; i < full->property_key_count; i++)
        ends[6] += 9 + 21 * (size_t)full->property_keys[i].ik_count;
    assert_int_equal(ends[6] + full->trailing_size, size);

    for (size_t len = 0; len <= size; len++) {
        uint8_t *copy = malloc(len ? len : 1);
        memcpy(copy, data, len);
        int section = -1;
        for (int s = 0; s <= PLUSH_VMD_SECTION_PROPERTIES; s++)
            if (len == ends[s])
                section = s;
        if (len > ends[6])
            section = PLUSH_VMD_SECTION_PROPERTIES;
        plush_diag diag = {0};
        plush_vmd_motion *m = NULL;
        plush_status st = plush_vmd_read(copy, len, &m, &diag);
        if (section >= 0) {
            if (st != PLUSH_OK)
                fail_msg("prefix %zu of %zu: %s", len, size, diag.message);
            assert_int_equal(m->sections_present, section);
            assert_int_equal(m->bone_key_count, section >= 1 ? full->bone_key_count : 0);
            assert_int_equal(m->property_key_count, section >= 6 ? full->property_key_count : 0);
            assert_int_equal(m->trailing_size, len > ends[6] ? len - ends[6] : 0);
            plush_buf out = write_ok(m, false);
            assert_int_equal(out.size, len);
            assert_memory_equal(out.data, data, len);
            plush_buf_free(&out);
            plush_vmd_free(m);
        } else {
            if (st == PLUSH_OK)
                fail_msg("prefix %zu of %zu read as a motion", len, size);
            assert_null(m);
            assert_true(diag.offset >= 0 && (size_t)diag.offset <= len);
        }
        free(copy);
    }
    plush_vmd_free(full);
}

static void test_truncation_built(void **state)
{
    (void)state;
    plush_vmd_motion *m = build_motion();
    plush_buf buf = write_ok(m, false);
    sweep(buf.data, buf.size);
    const uint8_t extra[3] = {9, 9, 9};
    plush_buf_append(&buf, extra, sizeof extra);
    sweep(buf.data, buf.size);
    m->header_version = 1;
    m->model_name = text("v1");
    plush_buf v1 = write_ok(m, false);
    sweep(v1.data, v1.size);
    plush_buf_free(&v1);
    plush_buf_free(&buf);
    plush_vmd_free(m);
}

static void test_truncation_real(void **state)
{
    (void)state;
    const char *files[] = {
        SHARED_MMD "/unity-mmd-loader/test_append_bone.vmd",
        SHARED_MMD "/unity-mmd-loader/test_vertex_morph_motion.vmd",
        SHARED_MMD "/mmd_base/サンプルモーション3.vmd",
        SHARED_MMD "/mmd_base/モーフ_あ分離.vmd",
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        size_t size;
        uint8_t *data = load(files[i], &size);
        sweep(data, size);
        free(data);
    }
}

/* ---- inputs the fuzzer found ------------------------------------------------------------------ */

static void test_crashers(void **state)
{
    (void)state;
    path_list list = {.count = 0};
    walk(CRASHER_DIR, "", &list);
    for (size_t i = 0; i < list.count; i++) {
        size_t size;
        uint8_t *data = load(list.paths[i], &size);
        uint8_t *copy = malloc(size ? size : 1);
        memcpy(copy, data, size);
        plush_diag diag = {0};
        plush_vmd_motion *m = NULL;
        if (plush_vmd_read(copy, size, &m, &diag) == PLUSH_OK) {
            plush_buf out = {0};
            plush_diag wdiag = {0};
            assert_int_equal(plush_vmd_write(m, NULL, &out, &wdiag), PLUSH_OK);
            assert_int_equal(out.size, size);
            assert_memory_equal(out.data, data, size);
            plush_buf_free(&out);
        } else {
            assert_null(m);
            assert_true(diag.offset <= (int64_t)size);
        }
        plush_vmd_free(m);
        free(copy);
        free(data);
    }
    free_list(&list);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_files),
        cmocka_unit_test(test_read_file_and_names),
        cmocka_unit_test(test_built_round_trip),
        cmocka_unit_test(test_renamed_key_is_encoded),
        cmocka_unit_test(test_v1_header),
        cmocka_unit_test(test_file_ending_after_morphs),
        cmocka_unit_test(test_name_too_long),
        cmocka_unit_test(test_unencodable_name),
        cmocka_unit_test(test_write_file),
        cmocka_unit_test(test_empty_and_trailing),
        cmocka_unit_test(test_corrupt),
        cmocka_unit_test(test_truncation_built),
        cmocka_unit_test(test_truncation_real),
        cmocka_unit_test(test_crashers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
