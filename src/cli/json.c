/* Compact JSON output; see json.h. */
#include "cli/json.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

void json_init(json_writer *w, FILE *out)
{
    memset(w, 0, sizeof *w);
    w->out = out;
}

/* Length of the well-formed UTF-8 sequence at s (1..4), or 0 when it is not one: overlongs,
 * surrogates and code points past U+10FFFF are rejected so the output is strict UTF-8. */
static size_t utf8_sequence(const unsigned char *s, size_t left)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t n;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        cp = c & 0x1Fu;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        cp = c & 0x0Fu;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        cp = c & 0x07u;
    } else {
        return 0;
    }
    if (n > left)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3Fu);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    if (cp >= 0xD800 && cp <= 0xDFFF)
        return 0;
    return n;
}

/* The code point of the well-formed sequence of n bytes at s. */
static uint32_t utf8_code_point(const unsigned char *s, size_t n)
{
    static const unsigned char lead_mask[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
    uint32_t cp = s[0] & lead_mask[n];
    for (size_t i = 1; i < n; i++)
        cp = (cp << 6) | (s[i] & 0x3Fu);
    return cp;
}

/* Characters that reorder or break the text around them on a terminal without being visible: the
 * bidirectional controls (U+202E shows "gpj.exe" as "exe.jpg") and marks, and the line and paragraph
 * separators. */
static bool invisible_control(uint32_t cp)
{
    return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x2028 && cp <= 0x202E) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

/* Appends a short piece to b. */
static void put(plush_buf *b, const char *text)
{
    plush_buf_append(b, text, strlen(text));
}

void text_escape(plush_buf *b, const char *s, size_t len, bool json)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    char code[16];
    while (i < len) {
        unsigned char c = p[i];
        size_t n = c < 0x80 ? 1 : utf8_sequence(p + i, len - i);
        /* C1 controls (U+0080..U+009F, C2 80..C2 9F in UTF-8) act on terminals as ESC sequences do. */
        uint32_t cp = n ? utf8_code_point(p + i, n) : 0x100;
        if (json && (c == '"' || c == '\\')) {
            char pair[3] = {'\\', (char)c, 0};
            put(b, pair);
        } else if (invisible_control(cp)) {
            snprintf(code, sizeof code, "\\u%04x", (unsigned)cp);
            put(b, code);
        } else if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) {
            switch (cp) {
            case '\n': put(b, "\\n"); break;
            case '\r': put(b, "\\r"); break;
            case '\t': put(b, "\\t"); break;
            case '\b': put(b, json ? "\\b" : "\\x08"); break;
            case '\f': put(b, json ? "\\f" : "\\x0c"); break;
            default:
                snprintf(code, sizeof code, json ? "\\u%04x" : cp < 0x80 ? "\\x%02x" : "\\u%04x", (unsigned)cp);
                put(b, code);
                break;
            }
        } else if (n == 0) {
            /* A byte that is not UTF-8: JSON cannot carry it; a terminal line shows its value. */
            if (json) {
                put(b, "\\ufffd");
            } else {
                snprintf(code, sizeof code, "\\x%02x", c);
                put(b, code);
            }
            n = 1;
        } else {
            plush_buf_append(b, p + i, n);
        }
        i += n;
    }
}

void text_write_escaped(FILE *out, const char *s, size_t len, bool json)
{
    plush_buf b = {0};
    text_escape(&b, s, len, json);
    if (b.failed)
        fputs("(out of memory)", out);
    else if (b.size)
        fwrite(b.data, 1, b.size, out);
    plush_buf_free(&b);
}

void json_write_escaped(FILE *out, const char *s, size_t len)
{
    fputc('"', out);
    text_write_escaped(out, s, len, true);
    fputc('"', out);
}

/* Writes the separator and the key that go before any value. */
static void value_prefix(json_writer *w, const char *key)
{
    int d = w->depth < JSON_MAX_DEPTH ? w->depth : JSON_MAX_DEPTH - 1;
    if (w->need_comma[d])
        fputc(',', w->out);
    w->need_comma[d] = true;
    if (key) {
        json_write_escaped(w->out, key, strlen(key));
        fputc(':', w->out);
    }
}

static void open_container(json_writer *w, const char *key, char bracket)
{
    value_prefix(w, key);
    fputc(bracket, w->out);
    /* Nesting past the limit would be a programming error in the CLI; the output stays valid,
     * only the comma bookkeeping of the deepest levels is shared. */
    if (w->depth < JSON_MAX_DEPTH - 1)
        w->depth++;
    w->need_comma[w->depth] = false;
}

static void close_container(json_writer *w, char bracket)
{
    fputc(bracket, w->out);
    if (w->depth > 0)
        w->depth--;
}

void json_object_begin(json_writer *w, const char *key) { open_container(w, key, '{'); }
void json_object_end(json_writer *w) { close_container(w, '}'); }
void json_array_begin(json_writer *w, const char *key) { open_container(w, key, '['); }
void json_array_end(json_writer *w) { close_container(w, ']'); }

void json_string_n(json_writer *w, const char *key, const char *s, size_t len)
{
    value_prefix(w, key);
    json_write_escaped(w->out, s ? s : "", s ? len : 0);
}

void json_string(json_writer *w, const char *key, const char *s)
{
    json_string_n(w, key, s, s ? strlen(s) : 0);
}

void json_int(json_writer *w, const char *key, int64_t v)
{
    value_prefix(w, key);
    fprintf(w->out, "%" PRId64, v);
}

void json_uint(json_writer *w, const char *key, uint64_t v)
{
    value_prefix(w, key);
    fprintf(w->out, "%" PRIu64, v);
}

void json_float(json_writer *w, const char *key, double v)
{
    value_prefix(w, key);
    if (!isfinite(v))
        fputs("null", w->out);
    else
        fprintf(w->out, "%.9g", v);
}

void json_number_text(json_writer *w, const char *key, const char *text)
{
    value_prefix(w, key);
    fputs(text, w->out);
}

void json_bool(json_writer *w, const char *key, bool v)
{
    value_prefix(w, key);
    fputs(v ? "true" : "false", w->out);
}

void json_null(json_writer *w, const char *key)
{
    value_prefix(w, key);
    fputs("null", w->out);
}
