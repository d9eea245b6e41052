/* Outputs as one set: several files committed together, a staged directory moved in as a whole, and
 * the lock that keeps a second writer out of an output directory. */
#include "core/file_internal.h"
#include "core/platform.h"
#include "plush/sys/core.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s/%s", dir, name);
    return s;
}

/* ---- several files --------------------------------------------------------------------------- */

typedef struct set_entry {
    char *tmp, *target;
    int slot;
} set_entry;

struct plush_file_set {
    set_entry *entries;
    size_t count, capacity;
};

plush_status plush_file_set_create(plush_file_set **out, plush_diag *diag)
{
    *out = calloc(1, sizeof **out);
    return *out ? PLUSH_OK : plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
}

plush_status plush_file_set_add(plush_file_set *set, const char *path, const void *data, size_t size,
                                plush_diag *diag)
{
    if (set->count == set->capacity) {
        size_t cap = set->capacity ? set->capacity * 2 : 4;
        set_entry *e = realloc(set->entries, cap * sizeof *e);
        if (!e)
            return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        set->entries = e;
        set->capacity = cap;
    }
    plush__target_kind kind;
    char *target;
    plush_status st = plush__file_target(path, &kind, &target, diag);
    if (st != PLUSH_OK)
        return st;
    if (kind == PLUSH__TARGET_STREAM)
        return plush__file_write_stream(path, data, size, diag);
    set_entry *e = &set->entries[set->count];
    st = plush__file_write_temp(target, data, size, &e->tmp, &e->slot, diag);
    if (st != PLUSH_OK) {
        free(target);
        return st;
    }
    e->target = target;
    set->count++;
    return PLUSH_OK;
}

static void set_clear(plush_file_set *set, bool remove_temps)
{
    for (size_t i = 0; i < set->count; i++) {
        if (remove_temps)
            plush__os_unlink(set->entries[i].tmp);
        plush__guard_remove(set->entries[i].slot);
        free(set->entries[i].tmp);
        free(set->entries[i].target);
    }
    set->count = 0;
}

plush_status plush_file_set_commit(plush_file_set *set, plush_diag *diag)
{
    plush__rename *ops = calloc(set->count ? set->count : 1, sizeof *ops);
    if (!ops)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    for (size_t i = 0; i < set->count; i++)
        ops[i] = (plush__rename){set->entries[i].tmp, set->entries[i].target, false};
    size_t done = plush__guard_commit(ops, set->count);
    plush_status st = PLUSH_OK;
    if (done < set->count)
        st = plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "cannot write %s: %s", set->entries[done].target,
                             strerror(errno));
    free(ops);
    set_clear(set, st != PLUSH_OK);
    return st;
}

void plush_file_set_destroy(plush_file_set *set)
{
    if (!set)
        return;
    set_clear(set, true);
    free(set->entries);
    free(set);
}

/* ---- a staged directory ---------------------------------------------------------------------- */

struct plush_file_stage {
    char *dir, *path;
    int slot;
    uint64_t *input_dev;      /* the run's inputs (plush_file_stage_protect): never removed or replaced */
    uint64_t *input_ino;
    size_t input_count;
};

static const char set_manifest[] = ".plush-set";
/* The first line of a .plush-set that records what identifies each entry; a list without it (the
 * format before) proves nothing. */
static const char set_header[] = "plush-set 2";

enum { GUARD_FAILED = -2 };

/* mkdtemp(path), the folder registered for cleanup before it exists (as temporary files are) and an
 * interrupting signal held off until mkdtemp has named it: one that came in between left the folder behind,
 * and OUTDIR with it (test_cli_hostile's SIGTERM case, under load). Its guard slot, or GUARD_FAILED with
 * errno set. */
static int guarded_mkdtemp(char *path)
{
    plush__os_held held;
    plush__os_hold_interrupts(&held);
    int slot = plush__guard_add(PLUSH__GUARD_TREE, path);
    bool made = plush__os_mkdtemp(path);
    int e = errno;
    if (!made)
        plush__guard_remove(slot);
    plush__os_release_interrupts(&held);
    errno = e;
    return made ? slot : GUARD_FAILED;
}

plush_status plush_file_stage_begin(const char *dir, plush_file_stage **out, plush_diag *diag)
{
    *out = NULL;
    plush_status st = plush_file_make_dir(dir, diag);
    if (st != PLUSH_OK)
        return st;
    plush_file_stage *s = calloc(1, sizeof *s);
    if (s) {
        s->slot = -1;
        s->dir = strdup(dir);
        s->path = join(dir, ".plush-tmp.XXXXXX");
    }
    if (!s || !s->dir || !s->path) {
        plush_file_stage_destroy(s);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    s->slot = guarded_mkdtemp(s->path);
    if (s->slot == GUARD_FAILED) {
        int e = errno;
        s->slot = -1;
        free(s->path);
        s->path = NULL;
        plush_file_stage_destroy(s);
        return plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "cannot create the staging directory: %s",
                               strerror(e));
    }
    *out = s;
    return PLUSH_OK;
}

const char *plush_file_stage_path(const plush_file_stage *stage)
{
    return stage->path;
}

plush_status plush_file_stage_protect(plush_file_stage *stage, const char *path, plush_diag *diag)
{
    plush__os_info st;
    if (!path || !plush__os_stat(path, true, &st))
        return PLUSH_OK; /* nothing there: nothing to keep */
    uint64_t *d = realloc(stage->input_dev, (stage->input_count + 1) * sizeof *d);
    if (d)
        stage->input_dev = d;
    uint64_t *i = d ? realloc(stage->input_ino, (stage->input_count + 1) * sizeof *i) : NULL;
    if (!i)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    stage->input_ino = i;
    stage->input_dev[stage->input_count] = st.dev;
    stage->input_ino[stage->input_count] = st.ino;
    stage->input_count++;
    return PLUSH_OK;
}

/* A list of names, growable. */
typedef struct name_list {
    char **names;
    size_t count, capacity;
} name_list;

static bool names_push(name_list *l, const char *name, size_t len)
{
    if (l->count == l->capacity) {
        size_t cap = l->capacity ? l->capacity * 2 : 16;
        char **n = realloc(l->names, cap * sizeof *n);
        if (!n)
            return false;
        l->names = n;
        l->capacity = cap;
    }
    char *copy = plush__os_strndup(name, len);
    if (!copy)
        return false;
    l->names[l->count++] = copy;
    return true;
}

static bool names_has(const name_list *l, const char *name)
{
    for (size_t i = 0; i < l->count; i++)
        if (strcmp(l->names[i], name) == 0)
            return true;
    return false;
}

static void names_free(name_list *l)
{
    for (size_t i = 0; i < l->count; i++)
        free(l->names[i]);
    free(l->names);
}

/* A name that is one entry of the directory and not plush's own. */
static bool plain_entry(const char *name, size_t len)
{
    return len > 0 && memchr(name, '/', len) == NULL && !(PLUSH__OS_BACKSLASH && memchr(name, '\\', len)) &&
           memchr(name, '\n', len) == NULL &&
           !(len <= 2 && strncmp(name, "..", len) == 0) && !(len >= 6 && strncmp(name, ".plush", 6) == 0);
}

static bool read_staged_names(const char *path, name_list *out)
{
    plush__os_dir *d = plush__os_dir_open(path);
    if (!d)
        return false;
    bool ok = true;
    for (const char *e; ok && (e = plush__os_dir_next(d));)
        if (plain_entry(e, strlen(e)))
            ok = names_push(out, e, strlen(e));
    plush__os_dir_close(d);
    return ok;
}

/* ---- what proves an entry plush's own ---------------------------------------------------------- */

/* An entry as plush put it in place: a file by its size, modification time (to the nanosecond) and
 * content; a folder by every entry under it (name, kind, size, time); a link by its text. Renames keep all
 * of it, so what the commit records in the staging folder is what OUTDIR holds afterwards; a file the user
 * wrote, copied, touched or edited differs, and a list written by someone else cannot name a time to the
 * nanosecond of a file they did not make. */
typedef struct entry_id {
    char kind;                /* 'f' file, 'd' folder, 'l' link, 0: nothing or another kind */
    uint64_t size;
    int64_t sec;
    long nsec;
    uint64_t hash;
} entry_id;

enum { ID_TREE_DEPTH = 8 };

static uint64_t mix(uint64_t h, uint64_t v)
{
    /* splitmix64's finaliser over FNV-style chaining: order-sensitive, cheap, well spread */
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    return h ^ (h >> 31);
}

static uint64_t hash_bytes(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static bool hash_file(const char *path, uint64_t *out)
{
    int fd = plush__os_open_read(path);
    if (fd < 0)
        return false;
    uint64_t h = 0xcbf29ce484222325ull;
    unsigned char buf[65536];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        h = hash_bytes(h, buf, (size_t)n);
    close(fd);
    *out = h;
    return n == 0;
}

static uint64_t hash_tree(const char *path, int depth);

/* An entry's kind as the list has always mixed it in: POSIX's S_IFMT bits (so lists written before stay
 * valid, and Windows computes the same). */
static uint64_t kind_bits(plush__os_kind kind)
{
    switch (kind) {
    case PLUSH__OS_FILE: return 0100000;
    case PLUSH__OS_DIR: return 0040000;
    case PLUSH__OS_LINK: return 0120000;
    case PLUSH__OS_SOCKET: return 0140000;
    case PLUSH__OS_BLOCK: return 0060000;
    case PLUSH__OS_STREAM: return 0020000;
    default: return 0;
    }
}

/* The identity of the entry at path, not following a link (false when it cannot be read). */
static bool identify_path(const char *path, int depth, entry_id *id)
{
    *id = (entry_id){0};
    plush__os_info st;
    if (!plush__os_stat(path, false, &st))
        return false;
    if (st.kind == PLUSH__OS_FILE) {
        id->kind = 'f';
        id->size = st.size;
        id->sec = st.sec;
        id->nsec = st.nsec;
        return hash_file(path, &id->hash);
    }
    if (st.kind == PLUSH__OS_LINK) {
        char *text = plush__os_readlink(path);
        if (!text)
            return false;
        size_t n = strlen(text);
        id->kind = 'l';
        id->size = (uint64_t)n;
        id->sec = st.sec;
        id->nsec = st.nsec;
        id->hash = hash_bytes(0xcbf29ce484222325ull, text, n);
        free(text);
        return true;
    }
    if (st.kind == PLUSH__OS_DIR) {
        id->kind = 'd';
        id->hash = hash_tree(path, depth);
        return true;
    }
    return true; /* another kind: never plush's */
}

/* Every entry below a folder, in any order (the sum of their mixes does not depend on the listing's order). */
static uint64_t hash_tree(const char *path, int depth)
{
    plush__os_dir *d = plush__os_dir_open(path);
    if (!d)
        return 1;
    uint64_t sum = 0x51ed270b27ull;
    for (const char *e; (e = plush__os_dir_next(d));) {
        char *sub = join(path, e);
        plush__os_info st;
        if (!sub || !plush__os_stat(sub, false, &st)) {
            free(sub);
            continue;
        }
        uint64_t h = hash_bytes(0xcbf29ce484222325ull, e, strlen(e));
        h = mix(h, kind_bits(st.kind));
        if (st.kind == PLUSH__OS_DIR)
            h = mix(h, depth < ID_TREE_DEPTH ? hash_tree(sub, depth + 1) : 0);
        else
            h = mix(mix(mix(h, st.size), (uint64_t)st.sec), (uint64_t)st.nsec);
        sum += h;
        free(sub);
    }
    plush__os_dir_close(d);
    return mix(sum, 0);
}

static bool identify(const char *dir, const char *name, entry_id *id)
{
    char *path = join(dir, name);
    bool ok = path && identify_path(path, 0, id);
    free(path);
    return ok;
}

static bool same_id(const entry_id *a, const entry_id *b)
{
    return a->kind && a->kind == b->kind && a->size == b->size && a->sec == b->sec && a->nsec == b->nsec &&
           a->hash == b->hash;
}

/* ---- the list of what the last commit put in place ------------------------------------------- */

typedef struct manifest {
    name_list names;
    entry_id *ids;            /* per name; all zero (matching nothing) in a list of the old format */
    bool proves;              /* the list records identities */
} manifest;

static void manifest_free(manifest *m)
{
    names_free(&m->names);
    free(m->ids);
}

/* "f 1234 1700000000.123456789 0123456789abcdef NAME": kind, size, time, hash, then the name. */
static bool parse_id_line(const char *line, size_t len, entry_id *id, size_t *name_at)
{
    char text[160];
    size_t n = len < sizeof text - 1 ? len : sizeof text - 1;
    memcpy(text, line, n);
    text[n] = '\0';
    char kind;
    unsigned long long size, hash;
    long long sec;
    long nsec;
    int used = 0;
    if (sscanf(text, "%c %llu %lld.%ld %llx%n", &kind, &size, &sec, &nsec, &hash, &used) != 5 || used <= 0 ||
        (size_t)used + 1 >= n || text[used] != ' ' || kind == '\0' || !strchr("fdl", kind))
        return false;
    *id = (entry_id){.kind = kind, .size = size, .sec = sec, .nsec = nsec, .hash = hash};
    *name_at = (size_t)used + 1;
    return true;
}

/* The entries the previous commit put in dir (OUTDIR/.plush-set; missing: none). */
static bool read_manifest(const char *dir, manifest *out)
{
    *out = (manifest){0};
    char *path = join(dir, set_manifest);
    if (!path)
        return false;
    uint8_t *data;
    size_t size;
    plush_status st = plush_file_read(path, &data, &size, NULL);
    free(path);
    if (st != PLUSH_OK)
        return true;
    const char *text = (const char *)data;
    size_t head = sizeof set_header - 1;
    out->proves = size > head && memcmp(text, set_header, head) == 0 && text[head] == '\n';
    bool ok = true;
    for (size_t a = out->proves ? head + 1 : 0; ok && a < size;) {
        const uint8_t *nl = memchr(data + a, '\n', size - a);
        size_t b = nl ? (size_t)(nl - data) : size;
        entry_id id = {0};
        size_t name_at = 0;
        if (out->proves && !parse_id_line(text + a, b - a, &id, &name_at)) {
            a = b + 1;
            continue;
        }
        if (plain_entry(text + a + name_at, b - a - name_at)) {
            entry_id *ids = realloc(out->ids, (out->names.count + 1) * sizeof *ids);
            ok = ids && names_push(&out->names, text + a + name_at, b - a - name_at);
            if (ids)
                out->ids = ids;
            if (ok)
                out->ids[out->names.count - 1] = id;
        }
        a = b + 1;
    }
    free(data);
    if (!ok)
        manifest_free(out);
    return ok;
}

/* The list of names (with their records ids) and of the carried ones of previous (those `carry` marks). */
static bool write_manifest(const char *stage, const name_list *names, const entry_id *ids, const manifest *previous,
                           const bool *carry)
{
    plush_buf b = {0};
    plush_buf_append(&b, set_header, sizeof set_header - 1);
    plush_buf_append(&b, "\n", 1);
    for (size_t k = 0; k < names->count + previous->names.count; k++) {
        bool fresh = k < names->count;
        size_t i = fresh ? k : k - names->count;
        if (!fresh && !carry[i])
            continue;
        const entry_id *id = fresh ? &ids[i] : &previous->ids[i];
        const char *name = fresh ? names->names[i] : previous->names.names[i];
        char line[128];
        int n = snprintf(line, sizeof line, "%c %llu %lld.%09ld %016llx ", id->kind, (unsigned long long)id->size,
                         (long long)id->sec, id->nsec, (unsigned long long)id->hash);
        plush_buf_append(&b, line, (size_t)n);
        plush_buf_append(&b, name, strlen(name));
        plush_buf_append(&b, "\n", 1);
    }
    char *path = join(stage, set_manifest);
    bool ok = path && !b.failed && plush_file_write_atomic(path, b.data, b.size, NULL) == PLUSH_OK;
    free(path);
    plush_buf_free(&b);
    return ok;
}

/* Whether dir/name is what the previous commit recorded under that name. */
static bool manifest_owns(const manifest *m, const char *dir, const char *name)
{
    if (!m->proves)
        return false;
    for (size_t i = 0; i < m->names.count; i++)
        if (strcmp(m->names.names[i], name) == 0) {
            entry_id now;
            return identify(dir, name, &now) && same_id(&now, &m->ids[i]);
        }
    return false;
}

/* ---- the run's inputs -------------------------------------------------------------------------- */

static bool is_input(const plush_file_stage *s, const plush__os_info *st)
{
    for (size_t i = 0; i < s->input_count; i++)
        if (s->input_dev[i] == st->dev && s->input_ino[i] == st->ino)
            return true;
    return false;
}

/* Whether removing or replacing the entry at path would take an input of the run with it: the entry is
 * one (a hard link to one too: the same file), or a folder holding one. A link is not: removing it leaves
 * what it names. */
static bool holds_input_at(const plush_file_stage *s, const char *path, int depth)
{
    plush__os_info st;
    if (!plush__os_stat(path, false, &st))
        return false;
    if (is_input(s, &st))
        return true;
    if (st.kind != PLUSH__OS_DIR || depth >= ID_TREE_DEPTH)
        return false;
    plush__os_dir *d = plush__os_dir_open(path);
    if (!d)
        return true; /* unreadable: it may hold one, so it is kept */
    bool held = false;
    for (const char *e; !held && (e = plush__os_dir_next(d));) {
        char *sub = join(path, e);
        held = !sub || holds_input_at(s, sub, depth + 1);
        free(sub);
    }
    plush__os_dir_close(d);
    return held;
}

static bool holds_input(const plush_file_stage *s, const char *name)
{
    if (!s->input_count)
        return false;
    char *path = join(s->dir, name);
    bool held = !path || holds_input_at(s, path, 0);
    free(path);
    return held;
}

/* Whether an output called name may take the place of what OUTDIR holds under it: nothing is there, or
 * plush's own entry that is no input. Otherwise PLUSH_E_EXISTS naming it. */
static plush_status may_replace(const plush_file_stage *s, const manifest *m, const char *name, plush_diag *diag)
{
    char *there = join(s->dir, name);
    if (!there)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    plush__os_info st;
    plush_status result = PLUSH_OK;
    if (!plush__os_stat(there, false, &st))
        result = PLUSH_OK;
    else if (holds_input(s, name))
        result = plush_diag_fail(diag, PLUSH_E_EXISTS, -1, NULL, -1,
                                 "an output would replace %s, %s of this run (choose another OUTDIR)", there,
                                 st.kind == PLUSH__OS_DIR ? "which holds an input" : "an input");
    else if (!manifest_owns(m, s->dir, name))
        result = plush_diag_fail(diag, PLUSH_E_EXISTS, -1, NULL, -1,
                                 "an output would replace %s, which is not as plush wrote it (move it, or choose "
                                 "another OUTDIR)",
                                 there);
    free(there);
    return result;
}

plush_status plush_file_stage_check(const plush_file_stage *stage, const char *name, plush_diag *diag)
{
    manifest m;
    if (!read_manifest(stage->dir, &m))
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    plush_status st = may_replace(stage, &m, name, diag);
    manifest_free(&m);
    return st;
}

/* ---- the commit -------------------------------------------------------------------------------- */

typedef struct commit_plan {
    plush__rename *ops;
    size_t count, capacity;
    name_list strings;          /* every path the ops point at, freed at the end */
} commit_plan;

static bool is_dir(const char *path)
{
    plush__os_info st;
    return plush__os_stat(path, false, &st) && st.kind == PLUSH__OS_DIR;
}

static bool plan_move(commit_plan *p, const char *from_dir, const char *to_dir, const char *name, bool optional)
{
    if (p->count == p->capacity) {
        size_t cap = p->capacity ? p->capacity * 2 : 16;
        plush__rename *o = realloc(p->ops, cap * sizeof *o);
        if (!o)
            return false;
        p->ops = o;
        p->capacity = cap;
    }
    char *from = join(from_dir, name), *to = join(to_dir, name);
    bool ok = from && to && names_push(&p->strings, from, strlen(from)) && names_push(&p->strings, to, strlen(to));
    free(from);
    free(to);
    if (!ok)
        return false;
    p->ops[p->count++] = (plush__rename){p->strings.names[p->strings.count - 2],
                                         p->strings.names[p->strings.count - 1], optional};
    return true;
}

/* The identities of the staged entries, recorded before they move (a rename keeps them). */
static bool identify_staged(const char *stage, const name_list *fresh, entry_id **out)
{
    *out = calloc(fresh->count ? fresh->count : 1, sizeof **out);
    if (!*out)
        return false;
    for (size_t i = 0; i < fresh->count; i++)
        if (!identify(stage, fresh->names[i], &(*out)[i]))
            return false;
    return true;
}

plush_status plush_file_stage_commit(plush_file_stage *stage, plush_diag *diag)
{
    name_list fresh = {0};
    manifest previous = {0};
    entry_id *ids = NULL;
    bool *carry = NULL;
    commit_plan plan = {0};
    char *old = join(stage->dir, ".plush-old.XXXXXX");
    int old_slot = -1;
    plush_status st = PLUSH_OK;
    if (!old || !read_staged_names(stage->path, &fresh) || !read_manifest(stage->dir, &previous) ||
        !identify_staged(stage->path, &fresh, &ids) ||
        !(carry = calloc(previous.names.count ? previous.names.count : 1, sizeof *carry))) {
        st = plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "cannot prepare the outputs: %s", strerror(errno));
        goto done;
    }
    /* Checked again here, for every caller: an output takes only the place of plush's own entry. */
    for (size_t i = 0; i < fresh.count && st == PLUSH_OK; i++)
        st = may_replace(stage, &previous, fresh.names[i], diag);
    if (st != PLUSH_OK)
        goto done;
    old_slot = guarded_mkdtemp(old);
    if (old_slot == GUARD_FAILED) {
        old_slot = -1;
        st = plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "cannot create a directory: %s", strerror(errno));
        free(old);
        old = NULL;
        goto done;
    }
    bool ok = true;
    /* A folder is moved aside before the new one takes its name (rename cannot replace a full folder);
     * a file is replaced by the rename itself. */
    for (size_t i = 0; ok && i < fresh.count; i++) {
        char *there = join(stage->dir, fresh.names[i]), *staged = join(stage->path, fresh.names[i]);
        ok = there && staged;
        if (ok && (is_dir(there) || is_dir(staged)))
            ok = plan_move(&plan, stage->dir, old, fresh.names[i], true);
        free(there);
        free(staged);
        if (ok)
            ok = plan_move(&plan, stage->path, stage->dir, fresh.names[i], false);
    }
    /* What the last commit made and this one does not goes, when it still is what that commit made and no
     * input of this run; anything else the list names is left alone, with a warning. */
    for (size_t i = 0; ok && i < previous.names.count; i++) {
        const char *name = previous.names.names[i];
        char *there = join(stage->dir, name);
        plush__os_info at;
        bool present = there && plush__os_stat(there, false, &at);
        free(there);
        if (names_has(&fresh, name) || !present)
            continue;
        bool owned = manifest_owns(&previous, stage->dir, name), input = holds_input(stage, name);
        if (owned && !input)
            ok = plan_move(&plan, stage->dir, old, name, true);
        else
            plush_diag_warn(diag, -1, NULL, -1, "left %s/%s alone: %s lists it, but it is %s", stage->dir, name,
                            set_manifest, input ? "an input of this run" : "not as plush wrote it");
        /* an output run again stays listed: the next run without it may remove or replace it */
        carry[i] = owned && input;
    }
    if (ok && !write_manifest(stage->path, &fresh, ids, &previous, carry)) {
        st = plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "cannot prepare the outputs: %s", strerror(errno));
        goto done;
    }
    if (ok)
        ok = plan_move(&plan, stage->path, stage->dir, set_manifest, false);
    if (!ok) {
        st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        goto done;
    }
    size_t moved = plush__guard_commit(plan.ops, plan.count);
    if (moved < plan.count)
        st = plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "cannot move %s into place: %s", plan.ops[moved].to,
                             strerror(errno));
done:
    if (old) {
        plush__remove_tree(old);
        plush__guard_remove(old_slot);
        free(old);
    }
    names_free(&fresh);
    manifest_free(&previous);
    free(ids);
    free(carry);
    names_free(&plan.strings);
    free(plan.ops);
    return st;
}

bool plush_file_stage_wrote(const char *dir, const char *name)
{
    manifest previous;
    bool wrote = read_manifest(dir, &previous) && manifest_owns(&previous, dir, name);
    manifest_free(&previous);
    return wrote;
}

void plush_file_stage_destroy(plush_file_stage *stage)
{
    if (!stage)
        return;
    if (stage->path) {
        plush__remove_tree(stage->path);
        plush__guard_remove(stage->slot);
    }
    free(stage->path);
    free(stage->dir);
    free(stage->input_dev);
    free(stage->input_ino);
    free(stage);
}

/* ---- the lock -------------------------------------------------------------------------------- */

struct plush_file_lock {
    char *path;
    int slot;
    char *made;               /* the directory, when this lock made it (removed again when left empty) */
    int made_slot;
};

/* The process id a lock file holds, or 0 when it holds none (being written, or not plush's). */
static long lock_owner(const char *path)
{
    int fd = plush__os_open_read(path);
    if (fd < 0)
        return 0;
    char text[32];
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0)
        return 0;
    text[n] = '\0';
    char *end;
    long pid = strtol(text, &end, 10);
    return pid > 0 && end != text && (*end == '\n' || *end == '\0') ? pid : 0;
}


/* Moves a dead process's lock out of the way, unless another taker got there first. */
static bool take_over(const char *path, long dead)
{
    char aside[64];
    snprintf(aside, sizeof aside, ".stale.%ld", plush__os_pid());
    char *stale = malloc(strlen(path) + sizeof aside);
    if (!stale)
        return false;
    strcpy(stale, path);
    strcat(stale, aside);
    bool ok = plush__os_rename(path, stale) == 0;
    if (ok && lock_owner(stale) != dead) {
        /* A live taker's fresh lock was moved: put it back, unless yet another lock took its place. */
        plush__os_move_noreplace(stale, path);
        ok = false;
    }
    plush__os_unlink(stale);
    free(stale);
    return ok;
}

/* The staging folders (.plush-tmp.*) and the folders of replaced entries (.plush-old.*) of a run that
 * died without cleaning up (SIGKILL, a power cut) or could not remove them. Only called by the lock's new
 * holder, so no live run is writing into them. */
static void remove_stale_folders(const char *dir, plush_diag *diag)
{
    plush__os_dir *d = plush__os_dir_open(dir);
    if (!d)
        return;
    name_list stale = {0};
    bool ok = true;
    for (const char *e; ok && (e = plush__os_dir_next(d));)
        if (strncmp(e, ".plush-tmp.", 11) == 0 || strncmp(e, ".plush-old.", 11) == 0)
            ok = names_push(&stale, e, strlen(e));
    plush__os_dir_close(d);
    for (size_t i = 0; i < stale.count; i++) {
        char *path = join(dir, stale.names[i]);
        if (path && is_dir(path)) {
            plush__remove_tree(path);
            plush_diag_warn(diag, -1, NULL, -1, "removed %s, left by a run that no longer runs", stale.names[i]);
        }
        free(path);
    }
    names_free(&stale);
}

/* A lock that was not taken leaves no directory it made (and frees its copy of the name). */
static void unmake(const char *dir, char *made)
{
    if (made)
        plush__os_rmdir(dir);
    free(made);
}

static plush_status lock_dir(const char *dir, plush_file_lock **out, plush_diag *diag)
{
    *out = NULL;
    plush__os_info before;
    bool made = !plush__os_stat(dir, true, &before);
    plush_status st = plush_file_make_dir(dir, diag);
    if (st != PLUSH_OK)
        return st;
    char *path = join(dir, ".plush.lock");
    char *made_path = made ? strdup(dir) : NULL;
    if (!path || (made && !made_path)) {
        free(path);
        free(made_path);
        if (made)
            plush__os_rmdir(dir);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    for (int attempt = 0; attempt < 4; attempt++) {
        int fd = plush__os_create_new(path);
        if (fd >= 0) {
            char text[32];
            int n = snprintf(text, sizeof text, "%ld\n", plush__os_pid());
            bool ok = write(fd, text, (size_t)n) == n;
            if (close(fd) != 0 || !ok) {
                int e = errno;
                plush__os_unlink(path);
                free(path);
                unmake(dir, made_path);
                return plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "cannot write the lock file: %s", strerror(e));
            }
            plush_file_lock *lock = malloc(sizeof *lock);
            if (!lock) {
                plush__os_unlink(path);
                free(path);
                unmake(dir, made_path);
                return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
            }
            lock->path = path;
            lock->slot = plush__guard_add(PLUSH__GUARD_FILE, path);
            lock->made = made_path;
            lock->made_slot = made_path ? plush__guard_add(PLUSH__GUARD_EMPTY_DIR, made_path) : -1;
            *out = lock;
            /* whoever holds the lock is the only run that stages here: a staging folder already there is a
             * dead run's, whether it left its lock (taken over above) or not (a cleanup that could not remove
             * a folder some handle still held: Windows) */
            remove_stale_folders(dir, diag);
            return PLUSH_OK;
        }
        if (errno != EEXIST) {
            int e = errno;
            free(path);
            unmake(dir, made_path);
            return plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "cannot create the lock file: %s", strerror(e));
        }
        long owner = lock_owner(path);
        if (owner == 0 || owner == plush__os_pid() || plush__os_process_alive(owner))
            break;
        if (take_over(path, owner))
            plush_diag_warn(diag, -1, NULL, -1, "took over the lock of process %ld, which no longer runs", owner);
    }
    long owner = lock_owner(path);
    free(path);
    unmake(dir, made_path);
    if (owner > 0)
        return plush_diag_fail(diag, PLUSH_E_LOCKED, -1, NULL, -1, "in use by another run (process %ld)", owner);
    return plush_diag_fail(diag, PLUSH_E_LOCKED, -1, NULL, -1, "in use by another run (.plush.lock)");
}

plush_status plush_file_lock_dir(const char *dir, plush_file_lock **out, plush_diag *diag)
{
    /* An interrupting signal waits until the lock file and the directory made for it are registered for
     * cleanup: a SIGTERM between creating the lock file and registering it left both behind. */
    plush__os_held held;
    plush__os_hold_interrupts(&held);
    plush_status st = lock_dir(dir, out, diag);
    plush__os_release_interrupts(&held);
    return st;
}

void plush_file_unlock(plush_file_lock *lock)
{
    if (!lock)
        return;
    if (lock_owner(lock->path) == plush__os_pid())
        plush__os_unlink(lock->path);
    plush__guard_remove(lock->slot);
    plush__guard_remove(lock->made_slot);
    if (lock->made)
        plush__os_rmdir(lock->made); /* only when empty: a run that wrote nothing leaves no folder of its own */
    free(lock->made);
    free(lock->path);
    free(lock);
}
