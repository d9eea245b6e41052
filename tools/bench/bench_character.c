/* make bench: the proxy path on real characters, the way a user runs it -- Alicia Solid's hair caged
 * (plush run Alicia_solid.pmx --cage hair:300) and pmx_tailor 03's bob (its hair material, 23 cage pieces round
 * the head, whose physics step is cheap and whose rows lie between layers of her other hair) over the first 600
 * frames of the shared long dance, through the plush binary make bench names (PLUSH_BIN). Per output frame, best
 * of three: the physics step, and the proxy's own share (proxy frames + skinning, of which the push out of the
 * body and the soft measure) against it, aimed at half of it. Wall clock, as the summary's `per frame` line gives
 * it; the soft measure's tests, which run on threads of their own beside the push and the next frame's physics,
 * apart. A character whose model is absent is skipped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DANCE "../shared/data/characters/mmd_base/サンプルモーション2.vmd"

typedef struct character {
    const char *name, *model, *cage;
} character;

static const character characters[] = {
    {"Alicia's hair", "../shared/data/mmd/alicia/Alicia_solid.pmx", "hair:300"},
    {"03's bob", "../shared/data/characters/pmx_tailor/03_扱えるメッシュ_裾不均等.pmx", "N00_000_Hair_00_HAIR"},
};

typedef struct per_frame {
    double total, motion, physics, frames, skinning, push, measure, exports, beside;
} per_frame;

static int one(const char *bin, const character *c, const char *out, per_frame *f)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' run '%s' --cage '%s' --motion '%s' --frames 600 --export quality -o '%s' 2>/dev/null",
             bin, c->model, c->cage, DANCE, out);
    FILE *p = popen(cmd, "r");
    if (!p)
        return 0;
    char line[4096];
    int got = 0;
    while (fgets(line, sizeof line, p)) {
        const char *at = strstr(line, "  per frame ");
        if (at && sscanf(at, "  per frame %lf ms: motion+bones %lf, physics %lf, proxy frames %lf, skinning %lf (of it the "
                              "push out of the body %lf, the soft measure %lf), export %lf",
                         &f->total, &f->motion, &f->physics, &f->frames, &f->skinning, &f->push, &f->measure,
                         &f->exports) == 8)
            got = 1;
        const char *own = strstr(line, "the soft measure's tests ");
        if (own)
            f->beside = atof(own + strlen("the soft measure's tests "));
    }
    return pclose(p) == 0 && got;
}

/* One character, best of three: 0 when done or skipped, 1 when a run failed. */
static int bench(const char *bin, const character *c)
{
    FILE *probe = fopen(c->model, "rb");
    if (!probe) {
        printf("character %s: skipped (%s is absent)\n", c->name, c->model);
        return 0;
    }
    fclose(probe);
    char out[] = "/tmp/plush_bench_character_XXXXXX";
    if (!mkdtemp(out)) {
        perror("bench_character: mkdtemp");
        return 1;
    }
    per_frame best = {0}, f = {0};
    int failed = 0;
    for (int i = 0; i < 3 && !failed; i++) {
        if (!one(bin, c, out, &f)) {
            fprintf(stderr, "bench_character: %s run on %s failed\n", bin, c->model);
            failed = 1;
        } else if (i == 0 || f.frames + f.skinning + f.physics < best.frames + best.skinning + best.physics) {
            best = f;
        }
    }
    char rm[256];
    snprintf(rm, sizeof rm, "rm -rf '%s'", out);
    if (system(rm) != 0)
        fprintf(stderr, "bench_character: could not remove %s\n", out);
    if (failed)
        return 1;
    double own = best.frames + best.skinning;
    printf("character %s (--cage %s, 600 frames of the long dance, 60 Hz): physics %.3f ms/frame; "
           "proxy frames + skinning %.3f ms/frame = %.2fx the physics step (aimed at 0.5x or less: %s): proxy frames "
           "%.3f, skinning %.3f, of it the push out of the body %.3f (%.2fx the physics step) and the soft measure "
           "%.3f (its tests on threads of their own, beside the push and the next frame's physics: %.3f)\n",
           c->name, c->cage, best.physics, own, own / best.physics, own / best.physics <= 0.5 ? "met" : "NOT met",
           best.frames, best.skinning, best.push, best.push / best.physics, best.measure, best.beside);
    return 0;
}

int main(void)
{
    const char *bin = getenv("PLUSH_BIN");
    if (!bin) {
        printf("character: skipped (PLUSH_BIN is not set)\n");
        return 0;
    }
    int failed = 0;
    for (size_t i = 0; i < sizeof characters / sizeof characters[0]; i++)
        failed |= bench(bin, &characters[i]);
    return failed;
}
