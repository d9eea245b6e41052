/* Inside the embedded demo (src/demo; the public side is plush/demo.h): a plush teddy bear hanging from a
 * hook, its shake motion and its rigid-eyes Influence Map override, generated in code.
 *
 *   bear_cage cage;
 *   plush__demo_cage_build(&arena, &cage, &diag);               // the closed proxy surface around the shape
 *   plush_pmx_model *model = NULL;
 *   plush__demo_model_build(&cage, &model, &diag);              // detailed mesh + bones + cage + soft body
 *   plush__demo_motion_build(&motion, &diag);  plush__demo_im2_build(model, &cage, &map, &diag);
 *
 * Everything is deterministic: no clock, no random numbers, and the cage uses nothing from libm but
 * sqrtf (correctly rounded everywhere), so the proxy surface is the same on every machine. The detailed
 * mesh uses sinf/cosf for its parametrisation only.
 *
 * Units and axes are PMX's: Y up, the bear faces -Z, its left (左) is +X, 1 unit ≈ 8 cm; the bear is
 * about 11 units (90 cm) from feet to ears.
 */
#ifndef PLUSH_DEMO_INTERNAL_H
#define PLUSH_DEMO_INTERNAL_H

#include "plush/demo.h"
#include "plush/im2.h"
#include "plush/pmx.h"
#include "plush/vmd.h"
#include "plush/sys/core.h"

/* Bones, in file order (parents first). */
enum {
    BEAR_BONE_MASTER,   /* 全ての親 */
    BEAR_BONE_HOOK,     /* フック: holds the toy by the top of its head; the motion moves it */
    BEAR_BONE_CENTER,   /* センター */
    BEAR_BONE_LOWER,    /* 下半身 */
    BEAR_BONE_UPPER,    /* 上半身 */
    BEAR_BONE_HEAD,     /* 頭 */
    BEAR_BONE_EAR_L,
    BEAR_BONE_EAR_R,
    BEAR_BONE_ARM_L,
    BEAR_BONE_ARM_R,
    BEAR_BONE_LEG_L,
    BEAR_BONE_LEG_R,
    BEAR_BONE_COUNT
};

/* Materials, in file order; the cage comes last. */
enum {
    BEAR_MAT_BODY,
    BEAR_MAT_HEAD,
    BEAR_MAT_MUZZLE,
    BEAR_MAT_EARS,
    BEAR_MAT_ARMS,
    BEAR_MAT_LEGS,
    BEAR_MAT_EYE_L,
    BEAR_MAT_EYE_R,
    BEAR_MAT_NOSE,
    BEAR_MAT_CAGE,
    BEAR_MAT_COUNT
};

/* One ellipsoid of the shape: the detailed mesh tessellates it; the cage encloses the smooth union of all. */
typedef struct bear_piece {
    int material;
    float center[3];
    float radii[3];
    float rot[3][3];        /* local -> model, rows; built from exact Pythagorean cosines and sines */
    int rings, segments;    /* tessellation of the detailed mesh */
    /* Skinning: bone_a where local y <= blend_lo, bone_b where local y >= blend_hi (local y in units of
     * radii[1], -1 .. 1), BDEF2 between; bone_a == bone_b means BDEF1 throughout. */
    int bone_a, bone_b;
    float blend_lo, blend_hi;
} bear_piece;

enum { BEAR_PIECE_COUNT = 15 };

/* The pieces (static table). */
const bear_piece *plush__demo_pieces(void);

/* The point the hook holds (top of the head) and the hook bone's rest position. */
void plush__demo_hold_point(float out[3]);
void plush__demo_hook_position(float out[3]);

/* Signed distance-like field of the bear inflated by offset: negative inside. Pure arithmetic + sqrtf. */
float plush__demo_field(const float p[3], float offset);

/* The closed proxy cage (arena memory). */
typedef struct bear_cage {
    size_t node_count;
    float (*nodes)[3];
    float (*normals)[3];     /* area-weighted, unit */
    size_t triangle_count;
    uint32_t (*triangles)[3];/* outward: (p1 - p0) x (p2 - p0) points out of the bear */
    float cell;              /* grid spacing it was built with */
    float offset;            /* how far outside the detailed surface its level set lies */
} bear_cage;

enum { BEAR_CAGE_MAX_TRIANGLES = 1000 };

/* Builds the cage: a surface-nets polygonisation of plush__demo_field at the offset, on the finest grid that
 * gives at most BEAR_CAGE_MAX_TRIANGLES triangles, relaxed along the surface. Fails (PLUSH_E_RANGE) when
 * no grid gives a closed 2-manifold within the budget. */
plush_status plush__demo_cage_build(plush_arena *arena, bear_cage *out, plush_diag *diag);

/* Soft body parameters the generator writes (also what the tests expect). */
enum { BEAR_SOFT_BLINK_DISTANCE = 2, BEAR_SOFT_P_ITERATIONS = 16, BEAR_SOFT_C_ITERATIONS = 4 };
#define BEAR_SOFT_TOTAL_MASS 2.0f
#define BEAR_SOFT_PRESSURE 1200.0f
#define BEAR_SOFT_LST 0.5f
#define BEAR_SOFT_MT 0.2f      /* pose matching: measured on the quality figures */
#define BEAR_PIN_RADIUS 1.2f   /* cage nodes this close to the hold point are pinned */

/* The whole model (PMX 2.1, UTF-16LE). Free with plush_pmx_free. */
plush_status plush__demo_model_build(const bear_cage *cage, plush_pmx_model **out, plush_diag *diag);

/* The shake: 240 frames at 30 fps on the hook bone. Free with plush_vmd_free. */
enum { BEAR_MOTION_FRAMES = 240, BEAR_MOTION_STILL_FROM = 157 };
plush_status plush__demo_motion_build(plush_vmd_motion **out, plush_diag *diag);

/* Eyes and nose rigid: each of those materials follows its nearest cage triangle alone (CALC_NOSKIN0). */
plush_status plush__demo_im2_build(const plush_pmx_model *model, const bear_cage *cage, plush_im2_map **out,
                            plush_diag *diag);

#endif
