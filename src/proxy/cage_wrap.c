/* Wrap cages: one closed 2-manifold around a surface made of separate pieces (plush_cage_wrap in
 * plush/cage.h), from a voxel grid, then simplified by plush_cage_simplify's own meshoptimizer ladder. */
#include "plush/cage.h"
#include "plush/sys/core.h"
#include "plush/sys/proxy.h"
#include "core/common.h"
#include "core/geom.h"
#include "proxy/cage_internal.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Grids tried at one band; widenings of a default band (each half as wide again: up to 3.4 times the
 * default's 2% of the diagonal) when its wrap cannot reach the target. */
enum { WRAP_ATTEMPTS = 8, WRAP_WIDENINGS = 3 };

static plush_status check_mesh(const plush_cage_mesh *src, plush_diag *diag)
{
    if (src->triangle_count == 0)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "the mesh has no triangles");
    for (size_t t = 0; t < src->triangle_count; t++)
        for (int k = 0; k < 3; k++) {
            uint32_t v = src->triangles[t][k];
            if (v >= src->vertex_count)
                return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "face", (int64_t)t,
                                       "vertex %lu out of range (%zu vertices)", (unsigned long)v, src->vertex_count);
            for (int j = 0; j < 3; j++)
                if (!isfinite(src->positions[v][j]) || fabsf(src->positions[v][j]) > 1e15f)
                    return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "vertex", (int64_t)v,
                                           "position is not finite");
        }
    return PLUSH_OK;
}

plush_status plush_cage_wrap(const plush_cage_mesh *src, float cell, float offset, plush_arena *arena,
                             plush_cage_mesh *out, plush_diag *diag)
{
    memset(out, 0, sizeof *out);
    plush_status st = check_mesh(src, diag);
    if (st != PLUSH_OK)
        return st;
    if (!(cell > 0) || !isfinite(cell) || !(offset > 0) || !isfinite(offset))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "the wrap's cell and offset must be positive");
    if (offset < 0.8f * cell)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1,
                               "the wrap's offset %g is below 0.8 of its cell %g: the band could have gaps",
                               (double)offset, (double)cell);
    return plush__cage_wrap_grid(src, cell, offset, arena, out, diag);
}

/* ---- wrap, then simplify -------------------------------------------------------------------------- */

double plush_cage_mesh_area(const plush_cage_mesh *mesh)
{
    double sum = 0;
    for (size_t t = 0; t < mesh->triangle_count; t++) {
        const float *a = mesh->positions[mesh->triangles[t][0]], *b = mesh->positions[mesh->triangles[t][1]],
                    *c = mesh->positions[mesh->triangles[t][2]];
        double e[3], f[3], n[3];
        for (int k = 0; k < 3; k++)
            e[k] = (double)b[k] - a[k], f[k] = (double)c[k] - a[k];
        plush__cross3d(e, f, n);
        sum += 0.5 * sqrt(plush__dot3d(n, n));
    }
    return sum;
}

static plush_status copy_mesh(const plush_cage_mesh *m, plush_arena *arena, plush_cage_mesh *out, plush_diag *diag)
{
    memset(out, 0, sizeof *out);
    out->positions = plush_arena_array(arena, m->vertex_count ? m->vertex_count : 1, sizeof *out->positions);
    out->normals = plush_arena_array(arena, m->vertex_count ? m->vertex_count : 1, sizeof *out->normals);
    out->triangles = plush_arena_array(arena, m->triangle_count ? m->triangle_count : 1, sizeof *out->triangles);
    if (!out->positions || !out->normals || !out->triangles)
        return plush__no_memory(diag);
    memcpy(out->positions, m->positions, m->vertex_count * sizeof *out->positions);
    memcpy(out->triangles, m->triangles, m->triangle_count * sizeof *out->triangles);
    out->vertex_count = m->vertex_count;
    out->triangle_count = m->triangle_count;
    /* unit outward normals of the final faces (the hints only say which way is out) */
    out->source = NULL;
    plush_cage_mesh hinted = *out;
    hinted.normals = m->normals;
    plush_cage_vertex_normals(&hinted, out->normals);
    return PLUSH_OK;
}

typedef struct wrap_plan {
    double h, offset, h_min, h_max;
} wrap_plan;

static double wanted_triangles(const plush_cage_options *o)
{
    return fmin(fmax(8.0 * (double)o->target_triangles, 2000), 400000);
}

/* The offset: the option's, or 2% of the faces' bounding-box diagonal (as plush compare pushes its cages
 * out). The cell: about 3 A / h^2 triangles for a surface of area A on a grid of h (a voxel surface's
 * faces add up to some 1.5 times the smooth area); aim at 8 times the target, within what the grid (200
 * cells across), the band (a cell of at most 1.25 offset leaves no gap) and its cost (at least a quarter
 * of the offset) allow. */
static void plan_cell(const plush_cage_mesh *src, const plush_cage_options *o, wrap_plan *p)
{
    double lo[3], hi[3], extent = 0, diagonal = 0;
    plush__cage_face_bounds(src, lo, hi);
    for (int k = 0; k < 3; k++) {
        extent = fmax(extent, hi[k] - lo[k]);
        diagonal += (hi[k] - lo[k]) * (hi[k] - lo[k]);
    }
    extent = extent > 0 ? extent : 1;
    diagonal = diagonal > 0 ? sqrt(diagonal) : 1;
    double area = plush_cage_mesh_area(src);
    p->offset = o->offset > 0 ? o->offset : 0.02 * diagonal;
    p->h_min = fmax(extent / 200, p->offset / 4);
    p->h_max = 1.25 * p->offset;
    p->h = area > 0 ? sqrt(3 * area / wanted_triangles(o)) : extent / 32;
    p->h = fmin(fmax(p->h, p->h_min), p->h_max);
    if (o->cell > 0)
        p->h = o->cell;
}

/* The first wrap: up to three regrids toward 4-16 times the target's triangles. */
static plush_status size_wrap(const plush_cage_mesh *src, const plush_cage_options *o, wrap_plan *p,
                              plush_arena *scratch, plush_cage_mesh *w, plush_diag *diag)
{
    for (int i = 0;; i++) {
        plush_arena_free(scratch);
        plush_status st = plush__cage_wrap_grid(src, p->h, p->offset, scratch, w, diag);
        if (st != PLUSH_OK || o->cell > 0 || i == 3)
            return st;
        double ratio = (double)w->triangle_count / wanted_triangles(o);
        if (ratio > 0.5 && ratio < 2)
            return PLUSH_OK;
        double h = fmin(fmax(p->h * sqrt(ratio), p->h_min), p->h_max);
        if (h == p->h)
            return PLUSH_OK;
        p->h = h;
    }
}

/* Simplifies the wrap toward `target` without the sloppy step; keeps the result in *best when it is one
 * closed piece and nearer the wanted count (o->target_triangles) than what *best holds. */
typedef struct wrap_best {
    plush_arena arena;
    plush_cage_mesh mesh;
    plush_cage_result res;
    bool have;
} wrap_best;

static plush_status try_target(const plush_cage_mesh *w, size_t target, const plush_cage_options *o, float tolerance,
                               const wrap_plan *plan, plush_arena *scratch, wrap_best *best, plush_diag *diag)
{
    double limit = floor((double)o->target_triangles * (1.0 + tolerance));
    plush_cage_mesh c = *w;
    plush_cage_result res = {.method = PLUSH_CAGE_COPY};
    plush_status st = PLUSH_OK;
    if ((double)w->triangle_count > floor((double)target * (1.0 + tolerance))) {
        plush_cage_options so = {.target_triangles = target, .tolerance = tolerance};
        if ((st = plush_cage_simplify_ladder(w, &so, false, scratch, &c, &res, diag)) != PLUSH_OK)
            return st;
    }
    plush_cage_topology topo;
    if ((st = plush_cage_check(&c, &topo, diag)) != PLUSH_OK)
        return st;
    if (!topo.closed_manifold || topo.pieces != 1)
        return PLUSH_OK;
    bool reached = (double)c.triangle_count <= limit;
    double miss = fabs((double)c.triangle_count - (double)o->target_triangles);
    if (best->have && (best->res.reached || miss >= fabs((double)best->mesh.triangle_count - (double)o->target_triangles)))
        return PLUSH_OK;
    plush_arena_free(&best->arena);
    if ((st = copy_mesh(&c, &best->arena, &best->mesh, diag)) != PLUSH_OK)
        return st;
    best->res = res;
    best->res.reached = reached;
    best->res.wrap_cell = (float)plan->h;
    best->res.wrap_offset = (float)plan->offset;
    best->res.wrap_triangles = w->triangle_count;
    best->have = true;
    return PLUSH_OK;
}

plush_status plush_cage_wrap_simplify(const plush_cage_mesh *src, const plush_cage_options *options,
                                      plush_arena *arena, plush_cage_mesh *out, plush_cage_result *result,
                                      plush_diag *diag)
{
    if (options->offset < 0 || !(options->cell >= 0) || !isfinite(options->cell))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1,
                               "a wrap needs a positive offset and cell (or 0 for the defaults)");
    plush_status st = check_mesh(src, diag);
    if (st != PLUSH_OK)
        return st;
    wrap_plan plan;
    plan_cell(src, options, &plan);
    /* the largest cell the plan picks itself is 1.25 offset: 0.8 of it is the offset, give or take a
     * rounding (the relative slack lets that one through and nothing a user could mean smaller) */
    if (plan.offset < 0.8 * plan.h * (1 - 1e-9))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1,
                               "the wrap's offset %g is too small for its grid (at least %g)", plan.offset,
                               0.8 * plan.h);
    float tolerance = options->tolerance > 0 ? options->tolerance : 0.1f;
    plush_arena scratch = {0};
    plush_cage_mesh w;
    wrap_best best = {0};
    plush_cage_options o = *options;
    for (int widen = 0; st == PLUSH_OK; widen++) {
        st = size_wrap(src, &o, &plan, &scratch, &w, diag);
        /* meshoptimizer may close a handle or fold a thin part on its way to the target: a coarser grid has
         * less of both */
        for (int attempt = 0; st == PLUSH_OK && attempt < WRAP_ATTEMPTS; attempt++) {
            if (attempt > 0) {
                /* coarser, the offset kept: the band stays gap-free up to a cell of 1.25 offset */
                double h = plan.h * 1.25;
                if (h > 1.25 * plan.offset)
                    break;
                plan.h = h;
                plush_arena_free(&scratch);
                if ((st = plush__cage_wrap_grid(src, plan.h, plan.offset, &scratch, &w, diag)) != PLUSH_OK)
                    break;
            }
            st = try_target(&w, o.target_triangles, &o, tolerance, &plan, &scratch, &best, diag);
            if (best.have && best.res.reached)
                break;
        }
        /* Pieces spread in a sheet or a lattice (beads, studs, sequins) whose gaps are wider than twice the
         * band leave the wrap a net of holes, each a handle no simplification may close: thousands of
         * triangles where hundreds were asked. A band of the default width (the caller gave none) is widened
         * by half again, up to WRAP_WIDENINGS times, until the gaps close and the target is reached; a band
         * the caller chose is kept. */
        if (st != PLUSH_OK || (best.have && best.res.reached) || options->offset > 0 || widen == WRAP_WIDENINGS)
            break;
        o.offset = (float)(1.5 * plan.offset);
        plan_cell(src, &o, &plan);
    }
    /* No grid reached the target in one closed piece (a torus cannot have 4 faces): on the last grid, the
     * smallest count that stays closed, up to the wrap itself (closed by construction). */
    for (double t = options->target_triangles * 1.25; st == PLUSH_OK && !best.have; t *= 1.25) {
        size_t target = t < (double)w.triangle_count ? (size_t)ceil(t) : w.triangle_count;
        st = try_target(&w, target, options, tolerance, &plan, &scratch, &best, diag);
        if (st == PLUSH_OK && !best.have && target == w.triangle_count)
            st = plush_diag_fail(diag, PLUSH_E_GEOMETRY, -1, NULL, -1,
                                 "the wrap is not a closed 2-manifold in one piece (cell %g)", plan.h);
    }
    if (st == PLUSH_OK)
        st = copy_mesh(&best.mesh, arena, out, diag);
    if (st == PLUSH_OK) {
        *result = best.res;
        result->source_triangles = src->triangle_count;
        result->triangles = out->triangle_count;
        result->vertices = out->vertex_count;
        result->wrapped = true;
    } else {
        memset(out, 0, sizeof *out);
    }
    plush_arena_free(&scratch);
    plush_arena_free(&best.arena);
    return st;
}
