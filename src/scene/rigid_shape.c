/* A rigid body's shape as plain geometry: where a point lies against it (soft_measure.c, attach.c). */
#include "scene/internal.h"

#include <math.h>

/* The signed distance from p (in the body's frame) to the shape's surface: negative inside. */
double plush__rigid_shape_distance(const plush_pmx_rigid_body *rb, const double p[3])
{
    switch (rb->shape) {
    case PLUSH_PMX_RIGID_SPHERE:
        return sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]) - rb->size[0];
    case PLUSH_PMX_RIGID_BOX: {
        double out = 0, in = -INFINITY;
        for (int k = 0; k < 3; k++) {
            double d = fabs(p[k]) - rb->size[k];
            out += d > 0 ? d * d : 0;
            in = d > in ? d : in;
        }
        return out > 0 ? sqrt(out) : in;
    }
    case PLUSH_PMX_RIGID_CAPSULE: {
        /* radius size[0], the cylinder's height size[1] along the local Y axis (as MMD and Bullet) */
        double h = rb->size[1] * 0.5, y = p[1] < -h ? -h : p[1] > h ? h : p[1];
        return sqrt(p[0] * p[0] + (p[1] - y) * (p[1] - y) + p[2] * p[2]) - rb->size[0];
    }
    default:
        return INFINITY;
    }
}

/* p in the frame of a column-major rigid transform m. */
void plush__rigid_local(const float m[16], const float p[3], double out[3])
{
    double d[3] = {(double)p[0] - m[12], (double)p[1] - m[13], (double)p[2] - m[14]};
    for (int i = 0; i < 3; i++)
        out[i] = m[4 * i] * d[0] + m[4 * i + 1] * d[1] + m[4 * i + 2] * d[2];
}

bool plush__rigid_inside(const plush_pmx_rigid_body *rb, const float pose[16], const float p[3])
{
    /* first against the shape's bounding sphere: most points asked are far from most bodies */
    double r = rb->shape == PLUSH_PMX_RIGID_SPHERE    ? rb->size[0]
               : rb->shape == PLUSH_PMX_RIGID_CAPSULE ? (double)rb->size[0] + 0.5 * fabs((double)rb->size[1])
                                                      : sqrt((double)rb->size[0] * rb->size[0] +
                                                             (double)rb->size[1] * rb->size[1] +
                                                             (double)rb->size[2] * rb->size[2]);
    double d2 = 0;
    for (int k = 0; k < 3; k++)
        d2 += ((double)p[k] - pose[12 + k]) * ((double)p[k] - pose[12 + k]);
    if (d2 > r * r * (1 + 1e-6) + 1e-12)
        return false;
    double local[3];
    plush__rigid_local(pose, p, local);
    return plush__rigid_shape_distance(rb, local) <= 0;
}
