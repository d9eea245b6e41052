/* Outputs as one set: several files committed together, a staged directory moved in as a whole, and
 * the lock that keeps a second writer out of an output directory. */
#include "core/file_internal.h"
#include "plush/sys/core.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
            unlink(set->entries[i].tmp);
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
};

static const char set_manifest[] = ".plush-set";

/* SIGINT, SIGTERM and SIGHUP held off this thread while a path is made and registered for cleanup
 * (release_signals puts the mask back); false when the mask could not be set. */
static bool hold_signals(sigset_t *old)
{
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    return pthread_sigmask(SIG_BLOCK, &block, old) == 0;
}

static void release_signals(bool held, const sigset_t *old)
{
    if (held)
        pthread_sigmask(SIG_SETMASK, old, NULL);
}

enum { GUARD_FAILED = -2 };

/* mkdtemp(path), the folder registered for cleanup before it exists (as temporary files are) and an
 * interrupting signal held off until mkdtemp has named it: one that came in between left the folder behind,
 * and OUTDIR with it (test_cli_hostile's SIGTERM case, under load). Its guard slot, or GUARD_FAILED with
 * errno set. */
static int guarded_mkdtemp(char *path)
{
    sigset_t old;
    bool held = hold_signals(&old);
    int slot = plush__guard_add(PLUSH__GUARD_TREE, path);
    bool made = mkdtemp(path) != NULL;
    int e = errno;
    if (!made)
        plush__guard_remove(slot);
    release_signals(held, &old);
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
    char *copy = strndup(name, len);
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
    return len > 0 && memchr(name, '/', len) == NULL && memchr(name, '\n', len) == NULL &&
           !(len <= 2 && strncmp(name, "..", len) == 0) && !(len >= 6 && strncmp(name, ".plush", 6) == 0);
}

static bool read_staged_names(const char *path, name_list *out)
{
    DIR *d = opendir(path);
    if (!d)
        return false;
    bool ok = true;
    for (struct dirent *e; ok && (e = readdir(d));)
        if (plain_entry(e->d_name, strlen(e->d_name)))
            ok = names_push(out, e->d_name, strlen(e->d_name));
    closedir(d);
    return ok;
}

/* The names the previous commit wrote (OUTDIR/.plush-set; missing: none). */
static bool read_manifest(const char *dir, name_list *out)
{
    char *path = join(dir, set_manifest);
    if (!path)
        return false;
    uint8_t *data;
    size_t size;
    plush_status st = plush_file_read(path, &data, &size, NULL);
    free(path);
    if (st != PLUSH_OK)
        return true;
    bool ok = true;
    for (size_t a = 0; ok && a < size;) {
        const uint8_t *nl = memchr(data + a, '\n', size - a);
        size_t b = nl ? (size_t)(nl - data) : size;
        if (plain_entry((const char *)data + a, b - a))
            ok = names_push(out, (const char *)data + a, b - a);
        a = b + 1;
    }
    free(data);
    return ok;
}

static bool write_manifest(const char *stage, const name_list *names)
{
    plush_buf b = {0};
    for (size_t i = 0; i < names->count; i++) {
        plush_buf_append(&b, names->names[i], strlen(names->names[i]));
        plush_buf_append(&b, "\n", 1);
    }
    char *path = join(stage, set_manifest);
    bool ok = path && !b.failed && plush_file_write_atomic(path, b.data ? (const void *)b.data : "", b.size, NULL) == PLUSH_OK;
    free(path);
    plush_buf_free(&b);
    return ok;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

typedef struct commit_plan {
    plush__rename *ops;
    size_t count, capacity;
    name_list strings;          /* every path the ops point at, freed at the end */
} commit_plan;

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

plush_status plush_file_stage_commit(plush_file_stage *stage, plush_diag *diag)
{
    name_list fresh = {0}, previous = {0};
    commit_plan plan = {0};
    char *old = join(stage->dir, ".plush-old.XXXXXX");
    int old_slot = -1;
    plush_status st = PLUSH_OK;
    if (!old || !read_staged_names(stage->path, &fresh) || !read_manifest(stage->dir, &previous) ||
        !write_manifest(stage->path, &fresh)) {
        st = plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "cannot prepare the outputs: %s", strerror(errno));
        goto done;
    }
    /* An entry of the user's whose kind differs from the output's (a folder where a file goes, or the
     * other way) is not replaced: that is a name clash, not an earlier run's output. */
    for (size_t i = 0; i < fresh.count && st == PLUSH_OK; i++) {
        char *there = join(stage->dir, fresh.names[i]), *staged = join(stage->path, fresh.names[i]);
        struct stat a;
        if (there && staged && lstat(there, &a) == 0 && !names_has(&previous, fresh.names[i]) &&
            S_ISDIR(a.st_mode) != is_dir(staged))
            st = plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "%s %s, not replaced by an output",
                                 fresh.names[i], S_ISDIR(a.st_mode) ? "is a directory" : "is not a directory");
        free(there);
        free(staged);
    }
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
    for (size_t i = 0; ok && i < previous.count; i++)
        if (!names_has(&fresh, previous.names[i]))
            ok = plan_move(&plan, stage->dir, old, previous.names[i], true);
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
    names_free(&previous);
    names_free(&plan.strings);
    free(plan.ops);
    return st;
}

bool plush_file_stage_wrote(const char *dir, const char *name)
{
    name_list previous = {0};
    bool wrote = read_manifest(dir, &previous) && names_has(&previous, name);
    names_free(&previous);
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
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
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

static bool process_alive(long pid)
{
    return kill((pid_t)pid, 0) == 0 || errno != ESRCH;
}

/* Moves a dead process's lock out of the way, unless another taker got there first. */
static bool take_over(const char *path, long dead)
{
    char aside[64];
    snprintf(aside, sizeof aside, ".stale.%ld", (long)getpid());
    char *stale = malloc(strlen(path) + sizeof aside);
    if (!stale)
        return false;
    strcpy(stale, path);
    strcat(stale, aside);
    bool ok = rename(path, stale) == 0;
    if (ok && lock_owner(stale) != dead) {
        /* A live taker's fresh lock was moved: put it back. */
        if (link(stale, path) != 0 && errno != EEXIST)
            rename(stale, path);
        ok = false;
    }
    unlink(stale);
    free(stale);
    return ok;
}

/* The staging folders (.plush-tmp.*) and the folders of replaced entries (.plush-old.*) of a run that
 * died without cleaning up: SIGKILL, a power cut. Only called by the lock's new holder, so no live run
 * is writing into them. */
static void remove_stale_folders(const char *dir, plush_diag *diag)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    name_list stale = {0};
    bool ok = true;
    for (struct dirent *e; ok && (e = readdir(d));)
        if (strncmp(e->d_name, ".plush-tmp.", 11) == 0 || strncmp(e->d_name, ".plush-old.", 11) == 0)
            ok = names_push(&stale, e->d_name, strlen(e->d_name));
    closedir(d);
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
        rmdir(dir);
    free(made);
}

static plush_status lock_dir(const char *dir, plush_file_lock **out, plush_diag *diag)
{
    *out = NULL;
    struct stat before;
    bool made = stat(dir, &before) != 0;
    plush_status st = plush_file_make_dir(dir, diag);
    if (st != PLUSH_OK)
        return st;
    char *path = join(dir, ".plush.lock");
    char *made_path = made ? strdup(dir) : NULL;
    if (!path || (made && !made_path)) {
        free(path);
        free(made_path);
        if (made)
            rmdir(dir);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    bool took_over = false;
    for (int attempt = 0; attempt < 4; attempt++) {
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0) {
            char text[32];
            int n = snprintf(text, sizeof text, "%ld\n", (long)getpid());
            bool ok = write(fd, text, (size_t)n) == n;
            if (close(fd) != 0 || !ok) {
                int e = errno;
                unlink(path);
                free(path);
                unmake(dir, made_path);
                return plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "cannot write the lock file: %s", strerror(e));
            }
            plush_file_lock *lock = malloc(sizeof *lock);
            if (!lock) {
                unlink(path);
                free(path);
                unmake(dir, made_path);
                return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
            }
            lock->path = path;
            lock->slot = plush__guard_add(PLUSH__GUARD_FILE, path);
            lock->made = made_path;
            lock->made_slot = made_path ? plush__guard_add(PLUSH__GUARD_EMPTY_DIR, made_path) : -1;
            *out = lock;
            if (took_over)
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
        if (owner == 0 || owner == (long)getpid() || process_alive(owner))
            break;
        if (take_over(path, owner)) {
            took_over = true;
            plush_diag_warn(diag, -1, NULL, -1, "took over the lock of process %ld, which no longer runs", owner);
        }
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
    sigset_t old;
    bool held = hold_signals(&old);
    plush_status st = lock_dir(dir, out, diag);
    release_signals(held, &old);
    return st;
}

void plush_file_unlock(plush_file_lock *lock)
{
    if (!lock)
        return;
    if (lock_owner(lock->path) == (long)getpid())
        unlink(lock->path);
    plush__guard_remove(lock->slot);
    plush__guard_remove(lock->made_slot);
    if (lock->made)
        rmdir(lock->made); /* only when empty: a run that wrote nothing leaves no folder of its own */
    free(lock->made);
    free(lock->path);
    free(lock);
}
