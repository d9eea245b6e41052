/* A model's textures read for drawing, under a budget (sink_internal.h, plush__sink_texture_load).
 *
 * A downloaded model is untrusted input, and its texture paths are part of it: a path may name any file
 * ("C:\secret", "../../../home/me/.ssh/id_rsa", a symbolic link leading out), or a picture whose header
 * promises 65535x65535 texels. So a texture is read only when its real path (realpath: "..", "." and
 * symbolic links resolved) lies inside the model's folder's real path, the file is at most
 * PLUSH__TEXTURE_MAX_BYTES and the picture at most PLUSH__TEXTURE_MAX_SIDE on a side (asked of its header,
 * before decoding). Each refusal has its status; the preview turns it into one warning and keeps the
 * material's flat colour. */
#include "scene/sink_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The bytes of a path fit for a one-line message: control characters as '?'. */
static void printable(const plush_str *s, char *buf, size_t size)
{
    size_t n = 0;
    for (uint32_t i = 0; i < s->len && n + 1 < size; i++)
        buf[n++] = (unsigned char)s->s[i] < 0x20 || s->s[i] == 0x7f ? '?' : s->s[i];
    buf[n] = '\0';
}

/* "C:..." or a leading separator: a path that names its file from anywhere, not from the model. */
static bool absolute_path(const plush_str *s)
{
    if (s->len >= 1 && (s->s[0] == '/' || s->s[0] == '\\'))
        return true;
    return s->len >= 2 && s->s[1] == ':' && ((s->s[0] >= 'A' && s->s[0] <= 'Z') || (s->s[0] >= 'a' && s->s[0] <= 'z'));
}

/* The model's folder + "/" + stored with '\' as '/' (MMD on Windows reads both as separators), malloc'd. */
static char *joined_path(const char *model_file, const plush_str *stored)
{
    const char *slash = strrchr(model_file, '/');
    const char *dir = slash ? model_file : ".";
    size_t dn = slash ? (size_t)(slash - model_file) + (slash == model_file) : 1;
    char *p = malloc(dn + 1 + stored->len + 1);
    if (!p)
        return NULL;
    memcpy(p, dir, dn);
    p[dn] = '/';
    for (uint32_t i = 0; i < stored->len; i++)
        p[dn + 1 + i] = stored->s[i] == '\\' ? '/' : stored->s[i];
    p[dn + 1 + stored->len] = '\0';
    return p;
}

/* The real path of model_file's folder into real (PATH_MAX bytes); false when it cannot be resolved. */
static bool model_folder(const char *model_file, char *real)
{
    const char *slash = strrchr(model_file, '/');
    char dir[PATH_MAX];
    size_t dn = slash ? (size_t)(slash - model_file) + (slash == model_file) : 0;
    if (dn >= sizeof dir)
        return false;
    if (slash)
        memcpy(dir, model_file, dn), dir[dn] = '\0';
    else
        memcpy(dir, ".", 2);
    return realpath(dir, real) != NULL;
}

/* Whether real path `file` lies below real path `dir` (whole components: "/m/a" is not below "/m/ab"). */
static bool inside(const char *dir, const char *file)
{
    size_t n = strlen(dir);
    if (n > 0 && dir[n - 1] == '/') /* the root */
        return strncmp(file, dir, n) == 0 && file[n] != '\0';
    return strncmp(file, dir, n) == 0 && file[n] == '/';
}

plush_status plush__sink_texture_load(const char *model_file, const plush_str *stored, plush_render_texture *out,
                                      plush_diag *diag)
{
    *out = (plush_render_texture){0};
    if (!model_file || !stored->s || stored->len == 0)
        return PLUSH_OK; /* nothing to look for, or nowhere to look */
    char shown[200];
    printable(stored, shown, sizeof shown);
    if (absolute_path(stored))
        return plush_diag_fail(diag, PLUSH_E_OUTSIDE, -1, "texture", -1, "'%s' is an absolute path", shown);
    char dir[PATH_MAX], file[PATH_MAX];
    char *path = joined_path(model_file, stored);
    if (!path)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    bool found = realpath(path, file) != NULL;
    free(path);
    if (!found || !model_folder(model_file, dir))
        return plush_diag_fail(diag, PLUSH_E_IO, -1, "texture", -1, "'%s' not found beside the model", shown);
    if (!inside(dir, file))
        return plush_diag_fail(diag, PLUSH_E_OUTSIDE, -1, "texture", -1, "'%s' leads outside the model's folder", shown);
    plush_file_bytes bytes = {0};
    plush_diag local = {0};
    plush_status st = plush_file_map(file, &bytes, &local);
    if (st != PLUSH_OK)
        return plush_diag_fail(diag, st, -1, "texture", -1, "'%s': %s", shown, local.message);
    if (bytes.size > PLUSH__TEXTURE_MAX_BYTES) {
        plush_file_unmap(&bytes);
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "texture", -1, "'%s' is over %d MiB", shown,
                               (int)(PLUSH__TEXTURE_MAX_BYTES >> 20));
    }
    st = plush_image_decode_texture(bytes.data, bytes.size, PLUSH__TEXTURE_MAX_SIDE, out, &local);
    plush_file_unmap(&bytes);
    if (st != PLUSH_OK)
        return plush_diag_fail(diag, st, -1, "texture", -1, "'%s': %s", shown, local.message);
    return PLUSH_OK;
}
