/* VPD reader: a Shift-JIS pose built here byte by byte, malformed variants, every prefix, and the crasher
 * inputs the fuzzer found. Run from the project root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/vpd.h"
#include "plush/sys/core.h"
#include "core/platform.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CRASHER_DIR "tests/crashers/vpd"

/* CP932 bytes. Names that end in an escape are followed by a new literal, so a hex digit cannot join it. */
#define SJIS_CENTER "\x83\x5A\x83\x93\x83\x5E\x81\x5B"             /* センター */
#define SJIS_BONE_MA "\x83\x7B\x81\x5B\x83\x93\x83\x7D"            /* ボーンマ: trail bytes '{' and '}' */
#define SJIS_BLINK "\x82\xDC\x82\xCE\x82\xBD\x82\xAB"              /* まばたき */
#define SJIS_PARENT "\x90\x65\x83\x74\x83\x40\x83\x43\x83\x8B\x96\xBC" /* 親ファイル名 */
#define SJIS_COUNT "\x91\x8D\x83\x7C\x81\x5B\x83\x59\x83\x7B\x81\x5B\x83\x93\x90\x94" /* 総ポーズボーン数 */

static const char pose_text[] =
    "Vocaloid Pose Data file\r\n"
    "\r\n"
    "miku.osm;\t\t// " SJIS_PARENT "\r\n"
    "2;\t\t\t\t// " SJIS_COUNT "\r\n"
    "\r\n"
    "Bone0{" SJIS_CENTER "\r\n"
    "  0.500000,-1.250000,2.000000;\t\t\t\t// trans x,y,z\r\n"
    "  0.000000,0.000000,0.707107,0.707107;\t\t// Quaternion x,y,z,w\r\n"
    "}\r\n"
    "\r\n"
    "Bone1{" SJIS_BONE_MA "\n"
    "  0,0,-3e2;\n"
    "  -0.5 , 0.5,\t0.5,+.5 ;\n"
    "}\n"
    "\n"
    "Morph0{" SJIS_BLINK "\r\n"
    "  0.750000;\r\n"
    "}\r\n";
#define POSE_SIZE (sizeof pose_text - 1)

/* ---- helpers ----------------------------------------------------------------------------------- */

/* An exact-size copy (no NUL behind it) so that ASan sees any read past the end. */
static uint8_t *exact_copy(const void *src, size_t n)
{
    uint8_t *p = malloc(n ? n : 1);
    assert_non_null(p);
    memcpy(p, src, n);
    return p;
}

static size_t find(const char *text, size_t size, const char *what)
{
    size_t n = strlen(what);
    for (size_t i = 0; i + n <= size; i++)
        if (memcmp(text + i, what, n) == 0)
            return i;
    fail_msg("\"%s\" not in the fixture", what);
    return 0;
}

/* The fixture with the first `from` replaced by `to`, in an exact-size buffer. */
static uint8_t *variant(const char *from, const char *to, size_t *size)
{
    size_t at = find(pose_text, POSE_SIZE, from), fl = strlen(from), tl = strlen(to);
    *size = POSE_SIZE - fl + tl;
    uint8_t *p = malloc(*size);
    assert_non_null(p);
    memcpy(p, pose_text, at);
    memcpy(p + at, to, tl);
    memcpy(p + at + tl, pose_text + at + fl, POSE_SIZE - at - fl);
    return p;
}

static plush_vpd_pose *read_ok(const uint8_t *data, size_t size)
{
    plush_diag diag = {0};
    plush_vpd_pose *pose = NULL;
    if (plush_vpd_read(data, size, &pose, &diag) != PLUSH_OK)
        fail_msg("read failed: %s (at byte %lld)", diag.message, (long long)diag.offset);
    assert_non_null(pose);
    return pose;
}

/* Reads a malformed text; checks the clean failure and returns the diagnostic. */
static plush_diag read_bad(const uint8_t *data, size_t size, plush_status want)
{
    plush_diag diag = {0};
    plush_vpd_pose *pose = (plush_vpd_pose *)&diag;
    plush_status st = plush_vpd_read(data, size, &pose, &diag);
    assert_int_equal(st, want);
    assert_null(pose);
    assert_true(diag.offset >= 0 && (size_t)diag.offset <= size);
    return diag;
}

/* ---- reading ----------------------------------------------------------------------------------- */

static void check_pose(const plush_vpd_pose *p)
{
    assert_string_equal(p->model_name.s, "miku.osm");
    assert_int_equal(p->bone_count, 2);
    assert_string_equal(p->bones[0].name.s, "センター");
    assert_null(p->bones[0].name.raw);
    assert_true(p->bones[0].translation[0] == 0.5f);
    assert_true(p->bones[0].translation[1] == -1.25f);
    assert_true(p->bones[0].translation[2] == 2.0f);
    assert_true(p->bones[0].rotation[0] == 0.0f);
    assert_true(p->bones[0].rotation[2] == 0.707107f);
    assert_true(p->bones[0].rotation[3] == 0.707107f);
    assert_string_equal(p->bones[1].name.s, "ボーンマ");
    assert_true(p->bones[1].translation[2] == -300.0f);
    assert_true(p->bones[1].rotation[0] == -0.5f);
    assert_true(p->bones[1].rotation[3] == 0.5f);
    assert_int_equal(p->morph_count, 1);
    assert_string_equal(p->morphs[0].name.s, "まばたき");
    assert_true(p->morphs[0].weight == 0.75f);
}

static void test_read(void **state)
{
    (void)state;
    uint8_t *data = exact_copy(pose_text, POSE_SIZE);
    plush_vpd_pose *p = read_ok(data, POSE_SIZE);
    check_pose(p);
    plush_vpd_free(p);
    free(data);
    plush_vpd_free(NULL);
}

static void test_read_older_and_loose(void **state)
{
    (void)state;
    /* No morphs (older files), LF only, blank lines and comments anywhere, no final line break. */
    static const char text[] = "// a pose\nVocaloid Pose Data file // signature\n\n  model.osm ;\n\n0;\n\n// nothing";
    uint8_t *data = exact_copy(text, sizeof text - 1);
    plush_vpd_pose *p = read_ok(data, sizeof text - 1);
    assert_string_equal(p->model_name.s, "model.osm");
    assert_int_equal(p->bone_count, 0);
    assert_int_equal(p->morph_count, 0);
    plush_vpd_free(p);
    free(data);

    /* Many blocks: the arrays grow. */
    char big[64 * 1024];
    int n = snprintf(big, sizeof big, "Vocaloid Pose Data file\nm.osm;\n100;\n");
    for (int i = 0; i < 100; i++)
        n += snprintf(big + n, sizeof big - (size_t)n, "Bone%d{b%d\n%d,0,0;\n0,0,0,1;\n}\nMorph%d{m%d\n0.5;\n}\n", i,
                      i, i, i, i);
    data = exact_copy(big, (size_t)n);
    p = read_ok(data, (size_t)n);
    assert_int_equal(p->bone_count, 100);
    assert_int_equal(p->morph_count, 100);
    assert_string_equal(p->bones[99].name.s, "b99");
    assert_true(p->bones[99].translation[0] == 99.0f);
    assert_string_equal(p->morphs[42].name.s, "m42");
    plush_vpd_free(p);
    free(data);
}

static void test_read_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/plush_vpd_XXXXXX";
    assert_true(plush__os_mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/pose.vpd", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(pose_text, 1, POSE_SIZE, f), POSE_SIZE);
    fclose(f);
    plush_diag diag = {0};
    plush_vpd_pose *p = NULL;
    assert_int_equal(plush_vpd_read_file(path, &p, &diag), PLUSH_OK);
    assert_ptr_equal(diag.file, path);
    check_pose(p);
    plush_vpd_free(p);
    unlink(path);
    rmdir(dir);

    plush_diag missing = {0};
    assert_int_equal(plush_vpd_read_file(path, &p, &missing), PLUSH_E_IO);
    assert_null(p);
}

/* Numbers in every spelling a pose file may use read to the float the text names. */
static void test_number_spellings(void **state)
{
    (void)state;
    static const char *const text[] = {"0", "-0.5", "+1.25", "1e2", "2.5E-1", "0.000001", "123456.75", ".5", "3."};
    static const float want[] = {0.0f, -0.5f, 1.25f, 100.0f, 0.25f, 0.000001f, 123456.75f, 0.5f, 3.0f};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char vpd[512];
        int n = snprintf(vpd, sizeof vpd,
                         "Vocaloid Pose Data file\r\n\r\nm.osm;\r\n1;\r\n\r\nBone0{b\r\n  %s,0,0;\r\n  0,0,0,1;\r\n}\r\n",
                         text[i]);
        uint8_t *data = exact_copy((const uint8_t *)vpd, (size_t)n);
        plush_vpd_pose *p = read_ok(data, (size_t)n);
        assert_true(p->bones[0].translation[0] == want[i]);
        plush_vpd_free(p);
        free(data);
    }
}

/* ---- malformed --------------------------------------------------------------------------------- */

static void test_bad_count(void **state)
{
    (void)state;
    size_t size;
    uint8_t *d = variant("2;\t", "3;\t", &size);
    plush_diag diag = read_bad(d, size, PLUSH_E_FORMAT);
    assert_int_equal(diag.offset, find(pose_text, POSE_SIZE, "2;\t"));
    free(d);

    d = variant("2;\t", "x;\t", &size);
    diag = read_bad(d, size, PLUSH_E_FORMAT);
    assert_int_equal(diag.offset, find(pose_text, POSE_SIZE, "2;\t"));
    free(d);

    d = variant("2;\t", "99999999999;\t", &size);
    diag = read_bad(d, size, PLUSH_E_FORMAT);
    assert_int_equal(diag.offset, find(pose_text, POSE_SIZE, "2;\t"));
    free(d);
}

static void test_bad_numbers(void **state)
{
    (void)state;
    size_t line = find(pose_text, POSE_SIZE, "  -0.5 , 0.5");
    const char *bad[] = {"  -0.5x, 0.5", "  -0.5 ; 0.5", "  1e999, 0.5", "  -.e, 0.5", "  --1 , 0.5",
                         "  , 0.5", "  nan , 0.5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t size;
        uint8_t *d = variant("  -0.5 , 0.5", bad[i], &size);
        plush_diag diag = read_bad(d, size, PLUSH_E_FORMAT);
        assert_int_equal(diag.offset, line);
        assert_string_equal(diag.section, "bone");
        assert_int_equal(diag.index, 1);
        free(d);
    }

    /* A number longer than any float needs. */
    char longer[128] = "  ";
    memset(longer + 2, '1', 80);
    size_t size;
    uint8_t *d = variant("  -0.5 , 0.5", longer, &size);
    plush_diag diag = read_bad(d, size, PLUSH_E_FORMAT);
    assert_int_equal(diag.offset, line);
    free(d);

    /* Three numbers where a quaternion needs four. */
    d = variant("0.5,+.5 ;", "0.5 ;", &size);
    diag = read_bad(d, size, PLUSH_E_FORMAT);
    assert_int_equal(diag.offset, line);
    free(d);

    /* The morph weight. */
    d = variant("0.750000;", "0.75.0;", &size);
    diag = read_bad(d, size, PLUSH_E_FORMAT);
    assert_string_equal(diag.section, "morph");
    assert_int_equal(diag.index, 0);
    assert_int_equal(diag.offset, find(pose_text, POSE_SIZE, "  0.750000;"));
    free(d);
}

static void test_bad_structure(void **state)
{
    (void)state;
    size_t size;
    uint8_t *d = variant("Vocaloid Pose Data file", "Vocaloid Pose Data fil_", &size);
    plush_diag diag = read_bad(d, size, PLUSH_E_FORMAT);
    assert_int_equal(diag.offset, 0);
    free(d);

    d = variant("Vocaloid Pose Data file", "Vocaloid Pose Data files", &size);
    read_bad(d, size, PLUSH_E_FORMAT);
    free(d);

    d = variant("miku.osm;", "miku.osm", &size);
    diag = read_bad(d, size, PLUSH_E_FORMAT);
    assert_int_equal(diag.offset, find(pose_text, POSE_SIZE, "miku.osm"));
    free(d);

    size_t block = find(pose_text, POSE_SIZE, "Bone1{");
    d = variant("Bone1{", "Bone1 ", &size);
    diag = read_bad(d, size, PLUSH_E_FORMAT);
    assert_int_equal(diag.offset, block);
    assert_int_equal(diag.index, 1);
    free(d);

    d = variant("Bone1{", "Bones{", &size);
    diag = read_bad(d, size, PLUSH_E_FORMAT);
    assert_int_equal(diag.offset, block);
    free(d);

    d = variant("Bone1{", "Frame1{", &size);
    diag = read_bad(d, size, PLUSH_E_FORMAT);
    assert_int_equal(diag.offset, block);
    free(d);

    /* A block that is never closed before the next one starts. */
    d = variant("}\n\nMorph0", " \n\nMorph0", &size);
    diag = read_bad(d, size, PLUSH_E_FORMAT);
    assert_int_equal(diag.offset, find(pose_text, POSE_SIZE, "Morph0"));
    assert_string_equal(diag.section, "bone");
    free(d);
}

static void test_truncated_block(void **state)
{
    (void)state;
    size_t morph = find(pose_text, POSE_SIZE, "Morph0{");
    size_t close = find(pose_text + morph, POSE_SIZE - morph, "\n}") + morph + 1;
    uint8_t *d = exact_copy(pose_text, close);
    plush_diag diag = read_bad(d, close, PLUSH_E_TRUNCATED);
    assert_int_equal(diag.offset, morph);
    assert_string_equal(diag.section, "morph");
    assert_int_equal(diag.index, 0);
    free(d);

    size_t bone1 = find(pose_text, POSE_SIZE, "Bone1{");
    size_t cut = find(pose_text, POSE_SIZE, "0.5,\t0.5") + 2;
    d = exact_copy(pose_text, cut);
    diag = read_bad(d, cut, PLUSH_E_TRUNCATED);
    assert_int_equal(diag.offset, bone1);
    assert_int_equal(diag.index, 1);
    free(d);
}

/* Every prefix: a prefix is a valid pose exactly where it holds both bone blocks and ends outside any
 * block (between the last bone and the morph block, or after the morph block). */
static void test_truncation_sweep(void **state)
{
    (void)state;
    size_t bone1 = find(pose_text, POSE_SIZE, "Bone1{");
    /* "\n}": Bone1's name ends in a '}' trail byte, which must not count as the block's end. */
    size_t bones_end = find(pose_text + bone1, POSE_SIZE - bone1, "\n}") + bone1 + 2;
    size_t morph = find(pose_text, POSE_SIZE, "Morph0{");
    size_t morph_end = find(pose_text + morph, POSE_SIZE - morph, "\n}") + morph + 2;
    for (size_t len = 0; len <= POSE_SIZE; len++) {
        uint8_t *d = exact_copy(pose_text, len);
        plush_diag diag = {0};
        plush_vpd_pose *p = NULL;
        plush_status st = plush_vpd_read(d, len, &p, &diag);
        bool valid = (len >= bones_end && len <= morph) || len >= morph_end;
        if (valid) {
            if (st != PLUSH_OK)
                fail_msg("prefix %zu: %s", len, diag.message);
            assert_int_equal(p->bone_count, 2);
            assert_int_equal(p->morph_count, len >= morph_end ? 1 : 0);
        } else {
            if (st == PLUSH_OK)
                fail_msg("prefix %zu read as a pose", len);
            assert_null(p);
            assert_true(diag.offset >= 0 && (size_t)diag.offset <= len);
        }
        plush_vpd_free(p);
        free(d);
    }
}

/* Bytes that are not text at all, and a name cut inside a character. */
static void test_odd_bytes(void **state)
{
    (void)state;
    size_t size;
    uint8_t *d = variant(SJIS_CENTER, "\x83\x5A\x83", &size);
    plush_vpd_pose *p = read_ok(d, size);
    assert_string_equal(p->bones[0].name.s, "セ");
    assert_non_null(p->bones[0].name.raw);
    plush_vpd_free(p);
    free(d);

    uint8_t junk[256];
    for (int i = 0; i < 256; i++)
        junk[i] = (uint8_t)(255 - i);
    read_bad(junk, sizeof junk, PLUSH_E_FORMAT);
    read_bad(NULL, 0, PLUSH_E_TRUNCATED);

    /* Without a diagnostic the status still tells what happened. */
    plush_vpd_pose *p2 = NULL;
    d = variant("2;\t", "3;\t", &size);
    assert_int_equal(plush_vpd_read(d, size, &p2, NULL), PLUSH_E_FORMAT);
    assert_null(p2);
    assert_int_equal(plush_vpd_read(d, 40, &p2, NULL), PLUSH_E_TRUNCATED);
    free(d);
}

static void test_crashers(void **state)
{
    (void)state;
    DIR *dir = opendir(CRASHER_DIR);
    if (!dir)
        return;
    struct dirent *e;
    while ((e = readdir(dir))) {
        if (e->d_name[0] == '.')
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", CRASHER_DIR, e->d_name);
        plush_diag diag = {0};
        uint8_t *data;
        size_t size;
        assert_int_equal(plush_file_read(path, &data, &size, &diag), PLUSH_OK);
        uint8_t *copy = exact_copy(data, size);
        plush_vpd_pose *p = NULL;
        if (plush_vpd_read(copy, size, &p, &diag) != PLUSH_OK) {
            assert_null(p);
            assert_true(diag.offset <= (int64_t)size);
        }
        plush_vpd_free(p);
        free(copy);
        free(data);
    }
    closedir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read),
        cmocka_unit_test(test_read_older_and_loose),
        cmocka_unit_test(test_read_file),
        cmocka_unit_test(test_number_spellings),
        cmocka_unit_test(test_bad_count),
        cmocka_unit_test(test_bad_numbers),
        cmocka_unit_test(test_bad_structure),
        cmocka_unit_test(test_truncated_block),
        cmocka_unit_test(test_truncation_sweep),
        cmocka_unit_test(test_odd_bytes),
        cmocka_unit_test(test_crashers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
