/* The preview: plush_render_stream against plush_render, and `plush run --export preview` as a user runs it
 * (preview.mp4 read back by ffprobe; without ffmpeg, a broken ffmpeg: exit 0, one warning, no file). The
 * encoder tests are skipped, with the reason, when ffmpeg or ffprobe is not installed. The bear is made by
 * `make` (proxies/). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/plush.h"
#include "plush/sys/render.h"
#include "support/cli_run.h"
#include "support/mesh_fixture.h"
#include "support/report_read.h"
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
    return cli_tmp_setup("plush_preview");
}

static int teardown(void **state)
{
    (void)state;
    return cli_tmp_teardown();
}

static plush_diag fresh(void)
{
    plush_diag d = {0};
    plush_diag_reset(&d);
    return d;
}

/* ---- the renderer stream ----------------------------------------------------------------------------- */

static size_t differing_pixels(const plush_image *a, const plush_image *b)
{
    size_t n = 0;
    for (size_t i = 0; i < (size_t)a->width * (size_t)a->height; i++)
        n += memcmp(a->rgb + 3 * i, b->rgb + 3 * i, 3) != 0;
    return n;
}

/* A sphere moved and squashed frame after frame: the refitted stream draws what plush_render draws (ties
 * between two faces at a pixel aside), per-face colours included; a non-finite corner hides its faces in
 * both; and the stream refuses a mesh of other counts. */
static void test_stream_matches_render(void **state)
{
    (void)state;
    if (!plush_render_available(NULL)) {
        print_message("skipped: no Embree\n");
        skip();
    }
    mesh_fx sphere = mesh_fx_uv_sphere(1.0f, 16, 24);
    size_t nv = sphere.vertex_count, nt = sphere.index_count / 3;
    float(*pos)[3] = malloc(nv * sizeof *pos), (*colors)[3] = malloc(nt * sizeof *colors);
    for (size_t t = 0; t < nt; t++)
        colors[t][0] = (float)(t % 7) / 6.0f, colors[t][1] = 0.5f, colors[t][2] = (float)(t % 3) / 2.0f;
    plush_render_mesh mesh = {.vertex_count = nv, .positions = (const float(*)[3])sphere.positions,
                              .index_count = sphere.index_count, .indices = sphere.indices,
                              .face_colors = (const float(*)[3])colors};
    plush_diag d = fresh();
    plush_render_stream *rs = NULL;
    assert_int_equal(plush_render_stream_create(&mesh, &rs, &d), PLUSH_OK);
    plush_image a = {0}, b = {0};
    assert_int_equal(plush_image_create(160, 120, &a, &d), PLUSH_OK);
    assert_int_equal(plush_image_create(160, 120, &b, &d), PLUSH_OK);
    plush_render_view view;
    float lo[3] = {-4, -3, -2}, hi[3] = {4, 3, 2};
    plush_render_view_fit_box(lo, hi, 160.0f / 120, &view);
    mesh.positions = (const float(*)[3])pos;
    for (int frame = 0; frame < 6; frame++) {
        float dx = -2.0f + 0.8f * (float)frame, sy = 1.0f - 0.1f * (float)frame;
        for (size_t i = 0; i < nv; i++) {
            pos[i][0] = sphere.positions[i][0] + dx;
            pos[i][1] = sphere.positions[i][1] * sy + 0.3f * (float)frame;
            pos[i][2] = sphere.positions[i][2];
        }
        if (frame == 4)
            pos[5][0] = NAN; /* its faces go; the next frame brings them back */
        uint8_t bg[3] = {10, 20, 30};
        plush_image_fill(&a, bg);
        plush_image_fill(&b, bg);
        assert_int_equal(plush_render_stream_draw(rs, &mesh, &view, &a, &d), PLUSH_OK);
        assert_int_equal(plush_render(&mesh, &view, &b, &d), PLUSH_OK);
        assert_true(differing_pixels(&a, &b) <= 16); /* 0.1% */
        size_t drawn = 0;
        for (size_t i = 0; i < 160 * 120; i++)
            drawn += memcmp(a.rgb + 3 * i, bg, 3) != 0;
        assert_true(drawn > 300); /* the sphere is there (about 800 pixels) */
    }
    plush_render_mesh other = mesh;
    other.index_count -= 3;
    assert_int_equal(plush_render_stream_draw(rs, &other, &view, &a, &d), PLUSH_E_ARGUMENT);
    plush_render_stream_destroy(rs);
    plush_render_stream_destroy(NULL);
    plush_image_free(&a);
    plush_image_free(&b);
    free(pos);
    free(colors);
    mesh_fx_free(&sphere);
}

/* ---- plush run --export preview ---------------------------------------------------------------------- */

/* Whether prog is an executable in a directory of PATH. */
static bool on_path(const char *prog)
{
    const char *path = getenv("PATH");
    char buf[1024];
    for (const char *d = path; d && *d;) {
        size_t n = strcspn(d, ":");
        snprintf(buf, sizeof buf, "%.*s/%s", (int)n, d, prog);
        if (access(buf, X_OK) == 0)
            return true;
        d += n + (d[n] == ':');
    }
    return false;
}

/* Skips the running test, saying why, without ffmpeg and ffprobe. */
static void need_encoder(void)
{
    if (on_path("ffmpeg") && on_path("ffprobe"))
        return;
    print_message("skipped: no ffmpeg or ffprobe on the PATH\n");
    skip();
}

/* ffprobe's "codec,width,height,pix_fmt,frames" line for the video stream. */
static void probe(const char *mp4, char *out, size_t size)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd,
             "ffprobe -v error -count_frames -select_streams v:0 -show_entries "
             "stream=nb_read_frames,width,height,codec_name,pix_fmt -of csv=p=0 '%s'",
             mp4);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    out[0] = '\0';
    if (!fgets(out, (int)size, f))
        out[0] = '\0';
    out[strcspn(out, "\r\n")] = '\0';
    assert_int_equal(pclose(f), 0);
}

/* The names in dir (no . and ..), how many, and whether one of them starts with prefix. */
static size_t entries(const char *dir, const char *prefix, bool *found)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0;
    *found = false;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        /* .plush-set lists the run's outputs (the next run replaces them as a set) */
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 || strcmp(e->d_name, ".plush-set") == 0)
            continue;
        n++;
        *found |= strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    }
    closedir(d);
    return n;
}

static void test_preview_mp4(void **state)
{
    (void)state;
    need_encoder();
    char out[512], mp4[600], line[256];
    cli_tmp_path(out, sizeof out, "bear30");
    cli_result r;
    CLI_RUN(&r, "run", BEAR, "--motion", BEAR_VMD, "--frames", "20", "--export", "preview", "-o", out);
    cli_expect_code(&r, 0);
    assert_int_equal(cli_count_lines(r.err, r.err_len), 0);
    cli_result_free(&r);
    snprintf(mp4, sizeof mp4, "%s/preview.mp4", out);
    probe(mp4, line, sizeof line);
    assert_string_equal(line, "h264,640,480,yuv420p,20");
    bool tmp;
    assert_int_equal(entries(out, "preview.mp4.tmp", &tmp), 1); /* preview.mp4 alone, no temporary left */

    /* a 60 fps run gives a 30 fps video: every other frame */
    cli_tmp_path(out, sizeof out, "bear60");
    CLI_RUN(&r, "run", BEAR, "--motion", BEAR_VMD, "--frames", "20", "--fps", "60", "--export", "preview", "-o", out);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    snprintf(mp4, sizeof mp4, "%s/preview.mp4", out);
    probe(mp4, line, sizeof line);
    assert_string_equal(line, "h264,640,480,yuv420p,10");
}

/* --preview-frame soft frames the soft part: with the bear's binding (proxy mode) no warning; in mode
 * bones there is nothing bound, so one warning and the whole model; a value it does not know is a usage
 * error. */
static void test_preview_frame_soft(void **state)
{
    (void)state;
    cli_result r;
    char out[512];
    cli_tmp_path(out, sizeof out, "frame_bad");
    CLI_RUN(&r, "run", BEAR, "--frames", "2", "--export", "preview", "--preview-frame", "hair", "-o", out);
    cli_expect_code(&r, 2);
    cli_result_free(&r);
    need_encoder();
    cli_tmp_path(out, sizeof out, "frame_soft");
    CLI_RUN(&r, "run", BEAR, "--motion", BEAR_VMD, "--frames", "6", "--export", "preview", "--preview-frame", "soft",
            "-o", out);
    cli_expect_code(&r, 0);
    assert_int_equal(cli_count_lines(r.err, r.err_len), 0);
    cli_result_free(&r);
    cli_tmp_path(out, sizeof out, "frame_soft_bones");
    CLI_RUN(&r, "run", BEAR, "--motion", BEAR_VMD, "--frames", "6", "--mode", "bones", "--export", "preview",
            "--preview-frame", "soft", "-o", out);
    cli_expect_code(&r, 0);
    assert_int_equal(cli_count_lines(r.err, r.err_len), 1);
    cli_result_free(&r);
    char mp4[600], line[256];
    snprintf(mp4, sizeof mp4, "%s/preview.mp4", out);
    probe(mp4, line, sizeof line);
    assert_string_equal(line, "h264,640,480,yuv420p,6");
}

/* Columns of a picture holding something other than the preview's background (its slate grey). */
static int silhouette_width(const char *png)
{
    int w = 0, h = 0, cols = 0;
    uint8_t *px = report_load_png(png, &w, &h);
    for (int x = 0; x < w; x++) {
        bool any = false;
        for (int y = 0; y < h && !any; y++) {
            const uint8_t *c = px + 3 * ((size_t)y * (size_t)w + (size_t)x);
            any = abs(c[0] - 46) + abs(c[1] - 50) + abs(c[2] - 58) > 40;
        }
        cols += any;
    }
    report_png_free(px);
    return cols;
}

/* --preview-view and --preview-size: the video at the size asked, and from the model's side the bear is
 * narrower than from the front (no arms sticking out either side); a view or size it does not know is a
 * usage error. */
static void test_preview_view_and_size(void **state)
{
    (void)state;
    cli_result r;
    char out[512], mp4[600], line[256], png[600], cmd[1600];
    cli_tmp_path(out, sizeof out, "view_bad");
    const char *bad[][2] = {{"--preview-view", "top"}, {"--preview-size", "321x240"}, {"--preview-size", "640"},
                            {"--preview-size", "8000x2000"}};
    for (size_t i = 0; i < 4; i++) {
        CLI_RUN(&r, "run", BEAR, "--frames", "2", "--export", "preview", bad[i][0], bad[i][1], "-o", out);
        cli_expect_code(&r, 2);
        cli_result_free(&r);
    }
    need_encoder();
    int width[2] = {0, 0};
    const char *views[2] = {"front", "side"};
    for (int k = 0; k < 2; k++) {
        char name[32];
        snprintf(name, sizeof name, "view_%s", views[k]);
        cli_tmp_path(out, sizeof out, name);
        CLI_RUN(&r, "run", BEAR, "--motion", BEAR_VMD, "--frames", "6", "--export", "preview", "--preview-view",
                views[k], "--preview-size", "320x240", "-o", out);
        cli_expect_code(&r, 0);
        cli_result_free(&r);
        snprintf(mp4, sizeof mp4, "%s/preview.mp4", out);
        probe(mp4, line, sizeof line);
        assert_string_equal(line, "h264,320,240,yuv420p,6");
        snprintf(png, sizeof png, "%s/frame.png", out);
        snprintf(cmd, sizeof cmd, "ffmpeg -loglevel error -y -i '%s' -vframes 1 '%s'", mp4, png);
        assert_int_equal(system(cmd), 0);
        width[k] = silhouette_width(png);
    }
    print_message("the bear 320 pixels wide: %d columns from the front, %d from the side\n", width[0], width[1]);
    assert_true(width[0] > 0 && width[1] > 0);
    assert_true(width[1] * 5 < width[0] * 4);
}

/* Runs the bear with --export preview,obj under PATH = bin: exit 0, exactly one warning line, the OBJ
 * frames written, and neither preview.mp4 nor a temporary file. */
static void run_without_preview(const char *name, const char *bin)
{
    char out[512], frame[600];
    cli_tmp_path(out, sizeof out, name);
    char *old = strdup(getenv("PATH") ? getenv("PATH") : "");
    setenv("PATH", bin, 1);
    cli_result r;
    CLI_RUN(&r, "run", BEAR, "--motion", BEAR_VMD, "--frames", "6", "--every", "5", "--export", "preview,obj", "-o",
            out);
    setenv("PATH", old, 1);
    free(old);
    cli_expect_code(&r, 0);
    assert_int_equal(cli_count_lines(r.err, r.err_len), 1);
    cli_result_free(&r);
    snprintf(frame, sizeof frame, "%s/frames/frame_00005.obj", out);
    assert_true(cli_exists(frame));
    bool tmp;
    assert_int_equal(entries(out, "preview", &tmp), 1); /* frames/ alone */
    assert_false(tmp);
}

static void test_no_ffmpeg_is_one_warning(void **state)
{
    (void)state;
    char bin[512];
    cli_tmp_path(bin, sizeof bin, "empty_bin");
    assert_int_equal(mkdir(bin, 0777), 0);
    run_without_preview("no_ffmpeg", bin);
}

/* An ffmpeg that exits at once: the pipe breaks (SIGPIPE must not kill plush), one warning, no file. */
static void test_broken_ffmpeg_is_one_warning(void **state)
{
    (void)state;
    char bin[512], script[600];
    cli_tmp_path(bin, sizeof bin, "broken_bin");
    assert_int_equal(mkdir(bin, 0777), 0);
    snprintf(script, sizeof script, "%s/ffmpeg", bin);
    const char text[] = "#!/bin/sh\necho 'broken on purpose' >&2\nexit 1\n";
    cli_write_all(script, text, sizeof text - 1);
    assert_int_equal(chmod(script, 0755), 0);
    run_without_preview("broken_ffmpeg", bin);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_matches_render),
        cmocka_unit_test(test_preview_mp4),
        cmocka_unit_test(test_preview_frame_soft),
        cmocka_unit_test(test_preview_view_and_size),
        cmocka_unit_test(test_no_ffmpeg_is_one_warning),
        cmocka_unit_test(test_broken_ffmpeg_is_one_warning),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
