/* Shared by frames.c and skin.c: triangle frames and per-triangle transforms in double precision.
 *
 * The skin keeps float matrices for the hot loop, but builds them here in double: S_i = F_i(t) * F_i(0)^-1
 * multiplies two frames whose float rounding would otherwise add up, and a rigid motion of the proxy
 * must reach the skin with a relative error well below 1e-5. */
#ifndef PLUSH_PROXY_SKIN_INTERNAL_H
#define PLUSH_PROXY_SKIN_INTERNAL_H

#include "plush/proxy.h"
#include "plush/sys/core.h"

/* A triangle's frame and what the stretch-aware transform needs of the same triangle. */
typedef struct proxy_frame {
    double axis[3][3];   /* X, Y, Z: orthonormal, right-handed (X = Y x Z) */
    double center[3];    /* centroid */
    double edge[2][3];   /* p1 - p0, p2 - p0 */
    double area2;        /* |(p1 - p0) x (p2 - p0)|: twice the area */
} proxy_frame;

/* Rest data of one triangle, built once by plush__proxy_rest_build. */
typedef struct proxy_rest {
    double axis[3][3];      /* rest frame axes: F(0)^-1 is their transpose */
    double center[3];
    double edge_inv[3][3];  /* [E1 E2 N]^-1 (rows), for the deformation gradient */
    double area2;
} proxy_rest;

/* PLUSH_E_ARGUMENT unless rings is in [0, 64] and reach in [0, 4] (what plush_proxy_patch_create takes). */
plush_status plush__proxy_patch_shape_check(plush_proxy_patch_shape shape, const char *what, plush_diag *diag);

/* False when the triangle is degenerate (zero area to float precision, or non-finite). */
bool plush__proxy_frame_build(const float p0[3], const float p1[3], const float p2[3], proxy_frame *frame);
bool plush__proxy_rest_build(const float p0[3], const float p1[3], const float p2[3], proxy_rest *rest);

/* The skin matrix as 16 floats, column-major, bottom row (0 0 0 1). Rigid: F(t) * F(0)^-1. Stretch:
 * x -> c(t) + A (x - c(0)) with A the deformation gradient [e1 e2 n'][E1 E2 N]^-1. */
void plush__proxy_skin_stretch(const proxy_rest *rest, const proxy_frame *now, float out[16]);
/* dq, when not NULL, gets the same rigid motion as a unit dual quaternion: real part (x y z w) with
 * w >= 0, then dual part (x y z w). */
void plush__proxy_skin_rigid(const proxy_rest *rest, const proxy_frame *now, float out[16], float dq[8]);

/* A rigid motion x -> R(q) x + t as the skin matrix and, when dq is not NULL, the dual quaternion (real
 * part with w >= 0). */
void plush__proxy_skin_from_motion(const double q[4], const double t[3], float out[16], float dq[8]);
/* plush_proxy_skin_apply on the kernels built for any CPU, whatever this one supports, so the tests can
 * check that the AVX2 kernels give the same results. */
void plush__proxy_skin_apply_portable(const plush_proxy_skin *skin, float (*positions)[3], float (*normals)[3]);

#endif
