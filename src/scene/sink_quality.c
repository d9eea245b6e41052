/* Export "quality": OUTDIR/quality.csv, per frame the detailed surface's and (proxy mode) the cage's edge
 * strain, crease and volume against rest (plush/scene_quality.h), and the worst frame in the summary. */
#include "plush/scene_quality.h"
#include "scene/bake_internal.h"
#include "scene/sink_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct quality_sink {
    plush_scene_sink base;
    char *path;
    plush_quality *surface, *cage;
    plush_buf csv;
    /* the worst frame of the surface (largest p99.9 strain) and its figures */
    int64_t worst_frame;
    plush_quality_figures worst, worst_cage;
    plush_arena arena;
} quality_sink;

static const char header[] =
    "frame,surface_strain_p50,surface_strain_p99,surface_strain_p999,surface_strain_max,surface_strain_outside,"
    "surface_crease_p99,surface_crease_max,surface_volume_ratio,cage_strain_p50,cage_strain_p99,"
    "cage_strain_p999,cage_strain_max,cage_strain_outside,cage_crease_p99,cage_crease_max,cage_volume_ratio\n";

static int figures_csv(char *dst, size_t cap, const plush_quality_figures *f)
{
    return snprintf(dst, cap, ",%.6g,%.6g,%.6g,%.6g,%.6g,%.4g,%.4g,%.6g", f->strain_p50, f->strain_p99,
                    f->strain_p999, f->strain_max, f->strain_outside, f->crease_p99, f->crease_max, f->volume_ratio);
}

static plush_status quality_frame(plush_scene_sink *s, const plush_scene *scene, uint32_t frame, plush_diag *diag)
{
    quality_sink *q = (quality_sink *)s;
    plush_quality_figures f, c = {.volume_ratio = NAN};
    plush_quality_measure(q->surface, plush_scene_positions(scene), &f);
    if (q->cage)
        plush_quality_measure(q->cage, plush_scene_proxy_nodes(scene), &c);
    if (q->worst_frame < 0 || f.strain_p999 > q->worst.strain_p999)
        q->worst_frame = frame, q->worst = f, q->worst_cage = c;
    char line[512];
    int n = snprintf(line, sizeof line, "%u", frame);
    n += figures_csv(line + n, sizeof line - (size_t)n, &f);
    if (q->cage)
        n += figures_csv(line + n, sizeof line - (size_t)n, &c);
    else
        n += snprintf(line + n, sizeof line - (size_t)n, ",,,,,,,,");
    line[n++] = '\n';
    if (!plush_buf_append(&q->csv, line, (size_t)n))
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    return PLUSH_OK;
}

static plush_status quality_end(plush_scene_sink *s, const plush_scene *scene, plush_diag *diag)
{
    (void)scene;
    quality_sink *q = (quality_sink *)s;
    plush_diag local = {.file = q->path};
    plush_status st = plush_file_write_atomic(q->path, q->csv.data, q->csv.size, &local);
    return st == PLUSH_OK ? st : plush__sink_fail(diag, &local);
}

static int quality_describe(const plush_scene_sink *s, char *buf, size_t size)
{
    const quality_sink *q = (const quality_sink *)s;
    const plush_quality_figures *f = &q->worst, *c = &q->worst_cage;
    int n = snprintf(buf, size,
                     "%s; worst frame %lld: surface strain p50 %.3f p99 %.3f p99.9 %.3f max %.2f, %.2f%% of edges "
                     "beyond 1.5x, crease p99 %.1f deg, volume %.3f",
                     q->path, (long long)q->worst_frame, f->strain_p50, f->strain_p99, f->strain_p999, f->strain_max,
                     100.0 * f->strain_outside, f->crease_p99, f->volume_ratio);
    if (q->cage && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n,
                      "\ncage at that frame: strain p99.9 %.3f max %.2f, %.2f%% beyond 1.5x, crease p99 %.1f deg, "
                      "volume %.3f",
                      c->strain_p999, c->strain_max, 100.0 * c->strain_outside, c->crease_p99, c->volume_ratio);
    return n;
}

static void quality_destroy(plush_scene_sink *s)
{
    quality_sink *q = (quality_sink *)s;
    plush_quality_destroy(q->surface);
    plush_quality_destroy(q->cage);
    plush_buf_free(&q->csv);
    plush_arena_free(&q->arena);
    free(q->path);
    free(q);
}

static const plush_scene_sink_ops quality_ops = {.frame = quality_frame,
                                                 .end = quality_end,
                                                 .describe = quality_describe,
                                                 .destroy = quality_destroy};

static plush_status quality_create(const plush_scene *scene, const plush_scene_output *out, plush_scene_sink **sink,
                                   plush_diag *diag)
{
    quality_sink *q = calloc(1, sizeof *q);
    if (q) {
        q->base.ops = &quality_ops;
        q->worst_frame = -1;
        q->path = plush__sink_file(out, "quality.csv");
    }
    if (!q || !q->path || !plush_buf_append(&q->csv, header, sizeof header - 1)) {
        if (q)
            quality_destroy(&q->base);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    plush_scene_desc desc;
    plush_scene_get_desc(scene, &desc);
    const plush_pmx_model *m = desc.model;
    float(*rest)[3] = plush_arena_array(&q->arena, m->vertex_count ? m->vertex_count : 1, sizeof *rest);
    uint32_t(*tris)[3] = NULL;
    size_t nt = 0;
    bool *soft = plush__bake_soft_materials(m, &q->arena);
    plush_status st = rest && soft ? plush__bake_visible_faces(m, soft, &q->arena, &tris, &nt, diag)
                                   : plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    for (size_t v = 0; st == PLUSH_OK && v < m->vertex_count; v++)
        memcpy(rest[v], m->vertices[v].position, sizeof rest[v]);
    /* With a binding, the surface is what the proxy skins: the faces of bound vertices only (Alicia's
     * hair, not her bone-skinned elbows, whose strain is plain MMD skinning). */
    const plush_scene_binding *b = plush_scene_get_binding(scene);
    if (st == PLUSH_OK && b) {
        size_t kept = 0;
        for (size_t f = 0; f < nt; f++)
            if (plush_scene_binding_row(b, tris[f][0]) >= 0 && plush_scene_binding_row(b, tris[f][1]) >= 0 &&
                plush_scene_binding_row(b, tris[f][2]) >= 0)
                memmove(tris[kept++], tris[f], sizeof tris[f]);
        nt = kept;
    }
    if (st == PLUSH_OK)
        st = plush_quality_create((const float(*)[3])rest, m->vertex_count, (const uint32_t(*)[3])tris, nt,
                                  &q->surface, diag);
    if (st == PLUSH_OK && desc.mode == PLUSH_SCENE_PROXY && b)
        st = plush_quality_create((const float(*)[3])b->proxy.nodes, b->proxy.node_count,
                                  (const uint32_t(*)[3])b->proxy.triangles, b->proxy.triangle_count, &q->cage, diag);
    if (st != PLUSH_OK) {
        quality_destroy(&q->base);
        return st;
    }
    *sink = &q->base;
    return PLUSH_OK;
}

const plush_scene_export plush__export_quality = {
    .name = "quality",
    .label = "quality",
    .help = "OUTDIR/quality.csv: per frame the surface's and cage's strain, crease, volume",
    .modes = PLUSH_SCENE_ALL_MODES,
    .create = quality_create,
};
