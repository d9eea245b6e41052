/* Sinks and the run loop (plush_scene_run, scene_sink.h): the registry, the order of calls, a failing
 * sink, the real exports on a small plush, resolved defaults, and plush_scene_seek against stepping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/scene_sink.h"
#include "plush/sys/core.h"
#include "plush/sys/render.h"
#include "export/sink_internal.h"
#include "support/cli_run.h"
#include "support/mesh_fixture.h"
#include "support/pmx_fixture.h"
#include "support/scene_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- a sink of the test's own: it records the calls ------------------------------------------ */

typedef struct probe_sink {
    plush_scene_sink base;
    int begins, ends;
    uint32_t frames[64];
    size_t frame_count;
    int64_t fail_at;          /* the frame whose call fails, -1: none */
} probe_sink;

static plush_status probe_begin(plush_scene_sink *s, const plush_scene *scene, plush_diag *diag)
{
    (void)scene, (void)diag;
    ((probe_sink *)s)->begins++;
    return PLUSH_OK;
}

static plush_status probe_frame(plush_scene_sink *s, const plush_scene *scene, uint32_t frame, plush_diag *diag)
{
    probe_sink *p = (probe_sink *)s;
    assert_non_null(plush_scene_positions(scene));
    if ((int64_t)frame == p->fail_at) {
        diag->file = "probe.out";
        return plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "disk full");
    }
    p->frames[p->frame_count++] = frame;
    return PLUSH_OK;
}

static plush_status probe_end(plush_scene_sink *s, const plush_scene *scene, plush_diag *diag)
{
    (void)scene, (void)diag;
    ((probe_sink *)s)->ends++;
    return PLUSH_OK;
}

static void probe_destroy(plush_scene_sink *s) { (void)s; }

static const plush_scene_sink_ops probe_ops = {
    .begin = probe_begin, .frame = probe_frame, .end = probe_end, .destroy = probe_destroy};

static void test_registry(void **state)
{
    (void)state;
    size_t n = 0;
    const plush_scene_export *const *all = plush_scene_exports(&n);
    assert_int_equal(n, 8);
    for (size_t i = 0; i < n; i++) {
        assert_ptr_equal(plush_scene_export_find(all[i]->name, strlen(all[i]->name)), all[i]);
        assert_non_null(all[i]->create);
        assert_non_null(all[i]->label);
        assert_non_null(all[i]->help);
    }
    assert_non_null(plush_scene_export_find("pmx+vmd,ply", 7));
    assert_non_null(plush_scene_export_find("preview", 7));
    assert_null(plush_scene_export_find("pmx", 3));
    assert_non_null(plush_scene_export_find("gltf", 4));
    assert_string_equal(plush_scene_default_exports(PLUSH_SCENE_PROXY), "pmx+vmd");
    assert_string_equal(plush_scene_default_exports(PLUSH_SCENE_BONES), "ply");
}

static void test_calls_in_order(void **state)
{
    (void)state;
    plush_pmx_model *m = mesh_fx_plush();
    plush_diag d = pmx_fx_diag();
    plush_scene *sc = NULL;
    pmx_fx_ok(plush_scene_create(&(plush_scene_desc){.model = m, .mode = PLUSH_SCENE_BONES}, &sc, &d), &d);
    probe_sink a = {.base.ops = &probe_ops, .fail_at = -1}, b = {.base.ops = &probe_ops, .fail_at = -1};
    plush_scene_sink *sinks[] = {&a.base, &b.base};
    plush_scene_run_result r;
    pmx_fx_ok(plush_scene_run(sc, &(plush_scene_run_options){.frames = 12, .sinks = sinks, .sink_count = 2}, &r, &d),
              &d);
    assert_int_equal(r.frames, 12);
    assert_int_equal(r.done, 12);
    assert_int_equal(r.stopped_at, -1);
    assert_null(r.failed_sink);
    for (probe_sink *p = &a; p; p = p == &a ? &b : NULL) {
        assert_int_equal(p->begins, 1);
        assert_int_equal(p->ends, 1);
        assert_int_equal(p->frame_count, 12);
        for (uint32_t f = 0; f < 12; f++)
            assert_int_equal(p->frames[f], f);
    }
    plush_scene_timing t;
    plush_scene_get_timing(sc, &t);
    assert_int_equal(t.steps, 12);
    assert_true(t.exports >= 0);
    plush_scene_destroy(sc);
    plush_pmx_free(m);
}

static void test_failing_sink_stops_the_run(void **state)
{
    (void)state;
    plush_pmx_model *m = mesh_fx_plush();
    plush_diag d = pmx_fx_diag();
    plush_scene *sc = NULL;
    pmx_fx_ok(plush_scene_create(&(plush_scene_desc){.model = m, .mode = PLUSH_SCENE_BONES}, &sc, &d), &d);
    probe_sink a = {.base.ops = &probe_ops, .fail_at = -1}, b = {.base.ops = &probe_ops, .fail_at = 3};
    plush_scene_sink *sinks[] = {&a.base, &b.base};
    plush_scene_run_result r;
    assert_int_equal(plush_scene_run(sc, &(plush_scene_run_options){.frames = 10, .sinks = sinks, .sink_count = 2},
                                     &r, &d),
                     PLUSH_E_IO);
    assert_string_equal(d.file, "probe.out");
    assert_int_equal(r.done, 3);
    assert_int_equal(r.stopped_at, 3);
    assert_ptr_equal(r.failed_sink, &b.base);
    assert_int_equal(a.frame_count, 4); /* the first sink had frame 3 already */
    assert_int_equal(a.ends + b.ends, 0);
    plush_scene_destroy(sc);
    plush_pmx_free(m);
}

static size_t count_files(const char *dir, const char *suffix)
{
    size_t n = 0;
    char path[700];
    for (uint32_t f = 0; f < 100; f++) {
        snprintf(path, sizeof path, "%.600s/frame_%05u.%.8s", dir, f, suffix);
        n += cli_exists(path);
    }
    return n;
}

static void test_real_exports(void **state)
{
    (void)state;
    plush_pmx_model *m = mesh_fx_plush();
    plush_vmd_motion *v = scene_fx_sway();
    plush_diag d = pmx_fx_diag();
    plush_scene *sc = NULL;
    pmx_fx_ok(plush_scene_create(&(plush_scene_desc){.model = m, .motion = v}, &sc, &d), &d);
    plush_scene_output out = {.dir = cli_tmp_dir(), .stem = "toy", .every = 4};
    const char *names[] = {"pmx+vmd", "ply", "obj", "im2"};
    plush_scene_sink *sinks[4] = {0};
    for (int i = 0; i < 4; i++)
        pmx_fx_ok(plush_scene_sink_create(plush_scene_export_find(names[i], strlen(names[i])), sc, &out, &sinks[i], &d),
                  &d);
    plush_scene_run_result r;
    pmx_fx_ok(plush_scene_run(sc, &(plush_scene_run_options){.sinks = sinks, .sink_count = 4}, &r, &d), &d);
    assert_int_equal(r.frames, 41); /* the motion's last key is frame 40 */
    char path[600], frames[600];
    snprintf(frames, sizeof frames, "%.580s/frames", cli_tmp_dir());
    assert_int_equal(count_files(frames, "ply"), 11); /* 0, 4, ..., 40 */
    assert_int_equal(count_files(frames, "obj"), 11);
    const char *files[] = {"toy_plush.pmx", "toy_plush.vmd", "toy_plush.im2"};
    for (int i = 0; i < 3; i++)
        assert_true(cli_exists(cli_tmp_path(path, sizeof path, files[i])));
    char text[2048];
    plush_scene_sink_describe(sinks[0], text, sizeof text);
    assert_non_null(strstr(text, "toy_plush.pmx\n"));
    for (int i = 0; i < 4; i++)
        plush_scene_sink_destroy(sinks[i]);
    plush_scene_destroy(sc);
    plush_vmd_free(v);
    plush_pmx_free(m);
}

/* A binary little-endian PLY as plush writes it: its vertices' positions (malloc'd) and counts. */
static float (*ply_positions(const char *path, size_t *vertices, size_t *faces))[3]
{
    size_t len = 0;
    char *text = cli_read_all(path, &len);
    assert_non_null(text);
    char *end = strstr(text, "end_header\n");
    assert_non_null(end);
    unsigned long nv = 0, nf = 0;
    const char *at = strstr(text, "element vertex ");
    assert_non_null(at);
    nv = strtoul(at + 15, NULL, 10);
    at = strstr(text, "element face ");
    assert_non_null(at);
    nf = strtoul(at + 13, NULL, 10);
    size_t stride = strstr(text, "property float nx") && strstr(text, "property float nx") < end ? 24 : 12;
    const char *data = end + sizeof "end_header\n" - 1;
    assert_true((size_t)(data - text) + nv * stride <= len);
    float(*p)[3] = malloc((nv ? nv : 1) * sizeof *p);
    assert_non_null(p);
    for (size_t v = 0; v < nv; v++)
        memcpy(p[v], data + v * stride, sizeof *p); /* the test machines are little-endian */
    free(text);
    *vertices = nv;
    *faces = nf;
    return p;
}

/* Mesh frames hold the baked PMX's vertices (the cage's left out, the rest in order) at the run's positions;
 * the cage goes to cage_NNNNN.ply with the proxy's nodes and triangles. */
static void test_mesh_frames_leave_the_cage_out(void **state)
{
    (void)state;
    plush_pmx_model *m = mesh_fx_plush();
    plush_vmd_motion *v = scene_fx_sway();
    plush_diag d = pmx_fx_diag();
    plush_scene *sc = NULL;
    pmx_fx_ok(plush_scene_create(&(plush_scene_desc){.model = m, .motion = v}, &sc, &d), &d);
    char dir[600], path[700];
    cli_tmp_path(dir, sizeof dir, "clean");
    assert_int_equal(mkdir(dir, 0777), 0);
    plush_scene_output out = {.dir = dir, .stem = "toy", .every = 8};
    const char *names[] = {"ply", "cage", "pmx+vmd"};
    plush_scene_sink *sinks[3] = {0};
    for (int i = 0; i < 3; i++)
        pmx_fx_ok(plush_scene_sink_create(plush_scene_export_find(names[i], strlen(names[i])), sc, &out, &sinks[i], &d),
                  &d);
    pmx_fx_ok(plush_scene_run(sc, &(plush_scene_run_options){.frames = 17, .sinks = sinks, .sink_count = 3}, NULL, &d),
              &d);

    /* the kept vertices, as the bake keeps them: all but those only soft-body materials draw */
    bool *soft = calloc(m->material_count, 1);
    uint8_t *use = calloc(m->vertex_count, 1);
    for (size_t s = 0; s < m->soft_body_count; s++)
        soft[m->soft_bodies[s].material] = true;
    size_t first = 0;
    for (size_t mat = 0; mat < m->material_count; mat++) {
        for (size_t i = first; i < first + (size_t)m->materials[mat].index_count; i++)
            use[m->indices[i]] |= soft[mat] ? 2 : 1;
        first += (size_t)m->materials[mat].index_count;
    }
    size_t kept = 0;
    for (size_t i = 0; i < m->vertex_count; i++)
        kept += use[i] != 2;
    assert_true(kept < m->vertex_count); /* the fixture has a cage */

    snprintf(path, sizeof path, "%s/toy_plush.pmx", dir);
    plush_pmx_model *baked = NULL;
    pmx_fx_ok(plush_pmx_read_file(path, NULL, &baked, &d), &d);
    assert_int_equal(baked->vertex_count, kept);

    size_t nv = 0, nf = 0;
    snprintf(path, sizeof path, "%s/frames/frame_00016.ply", dir);
    float(*got)[3] = ply_positions(path, &nv, &nf);
    assert_int_equal(nv, kept);
    const float(*pos)[3] = plush_scene_positions(sc); /* frame 16, the run's last */
    for (size_t i = 0, k = 0; i < m->vertex_count; i++)
        if (use[i] != 2) {
            assert_memory_equal(got[k], pos[i], sizeof *got);
            k++;
        }
    free(got);

    const plush_scene_binding *b = plush_scene_get_binding(sc);
    snprintf(path, sizeof path, "%s/frames/cage_00016.ply", dir);
    got = ply_positions(path, &nv, &nf);
    assert_int_equal(nv, b->proxy.node_count);
    assert_int_equal(nf, b->proxy.triangle_count);
    assert_memory_equal(got, plush_scene_proxy_nodes(sc), nv * sizeof *got);
    free(got);
    snprintf(path, sizeof path, "%s/frames/cage_00008.ply", dir);
    assert_true(cli_exists(path));
    snprintf(path, sizeof path, "%s/frames/cage_00004.ply", dir);
    assert_false(cli_exists(path)); /* every 8 */

    free(soft);
    free(use);
    plush_pmx_free(baked);
    for (int i = 0; i < 3; i++)
        plush_scene_sink_destroy(sinks[i]);
    plush_scene_destroy(sc);
    plush_vmd_free(v);
    plush_pmx_free(m);
}

static void test_proxy_exports_need_proxy_mode(void **state)
{
    (void)state;
    plush_pmx_model *m = mesh_fx_plush();
    plush_diag d = pmx_fx_diag();
    plush_scene *sc = NULL;
    pmx_fx_ok(plush_scene_create(&(plush_scene_desc){.model = m, .mode = PLUSH_SCENE_BONES}, &sc, &d), &d);
    plush_scene_output out = {.dir = cli_tmp_dir(), .stem = "toy"};
    plush_scene_sink *sink = NULL;
    assert_int_equal(plush_scene_sink_create(plush_scene_export_find("pmx+vmd", 7), sc, &out, &sink, &d),
                     PLUSH_E_ARGUMENT);
    assert_null(sink);
    assert_int_equal(plush_scene_sink_create(plush_scene_export_find("cage", 4), sc, &out, &sink, &d),
                     PLUSH_E_ARGUMENT);
    assert_null(sink);
    plush_scene_destroy(sc);
    plush_pmx_free(m);
}

static void test_resolved_defaults(void **state)
{
    (void)state;
    plush_pmx_model *m = mesh_fx_plush();
    plush_vmd_motion *v = scene_fx_sway();
    plush_diag d = pmx_fx_diag();
    plush_scene *sc = NULL;
    plush_scene_desc desc;
    uint32_t frames = 0;
    pmx_fx_ok(plush_scene_create(&(plush_scene_desc){.model = m, .mode = PLUSH_SCENE_BONES}, &sc, &d), &d);
    plush_scene_get_desc(sc, &desc);
    assert_true(desc.fps == 30.0f && desc.world.physics_hz == 60.0f && desc.world.max_substeps == PLUSH_WORLD_MAX_SUBSTEPS);
    pmx_fx_ok(plush_scene_default_frames(sc, &frames, &d), &d);
    assert_int_equal(frames, 300);
    plush_scene_destroy(sc);
    pmx_fx_ok(plush_scene_create(&(plush_scene_desc){.model = m, .motion = v, .mode = PLUSH_SCENE_BONES, .fps = 60},
                                 &sc, &d),
              &d);
    pmx_fx_ok(plush_scene_default_frames(sc, &frames, &d), &d);
    assert_int_equal(frames, 81);
    plush_scene_destroy(sc);
    /* a last key that would make more frames than a run may have is refused, not wrapped */
    v->bone_keys[2].frame = UINT32_MAX;
    pmx_fx_ok(plush_scene_create(&(plush_scene_desc){.model = m, .motion = v, .mode = PLUSH_SCENE_BONES}, &sc, &d),
              &d);
    assert_int_equal(plush_scene_default_frames(sc, &frames, &d), PLUSH_E_RANGE);
    plush_scene_destroy(sc);
    plush_vmd_free(v);
    plush_pmx_free(m);
}

/* Seeking to a fractional frame gives what stepping there frame by frame gives, bit for bit, and a
 * step outside 0..PLUSH_SCENE_MAX_FRAME is refused. */
static void test_seek_equals_stepping(void **state)
{
    (void)state;
    plush_pmx_model *m = mesh_fx_plush();
    plush_vmd_motion *v = scene_fx_sway();
    plush_diag d = pmx_fx_diag();
    plush_scene *a = NULL, *b = NULL;
    plush_scene_desc desc = {.model = m, .motion = v, .mode = PLUSH_SCENE_PLAIN};
    pmx_fx_ok(plush_scene_create(&desc, &a, &d), &d);
    pmx_fx_ok(plush_scene_create(&desc, &b, &d), &d);
    pmx_fx_ok(plush_scene_seek(a, 7.5, &d), &d);
    for (int f = 0; f <= 7; f++)
        pmx_fx_ok(plush_scene_step(b, f, &d), &d);
    pmx_fx_ok(plush_scene_step(b, 7.5, &d), &d);
    assert_memory_equal(plush_scene_positions(a), plush_scene_positions(b), m->vertex_count * sizeof(float[3]));
    assert_int_equal(plush_scene_step(a, -1, &d), PLUSH_E_ARGUMENT);
    plush_scene_destroy(a);
    plush_scene_destroy(b);
    plush_vmd_free(v);
    plush_pmx_free(m);
}

/* A run whose exports would not fit is refused before its first frame, with the figures. */
static void test_budget_refused(void **state)
{
    (void)state;
    plush_pmx_model *m = mesh_fx_plush();
    plush_diag d = pmx_fx_diag();
    plush_scene *sc = NULL;
    pmx_fx_ok(plush_scene_create(&(plush_scene_desc){.model = m}, &sc, &d), &d);
    plush_scene_output out = {.dir = cli_tmp_dir(), .stem = "budget"};
    plush_scene_sink *sinks[2] = {0};
    pmx_fx_ok(plush_scene_sink_create(plush_scene_export_find("pmx+vmd", 7), sc, &out, &sinks[0], &d), &d);
    pmx_fx_ok(plush_scene_sink_create(plush_scene_export_find("ply", 3), sc, &out, &sinks[1], &d), &d);
    plush_scene_run_result r;
    /* memory: ten million frames of keys */
    assert_int_equal(plush_scene_run(sc, &(plush_scene_run_options){.frames = 10000000, .sinks = sinks,
                                                                      .sink_count = 2, .memory_available = 1e9,
                                                                      .disk_available = 1e15},
                                     &r, &d),
                     PLUSH_E_BUDGET);
    assert_int_equal(r.done, 0);
    assert_non_null(strstr(d.message, "GB"));
    /* disk: 100 frames of PLY into 10 kB */
    d = pmx_fx_diag();
    assert_int_equal(plush_scene_run(sc, &(plush_scene_run_options){.frames = 100, .sinks = sinks, .sink_count = 2,
                                                                      .memory_available = 1e12,
                                                                      .disk_available = 1e4},
                                     &r, &d),
                     PLUSH_E_BUDGET);
    assert_int_equal(r.done, 0);
    for (int i = 0; i < 2; i++)
        plush_scene_sink_destroy(sinks[i]);
    plush_scene_destroy(sc);
    plush_pmx_free(m);
}

/* quality.csv counts in the budget (a row a frame, held until the end); the measure alone writes nothing. */
static void test_quality_file_in_budget(void **state)
{
    (void)state;
    plush_pmx_model *m = mesh_fx_plush();
    plush_diag d = pmx_fx_diag();
    plush_scene *sc = NULL;
    pmx_fx_ok(plush_scene_create(&(plush_scene_desc){.model = m}, &sc, &d), &d);
    plush_scene_output out = {.dir = cli_tmp_dir(), .stem = "budget"};
    plush_scene_sink *file = NULL, *measure = NULL;
    pmx_fx_ok(plush_scene_sink_create(plush_scene_export_find("quality", 7), sc, &out, &file, &d), &d);
    pmx_fx_ok(plush_scene_quality_sink_create(sc, &measure, &d), &d);
    plush_scene_run_result r;
    /* 1,000 frames of rows into 10 kB of disk */
    assert_int_equal(plush_scene_run(sc, &(plush_scene_run_options){.frames = 1000, .sinks = &file, .sink_count = 1,
                                                                      .memory_available = 1e12,
                                                                      .disk_available = 1e4},
                                     &r, &d),
                     PLUSH_E_BUDGET);
    assert_int_equal(r.done, 0);
    /* the measure without its file: two frames fit in no disk at all */
    d = pmx_fx_diag();
    pmx_fx_ok(plush_scene_run(sc, &(plush_scene_run_options){.frames = 2, .sinks = &measure, .sink_count = 1,
                                                               .memory_available = 1e12, .disk_available = 1},
                              &r, &d),
              &d);
    assert_int_equal(r.done, 2);
    plush_scene_sink_destroy(file);
    plush_scene_sink_destroy(measure);
    plush_scene_destroy(sc);
    plush_pmx_free(m);
}

/* ---- the textures a model names, read under a budget ------------------------------------------ */

/* The status the texture rules (scene/textures.h) give for a texture stored as `stored` beside
 * dir/model.pmx, read (plush__texture_open) and decoded (a store of its own); both must agree. On success
 * the texture is checked to be the 1x1 picture the test wrote (none for an empty path). */
static plush_status texture_status(const char *dir, const char *stored)
{
    char model[600];
    snprintf(model, sizeof model, "%s/model.pmx", dir);
    plush_str s = {.s = stored, .len = (uint32_t)strlen(stored)};
    plush__texture_file f;
    plush_diag d = {0};
    plush_status st = plush__texture_open(model, &s, &f, &d);
    if (st == PLUSH_OK && *stored)
        assert_int_equal(f.width, 1);
    else
        assert_null(f.bytes);
    plush__texture_close(&f);
    plush__texture_store *store = NULL;
    assert_int_equal(plush__texture_store_create(&store), PLUSH_OK);
    const plush__texture *tex = NULL;
    plush_diag d2 = {0};
    assert_int_equal(plush__texture_decode(store, model, &s, &tex, &d2), st);
    if (st == PLUSH_OK && *stored) {
        assert_int_equal(tex->texels.width, 1);
        assert_int_equal(tex->texels.rgba[0], 200);
    } else {
        assert_null(tex);
    }
    plush__texture_store_destroy(store);
    return st;
}

static void write_png(const char *path, int width)
{
    uint8_t *px = calloc((size_t)width * 4, 1);
    px[0] = 200, px[3] = 255;
    plush_buf png = {0};
    plush_diag d = {0};
    assert_int_equal(plush_image_encode_png_pixels(px, width, 1, 4, &png, &d), PLUSH_OK);
    cli_write_all(path, png.data, png.size);
    plush_buf_free(&png);
    free(px);
}

/* A texture is read when it lies inside the model's folder ('\' and '/' both separate, ".." that stays
 * inside is fine); an absolute path, a Windows drive path, ".." leading out and a symbolic link leading
 * out are refused without reading; a missing file, one over the size budget, a picture over the texel
 * budget and bytes that are no picture each have their status. */
static void test_texture_paths(void **state)
{
    (void)state;
    char dir[600], path[700];
    cli_tmp_path(dir, sizeof dir, "model");
    assert_int_equal(mkdir(dir, 0777), 0);
    snprintf(path, sizeof path, "%s/tex", dir);
    assert_int_equal(mkdir(path, 0777), 0);
    snprintf(path, sizeof path, "%s/tex/a.png", dir);
    write_png(path, 1);
    write_png(cli_tmp_path(path, sizeof path, "outside.png"), 1);
    snprintf(path, sizeof path, "%s/link.png", dir);
    assert_int_equal(symlink("../outside.png", path), 0);
    snprintf(path, sizeof path, "%s/wide.png", dir);
    write_png(path, PLUSH__TEXTURE_MAX_SIDE + 1);
    snprintf(path, sizeof path, "%s/junk.png", dir);
    cli_write_all(path, "\0\0\0\0\0\0\0\0", 8);
    snprintf(path, sizeof path, "%s/huge.png", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(ftruncate(fileno(f), (off_t)PLUSH__TEXTURE_MAX_BYTES + 1), 0); /* sparse: no disk used */
    fclose(f);

    assert_int_equal(texture_status(dir, "tex\\a.png"), PLUSH_OK);
    assert_int_equal(texture_status(dir, "tex/a.png"), PLUSH_OK);
    assert_int_equal(texture_status(dir, "tex/../tex/a.png"), PLUSH_OK);
    assert_int_equal(texture_status(dir, "../outside.png"), PLUSH_E_OUTSIDE);
    assert_int_equal(texture_status(dir, "..\\outside.png"), PLUSH_E_OUTSIDE);
    assert_int_equal(texture_status(dir, "link.png"), PLUSH_E_OUTSIDE);
    assert_int_equal(texture_status(dir, cli_tmp_path(path, sizeof path, "outside.png")), PLUSH_E_OUTSIDE);
    assert_int_equal(texture_status(dir, "C:\\outside.png"), PLUSH_E_OUTSIDE);
    assert_int_equal(texture_status(dir, "missing.png"), PLUSH_E_IO);
    assert_int_equal(texture_status(dir, "huge.png"), PLUSH_E_RANGE);
    assert_int_equal(texture_status(dir, "wide.png"), PLUSH_E_RANGE);
    assert_int_equal(texture_status(dir, "junk.png"), PLUSH_E_FORMAT);
    assert_int_equal(texture_status(dir, ""), PLUSH_OK); /* no texture named: nothing read */
    /* one run's store decodes a file once, whatever path names it */
    plush__texture_store *store = NULL;
    assert_int_equal(plush__texture_store_create(&store), PLUSH_OK);
    const char *names[] = {"tex/a.png", "tex\\a.png", "tex/../tex/a.png"};
    const plush__texture *first = NULL;
    snprintf(path, sizeof path, "%s/model.pmx", dir);
    for (int i = 0; i < 3; i++) {
        plush_str name = {.s = names[i], .len = (uint32_t)strlen(names[i])};
        const plush__texture *tex = NULL;
        plush_diag d = {0};
        assert_int_equal(plush__texture_decode(store, path, &name, &tex, &d), PLUSH_OK);
        assert_non_null(tex);
        if (i == 0)
            first = tex;
        assert_ptr_equal(tex, first);
    }
    plush__texture_store_destroy(store);
    /* a FIFO (opening it must not wait for a writer), a folder, a device through a link: no regular file */
    snprintf(path, sizeof path, "%s/fifo.png", dir);
    assert_int_equal(mkfifo(path, 0666), 0);
    assert_int_equal(texture_status(dir, "fifo.png"), PLUSH_E_IO);
    assert_int_equal(texture_status(dir, "tex"), PLUSH_E_IO);
    snprintf(path, sizeof path, "%s/zero.png", dir);
    assert_int_equal(symlink("/dev/zero", path), 0);
    assert_int_equal(texture_status(dir, "zero.png"), PLUSH_E_OUTSIDE);
}

static int setup(void **state)
{
    (void)state;
    return cli_tmp_setup("plush_sink");
}

static int teardown(void **state)
{
    (void)state;
    return cli_tmp_teardown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_calls_in_order),
        cmocka_unit_test(test_failing_sink_stops_the_run),
        cmocka_unit_test(test_real_exports),
        cmocka_unit_test(test_mesh_frames_leave_the_cage_out),
        cmocka_unit_test(test_proxy_exports_need_proxy_mode),
        cmocka_unit_test(test_resolved_defaults),
        cmocka_unit_test(test_seek_equals_stepping),
        cmocka_unit_test(test_budget_refused),
        cmocka_unit_test(test_quality_file_in_budget),
        cmocka_unit_test(test_texture_paths),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
