/* The run's budget from its inputs alone: what a frame of IK and soft bodies will cost, checked before
 * anything is built for the run (a hostile or broken model must be refused in a moment, not after hours or
 * a machine's memory). The unit costs are measured (docs/run.md, "Limits"); the limits are derived there. */
#include "plush/scene.h"
#include "plush/sys/anim.h"
#include "plush/sys/core.h"
#include "plush/sys/physics.h"
#include "scene/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Seconds per bone an IK link's turn moves (plush__anim_update_path/_subtree), measured on a 1,000-bone
 * chain under four IK bones of 255 loops: 1.56 s a frame for 5.1e8 bone updates. */
#define IK_BONE_UPDATE_SECONDS 3.1e-9
/* Seconds per soft-body link and solver iteration, measured on a TriMesh of 10,000 faces and 15,000 links
 * (48 ms a frame at 10 iterations, 430 ms at 1,000, two steps a frame), and per face and physics step
 * (collisions, face tree, normals), measured on the demo bear's cage of 1,000 faces at 1,000 Hz (0.77 ms a
 * step, 0.39 of it its 20 iterations); the dense sphere's faces cost 2.4 us each, six times as much, but a
 * budget must not refuse the cages plush makes. */
#define SOFT_LINK_ITERATION_SECONDS 1.3e-8
#define SOFT_FACE_STEP_SECONDS 4e-7
/* The proxy's per-part vertex maps together: the demo bear's whole run peaks near 110 MB, and bookkeeping
 * must not outgrow a run more than twice over (docs/run.md). */
#define PROXY_MAP_BYTES 256e6

static double clamp_count(int32_t n, double most)
{
    return n < 0 ? 0.0 : (double)n > most ? most : (double)n;
}

/* Per bone, how many bones a turn of it moves (itself and every bone below it), in linear time; a bone on a
 * parent cycle moves all of them (the worst case: the model is refused elsewhere, the estimate stays safe). */
static double *subtree_sizes(const plush_pmx_model *m)
{
    size_t n = m->bone_count;
    double *size = malloc((n ? n : 1) * sizeof *size);
    uint32_t *children = calloc(n ? n : 1, sizeof *children), *queue = malloc((n ? n : 1) * sizeof *queue);
    if (!size || !children || !queue) {
        free(size), free(children), free(queue);
        return NULL;
    }
    for (size_t b = 0; b < n; b++) {
        size[b] = 1;
        int32_t p = m->bones[b].parent;
        if (p >= 0 && (size_t)p < n && (size_t)p != b)
            children[p]++;
    }
    size_t head = 0, tail = 0;
    for (size_t b = 0; b < n; b++)
        if (!children[b])
            queue[tail++] = (uint32_t)b;
    while (head < tail) {
        uint32_t b = queue[head++];
        int32_t p = m->bones[b].parent;
        if (p < 0 || (size_t)p >= n || (uint32_t)p == b)
            continue;
        size[p] += size[b];
        if (--children[p] == 0)
            queue[tail++] = (uint32_t)p;
    }
    for (size_t b = 0; b < n; b++)
        if (children[b])
            size[b] = (double)n; /* on a cycle: never reached by the leaves */
    free(children), free(queue);
    return size;
}

/* IK: per IK bone, (loops + 1) passes over its links (the first sets the chain up), each link's turn
 * moving the bones below it. */
static plush_status estimate_ik(const plush_pmx_model *m, plush_scene_estimate *e, double *worst, plush_diag *diag)
{
    bool any = false;
    for (size_t b = 0; b < m->bone_count && !any; b++)
        any = (m->bones[b].flags & PLUSH_PMX_BONE_IK) && m->bones[b].ik_link_count;
    if (!any)
        return PLUSH_OK;
    double *size = subtree_sizes(m);
    if (!size)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    for (size_t b = 0; b < m->bone_count; b++) {
        const plush_pmx_bone *bone = &m->bones[b];
        if (!(bone->flags & PLUSH_PMX_BONE_IK))
            continue;
        double moved = 0;
        for (uint32_t k = 0; k < bone->ik_link_count; k++) {
            int32_t l = bone->ik_links[k].bone;
            moved += l >= 0 && (size_t)l < m->bone_count ? size[l] : 1.0;
        }
        double s = (clamp_count(bone->ik_loop_count, PLUSH_ANIM_IK_MAX_LOOPS) + 1) * moved * IK_BONE_UPDATE_SECONDS;
        e->ik_seconds += s;
        if (s > *worst)
            *worst = s, e->worst_ik = (int64_t)b;
    }
    free(size);
    return PLUSH_OK;
}

/* A soft body's links and faces from its material's index count alone: a TriMesh's edges are shared by two
 * faces (1.5 links a face), a rope links each vertex to the next (at most one a corner). */
static void soft_size(const plush_pmx_model *m, const plush_pmx_soft_body *sb, double *links, double *faces)
{
    *links = *faces = 0;
    if (sb->material < 0 || (size_t)sb->material >= m->material_count)
        return;
    double corners = (double)m->materials[sb->material].index_count;
    if (sb->shape == PLUSH_PMX_SOFT_TRIMESH)
        *faces = floor(corners / 3), *links = 1.5 * *faces;
    else
        *links = corners;
}

static double steps_per_frame(const plush_scene_desc *desc)
{
    double hz = desc->world.physics_hz > 0 ? desc->world.physics_hz : PLUSH_WORLD_DEFAULT_HZ;
    double fps = desc->fps > 0 ? desc->fps : PLUSH_SCENE_DEFAULT_FPS;
    return ceil(hz / fps);
}

static void estimate_soft(const plush_scene_desc *desc, plush_scene_estimate *e, double *worst)
{
    const plush_pmx_model *m = desc->model;
    if (desc->mode == PLUSH_SCENE_BONES || desc->mode == PLUSH_SCENE_DIRECT || desc->no_physics)
        return;
    double steps = steps_per_frame(desc);
    for (size_t i = 0; i < m->soft_body_count; i++) {
        const plush_pmx_soft_body *sb = &m->soft_bodies[i];
        double links, faces;
        soft_size(m, sb, &links, &faces);
        double iterations = clamp_count(sb->p_iterations, PLUSH_WORLD_SOFT_MAX_ITERATIONS) +
                            clamp_count(sb->v_iterations, PLUSH_WORLD_SOFT_MAX_ITERATIONS) +
                            clamp_count(sb->d_iterations, PLUSH_WORLD_SOFT_MAX_ITERATIONS) +
                            clamp_count(sb->c_iterations, PLUSH_WORLD_SOFT_MAX_ITERATIONS);
        double s = steps * (links * iterations * SOFT_LINK_ITERATION_SECONDS + faces * SOFT_FACE_STEP_SECONDS);
        e->soft_seconds += s;
        if (s > *worst)
            *worst = s, e->worst_soft = (int64_t)i;
    }
}

static const char *bone_name(const plush_pmx_model *m, int64_t b)
{
    return m->bones[b].name.s ? m->bones[b].name.s : "";
}

/* The frame over its limit: the part that costs most named, with what brings it under. */
static plush_status frame_over(const plush_scene_desc *desc, const plush_scene_estimate *e, double limit,
                               plush_diag *diag)
{
    const plush_pmx_model *m = desc->model;
    if (e->ik_seconds >= e->soft_seconds) {
        const plush_pmx_bone *b = &m->bones[e->worst_ik];
        return plush_diag_fail(diag, PLUSH_E_BUDGET, -1, "bone", e->worst_ik,
                               "IK \"%s\" (%u links, %d loops) and the other IK: about %.2f s a frame, over the "
                               "%.2f s a frame may take: fewer IK loops or links in the model",
                               bone_name(m, e->worst_ik), b->ik_link_count, b->ik_loop_count, e->frame_seconds, limit);
    }
    const plush_pmx_soft_body *sb = &m->soft_bodies[e->worst_soft];
    double links, faces;
    soft_size(m, sb, &links, &faces);
    int iterations = sb->v_iterations + sb->p_iterations + sb->d_iterations + sb->c_iterations;
    return plush_diag_fail(diag, PLUSH_E_BUDGET, -1, "soft body", e->worst_soft,
                           "\"%s\" (%.0f links x %d iterations, %.0f steps a frame) and the other soft bodies: "
                           "about %.2f s a frame, over the %.2f s a frame may take: fewer iterations, a lower "
                           "--physics-hz, or --mode bones",
                           sb->name.s ? sb->name.s : "", links, iterations, steps_per_frame(desc), e->frame_seconds,
                           limit);
}

/* The proxy's cage and the soft bodies' count: what the world, the binding and the patches allocate grows
 * with them. */
static plush_status check_sizes(const plush_scene_desc *desc, plush_diag *diag)
{
    const plush_pmx_model *m = desc->model;
    if (desc->mode == PLUSH_SCENE_BONES || desc->no_physics)
        return PLUSH_OK;
    if (m->soft_body_count > PLUSH_SCENE_MAX_SOFT_BODIES)
        return plush_diag_fail(diag, PLUSH_E_BUDGET, -1, "soft body", -1,
                               "%zu soft bodies; a run takes at most %d (an attached cage has one per piece: a cage "
                               "of fewer pieces, or --mode bones)",
                               m->soft_body_count, PLUSH_SCENE_MAX_SOFT_BODIES);
    /* the proxy keeps, per TriMesh part, a map over all the model's vertices (plush_scene_proxy_part's welded
     * mesh): a cage in many pieces on a large model multiplies it */
    double parts = 0;
    for (size_t i = 0; i < m->soft_body_count; i++)
        parts += m->soft_bodies[i].shape == PLUSH_PMX_SOFT_TRIMESH;
    double maps = parts * (double)m->vertex_count * sizeof(int32_t);
    if (desc->mode != PLUSH_SCENE_PLAIN && maps > PROXY_MAP_BYTES)
        return plush_diag_fail(diag, PLUSH_E_BUDGET, -1, "soft body", -1,
                               "%.0f TriMesh soft bodies on %zu vertices would keep %.0f MB of vertex maps; at most "
                               "%.0f MB (a cage of fewer pieces, or --mode bones)",
                               parts, m->vertex_count, maps / 1e6, PROXY_MAP_BYTES / 1e6);
    if (desc->mode != PLUSH_SCENE_PROXY)
        return PLUSH_OK;
    double triangles = 0;
    for (size_t i = 0; i < m->soft_body_count; i++) {
        double links, faces;
        soft_size(m, &m->soft_bodies[i], &links, &faces);
        triangles += faces;
    }
    if (triangles > PLUSH_CAGE_MAX_TRIANGLES)
        return plush_diag_fail(diag, PLUSH_E_BUDGET, -1, "soft body", -1,
                               "the TriMesh soft bodies have %.0f triangles; a proxy has at most %d (a cage of fewer "
                               "triangles: plush proxy --triangles N, or --mode bones)",
                               triangles, PLUSH_CAGE_MAX_TRIANGLES);
    return PLUSH_OK;
}

plush_status plush_scene_check_budget(const plush_scene_desc *desc, uint32_t frames, plush_scene_estimate *out,
                                      plush_diag *diag)
{
    plush_scene_estimate e = {.worst_ik = -1, .worst_soft = -1};
    if (out)
        *out = e;
    if (!desc || !desc->model)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no model");
    plush_status st = check_sizes(desc, diag);
    double worst_ik = -1, worst_soft = -1;
    if (st == PLUSH_OK)
        st = estimate_ik(desc->model, &e, &worst_ik, diag);
    if (st != PLUSH_OK)
        return st;
    estimate_soft(desc, &e, &worst_soft);
    e.frame_seconds = e.ik_seconds + e.soft_seconds;
    if (out)
        *out = e;
    double fps = desc->fps > 0 ? desc->fps : PLUSH_SCENE_DEFAULT_FPS;
    double limit = PLUSH_SCENE_FRAME_REAL_TIMES / fps;
    if (e.frame_seconds > limit)
        return frame_over(desc, &e, limit, diag);
    double run = (double)frames * e.frame_seconds;
    if (frames && run > PLUSH_SCENE_MAX_RUN_SECONDS)
        return plush_diag_fail(diag, PLUSH_E_BUDGET, -1, NULL, -1,
                               "%u frames would take about %.1f hours (%.3f s a frame for IK and soft bodies); a run "
                               "takes at most %.0f hours: --frames %.0f",
                               frames, run / 3600, e.frame_seconds, PLUSH_SCENE_MAX_RUN_SECONDS / 3600,
                               floor(PLUSH_SCENE_MAX_RUN_SECONDS / e.frame_seconds));
    return PLUSH_OK;
}
