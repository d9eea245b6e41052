/* Attach's automatic pins: each cage piece pinned where the part it covers hangs from bones no dynamic rigid
 * body moves (plush_attach_options.auto_pins; the rule is in plush/attach.h). */
#include "attach/attach_internal.h"
#include "core/common.h"

#include "core/geom.h"
#include "physics/rigid_shape.h"
#include "plush/sys/core.h"
#include "plush/sys/physics.h"
#include "plush/sys/pmx.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool plush__attach_points_span(const float (*p)[3], size_t n)
{
    if (n < 3)
        return false;
    /* the two points furthest apart along one sweep, then the furthest from their line */
    size_t a = 0, b = 0;
    double best = 0;
    for (size_t i = 1; i < n; i++) {
        double d = 0;
        for (int k = 0; k < 3; k++)
            d += ((double)p[i][k] - p[a][k]) * ((double)p[i][k] - p[a][k]);
        if (d > best)
            best = d, b = i;
    }
    if (best <= 0)
        return false;
    double u[3], len = sqrt(best);
    for (int k = 0; k < 3; k++)
        u[k] = ((double)p[b][k] - p[a][k]) / len;
    for (size_t i = 0; i < n; i++) {
        double d[3], t = 0, off = 0;
        for (int k = 0; k < 3; k++)
            d[k] = (double)p[i][k] - p[a][k], t += d[k] * u[k];
        for (int k = 0; k < 3; k++)
            off += (d[k] - t * u[k]) * (d[k] - t * u[k]);
        if (sqrt(off) > 1e-3 * len)
            return true;
    }
    return false;
}

/* Held: no dynamic rigid body on the bone or any ancestor. */
static void held_bones(const plush_pmx_model *m, bool *held)
{
    plush__rigid_moved_bones(m, held);
    for (size_t b = 0; b < m->bone_count; b++)
        held[b] = !held[b];
}

typedef struct pin_work {
    const plush_pmx_model *m;
    const plush_attach_options *o;
    const plush_cage_mesh *cage;
    bool *held;
    uint32_t *nearest;                 /* per model vertex: its nearest cage vertex */
    float *dist;                       /* and the distance */
    bool *covered;                     /* per model vertex */
    double *share;                     /* per cage vertex: its height along the piece's up direction */
    uint32_t *first, *list;            /* per cage vertex: its covered vertices list[first[k]..first[k+1]] */
    double *bone_w;                    /* scratch per bone */
    int32_t *body_bone;                /* per bone: the bone nearest it up its chain a body follows (body_bone) */
    plush__attach_progress *progress;
    plush__point_grid covered_grid;    /* the covered vertices by position */
    uint32_t *covered_vertex;          /* per point of covered_grid: its model vertex */
    plush__point_grid rest_grid;       /* the other vertices (the rest of the model) by position */
    uint32_t *rest_vertex;             /* per point of rest_grid: its model vertex */
    double reach;                      /* the cage's mean edge */
} pin_work;

/* Mean edge length of the cage. */
/* A grid over the model vertices marked in keep (index order kept: its ties are a scan's); *vertex_of maps
 * the grid's points back to model vertices (malloc'd). False when out of memory. */
static bool subset_grid(const plush_pmx_model *m, const bool *keep, plush__point_grid *grid, uint32_t **vertex_of)
{
    size_t n = 0;
    float(*pts)[3] = malloc((m->vertex_count ? m->vertex_count : 1) * sizeof *pts);
    *vertex_of = malloc((m->vertex_count ? m->vertex_count : 1) * sizeof **vertex_of);
    for (size_t v = 0; pts && *vertex_of && v < m->vertex_count; v++)
        if (keep[v]) {
            memcpy(pts[n], m->vertices[v].position, sizeof pts[n]);
            (*vertex_of)[n++] = (uint32_t)v;
        }
    bool ok = pts && *vertex_of && plush__point_grid_init(grid, n ? pts[0] : NULL, n, sizeof pts[0]);
    free(pts);
    if (!ok) {
        free(*vertex_of);
        *vertex_of = NULL;
        plush__point_grid_free(grid);
    }
    return ok;
}

static double distance(const float p[3], const float q[3])
{
    double d = 0;
    for (int k = 0; k < 3; k++)
        d += ((double)q[k] - p[k]) * ((double)q[k] - p[k]);
    return sqrt(d);
}

static bool nearest_nodes(pin_work *w)
{
    const plush_cage_mesh *c = w->cage;
    plush__point_grid grid;
    if (!plush__point_grid_init(&grid, c->vertex_count ? c->positions[0] : NULL, c->vertex_count, sizeof c->positions[0]))
        return false;
    for (size_t v = 0; v < w->m->vertex_count; v++) {
        const float *p = w->m->vertices[v].position;
        size_t at = plush__point_grid_nearest(&grid, p);
        plush__attach_progress_step(w->progress);
        w->nearest[v] = at == SIZE_MAX ? 0 : (uint32_t)at;
        w->dist[v] = at == SIZE_MAX ? INFINITY : (float)distance(p, c->positions[at]);
    }
    plush__point_grid_free(&grid);
    return true;
}

/* The covered vertices: those of the named materials, or else of the materials the cage was made around:
 * each cage vertex votes for the material of its nearest model vertex, and every material with at least a
 * tenth of the most voted material's votes counts (plush proxy's cage vertices are its materials' own, a
 * wrap's lie at one distance from them; a material that only sits under the cage, like eyes under a
 * fringe, gets none). */
static plush_status cover(pin_work *w, plush_diag *diag)
{
    const plush_pmx_model *m = w->m;
    const plush_cage_mesh *c = w->cage;
    size_t nm = m->material_count ? m->material_count : 1;
    plush_arena arena = {0};
    plush_status st = PLUSH_OK;
    bool *take = calloc(nm, sizeof *take);
    size_t *votes = calloc(nm, sizeof *votes);
    int32_t *material_of = malloc((m->vertex_count ? m->vertex_count : 1) * sizeof *material_of);
    uint32_t **verts = calloc(nm, sizeof *verts);
    size_t *counts = calloc(nm, sizeof *counts);
    bool *drawn = malloc((m->vertex_count ? m->vertex_count : 1) * sizeof *drawn);
    uint32_t *drawn_vertex = NULL;
    if (!take || !votes || !material_of || !verts || !counts || !drawn) {
        st = plush__no_memory(diag);
        goto done;
    }
    for (size_t i = 0; i < w->o->material_count; i++)
        if ((st = plush_pmx_material_choose(m, w->o->materials[i] ? w->o->materials[i] : "", take, diag)) != PLUSH_OK)
            goto done;
    for (size_t v = 0; v < m->vertex_count; v++)
        material_of[v] = -1;
    for (size_t mat = 0; mat < m->material_count; mat++) {
        if ((st = plush_pmx_material_vertices(m, mat, &arena, &verts[mat], &counts[mat], diag)) != PLUSH_OK)
            goto done;
        for (size_t i = 0; i < counts[mat]; i++)
            if (material_of[verts[mat][i]] < 0)
                material_of[verts[mat][i]] = (int32_t)mat;
    }
    if (w->o->material_count == 0) {
        /* the vertices of some material, searched by position */
        for (size_t v = 0; v < m->vertex_count; v++)
            drawn[v] = material_of[v] >= 0;
        plush__point_grid grid;
        if (!subset_grid(m, drawn, &grid, &drawn_vertex)) {
            st = plush__no_memory(diag);
            goto done;
        }
        size_t most = 0;
        for (size_t k = 0; k < c->vertex_count; k++) {
            size_t near = plush__point_grid_nearest(&grid, c->positions[k]);
            plush__attach_progress_step(w->progress);
            int32_t at = near == SIZE_MAX ? -1 : material_of[drawn_vertex[near]];
            if (at >= 0 && ++votes[at] > most)
                most = votes[at];
        }
        plush__point_grid_free(&grid);
        for (size_t mat = 0; mat < m->material_count; mat++)
            take[mat] = most > 0 && 10 * votes[mat] >= most;
    }
    for (size_t mat = 0; mat < m->material_count; mat++)
        for (size_t i = 0; take[mat] && i < counts[mat]; i++)
            w->covered[verts[mat][i]] = true;
done:
    free(take);
    free(votes);
    free(material_of);
    free(verts);
    free(counts);
    free(drawn);
    free(drawn_vertex);
    plush_arena_free(&arena);
    return st;
}

/* Per cage vertex, the covered vertices nearest to it and within reach (counting sort by cage vertex). */
static void group(pin_work *w, double reach)
{
    size_t nc = w->cage->vertex_count;
    memset(w->first, 0, (nc + 1) * sizeof *w->first);
    for (size_t v = 0; v < w->m->vertex_count; v++)
        if (w->covered[v] && w->dist[v] <= reach)
            w->first[w->nearest[v] + 1]++;
    for (size_t k = 0; k < nc; k++)
        w->first[k + 1] += w->first[k];
    uint32_t *fill = w->first; /* walks forward, then is restored */
    for (size_t v = 0; v < w->m->vertex_count; v++)
        if (w->covered[v] && w->dist[v] <= reach)
            w->list[fill[w->nearest[v]]++] = (uint32_t)v;
    for (size_t k = nc; k > 0; k--)
        w->first[k] = w->first[k - 1];
    w->first[0] = 0;
}

/* The covered vertex nearest to cage vertex k (any distance), or UINT32_MAX. */
static uint32_t nearest_covered(const pin_work *w, size_t k)
{
    size_t at = plush__point_grid_nearest(&w->covered_grid, w->cage->positions[k]);
    return at == SIZE_MAX ? UINT32_MAX : w->covered_vertex[at];
}

/* The covered vertices that speak for cage vertex k: those nearest it within reach, or else the covered
 * vertex nearest it at any distance (into *one); into *vs, their count (0 when the model covers none). */
static size_t speakers(const pin_work *w, size_t k, uint32_t *one, const uint32_t **vs)
{
    *vs = w->list + w->first[k];
    size_t count = w->first[k + 1] - w->first[k];
    if (count == 0 && (*one = nearest_covered(w, k)) != UINT32_MAX)
        *vs = one, count = 1;
    return count;
}

/* The held share around cage vertex k; with add, its held bones' weights are added to w->bone_w. */
static double around(pin_work *w, size_t k, bool add)
{
    size_t nb = w->m->bone_count;
    uint32_t one;
    const uint32_t *vs;
    size_t count = speakers(w, k, &one, &vs);
    if (count == 0)
        return 0;
    double s = 0;
    for (size_t i = 0; i < count; i++) {
        const plush_pmx_vertex *v = &w->m->vertices[vs[i]];
        s += plush_pmx_vertex_bone_share(v, w->held, nb);
        for (int j = 0; add && j < 4; j++)
            if (v->bones[j] >= 0 && (size_t)v->bones[j] < nb && w->held[v->bones[j]])
                w->bone_w[v->bones[j]] += v->weights[j];
    }
    return s / (double)count;
}

/* The strongest four bones of w->bone_w (cleared afterwards), into bones/weights summing to 1; 0 when none. */
static int strongest(pin_work *w, int32_t bones[4], float weights[4])
{
    size_t nb = w->m->bone_count;
    int n = 0;
    double wt[4] = {0};
    for (int j = 0; j < 4; j++)
        bones[j] = -1, weights[j] = 0;
    for (size_t b = 0; b < nb; b++) {
        double x = w->bone_w[b];
        w->bone_w[b] = 0;
        if (!(x > 0))
            continue;
        int at = n < 4 ? n++ : 4;
        while (at > 0 && wt[at - 1] < x) {
            if (at < 4)
                wt[at] = wt[at - 1], bones[at] = bones[at - 1];
            at--;
        }
        if (at < 4)
            wt[at] = x, bones[at] = (int32_t)b;
    }
    double sum = 0;
    for (int j = 0; j < n; j++)
        sum += wt[j];
    for (int j = 0; j < n; j++)
        weights[j] = (float)(wt[j] / sum);
    return n;
}

/* Cage vertex k follows these bones alone. */
static void follow(plush_pmx_vertex *v, const int32_t bones[4], const float weights[4], int n)
{
    for (int j = 0; j < 4; j++) { /* the slots past n stay empty: a BDEF1 or BDEF2 reads only its first */
        v->bones[j] = j < n || j == 0 ? bones[j] : -1;
        v->weights[j] = j < n || j == 0 ? weights[j] : 0;
    }
    v->sdef = -1;
    if (n <= 1) {
        v->weight_type = PLUSH_PMX_BDEF1;
        v->weights[0] = 1;
    } else if (n == 2) {
        v->weight_type = PLUSH_PMX_BDEF2;
        v->weights[1] = 1 - v->weights[0];
    } else {
        v->weight_type = PLUSH_PMX_BDEF4;
    }
}

static void pin_here(pin_work *w, size_t k, plush_pmx_vertex *cage, bool *pinned, bool *auto_pinned,
                     const plush_pmx_vertex *fallback)
{
    int32_t bones[4];
    float weights[4];
    around(w, k, true);
    int n = strongest(w, bones, weights);
    if (n > 0)
        follow(&cage[k], bones, weights, n);
    else if (fallback)
        cage[k] = (plush_pmx_vertex){.position = {cage[k].position[0], cage[k].position[1], cage[k].position[2]},
                                     .normal = {cage[k].normal[0], cage[k].normal[1], cage[k].normal[2]},
                                     .bones = {fallback->bones[0], fallback->bones[1], fallback->bones[2],
                                               fallback->bones[3]},
                                     .weights = {fallback->weights[0], fallback->weights[1], fallback->weights[2],
                                                 fallback->weights[3]},
                                     .edge_scale = 1, .weight_type = fallback->weight_type, .sdef = -1};
    pinned[k] = auto_pinned[k] = true;
}

/* Whether rigid body rb is the body's: it follows a bone, with a shape the pins can test. */
static bool body_shape(const plush_pmx_rigid_body *rb)
{
    return rb->mode == PLUSH_PMX_RIGID_FOLLOW_BONE && rb->shape <= PLUSH_PMX_RIGID_CAPSULE;
}

/* Whether p lies, at rest, inside a rigid body that follows a bone: bone's (any bone's when bone < 0). */
static bool inside_body_of(const plush_pmx_model *m, const float p[3], int32_t bone)
{
    for (size_t r = 0; r < m->rigid_body_count; r++) {
        const plush_pmx_rigid_body *rb = &m->rigid_bodies[r];
        if (!body_shape(rb) || (bone >= 0 && rb->bone != bone))
            continue;
        float pose[16];
        plush_world_rigid_rest_transform(rb, pose);
        if (plush__rigid_inside(rb, pose, p))
            return true;
    }
    return false;
}

static bool has_body(const plush_pmx_model *m, int32_t b)
{
    for (size_t r = 0; r < m->rigid_body_count; r++)
        if (body_shape(&m->rigid_bodies[r]) && m->rigid_bodies[r].bone == b)
            return true;
    return false;
}

/* The bone b moves as, when it copies another's turn whole from the same place (a leg's D bone: MMD's
 * common rig weights the legs to bones that take the leg bones' rotation at a ratio of 1, with the rigid
 * bodies on the leg bones), or -1. */
static int32_t moves_as(const plush_pmx_model *m, int32_t b)
{
    const plush_pmx_bone *x = &m->bones[b];
    int32_t a = x->append_parent;
    if (!(x->flags & PLUSH_PMX_BONE_APPEND_ROTATE) || (x->flags & PLUSH_PMX_BONE_APPEND_LOCAL) || a < 0 ||
        (size_t)a >= m->bone_count || a == b || !(fabsf(x->append_ratio - 1.0f) < 1e-3f))
        return -1;
    const float *p = x->position, *q = m->bones[a].position;
    float dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
    return dx * dx + dy * dy + dz * dz < 1e-4f ? a : -1;
}

/* The bone nearest b up its chain (b itself first) that such a body follows, or -1; a bone on the way that
 * moves as another (moves_as) counts as that one. */
static int32_t body_bone(const plush_pmx_model *m, int32_t b)
{
    for (size_t up = 0; b >= 0 && (size_t)b < m->bone_count && up <= m->bone_count; up++, b = m->bones[b].parent) {
        if (has_body(m, b))
            return b;
        int32_t a = moves_as(m, b);
        if (a >= 0 && has_body(m, a))
            return a;
    }
    return -1;
}

/* Whether cage vertex k lies inside the body of a bone that carries the covered vertices around it (the
 * nearest bone up each carrying bone's chain with a body that follows it): a stocking in its leg's capsules, an
 * eye in the head's sphere, not hair carried by the head lying in the torso's box. */
static bool in_carrying_body(const pin_work *w, uint32_t k)
{
    uint32_t one;
    const uint32_t *vs;
    size_t count = speakers(w, k, &one, &vs);
    for (size_t i = 0; i < count; i++)
        for (int j = 0; j < 4; j++) {
            const plush_pmx_vertex *v = &w->m->vertices[vs[i]];
            int32_t b = v->weights[j] > 0 && v->bones[j] >= 0 && (size_t)v->bones[j] < w->m->bone_count
                            ? w->body_bone[v->bones[j]]
                            : -1;
            if (b >= 0 && inside_body_of(w->m, w->cage->positions[k], b))
                return true;
        }
    return false;
}

/* A held piece's free cage vertices that lie on the body (in_carrying_body) and whose covered vertices only held
 * bones carry (a top on the torso, a stocking on a leg, hair lying on the skull), pinned to those bones: such a
 * garment is moved by the body it fits, as its author's skinning moves it, and the rest of the piece (a skirt
 * below the top, locks below the skull) hangs from them. A covered vertex any physics bone carries (a braid on
 * its chain, a skirt on its own bones) leaves its cage vertex free. The count pinned so. */
static size_t pin_fitted(pin_work *w, const uint32_t *nodes, size_t count, plush_pmx_vertex *cage, bool *pinned,
                         bool *auto_pinned)
{
    size_t n = 0;
    for (size_t i = 0; i < count; i++) {
        uint32_t k = nodes[i];
        if (pinned[k] || !(around(w, k, false) >= 1.0 - 1e-6) || !in_carrying_body(w, k))
            continue;
        pin_here(w, k, cage, pinned, auto_pinned, NULL);
        n++;
    }
    return n;
}

/* Do piece p's pinned cage vertices span a plane? */
static bool piece_spans(const pin_work *w, const uint32_t *nodes, size_t count, const bool *pinned, float (*scratch)[3])
{
    size_t n = 0;
    for (size_t i = 0; i < count; i++)
        if (pinned[nodes[i]])
            memcpy(scratch[n++], w->cage->positions[nodes[i]], sizeof scratch[0]);
    return plush__attach_points_span((const float(*)[3])scratch, n);
}

/* Grows piece p's pins over its edges, the highest neighbour first (w->share holds the height), until they
 * span a plane. */
static void grow(pin_work *w, const uint32_t *face_piece, size_t p, const uint32_t *nodes, size_t count,
                 plush_pmx_vertex *cage, bool *pinned, bool *auto_pinned, float (*scratch)[3])
{
    const plush_cage_mesh *c = w->cage;
    for (size_t round = 0; round < count && !piece_spans(w, nodes, count, pinned, scratch); round++) {
        size_t best = SIZE_MAX, from = 0;
        for (size_t t = 0; t < c->triangle_count; t++) {
            if (face_piece[t] != p)
                continue;
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++) {
                    uint32_t x = c->triangles[t][a], y = c->triangles[t][b];
                    if (!pinned[x] || pinned[y])
                        continue;
                    if (best == SIZE_MAX || w->share[y] > w->share[best] || (w->share[y] == w->share[best] && y < best))
                        best = y, from = x;
                }
        }
        if (best == SIZE_MAX)
            return;
        pin_here(w, best, cage, pinned, auto_pinned, &cage[from]);
    }
}

/* The bones the piece's automatic pins follow, by summed weight. */
static void piece_bones(pin_work *w, const uint32_t *nodes, size_t count, const plush_pmx_vertex *cage,
                        const bool *auto_pinned, plush_attach_piece *info)
{
    for (size_t i = 0; i < count; i++)
        if (auto_pinned[nodes[i]])
            for (int j = 0; j < 4; j++)
                if (cage[nodes[i]].bones[j] >= 0 && (size_t)cage[nodes[i]].bones[j] < w->m->bone_count)
                    w->bone_w[cage[nodes[i]].bones[j]] += cage[nodes[i]].weights[j];
    float weights[4];
    info->bone_count = (size_t)strongest(w, info->bones, weights);
}

static size_t depth(const plush_pmx_model *m, int32_t b)
{
    size_t d = 0;
    for (int64_t x = m->bones[b].parent; x >= 0 && (size_t)x < m->bone_count && d <= m->bone_count; x = m->bones[x].parent)
        d++;
    return d;
}

/* The bone a piece nothing held reaches hangs from: of the bones with at least a tenth of the weight of
 * its covered vertices, the one nearest the root of the skeleton (the most weight first among equals), or
 * -1. *chains gets how many of those bones lie at that depth (a band sewn across a skirt's hem chains spans
 * several; a braid hangs from one). */
static int32_t chain_root(pin_work *w, const uint32_t *nodes, size_t count, size_t *chains)
{
    const plush_pmx_model *m = w->m;
    double total = 0;
    for (size_t i = 0; i < count; i++) {
        uint32_t one;
        const uint32_t *vs;
        size_t n = speakers(w, nodes[i], &one, &vs); /* a node with none within reach still speaks for the piece */
        for (size_t j = 0; j < n; j++) {
            const plush_pmx_vertex *v = &m->vertices[vs[j]];
            for (int b = 0; b < 4; b++)
                if (v->bones[b] >= 0 && (size_t)v->bones[b] < m->bone_count)
                    w->bone_w[v->bones[b]] += v->weights[b], total += v->weights[b];
        }
    }
    int32_t root = -1;
    size_t root_depth = SIZE_MAX;
    *chains = 0;
    for (size_t b = 0; b < m->bone_count; b++) {
        if (total > 0 && w->bone_w[b] >= 0.1 * total) {
            size_t d = depth(m, (int32_t)b);
            if (d < root_depth)
                *chains = 0;
            if (d <= root_depth)
                ++*chains;
            if (d < root_depth || (d == root_depth && w->bone_w[b] > w->bone_w[root]))
                root = (int32_t)b, root_depth = d;
        }
    }
    for (size_t b = 0; b < m->bone_count; b++)
        if (root < 0 || (int32_t)b != root)
            w->bone_w[b] = 0;
    if (root >= 0)
        w->bone_w[root] = 0;
    return root;
}

/* Marks in mark every bone a piece's covered vertices are weighted to (speakers). */
static void piece_weighted_bones(const pin_work *w, const uint32_t *nodes, size_t count, bool *mark)
{
    const plush_pmx_model *m = w->m;
    for (size_t i = 0; i < count; i++) {
        uint32_t one;
        const uint32_t *vs;
        size_t n = speakers(w, nodes[i], &one, &vs);
        for (size_t j = 0; j < n; j++) {
            const plush_pmx_vertex *v = &m->vertices[vs[j]];
            for (int b = 0; b < 4; b++)
                if (v->bones[b] >= 0 && (size_t)v->bones[b] < m->bone_count && v->weights[b] > 0)
                    mark[v->bones[b]] = true;
        }
    }
}

/* The default band (plush_attach_options.pin_band): the top 15% of a piece's extent. A skirt's waistband, a
 * cape's collar, a strand's root: wide enough to hold the piece's rim in shape, narrow enough that most of it
 * is free (checked on skirts, capes, long hair and braids of several real models). */
#define DEFAULT_BAND 0.15
/* Without an explicit band at most this share of a piece's nodes is pinned: a cage simplified around a
 * detailed waistband or scalp can put most of its nodes in the top rows, and a piece mostly pinned does not
 * move. */
#define DEFAULT_MOST_PINNED 0.4

static double dot3(const float *p, const double *u)
{
    return (double)p[0] * u[0] + (double)p[1] * u[1] + (double)p[2] * u[2];
}

typedef struct ranked {
    double h;
    uint32_t node;
} ranked;

static int by_height_down(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    return x->h > y->h ? -1 : x->h < y->h ? 1 : (x->node > y->node) - (x->node < y->node);
}

/* Pins piece p where it attaches: the band of its nodes within `band` of its extent from its highest point
 * along `up` (at most DEFAULT_MOST_PINNED of them unless the band was given). Each follows the held bones of
 * the covered vertices around it, else the piece's (`fallback`, when it has any). The number pinned. */
static size_t pin_band(pin_work *w, const uint32_t *nodes, size_t count, const double up[3], ranked *order,
                       const plush_pmx_vertex *fallback, plush_pmx_vertex *cage, bool *pinned, bool *auto_pinned)
{
    if (count == 0)
        return 0;
    for (size_t i = 0; i < count; i++) {
        order[i] = (ranked){dot3(w->cage->positions[nodes[i]], up), nodes[i]};
        w->share[nodes[i]] = order[i].h;
    }
    qsort(order, count, sizeof *order, by_height_down);
    double band = w->o->pin_band > 0 ? w->o->pin_band : DEFAULT_BAND;
    double top = order[0].h, lowest = top - band * (top - order[count - 1].h);
    size_t most = w->o->pin_band > 0 ? count : (size_t)fmax(3.0, floor(DEFAULT_MOST_PINNED * (double)count));
    size_t pins = 0;
    for (size_t i = 0; i < count && pins < most && (order[i].h >= lowest || pins == 0); i++, pins++)
        pin_here(w, order[i].node, cage, pinned, auto_pinned, fallback);
    return pins;
}

/* Whether cage vertex k lies within the cage's mean edge of a vertex the cage does not cover. */
static bool touches_rest(const pin_work *w, uint32_t k)
{
    size_t at = plush__point_grid_nearest(&w->rest_grid, w->cage->positions[k]);
    return at != SIZE_MAX && distance(w->cage->positions[k], w->m->vertices[w->rest_vertex[at]].position) <= w->reach;
}

/* Whether the node of a piece farthest from where it touches the model (at, from its centre) lies in the
 * open: in front of the rest of the model at its nearest vertex there, by that vertex's normal, and outside
 * every rigid body that follows a bone. A mouth's inside ends inside the head. */
static bool far_end_out(const pin_work *w, const uint32_t *nodes, size_t count, const double centre[3],
                        const double at[3])
{
    double best = -INFINITY;
    size_t far = 0;
    for (size_t i = 0; i < count; i++) {
        const float *p = w->cage->positions[nodes[i]];
        double d = 0;
        for (int k = 0; k < 3; k++)
            d -= ((double)p[k] - centre[k]) * at[k];
        if (d > best)
            best = d, far = i;
    }
    const float *p = w->cage->positions[nodes[far]];
    if (inside_body_of(w->m, p, -1))
        return false;
    /* the rest of the model nearest it (the vertices the cage does not cover), by its normal */
    size_t near = plush__point_grid_nearest(&w->rest_grid, p);
    if (near == SIZE_MAX)
        return true;
    const plush_pmx_vertex *x = &w->m->vertices[w->rest_vertex[near]];
    double side = 0;
    for (int k = 0; k < 3; k++)
        side += ((double)p[k] - x->position[k]) * x->normal[k];
    return side > 0;
}

/* The direction a held piece hangs from: up (+Y), unless no vertex of its top band touches the rest of the
 * model while it stands out from where others do (a tail, a tuft of hair): then from its centre towards
 * those. True when it is not up. */
static bool hang_direction(pin_work *w, const uint32_t *nodes, size_t count, double up[3])
{
    up[0] = 0, up[1] = 1, up[2] = 0;
    if (count == 0)
        return false;
    double top = -INFINITY, bottom = INFINITY;
    for (size_t i = 0; i < count; i++) {
        double h = w->cage->positions[nodes[i]][1];
        top = fmax(top, h), bottom = fmin(bottom, h);
    }
    double band = w->o->pin_band > 0 ? w->o->pin_band : DEFAULT_BAND, lowest = top - band * (top - bottom);
    double centre[3] = {0, 0, 0}, at[3] = {0, 0, 0};
    size_t touching = 0;
    for (size_t i = 0; i < count; i++) {
        const float *p = w->cage->positions[nodes[i]];
        for (int k = 0; k < 3; k++)
            centre[k] += p[k] / (double)count;
        if (!touches_rest(w, nodes[i]))
            continue;
        if (p[1] >= lowest)
            return false; /* it hangs from its top */
        touching++;
        for (int k = 0; k < 3; k++)
            at[k] += p[k];
    }
    double len = 0, lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY}, extent = 0;
    for (int k = 0; k < 3; k++)
        at[k] = touching ? at[k] / (double)touching - centre[k] : 0, len += at[k] * at[k];
    len = sqrt(len);
    for (size_t i = 0; i < count; i++)
        for (int k = 0; k < 3; k++) {
            lo[k] = fmin(lo[k], w->cage->positions[nodes[i]][k]);
            hi[k] = fmax(hi[k], w->cage->positions[nodes[i]][k]);
        }
    for (int k = 0; k < 3; k++)
        extent += (hi[k] - lo[k]) * (hi[k] - lo[k]);
    extent = sqrt(extent);
    /* it stands out from the model: most of it away (no more than half its vertices touching), and either
     * touching more below its centre than beside it (a tuft standing up), or touching at one end -- where it
     * touches lies at least a quarter of its extent from its centre, half of what a piece held at one end
     * has -- with its other end out of the body (a tail straight back or at 45 degrees, an ear). A mouth's or
     * an eye's inside, touching the face round it or ending inside the head, keeps its top. */
    if (!(len > 0) || 2 * touching > count)
        return false;
    if (!(at[1] / len < -sqrt(0.5)) && !(len >= 0.25 * extent && far_end_out(w, nodes, count, centre, at)))
        return false;
    for (int k = 0; k < 3; k++)
        up[k] = at[k] / len;
    return true;
}

/* The held bones of a piece's covered vertices, strongest four, as a vertex to fall back on; false when none. */
static bool piece_holders(pin_work *w, const uint32_t *nodes, size_t count, plush_pmx_vertex *out)
{
    for (size_t i = 0; i < count; i++)
        around(w, nodes[i], true);
    int32_t bones[4];
    float weights[4];
    int n = strongest(w, bones, weights);
    if (n == 0)
        return false;
    *out = (plush_pmx_vertex){.edge_scale = 1, .sdef = -1};
    follow(out, bones, weights, n);
    return true;
}

/* A piece neither held bones nor a chain reach (its vertices carry no usable weight): pinned where it lies
 * nearest the rest of the model, following the bones of the model vertex there -- a piece is never left
 * to fall. False when the model offers no vertex with a bone. */
static bool pin_where_it_touches(pin_work *w, const uint32_t *nodes, size_t count, ranked *order,
                                 plush_pmx_vertex *cage, bool *pinned, bool *auto_pinned)
{
    const plush_pmx_model *m = w->m;
    double best = INFINITY, centre[3] = {0, 0, 0};
    uint32_t at = UINT32_MAX, near = UINT32_MAX;
    for (size_t i = 0; i < count; i++) {
        const float *p = w->cage->positions[nodes[i]];
        for (int k = 0; k < 3; k++)
            centre[k] += p[k] / (double)count;
        size_t r = plush__point_grid_nearest(&w->rest_grid, p);
        uint32_t v = r != SIZE_MAX ? w->rest_vertex[r] : nearest_covered(w, nodes[i]);
        if (v == UINT32_MAX)
            continue;
        double d = distance(p, m->vertices[v].position);
        if (d < best)
            best = d, at = nodes[i], near = v;
    }
    if (at == UINT32_MAX)
        return false;
    int32_t bones[4];
    float weights[4];
    const plush_pmx_vertex *v = &m->vertices[near];
    for (int j = 0; j < 4; j++)
        if (v->bones[j] >= 0 && (size_t)v->bones[j] < m->bone_count && v->weights[j] > 0)
            w->bone_w[v->bones[j]] += v->weights[j];
    int n = strongest(w, bones, weights);
    if (n == 0) {
        /* a weightless vertex: the bone the model hangs from */
        bones[0] = 0, weights[0] = 1, n = m->bone_count ? 1 : 0;
        if (!n)
            return false;
    }
    plush_pmx_vertex holder = {.edge_scale = 1, .sdef = -1};
    follow(&holder, bones, weights, n);
    double up[3], len = 0;
    for (int k = 0; k < 3; k++)
        up[k] = w->cage->positions[at][k] - centre[k], len += up[k] * up[k];
    len = sqrt(len);
    for (int k = 0; k < 3; k++)
        up[k] = len > 0 ? up[k] / len : (k == 1);
    return pin_band(w, nodes, count, up, order, &holder, cage, pinned, auto_pinned) > 0;
}

plush_status plush__attach_auto_pins(const plush_pmx_model *m, const plush_attach_options *o, const uint32_t *face_piece,
                                     size_t pieces, plush_pmx_vertex *cage_verts, bool *pinned, bool *auto_pinned,
                                     plush_attach_piece *info, plush__attach_progress *progress, plush_diag *diag)
{
    const plush_cage_mesh *c = o->cage;
    size_t nv = m->vertex_count, nc = c->vertex_count, nb = m->bone_count ? m->bone_count : 1;
    pin_work w = {.m = m, .o = o, .cage = c, .progress = progress};
    bool *dynamic = calloc(nb, sizeof *dynamic);
    w.held = calloc(nb, sizeof *w.held);
    w.bone_w = calloc(nb, sizeof *w.bone_w);
    w.body_bone = malloc(nb * sizeof *w.body_bone);
    w.nearest = malloc(nv * sizeof *w.nearest);
    w.dist = malloc(nv * sizeof *w.dist);
    w.covered = calloc(nv, sizeof *w.covered);
    w.list = malloc(nv * sizeof *w.list);
    w.first = malloc((nc + 1) * sizeof *w.first);
    w.share = malloc(nc * sizeof *w.share);
    uint32_t *nodes = malloc(nc * sizeof *nodes);
    bool *in_piece = malloc(nc * sizeof *in_piece);
    float(*scratch)[3] = malloc(nc * sizeof *scratch);
    ranked *order = malloc(nc * sizeof *order);
    bool *uncovered = malloc((nv ? nv : 1) * sizeof *uncovered);
    plush_status st = PLUSH_OK;
    if (!dynamic || !w.held || !w.bone_w || !w.body_bone || !w.nearest || !w.dist || !w.covered || !w.list || !w.first || !w.share ||
        !nodes || !in_piece || !scratch || !order || !uncovered) {
        st = plush__no_memory(diag);
        goto done;
    }
    held_bones(m, w.held);
    for (size_t b = 0; b < m->bone_count; b++)
        w.body_bone[b] = body_bone(m, (int32_t)b);
    double reach = plush__mean_edge(&c->positions[0][0], sizeof c->positions[0], &c->triangles[0][0], 3 * c->triangle_count);
    if (!nearest_nodes(&w)) {
        st = plush__no_memory(diag);
        goto done;
    }
    if ((st = cover(&w, diag)) != PLUSH_OK)
        goto done;
    if (!subset_grid(m, w.covered, &w.covered_grid, &w.covered_vertex)) {
        st = plush__no_memory(diag);
        goto done;
    }
    for (size_t v = 0; v < nv; v++) /* the rest of the model, in place of covered (cover is done with it) */
        uncovered[v] = !w.covered[v];
    if (!subset_grid(m, uncovered, &w.rest_grid, &w.rest_vertex)) {
        st = plush__no_memory(diag);
        goto done;
    }
    w.reach = reach;
    group(&w, reach);
    const double gravity_up[3] = {0, 1, 0};
    for (size_t p = 0; p < pieces; p++) {
        memset(in_piece, 0, nc * sizeof *in_piece);
        for (size_t t = 0; t < c->triangle_count; t++)
            for (int k = 0; k < 3 && face_piece[t] == p; k++)
                in_piece[c->triangles[t][k]] = true;
        size_t count = 0;
        for (size_t k = 0; k < nc; k++)
            if (in_piece[k])
                nodes[count++] = (uint32_t)k;
        plush_pmx_vertex holder;
        if (piece_holders(&w, nodes, count, &holder)) {
            /* held: it hangs from its top (MMD's up is +Y, gravity -Y), or stands up from where it touches */
            double up[3];
            info[p].from_contact = hang_direction(&w, nodes, count, up);
            pin_band(&w, nodes, count, up, order, &holder, cage_verts, pinned, auto_pinned);
            info[p].fitted = pin_fitted(&w, nodes, count, cage_verts, pinned, auto_pinned);
        } else {
            /* nothing held reaches it (a braid on physics bones): it rides the bone its chain hangs from,
             * pinned where it is nearest that bone; a band across several chains (a trim sewn along a
             * skirt's hem) hangs from its top, each pin riding the chains' bones around it */
            size_t chains = 0;
            int32_t root = chain_root(&w, nodes, count, &chains);
            if (root < 0) {
                info[p].from_contact = pin_where_it_touches(&w, nodes, count, order, cage_verts, pinned, auto_pinned);
                if (info[p].from_contact) {
                    grow(&w, face_piece, p, nodes, count, cage_verts, pinned, auto_pinned, scratch);
                    piece_bones(&w, nodes, count, cage_verts, auto_pinned, &info[p]);
                }
                continue;
            }
            double centre[3] = {0, 0, 0}, up[3], len = 0;
            for (size_t i = 0; i < count; i++)
                for (int k = 0; k < 3; k++)
                    centre[k] += c->positions[nodes[i]][k] / (double)count;
            for (int k = 0; k < 3; k++)
                up[k] = m->bones[root].position[k] - centre[k], len += up[k] * up[k];
            len = sqrt(len);
            for (int k = 0; k < 3; k++)
                up[k] = chains > 1 ? gravity_up[k] : len > 0 ? up[k] / len : gravity_up[k];
            holder = (plush_pmx_vertex){.edge_scale = 1, .sdef = -1};
            int32_t bones[4] = {root, -1, -1, -1};
            float weights[4] = {1, 0, 0, 0};
            follow(&holder, bones, weights, 1);
            memset(dynamic, 0, nb * sizeof *dynamic);
            dynamic[root] = true;
            if (chains > 1)
                piece_weighted_bones(&w, nodes, count, dynamic);
            bool *held = w.held;
            w.held = dynamic;
            info[p].physics = pin_band(&w, nodes, count, up, order, &holder, cage_verts, pinned, auto_pinned) > 0;
            w.held = held;
        }
        grow(&w, face_piece, p, nodes, count, cage_verts, pinned, auto_pinned, scratch);
        piece_bones(&w, nodes, count, cage_verts, auto_pinned, &info[p]);
    }
done:
    free(dynamic);
    free(w.held);
    free(w.bone_w);
    free(w.body_bone);
    free(w.nearest);
    free(w.dist);
    free(w.covered);
    free(w.list);
    free(w.first);
    free(w.share);
    free(nodes);
    free(in_piece);
    free(scratch);
    free(order);
    free(uncovered);
    plush__point_grid_free(&w.covered_grid);
    free(w.covered_vertex);
    plush__point_grid_free(&w.rest_grid);
    free(w.rest_vertex);
    return st;
}

plush_status plush__attach_free_lengths(const plush_cage_mesh *c, const uint32_t *face_piece, size_t pieces,
                                        const bool *held, plush_attach_piece *info, plush_diag *diag)
{
    double *farthest = malloc((pieces ? pieces : 1) * sizeof *farthest);
    if (!farthest || !plush__farthest_along_faces((const float(*)[3])c->positions, c->vertex_count,
                                                  (const uint32_t(*)[3])c->triangles, c->triangle_count, face_piece,
                                                  pieces, held, farthest)) {
        free(farthest);
        return plush__no_memory(diag);
    }
    for (size_t p = 0; p < pieces; p++)
        info[p].free_length = (float)farthest[p];
    free(farthest);
    return PLUSH_OK;
}
