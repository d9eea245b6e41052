/* Keeping the proxy-skinned surface out of the body.
 *
 * A bound vertex is a blend of its cage triangles' rigid motions, each fitted to a patch of the cage around
 * the triangle; where the cage bends over a shoulder or round an arm the blend cuts the corner, and the
 * detailed surface lies a few tenths of a cage edge inside a limb the cage itself stays out of. So, after
 * skinning, each round takes the bound vertices inside a body (or within the margin of it), and moves
 * each cage triangle by the mean of their pushes out of it, weighted as the triangle carries them: the
 * surface moves as a blend of its triangles again, so it stays smooth, and the bake's pseudo-bones and every
 * export carry the same translations. A guard keeps the push from harming the surface: an edge of the
 * detailed mesh that the push would stretch or squeeze beyond STRAIN_LIMIT (or further than it already
 * was), or bend by moving its ends more than SLOPE of its length apart in a round (frame_slope() in all the
 * body's pass's rounds of a frame), halves the push of every triangle that moves it as often as brings that edge
 * within them (tried at once: the edge moved by a half, a quarter ... of its move), then looks again at the
 * edges those triangles move, and after GUARD_HALVINGS halvings in all those triangles do not move at all this
 * round. A round that leaves more of the vertices it moved in a body than it found (pushed into another limb) is
 * undone, and taken again without the triangles that carried a vertex in: those move no more in this pass. (Ended
 * at its first undone round, the skin's pass on Luka's dress ended so at 1,406 of the long dance's first 1,500
 * frames, her dress 5.14% behind her skin on the first 120 against 4.79% taken again.) A vertex deeper in a body
 * than half its thickness is pushed back out the side it lay on at that frame or the one before (body_side():
 * its nearest way out is more likely the far side, and pushed that way a hem went across a shin frame after
 * frame, which the measure's `through` figure counts), or, that side not known, is in and pushed nowhere. A vertex a part's shape
 * cannot carry out (a waistband inside a thigh the model's own skinning puts there) stays inside and is counted
 * by the measure as before.
 *
 * A frame's pushing starts from the offsets the frame before's left, falling back onto the cage as a surface falls
 * under gravity once nothing pushes it (warm_start()): pushed afresh each frame, a hem round a dancing leg was
 * pushed out one frame and not the next, and shimmered.
 *
 * The body is the rigid bodies and the visible skin: a bound vertex behind the skin (the faces of the other
 * drawn materials physics does not move), by less than SKIN_REACH of a cage edge, is pushed along the skin's
 * normals to lie the margin in front of it, where it is not behind or on it at rest (plush/sys/quality.h). The rigid bodies
 * are fatter than the mesh but the model's collision groups keep a part's physics apart from the ones it lies
 * into at rest (a skirt in the thighs' capsules): the skin is what keeps it out of those limbs.
 *
 * A third pass, on a frame where an edge of the detailed surface among the bound vertices lies beyond the
 * surface bar's strain (PLUSH_QUALITY_BAR_STRAIN_P999), pulls each end of such an edge toward the other by half
 * of what the edge has beyond STRAIN_LIMIT, through the same triangles' translations, rounds and guard: where the
 * two ends are carried by different triangles, the blend stretched the edge by moving them apart (a skirt's front
 * where a thigh lifts into it, with the cage's own links within 1.1-1.4 of their length), and moving those
 * triangles back brings it within the bar. Where both ends are carried alike a translation cannot shorten the
 * edge. An edge squeezed under the bar's 2/3 has its ends pushed apart the same way, by half of what it lacks of
 * 1 / STRAIN_LIMIT, on a frame where the pass runs: one with an edge beyond the bar's strain, or with more squeezed
 * edges than half the share the bar allows outside it. A row in a body or behind the skin counts as in and pulls
 * nothing, so a round that pulls the surface into either is undone, and the edge stays as it is. After it, in a
 * run that exports no bake, the strain's limit moves the rows themselves (limit_strain()): an edge still beyond
 * STRAIN_LIMIT has its ends moved along it to that length, which reaches an edge both of whose ends the same
 * triangles carry.
 *
 * Last, the touch-up (touch_up()): the rows the skin's pass leaves behind the skin -- where a triangle carries rows
 * that go other ways, its step, their mean, brings few of them out (Luka's dress at her waist and hips, where the
 * blend cuts the body's corners under layers that follow her bones) -- and those in a rigid body, which the skin's
 * pass leaves to the body's (half the rows behind her skin after both) -- are moved out on their own, each in a
 * smooth bump of the surface around it, held by a guard as the rounds are, in up to TOUCH_UP_PASSES passes. Those
 * moves are the frame's, not the triangles': a bake's bones (one pseudo-bone per triangle, or fewer fitted to
 * those) replay the triangles' motions and would not carry them, so a run that exports a bake sets
 * triangles_only and there is none.
 *
 * A model's seams and layers give a third or more of a part's bound vertices a twin: another at the same rest
 * place, skinned by the same bones and bound to the same triangles alike, so every push moves the two alike. The
 * push looks at and moves one row of each such set, which stands for the others (its votes in the means and
 * counts are theirs: the rounds decide as they did with each row on its own, but for the skin's hints, below), and
 * gives the others its moves at the frame's end. */
#include "scene/soft_push.h"
#include "plush/sys/core.h"
#include "plush/quality.h"
#include "core/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Rounds of pushing a frame: a push moves other vertices too, and some of them into a body. */
enum { ROUNDS = 8, GUARD_HALVINGS = 4 };
/* The touch-up's passes a frame at most (touch_up(); each brings fewer rows out than the one before: Luka's
 * dress on a made-up dance 3.10%, 2.75%, 2.59%, 2.54% behind the skin after one to four). */
enum { TOUCH_UP_PASSES = 4 };
/* The sweeps of the strain's limit over the rows' edges (limit_strain()). */
enum { LIMIT_SWEEPS = 8 };
/* The passes of a frame's pushing: out of the rigid bodies, out from behind the visible skin, and the detailed
 * surface's own edges brought back within the bar where the blend of the triangles' motions stretched them. */
enum { PASS_BODY, PASS_SKIN, PASS_STRAIN };
/* The surface bar allows p99.9 strain 1.5 and counts edges outside [2/3, 3/2]; a push keeps each edge
 * just inside both, within [1/1.45, 1.45], or where it was. */
#define STRAIN_LIMIT 1.45
/* The most a push may move one end of an edge against the other, as a share of the edge's length: a
 * tilt of about 6 degrees, so a pushed bump bends the surface by about twice that at most. */
#define SLOPE 0.1
/* The most the body's pass's rounds together may move one end of an edge against the other in a frame, as a
 * share of its length: a bump whose sides tilt by t bends the surface by about 2 t at its crest, and the
 * surface bar allows a crease of PLUSH_QUALITY_BAR_CREASE_P99 degrees, so tan(bar / 2) (0.268;
 * sp->frame_slope). SLOPE alone, a round's, let ROUNDS rounds tilt an edge 0.8 of its length: sample_finish's
 * skirt creased 30-37 degrees (p99) where a thigh lifts into its front, at 63 frames of the long dance, at none
 * with this. The rigid bodies are fatter than the mesh they stand for (a thigh's capsule holds nearly all of the
 * thigh's skin), so a push out of them is held to the bar's crease; the skin's pass, out from behind what the
 * viewer sees, keeps a round's SLOPE alone (held to this as well, the part lies behind the skin more: 03's bob
 * at 87 frames of the long dance 2 points over the author's model where 32). */
static double frame_slope(void)
{
    return tan(PLUSH_QUALITY_BAR_CREASE_P99 / 2 * 3.14159265358979323846 / 180);
}
/* How far outside the body a pushed vertex ends, as a share of the cage's mean edge (the cage itself
 * keeps a tenth of an edge: this is well inside that). */
#define MARGIN_SHARE 0.02
/* How deep behind the visible skin a bound vertex is pushed out from, as a share of the cage's mean edge: the
 * corners the blend cuts lie a few tenths of an edge deep; deeper, the cage went through, which no push
 * carries out smoothly. */
#define SKIN_REACH 0.5

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Whether rows r and s always move alike: the same rest place, the same bone skinning and the same binding to
 * the cage (a seam's two vertices, one per side): skinned alike, and every push moves them alike. */
static bool twins(const plush__soft_push *sp, size_t r, size_t s)
{
    const plush_pmx_vertex *a = &sp->sm->model->vertices[sp->sm->vertices[r]];
    const plush_pmx_vertex *b = &sp->sm->model->vertices[sp->sm->vertices[s]];
    const plush_proxy_binding *bd = sp->binding;
    if (memcmp(a->position, b->position, sizeof a->position) || memcmp(a->bones, b->bones, sizeof a->bones) ||
        memcmp(a->weights, b->weights, sizeof a->weights) || a->weight_type != b->weight_type || a->sdef != b->sdef ||
        memcmp(bd->triangles[r], bd->triangles[s], sizeof bd->triangles[r]) ||
        memcmp(bd->weights[r], bd->weights[s], sizeof bd->weights[r]))
        return false;
    return !bd->proxy_share || bd->proxy_share[r] == bd->proxy_share[s];
}

/* Each row's twin it moves with (sp->twin_of: the first row of those that always move alike, itself when it is
 * that one), found through a table keyed on the rest place. A model's seams give a third or more of a part's
 * vertices a twin: the push looks at and moves one of them and gives the others its moves. */
static bool find_twins(plush__soft_push *sp, plush_arena *arena)
{
    size_t count = sp->sm->count, size = 16;
    while (size < 2 * count)
        size *= 2;
    sp->twin_of = plush_arena_array(arena, count, sizeof *sp->twin_of);
    sp->weight = plush_arena_array(arena, count, sizeof *sp->weight);
    sp->twin_next = plush_arena_array(arena, count, sizeof *sp->twin_next);
    sp->alike = plush_arena_array(arena, count, sizeof *sp->alike);
    uint32_t *table = malloc(size * sizeof *table);
    if (!sp->twin_of || !sp->weight || !sp->twin_next || !sp->alike || !table) {
        free(table);
        return false;
    }
    for (size_t i = 0; i < size; i++)
        table[i] = UINT32_MAX;
    memset(sp->weight, 0, count * sizeof *sp->weight);
    memset(sp->twin_next, 0xff, count * sizeof *sp->twin_next);
    sp->twin_count = 0;
    for (size_t r = 0; r < count; r++) {
        const float *p = sp->sm->model->vertices[sp->sm->vertices[r]].position;
        uint32_t bits[3];
        memcpy(bits, p, sizeof bits);
        uint64_t h = (bits[0] * 0x9E3779B97F4A7C15ull) ^ (bits[1] * 0xC2B2AE3D27D4EB4Full) ^ (bits[2] * 0x165667B19E3779F9ull);
        size_t at = (size_t)(h ^ (h >> 29)) & (size - 1);
        sp->twin_of[r] = (uint32_t)r;
        for (; table[at] != UINT32_MAX; at = (at + 1) & (size - 1))
            if (twins(sp, table[at], r)) {
                sp->twin_of[r] = table[at];
                sp->twin_count++;
                break;
            }
        if (sp->twin_of[r] == r)
            table[at] = (uint32_t)r;
        else { /* r joins the front of its row's list */
            sp->twin_next[r] = sp->twin_next[sp->twin_of[r]];
            sp->twin_next[sp->twin_of[r]] = (uint32_t)r;
        }
        sp->weight[sp->twin_of[r]]++;
    }
    free(table);
    return true;
}

/* Each bound vertex's neighbours along the model's faces among the bound vertices, and the rest length to
 * each: rows r's are edge_other[edge_first[r] .. edge_first[r + 1]). A row with a twin has none: its twin has
 * its edges (to the neighbours' twins). */
static plush_status build_edges(plush__soft_push *sp, plush_arena *arena, plush_diag *diag)
{
    const plush_pmx_model *m = sp->sm->model;
    size_t count = sp->sm->count;
    int64_t *row = malloc((m->vertex_count ? m->vertex_count : 1) * sizeof *row);
    sp->edge_first = plush_arena_array(arena, count + 1, sizeof *sp->edge_first);
    if (!row || !sp->edge_first) {
        free(row);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    for (size_t v = 0; v < m->vertex_count; v++)
        row[v] = -1;
    for (size_t i = 0; i < count; i++)
        row[sp->sm->vertices[i]] = (int64_t)sp->twin_of[i];
    memset(sp->edge_first, 0, (count + 1) * sizeof *sp->edge_first);
    /* a row on an edge to a vertex no row is (left on its bones: the touch-up moves neither end of it) */
    sp->rim = plush_arena_array(arena, count ? count : 1, sizeof *sp->rim);
    if (!sp->rim) {
        free(row);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    memset(sp->rim, 0, count);
    for (size_t f = 0; f + 2 < m->index_count; f += 3)
        for (int k = 0; k < 3; k++) {
            uint32_t a = m->indices[f + k], b = m->indices[f + (k + 1) % 3];
            if (a < m->vertex_count && b < m->vertex_count && (row[a] < 0) != (row[b] < 0))
                sp->rim[row[a] < 0 ? row[b] : row[a]] = 1;
        }
    /* twice over the faces: count each row's neighbours, then fill them in */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t f = 0; f + 2 < m->index_count; f += 3)
            for (int k = 0; k < 3; k++) {
                uint32_t a = m->indices[f + k], b = m->indices[f + (k + 1) % 3];
                if (a >= m->vertex_count || b >= m->vertex_count || a == b || row[a] < 0 || row[b] < 0)
                    continue;
                if (pass == 0) {
                    sp->edge_first[row[a] + 1]++, sp->edge_first[row[b] + 1]++;
                    continue;
                }
                sp->edge_other[sp->edge_first[row[a] + 1]++] = (uint32_t)row[b];
                sp->edge_other[sp->edge_first[row[b] + 1]++] = (uint32_t)row[a];
            }
        if (pass == 1)
            break;
        for (size_t i = 0; i < count; i++)
            sp->edge_first[i + 1] += sp->edge_first[i];
        size_t n = sp->edge_first[count];
        sp->edge_other = plush_arena_array(arena, n ? n : 1, sizeof *sp->edge_other);
        sp->edge_rest = plush_arena_array(arena, n ? n : 1, sizeof *sp->edge_rest);
        if (!sp->edge_other || !sp->edge_rest) {
            free(row);
            return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        }
        /* back to each row's start: the fill pass moves them on to the next row's */
        memmove(sp->edge_first + 1, sp->edge_first, count * sizeof *sp->edge_first);
        sp->edge_first[0] = 0;
    }
    free(row);
    /* An edge of two faces comes twice: keep each neighbour once, and drop the ones at the same place. */
    size_t out = 0, from = 0;
    for (size_t i = 0; i < count; i++) {
        size_t to = sp->edge_first[i + 1];
        qsort(sp->edge_other + from, to - from, sizeof *sp->edge_other, cmp_u32);
        sp->edge_first[i] = out;
        const float *p = m->vertices[sp->sm->vertices[i]].position;
        for (size_t e = from; e < to; e++) {
            uint32_t o = sp->edge_other[e];
            if (e > from && o == sp->edge_other[e - 1])
                continue;
            const float *q = m->vertices[sp->sm->vertices[o]].position;
            double d = sqrt(((double)p[0] - q[0]) * ((double)p[0] - q[0]) + ((double)p[1] - q[1]) * ((double)p[1] - q[1]) +
                            ((double)p[2] - q[2]) * ((double)p[2] - q[2]));
            if (!(d > 0))
                continue;
            sp->edge_other[out] = o;
            sp->edge_rest[out++] = (float)d;
        }
        from = to;
    }
    sp->edge_first[count] = out;
    return PLUSH_OK;
}

/* The triangles that carry row r, and how much (sp->carry_*, from the binding's slots with a triangle and a
 * weight): into *t and *w, their count. */
static int carriers(const plush__soft_push *sp, size_t r, const int32_t **t, const float **w)
{
    *t = sp->carry_triangle[r];
    *w = sp->carry_weight[r];
    return sp->carry_count[r];
}

/* Whether the push looks at and moves row r: not a twin (its row stands for it), nor one left on bone skinning
 * (proxy share 0: no triangle moves it). */
static bool pushed_row(const plush__soft_push *sp, size_t r)
{
    return sp->twin_of[r] == r && !(sp->binding->proxy_share && !(sp->binding->proxy_share[r] > 0));
}

/* Each row's carrying triangles, and each triangle's rows (in increasing order): false when out of memory. */
static bool take_carriers(plush__soft_push *sp, plush_arena *arena)
{
    const plush_proxy_binding *b = sp->binding;
    size_t t = sp->triangle_count;
    sp->carried_first = plush_arena_array(arena, t + 1, sizeof *sp->carried_first);
    if (!sp->carried_first)
        return false;
    memset(sp->carried_first, 0, (t + 1) * sizeof *sp->carried_first);
    for (size_t r = 0; r < b->vertex_count; r++) {
        int n = 0;
        for (int j = 0; pushed_row(sp, r) && j < PLUSH_PROXY_INFLUENCES; j++)
            if (b->triangles[r][j] >= 0 && (size_t)b->triangles[r][j] < t && b->weights[r][j] > 0) {
                sp->carry_triangle[r][n] = b->triangles[r][j], sp->carry_weight[r][n++] = b->weights[r][j];
                sp->carried_first[b->triangles[r][j] + 1]++;
            }
        sp->carry_count[r] = (uint8_t)n;
    }
    for (size_t i = 0; i < t; i++)
        sp->carried_first[i + 1] += sp->carried_first[i];
    size_t total = sp->carried_first[t];
    sp->carried = plush_arena_array(arena, total ? total : 1, sizeof *sp->carried);
    if (!sp->carried)
        return false;
    /* filled through each triangle's start moved along, then the starts put back */
    for (size_t r = 0; r < b->vertex_count; r++)
        for (int j = 0; j < sp->carry_count[r]; j++)
            sp->carried[sp->carried_first[sp->carry_triangle[r][j]]++] = (uint32_t)r;
    memmove(sp->carried_first + 1, sp->carried_first, t * sizeof *sp->carried_first);
    sp->carried_first[0] = 0;
    return true;
}

plush_status plush__soft_push_init(plush__soft_push *sp, plush__soft_measure *sm, const plush_proxy_binding *binding,
                                   size_t triangle_count, double mean_edge, plush_arena *arena, plush_diag *diag)
{
    memset(sp, 0, sizeof *sp);
    if (!sm->wm || (!sm->body_count && !sm->skin) || !sm->count || !triangle_count || binding->vertex_count != sm->count)
        return PLUSH_OK;
    sp->sm = sm;
    sp->binding = binding;
    sp->triangle_count = triangle_count;
    sp->margin = MARGIN_SHARE * mean_edge;
    sp->frame_slope = frame_slope();
    size_t n = sm->count, t = triangle_count;
    sp->move = plush_arena_array(arena, n, sizeof *sp->move);
    sp->push = plush_arena_array(arena, n, sizeof *sp->push);
    sp->push_dir = plush_arena_array(arena, n, sizeof *sp->push_dir);
    sp->rows = plush_arena_array(arena, n, sizeof *sp->rows);
    sp->dirty = plush_arena_array(arena, n, sizeof *sp->dirty);
    sp->near = plush_arena_array(arena, n, sizeof *sp->near);
    sp->travel = plush_arena_array(arena, n, sizeof *sp->travel);
    sp->total = plush_arena_array(arena, n, sizeof *sp->total);
    sp->skin_clear = plush_arena_array(arena, n, sizeof *sp->skin_clear);
    sp->body_clear = plush_arena_array(arena, n, sizeof *sp->body_clear);
    sp->side = plush_arena_array(arena, n, sizeof *sp->side);
    sp->side_body = plush_arena_array(arena, n, sizeof *sp->side_body);
    sp->side_frame = plush_arena_array(arena, n, sizeof *sp->side_frame);
    sp->slack = mean_edge;
    sp->sum = plush_arena_array(arena, t, sizeof *sp->sum);
    sp->step = plush_arena_array(arena, t, sizeof *sp->step);
    sp->offset = plush_arena_array(arena, t, sizeof *sp->offset);
    sp->kept = plush_arena_array(arena, t, sizeof *sp->kept);
    sp->last = plush_arena_array(arena, t, sizeof *sp->last);
    sp->start = plush_arena_array(arena, t, sizeof *sp->start);
    sp->since = plush_arena_array(arena, t, sizeof *sp->since);
    sp->in = plush_arena_array(arena, n, sizeof *sp->in);
    sp->listed = plush_arena_array(arena, n, sizeof *sp->listed);
    sp->carry_count = plush_arena_array(arena, n, sizeof *sp->carry_count);
    sp->carry_triangle = plush_arena_array(arena, n, sizeof *sp->carry_triangle);
    sp->carry_weight = plush_arena_array(arena, n, sizeof *sp->carry_weight);
    sp->mark = plush_arena_array(arena, n, sizeof *sp->mark);
    sp->scale = plush_arena_array(arena, t, sizeof *sp->scale);
    sp->moved = plush_arena_array(arena, t, sizeof *sp->moved);
    sp->held = plush_arena_array(arena, t, sizeof *sp->held);
    sp->stopped = plush_arena_array(arena, t, sizeof *sp->stopped);
    sp->was_in = plush_arena_array(arena, n, sizeof *sp->was_in);
    sp->push_was = plush_arena_array(arena, n, sizeof *sp->push_was);
    sp->dir_was = plush_arena_array(arena, n, sizeof *sp->dir_was);
    sp->step_was = plush_arena_array(arena, t, sizeof *sp->step_was);
    sp->scale_was = plush_arena_array(arena, t, sizeof *sp->scale_was);
    sp->moved_was = plush_arena_array(arena, t, sizeof *sp->moved_was);
    sp->bump = plush_arena_array(arena, n, sizeof *sp->bump);
    sp->bump_dir = plush_arena_array(arena, n, sizeof *sp->bump_dir);
    sp->queue = plush_arena_array(arena, 2 * n, sizeof *sp->queue);
    sp->bumped_by = plush_arena_array(arena, n, sizeof *sp->bumped_by);
    sp->bumped = plush_arena_array(arena, n, sizeof *sp->bumped);
    sp->seen = plush_arena_array(arena, n, sizeof *sp->seen);
    sp->bump_sum = plush_arena_array(arena, n, sizeof *sp->bump_sum);
    sp->bump_state = plush_arena_array(arena, n, sizeof *sp->bump_state);
    sp->bump_flag = plush_arena_array(arena, n, sizeof *sp->bump_flag);
    sp->seed_dist = plush_arena_array(arena, n, sizeof *sp->seed_dist);
    if (!sp->bump || !sp->bump_dir || !sp->queue || !sp->bumped_by ||
        !sp->bumped || !sp->seen || !sp->seed_dist || !sp->bump_sum || !sp->bump_state || !sp->bump_flag || !sp->move ||
        !sp->push || !sp->push_dir || !sp->rows || !sp->dirty || !sp->near || !sp->travel || !sp->total ||
        !sp->skin_clear || !sp->body_clear || !sp->side || !sp->side_body || !sp->side_frame || !sp->sum ||
        !sp->step || !sp->offset ||
        !sp->kept || !sp->last || !sp->start || !sp->since || !sp->scale || !sp->moved || !sp->held || !sp->stopped ||
        !sp->was_in || !sp->push_was ||
        !sp->dir_was || !sp->step_was || !sp->scale_was || !sp->moved_was || !sp->in || !sp->listed ||
        !sp->carry_count || !sp->carry_triangle || !sp->carry_weight || !sp->mark || !find_twins(sp, arena) ||
        !take_carriers(sp, arena))
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    memset(sp->move, 0, n * sizeof *sp->move);
    memset(sp->bump, 0, n * sizeof *sp->bump);
    memset(sp->bump_dir, 0, n * sizeof *sp->bump_dir);
    memset(sp->bump_sum, 0, n * sizeof *sp->bump_sum);
    memset(sp->bump_state, 0, n);
    memset(sp->bump_flag, 0, n);
    for (size_t r = 0; r < n; r++)
        sp->seed_dist[r] = -1;
    memset(sp->listed, 0, n);
    memset(sp->mark, 0, n);
    for (size_t r = 0; r < n; r++)
        sp->side_body[r] = -1;
    return build_edges(sp, arena, diag);
}

/* The strain's pass: where row r's edges beyond the surface bar's strain pull it (each by half of what it has
 * beyond STRAIN_LIMIT, toward the other end; a squeezed one by half of what it lacks of 1 / STRAIN_LIMIT, away
 * from it), as the length of the pull and its direction into dir; 0 when none of its edges is beyond the bar
 * either way. An edge's other end is pulled by the same edge the other way, so a triangle
 * carrying both ends alike is not moved by it and one carrying one end more than the other is. */
static double strain_pull(const plush__soft_push *sp, const float (*positions)[3], size_t r, float dir[3])
{
    const uint32_t *vert = sp->sm->vertices;
    const float *p = positions[vert[r]];
    double pull[3] = {0, 0, 0};
    bool beyond = false;
    for (size_t e = sp->edge_first[r]; e < sp->edge_first[r + 1]; e++) {
        const float *q = positions[vert[sp->edge_other[e]]];
        double d[3], len = 0, rest = sp->edge_rest[e];
        for (int k = 0; k < 3; k++)
            d[k] = (double)q[k] - p[k], len += d[k] * d[k];
        len = sqrt(len);
        /* stretched: pulled toward the other end; squeezed: pushed away from it */
        double over = len > STRAIN_LIMIT * rest ? len - STRAIN_LIMIT * rest
                      : len < rest / STRAIN_LIMIT && len > 0 ? len - rest / STRAIN_LIMIT
                                                               : 0;
        if (over == 0)
            continue;
        beyond = beyond || len > PLUSH_QUALITY_BAR_STRAIN_P999 * rest || len * PLUSH_QUALITY_BAR_STRAIN_P999 < rest;
        for (int k = 0; k < 3; k++)
            pull[k] += 0.5 * over * d[k] / len;
    }
    double len = sqrt(pull[0] * pull[0] + pull[1] * pull[1] + pull[2] * pull[2]);
    if (!beyond || !(len > 0) || !isfinite(len))
        return 0;
    for (int k = 0; k < 3; k++)
        dir[k] = (float)(pull[k] / len);
    return len;
}

/* Whether the strain's pass has work: some edge among the bound rows beyond the surface bar's strain, or more of
 * them squeezed under its inverse than half the share the bar allows outside (a few squeezed edges, a braid's
 * root where the cage folds, are within the bar, and no translation parts them: the pass would look at every row
 * for nothing at most frames). */
static bool any_beyond(const plush__soft_push *sp, const float (*positions)[3])
{
    const uint32_t *vert = sp->sm->vertices;
    double bar = PLUSH_QUALITY_BAR_STRAIN_P999 * PLUSH_QUALITY_BAR_STRAIN_P999;
    size_t squeezed = 0, most = (size_t)(0.5 * PLUSH_QUALITY_BAR_OUTSIDE * 0.5 * (double)sp->edge_first[sp->sm->count]);
    for (size_t r = 0; r < sp->sm->count; r++) {
        const float *p = positions[vert[r]];
        for (size_t e = sp->edge_first[r]; e < sp->edge_first[r + 1]; e++) {
            if (sp->edge_other[e] < r)
                continue;
            const float *q = positions[vert[sp->edge_other[e]]];
            double len2 = 0, rest = sp->edge_rest[e];
            for (int k = 0; k < 3; k++)
                len2 += ((double)q[k] - p[k]) * ((double)q[k] - p[k]);
            if (len2 > bar * rest * rest)
                return true;
            squeezed += len2 * bar < rest * rest;
        }
    }
    return squeezed > most;
}

/* Which of row r's set searches the skin for it this frame: the one whose turn for a full search it is (r's own
 * or a twin's: each used to search at its own), else r. */
static size_t skin_turn_of(const plush__soft_push *sp, size_t r)
{
    if (plush_quality_skin_turn(sp->sm->skin, r))
        return r;
    for (uint32_t t = sp->twin_next[r]; t != UINT32_MAX; t = sp->twin_next[t])
        if (plush_quality_skin_turn(sp->sm->skin, t))
            return t;
    return r;
}

/* The body's pass: row r at p lies d into the margin of body `deepest` (of the measure's), whose nearest way out
 * is dir. Where that is less than half the body's thickness deep, the side it lies on is kept, and true. Deeper,
 * the nearest way out is more likely the far side (a hem a shin went through between two frames: pushed that
 * way it goes through the limb, which the `through` figure counts): the row goes back out the side it lay on at
 * this frame or the one before, along that side's normal to the margin there (d and dir are set so), and true;
 * false (in, and pushed nowhere) when that side is not known or does not lead out. */
static bool body_side(plush__soft_push *sp, size_t r, const float p[3], size_t deepest, double *d, float dir[3])
{
    const plush__soft_measure *sm = sp->sm;
    if (deepest >= sm->body_count)
        return true;
    const plush_pmx_rigid_body *rb = &sm->model->rigid_bodies[sm->bodies[deepest]];
    const float *t = sm->poses[deepest];
    double thickness = plush__rigid_shape_thickness(rb);
    if (!(*d > sp->margin + 0.5 * thickness)) {
        for (int i = 0; i < 3; i++) /* the way out into the body's frame (t's columns are its axes) */
            sp->side[r][i] = (float)(t[4 * i] * dir[0] + t[4 * i + 1] * dir[1] + t[4 * i + 2] * dir[2]);
        sp->side_body[r] = (int32_t)deepest;
        sp->side_frame[r] = sp->frame;
        return true;
    }
    if (sp->side_body[r] != (int32_t)deepest || sp->side_frame[r] + 1 < sp->frame)
        return false;
    const float *side = sp->side[r];
    double local[3];
    plush__rigid_local(t, p, local);
    double travel = plush__rigid_way_out(rb, local, side, sp->margin);
    if (!(travel > 0))
        return false;
    *d = travel;
    for (int k = 0; k < 3; k++)
        dir[k] = (float)(t[k] * side[0] + t[4 + k] * side[1] + t[8 + k] * side[2]);
    return true;
}

/* Where rows candidates[from .. to) are (of sp->rows, or with `all` every row from .. to): each one's sp->in
 * (in a body or, in the skin's pass, behind the skin; in the skin's pass a row in a body counts as in but pushes
 * nothing: a round trades neither for the other; in the strain's pass, an edge beyond the bar, and a row in a
 * body or behind the skin counts as in, at 2, and pulls nothing) and its push out (or pull), sp->push along
 * sp->push_dir (0 when none). Touches only
 * those rows' state, so two ranges may be looked at on two threads (with `all`, from a multiple of the box
 * run). */
static void look_rows(plush__soft_push *sp, const float (*positions)[3], size_t from, size_t to, bool all)
{
    const plush__soft_measure *sm = sp->sm;
    uint64_t box = UINT64_MAX;
    for (size_t c = from; c < to; c++) {
        size_t r = all ? c : sp->rows[c];
        float dir[3];
        /* the first look finds the bodies near each row (of those near its run's box: the others lie beyond
         * the slack of every row in it); a row moved less than the slack since asks only them */
        if (all && c % PLUSH__SOFT_MEASURE_BOX_RUN == 0)
            box = plush__soft_measure_box_mask(sm, positions, c,
                                               sm->count - c < PLUSH__SOFT_MEASURE_BOX_RUN ? sm->count - c
                                                                                           : PLUSH__SOFT_MEASURE_BOX_RUN,
                                               sp->margin + sp->slack);
        if (!sp->carry_count[r]) { /* moved as its twin is, or by no triangle: never looked at */
            sp->in[r] = 0;
            sp->push[r] = 0;
            continue;
        }
        const float *p = positions[sm->vertices[r]];
        uint64_t near = all ? box : sp->travel[r] > sp->slack ? UINT64_MAX : sp->near[r];
        /* a row that has moved less than its room since it was found outside every body's margin still is
         * (the bodies hold still within the frame): 0 without asking; its mask stays the one found then, as
         * good as long as it has moved less than the slack */
        double d = 0;
        size_t deepest = SIZE_MAX;
        dir[0] = dir[1] = dir[2] = 0;
        if (!(sp->travel[r] < sp->body_clear[r])) {
            /* the room is known where every body is looked at, or those left out lie beyond the slack (the
             * first look's box) */
            double room = 0;
            bool whole = all || near == UINT64_MAX;
            d = plush__soft_measure_deepest_near(sm, r, p, sp->margin, dir, near, sp->slack, all ? &sp->near[r] : NULL,
                                                 whole ? &room : NULL, &deepest);
            if (whole) { /* the travel is summed in float, and the positions moved in float: a thousandth of the
                          * slack spare */
                room = (all && room > sp->slack ? sp->slack : room) - 1e-3 * sp->slack;
                sp->body_clear[r] = room > 0 ? (float)(sp->travel[r] + room) : 0.0f;
            }
        }
        /* The skin's pass: behind the visible skin, by less than SKIN_REACH of a cage edge (deeper, the cage
         * itself went through), and not in a body (the body's pass had those); a row in a body counts as in,
         * so a round that leaves more rows in a body or behind the skin than it found is undone. The skin does
         * not move within a frame: a row found clear of it by more than it has travelled since is still
         * clear. One a round moved further is searched for anew, not answered from the triangle nearest it
         * before: a push carries it past that triangle, and another may lie nearer (03's bob, its locks pushed
         * along her scalp: on a made-up dance's first 300 frames 0.65% of it behind the skin so, 0.17% now). */
        bool in_body = false;
        if (sp->pass != PASS_BODY) {
            in_body = d > 0;
            d = in_body ? 0 : d;
            if (sm->skin && !in_body && (all || sp->skin_clear[r] <= sp->travel[r])) {
                float out[3];
                double behind = plush_quality_skin_depth(sm->skin, 0, skin_turn_of(sp, r), p, sp->margin,
                                                         SKIN_REACH * sp->slack, !all, out);
                sp->skin_clear[r] = (float)(behind > 0 ? sp->travel[r] : sp->travel[r] - behind);
                if (behind > 0) {
                    d = behind;
                    memcpy(dir, out, sizeof out);
                }
            }
        }
        /* The strain's pass: a row in a body or behind the skin counts as in and pushes nothing (a round that
         * stretches back into one is undone); any other row with an edge beyond the bar is pulled along its
         * edges back to STRAIN_LIMIT. */
        if (sp->pass == PASS_STRAIN) {
            in_body = in_body || d > 0;
            d = in_body ? 0 : strain_pull(sp, positions, r, dir);
        }
        bool through = sp->pass == PASS_BODY && d > 0 && !body_side(sp, r, p, deepest, &d, dir);
        bool pushes = d > 0 && !through;
        sp->in[r] = sp->pass == PASS_STRAIN && in_body ? 2 : in_body || pushes || through;
        sp->push[r] = pushes ? d : 0;
        memcpy(sp->push_dir[r], dir, sizeof dir);
    }
}

typedef struct look_job {
    plush__soft_push *sp;
    const float (*positions)[3];
} look_job;

static void look_part(void *ctx, size_t from, size_t to)
{
    look_job *j = ctx;
    look_rows(j->sp, j->positions, from, to, true);
}

/* The skin's pass looks at this many rows or more first on two threads: its searches of the skin are most of a
 * frame's look (0.85 of 1.08 ms a frame on Alicia's hair); the body's is cheaper than a thread's start. */
enum { LOOK_TWO_THREADS = 512 };

/* Each triangle's step: the mean push of the rows it carries that are in a body (or, in the skin's pass, behind
 * the skin), weighted as it carries them (look_rows). The number of candidates in; of them, into *blocked,
 * those the strain's pass found in a body or behind the skin. */
static size_t mean_pushes(plush__soft_push *sp, const float (*positions)[3], size_t candidates, bool all,
                          size_t *blocked)
{
    if (all && sp->pass != PASS_BODY && sp->sm->skin && candidates >= LOOK_TWO_THREADS) {
        /* the halves split at a multiple of the box run, so each asks the boxes the whole would */
        size_t split = candidates / 2 / PLUSH__SOFT_MEASURE_BOX_RUN * PLUSH__SOFT_MEASURE_BOX_RUN;
        look_job job = {.sp = sp, .positions = positions};
        plush__two_parts(look_part, &job, split, candidates);
    } else {
        look_rows(sp, positions, 0, candidates, all);
    }
    memset(sp->sum, 0, sp->triangle_count * sizeof *sp->sum);
    size_t inside = 0;
    *blocked = 0;
    for (size_t c = 0; c < candidates; c++) {
        size_t r = all ? c : sp->rows[c];
        inside += sp->in[r] != 0 ? sp->weight[r] : 0;
        *blocked += sp->in[r] == 2 ? sp->weight[r] : 0;
        double d = sp->push[r];
        if (!(d > 0))
            continue;
        /* a row stands for its twins (they were as deep); in the strain's pass its pull already sums the edges
         * of each twin's side */
        double votes = sp->pass == PASS_STRAIN ? 1 : sp->weight[r];
        const float *dir = sp->push_dir[r];
        const int32_t *t;
        const float *w;
        for (int j = 0, n = carriers(sp, r, &t, &w); j < n; j++) {
            for (int k = 0; k < 3; k++)
                sp->sum[t[j]][k] += votes * w[j] * d * dir[k];
            sp->sum[t[j]][3] += votes * w[j];
        }
    }
    for (size_t t = 0; t < sp->triangle_count; t++) {
        bool moves = sp->sum[t][3] > 0 && !sp->stopped[t];
        for (int k = 0; k < 3; k++)
            sp->step[t][k] = moves ? (float)(sp->sum[t][k] / sp->sum[t][3]) : 0.0f;
        sp->moved[t] = moves;
        sp->scale[t] = 1.0f;
    }
    return inside;
}

/* The rows the steps move (into sp->rows, in increasing order, each marked 1 in sp->mark); their count. */
static size_t moved_rows(plush__soft_push *sp)
{
    size_t n = 0, rows = sp->binding->vertex_count;
    for (size_t t = 0; t < sp->triangle_count; t++)
        for (size_t i = sp->carried_first[t]; sp->moved[t] && i < sp->carried_first[t + 1]; i++)
            sp->mark[sp->carried[i]] = 1;
    for (size_t r = 0; r < rows; r++)
        if (sp->mark[r])
            sp->rows[n++] = (uint32_t)r;
    return n;
}

/* Of this round's rows, those a held triangle carries (into sp->dirty, in no order: each is looked at alike);
 * their count. */
static size_t held_rows(plush__soft_push *sp)
{
    size_t count = 0;
    for (size_t t = 0; t < sp->triangle_count; t++)
        for (size_t i = sp->carried_first[t]; sp->held[t] && i < sp->carried_first[t + 1]; i++) {
            uint32_t r = sp->carried[i];
            if (sp->mark[r] == 1)
                sp->mark[r] = 2, sp->dirty[count++] = r;
        }
    for (size_t i = 0; i < count; i++)
        sp->mark[sp->dirty[i]] = 1;
    return count;
}

/* Where the scaled steps move each of the listed rows, as the skin blends them (the hand-over share
 * included). */
static void blend_moves(plush__soft_push *sp, const uint32_t *list, size_t n)
{
    const plush_proxy_binding *b = sp->binding;
    for (size_t i = 0; i < n; i++) {
        uint32_t r = list[i];
        double u[3] = {0, 0, 0};
        const int32_t *t;
        const float *w;
        for (int j = 0, c = carriers(sp, r, &t, &w); j < c; j++)
            for (int k = 0; k < 3; k++)
                u[k] += (double)w[j] * sp->scale[t[j]] * sp->step[t[j]][k];
        double s = b->proxy_share ? b->proxy_share[r] : 1.0;
        for (int k = 0; k < 3; k++)
            sp->move[r][k] = (float)(u[k] * s);
    }
}

/* Whether the body's pass's rounds of this frame together, this round's move m of r against o included, tilt
 * the edge between rows r and o (rest length rest) within sp->frame_slope of it. */
static bool frame_tilt_within(const plush__soft_push *sp, uint32_t r, uint32_t o, const double m[3], double rest)
{
    double tilt = 0;
    for (int k = 0; k < 3; k++) {
        double d = (double)sp->total[r][k] - sp->total[o][k] + m[k];
        tilt += d * d;
    }
    return tilt <= sp->frame_slope * sp->frame_slope * rest * rest;
}

/* Marks row r's carrying triangles held for k halvings at least. */
static void hold_row(plush__soft_push *sp, uint32_t r, uint8_t k)
{
    const int32_t *t;
    const float *w;
    for (int j = 0, c = carriers(sp, r, &t, &w); j < c; j++)
        sp->held[t[j]] = sp->held[t[j]] > k ? sp->held[t[j]] : k;
}

/* Whether the edge between rows r and o (p, q their places, rest its length) stays within the guard's limits
 * moved by m. */
static bool edge_within(const plush__soft_push *sp, uint32_t r, uint32_t o, const float *p, const float *q,
                        const double m[3], double rest)
{
    double apart = m[0] * m[0] + m[1] * m[1] + m[2] * m[2];
    if (apart == 0)
        return true;
    if (!sp->warming &&
        !(apart <= SLOPE * SLOPE * rest * rest && (sp->pass != PASS_BODY || frame_tilt_within(sp, r, o, m, rest))))
        return false;
    double before = 0, after = 0;
    for (int k = 0; k < 3; k++) {
        double d = (double)p[k] - q[k];
        before += d * d;
        after += (d + m[k]) * (d + m[k]);
    }
    /* an edge well within the limits stays within them: its length changes by at most SLOPE */
    double lo = (1 / STRAIN_LIMIT + SLOPE) * rest, hi = (STRAIN_LIMIT - SLOPE) * rest;
    if (before >= lo * lo && before <= hi * hi)
        return true;
    double was = sqrt(before) / rest, now = sqrt(after) / rest;
    double most = was > STRAIN_LIMIT ? was : STRAIN_LIMIT;
    double least = was < 1 / STRAIN_LIMIT ? was : 1 / STRAIN_LIMIT;
    return now <= most && now >= least;
}

/* Marks in sp->held the triangles moving an edge of a listed row beyond the guard's limits; the number of
 * such edges. The test is the same from either end (the ends' moves and positions enter it as differences),
 * so an edge between two listed rows is looked at once, from its lower row. */
static size_t guard_edges(plush__soft_push *sp, const float (*positions)[3], const uint32_t *list, size_t n)
{
    const uint32_t *vert = sp->sm->vertices;
    memset(sp->held, 0, sp->triangle_count);
    for (size_t i = 0; i < n; i++)
        sp->listed[list[i]] = 1;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t r = list[i];
        const float *p = positions[vert[r]];
        for (size_t e = sp->edge_first[r]; e < sp->edge_first[r + 1]; e++) {
            uint32_t o = sp->edge_other[e];
            if (o < r && sp->listed[o])
                continue; /* looked at from o */
            double m[3], rest = sp->edge_rest[e];
            for (int k = 0; k < 3; k++)
                m[k] = (double)sp->move[r][k] - sp->move[o][k];
            const float *q = positions[vert[o]];
            if (edge_within(sp, r, o, p, q, m, rest))
                continue;
            bad++;
            /* how many halvings of its triangles would bring it within the limits, its move taken to halve
             * with them (GUARD_HALVINGS + 1: none would) */
            uint8_t k = 1;
            for (double a = 0.5; k <= GUARD_HALVINGS; k++, a *= 0.5) {
                double half[3] = {a * m[0], a * m[1], a * m[2]};
                if (edge_within(sp, r, o, p, q, half, rest))
                    break;
            }
            hold_row(sp, r, k);
            hold_row(sp, o, k);
        }
    }
    for (size_t i = 0; i < n; i++)
        sp->listed[list[i]] = 0;
    return bad;
}

/* The guard over the steps of the n rows in sp->rows (moved_rows): blends their moves (sp->move) and halves the
 * steps' shares (sp->scale) of the triangles that move an edge beyond its limits, looking again only at the rows
 * those triangles carry, until none does or each such triangle is past GUARD_HALVINGS halvings (then still). */
static void guard_steps(plush__soft_push *sp, const float (*positions)[3], size_t n)
{
    const float least = ldexpf(1.0f, -GUARD_HALVINGS); /* the least share of its step a held triangle keeps */
    const uint32_t *list = sp->rows;
    size_t count = n;
    for (int g = 0;; g++) {
        blend_moves(sp, list, count);
        if (!guard_edges(sp, positions, list, count))
            break;
        /* each held triangle halved as often as its edges that broke a limit need, nothing once past
         * GUARD_HALVINGS halvings in all */
        for (size_t t = 0; t < sp->triangle_count; t++)
            if (sp->held[t]) {
                float share = ldexpf(sp->scale[t], -(int)sp->held[t]);
                sp->scale[t] = g < GUARD_HALVINGS && share >= least ? share : 0.0f;
            }
        list = sp->dirty;
        count = held_rows(sp);
        if (g == GUARD_HALVINGS) {
            blend_moves(sp, list, count);
            break;
        }
    }
}

/* The frame's pushing starts where the frame before's ended (a warm start): each triangle's offset after that
 * frame's passes, less how far a surface falls under the world's gravity from the frame after the rounds last
 * moved that triangle (sp->fall, g dt^2; sp->since, the frames since: none in the first frame after the push, then
 * g dt^2, 2 g dt^2 ..., (k - 1) g dt^2 in the k-th, a free fall a frame late; a step of h frames falls h times as
 * far as a whole frame at the same time since, so stepping by fractions falls as far as by whole frames). So a
 * surface a limb pushed out and left comes back onto its cage as it would fall back, over a few frames,
 * where a push started afresh each frame put it back at once and out again the next (a hem round a dancing leg,
 * moved about half as much as it moves from one frame to the next: docs/measured.md, "Jitter"); one the rounds
 * push every frame stays where they left it (falling from the frame of the push, it went back into the body a
 * twentieth of a unit each frame and was pushed out again: Alicia's hair hanging still crept off her scalp,
 * p99.9 strain 1.10 -> 1.22 over 120 frames). The whole start is scaled alike so that it tilts no edge more than
 * the frame's slope, and the body's rounds after it count its tilt toward theirs; the guard holds it to the
 * strain's limits. Whether it moved any row. */
static bool warm_start(plush__soft_push *sp, float (*positions)[3])
{
    bool any = false;
    for (size_t t = 0; t < sp->triangle_count; t++) {
        const float *o = sp->last[t];
        double len = sqrt((double)o[0] * o[0] + (double)o[1] * o[1] + (double)o[2] * o[2]);
        double drop = sp->fall * sp->since[t] * sp->advance, keep = len > drop ? 1 - drop / len : 0;
        bool moves = false;
        for (int k = 0; k < 3; k++) {
            sp->step[t][k] = (float)(keep * o[k]);
            moves = moves || sp->step[t][k] != 0;
        }
        sp->moved[t] = moves;
        sp->scale[t] = 1.0f;
        any = any || moves;
    }
    if (!any)
        return false;
    sp->pass = PASS_BODY; /* its tilt counts toward the body's pass's over the frame */
    size_t n = moved_rows(sp);
    blend_moves(sp, sp->rows, n);
    double most = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t r = sp->rows[i];
        for (size_t e = sp->edge_first[r]; e < sp->edge_first[r + 1]; e++) {
            uint32_t o = sp->edge_other[e];
            double a = 0;
            for (int k = 0; k < 3; k++) {
                double x = (double)sp->move[r][k] - sp->move[o][k];
                a += x * x;
            }
            most = fmax(most, sqrt(a) / sp->edge_rest[e]);
        }
    }
    if (most > sp->frame_slope)
        for (size_t t = 0; t < sp->triangle_count; t++)
            for (int k = 0; k < 3; k++)
                sp->step[t][k] *= (float)(sp->frame_slope / most);
    sp->warming = true;
    guard_steps(sp, (const float(*)[3])positions, n);
    sp->warming = false;
    for (size_t t = 0; t < sp->triangle_count; t++)
        for (int k = 0; k < 3; k++)
            sp->offset[t][k] = sp->scale[t] * sp->step[t][k];
    for (size_t i = 0; i < n; i++) {
        uint32_t r = sp->rows[i];
        float *p = positions[sp->sm->vertices[r]], *m = sp->move[r];
        sp->travel[r] += sqrtf(m[0] * m[0] + m[1] * m[1] + m[2] * m[2]);
        for (int k = 0; k < 3; k++) {
            p[k] += m[k];
            sp->total[r][k] += m[k];
            m[k] = 0;
        }
        sp->mark[r] = 0;
    }
    return true;
}

/* One pass of rounds (sp->pass), adding to sp->offset and moving the rows in
 * positions; whether it pushed. */
static bool push_rounds(plush__soft_push *sp, float (*positions)[3])
{
    /* the first round looks at every bound vertex; later ones at those the round before moved (the others
     * are where they were, and out) */
    size_t blocked_after = 0;
    memset(sp->stopped, 0, sp->triangle_count);
    size_t inside = mean_pushes(sp, (const float(*)[3])positions, sp->sm->count, true, &blocked_after);
    bool pushed = false;
    int stalled = 0; /* rounds in a row that brought no row out */
    for (int round = 0; round < ROUNDS && inside; round++) {
        size_t n = moved_rows(sp), before = 0, blocked = 0;
        /* Each halving changes only the moves of the rows the held triangles carry, so only their edges are
         * looked at again: every other edge was within the limits and still is. */
        guard_steps(sp, (const float(*)[3])positions, n);
        for (size_t i = 0; i < n; i++) {
            sp->mark[sp->rows[i]] = 0;
            sp->was_in[sp->rows[i]] = sp->in[sp->rows[i]];
            sp->push_was[sp->rows[i]] = sp->push[sp->rows[i]];
            memcpy(sp->dir_was[sp->rows[i]], sp->push_dir[sp->rows[i]], sizeof *sp->dir_was);
            before += sp->in[sp->rows[i]] != 0 ? sp->weight[sp->rows[i]] : 0;
            blocked += sp->in[sp->rows[i]] == 2 ? sp->weight[sp->rows[i]] : 0;
        }
        memcpy(sp->kept, sp->offset, sp->triangle_count * sizeof *sp->kept);
        for (size_t t = 0; t < sp->triangle_count; t++)
            for (int k = 0; k < 3; k++)
                sp->offset[t][k] += sp->scale[t] * sp->step[t][k];
        for (size_t i = 0; i < n; i++) {
            float *p = positions[sp->sm->vertices[sp->rows[i]]], *m = sp->move[sp->rows[i]];
            sp->travel[sp->rows[i]] += sqrtf(m[0] * m[0] + m[1] * m[1] + m[2] * m[2]);
            for (int k = 0; k < 3; k++) {
                float moved = p[k] + m[k];
                m[k] = p[k]; /* kept to undo the round with */
                p[k] = moved;
            }
        }
        memcpy(sp->step_was, sp->step, sp->triangle_count * sizeof *sp->step_was);
        memcpy(sp->scale_was, sp->scale, sp->triangle_count * sizeof *sp->scale_was);
        memcpy(sp->moved_was, sp->moved, sp->triangle_count);
        /* the rows this round moved, where they are now (and the next round's steps) */
        size_t after = mean_pushes(sp, (const float(*)[3])positions, n, false, &blocked_after);
        /* a round that leaves more of them in a body than it found (pushed into another limb) is undone; in the
         * strain's pass, also one that leaves more of them in a body or behind the skin, whatever it pulled back */
        bool undo = after > before || blocked_after > blocked;
        for (size_t i = 0; i < n; i++) {
            float *p = positions[sp->sm->vertices[sp->rows[i]]], *m = sp->move[sp->rows[i]];
            if (undo) /* back where it was: the room found where it went says nothing here */
                sp->body_clear[sp->rows[i]] = 0, sp->skin_clear[sp->rows[i]] = 0;
            float *total = sp->total[sp->rows[i]];
            for (int k = 0; k < 3; k++) {
                total[k] += undo ? 0.0f : p[k] - m[k];
                p[k] = undo ? m[k] : p[k];
                m[k] = 0;
            }
        }
        if (undo) {
            memcpy(sp->offset, sp->kept, sp->triangle_count * sizeof *sp->offset);
            /* the triangles that moved a row in (into a body; in the skin's and the strain's passes, or behind
             * the skin) move no more this pass; the others take the round again from where they were, their rows
             * as they were */
            size_t stopped = 0;
            for (size_t i = 0; i < n; i++) {
                uint32_t r = sp->rows[i];
                bool went_in = sp->pass == PASS_STRAIN ? sp->in[r] == 2 && sp->was_in[r] != 2
                                                       : sp->in[r] != 0 && !sp->was_in[r];
                const int32_t *t;
                const float *w;
                for (int j = 0, c = went_in ? carriers(sp, r, &t, &w) : 0; j < c; j++)
                    if (sp->moved_was[t[j]] && sp->scale_was[t[j]] > 0 && !sp->stopped[t[j]])
                        sp->stopped[t[j]] = 1, stopped++;
                sp->in[r] = sp->was_in[r];
                sp->push[r] = sp->push_was[r];
                memcpy(sp->push_dir[r], sp->dir_was[r], sizeof *sp->push_dir);
            }
            if (!stopped)
                break;
            for (size_t t = 0; t < sp->triangle_count; t++) {
                for (int k = 0; k < 3; k++)
                    sp->step[t][k] = sp->stopped[t] ? 0.0f : sp->step_was[t][k];
                sp->moved[t] = sp->moved_was[t] && !sp->stopped[t];
                sp->scale[t] = 1.0f;
            }
            continue;
        }
        pushed = true;
        /* Two rounds in a row of the body's pass that bring none of its rows out end it: what is left inside is
         * what the guard holds in, and the rounds after them mostly creep those rows deeper out by the guard's
         * halvings (Alicia's hair: 6.6 rounds a frame, 430 of 600 frames at the cap, the last rounds bringing no
         * row out). One such round was too few: a round that frees none may leave a row a round short of out
         * (the cape, 3 of the long dance's first 120 frames 2 points over the author's behind the skin). */
        stalled = after >= before ? stalled + 1 : 0;
        if (sp->pass == PASS_BODY && stalled == 2)
            break;
        inside = after;
    }
    return pushed;
}

/* The touch-up: rows the skin's pass left behind the visible skin (their triangles carry rows that go other ways,
 * and a triangle's step is their mean) are moved out on their own, each to the margin in front of the skin along
 * the skin's normal, and the rows around it by less as they lie further from it along the surface's edges at rest:
 * a smooth bump (1 - (d / R)^2)^2 of the row's depth D, whose sides tilt by at most 1.54 D / R, held to the frame's
 * slope (sp->frame_slope: it bends the surface by about the crease bar at most). Where bumps meet, a row moves by
 * the largest of them (the largest of functions that tilt so tilts no more), along their directions' mean weighted
 * by the bumps, scaled by how far that mean is from nothing: two bumps pushing opposite ways (a skirt between two
 * legs) cancel where they meet instead of parting the surface there. A guard then holds every edge within
 * STRAIN_LIMIT and the moves of its two ends within the slope of each other (below). Rows deeper than the skin's
 * pass reaches are left (the cage went through there), as are rows on an edge to a vertex no row is (it stays on
 * its bones). A row stands for its twins: they take its move at the frame's end. The candidates are
 * sp->queue[0 .. seeds); needs sp->bump_state, sp->bump_flag, sp->bump, sp->bump_dir, sp->bump_sum zero and
 * sp->seed_dist negative, and leaves them so but for the rows it moves: into sp->bumped, each to move by
 * sp->bump_dir (and sp->bump and sp->bump_state not zero); their count. */
static size_t touch_up(plush__soft_push *sp, const float (*positions)[3], size_t seeds)
{
    const plush__soft_measure *sm = sp->sm;
    size_t n = sm->count, bumped = 0;
    uint32_t *ring = sp->queue + seeds; /* the seeds stay at the queue's start; the spread uses the rest */
    size_t room = 2 * n - seeds;
    double bend = sp->frame_slope, tilt = 1.54 / bend; /* R / D: (1 - x^2)^2 falls at most 1.54 a unit of x */
    for (size_t i = 0; i < seeds; i++) {
        uint32_t s = sp->queue[i];
        float out[3];
        double depth = plush_quality_skin_depth(sm->skin, 0, skin_turn_of(sp, s), positions[sm->vertices[s]],
                                                sp->margin, SKIN_REACH * sp->slack, false, out);
        if (!(depth > 0) || !room || sp->rim[s])
            continue;
        double reach = tilt * depth;
        /* the rows within reach along the edges (shortest paths, relaxed until none shortens) */
        size_t head = 0, tail = 0, queued = 1, seen = 0;
        ring[tail++ % room] = s;
        sp->seed_dist[s] = 0;
        sp->seen[seen++] = s;
        while (queued) {
            uint32_t r = ring[head++ % room];
            queued--;
            sp->bump_flag[r] = 0;
            /* the edges join rows that stand for their twins (build_edges) */
            for (size_t e = sp->edge_first[r]; e < sp->edge_first[r + 1]; e++) {
                uint32_t o = sp->edge_other[e];
                float d = sp->seed_dist[r] + sp->edge_rest[e];
                if (!sp->carry_count[o] || sp->rim[o] || !(d < reach) ||
                    (sp->seed_dist[o] >= 0 && !(d < sp->seed_dist[o])))
                    continue;
                if (sp->seed_dist[o] < 0)
                    sp->seen[seen++] = o;
                sp->seed_dist[o] = d;
                if (!sp->bump_flag[o] && queued < room) { /* a row in the ring once at most */
                    sp->bump_flag[o] = 1;
                    ring[tail++ % room] = o;
                    queued++;
                }
            }
        }
        for (size_t j = 0; j < seen; j++) {
            uint32_t r = sp->seen[j];
            double x = sp->seed_dist[r] / reach, k = (1 - x * x) * (1 - x * x);
            sp->seed_dist[r] = -1;
            sp->bump_flag[r] = 0;
            if (!(k > 0))
                continue;
            if (!sp->bump_state[r]) {
                sp->bump_state[r] = 1;
                sp->bumped[bumped++] = r;
            }
            sp->bump[r] = fmaxf(sp->bump[r], (float)(k * depth));
            sp->bump_sum[r] += (float)(k * depth);
            for (int c = 0; c < 3; c++)
                sp->bump_dir[r][c] += (float)(k * depth * out[c]);
        }
    }
    for (size_t j = 0; j < bumped; j++) {
        uint32_t r = sp->bumped[j];
        float scale = sp->bump[r] / sp->bump_sum[r];
        for (int c = 0; c < 3; c++)
            sp->bump_dir[r][c] *= scale;
        sp->bump_sum[r] = 0;
    }
    /* The guard: where the bumps' directions turn (the skin curving under a collar) two rows may move by different
     * amounts or ways. Both ends of an edge the moves take beyond STRAIN_LIMIT (and further than it was), or move
     * apart by more than the slope of its length, have their moves halved, each up to GUARD_HALVINGS times, then
     * dropped; until no edge is. (Held to the edge's turn instead, how far its ends' moves part along it let free,
     * twice as many frames of Luka's dress and trims came within the skin bar, but a layer under her dress showed
     * through it in small pale shards at her waist, which the skin figure, counting the dress's vertices, does not
     * see: docs/measured.md, "The touch-up's looks".) Each look halves or drops a move: an edge both of whose moves
     * are dropped lies where the passes before left it, within the limits, so each edge beyond them has a move
     * still to halve, and the looks end within GUARD_HALVINGS + 2 a moved row. A ripple through the bumps (a halved
     * row's edge to its neighbour now beyond, and so on) takes its looks: given up after a few (24), every move of
     * the frame dropped, Luka's dress and trims lay behind the skin at a frame's 80-100 rows, a few frames in a
     * hundred. Past that bound, which the looks cannot reach, every move of the frame would be dropped. */
    for (int look = 0;; look++) {
        size_t beyond = 0;
        for (size_t j = 0; j < bumped; j++) {
            uint32_t r = sp->bumped[j];
            const float *p = positions[sm->vertices[r]], *dp = sp->bump_dir[r];
            for (size_t e = sp->edge_first[r]; e < sp->edge_first[r + 1]; e++) {
                uint32_t o = sp->edge_other[e];
                const float *q = positions[sm->vertices[o]], *dq = sp->bump_dir[o];
                double was = 0, now = 0, apart = 0;
                for (int c = 0; c < 3; c++) {
                    double x = (double)q[c] - p[c], m = (double)dq[c] - dp[c];
                    double frame = m + (double)sp->bumped_by[o][c] - sp->bumped_by[r][c]; /* with earlier passes' */
                    was += x * x;
                    now += (x + m) * (x + m);
                    apart += frame * frame;
                }
                double rest = sp->edge_rest[e], most = STRAIN_LIMIT * rest, least = rest / STRAIN_LIMIT;
                if ((now > most * most && now > was) || (now < least * least && now < was) ||
                    apart > bend * bend * rest * rest) {
                    sp->bump_flag[r] = 1;
                    sp->bump_flag[o] = sp->bump_state[o] ? 1 : 0;
                    beyond++;
                }
            }
        }
        if (!beyond)
            break;
        bool give_up = (size_t)look >= bumped * (GUARD_HALVINGS + 2);
        for (size_t j = 0; j < bumped; j++) {
            uint32_t r = sp->bumped[j];
            if (!sp->bump_flag[r] && !give_up)
                continue;
            sp->bump_flag[r] = 0;
            bool drop = give_up || sp->bump_state[r] > GUARD_HALVINGS;
            sp->bump_state[r] += !drop;
            for (int c = 0; c < 3; c++)
                sp->bump_dir[r][c] = drop ? 0.0f : 0.5f * sp->bump_dir[r][c];
        }
        if (give_up)
            break;
    }
    return bumped;
}

/* The strain's limit on the rows themselves, after the strain's pass (on a frame where it runs): an edge the
 * rounds leave longer than STRAIN_LIMIT of its length (or shorter than its inverse) has its two ends moved toward
 * (away from) each other along it until it is that long, each by half (a row on the rim, whose edge to a vertex on
 * its bones would stretch instead, by none; its other end by all), over the rows' edges in turn, up to
 * LIMIT_SWEEPS times or until none is (strain limiting as in cloth simulation: Provot's correction of
 * over-stretched springs). Where both ends of an edge are carried alike no translation of the triangles shortens
 * it: a strand's tip bound to the triangles of the one before it, stretched as the cage's links swing at their
 * own limit (Luka's hair, p99.9 strain 1.50-1.57 at 11 frames of the long dance), 03's bob's crown squeezed (1.1%
 * of its edges under 2/3 at a frame of a made-up dance). Like the touch-up's, these moves are the frame's, not the
 * triangles' (none when triangles_only). The number of rows moved. */
static size_t limit_strain(plush__soft_push *sp, float (*positions)[3])
{
    const uint32_t *vert = sp->sm->vertices;
    size_t moved = 0;
    for (int sweep = 0; sweep < LIMIT_SWEEPS; sweep++) {
        size_t beyond = 0;
        for (size_t r = 0; r < sp->sm->count; r++)
            for (size_t e = sp->edge_first[r]; e < sp->edge_first[r + 1]; e++) {
                uint32_t o = sp->edge_other[e];
                if (o < r)
                    continue; /* looked at from o */
                float *p = positions[vert[r]], *q = positions[vert[o]];
                double d[3], len = 0, most = STRAIN_LIMIT * sp->edge_rest[e], least = sp->edge_rest[e] / STRAIN_LIMIT;
                for (int k = 0; k < 3; k++)
                    d[k] = (double)q[k] - p[k], len += d[k] * d[k];
                len = sqrt(len);
                int ends = !sp->rim[r] + !sp->rim[o];
                if (!(len > most || (len < least && len > 0)) || !ends || !isfinite(len))
                    continue;
                beyond++;
                double share = (len - (len > most ? most : least)) / len / ends;
                uint32_t row[2] = {r, o};
                for (int j = 0; j < 2; j++) {
                    if (sp->rim[row[j]])
                        continue;
                    float *at = j ? q : p;
                    double sign = j ? -1.0 : 1.0;
                    for (int k = 0; k < 3; k++) {
                        float step = (float)(sign * share * d[k]);
                        at[k] += step;
                        sp->total[row[j]][k] += step;
                    }
                    moved += !sp->listed[row[j]];
                    sp->listed[row[j]] = 1;
                }
            }
        if (!beyond)
            break;
    }
    if (moved)
        memset(sp->listed, 0, sp->sm->count);
    return moved;
}

void plush__soft_push_frame(plush__soft_push *sp, plush_proxy_skin *skin, float (*positions)[3],
                            const float (*normals)[3])
{
    if (!sp->sm)
        return;
    for (size_t r = 0; sp->twin_count && r < sp->sm->count; r++)
        if (sp->twin_of[r] != r)
            sp->alike[r] = !memcmp(positions[sp->sm->vertices[r]], positions[sp->sm->vertices[sp->twin_of[r]]],
                                   sizeof *positions);
    plush__soft_measure_pose_bodies(sp->sm);
    plush__soft_measure_pose_skin(sp->sm, (const float(*)[3])positions, normals);
    memset(sp->offset, 0, sp->triangle_count * sizeof *sp->offset);
    /* a side seen at the frame before stays known (side_frame + 1), one from before it, or from before a jump or
     * a reset, not */
    sp->frame += sp->sm->consecutive ? 1 : 2;
    memset(sp->travel, 0, sp->sm->count * sizeof *sp->travel);
    memset(sp->total, 0, sp->sm->count * sizeof *sp->total);
    memset(sp->bumped_by, 0, sp->sm->count * sizeof *sp->bumped_by);
    memset(sp->body_clear, 0, sp->sm->count * sizeof *sp->body_clear);
    bool warm = sp->fall > 0 && sp->last_ok && sp->sm->consecutive && warm_start(sp, positions);
    /* out of the rigid bodies, then out from behind the skin, then the surface's edges back within the bar */
    sp->pass = PASS_BODY;
    memcpy(sp->start, sp->offset, sp->triangle_count * sizeof *sp->start);
    bool pushed = push_rounds(sp, positions) || warm;
    size_t seeds = 0;
    if (sp->sm->skin) {
        sp->pass = PASS_SKIN;
        pushed = push_rounds(sp, positions) || pushed;
        /* the rows it leaves in (behind the skin, or in a body, where its pass moves nothing: the rigid bodies
         * are fatter than the skin, so a row behind the skin is often in one too), for the touch-up, which asks
         * the skin of each */
        for (size_t r = 0; !sp->triangles_only && r < sp->sm->count; r++)
            if (sp->carry_count[r] && sp->in[r])
                sp->queue[seeds++] = (uint32_t)r;
    }
    size_t limited = 0;
    if (any_beyond(sp, (const float(*)[3])positions)) {
        sp->pass = PASS_STRAIN;
        pushed = push_rounds(sp, positions) || pushed;
        if (!sp->triangles_only)
            limited = limit_strain(sp, positions);
    }
    /* The touch-up's passes: at a row where bumps meet, their directions' mean brings it only part of the way
     * out; the next pass starts from where the last left the rows it moved (those still behind the skin are its
     * seeds), its guard holding each edge's ends to the slope over the frame's passes together. */
    size_t bumped = 0;
    for (int pass = 0; seeds && pass < TOUCH_UP_PASSES; pass++) {
        size_t moved = touch_up(sp, (const float(*)[3])positions, seeds);
        seeds = 0;
        for (size_t i = 0; i < moved; i++) {
            uint32_t r = sp->bumped[i];
            float *p = positions[sp->sm->vertices[r]];
            bool moves = false;
            for (int k = 0; k < 3; k++) {
                moves = moves || sp->bump_dir[r][k] != 0;
                p[k] += sp->bump_dir[r][k];
                sp->total[r][k] += sp->bump_dir[r][k];
                sp->bumped_by[r][k] += sp->bump_dir[r][k];
                sp->bump_dir[r][k] = 0;
            }
            sp->bump[r] = 0;
            sp->bump_state[r] = 0;
            if (moves) /* the rows the pass moved: those still behind the skin seed the next */
                sp->queue[seeds++] = r;
        }
        bumped += seeds;
    }
    /* the warm start's next: each triangle's offset, and the frames since the frame after the rounds last moved
     * it (counted up to a day's frames at 30 a second, long after any offset has fallen back) */
    for (size_t t = 0; t < sp->triangle_count; t++) {
        bool more = memcmp(sp->offset[t], sp->start[t], sizeof sp->start[t]) != 0;
        bool falls = !more && sp->last_ok && sp->sm->consecutive;
        sp->since[t] = falls ? fminf(sp->since[t] + (float)sp->advance, 2.6e6f) : 0.0f;
    }
    memcpy(sp->last, sp->offset, sp->triangle_count * sizeof *sp->last);
    sp->last_ok = true;
    if (!pushed && !bumped && !limited)
        return;
    if (pushed)
        plush_proxy_skin_translate(skin, (const float(*)[3])sp->offset);
    /* a twin skinned where its row was ends where the row does; one a morph moved apart moves by as much */
    for (size_t r = 0; sp->twin_count && r < sp->sm->count; r++)
        if (sp->twin_of[r] != r) {
            float *p = positions[sp->sm->vertices[r]];
            const float *q = positions[sp->sm->vertices[sp->twin_of[r]]], *moved = sp->total[sp->twin_of[r]];
            for (int k = 0; k < 3; k++)
                p[k] = sp->alike[r] ? q[k] : p[k] + moved[k];
        }
}
