/* The glTF export (plush_gltf_write, export "gltf"): the demo bear's GLB decoded back by a glTF sampler of the
 * test's own (LINEAR translations, slerped rotations, morph weights, skinning with JOINTS_0 / WEIGHTS_0 and
 * the inverse bind matrices) equals plush's own mesh, converted to glTF's frame ((x, y, -z) * 0.08 m):
 * the exact GLB (--bake-tolerance 0: a pseudo-bone per cage triangle, a key every frame) within 1e-4 m at
 * frames 0, 60.5 and 120; the default GLB (fitted bones, keys only where interpolation misses) within 0.1%
 * of the bear's height RMS and 0.5% worst at frames on and between its keys, with far fewer keys; the
 * Khronos validator finds no error or warning in both and in Alicia's with the committed hair cage
 * (skipped with a message when node or the validator is missing); the writer refuses bad descriptions;
 * textures are embedded as PNG.
 *
 * Frames are compared with the scene's own positions at that frame (the PLY/OBJ frame, on the vertices the
 * bake keeps). Frame 60.5 is compared with the bake replayed by plush's bone pipeline at 60.5 (baked model
 * + baked motion: the pseudo-bone keys interpolated as the bake's VMD interpolates them): the bake, and so
 * the GLB, holds whole frames only, and the simulation's own half frame (physics stepped half a frame) is a
 * state neither file contains. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/gltf.h"
#include "plush/plush.h"
#include "plush/sys/render.h"
#include "plush/scene_sink.h"
#include "plush/sys/core.h"
#include "plush/sys/anim.h"
#include "support/cli_run.h"
#include "support/glb_read.h"
#include "support/shared_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* The patch rings the scene's skin uses, for a bake made beside it. */
static plush_proxy_patch_shape scene_patch(const plush_scene *sc)
{
    plush_scene_desc desc;
    plush_scene_get_desc(sc, &desc);
    return plush_scene_patch(&desc);
}


enum { DEMO_FRAMES = 121, CHECKS = 5 };
static const uint32_t check_frame[CHECKS] = {0, 37, 60, 73, 120};

/* ---- what the run leaves for the tests --------------------------------------------------------- */

typedef struct demo_run {
    char glb[512];                /* exact: every key of every pseudo-bone */
    char fitted[512];             /* the default: fitted bones, reduced keys */
    double height;                /* the bear's, in metres */
    size_t kept_count;
    float (*expect[CHECKS])[3];   /* plush's own kept vertices at check_frame[i], in glTF's frame */
    float (*expect_half)[3];      /* the bake replayed at 60.5, in glTF's frame */
} demo_run;

static demo_run run;

static void to_gltf(const float p[3], float out[3])
{
    out[0] = (float)(p[0] * 0.08), out[1] = (float)(p[1] * 0.08), out[2] = (float)(-p[2] * 0.08);
}

/* A probe sink: the kept vertices at the check frames, and a bake of its own for the 60.5 replay. */
typedef struct probe {
    plush_scene_sink base;
    const bool *kept;
    plush_scene_bake *bake;
} probe;

static plush_status probe_frame(plush_scene_sink *s, const plush_scene *scene, uint32_t frame, plush_diag *diag)
{
    probe *p = (probe *)s;
    plush_status st = plush_scene_bake_add_frame(p->bake, frame, plush_scene_proxy_nodes(scene), diag);
    for (int c = 0; c < CHECKS; c++)
        if (frame == check_frame[c]) {
            plush_scene_desc desc;
            plush_scene_get_desc(scene, &desc);
            const float(*pos)[3] = plush_scene_positions(scene);
            run.expect[c] = malloc(run.kept_count * sizeof *run.expect[c]);
            for (size_t v = 0, k = 0; v < desc.model->vertex_count; v++)
                if (p->kept[v])
                    to_gltf(pos[v], run.expect[c][k++]);
        }
    return st;
}

static plush_status probe_end(plush_scene_sink *s, const plush_scene *scene, plush_diag *diag)
{
    (void)s, (void)scene, (void)diag;
    return PLUSH_OK;
}

static void probe_destroy(plush_scene_sink *s) { (void)s; }
static const plush_scene_sink_ops probe_ops = {.frame = probe_frame, .end = probe_end, .destroy = probe_destroy};

/* The bake's kept vertices: drawn by a material no soft body owns, or by no material (bake_model.c). */
static bool *kept_vertices(const plush_pmx_model *m, const plush_scene_binding *b, size_t *count)
{
    uint8_t *use = calloc(m->vertex_count, 1);
    bool *kept = calloc(m->vertex_count, sizeof *kept);
    assert_non_null(use);
    assert_non_null(kept);
    size_t first = 0;
    for (size_t mat = 0; mat < m->material_count; mat++) {
        for (size_t i = first; i < first + (size_t)m->materials[mat].index_count; i++)
            use[m->indices[i]] |= b->proxy.soft_material[mat] ? 2 : 1;
        first += (size_t)m->materials[mat].index_count;
    }
    *count = 0;
    for (size_t v = 0; v < m->vertex_count; v++)
        *count += kept[v] = use[v] != 2;
    free(use);
    return kept;
}

/* The baked model and motion replayed by the bone pipeline at frame f (no physics: the demo bear's bones
 * are driven by its motion alone). */
static void replay_bake(const plush_scene_bake *bake, float f, float (*out)[3])
{
    plush_diag diag = {0};
    plush_pmx_model *baked = NULL;
    plush_vmd_motion *keys = NULL;
    plush_motion *motion = NULL;
    plush_anim *anim = NULL;
    assert_int_equal(plush_scene_bake_model(bake, &baked, &diag), PLUSH_OK);
    assert_int_equal(plush_scene_bake_motion(bake, &keys, &diag), PLUSH_OK);
    assert_int_equal(plush_motion_bind_vmd(baked, keys, &motion, &diag), PLUSH_OK);
    assert_int_equal(plush_anim_create(baked, &anim, &diag), PLUSH_OK);
    assert_int_equal(baked->vertex_count, run.kept_count);
    plush_anim_sample(anim, motion, f);
    plush_anim_update_morphs(anim);
    plush_anim_deform(anim, PLUSH_ANIM_BEFORE_PHYSICS);
    plush_anim_deform(anim, PLUSH_ANIM_AFTER_PHYSICS);
    float(*pos)[3] = malloc(baked->vertex_count * sizeof *pos);
    plush_anim_skin(anim, 0, baked->vertex_count, pos, NULL);
    for (size_t v = 0; v < baked->vertex_count; v++)
        to_gltf(pos[v], out[v]);
    free(pos);
    plush_anim_destroy(anim);
    plush_motion_free(motion);
    plush_vmd_free(keys);
    plush_pmx_free(baked);
}

static int setup(void **state)
{
    (void)state;
    if (cli_tmp_setup("plush_gltf") != 0)
        return -1;
    plush_diag diag = {0};
    plush_pmx_model *bear = NULL;
    plush_vmd_motion *shake = NULL;
    plush_im2_map *rigid = NULL;
    if (plush_pmx_read_file(BEAR, NULL, &bear, &diag) != PLUSH_OK || plush_vmd_read_file(BEAR_VMD, &shake, &diag) != PLUSH_OK ||
        plush_im2_read_file(BEAR_IM2, &rigid, &diag) != PLUSH_OK) {
        fprintf(stderr, "the demo bear is missing: run make first\n");
        return -1;
    }
    plush_scene *sc = NULL;
    plush_scene_desc desc = {.model = bear, .motion = shake, .overrides = rigid, .overrides_file = BEAR_IM2};
    if (plush_scene_create(&desc, &sc, &diag) != PLUSH_OK)
        return -1;
    bool *kept = kept_vertices(bear, plush_scene_get_binding(sc), &run.kept_count);
    probe pr = {.base.ops = &probe_ops, .kept = kept};
    if (plush_scene_bake_create(plush_scene_get_binding(sc), shake, scene_patch(sc), &pr.bake, &diag) != PLUSH_OK)
        return -1;
    plush_scene_output out = {.dir = cli_tmp_dir(), .stem = "plush_bear", .model_file = BEAR, .bake_tolerance = -1};
    plush_scene_output fitted = {.dir = cli_tmp_dir(), .stem = "plush_bear_fitted", .model_file = BEAR};
    plush_scene_sink *sinks[3] = {NULL, NULL, &pr.base};
    if (plush_scene_sink_create(plush_scene_export_find("gltf", 4), sc, &out, &sinks[0], &diag) != PLUSH_OK ||
        plush_scene_sink_create(plush_scene_export_find("gltf", 4), sc, &fitted, &sinks[1], &diag) != PLUSH_OK)
        return -1;
    run.height = plush_pmx_height(bear) * 0.08;
    plush_scene_run_result res;
    plush_status st = plush_scene_run(sc, &(plush_scene_run_options){.frames = DEMO_FRAMES, .sinks = sinks, .sink_count = 3},
                                      &res, &diag);
    char line[512];
    plush_diag_format(&diag, line, sizeof line);
    if (st != PLUSH_OK)
        fprintf(stderr, "run: %s\n", line);
    snprintf(run.glb, sizeof run.glb, "%s/plush_bear_plush.glb", cli_tmp_dir());
    snprintf(run.fitted, sizeof run.fitted, "%s/plush_bear_fitted_plush.glb", cli_tmp_dir());
    run.expect_half = malloc(run.kept_count * sizeof *run.expect_half);
    replay_bake(pr.bake, 60.5f, run.expect_half);
    plush_scene_sink_destroy(sinks[0]);
    plush_scene_sink_destroy(sinks[1]);
    plush_scene_bake_destroy(pr.bake);
    plush_scene_destroy(sc);
    free(kept);
    plush_im2_free(rigid);
    plush_vmd_free(shake);
    plush_pmx_free(bear);
    return st == PLUSH_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    for (int c = 0; c < CHECKS; c++)
        free(run.expect[c]);
    free(run.expect_half);
    return cli_tmp_teardown();
}

/* ---- a glTF sampler of the test's own --------------------------------------------------------------- */

typedef struct channel {
    float *times, *values;   /* keys; values keys * width */
    size_t keys;
} channel;

typedef struct sampler_model {
    glb_file g;
    uint8_t *bytes;
    size_t nodes;
    int *parent;
    float (*rest_t)[3], (*rest_r)[4];
    channel *tr, *rot, weights;
    size_t joints;
    int *joint_node;
    float *ibm;
    size_t vertex_count;
    float *pos, *jnt, *wgt;
    size_t targets;
    float **target;
} sampler_model;

static float *accessor(const sampler_model *s, const json_value *index, size_t *count, int want)
{
    assert_non_null(index);
    int comps = 0;
    float *v = glb_accessor(&s->g, (size_t)index->number, count, &comps);
    assert_non_null(v);
    assert_int_equal(comps, want);
    return v;
}

static void load_model(sampler_model *s, const char *glb)
{
    size_t size = 0;
    s->bytes = test_read_file(glb, &size);
    assert_non_null(s->bytes);
    assert_true(glb_open(s->bytes, size, &s->g));
    const json_value *nodes = json_get(s->g.json, "nodes");
    s->nodes = nodes->count;
    s->parent = malloc(s->nodes * sizeof *s->parent);
    s->rest_t = calloc(s->nodes, sizeof *s->rest_t);
    s->rest_r = calloc(s->nodes, sizeof *s->rest_r);
    s->tr = calloc(s->nodes, sizeof *s->tr);
    s->rot = calloc(s->nodes, sizeof *s->rot);
    for (size_t n = 0; n < s->nodes; n++)
        s->parent[n] = -1, s->rest_r[n][3] = 1;
    for (size_t n = 0; n < s->nodes; n++) {
        const json_value *nd = json_at(nodes, n), *ch = json_get(nd, "children");
        for (size_t c = 0; ch && c < ch->count; c++)
            s->parent[(size_t)ch->items[c].number] = (int)n;
        const json_value *t = json_get(nd, "translation"), *r = json_get(nd, "rotation");
        for (int k = 0; t && k < 3; k++)
            s->rest_t[n][k] = (float)t->items[k].number;
        for (int k = 0; r && k < 4; k++)
            s->rest_r[n][k] = (float)r->items[k].number;
    }
    const json_value *skin = json_at(json_get(s->g.json, "skins"), 0), *joints = json_get(skin, "joints");
    assert_non_null(joints);
    s->joints = joints->count;
    s->joint_node = malloc(s->joints * sizeof *s->joint_node);
    for (size_t j = 0; j < s->joints; j++)
        s->joint_node[j] = (int)joints->items[j].number;
    size_t n = 0;
    s->ibm = accessor(s, json_get(skin, "inverseBindMatrices"), &n, 16);
    assert_int_equal(n, s->joints);

    const json_value *prim = json_at(json_get(json_at(json_get(s->g.json, "meshes"), 0), "primitives"), 0);
    const json_value *attr = json_get(prim, "attributes");
    s->pos = accessor(s, json_get(attr, "POSITION"), &s->vertex_count, 3);
    s->jnt = accessor(s, json_get(attr, "JOINTS_0"), &n, 4);
    s->wgt = accessor(s, json_get(attr, "WEIGHTS_0"), &n, 4);
    assert_non_null(json_get(attr, "NORMAL"));
    assert_non_null(json_get(attr, "TEXCOORD_0"));
    const json_value *targets = json_get(prim, "targets");
    s->targets = targets ? targets->count : 0;
    s->target = calloc(s->targets ? s->targets : 1, sizeof *s->target);
    for (size_t t = 0; t < s->targets; t++)
        s->target[t] = accessor(s, json_get(json_at(targets, t), "POSITION"), &n, 3);

    const json_value *anim = json_at(json_get(s->g.json, "animations"), 0);
    const json_value *samplers = json_get(anim, "samplers"), *channels = json_get(anim, "channels");
    assert_non_null(channels);
    for (size_t c = 0; c < channels->count; c++) {
        const json_value *ch = json_at(channels, c), *target = json_get(ch, "target");
        const json_value *smp = json_at(samplers, (size_t)json_num(ch, "sampler", -1));
        assert_string_equal(json_get(smp, "interpolation")->string, "LINEAR");
        const char *path = json_get(target, "path")->string;
        size_t node = (size_t)json_num(target, "node", -1), keys = 0, nv = 0;
        channel *dst = strcmp(path, "translation") == 0 ? &s->tr[node] : strcmp(path, "rotation") == 0 ? &s->rot[node]
                                                                                                       : &s->weights;
        int width = dst == &s->tr[node] ? 3 : dst == &s->rot[node] ? 4 : 1;
        dst->times = accessor(s, json_get(smp, "input"), &keys, 1);
        dst->values = accessor(s, json_get(smp, "output"), &nv, width);
        dst->keys = keys;
    }
}

static void free_model(sampler_model *s)
{
    for (size_t n = 0; n < s->nodes; n++) {
        free(s->tr[n].times), free(s->tr[n].values);
        free(s->rot[n].times), free(s->rot[n].values);
    }
    free(s->weights.times), free(s->weights.values);
    for (size_t t = 0; t < s->targets; t++)
        free(s->target[t]);
    free(s->target), free(s->tr), free(s->rot), free(s->parent), free(s->rest_t), free(s->rest_r);
    free(s->joint_node), free(s->ibm), free(s->pos), free(s->jnt), free(s->wgt);
    glb_close(&s->g);
    free(s->bytes);
}

/* The key segment of time t and the fraction into it (clamped at both ends, as glTF samples). */
static size_t segment(const channel *c, double t, double *u)
{
    if (t <= c->times[0] || c->keys == 1) {
        *u = 0;
        return 0;
    }
    for (size_t k = 0; k + 1 < c->keys; k++)
        if (t < c->times[k + 1]) {
            *u = (t - c->times[k]) / ((double)c->times[k + 1] - c->times[k]);
            return k;
        }
    *u = 1;
    return c->keys - 2;
}

static void slerp(const float *a, const float *b, double u, double out[4])
{
    double d = 0, bb[4];
    for (int k = 0; k < 4; k++)
        d += (double)a[k] * b[k];
    for (int k = 0; k < 4; k++)
        bb[k] = d < 0 ? -(double)b[k] : b[k];
    d = fabs(d);
    double wa = 1 - u, wb = u;
    if (d < 0.9999) {
        double th = acos(d), s = sin(th);
        wa = sin((1 - u) * th) / s, wb = sin(u * th) / s;
    }
    double n = 0;
    for (int k = 0; k < 4; k++) {
        out[k] = wa * a[k] + wb * bb[k];
        n += out[k] * out[k];
    }
    for (int k = 0; k < 4; k++)
        out[k] /= sqrt(n);
}

/* Column-major 4x4 in double. */
static void mat_mul(const double a[16], const double b[16], double out[16])
{
    double r[16];
    for (int c = 0; c < 4; c++)
        for (int row = 0; row < 4; row++) {
            double s = 0;
            for (int k = 0; k < 4; k++)
                s += a[4 * k + row] * b[4 * c + k];
            r[4 * c + row] = s;
        }
    memcpy(out, r, sizeof r);
}

static void trs(const double t[3], const double q[4], double m[16])
{
    double x = q[0], y = q[1], z = q[2], w = q[3];
    double r[16] = {1 - 2 * (y * y + z * z), 2 * (x * y + z * w), 2 * (x * z - y * w), 0,
                    2 * (x * y - z * w), 1 - 2 * (x * x + z * z), 2 * (y * z + x * w), 0,
                    2 * (x * z + y * w), 2 * (y * z - x * w), 1 - 2 * (x * x + y * y), 0,
                    t[0], t[1], t[2], 1};
    memcpy(m, r, sizeof r);
}

static void node_global(const sampler_model *s, size_t n, double t, double (*globals)[16], bool *done)
{
    if (done[n])
        return;
    double tr[3] = {s->rest_t[n][0], s->rest_t[n][1], s->rest_t[n][2]};
    double q[4] = {s->rest_r[n][0], s->rest_r[n][1], s->rest_r[n][2], s->rest_r[n][3]};
    double u;
    if (s->tr[n].keys) {
        size_t k = segment(&s->tr[n], t, &u);
        for (int c = 0; c < 3; c++)
            tr[c] = (1 - u) * s->tr[n].values[3 * k + c] + u * s->tr[n].values[3 * (k + 1) + c];
    }
    if (s->rot[n].keys) {
        size_t k = segment(&s->rot[n], t, &u);
        slerp(&s->rot[n].values[4 * k], &s->rot[n].values[4 * (k + 1)], u, q);
    }
    double local[16];
    trs(tr, q, local);
    if (s->parent[n] >= 0) {
        node_global(s, (size_t)s->parent[n], t, globals, done);
        mat_mul(globals[s->parent[n]], local, globals[n]);
    } else {
        memcpy(globals[n], local, sizeof local);
    }
    done[n] = true;
}

/* The skinned, morphed mesh at time t. */
static void evaluate(const sampler_model *s, double t, float (*out)[3])
{
    double(*globals)[16] = malloc(s->nodes * sizeof *globals);
    double(*joint)[16] = malloc(s->joints * sizeof *joint);
    bool *done = calloc(s->nodes, sizeof *done);
    for (size_t j = 0; j < s->joints; j++) {
        node_global(s, (size_t)s->joint_node[j], t, globals, done);
        double ibm[16];
        for (int k = 0; k < 16; k++)
            ibm[k] = s->ibm[16 * j + (size_t)k];
        mat_mul(globals[s->joint_node[j]], ibm, joint[j]);
    }
    double *w = calloc(s->targets ? s->targets : 1, sizeof *w);
    if (s->weights.keys) {
        double u;
        size_t k = segment(&s->weights, t, &u);
        for (size_t i = 0; i < s->targets; i++)
            w[i] = (1 - u) * s->weights.values[k * s->targets + i] + u * s->weights.values[(k + 1) * s->targets + i];
    }
    for (size_t v = 0; v < s->vertex_count; v++) {
        double p[4] = {s->pos[3 * v], s->pos[3 * v + 1], s->pos[3 * v + 2], 1}, r[3] = {0, 0, 0};
        for (size_t i = 0; i < s->targets; i++)
            for (int c = 0; c < 3; c++)
                p[c] += w[i] * s->target[i][3 * v + (size_t)c];
        for (int i = 0; i < 4; i++) {
            double wi = s->wgt[4 * v + (size_t)i];
            const double *m = joint[(size_t)s->jnt[4 * v + (size_t)i]];
            for (int c = 0; c < 3; c++)
                r[c] += wi * (m[c] * p[0] + m[4 + c] * p[1] + m[8 + c] * p[2] + m[12 + c]);
        }
        for (int c = 0; c < 3; c++)
            out[v][c] = (float)r[c];
    }
    free(w);
    free(done);
    free(joint);
    free(globals);
}

static double max_error(const float (*a)[3], const float (*b)[3], size_t n)
{
    double worst = 0;
    for (size_t v = 0; v < n; v++) {
        double x = (double)a[v][0] - b[v][0], y = (double)a[v][1] - b[v][1], z = (double)a[v][2] - b[v][2];
        double d = sqrt(x * x + y * y + z * z);
        worst = d > worst ? d : worst;
    }
    return worst;
}

/* ---- tests ---------------------------------------------------------------------------------------------- */

static void test_demo_frames_match(void **state)
{
    (void)state;
    sampler_model s = {0};
    load_model(&s, run.glb);
    assert_int_equal(s.vertex_count, run.kept_count);
    float(*mesh)[3] = malloc(s.vertex_count * sizeof *mesh);
    for (int c = 0; c < CHECKS; c++) {
        evaluate(&s, check_frame[c] / 30.0, mesh);
        double e = max_error((const float(*)[3])mesh, (const float(*)[3])run.expect[c], s.vertex_count);
        printf("frame %u: largest distance to plush's mesh %.3g m\n", check_frame[c], e);
        assert_true(e < 1e-4);
    }
    evaluate(&s, 60.5 / 30.0, mesh);
    double e = max_error((const float(*)[3])mesh, (const float(*)[3])run.expect_half, s.vertex_count);
    printf("frame 60.5: largest distance to the bake's replay %.3g m\n", e);
    assert_true(e < 1e-4);
    free(mesh);
    free_model(&s);
}

static void test_demo_structure(void **state)
{
    (void)state;
    sampler_model s = {0};
    load_model(&s, run.glb);
    /* the common root, the bear's bones, plush_root and one pseudo-bone per cage triangle (1,000) */
    assert_true(s.joints > 1000);
    assert_int_equal(s.nodes, s.joints + 1);
    const json_value *jn = json_get(json_at(json_get(s.g.json, "nodes"), 0), "name");
    assert_non_null(jn);
    bool found_root = false;
    for (size_t n = 0; n < s.nodes; n++) {
        const json_value *name = json_get(json_at(json_get(s.g.json, "nodes"), n), "name");
        found_root |= name && strcmp(name->string, "plush_root") == 0;
    }
    assert_true(found_root);
    /* every frame a key, at frame / 30 s */
    size_t animated = 0;
    for (size_t n = 0; n < s.nodes; n++)
        if (s.rot[n].keys) {
            assert_int_equal(s.rot[n].keys, DEMO_FRAMES);
            assert_float_equal(s.rot[n].times[DEMO_FRAMES - 1], 120.0 / 30.0, 1e-6);
            animated++;
        }
    assert_true(animated >= 1000);
    /* weights sum to 1, joints in range */
    for (size_t v = 0; v < s.vertex_count; v++) {
        double sum = 0;
        for (int k = 0; k < 4; k++) {
            sum += s.wgt[4 * v + (size_t)k];
            assert_true(s.jnt[4 * v + (size_t)k] < (float)s.joints);
        }
        assert_float_equal(sum, 1.0, 1e-6);
    }
    free_model(&s);
}

static double rms_error(const float (*a)[3], const float (*b)[3], size_t n)
{
    double sq = 0;
    for (size_t v = 0; v < n; v++) {
        double x = (double)a[v][0] - b[v][0], y = (double)a[v][1] - b[v][1], z = (double)a[v][2] - b[v][2];
        sq += x * x + y * y + z * z;
    }
    return n ? sqrt(sq / (double)n) : 0;
}

/* The default GLB: a few fitted bones, each joint keyed only where interpolation would miss, yet within
 * 0.1% of the bear's height RMS and 0.5% worst of plush's frames, on and between keys (37 and 73 are no
 * frame the fit samples). */
static void test_demo_fitted(void **state)
{
    (void)state;
    sampler_model s = {0};
    load_model(&s, run.fitted);
    assert_int_equal(s.vertex_count, run.kept_count);
    assert_true(s.joints < 100);   /* the bear's 12 bones, plush_root and a few fitted bones */
    size_t keys = 0;
    for (size_t n = 0; n < s.nodes; n++) {
        assert_int_equal(s.tr[n].keys, s.rot[n].keys);
        if (s.rot[n].keys) {
            assert_float_equal(s.rot[n].times[0], 0.0, 1e-6);   /* first and last frames always */
            assert_float_equal(s.rot[n].times[s.rot[n].keys - 1], 120.0 / 30.0, 1e-6);
        }
        keys += s.rot[n].keys;
    }
    /* the exact GLB keys each of the 1,000 pseudo-bones at every frame */
    printf("%zu joints, %zu joint keys (%zu if every frame)\n", s.joints, keys, s.joints * DEMO_FRAMES);
    assert_true(keys < 1000 * DEMO_FRAMES / 10);
    float(*mesh)[3] = malloc(s.vertex_count * sizeof *mesh);
    for (int c = 0; c < CHECKS; c++) {
        evaluate(&s, check_frame[c] / 30.0, mesh);
        double worst = max_error((const float(*)[3])mesh, (const float(*)[3])run.expect[c], s.vertex_count);
        double rms = rms_error((const float(*)[3])mesh, (const float(*)[3])run.expect[c], s.vertex_count);
        printf("frame %u: RMS %.3g m, worst %.3g m (height %.3g m)\n", check_frame[c], rms, worst, run.height);
        assert_true(rms <= 0.001 * run.height);
        assert_true(worst <= 0.005 * run.height);
    }
    free(mesh);
    free_model(&s);
}

/* Every material's baseColorFactor is its PMX diffuse colour taken from sRGB to linear, alpha as it is:
 * the bear's brown stays brown in a viewer that reads the factor as linear. */
static void test_demo_colours_linear(void **state)
{
    (void)state;
    sampler_model s = {0};
    load_model(&s, run.glb);
    plush_diag diag = {0};
    plush_pmx_model *bear = NULL;
    assert_int_equal(plush_pmx_read_file(BEAR, NULL, &bear, &diag), PLUSH_OK);
    const json_value *mats = json_get(s.g.json, "materials");
    assert_non_null(mats);
    size_t checked = 0, brown = 0;
    for (size_t i = 0; i < mats->count; i++) {
        const json_value *name = json_get(json_at(mats, i), "name");
        const json_value *f = json_get(json_get(json_at(mats, i), "pbrMetallicRoughness"), "baseColorFactor");
        assert_non_null(f);
        for (size_t m = 0; m < bear->material_count; m++) {
            const plush_pmx_material *pm = &bear->materials[m];
            if (!name || !pm->name.s || strcmp(name->string, pm->name.s) != 0)
                continue;
            for (int k = 0; k < 3; k++) {
                double c = pm->diffuse[k] < 0 ? 0 : pm->diffuse[k] > 1 ? 1 : pm->diffuse[k];
                double lin = c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
                assert_float_equal(f->items[k].number, lin, 1e-6);
            }
            assert_float_equal(f->items[3].number, pm->diffuse[3], 1e-6);
            /* brown: red above green above blue, and darker than the sRGB value it came from */
            brown += f->items[0].number > f->items[1].number && f->items[1].number > f->items[2].number &&
                     f->items[0].number < pm->diffuse[0];
            checked++;
            break;
        }
    }
    printf("%zu materials checked, %zu brown\n", checked, brown);
    assert_true(checked > 0);
    assert_true(brown > 0);
    plush_pmx_free(bear);
    free_model(&s);
}

/* ---- the Khronos validator ---------------------------------------------------------------------------- */

/* Skips the running test, saying why, when the validator cannot run. */
static void need_validator(void)
{
    if (system("node --version >/dev/null 2>&1") != 0) {
        print_message("skipped: node is not installed (tools/install-deps.sh installs it)\n");
        skip();
    }
    if (!cli_exists("tools/node/node_modules/gltf-validator/package.json")) {
        print_message("skipped: gltf-validator is not installed (tools/install-deps.sh installs it into tools/node)\n");
        skip();
    }
}

static void validate(const char *glb)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "node tools/gltf-validate.mjs '%s'", glb);
    int rc = system(cmd);
    assert_true(WIFEXITED(rc));
    assert_int_equal(WEXITSTATUS(rc), 0);   /* 0 errors, 0 warnings */
}

static void test_validator_demo(void **state)
{
    (void)state;
    need_validator();
    validate(run.glb);
    validate(run.fitted);
}

static void test_validator_alicia(void **state)
{
    (void)state;
    if (!cli_exists(ALICIA) || !cli_exists(MOTION_0046)) {
        print_message("skipped: %s or its motion is missing\n", ALICIA);
        skip();
    }
    need_validator();
    char soft[600], out[600], glb[700];
    cli_tmp_path(soft, sizeof soft, "alicia_hair_soft.pmx");
    cli_tmp_path(out, sizeof out, "alicia_out");
    cli_result r;
    CLI_RUN(&r, "attach", ALICIA, "--proxy", "proxies/alicia_hair_cage.obj", "--pin-bone", "頭", "--pin-bone",
            "三つ編み４", "--preset", "plush", "-o", soft);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    CLI_RUN(&r, "run", soft, "--motion", MOTION_0046, "--frames", "30", "--export", "gltf", "-o", out);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    snprintf(glb, sizeof glb, "%s/alicia_hair_soft_plush.glb", out);
    assert_true(cli_exists(glb));
    validate(glb);
}

/* ---- the writer alone -------------------------------------------------------------------------------------- */

static const float tri_pos[3][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
static const uint32_t tri_idx[3] = {0, 1, 2};

static void test_writer_refuses(void **state)
{
    (void)state;
    plush_gltf_primitive prim = {.first_index = 0, .index_count = 3, .material = -1};
    plush_gltf_desc d = {.vertex_count = 3, .positions = tri_pos, .index_count = 3, .indices = tri_idx,
                         .primitives = &prim, .primitive_count = 1};
    plush_buf out = {0};
    plush_diag diag = {0};
    assert_int_equal(plush_gltf_write(&d, &out, &diag), PLUSH_OK);
    assert_memory_equal(out.data, "glTF", 4);
    size_t good = out.size;
    uint32_t bad_idx[3] = {0, 1, 3};
    d.indices = bad_idx;
    plush_diag_reset(&diag);
    assert_int_equal(plush_gltf_write(&d, &out, &diag), PLUSH_E_RANGE);
    assert_string_equal(diag.section, "face");
    assert_int_equal(out.size, good);
    d.indices = tri_idx;
    prim.material = 0;
    plush_diag_reset(&diag);
    assert_int_equal(plush_gltf_write(&d, &out, &diag), PLUSH_E_RANGE);
    assert_string_equal(diag.section, "primitive");
    prim.material = -1;
    plush_gltf_node nodes[2] = {{.parent = 1, .rotation = {0, 0, 0, 1}}, {.parent = 0, .rotation = {0, 0, 0, 1}}};
    d.nodes = nodes, d.node_count = 2;
    plush_diag_reset(&diag);
    assert_int_equal(plush_gltf_write(&d, &out, &diag), PLUSH_E_RANGE);
    assert_string_equal(diag.section, "node");
    plush_buf_free(&out);
}

/* A 2x2 BMP with one transparent pixel: its header read without decoding, then decoded and encoded as an
 * RGBA PNG; bytes that are no picture are refused by the header alone. */
static void test_texture_to_png(void **state)
{
    (void)state;
    uint8_t bmp[54 + 16] = {'B', 'M'};
    uint32_t fields[][2] = {{2, 70}, {10, 54}, {14, 40}, {18, 2}, {22, 2}, {34, 16}};
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
        for (int b = 0; b < 4; b++)
            bmp[fields[i][0] + (uint32_t)b] = (uint8_t)(fields[i][1] >> (8 * b));
    bmp[26] = 1, bmp[28] = 32;   /* planes, bits per pixel; BI_RGB with 32 bits: stb reads the 4th byte as alpha */
    const uint8_t px[16] = {255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 10, 20, 30, 0};
    memcpy(bmp + 54, px, 16);
    int w = 0, h = 0;
    bool jpeg = true;
    plush_diag diag = {0};
    assert_int_equal(plush_image_texture_info(bmp, sizeof bmp, &w, &h, &jpeg, &diag), PLUSH_OK);
    assert_int_equal(w, 2);
    assert_int_equal(h, 2);
    assert_false(jpeg);
    plush_render_texture tex;
    assert_int_equal(plush_image_decode_texture(bmp, sizeof bmp, 8192, &tex, &diag), PLUSH_OK);
    plush_buf out = {0};
    bool translucent = false;
    assert_int_equal(plush_image_encode_texture(&tex, &out, &translucent, &diag), PLUSH_OK);
    assert_true(translucent);
    assert_memory_equal(out.data, "\x89PNG", 4);
    plush_render_texture back;
    assert_int_equal(plush_image_decode_texture(out.data, out.size, 8192, &back, &diag), PLUSH_OK);
    assert_memory_equal(back.rgba, tex.rgba, 16);
    plush_render_texture_free(&back);
    plush_render_texture_free(&tex);
    plush_buf_free(&out);
    plush_diag_reset(&diag);
    assert_int_equal(plush_image_texture_info((const uint8_t *)"not a picture", 13, &w, &h, &jpeg, &diag),
                     PLUSH_E_FORMAT);
    /* a JPEG whose Huffman table (cut short: the rest reads as zeros) counts more than 256 codes, which the
     * stb_image Debian ships would write past its table (found by fuzz_texture) */
    static const uint8_t dht[] = {0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x49, 0x01, 0x00, 0x00, 0x75, 0x00,
                                  0x08, 0x31, 0x08, 0x07, 0x07, 0x07, 0x06, 0x06, 0x07, 0x07, 0x96, 0x08,
                                  0x08, 0x08, 0x11, 0x14, 0xff, 0xc4, 0x00, 0x4c, 0x00, 0x01, 0x01, 0x00,
                                  0x00, 0x00, 0x60, 0x60, 0x00, 0x00, 0x00, 0x00, 0xff, 0xd9};
    plush_diag_reset(&diag);
    assert_int_equal(plush_image_texture_info(dht, sizeof dht, &w, &h, &jpeg, &diag), PLUSH_E_FORMAT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_demo_frames_match), cmocka_unit_test(test_demo_structure),
        cmocka_unit_test(test_demo_fitted),
        cmocka_unit_test(test_demo_colours_linear),
        cmocka_unit_test(test_validator_demo),    cmocka_unit_test(test_validator_alicia),
        cmocka_unit_test(test_writer_refuses),    cmocka_unit_test(test_texture_to_png),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
