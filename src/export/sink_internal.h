/* Private to src/scene: the export registry and what the sinks share. */
#ifndef PLUSH_SCENE_SINK_INTERNAL_H
#define PLUSH_SCENE_SINK_INTERNAL_H

#include "plush/sys/render.h"
#include "plush/scene_sink.h"
#include "plush/sys/core.h"
#include "scene/textures.h"

/* The registry: one line per export, in --help order. X(name) refers to the plush_scene_export
 * plush__export_<name> that src/scene/sink_<file>.c defines. Adding an export is one line here. */
#define PLUSH_SCENE_SINKS(X) \
    X(bake)                  \
    X(gltf)                  \
    X(obj)                   \
    X(ply)                   \
    X(cage)                  \
    X(im2)                   \
    X(quality)               \
    X(preview)

#define PLUSH_SCENE_SINK_DECLARE(name) extern const plush_scene_export plush__export_##name;
PLUSH_SCENE_SINKS(PLUSH_SCENE_SINK_DECLARE)
#undef PLUSH_SCENE_SINK_DECLARE

/* Bit of a mode in plush_scene_export.modes. */
#define PLUSH_SCENE_MODE_BIT(mode) (1u << (unsigned)(mode))
#define PLUSH_SCENE_ALL_MODES                                                                          \
    (PLUSH_SCENE_MODE_BIT(PLUSH_SCENE_PROXY) | PLUSH_SCENE_MODE_BIT(PLUSH_SCENE_BONES) |                \
     PLUSH_SCENE_MODE_BIT(PLUSH_SCENE_DIRECT) | PLUSH_SCENE_MODE_BIT(PLUSH_SCENE_PLAIN))

/* The names a run's outputs take in OUTDIR: <stem>_plush.pmx, .vmd, .glb, .im2, the folder of frames, the
 * preview and the quality figures; ".plush*" is the file set's own (core.h). */
#define PLUSH__OUT_SUFFIX "_plush"
#define PLUSH__OUT_FRAMES "frames"
#define PLUSH__OUT_PREVIEW "preview.mp4"
#define PLUSH__OUT_QUALITY "quality.csv"
/* Whether a name of OUTDIR's (len bytes, no '/') is one of those for file stem `stem`, compared without
 * case (a model made on Windows may spell it "Frames"): a file a model names must not take it. */
bool plush__sink_reserved(const char *name, size_t len, const char *stem);
/* "dir/stem<suffix>", malloc'd (NULL when out of memory). */
char *plush__sink_path(const plush_scene_output *out, const char *suffix);
/* The bake's tolerance for out (model units): out->bake_tolerance, its default 0.1% of the model's height
 * resolved here once for the bake and the glTF export; negative: every key. */
double plush__sink_bake_tolerance(const plush_scene_output *out, const plush_pmx_model *model);
/* The bake a sink records into: the scene's shared one when the output asks for the tolerance it was made
 * with (the pmx+vmd and glTF exports of one run record the same cage frames and fit the same bones: once,
 * not twice), else a bake of the sink's own (*shared false: the sink destroys it). A shared bake is the
 * scene's: it records each frame once (plush__sink_bake_frame) and fits once per bone count. */
plush_status plush__sink_bake_get(const plush_scene *scene, const plush_scene_output *out, plush_scene_bake **bake,
                                  bool *shared, plush_diag *diag);
/* Records the scene's frame into bake unless it holds that frame already (another sink recorded it). */
plush_status plush__sink_bake_frame(plush_scene_bake *bake, const plush_scene *scene, uint32_t frame,
                                    plush_diag *diag);
/* MMD loads a motion of at most this many keyframes. */
#define PLUSH__MMD_MAX_KEYS 600000u
/* The baked VMD's bytes at most (60 MB: 540,000 bone keys of 111 bytes). */
#define PLUSH__BAKE_MAX_BYTES 60000000u
/* "dir/name" (frames, preview.mp4), malloc'd (NULL when out of memory). */
char *plush__sink_file(const plush_scene_output *out, const char *name);
/* Moves a sink's failure (status, place, message, file) into the run's diag, keeping its warnings. */
plush_status plush__sink_fail(plush_diag *diag, const plush_diag *local);
/* The folder a sink writes into (OUTDIR/frames), made when missing; a failure names it. */
plush_status plush__sink_make_dir(const char *dir, plush_diag *diag);
/* Adds seconds to the scene's export time. */
void plush__scene_add_export_time(plush_scene *scene, double seconds);

#endif
