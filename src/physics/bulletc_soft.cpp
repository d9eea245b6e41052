/* bulletc: soft bodies (bulletc.cpp says what every entry promises). */
#include "physics/bulletc_internal.h"

namespace plush_bulletc {

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
        /* A pinned node is immovable to Bullet's contact with a body physics moves, which then takes the whole
         * correction, every position iteration: a hair body her own physics swings, held by its joints against
         * the pinned collar of a cage (Luka's choker, 材質10), was thrown at 1e26 units/s. Marked attached
         * (as an anchor marks its node), a pinned node makes no such contact; it follows its bone whatever
         * meets it, and the cage's free nodes still meet those bodies. */
        for (int i = 0; i < n; i++)
            if (m[i] == 0)
                sb->m_nodes[i].m_battach = 1;
        std::unique_ptr<bc_soft> s(
            new bc_soft{w, sb.get(), filter_bits(desc->group), filter_bits(desc->mask), false, {}});
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
        btMatrix3x3 identity;
        identity.setIdentity();
        s->cluster_turns.assign((size_t)s->soft->m_clusters.size(), identity);
    } catch (...) {
    }
}

/* ---- the clusters' frames ------------------------------------------------------------------------ */

/* Bullet turns a cluster's rest offsets into its current ones by the rotation of a polar decomposition
 * of M = sum (x - com)(rest offset)^T (plus 1e-4 times diag(1, 2, 3)), and takes the cluster's world
 * inverse inertia as R I^-1 R^T. For a flat cluster -- any cluster of a cloth -- M is singular but for
 * that 1e-4, and when the cloth folds through itself there the decomposition's iteration does not
 * converge: R comes back far from a rotation, the inverse inertia grows by orders of magnitude and the
 * cluster's impulses throw the cloth to infinity; put back to its last good state, the body folds the
 * same way again until it is frozen. So after Bullet's prediction each cluster's R is checked: a rotation
 * is kept as the cluster's last; one that is not is replaced by that last rotation for this step, and
 * the inverse inertia and angular velocity Bullet derived from it are derived again. A rotation is
 * R^T R = I within 100 times the decomposition's own tolerance (1e-4), so a converged frame is never
 * touched. docs/attach.md has the case and the figures. */
static bool is_rotation(const btMatrix3x3 &r)
{
    const btMatrix3x3 rtr = r.transposeTimes(r);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            const btScalar e = rtr[i][j] - (i == j ? 1 : 0);
            if (!(std::fabs(e) <= btScalar(1e-2)))
                return false;
        }
    return true;
}

static void check_cluster_frames(bc_soft *s)
{
    btSoftBody *sb = s->soft;
    if ((size_t)sb->m_clusters.size() != s->cluster_turns.size())
        return;
    for (int i = 0; i < sb->m_clusters.size(); i++) {
        btSoftBody::Cluster &c = *sb->m_clusters[i];
        const btMatrix3x3 &r = c.m_framexform.getBasis();
        if (is_rotation(r)) {
            s->cluster_turns[(size_t)i] = r;
            continue;
        }
        const btMatrix3x3 &last = s->cluster_turns[(size_t)i];
        c.m_framexform.setBasis(last);
        c.m_invwi = last * c.m_locii * last.transpose();
        btVector3 momentum(0, 0, 0);
        for (int j = 0; j < c.m_nodes.size(); j++)
            momentum += btCross(c.m_nodes[j]->m_x - c.m_com, c.m_nodes[j]->m_v * c.m_masses[j]);
        c.m_av = c.m_invwi * momentum * (1 - c.m_adamping);
    }
}

void soft_solver::predictMotion(btScalar dt)
{
    btDefaultSoftBodySolver::predictMotion(dt);
    for (bc_soft *s : world->softs)
        if (s->in_world && !s->cluster_turns.empty() && s->soft->isActive())
            check_cluster_frames(s);
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

void soft_ignore_body(bc_soft *s, bc_body *b)
{
    if (!s || !b || s->world != b->world)
        return;
    try {
        /* The dispatcher asks both objects (checkCollideWith) before it makes a pair's contacts. */
        s->soft->setIgnoreCollisionCheck(b->body, true);
    } catch (...) {
    }
}

static double apart(const float *a, const float *b)
{
    double dx = (double)a[0] - b[0], dy = (double)a[1] - b[1], dz = (double)a[2] - b[2];
    return std::sqrt(dx * dx + dy * dy + dz * dz);
}

void soft_link_rest(bc_soft *s, const float (*x)[3], const float (*rest)[3], float most)
{
    if (!s || !x || !rest || !(most >= 1))
        return;
    try {
        btSoftBody *sb = s->soft;
        const btSoftBody::Node *first = sb->m_nodes.size() ? &sb->m_nodes[0] : nullptr;
        for (int i = 0; first && i < sb->m_links.size(); i++) {
            btSoftBody::Link &l = sb->m_links[i];
            ptrdiff_t na = l.m_n[0] - first, nb = l.m_n[1] - first;
            double d = apart(x[na], x[nb]), r = apart(rest[na], rest[nb]);
            if (!(d > 0) || !std::isfinite(d) || !(r > 0))
                continue;
            d = d > r * most ? r * most : d < r / most ? r / most : d;
            l.m_rl = (btScalar)d; /* and what the solver reads of it (updateLinkConstants) */
            l.m_c1 = l.m_rl * l.m_rl;
        }
    } catch (...) {
    }
}

} // namespace plush_bulletc
