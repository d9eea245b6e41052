/* plush compare's report.md: the verdict, the runs, the pairs' errors, the speed-ups and what they mean. */
#include "compare/compare_internal.h"
#include "plush/sys/core.h"
#include "core/platform.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* What the verdict rests on, over the frames where proxy and bones were both measured against direct and
 * direct itself met the plush surface bar (a reference that pleats or collapses is no ground truth there). */
typedef struct judgement {
    uint32_t frames;              /* proxy and bones measured against direct */
    uint32_t left_out;            /* of those, direct off the bar: left out */
    uint32_t first_left_out;
    uint32_t frozen;              /* of those, direct's blown-up soft bodies frozen: left out as well */
    size_t blown;                 /* how many of direct's soft bodies blew up */
    int64_t first_blown;          /* and the frame the first did */
    uint32_t used;
    double proxy, bones;          /* mean RMS over the used frames */
    double proxy_normal, bones_normal;   /* mean normal angle, degrees */
    uint32_t worst;               /* the used frame where the proxy lies farthest (RMS) */
    double proxy_worst, bones_at_worst;
    bool better;                  /* closer than bones on the mean and at its worst frame */
    uint32_t quarter_frames, off_frames; /* convergence: frames measured, frames where direct/4 lies over half
                                            the proxy's distance from direct */
    uint32_t quarter_worst;
    double quarter_ratio;         /* direct/4's distance over the proxy's, at its worst frame */
    double quarter_mean;          /* direct/4's distance from direct, mean over the frames kept */
    double off_proxy, off_quarter; /* at the frames off: the proxy's and direct/4's mean distance from direct */
} judgement;

/* What the sizes are a share of: the part compared, or the whole visible model. */
static const char *whose(const plush_compare_study *s)
{
    return s->desc.material_count ? "part's" : "model's";
}

static judgement judge(const plush_compare_study *s)
{
    judgement j = {0};
    size_t np = s->pair_count;
    double worst = -1;
    /* a soft body of direct that blew up stays frozen where it was: from that frame on direct is not its
     * material's motion (a frozen piece keeps a perfect surface, so the bar alone does not see it) */
    plush_compare_run_info dinfo;
    plush_compare_get_run_info(s->cmp, RUN_DIRECT, &dinfo);
    j.blown = dinfo.failures, j.first_blown = dinfo.failures ? dinfo.first_failure : -1;
    for (uint32_t f = 0; f < s->frames; f++) {
        double p = s->series_pair[(size_t)f * np], b = s->series_pair[(size_t)f * np + 1];
        if (!isfinite(p) || !isfinite(b))
            continue;
        j.frames++;
        if (j.blown && (int64_t)f >= j.first_blown) {
            j.frozen++;
            continue;
        }
        if (plush__compare_quality_meets_bar(s->quality, RUN_DIRECT, f) == 0) {
            if (!j.left_out++)
                j.first_left_out = f;
            continue;
        }
        j.used++;
        j.proxy += p, j.bones += b;
        double pn = s->series_normal[(size_t)f * np], bn = s->series_normal[(size_t)f * np + 1];
        j.proxy_normal += isfinite(pn) ? pn : 0, j.bones_normal += isfinite(bn) ? bn : 0;
        if (p > worst)
            worst = p, j.worst = f, j.proxy_worst = p, j.bones_at_worst = b;
        if (s->has_quarter) {
            double q = s->series_pair[(size_t)f * np + s->quarter_pair];
            if (isfinite(q)) {
                j.quarter_frames++;
                j.quarter_mean += q;
                double ratio = p > 0 ? q / p : (q > 0 ? INFINITY : 0);
                if (ratio > 0.5)
                    j.off_frames++, j.off_proxy += p, j.off_quarter += q;
                if (j.quarter_frames == 1 || ratio > j.quarter_ratio)
                    j.quarter_ratio = ratio, j.quarter_worst = f;
            }
        }
    }
    if (j.off_frames)
        j.off_proxy /= j.off_frames, j.off_quarter /= j.off_frames;
    if (j.quarter_frames)
        j.quarter_mean /= j.quarter_frames;
    if (j.used) {
        j.proxy /= j.used, j.bones /= j.used, j.proxy_normal /= j.used, j.bones_normal /= j.used;
        j.better = j.proxy < j.bones && j.proxy_worst < j.bones_at_worst;
    }
    return j;
}

static void verdict(const plush_compare_study *s, const judgement *jp, plush_buf *md, float size)
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
    judgement j = *jp;
    double tp = ms_per_frame(proxy), td = ms_per_frame(direct);
    /* three figures, so a ratio under ten reads as the times give it (one decimal made 0.571 read 0.6) */
    buf_printf(md, "**%s is %.3g× faster than direct**: physics + skinning take %.3f ms per frame against "
                   "%.3f ms (thread CPU time, the same run).\n",
               pname, td / tp, tp, td);
    if (!j.used && j.frozen) {
        buf_printf(md, "**No verdict**: %zu of direct's soft bodies blew up at frame %lld and stayed frozen, and at "
                       "none of the %u frames before did direct meet the plush surface bar, so it is no ground "
                       "truth here (see the table of runs).\n\n",
                   j.blown, (long long)j.first_blown, j.frames - j.frozen);
        return;
    }
    if (!j.used) {
        buf_printf(md, "**No verdict**: at none of the %u frames measured did direct meet the plush surface bar, "
                       "so it is no ground truth here (see the quality table).\n\n", j.frames);
        return;
    }
    /* one verdict, from the mean and the worst frame, the normals beside them */
    if (j.better)
        buf_printf(md, "**%s is better than plain bones**: %.0f%% closer to direct on average (RMS %.3g against "
                       "%.3g, %.2f%% of the %s size against %.2f%%) and %.0f%% closer at its worst frame %u "
                       "(%.3g against %.3g, %.2f%% of the size)",
                   pname, 100 * (1 - j.proxy / j.bones), j.proxy, j.bones, 100 * j.proxy / size, whose(s),
                   100 * j.bones / size,
                   100 * (1 - j.proxy_worst / j.bones_at_worst), j.worst, j.proxy_worst, j.bones_at_worst,
                   100 * j.proxy_worst / size);
    else
        buf_printf(md, "**%s is no better than plain bones**: RMS %.3g from direct on average against bones' %.3g "
                       "(%.2f%% of the %s size against %.2f%%), %.3g against %.3g at its worst frame %u",
                   pname, j.proxy, j.bones, 100 * j.proxy / size, whose(s), 100 * j.bones / size, j.proxy_worst,
                   j.bones_at_worst, j.worst);
    buf_printf(md, "; its normals lie %.2f° from direct's on average against bones' %.2f°%s.\n", j.proxy_normal,
               j.bones_normal, j.proxy_normal < j.bones_normal ? "" : " (no closer)");
    if (j.left_out)
        buf_printf(md, "%u of the %u frames are left out of the verdict: direct misses the plush surface bar there "
                       "(it pleats, stretches or collapses; the first at frame %u; quality table below).\n",
                   j.left_out, j.frames, j.first_left_out);
    if (j.frozen)
        buf_printf(md, "%u of the %u frames are left out of the verdict: %zu of direct's soft bodies blew up at "
                       "frame %lld and stayed frozen, so direct is not its material's motion from there on.\n",
                   j.frozen, j.frames, j.blown, (long long)j.first_blown);
    buf_printf(md, "Over all %u frames: %.3g units (RMS, mean) = %.2f%% of the %s size (its %.3g-unit "
                   "bounding-box diagonal); the worst vertex at the worst frame %.3g (%.2f%%).\n\n",
               err->frames, err->sum[0] / err->frames, 100 * err->sum[0] / err->frames / size, whose(s), (double)size,
               err->max[2], 100 * err->max[2] / size);
    if (s->has_quarter && j.quarter_frames) {
        /* a claim on a few frames of many is no claim: the frames left out above may be where it would fail */
        bool few = 2 * j.quarter_frames < j.frames;
        if (j.off_frames == 0 && few)
            buf_printf(md, "**Whether the reference converges is not known**: direct on a quarter of the triangles "
                           "(%zu of %zu) lies within half the proxy's distance of full direct at every frame kept (at "
                           "most %.2f of it, frame %u), but only %u of the %u frames are kept (the rest are left out "
                           "above): too few to say it of the run.",
                       s->quarter_faces, s->direct_faces, j.quarter_ratio, j.quarter_worst, j.quarter_frames,
                       j.frames);
        else if (j.off_frames == 0)
            buf_printf(md, "**The reference converges**: at every one of the %u frame%s kept direct on a quarter of "
                           "the triangles (%zu of %zu) lies within half the proxy's distance of full direct (at "
                           "most %.2f of it, frame %u; %.3g units RMS on average over them, on the vertices it "
                           "simulates).",
                       j.quarter_frames, j.quarter_frames == 1 ? "" : "s", s->quarter_faces, s->direct_faces,
                       j.quarter_ratio, j.quarter_worst, j.quarter_mean);
        else
            buf_printf(md, "**The reference does not converge**: at %u of the %u frames direct on a quarter of the "
                           "triangles (%zu of %zu) lies more than half the proxy's distance from full direct (at "
                           "worst %.2f times it, frame %u; at those frames the proxy lies %.3g from direct on "
                           "average and direct/4 %.3g, against the proxy's %.3g over every frame kept), so the "
                           "reference's own resolution error is as large as what it measures there: the verdict "
                           "above is limited by it.",
                       j.off_frames, j.quarter_frames, s->quarter_faces, s->direct_faces,
                       j.quarter_ratio, j.quarter_worst, j.off_proxy, j.off_quarter, j.proxy);
        if (s->desc.direct_cloth)
            buf_printf(md, " Direct is the proxy's material in physical units, stepped by plush's cloth solver (backward "
                           "Euler in substeps): one areal density, a stretch modulus whose waves cross the cage as fast "
                           "as its link solver carries a correction (a twentieth of it against shortening: a fabric "
                           "buckles rather than pushes, and a mesh held at the whole modulus locks), a bending "
                           "length of the cage's mean edge, the cage's shape memory (each node pulled toward its "
                           "rest place turned with the part, kMT of the way a step), damping, pressure and "
                           "gravity, in as many substeps as the cage's link solver takes sweeps; its pins on the "
                           "detailed surface under the cage's pinned triangles (a lone pin: the detailed nodes "
                           "nearest it).%s\n\n",
                       s->has_finer ? " Direct has four times the part's detail (each face split at its edges' "
                                      "midpoints, the midpoints skinned as their edges' ends), direct/4 is the part as "
                                      "the model has it: the same cloth at two resolutions, the coarser nested in the "
                                      "finer."
                                    : "");
        else
            buf_printf(md, " Direct is the proxy's material at the detailed resolution: its position iterations "
                           "scaled by the ratio of the cage's edge length to the detail's, its link stiffness the one "
                           "the cage's links reach in a step, its pressure the cage's per-node push divided by that "
                           "ratio, its pins on the detailed surface under the cage's pinned triangles (a lone pin: "
                           "the detailed nodes nearest it).\n\n");
    } else {
        buf_printf(md, "Whether the reference converges was not measured (no direct run on a quarter of the "
                       "triangles).\n\n");
    }
    if (s->reference_chosen && s->desc.direct_cloth)
        buf_printf(md, "Direct is plush's cloth solver because the part is small enough for it: %zu vertices at four "
                       "times its detail, within the %d it is used for (`--direct-bullet`: Bullet's calibrated "
                       "reference instead).\n\n",
                   s->cloth_nodes, PLUSH__COMPARE_CLOTH_NODES);
    else if (s->reference_chosen)
        buf_printf(md, "Direct is Bullet's, calibrated, because the part is too large for plush's cloth solver at "
                       "four times its detail (%zu vertices, over the %d it is used for; `--direct-cloth` runs it "
                       "anyway, at some 0.1 ms a vertex a frame or more).\n\n",
                   s->cloth_nodes, PLUSH__COMPARE_CLOTH_NODES);
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
        if (info.cloth_unfinished) {
            /* the cloth's solve stopped short: what it moved is not quite its material's motion */
            size_t used = strlen(notes);
            snprintf(notes + used, sizeof notes - used,
                     "%llu of its %llu linear solves stopped at the iteration cap short of their tolerance; ",
                     (unsigned long long)info.cloth_unfinished, (unsigned long long)info.cloth_solves);
        }
        size_t vi = r - RUN_PROXY - (s->own_proxy ? 1 : 0);
        if (r >= RUN_PROXY + (s->own_proxy ? 1 : 0) && vi < s->variant_count) {
            /* a cage in several pieces is several soft bodies, and a piece without a pin falls */
            const plush_compare_variant *v = &s->variants[vi];
            size_t used = strlen(notes);
            char how[96];
            if (v->part)
                snprintf(how, sizeof how, "%s the part's %zu triangles, as plush run --cage",
                         v->wrapped ? "one wrap around" : "simplified from", v->source_pieces);
            else if (v->wrapped)
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
    /* the worst frame first: an average over frames hides the moment the eye sees */
    buf_printf(md, "## Error, worst frame first\n\n| pair | worst frame | its RMS (/ size) | RMS, mean over frames (/ "
                   "size) | 95th percentile, mean / max | max distance, mean / max | normal angle mean (°), mean / "
                   "max | normal angle max (°), mean / max |\n|---|---:|---:|---:|---|---|---|---|\n");
    for (size_t p = 0; p < s->pair_count; p++) {
        if (!pair_shown(s, p))
            continue;
        const pair_stats *ps = &s->pstats[p];
        buf_printf(md, "| %s vs %s", run_name(s, s->pairs[p].a), run_name(s, s->pairs[p].b));
        if (!ps->frames) {
            buf_printf(md, " | no common frame | | | | | | |\n");
            continue;
        }
        buf_printf(md, " | %u | %.4g (%.2f%%) | %.4g (%.2f%%)", ps->worst_frame, ps->max[0], 100 * ps->max[0] / size,
                   ps->sum[0] / ps->frames, 100 * ps->sum[0] / ps->frames / size);
        for (int k = 1; k < 5; k++)
            buf_printf(md, " | %.4g / %.4g", ps->sum[k] / ps->frames, ps->max[k]);
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

/* With several cage sizes: error, speed and cost per size, and the size to use -- the smallest whose mean
 * error is within a tenth of the best size's, or within the reference's own resolution error (direct/4's
 * distance from direct) when that is larger: below it the reference cannot tell the sizes apart. */
static void sweep_advice(const plush_compare_study *s, plush_buf *md, float size)
{
    size_t proxies = (s->own_proxy ? 1 : 0) + s->variant_count;
    if (s->variant_count < 2 || !s->rstats[RUN_DIRECT].frames)
        return;
    typedef struct row {
        size_t run, triangles;
        double rms, worst, ms;
    } row;
    row rows[64];
    size_t n = 0;
    for (size_t i = 0; i < proxies && n < 64; i++) {
        size_t r = RUN_PROXY + i;
        if (s->own_proxy && i == 0)
            continue; /* the model's own cage is no size of the sweep */
        const plush_compare_variant *v = &s->variants[i - (s->own_proxy ? 1 : 0)];
        const pair_stats *ps = NULL;
        for (size_t p = 0; p < s->pair_count; p++)
            if (s->pairs[p].a == r && s->pairs[p].b == RUN_DIRECT)
                ps = &s->pstats[p];
        if (!ps || !ps->frames)
            continue;
        rows[n++] = (row){.run = r, .triangles = v->triangles, .rms = ps->sum[0] / ps->frames, .worst = ps->max[0],
                          .ms = ms_per_frame(&s->rstats[r])};
    }
    if (n < 2)
        return;
    for (size_t i = 1; i < n; i++) /* by size */
        for (size_t j = i; j > 0 && rows[j].triangles < rows[j - 1].triangles; j--) {
            row t = rows[j];
            rows[j] = rows[j - 1], rows[j - 1] = t;
        }
    double td = ms_per_frame(&s->rstats[RUN_DIRECT]), best = INFINITY;
    for (size_t i = 0; i < n; i++)
        best = fmin(best, rows[i].rms);
    const pair_stats *q = s->has_quarter ? &s->pstats[s->quarter_pair] : NULL;
    double floor_err = q && q->frames ? q->sum[0] / q->frames : 0, enough = fmax(1.1 * best, floor_err);
    size_t pick = 0;
    while (pick < n && rows[pick].rms > enough)
        pick++;
    buf_printf(md, "## Which cage size\n\n| proxy triangles | RMS vs direct (mean) | worst frame's RMS | ms/frame | "
                   "speed-up over direct |\n|---:|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < n; i++)
        buf_printf(md, "| %zu | %.4g (%.2f%%) | %.4g | %.3f | %.1f× |\n", rows[i].triangles, rows[i].rms,
                   100 * rows[i].rms / size, rows[i].worst, rows[i].ms, td / rows[i].ms);
    if (pick >= n)
        return;
    buf_printf(md, "\n**Use %zu triangles**: the smallest cage within %s (%.4g units), at %.1f× the speed of direct",
               rows[pick].triangles,
               floor_err > 1.1 * best ? "the reference's own resolution error (direct/4 from direct)"
                                      : "a tenth of the best size's error",
               enough, td / rows[pick].ms);
    if (pick + 1 < n)
        buf_printf(md, "; %zu triangles change the error by %+.0f%% for %.1f× the cost", rows[n - 1].triangles,
                   rows[pick].rms > 0 ? 100 * (rows[n - 1].rms / rows[pick].rms - 1) : 0.0,
                   rows[n - 1].ms / rows[pick].ms);
    buf_printf(md, ".");
    /* the convergence rule on the mean: a reference that moves by more than half the best error when its
     * resolution changes cannot rank the sizes, whatever the table says */
    if (floor_err > 0.5 * best)
        buf_printf(md, " The advice is limited by the reference: direct on a quarter of the triangles lies %.4g "
                       "units from direct on average, %.0f%% of the best size's error, so the sizes' differences "
                       "are within what the reference's own resolution changes.",
                   floor_err, best > 0 ? 100 * floor_err / best : 0.0);
    buf_printf(md, "\n\n");
}

static void meaning(const plush_compare_study *s, const judgement *jp, plush_buf *md, float size)
{
    const plush_compare_surface *surf = plush_compare_get_surface(s->cmp);
    buf_printf(md, "## What it means\n\n");
    if (s->author_physics)
        buf_printf(md, "- The model's own physics (its author's rigid bodies) swings bones of the part. `plush run` "
                       "follows it by default; here the proxy keeps its cage's own shape, as `plush run --own-shape` "
                       "does, the material the reference is made of.\n");
    judgement j = *jp;
    if (j.used) {
        /* the size of the error, read with the verdict: a proxy no closer than bones adds nothing however
         * small the distance, and the worst frame is what a viewer notices */
        double rel = j.proxy / size, at_worst = j.proxy_worst / size;
        buf_printf(md, "- The proxy's RMS distance from direct, %.2f%% of the %s size on average and %.2f%% at "
                       "its worst frame, is %s%s.\n", 100 * rel, whose(s), 100 * at_worst,
                   at_worst < 0.01   ? "hard to tell apart from the direct simulation when watched at full size"
                   : at_worst < 0.03 ? "visible side by side at its worst frame"
                                     : "a clearly different motion at its worst frame: try a finer cage "
                                       "(--proxy-triangles)",
                   j.better ? "" : "; and plain bones come as close, so the soft body adds nothing measurable here");
    }
    char part[400] = "those of every material no soft body owns";
    if (s->desc.material_count) {
        size_t used = (size_t)snprintf(part, sizeof part, "those of the part compared:");
        for (size_t i = 0; i < s->desc.material_count && used < sizeof part; i++)
            used += (size_t)snprintf(part + used, sizeof part - used, "%s \"%s\"", i ? "," : "",
                                     s->desc.materials[i]);
    }
    buf_printf(md, "- Distances are in model units (1 unit ≈ 8 cm); the %s size is its bounding-box diagonal at "
                   "rest, %.4g units, over %zu measured vertices (%s).\n",
               whose(s), (double)size, surf->vertex_count, part);
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
    const char *base = plush__os_last_separator(s->desc.model_file);
    buf_printf(&md, "# plush compare: %s\n\n", base ? base + 1 : s->desc.model_file);
    /* one judgement for the verdict and what it means, so the two cannot disagree */
    judgement j = s->pstats[0].frames ? judge(s) : (judgement){0};
    verdict(s, &j, &md, size);
    runs_table(s, &md);
    plush__compare_quality_report(s, &md);
    pairs_table(s, &md, size);
    speedups(s, &md);
    sweep_advice(s, &md, size);
    meaning(s, &j, &md, size);
    buf_printf(&md, "## Files\n\n- `metrics.csv`: one row per frame and run pair (columns: frame, run_a, run_b, "
                    "rms, p95, max, normal_mean_deg, normal_max_deg, volume_ratio_a, volume_ratio_b, physics_ms_a, "
                    "skinning_ms_a, physics_ms_b, skinning_ms_b).\n");
    buf_printf(&md, "- `error.png`: RMS distance of each pair per frame; `time.png`: physics + skinning of each "
                    "run per frame, on a log scale; `quality.png`: each measured run's surface quality (direct/4 simulates "
                    "a quarter of the surface and is left out); a pair or run has one colour in every chart.%s\n",
               s->variant_count ? " `error_by_size.png`, `time_by_size.png`: the same against the "
                                                     "proxy's triangle count." : "");
    buf_printf(&md, "- Pictures (bones | %s | direct | its error as colours, blue 0 to red at %.0f%% of the "
                    "%s size, %.3g units, the same in every picture):", run_name(s, RUN_PROXY),
               100.0 * PLUSH__COMPARE_RED_SHARE, whose(s), (double)(PLUSH__COMPARE_RED_SHARE * size));
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
