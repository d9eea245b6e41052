/* The cage plush run --cage makes: plush proxy's steps with its defaults, chosen for the surface. */
#include "plush/scene_attach.h"
#include "plush/scene_proxy.h"

plush_status plush_attach_make_cage(const plush_pmx_model *model, const char *const *materials, size_t material_count,
                                    size_t triangles, plush_arena *arena, plush_cage_mesh *out,
                                    plush_cage_result *result, plush_diag *diag)
{
    plush_cage_mesh skin;
    plush_cage_topology topo;
    plush_status st = plush_scene_cage_weld(model, materials, material_count, arena, &skin, diag);
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
