/* Baking the proxy animation into pseudo-bone keys: per frame, every proxy triangle's rigid frame
 * F(t) F(0)^-1 as a translation of the rest centroid and a rotation about it. */
#include "core/geom.h"
#include "export/bake_internal.h"
#include "plush/sys/core.h"
#include "plush/sys/vmd.h"
#include "plush/sys/proxy.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Per triangle, the farthest rest vertex bound to it from its centroid: how far a turn of its pseudo-bone
 * can move a vertex (bake_keys.c). */
static void measure_reach(plush_scene_bake *b)
{
    const plush_scene_binding *sb = b->binding;
    for (size_t row = 0; row < sb->vertex_count; row++) {
        const float *p = sb->model->vertices[sb->vertices[row]].position;
        for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++) {
            int32_t t = sb->binding->triangles[row][k];
            if (t < 0 || (size_t)t >= b->triangle_count || !(sb->binding->weights[row][k] > 0))
                continue;
            const float *c = b->centroids[t];
            double dx = (double)p[0] - c[0], dy = (double)p[1] - c[1], dz = (double)p[2] - c[2];
            double d = sqrt(dx * dx + dy * dy + dz * dz);
            if (d > b->reach[t])
                b->reach[t] = d;
        }
    }
}

void plush_scene_bake_set_tolerance(plush_scene_bake *b, double tolerance)
{
    if (b)
        b->tolerance = isfinite(tolerance) ? tolerance : -1.0;
}

plush_status plush_scene_bake_create(const plush_scene_binding *binding, const plush_vmd_motion *motion,
                                     plush_proxy_patch_shape patch, plush_scene_bake **out, plush_diag *diag)
{
    return plush__bake_create(binding, motion, patch, NULL, out, diag);
}

plush_status plush__bake_create(const plush_scene_binding *binding, const plush_vmd_motion *motion,
                                plush_proxy_patch_shape patch, const plush_proxy_patch *shared,
                                plush_scene_bake **out, plush_diag *diag)
{
    if (!binding || !out)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no binding or no place for the bake");
    *out = NULL;
    plush_scene_bake *b = calloc(1, sizeof *b);
    if (!b)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    b->binding = binding;
    b->motion = motion;
    size_t t = binding->proxy.triangle_count, n = t ? t : 1;
    b->triangle_count = t;
    b->centroids = plush_arena_array(&b->arena, n, sizeof *b->centroids);
    b->rest_axes = plush_arena_array(&b->arena, n, sizeof *b->rest_axes);
    b->rest_ok = plush_arena_array(&b->arena, n, sizeof *b->rest_ok);
    b->last = plush_arena_array(&b->arena, n, sizeof *b->last);
    b->reach = plush_arena_array(&b->arena, n, sizeof *b->reach);
    b->tolerance = -1.0;
    if (!b->centroids || !b->rest_axes || !b->rest_ok || !b->last || !b->reach) {
        plush_scene_bake_destroy(b);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    const float(*nodes)[3] = (const float(*)[3])binding->proxy.nodes;
    for (size_t i = 0; i < t; i++) {
        const uint32_t *tri = binding->proxy.triangles[i];
        float f[16];
        for (int k = 0; k < 3; k++)
            b->centroids[i][k] = (float)(((double)nodes[tri[0]][k] + nodes[tri[1]][k] + nodes[tri[2]][k]) / 3.0);
        b->rest_ok[i] = plush_proxy_triangle_frame(nodes[tri[0]], nodes[tri[1]], nodes[tri[2]], f);
        for (int c = 0; c < 3; c++)
            for (int r = 0; r < 3; r++)
                b->rest_axes[i][c][r] = b->rest_ok[i] ? f[4 * c + r] : (c == r);
        b->last[i][6] = 1.0f; /* identity rotation */
    }
    measure_reach(b);
    /* the scene's patch when it has one: a second of the same size would only be built and never read */
    b->uses_patch = patch.rings > 0 || patch.reach > 0;
    b->shared = b->uses_patch ? shared : NULL;
    if (b->uses_patch && !shared) {
        plush_proxy_mesh mesh = {.nodes = nodes, .node_count = binding->proxy.node_count,
                                 .triangles = (const uint32_t(*)[3])binding->proxy.triangles, .triangle_count = t};
        plush_status st = plush_proxy_patch_create(&mesh, patch, &b->patch, diag);
        if (st != PLUSH_OK) {
            plush_scene_bake_destroy(b);
            return st;
        }
    }
    *out = b;
    return PLUSH_OK;
}

/* The key of one triangle under patch frames: the bone at c(0) goes to R c(0) + t. */
static void patch_key(const plush_scene_bake *b, size_t i, float key[7])
{
    double q[4], t[3], r[9];
    plush_proxy_patch_motion(b->shared ? b->shared : b->patch, i, q, t);
    plush__quat_to_mat3(q, r, 3);
    const float *c = b->centroids[i];
    for (int k = 0; k < 3; k++)
        key[k] = (float)(r[k] * c[0] + r[3 + k] * c[1] + r[6 + k] * c[2] + t[k] - c[k]);
    for (int k = 0; k < 4; k++)
        key[3 + k] = (float)q[k];   /* w >= 0 already: one hemisphere for every key */
}

/* The key of one triangle: R = A(t) A(0)^T, translation c(t) - c(0). False when degenerate now. */
static bool triangle_key(const plush_scene_bake *b, size_t i, const float (*nodes)[3], float key[7])
{
    if (b->uses_patch) {
        if (!b->rest_ok[i])
            return false;
        patch_key(b, i, key);
        return true;
    }
    const uint32_t *tri = b->binding->proxy.triangles[i];
    float f[16];
    if (!b->rest_ok[i] || !plush_proxy_triangle_frame(nodes[tri[0]], nodes[tri[1]], nodes[tri[2]], f))
        return false;
    double r[3][3];
    for (int c = 0; c < 3; c++)
        for (int row = 0; row < 3; row++) {
            /* column c of A(t) A(0)^T: sum over axes k of A(t)[k][row] * A(0)[k][c] */
            double s = 0;
            for (int k = 0; k < 3; k++)
                s += (double)f[4 * k + row] * b->rest_axes[i][k][c];
            r[c][row] = s;
        }
    for (int k = 0; k < 3; k++)
        key[k] = f[12 + k] - b->centroids[i][k];
    double q[4];
    plush__mat3_to_quat(&r[0][0], 3, q);
    /* one hemisphere for every key, so linear key interpolation takes the short way */
    double sign = q[3] < 0 ? -1.0 : 1.0;
    for (int k = 0; k < 4; k++)
        key[3 + k] = (float)(sign * q[k]);
    return true;
}

void plush__bake_share_offsets(plush_scene_bake *b, const float (*offsets)[3])
{
    if (b)
        b->offsets = offsets;
}


plush_status plush_scene_bake_add_frame(plush_scene_bake *b, uint32_t frame, const float (*nodes)[3], plush_diag *diag)
{
    if (!b || !nodes)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no bake or no nodes");
    if (b->frame_count && frame <= b->frames[b->frame_count - 1])
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "frame", frame, "frame %u is not after frame %u", frame,
                               b->frames[b->frame_count - 1]);
    if (b->frame_count == b->frame_capacity) {
        size_t cap = b->frame_capacity ? 2 * b->frame_capacity : 64;
        uint32_t *frames = realloc(b->frames, cap * sizeof *frames);
        if (frames)
            b->frames = frames;
        size_t per = b->triangle_count ? b->triangle_count : 1;
        float(*keys)[7] = frames && cap <= SIZE_MAX / per / sizeof *keys ? realloc(b->keys, cap * per * sizeof *keys)
                                                                         : NULL;
        if (!keys)
            return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory for %zu baked frames", cap);
        b->keys = keys;
        b->frame_capacity = cap;
    }
    if (b->patch && !b->shared)
        plush_proxy_patch_update(b->patch, nodes);
    float(*row)[7] = b->keys + b->frame_count * b->triangle_count;
    for (size_t i = 0; i < b->triangle_count; i++) {
        float key[7];
        if (triangle_key(b, i, nodes, key)) {
            for (int k = 0; b->offsets && k < 3; k++)
                key[k] += b->offsets[i][k];
            memcpy(b->last[i], key, sizeof key);
        }
        memcpy(row[i], b->last[i], sizeof row[i]);
    }
    b->frames[b->frame_count++] = frame;
    return PLUSH_OK;
}

/* Whether a key's bone name is one of the driven bones' (the baked physics replaces their keys). */
static bool driven_name(const plush_pmx_model *m, const bool *driven, const plush_str *name)
{
    for (size_t b = 0; b < m->bone_count; b++)
        if (driven[b] && m->bones[b].name.len == name->len && memcmp(m->bones[b].name.s, name->s, name->len) == 0)
            return true;
    return false;
}

/* The input's bone and morph keys whose names the model has (with the physics baked, but the driven
 * bones': their keys are baked), into v (bone_keys already sized for all):
 * a player would only report the others one by one (the run warned of them once when binding). */
static plush_status known_keys(const plush_pmx_model *m, const plush_vmd_motion *in, const bool *driven,
                               plush_vmd_motion *v, plush_diag *diag)
{
    plush_arena *arena = plush_vmd_arena(v);
    size_t nb = in->bone_key_count, nm = in->morph_key_count;
    bool *bone_known = plush_arena_array(arena, nb ? nb : 1, sizeof *bone_known);
    bool *morph_known = plush_arena_array(arena, nm ? nm : 1, sizeof *morph_known);
    v->morph_keys = plush_arena_array(arena, nm ? nm : 1, sizeof *v->morph_keys);
    if (!bone_known || !morph_known || !v->morph_keys)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    plush_status st = plush_motion_vmd_known(m, in, bone_known, morph_known, diag);
    if (st != PLUSH_OK)
        return st;
    for (size_t i = 0; i < nb; i++)
        if (bone_known[i] && !(driven && driven_name(m, driven, &in->bone_keys[i].name)))
            v->bone_keys[v->bone_key_count++] = in->bone_keys[i];
    for (size_t i = 0; i < nm; i++)
        if (morph_known[i])
            v->morph_keys[v->morph_key_count++] = in->morph_keys[i];
    return PLUSH_OK;
}

void plush__bake_tracks_get(const plush_scene_bake *b, plush__bake_tracks *out)
{
    const plush__bake_fit *fit = b->fit;
    *out = (plush__bake_tracks){
        .bones = fit ? fit->bones : b->triangle_count,
        .keys = fit ? (const float(*)[7])fit->keys : (const float(*)[7])b->keys,
        .pivot = fit ? (const float(*)[3])fit->pivot : (const float(*)[3])b->centroids,
        .reach = fit ? fit->reach : b->reach,
        /* a fit spends half the tolerance, the keys the other half */
        .tolerance = fit && b->tolerance > 0 ? 0.5 * b->tolerance : b->tolerance};
}

/* ---- the RMS guard ---------------------------------------------------------------------------------
 *
 * The budget's tolerance bounds every vertex's miss; where it had to be raised past the one asked, many
 * tracks can miss by nearly that much at the same frame (a fast turn of the whole part), and the frame's RMS
 * over the part follows them. A vertex moves as a blend of its bones (weights w summing to at most one), so
 * its miss squared is at most the blend of its bones' misses squared (Jensen), and a bone whose pivot misses
 * by m and whose turn by 2 sin(phi / 2) = s moves a vertex at distance r from the pivot by at most m + s r.
 * Summed over the vertices, bone i adds at most W m^2 + 2 A m s + B s^2 to a frame's sum of squares, with W,
 * A, B its vertices' weights times 1, r, r^2; the frame's RMS over the soft part's N vertices (those the baked
 * tracks move: over the whole model the still body would hide the part's error) is at most the square root of
 * the sum over N. The guard keys, at each frame where that bound passes the tolerance
 * asked (the keys' share of it), the tracks adding most there, until it holds; a key changes the segments
 * either side, so it looks again, up to GUARD_PASSES times. The physics' keys (--bake-physics) are chains,
 * and left out of it. */
enum { GUARD_PASSES = 4, GUARD_TOLERANCES = 2 };
/* The tolerances the guard tries: the budget's times GUARD_STEP^k, k up to GUARD_TOLERANCES: the worst vertex
 * stays near what the budget made it (a fifth more at most; with up to eight tenths Alicia's hair, its RMS
 * over the soft part held, went to 1.0% of her height at the worst vertex, 99 frames over 1% on the replay). */
#define GUARD_STEP 1.1
/* A player's bars weigh a frame's RMS and its worst vertex as 0.2% and 1% of the model's height: a raised
 * worst vertex counts a fifth of an RMS as far over the tolerance. */
#define RMS_WEIGHT 5.0

typedef struct rms_guard {
    const plush_scene_bake *b;
    const plush__bake_tracks *t;
    double (*moment)[3];  /* per bone: W, A, B */
    double most;          /* a frame's sum of squares at most: the target squared times the vertices */
    double vertices;      /* the soft part's vertices (the RMS is over them) */
    bool *forced;         /* bones * frame_count, bone-major: keys the guard adds */
    bool *before;         /* the same before the last pass added to it */
    float *share;         /* bones * frame_count: each bone's part of each frame's sum */
    float *move, *turn;   /* frame_count */
    double *sum;          /* frame_count */
    struct guard_pick { float share; uint32_t bone; } *order; /* bones: scratch, the largest share first */
    struct guard_pick *frame_order;                            /* frame_count: scratch, the frames over */
    size_t added;         /* keys forced by the last run */
    double worst;         /* the worst frame's RMS bound after it */
    double first;         /* and before it added any key */
} rms_guard;

static void guard_free(rms_guard *g)
{
    free(g->moment), free(g->forced), free(g->before), free(g->share), free(g->move), free(g->turn), free(g->sum), free(g->order);
    free(g->frame_order);
    memset(g, 0, sizeof *g);
}

/* false when out of memory or nothing to guard (the guard is then left out: the keys as the tolerance has them) */
static bool guard_init(rms_guard *g, const plush_scene_bake *b, const plush__bake_tracks *t, double target)
{
    memset(g, 0, sizeof *g);
    const plush_scene_binding *sb = b->binding;
    const plush_pmx_model *m = sb->model;
    size_t F = b->frame_count, n = t->bones;
    if (!n || F < 3 || !(target > 0))
        return false;
    if (n > SIZE_MAX / F)
        return false;
    g->b = b, g->t = t;
    g->moment = calloc(n, sizeof *g->moment);
    g->forced = calloc(n * F, sizeof *g->forced);
    g->before = malloc(n * F * sizeof *g->before);
    g->share = malloc(n * F * sizeof *g->share);
    g->move = malloc(F * sizeof *g->move), g->turn = malloc(F * sizeof *g->turn);
    g->sum = malloc(F * sizeof *g->sum), g->order = malloc(n * sizeof *g->order);
    g->frame_order = malloc(F * sizeof *g->frame_order);
    if (!g->moment || !g->forced || !g->before || !g->share || !g->move || !g->turn || !g->sum || !g->order || !g->frame_order) {
        guard_free(g);
        return false;
    }
    const plush__bake_fit *fit = b->fit;
    size_t soft = 0; /* the soft part: the vertices the baked tracks move */
    for (size_t row = 0; row < sb->vertex_count; row++) {
        const float *p = m->vertices[sb->vertices[row]].position;
        double s = sb->binding->proxy_share ? sb->binding->proxy_share[row] : 1.0;
        soft += s > 0;
        for (int k = 0; k < 4 && k < PLUSH_PROXY_INFLUENCES; k++) {
            int32_t i = fit ? fit->bone[row][k] : sb->binding->triangles[row][k];
            double w = (fit ? fit->weight[row][k] : sb->binding->weights[row][k]) * s;
            if (i < 0 || (size_t)i >= n || !(w > 0))
                continue;
            const float *c = t->pivot[i];
            double dx = (double)p[0] - c[0], dy = (double)p[1] - c[1], dz = (double)p[2] - c[2];
            double r2 = dx * dx + dy * dy + dz * dz;
            g->moment[i][0] += w, g->moment[i][1] += w * sqrt(r2), g->moment[i][2] += w * r2;
        }
    }
    if (!soft) {
        guard_free(g);
        return false;
    }
    g->vertices = (double)soft;
    g->most = target * target * g->vertices;
    return true;
}

static int by_share(const void *a, const void *b)
{
    const struct guard_pick *x = a, *y = b;
    if (x->share != y->share)
        return x->share < y->share ? 1 : -1; /* the largest first */
    return (x->bone > y->bone) - (x->bone < y->bone);
}

/* The tracks' keys at tol with the guard's added (forced marks them), at most cap keys in all: the frames
 * furthest over first. keep and curves are scratch. */
static size_t guard_run(rms_guard *g, double tol, size_t cap, bool *keep, uint8_t (*curves)[4][4])
{
    const plush_scene_bake *b = g->b;
    const plush__bake_tracks *t = g->t;
    size_t F = b->frame_count, n = t->bones, total = 0, last = 0;
    memset(g->forced, 0, n * F * sizeof *g->forced);
    g->added = 0;
    for (int pass = 0;; pass++) {
        total = 0;
        for (size_t f = 0; f < F; f++)
            g->sum[f] = 0;
        for (size_t i = 0; i < n; i++) {
            total += plush__bake_reduce_track_forced(t->keys + i, n, b->frames, F, t->reach[i], tol, g->forced + i * F,
                                                     keep, curves);
            plush__bake_track_misses(t->keys + i, n, b->frames, F, keep, (const uint8_t(*)[4][4])curves, g->move,
                                     g->turn);
            const double *mo = g->moment[i];
            for (size_t f = 0; f < F; f++) {
                double mv = g->move[f], tn = g->turn[f];
                double c = mo[0] * mv * mv + 2 * mo[1] * mv * tn + mo[2] * tn * tn;
                g->share[f * n + i] = (float)c;
                g->sum[f] += c;
            }
        }
        if (pass == 0) {
            double most = 0;
            for (size_t f = 0; f < F; f++)
                most = fmax(most, g->sum[f]);
            g->first = sqrt(most / g->vertices);
        }
        if (pass > 0 && total > cap) {
            /* the keys a pass added moved others past the cap: back to the pass before (its figures again) */
            memcpy(g->forced, g->before, n * F * sizeof *g->forced);
            g->added -= last;
            cap = SIZE_MAX, pass = GUARD_PASSES - 1; /* one more reduction, no more keys */
            continue;
        }
        if (pass >= GUARD_PASSES || total >= cap)
            break;
        /* the frames over the bound, furthest first (frame numbers in order, as picks) */
        size_t over = 0;
        for (size_t f = 0; f < F; f++)
            if (g->sum[f] > g->most)
                g->frame_order[over++] = (struct guard_pick){(float)g->sum[f], (uint32_t)f};
        qsort(g->frame_order, over, sizeof *g->frame_order, by_share);
        memcpy(g->before, g->forced, n * F * sizeof *g->before);
        size_t added = 0, room = cap - total;
        for (size_t o = 0; o < over && added < room; o++) {
            size_t f = g->frame_order[o].bone;
            for (size_t i = 0; i < n; i++)
                g->order[i] = (struct guard_pick){g->share[f * n + i], (uint32_t)i};
            qsort(g->order, n, sizeof *g->order, by_share);
            double sum = g->sum[f];
            for (size_t k = 0; k < n && sum > g->most && added < room; k++) {
                uint32_t i = g->order[k].bone;
                if (!(g->order[k].share > 0))
                    break;
                sum -= g->order[k].share;
                if (!g->forced[i * F + f])
                    g->forced[i * F + f] = true, added++;
            }
        }
        if (!added)
            break;
        g->added += added, last = added;
    }
    double worst = 0;
    for (size_t f = 0; f < F; f++)
        worst = fmax(worst, g->sum[f]);
    g->worst = sqrt(worst / g->vertices);
    return total;
}

/* Bone keys the tracks and the physics keep at the keys' tolerance tol, curves fitted as the motion writes
 * them (the same reduction, so the count is the written one). keep and curves have frame_count entries. */
static size_t keys_needed(const plush_scene_bake *b, const plush__bake_tracks *t, double tol, bool *keep,
                          uint8_t (*curves)[4][4])
{
    size_t n = 0;
    for (size_t i = 0; i < t->bones; i++)
        n += plush__bake_reduce_track(t->keys + i, t->bones, b->frames, b->frame_count, t->reach[i], tol, keep,
                                      curves);
    return n + plush__bake_physics_key_need(b, tol, keep, curves);
}

/* keys_needed for plush__bake_least_fitting. */
typedef struct need_ctx {
    const plush_scene_bake *b;
    const plush__bake_tracks *t;
    bool *keep;
    uint8_t (*curves)[4][4];
} need_ctx;

static size_t need_at(void *ctx, double tol)
{
    const need_ctx *c = ctx;
    return keys_needed(c->b, c->t, tol, c->keep, c->curves);
}

/* The smallest keys' tolerance from tol up whose keys fit room: doubling until they fit, then eight
 * halvings of the ratio between the last that did not and the first that did (within 0.3%; a key count
 * that does not fall with the tolerance everywhere makes it a good one rather than the least). 0 when no
 * tolerance does (room below the first and last key of every track). */
static double budget_tolerance(const plush_scene_bake *b, const plush__bake_tracks *t, double tol, size_t room,
                               bool *keep, uint8_t (*curves)[4][4])
{
    size_t least = (t->bones + (b->physics ? b->physics_bone_count : 0)) * (b->frame_count > 1 ? 2 : 1);
    if (least > room || !(tol > 0))
        return 0;
    need_ctx c = {.b = b, .t = t, .keep = keep, .curves = curves};
    return plush__bake_least_fitting(need_at, &c, tol, room, 64, 8);
}

/* The bone keys the budget leaves for the baked tracks when the motion already holds v's keys (the input's,
 * and its other sections): the key budget counts bone and morph keys, the byte budget the VMD's bytes. */
static size_t key_room(const plush_scene_bake *b, const plush_vmd_motion *v)
{
    size_t room = SIZE_MAX, held = v->bone_key_count + v->morph_key_count;
    if (b->key_budget)
        room = b->key_budget > held ? b->key_budget - held : 0;
    if (b->byte_budget) {
        /* the header and section counts, then each section's records (VMD's fixed sizes) */
        double bytes = 30 + 20 + 6 * 4 + 111.0 * (double)v->bone_key_count + 23.0 * (double)v->morph_key_count +
                       61.0 * (double)v->camera_key_count + 28.0 * (double)v->light_key_count +
                       9.0 * (double)v->shadow_key_count;
        for (size_t i = 0; i < v->property_key_count; i++)
            bytes += 9 + 21.0 * v->property_keys[i].ik_count;
        double left = (double)b->byte_budget - bytes;
        size_t fit = left > 0 ? (size_t)(left / 111.0) : 0;
        room = fit < room ? fit : room;
    }
    return room;
}

size_t plush__bake_track_room(const plush_scene_bake *b)
{
    if (!b->key_budget && !b->byte_budget)
        return SIZE_MAX;
    plush_vmd_motion *v = plush_vmd_create();
    const plush_vmd_motion *in = b->motion;
    if (!v)
        return SIZE_MAX;
    size_t room = SIZE_MAX;
    if (in) {
        v->bone_keys = plush_arena_array(plush_vmd_arena(v), in->bone_key_count ? in->bone_key_count : 1,
                                         sizeof *v->bone_keys);
        plush_diag d = {0};
        if (!v->bone_keys ||
            known_keys(b->binding->model, in, b->physics ? b->physics_driven : NULL, v, &d) != PLUSH_OK) {
            plush_vmd_free(v);
            return SIZE_MAX;
        }
        v->camera_key_count = in->camera_key_count;
        v->light_key_count = in->light_key_count;
        v->shadow_key_count = in->shadow_key_count;
        v->property_key_count = in->property_key_count;
        v->property_keys = in->property_keys;
    }
    room = key_room(b, v);
    plush_vmd_free(v);
    return room;
}

size_t plush__bake_need_sampled(const plush_scene_bake *b, double tol, size_t tracks, double *per_track)
{
    size_t F = b->frame_count, T = b->triangle_count, step = tracks && T > tracks ? T / tracks : 1, n = 0, used = 0;
    bool *keep = malloc((F ? F : 1) * sizeof *keep);
    uint8_t(*curves)[4][4] = malloc((F ? F : 1) * sizeof *curves);
    *per_track = 0;
    if (!keep || !curves) {
        free(keep), free(curves);
        return SIZE_MAX;
    }
    for (size_t i = step / 2; i < T; i += step, used++)
        n += plush__bake_reduce_track((const float(*)[7])b->keys + i, T, b->frames, F, b->reach[i], tol, keep, curves);
    *per_track = used ? (double)n / (double)used : 0;
    size_t physics = plush__bake_physics_key_need(b, tol, keep, curves);
    free(keep), free(curves);
    return physics;
}

/* Appends the tracks' kept keys to v at the keys' tolerance tol (curves fitted), then the physics keys. */
static plush_status write_tracks(const plush_scene_bake *b, const plush__bake_tracks *t, const plush_str *names,
                                 double tol, size_t room, plush_vmd_motion *v, bool *keep, uint8_t (*curves)[4][4],
                                 const bool *forced, plush_diag *diag)
{
    size_t k = v->bone_key_count;
    /* track by track: the keys interpolation cannot stand for (every key when the tolerance is negative), and
     * those the RMS guard adds (forced, bone-major; NULL: none) */
    for (size_t i = 0; i < t->bones; i++) {
        plush__bake_reduce_track_forced(t->keys + i, t->bones, b->frames, b->frame_count, t->reach[i], tol,
                                        forced ? forced + i * b->frame_count : NULL, keep, curves);
        for (size_t f = 0; f < b->frame_count; f++) {
            if (!keep[f])
                continue;
            plush_vmd_bone_key *key = &v->bone_keys[k++];
            const float *src = t->keys[f * t->bones + i];
            key->name = names[i];
            key->frame = b->frames[f];
            memcpy(key->translation, src, 3 * sizeof(float));
            memcpy(key->rotation, src + 3, 4 * sizeof(float));
            plush_vmd_curves_write((const uint8_t(*)[4])curves[f], key->interpolation);
        }
    }
    v->bone_key_count = k;
    return plush__bake_physics_keys(b, tol, v, room, diag);
}

plush_status plush__bake_motion(const plush_scene_bake *b, plush__bake_plan *plan, plush_vmd_motion **out,
                                plush_diag *diag)
{
    if (!b || !out)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no bake or no place for the motion");
    *out = NULL;
    plush__bake_plan local;
    plan = plan ? plan : &local;
    *plan = (plush__bake_plan){0};
    plush_vmd_motion *v = plush_vmd_create();
    if (!v)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    plush_arena *arena = plush_vmd_arena(v);
    const plush_vmd_motion *in = b->motion;
    const plush_pmx_model *m = b->binding->model;
    size_t own = in ? in->bone_key_count : 0;
    plush__bake_tracks tracks;
    plush__bake_tracks_get(b, &tracks);
    size_t bones = tracks.bones;
    double tolerance = tracks.tolerance;
    size_t baked = b->frame_count * bones, physics = plush__bake_physics_key_count(b);
    if (baked / (b->frame_count ? b->frame_count : 1) != bones || own + baked < own || own + baked + physics < physics) {
        plush_vmd_free(v);
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, NULL, -1, "too many baked keys");
    }
    v->model_name = b->vmd_model_name.s ? b->vmd_model_name : m->name;
    v->model_name.raw = NULL;
    v->model_name.raw_len = 0;
    v->bone_keys = plush_arena_array(arena, own + baked + physics ? own + baked + physics : 1, sizeof *v->bone_keys);
    plush_str *names = plush_arena_array(arena, bones ? bones : 1, sizeof *names);
    if (!v->bone_keys || !names) {
        plush_vmd_free(v);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    if (in) {
        plush_status st = known_keys(m, in, b->physics ? b->physics_driven : NULL, v, diag);
        if (st != PLUSH_OK) {
            plush_vmd_free(v);
            return st;
        }
        v->camera_key_count = in->camera_key_count;
        v->camera_keys = in->camera_keys;
        v->light_key_count = in->light_key_count;
        v->light_keys = in->light_keys;
        v->shadow_key_count = in->shadow_key_count;
        v->shadow_keys = in->shadow_keys;
        v->property_key_count = in->property_key_count;
        v->property_keys = in->property_keys;
    }
    for (size_t i = 0; i < bones; i++) {
        char name[16];
        plush__bake_pseudo_name(i, name);
        size_t len = strlen(name);
        names[i] = (plush_str){.s = plush_arena_strdup(arena, name, len), .len = (uint32_t)len};
        if (!names[i].s) {
            plush_vmd_free(v);
            return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        }
    }
    bool *keep = malloc((b->frame_count ? b->frame_count : 1) * sizeof *keep);
    uint8_t(*curves)[4][4] = malloc((b->frame_count ? b->frame_count : 1) * sizeof *curves);
    if (!keep || !curves) {
        free(keep), free(curves);
        plush_vmd_free(v);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    /* the budget: by default the keys' tolerance grows until the keys fit it; a tolerance the user set holds,
     * and the plan says how far over the budget that goes and at what error the keys would fit */
    size_t held = v->bone_key_count, room = key_room(b, v);
    /* what the fit spends: half the tolerance, or its RMS when the budget chose it past that */
    double share = b->fit && b->tolerance > 0 ? fmax(b->tolerance - tolerance, b->fit->rms) : 0.0;
    double tol = tolerance;
    plan->budget = b->key_budget;
    /* written at the tolerance first; only keys over the budget search for the one that fits (each count is a
     * whole reduction, so a motion within the budget is reduced once) */
    plush_status st = write_tracks(b, &tracks, names, tol, own + baked + physics, v, keep, curves, NULL, diag);
    if (st == PLUSH_OK && room != SIZE_MAX && v->bone_key_count - held > room) {
        double base = tolerance > 0 ? tolerance : 1e-3 * plush_pmx_height(m);
        double bt = base > 0 ? budget_tolerance(b, &tracks, base, room, keep, curves) : 0;
        if (b->budget_first && tolerance > 0 && bt > 0) {
            tol = bt, plan->budget_limited = true;
            /* the worst vertex gives; the RMS over the soft part is held to the tolerance asked where the room
             * allows: the guard at the budget's tolerance, then at tolerances a tenth apart above it (fewer keys
             * each, more room for the guard's), the first that holds it; when none does, the one whose RMS and
             * worst vertex miss least as a player's bars weigh them (RMS_WEIGHT) */
            rms_guard guard;
            bool guarded = guard_init(&guard, b, &tracks, tolerance);
            bool *best = guarded ? malloc(tracks.bones * b->frame_count * sizeof *best) : NULL;
            double best_score = INFINITY, best_tol = tol, best_rms = 0;
            size_t best_added = 0;
            for (int k = 0; best && k <= GUARD_TOLERANCES; k++) {
                double at = bt * pow(GUARD_STEP, k);
                size_t phys = plush__bake_physics_key_need(b, at, keep, curves);
                if (phys >= room)
                    break;
                size_t got = guard_run(&guard, at, room - phys, keep, curves);
                if (k == 0) /* the bound with no key added, at the budget's tolerance */
                    plan->unguarded_rms = guard.first;
                double score = fmax(guard.worst / tolerance, at / (RMS_WEIGHT * tolerance));
                if (got > room - phys || !(score < best_score))
                    continue;
                best_score = score, best_tol = at, best_rms = guard.worst, best_added = guard.added;
                memcpy(best, guard.forced, tracks.bones * b->frame_count * sizeof *best);
                if (guard.worst <= tolerance)
                    break;
            }
            if (best && isfinite(best_score)) {
                tol = best_tol;
                memcpy(guard.forced, best, tracks.bones * b->frame_count * sizeof *best);
                plan->guard_keys = best_added;
                plan->guard_rms = best_rms;
            } else if (guarded) {
                guard_free(&guard);
                guarded = false;
            }
            free(best);
            v->bone_key_count = held;
            st = write_tracks(b, &tracks, names, tol, own + baked + physics, v, keep, curves,
                              guarded ? guard.forced : NULL, diag);
            if (guarded)
                guard_free(&guard);
        } else {
            plan->budget_error = bt > 0 ? bt + share : 0;
        }
    }
    free(keep), free(curves);
    if (st != PLUSH_OK) {
        plush_vmd_free(v);
        return st;
    }
    plan->key_tolerance = tol;
    plan->error = tol < 0 ? tol : tol + share;
    if (room != SIZE_MAX && v->bone_key_count - held > room)
        plan->over = v->bone_key_count - held - room;
    *out = v;
    return PLUSH_OK;
}

plush_status plush_scene_bake_motion(const plush_scene_bake *b, plush_vmd_motion **out, plush_diag *diag)
{
    return plush__bake_motion(b, NULL, out, diag);
}

plush_status plush_scene_bake_write(const plush_scene_bake *b, const char *pmx_path, const char *vmd_path,
                                    plush_diag *diag)
{
    return plush_scene_bake_write_with(b, pmx_path, vmd_path, NULL, diag);
}

plush_status plush_scene_bake_write_with(const plush_scene_bake *b, const char *pmx_path, const char *vmd_path,
                                         const plush_scene_bake_write_options *options, plush_diag *diag)
{
    plush_pmx_model *model = NULL;
    plush_vmd_motion *motion = NULL;
    plush_buf pmx = {0}, vmd = {0};
    if (!b || !pmx_path || !vmd_path)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no bake or no file names");
    plush_status st = plush_scene_bake_model(b, &model, diag);
    /* the baked physics is the PMX + VMD's: its rigid bodies follow their bones, its driven bones carry names
     * a VMD tells apart (glTF, which has neither limit nor physics, keeps the model's) */
    if (st == PLUSH_OK)
        st = plush__bake_physics_model(b, model, diag);
    if (st == PLUSH_OK)
        st = plush__bake_textures(model, pmx_path, vmd_path, options, diag);
    plush__bake_plan plan = {0};
    if (st == PLUSH_OK)
        st = plush__bake_motion(b, &plan, &motion, diag);
    /* Both files are built in memory first, so a failure leaves neither behind. */
    if (st == PLUSH_OK)
        st = plush_pmx_write(model, &(plush_pmx_write_options){.version = PLUSH_PMX_WRITE_20, .lossy = true}, &pmx,
                             diag);
    /* a failure to encode names the file it was for */
    const char *file = diag ? diag->file : NULL;
    if (st == PLUSH_OK && diag)
        diag->file = vmd_path;
    if (st == PLUSH_OK)
        st = plush_vmd_write(motion, &(plush_vmd_write_options){.truncate_names = true}, &vmd, diag);
    if (st == PLUSH_OK && diag)
        diag->file = file;
    /* Both files or neither: both go to temporary files first and are renamed as one set; a signal
     * during the renames lets the set finish (plush_file_set_commit), so OUTDIR never mixes two runs. */
    plush_file_set *set = NULL;
    if (st == PLUSH_OK)
        st = plush_file_set_create(&set, diag);
    if (st == PLUSH_OK)
        st = plush_file_set_add(set, pmx_path, pmx.data, pmx.size, diag);
    if (st == PLUSH_OK) {
        if (diag)
            diag->file = vmd_path;
        st = plush_file_set_add(set, vmd_path, vmd.data, vmd.size, diag);
    }
    if (st == PLUSH_OK)
        st = plush_file_set_commit(set, diag);
    if (st == PLUSH_OK && options && options->stats)
        *options->stats = (plush_scene_bake_stats){
            .bones = b->fit ? b->fit->bones : b->triangle_count,
            .triangles = b->triangle_count, .carried = b->fit ? b->fit->carried : 0,
            .keys_recorded = b->frame_count * b->triangle_count,
            .keys = motion->bone_key_count, .pmx_bytes = pmx.size, .vmd_bytes = vmd.size,
            .fit_rms = b->fit ? b->fit->rms : 0, .fit_worst = b->fit ? b->fit->worst : 0,
            .fit_seconds = b->fit ? b->fit->seconds : 0, .physics_bones = b->physics ? b->physics_bone_count : 0,
            .physics_bodies = b->physics ? b->physics_body_count : 0, .physics_renamed = b->physics_renamed,
            .error = plan.error, .budget_limited = plan.budget_limited, .key_budget = plan.budget,
            .over_budget = plan.over, .budget_error = plan.budget_error,
            .rms_keys = plan.guard_keys, .rms_bound = plan.guard_rms,
            .fit_tried_seconds = b->fit ? 0 : b->fit_tried_seconds};
    plush_file_set_destroy(set);
    if (st == PLUSH_OK && diag)
        diag->file = file;
    plush_buf_free(&pmx);
    plush_buf_free(&vmd);
    plush_pmx_free(model);
    plush_vmd_free(motion);
    return st;
}

plush_status plush_scene_bake_fit(plush_scene_bake *b, size_t bones, plush_diag *diag)
{
    if (!b)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no bake to fit");
    /* a bake two exports share (pmx+vmd and glTF) is fitted once */
    if (b->fit_done && b->fit_asked == bones && b->fit_frames == b->frame_count)
        return PLUSH_OK;
    plush__bake_fit_free(b->fit);
    b->fit = NULL;
    b->fit_done = false;
    plush_status st = PLUSH_OK;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (bones || b->tolerance > 0) /* else every key asked for: nothing may be given up */
        st = plush__bake_fit_run(b, bones, b->tolerance, &b->fit, diag);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    b->fit_tried_seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (st == PLUSH_OK)
        b->fit_done = true, b->fit_asked = bones, b->fit_frames = b->frame_count;
    return st;
}

void plush_scene_bake_destroy(plush_scene_bake *b)
{
    if (!b)
        return;
    plush__bake_fit_free(b->fit);
    free(b->frames);
    free(b->keys);
    free(b->physics_keys);
    plush_proxy_patch_destroy(b->patch);
    plush_arena_free(&b->arena);
    free(b);
}
