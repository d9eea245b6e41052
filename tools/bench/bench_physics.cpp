/* make bench: soft-body step time through plush_world against the same scene driven directly through
 * Bullet's C++ API in the same run; the ratio is the cost of plush's C binding (bulletc.cpp) and of
 * what plush_world adds per step (the blow-up guard's copy and check of every node, node normals).
 *
 * The scene: a closed TriMesh sphere (an icosphere of 1280, 5120 and 20480 triangles, radius 10) built
 * as a PMX 2.1 model in code, P_IT 4, B-link distance 2, pressure, dropped 5 units onto plush's ground
 * box; 60 Hz, gravity (0, -98, 0). The direct scene is built from the nodes and triangles plush_world
 * reports for that soft body, with the links, faces, material, bending, mass, config and filters that
 * world_soft_build.c hands to bulletc, in the same order, and a ground box of the same size
 * (world.c: half extents 1000 x 50 x 1000, top face at y = 0) — so both simulate the same thing, and the
 * bench checks that they agree bit for bit.
 *
 * Timing: thread CPU time (the machine is shared; preemption by other processes is not counted) of each
 * step from step 10 on. The two worlds live side by side and step in turn (who goes first alternates),
 * in three rounds. Both sides go through the same states step by step (bit-identical), so each step's
 * time is taken as its minimum over the rounds, which drops the spikes another process's load puts into
 * single steps; the figure is the mean of those per-step minima. */
#include "plush/physics.h"
#include "plush/pmx.h"
#include "plush/sys/physics.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-variable"
#pragma GCC diagnostic ignored "-Wsign-compare"
#if !defined(__clang__) /* GCC's alone: clang would warn that it does not know it */
#pragma GCC diagnostic ignored "-Wclass-memaccess"
#endif
#include <btBulletDynamicsCommon.h>
#include <BulletSoftBody/btSoftBody.h>
#include <BulletSoftBody/btSoftBodyRigidBodyCollisionConfiguration.h>
#include <BulletSoftBody/btSoftRigidDynamicsWorld.h>
#pragma GCC diagnostic pop

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <utility>
#include <vector>

namespace {

constexpr int STEPS = 120;   /* 2 s of simulation: the fall, the impact and settling */
constexpr int WARMUP = 10;   /* steps not timed (first contacts allocate) */
constexpr int ROUNDS = 3;
constexpr float RADIUS = 10.0f;
constexpr float DROP = 5.0f; /* gap between the sphere and the ground */
constexpr float DT = 1.0f / 60.0f;
constexpr float GROUND_HALF_XZ = 1000.0f, GROUND_HALF_Y = 50.0f; /* as world.c makes the ground */
constexpr int BLINK_DISTANCE = 2;
constexpr int P_ITERATIONS = 4;

double cpu_now()
{
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

[[noreturn]] void die(const char *what, const plush_diag *diag)
{
    std::fprintf(stderr, "bench_physics: %s%s%s\n", what, diag ? ": " : "", diag ? diag->message : "");
    std::exit(1);
}

/* ---- the sphere as a PMX 2.1 model -------------------------------------------------------------- */

struct Sphere {
    std::vector<std::array<float, 3>> pos;
    std::vector<uint32_t> idx;
};

/* Icosahedron split `levels` times, projected onto the sphere: 20 * 4^levels triangles. */
Sphere icosphere(int levels)
{
    Sphere s;
    const float t = (1.0f + std::sqrt(5.0f)) / 2.0f;
    const float base[12][3] = {{-1, t, 0}, {1, t, 0}, {-1, -t, 0}, {1, -t, 0}, {0, -1, t}, {0, 1, t},
                               {0, -1, -t}, {0, 1, -t}, {t, 0, -1}, {t, 0, 1}, {-t, 0, -1}, {-t, 0, 1}};
    for (const auto &p : base) {
        const float l = std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
        s.pos.push_back({p[0] / l, p[1] / l, p[2] / l});
    }
    s.idx = {0, 11, 5, 0, 5, 1, 0, 1, 7, 0, 7, 10, 0, 10, 11, 1, 5, 9, 5, 11, 4, 11, 10, 2, 10, 7, 6, 7, 1, 8,
             3, 9, 4, 3, 4, 2, 3, 2, 6, 3, 6, 8, 3, 8, 9, 4, 9, 5, 2, 4, 11, 6, 2, 10, 8, 6, 7, 9, 8, 1};
    for (int l = 0; l < levels; l++) {
        std::map<std::pair<uint32_t, uint32_t>, uint32_t> mid;
        auto middle = [&](uint32_t a, uint32_t b) {
            const auto key = std::make_pair(std::min(a, b), std::max(a, b));
            const auto it = mid.find(key);
            if (it != mid.end())
                return it->second;
            float m[3];
            for (int k = 0; k < 3; k++)
                m[k] = (s.pos[a][k] + s.pos[b][k]) * 0.5f;
            const float len = std::sqrt(m[0] * m[0] + m[1] * m[1] + m[2] * m[2]);
            s.pos.push_back({m[0] / len, m[1] / len, m[2] / len});
            const uint32_t i = (uint32_t)s.pos.size() - 1;
            mid.emplace(key, i);
            return i;
        };
        std::vector<uint32_t> next;
        for (size_t f = 0; f < s.idx.size(); f += 3) {
            const uint32_t a = s.idx[f], b = s.idx[f + 1], c = s.idx[f + 2];
            const uint32_t ab = middle(a, b), bc = middle(b, c), ca = middle(c, a);
            next.insert(next.end(), {a, ab, ca, b, bc, ab, c, ca, bc, ab, bc, ca});
        }
        s.idx.swap(next);
    }
    return s;
}

plush_str text(const char *s)
{
    plush_str t{};
    t.s = s;
    t.len = (uint32_t)std::strlen(s);
    return t;
}

/* Storage for a model built in code (plush_pmx_model points into it). */
struct Model {
    std::vector<plush_pmx_vertex> vertices;
    std::vector<uint32_t> indices;
    plush_pmx_material material{};
    plush_pmx_bone bone{};
    plush_pmx_soft_body soft{};
    plush_pmx_model *pmx = nullptr;
};

void build_model(const Sphere &s, Model &m)
{
    m.pmx = plush_pmx_create();
    if (!m.pmx)
        die("out of memory", nullptr);
    m.pmx->version = 2.1f;
    m.pmx->encoding = PLUSH_ENC_UTF8;
    m.pmx->name = text("bench sphere");
    for (const auto &p : s.pos) {
        plush_pmx_vertex v{};
        for (int k = 0; k < 3; k++) {
            v.position[k] = p[k] * RADIUS;
            v.normal[k] = p[k];
        }
        v.position[1] += RADIUS + DROP;
        v.bones[0] = 0;
        v.bones[1] = v.bones[2] = v.bones[3] = -1;
        v.weights[0] = 1.0f;
        v.edge_scale = 1.0f;
        v.weight_type = PLUSH_PMX_BDEF1;
        v.sdef = -1;
        m.vertices.push_back(v);
    }
    m.indices = s.idx;
    m.pmx->vertex_count = m.vertices.size();
    m.pmx->vertices = m.vertices.data();
    m.pmx->index_count = m.indices.size();
    m.pmx->indices = m.indices.data();

    m.material.name = text("skin");
    m.material.diffuse[0] = m.material.diffuse[1] = m.material.diffuse[2] = m.material.diffuse[3] = 1.0f;
    m.material.texture = m.material.sphere_texture = -1;
    m.material.toon_shared = 1;
    m.material.index_count = (int32_t)m.indices.size();
    m.pmx->material_count = 1;
    m.pmx->materials = &m.material;

    m.bone.name = text("center");
    m.bone.parent = -1;
    m.bone.flags = PLUSH_PMX_BONE_ROTATABLE | PLUSH_PMX_BONE_TRANSLATABLE | PLUSH_PMX_BONE_VISIBLE |
                   PLUSH_PMX_BONE_ENABLED;
    m.bone.tail_bone = m.bone.append_parent = m.bone.ik_target = -1;
    m.pmx->bone_count = 1;
    m.pmx->bones = &m.bone;

    plush_pmx_soft_body &sb = m.soft;
    sb.name = text("sphere");
    sb.shape = 0; /* TriMesh */
    sb.material = 0;
    sb.group = 0;
    sb.mask = 0xffff;
    sb.flags = PLUSH_PMX_SOFT_BLINK;
    sb.blink_distance = BLINK_DISTANCE;
    sb.total_mass = 1.0f;
    sb.margin = 0.1f;
    sb.aero_model = 0; /* V_Point */
    sb.config = plush_pmx_soft_config{};
    sb.config.vcf = 1.0f;
    sb.config.dp = 0.01f;
    sb.config.pr = 5.0f;
    sb.config.df = 0.2f;
    sb.config.chr = 1.0f;
    sb.config.khr = 0.1f;
    sb.config.shr = 1.0f;
    sb.config.ahr = 0.7f;
    sb.config.srhr_cl = 0.1f;
    sb.config.skhr_cl = 1.0f;
    sb.config.sshr_cl = 0.5f;
    sb.config.sr_splt_cl = sb.config.sk_splt_cl = sb.config.ss_splt_cl = 0.5f;
    sb.v_iterations = 0;
    sb.p_iterations = P_ITERATIONS;
    sb.d_iterations = 0;
    sb.c_iterations = 4;
    sb.lst = 0.8f;
    sb.ast = 1.0f;
    sb.vst = 1.0f;
    m.pmx->soft_body_count = 1;
    m.pmx->soft_bodies = &m.soft;

    plush_diag diag{};
    diag.file = "bench sphere";
    if (plush_pmx_validate(m.pmx, &diag) != PLUSH_OK)
        die("the built model does not validate", &diag);
}

/* ---- the scene through plush_world -------------------------------------------------------------- */

struct PlushScene {
    plush_world *world = nullptr;
    plush_world_model *wm = nullptr;
    plush_diag diag{};

    explicit PlushScene(const Model &m)
    {
        plush_world_desc desc{};
        desc.ground = true;
        if (plush_world_create(&desc, &world, &diag) != PLUSH_OK)
            die("plush_world_create", &diag);
        if (plush_world_add_model(world, m.pmx, nullptr, &wm, &diag) != PLUSH_OK)
            die("plush_world_add_model", &diag);
        if (info().state != PLUSH_SOFT_ACTIVE)
            die("the soft body was not built", &diag);
    }
    ~PlushScene() { plush_world_destroy(world); }
    PlushScene(const PlushScene &) = delete;
    PlushScene &operator=(const PlushScene &) = delete;

    plush_world_soft_info info() const
    {
        plush_world_soft_info i{};
        plush_world_soft_get_info(wm, 0, &i);
        return i;
    }
    void step()
    {
        if (plush_world_step(world, DT, &diag) != PLUSH_OK)
            die("plush_world_step", &diag);
    }
    std::vector<std::array<float, 3>> nodes() const
    {
        const plush_world_soft_info i = info();
        if (i.state != PLUSH_SOFT_ACTIVE)
            die("the soft body failed during the run (times would not compare)", &diag);
        std::vector<std::array<float, 3>> x(i.node_count);
        plush_world_soft_nodes(wm, 0, reinterpret_cast<float(*)[3]>(x.data()), nullptr);
        return x;
    }
};

/* ---- the same scene, Bullet directly ------------------------------------------------------------ */

struct DirectScene {
    btSoftBodyRigidBodyCollisionConfiguration configuration;
    btCollisionDispatcher dispatcher{&configuration};
    btDbvtBroadphase broadphase;
    btSequentialImpulseConstraintSolver solver;
    btSoftRigidDynamicsWorld world{&dispatcher, &broadphase, &solver, &configuration, nullptr};
    btBoxShape ground_shape{btVector3(GROUND_HALF_XZ, GROUND_HALF_Y, GROUND_HALF_XZ)};
    btDefaultMotionState ground_motion{btTransform(btQuaternion::getIdentity(), btVector3(0, -GROUND_HALF_Y, 0))};
    btRigidBody *ground = nullptr;
    btSoftBody *soft = nullptr;

    /* The nodes and triangles are plush's own (plush_world_soft_get_info); everything else follows
     * world_soft_build.c's calls into bulletc, in the same order. */
    DirectScene(const Model &m, const plush_world_soft_info &info)
    {
        const plush_pmx_soft_body &sb = m.soft;
        const btVector3 gravity(0, -98.0f, 0);
        world.setGravity(gravity);
        btSoftBodyWorldInfo &wi = world.getWorldInfo();
        wi.m_gravity = gravity;
        wi.air_density = 1.2f;
        wi.water_density = 0;
        wi.m_broadphase = &broadphase;
        wi.m_dispatcher = &dispatcher;
        wi.m_sparsesdf.Initialize();

        btRigidBody::btRigidBodyConstructionInfo gi(0, &ground_motion, &ground_shape, btVector3(0, 0, 0));
        gi.m_friction = 0.5f;
        gi.m_restitution = 0;
        ground = new btRigidBody(gi);
        ground->setActivationState(DISABLE_DEACTIVATION);
        world.addRigidBody(ground, 0xffff, 0xffff);

        const int n = (int)info.node_count;
        std::vector<btVector3> x;
        for (int i = 0; i < n; i++)
            x.emplace_back(info.rest_nodes[i][0], info.rest_nodes[i][1], info.rest_nodes[i][2]);
        std::vector<btScalar> masses((size_t)n, 1.0f);
        soft = new btSoftBody(&wi, n, x.data(), masses.data());
        /* links: every triangle edge once, in face order (a b, b c, c a) */
        std::vector<std::vector<uint32_t>> linked((size_t)n);
        for (size_t t = 0; t < info.triangle_count; t++)
            for (int e = 0; e < 3; e++) {
                const uint32_t a = info.triangles[t][e], b = info.triangles[t][(e + 1) % 3];
                if (a == b)
                    continue;
                auto &l = linked[std::min(a, b)];
                if (std::find(l.begin(), l.end(), std::max(a, b)) != l.end())
                    continue;
                l.push_back(std::max(a, b));
                soft->appendLink((int)a, (int)b);
            }
        for (size_t t = 0; t < info.triangle_count; t++) {
            const uint32_t *f = info.triangles[t];
            if ((x[f[1]] - x[f[0]]).cross(x[f[2]] - x[f[0]]).length2() > 0)
                soft->appendFace((int)f[0], (int)f[1], (int)f[2]);
        }
        btSoftBody::Material *mat = soft->m_materials[0];
        mat->m_kLST = sb.lst;
        mat->m_kAST = sb.ast;
        mat->m_kVST = sb.vst;
        soft->generateBendingConstraints(sb.blink_distance, mat);
        soft->setTotalMass(sb.total_mass, false);
        btSoftBody::Config &c = soft->m_cfg;
        c.aeromodel = btSoftBody::eAeroModel::V_Point;
        c.kVCF = sb.config.vcf;
        c.kDP = sb.config.dp;
        c.kDG = sb.config.dg;
        c.kLF = sb.config.lf;
        c.kPR = sb.config.pr;
        c.kVC = sb.config.vc;
        c.kDF = sb.config.df;
        c.kMT = sb.config.mt;
        c.kCHR = sb.config.chr;
        c.kKHR = sb.config.khr;
        c.kSHR = sb.config.shr;
        c.kAHR = sb.config.ahr;
        c.kSRHR_CL = sb.config.srhr_cl;
        c.kSKHR_CL = sb.config.skhr_cl;
        c.kSSHR_CL = sb.config.sshr_cl;
        c.kSR_SPLT_CL = sb.config.sr_splt_cl;
        c.kSK_SPLT_CL = sb.config.sk_splt_cl;
        c.kSS_SPLT_CL = sb.config.ss_splt_cl;
        c.viterations = sb.v_iterations;
        c.piterations = sb.p_iterations;
        c.diterations = sb.d_iterations;
        c.citerations = sb.c_iterations;
        c.collisions = btSoftBody::fCollision::SDF_RS | btSoftBody::fCollision::VF_SS;
        soft->getCollisionShape()->setMargin(sb.margin);
        soft->m_bUpdateRtCst = true;
        world.addSoftBody(soft, 1 << sb.group, sb.mask);
        soft->setActivationState(DISABLE_DEACTIVATION);
    }
    ~DirectScene()
    {
        world.removeSoftBody(soft);
        delete soft;
        world.removeRigidBody(ground);
        delete ground;
    }
    DirectScene(const DirectScene &) = delete;
    DirectScene &operator=(const DirectScene &) = delete;

    void step()
    {
        world.stepSimulation(DT, 1, DT);
        world.getWorldInfo().m_sparsesdf.GarbageCollect(); /* as bulletc does after every step */
    }
    std::vector<std::array<float, 3>> nodes() const
    {
        std::vector<std::array<float, 3>> x;
        for (int i = 0; i < soft->m_nodes.size(); i++) {
            const btVector3 &p = soft->m_nodes[i].m_x;
            x.push_back({p.x(), p.y(), p.z()});
        }
        return x;
    }
};

template <class Scene> double timed_step(Scene &scene)
{
    const double t0 = cpu_now();
    scene.step();
    return (cpu_now() - t0) * 1e3;
}

} // namespace

int main()
{
    for (int levels = 3; levels <= 5; levels++) {
        const Sphere s = icosphere(levels);
        Model m;
        build_model(s, m);
        const size_t timed = STEPS - WARMUP;
        std::vector<double> best_plush(timed, INFINITY), best_direct(timed, INFINITY);
        std::vector<std::array<float, 3>> xp, xd;
        size_t nodes = 0;
        for (int round = 0; round < ROUNDS; round++) {
            PlushScene plush(m);
            DirectScene direct(m, plush.info());
            nodes = plush.info().node_count;
            /* The two worlds step in turn, the first of each pair alternating, so a burst of load from
             * elsewhere lands on both sides alike. */
            for (int i = 0; i < STEPS; i++) {
                double tp, td;
                if ((i + round) % 2 == 0) {
                    tp = timed_step(plush);
                    td = timed_step(direct);
                } else {
                    td = timed_step(direct);
                    tp = timed_step(plush);
                }
                if (i >= WARMUP) {
                    best_plush[(size_t)i - WARMUP] = std::min(best_plush[(size_t)i - WARMUP], tp);
                    best_direct[(size_t)i - WARMUP] = std::min(best_direct[(size_t)i - WARMUP], td);
                }
            }
            xp = plush.nodes();
            xd = direct.nodes();
        }
        double plush_ms = 0, direct_ms = 0;
        for (size_t i = 0; i < timed; i++) {
            plush_ms += best_plush[i] / (double)timed;
            direct_ms += best_direct[i] / (double)timed;
        }
        double max_diff = 0;
        for (size_t i = 0; i < xp.size() && i < xd.size(); i++)
            for (size_t k = 0; k < 3; k++)
                max_diff = std::max(max_diff, (double)std::fabs(xp[i][k] - xd[i][k]));
        const bool same = xp.size() == xd.size() && std::memcmp(xp.data(), xd.data(), xp.size() * sizeof xp[0]) == 0;
        std::printf("physics soft sphere %zu tris (%zu nodes, P_IT %d, B-link %d): plush %.2f ms/step, "
                    "bullet direct %.2f ms/step, overhead %.1f%% (%s)\n",
                    s.idx.size() / 3, nodes, P_ITERATIONS, BLINK_DISTANCE, plush_ms, direct_ms,
                    (plush_ms / direct_ms - 1.0) * 100.0, same ? "node positions bit-identical" : "node positions differ");
        if (!same)
            std::printf("physics   max node difference %.3g units\n", max_diff);
        std::fflush(stdout);
        plush_pmx_free(m.pmx);
    }
    return 0;
}
