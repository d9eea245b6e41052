/* bulletc: plush's C ABI over Bullet (see bulletc.h): the world and the table. plush's only C++ files are
 * this one, bulletc_rigid.cpp (shapes, rigid bodies, constraints) and bulletc_soft.cpp (soft bodies), built
 * together into libplush_physics.so.
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
#include "physics/bulletc_internal.h"

namespace plush_bulletc {

namespace {

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
    delete w->world;
    delete w->soft_solver;
    delete w->solver;
    delete w->broadphase;
    delete w->dispatcher;
    delete w->configuration;
    delete w;
}

} // namespace

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
        /* Bullet's CPU solver with the clusters' frames checked (bulletc_soft.cpp); the world does not own it */
        w->soft_solver = new soft_solver(w);
        w->world = new btSoftRigidDynamicsWorld(w->dispatcher, w->broadphase, w->solver, w->configuration,
                                                w->soft_solver);
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
    body_reset,
    soft_ignore_body,
    soft_link_rest,
};

} // namespace plush_bulletc

extern "C" const plush_bulletc_api *plush_bulletc_get(uint32_t version)
{
    return version == PLUSH_BULLETC_VERSION ? &plush_bulletc::api : nullptr;
}
