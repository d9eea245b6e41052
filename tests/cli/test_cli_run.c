/* plush run and plush demo, run as a user runs them: the demo bear through the main job, bones mode on a
 * real model, determinism, and the errors a user can meet (the bake's PMX 2.0 + VMD: test_cli_bake). The
 * bear is made by `make` (proxies/). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/plush.h"
#include "plush/sys/core.h"
#include "support/cli_run.h"
#include "support/pmx_fixture.h"
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
        pmx_fx_linear_curves(k->interpolation);
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
    /* the summary says so in one line, since every figure of a model standing still reads perfect */
    assert_non_null(strstr(r.out, "\n  motion          nothing in it moves this model: its 2 bone and 1 morph keys "
                                  "are all for names this model lacks;"));
    cli_result_free(&r);
    /* a camera motion: no bone or morph key at all */
    char camera[512], c[512];
    cli_tmp_path(camera, sizeof camera, "camera.vmd");
    cli_tmp_path(c, sizeof c, "camera");
    plush_vmd_motion *cam = plush_vmd_create();
    cam->camera_keys = plush_arena_array(plush_vmd_arena(cam), 2, sizeof *cam->camera_keys);
    cam->camera_key_count = 2;
    cam->camera_keys[1].frame = 30;
    plush_diag d = pmx_fx_diag();
    assert_int_equal(plush_vmd_write_file(cam, NULL, camera, &d), PLUSH_OK);
    plush_vmd_free(cam);
    CLI_RUN(&r, "run", BEAR, "--motion", camera, "--im2", BEAR_IM2, "--frames", "2", "-o", c);
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.out, "\n  motion          nothing in it moves this model: it has no bone or morph key (2 "
                                  "camera keys);"));
    cli_result_free(&r);
    /* a motion that moves the bear says nothing of the kind */
    CLI_RUN(&r, "run", BEAR, "--motion", BEAR_VMD, "--im2", BEAR_IM2, "--frames", "2", "-o", c);
    cli_expect_code(&r, 0);
    assert_null(strstr(r.out, "\n  motion "));
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

    /* the baked motion's name taken by a directory: the run fails before its first frame, leaving no
     * temporary file */
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

    /* a frames/ of the user's (here a directory where a frame goes) is not plush's to replace: refused
     * before the first frame, and left as it was */
    cli_tmp_path(out, sizeof out, "blocked_frame");
    assert_int_equal(mkdir(out, 0777), 0);
    snprintf(p, sizeof p, "%s/frames", out);
    assert_int_equal(mkdir(p, 0777), 0);
    snprintf(p, sizeof p, "%s/frames/frame_00002.ply", out);
    assert_int_equal(mkdir(p, 0777), 0);
    CLI_RUN(&r, "run", BEAR, "--frames", "5", "--export", "pmx+vmd,ply", "-o", out);
    cli_expect_one_error_line(&r);
    assert_non_null(strstr(r.err, "frames"));
    cli_result_free(&r);
    struct stat fst;
    assert_true(stat(p, &fst) == 0 && S_ISDIR(fst.st_mode));
    /* plush's own frames/ is replaced as a whole: no stale frame of an earlier run survives */
    cli_tmp_path(out, sizeof out, "stale_frame");
    CLI_RUN(&r, "run", BEAR, "--frames", "10", "--every", "9", "--export", "ply", "-o", out);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    snprintf(p, sizeof p, "%s/frames/frame_00009.ply", out);
    assert_true(cli_exists(p));
    CLI_RUN(&r, "run", BEAR, "--frames", "5", "--export", "pmx+vmd,ply", "-o", out);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    count_files(out, &temporary);
    assert_false(temporary);
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
        cmocka_unit_test_setup_teardown(test_deterministic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_frames_and_cage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quality_by_default, setup, teardown),
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
