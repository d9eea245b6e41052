/* Private to src/scene: the export registry and what the sinks share. */
#ifndef PLUSH_SCENE_SINK_INTERNAL_H
#define PLUSH_SCENE_SINK_INTERNAL_H

#include "plush/render.h"
#include "plush/scene_sink.h"

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

/* "dir/stem<suffix>", malloc'd (NULL when out of memory). */
char *plush__sink_path(const plush_scene_output *out, const char *suffix);
/* The bake's tolerance for out (model units): out->bake_tolerance, its default 0.1% of the model's height
 * resolved here once for the bake and the glTF export; negative: every key. */
double plush__sink_bake_tolerance(const plush_scene_output *out, const plush_pmx_model *model);
/* MMD loads a motion of at most this many keyframes. */
#define PLUSH__MMD_MAX_KEYS 600000u
/* "dir/name" (frames, preview.mp4), malloc'd (NULL when out of memory). */
char *plush__sink_file(const plush_scene_output *out, const char *name);
/* Moves a sink's failure (status, place, message, file) into the run's diag, keeping its warnings. */
plush_status plush__sink_fail(plush_diag *diag, const plush_diag *local);
/* The folder a sink writes into (OUTDIR/frames), made when missing; a failure names it. */
plush_status plush__sink_make_dir(const char *dir, plush_diag *diag);
/* The budget for a texture a model names: the file's size and the picture's width and height. */
#define PLUSH__TEXTURE_MAX_BYTES ((size_t)64 << 20)
enum { PLUSH__TEXTURE_MAX_SIDE = 8192 };
/* Decodes the texture a model stores as `stored` (relative to model_file's folder; '\' and '/' both
 * separate, as MMD on Windows reads them) into out (plush_render_texture_free). Only a file whose real path
 * lies inside the real path of the model's folder is read. Fails (out zeroed, the message naming the path
 * as stored) with PLUSH_E_OUTSIDE for an absolute path or one leading out of the folder (through ".." or a
 * symbolic link), PLUSH_E_IO for a file that is not there or cannot be read, PLUSH_E_RANGE for a file over
 * PLUSH__TEXTURE_MAX_BYTES or a picture over PLUSH__TEXTURE_MAX_SIDE on a side (told by its header, before
 * decoding), PLUSH_E_FORMAT for bytes stb_image does not decode, PLUSH_E_NOMEM. An empty path or a NULL
 * model_file is PLUSH_OK with no texels. */
plush_status plush__sink_texture_load(const char *model_file, const plush_str *stored, plush_render_texture *out,
                                      plush_diag *diag);
/* Adds seconds to the scene's export time. */
void plush__scene_add_export_time(plush_scene *scene, double seconds);

#endif
