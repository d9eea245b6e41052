/* Whole-file reads (large files mapped, so a reader refusing the header touches one page) and atomic
 * writes (temporary file + rename). */
#include "plush/core.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Opens path for reading: a regular file, else PLUSH_E_IO (a directory, a FIFO, a device). */
static plush_status open_regular(const char *path, int *out_fd, size_t *size, plush_diag *diag)
{
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
    *size = (size_t)st.st_size;
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
        ssize_t r = read(fd, data + got, size - got);
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
    void *map = size >= PLUSH_FILE_MAP_MIN ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    if (map != MAP_FAILED) {
        /* the readers look at the header first and walk forwards: tell the kernel so */
        madvise(map, size, MADV_SEQUENTIAL);
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
        munmap((void *)bytes->data, bytes->size);
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
