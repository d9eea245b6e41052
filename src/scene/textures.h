/* Private to src/scene: the one way a model's textures are read -- by the preview, the glTF export and the
 * bake's copies (textures.c).
 *
 *   plush__texture_file f;
 *   if (plush__texture_open(model_file, &model->textures[t], &f, &diag) == PLUSH_OK && f.path) {
 *       ... f.bytes, f.size: the file, checked; f.width x f.height from its header ...
 *   }
 *   plush__texture_close(&f);
 *
 *   plush__texture_store *store = plush__scene_textures(scene);   // one per run: each file decoded once
 *   const plush__texture *tex;
 *   plush__texture_decode(store, model_file, &model->textures[t], &tex, &diag);
 *
 * A downloaded model is untrusted input and its texture paths are part of it: a path may name any file
 * ("C:\secret", "../../../home/me/.ssh/id_rsa", a symbolic link leading out, /dev/zero, a FIFO), or a picture
 * whose 70-byte header promises 23000x23000 texels. So a texture is read only
 *   - from inside the model's folder: its real path (realpath: "..", "." and symbolic links resolved) lies
 *     below the real path of the model's folder; an absolute or drive path is refused without looking;
 *   - from a regular file (not a device, FIFO, socket or directory), opened without following a last link
 *     and without blocking, of at most PLUSH__TEXTURE_MAX_BYTES, its size asked before reading;
 *   - as a picture: its header reads as BMP, TGA, PNG or JPEG, at most PLUSH__TEXTURE_MAX_SIDE on a side;
 *   - decoded within the run's budget: at most PLUSH__TEXTURE_RUN_PIXELS texels decoded in one run, each
 *     file decoded once whatever names it and whoever asks. */
#ifndef PLUSH_SCENE_TEXTURES_H
#define PLUSH_SCENE_TEXTURES_H

#include "plush/sys/render.h"
#include "plush/scene.h"
#include "plush/sys/core.h"

/* The budget: a texture file's bytes, a picture's side, and the texels decoded in one run (2^27 = 8
 * pictures of 4096x4096, 512 MiB as RGBA). */
#define PLUSH__TEXTURE_MAX_BYTES ((size_t)64 << 20)
enum { PLUSH__TEXTURE_MAX_SIDE = 8192 };
#define PLUSH__TEXTURE_RUN_PIXELS ((uint64_t)1 << 27)

/* A texture file read under the rules above. */
typedef struct plush__texture_file {
    char *path;                /* its real path (malloc'd); NULL: the model names no texture there */
    char *sub;                 /* that path below the model folder's real path, '/'-separated (malloc'd) */
    uint8_t *bytes;            /* the whole file (malloc'd) */
    size_t size;
    int width, height;         /* from its header */
    bool jpeg;
} plush__texture_file;

/* Reads the texture a model stores as `stored` (relative to model_file's folder; '\' and '/' both
 * separate, as MMD on Windows reads them). Fails (out zeroed, one message naming the path as stored) with
 * PLUSH_E_OUTSIDE for an absolute path or one leading out of the folder (through ".." or a symbolic link),
 * PLUSH_E_IO for a file that is not there, cannot be read or is not a regular file, PLUSH_E_RANGE for a file
 * over PLUSH__TEXTURE_MAX_BYTES or a picture over PLUSH__TEXTURE_MAX_SIDE on a side, PLUSH_E_FORMAT for bytes
 * that are no BMP, TGA, PNG or JPEG picture, PLUSH_E_NOMEM. An empty path or a NULL model_file is PLUSH_OK
 * with out->path NULL. */
plush_status plush__texture_open(const char *model_file, const plush_str *stored, plush__texture_file *out,
                                 plush_diag *diag);
/* Frees what plush__texture_open gave and zeroes it; a zeroed one is a no-op. */
void plush__texture_close(plush__texture_file *file);

/* A decoded texture as the run's store holds it. */
typedef struct plush__texture {
    char *path;                /* the real path: one entry per file */
    plush_render_texture texels;
} plush__texture;

/* The decoded textures of one run (the scene holds one: plush__scene_textures). */
typedef struct plush__texture_store plush__texture_store;
plush_status plush__texture_store_create(plush__texture_store **out);
void plush__texture_store_destroy(plush__texture_store *store);
/* The texels of texture `stored` (as plush__texture_open reads it), decoded the first time any caller asks
 * for that file and kept until the store goes; *out points into the store. Fails as plush__texture_open
 * does, and with PLUSH_E_RANGE when decoding would take the run past PLUSH__TEXTURE_RUN_PIXELS. An empty
 * path or a NULL model_file is PLUSH_OK with *out NULL. */
plush_status plush__texture_decode(plush__texture_store *store, const char *model_file, const plush_str *stored,
                                   const plush__texture **out, plush_diag *diag);

/* The store of the scene's run (made with the scene, freed with it). */
plush__texture_store *plush__scene_textures(const plush_scene *scene);

#endif
