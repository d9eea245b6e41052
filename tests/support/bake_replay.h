/* A bake replayed as a player would, and its distance to plush's frames, shared by tests/support/bake_long.h
 * (make bench's bench_bake, the long bake's test) and tools/bench/bake_replay.c (a run's bake against the
 * run's own PLY frames): header-only, so a benchmark needs nothing but the library.
 *
 * The baked PMX + VMD are read from their files and posed as `plush pose` poses them without --physics
 * (src/cli/pose.c): a scene in bones mode without a world, each frame computed on its own by the bone
 * pipeline (motion sampling, morphs, deform order, append, IK, skinning). */
#ifndef PLUSH_TESTS_BAKE_REPLAY_H
#define PLUSH_TESTS_BAKE_REPLAY_H

#include "plush/plush.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct bake_replay {
    plush_pmx_model *model;   /* the baked PMX */
    plush_vmd_motion *motion; /* the baked VMD */
    plush_scene *scene;
} bake_replay;

/* Reads both files and builds the scene; on failure diag says which file and what went wrong (its file is
 * set to the one that failed) and bake_replay_close still cleans up. */
static inline plush_status bake_replay_open(bake_replay *r, const char *pmx, const char *vmd, plush_diag *diag)
{
    *r = (bake_replay){0};
    diag->file = pmx;
    if (plush_pmx_read_file(pmx, NULL, &r->model, diag) != PLUSH_OK)
        return diag->status;
    diag->file = vmd;
    if (plush_vmd_read_file(vmd, &r->motion, diag) != PLUSH_OK)
        return diag->status;
    diag->file = pmx;
    plush_scene_desc desc = {.model = r->model, .motion = r->motion, .mode = PLUSH_SCENE_BONES, .no_physics = true};
    return plush_scene_create(&desc, &r->scene, diag);
}

/* The baked model's vertices at frame (model->vertex_count of them), NULL on failure (diag says why). */
static inline const float (*bake_replay_pose(bake_replay *r, double frame, plush_diag *diag))[3]
{
    return plush_scene_seek(r->scene, frame, diag) == PLUSH_OK ? plush_scene_positions(r->scene) : NULL;
}

static inline void bake_replay_close(bake_replay *r)
{
    plush_scene_destroy(r->scene);
    plush_vmd_free(r->motion);
    plush_pmx_free(r->model);
    *r = (bake_replay){0};
}

typedef struct bake_replay_distance {
    double rms;          /* over the vertices compared, model units */
    double worst;        /* the farthest vertex's distance */
    size_t worst_vertex; /* its index among the baked model's vertices */
    size_t count;        /* vertices compared */
} bake_replay_distance;

/* The distance from plush's frame (want, want_count vertices) to the replayed one (got, got_count). With
 * kept, want's vertices are the original model's and those kept[v] marks are the baked model's, in order;
 * without it the two lists are the same vertices. Returns false when the counts do not match. */
static inline bool bake_replay_compare(const float (*want)[3], const bool *kept, size_t want_count,
                                       const float (*got)[3], size_t got_count, bake_replay_distance *out)
{
    double sq = 0, worst = 0;
    size_t k = 0, worst_vertex = 0;
    for (size_t v = 0; v < want_count; v++) {
        if (kept && !kept[v])
            continue;
        if (k == got_count)
            return false;
        double d2 = 0;
        for (int a = 0; a < 3; a++) {
            double d = (double)want[v][a] - got[k][a];
            d2 += d * d;
        }
        sq += d2;
        if (d2 > worst)
            worst = d2, worst_vertex = k;
        k++;
    }
    *out = (bake_replay_distance){.rms = k ? sqrt(sq / (double)k) : 0, .worst = sqrt(worst),
                                  .worst_vertex = worst_vertex, .count = k};
    return k == got_count;
}

#endif
