/* Influence Map File 2: reading, writing, every syntax error with its line; overrides on a binding are in
 * test_scene_bind.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/im2.h"
#include "support/shared_data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static plush_diag fresh_diag(void)
{
    plush_diag d = {0};
    plush_diag_reset(&d);
    return d;
}

/* Reads text through an exact-size copy, so ASan sees any read past the end. */
static plush_status read_text(const void *text, size_t n, plush_im2_map **out, plush_diag *d)
{
    uint8_t *copy = malloc(n ? n : 1);
    assert_non_null(copy);
    memcpy(copy, text, n);
    plush_status st = plush_im2_read(copy, n, out, d);
    free(copy);
    return st;
}

static plush_im2_map *read_ok(const char *text)
{
    plush_im2_map *map = NULL;
    plush_diag d = fresh_diag();
    plush_status st = read_text(text, strlen(text), &map, &d);
    if (st != PLUSH_OK) {
        char line[600];
        plush_diag_format(&d, line, sizeof line);
        fail_msg("read failed: %s", line);
    }
    return map;
}

static void expect_entry(const plush_im2_entry *e, int32_t v, int32_t c, int32_t p, int method, uint32_t line)
{
    assert_int_equal(e->vertex, v);
    assert_int_equal(e->child, c);
    assert_int_equal(e->parent, p);
    assert_int_equal(e->method, method);
    assert_int_equal(e->line, line);
}

static void expect_same_map(const plush_im2_map *a, const plush_im2_map *b)
{
    assert_int_equal(a->part_count, b->part_count);
    for (size_t p = 0; p < a->part_count; p++) {
        const plush_im2_part *x = &a->parts[p], *y = &b->parts[p];
        assert_int_equal(x->name.len, y->name.len);
        assert_memory_equal(x->name.s, y->name.s, x->name.len);
        assert_int_equal(x->entry_count, y->entry_count);
        for (size_t k = 0; k < x->entry_count; k++) {
            const plush_im2_entry *e = &x->entries[k], *f = &y->entries[k];
            assert_int_equal(e->vertex, f->vertex);
            assert_int_equal(e->child, f->child);
            assert_int_equal(e->parent, f->parent);
            assert_int_equal(e->method, f->method);
        }
    }
}

static plush_buf write_ok(const plush_im2_map *map)
{
    plush_buf out = {0};
    plush_diag d = fresh_diag();
    assert_int_equal(plush_im2_write(map, &out, &d), PLUSH_OK);
    return out;
}

#define SJIS_BUTTON "\x83\x7B\x83\x5E\x83\x93" /* ボタン: trail bytes '{' and '^' */

static const char sample[] = "InfluenceMapFile2 : ver1001\r\n"
                             "\r\n"
                             "PARTSTART\r\n"
                             "body\r\n"
                             "0, 12, -1, CALC_ONESKIN0\r\n"
                             "1, 13, 12, CALC_NOSKIN0\r\n"
                             "PARTEND\r\n"
                             "\r\n"
                             "PARTSTART\r\n"
                             SJIS_BUTTON "\r\n"
                             "-1, 20, -1, CALC_NOSKIN0\r\n"
                             "PARTEND\r\n"
                             "PARTSTART\r\n"
                             "empty\r\n"
                             "PARTEND\r\n";

static void test_read(void **state)
{
    (void)state;
    plush_im2_map *map = read_ok(sample);
    assert_int_equal(map->part_count, 3);
    const plush_im2_part *p = &map->parts[0];
    assert_string_equal(p->name.s, "body");
    assert_int_equal(p->line, 4);
    assert_int_equal(p->offset, strstr(sample, "body") - sample);
    assert_int_equal(p->entry_count, 2);
    expect_entry(&p->entries[0], 0, 12, -1, PLUSH_IM2_ONESKIN, 5);
    expect_entry(&p->entries[1], 1, 13, 12, PLUSH_IM2_NOSKIN, 6);
    assert_int_equal(p->entries[1].offset, strstr(sample, "1, 13") - sample);
    p = &map->parts[1];
    assert_string_equal(p->name.s, "ボタン");
    assert_null(p->name.raw);
    assert_int_equal(p->entry_count, 1);
    expect_entry(&p->entries[0], -1, 20, -1, PLUSH_IM2_NOSKIN, 11);
    assert_int_equal(map->parts[2].entry_count, 0);
    assert_null(map->parts[2].entries);
    plush_im2_free(map);
}

/* Spacing, line ends and blank lines as hand-edited files have them. */
static void test_read_lenient(void **state)
{
    (void)state;
    plush_im2_map *map = read_ok("InfluenceMapFile2:ver1001  \n"
                                 "PARTSTART\r"
                                 " spaced name \r\n"
                                 "\t2 ,\t40, 39 ,CALC_ONESKIN0  \n"
                                 "\n"
                                 "   \t\n"
                                 "+4,41,-2147483648,CALC_NOSKIN0\n"
                                 "  PARTEND  \n"
                                 "\n");
    assert_int_equal(map->part_count, 1);
    assert_string_equal(map->parts[0].name.s, " spaced name ");
    assert_int_equal(map->parts[0].entry_count, 2);
    expect_entry(&map->parts[0].entries[0], 2, 40, 39, PLUSH_IM2_ONESKIN, 4);
    expect_entry(&map->parts[0].entries[1], 4, 41, INT32_MIN, PLUSH_IM2_NOSKIN, 7);
    plush_im2_free(map);

    map = read_ok("InfluenceMapFile2 : ver1001");
    assert_int_equal(map->part_count, 0);
    plush_im2_free(map);
}

static void test_round_trip(void **state)
{
    (void)state;
    plush_im2_map *map = read_ok(sample);
    plush_buf once = write_ok(map);
    /* The writer's layout is the sample's up to the blank line after every part. */
    assert_memory_equal(once.data, sample, strlen("InfluenceMapFile2 : ver1001\r\n\r\nPARTSTART\r\nbody\r\n"));
    plush_im2_map *back = NULL;
    plush_diag d = fresh_diag();
    assert_int_equal(read_text(once.data, once.size, &back, &d), PLUSH_OK);
    expect_same_map(map, back);
    plush_buf twice = write_ok(back);
    assert_int_equal(once.size, twice.size);
    assert_memory_equal(once.data, twice.data, once.size);
    plush_buf_free(&once);
    plush_buf_free(&twice);
    plush_im2_free(back);
    plush_im2_free(map);
}

/* A name that is not Shift-JIS reads with U+FFFD and a warning, and writes back as the same bytes. */
static void test_broken_name(void **state)
{
    (void)state;
    static const char text[] = "InfluenceMapFile2 : ver1001\r\nPARTSTART\r\nab\x81\xFF" "c\x83\r\n"
                               "0, 1, -1, CALC_ONESKIN0\r\nPARTEND\r\n";
    plush_im2_map *map = NULL;
    plush_diag d = fresh_diag();
    assert_int_equal(read_text(text, sizeof text - 1, &map, &d), PLUSH_OK);
    assert_int_equal(d.warning_count, 1);
    assert_non_null(strstr(d.warnings[0], "line 3"));
    const plush_str *name = &map->parts[0].name;
    assert_non_null(name->raw);
    assert_int_equal(name->raw_len, 6);
    assert_non_null(strstr(name->s, "\xEF\xBF\xBD"));
    plush_buf out = write_ok(map);
    static const char kept[] = "PARTSTART\r\nab\x81\xFF" "c\x83\r\n";
    bool found = false;
    for (size_t i = 0; i + sizeof kept - 1 <= out.size && !found; i++)
        found = memcmp(out.data + i, kept, sizeof kept - 1) == 0;
    assert_true(found);
    plush_buf_free(&out);
    plush_im2_free(map);
}

typedef struct bad_case {
    const char *text;
    plush_status status;
    uint32_t line;
    const char *at;      /* the text at the reported offset */
} bad_case;

#define H "InfluenceMapFile2 : ver1001\r\n"

static void test_errors(void **state)
{
    (void)state;
    static const bad_case cases[] = {
        {"", PLUSH_E_TRUNCATED, 1, ""},
        {"InfluenceMapFile : ver1001\r\n", PLUSH_E_FORMAT, 1, "InfluenceMapFile :"},
        {"InfluenceMapFile2 : ver1001x\r\n", PLUSH_E_FORMAT, 1, "Influence"},
        {"\r\n" H, PLUSH_E_FORMAT, 1, "\r\n"},
        {"InfluenceMapFile2 : ver1004\r\n", PLUSH_E_VERSION, 1, "Influence"},
        {"InfluenceMapFile2 : ver999\r\n", PLUSH_E_VERSION, 1, "Influence"},
        {H "PARTSTART\r\nbody\r\n0, 1, -1, CALC_SKIN0\r\nPARTEND\r\n", PLUSH_E_FORMAT, 4, "CALC_SKIN0"},
        {H "PARTSTART\r\nbody\r\n0, 1, -1, calc_oneskin0\r\nPARTEND\r\n", PLUSH_E_FORMAT, 4, "calc_"},
        {H "PARTSTART\r\nbody\r\n0, 1, -1,\r\nPARTEND\r\n", PLUSH_E_FORMAT, 4, "\r\nPARTEND"},
        {H "PARTSTART\r\nbody\r\n0, 1, -1\r\nPARTEND\r\n", PLUSH_E_FORMAT, 4, "\r\nPARTEND"},
        {H "PARTSTART\r\nbody\r\n0 1, -1, CALC_NOSKIN0\r\nPARTEND\r\n", PLUSH_E_FORMAT, 4, "1, -1"},
        {H "PARTSTART\r\nbody\r\nx, 1, -1, CALC_NOSKIN0\r\nPARTEND\r\n", PLUSH_E_FORMAT, 4, "x, 1"},
        {H "PARTSTART\r\nbody\r\n0, -, -1, CALC_NOSKIN0\r\nPARTEND\r\n", PLUSH_E_FORMAT, 4, "-, -1"},
        {H "PARTSTART\r\nbody\r\n0, 2147483648, -1, CALC_NOSKIN0\r\nPARTEND\r\n", PLUSH_E_FORMAT, 4, "2147"},
        {H "PARTSTART\r\nbody\r\n0, 1, -1, CALC_NOSKIN0 x\r\nPARTEND\r\n", PLUSH_E_FORMAT, 4, "x\r\n"},
        {H "PARTSTART\r\nbody\r\n0.5, 1, -1, CALC_NOSKIN0\r\nPARTEND\r\n", PLUSH_E_FORMAT, 4, ".5"},
        {H "PARTSTART\r\nbody\r\n0, 1, -1, CALC_NOSKIN0\r\n", PLUSH_E_TRUNCATED, 2, "PARTSTART"},
        {H "\r\nPARTSTART\r\n", PLUSH_E_TRUNCATED, 3, "PARTSTART"},
        {H "PARTSTART\r\nbody\r\nPARTSTART\r\neyes\r\nPARTEND\r\n", PLUSH_E_FORMAT, 4, "PARTSTART\r\neyes"},
        {H "PARTEND\r\n", PLUSH_E_FORMAT, 2, "PARTEND"},
        {H "PARTSTART\r\nbody\r\nPARTEND\r\nPARTEND\r\n", PLUSH_E_FORMAT, 5, "PARTEND\r\n"},
        {H "0, 1, -1, CALC_NOSKIN0\r\n", PLUSH_E_FORMAT, 2, "0, 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const bad_case *c = &cases[i];
        size_t n = strlen(c->text);
        plush_im2_map *map = (plush_im2_map *)1;
        plush_diag d = fresh_diag();
        d.file = "x.im2";
        plush_status st = read_text(c->text, n, &map, &d);
        if (st != c->status || d.index != (int64_t)c->line)
            fail_msg("case %zu: status %d line %lld, expected %d line %u (%s)", i, st, (long long)d.index, c->status,
                     c->line, d.message);
        assert_null(map);
        assert_string_equal(d.section, "line");
        assert_true(d.offset >= 0 && d.offset <= (int64_t)n);
        size_t want = strlen(c->at);
        if (want && (size_t)d.offset + want <= n)
            assert_memory_equal(c->text + d.offset, c->at, want);
        char line[600];
        plush_diag_format(&d, line, sizeof line);
        char prefix[64];
        snprintf(prefix, sizeof prefix, "x.im2: line %u: ", c->line);
        assert_memory_equal(line, prefix, strlen(prefix));
    }
    /* A NUL byte is reported at its own byte. */
    plush_im2_map *map = NULL;
    plush_diag d = fresh_diag();
    static const char nul[] = H "PARTSTART\r\nbo\0dy\r\nPARTEND\r\n";
    assert_int_equal(read_text(nul, sizeof nul - 1, &map, &d), PLUSH_E_FORMAT);
    assert_null(map);
    assert_int_equal(d.index, 3);
    assert_int_equal(d.offset, (int64_t)strlen(H "PARTSTART\r\nbo"));
}

/* Every prefix of a valid file reads or fails with a line number, never past the end. */
static void test_truncation_sweep(void **state)
{
    (void)state;
    size_t n = strlen(sample);
    for (size_t k = 0; k <= n; k++) {
        plush_im2_map *map = NULL;
        plush_diag d = fresh_diag();
        plush_status st = read_text(sample, k, &map, &d);
        if (st == PLUSH_OK) {
            plush_im2_free(map);
            continue;
        }
        assert_null(map);
        assert_true(d.index >= 1);
        assert_true(d.offset >= 0 && d.offset <= (int64_t)k);
    }
}

static void test_write_errors(void **state)
{
    (void)state;
    plush_im2_map *map = plush_im2_create();
    assert_non_null(map);
    plush_im2_entry entry = {.vertex = 0, .child = 1, .parent = -1, .method = PLUSH_IM2_NOSKIN};
    plush_im2_part part = {.name = {.s = "a\nb", .len = 3}, .entry_count = 1, .entries = &entry};
    map->parts = &part;
    map->part_count = 1;
    plush_buf out = {0};
    plush_buf_append(&out, "keep", 4);
    plush_diag d = fresh_diag();
    assert_int_equal(plush_im2_write(map, &out, &d), PLUSH_E_ENCODING);
    assert_int_equal(out.size, 4);
    assert_string_equal(d.section, "part");

    part.name = (plush_str){.s = "teddy \xF0\x9F\xA7\xB8", .len = 10};
    d = fresh_diag();
    assert_int_equal(plush_im2_write(map, &out, &d), PLUSH_E_ENCODING);
    assert_int_equal(out.size, 4);

    part.name = (plush_str){.s = "ok", .len = 2};
    entry.method = 7;
    d = fresh_diag();
    assert_int_equal(plush_im2_write(map, &out, &d), PLUSH_E_ARGUMENT);
    assert_int_equal(out.size, 4);

    entry.method = PLUSH_IM2_ONESKIN;
    d = fresh_diag();
    assert_int_equal(plush_im2_write(map, &out, &d), PLUSH_OK);
    static const char want[] = "keep" PLUSH_IM2_HEADER "\r\n\r\nPARTSTART\r\nok\r\n0, 1, -1, CALC_ONESKIN0\r\nPARTEND\r\n\r\n";
    assert_int_equal(out.size, sizeof want - 1);
    assert_memory_equal(out.data, want, out.size);
    plush_buf_free(&out);
    map->parts = NULL;
    map->part_count = 0;
    plush_im2_free(map);
    plush_im2_free(NULL);
}

/* The fuzz seeds double as regression inputs: each reads and round-trips. */
static void test_seed_files(void **state)
{
    (void)state;
    static const char *const seeds[] = {"tests/crashers/im2/seed_basic.im2", "tests/crashers/im2/seed_sjis.im2",
                                        "tests/crashers/im2/seed_lf.im2"};
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        plush_im2_map *map = NULL, *back = NULL;
        plush_diag d = fresh_diag();
        assert_int_equal(plush_im2_read_file(seeds[i], &map, &d), PLUSH_OK);
        assert_true(map->part_count > 0);
        plush_buf out = write_ok(map);
        assert_int_equal(read_text(out.data, out.size, &back, &d), PLUSH_OK);
        expect_same_map(map, back);
        plush_buf_free(&out);
        plush_im2_free(back);
        plush_im2_free(map);
    }
    plush_im2_map *map = NULL;
    plush_diag d = fresh_diag();
    assert_int_equal(plush_im2_read_file("tests/crashers/im2/seed_sjis.im2", &map, &d), PLUSH_OK);
    assert_string_equal(map->parts[0].name.s, "ボタン 目");
    assert_string_equal(map->parts[1].name.s, "スカート");
    plush_im2_free(map);
    d = fresh_diag();
    assert_int_equal(plush_im2_read_file("tests/crashers/im2/no such file.im2", &map, &d), PLUSH_E_IO);
    assert_null(map);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read),
        cmocka_unit_test(test_read_lenient),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_broken_name),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_truncation_sweep),
        cmocka_unit_test(test_write_errors),
        cmocka_unit_test(test_seed_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
