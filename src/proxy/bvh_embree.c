/* The Embree search: a triangle BVH and rtcPointQuery with a callback that keeps the best four and
 * shrinks the query radius.
 *
 * Embree is opened on first use through the core loader, never linked (core/loader.h says why). */
#include "core/loader.h"
#include "proxy/bind_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct proxy_bvh {
    const plush__embree *rtc;
    RTCDevice device;
    RTCScene scene;
    const proxy_search *search;
};

/* Only the usable triangles go in, so primID is the index into search->tris. */
static bool build(proxy_bvh *b, char *why, size_t why_size)
{
    const proxy_search *s = b->search;
    RTCGeometry geom = b->rtc->rtcNewGeometry(b->device, RTC_GEOMETRY_TYPE_TRIANGLE);
    if (!geom) {
        snprintf(why, why_size, "embree: cannot create a triangle geometry");
        return false;
    }
    float *v = b->rtc->rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3,
                                              3 * sizeof(float), 3 * s->tri_count);
    unsigned *idx = b->rtc->rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3,
                                                   3 * sizeof(unsigned), s->tri_count);
    if (v && idx) {
        for (size_t i = 0; i < s->tri_count; i++) {
            memcpy(v + 9 * i, s->tris[i].v, 9 * sizeof(float));
            for (unsigned k = 0; k < 3; k++)
                idx[3 * i + k] = (unsigned)(3 * i + k);
        }
        b->rtc->rtcCommitGeometry(geom);
        b->rtc->rtcAttachGeometry(b->scene, geom);
    }
    b->rtc->rtcReleaseGeometry(geom);
    if (v && idx)
        b->rtc->rtcCommitScene(b->scene);
    enum RTCError e = b->rtc->rtcGetDeviceError(b->device);
    if (!v || !idx || e != RTC_ERROR_NONE) {
        snprintf(why, why_size, "embree: cannot build the BVH: %s", plush__embree_error_text(e));
        return false;
    }
    return true;
}

proxy_bvh *plush__proxy_bvh_create(const proxy_search *s, char *why, size_t why_size)
{
    if (s->tri_count > (size_t)UINT32_MAX / 3) {
        snprintf(why, why_size, "too many triangles for embree (%zu)", s->tri_count);
        return NULL;
    }
    proxy_bvh *b = calloc(1, sizeof *b);
    if (!b) {
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    b->search = s;
    plush_diag d = {0};
    if ((b->rtc = plush__embree_load(&d)) == NULL) {
        snprintf(why, why_size, "%s", d.message);
        free(b);
        return NULL;
    }
    /* One build thread: the proxy is small, and a thread pool would outlive nothing but this call. */
    if ((b->device = b->rtc->rtcNewDevice("threads=1")) == NULL)
        snprintf(why, why_size, "embree: cannot create a device");
    if (b->device && (b->scene = b->rtc->rtcNewScene(b->device)) == NULL)
        snprintf(why, why_size, "embree: cannot create a scene");
    if (b->scene && build(b, why, why_size))
        return b;
    plush__proxy_bvh_destroy(b);
    return NULL;
}

void plush__proxy_bvh_destroy(proxy_bvh *b)
{
    if (!b)
        return;
    if (b->scene)
        b->rtc->rtcReleaseScene(b->scene);
    if (b->device)
        b->rtc->rtcReleaseDevice(b->device);
    free(b);
}

typedef struct query_state {
    const proxy_search *search;
    const float *p;
    proxy_best *best;
    float point_scale;
} query_state;

/* Called for every triangle of a leaf whose box reaches the query sphere. A triangle already held (from
 * the hint) or whose bounding sphere lies beyond the query sphere is skipped before its distance is
 * measured. Once four are held, the query sphere shrinks to the fourth distance plus the rounding
 * margin; returning true tells Embree the radius changed. */
static bool on_triangle(struct RTCPointQueryFunctionArguments *args)
{
    query_state *q = args->userPtr;
    uint32_t slot = args->primID;
    if (proxy_best_holds(q->best, slot))
        return false;
    float r = args->query->radius;
    if (r < INFINITY) {
        const proxy_bound *s = &q->search->bounds[slot];
        float c[3] = {q->p[0] - s->center[0], q->p[1] - s->center[1], q->p[2] - s->center[2]};
        float reach = r + s->radius;
        if (c[0] * c[0] + c[1] * c[1] + c[2] * c[2] > reach * reach)
            return false;
    }
    const proxy_tri *t = &q->search->tris[slot];
    float d = proxy_search_distance(q->search, t, q->p);
    if (!proxy_best_offer(q->best, d, slot, q->search->seed) || q->best->n < PLUSH_PROXY_INFLUENCES)
        return false;
    r = proxy_search_radius(q->best->d[PLUSH_PROXY_INFLUENCES - 1], q->point_scale);
    if (!(r < args->query->radius))
        return false;
    args->query->radius = r;
    return true;
}

void plush__proxy_bvh_query(const proxy_bvh *b, const float p[3], proxy_best *best)
{
    float ps = b->search->scale;
    for (int i = 0; i < 3; i++)
        ps = fmaxf(ps, fabsf(p[i]));
    query_state q = {.search = b->search, .p = p, .best = best, .point_scale = ps};
    struct RTCPointQuery query = {.x = p[0], .y = p[1], .z = p[2], .time = 0, .radius = INFINITY};
    if (best->n == PLUSH_PROXY_INFLUENCES)
        query.radius = proxy_search_radius(best->d[PLUSH_PROXY_INFLUENCES - 1], ps);
    struct RTCPointQueryContext context;
    rtcInitPointQueryContext(&context);
    b->rtc->rtcPointQuery(b->scene, &query, &context, on_triangle, &q);
}

bool plush_proxy_search_available(plush_diag *diag)
{
    return plush__embree_load(diag) != NULL;
}
