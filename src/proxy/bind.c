/* plush_proxy_bind: validate, pick the usable triangles, find each point's best four (Embree or brute
 * force, optionally on several threads), and turn distances into weights. Both searches offer
 * candidates to the same total order (bind_internal.h), so they agree to the bit; the weights are then
 * a function of those four distances alone. */
#include "proxy/bind_internal.h"
#include "plush/sys/core.h"
#include "plush/sys/proxy.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Beyond this a float squared distance could overflow in the seed routine; no model is that big. */
#define COORDINATE_LIMIT PLUSH_PROXY_COORDINATE_LIMIT
/* d_0 below this binds to that triangle alone (both modes, as the original). */
#define TOUCH_DISTANCE 1e-5f
enum { MAX_THREADS = 64 };

typedef struct bind_settings {
    bool seed;
    double drop_ratio, falloff, max_distance, handover;
    plush_proxy_search search;
    int threads;
} bind_settings;

static plush_status settle_options(const plush_proxy_bind_options *o, bind_settings *s, plush_diag *diag)
{
    plush_proxy_bind_options zero = {0};
    if (!o)
        o = &zero;
    *s = (bind_settings){.seed = o->seed, .drop_ratio = o->drop_ratio ? o->drop_ratio : 3.0,
                         .falloff = o->falloff ? o->falloff : 1.0, .max_distance = o->max_distance,
                         .handover = o->handover, .search = o->search, .threads = o->threads};
    const char *bad = NULL;
    if (!(s->drop_ratio >= 1) || isinf(s->drop_ratio))
        bad = "drop_ratio must be a finite number >= 1 (0 for the default 3)";
    else if (!(s->falloff > 0) || s->falloff > 64)
        bad = "falloff must be in (0, 64] (0 for the default 1)";
    else if (!(s->max_distance >= 0) || isinf(s->max_distance))
        bad = "max_distance must be finite and >= 0 (0 for no limit)";
    else if (!(s->handover >= 0) || isinf(s->handover))
        bad = "handover must be finite and >= 0";
    else if (s->search != PLUSH_PROXY_SEARCH_BVH && s->search != PLUSH_PROXY_SEARCH_BRUTE)
        bad = "unknown search method";
    else if (s->threads < 0)
        bad = "threads must be >= 0";
    if (bad)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "options", -1, "%s", bad);
    if (s->threads < 1)
        s->threads = 1;
    if (s->threads > MAX_THREADS)
        s->threads = MAX_THREADS;
    return PLUSH_OK;
}

static bool coordinates_ok(const float v[3])
{
    for (int i = 0; i < 3; i++)
        if (!(fabsf(v[i]) <= COORDINATE_LIMIT))
            return false;
    return true;
}

static plush_status check_input(const plush_proxy_mesh *proxy, const float (*points)[3], size_t count,
                                plush_diag *diag)
{
    if (proxy->triangle_count && (!proxy->triangles || !proxy->nodes))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "proxy", -1, "proxy has triangles but no %s",
                               proxy->triangles ? "nodes" : "triangle array");
    if (proxy->triangle_count > INT32_MAX)
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "proxy", -1, "%zu triangles, more than a binding can name",
                               proxy->triangle_count);
    if (count && !points)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "point", -1, "%zu points but no point array", count);
    for (size_t i = 0; i < proxy->node_count && proxy->nodes; i++)
        if (!coordinates_ok(proxy->nodes[i]))
            return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "node", (int64_t)i,
                                   "coordinate not finite or beyond %g", (double)COORDINATE_LIMIT);
    for (size_t t = 0; t < proxy->triangle_count; t++)
        for (int k = 0; k < 3; k++)
            if (proxy->triangles[t][k] >= proxy->node_count)
                return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "triangle", (int64_t)t,
                                       "node index %u out of range (%zu nodes)", (unsigned)proxy->triangles[t][k],
                                       proxy->node_count);
    for (size_t i = 0; i < count; i++)
        if (!coordinates_ok(points[i]))
            return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "point", (int64_t)i,
                                   "coordinate not finite or beyond %g", (double)COORDINATE_LIMIT);
    return PLUSH_OK;
}

/* Centred on the centroid; the radius is rounded up so the sphere holds every corner despite rounding. */
static proxy_bound bounding_sphere(const proxy_tri *t)
{
    double c[3], r2 = 0;
    for (int k = 0; k < 3; k++)
        c[k] = ((double)t->v[0][k] + t->v[1][k] + t->v[2][k]) / 3;
    for (int i = 0; i < 3; i++) {
        double d[3] = {t->v[i][0] - c[0], t->v[i][1] - c[1], t->v[i][2] - c[2]};
        r2 = fmax(r2, d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    }
    proxy_bound b = {{(float)c[0], (float)c[1], (float)c[2]}, 0};
    float far = fmaxf(fabsf(b.center[0]), fmaxf(fabsf(b.center[1]), fabsf(b.center[2])));
    b.radius = (float)(sqrt(r2) * (1 + 1e-6)) + 1e-6f * far;
    return b;
}

/* Seed mode keeps every triangle the original's arithmetic can measure; default mode also drops the
 * ones without a meaningful normal, and any the skinning could not build a frame for. */
static plush_status usable_triangles(const plush_proxy_mesh *proxy, bool seed, plush_arena *scratch,
                                     proxy_search *s, plush_diag *diag)
{
    size_t cap = proxy->triangle_count ? proxy->triangle_count : 1;
    proxy_tri *tris = plush_arena_array(scratch, cap, sizeof *tris);
    proxy_bound *bounds = plush_arena_array(scratch, cap, sizeof *bounds);
    if (!tris || !bounds)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "proxy", -1, "out of memory for %zu triangles",
                               proxy->triangle_count);
    size_t n = 0;
    float scale = 0;
    for (size_t t = 0; t < proxy->triangle_count; t++) {
        proxy_tri *dst = &tris[n];
        for (int k = 0; k < 3; k++)
            memcpy(dst->v[k], proxy->nodes[proxy->triangles[t][k]], sizeof dst->v[k]);
        if (!plush__proxy_seed_normal(dst->v[0], dst->v[1], dst->v[2], dst->n))
            continue;
        float frame[16];
        if (!seed && (plush__proxy_tri_degenerate(dst->v[0], dst->v[1], dst->v[2]) ||
                      !plush_proxy_triangle_frame(dst->v[0], dst->v[1], dst->v[2], frame)))
            continue;
        dst->index = (uint32_t)t;
        plush__proxy_exact_prepare(dst->v[0], dst->v[1], dst->v[2], &dst->exact);
        bounds[n] = bounding_sphere(dst);
        for (int k = 0; k < 9; k++)
            scale = fmaxf(scale, fabsf(dst->v[k / 3][k % 3]));
        n++;
    }
    if (n == 0)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "proxy", -1,
                               "proxy has no usable triangle (%zu triangles, all degenerate)",
                               proxy->triangle_count);
    *s = (proxy_search){.tris = tris, .bounds = bounds, .tri_count = n, .seed = seed, .scale = scale};
    return PLUSH_OK;
}

/* ---- weights --------------------------------------------------------------------------------- */

static double smoothstep(double t) { return t * t * (3 - 2 * t); }

static float share_of(double d0, const bind_settings *s)
{
    if (s->max_distance <= 0)
        return 1;
    if (d0 > s->max_distance)
        return 0;
    double start = s->max_distance - s->handover;
    if (s->handover <= 0 || d0 <= start)
        return 1;
    return (float)smoothstep((s->max_distance - d0) / s->handover);
}

/* How many of the candidates survive the drop ratio (nearest first, so the survivors are a prefix). */
static int kept_count(const proxy_best *b, float drop_ratio)
{
    if (b->d[0] < TOUCH_DISTANCE)
        return 1;
    int n = 1;
    while (n < b->n && !(b->d[n] / b->d[0] > drop_ratio))
        n++;
    return n;
}

/* Cannot happen once a usable triangle exists (every distance to it is finite), but an empty answer
 * must not read the unfilled slots. */
static bool finish_empty(const proxy_best *b, size_t i, plush_proxy_binding *out)
{
    if (b->n > 0)
        return false;
    for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++) {
        out->triangles[i][k] = -1;
        out->weights[i][k] = out->distances[i][k] = 0;
        if (out->percent)
            out->percent[i][k] = 0;
    }
    out->proxy_share[i] = 0;
    return true;
}

static void finish_default(const proxy_search *search, const proxy_best *b, const bind_settings *s, size_t i,
                           plush_proxy_binding *out)
{
    int n = kept_count(b, (float)s->drop_ratio);
    double w[PLUSH_PROXY_INFLUENCES], sum = 0;
    for (int k = 0; k < n; k++) {
        double r = (double)b->d[0] / b->d[k];   /* 1 for k = 0, so d_0 = 0 never divides */
        w[k] = k == 0 ? 1 : s->falloff == 1 ? r : pow(r, s->falloff);
        sum += w[k];
    }
    for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++) {
        out->triangles[i][k] = k < n ? (int32_t)search->tris[b->t[k]].index : -1;
        out->weights[i][k] = k < n ? (float)(w[k] / sum) : 0;
        out->distances[i][k] = k < n ? b->d[k] : 0;
    }
    out->proxy_share[i] = share_of(b->d[0], s);
}

/* The original's percents (seed.c). With no candidate at all (it cannot happen once a usable triangle
 * exists) the original puts 100 on triangle 0. */
static void finish_seed(const proxy_search *search, const proxy_best *b, const bind_settings *s, size_t i,
                        plush_proxy_binding *out)
{
    uint32_t pct[PLUSH_PROXY_INFLUENCES];
    int n = plush__proxy_seed_percent(b->d, b->n, (float)s->drop_ratio, pct);
    for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++) {
        bool used = k < n || (n == 0 && k == 0);
        out->triangles[i][k] = k < n ? (int32_t)search->tris[b->t[k]].index : used ? 0 : -1;
        out->percent[i][k] = (uint8_t)pct[k];
        out->weights[i][k] = (float)pct[k] / 100.0f;
        out->distances[i][k] = k < n ? b->d[k] : 0;
    }
    out->proxy_share[i] = 1;
}

/* ---- the search, one contiguous range of points per thread -------------------------------------- */

typedef struct bind_job {
    const proxy_search *search;
    const proxy_bvh *bvh;
    const bind_settings *settings;
    const float (*points)[3];
    const uint32_t *order;     /* the points in the order to visit them; NULL: as given */
    size_t begin, end;         /* a range of that order */
    plush_proxy_binding *out;
} bind_job;

/* Seed mode scans as the original does; see plush__proxy_seed_scan for why the BVH agrees with it. */
static void brute_force(const proxy_search *s, const float p[3], proxy_best *best)
{
    if (s->seed) {
        plush__proxy_seed_scan(s, p, best);
        return;
    }
    for (size_t t = 0; t < s->tri_count; t++)
        proxy_best_offer(best, proxy_search_distance(s, &s->tris[t], p), (uint32_t)t, s->seed);
}

/* Neighbouring vertices share their nearest triangles: the previous point's four, measured from this
 * point, bound its fourth distance and start the query with a small sphere. The answer does not depend
 * on the hint (a smaller radius only skips triangles that cannot be among the best four). */
static void offer_hint(const proxy_search *s, const proxy_best *prev, const float p[3], proxy_best *best)
{
    for (int k = 0; k < prev->n; k++)
        proxy_best_offer(best, proxy_search_distance(s, &s->tris[prev->t[k]], p), prev->t[k], s->seed);
}

/* The BVH finds the best four of the seed order over every triangle. The original's scan skips none of
 * them (so gives the same four) unless its box pre-check, which compares a rounded box distance with
 * far >= the triangle's own distance, rejects one; that needs the box distance above the computed
 * distance, which only rounding can do. */
static bool seed_scan_agrees(const proxy_search *s, const float p[3], const proxy_best *best)
{
    for (int k = 0; k < best->n; k++)
        if (plush__proxy_seed_box_skips(&s->tris[best->t[k]], p, best->d[k]))
            return false;
    return true;
}

static void *run_job(void *arg)
{
    const bind_job *job = arg;
    const proxy_search *s = job->search;
    proxy_best prev = {.n = 0};
    for (size_t k = job->begin; k < job->end; k++) {
        size_t i = job->order ? job->order[k] : k;
        proxy_best best = {.n = 0};
        if (job->bvh) {
            offer_hint(s, &prev, job->points[i], &best);
            plush__proxy_bvh_query(job->bvh, job->points[i], &best);
            prev = best;
            if (s->seed && !seed_scan_agrees(s, job->points[i], &best))
                plush__proxy_seed_scan(s, job->points[i], &best);
        } else {
            brute_force(s, job->points[i], &best);
        }
        if (job->settings->seed)
            finish_seed(s, &best, job->settings, i, job->out);
        else if (!finish_empty(&best, i, job->out))
            finish_default(s, &best, job->settings, i, job->out);
    }
    return NULL;
}

/* Spreads the low 10 bits of v to every third bit. */
static uint64_t spread10(uint32_t v)
{
    uint64_t x = v & 0x3ff;
    x = (x | x << 16) & 0x030000ffu;
    x = (x | x << 8) & 0x0300f00fu;
    x = (x | x << 4) & 0x030c30c3u;
    x = (x | x << 2) & 0x09249249u;
    return x;
}

/* How far a walk through the points in this order goes: the shorter, the better each point's hint. */
static double path_length(const float (*points)[3], const uint32_t *order, size_t count)
{
    double sum = 0;
    for (size_t k = 1; k < count; k++) {
        const float *a = points[order ? order[k - 1] : k - 1], *b = points[order ? order[k] : k];
        double d[3] = {(double)a[0] - b[0], (double)a[1] - b[1], (double)a[2] - b[2]};
        sum += sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    }
    return sum;
}

/* The points in Morton order over a 1024^3 grid of their bounds: consecutive points are then neighbours
 * whatever order the caller's mesh has, which is what makes the previous point's answer a good hint.
 * The order changes only the speed, never the answer. NULL (the given order) when memory is short or
 * when the given order is already the shorter walk (a mesh's own vertex order often is). */
static const uint32_t *spatial_order(const float (*points)[3], size_t count, plush_arena *scratch)
{
    if (count > UINT32_MAX)
        return NULL;
    uint64_t *key = plush_arena_array(scratch, count, sizeof *key);
    uint64_t *tmp = plush_arena_array(scratch, count, sizeof *tmp);
    size_t *hist = plush_arena_array(scratch, (size_t)1 << 15, sizeof *hist);
    if (!key || !tmp || !hist)
        return NULL;
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t i = 0; i < count; i++)
        for (int k = 0; k < 3; k++)
            lo[k] = fminf(lo[k], points[i][k]), hi[k] = fmaxf(hi[k], points[i][k]);
    double scale[3];
    for (int k = 0; k < 3; k++)
        scale[k] = hi[k] > lo[k] ? 1023.0 / ((double)hi[k] - lo[k]) : 0;
    for (size_t i = 0; i < count; i++) {
        uint64_t code = 0;
        for (int k = 0; k < 3; k++)
            code |= spread10((uint32_t)(((double)points[i][k] - lo[k]) * scale[k])) << (2 - k);
        key[i] = code << 32 | i;
    }
    /* LSD radix sort on the 30 code bits, two stable passes of 15. */
    for (int shift = 32; shift < 62; shift += 15) {
        memset(hist, 0, ((size_t)1 << 15) * sizeof *hist);
        for (size_t i = 0; i < count; i++)
            hist[key[i] >> shift & 0x7fff]++;
        for (size_t d = 0, sum = 0; d < (size_t)1 << 15; d++) {
            size_t n = hist[d];
            hist[d] = sum;
            sum += n;
        }
        for (size_t i = 0; i < count; i++)
            tmp[hist[key[i] >> shift & 0x7fff]++] = key[i];
        uint64_t *swap = key;
        key = tmp;
        tmp = swap;
    }
    uint32_t *order = (uint32_t *)tmp;   /* tmp's bytes are free now; 4 of its 8 per point suffice */
    for (size_t i = 0; i < count; i++)
        order[i] = (uint32_t)key[i];
    return path_length(points, order, count) < path_length(points, NULL, count) ? order : NULL;
}

/* Threads that cannot be started leave their range to the calling thread: same answer, only slower. */
static void run_jobs(bind_job *jobs, int count)
{
    pthread_t tid[MAX_THREADS];
    bool started[MAX_THREADS] = {false};
    for (int k = 1; k < count; k++)
        started[k] = pthread_create(&tid[k], NULL, run_job, &jobs[k]) == 0;
    run_job(&jobs[0]);
    for (int k = 1; k < count; k++) {
        if (started[k])
            pthread_join(tid[k], NULL);
        else
            run_job(&jobs[k]);
    }
}

/* ---- plush_proxy_bind ------------------------------------------------------------------------ */

static plush_proxy_binding *new_binding(size_t count, size_t triangle_count, bool seed)
{
    plush_arena arena = {0};
    plush_proxy_binding *b = plush_arena_alloc(&arena, sizeof *b);
    size_t n = count ? count : 1;
    if (b) {
        b->triangles = plush_arena_array(&arena, n, sizeof *b->triangles);
        b->weights = plush_arena_array(&arena, n, sizeof *b->weights);
        b->distances = plush_arena_array(&arena, n, sizeof *b->distances);
        b->proxy_share = plush_arena_array(&arena, n, sizeof *b->proxy_share);
        b->percent = seed ? plush_arena_array(&arena, n, sizeof *b->percent) : NULL;
    }
    if (!b || !b->triangles || !b->weights || !b->distances || !b->proxy_share || (seed && !b->percent)) {
        plush_arena_free(&arena);
        return NULL;
    }
    b->vertex_count = count;
    b->triangle_count = triangle_count;
    b->seed = seed;
    b->arena = arena;   /* the arena holds the struct itself: it is copied in last */
    return b;
}

plush_status plush_proxy_bind(const plush_proxy_mesh *proxy, const float (*points)[3], size_t count,
                              const plush_proxy_bind_options *options, plush_proxy_binding **out, plush_diag *diag)
{
    if (out)
        *out = NULL;
    if (!proxy || !out)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "plush_proxy_bind needs a proxy and an out");
    bind_settings set;
    plush_status st = settle_options(options, &set, diag);
    if (st == PLUSH_OK)
        st = check_input(proxy, points, count, diag);
    if (st != PLUSH_OK)
        return st;

    plush_arena scratch = {0};
    proxy_search search;
    st = usable_triangles(proxy, set.seed, &scratch, &search, diag);
    plush_proxy_binding *b = st == PLUSH_OK ? new_binding(count, proxy->triangle_count, set.seed) : NULL;
    if (st == PLUSH_OK && !b)
        st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "point", -1, "out of memory for %zu points", count);
    if (st != PLUSH_OK) {
        plush_arena_free(&scratch);
        return st;
    }

    proxy_bvh *bvh = NULL;
    if (set.search == PLUSH_PROXY_SEARCH_BVH && count) {
        char why[PLUSH_DIAG_MESSAGE];
        bvh = plush__proxy_bvh_create(&search, why, sizeof why);
        if (!bvh)
            plush_diag_warn(diag, -1, "proxy", -1, "%s; binding by brute force (same result, slower)", why);
    }
    const uint32_t *order = bvh ? spatial_order(points, count, &scratch) : NULL;
    int threads = set.threads;
    if ((size_t)threads > count / 256 + 1)
        threads = (int)(count / 256 + 1);
    bind_job jobs[MAX_THREADS];
    for (int k = 0; k < threads; k++)
        jobs[k] = (bind_job){.search = &search, .bvh = bvh, .settings = &set, .points = points, .order = order,
                             .begin = count * (size_t)k / (size_t)threads,
                             .end = count * (size_t)(k + 1) / (size_t)threads, .out = b};
    run_jobs(jobs, threads);
    plush__proxy_bvh_destroy(bvh);
    plush_arena_free(&scratch);
    *out = b;
    return PLUSH_OK;
}

void plush_proxy_binding_free(plush_proxy_binding *binding)
{
    if (!binding)
        return;
    plush_arena arena = binding->arena;
    plush_arena_free(&arena);
}
