/* Private to src/physics/bulletc*.cpp (C++ only): Bullet's headers, the handles' definitions, the small
 * helpers every entry uses and the entries themselves. Everything here has hidden visibility
 * (-fvisibility=hidden): the shared object exports plush_bulletc_get alone. */
#ifndef PLUSH_PHYSICS_BULLETC_INTERNAL_H
#define PLUSH_PHYSICS_BULLETC_INTERNAL_H

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
#if !defined(__clang__) /* a GCC warning clang does not know (and would warn that it does not) */
#pragma GCC diagnostic ignored "-Wclass-memaccess"
#endif
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
    std::vector<btMatrix3x3> cluster_turns; /* each cluster's last frame rotation that was one (bulletc_soft.cpp) */
};

namespace plush_bulletc {
/* Bullet's CPU soft-body solver, with each cluster's frame checked after Bullet's prediction
 * (bulletc_soft.cpp says why). */
class soft_solver : public btDefaultSoftBodySolver {
  public:
    explicit soft_solver(bc_world *w) : world(w) {}
    void predictMotion(btScalar dt) override;

  private:
    bc_world *world;
};
} // namespace plush_bulletc

struct bc_world {
    btSoftBodyRigidBodyCollisionConfiguration *configuration = nullptr;
    btCollisionDispatcher *dispatcher = nullptr;
    btBroadphaseInterface *broadphase = nullptr;
    btSequentialImpulseConstraintSolver *solver = nullptr;
    plush_bulletc::soft_solver *soft_solver = nullptr;
    btSoftRigidDynamicsWorld *world = nullptr;
    std::vector<bc_shape *> shapes;
    std::vector<bc_body *> bodies;
    std::vector<bc_constraint *> constraints;
    std::vector<bc_soft *> softs;
};

namespace plush_bulletc {

inline void set_err(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

inline void set_err(char *err, const char *fmt, ...)
{
    if (!err)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, BC_ERR, fmt, ap);
    va_end(ap);
}

/* The one-line message for an exception caught at the boundary. */
inline void set_err_exception(char *err, const char *what)
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

inline btTransform to_bt(const float m[16])
{
    btTransform t;
    t.setFromOpenGLMatrix(m); /* OpenGL's layout is column-major, as cglm's */
    return t;
}

inline void from_bt(const btTransform &t, float m[16])
{
    t.getOpenGLMatrix(m);
}

inline btVector3 v3(const float v[3])
{
    return btVector3(v[0], v[1], v[2]);
}

inline bool finite3(const float v[3])
{
    return std::isfinite(v[0]) && std::isfinite(v[1]) && std::isfinite(v[2]);
}

inline bool finite16(const float m[16])
{
    for (int i = 0; i < 16; i++)
        if (!std::isfinite(m[i]))
            return false;
    return true;
}

/* PMX stores 16-bit group and mask fields; Bullet filters with ints. Zero-extending both keeps bit 15
 * (group 15) a plain bit on each side instead of sign-extending it across the mask. */
inline int filter_bits(int16_t v)
{
    return (int)(uint16_t)v;
}

inline bool node_ok(const bc_soft *s, uint32_t i)
{
    return s && i < (uint32_t)s->soft->m_nodes.size();
}

/* The table's entries, one per plush_bulletc_api field (bulletc.h documents each): bulletc.cpp holds the
 * world's, bulletc_rigid.cpp the shapes', rigid bodies' and constraints', bulletc_soft.cpp the soft
 * bodies'. */
bool scalar_is_float(void);
bc_world *world_create(const bc_world_desc *desc, char *err);
void world_destroy(bc_world *w);
void world_step(bc_world *w, float dt);
bc_shape *shape_create(bc_world *w, bc_shape_kind kind, const float size[3], char *err);
bc_body *body_create(bc_world *w, bc_shape *shape, const bc_body_desc *desc, char *err);
void body_set_transform(bc_body *b, const float m[16]);
void body_get_transform(const bc_body *b, float m[16]);
void body_set_velocity(bc_body *b, const float linear[3], const float angular[3]);
void body_get_velocity(const bc_body *b, float linear[3], float angular[3]);
void body_clear_forces(bc_body *b);
void body_reset(bc_body *b, const float m[16]);
bc_constraint *constraint_6dof(bc_world *w, bc_body *a, bc_body *b, const bc_6dof_desc *d, char *err);
bc_constraint *constraint_p2p(bc_world *w, bc_body *a, bc_body *b, const bc_p2p_desc *d, char *err);
bc_constraint *constraint_cone_twist(bc_world *w, bc_body *a, bc_body *b, const bc_cone_twist_desc *d, char *err);
bc_constraint *constraint_slider(bc_world *w, bc_body *a, bc_body *b, const bc_slider_desc *d, char *err);
bc_constraint *constraint_hinge(bc_world *w, bc_body *a, bc_body *b, const bc_hinge_desc *d, char *err);
bc_soft *soft_create(bc_world *w, const bc_soft_desc *desc, char *err);
void soft_append_link(bc_soft *s, uint32_t a, uint32_t b);
void soft_append_face(bc_soft *s, uint32_t a, uint32_t b, uint32_t c);
void soft_set_material(bc_soft *s, float lst, float ast, float vst);
void soft_bending(bc_soft *s, int distance);
void soft_append_bending_link(bc_soft *s, uint32_t a, uint32_t b);
void soft_randomize(bc_soft *s);
void soft_clusters(bc_soft *s, int k);
void soft_set_config(bc_soft *s, const bc_soft_config *c);
void soft_set_total_mass(bc_soft *s, float mass);
void soft_append_anchor(bc_soft *s, uint32_t node, bc_body *body);
void soft_finish(bc_soft *s);
size_t soft_node_count(const bc_soft *s);
void soft_get_nodes(const bc_soft *s, size_t first, size_t count, float (*x)[3], float (*v)[3], float (*n)[3]);
void soft_set_node(bc_soft *s, uint32_t node, const float x[3], const float v[3]);
void soft_set_node_inverse_mass(bc_soft *s, uint32_t node, float im);
void soft_set_all_nodes(bc_soft *s, const float (*x)[3], const float (*v)[3]);
void soft_ignore_body(bc_soft *s, bc_body *b);
void soft_link_rest(bc_soft *s, const float (*x)[3], const float (*rest)[3], float most);
void soft_freeze(bc_soft *s);
void soft_set_pose(bc_soft *s, bool volume, bool frame);

} // namespace plush_bulletc

#endif
