/* The platform layer: everything plush asks of the operating system beyond ISO C and threads, in one
 * place with two halves, platform_posix.c (Linux) and platform_win32.c (Windows, built with MinGW-w64).
 * Nothing else in plush includes a POSIX or Win32 header for files, processes, libraries or signals.
 *
 *   plush__os_info st;
 *   if (plush__os_stat(path, true, &st) && st.kind == PLUSH__OS_DIR) ...
 *   int fd = plush__os_open_read(path);          // UTF-8 path; read()/close() on the descriptor
 *
 * Paths are UTF-8 on both sides: the Win32 half turns them into UTF-16 and calls the wide (W) functions,
 * so Japanese model and folder names work on every Windows code page. Both halves accept '/' as the
 * separator (Windows takes it as well as '\\'). Functions that fail set errno as their POSIX namesakes do.
 *
 * Threads are C11 + pthreads on both: MinGW-w64's winpthreads gives Windows the same pthread calls, so
 * the proxy's two halves, the binding's workers and the loader's pthread_once have one code path. */
#ifndef PLUSH_CORE_PLATFORM_H
#define PLUSH_CORE_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#include <io.h>
#else
#include <signal.h>
#include <unistd.h>
#endif

/* The longest path plush builds in a fixed buffer. */
enum { PLUSH__OS_PATH_MAX = 4096 };
/* The most one read() or write() is asked for (Windows counts in an unsigned int). */
#define PLUSH__OS_IO_MAX ((size_t)1 << 30)
/* Whether '\\' separates folders too (Windows). */
#ifdef _WIN32
#define PLUSH__OS_BACKSLASH 1
#else
#define PLUSH__OS_BACKSLASH 0
#endif

/* The last folder separator of path ('/'; '\\' too on Windows), or NULL. */
static inline const char *plush__os_last_separator(const char *path)
{
    const char *slash = strrchr(path, '/');
#ifdef _WIN32
    const char *back = strrchr(path, '\\');
    if (back > slash)
        slash = back;
#endif
    return slash;
}

/* strndup (POSIX, absent from Windows' C runtime): at most n bytes of s, malloc'd. */
static inline char *plush__os_strndup(const char *s, size_t n)
{
    const char *end = (const char *)memchr(s, 0, n);
    size_t len = end ? (size_t)(end - s) : n;
    char *d = (char *)malloc(len + 1);
    if (d) {
        memcpy(d, s, len);
        d[len] = 0;
    }
    return d;
}

/* ---- files and folders ------------------------------------------------------------------------ */

typedef enum plush__os_kind {
    PLUSH__OS_NONE = 0,
    PLUSH__OS_FILE,           /* a regular file */
    PLUSH__OS_DIR,
    PLUSH__OS_LINK,           /* a symbolic link (only when not followed) */
    PLUSH__OS_STREAM,         /* a character device or a FIFO: written through, never replaced */
    PLUSH__OS_SOCKET,
    PLUSH__OS_BLOCK,          /* a block device */
    PLUSH__OS_OTHER
} plush__os_kind;

/* What a path is. dev/ino identify a file across names (hard links, renames); sec/nsec its last change. */
typedef struct plush__os_info {
    plush__os_kind kind;
    uint64_t size;
    int64_t sec;
    long nsec;
    uint64_t dev, ino;
} plush__os_info;

/* What path is (links followed when follow); false with errno when it cannot be read. */
bool plush__os_stat(const char *path, bool follow, plush__os_info *out);
/* What an open descriptor is (kind and size only). */
bool plush__os_fstat(int fd, plush__os_info *out);
/* A descriptor for reading a file or folder's entries' bytes (binary; a FIFO does not block the open);
 * -1 with errno. read() and close() work on it. */
int plush__os_open_read(const char *path);
/* A descriptor writing into an existing node (a device, a FIFO, a file: truncated when truncate); no
 * creation. -1 with errno. */
int plush__os_open_write(const char *path, bool truncate);
/* Creates path for writing, failing with EEXIST when anything is there (not following a link). */
int plush__os_create_new(const char *path);
/* fopen with a UTF-8 path ("rb", "wb", ...). */
FILE *plush__os_fopen(const char *path, const char *mode);
/* Creates a unique file from a template ending in XXXXXX (filled in place), readable by the user's
 * usual rules; the descriptor, or -1 with errno. */
int plush__os_mkstemp(char *templ);
/* Creates a unique folder from a template ending in XXXXXX (filled in place); false with errno. */
bool plush__os_mkdtemp(char *templ);
int plush__os_mkdir(const char *path);
int plush__os_rmdir(const char *path);
int plush__os_unlink(const char *path);
/* Renames from to to, replacing a file at to in one step (rename(2); MoveFileExW with
 * MOVEFILE_REPLACE_EXISTING on Windows, which replaces a file and never a folder). */
int plush__os_rename(const char *from, const char *to);
/* Renames from to to only when nothing is at to (-1 with EEXIST otherwise). */
int plush__os_move_noreplace(const char *from, const char *to);
/* The text of a symbolic link (malloc'd), or NULL with errno (EINVAL: not a link). */
char *plush__os_readlink(const char *path);
/* The absolute, link-free path of an existing file or folder (malloc'd), or NULL with errno. */
char *plush__os_realpath(const char *path);
/* The current folder (malloc'd), or NULL. */
char *plush__os_getcwd(void);
/* Whether path is absolute ("/x"; "C:\x", "\\server\x" on Windows). */
bool plush__os_absolute(const char *path);
/* Bytes free for an unprivileged writer on the file system holding dir, 0 when unknown. */
double plush__os_disk_free(const char *dir);
/* Maps size bytes of an open file read-only (the readers walk it forwards), or NULL: then read it. */
const void *plush__os_map(int fd, size_t size);
void plush__os_unmap(const void *data, size_t size);
/* Memory the system can give without swapping, in bytes; 0 when unknown. */
double plush__os_memory_available(void);
/* Makes a finished output file readable as the user's other files are (mkstemp made it private). */
void plush__os_share_mode(int fd);

/* Reads a folder's names (never "." or ".."): open, next until NULL, close. */
typedef struct plush__os_dir plush__os_dir;
plush__os_dir *plush__os_dir_open(const char *path);
const char *plush__os_dir_next(plush__os_dir *dir);
void plush__os_dir_close(plush__os_dir *dir);

/* Removes a folder and everything under it, at most depth levels down; safe inside plush's interrupt
 * cleanup (POSIX: async-signal-safe, no allocation). */
void plush__os_remove_tree(const char *path, int depth);

/* ---- the process ------------------------------------------------------------------------------ */

long plush__os_pid(void);
/* Whether a process with this id runs (a lock's owner). */
bool plush__os_process_alive(long pid);
/* Sets an environment variable of this process (what getenv then reads). */
void plush__os_setenv(const char *name, const char *value);
/* Whether the standard error goes to a terminal (progress bars only then). */
bool plush__os_stderr_is_terminal(void);
/* The folder of the running executable into out (no trailing separator); false when unknown. */
bool plush__os_exe_dir(char *out, size_t size);

/* Installs cleanup as what runs when the process is interrupted (SIGINT, SIGTERM, SIGHUP; a console's
 * Ctrl+C, Ctrl+Break or close on Windows) or crashes; the process then ends as the interruption would have
 * ended it. Returns false when the handlers could not be installed. */
bool plush__os_on_interrupt(void (*cleanup)(void));
/* Holds interruptions off this thread while a path is made and registered for cleanup (release undoes it). */
typedef struct plush__os_held {
    bool held;
#ifndef _WIN32
    sigset_t mask;            /* the previous signal mask */
#endif
} plush__os_held;
void plush__os_hold_interrupts(plush__os_held *h);
void plush__os_release_interrupts(plush__os_held *h);

/* ---- libraries -------------------------------------------------------------------------------- */

/* The platform's file name of a library: "lib" NAME ".so" on Linux, NAME ".dll" on Windows. */
#ifdef _WIN32
#define PLUSH__OS_LIBRARY(name) name ".dll"
/* The optional libraries by the names their MinGW builds give them (tools/build-windows-deps.sh). */
#define PLUSH__OS_EMBREE_NAMES "embree3.dll", "libembree3.dll"
#define PLUSH__OS_MESHOPT_NAMES "libmeshoptimizer.dll", "meshoptimizer.dll"
#else
#define PLUSH__OS_LIBRARY(name) "lib" name ".so"
/* Versioned sonames: the unversioned .so is a -dev package's symlink. */
#define PLUSH__OS_EMBREE_NAMES "libembree3.so.3"
#define PLUSH__OS_MESHOPT_NAMES "libmeshoptimizer.so.2d", "libmeshoptimizer.so.0"
#endif
/* Opens a library by path or system name, never unloaded again (loader.h says why); NULL with the
 * loader's reason in err. *missing says the file was simply not there. */
void *plush__os_library_open(const char *name, char *err, size_t size, bool *missing);
void *plush__os_library_symbol(void *lib, const char *symbol);
void plush__os_library_close(void *lib);

/* ---- child processes (ffmpeg) ----------------------------------------------------------------- */

/* A running child whose standard input is a pipe from this process. */
typedef struct plush__os_child {
    intptr_t handle;          /* pid, or the process HANDLE; 0 when none */
    int input;                /* the pipe's write end, -1 when closed */
} plush__os_child;
/* Where a user gets ffmpeg, for the one warning a missing ffmpeg gives. */
#ifdef _WIN32
#define PLUSH__OS_FFMPEG_HINT "put ffmpeg.exe beside plush.exe"
#else
#define PLUSH__OS_FFMPEG_HINT "tools/install-deps.sh installs it"
#endif
/* Finds program (a bare name) on PATH into out; false when it is not there. */
bool plush__os_find_program(const char *program, char *out, size_t size);
/* Starts program with argv (argv[0] its name, NULL-terminated; quoted safely for the child on Windows),
 * stdin from a pipe, stdout discarded, stderr to log (NULL: discarded). 0, or an errno value. */
int plush__os_child_start(const char *program, const char *const *argv, FILE *log, plush__os_child *out);
/* Writes all of buf into the child's input; false when the pipe broke (never a SIGPIPE death). */
bool plush__os_child_write(plush__os_child *c, const void *buf, size_t size);
/* Closes the input and waits; true when the child exited with status 0. */
bool plush__os_child_wait(plush__os_child *c);
/* Asks the child to stop, then waits for it. */
void plush__os_child_stop(plush__os_child *c);

/* ---- text ------------------------------------------------------------------------------------- */

/* Shift-JIS as MMD writes it (CP932) to and from UTF-8: iconv on POSIX, code page 932 on Windows. */
typedef struct plush__os_cp932 plush__os_cp932;
/* NULL when the system has no CP932 converter. */
plush__os_cp932 *plush__os_cp932_open(void);
void plush__os_cp932_close(plush__os_cp932 *c);
/* Decodes src[0..n) into out (cap bytes, at least 3 per input byte): a byte that starts no character
 * becomes U+FFFD; a character cut by the end is left out. *bad says either happened. The bytes written. */
size_t plush__os_cp932_decode(plush__os_cp932 *c, const uint8_t *src, size_t n, char *out, size_t cap, bool *bad);
/* Encodes UTF-8 s[0..len) as CP932 into out (cap bytes, len + 4 suffice); false when a character has no
 * CP932 form or s is not UTF-8. */
bool plush__os_cp932_encode(plush__os_cp932 *c, const char *s, size_t len, uint8_t *out, size_t cap, size_t *n);

/* ---- the command line ------------------------------------------------------------------------- */

/* The program's arguments as UTF-8 (Windows: from the UTF-16 command line; elsewhere argv as given),
 * and the console set to show UTF-8. *out_argv stays valid for the process's life. */
bool plush__os_args_utf8(int argc, char **argv, int *out_argc, char ***out_argv);

#endif
