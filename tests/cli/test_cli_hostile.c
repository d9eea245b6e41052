/* Hostile models: a PMX and files beside it made by someone who wants to delete, leak, overwrite or lock
 * the user's files, or to exhaust the machine, run as a user runs them (plush run MODEL -o OUT
 * --copy-textures, --export gltf, preview). One test per attack; each builds its hostile files here, in a
 * temporary folder. The data-loss and leak tests check that the victim's files are untouched and that no
 * byte of the secret reaches OUTDIR. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/plush.h"
#include "plush/attach.h"
#include "support/cli_run.h"
#include "core/platform.h"
#include "support/toy_fixture.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const char secret[] = "SECRET-6f1d2c-do-not-leak";

/* The peak memory a bomb may cost a run. Under AddressSanitizer (make check) the figure is mostly its shadow
 * memory and quarantine, so there it is only shown. */
#if defined(__SANITIZE_ADDRESS__)
#define PEAK_LIMIT_KB (1L << 40)
#else
#define PEAK_LIMIT_KB (300L * 1024)
#endif

static int setup(void **state)
{
    (void)state;
    return cli_tmp_setup("plush_hostile");
}

static int teardown(void **state)
{
    (void)state;
    return cli_tmp_teardown();
}

/* ---- hostile files ------------------------------------------------------------------------------------ */

/* A BMP of width x height whose header is all there is (no pixels unless the picture is 1x1), followed by
 * payload: a picture to every header reader, a bomb when its header promises much. */
static void write_bmp(const char *path, uint32_t width, uint32_t height, const char *payload)
{
    size_t pn = payload ? strlen(payload) : 0, n = 54 + 4 + pn;
    uint8_t *b = calloc(n, 1);
    b[0] = 'B', b[1] = 'M';
    const uint32_t fields[][2] = {{2, (uint32_t)n}, {10, 54}, {14, 40}, {18, width}, {22, height}, {34, 4}};
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
        for (int k = 0; k < 4; k++)
            b[fields[i][0] + (uint32_t)k] = (uint8_t)(fields[i][1] >> (8 * k));
    b[26] = 1, b[28] = 24; /* planes, bits per pixel */
    if (pn)
        memcpy(b + 58, payload, pn);
    cli_write_all(path, b, n);
    free(b);
}

/* A 34-byte TGA (uncompressed truecolor) whose header promises width x height. */
static void write_tga_bomb(const char *path, uint16_t width, uint16_t height)
{
    uint8_t b[34] = {0};
    b[2] = 2; /* truecolor */
    b[12] = (uint8_t)width, b[13] = (uint8_t)(width >> 8);
    b[14] = (uint8_t)height, b[15] = (uint8_t)(height >> 8);
    b[16] = 24;
    cli_write_all(path, b, sizeof b);
}

/* dir/name (dir made when missing). */
static const char *in(char *buf, size_t size, const char *dir, const char *name)
{
    mkdir(dir, 0777);
    snprintf(buf, size, "%s/%s", dir, name);
    return buf;
}

static void write_model_as(const char *dir, const char *file, const char *const *textures, size_t count);

/* The toy (four materials, no soft body: plush run --cage makes one) written as dir/model.pmx with these
 * texture paths, material i using texture i % count. */
static void write_model(const char *dir, const char *const *textures, size_t count)
{
    write_model_as(dir, "model.pmx", textures, count);
}

/* The same as dir/file. */
static void write_model_as(const char *dir, const char *file, const char *const *textures, size_t count)
{
    plush_pmx_model *m = toy_fx_model();
    plush_str *t = calloc(count ? count : 1, sizeof *t);
    for (size_t i = 0; i < count; i++)
        t[i] = (plush_str){.s = textures[i], .len = (uint32_t)strlen(textures[i])};
    m->textures = t;
    m->texture_count = count;
    for (size_t i = 0; i < m->material_count; i++)
        m->materials[i].texture = count ? (int32_t)(i % count) : -1;
    char path[700];
    plush_diag d = {0};
    plush_diag_reset(&d);
    mkdir(dir, 0777);
    snprintf(path, sizeof path, "%s/%s", dir, file);
    assert_int_equal(plush_pmx_write_file(m, NULL, path, &d), PLUSH_OK);
    m->textures = NULL, m->texture_count = 0;
    free(t);
    plush_pmx_free(m);
}

/* plush run on dir/model.pmx with the cage made from the toy's body, 2 frames, into out. */
static void run_model(cli_result *r, const char *dir, const char *out, const char *exports, bool copy)
{
    char model[700];
    snprintf(model, sizeof model, "%s/model.pmx", dir);
    if (copy)
        CLI_RUN(r, "run", model, "--cage", "body", "--frames", "2", "--export", exports, "--copy-textures", "-o", out);
    else
        CLI_RUN(r, "run", model, "--cage", "body", "--frames", "2", "--export", exports, "-o", out);
}

/* Whether some file under dir (recursively, links not followed) holds the bytes of needle. */
static bool tree_holds(const char *dir, const char *needle)
{
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool found = false;
    for (struct dirent *e; !found && (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            found = tree_holds(path, needle);
        } else if (S_ISREG(st.st_mode)) {
            size_t len = 0;
            char *bytes = cli_read_all(path, &len);
            size_t k = strlen(needle);
            for (size_t i = 0; bytes && !found && i + k <= len; i++)
                found = memcmp(bytes + i, needle, k) == 0;
            free(bytes);
        }
    }
    closedir(d);
    return found;
}

static void expect_file(const char *path, const char *want)
{
    size_t len = 0;
    char *got = cli_read_all(path, &len);
    if (!got)
        fail_msg("%s is gone", path);
    assert_int_equal(len, strlen(want));
    assert_memory_equal(got, want, len);
    free(got);
}

static size_t count_entries(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    size_t n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d)
        closedir(d);
    return n;
}

/* ---- 1. a copied texture cannot make the commit delete the user's files ------------------------------ */

static void test_copy_does_not_delete(void **state)
{
    (void)state;
    char dir[600], out[600], p[800];
    cli_tmp_path(dir, sizeof dir, "m1");
    cli_tmp_path(out, sizeof out, "out1");
    /* the model ships a ".plush-set" listing the user's files -- and a picture to every header reader */
    write_bmp(in(p, sizeof p, dir, ".plush-set"), 1, 1, "\nvictim.txt\nthesis\n");
    const char *tex[] = {".plush-set", ".\\.plush-set", "FRAMES\\..\\.plush-set"};
    write_model(dir, tex, 3);
    /* the user's own files in OUT, beside an earlier run's outputs */
    cli_result r;
    run_model(&r, dir, out, "pmx+vmd", false);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    cli_write_all(in(p, sizeof p, out, "victim.txt"), "mine", 4);
    char thesis[700];
    snprintf(thesis, sizeof thesis, "%s/thesis", out);
    cli_write_all(in(p, sizeof p, thesis, "chapter1.tex"), "years of work", 13);

    for (int run = 0; run < 2; run++) {
        run_model(&r, dir, out, "pmx+vmd", true);
        cli_expect_code(&r, 0);
        assert_non_null(strstr(r.err, "plush output")); /* the name is refused, with a warning */
        cli_result_free(&r);
        expect_file(in(p, sizeof p, out, "victim.txt"), "mine");
        expect_file(in(p, sizeof p, thesis, "chapter1.tex"), "years of work");
        size_t len = 0;
        char *set = cli_read_all(in(p, sizeof p, out, ".plush-set"), &len);
        assert_non_null(set);
        assert_null(strstr(set, "victim")); /* plush's own list, not the model's */
        free(set);
    }
}

/* ---- 2. nothing outside the model's folder is read -------------------------------------------------- */

static void test_no_leak(void **state)
{
    (void)state;
    char root[600], dir[700], out[600], p[800], secret_file[800], link[800];
    cli_tmp_path(root, sizeof root, "r2");
    mkdir(root, 0777);
    mkdir(in(p, sizeof p, root, "models"), 0777);
    snprintf(dir, sizeof dir, "%s/models/m2", root);
    mkdir(dir, 0777);
    cli_tmp_path(out, sizeof out, "out2");
    /* the secret is a picture too, so only where it lies keeps it out */
    write_bmp(in(secret_file, sizeof secret_file, root, "secret.bmp"), 1, 1, secret);
    write_bmp(in(p, sizeof p, root, "models/other.bmp"), 1, 1, secret);
    assert_int_equal(symlink(secret_file, in(link, sizeof link, dir, "face.bmp")), 0);
    write_bmp(in(p, sizeof p, dir, "skin.bmp"), 1, 1, "fine");
    const char *tex[] = {"..\\..\\secret.bmp", secret_file, "../../../../../../../../etc/passwd", "face.bmp",
                         "../other.bmp", "skin.bmp"};
    write_model(dir, tex, 6);
    cli_result r;
    run_model(&r, dir, out, "pmx+vmd,gltf", true);
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.err, "outside the model's folder"));
    cli_result_free(&r);
    assert_false(tree_holds(out, secret));
    assert_false(tree_holds(out, "root:")); /* /etc/passwd */
    /* the texture inside is copied and embedded */
    assert_true(tree_holds(out, "fine"));
}

/* ---- 3. a copy never overwrites a file of the user's ---------------------------------------------- */

static void test_no_overwrite(void **state)
{
    (void)state;
    char dir[600], out[600], p[800];
    cli_tmp_path(dir, sizeof dir, "m3");
    cli_tmp_path(out, sizeof out, "out3");
    write_bmp(in(p, sizeof p, dir, "notes.txt"), 1, 1, "the model's");
    mkdir(in(p, sizeof p, dir, "other"), 0777);
    const char *tex[] = {"notes.txt"};
    write_model(dir, tex, 1);
    cli_write_all(in(p, sizeof p, out, "notes.txt"), "the user's notes", 16);
    cli_result r;
    run_model(&r, dir, out, "pmx+vmd", true);
    cli_expect_one_error_line(&r);
    assert_non_null(strstr(r.err, "notes.txt"));
    cli_result_free(&r);
    expect_file(in(p, sizeof p, out, "notes.txt"), "the user's notes");
    /* "..\other\notes.txt" from a folder below: outside the model's folder, not read */
    char sub[700];
    snprintf(sub, sizeof sub, "%s/other", dir);
    const char *up[] = {"..\\notes.txt"};
    write_model(sub, up, 1);
    run_model(&r, sub, out, "pmx+vmd", true);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    expect_file(in(p, sizeof p, out, "notes.txt"), "the user's notes");
}

/* ---- 4. copies come with the set or not at all, and never into plush's own folders --------------------- */

static void test_one_set(void **state)
{
    (void)state;
    char dir[600], out[600], p[800];
    cli_tmp_path(dir, sizeof dir, "m4");
    cli_tmp_path(out, sizeof out, "out4");
    char frames[700];
    mkdir(dir, 0777);
    snprintf(frames, sizeof frames, "%s/frames", dir);
    write_bmp(in(p, sizeof p, frames, "skin.png"), 1, 1, "skin");
    write_bmp(in(p, sizeof p, dir, "a.bmp"), 1, 1, "first");
    write_bmp(in(p, sizeof p, dir, "b.bmp"), 1, 1, "second");
    /* a failed run (the second copy would replace the user's b.bmp) leaves no copy of the first */
    const char *tex[] = {"a.bmp", "b.bmp"};
    write_model(dir, tex, 2);
    cli_write_all(in(p, sizeof p, out, "b.bmp"), "user", 4);
    cli_result r;
    run_model(&r, dir, out, "pmx+vmd", true);
    cli_expect_code(&r, 1);
    cli_result_free(&r);
    assert_false(cli_exists(in(p, sizeof p, out, "a.bmp")));
    assert_false(cli_exists(in(p, sizeof p, out, "model_plush.pmx")));
    assert_int_equal(count_entries(out, ".plush"), 0);
    expect_file(in(p, sizeof p, out, "b.bmp"), "user");
    /* frames\skin.png is not copied into frames/, which the mesh export fills; the bake names the original */
    const char *tex2[] = {"frames\\skin.png"};
    write_model(dir, tex2, 1);
    run_model(&r, dir, out, "pmx+vmd,obj", true);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    assert_false(cli_exists(in(p, sizeof p, out, "frames/skin.png")));
    plush_pmx_model *baked = NULL;
    plush_diag d = {0};
    plush_diag_reset(&d);
    assert_int_equal(plush_pmx_read_file(in(p, sizeof p, out, "model_plush.pmx"), NULL, &baked, &d), PLUSH_OK);
    char named[1200];
    snprintf(named, sizeof named, "%s/%s", out, baked->textures[0].s);
    for (char *c = named; *c; c++)
        if (*c == '\\')
            *c = '/';
    assert_true(cli_exists(named));
    plush_pmx_free(baked);
}

/* ---- 5. a texture named as the lock cannot lock OUTDIR ---------------------------------------------- */

static void test_lock_name(void **state)
{
    (void)state;
    char dir[600], out[600], p[800];
    cli_tmp_path(dir, sizeof dir, "m5");
    cli_tmp_path(out, sizeof out, "out5");
    cli_write_all(in(p, sizeof p, dir, ".plush.lock"), "1\n", 2);
    write_bmp(in(p, sizeof p, dir, ".plush.lock.bmp"), 1, 1, "\n1\n");
    const char *tex[] = {".plush.lock", ".PLUSH.LOCK.bmp"};
    write_model(dir, tex, 2);
    for (int run = 0; run < 2; run++) {
        cli_result r;
        run_model(&r, dir, out, "pmx+vmd", true);
        cli_expect_code(&r, 0);
        cli_result_free(&r);
        assert_false(cli_exists(in(p, sizeof p, out, ".plush.lock")));
    }
}

/* ---- 6. decompression bombs and huge files ---------------------------------------------------------- */

static void test_bombs(void **state)
{
    (void)state;
    char dir[600], out[600], p[800];
    cli_tmp_path(dir, sizeof dir, "m6");
    cli_tmp_path(out, sizeof out, "out6");
    write_bmp(in(p, sizeof p, dir, "bomb.bmp"), 23000, 23000, NULL); /* 58 bytes promising 1.5 GB */
    write_tga_bomb(in(p, sizeof p, dir, "bomb.tga"), 23000, 23000);
    FILE *f = fopen(in(p, sizeof p, dir, "huge.png"), "wb");
    assert_non_null(f);
    assert_int_equal(ftruncate(fileno(f), (off_t)2500 * 1000 * 1000), 0); /* sparse: no disk used */
    fclose(f);
    write_bmp(in(p, sizeof p, dir, "wide.bmp"), 8193, 1, NULL);
    write_tga_bomb(in(p, sizeof p, dir, "small_bomb.tga"), 8000, 8000); /* within the side, not its bytes */
    /* the toy's four materials: one texture each */
    const char *tex[] = {"bomb.bmp", "small_bomb.tga", "huge.png", "wide.bmp", "bomb.tga"};
    write_model(dir, tex, 4);
    cli_result r;
    run_model(&r, dir, out, "gltf,preview", false);
    cli_expect_code(&r, 0);
    print_message("bombs: glTF export peak %ld MB, %.2f s\n", r.peak_kb / 1024, r.seconds);
    assert_true(r.peak_kb < PEAK_LIMIT_KB);
    assert_non_null(strstr(r.err, "23000x23000 texels promised by 58 bytes"));
    assert_non_null(strstr(r.err, "8000x8000 texels promised by 34 bytes"));
    assert_non_null(strstr(r.err, "over 64 MiB"));
    assert_non_null(strstr(r.err, "over the 8192x8192 limit"));
    cli_result_free(&r);
    /* the same with the copies: nothing of the bombs is copied */
    run_model(&r, dir, out, "pmx+vmd", true);
    cli_expect_code(&r, 0);
    assert_true(r.peak_kb < PEAK_LIMIT_KB);
    cli_result_free(&r);
    assert_false(cli_exists(in(p, sizeof p, out, "bomb.bmp")));
    assert_false(cli_exists(in(p, sizeof p, out, "huge.png")));
}

/* ---- 7. attach on a dense cage ------------------------------------------------------------------------- */

/* The nearest-vertex searches go through a grid (their answers are checked against scans in
 * test_core_geom, their speed in make bench); here a cage of 64 x 64 quads around the toy attaches. */
static void test_attach_dense_cage(void **state)
{
    (void)state;
    char dir[600], obj[700], out[700];
    cli_tmp_path(dir, sizeof dir, "m7");
    write_model(dir, NULL, 0);
    snprintf(obj, sizeof obj, "%s/cage.obj", dir);
    FILE *f = fopen(obj, "w");
    assert_non_null(f);
    enum { N = 64 };
    for (int i = 0; i <= N; i++)
        for (int j = 0; j <= N; j++) {
            double a = 6.283185307 * i / N, y = 5.0 + 3.5 * j / N;
            fprintf(f, "v %.6f %.6f %.6f\n", 2.0 * cos(a), y, 2.0 * sin(a));
        }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            int a = i * (N + 1) + j + 1, b = ((i + 1) % (N + 1)) * (N + 1) + j + 1;
            fprintf(f, "f %d %d %d\nf %d %d %d\n", a, b, b + 1, a, b + 1, a + 1);
        }
    fclose(f);
    char model[700];
    snprintf(model, sizeof model, "%s/model.pmx", dir);
    snprintf(out, sizeof out, "%s/attached.pmx", dir);
    cli_result r;
    CLI_RUN(&r, "attach", model, "--proxy", obj, "--allow-free", "-o", out);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    assert_true(cli_exists(out));
}

/* ---- 8. output paths ffmpeg could read as options or protocols ---------------------------------------- */

static void test_paths_not_options(void **state)
{
    (void)state;
    char dir[600], cwd[600];
    cli_tmp_path(dir, sizeof dir, "m8");
    write_model(dir, NULL, 0);
    char model[700];
    snprintf(model, sizeof model, "%s/model.pmx", dir);
    assert_non_null(getcwd(cwd, sizeof cwd));
    char bin[700];
    const char *b = getenv("PLUSH_BIN");
    snprintf(bin, sizeof bin, "%s/%s", cwd, b && *b ? b : "build/plush");
    if (b && b[0] == '/')
        snprintf(bin, sizeof bin, "%s", b);
    setenv("PLUSH_BIN", bin, 1);
    assert_int_equal(chdir(dir), 0);
    /* the first, a plain name, tells whether ffmpeg and Embree are here at all (else a preview is only a
     * warning); then every name must give its preview */
    const char *names[] = {"plain", "-dash", "pipe:x", "file:x"};
    bool can = true;
    for (int i = 0; i < 4 && can; i++) {
        cli_result r;
        CLI_RUN(&r, "run", "model.pmx", "--mode", "bones", "--frames", "3", "--export", "preview", "-o", names[i]);
        cli_expect_code(&r, 0);
        cli_result_free(&r);
        char p[700];
        snprintf(p, sizeof p, "%s/preview.mp4", names[i]);
        if (i == 0)
            can = cli_exists(p);
        else if (!cli_exists(p))
            fail_msg("-o %s: no preview.mp4", names[i]);
    }
    if (!can)
        print_message("no ffmpeg or no Embree: the output names were not tried\n");
    assert_int_equal(chdir(cwd), 0);
    if (b)
        setenv("PLUSH_BIN", b, 1);
    else
        unsetenv("PLUSH_BIN");
}

/* ---- 10. a planted .plush-set cannot make a run remove the model or its folder -------------------- */

/* The whole file, or fails the test. */
static char *slurp(const char *path, size_t *len)
{
    char *bytes = cli_read_all(path, len);
    if (!bytes)
        fail_msg("%s is gone", path);
    return bytes;
}

static void expect_same(const char *path, const char *bytes, size_t len)
{
    size_t now_len = 0;
    char *now = slurp(path, &now_len);
    assert_int_equal(now_len, len);
    assert_memory_equal(now, bytes, len);
    free(now);
}

static void test_planted_set(void **state)
{
    (void)state;
    char dir[600], p[800], model[700], out[700];
    cli_tmp_path(dir, sizeof dir, "m10");
    mkdir(dir, 0777);
    char tex_dir[700];
    snprintf(tex_dir, sizeof tex_dir, "%s/tex", dir);
    write_bmp(in(p, sizeof p, tex_dir, "fur.png"), 1, 1, "fur");
    const char *tex[] = {"tex\\fur.png"};
    write_model_as(dir, "toy.pmx", tex, 1);
    cli_write_all(in(p, sizeof p, dir, "notes"), "the user's notes", 16);
    snprintf(model, sizeof model, "%s/toy.pmx", dir);
    snprintf(out, sizeof out, "%s/.", dir); /* -o . beside the model */
    size_t model_len, fur_len;
    char *model_bytes = slurp(model, &model_len), *fur = slurp(in(p, sizeof p, tex_dir, "fur.png"), &fur_len);
    /* the list in the format before, then one in today's format whose records are made up */
    const char *const planted[] = {"toy.pmx\ntex\nnotes\n",
                                   "plush-set 2\nf 16 1700000000.000000000 00000000deadbeef notes\n"
                                   "d 0 0.000000000 00000000deadbeef tex\nf 9 0.000000000 0000000000000001 toy.pmx\n"};
    for (int k = 0; k < 2; k++) {
        cli_write_all(in(p, sizeof p, dir, ".plush-set"), planted[k], strlen(planted[k]));
        cli_result r;
        CLI_RUN(&r, "run", model, "--cage", "body:100", "--frames", "3", "-o", out);
        cli_expect_code(&r, 0);
        assert_non_null(strstr(r.err, "alone")); /* each listed entry left alone with a warning */
        cli_result_free(&r);
        expect_same(model, model_bytes, model_len);
        expect_same(in(p, sizeof p, tex_dir, "fur.png"), fur, fur_len);
        expect_file(in(p, sizeof p, dir, "notes"), "the user's notes");
        assert_true(cli_exists(in(p, sizeof p, dir, "toy_plush.pmx")));
        /* a second run replaces its own outputs and still leaves the rest */
        CLI_RUN(&r, "run", model, "--cage", "body:100", "--frames", "3", "-o", out);
        cli_expect_code(&r, 0);
        cli_result_free(&r);
        expect_same(model, model_bytes, model_len);
        expect_same(in(p, sizeof p, tex_dir, "fur.png"), fur, fur_len);
        expect_file(in(p, sizeof p, dir, "notes"), "the user's notes");
        remove(in(p, sizeof p, dir, "toy_plush.pmx"));
        remove(in(p, sizeof p, dir, "toy_plush.vmd"));
    }
    free(model_bytes);
    free(fur);
}

/* ---- 11. files of the user's where outputs go are refused before the first frame ---------------------- */

static void test_user_files_refused(void **state)
{
    (void)state;
    char dir[600], out[600], p[800], model[700];
    cli_tmp_path(dir, sizeof dir, "m11");
    write_model_as(dir, "toy.pmx", NULL, 0);
    snprintf(model, sizeof model, "%s/toy.pmx", dir);
    cli_tmp_path(out, sizeof out, "out11");
    char frames[700];
    snprintf(frames, sizeof frames, "%s/frames", out);
    mkdir(out, 0777);
    cli_write_all(in(p, sizeof p, frames, "mine.txt"), "mine", 4);
    cli_write_all(in(p, sizeof p, out, "toy_plush.pmx"), "my own bake", 11);
    cli_write_all(in(p, sizeof p, out, "quality.csv"), "my figures", 10);
    /* a million frames: a refusal after the first frame would not come back within the test's time */
    const char *const exports[] = {"obj", "pmx+vmd", "quality"};
    const char *const named[] = {"frames", "toy_plush.pmx", "quality.csv"};
    for (int k = 0; k < 3; k++) {
        cli_result r;
        CLI_RUN(&r, "run", model, "--cage", "body", "--frames", k == 0 ? "3" : "1000000", "--export", exports[k],
                "-o", out);
        cli_expect_one_error_line(&r);
        assert_non_null(strstr(r.err, named[k]));
        assert_int_equal(r.out_len, 0); /* no summary: no frame was run */
        cli_result_free(&r);
        expect_file(in(p, sizeof p, frames, "mine.txt"), "mine");
        assert_int_equal(count_entries(frames, ""), 3); /* ".", ".." and mine.txt */
        expect_file(in(p, sizeof p, out, "toy_plush.pmx"), "my own bake");
        expect_file(in(p, sizeof p, out, "quality.csv"), "my figures");
        assert_int_equal(count_entries(out, ".plush"), 0);
    }
}

/* ---- 12. a second signal during the cleanup cannot cut it short -------------------------------------- */

/* Starts plush with args (NULL-terminated) as the leader of a process group of its own, output to
 * /dev/null; returns its pid (= the group's id). */
static pid_t start_plush_group(const char *const *args)
{
    const char *b = getenv("PLUSH_BIN");
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)(b && *b ? b : "build/plush");
    for (; *args && argc < 31; args++)
        argv[argc++] = (char *)*args;
    argv[argc] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    pid_t pid;
    assert_int_equal(posix_spawn(&pid, argv[0], &fa, &attr, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    return pid;
}

static void wait_for(const char *path);

/* Two SIGTERMs in quick succession -- both to the pid, or the pid and then its process group (a terminal's
 * Ctrl-C after a kill, a service manager's stop) -- end the run with nothing of it left: its OUTDIR, staging
 * folder and lock are gone, ten times out of ten each way. */
static void test_two_signals(void **state)
{
    (void)state;
    char dir[600], out[600], model[700], lock[700];
    cli_tmp_path(dir, sizeof dir, "m12");
    write_model(dir, NULL, 0);
    snprintf(model, sizeof model, "%s/model.pmx", dir);
    cli_tmp_path(out, sizeof out, "out12");
    snprintf(lock, sizeof lock, "%s/.plush.lock", out);
    const char *long_run[] = {"run", model, "--cage", "body", "--frames", "1000000", "--export", "quality", "-o", out,
                              NULL};
    for (int way = 0; way < 2; way++)
        for (int k = 0; k < 10; k++) {
            pid_t pid = start_plush_group(long_run);
            wait_for(lock);
            /* the staging folder made too, so the cleanup has a tree to remove */
            for (int i = 0; i < 24000 && count_entries(out, ".plush-tmp") == 0; i++)
                nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
            kill(pid, SIGTERM);
            kill(way == 0 ? pid : -pid, SIGTERM);
            int status = 0;
            assert_int_equal(waitpid(pid, &status, 0), pid);
            assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
            if (cli_exists(out))
                fail_msg("way %d, run %d: %s left behind (%zu staging folders, lock %s)", way, k, out,
                         count_entries(out, ".plush-tmp"), cli_exists(lock) ? "left" : "gone");
        }
}

/* ---- 13. names from a file cannot drive the terminal ------------------------------------------------- */

/* Whether s[i..] starts a raw control a terminal acts on: C0 but the line's own newline, DEL, C1 (C2 80..9F),
 * a bidirectional control or mark, or a line or paragraph separator (U+061C, U+200E, U+200F,
 * U+2028..U+202E, U+2066..U+2069). */
static bool raw_control(const unsigned char *s, size_t len, size_t i)
{
    unsigned char c = s[i];
    if ((c < 0x20 && c != '\n') || c == 0x7f)
        return true;
    if (c == 0xc2 && i + 1 < len && s[i + 1] >= 0x80 && s[i + 1] <= 0x9f)
        return true;
    if (c == 0xd8 && i + 1 < len && s[i + 1] == 0x9c)
        return true;
    if (c == 0xe2 && i + 2 < len) {
        unsigned a = s[i + 1], b = s[i + 2];
        return (a == 0x80 && (b == 0x8e || b == 0x8f || (b >= 0xa8 && b <= 0xae))) ||
               (a == 0x81 && b >= 0xa6 && b <= 0xa9);
    }
    return false;
}

static void expect_no_raw_controls(const char *what, const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < len; i++)
        if (raw_control(s, len, i))
            fail_msg("%s: a raw control (byte 0x%02x) at byte %zu of %zu: ...%.40s", what, s[i], i, len,
                     text + (i > 20 ? i - 20 : 0));
}

/* Every kind of control in one name: ESC (a colour), U+202E (right-to-left override), CR, BEL, C1 CSI,
 * U+2066 (left-to-right isolate), DEL, a newline; unique by base and the count. A name the baked VMD
 * carries (the model's, a bone's, a morph's) must fit Shift-JIS, which has no C1 or bidirectional control:
 * sjis keeps to the ASCII ones there. */
static plush_str hostile_name(char (*pool)[96], size_t *used, const char *base, bool sjis)
{
    char *s = pool[*used];
    if (sjis)
        snprintf(s, 96, "\x1b[31m%s\r\x07\x1b]0;x\x7f%zu\n", base, *used);
    else
        snprintf(s, 96, "\x1b[31m\xe2\x80\xae%s\r\x07\xc2\x9b\xe2\x81\xa6\x7f%zu\n", base, *used);
    (*used)++;
    return (plush_str){.s = s, .len = (uint32_t)strlen(s)};
}

/* plush run (with a cage made, every export that writes names), plush proxy, plush attach and plush info on
 * a model whose every name is hostile, in a folder and into an OUTDIR named so too: no raw control reaches
 * stdout or stderr, and the names are there, escaped. */
static void test_hostile_names_escaped(void **state)
{
    (void)state;
    plush_pmx_model *m = toy_fx_model();
    static char pool[256][96];
    size_t used = 0;
    m->name = hostile_name(pool, &used, "model", true);
    m->name_en = hostile_name(pool, &used, "model en", false);
    m->comment = hostile_name(pool, &used, "comment", false);
    m->comment_en = hostile_name(pool, &used, "comment en", false);
    for (size_t i = 0; i < m->material_count; i++) {
        m->materials[i].name = hostile_name(pool, &used, "material", false);
        m->materials[i].name_en = hostile_name(pool, &used, "material en", false);
    }
    for (size_t i = 0; i < m->bone_count; i++) {
        m->bones[i].name = hostile_name(pool, &used, "bone", true);
        m->bones[i].name_en = hostile_name(pool, &used, "bone en", false);
    }
    for (size_t i = 0; i < m->morph_count; i++) {
        m->morphs[i].name = hostile_name(pool, &used, "morph", true);
        m->morphs[i].name_en = hostile_name(pool, &used, "morph en", false);
    }
    for (size_t i = 0; i < m->display_frame_count; i++) {
        m->display_frames[i].name = hostile_name(pool, &used, "frame", false);
        m->display_frames[i].name_en = hostile_name(pool, &used, "frame en", false);
    }
    for (size_t i = 0; i < m->rigid_body_count; i++) {
        m->rigid_bodies[i].name = hostile_name(pool, &used, "body", false);
        m->rigid_bodies[i].name_en = hostile_name(pool, &used, "body en", false);
    }
    for (size_t i = 0; i < m->joint_count; i++) {
        m->joints[i].name = hostile_name(pool, &used, "joint", false);
        m->joints[i].name_en = hostile_name(pool, &used, "joint en", false);
    }
    char dir[600], model[800], out[700], obj[800], soft[800];
    cli_tmp_path(dir, sizeof dir, "m13");
    mkdir(dir, 0777);
    snprintf(model, sizeof model, "%s/t\x1b[2Jo\xe2\x80\xaey.pmx", dir);
    plush_diag d = {0};
    plush_diag_reset(&d);
    assert_int_equal(plush_pmx_write_file(m, NULL, model, &d), PLUSH_OK);
    plush_pmx_free(m);
    cli_tmp_path(out, sizeof out, "o\x1b]0;x\x07ut\xe2\x80\xae");
    snprintf(obj, sizeof obj, "%s/c\x1b[0m\xe2\x81\xa6.obj", dir);
    snprintf(soft, sizeof soft, "%s/s\xc2\x9b\xe2\x80\xae.pmx", dir);

    cli_result r[4];
    /* material 1, the body, by its number: every name of the model is hostile (not im2: its material names
     * are Shift-JIS) */
    CLI_RUN(&r[0], "run", model, "--cage", "1", "--frames", "3", "--export", "pmx+vmd,gltf,obj,cage,quality", "-o",
            out);
    CLI_RUN(&r[1], "proxy", model, "--materials", "1", "--triangles", "100", "-o", obj);
    CLI_RUN(&r[2], "attach", model, "--proxy", obj, "--materials", "1", "-o", soft);
    CLI_RUN(&r[3], "info", model);
    const char *what[] = {"run", "proxy", "attach", "info"};
    for (int k = 0; k < 4; k++) {
        cli_expect_code(&r[k], 0);
        expect_no_raw_controls(what[k], r[k].out, r[k].out_len);
        expect_no_raw_controls(what[k], r[k].err, r[k].err_len);
        /* the names are shown, escaped (attach names bones only: no bidirectional control there) */
        if (!strstr(r[k].out, "\\x1b[31m") || (k != 2 && !strstr(r[k].out, "\\u202e")))
            fail_msg("%s shows no name escaped:\n%s", what[k], r[k].out);
        cli_result_free(&r[k]);
    }
}

/* ---- 9. the small ones ------------------------------------------------------------------------------ */

/* Starts plush with args (NULL-terminated), output to /dev/null; returns its pid. */
static pid_t start_plush(const char *const *args)
{
    const char *b = getenv("PLUSH_BIN");
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)(b && *b ? b : "build/plush");
    for (; *args && argc < 31; args++)
        argv[argc++] = (char *)*args;
    argv[argc] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    assert_int_equal(posix_spawn(&pid, argv[0], &fa, NULL, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    return pid;
}

/* Waits (up to two minutes) until path exists. */
static void wait_for(const char *path)
{
    for (int i = 0; i < 24000 && !cli_exists(path); i++)
        nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
    assert_true(cli_exists(path));
}

static void test_small_ones(void **state)
{
    (void)state;
    char dir[600], out[600], p[800], model[700];
    cli_tmp_path(dir, sizeof dir, "m9");
    write_bmp(in(p, sizeof p, dir, "skin.bmp"), 1, 1, "skin");
    char abs_tex[700];
    write_bmp(cli_tmp_path(abs_tex, sizeof abs_tex, "abs.bmp"), 1, 1, secret);
    const char *tex[] = {"skin.bmp", abs_tex};
    write_model(dir, tex, 2);
    snprintf(model, sizeof model, "%s/model.pmx", dir);

    /* the preview's warnings name OUTDIR, not the staging folder (no ffmpeg on PATH: a warning) */
    cli_tmp_path(out, sizeof out, "out9");
    const char *path = getenv("PATH");
    char *saved = path ? strdup(path) : NULL;
    setenv("PATH", "/nonexistent", 1);
    cli_result r;
    CLI_RUN(&r, "run", model, "--mode", "bones", "--frames", "2", "--export", "preview", "-o", out);
    if (saved)
        setenv("PATH", saved, 1);
    free(saved);
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.err, "preview.mp4 not written"));
    assert_null(strstr(r.err, ".plush-tmp"));
    cli_result_free(&r);

    /* --cage on a material with no triangle names it */
    char empty[700];
    snprintf(empty, sizeof empty, "%s/empty", dir);
    {
        plush_pmx_model *e = toy_fx_model();
        /* a fifth material drawing nothing */
        plush_pmx_material *mats = calloc(e->material_count + 1, sizeof *mats);
        memcpy(mats, e->materials, e->material_count * sizeof *mats);
        mats[e->material_count] = mats[0];
        mats[e->material_count].name = (plush_str){.s = "ghost", .len = 5};
        mats[e->material_count].index_count = 0;
        plush_pmx_material *old = e->materials;
        e->materials = mats;
        e->material_count++;
        plush_diag d = {0};
        plush_diag_reset(&d);
        mkdir(empty, 0777);
        snprintf(p, sizeof p, "%s/model.pmx", empty);
        assert_int_equal(plush_pmx_write_file(e, NULL, p, &d), PLUSH_OK);
        e->materials = old;
        e->material_count--;
        free(mats);
        plush_pmx_free(e);
    }
    cli_tmp_path(out, sizeof out, "out9b");
    CLI_RUN(&r, "run", p, "--cage", "ghost", "--frames", "2", "-o", out);
    cli_expect_one_error_line(&r);
    assert_non_null(strstr(r.err, "\"ghost\""));
    cli_result_free(&r);
    assert_false(cli_exists(out)); /* a refused model leaves no OUTDIR */

    /* an absolute texture path: the bake and the glTF export treat it alike (outside the model's folder:
     * not read, not embedded, not copied) */
    cli_tmp_path(out, sizeof out, "out9c");
    run_model(&r, dir, out, "pmx+vmd,gltf", true);
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.err, "absolute path"));
    cli_result_free(&r);
    assert_false(tree_holds(out, secret));

    /* SIGTERM: the OUTDIR the run made goes with its staging folder and lock */
    cli_tmp_path(out, sizeof out, "out9d");
    char lock[700];
    snprintf(lock, sizeof lock, "%s/.plush.lock", out);
    /* long enough to be stopped while it runs; an export that does not grow with the frames, so the run is
     * not refused before it starts for the memory a million frames of bake would take */
    const char *long_run[] = {"run", model, "--cage", "body", "--frames", "1000000", "--export", "quality", "-o", out,
                              NULL};
    pid_t pid = start_plush(long_run);
    wait_for(lock);
    kill(pid, SIGTERM);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
    assert_false(cli_exists(out));

    /* SIGKILL: nothing cleans up; the next run takes the lock over and removes the staging folder */
    pid = start_plush(long_run);
    wait_for(lock);
    for (int i = 0; i < 24000 && count_entries(out, ".plush-tmp") == 0; i++) /* the staging folder too */
        nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
    kill(pid, SIGKILL);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_int_equal(count_entries(out, ".plush-tmp"), 1);
    CLI_RUN(&r, "run", model, "--cage", "body", "--frames", "2", "-o", out);
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.err, "no longer runs"));
    cli_result_free(&r);
    assert_int_equal(count_entries(out, ".plush-tmp"), 0);
    assert_int_equal(count_entries(out, ".plush-old"), 0);
    assert_false(cli_exists(lock));

    /* a staging folder and a replaced outputs' folder a cleanup could not remove (a file some handle still held,
     * as Windows keeps it), their lock gone: the next run removes them too, saying so */
    char stale[800];
    snprintf(stale, sizeof stale, "%s/.plush-tmp.left01", out);
    assert_int_equal(plush__os_mkdir(stale), 0);
    snprintf(stale, sizeof stale, "%s/.plush-tmp.left01/frame.ply", out);
    FILE *f = fopen(stale, "wb");
    assert_non_null(f);
    fclose(f);
    snprintf(stale, sizeof stale, "%s/.plush-old.left02", out);
    assert_int_equal(plush__os_mkdir(stale), 0);
    CLI_RUN(&r, "run", model, "--cage", "body", "--frames", "2", "-o", out);
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.err, "removed .plush-tmp.left01, left by a run that no longer runs"));
    assert_non_null(strstr(r.err, "removed .plush-old.left02, left by a run that no longer runs"));
    cli_result_free(&r);
    assert_int_equal(count_entries(out, ".plush-tmp"), 0);
    assert_int_equal(count_entries(out, ".plush-old"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_copy_does_not_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_leak, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_overwrite, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_set, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lock_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bombs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_attach_dense_cage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_paths_not_options, setup, teardown),
        cmocka_unit_test_setup_teardown(test_small_ones, setup, teardown),
        cmocka_unit_test_setup_teardown(test_planted_set, setup, teardown),
        cmocka_unit_test_setup_teardown(test_user_files_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_signals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_names_escaped, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
