/* The paths in flight: temporary files, staging directories and lock files that must not outlive an
 * interrupted run, and the commit that must not stop half-way.
 *
 * The registry is global on purpose (a signal handler cannot be handed a context): a fixed array of
 * slots whose paths are published and read through lock-free atomics, which C11 lets a signal handler
 * touch. The handler calls only async-signal-safe functions: rename, unlink, open, close, rmdir, the
 * getdents64 system call, sigaction, raise, pthread_kill, pthread_sigmask. The library installs no handler
 * itself: a host program owns its signals, and the CLI calls plush_file_cleanup_on_signals at start.
 *
 * An interrupting signal (SIGINT, SIGTERM, SIGHUP) is handled on the thread that installed the handler:
 * the kernel may hand it to any thread that does not block it -- a worker the embedded libraries keep (TBB,
 * under Embree) -- and a cleanup beside the main thread once removed the staged outputs while the main
 * thread was moving them in, leaving an old PMX beside a new VMD. The handler on another thread puts itself
 * back and passes the signal on to that thread (sigaction and pthread_kill are async-signal-safe).
 *
 * One cleanup per process, and it finishes: a second signal while it runs -- SIGTERM sent twice, or to the
 * pid and then to its process group -- once found the handler reset to the default action (SA_RESETHAND)
 * and ended the process half-way, leaving a staging folder and the lock behind. Now an interrupting signal
 * keeps its handler, is blocked on the cleaning thread for as long as the handler runs, and is absorbed on
 * any other; the cleanup then puts the default action back and lets its own signal end the process.
 *
 * The fatal signals (a crash inside Bullet is a SIGSEGV) get the same cleanup, on the thread that faults. The handler runs on its
 * own stack, so a crash that is a stack overflow still cleans up; it touches nothing but the registry,
 * which lives in static storage a heap overrun does not reach. */
#include "core/file_internal.h"
#include "plush/sys/core.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

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
        if (rename(ops[i].from, ops[i].to) != 0 && !(ops[i].optional && errno == ENOENT)) {
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

/* Linux's directory reading without malloc: struct linux_dirent64 laid out by hand. */
static void remove_tree_at(int parent, const char *name, int depth)
{
    if (unlinkat(parent, name, 0) == 0 || errno == ENOENT)
        return;
    if (depth >= TREE_DEPTH)
        return;
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    /* Entries removed while reading may make a pass skip some: read again until a pass removes none. */
    for (int pass = 0; pass < 64; pass++) {
        bool removed = false;
        lseek(fd, 0, SEEK_SET);
        for (;;) {
            _Alignas(8) char buf[4096];
            long got = syscall(SYS_getdents64, fd, buf, sizeof buf);
            if (got <= 0)
                break;
            for (long off = 0; off < got;) {
                unsigned short reclen;
                memcpy(&reclen, buf + off + 16, sizeof reclen);
                const char *entry = buf + off + 19;
                off += reclen;
                if (strcmp(entry, ".") == 0 || strcmp(entry, "..") == 0)
                    continue;
                remove_tree_at(fd, entry, depth + 1);
                removed = true;
            }
        }
        if (!removed)
            break;
    }
    close(fd);
    unlinkat(parent, name, AT_REMOVEDIR);
}

void plush__remove_tree(const char *path)
{
    remove_tree_at(AT_FDCWD, path, 0);
}

void plush_file_cleanup_now(void)
{
    /* A commit under way is finished first: the outputs are then the new set, whole. */
    const plush__rename *ops = atomic_load(&guard_commit_ops);
    if (ops) {
        size_t n = atomic_load(&guard_commit_count);
        for (size_t i = atomic_load(&guard_commit_done); i < n; i++)
            rename(ops[i].from, ops[i].to);
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
                rmdir(path); /* only when empty: nothing of the user's goes */
            else
                unlink(path);
        }
}

static const int guard_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
enum { GUARD_SIGNALS = sizeof guard_signals / sizeof guard_signals[0], GUARD_INTERRUPTS = 3 };
/* The thread that installed the handlers. */
static pthread_t guard_owner;
static atomic_bool guard_owned;
/* Set by the first handler that cleans up: the process ends when it is done. */
static atomic_bool guard_cleaning;

/* Big enough for the deepest cleanup: remove_tree_at keeps a 4 KiB buffer per level, TREE_DEPTH levels. */
static _Alignas(16) char guard_stack[(TREE_DEPTH + 4) * 8192];

static void guard_handler(int sig)
{
    bool interrupt = false;
    for (int i = 0; i < GUARD_INTERRUPTS; i++)
        interrupt |= sig == guard_signals[i];
    /* a cleanup under way ends the process itself */
    if (interrupt && atomic_load(&guard_cleaning))
        return;
    if (interrupt && atomic_load(&guard_owned) && !pthread_equal(pthread_self(), guard_owner)) {
        pthread_kill(guard_owner, sig);
        return;
    }
    if (atomic_exchange(&guard_cleaning, true) && interrupt)
        return;
    plush_file_cleanup_now();
    /* The default action back, then the signal again: it waits while this handler blocks it (the other
     * guarded signals too, by sa_mask) and acts as soon as it is unblocked. A hardware fault would recur on
     * return by itself; a raise()d or abort()ed signal would not. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);
    sigset_t self;
    sigemptyset(&self);
    sigaddset(&self, sig);
    pthread_sigmask(SIG_UNBLOCK, &self, NULL);
}

plush_status plush_file_cleanup_on_signals(void)
{
    /* Per thread: the main thread's, which runs the pipeline. An alternate stack already set up by
     * the host is kept. */
    stack_t current;
    if (sigaltstack(NULL, &current) == 0 && (current.ss_flags & SS_DISABLE)) {
        stack_t alt = {.ss_sp = guard_stack, .ss_size = sizeof guard_stack, .ss_flags = 0};
        sigaltstack(&alt, NULL);
    }
    guard_owner = pthread_self();
    atomic_store(&guard_owned, true);
    for (size_t i = 0; i < GUARD_SIGNALS; i++) {
        struct sigaction old;
        if (sigaction(guard_signals[i], NULL, &old) != 0)
            return PLUSH_E_IO;
        /* A signal the program was started with ignored (nohup, a background job) stays ignored. */
        if (old.sa_handler == SIG_IGN)
            continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = guard_handler;
        /* A crash's handler is taken off as it starts (a fault inside the cleanup ends the process at
         * once); an interrupt's stays, so that a second one cannot end the cleanup (see the top). The
         * signal itself and every other guarded one are blocked while the handler runs. */
        sa.sa_flags = SA_ONSTACK | (i >= GUARD_INTERRUPTS ? SA_RESETHAND : 0);
        sigemptyset(&sa.sa_mask);
        for (size_t k = 0; k < GUARD_SIGNALS; k++)
            sigaddset(&sa.sa_mask, guard_signals[k]);
        if (sigaction(guard_signals[i], &sa, NULL) != 0)
            return PLUSH_E_IO;
    }
    return PLUSH_OK;
}
