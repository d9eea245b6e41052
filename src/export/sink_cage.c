/* Export "cage": OUTDIR/frames/cage_NNNNN.ply, every K-th frame -- the simulated proxy itself, its nodes
 * (plush_scene_proxy_nodes) and triangles (binding->proxy order), which the mesh frames leave out. Proxy
 * mode only: in the other modes no cage drives the mesh (direct mode simulates the detailed mesh itself,
 * bones mode no soft body at all). */
#include "export/sink_internal.h"
#include "plush/obj.h"
#include "plush/sys/core.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cage_sink {
    plush_scene_sink base;
    uint32_t every;
    char *dir;                /* OUTDIR/frames */
    char path[4096];          /* the frame being written: a failure's diag points at it */
    const plush_scene_proxy *proxy;
} cage_sink;

static plush_status cage_begin(plush_scene_sink *s, const plush_scene *scene, plush_diag *diag)
{
    (void)scene;
    return plush__sink_make_dir(((cage_sink *)s)->dir, diag);
}

static plush_status cage_frame(plush_scene_sink *s, const plush_scene *scene, uint32_t frame, plush_diag *diag)
{
    cage_sink *c = (cage_sink *)s;
    if (frame % c->every != 0)
        return PLUSH_OK;
    char comment[64];
    snprintf(comment, sizeof comment, "plush run, cage, frame %u", frame);
    /* no normals: a cage's faces are flat and viewers shade them so */
    plush_obj_mesh mesh = {.vertex_count = c->proxy->node_count,
                           .positions = plush_scene_proxy_nodes(scene),
                           .index_count = 3 * c->proxy->triangle_count,
                           .indices = c->proxy->triangle_count ? &c->proxy->triangles[0][0] : NULL,
                           .comment = comment};
    snprintf(c->path, sizeof c->path, "%s/cage_%05u.ply", c->dir, frame);
    plush_diag local = {.file = c->path};
    plush_status st = plush_ply_write_file(&mesh, c->path, &local);
    return st == PLUSH_OK ? st : plush__sink_fail(diag, &local);
}

static plush_status cage_end(plush_scene_sink *s, const plush_scene *scene, plush_diag *diag)
{
    (void)s, (void)scene, (void)diag;
    return PLUSH_OK;
}

static int cage_describe(const plush_scene_sink *s, char *buf, size_t size)
{
    const cage_sink *c = (const cage_sink *)s;
    return snprintf(buf, size, "%s/cage_NNNNN.ply (every %u; %zu nodes, %zu triangles)", c->dir, c->every,
                    c->proxy->node_count, c->proxy->triangle_count);
}

static void cage_destroy(plush_scene_sink *s)
{
    cage_sink *c = (cage_sink *)s;
    free(c->dir);
    free(c);
}

static void cage_estimate(const plush_scene_sink *s, uint32_t frames, double *memory, double *disk)
{
    const cage_sink *c = (const cage_sink *)s;
    *memory = 0;
    *disk = ceil((double)frames / (double)c->every) *
            ((double)c->proxy->node_count * 12.0 + (double)c->proxy->triangle_count * 13.0);
}

static size_t cage_outputs(const plush_scene_sink *sink, const char **paths, size_t max)
{
    const cage_sink *s = (const cage_sink *)sink;
    if (max && s->dir)
        paths[0] = s->dir;
    return s->dir ? 1 : 0;
}

static const plush_scene_sink_ops cage_ops = {.begin = cage_begin,
                                              .frame = cage_frame,
                                              .end = cage_end,
                                              .describe = cage_describe,
                                              .destroy = cage_destroy,
                                              .estimate = cage_estimate,
                                              .outputs = cage_outputs};

static plush_status cage_create(const plush_scene *scene, const plush_scene_output *out, plush_scene_sink **sink,
                                plush_diag *diag)
{
    const plush_scene_binding *b = plush_scene_get_binding(scene);
    if (!b)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "export cage needs the proxy");
    cage_sink *c = calloc(1, sizeof *c);
    if (c) {
        c->base.ops = &cage_ops;
        c->every = out->every ? out->every : 1;
        c->proxy = &b->proxy;
        c->dir = plush__sink_file(out, PLUSH__OUT_FRAMES);
    }
    if (!c || !c->dir) {
        if (c)
            cage_destroy(&c->base);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    *sink = &c->base;
    return PLUSH_OK;
}

const plush_scene_export plush__export_cage = {
    .name = "cage",
    .label = "cage frames",
    .help = "OUTDIR/frames/cage_NNNNN.ply: the simulated cage's nodes and triangles (proxy mode)",
    .modes = PLUSH_SCENE_MODE_BIT(PLUSH_SCENE_PROXY),
    .create = cage_create,
};
