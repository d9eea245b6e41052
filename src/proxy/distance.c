/* The exact point-triangle distance (default mode); the original method's routine is in seed.c. */
#include "proxy/bind_internal.h"
#include "plush/sys/proxy.h"

#include <math.h>

static inline double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static inline void sub3(const float a[3], const float b[3], double out[3])
{
    out[0] = (double)a[0] - b[0];
    out[1] = (double)a[1] - b[1];
    out[2] = (double)a[2] - b[2];
}

/* Squared distance from p to segment se, its parameter clamped to the ends. inv_len2 is 1 / |e - s|^2,
 * or 0 for a zero-length segment, which is then its start point. */
static inline double segment_dist2(const float p[3], const float s[3], const float e[3], double inv_len2)
{
    double se[3], sp[3];
    sub3(e, s, se), sub3(p, s, sp);
    double t = dot3(sp, se) * inv_len2;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    double d[3] = {sp[0] - t * se[0], sp[1] - t * se[1], sp[2] - t * se[2]};
    return dot3(d, d);
}

static double inverse_length2(const float s[3], const float e[3])
{
    double se[3];
    sub3(e, s, se);
    double len2 = dot3(se, se);
    return len2 > 0 ? 1 / len2 : 0;
}

static inline void cross3(const double a[3], const double b[3], double out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

/* With n = ab x ac, the projection of p is a + s ab + t ac where s = ap . (ac x n) / |n|^2 and
 * t = ap . (n x ab) / |n|^2. Those dual vectors are only well conditioned while the angle at a is
 * neither near 0 nor near 180 degrees; below a sine of 1e-6 the triangle counts as flat. */
void plush__proxy_exact_prepare(const float a[3], const float b[3], const float c[3], proxy_exact *e)
{
    double ab[3], ac[3], n[3], g[3], h[3];
    sub3(b, a, ab), sub3(c, a, ac);
    cross3(ab, ac, n);
    double nn = dot3(n, n);
    *e = (proxy_exact){.flat = !(nn > 1e-12 * dot3(ab, ab) * dot3(ac, ac)),
                       .inv_len2 = {inverse_length2(a, b), inverse_length2(b, c), inverse_length2(c, a)}};
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

/* Inside, the plane distance. Outside, the closest point lies on the boundary, on an edge whose line has
 * the projection on its outer side: in the interior of such an edge (p - x is then an outward normal of
 * it), or at a corner whose outward normal cone holds p - x, spanned by the outward normals of its two
 * edges, so at least one of them has the projection outside, and its clamped segment reaches the
 * corner. So the nearest of the (one or two) violated edges is exact. A flat triangle is the union of
 * its three edges. Double precision from float input keeps the cancellation of nearby points far below
 * the float result's rounding. */
float plush__proxy_exact_distance(const proxy_exact *e, const float p[3], const float a[3], const float b[3],
                           const float c[3])
{
    if (e->flat) {
        double d = segment_dist2(p, a, b, e->inv_len2[0]);
        d = fmin(d, segment_dist2(p, b, c, e->inv_len2[1]));
        return (float)sqrt(fmin(d, segment_dist2(p, c, a, e->inv_len2[2])));
    }
    double ap[3];
    sub3(p, a, ap);
    double s = dot3(ap, e->gs), t = dot3(ap, e->gt);
    if (s >= 0 && t >= 0 && s + t <= 1)
        return (float)fabs(dot3(ap, e->unit_normal));
    double d = INFINITY;
    if (t < 0)
        d = segment_dist2(p, a, b, e->inv_len2[0]);
    if (s + t > 1)
        d = fmin(d, segment_dist2(p, b, c, e->inv_len2[1]));
    if (s < 0)
        d = fmin(d, segment_dist2(p, c, a, e->inv_len2[2]));
    return (float)sqrt(d);
}

float plush_proxy_point_triangle_distance(const float p[3], const float a[3], const float b[3], const float c[3])
{
    proxy_exact e;
    plush__proxy_exact_prepare(a, b, c, &e);
    return plush__proxy_exact_distance(&e, p, a, b, c);
}

bool plush__proxy_tri_degenerate(const float a[3], const float b[3], const float c[3])
{
    double ab[3], ac[3], bc[3];
    sub3(b, a, ab), sub3(c, a, ac), sub3(c, b, bc);
    double n[3] = {ab[1] * ac[2] - ab[2] * ac[1], ab[2] * ac[0] - ab[0] * ac[2], ab[0] * ac[1] - ab[1] * ac[0]};
    double longest = fmax(dot3(ab, ab), fmax(dot3(ac, ac), dot3(bc, bc)));
    return !(sqrt(dot3(n, n)) > 1e-6 * longest);
}
