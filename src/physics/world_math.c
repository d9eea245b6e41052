/* Rigid-transform and quaternion helpers for the world: column-major float[16] (cglm's mat4 layout,
 * element (row r, column c) at m[4c + r]). cglm does the work where its arithmetic is the one the outputs
 * were made with (they are compared byte for byte); the quaternion <-> matrix conversions, the slerp and
 * the PMX Euler matrix keep their own order of operations. cglm takes non-const arrays: const inputs are
 * copied into locals first. */
#include "physics/world_internal.h"

#include "core/geom.h"
#include "plush/sys/physics.h"

#include <cglm/cglm.h>

#include <math.h>
#include <string.h>

void plush__world_mat_identity(float out[16])
{
    glm_mat4_identity((vec4 *)out);
}

void plush__world_mat_mul(const float a[16], const float b[16], float out[16])
{
    mat4 la, lb;
    memcpy(la, a, sizeof la);
    memcpy(lb, b, sizeof lb);
    glm_mat4_mul(la, lb, (vec4 *)out);
}

void plush__world_mat_rigid_inverse(const float m[16], float out[16])
{
    mat4 l;
    memcpy(l, m, sizeof l);
    /* [R | t]^-1 = [R^T | -R^T t]: row r of R^T is column r of R */
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++)
            out[4 * c + r] = l[r][c];
        out[12 + r] = -glm_vec3_dot(l[r], l[3]);
    }
    out[3] = out[7] = out[11] = 0;
    out[15] = 1;
}

/* Ry(y) * Rx(x) * Rz(z) multiplied out (standard right-handed-form matrices acting on columns, which is
 * what D3DX's row-vector yaw-pitch-roll is, transposed). */
void plush__world_mat_pmx(const float position[3], const float rotation[3], float out[16])
{
    float sx = sinf(rotation[0]), cx = cosf(rotation[0]);
    float sy = sinf(rotation[1]), cy = cosf(rotation[1]);
    float sz = sinf(rotation[2]), cz = cosf(rotation[2]);
    /* column 0 */
    out[0] = cy * cz + sy * sx * sz;
    out[1] = cx * sz;
    out[2] = -sy * cz + cy * sx * sz;
    /* column 1 */
    out[4] = -cy * sz + sy * sx * cz;
    out[5] = cx * cz;
    out[6] = sy * sz + cy * sx * cz;
    /* column 2 */
    out[8] = sy * cx;
    out[9] = -sx;
    out[10] = cy * cx;
    out[3] = out[7] = out[11] = 0;
    out[12] = position[0];
    out[13] = position[1];
    out[14] = position[2];
    out[15] = 1;
}

void plush__world_mat_to_quat(const float m[16], float q[4])
{
    plush__mat3_to_quatf(m, 4, q);
}

void plush__world_mat_from_quat(const float q[4], const float t[3], float out[16])
{
    float x = q[0], y = q[1], z = q[2], w = q[3];
    out[0] = 1 - 2 * (y * y + z * z);
    out[1] = 2 * (x * y + z * w);
    out[2] = 2 * (x * z - y * w);
    out[4] = 2 * (x * y - z * w);
    out[5] = 1 - 2 * (x * x + z * z);
    out[6] = 2 * (y * z + x * w);
    out[8] = 2 * (x * z + y * w);
    out[9] = 2 * (y * z - x * w);
    out[10] = 1 - 2 * (x * x + y * y);
    out[3] = out[7] = out[11] = 0;
    out[12] = t[0];
    out[13] = t[1];
    out[14] = t[2];
    out[15] = 1;
}

void plush__world_quat_slerp(const float a[4], const float b[4], float t, float out[4])
{
    float d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
    float sign = 1;
    if (d < 0) {
        d = -d;
        sign = -1;
    }
    float wa, wb;
    if (d > 0.9995f) { /* nearly equal: normalised lerp avoids dividing by a vanishing sine */
        wa = 1 - t;
        wb = t;
    } else {
        float angle = acosf(d), s = sinf(angle);
        wa = sinf((1 - t) * angle) / s;
        wb = sinf(t * angle) / s;
    }
    float n = 0;
    for (int k = 0; k < 4; k++) {
        out[k] = wa * a[k] + sign * wb * b[k];
        n += out[k] * out[k];
    }
    n = sqrtf(n);
    for (int k = 0; k < 4; k++)
        out[k] /= n;
}

void plush__world_mat_interpolate(const float a[16], const float b[16], float t, float out[16])
{
    if (t >= 1 || memcmp(a, b, 16 * sizeof(float)) == 0) { /* exactly on the target; a body that does
                                                               not move gets no rounding noise */
        memcpy(out, b, 16 * sizeof(float));
        return;
    }
    versor qa, qb, q;
    vec3 p, ta, tb;
    plush__world_mat_to_quat(a, qa);
    plush__world_mat_to_quat(b, qb);
    plush__world_quat_slerp(qa, qb, t, q);
    memcpy(ta, a + 12, sizeof ta);
    memcpy(tb, b + 12, sizeof tb);
    glm_vec3_lerp(ta, tb, t, p);
    plush__world_mat_from_quat(q, p, out);
}

void plush__world_mat_point(const float m[16], const float p[3], float out[3])
{
    for (int r = 0; r < 3; r++)
        out[r] = m[r] * p[0] + m[4 + r] * p[1] + m[8 + r] * p[2] + m[12 + r];
}

void plush_world_rigid_rest_transform(const plush_pmx_rigid_body *rb, float out[16])
{
    plush__world_mat_pmx(rb->position, rb->rotation, out);
}
