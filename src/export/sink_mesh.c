/* Exports "obj" and "ply": OUTDIR/frames/frame_NNNNN.obj|ply, every K-th frame: the model's vertices as
 * the baked PMX has them (the vertices only soft-body materials draw -- a cage -- left out, the rest in
 * order: plush__bake_keep_vertices), their positions and normals, and the faces of every material but the
 * soft bodies' own, renumbered. The cage has its own export (sink_cage.c). */
#include "export/bake_internal.h"
#include "export/sink_internal.h"
#include "plush/obj.h"
#include "plush/sys/core.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct mesh_sink {
    plush_scene_sink base;
    bool ply;
    uint32_t every;
    char *dir;                /* OUTDIR/frames */
    char path[4096];          /* the frame being written: a failure's diag points at it */
    uint32_t *faces;          /* over the kept vertices */
    size_t face_count;
    const plush_pmx_model *model;
    int32_t *map;             /* model vertex -> kept vertex, -1 when left out */
    size_t kept;
    float (*positions)[3], (*normals)[3];  /* this frame's kept vertices; NULL when every vertex is kept */
    plush_arena arena;
} mesh_sink;

/* The kept vertices and the faces a mesh export shows: every material's but those soft bodies own (an
 * invisible cage would hide the model in viewers that ignore alpha), over the kept vertices. */
static plush_status mesh_layout(mesh_sink *m, plush_diag *diag)
{
    const plush_pmx_model *model = m->model;
    bool *soft = plush__bake_soft_materials(model, &m->arena);
    if (!soft)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    plush_status st = plush__bake_keep_vertices(model, soft, &m->arena, &m->map, &m->kept, diag);
    if (st != PLUSH_OK)
        return st;
    uint32_t(*visible)[3] = NULL;
    size_t triangles = 0;
    st = plush__bake_visible_faces(model, soft, &m->arena, &visible, &triangles, diag);
    if (st != PLUSH_OK)
        return st;
    m->faces = &visible[0][0];
    if (m->kept < model->vertex_count) {
        m->positions = plush_arena_array(&m->arena, m->kept ? m->kept : 1, sizeof *m->positions);
        m->normals = plush_arena_array(&m->arena, m->kept ? m->kept : 1, sizeof *m->normals);
        if (!m->positions || !m->normals)
            return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    size_t n = 3 * triangles;
    for (size_t i = 0; i < n; i++) /* over the kept vertices, in place */
        m->faces[i] = (uint32_t)m->map[m->faces[i]];
    m->face_count = n;
    return PLUSH_OK;
}

static plush_status mesh_begin(plush_scene_sink *s, const plush_scene *scene, plush_diag *diag)
{
    (void)scene;
    return plush__sink_make_dir(((mesh_sink *)s)->dir, diag);
}

static plush_status mesh_frame(plush_scene_sink *s, const plush_scene *scene, uint32_t frame, plush_diag *diag)
{
    mesh_sink *m = (mesh_sink *)s;
    if (frame % m->every != 0)
        return PLUSH_OK;
    char comment[64];
    snprintf(comment, sizeof comment, "plush run, frame %u", frame);
    const float(*positions)[3] = plush_scene_positions(scene), (*normals)[3] = plush_scene_normals(scene);
    if (m->positions) {
        for (size_t v = 0; v < m->model->vertex_count; v++)
            if (m->map[v] >= 0) {
                memcpy(m->positions[m->map[v]], positions[v], sizeof *positions);
                memcpy(m->normals[m->map[v]], normals[v], sizeof *normals);
            }
        positions = (const float(*)[3])m->positions;
        normals = (const float(*)[3])m->normals;
    }
    plush_obj_mesh mesh = {.vertex_count = m->kept,
                           .positions = positions,
                           .normals = normals,
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
    plush_arena_free(&m->arena);
    free(m);
}

/* Disk only: a file per K-th frame (PLY 24 bytes a vertex and 13 a face; OBJ text about 80 and 40). */
static void mesh_estimate(const plush_scene_sink *s, uint32_t frames, double *memory, double *disk)
{
    const mesh_sink *m = (const mesh_sink *)s;
    double files = ceil((double)frames / (double)m->every), faces = (double)m->face_count / 3.0;
    *memory = 0;
    *disk = files * (m->ply ? (double)m->kept * 24.0 + faces * 13.0 : (double)m->kept * 80.0 + faces * 40.0);
}

static size_t mesh_outputs(const plush_scene_sink *sink, const char **paths, size_t max)
{
    const mesh_sink *s = (const mesh_sink *)sink;
    if (max && s->dir)
        paths[0] = s->dir;
    return s->dir ? 1 : 0;
}

static const plush_scene_sink_ops mesh_ops = {.begin = mesh_begin,
                                              .frame = mesh_frame,
                                              .end = mesh_end,
                                              .describe = mesh_describe,
                                              .destroy = mesh_destroy,
                                              .estimate = mesh_estimate,
                                              .outputs = mesh_outputs};

static plush_status mesh_create(const plush_scene *scene, const plush_scene_output *out, bool ply,
                                plush_scene_sink **sink, plush_diag *diag)
{
    mesh_sink *m = calloc(1, sizeof *m);
    if (m) {
        m->base.ops = &mesh_ops;
        m->ply = ply;
        m->every = out->every ? out->every : 1;
        /* the model as the scene simulates it: direct mode's has the same vertices as the source */
        plush_scene_desc desc;
        plush_scene_get_desc(scene, &desc);
        m->model = desc.model;
        m->dir = plush__sink_file(out, PLUSH__OUT_FRAMES);
    }
    if (!m || !m->dir) {
        if (m)
            mesh_destroy(&m->base);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    plush_status st = mesh_layout(m, diag);
    if (st != PLUSH_OK) {
        mesh_destroy(&m->base);
        return st;
    }
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
    .help = "OUTDIR/frames/frame_NNNNN.obj: the model's vertices and faces as the bake has them (no cage)",
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
