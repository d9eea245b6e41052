/* OBJ and binary PLY writers of one triangle mesh (positions, optional normals). Both check the whole
 * mesh before appending a byte, so a failure leaves the buffer as it was and a file is never started. */
#include "plush/obj.h"
#include "plush/sys/core.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static plush_status check_mesh(const plush_obj_mesh *mesh, plush_diag *diag)
{
    if (!mesh || (mesh->vertex_count && !mesh->positions) || (mesh->index_count && !mesh->indices))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "mesh", -1, "missing positions or indices");
    if (mesh->index_count % 3 != 0)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "mesh", -1,
                               "%zu face indices is not a whole number of triangles", mesh->index_count);
    /* PLY's face lists hold int32 indices; OBJ would manage, but one limit for both keeps them alike. */
    if (mesh->vertex_count > (size_t)INT32_MAX)
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "mesh", -1, "%zu vertices is too many",
                               mesh->vertex_count);
    for (size_t i = 0; i < mesh->index_count; i++)
        if (mesh->indices[i] >= mesh->vertex_count)
            return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "face", (int64_t)(i / 3),
                                   "vertex %u out of range (%zu vertices)", mesh->indices[i],
                                   mesh->vertex_count);
    for (size_t v = 0; v < mesh->vertex_count; v++)
        for (int k = 0; k < 3; k++) {
            if (!isfinite(mesh->positions[v][k]))
                return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "vertex", (int64_t)v, "position is not finite");
            if (mesh->normals && !isfinite(mesh->normals[v][k]))
                return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "vertex", (int64_t)v, "normal is not finite");
        }
    return PLUSH_OK;
}

static plush_status fail_nomem(plush_buf *out, size_t keep, plush_diag *diag)
{
    out->size = keep;
    return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "mesh", -1, "out of memory");
}

/* The comment up to its first line break. */
static size_t comment_length(const char *comment)
{
    return comment ? strcspn(comment, "\r\n") : 0;
}

/* ---- OBJ ---------------------------------------------------------------------------------------- */

/* "%.9g" with '.' as the decimal point even when the host program set a locale that prints ','. */
static int format_float(char *dst, size_t cap, float f)
{
    int n = snprintf(dst, cap, "%.9g", (double)f);
    for (int i = 0; i < n && (size_t)i < cap; i++)
        if (dst[i] == ',')
            dst[i] = '.';
    return n;
}

static bool append_triple(plush_buf *out, const char *tag, const float v[3])
{
    char line[96];
    size_t n = strlen(tag);
    memcpy(line, tag, n);
    for (int k = 0; k < 3; k++) {
        line[n++] = ' ';
        n += (size_t)format_float(line + n, sizeof line - n, v[k]);
    }
    line[n++] = '\n';
    return plush_buf_append(out, line, n);
}

plush_status plush_obj_write(const plush_obj_mesh *mesh, plush_buf *out, plush_diag *diag)
{
    plush_status st = check_mesh(mesh, diag);
    if (st != PLUSH_OK)
        return st;
    const size_t keep = out->size;
    bool ok = true;
    size_t clen = comment_length(mesh->comment);
    if (clen)
        ok = plush_buf_append(out, "# ", 2) && plush_buf_append(out, mesh->comment, clen) &&
             plush_buf_append(out, "\n", 1);
    for (size_t v = 0; ok && v < mesh->vertex_count; v++)
        ok = append_triple(out, "v", mesh->positions[v]);
    for (size_t v = 0; ok && mesh->normals && v < mesh->vertex_count; v++)
        ok = append_triple(out, "vn", mesh->normals[v]);
    for (size_t f = 0; ok && f < mesh->index_count / 3; f++) {
        const uint32_t *t = mesh->indices + 3 * f;
        unsigned long a = t[0] + 1ul, b = t[1] + 1ul, c = t[2] + 1ul;
        char line[128];
        int n = mesh->normals ? snprintf(line, sizeof line, "f %lu//%lu %lu//%lu %lu//%lu\n", a, a, b, b, c, c)
                              : snprintf(line, sizeof line, "f %lu %lu %lu\n", a, b, c);
        ok = plush_buf_append(out, line, (size_t)n);
    }
    if (!ok || out->failed)
        return fail_nomem(out, keep, diag);
    return PLUSH_OK;
}

/* ---- PLY ---------------------------------------------------------------------------------------- */

static void put_u32le(uint8_t *at, uint32_t x)
{
    at[0] = (uint8_t)x;
    at[1] = (uint8_t)(x >> 8);
    at[2] = (uint8_t)(x >> 16);
    at[3] = (uint8_t)(x >> 24);
}

static void put_f32le(uint8_t *at, float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    put_u32le(at, x);
}

plush_status plush_ply_write(const plush_obj_mesh *mesh, plush_buf *out, plush_diag *diag)
{
    plush_status st = check_mesh(mesh, diag);
    if (st != PLUSH_OK)
        return st;
    const size_t keep = out->size;
    const size_t faces = mesh->index_count / 3;
    char header[512];
    size_t clen = comment_length(mesh->comment);
    if (clen > 256)
        clen = 256;
    int n = snprintf(header, sizeof header,
                     "ply\nformat binary_little_endian 1.0\n%s%.*s%selement vertex %zu\n"
                     "property float x\nproperty float y\nproperty float z\n%s"
                     "element face %zu\nproperty list uchar int vertex_indices\nend_header\n",
                     clen ? "comment " : "", (int)clen, clen ? mesh->comment : "", clen ? "\n" : "",
                     mesh->vertex_count,
                     mesh->normals ? "property float nx\nproperty float ny\nproperty float nz\n" : "", faces);
    const size_t stride = mesh->normals ? 24 : 12;
    /* Sizes cannot overflow: vertex_count <= INT32_MAX and index_count describes memory that exists. */
    const size_t body = mesh->vertex_count * stride + faces * 13;
    if (n < 0 || (size_t)n >= sizeof header || !plush_buf_reserve(out, (size_t)n + body))
        return fail_nomem(out, keep, diag);
    plush_buf_append(out, header, (size_t)n);
    uint8_t *p = out->data + out->size;
    for (size_t v = 0; v < mesh->vertex_count; v++) {
        for (int k = 0; k < 3; k++)
            put_f32le(p + 4 * k, mesh->positions[v][k]);
        if (mesh->normals)
            for (int k = 0; k < 3; k++)
                put_f32le(p + 12 + 4 * k, mesh->normals[v][k]);
        p += stride;
    }
    for (size_t f = 0; f < faces; f++) {
        p[0] = 3;
        for (int k = 0; k < 3; k++)
            put_u32le(p + 1 + 4 * k, mesh->indices[3 * f + (size_t)k]);
        p += 13;
    }
    out->size += body;
    return PLUSH_OK;
}

/* ---- files -------------------------------------------------------------------------------------- */

typedef plush_status (*mesh_writer)(const plush_obj_mesh *mesh, plush_buf *out, plush_diag *diag);

static plush_status write_file(mesh_writer write, const plush_obj_mesh *mesh, const char *path, plush_diag *diag)
{
    if (diag && !diag->file)
        diag->file = path;
    plush_buf buf = {0};
    plush_status st = write(mesh, &buf, diag);
    if (st == PLUSH_OK)
        st = plush_file_write_atomic(path, buf.data, buf.size, diag);
    plush_buf_free(&buf);
    return st;
}

plush_status plush_obj_write_file(const plush_obj_mesh *mesh, const char *path, plush_diag *diag)
{
    return write_file(plush_obj_write, mesh, path, diag);
}

plush_status plush_ply_write_file(const plush_obj_mesh *mesh, const char *path, plush_diag *diag)
{
    return write_file(plush_ply_write, mesh, path, diag);
}
