/* The paths in flight: temporary files, staging directories and lock files that must not outlive an
 * interrupted run, and the commit that must not stop half-way.
 *
 * The registry is global on purpose (a signal handler cannot be handed a context): a fixed array of
 * slots whose paths are published and read through lock-free atomics, which C11 lets a signal handler
 * touch. The cleanup calls only what the platform layer allows inside an interruption (platform.h:
 * rename, unlink, rmdir and plush__os_remove_tree; on POSIX all async-signal-safe). The library installs no
 * handler itself: a host program owns its signals, and the CLI calls plush_file_cleanup_on_signals at
 * start. How an interruption reaches the cleanup -- on the main thread, one cleanup per process that
 * finishes, crashes included -- is the platform's (platform_posix.c, platform_win32.c). */
#include "core/file_internal.h"
#include "core/platform.h"
#include "plush/sys/core.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

enum { GUARD_SLOTS = 64, TREE_DEPTH = 8 };

typedef struct guard_slot {
    atomic_int state;                 /* 0 free, 1 claimed, being filled */
    atomic_int kind;
    _Atomic(const char *) path;       /* published last; NULL when not in use */
} guard_slot;

static guard_slot guard_slots[GUARD_SLOTS];

/* The commit in progress: its steps, how many are done. One at a time; a second concurrent commit
 * (another thread) runs unprotected rather than waiting. */
static atomic_flag guard_commit_busy = ATOMIC_FLAG_INIT;
static _Atomic(const plush__rename *) guard_commit_ops;
static atomic_size_t guard_commit_count, guard_commit_done;

int plush__guard_add(plush__guard_kind kind, const char *path)
{
    for (int i = 0; i < GUARD_SLOTS; i++) {
        int expected = 0;
        if (atomic_compare_exchange_strong(&guard_slots[i].state, &expected, 1)) {
            atomic_store(&guard_slots[i].kind, (int)kind);
            atomic_store(&guard_slots[i].path, path);
            return i;
        }
    }
    return -1;
}

void plush__guard_remove(int slot)
{
    if (slot < 0 || slot >= GUARD_SLOTS)
        return;
    atomic_store(&guard_slots[slot].path, (const char *)NULL);
    atomic_store(&guard_slots[slot].state, 0);
}

size_t plush__guard_commit(const plush__rename *ops, size_t n)
{
    bool guarded = !atomic_flag_test_and_set(&guard_commit_busy);
    if (guarded) {
        atomic_store(&guard_commit_done, 0);
        atomic_store(&guard_commit_count, n);
        atomic_store(&guard_commit_ops, ops);
    }
    size_t i = 0;
    int err = 0;
    for (; i < n; i++) {
        if (plush__os_rename(ops[i].from, ops[i].to) != 0 && !(ops[i].optional && errno == ENOENT)) {
            err = errno;
            break;
        }
        if (guarded)
            atomic_store(&guard_commit_done, i + 1);
    }
    if (guarded) {
        atomic_store(&guard_commit_ops, (const plush__rename *)NULL);
        atomic_flag_clear(&guard_commit_busy);
    }
    errno = err;
    return i;
}

void plush__remove_tree(const char *path)
{
    plush__os_remove_tree(path, TREE_DEPTH);
}

void plush_file_cleanup_now(void)
{
    /* A commit under way is finished first: the outputs are then the new set, whole. */
    const plush__rename *ops = atomic_load(&guard_commit_ops);
    if (ops) {
        size_t n = atomic_load(&guard_commit_count);
        for (size_t i = atomic_load(&guard_commit_done); i < n; i++)
            plush__os_rename(ops[i].from, ops[i].to);
    }
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < GUARD_SLOTS; i++) {
            const char *path = atomic_load(&guard_slots[i].path);
            int kind = atomic_load(&guard_slots[i].kind);
            if (!path || (kind == PLUSH__GUARD_EMPTY_DIR) != (pass == 1))
                continue;
            if (kind == PLUSH__GUARD_TREE)
                plush__remove_tree(path);
            else if (kind == PLUSH__GUARD_EMPTY_DIR)
                plush__os_rmdir(path); /* only when empty: nothing of the user's goes */
            else
                plush__os_unlink(path);
        }
}

plush_status plush_file_cleanup_on_signals(void)
{
    return plush__os_on_interrupt(plush_file_cleanup_now) ? PLUSH_OK : PLUSH_E_IO;
}
