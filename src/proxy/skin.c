/* Proxy skinning: one skin matrix per proxy triangle each frame, then the per-vertex blend.
 *
 * The per-vertex loop is the hot path (a million vertices per frame): it blends the four influences'
 * matrices (or dual quaternions) first and transforms once, instead of transforming four times.
 * Matrices are full 4x4 in 64-byte slots rather than 3x4 in 48 bytes: a gather then touches one cache
 * line, never two, the columns load aligned, and the slot is the matrix plush_proxy_skin_matrix
 * returns. Triangle i sits in slot i + 1: slot 0 stays zero, so an unused influence (-1, weight 0)
 * reads slot 0 and adds nothing without a branch.
 *
 * Every loop is compiled twice from the same source: for any CPU (four-wide, SSE2 on x86-64) and for
 * AVX2 (eight-wide: two columns per register), picked once at create. Without FMA contraction and with
 * the sums associated alike, both give the same results, so a model skins the same on every machine. */
#include "core/common.h"
#include "proxy/skin_internal.h"
#include "plush/sys/core.h"
#include "plush/sys/proxy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if !defined(__GNUC__)
#error "src/proxy/skin.c needs GCC or Clang vector extensions"
#endif

/* Four floats in one SSE/NEON register; GCC and Clang lower the arithmetic to the target's SIMD. Eight
 * floats only inside functions built for AVX2: without it GCC splits them badly. */
typedef float v4 __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));
typedef float v8 __attribute__((vector_size(32)));

#if defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define SHUFFLE4(a, b, i, j, k, l) __builtin_shufflevector(a, b, i, j, k, l)
#endif
#endif
#ifndef SHUFFLE4
#define SHUFFLE4(a, b, i, j, k, l) __builtin_shuffle(a, b, (v4i){i, j, k, l})
#endif

#if defined(__x86_64__) || defined(__i386__)
#define HAVE_AVX2_PATH 1
#endif

#define HOT static inline __attribute__((always_inline))

typedef void (*skin_fn)(const plush_proxy_skin *skin, float (*pos)[3], float (*nrm)[3], size_t from, size_t to);
static void pick_kernels(plush_proxy_skin *skin);

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
    plush_proxy_patch *patch;  /* patch frames, or NULL for each triangle's own */
    skin_fn kernels[2][2]; /* [normals][proxy_share] for this kind and CPU */
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
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "skin", -1, "unknown blend mode %d", (int)opt->blend);
    /* Blending the rotations of stretched frames as dual quaternions and their stretch linearly would
     * not be exact for any motion; refusing is clearer than quietly blending linearly. */
    if (opt->stretch && opt->blend == PLUSH_PROXY_BLEND_DUAL_QUATERNION)
        return plush_diag_fail(diag, PLUSH_E_CONFLICT, -1, "skin", -1,
                               "stretch-aware frames blend linearly, not as dual quaternions");
    if (opt->stretch && (opt->patch.rings > 0 || opt->patch.reach > 0))
        return plush_diag_fail(diag, PLUSH_E_CONFLICT, -1, "skin", -1,
                               "stretch-aware frames are each triangle's own, not patch frames");
    plush_status st = plush__proxy_patch_shape_check(opt->patch, "skin", diag);
    if (st != PLUSH_OK)
        return st;
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
    pick_kernels(skin);
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
        skin->usable[i] = plush__proxy_rest_build(rest->nodes[t[0]], rest->nodes[t[1]], rest->nodes[t[2]], &skin->rest[i]);
        if (!skin->usable[i] && degenerate++ == 0)
            first = i;
        set_identity(skin->matrices + SLOT_FLOATS * (i + 1), skin->dual ? skin->dual + DUAL_FLOATS * (i + 1) : NULL);
    }
    if (opt.patch.rings > 0 || opt.patch.reach > 0) {
        st = plush_proxy_patch_create(rest, opt.patch, &skin->patch, diag);
        if (st != PLUSH_OK) {
            plush_proxy_skin_destroy(skin);
            return st;
        }
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
    plush_proxy_patch_destroy(skin->patch);
    plush_arena_free(&skin->arena);
    free(skin);
}

const plush_proxy_patch *plush_proxy_skin_patch(const plush_proxy_skin *skin)
{
    return skin ? skin->patch : NULL;
}

const float *plush_proxy_skin_matrix(const plush_proxy_skin *skin, size_t triangle)
{
    if (!skin || triangle >= skin->triangle_count)
        return NULL;
    return skin->matrices + SLOT_FLOATS * (triangle + 1);
}

/* ---- each frame: matrices -------------------------------------------------------------------- */

/* Patch frames: the fitted motion as a matrix (and dual quaternion). */
static void update_patch(plush_proxy_skin *skin, const float (*nodes)[3])
{
    plush_proxy_patch_update(skin->patch, nodes);
    for (size_t i = 0; i < skin->triangle_count; i++) {
        if (!skin->usable[i])
            continue;
        double q[4], t[3];
        plush_proxy_patch_motion(skin->patch, i, q, t);
        float *m = skin->matrices + SLOT_FLOATS * (i + 1);
        plush__proxy_skin_from_motion(q, t, m, skin->dual ? skin->dual + DUAL_FLOATS * (i + 1) : NULL);
    }
}

void plush_proxy_skin_update(plush_proxy_skin *skin, const float (*nodes)[3])
{
    if (skin->patch) {
        update_patch(skin, nodes);
        return;
    }
    for (size_t i = 0; i < skin->triangle_count; i++) {
        if (!skin->usable[i])
            continue;
        const uint32_t *t = skin->triangles[i];
        proxy_frame now;
        /* A triangle collapsed by the simulation has no frame: keep the matrix it had. */
        if (!plush__proxy_frame_build(nodes[t[0]], nodes[t[1]], nodes[t[2]], &now))
            continue;
        float *m = skin->matrices + SLOT_FLOATS * (i + 1);
        if (skin->kind == KIND_STRETCH) {
            plush__proxy_skin_stretch(&skin->rest[i], &now, m);
        } else if (!skin->dual) {
            plush__proxy_skin_rigid(&skin->rest[i], &now, m, NULL);
        } else {
            /* q and -q are the same motion. Taking the one nearer last frame's keeps neighbouring
             * triangles, which all start at the identity, in one hemisphere, so the per-vertex sign
             * alignment in apply almost never has to flip anything. */
            float dq[DUAL_FLOATS], *last = skin->dual + DUAL_FLOATS * (i + 1);
            plush__proxy_skin_rigid(&skin->rest[i], &now, m, dq);
            float near = dq[0] * last[0] + dq[1] * last[1] + dq[2] * last[2] + dq[3] * last[3];
            for (int k = 0; k < DUAL_FLOATS; k++)
                last[k] = near < 0 ? -dq[k] : dq[k];
        }
    }
}

void plush_proxy_skin_translate(plush_proxy_skin *skin, const float (*offsets)[3])
{
    for (size_t i = 0; skin && offsets && i < skin->triangle_count; i++) {
        const float *d = offsets[i];
        if (!isfinite(d[0]) || !isfinite(d[1]) || !isfinite(d[2]) || (d[0] == 0 && d[1] == 0 && d[2] == 0))
            continue;
        float *m = skin->matrices + SLOT_FLOATS * (i + 1);
        for (int k = 0; k < 3; k++)
            m[12 + k] += d[k];
        if (skin->dual) {
            /* (r, e) with e = t r / 2: moving by d adds (d, 0) r / 2 to the dual part */
            float *q = skin->dual + DUAL_FLOATS * (i + 1), x = q[0], y = q[1], z = q[2], w = q[3];
            q[4] += 0.5f * (d[0] * w + d[1] * z - d[2] * y);
            q[5] += 0.5f * (-d[0] * z + d[1] * w + d[2] * x);
            q[6] += 0.5f * (d[0] * y - d[1] * x + d[2] * w);
            q[7] += 0.5f * (-d[0] * x - d[1] * y - d[2] * z);
        }
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

/* Through a pointer: an eight-wide value passed or returned by a function not built for AVX warns
 * about the ABI, even when inlined. */
HOT void load8(v8 *v, const float *p)
{
    memcpy(v, p, sizeof *v);
}

HOT float dot4(v4 a, v4 b)
{
    v4 m = a * b;
    return (m[0] + m[1]) + (m[2] + m[3]);
}

/* (sum of a, sum of b, sum of c, sum of d) by a transpose: four dot products for the price of one. */
HOT v4 sums4(v4 a, v4 b, v4 c, v4 d)
{
    v4 ab = SHUFFLE4(a, b, 0, 4, 1, 5) + SHUFFLE4(a, b, 2, 6, 3, 7);
    v4 cd = SHUFFLE4(c, d, 0, 4, 1, 5) + SHUFFLE4(c, d, 2, 6, 3, 7);
    return SHUFFLE4(ab, cd, 0, 1, 4, 5) + SHUFFLE4(ab, cd, 2, 3, 6, 7);
}

/* Lane 3 of the result is zero whatever a and b hold there. */
HOT v4 cross(v4 a, v4 b)
{
    return SHUFFLE4(a, a, 1, 2, 0, 3) * SHUFFLE4(b, b, 2, 0, 1, 3) -
           SHUFFLE4(a, a, 2, 0, 1, 3) * SHUFFLE4(b, b, 1, 2, 0, 3);
}

/* Lane 3 of a normal is zero on every path, so a four-lane dot is its length squared. A zero normal
 * stays zero instead of becoming NaN. */
HOT v4 normalize(v4 n, float sign)
{
    float len2 = dot4(n, n);
    float inv = len2 > 0 ? sign / sqrtf(len2) : 0.0f;
    return n * inv;
}

HOT const float *slot(const float *table, size_t floats, int32_t triangle)
{
    return table + floats * (size_t)(triangle + 1);
}

/* Normals through the inverse transpose of the blended gradient A = [a0 a1 a2]. Its columns are those
 * of the cofactor matrix (a1 x a2, a2 x a0, a0 x a1) over det A; the division is left to normalisation,
 * which takes the sign of det A so an inverted blend still points the normal the right way. */
HOT v4 cofactor_normal(v4 a0, v4 a1, v4 a2, const float n[3])
{
    v4 c0 = cross(a1, a2);
    v4 r = c0 * n[0] + cross(a2, a0) * n[1] + cross(a0, a1) * n[2];
    return normalize(r, dot4(a0, c0) < 0 ? -1.0f : 1.0f);
}

/* Blends the four influences' matrices column by column, then transforms once: 16 multiply-adds of
 * four lanes (8 of eight lanes when wide) and one transform, instead of four transforms. The sums are
 * associated as the eight-wide path must, p = (c0 x + c2 z) + (c1 y + c3), so both paths give the
 * same bits. */
HOT void skin_matrix_vertex(const float *table, const int32_t t[4], const float w[4], const float rp[3],
                            const float *rn, int kind, bool wide, v4 *p, v4 *n)
{
    const float *a = slot(table, SLOT_FLOATS, t[0]), *b = slot(table, SLOT_FLOATS, t[1]);
    const float *c = slot(table, SLOT_FLOATS, t[2]), *d = slot(table, SLOT_FLOATS, t[3]);
    float x = rp[0], y = rp[1], z = rp[2];
    v4 c0, c1, c2;
    if (wide) {
        v8 ma, mb, mc, md, c01, c23, s;
        load8(&ma, a), load8(&mb, b), load8(&mc, c), load8(&md, d);
        c01 = ma * w[0] + mb * w[1] + mc * w[2] + md * w[3];
        load8(&ma, a + 8), load8(&mb, b + 8), load8(&mc, c + 8), load8(&md, d + 8);
        c23 = ma * w[0] + mb * w[1] + mc * w[2] + md * w[3];
        s = c01 * (v8){x, x, x, x, y, y, y, y} + c23 * (v8){z, z, z, z, 1, 1, 1, 1};
        v4 half[2];
        memcpy(half, &s, sizeof half);
        *p = half[0] + half[1];
        if (rn && kind == KIND_LINEAR) {
            s = c01 * (v8){rn[0], rn[0], rn[0], rn[0], rn[1], rn[1], rn[1], rn[1]} +
                c23 * (v8){rn[2], rn[2], rn[2], rn[2], 0, 0, 0, 0};
            memcpy(half, &s, sizeof half);
            *n = normalize(half[0] + half[1], 1.0f);
            return;
        }
        memcpy(half, &c01, sizeof half);
        c0 = half[0];
        c1 = half[1];
        memcpy(half, &c23, sizeof half);
        c2 = half[0];
    } else {
#define BLEND_COLUMN(k) \
    (load4(a + 4 * (k)) * w[0] + load4(b + 4 * (k)) * w[1] + load4(c + 4 * (k)) * w[2] + load4(d + 4 * (k)) * w[3])
        c0 = BLEND_COLUMN(0);
        c1 = BLEND_COLUMN(1);
        c2 = BLEND_COLUMN(2);
        *p = (c0 * x + c2 * z) + (c1 * y + BLEND_COLUMN(3));
#undef BLEND_COLUMN
        if (rn && kind == KIND_LINEAR)
            *n = normalize((c0 * rn[0] + c2 * rn[2]) + c1 * rn[1], 1.0f);
    }
    if (rn && kind == KIND_STRETCH)
        *n = cofactor_normal(c0, c1, c2, rn);
}

/* Dual-quaternion blending (Kavan et al. 2008): every influence takes the sign that puts it in the
 * first influence's hemisphere, so the blend does not take the long way round; the sum is normalised
 * by its real part and turned into a matrix. For a blend (u, w; d) with |(u, w)|^2 = L, column k of the
 * rotation is ((w^2 - u.u) e_k + 2 u_k u + 2w (u x e_k)) / L and the translation is
 * 2 (w d_u - d_w u + u x d_u) / L: one division and no square root, and normals, renormalised
 * anyway, skip even that. */
HOT void skin_dual_vertex(const float *table, const int32_t t[4], const float w[4], const float rp[3],
                          const float *rn, v4 *p, v4 *n)
{
    const float *q[4] = {slot(table, DUAL_FLOATS, t[0]), slot(table, DUAL_FLOATS, t[1]),
                         slot(table, DUAL_FLOATS, t[2]), slot(table, DUAL_FLOATS, t[3])};
    v4 r0 = load4(q[0]), r1 = load4(q[1]), r2 = load4(q[2]), r3 = load4(q[3]);
    const v4i sign_bit = {INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN};
    v4i flip = (v4i)(sums4(r0 * r0, r1 * r0, r2 * r0, r3 * r0) < (v4){0}) & sign_bit;
    v4 sw = load4(w);
    /* A branch, not a select: predicted not taken (see update), it takes the dot products off the
     * path from the loads to the blend. */
    if (__builtin_expect((flip[1] | flip[2] | flip[3]) != 0, 0))
        sw = (v4)((v4i)sw ^ flip);
    v4 real = r0 * sw[0] + r1 * sw[1] + r2 * sw[2] + r3 * sw[3];
    v4 dual = load4(q[0] + 4) * sw[0] + load4(q[1] + 4) * sw[1] + load4(q[2] + 4) * sw[2] +
              load4(q[3] + 4) * sw[3];
    const v4 zero = {0};
    v4 u = SHUFFLE4(real, zero, 0, 1, 2, 4), twice = u * 2.0f;
    float qw = real[3], uu = dot4(u, u), w2 = 2.0f * qw, diag = qw * qw - uu, len2 = qw * qw + uu;
    v4 c0 = u * twice[0] + SHUFFLE4(u, zero, 4, 2, 1, 4) * ((v4){1, 1, -1, 0} * w2) + (v4){1, 0, 0, 0} * diag;
    v4 c1 = u * twice[1] + SHUFFLE4(u, zero, 2, 4, 0, 4) * ((v4){-1, 1, 1, 0} * w2) + (v4){0, 1, 0, 0} * diag;
    v4 c2 = u * twice[2] + SHUFFLE4(u, zero, 1, 0, 4, 4) * ((v4){1, -1, 1, 0} * w2) + (v4){0, 0, 1, 0} * diag;
    v4 move = (dual * qw - u * dual[3] + cross(u, dual)) * 2.0f;
    float inv = len2 > 0 ? 1.0f / len2 : 0.0f;
    *p = ((c0 * rp[0] + c2 * rp[2]) + (c1 * rp[1] + move)) * inv;
    if (rn)
        *n = normalize((c0 * rn[0] + c2 * rn[2]) + c1 * rn[1], 1.0f);
}

/* kind, normals, shared and wide are constants at every call, so each combination compiles to its own
 * loop without per-vertex mode tests. The s tests branch, but s is 1 on long runs of vertices. */
HOT void skin_loop(const plush_proxy_skin *skin, float (*restrict pos)[3], float (*restrict nrm)[3], size_t from,
                   size_t to, int kind, bool normals, bool shared, bool wide)
{
    const plush_proxy_binding *b = skin->binding;
    /* The binding's arrays are not const-qualified (C11 cannot add const to a pointer to array). */
    int32_t(*restrict tri)[PLUSH_PROXY_INFLUENCES] = b->triangles;
    float(*restrict wt)[PLUSH_PROXY_INFLUENCES] = b->weights;
    const float *restrict share = b->proxy_share;
    const float(*restrict rp)[3] = skin->rest_positions;
    const float(*restrict rn)[3] = skin->rest_normals;
    const float *restrict table = kind == KIND_DUAL ? skin->dual : skin->matrices;
    for (size_t v = from; v < to; v++) {
        float s = shared ? share[v] : 1.0f;
        if (shared && !(s > 0))
            continue; /* stays on bone skinning, untouched */
        v4 p, n = {0};
        if (kind == KIND_DUAL)
            skin_dual_vertex(table, tri[v], wt[v], rp[v], normals ? rn[v] : NULL, &p, &n);
        else
            skin_matrix_vertex(table, tri[v], wt[v], rp[v], normals ? rn[v] : NULL, kind, wide, &p, &n);
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

/* One function per kind x normals x proxy_share, once for any CPU and once for AVX2. */
#define SKIN_VARIANT(name, attr, kind, normals, shared, wide)                \
    attr static void name(const plush_proxy_skin *skin, float (*pos)[3], float (*nrm)[3], size_t from, \
                          size_t to)                                         \
    {                                                                        \
        skin_loop(skin, pos, nrm, from, to, kind, normals, shared, wide);    \
    }
#define SKIN_KIND(name, attr, kind, wide)                        \
    SKIN_VARIANT(name##_p, attr, kind, false, false, wide)       \
    SKIN_VARIANT(name##_ps, attr, kind, false, true, wide)       \
    SKIN_VARIANT(name##_pn, attr, kind, true, false, wide)       \
    SKIN_VARIANT(name##_pns, attr, kind, true, true, wide)
#define SKIN_TABLE(name, attr, wide)                                                                  \
    SKIN_KIND(name##_linear, attr, KIND_LINEAR, wide)                                                 \
    SKIN_KIND(name##_stretch, attr, KIND_STRETCH, wide)                                               \
    SKIN_KIND(name##_dual, attr, KIND_DUAL, wide)                                                     \
    static const skin_fn name##_kernels[3][2][2] = {                                                  \
        [KIND_LINEAR] = {{name##_linear_p, name##_linear_ps}, {name##_linear_pn, name##_linear_pns}},    \
        [KIND_STRETCH] = {{name##_stretch_p, name##_stretch_ps}, {name##_stretch_pn, name##_stretch_pns}}, \
        [KIND_DUAL] = {{name##_dual_p, name##_dual_ps}, {name##_dual_pn, name##_dual_pns}},               \
    };

SKIN_TABLE(portable, , false)
#ifdef HAVE_AVX2_PATH
SKIN_TABLE(avx2, __attribute__((target("avx2"))), true)
#endif

static void pick_kernels(plush_proxy_skin *skin)
{
    const skin_fn(*table)[2][2] = portable_kernels;
#ifdef HAVE_AVX2_PATH
    if (__builtin_cpu_supports("avx2"))
        table = avx2_kernels;
#endif
    memcpy(skin->kernels, table[skin->kind], sizeof skin->kernels);
}

/* Vertices skinned on two threads from this many: below, a second thread costs more than it saves. */
enum { TWO_THREADS_FROM = 8192 };

typedef struct skin_job {
    const plush_proxy_skin *skin;
    skin_fn fn;
    float (*positions)[3], (*normals)[3];
} skin_job;

static void skin_part(void *ctx, size_t from, size_t to)
{
    const skin_job *j = ctx;
    j->fn(j->skin, j->positions, j->normals, from, to);
}

static void apply_with(const plush_proxy_skin *skin, skin_fn const kernels[2][2], float (*positions)[3],
                       float (*normals)[3])
{
    bool with_normals = normals && skin->rest_normals;
    bool shared = skin->binding->proxy_share != NULL;
    skin_job job = {skin, kernels[with_normals][shared], positions, with_normals ? normals : NULL};
    plush__two_halves(skin_part, &job, skin->binding->vertex_count, TWO_THREADS_FROM);
}

void plush_proxy_skin_apply(const plush_proxy_skin *skin, float (*positions)[3], float (*normals)[3])
{
    apply_with(skin, skin->kernels, positions, normals);
}

void plush__proxy_skin_apply_portable(const plush_proxy_skin *skin, float (*positions)[3], float (*normals)[3])
{
    apply_with(skin, portable_kernels[skin->kind], positions, normals);
}
