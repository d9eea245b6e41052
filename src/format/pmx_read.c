/* PMX 2.0 / 2.1 reader: one bounded cursor, arena allocation, counts checked before allocating.
 *
 * Only what decides the layout is checked here (sizes, counts, weight types, morph kinds, flags);
 * every index and value rule lives in pmx_validate.c. When validation fails, the file is walked a
 * second time to find the byte offset of the failing item, so the rules exist once. */
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
static bool walk(reader *r)
{
    if (!plush__pmx_rd_header(r) || !plush__pmx_rd_vertices(r) || !plush__pmx_rd_faces(r) || !plush__pmx_rd_textures(r) || !plush__pmx_rd_materials(r) ||
        !plush__pmx_rd_bones(r) || !plush__pmx_rd_morphs(r) || !plush__pmx_rd_frames(r) || !plush__pmx_rd_rigid_bodies(r) || !plush__pmx_rd_joints(r))
        return false;
    if (pmx_is_21(r->m->version) && !plush__pmx_rd_soft_bodies(r))
        return false;
    return true;
}

/* Byte offset where item `index` of `section` starts, by walking the file again. */
static int64_t locate(const uint8_t *data, size_t size, const char *section, int64_t index)
{
    plush_pmx_model *scratch = plush_pmx_create();
    if (!scratch)
        return -1;
    plush_diag quiet = {0};
    /* Only the cursor matters here: no need to hold the geometry a second time. */
    reader r = {.m = scratch, .diag = &quiet, .find_section = section, .find_index = index, .found_offset = -1,
                .drop_geometry = true};
    cur_init(&r.c, data, size);
    walk(&r);
    plush_pmx_free(scratch);
    return r.found_offset;
}

plush_status plush_pmx_read(const uint8_t *data, size_t size, const plush_pmx_read_options *options,
                            plush_pmx_model **out, plush_diag *diag)
{
    plush_diag local = {0};
    if (!diag)
        diag = &local;
    *out = NULL;
    plush_pmx_model *m = plush_pmx_create();
    if (!m)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    /* One arena block sized from the file keeps the model in a few large allocations. */
    m->arena.block_size = size / 2 + 4096 < 64 * 1024 ? 64 * 1024 : size / 2 + 4096;
    const bool summary = options && options->summary_only;
    pmx_unkept unkept = {.data = data, .size = size, .bone_min = -1, .bone_max = -1, .bad_face = -1};
    reader r = {.m = m, .diag = diag, .drop_geometry = summary, .unkept = summary ? &unkept : NULL};
    m->summary_only = summary;
    cur_init(&r.c, data, size);
    if (!walk(&r)) {
        if (diag->status == PLUSH_OK) /* a failure always leaves a diagnostic */
            plush_diag_fail(diag, PLUSH_E_FORMAT, (int64_t)r.c.pos, r.section, r.index, "unreadable data");
        plush_pmx_free(m);
        return diag->status;
    }
    if (r.c.pos < size) {
        m->trailing_size = size - r.c.pos;
        uint8_t *t = plush_arena_alloc(&m->arena, m->trailing_size);
        if (!t) {
            plush_pmx_free(m);
            return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        }
        memcpy(t, data + r.c.pos, m->trailing_size);
        m->trailing = t;
        plush_diag_warn(diag, (int64_t)r.c.pos, NULL, -1, "%zu bytes after the last section are kept as they are",
                        m->trailing_size);
    }
    if (!(options && options->skip_validation)) {
        plush_status st = plush__pmx_validate_read(m, pmx_is_21(m->version), summary ? &unkept : NULL, diag);
        if (st != PLUSH_OK) {
            if (diag->section)
                diag->offset = locate(data, size, diag->section, diag->index);
            plush_pmx_free(m);
            return st;
        }
    }
    *out = m;
    return PLUSH_OK;
}

typedef struct read_file_job {
    const plush_pmx_read_options *options;
    plush_pmx_model **out;
} read_file_job;

static plush_status parse_job(const uint8_t *data, size_t size, void *ctx, plush_diag *diag)
{
    read_file_job *job = ctx;
    return plush_pmx_read(data, size, job->options, job->out, diag);
}

plush_status plush_pmx_read_file(const char *path, const plush_pmx_read_options *options, plush_pmx_model **out,
                                 plush_diag *diag)
{
    *out = NULL;
    read_file_job job = {.options = options, .out = out};
    return plush_file_parse(path, parse_job, &job, diag);
}
