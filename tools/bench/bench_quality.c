/* make bench: what the quality measure adds to plush run on the demo (proxies/plush_bear.pmx with its shake
 * and rigid-eyes override, all 241 frames, the default export pmx+vmd): the run as plush run makes it --
 * scene, sinks, every frame, the bake written -- with the quality measure (as plush run always adds it) and
 * without, in the same process, passes alternated, best of three each, wall time per frame, and the ratio
 * against the 10% budget. Then the measure itself, in line on one thread: ms per frame of the
 * detailed surface (60k vertices, 119k faces) and of the cage. */
#include "plush/plush.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BUDGET 1.10

static void die(const char *what, const plush_diag *d)
{
    char line[600];
    plush_diag_format(d, line, sizeof line);
    fprintf(stderr, "bench_quality: %s: %s\n", what, line);
    exit(1);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One run as plush run makes it, into dir; wall seconds, and the run's thread's time in the sinks. */
static double pass(const plush_scene_desc *desc, uint32_t frames, const char *dir, bool quality, double *in_sinks)
{
    plush_diag d = {0};
    plush_diag_reset(&d);
    double t0 = now();
    plush_scene *sc = NULL;
    if (plush_scene_create(desc, &sc, &d) != PLUSH_OK)
        die("scene", &d);
    plush_scene_output out = {.dir = dir, .stem = "bear", .final_dir = dir};
    plush_scene_sink *sinks[2] = {0};
    size_t n = 0;
    if (plush_scene_sink_create(plush_scene_export_find("pmx+vmd", 7), sc, &out, &sinks[n++], &d) != PLUSH_OK)
        die("bake", &d);
    if (quality && plush_scene_quality_sink_create(sc, &sinks[n++], &d) != PLUSH_OK)
        die("quality", &d);
    plush_scene_run_result r;
    if (plush_scene_run(sc, &(plush_scene_run_options){.frames = frames, .sinks = sinks, .sink_count = n}, &r, &d) !=
        PLUSH_OK)
        die("run", &d);
    for (size_t i = 0; i < n; i++)
        plush_scene_sink_destroy(sinks[i]);
    double t = now() - t0;
    plush_scene_timing timing;
    plush_scene_get_timing(sc, &timing);
    *in_sinks = timing.exports;
    plush_scene_destroy(sc);
    return t;
}

/* The measure alone, in line: ms per frame over the frames of one run (positions copied as they pass). */
static void measure_alone(const plush_scene_desc *desc, uint32_t frames, double *surface_ms, double *cage_ms)
{
    plush_diag d = {0};
    plush_diag_reset(&d);
    plush_scene *sc = NULL;
    if (plush_scene_create(desc, &sc, &d) != PLUSH_OK)
        die("scene", &d);
    const plush_pmx_model *m = desc->model;
    const plush_scene_binding *b = plush_scene_get_binding(sc);
    float(*rest)[3] = malloc(m->vertex_count * sizeof *rest);
    uint32_t(*tris)[3] = malloc(m->index_count / 3 * sizeof *tris);
    if (!rest || !tris)
        exit(1);
    for (size_t v = 0; v < m->vertex_count; v++)
        memcpy(rest[v], m->vertices[v].position, sizeof rest[v]);
    /* the visible surface: the materials before the soft body's (the demo puts its cage last) */
    size_t nt = 0, first = 0;
    for (size_t mat = 0; mat < m->material_count; mat++, first += (size_t)m->materials[mat - 1].index_count) {
        bool soft = false;
        for (size_t s = 0; s < m->soft_body_count; s++)
            soft |= m->soft_bodies[s].material == (int32_t)mat;
        for (size_t i = 0; !soft && i < (size_t)m->materials[mat].index_count; i += 3, nt++)
            for (int k = 0; k < 3; k++)
                tris[nt][k] = (uint32_t)m->indices[first + i + (size_t)k];
    }
    plush_quality *qs = NULL, *qc = NULL;
    if (plush_quality_create((const float(*)[3])rest, m->vertex_count, (const uint32_t(*)[3])tris, nt, &qs, &d) !=
            PLUSH_OK ||
        plush_quality_create((const float(*)[3])b->proxy.nodes, b->proxy.node_count,
                             (const uint32_t(*)[3])b->proxy.triangles, b->proxy.triangle_count, &qc, &d) != PLUSH_OK)
        die("quality", &d);
    double ts = 0, tc = 0;
    plush_quality_figures f;
    for (uint32_t i = 0; i < frames; i++) {
        if (plush_scene_step(sc, i, &d) != PLUSH_OK)
            die("step", &d);
        double t0 = now();
        plush_quality_measure(qs, plush_scene_positions(sc), &f);
        double t1 = now();
        plush_quality_measure(qc, plush_scene_proxy_nodes(sc), &f);
        ts += t1 - t0, tc += now() - t1;
    }
    *surface_ms = 1e3 * ts / frames, *cage_ms = 1e3 * tc / frames;
    plush_quality_destroy(qs);
    plush_quality_destroy(qc);
    free(rest), free(tris);
    plush_scene_destroy(sc);
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
    uint32_t frames = plush_vmd_last_frame(motion) + 1;
    plush_scene_desc desc = {.model = model, .motion = motion, .overrides = map};
    char dir[] = "/tmp/plush_bench_quality_XXXXXX";
    if (!mkdtemp(dir)) {
        perror("bench_quality: mkdtemp");
        return 1;
    }
    double on = 1e30, off = 1e30, sinks_on = 0, sinks_off = 0, e;
    for (int i = 0; i < 3; i++) {
        double t = pass(&desc, frames, dir, false, &e);
        if (t < off)
            off = t, sinks_off = e;
        t = pass(&desc, frames, dir, true, &e);
        if (t < on)
            on = t, sinks_on = e;
    }
    char path[64];
    snprintf(path, sizeof path, "%s/bear_plush.pmx", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/bear_plush.vmd", dir);
    unlink(path);
    rmdir(dir);
    double surface = 0, cage = 0;
    measure_alone(&desc, frames, &surface, &cage);
    double ms = 1e3 / frames;
    printf("quality demo bear (%u frames, pmx+vmd): plush run %.3f ms/frame with the quality measure, %.3f without, "
           "ratio %.3f (budget %.2f%s; the run's thread in the sinks %.3f against %.3f ms/frame); the measure in "
           "line: surface %.3f ms/frame, cage %.3f\n",
           frames, on * ms, off * ms, on / off, BUDGET, on / off <= BUDGET ? "" : ", OVER", sinks_on * ms,
           sinks_off * ms, surface, cage);
    plush_im2_free(map);
    plush_vmd_free(motion);
    plush_pmx_free(model);
    return 0;
}
