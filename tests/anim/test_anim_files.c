/* The bone pipeline on real files from ../shared/data/mmd (see its SOURCES.md): every motion binds
 * without warnings other than the one about names the model lacks, every frame (and half frame) plays
 * finite, bones that only rotate keep their distance to their parent, and IK effectors reach goals that
 * lie within their chain's reach. Run from the project root.
 *
 * "Within reach" is kept to what CCD (MMD's solver) meets in its loop budget:
 * - the goal lies between the chain's shortest and 90% of its longest reach: near full extension CCD
 *   converges slowly (measured: Alicia's left leg in サンプルモーション4 at 96% extension stops 0.65% of
 *   the reach short after all 40 loops, as MMD's CCD does);
 * - the chain may turn each link by loop count x unit angle >= 180 degrees: hair IK with 10 loops of
 *   5 degrees lags its goal by design.
 * There the effector must come within 0.2% of the chain's length (Alicia's leg: about 1.5 mm). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/anim.h"
#include "plush/sys/core.h"
#include "plush/sys/anim.h"
#include "support/shared_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An effector within this fraction of its chain's length of the goal has reached it. */
#define IK_NEAR 2e-3f

typedef struct play_report {
    size_t frames, ik_checked, ik_reached;
    float worst_length_error;   /* relative */
    float worst_ik_miss;        /* relative to the chain's reach */
} play_report;

static plush_pmx_model *read_model(const char *path)
{
    plush_pmx_model *m = NULL;
    plush_diag diag = {.file = path, .offset = -1, .index = -1};
    plush_status st = plush_pmx_read_file(path, NULL, &m, &diag);
    if (st != PLUSH_OK) {
        char line[512];
        plush_diag_format(&diag, line, sizeof line);
        fail_msg("%s", line);
    }
    return m;
}

/* Binds and checks the warning rule: none, or exactly one when the model lacks names. */
static plush_motion *bind_file(const plush_pmx_model *m, const char *path, plush_motion_stats *st)
{
    plush_vmd_motion *v = NULL;
    plush_diag diag = {.file = path, .offset = -1, .index = -1};
    assert_int_equal(plush_vmd_read_file(path, &v, &diag), PLUSH_OK);
    plush_diag bd = {.file = path, .offset = -1, .index = -1};
    plush_motion *motion = NULL;
    assert_int_equal(plush_motion_bind_vmd(m, v, &motion, &bd), PLUSH_OK);
    plush_motion_stats_get(motion, st);
    size_t missing = st->missing_bone_names + st->missing_morph_names + st->missing_ik_names;
    if (bd.warning_count != (missing ? 1u : 0u))
        fail_msg("%s: %u warnings, %zu missing names: %s", path, bd.warning_count, missing,
                 bd.warning_count ? bd.warnings[0] : "");
    plush_vmd_free(v);
    return motion;
}

static float dist3(const float *a, const float *b)
{
    float d0 = a[0] - b[0], d1 = a[1] - b[1], d2 = a[2] - b[2];
    return sqrtf(d0 * d0 + d1 * d1 + d2 * d2);
}

/* Rest-pose reach of an IK chain: the longest and shortest effector distance from its root-most link. */
static void chain_reach(const plush_pmx_model *m, const plush_pmx_bone *ik, float *lo, float *hi)
{
    float total = 0, longest = 0;
    const float *prev = m->bones[ik->ik_target].position;
    for (uint32_t k = 0; k < ik->ik_link_count; k++) {
        const float *p = m->bones[ik->ik_links[k].bone].position;
        float len = dist3(prev, p);
        total += len;
        if (len > longest)
            longest = len;
        prev = p;
    }
    *hi = total;
    *lo = 2 * longest - total > 0 ? 2 * longest - total : 0;
}

static void check_pose(const plush_pmx_model *m, const plush_anim *anim, play_report *r)
{
    const float (*g)[16] = plush_anim_bone_globals(anim);
    for (size_t b = 0; b < m->bone_count; b++)
        for (int k = 0; k < 16; k++)
            if (!isfinite(g[b][k]))
                fail_msg("bone %zu: non-finite global at frame %zu", b, r->frames);
    for (size_t b = 0; b < m->bone_count; b++) {
        int32_t p = m->bones[b].parent;
        if (p < 0)
            continue;
        float t[3];
        plush_anim_bone_local(anim, b, t, NULL);
        float rest[3], moved = 0, len = 0;
        for (int k = 0; k < 3; k++) {
            rest[k] = m->bones[b].position[k] - m->bones[p].position[k];
            moved += fabsf(t[k] - rest[k]);
            len += rest[k] * rest[k];
        }
        len = sqrtf(len);
        if (moved > 1e-6f || len < 1e-3f)
            continue;   /* translated this frame, or on top of its parent */
        float err = fabsf(dist3(&g[b][12], &g[p][12]) - len) / len;
        if (err > r->worst_length_error)
            r->worst_length_error = err;
    }
    for (size_t b = 0; b < m->bone_count; b++) {
        const plush_pmx_bone *ik = &m->bones[b];
        if (!(ik->flags & PLUSH_PMX_BONE_IK) || ik->ik_target < 0 || ik->ik_link_count < 2)
            continue;
        if (ik->ik_limit_angle > 0 && (float)ik->ik_loop_count * ik->ik_limit_angle < 3.14159265f)
            continue;
        float lo, hi;
        chain_reach(m, ik, &lo, &hi);
        const float *root = &g[ik->ik_links[ik->ik_link_count - 1].bone][12];
        float d = dist3(root, &g[b][12]);
        /* Comfortably inside the reach (a goal on the boundary is met only in the limit). */
        if (d > hi * 0.9f || d < lo + 0.03f * hi)
            continue;
        float miss = dist3(&g[ik->ik_target][12], &g[b][12]) / hi;
        r->ik_checked++;
        if (miss < IK_NEAR)
            r->ik_reached++;
        if (miss > r->worst_ik_miss)
            r->worst_ik_miss = miss;
    }
}

static void pose_frame(plush_anim *anim, const plush_motion *motion, float frame)
{
    plush_anim_sample(anim, motion, frame);
    plush_anim_update_morphs(anim);
    plush_anim_deform(anim, PLUSH_ANIM_BEFORE_PHYSICS);
    plush_anim_deform(anim, PLUSH_ANIM_AFTER_PHYSICS);
}

/* Plays model + motion at every frame and half frame to two frames past the last key. */
static play_report play(const char *model_path, const char *motion_path, plush_motion_stats *st)
{
    plush_pmx_model *m = read_model(model_path);
    plush_motion *motion = bind_file(m, motion_path, st);
    plush_anim *anim = NULL;
    plush_diag diag = {.file = model_path, .offset = -1, .index = -1};
    assert_int_equal(plush_anim_create(m, &anim, &diag), PLUSH_OK);
    play_report r = {0};
    for (uint32_t f = 0; f <= 2 * (st->last_frame + 2); f++) {
        pose_frame(anim, motion, 0.5f * (float)f);
        check_pose(m, anim, &r);
        r.frames++;
    }
    if (r.worst_length_error > 1e-4f)
        fail_msg("%s + %s: a rotation-only bone changed length by %g (relative)", model_path, motion_path,
                 r.worst_length_error);
    if (r.ik_checked && r.worst_ik_miss > IK_NEAR)
        fail_msg("%s + %s: IK reached %zu of %zu reachable goals; worst miss %g of the reach", model_path,
                 motion_path, r.ik_reached, r.ik_checked, r.worst_ik_miss);
    plush_anim_destroy(anim);
    plush_motion_free(motion);
    plush_pmx_free(m);
    return r;
}

static void test_append_bone_file(void **state)
{
    (void)state;
    plush_motion_stats st;
    play_report r = play(SHARED_MMD "/unity-mmd-loader/test_append_bone.pmx",
                         SHARED_MMD "/unity-mmd-loader/test_append_bone.vmd", &st);
    assert_true(st.bone_tracks > 0);
    assert_int_equal(st.missing_bone_names, 0);
    assert_true(r.frames > 2);
}

/* The append-bone model's appended bones must actually follow: some bone with an append parent turns
 * when its parent turns (ratio != 0). */
static void test_append_bone_follows(void **state)
{
    (void)state;
    const char *mp = SHARED_MMD "/unity-mmd-loader/test_append_bone.pmx";
    plush_pmx_model *m = read_model(mp);
    plush_motion_stats st;
    plush_motion *motion = bind_file(m, SHARED_MMD "/unity-mmd-loader/test_append_bone.vmd", &st);
    plush_anim *anim = NULL;
    plush_diag diag = {.file = mp, .offset = -1, .index = -1};
    assert_int_equal(plush_anim_create(m, &anim, &diag), PLUSH_OK);
    size_t followers = 0;
    for (uint32_t f = 0; f <= st.last_frame; f++) {
        pose_frame(anim, motion, (float)f);
        for (size_t b = 0; b < m->bone_count; b++) {
            const plush_pmx_bone *bone = &m->bones[b];
            if (!(bone->flags & PLUSH_PMX_BONE_APPEND_ROTATE) || bone->append_parent < 0 || bone->append_ratio == 0)
                continue;
            float qp[4], qb[4];
            plush_anim_bone_local(anim, (size_t)bone->append_parent, NULL, qp);
            plush_anim_bone_local(anim, b, NULL, qb);
            if (fabsf(qp[3]) < 0.999f && fabsf(qb[3]) < 0.99999f)
                followers++;
        }
    }
    assert_true(followers > 0);
    plush_anim_destroy(anim);
    plush_motion_free(motion);
    plush_pmx_free(m);
}

static void test_one_bone_cube(void **state)
{
    (void)state;
    plush_motion_stats st;
    play(SHARED_MMD "/unity-mmd-loader/test_1bone_cube.pmx", SHARED_MMD "/unity-mmd-loader/test_1bone_cube_motion.vmd",
         &st);
    assert_int_equal(st.bone_tracks, 1);
}

static void test_mmt_model(void **state)
{
    (void)state;
    plush_motion_stats st;
    play_report r = play(SHARED_MMD "/unity-mmd-loader/mmt_test_model.pmx",
                         SHARED_MMD "/unity-mmd-loader/mmt_test_model_test_motion.vmd", &st);
    assert_true(st.bone_tracks > 0);
    print_message("mmt_test_model: %zu frames, %zu bone tracks, %zu missing bone names, IK %zu/%zu, worst length "
                  "%.2g\n",
                  r.frames, st.bone_tracks, st.missing_bone_names, r.ik_reached, r.ik_checked,
                  (double)r.worst_length_error);
}

static void test_bent_pillar(void **state)
{
    (void)state;
    const char *motions[] = {SHARED_MMD "/mmd_base/曲げ柱tex01.vmd", SHARED_MMD "/mmd_base/曲げ柱tex02.vmd"};
    for (int i = 0; i < 2; i++) {
        plush_motion_stats st;
        play(SHARED_MMD "/mmd_base/曲げ柱tex.pmx", motions[i], &st);
        assert_true(st.bone_tracks > 0);
    }
}

static void test_plane_models(void **state)
{
    (void)state;
    const char *motions[] = {SHARED_MMD "/mmd_base/平面3つ01.vmd", SHARED_MMD "/mmd_base/平面3つ02.vmd",
                             SHARED_MMD "/mmd_base/平面3つ03.vmd"};
    for (int i = 0; i < 3; i++) {
        plush_motion_stats st;
        play(SHARED_MMD "/mmd_base/平面3つ.pmx", motions[i], &st);
    }
    /* Morph motions on the planes (which have no morphs): the keys count as missing names, once. */
    const char *morph_motions[] = {SHARED_MMD "/mmd_base/モーフ_あ.vmd", SHARED_MMD "/mmd_base/モーフ_あ分離.vmd",
                                   SHARED_MMD "/mmd_base/モーフ_しいたけ.vmd", SHARED_MMD "/mmd_base/モーフ_UV回転.vmd",
                                   SHARED_MMD "/mmd_base/モーフ_はぅ.vmd", SHARED_MMD "/mmd_base/モーフ_照れ.vmd"};
    for (int i = 0; i < 6; i++) {
        plush_motion_stats st;
        play(SHARED_MMD "/mmd_base/平面.pmx", morph_motions[i], &st);
        assert_true(st.missing_morph_names > 0);
        assert_int_equal(st.morph_tracks, 0);
    }
}

static void test_alicia_sample_motion(void **state)
{
    (void)state;
    plush_motion_stats st;
    play_report r = play(SHARED_MMD "/alicia/Alicia_solid.pmx", SHARED_MMD "/mmd_base/サンプルモーション_0046.vmd",
                         &st);
    assert_true(st.bone_tracks > 10);
    print_message("Alicia + sample motion 0046: %zu frames, %zu bone tracks, %zu missing bone names (%zu keys), IK "
                  "%zu/%zu reached (worst miss %.2g of reach), worst length %.2g\n",
                  r.frames, st.bone_tracks, st.missing_bone_names, st.missing_bone_keys, r.ik_reached, r.ik_checked,
                  (double)r.worst_ik_miss, (double)r.worst_length_error);
}

/* Every sample motion on Alicia (they were made for other models: the bones they share play). */
static void test_alicia_other_motions(void **state)
{
    (void)state;
    const char *motions[] = {SHARED_MMD "/mmd_base/サンプルモーション3.vmd", SHARED_MMD "/mmd_base/サンプルモーション4.vmd",
                             SHARED_MMD "/mmd_base/ボーン_左腕.vmd", SHARED_MMD "/mmd_base/ボーン_顎.vmd"};
    size_t checked = 0, reached = 0;
    float worst = 0;
    for (int i = 0; i < 4; i++) {
        plush_motion_stats st;
        play_report r = play(SHARED_MMD "/alicia/Alicia_solid.pmx", motions[i], &st);
        checked += r.ik_checked;
        reached += r.ik_reached;
        if (r.worst_ik_miss > worst)
            worst = r.worst_ik_miss;
    }
    /* The sample motions bend Alicia's legs into reach on several frames. */
    assert_true(checked > 0);
    print_message("Alicia + four sample motions: IK %zu/%zu reachable goals reached (worst miss %.2g of reach)\n",
                  reached, checked, (double)worst);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_append_bone_file),
        cmocka_unit_test(test_append_bone_follows),
        cmocka_unit_test(test_one_bone_cube),
        cmocka_unit_test(test_mmt_model),
        cmocka_unit_test(test_bent_pillar),
        cmocka_unit_test(test_plane_models),
        cmocka_unit_test(test_alicia_sample_motion),
        cmocka_unit_test(test_alicia_other_motions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
