/* Exports "obj" and "ply": OUTDIR/frames/frame_NNNNN.obj|ply, every vertex's position and normal and the
 * faces of every material but the soft bodies' own, every K-th frame. */
#include "scene/sink_internal.h"
#include "plush/obj.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct mesh_sink {
    plush_scene_sink base;
    bool ply;
    uint32_t every;
    char *dir;                /* OUTDIR/frames */
    char path[4096];          /* the frame being written: a failure's diag points at it */
    uint32_t *faces;
    size_t face_count;
    const plush_pmx_model *model;
} mesh_sink;

/* The faces a mesh export shows: every material's but those soft bodies own (an invisible cage would
 * hide the model in viewers that ignore alpha). */
static uint32_t *visible_faces(const plush_pmx_model *m, size_t *count)
{
    bool *soft = calloc(m->material_count ? m->material_count : 1, 1);
    uint32_t *faces = malloc((m->index_count ? m->index_count : 1) * sizeof *faces);
    if (!soft || !faces) {
        free(soft);
        free(faces);
        return NULL;
    }
    for (size_t s = 0; s < m->soft_body_count; s++) {
        int32_t mat = m->soft_bodies[s].material;
        if (mat >= 0 && (size_t)mat < m->material_count)
            soft[mat] = true;
    }
    size_t first = 0, n = 0;
    for (size_t mat = 0; mat < m->material_count; mat++) {
        size_t c = (size_t)m->materials[mat].index_count;
        if (!soft[mat])
            for (size_t i = first; i < first + c && i < m->index_count; i++)
                faces[n++] = m->indices[i];
        first += c;
    }
    free(soft);
    *count = n;
    return faces;
}

static plush_status mesh_begin(plush_scene_sink *s, const plush_scene *scene, plush_diag *diag)
{
    (void)scene;
    mesh_sink *m = (mesh_sink *)s;
    plush_diag local = {.file = m->dir};
    return plush_file_make_dir(m->dir, &local) == PLUSH_OK ? PLUSH_OK : plush__sink_fail(diag, &local);
}

static plush_status mesh_frame(plush_scene_sink *s, const plush_scene *scene, uint32_t frame, plush_diag *diag)
{
    mesh_sink *m = (mesh_sink *)s;
    if (frame % m->every != 0)
        return PLUSH_OK;
    char comment[64];
    snprintf(comment, sizeof comment, "plush run, frame %u", frame);
    plush_obj_mesh mesh = {.vertex_count = m->model->vertex_count,
                           .positions = plush_scene_positions(scene),
                           .normals = plush_scene_normals(scene),
                           .index_count = m->face_count,
                           .indices = m->faces,
                           .comment = comment};
    snprintf(m->path, sizeof m->path, "%s/frame_%05u.%s", m->dir, frame, m->ply ? "ply" : "obj");
    plush_diag local = {.file = m->path};
    plush_status st = m->ply ? plush_ply_write_file(&mesh, m->path, &local)
                             : plush_obj_write_file(&mesh, m->path, &local);
    return st == PLUSH_OK ? st : plush__sink_fail(diag, &local);
}

static plush_status mesh_end(plush_scene_sink *s, const plush_scene *scene, plush_diag *diag)
{
    (void)s, (void)scene, (void)diag;
    return PLUSH_OK;
}

static int mesh_describe(const plush_scene_sink *s, char *buf, size_t size)
{
    const mesh_sink *m = (const mesh_sink *)s;
    return snprintf(buf, size, "%s/frame_NNNNN.%s (every %u)", m->dir, m->ply ? "ply" : "obj", m->every);
}

static void mesh_destroy(plush_scene_sink *s)
{
    mesh_sink *m = (mesh_sink *)s;
    free(m->dir);
    free(m->faces);
    free(m);
}

static const plush_scene_sink_ops mesh_ops = {
    .begin = mesh_begin, .frame = mesh_frame, .end = mesh_end, .describe = mesh_describe, .destroy = mesh_destroy};

static plush_status mesh_create(const plush_scene *scene, const plush_scene_output *out, bool ply,
                                plush_scene_sink **sink, plush_diag *diag)
{
    mesh_sink *m = calloc(1, sizeof *m);
    size_t n = strlen(out->dir) + sizeof "/frames";
    if (m) {
        m->base.ops = &mesh_ops;
        m->ply = ply;
        m->every = out->every ? out->every : 1;
        /* the model as the scene simulates it: direct mode's has the same vertices as the source */
        plush_scene_desc desc;
        plush_scene_get_desc(scene, &desc);
        m->model = desc.model;
        m->dir = malloc(n);
        m->faces = visible_faces(m->model, &m->face_count);
    }
    if (!m || !m->dir || !m->faces) {
        if (m)
            mesh_destroy(&m->base);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    snprintf(m->dir, n, "%s/frames", out->dir);
    *sink = &m->base;
    return PLUSH_OK;
}

static plush_status obj_create(const plush_scene *scene, const plush_scene_output *out, plush_scene_sink **sink,
                               plush_diag *diag)
{
    return mesh_create(scene, out, false, sink, diag);
}

static plush_status ply_create(const plush_scene *scene, const plush_scene_output *out, plush_scene_sink **sink,
                               plush_diag *diag)
{
    return mesh_create(scene, out, true, sink, diag);
}

const plush_scene_export plush__export_obj = {
    .name = "obj",
    .label = "mesh frames",
    .help = "OUTDIR/frames/frame_NNNNN.obj: every vertex, the faces of all but soft-body materials",
    .modes = PLUSH_SCENE_ALL_MODES,
    .create = obj_create,
};

const plush_scene_export plush__export_ply = {
    .name = "ply",
    .label = "mesh frames",
    .help = "OUTDIR/frames/frame_NNNNN.ply: the same, binary little-endian PLY",
    .modes = PLUSH_SCENE_ALL_MODES,
    .create = ply_create,
};
