/* PMX joints as Bullet constraints: all six kinds of plush_pmx_joint.
 *
 * Every kind shares one record (position, rotation, linear_lower/upper, angular_lower/upper,
 * spring_linear, spring_angular); each reads its own meaning into it. The joint's frame is
 * J = T(position) * Ry * Rx * Rz (physics.h), and each body's constraint frame is that frame in the body's
 * PMX rest pose: frame_a = A_rest^-1 * J, frame_b = B_rest^-1 * J (the format defines joints at rest, so
 * a model added in a non-rest pose still gets the frames its author set up).
 *
 * Field mapping, from PmxEditor's PMX 2.1 joint notes (Joint説明: "ConeTwist", "Slider", "Hinge") and the
 * same reading in the MMDFileParser PMX 2.1 joint classes. The editor shows linear_lower/upper as the
 * "制限 移動" row pair, angular_lower/upper as "制限 回転", spring_linear / spring_angular as "ばね 移動 / 回転".
 *
 *   0 spring 6DOF  btGeneric6DofSpringConstraint, linear reference frame A (as MMD): limits as stored
 *                  (lower > upper: free, equal: locked); springs on the linear axes whose stiffness is
 *                  non-zero and always on the angular ones, stiffness = spring_linear / spring_angular,
 *                  Bullet's spring damping left at 1 (none), equilibrium at the rest configuration
 *                  (setEquilibriumPoint is not called); stop ERP 0.475 on all six DOF.
 *   1 6DOF         the same constraint, limits and stop ERP, no springs.
 *   2 P2P          btPoint2PointConstraint at the joint's position; every other field unused.
 *   3 cone-twist   twist axis = the joint frame's X.
 *                    angular_lower.x  twist span      (spans are symmetric: +-value; angular_upper unused)
 *                    angular_lower.y  swing span 2    (around Y)
 *                    angular_lower.z  swing span 1    (around Z)
 *                    spring_linear    softness, bias factor, relaxation factor (editor default 1 / 0.3 / 1)
 *                    linear_lower.x   damping         linear_upper.x  fix threshold
 *                    linear_lower.z   motor on (1) / off (0)   linear_upper.z  max motor impulse
 *                    spring_angular   motor target, Euler angles (x y z, the rotation convention above)
 *   4 slider       axis = the joint frame's X, linear reference frame A.
 *                    linear_lower.x / linear_upper.x    linear limits
 *                    angular_lower.x / angular_upper.x  angular limits
 *                    spring_linear   linear motor: on (1) / off (0), target velocity, max force
 *                    spring_angular  angular motor: on (1) / off (0), target velocity, max force
 *   5 hinge        axis = the joint frame's Z.
 *                    angular_lower.x / angular_upper.x  low / high limit
 *                    spring_linear   softness, bias factor, relaxation factor (editor default 0.9 / 0.3 / 1)
 *                    spring_angular  motor: on (1) / off (0), target velocity, max motor impulse
 * A motor switch reads as on when the value is at least 0.5 (the editor writes exactly 0 or 1). */
#include "physics/world_internal.h"
#include "plush/sys/pmx.h"

#include <math.h>
#include <string.h>

#define SPRING_6DOF_STOP_ERP 0.475f

static const char *const kind_names[] = {"spring 6DOF", "6DOF", "P2P", "cone-twist", "slider", "hinge"};

static bool joint_finite(const plush_pmx_joint *j)
{
    const float *groups[] = {j->position,     j->rotation,      j->linear_lower,  j->linear_upper,
                             j->angular_lower, j->angular_upper, j->spring_linear, j->spring_angular};
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++)
        for (int k = 0; k < 3; k++)
            if (!isfinite(groups[g][k]))
                return false;
    return true;
}

static void spring_6dof(const plush_pmx_joint *j, bool springs, bc_6dof_desc *d)
{
    d->use_linear_reference_frame_a = true;
    for (int k = 0; k < 3; k++) {
        d->linear_lower[k] = j->linear_lower[k];
        d->linear_upper[k] = j->linear_upper[k];
        d->angular_lower[k] = j->angular_lower[k];
        d->angular_upper[k] = j->angular_upper[k];
        if (springs) {
            d->spring[k] = j->spring_linear[k] != 0;
            d->stiffness[k] = j->spring_linear[k];
            d->spring[3 + k] = true;
            d->stiffness[3 + k] = j->spring_angular[k];
        }
    }
    for (int k = 0; k < 6; k++)
        d->damping[k] = 1;
    d->stop_erp = SPRING_6DOF_STOP_ERP;
    d->set_equilibrium = false;
}

static bool switch_on(float v)
{
    return v >= 0.5f;
}

static void cone_twist(const plush_pmx_joint *j, bc_cone_twist_desc *d)
{
    d->twist_span = j->angular_lower[0];
    d->swing_span2 = j->angular_lower[1];
    d->swing_span1 = j->angular_lower[2];
    d->softness = j->spring_linear[0];
    d->bias_factor = j->spring_linear[1];
    d->relaxation_factor = j->spring_linear[2];
    d->damping = j->linear_lower[0];
    d->fix_threshold = j->linear_upper[0];
    d->motor = switch_on(j->linear_lower[2]);
    d->max_motor_impulse = j->linear_upper[2];
    float m[16];
    static const float origin[3] = {0, 0, 0};
    plush__world_mat_pmx(origin, j->spring_angular, m);
    plush__world_mat_to_quat(m, d->motor_target);
}

static void slider(const plush_pmx_joint *j, bc_slider_desc *d)
{
    d->use_linear_reference_frame_a = true;
    d->lower_linear = j->linear_lower[0];
    d->upper_linear = j->linear_upper[0];
    d->lower_angular = j->angular_lower[0];
    d->upper_angular = j->angular_upper[0];
    d->powered_linear = switch_on(j->spring_linear[0]);
    d->target_linear_velocity = j->spring_linear[1];
    d->max_linear_force = j->spring_linear[2];
    d->powered_angular = switch_on(j->spring_angular[0]);
    d->target_angular_velocity = j->spring_angular[1];
    d->max_angular_force = j->spring_angular[2];
}

static void hinge(const plush_pmx_joint *j, bc_hinge_desc *d)
{
    d->use_reference_frame_a = false;
    d->low = j->angular_lower[0];
    d->high = j->angular_upper[0];
    d->softness = j->spring_linear[0];
    d->bias_factor = j->spring_linear[1];
    d->relaxation_factor = j->spring_linear[2];
    d->motor = switch_on(j->spring_angular[0]);
    d->target_velocity = j->spring_angular[1];
    d->max_motor_impulse = j->spring_angular[2];
}

static bool body_ok(const plush_world_model *wm, int32_t b)
{
    return b >= 0 && (size_t)b < wm->model->rigid_body_count && wm->bodies[b].bc;
}

bc_constraint *plush__world_joint_create(plush_world_model *wm, size_t index, plush_diag *diag)
{
    const plush_pmx_joint *j = &wm->model->joints[index];
    const plush_pmx_model *m = wm->model;
    bool left_out_a = j->body_a >= 0 && (size_t)j->body_a < m->rigid_body_count && !wm->bodies[j->body_a].bc,
         left_out_b = j->body_b >= 0 && (size_t)j->body_b < m->rigid_body_count && !wm->bodies[j->body_b].bc;
    if (left_out_a || left_out_b) {
        plush_diag_warn(diag, -1, "joint", (int64_t)index, "\"%s\": rigid body %d is left out of the simulation; "
                        "joint skipped", j->name.s ? j->name.s : "", (int)(left_out_a ? j->body_a : j->body_b));
        return NULL;
    }
    if (!body_ok(wm, j->body_a) || !body_ok(wm, j->body_b) || j->body_a == j->body_b) {
        plush_diag_warn(diag, -1, "joint", (int64_t)index, "\"%s\": rigid bodies %d and %d are not two bodies of "
                        "the model (%zu); joint skipped", j->name.s, (int)j->body_a, (int)j->body_b,
                        m->rigid_body_count);
        return NULL;
    }
    if (j->type > PLUSH_PMX_JOINT_HINGE) {
        plush_diag_warn(diag, -1, "joint", (int64_t)index, "\"%s\": unknown joint type %d; joint skipped", j->name.s,
                        (int)j->type);
        return NULL;
    }
    if (!joint_finite(j)) {
        const plush_pmx_value_issue *q = plush_pmx_value_issue_find(m, "joint", (int64_t)index);
        plush_diag_warn(diag, q ? q->offset : -1, "joint", (int64_t)index, "\"%s\": %s; joint left out of the "
                        "simulation", j->name.s ? j->name.s : "", q ? q->what : "a value is not finite");
        return NULL;
    }
    const plush_pmx_rigid_body *ra = &m->rigid_bodies[j->body_a], *rb = &m->rigid_bodies[j->body_b];
    float joint[16], a[16], b[16], a_inv[16], b_inv[16], frame_a[16], frame_b[16];
    plush__world_mat_pmx(j->position, j->rotation, joint);
    plush__world_mat_pmx(ra->position, ra->rotation, a);
    plush__world_mat_pmx(rb->position, rb->rotation, b);
    plush__world_mat_rigid_inverse(a, a_inv);
    plush__world_mat_rigid_inverse(b, b_inv);
    plush__world_mat_mul(a_inv, joint, frame_a);
    plush__world_mat_mul(b_inv, joint, frame_b);

    const plush_bulletc_api *bc = wm->world->bc;
    bc_world *bw = wm->world->bw;
    bc_body *body_a = wm->bodies[j->body_a].bc, *body_b = wm->bodies[j->body_b].bc;
    char err[BC_ERR] = "";
    bc_constraint *c = NULL;
    switch (j->type) {
    case PLUSH_PMX_JOINT_SPRING_6DOF:
    case PLUSH_PMX_JOINT_6DOF: {
        bc_6dof_desc d = {0};
        memcpy(d.frame_a, frame_a, sizeof frame_a);
        memcpy(d.frame_b, frame_b, sizeof frame_b);
        spring_6dof(j, j->type == PLUSH_PMX_JOINT_SPRING_6DOF, &d);
        c = bc->constraint_6dof(bw, body_a, body_b, &d, err);
        break;
    }
    case PLUSH_PMX_JOINT_P2P: {
        bc_p2p_desc d;
        plush__world_mat_point(a_inv, j->position, d.pivot_a);
        plush__world_mat_point(b_inv, j->position, d.pivot_b);
        c = bc->constraint_p2p(bw, body_a, body_b, &d, err);
        break;
    }
    case PLUSH_PMX_JOINT_CONE_TWIST: {
        bc_cone_twist_desc d = {0};
        memcpy(d.frame_a, frame_a, sizeof frame_a);
        memcpy(d.frame_b, frame_b, sizeof frame_b);
        cone_twist(j, &d);
        c = bc->constraint_cone_twist(bw, body_a, body_b, &d, err);
        break;
    }
    case PLUSH_PMX_JOINT_SLIDER: {
        bc_slider_desc d = {0};
        memcpy(d.frame_a, frame_a, sizeof frame_a);
        memcpy(d.frame_b, frame_b, sizeof frame_b);
        slider(j, &d);
        c = bc->constraint_slider(bw, body_a, body_b, &d, err);
        break;
    }
    default: {
        bc_hinge_desc d = {0};
        memcpy(d.frame_a, frame_a, sizeof frame_a);
        memcpy(d.frame_b, frame_b, sizeof frame_b);
        hinge(j, &d);
        c = bc->constraint_hinge(bw, body_a, body_b, &d, err);
        break;
    }
    }
    if (!c)
        plush_diag_warn(diag, -1, "joint", (int64_t)index, "\"%s\": Bullet refused the %s constraint: %s; joint "
                        "skipped", j->name.s, kind_names[j->type], err);
    return c;
}
