/* Motion: Bezier easing at known parameters, VMD keys bound by name and sampled at whole and fractional
 * frames, morph keys, property keys switching IK, names the model lacks, cut Shift-JIS names, VPD poses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/anim.h"
#include "plush/sys/core.h"
#include "plush/sys/anim.h"
#include "anim/anim_internal.h"
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

static plush_str lit(const char *s)
{
    return (plush_str){.s = s, .len = (uint32_t)strlen(s)};
}

/* A linear interpolation block: every curve (20,20)-(107,107). */
static void linear_block(uint8_t b[64])
{
    pmx_fx_linear_curves(b);
}

/* Curve c in its own row, where MMD reads it. */
static void set_curve(uint8_t b[64], int c, uint8_t x1, uint8_t y1, uint8_t x2, uint8_t y2)
{
    b[16 * c] = x1;
    b[16 * c + 4] = y1;
    b[16 * c + 8] = x2;
    b[16 * c + 12] = y2;
}

static plush_vmd_motion *vmd_with(size_t bones, size_t morphs, size_t props)
{
    plush_vmd_motion *v = plush_vmd_create();
    assert_non_null(v);
    plush_arena *a = plush_vmd_arena(v);
    v->bone_key_count = bones;
    v->bone_keys = plush_arena_array(a, bones ? bones : 1, sizeof *v->bone_keys);
    v->morph_key_count = morphs;
    v->morph_keys = plush_arena_array(a, morphs ? morphs : 1, sizeof *v->morph_keys);
    v->property_key_count = props;
    v->property_keys = plush_arena_array(a, props ? props : 1, sizeof *v->property_keys);
    assert_non_null(v->bone_keys);
    for (size_t i = 0; i < bones; i++) {
        linear_block(v->bone_keys[i].interpolation);
        v->bone_keys[i].rotation[3] = 1;
    }
    return v;
}

/* Bones "root" (0) and "arm" (1, child, one unit up); IK bone "ik" (2) on a two-bone leg would be
 * overkill here: bone 2 is just flagged IK with target 1 and link 0. Morphs "smile", "blink". */
static plush_pmx_model *small_model(void)
{
    plush_pmx_model *m = plush_pmx_create();
    plush_pmx_bone *b = pmx_fx_bones(m, 3);
    b[0].name = lit("root");
    b[1].name = lit("arm");
    b[1].parent = 0;
    b[2].name = lit("ik");
    b[2].flags |= PLUSH_PMX_BONE_IK;
    b[2].ik_target = 1;
    b[2].ik_loop_count = 10;
    b[2].ik_limit_angle = 1;
    b[2].ik_link_count = 1;
    b[2].ik_links = pmx_fx_alloc(m, 1, sizeof *b[2].ik_links);
    b[2].ik_links[0].bone = 0;
    plush_pmx_morph *mo = pmx_fx_morphs(m, 2);
    mo[0].name = lit("smile");
    mo[1].name = lit("blink");
    return m;
}

static plush_motion *bind_ok(const plush_pmx_model *m, const plush_vmd_motion *v, plush_diag *diag)
{
    plush_motion *motion = NULL;
    assert_int_equal(plush_motion_bind_vmd(m, v, &motion, diag), PLUSH_OK);
    assert_non_null(motion);
    return motion;
}

static plush_anim *anim_ok(const plush_pmx_model *m)
{
    plush_anim *anim = NULL;
    plush_diag diag = pmx_fx_diag();
    assert_int_equal(plush_anim_create(m, &anim, &diag), PLUSH_OK);
    return anim;
}

static void local_of(plush_anim *anim, size_t bone, float t[3], float q[4])
{
    plush_anim_update_morphs(anim);
    plush_anim_deform(anim, PLUSH_ANIM_BEFORE_PHYSICS);
    plush_anim_deform(anim, PLUSH_ANIM_AFTER_PHYSICS);
    plush_anim_bone_local(anim, bone, t, q);
}

/* Angle of a rotation about +Y from its quaternion. */
static float angle_y(const float q[4])
{
    float s = q[3] < 0 ? -1.0f : 1.0f;
    return 2.0f * atan2f(s * q[1], s * q[3]);
}

/* ---- Bezier ----------------------------------------------------------------------------------------- */

static void test_bezier_linear_and_endpoints(void **state)
{
    (void)state;
    const uint8_t lin[4] = {20, 20, 107, 107}, ease[4] = {127, 0, 0, 127}, odd[4] = {10, 90, 30, 120};
    for (int i = 0; i <= 100; i++) {
        float t = (float)i / 100.0f;
        assert_true(fabsf(plush__vmd_bezier(lin, t) - t) < 1e-6f);
    }
    assert_true(plush__vmd_bezier(ease, 0.0f) == 0.0f);
    assert_true(plush__vmd_bezier(ease, 1.0f) == 1.0f);
    assert_true(plush__vmd_bezier(odd, 0.0f) == 0.0f);
    assert_true(plush__vmd_bezier(odd, 1.0f) == 1.0f);
    assert_true(plush__vmd_bezier(odd, -3.0f) == 0.0f);
    assert_true(plush__vmd_bezier(odd, 7.0f) == 1.0f);
    assert_true(plush__vmd_bezier(odd, NAN) == 0.0f);
}

static void test_bezier_ease_in_out_symmetric(void **state)
{
    (void)state;
    /* (127,0)-(0,127) is symmetric about (0.5, 0.5): f(t) + f(1 - t) = 1; the curve has x = y = 0.5 at
     * s = 0.5, and it is flat at both ends (slow in, slow out). */
    const uint8_t ease[4] = {127, 0, 0, 127};
    assert_true(fabsf(plush__vmd_bezier(ease, 0.5f) - 0.5f) < 1e-6f);
    for (int i = 1; i < 50; i++) {
        float t = (float)i / 100.0f;
        assert_true(fabsf(plush__vmd_bezier(ease, t) + plush__vmd_bezier(ease, 1.0f - t) - 1.0f) < 1e-5f);
        assert_true(plush__vmd_bezier(ease, t) < t);
    }
    assert_true(plush__vmd_bezier(ease, 0.1f) < 0.05f);
    /* Monotone for any control points on the grid. */
    const uint8_t odd[4] = {10, 90, 30, 120};
    float prev = 0.0f;
    for (int i = 1; i <= 1000; i++) {
        float y = plush__vmd_bezier(odd, (float)i / 1000.0f);
        assert_true(y >= prev - 1e-6f);
        prev = y;
    }
}

static void test_bezier_known_values(void **state)
{
    (void)state;
    /* Against the parametric curve itself: at s, x(s) and y(s) in closed form; feeding x(s) must give
     * back y(s). Covers flat ends (x1 = 0, x2 = 127) where a pure Newton solve can stall. */
    const uint8_t cps[4][4] = {{0, 127, 127, 0}, {64, 0, 64, 127}, {0, 0, 127, 127}, {127, 127, 0, 0}};
    for (int c = 0; c < 4; c++) {
        double x1 = cps[c][0] / 127.0, y1 = cps[c][1] / 127.0, x2 = cps[c][2] / 127.0, y2 = cps[c][3] / 127.0;
        for (int i = 1; i < 20; i++) {
            double s = i / 20.0, u = 1 - s;
            double x = 3 * u * u * s * x1 + 3 * u * s * s * x2 + s * s * s;
            double y = 3 * u * u * s * y1 + 3 * u * s * s * y2 + s * s * s;
            float got = plush__vmd_bezier(cps[c], (float)x);
            if (fabs(got - y) > 2e-4)
                fail_msg("curve %d s %g: x %g -> %g, want %g", c, s, x, got, y);
        }
    }
}

/* ---- VMD sampling -------------------------------------------------------------------------------------- */

static void test_sample_fractional_frames(void **state)
{
    (void)state;
    plush_pmx_model *m = small_model();
    plush_vmd_motion *v = vmd_with(3, 0, 0);
    /* "arm": frame 0 rest, frame 10 turned 90 deg about Y and moved +4 in X (X eased, Y/Z linear). */
    v->bone_keys[0].name = lit("arm");
    v->bone_keys[0].frame = 10;
    quat_axis(0, 1, 0, DEG(90), v->bone_keys[0].rotation);
    v->bone_keys[0].translation[0] = 4;
    v->bone_keys[0].translation[1] = 2;
    set_curve(v->bone_keys[0].interpolation, 0, 127, 0, 0, 127);
    v->bone_keys[1].name = lit("arm");
    v->bone_keys[1].frame = 0;
    /* "root": one key only, at frame 5. */
    v->bone_keys[2].name = lit("root");
    v->bone_keys[2].frame = 5;
    v->bone_keys[2].translation[2] = -1;
    plush_diag diag = pmx_fx_diag();
    plush_motion *motion = bind_ok(m, v, &diag);
    assert_int_equal(diag.warning_count, 0);
    plush_motion_stats st;
    plush_motion_stats_get(motion, &st);
    assert_int_equal(st.bone_tracks, 2);
    assert_int_equal(st.last_frame, 10);

    plush_anim *anim = anim_ok(m);
    float t[3], q[4];
    const uint8_t ease[4] = {127, 0, 0, 127};
    const float frames[] = {0, 2.5f, 5, 7.25f, 10};
    for (size_t i = 0; i < sizeof frames / sizeof frames[0]; i++) {
        plush_anim_sample(anim, motion, frames[i]);
        local_of(anim, 1, t, q);
        float lin = frames[i] / 10.0f;
        /* local translation = rest offset (0,1,0) + eased motion */
        assert_true(fabsf(t[0] - 4 * plush__vmd_bezier(ease, lin)) < 1e-5f);
        assert_true(fabsf(t[1] - (1 + 2 * lin)) < 1e-5f);
        assert_true(fabsf(angle_y(q) - DEG(90) * lin) < 1e-4f);
        local_of(anim, 0, t, q);
        assert_true(fabsf(t[2] + 1) < 1e-6f);   /* a single key holds everywhere */
    }
    /* Before the first key and after the last. */
    plush_anim_sample(anim, motion, -5);
    local_of(anim, 1, t, q);
    assert_true(fabsf(angle_y(q)) < 1e-6f && fabsf(t[0]) < 1e-6f);
    plush_anim_sample(anim, motion, 1000.5f);
    local_of(anim, 1, t, q);
    assert_true(fabsf(angle_y(q) - DEG(90)) < 1e-5f && fabsf(t[0] - 4) < 1e-5f);
    plush_anim_destroy(anim);
    plush_motion_free(motion);
    plush_vmd_free(v);
    plush_pmx_free(m);
}

static void test_rotation_curve_and_shorter_arc(void **state)
{
    (void)state;
    plush_pmx_model *m = small_model();
    plush_vmd_motion *v = vmd_with(2, 0, 0);
    v->bone_keys[0].name = v->bone_keys[1].name = lit("root");
    v->bone_keys[1].frame = 30;
    /* 60 deg about Y, stored as the negated quaternion: the same rotation, the slerp must not go round
     * the long way. */
    quat_axis(0, 1, 0, DEG(60), v->bone_keys[1].rotation);
    for (int k = 0; k < 4; k++)
        v->bone_keys[1].rotation[k] = -v->bone_keys[1].rotation[k];
    set_curve(v->bone_keys[1].interpolation, 3, 127, 0, 0, 127);
    plush_motion *motion = bind_ok(m, v, NULL);
    plush_anim *anim = anim_ok(m);
    const uint8_t ease[4] = {127, 0, 0, 127};
    float t[3], q[4];
    for (int f = 0; f <= 30; f += 3) {
        plush_anim_sample(anim, motion, (float)f + 0.5f);
        local_of(anim, 0, t, q);
        float lin = ((float)f + 0.5f) / 30.0f;
        if (lin > 1)
            lin = 1;
        assert_true(fabsf(angle_y(q) - DEG(60) * plush__vmd_bezier(ease, lin)) < 1e-4f);
    }
    plush_anim_destroy(anim);
    plush_motion_free(motion);
    plush_vmd_free(v);
    plush_pmx_free(m);
}

static void test_same_frame_later_key_wins(void **state)
{
    (void)state;
    plush_pmx_model *m = small_model();
    plush_vmd_motion *v = vmd_with(2, 2, 0);
    v->bone_keys[0].name = v->bone_keys[1].name = lit("root");
    v->bone_keys[0].translation[0] = 1;
    v->bone_keys[1].translation[0] = 2;
    v->morph_keys[0].name = v->morph_keys[1].name = lit("blink");
    v->morph_keys[0].weight = 0.25f;
    v->morph_keys[1].weight = 0.75f;
    plush_motion *motion = bind_ok(m, v, NULL);
    plush_anim *anim = anim_ok(m);
    plush_anim_sample(anim, motion, 0);
    float t[3], q[4];
    local_of(anim, 0, t, q);
    assert_true(fabsf(t[0] - 2) < 1e-6f);
    assert_true(fabsf(plush_anim_morph_weights(anim)[1] - 0.75f) < 1e-6f);
    plush_anim_destroy(anim);
    plush_motion_free(motion);
    plush_vmd_free(v);
    plush_pmx_free(m);
}

static void test_morph_keys_linear(void **state)
{
    (void)state;
    plush_pmx_model *m = small_model();
    plush_vmd_motion *v = vmd_with(0, 3, 0);
    v->morph_keys[0] = (plush_vmd_morph_key){.name = lit("smile"), .frame = 20, .weight = 1.0f};
    v->morph_keys[1] = (plush_vmd_morph_key){.name = lit("smile"), .frame = 10, .weight = 0.0f};
    v->morph_keys[2] = (plush_vmd_morph_key){.name = lit("smile"), .frame = 40, .weight = 0.5f};
    plush_motion *motion = bind_ok(m, v, NULL);
    plush_anim *anim = anim_ok(m);
    const float want[][2] = {{0, 0}, {10, 0}, {15, 0.5f}, {17.5f, 0.75f}, {20, 1}, {30, 0.75f}, {40, 0.5f}, {99, 0.5f}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        plush_anim_sample(anim, motion, want[i][0]);
        plush_anim_update_morphs(anim);
        assert_true(fabsf(plush_anim_morph_weights(anim)[0] - want[i][1]) < 1e-6f);
        assert_true(plush_anim_morph_weights(anim)[1] == 0.0f);
    }
    plush_anim_destroy(anim);
    plush_motion_free(motion);
    plush_vmd_free(v);
    plush_pmx_free(m);
}

static void test_property_keys_switch_ik(void **state)
{
    (void)state;
    plush_pmx_model *m = small_model();
    plush_vmd_motion *v = vmd_with(0, 0, 3);
    plush_arena *a = plush_vmd_arena(v);
    const uint32_t frames[3] = {0, 10, 20};
    const uint8_t on[3] = {1, 0, 1};
    for (int i = 0; i < 3; i++) {
        plush_vmd_property_key *p = &v->property_keys[i];
        p->frame = frames[i];
        p->visible = 1;
        p->ik_count = 2;
        p->ik = plush_arena_array(a, 2, sizeof *p->ik);
        p->ik[0].name = lit("ik");
        p->ik[0].enabled = on[i];
        p->ik[1].name = lit("no such ik");   /* counted once, not an error */
        p->ik[1].enabled = 1;
    }
    plush_diag diag = pmx_fx_diag();
    plush_motion *motion = bind_ok(m, v, &diag);
    plush_motion_stats st;
    plush_motion_stats_get(motion, &st);
    assert_int_equal(st.missing_ik_names, 1);
    assert_int_equal(diag.warning_count, 1);
    plush_anim *anim = anim_ok(m);
    /* Bone "ik" (2) sits at (0,2,0) = bone "arm"'s rest position: move it; with IK on the arm's parent
     * turns toward it, with IK off it does not. */
    float goal[3] = {1, 1, 0};
    const float frames_at[][2] = {{0, 1}, {5, 1}, {9.99f, 1}, {10, 0}, {15.5f, 0}, {20, 1}, {50, 1}};
    for (size_t i = 0; i < sizeof frames_at / sizeof frames_at[0]; i++) {
        plush_anim_sample(anim, motion, frames_at[i][0]);
        plush_anim_set_bone_motion(anim, 2, goal, NULL);
        float t[3], q[4];
        local_of(anim, 0, t, q);
        bool turned = fabsf(q[3]) < 0.9999f;
        assert_int_equal(turned, frames_at[i][1] != 0);
    }
    plush_anim_destroy(anim);
    plush_motion_free(motion);
    plush_vmd_free(v);
    plush_pmx_free(m);
}

static void test_missing_names_counted_once(void **state)
{
    (void)state;
    plush_pmx_model *m = small_model();
    plush_vmd_motion *v = vmd_with(5, 3, 0);
    v->bone_keys[0].name = lit("root");
    v->bone_keys[1].name = lit("tail");
    v->bone_keys[2].name = lit("tail");
    v->bone_keys[2].frame = 3;
    v->bone_keys[3].name = lit("wing");
    v->bone_keys[4].name = lit("arm");
    v->morph_keys[0].name = lit("smile");
    v->morph_keys[1].name = lit("angry");
    v->morph_keys[2].name = lit("angry");
    v->morph_keys[2].frame = 8;
    plush_diag diag = pmx_fx_diag();
    plush_motion *motion = bind_ok(m, v, &diag);
    plush_motion_stats st;
    plush_motion_stats_get(motion, &st);
    assert_int_equal(st.bone_tracks, 2);
    assert_int_equal(st.morph_tracks, 1);
    assert_int_equal(st.missing_bone_names, 2);
    assert_int_equal(st.missing_bone_keys, 3);
    assert_int_equal(st.missing_morph_names, 1);
    assert_int_equal(st.missing_morph_keys, 2);
    assert_int_equal(diag.warning_count, 1);
    assert_int_equal(diag.status, PLUSH_OK);
    plush_motion_free(motion);
    plush_vmd_free(v);
    plush_pmx_free(m);
}

/* A model bone name longer than a VMD field: MMD writes its first 15 Shift-JIS bytes, here cut in the
 * middle of a two-byte character; the key binds to the bone by those bytes. */
static void test_cut_name_binds(void **state)
{
    (void)state;
    plush_pmx_model *m = small_model();
    /* "左足ＩＫ親ボーンです" = 10 two-byte characters = 20 bytes of CP932. */
    m->bones[0].name = lit("左足ＩＫ親ボーンです");
    plush_sjis *sjis = NULL;
    assert_int_equal(plush_sjis_create(&sjis), PLUSH_OK);
    uint8_t full[32];
    size_t n = 0;
    assert_int_equal(plush_sjis_encode(sjis, m->bones[0].name.s, m->bones[0].name.len, full, sizeof full, false, &n),
                     PLUSH_OK);
    assert_int_equal(n, 20);
    plush_vmd_motion *v = vmd_with(1, 0, 0);
    memcpy(v->bone_keys[0].name_raw, full, 15);
    /* What the VMD reader makes of the field: the whole characters (7 of them). */
    plush_str decoded = {0};
    bool lossy = false;
    assert_int_equal(plush_sjis_decode(sjis, plush_vmd_arena(v), full, 15, &decoded, &lossy), PLUSH_OK);
    v->bone_keys[0].name = decoded;
    v->bone_keys[0].translation[0] = 3;
    plush_sjis_destroy(sjis);
    plush_diag diag = pmx_fx_diag();
    plush_motion *motion = bind_ok(m, v, &diag);
    plush_motion_stats st;
    plush_motion_stats_get(motion, &st);
    assert_int_equal(st.bone_tracks, 1);
    assert_int_equal(st.missing_bone_names, 0);
    assert_int_equal(diag.warning_count, 0);
    plush_anim *anim = anim_ok(m);
    plush_anim_sample(anim, motion, 0);
    float t[3], q[4];
    local_of(anim, 0, t, q);
    assert_true(fabsf(t[0] - 3) < 1e-6f);
    plush_anim_destroy(anim);
    plush_motion_free(motion);
    plush_vmd_free(v);
    plush_pmx_free(m);
}

static void test_vpd_pose(void **state)
{
    (void)state;
    plush_pmx_model *m = small_model();
    static const char text[] = "Vocaloid Pose Data file\n\nm.osm;\n2;\n\n"
                               "Bone0{arm\n  1.5,0,0;\n  0,0.7071068,0,0.7071068;\n}\n\n"
                               "Bone1{nobody\n  0,0,0;\n  0,0,0,1;\n}\n\n"
                               "Morph0{blink\n  0.4;\n}\n";
    plush_vpd_pose *pose = NULL;
    plush_diag diag = pmx_fx_diag();
    assert_int_equal(plush_vpd_read((const uint8_t *)text, sizeof text - 1, &pose, &diag), PLUSH_OK);
    plush_motion *motion = NULL;
    assert_int_equal(plush_motion_bind_vpd(m, pose, &motion, &diag), PLUSH_OK);
    plush_motion_stats st;
    plush_motion_stats_get(motion, &st);
    assert_int_equal(st.bone_tracks, 1);
    assert_int_equal(st.morph_tracks, 1);
    assert_int_equal(st.missing_bone_names, 1);
    assert_int_equal(diag.warning_count, 1);
    plush_anim *anim = anim_ok(m);
    const float frames[] = {0, 17.5f};
    for (int i = 0; i < 2; i++) {
        plush_anim_sample(anim, motion, frames[i]);
        float t[3], q[4];
        local_of(anim, 1, t, q);
        assert_true(fabsf(t[0] - 1.5f) < 1e-6f && fabsf(t[1] - 1) < 1e-6f);
        assert_true(fabsf(angle_y(q) - DEG(90)) < 1e-4f);
        assert_true(fabsf(plush_anim_morph_weights(anim)[1] - 0.4f) < 1e-6f);
    }
    plush_anim_destroy(anim);
    plush_motion_free(motion);
    plush_vpd_free(pose);
    plush_pmx_free(m);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    plush_pmx_model *m = small_model();
    plush_motion *motion = (plush_motion *)1;
    plush_diag diag = pmx_fx_diag();
    assert_int_equal(plush_motion_bind_vmd(m, NULL, &motion, &diag), PLUSH_E_ARGUMENT);
    assert_null(motion);
    plush_motion_free(NULL);
    plush_anim_destroy(NULL);
    plush_motion_stats st;
    plush_motion_stats_get(NULL, &st);
    assert_int_equal(st.bone_tracks, 0);
    plush_pmx_free(m);

    /* An empty model and an empty motion: nothing to do, nothing breaks. */
    plush_pmx_model *empty = plush_pmx_create();
    plush_vmd_motion *v = vmd_with(0, 0, 0);
    motion = bind_ok(empty, v, NULL);
    plush_anim *anim = anim_ok(empty);
    plush_anim_sample(anim, motion, 3.5f);
    plush_anim_update_morphs(anim);
    plush_anim_deform(anim, PLUSH_ANIM_BEFORE_PHYSICS);
    plush_anim_deform(anim, PLUSH_ANIM_AFTER_PHYSICS);
    assert_null(plush_anim_vertex_offsets(anim));
    assert_int_equal(plush_anim_impulses(anim, NULL), 0);
    plush_anim_destroy(anim);
    plush_motion_free(motion);
    plush_vmd_free(v);
    plush_pmx_free(empty);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bezier_linear_and_endpoints),
        cmocka_unit_test(test_bezier_ease_in_out_symmetric),
        cmocka_unit_test(test_bezier_known_values),
        cmocka_unit_test(test_sample_fractional_frames),
        cmocka_unit_test(test_rotation_curve_and_shorter_arc),
        cmocka_unit_test(test_same_frame_later_key_wins),
        cmocka_unit_test(test_morph_keys_linear),
        cmocka_unit_test(test_property_keys_switch_ik),
        cmocka_unit_test(test_missing_names_counted_once),
        cmocka_unit_test(test_cut_name_binds),
        cmocka_unit_test(test_vpd_pose),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
