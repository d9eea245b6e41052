/* Wavefront OBJ reader: positions and faces, everything else skipped. One pass over the bytes with a
 * cursor that knows its line; positions and triangles grow in malloc'd arrays and move into the model's
 * arena at the end. */
#include "plush/obj.h"
#include "plush/sys/core.h"
#include "plush/sys/obj.h"
#include "core/text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct obj_parser {
    const uint8_t *p;
    size_t n, pos;
    size_t line;                  /* 1-based physical line of pos */
    plush_diag *diag;
    float (*pos3)[3];
    size_t vcount, vcap;
    uint32_t (*tris)[3];
    size_t tcount, tcap;
    uint32_t *corners;            /* one face's resolved corners */
    size_t ccap;
    size_t faces, texcoords, normals;
    bool warned_elements;
    size_t locate;                /* plush_obj_locate_position: the position sought, SIZE_MAX otherwise */
    size_t located_line, located_at;
    bool located;
} obj_parser;

static plush_status fail_at(obj_parser *ps, plush_status st, size_t at, const char *fmt, const char *what)
{
    return plush_diag_fail(ps->diag, st, (int64_t)at, "line", (int64_t)ps->line, fmt, what);
}

static plush_status no_memory(obj_parser *ps)
{
    return plush_diag_fail(ps->diag, PLUSH_E_NOMEM, (int64_t)ps->pos, "line", (int64_t)ps->line, "out of memory");
}

/* Grows *array (elements of size bytes) to hold one more than *count. */
static bool grow(void **array, size_t *cap, size_t count, size_t size)
{
    if (count < *cap)
        return true;
    size_t want = *cap ? *cap * 2 : 256;
    if (want < *cap || want > SIZE_MAX / size)
        return false;
    void *p = realloc(*array, want * size);
    if (!p)
        return false;
    *array = p;
    *cap = want;
    return true;
}

/* ---- the cursor ------------------------------------------------------------------------------ */

static bool at_eol(const obj_parser *ps)
{
    return ps->pos >= ps->n || ps->p[ps->pos] == '\n' || ps->p[ps->pos] == '\r';
}

/* A line break at pos (LF, CRLF or a lone CR): its length, or 0. */
static size_t newline_length(const obj_parser *ps, size_t at)
{
    if (at >= ps->n)
        return 0;
    if (ps->p[at] == '\n')
        return 1;
    if (ps->p[at] == '\r')
        return at + 1 < ps->n && ps->p[at + 1] == '\n' ? 2 : 1;
    return 0;
}

/* Skips blanks, a comment up to the line's end, and backslash line continuations. */
static void skip_blank(obj_parser *ps)
{
    while (ps->pos < ps->n) {
        uint8_t c = ps->p[ps->pos];
        if (c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\0') {
            ps->pos++;
        } else if (c == '\\' && newline_length(ps, ps->pos + 1) > 0) {
            ps->pos += 1 + newline_length(ps, ps->pos + 1);
            ps->line++;
        } else if (c == '#') {
            while (!at_eol(ps))
                ps->pos++;
        } else {
            return;
        }
    }
}

/* The next blank-separated token of the current line; false at the line's end. */
static bool next_token(obj_parser *ps, size_t *start, size_t *len)
{
    skip_blank(ps);
    if (at_eol(ps))
        return false;
    *start = ps->pos;
    while (!at_eol(ps)) {
        uint8_t c = ps->p[ps->pos];
        if (c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\0' || c == '#' ||
            (c == '\\' && newline_length(ps, ps->pos + 1) > 0))
            break;
        ps->pos++;
    }
    *len = ps->pos - *start;
    return true;
}

/* Moves past the rest of the line (continuations included) and its line break. */
static void end_line(obj_parser *ps)
{
    size_t s, l;
    while (next_token(ps, &s, &l))
        ;
    size_t nl = newline_length(ps, ps->pos);
    if (nl > 0) {
        ps->pos += nl;
        ps->line++;
    }
}

/* ---- numbers --------------------------------------------------------------------------------- */

/* A whole optionally signed decimal integer; false when malformed or beyond +-2^40. */
static bool parse_int(const uint8_t *s, size_t n, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '+' || s[i] == '-'))
        neg = s[i++] == '-';
    if (i >= n)
        return false;
    int64_t v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9' || v > ((int64_t)1 << 40))
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = neg ? -v : v;
    return true;
}

/* ---- statements ------------------------------------------------------------------------------ */

static plush_status read_position(obj_parser *ps, size_t keyword_at)
{
    float v[3];
    size_t count = 0, s, l;
    while (next_token(ps, &s, &l)) {
        double d;
        if (!plush__parse_decimal((const char *)ps->p + s, l, &d))
            return fail_at(ps, PLUSH_E_FORMAT, s, "%s: malformed number", "v");
        if (!isfinite(d) || !isfinite((float)d))
            return fail_at(ps, PLUSH_E_FORMAT, s, "%s: number out of range", "v");
        if (count < 3)
            v[count] = (float)d;
        if (++count > 7)
            return fail_at(ps, PLUSH_E_FORMAT, s, "%s: more than seven numbers", "v");
    }
    if (count < 3)
        return fail_at(ps, PLUSH_E_FORMAT, keyword_at, "%s: a position needs three numbers", "v");
    if (ps->vcount >= UINT32_MAX - 1)
        return fail_at(ps, PLUSH_E_RANGE, keyword_at, "%s: too many vertices", "v");
    if (ps->locate != SIZE_MAX) {
        if (ps->vcount++ == ps->locate)
            ps->located = true, ps->located_line = ps->line, ps->located_at = keyword_at;
        return PLUSH_OK;
    }
    if (!grow((void **)&ps->pos3, &ps->vcap, ps->vcount, sizeof *ps->pos3))
        return no_memory(ps);
    memcpy(ps->pos3[ps->vcount++], v, sizeof v);
    return PLUSH_OK;
}

/* One reference: 1-based, or negative counting back from the last defined; *out 0-based. */
static plush_status resolve(obj_parser *ps, size_t at, const uint8_t *s, size_t n, size_t defined,
                            const char *what, uint32_t *out)
{
    int64_t i;
    if (!parse_int(s, n, &i))
        return fail_at(ps, PLUSH_E_FORMAT, at, "f: malformed %s index", what);
    if (i == 0)
        return fail_at(ps, PLUSH_E_RANGE, at, "f: %s index 0 (indices start at 1)", what);
    int64_t k = i > 0 ? i - 1 : (int64_t)defined + i;
    if (k < 0 || k >= (int64_t)defined) {
        char msg[PLUSH_DIAG_MESSAGE];
        snprintf(msg, sizeof msg, "f: %s index %lld refers to no %s (%zu defined so far)", what, (long long)i, what,
                 defined);
        return plush_diag_fail(ps->diag, PLUSH_E_RANGE, (int64_t)at, "line", (int64_t)ps->line, "%s", msg);
    }
    *out = (uint32_t)k;
    return PLUSH_OK;
}

/* "v", "v/vt", "v//vn" or "v/vt/vn". */
static plush_status read_corner(obj_parser *ps, size_t s, size_t l, uint32_t *out)
{
    const uint8_t *t = ps->p + s;
    size_t a = 0;
    while (a < l && t[a] != '/')
        a++;
    plush_status st = resolve(ps, s, t, a, ps->vcount, "vertex", out);
    if (st != PLUSH_OK || a == l)
        return st;
    size_t b = a + 1;
    while (b < l && t[b] != '/')
        b++;
    uint32_t unused;
    if (b > a + 1 && (st = resolve(ps, s, t + a + 1, b - a - 1, ps->texcoords, "texture", &unused)) != PLUSH_OK)
        return st;
    if (b == l)
        return b > a + 1 ? PLUSH_OK : fail_at(ps, PLUSH_E_FORMAT, s, "f: malformed corner ('%s')", "v/");
    if (b + 1 == l)
        return fail_at(ps, PLUSH_E_FORMAT, s, "f: malformed corner (%s)", "nothing after the second '/'");
    return resolve(ps, s, t + b + 1, l - b - 1, ps->normals, "normal", &unused);
}

static plush_status read_face(obj_parser *ps, size_t keyword_at)
{
    size_t count = 0, s, l;
    plush_status st;
    while (next_token(ps, &s, &l)) {
        if (!grow((void **)&ps->corners, &ps->ccap, count, sizeof *ps->corners))
            return no_memory(ps);
        if ((st = read_corner(ps, s, l, &ps->corners[count])) != PLUSH_OK)
            return st;
        count++;
    }
    if (count < 3)
        return fail_at(ps, PLUSH_E_FORMAT, keyword_at, "%s: a face needs three corners", "f");
    for (size_t i = 1; i + 1 < count; i++) {
        if (!grow((void **)&ps->tris, &ps->tcap, ps->tcount, sizeof *ps->tris))
            return no_memory(ps);
        uint32_t *t = ps->tris[ps->tcount++];
        t[0] = ps->corners[0], t[1] = ps->corners[i], t[2] = ps->corners[i + 1];
    }
    ps->faces++;
    return PLUSH_OK;
}

static bool token_is(const obj_parser *ps, size_t s, size_t l, const char *word)
{
    size_t n = strlen(word);
    return l == n && memcmp(ps->p + s, word, n) == 0;
}

static plush_status read_statement(obj_parser *ps)
{
    size_t s, l;
    if (!next_token(ps, &s, &l))
        return PLUSH_OK;
    if (token_is(ps, s, l, "v"))
        return read_position(ps, s);
    if (token_is(ps, s, l, "f"))
        return read_face(ps, s);
    if (token_is(ps, s, l, "vt"))
        ps->texcoords++;
    else if (token_is(ps, s, l, "vn"))
        ps->normals++;
    else if ((token_is(ps, s, l, "l") || token_is(ps, s, l, "p")) && !ps->warned_elements) {
        ps->warned_elements = true;
        plush_diag_warn(ps->diag, (int64_t)s, "line", (int64_t)ps->line, "line and point elements are skipped");
    }
    return PLUSH_OK;
}

static plush_status finish(obj_parser *ps, plush_obj_model **out)
{
    plush_obj_model *obj = calloc(1, sizeof *obj);
    if (!obj)
        return no_memory(ps);
    obj->positions = plush_arena_array(&obj->arena, ps->vcount ? ps->vcount : 1, sizeof *obj->positions);
    obj->triangles = plush_arena_array(&obj->arena, ps->tcount ? ps->tcount : 1, sizeof *obj->triangles);
    if (!obj->positions || !obj->triangles) {
        plush_obj_model_free(obj);
        return no_memory(ps);
    }
    if (ps->vcount)
        memcpy(obj->positions, ps->pos3, ps->vcount * sizeof *ps->pos3);
    if (ps->tcount)
        memcpy(obj->triangles, ps->tris, ps->tcount * sizeof *ps->tris);
    obj->vertex_count = ps->vcount;
    obj->triangle_count = ps->tcount;
    obj->face_count = ps->faces;
    obj->texcoord_count = ps->texcoords;
    obj->normal_count = ps->normals;
    *out = obj;
    return PLUSH_OK;
}

plush_status plush_obj_read(const uint8_t *data, size_t size, plush_obj_model **out, plush_diag *diag)
{
    *out = NULL;
    obj_parser ps = {.p = data, .n = size, .line = 1, .diag = diag, .locate = SIZE_MAX};
    plush_status st = PLUSH_OK;
    /* A UTF-8 byte order mark some editors write. */
    if (size >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF)
        ps.pos = 3;
    while (st == PLUSH_OK && ps.pos < ps.n) {
        st = read_statement(&ps);
        end_line(&ps);
    }
    if (st == PLUSH_OK)
        st = finish(&ps, out);
    free(ps.pos3);
    free(ps.tris);
    free(ps.corners);
    return st;
}

bool plush_obj_locate_position(const uint8_t *data, size_t size, size_t vertex, size_t *line, size_t *offset)
{
    plush_diag ignored = {0};
    obj_parser ps = {.p = data, .n = size, .line = 1, .diag = &ignored, .locate = vertex};
    if (size >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF)
        ps.pos = 3;
    plush_status st = PLUSH_OK;
    while (st == PLUSH_OK && !ps.located && ps.pos < ps.n) {
        st = read_statement(&ps);
        end_line(&ps);
    }
    free(ps.tris);
    free(ps.corners);
    *line = ps.located_line;
    *offset = ps.located_at;
    return ps.located;
}

static plush_status parse_file(const uint8_t *data, size_t size, void *ctx, plush_diag *diag)
{
    return plush_obj_read(data, size, (plush_obj_model **)ctx, diag);
}

plush_status plush_obj_read_file(const char *path, plush_obj_model **out, plush_diag *diag)
{
    *out = NULL;
    return plush_file_parse(path, parse_file, out, diag);
}

void plush_obj_model_free(plush_obj_model *obj)
{
    if (!obj)
        return;
    plush_arena_free(&obj->arena);
    free(obj);
}
