/* Quality of a deforming surface against its rest shape (docs/run.md, the quality measure): a
 * plush is fabric over stuffing, it stretches a little and never crumples.
 *
 *   plush_quality *q = NULL;
 *   plush_quality_create(rest_positions, vertex_count, triangles, triangle_count, &q, &diag);
 *   each frame: plush_quality_figures f; plush_quality_measure(q, positions, &f);
 *   plush_quality_destroy(q);
 *
 * Vertices are welded by position first (a PMX mesh splits them at UV seams), so an edge or a fold across a
 * seam counts like any other. Edge strain is length / rest length; crease is the change of the dihedral
 * angle between the two faces of an edge, in degrees; the volume ratio is the enclosed volume against
 * rest when every edge has exactly two faces (closed pieces), NaN otherwise. Percentiles come from a
 * fine logarithmic histogram (within 0.5% of the value), so a frame costs one pass over the edges.
 */
#ifndef PLUSH_QUALITY_H
#define PLUSH_QUALITY_H

#include "plush/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct plush_quality_figures {
    double strain_p50, strain_p99, strain_p999, strain_max;
    double strain_outside;        /* share of the edges whose strain is outside [2/3, 3/2] */
    double crease_p99, crease_max; /* degrees */
    double volume_ratio;          /* of the closed pieces (every edge with exactly two faces); NaN when
                                   * no piece is closed */
    double tear;                  /* the largest distance between two vertices that shared their rest
                                   * position (one of them on the measured faces): layers torn apart */
    size_t edges, folds;          /* edges measured; edges with two faces (crease) */
    size_t short_edges;           /* edges not measured: shorter than a thousandth of the mean edge at rest
                                   * (create warns of them) */
} plush_quality_figures;

typedef struct plush_quality plush_quality;

/* A measure of the surface at rest (positions and triangles; what it needs is kept, the arrays are not):
 * its edges, their rest lengths and the faces on each; edges shorter than a thousandth of the mean are left
 * out with a warning in diag. Fails on a vertex index out of range (PLUSH_E_RANGE) or no memory. */
plush_status plush_quality_create(const float (*rest)[3], size_t vertex_count, const uint32_t (*triangles)[3],
                                  size_t triangle_count, plush_quality **out, plush_diag *diag);
/* positions: vertex_count entries, the same numbering as at create. */
void plush_quality_measure(plush_quality *q, const float (*positions)[3], plush_quality_figures *out);
/* Vertices marked in dropped (vertex_count entries) take no part in the tear: a copy of the surface that
 * is not a layer of it (a soft body's own mesh, made from the surface and moving with the simulation). */
void plush_quality_drop_layers(plush_quality *q, const bool *dropped);
void plush_quality_destroy(plush_quality *q);
/* The surface bar plush holds a frame to (docs/surface.md): p99.9 strain at most 1.5, at most 0.5% of the
 * edges beyond 1.5x either way, crease p99 at most 30 degrees. True when f meets all three. */
#define PLUSH_QUALITY_BAR_STRAIN_P999 1.5
#define PLUSH_QUALITY_BAR_OUTSIDE 0.005
#define PLUSH_QUALITY_BAR_CREASE_P99 30.0
bool plush_quality_meets_bar(const plush_quality_figures *f);
/* A cage whose 99th percentile crease passes this has folded back onto itself (neighbouring faces nearly
 * back to back): the surface skinned to it is carried by a folded cage even where its own figures read
 * well, so a run counts such a frame over the bar too (quality.csv's over_bar, the summary's count). The
 * folds between faces pinned at every corner are not the cage's to keep (plush/sys/quality.h: plush_quality_hold_folds). */
#define PLUSH_QUALITY_BAR_CAGE_CREASE_P99 120.0

#ifdef __cplusplus
}
#endif
#endif
