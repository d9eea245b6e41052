/* Non-finite and out-of-range values in a PMX file: the read accepts the file and keeps
 * its bytes (a write gives them back), warns naming the item and the exact byte of the value, and keeps
 * the issue in the model; plush_pmx_require_geometry refuses vertex and bone issues at that byte; the
 * physics world leaves out a rigid body, joint or soft body with one and simulates the rest. Fixtures are
 * built in code and written by the reference encoder; the byte of each value is found by writing a
 * sentinel there first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/physics.h"
#include "plush/pmx.h"
#include "plush/sys/physics.h"
#include "plush/sys/core.h"
#include "plush/sys/pmx.h"
#include "support/pmx_fixture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SENTINEL 7654.3213f

typedef struct value_case {
    const char *what;
    float *(*field)(plush_pmx_model *m);
    float bad;
    const char *section;
    int64_t index;
    bool refused; /* by plush_pmx_require_geometry (vertices, bones) */
} value_case;

#define FIELD(name, expr) \
    static float *f_##name(plush_pmx_model *m) { return &(expr); }

FIELD(vertex_position, m->vertices[1].position[1])
FIELD(vertex_normal, m->vertices[2].normal[0])
FIELD(vertex_uv, m->vertices[3].uv[1])
FIELD(vertex_auv, m->additional_uvs[4 * 4 + 2][3])
FIELD(bdef2_weight, m->vertices[1].weights[0])
FIELD(bdef4_weight, m->vertices[2].weights[2])
FIELD(sdef_r0, m->sdefs[0].r0[1])
FIELD(bone_position, m->bones[5].position[1])
FIELD(bone_append, m->bones[4].append_ratio)
FIELD(morph_vertex, m->morphs[0].offsets.vertex[1].offset[2])
FIELD(morph_impulse, m->morphs[10].offsets.impulse[0].torque[2])
FIELD(rigid_mass, m->rigid_bodies[1].mass)
FIELD(rigid_size, m->rigid_bodies[3].size[1])
FIELD(rigid_rotation, m->rigid_bodies[2].rotation[0])
FIELD(joint_position, m->joints[2].position[0])
FIELD(joint_spring, m->joints[0].spring_linear[2])
FIELD(soft_mass, m->soft_bodies[0].total_mass)
FIELD(soft_config, m->soft_bodies[0].config.khr)
FIELD(soft_stiffness, m->soft_bodies[0].vst)

static const value_case cases[] = {
    {"vertex position NaN", f_vertex_position, NAN, "vertex", 1, true},
    {"vertex normal inf", f_vertex_normal, INFINITY, "vertex", 2, true},
    {"vertex UV NaN", f_vertex_uv, NAN, "vertex", 3, true},
    {"additional UV -inf", f_vertex_auv, -INFINITY, "vertex", 4, true},
    {"BDEF2 weight NaN", f_bdef2_weight, NAN, "vertex", 1, true},
    {"BDEF4 weight 1e38", f_bdef4_weight, 1e38f, "vertex", 2, true},
    {"SDEF R0 inf", f_sdef_r0, INFINITY, "vertex", 3, true},
    {"bone position NaN", f_bone_position, NAN, "bone", 5, true},
    {"append ratio inf", f_bone_append, INFINITY, "bone", 4, true},
    {"vertex morph offset NaN", f_morph_vertex, NAN, "morph", 0, false},
    {"impulse torque inf", f_morph_impulse, INFINITY, "morph", 10, false},
    {"rigid body mass NaN", f_rigid_mass, NAN, "rigid body", 1, false},
    {"rigid body size inf", f_rigid_size, INFINITY, "rigid body", 3, false},
    {"rigid body rotation NaN", f_rigid_rotation, NAN, "rigid body", 2, false},
    {"joint position inf", f_joint_position, INFINITY, "joint", 2, false},
    {"joint spring NaN", f_joint_spring, NAN, "joint", 0, false},
    {"soft body mass NaN", f_soft_mass, NAN, "soft body", 0, false},
    {"soft body config -inf", f_soft_config, -INFINITY, "soft body", 0, false},
    {"soft body stiffness NaN", f_soft_stiffness, NAN, "soft body", 0, false},
};

/* The rich fixture with the case's value, as bytes; *at gets the byte of the value. */
static plush_buf bad_bytes(const value_case *c, int wide, size_t *at)
{
    plush_pmx_model *m = pmx_fx_rich(2.1f, (uint8_t)wide, 4);
    if (wide)
        memset(m->index_sizes, 4, PLUSH_PMX_INDEX_KINDS);
    float *f = c->field(m);
    *f = SENTINEL;
    if (f == &m->vertices[1].weights[0])
        m->vertices[1].weights[1] = 1 - SENTINEL; /* canonical BDEF2, as a reader gives it */
    plush_buf b = {0};
    pmx_fx_raw_write(m, NULL, &b, NULL);
    const float s = SENTINEL;
    *at = pmx_fx_find_unique(b.data, b.size, &s, 4);
    memcpy(b.data + *at, &c->bad, 4);
    plush_pmx_free(m);
    return b;
}

/* Whether a kept warning names byte `at` (the offset is contract; the wording is not). */
static bool warned_at(const plush_diag *d, size_t at)
{
    char want[64];
    snprintf(want, sizeof want, "(at byte %zu)", at);
    for (uint32_t k = 0; k < d->warning_count && k < PLUSH_DIAG_KEPT_WARNINGS; k++)
        if (strstr(d->warnings[k], want))
            return true;
    return false;
}

static const plush_pmx_value_issue *find_issue(const plush_pmx_model *m, const value_case *c)
{
    return plush_pmx_value_issue_find(m, c->section, c->index);
}

static void test_read_warns_at_the_byte(void **state)
{
    (void)state;
    for (int wide = 0; wide < 2; wide++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            const value_case *c = &cases[i];
            size_t at;
            plush_buf b = bad_bytes(c, wide, &at);
            for (int summary = 0; summary < 2; summary++) {
                plush_diag d = pmx_fx_diag();
                plush_pmx_model *m = NULL;
                plush_status st =
                    plush_pmx_read(b.data, b.size, &(plush_pmx_read_options){.summary_only = summary}, &m, &d);
                if (st != PLUSH_OK)
                    fail_msg("%s: read refused: %s", c->what, d.message);
                assert_true(d.warning_count >= 1);
                const plush_pmx_value_issue *q = find_issue(m, c);
                if (!q || q->offset != (int64_t)at)
                    fail_msg("%s (index size %s): issue at %lld, the value is at byte %zu", c->what,
                             wide ? "4" : "smallest", q ? (long long)q->offset : -1LL, at);
                assert_int_equal(m->value_issue_count, 1);
                assert_true(warned_at(&d, at));
                if (!summary) {
                    /* what needs vertices and bones refuses at the same byte; the writer keeps the value */
                    plush_diag r = pmx_fx_diag();
                    plush_status need = plush_pmx_require_geometry(m, &r);
                    if (c->refused) {
                        assert_int_equal(need, PLUSH_E_RANGE);
                        assert_true(r.offset == (int64_t)at && r.index == c->index);
                        assert_string_equal(r.section, c->section);
                    } else {
                        assert_int_equal(need, PLUSH_OK);
                    }
                    plush_buf out = pmx_fx_write_ok(m, NULL, NULL);
                    assert_true(out.size == b.size);
                    assert_memory_equal(out.data, b.data, b.size);
                    plush_buf_free(&out);
                }
                plush_pmx_free(m);
            }
            plush_buf_free(&b);
        }
}

/* A bone parent cycle: the read warns at the parent index of the lowest bone on the cycle; what needs
 * the bones refuses there. */
static void test_bone_cycle(void **state)
{
    (void)state;
    plush_pmx_model *m = pmx_fx_rich(2.1f, PLUSH_ENC_UTF8, 0);
    /* bones 6 -> 7 -> 6 (each other's parent), bone 6 marked by a sentinel position */
    m->bones[6].parent = 7;
    m->bones[7].parent = 6;
    m->bones[6].position[0] = SENTINEL;
    plush_buf b = {0};
    pmx_fx_raw_write(m, NULL, &b, NULL);
    const float s = SENTINEL;
    size_t parent_at = pmx_fx_find_unique(b.data, b.size, &s, 4) + 12;
    plush_diag d = pmx_fx_diag();
    plush_pmx_model *back = NULL;
    pmx_fx_ok(plush_pmx_read(b.data, b.size, NULL, &back, &d), &d);
    const plush_pmx_value_issue *q = plush_pmx_value_issue_find(back, "bone", 6);
    assert_non_null(q);
    assert_true(q->offset == (int64_t)parent_at);
    assert_int_equal(back->value_issue_count, 1);
    d = pmx_fx_diag();
    assert_int_equal(plush_pmx_require_geometry(back, &d), PLUSH_E_RANGE);
    assert_true(d.offset == (int64_t)parent_at && d.index == 6);
    plush_pmx_free(back);
    plush_buf_free(&b);
    plush_pmx_free(m);
}

/* Rigid bodies, a joint and a soft body with non-finite values: each left out with a warning at its
 * byte, the rest simulates (and stays finite). */
static void test_world_leaves_out_bad_items(void **state)
{
    (void)state;
    if (!plush_world_available(NULL))
        skip();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const value_case *c = &cases[i];
        if (c->refused)
            continue;
        size_t at;
        plush_buf b = bad_bytes(c, 0, &at);
        plush_diag d = pmx_fx_diag();
        plush_pmx_model *m = NULL;
        pmx_fx_ok(plush_pmx_read(b.data, b.size, NULL, &m, &d), &d);
        plush_world *w = NULL;
        plush_world_model *wm = NULL;
        d = pmx_fx_diag();
        pmx_fx_ok(plush_world_create(&(plush_world_desc){.ground = true}, &w, &d), &d);
        pmx_fx_ok(plush_world_add_model(w, m, NULL, &wm, &d), &d);
        if (strcmp(c->section, "morph") && !warned_at(&d, at))
            fail_msg("%s: no world warning at byte %zu", c->what, at);
        /* (the fixture's joints are a round-trip sample, not a stable rig: only the stepping is checked) */
        for (int f = 0; f < 3; f++)
            pmx_fx_ok(plush_world_step(w, 1.0f / 30, &d), &d);
        if (!strcmp(c->section, "rigid body")) {
            float t[16];
            plush_world_body_transform(wm, (size_t)c->index, t);
            assert_true(t[0] == 1 && t[5] == 1 && t[10] == 1 && t[12] == 0 && t[13] == 0); /* not simulated */
        }
        if (!strcmp(c->section, "soft body")) {
            plush_world_soft_info info;
            plush_world_soft_get_info(wm, 0, &info);
            assert_int_equal(info.state, PLUSH_SOFT_SKIPPED);
        }
        plush_world_destroy(w);
        plush_pmx_free(m);
        plush_buf_free(&b);
    }
}

/* The model from the wild: one rigid body's rotation is NaN. It is left out; the others fall. */
static void test_nan_rotation_body_rest_simulates(void **state)
{
    (void)state;
    if (!plush_world_available(NULL))
        skip();
    plush_pmx_model *src = pmx_fx_minimal(2.0f);
    plush_pmx_rigid_body *rb = pmx_fx_rigid_bodies(src, 3);
    for (int i = 0; i < 3; i++) {
        rb[i].mode = 1;
        rb[i].size[0] = rb[i].size[1] = rb[i].size[2] = 0.5f;
        rb[i].position[0] = 3.0f * (float)i;
        rb[i].position[1] = 10;
        rb[i].linear_damping = rb[i].angular_damping = 0;
    }
    rb[1].rotation[1] = SENTINEL;
    plush_buf b = {0};
    pmx_fx_raw_write(src, NULL, &b, NULL);
    const float s = SENTINEL, nan = NAN;
    size_t at = pmx_fx_find_unique(b.data, b.size, &s, 4);
    memcpy(b.data + at, &nan, 4);
    plush_diag d = pmx_fx_diag();
    plush_pmx_model *m = NULL;
    pmx_fx_ok(plush_pmx_read(b.data, b.size, NULL, &m, &d), &d);
    assert_true(warned_at(&d, at));
    plush_world *w = NULL;
    plush_world_model *wm = NULL;
    d = pmx_fx_diag();
    pmx_fx_ok(plush_world_create(NULL, &w, &d), &d);
    pmx_fx_ok(plush_world_add_model(w, m, NULL, &wm, &d), &d);
    assert_true(warned_at(&d, at));
    for (int f = 0; f < 30; f++)
        pmx_fx_ok(plush_world_step(w, 1.0f / 30, &d), &d);
    float t[16];
    plush_world_body_transform(wm, 0, t);
    assert_true(isfinite(t[13]) && t[13] < 10 - 40); /* about 0.5 * 98 * 1^2 = 49 units down */
    plush_world_body_transform(wm, 2, t);
    assert_true(isfinite(t[13]) && t[13] < 10 - 40);
    plush_world_destroy(w);
    plush_pmx_free(m);
    plush_buf_free(&b);
    plush_pmx_free(src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_warns_at_the_byte),
        cmocka_unit_test(test_bone_cycle),
        cmocka_unit_test(test_world_leaves_out_bad_items),
        cmocka_unit_test(test_nan_rotation_body_rest_simulates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
