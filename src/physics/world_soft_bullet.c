/* PMX 2.1 soft bodies, the Bullet side of building: every PMX field (k-values, iterations, material,
 * B-links, clusters, randomisation, aerodynamics, collisions, mass, pose, anchors) handed to Bullet
 * through the bulletc ABI, repaired where Bullet would misbehave. world_soft_build.c makes the nodes. */
#include "physics/world_soft_internal.h"
#include "core/geom.h"
#include "plush/sys/core.h"
#include "plush/sys/physics.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- geometry ----------------------------------------------------------------------------------- */

bool plush__world_soft_has_area(const float (*rest)[3], const uint32_t f[3])
{
    const float *a = rest[f[0]], *b = rest[f[1]], *d = rest[f[2]];
    double e[3], g[3];
    for (int k = 0; k < 3; k++) {
        e[k] = (double)b[k] - a[k];
        g[k] = (double)d[k] - a[k];
    }
    double x = e[1] * g[2] - e[2] * g[1], y = e[2] * g[0] - e[0] * g[2], z = e[0] * g[1] - e[1] * g[0];
    return x * x + y * y + z * z > 0;
}

/* btSoftBody::eAeroModel::_ as Bullet 3.24 numbers it. Bullet added V_TwoSidedLiftDrag and
 * F_TwoSidedLiftDrag between the names the PMX notes list (V_Point, V_TwoSided, V_OneSided, F_TwoSided,
 * F_OneSided = 0..4), so the models are mapped by name. */
enum {
    BT_AERO_V_POINT = 0,
    BT_AERO_V_TWO_SIDED = 1,
    BT_AERO_V_ONE_SIDED = 3,
    BT_AERO_F_TWO_SIDED = 4,
    BT_AERO_F_ONE_SIDED = 6
};
static const int aero_by_pmx[5] = {BT_AERO_V_POINT, BT_AERO_V_TWO_SIDED, BT_AERO_V_ONE_SIDED, BT_AERO_F_TWO_SIDED,
                                   BT_AERO_F_ONE_SIDED};

/* btSoftBody::fCollision::_ bits. */
enum { BT_SDF_RS = 0x0001, BT_CL_RS = 0x0002, BT_VF_SS = 0x0010, BT_CL_SS = 0x0020 };

/* Bounds that keep a hostile file from hanging a step: Bullet runs each iteration count per fixed
 * step, and bending constraints beyond distance 2 run Floyd-Warshall over all node pairs (n^3). */
enum { SOFT_MAX_ITERATIONS = PLUSH_WORLD_SOFT_MAX_ITERATIONS, SOFT_FLOYD_MAX_NODES = 1500 };
/* Nodes the bending-pair searches of one large body may visit in all (about a second of work). */
#define SOFT_BENDING_BUDGET 100000000u

/* One k-value on its way to Bullet: non-finite gives Bullet's default, outside the range btSoftBody.h
 * documents it is clamped (Bullet's solvers overshoot and diverge there: a hardness of 11.5 moves a node
 * 11.5 times past its target every iteration). */
typedef struct soft_value {
    const char *name;
    float value, fallback, lo, hi;
    float *out;
} soft_value;

/* Writes each value, appending the names it repaired to list. */
static void apply_values(const soft_value *vals, size_t count, char *list, size_t cap)
{
    for (size_t i = 0; i < count; i++) {
        float x = vals[i].value;
        float y = !isfinite(x) ? vals[i].fallback : x < vals[i].lo ? vals[i].lo : x > vals[i].hi ? vals[i].hi : x;
        *vals[i].out = y;
        if (y != x) {
            size_t n = strlen(list);
            snprintf(list + n, cap - n, "%s%s %g->%g", n ? ", " : "", vals[i].name, (double)x, (double)y);
        }
    }
}

static int iterations(int32_t n, bool *repaired)
{
    if (n < 0 || n > SOFT_MAX_ITERATIONS) {
        *repaired = true;
        return n < 0 ? 0 : SOFT_MAX_ITERATIONS;
    }
    return (int)n;
}

double plush__world_soft_volume(const world_soft *s, const float (*x)[3], const double origin[3])
{
    double v = 0;
    for (size_t t = 0; t < s->triangle_count; t++) {
        double p[3][3];
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 3; k++)
                p[i][k] = x[s->triangles[t][i]][k] - origin[k];
        v += (p[0][0] * (p[1][1] * p[2][2] - p[1][2] * p[2][1]) - p[0][1] * (p[1][0] * p[2][2] - p[1][2] * p[2][0]) +
              p[0][2] * (p[1][0] * p[2][1] - p[1][1] * p[2][0])) / 6.0;
    }
    return v;
}

/* Whether the rest mesh encloses a volume Bullet's pressure can divide by: |V| (about the centroid, in double)
 * above 1e-4 of the largest extent cubed (a sphere has 0.52). A rope, a flat or open-and-nearly-flat cloth has
 * none: Bullet's kPR force is kPR / V times each node's area, infinite or NaN at step 0. */
bool plush__world_soft_encloses(const world_soft *s)
{
    if (!s->triangle_count || !s->node_count)
        return false;
    double lo[3], hi[3], mid[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++)
        lo[k] = hi[k] = s->rest[0][k];
    for (size_t n = 0; n < s->node_count; n++)
        for (int k = 0; k < 3; k++) {
            lo[k] = fmin(lo[k], s->rest[n][k]);
            hi[k] = fmax(hi[k], s->rest[n][k]);
            mid[k] += s->rest[n][k] / (double)s->node_count;
        }
    double v = plush__world_soft_volume(s, (const float(*)[3])s->rest, mid);
    double d = fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2]));
    return fabs(v) > 1e-4 * d * d * d;
}

static void fill_config(soft_ctx *c, bc_soft_config *out)
{
    const plush_pmx_soft_body *sb = c->sb;
    const plush_pmx_soft_config *k = &sb->config;
    memset(out, 0, sizeof *out);
    if (sb->aero_model >= 0 && sb->aero_model < 5) {
        out->aero_model = aero_by_pmx[sb->aero_model];
    } else {
        out->aero_model = BT_AERO_V_POINT;
        plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index,
                        "\"%s\": unknown aero model %ld: V_Point used", c->name, (long)sb->aero_model);
    }
    const float inf = INFINITY;
    const soft_value vals[] = {
        {"VCF", k->vcf, 1, -inf, inf, &out->kVCF},      {"DP", k->dp, 0, 0, 1, &out->kDP},
        {"DG", k->dg, 0, 0, inf, &out->kDG},            {"LF", k->lf, 0, 0, inf, &out->kLF},
        {"PR", k->pr, 0, -inf, inf, &out->kPR},         {"VC", k->vc, 0, 0, inf, &out->kVC},
        {"DF", k->df, 0.2f, 0, 1, &out->kDF},           {"MT", k->mt, 0, 0, 1, &out->kMT},
        {"CHR", k->chr, 1, 0, 1, &out->kCHR},           {"KHR", k->khr, 0.1f, 0, 1, &out->kKHR},
        {"SHR", k->shr, 1, 0, 1, &out->kSHR},           {"AHR", k->ahr, 0.7f, 0, 1, &out->kAHR},
        {"SRHR_CL", k->srhr_cl, 0.1f, 0, 1, &out->kSRHR_CL}, {"SKHR_CL", k->skhr_cl, 1, 0, 1, &out->kSKHR_CL},
        {"SSHR_CL", k->sshr_cl, 0.5f, 0, 1, &out->kSSHR_CL}, {"SR_SPLT_CL", k->sr_splt_cl, 0.5f, 0, 1, &out->kSR_SPLT_CL},
        {"SK_SPLT_CL", k->sk_splt_cl, 0.5f, 0, 1, &out->kSK_SPLT_CL},
        {"SS_SPLT_CL", k->ss_splt_cl, 0.5f, 0, 1, &out->kSS_SPLT_CL},
    };
    char list[PLUSH_DIAG_MESSAGE] = "";
    apply_values(vals, sizeof vals / sizeof vals[0], list, sizeof list);
    if (list[0])
        plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index,
                        "\"%s\": config outside Bullet's range, clamped: %s", c->name, list);
    if (out->kPR != 0 && !plush__world_soft_encloses(c->s)) {
        plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index,
                        "\"%s\": pressure (PR %g) needs a closed volume and this %s encloses none: PR 0 used",
                        c->name, (double)out->kPR, c->sb->shape == PLUSH_PMX_SOFT_ROPE ? "rope" : "mesh");
        out->kPR = 0;
    }
    bool repaired = false;
    out->viterations = iterations(sb->v_iterations, &repaired);
    out->piterations = iterations(sb->p_iterations, &repaired);
    out->diterations = iterations(sb->d_iterations, &repaired);
    out->citerations = iterations(sb->c_iterations, &repaired);
    if (repaired)
        plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index,
                        "\"%s\": iteration counts clamped to 0..%d", c->name, SOFT_MAX_ITERATIONS);
    bool clusters = (sb->flags & PLUSH_PMX_SOFT_CLUSTERS) != 0;
    out->collisions = clusters ? BT_CL_SS | BT_CL_RS : BT_SDF_RS | BT_VF_SS;
    if ((out->collisions & BT_VF_SS) && c->pieces > 1) {
        out->collisions &= ~BT_VF_SS;
        plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index,
                        "\"%s\": its faces are %zu separate pieces (not joined by edges); Bullet cannot build "
                        "self-collision (VF_SS) for that, so it is off (give each piece its own soft body, as "
                        "plush attach does)",
                        c->name, c->pieces);
    }
    out->margin = isfinite(sb->margin) && sb->margin >= 0 ? sb->margin : 0;
    if (out->margin != sb->margin)
        plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index, "\"%s\": margin %g replaced by 0", c->name,
                        (double)sb->margin);
}

/* The links in the order they are appended: a rope's nodes one after another; a TriMesh's every
 * triangle edge once, in face order (open addressing over (low, high) node pairs). *out is malloc'd. */
bool plush__world_soft_links(const world_soft *s, uint32_t (**out)[2], size_t *out_count)
{
    size_t max = s->rope ? (s->node_count ? s->node_count - 1 : 0) : 3 * s->triangle_count;
    uint32_t(*links)[2] = malloc((max ? max : 1) * sizeof *links);
    if (!links)
        return false;
    size_t n = 0;
    if (s->rope) {
        for (size_t i = 0; i + 1 < s->node_count; i++)
            links[n][0] = (uint32_t)i, links[n++][1] = (uint32_t)i + 1;
        *out = links;
        *out_count = n;
        return true;
    }
    size_t cap = 16;
    while (cap < 6 * s->triangle_count)
        cap *= 2;
    uint64_t *slots = calloc(cap, sizeof *slots); /* 0 = empty: a stored key always has low < high */
    if (!slots) {
        free(links);
        return false;
    }
    for (size_t t = 0; t < s->triangle_count; t++)
        for (int e = 0; e < 3; e++) {
            uint32_t a = s->triangles[t][e], b = s->triangles[t][(e + 1) % 3];
            if (a == b)
                continue;
            uint64_t key = a < b ? (uint64_t)a << 32 | b : (uint64_t)b << 32 | a;
            size_t h = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
            while (slots[h] && slots[h] != key)
                h = (h + 1) & (cap - 1);
            if (slots[h])
                continue;
            slots[h] = key;
            links[n][0] = a, links[n++][1] = b;
        }
    free(slots);
    *out = links;
    *out_count = n;
    return true;
}

static int by_u32(const void *pa, const void *pb)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    return (a > b) - (a < b);
}

/* Declared for the tests in tests/scene/test_scene_direct.c, which hold it against Bullet's own generator.
 *
 * The node pairs btSoftBody::generateBendingConstraints(distance) links, in the order it appends them,
 * without its n*n table: every pair (i, j), i > j, whose shortest path over the links is exactly
 * `distance` links, ordered by j and then i; pair k is to be appended as appendLink(i, j) with
 * m_bbending set. Bullet finds the distances with its table (a two-step scan for distance 2,
 * Floyd-Warshall beyond); a breadth-first search from every node, cut at `distance`, finds the same
 * distances, since both are exact shortest path lengths. PLUSH_E_RANGE when the searches would
 * visit more than budget nodes in all (a hostile distance on a large body); PLUSH_E_NOMEM. *out is
 * malloc'd (the caller frees it), NULL when no pair is found. */
plush_status plush__world_soft_bending_pairs(size_t node_count, const uint32_t (*links)[2], size_t link_count, int distance,
                                      uint64_t budget, uint32_t (**out)[2], size_t *out_count);
plush_status plush__world_soft_bending_pairs(size_t node_count, const uint32_t (*links)[2], size_t link_count, int distance,
                                      uint64_t budget, uint32_t (**out)[2], size_t *out_count)
{
    *out = NULL;
    *out_count = 0;
    if (distance < 2 || node_count < 2)
        return PLUSH_OK;
    size_t n = node_count;
    size_t *first = calloc(n + 1, sizeof *first);
    uint32_t *adj = malloc((link_count ? 2 * link_count : 1) * sizeof *adj);
    uint32_t *stamp = calloc(n, sizeof *stamp), *queue = malloc(n * sizeof *queue);
    int *dist = malloc(n * sizeof *dist);
    uint32_t(*pairs)[2] = NULL, *found = malloc(n * sizeof *found);
    plush_status st = PLUSH_OK;
    size_t count = 0, cap = 0;
    if (!first || !adj || !stamp || !queue || !dist || !found) {
        st = PLUSH_E_NOMEM;
        goto done;
    }
    for (size_t k = 0; k < link_count; k++)
        first[links[k][0] + 1]++, first[links[k][1] + 1]++;
    for (size_t i = 0; i < n; i++)
        first[i + 1] += first[i];
    /* dist doubles as each node's fill cursor until the searches start */
    for (size_t i = 0; i < n; i++)
        dist[i] = 0;
    for (size_t k = 0; k < link_count; k++) {
        uint32_t a = links[k][0], b = links[k][1];
        adj[first[a] + (size_t)dist[a]++] = b;
        adj[first[b] + (size_t)dist[b]++] = a;
    }
    uint64_t visits = 0;
    for (size_t j = 0; j < n; j++) {
        size_t head = 0, tail = 0, nfound = 0;
        queue[tail++] = (uint32_t)j;
        stamp[j] = (uint32_t)j + 1;
        dist[j] = 0;
        while (head < tail) {
            uint32_t u = queue[head++];
            if (dist[u] == distance)
                continue;
            for (size_t e = first[u]; e < first[u + 1]; e++) {
                uint32_t v = adj[e];
                if (stamp[v] == (uint32_t)j + 1)
                    continue;
                stamp[v] = (uint32_t)j + 1;
                dist[v] = dist[u] + 1;
                queue[tail++] = v;
                if (dist[v] == distance && v > j)
                    found[nfound++] = v;
            }
        }
        visits += tail;
        if (visits > budget) {
            st = PLUSH_E_RANGE;
            goto done;
        }
        qsort(found, nfound, sizeof *found, by_u32);
        if (count + nfound > cap) {
            size_t grow = cap ? cap : 1024;
            while (grow < count + nfound)
                grow *= 2;
            void *p = realloc(pairs, grow * sizeof *pairs);
            if (!p) {
                st = PLUSH_E_NOMEM;
                goto done;
            }
            pairs = p;
            cap = grow;
        }
        for (size_t k = 0; k < nfound; k++)
            pairs[count][0] = found[k], pairs[count++][1] = (uint32_t)j;
    }
done:
    free(first);
    free(adj);
    free(stamp);
    free(queue);
    free(dist);
    free(found);
    if (st != PLUSH_OK) {
        free(pairs);
        return st;
    }
    *out = pairs;
    *out_count = count;
    return PLUSH_OK;
}

static void append_links(soft_ctx *c, const uint32_t (*links)[2], size_t count)
{
    const plush_bulletc_api *bc = c->wm->world->bc;
    for (size_t k = 0; k < count; k++)
        bc->soft_append_link(c->s->bc, links[k][0], links[k][1]);
}

/* Faces with area only: Bullet normalises face normals, and a zero one would turn into NaN. */
static void append_faces(soft_ctx *c)
{
    const plush_bulletc_api *bc = c->wm->world->bc;
    world_soft *s = c->s;
    for (size_t t = 0; t < s->triangle_count; t++) {
        const uint32_t *f = s->triangles[t];
        if (plush__world_soft_has_area((const float(*)[3])s->rest, f))
            bc->soft_append_face(s->bc, f[0], f[1], f[2]);
    }
}

/* Bullet's pose matching (kMT) polar-decomposes the moment of the nodes' offsets from their centre. A
 * piece whose rest nodes lie close to a plane or a line leaves that matrix nearly singular, and the
 * decomposition turned small hair pieces' nodes non-finite within seconds of a dance (Alicia's, every
 * strand of Luka's). Flat: the moment's determinant under a twentieth of an isotropic one's with the same
 * trace (a spread under 0.05, a sheet thinner than about a fiftieth of its width). */
static bool flat(const world_soft *s)
{
    return !(plush__points_spread((const float(*)[3])s->rest, s->node_count, NULL) >= PLUSH__FLAT_SPREAD);
}

/* A flat piece has no links across its thickness: only its shape memory resists folding it along a line,
 * and at the file's kMT a strip-shaped piece (Alicia's braid caged, a bob's locks) folded over onto itself
 * for a frame at a fast turn of the head. Plush's matching of such a piece pulls this many times as hard.
 * Measured on every shared soak case (only those two have flat pieces), frames of the long dance over the
 * surface bar: Alicia's hair 8 -> 0, the bob 216 -> 39; three times held them too but swung her braid into
 * her back on the short dance (4% of her hair inside at a frame, none before). */
#define FLAT_SHAPE_MEMORY 2.0f

/* Bullet's pose weighs a pinned node a thousand times the body's node count over a free one (setPose), so
 * the rest shape is turned with the pins: three pins, or pins along a line, leave the moment singular but
 * for the free nodes' millionths, and its polar decomposition went non-finite at a fast turn -- every node
 * with it, and Bullet's contact test indexed its distance cache with them and crashed (Luka's eyes, caged,
 * three pins each, at frame 644 of the long dance). A waistband's ring of pins is thin but far from that
 * (0.02 for a band a third of its radius high). */
static bool pins_flat(const world_soft *s)
{
    for (size_t i = 0; i < s->node_count; i++)
        if (s->pinned[i])
            return !(plush__points_spread((const float(*)[3])s->rest, s->node_count, s->pinned) >= 1e-3);
    return false;
}

/* Bending links at the B-link distance. Small bodies: Bullet's own generateBendingConstraints. Large ones
 * (more than SOFT_FLOYD_MAX_NODES nodes): its n*n table would not fit (60k nodes: 14 GB) and beyond
 * distance 2 its Floyd-Warshall is n^3, so plush finds the same pairs by breadth-first search and appends
 * them in Bullet's order, flagged as bending (plush__world_soft_bending_pairs) -- the same links, the same
 * simulation. A distance whose searches would exceed SOFT_BENDING_BUDGET visits falls back to 2. */
static plush_status add_bending(soft_ctx *c, const uint32_t (*links)[2], size_t link_count)
{
    const plush_bulletc_api *bc = c->wm->world->bc;
    world_soft *s = c->s;
    int d = c->sb->blink_distance < 0 ? 0 : c->sb->blink_distance > INT32_MAX / 2 ? INT32_MAX / 2
                                                                                : (int)c->sb->blink_distance;
    if (s->node_count <= SOFT_FLOYD_MAX_NODES) {
        bc->soft_bending(s->bc, d);
        return PLUSH_OK;
    }
    for (;;) {
        uint32_t(*pairs)[2] = NULL;
        size_t count = 0;
        plush_status st = plush__world_soft_bending_pairs(s->node_count, links, link_count, d, SOFT_BENDING_BUDGET, &pairs,
                                                   &count);
        if (st == PLUSH_E_NOMEM)
            return world_soft_no_memory(c);
        if (st == PLUSH_OK) {
            for (size_t k = 0; k < count; k++)
                bc->soft_append_bending_link(s->bc, pairs[k][0], pairs[k][1]);
            free(pairs);
            return PLUSH_OK;
        }
        if (d <= 2) {
            plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index,
                            "\"%s\": bending links on %zu nodes would take too long to find: none made", c->name,
                            s->node_count);
            return PLUSH_OK;
        }
        plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index,
                        "\"%s\": B-link distance %d on %zu nodes would take too long to find: 2 used", c->name, d,
                        s->node_count);
        d = 2;
    }
}

static float total_mass(soft_ctx *c)
{
    float m = c->sb->total_mass;
    if (isfinite(m) && m > 0)
        return m;
    plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index, "\"%s\": total mass %g replaced by 1", c->name,
                    (double)m);
    return 1;
}

plush_status plush__world_soft_create_bullet(soft_ctx *c)
{
    const plush_bulletc_api *bc = c->wm->world->bc;
    world_soft *s = c->s;
    const plush_pmx_soft_body *sb = c->sb;
    float *masses = malloc(s->node_count * sizeof *masses);
    if (!masses)
        return world_soft_no_memory(c);
    size_t free_nodes = 0;
    for (size_t i = 0; i < s->node_count; i++) {
        masses[i] = s->pinned[i] ? 0.0f : 1.0f;
        free_nodes += !s->pinned[i];
    }
    bc_soft_desc desc = {
        .node_count = s->node_count,
        .positions = (const float(*)[3])s->rest,
        .masses = masses,
        .group = (int16_t)(uint16_t)(1u << (sb->group & 15)),
        .mask = (int16_t)sb->mask,
    };
    char err[BC_ERR] = "";
    s->bc = bc->soft_create(c->wm->world->bw, &desc, err);
    free(masses);
    if (!s->bc)
        return plush_diag_fail(c->diag, PLUSH_E_NOMEM, -1, "soft body", (int64_t)c->index,
                               "\"%s\": Bullet refused the soft body: %s", c->name, err[0] ? err : "no reason given");
    uint32_t(*links)[2] = NULL;
    size_t link_count = 0;
    if (!plush__world_soft_links(s, &links, &link_count))
        return world_soft_no_memory(c);
    append_links(c, (const uint32_t(*)[2])links, link_count);
    if (!s->rope)
        append_faces(c);
    float lst, ast, vst;
    const soft_value stiffness[] = {
        {"LST", sb->lst, 1, 0, 1, &lst}, {"AST", sb->ast, 1, 0, 1, &ast}, {"VST", sb->vst, 1, 0, 1, &vst}};
    char list[PLUSH_DIAG_MESSAGE] = "";
    apply_values(stiffness, 3, list, sizeof list);
    if (list[0])
        plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index,
                        "\"%s\": material stiffness outside 0..1, clamped: %s", c->name, list);
    bc->soft_set_material(s->bc, lst, ast, vst);
    plush_status st = PLUSH_OK;
    if (sb->flags & PLUSH_PMX_SOFT_BLINK)
        st = add_bending(c, (const uint32_t(*)[2])links, link_count);
    free(links);
    if (st != PLUSH_OK)
        return st;
    /* Before the clusters: generateClusters takes its cluster masses from the nodes. Pinned nodes keep
     * inverse mass 0; a body that is all pins has no mass to spread. */
    float mass = total_mass(c);
    if (free_nodes)
        bc->soft_set_total_mass(s->bc, mass);
    if (sb->flags & PLUSH_PMX_SOFT_CLUSTERS) {
        int32_t k = sb->cluster_count < 0 ? 0 : sb->cluster_count;
        bc->soft_clusters(s->bc, (size_t)k > s->node_count ? (int)s->node_count : (int)k);
    }
    if (sb->flags & PLUSH_PMX_SOFT_LINK_RANDOMIZE)
        bc->soft_randomize(s->bc);
    bc_soft_config config;
    fill_config(c, &config);
    bc->soft_set_config(s->bc, &config);
    /* kVC keeps the rest volume and kMT the rest shape: both need Bullet's pose taken at rest. Where
     * Bullet's pose matching would go non-finite, plush does it (world_soft_shape.c). */
    bool flat_nodes = config.kMT > 0 && flat(s), flat_pins = config.kMT > 0 && !flat_nodes && pins_flat(s);
    if (flat_nodes)
        plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index,
                        "\"%s\" is nearly flat (its nodes lie close to a plane or a line): Bullet's pose matching "
                        "(kMT) would blow it up, so plush keeps its shape itself",
                        c->name);
    if (flat_pins)
        plush_diag_warn(c->diag, -1, "soft body", (int64_t)c->index,
                        "\"%s\": its pinned nodes lie close to a plane or a line, which Bullet's pose matching (kMT) "
                        "turns its rest shape with and would blow up, so plush keeps its shape itself",
                        c->name);
    if (flat_nodes || flat_pins) {
        if (free_nodes &&
            !plush__world_soft_pose_init(c->wm, s, flat_nodes ? FLAT_SHAPE_MEMORY * config.kMT : config.kMT))
            return world_soft_no_memory(c);
        config.kMT = 0;
        bc->soft_set_config(s->bc, &config);
    }
    if (free_nodes && (config.kVC > 0 || config.kMT > 0))
        bc->soft_set_pose(s->bc, config.kVC > 0, config.kMT > 0);
    s->config = config;
    for (size_t k = 0; k < s->anchor_count; k++)
        bc->soft_append_anchor(s->bc, s->anchors[k].node, c->wm->bodies[s->anchors[k].body].bc);
    bc->soft_finish(s->bc);
    return PLUSH_OK;
}
