/* Export "preview": OUTDIR/preview.mp4, the run ray-cast with Embree (plush_render_stream) at 640x480,
 * 30 pictures per second, each material in its PMX diffuse colour times its texture, encoded to H.264 by
 * the ffmpeg program.
 *
 * Why the ffmpeg program and not FFmpeg's libraries: linking libavcodec/libavformat would map them into
 * every plush process (as linking Embree would; core/loader.h) and tie the build to their -dev packages,
 * while the program is one Debian package, reached only by the runs that ask for a preview, and it runs
 * beside plush on another core. Raw RGB pictures go down a pipe; ffmpeg writes a temporary file in OUTDIR
 * that is renamed to preview.mp4 only after ffmpeg succeeded, so there is never a half-written preview.
 *
 * A preview is a convenience, never a reason for a run to fail: no ffmpeg on PATH, no Embree, a broken pipe
 * or an ffmpeg failure is one warning, the temporary file is removed, and the run goes on without it.
 *
 * The camera follows what it shows (plush_render_follow_update): each picture frames the box of the drawn
 * vertices at that frame -- or, with PLUSH_SCENE_PREVIEW_SOFT, of the bound ones, grown by
 * preview_soft_margin of its largest side so the soft part is seen with what holds it -- from the front,
 * smoothed over time so that the picture does not shake with every swing of an arm. A camera fixed on the
 * box of the whole motion (what came before) showed a dancing character some 60 pixels tall; frames
 * stream, so the smoothing looks only backwards. Textures are decoded once, before the first frame, by the
 * run's store under the rules of scene/textures.h (a downloaded model names its own texture files), and drawn
 * times the diffuse colour; one that cannot be read keeps the flat colour with a warning. The video runs
 * at 30 frames per second whatever the run's fps: video frame k shows the run frame nearest to k / 30 s (a
 * 60 fps run gives every other frame, a 24 fps run repeats some). */
#include "export/sink_internal.h"
#include "plush/sys/render.h"
#include "plush/sys/core.h"
#include "plush/sys/pmx.h"
#include "core/platform.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { PREVIEW_WIDTH = 640, PREVIEW_HEIGHT = 480, PREVIEW_FPS = 30 };
/* H.264 in yuv420p wants even sides; past 4K a preview is no longer a preview */
enum { PREVIEW_MIN_SIDE = 16, PREVIEW_MAX_WIDTH = 3840, PREVIEW_MAX_HEIGHT = 2160 };
/* Room around the soft part's box on every side, a share of its largest side: hair framed with the head
 * it hangs from, a skirt with the legs. */
static const float preview_soft_margin = 0.15f;
static const uint8_t preview_background[3] = {46, 50, 58};

typedef struct preview_sink {
    plush_scene_sink base;
    char *path;                   /* OUTDIR/preview.mp4 */
    char *tmp;                    /* OUTDIR/preview.mp4.tmp.XXXXXX while ffmpeg writes it */
    char ffmpeg[PLUSH__OS_PATH_MAX]; /* the program found on PATH */
    const plush_pmx_model *model;
    char *model_file;             /* textures are named from its folder; may be NULL */
    uint32_t *faces;
    size_t face_count;
    float (*face_colors)[3];
    int32_t *face_textures;       /* per face: the PMX texture index, then (begin) one of textures, or -1 */
    uint8_t *face_one_sided;      /* per face: its material is not double-sided (MMD culls its back) */
    float (*uvs)[2];
    plush_render_texture *textures; /* the texels borrowed from the run's store (plush__scene_textures) */
    size_t texture_count;
    plush_render_stream *stream;
    plush_scene_preview_frame framing;
    plush_scene_preview_view from;   /* where the camera looks from */
    int width, height;               /* the pictures' size */
    uint32_t *framed;             /* the vertices whose box the camera follows */
    size_t framed_count;
    plush_render_follow follow;
    uint32_t last_frame;          /* of the last picture, for the time the camera eased */
    plush_render_view view;
    plush_image image;
    float fps;                    /* the run's */
    plush__os_child ffmpeg_run;   /* ffmpeg while it runs (handle 0 when not), its stdin */
    FILE *log;                    /* its stderr (an unlinked temporary file): the reason of a failure */
    uint64_t pictures;            /* video frames written */
    bool off;                     /* no preview this run (the warning was given) */
    bool written;                 /* preview.mp4 is in place */
    char why[160];                /* why there is none, for the summary */
} preview_sink;

/* ---- what is drawn --------------------------------------------------------------------------------- */

/* The faces of every material but those soft bodies own (the cage) and those MMD does not show (diffuse
 * alpha 0), each with its material's diffuse colour, seen from the front only unless the material is
 * double-sided (as MMD draws them: a cape's inner layer on its outer one shows inside only). */
static bool drawn_faces(preview_sink *p)
{
    const plush_pmx_model *m = p->model;
    bool *hidden = calloc(m->material_count ? m->material_count : 1, 1);
    p->faces = malloc((m->index_count ? m->index_count : 1) * sizeof *p->faces);
    p->face_colors = malloc((m->index_count / 3 + 1) * sizeof *p->face_colors);
    p->face_textures = malloc((m->index_count / 3 + 1) * sizeof *p->face_textures);
    p->face_one_sided = malloc(m->index_count / 3 + 1);
    if (!hidden || !p->faces || !p->face_colors || !p->face_textures || !p->face_one_sided) {
        free(hidden);
        return false;
    }
    for (size_t mat = 0; mat < m->material_count; mat++)
        hidden[mat] = plush_pmx_material_soft_body(m, mat) >= 0;
    size_t first = 0, n = 0;
    for (size_t mat = 0; mat < m->material_count; mat++) {
        const plush_pmx_material *pm = &m->materials[mat];
        size_t c = (size_t)pm->index_count;
        if (!hidden[mat] && pm->diffuse[3] > 0)
            for (size_t i = first; i + 3 <= first + c && i + 3 <= m->index_count; i += 3) {
                memcpy(p->faces + n, m->indices + i, 3 * sizeof *p->faces);
                for (int k = 0; k < 3; k++) {
                    float d = pm->diffuse[k];
                    p->face_colors[n / 3][k] = isfinite(d) ? (d < 0 ? 0 : d > 1 ? 1 : d) : 0.8f;
                }
                p->face_textures[n / 3] = pm->texture >= 0 && (size_t)pm->texture < m->texture_count ? pm->texture : -1;
                p->face_one_sided[n / 3] = !(pm->flags & PLUSH_PMX_MATERIAL_DOUBLE_SIDED);
                n += 3;
            }
        first += c;
    }
    free(hidden);
    p->face_count = n;
    return true;
}

/* Into p->framed: of the drawn vertices (used), those of the materials the run binds (its --cage or
 * --materials, plush_scene_desc.bind.bound). False when it names none. */
static bool frame_named(preview_sink *p, const plush_scene *scene, bool *used)
{
    plush_scene_desc desc;
    plush_scene_get_desc(scene, &desc);
    const plush_scene_bound_options *bo = &desc.bind.bound;
    const plush_pmx_model *m = p->model;
    if (!bo->material_count || !m->material_count)
        return false;
    bool *chosen = calloc(m->material_count, sizeof *chosen);
    if (!chosen)
        return false;
    plush_diag quiet = {0};
    plush_diag_reset(&quiet);
    for (size_t i = 0; i < bo->material_count; i++)
        plush_pmx_material_choose(m, bo->materials[i], chosen, &quiet);
    for (size_t mat = 0; mat < m->material_count; mat++) {
        size_t first = 0, count = 0;
        if (!chosen[mat] || plush_pmx_material_faces(m, mat, &first, &count, &quiet) != PLUSH_OK)
            continue;
        for (size_t i = first; i < first + count; i++) {
            uint32_t v = m->indices[i];
            if (v < m->vertex_count && used[v]) {
                /* each vertex once: mark it taken in place of used */
                used[v] = false;
                p->framed[p->framed_count++] = v;
            }
        }
    }
    /* give back what was taken, for the model framing after it */
    for (size_t k = 0; k < p->framed_count; k++)
        used[p->framed[k]] = true;
    free(chosen);
    return true;
}

/* The vertices the camera follows: those the faces draw, or of them the bound ones (the soft part), or
 * without a binding those of the materials the run names. A soft framing with no vertex to frame falls back
 * to the model with a warning. */
static bool framed_vertices(preview_sink *p, const plush_scene *scene, plush_diag *diag)
{
    const plush_pmx_model *m = p->model;
    bool *used = calloc(m->vertex_count ? m->vertex_count : 1, 1);
    p->framed = malloc((m->vertex_count ? m->vertex_count : 1) * sizeof *p->framed);
    if (!used || !p->framed) {
        free(used);
        return false;
    }
    for (size_t i = 0; i < p->face_count; i++)
        used[p->faces[i]] = true;
    const plush_scene_binding *b = p->framing == PLUSH_SCENE_PREVIEW_SOFT ? plush_scene_get_binding(scene) : NULL;
    for (size_t v = 0; b && v < m->vertex_count; v++)
        if (used[v] && plush_scene_binding_row(b, (uint32_t)v) >= 0)
            p->framed[p->framed_count++] = (uint32_t)v;
    /* no binding (mode bones: the author's physics): the part the run names (--cage, --materials), so that
     * plush's run and the author's can be framed alike */
    bool named = false;
    if (p->framing == PLUSH_SCENE_PREVIEW_SOFT && !b)
        named = frame_named(p, scene, used);
    if (p->framing == PLUSH_SCENE_PREVIEW_SOFT && p->framed_count == 0) {
        plush_diag_warn(diag, -1, "preview", -1, "%s: the camera follows the whole model",
                        b ? "no drawn vertex is bound"
                        : named ? "the materials named draw nothing"
                                : "no soft part to frame without a binding or materials named (mode bones)");
        p->framing = PLUSH_SCENE_PREVIEW_MODEL;
    }
    for (size_t v = 0; p->framing == PLUSH_SCENE_PREVIEW_MODEL && v < m->vertex_count; v++)
        if (used[v])
            p->framed[p->framed_count++] = (uint32_t)v;
    free(used);
    return true;
}

/* This frame's box of the framed vertices (the non-finite ones left out; empty, lo > hi, when none is
 * finite), grown by the soft margin when it frames the soft part. */
static void framed_box(const preview_sink *p, const float (*pos)[3], float lo[3], float hi[3])
{
    for (int k = 0; k < 3; k++)
        lo[k] = INFINITY, hi[k] = -INFINITY;
    for (size_t i = 0; i < p->framed_count; i++) {
        const float *v = pos[p->framed[i]];
        if (!(isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2])))
            continue;
        for (int k = 0; k < 3; k++)
            lo[k] = fminf(lo[k], v[k]), hi[k] = fmaxf(hi[k], v[k]);
    }
    if (p->framing != PLUSH_SCENE_PREVIEW_SOFT || !(lo[0] <= hi[0]))
        return;
    float side = fmaxf(hi[0] - lo[0], fmaxf(hi[1] - lo[1], hi[2] - lo[2]));
    for (int k = 0; k < 3; k++)
        lo[k] -= preview_soft_margin * side, hi[k] += preview_soft_margin * side;
}

/* Decodes the textures the drawn faces use, each once, and points the faces at them; a texture that
 * cannot be used is one warning and its faces keep the flat colour. Only running out of memory fails. */
static plush_status load_textures(preview_sink *p, const plush_scene *scene, plush_diag *diag)
{
    const plush_pmx_model *m = p->model;
    size_t faces = p->face_count / 3;
    p->uvs = malloc((m->vertex_count ? m->vertex_count : 1) * sizeof *p->uvs);
    int32_t *slot = malloc((m->texture_count ? m->texture_count : 1) * sizeof *slot); /* -2: not tried */
    p->textures = calloc(m->texture_count ? m->texture_count : 1, sizeof *p->textures);
    if (!p->uvs || !slot || !p->textures) {
        free(slot);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    for (size_t v = 0; v < m->vertex_count; v++)
        memcpy(p->uvs[v], m->vertices[v].uv, sizeof p->uvs[v]);
    for (size_t t = 0; t < m->texture_count; t++)
        slot[t] = -2;
    plush_status st = PLUSH_OK;
    for (size_t f = 0; f < faces && st == PLUSH_OK; f++) {
        int32_t t = p->face_textures[f];
        if (t >= 0 && slot[t] == -2) {
            plush_diag local = {0};
            const plush__texture *tex = NULL;
            st = plush__texture_decode(plush__scene_textures(scene), p->model_file, &m->textures[t], &tex, &local);
            slot[t] = -1;
            if (tex) /* the run's store owns the texels */
                p->textures[p->texture_count] = tex->texels, slot[t] = (int32_t)p->texture_count++;
            if (st != PLUSH_OK && st != PLUSH_E_NOMEM)
                plush_diag_warn(diag, -1, "texture", t, "%s: drawn in its flat colour", local.message);
            st = st == PLUSH_E_NOMEM ? plush_diag_fail(diag, st, -1, NULL, -1, "out of memory") : PLUSH_OK;
        }
        p->face_textures[f] = t >= 0 ? slot[t] : -1;
    }
    free(slot);
    return st;
}

/* ---- ffmpeg ---------------------------------------------------------------------------------------- */

/* The last non-empty line ffmpeg wrote on stderr, for the warning. */
static void ffmpeg_last_line(preview_sink *p, char *buf, size_t size)
{
    buf[0] = '\0';
    if (!p->log)
        return;
    char line[256];
    rewind(p->log);
    while (fgets(line, sizeof line, p->log)) {
        line[strcspn(line, "\r\n")] = '\0';
        size_t n = strlen(line);
        if (n) {
            n = n < size ? n : size - 1;
            memcpy(buf, line, n);
            buf[n] = '\0';
        }
    }
}

/* Waits for ffmpeg after closing its input; true when it exited with 0. */
static bool ffmpeg_wait(preview_sink *p)
{
    return plush__os_child_wait(&p->ffmpeg_run);
}

/* No preview after all: one warning (with ffmpeg's own last line when it said something), ffmpeg stopped,
 * the temporary file removed. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void give_up(preview_sink *p, plush_diag *diag, const char *fmt, ...)
{
    char said[200] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->why, sizeof p->why, fmt, ap);
    va_end(ap);
    if (p->ffmpeg_run.handle)
        plush__os_child_stop(&p->ffmpeg_run);
    ffmpeg_last_line(p, said, sizeof said);
    if (p->tmp)
        plush__os_unlink(p->tmp);
    if (said[0])
        plush_diag_warn(diag, -1, "preview", -1, "%s (ffmpeg: %s); %s not written", p->why, said, p->path);
    else
        plush_diag_warn(diag, -1, "preview", -1, "%s; %s not written", p->why, p->path);
    p->off = true;
}

static plush_status ffmpeg_start(preview_sink *p, plush_diag *diag)
{
    size_t n = strlen(p->path);
    p->tmp = malloc(n + sizeof ".tmp.XXXXXX");
    if (!p->tmp)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    memcpy(p->tmp, p->path, n);
    memcpy(p->tmp + n, ".tmp.XXXXXX", sizeof ".tmp.XXXXXX");
    int tmp_fd = plush__os_mkstemp(p->tmp);
    if (tmp_fd < 0) {
        int e = errno;
        free(p->tmp);
        p->tmp = NULL; /* not ours to remove */
        give_up(p, diag, "cannot create a file in the output folder: %s", strerror(e));
        return PLUSH_OK;
    }
    close(tmp_fd);
    /* ffmpeg reads an argument starting with '-' as an option and "pipe:x", "http:x" as a protocol: it gets
     * the file protocol and an absolute path, whatever OUTDIR the user named */
    char *real = plush__os_realpath(p->tmp);
    if (!real) {
        give_up(p, diag, "cannot resolve the output folder: %s", strerror(errno));
        return PLUSH_OK;
    }
    char target[PLUSH__OS_PATH_MAX + 8];
    snprintf(target, sizeof target, "file:%s", real);
    free(real);
    p->log = tmpfile();
    char size[32], rate[16];
    snprintf(size, sizeof size, "%dx%d", p->width, p->height);
    snprintf(rate, sizeof rate, "%d", PREVIEW_FPS);
    const char *const argv[] = {p->ffmpeg, "-hide_banner", "-loglevel", "error", "-nostats", "-y",
                          "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", size, "-r", rate, "-i", "-",
                          "-an", "-c:v", "libx264", "-preset", "veryfast", "-crf", "20", "-pix_fmt", "yuv420p",
                          "-movflags", "+faststart", "-f", "mp4", target, NULL};
    int rc = plush__os_child_start(p->ffmpeg, argv, p->log, &p->ffmpeg_run);
    if (rc != 0) {
        give_up(p, diag, "cannot start ffmpeg: %s", strerror(rc));
        return PLUSH_OK;
    }
    return PLUSH_OK;
}

/* ---- the sink -------------------------------------------------------------------------------------- */

/* What is drawn at these positions: the drawn faces with their colours and textures. */
static plush_render_mesh textured_mesh(const preview_sink *p, const float (*positions)[3], const float (*normals)[3])
{
    return (plush_render_mesh){.vertex_count = p->model->vertex_count,
                               .positions = positions,
                               .normals = normals,
                               .index_count = p->face_count,
                               .indices = p->faces,
                               .face_colors = (const float(*)[3])p->face_colors,
                               .uvs = (const float(*)[2])p->uvs,
                               .face_textures = p->face_textures,
                               .textures = p->textures,
                               .texture_count = p->texture_count,
                               .face_one_sided = p->face_one_sided};
}

static plush_status preview_begin(plush_scene_sink *s, const plush_scene *scene, plush_diag *diag)
{
    preview_sink *p = (preview_sink *)s;
    if (!plush__os_find_program("ffmpeg", p->ffmpeg, sizeof p->ffmpeg)) {
        give_up(p, diag, "no ffmpeg on PATH (%s)", PLUSH__OS_FFMPEG_HINT);
        return PLUSH_OK;
    }
    plush_diag local = {0};
    plush_diag_reset(&local);
    if (!plush_render_available(&local)) {
        give_up(p, diag, "%s", local.message);
        return PLUSH_OK;
    }
    if (!framed_vertices(p, scene, diag))
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    plush_status st = load_textures(p, scene, diag);
    if (st == PLUSH_OK)
        st = plush_image_create(p->width, p->height, &p->image, diag);
    if (st != PLUSH_OK)
        return st;
    /* the BVH over the rest pose; each frame refits it */
    const plush_pmx_model *m = p->model;
    float(*rest)[3] = malloc((m->vertex_count ? m->vertex_count : 1) * sizeof *rest);
    if (!rest)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    for (size_t i = 0; i < m->vertex_count; i++)
        memcpy(rest[i], m->vertices[i].position, sizeof rest[i]);
    plush_render_mesh mesh = textured_mesh(p, (const float(*)[3])rest, NULL);
    plush_diag_reset(&local);
    st = plush_render_stream_create(&mesh, &p->stream, &local);
    free(rest);
    if (st == PLUSH_E_NOMEM)
        return plush__sink_fail(diag, &local);
    if (st != PLUSH_OK) {
        give_up(p, diag, "%s", local.message);
        return PLUSH_OK;
    }
    return ffmpeg_start(p, diag);
}

/* Video frames to show run frame f: those whose time k / 30 s is nearer to f than to f + 1. */
static uint64_t pictures_due(const preview_sink *p, uint32_t frame)
{
    double until = ((double)frame + 0.5) * PREVIEW_FPS / p->fps;
    uint64_t k = p->pictures;
    while ((double)k < until)
        k++;
    return k - p->pictures;
}

/* The camera's turn about Y from MMD's front (radians): a quarter to the model's left side, half to its back,
 * or a whole turn every PLUSH_SCENE_PREVIEW_ORBIT_SECONDS. */
static double view_turn(const preview_sink *p, uint32_t frame)
{
    const double pi = 3.14159265358979323846;
    switch (p->from) {
    case PLUSH_SCENE_VIEW_SIDE:
        return 0.5 * pi;
    case PLUSH_SCENE_VIEW_BACK:
        return pi;
    case PLUSH_SCENE_VIEW_ORBIT:
        return 2 * pi * fmod((double)frame / p->fps / PLUSH_SCENE_PREVIEW_ORBIT_SECONDS, 1.0);
    default:
        return 0;
    }
}

/* The box [lo, hi] turned by -turn about Y round its centre (its bounding box): what the front camera must
 * hold for the camera turned by turn to hold the box. */
static void turned_box(double turn, float lo[3], float hi[3])
{
    if (turn == 0)
        return;
    double c = cos(turn), s = sin(turn), cx = 0.5 * (lo[0] + hi[0]), cz = 0.5 * (lo[2] + hi[2]);
    double hx = 0.5 * (hi[0] - lo[0]), hz = 0.5 * (hi[2] - lo[2]);
    double ex = fabs(c) * hx + fabs(s) * hz, ez = fabs(s) * hx + fabs(c) * hz;
    lo[0] = (float)(cx - ex), hi[0] = (float)(cx + ex), lo[2] = (float)(cz - ez), hi[2] = (float)(cz + ez);
}

/* The eye turned by turn about Y round the target (the up vector with it). */
static void turn_eye(plush_render_view *v, double turn)
{
    if (turn == 0)
        return;
    double c = cos(turn), s = sin(turn);
    double dx = (double)v->eye[0] - v->target[0], dz = (double)v->eye[2] - v->target[2];
    /* turning the front's eye (at -Z) towards +X: a rotation by -turn in the x-z plane seen from above */
    v->eye[0] = (float)(v->target[0] + c * dx - s * dz);
    v->eye[2] = (float)(v->target[2] + s * dx + c * dz);
    double ux = v->up[0], uz = v->up[2];
    v->up[0] = (float)(c * ux - s * uz), v->up[2] = (float)(s * ux + c * uz);
}

static plush_status preview_frame(plush_scene_sink *s, const plush_scene *scene, uint32_t frame, plush_diag *diag)
{
    preview_sink *p = (preview_sink *)s;
    if (p->off)
        return PLUSH_OK;
    uint64_t due = pictures_due(p, frame);
    if (due == 0)
        return PLUSH_OK;
    plush_render_mesh mesh = textured_mesh(p, plush_scene_positions(scene), plush_scene_normals(scene));
    float lo[3], hi[3];
    framed_box(p, mesh.positions, lo, hi);
    /* another side: the follow camera frames the box as that side shows it (turned about Y round its centre
     * into the front's place), and its eye then turns back round the target */
    double turn = view_turn(p, frame);
    turned_box(turn, lo, hi);
    plush_render_follow_update(&p->follow, lo, hi, (float)((double)(frame - p->last_frame) / p->fps),
                               (float)p->width / (float)p->height, &p->view);
    turn_eye(&p->view, turn);
    p->last_frame = frame;
    plush_image_fill(&p->image, preview_background);
    plush_diag local = {0};
    plush_diag_reset(&local);
    if (plush_render_stream_draw(p->stream, &mesh, &p->view, &p->image, &local) != PLUSH_OK) {
        give_up(p, diag, "frame %u: %s", frame, local.message);
        return PLUSH_OK;
    }
    size_t bytes = (size_t)p->width * (size_t)p->height * 3;
    for (uint64_t i = 0; i < due; i++) {
        if (!plush__os_child_write(&p->ffmpeg_run, p->image.rgb, bytes)) {
            give_up(p, diag, "ffmpeg stopped reading");
            return PLUSH_OK;
        }
        p->pictures++;
    }
    return PLUSH_OK;
}

static plush_status preview_end(plush_scene_sink *s, const plush_scene *scene, plush_diag *diag)
{
    (void)scene;
    preview_sink *p = (preview_sink *)s;
    if (p->off)
        return PLUSH_OK;
    if (p->pictures == 0) {
        give_up(p, diag, "no frame to show");
        return PLUSH_OK;
    }
    if (!ffmpeg_wait(p)) {
        give_up(p, diag, "ffmpeg failed");
        return PLUSH_OK;
    }
    /* mkstemp made the file 0600; outputs follow the umask like every other plush output */
    int fd = plush__os_open_read(p->tmp);
    if (fd >= 0) {
        plush__os_share_mode(fd);
        close(fd);
    }
    if (fd < 0 || plush__os_rename(p->tmp, p->path) != 0) {
        give_up(p, diag, "cannot rename the encoded video: %s", strerror(errno));
        return PLUSH_OK;
    }
    p->written = true;
    return PLUSH_OK;
}

static int preview_describe(const plush_scene_sink *s, char *buf, size_t size)
{
    const preview_sink *p = (const preview_sink *)s;
    if (p->written)
        return snprintf(buf, size, "%s (%llu frames, %dx%d, H.264, from the %s)", p->path,
                        (unsigned long long)p->pictures, p->width, p->height,
                        p->from == PLUSH_SCENE_VIEW_SIDE   ? "model's left side"
                        : p->from == PLUSH_SCENE_VIEW_BACK ? "back"
                        : p->from == PLUSH_SCENE_VIEW_ORBIT ? "front, turning round it"
                                                            : "front");
    return snprintf(buf, size, "not written: %s", p->why[0] ? p->why : "the run did not end");
}

static void preview_destroy(plush_scene_sink *s)
{
    preview_sink *p = (preview_sink *)s;
    if (p->ffmpeg_run.handle) /* a run that stopped early: no video */
        plush__os_child_stop(&p->ffmpeg_run);
    plush__os_child_wait(&p->ffmpeg_run);
    if (p->tmp && !p->written)
        plush__os_unlink(p->tmp);
    if (p->log)
        fclose(p->log);
    plush_render_stream_destroy(p->stream);
    plush_image_free(&p->image);
    free(p->faces);
    free(p->face_colors);
    free(p->face_textures);
    free(p->face_one_sided);
    free(p->uvs);
    free(p->textures); /* the texels are the run's store's */
    free(p->framed);
    free(p->model_file);
    free(p->tmp);
    free(p->path);
    free(p);
}

/* H.264 at 640x480: under half a kilobyte a frame for the demo; 4 KB is the generous bound, scaled with the
 * pictures' area. */
static void preview_estimate(const plush_scene_sink *s, uint32_t frames, double *memory, double *disk)
{
    const preview_sink *p = (const preview_sink *)s;
    double area = (double)p->width * (double)p->height / ((double)PREVIEW_WIDTH * PREVIEW_HEIGHT);
    *memory = 0;
    *disk = (double)frames * 4096.0 * (area > 1 ? area : 1);
}

static size_t preview_outputs(const plush_scene_sink *sink, const char **paths, size_t max)
{
    const preview_sink *p = (const preview_sink *)sink;
    if (max && p->path)
        paths[0] = p->path;
    return p->path ? 1 : 0;
}

static const plush_scene_sink_ops preview_ops = {.begin = preview_begin,
                                                 .frame = preview_frame,
                                                 .end = preview_end,
                                                 .describe = preview_describe,
                                                 .destroy = preview_destroy,
                                                 .estimate = preview_estimate,
                                                 .outputs = preview_outputs};

static plush_status preview_create(const plush_scene *scene, const plush_scene_output *out, plush_scene_sink **sink,
                                   plush_diag *diag)
{
    preview_sink *p = calloc(1, sizeof *p);
    if (p) {
        p->base.ops = &preview_ops;
        p->ffmpeg_run = (plush__os_child){0, -1};
        plush_scene_desc desc;
        plush_scene_get_desc(scene, &desc);
        p->model = desc.model;
        p->model_file = out->model_file ? strdup(out->model_file) : NULL;
        p->framing = out->preview_frame;
        p->from = out->preview_view;
        p->width = out->preview_width ? (int)out->preview_width : PREVIEW_WIDTH;
        p->height = out->preview_height ? (int)out->preview_height : PREVIEW_HEIGHT;
        p->fps = desc.fps > 0 ? desc.fps : PREVIEW_FPS;
        p->path = plush__sink_file(out, PLUSH__OUT_PREVIEW);
    }
    if (!p || !p->path || (out->model_file && !p->model_file) || !drawn_faces(p)) {
        if (p)
            preview_destroy(&p->base);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    *sink = &p->base;
    return PLUSH_OK;
}

const plush_scene_export plush__export_preview = {
    .name = "preview",
    .label = "preview",
    .help = "OUTDIR/preview.mp4: the run ray-cast at 640x480, 30 fps, H.264 (needs ffmpeg)",
    .modes = PLUSH_SCENE_ALL_MODES,
    .create = preview_create,
};
