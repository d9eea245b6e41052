/* A finer cage of a part made of the same material as the part's default cage: its bending links set so the
 * part hangs standing still as with the other cage (plush_scene_match_bending).
 *
 * Bullet's bending links join each node to the nodes a number of edges away. The preset's rule for a cage finer
 * than the default target (plush__attach_blink_steps) keeps their reach in the part's units, but a node's links
 * are a ring that grows with the steps, so the finer cage is another material: on 03's skirt (docs/compare.md) the
 * 966-triangle cage at the rule's 5 steps hung less than the default 256-triangle cage at 3 (0.015 units below
 * rest against 0.030, RMS), at 3 steps more (0.068), and in motion it swung unlike both the cage of 256 and the
 * skirt simulated at four times its detail. Which steps make the same material is measured, not fitted: each candidate,
 * and the other cage, stepped SAG_FRAMES frames from rest under gravity with no motion, the part's vertices'
 * RMS distance from rest compared -- the same weight held by the same bending. */
#include "plush/sys/scene.h"
#include "plush/sys/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Two seconds standing still: a default cage has settled by then (docs/compare.md). */
enum { SAG_FRAMES = 60 };

/* The part's RMS distance from rest after SAG_FRAMES frames standing still, over the `count` vertices; false
 * when the model's scene cannot run or the distance is not finite. */
static bool rest_sag(const plush_pmx_model *m, const plush_scene_bound_options *bound, float physics_hz,
                     const uint32_t *vertices, size_t count, double *out)
{
    plush_scene_desc sd = {.model = m, .mode = PLUSH_SCENE_PROXY, .world = {.physics_hz = physics_hz}};
    if (bound)
        sd.bind.bound = *bound;
    plush_diag local = {.offset = -1, .index = -1};
    plush_scene *sc = NULL;
    bool ok = plush_scene_create(&sd, &sc, &local) == PLUSH_OK;
    for (uint32_t f = 0; ok && f < SAG_FRAMES; f++)
        ok = plush_scene_step(sc, f, &local) == PLUSH_OK;
    if (ok) {
        const float(*p)[3] = plush_scene_positions(sc);
        double sum = 0;
        for (size_t i = 0; i < count; i++) {
            const float *a = p[vertices[i]], *b = m->vertices[vertices[i]].position;
            for (int k = 0; k < 3; k++)
                sum += ((double)a[k] - b[k]) * ((double)a[k] - b[k]);
        }
        *out = count ? sqrt(sum / (double)count) : 0;
        ok = isfinite(*out);
    }
    plush_scene_destroy(sc);
    return ok;
}

/* The first TriMesh soft body with a material (the proxy builds no other). */
static const plush_pmx_soft_body *first_trimesh(const plush_pmx_model *m)
{
    for (size_t i = 0; i < m->soft_body_count; i++)
        if (m->soft_bodies[i].shape == PLUSH_PMX_SOFT_TRIMESH && m->soft_bodies[i].material >= 0)
            return &m->soft_bodies[i];
    return NULL;
}

bool plush_scene_match_bending(plush_pmx_model *cage, const plush_pmx_model *other,
                               const plush_scene_bound_options *bound, float physics_hz, plush_scene_bending *out)
{
    memset(out, 0, sizeof *out);
    const plush_pmx_soft_body *mine = first_trimesh(cage), *theirs = first_trimesh(other);
    if (!mine || !theirs || !(mine->flags & PLUSH_PMX_SOFT_BLINK) || !(theirs->flags & PLUSH_PMX_SOFT_BLINK))
        return false;
    int32_t rule = mine->blink_distance, base = theirs->blink_distance;
    if (rule == base || rule <= 0 || base <= 0)
        return false;
    /* the part's vertices: those the other cage's scene binds (the two models share the source's vertices) */
    plush_arena arena = {0};
    plush_scene_proxy proxy;
    uint32_t *vertices = NULL;
    size_t count = 0;
    plush_diag quiet = {.offset = -1, .index = -1};
    plush_scene_bound_options none = {0};
    bool ok = plush_scene_proxy_build(other, &arena, &proxy, &quiet) == PLUSH_OK &&
              plush_scene_bound_vertices(other, &proxy, bound ? bound : &none, &arena, &vertices, &count, &quiet) ==
                  PLUSH_OK &&
              count > 0;
    for (size_t i = 0; ok && i < count; i++)
        ok = vertices[i] < cage->vertex_count;
    double own = 0;
    if (!ok || !rest_sag(other, bound, physics_hz, vertices, count, &own)) {
        plush_arena_free(&arena);
        return false;
    }
    /* more steps hang the part less: from the fewer of the two up, to twice the other cage's (the rule's cap),
     * until the part hangs less than with the other cage and further from it than the best so far */
    int32_t lo = rule < base ? rule : base, hi = 2 * base > rule ? 2 * base : rule, best = rule;
    double best_off = INFINITY, best_sag = NAN;
    for (int32_t k = lo; k <= hi; k++) {
        for (size_t i = 0; i < cage->soft_body_count; i++)
            cage->soft_bodies[i].blink_distance = k;
        double sag;
        if (!rest_sag(cage, bound, physics_hz, vertices, count, &sag))
            continue;
        if (sag < own && fabs(sag - own) > best_off)
            break;
        if (fabs(sag - own) < best_off)
            best_off = fabs(sag - own), best = k, best_sag = sag;
    }
    for (size_t i = 0; i < cage->soft_body_count; i++)
        cage->soft_bodies[i].blink_distance = best;
    plush_arena_free(&arena);
    *out = (plush_scene_bending){.rule = rule, .steps = best, .sag = best_sag, .other_sag = own};
    return isfinite(best_sag);
}
