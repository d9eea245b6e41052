/* Export "im2": the binding as an Influence Map File 2 (OUTDIR/<model>_plush.im2), written at the end. */
#include "export/sink_internal.h"
#include "plush/sys/core.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct im2_sink {
    plush_scene_sink base;
    char *path;
} im2_sink;

static plush_status im2_frame(plush_scene_sink *s, const plush_scene *scene, uint32_t frame, plush_diag *diag)
{
    (void)s, (void)scene, (void)frame, (void)diag;
    return PLUSH_OK;
}

static plush_status im2_end(plush_scene_sink *s, const plush_scene *scene, plush_diag *diag)
{
    im2_sink *m = (im2_sink *)s;
    plush_diag local = {.file = m->path};
    plush_im2_map *map = NULL;
    plush_status st = plush_scene_binding_to_im2(plush_scene_get_binding(scene), &map, &local);
    if (st == PLUSH_OK)
        st = plush_im2_write_file(map, m->path, &local);
    plush_im2_free(map);
    return st == PLUSH_OK ? st : plush__sink_fail(diag, &local);
}

static int im2_describe(const plush_scene_sink *s, char *buf, size_t size)
{
    return snprintf(buf, size, "%s", ((const im2_sink *)s)->path);
}

static void im2_destroy(plush_scene_sink *s)
{
    im2_sink *m = (im2_sink *)s;
    free(m->path);
    free(m);
}

static size_t im2_outputs(const plush_scene_sink *sink, const char **paths, size_t max)
{
    const im2_sink *s = (const im2_sink *)sink;
    if (max && s->path)
        paths[0] = s->path;
    return s->path ? 1 : 0;
}

static const plush_scene_sink_ops im2_ops = {
    .frame = im2_frame, .end = im2_end, .describe = im2_describe, .destroy = im2_destroy, .outputs = im2_outputs};

static plush_status im2_create(const plush_scene *scene, const plush_scene_output *out, plush_scene_sink **sink,
                               plush_diag *diag)
{
    (void)scene;
    im2_sink *m = calloc(1, sizeof *m);
    if (m) {
        m->base.ops = &im2_ops;
        m->path = plush__sink_path(out, PLUSH__OUT_SUFFIX ".im2");
    }
    if (!m || !m->path) {
        if (m)
            im2_destroy(&m->base);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    *sink = &m->base;
    return PLUSH_OK;
}

const plush_scene_export plush__export_im2 = {
    .name = "im2",
    .label = "binding",
    .help = "OUTDIR/<model>_plush.im2: the binding, an Influence Map File (proxy mode)",
    .modes = PLUSH_SCENE_MODE_BIT(PLUSH_SCENE_PROXY),
    .create = im2_create,
};
