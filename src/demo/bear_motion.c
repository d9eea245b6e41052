/* The shake motion on the hook bone, and the Influence Map override that keeps the eyes and nose rigid. */
#include "demo/internal.h"
#include "plush/sys/core.h"
#include "plush/sys/vmd.h"

#include <string.h>

/* Bezier control points 0..127 (x1, y1, x2, y2), MMD's encoding of a key's approach curve. */
typedef enum curve { LINEAR, SMOOTH, EASE_IN } curve;
static const uint8_t curves[3][4] = {{20, 20, 107, 107}, {64, 0, 64, 127}, {90, 0, 127, 127}};

typedef struct shake_key {
    uint32_t frame;
    float t[3];
    float q[4]; /* x y z w */
    curve c;
} shake_key;

/* sin 15° and cos 15°, as literals so no libm rounding enters the file. */
#define S15 0.258819045f
#define C15 0.965925826f

/* Hold still, swing right and left, come back, lift, drop fast and stop short (the squash), twist,
 * then hold still from frame 157 to 240 while the toy settles. Translations are the hook's offsets
 * from its rest position. */
static const shake_key keys[] = {
    {0, {0, 0, 0}, {0, 0, 0, 1}, LINEAR},
    {15, {0, 0, 0}, {0, 0, 0, 1}, LINEAR},
    {40, {6, 1, 0}, {0, 0, 0, 1}, SMOOTH},
    {65, {-6, 1, 0}, {0, 0, 0, 1}, SMOOTH},
    {85, {0, 0, 0}, {0, 0, 0, 1}, SMOOTH},
    {100, {0, 5, 0}, {0, 0, 0, 1}, SMOOTH},
    {108, {0, -1.5f, 0}, {0, 0, 0, 1}, EASE_IN},
    {112, {0, 0, 0}, {0, 0, 0, 1}, LINEAR},
    {127, {0, 0, 0}, {0, S15, 0, C15}, SMOOTH},
    {142, {0, 0, 0}, {0, -S15, 0, C15}, SMOOTH},
    {BEAR_MOTION_STILL_FROM, {0, 0, 0}, {0, 0, 0, 1}, SMOOTH},
    {BEAR_MOTION_FRAMES, {0, 0, 0}, {0, 0, 0, 1}, LINEAR},
};

static void interpolation(curve c, uint8_t out[64])
{
    uint8_t four[4][4];
    for (int axis = 0; axis < 4; axis++)
        memcpy(four[axis], curves[c], 4);
    plush_vmd_curves_write((const uint8_t(*)[4])four, out);
}

plush_status plush__demo_motion_build(plush_vmd_motion **out, plush_diag *diag)
{
    *out = NULL;
    plush_vmd_motion *m = plush_vmd_create();
    if (!m)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "motion", -1, "out of memory");
    size_t n = sizeof keys / sizeof keys[0];
    plush_vmd_bone_key *k = plush_arena_array(plush_vmd_arena(m), n, sizeof *k);
    if (!k) {
        plush_vmd_free(m);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "motion", -1, "out of memory");
    }
    static const char model[] = "くまのぬいぐるみ", hook[] = "フック";
    m->model_name = (plush_str){.s = model, .len = sizeof model - 1};
    for (size_t i = 0; i < n; i++) {
        k[i].name = (plush_str){.s = hook, .len = sizeof hook - 1};
        k[i].frame = keys[i].frame;
        memcpy(k[i].translation, keys[i].t, sizeof k[i].translation);
        memcpy(k[i].rotation, keys[i].q, sizeof k[i].rotation);
        interpolation(keys[i].c, k[i].interpolation);
    }
    m->bone_keys = k;
    m->bone_key_count = n;
    *out = m;
    return PLUSH_OK;
}

static float dot3(const float a[3], const float b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* Squared distance from p to triangle (a, b, c): the closest point by Voronoi regions. */
static float triangle_distance2(const float p[3], const float a[3], const float b[3], const float c[3])
{
    float ab[3], ac[3], ap[3], bp[3], cp[3], x[3];
    for (int i = 0; i < 3; i++)
        ab[i] = b[i] - a[i], ac[i] = c[i] - a[i], ap[i] = p[i] - a[i], bp[i] = p[i] - b[i], cp[i] = p[i] - c[i];
    float d1 = dot3(ab, ap), d2 = dot3(ac, ap), d3 = dot3(ab, bp), d4 = dot3(ac, bp);
    float d5 = dot3(ab, cp), d6 = dot3(ac, cp);
    if (d1 <= 0 && d2 <= 0)
        return dot3(ap, ap);
    if (d3 >= 0 && d4 <= d3)
        return dot3(bp, bp);
    if (d6 >= 0 && d5 <= d6)
        return dot3(cp, cp);
    float vc = d1 * d4 - d3 * d2, vb = d5 * d2 - d1 * d6, va = d3 * d6 - d5 * d4;
    float s, t;
    if (vc <= 0 && d1 >= 0 && d3 <= 0)
        s = d1 / (d1 - d3), t = 0;
    else if (vb <= 0 && d2 >= 0 && d6 <= 0)
        s = 0, t = d2 / (d2 - d6);
    else if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0) {
        float w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        s = 1 - w, t = w;
    } else {
        float den = 1 / (va + vb + vc);
        s = vb * den, t = vc * den;
    }
    for (int i = 0; i < 3; i++)
        x[i] = p[i] - (a[i] + s * ab[i] + t * ac[i]);
    return dot3(x, x);
}

/* The cage triangle nearest to p (the lowest index among equals). */
static uint32_t nearest_triangle(const bear_cage *cage, const float p[3])
{
    uint32_t best = 0;
    float best_d = -1;
    for (size_t t = 0; t < cage->triangle_count; t++) {
        const uint32_t *v = cage->triangles[t];
        float d = triangle_distance2(p, cage->nodes[v[0]], cage->nodes[v[1]], cage->nodes[v[2]]);
        if (best_d < 0 || d < best_d)
            best_d = d, best = (uint32_t)t;
    }
    return best;
}

plush_status plush__demo_im2_build(const plush_pmx_model *model, const bear_cage *cage, plush_im2_map **out,
                            plush_diag *diag)
{
    static const int rigid[] = {BEAR_MAT_EYE_L, BEAR_MAT_EYE_R, BEAR_MAT_NOSE};
    enum { RIGID = sizeof rigid / sizeof rigid[0] };
    *out = NULL;
    plush_im2_map *map = plush_im2_create();
    plush_im2_part *parts = map ? plush_arena_array(&map->arena, RIGID, sizeof *parts) : NULL;
    plush_im2_entry *entries = map ? plush_arena_array(&map->arena, RIGID, sizeof *entries) : NULL;
    if (!parts || !entries) {
        plush_im2_free(map);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "im2", -1, "out of memory");
    }
    const bear_piece *pc = plush__demo_pieces();
    for (int r = 0; r < RIGID; r++) {
        int piece = 0;
        while (pc[piece].material != rigid[r])
            piece++;
        /* Every vertex of the part (-1) on the pseudo-bone of the triangle nearest the part's centre, alone:
         * one rigid frame for the whole eye, so it cannot smear. Pseudo-bones follow the model's bones. */
        uint32_t t = nearest_triangle(cage, pc[piece].center);
        entries[r] = (plush_im2_entry){.vertex = -1, .child = (int32_t)(model->bone_count + t), .parent = -1,
                                       .method = PLUSH_IM2_NOSKIN, .line = 0, .offset = -1};
        parts[r] = (plush_im2_part){.name = model->materials[rigid[r]].name, .line = 0, .offset = -1,
                                    .entry_count = 1, .entries = &entries[r]};
    }
    map->parts = parts;
    map->part_count = RIGID;
    *out = map;
    return PLUSH_OK;
}
