/* IK: cyclic coordinate descent (CCD) as MMD solves PMX IK chains.
 *
 * Facts this file relies on (PMX notes on IK; saba's and babylon-mmd's solvers, which reproduce MMD):
 * - The IK bone's position is the goal, its target bone the effector; links are listed from the
 *   effector towards the root and are visited in that order, loop-count times.
 * - Each step turns one link so that the effector points at the goal, by at most the unit angle
 *   (ik_limit_angle, radians per step).
 * - Angle limits (radians, about the parent's axes) constrain the link's whole local rotation. A link
 *   whose limits leave only one axis free rotates about that axis alone (knees: X only, lower -180 deg,
 *   upper about -0.5 deg). On the first iteration such a link takes the mirrored angle when the
 *   greedy one falls outside its limits, so a knee that starts straight bends forward, not backward.
 *   Other limited links clamp their Euler angles (here R = Rx * Ry * Rz).
 * - The solve keeps the best pose seen: when an iteration does not bring the effector closer it
 *   restores the previous best and stops; it also stops once the effector reaches the goal.
 * - The solver writes only an extra rotation per link (applied after motion and morph, so
 *   local = ik * (morph * motion * append)); IK off (property keys) leaves it the identity. */
#include "anim/anim_internal.h"

/* Effector within this distance of the goal counts as reached (PMX units, 1 unit ~ 8 cm). */
#define IK_REACHED 1e-5f
/* Below this the effector already points at the goal: no rotation. */
#define IK_MIN_ANGLE 1e-6f
/* An iteration that gains less than this fraction of the remaining distance ends the solve: the goal is
 * out of reach and the rest would move the effector by less than float precision. */
#define IK_STALL 1e-6f
/* MMD models use loop counts of tens; a corrupt count must not stall a frame. */
#define IK_MAX_LOOPS 1024

static float clampf(float v, float lo, float hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

/* The one free axis of a limited link (0 X, 1 Y, 2 Z), or -1 when zero or several axes are free. */
static int single_axis(const plush_pmx_ik_link *link)
{
    int axis = -1;
    for (int k = 0; k < 3; k++) {
        if (link->lower[k] != 0.0f || link->upper[k] != 0.0f) {
            if (axis >= 0)
                return -1;
            axis = k;
        }
    }
    return axis;
}

/* Euler angles of q with R = Rx(x) * Ry(y) * Rz(z). */
static void to_euler_xyz(const float q[4], float e[3])
{
    float m[9];
    anim_q_mat3(q, m);   /* m[3 * column + row] */
    float m02 = m[6], m12 = m[7], m22 = m[8], m01 = m[3], m00 = m[0];
    e[1] = asinf(clampf(m02, -1.0f, 1.0f));
    if (fabsf(m02) < 0.9999f) {
        e[0] = atan2f(-m12, m22);
        e[2] = atan2f(-m01, m00);
    } else {
        /* Gimbal lock: only x + z (or x - z) is defined; put it all in x. */
        e[0] = atan2f(m[5], m[4]);
        e[2] = 0.0f;
    }
}

static void from_euler_xyz(const float e[3], float q[4])
{
    static const float ax[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    float qx[4], qy[4], qz[4], t[4];
    anim_q_axis_angle(ax[0], e[0], qx);
    anim_q_axis_angle(ax[1], e[1], qy);
    anim_q_axis_angle(ax[2], e[2], qz);
    anim_q_mul(qx, qy, t);
    anim_q_mul(t, qz, q);
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

/* Sets link b's IK rotation so that its local rotation becomes want. */
static void set_local_rotation(const ik_solve *s, uint32_t b, const float want[4])
{
    plush_anim *a = s->a;
    float base[4], inv[4];
    base_rotation(a, b, base);
    anim_q_conj(base, inv);
    anim_q_mul(want, inv, a->ik_q[b]);
    anim_q_normalize(a->ik_q[b]);
    plush__anim_update_local(a, b);
    refresh(s, b);
}

/* One CCD step on a link limited to one axis: the signed angle between effector and goal projected
 * onto the plane of that axis, added to the link's current angle about it. */
static void step_single_axis(const ik_solve *s, uint32_t b, const plush_pmx_ik_link *link, int axis, float unit,
                             vec3 le, vec3 lt, int iteration)
{
    vec3 ax = {0, 0, 0};
    ax[axis] = 1.0f;
    /* The link's local rotation is a rotation about ax (this function keeps it so), so ax has the same
     * coordinates in the link's frame and its parent's. */
    vec3 pe, pt, along;
    glm_vec3_scale(ax, glm_vec3_dot(le, ax), along);
    glm_vec3_sub(le, along, pe);
    glm_vec3_scale(ax, glm_vec3_dot(lt, ax), along);
    glm_vec3_sub(lt, along, pt);
    float delta = 0.0f;
    if (glm_vec3_norm2(pe) > 1e-12f && glm_vec3_norm2(pt) > 1e-12f) {
        vec3 c;
        glm_vec3_cross(pe, pt, c);
        delta = atan2f(glm_vec3_dot(ax, c), glm_vec3_dot(pe, pt));
    }
    if (unit > 0.0f)
        delta = clampf(delta, -unit, unit);
    const float *q = s->a->local_q[b];
    /* q and -q are one rotation; with w >= 0 the angle comes out in -pi..pi. */
    float sign = q[3] < 0.0f ? -1.0f : 1.0f;
    float current = 2.0f * atan2f(sign * q[axis], sign * q[3]);
    float lo = link->lower[axis], hi = link->upper[axis];
    if (lo > hi) {
        float t = lo;
        lo = hi;
        hi = t;
    }
    float angle = current + delta;
    if (iteration == 0 && (angle < lo || angle > hi)) {
        if (-angle >= lo && -angle <= hi) {
            angle = -angle;
        } else {
            float mid = 0.5f * (lo + hi);
            if (fabsf(mid - angle) > fabsf(mid + angle))
                angle = -angle;
        }
    }
    angle = clampf(angle, lo, hi);
    float want[4];
    anim_q_axis_angle(ax, angle, want);
    set_local_rotation(s, b, want);
}

static void step_link(const ik_solve *s, uint32_t b, const plush_pmx_ik_link *link, float unit, int iteration)
{
    plush_anim *a = s->a;
    const float *g = a->global[b];
    vec3 le, lt;
    anim_to_local(g, &a->global[s->effector][12], le);
    anim_to_local(g, &a->global[s->ik][12], lt);
    float ne = glm_vec3_norm(le), nt = glm_vec3_norm(lt);
    if (ne < 1e-8f || nt < 1e-8f)
        return;   /* the effector or the goal sits on the link's pivot: no direction to turn */
    glm_vec3_divs(le, ne, le);
    glm_vec3_divs(lt, nt, lt);
    int axis = link->has_limits ? single_axis(link) : -1;
    if (axis >= 0) {
        step_single_axis(s, b, link, axis, unit, le, lt, iteration);
        return;
    }
    vec3 c;
    glm_vec3_cross(le, lt, c);
    float sn = glm_vec3_norm(c);
    float angle = atan2f(sn, glm_vec3_dot(le, lt));
    if (angle < IK_MIN_ANGLE || sn < 1e-12f)
        return;
    if (unit > 0.0f && angle > unit)
        angle = unit;
    glm_vec3_divs(c, sn, c);
    float rot[4], want[4];
    anim_q_axis_angle(c, angle, rot);
    /* rot is expressed in the link's own (rotated) frame, so it applies after the current local
     * rotation. */
    anim_q_mul(a->local_q[b], rot, want);
    anim_q_normalize(want);
    if (link->has_limits) {
        float e[3];
        to_euler_xyz(want, e);
        for (int k = 0; k < 3; k++) {
            float lo = link->lower[k] < link->upper[k] ? link->lower[k] : link->upper[k];
            float hi = link->lower[k] < link->upper[k] ? link->upper[k] : link->lower[k];
            e[k] = clampf(e[k], lo, hi);
        }
        from_euler_xyz(e, want);
    }
    set_local_rotation(s, b, want);
}

static void restore(const ik_solve *s, const plush_pmx_ik_link *links, uint32_t n)
{
    plush_anim *a = s->a;
    for (uint32_t k = n; k-- > 0;) {
        uint32_t b = (uint32_t)links[k].bone;
        memcpy(a->ik_q[b], a->ik_saved[b], sizeof a->ik_q[b]);
        plush__anim_update_local(a, b);
        refresh(s, b);
    }
}

static void save(plush_anim *a, const plush_pmx_ik_link *links, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++)
        memcpy(a->ik_saved[links[k].bone], a->ik_q[links[k].bone], sizeof a->ik_saved[0]);
}

static void solve_loops(const ik_solve *s, const plush_pmx_bone *bone)
{
    plush_anim *a = s->a;
    uint32_t n = bone->ik_link_count;
    const plush_pmx_ik_link *links = bone->ik_links;
    float best = glm_vec3_distance(&a->global[s->effector][12], &a->global[s->ik][12]);
    if (best < IK_REACHED)
        return;
    save(a, links, n);
    int loops = bone->ik_loop_count < 0 ? 0 : (bone->ik_loop_count > IK_MAX_LOOPS ? IK_MAX_LOOPS : bone->ik_loop_count);
    float unit = isfinite(bone->ik_limit_angle) ? bone->ik_limit_angle : 0.0f;
    for (int it = 0; it < loops; it++) {
        for (uint32_t k = 0; k < n; k++) {
            uint32_t b = (uint32_t)links[k].bone;
            if (b == s->effector || b == s->ik)
                continue;
            step_link(s, b, &links[k], unit, it);
        }
        float d = glm_vec3_distance(&a->global[s->effector][12], &a->global[s->ik][12]);
        if (!(d < best)) {
            restore(s, links, n);   /* no progress: back to the best pose, and stop */
            return;
        }
        float gain = best - d;
        best = d;
        save(a, links, n);
        /* Reached, or stalled at a goal out of reach (what further loops would add is below float
         * precision of the positions). */
        if (best < IK_REACHED || gain < IK_STALL * best)
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
