/* A run's budget, checked from its inputs before the first frame: each test builds a hostile or oversized
 * input here (a random-triangle surface, a cage of many pieces, a soft body of a thousand iterations, IK
 * on a long chain, a long --bake-physics run) and runs plush as a user does. What must be refused is refused
 * quickly and small (time and peak memory of the child shown; outside AddressSanitizer asserted), what can
 * be written is written (names Shift-JIS cannot hold, VMD names that would collide). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/plush.h"
#include "support/cli_run.h"
#include "support/mesh_fixture.h"
#include "support/pmx_fixture.h"
#include "support/toy_fixture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* What a refused run may cost: the acceptance's 2 s and 200 MB. Under AddressSanitizer (make check) the
 * figures are mostly its own (shadow memory, quarantine, slower code), so there they are only shown. */
#if defined(__SANITIZE_ADDRESS__)
#define REFUSED_PEAK_KB (1L << 40)
#define REFUSED_SECONDS 1e9
#else
#define REFUSED_PEAK_KB (200L * 1024)
#define REFUSED_SECONDS 2.0
#endif

static int setup(void **state)
{
    (void)state;
    return cli_tmp_setup("plush_budget");
}

static int teardown(void **state)
{
    (void)state;
    return cli_tmp_teardown();
}

/* A refused run: exit 1, one line, quick and small, no OUTDIR left. */
static void expect_refused(const cli_result *r, const char *what, const char *out)
{
    print_message("%s: refused in %.2f s, peak %ld MB: %s", what, r->seconds, r->peak_kb / 1024, r->err);
    cli_expect_one_error_line(r);
    assert_true(r->seconds < REFUSED_SECONDS);
    assert_true(r->peak_kb < REFUSED_PEAK_KB);
    if (out)
        assert_false(cli_exists(out));
}

static void write_model(const plush_pmx_model *m, const char *path)
{
    plush_diag d = {0};
    plush_diag_reset(&d);
    pmx_fx_ok(plush_pmx_write_file(m, NULL, path, &d), &d);
}

/* A fixed sequence of numbers in [0, 1): the same hostile surface on every run. */
static float next_random(uint32_t *state)
{
    *state = *state * 1664525u + 1013904223u;
    return (float)(*state >> 8) / 16777216.0f;
}

/* ---- 3. cage and soft-body sizes ------------------------------------------------------------------- */

/* 80,000 triangles over random corners of 40,000 random points in a 10-unit box: no surface a cage can
 * follow (the simplifier's ladder ends far above any target). */
static void test_random_triangles(void **state)
{
    (void)state;
    enum { TRIANGLES = 80000, POINTS = 40000 };
    plush_pmx_model *m = mesh_fx_model(1);
    m->version = 2.0f;
    mesh_fx soup = {.vertex_count = POINTS, .index_count = 3 * TRIANGLES};
    soup.positions = calloc(POINTS, sizeof *soup.positions);
    soup.indices = calloc(3 * TRIANGLES, sizeof *soup.indices);
    assert_non_null(soup.positions);
    assert_non_null(soup.indices);
    uint32_t seed = 12345;
    for (size_t i = 0; i < POINTS; i++)
        for (int k = 0; k < 3; k++)
            soup.positions[i][k] = 10.0f * next_random(&seed);
    for (size_t i = 0; i < 3 * TRIANGLES; i++)
        soup.indices[i] = (uint32_t)(next_random(&seed) * POINTS) % POINTS;
    mesh_fx_add_material(m, "soup", &soup, 0);
    mesh_fx_free(&soup);
    char model[600], out[600], cage[600];
    write_model(m, cli_tmp_path(model, sizeof model, "soup.pmx"));
    plush_pmx_free(m);
    cli_result r;
    CLI_RUN(&r, "run", model, "--cage", "soup", "--frames", "2", "-o", cli_tmp_path(out, sizeof out, "out_soup"));
    expect_refused(&r, "run --cage on 80k random triangles", out);
    assert_non_null(strstr(r.err, "target of 300"));
    cli_result_free(&r);
    CLI_RUN(&r, "proxy", model, "--triangles", "300", "-o", cli_tmp_path(cage, sizeof cage, "soup_cage.obj"));
    expect_refused(&r, "proxy on 80k random triangles", cage);
    cli_result_free(&r);
    /* a target no proxy may have is refused before the cage is made */
    CLI_RUN(&r, "run", model, "--cage", "soup:20000", "--frames", "2", "-o", out);
    expect_refused(&r, "run --cage :20000", out);
    assert_non_null(strstr(r.err, "10000"));
    cli_result_free(&r);
}

/* An OBJ cage of `pieces` separate triangles, each a small tent over the toy's body. */
static void write_pieces(const char *path, size_t pieces)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (size_t i = 0; i < pieces; i++) {
        double a = 6.283185307 * (double)i / (double)pieces, y = 5.5 + 3.0 * (double)(i % 97) / 97.0;
        double x = 2.0 * cos(a), z = 2.0 * sin(a);
        fprintf(f, "v %.6f %.6f %.6f\nv %.6f %.6f %.6f\nv %.6f %.6f %.6f\n", x, y, z, x + 0.01, y + 0.02, z,
                x, y + 0.02, z + 0.01);
    }
    for (size_t i = 0; i < pieces; i++)
        fprintf(f, "f %zu %zu %zu\n", 3 * i + 1, 3 * i + 2, 3 * i + 3);
    fclose(f);
}

/* A cage in many pieces: each would be a soft body of its own. 44,549 pieces (the size that took 24 GB) is
 * over the proxy's triangles; 5,000 is within them and over the soft bodies a run takes. */
static void test_cage_pieces(void **state)
{
    (void)state;
    char model[600], obj[600], attached[600];
    plush_pmx_model *m = toy_fx_model();
    write_model(m, cli_tmp_path(model, sizeof model, "toy.pmx"));
    plush_pmx_free(m);
    const size_t counts[] = {44549, 5000};
    for (int i = 0; i < 2; i++) {
        write_pieces(cli_tmp_path(obj, sizeof obj, "pieces.obj"), counts[i]);
        cli_tmp_path(attached, sizeof attached, "pieces.pmx");
        cli_result r;
        CLI_RUN(&r, "attach", model, "--proxy", obj, "--allow-free", "-o", attached);
        expect_refused(&r, i ? "attach a cage of 5,000 pieces" : "attach a cage of 44,549 pieces", attached);
        assert_non_null(strstr(r.err, i ? "5000 pieces" : "44549 triangles"));
        cli_result_free(&r);
    }
}

/* A model of 1,200 soft bodies (made elsewhere, not by plush attach) is refused by the run, and the world
 * it no longer builds would have kept nothing per body beyond the body's own vertices. */
static void test_many_soft_bodies(void **state)
{
    (void)state;
    enum { BODIES = 1200 };
    plush_pmx_model *m = mesh_fx_plush();
    plush_pmx_soft_body first = m->soft_bodies[0], *all = pmx_fx_soft_bodies(m, BODIES);
    for (int i = 0; i < BODIES; i++)
        all[i] = first;
    char model[600], out[600];
    write_model(m, cli_tmp_path(model, sizeof model, "bodies.pmx"));
    cli_result r;
    CLI_RUN(&r, "run", model, "--frames", "2", "-o", cli_tmp_path(out, sizeof out, "out_bodies"));
    expect_refused(&r, "1,200 soft bodies", out);
    cli_result_free(&r);
    /* 600 of them, within the count, on a model of 120,000 vertices: the proxy's per-part maps over every
     * vertex would take 288 MB */
    m->soft_body_count = 600;
    mesh_fx grid = mesh_fx_grid(346, 10.0f);
    mesh_fx_add_material(m, "sheet", &grid, 1);
    mesh_fx_free(&grid);
    write_model(m, model);
    plush_pmx_free(m);
    CLI_RUN(&r, "run", model, "--frames", "2", "-o", out);
    expect_refused(&r, "600 soft bodies on 120,000 vertices", out);
    assert_non_null(strstr(r.err, "MB of vertex maps"));
    cli_result_free(&r);
}

/* A TriMesh soft body of 10,000 faces whose solver iterates 1,000 times a step: about 0.44 s a frame. */
static void test_soft_iterations(void **state)
{
    (void)state;
    plush_pmx_model *m = mesh_fx_model(2);
    mesh_fx body = mesh_fx_uv_sphere(1.0f, 8, 12), cage = mesh_fx_uv_sphere(1.4f, 50, 100);
    mesh_fx_add_material(m, "body", &body, 1);
    size_t mat = mesh_fx_add_material(m, "cage", &cage, 0);
    mesh_fx_free(&body);
    mesh_fx_free(&cage);
    size_t body_index = mesh_fx_add_soft_body(m, (int32_t)mat, 0);
    plush_pmx_soft_body *sb = &m->soft_bodies[body_index];
    sb->p_iterations = 1000;
    sb->total_mass = 1;
    char model[600], out[600];
    write_model(m, cli_tmp_path(model, sizeof model, "iterations.pmx"));
    cli_result r;
    CLI_RUN(&r, "run", model, "--frames", "2", "-o", cli_tmp_path(out, sizeof out, "out_iterations"));
    expect_refused(&r, "TriMesh of 1,000 iterations", out);
    assert_non_null(strstr(r.err, "--mode bones"));
    cli_result_free(&r);
    /* the library's own answer: the distinct status, before any world is built */
    plush_diag d = {0};
    plush_diag_reset(&d);
    plush_scene *sc = NULL;
    assert_int_equal(plush_scene_create(&(plush_scene_desc){.model = m}, &sc, &d), PLUSH_E_BUDGET);
    assert_null(sc);
    plush_pmx_free(m);
}

/* ---- 4. IK cost ------------------------------------------------------------------------------------ */

/* Four IK bones, each turning the whole of a 1,000-bone chain 255 times a frame. */
static void test_ik_chain(void **state)
{
    (void)state;
    enum { CHAIN = 1000, IKS = 4 };
    plush_pmx_model *m = mesh_fx_model(CHAIN + 2 * IKS);
    m->version = 2.0f;
    for (size_t i = 0; i < CHAIN; i++)
        m->bones[i].position[1] = 0.01f * (float)i;
    for (int k = 0; k < IKS; k++) {
        plush_pmx_bone *ik = &m->bones[CHAIN + 2 * k], *tip = &m->bones[CHAIN + 2 * k + 1];
        tip->parent = CHAIN - 1; /* the effector, at the chain's end */
        tip->position[1] = 0.01f * CHAIN;
        ik->parent = 0;
        ik->flags |= PLUSH_PMX_BONE_IK;
        ik->position[0] = 1.0f + (float)k, ik->position[1] = 0.005f * CHAIN;
        ik->ik_target = CHAIN + 2 * k + 1;
        ik->ik_loop_count = 255;
        ik->ik_limit_angle = 0.1f;
        ik->ik_link_count = CHAIN - 1;
        ik->ik_links = pmx_fx_alloc(m, CHAIN - 1, sizeof *ik->ik_links);
        for (size_t l = 0; l + 1 < CHAIN; l++)
            ik->ik_links[l].bone = (int32_t)(CHAIN - 2 - l);
    }
    mesh_fx body = mesh_fx_uv_sphere(1.0f, 8, 12);
    mesh_fx_add_material(m, "body", &body, 0);
    mesh_fx_free(&body);
    char model[600], out[600];
    write_model(m, cli_tmp_path(model, sizeof model, "ik.pmx"));
    cli_result r;
    CLI_RUN(&r, "run", model, "--mode", "bones", "--frames", "2", "-o", cli_tmp_path(out, sizeof out, "out_ik"));
    expect_refused(&r, "IK on a 1,000-bone chain", out);
    assert_non_null(strstr(r.err, "255 loops"));
    cli_result_free(&r);
    plush_diag d = {0};
    plush_diag_reset(&d);
    plush_scene_estimate e;
    assert_int_equal(plush_scene_check_budget(&(plush_scene_desc){.model = m, .mode = PLUSH_SCENE_BONES}, 0, &e, &d),
                     PLUSH_E_BUDGET);
    assert_int_equal(e.worst_ik, CHAIN);
    assert_true(e.ik_seconds > 0.5);
    /* the same chain solved a few times a frame is within the budget */
    for (int k = 0; k < IKS; k++)
        m->bones[CHAIN + 2 * k].ik_loop_count = 2;
    plush_diag_reset(&d);
    assert_int_equal(plush_scene_check_budget(&(plush_scene_desc){.model = m, .mode = PLUSH_SCENE_BONES}, 0, &e, &d),
                     PLUSH_OK);
    plush_pmx_free(m);
}

/* ---- 8. the bake's keys ---------------------------------------------------------------------------- */

/* The toy with 3,000 more bones under its body, each driven by a rigid body of its own (hair strands), run
 * for 400,000 frames with --bake-physics: 1.3e9 keys, hundreds of GB before the VMD is written. */
static void test_bake_physics_keys(void **state)
{
    (void)state;
    enum { STRANDS = 3000 };
    plush_pmx_model *m = toy_fx_model();
    size_t nb = m->bone_count, nr = m->rigid_body_count;
    plush_pmx_bone *bones = pmx_fx_bones(m, nb + STRANDS);
    memcpy(bones, m->bones, nb * sizeof *bones);
    plush_pmx_rigid_body *bodies = pmx_fx_rigid_bodies(m, nr + STRANDS);
    memcpy(bodies, m->rigid_bodies, nr * sizeof *bodies);
    for (size_t i = 0; i < STRANDS; i++) {
        plush_pmx_bone *b = &bones[nb + i];
        char name[32];
        snprintf(name, sizeof name, "strand%zu", i);
        b->name = b->name_en = pmx_fx_str(m, name);
        b->parent = 2; /* the body */
        b->position[0] = -3.0f + 6.0f * (float)(i % 60) / 60.0f, b->position[1] = 4.0f + 0.1f * (float)(i / 60);
        plush_pmx_rigid_body *r = &bodies[nr + i];
        r->name = r->name_en = b->name;
        r->bone = (int32_t)(nb + i), r->mode = PLUSH_PMX_RIGID_PHYSICS, r->shape = PLUSH_PMX_RIGID_SPHERE;
        r->size[0] = 0.02f, r->mass = 0.01f, r->group = 2, r->mask = 0; /* strands touch nothing */
        memcpy(r->position, b->position, sizeof r->position);
    }
    m->bones = bones, m->bone_count = nb + STRANDS;
    m->rigid_bodies = bodies, m->rigid_body_count = nr + STRANDS;
    char model[600], out[600];
    write_model(m, cli_tmp_path(model, sizeof model, "strands.pmx"));
    plush_pmx_free(m);
    cli_result r;
    CLI_RUN(&r, "run", model, "--cage", "body", "--bake-physics", "--frames", "400000", "-o",
            cli_tmp_path(out, sizeof out, "out_strands"));
    expect_refused(&r, "--bake-physics, 3,000 bones x 400,000 frames", NULL);
    assert_non_null(strstr(r.err, "--frames"));
    cli_result_free(&r);
    /* the same run for a few frames is within it */
    CLI_RUN(&r, "run", model, "--cage", "body", "--bake-physics", "--frames", "3", "-o", out);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
}

/* ---- 5 and 9. the names a VMD holds ------------------------------------------------------------------ */

/* The toy with `extra` more bones under its body named names[i] (NULL: "b<index>"), those named driven by a
 * rigid body of their own; written to dir/name. */
static void write_named(const char *path, const char *model_name, size_t extra, const char *const *names)
{
    plush_pmx_model *m = toy_fx_model();
    m->name = pmx_fx_str(m, model_name);
    size_t nb = m->bone_count, nr = m->rigid_body_count, driven = 0;
    for (size_t i = 0; i < extra; i++)
        driven += names[i] != NULL;
    plush_pmx_bone *bones = pmx_fx_bones(m, nb + extra);
    memcpy(bones, m->bones, nb * sizeof *bones);
    plush_pmx_rigid_body *bodies = pmx_fx_rigid_bodies(m, nr + driven);
    memcpy(bodies, m->rigid_bodies, nr * sizeof *bodies);
    for (size_t i = 0, k = nr; i < extra; i++) {
        plush_pmx_bone *b = &bones[nb + i];
        char name[32];
        snprintf(name, sizeof name, "b%zu", nb + i);
        b->name = b->name_en = pmx_fx_str(m, names[i] ? names[i] : name);
        b->parent = 2;
        b->position[0] = 0.5f * (float)(i % 8) - 2.0f, b->position[1] = 6.0f;
        if (!names[i])
            continue;
        plush_pmx_rigid_body *r = &bodies[k++];
        r->name = r->name_en = b->name;
        r->bone = (int32_t)(nb + i), r->mode = PLUSH_PMX_RIGID_PHYSICS, r->shape = PLUSH_PMX_RIGID_SPHERE;
        r->size[0] = 0.1f, r->mass = 0.1f, r->group = 2, r->mask = 0;
        memcpy(r->position, b->position, sizeof r->position);
    }
    m->bones = bones, m->bone_count = nb + extra;
    m->rigid_bodies = bodies, m->rigid_body_count = nr + driven;
    write_model(m, path);
    plush_pmx_free(m);
}

static plush_pmx_model *read_pmx(const char *path)
{
    plush_diag d = {0};
    plush_diag_reset(&d);
    plush_pmx_model *m = NULL;
    pmx_fx_ok(plush_pmx_read_file(path, NULL, &m, &d), &d);
    return m;
}

static plush_vmd_motion *read_vmd(const char *path)
{
    plush_diag d = {0};
    plush_diag_reset(&d);
    plush_vmd_motion *v = NULL;
    pmx_fx_ok(plush_vmd_read_file(path, &v, &d), &d);
    return v;
}

/* Whether the motion keys a bone of this name (as the VMD holds it). */
static bool keys_bone(const plush_vmd_motion *v, const char *name)
{
    for (size_t i = 0; i < v->bone_key_count; i++)
        if (v->bone_keys[i].name.len == strlen(name) && memcmp(v->bone_keys[i].name.s, name, strlen(name)) == 0)
            return true;
    return false;
}

static int count_of(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

/* A model named "Café" with driven bones "Miku ♡" and Hangul: the bake is written, the characters Shift-JIS
 * lacks replaced in the VMD and (the driven bones) in the baked PMX alike, with one warning. */
static void test_names_shift_jis_cannot_hold(void **state)
{
    (void)state;
    char model[600], out[600], p[700];
    const char *names[] = {"Miku ♡", "미쿠"};
    write_named(cli_tmp_path(model, sizeof model, "cafe.pmx"), "Café", 2, names);
    cli_result r;
    CLI_RUN(&r, "run", model, "--cage", "body", "--bake-physics", "--frames", "3", "-o",
            cli_tmp_path(out, sizeof out, "out_cafe"));
    cli_expect_code(&r, 0);
    print_message("%s", r.err);
    assert_int_equal(count_of(r.err, "Shift-JIS cannot hold"), 1);
    assert_non_null(strstr(r.err, "\"Café\" as \"Cafe\""));
    cli_result_free(&r);
    snprintf(p, sizeof p, "%s/cafe_plush.vmd", out);
    plush_vmd_motion *v = read_vmd(p);
    assert_string_equal(v->model_name.s, "Cafe");
    assert_true(keys_bone(v, "Miku _"));
    assert_true(keys_bone(v, "__"));
    plush_vmd_free(v);
    snprintf(p, sizeof p, "%s/cafe_plush.pmx", out);
    plush_pmx_model *m = read_pmx(p);
    assert_string_equal(m->name.s, "Café"); /* PMX holds it */
    assert_string_equal(m->bones[3].name.s, "Miku _");
    assert_string_equal(m->bones[4].name.s, "__");
    plush_pmx_free(m);
}

/* Two driven bones at 10,007 and 10,008 whose names share their first 15 bytes: each gets a name of its own
 * within 15 bytes (ten bytes, '_' and the index would make 16, and share "ABCDEFGHIJ_1000"). */
static void test_vmd_names_unique(void **state)
{
    (void)state;
    enum { EXTRA = 10006 };
    const char **names = calloc(EXTRA, sizeof *names);
    assert_non_null(names);
    names[EXTRA - 2] = "ABCDEFGHIJKLMNOPQ1";
    names[EXTRA - 1] = "ABCDEFGHIJKLMNOPQ2";
    char model[600], out[600], p[700];
    write_named(cli_tmp_path(model, sizeof model, "long.pmx"), "long names", EXTRA, names);
    free(names);
    cli_result r;
    CLI_RUN(&r, "run", model, "--cage", "body", "--bake-physics", "--frames", "3", "-o",
            cli_tmp_path(out, sizeof out, "out_long"));
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.out, "2 renamed"));
    cli_result_free(&r);
    snprintf(p, sizeof p, "%s/long_plush.pmx", out);
    plush_pmx_model *m = read_pmx(p);
    const plush_str *a = &m->bones[10007].name, *b = &m->bones[10008].name;
    print_message("renamed: %s, %s\n", a->s, b->s);
    assert_true(a->len <= 15 && b->len <= 15);
    assert_false(a->len == b->len && memcmp(a->s, b->s, a->len) == 0);
    /* no other bone starts with either's 15 bytes */
    for (size_t i = 0; i < m->bone_count; i++)
        if (i != 10007 && i != 10008) {
            const plush_str *o = &m->bones[i].name;
            assert_false(o->len >= a->len && memcmp(o->s, a->s, a->len) == 0);
            assert_false(o->len >= b->len && memcmp(o->s, b->s, b->len) == 0);
        }
    snprintf(p, sizeof p, "%s/long_plush.vmd", out);
    plush_vmd_motion *v = read_vmd(p);
    char name[16];
    snprintf(name, sizeof name, "%.*s", (int)a->len, a->s);
    assert_true(keys_bone(v, name));
    snprintf(name, sizeof name, "%.*s", (int)b->len, b->s);
    assert_true(keys_bone(v, name));
    plush_vmd_free(v);
    plush_pmx_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_random_triangles, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cage_pieces, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_soft_bodies, setup, teardown),
        cmocka_unit_test_setup_teardown(test_soft_iterations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ik_chain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bake_physics_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_names_shift_jis_cannot_hold, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vmd_names_unique, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
