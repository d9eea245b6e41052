/* Bone deform and morphs on small models built in code, every expected value worked out by hand:
 * a two-bone chain, append (ratio 0.5, chained, local), IK (a free two-link chain, a knee with limits,
 * IK off), deform order and physics hand-over, group / flip / material / vertex / bone morphs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/anim.h"
#include "plush/sys/anim.h"
#include "support/pmx_fixture.h"

#include <math.h>
#include <string.h>

#define PI_F 3.14159265358979f
#define DEG(d) ((float)(d) * PI_F / 180.0f)

/* ---- helpers ------------------------------------------------------------------------------------- */

static void quat_axis(float x, float y, float z, float angle, float q[4])
{
    float s = sinf(angle * 0.5f);
    q[0] = x * s;
    q[1] = y * s;
    q[2] = z * s;
    q[3] = cosf(angle * 0.5f);
}

static const float *bone_pos(const plush_anim *anim, size_t b)
{
    return &plush_anim_bone_globals(anim)[b][12];
}

static void assert_vec(const float *got, float x, float y, float z, float tol)
{
    if (fabsf(got[0] - x) > tol || fabsf(got[1] - y) > tol || fabsf(got[2] - z) > tol)
        fail_msg("got (%g, %g, %g), want (%g, %g, %g)", got[0], got[1], got[2], x, y, z);
}

static float dist(const float *a, const float *b)
{
    float d0 = a[0] - b[0], d1 = a[1] - b[1], d2 = a[2] - b[2];
    return sqrtf(d0 * d0 + d1 * d1 + d2 * d2);
}

static plush_anim *make_anim(const plush_pmx_model *m)
{
    plush_anim *anim = NULL;
    plush_diag diag = pmx_fx_diag();
    assert_int_equal(plush_anim_create(m, &anim, &diag), PLUSH_OK);
    assert_non_null(anim);
    return anim;
}

static void pose(plush_anim *anim)
{
    plush_anim_update_morphs(anim);
    plush_anim_deform(anim, PLUSH_ANIM_BEFORE_PHYSICS);
    plush_anim_deform(anim, PLUSH_ANIM_AFTER_PHYSICS);
}

/* A chain of n bones on the Y axis, bone i at (0, i, 0), each the parent of the next. */
static plush_pmx_model *chain_model(size_t n)
{
    plush_pmx_model *m = plush_pmx_create();
    plush_pmx_bone *b = pmx_fx_bones(m, n);
    for (size_t i = 1; i < n; i++)
        b[i].parent = (int32_t)i - 1;
    return m;
}

/* ---- plain chain ------------------------------------------------------------------------------------ */

static void test_rest_pose(void **state)
{
    (void)state;
    plush_pmx_model *m = chain_model(3);
    m->bones[2].position[0] = 0.5f;
    plush_anim *anim = make_anim(m);
    pose(anim);
    for (size_t b = 0; b < 3; b++) {
        const float *g = plush_anim_bone_globals(anim)[b];
        assert_vec(&g[12], m->bones[b].position[0], m->bones[b].position[1], m->bones[b].position[2], 1e-6f);
        assert_vec(&g[0], 1, 0, 0, 1e-6f);
        /* The skinning matrix of the rest pose is the identity. */
        const float *s = plush_anim_skin_matrices(anim)[b];
        for (int k = 0; k < 16; k++)
            assert_true(fabsf(s[k] - ((k % 5) == 0 ? 1.0f : 0.0f)) < 1e-6f);
    }
    plush_anim_destroy(anim);
    plush_pmx_free(m);
}

static void test_two_bone_chain_rotated(void **state)
{
    (void)state;
    plush_pmx_model *m = chain_model(3);
    plush_anim *anim = make_anim(m);
    float q[4];
    quat_axis(0, 0, 1, DEG(90), q);   /* +90 deg about Z takes +Y to -X */
    plush_anim_set_bone_motion(anim, 0, NULL, q);
    float t[3] = {0, 0, 2};
    plush_anim_set_bone_motion(anim, 1, t, NULL);   /* translation is in the parent's (rotated) frame */
    pose(anim);
    assert_vec(bone_pos(anim, 0), 0, 0, 0, 1e-6f);
    assert_vec(bone_pos(anim, 1), -1, 0, 2, 1e-5f);
    assert_vec(bone_pos(anim, 2), -2, 0, 2, 1e-5f);
    /* The skin matrix moves a point at the rest position of bone 2 to where bone 2 went. */
    const float *s = plush_anim_skin_matrices(anim)[2];
    float p[3] = {0, 2, 0}, out[3];
    for (int k = 0; k < 3; k++)
        out[k] = s[k] * p[0] + s[4 + k] * p[1] + s[8 + k] * p[2] + s[12 + k];
    assert_vec(out, -2, 0, 2, 1e-5f);
    plush_anim_destroy(anim);
    plush_pmx_free(m);
}

static void test_parent_cycle_is_format_error(void **state)
{
    (void)state;
    plush_pmx_model *m = chain_model(3);
    m->bones[0].parent = 2;
    plush_anim *anim = (plush_anim *)1;
    plush_diag diag = pmx_fx_diag();
    assert_int_equal(plush_anim_create(m, &anim, &diag), PLUSH_E_FORMAT);
    assert_null(anim);
    assert_int_equal(diag.status, PLUSH_E_FORMAT);
    m->bones[0].parent = 7;
    assert_int_equal(plush_anim_create(m, &anim, &diag), PLUSH_E_FORMAT);
    plush_pmx_free(m);
}

/* ---- append ----------------------------------------------------------------------------------------- */

/* Bones: 0 source (root), 1 appends 0 at ratio 0.5, 2 appends 1 at ratio 0.5 (chain), 3 appends 0's
 * translation at -1. Each has a child one unit up, to read the rotation off a position. */
static void test_append_ratio_and_chain(void **state)
{
    (void)state;
    plush_pmx_model *m = plush_pmx_create();
    plush_pmx_bone *b = pmx_fx_bones(m, 7);
    for (int i = 0; i < 3; i++) {
        b[2 * i].position[0] = b[2 * i + 1].position[0] = (float)(3 * i);
        b[2 * i].position[1] = 0;
        b[2 * i + 1].position[1] = 1;
        b[2 * i + 1].parent = 2 * i;
    }
    b[2].flags |= PLUSH_PMX_BONE_APPEND_ROTATE;
    b[2].append_parent = 0;
    b[2].append_ratio = 0.5f;
    b[4].flags |= PLUSH_PMX_BONE_APPEND_ROTATE;
    b[4].append_parent = 2;
    b[4].append_ratio = 0.5f;
    b[6].position[1] = 0;
    b[6].position[0] = 10;
    b[6].flags |= PLUSH_PMX_BONE_APPEND_TRANSLATE;
    b[6].append_parent = 0;
    b[6].append_ratio = -1.0f;
    plush_anim *anim = make_anim(m);
    float q[4], t[3] = {1, 2, 3};
    quat_axis(0, 0, 1, DEG(90), q);
    plush_anim_set_bone_motion(anim, 0, t, q);
    pose(anim);
    /* bone 1 (child of 0): rotated 90 deg about Z: up -> -X, around 0 which moved by t. */
    assert_vec(bone_pos(anim, 1), 1 - 1, 2 + 0, 3, 1e-5f);
    /* bone 3 (child of 2, which turned 45 deg): (3,0,0) + (-sin45, cos45, 0). */
    assert_vec(bone_pos(anim, 3), 3 - sinf(DEG(45)), cosf(DEG(45)), 0, 1e-5f);
    /* bone 5 (child of 4, chained: 0.5 * 45 deg). */
    assert_vec(bone_pos(anim, 5), 6 - sinf(DEG(22.5)), cosf(DEG(22.5)), 0, 1e-5f);
    /* bone 6: translation appended at ratio -1. */
    assert_vec(bone_pos(anim, 6), 10 - 1, -2, -3, 1e-5f);
    plush_anim_destroy(anim);
    plush_pmx_free(m);
}

/* Local append takes the append parent's whole local transform, including what it appended itself;
 * the plain append of the same parent takes only its motion + morph (here: the parent's own append
 * counts through the chain rule, so use a parent that has motion and an append). */
static void test_local_append(void **state)
{
    (void)state;
    plush_pmx_model *m = plush_pmx_create();
    plush_pmx_bone *b = pmx_fx_bones(m, 4);
    for (int i = 0; i < 4; i++)
        b[i].position[1] = 0, b[i].position[0] = (float)(2 * i);
    /* 0: driven by motion. 1: has motion about X and appends 0 (so its local = its motion * append).
     * 2: local-appends 1 at ratio 1 -> gets 1's whole local rotation. 3: plain append of 1 -> 1's append
     * (chain rule), not 1's motion. */
    b[1].flags |= PLUSH_PMX_BONE_APPEND_ROTATE;
    b[1].append_parent = 0;
    b[1].append_ratio = 1.0f;
    b[2].flags |= PLUSH_PMX_BONE_APPEND_ROTATE | PLUSH_PMX_BONE_APPEND_LOCAL;
    b[2].append_parent = 1;
    b[2].append_ratio = 1.0f;
    b[3].flags |= PLUSH_PMX_BONE_APPEND_ROTATE;
    b[3].append_parent = 1;
    b[3].append_ratio = 1.0f;
    plush_anim *anim = make_anim(m);
    float qz[4], qx[4];
    quat_axis(0, 0, 1, DEG(30), qz);
    quat_axis(1, 0, 0, DEG(40), qx);
    plush_anim_set_bone_motion(anim, 0, NULL, qz);
    plush_anim_set_bone_motion(anim, 1, NULL, qx);
    pose(anim);
    float r1[4], r2[4], r3[4];
    plush_anim_bone_local(anim, 1, NULL, r1);
    plush_anim_bone_local(anim, 2, NULL, r2);
    plush_anim_bone_local(anim, 3, NULL, r3);
    /* local(1) = motion * append = qx * qz (column order: append acts first). */
    float want[4] = {
        qx[3] * qz[0] + qx[0] * qz[3] + qx[1] * qz[2] - qx[2] * qz[1],
        qx[3] * qz[1] - qx[0] * qz[2] + qx[1] * qz[3] + qx[2] * qz[0],
        qx[3] * qz[2] + qx[0] * qz[1] - qx[1] * qz[0] + qx[2] * qz[3],
        qx[3] * qz[3] - qx[0] * qz[0] - qx[1] * qz[1] - qx[2] * qz[2],
    };
    float sign = r1[3] * want[3] < 0 ? -1.0f : 1.0f;
    for (int k = 0; k < 4; k++)
        assert_true(fabsf(r1[k] - sign * want[k]) < 1e-5f);
    sign = r2[3] * want[3] < 0 ? -1.0f : 1.0f;
    for (int k = 0; k < 4; k++)
        assert_true(fabsf(r2[k] - sign * want[k]) < 1e-5f);
    sign = r3[3] * qz[3] < 0 ? -1.0f : 1.0f;
    for (int k = 0; k < 4; k++)
        assert_true(fabsf(r3[k] - sign * qz[k]) < 1e-5f);
    plush_anim_destroy(anim);
    plush_pmx_free(m);
}

/* ---- IK ------------------------------------------------------------------------------------------------ */

/* 0 hip at (0,2,0), 1 knee at (0,1,0), 2 ankle at (0,0,0) (the effector), 3 the IK bone at the ankle's
 * rest position (a root). Links: knee, hip. */
static plush_pmx_model *leg_model(bool knee_limits)
{
    plush_pmx_model *m = plush_pmx_create();
    plush_pmx_bone *b = pmx_fx_bones(m, 4);
    b[0].position[1] = 2;
    b[1].position[1] = 1;
    b[1].parent = 0;
    b[2].position[1] = 0;
    b[2].parent = 1;
    b[3].position[1] = 0;
    b[3].flags |= PLUSH_PMX_BONE_IK | PLUSH_PMX_BONE_TRANSLATABLE;
    b[3].ik_target = 2;
    b[3].ik_loop_count = 40;
    b[3].ik_limit_angle = DEG(114.6);   /* 2 radians, a common value */
    b[3].ik_link_count = 2;
    b[3].ik_links = pmx_fx_alloc(m, 2, sizeof *b[3].ik_links);
    b[3].ik_links[0].bone = 1;
    b[3].ik_links[1].bone = 0;
    if (knee_limits) {
        b[3].ik_links[0].has_limits = 1;
        b[3].ik_links[0].lower[0] = DEG(-180);
        b[3].ik_links[0].upper[0] = DEG(-0.5);
    }
    return m;
}

static void test_ik_two_links_reach(void **state)
{
    (void)state;
    plush_pmx_model *m = leg_model(false);
    plush_anim *anim = make_anim(m);
    float t[3] = {1.0f, 0.8f, -0.3f};   /* |goal - hip| = 1.58 < 2: reachable */
    plush_anim_set_bone_motion(anim, 3, t, NULL);
    pose(anim);
    assert_vec(bone_pos(anim, 3), 1.0f, 0.8f, -0.3f, 1e-6f);
    assert_true(dist(bone_pos(anim, 2), bone_pos(anim, 3)) < 1e-3f);
    /* Rotation only: the bone lengths stay. */
    assert_true(fabsf(dist(bone_pos(anim, 0), bone_pos(anim, 1)) - 1) < 1e-5f);
    assert_true(fabsf(dist(bone_pos(anim, 1), bone_pos(anim, 2)) - 1) < 1e-5f);
    assert_vec(bone_pos(anim, 0), 0, 2, 0, 1e-6f);
    plush_anim_destroy(anim);
    plush_pmx_free(m);
}

static void test_ik_knee_bends_forward(void **state)
{
    (void)state;
    plush_pmx_model *m = leg_model(true);
    plush_anim *anim = make_anim(m);
    /* The goal straight below the hip, half a unit higher than the straight leg reaches: the only way
     * is to bend; a knee bends forward (MMD models face -Z), so the knee ends at z < 0. */
    float t[3] = {0, 0.5f, 0};
    plush_anim_set_bone_motion(anim, 3, t, NULL);
    pose(anim);
    assert_true(dist(bone_pos(anim, 2), bone_pos(anim, 3)) < 1e-3f);
    assert_true(bone_pos(anim, 1)[2] < -0.1f);
    /* The knee's local rotation is about X only, inside its limits. */
    float q[4];
    plush_anim_bone_local(anim, 1, NULL, q);
    assert_true(fabsf(q[1]) < 1e-5f && fabsf(q[2]) < 1e-5f);
    float angle = 2.0f * atan2f(q[3] < 0 ? -q[0] : q[0], fabsf(q[3]));
    assert_true(angle <= DEG(-0.5) + 1e-5f && angle >= DEG(-180) - 1e-5f);
    /* Ahead of the straight line as well: goal forward and up. */
    float t2[3] = {0, 0.3f, -0.4f};
    plush_anim_set_bone_motion(anim, 3, t2, NULL);
    pose(anim);
    assert_true(dist(bone_pos(anim, 2), bone_pos(anim, 3)) < 1e-3f);
    assert_true(bone_pos(anim, 1)[2] < bone_pos(anim, 2)[2]);
    plush_anim_destroy(anim);
    plush_pmx_free(m);
}

static void test_ik_unreachable_stays_finite(void **state)
{
    (void)state;
    plush_pmx_model *m = leg_model(true);
    plush_anim *anim = make_anim(m);
    float t[3] = {0, -5, 3};
    plush_anim_set_bone_motion(anim, 3, t, NULL);
    pose(anim);
    for (int b = 0; b < 4; b++)
        for (int k = 0; k < 16; k++)
            assert_true(isfinite(plush_anim_bone_globals(anim)[b][k]));
    assert_true(fabsf(dist(bone_pos(anim, 1), bone_pos(anim, 2)) - 1) < 1e-5f);
    plush_anim_destroy(anim);
    plush_pmx_free(m);
}

static void test_ik_off(void **state)
{
    (void)state;
    plush_pmx_model *m = leg_model(false);
    plush_anim *anim = make_anim(m);
    float t[3] = {1.0f, 0.8f, 0};
    plush_anim_set_bone_motion(anim, 3, t, NULL);
    plush_anim_set_ik(anim, 3, false);
    pose(anim);
    assert_vec(bone_pos(anim, 2), 0, 0, 0, 1e-6f);
    plush_anim_set_ik(anim, 3, true);
    pose(anim);
    assert_true(dist(bone_pos(anim, 2), bone_pos(anim, 3)) < 1e-3f);
    plush_anim_destroy(anim);
    plush_pmx_free(m);
}

static void test_ik_euler_limits(void **state)
{
    (void)state;
    /* The hip limited to +-10 degrees about X and Z (no Y): the goal far to the side cannot pull it
     * further; the knee is free. */
    plush_pmx_model *m = leg_model(false);
    plush_pmx_ik_link *hip = &m->bones[3].ik_links[1];
    hip->has_limits = 1;
    hip->lower[0] = hip->lower[2] = DEG(-10);
    hip->upper[0] = hip->upper[2] = DEG(10);
    plush_anim *anim = make_anim(m);
    float t[3] = {1.5f, 1.0f, 0};
    plush_anim_set_bone_motion(anim, 3, t, NULL);
    pose(anim);
    float q[4];
    plush_anim_bone_local(anim, 0, NULL, q);
    float angle = 2.0f * acosf(fminf(1.0f, fabsf(q[3])));
    assert_true(angle <= DEG(10) * 1.4143f + 1e-4f);   /* at most both axes at their limit */
    /* The thigh turned about Z toward +X by at most 10 degrees: the knee stays near the hip's foot. */
    assert_true(bone_pos(anim, 1)[0] <= sinf(DEG(10)) + 1e-4f);
    for (int b = 0; b < 4; b++)
        assert_true(isfinite(bone_pos(anim, b)[0]) && isfinite(bone_pos(anim, b)[1]));
    plush_anim_destroy(anim);
    plush_pmx_free(m);
}

static void test_ik_goal_below_a_link(void **state)
{
    (void)state;
    /* The IK bone hangs below the hip (its root link): a step moves the goal too, so the solver must
     * keep the goal's global current. The result stays finite and the chain keeps its lengths. */
    plush_pmx_model *m = leg_model(false);
    m->bones[3].parent = 0;
    plush_anim *anim = make_anim(m);
    float t[3] = {0.5f, 0.5f, 0};
    plush_anim_set_bone_motion(anim, 3, t, NULL);
    pose(anim);
    for (int b = 0; b < 4; b++)
        for (int k = 0; k < 3; k++)
            assert_true(isfinite(bone_pos(anim, b)[k]));
    assert_true(fabsf(dist(bone_pos(anim, 1), bone_pos(anim, 2)) - 1) < 1e-5f);
    /* The goal's global is its parent's: hip global * (rest offset + motion). */
    const float *g0 = plush_anim_bone_globals(anim)[0];
    float local[3] = {0.5f, -2 + 0.5f, 0}, want[3];
    for (int k = 0; k < 3; k++)
        want[k] = g0[k] * local[0] + g0[4 + k] * local[1] + g0[8 + k] * local[2] + g0[12 + k];
    assert_vec(bone_pos(anim, 3), want[0], want[1], want[2], 1e-5f);
    plush_anim_destroy(anim);
    plush_pmx_free(m);
}

/* ---- order and physics ---------------------------------------------------------------------------------- */

static void test_after_physics_and_apply_physics(void **state)
{
    (void)state;
    /* 0 root, 1 child of 0 (physics drives it), 2 child of 1 (before physics: follows its parent),
     * 3 child of 1 with the after-physics flag. */
    plush_pmx_model *m = chain_model(3);
    plush_pmx_bone *b = pmx_fx_bones(m, 4);
    for (int i = 0; i < 4; i++)
        b[i].position[1] = (float)(i < 3 ? i : 2);
    b[1].parent = 0;
    b[2].parent = 1;
    b[3].parent = 1;
    b[3].position[0] = 1;
    b[3].flags |= PLUSH_PMX_BONE_AFTER_PHYSICS;
    plush_anim *anim = make_anim(m);
    plush_anim_update_morphs(anim);
    plush_anim_deform(anim, PLUSH_ANIM_BEFORE_PHYSICS);
    float globals[4][16];
    memcpy(globals, plush_anim_bone_globals(anim), sizeof globals);
    bool driven[4] = {false, true, false, false};
    /* Physics moved bone 1 by (5, 0, 0) and turned it 180 deg about Y. */
    float g1[16] = {-1, 0, 0, 0, 0, 1, 0, 0, 0, 0, -1, 0, 5, 1, 0, 1};
    memcpy(globals[1], g1, sizeof g1);
    plush_anim_apply_physics(anim, (const float (*)[16])globals, driven);
    assert_vec(bone_pos(anim, 1), 5, 1, 0, 1e-6f);
    assert_vec(bone_pos(anim, 2), 5, 2, 0, 1e-6f);
    plush_anim_deform(anim, PLUSH_ANIM_AFTER_PHYSICS);
    assert_vec(bone_pos(anim, 3), 5 - 1, 2, 0, 1e-6f);
    assert_vec(bone_pos(anim, 1), 5, 1, 0, 1e-6f);   /* physics' result kept */
    /* A non-finite global from physics is refused: the bone keeps the pose deform gave it. */
    plush_anim_deform(anim, PLUSH_ANIM_BEFORE_PHYSICS);
    memcpy(globals, plush_anim_bone_globals(anim), sizeof globals);
    globals[1][13] = NAN;
    plush_anim_apply_physics(anim, (const float (*)[16])globals, driven);
    assert_vec(bone_pos(anim, 1), 0, 1, 0, 1e-6f);
    assert_vec(bone_pos(anim, 2), 0, 2, 0, 1e-6f);
    plush_anim_destroy(anim);
    plush_pmx_free(m);
}

static void test_deform_order_layer(void **state)
{
    (void)state;
    /* Bone 0 (layer 1) appends the translation of bone 1 (layer 0), which appends bone 2's. Bone 1's
     * append exists only once bone 1 deformed: the layer puts it first although its index is higher. */
    plush_pmx_model *m = plush_pmx_create();
    plush_pmx_bone *b = pmx_fx_bones(m, 4);
    b[0].flags |= PLUSH_PMX_BONE_APPEND_TRANSLATE;
    b[0].append_parent = 1;
    b[0].append_ratio = 1.0f;
    b[0].layer = 1;
    b[1].flags |= PLUSH_PMX_BONE_APPEND_TRANSLATE;
    b[1].append_parent = 2;
    b[1].append_ratio = 0.5f;
    b[3].parent = 0;
    plush_anim *anim = make_anim(m);
    float t[3] = {0, 0, 4};
    plush_anim_set_bone_motion(anim, 2, t, NULL);
    pose(anim);
    assert_vec(bone_pos(anim, 1), 0, 1, 2, 1e-6f);
    assert_vec(bone_pos(anim, 0), 0, 0, 2, 1e-6f);
    assert_vec(bone_pos(anim, 3), 0, 3, 2, 1e-6f);
    /* Same model, both on layer 0: bone 0 deforms first and sees no append yet. */
    b[0].layer = 0;
    plush_anim_destroy(anim);
    anim = make_anim(m);
    plush_anim_set_bone_motion(anim, 2, t, NULL);
    pose(anim);
    assert_vec(bone_pos(anim, 0), 0, 0, 0, 1e-6f);
    plush_anim_destroy(anim);
    plush_pmx_free(m);
}

static void test_external_parent_reported(void **state)
{
    (void)state;
    plush_pmx_model *m = chain_model(2);
    m->bones[1].flags |= PLUSH_PMX_BONE_EXTERNAL_PARENT;
    plush_anim *anim = make_anim(m);
    char msg[256];
    assert_int_equal(plush_anim_unsupported(anim, msg, sizeof msg), 1);
    assert_non_null(strstr(msg, "external parent"));
    plush_anim_destroy(anim);
    m->bones[1].flags &= (uint16_t)~PLUSH_PMX_BONE_EXTERNAL_PARENT;
    anim = make_anim(m);
    assert_int_equal(plush_anim_unsupported(anim, NULL, 0), 0);
    plush_anim_destroy(anim);
    plush_pmx_free(m);
}

/* ---- morphs ----------------------------------------------------------------------------------------------- */

/* Morphs: 0 vertex (v1 +y), 1 vertex (v2 +x), 2 group {0 x 0.5, 1 x 2}, 3 flip {0 -> 0.25, 2 -> 1},
 * 4 bone (bone 0: translate (0,0,1), rotate 90 deg about Z), 5 material multiply on material 0,
 * 6 material add on every material. */
static plush_pmx_model *morph_model(void)
{
    plush_pmx_model *m = plush_pmx_create();
    pmx_fx_vertices(m, 3);
    pmx_fx_bones(m, 2);
    m->bones[1].parent = 0;
    plush_pmx_material *mat = pmx_fx_materials(m, 2);
    mat[0].diffuse[0] = 0.8f;
    mat[0].specular_power = 10;
    mat[1].diffuse[0] = 0.4f;
    plush_pmx_morph *mo = pmx_fx_morphs(m, 7);
    plush_pmx_morph_vertex *v0 = pmx_fx_morph_offsets(m, &mo[0], PLUSH_PMX_MORPH_VERTEX, 1);
    v0[0].vertex = 1;
    v0[0].offset[1] = 1;
    plush_pmx_morph_vertex *v1 = pmx_fx_morph_offsets(m, &mo[1], PLUSH_PMX_MORPH_VERTEX, 1);
    v1[0].vertex = 2;
    v1[0].offset[0] = 1;
    plush_pmx_morph_group *g = pmx_fx_morph_offsets(m, &mo[2], PLUSH_PMX_MORPH_GROUP, 2);
    g[0] = (plush_pmx_morph_group){.morph = 0, .weight = 0.5f};
    g[1] = (plush_pmx_morph_group){.morph = 1, .weight = 2.0f};
    plush_pmx_morph_group *f = pmx_fx_morph_offsets(m, &mo[3], PLUSH_PMX_MORPH_FLIP, 2);
    f[0] = (plush_pmx_morph_group){.morph = 0, .weight = 0.25f};
    f[1] = (plush_pmx_morph_group){.morph = 2, .weight = 1.0f};
    plush_pmx_morph_bone *bo = pmx_fx_morph_offsets(m, &mo[4], PLUSH_PMX_MORPH_BONE, 1);
    bo[0].bone = 0;
    bo[0].translation[2] = 1;
    quat_axis(0, 0, 1, DEG(90), bo[0].rotation);
    plush_pmx_morph_material *mm = pmx_fx_morph_offsets(m, &mo[5], PLUSH_PMX_MORPH_MATERIAL, 1);
    mm[0].material = 0;
    mm[0].operation = 0;
    for (int k = 0; k < 4; k++)
        mm[0].diffuse[k] = mm[0].edge_color[k] = mm[0].texture_tint[k] = mm[0].sphere_tint[k] = mm[0].toon_tint[k] = 1;
    for (int k = 0; k < 3; k++)
        mm[0].specular[k] = mm[0].ambient[k] = 1;
    mm[0].edge_size = 1;
    mm[0].diffuse[0] = 0.0f;       /* multiply red by 0 */
    mm[0].specular_power = 3.0f;   /* multiply power by 3 */
    mm[0].texture_tint[1] = 0.5f;
    plush_pmx_morph_material *ma = pmx_fx_morph_offsets(m, &mo[6], PLUSH_PMX_MORPH_MATERIAL, 1);
    ma[0].material = -1;
    ma[0].operation = 1;
    ma[0].diffuse[0] = 0.2f;
    ma[0].texture_tint[2] = 0.4f;
    return m;
}

static void test_group_and_flip(void **state)
{
    (void)state;
    plush_pmx_model *m = morph_model();
    plush_anim *anim = make_anim(m);
    pose(anim);
    assert_null(plush_anim_vertex_offsets(anim));

    plush_anim_set_morph(anim, 2, 0.5f);   /* group at 0.5 */
    plush_anim_set_morph(anim, 0, 0.1f);   /* plus morph 0's own slider */
    pose(anim);
    const float *w = plush_anim_morph_weights(anim);
    assert_true(fabsf(w[0] - (0.1f + 0.25f)) < 1e-6f);
    assert_true(fabsf(w[1] - 1.0f) < 1e-6f);
    const float (*off)[3] = plush_anim_vertex_offsets(anim);
    assert_non_null(off);
    assert_vec(off[1], 0, 0.35f, 0, 1e-6f);
    assert_vec(off[2], 1, 0, 0, 1e-6f);
    assert_vec(off[0], 0, 0, 0, 0);

    /* Flip at 0.4: index (int)(3 * 0.4) - 1 = 0 -> morph 0 overwritten with 0.25 (its slider 0.1 lost),
     * then the group (0.5) adds 0.25 more. */
    plush_anim_set_morph(anim, 3, 0.4f);
    pose(anim);
    w = plush_anim_morph_weights(anim);
    assert_true(fabsf(w[0] - 0.5f) < 1e-6f);
    /* Flip at 0.9: index 1 -> the group's weight becomes 1 (overwriting 0.5). */
    plush_anim_set_morph(anim, 3, 0.9f);
    pose(anim);
    w = plush_anim_morph_weights(anim);
    assert_true(fabsf(w[2] - 1.0f) < 1e-6f);
    assert_true(fabsf(w[0] - (0.1f + 0.5f)) < 1e-6f);
    assert_true(fabsf(w[1] - 2.0f) < 1e-6f);
    /* Flip at 1: clamped to the last member. Flip at 0.2: index -1, no member. */
    plush_anim_set_morph(anim, 3, 1.0f);
    pose(anim);
    assert_true(fabsf(plush_anim_morph_weights(anim)[2] - 1.0f) < 1e-6f);
    plush_anim_set_morph(anim, 3, 0.2f);
    pose(anim);
    assert_true(fabsf(plush_anim_morph_weights(anim)[2] - 0.5f) < 1e-6f);

    /* Everything off: the offsets go back to none, and the buffer holds no stale value. */
    for (size_t i = 0; i < 7; i++)
        plush_anim_set_morph(anim, i, 0.0f);
    pose(anim);
    assert_null(plush_anim_vertex_offsets(anim));
    plush_anim_set_morph(anim, 1, 1.0f);
    pose(anim);
    off = plush_anim_vertex_offsets(anim);
    assert_vec(off[1], 0, 0, 0, 0);
    assert_vec(off[2], 1, 0, 0, 1e-6f);
    plush_anim_destroy(anim);
    plush_pmx_free(m);
}

static void test_bone_morph(void **state)
{
    (void)state;
    plush_pmx_model *m = morph_model();
    plush_anim *anim = make_anim(m);
    plush_anim_set_morph(anim, 4, 0.5f);
    pose(anim);
    /* Bone 0 moved by (0,0,0.5) and turned 45 deg about Z; bone 1 one unit up from it. */
    assert_vec(bone_pos(anim, 0), 0, 0, 0.5f, 1e-6f);
    assert_vec(bone_pos(anim, 1), -sinf(DEG(45)), cosf(DEG(45)), 0.5f, 1e-5f);
    /* Added to the motion: motion translation + morph translation. */
    float t[3] = {1, 0, 0};
    plush_anim_set_bone_motion(anim, 0, t, NULL);
    pose(anim);
    assert_vec(bone_pos(anim, 0), 1, 0, 0.5f, 1e-6f);
    plush_anim_destroy(anim);
    plush_pmx_free(m);
}

static void test_material_multiply_add(void **state)
{
    (void)state;
    plush_pmx_model *m = morph_model();
    plush_anim *anim = make_anim(m);
    pose(anim);
    const plush_anim_material *mat = plush_anim_materials(anim);
    assert_true(fabsf(mat[0].diffuse[0] - 0.8f) < 1e-6f);
    assert_true(fabsf(mat[0].texture_tint[1] - 1.0f) < 1e-6f);
    plush_anim_set_morph(anim, 5, 0.5f);
    plush_anim_set_morph(anim, 6, 0.5f);
    pose(anim);
    mat = plush_anim_materials(anim);
    /* red: 0.8 * lerp(1, 0, 0.5) + 0.5 * 0.2 = 0.5; power: 10 * lerp(1, 3, 0.5) = 20. */
    assert_true(fabsf(mat[0].diffuse[0] - 0.5f) < 1e-6f);
    assert_true(fabsf(mat[0].specular_power - 20.0f) < 1e-5f);
    assert_true(fabsf(mat[0].texture_tint[1] - 0.75f) < 1e-6f);
    assert_true(fabsf(mat[0].texture_add[2] - 0.2f) < 1e-6f);
    /* material 1 only gets the add (the multiply names material 0). */
    assert_true(fabsf(mat[1].diffuse[0] - (0.4f + 0.1f)) < 1e-6f);
    assert_true(fabsf(mat[1].specular_power - m->materials[1].specular_power) < 1e-6f);
    /* Two multiplies multiply: the same morph at weight 1 twice through a group is not needed; weight 1. */
    plush_anim_set_morph(anim, 5, 1.0f);
    plush_anim_set_morph(anim, 6, 0.0f);
    pose(anim);
    mat = plush_anim_materials(anim);
    assert_true(fabsf(mat[0].diffuse[0]) < 1e-6f);
    assert_true(fabsf(mat[0].specular_power - 30.0f) < 1e-5f);
    plush_anim_destroy(anim);
    plush_pmx_free(m);
}

static void test_morph_bad_index_is_format_error(void **state)
{
    (void)state;
    plush_pmx_model *m = morph_model();
    m->morphs[0].offsets.vertex[0].vertex = 99;
    plush_anim *anim = NULL;
    plush_diag diag = pmx_fx_diag();
    assert_int_equal(plush_anim_create(m, &anim, &diag), PLUSH_E_FORMAT);
    assert_int_equal(diag.index, 0);
    plush_pmx_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rest_pose),
        cmocka_unit_test(test_two_bone_chain_rotated),
        cmocka_unit_test(test_parent_cycle_is_format_error),
        cmocka_unit_test(test_append_ratio_and_chain),
        cmocka_unit_test(test_local_append),
        cmocka_unit_test(test_ik_two_links_reach),
        cmocka_unit_test(test_ik_knee_bends_forward),
        cmocka_unit_test(test_ik_unreachable_stays_finite),
        cmocka_unit_test(test_ik_off),
        cmocka_unit_test(test_ik_euler_limits),
        cmocka_unit_test(test_ik_goal_below_a_link),
        cmocka_unit_test(test_after_physics_and_apply_physics),
        cmocka_unit_test(test_deform_order_layer),
        cmocka_unit_test(test_external_parent_reported),
        cmocka_unit_test(test_group_and_flip),
        cmocka_unit_test(test_bone_morph),
        cmocka_unit_test(test_material_multiply_add),
        cmocka_unit_test(test_morph_bad_index_is_format_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
