/* Attach's proxy cage: read from an OBJ or a PMX file, vertices joined by position. */
#include "plush/obj.h"
#include "core/common.h"
#include "core/geom.h"
#include "plush/attach.h"
#include "plush/proxy.h"
#include "plush/sys/core.h"
#include "plush/sys/obj.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- reading a proxy ----------------------------------------------------------------------------- */

/* Joins vertices at equal positions (the first in file order stands for them), drops unused ones and faces
 * that name a vertex twice, numbers the rest in file order. */
static plush_status join_positions(const float (*pos)[3], size_t nv, const uint32_t *idx, size_t nt,
                                   plush_arena *arena, plush_cage_mesh *out, plush_diag *diag)
{
    uint32_t *first = malloc((nv ? nv : 1) * sizeof *first);
    uint32_t *rep = malloc((nv ? nv : 1) * sizeof *rep), *number = malloc((nv ? nv : 1) * sizeof *number);
    uint32_t(*tris)[3] = plush_arena_array(arena, nt ? nt : 1, sizeof *tris);
    plush_status st = first && rep && number && tris ? PLUSH_OK : plush__no_memory(diag);
    for (size_t v = 0; st == PLUSH_OK && v < nv; v++)
        if (!isfinite(pos[v][0]) || !isfinite(pos[v][1]) || !isfinite(pos[v][2]))
            st = plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "vertex", (int64_t)v, "position is not finite");
    if (st == PLUSH_OK && plush__weld_positions(pos, nv, rep, first) == SIZE_MAX)
        st = plush__no_memory(diag);
    if (st == PLUSH_OK) {
        for (size_t v = 0; v < nv; v++)
            rep[v] = first[rep[v]]; /* node -> the vertex that stands for it */
        for (size_t v = 0; v < nv; v++)
            number[v] = UINT32_MAX;
        size_t kept = 0, dropped = 0;
        for (size_t t = 0; t < nt; t++) {
            uint32_t a = rep[idx[3 * t]], b = rep[idx[3 * t + 1]], c = rep[idx[3 * t + 2]];
            if (a == b || b == c || a == c) {
                dropped++;
                continue;
            }
            number[a] = number[b] = number[c] = 0;
            tris[kept][0] = a, tris[kept][1] = b, tris[kept][2] = c;
            kept++;
        }
        if (dropped)
            plush_diag_warn(diag, -1, NULL, -1, "%zu faces name one vertex twice: dropped", dropped);
        size_t count = 0;
        for (size_t v = 0; v < nv; v++)
            if (number[v] == 0)
                number[v] = (uint32_t)count++;
        out->positions = plush_arena_array(arena, count ? count : 1, sizeof *out->positions);
        out->source = plush_arena_array(arena, count ? count : 1, sizeof *out->source);
        if (!out->positions || !out->source)
            st = plush__no_memory(diag);
        for (size_t v = 0; st == PLUSH_OK && v < nv; v++)
            if (number[v] != UINT32_MAX) {
                memcpy(out->positions[number[v]], pos[v], sizeof *out->positions);
                out->source[number[v]] = (int32_t)v;
            }
        for (size_t t = 0; st == PLUSH_OK && t < kept; t++)
            for (int k = 0; k < 3; k++)
                tris[t][k] = number[tris[t][k]];
        out->vertex_count = count;
        out->triangles = tris;
        out->triangle_count = kept;
    }
    free(first);
    free(rep);
    free(number);
    if (st == PLUSH_OK && out->triangle_count == 0)
        st = plush_diag_fail(diag, PLUSH_E_GEOMETRY, -1, "proxy", -1, "the proxy has no triangles");
    return st;
}

static plush_status proxy_from_pmx(const uint8_t *data, size_t size, plush_arena *arena, plush_cage_mesh *out,
                                   plush_diag *diag)
{
    plush_pmx_model *m = NULL;
    plush_status st = plush_pmx_read(data, size, NULL, &m, diag);
    if (st != PLUSH_OK)
        return st;
    float(*pos)[3] = malloc((m->vertex_count ? m->vertex_count : 1) * sizeof *pos);
    if (!pos)
        st = plush__no_memory(diag);
    for (size_t v = 0; st == PLUSH_OK && v < m->vertex_count; v++)
        memcpy(pos[v], m->vertices[v].position, sizeof pos[v]);
    if (st == PLUSH_OK && m->vertex_count > INT32_MAX)
        st = plush_diag_fail(diag, PLUSH_E_RANGE, -1, NULL, -1, "proxy too large");
    if (st == PLUSH_OK)
        st = join_positions((const float(*)[3])pos, m->vertex_count, m->indices, m->index_count / 3, arena, out,
                            diag);
    free(pos);
    plush_pmx_free(m);
    return st;
}

plush_status plush_attach_read_proxy(const uint8_t *data, size_t size, plush_arena *arena, plush_cage_mesh *out,
                                     plush_diag *diag)
{
    memset(out, 0, sizeof *out);
    if (size >= 4 && memcmp(data, "PMX ", 4) == 0)
        return proxy_from_pmx(data, size, arena, out, diag);
    plush_obj_model *obj = NULL;
    plush_status st = plush_obj_read(data, size, &obj, diag);
    if (st == PLUSH_OK && obj->vertex_count > INT32_MAX)
        st = plush_diag_fail(diag, PLUSH_E_RANGE, -1, NULL, -1, "proxy too large");
    /* what the binding and the world refuse later, refused here with the line that holds it */
    for (size_t v = 0; st == PLUSH_OK && v < obj->vertex_count; v++)
        for (int k = 0; k < 3; k++)
            if (!(fabsf(obj->positions[v][k]) <= PLUSH_PROXY_COORDINATE_LIMIT)) {
                size_t line = 0, at = 0;
                bool found = plush_obj_locate_position(data, size, v, &line, &at);
                st = plush_diag_fail(diag, PLUSH_E_RANGE, found ? (int64_t)at : -1, found ? "line" : "vertex",
                                     found ? (int64_t)line : (int64_t)v, "v: coordinate %g beyond %g",
                                     (double)obj->positions[v][k], (double)PLUSH_PROXY_COORDINATE_LIMIT);
                break;
            }
    if (st == PLUSH_OK)
        st = join_positions((const float(*)[3])obj->positions, obj->vertex_count, &obj->triangles[0][0],
                            obj->triangle_count, arena, out, diag);
    plush_obj_model_free(obj);
    return st;
}

typedef struct proxy_ctx {
    plush_arena *arena;
    plush_cage_mesh *out;
} proxy_ctx;

static plush_status parse_proxy(const uint8_t *data, size_t size, void *ctx, plush_diag *diag)
{
    proxy_ctx *c = ctx;
    return plush_attach_read_proxy(data, size, c->arena, c->out, diag);
}

plush_status plush_attach_read_proxy_file(const char *path, plush_arena *arena, plush_cage_mesh *out,
                                          plush_diag *diag)
{
    memset(out, 0, sizeof *out);
    proxy_ctx c = {arena, out};
    return plush_file_parse(path, parse_proxy, &c, diag);
}
