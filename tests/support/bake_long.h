/* A long motion for the demo bear and the measure of its bake, shared by
 * tests/export/test_scene_bake_long.c (a short version) and tools/bench/bench_bake.c (7,200 frames):
 * header-only, so the benchmark needs nothing but the library.
 *
 * The motion: the hook swings right and left, lifts, drops and stops short, twists, and holds still while
 * the toy settles, every 240 frames, each time with other amplitudes. The measure: the scene runs once with
 * a bake of its own (the default tolerance, bones chosen from it) and the glTF export; the bake is fitted
 * and written (fit and key reduction timed); then the scene runs again from the same inputs and at every
 * frame the baked PMX + VMD, read back from their files, are posed by plush's own bone pipeline as plush pose
 * poses them (bake_replay.h) and compared with plush's frame on the vertices the bake keeps. The first run
 * happens in a child process, so that the second starts, as the first did, in a process that has simulated
 * nothing (whether Bullet keeps state between worlds that would change the frames is not checked). */
#ifndef PLUSH_TESTS_BAKE_LONG_H
#define PLUSH_TESTS_BAKE_LONG_H

#include "plush/plush.h"
#include "plush/scene_sink.h"
#include "plush/sys/core.h"
#include "export/bake_internal.h"
#include "bake_replay.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BAKE_LONG_BEAR "proxies/plush_bear.pmx"
#define BAKE_LONG_IM2 "proxies/plush_bear.im2"

/* Bezier control points (x1, y1, x2, y2) on all four curves, in MMD's four shifted rows. */
static void bake_long_curve(const uint8_t c[4], uint8_t out[64])
{
    uint8_t base[16];
    for (int k = 0; k < 4; k++)
        for (int axis = 0; axis < 4; axis++)
            base[4 * k + axis] = c[k];
    memset(out, 0, 64);
    for (int row = 0; row < 4; row++)
        for (int k = 0; k + row < 16; k++)
            out[16 * row + k] = base[k + row];
}

/* The hook's keys over frames 0 .. frames - 1. */
static plush_vmd_motion *bake_long_motion(uint32_t frames)
{
    static const uint8_t smooth[4] = {64, 0, 64, 127}, ease_in[4] = {90, 0, 127, 127}, linear[4] = {20, 20, 107, 107};
    static const char hook[] = "フック";
    plush_vmd_motion *m = plush_vmd_create();
    if (!m)
        return NULL;
    size_t cap = (frames / 240 + 2) * 12;
    plush_vmd_bone_key *k = plush_arena_array(plush_vmd_arena(m), cap, sizeof *k);
    if (!k) {
        plush_vmd_free(m);
        return NULL;
    }
    size_t n = 0;
    for (uint32_t c = 0; 240 * c < frames; c++) {
        uint32_t b = 240 * c;
        float a = 3.0f + (float)((c * 37) % 7) * 0.6f, lift = 3.0f + (float)((c * 13) % 5) * 0.5f;
        float drop = 1.0f + (float)(c % 3) * 0.3f, half = (float)((10.0 + (double)((c * 11) % 4) * 3.0) * M_PI / 360.0);
        float side = c % 2 ? -1.0f : 1.0f;
        struct { uint32_t f; float t[3]; float q[4]; const uint8_t *curve; } keys[] = {
            {b, {0, 0, 0}, {0, 0, 0, 1}, linear},
            {b + 20, {side * a, 1, 0}, {0, 0, 0, 1}, smooth},
            {b + 45, {-side * a, 1, 0.5f * side}, {0, 0, 0, 1}, smooth},
            {b + 65, {0, 0, 0}, {0, 0, 0, 1}, smooth},
            {b + 80, {0, lift, 0}, {0, 0, 0, 1}, smooth},
            {b + 88, {0, -drop, 0}, {0, 0, 0, 1}, ease_in},
            {b + 92, {0, 0, 0}, {0, 0, 0, 1}, linear},
            {b + 107, {0, 0, 0}, {0, sinf(half), 0, cosf(half)}, smooth},
            {b + 122, {0, 0, 0}, {0, -sinf(half), 0, cosf(half)}, smooth},
            {b + 137, {0, 0, 0}, {0, 0, 0, 1}, smooth},
        };
        for (size_t i = 0; i < sizeof keys / sizeof *keys && keys[i].f < frames; i++) {
            k[n].name = (plush_str){.s = hook, .len = sizeof hook - 1};
            k[n].frame = keys[i].f;
            memcpy(k[n].translation, keys[i].t, sizeof k[n].translation);
            memcpy(k[n].rotation, keys[i].q, sizeof k[n].rotation);
            bake_long_curve(keys[i].curve, k[n].interpolation);
            n++;
        }
    }
    k[n] = k[n - 1]; /* hold the last pose to the end */
    k[n].frame = frames - 1;
    if (k[n].frame > k[n - 1].frame)
        n++;
    m->bone_keys = k;
    m->bone_key_count = n;
    return m;
}

typedef struct bake_long_result {
    uint32_t frames;
    size_t bones, triangles, keys, keys_recorded;
    size_t pmx_bytes, vmd_bytes, glb_bytes;
    double height;                 /* model units */
    double fit_seconds, keys_seconds;  /* the fit, and building the reduced motion */
    double run_seconds;            /* the first run: simulation, the bake's recording and the glTF export */
    double rms, worst;             /* the largest per-frame RMS over vertices, the worst vertex, model units */
    uint32_t rms_frame, worst_frame;
} bake_long_result;

static double bake_long_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The first run's sink: the bake's frames. */
typedef struct bake_long_recorder {
    plush_scene_sink base;
    plush_scene_bake *bake;
} bake_long_recorder;

static plush_status bake_long_record(plush_scene_sink *s, const plush_scene *scene, uint32_t frame, plush_diag *diag)
{
    return plush_scene_bake_add_frame(((bake_long_recorder *)s)->bake, frame, plush_scene_proxy_nodes(scene), diag);
}

/* The second run's sink: the baked files posed at each frame against plush's. */
typedef struct bake_long_checker {
    plush_scene_sink base;
    const bool *kept;
    bake_replay replay;
    bake_long_result *r;
} bake_long_checker;

static plush_status bake_long_check(plush_scene_sink *s, const plush_scene *scene, uint32_t frame, plush_diag *diag)
{
    bake_long_checker *c = (bake_long_checker *)s;
    const float(*got)[3] = bake_replay_pose(&c->replay, frame, diag);
    if (!got)
        return diag->status;
    plush_scene_desc desc;
    plush_scene_get_desc(scene, &desc);
    bake_replay_distance dist;
    if (!bake_replay_compare(plush_scene_positions(scene), c->kept, desc.model->vertex_count, got,
                             c->replay.model->vertex_count, &dist))
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, NULL, -1, "the baked model keeps other vertices");
    if (dist.rms > c->r->rms)
        c->r->rms = dist.rms, c->r->rms_frame = frame;
    if (dist.worst > c->r->worst)
        c->r->worst = dist.worst, c->r->worst_frame = frame;
    return PLUSH_OK;
}

static plush_status bake_long_none(plush_scene_sink *s, const plush_scene *scene, plush_diag *diag)
{
    (void)s, (void)scene, (void)diag;
    return PLUSH_OK;
}

static void bake_long_keep(plush_scene_sink *s) { (void)s; }

static size_t bake_long_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (size_t)st.st_size : 0;
}

/* Runs the measure above for frames frames into dir (which exists); false with a line on stderr when
 * something fails. */
static bool bake_long_measure(uint32_t frames, const char *dir, bake_long_result *r)
{
    static const plush_scene_sink_ops record_ops = {.frame = bake_long_record, .end = bake_long_none,
                                                    .destroy = bake_long_keep};
    static const plush_scene_sink_ops check_ops = {.frame = bake_long_check, .end = bake_long_none,
                                                   .destroy = bake_long_keep};
    memset(r, 0, sizeof *r);
    r->frames = frames;
    plush_diag d = {0};
    plush_pmx_model *bear = NULL;
    plush_vmd_motion *motion = bake_long_motion(frames), *baked_vmd = NULL;
    plush_im2_map *rigid = NULL;
    plush_scene *sc = NULL;
    plush_scene_sink *glb = NULL;
    bake_long_recorder rec = {.base.ops = &record_ops};
    bake_long_checker chk = {.base.ops = &check_ops, .r = r};
    bool *kept = NULL;
    char pmx[600], vmd[600], glb_path[600];
    snprintf(pmx, sizeof pmx, "%s/bear_long_plush.pmx", dir);
    snprintf(vmd, sizeof vmd, "%s/bear_long_plush.vmd", dir);
    snprintf(glb_path, sizeof glb_path, "%s/bear_long_plush.glb", dir);
    bool ok = motion && plush_pmx_read_file(BAKE_LONG_BEAR, NULL, &bear, &d) == PLUSH_OK &&
              plush_im2_read_file(BAKE_LONG_IM2, &rigid, &d) == PLUSH_OK;
    plush_scene_desc desc = {.model = bear, .motion = motion, .overrides = rigid, .overrides_file = BAKE_LONG_IM2};
    plush_scene_output out = {.dir = dir, .stem = "bear_long", .model_file = BAKE_LONG_BEAR};
    plush_scene_run_result res;
    /* the first run, in a child: the bake's frames and the GLB */
    int fds[2];
    pid_t child = ok && pipe(fds) == 0 ? fork() : -1;
    ok = ok && child >= 0;
    if (ok && child > 0) {
        close(fds[1]);
        bool child_ok = false;
        ok = read(fds[0], r, sizeof *r) == (ssize_t)sizeof *r && read(fds[0], &child_ok, sizeof child_ok) ==
             (ssize_t)sizeof child_ok && child_ok;
        close(fds[0]);
        int status = 0;
        ok = waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0 && ok;
        if (!ok)
            fprintf(stderr, "bake_long: the first run failed\n");
    }
    plush_scene_desc full;   /* with the scene's defaults: the bake's patch frames are the skin's */
    ok = ok && (child > 0 || (plush_scene_create(&desc, &sc, &d) == PLUSH_OK && (plush_scene_get_desc(sc, &full), true) &&
                              plush__bake_create(plush_scene_get_binding(sc), motion, plush_scene_patch(&full),
                                                 plush_scene_get_patch(sc), &rec.bake, &d) == PLUSH_OK &&
                              plush_scene_sink_create(plush_scene_export_find("gltf", 4), sc, &out, &glb, &d) == PLUSH_OK));
    if (ok && child == 0) {
        r->height = plush_pmx_height(bear);
        plush_scene_bake_set_tolerance(rec.bake, 0.001 * r->height);
        plush_scene_sink *sinks[2] = {&rec.base, glb};
        double t0 = bake_long_now();
        ok = plush_scene_run(sc, &(plush_scene_run_options){.frames = frames, .sinks = sinks, .sink_count = 2}, &res,
                             &d) == PLUSH_OK;
        r->run_seconds = bake_long_now() - t0;
    }
    /* the fit and the reduced motion, timed; then both files */
    if (ok && child == 0) {
        double t0 = bake_long_now();
        ok = plush_scene_bake_fit(rec.bake, 0, &d) == PLUSH_OK;
        double t1 = bake_long_now();
        ok = ok && plush_scene_bake_motion(rec.bake, &baked_vmd, &d) == PLUSH_OK;
        r->fit_seconds = t1 - t0;
        r->keys_seconds = bake_long_now() - t1;
        plush_vmd_free(baked_vmd);
        baked_vmd = NULL;
        plush_scene_bake_stats stats = {0};
        ok = ok && plush_scene_bake_write_with(rec.bake, pmx, vmd,
                                               &(plush_scene_bake_write_options){.stats = &stats}, &d) == PLUSH_OK;
        r->bones = stats.bones, r->triangles = stats.triangles, r->keys = stats.keys;
        r->keys_recorded = stats.keys_recorded, r->pmx_bytes = stats.pmx_bytes, r->vmd_bytes = stats.vmd_bytes;
        r->glb_bytes = bake_long_size(glb_path);
    }
    if (child == 0) {
        if (!ok) {
            char line[600];
            plush_diag_format(&d, line, sizeof line);
            fprintf(stderr, "bake_long: %s\n", line);
        }
        close(fds[0]);
        bool sent = write(fds[1], r, sizeof *r) == (ssize_t)sizeof *r && write(fds[1], &ok, sizeof ok) == (ssize_t)sizeof ok;
        _exit(sent ? 0 : 1);
    }
    ok = ok && plush_scene_create(&desc, &sc, &d) == PLUSH_OK;
    if (sc) {
        const plush_scene_binding *b = plush_scene_get_binding(sc);
        kept = calloc(bear->vertex_count, sizeof *kept);
        uint8_t *use = calloc(bear->vertex_count, 1);
        ok = ok && kept && use;
        if (kept && use) {
            size_t first = 0;
            for (size_t mat = 0; mat < bear->material_count; mat++) {
                for (size_t i = first; i < first + (size_t)bear->materials[mat].index_count; i++)
                    use[bear->indices[i]] |= b->proxy.soft_material[mat] ? 2 : 1;
                first += (size_t)bear->materials[mat].index_count;
            }
            for (size_t v = 0; v < bear->vertex_count; v++)
                kept[v] = use[v] != 2;
        }
        free(use);
    }
    /* the second run: the baked files, as a player reads them, against plush's frames */
    plush_diag replay_diag = {.offset = -1, .index = -1};
    if (ok && bake_replay_open(&chk.replay, pmx, vmd, &replay_diag) != PLUSH_OK) {
        d = replay_diag;
        ok = false;
    }
    if (ok) {
        chk.kept = kept;
        plush_scene_sink *sinks[1] = {&chk.base};
        ok = plush_scene_run(sc, &(plush_scene_run_options){.frames = frames, .sinks = sinks, .sink_count = 1}, &res,
                             &d) == PLUSH_OK;
    }
    if (!ok) {
        char line[600];
        plush_diag_format(&d, line, sizeof line);
        fprintf(stderr, "bake_long: %s\n", line);
    }
    plush_scene_destroy(sc);
    bake_replay_close(&chk.replay);
    plush_vmd_free(baked_vmd);
    free(kept);
    plush_im2_free(rigid);
    plush_vmd_free(motion);
    plush_pmx_free(bear);
    return ok;
}

#endif
