/* Influence Map File 2, text version 1001: a line-oriented Shift-JIS file of parts and entries.
 *
 * The text is scanned as bytes and only part names are decoded. Every character the grammar needs is
 * ASCII, and a CP932 trail byte is never CR, LF, NUL, a blank, ',' or a digit; it can look like a
 * letter, but letters only matter in keywords and method names, which a name line never is. So byte
 * offsets in diagnostics stay offsets into the file. */
#include "plush/im2.h"
#include "plush/sys/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IM2_PARTSTART "PARTSTART"
#define IM2_PARTEND "PARTEND"

static const char *const method_names[] = {"CALC_ONESKIN0", "CALC_NOSKIN0"};

typedef struct im2_line {
    size_t start, end;   /* [start, end) without the line break */
    uint32_t number;     /* 1-based */
} im2_line;

typedef struct im2_parser {
    const uint8_t *text;
    size_t size;
    size_t pos;          /* start of the next line */
    uint32_t line_number;
    plush_diag *diag;
    plush_sjis *sjis;
    plush_im2_map *map;
    plush_im2_part *parts;        /* malloc'd while reading, copied into the arena at the end */
    size_t part_cap;
    plush_im2_entry *entries;     /* the open part's entries, likewise */
    size_t entry_count, entry_cap;
} im2_parser;

static bool is_blank(uint8_t c) { return c == ' ' || c == '\t'; }

/* The next line; false at the end of the text. A NUL byte ends the reading with an error: no real file
 * has one, and a name could not hold it. */
static bool next_line(im2_parser *ps, im2_line *line, plush_status *st)
{
    *st = PLUSH_OK;
    if (ps->pos >= ps->size)
        return false;
    line->start = ps->pos;
    line->number = ++ps->line_number;
    size_t i = ps->pos;
    while (i < ps->size && ps->text[i] != '\n' && ps->text[i] != '\r') {
        if (ps->text[i] == 0) {
            *st = plush_diag_fail(ps->diag, PLUSH_E_FORMAT, (int64_t)i, "line", line->number, "NUL byte in text");
            return false;
        }
        i++;
    }
    line->end = i;
    if (i < ps->size && ps->text[i] == '\r')
        i++;
    if (i < ps->size && ps->text[i] == '\n' && (i == line->end || ps->text[i - 1] == '\r'))
        i++;
    ps->pos = i;
    return true;
}

/* The line without surrounding blanks. */
static void trimmed(const im2_parser *ps, const im2_line *line, size_t *from, size_t *to)
{
    *from = line->start;
    *to = line->end;
    while (*from < *to && is_blank(ps->text[*from]))
        (*from)++;
    while (*to > *from && is_blank(ps->text[*to - 1]))
        (*to)--;
}

static bool line_is(const im2_parser *ps, const im2_line *line, const char *word)
{
    size_t from, to, n = strlen(word);
    trimmed(ps, line, &from, &to);
    return to - from == n && memcmp(ps->text + from, word, n) == 0;
}

static bool line_blank(const im2_parser *ps, const im2_line *line)
{
    size_t from, to;
    trimmed(ps, line, &from, &to);
    return from == to;
}

static plush_status fail(im2_parser *ps, plush_status st, size_t at, const im2_line *line, const char *fmt,
                         const char *arg)
{
    return plush_diag_fail(ps->diag, st, (int64_t)at, "line", line->number, fmt, arg);
}

/* "InfluenceMapFile2" ':' "ver" digits, blanks allowed around the parts. */
static plush_status read_header(im2_parser *ps)
{
    im2_line line;
    plush_status st;
    if (!next_line(ps, &line, &st))
        return st != PLUSH_OK ? st
                              : plush_diag_fail(ps->diag, PLUSH_E_TRUNCATED, 0, "line", 1,
                                                "empty file, not an Influence Map File 2");
    const char *t = (const char *)ps->text;
    size_t i = line.start, end = line.end;
    static const char magic[] = "InfluenceMapFile2";
    bool ok = end - i >= sizeof magic - 1 && memcmp(t + i, magic, sizeof magic - 1) == 0;
    i += ok ? sizeof magic - 1 : 0;
    while (ok && i < end && is_blank((uint8_t)t[i]))
        i++;
    ok = ok && i < end && t[i++] == ':';
    while (ok && i < end && is_blank((uint8_t)t[i]))
        i++;
    ok = ok && end - i >= 3 && memcmp(t + i, "ver", 3) == 0;
    i += ok ? 3 : 0;
    unsigned long version = 0;
    size_t digits = 0;
    while (ok && i < end && t[i] >= '0' && t[i] <= '9' && digits < 9) {
        version = version * 10 + (unsigned long)(t[i++] - '0');
        digits++;
    }
    while (ok && i < end && is_blank((uint8_t)t[i]))
        i++;
    if (!ok || digits == 0 || i != end)
        return fail(ps, PLUSH_E_FORMAT, line.start, &line,
                    "not an Influence Map File 2 (the first line is not \"%s\")", PLUSH_IM2_HEADER);
    if (version != 1001) {
        char why[160];
        snprintf(why, sizeof why, "version %lu is not supported (only the text version 1001%s)", version,
                 version >= 1002 && version <= 1004 ? "; 1002-1004 are RokDeBone2's binary variant" : "");
        return fail(ps, PLUSH_E_VERSION, line.start, &line, "%s", why);
    }
    return PLUSH_OK;
}

/* A decimal int32 with an optional sign at *i; blanks before it are skipped. */
static bool take_int(const im2_parser *ps, size_t *i, size_t end, int32_t *out)
{
    while (*i < end && is_blank(ps->text[*i]))
        (*i)++;
    bool neg = false;
    if (*i < end && (ps->text[*i] == '-' || ps->text[*i] == '+'))
        neg = ps->text[(*i)++] == '-';
    int64_t v = 0;
    size_t digits = 0;
    while (*i < end && ps->text[*i] >= '0' && ps->text[*i] <= '9') {
        v = v * 10 + (ps->text[(*i)++] - '0');
        if (v > (int64_t)INT32_MAX + 1)
            return false;
        digits++;
    }
    if (digits == 0 || (!neg && v > INT32_MAX))
        return false;
    *out = (int32_t)(neg ? -v : v);
    return true;
}

/* A printable copy of a method token for the message: only ASCII, cut at 40 characters. */
static void quote_token(const uint8_t *s, size_t n, char *out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 4 < cap && i < 40; i++)
        out[k++] = s[i] >= 0x20 && s[i] < 0x7F && s[i] != '"' ? (char)s[i] : '?';
    if (n > 40 && k + 4 < cap)
        out[k++] = '.', out[k++] = '.', out[k++] = '.';
    out[k] = 0;
}

static plush_status read_entry(im2_parser *ps, const im2_line *line, plush_im2_entry *e)
{
    static const char *const fields[] = {"the vertex number", "the child bone number", "the parent bone number"};
    int32_t *dst[] = {&e->vertex, &e->child, &e->parent};
    size_t i = line->start, end = line->end;
    for (int f = 0; f < 3; f++) {
        size_t at = i;
        while (at < end && is_blank(ps->text[at]))
            at++;
        if (!take_int(ps, &i, end, dst[f]))
            return fail(ps, PLUSH_E_FORMAT, at, line,
                        "malformed line: expected %s (a line is \"vertex, child bone, parent bone, method\")",
                        fields[f]);
        while (i < end && is_blank(ps->text[i]))
            i++;
        if (i >= end || ps->text[i] != ',')
            return fail(ps, PLUSH_E_FORMAT, i, line, "malformed line: expected ',' after %s", fields[f]);
        i++;
    }
    while (i < end && is_blank(ps->text[i]))
        i++;
    size_t from = i;
    while (i < end && !is_blank(ps->text[i]))
        i++;
    size_t n = i - from;
    int method = -1;
    for (int m = 0; m < 2; m++)
        if (n == strlen(method_names[m]) && memcmp(ps->text + from, method_names[m], n) == 0)
            method = m;
    if (method < 0) {
        char token[64];
        quote_token(ps->text + from, n, token, sizeof token);
        return fail(ps, PLUSH_E_FORMAT, from, line, "unknown method \"%s\" (CALC_ONESKIN0 or CALC_NOSKIN0)", token);
    }
    while (i < end && is_blank(ps->text[i]))
        i++;
    if (i != end)
        return fail(ps, PLUSH_E_FORMAT, i, line, "malformed line: text after the method%s", "");
    e->method = (uint8_t)method;
    e->line = line->number;
    e->offset = (int64_t)line->start;
    return PLUSH_OK;
}

/* Grows a malloc'd array to hold one more element. */
static bool grow(void **array, size_t count, size_t *cap, size_t size)
{
    if (count < *cap)
        return true;
    size_t ncap = *cap ? *cap * 2 : 16;
    if (ncap > SIZE_MAX / size)
        return false;
    void *p = realloc(*array, ncap * size);
    if (!p)
        return false;
    *array = p;
    *cap = ncap;
    return true;
}

static plush_status no_memory(im2_parser *ps, const im2_line *line)
{
    return plush_diag_fail(ps->diag, PLUSH_E_NOMEM, (int64_t)line->start, "line", line->number, "out of memory");
}

/* One part: the PARTSTART line has been read; reads the name, the entries and PARTEND. */
static plush_status read_part(im2_parser *ps, const im2_line *start)
{
    im2_line line;
    plush_status st;
    if (!next_line(ps, &line, &st))
        return st != PLUSH_OK ? st
                              : fail(ps, PLUSH_E_TRUNCATED, start->start, start,
                                     "the part has no name and no " IM2_PARTEND "%s", "");
    if (!grow((void **)&ps->parts, ps->map->part_count, &ps->part_cap, sizeof *ps->parts))
        return no_memory(ps, &line);
    plush_im2_part *part = &ps->parts[ps->map->part_count];
    memset(part, 0, sizeof *part);
    bool lossy = false;
    st = plush_sjis_decode(ps->sjis, &ps->map->arena, ps->text + line.start, line.end - line.start, &part->name,
                           &lossy);
    if (st != PLUSH_OK)
        return fail(ps, st, line.start, &line, "cannot decode the part name%s", "");
    if (lossy)
        plush_diag_warn(ps->diag, (int64_t)line.start, "line", line.number,
                        "part name is not valid Shift-JIS (read with U+FFFD, bytes kept)");
    part->line = line.number;
    part->offset = (int64_t)line.start;
    ps->entry_count = 0;
    for (;;) {
        if (!next_line(ps, &line, &st))
            return st != PLUSH_OK ? st
                                  : fail(ps, PLUSH_E_TRUNCATED, start->start, start,
                                         "missing " IM2_PARTEND " (the file ends inside the part)%s", "");
        if (line_blank(ps, &line))
            continue;
        if (line_is(ps, &line, IM2_PARTEND))
            break;
        if (line_is(ps, &line, IM2_PARTSTART)) {
            char why[96];
            snprintf(why, sizeof why, "missing " IM2_PARTEND " (the part started at line %lu is still open)",
                     (unsigned long)start->number);
            return fail(ps, PLUSH_E_FORMAT, line.start, &line, "%s", why);
        }
        if (!grow((void **)&ps->entries, ps->entry_count, &ps->entry_cap, sizeof *ps->entries))
            return no_memory(ps, &line);
        st = read_entry(ps, &line, &ps->entries[ps->entry_count]);
        if (st != PLUSH_OK)
            return st;
        ps->entry_count++;
    }
    if (ps->entry_count) {
        part->entries = plush_arena_array(&ps->map->arena, ps->entry_count, sizeof *part->entries);
        if (!part->entries)
            return no_memory(ps, &line);
        memcpy(part->entries, ps->entries, ps->entry_count * sizeof *part->entries);
        part->entry_count = ps->entry_count;
    }
    ps->map->part_count++;
    return PLUSH_OK;
}

static plush_status read_map(im2_parser *ps)
{
    plush_status st = read_header(ps);
    im2_line line;
    while (st == PLUSH_OK && next_line(ps, &line, &st)) {
        if (line_blank(ps, &line))
            continue;
        if (line_is(ps, &line, IM2_PARTSTART))
            st = read_part(ps, &line);
        else if (line_is(ps, &line, IM2_PARTEND))
            st = fail(ps, PLUSH_E_FORMAT, line.start, &line, IM2_PARTEND " without " IM2_PARTSTART "%s", "");
        else
            st = fail(ps, PLUSH_E_FORMAT, line.start, &line, "expected " IM2_PARTSTART " or a blank line%s", "");
    }
    if (st != PLUSH_OK || ps->map->part_count == 0)
        return st;
    plush_im2_map *map = ps->map;
    map->parts = plush_arena_array(&map->arena, map->part_count, sizeof *map->parts);
    if (!map->parts)
        return plush_diag_fail(ps->diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    memcpy(map->parts, ps->parts, map->part_count * sizeof *map->parts);
    return PLUSH_OK;
}

plush_status plush_im2_read(const uint8_t *data, size_t size, plush_im2_map **out, plush_diag *diag)
{
    if (!out || (!data && size))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no data or no place for the map");
    *out = NULL;
    static const uint8_t nothing = 0;
    im2_parser ps = {.text = data ? data : &nothing, .size = size, .diag = diag};
    ps.map = plush_im2_create();
    if (!ps.map)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, 0, NULL, -1, "out of memory");
    plush_status st = plush_sjis_create(&ps.sjis);
    if (st != PLUSH_OK)
        plush_diag_fail(diag, st, -1, NULL, -1, "no Shift-JIS converter (iconv CP932)");
    else
        st = read_map(&ps);
    plush_sjis_destroy(ps.sjis);
    free(ps.parts);
    free(ps.entries);
    if (st != PLUSH_OK) {
        plush_im2_free(ps.map);
        return st;
    }
    *out = ps.map;
    return PLUSH_OK;
}

static plush_status parse_im2(const uint8_t *data, size_t size, void *out, plush_diag *diag)
{
    return plush_im2_read(data, size, out, diag);
}

plush_status plush_im2_read_file(const char *path, plush_im2_map **out, plush_diag *diag)
{
    if (out)
        *out = NULL;
    if (!path || !out)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no path or no place for the map");
    return plush_file_parse(path, parse_im2, out, diag);
}

plush_im2_map *plush_im2_create(void)
{
    return calloc(1, sizeof(plush_im2_map));
}

void plush_im2_free(plush_im2_map *map)
{
    if (!map)
        return;
    plush_arena_free(&map->arena);
    free(map);
}

/* ---- writing --------------------------------------------------------------------------------- */

static bool put(plush_buf *out, const char *s)
{
    return plush_buf_append(out, s, strlen(s));
}

/* The name's Shift-JIS bytes: its kept raw bytes, or the text encoded. */
static plush_status put_name(plush_sjis *sjis, const plush_im2_part *part, size_t index, plush_buf *out,
                             plush_diag *diag)
{
    const uint8_t *bytes = part->name.raw;
    size_t n = part->name.raw_len;
    uint8_t *encoded = NULL;
    if (!bytes) {
        n = part->name.len;
        encoded = malloc(n + 4);
        if (!encoded)
            return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "part", (int64_t)index, "out of memory");
        plush_status st = plush_sjis_encode(sjis, part->name.s ? part->name.s : "", n, encoded, n + 4, false, &n);
        if (st != PLUSH_OK) {
            free(encoded);
            return plush_diag_fail(diag, PLUSH_E_ENCODING, -1, "part", (int64_t)index,
                                   "name \"%s\" cannot be written in Shift-JIS", part->name.s);
        }
        bytes = encoded;
    }
    plush_status st = PLUSH_OK;
    for (size_t i = 0; i < n && st == PLUSH_OK; i++)
        if (bytes[i] == '\r' || bytes[i] == '\n' || bytes[i] == 0)
            st = plush_diag_fail(diag, PLUSH_E_ENCODING, -1, "part", (int64_t)index,
                                 "name holds a line break or NUL, which a line-based file cannot keep");
    if (st == PLUSH_OK && (!plush_buf_append(out, bytes, n) || !put(out, "\r\n")))
        st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "part", (int64_t)index, "out of memory");
    free(encoded);
    return st;
}

static plush_status put_part(plush_sjis *sjis, const plush_im2_part *part, size_t index, plush_buf *out,
                             plush_diag *diag)
{
    if (!put(out, IM2_PARTSTART "\r\n"))
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "part", (int64_t)index, "out of memory");
    plush_status st = put_name(sjis, part, index, out, diag);
    for (size_t k = 0; k < part->entry_count && st == PLUSH_OK; k++) {
        const plush_im2_entry *e = &part->entries[k];
        if (e->method > PLUSH_IM2_NOSKIN)
            return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "part", (int64_t)index,
                                   "entry %zu: method %u is neither ONESKIN nor NOSKIN", k, (unsigned)e->method);
        char text[96];
        int len = snprintf(text, sizeof text, "%ld, %ld, %ld, %s\r\n", (long)e->vertex, (long)e->child,
                           (long)e->parent, method_names[e->method]);
        if (!plush_buf_append(out, text, (size_t)len))
            st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "part", (int64_t)index, "out of memory");
    }
    if (st == PLUSH_OK && !put(out, IM2_PARTEND "\r\n\r\n"))
        st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "part", (int64_t)index, "out of memory");
    return st;
}

plush_status plush_im2_write(const plush_im2_map *map, plush_buf *out, plush_diag *diag)
{
    if (!map || !out)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no map or no output buffer");
    size_t start = out->size;
    plush_sjis *sjis = NULL;
    plush_status st = plush_sjis_create(&sjis);
    if (st != PLUSH_OK)
        return plush_diag_fail(diag, st, -1, NULL, -1, "no Shift-JIS converter (iconv CP932)");
    if (!put(out, PLUSH_IM2_HEADER "\r\n\r\n"))
        st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    for (size_t p = 0; p < map->part_count && st == PLUSH_OK; p++)
        st = put_part(sjis, &map->parts[p], p, out, diag);
    plush_sjis_destroy(sjis);
    if (st != PLUSH_OK)
        out->size = start;
    return st;
}

plush_status plush_im2_write_file(const plush_im2_map *map, const char *path, plush_diag *diag)
{
    if (!path)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no path");
    if (diag && !diag->file)
        diag->file = path;
    plush_buf buf = {0};
    plush_status st = plush_im2_write(map, &buf, diag);
    if (st == PLUSH_OK)
        st = plush_file_write_atomic(path, buf.data, buf.size, diag);
    plush_buf_free(&buf);
    return st;
}
