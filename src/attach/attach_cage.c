/* The cage plush run --cage makes: plush proxy's steps with its defaults, chosen for the surface. */
#include "plush/attach.h"
#include "plush/sys/attach.h"
#include "plush/scene_proxy.h"
#include "plush/sys/core.h"
#include "plush/sys/proxy.h"
#include "plush/sys/scene.h"
#include "core/geom.h"
#include "physics/rigid_shape.h"
#include "plush/scene.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A piece of the surface smaller than this share of the largest piece (the diagonal of its box) is a
 * detail a cage cannot carry -- a strand's end, a bead, a tuft -- that would get a triangle or two of
 * cage, pinned through. */
#define DETAIL_SHARE 0.05

/* A piece lying all along on one at least LAYER_SIZE times its size (every vertex within a cage edge of it) is
 * a layer of that piece -- a trim sewn along a dress, a lace on a hem -- which the larger piece's cage carries
 * (plush run's layers): caged on its own it added pieces the target has no room for, and the whole became one
 * wrap (Luka's trims with her dress: the wrap carried the dress's front panel round behind her legs). */
#define LAYER_SIZE 2.0

/* The weight PMX vertices a and b of m give the same bones (0 when either is out of range). */
static double same_bones(const plush_pmx_model *m, int32_t a, int32_t b)
{
    if (a < 0 || b < 0 || (size_t)a >= m->vertex_count || (size_t)b >= m->vertex_count)
        return 0;
    const plush_pmx_vertex *x = &m->vertices[a], *y = &m->vertices[b];
    double s = 0;
    for (int i = 0; i < 4; i++) {
        bool seen = false;
        for (int k = 0; k < i; k++)
            seen = seen || x->bones[k] == x->bones[i];
        if (seen || x->bones[i] < 0)
            continue;
        double wx = 0, wy = 0;
        for (int k = 0; k < 4; k++) {
            wx += x->bones[k] == x->bones[i] && x->weights[k] > 0 ? x->weights[k] : 0;
            wy += y->bones[k] == x->bones[i] && y->weights[k] > 0 ? y->weights[k] : 0;
        }
        s += wx < wy ? wx : wy;
    }
    return s;
}

/* The vertex lookups the layer rule may spend (each a nearest-point query): a surface of many thousands of pieces
 * of many sizes stops being searched there, its remaining pieces caged as they are, so making the cage stays
 * bounded before the first frame. */
#define LAYER_BUDGET 4000000

typedef struct layer_piece {
    uint32_t root;
    float lo[3], hi[3];
    double diagonal;
} layer_piece;

static int by_diagonal_down(const void *a, const void *b)
{
    const layer_piece *x = a, *y = b;
    if (x->diagonal != y->diagonal)
        return x->diagonal > y->diagonal ? -1 : 1;
    return (x->root > y->root) - (x->root < y->root);
}

/* Marks in small the pieces (roots in parent; those not small already) that lie all along on a piece at least
 * LAYER_SIZE times their size (box diagonals): every vertex within reach of one of its vertices, with on average
 * half or more of its weight on the bones of the vertex there (skin->source: each one's PMX vertex). Pieces are
 * taken largest first, each against the larger ones whose box, grown by reach, holds its own; a larger piece's
 * vertices are gridded once, when a smaller one first asks. False when out of memory. */
static bool mark_layers(const plush_pmx_model *m, const plush_cage_mesh *skin, const uint32_t *parent,
                        const uint8_t *used, uint8_t *small, double reach)
{
    size_t nv = skin->vertex_count, roots = 0;
    uint32_t *first = calloc(nv + 1, sizeof *first), *fill = malloc((nv + 1) * sizeof *fill);
    uint32_t *member = malloc((nv ? nv : 1) * sizeof *member);
    float(*pts)[3] = malloc((nv ? nv : 1) * sizeof *pts);
    layer_piece *piece = malloc((nv ? nv : 1) * sizeof *piece);
    plush__point_grid *grid = NULL;
    uint8_t *gridded = NULL;
    bool ok = first && fill && member && pts && piece;
    /* each piece's vertices, contiguous (counting sort by root) */
    for (size_t v = 0; ok && v < nv; v++)
        if (used[v])
            first[parent[v] + 1]++;
    for (size_t v = 0; ok && v < nv; v++)
        first[v + 1] += first[v];
    if (ok) {
        memcpy(fill, first, (nv + 1) * sizeof *fill);
        for (size_t v = 0; v < nv; v++)
            if (used[v]) {
                member[fill[parent[v]]] = (uint32_t)v;
                memcpy(pts[fill[parent[v]]++], skin->positions[v], sizeof pts[0]);
            }
        for (size_t v = 0; v < nv; v++) {
            if (!used[v] || parent[v] != v || small[v])
                continue;
            layer_piece *c = &piece[roots++];
            c->root = (uint32_t)v;
            for (int k = 0; k < 3; k++)
                c->lo[k] = INFINITY, c->hi[k] = -INFINITY;
            for (uint32_t i = first[v]; i < first[v + 1]; i++)
                for (int k = 0; k < 3; k++)
                    c->lo[k] = fminf(c->lo[k], pts[i][k]), c->hi[k] = fmaxf(c->hi[k], pts[i][k]);
            double d2 = 0;
            for (int k = 0; k < 3; k++)
                d2 += ((double)c->hi[k] - c->lo[k]) * ((double)c->hi[k] - c->lo[k]);
            c->diagonal = sqrt(d2);
        }
        qsort(piece, roots, sizeof *piece, by_diagonal_down);
        grid = calloc(roots ? roots : 1, sizeof *grid); /* per piece, in piece[]'s order */
        gridded = calloc(roots ? roots : 1, 1);
        ok = grid && gridded;
    }
    size_t spent = 0;
    for (size_t a = 1; ok && a < roots && spent < LAYER_BUDGET; a++) {
        uint32_t p = piece[a].root;
        bool layer = false;
        for (size_t b = 0; ok && b < a && !layer && piece[b].diagonal >= LAYER_SIZE * piece[a].diagonal; b++) {
            uint32_t q = piece[b].root;
            bool holds = true;
            for (int k = 0; k < 3; k++)
                holds = holds && piece[a].lo[k] >= piece[b].lo[k] - reach && piece[a].hi[k] <= piece[b].hi[k] + reach;
            if (!holds)
                continue;
            if (!gridded[b]) {
                ok = plush__point_grid_init(&grid[b], &pts[first[q]][0], first[q + 1] - first[q], sizeof pts[0]);
                gridded[b] = ok;
            }
            bool all = ok;
            double shared = 0;
            for (uint32_t i = first[p]; all && i < first[p + 1]; i++) {
                size_t at = plush__point_grid_nearest(&grid[b], pts[i]);
                spent++;
                double d2 = 0;
                for (int k = 0; at != SIZE_MAX && k < 3; k++)
                    d2 += ((double)pts[i][k] - pts[first[q] + at][k]) * ((double)pts[i][k] - pts[first[q] + at][k]);
                all = at != SIZE_MAX && d2 <= reach * reach;
                if (all && m && skin->source)
                    shared += same_bones(m, skin->source[member[i]], skin->source[member[first[q] + at]]);
            }
            /* and moved by the same bones as the piece it lies on (a trim weighted as the dress under it; not a
             * lock on a chain of its own beside the hair) */
            layer = all && (!m || !skin->source || shared >= 0.5 * (double)(first[p + 1] - first[p]));
        }
        if (layer)
            for (uint32_t i = first[p]; i < first[p + 1]; i++)
                small[member[i]] = 1;
    }
    for (size_t b = 0; grid && gridded && b < roots; b++)
        if (gridded[b])
            plush__point_grid_free(&grid[b]);
    free(first), free(fill), free(member), free(pts), free(piece), free(grid), free(gridded);
    return ok;
}

/* Leaves the surface's details out of skin's faces (in place): the pieces under DETAIL_SHARE of the largest,
 * and the layers of larger ones (mark_layers; reach: the mean edge of a cage of `target` triangles over the
 * surface's area). Three arrays over skin's vertices, malloc'd: *piece_of, each vertex's piece (its smallest
 * vertex); *faces_of, at a detail piece's vertex, the faces it had; *detail, 1 at a detail's vertices. */
static plush_status leave_out_details(const plush_pmx_model *m, plush_cage_mesh *skin, size_t target,
                                      uint32_t **piece_of, size_t **faces_of, uint8_t **detail, plush_diag *diag)
{
    size_t nv = skin->vertex_count, nt = skin->triangle_count;
    uint32_t *parent = malloc((nv ? nv : 1) * sizeof *parent);
    float(*lo)[3] = malloc((nv ? nv : 1) * sizeof *lo), (*hi)[3] = malloc((nv ? nv : 1) * sizeof *hi);
    uint8_t *used = calloc(nv ? nv : 1, 1), *small = calloc(nv ? nv : 1, 1);
    size_t *faces = calloc(nv ? nv : 1, sizeof *faces);
    *piece_of = NULL, *faces_of = NULL, *detail = NULL;
    if (!parent || !lo || !hi || !used || !small || !faces) {
        free(parent), free(lo), free(hi), free(used), free(small), free(faces);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
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
    for (size_t v = 0; v < nv; v++)
        small[v] = used[v] && lo[plush__uf_find(parent, (uint32_t)v)][0] < DETAIL_SHARE * largest;
    /* a cage of `target` equilateral triangles over the surface's area: its mean edge */
    double area = plush_cage_mesh_area(skin);
    double reach = target ? sqrt(4 * area / (sqrt(3.0) * (double)target)) : 0;
    for (size_t v = 0; v < nv; v++) /* each vertex's piece, once: *piece_of is this */
        parent[v] = plush__uf_find(parent, (uint32_t)v);
    if (reach > 0 && !mark_layers(m, skin, parent, used, small, reach)) {
        free(parent), free(lo), free(hi), free(used), free(small), free(faces);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    size_t kept = 0;
    for (size_t t = 0; t < nt; t++) {
        uint32_t r = parent[skin->triangles[t][0]];
        if (small[r])
            faces[r]++;
        else
            memmove(skin->triangles[kept++], skin->triangles[t], sizeof skin->triangles[t]);
    }
    skin->triangle_count = kept;
    free(lo), free(hi), free(used);
    *piece_of = parent, *faces_of = faces, *detail = small;
    return PLUSH_OK;
}

/* The details a cage leaves out, split: a detail piece all of whose vertices lie within `edge` (the cage's mean
 * edge) of the caged surface -- a tie at a braid's end, a bead on a strand -- is bound to the cage beside it,
 * and follows it; one further away (a clip apart from the hair) stays on bone skinning, its positions listed
 * in details. skin holds the caged faces only; small marks the detail vertices, piece_of their pieces. */
static plush_status split_details(const plush_cage_mesh *skin, const uint8_t *small, const uint32_t *piece_of,
                                  const size_t *faces_of, double edge, plush_arena *arena,
                                  plush_attach_details *details, plush_diag *diag)
{
    size_t nv = skin->vertex_count;
    uint8_t *caged = calloc(nv ? nv : 1, 1), *far = calloc(nv ? nv : 1, 1);
    float(*near)[3] = malloc((nv ? nv : 1) * sizeof *near);
    plush__point_grid grid = {0};
    size_t n = 0;
    plush_status st = PLUSH_OK;
    if (!caged || !far || !near) {
        st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        goto done;
    }
    for (size_t t = 0; t < skin->triangle_count; t++)
        for (int k = 0; k < 3; k++)
            caged[skin->triangles[t][k]] = 1;
    for (size_t v = 0; v < nv; v++)
        if (caged[v])
            memcpy(near[n++], skin->positions[v], sizeof near[0]);
    if (!plush__point_grid_init(&grid, &near[0][0], n, sizeof near[0])) {
        st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        goto done;
    }
    for (size_t v = 0; v < nv; v++) {
        if (!small[v] || far[piece_of[v]])
            continue;
        size_t q = plush__point_grid_nearest(&grid, skin->positions[v]);
        double d2 = 0;
        for (int k = 0; q != SIZE_MAX && k < 3; k++)
            d2 += ((double)skin->positions[v][k] - near[q][k]) * ((double)skin->positions[v][k] - near[q][k]);
        if (q == SIZE_MAX || !(d2 <= edge * edge))
            far[piece_of[v]] = 1;
    }
    size_t out = 0;
    for (size_t v = 0; v < nv; v++) {
        if (!small[v])
            continue;
        out += far[piece_of[v]];
        if (piece_of[v] == v) {
            if (far[v])
                details->triangles += faces_of[v];
            else
                details->bound_triangles += faces_of[v];
        }
    }
    details->positions = out ? plush_arena_array(arena, out, sizeof *details->positions) : NULL;
    if (out && !details->positions) {
        st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        goto done;
    }
    for (size_t v = 0; v < nv; v++)
        if (small[v] && far[piece_of[v]])
            memcpy(details->positions[details->count++], skin->positions[v], sizeof *details->positions);
done:
    plush__point_grid_free(&grid);
    free(caged), free(far), free(near);
    return st;
}

#include <stdio.h>
#include <string.h>

static size_t off_target(size_t triangles, size_t target)
{
    return triangles > target ? triangles - target : target - triangles;
}

/* One wrap around the surface's pieces instead of the cage made of them (out, result), when one comes within
 * 20% of the target, or nearer it than that cage: a wrap simplified short of its target on a coarse grid is
 * asked again in proportion (twice at most). Failing wraps leave the cage as it was. */
static void wrap_instead(const plush_cage_mesh *skin, size_t target, plush_arena *arena, plush_cage_mesh *out,
                         plush_cage_result *result)
{
    plush_cage_mesh best = {0};
    plush_cage_result best_result = {0};
    size_t ask = target;
    for (int tries = 0; tries < 3; tries++) {
        plush_cage_mesh wrapped;
        plush_cage_result r;
        plush_diag quiet;
        plush_diag_reset(&quiet);
        if (plush_cage_simplify(skin, &(plush_cage_options){.target_triangles = ask, .wrap = true}, arena, &wrapped, &r,
                                &quiet) != PLUSH_OK || r.triangles == 0)
            break;
        if (best.triangle_count == 0 || off_target(r.triangles, target) < off_target(best_result.triangles, target))
            best = wrapped, best_result = r;
        if (5 * r.triangles >= 4 * target && 5 * r.triangles <= 6 * target)
            break;
        size_t next = (size_t)((double)ask * (double)target / (double)r.triangles);
        if (next == ask || next == 0)
            break;
        ask = next;
    }
    bool within = 5 * best_result.triangles >= 4 * target && 5 * best_result.triangles <= 6 * target;
    if (best.triangle_count && (within || off_target(best_result.triangles, target) < off_target(result->triangles, target))) {
        *out = best, *result = best_result;
        result->reached = 10 * result->triangles <= 11 * target; /* against the target asked, not the retry's */
    }
}

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

/* The materials asked for have no face to make a cage of; why, after the names. */
static plush_status no_triangle(const char *const *materials, size_t count, const char *why, plush_diag *diag)
{
    char names[512];
    material_list(materials, count, names, sizeof names);
    if (count == 0)
        return plush_diag_fail(diag, PLUSH_E_GEOMETRY, -1, "material", -1,
                               "no material draws a triangle to make a cage of%s", why);
    return plush_diag_fail(diag, PLUSH_E_GEOMETRY, -1, "material", -1, "%s %s draw%s no triangle to make a cage of%s",
                           count > 1 ? "materials" : "material", names, count > 1 ? "" : "s", why);
}

/* The cage's default size for a welded surface of `faces` faces (its layers once). A part its author gave
 * physics to (PLUSH_SOFT_AUTHOR_MOVES_SHARE of its welded vertices weighted to bones that physics moves) follows
 * that physics by default, its cage held toward the author's swing: PLUSH_ATTACH_CAGE_TRIANGLES, whose nodes
 * carry the swing (sample_finish's skirt, 2.6 of its faces to a cage triangle at 300, swings 0.54-0.63 of the
 * author's on the stress motions and creases at most 22 degrees; at a fifth of its faces 0.31-0.50). A part
 * the author gave none keeps its cage's own shape, which folds where contacts and gravity fold it, up to its
 * guards' 90 degrees; a cage about as fine as the surface it carries shows each such fold as a crease of the
 * surface's own edges, which the surface bar counts (30 degrees at the 99th percentile): such a part's cage is a
 * fifth of its faces, each cage edge over more than two of the surface's edges, up to
 * PLUSH_ATTACH_CAGE_TRIANGLES and at least CAGE_LEAST (or every face, when fewer: a strip of 16 quads still
 * bends along its length). The two-layer cape at 300 (2.6) creased up to 47 degrees and missed the bar at 14
 * frames of the soak's runs and 94 of the made-up dances; at a fifth at none and 6 (docs/measured.md, "A cage
 * coarser than its surface"). */
enum { CAGE_LEAST = 32 };
static size_t default_target(const plush_pmx_model *model, const plush_cage_mesh *skin)
{
    size_t faces = skin->triangle_count;
    uint8_t *drop = calloc(faces ? faces : 1, 1);
    if (drop && plush__repeated_faces(&skin->triangles[0][0], faces, drop))
        for (size_t f = 0; f < skin->triangle_count; f++)
            faces -= drop[f];
    free(drop);
    if (skin->source && plush__rigid_moved_share(model, (const uint32_t *)skin->source, skin->vertex_count) >=
                            PLUSH_SOFT_AUTHOR_MOVES_SHARE)
        return PLUSH_ATTACH_CAGE_TRIANGLES;
    size_t t = faces / 5 > CAGE_LEAST ? faces / 5 : faces < CAGE_LEAST ? faces : CAGE_LEAST;
    return t < PLUSH_ATTACH_CAGE_TRIANGLES ? t : PLUSH_ATTACH_CAGE_TRIANGLES;
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
    if (triangles > PLUSH_CAGE_MAX_TRIANGLES)
        return plush_diag_fail(diag, PLUSH_E_BUDGET, -1, NULL, -1,
                               "a cage of %zu triangles was asked for; a proxy has at most %d", triangles,
                               PLUSH_CAGE_MAX_TRIANGLES);
    plush_status st = plush_scene_cage_weld(model, materials, material_count, arena, &skin, diag);
    if (st == PLUSH_OK && skin.triangle_count == 0)
        return no_triangle(materials, material_count, "", diag);
    if (st == PLUSH_OK)
        st = plush_cage_check(&skin, &topo, diag);
    if (st != PLUSH_OK)
        return st;
    /* Closed pieces (a plush toy's body, head and limbs) would each become a soft body, and those nothing
     * holds fall: one wrap around them. Open sheets (hair, a skirt) stay sheets: a wrap would fill the
     * head they surround; their details are left out of the cage. */
    bool wrap = topo.pieces > 1 && topo.border_edges == 0 && topo.nonmanifold_edges == 0;
    uint32_t *piece_of = NULL;
    size_t *faces_of = NULL;
    uint8_t *small = NULL;
    size_t target = triangles ? triangles : default_target(model, &skin);
    if (!wrap && topo.pieces > 1)
        st = leave_out_details(model, &skin, target, &piece_of, &faces_of, &small, diag);
    plush_cage_options o = {.target_triangles = target, .wrap = wrap};
    if (st == PLUSH_OK)
        st = plush_cage_simplify(&skin, &o, arena, out, result, diag);
    /* A surface of more separate pieces than the target has room for (a hair of hundreds of closed strands)
     * comes out over 120% of it, or in pieces of a triangle or two that nothing pins sensibly (fewer than
     * PLUSH_CAGE_PIECE_FLOOR triangles a piece on average): one wrap around them reaches the target in one
     * piece, as it does for a plush toy's closed pieces. (A surface of fewer faces than the target is its own
     * cage: a wrap would only add triangles.) */
    plush_cage_topology made;
    if (st == PLUSH_OK && !wrap && topo.pieces > 1)
        st = plush_cage_check(out, &made, diag);
    if (st == PLUSH_OK && !wrap && topo.pieces > 1 && skin.triangle_count > o.target_triangles &&
        (5 * result->triangles > 6 * o.target_triangles || made.pieces * PLUSH_CAGE_PIECE_FLOOR > result->triangles))
        wrap_instead(&skin, o.target_triangles, arena, out, result);
    if (st == PLUSH_OK && small) {
        double edge = out->triangle_count ? plush__mean_edge(&out->positions[0][0], sizeof out->positions[0],
                                                             &out->triangles[0][0], out->triangle_count * 3)
                                          : 0;
        st = split_details(&skin, small, piece_of, faces_of, edge, arena, details, diag);
    }
    free(piece_of), free(faces_of), free(small);
    result->target = target;
    /* faces that all lie on lines (or are slivers, which the simplifier collapses): nothing to simulate */
    if (st == PLUSH_OK && out->triangle_count == 0)
        return no_triangle(materials, material_count, ": every face is a line or a sliver", diag);
    return st;
}

plush_status plush_attach_part_make(const plush_pmx_model *model, const char *const *materials, size_t material_count,
                                    size_t triangles, const plush_pmx_soft_body *soft, float pin_band,
                                    plush_arena *arena, plush_attach_part *out, plush_diag *diag)
{
    memset(out, 0, sizeof *out);
    plush_status st = plush_attach_make_cage(model, materials, material_count, triangles, arena, &out->cage,
                                             &out->made, &out->details, diag);
    if (st != PLUSH_OK)
        return st;
    plush_attach_options o = {.cage = &out->cage, .auto_mask = true, .auto_pins = true, .materials = materials,
                              .material_count = material_count, .require_hold = true, .pin_band = pin_band};
    if (soft)
        o.soft = *soft;
    return plush_attach(model, &o, &out->model, &out->attached, diag);
}

const char *plush_attach_target_note(const plush_cage_result *res, size_t target, const char *fix, char *buf,
                                     size_t size)
{
    buf[0] = '\0';
    if (target == 0 || (res->triangles * 5 >= target * 4 && res->triangles * 5 <= target * 6))
        return buf;
    size_t faces = res->surface_triangles ? res->surface_triangles : res->source_triangles;
    if (faces <= target)
        snprintf(buf, size, "; the materials have only %zu faces (their layers counted once)", faces);
    else if (res->triangles < target)
        snprintf(buf, size, "; under 80%% of the target: the simplifier collapses edges in batches and the "
                 "slivers it leaves are collapsed after it; asked for more it went over the limit");
    else if (res->wrapped) /* a wrap has one piece and no border: its handles are what a simplifier keeps */
        snprintf(buf, size, "; over 120%% of the target: the wrap keeps every hole through it (a gap its pieces "
                 "leave, a ring's middle) and no simplifier closes one (a larger target fits them)");
    else
        snprintf(buf, size, "; over 120%% of the target: the surface keeps its separate pieces and borders (%s)",
                 fix);
    return buf;
}
