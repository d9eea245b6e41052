/* The bear's shape: fifteen ellipsoids, and the smooth union of them as a field for the cage. */
#include "demo/internal.h"

#include <math.h>

/* Rotations about Z by an angle with cosine c and sine s. Only Pythagorean pairs (0.96/0.28,
 * 0.8/0.6) are used so the matrices are exact and the same on every machine. */
#define ROT_I {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}
#define ROT_Z(c, s) {{(c), -(s), 0}, {(s), (c), 0}, {0, 0, 1}}

/* Left is +X (the bear faces -Z). Ears and arms lean outward: local +Y of the left ear points to +X. */
static const bear_piece pieces[BEAR_PIECE_COUNT] = {
    {BEAR_MAT_BODY, {0, 4.2f, 0.1f}, {2.3f, 2.9f, 2.0f}, ROT_I, 104, 150, BEAR_BONE_LOWER, BEAR_BONE_UPPER, -0.3f, 0.3f},
    {BEAR_MAT_BODY, {0, 2.7f, 2.0f}, {0.5f, 0.5f, 0.45f}, ROT_I, 24, 32, BEAR_BONE_LOWER, BEAR_BONE_LOWER, 0, 0}, /* tail */
    {BEAR_MAT_HEAD, {0, 8.3f, 0}, {2.2f, 2.0f, 1.95f}, ROT_I, 92, 128, BEAR_BONE_UPPER, BEAR_BONE_HEAD, -0.95f, -0.6f},
    {BEAR_MAT_MUZZLE, {0, 7.75f, -1.5f}, {1.0f, 0.75f, 0.72f}, ROT_I, 40, 64, BEAR_BONE_HEAD, BEAR_BONE_HEAD, 0, 0},
    {BEAR_MAT_MUZZLE, {1.55f, 9.9f, -0.12f}, {0.5f, 0.48f, 0.2f}, ROT_Z(0.96f, -0.28f), 24, 32, BEAR_BONE_HEAD,
     BEAR_BONE_EAR_L, -0.9f, -0.4f}, /* inner ears */
    {BEAR_MAT_MUZZLE, {-1.55f, 9.9f, -0.12f}, {0.5f, 0.48f, 0.2f}, ROT_Z(0.96f, 0.28f), 24, 32, BEAR_BONE_HEAD,
     BEAR_BONE_EAR_R, -0.9f, -0.4f},
    {BEAR_MAT_EARS, {1.55f, 9.95f, 0.1f}, {0.75f, 0.7f, 0.32f}, ROT_Z(0.96f, -0.28f), 40, 60, BEAR_BONE_HEAD,
     BEAR_BONE_EAR_L, -0.9f, -0.4f},
    {BEAR_MAT_EARS, {-1.55f, 9.95f, 0.1f}, {0.75f, 0.7f, 0.32f}, ROT_Z(0.96f, 0.28f), 40, 60, BEAR_BONE_HEAD,
     BEAR_BONE_EAR_R, -0.9f, -0.4f},
    {BEAR_MAT_ARMS, {2.5f, 5.0f, -0.45f}, {0.78f, 1.8f, 0.78f}, ROT_Z(0.8f, 0.6f), 64, 80, BEAR_BONE_ARM_L,
     BEAR_BONE_UPPER, 0.5f, 0.95f},
    {BEAR_MAT_ARMS, {-2.5f, 5.0f, -0.45f}, {0.78f, 1.8f, 0.78f}, ROT_Z(0.8f, -0.6f), 64, 80, BEAR_BONE_ARM_R,
     BEAR_BONE_UPPER, 0.5f, 0.95f},
    {BEAR_MAT_LEGS, {1.15f, 1.3f, -0.3f}, {0.98f, 1.35f, 1.05f}, ROT_I, 64, 80, BEAR_BONE_LEG_L, BEAR_BONE_LOWER,
     0.4f, 0.95f},
    {BEAR_MAT_LEGS, {-1.15f, 1.3f, -0.3f}, {0.98f, 1.35f, 1.05f}, ROT_I, 64, 80, BEAR_BONE_LEG_R, BEAR_BONE_LOWER,
     0.4f, 0.95f},
    {BEAR_MAT_EYE_L, {0.72f, 8.72f, -1.74f}, {0.24f, 0.27f, 0.2f}, ROT_I, 24, 32, BEAR_BONE_HEAD, BEAR_BONE_HEAD, 0, 0},
    {BEAR_MAT_EYE_R, {-0.72f, 8.72f, -1.74f}, {0.24f, 0.27f, 0.2f}, ROT_I, 24, 32, BEAR_BONE_HEAD, BEAR_BONE_HEAD, 0, 0},
    {BEAR_MAT_NOSE, {0, 8.05f, -2.17f}, {0.4f, 0.27f, 0.24f}, ROT_I, 28, 40, BEAR_BONE_HEAD, BEAR_BONE_HEAD, 0, 0},
};

const bear_piece *plush__demo_pieces(void)
{
    return pieces;
}

void plush__demo_hold_point(float out[3])
{
    /* The top of the head (piece 2). */
    out[0] = pieces[2].center[0];
    out[1] = pieces[2].center[1] + pieces[2].radii[1];
    out[2] = pieces[2].center[2];
}

void plush__demo_hook_position(float out[3])
{
    plush__demo_hold_point(out);
    out[1] += 0.6f; /* just above the cage, which lies outside the fur */
}

/* A bound on the distance to an ellipsoid (exact on spheres, never much off on these mild ones):
 * d = k0 (k0 - 1) / k1 with k0 = |q / r|, k1 = |q / r^2|. */
static float ellipsoid_distance(const bear_piece *e, const float p[3])
{
    float d[3] = {p[0] - e->center[0], p[1] - e->center[1], p[2] - e->center[2]};
    float k0 = 0, k1 = 0;
    for (int a = 0; a < 3; a++) {
        /* q = R^T d: the columns of the row-major local->model matrix. */
        float q = e->rot[0][a] * d[0] + e->rot[1][a] * d[1] + e->rot[2][a] * d[2];
        float r = e->radii[a];
        k0 += (q / r) * (q / r);
        k1 += (q / (r * r)) * (q / (r * r));
    }
    k0 = sqrtf(k0);
    k1 = sqrtf(k1);
    if (k1 < 1e-12f) {
        float m = e->radii[0];
        m = e->radii[1] < m ? e->radii[1] : m;
        return -(e->radii[2] < m ? e->radii[2] : m);
    }
    return k0 * (k0 - 1.0f) / k1;
}

/* Polynomial smooth minimum: fills the creases between pieces (the cage should not dive into them). */
static float smooth_min(float a, float b, float k)
{
    float diff = a > b ? a - b : b - a;
    float h = k - diff;
    if (h <= 0)
        return a < b ? a : b;
    h /= k;
    return (a < b ? a : b) - h * h * k * 0.25f;
}

/* Mirror pairs (left then right) sit next to each other in the table. */
static bool mirror_pair(int i)
{
    return i + 1 < BEAR_PIECE_COUNT && pieces[i].center[0] != 0 && pieces[i + 1].center[0] == -pieces[i].center[0];
}

float plush__demo_field(const float p[3], float offset)
{
    /* A mirror pair is joined first: smooth_min(a, b) == smooth_min(b, a) to the bit, so the field at
     * (-x, y, z) is exactly the field at (x, y, z), while a chain through the left and then the right piece
     * would not be (smooth_min is not associative). */
    const float k = 0.6f;
    float f = ellipsoid_distance(&pieces[0], p);
    for (int i = 1; i < BEAR_PIECE_COUNT; i++) {
        float e = ellipsoid_distance(&pieces[i], p);
        if (mirror_pair(i)) {
            e = smooth_min(e, ellipsoid_distance(&pieces[i + 1], p), k);
            i++;
        }
        f = smooth_min(f, e, k);
    }
    return f - offset;
}
