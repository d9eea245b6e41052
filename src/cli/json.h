/* A streaming JSON writer for the CLI's --json output: compact, one document per call sequence.
 *
 *   json_writer w;
 *   json_init(&w, stdout);
 *   json_object_begin(&w, NULL);
 *   json_string(&w, "format", "pmx");
 *   json_object_begin(&w, "counts");
 *   json_uint(&w, "vertices", 22311);
 *   json_object_end(&w);
 *   json_object_end(&w);        // {"format":"pmx","counts":{"vertices":22311}}
 *
 * Every value takes its key: pass a key inside objects and NULL inside arrays or at the top.
 * Strings are escaped so the output is valid JSON whatever bytes come in: invalid UTF-8 becomes
 * U+FFFD, control characters become \u escapes. Non-finite floats are written as null.
 */
#ifndef PLUSH_CLI_JSON_H
#define PLUSH_CLI_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "plush/core.h"
#include "plush/sys/core.h"

enum { JSON_MAX_DEPTH = 32 };

typedef struct json_writer {
    FILE *out;
    int depth;
    bool need_comma[JSON_MAX_DEPTH];
} json_writer;

void json_init(json_writer *w, FILE *out);

void json_object_begin(json_writer *w, const char *key);
void json_object_end(json_writer *w);
void json_array_begin(json_writer *w, const char *key);
void json_array_end(json_writer *w);

void json_string(json_writer *w, const char *key, const char *s);
void json_string_n(json_writer *w, const char *key, const char *s, size_t len);
void json_int(json_writer *w, const char *key, int64_t v);
void json_uint(json_writer *w, const char *key, uint64_t v);
/* %.9g: enough digits for a float to read back as the same float. */
void json_float(json_writer *w, const char *key, double v);
/* A number spelled by the caller, e.g. "2.1", where %.9g would print 2.0999999. */
void json_number_text(json_writer *w, const char *key, const char *text);
void json_bool(json_writer *w, const char *key, bool v);
void json_null(json_writer *w, const char *key);

/* Writes the len bytes of s with every control character escaped: C0, DEL, C1 (U+0080..U+009F), the
 * bidirectional controls and marks and the line and paragraph separators (U+061C, U+200E, U+200F,
 * U+2028..U+202E, U+2066..U+2069: always as \u202e) and bytes that are not UTF-8. json: JSON's escapes inside a JSON string (\n, \u001b, \ufffd for a broken
 * byte; '"' and '\\' escaped); otherwise a terminal line's (\n, \x1b, \u0085, \xff for a broken byte;
 * quotes and backslashes as they are). */
void text_write_escaped(FILE *out, const char *s, size_t len, bool json);
/* The same, appended to b (b->failed when memory ran out). */
void text_escape(plush_buf *b, const char *s, size_t len, bool json);
/* Writes s as a quoted, escaped JSON string (also used by the text output for names). */
void json_write_escaped(FILE *out, const char *s, size_t len);

#endif
