/* Influence Map File 2: reading, writing, every syntax error with its line, and overrides on a binding
 * (NOSKIN, ONESKIN, a model bone as child, -1 for a whole part, every semantic error with its line). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/im2.h"
#include "support/pmx_fixture.h"
#include "plush/scene.h"
#include "plush/sys/core.h"
#include "plush/sys/pmx.h"
#include "plush/sys/proxy.h"
#include "support/mesh_fixture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    plush_diag d = pmx_fx_diag();
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
    plush_diag d = pmx_fx_diag();
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
    plush_diag d = pmx_fx_diag();
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
    plush_diag d = pmx_fx_diag();
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
        plush_diag d = pmx_fx_diag();
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
    plush_diag d = pmx_fx_diag();
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
        plush_diag d = pmx_fx_diag();
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
    plush_diag d = pmx_fx_diag();
    assert_int_equal(plush_im2_write(map, &out, &d), PLUSH_E_ENCODING);
    assert_int_equal(out.size, 4);
    assert_string_equal(d.section, "part");

    part.name = (plush_str){.s = "teddy \xF0\x9F\xA7\xB8", .len = 10};
    d = pmx_fx_diag();
    assert_int_equal(plush_im2_write(map, &out, &d), PLUSH_E_ENCODING);
    assert_int_equal(out.size, 4);

    part.name = (plush_str){.s = "ok", .len = 2};
    entry.method = 7;
    d = pmx_fx_diag();
    assert_int_equal(plush_im2_write(map, &out, &d), PLUSH_E_ARGUMENT);
    assert_int_equal(out.size, 4);

    entry.method = PLUSH_IM2_ONESKIN;
    d = pmx_fx_diag();
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
        plush_diag d = pmx_fx_diag();
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
    plush_diag d = pmx_fx_diag();
    assert_int_equal(plush_im2_read_file("tests/crashers/im2/seed_sjis.im2", &map, &d), PLUSH_OK);
    assert_string_equal(map->parts[0].name.s, "ボタン 目");
    assert_string_equal(map->parts[1].name.s, "スカート");
    plush_im2_free(map);
    d = pmx_fx_diag();
    assert_int_equal(plush_im2_read_file("tests/crashers/im2/no such file.im2", &map, &d), PLUSH_E_IO);
    assert_null(map);
}

/* ---- overrides on a binding -------------------------------------------------------------------- */

enum { BONES = 2, BODY = 0, EYES = 2 };

static plush_scene_binding *bind_plush(const plush_pmx_model *m, bool seed)
{
    plush_scene_binding *b = NULL;
    plush_diag d = pmx_fx_diag();
    plush_scene_bind_options o = {.proxy = {.seed = seed}};
    assert_int_equal(plush_scene_bind(m, &o, &b, &d), PLUSH_OK);
    return b;
}

/* Row of the part vertex k of material (numbered by first use). */
static size_t row_of(const plush_pmx_model *m, const plush_scene_binding *b, size_t material, size_t k)
{
    plush_arena arena = {0};
    plush_diag d = pmx_fx_diag();
    uint32_t *order;
    size_t n;
    assert_int_equal(plush_pmx_material_vertices(m, material, &arena, &order, &n, &d), PLUSH_OK);
    assert_true(k < n);
    int64_t row = plush_scene_binding_row(b, order[k]);
    plush_arena_free(&arena);
    assert_true(row >= 0);
    return (size_t)row;
}

static bool same_row(const plush_proxy_binding *a, const plush_proxy_binding *b, size_t row)
{
    return memcmp(a->triangles[row], b->triangles[row], sizeof a->triangles[row]) == 0 &&
           memcmp(a->weights[row], b->weights[row], sizeof a->weights[row]) == 0 &&
           memcmp(a->distances[row], b->distances[row], sizeof a->distances[row]) == 0 &&
           a->proxy_share[row] == b->proxy_share[row] &&
           (!a->percent || memcmp(a->percent[row], b->percent[row], sizeof a->percent[row]) == 0);
}

static void expect_pinned(const plush_scene_binding *b, size_t row, int32_t t)
{
    const plush_proxy_binding *pb = b->binding;
    assert_int_equal(pb->triangles[row][0], t);
    for (int k = 1; k < PLUSH_PROXY_INFLUENCES; k++) {
        assert_int_equal(pb->triangles[row][k], -1);
        assert_true(pb->weights[row][k] == 0.0f);
    }
    assert_true(pb->weights[row][0] == 1.0f);
    assert_true(pb->proxy_share[row] == 1.0f);
    if (pb->percent)
        assert_int_equal(pb->percent[row][0], 100);
    const float *p = b->model->vertices[b->vertices[row]].position;
    const uint32_t *tri = b->proxy.triangles[t];
    float d = pb->seed ? plush_proxy_seed_distance(p, b->proxy.nodes[tri[0]], b->proxy.nodes[tri[1]], b->proxy.nodes[tri[2]])
                       : plush_proxy_point_triangle_distance(p, b->proxy.nodes[tri[0]], b->proxy.nodes[tri[1]],
                                                            b->proxy.nodes[tri[2]]);
    assert_true(fabsf(pb->distances[row][0] - d) <= 1e-6f * (1 + d));
}

static const char overrides[] = H "PARTSTART\r\n"
                                  "eyes\r\n"
                                  "-1, 7, -1, CALC_NOSKIN0\r\n"  /* every eye vertex on triangle 5 alone */
                                  "PARTEND\r\n"
                                  "PARTSTART\r\n"
                                  "body\r\n"
                                  "0, 1, 0, CALC_ONESKIN0\r\n"   /* a model bone: back to bone skinning */
                                  "1, 9, -1, CALC_NOSKIN0\r\n"   /* triangle 7 alone */
                                  "2, 9, -1, CALC_NOSKIN0\r\n"
                                  "2, 3, -1, CALC_ONESKIN0\r\n"  /* a later line: the computed blend again */
                                  "3, 0, -1, CALC_NOSKIN0\r\n"   /* a model bone, rigid: bone skinning too */
                                  "PARTEND\r\n";

static void overrides_take_effect(bool seed)
{
    plush_pmx_model *m = mesh_fx_plush();
    plush_scene_binding *b = bind_plush(m, seed), *before = bind_plush(m, seed);
    plush_im2_map *map = read_ok(overrides);
    plush_diag d = pmx_fx_diag();
    assert_int_equal(plush_scene_binding_apply_im2(b, map, &d), PLUSH_OK);
    const plush_proxy_binding *pb = b->binding;

    bool changed[9 * 13 + 24] = {false};
    for (size_t k = 0; k < 24; k++) {
        size_t row = row_of(m, b, EYES, k);
        expect_pinned(b, row, 5);
        changed[row] = true;
    }
    size_t r0 = row_of(m, b, BODY, 0), r1 = row_of(m, b, BODY, 1), r2 = row_of(m, b, BODY, 2),
           r3 = row_of(m, b, BODY, 3);
    assert_true(pb->proxy_share[r0] == 0.0f);
    assert_true(pb->proxy_share[r3] == 0.0f);
    expect_pinned(b, r1, 7);
    assert_true(same_row(pb, before->binding, r2));
    changed[r0] = changed[r1] = changed[r3] = true;
    /* Nothing else moved. */
    for (size_t row = 0; row < b->vertex_count; row++)
        if (!changed[row])
            assert_true(same_row(pb, before->binding, row));

    /* Applying again is the same as applying once: NOSKIN/ONESKIN work from the computed rows. */
    assert_int_equal(plush_scene_binding_apply_im2(b, map, &d), PLUSH_OK);
    expect_pinned(b, r1, 7);
    assert_true(same_row(pb, before->binding, r2));
    plush_im2_free(map);
    plush_scene_binding_free(before);
    plush_scene_binding_free(b);
    plush_pmx_free(m);
}

static void test_overrides(void **state)
{
    (void)state;
    overrides_take_effect(false);
    overrides_take_effect(true);
}

typedef struct apply_case {
    const char *text;
    uint32_t line;
    const char *words; /* in the message */
} apply_case;

static void test_override_errors(void **state)
{
    (void)state;
    static const apply_case cases[] = {
        {H "PARTSTART\r\ntail\r\n0, 1, -1, CALC_NOSKIN0\r\nPARTEND\r\n", 3, "no material"},
        {H "PARTSTART\r\ncage\r\n0, 1, -1, CALC_NOSKIN0\r\nPARTEND\r\n", 3, "no vertex bound"},
        {H "PARTSTART\r\neyes\r\nPARTEND\r\nPARTSTART\r\neyes\r\nPARTEND\r\n", 6, "more parts"},
        {H "PARTSTART\r\neyes\r\n24, 1, -1, CALC_NOSKIN0\r\nPARTEND\r\n", 4, "vertex 24 out of range"},
        {H "PARTSTART\r\neyes\r\n-2, 1, -1, CALC_NOSKIN0\r\nPARTEND\r\n", 4, "vertex -2"},
        {H "PARTSTART\r\neyes\r\n0, -1, -1, CALC_NOSKIN0\r\nPARTEND\r\n", 4, "child bone -1"},
        {H "PARTSTART\r\neyes\r\n0, 22, -1, CALC_ONESKIN0\r\nPARTEND\r\n", 4, "child bone 22 out of range"},
        {H "PARTSTART\r\neyes\r\n0, -5, -1, CALC_ONESKIN0\r\nPARTEND\r\n", 4, "child bone -5"},
        {H "PARTSTART\r\neyes\r\n0, 2, 22, CALC_ONESKIN0\r\nPARTEND\r\n", 4, "parent bone 22"},
        /* A good line first: a failing file must not leave it applied. */
        {H "PARTSTART\r\nbody\r\n-1, 3, -1, CALC_NOSKIN0\r\nPARTEND\r\n\r\nPARTSTART\r\nbody\r\nPARTEND\r\n", 8,
         "more parts"},
    };
    plush_pmx_model *m = mesh_fx_plush();
    plush_scene_binding *b = bind_plush(m, false), *before = bind_plush(m, false);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        plush_im2_map *map = read_ok(cases[i].text);
        plush_diag d = pmx_fx_diag();
        d.file = "x.im2";
        assert_int_equal(plush_scene_binding_apply_im2(b, map, &d), PLUSH_E_RANGE);
        /* the line and its byte are the contract; words only say which check the case aims at */
        if (d.index != (int64_t)cases[i].line)
            fail_msg("case %zu: line %lld \"%s\", expected line %u \"%s\"", i, (long long)d.index, d.message,
                     cases[i].line, cases[i].words);
        assert_string_equal(d.section, "line");
        assert_true(d.offset > 0 && d.offset < (int64_t)strlen(cases[i].text));
        assert_true(d.offset == 0 || cases[i].text[d.offset - 1] == '\n'); /* the start of its line */
        for (size_t row = 0; row < b->vertex_count; row++)
            assert_true(same_row(b->binding, before->binding, row));
        plush_im2_free(map);
    }
    /* A map built in code has no lines: the part is named instead. */
    plush_im2_entry e = {.vertex = 0, .child = -1, .parent = -1};
    plush_im2_part part = {.name = {.s = "eyes", .len = 4}, .entry_count = 1, .entries = &e, .offset = -1};
    plush_im2_map built = {.part_count = 1, .parts = &part};
    plush_diag d = pmx_fx_diag();
    assert_int_equal(plush_scene_binding_apply_im2(b, &built, &d), PLUSH_E_RANGE);
    assert_string_equal(d.section, "part");
    assert_int_equal(d.index, 0);
    plush_scene_binding_free(before);
    plush_scene_binding_free(b);
    plush_pmx_free(m);
}

/* NOSKIN on a triangle with no area cannot pin anything. */
static void test_override_degenerate(void **state)
{
    (void)state;
    plush_pmx_model *m = mesh_fx_model(BONES);
    mesh_fx sphere = mesh_fx_uv_sphere(1.0f, 4, 6);
    mesh_fx cage = mesh_fx_icosahedron(1.4f);
    uint32_t *more = realloc(cage.indices, (cage.index_count + 3) * sizeof *more);
    assert_non_null(more);
    cage.indices = more;
    cage.indices[cage.index_count] = 0, cage.indices[cage.index_count + 1] = 0, cage.indices[cage.index_count + 2] = 1;
    cage.index_count += 3;
    mesh_fx_add_material(m, "body", &sphere, 1);
    mesh_fx_add_material(m, "cage", &cage, 0);
    mesh_fx_add_soft_body(m, 1, 0);
    mesh_fx_free(&sphere);
    mesh_fx_free(&cage);
    plush_scene_binding *b = bind_plush(m, false);
    assert_int_equal(b->proxy.triangle_count, 21);
    plush_im2_map *map = read_ok(H "PARTSTART\r\nbody\r\n0, 22, -1, CALC_ONESKIN0\r\n1, 22, -1, CALC_NOSKIN0\r\nPARTEND\r\n");
    plush_diag d = pmx_fx_diag();
    assert_int_equal(plush_scene_binding_apply_im2(b, map, &d), PLUSH_E_RANGE);
    assert_int_equal(d.index, 5);
    assert_string_equal(d.section, "line");
    plush_im2_free(map);
    plush_scene_binding_free(b);
    plush_pmx_free(m);
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
        cmocka_unit_test(test_overrides),
        cmocka_unit_test(test_override_errors),
        cmocka_unit_test(test_override_degenerate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
