/* Shared by motion.c, morph.c, bones.c and ik.c: the bound motion, the anim state and small quaternion /
 * rigid-transform helpers.
 *
 * Conventions: quaternions are x y z w and act on column vectors (q * v * q^-1); q1 * q2 applies q2
 * first. A rigid transform is a cglm-layout float[16] (column-major: columns 0..2 the rotated axes,
 * column 3 the translation). PMX data is used as stored (left-handed): rotation formulas do not depend
 * on handedness, so positions, VMD quaternions and PMX limits agree without any axis flip. */
#ifndef PLUSH_ANIM_INTERNAL_H
#define PLUSH_ANIM_INTERNAL_H

#include "plush/anim.h"
#include "plush/sys/core.h"

#include <cglm/cglm.h>

#include <math.h>
#include <string.h>

/* ---- the bound motion ---------------------------------------------------------------------------- */

/* One bone key, ready to sample: curve c (0 X, 1 Y, 2 Z, 3 rotation) has control points
 * cp[c] = {x1, y1, x2, y2}; bit c of linear is set when that curve is the straight line. */
typedef struct anim_bone_key {
    float frame;
    float translation[3];
    float rotation[4];
    uint8_t cp[4][4];
    uint8_t linear;
} anim_bone_key;

typedef struct anim_morph_key {
    float frame;
    float weight;
} anim_morph_key;

typedef struct anim_ik_switch {
    int32_t bone;
    uint8_t enabled;
} anim_ik_switch;

typedef struct anim_property_key {
    float frame;
    uint32_t first, count;   /* range in plush_motion.ik_switches */
} anim_property_key;

/* A track: keys first..first+count of one array, sorted by frame, one key per frame. */
typedef struct anim_track {
    uint32_t first, count;
} anim_track;

struct plush_motion {
    plush_arena arena;
    size_t bone_count, morph_count;      /* of the model it was bound to */
    anim_track *bone_tracks;             /* per model bone */
    anim_bone_key *bone_keys;
    anim_track *morph_tracks;            /* per model morph */
    anim_morph_key *morph_keys;
    size_t property_key_count;
    anim_property_key *property_keys;    /* sorted by frame */
    anim_ik_switch *ik_switches;
    plush_motion_stats stats;
};

/* ---- the anim -------------------------------------------------------------------------------------- */

enum { ANIM_UV_SETS = 5 };   /* UV morphs, then additional UV1..UV4 */

typedef struct anim_material_ops {
    plush_anim_material mul, add;
} anim_material_ops;

struct plush_anim {
    const plush_pmx_model *model;
    plush_arena arena;
    size_t bone_count, morph_count, vertex_count, material_count;

    /* Set up once. */
    uint32_t *deform_order;      /* bone indices: after-physics flag, then layer, then index */
    uint32_t *tree;              /* bone indices in depth-first preorder: parents before children */
    uint32_t *tree_pos;          /* position of each bone in tree */
    uint32_t *subtree_end;       /* per bone: end (exclusive) of its subtree's run in tree */
    int32_t *parent;             /* parent index, -1 for roots */
    int32_t *append;             /* append parent, -1 when the bone has none */
    float (*rel)[3];             /* rest position relative to the parent's rest position */
    uint8_t *stage;              /* plush_anim_stage of each bone */
    bool *is_ik;                 /* IK bone with a usable target */
    bool *ik_link;               /* bone is a link of some IK chain */
    /* Per IK bone: the bones from its root-most link down to its effector (parents first), the only
     * globals an IK step changes that the solve reads; count 0 when the links are not all on that
     * parent chain (the solve then updates whole subtrees). path_pos gives a path bone's position. */
    uint32_t *ik_path_first, *ik_path_count;
    uint32_t *ik_paths;
    uint32_t *path_pos;          /* scratch of one solve: position on the current path, or UINT32_MAX */

    /* Inputs of the frame. */
    float (*motion_t)[3], (*motion_q)[4];
    float (*morph_t)[3], (*morph_q)[4];
    bool *ik_enabled;
    float *weights_in;           /* morph weights as sampled / set */

    /* Deform state. */
    float (*append_t)[3], (*append_q)[4];  /* the accumulated append of each bone (ratio applied) */
    float (*ik_q)[4];                     /* IK rotation of links */
    float (*local_t)[3], (*local_q)[4];   /* local transform relative to the parent */
    float (*global)[16];
    float (*skin)[16];
    bool *driven;                /* bones whose global physics wrote last */
    bool *dirty;                 /* scratch for plush_anim_apply_physics */

    /* Morph results. */
    float *weights;              /* effective weights after group / flip */
    float (*vertex_offsets)[3];  /* NULL when the model has no vertex morph */
    bool vertex_active;
    float (*uv_offsets[ANIM_UV_SETS])[4];
    bool uv_active[ANIM_UV_SETS];
    bool *morph_applied;         /* vertex / UV morphs whose offsets are in the buffers now */
    anim_material_ops *material_ops;
    plush_anim_material *materials;
    plush_anim_impulse *impulses;
    size_t impulse_count, impulse_capacity;

    uint32_t unsupported;
    char unsupported_message[PLUSH_DIAG_MESSAGE];
};

/* motion.c */
void plush__anim_motion_sample(plush_anim *anim, const plush_motion *motion, float frame);

/* morph.c */
plush_status plush__anim_morph_setup(plush_anim *anim, plush_diag *diag);
void plush__anim_morph_reset(plush_anim *anim);

/* Bones of the stage being deformed; in the after-physics pass, bones physics wrote keep its globals. */
static inline bool plush__anim_in_stage(const plush_anim *a, uint32_t b, int stage)
{
    return a->stage[b] == stage && !(stage == PLUSH_ANIM_AFTER_PHYSICS && a->driven[b]);
}

/* transforms.c: recomputes the globals of bone b's subtree from their locals (bones of stage only). */
void plush__anim_update_subtree(plush_anim *anim, uint32_t b, int stage);
/* Bone b's local transform from its rest offset, motion, morph, append and IK parts. */
void plush__anim_update_local(plush_anim *anim, uint32_t b);
/* The globals of path[from..count-1] (parents first) from their locals (bones of stage only). */
void plush__anim_update_path(plush_anim *anim, const uint32_t *path, uint32_t from, uint32_t count, int stage);

/* ik.c */
void plush__anim_ik_solve(plush_anim *anim, uint32_t ik_bone, int stage);

/* ---- math ------------------------------------------------------------------------------------------ */

/* cglm where its arithmetic is the one bone outputs were made with (plush pose output is compared byte for
 * byte): conjugates, vector differences and dots. The rotation matrix of a quaternion, the slerp and the
 * compose keep their own order of operations (cglm's differ in the last bit). cglm takes non-const arrays,
 * so const inputs are copied into locals; out may alias an input. */

static inline void anim_q_identity(float q[4])
{
    glm_quat_identity(q);
}

/* Written out, not glm_quat_mul: cglm's SSE product gives the same bits, but its vector loads of
 * quaternions just written as scalars cost store-forwarding stalls that bench_anim's pose time shows. */
static inline void anim_q_mul(const float a[4], const float b[4], float out[4])
{
    float x = a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1];
    float y = a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0];
    float z = a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3];
    float w = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2];
    out[0] = x;
    out[1] = y;
    out[2] = z;
    out[3] = w;
}

static inline void anim_q_conj(const float q[4], float out[4])
{
    versor l;
    memcpy(l, q, sizeof l);
    glm_quat_conjugate(l, out);
}

/* A zero or non-finite quaternion becomes the identity: bad key data never reaches a matrix. */
static inline void anim_q_normalize(float q[4])
{
    float n = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    if (!(n > 1e-20f) || !isfinite(n)) {
        anim_q_identity(q);
        return;
    }
    float s = 1.0f / sqrtf(n);
    for (int k = 0; k < 4; k++)
        q[k] *= s;
}

static inline void anim_q_axis_angle(const float axis[3], float angle, float out[4])
{
    float s = sinf(0.5f * angle);
    out[0] = axis[0] * s;
    out[1] = axis[1] * s;
    out[2] = axis[2] * s;
    out[3] = cosf(0.5f * angle);
}

/* Spherical interpolation along the shorter arc; t outside 0..1 extrapolates (append ratios may be
 * negative or above 1). */
void plush__anim_q_slerp(const float a[4], const float b[4], float t, float out[4]);
/* slerp(identity, q, t): q's rotation angle scaled by t about its axis. */
void plush__anim_q_scale(const float q[4], float t, float out[4]);

/* Rotation part of a rigid transform from a unit quaternion. */
static inline void anim_q_mat3(const float q[4], float m[9])
{
    float x = q[0], y = q[1], z = q[2], w = q[3];
    float xx = x * x, yy = y * y, zz = z * z, xy = x * y, xz = x * z, yz = y * z, wx = w * x, wy = w * y,
          wz = w * z;
    m[0] = 1 - 2 * (yy + zz); /* column 0 */
    m[1] = 2 * (xy + wz);
    m[2] = 2 * (xz - wy);
    m[3] = 2 * (xy - wz);     /* column 1 */
    m[4] = 1 - 2 * (xx + zz);
    m[5] = 2 * (yz + wx);
    m[6] = 2 * (xz + wy);     /* column 2 */
    m[7] = 2 * (yz - wx);
    m[8] = 1 - 2 * (xx + yy);
}

/* out = parent * [R(q) | t] (parent NULL: the identity). out must not alias parent. */
static inline void anim_compose(const float *parent, const float t[3], const float q[4], float out[16])
{
    float r[9];
    anim_q_mat3(q, r);
    if (!parent) {
        for (int c = 0; c < 3; c++) {
            out[4 * c + 0] = r[3 * c + 0];
            out[4 * c + 1] = r[3 * c + 1];
            out[4 * c + 2] = r[3 * c + 2];
            out[4 * c + 3] = 0.0f;
        }
        out[12] = t[0];
        out[13] = t[1];
        out[14] = t[2];
        out[15] = 1.0f;
        return;
    }
    for (int c = 0; c < 3; c++) {
        for (int k = 0; k < 3; k++)
            out[4 * c + k] = parent[k] * r[3 * c] + parent[4 + k] * r[3 * c + 1] + parent[8 + k] * r[3 * c + 2];
        out[4 * c + 3] = 0.0f;
    }
    for (int k = 0; k < 3; k++)
        out[12 + k] = parent[k] * t[0] + parent[4 + k] * t[1] + parent[8 + k] * t[2] + parent[12 + k];
    out[15] = 1.0f;
}

/* v in the frame of rigid transform m: R^T (p - origin). Only the three axes and the origin are copied
 * for cglm (IK calls this twice per step). */
static inline void anim_to_local(const float m[16], const float p[3], float out[3])
{
    vec3 axis[3], origin, lp, d;
    for (int c = 0; c < 3; c++)
        memcpy(axis[c], m + 4 * c, sizeof axis[c]);
    memcpy(origin, m + 12, sizeof origin);
    memcpy(lp, p, sizeof lp);
    glm_vec3_sub(lp, origin, d);
    for (int c = 0; c < 3; c++)
        out[c] = glm_vec3_dot(axis[c], d);
}

/* VMD easing: the curve through (0,0), (x1/127, y1/127), (x2/127, y2/127), (1,1) is solved for the
 * parameter whose x is t (0..1), and its y returned. cp = {x1, y1, x2, y2}, each 0..127. */
float plush__vmd_bezier(const uint8_t cp[4], float t);

#endif
