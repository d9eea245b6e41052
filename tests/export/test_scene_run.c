/* The pipeline (plush_scene_*): bones mode against the bone pipeline alone, proxy mode on a small plush
 * and on the demo bear, determinism, and the errors a user can meet. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/scene.h"
#include "plush/sys/anim.h"
#include "support/pmx_fixture.h"
#include "support/mesh_fixture.h"
#include "support/scene_fixture.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { SPHERE_VERTICES = 9 * 13, CAGE_VERTICES = 60, EYE_VERTICES = 24 };

static void test_bones_mode_matches_bone_pipeline(void **state)
{
    (void)state;
    plush_pmx_model *m = scene_fx_pinned_plush();
    plush_vmd_motion *v = scene_fx_sway();
    plush_diag d = pmx_fx_diag();
    plush_scene *sc = NULL;
    pmx_fx_ok(plush_scene_create(&(plush_scene_desc){.model = m, .motion = v, .mode = PLUSH_SCENE_BONES}, &sc, &d), &d);
    plush_motion *mo = NULL;
    plush_anim *anim = NULL;
    pmx_fx_ok(plush_motion_bind_vmd(m, v, &mo, &d), &d);
    pmx_fx_ok(plush_anim_create(m, &anim, &d), &d);
    float(*want)[3] = calloc(m->vertex_count, sizeof *want);
    for (uint32_t f = 0; f < 40; f++) {
        pmx_fx_ok(plush_scene_step(sc, f, &d), &d);
        plush_anim_reset(anim);
        plush_anim_sample(anim, mo, (float)f);
        plush_anim_update_morphs(anim);
        plush_anim_deform(anim, PLUSH_ANIM_BEFORE_PHYSICS);
        plush_anim_deform(anim, PLUSH_ANIM_AFTER_PHYSICS);
        plush_anim_skin(anim, 0, m->vertex_count, want, NULL);
        /* no rigid bodies: bones mode is the bone pipeline, to the bit */
        assert_memory_equal(plush_scene_positions(sc), want, m->vertex_count * sizeof *want);
    }
    assert_null(plush_scene_get_binding(sc));
    free(want);
    plush_anim_destroy(anim);
    plush_motion_free(mo);
    plush_scene_destroy(sc);
    plush_vmd_free(v);
    plush_pmx_free(m);
}

static void run_proxy(const plush_pmx_model *m, const plush_vmd_motion *v, uint32_t frames, float (*out)[3])
{
    plush_diag d = pmx_fx_diag();
    plush_scene *sc = NULL;
    pmx_fx_ok(plush_scene_create(&(plush_scene_desc){.model = m, .motion = v, .world = {.ground = true, .ground_y = -20}},
                          &sc, &d),
       &d);
    for (uint32_t f = 0; f < frames; f++) {
        pmx_fx_ok(plush_scene_step(sc, f, &d), &d);
        assert_true(mesh_fx_all_finite(plush_scene_positions(sc), m->vertex_count));
        assert_true(mesh_fx_all_finite(plush_scene_normals(sc), m->vertex_count));
    }
    assert_non_null(plush_scene_proxy_nodes(sc));
    int64_t first = 0;
    assert_int_equal(plush_scene_failures(sc, &first), 0);
    assert_int_equal(first, -1);
    plush_scene_timing t;
    plush_scene_get_timing(sc, &t);
    assert_int_equal(t.steps, frames);
    memcpy(out, plush_scene_positions(sc), m->vertex_count * sizeof *out);
    plush_scene_destroy(sc);
}

static void test_proxy_mode_moves_softly_and_deterministically(void **state)
{
    (void)state;
    plush_pmx_model *m = scene_fx_pinned_plush();
    plush_vmd_motion *v = scene_fx_sway();
    float(*a)[3] = calloc(m->vertex_count, sizeof *a), (*b)[3] = calloc(m->vertex_count, sizeof *b);
    run_proxy(m, v, 30, a);
    run_proxy(m, v, 30, b);
    assert_memory_equal(a, b, m->vertex_count * sizeof *a);

    /* against bones mode: the body (bound to the proxy) lags and hangs; it is not where the bones put it */
    plush_diag d = pmx_fx_diag();
    plush_scene *sc = NULL;
    pmx_fx_ok(plush_scene_create(&(plush_scene_desc){.model = m, .motion = v, .mode = PLUSH_SCENE_BONES}, &sc, &d), &d);
    for (uint32_t f = 0; f < 30; f++)
        pmx_fx_ok(plush_scene_step(sc, f, &d), &d);
    const float(*bones)[3] = plush_scene_positions(sc);
    double moved = 0;
    for (size_t i = 0; i < SPHERE_VERTICES; i++)
        for (int k = 0; k < 3; k++)
            moved = fmax(moved, fabs((double)a[i][k] - bones[i][k]));
    assert_true(moved > 0.05);
    /* and it stays a plush, not an explosion: within a few units of the bone-driven body */
    assert_true(moved < 5.0);
    plush_scene_destroy(sc);
    free(a);
    free(b);
    plush_vmd_free(v);
    plush_pmx_free(m);
}

static void test_proxy_mode_needs_a_soft_body(void **state)
{
    (void)state;
    plush_pmx_model *m = mesh_fx_plush();
    m->soft_body_count = 0;
    plush_diag d = pmx_fx_diag();
    plush_scene *sc = NULL;
    assert_int_equal(plush_scene_create(&(plush_scene_desc){.model = m}, &sc, &d), PLUSH_E_NO_PROXY);
    assert_null(sc);
    /* bones mode does not */
    d = pmx_fx_diag();
    pmx_fx_ok(plush_scene_create(&(plush_scene_desc){.model = m, .mode = PLUSH_SCENE_BONES}, &sc, &d), &d);
    pmx_fx_ok(plush_scene_step(sc, 0, &d), &d);
    plush_scene_destroy(sc);
    d = pmx_fx_diag();
    assert_int_equal(plush_scene_create(&(plush_scene_desc){.model = m, .mode = 7}, &sc, &d), PLUSH_E_ARGUMENT);
    plush_pmx_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bones_mode_matches_bone_pipeline),
        cmocka_unit_test(test_proxy_mode_moves_softly_and_deterministically),
        cmocka_unit_test(test_proxy_mode_needs_a_soft_body),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
