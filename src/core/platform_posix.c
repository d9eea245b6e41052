/* The POSIX half of the platform layer (platform.h): Linux's calls, as plush has always made them. */
#define _GNU_SOURCE
#include "core/platform.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <iconv.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ---- files and folders ------------------------------------------------------------------------ */

static plush__os_kind kind_of(mode_t m)
{
    return S_ISREG(m) ? PLUSH__OS_FILE : S_ISDIR(m) ? PLUSH__OS_DIR : S_ISLNK(m) ? PLUSH__OS_LINK
         : S_ISCHR(m) || S_ISFIFO(m) ? PLUSH__OS_STREAM : S_ISSOCK(m) ? PLUSH__OS_SOCKET
         : S_ISBLK(m) ? PLUSH__OS_BLOCK : PLUSH__OS_OTHER;
}

bool plush__os_stat(const char *path, bool follow, plush__os_info *out)
{
    struct stat st;
    if ((follow ? stat(path, &st) : lstat(path, &st)) != 0) {
        *out = (plush__os_info){0};
        return false;
    }
    *out = (plush__os_info){.kind = kind_of(st.st_mode), .size = (uint64_t)st.st_size,
                            .sec = (int64_t)st.st_mtim.tv_sec, .nsec = st.st_mtim.tv_nsec,
                            .dev = (uint64_t)st.st_dev, .ino = (uint64_t)st.st_ino};
    return true;
}

bool plush__os_fstat(int fd, plush__os_info *out)
{
    struct stat st;
    if (fstat(fd, &st) != 0) {
        *out = (plush__os_info){0};
        return false;
    }
    *out = (plush__os_info){.kind = kind_of(st.st_mode), .size = (uint64_t)st.st_size};
    return true;
}

int plush__os_open_read(const char *path)
{
    /* O_NONBLOCK so a FIFO without a writer cannot hang the open; cleared again for the reads */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0)
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

int plush__os_open_write(const char *path, bool truncate)
{
    return open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | (truncate ? O_TRUNC : 0));
}

int plush__os_create_new(const char *path)
{
    return open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
}

FILE *plush__os_fopen(const char *path, const char *mode)
{
    return fopen(path, mode);
}

int plush__os_mkstemp(char *templ)
{
    return mkostemp(templ, O_CLOEXEC);
}

bool plush__os_mkdtemp(char *templ)
{
    return mkdtemp(templ) != NULL;
}

int plush__os_mkdir(const char *path) { return mkdir(path, 0777); }
int plush__os_rmdir(const char *path) { return rmdir(path); }
int plush__os_unlink(const char *path) { return unlink(path); }
int plush__os_rename(const char *from, const char *to) { return rename(from, to); }

int plush__os_move_noreplace(const char *from, const char *to)
{
    /* a hard link cannot replace; a file system without them falls back to rename */
    if (link(from, to) == 0)
        return unlink(from), 0;
    return errno == EEXIST ? -1 : rename(from, to);
}

char *plush__os_readlink(const char *path)
{
    char text[PLUSH__OS_PATH_MAX];
    ssize_t n = readlink(path, text, sizeof text - 1);
    if (n < 0)
        return NULL;
    text[n] = '\0';
    return strdup(text);
}

char *plush__os_realpath(const char *path)
{
    return realpath(path, NULL);
}

char *plush__os_getcwd(void)
{
    return getcwd(NULL, 0);
}

bool plush__os_absolute(const char *path)
{
    return path[0] == '/';
}

double plush__os_disk_free(const char *dir)
{
    struct statvfs v;
    return dir && statvfs(dir, &v) == 0 ? (double)v.f_bavail * (double)v.f_frsize : 0;
}

const void *plush__os_map(int fd, size_t size)
{
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED)
        return NULL;
    /* the readers look at the header first and walk forwards: tell the kernel so */
    madvise(map, size, MADV_SEQUENTIAL);
    return map;
}

void plush__os_unmap(const void *data, size_t size)
{
    munmap((void *)(uintptr_t)data, size);
}

double plush__os_memory_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    double kb = 0;
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb * 1024.0;
}

void plush__os_share_mode(int fd)
{
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
}

struct plush__os_dir {
    DIR *d;
};

plush__os_dir *plush__os_dir_open(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return NULL;
    plush__os_dir *r = malloc(sizeof *r);
    if (!r) {
        closedir(d);
        errno = ENOMEM;
        return NULL;
    }
    r->d = d;
    return r;
}

const char *plush__os_dir_next(plush__os_dir *dir)
{
    for (struct dirent *e; (e = readdir(dir->d));)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            return e->d_name;
    return NULL;
}

void plush__os_dir_close(plush__os_dir *dir)
{
    if (!dir)
        return;
    closedir(dir->d);
    free(dir);
}

/* Linux's directory reading without malloc (a signal handler calls this): struct linux_dirent64 laid
 * out by hand. */
static void remove_tree_at(int parent, const char *name, int depth)
{
    if (unlinkat(parent, name, 0) == 0 || errno == ENOENT)
        return;
    if (depth <= 0)
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
                remove_tree_at(fd, entry, depth - 1);
                removed = true;
            }
        }
        if (!removed)
            break;
    }
    close(fd);
    unlinkat(parent, name, AT_REMOVEDIR);
}

void plush__os_remove_tree(const char *path, int depth)
{
    remove_tree_at(AT_FDCWD, path, depth);
}

/* ---- the process ------------------------------------------------------------------------------ */

long plush__os_pid(void)
{
    return (long)getpid();
}

bool plush__os_process_alive(long pid)
{
    return kill((pid_t)pid, 0) == 0 || errno != ESRCH;
}

void plush__os_setenv(const char *name, const char *value)
{
    setenv(name, value, 1);
}

bool plush__os_stderr_is_terminal(void)
{
    return isatty(STDERR_FILENO);
}

bool plush__os_exe_dir(char *out, size_t size)
{
    char exe[PLUSH__OS_PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return false;
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return false;
    *slash = '\0';
    return (size_t)snprintf(out, size, "%s", exe) < size;
}

/* The interrupt handler (file_guard.c's registry says what is cleaned). An interrupting signal (SIGINT,
 * SIGTERM, SIGHUP) is handled on the thread that installed the handler: the kernel may hand it to any thread
 * that does not block it -- a worker the embedded libraries keep (TBB, under Embree) -- and a cleanup beside
 * the main thread once removed the staged outputs while the main thread was moving them in, leaving an old
 * PMX beside a new VMD. The handler on another thread puts itself back and passes the signal on to that
 * thread (sigaction and pthread_kill are async-signal-safe).
 *
 * One cleanup per process, and it finishes: a second signal while it runs -- SIGTERM sent twice, or to the
 * pid and then to its process group -- once found the handler reset to the default action (SA_RESETHAND)
 * and ended the process half-way, leaving a staging folder and the lock behind. Now an interrupting signal
 * keeps its handler, is blocked on the cleaning thread for as long as the handler runs, and is absorbed on
 * any other; the cleanup then puts the default action back and lets its own signal end the process.
 *
 * The fatal signals (a crash inside Bullet is a SIGSEGV) get the same cleanup, on the thread that faults.
 * The handler runs on its own stack, so a crash that is a stack overflow still cleans up. */
static const int guard_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
enum { GUARD_SIGNALS = sizeof guard_signals / sizeof guard_signals[0], GUARD_INTERRUPTS = 3 };
static pthread_t guard_owner;
static atomic_bool guard_owned;
static atomic_bool guard_cleaning;
static void (*_Atomic guard_cleanup)(void);

/* Big enough for the deepest cleanup: remove_tree_at keeps a 4 KiB buffer per level, 8 levels. */
static _Alignas(16) char guard_stack[12 * 8192];

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
    void (*cleanup)(void) = atomic_load(&guard_cleanup);
    if (cleanup)
        cleanup();
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

bool plush__os_on_interrupt(void (*cleanup)(void))
{
    atomic_store(&guard_cleanup, cleanup);
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
            return false;
        /* A signal the program was started with ignored (nohup, a background job) stays ignored. */
        if (old.sa_handler == SIG_IGN)
            continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = guard_handler;
        /* A crash's handler is taken off as it starts (a fault inside the cleanup ends the process at
         * once); an interrupt's stays, so that a second one cannot end the cleanup (see above). The
         * signal itself and every other guarded one are blocked while the handler runs. */
        sa.sa_flags = SA_ONSTACK | (i >= GUARD_INTERRUPTS ? SA_RESETHAND : 0);
        sigemptyset(&sa.sa_mask);
        for (size_t k = 0; k < GUARD_SIGNALS; k++)
            sigaddset(&sa.sa_mask, guard_signals[k]);
        if (sigaction(guard_signals[i], &sa, NULL) != 0)
            return false;
    }
    return true;
}

void plush__os_hold_interrupts(plush__os_held *h)
{
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    h->held = pthread_sigmask(SIG_BLOCK, &block, &h->mask) == 0;
}

void plush__os_release_interrupts(plush__os_held *h)
{
    if (h->held)
        pthread_sigmask(SIG_SETMASK, &h->mask, NULL);
    h->held = false;
}

/* ---- libraries -------------------------------------------------------------------------------- */

void *plush__os_library_open(const char *name, char *err, size_t size, bool *missing)
{
    *missing = false;
    if (strchr(name, '/') && access(name, F_OK) != 0) {
        snprintf(err, size, "not found");
        *missing = true;
        return NULL;
    }
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!h) {
        const char *e = dlerror();
        snprintf(err, size, "%s", e ? e : "unknown error");
        /* a soname that is not installed is as weak as a missing path */
        *missing = strstr(err, "No such file") != NULL;
    }
    return h;
}

void *plush__os_library_symbol(void *lib, const char *symbol)
{
    return dlsym(lib, symbol);
}

void plush__os_library_close(void *lib)
{
    dlclose(lib);
}

/* ---- child processes -------------------------------------------------------------------------- */

bool plush__os_find_program(const char *program, char *out, size_t size)
{
    const char *path = getenv("PATH");
    for (const char *d = path; d && *d;) {
        size_t n = strcspn(d, ":");
        int len = snprintf(out, size, "%.*s/%s", (int)n, n ? d : ".", program);
        struct stat st;
        if (len > 0 && (size_t)len < size && stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
            return true;
        d += n;
        if (*d == ':')
            d++;
    }
    return false;
}

int plush__os_child_start(const char *program, const char *const *argv, FILE *log, plush__os_child *out)
{
    *out = (plush__os_child){0, -1};
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return errno;
    if (log)
        fcntl(fileno(log), F_SETFD, FD_CLOEXEC);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[0], 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    if (log)
        posix_spawn_file_actions_adddup2(&fa, fileno(log), 2);
    else
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    /* posix_spawn's argv is char *const[] for historical reasons; it does not write to the strings */
    int rc = posix_spawn(&pid, program, &fa, NULL, (char *const *)(uintptr_t)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[0]);
    if (rc != 0) {
        close(fds[1]);
        return rc;
    }
    *out = (plush__os_child){pid, fds[1]};
    return 0;
}

/* SIGPIPE is blocked in this thread around the write (and one it raised taken back), so a dead child is
 * an EPIPE, never plush's death. */
bool plush__os_child_write(plush__os_child *c, const void *buf, size_t size)
{
    if (c->input < 0)
        return false;
    sigset_t pipe_only, old, pending;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    sigpending(&pending);
    bool was_pending = sigismember(&pending, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
    bool ok = true;
    const uint8_t *p = buf;
    for (size_t done = 0; done < size;) {
        ssize_t w = write(c->input, p + done, size - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            ok = false;
            break;
        }
        done += (size_t)w;
    }
    if (!ok && !was_pending) {
        sigpending(&pending);
        if (sigismember(&pending, SIGPIPE)) {
            struct timespec zero = {0, 0};
            while (sigtimedwait(&pipe_only, NULL, &zero) < 0 && errno == EINTR) {
            }
        }
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return ok;
}

bool plush__os_child_wait(plush__os_child *c)
{
    if (c->input >= 0)
        close(c->input);
    c->input = -1;
    if (c->handle <= 0)
        return false;
    int status = 0;
    pid_t r;
    do
        r = waitpid((pid_t)c->handle, &status, 0);
    while (r < 0 && errno == EINTR);
    c->handle = 0;
    return r > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

void plush__os_child_stop(plush__os_child *c)
{
    if (c->handle > 0)
        kill((pid_t)c->handle, SIGTERM);
    plush__os_child_wait(c);
}

/* ---- text ------------------------------------------------------------------------------------- */

struct plush__os_cp932 {
    iconv_t dec; /* CP932 -> UTF-8 */
    iconv_t enc; /* UTF-8 -> CP932 */
};

plush__os_cp932 *plush__os_cp932_open(void)
{
    plush__os_cp932 *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    c->dec = iconv_open("UTF-8", "CP932");
    c->enc = iconv_open("CP932", "UTF-8");
    if (c->dec == (iconv_t)-1 || c->enc == (iconv_t)-1) {
        plush__os_cp932_close(c);
        return NULL;
    }
    return c;
}

void plush__os_cp932_close(plush__os_cp932 *c)
{
    if (!c)
        return;
    if (c->dec != (iconv_t)-1)
        iconv_close(c->dec);
    if (c->enc != (iconv_t)-1)
        iconv_close(c->enc);
    free(c);
}

size_t plush__os_cp932_decode(plush__os_cp932 *c, const uint8_t *src, size_t n, char *out, size_t cap, bool *bad)
{
    iconv(c->dec, NULL, NULL, NULL, NULL);
    char *in = (char *)(uintptr_t)src; /* iconv's signature lacks const; it does not write input */
    size_t in_left = n;
    char *op = out;
    size_t out_left = cap;
    while (in_left > 0) {
        size_t r = iconv(c->dec, &in, &in_left, &op, &out_left);
        if (r != (size_t)-1)
            break;
        if (errno == EINVAL) { /* a character cut by the field's end: read as far as it decodes */
            *bad = true;
            break;
        }
        if (errno != EILSEQ || out_left < 3)
            break;
        memcpy(op, "\xEF\xBF\xBD", 3);
        op += 3;
        out_left -= 3;
        in++;
        in_left--;
        *bad = true;
    }
    return (size_t)(op - out);
}

bool plush__os_cp932_encode(plush__os_cp932 *c, const char *s, size_t len, uint8_t *out, size_t cap, size_t *n)
{
    iconv(c->enc, NULL, NULL, NULL, NULL);
    char *in = (char *)(uintptr_t)s;
    size_t in_left = len;
    char *op = (char *)out;
    size_t out_left = cap;
    bool ok = iconv(c->enc, &in, &in_left, &op, &out_left) != (size_t)-1 &&
              iconv(c->enc, NULL, NULL, &op, &out_left) != (size_t)-1;
    *n = (size_t)(op - (char *)out);
    return ok;
}

/* ---- the command line ------------------------------------------------------------------------- */

bool plush__os_args_utf8(int argc, char **argv, int *out_argc, char ***out_argv)
{
    *out_argc = argc;
    *out_argv = argv;
    return true;
}
