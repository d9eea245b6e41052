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
    if (options->wrap)
        return plush_cage_wrap_simplify(src, options, arena, out, result, diag);
    return plush_cage_simplify_ladder(src, options, true, arena, out, result, diag);
}
