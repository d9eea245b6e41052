/* A model's textures, read under one set of rules by every export that reads them (textures.h says which). */
#include "scene/textures.h"
#include "core/platform.h"
#include "plush/sys/core.h"
#include "plush/sys/render.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PATH_CAP = PLUSH__OS_PATH_MAX };

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
    const char *slash = plush__os_last_separator(model_file);
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

/* The real path of model_file's folder into real (PATH_CAP bytes); false when it cannot be resolved. */
/* realpath into a PATH_CAP buffer. */
static bool real_into(const char *path, char *out)
{
    char *r = plush__os_realpath(path);
    bool ok = r && strlen(r) < PATH_CAP;
    if (ok)
        strcpy(out, r);
    free(r);
    return ok;
}

/* The real path of model_file's folder into real (PATH_CAP bytes); false when it cannot be resolved. */
static bool model_folder(const char *model_file, char *real)
{
    const char *slash = plush__os_last_separator(model_file);
    char dir[PATH_CAP];
    size_t dn = slash ? (size_t)(slash - model_file) + (slash == model_file) : 0;
    if (dn >= sizeof dir)
        return false;
    if (slash)
        memcpy(dir, model_file, dn), dir[dn] = '\0';
    else
        memcpy(dir, ".", 2);
    return real_into(dir, real);
}

/* Where real path `file` lies below real path `dir` (whole components: "/m/a" is not below "/m/ab"): the
 * rest of file after dir's separator, or NULL when it is not below. */
static const char *below(const char *dir, const char *file)
{
    size_t n = strlen(dir);
    if (n > 0 && dir[n - 1] == '/') /* the root */
        return strncmp(file, dir, n) == 0 && file[n] != '\0' ? file + n : NULL;
    return strncmp(file, dir, n) == 0 && file[n] == '/' && file[n + 1] != '\0' ? file + n + 1 : NULL;
}

/* The checks on the path alone: *real (malloc'd) and *sub (malloc'd) when it leads to something inside the
 * model's folder. */
static plush_status resolve(const char *model_file, const plush_str *stored, const char *shown, char **real,
                            char **sub, plush_diag *diag)
{
    *real = *sub = NULL;
    if (absolute_path(stored))
        return plush_diag_fail(diag, PLUSH_E_OUTSIDE, -1, "texture", -1, "'%s' is an absolute path", shown);
    char dir[PATH_CAP], file[PATH_CAP];
    char *path = joined_path(model_file, stored);
    if (!path)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    bool found = real_into(path, file);
    free(path);
    if (!found || !model_folder(model_file, dir))
        return plush_diag_fail(diag, PLUSH_E_IO, -1, "texture", -1, "'%s' not found beside the model", shown);
    const char *rest = below(dir, file);
    if (!rest)
        return plush_diag_fail(diag, PLUSH_E_OUTSIDE, -1, "texture", -1, "'%s' leads outside the model's folder", shown);
    *real = strdup(file);
    *sub = strdup(rest);
    if (!*real || !*sub) {
        free(*real), free(*sub);
        *real = *sub = NULL;
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    return PLUSH_OK;
}

/* The whole of regular file `real` (at most PLUSH__TEXTURE_MAX_BYTES, asked before reading), then its
 * header: out->bytes, size, width, height, jpeg. */
static plush_status read_checked(const char *real, const char *shown, plush__texture_file *out, plush_diag *diag)
{
    /* no blocking on a FIFO, no last link followed (the real path has none, unless one was just made) */
    plush__os_info st;
    if (plush__os_stat(real, false, &st) && st.kind == PLUSH__OS_LINK)
        return plush_diag_fail(diag, PLUSH_E_IO, -1, "texture", -1, "'%s' cannot be read: %s", shown, strerror(ELOOP));
    int fd = plush__os_open_read(real);
    if (fd < 0)
        return plush_diag_fail(diag, PLUSH_E_IO, -1, "texture", -1, "'%s' cannot be read: %s", shown, strerror(errno));
    if (!plush__os_fstat(fd, &st) || st.kind != PLUSH__OS_FILE) {
        close(fd);
        return plush_diag_fail(diag, PLUSH_E_IO, -1, "texture", -1, "'%s' is not a regular file", shown);
    }
    if (st.size > PLUSH__TEXTURE_MAX_BYTES) {
        close(fd);
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "texture", -1, "'%s' is over %d MiB", shown,
                               (int)(PLUSH__TEXTURE_MAX_BYTES >> 20));
    }
    size_t size = (size_t)st.size, got = 0;
    uint8_t *bytes = malloc(size ? size : 1);
    if (!bytes) {
        close(fd);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    while (got < size) {
        ssize_t n = read(fd, bytes + got, size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    plush_diag local = {0};
    plush_status s = plush_image_texture_info(bytes, got, &out->width, &out->height, &out->jpeg, &local);
    if (s == PLUSH_OK && (out->width > PLUSH__TEXTURE_MAX_SIDE || out->height > PLUSH__TEXTURE_MAX_SIDE))
        s = plush_diag_fail(&local, PLUSH_E_RANGE, -1, NULL, -1, "%dx%d texels is over the %dx%d limit", out->width,
                            out->height, PLUSH__TEXTURE_MAX_SIDE, PLUSH__TEXTURE_MAX_SIDE);
    if (s != PLUSH_OK) {
        free(bytes);
        out->width = out->height = 0;
        return plush_diag_fail(diag, s, -1, "texture", -1, "'%s': %s", shown, local.message);
    }
    out->bytes = bytes;
    out->size = got;
    return PLUSH_OK;
}

plush_status plush__texture_open(const char *model_file, const plush_str *stored, plush__texture_file *out,
                                 plush_diag *diag)
{
    *out = (plush__texture_file){0};
    if (!model_file || !stored->s || stored->len == 0)
        return PLUSH_OK; /* nothing to look for, or nowhere to look */
    char shown[200];
    printable(stored, shown, sizeof shown);
    plush_status st = resolve(model_file, stored, shown, &out->path, &out->sub, diag);
    if (st == PLUSH_OK)
        st = read_checked(out->path, shown, out, diag);
    if (st != PLUSH_OK)
        plush__texture_close(out);
    return st;
}

void plush__texture_close(plush__texture_file *file)
{
    if (!file)
        return;
    free(file->path);
    free(file->sub);
    free(file->bytes);
    *file = (plush__texture_file){0};
}

/* ---- the run's store ------------------------------------------------------------------------------ */

struct plush__texture_store {
    plush__texture **entries;  /* each its own allocation, so pointers handed out stay put */
    size_t count;
    uint64_t pixels;           /* decoded so far */
};

plush_status plush__texture_store_create(plush__texture_store **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? PLUSH_OK : PLUSH_E_NOMEM;
}

void plush__texture_store_destroy(plush__texture_store *store)
{
    if (!store)
        return;
    for (size_t i = 0; i < store->count; i++) {
        free(store->entries[i]->path);
        plush_render_texture_free(&store->entries[i]->texels);
        free(store->entries[i]);
    }
    free(store->entries);
    free(store);
}

plush_status plush__texture_decode(plush__texture_store *store, const char *model_file, const plush_str *stored,
                                   const plush__texture **out, plush_diag *diag)
{
    *out = NULL;
    if (!model_file || !stored->s || stored->len == 0)
        return PLUSH_OK;
    char shown[200];
    printable(stored, shown, sizeof shown);
    plush__texture_file f = {0};
    plush_status st = resolve(model_file, stored, shown, &f.path, &f.sub, diag);
    for (size_t i = 0; st == PLUSH_OK && i < store->count; i++)
        if (strcmp(store->entries[i]->path, f.path) == 0) {
            *out = store->entries[i];
            plush__texture_close(&f);
            return PLUSH_OK;
        }
    if (st == PLUSH_OK)
        st = read_checked(f.path, shown, &f, diag);
    if (st == PLUSH_OK && store->pixels + (uint64_t)f.width * (uint64_t)f.height > PLUSH__TEXTURE_RUN_PIXELS)
        st = plush_diag_fail(diag, PLUSH_E_RANGE, -1, "texture", -1,
                             "'%s' (%dx%d) would take the texels decoded in this run over %llu million", shown,
                             f.width, f.height, (unsigned long long)(PLUSH__TEXTURE_RUN_PIXELS / 1000000));
    plush__texture *e = NULL;
    plush__texture **grown = NULL;
    if (st == PLUSH_OK) {
        e = calloc(1, sizeof *e);
        grown = e ? realloc(store->entries, (store->count + 1) * sizeof *grown) : NULL;
        if (grown)
            store->entries = grown;
        else
            st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    if (st == PLUSH_OK) {
        plush_diag local = {0};
        st = plush_image_decode_texture(f.bytes, f.size, PLUSH__TEXTURE_MAX_SIDE, &e->texels, &local);
        if (st != PLUSH_OK)
            plush_diag_fail(diag, st, -1, "texture", -1, "'%s': %s", shown, local.message);
    }
    if (st != PLUSH_OK) {
        free(e);
        plush__texture_close(&f);
        return st;
    }
    store->pixels += (uint64_t)f.width * (uint64_t)f.height;
    e->path = f.path;
    f.path = NULL;
    plush__texture_close(&f);
    store->entries[store->count++] = e;
    *out = e;
    return PLUSH_OK;
}
