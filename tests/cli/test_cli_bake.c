/* plush run's bake, run as a user runs it: the demo bear's baked PMX 2.0 + VMD replayed by plush pose (the
 * way an MMD player skins) against the proxy-skinned mesh, within the fit's tolerance, with bones asked
 * for, and with its textures found or copied. The bear is made by `make` (proxies/). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/plush.h"
#include "plush/sys/render.h"
#include "support/cli_run.h"
#include "support/mesh_fixture.h"
#include "support/pmx_fixture.h"
#include "support/shared_data.h"
#include "support/toy_fixture.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int setup(void **state)
{
    (void)state;
    return cli_tmp_setup("plush_bake");
}

static int teardown(void **state)
{
    (void)state;
    return cli_tmp_teardown();
}


static void test_bake_replays_as_the_proxy_run(void **state)
{
    (void)state;
    char out[512], pmx[600], vmd[600], frame[600], posed[600];
    cli_tmp_path(out, sizeof out, "bear");
    cli_result r;
    CLI_RUN(&r, "run", BEAR, "--motion", BEAR_VMD, "--im2", BEAR_IM2, "--frames", "101", "--every", "50", "--export",
            "pmx+vmd,obj", "--bake-tolerance", "0", "-o", out);
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.out, "frames          101"));
    assert_non_null(strstr(r.out, "101000 recorded, a key every frame)"));
    cli_result_free(&r);
    snprintf(pmx, sizeof pmx, "%s/plush_bear_plush.pmx", out);
    snprintf(vmd, sizeof vmd, "%s/plush_bear_plush.vmd", out);
    snprintf(frame, sizeof frame, "%s/frames/frame_00100.obj", out);
    cli_tmp_path(posed, sizeof posed, "posed.obj");
    assert_true(cli_exists(pmx) && cli_exists(vmd) && cli_exists(frame));
    char f0[600];
    snprintf(f0, sizeof f0, "%s/frames/frame_00050.obj", out);
    assert_true(cli_exists(f0));
    snprintf(f0, sizeof f0, "%s/frames/frame_00001.obj", out);
    assert_false(cli_exists(f0)); /* --every 50 */

    /* the baked files are plain PMX 2.0 with one pseudo-bone per cage triangle */
    plush_diag d = {0};
    plush_diag_reset(&d);
    plush_pmx_model *m = NULL;
    assert_int_equal(plush_pmx_read_file(pmx, NULL, &m, &d), PLUSH_OK);
    assert_true(m->version == 2.0f);
    assert_int_equal(m->soft_body_count, 0);
    assert_int_equal(m->bone_count, 12 + 1 + 1000);
    size_t baked_vertices = m->vertex_count;
    plush_pmx_free(m);

    /* replayed by the bone pipeline, the bake gives the proxy-skinned mesh of the run */
    CLI_RUN(&r, "pose", pmx, "--motion", vmd, "--frame", "100", "--mesh", posed);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    size_t na = 0, nb = 0;
    float(*a)[3] = cli_obj_positions(frame, &na), (*b)[3] = cli_obj_positions(posed, &nb);
    assert_int_equal(nb, baked_vertices);
    assert_int_equal(na, nb); /* the run's frame has the baked PMX's vertices: the cage's are left out */
    assert_int_equal(na, 59929);
    double worst = 0, moved = 0;
    plush_pmx_model *bear = NULL;
    assert_int_equal(plush_pmx_read_file(BEAR, NULL, &bear, &d), PLUSH_OK);
    assert_int_equal(bear->vertex_count, 60431); /* the bear's 59,929 and the cage's 502 after them */
    for (size_t i = 0; i < nb; i++)
        for (int k = 0; k < 3; k++) {
            worst = fmax(worst, fabs((double)a[i][k] - b[i][k]));
            moved = fmax(moved, fabs((double)a[i][k] - bear->vertices[i].position[k]));
        }
    assert_true(moved > 3.0);    /* the bear did move: the hook lifts it 5 units at frame 100 */
    assert_true(worst < 1e-3);   /* and the bake reproduces it (the OBJ's 9 digits included) */
    plush_pmx_free(bear);
    free(a);
    free(b);
}

/* The largest distance between the run's OBJ frame f and the bake in out (files <stem>_plush.pmx and .vmd)
 * posed at f by plush pose; *rms the root mean square distance. */
static double stem_miss(const char *out, const char *stem, int f, double *rms)
{
    char pmx[600], vmd[600], frame[600], posed[600], fs[16];
    snprintf(pmx, sizeof pmx, "%s/%s_plush.pmx", out, stem);
    snprintf(vmd, sizeof vmd, "%s/%s_plush.vmd", out, stem);
    snprintf(frame, sizeof frame, "%s/frames/frame_%05d.obj", out, f);
    snprintf(fs, sizeof fs, "%d", f);
    cli_tmp_path(posed, sizeof posed, "posed.obj");
    cli_result r;
    CLI_RUN(&r, "pose", pmx, "--motion", vmd, "--frame", fs, "--mesh", posed);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    size_t na = 0, nb = 0;
    float(*a)[3] = cli_obj_positions(frame, &na), (*b)[3] = cli_obj_positions(posed, &nb);
    assert_int_equal(na, nb);
    double worst = 0, sq = 0;
    for (size_t i = 0; i < nb; i++) {
        double dx = (double)a[i][0] - b[i][0], dy = (double)a[i][1] - b[i][1], dz = (double)a[i][2] - b[i][2];
        worst = fmax(worst, sqrt(dx * dx + dy * dy + dz * dz));
        sq += dx * dx + dy * dy + dz * dz;
    }
    *rms = nb ? sqrt(sq / (double)nb) : 0;
    free(a);
    free(b);
    return worst;
}

static double bake_miss(const char *out, int f, double *rms)
{
    return stem_miss(out, "plush_bear", f, rms);
}

/* By default the bake fits a few bones to the motion and keys them only where interpolation would miss;
 * replayed by plush pose it stays within 0.1% of the bear's height (RMS over vertices) and 0.5% (worst
 * vertex) of the run's frames, frames between keys included (37 and 73 are no sampled frame of the fit). */
static void test_bake_fitted_within_tolerance(void **state)
{
    (void)state;
    char out[512];
    cli_tmp_path(out, sizeof out, "bear_fitted");
    cli_result r;
    CLI_RUN(&r, "run", BEAR, "--motion", BEAR_VMD, "--im2", BEAR_IM2, "--frames", "101", "--export", "pmx+vmd,obj",
            "-o", out);
    cli_expect_code(&r, 0);
    const char *line = strstr(r.out, " keys (101000 recorded, within 0.0113 units (0.1% of the model's height, "
                                     "0.081% of the soft part's size))");
    assert_non_null(line);
    assert_non_null(strstr(r.out, "fitted to 1000 cage triangles in "));
    while (line > r.out && line[-1] != '\n')
        line--;
    unsigned long bones = 0, keys = 0;
    assert_int_equal(sscanf(line, " %lu bones, %lu keys", &bones, &keys), 2);
    printf("%lu bones, %lu keys of 101000\n", bones, keys);
    assert_true(bones < 1000);
    assert_true(keys < 101000 / 10);
    cli_result_free(&r);
    plush_diag d = {0};
    plush_pmx_model *bear = NULL;
    assert_int_equal(plush_pmx_read_file(BEAR, NULL, &bear, &d), PLUSH_OK);
    double height = plush_pmx_height(bear);
    plush_pmx_free(bear);
    static const int frames[] = {37, 73, 100};
    for (size_t i = 0; i < sizeof frames / sizeof *frames; i++) {
        double rms = 0, miss = bake_miss(out, frames[i], &rms);
        printf("frame %d: RMS %.3g, worst %.3g (height %.3g)\n", frames[i], rms, miss, height);
        assert_true(rms <= 0.001 * height);
        assert_true(miss <= 0.005 * height);
    }
}

/* --bake-bones N fits N bones; --bake-tolerance 0 keys every frame of them, and the summary says those bones
 * are no exact bake (the worst vertex it gives is the fit's). */
static void test_bake_bones_asked(void **state)
{
    (void)state;
    char out[512];
    cli_tmp_path(out, sizeof out, "bear_bones");
    cli_result r;
    CLI_RUN(&r, "run", BEAR, "--motion", BEAR_VMD, "--im2", BEAR_IM2, "--frames", "31", "--export", "pmx+vmd,obj",
            "--every", "30", "--bake-bones", "24", "--bake-tolerance", "0", "-o", out);
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.out, "24 bones, "));
    assert_non_null(strstr(r.out, "(31000 recorded, a key every frame of the 24 bones asked for, which miss the exact "
                               "bake by up to "));
    cli_result_free(&r);
    char pmx[600];
    snprintf(pmx, sizeof pmx, "%s/plush_bear_plush.pmx", out);
    plush_diag d = {0};
    plush_pmx_model *m = NULL;
    assert_int_equal(plush_pmx_read_file(pmx, NULL, &m, &d), PLUSH_OK);
    assert_int_equal(m->bone_count, 12 + 1 + 24);
    plush_pmx_free(m);
    double rms = 0, miss = bake_miss(out, 30, &rms);
    printf("frame 30: RMS %.3g, worst %.3g\n", rms, miss);
    assert_true(miss < 0.1);
}

static plush_pmx_model *read_model(const char *path)
{
    plush_diag d = {0};
    plush_diag_reset(&d);
    plush_pmx_model *m = NULL;
    assert_int_equal(plush_pmx_read_file(path, NULL, &m, &d), PLUSH_OK);
    return m;
}

/* --bake-physics on Alicia with a hair cage: the bones her rigid bodies drive (skirt, side hair, braid,
 * ribbons, sleeves; the tips of the braid's and side hair's IK chains, whose IK the bake turns off) are keyed
 * and those bodies follow their bones in the baked PMX, so plush pose (no
 * physics) replays the run's frame within 1e-3 units at every vertex; two skirt bones whose names share
 * VMD's 15 bytes are renamed. Without it the player's own physics is left to move them: posed without
 * physics the bake misses by far more. */
static void test_bake_physics(void **state)
{
    (void)state;
    if (!cli_exists(ALICIA) || !cli_exists(MOTION_0046))
        skip();
    char out[512];
    cli_tmp_path(out, sizeof out, "alicia_physics");
    cli_result r;
    CLI_RUN(&r, "run", ALICIA, "--motion", MOTION_0046, "--cage", "hair:300", "--frames", "61", "--every", "60",
            "--export", "pmx+vmd,obj", "--bake-physics", "--bake-tolerance", "0", "-o", out);
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.out, "physics baked: 56 bones keyed as plush moved them (2 renamed"));
    cli_result_free(&r);
    char pmx[600];
    snprintf(pmx, sizeof pmx, "%s/Alicia_solid_plush.pmx", out);
    plush_pmx_model *m = read_model(pmx);
    for (size_t i = 0; i < m->rigid_body_count; i++)
        assert_int_equal(m->rigid_bodies[i].mode, PLUSH_PMX_RIGID_FOLLOW_BONE);
    plush_pmx_free(m);
    double rms = 0, miss = stem_miss(out, "Alicia_solid", 60, &rms);
    printf("physics baked, frame 60: RMS %.3g, worst %.3g\n", rms, miss);
    assert_true(miss < 1e-3);

    cli_tmp_path(out, sizeof out, "alicia_no_physics");
    CLI_RUN(&r, "run", ALICIA, "--motion", MOTION_0046, "--cage", "hair:300", "--frames", "61", "--every", "60",
            "--export", "pmx+vmd,obj", "--bake-tolerance", "0", "-o", out);
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.out, "physics left to the player: 53 rigid bodies simulate there"));
    cli_result_free(&r);
    miss = stem_miss(out, "Alicia_solid", 60, &rms);
    printf("physics left to the player, posed without it, frame 60: RMS %.3g, worst %.3g\n", rms, miss);
    assert_true(miss > 0.05);
}

/* The test toy with a necktie as real characters have one: three bones hanging from the head in front of
 * the body, each on a dynamic rigid body, and an IK bone on the root whose target is the tie's tip and whose
 * links are the tie's first two bones -- so the IK bends the tie before physics moves it (as ﾈｸﾀｲＩＫ on
 * センター does). Three small spheres (materials tie1-tie3) are skinned to the tie's bones. */
static void tie_toy_file(char *path, size_t size)
{
    plush_pmx_model *t = toy_fx_model();
    plush_pmx_bone old[3];
    memcpy(old, t->bones, sizeof old);
    plush_pmx_bone *b = pmx_fx_bones(t, 7);
    memcpy(b, old, sizeof old);
    static const char *const names[] = {"tie1", "tie2", "tie3"};
    for (int k = 0; k < 3; k++) {
        plush_pmx_bone *tb = &b[3 + k];
        tb->name = tb->name_en = pmx_fx_str(t, names[k]);
        tb->parent = k == 0 ? 1 : 3 + k - 1;
        tb->position[0] = 0, tb->position[1] = 8.4f - 0.8f * (float)k, tb->position[2] = -2.2f;
    }
    plush_pmx_bone *ik = &b[6];
    ik->name = ik->name_en = pmx_fx_str(t, "tieIK");
    ik->parent = 0;
    ik->position[0] = 0.7f, ik->position[1] = 6.6f, ik->position[2] = -2.6f;
    ik->flags |= PLUSH_PMX_BONE_IK | PLUSH_PMX_BONE_TRANSLATABLE;
    ik->ik_target = 5, ik->ik_loop_count = 40, ik->ik_limit_angle = 0.5f;
    ik->ik_link_count = 2;
    ik->ik_links = pmx_fx_alloc(t, 2, sizeof *ik->ik_links);
    ik->ik_links[0].bone = 4, ik->ik_links[1].bone = 3;
    for (int k = 0; k < 3; k++) {
        mesh_fx ball = mesh_fx_uv_sphere(0.25f, 6, 8);
        for (size_t v = 0; v < ball.vertex_count; v++)
            for (int c = 0; c < 3; c++)
                ball.positions[v][c] += b[3 + k].position[c];
        mesh_fx_add_material(t, names[k], &ball, 3 + k);
        mesh_fx_free(&ball);
    }
    plush_pmx_rigid_body oldb[2];
    memcpy(oldb, t->rigid_bodies, sizeof oldb);
    plush_pmx_rigid_body *rb = pmx_fx_rigid_bodies(t, 5);
    memcpy(rb, oldb, sizeof oldb);
    plush_pmx_joint oldj[1];
    memcpy(oldj, t->joints, sizeof oldj);
    plush_pmx_joint *j = pmx_fx_joints(t, 4);
    memcpy(j, oldj, sizeof oldj);
    for (int k = 0; k < 3; k++) {
        plush_pmx_rigid_body *r = &rb[2 + k];
        r->name = r->name_en = pmx_fx_str(t, names[k]);
        r->bone = 3 + k, r->mode = PLUSH_PMX_RIGID_PHYSICS, r->group = 2, r->mask = 0;
        r->shape = PLUSH_PMX_RIGID_SPHERE, r->size[0] = 0.2f, r->mass = 0.2f;
        r->position[0] = 0, r->position[1] = b[3 + k].position[1] - 0.4f, r->position[2] = -2.2f;
        plush_pmx_joint *jt = &j[1 + k];
        jt->name = jt->name_en = pmx_fx_str(t, names[k]);
        jt->type = PLUSH_PMX_JOINT_SPRING_6DOF;
        jt->body_a = k == 0 ? 0 : 2 + k - 1, jt->body_b = 2 + k;
        memcpy(jt->position, b[3 + k].position, sizeof jt->position);
        for (int c = 0; c < 3; c++)
            jt->angular_lower[c] = -1.0f, jt->angular_upper[c] = 1.0f;
    }
    cli_tmp_path(path, size, "tie_toy.pmx");
    plush_diag d = pmx_fx_diag();
    assert_int_equal(plush_pmx_write_file(t, NULL, path, &d), PLUSH_OK);
    plush_pmx_free(t);
}

/* --bake-physics on a model whose necktie is a physics chain and the chain of an IK bone: the tie is keyed as
 * plush moved it and the baked PMX turns that IK off, so a player replaying with physics off does not solve
 * the IK again over the keys: plush pose gives the run's frame within 1e-3 units at every vertex. */
static void test_bake_physics_under_ik(void **state)
{
    (void)state;
    char model[512], motion[512], out[512];
    tie_toy_file(model, sizeof model);
    cli_tmp_path(motion, sizeof motion, "tie_swing.vmd");
    plush_vmd_motion *v = toy_fx_swing(60);
    plush_diag d = pmx_fx_diag();
    assert_int_equal(plush_vmd_write_file(v, NULL, motion, &d), PLUSH_OK);
    plush_vmd_free(v);
    cli_tmp_path(out, sizeof out, "tie_baked");
    cli_result r;
    CLI_RUN(&r, "run", model, "--motion", motion, "--cage", "arms", "--frames", "61", "--every", "20", "--export",
            "pmx+vmd,obj", "--bake-physics", "--bake-tolerance", "0", "-o", out);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    char pmx[600];
    snprintf(pmx, sizeof pmx, "%s/tie_toy_plush.pmx", out);
    plush_pmx_model *m = read_model(pmx);
    assert_true(m->bone_count >= 7);
    assert_false(m->bones[6].flags & PLUSH_PMX_BONE_IK);
    plush_pmx_free(m);
    for (int f = 20; f <= 60; f += 20) {
        double rms = 0, miss = stem_miss(out, "tie_toy", f, &rms);
        printf("tie under IK, physics baked, frame %d: RMS %.3g, worst %.3g\n", f, rms, miss);
        assert_true(miss < 1e-3);
    }
}

#define CAPE SHARED_CHARACTERS "/pmx_tailor/04_色々な使い方_裏面.pmx"
#define SHORT_DANCE SHARED_CHARACTERS "/blender_mmd_tools/test.vmd"

/* The last row's value in column `name` of OUTDIR/quality.csv. */
static double last_quality(const char *out, const char *name)
{
    char path[600];
    snprintf(path, sizeof path, "%s/quality.csv", out);
    size_t n = 0;
    char *csv = cli_read_all(path, &n);
    assert_non_null(csv);
    int col = cli_csv_column(csv, name);
    assert_true(col >= 0);
    while (n && csv[n - 1] == '\n')
        csv[--n] = 0;
    const char *row = strrchr(csv, '\n') + 1;
    for (int k = 0; k < col; k++)
        row = strchr(row, ',') + 1;
    double v = strtod(row, NULL);
    free(csv);
    return v;
}

/* The push out of the body moves the cage triangles' transforms, so the bake carries it: the two-layer cape
 * on the short dance, frame 18, where the arms' and shoulders' capsules come through it (10.7% of its bound
 * vertices inside with --no-push; the cage itself stays out), is pushed out (at most 1% inside), and the
 * bake replayed by plush pose gives the pushed frame within 1e-3 units, as it gives the unpushed one; the two
 * layers stay together. */
static void test_bake_replays_the_push(void **state)
{
    (void)state;
    if (!cli_exists(CAPE) || !cli_exists(SHORT_DANCE))
        skip();
    char out[2][512], frame[2][600];
    const char *names[2] = {"cape_pushed", "cape_not_pushed"};
    for (int i = 0; i < 2; i++) {
        cli_tmp_path(out[i], sizeof out[i], names[i]);
        cli_result r;
        if (i == 0)
            CLI_RUN(&r, "run", CAPE, "--motion", SHORT_DANCE, "--cage", "表マント,裏マント", "--frames", "19", "--every",
                    "18", "--export", "pmx+vmd,obj,quality", "--bake-tolerance", "0", "-o", out[i]);
        else
            CLI_RUN(&r, "run", CAPE, "--motion", SHORT_DANCE, "--cage", "表マント,裏マント", "--frames", "19", "--every",
                    "18", "--export", "pmx+vmd,obj,quality", "--bake-tolerance", "0", "--no-push", "-o", out[i]);
        cli_expect_code(&r, 0);
        cli_result_free(&r);
        snprintf(frame[i], sizeof frame[i], "%s/frames/frame_00018.obj", out[i]);
        double rms = 0, miss = stem_miss(out[i], "04_色々な使い方_裏面", 18, &rms);
        printf("%s: frame 18 inside %.2f%%, bake replayed within %.3g (RMS %.3g)\n", names[i],
               100 * last_quality(out[i], "body_inside_share"), miss, rms);
        assert_true(miss < 1e-3);
    }
    assert_true(last_quality(out[0], "body_inside_share") <= 0.01);
    assert_true(last_quality(out[1], "body_inside_share") > 0.05);
    /* the inner layer lies on the outer (most of its vertices at a vertex of the outer, bound alike): the push
     * moves each such pair as one, so they are not a hair apart */
    assert_true(last_quality(out[0], "surface_tear") == 0);
    /* the push moved the surface by tenths of a unit */
    size_t na = 0, nb = 0;
    float(*a)[3] = cli_obj_positions(frame[0], &na), (*b)[3] = cli_obj_positions(frame[1], &nb);
    assert_int_equal(na, nb);
    double most = 0;
    for (size_t v = 0; v < na; v++)
        for (int k = 0; k < 3; k++)
            most = fmax(most, fabs((double)a[v][k] - b[v][k]));
    assert_true(most > 0.1);
    free(a);
    free(b);
}

/* The pmx+vmd and glTF exports of one run share the bake: the cage's frames recorded once, the bones fitted
 * once; each file has the bytes it has when exported alone. */
static void test_bake_shared_by_exports(void **state)
{
    (void)state;
    char alone_pmx[512], alone_glb[512], both[512], a[700], b[700];
    cli_tmp_path(alone_pmx, sizeof alone_pmx, "alone_pmx");
    cli_tmp_path(alone_glb, sizeof alone_glb, "alone_glb");
    cli_tmp_path(both, sizeof both, "both");
    cli_result r;
    CLI_RUN(&r, "run", BEAR, "--motion", BEAR_VMD, "--frames", "31", "--export", "pmx+vmd", "-o", alone_pmx);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    CLI_RUN(&r, "run", BEAR, "--motion", BEAR_VMD, "--frames", "31", "--export", "gltf", "-o", alone_glb);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    CLI_RUN(&r, "run", BEAR, "--motion", BEAR_VMD, "--frames", "31", "--export", "gltf,pmx+vmd", "-o", both);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    static const char *const files[][2] = {{"alone_pmx", "plush_bear_plush.pmx"}, {"alone_pmx", "plush_bear_plush.vmd"},
                                           {"alone_glb", "plush_bear_plush.glb"}};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char dir[512];
        cli_tmp_path(dir, sizeof dir, files[i][0]);
        snprintf(a, sizeof a, "%s/%s", dir, files[i][1]);
        snprintf(b, sizeof b, "%s/%s", both, files[i][1]);
        size_t na = 0, nb = 0;
        char *da = cli_read_all(a, &na), *db = cli_read_all(b, &nb);
        assert_non_null(da);
        assert_non_null(db);
        assert_true(na == nb && memcmp(da, db, na) == 0);
        free(da);
        free(db);
    }
}

/* The texture path of a baked PMX, read from OUTDIR as MMD reads it ('\' as '/'), names an existing file. */
static bool resolves(const char *dir, const plush_str *texture)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, texture->s);
    for (char *c = path; *c; c++)
        if (*c == '\\')
            *c = '/';
    return cli_exists(path);
}


/* A model whose textures sit in a folder next to it, baked into an OUTDIR elsewhere (another depth): every
 * texture resolves from OUTDIR; with --copy-textures the copies sit under OUTDIR. */
static void test_bake_textures(void **state)
{
    (void)state;
    char dir[512], model[600], out[600], copied[600], p[800];
    cli_tmp_path(dir, sizeof dir, "models");
    assert_int_equal(mkdir(dir, 0777), 0);
    snprintf(p, sizeof p, "%s/tex", dir);
    assert_int_equal(mkdir(p, 0777), 0);
    /* two small pictures (the copies are checked to be pictures) */
    const uint8_t px[4] = {10, 20, 30, 255};
    plush_buf png = {0};
    plush_diag pd = {0};
    assert_int_equal(plush_image_encode_png_pixels(px, 1, 1, 4, &png, &pd), PLUSH_OK);
    snprintf(p, sizeof p, "%s/tex/a.png", dir);
    cli_write_all(p, png.data, png.size);
    snprintf(p, sizeof p, "%s/tex/b.bmp", dir);
    cli_write_all(p, png.data, png.size);
    snprintf(model, sizeof model, "%s/bear.pmx", dir);
    plush_pmx_model *m = read_model(BEAR);
    plush_str textures[2] = {{.s = "tex\\a.png", .len = 9}, {.s = "tex/b.bmp", .len = 9}};
    m->texture_count = 2;
    m->textures = textures;
    m->materials[0].texture = 0;
    m->materials[1].texture = 1;
    plush_diag d = {0};
    plush_diag_reset(&d);
    assert_int_equal(plush_pmx_write_file(m, NULL, model, &d), PLUSH_OK);
    m->texture_count = 0, m->textures = NULL;
    plush_pmx_free(m);

    cli_tmp_path(out, sizeof out, "runs/today/bear");
    cli_tmp_path(p, sizeof p, "runs");
    assert_int_equal(mkdir(p, 0777), 0);
    cli_tmp_path(p, sizeof p, "runs/today");
    assert_int_equal(mkdir(p, 0777), 0);
    cli_result r;
    CLI_RUN(&r, "run", model, "--frames", "2", "-o", out);
    cli_expect_code(&r, 0);
    assert_int_equal(r.err_len, 0); /* every texture found */
    cli_result_free(&r);
    snprintf(p, sizeof p, "%s/bear_plush.pmx", out);
    plush_pmx_model *baked = read_model(p);
    assert_int_equal(baked->texture_count, 2);
    for (size_t i = 0; i < 2; i++)
        if (!resolves(out, &baked->textures[i]))
            fail_msg("texture %zu '%s' is not there from %s", i, baked->textures[i].s, out);
    assert_non_null(strchr(baked->textures[0].s, '\\')); /* Windows-style stays Windows-style */
    plush_pmx_free(baked);

    /* --copy-textures: OUTDIR/tex/a.png and b.bmp, named so */
    cli_tmp_path(copied, sizeof copied, "copied");
    CLI_RUN(&r, "run", model, "--frames", "2", "--copy-textures", "-o", copied);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    snprintf(p, sizeof p, "%s/bear_plush.pmx", copied);
    baked = read_model(p);
    assert_string_equal(baked->textures[0].s, "tex\\a.png");
    assert_string_equal(baked->textures[1].s, "tex/b.bmp");
    for (size_t i = 0; i < 2; i++)
        assert_true(resolves(copied, &baked->textures[i]));
    plush_pmx_free(baked);
    snprintf(p, sizeof p, "%s/tex/a.png", copied);
    size_t len = 0;
    char *bytes = cli_read_all(p, &len);
    assert_int_equal(len, png.size);
    assert_memory_equal(bytes, png.data, len);
    free(bytes);
    plush_buf_free(&png);
    CLI_RUN(&r, "run", model, "--copy-textures=yes", "-o", copied);
    cli_expect_code(&r, 2);
    cli_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_bake_replays_as_the_proxy_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bake_replays_the_push, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bake_physics_under_ik, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bake_physics, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bake_shared_by_exports, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bake_fitted_within_tolerance, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bake_bones_asked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bake_textures, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
