/* Influence Map File 2 (.im2, text version 1001, from RokDeBone2): which bones move each vertex of a part.
 *
 *   plush_im2_map *map = NULL;
 *   plush_diag diag = { .file = "overrides.im2" };
 *   if (plush_im2_read(data, size, &map, &diag) == PLUSH_OK)
 *       for (size_t p = 0; p < map->part_count; p++)
 *           use(map->parts[p].name.s, map->parts[p].entries, map->parts[p].entry_count);
 *   plush_buf out = {0};
 *   plush_im2_write(map, &out, &diag);
 *   plush_im2_free(map);
 *
 * The file, Shift-JIS text (CP932) with CRLF line ends:
 *
 *   InfluenceMapFile2 : ver1001
 *
 *   PARTSTART
 *   <part name>
 *   <vertex>, <child bone>, <parent bone>, CALC_ONESKIN0 | CALC_NOSKIN0
 *   ...
 *   PARTEND
 *
 * The first line is the header (spacing around ':' may vary; versions 1002-1004 are RokDeBone2's binary
 * variant and are refused as PLUSH_E_VERSION). The line right after PARTSTART is the part's name, taken
 * whole (blanks included). Blank lines may stand between parts and inside a part; anything else outside
 * a part is an error. Lines end in CR LF, LF or a lone CR. Numbers are decimal int32 with an optional
 * sign; blanks (space, tab) may surround every field.
 *
 * What the numbers mean is up to the user of the map (plush: a part is a PMX material by name, the
 * vertex is numbered in order of first use by the material's faces or is -1 for every vertex of the
 * part, bones count the model's bones and then one pseudo-bone per proxy triangle), so the reader checks
 * syntax only and keeps each entry's line number and byte offset for the errors found later.
 * Errors: section "line", index = the 1-based line number, offset = the byte at fault.
 */
#ifndef PLUSH_IM2_H
#define PLUSH_IM2_H

#include "plush/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PLUSH_IM2_HEADER "InfluenceMapFile2 : ver1001"

typedef enum plush_im2_method {
    PLUSH_IM2_ONESKIN = 0,   /* CALC_ONESKIN0: blended skinning */
    PLUSH_IM2_NOSKIN = 1     /* CALC_NOSKIN0: rigid, follows the child bone alone */
} plush_im2_method;

typedef struct plush_im2_entry {
    int32_t vertex;          /* -1: every vertex of the part */
    int32_t child;           /* bone numbers as written */
    int32_t parent;
    uint8_t method;          /* plush_im2_method */
    uint32_t line;           /* 1-based line it was read from; 0 when built in code */
    int64_t offset;          /* byte offset of that line; -1 when built in code */
} plush_im2_entry;

typedef struct plush_im2_part {
    plush_str name;          /* UTF-8; raw keeps bytes that are not valid Shift-JIS */
    uint32_t line;           /* the name's line (PARTSTART is the line before); 0 when built */
    int64_t offset;          /* byte offset of the name's line; -1 when built */
    size_t entry_count;
    plush_im2_entry *entries;
} plush_im2_part;

typedef struct plush_im2_map {
    size_t part_count;
    plush_im2_part *parts;
    plush_arena arena;       /* owns everything above */
} plush_im2_map;

/* Parses size bytes. On failure *out is NULL and diag names the line and byte. A name that is not
 * valid Shift-JIS reads with U+FFFD and a warning. */
plush_status plush_im2_read(const uint8_t *data, size_t size, plush_im2_map **out, plush_diag *diag);
/* Reads a file (diag->file is set to path when NULL). */
plush_status plush_im2_read_file(const char *path, plush_im2_map **out, plush_diag *diag);

/* An empty map to fill in code (arrays from map->arena or memory that outlives the map). */
plush_im2_map *plush_im2_create(void);
void plush_im2_free(plush_im2_map *map);

/* Appends the file's bytes to out. Fails (out unchanged in size) on a method other than the two, or a
 * name that Shift-JIS cannot hold or that holds a line break or NUL (section "part", its index). */
plush_status plush_im2_write(const plush_im2_map *map, plush_buf *out, plush_diag *diag);
/* Writes atomically to path. */
plush_status plush_im2_write_file(const plush_im2_map *map, const char *path, plush_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
