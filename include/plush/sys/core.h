/* plush core utilities: arena allocation, byte buffers, text and Shift-JIS conversion, files written
 * whole, output sets, staging, locks. Extension-level API (as libgit2's sys/): what plush's own modules,
 * its command-line tool and its tests use beside the public plush/core.h; a host program needs none of it. */
#ifndef PLUSH_SYS_CORE_H
#define PLUSH_SYS_CORE_H

#include "plush/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 16-byte aligned, zero-filled memory; NULL when out of memory or when the size overflows. */
void *plush_arena_alloc(plush_arena *arena, size_t size);
/* count * size with overflow check. */
void *plush_arena_array(plush_arena *arena, size_t count, size_t size);
char *plush_arena_strdup(plush_arena *arena, const char *s, size_t len);
void plush_arena_free(plush_arena *arena);
bool plush_buf_reserve(plush_buf *buf, size_t extra);
bool plush_buf_append(plush_buf *buf, const void *data, size_t size);
/* Decodes src into arena memory. *lossy tells whether U+FFFD replacement happened (raw is then set). */
plush_status plush_text_decode(plush_arena *arena, plush_encoding enc, const uint8_t *src, size_t n,
                               plush_str *out, bool *lossy);
/* Bytes needed to encode s (len bytes of UTF-8) in enc; invalid UTF-8 counts as U+FFFD. */
size_t plush_text_encoded_size(plush_encoding enc, const char *s, size_t len);
/* Encodes into dst (which holds plush_text_encoded_size bytes); returns bytes written. */
size_t plush_text_encode(plush_encoding enc, const char *s, size_t len, uint8_t *dst);
/* True when the len bytes of s are well-formed UTF-8 (no overlongs, no surrogates). */
bool plush_utf8_valid(const char *s, size_t len);
/* Shift-JIS (CP932) through iconv. One converter pair per reader or writer, never global. */
typedef struct plush_sjis plush_sjis;
/* PLUSH_E_LIBRARY when iconv has no CP932 converter. */
plush_status plush_sjis_create(plush_sjis **out);
void plush_sjis_destroy(plush_sjis *sjis);
/* Decodes up to n bytes, stopping at the first NUL. A character cut at the end of the field is
 * dropped; bytes that do not decode become U+FFFD and set *lossy. Output is NUL-terminated. */
plush_status plush_sjis_decode(plush_sjis *sjis, plush_arena *arena, const uint8_t *src, size_t n,
                               plush_str *out, bool *lossy);
/* Encodes UTF-8 into at most cap bytes of dst (no NUL added). When the text needs more than cap
 * bytes: with truncate, stops at the last whole character that fits; without, fails with
 * PLUSH_E_RANGE. A character CP932 cannot hold gives PLUSH_E_ENCODING. *written gets the byte count. */
plush_status plush_sjis_encode(plush_sjis *sjis, const char *s, size_t len, uint8_t *dst, size_t cap,
                               bool truncate, size_t *written);
/* Reads a whole file into malloc'd memory (free with free()). diag->file should be set by caller. */
plush_status plush_file_read(const char *path, uint8_t **out_data, size_t *out_size, plush_diag *diag);
/* A file's bytes as plush_file_map gives them: mapped read-only (MAP_PRIVATE) from PLUSH_FILE_MAP_MIN
 * bytes up, so only the pages a reader touches are read (a 2 GB file with a bad magic costs one page),
 * else held in malloc'd memory. The file must not shrink while mapped. */
enum { PLUSH_FILE_MAP_MIN = 1 << 20 };
typedef struct plush_file_bytes {
    const uint8_t *data;
    size_t size;
    bool mapped;
} plush_file_bytes;
/* A regular file's bytes (anything else is PLUSH_E_IO); release them with plush_file_unmap. */
plush_status plush_file_map(const char *path, plush_file_bytes *out, plush_diag *diag);
/* Releases what plush_file_map gave (and zeroes *bytes); an empty one is a no-op. */
void plush_file_unmap(plush_file_bytes *bytes);
/* Maps path (diag->file is set to path when empty), hands its bytes to parse(data, size, ctx, diag) and
 * releases them: the one body behind every plush_<format>_read_file. */
typedef plush_status (*plush_file_parser)(const uint8_t *data, size_t size, void *ctx, plush_diag *diag);
plush_status plush_file_parse(const char *path, plush_file_parser parse, void *ctx, plush_diag *diag);
/* Writes an output file, never leaving a half-written one, by what path is:
 *   a regular file or nothing   data goes to a temporary file ".NAME.plush-tmp.XXXXXX" beside it, then
 *                               is renamed over it (file mode from the umask);
 *   a symbolic link             followed: the file it names is replaced that way, the link stays;
 *   a character device or FIFO  written through (opened without O_CREAT/O_TRUNC, never renamed over):
 *                               "-o /dev/stdout" and "-o /dev/null" work;
 *   anything else               refused with PLUSH_E_IO ("is a directory", "is a socket", ...).
 * The temporary file is registered for removal on a signal (plush_file_cleanup_on_signals). */
plush_status plush_file_write_atomic(const char *path, const void *data, size_t size, plush_diag *diag);
/* mkdir for one level; an existing directory is fine, anything else there is PLUSH_E_IO. */
plush_status plush_file_make_dir(const char *path, plush_diag *diag);
/* Temporary files, staging directories and lock files in flight are kept in a small process-wide
 * registry. The library installs no signal handler by itself (a host program owns its signals):
 *
 *   plush_file_cleanup_on_signals();   // the CLI, at start: SIGINT, SIGTERM, SIGHUP, and the crashes
 *                                      // SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT
 *
 * makes each of those signals (unless it was ignored at start) remove every registered path, finish a
 * commit that is under way (see plush_file_set_commit), then end the process by the signal's default
 * action, so the exit status still says which signal it was; an interrupting signal that comes while the
 * cleanup runs (SIGTERM twice, or to the process and then its group) waits for it to finish. The handler
 * is async-signal-safe and runs on an alternate stack of its own (unless the calling thread has one
 * already), so a stack overflow is cleaned up too. What no handler sees (SIGKILL) the next run cleans: see plush_file_lock_dir. */
plush_status plush_file_cleanup_on_signals(void);
/* What the handler does, without the signal: for atexit, or a host's own handler (async-signal-safe). */
void plush_file_cleanup_now(void);
/* Outputs that belong together (a bake's PMX and VMD) appear together or not at all:
 *
 *   plush_file_set *set;
 *   plush_file_set_create(&set, &diag);
 *   plush_file_set_add(set, "out/model.pmx", pmx.data, pmx.size, &diag);   // temporary files only
 *   plush_file_set_add(set, "out/motion.vmd", vmd.data, vmd.size, &diag);
 *   plush_file_set_commit(set, &diag);                                     // renames them in order
 *   plush_file_set_destroy(set);            // removes what was not committed
 *
 * Each add writes a temporary file beside its target (links followed as plush_file_write_atomic does)
 * and registers it. The commit renames the temporaries over their targets one after another while the
 * signal handler knows the list: a signal during the commit finishes the remaining renames before the
 * process ends, a signal before it removes the temporaries. So an interruption leaves the old set or
 * the new set, never a mix. (A failing rename in the middle of a commit, which needs the disk to change
 * under it, is reported; the files renamed before it stay.) A device or FIFO target cannot be staged: it
 * is written through when added. Paths are copied; data is not kept. */
typedef struct plush_file_set plush_file_set;
plush_status plush_file_set_create(plush_file_set **out, plush_diag *diag);
plush_status plush_file_set_add(plush_file_set *set, const char *path, const void *data, size_t size,
                                plush_diag *diag);
plush_status plush_file_set_commit(plush_file_set *set, plush_diag *diag);
void plush_file_set_destroy(plush_file_set *set);
/* A command with many outputs (frames/, a report's CSV and plots) writes them into a staging directory
 * inside DIR and puts them in place as one set:
 *
 *   plush_file_stage *stage;
 *   plush_file_stage_begin("OUTDIR", &stage, &diag);    // mkdir OUTDIR; OUTDIR/.plush-tmp.XXXXXX
 *   ... write files and folders under plush_file_stage_path(stage) ...
 *   plush_file_stage_commit(stage, &diag);              // or nothing: destroy removes the staging dir
 *   plush_file_stage_destroy(stage);
 *
 * The commit moves each entry of the staging directory to OUTDIR, replacing an entry of the same name
 * whole (a folder such as frames/ too, so no stale frame of an earlier run survives), and removes the
 * entries the previous commit put there that this one does not have. OUTDIR/.plush-set records what
 * proves each entry plush's own: a file's size, modification time and content hash, a folder's every
 * entry (name, kind, size, time), a link's text. Only an entry that still matches its record is replaced
 * or removed, and never one that is, or holds, an input (plush_file_stage_protect): any other entry an
 * output would replace fails the commit with PLUSH_E_EXISTS naming it, before anything moves; any other
 * entry the list names is left alone with a warning. A list without records (the format before) proves
 * nothing. The moves run as one commit (see plush_file_set_commit): after a signal OUTDIR holds the old
 * set or the new set; replaced entries go to OUTDIR/.plush-old.XXXXXX and are removed. Names starting with
 * ".plush" are plush's own and are not moved. */
typedef struct plush_file_stage plush_file_stage;
plush_status plush_file_stage_begin(const char *dir, plush_file_stage **out, plush_diag *diag);
const char *plush_file_stage_path(const plush_file_stage *stage);
plush_status plush_file_stage_commit(plush_file_stage *stage, plush_diag *diag);
void plush_file_stage_destroy(plush_file_stage *stage);
/* Marks path (followed to the file it names; missing: nothing) as an input of the run: the commit never
 * removes or replaces it, nor a folder of OUTDIR holding it, whatever OUTDIR/.plush-set says. Compared by
 * device and inode, so another name for it (a hard link, "./x", a link to it) is the same input. */
plush_status plush_file_stage_protect(plush_file_stage *stage, const char *path, plush_diag *diag);
/* PLUSH_OK when an output called name (one entry of DIR) may be committed: DIR holds nothing by that name,
 * or plush's own entry (as the last commit recorded it) that is no input. Otherwise PLUSH_E_EXISTS naming
 * the entry: a command checks its outputs' names so before it starts its work. */
plush_status plush_file_stage_check(const plush_file_stage *stage, const char *name, plush_diag *diag);
/* Whether DIR's entry called name is what the last commit into dir put there (OUTDIR/.plush-set lists it
 * and it still matches its record): an output whose name comes from an input (a model's texture) may
 * replace only such an entry. */
bool plush_file_stage_wrote(const char *dir, const char *name);
/* Creates DIR (one level) and DIR/.plush.lock with O_CREAT|O_EXCL, holding this process's id. A lock held
 * by a live process gives PLUSH_E_LOCKED ("locked by process N"); a lock left by a process that no longer
 * exists is taken over with a warning in diag, and the staging folders that process left in DIR
 * (.plush-tmp.*, .plush-old.*) are removed, one warning each. The lock is registered: a signal removes it,
 * and so does plush_file_cleanup_now. When this call made DIR, DIR goes again if it is empty when the lock
 * is released or a signal ends the process (a failed or interrupted run leaves no folder of its own). */
typedef struct plush_file_lock plush_file_lock;
plush_status plush_file_lock_dir(const char *dir, plush_file_lock **out, plush_diag *diag);
/* Removes the lock file (NULL is a no-op). */
void plush_file_unlock(plush_file_lock *lock);

#ifdef __cplusplus
}
#endif
#endif
