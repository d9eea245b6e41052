/* Whole-file reads and atomic writes (temporary file + rename). */
#include "plush/core.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

plush_status plush_file_read(const char *path, uint8_t **out_data, size_t *out_size, plush_diag *diag)
{
    *out_data = NULL;
    *out_size = 0;
    /* O_NONBLOCK so a FIFO without a writer cannot hang the open; regular files ignore it. */
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0)
        return plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "not a regular file");
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    size_t size = (size_t)st.st_size;
    uint8_t *data = malloc(size ? size : 1);
    if (!data) {
        close(fd);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "cannot hold %zu bytes in memory", size);
    }
    size_t got = 0;
    while (got < size) {
        ssize_t r = read(fd, data + got, size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            int e = errno;
            free(data);
            close(fd);
            return plush_diag_fail(diag, PLUSH_E_IO, (int64_t)got, NULL, -1, "read failed: %s",
                                   r == 0 ? "file shrank while reading" : strerror(e));
        }
        got += (size_t)r;
    }
    close(fd);
    *out_data = data;
    *out_size = size;
    return PLUSH_OK;
}

plush_status plush_file_parse(const char *path, plush_file_parser parse, void *ctx, plush_diag *diag)
{
    if (diag && !diag->file)
        diag->file = path;
    uint8_t *data;
    size_t size;
    plush_status st = plush_file_read(path, &data, &size, diag);
    if (st != PLUSH_OK)
        return st;
    st = parse(data, size, ctx, diag);
    free(data);
    return st;
}

plush_status plush_file_write_atomic(const char *path, const void *data, size_t size, plush_diag *diag)
{
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 16);
    if (!tmp)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp.XXXXXX", 12);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "cannot create: %s", strerror(e));
    }
    const uint8_t *p = data;
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, p + done, size - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = errno;
            close(fd);
            unlink(tmp);
            free(tmp);
            return plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "write failed: %s", strerror(e));
        }
        done += (size_t)w;
    }
    /* mkstemp makes 0600 files; outputs are ordinary files the user shares, so follow the umask. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    if (close(fd) != 0 || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        free(tmp);
        return plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "cannot write: %s", strerror(e));
    }
    free(tmp);
    return PLUSH_OK;
}

plush_status plush_file_make_dir(const char *path, plush_diag *diag)
{
    if (mkdir(path, 0777) == 0 || errno == EEXIST) {
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            return PLUSH_OK;
        return plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "exists and is not a directory");
    }
    return plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "cannot create the directory: %s", strerror(errno));
}
