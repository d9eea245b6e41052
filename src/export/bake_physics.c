/* The bake with its physics (plush run --bake-physics): every bone a rigid body drives (physics, or physics
 * with the bone's position) is keyed as plush computed it, and its rigid body follows its bone in the baked
 * PMX, so that a player with physics on or off replays plush's frames instead of simulating them again.
 *
 * A key is MMD's local transform: the bone's global is its parent's times T(rest offset + translation) times
 * R(rotation), so translation = R_p^T (t_b - t_p) - (rest position - parent's rest position) and rotation =
 * R_p^T R_b. Keys are kept where interpolation would miss (bake_keys.c), each bone with the keys' share of
 * the tolerance divided by the most keyed bones on one chain through it (a vertex's miss adds up along its
 * chain), at the farthest vertex the bone or a bone below it carries.
 *
 * A player moves some bones over their keys: it solves an IK chain again from the keys, and adds a bone's
 * append (grant) source to its key. Where that would undo plush's frames -- an IK chain with a driven
 * target or link (a necktie on physics bodies with its own IK bone), a bone appending a driven bone, a
 * driven bone with an append of its own -- the bones concerned are keyed as plush moved them too, and the
 * baked PMX turns that IK and that append off: the keys already hold what they gave.
 *
 * The driven bones' names as the VMD holds them (Shift-JIS, 15 bytes) are settled in bake_names.c. */
#include "core/geom.h"
#include "core/common.h"
#include "export/bake_internal.h"
#include "plush/sys/core.h"
#include "plush/sys/vmd.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether bone a lies on b's chain (a == b, or a's parents reach b). */
static bool below(const plush_pmx_model *m, int32_t a, int32_t b)
{
    for (size_t steps = 0; a >= 0 && (size_t)a < m->bone_count && steps <= m->bone_count; steps++) {
        if (a == b)
            return true;
        a = m->bones[a].parent;
    }
    return false;
}

static bool appends(const plush_pmx_bone *bone)
{
    return (bone->flags & (PLUSH_PMX_BONE_APPEND_ROTATE | PLUSH_PMX_BONE_APPEND_TRANSLATE)) != 0;
}

static bool in_model(const plush_pmx_model *m, int32_t bone)
{
    return bone >= 0 && (size_t)bone < m->bone_count;
}

/* Whether bone is an IK bone whose target or a link is keyed: a player would solve it again over them. */
static bool ik_touches(const plush_pmx_model *m, const plush_pmx_bone *bone, const bool *keyed)
{
    if (!(bone->flags & PLUSH_PMX_BONE_IK))
        return false;
    bool touches = in_model(m, bone->ik_target) && keyed[bone->ik_target];
    for (uint32_t l = 0; l < bone->ik_link_count && !touches; l++)
        touches = in_model(m, bone->ik_links[l].bone) && keyed[bone->ik_links[l].bone];
    return touches;
}

/* Adds to keyed what a player would move over the keys of the bones keyed already: every bone appending a
 * keyed bone, every target and link of an IK chain through one, and so on from those (a worklist over
 * the bones each bone leads to: its appenders and the IK bones it is in). The number added; false when
 * out of memory. */
static bool key_overriders(const plush_pmx_model *m, bool *keyed, size_t *added)
{
    size_t nb = m->bone_count, edges = 0;
    *added = 0;
    for (size_t i = 0; i < nb; i++) {
        const plush_pmx_bone *bone = &m->bones[i];
        edges += appends(bone) && in_model(m, bone->append_parent);
        if (bone->flags & PLUSH_PMX_BONE_IK)
            edges += 1 + bone->ik_link_count;
    }
    size_t *start = calloc(nb + 1, sizeof *start), *to = malloc((edges ? edges : 1) * sizeof *to);
    size_t *queue = malloc((nb ? nb : 1) * sizeof *queue);
    bool *solved = calloc(nb ? nb : 1, sizeof *solved);
    if (!start || !to || !queue || !solved) {
        free(start), free(to), free(queue), free(solved);
        return false;
    }
    /* counting sort of the edges by their source: from a bone to what it leads to */
#define PLUSH_EACH_EDGE(EDGE)                                                        \
    for (size_t i = 0; i < nb; i++) {                                                \
        const plush_pmx_bone *bone = &m->bones[i];                                   \
        if (appends(bone) && in_model(m, bone->append_parent))                       \
            EDGE((size_t)bone->append_parent, i);                                    \
        if (!(bone->flags & PLUSH_PMX_BONE_IK))                                      \
            continue;                                                                \
        if (in_model(m, bone->ik_target))                                            \
            EDGE((size_t)bone->ik_target, i);                                        \
        for (uint32_t l = 0; l < bone->ik_link_count; l++)                           \
            if (in_model(m, bone->ik_links[l].bone))                                 \
                EDGE((size_t)bone->ik_links[l].bone, i);                             \
    }
#define PLUSH_COUNT(from, dest) (void)(dest), start[(from) + 1]++
    PLUSH_EACH_EDGE(PLUSH_COUNT)
    for (size_t i = 0; i < nb; i++)
        start[i + 1] += start[i];
    size_t *fill = queue; /* the queue's room serves as the fill cursors first */
    memcpy(fill, start, nb * sizeof *fill);
#define PLUSH_PLACE(from, dest) to[fill[from]++] = (dest)
    PLUSH_EACH_EDGE(PLUSH_PLACE)
#undef PLUSH_PLACE
#undef PLUSH_COUNT
#undef PLUSH_EACH_EDGE
    size_t head = 0, tail = 0;
    for (size_t i = 0; i < nb; i++)
        if (keyed[i])
            queue[tail++] = i;
    while (head < tail) {
        size_t k = queue[head++];
        for (size_t e = start[k]; e < start[k + 1]; e++) {
            size_t d = to[e];
            const plush_pmx_bone *bone = &m->bones[d];
            if (appends(bone) && bone->append_parent == (int32_t)k && !keyed[d]) {
                keyed[d] = true, queue[tail++] = d, (*added)++;
            }
            if ((bone->flags & PLUSH_PMX_BONE_IK) && !solved[d]) {
                solved[d] = true;
                for (int64_t l = -1; l < (int64_t)bone->ik_link_count; l++) {
                    int32_t c = l < 0 ? bone->ik_target : bone->ik_links[l].bone;
                    if (in_model(m, c) && !keyed[c])
                        keyed[c] = true, queue[tail++] = (size_t)c, (*added)++;
                }
            }
        }
    }
    free(start), free(to), free(queue), free(solved);
    return true;
}

/* The share of PMX vertex v's bone weights the baked model keeps (bake_model.c): all of them when it is not
 * bound or its row has no triangle to hand it to, else 1 - its row's proxy share. */
static double bone_share(const plush_scene_bake *b, size_t v)
{
    int64_t row = plush_scene_binding_row(b->binding, (uint32_t)v);
    if (row < 0)
        return 1.0;
    const plush_proxy_binding *pb = b->binding->binding;
    for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++)
        if (pb->triangles[row][k] >= 0 && (size_t)pb->triangles[row][k] < b->triangle_count && pb->weights[row][k] > 0)
            return pb->proxy_share ? 1.0 - (double)pb->proxy_share[row] : 0.0;
    return 1.0;
}

plush_status plush__bake_physics_begin(plush_scene_bake *b, plush_diag *diag)
{
    const plush_pmx_model *m = b->binding->model;
    size_t nb = m->bone_count;
    bool *driven = plush_arena_array(&b->arena, nb ? nb : 1, sizeof *driven);
    if (!driven)
        return plush__no_memory(diag);
    memset(driven, 0, (nb ? nb : 1) * sizeof *driven);
    size_t count = 0;
    b->physics_body_count = 0;
    for (size_t r = 0; r < m->rigid_body_count; r++) {
        const plush_pmx_rigid_body *rb = &m->rigid_bodies[r];
        if (rb->mode == PLUSH_PMX_RIGID_FOLLOW_BONE || rb->bone < 0 || (size_t)rb->bone >= nb)
            continue;
        b->physics_body_count++;
        count += !driven[rb->bone];
        driven[rb->bone] = true;
    }
    size_t added = 0;
    if (!key_overriders(m, driven, &added))
        return plush__no_memory(diag);
    count += added;
    b->physics = true;
    b->physics_driven = driven;
    b->physics_bone_count = count;
    b->physics_bones = plush_arena_array(&b->arena, count ? count : 1, sizeof *b->physics_bones);
    b->physics_reach = plush_arena_array(&b->arena, count ? count : 1, sizeof *b->physics_reach);
    if (!b->physics_bones || !b->physics_reach)
        return plush__no_memory(diag);
    count = 0;
    for (size_t i = 0; i < nb; i++)
        if (driven[i])
            b->physics_bones[count++] = (uint32_t)i;
    /* reach: over the vertices the bone or a bone below it carries in the baked model, the farthest from its
     * rest position, each distance times the share of the vertex that rides on bones at all (a vertex the bake
     * hands wholly to the proxy's bones rides on none, one in the hand-over band by 1 - its proxy share). Not
     * times the vertex's weight on this bone: a vertex two keyed bones share (a breast between 左胸 and 右胸, a
     * hem between two skirt chains) moves by the weighted sum of both bones' misses, each within its share
     * only if measured at the whole distance; weighted, Luka's exact bake said within 0.276 and replayed 0.328
     * off at such a vertex */
    double *rides = malloc((m->vertex_count ? m->vertex_count : 1) * sizeof *rides);
    if (!rides)
        return plush__no_memory(diag);
    for (size_t v = 0; v < m->vertex_count; v++)
        rides[v] = bone_share(b, v);
    for (size_t k = 0; k < count; k++) {
        int32_t bone = (int32_t)b->physics_bones[k];
        const float *head = m->bones[bone].position;
        double reach = 0;
        for (size_t v = 0; v < m->vertex_count; v++) {
            const plush_pmx_vertex *vx = &m->vertices[v];
            double carried = 0;
            for (int j = 0; j < 4 && rides[v] > 0; j++)
                if (vx->weights[j] > 0 && below(m, vx->bones[j], bone))
                    carried += vx->weights[j];
            if (!(carried > 0))
                continue;
            double d = 0;
            for (int c = 0; c < 3; c++)
                d += ((double)vx->position[c] - head[c]) * ((double)vx->position[c] - head[c]);
            reach = fmax(reach, fmin(1.0, rides[v]) * sqrt(d));
        }
        b->physics_reach[k] = reach;
    }
    free(rides);
    /* per keyed bone, the most keyed bones on one chain through it (its keyed ancestors, itself, and the
     * longest run of keyed bones below it): a vertex's miss adds up along its chain, so each bone's keys get
     * the tolerance over that count -- a short skirt chain is not held to a long braid's share */
    size_t *below_count = calloc(nb ? nb : 1, sizeof *below_count);
    b->physics_chain = plush_arena_array(&b->arena, count ? count : 1, sizeof *b->physics_chain);
    if (!below_count || !b->physics_chain) {
        free(below_count);
        return plush__no_memory(diag);
    }
    for (size_t k = 0; k < count; k++) {
        int32_t x = (int32_t)b->physics_bones[k];
        below_count[x] = below_count[x] ? below_count[x] : 1;
        size_t run = 1, steps = 0;
        for (int32_t a = m->bones[x].parent; a >= 0 && (size_t)a < nb && steps <= nb; a = m->bones[a].parent, steps++)
            if (driven[a]) {
                below_count[a] = below_count[a] > run + 1 ? below_count[a] : run + 1;
                run++;
            }
    }
    for (size_t k = 0; k < count; k++) {
        size_t up = 0, steps = 0;
        for (int32_t a = (int32_t)b->physics_bones[k]; a >= 0 && (size_t)a < nb && steps <= nb; a = m->bones[a].parent, steps++)
            up += driven[a];
        size_t chain = up + below_count[b->physics_bones[k]] - 1;
        b->physics_chain[k] = chain ? chain : 1;
    }
    free(below_count);
    return PLUSH_OK;
}

/* Bone's VMD key from the globals (column-major mat4): its local transform less its rest offset from the
 * parent, the rotation in the hemisphere of prev (NULL: w >= 0). */
static void driven_key(const plush_pmx_model *m, const float (*g)[16], uint32_t bone, const float *prev, float key[7])
{
    int32_t parent = m->bones[bone].parent;
    bool has_parent = parent >= 0 && (size_t)parent < m->bone_count;
    double gb[12], gp[12], offset[3];
    plush__bake_global(g[bone], gb);
    if (has_parent)
        plush__bake_global(g[parent], gp);
    for (int k = 0; k < 3; k++)
        offset[k] = (double)m->bones[bone].position[k] - (has_parent ? m->bones[parent].position[k] : 0);
    plush__bake_local_key(gb, has_parent ? gp : NULL, offset, prev, key);
}

plush_status plush__bake_physics_frame(plush_scene_bake *b, const plush_anim *anim, plush_diag *diag)
{
    if (!b->physics || b->frame_count == 0)
        return PLUSH_OK;
    size_t f = b->frame_count - 1, per = b->physics_bone_count ? b->physics_bone_count : 1;
    if (f >= b->physics_capacity) {
        size_t cap = b->physics_capacity ? 2 * b->physics_capacity : 64;
        while (cap <= f)
            cap *= 2;
        float(*keys)[7] = cap <= SIZE_MAX / per / sizeof *keys ? realloc(b->physics_keys, cap * per * sizeof *keys)
                                                               : NULL;
        if (!keys)
            return plush__no_memory(diag);
        b->physics_keys = keys;
        b->physics_capacity = cap;
    }
    const plush_pmx_model *m = b->binding->model;
    const float(*g)[16] = plush_anim_bone_globals(anim);
    for (size_t k = 0; k < b->physics_bone_count; k++)
        driven_key(m, g, b->physics_bones[k], f ? b->physics_keys[(f - 1) * per + k] : NULL,
                   b->physics_keys[f * per + k]);
    return PLUSH_OK;
}

size_t plush__bake_physics_key_count(const plush_scene_bake *b)
{
    return b->physics ? b->frame_count * b->physics_bone_count : 0;
}

/* Keyed bone k's share of the tolerance: over the most keyed bones on a chain through it. */
static double physics_share(const plush_scene_bake *b, size_t k, double tolerance)
{
    return tolerance >= 0 ? tolerance / (double)b->physics_chain[k] : tolerance;
}

size_t plush__bake_physics_key_need(const plush_scene_bake *b, double tolerance, bool *keep, uint8_t (*curves)[4][4])
{
    if (!b->physics || b->physics_bone_count == 0)
        return 0;
    size_t n = 0;
    for (size_t k = 0; k < b->physics_bone_count; k++)
        n += plush__bake_reduce_track((const float(*)[7])b->physics_keys + k, b->physics_bone_count, b->frames,
                                      b->frame_count, b->physics_reach[k], physics_share(b, k, tolerance), keep,
                                      curves);
    return n;
}

plush_status plush__bake_physics_keys(const plush_scene_bake *b, double tolerance, plush_vmd_motion *v, size_t room,
                                      plush_diag *diag)
{
    if (!b->physics || b->physics_bone_count == 0)
        return PLUSH_OK;
    const plush_pmx_model *m = b->binding->model;
    bool *keep = malloc((b->frame_count ? b->frame_count : 1) * sizeof *keep);
    uint8_t(*curves)[4][4] = malloc((b->frame_count ? b->frame_count : 1) * sizeof *curves);
    if (!keep || !curves) {
        free(keep), free(curves);
        return plush__no_memory(diag);
    }
    for (size_t k = 0; k < b->physics_bone_count; k++) {
        plush__bake_reduce_track((const float(*)[7])b->physics_keys + k, b->physics_bone_count, b->frames,
                                 b->frame_count, b->physics_reach[k], physics_share(b, k, tolerance), keep, curves);
        for (size_t f = 0; f < b->frame_count; f++) {
            if (!keep[f])
                continue;
            if (v->bone_key_count >= room) {
                free(keep), free(curves);
                return plush_diag_fail(diag, PLUSH_E_RANGE, -1, NULL, -1, "too many baked keys");
            }
            plush_vmd_bone_key *key = &v->bone_keys[v->bone_key_count++];
            const float *src = b->physics_keys[f * b->physics_bone_count + k];
            key->name = b->physics_names && b->physics_names[k].s ? b->physics_names[k] : m->bones[b->physics_bones[k]].name;
            key->frame = b->frames[f];
            memcpy(key->translation, src, 3 * sizeof(float));
            memcpy(key->rotation, src + 3, 4 * sizeof(float));
            plush_vmd_curves_write((const uint8_t(*)[4])curves[f], key->interpolation);
        }
    }
    free(keep), free(curves);
    return PLUSH_OK;
}

plush_status plush__bake_physics_model(const plush_scene_bake *b, plush_pmx_model *o, plush_diag *diag)
{
    if (!b->physics || b->physics_body_count == 0)
        return PLUSH_OK;
    const plush_pmx_model *m = b->binding->model;
    plush_pmx_rigid_body *bodies = plush_arena_array(plush_pmx_arena(o), m->rigid_body_count, sizeof *bodies);
    if (!bodies)
        return plush__no_memory(diag);
    memcpy(bodies, m->rigid_bodies, m->rigid_body_count * sizeof *bodies);
    for (size_t r = 0; r < m->rigid_body_count; r++)
        if (bodies[r].mode != PLUSH_PMX_RIGID_FOLLOW_BONE && bodies[r].bone >= 0 && (size_t)bodies[r].bone < m->bone_count)
            bodies[r].mode = PLUSH_PMX_RIGID_FOLLOW_BONE;
    o->rigid_bodies = bodies;
    /* the keys hold what an IK through keyed bones and a keyed bone's append gave: both off in the bake
     * (o's bones are its own copy, see plush_scene_bake_model) */
    for (size_t i = 0; i < m->bone_count && i < o->bone_count; i++) {
        plush_pmx_bone *bone = &o->bones[i];
        if (ik_touches(m, &m->bones[i], b->physics_driven)) {
            bone->flags &= (uint16_t)~PLUSH_PMX_BONE_IK;
            bone->ik_target = -1, bone->ik_loop_count = 0, bone->ik_limit_angle = 0;
            bone->ik_link_count = 0, bone->ik_links = NULL;
        }
        if (b->physics_driven[i] && appends(bone)) {
            bone->flags &= (uint16_t)~(PLUSH_PMX_BONE_APPEND_ROTATE | PLUSH_PMX_BONE_APPEND_TRANSLATE |
                                       PLUSH_PMX_BONE_APPEND_LOCAL);
            bone->append_parent = -1, bone->append_ratio = 0;
        }
    }
    for (size_t k = 0; b->physics_names && k < b->physics_bone_count; k++)
        if (b->physics_names[k].s)
            o->bones[b->physics_bones[k]].name = b->physics_names[k];
    return PLUSH_OK;
}
