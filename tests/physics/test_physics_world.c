/* The physics world on real Bullet (libplush_physics.so): a box coming to rest on the ground at 60 and
 * 120 Hz, collision filtering both ways, the three body modes exchanging poses with their bones, impulses,
 * reset, mass-0 dynamic bodies, determinism, bad arguments, and the message when the library cannot
 * be found (from a copy of this binary in an empty directory). Joints: test_physics_joints.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "physics/world_internal.h"
#include "plush/physics.h"
#include "plush/sys/physics.h"
#include "plush/sys/core.h"
#include "support/cli_run.h"
#include "support/pmx_fixture.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define TRY_CREATE_FLAG "--try-create-world"

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

static plush_world_model *add_ok(plush_world *w, const plush_pmx_model *m, const float (*globals)[16],
                                 plush_diag *out)
{
    plush_world_model *wm = NULL;
    plush_diag d = pmx_fx_diag();
    if (plush_world_add_model(w, m, globals, &wm, &d) != PLUSH_OK) {
        char line[600];
        plush_diag_format(&d, line, sizeof line);
        fail_msg("add_model: %s", line);
    }
    if (out)
        *out = d;
    return wm;
}

static void step_n(plush_world *w, int n, float dt)
{
    plush_diag d = pmx_fx_diag();
    for (int i = 0; i < n; i++)
        assert_int_equal(plush_world_step(w, dt, &d), PLUSH_OK);
}

/* One body on no bone. */
static plush_pmx_rigid_body *body(plush_pmx_model *m, size_t i, uint8_t shape, uint8_t mode, float x, float y,
                                  float z, float size)
{
    plush_pmx_rigid_body *r = &m->rigid_bodies[i];
    r->shape = shape;
    r->mode = mode;
    r->position[0] = x;
    r->position[1] = y;
    r->position[2] = z;
    r->size[0] = r->size[1] = r->size[2] = size;
    return r;
}

static void translation(float m[16], float x, float y, float z)
{
    plush__world_mat_identity(m);
    m[12] = x;
    m[13] = y;
    m[14] = z;
}

static void expect_mat_near(const float a[16], const float b[16], float tol)
{
    for (int k = 0; k < 16; k++)
        if (fabsf(a[k] - b[k]) > tol)
            fail_msg("element %d: %g != %g (tolerance %g)", k, (double)a[k], (double)b[k], (double)tol);
}

/* ---- resting on the ground ----------------------------------------------------------------------- */

static void box_comes_to_rest(float hz)
{
    plush_world *w = world_ok(&(plush_world_desc){.ground = true, .physics_hz = hz});
    plush_pmx_model *m = plush_pmx_create();
    pmx_fx_rigid_bodies(m, 1);
    const float half = 2.0f;
    body(m, 0, 1, 1, 0, 8, 0, half)->rotation[1] = 0.3f;
    plush_world_model *wm = add_ok(w, m, NULL, NULL);
    step_n(w, 240, 1.0f / 30); /* 8 s */
    float t[16], lin[3], ang[3];
    plush_world_body_transform(wm, 0, t);
    plush_world_body_velocity(wm, 0, lin, ang);
    assert_true(fabsf(t[13] - half) <= 0.01f * half);
    assert_true(fabsf(lin[1]) < 0.05f);
    assert_true(fabsf(t[5] - 1) < 1e-3f); /* flat on its face: Y still up */
    assert_true(plush_world_step_count(w) == (uint64_t)(240 * hz / 30));
    plush_world_destroy(w);
    plush_pmx_free(m);
}

static void test_box_rests_on_ground(void **state)
{
    (void)state;
    box_comes_to_rest(60);
}

static void test_box_rests_at_120hz(void **state)
{
    (void)state;
    box_comes_to_rest(120);
}

static void test_ground_height_and_step_carry(void **state)
{
    (void)state;
    plush_world *w = world_ok(&(plush_world_desc){.ground = true, .ground_y = -3, .physics_hz = 60});
    plush_pmx_model *m = plush_pmx_create();
    pmx_fx_rigid_bodies(m, 1);
    body(m, 0, 0, 1, 0, 2, 0, 1.5f);
    plush_world_model *wm = add_ok(w, m, NULL, NULL);
    plush_diag d = pmx_fx_diag();
    /* 1/120 s twice makes one fixed step; the half step is carried, not lost or rounded up. */
    assert_int_equal(plush_world_step(w, 1.0f / 120, &d), PLUSH_OK);
    assert_true(plush_world_step_count(w) == 0);
    assert_int_equal(plush_world_step(w, 1.0f / 120, &d), PLUSH_OK);
    assert_true(plush_world_step_count(w) == 1);
    /* A long frame takes all of its steps. */
    assert_int_equal(plush_world_step(w, 1.0f, &d), PLUSH_OK);
    assert_true(plush_world_step_count(w) == 61);
    assert_true(plush_world_dropped_time(w) == 0 && d.warning_count == 0);
    step_n(w, 200, 1.0f / 30);
    float t[16];
    plush_world_body_transform(wm, 0, t);
    assert_true(fabsf(t[13] - (-3 + 1.5f)) <= 0.015f);
    plush_world_destroy(w);
    plush_pmx_free(m);
}

/* A free-falling body after 3 s, stepped in frames of frame_dt seconds. */
static float fall_after_3s(float frame_dt, int max_substeps, double *dropped, plush_diag *d)
{
    plush_world *w = world_ok(&(plush_world_desc){.physics_hz = 60, .max_substeps = max_substeps});
    plush_pmx_model *m = plush_pmx_create();
    pmx_fx_rigid_bodies(m, 1);
    body(m, 0, 0, 1, 0, 0, 0, 1)->linear_damping = 0;
    plush_world_model *wm = add_ok(w, m, NULL, NULL);
    int frames = (int)lroundf(3.0f / frame_dt);
    for (int i = 0; i < frames; i++)
        assert_int_equal(plush_world_step(w, frame_dt, d), PLUSH_OK);
    float t[16];
    plush_world_body_transform(wm, 0, t);
    *dropped = plush_world_dropped_time(w);
    plush_world_destroy(w);
    plush_pmx_free(m);
    return t[13];
}

/* Low frame rates: one frame per second simulates the same 3 s as 30 frames per second. */
static void test_long_frames_take_every_step(void **state)
{
    (void)state;
    plush_diag d = pmx_fx_diag();
    double dropped = -1;
    float at30 = fall_after_3s(1.0f / 30, 0, &dropped, &d);
    assert_true(dropped == 0);
    float at1 = fall_after_3s(1.0f, 0, &dropped, &d);
    assert_true(dropped == 0 && d.warning_count == 0);
    /* Free fall without damping: about 0.5 * 98 * 3^2 = 441 units. */
    assert_true(at30 < -400 && at30 > -480);
    assert_true(fabsf(at1 - at30) <= 0.01f * fabsf(at30));
    /* A guard set low drops time, with a warning and the seconds counted: 3 frames of 1 s, 10 of 60 steps. */
    float capped = fall_after_3s(1.0f, 10, &dropped, &d);
    assert_true(fabs(dropped - 3 * 50.0 / 60) < 1e-6);
    assert_true(d.warning_count == 3);
    assert_true(capped > at1 + 100);
}

/* ---- collision filtering ------------------------------------------------------------------------- */

/* A kinematic sphere at the origin and a dynamic one overlapping it, weightless: they separate only
 * when they collide. Returns how far apart the centres end. */
static float overlap_distance(uint8_t group_a, uint16_t mask_a, uint8_t group_b, uint16_t mask_b)
{
    plush_world *w = world_ok(&(plush_world_desc){.no_gravity = true});
    plush_pmx_model *m = plush_pmx_create();
    pmx_fx_rigid_bodies(m, 2);
    plush_pmx_rigid_body *a = body(m, 0, 0, 0, 0, 0, 0, 1);
    plush_pmx_rigid_body *b = body(m, 1, 0, 1, 0.5f, 0, 0, 1);
    a->group = group_a;
    a->mask = mask_a;
    b->group = group_b;
    b->mask = mask_b;
    plush_world_model *wm = add_ok(w, m, NULL, NULL);
    step_n(w, 60, 1.0f / 30);
    float t[16];
    plush_world_body_transform(wm, 1, t);
    plush_world_destroy(w);
    plush_pmx_free(m);
    return sqrtf(t[12] * t[12] + t[13] * t[13] + t[14] * t[14]);
}

static void test_collision_filter(void **state)
{
    (void)state;
    /* Masks including each other's group: pushed apart to at least the sum of the radii. */
    assert_true(overlap_distance(0, 0xffff, 1, 0xffff) > 1.9f);
    assert_true(overlap_distance(3, 1u << 5, 5, 1u << 3) > 1.9f);
    /* Excluding each other: they pass through, nothing moves the dynamic sphere. */
    float apart = overlap_distance(0, (uint16_t)~(1u << 1), 1, (uint16_t)~(1u << 0));
    assert_true(fabsf(apart - 0.5f) < 1e-4f);
    /* One-sided: A accepts B, B refuses A's group: still no contact. */
    apart = overlap_distance(0, 0xffff, 1, (uint16_t)~(1u << 0));
    assert_true(fabsf(apart - 0.5f) < 1e-4f);
    apart = overlap_distance(0, (uint16_t)~(1u << 1), 1, 0xffff);
    assert_true(fabsf(apart - 0.5f) < 1e-4f);
}

static void test_ground_mask(void **state)
{
    (void)state;
    /* ground_mask without group 2's bit: a group-2 body falls through the ground. */
    plush_world *w = world_ok(&(plush_world_desc){.ground = true, .ground_mask = (uint16_t)~(1u << 2)});
    plush_pmx_model *m = plush_pmx_create();
    pmx_fx_rigid_bodies(m, 2);
    body(m, 0, 0, 1, 0, 3, 0, 1)->group = 2;
    body(m, 1, 0, 1, 5, 3, 0, 1)->group = 1;
    plush_world_model *wm = add_ok(w, m, NULL, NULL);
    step_n(w, 60, 1.0f / 30);
    float t[16];
    plush_world_body_transform(wm, 0, t);
    assert_true(t[13] < -5);
    plush_world_body_transform(wm, 1, t);
    assert_true(fabsf(t[13] - 1) < 0.02f);
    plush_world_destroy(w);
    plush_pmx_free(m);
}

/* ---- bone exchange --------------------------------------------------------------------------------- */

/* Two bones: 0 at (0, 10, 0), 1 at (4, 10, 0); body 0 on bone 0, body 1 on bone 1. */
static plush_pmx_model *two_bone_model(uint8_t mode0, uint8_t mode1)
{
    plush_pmx_model *m = plush_pmx_create();
    plush_pmx_bone *b = pmx_fx_bones(m, 3);
    b[0].position[1] = 10;
    b[1].position[0] = 4;
    b[1].position[1] = 10;
    b[2].position[0] = -4; /* no body */
    pmx_fx_rigid_bodies(m, 2);
    plush_pmx_rigid_body *r0 = body(m, 0, 1, mode0, 0, 11, 0, 0.5f);
    r0->bone = 0;
    r0->rotation[0] = 0.2f;
    r0->rotation[1] = 0.4f;
    plush_pmx_rigid_body *r1 = body(m, 1, 2, mode1, 4, 9, 0, 0.5f);
    r1->bone = 1;
    r1->rotation[2] = 0.3f;
    return m;
}

static void rest_globals(const plush_pmx_model *m, float (*g)[16])
{
    for (size_t i = 0; i < m->bone_count; i++)
        translation(g[i], m->bones[i].position[0], m->bones[i].position[1], m->bones[i].position[2]);
}

static void test_add_at_pose(void **state)
{
    (void)state;
    /* Added with bone 1 turned and moved: body 1 starts at bone * offset, not at its PMX pose. */
    plush_world *w = world_ok(NULL);
    plush_pmx_model *m = two_bone_model(0, 1);
    float g[3][16], pmx[16], off[16], rest_inv[16], want[16], got[16];
    rest_globals(m, g);
    plush__world_mat_pmx((const float[3]){1, 12, 2}, (const float[3]){0.3f, -0.2f, 0.1f}, g[1]);
    plush_world_model *wm = add_ok(w, m, (const float(*)[16])g, NULL);
    plush__world_mat_pmx(m->rigid_bodies[1].position, m->rigid_bodies[1].rotation, pmx);
    float rest[16];
    translation(rest, 4, 10, 0);
    plush__world_mat_rigid_inverse(rest, rest_inv);
    plush__world_mat_mul(rest_inv, pmx, off);
    plush__world_mat_mul(g[1], off, want);
    plush_world_body_transform(wm, 1, got);
    expect_mat_near(got, want, 1e-5f);
    plush_world_destroy(w);
    plush_pmx_free(m);
}

static void test_mode0_follows_bone(void **state)
{
    (void)state;
    plush_world *w = world_ok(&(plush_world_desc){.physics_hz = 120});
    plush_pmx_model *m = two_bone_model(0, 0);
    float g[3][16], want[16], got[16], pmx[16];
    rest_globals(m, g);
    plush_world_model *wm = add_ok(w, m, (const float(*)[16])g, NULL);
    /* At rest a body sits where the file puts it. */
    plush_world_body_transform(wm, 0, got);
    plush__world_mat_pmx(m->rigid_bodies[0].position, m->rigid_bodies[0].rotation, pmx);
    expect_mat_near(got, pmx, 1e-5f);
    /* Animate bone 0: a turn about Y and a move; the body follows at bone * offset. */
    for (int frame = 1; frame <= 20; frame++) {
        float angle = 0.1f * (float)frame;
        const float rot[3] = {0, angle, 0}, pos[3] = {0.2f * (float)frame, 10, 0};
        plush__world_mat_pmx(pos, rot, g[0]);
        plush_world_set_bones(wm, (const float(*)[16])g);
        step_n(w, 1, 1.0f / 30);
        float off[16];
        plush__world_mat_mul((const float[16]){1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, -10, 0, 1}, pmx, off);
        plush__world_mat_mul(g[0], off, want);
        plush_world_body_transform(wm, 0, got);
        expect_mat_near(got, want, 1e-4f);
    }
    /* get_bones leaves the bones of kinematic bodies alone. */
    float out[3][16];
    bool driven[3] = {true, true, true};
    memcpy(out, g, sizeof out);
    plush_world_get_bones(wm, out, driven);
    assert_memory_equal(out, g, sizeof out);
    assert_false(driven[0] || driven[1] || driven[2]);
    plush_world_destroy(w);
    plush_pmx_free(m);
}

static void test_mode1_drives_bone(void **state)
{
    (void)state;
    plush_world *w = world_ok(NULL);
    plush_pmx_model *m = two_bone_model(0, 1);
    float g[3][16];
    rest_globals(m, g);
    plush_world_model *wm = add_ok(w, m, NULL, NULL);
    step_n(w, 15, 1.0f / 30); /* half a second of free fall */
    float out[3][16], body1[16], want[16];
    bool driven[3];
    memcpy(out, g, sizeof out);
    plush_world_get_bones(wm, out, driven);
    assert_false(driven[0]);
    assert_true(driven[1]);
    assert_false(driven[2]);
    assert_memory_equal(out[0], g[0], sizeof g[0]);
    assert_memory_equal(out[2], g[2], sizeof g[2]);
    /* The bone is the body's pose times the inverse offset: it fell with the body, without turning. */
    plush_world_body_transform(wm, 1, body1);
    plush__world_mat_mul(body1, wm->bodies[1].offset_inv, want);
    expect_mat_near(out[1], want, 1e-5f);
    assert_true(out[1][13] < 10 - 5); /* g t^2 / 2 is 12 units (less with damping 0.5) */
    assert_true(fabsf(out[1][12] - 4) < 1e-3f && fabsf(out[1][0] - 1) < 1e-4f);
    plush_world_destroy(w);
    plush_pmx_free(m);
}

static void test_mode2_keeps_bone_position(void **state)
{
    (void)state;
    plush_world *w = world_ok(NULL);
    plush_pmx_model *m = two_bone_model(0, 2);
    m->rigid_bodies[1].angular_damping = 0;
    float g[3][16];
    rest_globals(m, g);
    plush_world_model *wm = add_ok(w, m, NULL, NULL);
    /* Spin it, then move its bone: the body keeps spinning and its bone keeps the animated position. */
    assert_int_equal(plush_world_impulse(wm, 1, (const float[3]){0, 0, 0}, (const float[3]){0, 0, 2}, false),
                     PLUSH_OK);
    for (int frame = 1; frame <= 30; frame++) {
        translation(g[1], 4 + 0.1f * (float)frame, 10, 0);
        plush_world_set_bones(wm, (const float(*)[16])g);
        step_n(w, 1, 1.0f / 30);
        float out[3][16], body1[16], b[16];
        memcpy(out, g, sizeof out);
        bool driven[3];
        plush_world_get_bones(wm, out, driven);
        assert_true(driven[1]);
        assert_memory_equal(out[1] + 12, g[1] + 12, 3 * sizeof(float)); /* the input position, exactly */
        plush_world_body_transform(wm, 1, body1);
        plush__world_mat_mul(body1, wm->bodies[1].offset_inv, b);
        for (int k = 0; k < 3; k++)
            assert_true(fabsf(b[12 + k] - g[1][12 + k]) < 1e-4f); /* the body sits at its bone */
        for (int k = 0; k < 12; k++)
            assert_true(fabsf(out[1][k] - b[k]) < 1e-5f);          /* with the body's rotation */
    }
    float out[3][16];
    memcpy(out, g, sizeof out);
    plush_world_get_bones(wm, out, NULL);
    assert_true(fabsf(out[1][0] - 1) > 0.1f); /* it did turn about Z (2 rad/s for 1 s) */
    assert_true(fabsf(out[1][10] - 1) < 1e-3f);
    plush_world_destroy(w);
    plush_pmx_free(m);
}

/* A chain of two mode-2 bodies under a kinematic one, held level at rest and let go: the first link turns about
 * its animated bone, and the second's bone goes where the first, as physics leaves it, carries it (as the MMD
 * runtimes propagate a physics bone to the bones below it), so the chain swings down link by link. Before, the
 * second link's bone stayed on its animated position and the chain could only turn in place. */
static void test_mode2_chain_swings(void **state)
{
    (void)state;
    plush_world *w = world_ok(NULL);
    plush_pmx_model *m = plush_pmx_create();
    plush_pmx_bone *b = pmx_fx_bones(m, 4);
    for (int i = 0; i < 4; i++) {
        b[i].position[0] = 2.0f * (float)i;
        b[i].position[1] = 10;
        b[i].parent = i - 1;
    }
    pmx_fx_rigid_bodies(m, 3);
    for (int i = 0; i < 3; i++) {
        plush_pmx_rigid_body *r = body(m, (size_t)i, 2, i == 0 ? 0 : 2, 2.0f * (float)i + 1, 10, 0, 0.3f);
        r->bone = i;
        r->mask = 0; /* no contacts: the joints alone hold the chain */
        r->rotation[2] = 1.5707963f; /* the capsule along the link */
        r->size[1] = 1.2f;
    }
    plush_pmx_joint *j = pmx_fx_joints(m, 2);
    for (int i = 0; i < 2; i++) {
        j[i].body_a = i;
        j[i].body_b = i + 1;
        j[i].position[0] = 2.0f * (float)(i + 1);
        j[i].position[1] = 10;
        j[i].type = 2; /* a ball joint: free to turn */
    }
    float g[4][16];
    rest_globals(m, g);
    plush_world_model *wm = add_ok(w, m, NULL, NULL);
    float out[4][16];
    for (int frame = 1; frame <= 30; frame++) {
        plush_world_set_bones(wm, (const float(*)[16])g);
        step_n(w, 1, 1.0f / 30);
        bool driven[4];
        memcpy(out, g, sizeof out);
        plush_world_get_bones(wm, out, driven);
        assert_true(driven[1] && driven[2] && !driven[0]);
        assert_memory_equal(out[1] + 12, g[1] + 12, 3 * sizeof(float)); /* no physics bone above it */
        for (int k = 0; k < 3; k++) { /* two units along the first link, as it turned */
            float carried = out[1][12 + k] + 2 * out[1][k];
            assert_true(fabsf(out[2][12 + k] - carried) < 1e-4f);
        }
        float body2[16], bone2[16];
        plush_world_body_transform(wm, 2, body2);
        plush__world_mat_mul(body2, wm->bodies[2].offset_inv, bone2);
        for (int k = 0; k < 3; k++)
            assert_true(fabsf(bone2[12 + k] - out[2][12 + k]) < 1e-4f); /* the body sits at its bone */
    }
    assert_true(out[2][13] < 10 - 1.0f);   /* the chain swung down: its middle bone fell more than a unit */
    assert_true(fabsf(out[2][14]) < 1e-3f); /* in the plane it hangs in */
    plush_world_destroy(w);
    plush_pmx_free(m);
}

/* Mode-2 bodies on bones that are each other's parents (a broken file): the walk up the bones ends, and their
 * bones keep their animated positions. */
static void test_mode2_bone_loop(void **state)
{
    (void)state;
    plush_world *w = world_ok(NULL);
    plush_pmx_model *m = plush_pmx_create();
    plush_pmx_bone *b = pmx_fx_bones(m, 3);
    b[1].parent = 2;
    b[2].parent = 1;
    b[1].position[0] = 2;
    b[2].position[0] = 4;
    pmx_fx_rigid_bodies(m, 2);
    for (int i = 0; i < 2; i++) {
        plush_pmx_rigid_body *r = body(m, (size_t)i, 0, 2, 2.0f * (float)(i + 1), 1, 0, 0.3f);
        r->bone = i + 1;
        r->mask = 0;
    }
    float g[3][16];
    rest_globals(m, g);
    plush_world_model *wm = add_ok(w, m, NULL, NULL);
    assert_int_equal(wm->chained_count, 0);
    plush_world_set_bones(wm, (const float(*)[16])g);
    step_n(w, 5, 1.0f / 30);
    float out[3][16];
    bool driven[3];
    memcpy(out, g, sizeof out);
    plush_world_get_bones(wm, out, driven);
    assert_true(driven[1] && driven[2]);
    assert_memory_equal(out[1] + 12, g[1] + 12, 3 * sizeof(float));
    assert_memory_equal(out[2] + 12, g[2] + 12, 3 * sizeof(float));
    plush_world_destroy(w);
    plush_pmx_free(m);
}

static void test_body_without_bone(void **state)
{
    (void)state;
    plush_world *w = world_ok(NULL);
    plush_pmx_model *m = plush_pmx_create();
    pmx_fx_bones(m, 1);
    pmx_fx_rigid_bodies(m, 3);
    body(m, 0, 0, 0, 0, 5, 0, 1);
    body(m, 1, 0, 1, 3, 5, 0, 1);
    body(m, 2, 0, 2, 6, 5, 0, 1);
    plush_world_model *wm = add_ok(w, m, NULL, NULL);
    float g[1][16];
    translation(g[0], 1, 2, 3);
    plush_world_set_bones(wm, (const float(*)[16])g);
    step_n(w, 10, 1.0f / 30);
    float t[16];
    plush_world_body_transform(wm, 0, t);
    assert_true(t[12] == 0 && t[13] == 5 && t[14] == 0); /* stays at its PMX pose */
    plush_world_body_transform(wm, 1, t);
    assert_true(t[13] < 4);
    plush_world_body_transform(wm, 2, t);
    assert_true(t[13] < 4); /* mode 2 without a bone is simply dynamic */
    bool driven[1] = {true};
    float out[1][16];
    memcpy(out, g, sizeof out);
    plush_world_get_bones(wm, out, driven);
    assert_false(driven[0]);
    assert_memory_equal(out, g, sizeof g);
    plush_world_destroy(w);
    plush_pmx_free(m);
}

static void test_reset_and_impulse(void **state)
{
    (void)state;
    plush_world *w = world_ok(&(plush_world_desc){.no_gravity = true});
    plush_pmx_model *m = two_bone_model(0, 1);
    m->rigid_bodies[1].linear_damping = 0;
    m->rigid_bodies[1].angular_damping = 0;
    plush_world_model *wm = add_ok(w, m, NULL, NULL);
    float lin[3], ang[3], t[16];
    /* Global impulse: velocity changes by the given amount. */
    assert_int_equal(plush_world_impulse(wm, 1, (const float[3]){3, 0, 0}, (const float[3]){0, 0, 0}, false),
                     PLUSH_OK);
    plush_world_body_velocity(wm, 1, lin, ang);
    assert_true(fabsf(lin[0] - 3) < 1e-5f && lin[1] == 0);
    step_n(w, 30, 1.0f / 30);
    plush_world_body_transform(wm, 1, t);
    assert_true(fabsf(t[12] - 7) < 0.01f); /* 4 + 3 units/s for 1 s */
    /* Local: the body is turned 0.3 rad about Z, so local X is (cos, sin, 0) in the world. */
    assert_int_equal(plush_world_impulse(wm, 1, (const float[3]){-3, 0, 0}, (const float[3]){0, 0, 0}, false),
                     PLUSH_OK);
    assert_int_equal(plush_world_impulse(wm, 1, (const float[3]){1, 0, 0}, (const float[3]){0, 0, 0}, true),
                     PLUSH_OK);
    plush_world_body_velocity(wm, 1, lin, ang);
    assert_true(fabsf(lin[0] - cosf(0.3f)) < 1e-4f && fabsf(lin[1] - sinf(0.3f)) < 1e-4f);
    /* All zeros stops it. */
    assert_int_equal(plush_world_impulse(wm, 1, (const float[3]){0, 0, 0}, (const float[3]){0, 0, 0}, false),
                     PLUSH_OK);
    plush_world_body_velocity(wm, 1, lin, ang);
    assert_true(lin[0] == 0 && lin[1] == 0 && lin[2] == 0 && ang[0] == 0 && ang[1] == 0 && ang[2] == 0);
    /* Mode 0 ignores impulses; bad indices and non-finite values are refused. */
    assert_int_equal(plush_world_impulse(wm, 0, (const float[3]){5, 0, 0}, (const float[3]){0, 0, 0}, false),
                     PLUSH_OK);
    plush_world_body_velocity(wm, 0, lin, ang);
    assert_true(lin[0] == 0);
    assert_int_equal(plush_world_impulse(wm, 2, (const float[3]){1, 0, 0}, (const float[3]){0, 0, 0}, false),
                     PLUSH_E_ARGUMENT);
    assert_int_equal(plush_world_impulse(wm, -1, (const float[3]){1, 0, 0}, (const float[3]){0, 0, 0}, false),
                     PLUSH_E_ARGUMENT);
    assert_int_equal(plush_world_impulse(wm, 1, (const float[3]){NAN, 0, 0}, (const float[3]){0, 0, 0}, false),
                     PLUSH_E_ARGUMENT);
    /* Reset puts every body at its bone's pose with zero velocity. */
    assert_int_equal(plush_world_impulse(wm, 1, (const float[3]){2, 2, 2}, (const float[3]){1, 1, 1}, false),
                     PLUSH_OK);
    float g[3][16], want[16], pmx[16];
    rest_globals(m, g);
    translation(g[1], 4, 20, 0);
    plush_world_reset(wm, (const float(*)[16])g, NULL);
    plush_world_body_velocity(wm, 1, lin, ang);
    assert_true(lin[0] == 0 && lin[1] == 0 && lin[2] == 0 && ang[0] == 0 && ang[1] == 0 && ang[2] == 0);
    plush_world_body_transform(wm, 1, t);
    plush__world_mat_pmx(m->rigid_bodies[1].position, m->rigid_bodies[1].rotation, pmx);
    memcpy(want, pmx, sizeof want);
    want[13] += 10;
    expect_mat_near(t, want, 1e-5f);
    plush_world_destroy(w);
    plush_pmx_free(m);
}

static void test_mass_zero_dynamic_body_moves(void **state)
{
    (void)state;
    plush_world *w = world_ok(NULL);
    plush_pmx_model *m = plush_pmx_create();
    pmx_fx_rigid_bodies(m, 1);
    body(m, 0, 0, 1, 0, 5, 0, 1)->mass = 0;
    plush_diag d;
    plush_world_model *wm = add_ok(w, m, NULL, &d);
    assert_true(d.warning_count == 1);
    step_n(w, 10, 1.0f / 30);
    float t[16];
    plush_world_body_transform(wm, 0, t);
    assert_true(t[13] < 4);
    plush_world_destroy(w);
    plush_pmx_free(m);
}

/* ---- determinism ------------------------------------------------------------------------------------ */

/* A pile of bodies of every shape and mode falling on the ground and each other. */
static void pile_run(float (*out)[16], size_t n)
{
    plush_world *w = world_ok(&(plush_world_desc){.ground = true});
    plush_pmx_model *m = plush_pmx_create();
    pmx_fx_bones(m, 1);
    pmx_fx_rigid_bodies(m, n);
    for (size_t i = 0; i < n; i++) {
        plush_pmx_rigid_body *r = body(m, i, (uint8_t)(i % 3), i == 0 ? 0 : 1, 0.3f * (float)(i % 4),
                                       2 + 1.5f * (float)i, 0.2f * (float)(i % 3), 0.6f);
        r->rotation[0] = 0.1f * (float)i;
        r->rotation[2] = 0.05f * (float)i;
        r->bone = i == 0 ? 0 : -1;
    }
    plush_world_model *wm = add_ok(w, m, NULL, NULL);
    float g[1][16];
    for (int f = 0; f < 120; f++) {
        translation(g[0], sinf(0.1f * (float)f), 0, 0);
        plush_world_set_bones(wm, (const float(*)[16])g);
        step_n(w, 1, 1.0f / 30);
    }
    for (size_t i = 0; i < n; i++)
        plush_world_body_transform(wm, i, out[i]);
    plush_world_destroy(w);
    plush_pmx_free(m);
}

static void test_determinism(void **state)
{
    (void)state;
    enum { N = 12 };
    float a[N][16], b[N][16];
    pile_run(a, N);
    pile_run(b, N);
    assert_memory_equal(a, b, sizeof a);
    for (size_t i = 0; i < N; i++)
        for (int k = 0; k < 16; k++)
            assert_true(isfinite(a[i][k]));
}

/* ---- the math under the exchange ------------------------------------------------------------------- */

static void test_math(void **state)
{
    (void)state;
    const float origin[3] = {0, 0, 0};
    float rx[16], ry[16], rz[16], yx[16], yxz[16], pmx[16];
    /* Column-vector matrices: Rx(90 deg) turns Y into Z. */
    plush__world_mat_pmx(origin, (const float[3]){1.5707964f, 0, 0}, rx);
    assert_true(fabsf(rx[4]) < 1e-6f && fabsf(rx[5]) < 1e-6f && fabsf(rx[6] - 1) < 1e-6f);
    for (int i = 0; i < 20; i++) {
        float a = 0.37f * (float)i - 3, b = 0.23f * (float)i - 2, c = 1.1f - 0.19f * (float)i;
        plush__world_mat_pmx(origin, (const float[3]){a, 0, 0}, rx);
        plush__world_mat_pmx(origin, (const float[3]){0, b, 0}, ry);
        plush__world_mat_pmx(origin, (const float[3]){0, 0, c}, rz);
        plush__world_mat_mul(ry, rx, yx);
        plush__world_mat_mul(yx, rz, yxz);
        const float pos[3] = {(float)i, 2, -3};
        plush__world_mat_pmx(pos, (const float[3]){a, b, c}, pmx);
        yxz[12] = pos[0];
        yxz[13] = pos[1];
        yxz[14] = pos[2];
        expect_mat_near(pmx, yxz, 1e-5f); /* R = Ry * Rx * Rz */
        float q[4], back[16], inv[16], id[16], eye[16];
        plush__world_mat_to_quat(pmx, q);
        plush__world_mat_from_quat(q, pos, back);
        expect_mat_near(back, pmx, 1e-5f);
        plush__world_mat_rigid_inverse(pmx, inv);
        plush__world_mat_mul(pmx, inv, id);
        plush__world_mat_identity(eye);
        expect_mat_near(id, eye, 1e-5f);
    }
    /* Halfway between two poses: half the turn, the middle of the move; the ends exactly. */
    float a[16], b[16], mid[16], want[16];
    plush__world_mat_pmx((const float[3]){0, 0, 0}, (const float[3]){0, 0.2f, 0}, a);
    plush__world_mat_pmx((const float[3]){2, 4, 6}, (const float[3]){0, 1.4f, 0}, b);
    plush__world_mat_interpolate(a, b, 0.5f, mid);
    plush__world_mat_pmx((const float[3]){1, 2, 3}, (const float[3]){0, 0.8f, 0}, want);
    expect_mat_near(mid, want, 1e-5f);
    plush__world_mat_interpolate(a, b, 1, mid);
    assert_memory_equal(mid, b, sizeof mid);
    plush__world_mat_interpolate(a, b, 0, mid);
    expect_mat_near(mid, a, 1e-6f);
}

static void test_two_models(void **state)
{
    (void)state;
    plush_world *w = world_ok(&(plush_world_desc){.ground = true});
    plush_pmx_model *m1 = plush_pmx_create(), *m2 = plush_pmx_create();
    pmx_fx_rigid_bodies(m1, 1);
    pmx_fx_rigid_bodies(m2, 1);
    body(m1, 0, 0, 1, 0, 3, 0, 1);
    body(m2, 0, 0, 1, 0.5f, 6, 0, 1); /* lands on the first model's sphere and rolls off */
    plush_world_model *wm1 = add_ok(w, m1, NULL, NULL), *wm2 = add_ok(w, m2, NULL, NULL);
    step_n(w, 150, 1.0f / 30);
    float t1[16], t2[16];
    plush_world_body_transform(wm1, 0, t1);
    plush_world_body_transform(wm2, 0, t2);
    float dx = t1[12] - t2[12], dy = t1[13] - t2[13], dz = t1[14] - t2[14];
    assert_true(sqrtf(dx * dx + dy * dy + dz * dz) > 1.95f); /* the models collide with each other */
    assert_true(fabsf(t1[13] - 1) < 0.02f && fabsf(t2[13] - 1) < 0.02f);
    plush_world_destroy(w);
    plush_pmx_free(m1);
    plush_pmx_free(m2);
}

/* ---- arguments, loading ----------------------------------------------------------------------------- */

static void test_bad_arguments(void **state)
{
    (void)state;
    plush_world *w = NULL;
    plush_diag d = pmx_fx_diag();
    assert_int_equal(plush_world_create(&(plush_world_desc){.physics_hz = -1}, &w, &d), PLUSH_E_ARGUMENT);
    assert_null(w);
    d = pmx_fx_diag();
    assert_int_equal(plush_world_create(&(plush_world_desc){.gravity = {0, NAN, 0}}, &w, &d), PLUSH_E_ARGUMENT);
    d = pmx_fx_diag();
    assert_int_equal(plush_world_create(&(plush_world_desc){.max_substeps = -2}, &w, &d), PLUSH_E_ARGUMENT);
    assert_int_equal(plush_world_create(NULL, NULL, NULL), PLUSH_E_ARGUMENT);
    w = world_ok(NULL);
    d = pmx_fx_diag();
    assert_int_equal(plush_world_step(w, -1, &d), PLUSH_E_ARGUMENT);
    d = pmx_fx_diag();
    assert_int_equal(plush_world_step(w, NAN, &d), PLUSH_E_ARGUMENT);
    d = pmx_fx_diag();
    assert_int_equal(plush_world_step(w, INFINITY, &d), PLUSH_E_ARGUMENT);
    d = pmx_fx_diag();
    assert_int_equal(plush_world_step(w, 0, &d), PLUSH_OK);
    assert_true(plush_world_step_count(w) == 0);
    plush_world_model *wm = (plush_world_model *)1;
    d = pmx_fx_diag();
    assert_int_equal(plush_world_add_model(w, NULL, NULL, &wm, &d), PLUSH_E_ARGUMENT);
    assert_null(wm);
    /* A body with a non-finite value is left out with a warning; the other body simulates (it falls). */
    plush_pmx_model *m = plush_pmx_create();
    pmx_fx_rigid_bodies(m, 2);
    m->rigid_bodies[0].mode = 1;
    m->rigid_bodies[1].mass = NAN;
    m->rigid_bodies[1].mode = 1;
    d = pmx_fx_diag();
    assert_int_equal(plush_world_add_model(w, m, NULL, &wm, &d), PLUSH_OK);
    assert_true(d.warning_count == 1);
    step_n(w, 3, 1.0f / 30);
    float t[16], lin[3], ang[3];
    plush_world_body_transform(wm, 0, t);
    assert_true(t[13] < -0.1f);
    plush_world_body_transform(wm, 1, t);
    assert_true(t[0] == 1 && t[13] == 0); /* left out: identity */
    plush_world_body_velocity(wm, 1, lin, ang);
    assert_true(lin[1] == 0);
    assert_int_equal(plush_world_impulse(wm, 1, (const float[3]){1, 0, 0}, (const float[3]){0, 0, 0}, false), PLUSH_OK);
    float g2[2][16];
    for (int b = 0; b < 2; b++)
        plush__world_mat_identity(g2[b]);
    plush_world_reset(wm, NULL, NULL);
    plush_world_get_bones(wm, g2, NULL);
    plush_pmx_model *left_out = m; /* the world holds it until destroyed */
    /* Non-finite bone matrices: refused by add_model, ignored by set_bones (the last target stays). */
    m = two_bone_model(0, 1);
    float g[3][16];
    rest_globals(m, g);
    g[0][5] = NAN;
    d = pmx_fx_diag();
    assert_int_equal(plush_world_add_model(w, m, (const float(*)[16])g, &wm, &d), PLUSH_E_ARGUMENT);
    rest_globals(m, g);
    wm = add_ok(w, m, (const float(*)[16])g, NULL);
    float before[16], after[16];
    plush_world_body_transform(wm, 0, before);
    g[0][12] = INFINITY;
    plush_world_set_bones(wm, (const float(*)[16])g);
    step_n(w, 2, 1.0f / 30);
    plush_world_body_transform(wm, 0, after);
    assert_memory_equal(before, after, sizeof before);
    plush_world_destroy(w);
    plush_world_destroy(NULL);
    plush_pmx_free(m);
    plush_pmx_free(left_out);
}

static void test_defaults_and_out_of_range_queries(void **state)
{
    (void)state;
    plush_world *w = world_ok(NULL);
    assert_true(w->desc.gravity[1] == -98.0f && w->desc.physics_hz == 60 && w->desc.max_substeps == PLUSH_WORLD_MAX_SUBSTEPS);
    assert_true(w->desc.air_density == 1.2f && w->desc.max_node_speed == 10000 && w->desc.ground_mask == 0xffff);
    plush_pmx_model *m = plush_pmx_create();
    pmx_fx_rigid_bodies(m, 1);
    plush_world_model *wm = add_ok(w, m, NULL, NULL);
    float t[16], lin[3] = {1, 1, 1}, ang[3] = {1, 1, 1};
    plush_world_body_transform(wm, 5, t);
    assert_true(t[0] == 1 && t[5] == 1 && t[12] == 0);
    plush_world_body_velocity(wm, 5, lin, ang);
    assert_true(lin[0] == 0 && ang[2] == 0);
    plush_world_destroy(w);
    plush_pmx_free(m);
    w = world_ok(&(plush_world_desc){.no_gravity = true, .gravity = {0, -5, 0}});
    assert_true(w->desc.gravity[1] == 0);
    plush_world_destroy(w);
}

static void test_library_candidates(void **state)
{
    (void)state;
    char dir[] = "/tmp/plush_phys_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char junk[64];
    snprintf(junk, sizeof junk, "%s/" PLUSH_PHYSICS_LIBRARY, dir);
    FILE *f = fopen(junk, "w");
    assert_non_null(f);
    fputs("not a shared object\n", f);
    fclose(f);
    const char *candidates[] = {"/nonexistent/plush.so", NULL, junk};
    const plush_bulletc_api *api = NULL;
    plush_diag d = pmx_fx_diag();
    /* Neither a missing file nor a file that is no shared object gives a table (the NULL is skipped). */
    assert_int_equal(plush__world_library_open(candidates, 3, &api, &d), PLUSH_E_LIBRARY);
    assert_int_equal(d.status, PLUSH_E_LIBRARY);
    assert_null(api);
    /* The real one (this build's, PLUSH_PHYSICS_LIB: tests/support/physics_plugin.c), found after a bad
     * one. */
    const char *good = getenv("PLUSH_PHYSICS_LIB");
    assert_non_null(good);
    const char *with_good[] = {junk, good};
    d = pmx_fx_diag();
    assert_int_equal(plush__world_library_open(with_good, 2, &api, &d), PLUSH_OK);
    assert_non_null(api);
    assert_true(plush_world_available(NULL));
    unlink(junk);
    rmdir(dir);
}

/* PLUSH_PHYSICS_LIB naming a missing file is reported but the next candidate (beside the binary) is
 * still tried; a copy of this binary in an empty directory finds nothing at all. */
static void test_missing_library(void **state)
{
    (void)state;
    setenv("PLUSH_PHYSICS_LIB", "/nonexistent/libplush_physics.so", 1);
    plush_world *w = world_ok(NULL);
    plush_world_destroy(w);

    char probe[PATH_MAX];
    snprintf(probe, sizeof probe, "%s/" PLUSH_PHYSICS_LIBRARY, PLUSH_PHYSICS_INSTALL_DIR);
    if (access(probe, F_OK) == 0) { /* an installed copy would be found: that half cannot fail */
        unsetenv("PLUSH_PHYSICS_LIB");
        return;
    }
    assert_int_equal(cli_tmp_setup("plush_phys"), 0);
    char exe[PATH_MAX], copy[PATH_MAX + 16];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    assert_true(n > 0);
    exe[n] = 0;
    size_t size = 0;
    char *bytes = cli_read_all(exe, &size);
    assert_non_null(bytes);
    /* Two levels down, so neither the copy's directory nor its parent holds the library. */
    char sub[PATH_MAX];
    snprintf(sub, sizeof sub, "%s/a", cli_tmp_dir());
    assert_int_equal(mkdir(sub, 0700), 0);
    snprintf(sub, sizeof sub, "%s/a/b", cli_tmp_dir());
    assert_int_equal(mkdir(sub, 0700), 0);
    snprintf(copy, sizeof copy, "%s/test_copy", sub);
    cli_write_all(copy, bytes, size);
    free(bytes);
    assert_int_equal(chmod(copy, 0700), 0);
    char out_path[PATH_MAX], cmd[3 * PATH_MAX];
    cli_tmp_path(out_path, sizeof out_path, "out.txt");
    snprintf(cmd, sizeof cmd, "'%s' " TRY_CREATE_FLAG " > '%s' 2>&1", copy, out_path);
    int rc = system(cmd);
    assert_true(WIFEXITED(rc));
    size_t out_len = 0;
    char *out = cli_read_all(out_path, &out_len);
    assert_non_null(out);
    if (WEXITSTATUS(rc) != 3)
        fail_msg("copy exited %d: %s", WEXITSTATUS(rc), out);
    free(out);
    unlink(copy);
    rmdir(sub);
    snprintf(sub, sizeof sub, "%s/a", cli_tmp_dir());
    rmdir(sub);
    cli_tmp_teardown();
    unsetenv("PLUSH_PHYSICS_LIB");
}

/* The child side of test_missing_library: ask, create a world, print the diagnostic, exit 3 on
 * PLUSH_E_LIBRARY (from both). */
static int try_create(void)
{
    plush_world *w = NULL;
    plush_diag d = pmx_fx_diag();
    plush_status st = plush_world_create(NULL, &w, &d);
    char line[600];
    plush_diag_format(&d, line, sizeof line);
    printf("%s\n", line);
    plush_world_destroy(w);
    plush_diag asked = pmx_fx_diag();
    bool available = plush_world_available(&asked);
    if (available != (st == PLUSH_OK) || (!available && asked.status != PLUSH_E_LIBRARY))
        return 5;
    return st == PLUSH_E_LIBRARY ? 3 : st == PLUSH_OK ? 0 : 4;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], TRY_CREATE_FLAG) == 0)
        return try_create();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_box_rests_on_ground),
        cmocka_unit_test(test_box_rests_at_120hz),
        cmocka_unit_test(test_ground_height_and_step_carry),
        cmocka_unit_test(test_long_frames_take_every_step),
        cmocka_unit_test(test_collision_filter),
        cmocka_unit_test(test_ground_mask),
        cmocka_unit_test(test_add_at_pose),
        cmocka_unit_test(test_mode0_follows_bone),
        cmocka_unit_test(test_mode1_drives_bone),
        cmocka_unit_test(test_mode2_keeps_bone_position),
        cmocka_unit_test(test_mode2_chain_swings),
        cmocka_unit_test(test_mode2_bone_loop),
        cmocka_unit_test(test_body_without_bone),
        cmocka_unit_test(test_reset_and_impulse),
        cmocka_unit_test(test_mass_zero_dynamic_body_moves),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_math),
        cmocka_unit_test(test_two_models),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_defaults_and_out_of_range_queries),
        cmocka_unit_test(test_library_candidates),
        cmocka_unit_test(test_missing_library),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
