/* The cage plush run --cage makes: plush proxy's steps with its defaults, chosen for the surface. */
#include "plush/attach.h"
#include "plush/scene_proxy.h"
#include "plush/sys/core.h"
#include "plush/sys/scene.h"
#include "core/geom.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A piece of the surface smaller than this share of the largest piece (the diagonal of its box) is a
 * detail a cage cannot carry -- a strand's end, a bead, a tuft -- that would get a triangle or two of
 * cage, pinned through. */
#define DETAIL_SHARE 0.05

/* Leaves the surface's details out of skin's faces (in place) and lists their positions in *left_out. */
static plush_status leave_out_details(plush_cage_mesh *skin, plush_arena *arena, float (**left_out)[3],
                                      size_t *left_out_count, plush_diag *diag)
{
    size_t nv = skin->vertex_count, nt = skin->triangle_count;
    uint32_t *parent = malloc((nv ? nv : 1) * sizeof *parent);
    float(*lo)[3] = malloc((nv ? nv : 1) * sizeof *lo), (*hi)[3] = malloc((nv ? nv : 1) * sizeof *hi);
    uint8_t *used = calloc(nv ? nv : 1, 1);
    plush_status st = PLUSH_OK;
    if (!parent || !lo || !hi || !used) {
        st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        goto done;
    }
    plush__uf_init(parent, nv);
    for (size_t t = 0; t < nt; t++)
        for (int k = 0; k < 3; k++) {
            used[skin->triangles[t][k]] = 1;
            plush__uf_union(parent, skin->triangles[t][k], skin->triangles[t][(k + 1) % 3]);
        }
    for (size_t v = 0; v < nv; v++)
        for (int k = 0; k < 3; k++)
            lo[v][k] = INFINITY, hi[v][k] = -INFINITY;
    for (size_t v = 0; v < nv; v++) {
        if (!used[v])
            continue;
        uint32_t r = plush__uf_find(parent, (uint32_t)v);
        for (int k = 0; k < 3; k++) {
            lo[r][k] = fminf(lo[r][k], skin->positions[v][k]);
            hi[r][k] = fmaxf(hi[r][k], skin->positions[v][k]);
        }
    }
    double largest = 0;
    for (size_t v = 0; v < nv; v++)
        if (used[v] && plush__uf_find(parent, (uint32_t)v) == v) {
            double d = 0;
            for (int k = 0; k < 3; k++)
                d += ((double)hi[v][k] - lo[v][k]) * ((double)hi[v][k] - lo[v][k]);
            lo[v][0] = (float)sqrt(d); /* the root keeps its piece's diagonal */
            largest = fmax(largest, lo[v][0]);
        }
    size_t kept = 0, out = 0;
    for (size_t t = 0; t < nt; t++)
        if (lo[plush__uf_find(parent, skin->triangles[t][0])][0] >= DETAIL_SHARE * largest)
            memmove(skin->triangles[kept++], skin->triangles[t], sizeof skin->triangles[t]);
    for (size_t v = 0; v < nv; v++)
        out += used[v] && lo[plush__uf_find(parent, (uint32_t)v)][0] < DETAIL_SHARE * largest;
    *left_out = out ? plush_arena_array(arena, out, sizeof **left_out) : NULL;
    if (out && !*left_out) {
        st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        goto done;
    }
    *left_out_count = 0;
    for (size_t v = 0; v < nv; v++)
        if (used[v] && lo[plush__uf_find(parent, (uint32_t)v)][0] < DETAIL_SHARE * largest)
            memcpy((*left_out)[(*left_out_count)++], skin->positions[v], sizeof **left_out);
    skin->triangle_count = kept;
done:
    free(parent), free(lo), free(hi), free(used);
    return st;
}

#include <stdio.h>
#include <string.h>

/* The materials asked for, quoted, into buf: "skirt", "cape" (cut to fit). */
static void material_list(const char *const *materials, size_t count, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < count && n + 1 < size; i++) {
        int w = snprintf(buf + n, size - n, "%s\"%s\"", i ? ", " : "", materials[i] ? materials[i] : "");
        if (w < 0)
            break;
        n += (size_t)w;
    }
}

plush_status plush_attach_make_cage(const plush_pmx_model *model, const char *const *materials, size_t material_count,
                                    size_t triangles, plush_arena *arena, plush_cage_mesh *out,
                                    plush_cage_result *result, plush_attach_details *details, plush_diag *diag)
{
    plush_cage_mesh skin;
    plush_cage_topology topo;
    plush_attach_details none;
    details = details ? details : &none;
    memset(details, 0, sizeof *details);
    plush_status st = plush_scene_cage_weld(model, materials, material_count, arena, &skin, diag);
    if (st == PLUSH_OK && skin.triangle_count == 0) {
        char names[512];
        material_list(materials, material_count, names, sizeof names);
        if (material_count == 0)
            return plush_diag_fail(diag, PLUSH_E_GEOMETRY, -1, "material", -1,
                                   "no material draws a triangle to make a cage of");
        return plush_diag_fail(diag, PLUSH_E_GEOMETRY, -1, "material", -1, "%s %s draw%s no triangle to make a cage of",
                               material_count > 1 ? "materials" : "material", names, material_count > 1 ? "" : "s");
    }
    if (st == PLUSH_OK)
        st = plush_cage_check(&skin, &topo, diag);
    if (st != PLUSH_OK)
        return st;
    /* Closed pieces (a plush toy's body, head and limbs) would each become a soft body, and those nothing
     * holds fall: one wrap around them. Open sheets (hair, a skirt) stay sheets: a wrap would fill the
     * head they surround; their details are left out of the cage. */
    bool wrap = topo.pieces > 1 && topo.border_edges == 0 && topo.nonmanifold_edges == 0;
    if (!wrap && topo.pieces > 1) {
        size_t before = skin.triangle_count;
        st = leave_out_details(&skin, arena, &details->positions, &details->count, diag);
        if (st != PLUSH_OK)
            return st;
        details->triangles = before - skin.triangle_count;
    }
    plush_cage_options o = {.target_triangles = triangles ? triangles : PLUSH_ATTACH_CAGE_TRIANGLES, .wrap = wrap};
    return plush_cage_simplify(&skin, &o, arena, out, result, diag);
}
