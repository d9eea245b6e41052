/* Which keys a baked bone track needs: a key is written only where interpolating its neighbours (what a
 * player does between keys: translation lerped, rotation slerped) would miss the recorded motion by more
 * than the tolerance, measured where it matters, at the vertices the bone moves.
 *
 * A bone turns by R about its rest position c and moves by t; a vertex it carries at rest position v goes
 * to R (v - c) + c + t. Two keys (R1, t1) and (R2, t2) put it |(R1 - R2)(v - c) + t1 - t2| apart, at most
 * |t1 - t2| + 2 sin(phi / 2) |v - c|, where phi is the angle of R2^T R1 and cos(phi / 2) = |q1 . q2|. With
 * reach the largest |v - c| of the bone's vertices, that bound holds for each of them, and a vertex blends
 * its bones with weights summing to one, so it moves by no more than its worst bone: keeping every bone's
 * bound within the tolerance keeps every vertex within it.
 *
 * A VMD key also carries four curves (X, Y, Z, rotation) that shape the way from the key before: the
 * share of the way at each moment between the keys, a cubic Bezier from (0, 0) to (1, 1) with two control
 * points in 0..127. When a straight segment misses, the curves are fitted to the shares the recorded keys
 * take (per channel, least squares on a cubic with free end slopes, the control points at a third and two
 * thirds of the time, so the time needs no inverting) and the segment is checked again with them,
 * evaluated as a player does (plush__vmd_bezier). glTF has no such curves: its tracks are reduced straight. */
#include "anim/anim_internal.h"
#include "core/geom.h"
#include "export/bake_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const uint8_t straight[4] = {20, 20, 107, 107};

/* Between the key interpolated from a to b at time share u (shaped by the curves cv when not NULL) and the
 * recorded key k: how far the pivot lies off (*move) and 2 sin(phi / 2) of the turn between them (*turn),
 * what a vertex at distance r from the pivot is moved by at most per unit of r. */
static void key_miss_parts(const float a[7], const float b[7], double u, const float k[7], const uint8_t (*cv)[4],
                           double *move, double *turn)
{
    double qa[4] = {a[3], a[4], a[5], a[6]}, qb[4] = {b[3], b[4], b[5], b[6]}, q[4], share[4] = {u, u, u, u};
    for (int c = 0; cv && c < 4; c++)
        share[c] = plush__vmd_bezier(cv[c], (float)u);
    plush__quat_slerp(qa, qb, share[3], q);
    double moved = 0, dot = 0, qn = 0;
    for (int c = 0; c < 3; c++) {
        double d = (double)a[c] + ((double)b[c] - a[c]) * share[c] - k[c];
        moved += d * d;
    }
    for (int c = 0; c < 4; c++) {
        dot += q[c] * k[3 + c];
        qn += (double)k[3 + c] * k[3 + c];
    }
    dot = qn > 0 ? dot / sqrt(qn) : 1.0;
    double t = 1.0 - dot * dot;
    *move = sqrt(moved);
    *turn = 2.0 * sqrt(t > 0 ? t : 0);
}

/* The bound above between the key interpolated from a to b at time share u (shaped by the curves cv when
 * not NULL) and the recorded key k. */
static double key_miss(const float a[7], const float b[7], double u, const float k[7], double reach,
                       const uint8_t (*cv)[4])
{
    double move, turn;
    key_miss_parts(a, b, u, k, cv, &move, &turn);
    return move + turn * reach;
}

/* Keys a .. b stand for every key between them (shaped by cv when not NULL). */
static bool segment_within(const float (*keys)[7], size_t stride, const uint32_t *frames, size_t a, size_t b,
                           double reach, double tolerance, const uint8_t (*cv)[4])
{
    double span = (double)frames[b] - frames[a];
    for (size_t f = a + 1; f < b; f++)
        if (key_miss(keys[a * stride], keys[b * stride], ((double)frames[f] - frames[a]) / span, keys[f * stride],
                     reach, cv) > tolerance)
            return false;
    return true;
}

/* The rotation from p to q as a vector: its axis times half its angle (q p^-1's logarithm). */
static void turn_between(const float p[4], const float q[4], double out[3])
{
    /* conj(p) * q, with (x y z w) quaternions */
    double w = (double)p[3] * q[3] + (double)p[0] * q[0] + (double)p[1] * q[1] + (double)p[2] * q[2];
    double v[3] = {(double)p[3] * q[0] - (double)p[0] * q[3] - ((double)p[1] * q[2] - (double)p[2] * q[1]),
                   (double)p[3] * q[1] - (double)p[1] * q[3] - ((double)p[2] * q[0] - (double)p[0] * q[2]),
                   (double)p[3] * q[2] - (double)p[2] * q[3] - ((double)p[0] * q[1] - (double)p[1] * q[0])};
    if (w < 0)
        w = -w, v[0] = -v[0], v[1] = -v[1], v[2] = -v[2];
    double len = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]), scale = len > 0 ? atan2(len, w) / len : 1.0;
    for (int c = 0; c < 3; c++)
        out[c] = v[c] * scale;
}

/* One channel's curve from the shares y[i] it takes at times x[i] (0 < x < 1): the cubic from 0 to 1 with
 * end slopes m0 and m1 (Hermite) nearest them, as control points (1/3, m0/3) and (2/3, 1 - m1/3), the
 * slopes held to 0..3 so that those stay in the unit square. A faint pull toward the straight line (both
 * slopes 1) settles a segment with a single key between. */
static void fit_curve(const double *x, const double *y, size_t n, uint8_t cv[4])
{
    const double pull = 1e-6;
    double aa = pull, ab = 0, bb = pull, ra = pull, rb = pull;
    for (size_t i = 0; i < n; i++) {
        double t = x[i], t2 = t * t, t3 = t2 * t;
        double h01 = -2 * t3 + 3 * t2, h10 = t3 - 2 * t2 + t, h11 = t3 - t2, r = y[i] - h01;
        aa += h10 * h10, ab += h10 * h11, bb += h11 * h11, ra += r * h10, rb += r * h11;
    }
    double det = aa * bb - ab * ab, m0 = (ra * bb - rb * ab) / det, m1 = (rb * aa - ra * ab) / det;
    m0 = m0 < 0 ? 0 : m0 > 3 ? 3 : m0;
    m1 = m1 < 0 ? 0 : m1 > 3 ? 3 : m1;
    cv[0] = 42; /* 127 / 3 */
    cv[1] = (uint8_t)lround(127.0 * m0 / 3.0);
    cv[2] = 85; /* 2 * 127 / 3 */
    cv[3] = (uint8_t)lround(127.0 * (1.0 - m1 / 3.0));
}

/* The four curves of the segment a .. b fitted to the keys between (a channel that barely moves stays
 * straight). x and y hold b - a - 1 values each. */
static void fit_curves(const float (*keys)[7], size_t stride, const uint32_t *frames, size_t a, size_t b,
                       double *x, double *y, uint8_t cv[4][4])
{
    const float *ka = keys[a * stride], *kb = keys[b * stride];
    double span = (double)frames[b] - frames[a], whole[3];
    size_t n = b - a - 1;
    for (size_t f = a + 1; f < b; f++)
        x[f - a - 1] = ((double)frames[f] - frames[a]) / span;
    for (int c = 0; c < 3; c++) {
        double d = (double)kb[c] - ka[c];
        memcpy(cv[c], straight, 4);
        if (!(fabs(d) > 1e-6 * (1.0 + fabs((double)ka[c]))))
            continue;
        for (size_t f = a + 1; f < b; f++)
            y[f - a - 1] = ((double)keys[f * stride][c] - ka[c]) / d;
        fit_curve(x, y, n, cv[c]);
    }
    turn_between(ka + 3, kb + 3, whole);
    double w2 = whole[0] * whole[0] + whole[1] * whole[1] + whole[2] * whole[2];
    memcpy(cv[3], straight, 4);
    if (!(w2 > 1e-12))
        return;
    for (size_t f = a + 1; f < b; f++) {
        double part[3];
        turn_between(ka + 3, keys[f * stride] + 3, part);
        y[f - a - 1] = (part[0] * whole[0] + part[1] * whole[1] + part[2] * whole[2]) / w2;
    }
    fit_curve(x, y, n, cv[3]);
}

/* Keys a .. b stand for every key between them: straight, or, when curves is not NULL, with curves fitted
 * (into cv, straight when a straight segment fits). */
static bool segment_fits(const float (*keys)[7], size_t stride, const uint32_t *frames, size_t a, size_t b,
                         double reach, double tolerance, bool curves, double *x, double *y, uint8_t cv[4][4])
{
    for (int c = 0; curves && c < 4; c++)
        memcpy(cv[c], straight, 4);
    if (segment_within(keys, stride, frames, a, b, reach, tolerance, NULL))
        return true;
    if (!curves || b - a < 2)
        return false;
    fit_curves(keys, stride, frames, a, b, x, y, cv);
    return segment_within(keys, stride, frames, a, b, reach, tolerance, (const uint8_t(*)[4])cv);
}

size_t plush__bake_reduce_track(const float (*keys)[7], size_t stride, const uint32_t *frames, size_t count,
                                double reach, double tolerance, bool *keep, uint8_t (*curves)[4][4])
{
    return plush__bake_reduce_track_forced(keys, stride, frames, count, reach, tolerance, NULL, keep, curves);
}

size_t plush__bake_reduce_track_forced(const float (*keys)[7], size_t stride, const uint32_t *frames, size_t count,
                                       double reach, double tolerance, const bool *forced, bool *keep,
                                       uint8_t (*curves)[4][4])
{
    if (!count)
        return 0;
    for (size_t f = 0; f < count; f++) {
        keep[f] = tolerance < 0;
        for (int c = 0; curves && c < 4; c++)
            memcpy(curves[f][c], straight, 4);
    }
    if (tolerance < 0)
        return count;
    keep[0] = keep[count - 1] = true;
    size_t kept = count > 1 ? 2 : 1;
    double *x = curves ? malloc(count * sizeof *x) : NULL, *y = curves ? malloc(count * sizeof *y) : NULL;
    bool curved = curves && x && y; /* out of memory: straight segments, more keys */
    uint8_t cv[4][4] = {{20, 20, 107, 107}, {20, 20, 107, 107}, {20, 20, 107, 107}, {20, 20, 107, 107}}, fits[4][4];
    /* cv: the segment tried; fits: the longest that fit so far */
    /* From each kept key, the farthest key the segment reaches: doubling steps until one misses, then
     * halving between the last that fits and the first that does not. Every segment written is checked
     * at each recorded frame it spans, so the search's guess never costs accuracy, only keys. */
    size_t next = 0; /* the first forced key after a (count - 1 when none) */
    for (size_t a = 0; a + 1 < count;) {
        if (next <= a)
            for (next = a + 1; forced && next < count - 1 && !forced[next]; next++)
                ;
        if (!forced || next > count - 1)
            next = count - 1;
        size_t last = next, good = a + 1, bad = last + 1;
        for (int c = 0; c < 4; c++)
            memcpy(fits[c], straight, 4); /* good = a + 1: nothing between */
        for (size_t step = 2;; step *= 2) {
            size_t b = a + step < last ? a + step : last;
            if (b <= good)
                break;
            if (!segment_fits(keys, stride, frames, a, b, reach, tolerance, curved, x, y, cv)) {
                bad = b;
                break;
            }
            good = b;
            memcpy(fits, cv, sizeof fits);
            if (b == last)
                break;
        }
        while (bad - good > 1) {
            size_t mid = good + (bad - good) / 2;
            if (segment_fits(keys, stride, frames, a, mid, reach, tolerance, curved, x, y, cv)) {
                good = mid;
                memcpy(fits, cv, sizeof fits);
            } else {
                bad = mid;
            }
        }
        if (curved)
            memcpy(curves[good], fits, sizeof fits);
        if (!keep[good])
            kept++;
        keep[good] = true;
        a = good;
    }
    free(x), free(y);
    return kept;
}


void plush__bake_track_misses(const float (*keys)[7], size_t stride, const uint32_t *frames, size_t count,
                              const bool *keep, const uint8_t (*curves)[4][4], float *move, float *turn)
{
    for (size_t f = 0; f < count; f++)
        move[f] = turn[f] = 0;
    for (size_t a = 0, b; a + 1 < count; a = b) {
        for (b = a + 1; b < count - 1 && !keep[b]; b++)
            ;
        double span = (double)frames[b] - frames[a];
        for (size_t f = a + 1; f < b; f++) {
            double m, t;
            key_miss_parts(keys[a * stride], keys[b * stride], ((double)frames[f] - frames[a]) / span,
                           keys[f * stride], curves ? (const uint8_t(*)[4])curves[b] : NULL, &m, &t);
            move[f] = (float)m, turn[f] = (float)t;
        }
    }
}

/* A bone's own vertices at rest, then up the chain: a parent's reach covers its child's plus the longest
 * way from the parent's origin to the child's (the child's local translation, which a rotation of the
 * parent does not lengthen). */
size_t plush__bake_chain_reach(const plush_pmx_model *m, size_t bones, const float (*keys)[7], size_t frames,
                               double *reach)
{
    size_t n = bones < m->bone_count ? bones : m->bone_count, stride = bones;
    double *longest = calloc(n ? n : 1, sizeof *longest);
    for (size_t b = 0; b < n; b++)
        reach[b] = 0;
    if (!longest)
        return 0;
    for (size_t f = 0; f < frames; f++)
        for (size_t b = 0; b < n; b++) {
            const float *k = keys[f * stride + b];
            double d = sqrt((double)k[0] * k[0] + (double)k[1] * k[1] + (double)k[2] * k[2]);
            longest[b] = d > longest[b] ? d : longest[b];
        }
    for (size_t v = 0; v < m->vertex_count; v++) {
        const plush_pmx_vertex *vx = &m->vertices[v];
        for (int k = 0; k < 4; k++) {
            int32_t b = vx->bones[k];
            if (b < 0 || (size_t)b >= n || !(vx->weights[k] > 0))
                continue;
            const float *c = m->bones[b].position;
            double dx = (double)vx->position[0] - c[0], dy = (double)vx->position[1] - c[1],
                   dz = (double)vx->position[2] - c[2];
            double d = sqrt(dx * dx + dy * dy + dz * dz);
            reach[b] = d > reach[b] ? d : reach[b];
        }
    }
    /* each bone's own reach carried up its chain (a cycle, which a valid model has not, stops at n steps) */
    double *own = malloc((n ? n : 1) * sizeof *own);
    size_t deepest = 0;
    if (own) {
        memcpy(own, reach, n * sizeof *own);
        for (size_t b = 0; b < n; b++) {
            double acc = own[b];
            size_t len = 1;
            for (size_t c = b; m->bones[c].parent >= 0 && (size_t)m->bones[c].parent < n && len <= n; len++) {
                acc += longest[c];
                c = (size_t)m->bones[c].parent;
                reach[c] = acc > reach[c] ? acc : reach[c];
            }
            deepest = len > deepest ? len : deepest;
        }
    }
    free(own);
    free(longest);
    return deepest;
}

void plush__bake_global(const float m[16], double g[12])
{
    for (int c = 0; c < 3; c++)
        for (int r = 0; r < 3; r++)
            g[3 * c + r] = m[4 * c + r];
    for (int r = 0; r < 3; r++)
        g[9 + r] = m[12 + r];
}

void plush__bake_local_key(const double g[12], const double *parent, const double *offset, const float *prev,
                           float key[7])
{
    double r[9], d[3];
    if (!parent) {
        memcpy(r, g, sizeof r);
        memcpy(d, g + 9, sizeof d);
    } else {
        const double *p = parent;
        /* R_p^T R_b and R_p^T (t_b - t_p); column c of R is g[3c .. 3c+2] */
        for (int c = 0; c < 3; c++)
            for (int row = 0; row < 3; row++)
                r[3 * c + row] = p[3 * row] * g[3 * c] + p[3 * row + 1] * g[3 * c + 1] + p[3 * row + 2] * g[3 * c + 2];
        double dt[3] = {g[9] - p[9], g[10] - p[10], g[11] - p[11]};
        for (int row = 0; row < 3; row++)
            d[row] = p[3 * row] * dt[0] + p[3 * row + 1] * dt[1] + p[3 * row + 2] * dt[2];
    }
    double q[4];
    plush__mat3_to_quat(r, 3, q);
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    double dot = prev ? q[0] * prev[3] + q[1] * prev[4] + q[2] * prev[5] + q[3] * prev[6] : q[3];
    double sign = dot < 0 ? -1.0 : 1.0;
    for (int k = 0; k < 3; k++)
        key[k] = (float)(offset ? d[k] - offset[k] : d[k]);
    for (int k = 0; k < 4; k++)
        key[3 + k] = (float)(sign * q[k] / n);
}

double plush__bake_least_fitting(size_t (*keys)(void *ctx, double x), void *ctx, double x0, size_t room,
                                 int doublings, int halvings)
{
    double lo = x0, hi = x0;
    for (int i = 0; keys(ctx, hi) > room; i++) {
        if (i == doublings)
            return 0;
        lo = hi, hi *= 2;
    }
    for (int i = 0; hi > x0 && i < halvings; i++) {
        double mid = sqrt(lo * hi);
        if (keys(ctx, mid) <= room)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}
