/* bulletc: plush's C ABI over Bullet (see bulletc.h). The only C++ file of plush.
 *
 * Every exported entry is noexcept in effect: its body runs inside try/catch, so neither a C++ exception
 * nor an abort reaches the C side. Functions that create something answer NULL and one line in err;
 * the void setters ignore out-of-range node indices instead of writing past Bullet's arrays, because
 * they have no way to report and world.c validates before it calls them.
 *
 * Ownership: a bc_world keeps a list of everything made for it and frees it in dependency order
 * (constraints, soft bodies, rigid bodies, motion states, shapes, then the world and its parts), so
 * the C side only ever calls world_destroy.
 */
#include "physics/bulletc.h"

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <memory>
#include <new>
#include <vector>

/* Bullet's headers are not clean under -Wall -Wextra -Wshadow; our own code is. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-variable"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wclass-memaccess"
#include <btBulletDynamicsCommon.h>
#include <BulletSoftBody/btDefaultSoftBodySolver.h>
#include <BulletSoftBody/btSoftBody.h>
#include <BulletSoftBody/btSoftBodyRigidBodyCollisionConfiguration.h>
#include <BulletSoftBody/btSoftRigidDynamicsWorld.h>
#pragma GCC diagnostic pop

/* The PMX 2.1 soft-body fields are defined for single-precision Bullet, and the ABI passes floats. */
static_assert(sizeof(btScalar) == sizeof(float), "plush needs Bullet built with single-precision btScalar");

struct bc_shape {
    btCollisionShape *shape;
};

struct bc_body {
    bc_world *world;
    btRigidBody *body;
    btDefaultMotionState *motion;
    bool kinematic;
};

struct bc_constraint {
    btTypedConstraint *constraint;
};

struct bc_soft {
    bc_world *world;
    btSoftBody *soft;
    int group, mask;
    bool in_world;
};

struct bc_world {
    btSoftBodyRigidBodyCollisionConfiguration *configuration = nullptr;
    btCollisionDispatcher *dispatcher = nullptr;
    btBroadphaseInterface *broadphase = nullptr;
    btSequentialImpulseConstraintSolver *solver = nullptr;
    btSoftRigidDynamicsWorld *world = nullptr;
    std::vector<bc_shape *> shapes;
    std::vector<bc_body *> bodies;
    std::vector<bc_constraint *> constraints;
    std::vector<bc_soft *> softs;
};

namespace {

void set_err(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void set_err(char *err, const char *fmt, ...)
{
    if (!err)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, BC_ERR, fmt, ap);
    va_end(ap);
}

/* The one-line message for an exception caught at the boundary. */
void set_err_exception(char *err, const char *what)
{
    try {
        throw;
    } catch (const std::bad_alloc &) {
        set_err(err, "%s: out of memory", what);
    } catch (const std::exception &e) {
        set_err(err, "%s: %s", what, e.what());
    } catch (...) {
        set_err(err, "%s: unknown C++ exception", what);
    }
}

btTransform to_bt(const float m[16])
{
    btTransform t;
    t.setFromOpenGLMatrix(m); /* OpenGL's layout is column-major, as cglm's */
    return t;
}

void from_bt(const btTransform &t, float m[16])
{
    t.getOpenGLMatrix(m);
}

btVector3 v3(const float v[3])
{
    return btVector3(v[0], v[1], v[2]);
}

bool finite3(const float v[3])
{
    return std::isfinite(v[0]) && std::isfinite(v[1]) && std::isfinite(v[2]);
}

bool finite16(const float m[16])
{
    for (int i = 0; i < 16; i++)
        if (!std::isfinite(m[i]))
            return false;
    return true;
}

/* PMX stores 16-bit group and mask fields; Bullet filters with ints. Zero-extending both keeps bit 15
 * (group 15) a plain bit on each side instead of sign-extending it across the mask. */
int filter_bits(int16_t v)
{
    return (int)(uint16_t)v;
}

bool node_ok(const bc_soft *s, uint32_t i)
{
    return s && i < (uint32_t)s->soft->m_nodes.size();
}

/* ---- world ---- */

void world_free(bc_world *w)
{
    if (!w)
        return;
    btSoftRigidDynamicsWorld *dw = w->world;
    for (bc_constraint *c : w->constraints) {
        if (dw)
            dw->removeConstraint(c->constraint);
        delete c->constraint;
        delete c;
    }
    w->constraints.clear();
    for (bc_soft *s : w->softs) {
        if (dw && s->in_world)
            dw->removeSoftBody(s->soft);
        delete s->soft;
        delete s;
    }
    w->softs.clear();
    for (bc_body *b : w->bodies) {
        if (dw)
            dw->removeRigidBody(b->body);
        delete b->body;
    }
    for (bc_body *b : w->bodies) {
        delete b->motion;
        delete b;
    }
    w->bodies.clear();
    for (bc_shape *s : w->shapes) {
        delete s->shape;
        delete s;
    }
    w->shapes.clear();
    delete w->world; /* also deletes the default soft-body solver it created and owns */
    delete w->solver;
    delete w->broadphase;
    delete w->dispatcher;
    delete w->configuration;
    delete w;
}

bc_world *world_create(const bc_world_desc *desc, char *err)
{
    bc_world *w = nullptr;
    try {
        if (!desc) {
            set_err(err, "world_create: no description");
            return nullptr;
        }
        if (!finite3(desc->gravity) || !std::isfinite(desc->air_density) || !std::isfinite(desc->water_density)) {
            set_err(err, "world_create: gravity or density is not finite");
            return nullptr;
        }
        w = new bc_world();
        w->configuration = new btSoftBodyRigidBodyCollisionConfiguration();
        w->dispatcher = new btCollisionDispatcher(w->configuration);
        w->broadphase = new btDbvtBroadphase();
        w->solver = new btSequentialImpulseConstraintSolver();
        /* softBodySolver = 0: the world makes the default (CPU) solver and owns it */
        w->world = new btSoftRigidDynamicsWorld(w->dispatcher, w->broadphase, w->solver, w->configuration, nullptr);
        const btVector3 g = v3(desc->gravity);
        w->world->setGravity(g);
        btSoftBodyWorldInfo &info = w->world->getWorldInfo();
        info.m_gravity = g;
        info.air_density = desc->air_density;
        info.water_density = desc->water_density;
        info.m_broadphase = w->broadphase;
        info.m_dispatcher = w->dispatcher;
        info.m_sparsesdf.Initialize();
        return w;
    } catch (...) {
        set_err_exception(err, "world_create");
        try {
            world_free(w);
        } catch (...) {
        }
        return nullptr;
    }
}

void world_destroy(bc_world *w)
{
    try {
        world_free(w);
    } catch (...) {
    }
}

void world_step(bc_world *w, float dt)
{
    if (!w || !(dt > 0) || !std::isfinite(dt))
        return;
    try {
        w->world->stepSimulation(dt, 1, dt);
        /* The sparse SDF caches distance cells for rigid-vs-soft contacts; without collection the
         * cache only ever grows (up to its clamp, where it resets all at once). Bullet's own demos
         * collect after every step; the collection is driven by a step counter, so it stays
         * deterministic. */
        w->world->getWorldInfo().m_sparsesdf.GarbageCollect();
    } catch (...) {
    }
}

/* ---- shapes and rigid bodies ---- */

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

/* ---- constraints ---- */

bool constraint_args(bc_world *w, bc_body *a, bc_body *b, const void *desc, const char *what, char *err)
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
bc_constraint *constraint_add(bc_world *w, std::unique_ptr<btTypedConstraint> c)
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

/* ---- soft bodies ---- */

bc_soft *soft_create(bc_world *w, const bc_soft_desc *desc, char *err)
{
    try {
        if (!w || !desc) {
            set_err(err, "soft_create: no world or description");
            return nullptr;
        }
        if (desc->node_count == 0 || !desc->positions) {
            set_err(err, "soft_create: no nodes");
            return nullptr;
        }
        if (desc->node_count > (size_t)INT32_MAX) {
            set_err(err, "soft_create: %zu nodes are more than Bullet can index", desc->node_count);
            return nullptr;
        }
        const int n = (int)desc->node_count;
        btAlignedObjectArray<btVector3> x;
        btAlignedObjectArray<btScalar> m;
        x.resize(n);
        m.resize(n);
        for (int i = 0; i < n; i++) {
            if (!finite3(desc->positions[i])) {
                set_err(err, "soft_create: node %d position is not finite", i);
                return nullptr;
            }
            x[i] = v3(desc->positions[i]);
            const float mi = desc->masses ? desc->masses[i] : 1.0f;
            if (!(mi >= 0) || !std::isfinite(mi)) {
                set_err(err, "soft_create: node %d mass %g is negative or not finite", i, (double)mi);
                return nullptr;
            }
            m[i] = mi; /* Bullet's constructor turns 0 into inverse mass 0 (pinned) */
        }
        w->softs.reserve(w->softs.size() + 1);
        std::unique_ptr<btSoftBody> sb(new btSoftBody(&w->world->getWorldInfo(), n, &x[0], &m[0]));
        std::unique_ptr<bc_soft> s(
            new bc_soft{w, sb.get(), filter_bits(desc->group), filter_bits(desc->mask), false});
        w->softs.push_back(s.get());
        sb.release();
        return s.release();
    } catch (...) {
        set_err_exception(err, "soft_create");
        return nullptr;
    }
}

void soft_append_link(bc_soft *s, uint32_t a, uint32_t b)
{
    if (!node_ok(s, a) || !node_ok(s, b) || a == b)
        return;
    try {
        s->soft->appendLink((int)a, (int)b);
    } catch (...) {
    }
}

void soft_append_face(bc_soft *s, uint32_t a, uint32_t b, uint32_t c)
{
    if (!node_ok(s, a) || !node_ok(s, b) || !node_ok(s, c) || a == b || b == c || a == c)
        return;
    try {
        s->soft->appendFace((int)a, (int)b, (int)c);
    } catch (...) {
    }
}

void soft_set_material(bc_soft *s, float lst, float ast, float vst)
{
    if (!s || s->soft->m_materials.size() == 0)
        return;
    try {
        btSoftBody::Material *mat = s->soft->m_materials[0];
        mat->m_kLST = lst;
        mat->m_kAST = ast;
        mat->m_kVST = vst;
        s->soft->m_bUpdateRtCst = true;
    } catch (...) {
    }
}

void soft_bending(bc_soft *s, int distance)
{
    if (!s || distance < 0)
        return;
    try {
        s->soft->generateBendingConstraints(distance, s->soft->m_materials[0]);
    } catch (...) {
    }
}

void soft_append_bending_link(bc_soft *s, uint32_t a, uint32_t b)
{
    if (!node_ok(s, a) || !node_ok(s, b) || a == b || s->soft->m_materials.size() == 0)
        return;
    try {
        /* generateBendingConstraints: appendLink(i, j, mat), then the new link's m_bbending = 1 */
        s->soft->appendLink((int)a, (int)b, s->soft->m_materials[0]);
        s->soft->m_links[s->soft->m_links.size() - 1].m_bbending = 1;
    } catch (...) {
    }
}

void soft_randomize(bc_soft *s)
{
    if (!s)
        return;
    try {
        s->soft->randomizeConstraints();
    } catch (...) {
    }
}

void soft_clusters(bc_soft *s, int k)
{
    if (!s || k < 0)
        return;
    try {
        s->soft->generateClusters(k);
    } catch (...) {
    }
}

void soft_set_config(bc_soft *s, const bc_soft_config *c)
{
    if (!s || !c)
        return;
    try {
        btSoftBody::Config &cfg = s->soft->m_cfg;
        if (c->aero_model >= 0 && c->aero_model < (int)btSoftBody::eAeroModel::END)
            cfg.aeromodel = (btSoftBody::eAeroModel::_)c->aero_model;
        cfg.kVCF = c->kVCF;
        cfg.kDP = c->kDP;
        cfg.kDG = c->kDG;
        cfg.kLF = c->kLF;
        cfg.kPR = c->kPR;
        cfg.kVC = c->kVC;
        cfg.kDF = c->kDF;
        cfg.kMT = c->kMT;
        cfg.kCHR = c->kCHR;
        cfg.kKHR = c->kKHR;
        cfg.kSHR = c->kSHR;
        cfg.kAHR = c->kAHR;
        cfg.kSRHR_CL = c->kSRHR_CL;
        cfg.kSKHR_CL = c->kSKHR_CL;
        cfg.kSSHR_CL = c->kSSHR_CL;
        cfg.kSR_SPLT_CL = c->kSR_SPLT_CL;
        cfg.kSK_SPLT_CL = c->kSK_SPLT_CL;
        cfg.kSS_SPLT_CL = c->kSS_SPLT_CL;
        cfg.viterations = c->viterations > 0 ? c->viterations : 0;
        cfg.piterations = c->piterations > 0 ? c->piterations : 0;
        cfg.diterations = c->diterations > 0 ? c->diterations : 0;
        cfg.citerations = c->citerations > 0 ? c->citerations : 0;
        cfg.collisions = c->collisions;
        if (c->margin >= 0 && std::isfinite(c->margin))
            s->soft->getCollisionShape()->setMargin(c->margin);
        s->soft->m_bUpdateRtCst = true;
    } catch (...) {
    }
}

void soft_set_total_mass(bc_soft *s, float mass)
{
    /* Bullet scales every free node's inverse mass by total/mass: 0 or a body whose nodes are all
     * pinned would give NaN or infinity. */
    if (!s || !(mass > 0) || !std::isfinite(mass) || !(s->soft->getTotalMass() > 0))
        return;
    try {
        s->soft->setTotalMass(mass, false);
    } catch (...) {
    }
}

void soft_append_anchor(bc_soft *s, uint32_t node, bc_body *body)
{
    if (!node_ok(s, node) || !body || body->world != s->world)
        return;
    try {
        s->soft->appendAnchor((int)node, body->body, true, 1);
    } catch (...) {
    }
}

void soft_finish(bc_soft *s)
{
    if (!s || s->in_world)
        return;
    try {
        s->world->world->addSoftBody(s->soft, s->group, s->mask);
        s->soft->setActivationState(DISABLE_DEACTIVATION);
        s->in_world = true;
    } catch (...) {
    }
}

size_t soft_node_count(const bc_soft *s)
{
    return s ? (size_t)s->soft->m_nodes.size() : 0;
}

void soft_get_nodes(const bc_soft *s, size_t first, size_t count, float (*x)[3], float (*v)[3], float (*n)[3])
{
    if (!s)
        return;
    const size_t total = (size_t)s->soft->m_nodes.size();
    if (first > total || count > total - first)
        return;
    try {
        for (size_t i = 0; i < count; i++) {
            const btSoftBody::Node &node = s->soft->m_nodes[(int)(first + i)];
            if (x) {
                x[i][0] = node.m_x.x();
                x[i][1] = node.m_x.y();
                x[i][2] = node.m_x.z();
            }
            if (v) {
                v[i][0] = node.m_v.x();
                v[i][1] = node.m_v.y();
                v[i][2] = node.m_v.z();
            }
            if (n) {
                n[i][0] = node.m_n.x();
                n[i][1] = node.m_n.y();
                n[i][2] = node.m_n.z();
            }
        }
    } catch (...) {
    }
}

void soft_set_node(bc_soft *s, uint32_t node, const float x[3], const float v[3])
{
    if (!node_ok(s, node))
        return;
    try {
        btSoftBody::Node &nd = s->soft->m_nodes[(int)node];
        if (x && finite3(x)) {
            nd.m_x = v3(x);
            nd.m_q = nd.m_x;
        }
        if (v && finite3(v))
            nd.m_v = v3(v);
    } catch (...) {
    }
}

void soft_set_node_inverse_mass(bc_soft *s, uint32_t node, float im)
{
    if (!node_ok(s, node) || !(im >= 0) || !std::isfinite(im))
        return;
    try {
        btSoftBody::Node &nd = s->soft->m_nodes[(int)node];
        nd.m_im = im;
        /* Bullet still integrates a pinned node's velocity into its position; a pin stands still
         * until soft_set_node moves it. */
        if (im == 0)
            nd.m_v = btVector3(0, 0, 0);
        s->soft->m_bUpdateRtCst = true; /* link constants depend on the inverse masses */
    } catch (...) {
    }
}

void soft_set_all_nodes(bc_soft *s, const float (*x)[3], const float (*v)[3])
{
    if (!s)
        return;
    try {
        btSoftBody *sb = s->soft;
        for (int i = 0; i < sb->m_nodes.size(); i++) {
            btSoftBody::Node &nd = sb->m_nodes[i];
            if (x && finite3(x[i])) {
                nd.m_x = v3(x[i]);
                nd.m_q = nd.m_x;
            }
            if (v && finite3(v[i]))
                nd.m_v = v3(v[i]);
            nd.m_f = btVector3(0, 0, 0);
        }
        sb->updateBounds();
    } catch (...) {
    }
}

void soft_freeze(bc_soft *s)
{
    if (!s || !s->in_world)
        return;
    try {
        s->world->world->removeSoftBody(s->soft);
        s->in_world = false;
    } catch (...) {
    }
}

void soft_set_pose(bc_soft *s, bool volume, bool frame)
{
    if (!s || (!volume && !frame))
        return;
    try {
        /* setPose weighs nodes by mass; with every node pinned it divides 0 by 0. */
        if (!(s->soft->getTotalMass() > 0))
            return;
        s->soft->setPose(volume, frame);
    } catch (...) {
    }
}

bool scalar_is_float(void)
{
    return sizeof(btScalar) == sizeof(float);
}

const plush_bulletc_api api = {
    PLUSH_BULLETC_VERSION,
    scalar_is_float,
    world_create,
    world_destroy,
    world_step,
    shape_create,
    body_create,
    body_set_transform,
    body_get_transform,
    body_set_velocity,
    body_get_velocity,
    body_clear_forces,
    constraint_6dof,
    constraint_p2p,
    constraint_cone_twist,
    constraint_slider,
    constraint_hinge,
    soft_create,
    soft_append_link,
    soft_append_face,
    soft_set_material,
    soft_bending,
    soft_randomize,
    soft_clusters,
    soft_set_config,
    soft_set_total_mass,
    soft_append_anchor,
    soft_finish,
    soft_node_count,
    soft_get_nodes,
    soft_set_node,
    soft_set_node_inverse_mass,
    soft_set_all_nodes,
    soft_freeze,
    soft_set_pose,
    soft_append_bending_link,
};

} // namespace

extern "C" const plush_bulletc_api *plush_bulletc_get(uint32_t version)
{
    return version == PLUSH_BULLETC_VERSION ? &api : nullptr;
}
