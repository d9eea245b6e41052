/* The plush command line, run as a user runs it: the binary from PLUSH_BIN (build/plush by default),
 * stdout and stderr captured, exit status checked (a signal is always a failure). Reads fixtures
 * from ../shared/data/mmd; writes only into a temporary directory that it removes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/plush.h"
#include "plush/sys/core.h"
#include "plush/sys/vmd.h"
#include "support/cli_run.h"
#include "support/pmx_fixture.h"
#include "support/shared_data.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


#define DATA SHARED_MMD "/"
#define MIXED_UTF8 DATA "unity-mmd-loader/mixed-deform-types.pmx"
#define WIDE_INDICES DATA "unity-mmd-loader/mmd-alpha-blend-overlap.pmx"
/* a character whose materials are called 材質1 .. 材質31 */
#define LUKA SHARED_CHARACTERS "/blender_mmd_tools/巡音ルカ_f14b5a4.pmx"
/* a model whose materials have English names: 8 "スカート" is "skirt" */
#define SAMPLE_FINISH DATA "blender2pmxem/sample_finish.pmx"

/* ---- files ----------------------------------------------------------------------------------- */

static bool same_bytes(const char *a, const char *b)
{
    size_t na, nb;
    char *da = cli_read_all(a, &na), *db = cli_read_all(b, &nb);
    bool same = da && db && na == nb && memcmp(da, db, na) == 0;
    free(da);
    free(db);
    return same;
}

/* Names in the temporary directory that a writer may have left behind (anything with ".tmp"). */
static int stray_temp_files(void)
{
    DIR *d = opendir(cli_tmp_dir());
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".tmp"))
            n++;
    closedir(d);
    return n;
}

/* ---- a JSON syntax checker (RFC 8259, strict UTF-8) -------------------------------------------- */

typedef struct jcur {
    const unsigned char *p, *end;
    int depth;
} jcur;

static void j_space(jcur *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static bool j_literal(jcur *c, const char *lit)
{
    size_t n = strlen(lit);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, lit, n) != 0)
        return false;
    c->p += n;
    return true;
}

static size_t j_utf8(const unsigned char *s, size_t left)
{
    unsigned char c = s[0];
    size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (n == 0 || n > left)
        return 0;
    uint32_t cp = c & (n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    bool overlong = (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
    return overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) ? 0 : n;
}

static bool j_string(jcur *c)
{
    if (c->p >= c->end || *c->p != '"')
        return false;
    c->p++;
    while (c->p < c->end) {
        unsigned char ch = *c->p;
        if (ch == '"') {
            c->p++;
            return true;
        }
        if (ch < 0x20)
            return false;
        if (ch == '\\') {
            if (++c->p >= c->end)
                return false;
            if (*c->p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (c->p + i >= c->end || !strchr("0123456789abcdefABCDEF", c->p[i]) || !c->p[i])
                        return false;
                c->p += 5;
            } else if (strchr("\"\\/bfnrt", *c->p) && *c->p) {
                c->p++;
            } else {
                return false;
            }
        } else if (ch < 0x80) {
            c->p++;
        } else {
            size_t n = j_utf8(c->p, (size_t)(c->end - c->p));
            if (n == 0)
                return false;
            c->p += n;
        }
    }
    return false;
}

static bool j_digits(jcur *c)
{
    const unsigned char *start = c->p;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
        c->p++;
    return c->p > start;
}

static bool j_number(jcur *c)
{
    if (c->p < c->end && *c->p == '-')
        c->p++;
    if (c->p < c->end && *c->p == '0')
        c->p++;
    else if (!(c->p < c->end && *c->p >= '1' && *c->p <= '9' && j_digits(c)))
        return false;
    if (c->p < c->end && *c->p == '.') {
        c->p++;
        if (!j_digits(c))
            return false;
    }
    if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
        c->p++;
        if (c->p < c->end && (*c->p == '+' || *c->p == '-'))
            c->p++;
        if (!j_digits(c))
            return false;
    }
    return true;
}

static bool j_value(jcur *c);

/* Object or array: close is '}' or ']'; members of an object are "key": value. */
static bool j_container(jcur *c, char close)
{
    if (++c->depth > 64)
        return false;
    c->p++;
    j_space(c);
    if (c->p < c->end && *c->p == close) {
        c->p++;
        c->depth--;
        return true;
    }
    for (;;) {
        j_space(c);
        if (close == '}') {
            if (!j_string(c))
                return false;
            j_space(c);
            if (c->p >= c->end || *c->p++ != ':')
                return false;
        }
        if (!j_value(c))
            return false;
        j_space(c);
        if (c->p >= c->end)
            return false;
        unsigned char ch = *c->p++;
        if (ch == close) {
            c->depth--;
            return true;
        }
        if (ch != ',')
            return false;
    }
}

static bool j_value(jcur *c)
{
    j_space(c);
    if (c->p >= c->end)
        return false;
    switch (*c->p) {
    case '{': return j_container(c, '}');
    case '[': return j_container(c, ']');
    case '"': return j_string(c);
    case 't': return j_literal(c, "true");
    case 'f': return j_literal(c, "false");
    case 'n': return j_literal(c, "null");
    default: return j_number(c);
    }
}

static bool json_valid(const char *s, size_t len)
{
    jcur c = {(const unsigned char *)s, (const unsigned char *)s + len, 0};
    if (!j_value(&c))
        return false;
    j_space(&c);
    return c.p == c.end;
}

/* Each line of out is one valid JSON object; returns how many. */
static int expect_json_lines(const cli_result *r)
{
    int n = 0;
    const char *p = r->out, *end = r->out + r->out_len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            fail_msg("JSON output does not end with a newline");
        if (*p != '{' || !json_valid(p, (size_t)(nl - p)))
            fail_msg("invalid JSON line: %.*s", (int)(nl - p > 2000 ? 2000 : nl - p), p);
        n++;
        p = nl + 1;
    }
    return n;
}

static void expect_contains(const char *haystack, const char *needle)
{
    if (!strstr(haystack, needle))
        fail_msg("expected %s in:\n%.3000s", needle, haystack);
}

static void test_json_checker(void **state)
{
    (void)state;
    const char *good[] = {"{}", "[]", "0", "-0.5e+3", "\"a\\u00e9\\n\"",
                          "{\"a\":[1,true,null,{\"b\":\"\xc3\xa9\"}]}",
                          " [ 1 , 2 ] "};
    const char *bad[] = {"", "{", "[1,]", "{\"a\"}", "01", "1.", "-", "nan", "\"\x01\"", "\"\\x\"", "\"\xc0\xaf\"",
                         "\"\xed\xa0\x80\"", "{} {}", "[1 2]", "\"abc"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        if (!json_valid(good[i], strlen(good[i])))
            fail_msg("rejected %s", good[i]);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (json_valid(bad[i], strlen(bad[i])))
            fail_msg("accepted %s", bad[i]);
}

/* ---- fixtures -------------------------------------------------------------------------------- */

static int setup(void **state)
{
    (void)state;
    return cli_tmp_setup("plush_cli");
}

static int teardown(void **state)
{
    (void)state;
    return cli_tmp_teardown();
}

static void need(const char *path)
{
    if (!cli_exists(path)) {
        print_message("missing fixture %s\n", path);
        skip();
    }
}

/* A copy of the first n bytes of src. */
static const char *truncated_copy(const char *src, size_t n, char *buf, size_t size)
{
    size_t len;
    char *data = cli_read_all(src, &len);
    assert_non_null(data);
    assert_true(n <= len);
    snprintf(buf, size, "%s/trunc_%zu.pmx", cli_tmp_dir(), n);
    cli_write_all(buf, data, n);
    free(data);
    return buf;
}

/* A small PMX 2.1 model with what only 2.1 has (soft body, QDEF, impulse morph, hinge joint) and a
 * name that needs escaping in JSON. */
static plush_str text(plush_pmx_model *m, const char *s)
{
    plush_str t = {plush_arena_strdup(plush_pmx_arena(m), s, strlen(s)), (uint32_t)strlen(s), 0, NULL};
    assert_non_null(t.s);
    return t;
}

static void *zalloc(plush_pmx_model *m, size_t count, size_t size)
{
    void *p = plush_arena_array(plush_pmx_arena(m), count, size);
    assert_non_null(p);
    return p;
}

static const char *write_soft_model(char *path, size_t size)
{
    plush_pmx_model *m = plush_pmx_create();
    assert_non_null(m);
    m->version = 2.1f;
    m->name = text(m, "plush \"soft\"\\\t\x01 ぬいぐるみ");
    m->name_en = text(m, "plush");
    m->vertex_count = 4;
    m->vertices = zalloc(m, 4, sizeof *m->vertices);
    for (int i = 0; i < 4; i++) {
        plush_pmx_vertex *v = &m->vertices[i];
        v->position[0] = (float)(i & 1);
        v->position[1] = (float)(i >> 1);
        v->normal[2] = -1;
        v->bones[0] = 0;
        v->bones[1] = v->bones[2] = v->bones[3] = -1;
        v->weights[0] = 1;
        v->edge_scale = 1;
        v->sdef = -1;
    }
    m->vertices[3].weight_type = PLUSH_PMX_QDEF;
    m->vertices[3].bones[1] = m->vertices[3].bones[2] = m->vertices[3].bones[3] = 0;
    static const uint32_t faces[] = {0, 1, 2, 1, 3, 2};
    m->index_count = 6;
    m->indices = zalloc(m, 6, sizeof *m->indices);
    memcpy(m->indices, faces, sizeof faces);
    m->material_count = 1;
    m->materials = zalloc(m, 1, sizeof *m->materials);
    m->materials[0] = (plush_pmx_material){.name = text(m, "cloth"), .diffuse = {1, 1, 1, 1}, .texture = -1,
                                           .sphere_texture = -1, .toon = -1, .index_count = 6};
    m->bone_count = 1;
    m->bones = zalloc(m, 1, sizeof *m->bones);
    m->bones[0] = (plush_pmx_bone){.name = text(m, "center"), .parent = -1, .tail_bone = -1, .append_parent = -1,
                                   .ik_target = -1, .tail_offset = {0, 1, 0},
                                   .flags = PLUSH_PMX_BONE_ROTATABLE | PLUSH_PMX_BONE_VISIBLE |
                                            PLUSH_PMX_BONE_ENABLED};
    m->rigid_body_count = 2;
    m->rigid_bodies = zalloc(m, 2, sizeof *m->rigid_bodies);
    for (int i = 0; i < 2; i++)
        m->rigid_bodies[i] = (plush_pmx_rigid_body){.name = text(m, i ? "b" : "a"), .bone = i ? -1 : 0,
                                                    .size = {1, 1, 1}, .mass = 1, .mode = (uint8_t)i};
    m->joint_count = 1;
    m->joints = zalloc(m, 1, sizeof *m->joints);
    m->joints[0] = (plush_pmx_joint){.name = text(m, "hinge"), .type = PLUSH_PMX_JOINT_HINGE, .body_a = 0,
                                     .body_b = 1};
    m->morph_count = 1;
    m->morphs = zalloc(m, 1, sizeof *m->morphs);
    m->morphs[0] = (plush_pmx_morph){.name = text(m, "push"), .panel = 4, .kind = PLUSH_PMX_MORPH_IMPULSE,
                                     .offset_count = 1};
    m->morphs[0].offsets.impulse = zalloc(m, 1, sizeof(plush_pmx_morph_impulse));
    m->morphs[0].offsets.impulse[0].rigid_body = 1;
    m->soft_body_count = 1;
    plush_pmx_soft_body *sb = m->soft_bodies = zalloc(m, 1, sizeof *m->soft_bodies);
    sb->name = text(m, "スカート");
    sb->name_en = text(m, "skirt");
    sb->material = 0;
    sb->group = 3;
    sb->mask = 0xFFF7;
    sb->flags = PLUSH_PMX_SOFT_BLINK | PLUSH_PMX_SOFT_CLUSTERS;
    sb->blink_distance = 2;
    sb->cluster_count = 4;
    sb->total_mass = 1.5f;
    sb->margin = 0.05f;
    sb->aero_model = 1;
    sb->config = (plush_pmx_soft_config){.vcf = 1, .df = 0.25f, .chr = 1, .khr = 0.1f, .shr = 1, .ahr = 0.7f,
                                         .srhr_cl = 0.1f, .skhr_cl = 1, .sshr_cl = 0.5f, .sr_splt_cl = 0.5f,
                                         .sk_splt_cl = 0.5f, .ss_splt_cl = 0.5f};
    sb->v_iterations = 0;
    sb->p_iterations = 4;
    sb->lst = sb->ast = sb->vst = 1;
    sb->anchor_count = 1;
    sb->anchors = zalloc(m, 1, sizeof *sb->anchors);
    sb->anchors[0] = (plush_pmx_soft_anchor){.rigid_body = 1, .vertex = 2, .near_mode = 1};
    sb->pin_count = 2;
    sb->pins = zalloc(m, 2, sizeof *sb->pins);
    sb->pins[0] = 0;
    sb->pins[1] = 3;

    cli_tmp_path(path, size, "soft21.pmx");
    plush_diag diag = {.file = path, .offset = -1, .index = -1};
    plush_status st = plush_pmx_write_file(m, &(plush_pmx_write_options){0}, path, &diag);
    plush_pmx_free(m);
    if (st != PLUSH_OK) {
        char line[600];
        plush_diag_format(&diag, line, sizeof line);
        fail_msg("cannot write the 2.1 fixture: %s", line);
    }
    return path;
}

/* ---- help and usage -------------------------------------------------------------------------- */

static void test_help(void **state)
{
    (void)state;
    const char *const helps[][4] = {{"--help"}, {"help"}, {"info", "--help"}, {"convert", "--help"},
                                    {"help", "convert"}, {"convert", "x.pmx", "-h"}};
    for (size_t i = 0; i < sizeof helps / sizeof helps[0]; i++) {
        cli_result r;
        cli_run_list(&r, helps[i]);
        cli_expect_code(&r, 0);
        expect_contains(r.out, "usage: plush");
        assert_int_equal(r.err_len, 0);
        cli_result_free(&r);
    }
    cli_result r;
    CLI_RUN(&r, "--version");
    cli_expect_code(&r, 0);
    expect_contains(r.out, "plush ");
    cli_result_free(&r);
}

static void test_usage_errors(void **state)
{
    (void)state;
    char out[300];
    cli_tmp_path(out, sizeof out, "usage_out.pmx");
    const char *const cases[][8] = {
        {NULL},
        {"--bogus"},
        {"frobnicate"},
        {"info"},
        {"info", "--bogus", ALICIA},
        {"info", "--json=yes", ALICIA},
        {"convert", ALICIA},
        {"convert", ALICIA, "-o"},
        {"convert", "-o", out},
        {"convert", ALICIA, ALICIA, "-o", out},
        {"convert", ALICIA, "-o", out, "--pmx-version", "3.0"},
        {"convert", ALICIA, "-o", out, "--encoding", "latin1"},
        {"convert", ALICIA, "-o", out, "--index-sizes", "huge"},
        {"convert", ALICIA, "-o", out, "--frobnicate"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cli_result r;
        cli_run_list(&r, cases[i]);
        if (r.code != 2)
            fail_msg("case %zu (%s %s): exit %d, expected 2", i, cases[i][0] ? cases[i][0] : "",
                     cases[i][0] && cases[i][1] ? cases[i][1] : "", r.code);
        assert_true(r.err_len > 0);
        assert_memory_equal(r.err, "plush: ", 7);
        assert_int_equal(r.out_len, 0);
        cli_result_free(&r);
        assert_false(cli_exists(out));
    }
}

/* ---- info ------------------------------------------------------------------------------------ */

static void test_info_json_pmx(void **state)
{
    (void)state;
    need(ALICIA);
    cli_result r;
    CLI_RUN(&r, "info", "--json", ALICIA);
    cli_expect_code(&r, 0);
    assert_int_equal(r.err_len, 0);
    assert_int_equal(expect_json_lines(&r), 1);
    expect_contains(r.out, "\"format\":\"pmx\"");
    expect_contains(r.out, "\"version\":2.0");
    expect_contains(r.out, "\"encoding\":\"utf16\"");
    expect_contains(r.out, "\"additional_uv\":0");
    expect_contains(r.out, "\"index_sizes\":{\"vertex\":2,\"texture\":1,\"material\":1,\"bone\":2,\"morph\":1,"
                           "\"rigid_body\":1}");
    expect_contains(r.out, "\"name_en\":\"Alicia Solid\"");
    expect_contains(r.out, "\"vertices\":22311");
    expect_contains(r.out, "\"faces\":31866");
    expect_contains(r.out, "\"materials\":22");
    expect_contains(r.out, "\"bones\":150");
    expect_contains(r.out, "\"morphs\":63");
    expect_contains(r.out, "\"rigid_bodies\":79");
    expect_contains(r.out, "\"joints\":53");
    expect_contains(r.out, "\"soft_bodies\":0");
    expect_contains(r.out, "\"weight_types\":{\"bdef1\":8858,\"bdef2\":10121,\"bdef4\":3332,\"sdef\":0,"
                           "\"qdef\":0}");
    expect_contains(r.out, "\"spring_6dof\":53");
    expect_contains(r.out, "\"soft_bodies\":[]");
    expect_contains(r.out, "\"warning_count\":0");
    cli_result_free(&r);

    need(MIXED_UTF8);
    CLI_RUN(&r, "info", MIXED_UTF8, "--json");
    cli_expect_code(&r, 0);
    assert_int_equal(expect_json_lines(&r), 1);
    expect_contains(r.out, "\"encoding\":\"utf8\"");
    expect_contains(r.out, "\"weight_types\":{\"bdef1\":4,\"bdef2\":4,\"bdef4\":4,\"sdef\":4,\"qdef\":4}");
    cli_result_free(&r);
}

static void test_info_json_vmd(void **state)
{
    (void)state;
    need(MOTION_0046);
    cli_result r;
    CLI_RUN(&r, "info", "--json", MOTION_0046);
    cli_expect_code(&r, 0);
    assert_int_equal(expect_json_lines(&r), 1);
    expect_contains(r.out, "\"format\":\"vmd\"");
    expect_contains(r.out, "\"version\":2");
    expect_contains(r.out, "\"model_name\":\"初音ミク準標準\"");
    expect_contains(r.out, "\"counts\":{\"bones\":97,\"morphs\":0,\"cameras\":0,\"lights\":0,\"shadows\":0,"
                           "\"properties\":0}");
    expect_contains(r.out, "\"last_frame\":");
    cli_result_free(&r);
}

/* A motion written here with three bone keys: one as MMD writes it (its first row's bytes 2-3 zero, so the
 * first row alone misses Z's and the rotation's x1), one whose Z and rotation curves start at x1 = 0 (the
 * first row then agrees), one with bytes 2-3 set: info counts 2 keys a first-row reader plays wrong, 2
 * with bytes 2-3 zero, 1 set. */
static void test_info_vmd_curves(void **state)
{
    (void)state;
    plush_vmd_motion *v = plush_vmd_create();
    plush_vmd_bone_key *k = plush_arena_array(plush_vmd_arena(v), 3, sizeof *k);
    assert_non_null(k);
    v->bone_keys = k, v->bone_key_count = 3;
    const uint8_t eased[4][4] = {{20, 20, 107, 107}, {20, 20, 107, 107}, {0, 20, 107, 107}, {0, 30, 90, 127}};
    for (int i = 0; i < 3; i++) {
        k[i].name = pmx_fx_lit("センター");
        k[i].frame = (uint32_t)(10 * i);
        k[i].rotation[3] = 1;
        if (i == 1)
            plush_vmd_curves_write(eased, k[i].interpolation);
        else
            pmx_fx_linear_curves(k[i].interpolation);
    }
    k[2].interpolation[2] = 99, k[2].interpolation[3] = 15;
    char path[400];
    snprintf(path, sizeof path, "%s/curves.vmd", cli_tmp_dir());
    plush_diag d = pmx_fx_diag();
    assert_int_equal(plush_vmd_write_file(v, NULL, path, &d), PLUSH_OK);
    plush_vmd_free(v);

    cli_result r;
    CLI_RUN(&r, "info", "--json", path);
    cli_expect_code(&r, 0);
    expect_contains(r.out, "\"bone_curves\":{\"first_row_differs\":2,\"first_row_bytes23_zero\":2,"
                           "\"first_row_bytes23_set\":1}");
    cli_result_free(&r);
    CLI_RUN(&r, "info", path);
    cli_expect_code(&r, 0);
    expect_contains(r.out, "\n  bone curves      each read from its own row; the first row alone differs in 2 of 3 "
                           "keys (its bytes 2-3 zero in 2, set in 1)\n");
    cli_result_free(&r);
}

/* The value column of a text line "  label    value". */
static void expect_text_field(const char *out, const char *label, const char *value)
{
    char needle[128];
    snprintf(needle, sizeof needle, "\n  %s ", label);
    const char *p = strstr(out, needle);
    if (!p)
        fail_msg("no '%s' line in:\n%.3000s", label, out);
    p += strlen(needle);
    while (*p == ' ')
        p++;
    if (strncmp(p, value, strlen(value)) != 0 || (p[strlen(value)] != '\n' && p[strlen(value)] != ','))
        fail_msg("'%s' is not %s in:\n%.3000s", label, value, out);
}

static void test_info_text(void **state)
{
    (void)state;
    need(ALICIA);
    need(MOTION_0046);
    cli_result r;
    CLI_RUN(&r, "info", ALICIA, MOTION_0046);
    cli_expect_code(&r, 0);
    assert_int_equal(r.err_len, 0);
    assert_memory_equal(r.out, ALICIA "\n", strlen(ALICIA) + 1);
    expect_text_field(r.out, "vertices", "22311");
    expect_text_field(r.out, "faces", "31866");
    expect_text_field(r.out, "bones", "150");
    expect_text_field(r.out, "rigid bodies", "79");
    expect_text_field(r.out, "joints", "53");
    expect_text_field(r.out, "weight types", "BDEF1 8858");
    expect_contains(r.out, "\n" MOTION_0046 "\n");
    expect_text_field(r.out, "bone keys", "97");
    cli_result_free(&r);
}

static void test_info_soft_body(void **state)
{
    (void)state;
    char path[300];
    write_soft_model(path, sizeof path);
    cli_result r;
    CLI_RUN(&r, "info", "--json", path);
    cli_expect_code(&r, 0);
    assert_int_equal(expect_json_lines(&r), 1);
    expect_contains(r.out, "\"version\":2.1");
    expect_contains(r.out, "\"name\":\"plush \\\"soft\\\"\\\\\\t\\u0001 ぬいぐるみ\"");
    expect_contains(r.out, "\"qdef\":1");
    expect_contains(r.out, "\"impulse\":1");
    expect_contains(r.out, "\"hinge\":1");
    expect_contains(r.out, "\"soft_bodies\":[{\"name\":\"スカート\",\"name_en\":\"skirt\","
                           "\"shape\":\"trimesh\","
                           "\"material\":0,\"group\":3,\"mask\":65527,\"flags\":3,\"blink_distance\":2,"
                           "\"clusters\":4,\"total_mass\":1.5,\"margin\":0.0500000007,\"aero_model\":1,");
    expect_contains(r.out, "\"df\":0.25,");
    expect_contains(r.out, "\"ss_splt_cl\":0.5}");
    expect_contains(r.out, "\"iterations\":{\"v\":0,\"p\":4,\"d\":0,\"c\":0}");
    expect_contains(r.out, "\"material_params\":{\"lst\":1,\"ast\":1,\"vst\":1}");
    expect_contains(r.out, "\"anchors\":[{\"rigid_body\":1,\"vertex\":2,\"near\":true}],\"pins\":[0,3]}]");
    cli_result_free(&r);

    CLI_RUN(&r, "info", path);
    cli_expect_code(&r, 0);
    expect_text_field(r.out, "soft bodies", "1");
    expect_text_field(r.out, "soft body 0", "\"スカート\"");
    expect_text_field(r.out, "  pins (2)", "0 3");
    cli_result_free(&r);
}

/* VPD (no shared fixture holds one), and the kind told by content: a motion named .pmx is a motion. */
static void test_info_vpd_and_content_detection(void **state)
{
    (void)state;
    static const char pose[] = "Vocaloid Pose Data file\r\n\r\nmiku.osm;\t\t// parent file\r\n"
                               "2;\t\t\t\t// bones\r\n\r\n"
                               "Bone0{center\r\n  0.000000,1.000000,0.000000;\r\n"
                               "  0.000000,0.000000,0.000000,1.000000;\r\n}\r\n\r\n"
                               "Bone1{head\r\n  0.000000,0.000000,0.000000;\r\n"
                               "  0.000000,0.707107,0.000000,0.707107;\r\n}\r\n";
    char path[300];
    cli_tmp_path(path, sizeof path, "pose.vpd");
    cli_write_all(path, pose, sizeof pose - 1);
    cli_result r;
    CLI_RUN(&r, "info", "--json", path);
    cli_expect_code(&r, 0);
    assert_int_equal(expect_json_lines(&r), 1);
    expect_contains(r.out, "\"format\":\"vpd\"");
    expect_contains(r.out, "\"model_name\":\"miku.osm\"");
    expect_contains(r.out, "\"counts\":{\"bones\":2,\"morphs\":0}");
    cli_result_free(&r);
    CLI_RUN(&r, "info", path);
    cli_expect_code(&r, 0);
    expect_text_field(r.out, "bones", "2");
    cli_result_free(&r);
    cli_tmp_path(path, sizeof path, "pose_cut.vpd");
    cli_write_all(path, pose, 60);
    CLI_RUN(&r, "info", path);
    cli_expect_one_error_line(&r);
    expect_contains(r.err, "(at byte ");
    cli_result_free(&r);

    need(MOTION_0046);
    size_t len;
    char *motion = cli_read_all(MOTION_0046, &len);
    assert_non_null(motion);
    cli_tmp_path(path, sizeof path, "motion.pmx");
    cli_write_all(path, motion, len);
    free(motion);
    CLI_RUN(&r, "info", "--json", path);
    cli_expect_code(&r, 0);
    expect_contains(r.out, "\"format\":\"vmd\"");
    cli_result_free(&r);
}

/* Every PMX, VMD and VPD file under dir, recursively. */
static void collect_files(const char *dir, char ***list, size_t *count)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            collect_files(path, list, count);
            continue;
        }
        const char *dot = strrchr(e->d_name, '.');
        if (!dot || (strcasecmp(dot, ".pmx") != 0 && strcasecmp(dot, ".vmd") != 0 && strcasecmp(dot, ".vpd") != 0))
            continue;
        *list = realloc(*list, (*count + 1) * sizeof **list);
        assert_non_null(*list);
        (*list)[(*count)++] = strdup(path);
    }
    closedir(d);
}

static void test_info_every_shared_file(void **state)
{
    (void)state;
    char **files = NULL;
    size_t count = 0;
    collect_files(SHARED_MMD, &files, &count);
    if (count == 0)
        skip();
    for (size_t i = 0; i < count; i++) {
        cli_result r;
        CLI_RUN(&r, "info", "--json", files[i]);
        if (r.code != 0)
            fail_msg("%s: exit %d: %s", files[i], r.code, r.err);
        if (expect_json_lines(&r) != 1)
            fail_msg("%s: expected one JSON line", files[i]);
        expect_contains(r.out, "\"format\":\"");
        cli_result_free(&r);
        CLI_RUN(&r, "info", files[i]);
        if (r.code != 0)
            fail_msg("%s: text: exit %d: %s", files[i], r.code, r.err);
        expect_contains(r.out, "  warnings");
        cli_result_free(&r);
        free(files[i]);
    }
    free(files);
}

/* info over several files: a bad one is reported and skipped; the others are still shown. */
static void test_info_several_with_failure(void **state)
{
    (void)state;
    need(ALICIA);
    need(MOTION_0046);
    cli_result r;
    CLI_RUN(&r, "info", "--json", ALICIA, "/nonexistent/plush.pmx", MOTION_0046);
    cli_expect_one_error_line(&r);
    expect_contains(r.err, "/nonexistent/plush.pmx");
    assert_int_equal(expect_json_lines(&r), 3);
    expect_contains(r.out, "\"format\":\"pmx\"");
    expect_contains(r.out, "\"file\":\"/nonexistent/plush.pmx\",\"error\":");
    expect_contains(r.out, "\"format\":\"vmd\"");
    cli_result_free(&r);
}

/* info reads without keeping the geometry; a broken model must still fail with the line (message and
 * byte offset) that a full read gives. Alicia with vertex bone indices past the bone count (the later
 * vertex with the larger index, the one the bone count makes wrong only at the end of the file) and a
 * face index past the vertices; then the face alone. */
static void test_info_errors_match_full_read(void **state)
{
    (void)state;
    need(ALICIA);
    size_t size;
    uint8_t *data = (uint8_t *)cli_read_all(ALICIA, &size);
    assert_non_null(data);
    plush_pmx_model *m = NULL;
    assert_int_equal(plush_pmx_read(data, size, NULL, &m, NULL), PLUSH_OK);
    free(data);
    assert_true(m->vertex_count > 21000 && m->index_count > 9000);
    m->vertices[20000].bones[0] = (int32_t)m->bone_count;
    m->vertices[21000].bones[0] = (int32_t)m->bone_count + 50;
    m->indices[9000] = (uint32_t)m->vertex_count + 7;
    for (int round = 0; round < 2; round++) {
        if (round == 1)
            m->vertices[20000].bones[0] = m->vertices[21000].bones[0] = 0;
        plush_buf b = {0};
        pmx_fx_raw_write(m, NULL, &b, NULL);
        char path[300];
        cli_tmp_path(path, sizeof path, "broken_alicia.pmx");
        cli_write_all(path, b.data, b.size);
        plush_diag d = {.file = path};
        plush_pmx_model *none = NULL;
        assert_int_equal(plush_pmx_read(b.data, b.size, NULL, &none, &d), PLUSH_E_RANGE);
        assert_string_equal(d.section, round == 0 ? "vertex" : "face index");
        assert_int_equal(d.index, round == 0 ? 20000 : 9000);
        char line[1024], want[1100];
        plush_diag_format(&d, line, sizeof line);
        snprintf(want, sizeof want, "plush: %s\n", line);
        cli_result r;
        CLI_RUN(&r, "info", path);
        cli_expect_one_error_line(&r);
        assert_string_equal(r.err, want);
        cli_result_free(&r);
        plush_buf_free(&b);
    }
    plush_pmx_free(m);
}

/* How many times needle occurs in text. */
static size_t count_of(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* The line of text that starts with prefix (up to its newline), or fails. */
static const char *line_starting(const char *text, const char *prefix, char *buf, size_t size)
{
    const char *p = strstr(text, prefix);
    if (!p)
        fail_msg("no line starting '%s' in:\n%.3000s", prefix, text);
    p += *p == '\n';
    size_t n = strcspn(p, "\n");
    snprintf(buf, size, "%.*s", (int)n, p);
    return buf;
}

/* A model whose materials are called 材質N: info lists every one with the bones that carry it (the skirt's
 * waist and skirt bones, the hair's head and hair bones), --bones every bone with its rigid body; the
 * same in JSON. */
static void test_info_materials_and_bones(void **state)
{
    (void)state;
    need(LUKA);
    cli_result r;
    char line[1024];
    CLI_RUN(&r, "info", LUKA);
    cli_expect_code(&r, 0);
    assert_int_equal(r.err_len, 0);
    expect_text_field(r.out, "materials", "31");
    assert_int_equal(count_of(r.out, "\n  material "), 31);
    assert_int_equal(count_of(r.out, "; bones \""), 31);
    assert_int_equal(count_of(r.out, "\n  bone "), 0);
    /* the English name in parentheses: what an English keyboard gives --cage */
    line_starting(r.out, "\n  material 17      \"材質18\" (Material18); 604 faces; no texture; bones \"下半身\" ", line,
                  sizeof line);
    expect_contains(line, "スカート");
    line_starting(r.out, "\n  material 2       \"材質3\" (Material3); 3401 faces; no texture; bones \"頭\" ", line,
                  sizeof line);
    expect_contains(line, "髪");
    line_starting(r.out, "\n  material 29      \"材質30\" (Material30)", line, sizeof line);
    expect_contains(line, "texture \"eyelu.bmp\"");
    cli_result_free(&r);

    CLI_RUN(&r, "info", "--bones", LUKA);
    cli_expect_code(&r, 0);
    assert_int_equal(count_of(r.out, "\n  bone "), 188);
    assert_int_equal(count_of(r.out, "\n  material "), 31);
    line_starting(r.out, "\n  bone 0           \"センター\"; no parent", line, sizeof line);
    line_starting(r.out, "\n  bone 12          \"前髪１\"; parent 4 \"頭\"; rigid body 1 \"前髪１\", physics", line,
                  sizeof line);
    cli_result_free(&r);

    CLI_RUN(&r, "info", "--json", "--bones", LUKA);
    cli_expect_code(&r, 0);
    assert_int_equal(expect_json_lines(&r), 1);
    expect_contains(r.out, "\"materials\":[{\"index\":0,\"name\":\"材質1\",");
    assert_int_equal(count_of(r.out, "\"soft_body\":null"), 31);
    assert_int_equal(count_of(r.out, "\"texture\":null"), 29);
    expect_contains(r.out, "\"texture\":\"eyelu.bmp\"");
    expect_contains(r.out, "{\"index\":17,\"name\":\"材質18\",\"name_en\":");
    expect_contains(r.out, "\"bones\":[{\"index\":0,\"name\":\"センター\",\"name_en\":");
    expect_contains(r.out, "{\"index\":12,\"name\":\"前髪１\",\"name_en\":\"");
    expect_contains(r.out, "\"rigid_body\":{\"index\":1,\"name\":\"前髪１\",\"mode\":\"physics\"}");
    assert_int_equal(count_of(r.out, "\"rigid_body\":{\"index\"") + count_of(r.out, "\"rigid_body\":null"), 188);
    cli_result_free(&r);

    CLI_RUN(&r, "info", "--bones=yes", LUKA);
    cli_expect_code(&r, 2);
    cli_result_free(&r);
}

/* A soft body's material says so in its line. */
static void test_info_soft_material(void **state)
{
    (void)state;
    char path[300], line[512];
    write_soft_model(path, sizeof path);
    cli_result r;
    CLI_RUN(&r, "info", path);
    cli_expect_code(&r, 0);
    line_starting(r.out, "\n  material 0 ", line, sizeof line);
    expect_contains(line, "; soft body 0 \"スカート\"");
    expect_contains(line, "\"cloth\"; "); /* no English name: nothing in parentheses */
    cli_result_free(&r);
    CLI_RUN(&r, "info", "--json", path);
    cli_expect_code(&r, 0);
    expect_contains(r.out, "\"soft_body\":{\"index\":0,\"name\":\"スカート\"}");
    cli_result_free(&r);
}

/* A material name the model does not have, wherever one is taken: one line naming the nearest names and
 * the command that lists them all, before any work is done. */
static void test_unknown_material_names(void **state)
{
    (void)state;
    need(LUKA);
    char out[300], obj[300], csv[300];
    cli_tmp_path(out, sizeof out, "names_out");
    cli_tmp_path(obj, sizeof obj, "names.obj");
    cli_tmp_path(csv, sizeof csv, "names.csv");
    const char *const commands[][9] = {
        {"run", LUKA, "--cage", "材質99", "-o", out},
        {"run", LUKA, "--cage", "材質18,材質99:200", "-o", out},
        {"run", LUKA, "--materials", "材質99", "-o", out},
        {"proxy", LUKA, "--materials", "材質99", "--triangles", "100", "-o", obj},
        {"bind", LUKA, "--materials", "材質99", "-o", csv},
    };
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        cli_result r;
        cli_run_list(&r, commands[i]);
        cli_expect_one_error_line(&r);
        expect_contains(r.err, "no material named \"材質99\"; nearest: \"材質9\" (Material9), \"材質19\" (Material19), "
                               "\"材質29\" (Material29), ");
        expect_contains(r.err, "plush info " LUKA " lists every material");
        assert_false(cli_exists(out) || cli_exists(obj) || cli_exists(csv));
        cli_result_free(&r);
    }
    /* a name that is part of others finds them first, whatever the case */
    cli_result r;
    CLI_RUN(&r, "run", LUKA, "--cage", "質18", "-o", out);
    cli_expect_one_error_line(&r);
    expect_contains(r.err, "nearest: \"材質18\"");
    cli_result_free(&r);
}

/* A material named by its English name or by its number as plush info lists it, as a user on an English
 * keyboard does: --cage skirt and --cage 8 make sample_finish's skirt cage, and the summary names it as
 * the model does; plush proxy takes both forms in one list. */
static void test_material_english_and_number(void **state)
{
    (void)state;
    need(SAMPLE_FINISH);
    const char *const texts[] = {"skirt", "8"};
    char out[300], obj[300], line[1024];
    for (size_t i = 0; i < 2; i++) {
        cli_result r;
        cli_tmp_path(out, sizeof out, i ? "number_out" : "english_out");
        CLI_RUN(&r, "run", SAMPLE_FINISH, "--cage", texts[i], "--frames", "2", "-o", out);
        cli_expect_code(&r, 0);
        line_starting(r.out, "\n  cage ", line, sizeof line);
        expect_contains(line, "(simplified from \"スカート\")");
        cli_result_free(&r);
    }
    cli_result r;
    CLI_RUN(&r, "info", SAMPLE_FINISH);
    cli_expect_code(&r, 0);
    line_starting(r.out, "\n  material 8       \"スカート\" (skirt); 792 faces; ", line, sizeof line);
    cli_result_free(&r);
    cli_tmp_path(obj, sizeof obj, "names.obj");
    CLI_RUN(&r, "proxy", SAMPLE_FINISH, "--materials", "hair,8", "--triangles", "100", "-o", obj);
    cli_expect_code(&r, 0);
    line_starting(r.out, "  source ", line, sizeof line);
    expect_contains(line, " triangles of \"髪\", \"スカート\", ");
    cli_result_free(&r);
}

/* A text that could mean more than the user meant is one line naming the materials, not a guess: on a copy
 * of sample_finish whose tops are "skirt" in English too and whose pants are named スカート, "skirt" is two
 * materials of different names, and "8" (or "pants") one of the two named スカート. A near miss names the
 * nearest with their English names; a number past the last says which there are. */
static void test_material_ambiguous_names(void **state)
{
    (void)state;
    need(SAMPLE_FINISH);
    char path[300], out[300], csv[300], obj[300];
    cli_tmp_path(path, sizeof path, "ambiguous.pmx");
    cli_tmp_path(out, sizeof out, "ambiguous_out");
    cli_tmp_path(csv, sizeof csv, "ambiguous.csv");
    cli_tmp_path(obj, sizeof obj, "ambiguous.obj");
    plush_diag d = pmx_fx_diag();
    plush_pmx_model *m = NULL;
    assert_int_equal(plush_pmx_read_file(SAMPLE_FINISH, NULL, &m, &d), PLUSH_OK);
    assert_true(m->material_count == 13);
    m->materials[0].name_en = text(m, "髪"); /* an English name that says nothing new */
    m->materials[7].name_en = text(m, "skirt");
    m->materials[9].name = text(m, "スカート");
    assert_int_equal(plush_pmx_write_file(m, NULL, path, &d), PLUSH_OK);
    plush_pmx_free(m);
    char line[1024];
    cli_result r;
    CLI_RUN(&r, "info", path);
    cli_expect_code(&r, 0);
    line_starting(r.out, "\n  material 0       \"髪\"; 940 faces; ", line, sizeof line);
    line_starting(r.out, "\n  material 7       \"トップス\" (skirt); ", line, sizeof line);
    cli_result_free(&r);

    const struct {
        const char *model, *command, *option, *text, *message;
    } cases[] = {
        {path, "run", "--cage", "skirt",
         "\"skirt\" is the English name of materials of different names: 7 \"トップス\", 8 \"スカート\""},
        {path, "run", "--materials", "8",
         "\"8\" means material 8, whose name \"スカート\" materials 8, 9 share; materials are chosen by name: "
         "\"スカート\" takes them all"},
        {path, "bind", "--materials", "pants",
         "\"pants\" means material 9, whose name \"スカート\" materials 8, 9 share"},
        {SAMPLE_FINISH, "proxy", "--materials", "Skirt",
         "no material named \"Skirt\"; nearest: \"スカート\" (skirt), "},
        {SAMPLE_FINISH, "run", "--cage", "13", "no material named \"13\", and material numbers go from 0 to 12"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool run = strcmp(cases[i].command, "run") == 0, proxy = strcmp(cases[i].command, "proxy") == 0;
        const char *args[] = {cases[i].command, cases[i].model, cases[i].option, cases[i].text,
                              "-o", run ? out : proxy ? obj : csv, proxy ? "--triangles" : NULL, "100", NULL};
        cli_run_list(&r, args);
        cli_expect_one_error_line(&r);
        expect_contains(r.err, cases[i].model);
        expect_contains(r.err, cases[i].message);
        expect_contains(r.err, " lists every material");
        assert_false(cli_exists(out) || cli_exists(csv) || cli_exists(obj));
        cli_result_free(&r);
    }
    /* the name itself still takes every material of it */
    CLI_RUN(&r, "run", path, "--cage", "スカート", "--frames", "2", "-o", out);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
}

/* ---- convert --------------------------------------------------------------------------------- */

static void convert_ok(const char *in, const char *out, const char *const *extra)
{
    const char *args[16] = {"convert", in, "-o", out};
    int n = 4;
    for (; extra && *extra && n < 15; extra++)
        args[n++] = *extra;
    args[n] = NULL;
    cli_result r;
    cli_run_list(&r, args);
    cli_expect_code(&r, 0);
    assert_int_equal(r.out_len, 0);
    cli_result_free(&r);
}

static void test_convert_identity(void **state)
{
    (void)state;
    const char *inputs[] = {ALICIA, MIXED_UTF8};
    for (size_t i = 0; i < 2; i++) {
        need(inputs[i]);
        char out[300];
        cli_tmp_path(out, sizeof out, "same.pmx");
        convert_ok(inputs[i], out, NULL);
        if (!same_bytes(inputs[i], out))
            fail_msg("convert changed %s", inputs[i]);
        assert_int_equal(unlink(out), 0);
    }
    assert_int_equal(stray_temp_files(), 0);
}

static void test_convert_encoding_round_trip(void **state)
{
    (void)state;
    need(ALICIA);
    char utf8[300], back[300];
    cli_tmp_path(utf8, sizeof utf8, "alicia_utf8.pmx");
    cli_tmp_path(back, sizeof back, "alicia_back.pmx");
    convert_ok(ALICIA, utf8, (const char *const[]){"--encoding", "utf8", NULL});
    cli_result r;
    CLI_RUN(&r, "info", "--json", utf8);
    cli_expect_code(&r, 0);
    expect_contains(r.out, "\"encoding\":\"utf8\"");
    expect_contains(r.out, "\"vertices\":22311");
    expect_contains(r.out, "\"name_en\":\"Alicia Solid\"");
    cli_result_free(&r);
    convert_ok(utf8, back, (const char *const[]){"--encoding=utf16", "--index-sizes", "keep", NULL});
    if (!same_bytes(ALICIA, back))
        fail_msg("UTF-8 and back to UTF-16 is not the original");
}

static void test_convert_version(void **state)
{
    (void)state;
    need(ALICIA);
    char v21[300], v20[300];
    cli_tmp_path(v21, sizeof v21, "alicia21.pmx");
    cli_tmp_path(v20, sizeof v20, "alicia20.pmx");
    convert_ok(ALICIA, v21, (const char *const[]){"--pmx-version", "2.1", NULL});
    cli_result r;
    CLI_RUN(&r, "info", "--json", v21);
    cli_expect_code(&r, 0);
    expect_contains(r.out, "\"version\":2.1");
    expect_contains(r.out, "\"bones\":150");
    cli_result_free(&r);
    CLI_RUN(&r, "info", v21);
    expect_text_field(r.out, "format", "PMX 2.1");
    cli_result_free(&r);
    /* Nothing of 2.1 was added, so going back gives the original. */
    convert_ok(v21, v20, (const char *const[]){"--pmx-version", "2.0", NULL});
    if (!same_bytes(ALICIA, v20))
        fail_msg("2.0 -> 2.1 -> 2.0 is not the original");
}

static void test_convert_minimal_indices(void **state)
{
    (void)state;
    need(WIDE_INDICES);
    char out[300];
    cli_tmp_path(out, sizeof out, "narrow.pmx");
    convert_ok(WIDE_INDICES, out, (const char *const[]){"--index-sizes", "minimal", NULL});
    cli_result r;
    CLI_RUN(&r, "info", "--json", out);
    cli_expect_code(&r, 0);
    expect_contains(r.out, "\"index_sizes\":{\"vertex\":1,\"texture\":1,\"material\":1,\"bone\":1,\"morph\":1,"
                           "\"rigid_body\":1}");
    expect_contains(r.out, "\"vertices\":48");
    cli_result_free(&r);
}

/* 2.1 -> 2.0 fails unless --lossy, which drops with warnings on stderr. */
static void test_convert_lossy(void **state)
{
    (void)state;
    char in[300], out[300];
    write_soft_model(in, sizeof in);
    cli_tmp_path(out, sizeof out, "soft20.pmx");
    cli_result r;
    CLI_RUN(&r, "convert", in, "-o", out, "--pmx-version", "2.0");
    cli_expect_one_error_line(&r);
    assert_false(cli_exists(out));
    cli_result_free(&r);

    CLI_RUN(&r, "convert", in, "-o", out, "--pmx-version", "2.0", "--lossy");
    cli_expect_code(&r, 0);
    assert_true(r.err_len > 0);
    for (const char *line = r.err; *line; line = strchr(line, '\n') + 1) {
        assert_memory_equal(line, "plush: warning: ", 16);
        assert_non_null(strchr(line, '\n'));
    }
    cli_result_free(&r);
    CLI_RUN(&r, "info", "--json", out);
    cli_expect_code(&r, 0);
    expect_contains(r.out, "\"version\":2.0");
    expect_contains(r.out, "\"soft_bodies\":0");
    cli_result_free(&r);
}

/* ---- bad input ------------------------------------------------------------------------------- */

static void expect_bad_input(const char *in, bool want_offset)
{
    char out[300];
    cli_tmp_path(out, sizeof out, "never.pmx");
    cli_result r;
    CLI_RUN(&r, "info", in);
    cli_expect_one_error_line(&r);
    if (want_offset)
        expect_contains(r.err, "(at byte ");
    assert_int_equal(r.out_len, 0);
    cli_result_free(&r);

    CLI_RUN(&r, "info", "--json", in);
    cli_expect_one_error_line(&r);
    assert_int_equal(expect_json_lines(&r), 1);
    expect_contains(r.out, "\"error\":");
    cli_result_free(&r);

    CLI_RUN(&r, "convert", in, "-o", out);
    cli_expect_one_error_line(&r);
    if (want_offset)
        expect_contains(r.err, "(at byte ");
    cli_result_free(&r);
    assert_false(cli_exists(out));
    assert_int_equal(stray_temp_files(), 0);
}

static void test_bad_input(void **state)
{
    (void)state;
    need(ALICIA);
    char path[300];
    struct stat st;
    assert_int_equal(stat(ALICIA, &st), 0);
    expect_bad_input(truncated_copy(ALICIA, (size_t)st.st_size / 2, path, sizeof path), true);
    expect_bad_input("/nonexistent/dir/model.pmx", false);

    unsigned char garbage[4096];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof garbage; i++) {
        x = x * 1103515245u + 12345u;
        garbage[i] = (unsigned char)(x >> 16);
    }
    cli_tmp_path(path, sizeof path, "garbage.pmx");
    cli_write_all(path, garbage, sizeof garbage);
    expect_bad_input(path, true);
    /* Garbage behind a valid signature goes to the PMX reader. */
    memcpy(garbage, "PMX ", 4);
    cli_write_all(path, garbage, sizeof garbage);
    expect_bad_input(path, true);
    cli_tmp_path(path, sizeof path, "empty.pmx");
    cli_write_all(path, "", 0);
    expect_bad_input(path, true);
    expect_bad_input(cli_tmp_dir(), false); /* a directory */
    /* A FIFO with no writer: opening it to read would wait forever. */
    cli_tmp_path(path, sizeof path, "fifo.pmx");
    assert_int_equal(mkfifo(path, 0600), 0);
    expect_bad_input(path, false);
}

/* A sample of prefixes of real files: each fails cleanly with its byte offset. */
static void test_truncation_sample(void **state)
{
    (void)state;
    const char *inputs[] = {MIXED_UTF8, ALICIA, MOTION_0046};
    for (size_t f = 0; f < sizeof inputs / sizeof inputs[0]; f++) {
        need(inputs[f]);
        struct stat st;
        assert_int_equal(stat(inputs[f], &st), 0);
        size_t size = (size_t)st.st_size;
        size_t cuts[] = {1, 3, 4, 9, 17, 40, 100, 300, size / 3, size / 2, size - 100, size - 1};
        for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
            if (cuts[i] >= size)
                continue;
            char path[300];
            truncated_copy(inputs[f], cuts[i], path, sizeof path);
            cli_result r;
            CLI_RUN(&r, "info", path);
            cli_expect_one_error_line(&r);
            expect_contains(r.err, "(at byte ");
            cli_result_free(&r);
            unlink(path);
        }
    }
}

/* A failed convert leaves an existing output file as it was. */
static void test_convert_failure_keeps_output(void **state)
{
    (void)state;
    need(ALICIA);
    char in[300], out[300];
    truncated_copy(ALICIA, 5000, in, sizeof in);
    cli_tmp_path(out, sizeof out, "keep.pmx");
    cli_write_all(out, "old", 3);
    cli_result r;
    CLI_RUN(&r, "convert", in, "-o", out);
    cli_expect_one_error_line(&r);
    cli_result_free(&r);
    size_t len;
    char *data = cli_read_all(out, &len);
    assert_non_null(data);
    assert_int_equal(len, 3);
    assert_memory_equal(data, "old", 3);
    free(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_checker),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_info_json_pmx),
        cmocka_unit_test(test_info_json_vmd),
        cmocka_unit_test(test_info_vmd_curves),
        cmocka_unit_test(test_info_text),
        cmocka_unit_test(test_info_materials_and_bones),
        cmocka_unit_test(test_info_soft_material),
        cmocka_unit_test(test_unknown_material_names),
        cmocka_unit_test(test_material_english_and_number),
        cmocka_unit_test(test_material_ambiguous_names),
        cmocka_unit_test(test_info_soft_body),
        cmocka_unit_test(test_info_vpd_and_content_detection),
        cmocka_unit_test(test_info_several_with_failure),
        cmocka_unit_test(test_info_every_shared_file),
        cmocka_unit_test(test_convert_identity),
        cmocka_unit_test(test_convert_encoding_round_trip),
        cmocka_unit_test(test_convert_version),
        cmocka_unit_test(test_convert_minimal_indices),
        cmocka_unit_test(test_convert_lossy),
        cmocka_unit_test(test_info_errors_match_full_read),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_truncation_sample),
        cmocka_unit_test(test_convert_failure_keeps_output),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
