/* Vertex skinning of a PMX model: BDEF1, BDEF2, BDEF4, SDEF and QDEF, positions and normals.
 *
 * This is the per-frame hot loop (Alicia Solid: 22k vertices, and the whole pipeline is held to 2,000
 * frames/s on one core), so it allocates nothing, reads each vertex once and blends before it transforms:
 * BDEF vertices blend their bones' skinning matrices column by column (four floats at a time) and
 * transform once. SDEF and QDEF take each bone's rotation as a quaternion, computed from its matrix per
 * vertex: no scratch memory is needed, and models use them for few vertices.
 *
 * Arrays are indexed by vertex: positions[v], normals[v] and offsets[v] for v in first..first+count, so
 * callers can split one model-sized buffer between workers.
 *
 * SDEF follows the formulation MMD viewers agree on (saba's MMDModel, babylon-mmd's SDEF shader and
 * loader): with w0, w1 the stored weights and C, R0, R1 the stored points,
 *     rw  = w0 R0 + w1 R1,  r0 = C + R0 - rw,  r1 = C + R1 - rw   (R0, R1 moved so that they average to C)
 *     cr0 = (C + r0) / 2,   cr1 = (C + r1) / 2
 *     q   = slerp(q0, q1, w1)                                      (the bones' rotations, same hemisphere)
 *     p'  = q (p - C) q*  +  w0 M0 cr0  +  w1 M1 cr1,   n' = q n q*
 * Around the joint the vertex turns with one blended rotation instead of a blend of two rotated points,
 * which is what keeps an elbow from collapsing. Since w0 cr0 + w1 cr1 = C, a pure translation t of both
 * bones gives p + t, exactly what BDEF2 gives.
 *
 * QDEF is dual-quaternion blending (Kavan et al.): each bone's skinning matrix becomes a unit dual
 * quaternion, the four are brought into the first one's hemisphere, blended with the stored weights and
 * normalised; rotations then blend without the shrinking of linear blending (the "candy wrapper"). */
#include "anim/anim_internal.h"
#include "core/geom.h"
#include "plush/sys/anim.h"

#include <math.h>
#include <string.h>

#if !defined(__GNUC__)
#error "src/anim/skin.c needs GCC or Clang vector extensions"
#endif

/* Four floats in one SSE/NEON register; GCC and Clang lower the arithmetic to the target's SIMD. */
typedef float v4 __attribute__((vector_size(16)));

#define HOT static inline __attribute__((always_inline))

/* The matrices are caller memory without an alignment promise: memcpy loads them unaligned. */
HOT v4 load_column(const float *m, int k)
{
    v4 c;
    memcpy(&c, m + 4 * k, sizeof c);
    return c;
}

HOT void store3(float out[3], v4 a)
{
    out[0] = a[0];
    out[1] = a[1];
    out[2] = a[2];
}

HOT void store_unit(float out[3], v4 n, const float fallback[3])
{
    float len2 = n[0] * n[0] + n[1] * n[1] + n[2] * n[2];
    /* A degenerate blend (bones pulling opposite ways) has no direction; the rest normal is the least
     * surprising answer and keeps every output finite. */
    if (!(len2 > 1e-30f)) {
        memcpy(out, fallback, 3 * sizeof *out);
        return;
    }
    float s = 1.0f / sqrtf(len2);
    out[0] = n[0] * s;
    out[1] = n[1] * s;
    out[2] = n[2] * s;
}

/* ---- quaternions (x y z w) ---------------------------------------------------------------------- */

/* q v q* for a unit q: t = 2 (q.xyz x v), v' = v + w t + q.xyz x t. */
static void quat_rotate(const float q[4], const float v[3], float out[3])
{
    float t0 = 2.0f * (q[1] * v[2] - q[2] * v[1]);
    float t1 = 2.0f * (q[2] * v[0] - q[0] * v[2]);
    float t2 = 2.0f * (q[0] * v[1] - q[1] * v[0]);
    out[0] = v[0] + q[3] * t0 + (q[1] * t2 - q[2] * t1);
    out[1] = v[1] + q[3] * t1 + (q[2] * t0 - q[0] * t2);
    out[2] = v[2] + q[3] * t2 + (q[0] * t1 - q[1] * t0);
}

/* Spherical interpolation from a to b (b already in a's hemisphere); close rotations fall back to a
 * normalised lerp, where slerp's sin(theta) would divide by almost nothing. */
static void quat_slerp(const float a[4], const float b[4], float t, float out[4])
{
    float d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
    float ka = 1.0f - t, kb = t;
    if (d < 0.9995f) {
        float theta = acosf(d > -1.0f ? d : -1.0f);
        float s = sinf(theta);
        ka = sinf((1.0f - t) * theta) / s;
        kb = sinf(t * theta) / s;
    }
    float len2 = 0.0f;
    for (int k = 0; k < 4; k++) {
        out[k] = ka * a[k] + kb * b[k];
        len2 += out[k] * out[k];
    }
    float s = 1.0f / sqrtf(len2);
    for (int k = 0; k < 4; k++)
        out[k] *= s;
}

/* ---- one vertex per weight type ----------------------------------------------------------------- */

/* A bone index the caller's matrices do not cover contributes nothing (a validated model has none;
 * unused slots hold -1 with weight 0). */
HOT bool bone_ok(int32_t b, size_t bone_count)
{
    return b >= 0 && (size_t)b < bone_count;
}

/* Rest position (plus offset) and rest normal, for a vertex no bone moves. */
HOT void keep_rest(const float p[3], const float n[3], float out_p[3], float out_n[3])
{
    memcpy(out_p, p, 3 * sizeof *out_p);
    if (out_n) {
        v4 nv = {n[0], n[1], n[2], 0.0f};
        store_unit(out_n, nv, n);
    }
}

/* BDEF1/2/4: the weighted sum of up to four matrices, then one transform. Weights are used as stored.
 * Every slot is blended, an unusable one as bone 0 with weight 0: a branch per slot would mispredict on
 * the mix of two-, three- and four-bone vertices real models have. Needs bone_count > 0. */
HOT void skin_linear(const plush_pmx_vertex *v, int used, const float (*skin)[16], size_t bone_count,
                     const float p[3], float out_p[3], float out_n[3])
{
    v4 c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0};
    float wsum = 0.0f;
    for (int k = 0; k < used; k++) {
        int32_t b = v->bones[k];
        bool ok = bone_ok(b, bone_count);
        float w = ok ? v->weights[k] : 0.0f;
        const float *m = skin[ok ? b : 0];
        c0 += load_column(m, 0) * w;
        c1 += load_column(m, 1) * w;
        c2 += load_column(m, 2) * w;
        c3 += load_column(m, 3) * w;
        wsum += w;
    }
    if (wsum == 0.0f) {
        keep_rest(p, v->normal, out_p, out_n);
        return;
    }
    store3(out_p, c0 * p[0] + c1 * p[1] + c2 * p[2] + c3);
    if (out_n)
        store_unit(out_n, c0 * v->normal[0] + c1 * v->normal[1] + c2 * v->normal[2], v->normal);
}

/* BDEF1 alone: one matrix, no blend (more than a third of a typical model's vertices). */
HOT void skin_one(const plush_pmx_vertex *v, const float (*skin)[16], size_t bone_count, const float p[3],
                  float out_p[3], float out_n[3])
{
    int32_t b = v->bones[0];
    if (!bone_ok(b, bone_count) || v->weights[0] == 0.0f) {
        keep_rest(p, v->normal, out_p, out_n);
        return;
    }
    /* BDEF1's weight is 1 by definition (a reader stores it so); a built model's other value is honoured
     * like any stored weight. */
    float w = v->weights[0];
    const float *m = skin[b];
    v4 c0 = load_column(m, 0), c1 = load_column(m, 1), c2 = load_column(m, 2), c3 = load_column(m, 3);
    if (w != 1.0f) {
        c0 *= w;
        c1 *= w;
        c2 *= w;
        c3 *= w;
    }
    store3(out_p, c0 * p[0] + c1 * p[1] + c2 * p[2] + c3);
    if (out_n)
        store_unit(out_n, c0 * v->normal[0] + c1 * v->normal[1] + c2 * v->normal[2], v->normal);
}

/* M * (x, y, z, 1) of a column-major matrix. */
static void transform_point(const float *m, const float x[3], float out[3])
{
    for (int r = 0; r < 3; r++)
        out[r] = m[r] * x[0] + m[4 + r] * x[1] + m[8 + r] * x[2] + m[12 + r];
}

static void skin_sdef(const plush_pmx_vertex *v, const plush_pmx_sdef *sd, const float (*skin)[16],
                      const float p[3], float out_p[3], float out_n[3])
{
    float w0 = v->weights[0], w1 = v->weights[1];
    const float *m0 = skin[v->bones[0]], *m1 = skin[v->bones[1]];
    float q0[4], q1[4], q[4];
    plush__mat3_to_quatf(m0, 4, q0);
    plush__mat3_to_quatf(m1, 4, q1);
    if (q0[0] * q1[0] + q0[1] * q1[1] + q0[2] * q1[2] + q0[3] * q1[3] < 0.0f)
        for (int k = 0; k < 4; k++)
            q1[k] = -q1[k];
    quat_slerp(q0, q1, w1, q);

    float cr0[3], cr1[3];
    for (int k = 0; k < 3; k++) {
        float rw = sd->r0[k] * w0 + sd->r1[k] * w1;
        float r0 = sd->c[k] + sd->r0[k] - rw;
        float r1 = sd->c[k] + sd->r1[k] - rw;
        cr0[k] = (sd->c[k] + r0) * 0.5f;
        cr1[k] = (sd->c[k] + r1) * 0.5f;
    }
    float t0[3], t1[3], rel[3], rot[3];
    transform_point(m0, cr0, t0);
    transform_point(m1, cr1, t1);
    for (int k = 0; k < 3; k++)
        rel[k] = p[k] - sd->c[k];
    quat_rotate(q, rel, rot);
    for (int k = 0; k < 3; k++)
        out_p[k] = rot[k] + t0[k] * w0 + t1[k] * w1;
    if (out_n) {
        float n[3];
        quat_rotate(q, v->normal, n);
        v4 nv = {n[0], n[1], n[2], 0.0f};
        store_unit(out_n, nv, v->normal);
    }
}

static void skin_qdef(const plush_pmx_vertex *v, const float (*skin)[16], size_t bone_count, const float p[3],
                      float out_p[3], float out_n[3])
{
    float real[4] = {0}, dual[4] = {0}, first[4] = {0};
    bool have_first = false;
    for (int k = 0; k < 4; k++) {
        int32_t b = v->bones[k];
        float w = v->weights[k];
        if (!bone_ok(b, bone_count) || w == 0.0f)
            continue;
        const float *m = skin[b];
        float q[4];
        plush__mat3_to_quatf(m, 4, q);
        /* q and -q are one rotation; blending across hemispheres would cancel instead of average. */
        if (!have_first) {
            memcpy(first, q, sizeof first);
            have_first = true;
        } else if (first[0] * q[0] + first[1] * q[1] + first[2] * q[2] + first[3] * q[3] < 0.0f) {
            w = -w;
        }
        /* Dual part: (t, 0) q / 2 with t the matrix's translation. */
        float tx = m[12], ty = m[13], tz = m[14];
        float d0 = 0.5f * (q[3] * tx + ty * q[2] - tz * q[1]);
        float d1 = 0.5f * (q[3] * ty + tz * q[0] - tx * q[2]);
        float d2 = 0.5f * (q[3] * tz + tx * q[1] - ty * q[0]);
        float d3 = -0.5f * (tx * q[0] + ty * q[1] + tz * q[2]);
        for (int i = 0; i < 4; i++)
            real[i] += w * q[i];
        dual[0] += w * d0;
        dual[1] += w * d1;
        dual[2] += w * d2;
        dual[3] += w * d3;
    }
    float len2 = real[0] * real[0] + real[1] * real[1] + real[2] * real[2] + real[3] * real[3];
    if (!(len2 > 1e-20f)) {
        keep_rest(p, v->normal, out_p, out_n);
        return;
    }
    float s = 1.0f / sqrtf(len2);
    for (int i = 0; i < 4; i++) {
        real[i] *= s;
        dual[i] *= s;
    }
    /* Translation 2 dual real*: 2 (w_r d - w_d r + r x d). */
    float t[3] = {
        2.0f * (real[3] * dual[0] - dual[3] * real[0] + real[1] * dual[2] - real[2] * dual[1]),
        2.0f * (real[3] * dual[1] - dual[3] * real[1] + real[2] * dual[0] - real[0] * dual[2]),
        2.0f * (real[3] * dual[2] - dual[3] * real[2] + real[0] * dual[1] - real[1] * dual[0]),
    };
    float r[3];
    quat_rotate(real, p, r);
    for (int k = 0; k < 3; k++)
        out_p[k] = r[k] + t[k];
    if (out_n) {
        float n[3];
        quat_rotate(real, v->normal, n);
        v4 nv = {n[0], n[1], n[2], 0.0f};
        store_unit(out_n, nv, v->normal);
    }
}

/* ---- the loop ----------------------------------------------------------------------------------- */

void plush_anim_skin_vertices(const plush_pmx_model *model, const float (*skin)[16], const float (*offsets)[3],
                              size_t first, size_t count, float (*positions)[3], float (*normals)[3])
{
    if (!model || !positions || first >= model->vertex_count || model->summary_only) /* nothing to skin */
        return;
    if (count > model->vertex_count - first)
        count = model->vertex_count - first;
    const plush_pmx_vertex *vertices = model->vertices;
    const size_t bone_count = skin ? model->bone_count : 0;
    if (bone_count == 0) {
        /* No bone can move anything; the blends below may then assume a bone 0 to read. */
        for (size_t i = first; i < first + count; i++) {
            float p[3];
            for (int k = 0; k < 3; k++)
                p[k] = model->vertices[i].position[k] + (offsets ? offsets[i][k] : 0.0f);
            keep_rest(p, model->vertices[i].normal, positions[i], normals ? normals[i] : NULL);
        }
        return;
    }
    const size_t sdef_count = model->sdef_count;
    const plush_pmx_sdef *sdefs = model->sdefs;
    const size_t end = first + count;
    for (size_t i = first; i < end; i++) {
        const plush_pmx_vertex *v = &vertices[i];
        float p[3] = {v->position[0], v->position[1], v->position[2]};
        if (offsets) {
            p[0] += offsets[i][0];
            p[1] += offsets[i][1];
            p[2] += offsets[i][2];
        }
        float *out_n = normals ? normals[i] : NULL;
        switch (v->weight_type) {
        case PLUSH_PMX_BDEF1:
            skin_one(v, skin, bone_count, p, positions[i], out_n);
            break;
        case PLUSH_PMX_BDEF2:
            skin_linear(v, 2, skin, bone_count, p, positions[i], out_n);
            break;
        case PLUSH_PMX_SDEF:
            /* Both bones present and the SDEF record known; otherwise what is left is BDEF2. */
            if (v->sdef >= 0 && (size_t)v->sdef < sdef_count && bone_ok(v->bones[0], bone_count) &&
                bone_ok(v->bones[1], bone_count))
                skin_sdef(v, &sdefs[v->sdef], skin, p, positions[i], out_n);
            else
                skin_linear(v, 2, skin, bone_count, p, positions[i], out_n);
            break;
        case PLUSH_PMX_QDEF:
            skin_qdef(v, skin, bone_count, p, positions[i], out_n);
            break;
        default: /* BDEF4, and any type a built model invents: its four slots as stored */
            skin_linear(v, 4, skin, bone_count, p, positions[i], out_n);
            break;
        }
    }
}

/* The anim keeps every bone's skinning matrix current after each deform and physics hand-over, and its
 * vertex-morph offsets (NULL while no vertex morph is active, which skips the adds). */
void plush_anim_skin(const plush_anim *anim, size_t first, size_t count, float (*positions)[3],
                     float (*normals)[3])
{
    if (!anim)
        return;
    plush_anim_skin_vertices(anim->model, (const float(*)[16])anim->skin, plush_anim_vertex_offsets(anim), first,
                             count, positions, normals);
}
