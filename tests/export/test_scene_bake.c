/* Bake: the proxy animation as pseudo-bones + VMD keys. The strongest check replays the baked keys the
 * way an MMD player skins (T(c0 + t) R T(-c0) per pseudo-bone, blended by the baked weights) and
 * compares with plush's own proxy skinning of the same simulated nodes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/scene.h"
#include "plush/sys/core.h"
#include "plush/sys/vmd.h"
#include "anim/anim_internal.h"
#include "core/geom.h"
#include "export/bake_internal.h"
#include "support/pmx_fixture.h"
#include "support/cli_run.h"
#include "support/mesh_fixture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { SPHERE_VERTICES = 9 * 13, CAGE_VERTICES = 60, EYE_VERTICES = 24, CAGE_TRIANGLES = 20, BONES = 2 };

/* Three poses of the cage: rest, moved by (1, 2, 3), turned 90 degrees about Y and squashed a little. */
static void pose_nodes(const plush_scene_proxy *p, int pose, float (*out)[3])
{
    for (size_t n = 0; n < p->node_count; n++) {
        const float *x = p->nodes[n];
        if (pose == 0) {
            memcpy(out[n], x, sizeof out[n]);
        } else if (pose == 1) {
            out[n][0] = x[0] + 1, out[n][1] = x[1] + 2, out[n][2] = x[2] + 3;
        } else {
            /* Ry(90): (x, y, z) -> (z, y, -x), then a squash of the y axis */
            out[n][0] = x[2], out[n][1] = 0.8f * x[1], out[n][2] = -x[0];
        }
    }
}

typedef struct fx {
    plush_pmx_model *model;
    plush_scene_binding *binding;
    plush_scene_bake *bake;
    float (*nodes[3])[3];
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    plush_diag d = pmx_fx_diag();
    f->model = mesh_fx_plush();
    pmx_fx_ok(plush_scene_bind(f->model, NULL, &f->binding, &d), &d);
    pmx_fx_ok(plush_scene_bake_create(f->binding, NULL, (plush_proxy_patch_shape){0}, &f->bake, &d), &d);
    for (int p = 0; p < 3; p++) {
        f->nodes[p] = calloc(f->binding->proxy.node_count, sizeof *f->nodes[p]);
        pose_nodes(&f->binding->proxy, p, f->nodes[p]);
        pmx_fx_ok(plush_scene_bake_add_frame(f->bake, (uint32_t)(10 * p), (const float(*)[3])f->nodes[p], &d), &d);
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    for (int p = 0; p < 3; p++)
        free(f->nodes[p]);
    plush_scene_bake_destroy(f->bake);
    plush_scene_binding_free(f->binding);
    plush_pmx_free(f->model);
    free(f);
    return 0;
}

static void test_model(void **state)
{
    fx *f = *state;
    plush_diag d = pmx_fx_diag();
    plush_pmx_model *o = NULL;
    pmx_fx_ok(plush_scene_bake_model(f->bake, &o, &d), &d);
    /* the cage material and its vertices are gone; sphere and eyes stay */
    assert_int_equal(o->vertex_count, SPHERE_VERTICES + EYE_VERTICES);
    assert_int_equal(o->material_count, 2);
    assert_string_equal(o->materials[1].name.s, "eyes");
    assert_int_equal(o->soft_body_count, 0);
    assert_int_equal(o->bone_count, BONES + 1 + CAGE_TRIANGLES);
    assert_string_equal(o->bones[BONES].name.s, "plush_root");
    assert_string_equal(o->bones[BONES + 1].name.s, "pb0001");
    assert_string_equal(o->bones[BONES + CAGE_TRIANGLES].name.s, "pb0020");
    for (size_t t = 0; t < CAGE_TRIANGLES; t++) {
        const plush_pmx_bone *pb = &o->bones[BONES + 1 + t];
        assert_int_equal(pb->parent, BONES);
        const uint32_t *tri = f->binding->proxy.triangles[t];
        for (int k = 0; k < 3; k++) {
            float c = (f->binding->proxy.nodes[tri[0]][k] + f->binding->proxy.nodes[tri[1]][k] +
                       f->binding->proxy.nodes[tri[2]][k]) / 3.0f;
            assert_true(fabsf(pb->position[k] - c) < 1e-5f);
        }
    }
    /* every bound vertex hangs on pseudo-bones only, weights summing to 1 */
    for (size_t v = 0; v < o->vertex_count; v++) {
        const plush_pmx_vertex *x = &o->vertices[v];
        float sum = 0;
        for (int k = 0; k < 4; k++)
            if (x->bones[k] >= 0) {
                assert_true(x->bones[k] > BONES && x->bones[k] <= BONES + CAGE_TRIANGLES);
                sum += x->weights[k];
            }
        assert_true(fabsf(sum - 1.0f) < 1e-5f);
        assert_true(x->weight_type <= PLUSH_PMX_BDEF4);
    }
    assert_int_equal(o->display_frame_count, f->model->display_frame_count + 1);
    /* it writes as PMX 2.0 and reads back valid */
    plush_buf buf = {0};
    pmx_fx_ok(plush_pmx_write(o, &(plush_pmx_write_options){.version = PLUSH_PMX_WRITE_20, .lossy = true}, &buf, &d), &d);
    plush_pmx_model *back = NULL;
    pmx_fx_ok(plush_pmx_read(buf.data, buf.size, NULL, &back, &d), &d);
    assert_true(back->version == 2.0f);
    assert_int_equal(back->bone_count, o->bone_count);
    plush_pmx_free(back);
    plush_buf_free(&buf);
    plush_pmx_free(o);
}

static const plush_vmd_bone_key *find_key(const plush_vmd_motion *v, const char *name, uint32_t frame)
{
    for (size_t i = 0; i < v->bone_key_count; i++)
        if (v->bone_keys[i].frame == frame && strcmp(v->bone_keys[i].name.s, name) == 0)
            return &v->bone_keys[i];
    return NULL;
}

static void quat_rotate(const float q[4], const float v[3], float out[3])
{
    /* v + 2w (q x v) + 2 q x (q x v) */
    float t[3] = {2 * (q[1] * v[2] - q[2] * v[1]), 2 * (q[2] * v[0] - q[0] * v[2]), 2 * (q[0] * v[1] - q[1] * v[0])};
    out[0] = v[0] + q[3] * t[0] + (q[1] * t[2] - q[2] * t[1]);
    out[1] = v[1] + q[3] * t[1] + (q[2] * t[0] - q[0] * t[2]);
    out[2] = v[2] + q[3] * t[2] + (q[0] * t[1] - q[1] * t[0]);
}

static void test_motion_keys(void **state)
{
    fx *f = *state;
    plush_diag d = pmx_fx_diag();
    plush_vmd_motion *v = NULL;
    pmx_fx_ok(plush_scene_bake_motion(f->bake, &v, &d), &d);
    assert_int_equal(v->bone_key_count, 3 * CAGE_TRIANGLES);
    for (size_t t = 0; t < CAGE_TRIANGLES; t++) {
        char name[16];
        snprintf(name, sizeof name, "pb%04zu", t + 1);
        const plush_vmd_bone_key *k0 = find_key(v, name, 0), *k1 = find_key(v, name, 10), *k2 = find_key(v, name, 20);
        assert_non_null(k0);
        assert_non_null(k1);
        assert_non_null(k2);
        for (int i = 0; i < 3; i++)
            assert_true(fabsf(k0->translation[i]) < 1e-5f);
        assert_true(fabsf(k0->rotation[3] - 1.0f) < 1e-5f);
        assert_true(fabsf(k1->translation[0] - 1) < 1e-5f && fabsf(k1->translation[1] - 2) < 1e-5f &&
                    fabsf(k1->translation[2] - 3) < 1e-5f);
        assert_true(fabsf(k1->rotation[3] - 1.0f) < 1e-5f);
        /* linear interpolation on every curve */
        assert_int_equal(k1->interpolation[0], 20);
        assert_int_equal(k1->interpolation[12], 107);
    }
    plush_vmd_free(v);
}

/* Replays the baked model + motion at each recorded frame as an MMD player skins (pseudo-bones are
 * children of a root at the origin, so their globals are their keys) and compares with plush's proxy
 * skinning of the same nodes with rigid frames and linear blending. */
static void test_replay_matches_proxy_skinning(void **state)
{
    fx *f = *state;
    plush_diag d = pmx_fx_diag();
    plush_pmx_model *o = NULL;
    plush_vmd_motion *v = NULL;
    pmx_fx_ok(plush_scene_bake_model(f->bake, &o, &d), &d);
    pmx_fx_ok(plush_scene_bake_motion(f->bake, &v, &d), &d);
    const plush_scene_binding *b = f->binding;
    size_t n = b->vertex_count;
    float(*rest)[3] = calloc(n, sizeof *rest), (*want)[3] = calloc(n, sizeof *want);
    for (size_t i = 0; i < n; i++)
        memcpy(rest[i], f->model->vertices[b->vertices[i]].position, sizeof rest[i]);
    plush_proxy_mesh mesh = {.nodes = (const float(*)[3])b->proxy.nodes, .node_count = b->proxy.node_count,
                             .triangles = (const uint32_t(*)[3])b->proxy.triangles,
                             .triangle_count = b->proxy.triangle_count};
    plush_proxy_skin *skin = NULL;
    pmx_fx_ok(plush_proxy_skin_create(&mesh, b->binding, (const float(*)[3])rest, NULL, NULL, &skin, &d), &d);
    double worst = 0;
    for (int p = 0; p < 3; p++) {
        plush_proxy_skin_update(skin, (const float(*)[3])f->nodes[p]);
        memcpy(want, rest, n * sizeof *want);
        plush_proxy_skin_apply(skin, want, NULL);
        for (size_t i = 0; i < n; i++) {
            /* the baked model drops the cage vertices, which all come after the sphere's */
            uint32_t src = b->vertices[i];
            uint32_t dst = src < SPHERE_VERTICES ? src : src - CAGE_VERTICES;
            const plush_pmx_vertex *x = &o->vertices[dst];
            float got[3] = {0, 0, 0};
            for (int k = 0; k < 4; k++) {
                if (x->bones[k] < 0 || x->weights[k] == 0)
                    continue;
                const plush_pmx_bone *pb = &o->bones[x->bones[k]];
                const plush_vmd_bone_key *key = find_key(v, pb->name.s, (uint32_t)(10 * p));
                assert_non_null(key);
                float local[3] = {rest[i][0] - pb->position[0], rest[i][1] - pb->position[1],
                                  rest[i][2] - pb->position[2]}, r[3];
                quat_rotate(key->rotation, local, r);
                for (int c = 0; c < 3; c++)
                    got[c] += x->weights[k] * (r[c] + pb->position[c] + key->translation[c]);
            }
            for (int c = 0; c < 3; c++) {
                double e = fabs((double)got[c] - want[i][c]);
                worst = e > worst ? e : worst;
            }
        }
    }
    /* the squash is not rigid, but plush's linear rigid frames and the replay agree to rounding */
    assert_true(worst < 1e-4);
    plush_proxy_skin_destroy(skin);
    free(rest);
    free(want);
    plush_vmd_free(v);
    plush_pmx_free(o);
}

static void test_write_files_with_motion(void **state)
{
    (void)state;
    plush_diag d = pmx_fx_diag();
    plush_pmx_model *m = mesh_fx_plush();
    plush_scene_binding *b = NULL;
    pmx_fx_ok(plush_scene_bind(m, NULL, &b, &d), &d);
    /* one morph for the motion to key */
    m->morphs = plush_arena_array(plush_pmx_arena(m), 1, sizeof *m->morphs);
    m->morphs[0] = (plush_pmx_morph){.name = {.s = "blink", .len = 5}, .kind = PLUSH_PMX_MORPH_VERTEX, .panel = 1};
    m->morph_count = 1;
    /* an input motion: its keys for names the model has come first and unchanged, the others go */
    plush_vmd_motion *in = plush_vmd_create();
    in->bone_key_count = 3;
    in->bone_keys = plush_arena_array(plush_vmd_arena(in), 3, sizeof *in->bone_keys);
    for (int i = 0; i < 3; i++) {
        in->bone_keys[i].name = i == 1 ? (plush_str){.s = "no such bone", .len = 12} : (plush_str){.s = "body", .len = 4};
        in->bone_keys[i].frame = (uint32_t)(5 * (i / 2));
        in->bone_keys[i].rotation[3] = 1;
        in->bone_keys[i].translation[1] = (float)(i / 2);
    }
    in->morph_key_count = 2;
    in->morph_keys = plush_arena_array(plush_vmd_arena(in), 2, sizeof *in->morph_keys);
    in->morph_keys[0] = (plush_vmd_morph_key){.name = {.s = "smile", .len = 5}, .frame = 1, .weight = 1};
    in->morph_keys[1] = (plush_vmd_morph_key){.name = {.s = "blink", .len = 5}, .frame = 2, .weight = 0.5f};
    plush_scene_bake *bake = NULL;
    pmx_fx_ok(plush_scene_bake_create(b, in, (plush_proxy_patch_shape){0}, &bake, &d), &d);
    float(*nodes)[3] = calloc(b->proxy.node_count, sizeof *nodes);
    for (uint32_t fr = 0; fr < 4; fr++) {
        pose_nodes(&b->proxy, fr % 2, nodes);
        pmx_fx_ok(plush_scene_bake_add_frame(bake, fr, (const float(*)[3])nodes, &d), &d);
    }
    /* frames must increase */
    plush_diag bad = pmx_fx_diag();
    assert_int_equal(plush_scene_bake_add_frame(bake, 3, (const float(*)[3])nodes, &bad), PLUSH_E_ARGUMENT);

    assert_int_equal(cli_tmp_setup("bake"), 0);
    char pmx[512], vmd[512];
    cli_tmp_path(pmx, sizeof pmx, "out_plush.pmx");
    cli_tmp_path(vmd, sizeof vmd, "out_plush.vmd");
    pmx_fx_ok(plush_scene_bake_write(bake, pmx, vmd, &d), &d);
    plush_pmx_model *rm = NULL;
    plush_vmd_motion *rv = NULL;
    pmx_fx_ok(plush_pmx_read_file(pmx, NULL, &rm, &d), &d);
    pmx_fx_ok(plush_vmd_read_file(vmd, &rv, &d), &d);
    assert_true(rm->version == 2.0f);
    assert_int_equal(rm->soft_body_count, 0);
    assert_int_equal(rv->bone_key_count, 2 + 4 * CAGE_TRIANGLES);
    assert_string_equal(rv->bone_keys[0].name.s, "body");
    assert_true(rv->bone_keys[1].translation[1] == 1.0f);
    assert_string_equal(rv->bone_keys[2].name.s, "pb0001");
    for (size_t i = 0; i < rv->bone_key_count; i++)
        assert_string_not_equal(rv->bone_keys[i].name.s, "no such bone");
    assert_int_equal(rv->morph_key_count, 1);
    assert_string_equal(rv->morph_keys[0].name.s, "blink");
    assert_true(rv->morph_keys[0].weight == 0.5f);
    /* a path that cannot be written leaves nothing behind */
    char badpath[600];
    snprintf(badpath, sizeof badpath, "%s/no/such/dir/x.pmx", cli_tmp_dir());
    plush_diag bd = pmx_fx_diag();
    assert_int_not_equal(plush_scene_bake_write(bake, badpath, vmd, &bd), PLUSH_OK);
    plush_pmx_free(rm);
    plush_vmd_free(rv);
    cli_tmp_teardown();
    free(nodes);
    plush_scene_bake_destroy(bake);
    plush_vmd_free(in);
    plush_scene_binding_free(b);
    plush_pmx_free(m);
}

/* ---- textures: named from the bake's folder, or copied there ---------------------------------------- */

/* A 1x1 BMP followed by its own path (a reader of the picture stops at its pixels), so that each is a
 * picture the texture rules accept and a path found later can be told apart: the file's bytes, malloc'd. */
static uint8_t *tex_bytes(const char *path, size_t *len)
{
    size_t n = strlen(path);
    *len = 58 + n;
    uint8_t *b = calloc(*len, 1);
    b[0] = 'B', b[1] = 'M';
    const uint32_t fields[][2] = {{2, 58}, {10, 54}, {14, 40}, {18, 1}, {22, 1}, {34, 4}};
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
        for (int k = 0; k < 4; k++)
            b[fields[i][0] + (uint32_t)k] = (uint8_t)(fields[i][1] >> (8 * k));
    b[26] = 1, b[28] = 24; /* planes, bits per pixel */
    memcpy(b + 58, path, n);
    return b;
}

static void tex_file(const char *path)
{
    size_t len;
    uint8_t *b = tex_bytes(path, &len);
    cli_write_all(path, b, len);
    free(b);
}

/* The texture path read from dir, '\' as '/' (as MMD reads it), names the file made as `want`. */
static void expect_resolves(const char *dir, const plush_str *texture, const char *want)
{
    char path[2048];
    if (texture->s[0] == '/')
        snprintf(path, sizeof path, "%s", texture->s); /* an absolute path names its file from anywhere */
    else
        snprintf(path, sizeof path, "%s/%s", dir, texture->s);
    for (char *c = path; *c; c++)
        if (*c == '\\')
            *c = '/';
    size_t len = 0, want_len = 0;
    char *got = cli_read_all(path, &len);
    if (!got)
        fail_msg("texture '%s' does not resolve from %s", texture->s, dir);
    uint8_t *bytes = tex_bytes(want, &want_len);
    assert_int_equal(len, want_len);
    assert_memory_equal(got, bytes, len);
    free(bytes);
    free(got);
}

static plush_pmx_model *baked_with(const fx *f, const char *dir, const plush_scene_bake_write_options *opt,
                                   plush_diag *d)
{
    char pmx[700], vmd[700];
    snprintf(pmx, sizeof pmx, "%s/toy_plush.pmx", dir);
    snprintf(vmd, sizeof vmd, "%s/toy_plush.vmd", dir);
    pmx_fx_ok(plush_scene_bake_write_with(f->bake, pmx, vmd, opt, d), d);
    plush_pmx_model *o = NULL;
    plush_diag rd = pmx_fx_diag();
    pmx_fx_ok(plush_pmx_read_file(pmx, NULL, &o, &rd), &rd);
    return o;
}

static void test_textures(void **state)
{
    fx *f = *state;
    assert_int_equal(cli_tmp_setup("bake_tex"), 0);
    char models[400], model_dir[500], model[600], out[400], copy[400], p[800];
    char a[700], b[700], c[700], e[700], abs_tex[700];
    cli_tmp_path(models, sizeof models, "models");
    snprintf(model_dir, sizeof model_dir, "%s/deep", models);
    snprintf(model, sizeof model, "%s/toy.pmx", model_dir); /* only its folder needs to exist */
    cli_tmp_path(out, sizeof out, "out");
    cli_tmp_path(copy, sizeof copy, "copy");
    assert_int_equal(mkdir(models, 0777) | mkdir(model_dir, 0777) | mkdir(out, 0777) | mkdir(copy, 0777), 0);
    const char *below[] = {"deep/tex", "deep/sub", "deep/sub/deep", "shared"};
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s", models, below[i]);
        assert_int_equal(mkdir(p, 0777), 0);
    }
    snprintf(p, sizeof p, "%s/a", out);
    assert_int_equal(mkdir(p, 0777), 0);
    snprintf(p, sizeof p, "%s/a/b", out);
    assert_int_equal(mkdir(p, 0777), 0);
    snprintf(a, sizeof a, "%s/tex/a.png", model_dir);
    snprintf(b, sizeof b, "%s/tex/b.bmp", model_dir);
    snprintf(c, sizeof c, "%s/shared/c.tga", models);
    snprintf(e, sizeof e, "%s/sub/e.png", model_dir);
    cli_tmp_path(abs_tex, sizeof abs_tex, "abs.png");
    tex_file(a), tex_file(b), tex_file(c), tex_file(e), tex_file(abs_tex);

    /* the source model's textures, as MMD models name them */
    const char *stored[] = {"tex\\a.png", "tex/b.bmp", "..\\shared\\c.tga", "missing.png", "", "C:\\x\\d.png",
                            abs_tex, "sub/./deep/../e.png"};
    enum { N = sizeof stored / sizeof *stored };
    plush_str textures[N];
    for (int i = 0; i < N; i++)
        textures[i] = (plush_str){.s = stored[i], .len = (uint32_t)strlen(stored[i])};
    f->model->texture_count = N;
    f->model->textures = textures;

    /* named from OUTDIR, three folders below the models' common folder */
    snprintf(p, sizeof p, "%s/a/b", out);
    plush_diag d = pmx_fx_diag();
    plush_pmx_model *o = baked_with(f, p, &(plush_scene_bake_write_options){.model_file = model}, &d);
    assert_int_equal(d.warning_count, 2); /* missing.png, the drive path */
    assert_int_equal(o->texture_count, N);
    expect_resolves(p, &o->textures[0], a);
    expect_resolves(p, &o->textures[1], b);
    expect_resolves(p, &o->textures[2], c);
    expect_resolves(p, &o->textures[6], abs_tex);
    expect_resolves(p, &o->textures[7], e);
    assert_non_null(strchr(o->textures[0].s, '\\')); /* each keeps its separator */
    assert_null(strchr(o->textures[0].s, '/'));
    assert_null(strchr(o->textures[1].s, '\\'));
    assert_string_equal(o->textures[2].s, "..\\..\\..\\models\\shared\\c.tga");
    assert_string_equal(o->textures[3].s, "../../../models/deep/missing.png"); /* where the model expects it */
    assert_string_equal(o->textures[4].s, "");
    assert_string_equal(o->textures[5].s, stored[5]);
    assert_string_equal(o->textures[6].s, abs_tex);
    plush_pmx_free(o);

    /* copied beside the bake, under the same sub-path; a path leaving the model's folder, an absolute one and a
     * missing file are not read (a warning each, the drive path's too) and are named where they are */
    d = pmx_fx_diag();
    o = baked_with(f, copy, &(plush_scene_bake_write_options){.model_file = model, .copy_textures = true}, &d);
    assert_int_equal(d.warning_count, 4);
    assert_string_equal(o->textures[0].s, "tex\\a.png");
    assert_string_equal(o->textures[1].s, "tex/b.bmp");
    assert_string_equal(o->textures[2].s, "..\\models\\shared\\c.tga");
    assert_string_equal(o->textures[3].s, "../models/deep/missing.png");
    assert_string_equal(o->textures[6].s, abs_tex);
    assert_string_equal(o->textures[7].s, "sub/e.png");
    const int copied[] = {0, 1, 2, 6, 7};
    const char *want[] = {a, b, c, abs_tex, e};
    for (int i = 0; i < 5; i++)
        expect_resolves(copy, &o->textures[copied[i]], want[i]);
    snprintf(p, sizeof p, "%s/missing.png", copy);
    assert_false(cli_exists(p));
    snprintf(p, sizeof p, "%s/c.tga", copy);
    assert_false(cli_exists(p));
    plush_pmx_free(o);

    /* a bake beside the model copies nothing onto itself and names the textures as they were */
    d = pmx_fx_diag();
    o = baked_with(f, model_dir, &(plush_scene_bake_write_options){.model_file = model, .copy_textures = true}, &d);
    assert_string_equal(o->textures[0].s, "tex\\a.png");
    expect_resolves(model_dir, &o->textures[0], a);
    plush_pmx_free(o);

    /* without options the paths stay as stored */
    d = pmx_fx_diag();
    o = baked_with(f, out, NULL, &d);
    assert_int_equal(d.warning_count, 0);
    for (int i = 0; i < N; i++)
        assert_string_equal(o->textures[i].s, stored[i]);
    plush_pmx_free(o);

    /* a copy whose folder's name a file plush did not write takes fails the write, leaving no bake */
    char blocked[400];
    cli_tmp_path(blocked, sizeof blocked, "blocked");
    assert_int_equal(mkdir(blocked, 0777), 0);
    snprintf(p, sizeof p, "%s/tex", blocked);
    cli_write_all(p, "x", 1);
    char pmx[700], vmd[700];
    snprintf(pmx, sizeof pmx, "%s/toy_plush.pmx", blocked);
    snprintf(vmd, sizeof vmd, "%s/toy_plush.vmd", blocked);
    d = pmx_fx_diag();
    assert_int_equal(plush_scene_bake_write_with(f->bake, pmx, vmd,
                                                 &(plush_scene_bake_write_options){.model_file = model,
                                                                                    .copy_textures = true},
                                                 &d),
                     PLUSH_E_EXISTS);
    assert_false(cli_exists(pmx));
    assert_false(cli_exists(vmd));

    f->model->texture_count = 0;
    f->model->textures = NULL;
    cli_tmp_teardown();
}

/* An eased move (smoothstep over 60 frames, a translation and a turn about Y): straight segments need
 * many keys (24), curved ones few (2), and the curves read back from the 64-byte block as MMD reads them
 * (each curve from its own row: x1, y1, x2, y2 at 16c, +4, +8, +12; the share of the way at each moment,
 * the rotation slerped by it) stay within the tolerance at every frame. */
static void test_curves_stand_for_eased_motion(void **state)
{
    (void)state;
    enum { N = 61 };
    float keys[N][7];
    uint32_t frames[N];
    for (int f = 0; f < N; f++) {
        double u = f / 60.0, s = u * u * (3 - 2 * u), half = 0.5 * 1.2 * s;
        frames[f] = (uint32_t)f;
        float k[7] = {(float)(10 * s), (float)(-2 * s), 0, 0, (float)sin(half), 0, (float)cos(half)};
        memcpy(keys[f], k, sizeof k);
    }
    const double reach = 1.0, tolerance = 1e-2; /* a thousandth of the move: VMD's curves step by 1/127 */
    bool keep[N];
    uint8_t curves[N][4][4];
    size_t straight = plush__bake_reduce_track((const float(*)[7])keys, 1, frames, N, reach, tolerance, keep, NULL);
    size_t curved = plush__bake_reduce_track((const float(*)[7])keys, 1, frames, N, reach, tolerance, keep, curves);
    assert_true(curved < straight);
    assert_true(curved <= 3);
    assert_true(straight >= 4 * curved);
    int from = 0;
    for (int f = 1; f < N; f++) {
        if (!keep[f])
            continue;
        uint8_t block[64];
        plush_vmd_curves_write((const uint8_t(*)[4])curves[f], block);
        for (int g = from + 1; g < f; g++) {
            float t = (float)(g - from) / (float)(f - from);
            double p[3], q[4], qa[4], qb[4];
            for (int c = 0; c < 3; c++) {
                const uint8_t cp[4] = {block[16 * c], block[16 * c + 4], block[16 * c + 8], block[16 * c + 12]};
                p[c] = keys[from][c] + (keys[f][c] - keys[from][c]) * plush__vmd_bezier(cp, t);
            }
            const uint8_t cr[4] = {block[48], block[52], block[56], block[60]};
            for (int c = 0; c < 4; c++)
                qa[c] = keys[from][3 + c], qb[c] = keys[f][3 + c];
            plush__quat_slerp(qa, qb, plush__vmd_bezier(cr, t), q);
            double moved = 0, dot = 0;
            for (int c = 0; c < 3; c++)
                moved += (p[c] - keys[g][c]) * (p[c] - keys[g][c]);
            for (int c = 0; c < 4; c++)
                dot += q[c] * keys[g][3 + c];
            double miss = sqrt(moved) + 2 * sqrt(fmax(0, 1 - dot * dot)) * reach;
            assert_true(miss <= tolerance * 1.0001);
        }
        from = f;
    }
    assert_int_equal(from, N - 1);
}

/* The toy (mesh_fx_plush) bound, and a bake of it with no frame yet: the budget tests' start. */
static plush_scene_bake *toy_bake(plush_diag *d, plush_pmx_model **model, plush_scene_binding **binding)
{
    *model = mesh_fx_plush();
    pmx_fx_ok(plush_scene_bind(*model, NULL, binding, d), d);
    plush_scene_bake *bake = NULL;
    pmx_fx_ok(plush_scene_bake_create(*binding, NULL, (plush_proxy_patch_shape){0}, &bake, d), d);
    return bake;
}

static void toy_bake_free(plush_scene_bake *bake, plush_scene_binding *binding, plush_pmx_model *model)
{
    plush_scene_bake_destroy(bake);
    plush_scene_binding_free(binding);
    plush_pmx_free(model);
}

/* The count the budget gives: a cage whose two halves each turn and sway rigidly, every frame differently,
 * needs a key per frame and triangle at a fine tolerance, and a budget of 400 keys thins them far. Fewer
 * bones leave each track more keys, but a fitted bone reaches farther than a triangle and its track needs
 * more keys for it: by default (the budget first, no count asked) the bake takes whichever keeps within the
 * budget at the smaller error, never worse than the exact bake. Here the fitted bones (0.275 against the exact
 * bake's 0.371, 8 asked for 0.265); before the fit held a bone's rotation where its points barely steer it,
 * their tracks turned freely, needed more keys, and 8 bones came to 0.483 (the exact bake was kept). */
static void test_budget_chooses_bones(void **state)
{
    (void)state;
    plush_diag d = pmx_fx_diag();
    plush_pmx_model *model = NULL;
    plush_scene_binding *binding = NULL;
    plush_scene_bake *bake = toy_bake(&d, &model, &binding);
    const plush_scene_proxy *px = &binding->proxy;
    int *half = calloc(px->node_count, sizeof *half);
    float(*x)[3] = calloc(px->node_count, sizeof *x);
    for (size_t t = 0; t < px->triangle_count; t++) {
        float cx = 0;
        for (int k = 0; k < 3; k++)
            cx += px->nodes[px->triangles[t][k]][0];
        for (int k = 0; k < 3; k++)
            half[px->triangles[t][k]] = cx > 0;
    }
    enum { FRAMES = 200 };
    for (uint32_t f = 0; f < FRAMES; f++) {
        for (size_t n = 0; n < px->node_count; n++) {
            float a = 0.4f * sinf(0.37f * (float)f + 2.0f * (float)half[n]), c = cosf(a), sn = sinf(a);
            const float *p = px->nodes[n];
            x[n][0] = c * p[0] + sn * p[2] + 0.1f * sinf(0.23f * (float)f + (float)half[n]);
            x[n][1] = p[1];
            x[n][2] = -sn * p[0] + c * p[2];
        }
        pmx_fx_ok(plush_scene_bake_add_frame(bake, f, (const float(*)[3])x, &d), &d);
    }
    free(x), free(half);
    plush_scene_bake_set_tolerance(bake, 1e-3);
    bake->key_budget = 400, bake->budget_first = true;
    double error[3];
    size_t bones[3];
    for (int run = 0; run < 3; run++) { /* the exact bake (no fit), the default's count, 8 asked for */
        plush__bake_plan plan = {0};
        plush_vmd_motion *v = NULL;
        if (run)
            pmx_fx_ok(plush_scene_bake_fit(bake, run == 2 ? 8 : 0, &d), &d);
        bones[run] = bake->fit ? bake->fit->bones : CAGE_TRIANGLES;
        pmx_fx_ok(plush__bake_motion(bake, &plan, &v, &d), &d);
        assert_true(v->bone_key_count <= 400 && plan.budget_limited);
        error[run] = plan.error;
        plush_vmd_free(v);
    }
    printf("budget 400 keys: the exact bake's %zu pseudo-bones within %.3g, the default's %zu bones within %.3g, %zu "
           "asked for within %.3g\n",
           bones[0], error[0], bones[1], error[1], bones[2], error[2]);
    assert_int_equal(bones[0], CAGE_TRIANGLES);
    assert_true(bones[1] <= CAGE_TRIANGLES && bones[2] == 8);
    assert_true(error[1] <= error[0] * (1 + 1e-9)); /* the default never hands back worse than the exact bake */
    toy_bake_free(bake, binding, model);
}

/* The player's budget first: a cage wobbling every frame (each node on its own wave) needs nearly a key per
 * frame and triangle at a fine tolerance; with a budget of 1,000 keys the keys' tolerance grows until they
 * fit it and the plan says so, and the error it reports is that tolerance. A tolerance the user set holds
 * instead: the plan says how many keys the budget is exceeded by and the error at which they would fit,
 * the one the budget-first bake reached. A byte budget counts 111 bytes a bone key. */
static void test_budget_holds(void **state)
{
    (void)state;
    plush_diag d = pmx_fx_diag();
    plush_pmx_model *model = NULL;
    plush_scene_binding *binding = NULL;
    plush_scene_bake *bake = toy_bake(&d, &model, &binding);
    size_t nodes = binding->proxy.node_count;
    float(*x)[3] = calloc(nodes, sizeof *x);
    enum { FRAMES = 200 };
    for (uint32_t f = 0; f < FRAMES; f++) {
        for (size_t n = 0; n < nodes; n++)
            for (int c = 0; c < 3; c++)
                x[n][c] = binding->proxy.nodes[n][c] + 0.05f * sinf(0.37f * (float)f + (float)(n * 3 + (size_t)c));
        pmx_fx_ok(plush_scene_bake_add_frame(bake, f, (const float(*)[3])x, &d), &d);
    }
    free(x);
    plush_scene_bake_set_tolerance(bake, 1e-4);
    size_t recorded = FRAMES * CAGE_TRIANGLES;
    plush__bake_plan plan = {0};
    plush_vmd_motion *v = NULL;
    pmx_fx_ok(plush__bake_motion(bake, &plan, &v, &d), &d);
    size_t fine = v->bone_key_count;
    assert_true(fine > recorded / 2);   /* the wobble needs most keys at this tolerance */
    assert_false(plan.budget_limited);
    assert_int_equal(plan.over, 0);
    plush_vmd_free(v);

    bake->key_budget = 1000, bake->budget_first = true;
    pmx_fx_ok(plush__bake_motion(bake, &plan, &v, &d), &d);
    printf("budget 1000 keys: %zu keys (%zu at 1e-4), error %.3g\n", v->bone_key_count, fine, plan.error);
    assert_true(v->bone_key_count <= 1000 && v->bone_key_count > 500);
    assert_true(plan.budget_limited);
    assert_true(plan.error > 1e-4 && plan.error == plan.key_tolerance);
    assert_int_equal(plan.over, 0);
    double reached = plan.error;
    plush_vmd_free(v);

    bake->budget_first = false;
    pmx_fx_ok(plush__bake_motion(bake, &plan, &v, &d), &d);
    assert_int_equal(v->bone_key_count, fine);
    assert_false(plan.budget_limited);
    assert_int_equal(plan.over, fine - 1000);
    assert_true(plan.budget_error == reached);
    plush_vmd_free(v);

    bake->key_budget = 0, bake->byte_budget = 30 + 20 + 6 * 4 + 111 * 700, bake->budget_first = true;
    pmx_fx_ok(plush__bake_motion(bake, &plan, &v, &d), &d);
    assert_true(v->bone_key_count <= 700 && plan.budget_limited);
    plush_buf bytes = {0};
    pmx_fx_ok(plush_vmd_write(v, NULL, &bytes, &d), &d);
    assert_true(bytes.size <= bake->byte_budget);
    plush_buf_free(&bytes);
    plush_vmd_free(v);

    toy_bake_free(bake, binding, model);
}

/* The RMS guard: half the cage turns as one with three sharp turns, the other half wobbles node by node, so
 * the wobble's tracks set the budget's tolerance and at the sharp turns every track of the turning half misses
 * by nearly that much at once: the RMS over the part follows the worst vertex there. The guard keys those
 * frames until a bound on the RMS over the soft part's vertices (the ones the baked tracks move) is within the
 * tolerance asked; the baked model and motion, replayed at every frame as a player poses them, keep that
 * bound (and the worst vertex the raised tolerance), within the budget. */
static void test_rms_guard_holds_the_model(void **state)
{
    (void)state;
    plush_diag d = pmx_fx_diag();
    plush_pmx_model *model = NULL;
    plush_scene_binding *binding = NULL;
    plush_scene_bake *bake = toy_bake(&d, &model, &binding);
    const plush_scene_proxy *px = &binding->proxy;
    enum { FRAMES = 240 };
    float(*x)[3] = calloc(FRAMES * px->node_count, sizeof *x);
    for (uint32_t f = 0; f < FRAMES; f++) {
        /* one side of the cage turns as one about Y, slowly, with three sharp turns there and back (two frames
         * each way); on the other side each node wobbles on its own, a little, every frame */
        float pulse = 0;
        for (int k = 1; k <= 3; k++) {
            float from = fabsf((float)f - 60.0f * (float)k);
            pulse += from < 2 ? 0.12f * (1 - from / 2) : 0;
        }
        float a = 0.3f * sinf(0.05f * (float)f) + pulse, c = cosf(a), sn = sinf(a);
        for (size_t n = 0; n < px->node_count; n++) {
            const float *p = px->nodes[n];
            float *q = x[f * px->node_count + n];
            if (p[0] > 0) {
                for (int k = 0; k < 3; k++)
                    q[k] = p[k] + 0.01f * sinf(1.7f * (float)f + (float)(n * 3 + (size_t)k));
                continue;
            }
            q[0] = c * p[0] + sn * p[2];
            q[1] = p[1];
            q[2] = -sn * p[0] + c * p[2];
        }
        pmx_fx_ok(plush_scene_bake_add_frame(bake, f, (const float(*)[3])x + f * px->node_count, &d), &d);
    }
    const double asked = 2e-3;
    enum { BUDGET = 1700 };
    plush_scene_bake_set_tolerance(bake, asked);
    bake->key_budget = BUDGET, bake->budget_first = true;
    plush__bake_plan plan = {0};
    plush_vmd_motion *v = NULL;
    pmx_fx_ok(plush__bake_motion(bake, &plan, &v, &d), &d);
    printf("budget %d keys: %zu keys, worst vertex within %.3g (asked %.3g), %zu keys added by the RMS guard, "
           "RMS within %.3g (%.3g without them)\n", BUDGET, v->bone_key_count, plan.error, asked, plan.guard_keys,
           plan.guard_rms, plan.unguarded_rms);
    assert_true(plan.budget_limited && v->bone_key_count <= BUDGET);
    assert_true(plan.unguarded_rms > 1.5 * asked); /* the keys at the budget's tolerance alone would not hold it */
    assert_true(plan.error > 3 * asked);   /* the budget raised the worst vertex's tolerance far */
    assert_true(plan.guard_keys > 0);
    assert_true(plan.guard_rms > 0 && plan.guard_rms <= asked * (1 + 1e-9));

    /* replayed: the baked model and motion posed at each frame against the proxy skinning of the frame */
    plush_pmx_model *o = NULL;
    pmx_fx_ok(plush_scene_bake_model(bake, &o, &d), &d);
    plush_motion *motion = NULL;
    pmx_fx_ok(plush_motion_bind_vmd(o, v, &motion, &d), &d);
    plush_anim *anim = NULL;
    pmx_fx_ok(plush_anim_create(o, &anim, &d), &d);
    size_t n = binding->vertex_count;
    float(*rest)[3] = calloc(n, sizeof *rest), (*want)[3] = calloc(n, sizeof *want);
    float(*got)[3] = calloc(o->vertex_count, sizeof *got);
    for (size_t i = 0; i < n; i++)
        memcpy(rest[i], model->vertices[binding->vertices[i]].position, sizeof rest[i]);
    plush_proxy_mesh mesh = {.nodes = (const float(*)[3])px->nodes, .node_count = px->node_count,
                             .triangles = (const uint32_t(*)[3])px->triangles, .triangle_count = px->triangle_count};
    plush_proxy_skin *skin = NULL;
    pmx_fx_ok(plush_proxy_skin_create(&mesh, binding->binding, (const float(*)[3])rest, NULL, NULL, &skin, &d), &d);
    double worst_rms = 0, worst = 0;
    for (uint32_t f = 0; f < FRAMES; f++) {
        plush_proxy_skin_update(skin, (const float(*)[3])x + f * px->node_count);
        memcpy(want, rest, n * sizeof *want);
        plush_proxy_skin_apply(skin, want, NULL);
        plush_anim_sample(anim, motion, (float)f);
        plush_anim_deform(anim, PLUSH_ANIM_BEFORE_PHYSICS);
        plush_anim_deform(anim, PLUSH_ANIM_AFTER_PHYSICS);
        plush_anim_skin(anim, 0, o->vertex_count, got, NULL);
        double sum = 0;
        for (size_t i = 0; i < n; i++) {
            uint32_t src = binding->vertices[i];
            uint32_t dst = src < SPHERE_VERTICES ? src : src - CAGE_VERTICES;
            double e2 = 0;
            for (int c = 0; c < 3; c++)
                e2 += ((double)got[dst][c] - want[i][c]) * ((double)got[dst][c] - want[i][c]);
            sum += e2;
            worst = fmax(worst, sqrt(e2));
        }
        worst_rms = fmax(worst_rms, sqrt(sum / (double)n)); /* every bound vertex moves with the cage here */
    }
    printf("replayed at every frame: RMS over the soft part at most %.3g, worst vertex %.3g\n", worst_rms, worst);
    assert_true(worst_rms <= plan.guard_rms * 1.001 + 1e-6);
    assert_true(worst <= plan.error * 1.001 + 1e-6);
    plush_proxy_skin_destroy(skin);
    free(rest), free(want), free(got), free(x);
    plush_anim_destroy(anim);
    plush_motion_free(motion);
    plush_pmx_free(o);
    plush_vmd_free(v);
    toy_bake_free(bake, binding, model);
}

/* PMX 2.1 joints become the spring 6DOF that holds what they held: the bake is a plain
 * PMX 2.0 that writes without --lossy, and one warning counts the conversions. */
static void test_joints_converted(void **state)
{
    (void)state;
    plush_pmx_model *m = mesh_fx_plush();
    plush_pmx_rigid_body *rb = pmx_fx_rigid_bodies(m, 2);
    for (int i = 0; i < 2; i++)
        rb[i] = (plush_pmx_rigid_body){.name = pmx_fx_str(m, i ? "b" : "a"), .bone = 0, .mask = 0xFFFF, .mass = 1,
                                       .size = {0.5f, 0, 0}, .mode = (uint8_t)i};
    plush_pmx_joint *j = pmx_fx_joints(m, 6);
    for (int t = 0; t < 6; t++) {
        j[t] = (plush_pmx_joint){.name = pmx_fx_str(m, "j"), .type = (uint8_t)t, .body_a = 0, .body_b = 1};
        for (int k = 0; k < 3; k++) {
            j[t].linear_lower[k] = -0.1f * (float)(k + 1), j[t].linear_upper[k] = 0.2f * (float)(k + 1);
            j[t].angular_lower[k] = -0.3f * (float)(k + 1), j[t].angular_upper[k] = 0.4f * (float)(k + 1);
            j[t].spring_linear[k] = 5, j[t].spring_angular[k] = 6;
        }
    }
    plush_diag d = pmx_fx_diag();
    plush_scene_binding *b = NULL;
    plush_scene_bake *bake = NULL;
    plush_pmx_model *o = NULL;
    pmx_fx_ok(plush_scene_bind(m, NULL, &b, &d), &d);
    pmx_fx_ok(plush_scene_bake_create(b, NULL, (plush_proxy_patch_shape){0}, &bake, &d), &d);
    uint32_t before = d.warning_count;
    pmx_fx_ok(plush_scene_bake_model(bake, &o, &d), &d);
    assert_int_equal(d.warning_count, before + 1);
    assert_int_equal(o->joint_count, 6);
    for (int t = 0; t < 6; t++)
        assert_int_equal(o->joints[t].type, PLUSH_PMX_JOINT_SPRING_6DOF);
    const plush_pmx_joint *g = o->joints;
    /* spring 6DOF as it was, springs kept; 6DOF: the limits, no springs */
    assert_true(g[0].spring_linear[0] == 5 && g[0].angular_upper[2] == 1.2f);
    assert_true(g[1].spring_linear[0] == 0 && g[1].spring_angular[1] == 0 && g[1].linear_lower[1] == -0.2f &&
                g[1].angular_upper[2] == 1.2f);
    /* point-to-point: the point locked, every angle free (lower > upper) */
    for (int k = 0; k < 3; k++)
        assert_true(g[2].linear_lower[k] == 0 && g[2].linear_upper[k] == 0 && g[2].angular_lower[k] > g[2].angular_upper[k]);
    /* cone-twist: spans from angular_lower, symmetric */
    for (int k = 0; k < 3; k++)
        assert_true(g[3].angular_lower[k] == -0.3f * (float)(k + 1) && g[3].angular_upper[k] == 0.3f * (float)(k + 1));
    /* slider: along and about X only */
    assert_true(g[4].linear_lower[0] == -0.1f && g[4].linear_upper[0] == 0.2f && g[4].angular_lower[0] == -0.3f &&
                g[4].angular_upper[0] == 0.4f && g[4].linear_upper[1] == 0 && g[4].angular_upper[2] == 0);
    /* hinge: about Z within the limits stored in x, nothing else */
    assert_true(g[5].angular_lower[2] == -0.3f && g[5].angular_upper[2] == 0.4f && g[5].angular_upper[0] == 0 &&
                g[5].linear_upper[0] == 0);
    plush_buf bytes = {0};
    pmx_fx_ok(plush_pmx_write(o, &(plush_pmx_write_options){.version = PLUSH_PMX_WRITE_20}, &bytes, &d), &d);
    plush_buf_free(&bytes);
    plush_pmx_free(o);
    plush_scene_bake_destroy(bake);
    plush_scene_binding_free(b);
    plush_pmx_free(m);
}

/* Rows the fitted bones miss: a sheet turning as a whole and, beside it, a strand (a cage piece a fifth
 * its size) swinging on its own. The detailed mesh interleaves their vertices, so that the fit's sampled
 * rows (every other one of 5,000) are all the sheet's: the bones fit the samples with the fewest count and
 * none of them follows the strand, as on a dancing character's hair a strand off the samples was missed by
 * 2.1% of her height. The strand's rows ride on their triangles' exact pseudo-bones instead, appended after
 * the fitted bones, and every vertex is within the fit's bar at every frame. */
static mesh_fx two_grids(unsigned n, float size, float shift, float y, bool interleave)
{
    mesh_fx a = mesh_fx_grid(n, size), out = {0};
    size_t v = a.vertex_count, i = a.index_count;
    out.vertex_count = 2 * v;
    out.positions = malloc(2 * v * sizeof *out.positions);
    out.index_count = 2 * i;
    out.indices = malloc(2 * i * sizeof *out.indices);
    assert_non_null(out.positions);
    assert_non_null(out.indices);
    for (size_t k = 0; k < v; k++) {
        size_t sheet = interleave ? 2 * k : k, strand = interleave ? 2 * k + 1 : v + k;
        memcpy(out.positions[sheet], a.positions[k], sizeof *a.positions);
        out.positions[sheet][1] += y;
        /* the strand: a fifth of the sheet's width, beside it */
        for (int c = 0; c < 3; c++)
            out.positions[strand][c] = 0.2f * a.positions[k][c];
        out.positions[strand][0] += shift;
        out.positions[strand][1] += y;
    }
    for (size_t k = 0; k < i; k++) {
        out.indices[k] = interleave ? 2 * a.indices[k] : a.indices[k];
        out.indices[i + k] = interleave ? 2 * a.indices[k] + 1 : (uint32_t)v + a.indices[k];
    }
    mesh_fx_free(&a);
    return out;
}

static void test_fit_carries_rows_it_misses(void **state)
{
    (void)state;
    plush_diag d = pmx_fx_diag();
    plush_pmx_model *m = mesh_fx_model(2);
    mesh_fx skin = two_grids(49, 10.0f, 9.0f, 0.05f, true), cage = two_grids(4, 10.0f, 9.0f, 0.0f, false);
    assert_int_equal(skin.vertex_count, 5000);
    mesh_fx_add_material(m, "skin", &skin, 1);
    size_t mat = mesh_fx_add_material(m, "cage", &cage, 0);
    mesh_fx_add_soft_body(m, (int32_t)mat, 0);
    mesh_fx_free(&skin);
    mesh_fx_free(&cage);
    plush_scene_binding *binding = NULL;
    pmx_fx_ok(plush_scene_bind(m, NULL, &binding, &d), &d);
    plush_scene_bake *bake = NULL;
    pmx_fx_ok(plush_scene_bake_create(binding, NULL, (plush_proxy_patch_shape){0}, &bake, &d), &d);
    const plush_scene_proxy *px = &binding->proxy;
    float(*x)[3] = calloc(px->node_count, sizeof *x);
    enum { FRAMES = 240 };
    for (uint32_t f = 0; f < FRAMES; f++) {
        float a = 0.3f * sinf(0.05f * (float)f), b = 0.9f * sinf(0.8f * (float)f);
        for (size_t n = 0; n < px->node_count; n++) {
            const float *p = px->nodes[n];
            if (p[0] < 6.0f) { /* the sheet: turned about Y */
                x[n][0] = cosf(a) * p[0] + sinf(a) * p[2];
                x[n][1] = p[1] + 0.1f * (float)f / FRAMES;
                x[n][2] = -sinf(a) * p[0] + cosf(a) * p[2];
            } else { /* the strand: about its own middle, on Z */
                float u = p[0] - 9.0f;
                x[n][0] = 9.0f + cosf(b) * u;
                x[n][1] = p[1] + sinf(b) * u;
                x[n][2] = p[2];
            }
        }
        pmx_fx_ok(plush_scene_bake_add_frame(bake, f, (const float(*)[3])x, &d), &d);
    }
    free(x);
    double tolerance = 0.01;
    plush_scene_bake_set_tolerance(bake, tolerance);
    pmx_fx_ok(plush_scene_bake_fit(bake, 0, &d), &d);
    assert_non_null(bake->fit);
    printf("fit: %zu bones, %zu of them the strand's pseudo-bones; RMS %.3g, worst %.3g at every other frame\n",
           bake->fit->bones, bake->fit->carried, bake->fit->rms, bake->fit->worst);
    size_t fitted = bake->fit->bones - bake->fit->carried;
    assert_true(bake->fit->carried >= 1 && fitted < px->triangle_count / 2);
    for (size_t k = fitted; k < bake->fit->bones; k++)
        assert_true(bake->fit->pivot[k][0] > 6.0f); /* each a strand triangle's centroid */
    assert_true(bake->fit->worst <= 2.5 * tolerance);
    /* the motion as a player gets it: every vertex within the error it reports */
    plush__bake_plan plan = {0};
    plush_vmd_motion *v = NULL;
    pmx_fx_ok(plush__bake_motion(bake, &plan, &v, &d), &d);
    assert_true(plan.error > 0 && plan.error <= 3.5 * tolerance);
    plush_vmd_free(v);
    plush_scene_bake_destroy(bake);
    plush_scene_binding_free(binding);
    plush_pmx_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_model, setup, teardown),
        cmocka_unit_test_setup_teardown(test_motion_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replay_matches_proxy_skinning, setup, teardown),
        cmocka_unit_test(test_write_files_with_motion),
        cmocka_unit_test(test_joints_converted),
        cmocka_unit_test(test_curves_stand_for_eased_motion),
        cmocka_unit_test(test_budget_holds),
        cmocka_unit_test(test_budget_chooses_bones),
        cmocka_unit_test(test_rms_guard_holds_the_model),
        cmocka_unit_test(test_fit_carries_rows_it_misses),
        cmocka_unit_test_setup_teardown(test_textures, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
