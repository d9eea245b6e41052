/* Triangle frames (defined in include/plush/proxy.h) and the per-triangle skin transforms built from them.
 * Everything here runs once per triangle per frame, so it works in double and rounds to float once. */
#include "core/geom.h"
#include "core/common.h"
#include "proxy/skin_internal.h"
#include "plush/sys/proxy.h"

#include <math.h>

/* A triangle whose angle at p0 has a sine below this is treated as having zero area: its normal would
 * be mostly rounding noise, so a frame built from it would spin the skin at random. */
#define FRAME_MIN_SINE 1e-6



static void scale3(double v[3], double s)
{
    v[0] *= s;
    v[1] *= s;
    v[2] *= s;
}

bool plush__proxy_frame_build(const float p0[3], const float p1[3], const float p2[3], proxy_frame *f)
{
    if (!plush__finite3(p0) || !plush__finite3(p1) || !plush__finite3(p2))
        return false;
    double y[3];
    for (int k = 0; k < 3; k++) {
        f->edge[0][k] = (double)p1[k] - p0[k];
        f->edge[1][k] = (double)p2[k] - p0[k];
        f->center[k] = ((double)p0[k] + p1[k] + p2[k]) / 3.0;
        y[k] = p0[k] - f->center[k];
    }
    double n[3];
    plush__cross3d(f->edge[0], f->edge[1], n);
    double nn = plush__dot3d(n, n), yy = plush__dot3d(y, y);
    double limit = FRAME_MIN_SINE * FRAME_MIN_SINE * plush__dot3d(f->edge[0], f->edge[0]) * plush__dot3d(f->edge[1], f->edge[1]);
    /* p0 == c implies zero area for exact numbers; the second test keeps rounding from reaching 1/0. */
    if (!(nn > limit) || !(yy > 0))
        return false;
    f->area2 = sqrt(nn);
    scale3(n, 1.0 / f->area2);
    scale3(y, 1.0 / sqrt(yy));
    double x[3];
    plush__cross3d(y, n, x);
    /* y is in the plane only up to rounding, so Y x Z is unit only up to rounding too. */
    scale3(x, 1.0 / sqrt(plush__dot3d(x, x)));
    for (int k = 0; k < 3; k++) {
        f->axis[0][k] = x[k];
        f->axis[1][k] = y[k];
        f->axis[2][k] = n[k];
    }
    return true;
}

bool plush_proxy_triangle_frame(const float p0[3], const float p1[3], const float p2[3], float out[16])
{
    proxy_frame f;
    if (!plush__proxy_frame_build(p0, p1, p2, &f))
        return false;
    for (int c = 0; c < 3; c++) {
        for (int r = 0; r < 3; r++)
            out[4 * c + r] = (float)f.axis[c][r];
        out[4 * c + 3] = 0.0f;
        out[12 + c] = (float)f.center[c];
    }
    out[15] = 1.0f;
    return true;
}

bool plush__proxy_rest_build(const float p0[3], const float p1[3], const float p2[3], proxy_rest *rest)
{
    proxy_frame f;
    if (!plush__proxy_frame_build(p0, p1, p2, &f))
        return false;
    for (int k = 0; k < 3; k++) {
        for (int j = 0; j < 3; j++)
            rest->axis[k][j] = f.axis[k][j];
        rest->center[k] = f.center[k];
    }
    rest->area2 = f.area2;
    /* Rows of [E1 E2 N]^-1 are (E2 x N, N x E1, E1 x E2) / det, and det = N . (E1 x E2) = area2 > 0. */
    const double *n = f.axis[2];
    plush__cross3d(f.edge[1], n, rest->edge_inv[0]);
    plush__cross3d(n, f.edge[0], rest->edge_inv[1]);
    plush__cross3d(f.edge[0], f.edge[1], rest->edge_inv[2]);
    for (int k = 0; k < 3; k++)
        scale3(rest->edge_inv[k], 1.0 / f.area2);
    return true;
}

/* Row-major 3x3; a struct so it can be passed as const (C11 cannot convert double (*)[3] to const). */
typedef struct mat3 {
    double m[3][3];
} mat3;

/* out = [lin | center_now - lin * center_rest], column-major 4x4. */
static void store_affine(const mat3 *lin, const double center_rest[3], const double center_now[3],
                         float out[16])
{
    for (int r = 0; r < 3; r++) {
        double t = center_now[r];
        for (int c = 0; c < 3; c++) {
            out[4 * c + r] = (float)lin->m[r][c];
            t -= lin->m[r][c] * center_rest[c];
        }
        out[12 + r] = (float)t;
    }
    out[3] = out[7] = out[11] = 0.0f;
    out[15] = 1.0f;
}

/* q (x, y, z, w) of a rotation; q and -q are the same rotation, and one sign (w >= 0) makes matrices and
 * quaternions easy to compare. */
static void rotation_quaternion(const mat3 *rot, double q[4])
{
    double m[9]; /* the kernel reads columns */
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            m[3 * c + r] = rot->m[r][c];
    plush__mat3_to_quat(m, 3, q);
    if (q[3] < 0)
        for (int k = 0; k < 4; k++)
            q[k] = -q[k];
}

/* The unit dual quaternion of x -> R(q) x + t: real part q, dual part (t, 0) q / 2. */
static void store_dual(const double q[4], const double t[3], float dq[8])
{
    double tq[3];
    plush__cross3d(t, q, tq);
    for (int k = 0; k < 3; k++) {
        dq[k] = (float)q[k];
        dq[4 + k] = (float)(0.5 * (q[3] * t[k] + tq[k]));
    }
    dq[3] = (float)q[3];
    dq[7] = (float)(-0.5 * plush__dot3d(t, q));
}

void plush__proxy_skin_rigid(const proxy_rest *rest, const proxy_frame *now, float out[16], float dq[8])
{
    /* F(t) F(0)^-1 = [R_t R_0^T | c_t - R_t R_0^T c_0]; the axes are the columns of R. */
    mat3 s;
    double(*lin)[3] = s.m;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            lin[r][c] = now->axis[0][r] * rest->axis[0][c] + now->axis[1][r] * rest->axis[1][c] +
                        now->axis[2][r] * rest->axis[2][c];
    store_affine(&s, rest->center, now->center, out);
    if (!dq)
        return;
    double q[4], t[3];
    rotation_quaternion(&s, q);
    for (int r = 0; r < 3; r++)
        t[r] = now->center[r] - (lin[r][0] * rest->center[0] + lin[r][1] * rest->center[1] +
                                 lin[r][2] * rest->center[2]);
    store_dual(q, t, dq);
}

void plush__proxy_skin_stretch(const proxy_rest *rest, const proxy_frame *now, float out[16])
{
    /* n' keeps the current normal's direction and grows with the square root of the area ratio, so a
     * uniform scale s gives A = s I exactly. */
    double grow = sqrt(now->area2 / rest->area2), n[3];
    for (int k = 0; k < 3; k++)
        n[k] = now->axis[2][k] * grow;
    mat3 grad;
    double(*a)[3] = grad.m;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            a[r][c] = now->edge[0][r] * rest->edge_inv[0][c] + now->edge[1][r] * rest->edge_inv[1][c] +
                      n[r] * rest->edge_inv[2][c];
    store_affine(&grad, rest->center, now->center, out);
}

void plush__proxy_skin_from_motion(const double q[4], const double t[3], float out[16], float dq[8])
{
    double col[9];
    plush__quat_to_mat3(q, col, 3);
    mat3 r;
    for (int row = 0; row < 3; row++)
        for (int c = 0; c < 3; c++)
            r.m[row][c] = col[3 * c + row];
    double zero[3] = {0, 0, 0};
    store_affine(&r, zero, t, out);
    if (dq)
        store_dual(q, t, dq);
}
