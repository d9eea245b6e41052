/* plush compare's report.md: the verdict, the runs, the pairs' errors, the speed-ups and what they mean. */
#include "compare/compare_internal.h"
#include "plush/sys/core.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void verdict(const plush_compare_study *s, plush_buf *md, float size)
{
    const run_stats *proxy = &s->rstats[RUN_PROXY], *direct = &s->rstats[RUN_DIRECT];
    const pair_stats *err = &s->pstats[0];
    plush_compare_run_info dinfo;
    plush_compare_get_run_info(s->cmp, RUN_DIRECT, &dinfo);
    const char *pname = run_name(s, RUN_PROXY);
    if (!dinfo.available || err->frames == 0) {
        buf_printf(md, "**The direct simulation did not run** (%s), so there is no speed-up and no error "
                       "against the ground truth in this report. The tables give the %s run against plain bones "
                       "(how far the soft body moves the surface) and the time of each run.\n\n",
                   dinfo.reason[0] ? dinfo.reason : "it has no frame", pname);
        return;
    }
    double tp = ms_per_frame(proxy), td = ms_per_frame(direct);
    double rms = err->sum[0] / err->frames, p95 = err->sum[1] / err->frames, worst = err->max[2];
    /* three figures, so a ratio under ten reads as the times give it (one decimal made 0.571 read 0.6) */
    buf_printf(md, "**%s is %.3g× faster than direct**: physics + skinning take %.3f ms per frame against "
                   "%.3f ms (thread CPU time, the same run).\n",
               pname, td / tp, tp, td);
    buf_printf(md, "Its surface lies **%.3g model units** from the direct simulation (RMS over the vertices, mean "
                   "over %u frames) = **%.2f%% of the model's size** (its %.3g-unit bounding-box diagonal); "
                   "95%% of the vertices within %.3g (%.2f%%) on average, the worst vertex at the worst frame "
                   "%.3g (%.2f%%).\n\n",
               rms, err->frames, 100 * rms / size, (double)size, p95, 100 * p95 / size, worst, 100 * worst / size);
    const pair_stats *q = s->has_quarter ? &s->pstats[s->quarter_pair] : NULL;
    if (q && q->frames)
        buf_printf(md, "**The reference converges**: direct on a quarter of the triangles (%zu of %zu) lies %.3g "
                       "units (RMS, mean over %u frames, on the vertices it simulates) from full direct; the "
                       "proxy lies %.3g from it. Direct is the proxy's material at the detailed resolution: its "
                       "position iterations scaled by the ratio of the cage's edge length to the detail's, its link "
                       "stiffness the one the cage's links reach in a step, its pressure the cage's per-node push "
                       "divided by that ratio, its pins on the detailed surface under the cage's pinned "
                       "triangles (a lone pin: the detailed nodes nearest it).\n\n",
                   s->quarter.triangles, s->quarter.source_pieces, q->sum[0] / q->frames, q->frames, rms);
    if (dinfo.stopped)
        buf_printf(md, "The direct run stopped at frame %u (%s): the comparison covers the %u frames before it.\n\n",
                   dinfo.stopped_at, dinfo.reason, dinfo.frames);
}

static void runs_table(const plush_compare_study *s, plush_buf *md)
{
    buf_printf(md, "## Runs\n\n| run | frames | physics ms/frame | skinning ms/frame | total ms/frame | "
                   "volume ratio to rest (min … max) | notes |\n|---|---:|---:|---:|---:|---|---|\n");
    for (size_t r = 0; r < s->run_count; r++) {
        plush_compare_run_info info;
        plush_compare_get_run_info(s->cmp, r, &info);
        const run_stats *st = &s->rstats[r];
        if (!info.available) {
            buf_printf(md, "| %s | 0 | | | | | not run: %s |\n", info.name, info.reason);
            continue;
        }
        char vol[64] = "not measured";
        if (st->vol_frames)
            snprintf(vol, sizeof vol, "%.4f … %.4f", st->vol_min, st->vol_max);
        char notes[PLUSH_DIAG_MESSAGE + 256] = "";
        if (info.stopped)
            snprintf(notes, sizeof notes, "stopped at frame %u: %s", info.stopped_at, info.reason);
        else if (info.failures)
            snprintf(notes, sizeof notes, "%zu soft bodies blew up (first at frame %lld) and stayed frozen; ",
                     info.failures, (long long)info.first_failure);
        size_t vi = r - RUN_PROXY - (s->own_proxy ? 1 : 0);
        if (r >= RUN_PROXY + (s->own_proxy ? 1 : 0) && vi < s->variant_count) {
            /* a cage in several pieces is several soft bodies, and a piece without a pin falls */
            const plush_compare_variant *v = &s->variants[vi];
            size_t used = strlen(notes);
            char how[96];
            if (v->wrapped)
                snprintf(how, sizeof how, "one wrap around the surface's %zu pieces", v->source_pieces);
            else
                snprintf(how, sizeof how, "the surface (%zu piece%s) simplified", v->source_pieces,
                         v->source_pieces == 1 ? "" : "s");
            char where[96] = "";
            if (v->pinned)
                snprintf(where, sizeof where, " (y %.2f … %.2f; the cage spans y %.2f … %.2f)", (double)v->pin_y[0],
                         (double)v->pin_y[1], (double)v->cage_y[0], (double)v->cage_y[1]);
            snprintf(notes + used, sizeof notes - used, "generated cage (%s): %zu triangles (asked %zu) in %zu "
                     "piece%s, %zu pinned vertices%s", how, v->triangles, v->target, v->pieces,
                     v->pieces == 1 ? "" : "s", v->pinned, where);
        }
        buf_printf(md, "| %s | %u | %.3f | %.3f | %.3f | %s | %s |\n", info.name, st->frames,
                   st->frames ? 1e3 * st->physics / st->frames : 0.0, st->frames ? 1e3 * st->skinning / st->frames : 0.0,
                   ms_per_frame(st), vol, notes);
    }
    buf_printf(md, "\n");
}

static void pairs_table(const plush_compare_study *s, plush_buf *md, float size)
{
    buf_printf(md, "## Error, mean over frames / max over frames\n\n| pair | RMS distance | 95th percentile | "
                   "max distance | RMS / size | normal angle mean (°) | normal angle max (°) |\n"
                   "|---|---|---|---|---:|---|---|\n");
    for (size_t p = 0; p < s->pair_count; p++) {
        if (!pair_shown(s, p))
            continue;
        const pair_stats *ps = &s->pstats[p];
        buf_printf(md, "| %s vs %s", run_name(s, s->pairs[p].a), run_name(s, s->pairs[p].b));
        if (!ps->frames) {
            buf_printf(md, " | no common frame | | | | | |\n");
            continue;
        }
        for (int k = 0; k < 5; k++) {
            buf_printf(md, " | %.4g / %.4g", ps->sum[k] / ps->frames, ps->max[k]);
            if (k == 2)
                buf_printf(md, " | %.2f%%", 100 * ps->sum[0] / ps->frames / size);
        }
        buf_printf(md, " |\n");
    }
    buf_printf(md, "\n");
}

static void speedups(const plush_compare_study *s, plush_buf *md)
{
    if (!s->rstats[RUN_DIRECT].frames)
        return;
    buf_printf(md, "## Speed-up over direct (physics + skinning per frame)\n\n| run | ms/frame | speed-up |\n"
                   "|---|---:|---:|\n");
    double td = ms_per_frame(&s->rstats[RUN_DIRECT]);
    for (size_t r = 0; r < s->run_count; r++)
        if (r != RUN_DIRECT && s->rstats[r].frames)
            buf_printf(md, "| %s | %.3f | %.1f× |\n", run_name(s, r), ms_per_frame(&s->rstats[r]),
                       td / ms_per_frame(&s->rstats[r]));
    buf_printf(md, "| direct | %.3f | 1× |\n\n", td);
}

static void meaning(const plush_compare_study *s, plush_buf *md, float size)
{
    const plush_compare_surface *surf = plush_compare_get_surface(s->cmp);
    buf_printf(md, "## What it means\n\n");
    const pair_stats *pd = &s->pstats[0], *bd = &s->pstats[1];
    if (pd->frames && bd->frames && bd->sum[0] > 0) {
        double share = pd->sum[0] / bd->sum[0];
        buf_printf(md, "- Plain bones (no soft body) lie %.3g units (RMS) from direct; the proxy %.3g. The proxy %s "
                       "%.0f%% of the soft motion plain bones miss.\n",
                   bd->sum[0] / bd->frames, pd->sum[0] / pd->frames, share <= 1 ? "reproduces" : "misses more than",
                   share <= 1 ? 100 * (1 - share) : 100 * (share - 1));
    }
    if (pd->frames) {
        double rel = pd->sum[0] / pd->frames / size;
        buf_printf(md, "- An RMS error of %.2f%% of the model's size is %s.\n", 100 * rel,
                   rel < 0.01   ? "hard to tell apart from the direct simulation when watched at full size"
                   : rel < 0.03 ? "visible side by side but keeps the same character of motion"
                                : "a clearly different motion: try a finer cage (--proxy-triangles)");
    }
    buf_printf(md, "- Distances are in model units (1 unit ≈ 8 cm); the model's size is its bounding-box "
                   "diagonal at rest, %.4g units, over %zu measured vertices (those of every material no soft "
                   "body owns).\n",
               (double)size, surf->vertex_count);
    buf_printf(md, "- The normal angle says how differently the surface is lit: a few degrees are invisible, "
                   "tens of degrees show as creases or flat spots. Both runs' normals are the surface's own, "
                   "area-weighted over its faces from each run's positions, so they agree where the positions "
                   "do.\n");
    if (surf->closed_pieces)
        buf_printf(md, "- The volume ratio is measured on the %zu closed pieces of the surface (of %zu); below 1 "
                       "the toy is squashed, above 1 inflated.%s\n",
                   surf->closed_pieces, surf->pieces,
                   surf->closed_pieces < surf->pieces ? " Open pieces enclose nothing and are left out." : "");
    else
        buf_printf(md, "- The volume ratio is not measured: no piece of the surface is closed (welded by position, "
                       "every edge shared by two faces in opposite directions).\n");
    buf_printf(md, "- Times are thread CPU time of the physics step (pins, kinematic bodies, Bullet, write-back) "
                   "and of skinning (bones, proxy frames, proxy skinning), per frame.\n\n");
}

plush_status plush__compare_write_report(const plush_compare_study *s, float size, const char *path, plush_diag *diag)
{
    plush_buf md = {0};
    const char *base = strrchr(s->desc.model_file, '/');
    buf_printf(&md, "# plush compare: %s\n\n", base ? base + 1 : s->desc.model_file);
    verdict(s, &md, size);
    runs_table(s, &md);
    plush__compare_quality_report(s, &md);
    pairs_table(s, &md, size);
    speedups(s, &md);
    meaning(s, &md, size);
    buf_printf(&md, "## Files\n\n- `metrics.csv`: one row per frame and run pair (columns: frame, run_a, run_b, "
                    "rms, p95, max, normal_mean_deg, normal_max_deg, volume_ratio_a, volume_ratio_b, physics_ms_a, "
                    "skinning_ms_a, physics_ms_b, skinning_ms_b).\n");
    buf_printf(&md, "- `error.png`, `time.png`: RMS distance of each pair and physics + skinning of each run, per "
                    "frame.%s\n", s->variant_count ? " `error_by_size.png`, `time_by_size.png`: the same against the "
                                                     "proxy's triangle count." : "");
    buf_printf(&md, "- Pictures (bones | %s | direct | its error as colours, blue 0 to red at that frame's 95th "
                    "percentile):", run_name(s, RUN_PROXY));
    for (size_t i = 0; i < s->pictured_count; i++)
        buf_printf(&md, " `frame_%05u.png`", s->pictured[i]);
    bool drawn = false;
    for (size_t i = 0; i < s->pictured_count; i++)
        drawn |= s->pictured[i] == s->worst_frame;
    if (s->worst_rms >= 0)
        buf_printf(&md, drawn ? "; the largest RMS error is at frame %u" : " and the frame with the largest RMS error, "
                                "`frame_%05u.png`", s->worst_frame);
    buf_printf(&md, ".\n");
    buf_printf(&md, "- Input: `%s`%s%s, %u frames at %g fps, physics %g Hz.\n", s->desc.model_file,
               s->desc.motion_file ? ", motion " : "", s->desc.motion_file ? s->desc.motion_file : "", s->frames,
               (double)(s->desc.fps ? s->desc.fps : PLUSH_SCENE_DEFAULT_FPS),
               (double)(s->desc.physics_hz ? s->desc.physics_hz : PLUSH_WORLD_DEFAULT_HZ));
    buf_printf(&md, s->desc.seed ? "- Proxy skinning: the original method (`--seed`): nearest four triangles, percent "
                                   "weights, each triangle's own frame.\n"
                                 : "- Proxy skinning: weights smoothed over the surface (reach %g proxy edges), frames "
                                   "fitted to the cage nodes within %d rings and %g of their piece's size (along the cage).\n",
               PLUSH_PROXY_SMOOTH_RADIUS, PLUSH_SCENE_PATCH_RINGS, (double)PLUSH_SCENE_PATCH_REACH);
    plush_status st = md.failed ? plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory")
                                : plush_file_write_atomic(path, md.data, md.size, diag);
    plush_buf_free(&md);
    return st;
}
