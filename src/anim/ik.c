/* IK: cyclic coordinate descent (CCD) as the MMD-compatible runtimes solve PMX IK chains.
 *
 * Facts this file relies on (the PMX notes on IK; saba's, babylon-mmd's and nanoem's solvers, written to
 * reproduce MMD; docs/ik.md):
 * - The IK bone's position is the goal, its target bone the effector; links are listed from the effector
 *   towards the root and are visited in that order, loop-count times. Each link's IK rotation starts the
 *   solve at identity and is applied before its own motion: local = ik * (morph * motion * append).
 * - A step turns link i (0 = next to the effector) about the axis that carries the effector direction onto
 *   the goal direction (seen from the link), by min(unit * (i + 1), the angle between them).
 * - A link whose limits leave one axis free (knees: X) turns about that axis of its parent, +/- by the sign
 *   of the world rotation axis against it, by the full angle -- during the first half of the loops
 *   (iteration < loops / 2); afterwards it takes the free step and its limits act through the Euler
 *   angles below.
 * - A limited link's local rotation is split into Euler angles in an order chosen from its limits (YXZ
 *   when the X limits lie inside +/-90 deg, else ZYX when the Y limits do, else XZY), the middle angle kept
 *   within +/-88 deg; an angle past a limit becomes 2 * limit - angle when that lies inside the range during
 *   the first half of the loops (a knee starting straight bends forward), else it is clamped.
 * - A link whose limits are all zero is not turned at all (its motion rotation stays).
 * - The solve stops when the effector is within 1e-4 of the goal (checked before and after each
 *   iteration); otherwise every loop runs. Nothing is restored.
 * - IK off (property keys) leaves every IK rotation the identity. */
#include "anim/anim_internal.h"
#include "plush/sys/anim.h"

/* Effector within this distance of the goal counts as reached (squared; PMX units, 1 unit ~ 8 cm). */
#define IK_REACHED2 1e-8f
/* The middle Euler angle is kept off the gimbal lock. */
#define IK_EULER_MIDDLE_MAX (88.0f * (float)M_PI / 180.0f)

typedef enum ik_order { IK_ORDER_YXZ, IK_ORDER_ZYX, IK_ORDER_XZY } ik_order;

/* What a link's limits make of it. */
typedef struct ik_link_rule {
    bool limited;           /* has limits (not all zero) */
    bool fixed;             /* has limits, all zero: skipped */
    int axis;               /* the one free axis (0 X, 1 Y, 2 Z), or -1 */
    ik_order order;
    float lo[3], hi[3];     /* ordered limits */
} ik_link_rule;

static void link_rule(const plush_pmx_ik_link *link, ik_link_rule *r)
{
    memset(r, 0, sizeof *r);
    r->axis = -1;
    if (!link->has_limits)
        return;
    int free_axes = 0, axis = -1;
    for (int k = 0; k < 3; k++) {
        r->lo[k] = link->lower[k] < link->upper[k] ? link->lower[k] : link->upper[k];
        r->hi[k] = link->lower[k] < link->upper[k] ? link->upper[k] : link->lower[k];
        if (r->lo[k] != 0.0f || r->hi[k] != 0.0f)
            free_axes++, axis = k;
    }
    r->fixed = free_axes == 0;
    r->limited = !r->fixed;
    r->axis = free_axes == 1 ? axis : -1;
    const float half_pi = 0.5f * (float)M_PI;
    r->order = -half_pi < r->lo[0] && r->hi[0] < half_pi   ? IK_ORDER_YXZ
               : -half_pi < r->lo[1] && r->hi[1] < half_pi ? IK_ORDER_ZYX
                                                           : IK_ORDER_XZY;
}

/* An angle past a limit: mirrored back inside the range when mirror is set and that lands inside,
 * else clamped. */
static float limit_angle(float angle, float lo, float hi, bool mirror)
{
    if (angle < lo) {
        float m = 2.0f * lo - angle;
        return mirror && m <= hi ? m : lo;
    }
    if (angle > hi) {
        float m = 2.0f * hi - angle;
        return mirror && m >= lo ? m : hi;
    }
    return angle;
}

static float clamp_middle(float a)
{
    return a > IK_EULER_MIDDLE_MAX ? IK_EULER_MIDDLE_MAX : a < -IK_EULER_MIDDLE_MAX ? -IK_EULER_MIDDLE_MAX : a;
}

static float clamp_unit(float v)
{
    return v < -1.0f ? -1.0f : v > 1.0f ? 1.0f : v;
}

/* q limited through its Euler angles in the rule's order. R[row][col] of the column-vector rotation is
 * m[3 * col + row]; the angles come out as x, y, z about the parent's axes. */
static void limit_rotation(const ik_link_rule *r, bool mirror, float q[4])
{
    static const float ax[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    float m[9], e[3];
#define R(row, col) m[3 * (col) + (row)]
    anim_q_mat3(q, m);
    switch (r->order) {
    case IK_ORDER_YXZ: /* R = Ry Rx Rz */
        e[0] = clamp_middle(asinf(clamp_unit(-R(1, 2))));
        e[1] = atan2f(R(0, 2), R(2, 2));
        e[2] = atan2f(R(1, 0), R(1, 1));
        break;
    case IK_ORDER_ZYX: /* R = Rz Ry Rx */
        e[1] = clamp_middle(asinf(clamp_unit(-R(2, 0))));
        e[0] = atan2f(R(2, 1), R(2, 2));
        e[2] = atan2f(R(1, 0), R(0, 0));
        break;
    default: /* XZY: R = Rx Rz Ry */
        e[2] = clamp_middle(asinf(clamp_unit(-R(0, 1))));
        e[0] = atan2f(R(2, 1), R(1, 1));
        e[1] = atan2f(R(0, 2), R(0, 0));
        break;
    }
#undef R
    for (int k = 0; k < 3; k++)
        e[k] = limit_angle(e[k], r->lo[k], r->hi[k], mirror);
    static const int seq[3][3] = {{1, 0, 2}, {2, 1, 0}, {0, 2, 1}}; /* YXZ, ZYX, XZY */
    float part[4], t[4];
    anim_q_identity(q);
    for (int i = 0; i < 3; i++) {
        int k = seq[r->order][i];
        anim_q_axis_angle(ax[k], e[k], part);
        anim_q_mul(q, part, t);
        memcpy(q, t, sizeof t);
    }
}

/* One solve: the IK bone, its stage and the path whose globals a step must refresh. */
typedef struct ik_solve {
    plush_anim *a;
    uint32_t ik, effector;
    int stage;
    const uint32_t *path;   /* NULL: refresh whole subtrees */
    uint32_t path_count;
} ik_solve;

/* After link b's local changed: the globals the solve reads. Bones off the effector's path wait for
 * the end of the solve (one subtree update per link instead of one per step). */
static void refresh(const ik_solve *s, uint32_t b)
{
    if (s->path)
        plush__anim_update_path(s->a, s->path, s->a->path_pos[b], s->path_count, s->stage);
    else
        plush__anim_update_subtree(s->a, b, s->stage);
}

/* base = morph * motion * append: the local rotation without IK. */
static void base_rotation(const plush_anim *a, uint32_t b, float out[4])
{
    float q[4];
    anim_q_mul(a->morph_q[b], a->motion_q[b], q);
    anim_q_mul(q, a->append_q[b], out);
}

/* The parent's rotation (columns: its axes in world), identity for a root. */
static void parent_axes(const plush_anim *a, uint32_t b, float p[3][3])
{
    int32_t parent = a->parent[b];
    for (int c = 0; c < 3; c++)
        for (int k = 0; k < 3; k++)
            p[c][k] = parent >= 0 ? a->global[parent][4 * c + k] : (float)(c == k);
}

/* The step of link b as a rotation in its parent's frame: about the world axis w (from the effector's
 * direction e to the goal's direction t, both unit) seen from the parent, or in the first half of the
 * loops about the link's one free axis; by the angle between e and t, capped at unit * (chain_index + 1). */
static void link_step(const plush_anim *a, uint32_t b, const ik_link_rule *r, const vec3 w, float cos_angle,
                      float unit, uint32_t chain_index, bool use_axis, float step[4])
{
    float p[3][3];
    parent_axes(a, b, p);
    vec3 axis = {0, 0, 0}, wl;
    memcpy(wl, w, sizeof wl);
    if (r->limited && use_axis && r->axis >= 0) {
        vec3 pa;
        memcpy(pa, p[r->axis], sizeof pa);
        axis[r->axis] = glm_vec3_dot(wl, pa) >= 0.0f ? 1.0f : -1.0f;
    } else {
        for (int c = 0; c < 3; c++) { /* P^T w: the axis in the parent's frame */
            vec3 pc;
            memcpy(pc, p[c], sizeof pc);
            axis[c] = glm_vec3_dot(pc, wl);
        }
        glm_vec3_normalize(axis);
    }
    /* acos(e . t) in the references (double precision there); atan2 of sine and cosine keeps the small
     * angles acos loses in float */
    float angle = atan2f(glm_vec3_norm(wl), cos_angle);
    if (unit > 0.0f && angle > unit * (float)(chain_index + 1))
        angle = unit * (float)(chain_index + 1);
    anim_q_axis_angle(axis, angle, step);
}

/* One CCD step on link b, the chain_index-th from the effector. */
static void step_link(const ik_solve *s, uint32_t b, const ik_link_rule *r, uint32_t chain_index, float unit,
                      bool use_axis)
{
    plush_anim *a = s->a;
    vec3 link, e, t, w;
    memcpy(link, &a->global[b][12], sizeof link);
    memcpy(e, &a->global[s->effector][12], sizeof e);
    memcpy(t, &a->global[s->ik][12], sizeof t);
    glm_vec3_sub(e, link, e);
    glm_vec3_sub(t, link, t);
    float ne = glm_vec3_norm(e), nt = glm_vec3_norm(t);
    if (ne < 1e-8f || nt < 1e-8f)
        return; /* the effector or the goal sits on the link's pivot: no direction to turn */
    glm_vec3_divs(e, ne, e);
    glm_vec3_divs(t, nt, t);
    glm_vec3_cross(e, t, w);
    float step[4] = {0, 0, 0, 1}, ik[4];
    /* Already pointing at the goal (or exactly away from it): no turn. The references stop at
     * sin^2 < 1e-8 (1e-4 rad), which leaves a foot up to ~1e-3 units off its target; 1e-12 is still far
     * above float noise. A limited link still gets its limits then: a knee that starts straight (outside
     * its range) under a goal right on the leg's line would otherwise never bend, where a goal a hair off
     * the line bends it (the references return before their limits; plush differs in this case only). */
    if (glm_vec3_norm2(w) >= 1e-12f)
        link_step(a, b, r, w, glm_vec3_dot(e, t), unit, chain_index, use_axis, step);
    else if (!r->limited)
        return;
    anim_q_mul(step, a->ik_q[b], ik);
    if (r->limited) {
        float base[4], local[4], inv[4];
        base_rotation(a, b, base);
        anim_q_mul(ik, base, local);
        anim_q_normalize(local);
        limit_rotation(r, use_axis, local);
        anim_q_conj(base, inv);
        anim_q_mul(local, inv, ik);
    }
    anim_q_normalize(ik);
    memcpy(a->ik_q[b], ik, sizeof ik);
    plush__anim_update_local(a, b);
    refresh(s, b);
}

static float goal_distance2(const ik_solve *s)
{
    vec3 e, t;
    memcpy(e, &s->a->global[s->effector][12], sizeof e);
    memcpy(t, &s->a->global[s->ik][12], sizeof t);
    return glm_vec3_distance2(e, t);
}

static void solve_loops(const ik_solve *s, const plush_pmx_bone *bone)
{
    uint32_t n = bone->ik_link_count;
    const plush_pmx_ik_link *links = bone->ik_links;
    if (goal_distance2(s) < IK_REACHED2)
        return;
    int loops = bone->ik_loop_count < 0                         ? 0
                : bone->ik_loop_count > PLUSH_ANIM_IK_MAX_LOOPS ? PLUSH_ANIM_IK_MAX_LOOPS
                                                                : bone->ik_loop_count;
    /* a unit angle of 0 or less (or not finite) would freeze the chain: such a file gets no cap */
    float unit = isfinite(bone->ik_limit_angle) ? bone->ik_limit_angle : 0.0f;
    int half = loops / 2;
    for (int it = 0; it < loops; it++) {
        for (uint32_t k = 0; k < n; k++) {
            uint32_t b = (uint32_t)links[k].bone;
            if (b == s->effector || b == s->ik)
                continue;
            ik_link_rule r;
            link_rule(&links[k], &r);
            if (!r.fixed)
                step_link(s, b, &r, k, unit, it < half);
        }
        if (goal_distance2(s) < IK_REACHED2)
            return;
    }
}

void plush__anim_ik_solve(plush_anim *a, uint32_t ik, int stage)
{
    const plush_pmx_bone *bone = &a->model->bones[ik];
    ik_solve s = {.a = a, .ik = ik, .effector = (uint32_t)bone->ik_target, .stage = stage};
    if (a->ik_path_count[ik]) {
        s.path = a->ik_paths + a->ik_path_first[ik];
        s.path_count = a->ik_path_count[ik];
        for (uint32_t k = 0; k < s.path_count; k++)
            a->path_pos[s.path[k]] = k;
    }
    uint32_t n = bone->ik_link_count;
    const plush_pmx_ik_link *links = bone->ik_links;
    /* Start from the links' motion pose: clear last solve's rotations, root-most link first so each
     * refresh sees its parent final. */
    for (uint32_t k = n; k-- > 0;) {
        uint32_t b = (uint32_t)links[k].bone;
        anim_q_identity(a->ik_q[b]);
        plush__anim_update_local(a, b);
        refresh(&s, b);
    }
    solve_loops(&s, bone);
    if (s.path) {
        for (uint32_t k = 0; k < s.path_count; k++)
            a->path_pos[s.path[k]] = UINT32_MAX;
        /* Now everything below the links follows once. */
        for (uint32_t k = n; k-- > 0;)
            plush__anim_update_subtree(a, (uint32_t)links[k].bone, stage);
    }
}
