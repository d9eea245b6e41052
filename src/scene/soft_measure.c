/* How the soft part moves against the body (plush_scene_soft_figures): how far the proxy puts the bound
 * vertices from where plain bone skinning would (a part that does not move is not plush), how many of
 * them lie inside the model's own body shapes (the rigid bodies that follow bones) posed at that frame, and
 * how many lie behind the visible skin (the faces of the other materials) next to the author's skinning. */
#include "scene/soft_measure.h"
#include "core/common.h"
#include "core/geom.h"
#include "plush/sys/anim.h"
#include "plush/sys/physics.h"
#include "plush/sys/pmx.h"
#include "plush/sys/scene.h"
#include "plush/sys/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The offset is measured on at most this many bound vertices, evenly spread over them: it is a mean, and
 * skinning all of them twice would cost as much as the run's own skinning. */
enum { OFFSET_SAMPLES = 1024 };
/* The skin under the part is measured on about this many of its vertices: a point inside a skirt's tube has the
 * whole ring of it about as near, so each search costs several of the part's; one point is 0.4% of them, a fifth
 * of the bar's 2 points. */
enum { COVER_SAMPLES = 256 };

static double dist3(const float a[3], const float b[3])
{
    double d2 = 0;
    for (int k = 0; k < 3; k++)
        d2 += ((double)a[k] - b[k]) * ((double)a[k] - b[k]);
    return sqrt(d2);
}

static double rest_size(const plush_pmx_model *m, const uint32_t *vertices, size_t count)
{
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t i = 0; i < count; i++)
        for (int k = 0; k < 3; k++) {
            float x = m->vertices[vertices[i]].position[k];
            lo[k] = x < lo[k] ? x : lo[k];
            hi[k] = x > hi[k] ? x : hi[k];
        }
    double d = 0;
    for (int k = 0; count && k < 3; k++)
        d += ((double)hi[k] - lo[k]) * ((double)hi[k] - lo[k]);
    return sqrt(d);
}

/* The part's faces: those all of whose corners are bound (bound: per vertex), in the materials no soft body is made
 * of, into tris (index_count / 3 entries); how many. */
static size_t part_faces(const plush_pmx_model *m, const bool *bound, uint32_t (*tris)[3])
{
    size_t nv = m->vertex_count, faces = 0, first = 0;
    for (size_t mat = 0; mat < m->material_count; mat++) {
        size_t c = m->materials[mat].index_count > 0 ? (size_t)m->materials[mat].index_count : 0;
        for (size_t f = first; plush_pmx_material_soft_body(m, mat) < 0 && f + 3 <= first + c && f + 3 <= m->index_count;
             f += 3) {
            const uint32_t *ix = &m->indices[f];
            if (ix[0] < nv && ix[1] < nv && ix[2] < nv && bound[ix[0]] && bound[ix[1]] && bound[ix[2]])
                memcpy(tris[faces++], ix, sizeof tris[0]);
        }
        first += c;
    }
    return faces;
}

/* The skin through the part: its faces (every corner bound; in the materials no soft body is made of) as a cover
 * over the visible skin's vertices: the ones whose way out along their normal meets a face of the part within the
 * skin's depth at rest are measured, and one shows through the part at a frame when its way out meets none (a
 * face between the part's vertices dipped behind it, a panel slid round a limb, an edge swung away). */
static plush_status cover_init(plush__soft_measure *sm, const plush_pmx_model *m, const bool *skin_vertex,
                               const float (*rest)[3], const float (*normals)[3], double depth, plush_diag *diag)
{
    size_t nv = m->vertex_count, faces = 0, points = 0;
    bool *bound = calloc(nv ? nv : 1, sizeof *bound);
    uint32_t(*tris)[3] = malloc((m->index_count / 3 ? m->index_count / 3 : 1) * sizeof *tris);
    uint32_t *pts = malloc((nv ? nv : 1) * sizeof *pts);
    plush_status st = PLUSH_OK;
    if (!bound || !tris || !pts) {
        st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < sm->count; i++)
        bound[sm->vertices[i]] = true;
    faces = part_faces(m, bound, tris);
    for (size_t v = 0; v < nv; v++)
        if (skin_vertex[v] && !bound[v])
            pts[points++] = (uint32_t)v;
    if (!faces || !points)
        goto done;
    st = plush_quality_skin_create(rest, NULL, nv, (const uint32_t(*)[3])tris, faces, pts, points, depth, &sm->cover,
                                   diag);
    if (st != PLUSH_OK)
        goto done;
    size_t kept = plush_quality_skin_keep_covered(sm->cover, rest, normals, depth);
    if (!kept) {
        plush_quality_skin_destroy(sm->cover);
        sm->cover = NULL;
        goto done;
    }
    /* about COVER_SAMPLES of them, evenly over the skin's vertices under the part */
    sm->cover_step = (kept + COVER_SAMPLES - 1) / COVER_SAMPLES;
    sm->cover_points = plush_quality_skin_measured(sm->cover, sm->cover_step);
    sm->cover_reach = depth;
done:
    free(bound), free(tris), free(pts);
    return st;
}

/* The visible skin: the faces of the model's visible skin (plush__rigid_skin_vertices) that hold no bound vertex,
 * over every bound vertex (the push keeps them out of it; the measure looks at the sampled ones). */
static plush_status skin_init(plush__soft_measure *sm, const plush_pmx_model *m, plush_diag *diag)
{
    size_t nv = m->vertex_count, faces = 0;
    uint32_t(*tris)[3] = malloc((m->index_count / 3 ? m->index_count / 3 : 1) * sizeof *tris);
    float(*rest)[3] = malloc((nv ? nv : 1) * sizeof *rest);
    float(*normals)[3] = malloc((nv ? nv : 1) * sizeof *normals);
    bool *skin = malloc((nv ? nv : 1) * sizeof *skin);
    plush_status st = PLUSH_OK;
    if (!tris || !rest || !normals || !skin || !plush__rigid_skin_vertices(m, skin)) {
        st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < sm->count; i++)
        skin[sm->vertices[i]] = false;
    for (size_t f = 0; m->indices && f + 3 <= m->index_count; f += 3) {
        const uint32_t *ix = &m->indices[f];
        if (ix[0] < nv && ix[1] < nv && ix[2] < nv && skin[ix[0]] && skin[ix[1]] && skin[ix[2]])
            memcpy(tris[faces++], ix, sizeof tris[0]);
    }
    sm->skin_faces = faces;
    if (!faces)
        goto done;
    for (size_t v = 0; v < nv; v++) {
        memcpy(rest[v], m->vertices[v].position, sizeof rest[v]);
        memcpy(normals[v], m->vertices[v].normal, sizeof normals[v]);
    }
    /* how deep a point can lie behind the skin: the body's half-thickness, which the author's shapes for it
     * bound from above (they are fatter than the mesh): the largest sphere or capsule radius or smallest box
     * half-extent; no bound without them */
    double depth = 0;
    for (size_t b = 0; b < sm->body_count; b++) {
        double r = plush__rigid_shape_thickness(&m->rigid_bodies[sm->bodies[b]]);
        depth = r > depth ? r : depth;
    }
    st = plush_quality_skin_create((const float(*)[3])rest, (const float(*)[3])normals, nv, (const uint32_t(*)[3])tris,
                                   faces, sm->vertices, sm->count, depth, &sm->skin, diag);
    /* the skin's points under the part: the vertices of the skin's faces, as deep */
    for (size_t v = 0; v < nv; v++)
        skin[v] = false;
    for (size_t f = 0; f < faces; f++)
        skin[tris[f][0]] = skin[tris[f][1]] = skin[tris[f][2]] = true;
    if (st == PLUSH_OK && depth > 0)
        st = cover_init(sm, m, skin, (const float(*)[3])rest, (const float(*)[3])normals, depth, diag);
done:
    free(tris);
    free(rest);
    free(normals);
    free(skin);
    return st;
}

void plush__soft_measure_fini(plush__soft_measure *sm)
{
    plush__job_wait(&sm->author_job);
    sm->author_running = false;
    plush__job_wait(&sm->measure_job);
    sm->measuring = false;
    plush_quality_skin_destroy(sm->skin);
    sm->skin = NULL;
    plush_quality_skin_destroy(sm->cover);
    sm->cover = NULL;
    plush_quality_destroy(sm->author_surface);
    sm->author_surface = NULL;
}

bool plush_scene_soft_author_whole(const plush_scene_soft_figures *f)
{
    return !f->author_surface || (f->author_strain_p999 <= PLUSH_QUALITY_BAR_STRAIN_P999 &&
                                  f->author_strain_outside <= PLUSH_QUALITY_BAR_OUTSIDE);
}

/* The part's surface as the author's rig moves it: the faces all of whose corners are bound, in the materials
 * no soft body is made of (the faces plush's own surface is measured on), every layer left out of the tear
 * (the vertices not bound are not skinned). */
static plush_status author_surface_init(plush__soft_measure *sm, const plush_pmx_model *m, plush_diag *diag)
{
    size_t nv = m->vertex_count;
    bool *bound = calloc(nv ? nv : 1, sizeof *bound);
    uint32_t(*tris)[3] = malloc((m->index_count / 3 ? m->index_count / 3 : 1) * sizeof *tris);
    float(*rest)[3] = malloc((nv ? nv : 1) * sizeof *rest);
    if (!bound || !tris || !rest) {
        free(bound), free(tris), free(rest);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    for (size_t i = 0; i < sm->count; i++)
        bound[sm->vertices[i]] = true;
    size_t faces = part_faces(m, bound, tris);
    for (size_t v = 0; v < nv; v++)
        memcpy(rest[v], m->vertices[v].position, sizeof rest[v]);
    /* its warnings (edges too short to measure) are plush's surface's too, which the run gives once */
    plush_diag quiet;
    plush_diag_reset(&quiet);
    plush_status st = faces ? plush_quality_create((const float(*)[3])rest, nv, (const uint32_t(*)[3])tris, faces,
                                                   &sm->author_surface, &quiet)
                            : PLUSH_OK;
    if (st == PLUSH_OK && sm->author_surface) {
        for (size_t v = 0; v < nv; v++)
            bound[v] = true;
        plush_quality_drop_layers(sm->author_surface, bound);
    } else if (st != PLUSH_OK) {
        st = plush_diag_fail(diag, st, -1, NULL, -1, "out of memory");
    }
    free(bound), free(tris), free(rest);
    return st;
}

plush_status plush__soft_measure_init(plush__soft_measure *sm, const plush_pmx_model *m, const uint32_t *vertices,
                                      size_t count, const plush_world_model *wm, plush_arena *arena, plush_diag *diag)
{
    memset(sm, 0, sizeof *sm);
    sm->model = m;
    sm->vertices = vertices;
    sm->count = count;
    sm->size = rest_size(m, vertices, count);
    size_t step = count > OFFSET_SAMPLES ? (count + OFFSET_SAMPLES - 1) / OFFSET_SAMPLES : 1;
    sm->sample_step = step;
    sm->scratch = plush_arena_array(arena, m->vertex_count ? m->vertex_count : 1, sizeof *sm->scratch);
    sm->kin_scratch = plush_arena_array(arena, m->vertex_count ? m->vertex_count : 1, sizeof *sm->kin_scratch);
    sm->bodies = plush_arena_array(arena, m->rigid_body_count ? m->rigid_body_count : 1, sizeof *sm->bodies);
    sm->poses = plush_arena_array(arena, m->rigid_body_count ? m->rigid_body_count : 1, sizeof *sm->poses);
    sm->prev_poses = plush_arena_array(arena, m->rigid_body_count ? m->rigid_body_count : 1, sizeof *sm->prev_poses);
    size_t sampled = count / step + 1;
    bool got = true;
    for (int side = 0; side < 2; side++) {
        sm->prev_at[side] = plush_arena_array(arena, sampled, sizeof *sm->prev_at[side]);
        got = (sm->before_prev[side] = plush_arena_array(arena, sampled, sizeof *sm->before_prev[side])) && got;
    }
    if (!sm->scratch || !sm->kin_scratch || !sm->bodies || !sm->poses || !sm->prev_poses || !sm->prev_at[0] ||
        !sm->prev_at[1] || !got)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    /* The body: rigid bodies that follow their bones (legs, hips, torso, arms, head). A bound vertex
     * already inside one at rest (hair roots in the head's sphere) is not counted for that body; nor, for a
     * body the part lies into at rest, one the model's collision groups keep apart from it (a helper of the
     * part's own rig: the rule the cage's faces collide by). */
    for (size_t r = 0; wm && r < m->rigid_body_count; r++) {
        const plush_pmx_rigid_body *rb = &m->rigid_bodies[r];
        if (rb->mode != PLUSH_PMX_RIGID_FOLLOW_BONE || rb->shape > PLUSH_PMX_RIGID_CAPSULE)
            continue;
        sm->bodies[sm->body_count++] = (uint32_t)r;
    }
    sm->wm = wm;
    sm->reach = plush_arena_array(arena, sm->body_count ? sm->body_count : 1, sizeof *sm->reach);
    if (!sm->reach)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    for (size_t b = 0; b < sm->body_count; b++)
        sm->reach[b] = plush__rigid_shape_reach(&m->rigid_bodies[sm->bodies[b]]);
    size_t bits = sm->body_count * count;
    sm->left_out = plush_arena_array(arena, bits / 8 + 1, 1);
    int32_t *dynamic = plush_arena_array(arena, m->bone_count ? m->bone_count : 1, sizeof *dynamic);
    if (!sm->left_out || !dynamic)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    memset(sm->left_out, 0, bits / 8 + 1);
    plush__rigid_dynamic_per_bone(m, dynamic);
    sm->author_share = plush__rigid_moved_share(m, vertices, count);
    plush_status st = skin_init(sm, m, diag);
    if (st == PLUSH_OK && sm->author_share >= PLUSH_SOFT_AUTHOR_MOVES_SHARE)
        st = author_surface_init(sm, m, diag);
    if (st != PLUSH_OK)
        return st;
    for (size_t b = 0; b < sm->body_count; b++) {
        const plush_pmx_rigid_body *rb = &m->rigid_bodies[sm->bodies[b]];
        float t[16];
        plush_world_rigid_rest_transform(rb, t);
        bool overlaps = false;
        for (size_t i = 0; i < count; i++) {
            double local[3];
            plush__rigid_local(t, m->vertices[vertices[i]].position, local);
            if (plush__rigid_shape_distance(rb, local, NULL) < 0) {
                size_t bit = i * sm->body_count + b;
                sm->left_out[bit / 8] |= (uint8_t)(1u << (bit % 8));
                overlaps = true;
            }
        }
        for (size_t i = 0; overlaps && i < count; i++)
            if (!plush__rigid_vertex_meets(m, dynamic, vertices[i], sm->bodies[b])) {
                size_t bit = i * sm->body_count + b;
                sm->left_out[bit / 8] |= (uint8_t)(1u << (bit % 8));
            }
    }
    return PLUSH_OK;
}

void plush__soft_measure_pose_bodies(plush__soft_measure *sm)
{
    if (sm->bodies_posed)
        return; /* once a frame, like the skin */
    for (size_t b = 0; sm->wm && b < sm->body_count; b++)
        plush_world_body_transform(sm->wm, sm->bodies[b], sm->poses[b]);
    sm->bodies_posed = true;
    sm->poses_valid = true;
}

void plush__soft_measure_pose_skin(plush__soft_measure *sm, const float (*positions)[3], const float (*normals)[3])
{
    if (!sm->skin || !normals || sm->skin_posed)
        return; /* once a frame (the push's, then the measure's): the skin does not move within it */
    plush_quality_skin_pose(sm->skin, positions, normals);
    sm->skin_posed = true;
}

double plush__soft_measure_deepest_near(const plush__soft_measure *sm, size_t i, const float p[3], double margin,
                                        float out[3], uint64_t near, double slack, uint64_t *near_out, double *clear,
                                        size_t *deepest)
{
    double best = 0, room = INFINITY;
    if (deepest)
        *deepest = SIZE_MAX;
    if (out)
        out[0] = out[1] = out[2] = 0;
    bool masked = sm->body_count <= 64;
    if (near_out)
        *near_out = masked ? 0 : UINT64_MAX;
    for (size_t b = 0; b < sm->body_count; b++) {
        if (masked && !(near >> b & 1))
            continue;
        size_t bit = i * sm->body_count + b;
        if (sm->left_out[bit / 8] & (1u << (bit % 8)))
            continue;
        const plush_pmx_rigid_body *rb = &sm->model->rigid_bodies[sm->bodies[b]];
        const float *t = sm->poses[b];
        double dx = (double)p[0] - t[12], dy = (double)p[1] - t[13], dz = (double)p[2] - t[14],
               reach = sm->reach[b] + margin, d2 = dx * dx + dy * dy + dz * dz;
        if (near_out && masked && d2 <= (reach + slack) * (reach + slack))
            *near_out |= (uint64_t)1 << b;
        if (d2 > reach * reach) {
            /* the shape lies within its reach of its centre: p is further from its margin than the rest */
            double apart = clear ? sqrt(d2) - reach : INFINITY;
            room = apart < room ? apart : room;
            continue;
        }
        double local[3], normal[3];
        plush__rigid_local(t, p, local);
        double d = plush__rigid_shape_distance(rb, local, out ? normal : NULL);
        room = d - margin < room ? d - margin : room;
        if (!(d < margin) || !(margin - d > best))
            continue;
        best = margin - d;
        if (deepest)
            *deepest = b;
        for (int k = 0; out && k < 3; k++)
            out[k] = (float)(t[k] * normal[0] + t[4 + k] * normal[1] + t[8 + k] * normal[2]);
    }
    if (clear)
        *clear = room > 0 && best == 0 ? room : 0; /* NaN: 0 */
    return best;
}

uint64_t plush__soft_measure_box_mask(const plush__soft_measure *sm, const float (*positions)[3], size_t first,
                                      size_t n, double pad)
{
    if (sm->body_count > 64)
        return UINT64_MAX;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t i = first; i < first + n; i++)
        for (int k = 0; k < 3; k++) {
            double x = positions[sm->vertices[i]][k];
            lo[k] = x < lo[k] ? x : lo[k];
            hi[k] = x > hi[k] ? x : hi[k];
        }
    uint64_t mask = 0;
    for (size_t b = 0; b < sm->body_count; b++) {
        const float *t = sm->poses[b];
        double d2 = 0, r = sm->reach[b] + pad;
        for (int k = 0; k < 3; k++) {
            double c = t[12 + k], out = c < lo[k] ? lo[k] - c : c > hi[k] ? c - hi[k] : 0;
            d2 += out * out;
        }
        if (!(d2 > r * r)) /* a box or pose not finite keeps the body */
            mask |= (uint64_t)1 << b;
    }
    return mask;
}

/* Whether bound vertex i at p lies inside a body of `near` it is measured against, and how deep. */
static bool inside_body(const plush__soft_measure *sm, size_t i, const float p[3], uint64_t near, double *depth)
{
    double d = plush__soft_measure_deepest_near(sm, i, p, 0, NULL, near, 0, NULL, NULL, NULL);
    *depth = d > *depth ? d : *depth;
    return d > 0;
}

/* The sampled vertices of one side that went through a limb since the frame before: in each body's frame (as
 * posed at either frame), the straight way from where the vertex was to where it is passes through the body's
 * core and ends on its other side (plush__rigid_passed_through): a skirt's front left behind a leg that kicked
 * through it, which the skin's count reads as in front of the skin (of the leg's back). A vertex inside a body
 * at rest is not measured against it. */
static void through_side(plush__soft_measure *sm, int slot, const float (*at)[3], plush__soft_side *out)
{
    float(*prev)[3] = sm->prev_at[slot];
    bool measure = sm->prev_ok[slot] && sm->prev_poses_ok;
    for (size_t i = 0, j = 0; i < sm->count; i += sm->sample_step, j++) {
        const float *p = at[sm->vertices[i]];
        bool through = false;
        for (size_t b = 0; measure && !through && b < sm->body_count; b++) {
            size_t bit = i * sm->body_count + b;
            if (sm->left_out[bit / 8] & (1u << (bit % 8)))
                continue;
            double from[3], to[3], far = sm->reach[b];
            plush__rigid_local(sm->prev_poses[b], prev[j], from);
            plush__rigid_local(sm->poses[b], p, to);
            /* beyond the body's reach at both ends and a path shorter than how far beyond: not near it */
            double a = sqrt(from[0] * from[0] + from[1] * from[1] + from[2] * from[2]),
                   c = sqrt(to[0] * to[0] + to[1] * to[1] + to[2] * to[2]), moved = 0;
            for (int k = 0; k < 3; k++)
                moved += (to[k] - from[k]) * (to[k] - from[k]);
            if (a > far && c > far && sqrt(moved) < fmin(a, c) - far)
                continue;
            through = plush__rigid_passed_through(&sm->model->rigid_bodies[sm->bodies[b]], from, to);
        }
        out->through += through;
        out->through_measured += measure;
    }
}

/* How much one side's sampled vertices' ways change from the frame before to this one (jitter): each one's
 * |x(f) - 2 x(f-1) + x(f-2)| summed, on a frame that follows the two before by steps. Then keeps the side's
 * vertices for the next frame (this one's and the one before's: through_side's and this one's way since). */
static void jitter_side(plush__soft_measure *sm, int slot, const float (*at)[3], plush__soft_side *out)
{
    if (!sm->jitter_follows)
        sm->jitter_kept[slot] = 0;
    bool measure = sm->jitter_kept[slot] >= 2;
    float(*one)[3] = sm->prev_at[slot], (*two)[3] = sm->before_prev[slot];
    double sum = 0;
    size_t n = 0;
    for (size_t i = 0, j = 0; i < sm->count; i += sm->sample_step, j++, n++) {
        const float *p = at[sm->vertices[i]];
        double a2 = 0;
        for (int k = 0; k < 3; k++) {
            double a = (double)p[k] - 2.0 * one[j][k] + two[j][k];
            a2 += a * a;
        }
        sum += measure ? sqrt(a2) : 0;
        memcpy(two[j], one[j], sizeof two[j]);
        memcpy(one[j], p, sizeof one[j]);
    }
    out->jitter += sum;
    out->jitter_measured += measure ? n : 0;
    sm->jitter_kept[slot] += sm->jitter_kept[slot] < 2;
    sm->prev_ok[slot] = true;
}

/* One side's figures -- slot 0 plush's positions, slot 1 the author's (bone skinning) -- against the visible
 * skin and the bodies, added to *out. Touches only that slot's search hints and kept vertices. */
static void measure_side(plush__soft_measure *sm, int slot, const float (*at)[3], plush__soft_side *out)
{
    if (sm->skin && sm->skin_posed) {
        size_t measured = 0;
        double deepest = 0;
        out->behind += plush_quality_skin_behind(sm->skin, slot, at, sm->sample_step, &measured, &deepest);
        out->measured += measured;
        out->skin_deepest = deepest > out->skin_deepest ? deepest : out->skin_deepest;
    }
    if (sm->cover && sm->frame_at && sm->frame_normals) { /* the part's faces where this side puts them, the skin
                                                              * where it is */
        size_t measured = 0;
        plush_quality_skin_pose(sm->cover, at, NULL);
        out->showing += plush_quality_skin_uncovered(sm->cover, sm->frame_at, sm->frame_normals, sm->cover_step,
                                                     sm->cover_reach, &measured);
        out->show_measured += measured;
    }
    uint64_t near = 0;
    for (size_t i = 0; sm->wm && sm->body_count && i < sm->count; i++) {
        if (i % PLUSH__SOFT_MEASURE_BOX_RUN == 0) {
            size_t run = sm->count - i < PLUSH__SOFT_MEASURE_BOX_RUN ? sm->count - i : PLUSH__SOFT_MEASURE_BOX_RUN;
            near = plush__soft_measure_box_mask(sm, at, i, run, 0);
        }
        out->inside += near && inside_body(sm, i, at[sm->vertices[i]], near, &out->deepest);
    }
    if (sm->wm && sm->body_count)
        through_side(sm, slot, at, out);
    jitter_side(sm, slot, at, out); /* then keeps the side's vertices for the next frame */
}

/* The author's side, on its own thread while the proxy skins and pushes: bone skinning of the bound vertices
 * (every one when there is a body, else the sampled ones) and the sampled ones without physics, then its tests
 * against the skin and the bodies. No push moves the author's side, so its tests need not wait for the push as
 * plush's do (those run beside the next frame's physics; where that step is quick, as 03's bob's 1.07 ms a
 * frame, both sides there kept the run's thread waiting 2.5 ms a frame). */
static void author_side(void *ctx)
{
    plush__soft_measure *sm = ctx;
    bool every = (sm->wm && sm->body_count) || sm->author_surface || sm->cover;
    for (size_t i = 0; i < sm->count; i += every ? 1 : sm->sample_step)
        plush_anim_skin(sm->anim, sm->vertices[i], 1, sm->scratch, NULL);
    if (sm->kinematic) {
        const float(*offsets)[3] = plush_anim_vertex_offsets(sm->anim);
        for (size_t i = 0; i < sm->count; i += sm->sample_step)
            plush_anim_skin_vertices(sm->model, sm->kinematic, offsets, sm->vertices[i], 1, sm->kin_scratch, NULL);
    }
    double t0 = plush__seconds();
    memset(&sm->author_tests, 0, sizeof sm->author_tests);
    measure_side(sm, 1, (const float(*)[3])sm->scratch, &sm->author_tests);
    sm->author_seconds += plush__seconds() - t0;
}

void plush__soft_measure_begin(plush__soft_measure *sm, const plush_anim *anim, const float (*kinematic)[16],
                               const float (*positions)[3], const float (*normals)[3])
{
    if (!sm->count || sm->author_running)
        return;
    if (sm->measuring) /* not collected: the frame before's measure still reads the skin and the bodies */
        plush__job_wait(&sm->measure_job);
    /* the bodies' poses at the frame before, for the vertices' ways since (none after a jump or a reset) */
    if (sm->poses_valid && sm->body_count)
        memcpy(sm->prev_poses, sm->poses, sm->body_count * sizeof *sm->poses);
    sm->prev_poses_ok = sm->poses_valid && sm->consecutive;
    sm->jitter_follows = sm->consecutive;
    sm->skin_posed = sm->bodies_posed = false;
    plush__soft_measure_pose_skin(sm, positions, normals);
    plush__soft_measure_pose_bodies(sm);
    sm->anim = anim;
    sm->kinematic = kinematic;
    sm->frame_at = positions;
    sm->frame_normals = normals;
    sm->author_running = true;
    plush__job_start(&sm->author_job, author_side, sm);
}

/* The frame's figures: plush's side against the skin and the bodies (the author's was measured on its own
 * thread), then how far apart they lie. */
static void measure_frame(void *ctx)
{
    plush__soft_measure *sm = ctx;
    double t0 = plush__seconds();
    plush__soft_side mine = {0}, author = sm->author_tests;
    measure_side(sm, 0, sm->at, &mine);
    plush_scene_soft_figures *out = &sm->figures;
    memset(out, 0, sizeof *out);
    const float(*kin)[3] = sm->kinematic ? (const float(*)[3])sm->kin_scratch : (const float(*)[3])sm->scratch;
    double sum = 0, swing = 0, away = 0;
    size_t n = 0;
    for (size_t i = 0; i < sm->count; i += sm->sample_step, n++) {
        uint32_t v = sm->vertices[i];
        sum += dist3(sm->at[v], sm->scratch[v]);
        swing += dist3(sm->at[v], kin[v]);
        away += dist3(sm->scratch[v], kin[v]);
    }
    out->offset = n ? sum / (double)n : 0;
    out->offset_share = sm->size > 0 ? out->offset / sm->size : 0;
    out->swing_share = n && sm->size > 0 ? swing / (double)n / sm->size : 0;
    out->author_swing_share = n && sm->size > 0 ? away / (double)n / sm->size : 0;
    if (sm->skin && sm->skin_posed) {
        out->skin_depth = mine.skin_deepest;
        out->skin_share = mine.measured ? (double)mine.behind / (double)mine.measured : 0;
        out->author_skin_share = mine.measured ? (double)author.behind / (double)mine.measured : 0;
    }
    if (mine.show_measured && author.show_measured) {
        out->show_measured = true;
        out->show_share = (double)mine.showing / (double)mine.show_measured;
        out->author_show_share = (double)author.showing / (double)author.show_measured;
    }
    if (sm->wm && sm->body_count) {
        out->inside_share = (double)mine.inside / (double)sm->count;
        out->inside_depth = mine.deepest;
        out->bones_inside_share = (double)author.inside / (double)sm->count;
        out->through_measured = mine.through_measured > 0;
        out->through_share = mine.through_measured ? (double)mine.through / (double)mine.through_measured : 0;
        out->author_through_share =
            author.through_measured ? (double)author.through / (double)author.through_measured : 0;
    }
    if (mine.jitter_measured && author.jitter_measured && sm->size > 0) {
        out->jitter_measured = true;
        out->jitter_share = mine.jitter / (double)mine.jitter_measured / sm->size;
        out->author_jitter_share = author.jitter / (double)author.jitter_measured / sm->size;
    }
    if (sm->author_surface) {
        out->author_surface = true;
        out->author_strain_p999 = sm->author_now.strain_p999;
        out->author_strain_outside = sm->author_now.strain_outside;
    }
    sm->measure_seconds += plush__seconds() - t0;
}

void plush__soft_measure_launch(plush__soft_measure *sm, const plush_anim *anim, const float (*kinematic)[16],
                                const float (*positions)[3], const float (*normals)[3])
{
    if (!sm->count)
        return;
    plush__soft_measure_begin(sm, anim, kinematic, positions, normals);
    plush__job_wait(&sm->author_job);
    sm->author_running = false;
    if (sm->author_surface)
        plush_quality_measure_strain(sm->author_surface, (const float(*)[3])sm->scratch, &sm->author_now);
    sm->at = positions;
    sm->measuring = true;
    plush__job_start(&sm->measure_job, measure_frame, sm);
}

bool plush__soft_measure_collect(plush__soft_measure *sm, plush_scene_soft_figures *out)
{
    if (!sm->measuring)
        return false;
    plush__job_wait(&sm->measure_job);
    sm->measuring = false;
    sm->skin_posed = sm->bodies_posed = false; /* the next frame poses them again */
    *out = sm->figures;
    return true;
}
