/* IK as the MMD-compatible runtimes solve it (the MMD rules docs/ik.md states): one case per
 * rule, every expected value worked out by hand from the rule, then knees and feet on the shared models
 * and motions. */
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

static const float *bone_pos(const plush_anim *anim, size_t b) { return &plush_anim_bone_globals(anim)[b][12]; }

static float dist(const float *a, const float *b)
{
    float d0 = a[0] - b[0], d1 = a[1] - b[1], d2 = a[2] - b[2];
    return sqrtf(d0 * d0 + d1 * d1 + d2 * d2);
}

static void quat_axis(float x, float y, float z, float angle, float q[4])
{
    float s = sinf(0.5f * angle);
    q[0] = x * s, q[1] = y * s, q[2] = z * s, q[3] = cosf(0.5f * angle);
}

static void assert_quat(const float got[4], const float want[4], float tol)
{
    float sign = got[0] * want[0] + got[1] * want[1] + got[2] * want[2] + got[3] * want[3] < 0 ? -1.0f : 1.0f;
    for (int k = 0; k < 4; k++)
        if (fabsf(sign * got[k] - want[k]) > tol)
            fail_msg("got (%g %g %g %g), want (%g %g %g %g)", got[0], got[1], got[2], got[3], want[0], want[1],
                     want[2], want[3]);
}

/* A chain of links hanging from the origin: bone i at positions[i], each the child of the one before; the
 * last is the effector; then the IK bone, a root at the effector's rest position, moved by the test. */
static plush_pmx_model *chain(size_t n, const float (*positions)[3], int loops, float unit)
{
    plush_pmx_model *m = plush_pmx_create();
    plush_pmx_bone *b = pmx_fx_bones(m, n + 1);
    for (size_t i = 0; i < n; i++) {
        memcpy(b[i].position, positions[i], sizeof b[i].position);
        b[i].parent = i ? (int32_t)i - 1 : -1;
    }
    memcpy(b[n].position, positions[n - 1], sizeof b[n].position);
    b[n].flags |= PLUSH_PMX_BONE_IK | PLUSH_PMX_BONE_TRANSLATABLE;
    b[n].ik_target = (int32_t)n - 1;
    b[n].ik_loop_count = loops;
    b[n].ik_limit_angle = unit;
    b[n].ik_link_count = (uint32_t)n - 1;
    b[n].ik_links = pmx_fx_alloc(m, n - 1, sizeof *b[n].ik_links);
    for (size_t k = 0; k < n - 1; k++)
        b[n].ik_links[k].bone = (int32_t)(n - 2 - k); /* from the effector towards the root */
    return m;
}

static void limits(plush_pmx_ik_link *l, float x0, float x1, float y0, float y1, float z0, float z1)
{
    l->has_limits = 1;
    l->lower[0] = x0, l->upper[0] = x1, l->lower[1] = y0, l->upper[1] = y1, l->lower[2] = z0, l->upper[2] = z1;
}

/* Poses the chain with the IK bone (index goal_bone) moved to goal. */
static plush_anim *solve(const plush_pmx_model *m, size_t goal_bone, const float goal[3], size_t turned,
                         const float turned_q[4])
{
    plush_anim *anim = NULL;
    plush_diag d = pmx_fx_diag();
    assert_int_equal(plush_anim_create(m, &anim, &d), PLUSH_OK);
    float t[3];
    for (int k = 0; k < 3; k++)
        t[k] = goal[k] - m->bones[goal_bone].position[k];
    plush_anim_set_bone_motion(anim, goal_bone, t, NULL);
    if (turned_q)
        plush_anim_set_bone_motion(anim, turned, NULL, turned_q);
    plush_anim_update_morphs(anim);
    plush_anim_deform(anim, PLUSH_ANIM_BEFORE_PHYSICS);
    plush_anim_deform(anim, PLUSH_ANIM_AFTER_PHYSICS);
    return anim;
}

/* Rules 1 and 7: link 0 (next to the effector) has all-zero limits: it is skipped and keeps the motion's
 * rotation; link 1 (the root) is free and its step is capped at unit * 2. One loop. */
static void test_step_cap_and_zero_limit_link(void **state)
{
    (void)state;
    const float pos[3][3] = {{0, 0, 0}, {0, -1, 0}, {0, -2, 0}};
    plush_pmx_model *m = chain(3, pos, 1, 0.1f);
    limits(&m->bones[3].ik_links[0], 0, 0, 0, 0, 0, 0);
    float bend[4];
    quat_axis(0, 0, 1, 0.3f, bend); /* the motion turns the lower link 0.3 about Z */
    const float goal[3] = {2, 0, 0};
    plush_anim *anim = solve(m, 3, goal, 1, bend);
    float q[4];
    plush_anim_bone_local(anim, 1, NULL, q);
    assert_quat(q, bend, 1e-6f);                         /* rule 7 */
    plush_anim_bone_local(anim, 0, NULL, q);
    float angle = 2.0f * acosf(fminf(1.0f, fabsf(q[3])));
    assert_true(fabsf(angle - 0.2f) < 1e-5f);             /* rule 1: 0.1 * (1 + 1), not 0.1 */
    assert_true(fabsf(q[0]) < 1e-6f && fabsf(q[1]) < 1e-6f && q[2] * (q[3] < 0 ? -1 : 1) > 0); /* about +Z */
    plush_anim_destroy(anim);
    plush_pmx_free(m);
}

/* Rules 2, 3 and 4 on a knee limited to X in [-1, -0.1], straight, unit 0.3, two loops (the first in
 * axis mode). The goal needs +0.5 about X. Loop 0: +0.3 (capped) is past the upper limit, mirrored to
 * 2 * -0.1 - 0.3 = -0.5. Loop 1 (free): the goal is 1.0 away, capped at 0.3: -0.5 + 0.3 = -0.2. A plain
 * clamp would give -0.1 both times. */
static void test_knee_mirrored_at_its_limit(void **state)
{
    (void)state;
    const float pos[2][3] = {{0, 0, 0}, {0, -1, 0}};
    plush_pmx_model *m = chain(2, pos, 2, 0.3f);
    limits(&m->bones[2].ik_links[0], -1.0f, -0.1f, 0, 0, 0, 0);
    const float goal[3] = {0, -cosf(0.5f), -sinf(0.5f)};
    plush_anim *anim = solve(m, 2, goal, 0, NULL);
    float q[4], want[4];
    plush_anim_bone_local(anim, 0, NULL, q);
    quat_axis(1, 0, 0, -0.2f, want);
    assert_quat(q, want, 1e-5f);
    plush_anim_destroy(anim);
    plush_pmx_free(m);
}

/* Rule 2 off the axis plane: the effector sits off the knee's X axis, at (0.6, -0.8, 0), the goal that
 * vector turned 0.5 about X. Loop 0 turns about X by the full 3D angle between them, acos(0.36 + 0.64
 * cos 0.5) = 0.39985, not the projected 0.5 (which would reach the goal at once); loop 1 takes the free step
 * that carries the effector onto the goal direction and keeps its X angle (Y and Z limited to 0, order ZYX
 * since X's limits pass 90 degrees). */
static void test_knee_full_angle_about_its_axis(void **state)
{
    (void)state;
    const float pos[2][3] = {{0, 0, 0}, {0.6f, -0.8f, 0}};
    plush_pmx_model *m = chain(2, pos, 2, 3.0f);
    limits(&m->bones[2].ik_links[0], -3.0f, 3.0f, 0, 0, 0, 0);
    const float goal[3] = {0.6f, -0.8f * cosf(0.5f), -0.8f * sinf(0.5f)};
    plush_anim *anim = solve(m, 2, goal, 0, NULL);
    /* the expected value, step by step in double */
    double phi = acos(0.36 + 0.64 * cos(0.5));
    double e[3] = {0.6, -0.8 * cos(phi), -0.8 * sin(phi)}, t[3] = {goal[0], goal[1], goal[2]};
    double w[3] = {e[1] * t[2] - e[2] * t[1], e[2] * t[0] - e[0] * t[2], e[0] * t[1] - e[1] * t[0]};
    double wn = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    double a = atan2(wn, e[0] * t[0] + e[1] * t[1] + e[2] * t[2]);
    double s = sin(a / 2) / wn, st[4] = {w[0] * s, w[1] * s, w[2] * s, cos(a / 2)};
    double kx[4] = {sin(phi / 2), 0, 0, cos(phi / 2)}, r[4];
    r[0] = st[3] * kx[0] + st[0] * kx[3] + st[1] * kx[2] - st[2] * kx[1];
    r[1] = st[3] * kx[1] - st[0] * kx[2] + st[1] * kx[3] + st[2] * kx[0];
    r[2] = st[3] * kx[2] + st[0] * kx[1] - st[1] * kx[0] + st[2] * kx[3];
    r[3] = st[3] * kx[3] - st[0] * kx[0] - st[1] * kx[1] - st[2] * kx[2];
    /* ZYX: x = atan2(R21, R22) */
    double r21 = 2 * (r[1] * r[2] + r[3] * r[0]), r22 = 1 - 2 * (r[0] * r[0] + r[1] * r[1]);
    float want[4], q[4];
    quat_axis(1, 0, 0, (float)atan2(r21, r22), want);
    plush_anim_bone_local(anim, 0, NULL, q);
    assert_quat(q, want, 1e-5f);
    assert_true(dist(bone_pos(anim, 1), goal) > 1e-3f); /* not the projected angle, which reaches it */
    plush_anim_destroy(anim);
    plush_pmx_free(m);
}

/* Rule 5: the goal needs 0.8 about Y, the Y limits stop at 0.3: each Euler order (chosen from the limits)
 * gives the same Ry(0.3). The middle angle of XZY (Z) is capped at 88 degrees
 * (a goal 1.56 rad about Z, 89.4 degrees, within wide limits ends at 88 degrees). One free loop, no cap. */
static void test_euler_orders(void **state)
{
    (void)state;
    const float pos[2][3] = {{0, 0, 0}, {0, 0, -1}};
    const float lim[3][6] = {{-0.5f, 0.5f, -0.3f, 0.3f, -0.5f, 0.5f},   /* YXZ: X inside +-90 deg */
                             {-2, 2, -0.3f, 0.3f, -2, 2},               /* ZYX: Y inside */
                             {-2, 2, -2, 0.3f, -0.5f, 0.5f}};           /* XZY: neither */
    const float goal[3] = {-sinf(0.8f), 0, -cosf(0.8f)};
    for (int o = 0; o < 3; o++) {
        plush_pmx_model *m = chain(2, pos, 1, 4.0f);
        limits(&m->bones[2].ik_links[0], lim[o][0], lim[o][1], lim[o][2], lim[o][3], lim[o][4], lim[o][5]);
        plush_anim *anim = solve(m, 2, goal, 0, NULL);
        float q[4], want[4];
        plush_anim_bone_local(anim, 0, NULL, q);
        quat_axis(0, 1, 0, 0.3f, want);
        assert_quat(q, want, 1e-5f);
        plush_anim_destroy(anim);
        plush_pmx_free(m);
    }
    const float down[2][3] = {{0, 0, 0}, {0, -1, 0}};
    plush_pmx_model *m = chain(2, down, 1, 4.0f);
    limits(&m->bones[2].ik_links[0], -2, 2, -2, 2, -2, 2);
    const float g2[3] = {sinf(1.56f), -cosf(1.56f), 0};
    plush_anim *anim = solve(m, 2, g2, 0, NULL);
    float q[4], want[4];
    plush_anim_bone_local(anim, 0, NULL, q);
    quat_axis(0, 0, 1, 88.0f * 3.14159265f / 180.0f, want);
    assert_quat(q, want, 1e-5f);
    plush_anim_destroy(anim);
    plush_pmx_free(m);
}

/* Rule 6: within 1e-4 of the goal the solve stops (no step at all when it starts there); otherwise every
 * loop runs -- a goal out of reach leaves a straight free chain pointing at it, nothing restored. */
static void test_stopping(void **state)
{
    (void)state;
    const float pos[3][3] = {{0, 0, 0}, {0, -1, 0}, {0, -2, 0}};
    plush_pmx_model *m = chain(3, pos, 10, 2.0f);
    const float near[3] = {0, -2, 0.00005f};
    plush_anim *anim = solve(m, 3, near, 0, NULL);
    float q[4], id[4] = {0, 0, 0, 1};
    plush_anim_bone_local(anim, 0, NULL, q);
    assert_quat(q, id, 0);
    plush_anim_destroy(anim);
    const float far[3] = {3, -3, 0};
    anim = solve(m, 3, far, 0, NULL);
    const float *e = bone_pos(anim, 2), *k = bone_pos(anim, 1);
    /* the effector on the line from the root to the goal, at the chain's length; the middle joint close to
     * that line after ten loops (CCD straightens an out-of-reach chain only gradually) */
    assert_true(fabsf(e[0] - 2 * 0.70710678f) < 1e-3f && fabsf(e[1] + 2 * 0.70710678f) < 1e-3f);
    assert_true(fabsf(k[0] + k[1]) < 0.05f && fabsf(dist(k, (const float[3]){0, 0, 0}) - 1) < 1e-5f);
    plush_anim_destroy(anim);
    plush_pmx_free(m);
}

#ifndef OLD_0
#include "test_anim_ik_old.h"
#endif

/* ---- the shared models and motions ------------------------------------------------------------------ */

typedef struct ik_stats {
    size_t knee_solves, reached, flipped, lost;
    char got[4096];           /* per knee solve: '1' when the foot is within 1e-3 of its goal */
    const char *old;          /* the same from the solver before commit c872529 */
} ik_stats;

/* Knee chains: the first link limited to X alone. The foot must be within 1e-3 of its goal wherever the
 * solver before this one put it there (its results, one character per solve, are in the table below);
 * the knee's rotation stays about X inside its limits (a flipped knee would leave them). */
static void check_knees(const plush_pmx_model *m, const plush_anim *anim, ik_stats *st)
{
    const float (*g)[16] = plush_anim_bone_globals(anim);
    for (size_t b = 0; b < m->bone_count; b++) {
        const plush_pmx_bone *ik = &m->bones[b];
        if (!(ik->flags & PLUSH_PMX_BONE_IK) || ik->ik_target < 0 || ik->ik_link_count != 2)
            continue;
        const plush_pmx_ik_link *knee = &ik->ik_links[0];
        if (!knee->has_limits || knee->lower[1] != 0 || knee->upper[1] != 0 || knee->lower[2] != 0 ||
            knee->upper[2] != 0 || (knee->lower[0] == 0 && knee->upper[0] == 0))
            continue;
        size_t i = st->knee_solves++;
        bool reached = dist(g[ik->ik_target] + 12, g[b] + 12) < 1e-3f;
        st->reached += reached;
        if (i + 1 < sizeof st->got)
            st->got[i] = reached ? '1' : '0', st->got[i + 1] = '\0';
        if (st->old && i < strlen(st->old) && st->old[i] == '1' && !reached)
            st->lost++;
        float q[4];
        plush_anim_bone_local(anim, (size_t)knee->bone, NULL, q);
        float s = q[3] < 0 ? -1.0f : 1.0f, x = 2.0f * atan2f(s * q[0], s * q[3]);
        float lo = fminf(knee->lower[0], knee->upper[0]), hi = fmaxf(knee->lower[0], knee->upper[0]);
        st->flipped += fabsf(q[1]) > 1e-4f || fabsf(q[2]) > 1e-4f || x < lo - 1e-4f || x > hi + 1e-4f;
    }
}

static void run_motion(const char *model_path, const char *motion_path, ik_stats *st)
{
    plush_diag d = pmx_fx_diag();
    plush_pmx_model *m = NULL;
    plush_vmd_motion *v = NULL;
    plush_motion *mo = NULL;
    plush_anim *anim = NULL;
    assert_int_equal(plush_pmx_read_file(model_path, NULL, &m, &d), PLUSH_OK);
    assert_int_equal(plush_vmd_read_file(motion_path, &v, &d), PLUSH_OK);
    assert_int_equal(plush_motion_bind_vmd(m, v, &mo, &d), PLUSH_OK);
    assert_int_equal(plush_anim_create(m, &anim, &d), PLUSH_OK);
    uint32_t last = plush_vmd_last_frame(v);
    for (uint32_t f = 0; f <= last + 1; f++)
        for (int half = 0; half < 2; half++) {
            plush_anim_sample(anim, mo, (float)f + 0.5f * (float)half);
            plush_anim_update_morphs(anim);
            plush_anim_deform(anim, PLUSH_ANIM_BEFORE_PHYSICS);
            plush_anim_deform(anim, PLUSH_ANIM_AFTER_PHYSICS);
            check_knees(m, anim, st);
        }
    plush_anim_destroy(anim);
    plush_motion_free(mo);
    plush_vmd_free(v);
    plush_pmx_free(m);
}

static void test_shared_knees(void **state)
{
    (void)state;
    /* model, motion, and which knee solves the solver before commit c872529 brought within 1e-3 (frames 0 to
     * the last key + 1, each whole and at .5; knee chains in bone order) */
    static const char *const cases[][3] = {
        {"alicia/Alicia_solid.pmx", "mmd_base/サンプルモーション3.vmd", OLD_0},
        {"alicia/Alicia_solid.pmx", "mmd_base/サンプルモーション4.vmd", OLD_1},
        {"alicia/Alicia_solid.pmx", "mmd_base/サンプルモーション_0046.vmd", OLD_2},
        {"pmx_tailor/01_基本の使い方.pmx", "mmd_base/サンプルモーション3.vmd", OLD_3},
        {"pmx_tailor/04_色々な使い方_裾.pmx", "mmd_base/サンプルモーション4.vmd", OLD_4},
        {"blender2pmxem/sample_finish.pmx", "mmd_base/サンプルモーション4.vmd", OLD_5},
        {"blender2pmxem/sample_finish.pmx", "mmd_base/サンプルモーション_0046.vmd", OLD_6},
    };
    size_t solves = 0, reached = 0, old_reached = 0, lost = 0, flipped = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char model[512], motion[512];
        snprintf(model, sizeof model, "%s/%s", SHARED_MMD, cases[i][0]);
        snprintf(motion, sizeof motion, "%s/%s", SHARED_MMD, cases[i][1]);
        ik_stats st = {.old = cases[i][2]};
        run_motion(model, motion, &st);
        if (getenv("PLUSH_IK_PRINT"))
            printf("#define OLD_%zu \"%s\"\n", i, st.got);
        if (!getenv("PLUSH_IK_PRINT"))
            assert_int_equal(strlen(cases[i][2]), st.knee_solves);
        for (const char *c = cases[i][2]; *c; c++)
            old_reached += *c == '1';
        solves += st.knee_solves, reached += st.reached, lost += st.lost, flipped += st.flipped;
    }
    printf("knee IK on the shared models: %zu solves, %zu within 1e-3 of the goal (the solver before: %zu), "
           "%zu lost, %zu flipped\n", solves, reached, old_reached, lost, flipped);
    assert_true(solves > 100);
    assert_int_equal(lost, 0);
    assert_int_equal(flipped, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_step_cap_and_zero_limit_link),
        cmocka_unit_test(test_knee_mirrored_at_its_limit),
        cmocka_unit_test(test_knee_full_angle_about_its_axis),
        cmocka_unit_test(test_euler_orders),
        cmocka_unit_test(test_stopping),
        cmocka_unit_test(test_shared_knees),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
