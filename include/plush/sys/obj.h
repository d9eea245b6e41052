/* plush OBJ internals: where a vertex line of an OBJ file lies.
 * Extension-level API (as libgit2's sys/): what plush's own modules, its command-line tool and its
 * tests use beside the public plush/obj.h; a host program needs none of it. */
#ifndef PLUSH_SYS_OBJ_H
#define PLUSH_SYS_OBJ_H

#include "plush/obj.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where position number vertex (0-based, in file order) is written: its line (1-based) and the byte
 * offset of its "v"; false when the data has no such position. For messages about a value read fine
 * that a later step refuses. */
bool plush_obj_locate_position(const uint8_t *data, size_t size, size_t vertex, size_t *line, size_t *offset);

#ifdef __cplusplus
}
#endif
#endif
