/* make bench: the speed-up of the proxy over simulating the detailed mesh directly, on the demo bear
 * (proxies/plush_bear.pmx with its shake motion and rigid-eyes override, 60 Hz physics), per frame of
 * physics + skinning, against the 15x target. Both runs go through plush_compare in lockstep, so
 * both absolute times come from the same run on the same machine state; times are the pipeline thread's
 * CPU time (plush_scene_timing). The error of the proxy against direct is printed beside it for context. */
#include "plush/compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define TARGET_SPEEDUP 15.0
/* the swing and the drop of the shake (direct costs ~0.2 s a frame: the whole motion would take a minute) */
#define FRAMES 120

static void die(const char *what, const plush_diag *d)
{
    char line[600];
    plush_diag_format(d, line, sizeof line);
    fprintf(stderr, "bench_compare: %s: %s\n", what, line);
    exit(1);
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
    enum { PROXY, DIRECT };
    plush_compare_run_desc runs[] = {{.name = "proxy", .kind = PLUSH_COMPARE_PROXY},
                                     {.name = "direct", .kind = PLUSH_COMPARE_DIRECT}};
    plush_compare_pair pair = {PROXY, DIRECT, NULL};
    plush_compare *cmp = NULL;
    if (plush_compare_create(&(plush_compare_desc){.model = model, .motion = motion, .overrides = map,
                                                   .runs = runs, .run_count = 2, .pairs = &pair, .pair_count = 1},
                             &cmp, &d) != PLUSH_OK)
        die("compare", &d);
    double phys[2] = {0}, skin[2] = {0}, rms = 0;
    uint32_t frames = 0;
    for (uint32_t f = 0; f < FRAMES; f++) {
        if (plush_compare_step(cmp, f, &d) != PLUSH_OK)
            die("step", &d);
        const plush_compare_run_frame *rf = plush_compare_run_frames(cmp);
        const plush_compare_pair_frame *pf = plush_compare_pair_frames(cmp);
        if (!rf[PROXY].valid || !rf[DIRECT].valid)
            break; /* direct stopped: the frames before it count */
        for (int r = 0; r < 2; r++)
            phys[r] += rf[r].physics, skin[r] += rf[r].skinning;
        rms += pf[0].error.rms;
        frames++;
    }
    if (frames == 0) {
        plush_compare_run_info info;
        plush_compare_get_run_info(cmp, DIRECT, &info);
        fprintf(stderr, "bench_compare: direct has no frame: %s\n", info.reason);
        return 1;
    }
    double ms = 1000.0 / frames, tp = (phys[PROXY] + skin[PROXY]) * ms, td = (phys[DIRECT] + skin[DIRECT]) * ms;
    float size = plush_compare_get_surface(cmp)->diagonal;
    printf("compare demo bear (%zu vertices, %u frames, 60 Hz): proxy %.3f ms/frame (physics %.3f + skinning %.3f), "
           "direct %.3f ms/frame (physics %.3f + skinning %.3f): proxy %.1fx faster, %s the %.0fx target "
           "(%.2fx of it); proxy vs direct RMS %.3g units = %.1f%% of the model's size\n",
           model->vertex_count, frames, tp, phys[PROXY] * ms, skin[PROXY] * ms, td, phys[DIRECT] * ms,
           skin[DIRECT] * ms, td / tp, td / tp >= TARGET_SPEEDUP ? "meets" : "BELOW", TARGET_SPEEDUP,
           td / tp / TARGET_SPEEDUP, rms / frames, 100.0 * rms / frames / size);
    plush_compare_destroy(cmp);
    plush_im2_free(map);
    plush_vmd_free(motion);
    plush_pmx_free(model);
    return 0;
}
