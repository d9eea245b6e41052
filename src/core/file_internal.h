/* Internal to src/core's file code: the registry of paths in flight (file_guard.c) and the output
 * targets (file.c), shared by the single write, the file set, the staged directory and the lock. */
#ifndef PLUSH_CORE_FILE_INTERNAL_H
#define PLUSH_CORE_FILE_INTERNAL_H

#include "plush/core.h"
#include "plush/sys/core.h"

/* What the cleanup does with a registered path: unlink a file, remove a directory and everything in it, or
 * remove a directory when it is empty (after every other path: what was inside has gone by then). */
typedef enum plush__guard_kind {
    PLUSH__GUARD_FILE = 1,
    PLUSH__GUARD_TREE = 2,
    PLUSH__GUARD_EMPTY_DIR = 3
} plush__guard_kind;

/* Registers path (which must stay valid and unchanged until removed) for removal on a signal or by
 * plush_file_cleanup_now. Returns the slot, or -1 when the registry is full (the path is then simply
 * not protected). */
int plush__guard_add(plush__guard_kind kind, const char *path);
/* Forgets a slot from plush__guard_add (-1 is a no-op); the path is left alone. */
void plush__guard_remove(int slot);

/* One step of a commit: rename(from, to). A missing `from` is fine when optional. */
typedef struct plush__rename {
    const char *from, *to;
    bool optional;
} plush__rename;
/* Performs the renames in order while the signal handler knows about them: a signal in the middle
 * finishes the remaining renames before the process ends. Returns the count done; on a failure
 * (count < n) errno says why. */
size_t plush__guard_commit(const plush__rename *ops, size_t n);

/* Removes a directory and everything under it (async-signal-safe: no allocation, no stdio). */
void plush__remove_tree(const char *path);

/* Where an output path leads. */
typedef enum plush__target_kind {
    PLUSH__TARGET_FILE,     /* a regular file or nothing yet: replace `path` in *target atomically */
    PLUSH__TARGET_STREAM,   /* a character device or FIFO (or a /proc link to one): write through */
} plush__target_kind;
/* Follows symbolic links to the file they name (*target, malloc'd; NULL for a stream) and refuses a
 * directory, socket or block device with PLUSH_E_IO. */
plush_status plush__file_target(const char *path, plush__target_kind *kind, char **target, plush_diag *diag);
/* Writes data to a new temporary file ".NAME.plush-tmp.XXXXXX" beside target, registered with the
 * guard (*slot): *tmp is malloc'd. On failure nothing is left behind. */
plush_status plush__file_write_temp(const char *target, const void *data, size_t size, char **tmp, int *slot,
                                    plush_diag *diag);
/* Opens path for writing without creating or truncating it and writes data through. */
plush_status plush__file_write_stream(const char *path, const void *data, size_t size, plush_diag *diag);

#endif
