/* Test helpers for the real files in ../shared/data/mmd (tests run from the project root). */
#ifndef PLUSH_TEST_SHARED_DATA_H
#define PLUSH_TEST_SHARED_DATA_H

#include <stddef.h>
#include <stdint.h>

#define SHARED_MMD "../shared/data/mmd"

/* Reads a whole file into malloc'd memory; NULL when missing. */
uint8_t *test_read_file(const char *path, size_t *size);
/* Calls fn for every file under SHARED_MMD whose name ends with ext (".pmx"), sorted by path. */
size_t test_each_shared_file(const char *ext, void (*fn)(const char *path, void *ctx), void *ctx);

#endif
