/* Between the cage files: plush_cage_simplify (cage_make.c) hands options.wrap to cage_wrap.c, which builds
 * each wrap on cage_grid.c's voxel grid and simplifies it with cage.c's ladder, and the rest to the ladder. */
#ifndef PLUSH_PROXY_CAGE_INTERNAL_H
#define PLUSH_PROXY_CAGE_INTERNAL_H

#include "plush/cage.h"
#include "plush/sys/core.h"
#include "plush/sys/proxy.h"

/* cage.c: PLUSH_E_ARGUMENT (naming what) unless src and the options can be simplified or wrapped. */
plush_status plush__cage_check_source(const plush_cage_mesh *src, const plush_cage_options *o, plush_diag *diag);

/* plush_cage_simplify with options->wrap, after its checks of src and options have passed. */
plush_status plush_cage_wrap_simplify(const plush_cage_mesh *src, const plush_cage_options *options,
                                      plush_arena *arena, plush_cage_mesh *out, plush_cage_result *result,
                                      plush_diag *diag);

/* plush_cage_simplify without the wrap (options->wrap is ignored); sloppy false stops the ladder before
 * the sloppy simplifier, which does not keep topology: the wrap rather tries a coarser grid. */
plush_status plush_cage_simplify_ladder(const plush_cage_mesh *src, const plush_cage_options *options, bool sloppy,
                                        plush_arena *arena, plush_cage_mesh *out, plush_cage_result *result,
                                        plush_diag *diag);

/* One surface, one cage piece: where the simplified faces (idx, *n indices naming src's vertices; room
 * for `room`) cut a piece of src's surface (faces joined by vertices) into several cage pieces -- a strand's
 * tip apart from its root where the simplifier thinned its middle away -- each is bridged to the nearest
 * border of another by a quad between their nearest border edges (two faces wound against both, split along
 * the shorter diagonal), the smallest first, until the surface piece is one cage piece: pieces that follow
 * different things would stretch the strand between them into a wire. Separate surface pieces stay apart,
 * and so does a surface piece cut into more than PLUSH_CAGE_PIECE_FLOOR cage pieces (no strand cut apart, but
 * a surface the simplifier could not follow); bridging stops where idx has no room. false when out of memory
 * (nothing added). */
bool plush__cage_bridge_pieces(const plush_cage_mesh *src, unsigned *idx, size_t *n, size_t room);

/* The wrap at grid cell h and distance offset (plush_cage_wrap after its argument checks). */
plush_status plush__cage_wrap_grid(const plush_cage_mesh *src, double h, double offset, plush_arena *arena,
                                   plush_cage_mesh *out, plush_diag *diag);

/* The bounding box of the faces' vertices (isolated vertices are not wrapped). */
void plush__cage_face_bounds(const plush_cage_mesh *src, double lo[3], double hi[3]);

#endif
