/* The embedded demo: a plush teddy bear of 60k vertices hanging from a hook by a PMX 2.1 soft-body cage, its
 * shake motion and its rigid-eyes Influence Map override, generated in code (src/demo). `plush demo` and
 * tools/demo/gen_bear write them with this call.
 *
 *   plush_demo_files files;
 *   if (plush_demo_write_files("proxies", &files, &diag) == PLUSH_OK)
 *       printf("%s: %zu vertices\n", files.pmx, files.vertex_count);
 *
 * Everything is deterministic: no clock, no random numbers, and the cage uses nothing from libm but sqrtf
 * (correctly rounded everywhere), so the files are the same bytes on every machine.
 */
#ifndef PLUSH_DEMO_H
#define PLUSH_DEMO_H

#include "plush/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The three files in dir (plush_bear.pmx, plush_bear_shake.vmd, plush_bear.im2), each written atomically;
 * out gets their paths and what they hold. */
typedef struct plush_demo_files {
    char pmx[4096], vmd[4096], im2[4096];
    size_t vertex_count, triangle_count, cage_nodes, cage_triangles, key_count;
    float cage_cell;
    uint32_t pin_count;
} plush_demo_files;
/* Writes the three files into dir (which must exist), each atomically; fails with the first write's error. */
plush_status plush_demo_write_files(const char *dir, plush_demo_files *out, plush_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
