/* Whole-file reads (large files mapped, so a reader refusing the header touches one page) and output
 * writes: a regular file replaced atomically (temporary file + rename), a symlink followed to the file it
 * names, a device or FIFO written through, anything else refused. */
#include "core/file_internal.h"
#include "core/platform.h"
#include "plush/sys/core.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Opens path for reading: a regular file, else PLUSH_E_IO (a directory, a FIFO, a device). */
static plush_status open_regular(const char *path, int *out_fd, size_t *size, plush_diag *diag)
{
    int fd = plush__os_open_read(path);
    if (fd < 0)
        return plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "cannot open: %s", strerror(errno));
    plush__os_info st;
    if (!plush__os_fstat(fd, &st) || st.kind != PLUSH__OS_FILE) {
        close(fd);
        return plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "not a regular file");
    }
    *size = (size_t)st.size;
    *out_fd = fd;
    return PLUSH_OK;
}

static plush_status read_all(int fd, size_t size, uint8_t **out, plush_diag *diag)
{
    uint8_t *data = malloc(size ? size : 1);
    if (!data)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "cannot hold %zu bytes in memory", size);
    size_t got = 0;
    while (got < size) {
        size_t chunk = size - got < PLUSH__OS_IO_MAX ? size - got : PLUSH__OS_IO_MAX;
        ssize_t r = read(fd, data + got, chunk);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            int e = errno;
            free(data);
            return plush_diag_fail(diag, PLUSH_E_IO, (int64_t)got, NULL, -1, "read failed: %s",
                                   r == 0 ? "file shrank while reading" : strerror(e));
        }
        got += (size_t)r;
    }
    *out = data;
    return PLUSH_OK;
}

plush_status plush_file_read(const char *path, uint8_t **out_data, size_t *out_size, plush_diag *diag)
{
    *out_data = NULL;
    *out_size = 0;
    size_t size = 0;
    int fd = -1;
    plush_status st = open_regular(path, &fd, &size, diag);
    if (st != PLUSH_OK)
        return st;
    st = read_all(fd, size, out_data, diag);
    close(fd);
    if (st == PLUSH_OK)
        *out_size = size;
    return st;
}

plush_status plush_file_map(const char *path, plush_file_bytes *out, plush_diag *diag)
{
    *out = (plush_file_bytes){0};
    size_t size = 0;
    int fd = -1;
    plush_status st = open_regular(path, &fd, &size, diag);
    if (st != PLUSH_OK)
        return st;
    const void *map = size >= PLUSH_FILE_MAP_MIN ? plush__os_map(fd, size) : NULL;
    if (map) {
        *out = (plush_file_bytes){.data = map, .size = size, .mapped = true};
    } else {
        uint8_t *data = NULL;
        st = read_all(fd, size, &data, diag);
        if (st == PLUSH_OK)
            *out = (plush_file_bytes){.data = data, .size = size};
    }
    close(fd);
    return st;
}

void plush_file_unmap(plush_file_bytes *bytes)
{
    if (!bytes || !bytes->data)
        return;
    if (bytes->mapped)
        plush__os_unmap(bytes->data, bytes->size);
    else
        free((void *)bytes->data);
    *bytes = (plush_file_bytes){0};
}

plush_status plush_file_parse(const char *path, plush_file_parser parse, void *ctx, plush_diag *diag)
{
    if (diag && !diag->file)
        diag->file = path;
    plush_file_bytes bytes;
    plush_status st = plush_file_map(path, &bytes, diag);
    if (st != PLUSH_OK)
        return st;
    st = parse(bytes.data, bytes.size, ctx, diag);
    plush_file_unmap(&bytes);
    return st;
}

/* Bounded number of links followed, as the kernel's ELOOP limit. */
enum { TARGET_MAX_LINKS = 40 };

static plush_status refuse_kind(plush__os_kind kind, plush_diag *diag)
{
    const char *what = kind == PLUSH__OS_DIR ? "is a directory" : kind == PLUSH__OS_SOCKET ? "is a socket"
                     : kind == PLUSH__OS_BLOCK ? "is a block device" : "is not a regular file";
    return plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "%s", what);
}

/* The next path along a link: its text, relative to the link's own folder unless absolute. */
static char *link_step(const char *link, plush_diag *diag)
{
    char *text = plush__os_readlink(link);
    if (!text) {
        plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "cannot follow the link: %s", strerror(errno));
        return NULL;
    }
    size_t n = strlen(text);
    const char *slash = plush__os_last_separator(link);
    size_t dir = plush__os_absolute(text) || !slash ? 0 : (size_t)(slash - link) + 1;
    char *next = malloc(dir + n + 1);
    if (!next) {
        free(text);
        plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        return NULL;
    }
    memcpy(next, link, dir);
    memcpy(next + dir, text, n + 1);
    free(text);
    return next;
}

plush_status plush__file_target(const char *path, plush__target_kind *kind, char **target, plush_diag *diag)
{
    *target = NULL;
    *kind = PLUSH__TARGET_FILE;
    plush__os_info st;
    /* What the path leads to, links followed: streams are written through the path itself, so that the
     * kernel's own links (/dev/stdout -> /proc/self/fd/1 -> pipe:[...]) resolve as they must. */
    if (plush__os_stat(path, true, &st)) {
        if (st.kind == PLUSH__OS_STREAM) {
            *kind = PLUSH__TARGET_STREAM;
            return PLUSH_OK;
        }
        if (st.kind != PLUSH__OS_FILE)
            return refuse_kind(st.kind, diag);
    }
    char *cur = strdup(path);
    if (!cur)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    for (int hops = 0;; hops++) {
        if (!plush__os_stat(cur, false, &st) || st.kind != PLUSH__OS_LINK)
            break;
        /* A link into /proc (a file descriptor's own link) names no path that could be replaced. */
        if (hops == TARGET_MAX_LINKS || strncmp(cur, "/proc/", 6) == 0) {
            free(cur);
            if (hops == TARGET_MAX_LINKS)
                return plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "too many levels of symbolic links");
            *kind = PLUSH__TARGET_STREAM;
            return PLUSH_OK;
        }
        char *next = link_step(cur, diag);
        free(cur);
        if (!next)
            return diag ? diag->status : PLUSH_E_IO;
        cur = next;
    }
    *target = cur;
    return PLUSH_OK;
}

static plush_status write_all(int fd, const void *data, size_t size, plush_diag *diag)
{
    const uint8_t *p = data;
    size_t done = 0;
    while (done < size) {
        size_t chunk = size - done < PLUSH__OS_IO_MAX ? size - done : PLUSH__OS_IO_MAX;
        ssize_t w = write(fd, p + done, chunk);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "write failed: %s",
                                   w == 0 ? "nothing written" : strerror(errno));
        done += (size_t)w;
    }
    return PLUSH_OK;
}

plush_status plush__file_write_temp(const char *target, const void *data, size_t size, char **tmp, int *slot,
                                    plush_diag *diag)
{
    *tmp = NULL;
    *slot = -1;
    /* ".NAME.plush-tmp.XXXXXX" beside the target: hidden, and recognisable as plush's own. */
    const char *slash = plush__os_last_separator(target);
    size_t dir = slash ? (size_t)(slash - target) + 1 : 0;
    size_t n = strlen(target) + sizeof ".plush-tmp.XXXXXX" + 1;
    char *name = malloc(n);
    if (!name)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    snprintf(name, n, "%.*s.%s.plush-tmp.XXXXXX", (int)dir, target, target + dir);
    /* Registered before it exists: mkstemp fills the name in place, so a signal that lands just after
     * the file is created still finds it. */
    *slot = plush__guard_add(PLUSH__GUARD_FILE, name);
    int fd = plush__os_mkstemp(name);
    if (fd < 0) {
        int e = errno;
        plush__guard_remove(*slot);
        *slot = -1;
        free(name);
        return plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "cannot create: %s", strerror(e));
    }
    plush_status st = write_all(fd, data, size, diag);
    /* mkstemp makes 0600 files; outputs are ordinary files the user shares, so follow the umask. */
    plush__os_share_mode(fd);
    if (close(fd) != 0 && st == PLUSH_OK)
        st = plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "cannot write: %s", strerror(errno));
    if (st != PLUSH_OK) {
        plush__os_unlink(name);
        plush__guard_remove(*slot);
        *slot = -1;
        free(name);
        return st;
    }
    *tmp = name;
    return PLUSH_OK;
}

plush_status plush__file_write_stream(const char *path, const void *data, size_t size, plush_diag *diag)
{
    plush__os_info st;
    /* No creation: the node is there. Truncated only where a /proc link leads to a regular file. */
    int fd = plush__os_open_write(path, plush__os_stat(path, true, &st) && st.kind == PLUSH__OS_FILE);
    if (fd < 0)
        return plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "cannot open: %s", strerror(errno));
    plush_status s = write_all(fd, data, size, diag);
    if (close(fd) != 0 && s == PLUSH_OK && errno != EINTR)
        s = plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "cannot write: %s", strerror(errno));
    return s;
}

plush_status plush_file_write_atomic(const char *path, const void *data, size_t size, plush_diag *diag)
{
    plush__target_kind kind;
    char *target;
    plush_status st = plush__file_target(path, &kind, &target, diag);
    if (st != PLUSH_OK)
        return st;
    if (kind == PLUSH__TARGET_STREAM)
        return plush__file_write_stream(path, data, size, diag);
    char *tmp;
    int slot;
    st = plush__file_write_temp(target, data, size, &tmp, &slot, diag);
    if (st == PLUSH_OK) {
        const plush__rename op = {tmp, target, false};
        if (plush__guard_commit(&op, 1) != 1) {
            st = plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "cannot write: %s", strerror(errno));
            plush__os_unlink(tmp);
        }
        plush__guard_remove(slot);
        free(tmp);
    }
    free(target);
    return st;
}

plush_status plush_file_make_dir(const char *path, plush_diag *diag)
{
    if (plush__os_mkdir(path) == 0 || errno == EEXIST || errno == EACCES) {
        plush__os_info st;
        if (plush__os_stat(path, true, &st) && st.kind == PLUSH__OS_DIR)
            return PLUSH_OK;
        if (errno == EACCES)
            return plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "cannot create the directory: %s", strerror(EACCES));
        return plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "exists and is not a directory");
    }
    return plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "cannot create the directory: %s", strerror(errno));
}
