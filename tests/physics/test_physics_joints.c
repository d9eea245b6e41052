/* Joints on real Bullet: each of the six PMX kinds holds a dynamic body to a kinematic one within its
 * limits under gravity for 300 steps (and the body does move up to the limit, so the limit is what holds
 * it); a joint naming a missing body is skipped with a warning; every shared PMX model with rigid bodies
 * steps 120 frames at rest with finite transforms. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "physics/world_internal.h"
#include "plush/physics.h"
#include "plush/sys/physics.h"
#include "support/pmx_fixture.h"
#include "support/shared_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static plush_world *world_ok(const plush_world_desc *desc)
{
    plush_world *w = NULL;
    plush_diag d = pmx_fx_diag();
    if (plush_world_create(desc, &w, &d) != PLUSH_OK) {
        char line[600];
        plush_diag_format(&d, line, sizeof line);
        fail_msg("world: %s", line);
    }
    return w;
}

static plush_world_model *add_ok(plush_world *w, const plush_pmx_model *m, plush_diag *d)
{
    plush_world_model *wm = NULL;
    *d = pmx_fx_diag();
    if (plush_world_add_model(w, m, NULL, &wm, d) != PLUSH_OK) {
        char line[600];
        plush_diag_format(d, line, sizeof line);
        fail_msg("add_model: %s", line);
    }
    return wm;
}

/* Body 0: a kinematic box at (0, 1, 0) above the joint at the origin; body 1: a dynamic box placed at
 * b_pos. The joint has the given kind and rotation; the caller fills in the rest. */
static plush_pmx_model *pair(uint8_t type, const float b_pos[3], const float joint_rot[3])
{
    plush_pmx_model *m = plush_pmx_create();
    plush_pmx_rigid_body *r = pmx_fx_rigid_bodies(m, 2);
    r[0].shape = 1;
    r[0].mode = 0;
    r[0].position[0] = 0;
    r[0].position[1] = 1;
    r[0].size[0] = r[0].size[1] = r[0].size[2] = 0.3f;
    r[1].shape = 1;
    r[1].mode = 1;
    memcpy(r[1].position, b_pos, sizeof r[1].position);
    r[1].size[0] = r[1].size[1] = r[1].size[2] = 0.3f;
    r[1].linear_damping = r[1].angular_damping = 0.2f;
    plush_pmx_joint *j = pmx_fx_joints(m, 1);
    j->type = type;
    j->body_a = 0;
    j->body_b = 1;
    memcpy(j->rotation, joint_rot, sizeof j->rotation);
    return m;
}

/* The joint frame as each body carries it now: J_a = A * frame_a, J_b = B * frame_b; rel = J_a^-1 J_b. */
static void relative(const plush_world_model *wm, float rel[16])
{
    const plush_pmx_model *m = wm->model;
    const plush_pmx_joint *j = &m->joints[0];
    float joint[16], rest[2][16], frame[2][16], now[16], ja[16], jb[16], inv[16], ri[16];
    plush__world_mat_pmx(j->position, j->rotation, joint);
    for (int k = 0; k < 2; k++) {
        plush__world_mat_pmx(m->rigid_bodies[k].position, m->rigid_bodies[k].rotation, rest[k]);
        plush__world_mat_rigid_inverse(rest[k], ri);
        plush__world_mat_mul(ri, joint, frame[k]);
    }
    plush_world_body_transform(wm, 0, now);
    plush__world_mat_mul(now, frame[0], ja);
    plush_world_body_transform(wm, 1, now);
    plush__world_mat_mul(now, frame[1], jb);
    plush__world_mat_rigid_inverse(ja, inv);
    plush__world_mat_mul(inv, jb, rel);
}

/* Rotation angle of a rigid transform. */
static float angle_of(const float m[16])
{
    float c = (m[0] + m[5] + m[10] - 1) / 2;
    return acosf(fmaxf(-1, fminf(1, c)));
}

typedef struct extremes {
    float max_angle;     /* total rotation between the two joint frames */
    float max_offset;    /* distance between the two joint origins */
    float min_x, max_x;  /* J_b's origin along J_a's X (slider travel) */
    float max_x_axis;    /* angle between the frames' X axes (cone-twist swing) */
    float max_z_axis;    /* angle between the frames' Z axes (hinge: must stay 0) */
    float min_signed, max_signed; /* signed angle about X or Z */
} extremes;

static void extremes_init(extremes *e)
{
    *e = (extremes){.min_x = INFINITY, .max_x = -INFINITY, .min_signed = INFINITY, .max_signed = -INFINITY};
}

static void extremes_add(extremes *e, const float rel[16], int signed_axis)
{
    e->max_angle = fmaxf(e->max_angle, angle_of(rel));
    e->max_offset = fmaxf(e->max_offset, sqrtf(rel[12] * rel[12] + rel[13] * rel[13] + rel[14] * rel[14]));
    e->min_x = fminf(e->min_x, rel[12]);
    e->max_x = fmaxf(e->max_x, rel[12]);
    e->max_x_axis = fmaxf(e->max_x_axis, acosf(fmaxf(-1, fminf(1, rel[0]))));
    e->max_z_axis = fmaxf(e->max_z_axis, acosf(fmaxf(-1, fminf(1, rel[10]))));
    float a = signed_axis == 0 ? atan2f(rel[6], rel[5]) : atan2f(rel[1], rel[0]);
    e->min_signed = fminf(e->min_signed, a);
    e->max_signed = fmaxf(e->max_signed, a);
}

static void extremes_print(const char *what, const extremes *e)
{
    print_message("%s: angle %.4f offset %.4f x %.4f..%.4f x-axis %.4f z-axis %.4f signed %.4f..%.4f\n", what,
                  (double)e->max_angle, (double)e->max_offset, (double)e->min_x, (double)e->max_x,
                  (double)e->max_x_axis, (double)e->max_z_axis, (double)e->min_signed, (double)e->max_signed);
}

/* Bullet's limits are soft: a constant load holds a joint past its limit by about load * dt^2 / ERP, so
 * at 60 Hz and MMD's gravity a 1.5-unit arm settles ~0.12 rad past a 6DOF limit (at 120 Hz ~0.03), and
 * it overshoots briefly when it swings into the limit. The checks run at 120 Hz: the settled state (the
 * last 100 steps) must be within the limits up to SETTLED_* and the whole run within PEAK_*. */
#define JOINT_HZ 120
#define SETTLED_ANGLE 0.05f
#define SETTLED_DIST 0.06f
#define PEAK_ANGLE 0.2f
#define PEAK_DIST 0.3f

typedef struct joint_run {
    extremes all, settled;
} joint_run;

/* Steps 300 times and records how far the joint frames get from each other. */
static joint_run run_joint(const plush_pmx_model *m, int signed_axis)
{
    plush_world *w = world_ok(&(plush_world_desc){.physics_hz = JOINT_HZ});
    plush_diag d;
    plush_world_model *wm = add_ok(w, m, &d);
    assert_int_equal(d.warning_count, 0);
    assert_non_null(wm->joints[0]);
    joint_run r;
    extremes_init(&r.all);
    extremes_init(&r.settled);
    plush_diag sd = pmx_fx_diag();
    for (int s = 0; s < 300; s++) {
        assert_int_equal(plush_world_step(w, 1.0f / JOINT_HZ, &sd), PLUSH_OK);
        float rel[16];
        relative(wm, rel);
        for (int k = 0; k < 16; k++)
            assert_true(isfinite(rel[k]));
        extremes_add(&r.all, rel, signed_axis);
        if (s >= 200)
            extremes_add(&r.settled, rel, signed_axis);
    }
    if (getenv("JOINT_DEBUG")) {
        extremes_print("all", &r.all);
        extremes_print("settled", &r.settled);
    }
    plush_world_destroy(w);
    return r;
}

static const float no_rot[3] = {0, 0, 0};

/* B hangs beside the joint along -Z, so gravity turns it about X; rotation about X limited to
 * +-0.4 rad, everything else locked. */
static void six_dof(uint8_t type)
{
    plush_pmx_model *m = pair(type, (const float[3]){0, 0, -1.5f}, no_rot);
    plush_pmx_joint *j = &m->joints[0];
    j->angular_lower[0] = -0.4f;
    j->angular_upper[0] = 0.4f;
    if (type == PLUSH_PMX_JOINT_SPRING_6DOF) {
        j->spring_angular[0] = 5; /* weak: gravity still wins */
        j->spring_linear[1] = 0;
    }
    joint_run r = run_joint(m, 0);
    assert_true(r.settled.max_offset < SETTLED_DIST && r.all.max_offset < PEAK_DIST);
    assert_true(r.settled.min_signed >= -0.4f - SETTLED_ANGLE && r.settled.max_signed <= 0.4f + SETTLED_ANGLE);
    assert_true(r.settled.max_angle <= 0.4f + SETTLED_ANGLE && r.all.max_angle <= 0.4f + PEAK_ANGLE);
    assert_true(r.settled.max_angle > 0.35f); /* it rests on the limit (free, it would hang at pi/2) */
    plush_pmx_free(m);
}

static void test_spring_6dof(void **state)
{
    (void)state;
    six_dof(PLUSH_PMX_JOINT_SPRING_6DOF);
}

static void test_6dof(void **state)
{
    (void)state;
    six_dof(PLUSH_PMX_JOINT_6DOF);
}

static void test_p2p(void **state)
{
    (void)state;
    /* Free to turn, held at the point: it swings down from the side. */
    plush_pmx_model *m = pair(PLUSH_PMX_JOINT_P2P, (const float[3]){1.5f, 0, 0}, no_rot);
    joint_run r = run_joint(m, 2);
    assert_true(r.settled.max_offset < SETTLED_DIST && r.all.max_offset < PEAK_DIST);
    assert_true(r.all.max_angle > 1.2f);
    plush_pmx_free(m);
}

static void test_cone_twist(void **state)
{
    (void)state;
    /* Twist axis X through B; B out along +X, so gravity swings it about Z (swing span 1). */
    plush_pmx_model *m = pair(PLUSH_PMX_JOINT_CONE_TWIST, (const float[3]){1.5f, 0, 0}, no_rot);
    plush_pmx_joint *j = &m->joints[0];
    j->angular_lower[0] = 0.2f;  /* twist */
    j->angular_lower[1] = 0.35f; /* swing 2 */
    j->angular_lower[2] = 0.35f; /* swing 1 */
    j->spring_linear[0] = 1;     /* softness, bias, relaxation: the editor's defaults */
    j->spring_linear[1] = 0.3f;
    j->spring_linear[2] = 1;
    j->linear_lower[0] = 0;     /* damping */
    j->linear_upper[0] = 0.05f; /* fix threshold (Bullet default; spans below it are locked) */
    joint_run r = run_joint(m, 2);
    /* Bullet's cone-twist solves its swing limit against its point constraint: the pivot settles
     * ~0.11 apart at 120 Hz (P2P alone: ~0.04). */
    assert_true(r.settled.max_offset < 2.5f * SETTLED_DIST && r.all.max_offset < PEAK_DIST);
    assert_true(r.settled.max_x_axis <= 0.35f + SETTLED_ANGLE && r.all.max_x_axis <= 0.35f + PEAK_ANGLE);
    assert_true(r.settled.max_x_axis > 0.3f);
    plush_pmx_free(m);
}

static void test_slider(void **state)
{
    (void)state;
    /* Joint turned -90 degrees about Z: its X (the slide axis) points down. B sits at the joint and
     * slides down to the upper limit 0.8; rotation about the axis is locked (0..0). */
    plush_pmx_model *m = pair(PLUSH_PMX_JOINT_SLIDER, (const float[3]){0, 0, 0}, (const float[3]){0, 0, -1.5707964f});
    plush_pmx_joint *j = &m->joints[0];
    j->linear_lower[0] = 0;
    j->linear_upper[0] = 0.8f;
    m->rigid_bodies[0].position[1] = 0.7f; /* just above B, no overlap: 0.3 + 0.3 < 0.7 - 0 */
    joint_run r = run_joint(m, 0);
    assert_true(r.settled.min_x >= -SETTLED_DIST && r.settled.max_x <= 0.8f + SETTLED_DIST);
    assert_true(r.all.min_x >= -PEAK_DIST && r.all.max_x <= 0.8f + PEAK_DIST);
    assert_true(r.settled.min_x > 0.75f); /* it slid down to the limit */
    assert_true(r.all.max_angle < SETTLED_ANGLE);
    plush_pmx_free(m);
}

static void test_hinge(void **state)
{
    (void)state;
    /* Axis Z; B out along +X turns down about Z until the limit -0.5 .. 0.5. */
    plush_pmx_model *m = pair(PLUSH_PMX_JOINT_HINGE, (const float[3]){1.5f, 0, 0}, no_rot);
    plush_pmx_joint *j = &m->joints[0];
    j->angular_lower[0] = -0.5f;
    j->angular_upper[0] = 0.5f;
    j->spring_linear[0] = 0.9f;
    j->spring_linear[1] = 0.3f;
    j->spring_linear[2] = 1;
    joint_run r = run_joint(m, 2);
    assert_true(r.settled.max_offset < SETTLED_DIST && r.all.max_offset < PEAK_DIST);
    assert_true(r.all.max_z_axis < SETTLED_ANGLE); /* only about the axis */
    assert_true(r.settled.min_signed >= -0.5f - SETTLED_ANGLE && r.settled.max_signed <= 0.5f + SETTLED_ANGLE);
    assert_true(r.all.min_signed >= -0.5f - PEAK_ANGLE);
    assert_true(r.settled.max_signed < -0.45f);
    plush_pmx_free(m);
}

static void test_hinge_motor(void **state)
{
    (void)state;
    /* Weightless; the motor (spring_angular: on, 1 rad/s, strong) turns B about Z at 1 rad/s, free of limits
     * (low > high). */
    plush_world *w = world_ok(&(plush_world_desc){.no_gravity = true});
    plush_pmx_model *m = pair(PLUSH_PMX_JOINT_HINGE, (const float[3]){1.5f, 0, 0}, no_rot);
    plush_pmx_joint *j = &m->joints[0];
    j->angular_lower[0] = 1;
    j->angular_upper[0] = -1;
    j->spring_linear[0] = 0.9f;
    j->spring_linear[1] = 0.3f;
    j->spring_linear[2] = 1;
    j->spring_angular[0] = 1;
    j->spring_angular[1] = 1;
    j->spring_angular[2] = 100;
    m->rigid_bodies[1].angular_damping = 0;
    m->rigid_bodies[1].linear_damping = 0;
    plush_diag d;
    plush_world_model *wm = add_ok(w, m, &d);
    plush_diag sd = pmx_fx_diag();
    for (int s = 0; s < 30; s++)
        assert_int_equal(plush_world_step(w, 1.0f / 60, &sd), PLUSH_OK);
    float lin[3], ang[3];
    plush_world_body_velocity(wm, 1, lin, ang);
    assert_true(fabsf(fabsf(ang[2]) - 1) < 0.05f);
    assert_true(fabsf(ang[0]) < 0.01f && fabsf(ang[1]) < 0.01f);
    plush_world_destroy(w);
    plush_pmx_free(m);
}

static void test_slider_motor(void **state)
{
    (void)state;
    /* Weightless; the linear motor (spring_linear: on, 2 units/s, strong) drives B along the joint's X,
     * free of limits (lower > upper), rotation about the axis locked. */
    plush_world *w = world_ok(&(plush_world_desc){.no_gravity = true});
    plush_pmx_model *m = pair(PLUSH_PMX_JOINT_SLIDER, (const float[3]){0, -1, 0}, no_rot);
    plush_pmx_joint *j = &m->joints[0];
    j->position[1] = -1;
    j->linear_lower[0] = 1;
    j->linear_upper[0] = -1;
    j->spring_linear[0] = 1;
    j->spring_linear[1] = 2;
    j->spring_linear[2] = 1000;
    m->rigid_bodies[1].linear_damping = 0;
    plush_diag d;
    plush_world_model *wm = add_ok(w, m, &d);
    plush_diag sd = pmx_fx_diag();
    for (int s = 0; s < 60; s++)
        assert_int_equal(plush_world_step(w, 1.0f / 60, &sd), PLUSH_OK);
    float t[16];
    plush_world_body_transform(wm, 1, t);
    assert_true(fabsf(t[12] - 2) < 0.1f); /* 1 s at 2 units/s along X */
    assert_true(fabsf(t[13] + 1) < 1e-3f && fabsf(t[14]) < 1e-3f);
    plush_world_destroy(w);
    plush_pmx_free(m);
}

static void test_missing_body_skipped(void **state)
{
    (void)state;
    plush_pmx_model *m = pair(PLUSH_PMX_JOINT_SPRING_6DOF, (const float[3]){0, -1, 0}, no_rot);
    plush_pmx_joint *j = pmx_fx_joints(m, 4);
    for (int k = 0; k < 4; k++) {
        j[k].body_a = 0;
        j[k].body_b = 1;
    }
    j[0].body_b = -1;
    j[1].body_a = 7;
    j[2].body_a = 1; /* a body with itself */
    j[3].type = 9;   /* unknown kind */
    plush_world *w = world_ok(NULL);
    plush_diag d;
    plush_world_model *wm = add_ok(w, m, &d);
    assert_int_equal(d.warning_count, 4);
    for (int k = 0; k < 4; k++)
        assert_null(wm->joints[k]);
    plush_diag sd = pmx_fx_diag();
    assert_int_equal(plush_world_step(w, 1.0f / 30, &sd), PLUSH_OK);
    plush_world_destroy(w);
    plush_pmx_free(m);
}

/* ---- real models ------------------------------------------------------------------------------------ */

typedef struct real_stats {
    size_t models, bodies, joints;
} real_stats;

static void step_real(const char *path, void *ctx)
{
    real_stats *st = ctx;
    plush_pmx_model *m = NULL;
    plush_diag d = pmx_fx_diag();
    if (plush_pmx_read_file(path, NULL, &m, &d) != PLUSH_OK)
        return; /* the readers' own suites cover files that do not parse */
    if (m->rigid_body_count == 0) {
        plush_pmx_free(m);
        return;
    }
    plush_world *w = world_ok(&(plush_world_desc){.ground = true});
    plush_world_model *wm = NULL;
    d = pmx_fx_diag();
    if (plush_world_add_model(w, m, NULL, &wm, &d) != PLUSH_OK) {
        char line[600];
        plush_diag_format(&d, line, sizeof line);
        fail_msg("%s: %s", path, line);
    }
    /* Bones at rest every frame; what get_bones writes back goes to a separate buffer. */
    size_t nb = m->bone_count ? m->bone_count : 1;
    float (*g)[16] = malloc(nb * sizeof *g), (*out)[16] = malloc(nb * sizeof *out);
    assert_true(g && out);
    for (size_t b = 0; b < m->bone_count; b++) {
        plush__world_mat_identity(g[b]);
        memcpy(g[b] + 12, m->bones[b].position, 3 * sizeof(float));
    }
    for (int f = 0; f < 120; f++) {
        plush_world_set_bones(wm, (const float(*)[16])g);
        assert_int_equal(plush_world_step(w, 1.0f / 30, &d), PLUSH_OK);
        memcpy(out, g, nb * sizeof *g);
        plush_world_get_bones(wm, out, NULL);
        for (size_t b = 0; b < m->bone_count; b++)
            for (int k = 0; k < 16; k++)
                if (!isfinite(out[b][k]))
                    fail_msg("%s: bone %zu not finite at frame %d", path, b, f);
    }
    for (size_t i = 0; i < m->rigid_body_count; i++) {
        float t[16];
        plush_world_body_transform(wm, i, t);
        for (int k = 0; k < 16; k++)
            if (!isfinite(t[k]))
                fail_msg("%s: rigid body %zu not finite after 120 frames", path, i);
    }
    st->models++;
    st->bodies += m->rigid_body_count;
    st->joints += m->joint_count;
    free(g);
    free(out);
    plush_world_destroy(w);
    plush_pmx_free(m);
}

static void test_real_models(void **state)
{
    (void)state;
    real_stats st = {0};
    test_each_shared_file(".pmx", step_real, &st);
    if (st.models == 0)
        skip();
    print_message("%zu models, %zu rigid bodies, %zu joints stepped 120 frames\n", st.models, st.bodies, st.joints);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spring_6dof),
        cmocka_unit_test(test_6dof),
        cmocka_unit_test(test_p2p),
        cmocka_unit_test(test_cone_twist),
        cmocka_unit_test(test_slider),
        cmocka_unit_test(test_hinge),
        cmocka_unit_test(test_hinge_motor),
        cmocka_unit_test(test_slider_motor),
        cmocka_unit_test(test_missing_body_skipped),
        cmocka_unit_test(test_real_models),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
