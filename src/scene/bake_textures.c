/* The baked PMX's textures. A PMX names its textures relative to its own folder, often as Windows wrote
 * them ("tex\hair.png"), so a bake written elsewhere must name them anew: each path is rewritten to reach
 * the same file from the baked PMX's folder ("../models/alicia/tex\hair.png" style: the separator the
 * original used), or the file is copied beside the bake under the same sub-path and named there. Paths are
 * resolved as MMD resolves them on Windows: '\' and '/' both separate, ".." is taken lexically. */
#include "scene/bake_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct plush__bake_copies {
    size_t count;
    char **from, **to;        /* source file, destination file (both malloc'd) */
    char **sub;               /* destination relative to the bake's folder, '/'-separated (malloc'd) */
};

static char *dup_n(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (p)
        memcpy(p, s, n), p[n] = '\0';
    return p;
}

/* "a/b" (b alone when a is empty or b absolute). */
static char *join(const char *a, const char *b)
{
    if (!a || !*a || b[0] == '/')
        return dup_n(b, strlen(b));
    size_t n = strlen(a) + 1 + strlen(b) + 1;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s%s%s", a, a[strlen(a) - 1] == '/' ? "" : "/", b);
    return p;
}

/* The folder part of a path: "." when it has none. */
static char *folder_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return dup_n(".", 1);
    return dup_n(path, slash == path ? 1 : (size_t)(slash - path));
}

/* '\' and '/' as one separator, "." and empty parts dropped, "x/.." cancelled (a leading ".." of a
 * relative path stays; above the root there is nothing). "." for nothing left. */
static char *normalize(const char *path)
{
    size_t n = strlen(path);
    char *out = malloc(n + 2);
    if (!out)
        return NULL;
    bool absolute = path[0] == '/' || path[0] == '\\';
    size_t len = 0, keep = 0; /* keep: how many leading ".." parts a relative result has */
    if (absolute)
        out[len++] = '/';
    size_t base = len;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && path[j] != '/' && path[j] != '\\')
            j++;
        size_t part = j - i;
        if (part == 0 || (part == 1 && path[i] == '.')) {
            /* nothing */
        } else if (part == 2 && path[i] == '.' && path[i + 1] == '.') {
            size_t parts = 0;
            for (size_t k = base; k < len; k++)
                parts += k == base || out[k] == '/';
            if (parts > keep) {
                while (len > base && out[len - 1] != '/')
                    len--;
                if (len > base)
                    len--;
            } else if (!absolute) {
                if (len > base)
                    out[len++] = '/';
                memcpy(out + len, "..", 2);
                len += 2;
                keep++;
            }
        } else {
            if (len > base)
                out[len++] = '/';
            memcpy(out + len, path + i, part);
            len += part;
        }
        i = j + 1;
    }
    if (len == 0)
        out[len++] = '.';
    out[len] = '\0';
    return out;
}

/* An absolute, normalized path: the folder's real path when it exists (the model's and the bake's
 * folders do), otherwise the working directory joined with it. */
static char *absolute(const char *path)
{
    char real[PATH_MAX];
    if (realpath(path, real))
        return dup_n(real, strlen(real));
    if (path[0] == '/')
        return normalize(path);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return NULL;
    char *joined = join(cwd, path);
    char *norm = joined ? normalize(joined) : NULL;
    free(joined);
    return norm;
}

/* The path of file `to` seen from folder `from` (both absolute and normalized), with sep between parts. */
static char *relative(const char *from, const char *to, char sep)
{
    /* the common folder: whole parts only */
    size_t common = 0;
    for (size_t i = 0;; i++) {
        bool end_from = from[i] == '\0' || from[i] == '/', end_to = to[i] == '\0' || to[i] == '/';
        if (end_from && end_to)
            common = i;
        if (from[i] == '\0' || to[i] == '\0' || from[i] != to[i])
            break;
    }
    size_t ups = 0;
    for (size_t i = common; from[i]; i++)
        ups += from[i] == '/' && from[i + 1] != '\0';
    const char *rest = to + common + (to[common] == '/');
    size_t n = 3 * ups + strlen(rest) + 1;
    char *p = malloc(n);
    if (!p)
        return NULL;
    size_t len = 0;
    for (size_t u = 0; u < ups; u++)
        p[len++] = '.', p[len++] = '.', p[len++] = sep;
    for (const char *c = rest; *c; c++)
        p[len++] = *c == '/' ? sep : *c;
    p[len] = '\0';
    return p;
}

/* The bytes of a path fit for a one-line message: control characters as '?'. */
static void printable(const char *s, char *buf, size_t size)
{
    size_t n = 0;
    for (; *s && n + 1 < size; s++)
        buf[n++] = (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s;
    buf[n] = '\0';
}

/* A copy of s with '/' as sep. */
static char *with_separator(const char *s, char sep)
{
    char *p = dup_n(s, strlen(s));
    for (char *c = p; c && *c; c++)
        if (*c == '/')
            *c = sep;
    return p;
}

static bool regular_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool windows_absolute(const char *s)
{
    return ((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')) && s[1] == ':';
}

typedef struct texture_ctx {
    const char *model_dir, *bake_dir; /* as given */
    char *model_abs, *bake_abs;       /* absolute */
    bool copy;
    plush__bake_copies *copies;
    plush_diag *diag;
} texture_ctx;

static plush_status add_copy(plush__bake_copies *c, char *from, char *to, char *sub)
{
    char **f = realloc(c->from, (c->count + 1) * sizeof *f);
    if (f)
        c->from = f;
    char **t = f ? realloc(c->to, (c->count + 1) * sizeof *t) : NULL;
    if (t)
        c->to = t;
    char **s = t ? realloc(c->sub, (c->count + 1) * sizeof *s) : NULL;
    if (s)
        c->sub = s;
    if (!s) {
        free(from), free(to), free(sub);
        return PLUSH_E_NOMEM;
    }
    c->from[c->count] = from, c->to[c->count] = to, c->sub[c->count] = sub;
    c->count++;
    return PLUSH_OK;
}

/* Copy mode: where texture `sub` (normalized, relative to the model's folder) goes beside the bake: the
 * same sub-path, or its file name alone when the path leaves the model's folder (malloc'd). *taken: a
 * different file already goes there (the caller then points at this one where it is). */
static char *copy_place(const texture_ctx *c, const char *sub, const char *from_abs, bool *taken)
{
    const char *name = strrchr(sub, '/');
    bool leaves = sub[0] == '/' || strncmp(sub, "../", 3) == 0 || strcmp(sub, "..") == 0;
    const char *place = leaves ? (name ? name + 1 : sub) : sub;
    *taken = false;
    for (size_t i = 0; i < c->copies->count; i++)
        if (strcmp(c->copies->sub[i], place) == 0 && strcmp(c->copies->from[i], from_abs) != 0)
            *taken = true;
    return dup_n(place, strlen(place));
}

/* The new path of one texture (malloc'd), or NULL with *st set on failure (NULL and PLUSH_OK: keep it). */
static char *rewrite(texture_ctx *c, size_t index, const char *stored, plush_status *st)
{
    *st = PLUSH_OK;
    char shown[160];
    printable(stored, shown, sizeof shown);
    if (!*stored)
        return NULL;
    if (windows_absolute(stored)) {
        plush_diag_warn(c->diag, -1, "texture", (int64_t)index, "'%s' is a Windows drive path: kept as stored",
                        shown);
        return NULL;
    }
    char sep = strchr(stored, '\\') ? '\\' : '/';
    char *sub = normalize(stored);
    char *from = sub ? join(c->model_dir, sub) : NULL;
    char *joined = sub ? join(c->model_abs, sub) : NULL;
    char *from_abs = joined ? normalize(joined) : NULL;
    free(joined);
    char *out = NULL;
    if (!from_abs) {
        *st = PLUSH_E_NOMEM;
        goto done;
    }
    bool found = regular_file(from);
    if (!found) {
        char where[160];
        printable(from, where, sizeof where);
        plush_diag_warn(c->diag, -1, "texture", (int64_t)index, "'%s' not found (no file %s)", shown, where);
    }
    if (c->copy) {
        bool taken = false;
        char *place = copy_place(c, sub, from_abs, &taken);
        if (!place) {
            *st = PLUSH_E_NOMEM;
            goto done;
        }
        if (taken) {
            free(place); /* another file took the name: point at this one where it is */
        } else {
            out = with_separator(place, sep);
            char *to = join(c->bake_dir, place);
            char *from_copy = found ? dup_n(from_abs, strlen(from_abs)) : NULL;
            if (!out || !to || (found && !from_copy)) {
                free(out), free(to), free(from_copy), free(place);
                out = NULL;
                *st = PLUSH_E_NOMEM;
            } else if (!found) {
                free(to), free(place); /* named where its copy would be: dropping the file there completes the bake */
            } else if (add_copy(c->copies, from_copy, to, place) != PLUSH_OK) {
                free(out);
                out = NULL;
                *st = PLUSH_E_NOMEM;
            }
            goto done;
        }
    }
    if (sub[0] == '/')
        goto done; /* an absolute path names its file from anywhere */
    out = relative(c->bake_abs, from_abs, sep);
    if (!out)
        *st = PLUSH_E_NOMEM;
done:
    free(sub);
    free(from);
    free(from_abs);
    return out;
}

void plush__bake_copies_free(plush__bake_copies *copies)
{
    if (!copies)
        return;
    for (size_t i = 0; i < copies->count; i++)
        free(copies->from[i]), free(copies->to[i]), free(copies->sub[i]);
    free(copies->from);
    free(copies->to);
    free(copies->sub);
    free(copies);
}

plush_status plush__bake_textures(plush_pmx_model *o, const char *pmx_path,
                                  const plush_scene_bake_write_options *options, plush__bake_copies **copies,
                                  plush_diag *diag)
{
    *copies = NULL;
    if (!options || !options->model_file || !o->texture_count)
        return PLUSH_OK;
    texture_ctx c = {.copy = options->copy_textures, .diag = diag};
    char *model_dir = folder_of(options->model_file);
    char *bake_dir = options->bake_dir ? dup_n(options->bake_dir, strlen(options->bake_dir)) : folder_of(pmx_path);
    c.model_dir = model_dir, c.bake_dir = bake_dir;
    c.model_abs = model_dir ? absolute(model_dir) : NULL;
    c.bake_abs = bake_dir ? absolute(bake_dir) : NULL;
    c.copies = calloc(1, sizeof *c.copies);
    plush_str *textures = plush_arena_array(plush_pmx_arena(o), o->texture_count, sizeof *textures);
    plush_status st = c.model_abs && c.bake_abs && c.copies && textures ? PLUSH_OK : PLUSH_E_NOMEM;
    for (size_t i = 0; st == PLUSH_OK && i < o->texture_count; i++) {
        textures[i] = o->textures[i];
        char *path = rewrite(&c, i, o->textures[i].s ? o->textures[i].s : "", &st);
        if (path) {
            size_t n = strlen(path);
            char *s = plush_arena_strdup(plush_pmx_arena(o), path, n);
            if (s)
                textures[i] = (plush_str){.s = s, .len = (uint32_t)n};
            else
                st = PLUSH_E_NOMEM;
            free(path);
        }
    }
    free(model_dir);
    free(bake_dir);
    free(c.model_abs);
    free(c.bake_abs);
    if (st != PLUSH_OK) {
        plush__bake_copies_free(c.copies);
        return plush_diag_fail(diag, st, -1, NULL, -1, "out of memory");
    }
    o->textures = textures;
    *copies = c.copies;
    return PLUSH_OK;
}

/* Makes the folders of sub (a '/'-separated path under dir) below dir. */
static plush_status make_folders(const char *dir, const char *sub, plush_diag *diag)
{
    plush_status st = PLUSH_OK;
    for (const char *slash = strchr(sub, '/'); st == PLUSH_OK && slash; slash = strchr(slash + 1, '/')) {
        char *part = dup_n(sub, (size_t)(slash - sub));
        char *path = part ? join(dir, part) : NULL;
        plush_diag local = {0};
        st = path ? plush_file_make_dir(path, &local) : PLUSH_E_NOMEM;
        if (st != PLUSH_OK)
            plush_diag_fail(diag, st, -1, NULL, -1, "cannot make the texture folder %s: %s", path ? path : sub,
                            local.message);
        free(part);
        free(path);
    }
    return st;
}

plush_status plush__bake_copy_textures(const plush__bake_copies *copies, const char *pmx_path, const char *bake_dir,
                                       plush_diag *diag)
{
    if (!copies || !copies->count)
        return PLUSH_OK;
    char *dir = bake_dir ? dup_n(bake_dir, strlen(bake_dir)) : folder_of(pmx_path);
    if (!dir)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    plush_status st = PLUSH_OK;
    for (size_t i = 0; st == PLUSH_OK && i < copies->count; i++) {
        char real_to[PATH_MAX];
        if (realpath(copies->to[i], real_to) && strcmp(real_to, copies->from[i]) == 0)
            continue; /* the bake sits beside the model: the texture is there already */
        st = make_folders(dir, copies->sub[i], diag);
        uint8_t *data = NULL;
        size_t size = 0;
        plush_diag local = {0};
        if (st == PLUSH_OK && (st = plush_file_read(copies->from[i], &data, &size, &local)) != PLUSH_OK)
            plush_diag_fail(diag, st, -1, NULL, -1, "cannot read the texture %s: %s", copies->from[i], local.message);
        if (st == PLUSH_OK && (st = plush_file_write_atomic(copies->to[i], data, size, &local)) != PLUSH_OK)
            plush_diag_fail(diag, st, -1, NULL, -1, "cannot copy the texture to %s: %s", copies->to[i], local.message);
        free(data);
    }
    free(dir);
    return st;
}
