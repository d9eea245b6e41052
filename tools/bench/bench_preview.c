/* make bench: the preview export on the embedded demo (proxies/plush_bear.pmx, its shake motion and
 * rigid-eyes override, all 241 frames): wall-clock time per frame of the preview sink (ray casting at
 * 640x480 + handing the picture to ffmpeg + ffmpeg finishing the file at the end), against the issue's
 * 40 ms target. Measured in the same run as references: the stream's drawing alone (BVH refitted per
 * frame) and plush_render per picture (BVH built per picture, as plush compare's pictures do), on the same
 * frames, the same faces and camera. Without ffmpeg on PATH the sink's part is skipped with a message. */
#include "plush/plush.h"

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
    plush_render_stream *rs = NULL;
    double stream_s = 0, plain_s = 0;
    uint32_t plain_n = 0;
    plush_render_view view;
    for (uint32_t f = 0; f < frames; f++) {
        if (plush_scene_step(sc, f, &d) != PLUSH_OK)
            die("step", &d);
        mesh.positions = plush_scene_positions(sc);
        mesh.normals = plush_scene_normals(sc);
        if (f == 0) {
            plush_render_view_fit(&mesh, 640.0f / 480, &view);
            view.eye[2] -= 30; /* roughly the sink's camera distance: the bear about half the picture high */
            if (plush_render_stream_create(&mesh, &rs, &d) != PLUSH_OK)
                die("stream", &d);
        }
        double t0 = wall();
        if (plush_render_stream_draw(rs, &mesh, &view, &img, &d) != PLUSH_OK)
            die("draw", &d);
        stream_s += wall() - t0;
        if (f % 10 == 0) {
            t0 = wall();
            if (plush_render(&mesh, &view, &img, &d) != PLUSH_OK)
                die("render", &d);
            plain_s += wall() - t0;
            plain_n++;
        }
    }
    double stream_ms = 1000.0 * stream_s / frames, plain_ms = 1000.0 * plain_s / plain_n;
    if (sink_ms >= 0)
        printf("preview demo bear (%zu vertices, %u frames, 640x480 H.264): render+encode %.2f ms/frame = %.2fx "
               "under the %.0f ms target; preview.mp4 %.0f KB\n",
               model->vertex_count, frames, sink_ms, TARGET_MS / sink_ms, TARGET_MS, (double)mp4_bytes / 1024.0);
    printf("preview references: stream draw (BVH refitted) %.2f ms/picture, plush_render (BVH built) %.2f "
           "ms/picture, %.2fx\n",
           stream_ms, plain_ms, plain_ms / stream_ms);
    plush_render_stream_destroy(rs);
    plush_image_free(&img);
    plush_scene_destroy(sc);
    free(faces);
    plush_im2_free(map);
    plush_vmd_free(motion);
    plush_pmx_free(model);
    return 0;
}
