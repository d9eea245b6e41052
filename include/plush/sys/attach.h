/* plush attach internals: the soft-body field names plush_attach_set_field takes.
 * Extension-level API (as libgit2's sys/): what plush's own modules, its command-line tool and its
 * tests use beside the public plush/attach.h; a host program needs none of it. */
#ifndef PLUSH_SYS_ATTACH_H
#define PLUSH_SYS_ATTACH_H

#include "plush/attach.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The field names plush_attach_set_field takes, in the order plush/attach.h lists them (count in *count),
 * for help texts and tests. */
const char *const *plush_attach_field_names(size_t *count);

#ifdef __cplusplus
}
#endif
#endif
