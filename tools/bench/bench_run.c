/* make bench: the main job on the embedded demo (proxies/plush_bear.pmx, its shake motion and rigid-eyes
 * override, all 241 frames at 30 fps with 60 Hz physics): time per output frame of the proxy path
 * (physics + proxy frames + skinning) against the 5 ms target, with its breakdown, and the bones
 * mode (plain MMD, no soft body) on the same motion as the baseline measured in the same run, and the
 * proxy's own share (frames + skinning, on two threads) against the physics step, aimed at half of it.
 * Times are wall clock (plush_scene_timing), best of three passes. Also the smooth surface's two
 * costs in the same run: binding with the weights smoothed against the nearest four alone (wall clock,
 * plush_scene_bind, best of three), and the proxy frames as patch frames against each triangle's own. */
#include "plush/plush.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define TARGET_MS 5.0

static void die(const char *what, const plush_diag *d)
{
    char line[600];
    plush_diag_format(d, line, sizeof line);
    fprintf(stderr, "bench_run: %s: %s\n", what, line);
    exit(1);
}

static plush_scene_timing pass(const plush_scene_desc *desc, uint32_t frames)
{
    plush_diag d = {0};
    plush_diag_reset(&d);
    plush_scene *sc = NULL;
    if (plush_scene_create(desc, &sc, &d) != PLUSH_OK)
        die("scene", &d);
    for (uint32_t f = 0; f < frames; f++)
        if (plush_scene_step(sc, f, &d) != PLUSH_OK)
            die("step", &d);
    plush_scene_timing t;
    plush_scene_get_timing(sc, &t);
    plush_scene_destroy(sc);
    return t;
}

static plush_scene_timing best(const plush_scene_desc *desc, uint32_t frames)
{
    plush_scene_timing b = pass(desc, frames);
    for (int i = 1; i < 3; i++) {
        plush_scene_timing t = pass(desc, frames);
        if (t.physics + t.frames + t.skinning < b.physics + b.frames + b.skinning)
            b = t;
    }
    return b;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double bind_seconds(const plush_pmx_model *model, bool rough)
{
    double most = 1e30;
    for (int i = 0; i < 3; i++) {
        plush_diag d = {0};
        plush_diag_reset(&d);
        plush_scene_bind_options o = {.rough = rough};
        plush_scene_binding *b = NULL;
        double t0 = now();
        if (plush_scene_bind(model, &o, &b, &d) != PLUSH_OK)
            die("bind", &d);
        double t = now() - t0;
        most = t < most ? t : most;
        plush_scene_binding_free(b);
    }
    return most;
}

int main(void)
{
    plush_diag d = {0};
    plush_diag_reset(&d);
    plush_pmx_model *model = NULL;
    plush_vmd_motion *motion = NULL;
    plush_im2_map *map = NULL;
    if (plush_pmx_read_file("proxies/plush_bear.pmx", NULL, &model, &d) != PLUSH_OK)
        die("model", &d);
    if (plush_vmd_read_file("proxies/plush_bear_shake.vmd", &motion, &d) != PLUSH_OK)
        die("motion", &d);
    if (plush_im2_read_file("proxies/plush_bear.im2", &map, &d) != PLUSH_OK)
        die("overrides", &d);
    uint32_t frames = plush_vmd_last_frame(motion) + 1;
    plush_scene_desc proxy = {.model = model, .motion = motion, .overrides = map};
    plush_scene_desc bones = {.model = model, .motion = motion, .mode = PLUSH_SCENE_BONES};
    plush_scene_timing p = best(&proxy, frames), b = best(&bones, frames);
    double n = (double)p.steps, ms = 1000.0 / n;
    double path = (p.physics + p.frames + p.skinning) * ms;
    double base = (b.physics + b.frames + b.skinning) * ms;
    printf("run demo bear (%zu vertices, %u frames, 60 Hz): proxy path %.3f ms/frame = %.2fx under the %.0f ms "
           "target (physics %.3f, proxy frames %.3f, skinning %.3f; motion+bones %.3f); bones mode %.3f ms/frame, "
           "proxy/bones %.2fx\n",
           model->vertex_count, frames, path, TARGET_MS / path, TARGET_MS, p.physics * ms, p.frames * ms,
           p.skinning * ms, p.motion * ms, base, path / base);
    double own_share = (p.frames + p.skinning) / p.physics;
    printf("  proxy frames + skinning %.3f ms/frame = %.2fx the physics step (aimed at 0.5x or less: %s)\n",
           (p.frames + p.skinning) * ms, own_share, own_share <= 0.5 ? "met" : "NOT met");
    plush_scene_desc own = proxy;
    own.skin.patch.rings = -1;
    plush_scene_timing o = best(&own, frames);
    double smooth = bind_seconds(model, false), rough = bind_seconds(model, true);
    printf("smooth surface on the demo bear: binding %.3f s with the weights smoothed, %.3f s nearest four alone "
           "(%.2fx); proxy frames %.3f ms/frame as patch frames (%d rings and %g of the piece), %.3f ms each triangle's own (%.1fx)\n",
           smooth, rough, smooth / rough, p.frames * ms, PLUSH_SCENE_PATCH_RINGS, (double)PLUSH_SCENE_PATCH_REACH, o.frames * 1000.0 / (double)o.steps,
           p.frames / o.frames * (double)o.steps / n);
    plush_im2_free(map);
    plush_vmd_free(motion);
    plush_pmx_free(model);
    return 0;
}
