/* plush compare's quality figures (plush/quality.h): per frame and per run, the measured surface's
 * edge strain and crease against rest and, for a proxy run, its cage's as well -- the columns metrics.csv
 * adds after its own, quality.png, and report.md's table of each run's worst frame. */
#include "plush/quality.h"
#include "plush/sys/core.h"
#include "plush/sys/render.h"
#include "plush/sys/scene.h"
#include "compare/compare_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SURFACE, CAGE };

struct plush__compare_quality {
    plush_quality *surface;       /* one for every run: their models hold the measured vertices first */
    plush_quality **cage;         /* per run, NULL without a cage (bones, direct) */
    plush_quality_figures (*now)[2]; /* per run, this frame */
    bool *valid;                  /* per run: measured this frame */
    plush_quality_figures (*worst)[2]; /* per run, its frame with the largest surface p99.9 strain */
    int64_t *worst_frame;
    double *series;               /* frames x runs x 4: surface p99.9, % beyond, crease p99; cage p99.9 */
    int8_t *bar;                  /* frames x runs: the surface met the bar (1), missed it (0), unmeasured (-1) */
    size_t runs;
};

plush_status plush__compare_quality_setup(plush_compare_study *s, plush_diag *diag)
{
    plush__compare_quality *q = calloc(1, sizeof *q);
    s->quality = q;
    size_t nr = s->run_count;
    const plush_compare_surface *surf = plush_compare_get_surface(s->cmp);
    float(*rest)[3] = malloc((s->model->vertex_count ? s->model->vertex_count : 1) * sizeof *rest);
    uint32_t(*tris)[3] = malloc((surf->triangle_count ? surf->triangle_count : 1) * sizeof *tris);
    if (q) {
        q->runs = nr;
        q->cage = calloc(nr, sizeof *q->cage);
        q->now = calloc(nr, sizeof *q->now);
        q->valid = calloc(nr, sizeof *q->valid);
        q->worst = calloc(nr, sizeof *q->worst);
        q->worst_frame = malloc(nr * sizeof *q->worst_frame);
        q->series = malloc(((size_t)s->frames * nr * 4 + 1) * sizeof *q->series);
        q->bar = malloc(((size_t)s->frames * nr + 1) * sizeof *q->bar);
    }
    plush_status st = q && rest && tris && q->cage && q->now && q->valid && q->worst && q->worst_frame && q->series &&
                              q->bar
                          ? PLUSH_OK
                          : plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    for (size_t v = 0; st == PLUSH_OK && v < s->model->vertex_count; v++)
        memcpy(rest[v], s->model->vertices[v].position, sizeof rest[v]);
    /* the surface's faces name the model's vertices (a part's need not be its first ones) */
    for (size_t t = 0; st == PLUSH_OK && t < surf->triangle_count; t++)
        for (int k = 0; k < 3; k++)
            tris[t][k] = surf->triangles[t][k];
    if (st == PLUSH_OK)
        st = plush_quality_create((const float(*)[3])rest, s->model->vertex_count, (const uint32_t(*)[3])tris,
                                  surf->triangle_count, &q->surface, diag);
    for (size_t r = 0; st == PLUSH_OK && r < nr; r++) {
        q->worst_frame[r] = -1;
        const plush_scene *sc = plush_compare_scene(s->cmp, r);
        const plush_scene_binding *b = sc && plush_scene_proxy_nodes(sc) ? plush_scene_get_binding(sc) : NULL;
        if (b)
            st = plush_quality_create((const float(*)[3])b->proxy.nodes, b->proxy.node_count,
                                      (const uint32_t(*)[3])b->proxy.triangles, b->proxy.triangle_count, &q->cage[r],
                                      diag);
        /* as the run's quality export: the folds between faces pinned at every corner are the bones' */
        if (b && st == PLUSH_OK && !plush_scene_hold_cage_folds(sc, q->cage[r]))
            st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    for (size_t i = 0; st == PLUSH_OK && i < (size_t)s->frames * nr * 4; i++)
        q->series[i] = NAN;
    if (st == PLUSH_OK)
        memset(q->bar, -1, (size_t)s->frames * nr);
    free(rest);
    free(tris);
    return st;
}

void plush__compare_quality_frame(plush_compare_study *s, uint32_t f)
{
    plush__compare_quality *q = s->quality;
    const plush_compare_run_frame *rf = plush_compare_run_frames(s->cmp);
    for (size_t r = 0; r < q->runs; r++) {
        const float(*p)[3] = plush_compare_positions(s->cmp, r);
        const plush_scene *sc = plush_compare_scene(s->cmp, r);
        q->valid[r] = rf[r].valid && p;
        if (!q->valid[r])
            continue;
        plush_quality_figures *now = q->now[r];
        plush_quality_measure(q->surface, p, &now[SURFACE]);
        now[CAGE] = (plush_quality_figures){.volume_ratio = NAN};
        if (q->cage[r])
            plush_quality_measure(q->cage[r], plush_scene_proxy_nodes(sc), &now[CAGE]);
        if (q->worst_frame[r] < 0 || now[SURFACE].strain_p999 > q->worst[r][SURFACE].strain_p999) {
            q->worst_frame[r] = f;
            memcpy(q->worst[r], now, sizeof q->worst[r]);
        }
        double *y = q->series + ((size_t)f * q->runs + r) * 4;
        y[0] = now[SURFACE].strain_p999, y[1] = 100 * now[SURFACE].strain_outside, y[2] = now[SURFACE].crease_p99;
        y[3] = q->cage[r] ? now[CAGE].strain_p999 : NAN;
        q->bar[(size_t)f * q->runs + r] = (int8_t)plush_quality_meets_bar(&now[SURFACE]);
    }
}

int plush__compare_quality_meets_bar(const plush__compare_quality *q, size_t run, uint32_t f)
{
    return q && q->bar && run < q->runs ? q->bar[(size_t)f * q->runs + run] : -1;
}

void plush__compare_quality_csv_header(plush_buf *csv)
{
    static const char *const ab[2] = {"a", "b"};
    for (int k = 0; k < 2; k++)
        buf_printf(csv,
                   ",strain_p50_%s,strain_p99_%s,strain_p999_%s,strain_max_%s,strain_outside_%s,crease_p99_deg_%s,"
                   "crease_max_deg_%s,cage_strain_p50_%s,cage_strain_p99_%s,cage_strain_p999_%s,cage_strain_max_%s,"
                   "cage_strain_outside_%s,cage_crease_p99_deg_%s,cage_crease_max_deg_%s,cage_volume_ratio_%s",
                   ab[k], ab[k], ab[k], ab[k], ab[k], ab[k], ab[k], ab[k], ab[k], ab[k], ab[k], ab[k], ab[k], ab[k],
                   ab[k]);
}

static void csv_figure(plush_buf *csv, double v)
{
    if (isfinite(v))
        buf_printf(csv, ",%.9g", v);
    else
        buf_printf(csv, ",");
}

void plush__compare_quality_csv_row(const plush__compare_quality *q, plush_buf *csv, size_t a, size_t b)
{
    const size_t runs[2] = {a, b};
    for (int k = 0; k < 2; k++) {
        size_t r = runs[k];
        const plush_quality_figures *f = &q->now[r][SURFACE], *c = &q->now[r][CAGE];
        bool cage = q->valid[r] && q->cage[r];
        double v[15] = {f->strain_p50, f->strain_p99, f->strain_p999, f->strain_max, f->strain_outside,
                        f->crease_p99, f->crease_max, c->strain_p50, c->strain_p99, c->strain_p999,
                        c->strain_max, c->strain_outside, c->crease_p99, c->crease_max, c->volume_ratio};
        for (int i = 0; i < 15; i++)
            csv_figure(csv, q->valid[r] && (i < 7 || cage) ? v[i] : NAN);
    }
}

/* Whether a series has a finite point. */
static bool measured(const double *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (isfinite(y[i]))
            return true;
    return false;
}

/* quality.png: three charts stacked -- p99.9 strain (and each cage's), share of edges beyond [2/3, 3/2],
 * crease p99 -- one line per run. */
plush_status plush__compare_quality_plot(plush_compare_study *s, plush_diag *diag)
{
    const plush__compare_quality *q = s->quality;
    size_t n = s->frames, nr = q->runs;
    double *x = malloc((n ? n : 1) * sizeof *x), *ys = malloc((n ? n : 1) * nr * 4 * sizeof *ys);
    plush_plot_series *series = calloc(2 * nr, sizeof *series);
    char(*names)[64] = calloc(nr, sizeof *names);
    plush_image chart[3] = {{0}}, all = {0};
    const char *file = diag->file;
    plush__compare_name_file(s, "quality.png", diag);
    plush_status st = x && ys && series && names && s->failed_file
                          ? PLUSH_OK
                          : plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    for (size_t f = 0; st == PLUSH_OK && f < n; f++)
        x[f] = (double)f;
    for (size_t r = 0; st == PLUSH_OK && r < nr; r++)
        for (int k = 0; k < 4; k++)
            for (size_t f = 0; f < n; f++)
                ys[(r * 4 + (size_t)k) * n + f] = q->series[(f * nr + r) * 4 + (size_t)k];
    static const char *const title[3] = {"99.9th percentile edge strain (length / rest)",
                                         "edges beyond 2/3 .. 3/2 of their rest length", "99th percentile crease"};
    static const char *const unit[3] = {"strain", "% of edges", "degrees"};
    for (int c = 0; st == PLUSH_OK && c < 3; c++) {
        size_t ns = 0;
        for (size_t r = 0; r < nr; r++) {
            /* direct/4 simulates a quarter of the surface: its figures on the whole one are not measured;
             * neither is a run that has no finite figure */
            if (!run_available(s, r) || (s->has_quarter && !s->has_finer && r == s->quarter_run) ||
                !measured(ys + (r * 4) * n, n))
                continue;
            series[ns++] = (plush_plot_series){.name = run_name(s, r), .x = x, .y = ys + (r * 4 + (size_t)c) * n,
                                               .count = n, .colour = (int)r + 1};
        }
        /* the cages after the runs, each in its run's colour dashed (a run keeps its colour in every chart of
         * the report, and its cage goes with it) */
        for (size_t r = 0; c == 0 && r < nr; r++)
            if (q->cage[r] && run_available(s, r) && measured(ys + (r * 4 + 3) * n, n)) {
                snprintf(names[r], sizeof names[r], "%s cage", run_name(s, r));
                series[ns++] = (plush_plot_series){.name = names[r], .x = x, .y = ys + (r * 4 + 3) * n, .count = n,
                                                   .colour = (int)r + 1 + PLUSH_PLOT_COLOURS};
            }
        st = plush_image_create(900, 420, &chart[c], diag);
        if (st == PLUSH_OK)
            st = plush_plot_draw(&(plush_plot){.title = title[c], .x_label = "frame", .y_label = unit[c],
                                               .series = series, .series_count = ns, .y_from_zero = true},
                                 &chart[c], diag);
    }
    if (st == PLUSH_OK)
        st = plush_image_create(900, 3 * 420, &all, diag);
    for (int c = 0; st == PLUSH_OK && c < 3; c++)
        memcpy(all.rgb + (size_t)c * 420 * 900 * 3, chart[c].rgb, (size_t)420 * 900 * 3);
    if (st == PLUSH_OK)
        st = plush_image_write_png(&all, s->failed_file, diag);
    if (st == PLUSH_OK)
        diag->file = file;
    for (int c = 0; c < 3; c++)
        plush_image_free(&chart[c]);
    plush_image_free(&all);
    free(x);
    free(ys);
    free(series);
    free(names);
    return st;
}

void plush__compare_quality_report(const plush_compare_study *s, plush_buf *md)
{
    const plush__compare_quality *q = s->quality;
    buf_printf(md, "## Surface quality, worst frame (largest 99.9th percentile strain)\n\n"
                   "| run | frame | strain p50 / p99 / p99.9 / max | beyond 1.5× | crease p99 / max (°) | cage strain "
                   "p99.9 / max | cage beyond 1.5× | cage crease p99 (°) | cage volume |\n"
                   "|---|---:|---|---:|---|---|---:|---:|---:|\n");
    for (size_t r = 0; r < q->runs; r++) {
        if (q->worst_frame[r] < 0)
            continue;
        if (s->has_quarter && !s->has_finer && r == s->quarter_run) {
            /* its dropped vertices stay where the bones put them, so the whole surface's figures mean nothing */
            buf_printf(md, "| %s | | not measured: it simulates a quarter of the vertices, the rest stay on their "
                           "bones | | | | | | |\n", run_name(s, r));
            continue;
        }
        const plush_quality_figures *f = &q->worst[r][SURFACE], *c = &q->worst[r][CAGE];
        buf_printf(md, "| %s | %lld | %.3f / %.3f / %.3f / %.3f | %.2f%% | %.1f / %.1f", run_name(s, r),
                   (long long)q->worst_frame[r], f->strain_p50, f->strain_p99, f->strain_p999, f->strain_max,
                   100 * f->strain_outside, f->crease_p99, f->crease_max);
        if (q->cage[r])
            buf_printf(md, " | %.3f / %.3f | %.2f%% | %.1f | %.3f |\n", c->strain_p999, c->strain_max,
                       100 * c->strain_outside, c->crease_p99, c->volume_ratio);
        else
            buf_printf(md, " | | | | |\n");
    }
    buf_printf(md, "\nStrain is an edge's length against rest over the detailed surface (vertices welded by "
                   "position); crease is the change of the angle between the two faces of an edge; the cage's "
                   "figures are at the same frame. quality.png has them frame by frame, metrics.csv every figure.\n\n");
}

void plush__compare_quality_free(plush__compare_quality *q)
{
    if (!q)
        return;
    plush_quality_destroy(q->surface);
    for (size_t r = 0; q->cage && r < q->runs; r++)
        plush_quality_destroy(q->cage[r]);
    free(q->cage);
    free(q->now);
    free(q->valid);
    free(q->worst);
    free(q->worst_frame);
    free(q->series);
    free(q->bar);
    free(q);
}
