/* Export "quality": per frame the detailed surface's and (proxy mode) the cage's edge strain, crease and
 * volume against rest (plush/quality.h); the worst frame in the summary, and with --export quality
 * every frame in OUTDIR/quality.csv. plush run measures whether or not the file is asked for
 * (plush_scene_quality_sink_create), so the measure runs on a thread of its own: a frame's positions are
 * copied into one of a ring of buffers and measured there while the run computes the next frames (a few
 * buffers rather than two, so that the thread losing its core for a moment does not stop the run). The figures
 * are the same, frame for frame, as measuring in line (it is the same function on the same floats); only
 * when no thread can be started does it measure in line. */
#include "plush/quality.h"
#include "plush/sys/core.h"
#include "plush/sys/scene.h"
#include "export/bake_internal.h"
#include "export/sink_internal.h"
#include "core/geom.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A frame handed to the measure: its positions, copied. */
/* Frames the run may be ahead of the measure (2.9 MB of positions on the demo bear). */
#define QUALITY_SLOTS 4

typedef struct quality_slot {
    float (*surface)[3], (*cage)[3];
    plush_scene_soft_figures soft; /* the scene's body and offset figures of the frame */
    bool has_soft;
    uint32_t frame;
} quality_slot;

typedef struct quality_sink {
    plush_scene_sink base;
    char *path;                   /* quality.csv; NULL: measure only */
    plush_quality *surface, *cage;
    size_t surface_count, cage_count; /* positions per frame */
    plush_buf csv;
    /* the worst frame of the surface (largest p99.9 strain) and its figures */
    int64_t worst_frame;
    plush_quality_figures worst, worst_cage;
    /* the frame furthest over the surface bar (its largest figure against that figure's bar) and its figures:
     * the worst frame above can meet the bar while others miss it (edges squeezed below 2/3, a crease) */
    int64_t miss_frame;
    double miss_excess;
    plush_quality_figures miss, miss_cage;
    double tear;                  /* the largest tear over the frames measured, and its frame */
    int64_t tear_frame;
    uint64_t measured, over;      /* frames measured, and those of them that miss the surface bar */
    /* the detailed edges that cross from one cage piece to another (their two vertices bound to different
     * pieces), their rest lengths, and the largest stretch either way over the frames measured */
    size_t crossing_count;
    uint32_t (*crossing)[2];
    float *crossing_rest;
    double crossing_worst;
    int64_t crossing_frame;
    uint64_t crossing_over;       /* frames with a crossing edge beyond 1.5x either way */
    plush_arena arena;
    /* the measure's thread; the figures above and the CSV are written under sync->lock while it runs */
    quality_slot slot[QUALITY_SLOTS];
    pthread_t thread;
    struct quality_sync *sync;    /* NULL: measured in line */
    bool holding;                 /* the slot after the handed ones holds a frame waiting for its soft figures */
} quality_sink;

/* Frames handed (the run's thread) and measured (the measure's), under lock. Apart from the sink so that
 * describe, given a const sink, can still take the lock. */
typedef struct quality_sync {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool quit;
    uint64_t handed, measured;
} quality_sync;

static const char header[] =
    "frame,surface_strain_p50,surface_strain_p99,surface_strain_p999,surface_strain_max,surface_strain_outside,"
    "surface_crease_p99,surface_crease_max,surface_volume_ratio,cage_strain_p50,cage_strain_p99,"
    "cage_strain_p999,cage_strain_max,cage_strain_outside,cage_crease_p99,cage_crease_max,cage_volume_ratio,"
    "body_inside_share,body_inside_depth,bones_inside_share,soft_offset_share,surface_tear,over_bar,crossing_stretch_max,"
    "soft_swing_share,author_swing_share,skin_inside_share,author_skin_inside_share,author_surface_strain_p999,"
    "author_surface_strain_outside,through_share,author_through_share,jitter_share,author_jitter_share,show_share,author_show_share\n";

static int figures_csv(char *dst, size_t cap, const plush_quality_figures *f)
{
    return snprintf(dst, cap, ",%.6g,%.6g,%.6g,%.6g,%.6g,%.4g,%.4g,%.6g", f->strain_p50, f->strain_p99,
                    f->strain_p999, f->strain_max, f->strain_outside, f->crease_p99, f->crease_max, f->volume_ratio);
}

/* Two columns of figures measured only at some frames: empty where they are not. */
static int pair_csv(char *dst, size_t cap, bool measured, double a, double b)
{
    return measured ? snprintf(dst, cap, ",%.6g,%.6g", a, b) : snprintf(dst, cap, ",,");
}

static void keep(quality_sink *q, const quality_slot *in, const plush_quality_figures *f,
                 const plush_quality_figures *c, double crossing);

/* The largest stretch either way (length over rest length, or its inverse) of the detailed edges that cross
 * from one cage piece to another at this frame; 1 when there are none. */
static double crossing_stretch(const quality_sink *q, const float (*p)[3])
{
    double worst = 1;
    for (size_t e = 0; e < q->crossing_count; e++) {
        const float *a = p[q->crossing[e][0]], *b = p[q->crossing[e][1]];
        double d = sqrt(((double)a[0] - b[0]) * ((double)a[0] - b[0]) + ((double)a[1] - b[1]) * ((double)a[1] - b[1]) +
                        ((double)a[2] - b[2]) * ((double)a[2] - b[2])),
               r = d / q->crossing_rest[e];
        r = r < 1 && r > 0 ? 1 / r : r > 0 ? r : INFINITY;
        worst = r > worst || r != r ? r : worst;
    }
    return worst;
}

/* Measures one frame and keeps what it gives (the thread, or the run's thread when there is none). A row
 * that cannot be stored marks the buffer failed; end reports it. */
static void measure(quality_sink *q, const quality_slot *in)
{
    plush_quality_figures f, c = {.volume_ratio = NAN};
    plush_quality_measure(q->surface, (const float(*)[3])in->surface, &f);
    if (q->cage)
        plush_quality_measure(q->cage, (const float(*)[3])in->cage, &c);
    double crossing = crossing_stretch(q, (const float(*)[3])in->surface);
    if (q->sync)
        pthread_mutex_lock(&q->sync->lock);
    keep(q, in, &f, &c, crossing);
    if (q->sync)
        pthread_mutex_unlock(&q->sync->lock);
}

/* The bar a frame is held to: the surface's (plush_quality_meets_bar) and, with a cage, a cage that has not
 * folded back onto itself. */
static bool frame_over_bar(const quality_sink *q, const plush_quality_figures *f, const plush_quality_figures *c)
{
    return !plush_quality_meets_bar(f) || (q->cage && c->crease_p99 > PLUSH_QUALITY_BAR_CAGE_CREASE_P99);
}

/* How far a frame lies past the bar: its largest figure over that figure's bar (over 1: it misses). */
static double bar_excess(const quality_sink *q, const plush_quality_figures *f, const plush_quality_figures *c)
{
    double e = fmax(fmax(f->strain_p999 / PLUSH_QUALITY_BAR_STRAIN_P999, f->strain_outside / PLUSH_QUALITY_BAR_OUTSIDE),
                    f->crease_p99 / PLUSH_QUALITY_BAR_CREASE_P99);
    return q->cage ? fmax(e, c->crease_p99 / PLUSH_QUALITY_BAR_CAGE_CREASE_P99) : e;
}

static void keep(quality_sink *q, const quality_slot *in, const plush_quality_figures *f,
                 const plush_quality_figures *c, double crossing)
{
    uint32_t frame = in->frame;
    bool over = frame_over_bar(q, f, c);
    q->measured++;
    q->over += over;
    if (q->crossing_count) {
        q->crossing_over += !(crossing <= PLUSH_QUALITY_BAR_STRAIN_P999);
        if (q->crossing_frame < 0 || crossing > q->crossing_worst || crossing != crossing)
            q->crossing_worst = crossing, q->crossing_frame = frame;
    }
    if (q->worst_frame < 0 || f->strain_p999 > q->worst.strain_p999)
        q->worst_frame = frame, q->worst = *f, q->worst_cage = *c;
    double excess = over ? bar_excess(q, f, c) : 0;
    if (over && (q->miss_frame < 0 || excess > q->miss_excess || excess != excess))
        q->miss_frame = frame, q->miss_excess = excess, q->miss = *f, q->miss_cage = *c;
    if (q->tear_frame < 0 || f->tear > q->tear || f->tear != f->tear)
        q->tear = f->tear, q->tear_frame = frame;
    if (!q->path)
        return;
    char line[640];
    int n = snprintf(line, sizeof line, "%u", frame);
    n += figures_csv(line + n, sizeof line - (size_t)n, f);
    if (q->cage)
        n += figures_csv(line + n, sizeof line - (size_t)n, c);
    else
        n += snprintf(line + n, sizeof line - (size_t)n, ",,,,,,,,");
    if (in->has_soft)
        n += snprintf(line + n, sizeof line - (size_t)n, ",%.6g,%.6g,%.6g,%.6g", in->soft.inside_share,
                      in->soft.inside_depth, in->soft.bones_inside_share, in->soft.offset_share);
    else
        n += snprintf(line + n, sizeof line - (size_t)n, ",,,,");
    n += snprintf(line + n, sizeof line - (size_t)n, ",%.6g,%d", f->tear, over ? 1 : 0);
    if (q->crossing_count)
        n += snprintf(line + n, sizeof line - (size_t)n, ",%.6g", crossing);
    else
        n += snprintf(line + n, sizeof line - (size_t)n, ",");
    if (in->has_soft)
        n += snprintf(line + n, sizeof line - (size_t)n, ",%.6g,%.6g,%.6g,%.6g", in->soft.swing_share,
                      in->soft.author_swing_share, in->soft.skin_share, in->soft.author_skin_share);
    else
        n += snprintf(line + n, sizeof line - (size_t)n, ",,,,");
    const plush_scene_soft_figures *s = &in->soft;
    n += pair_csv(line + n, sizeof line - (size_t)n, in->has_soft && s->author_surface, s->author_strain_p999,
                  s->author_strain_outside);
    n += pair_csv(line + n, sizeof line - (size_t)n, in->has_soft && s->through_measured, s->through_share,
                  s->author_through_share);
    n += pair_csv(line + n, sizeof line - (size_t)n, in->has_soft && s->jitter_measured, s->jitter_share,
                  s->author_jitter_share);
    n += pair_csv(line + n, sizeof line - (size_t)n, in->has_soft && s->show_measured, s->show_share,
                  s->author_show_share);
    line[n++] = '\n';
    plush_buf_append(&q->csv, line, (size_t)n);
}

static void *measure_thread(void *arg)
{
    quality_sink *q = arg;
    quality_sync *y = q->sync;
    pthread_mutex_lock(&y->lock);
    for (;;) {
        while (y->measured == y->handed && !y->quit)
            pthread_cond_wait(&y->cond, &y->lock);
        if (y->measured == y->handed)
            break;
        const quality_slot *in = &q->slot[y->measured % QUALITY_SLOTS];
        pthread_mutex_unlock(&y->lock);
        measure(q, in);
        pthread_mutex_lock(&y->lock);
        y->measured++;
        pthread_cond_broadcast(&y->cond);
    }
    pthread_mutex_unlock(&y->lock);
    return NULL;
}

/* Waits for every frame handed to be measured and ends the thread: from then on the sink is measured in
 * line (a frame after end would be). */
static void stop_thread(quality_sink *q)
{
    quality_sync *y = q->sync;
    if (!y)
        return;
    pthread_mutex_lock(&y->lock);
    y->quit = true;
    pthread_cond_broadcast(&y->cond);
    pthread_mutex_unlock(&y->lock);
    pthread_join(q->thread, NULL);
    pthread_cond_destroy(&y->cond);
    pthread_mutex_destroy(&y->lock);
    free(y);
    q->sync = NULL;
}

/* The scene's figures of the soft part against the body at the slot's frame, when it has a binding to measure. */
static void soft_figures(const plush_scene *scene, quality_slot *slot)
{
    slot->has_soft = plush_scene_soft_at(scene, (double)slot->frame, &slot->soft);
}

/* The held slot, with its frame's soft figures, to the measure's thread. */
static void hand_held(quality_sink *q, const plush_scene *scene)
{
    quality_sync *y = q->sync;
    if (!y || !q->holding)
        return;
    soft_figures(scene, &q->slot[y->handed % QUALITY_SLOTS]);
    pthread_mutex_lock(&y->lock);
    y->handed++;
    pthread_cond_broadcast(&y->cond);
    pthread_mutex_unlock(&y->lock);
    q->holding = false;
}

static plush_status quality_frame(plush_scene_sink *s, const plush_scene *scene, uint32_t frame, plush_diag *diag)
{
    quality_sink *q = (quality_sink *)s;
    quality_sync *y = q->sync;
    if (!y) {
        quality_slot in = {.surface = (float(*)[3])plush_scene_positions(scene),
                           .cage = q->cage ? (float(*)[3])plush_scene_proxy_nodes(scene) : NULL,
                           .frame = frame};
        soft_figures(scene, &in);
        measure(q, &in);
        return q->csv.failed ? plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory") : PLUSH_OK;
    }
    /* A frame's soft figures are measured beside the next frame's physics (plush_scene_soft_at): its slot is held
     * until then, and handed with them once the next frame is here. */
    hand_held(q, scene);
    /* the slot of frame handed - QUALITY_SLOTS is free once that frame is measured */
    pthread_mutex_lock(&y->lock);
    while (y->handed - y->measured >= QUALITY_SLOTS)
        pthread_cond_wait(&y->cond, &y->lock);
    bool failed = q->csv.failed;
    quality_slot *out = &q->slot[y->handed % QUALITY_SLOTS];
    pthread_mutex_unlock(&y->lock);
    if (failed)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    memcpy(out->surface, plush_scene_positions(scene), q->surface_count * sizeof *out->surface);
    if (q->cage)
        memcpy(out->cage, plush_scene_proxy_nodes(scene), q->cage_count * sizeof *out->cage);
    out->frame = frame;
    q->holding = true;
    return PLUSH_OK;
}

static plush_status quality_end(plush_scene_sink *s, const plush_scene *scene, plush_diag *diag)
{
    quality_sink *q = (quality_sink *)s;
    hand_held(q, scene);
    stop_thread(q);
    if (q->csv.failed)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    if (!q->path)
        return PLUSH_OK;
    plush_diag local = {.file = q->path};
    plush_status st = plush_file_write_atomic(q->path, q->csv.data, q->csv.size, &local);
    return st == PLUSH_OK ? st : plush__sink_fail(diag, &local);
}

/* The worst frame so far and its figures (under the lock while the thread runs). */
static int64_t worst(const quality_sink *q, plush_quality_figures *f, plush_quality_figures *c, double *tear,
                     int64_t *tear_frame, uint64_t over[2])
{
    if (q->sync)
        pthread_mutex_lock(&q->sync->lock);
    int64_t frame = q->worst_frame;
    *f = q->worst, *c = q->worst_cage;
    if (tear)
        *tear = q->tear, *tear_frame = q->tear_frame;
    if (over)
        over[0] = q->over, over[1] = q->measured;
    if (q->sync)
        pthread_mutex_unlock(&q->sync->lock);
    return frame;
}

/* The frame furthest over the bar so far (-1: none) and its figures (under the lock while the thread runs). */
static int64_t furthest_miss(const quality_sink *q, plush_quality_figures *f, plush_quality_figures *c)
{
    if (q->sync)
        pthread_mutex_lock(&q->sync->lock);
    int64_t frame = q->miss_frame;
    *f = q->miss, *c = q->miss_cage;
    if (q->sync)
        pthread_mutex_unlock(&q->sync->lock);
    return frame;
}

/* The crossing edges' largest stretch so far, its frame and the frames beyond 1.5x (under the lock while the
 * thread runs). */
static void crossing_figures(const quality_sink *q, double *stretch, int64_t *frame, uint64_t *over)
{
    if (q->sync)
        pthread_mutex_lock(&q->sync->lock);
    *stretch = q->crossing_worst, *frame = q->crossing_frame, *over = q->crossing_over;
    if (q->sync)
        pthread_mutex_unlock(&q->sync->lock);
}

/* The volume figure as the summary words it: a ratio to rest, or what it is not where nothing is closed. */
static const char *volume_text(double ratio, char buf[32])
{
    if (isnan(ratio))
        return "volume - (no closed piece)";
    snprintf(buf, 32, "volume %.3f", ratio);
    return buf;
}

static int quality_describe(const plush_scene_sink *s, char *buf, size_t size)
{
    const quality_sink *q = (const quality_sink *)s;
    plush_quality_figures fig, cage;
    double tear;
    int64_t tear_frame;
    uint64_t over[2];
    int64_t frame = worst(q, &fig, &cage, &tear, &tear_frame, over);
    const plush_quality_figures *f = &fig, *c = &cage;
    char vbuf[32];
    if (frame < 0)
        return snprintf(buf, size, "%s%sno frame measured", q->path ? q->path : "", q->path ? "; " : "");
    int n = snprintf(buf, size,
                     "%s%sworst frame %lld: surface strain p50 %.3f p99 %.3f p99.9 %.3f max %.3f, %.2f%% of edges "
                     "beyond 1.5x, crease p99 %.1f max %.1f deg, %s",
                     q->path ? q->path : "", q->path ? "; " : "", (long long)frame, f->strain_p50,
                     f->strain_p99, f->strain_p999, f->strain_max, 100.0 * f->strain_outside, f->crease_p99,
                     f->crease_max, volume_text(f->volume_ratio, vbuf));
    if (tear_frame >= 0 && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, "; layers apart at most %.3g (frame %lld)", tear,
                      (long long)tear_frame);
    if (q->cage && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n,
                      "\ncage at that frame: strain p50 %.3f p99 %.3f p99.9 %.3f max %.3f, %.2f%% beyond 1.5x, "
                      "crease p99 %.1f max %.1f deg, %s",
                      c->strain_p50, c->strain_p99, c->strain_p999, c->strain_max, 100.0 * c->strain_outside,
                      c->crease_p99, c->crease_max, volume_text(c->volume_ratio, vbuf));
    double stretch;
    int64_t stretch_frame;
    uint64_t stretch_over;
    crossing_figures(q, &stretch, &stretch_frame, &stretch_over);
    if (q->crossing_count && stretch_frame >= 0 && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n,
                      "\nacross cage pieces: %zu detailed edges join vertices bound to different pieces, stretched "
                      "at most %.3fx either way (frame %lld); %llu frames with one beyond %gx",
                      q->crossing_count, stretch, (long long)stretch_frame, (unsigned long long)stretch_over,
                      PLUSH_QUALITY_BAR_STRAIN_P999);
    if (n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n,
                      "\nsurface bar (p99.9 strain <= %g, <= %g%% of edges beyond 1.5x, 99th percentile crease <= %g deg",
                      PLUSH_QUALITY_BAR_STRAIN_P999, 100 * PLUSH_QUALITY_BAR_OUTSIDE, PLUSH_QUALITY_BAR_CREASE_P99);
    if (q->cage && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, "; the cage's <= %g deg, unfolded", PLUSH_QUALITY_BAR_CAGE_CREASE_P99);
    if (n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, "): ");
    if (n >= 0 && (size_t)n < size)
        n += over[0] ? snprintf(buf + n, size - (size_t)n, "%llu of %llu frames miss it", (unsigned long long)over[0],
                                (unsigned long long)over[1])
                     : snprintf(buf + n, size - (size_t)n, "every frame meets it");
    /* the worst frame shown met the bar: the frame that misses it most, so the figures that miss are seen */
    plush_quality_figures mf, mc;
    int64_t miss = furthest_miss(q, &mf, &mc);
    if (miss >= 0 && !frame_over_bar(q, f, c) && n >= 0 && (size_t)n < size) {
        n += snprintf(buf + n, size - (size_t)n,
                      "; furthest over it frame %lld: p99.9 %.3f, %.2f%% of edges beyond 1.5x, 99th percentile crease %.1f deg",
                      (long long)miss, mf.strain_p999, 100.0 * mf.strain_outside, mf.crease_p99);
        if (q->cage && n >= 0 && (size_t)n < size)
            n += snprintf(buf + n, size - (size_t)n, ", the cage's %.1f deg", mc.crease_p99);
    }
    return n;
}

static void quality_destroy(plush_scene_sink *s)
{
    quality_sink *q = (quality_sink *)s;
    stop_thread(q);
    plush_quality_destroy(q->surface);
    plush_quality_destroy(q->cage);
    plush_buf_free(&q->csv);
    plush_arena_free(&q->arena);
    free(q->path);
    free(q);
}

/* quality.csv grows by a row a frame and is held until the end: at most 22 figures of %.6g (12 characters
 * with the comma, an exponent included), the over-the-bar flag and the frame number a row. */
enum { QUALITY_ROW_BYTES = 22 * 12 + 2 + 12 };

static void quality_estimate(const plush_scene_sink *sink, uint32_t frames, double *memory, double *disk)
{
    const quality_sink *q = (const quality_sink *)sink;
    double bytes = q->path ? (double)q->csv.size + (double)frames * QUALITY_ROW_BYTES : 0;
    *disk = bytes;
    *memory = 2 * bytes; /* the buffer doubles as it grows */
}

static size_t quality_outputs(const plush_scene_sink *sink, const char **paths, size_t max)
{
    const quality_sink *s = (const quality_sink *)sink;
    if (max && s->path)
        paths[0] = s->path;
    return s->path ? 1 : 0;
}

static const plush_scene_sink_ops quality_ops = {.frame = quality_frame,
                                                 .end = quality_end,
                                                 .describe = quality_describe,
                                                 .destroy = quality_destroy,
                                                 .estimate = quality_estimate,
                                                 .outputs = quality_outputs};

/* The measure's thread and its two buffers; without them the sink measures in line. */
static void start_thread(quality_sink *q)
{
    for (int k = 0; k < QUALITY_SLOTS; k++) {
        q->slot[k].surface = plush_arena_array(&q->arena, q->surface_count ? q->surface_count : 1,
                                               sizeof *q->slot[k].surface);
        q->slot[k].cage = plush_arena_array(&q->arena, q->cage_count ? q->cage_count : 1, sizeof *q->slot[k].cage);
        if (!q->slot[k].surface || !q->slot[k].cage)
            return;
    }
    quality_sync *y = calloc(1, sizeof *y);
    if (!y)
        return;
    if (pthread_mutex_init(&y->lock, NULL) != 0) {
        free(y);
        return;
    }
    if (pthread_cond_init(&y->cond, NULL) != 0) {
        pthread_mutex_destroy(&y->lock);
        free(y);
        return;
    }
    q->sync = y;
    if (pthread_create(&q->thread, NULL, measure_thread, q) != 0) {
        q->sync = NULL;
        pthread_cond_destroy(&y->cond);
        pthread_mutex_destroy(&y->lock);
        free(y);
    }
}

/* Per bound row, the cage piece (faces joined by edges, over the whole proxy) its binding weighs most; -1 when
 * it has no triangle. */
static int32_t *row_pieces(const plush_scene_binding *b, plush_arena *arena)
{
    size_t nodes = b->proxy.node_count, tris = b->proxy.triangle_count;
    uint32_t *parent = malloc((nodes ? nodes : 1) * sizeof *parent);
    int32_t *piece = plush_arena_array(arena, b->vertex_count ? b->vertex_count : 1, sizeof *piece);
    if (!parent || !piece) {
        free(parent);
        return NULL;
    }
    plush__uf_init(parent, nodes);
    for (size_t t = 0; t < tris; t++)
        for (int k = 0; k < 2; k++)
            plush__uf_union(parent, b->proxy.triangles[t][k], b->proxy.triangles[t][k + 1]);
    const plush_proxy_binding *pb = b->binding;
    for (size_t i = 0; i < b->vertex_count; i++) {
        int32_t best = -1;
        float best_w = -1;
        for (int j = 0; j < PLUSH_PROXY_INFLUENCES; j++) {
            int32_t t = pb->triangles[i][j];
            if (t < 0 || (size_t)t >= tris)
                continue;
            int32_t r = (int32_t)plush__uf_find(parent, b->proxy.triangles[t][0]);
            float w = 0; /* the piece's weight over every slot */
            for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++) {
                int32_t u = pb->triangles[i][k];
                if (u >= 0 && (size_t)u < tris && (int32_t)plush__uf_find(parent, b->proxy.triangles[u][0]) == r)
                    w += pb->weights[i][k];
            }
            if (w > best_w)
                best = r, best_w = w;
        }
        piece[i] = best;
    }
    free(parent);
    return piece;
}

static int edge_cmp(const void *pa, const void *pb)
{
    const uint32_t *a = pa, *b = pb;
    return a[0] != b[0] ? (a[0] < b[0] ? -1 : 1) : a[1] < b[1] ? -1 : a[1] > b[1];
}

/* The detailed edges (of the faces measured) whose two vertices are bound to different cage pieces, once
 * each, with their rest lengths; an edge of no length at rest has no stretch and is left out. */
static plush_status crossing_edges(quality_sink *q, const plush_scene_binding *b, const plush_pmx_model *m,
                                   const uint32_t (*tris)[3], size_t nt, plush_diag *diag)
{
    int32_t *piece = row_pieces(b, &q->arena);
    uint32_t(*e)[2] = malloc((nt ? 3 * nt : 1) * sizeof *e);
    if (!piece || !e) {
        free(e);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    size_t n = 0;
    for (size_t f = 0; f < nt; f++)
        for (int k = 0; k < 3; k++) {
            uint32_t u = tris[f][k], v = tris[f][(k + 1) % 3];
            int64_t ru = plush_scene_binding_row(b, u), rv = plush_scene_binding_row(b, v);
            if (ru < 0 || rv < 0 || piece[ru] < 0 || piece[rv] < 0 || piece[ru] == piece[rv])
                continue;
            e[n][0] = u < v ? u : v, e[n][1] = u < v ? v : u, n++;
        }
    qsort(e, n, sizeof *e, edge_cmp);
    q->crossing = plush_arena_array(&q->arena, n ? n : 1, sizeof *q->crossing);
    q->crossing_rest = plush_arena_array(&q->arena, n ? n : 1, sizeof *q->crossing_rest);
    if (!q->crossing || !q->crossing_rest) {
        free(e);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        if (i && e[i][0] == e[i - 1][0] && e[i][1] == e[i - 1][1])
            continue;
        const float *a = m->vertices[e[i][0]].position, *c = m->vertices[e[i][1]].position;
        double d = sqrt(((double)a[0] - c[0]) * ((double)a[0] - c[0]) + ((double)a[1] - c[1]) * ((double)a[1] - c[1]) +
                        ((double)a[2] - c[2]) * ((double)a[2] - c[2]));
        if (!(d > 0))
            continue;
        memcpy(q->crossing[q->crossing_count], e[i], sizeof e[i]);
        q->crossing_rest[q->crossing_count++] = (float)d;
    }
    free(e);
    return PLUSH_OK;
}

/* A quality sink: with file (OUTDIR/quality.csv) or, file NULL, measuring only. */
static plush_status quality_make(const plush_scene *scene, char *file, plush_scene_sink **sink, plush_diag *diag)
{
    quality_sink *q = calloc(1, sizeof *q);
    if (q) {
        q->base.ops = &quality_ops;
        q->worst_frame = q->tear_frame = q->crossing_frame = q->miss_frame = -1;
        q->path = file;
    }
    if (!q || (file && !plush_buf_append(&q->csv, header, sizeof header - 1))) {
        if (q)
            quality_destroy(&q->base);
        else
            free(file);
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
    if (st == PLUSH_OK) { /* a soft body's own mesh copies the surface it was made from: not a layer of it */
        bool *dropped = plush_arena_array(&q->arena, m->vertex_count ? m->vertex_count : 1, sizeof *dropped);
        st = dropped ? PLUSH_OK : plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        size_t first = 0;
        for (size_t mat = 0; st == PLUSH_OK && mat < m->material_count; mat++) {
            size_t count = m->materials[mat].index_count > 0 ? (size_t)m->materials[mat].index_count : 0;
            for (size_t i = 0; soft[mat] && i < count && first + i < m->index_count; i++)
                if (m->indices[first + i] < m->vertex_count)
                    dropped[m->indices[first + i]] = true;
            first += count;
        }
        if (st == PLUSH_OK)
            plush_quality_drop_layers(q->surface, dropped);
    }
    q->surface_count = m->vertex_count;
    if (st == PLUSH_OK && desc.mode == PLUSH_SCENE_PROXY && b) {
        st = plush_quality_create((const float(*)[3])b->proxy.nodes, b->proxy.node_count,
                                  (const uint32_t(*)[3])b->proxy.triangles, b->proxy.triangle_count, &q->cage, diag);
        q->cage_count = b->proxy.node_count;
        /* the folds between faces pinned at every corner are the bones', not the cage's */
        if (st == PLUSH_OK && !plush_scene_hold_cage_folds(scene, q->cage))
            st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        if (st == PLUSH_OK)
            st = crossing_edges(q, b, m, (const uint32_t(*)[3])tris, nt, diag);
    }
    if (st != PLUSH_OK) {
        quality_destroy(&q->base);
        return st;
    }
    start_thread(q);
    q->base.kind = &plush__export_quality;
    *sink = &q->base;
    return PLUSH_OK;
}

static plush_status quality_create(const plush_scene *scene, const plush_scene_output *out, plush_scene_sink **sink,
                                   plush_diag *diag)
{
    char *path = plush__sink_file(out, PLUSH__OUT_QUALITY);
    if (!path)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    return quality_make(scene, path, sink, diag);
}

plush_status plush_scene_quality_sink_create(const plush_scene *scene, plush_scene_sink **sink, plush_diag *diag)
{
    if (!scene || !sink)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no scene");
    *sink = NULL;
    return quality_make(scene, NULL, sink, diag);
}

bool plush_scene_quality_sink_worst(const plush_scene_sink *sink, int64_t *frame, plush_quality_figures *surface,
                                    plush_quality_figures *cage)
{
    if (!sink || sink->kind != &plush__export_quality)
        return false;
    plush_quality_figures f, c;
    int64_t w = worst((const quality_sink *)sink, &f, &c, NULL, NULL, NULL);
    if (frame)
        *frame = w;
    if (surface)
        *surface = f;
    if (cage)
        *cage = c;
    return w >= 0;
}

uint64_t plush_scene_quality_sink_over(const plush_scene_sink *sink, uint64_t *measured)
{
    uint64_t over[2] = {0, 0};
    plush_quality_figures f, c;
    if (sink && sink->kind == &plush__export_quality)
        worst((const quality_sink *)sink, &f, &c, NULL, NULL, over);
    if (measured)
        *measured = over[1];
    return over[0];
}

const plush_scene_export plush__export_quality = {
    .name = "quality",
    .label = "quality",
    .help = "OUTDIR/quality.csv: per frame the surface's and cage's strain, crease, volume",
    .modes = PLUSH_SCENE_ALL_MODES,
    .create = quality_create,
};
