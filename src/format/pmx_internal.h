/* Private pieces shared by the PMX reader, validator and writer. */
#ifndef PLUSH_FORMAT_PMX_INTERNAL_H
#define PLUSH_FORMAT_PMX_INTERNAL_H

#include "plush/pmx.h"
#include "plush/sys/core.h"

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

/* PLUSH_E_NO_GEOMETRY for a summary-only model: what the writer needs (it keeps values as they are,
 * where plush_pmx_require_geometry also refuses unusable vertex and bone values). */
plush_status plush__pmx_require_kept(const plush_pmx_model *m, plush_diag *diag);

/* Number of items of each index kind in the model (for range checks and index sizes). */
size_t plush__pmx_index_kind_count(const plush_pmx_model *m, int kind);

/* Validation with a choice of target version (the writer validates against what it will write).
 * Refuses a summary-only model. */
plush_status plush__pmx_validate_as(const plush_pmx_model *m, bool as_21, plush_diag *diag);

/* What the validator needs of the vertices and faces a summary-only read did not keep. Vertex bone
 * indices can only be judged once the bone count (later in the file) is known: the reader keeps
 * their range, and when that range breaks the rule the vertex section is read again to find the
 * first vertex at fault. Face indices are judged as they stream past (the vertex count is known). */
typedef struct pmx_unkept {
    const uint8_t *data;       /* the file being read, alive while it is validated */
    size_t size;
    size_t vertex_start;       /* offset of the first vertex */
    int64_t bone_min, bone_max;/* over every vertex's bone slots (unused slots hold -1) */
    int64_t bad_face;          /* first face index >= vertex_count, -1 when none */
    uint32_t bad_face_vertex;  /* the vertex index it holds */
} pmx_unkept;

/* The validation a read runs: u is NULL for a model with its geometry, else what a summary-only
 * read learned while streaming (the same rules, the same first failure). */
plush_status plush__pmx_validate_read(const plush_pmx_model *m, bool as_21, const pmx_unkept *u, plush_diag *diag);

/* Reads the vertex section of u->data again (pmx_read_geometry.c) and hands each vertex to check (the
 * validation's rules for one vertex, pmx_validate.c), stopping at the first it refuses (false, diag set
 * by check or here). */
typedef bool (*pmx_vertex_check)(void *ctx, const plush_pmx_vertex *v, size_t i);
bool plush__pmx_recheck_vertices(const pmx_unkept *u, const plush_pmx_model *m, pmx_vertex_check check, void *ctx,
                                 plush_diag *diag);


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
plush_status plush__pmx_downgrade(const plush_pmx_model *m, bool lossy, plush_arena *arena, plush_pmx_model *view,
                           plush_diag *diag);

#endif
