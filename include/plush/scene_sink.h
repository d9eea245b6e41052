/* Sinks: the exports a run feeds each frame (docs/run.md: the stages of a frame).
 *
 *   plush_scene_output out = { .dir = "out", .stem = "bear", .every = 10 };   // dir made by the caller
 *   plush_scene_sink *sinks[2] = {0};
 *   plush_scene_sink_create(plush_scene_export_find("pmx+vmd"), scene, &out, &sinks[0], &diag);
 *   plush_scene_sink_create(plush_scene_export_find("ply"), scene, &out, &sinks[1], &diag);
 *   plush_scene_run_result res;
 *   plush_scene_run(scene, &(plush_scene_run_options){ .sinks = sinks, .sink_count = 2 }, &res, &diag);
 *   plush_scene_sink_destroy(sinks[0]), plush_scene_sink_destroy(sinks[1]);
 *
 * A sink sees the scene after each step (positions, normals, proxy nodes, binding: scene.h) and writes
 * what it makes when the run ends. Every export plush run knows is one entry of the registry
 * (plush_scene_exports); adding one is a new src/scene/sink_<name>.c defining its plush_scene_export and
 * one line in src/export/sink_internal.h's PLUSH_SCENE_SINKS list. Nothing else names an export.
 */
#ifndef PLUSH_SCENE_SINK_H
#define PLUSH_SCENE_SINK_H

#include "plush/scene.h"
#include "plush/quality.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the preview's camera follows. */
typedef enum plush_scene_preview_frame {
    PLUSH_SCENE_PREVIEW_MODEL = 0,    /* every vertex it draws */
    PLUSH_SCENE_PREVIEW_SOFT          /* the bound vertices (those the proxy or the direct soft body moves),
                                         with a margin; without a binding, the model (and a warning) */
} plush_scene_preview_frame;

/* Where the preview's camera looks from: MMD's front (from -Z), the model's left side (from +X), its back,
 * or turning round it once every PLUSH_SCENE_PREVIEW_ORBIT_SECONDS. */
typedef enum plush_scene_preview_view {
    PLUSH_SCENE_VIEW_FRONT = 0,
    PLUSH_SCENE_VIEW_SIDE,
    PLUSH_SCENE_VIEW_BACK,
    PLUSH_SCENE_VIEW_ORBIT
} plush_scene_preview_view;
#define PLUSH_SCENE_PREVIEW_ORBIT_SECONDS 10.0

/* Where a run's files go. */
typedef struct plush_scene_output {
    const char *dir;          /* OUTDIR, made by the caller before the sinks begin */
    const char *stem;         /* file names start with it: <stem>_plush.pmx (the model's name) */
    uint32_t every;           /* mesh sequences: every K-th frame only; 0: every frame */
    const char *model_file;   /* the model's path (textures are named relative to its folder); may be NULL */
    bool copy_textures;       /* the bake and glTF: copy textures beside the outputs instead of pointing at
                                 them where they are */
    const char *final_dir;    /* where dir's files end up when dir is a staging folder moved in place
                                 afterwards (paths inside the outputs are made for it); NULL: dir */
    plush_scene_preview_frame preview_frame; /* the preview: what its camera follows */
    plush_scene_preview_view preview_view;   /* the preview: where its camera looks from */
    uint32_t preview_width, preview_height;  /* the preview's size in pixels, even, 16..3840 x 16..2160;
                                                0: 640 x 480 */
    double bake_tolerance;    /* the bake and glTF: how far (model units, at the vertices) interpolated keys
                                 may miss the recorded motion; 0: 0.1% of the model's height; < 0: a key
                                 every frame */
    uint32_t bake_bones;      /* the bake: bones fitted to the motion instead of one pseudo-bone per cage
                                 triangle; 0: the fewest within the tolerance */
    bool bake_physics;        /* the bake: key the bones rigid bodies drive as plush computed them and make
                                 those bodies follow their bones (a player replays plush's physics); false:
                                 the player simulates them */
} plush_scene_output;

typedef struct plush_scene_sink plush_scene_sink;

/* What a sink does; begin and describe may be NULL. Frames arrive in increasing order, once each. */
typedef struct plush_scene_sink_ops {
    plush_status (*begin)(plush_scene_sink *sink, const plush_scene *scene, plush_diag *diag);
    plush_status (*frame)(plush_scene_sink *sink, const plush_scene *scene, uint32_t frame, plush_diag *diag);
    plush_status (*end)(plush_scene_sink *sink, const plush_scene *scene, plush_diag *diag);
    /* What it wrote, for a summary: one or more lines (no trailing newline); returns snprintf's count. */
    int (*describe)(const plush_scene_sink *sink, char *buf, size_t size);
    void (*destroy)(plush_scene_sink *sink);
    /* What a run of frames will cost it at most, in bytes: memory held at once and disk written. May be
     * NULL (nothing that grows with the frames). */
    void (*estimate)(const plush_scene_sink *sink, uint32_t frames, double *memory, double *disk);
    /* The paths it will write directly inside the output's dir (a file, or the folder of frames): up to max
     * stored into paths (strings the sink keeps), the count returned. May be NULL (it writes nothing). */
    size_t (*outputs)(const plush_scene_sink *sink, const char **paths, size_t max);
} plush_scene_sink_ops;

typedef struct plush_scene_export plush_scene_export;

/* Every sink starts with this (its own state follows). A failing call sets diag->file to the file at
 * fault (a string the sink keeps until it is destroyed). */
struct plush_scene_sink {
    const plush_scene_sink_ops *ops;
    const plush_scene_export *kind;
};

/* One export plush run offers. */
struct plush_scene_export {
    const char *name;         /* as --export spells it: "pmx+vmd", "obj", "ply", "im2" */
    const char *label;        /* its line in a run's summary: "baked", "mesh frames" */
    const char *help;         /* one line for --help */
    unsigned modes;           /* bit 1u << mode for each plush_scene_mode it works in */
    plush_status (*create)(const plush_scene *scene, const plush_scene_output *out, plush_scene_sink **sink,
                           plush_diag *diag);
};

/* The registry, in the order --help lists it. */
const plush_scene_export *const *plush_scene_exports(size_t *count);
/* The export named name (its first len bytes; len = strlen for a whole string), or NULL. */
const plush_scene_export *plush_scene_export_find(const char *name, size_t len);
/* The exports a mode writes when none are asked for: "pmx+vmd" in proxy mode, "ply" otherwise. */
const char *plush_scene_default_exports(plush_scene_mode mode);

/* Fails with PLUSH_E_ARGUMENT when the export does not work in the scene's mode (the bake and the
 * binding need the proxy). */
plush_status plush_scene_sink_create(const plush_scene_export *kind, const plush_scene *scene,
                                     const plush_scene_output *out, plush_scene_sink **sink, plush_diag *diag);
/* What the sink wrote, for the summary (as snprintf: the length it wanted). */
int plush_scene_sink_describe(const plush_scene_sink *sink, char *buf, size_t size);

/* The quality measure without its file: what plush run adds when --export quality is not asked for, so
 * that its summary always has the worst frame's figures (the surface's and, in proxy mode, the cage's).
 * Its kind is the "quality" export. Like that export it measures on a thread of its own while the run
 * computes the next frame (the same figures as in line); end waits for the last frame. */
plush_status plush_scene_quality_sink_create(const plush_scene *scene, plush_scene_sink **sink, plush_diag *diag);
/* A quality sink's worst frame so far (the surface's largest p99.9 strain) and its figures, the cage's at
 * that frame (zero with a NaN volume when there is no cage); false when the sink is not a quality sink or
 * has measured no frame. Complete once the run has ended the sink. */
bool plush_scene_quality_sink_worst(const plush_scene_sink *sink, int64_t *frame, plush_quality_figures *surface,
                                    plush_quality_figures *cage);
/* How many of the frames a quality sink measured miss the surface bar (plush_quality_meets_bar), and into
 * measured (when not NULL) how many it measured; 0 and 0 when the sink is not a quality sink. */
uint64_t plush_scene_quality_sink_over(const plush_scene_sink *sink, uint64_t *measured);
/* Frees a sink; NULL is a no-op. */
void plush_scene_sink_destroy(plush_scene_sink *sink);

/* Zero fields mean the defaults. */
typedef struct plush_scene_run_options {
    uint32_t frames;                      /* 0: plush_scene_default_frames */
    plush_scene_sink *const *sinks;
    size_t sink_count;
    bool stop_on_blow_up;                 /* end at the first soft body that blows up (direct mode: a frozen
                                             body is no reference) */
    void (*progress)(void *user, uint32_t done, uint32_t total);   /* after each frame, may be NULL */
    void *user;
    const char *out_dir;                  /* where the sinks write: its free disk space is checked; NULL:
                                             no disk check */
    double memory_available, disk_available;  /* bytes; 0: read from the system (MemAvailable, statvfs) */
} plush_scene_run_options;

typedef struct plush_scene_run_result {
    uint32_t frames;                      /* frames the run was to compute */
    uint32_t done;                        /* frames computed and handed to every sink */
    int64_t stopped_at;                   /* the frame a failure or blow-up ended the run at; -1: it ran on */
    bool blew_up;                         /* it ended because of stop_on_blow_up */
    const plush_scene_sink *failed_sink;  /* the sink whose call failed, NULL otherwise */
} plush_scene_run_result;

/* Before anything starts, the sinks' estimates for the frames are summed and checked against the memory
 * and disk space available: a run that would not fit is refused (PLUSH_E_RANGE, the figures in the
 * message). Then it begins every sink, steps frames 0 .. frames - 1 handing each to every sink in order, then ends every
 * sink (only when all frames were done: a stopped run writes no end-of-run file). The time the sinks
 * take is added to the scene's timing (exports). On failure diag names the file at fault: a sink's
 * output, or the model for a step. */
plush_status plush_scene_run(plush_scene *scene, const plush_scene_run_options *options,
                             plush_scene_run_result *result, plush_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
