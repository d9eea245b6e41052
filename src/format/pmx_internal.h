/* Private pieces shared by the PMX reader, validator and writer. */
#ifndef PLUSH_FORMAT_PMX_INTERNAL_H
#define PLUSH_FORMAT_PMX_INTERNAL_H

#include "plush/pmx.h"

/* Section names as diagnostics print them; the reader maps a validation failure back to the byte
 * offset of the item by its section name. */
#define PMX_SEC_HEADER "header"
#define PMX_SEC_INFO "model info"
#define PMX_SEC_VERTEX "vertex"
#define PMX_SEC_FACE "face index"
#define PMX_SEC_TEXTURE "texture"
#define PMX_SEC_MATERIAL "material"
#define PMX_SEC_BONE "bone"
#define PMX_SEC_MORPH "morph"
#define PMX_SEC_FRAME "display frame"
#define PMX_SEC_RIGID "rigid body"
#define PMX_SEC_JOINT "joint"
#define PMX_SEC_SOFT "soft body"

#define PMX_V20 2.0f
#define PMX_V21 2.1f

static inline bool pmx_is_21(float version) { return version == PMX_V21; }

/* Number of items of each index kind in the model (for range checks and index sizes). */
size_t pmx_index_kind_count(const plush_pmx_model *m, int kind);

/* Validation with a choice of target version (the writer validates against what it will write). */
plush_status pmx_validate_as(const plush_pmx_model *m, bool as_21, plush_diag *diag);


/* The 18 soft-body config floats in file order (VCF ... SS_SPLT_CL). */
enum { PMX_SOFT_CONFIG_COUNT = 18 };
static inline void pmx_soft_config_get(const plush_pmx_soft_config *c, float out[PMX_SOFT_CONFIG_COUNT])
{
    const float v[PMX_SOFT_CONFIG_COUNT] = {c->vcf, c->dp, c->dg, c->lf, c->pr, c->vc, c->df, c->mt, c->chr,
                                            c->khr, c->shr, c->ahr, c->srhr_cl, c->skhr_cl, c->sshr_cl,
                                            c->sr_splt_cl, c->sk_splt_cl, c->ss_splt_cl};
    for (int i = 0; i < PMX_SOFT_CONFIG_COUNT; i++)
        out[i] = v[i];
}
static inline void pmx_soft_config_set(plush_pmx_soft_config *c, const float v[PMX_SOFT_CONFIG_COUNT])
{
    float *const f[PMX_SOFT_CONFIG_COUNT] = {&c->vcf, &c->dp, &c->dg, &c->lf, &c->pr, &c->vc, &c->df, &c->mt,
                                             &c->chr, &c->khr, &c->shr, &c->ahr, &c->srhr_cl, &c->skhr_cl,
                                             &c->sshr_cl, &c->sr_splt_cl, &c->sk_splt_cl, &c->ss_splt_cl};
    for (int i = 0; i < PMX_SOFT_CONFIG_COUNT; i++)
        *f[i] = v[i];
}

/* For a 2.0 target: fills *view with m itself when it has nothing 2.1-only; otherwise fails naming
 * the first 2.1-only element, or (lossy) makes *view a shallow copy without them, new arrays taken
 * from arena, one warning per drop. */
plush_status pmx_downgrade(const plush_pmx_model *m, bool lossy, plush_arena *arena, plush_pmx_model *view,
                           plush_diag *diag);

#endif
