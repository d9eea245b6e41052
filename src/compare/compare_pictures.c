/* plush compare's pictures: the plots over time and against proxy size, and the side-by-side frames
 * (bones | proxy | direct | error as colours). */
#include "compare/compare_internal.h"
#include "plush/sys/core.h"
#include "plush/sys/render.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- plots --------------------------------------------------------------------------------------- */

/* A fresh diag naming file (no error, no warning). */
static void fresh_diag(plush_diag *d, const char *file)
{
    memset(d, 0, sizeof *d);
    d->file = file;
    plush_diag_reset(d);
}

/* Draws and writes one plot; a failure names the file in diag->file. */
static plush_status write_plot(plush_compare_study *s, const char *name, const plush_plot *plot, plush_diag *diag)
{
    plush_image img = {0};
    const char *file = diag->file;
    plush__compare_name_file(s, name, diag);
    if (!s->failed_file)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    plush_status st = plush_image_create(900, 520, &img, diag);
    if (st == PLUSH_OK)
        st = plush_plot_draw(plot, &img, diag);
    if (st == PLUSH_OK)
        st = plush_image_write_png(&img, s->failed_file, diag);
    if (st == PLUSH_OK)
        diag->file = file;
    plush_image_free(&img);
    return st;
}

/* error.png and time.png: one line per pair (RMS) and per run (ms per frame). */
plush_status plush__compare_plots_over_time(plush_compare_study *s, plush_diag *diag)
{
    size_t n = s->frames, np = 0, nr = 0;
    double *x = malloc(n * sizeof *x), *ys = malloc(n * (s->pair_count + s->run_count) * sizeof *ys);
    plush_plot_series *series = calloc(s->pair_count + s->run_count, sizeof *series);
    char (*names)[112] = calloc(s->pair_count, sizeof *names);
    plush_status st = PLUSH_OK;
    if (!x || !ys || !series || !names) {
        st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        goto done;
    }
    for (size_t f = 0; f < n; f++)
        x[f] = (double)f;
    for (size_t p = 0; p < s->pair_count; p++) {
        if (!pair_shown(s, p))
            continue;
        double *y = ys + np * n;
        for (size_t f = 0; f < n; f++)
            y[f] = s->series_pair[f * s->pair_count + p];
        snprintf(names[np], sizeof names[np], "%s vs %s", run_name(s, s->pairs[p].a), run_name(s, s->pairs[p].b));
        /* a pair keeps its colour in every chart: its place among the pairs */
        series[np] = (plush_plot_series){.name = names[np], .x = x, .y = y, .count = n, .colour = (int)p + 1};
        np++;
    }
    /* a log axis: the swing's errors are ten to a hundred times those standing still, which a linear one
     * flattened to its floor, where runs settle apart */
    st = write_plot(s, "error.png",
                    &(plush_plot){.title = "RMS vertex distance over time", .x_label = "frame",
                                  .y_label = "model units (log scale)", .series = series, .series_count = np,
                                  .y_log = true},
                    diag);
    for (size_t r = 0; st == PLUSH_OK && r < s->run_count; r++) {
        if (!run_available(s, r))
            continue;
        double *y = ys + (np + nr) * n;
        for (size_t f = 0; f < n; f++)
            y[f] = s->series_run[f * s->run_count + r];
        series[np + nr] = (plush_plot_series){.name = run_name(s, r), .x = x, .y = y, .count = n,
                                              .colour = (int)r + 1};
        nr++;
    }
    if (st == PLUSH_OK)
        st = write_plot(s, "time.png",
                        /* a log axis: direct is hundreds of times the proxy's and bones' cost, which a
                         * linear one flattened to its floor */
                        &(plush_plot){.title = "physics + skinning per frame", .x_label = "frame",
                                      .y_label = "ms (log scale)", .series = series + np, .series_count = nr,
                                      .y_log = true},
                        diag);
done:
    free(x);
    free(ys);
    free(series);
    free(names);
    return st;
}

/* error_by_size.png and time_by_size.png: the generated cages (and the model's own) by triangle count. */
plush_status plush__compare_plots_by_size(plush_compare_study *s, plush_diag *diag)
{
    size_t k = s->variant_count + (s->own_proxy ? 1 : 0);
    double x[64], rms_d[64], max_d[64], rms_b[64], t[64], td[2], tx[2];
    if (s->variant_count == 0 || k > 64)
        return PLUSH_OK;
    /* sorted by size: the model's own cage has its soft body's triangle count */
    size_t order[64];
    for (size_t i = 0; i < k; i++) {
        size_t r = RUN_PROXY + i;
        size_t tri = 0;
        if (s->own_proxy && i == 0) {
            const plush_compare_surface *surf = plush_compare_get_surface(s->cmp);
            (void)surf;
            const plush_pmx_model *m = s->model;
            for (size_t b = 0; b < m->soft_body_count; b++)
                if (m->soft_bodies[b].shape == PLUSH_PMX_SOFT_TRIMESH && m->soft_bodies[b].material >= 0 &&
                    (size_t)m->soft_bodies[b].material < m->material_count)
                    tri += (size_t)m->materials[m->soft_bodies[b].material].index_count / 3;
        } else {
            tri = s->variants[i - (s->own_proxy ? 1 : 0)].triangles;
        }
        x[i] = (double)tri;
        order[i] = r;
    }
    for (size_t i = 1; i < k; i++) /* insertion sort of a handful */
        for (size_t j = i; j > 0 && x[j] < x[j - 1]; j--) {
            double tx0 = x[j];
            x[j] = x[j - 1], x[j - 1] = tx0;
            size_t to = order[j];
            order[j] = order[j - 1], order[j - 1] = to;
        }
    for (size_t i = 0; i < k; i++) {
        size_t r = order[i], pd = 0, pb = 0;
        for (size_t p = 0; p < s->pair_count; p++) {
            if (s->pairs[p].a == r && s->pairs[p].b == RUN_DIRECT)
                pd = p;
            if (s->pairs[p].a == r && s->pairs[p].b == RUN_BONES)
                pb = p;
        }
        const pair_stats *a = &s->pstats[pd], *b = &s->pstats[pb];
        rms_d[i] = a->frames ? a->sum[0] / a->frames : NAN;
        max_d[i] = a->frames ? a->max[2] : NAN;
        rms_b[i] = b->frames ? b->sum[0] / b->frames : NAN;
        t[i] = ms_per_frame(&s->rstats[r]);
    }
    plush_plot_series es[3] = {{.name = "RMS vs direct (mean)", .x = x, .y = rms_d, .count = k},
                               {.name = "max vs direct (worst)", .x = x, .y = max_d, .count = k},
                               {.name = "RMS vs bones (mean)", .x = x, .y = rms_b, .count = k}};
    plush_status st = write_plot(s, "error_by_size.png",
                                 /* a log axis: the worst vertex lies ten or more times the mean RMS away */
                                 &(plush_plot){.title = "error against proxy size", .x_label = "proxy triangles",
                                               .y_label = "model units (log scale)", .series = es, .series_count = 3,
                                               .markers = true, .y_log = true},
                                 diag);
    tx[0] = x[0], tx[1] = x[k - 1];
    td[0] = td[1] = ms_per_frame(&s->rstats[RUN_DIRECT]);
    plush_plot_series ts[2] = {{.name = "proxy", .x = x, .y = t, .count = k, .colour = RUN_PROXY + 1},
                               {.name = "direct", .x = tx, .y = td, .count = 2, .colour = RUN_DIRECT + 1}};
    if (st == PLUSH_OK)
        st = write_plot(s, "time_by_size.png",
                        &(plush_plot){.title = "physics + skinning per frame against proxy size",
                                      .x_label = "proxy triangles", .y_label = "ms (log scale)", .series = ts,
                                      .series_count = s->rstats[RUN_DIRECT].frames ? 2 : 1, .markers = true,
                                      .y_log = true},
                        diag);
    return st;
}

/* ---- pictures ------------------------------------------------------------------------------------ */

enum { PANEL_W = 300, PANEL_H = 380, LABEL_H = 44, PANELS = 4 };
static const uint8_t ink[3] = {20, 20, 20}, paper[3] = {255, 255, 255}, mute[3] = {120, 120, 120};

/* The pair whose error the fourth panel shows: proxy against direct, or against bones without direct. */
static size_t picture_pair(const plush_compare_study *s)
{
    return run_available(s, RUN_DIRECT) ? 0 : 1 + (s->pair_count - s->has_quarter - 1) / 2;
}

static void render_panel(plush_compare_study *s, int slot, const float (*pos)[3], const float (*nrm)[3],
                         const float (*colors)[3], const plush_render_view *view, const char *label,
                         plush_diag *diag)
{
    const plush_compare_surface *surf = plush_compare_get_surface(s->cmp);
    plush_image_fill(&s->panel, paper);
    plush_diag d;
    fresh_diag(&d, NULL);
    if (pos) {
        plush_render_mesh mesh = {.vertex_count = s->model->vertex_count, .positions = pos, .normals = nrm,
                                  .index_count = 3 * surf->triangle_count, .indices = &surf->triangles[0][0],
                                  .colors = colors};
        if (plush_render(&mesh, view, &s->panel, &d) != PLUSH_OK && !s->render_failed) {
            s->render_failed = true; /* said once: Embree missing fails every picture the same way */
            char line[PLUSH_DIAG_MESSAGE];
            plush_diag_format(&d, line, sizeof line);
            plush_diag_warn(diag, -1, NULL, -1, "no pictures: %s", line);
        }
    } else {
        const char *none = "not run";
        plush_image_text(&s->panel, (PANEL_W - plush_image_text_width(none, 2)) / 2, PANEL_H / 2, none, 2, mute);
    }
    plush_image_blit(&s->sheet, &s->panel, slot * PANEL_W, LABEL_H);
    plush_image_text(&s->sheet, slot * PANEL_W + (PANEL_W - plush_image_text_width(label, 2)) / 2, 12, label, 2, ink);
}

/* One picture: bones | proxy | direct | the pair's per-vertex distance as colours on the proxy surface. */
static void picture(plush_compare_study *s, uint32_t frame, const float (*const pos[3])[3], const float (*const nrm[3])[3],
                    const float *dist, double p95, plush_diag *diag)
{
    if (s->render_failed)
        return;
    const plush_compare_surface *surf = plush_compare_get_surface(s->cmp);
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int r = 0; r < 3; r++)
        for (size_t i = 0; pos[r] && i < surf->vertex_count; i++)
            for (int k = 0; k < 3; k++) {
                float v = pos[r][surf->vertices[i]][k];
                if (isfinite(v))
                    lo[k] = fminf(lo[k], v), hi[k] = fmaxf(hi[k], v);
            }
    plush_render_view view;
    plush_render_view_fit_box(lo, hi, (float)PANEL_W / PANEL_H, &view);
    /* one scale for every picture of a report, so that two frames can be told apart by their colours: red
     * at 3% of the model's size, where the report calls an error a clearly different motion (a larger one
     * stays red); the bar under the panel says it */
    (void)p95;
    float scale = PLUSH__COMPARE_RED_SHARE * s->size;
    for (size_t i = 0; i < surf->vertex_count; i++)
        plush_colormap(dist ? dist[i] / scale : NAN, s->colors[surf->vertices[i]]);
    plush_image_fill(&s->sheet, paper);
    size_t pp = picture_pair(s);
    char label[128];
    render_panel(s, 0, pos[0], nrm[0], NULL, &view, "bones", diag);
    render_panel(s, 1, pos[1], nrm[1], NULL, &view, run_name(s, RUN_PROXY), diag);
    render_panel(s, 2, pos[2], nrm[2], NULL, &view, "direct", diag);
    snprintf(label, sizeof label, "error vs %s", run_name(s, s->pairs[pp].b));
    render_panel(s, 3, pos[1], nrm[1], (const float(*)[3])s->colors, &view, label, diag);
    /* the colour bar under the error panel */
    int bx = 3 * PANEL_W + 20, bw = PANEL_W - 40, by = LABEL_H + PANEL_H + 8;
    for (int i = 0; i < bw; i++) {
        float c[3];
        plush_colormap((float)i / (float)(bw - 1), c);
        uint8_t rgb[3] = {(uint8_t)lroundf(255 * c[0]), (uint8_t)lroundf(255 * c[1]), (uint8_t)lroundf(255 * c[2])};
        plush_image_rect(&s->sheet, bx + i, by, 1, 14, rgb);
    }
    snprintf(label, sizeof label, "0 .. %.3g units (%.1f%% of size)", (double)scale, 100.0 * scale / s->size);
    plush_image_text(&s->sheet, bx, by + 20, label, 1, ink);
    snprintf(label, sizeof label, "frame %u", frame);
    plush_image_text(&s->sheet, 10, by + 8, label, 2, ink);
    snprintf(label, sizeof label, "frame_%05u.png", frame);
    char *path = plush__compare_path(s->desc.out_dir, label);
    plush_diag d;
    fresh_diag(&d, path);
    if (!path)
        plush_diag_fail(&d, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    if (!path || plush_image_write_png(&s->sheet, path, &d) != PLUSH_OK) {
        s->render_failed = true;
        char line[PLUSH_DIAG_MESSAGE];
        plush_diag_format(&d, line, sizeof line);
        plush_diag_warn(diag, -1, NULL, -1, "no more pictures: %s", line);
    }
    free(path);
}

plush_status plush__compare_pictures_setup(plush_compare_study *s, plush_diag *diag)
{
    size_t nv = s->model->vertex_count ? s->model->vertex_count : 1;
    plush_diag d;
    fresh_diag(&d, s->desc.out_dir);
    s->keep_pos = calloc(nv, sizeof *s->keep_pos);
    s->keep_nrm = calloc(nv, sizeof *s->keep_nrm);
    s->keep_dist = calloc(plush_compare_get_surface(s->cmp)->vertex_count + 1, sizeof *s->keep_dist);
    s->colors = calloc(nv, sizeof *s->colors);
    if (!s->keep_pos || !s->keep_nrm || !s->keep_dist || !s->colors ||
        plush_image_create(PANEL_W, PANEL_H, &s->panel, &d) != PLUSH_OK ||
        plush_image_create(PANELS * PANEL_W, LABEL_H + PANEL_H + 44, &s->sheet, &d) != PLUSH_OK)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    /* the middle and the last frame as they pass; the worst at the end */
    s->pictured[s->pictured_count++] = s->frames / 2;
    if (s->frames - 1 != s->frames / 2)
        s->pictured[s->pictured_count++] = s->frames - 1;
    s->worst_rms = -1;
    return PLUSH_OK;
}

static const size_t picture_runs[3] = {RUN_BONES, RUN_PROXY, RUN_DIRECT};

void plush__compare_pictures_frame(plush_compare_study *s, uint32_t f, plush_diag *diag)
{
    const float(*pos[3])[3], (*nrm[3])[3];
    for (int r = 0; r < 3; r++) {
        pos[r] = plush_compare_run_frames(s->cmp)[picture_runs[r]].valid ? plush_compare_positions(s->cmp, picture_runs[r]) : NULL;
        nrm[r] = pos[r] ? plush_compare_normals(s->cmp, picture_runs[r]) : NULL;
    }
    size_t pp = picture_pair(s);
    const plush_compare_pair_frame *pf = &plush_compare_pair_frames(s->cmp)[pp];
    const float *dist = pf->valid ? plush_compare_distances(s->cmp, pp) : NULL;
    for (size_t i = 0; i < s->pictured_count; i++)
        if (s->pictured[i] == f)
            picture(s, f, pos, nrm, dist, pf->valid ? pf->error.p95 : 0, diag);
    if (!pf->valid || pf->error.rms <= s->worst_rms)
        return;
    /* a new worst frame: keep what its picture needs */
    s->worst_rms = pf->error.rms;
    s->worst_p95 = pf->error.p95;
    s->worst_frame = f;
    size_t nv = s->model->vertex_count;
    for (size_t v = 0; v < nv; v++)
        for (int r = 0; r < 3; r++)
            if (pos[r]) {
                memcpy(s->keep_pos[v][r], pos[r][v], sizeof s->keep_pos[v][r]);
                memcpy(s->keep_nrm[v][r], nrm[r][v], sizeof s->keep_nrm[v][r]);
            }
    memcpy(s->keep_dist, dist, plush_compare_get_surface(s->cmp)->vertex_count * sizeof *dist);
}

void plush__compare_pictures_finish(plush_compare_study *s, plush_diag *diag)
{
    if (s->worst_rms < 0)
        return;
    for (size_t i = 0; i < s->pictured_count; i++)
        if (s->pictured[i] == s->worst_frame)
            return; /* already drawn */
    /* the kept copy is interleaved per vertex (one allocation, every run in reach); the renderer wants one
     * array per run, so unpack into the colour buffer's neighbour arrays one run at a time */
    size_t nv = s->model->vertex_count;
    float(*p)[3] = malloc((nv ? nv : 1) * 6 * sizeof *p);
    if (!p) {
        plush_diag_warn(diag, -1, NULL, -1, "out of memory: no picture of the worst frame");
        return;
    }
    const float(*pos[3])[3], (*nrm[3])[3];
    for (int r = 0; r < 3; r++) {
        bool have = plush_compare_positions(s->cmp, picture_runs[r]) != NULL;
        pos[r] = nrm[r] = NULL;
        if (!have)
            continue;
        float(*pr)[3] = p + (size_t)(2 * r) * nv, (*nr)[3] = p + (size_t)(2 * r + 1) * nv;
        for (size_t v = 0; v < nv; v++) {
            memcpy(pr[v], s->keep_pos[v][r], sizeof pr[v]);
            memcpy(nr[v], s->keep_nrm[v][r], sizeof nr[v]);
        }
        pos[r] = (const float(*)[3])pr, nrm[r] = (const float(*)[3])nr;
    }
    picture(s, s->worst_frame, pos, nrm, s->keep_dist, s->worst_p95, diag);
    free(p);
}
