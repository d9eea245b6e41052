/* The PMX reader's cursor steps every section reader takes (pmx_read_geometry.c, pmx_read_physics.c):
 * a failure with its byte, room for n bytes, a text field, a section's start, a count checked before it is
 * allocated, arena memory. pmx_read.c walks the sections. */
#include "pmx_reader.h"
#include "plush/sys/core.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool plush__pmx_rd_fail(reader *r, plush_status st, size_t offset, const char *fmt, ...)
{
    if (r->find_section)
        return false;
    char what[PLUSH_DIAG_MESSAGE];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    (void)k;
    plush_diag_fail(r->diag, st, (int64_t)offset, r->section, r->index, "%s", what);
    return false;
}

/* Checks room for n bytes of `what`; a short file is PLUSH_E_TRUNCATED at the field's offset. */
bool plush__pmx_rd_need(reader *r, size_t n, const char *what)
{
    if (cur_need(&r->c, n))
        return true;
    return plush__pmx_rd_fail(r, PLUSH_E_TRUNCATED, r->c.pos, "data ends inside %s: needs %zu bytes, %zu left", what, n,
                cur_left(&r->c));
}

bool plush__pmx_rd_text(reader *r, plush_str *out, const char *what)
{
    if (!plush__pmx_rd_need(r, 4, what))
        return false;
    size_t at = r->c.pos;
    int32_t len = cur_i32(&r->c);
    if (len < 0)
        return plush__pmx_rd_fail(r, PLUSH_E_FORMAT, at, "%s length %d is negative", what, (int)len);
    if ((size_t)len > cur_left(&r->c))
        return plush__pmx_rd_fail(r, PLUSH_E_TRUNCATED, at, "%s of %d bytes runs past the end (%zu left)", what, (int)len,
                    cur_left(&r->c));
    if (r->find_section) { /* locating: no need to decode */
        cur_skip(&r->c, (size_t)len);
        return true;
    }
    bool lossy = false;
    if (plush_text_decode(&r->m->arena, (plush_encoding)r->m->encoding, cur_ptr(&r->c), (size_t)len, out, &lossy) !=
        PLUSH_OK)
        return plush__pmx_rd_fail(r, PLUSH_E_NOMEM, at, "out of memory decoding %s", what);
    if (lossy)
        plush_diag_warn(r->diag, (int64_t)at, r->section, r->index, "%s is not valid %s; broken characters read as U+FFFD",
                        what, r->m->encoding == PLUSH_ENC_UTF8 ? "UTF-8" : "UTF-16LE");
    cur_skip(&r->c, (size_t)len);
    return true;
}

/* Starts a section (r->section set): no item yet; stops a locate walk aimed at the section itself. */
bool plush__pmx_rd_section_start(reader *r)
{
    r->index = -1;
    if (r->find_section && r->find_index < 0 && !strcmp(r->find_section, r->section)) {
        r->found_offset = (int64_t)r->c.pos;
        return false;
    }
    return true;
}

/* Reads an i32 count and checks that count records of at least min_size bytes can follow. */
bool plush__pmx_rd_count(reader *r, const char *what, size_t min_size, size_t *out)
{
    if (!plush__pmx_rd_need(r, 4, what))
        return false;
    size_t at = r->c.pos;
    int32_t n = cur_i32(&r->c);
    if (n < 0)
        return plush__pmx_rd_fail(r, PLUSH_E_FORMAT, at, "%s count %d is negative", what, (int)n);
    if (min_size && (size_t)n > cur_left(&r->c) / min_size)
        return plush__pmx_rd_fail(r, PLUSH_E_TRUNCATED, at, "%s count %d needs more bytes than the %zu left", what, (int)n,
                    cur_left(&r->c));
    *out = (size_t)n;
    return true;
}

void *plush__pmx_rd_alloc(reader *r, size_t n, size_t size)
{
    void *p = plush_arena_array(&r->m->arena, n, size);
    if (!p)
        plush__pmx_rd_fail(r, PLUSH_E_NOMEM, r->c.pos, "out of memory for %s", r->section);
    return p;
}
