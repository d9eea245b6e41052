/* bulletc: shapes, rigid bodies and constraints (bulletc.cpp says what every entry promises). */
#include "physics/bulletc_internal.h"

namespace plush_bulletc {

bc_shape *shape_create(bc_world *w, bc_shape_kind kind, const float size[3], char *err)
{
    try {
        if (!w || !size) {
            set_err(err, "shape_create: no world or size");
            return nullptr;
        }
        if (!finite3(size)) {
            set_err(err, "shape_create: size is not finite");
            return nullptr;
        }
        std::unique_ptr<btCollisionShape> shape;
        switch (kind) {
        case BC_SPHERE:
            if (!(size[0] > 0)) {
                set_err(err, "shape_create: sphere radius %g is not positive", (double)size[0]);
                return nullptr;
            }
            shape.reset(new btSphereShape(size[0]));
            break;
        case BC_BOX:
            if (!(size[0] > 0 && size[1] > 0 && size[2] > 0)) {
                set_err(err, "shape_create: box half extents %g %g %g are not all positive", (double)size[0],
                        (double)size[1], (double)size[2]);
                return nullptr;
            }
            shape.reset(new btBoxShape(btVector3(size[0], size[1], size[2])));
            break;
        case BC_CAPSULE:
            if (!(size[0] > 0) || size[1] < 0) {
                set_err(err, "shape_create: capsule radius %g or height %g out of range", (double)size[0],
                        (double)size[1]);
                return nullptr;
            }
            shape.reset(new btCapsuleShape(size[0], size[1]));
            break;
        default:
            set_err(err, "shape_create: unknown shape kind %d", (int)kind);
            return nullptr;
        }
        std::unique_ptr<bc_shape> s(new bc_shape{shape.get()});
        w->shapes.push_back(s.get());
        shape.release();
        return s.release();
    } catch (...) {
        set_err_exception(err, "shape_create");
        return nullptr;
    }
}

bc_body *body_create(bc_world *w, bc_shape *shape, const bc_body_desc *desc, char *err)
{
    try {
        if (!w || !shape || !desc) {
            set_err(err, "body_create: no world, shape or description");
            return nullptr;
        }
        if (!finite16(desc->transform)) {
            set_err(err, "body_create: transform is not finite");
            return nullptr;
        }
        const bool dynamic = !desc->kinematic && desc->mass > 0;
        if (!desc->kinematic && !(desc->mass >= 0 && std::isfinite(desc->mass))) {
            set_err(err, "body_create: mass %g is negative or not finite", (double)desc->mass);
            return nullptr;
        }
        const btScalar mass = dynamic ? desc->mass : 0;
        btVector3 inertia(0, 0, 0);
        if (dynamic)
            shape->shape->calculateLocalInertia(mass, inertia);
        const btTransform t = to_bt(desc->transform);

        w->bodies.reserve(w->bodies.size() + 1); /* the push_back below cannot throw after this */
        std::unique_ptr<btDefaultMotionState> motion(new btDefaultMotionState(t));
        btRigidBody::btRigidBodyConstructionInfo info(mass, motion.get(), shape->shape, inertia);
        info.m_linearDamping = desc->linear_damping;
        info.m_angularDamping = desc->angular_damping;
        info.m_restitution = desc->restitution;
        info.m_friction = desc->friction;
        /* Bullet's additional damping, as the MMD runtimes turn it on for every body (saba, vpvl2): a body
         * slower than 0.1 unit/s and 0.1 rad/s keeps 0.005 of its speed, and one slower than its own damping
         * loses 0.005 a step, so an MMD chain that has come to rest stays at rest rather than creeping. */
        info.m_additionalDamping = true;
        std::unique_ptr<btRigidBody> body(new btRigidBody(info));
        std::unique_ptr<bc_body> b(new bc_body{w, body.get(), motion.get(), desc->kinematic});
        if (desc->kinematic) {
            /* Kinematic bodies keep their motion state: Bullet reads the new pose from it at the start
             * of each step and derives the body's velocity from the move, which contacts and joints
             * need. */
            body->setCollisionFlags(body->getCollisionFlags() | btCollisionObject::CF_KINEMATIC_OBJECT);
        }
        body->setActivationState(DISABLE_DEACTIVATION);
        w->world->addRigidBody(body.get(), filter_bits(desc->group), filter_bits(desc->mask));
        w->bodies.push_back(b.get());
        body.release();
        motion.release();
        return b.release();
    } catch (...) {
        set_err_exception(err, "body_create");
        return nullptr;
    }
}

void body_set_transform(bc_body *b, const float m[16])
{
    if (!b || !m || !finite16(m))
        return;
    try {
        const btTransform t = to_bt(m);
        b->motion->setWorldTransform(t);
        b->body->setWorldTransform(t);
        /* A kinematic body's velocity is the move from its interpolation transform (last step's pose)
         * to the new one, so that one stays; anything else is teleported. */
        if (!b->kinematic)
            b->body->setInterpolationWorldTransform(t);
    } catch (...) {
    }
}

void body_get_transform(const bc_body *b, float m[16])
{
    if (!b || !m)
        return;
    try {
        from_bt(b->body->getWorldTransform(), m);
    } catch (...) {
    }
}

void body_set_velocity(bc_body *b, const float linear[3], const float angular[3])
{
    if (!b)
        return;
    try {
        /* Bullet derives a kinematic body's velocity from its move since the last step; setting one
         * makes the current pose the start of the next move, so a body teleported for a reset arrives
         * at rest instead of with the jump as its velocity. */
        if (b->kinematic)
            b->body->setInterpolationWorldTransform(b->body->getWorldTransform());
        if (linear && finite3(linear)) {
            b->body->setLinearVelocity(v3(linear));
            b->body->setInterpolationLinearVelocity(v3(linear));
        }
        if (angular && finite3(angular)) {
            b->body->setAngularVelocity(v3(angular));
            b->body->setInterpolationAngularVelocity(v3(angular));
        }
    } catch (...) {
    }
}

void body_get_velocity(const bc_body *b, float linear[3], float angular[3])
{
    if (!b)
        return;
    try {
        const btVector3 &l = b->body->getLinearVelocity();
        const btVector3 &a = b->body->getAngularVelocity();
        if (linear) {
            linear[0] = l.x();
            linear[1] = l.y();
            linear[2] = l.z();
        }
        if (angular) {
            angular[0] = a.x();
            angular[1] = a.y();
            angular[2] = a.z();
        }
    } catch (...) {
    }
}

void body_clear_forces(bc_body *b)
{
    if (!b)
        return;
    try {
        b->body->clearForces();
    } catch (...) {
    }
}

void body_reset(bc_body *b, const float m[16])
{
    if (!b || !m || !finite16(m))
        return;
    try {
        const btTransform t = to_bt(m);
        const btVector3 zero(0, 0, 0);
        btRigidBody *body = b->body;
        b->motion->setWorldTransform(t);
        body->setWorldTransform(t);
        body->setInterpolationWorldTransform(t);
        body->setLinearVelocity(zero);
        body->setAngularVelocity(zero);
        body->setInterpolationLinearVelocity(zero);
        body->setInterpolationAngularVelocity(zero);
        body->clearForces();
        if (btBroadphaseProxy *proxy = body->getBroadphaseHandle())
            b->world->broadphase->getOverlappingPairCache()->cleanProxyFromPairs(proxy, b->world->dispatcher);
    } catch (...) {
    }
}

/* ---- constraints ---- */

static bool constraint_args(bc_world *w, bc_body *a, bc_body *b, const void *desc, const char *what, char *err)
{
    if (!w || !a || !b || !desc) {
        set_err(err, "%s: no world, body or description", what);
        return false;
    }
    if (a == b) {
        set_err(err, "%s: both ends are the same body", what);
        return false;
    }
    if (a->world != w || b->world != w) {
        set_err(err, "%s: body belongs to another world", what);
        return false;
    }
    return true;
}

/* Adds c (already made) to the world and its list; takes ownership either way. */
static bc_constraint *constraint_add(bc_world *w, std::unique_ptr<btTypedConstraint> c)
{
    w->constraints.reserve(w->constraints.size() + 1);
    std::unique_ptr<bc_constraint> h(new bc_constraint{c.get()});
    w->world->addConstraint(c.get(), true); /* MMD: linked bodies do not collide */
    w->constraints.push_back(h.get());
    c.release();
    return h.release();
}

bc_constraint *constraint_6dof(bc_world *w, bc_body *a, bc_body *b, const bc_6dof_desc *d, char *err)
{
    try {
        if (!constraint_args(w, a, b, d, "constraint_6dof", err))
            return nullptr;
        if (!finite16(d->frame_a) || !finite16(d->frame_b)) {
            set_err(err, "constraint_6dof: joint frame is not finite");
            return nullptr;
        }
        std::unique_ptr<btGeneric6DofSpringConstraint> c(new btGeneric6DofSpringConstraint(
            *a->body, *b->body, to_bt(d->frame_a), to_bt(d->frame_b), d->use_linear_reference_frame_a));
        c->setLinearLowerLimit(v3(d->linear_lower));
        c->setLinearUpperLimit(v3(d->linear_upper));
        c->setAngularLowerLimit(v3(d->angular_lower));
        c->setAngularUpperLimit(v3(d->angular_upper));
        bool any_spring = false;
        for (int i = 0; i < 6; i++) {
            if (!d->spring[i])
                continue;
            any_spring = true;
            c->enableSpring(i, true);
            c->setStiffness(i, d->stiffness[i]);
            c->setDamping(i, d->damping[i]);
        }
        if (d->stop_erp > 0)
            for (int i = 0; i < 6; i++)
                c->setParam(BT_CONSTRAINT_STOP_ERP, d->stop_erp, i);
        if (d->set_equilibrium && any_spring)
            c->setEquilibriumPoint();
        return constraint_add(w, std::move(c));
    } catch (...) {
        set_err_exception(err, "constraint_6dof");
        return nullptr;
    }
}

bc_constraint *constraint_p2p(bc_world *w, bc_body *a, bc_body *b, const bc_p2p_desc *d, char *err)
{
    try {
        if (!constraint_args(w, a, b, d, "constraint_p2p", err))
            return nullptr;
        if (!finite3(d->pivot_a) || !finite3(d->pivot_b)) {
            set_err(err, "constraint_p2p: pivot is not finite");
            return nullptr;
        }
        std::unique_ptr<btTypedConstraint> c(
            new btPoint2PointConstraint(*a->body, *b->body, v3(d->pivot_a), v3(d->pivot_b)));
        return constraint_add(w, std::move(c));
    } catch (...) {
        set_err_exception(err, "constraint_p2p");
        return nullptr;
    }
}

bc_constraint *constraint_cone_twist(bc_world *w, bc_body *a, bc_body *b, const bc_cone_twist_desc *d, char *err)
{
    try {
        if (!constraint_args(w, a, b, d, "constraint_cone_twist", err))
            return nullptr;
        if (!finite16(d->frame_a) || !finite16(d->frame_b)) {
            set_err(err, "constraint_cone_twist: joint frame is not finite");
            return nullptr;
        }
        std::unique_ptr<btConeTwistConstraint> c(
            new btConeTwistConstraint(*a->body, *b->body, to_bt(d->frame_a), to_bt(d->frame_b)));
        c->setLimit(d->swing_span1, d->swing_span2, d->twist_span, d->softness, d->bias_factor,
                    d->relaxation_factor);
        c->setDamping(d->damping);
        c->setFixThresh(d->fix_threshold);
        if (d->motor) {
            c->enableMotor(true);
            c->setMaxMotorImpulse(d->max_motor_impulse);
            btQuaternion q(d->motor_target[0], d->motor_target[1], d->motor_target[2], d->motor_target[3]);
            const btScalar len = q.length();
            if (len > 0 && std::isfinite(len))
                c->setMotorTarget(q / len);
        }
        return constraint_add(w, std::move(c));
    } catch (...) {
        set_err_exception(err, "constraint_cone_twist");
        return nullptr;
    }
}

bc_constraint *constraint_slider(bc_world *w, bc_body *a, bc_body *b, const bc_slider_desc *d, char *err)
{
    try {
        if (!constraint_args(w, a, b, d, "constraint_slider", err))
            return nullptr;
        if (!finite16(d->frame_a) || !finite16(d->frame_b)) {
            set_err(err, "constraint_slider: joint frame is not finite");
            return nullptr;
        }
        std::unique_ptr<btSliderConstraint> c(new btSliderConstraint(
            *a->body, *b->body, to_bt(d->frame_a), to_bt(d->frame_b), d->use_linear_reference_frame_a));
        c->setLowerLinLimit(d->lower_linear);
        c->setUpperLinLimit(d->upper_linear);
        c->setLowerAngLimit(d->lower_angular);
        c->setUpperAngLimit(d->upper_angular);
        c->setPoweredLinMotor(d->powered_linear);
        if (d->powered_linear) {
            c->setTargetLinMotorVelocity(d->target_linear_velocity);
            c->setMaxLinMotorForce(d->max_linear_force);
        }
        c->setPoweredAngMotor(d->powered_angular);
        if (d->powered_angular) {
            c->setTargetAngMotorVelocity(d->target_angular_velocity);
            c->setMaxAngMotorForce(d->max_angular_force);
        }
        return constraint_add(w, std::move(c));
    } catch (...) {
        set_err_exception(err, "constraint_slider");
        return nullptr;
    }
}

bc_constraint *constraint_hinge(bc_world *w, bc_body *a, bc_body *b, const bc_hinge_desc *d, char *err)
{
    try {
        if (!constraint_args(w, a, b, d, "constraint_hinge", err))
            return nullptr;
        if (!finite16(d->frame_a) || !finite16(d->frame_b)) {
            set_err(err, "constraint_hinge: joint frame is not finite");
            return nullptr;
        }
        std::unique_ptr<btHingeConstraint> c(new btHingeConstraint(*a->body, *b->body, to_bt(d->frame_a),
                                                                   to_bt(d->frame_b), d->use_reference_frame_a));
        c->setLimit(d->low, d->high, d->softness, d->bias_factor, d->relaxation_factor);
        if (d->motor)
            c->enableAngularMotor(true, d->target_velocity, d->max_motor_impulse);
        return constraint_add(w, std::move(c));
    } catch (...) {
        set_err_exception(err, "constraint_hinge");
        return nullptr;
    }
}

} // namespace plush_bulletc
