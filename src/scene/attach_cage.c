/* The cage plush run --cage makes: plush proxy's steps with its defaults, chosen for the surface. */
#include "plush/scene_attach.h"
#include "plush/scene_proxy.h"

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
                                    plush_cage_result *result, plush_diag *diag)
{
    plush_cage_mesh skin;
    plush_cage_topology topo;
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
     * head they surround. */
    bool wrap = topo.pieces > 1 && topo.border_edges == 0 && topo.nonmanifold_edges == 0;
    plush_cage_options o = {.target_triangles = triangles ? triangles : PLUSH_ATTACH_CAGE_TRIANGLES, .wrap = wrap};
    return plush_cage_simplify(&skin, &o, arena, out, result, diag);
}
