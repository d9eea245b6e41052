/* The files tests read, by one name each: the demo bear that `make` writes into proxies/, and the real
 * files in ../shared/data (tests run from the project root; see its SOURCES.md files). */
#ifndef PLUSH_TEST_SHARED_DATA_H
#define PLUSH_TEST_SHARED_DATA_H

#include <stddef.h>
#include <stdint.h>

/* The demo bear, its shake and its rigid-eyes override (tools/demo/gen_bear). */
#define BEAR "proxies/plush_bear.pmx"
#define BEAR_VMD "proxies/plush_bear_shake.vmd"
#define BEAR_IM2 "proxies/plush_bear.im2"

#define SHARED_DATA "../shared/data"
#define SHARED_MMD SHARED_DATA "/mmd"
#define SHARED_CHARACTERS SHARED_DATA "/characters"
/* Alicia, the full-size character most tests use, and the sample motion that goes with her. */
#define ALICIA SHARED_MMD "/alicia/Alicia_solid.pmx"
#define MOTION_0046 SHARED_MMD "/mmd_base/サンプルモーション_0046.vmd"

/* Reads a whole file into malloc'd memory; NULL when missing. */
uint8_t *test_read_file(const char *path, size_t *size);
/* Calls fn for every file under SHARED_MMD whose name ends with ext (".pmx"), sorted by path. */
size_t test_each_shared_file(const char *ext, void (*fn)(const char *path, void *ctx), void *ctx);

#endif
