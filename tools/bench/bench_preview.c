/* make bench: the preview export on the embedded demo (proxies/plush_bear.pmx, its shake motion and
 * rigid-eyes override, all 241 frames): wall-clock time per frame of the preview sink (ray casting at
 * 640x480 with the camera following the bear + handing the picture to ffmpeg + ffmpeg finishing the file
 * at the end), against the 40 ms target. Measured in the same run as references, on the same
 * frames, faces and camera (plush_render_follow_update on the drawn vertices' box, as the sink does): the
 * stream's drawing alone (BVH refitted per frame), the same with every face textured (a 1024x1024 checker
 * mapped from the rest pose's X and Y) and with a cutout texture (a quarter of its texels see-through,
 * so Embree's filter runs on every hit), and plush_render per picture (BVH built per picture, as plush
 * compare's pictures do). The bear has no texture of its own. Without ffmpeg on PATH the sink's part is
 * skipped with a message. */
#include "plush/plush.h"
#include "plush/sys/render.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TARGET_MS 40.0

static void die(const char *what, const plush_diag *d)
{
    char line[600];
    plush_diag_format(d, line, sizeof line);
    fprintf(stderr, "bench_preview: %s: %s\n", what, line);
    exit(1);
}

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static bool have_ffmpeg(void)
{
    return system("ffmpeg -version >/dev/null 2>&1") == 0;
}

/* The faces the preview draws: all but the soft body's cage. */
static uint32_t *drawn_faces(const plush_pmx_model *m, size_t *count)
{
    uint32_t *faces = malloc(m->index_count * sizeof *faces);
    size_t first = 0, n = 0;
    for (size_t mat = 0; mat < m->material_count; mat++) {
        bool cage = false;
        for (size_t s = 0; s < m->soft_body_count; s++)
            cage |= m->soft_bodies[s].material == (int32_t)mat;
        if (!cage)
            for (size_t i = first; i < first + (size_t)m->materials[mat].index_count; i++)
                faces[n++] = m->indices[i];
        first += (size_t)m->materials[mat].index_count;
    }
    *count = n;
    return faces;
}

/* A 1024x1024 checker of 64-texel squares; with cutout, every other square of every other row is
 * see-through. */
static plush_render_texture checker(bool cutout)
{
    enum { N = 1024 };
    plush_render_texture t = {.width = N, .height = N, .rgba = malloc(4 * N * N), .cutout = cutout};
    for (int y = 0; y < N; y++)
        for (int x = 0; x < N; x++) {
            uint8_t *p = t.rgba + 4 * ((size_t)y * N + (size_t)x);
            bool dark = ((x / 64) + (y / 64)) % 2;
            p[0] = dark ? 90 : 240, p[1] = dark ? 60 : 220, p[2] = dark ? 40 : 200;
            p[3] = cutout && dark && (y / 64) % 2 ? 0 : 255;
        }
    return t;
}

int main(void)
{
    plush_diag d = {0};
    plush_diag_reset(&d);
    plush_pmx_model *model = NULL;
    plush_vmd_motion *motion = NULL;
    plush_im2_map *map = NULL;
    if (plush_pmx_read_file("proxies/plush_bear.pmx", NULL, &model, &d) != PLUSH_OK)
        die("model", &d);
    if (plush_vmd_read_file("proxies/plush_bear_shake.vmd", &motion, &d) != PLUSH_OK)
        die("motion", &d);
    if (plush_im2_read_file("proxies/plush_bear.im2", &map, &d) != PLUSH_OK)
        die("overrides", &d);
    if (!plush_render_available(&d)) {
        printf("preview: SKIPPED: no Embree (%s)\n", d.message);
        return 0;
    }
    uint32_t frames = plush_vmd_last_frame(motion) + 1;
    plush_scene_desc desc = {.model = model, .motion = motion, .overrides = map};

    /* the sink, as plush run --export preview runs it */
    double sink_ms = -1;
    long long mp4_bytes = -1;
    char dir[] = "/tmp/bench_preview.XXXXXX";
    if (!have_ffmpeg()) {
        printf("preview: SKIPPED the encoder part: no ffmpeg\n");
    } else if (mkdtemp(dir)) {
        plush_scene *sc = NULL;
        plush_scene_sink *sink = NULL;
        if (plush_scene_create(&desc, &sc, &d) != PLUSH_OK)
            die("scene", &d);
        plush_scene_output out = {.dir = dir, .stem = "plush_bear"};
        if (plush_scene_sink_create(plush_scene_export_find("preview", 7), sc, &out, &sink, &d) != PLUSH_OK)
            die("sink", &d);
        plush_scene_run_result res;
        if (plush_scene_run(sc, &(plush_scene_run_options){.frames = frames, .sinks = &sink, .sink_count = 1}, &res,
                            &d) != PLUSH_OK)
            die("run", &d);
        if (d.warning_count) {
            fprintf(stderr, "bench_preview: no preview: %s\n", d.warnings[0]);
            return 1;
        }
        plush_scene_timing t;
        plush_scene_get_timing(sc, &t);
        sink_ms = 1000.0 * t.exports / (double)frames;
        char path[600];
        snprintf(path, sizeof path, "%s/preview.mp4", dir);
        struct stat st;
        if (stat(path, &st) == 0)
            mp4_bytes = (long long)st.st_size;
        unlink(path);
        rmdir(dir);
        plush_scene_sink_destroy(sink);
        plush_scene_destroy(sc);
    }

    /* the references: the stream alone, and plush_render per picture (every 10th frame: it is slow) */
    size_t face_count = 0;
    uint32_t *faces = drawn_faces(model, &face_count);
    plush_scene *sc = NULL;
    if (plush_scene_create(&desc, &sc, &d) != PLUSH_OK)
        die("scene", &d);
    plush_image img = {0};
    if (plush_image_create(640, 480, &img, &d) != PLUSH_OK)
        die("image", &d);
    plush_render_mesh mesh = {.vertex_count = model->vertex_count, .index_count = face_count, .indices = faces};
    /* UVs from the rest pose's X and Y over its box: a checker square a few centimetres wide on the bear */
    float(*uvs)[2] = malloc(model->vertex_count * sizeof *uvs);
    int32_t *face_textures = calloc(face_count / 3 + 1, sizeof *face_textures);
    for (size_t v = 0; v < model->vertex_count; v++)
        uvs[v][0] = model->vertices[v].position[0] / 8.0f, uvs[v][1] = -model->vertices[v].position[1] / 8.0f;
    plush_render_texture textures[2] = {checker(false), checker(true)};
    plush_render_mesh textured[2];
    for (int i = 0; i < 2; i++)
        textured[i] = (plush_render_mesh){.vertex_count = model->vertex_count, .index_count = face_count,
                                          .indices = faces, .uvs = (const float(*)[2])uvs,
                                          .face_textures = face_textures, .textures = &textures[i],
                                          .texture_count = 1};
    plush_render_stream *rs = NULL, *ts[2] = {NULL, NULL};
    double stream_s = 0, textured_s[2] = {0, 0}, plain_s = 0;
    uint32_t plain_n = 0;
    plush_render_view view;
    plush_render_follow follow = {0};
    for (uint32_t f = 0; f < frames; f++) {
        if (plush_scene_step(sc, f, &d) != PLUSH_OK)
            die("step", &d);
        mesh.positions = plush_scene_positions(sc);
        mesh.normals = plush_scene_normals(sc);
        float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (size_t i = 0; i < face_count; i++)
            for (int k = 0; k < 3; k++) {
                float x = mesh.positions[faces[i]][k];
                lo[k] = x < lo[k] ? x : lo[k], hi[k] = x > hi[k] ? x : hi[k];
            }
        plush_render_follow_update(&follow, lo, hi, 1.0f / 30, 640.0f / 480, &view);
        for (int i = 0; i < 2; i++)
            textured[i].positions = mesh.positions, textured[i].normals = mesh.normals;
        if (f == 0) {
            if (plush_render_stream_create(&mesh, &rs, &d) != PLUSH_OK ||
                plush_render_stream_create(&textured[0], &ts[0], &d) != PLUSH_OK ||
                plush_render_stream_create(&textured[1], &ts[1], &d) != PLUSH_OK)
                die("stream", &d);
        }
        double t0 = wall();
        if (plush_render_stream_draw(rs, &mesh, &view, &img, &d) != PLUSH_OK)
            die("draw", &d);
        stream_s += wall() - t0;
        for (int i = 0; i < 2; i++) {
            t0 = wall();
            if (plush_render_stream_draw(ts[i], &textured[i], &view, &img, &d) != PLUSH_OK)
                die("draw", &d);
            textured_s[i] += wall() - t0;
        }
        if (f % 10 == 0) {
            t0 = wall();
            if (plush_render(&mesh, &view, &img, &d) != PLUSH_OK)
                die("render", &d);
            plain_s += wall() - t0;
            plain_n++;
        }
    }
    double stream_ms = 1000.0 * stream_s / frames, plain_ms = 1000.0 * plain_s / plain_n;
    double tex_ms = 1000.0 * textured_s[0] / frames, cut_ms = 1000.0 * textured_s[1] / frames;
    if (sink_ms >= 0)
        printf("preview demo bear (%zu vertices, %u frames, 640x480 H.264): render+encode %.2f ms/frame = %.2fx "
               "under the %.0f ms target; preview.mp4 %.0f KB\n",
               model->vertex_count, frames, sink_ms, TARGET_MS / sink_ms, TARGET_MS, (double)mp4_bytes / 1024.0);
    printf("preview references: stream draw (BVH refitted) %.2f ms/picture, plush_render (BVH built) %.2f "
           "ms/picture, %.2fx\n",
           stream_ms, plain_ms, plain_ms / stream_ms);
    printf("preview textures: every face textured %.2f ms/picture (%.2fx untextured), with a cutout texture "
           "%.2f ms (%.2fx)\n",
           tex_ms, tex_ms / stream_ms, cut_ms, cut_ms / stream_ms);
    for (int i = 0; i < 2; i++) {
        plush_render_stream_destroy(ts[i]);
        plush_render_texture_free(&textures[i]);
    }
    free(uvs);
    free(face_textures);
    plush_render_stream_destroy(rs);
    plush_image_free(&img);
    plush_scene_destroy(sc);
    free(faces);
    plush_im2_free(map);
    plush_vmd_free(motion);
    plush_pmx_free(model);
    return 0;
}
