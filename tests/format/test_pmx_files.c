/* The PMX module on real files: every PMX in ../shared/data/mmd parses (in full and summary-only),
 * matches the counts an independent reader wrote into SOURCES.md, writes back to the same bytes, and
 * every prefix of a few of them fails cleanly, with the same diagnostic in both modes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plush/pmx.h"
#include "plush/sys/core.h"
#include "support/shared_data.h"

/* One PMX row of SOURCES.md. */
typedef struct expected {
    char file[256];
    char version[8];
    char encoding[16];
    int auv;
    char idx[8];
    long v, f, m, b, mo, rb, j;
    long weights[5]; /* BDEF1 BDEF2 BDEF4 SDEF QDEF */
} expected;

static long field(const char *s, const char *key)
{
    const char *p = strstr(s, key);
    return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static size_t load_expected(expected *out, size_t cap)
{
    size_t size;
    char *text = (char *)test_read_file(SHARED_MMD "/SOURCES.md", &size);
    assert_non_null(text);
    text = realloc(text, size + 1);
    text[size] = 0;
    size_t n = 0;
    for (char *line = strtok(text, "\n"); line && n < cap; line = strtok(NULL, "\n")) {
        if (strncmp(line, "| ", 2) != 0 || !strstr(line, ".pmx |"))
            continue;
        expected *e = &out[n];
        memset(e, 0, sizeof *e);
        sscanf(line, "| %255s", e->file);
        const char *c = strstr(line, "| PMX ");
        assert_non_null(c);
        sscanf(c, "| PMX %7s", e->version);
        e->encoding[0] = 0;
        if (strstr(c, "UTF-16LE"))
            strcpy(e->encoding, "utf16");
        else if (strstr(c, "UTF-8"))
            strcpy(e->encoding, "utf8");
        e->auv = (int)field(c, "auv=");
        const char *ix = strstr(c, "idx(v,t,m,b,mo,rb)=");
        assert_non_null(ix);
        memcpy(e->idx, ix + strlen("idx(v,t,m,b,mo,rb)="), 6);
        e->v = field(c, " V=");
        e->f = field(c, " F=");
        e->m = field(c, " M=");
        e->b = field(c, " B=");
        e->mo = field(c, " Mo=");
        e->rb = field(c, " RB=");
        e->j = field(c, " J=");
        static const char *const w[5] = {"BDEF1:", "BDEF2:", "BDEF4:", "SDEF:", "QDEF:"};
        for (int k = 0; k < 5; k++) {
            long x = field(c, w[k]);
            e->weights[k] = x < 0 ? 0 : x;
        }
        n++;
    }
    free(text);
    return n;
}

static void check_file(const expected *e)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", SHARED_MMD, e->file);
    size_t size;
    uint8_t *data = test_read_file(path, &size);
    assert_non_null(data);
    plush_diag diag = {.file = path};
    plush_pmx_model *m = NULL;
    plush_status st = plush_pmx_read(data, size, NULL, &m, &diag);
    if (st != PLUSH_OK) {
        char line[512];
        plush_diag_format(&diag, line, sizeof line);
        fprintf(stderr, "%s\n", line);
        fail();
    }
    assert_string_equal(e->version, m->version == 2.1f ? "2.1" : "2.0");
    assert_string_equal(e->encoding, m->encoding == PLUSH_ENC_UTF8 ? "utf8" : "utf16");
    assert_int_equal(e->auv, m->additional_uv);
    for (int k = 0; k < PLUSH_PMX_INDEX_KINDS; k++)
        assert_int_equal(e->idx[k] - '0', m->index_sizes[k]);
    assert_int_equal(e->v, m->vertex_count);
    assert_int_equal(e->f, m->index_count / 3);
    assert_int_equal(e->m, m->material_count);
    assert_int_equal(e->b, m->bone_count);
    assert_int_equal(e->mo, m->morph_count);
    assert_int_equal(e->rb, m->rigid_body_count);
    assert_int_equal(e->j, m->joint_count);
    assert_int_equal(0, m->soft_body_count);
    long hist[5] = {0};
    for (size_t i = 0; i < m->vertex_count; i++)
        hist[m->vertices[i].weight_type]++;
    for (int k = 0; k < 5; k++)
        assert_int_equal(e->weights[k], hist[k]);

    plush_buf out = {0};
    assert_int_equal(PLUSH_OK, plush_pmx_write(m, NULL, &out, &diag));
    assert_int_equal(size, out.size);
    assert_memory_equal(data, out.data, size);
    plush_buf_free(&out);

    /* Summary-only (what plush info reads): the same counts and histogram, no geometry kept. */
    plush_diag sdiag = {.file = path};
    plush_pmx_model *s = NULL;
    assert_int_equal(PLUSH_OK, plush_pmx_read(data, size, &(plush_pmx_read_options){.summary_only = true}, &s, &sdiag));
    assert_int_equal(diag.warning_count, sdiag.warning_count);
    assert_true(s->summary_only);
    assert_null(s->vertices);
    assert_null(s->indices);
    assert_int_equal(m->vertex_count, s->vertex_count);
    assert_int_equal(m->index_count, s->index_count);
    assert_int_equal(m->sdef_count, s->sdef_count);
    assert_int_equal(m->texture_count, s->texture_count);
    assert_int_equal(m->material_count, s->material_count);
    assert_int_equal(m->bone_count, s->bone_count);
    assert_int_equal(m->morph_count, s->morph_count);
    assert_int_equal(m->display_frame_count, s->display_frame_count);
    assert_int_equal(m->rigid_body_count, s->rigid_body_count);
    assert_int_equal(m->joint_count, s->joint_count);
    assert_int_equal(m->soft_body_count, s->soft_body_count);
    assert_int_equal(m->trailing_size, s->trailing_size);
    for (int k = 0; k < 5; k++)
        assert_int_equal(e->weights[k], s->summary.weight_types[k]);
    plush_pmx_free(s);
    plush_pmx_free(m);
    free(data);
}

static void test_shared_counts_and_round_trip(void **state)
{
    (void)state;
    static expected rows[128];
    size_t n = load_expected(rows, 128);
    assert_int_equal(57, n); /* the PMX rows of SOURCES.md */
    for (size_t i = 0; i < n; i++)
        check_file(&rows[i]);
}

/* Every prefix, from an exact-size copy, fails cleanly with an offset inside the prefix. */
static void sweep(const char *path, size_t stride)
{
    size_t size;
    uint8_t *data = test_read_file(path, &size);
    assert_non_null(data);
    for (size_t len = 0; len < size; len += (len < 4096 ? 1 : stride)) {
        uint8_t *copy = malloc(len ? len : 1);
        memcpy(copy, data, len);
        plush_diag diag = {0};
        plush_pmx_model *m = (plush_pmx_model *)(uintptr_t)1;
        plush_status st = plush_pmx_read(copy, len, NULL, &m, &diag);
        assert_int_not_equal(PLUSH_OK, st);
        assert_null(m);
        assert_true(diag.offset >= 0);
        assert_true((size_t)diag.offset <= len);
        /* summary-only: the same diagnostic */
        plush_diag sdiag = {0};
        m = (plush_pmx_model *)(uintptr_t)1;
        assert_int_equal(st, plush_pmx_read(copy, len, &(plush_pmx_read_options){.summary_only = true}, &m, &sdiag));
        assert_null(m);
        assert_int_equal(diag.offset, sdiag.offset);
        assert_int_equal(diag.index, sdiag.index);
        assert_string_equal(diag.section ? diag.section : "", sdiag.section ? sdiag.section : "");
        assert_string_equal(diag.message, sdiag.message);
        free(copy);
    }
    free(data);
}

static void test_truncation_sweep(void **state)
{
    (void)state;
    sweep(SHARED_MMD "/blender2pmxem/test_01.pmx", 1);
    sweep(SHARED_MMD "/mmd_base/曲げ柱tex.pmx", 1);
    sweep(SHARED_MMD "/nanoem/test.pmx", 1);
    sweep(SHARED_MMD "/unity-mmd-loader/mixed-deform-types.pmx", 1);
    sweep(SHARED_MMD "/unity-mmd-loader/test_hair_physics.pmx", 1);
    sweep(SHARED_MMD "/alicia/Alicia_solid.pmx", 4999);
}

/* Conversions keep every value: UTF-8 <-> UTF-16 and minimal index sizes read back to the same model. */
static void test_convert_round_trip(void **state)
{
    (void)state;
    size_t size;
    uint8_t *data = test_read_file(SHARED_MMD "/alicia/Alicia_solid.pmx", &size);
    assert_non_null(data);
    plush_pmx_model *m = NULL;
    assert_int_equal(PLUSH_OK, plush_pmx_read(data, size, NULL, &m, NULL));
    plush_buf utf8 = {0}, back = {0};
    plush_pmx_write_options to8 = {.encoding = PLUSH_PMX_WRITE_UTF8, .minimal_indices = true};
    assert_int_equal(PLUSH_OK, plush_pmx_write(m, &to8, &utf8, NULL));
    plush_pmx_model *m8 = NULL;
    assert_int_equal(PLUSH_OK, plush_pmx_read(utf8.data, utf8.size, NULL, &m8, NULL));
    assert_int_equal(PLUSH_ENC_UTF8, m8->encoding);
    assert_string_equal(m->name.s, m8->name.s);
    assert_string_equal(m->bones[10].name.s, m8->bones[10].name.s);
    plush_pmx_write_options to16 = {.encoding = PLUSH_PMX_WRITE_UTF16};
    assert_int_equal(PLUSH_OK, plush_pmx_write(m8, &to16, &back, NULL));
    assert_int_equal(size, back.size);
    assert_memory_equal(data, back.data, size);
    plush_buf_free(&utf8);
    plush_buf_free(&back);
    plush_pmx_free(m8);

    plush_buf v21 = {0};
    assert_int_equal(PLUSH_OK, plush_pmx_write(m, &(plush_pmx_write_options){.version = PLUSH_PMX_WRITE_21}, &v21, NULL));
    plush_pmx_model *m21 = NULL;
    assert_int_equal(PLUSH_OK, plush_pmx_read(v21.data, v21.size, NULL, &m21, NULL));
    assert_true(m21->version == 2.1f);
    assert_int_equal(0, m21->soft_body_count);
    assert_int_equal(size + 4, v21.size); /* the same model plus an empty soft-body section */
    plush_buf v20 = {0};
    assert_int_equal(PLUSH_OK, plush_pmx_write(m21, &(plush_pmx_write_options){.version = PLUSH_PMX_WRITE_20}, &v20, NULL));
    assert_int_equal(size, v20.size);
    assert_memory_equal(data + 8, v20.data + 8, size - 8);
    plush_buf_free(&v21);
    plush_buf_free(&v20);
    plush_pmx_free(m21);
    plush_pmx_free(m);
    free(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shared_counts_and_round_trip),
        cmocka_unit_test(test_truncation_sweep),
        cmocka_unit_test(test_convert_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
