/* Seed mode: the original method's arithmetic, operation for operation, in float (docs/binding.md,
 * "The original method's arithmetic"). Built with -ffp-contract=off (Makefile), so no a*b+c here is fused
 * into one rounding: the point of this file is to round where the original rounds. Vector helpers are
 * spelled out as the original's: dot left to right, the usual cross product, normalize as v / |v|.
 * Floats are evaluated in float (FLT_EVAL_METHOD 0: x86-64 SSE, AArch64); on an x87 build the results
 * would carry excess precision and ties could fall differently. */
#include "proxy/bind_internal.h"
#include "plush/sys/proxy.h"

#include <float.h>
#include <math.h>

static inline float dotf(const float a[3], const float b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static inline void subf(const float a[3], const float b[3], float out[3])
{
    out[0] = a[0] - b[0];
    out[1] = a[1] - b[1];
    out[2] = a[2] - b[2];
}

static inline void crossf(const float a[3], const float b[3], float out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

static inline float lengthf(const float v[3]) { return sqrtf(dotf(v, v)); }

static inline void normalizef(const float v[3], float out[3])
{
    float len = lengthf(v);
    out[0] = v[0] / len;
    out[1] = v[1] / len;
    out[2] = v[2] / len;
}

bool plush__proxy_seed_normal(const float a[3], const float b[3], const float c[3], float n[3])
{
    float e0[3], e1[3], m[3];
    subf(b, a, e0);
    subf(c, a, e1);
    crossf(e0, e1, m);
    float len = lengthf(m);
    if (!(len > 0) || !isfinite(len))
        return false;
    normalizef(m, n);
    return isfinite(n[0]) && isfinite(n[1]) && isfinite(n[2]);
}

/* The plane test uses q = p - n dp with dp = (p0 - p) . n, which moves p away from the plane rather than
 * onto it; the edge test only looks at q's in-plane part, so it decides (up to rounding) as a projection
 * would. The first edge that has q outside decides alone: the distance to that edge's segment, measured
 * along the normalised edge. Inside every edge: the plane distance. */
float plush__proxy_seed_distance_n(const float p[3], const float a[3], const float b[3], const float c[3],
                                   const float n[3])
{
    const float *corner[3] = {a, b, c};
    float ap[3];
    subf(a, p, ap);
    float dp = dotf(ap, n);
    float q[3] = {p[0] - n[0] * dp, p[1] - n[1] * dp, p[2] - n[2] * dp};
    for (int i = 0; i < 3; i++) {
        const float *s = corner[i], *e = corner[(i + 1) % 3];
        float edge[3], qs[3], side[3];
        subf(e, s, edge);
        subf(q, s, qs);
        crossf(edge, qs, side);
        if (!(dotf(n, side) < 0))
            continue;
        float u[3], ps[3], off[3];
        normalizef(edge, u);
        float len = lengthf(edge);
        subf(p, s, ps);
        float l = dotf(u, ps);
        if (l < 0) {
            subf(s, p, off);
            return lengthf(off);
        }
        if (l > len) {
            subf(e, p, off);
            return lengthf(off);
        }
        float foot[3] = {u[0] * l + s[0], u[1] * l + s[1], u[2] * l + s[2]};
        subf(p, foot, off);
        return lengthf(off);
    }
    return fabsf(dp);
}

float plush_proxy_seed_distance(const float p[3], const float a[3], const float b[3], const float c[3])
{
    float n[3];
    if (!plush__proxy_seed_normal(a, b, c, n))
        return NAN;
    return plush__proxy_seed_distance_n(p, a, b, c, n);
}

bool plush__proxy_seed_box_skips(const proxy_tri *t, const float p[3], float far)
{
    for (int k = 0; k < 3; k++) {
        float lo = fminf(fminf(t->v[0][k], t->v[1][k]), t->v[2][k]);
        float hi = fmaxf(fmaxf(t->v[0][k], t->v[1][k]), t->v[2][k]);
        if (p[k] - hi > far || lo - p[k] > far)
            return true;
    }
    return false;
}

/* The original's loop as it is, far's stale value included: far changes only when a triangle lands in
 * the fourth slot itself, so after entries shift down it can stay above the fourth distance. Slots start
 * at FLT_MAX, so a NaN distance (which s->tris does not hold anyway) is never placed. */
void plush__proxy_seed_scan(const proxy_search *s, const float p[3], proxy_best *best)
{
    float far = FLT_MAX;
    float d[PLUSH_PROXY_INFLUENCES] = {FLT_MAX, FLT_MAX, FLT_MAX, FLT_MAX};
    uint32_t slot[PLUSH_PROXY_INFLUENCES] = {0};
    int n = 0;
    for (size_t i = 0; i < s->tri_count; i++) {
        const proxy_tri *t = &s->tris[i];
        if (plush__proxy_seed_box_skips(t, p, far))
            continue;
        float di = plush__proxy_seed_distance_n(p, t->v[0], t->v[1], t->v[2], t->n);
        if (di > far)
            continue;
        for (int j = 0; j < PLUSH_PROXY_INFLUENCES; j++) {
            if (!(di <= d[j]))
                continue;
            for (int m = PLUSH_PROXY_INFLUENCES - 1; m > j; m--)
                d[m] = d[m - 1], slot[m] = slot[m - 1];
            d[j] = di;
            slot[j] = (uint32_t)i;
            if (j == PLUSH_PROXY_INFLUENCES - 1)
                far = di;
            if (n < PLUSH_PROXY_INFLUENCES)
                n++;
            break;
        }
    }
    best->n = n;
    for (int j = 0; j < n; j++)
        best->d[j] = d[j], best->t[j] = slot[j];
}

void plush__proxy_seed_settle(uint32_t pct[PLUSH_PROXY_INFLUENCES])
{
    uint32_t total = 0;
    for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++)
        total += pct[k];
    if (total < 100)
        pct[0] += 100 - total;
    else if (total > 100)
        pct[0] = pct[0] > total - 100 ? pct[0] - (total - 100) : 0;
    if (pct[0] > 100)
        pct[0] = 100;
}

int plush__proxy_seed_percent(const float d[PLUSH_PROXY_INFLUENCES], int n, float drop_ratio,
                              uint32_t pct[PLUSH_PROXY_INFLUENCES])
{
    for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++)
        pct[k] = 0;
    pct[0] = 100;
    if (n <= 0)
        return 0;
    float d0 = d[0];
    if (d0 < 0.00001f)
        return 1;
    int kept = 1;
    while (kept < n && !(d[kept] / d0 > drop_ratio))
        kept++;
    float sum = 1;
    for (int b = 1; b < kept; b++)
        sum += d0 / d[b];
    for (int b = 0; b < kept; b++)
        pct[b] = (uint32_t)(100.0f * (d0 / d[b] / sum) + 0.00001f);
    plush__proxy_seed_settle(pct);
    return kept;
}
