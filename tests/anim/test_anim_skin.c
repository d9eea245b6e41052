/* Vertex skinning (plush_anim_skin_vertices): every weight type against values worked out by hand, SDEF
 * against BDEF2 at a bent joint and under pure translations, QDEF against BDEF4 on a twisted cylinder,
 * unit normals, vertices no bone moves, morph offsets and the vertex range. Models are built in code; the
 * skinning matrices are given directly, so these tests do not depend on the bone pipeline. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/anim.h"
#include "plush/sys/anim.h"
#include "support/pmx_fixture.h"
#include "support/shared_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PI_F 3.14159265358979f

/* ---- matrices (column-major, M v) -------------------------------------------------------------- */

static void mat_identity(float m[16])
{
    memset(m, 0, 16 * sizeof *m);
    m[0] = m[5] = m[10] = m[15] = 1.0f;
}

/* Rotation by angle about the unit axis through pivot, then a translation by move. */
static void mat_rigid(float m[16], const float axis[3], float angle, const float pivot[3], const float move[3])
{
    float c = cosf(angle), s = sinf(angle), t = 1.0f - c;
    float x = axis[0], y = axis[1], z = axis[2];
    float r[3][3] = {{t * x * x + c, t * x * y - s * z, t * x * z + s * y},
                     {t * x * y + s * z, t * y * y + c, t * y * z - s * x},
                     {t * x * z - s * y, t * y * z + s * x, t * z * z + c}};
    mat_identity(m);
    for (int row = 0; row < 3; row++) {
        for (int col = 0; col < 3; col++)
            m[col * 4 + row] = r[row][col];
        /* p' = R (p - pivot) + pivot + move */
        m[12 + row] = pivot[row] + move[row] - (r[row][0] * pivot[0] + r[row][1] * pivot[1] + r[row][2] * pivot[2]);
    }
}

static void mat_apply(const float m[16], const float p[3], float out[3])
{
    for (int r = 0; r < 3; r++)
        out[r] = m[r] * p[0] + m[4 + r] * p[1] + m[8 + r] * p[2] + m[12 + r];
}

static void expect_vec(const float got[3], float x, float y, float z, double tol)
{
    assert_float_equal(got[0], x, tol);
    assert_float_equal(got[1], y, tol);
    assert_float_equal(got[2], z, tol);
}

static float rnd(float lo, float hi)
{
    return lo + (hi - lo) * (float)rand() / (float)RAND_MAX;
}

static const float AXIS_X[3] = {1, 0, 0}, AXIS_Y[3] = {0, 1, 0}, AXIS_Z[3] = {0, 0, 1}, ZERO[3] = {0, 0, 0};

/* A model of n vertices (BDEF1 on bone 0, unit normal +Y) and bones bones. */
static plush_pmx_model *model_with(size_t n, size_t bones)
{
    plush_pmx_model *m = plush_pmx_create();
    assert_non_null(m);
    pmx_fx_vertices(m, n);
    pmx_fx_bones(m, bones);
    return m;
}

static void set_vertex(plush_pmx_vertex *v, uint8_t type, float x, float y, float z)
{
    v->weight_type = type;
    v->position[0] = x, v->position[1] = y, v->position[2] = z;
    v->normal[0] = 0, v->normal[1] = 1, v->normal[2] = 0;
    for (int k = 0; k < 4; k++) {
        v->bones[k] = -1;
        v->weights[k] = 0;
    }
    v->sdef = -1;
}

static void set_two(plush_pmx_vertex *v, uint8_t type, int32_t b0, int32_t b1, float w0)
{
    v->weight_type = type;
    v->bones[0] = b0, v->bones[1] = b1;
    v->weights[0] = w0, v->weights[1] = 1.0f - w0;
}

/* ---- BDEF --------------------------------------------------------------------------------------- */

static void test_bdef_by_hand(void **state)
{
    (void)state;
    plush_pmx_model *m = model_with(4, 3);
    float skin[3][16];
    /* bone 0: translation (1, 2, 3); bone 1: 90 degrees about Z through the origin; bone 2: 90 degrees
     * about X through (0, 1, 0) then up 1. */
    mat_rigid(skin[0], AXIS_Z, 0, ZERO, (const float[3]){1, 2, 3});
    mat_rigid(skin[1], AXIS_Z, PI_F / 2, ZERO, ZERO);
    mat_rigid(skin[2], AXIS_X, PI_F / 2, (const float[3]){0, 1, 0}, (const float[3]){0, 1, 0});

    plush_pmx_vertex *v = m->vertices;
    set_vertex(&v[0], PLUSH_PMX_BDEF1, 1, 0, 0);
    v[0].bones[0] = 1, v[0].weights[0] = 1;
    set_vertex(&v[1], PLUSH_PMX_BDEF2, 1, 0, 0);
    set_two(&v[1], PLUSH_PMX_BDEF2, 0, 1, 0.25f);
    set_vertex(&v[2], PLUSH_PMX_BDEF4, 0, 2, 0);
    v[2].bones[0] = 0, v[2].bones[1] = 1, v[2].bones[2] = 2;
    v[2].weights[0] = 0.5f, v[2].weights[1] = 0.25f, v[2].weights[2] = 0.25f;
    /* BDEF4 weights are used as stored, even when they do not sum to 1. */
    set_vertex(&v[3], PLUSH_PMX_BDEF4, 0, 2, 0);
    v[3].bones[0] = 2, v[3].weights[0] = 0.5f;

    float pos[4][3], nrm[4][3];
    plush_anim_skin_vertices(m, (const float(*)[16])skin, NULL, 0, 4, pos, nrm);

    /* v0: Rz90 (1,0,0) = (0,1,0); normal (0,1,0) -> (-1,0,0). */
    expect_vec(pos[0], 0, 1, 0, 1e-6);
    expect_vec(nrm[0], -1, 0, 0, 1e-6);
    /* v1: 0.25 (2,2,3) + 0.75 (0,1,0) = (0.5, 1.25, 0.75); normal 0.25 (0,1,0) + 0.75 (-1,0,0), unit. */
    expect_vec(pos[1], 0.5f, 1.25f, 0.75f, 1e-6);
    float l = sqrtf(0.0625f + 0.5625f);
    expect_vec(nrm[1], -0.75f / l, 0.25f / l, 0, 1e-6);
    /* v2 at (0,2,0): bone0 (1,4,3); bone1 (-2,0,0); bone2: about X through (0,1,0): (0,1,0)->(0,0,1),
     * plus (0,1,0) and the pivot: (0,1,1)+(0,1,0) = (0,2,1). Blend 0.5/0.25/0.25: (0, 2.5, 1.75). */
    expect_vec(pos[2], 0.5f - 0.5f, 2.0f + 0.5f, 1.5f + 0.25f, 1e-6);
    /* v3: half of bone 2's (0,2,1). */
    expect_vec(pos[3], 0, 1, 0.5f, 1e-6);
    plush_pmx_free(m);
}

/* A vertex whose weights sum to 0 (or whose bones do not exist) keeps its rest position. */
static void test_weightless_vertex_unchanged(void **state)
{
    (void)state;
    plush_pmx_model *m = model_with(4, 2);
    float skin[2][16];
    mat_rigid(skin[0], AXIS_Y, 0.7f, ZERO, (const float[3]){3, 4, 5});
    mat_rigid(skin[1], AXIS_X, -1.1f, (const float[3]){1, 1, 1}, (const float[3]){-2, 0, 1});
    plush_pmx_vertex *v = m->vertices;
    set_vertex(&v[0], PLUSH_PMX_BDEF4, 0.5f, -1.25f, 2.0f);
    v[0].bones[0] = 0, v[0].bones[1] = 1; /* both weights 0 */
    set_vertex(&v[1], PLUSH_PMX_QDEF, 1.5f, 0.25f, -2.0f);
    v[1].bones[0] = 1;
    set_vertex(&v[2], PLUSH_PMX_BDEF1, -0.75f, 3.0f, 0.125f);
    v[2].bones[0] = -1, v[2].weights[0] = 1;
    set_vertex(&v[3], PLUSH_PMX_BDEF2, 2.0f, 2.0f, 2.0f);
    set_two(&v[3], PLUSH_PMX_BDEF2, 7, 9, 0.5f); /* bones the matrices do not cover */
    float pos[4][3], nrm[4][3];
    plush_anim_skin_vertices(m, (const float(*)[16])skin, NULL, 0, 4, pos, nrm);
    for (int i = 0; i < 4; i++) {
        assert_memory_equal(pos[i], v[i].position, sizeof pos[i]);
        assert_memory_equal(nrm[i], v[i].normal, sizeof nrm[i]);
    }
    /* Offsets still apply to such a vertex. */
    float off[4][3] = {{1, 0, 0}, {0, 2, 0}, {0, 0, 3}, {1, 1, 1}};
    plush_anim_skin_vertices(m, (const float(*)[16])skin, (const float(*)[3])off, 0, 4, pos, NULL);
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 3; k++)
            assert_true(pos[i][k] == v[i].position[k] + off[i][k]);
    plush_pmx_free(m);
}

/* Vertex-morph offsets move the rest position before the bones do. */
static void test_offsets_before_skinning(void **state)
{
    (void)state;
    plush_pmx_model *m = model_with(2, 1);
    float skin[1][16];
    mat_rigid(skin[0], AXIS_Z, PI_F / 2, ZERO, (const float[3]){0, 0, 1});
    set_vertex(&m->vertices[0], PLUSH_PMX_BDEF1, 1, 0, 0);
    m->vertices[0].bones[0] = 0, m->vertices[0].weights[0] = 1;
    set_vertex(&m->vertices[1], PLUSH_PMX_QDEF, 1, 0, 0);
    m->vertices[1].bones[0] = 0, m->vertices[1].weights[0] = 1;
    float off[2][3] = {{1, 0, 0}, {0, 1, 0}};
    float pos[2][3];
    plush_anim_skin_vertices(m, (const float(*)[16])skin, (const float(*)[3])off, 0, 2, pos, NULL);
    expect_vec(pos[0], 0, 2, 1, 1e-6);  /* Rz90 (2,0,0) + (0,0,1) */
    expect_vec(pos[1], -1, 1, 1, 1e-6); /* Rz90 (1,1,0) + (0,0,1) */
    plush_pmx_free(m);
}

/* Only first..first+count is written, at the vertices' own indices. */
static void test_range(void **state)
{
    (void)state;
    plush_pmx_model *m = model_with(6, 1);
    float skin[1][16];
    mat_rigid(skin[0], AXIS_Y, 0, ZERO, (const float[3]){10, 0, 0});
    float pos[6][3], nrm[6][3];
    for (int i = 0; i < 6; i++)
        for (int k = 0; k < 3; k++)
            pos[i][k] = nrm[i][k] = -99.0f;
    plush_anim_skin_vertices(m, (const float(*)[16])skin, NULL, 2, 3, pos, nrm);
    for (int i = 0; i < 6; i++) {
        bool inside = i >= 2 && i < 5;
        if (inside) {
            expect_vec(pos[i], m->vertices[i].position[0] + 10, m->vertices[i].position[1],
                       m->vertices[i].position[2], 1e-5);
            expect_vec(nrm[i], 0, 1, 0, 0);
        } else {
            assert_true(pos[i][0] == -99.0f && nrm[i][0] == -99.0f);
        }
    }
    /* A count past the end stops at the last vertex; a first past the end writes nothing. */
    plush_anim_skin_vertices(m, (const float(*)[16])skin, NULL, 5, 100, pos, NULL);
    assert_float_equal(pos[5][0], m->vertices[5].position[0] + 10, 1e-5);
    plush_anim_skin_vertices(m, (const float(*)[16])skin, NULL, 6, 1, pos, NULL);
    plush_pmx_free(m);
}

/* ---- SDEF --------------------------------------------------------------------------------------- */

/* Two bones along X meeting at (1, 0, 0); bone 1 bends by angle about Z around the joint. One vertex
 * half-way between the bones, 0.5 above the joint. */
typedef struct joint_fx {
    plush_pmx_model *m;
    float skin[2][16];
} joint_fx;

static void joint_setup(joint_fx *f, float angle, const float r0[3], const float r1[3])
{
    f->m = model_with(2, 2);
    plush_pmx_sdef *sd = pmx_fx_alloc(f->m, 1, sizeof *sd);
    sd->c[0] = 1, sd->c[1] = 0, sd->c[2] = 0;
    memcpy(sd->r0, r0, sizeof sd->r0);
    memcpy(sd->r1, r1, sizeof sd->r1);
    f->m->sdefs = sd;
    f->m->sdef_count = 1;
    for (int i = 0; i < 2; i++) {
        set_vertex(&f->m->vertices[i], PLUSH_PMX_BDEF2, 1, 0.5f, 0);
        set_two(&f->m->vertices[i], PLUSH_PMX_BDEF2, 0, 1, 0.5f);
    }
    f->m->vertices[1].weight_type = PLUSH_PMX_SDEF;
    f->m->vertices[1].sdef = 0;
    mat_identity(f->skin[0]);
    mat_rigid(f->skin[1], AXIS_Z, angle, (const float[3]){1, 0, 0}, ZERO);
}

static void test_sdef_bent_joint(void **state)
{
    (void)state;
    const float c[3] = {1, 0, 0};
    joint_fx f;
    joint_setup(&f, PI_F / 2, c, c);
    float pos[2][3], nrm[2][3];
    plush_anim_skin_vertices(f.m, (const float(*)[16])f.skin, NULL, 0, 2, pos, nrm);
    /* BDEF2: 0.5 (1, 0.5, 0) + 0.5 (0.5, 0, 0): the point sinks towards the joint (0.354 from it). */
    expect_vec(pos[0], 0.75f, 0.25f, 0, 1e-6);
    /* SDEF with R0 = R1 = C: the point turns by the half angle about the joint and keeps its distance. */
    float h = 0.5f * sqrtf(0.5f);
    expect_vec(pos[1], 1 - h, h, 0, 1e-6);
    float d0 = hypotf(pos[0][0] - 1, pos[0][1]), d1 = hypotf(pos[1][0] - 1, pos[1][1]);
    assert_true(d0 < 0.36f);
    assert_float_equal(d1, 0.5, 1e-6);
    /* Both normals are the half-way direction. */
    expect_vec(nrm[0], -sqrtf(0.5f), sqrtf(0.5f), 0, 1e-6);
    expect_vec(nrm[1], -sqrtf(0.5f), sqrtf(0.5f), 0, 1e-6);
    plush_pmx_free(f.m);

    /* R0, R1 a half unit either side of C: rw = C, cr0 = (0.75,0,0), cr1 = (1.25,0,0);
     * 0.5 M0 cr0 + 0.5 M1 cr1 = 0.5 (0.75,0,0) + 0.5 (1,0.25,0) = (0.875, 0.125, 0), plus
     * Rz45 (0, 0.5, 0) = (-h, h, 0). */
    joint_setup(&f, PI_F / 2, (const float[3]){0.5f, 0, 0}, (const float[3]){1.5f, 0, 0});
    plush_anim_skin_vertices(f.m, (const float(*)[16])f.skin, NULL, 0, 2, pos, NULL);
    expect_vec(pos[0], 0.75f, 0.25f, 0, 1e-6);
    expect_vec(pos[1], 0.875f - h, 0.125f + h, 0, 1e-6);
    plush_pmx_free(f.m);

    /* Uneven weights: w0 = 0.25 turns the vertex by three quarters of the bend (slerp from bone 0). */
    joint_setup(&f, PI_F / 2, c, c);
    set_two(&f.m->vertices[1], PLUSH_PMX_SDEF, 0, 1, 0.25f);
    plush_anim_skin_vertices(f.m, (const float(*)[16])f.skin, NULL, 1, 1, pos, nrm);
    float a = 0.75f * PI_F / 2;
    expect_vec(pos[1], 1 - 0.5f * sinf(a), 0.5f * cosf(a), 0, 1e-6);
    expect_vec(nrm[1], -sinf(a), cosf(a), 0, 1e-6);
    plush_pmx_free(f.m);
}

/* With no rotation at all, SDEF is BDEF2: w0 cr0 + w1 cr1 = C. */
static void test_sdef_translation_is_bdef2(void **state)
{
    (void)state;
    joint_fx f;
    joint_setup(&f, 0, (const float[3]){0.2f, 0.3f, -0.1f}, (const float[3]){1.7f, -0.4f, 0.2f});
    srand(5);
    for (int trial = 0; trial < 20; trial++) {
        float w0 = rnd(0, 1);
        set_two(&f.m->vertices[0], PLUSH_PMX_BDEF2, 0, 1, w0);
        set_two(&f.m->vertices[1], PLUSH_PMX_SDEF, 0, 1, w0);
        /* The same translation for both bones, then different ones. */
        float t0[3] = {rnd(-3, 3), rnd(-3, 3), rnd(-3, 3)};
        float t1[3] = {rnd(-3, 3), rnd(-3, 3), rnd(-3, 3)};
        mat_rigid(f.skin[0], AXIS_X, 0, ZERO, t0);
        mat_rigid(f.skin[1], AXIS_X, 0, ZERO, trial % 2 ? t1 : t0);
        float pos[2][3], nrm[2][3];
        plush_anim_skin_vertices(f.m, (const float(*)[16])f.skin, NULL, 0, 2, pos, nrm);
        for (int k = 0; k < 3; k++) {
            assert_float_equal(pos[1][k], pos[0][k], 1e-5);
            assert_float_equal(nrm[1][k], nrm[0][k], 1e-6);
        }
        if (trial % 2 == 0)
            expect_vec(pos[1], 1 + t0[0], 0.5f + t0[1], t0[2], 1e-5);
    }
    plush_pmx_free(f.m);
}

/* Both bones moved by the same rigid motion: SDEF moves the vertex rigidly too. */
static void test_sdef_same_motion_is_rigid(void **state)
{
    (void)state;
    joint_fx f;
    joint_setup(&f, 0, (const float[3]){0.5f, 0.1f, 0}, (const float[3]){1.4f, -0.2f, 0.3f});
    set_two(&f.m->vertices[1], PLUSH_PMX_SDEF, 0, 1, 0.3f);
    const float axis[3] = {0.48f, 0.6f, 0.64f};
    mat_rigid(f.skin[0], axis, 2.1f, (const float[3]){0.3f, -1, 2}, (const float[3]){1, 2, 3});
    memcpy(f.skin[1], f.skin[0], sizeof f.skin[0]);
    float pos[2][3], want[3];
    plush_anim_skin_vertices(f.m, (const float(*)[16])f.skin, NULL, 1, 1, pos, NULL);
    mat_apply(f.skin[0], f.m->vertices[1].position, want);
    expect_vec(pos[1], want[0], want[1], want[2], 1e-5);
    plush_pmx_free(f.m);
}

/* ---- QDEF --------------------------------------------------------------------------------------- */

/* A cylinder of radius 1 along Y from 0 to 1, rings of 12; bone 1 twists the top by angle about Y, the
 * weight of bone 1 rising linearly with height. */
enum { RINGS = 5, AROUND = 12 };

static void twisted_cylinder(uint8_t type, float angle, float radius_out[RINGS])
{
    plush_pmx_model *m = model_with(RINGS * AROUND, 2);
    for (int r = 0; r < RINGS; r++)
        for (int a = 0; a < AROUND; a++) {
            plush_pmx_vertex *v = &m->vertices[r * AROUND + a];
            float phi = 2 * PI_F * (float)a / AROUND, y = (float)r / (RINGS - 1);
            set_vertex(v, type, cosf(phi), y, sinf(phi));
            v->normal[0] = cosf(phi), v->normal[1] = 0, v->normal[2] = sinf(phi);
            v->bones[0] = 0, v->bones[1] = 1;
            v->weights[0] = 1 - y, v->weights[1] = y;
        }
    float skin[2][16];
    mat_identity(skin[0]);
    mat_rigid(skin[1], AXIS_Y, angle, ZERO, ZERO);
    float pos[RINGS * AROUND][3], nrm[RINGS * AROUND][3];
    plush_anim_skin_vertices(m, (const float(*)[16])skin, NULL, 0, RINGS * AROUND, pos, nrm);
    for (int r = 0; r < RINGS; r++) {
        float lo = INFINITY;
        for (int a = 0; a < AROUND; a++) {
            const float *p = pos[r * AROUND + a];
            float radius = hypotf(p[0], p[2]);
            lo = radius < lo ? radius : lo;
            assert_float_equal(p[1], (float)r / (RINGS - 1), 1e-5); /* a twist moves nothing along Y */
            const float *n = nrm[r * AROUND + a];
            assert_float_equal(sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]), 1.0, 1e-5);
        }
        radius_out[r] = lo;
    }
    plush_pmx_free(m);
}

static void test_qdef_keeps_twisted_cylinder(void **state)
{
    (void)state;
    float lin[RINGS], dq[RINGS];
    const float angle = 2 * PI_F / 3;
    twisted_cylinder(PLUSH_PMX_BDEF4, angle, lin);
    twisted_cylinder(PLUSH_PMX_QDEF, angle, dq);
    for (int r = 0; r < RINGS; r++)
        assert_float_equal(dq[r], 1.0, 1e-5);
    /* Linear blending of a 120-degree twist: at mid height |(1 + e^(i 120))| / 2 = 0.5. */
    assert_float_equal(lin[RINGS / 2], 0.5, 1e-5);
    assert_true(lin[1] < 0.9f && lin[3] < 0.9f);
    assert_float_equal(lin[0], 1.0, 1e-6);
    assert_float_equal(lin[RINGS - 1], 1.0, 1e-6);
}

/* Rotations of 170 and 190 degrees about Z are ten degrees apart, but their quaternions as read from the
 * matrices lie in opposite hemispheres; blended half and half they give 180 degrees, not 0. */
static void test_qdef_sign_alignment(void **state)
{
    (void)state;
    plush_pmx_model *m = model_with(1, 2);
    float skin[2][16];
    mat_rigid(skin[0], AXIS_Z, 170 * PI_F / 180, ZERO, ZERO);
    mat_rigid(skin[1], AXIS_Z, 190 * PI_F / 180, ZERO, ZERO);
    set_vertex(&m->vertices[0], PLUSH_PMX_QDEF, 1, 0, 0);
    set_two(&m->vertices[0], PLUSH_PMX_QDEF, 0, 1, 0.5f);
    float pos[1][3], nrm[1][3];
    plush_anim_skin_vertices(m, (const float(*)[16])skin, NULL, 0, 1, pos, nrm);
    expect_vec(pos[0], -1, 0, 0, 1e-5);
    expect_vec(nrm[0], 0, -1, 0, 1e-5);

    /* Rx(170) and Rz(-170): qa = (sin 85, 0, 0, cos 85) and qb = +-(0, 0, -sin 85, cos 85), whichever sign
     * a matrix gives. The blend must use the qb with qa . qb >= 0, i.e. (0, 0, -sin 85, cos 85):
     * q = (sin 85, 0, -sin 85, 2 cos 85) normalised, whatever the matrix-to-quaternion sign convention. */
    mat_rigid(skin[0], AXIS_X, 170 * PI_F / 180, ZERO, ZERO);
    mat_rigid(skin[1], AXIS_Z, -170 * PI_F / 180, ZERO, ZERO);
    float s = sinf(85 * PI_F / 180), c = cosf(85 * PI_F / 180);
    float q[4] = {s, 0, -s, 2 * c}, l = sqrtf(2 * s * s + 4 * c * c);
    for (int k = 0; k < 4; k++)
        q[k] /= l;
    /* v' = v + w t + q x t, t = 2 q x v, for v = (1, 0, 0): q x v = (0, q.z, -q.y) = (0, -s', 0). */
    float t[3] = {0, 2 * q[2], 0};
    float want[3] = {1 + q[3] * t[0] + (q[1] * t[2] - q[2] * t[1]), q[3] * t[1] + (q[2] * t[0] - q[0] * t[2]),
                     q[3] * t[2] + (q[0] * t[1] - q[1] * t[0])};
    plush_anim_skin_vertices(m, (const float(*)[16])skin, NULL, 0, 1, pos, NULL);
    expect_vec(pos[0], want[0], want[1], want[2], 1e-5);
    plush_pmx_free(m);
}

/* One bone, or four bones with one motion: QDEF reproduces that rigid motion exactly (rotation about a
 * pivot away from the origin included), like BDEF does. */
static void test_qdef_rigid_motions(void **state)
{
    (void)state;
    srand(11);
    plush_pmx_model *m = model_with(2, 4);
    for (int trial = 0; trial < 50; trial++) {
        float axis[3] = {rnd(-1, 1), rnd(-1, 1), rnd(-1, 1) + 2};
        float len = sqrtf(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
        for (int k = 0; k < 3; k++)
            axis[k] /= len;
        float skin[4][16];
        mat_rigid(skin[0], axis, rnd(-3, 3), (const float[3]){rnd(-2, 2), rnd(-2, 2), rnd(-2, 2)},
                  (const float[3]){rnd(-5, 5), rnd(-5, 5), rnd(-5, 5)});
        for (int b = 1; b < 4; b++)
            memcpy(skin[b], skin[0], sizeof skin[0]);
        plush_pmx_vertex *v = m->vertices;
        set_vertex(&v[0], PLUSH_PMX_QDEF, rnd(-2, 2), rnd(-2, 2), rnd(-2, 2));
        v[0].bones[0] = 2, v[0].weights[0] = 1;
        set_vertex(&v[1], PLUSH_PMX_QDEF, rnd(-2, 2), rnd(-2, 2), rnd(-2, 2));
        float wsum = 0;
        for (int k = 0; k < 4; k++) {
            v[1].bones[k] = k;
            v[1].weights[k] = rnd(0.1f, 1);
            wsum += v[1].weights[k];
        }
        for (int k = 0; k < 4; k++)
            v[1].weights[k] /= wsum;
        float pos[2][3], nrm[2][3];
        plush_anim_skin_vertices(m, (const float(*)[16])skin, NULL, 0, 2, pos, nrm);
        for (int i = 0; i < 2; i++) {
            float want[3], n[3];
            mat_apply(skin[0], v[i].position, want);
            expect_vec(pos[i], want[0], want[1], want[2], 2e-5);
            for (int k = 0; k < 3; k++)
                n[k] = skin[0][k] * v[i].normal[0] + skin[0][4 + k] * v[i].normal[1] + skin[0][8 + k] * v[i].normal[2];
            expect_vec(nrm[i], n[0], n[1], n[2], 1e-5);
        }
    }
    plush_pmx_free(m);
}

/* ---- every type: unit normals ------------------------------------------------------------------- */

static void test_normals_unit(void **state)
{
    (void)state;
    srand(3);
    enum { N = 200, BONES = 6 };
    plush_pmx_model *m = model_with(N, BONES);
    plush_pmx_sdef *sd = pmx_fx_alloc(m, N, sizeof *sd);
    m->sdefs = sd;
    m->sdef_count = N;
    float skin[BONES][16];
    for (int b = 0; b < BONES; b++) {
        float axis[3] = {rnd(-1, 1), rnd(-1, 1), rnd(0.5f, 1)};
        float len = sqrtf(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
        for (int k = 0; k < 3; k++)
            axis[k] /= len;
        mat_rigid(skin[b], axis, rnd(-3, 3), (const float[3]){rnd(-1, 1), rnd(-1, 1), rnd(-1, 1)},
                  (const float[3]){rnd(-1, 1), rnd(-1, 1), rnd(-1, 1)});
    }
    for (int i = 0; i < N; i++) {
        plush_pmx_vertex *v = &m->vertices[i];
        uint8_t type = (uint8_t)(i % 5);
        set_vertex(v, type, rnd(-1, 1), rnd(-1, 1), rnd(-1, 1));
        float nx = rnd(-1, 1), ny = rnd(-1, 1), nz = rnd(0.2f, 1), l = sqrtf(nx * nx + ny * ny + nz * nz);
        v->normal[0] = nx / l, v->normal[1] = ny / l, v->normal[2] = nz / l;
        int used = type == PLUSH_PMX_BDEF1 ? 1 : type == PLUSH_PMX_BDEF2 || type == PLUSH_PMX_SDEF ? 2 : 4;
        float wsum = 0;
        for (int k = 0; k < used; k++) {
            v->bones[k] = rand() % BONES;
            v->weights[k] = rnd(0.05f, 1);
            wsum += v->weights[k];
        }
        for (int k = 0; k < used; k++)
            v->weights[k] /= wsum;
        if (used == 2)
            v->weights[1] = 1 - v->weights[0];
        if (used == 1)
            v->weights[0] = 1;
        if (type == PLUSH_PMX_SDEF) {
            v->sdef = i;
            for (int k = 0; k < 3; k++) {
                sd[i].c[k] = rnd(-1, 1);
                sd[i].r0[k] = sd[i].c[k] + rnd(-0.5f, 0.5f);
                sd[i].r1[k] = sd[i].c[k] + rnd(-0.5f, 0.5f);
            }
        }
    }
    float pos[N][3], nrm[N][3];
    plush_anim_skin_vertices(m, (const float(*)[16])skin, NULL, 0, N, pos, nrm);
    for (int i = 0; i < N; i++) {
        float l = sqrtf(nrm[i][0] * nrm[i][0] + nrm[i][1] * nrm[i][1] + nrm[i][2] * nrm[i][2]);
        assert_float_equal(l, 1.0, 1e-5);
        for (int k = 0; k < 3; k++)
            assert_true(isfinite(pos[i][k]));
    }
    /* Normals are optional and do not change the positions. */
    float pos2[N][3];
    plush_anim_skin_vertices(m, (const float(*)[16])skin, NULL, 0, N, pos2, NULL);
    assert_memory_equal(pos, pos2, sizeof pos);
    plush_pmx_free(m);
}

/* Identity matrices leave every vertex of every type where it is. */
static void test_rest_pose_identity(void **state)
{
    (void)state;
    plush_pmx_model *m = pmx_fx_rich(2.1f, PLUSH_ENC_UTF16LE, 0);
    assert_true(m->vertex_count > 0);
    float(*skin)[16] = calloc(m->bone_count, sizeof *skin);
    float(*pos)[3] = calloc(m->vertex_count, sizeof *pos);
    float(*nrm)[3] = calloc(m->vertex_count, sizeof *nrm);
    assert_true(skin && pos && nrm);
    for (size_t b = 0; b < m->bone_count; b++)
        mat_identity(skin[b]);
    plush_anim_skin_vertices(m, (const float(*)[16])skin, NULL, 0, m->vertex_count, pos, nrm);
    bool types[5] = {0};
    for (size_t i = 0; i < m->vertex_count; i++) {
        const plush_pmx_vertex *v = &m->vertices[i];
        if (v->weight_type < 5)
            types[v->weight_type] = true;
        expect_vec(pos[i], v->position[0], v->position[1], v->position[2], 1e-5);
    }
    for (int t = 0; t < 5; t++)
        assert_true(types[t]);
    free(skin);
    free(pos);
    free(nrm);
    plush_pmx_free(m);
}

/* ---- real files: the anim's pipeline, then plush_anim_skin ------------------------------------ */

static plush_pmx_model *read_shared(const char *name)
{
    char path[300];
    snprintf(path, sizeof path, "%s/unity-mmd-loader/%s", SHARED_MMD, name);
    plush_pmx_model *m = NULL;
    plush_diag d = pmx_fx_diag();
    return plush_pmx_read_file(path, NULL, &m, &d) == PLUSH_OK ? m : NULL;
}

/* Poses the model with one bone's motion and skins every vertex (positions and unit normals). */
static void pose_and_skin(const plush_pmx_model *m, size_t bone, const float t[3], const float q[4], float (*pos)[3],
                          float (*nrm)[3])
{
    plush_anim *anim = NULL;
    plush_diag d = pmx_fx_diag();
    assert_int_equal(plush_anim_create(m, &anim, &d), PLUSH_OK);
    plush_anim_set_bone_motion(anim, bone, t, q);
    plush_anim_update_morphs(anim);
    plush_anim_deform(anim, PLUSH_ANIM_BEFORE_PHYSICS);
    plush_anim_deform(anim, PLUSH_ANIM_AFTER_PHYSICS);
    plush_anim_skin(anim, 0, m->vertex_count, pos, nrm);
    plush_anim_destroy(anim);
    for (size_t v = 0; v < m->vertex_count; v++)
        assert_float_equal(sqrtf(nrm[v][0] * nrm[v][0] + nrm[v][1] * nrm[v][1] + nrm[v][2] * nrm[v][2]), 1.0, 1e-5);
}

/* The twist cylinders of unity-mmd-loader (bones along Y, the same mesh weighted QDEF in one file and
 * BDEF4 in the other): the top bone twisted by 150 degrees about Y. QDEF keeps every vertex's distance
 * to the axis; BDEF4 pulls the twisted part in. */
static float min_radius_ratio(const plush_pmx_model *m, const float (*pos)[3])
{
    float lo = INFINITY;
    for (size_t v = 0; v < m->vertex_count; v++) {
        const float *r = m->vertices[v].position;
        float rest = hypotf(r[0], r[2]);
        if (rest < 1e-4f)
            continue;
        float ratio = hypotf(pos[v][0], pos[v][2]) / rest;
        lo = ratio < lo ? ratio : lo;
    }
    return lo;
}

static void test_real_twist_cylinders(void **state)
{
    (void)state;
    plush_pmx_model *dq = read_shared("qdef-twist-cylinder.pmx"), *lin = read_shared("bdef4-twist-cylinder.pmx");
    if (!dq || !lin) {
        plush_pmx_free(dq);
        plush_pmx_free(lin);
        skip();
    }
    assert_int_equal(dq->vertex_count, lin->vertex_count);
    size_t top = dq->bone_count - 1;
    float a = 150 * PI_F / 180, q[4] = {0, sinf(a / 2), 0, cosf(a / 2)};
    float(*pos)[3] = calloc(dq->vertex_count, sizeof *pos), (*nrm)[3] = calloc(dq->vertex_count, sizeof *nrm);
    assert_true(pos && nrm);
    pose_and_skin(dq, top, NULL, q, pos, nrm);
    float keep = min_radius_ratio(dq, (const float(*)[3])pos);
    pose_and_skin(lin, top, NULL, q, pos, nrm);
    float collapse = min_radius_ratio(lin, (const float(*)[3])pos);
    assert_true(keep > 0.999f);
    assert_true(collapse < 0.9f);
    free(pos);
    free(nrm);
    plush_pmx_free(dq);
    plush_pmx_free(lin);
}

/* unity-mmd-loader's SDEF elbow, bent 90 degrees at the upper bone, against the same mesh read as BDEF2:
 * vertices on one bone alone agree, blended ones mostly differ; a pure translation agrees everywhere. */
static void test_real_sdef_elbow(void **state)
{
    (void)state;
    plush_pmx_model *m = read_shared("sdef-two-bone-elbow.pmx");
    if (!m)
        skip();
    float(*sdef)[3] = calloc(m->vertex_count, sizeof *sdef), (*bdef)[3] = calloc(m->vertex_count, sizeof *bdef);
    float(*nrm)[3] = calloc(m->vertex_count, sizeof *nrm);
    assert_true(sdef && bdef && nrm);
    float q[4] = {0, 0, sqrtf(0.5f), sqrtf(0.5f)}, t[3] = {0.3f, -0.2f, 0.5f};
    for (int pass = 0; pass < 2; pass++) {
        const float *tt = pass ? t : NULL, *qq = pass ? NULL : q;
        for (size_t v = 0; v < m->vertex_count; v++)
            m->vertices[v].weight_type = PLUSH_PMX_SDEF;
        pose_and_skin(m, 1, tt, qq, sdef, nrm);
        for (size_t v = 0; v < m->vertex_count; v++)
            m->vertices[v].weight_type = PLUSH_PMX_BDEF2;
        pose_and_skin(m, 1, tt, qq, bdef, nrm);
        size_t blended = 0, differ = 0;
        for (size_t v = 0; v < m->vertex_count; v++) {
            float w = m->vertices[v].weights[0];
            float d = fabsf(sdef[v][0] - bdef[v][0]) + fabsf(sdef[v][1] - bdef[v][1]) + fabsf(sdef[v][2] - bdef[v][2]);
            bool mixed = w > 0.01f && w < 0.99f && m->vertices[v].bones[0] != m->vertices[v].bones[1];
            if (pass == 1 || !mixed)
                assert_true(d < 1e-5f);
            blended += mixed;
            differ += mixed && d > 1e-3f;
        }
        /* Most blended vertices move differently (a few points of the ring can land alike). */
        if (pass == 0) {
            assert_true(blended >= 16);
            assert_true(differ * 4 >= blended * 3);
        }
    }
    free(sdef);
    free(bdef);
    free(nrm);
    plush_pmx_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bdef_by_hand),
        cmocka_unit_test(test_weightless_vertex_unchanged),
        cmocka_unit_test(test_offsets_before_skinning),
        cmocka_unit_test(test_range),
        cmocka_unit_test(test_sdef_bent_joint),
        cmocka_unit_test(test_sdef_translation_is_bdef2),
        cmocka_unit_test(test_sdef_same_motion_is_rigid),
        cmocka_unit_test(test_qdef_keeps_twisted_cylinder),
        cmocka_unit_test(test_qdef_sign_alignment),
        cmocka_unit_test(test_qdef_rigid_motions),
        cmocka_unit_test(test_normals_unit),
        cmocka_unit_test(test_rest_pose_identity),
        cmocka_unit_test(test_real_twist_cylinders),
        cmocka_unit_test(test_real_sdef_elbow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
