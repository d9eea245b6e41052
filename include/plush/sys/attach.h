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

/* A cage made for some materials and attached to the model in memory, as plush run --cage and plush
 * compare --cage and --proxy-triangles make one: plush_attach_make_cage, then plush_attach with the
 * automatic mask, the automatic pins on those materials (pin_band as plush_attach_options.pin_band) and a
 * hold required of every piece. */
typedef struct plush_attach_part {
    plush_cage_mesh cage;           /* in the arena */
    plush_cage_result made;         /* what the simplifier made of the target */
    plush_attach_details details;   /* the pieces left out of the cage (in the arena) */
    plush_attach_result attached;
    plush_pmx_model *model;         /* the model with the cage attached; shares the model's arrays: free it first */
} plush_attach_part;

/* Makes out (zeroed first) from model's materials (NULL or 0: every material) toward `triangles` (0:
 * PLUSH_ATTACH_CAGE_TRIANGLES), with soft's parameters (NULL: the "plush" preset). Errors: those of
 * plush_attach_make_cage and plush_attach (PLUSH_E_UNHELD for a piece nothing holds). */
plush_status plush_attach_part_make(const plush_pmx_model *model, const char *const *materials, size_t material_count,
                                    size_t triangles, const plush_pmx_soft_body *soft, float pin_band,
                                    plush_arena *arena, plush_attach_part *out, plush_diag *diag);
/* Why a made cage is not within 20% of the target it was made for, as a clause starting "; " ("" when it
 * is), into buf; fix says what fits a surface that keeps its pieces. Returns buf. */
const char *plush_attach_target_note(const plush_cage_result *result, size_t target, const char *fix, char *buf,
                                     size_t size);

#ifdef __cplusplus
}
#endif
#endif
