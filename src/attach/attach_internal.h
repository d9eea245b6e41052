/* Between the attach files: attach.c asks attach_params.c whether the caller set any parameter. */
#ifndef PLUSH_SCENE_ATTACH_INTERNAL_H
#define PLUSH_SCENE_ATTACH_INTERNAL_H

#include "plush/attach.h"
#include "plush/sys/core.h"

/* Every parameter field zero (padding aside): the caller chose none, so the "plush" preset applies. */
bool plush__attach_soft_unset(const plush_pmx_soft_body *sb);
/* A piece's shape memory (kMT: the share of the way to its rest shape, turned as its pins turn, that each
 * physics step pulls a node) from the one given and its free length (the longest way along the cage from what
 * holds it): no stronger than gravity's pull on a pendulum of that length (docs/attach.md). */
float plush__attach_shape_memory(float given, float free_length);

/* Whether the points span a plane (three of them not on one line, to a thousandth of their extent). */
bool plush__attach_points_span(const float (*p)[3], size_t n);

/* The nearest-point searches done so far, told to options->progress: `total` is set before the first. */
typedef struct plush__attach_progress {
    const plush_attach_options *o;
    size_t done, total;
} plush__attach_progress;
/* Counts one more point searched; calls options->progress every few thousand and at the total. */
static inline void plush__attach_progress_step(plush__attach_progress *p)
{
    p->done++;
    if (p->o->progress && (p->done % 4096 == 0 || p->done == p->total))
        p->o->progress(p->o->progress_user, p->done, p->total);
}

/* options->auto_pins (attach_pins.c): sets pinned and auto_pinned per cage vertex, rewrites the weights of
 * the cage vertices it pins (cage_verts), and the bones of info[p] for each piece. */
plush_status plush__attach_auto_pins(const plush_pmx_model *m, const plush_attach_options *o, const uint32_t *face_piece,
                                     size_t pieces, plush_pmx_vertex *cage_verts, bool *pinned, bool *auto_pinned,
                                     plush_attach_piece *info, plush__attach_progress *progress, plush_diag *diag);

/* Per piece, the longest distance along the cage's edges (within the piece's faces) from a held cage vertex
 * (pinned or anchored) to any of its vertices, into info[p].free_length; 0 for a piece nothing holds. */
plush_status plush__attach_free_lengths(const plush_cage_mesh *c, const uint32_t *face_piece, size_t pieces,
                                        const bool *held, plush_attach_piece *info, plush_diag *diag);

#endif
