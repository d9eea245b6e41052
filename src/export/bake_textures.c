/* The baked PMX's textures. A PMX names its textures relative to its own folder, often as Windows wrote
 * them ("tex\hair.png"), so a bake written elsewhere must name them anew: each path is rewritten to reach
 * the same file from the baked PMX's folder ("../models/alicia/tex\hair.png" style: the separator the
 * original used), or the file is copied beside the bake under the same sub-path and named there. Paths are
 * resolved as MMD resolves them on Windows: '\' and '/' both separate, ".." is taken lexically.
 *
 * A copy reads the model's file, so it follows the texture rules (scene/textures.h); and it writes a name
 * the model chose into the user's OUTDIR, so it never takes a name plush's outputs use (".plush*", frames,
 * the bake's own files: plush__sink_reserved) and never replaces an entry of OUTDIR the last run did not
 * write (plush_file_stage_wrote). It is written beside the PMX being written -- the staging folder of a run
 * -- and so appears with the set or not at all. */
#include "export/bake_internal.h"
#include "export/sink_internal.h"
#include "scene/textures.h"
#include "core/platform.h"
#include "plush/sys/core.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
    const char *slash = plush__os_last_separator(path);
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
    char *real = plush__os_realpath(path);
    if (real)
        return real;
    if (plush__os_absolute(path))
        return normalize(path);
    char *cwd = plush__os_getcwd();
    if (!cwd)
        return NULL;
    char *joined = join(cwd, path);
    free(cwd);
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
    plush__os_info st;
    return plush__os_stat(path, true, &st) && st.kind == PLUSH__OS_FILE;
}

static bool windows_absolute(const char *s)
{
    return ((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')) && s[1] == ':';
}

typedef struct texture_ctx {
    const char *model_file;
    const char *model_dir, *bake_dir; /* as given */
    const char *write_dir;            /* where the PMX is written, and the copies with it */
    const char *pmx_name, *vmd_name;  /* the bake's own file names */
    char *stem;                       /* the outputs' file stem, when the PMX is named <stem>_plush.pmx */
    char *model_abs, *bake_abs;       /* absolute */
    bool copy;
    char **copied_from, **copied_to;  /* the copies made: real source path, place below write_dir */
    size_t copied;
    plush_diag *diag;
} texture_ctx;

/* The first part of a '/'-separated path. */
static size_t first_part(const char *sub)
{
    const char *slash = strchr(sub, '/');
    return slash ? (size_t)(slash - sub) : strlen(sub);
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

static bool remember_copy(texture_ctx *c, const char *from, const char *place)
{
    char **f = realloc(c->copied_from, (c->copied + 1) * sizeof *f);
    if (f)
        c->copied_from = f;
    char **t = f ? realloc(c->copied_to, (c->copied + 1) * sizeof *t) : NULL;
    if (t)
        c->copied_to = t;
    char *fc = t ? dup_n(from, strlen(from)) : NULL, *tc = fc ? dup_n(place, strlen(place)) : NULL;
    if (!tc) {
        free(fc);
        return false;
    }
    c->copied_from[c->copied] = fc, c->copied_to[c->copied] = tc;
    c->copied++;
    return true;
}

/* Copy mode: texture `stored` (index i) read under the texture rules and written beside the PMX under its
 * sub-path; *place (malloc'd) is that sub-path. A texture the rules refuse, or whose place an output or
 * another file takes, is a warning and not copied (*place NULL: the caller names it where it is); a place
 * that would replace an entry of OUTDIR the last run did not write fails (PLUSH_E_EXISTS). */
static plush_status copy_one(texture_ctx *c, size_t i, const char *stored, const char *lexical, char **place)
{
    *place = NULL;
    char shown[160];
    printable(stored, shown, sizeof shown);
    plush_str s = {.s = stored, .len = (uint32_t)strlen(stored)};
    plush__texture_file f;
    plush_diag local = {0};
    plush_status st = plush__texture_open(c->model_file, &s, &f, &local);
    if (st == PLUSH_E_NOMEM)
        return plush_diag_fail(c->diag, st, -1, NULL, -1, "out of memory");
    if (st != PLUSH_OK || !f.path) {
        plush_diag_warn(c->diag, -1, "texture", (int64_t)i, "%s: not copied", local.message);
        plush__texture_close(&f);
        return PLUSH_OK;
    }
    /* the path as the model wrote it when it stays inside, else where it really is inside */
    bool leaves = lexical[0] == '/' || strncmp(lexical, "../", 3) == 0 || strcmp(lexical, "..") == 0;
    const char *sub = leaves ? f.sub : lexical;
    size_t top = first_part(sub);
    bool own = plush__sink_reserved(sub, top, c->stem) || (strlen(c->pmx_name) == top && strncasecmp(sub, c->pmx_name, top) == 0) ||
               (strlen(c->vmd_name) == top && strncasecmp(sub, c->vmd_name, top) == 0);
    if (own) {
        plush_diag_warn(c->diag, -1, "texture", (int64_t)i, "'%s': not copied: '%.*s' is the name of a plush output",
                        shown, (int)top, sub);
        plush__texture_close(&f);
        return PLUSH_OK;
    }
    for (size_t k = 0; k < c->copied; k++)
        if (strcmp(c->copied_to[k], sub) == 0) {
            if (strcmp(c->copied_from[k], f.path) != 0)
                plush_diag_warn(c->diag, -1, "texture", (int64_t)i, "'%s': not copied: another texture takes %s", shown,
                                sub);
            else
                *place = dup_n(sub, strlen(sub)); /* the same file, copied already */
            plush__texture_close(&f);
            return *place || strcmp(c->copied_from[k], f.path) != 0 ? PLUSH_OK : PLUSH_E_NOMEM;
        }
    char *final = join(c->bake_dir, sub), *top_name = dup_n(sub, top), *to = join(c->write_dir, sub);
    char *final_top = top_name ? join(c->bake_dir, top_name) : NULL;
    st = final && top_name && to && final_top ? PLUSH_OK : PLUSH_E_NOMEM;
    bool ours = false; /* a folder an earlier copy of this bake made */
    for (size_t k = 0; k < c->copied; k++)
        ours |= first_part(c->copied_to[k]) == top && strncmp(c->copied_to[k], sub, top) == 0;
    char *real = st == PLUSH_OK ? plush__os_realpath(final) : NULL;
    plush__os_info there;
    if (real && strcmp(real, f.path) == 0) {
        /* the bake goes beside the model: the texture is there already */
    } else if (st == PLUSH_OK && !ours && plush__os_stat(final_top, false, &there) &&
               !plush_file_stage_wrote(c->bake_dir, top_name)) {
        char where[160];
        printable(final_top, where, sizeof where);
        st = plush_diag_fail(c->diag, PLUSH_E_EXISTS, -1, "texture", (int64_t)i,
                             "'%s' would replace %s, which plush did not write: not copied (move it, or choose another "
                             "OUTDIR)",
                             shown, where);
    } else if (st == PLUSH_OK && (st = make_folders(c->write_dir, sub, c->diag)) == PLUSH_OK) {
        plush_diag wd = {0};
        st = plush_file_write_atomic(to, f.bytes, f.size, &wd);
        if (st != PLUSH_OK)
            plush_diag_fail(c->diag, st, -1, NULL, -1, "cannot copy the texture to %s: %s", to, wd.message);
    }
    if (st == PLUSH_OK && (!remember_copy(c, f.path, sub) || !(*place = dup_n(sub, strlen(sub)))))
        st = PLUSH_E_NOMEM;
    if (st == PLUSH_E_NOMEM)
        plush_diag_fail(c->diag, st, -1, NULL, -1, "out of memory");
    free(final), free(top_name), free(to), free(final_top), free(real);
    plush__texture_close(&f);
    return st;
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
    char *joined = sub ? join(c->model_abs, sub) : NULL;
    char *from_abs = joined ? normalize(joined) : NULL;
    free(joined);
    char *out = NULL;
    if (!from_abs) {
        *st = PLUSH_E_NOMEM;
        goto done;
    }
    if (c->copy) {
        char *place = NULL;
        if ((*st = copy_one(c, index, stored, sub, &place)) != PLUSH_OK)
            goto done;
        if (place) {
            out = with_separator(place, sep);
            free(place);
            if (!out)
                *st = PLUSH_E_NOMEM;
            goto done;
        }
    } else {
        char *from = join(c->model_dir, sub);
        if (!from) {
            *st = PLUSH_E_NOMEM;
            goto done;
        }
        if (!regular_file(from)) {
            char where[160];
            printable(from, where, sizeof where);
            plush_diag_warn(c->diag, -1, "texture", (int64_t)index, "'%s' not found (no file %s)", shown, where);
        }
        free(from);
    }
    if (sub[0] == '/')
        goto done; /* an absolute path names its file from anywhere */
    out = relative(c->bake_abs, from_abs, sep);
    if (!out)
        *st = PLUSH_E_NOMEM;
done:
    free(sub);
    free(from_abs);
    return out;
}

static const char *base_name(const char *path)
{
    const char *slash = plush__os_last_separator(path);
    return slash ? slash + 1 : path;
}

plush_status plush__bake_textures(plush_pmx_model *o, const char *pmx_path, const char *vmd_path,
                                  const plush_scene_bake_write_options *options, plush_diag *diag)
{
    if (!options || !options->model_file || !o->texture_count)
        return PLUSH_OK;
    texture_ctx c = {.model_file = options->model_file, .copy = options->copy_textures, .diag = diag,
                     .pmx_name = base_name(pmx_path), .vmd_name = base_name(vmd_path)};
    char *model_dir = folder_of(options->model_file);
    char *write_dir = folder_of(pmx_path);
    char *bake_dir = options->bake_dir ? dup_n(options->bake_dir, strlen(options->bake_dir)) : folder_of(pmx_path);
    size_t pn = strlen(c.pmx_name), sn = strlen(PLUSH__OUT_SUFFIX ".pmx");
    if (pn > sn && strcmp(c.pmx_name + pn - sn, PLUSH__OUT_SUFFIX ".pmx") == 0)
        c.stem = dup_n(c.pmx_name, pn - sn);
    c.model_dir = model_dir, c.bake_dir = bake_dir, c.write_dir = write_dir;
    c.model_abs = model_dir ? absolute(model_dir) : NULL;
    c.bake_abs = bake_dir ? absolute(bake_dir) : NULL;
    plush_str *textures = plush_arena_array(plush_pmx_arena(o), o->texture_count, sizeof *textures);
    plush_status st = c.model_abs && c.bake_abs && write_dir && textures ? PLUSH_OK : PLUSH_E_NOMEM;
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
    free(write_dir);
    free(c.stem);
    free(c.model_abs);
    free(c.bake_abs);
    for (size_t k = 0; k < c.copied; k++)
        free(c.copied_from[k]), free(c.copied_to[k]);
    free(c.copied_from);
    free(c.copied_to);
    if (st == PLUSH_E_NOMEM)
        return plush_diag_fail(diag, st, -1, NULL, -1, "out of memory");
    if (st != PLUSH_OK)
        return st; /* copy_one said why */
    o->textures = textures;
    return PLUSH_OK;
}
