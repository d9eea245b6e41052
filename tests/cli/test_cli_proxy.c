/* plush proxy and plush attach, run as a user runs them (the binary from PLUSH_BIN) on Alicia and on models
 * built in code, in a temporary directory removed afterwards. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/obj.h"
#include "plush/plush.h"
#include "plush/sys/core.h"
#include "plush/sys/pmx.h"
#include "plush/sys/scene.h"
#include "support/cli_run.h"
#include "support/mesh_fixture.h"
#include "support/shared_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static char ball_path[300], hair_obj[300], hair_pmx[300], out_path[300], empty_obj[300];

static int setup(void **state)
{
    (void)state;
    if (cli_tmp_setup("plush_proxy") != 0)
        return -1;
    cli_tmp_path(ball_path, sizeof ball_path, "ball.pmx");
    cli_tmp_path(hair_obj, sizeof hair_obj, "hair.obj");
    cli_tmp_path(hair_pmx, sizeof hair_pmx, "hair.pmx");
    cli_tmp_path(out_path, sizeof out_path, "out.pmx");
    cli_tmp_path(empty_obj, sizeof empty_obj, "empty.obj");
    plush_pmx_model *m = mesh_fx_model(1);
    mesh_fx s = mesh_fx_uv_sphere(2.0f, 30, 60);
    mesh_fx_add_material(m, "ball", &s, 0);
    mesh_fx_free(&s);
    plush_diag d = {0};
    plush_diag_reset(&d);
    plush_status st = plush_pmx_write_file(m, NULL, ball_path, &d);
    plush_pmx_free(m);
    cli_write_all(empty_obj, "v 0 0 0\nv 1 0 0\n", 16);
    return st == PLUSH_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return cli_tmp_teardown();
}

/* The number after label on its line of the report. */
static long reported(const cli_result *r, const char *label)
{
    const char *at = strstr(r->out, label);
    if (!at)
        fail_msg("no '%s' in:\n%s", label, r->out);
    return strtol(at + strlen(label), NULL, 10);
}

static void test_proxy_ball(void **state)
{
    (void)state;
    char obj[300];
    cli_tmp_path(obj, sizeof obj, "ball.obj");
    cli_result r;
    CLI_RUN(&r, "proxy", ball_path, "--triangles", "400", "--offset", "0.1", "-o", obj);
    cli_expect_code(&r, 0);
    long tris = reported(&r, "triangles        ");
    assert_true(tris >= 360 && tris <= 440);
    assert_non_null(strstr(r.out, "closed manifold  yes"));
    assert_non_null(strstr(r.out, "distance         max "));
    plush_obj_model *m = NULL;
    plush_diag d = {0};
    size_t len;
    char *text = cli_read_all(obj, &len);
    assert_non_null(text);
    assert_int_equal(plush_obj_read((const uint8_t *)text, len, &m, &d), PLUSH_OK);
    assert_int_equal((long)m->triangle_count, tris);
    assert_int_equal((long)m->vertex_count, reported(&r, "vertices         "));
    plush_obj_model_free(m);
    free(text);
    cli_result_free(&r);
}

/* Alicia's hair as OBJ and as PMX, then attached pinned to the head; plush info shows the soft bodies. */
static void test_proxy_attach_alicia(void **state)
{
    (void)state;
    cli_result r;
    CLI_RUN(&r, "proxy", ALICIA, "--materials", "hair", "--triangles", "300", "--offset", "0.02", "-o", hair_obj);
    cli_expect_code(&r, 0);
    long tris = reported(&r, "triangles        ");
    assert_true(tris > 200 && tris <= 330);
    assert_non_null(strstr(r.out, "closed manifold  no ("));
    cli_result_free(&r);

    CLI_RUN(&r, "proxy", ALICIA, "--materials", "hair", "--triangles", "300", "-o", hair_pmx);
    cli_expect_code(&r, 0);
    plush_pmx_model *cage = NULL;
    plush_diag d = {0};
    assert_int_equal(plush_pmx_read_file(hair_pmx, NULL, &cage, &d), PLUSH_OK);
    assert_int_equal(cage->material_count, 1);
    assert_int_equal((long)(cage->index_count / 3), reported(&r, "triangles        "));
    plush_pmx_free(cage);
    cli_result_free(&r);

    /* the head alone leaves the braid's pieces free: allowed here (refused without --allow-free) */
    CLI_RUN(&r, "attach", ALICIA, "--proxy", hair_obj, "--pin-bone", "頭", "--allow-free", "--preset", "cloth", "--set",
            "config.mt=0.4", "--iterations.p", "7", "--name", "髪", "-o", out_path);
    cli_expect_code(&r, 0);
    long pinned = reported(&r, "pinned           ");
    assert_true(pinned > 0);
    cli_result_free(&r);
    plush_pmx_model *out = NULL;
    assert_int_equal(plush_pmx_read_file(out_path, NULL, &out, &d), PLUSH_OK);
    assert_true(out->version == 2.1f && out->soft_body_count >= 1);
    long pins = 0;
    for (size_t i = 0; i < out->soft_body_count; i++) {
        const plush_pmx_soft_body *sb = &out->soft_bodies[i];
        assert_true(sb->config.mt == 0.4f && sb->p_iterations == 7 && sb->aero_model == 1 && sb->lst == 0.9f);
        assert_non_null(strstr(sb->name.s, "髪"));
        pins += sb->pin_count;
    }
    assert_int_equal(pins, pinned);
    plush_pmx_free(out);

    CLI_RUN(&r, "info", "--json", out_path);
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.out, "\"soft_bodies\":[{"));
    assert_non_null(strstr(r.out, "\"mt\":0.4"));
    cli_result_free(&r);

    /* The PMX cage attaches the same way. */
    char out2[300];
    cli_tmp_path(out2, sizeof out2, "out2.pmx");
    CLI_RUN(&r, "attach", ALICIA, "--proxy", hair_pmx, "--pin-bone", "頭", "--allow-free", "-o", out2);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
}

/* Bad input: exit 1, one line, no output file; bad usage: exit 2. */
static void test_errors(void **state)
{
    (void)state;
    char missing[300];
    cli_tmp_path(missing, sizeof missing, "never.pmx");
    cli_result r;
    CLI_RUN(&r, "proxy", ALICIA, "--materials", "nope", "--triangles", "100", "-o", missing);
    cli_expect_one_error_line(&r);
    assert_non_null(strstr(r.err, "no material named \"nope\""));
    assert_false(cli_exists(missing));
    cli_result_free(&r);

    const char *const usage[][10] = {
        {"proxy", ALICIA, "--triangles", "0", "-o", "x.obj", NULL},
        {"proxy", ALICIA, "--triangles", "10", "-o", "x.txt", NULL},
        {"proxy", ALICIA, "--triangles", "10", "--offset", "abc", "-o", "x.obj", NULL},
        {"proxy", ALICIA, "-o", "x.obj", NULL},
        {"proxy", ALICIA, "--triangles", "10", "--wrap", "--offset", "-0.5", "-o", "x.obj", NULL},
        {"proxy", ALICIA, "--triangles", "10", "--wrap=yes", "-o", "x.obj", NULL},
        {"attach", ALICIA, "-o", "x.pmx", NULL},
        {"attach", ALICIA, "--proxy", "a.obj", "--set", "nope=1", "-o", "x.pmx", NULL},
        {"attach", ALICIA, "--proxy", "a.obj", "--set", "group=99", "-o", "x.pmx", NULL},
        {"attach", ALICIA, "--proxy", "a.obj", "--preset", "rubber", "-o", "x.pmx", NULL},
        {"attach", ALICIA, "--proxy", "a.obj", "--pin-vertices", "3-1", "-o", "x.pmx", NULL},
        {"attach", ALICIA, "--proxy", "a.obj", "--frobnicate", "-o", "x.pmx", NULL},
    };
    for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++) {
        cli_run_list(&r, usage[i]);
        if (r.code != 2)
            fail_msg("case %zu: exit %d, stderr:\n%s", i, r.code, r.err);
        cli_result_free(&r);
    }

    CLI_RUN(&r, "attach", ALICIA, "--proxy", hair_obj, "--pin-bone", "尻尾", "-o", missing);
    cli_expect_one_error_line(&r);
    assert_non_null(strstr(r.err, "no bone named"));
    assert_false(cli_exists(missing));
    cli_result_free(&r);

    CLI_RUN(&r, "attach", ALICIA, "--proxy", hair_obj, "--anchor", "ない", "-o", missing);
    cli_expect_one_error_line(&r);
    assert_non_null(strstr(r.err, "no rigid body named"));
    cli_result_free(&r);

    CLI_RUN(&r, "attach", ALICIA, "--proxy", empty_obj, "-o", missing);
    cli_expect_one_error_line(&r);
    assert_non_null(strstr(r.err, "no triangles"));
    assert_false(cli_exists(missing));
    cli_result_free(&r);

    CLI_RUN(&r, "proxy", "--help");
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.out, "--triangles N"));
    assert_non_null(strstr(r.out, "--wrap"));
    cli_result_free(&r);
    CLI_RUN(&r, "attach", "--help");
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.out, "presets"));
    cli_result_free(&r);
}

/* The target check on the demo's detailed mesh (the bear's fur, 113k triangles, made by make into
 * proxies/): each target reached within 10%, the closed fur giving closed cages. */
static void test_proxy_demo_targets(void **state)
{
    (void)state;
    static const char *const targets[] = {"300", "1000", "3000"};
    for (size_t i = 0; i < sizeof targets / sizeof *targets; i++) {
        char obj[300];
        cli_tmp_path(obj, sizeof obj, "bear_cage.obj");
        cli_result r;
        CLI_RUN(&r, "proxy", "proxies/plush_bear.pmx", "--materials", "体,頭,口元,耳,腕,足", "--triangles", targets[i],
                "-o", obj);
        cli_expect_code(&r, 0);
        long want = strtol(targets[i], NULL, 10), tris = reported(&r, "triangles        ");
        assert_true(tris >= want - want / 10 && tris <= want + want / 10);
        assert_true(reported(&r, "source           ") > 100000);
        cli_result_free(&r);
    }
}

/* --wrap on the demo bear's fur (a dozen separate pieces): one closed piece at 300 and 1000 triangles
 * (within 10%), the report saying so, and the same bytes from a second run. */
static void test_proxy_wrap_demo(void **state)
{
    (void)state;
    static const char *const targets[] = {"300", "1000"};
    for (size_t i = 0; i < sizeof targets / sizeof *targets; i++) {
        char obj[300], again[300];
        cli_tmp_path(obj, sizeof obj, "bear_wrap.obj");
        cli_tmp_path(again, sizeof again, "bear_wrap_again.obj");
        cli_result r;
        CLI_RUN(&r, "proxy", "proxies/plush_bear.pmx", "--materials", "体,頭,口元,耳,腕,足", "--triangles", targets[i],
                "--wrap", "-o", obj);
        cli_expect_code(&r, 0);
        long want = strtol(targets[i], NULL, 10), tris = reported(&r, "triangles        ");
        assert_true(tris >= want - want / 10 && tris <= want + want / 10);
        assert_non_null(strstr(r.out, "closed manifold  yes"));
        assert_int_equal(reported(&r, "pieces           "), 1);
        assert_true(reported(&r, "wrap             ") > tris);
        cli_result_free(&r);
        CLI_RUN(&r, "proxy", "proxies/plush_bear.pmx", "--materials", "体,頭,口元,耳,腕,足", "--triangles", targets[i],
                "--wrap", "-o", again);
        cli_expect_code(&r, 0);
        cli_result_free(&r);
        size_t la = 0, lb = 0;
        char *a = cli_read_all(obj, &la), *b = cli_read_all(again, &lb);
        assert_non_null(a);
        assert_non_null(b);
        assert_int_equal(la, lb);
        assert_memory_equal(a, b, la);
        plush_obj_model *m = NULL;
        plush_diag d = {0};
        assert_int_equal(plush_obj_read((const uint8_t *)a, la, &m, &d), PLUSH_OK);
        assert_int_equal((long)m->triangle_count, tris);
        plush_obj_model_free(m);
        free(a);
        free(b);
    }
}

/* Binary little-endian PLY positions (x y z nx ny nz floats per vertex, as plush writes them). */
static float (*ply_positions(const char *path, size_t *count))[6]
{
    size_t len = 0;
    char *data = cli_read_all(path, &len);
    assert_non_null(data);
    char *end = strstr(data, "end_header\n");
    char *line = strstr(data, "element vertex ");
    assert_non_null(end);
    assert_non_null(line);
    *count = strtoul(line + 15, NULL, 10);
    size_t off = (size_t)(end - data) + 11;
    assert_true(off + *count * 24 <= len);
    float(*v)[6] = malloc(*count * sizeof *v);
    memcpy(v, data + off, *count * sizeof *v);
    free(data);
    return v;
}

static int by_x(const void *pa, const void *pb)
{
    const float *a = pa, *b = pb;
    return (a[0] > b[0]) - (a[0] < b[0]);
}

/* Whether p lies within tol of a point of pts (sorted by x) on every axis. */
static bool layer_of(const float (*pts)[3], size_t n, const float p[3], double tol)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((double)pts[mid][0] < (double)p[0] - tol)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < n && (double)pts[i][0] <= (double)p[0] + tol; i++)
        if (fabs((double)pts[i][1] - p[1]) <= tol && fabs((double)pts[i][2] - p[2]) <= tol)
            return true;
    return false;
}

/* The round trip on a real model: a cage for Alicia's hair, attached pinned to the bones the hair
 * hangs from, run with 120 frames of サンプルモーション_0046 by plush run: no blow-up, the hair moves
 * softly, and every other vertex is bit-identical to the bones-mode run. */
static void test_demo_on_alicia_hair(void **state)
{
    (void)state;
    char obj[300], soft[300], out_p[300], out_b[300], fp[400], fb[400];
    cli_tmp_path(obj, sizeof obj, "hair_cage.obj");
    cli_tmp_path(soft, sizeof soft, "alicia_soft.pmx");
    cli_tmp_path(out_p, sizeof out_p, "run_proxy");
    cli_tmp_path(out_b, sizeof out_b, "run_bones");
    const char *motion = SHARED_MMD "/mmd_base/サンプルモーション_0046.vmd";
    cli_result r;
    CLI_RUN(&r, "proxy", ALICIA, "--materials", "hair", "--triangles", "300", "--offset", "0.02", "-o", obj);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    CLI_RUN(&r, "attach", ALICIA, "--proxy", obj, "--pin-bone", "頭", "--pin-bone", "三つ編み４", "--preset", "plush",
            "-o", soft);
    cli_expect_code(&r, 0);
    assert_null(strstr(r.err, "falls freely"));
    cli_result_free(&r);
    CLI_RUN(&r, "run", soft, "--motion", motion, "--frames", "120", "--materials", "hair", "--export", "ply",
            "--every", "119", "-o", out_p);
    cli_expect_code(&r, 0);
    assert_null(strstr(r.out, "blow-ups"));
    cli_result_free(&r);
    CLI_RUN(&r, "run", soft, "--motion", motion, "--frames", "120", "--mode", "bones", "--every", "119", "-o", out_b);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    snprintf(fp, sizeof fp, "%s/frames/frame_00119.ply", out_p);
    snprintf(fb, sizeof fb, "%s/frames/frame_00119.ply", out_b);
    size_t np = 0, nb = 0;
    float(*a)[6] = ply_positions(fp, &np), (*b)[6] = ply_positions(fb, &nb);
    assert_int_equal(np, nb);

    plush_diag d = {0};
    plush_diag_reset(&d);
    plush_pmx_model *m = NULL;
    assert_int_equal(plush_pmx_read_file(ALICIA, NULL, &m, &d), PLUSH_OK);
    bool *hair = calloc(m->vertex_count, 1);
    plush_arena arena = {0};
    for (size_t mat = 0; mat < m->material_count; mat++) {
        if (strcmp(m->materials[mat].name.s, "hair") != 0)
            continue;
        uint32_t *verts = NULL;
        size_t n = 0;
        assert_int_equal(plush_pmx_material_vertices(m, mat, &arena, &verts, &n, &d), PLUSH_OK);
        for (size_t i = 0; i < n; i++)
            hair[verts[i]] = true;
    }
    /* the layers bound with the hair: vertices of other materials at a hair vertex's rest position (within a
     * millionth of the hair's extent, as plush_scene_bound_vertices pulls them in) */
    size_t nh = 0;
    float lo = INFINITY, hi = -INFINITY;
    for (size_t v = 0; v < m->vertex_count; v++)
        if (hair[v]) {
            nh++;
            for (int k = 0; k < 3; k++) {
                lo = fminf(lo, m->vertices[v].position[k]);
                hi = fmaxf(hi, m->vertices[v].position[k]);
            }
        }
    double tol = 1e-6 * (double)(hi - lo) * 1.01;
    float(*hp)[3] = malloc((nh ? nh : 1) * sizeof *hp);
    size_t h = 0;
    for (size_t v = 0; v < m->vertex_count; v++)
        if (hair[v])
            memcpy(hp[h++], m->vertices[v].position, sizeof hp[0]);
    qsort(hp, nh, sizeof *hp, by_x);
    /* and the pieces of those layers lying within a cage edge of the hair, bound whole (the bangs, whose
     * roots meet the hair): the set plush binds, read from the caged model */
    plush_pmx_model *caged = NULL;
    assert_int_equal(plush_pmx_read_file(soft, NULL, &caged, &d), PLUSH_OK);
    plush_scene_proxy proxy;
    assert_int_equal(plush_scene_proxy_build(caged, &arena, &proxy, &d), PLUSH_OK);
    const char *hair_name[] = {"hair"};
    plush_scene_bound_options only = {.materials = hair_name, .material_count = 1};
    uint32_t *bound_list = NULL;
    size_t bound_count = 0;
    assert_int_equal(plush_scene_bound_vertices(caged, &proxy, &only, &arena, &bound_list, &bound_count, &d), PLUSH_OK);
    bool *bound = calloc(caged->vertex_count, 1);
    for (size_t i = 0; i < bound_count; i++)
        bound[bound_list[i]] = true;
    size_t layers = 0, pieces = 0;
    double moved = 0;
    for (size_t v = 0; v < m->vertex_count; v++) {
        if (!hair[v] && layer_of((const float(*)[3])hp, nh, m->vertices[v].position, tol)) {
            assert_true(bound[v]);
            layers++;
            continue; /* moves with the hair */
        }
        if (!hair[v] && bound[v]) {
            pieces++;
            continue; /* the rest of a layer's piece: moves with the hair too */
        }
        if (!hair[v]) {
            assert_memory_equal(a[v], b[v], sizeof a[v]); /* the rest of the model is unchanged */
            continue;
        }
        for (int k = 0; k < 3; k++) {
            assert_true(isfinite(a[v][k]));
            double e = fabs((double)a[v][k] - b[v][k]);
            moved = e > moved ? e : moved;
        }
    }
    printf("alicia hair cage: the hair lies up to %.3f units from its bone-skinned place at frame 119; %zu vertices "
           "of other materials share its rest positions and move with it, and %zu more of their pieces\n", moved,
           layers, pieces);
    assert_true(layers > 0); /* Alicia's hair has layers: maegami, hair_kiwa, ribbon */
    assert_true(pieces > 0); /* the bangs (maegami) meet the hair at their roots only */
    assert_true(pieces < m->vertex_count / 20); /* and the face, which meets it too, stays on its bones */
    assert_true(moved > 0.01); /* soft: it moved */
    assert_true(moved < 10.0); /* and it hangs on the head, not blown away (Alicia is ~20 units tall) */
    plush_arena_free(&arena);
    free(hair);
    free(hp);
    free(bound);
    plush_pmx_free(caged);
    plush_pmx_free(m);
    free(a);
    free(b);
}

/* The committed cage (proxies/alicia_hair_cage.obj) with the commands proxies/README.md gives for it: it
 * reads as the cage plush proxy makes (293 triangles), attaches to Alicia pinned to the head and the braid,
 * and plush run bakes a few frames of the sample motion on the hair. */
static void test_committed_alicia_hair_cage(void **state)
{
    (void)state;
    const char *cage_path = "proxies/alicia_hair_cage.obj";
    char soft[300], out_dir[300], baked[400];
    cli_tmp_path(soft, sizeof soft, "alicia_hair_soft.pmx");
    cli_tmp_path(out_dir, sizeof out_dir, "alicia_hair_run");
    plush_diag d = {0};
    plush_diag_reset(&d);
    plush_obj_model *cage = NULL;
    assert_int_equal(plush_obj_read_file(cage_path, &cage, &d), PLUSH_OK);
    assert_int_equal(cage->triangle_count, 293);
    plush_obj_model_free(cage);

    cli_result r;
    CLI_RUN(&r, "attach", ALICIA, "--proxy", cage_path, "--pin-bone", "頭", "--pin-bone", "三つ編み４", "--preset",
            "plush", "-o", soft);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    CLI_RUN(&r, "run", soft, "--motion", SHARED_MMD "/mmd_base/サンプルモーション_0046.vmd", "--frames", "5",
            "--materials", "hair", "-o", out_dir);
    cli_expect_code(&r, 0);
    /* Alicia's textures are not in the shared folder: warnings, and the run goes on */
    for (const char *line = r.err; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        assert_memory_equal(line, "plush: warning: ", 16);
    assert_true(r.err_len > 0);
    cli_result_free(&r);

    snprintf(baked, sizeof baked, "%s/alicia_hair_soft_plush.pmx", out_dir);
    plush_pmx_model *m = NULL, *src = NULL;
    plush_diag_reset(&d);
    assert_int_equal(plush_pmx_read_file(baked, NULL, &m, &d), PLUSH_OK);
    assert_int_equal(m->soft_body_count, 0); /* the bake: the soft bodies became bones */
    /* the textures are named from OUTDIR, one folder below the attached model: where the model has them */
    assert_int_equal(plush_pmx_read_file(soft, NULL, &src, &d), PLUSH_OK);
    assert_int_equal(m->texture_count, src->texture_count);
    assert_true(m->texture_count > 0);
    for (size_t i = 0; i < m->texture_count; i++) {
        char want[300];
        snprintf(want, sizeof want, "../%s", src->textures[i].s);
        assert_string_equal(m->textures[i].s, want);
    }
    plush_pmx_free(src);
    plush_pmx_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_proxy_ball),
        cmocka_unit_test(test_proxy_attach_alicia),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_demo_on_alicia_hair),
        cmocka_unit_test(test_committed_alicia_hair_cage),
        cmocka_unit_test(test_proxy_demo_targets),
        cmocka_unit_test(test_proxy_wrap_demo),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
