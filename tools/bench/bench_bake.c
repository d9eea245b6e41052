/* make bench: the bake of a 7,200-frame motion for the demo bear (tests/support/bake_long.h: the hook
 * swinging, dropping and settling, thirty times with other amplitudes) against the limits it must meet:
 * at most 600,000 keys and 60 MB of VMD, a GLB of at most 60 MB, within 0.1% of the bear's height RMS and
 * 0.5% worst of plush's frames at every frame (replayed through plush's bone pipeline), the fit and key
 * reduction within 20 s. The reference, measured in the same run: the run itself (simulation, the bake's
 * recording, the glTF export) over the same frames, and the exact bake's keys (one per cage triangle and
 * frame). PLUSH_BENCH_BAKE_FRAMES sets another length. */
#include "../../tests/support/bake_long.h"

#include <unistd.h>

#define TARGET_SECONDS 20.0

int main(void)
{
    const char *env = getenv("PLUSH_BENCH_BAKE_FRAMES");
    uint32_t frames = env && atoi(env) > 0 ? (uint32_t)atoi(env) : 7200;
    const char *base = getenv("TMPDIR");
    char dir[400];
    snprintf(dir, sizeof dir, "%s/plush_bench_bake_XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir)) {
        perror("bench_bake: mkdtemp");
        return 1;
    }
    bake_long_result r;
    bool ok = bake_long_measure(frames, dir, &r);
    static const char *const files[] = {"bear_long_plush.pmx", "bear_long_plush.vmd", "bear_long_plush.glb", ".plush-set"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char p[600];
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        unlink(p);
    }
    rmdir(dir);
    if (!ok)
        return 1;
    double took = r.fit_seconds + r.keys_seconds;
    bool fits = r.keys <= 600000 && r.vmd_bytes <= 60000000 && r.glb_bytes <= 60000000;
    bool close = r.rms <= 0.001 * r.height && r.worst <= 0.005 * r.height;
    printf("bake of %u frames (demo bear, %zu-triangle cage): %zu bones, %zu keys of %zu recorded (%.0fx fewer), "
           "VMD %.2f MB, PMX %.2f MB, GLB %.2f MB: %s\n",
           r.frames, r.triangles, r.bones, r.keys, r.keys_recorded, (double)r.keys_recorded / (double)r.keys,
           r.vmd_bytes / 1e6, r.pmx_bytes / 1e6, r.glb_bytes / 1e6, fits ? "within 600,000 keys and 60 MB" : "ABOVE the limits");
    printf("  replayed by plush's bone pipeline: RMS at most %.4g (frame %u), worst %.4g (frame %u) = %.3f%% / %.3f%% "
           "of the height %.3g: %s\n",
           r.rms, r.rms_frame, r.worst, r.worst_frame, 100 * r.rms / r.height, 100 * r.worst / r.height, r.height,
           close ? "within 0.1% / 0.5%" : "BEYOND 0.1% / 0.5%");
    printf("  fit %.2f s + key reduction %.2f s = %.2f s = %.2fx under the %.0f s target, %s; the run itself %.2f s, "
           "fit/run %.2fx\n",
           r.fit_seconds, r.keys_seconds, took, TARGET_SECONDS / took, TARGET_SECONDS,
           took <= TARGET_SECONDS ? "meets it" : "ABOVE it", r.run_seconds, took / r.run_seconds);
    return 0;
}
