/* Proxy skinning: one skin matrix per proxy triangle each frame, then the per-vertex blend.
 *
 * The per-vertex loop is the hot path (a million vertices per frame): it blends the four influences'
 * matrices column by column and transforms once, so a vertex costs 16 four-wide multiply-adds plus one
 * transform whatever the mode. Matrices live in 64-byte slots, one cache line each, and triangle i sits
 * in slot i + 1: slot 0 stays zero, so an unused influence (-1, weight 0) reads slot 0 and adds nothing
 * without a branch. The slots are also the 4x4 column-major matrices plush_proxy_skin_matrix returns. */
#include "proxy/skin_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if !defined(__GNUC__)
#error "src/proxy/skin.c needs GCC or Clang vector extensions"
#endif

/* Four floats in one SSE/NEON register; GCC and Clang lower the arithmetic to the target's SIMD. */
typedef float v4 __attribute__((vector_size(16)));

#define HOT static inline __attribute__((always_inline))

enum { SLOT_FLOATS = 16, DUAL_FLOATS = 8, SLOT_ALIGN = 64 };
enum { KIND_LINEAR, KIND_STRETCH, KIND_DUAL };

struct plush_proxy_skin {
    const plush_proxy_binding *binding;
    const float (*rest_positions)[3];
    const float (*rest_normals)[3];
    const uint32_t (*triangles)[3];
    size_t triangle_count;
    int kind;
    float *matrices;   /* (triangle_count + 1) slots of SLOT_FLOATS */
    float *dual;       /* (triangle_count + 1) dual quaternions, KIND_DUAL only */
    proxy_rest *rest;
    bool *usable;      /* not degenerate at rest */
    plush_arena arena;
};

/* ---- set-up ---------------------------------------------------------------------------------- */

static void *alloc_aligned(plush_arena *arena, size_t count, size_t size)
{
    if (size && count > (SIZE_MAX - SLOT_ALIGN) / size)
        return NULL;
    unsigned char *p = plush_arena_alloc(arena, count * size + SLOT_ALIGN);
    if (!p)
        return NULL;
    return p + (SLOT_ALIGN - (uintptr_t)p % SLOT_ALIGN) % SLOT_ALIGN;
}

static plush_status check_inputs(const plush_proxy_mesh *rest, const plush_proxy_binding *binding,
                                 const float (*rest_positions)[3], const plush_proxy_skin_options *opt,
                                 plush_diag *diag)
{
    if (opt->blend != PLUSH_PROXY_BLEND_LINEAR && opt->blend != PLUSH_PROXY_BLEND_DUAL_QUATERNION)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "skin", -1, "unknown blend mode %d", opt->blend);
    /* Blending the rotations of stretched frames as dual quaternions and their stretch linearly would
     * not be exact for any motion; refusing is clearer than quietly blending linearly. */
    if (opt->stretch && opt->blend == PLUSH_PROXY_BLEND_DUAL_QUATERNION)
        return plush_diag_fail(diag, PLUSH_E_UNSUPPORTED, -1, "skin", -1,
                               "stretch-aware frames blend linearly, not as dual quaternions");
    if (binding->triangle_count != rest->triangle_count)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "skin", -1,
                               "binding made for %zu proxy triangles, proxy has %zu", binding->triangle_count,
                               rest->triangle_count);
    if (rest->triangle_count > (size_t)INT32_MAX - 1)
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "skin", -1, "%zu proxy triangles is too many",
                               rest->triangle_count);
    if (rest->triangle_count && (!rest->triangles || !rest->nodes))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "skin", -1, "proxy without nodes or triangles");
    if (binding->vertex_count && (!binding->triangles || !binding->weights || !rest_positions))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "skin", -1, "binding or rest positions missing");
    for (size_t i = 0; i < rest->triangle_count; i++)
        for (int k = 0; k < 3; k++)
            if (rest->triangles[i][k] >= rest->node_count)
                return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "proxy triangle", (int64_t)i,
                                       "node %u out of range (%zu nodes)", rest->triangles[i][k],
                                       rest->node_count);
    /* The hot loop indexes matrices with these without a check. */
    int32_t count = (int32_t)rest->triangle_count;
    for (size_t v = 0; v < binding->vertex_count; v++)
        for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++) {
            int32_t t = binding->triangles[v][k];
            if (t < -1 || t >= count)
                return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "binding", (int64_t)v,
                                       "triangle %d out of range (%d triangles)", (int)t, (int)count);
        }
    return PLUSH_OK;
}

static void set_identity(float *m, float *dq)
{
    memset(m, 0, SLOT_FLOATS * sizeof *m);
    m[0] = m[5] = m[10] = m[15] = 1.0f;
    if (dq) {
        memset(dq, 0, DUAL_FLOATS * sizeof *dq);
        dq[3] = 1.0f;
    }
}

plush_status plush_proxy_skin_create(const plush_proxy_mesh *rest, const plush_proxy_binding *binding,
                                     const float (*rest_positions)[3], const float (*rest_normals)[3],
                                     const plush_proxy_skin_options *options, plush_proxy_skin **out,
                                     plush_diag *diag)
{
    if (out)
        *out = NULL;
    if (!rest || !binding || !out)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "skin", -1, "missing proxy, binding or output");
    plush_proxy_skin_options opt = options ? *options : (plush_proxy_skin_options){0};
    plush_status st = check_inputs(rest, binding, rest_positions, &opt, diag);
    if (st != PLUSH_OK)
        return st;

    plush_proxy_skin *skin = calloc(1, sizeof *skin);
    if (!skin)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "skin", -1, "out of memory");
    size_t n = rest->triangle_count;
    skin->binding = binding;
    skin->rest_positions = rest_positions;
    skin->rest_normals = rest_normals;
    skin->triangles = rest->triangles;
    skin->triangle_count = n;
    skin->kind = opt.stretch ? KIND_STRETCH
                 : opt.blend == PLUSH_PROXY_BLEND_DUAL_QUATERNION ? KIND_DUAL : KIND_LINEAR;
    skin->arena.block_size = 1u << 20;
    skin->matrices = alloc_aligned(&skin->arena, n + 1, SLOT_FLOATS * sizeof(float));
    skin->rest = plush_arena_array(&skin->arena, n ? n : 1, sizeof *skin->rest);
    skin->usable = plush_arena_array(&skin->arena, n ? n : 1, sizeof *skin->usable);
    if (skin->kind == KIND_DUAL)
        skin->dual = alloc_aligned(&skin->arena, n + 1, DUAL_FLOATS * sizeof(float));
    if (!skin->matrices || !skin->rest || !skin->usable || (skin->kind == KIND_DUAL && !skin->dual)) {
        plush_proxy_skin_destroy(skin);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "skin", -1, "out of memory for %zu triangles", n);
    }

    /* Until the first update, and for good on triangles degenerate at rest (which have no rest frame to
     * invert), S_i is the identity: vertices bound to those follow them at their rest position. */
    size_t degenerate = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        const uint32_t *t = rest->triangles[i];
        skin->usable[i] = proxy_rest_build(rest->nodes[t[0]], rest->nodes[t[1]], rest->nodes[t[2]], &skin->rest[i]);
        if (!skin->usable[i] && degenerate++ == 0)
            first = i;
        set_identity(skin->matrices + SLOT_FLOATS * (i + 1), skin->dual ? skin->dual + DUAL_FLOATS * (i + 1) : NULL);
    }
    if (degenerate)
        plush_diag_warn(diag, -1, "proxy triangle", (int64_t)first,
                        "%zu proxy triangles are degenerate at rest; their skin matrices stay the identity",
                        degenerate);
    *out = skin;
    return PLUSH_OK;
}

void plush_proxy_skin_destroy(plush_proxy_skin *skin)
{
    if (!skin)
        return;
    plush_arena_free(&skin->arena);
    free(skin);
}

const float *plush_proxy_skin_matrix(const plush_proxy_skin *skin, size_t triangle)
{
    if (!skin || triangle >= skin->triangle_count)
        return NULL;
    return skin->matrices + SLOT_FLOATS * (triangle + 1);
}

/* ---- each frame: matrices -------------------------------------------------------------------- */

void plush_proxy_skin_update(plush_proxy_skin *skin, const float (*nodes)[3])
{
    for (size_t i = 0; i < skin->triangle_count; i++) {
        if (!skin->usable[i])
            continue;
        const uint32_t *t = skin->triangles[i];
        proxy_frame now;
        /* A triangle collapsed by the simulation has no frame: keep the matrix it had. */
        if (!proxy_frame_build(nodes[t[0]], nodes[t[1]], nodes[t[2]], &now))
            continue;
        float *m = skin->matrices + SLOT_FLOATS * (i + 1);
        if (skin->kind == KIND_STRETCH)
            proxy_skin_stretch(&skin->rest[i], &now, m);
        else
            proxy_skin_rigid(&skin->rest[i], &now, m, skin->dual ? skin->dual + DUAL_FLOATS * (i + 1) : NULL);
    }
}

/* ---- each frame: vertices (the hot loop) ----------------------------------------------------- */

HOT v4 load4(const float *p)
{
    v4 v;
    memcpy(&v, p, sizeof v);
    return v;
}

HOT v4 load3(const float p[3])
{
    return (v4){p[0], p[1], p[2], 0.0f};
}

HOT void store3(float p[3], v4 v)
{
    p[0] = v[0];
    p[1] = v[1];
    p[2] = v[2];
}

HOT float dot4(v4 a, v4 b)
{
    v4 m = a * b;
    return (m[0] + m[1]) + (m[2] + m[3]);
}

/* Lane 3 of a normal is zero on every path, so a four-lane dot is its length squared. A zero normal
 * stays zero instead of becoming NaN. */
HOT v4 normalize(v4 n, float sign)
{
    float len2 = dot4(n, n);
    float inv = len2 > 0 ? sign / sqrtf(len2) : 0.0f;
    return n * inv;
}

HOT void blend_matrices(const float *slots, const int32_t t[4], const float w[4], v4 col[4])
{
    const float *a = slots + SLOT_FLOATS * (size_t)(t[0] + 1);
    const float *b = slots + SLOT_FLOATS * (size_t)(t[1] + 1);
    const float *c = slots + SLOT_FLOATS * (size_t)(t[2] + 1);
    const float *d = slots + SLOT_FLOATS * (size_t)(t[3] + 1);
    for (int k = 0; k < 4; k++)
        col[k] = load4(a + 4 * k) * w[0] + load4(b + 4 * k) * w[1] + load4(c + 4 * k) * w[2] +
                 load4(d + 4 * k) * w[3];
}

/* Dual-quaternion blending (Kavan et al. 2008): every influence takes the sign that puts it in the
 * first influence's hemisphere, so the blend does not take the long way round; the sum is normalised
 * by its real part and turned into a matrix for the shared transform. */
HOT void blend_dual(const float *dual, const int32_t t[4], const float w[4], v4 col[4])
{
    v4 real = {0}, dpart = {0}, first = load4(dual + DUAL_FLOATS * (size_t)(t[0] + 1));
    for (int k = 0; k < 4; k++) {
        const float *q = dual + DUAL_FLOATS * (size_t)(t[k] + 1);
        v4 r = load4(q);
        float wk = dot4(r, first) < 0 ? -w[k] : w[k];
        real += r * wk;
        dpart += load4(q + 4) * wk;
    }
    float len2 = dot4(real, real);
    float inv = len2 > 0 ? 1.0f / sqrtf(len2) : 0.0f;
    real *= inv;
    dpart *= inv;
    float x = real[0], y = real[1], z = real[2], qw = real[3];
    float dx = dpart[0], dy = dpart[1], dz = dpart[2], dw = dpart[3];
    col[0] = (v4){1 - 2 * (y * y + z * z), 2 * (x * y + qw * z), 2 * (x * z - qw * y), 0};
    col[1] = (v4){2 * (x * y - qw * z), 1 - 2 * (x * x + z * z), 2 * (y * z + qw * x), 0};
    col[2] = (v4){2 * (x * z + qw * y), 2 * (y * z - qw * x), 1 - 2 * (x * x + y * y), 0};
    /* Translation 2 (w_r v_d - w_d v_r + v_r x v_d). */
    col[3] = (v4){2 * (qw * dx - dw * x + y * dz - z * dy), 2 * (qw * dy - dw * y + z * dx - x * dz),
                  2 * (qw * dz - dw * z + x * dy - y * dx), 1};
}

/* Normals go through the inverse transpose of the blended gradient A. Its columns are those of the
 * cofactor matrix (a1 x a2, a2 x a0, a0 x a1) over det A; the division is left to normalisation, which
 * takes the sign of det A so an inverted blend still points the normal the right way. */
HOT v4 cofactor_normal(const v4 col[4], const float n[3], float *sign)
{
    float a0x = col[0][0], a0y = col[0][1], a0z = col[0][2];
    float a1x = col[1][0], a1y = col[1][1], a1z = col[1][2];
    float a2x = col[2][0], a2y = col[2][1], a2z = col[2][2];
    v4 c0 = {a1y * a2z - a1z * a2y, a1z * a2x - a1x * a2z, a1x * a2y - a1y * a2x, 0};
    v4 c1 = {a2y * a0z - a2z * a0y, a2z * a0x - a2x * a0z, a2x * a0y - a2y * a0x, 0};
    v4 c2 = {a0y * a1z - a0z * a1y, a0z * a1x - a0x * a1z, a0x * a1y - a0y * a1x, 0};
    *sign = a0x * c0[0] + a0y * c0[1] + a0z * c0[2] < 0 ? -1.0f : 1.0f;
    return c0 * n[0] + c1 * n[1] + c2 * n[2];
}

/* kind, normals and shared are constants at every call, so each combination compiles to its own loop
 * without per-vertex mode tests. The s tests branch, but s is 1 on long runs of vertices. */
HOT void skin_loop(const plush_proxy_skin *skin, float (*restrict pos)[3], float (*restrict nrm)[3], int kind,
                   bool normals, bool shared)
{
    const plush_proxy_binding *b = skin->binding;
    /* The binding's arrays are not const-qualified (C11 cannot add const to a pointer to array). */
    int32_t(*restrict tri)[PLUSH_PROXY_INFLUENCES] = b->triangles;
    float(*restrict wt)[PLUSH_PROXY_INFLUENCES] = b->weights;
    const float *restrict share = b->proxy_share;
    const float(*restrict rp)[3] = skin->rest_positions;
    const float(*restrict rn)[3] = skin->rest_normals;
    const float *restrict table = kind == KIND_DUAL ? skin->dual : skin->matrices;
    size_t count = b->vertex_count;
    for (size_t v = 0; v < count; v++) {
        float s = shared ? share[v] : 1.0f;
        if (shared && !(s > 0))
            continue; /* stays on bone skinning, untouched */
        v4 col[4];
        if (kind == KIND_DUAL)
            blend_dual(table, tri[v], wt[v], col);
        else
            blend_matrices(table, tri[v], wt[v], col);
        v4 p = col[0] * rp[v][0] + col[1] * rp[v][1] + col[2] * rp[v][2] + col[3];
        v4 n = {0};
        if (normals) {
            float sign = 1.0f;
            if (kind == KIND_STRETCH)
                n = cofactor_normal(col, rn[v], &sign);
            else
                n = col[0] * rn[v][0] + col[1] * rn[v][1] + col[2] * rn[v][2];
            n = normalize(n, sign);
        }
        if (shared && s < 1) {
            p = p * s + load3(pos[v]) * (1 - s);
            if (normals)
                n = normalize(n * s + load3(nrm[v]) * (1 - s), 1.0f);
        }
        store3(pos[v], p);
        if (normals)
            store3(nrm[v], n);
    }
}

#define SKIN_VARIANT(name, kind, normals, shared)                                            \
    static void name(const plush_proxy_skin *skin, float (*pos)[3], float (*nrm)[3]) \
    {                                                                                        \
        skin_loop(skin, pos, nrm, kind, normals, shared);                                    \
    }
SKIN_VARIANT(skin_linear, KIND_LINEAR, false, false)
SKIN_VARIANT(skin_linear_n, KIND_LINEAR, true, false)
SKIN_VARIANT(skin_linear_s, KIND_LINEAR, false, true)
SKIN_VARIANT(skin_linear_ns, KIND_LINEAR, true, true)
SKIN_VARIANT(skin_stretch, KIND_STRETCH, false, false)
SKIN_VARIANT(skin_stretch_n, KIND_STRETCH, true, false)
SKIN_VARIANT(skin_stretch_s, KIND_STRETCH, false, true)
SKIN_VARIANT(skin_stretch_ns, KIND_STRETCH, true, true)
SKIN_VARIANT(skin_dual, KIND_DUAL, false, false)
SKIN_VARIANT(skin_dual_n, KIND_DUAL, true, false)
SKIN_VARIANT(skin_dual_s, KIND_DUAL, false, true)
SKIN_VARIANT(skin_dual_ns, KIND_DUAL, true, true)

typedef void (*skin_fn)(const plush_proxy_skin *, float (*)[3], float (*)[3]);

void plush_proxy_skin_apply(const plush_proxy_skin *skin, float (*positions)[3], float (*normals)[3])
{
    static const skin_fn variants[3][2][2] = {
        [KIND_LINEAR] = {{skin_linear, skin_linear_s}, {skin_linear_n, skin_linear_ns}},
        [KIND_STRETCH] = {{skin_stretch, skin_stretch_s}, {skin_stretch_n, skin_stretch_ns}},
        [KIND_DUAL] = {{skin_dual, skin_dual_s}, {skin_dual_n, skin_dual_ns}},
    };
    bool with_normals = normals && skin->rest_normals;
    bool shared = skin->binding->proxy_share != NULL;
    variants[skin->kind][with_normals][shared](skin, positions, with_normals ? normals : NULL);
}
