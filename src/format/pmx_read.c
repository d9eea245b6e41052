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
