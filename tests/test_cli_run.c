/* plush run and plush demo, run as a user runs them: the demo bear through the main job, its baked PMX 2.0
 * + VMD replayed by plush pose (the way an MMD player skins) against the proxy-skinned mesh, bones mode on
 * a real model, determinism, and the errors a user can meet. The bear is made by `make` (proxies/). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/plush.h"
#include "support/cli_run.h"
#include "support/shared_data.h"

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
    return cli_tmp_setup("plush_run");
}

static int teardown(void **state)
{
    (void)state;
    return cli_tmp_teardown();
}

/* The "v x y z" lines of an OBJ file. (strtof, not sscanf: glibc's sscanf measures the whole rest of the
 * text on every call, which made this loop quadratic and the suite's slowest part.) */
static float (*obj_positions(const char *path, size_t *count))[3]
{
    size_t len = 0;
    char *text = cli_read_all(path, &len);
    assert_non_null(text);
    size_t cap = 1024, n = 0;
    float(*v)[3] = malloc(cap * sizeof *v);
    for (char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (line[0] != 'v' || line[1] != ' ')
            continue;
        if (n == cap)
            v = realloc(v, (cap *= 2) * sizeof *v);
        char *at = line + 2;
        for (int k = 0; k < 3; k++) {
            char *end;
            v[n][k] = strtof(at, &end);
            assert_true(end > at); /* three numbers on every vertex line */
            at = end;
        }
        n++;
    }
    free(text);
    *count = n;
    return v;
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
    float(*a)[3] = obj_positions(frame, &na), (*b)[3] = obj_positions(posed, &nb);
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

/* The largest distance between the run's OBJ frame f and the bake in out posed at f by plush pose; *rms
 * the root mean square distance. */
static double bake_miss(const char *out, int f, double *rms)
{
    char pmx[600], vmd[600], frame[600], posed[600], fs[16];
    snprintf(pmx, sizeof pmx, "%s/plush_bear_plush.pmx", out);
    snprintf(vmd, sizeof vmd, "%s/plush_bear_plush.vmd", out);
    snprintf(frame, sizeof frame, "%s/frames/frame_%05d.obj", out, f);
    snprintf(fs, sizeof fs, "%d", f);
    cli_tmp_path(posed, sizeof posed, "posed.obj");
    cli_result r;
    CLI_RUN(&r, "pose", pmx, "--motion", vmd, "--frame", fs, "--mesh", posed);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    size_t na = 0, nb = 0;
    float(*a)[3] = obj_positions(frame, &na), (*b)[3] = obj_positions(posed, &nb);
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
    const char *line = strstr(r.out, " keys (101000 recorded, within 0.0113 units)");
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

/* --bake-bones N fits N bones; --bake-tolerance 0 keys every frame of them. */
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
    assert_non_null(strstr(r.out, "(31000 recorded, a key every frame)"));
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

/* Two files byte for byte. */
static void expect_same_file(const char *a_path, const char *b_path)
{
    size_t la = 0, lb = 0;
    char *a = cli_read_all(a_path, &la), *b = cli_read_all(b_path, &lb);
    if (!a || !b)
        fail_msg("missing: %s", a ? b_path : a_path);
    assert_int_equal(la, lb);
    assert_memory_equal(a, b, la);
    free(a);
    free(b);
}

static void expect_same_outputs(const char *o1, const char *o2, const char *const *names, size_t count)
{
    char a[600], b[600];
    for (size_t i = 0; i < count; i++) {
        snprintf(a, sizeof a, "%s/%s", o1, names[i]);
        snprintf(b, sizeof b, "%s/%s", o2, names[i]);
        expect_same_file(a, b);
    }
}

static void test_deterministic(void **state)
{
    (void)state;
    char o1[512], o2[512];
    cli_tmp_path(o1, sizeof o1, "one");
    cli_tmp_path(o2, sizeof o2, "two");
    cli_result r;
    for (int k = 0; k < 2; k++) {
        CLI_RUN(&r, "run", BEAR, "--motion", BEAR_VMD, "--im2", BEAR_IM2, "--frames", "61", "--export", "pmx+vmd,ply",
                "--every", "30", "-o", k ? o2 : o1);
        cli_expect_code(&r, 0);
        cli_result_free(&r);
    }
    static const char *const names[] = {"plush_bear_plush.pmx", "plush_bear_plush.vmd", "frames/frame_00060.ply"};
    expect_same_outputs(o1, o2, names, sizeof names / sizeof *names);
}

/* "element NAME N" of a PLY header. */
static unsigned long ply_count(const char *path, const char *element)
{
    size_t len = 0;
    char *text = cli_read_all(path, &len);
    if (!text)
        fail_msg("missing: %s", path);
    char key[64];
    snprintf(key, sizeof key, "element %s ", element);
    const char *at = strstr(text, key), *end = strstr(text, "end_header");
    assert_true(at && end && at < end);
    unsigned long n = strtoul(at + strlen(key), NULL, 10);
    free(text);
    return n;
}

/* The bear's frames have its 59,929 vertices (the baked PMX's); the cage's 502 nodes go to their own files. */
static void test_frames_and_cage(void **state)
{
    (void)state;
    char out[512], p[600];
    cli_tmp_path(out, sizeof out, "cage");
    cli_result r;
    CLI_RUN(&r, "run", BEAR, "--motion", BEAR_VMD, "--frames", "3", "--every", "2", "--export", "ply,cage", "-o", out);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    snprintf(p, sizeof p, "%s/frames/frame_00002.ply", out);
    assert_int_equal(ply_count(p, "vertex"), 59929);
    snprintf(p, sizeof p, "%s/frames/cage_00002.ply", out);
    assert_int_equal(ply_count(p, "vertex"), 502);
    assert_int_equal(ply_count(p, "face"), 1000);
    snprintf(p, sizeof p, "%s/frames/cage_00000.ply", out);
    assert_true(cli_exists(p));
    snprintf(p, sizeof p, "%s/frames/cage_00001.ply", out);
    assert_false(cli_exists(p)); /* --every 2 */
    /* the cage is the proxy's: no cage in bones mode */
    CLI_RUN(&r, "run", BEAR, "--mode", "bones", "--export", "ply,cage", "-o", out);
    cli_expect_code(&r, 2);
    cli_result_free(&r);
}

/* The p99.9 strain of the summary's quality line (and whether the cage line follows it), or -1 without one. */
static double summary_p999(const cli_result *r, bool *cage)
{
    const char *line = r->out ? strstr(r->out, "\n  quality ") : NULL;
    const char *p = line ? strstr(line, "p99.9 ") : NULL;
    if (!p)
        return -1;
    const char *next = strchr(line + 1, '\n');
    *cage = next && strncmp(next + 1, "                  cage", 22) == 0;
    return strtod(p + 6, NULL);
}

/* plush run measures the surface quality whatever it exports: the worst frame's figures are in the summary
 * (the cage's in proxy mode), and quality.csv is written only when --export quality asks for it. */
static void test_quality_by_default(void **state)
{
    (void)state;
    char out[512], p[600];
    cli_tmp_path(out, sizeof out, "quality");
    snprintf(p, sizeof p, "%s/quality.csv", out);
    cli_result r;
    bool cage = false;
    CLI_RUN(&r, "run", BEAR, "--motion", BEAR_VMD, "--frames", "3", "-o", out);
    cli_expect_code(&r, 0);
    double proxy = summary_p999(&r, &cage);
    assert_true(proxy >= 1 && isfinite(proxy)); /* a figure, whatever the binding makes of it */
    assert_true(cage);
    assert_false(cli_exists(p));
    cli_result_free(&r);
    CLI_RUN(&r, "run", BEAR, "--mode", "bones", "--frames", "3", "--export", "quality", "-o", out);
    cli_expect_code(&r, 0);
    assert_true(summary_p999(&r, &cage) >= 1);
    assert_false(cage);
    cli_result_free(&r);
    size_t n = 0;
    char *csv = cli_read_all(p, &n);
    assert_non_null(csv);
    assert_int_equal(cli_count_lines(csv, n), 4);
    free(csv);
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

static plush_pmx_model *read_model(const char *path)
{
    plush_diag d = {0};
    plush_diag_reset(&d);
    plush_pmx_model *m = NULL;
    assert_int_equal(plush_pmx_read_file(path, NULL, &m, &d), PLUSH_OK);
    return m;
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
    snprintf(p, sizeof p, "%s/tex/a.png", dir);
    cli_write_all(p, "png", 3);
    snprintf(p, sizeof p, "%s/tex/b.bmp", dir);
    cli_write_all(p, "bmp", 3);
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
    assert_int_equal(len, 3);
    assert_memory_equal(bytes, "png", 3);
    free(bytes);
    CLI_RUN(&r, "run", model, "--copy-textures=yes", "-o", copied);
    cli_expect_code(&r, 2);
    cli_result_free(&r);
}

static void test_bones_mode_on_alicia(void **state)
{
    (void)state;
    char out[512], p[600];
    cli_tmp_path(out, sizeof out, "alicia");
    cli_result r;
    CLI_RUN(&r, "run", ALICIA, "--motion", MOTION_0046, "--mode", "bones", "--frames", "6", "--every", "5", "-o",
            out);
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.out, "mode bones"));
    cli_result_free(&r);
    snprintf(p, sizeof p, "%s/frames/frame_00005.ply", out);
    assert_true(cli_exists(p));
    snprintf(p, sizeof p, "%s/frames/frame_00004.ply", out);
    assert_false(cli_exists(p));
}

static void test_errors(void **state)
{
    (void)state;
    char out[512], junk[512], p[600];
    cli_tmp_path(out, sizeof out, "err");
    cli_result r;
    /* proxy mode needs a TriMesh soft body */
    CLI_RUN(&r, "run", ALICIA, "-o", out);
    cli_expect_one_error_line(&r);
    assert_non_null(strstr(r.err, "no TriMesh soft body"));
    assert_non_null(strstr(r.err, "plush attach"));
    cli_result_free(&r);
    assert_false(cli_exists(out)); /* not even an empty OUTDIR */
    /* a broken model */
    cli_tmp_path(junk, sizeof junk, "junk.pmx");
    cli_write_all(junk, "PMX \0\0\0@", 8);
    CLI_RUN(&r, "run", junk, "-o", out);
    cli_expect_one_error_line(&r);
    assert_non_null(strstr(r.err, "junk.pmx"));
    cli_result_free(&r);
    /* a broken motion */
    CLI_RUN(&r, "run", BEAR, "--motion", junk, "-o", out);
    cli_expect_one_error_line(&r);
    cli_result_free(&r);
    /* usage */
    CLI_RUN(&r, "run", BEAR);
    cli_expect_code(&r, 2);
    cli_result_free(&r);
    CLI_RUN(&r, "run", BEAR, "--mode", "bones", "--export", "pmx+vmd", "-o", out);
    cli_expect_code(&r, 2);
    cli_result_free(&r);
    CLI_RUN(&r, "run", BEAR, "--export", "fbx", "-o", out);
    cli_expect_code(&r, 2);
    cli_result_free(&r);
    CLI_RUN(&r, "run", BEAR, "--frames", "1.5", "-o", out);
    cli_expect_code(&r, 2);
    cli_result_free(&r);
    CLI_RUN(&r, "run", "--help");
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.out, "--export"));
    cli_result_free(&r);
    /* the output directory cannot be made */
    snprintf(p, sizeof p, "%s/no/such/dir", cli_tmp_dir());
    CLI_RUN(&r, "run", BEAR, "--frames", "2", "-o", p);
    cli_expect_one_error_line(&r);
    cli_result_free(&r);
}

/* ---- bad inputs: a clear message, exit 1 where the run cannot go on, no partial files ---------- */

/* Regular files under dir, recursively; *temporary is set when one is an atomic write's leftover. */
static size_t count_files(const char *dir, bool *temporary)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t n = 0;
    struct dirent *e;
    char path[1024];
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            n += count_files(path, temporary);
        } else {
            n++;
            *temporary |= strstr(e->d_name, ".tmp") != NULL;
        }
    }
    closedir(d);
    return n;
}

static void test_missing_motion(void **state)
{
    (void)state;
    char out[512], missing[512];
    cli_tmp_path(out, sizeof out, "out");
    cli_tmp_path(missing, sizeof missing, "no_such_motion.vmd");
    cli_result r;
    CLI_RUN(&r, "run", BEAR, "--motion", missing, "-o", out);
    cli_expect_one_error_line(&r);
    assert_non_null(strstr(r.err, "no_such_motion.vmd"));
    cli_result_free(&r);
    assert_false(cli_exists(out)); /* the inputs are read before anything is made */
}

/* A motion for some other model: keys on a bone and a morph the bear does not have. */
static void write_foreign_motion(const char *path)
{
    plush_vmd_motion *v = plush_vmd_create();
    plush_arena *a = plush_vmd_arena(v);
    static const char model[] = "よそのモデル", bone[] = "よその骨", morph[] = "まばたき";
    v->model_name = (plush_str){.s = model, .len = sizeof model - 1};
    v->bone_key_count = 2;
    v->bone_keys = plush_arena_array(a, 2, sizeof *v->bone_keys);
    for (int i = 0; i < 2; i++) {
        plush_vmd_bone_key *k = &v->bone_keys[i];
        k->name = (plush_str){.s = bone, .len = sizeof bone - 1};
        k->frame = (uint32_t)(30 * i);
        k->translation[0] = 5.0f * (float)i;
        k->rotation[3] = 1;
        for (int c = 0; c < 4; c++)
            k->interpolation[c] = k->interpolation[4 + c] = 20, k->interpolation[8 + c] = k->interpolation[12 + c] = 107;
    }
    v->morph_key_count = 1;
    v->morph_keys = plush_arena_array(a, 1, sizeof *v->morph_keys);
    v->morph_keys[0] = (plush_vmd_morph_key){.name = {.s = morph, .len = sizeof morph - 1}, .frame = 15, .weight = 1};
    plush_diag d = {0};
    plush_diag_reset(&d);
    assert_int_equal(plush_vmd_write_file(v, NULL, path, &d), PLUSH_OK);
    plush_vmd_free(v);
}

/* Every stderr line is a warning (no error). */
static void expect_only_warnings(const cli_result *r)
{
    for (const char *line = r->err; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        if (strncmp(line, "plush: warning: ", 16) != 0)
            fail_msg("not a warning: %s", line);
}

static void test_motion_for_another_model(void **state)
{
    (void)state;
    char foreign[512], a[512], b[512];
    cli_tmp_path(foreign, sizeof foreign, "foreign.vmd");
    cli_tmp_path(a, sizeof a, "foreign");
    cli_tmp_path(b, sizeof b, "still");
    write_foreign_motion(foreign);
    cli_result r;
    /* nothing matches: a warning naming what is missing, and the run goes on for the motion's length */
    CLI_RUN(&r, "run", BEAR, "--motion", foreign, "--im2", BEAR_IM2, "--export", "pmx+vmd,ply", "--every", "30", "-o",
            a);
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.out, "frames          31"));
    assert_non_null(strstr(r.err, "plush: warning: "));
    assert_non_null(strstr(r.err, "よその骨"));
    expect_only_warnings(&r);
    cli_result_free(&r);
    /* and the bear is as still as with no motion at all: the same files */
    CLI_RUN(&r, "run", BEAR, "--im2", BEAR_IM2, "--frames", "31", "--export", "pmx+vmd,ply", "--every", "30", "-o", b);
    cli_expect_code(&r, 0);
    assert_int_equal(r.err_len, 0);
    cli_result_free(&r);
    static const char *const names[] = {"plush_bear_plush.pmx", "frames/frame_00000.ply", "frames/frame_00030.ply"};
    expect_same_outputs(a, b, names, sizeof names / sizeof *names);
}

static void test_soft_body_without_material(void **state)
{
    (void)state;
    char model[512], out[512], bones_out[512];
    cli_tmp_path(model, sizeof model, "no_material.pmx");
    cli_tmp_path(out, sizeof out, "nm_out");
    cli_tmp_path(bones_out, sizeof bones_out, "nm_bones");
    /* the bear, its one soft body pointing at no material */
    plush_diag d = {0};
    plush_diag_reset(&d);
    plush_pmx_model *m = NULL;
    assert_int_equal(plush_pmx_read_file(BEAR, NULL, &m, &d), PLUSH_OK);
    assert_int_equal(m->soft_body_count, 1);
    m->soft_bodies[0].material = -1;
    assert_int_equal(plush_pmx_write_file(m, NULL, model, &d), PLUSH_OK);
    plush_pmx_free(m);

    /* proxy mode cannot go on: the soft body is skipped with a warning, then the one error line */
    cli_result r;
    CLI_RUN(&r, "run", model, "--frames", "3", "-o", out);
    cli_expect_code(&r, 1);
    const char *warning = strstr(r.err, "plush: warning: ");
    if (!warning || !strstr(warning, "soft body 0") || !strstr(warning, "skipped"))
        fail_msg("no warning naming the skipped soft body:\n%s", r.err);
    const char *last = r.err + r.err_len - 1; /* the last line is the error */
    while (last > r.err && last[-1] != '\n')
        last--;
    assert_memory_equal(last, "plush: ", 7);
    assert_null(strstr(last, "warning"));
    assert_non_null(strstr(last, "no_material.pmx"));
    assert_non_null(strstr(last, "no TriMesh soft body"));
    cli_result_free(&r);
    bool temporary = false;
    assert_int_equal(count_files(out, &temporary), 0);
    /* bones mode has no use for the soft body */
    CLI_RUN(&r, "run", model, "--mode", "bones", "--frames", "3", "-o", bones_out);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
}

static void test_output_cannot_be_written(void **state)
{
    (void)state;
    char file[512], p[600], out[512];
    cli_result r;
    bool temporary = false;
    /* OUTDIR below a regular file, and OUTDIR a regular file */
    cli_tmp_path(file, sizeof file, "a_file");
    cli_write_all(file, "x", 1);
    snprintf(p, sizeof p, "%s/out", file);
    CLI_RUN(&r, "run", BEAR, "--frames", "2", "-o", p);
    cli_expect_one_error_line(&r);
    assert_non_null(strstr(r.err, "a_file/out"));
    cli_result_free(&r);
    CLI_RUN(&r, "run", BEAR, "--frames", "2", "-o", file);
    cli_expect_one_error_line(&r);
    assert_non_null(strstr(r.err, "a_file"));
    cli_result_free(&r);
    size_t len = 0;
    char *kept = cli_read_all(file, &len);
    assert_int_equal(len, 1); /* untouched */
    free(kept);

    /* the baked motion's name taken by a directory: the run fails at the end, leaving no temporary file */
    cli_tmp_path(out, sizeof out, "blocked_vmd");
    snprintf(p, sizeof p, "%s/plush_bear_plush.vmd", out);
    assert_int_equal(mkdir(out, 0777), 0);
    assert_int_equal(mkdir(p, 0777), 0);
    CLI_RUN(&r, "run", BEAR, "--frames", "3", "-o", out);
    cli_expect_one_error_line(&r);
    assert_non_null(strstr(r.err, "plush_bear_plush.vmd")); /* the file at fault, not OUTDIR */
    cli_result_free(&r);
    count_files(out, &temporary);
    assert_false(temporary);
    snprintf(p, sizeof p, "%s/plush_bear_plush.pmx", out);
    assert_false(cli_exists(p)); /* both baked files or neither */

    /* frames/ is the run's own folder and is replaced as a whole (issue 15: no stale frame of an earlier
     * run survives), whatever was in it -- here a directory where a frame goes */
    cli_tmp_path(out, sizeof out, "blocked_frame");
    assert_int_equal(mkdir(out, 0777), 0);
    snprintf(p, sizeof p, "%s/frames", out);
    assert_int_equal(mkdir(p, 0777), 0);
    snprintf(p, sizeof p, "%s/frames/frame_00002.ply", out);
    assert_int_equal(mkdir(p, 0777), 0);
    snprintf(p, sizeof p, "%s/frames/frame_00009.ply", out);
    cli_write_all(p, "stale", 5);
    CLI_RUN(&r, "run", BEAR, "--frames", "5", "--export", "pmx+vmd,ply", "-o", out);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    count_files(out, &temporary);
    assert_false(temporary);
    struct stat fst;
    snprintf(p, sizeof p, "%s/frames/frame_00002.ply", out);
    assert_true(stat(p, &fst) == 0 && S_ISREG(fst.st_mode));
    snprintf(p, sizeof p, "%s/frames/frame_00009.ply", out);
    assert_false(cli_exists(p));

    /* a directory without write permission (root writes anyway) */
    if (geteuid() != 0) {
        cli_tmp_path(out, sizeof out, "read_only");
        assert_int_equal(mkdir(out, 0555), 0);
        CLI_RUN(&r, "run", BEAR, "--frames", "2", "--export", "pmx+vmd,ply", "-o", out);
        cli_expect_one_error_line(&r);
        cli_result_free(&r);
        assert_int_equal(count_files(out, &temporary), 0);
        chmod(out, 0755);
    }
}

static void test_demo(void **state)
{
    (void)state;
    char out[512], p[600];
    cli_tmp_path(out, sizeof out, "demo");
    cli_result r;
    CLI_RUN(&r, "demo", "-o", out);
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.out, "open the results"));
    cli_result_free(&r);
    const char *files[] = {"plush_bear.pmx", "plush_bear_shake.vmd", "plush_bear.im2", "plush_bear_plush.pmx",
                           "plush_bear_plush.vmd", "frames/frame_00000.ply", "frames/frame_00240.ply"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(p, sizeof p, "%s/%s", out, files[i]);
        assert_true(cli_exists(p));
    }
    /* the demo's inputs are the generator's files, byte for byte */
    snprintf(p, sizeof p, "%s/plush_bear.pmx", out);
    size_t l1 = 0, l2 = 0;
    char *a = cli_read_all(p, &l1), *b = cli_read_all(BEAR, &l2);
    assert_int_equal(l1, l2);
    assert_memory_equal(a, b, l1);
    free(a);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_bake_replays_as_the_proxy_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bake_fitted_within_tolerance, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bake_bones_asked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deterministic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_frames_and_cage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quality_by_default, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bake_textures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bones_mode_on_alicia, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_motion, setup, teardown),
        cmocka_unit_test_setup_teardown(test_motion_for_another_model, setup, teardown),
        cmocka_unit_test_setup_teardown(test_soft_body_without_material, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_cannot_be_written, setup, teardown),
        cmocka_unit_test_setup_teardown(test_demo, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
