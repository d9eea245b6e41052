/* Point-triangle distances: the exact one (default mode) and the original method's (seed mode). */
#include "proxy/bind_internal.h"

#include <math.h>

static inline double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static inline void sub3(const float a[3], const float b[3], double out[3])
{
    out[0] = (double)a[0] - b[0];
    out[1] = (double)a[1] - b[1];
    out[2] = (double)a[2] - b[2];
}

/* Squared distance from p to segment ab, with every vector relative to a (ap = p - a, ab = b - a). A
 * zero-length segment is its end point, which is what makes a collapsed triangle safe. */
static double segment_dist2(const double ap[3], const double ab[3])
{
    double len2 = dot3(ab, ab);
    double t = len2 > 0 ? dot3(ap, ab) / len2 : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    double d[3] = {ap[0] - t * ab[0], ap[1] - t * ab[1], ap[2] - t * ab[2]};
    return dot3(d, d);
}

/* A triangle too thin for barycentric coordinates to mean anything is the union of its edges. */
static double collapsed_dist2(const float p[3], const float a[3], const float b[3], const float c[3])
{
    double ap[3], ab[3], bp[3], bc[3], cp[3], ca[3];
    sub3(p, a, ap), sub3(b, a, ab), sub3(p, b, bp), sub3(c, b, bc), sub3(p, c, cp), sub3(a, c, ca);
    double d = segment_dist2(ap, ab), e = segment_dist2(bp, bc), f = segment_dist2(cp, ca);
    return fmin(d, fmin(e, f));
}

static inline double dist2_to(const double ap[3], const double ab[3], const double ac[3], double v, double w)
{
    double d[3] = {ap[0] - v * ab[0] - w * ac[0], ap[1] - v * ab[1] - w * ac[1], ap[2] - v * ab[2] - w * ac[2]};
    return dot3(d, d);
}

/* Ericson's region method (Real-Time Collision Detection, 5.1.5): the signs of a few dot products tell
 * the Voronoi region of p, so no projection is computed twice. Double precision from float input keeps
 * the cancellation of nearby points far below the float result's rounding. Every division is guarded:
 * its denominator is positive in its region unless the triangle has collapsed, and then the edges
 * decide. */
static float region_distance(const float p[3], const float a[3], const float b[3], const float c[3])
{
    double ab[3], ac[3], ap[3], bp[3], cp[3];
    sub3(b, a, ab), sub3(c, a, ac), sub3(p, a, ap);
    double d1 = dot3(ab, ap), d2 = dot3(ac, ap);
    if (d1 <= 0 && d2 <= 0)
        return (float)sqrt(dot3(ap, ap));
    sub3(p, b, bp);
    double d3 = dot3(ab, bp), d4 = dot3(ac, bp);
    if (d3 >= 0 && d4 <= d3)
        return (float)sqrt(dot3(bp, bp));
    double vc = d1 * d4 - d3 * d2;
    if (vc <= 0 && d1 >= 0 && d3 <= 0 && d1 - d3 > 0)
        return (float)sqrt(dist2_to(ap, ab, ac, d1 / (d1 - d3), 0));
    sub3(p, c, cp);
    double d5 = dot3(ab, cp), d6 = dot3(ac, cp);
    if (d6 >= 0 && d5 <= d6)
        return (float)sqrt(dot3(cp, cp));
    double vb = d5 * d2 - d1 * d6;
    if (vb <= 0 && d2 >= 0 && d6 <= 0 && d2 - d6 > 0)
        return (float)sqrt(dist2_to(ap, ab, ac, 0, d2 / (d2 - d6)));
    double va = d3 * d6 - d5 * d4;
    if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0 && (d4 - d3) + (d5 - d6) > 0) {
        double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return (float)sqrt(dist2_to(ap, ab, ac, 1 - w, w));
    }
    /* va + vb + vc is |ab x ac|^2; compared with |ab|^2 |ac|^2 it is sin^2 of the angle at a. */
    double denom = va + vb + vc;
    if (!(denom > 1e-12 * dot3(ab, ab) * dot3(ac, ac)) || va < 0 || vb < 0 || vc < 0)
        return (float)sqrt(collapsed_dist2(p, a, b, c));
    return (float)sqrt(dist2_to(ap, ab, ac, vb / denom, vc / denom));
}

static inline void cross3(const double a[3], const double b[3], double out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

/* With n = ab x ac, the projection of p is a + s ab + t ac where s = ap . (ac x n) / |n|^2 and
 * t = ap . (n x ab) / |n|^2. */
void proxy_exact_prepare(const float a[3], const float b[3], const float c[3], proxy_exact *e)
{
    double ab[3], ac[3], n[3], g[3], h[3];
    sub3(b, a, ab), sub3(c, a, ac);
    cross3(ab, ac, n);
    double nn = dot3(n, n);
    *e = (proxy_exact){.flat = !(nn > 1e-12 * dot3(ab, ab) * dot3(ac, ac))};
    if (e->flat)
        return;
    cross3(ac, n, g);
    cross3(n, ab, h);
    double len = sqrt(nn);
    for (int k = 0; k < 3; k++) {
        e->gs[k] = g[k] / nn;
        e->gt[k] = h[k] / nn;
        e->unit_normal[k] = n[k] / len;
    }
}

float proxy_exact_distance(const proxy_exact *e, const float p[3], const float a[3], const float b[3],
                           const float c[3])
{
    if (!e->flat) {
        double ap[3];
        sub3(p, a, ap);
        double s = dot3(ap, e->gs), t = dot3(ap, e->gt);
        if (s >= 0 && t >= 0 && s + t <= 1)
            return (float)fabs(dot3(ap, e->unit_normal));
    }
    return region_distance(p, a, b, c);
}

float plush_proxy_point_triangle_distance(const float p[3], const float a[3], const float b[3], const float c[3])
{
    proxy_exact e;
    proxy_exact_prepare(a, b, c, &e);
    return proxy_exact_distance(&e, p, a, b, c);
}

bool proxy_tri_degenerate(const float a[3], const float b[3], const float c[3])
{
    double ab[3], ac[3], bc[3];
    sub3(b, a, ab), sub3(c, a, ac), sub3(c, b, bc);
    double n[3] = {ab[1] * ac[2] - ab[2] * ac[1], ab[2] * ac[0] - ab[0] * ac[2], ab[0] * ac[1] - ab[1] * ac[0]};
    double longest = fmax(dot3(ab, ab), fmax(dot3(ac, ac), dot3(bc, bc)));
    return !(sqrt(dot3(n, n)) > 1e-6 * longest);
}

/* ---- the original method's routine, in single precision like the original's vectors ------------ */

static inline float dotf(const float a[3], const float b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static inline void crossf(const float a[3], const float b[3], float out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

bool proxy_seed_normal(const float a[3], const float b[3], const float c[3], float n[3])
{
    float e0[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    float e1[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    float m[3];
    crossf(e0, e1, m);
    float len = sqrtf(dotf(m, m));
    if (!(len > 0) || !isfinite(len))
        return false;
    for (int i = 0; i < 3; i++)
        n[i] = m[i] / len;
    return isfinite(n[0]) && isfinite(n[1]) && isfinite(n[2]);
}

/* Distance from p (not from its projection: both are the same up to rounding, since the segment lies in
 * the plane) to segment ab, the parameter clamped to the ends. */
static float segment_distf(const float p[3], const float a[3], const float b[3])
{
    float ab[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    float ap[3] = {p[0] - a[0], p[1] - a[1], p[2] - a[2]};
    float len2 = dotf(ab, ab);
    float t = len2 > 0 ? dotf(ap, ab) / len2 : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    float d[3] = {ap[0] - t * ab[0], ap[1] - t * ab[1], ap[2] - t * ab[2]};
    return sqrtf(dotf(d, d));
}

/* Project onto the plane; the first edge (p0p1, p1p2, p2p0) with the projection strictly outside decides
 * by its segment, otherwise the plane distance. Never below the true distance (before rounding): a
 * segment of the triangle is part of it, and an inside projection is the closest point. */
float proxy_seed_distance_n(const float p[3], const float a[3], const float b[3], const float c[3],
                            const float n[3])
{
    float ap[3] = {p[0] - a[0], p[1] - a[1], p[2] - a[2]};
    float h = dotf(ap, n);
    float q[3] = {p[0] - h * n[0], p[1] - h * n[1], p[2] - h * n[2]};
    const float *edge[3][2] = {{a, b}, {b, c}, {c, a}};
    for (int k = 0; k < 3; k++) {
        const float *s = edge[k][0], *e = edge[k][1];
        float se[3] = {e[0] - s[0], e[1] - s[1], e[2] - s[2]};
        float sq[3] = {q[0] - s[0], q[1] - s[1], q[2] - s[2]};
        float side[3];
        crossf(se, sq, side);
        if (dotf(side, n) < 0)
            return segment_distf(p, s, e);
    }
    return fabsf(h);
}

float plush_proxy_seed_distance(const float p[3], const float a[3], const float b[3], const float c[3])
{
    float n[3];
    if (!proxy_seed_normal(a, b, c, n))
        return NAN;
    return proxy_seed_distance_n(p, a, b, c, n);
}
