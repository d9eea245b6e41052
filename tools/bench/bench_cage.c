/* make bench: generated cages on the demo bear (proxies/plush_bear.pmx), whose fur is fifteen separate
 * pieces: the wrap into one closed piece at 300 and 1000 triangles against the 2 s target, beside
 * the plain simplification of the same fur toward the same count (no wrap: pieces kept), measured in the
 * same run as the reference. Wall time of the calling thread's work (the wrap is single-threaded), best of
 * three. test_cage checks what the wraps are; how long they take is measured only here. */
#include "plush/cage.h"
#include "plush/pmx.h"
#include "plush/scene_proxy.h"
#include "plush/sys/core.h"
#include "plush/sys/scene.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define TARGET_SECONDS 2.0

static void die(const char *what, const plush_diag *d)
{
    char line[600];
    plush_diag_format(d, line, sizeof line);
    fprintf(stderr, "bench_cage: %s: %s\n", what, line);
    exit(1);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The best of three simplifications of skin with opts, in seconds; *result from the last. */
static double best_of_three(const plush_cage_mesh *skin, const plush_cage_options *opts, plush_cage_result *result)
{
    double best = 1e30;
    for (int run = 0; run < 3; run++) {
        plush_diag d = {0};
        plush_diag_reset(&d);
        plush_arena arena = {0};
        plush_cage_mesh cage;
        double t0 = now();
        if (plush_cage_simplify(skin, opts, &arena, &cage, result, &d) != PLUSH_OK)
            die(opts->wrap ? "wrap" : "simplify", &d);
        double took = now() - t0;
        best = took < best ? took : best;
        plush_arena_free(&arena);
    }
    return best;
}

int main(void)
{
    plush_diag d = {0};
    plush_diag_reset(&d);
    plush_pmx_model *model = NULL;
    if (plush_pmx_read_file("proxies/plush_bear.pmx", NULL, &model, &d) != PLUSH_OK)
        die("model", &d);
    static const char *const fur[] = {"体", "頭", "口元", "耳", "腕", "足"};
    plush_arena arena = {0};
    plush_cage_mesh skin;
    if (plush_scene_cage_weld(model, fur, sizeof fur / sizeof *fur, &arena, &skin, &d) != PLUSH_OK)
        die("weld", &d);
    static const size_t targets[] = {300, 1000};
    for (size_t k = 0; k < sizeof targets / sizeof *targets; k++) {
        plush_cage_result wrap, plain;
        double tw = best_of_three(&skin, &(plush_cage_options){.target_triangles = targets[k], .wrap = true}, &wrap);
        double tp = best_of_three(&skin, &(plush_cage_options){.target_triangles = targets[k]}, &plain);
        printf("cage demo bear fur (%zu triangles) toward %zu: wrap %.3f s (%zu triangles, wrap of %zu) = %.2fx "
               "under the %.0f s target, %s; plain simplification %.3f s (%zu triangles, pieces kept), "
               "wrap/plain %.1fx\n",
               skin.triangle_count, targets[k], tw, wrap.triangles, wrap.wrap_triangles, TARGET_SECONDS / tw,
               TARGET_SECONDS, tw <= TARGET_SECONDS ? "meets it" : "ABOVE it", tp, plain.triangles, tw / tp);
    }
    plush_arena_free(&arena);
    plush_pmx_free(model);
    return 0;
}
