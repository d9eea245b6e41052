/* VPD poses: a Shift-JIS text of bone (and, in newer files, morph) blocks.
 *
 * The text is scanned as bytes and only names are decoded: every character the grammar needs is ASCII
 * below 0x40 or a letter, and no CP932 trail byte can be a line break, '/', ',', ';' or a digit, so byte
 * offsets in diagnostics stay offsets into the file. Trail bytes can look like ASCII letters or braces,
 * but only inside a name, and a name runs to the end of its line. */
#include "plush/vpd.h"
#include "plush/sys/core.h"
#include "core/text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define VPD_SIGNATURE "Vocaloid Pose Data file"

enum { VPD_NUMBER_MAX = 64, VPD_FIRST_CAPACITY = 16 };

typedef struct vpd_parser {
    const uint8_t *text;
    size_t size;
    size_t pos;
    plush_diag *diag;
    plush_sjis *sjis;
    plush_vpd_pose *pose;
    size_t bone_cap, morph_cap;
} vpd_parser;

static bool at_end(const vpd_parser *ps) { return ps->pos >= ps->size; }

static bool is_break(uint8_t c) { return c == '\n' || c == '\r'; }

static bool is_blank(uint8_t c) { return c == ' ' || c == '\t' || c == '\f' || c == '\v'; }

static bool at_comment(const vpd_parser *ps)
{
    return ps->pos + 1 < ps->size && ps->text[ps->pos] == '/' && ps->text[ps->pos + 1] == '/';
}

/* Where the line holding byte at begins: errors point at lines, as a user reads the file. */
static size_t line_start(const vpd_parser *ps, size_t at)
{
    if (at > ps->size)
        at = ps->size;
    while (at > 0 && !is_break(ps->text[at - 1]))
        at--;
    return at;
}

/* Skips blanks, line breaks and comments between tokens. */
static void skip_space(vpd_parser *ps)
{
    while (!at_end(ps)) {
        uint8_t c = ps->text[ps->pos];
        if (is_blank(c) || is_break(c)) {
            ps->pos++;
        } else if (at_comment(ps)) {
            while (!at_end(ps) && !is_break(ps->text[ps->pos]))
                ps->pos++;
        } else {
            break;
        }
    }
}

static bool take_literal(vpd_parser *ps, const char *lit)
{
    size_t n = strlen(lit);
    if (n > ps->size - ps->pos || memcmp(ps->text + ps->pos, lit, n) != 0)
        return false;
    ps->pos += n;
    return true;
}

static plush_status fail_at(vpd_parser *ps, plush_status st, size_t at, const char *section, int64_t index,
                            const char *what)
{
    return plush_diag_fail(ps->diag, st, (int64_t)line_start(ps, at), section, index, "%s", what);
}

/* Decodes the bytes [from, to) with surrounding blanks removed. */
static plush_status take_name(vpd_parser *ps, size_t from, size_t to, plush_str *out)
{
    while (from < to && is_blank(ps->text[from]))
        from++;
    while (to > from && is_blank(ps->text[to - 1]))
        to--;
    plush_status st = plush_sjis_decode(ps->sjis, &ps->pose->arena, ps->text + from, to - from, out, NULL);
    if (st != PLUSH_OK)
        return plush_diag_fail(ps->diag, st, (int64_t)line_start(ps, from), NULL, -1, "cannot decode a name");
    return PLUSH_OK;
}

/* One number, read up to the first character that cannot belong to it; all of it must parse. */
static plush_status take_number(vpd_parser *ps, const char *section, int64_t index, float *out)
{
    skip_space(ps);
    size_t at = ps->pos;
    if (at_end(ps))
        return PLUSH_E_TRUNCATED;
    size_t n = 0;
    while (!at_end(ps) && n <= VPD_NUMBER_MAX) {
        uint8_t c = ps->text[ps->pos];
        if (!((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.' || c == 'e' || c == 'E'))
            break;
        n++;
        ps->pos++;
    }
    if (n == 0 || n > VPD_NUMBER_MAX)
        return fail_at(ps, PLUSH_E_FORMAT, at, section, index, "expected a number");
    double v;
    if (!plush__parse_decimal((const char *)ps->text + at, n, &v))
        return fail_at(ps, PLUSH_E_FORMAT, at, section, index, "malformed number");
    if (!isfinite(v) || !isfinite((float)v))
        return fail_at(ps, PLUSH_E_FORMAT, at, section, index, "number out of range");
    *out = (float)v;
    return PLUSH_OK;
}

/* "a,b,c;" with any spacing or comments between the parts. PLUSH_E_TRUNCATED (not recorded) when the
 * text ends first: the caller names the unfinished block. */
static plush_status take_numbers(vpd_parser *ps, float *dst, size_t n, const char *section, int64_t index)
{
    for (size_t i = 0; i < n; i++) {
        plush_status st = take_number(ps, section, index, &dst[i]);
        if (st != PLUSH_OK)
            return st;
        skip_space(ps);
        if (at_end(ps))
            return PLUSH_E_TRUNCATED;
        uint8_t want = i + 1 < n ? ',' : ';';
        if (ps->text[ps->pos] != want)
            return fail_at(ps, PLUSH_E_FORMAT, ps->pos, section, index,
                           want == ',' ? "expected ',' between numbers" : "expected ';' after the numbers");
        ps->pos++;
    }
    return PLUSH_OK;
}

static plush_status read_header(vpd_parser *ps, uint32_t *bone_count, size_t *count_line)
{
    skip_space(ps);
    size_t sig = strlen(VPD_SIGNATURE);
    if (!take_literal(ps, VPD_SIGNATURE)) {
        size_t have = ps->size - ps->pos;
        bool prefix = have < sig && memcmp(ps->text + ps->pos, VPD_SIGNATURE, have) == 0;
        return fail_at(ps, prefix ? PLUSH_E_TRUNCATED : PLUSH_E_FORMAT, ps->pos, "header", -1,
                       "not a VPD file (no \"" VPD_SIGNATURE "\" line)");
    }
    if (!at_end(ps) && !is_blank(ps->text[ps->pos]) && !is_break(ps->text[ps->pos]) && !at_comment(ps))
        return fail_at(ps, PLUSH_E_FORMAT, ps->pos, "header", -1, "not a VPD file (signature line goes on)");

    skip_space(ps);
    size_t from = ps->pos;
    while (!at_end(ps) && ps->text[ps->pos] != ';' && !is_break(ps->text[ps->pos]))
        ps->pos++;
    if (at_end(ps) || ps->text[ps->pos] != ';')
        return fail_at(ps, at_end(ps) ? PLUSH_E_TRUNCATED : PLUSH_E_FORMAT, from, "header", -1,
                       "the model line does not end in ';'");
    plush_status st = take_name(ps, from, ps->pos, &ps->pose->model_name);
    if (st != PLUSH_OK)
        return st;
    ps->pos++;

    skip_space(ps);
    *count_line = ps->pos;
    uint64_t n = 0;
    size_t digits = 0;
    while (!at_end(ps) && ps->text[ps->pos] >= '0' && ps->text[ps->pos] <= '9') {
        n = n * 10 + (uint64_t)(ps->text[ps->pos++] - '0');
        if (n > UINT32_MAX)
            return fail_at(ps, PLUSH_E_FORMAT, *count_line, "header", -1, "bone count out of range");
        digits++;
    }
    while (!at_end(ps) && is_blank(ps->text[ps->pos]))
        ps->pos++;
    if (digits == 0 || at_end(ps) || ps->text[ps->pos] != ';')
        return fail_at(ps, at_end(ps) ? PLUSH_E_TRUNCATED : PLUSH_E_FORMAT, *count_line, "header", -1,
                       "expected the bone count line \"<N>;\"");
    ps->pos++;
    *bone_count = (uint32_t)n;
    return PLUSH_OK;
}

/* Grows an arena array by doubling; the abandoned copies stay in the arena, at most as much again. */
static void *grow(plush_arena *arena, void *old, size_t count, size_t *cap, size_t size)
{
    if (count < *cap)
        return old;
    size_t ncap = *cap ? *cap * 2 : VPD_FIRST_CAPACITY;
    void *p = plush_arena_array(arena, ncap, size);
    if (!p)
        return NULL;
    if (count)
        memcpy(p, old, count * size);
    *cap = ncap;
    return p;
}

/* One "Bone<k>{name ... }" or "Morph<k>{name ... }" block; ps->pos is at its first letter. */
static plush_status read_block(vpd_parser *ps)
{
    plush_vpd_pose *pose = ps->pose;
    size_t block = ps->pos;
    bool bone = take_literal(ps, "Bone");
    if (!bone && !take_literal(ps, "Morph")) {
        bool cut = ps->size - ps->pos < 5 && (memcmp(ps->text + ps->pos, "Bone", ps->size - ps->pos) == 0 ||
                                              memcmp(ps->text + ps->pos, "Morph", ps->size - ps->pos) == 0);
        return fail_at(ps, cut ? PLUSH_E_TRUNCATED : PLUSH_E_FORMAT, block, NULL, -1,
                       "expected a Bone or Morph block");
    }
    const char *section = bone ? "bone" : "morph";
    int64_t index = (int64_t)(bone ? pose->bone_count : pose->morph_count);
    while (!at_end(ps) && ps->text[ps->pos] >= '0' && ps->text[ps->pos] <= '9')
        ps->pos++;
    while (!at_end(ps) && is_blank(ps->text[ps->pos]))
        ps->pos++;
    if (at_end(ps))
        return fail_at(ps, PLUSH_E_TRUNCATED, block, section, index, "data ends inside the block");
    if (ps->text[ps->pos] != '{')
        return fail_at(ps, PLUSH_E_FORMAT, block, section, index, "expected '{' after the block's number");
    size_t from = ++ps->pos;
    while (!at_end(ps) && !is_break(ps->text[ps->pos]) && !at_comment(ps))
        ps->pos++;

    plush_str name;
    plush_status st = take_name(ps, from, ps->pos, &name);
    if (st != PLUSH_OK)
        return st;
    if (bone) {
        plush_vpd_bone *b = grow(&pose->arena, pose->bones, pose->bone_count, &ps->bone_cap, sizeof *b);
        if (!b)
            return plush_diag_fail(ps->diag, PLUSH_E_NOMEM, (int64_t)block, section, index, "out of memory");
        pose->bones = b;
        b = &pose->bones[pose->bone_count];
        b->name = name;
        st = take_numbers(ps, b->translation, 3, section, index);
        if (st == PLUSH_OK)
            st = take_numbers(ps, b->rotation, 4, section, index);
    } else {
        plush_vpd_morph *m = grow(&pose->arena, pose->morphs, pose->morph_count, &ps->morph_cap, sizeof *m);
        if (!m)
            return plush_diag_fail(ps->diag, PLUSH_E_NOMEM, (int64_t)block, section, index, "out of memory");
        pose->morphs = m;
        m = &pose->morphs[pose->morph_count];
        m->name = name;
        st = take_numbers(ps, &m->weight, 1, section, index);
    }
    if (st == PLUSH_OK) {
        skip_space(ps);
        if (at_end(ps))
            st = PLUSH_E_TRUNCATED;
        else if (ps->text[ps->pos] != '}')
            return fail_at(ps, PLUSH_E_FORMAT, ps->pos, section, index, "expected '}' to close the block");
    }
    if (st == PLUSH_E_TRUNCATED)
        return fail_at(ps, st, block, section, index, "data ends inside the block");
    if (st != PLUSH_OK)
        return st;
    ps->pos++;
    if (bone)
        pose->bone_count++;
    else
        pose->morph_count++;
    return PLUSH_OK;
}

static plush_status read_pose(vpd_parser *ps)
{
    uint32_t declared = 0;
    size_t count_line = 0;
    plush_status st = read_header(ps, &declared, &count_line);
    if (st != PLUSH_OK)
        return st;
    for (;;) {
        skip_space(ps);
        if (at_end(ps))
            break;
        st = read_block(ps);
        if (st != PLUSH_OK)
            return st;
    }
    if (ps->pose->bone_count != declared)
        return plush_diag_fail(ps->diag, PLUSH_E_FORMAT, (int64_t)line_start(ps, count_line), "header", -1,
                               "the bone count says %lu, the file has %zu bone blocks", (unsigned long)declared,
                               ps->pose->bone_count);
    return PLUSH_OK;
}

plush_status plush_vpd_read(const uint8_t *data, size_t size, plush_vpd_pose **out, plush_diag *diag)
{
    if (!out || (!data && size))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no data or no place for the pose");
    *out = NULL;
    static const uint8_t nothing = 0;
    vpd_parser ps = {.text = data ? data : &nothing, .size = size, .diag = diag};
    ps.pose = calloc(1, sizeof *ps.pose);
    if (!ps.pose)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, 0, NULL, -1, "out of memory");
    plush_status st = plush_sjis_create(&ps.sjis);
    if (st != PLUSH_OK)
        plush_diag_fail(diag, st, -1, NULL, -1, "no Shift-JIS converter (iconv CP932)");
    else
        st = read_pose(&ps);
    plush_sjis_destroy(ps.sjis);
    if (st != PLUSH_OK) {
        plush_vpd_free(ps.pose);
        return st;
    }
    *out = ps.pose;
    return PLUSH_OK;
}

static plush_status parse_vpd(const uint8_t *data, size_t size, void *out, plush_diag *diag)
{
    return plush_vpd_read(data, size, out, diag);
}

plush_status plush_vpd_read_file(const char *path, plush_vpd_pose **out, plush_diag *diag)
{
    if (out)
        *out = NULL;
    if (!path || !out)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no path or no place for the pose");
    return plush_file_parse(path, parse_vpd, out, diag);
}

void plush_vpd_free(plush_vpd_pose *pose)
{
    if (!pose)
        return;
    plush_arena_free(&pose->arena);
    free(pose);
}
