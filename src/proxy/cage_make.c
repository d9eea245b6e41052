/* plush_cage_simplify: a cage as asked, simplified from the surface (cage.c's ladder of simplifiers) or,
 * with options.wrap, wrapped around it (cage_wrap.c, which simplifies its wrap with the same ladder). */
#include "proxy/cage_internal.h"

#include <string.h>

plush_status plush_cage_simplify(const plush_cage_mesh *src, const plush_cage_options *options, plush_arena *arena,
                                 plush_cage_mesh *out, plush_cage_result *result, plush_diag *diag)
{
    memset(out, 0, sizeof *out);
    memset(result, 0, sizeof *result);
    plush_status st = plush__cage_check_source(src, options, diag);
    if (st != PLUSH_OK)
        return st;
    st = options->wrap ? plush_cage_wrap_simplify(src, options, arena, out, result, diag)
                       : plush_cage_simplify_ladder(src, options, true, arena, out, result, diag);
    result->target = options->target_triangles;
    /* Told here, before anything measures, binds or attaches it: a cage no run may take, which its target
     * did not ask for (a soup of random triangles comes out of the ladder at twice its source). */
    if (st == PLUSH_OK && out->triangle_count > PLUSH_CAGE_MAX_TRIANGLES &&
        out->triangle_count > options->target_triangles)
        st = plush_diag_fail(diag, PLUSH_E_BUDGET, -1, NULL, -1,
                             "the cage came out at %zu triangles for a target of %zu, over the %d a proxy may have: "
                             "the surface is none a cage can follow (plush proxy --wrap makes one around it)",
                             out->triangle_count, options->target_triangles, PLUSH_CAGE_MAX_TRIANGLES);
    return st;
}
