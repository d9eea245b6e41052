/* VMD curves as MMD reads them: each of a bone key's four curves (X, Y, Z translation, rotation) comes
 * from its own 16-byte row of the interpolation block, not from the first row alone (whose bytes 2-3
 * current writers fill with something else). Checked against a reference written here, apart from
 * plush's sampler: Bezier easing by bisection in double, keys found by a plain scan, the rows read by
 * their byte offsets.
 *
 * - a motion built here whose rows carry four different curves and whose first row carries other
 *   bytes: plush's sampled translation and rotation follow the rows within 1e-6 of the hand evaluation;
 * - the shared long dance on Alicia: every keyed bone outside IK, append and bone morphs agrees with
 *   the reference over the whole dance, while the first-row reading lies far off (so the check can
 *   tell the two apart). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/anim.h"
#include "plush/sys/anim.h"
#include "plush/sys/core.h"
#include "plush/sys/vmd.h"
#include "support/pmx_fixture.h"
#include "support/shared_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LONG_DANCE SHARED_CHARACTERS "/mmd_base/サンプルモーション2.vmd"

/* ---- the reference ------------------------------------------------------------------------------- */

/* Eased progress of the curve (0,0) (x1,y1) (x2,y2) (1,1) at time x, control points on 0..127: the curve
 * parameter s with x(s) = x found by bisection (x(s) is monotone), then y(s). */
static double ref_ease(const uint8_t cp[4], double x)
{
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    double x1 = cp[0] / 127.0, y1 = cp[1] / 127.0, x2 = cp[2] / 127.0, y2 = cp[3] / 127.0;
    double lo = 0, hi = 1, s = 0.5;
    for (int i = 0; i < 100; i++) {
        s = 0.5 * (lo + hi);
        double u = 1 - s, xs = 3 * u * u * s * x1 + 3 * u * s * s * x2 + s * s * s;
        if (xs < x)
            lo = s;
        else
            hi = s;
    }
    double u = 1 - s;
    return 3 * u * u * s * y1 + 3 * u * s * s * y2 + s * s * s;
}

/* Curve c of a block: its own row (rows = true) or the first row (the older reading). */
static void ref_curve(const uint8_t b[64], int c, bool rows, uint8_t cp[4])
{
    for (int p = 0; p < 4; p++)
        cp[p] = rows ? b[16 * c + 4 * p] : b[4 * p + c];
}

static void ref_slerp(const double a[4], const double b_in[4], double t, double out[4])
{
    double b[4], d = 0;
    for (int k = 0; k < 4; k++)
        d += a[k] * b_in[k];
    for (int k = 0; k < 4; k++)
        b[k] = d < 0 ? -b_in[k] : b_in[k];
    d = fabs(d);
    double wa = 1 - t, wb = t;
    if (d < 1 - 1e-12) {
        double th = acos(d > 1 ? 1 : d);
        wa = sin((1 - t) * th) / sin(th);
        wb = sin(t * th) / sin(th);
    }
    double n = 0;
    for (int k = 0; k < 4; k++) {
        out[k] = wa * a[k] + wb * b[k];
        n += out[k] * out[k];
    }
    n = sqrt(n);
    for (int k = 0; k < 4; k++)
        out[k] /= n;
}

/* A bone's motion at a fractional frame from its keys (file order; of two keys on one frame the later
 * in the file wins): before the first key the first holds, after the last the last; between two keys the
 * later key's curves ease each translation channel and the rotation's slerp. */
static void ref_sample(const plush_vmd_bone_key *const *keys, size_t n, double frame, bool rows, double t[3],
                       double q[4])
{
    const plush_vmd_bone_key *k0 = NULL, *k1 = NULL;
    for (size_t i = 0; i < n; i++) {
        const plush_vmd_bone_key *k = keys[i];
        if (k->frame <= frame && (!k0 || k->frame >= k0->frame))
            k0 = k;
        if (k->frame > frame && (!k1 || k->frame <= k1->frame))
            k1 = k;
    }
    if (!k0 || !k1) {
        const plush_vmd_bone_key *k = k0 ? k0 : k1;
        for (int c = 0; c < 3; c++)
            t[c] = k->translation[c];
        for (int c = 0; c < 4; c++)
            q[c] = k->rotation[c];
        return;
    }
    double x = (frame - k0->frame) / (double)(k1->frame - k0->frame);
    uint8_t cp[4];
    for (int c = 0; c < 3; c++) {
        ref_curve(k1->interpolation, c, rows, cp);
        double y = ref_ease(cp, x);
        t[c] = k0->translation[c] + (k1->translation[c] - (double)k0->translation[c]) * y;
    }
    ref_curve(k1->interpolation, 3, rows, cp);
    double a[4], b[4];
    for (int c = 0; c < 4; c++)
        a[c] = k0->rotation[c], b[c] = k1->rotation[c];
    ref_slerp(a, b, ref_ease(cp, x), q);
}

/* Angle between two rotations (radians). */
static double rot_gap(const double a[4], const float b[4])
{
    double d = 0, na = 0, nb = 0;
    for (int k = 0; k < 4; k++)
        d += a[k] * b[k], na += a[k] * a[k], nb += (double)b[k] * b[k];
    d = fabs(d) / sqrt(na * nb);
    return 2 * acos(d > 1 ? 1 : d);
}

/* ---- helpers ------------------------------------------------------------------------------------- */

static bool same_name(plush_str a, plush_str b)
{
    return a.len == b.len && (!a.len || memcmp(a.s, b.s, a.len) == 0);
}

static plush_motion *bind_ok(const plush_pmx_model *m, const plush_vmd_motion *v)
{
    plush_motion *motion = NULL;
    plush_diag diag = pmx_fx_diag();
    assert_int_equal(plush_motion_bind_vmd(m, v, &motion, &diag), PLUSH_OK);
    return motion;
}

static void pose_local(plush_anim *anim, const plush_motion *motion, float frame, size_t bone, float t[3],
                       float q[4])
{
    plush_anim_sample(anim, motion, frame);
    plush_anim_update_morphs(anim);
    plush_anim_deform(anim, PLUSH_ANIM_BEFORE_PHYSICS);
    plush_anim_deform(anim, PLUSH_ANIM_AFTER_PHYSICS);
    plush_anim_bone_local(anim, bone, t, q);
}

/* ---- a motion built here ------------------------------------------------------------------------- */

static void test_rows_carry_the_curves(void **state)
{
    (void)state;
    plush_pmx_model *m = plush_pmx_create();
    plush_pmx_bone *b = pmx_fx_bones(m, 1);
    b[0].name = pmx_fx_lit("bone");
    b[0].parent = -1;
    b[0].flags = PLUSH_PMX_BONE_ROTATABLE | PLUSH_PMX_BONE_TRANSLATABLE | PLUSH_PMX_BONE_VISIBLE |
                 PLUSH_PMX_BONE_ENABLED;

    plush_vmd_motion *v = plush_vmd_create();
    plush_vmd_bone_key *k = plush_arena_array(plush_vmd_arena(v), 2, sizeof *k);
    assert_non_null(k);
    v->bone_keys = k, v->bone_key_count = 2;
    k[0].name = k[1].name = pmx_fx_lit("bone");
    k[0].rotation[3] = 1;
    pmx_fx_linear_curves(k[0].interpolation);
    /* one unit along each axis and one radian about Y over 30 frames, each eased its own way */
    k[1].frame = 30;
    k[1].translation[0] = k[1].translation[1] = k[1].translation[2] = 1;
    k[1].rotation[1] = sinf(0.5f), k[1].rotation[3] = cosf(0.5f);
    /* well-conditioned curves: where x'(s) vanishes (MMD's (127,0)-(0,127) at its middle) a tiny error in
     * the curve parameter is a large one in y, for the reference as for plush */
    const uint8_t curves[4][4] = {{100, 10, 30, 120}, {10, 90, 30, 120}, {64, 0, 64, 127}, {90, 10, 127, 50}};
    plush_vmd_curves_write(curves, k[1].interpolation);
    /* the first row says other things: bytes 2-3 as a writer may set them, and Y's copies changed */
    k[1].interpolation[2] = 99, k[1].interpolation[3] = 15;
    k[1].interpolation[1] = k[1].interpolation[5] = k[1].interpolation[9] = k[1].interpolation[13] = 64;
    assert_true(plush_vmd_key_first_row_differs(k[1].interpolation));
    uint8_t back[4][4];
    plush_vmd_curves_read(k[1].interpolation, back);
    assert_memory_equal(back, curves, sizeof back);

    plush_motion *motion = bind_ok(m, v);
    plush_anim *anim = NULL;
    plush_diag diag = pmx_fx_diag();
    assert_int_equal(plush_anim_create(m, &anim, &diag), PLUSH_OK);
    double worst = 0, far_from_first_row = 0;
    for (int i = 0; i <= 60; i++) {
        float frame = 0.5f * (float)i;
        float t[3], q[4];
        pose_local(anim, motion, frame, 0, t, q);
        double x = frame / 30.0;
        for (int c = 0; c < 3; c++) {
            double want = ref_ease(curves[c], x);
            worst = fmax(worst, fabs(t[c] - want));
            uint8_t first[4];
            ref_curve(k[1].interpolation, c, false, first);
            far_from_first_row = fmax(far_from_first_row, fabs(ref_ease(first, x) - want));
        }
        double angle = 2 * atan2(q[1], q[3]);
        worst = fmax(worst, fabs(angle - ref_ease(curves[3], x)));
    }
    if (worst > 1e-6)
        fail_msg("the sampled motion lies %g from the rows' curves", worst);
    assert_true(far_from_first_row > 0.1); /* the first row would have eased it otherwise */
    plush_anim_destroy(anim);
    plush_motion_free(motion);
    plush_vmd_free(v);
    plush_pmx_free(m);
}

/* What MMD writes: the first row then each row shifted one byte further, zero fill, bytes 2-3 zero. */
static void test_written_block_layout(void **state)
{
    (void)state;
    const uint8_t curves[4][4] = {{1, 2, 3, 4}, {11, 12, 13, 14}, {21, 22, 23, 24}, {31, 32, 33, 34}};
    uint8_t b[64];
    plush_vmd_curves_write(curves, b);
    const uint8_t first[16] = {1, 11, 0, 0, 2, 12, 22, 32, 3, 13, 23, 33, 4, 14, 24, 34};
    assert_memory_equal(b, first, 16);
    const uint8_t canon[16] = {1, 11, 21, 31, 2, 12, 22, 32, 3, 13, 23, 33, 4, 14, 24, 34};
    for (int r = 1; r < 4; r++)
        for (int i = 0; i < 16; i++)
            assert_int_equal(b[16 * r + i], i + r < 16 ? canon[i + r] : 0);
    uint8_t back[4][4];
    plush_vmd_curves_read(b, back);
    assert_memory_equal(back, curves, sizeof back);
    assert_true(plush_vmd_key_first_row_differs(b)); /* Z's and R's x1 are not in the first row */
    const uint8_t z_zero[4][4] = {{1, 2, 3, 4}, {11, 12, 13, 14}, {0, 22, 23, 24}, {0, 32, 33, 34}};
    plush_vmd_curves_write(z_zero, b);
    assert_false(plush_vmd_key_first_row_differs(b));
}

/* ---- the shared long dance ------------------------------------------------------------------------ */

static bool moved_by_other_than_its_keys(const plush_pmx_model *m, size_t bone, const bool *in_ik,
                                         const bool *in_morph)
{
    const plush_pmx_bone *b = &m->bones[bone];
    return in_ik[bone] || in_morph[bone] ||
           (b->flags & (PLUSH_PMX_BONE_IK | PLUSH_PMX_BONE_APPEND_ROTATE | PLUSH_PMX_BONE_APPEND_TRANSLATE));
}

static void test_long_dance_follows_the_rows(void **state)
{
    (void)state;
    FILE *probe = fopen(LONG_DANCE, "rb"), *probe2 = fopen(ALICIA, "rb");
    if (probe)
        fclose(probe);
    if (probe2)
        fclose(probe2);
    if (!probe || !probe2) {
        print_message("skipped: %s or %s is absent\n", LONG_DANCE, ALICIA);
        skip();
    }
    plush_pmx_model *m = NULL;
    plush_diag diag = pmx_fx_diag();
    assert_int_equal(plush_pmx_read_file(ALICIA, NULL, &m, &diag), PLUSH_OK);
    plush_vmd_motion *v = NULL;
    diag = pmx_fx_diag();
    assert_int_equal(plush_vmd_read_file(LONG_DANCE, &v, &diag), PLUSH_OK);

    size_t nb = m->bone_count;
    bool *in_ik = calloc(nb, 1), *in_morph = calloc(nb, 1);
    const plush_vmd_bone_key **keys = calloc(v->bone_key_count, sizeof *keys);
    assert_true(in_ik && in_morph && keys);
    for (size_t i = 0; i < nb; i++)
        if (m->bones[i].flags & PLUSH_PMX_BONE_IK) {
            const plush_pmx_bone *ik = &m->bones[i];
            if (ik->ik_target >= 0 && (size_t)ik->ik_target < nb)
                in_ik[ik->ik_target] = true;
            for (uint32_t l = 0; l < ik->ik_link_count; l++)
                if (ik->ik_links[l].bone >= 0 && (size_t)ik->ik_links[l].bone < nb)
                    in_ik[ik->ik_links[l].bone] = true;
        }
    for (size_t i = 0; i < m->morph_count; i++)
        if (m->morphs[i].kind == PLUSH_PMX_MORPH_BONE)
            for (uint32_t o = 0; o < m->morphs[i].offset_count; o++) {
                int32_t b = m->morphs[i].offsets.bone[o].bone;
                if (b >= 0 && (size_t)b < nb)
                    in_morph[b] = true;
            }

    plush_motion *motion = bind_ok(m, v);
    plush_anim *anim = NULL;
    diag = pmx_fx_diag();
    assert_int_equal(plush_anim_create(m, &anim, &diag), PLUSH_OK);
    uint32_t last = plush_vmd_last_frame(v);
    size_t bones_checked = 0, samples = 0;
    double worst_t = 0, worst_r = 0, first_row_t = 0, first_row_r = 0;
    for (size_t bone = 0; bone < nb; bone++) {
        if (moved_by_other_than_its_keys(m, bone, in_ik, in_morph))
            continue;
        size_t n = 0;
        for (size_t i = 0; i < v->bone_key_count; i++)
            if (same_name(v->bone_keys[i].name, m->bones[bone].name))
                keys[n++] = &v->bone_keys[i];
        if (n < 2)
            continue;
        bones_checked++;
        const plush_pmx_bone *b = &m->bones[bone];
        float rest[3];
        for (int c = 0; c < 3; c++)
            rest[c] = b->position[c] - (b->parent >= 0 ? m->bones[b->parent].position[c] : 0.0f);
        /* a sweep of the dance at half frames, where the curves matter most */
        for (uint32_t f = 0; f < last; f += 97) {
            double frame = f + 0.5, rt[3], rq[4], ft[3], fq[4];
            float t[3], q[4];
            pose_local(anim, motion, (float)frame, bone, t, q);
            ref_sample(keys, n, frame, true, rt, rq);
            ref_sample(keys, n, frame, false, ft, fq);
            for (int c = 0; c < 3; c++) {
                worst_t = fmax(worst_t, fabs(t[c] - rest[c] - rt[c]));
                first_row_t = fmax(first_row_t, fabs(ft[c] - rt[c]));
            }
            worst_r = fmax(worst_r, rot_gap(rq, q));
            float fqf[4] = {(float)fq[0], (float)fq[1], (float)fq[2], (float)fq[3]};
            first_row_r = fmax(first_row_r, rot_gap(rq, fqf));
            samples++;
        }
    }
    print_message("long dance: %zu bones, %zu samples: translation within %.3g, rotation within %.3g rad of "
                  "the rows; the first-row reading lies %.3g units, %.3g rad off\n",
                  bones_checked, samples, worst_t, worst_r, first_row_t, first_row_r);
    assert_true(bones_checked >= 10);
    if (worst_t > 1e-4 || worst_r > 1e-4)
        fail_msg("plush lies %g units, %g rad from the rows' reading", worst_t, worst_r);
    assert_true(first_row_t > 100 * worst_t || first_row_r > 100 * worst_r);
    plush_anim_destroy(anim);
    plush_motion_free(motion);
    free(in_ik), free(in_morph), free(keys);
    plush_vmd_free(v);
    plush_pmx_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_carry_the_curves),
        cmocka_unit_test(test_written_block_layout),
        cmocka_unit_test(test_long_dance_follows_the_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
