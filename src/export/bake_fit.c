/* A few bones for the bake: skinning decomposition with rigid bones (Le & Deng 2012, "Smooth Skinning
 * Decomposition with Rigid Bones"), fitted to the motion the exact bake recorded.
 *
 * What is fitted is the proxy part of each bound vertex as the exact bake moves it: p_v(f) = sum_k w_vk
 * (R_k(f)(v - c_k) + c_k + t_k) over its pseudo-bones (the binding's weights, made to sum to one). The
 * fitted bones are rigid, x -> R_j(f) x + T_j(f), and each vertex blends at most four of them with
 * non-negative weights summing to one. The two least-squares problems alternate:
 *
 * - bones, weights fixed: per frame and bone, the rotation and translation that best carry the bone's
 *   vertices to what the other bones leave of their targets (weighted Procrustes: Horn's quaternion, the
 *   largest eigenvector of a 4x4 symmetric matrix), bone after bone (each sees the others' new fit);
 * - weights, bones fixed: per vertex, a small non-negative least-squares problem over the bones its
 *   triangles' clusters and their neighbours give (sum to one as a heavy penalty row), then the four
 *   largest solved again alone.
 *
 * The bones start as clusters of cage triangles that move alike (k-means over their centroids' paths),
 * each carried at first by its triangle nearest the cluster's middle. The fit runs on a sample of frames
 * and vertices (it chooses the bone count there); the final bones are then solved at every frame.
 *
 * The count: as asked; by default, when a player's budget binds (the exact bake's keys do not fit it at the
 * tolerance), the one whose fit and thinned keys together miss least (budget_count); else the fewest that
 * meet the tolerance. */
#include "core/common.h"
#include "core/geom.h"
#include "export/bake_internal.h"
#include "plush/sys/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

_Static_assert(PLUSH_PROXY_INFLUENCES <= 4, "a row's fitted bones have four slots");

enum { SAMPLE_FRAMES = 96, PATH_FRAMES = 24, SAMPLE_ROWS = 2500, CANDIDATES = 8, ROUNDS = 3 };

typedef struct rigid {
    double r[9];   /* column-major rotation */
    double t[3];
} rigid;

typedef struct fit_state {
    const plush_scene_bake *b;
    size_t rows, bones;
    double (*rest)[3];             /* per row */
    size_t *frame_of;              /* sampled frames: indices into the recorded frames */
    size_t sampled;
    size_t *sample_rows;           /* rows the bones are fitted on */
    size_t sample_count;
    uint32_t *cluster;             /* per triangle */
    bool *fitted;                  /* per row: it has a proxy part (share > 0 and a triangle) */
    size_t *fit_rows;              /* the rows with one, in order */
    size_t fit_count;
    int32_t (*cand)[CANDIDATES];   /* per row: candidate bones, -1 unused */
    int32_t (*bone)[4];            /* per row: its bones, -1 unused */
    float (*weight)[4];
    rigid *m;                      /* sampled x bones */
    double settle;                 /* a bone solve also stops once a sweep lowers the RMS by less (0: never) */
} fit_state;

/* ---- small algebra ------------------------------------------------------------------------------------ */

static void quat_rotate(const float q[4], const double v[3], double out[3])
{
    double x = q[0], y = q[1], z = q[2], w = q[3];
    double tx = 2 * (y * v[2] - z * v[1]), ty = 2 * (z * v[0] - x * v[2]), tz = 2 * (x * v[1] - y * v[0]);
    out[0] = v[0] + w * tx + (y * tz - z * ty);
    out[1] = v[1] + w * ty + (z * tx - x * tz);
    out[2] = v[2] + w * tz + (x * ty - y * tx);
}

static void apply(const rigid *m, const double v[3], double out[3])
{
    for (int r = 0; r < 3; r++)
        out[r] = m->r[r] * v[0] + m->r[3 + r] * v[1] + m->r[6 + r] * v[2] + m->t[r];
}

/* Eigenvector of the largest eigenvalue of a symmetric 4x4 (Jacobi rotations). */
static void largest_eigenvector(double a[4][4], double out[4])
{
    double v[4][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}};
    for (int sweep = 0; sweep < 30; sweep++) {
        double off = 0;
        for (int p = 0; p < 4; p++)
            for (int q = p + 1; q < 4; q++)
                off += a[p][q] * a[p][q];
        if (off < 1e-30)
            break;
        for (int p = 0; p < 4; p++)
            for (int q = p + 1; q < 4; q++) {
                if (fabs(a[p][q]) < 1e-300)
                    continue;
                double theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
                double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1));
                double c = 1 / sqrt(t * t + 1), s = t * c;
                for (int k = 0; k < 4; k++) {
                    double akp = a[k][p], akq = a[k][q];
                    a[k][p] = c * akp - s * akq;
                    a[k][q] = s * akp + c * akq;
                }
                for (int k = 0; k < 4; k++) {
                    double apk = a[p][k], aqk = a[q][k];
                    a[p][k] = c * apk - s * aqk;
                    a[q][k] = s * apk + c * aqk;
                }
                for (int k = 0; k < 4; k++) {
                    double vkp = v[k][p], vkq = v[k][q];
                    v[k][p] = c * vkp - s * vkq;
                    v[k][q] = s * vkp + c * vkq;
                }
            }
    }
    int best = 0;
    for (int k = 1; k < 4; k++)
        if (a[k][k] > a[best][best])
            best = k;
    for (int k = 0; k < 4; k++)
        out[k] = v[k][best];
}

/* Weighted Procrustes from sums: sw = sum w, sx = sum w x, sy = sum w y, sxy[r][c] = sum w x_r y_c, and a
 * pull of weight prior toward the rotation `toward` (column-major 3x3; Horn's q^T N q plus prior
 * (q . q_toward)^2). False when there is no weight (m unchanged). */
static bool procrustes(double sw, const double sx[3], const double sy[3], const double sxy[3][3], double prior,
                       const double *toward, rigid *m)
{
    if (!(sw > 1e-12))
        return false;
    double mx[3], my[3], s[3][3];
    for (int k = 0; k < 3; k++)
        mx[k] = sx[k] / sw, my[k] = sy[k] / sw;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            s[r][c] = sxy[r][c] - sw * mx[r] * my[c];
    /* Horn: the rotation taking x to y is the unit quaternion maximising q^T N q */
    double sxx = s[0][0], sxy_ = s[0][1], sxz = s[0][2], syx = s[1][0], syy = s[1][1], syz = s[1][2], szx = s[2][0],
           szy = s[2][1], szz = s[2][2];
    double N[4][4] = {{sxx - syy - szz, sxy_ + syx, szx + sxz, syz - szy},
                      {sxy_ + syx, -sxx + syy - szz, syz + szy, szx - sxz},
                      {szx + sxz, syz + szy, -sxx - syy + szz, sxy_ - syx},
                      {syz - szy, szx - sxz, sxy_ - syx, sxx + syy + szz}};
    if (prior > 0) {
        double p[4];
        plush__mat3_to_quat(toward, 3, p);
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++)
                N[a][b] += prior * p[a] * p[b];
    }
    double q[4];
    largest_eigenvector(N, q);   /* (x, y, z, w) */
    double len = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int k = 0; k < 4; k++)
        q[k] /= len > 0 ? len : 1;
    plush__quat_to_mat3(q, m->r, 3);
    double rx[3];
    for (int r = 0; r < 3; r++)
        rx[r] = m->r[r] * mx[0] + m->r[3 + r] * mx[1] + m->r[6 + r] * mx[2];
    for (int k = 0; k < 3; k++)
        m->t[k] = my[k] - rx[k];
    return true;
}

/* ---- the targets --------------------------------------------------------------------------------------- */

/* Row's proxy part at recorded frame f as the exact bake moves it. */
static void target(const fit_state *s, size_t row, size_t f, double out[3])
{
    const plush_scene_bake *b = s->b;
    const plush_proxy_binding *pb = b->binding->binding;
    double sum = 0, acc[3] = {0, 0, 0};
    for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++) {
        int32_t t = pb->triangles[row][k];
        float w = pb->weights[row][k];
        if (t < 0 || (size_t)t >= b->triangle_count || !(w > 0))
            continue;
        const float *key = b->keys[f * b->triangle_count + (size_t)t], *c = b->centroids[t];
        double d[3] = {s->rest[row][0] - c[0], s->rest[row][1] - c[1], s->rest[row][2] - c[2]}, r[3];
        quat_rotate(key + 3, d, r);
        for (int i = 0; i < 3; i++)
            acc[i] += w * (r[i] + c[i] + key[i]);
        sum += w;
    }
    for (int i = 0; i < 3; i++)
        out[i] = sum > 0 ? acc[i] / sum : s->rest[row][i];
}

/* Triangle t's key at frame f as a rigid map of the world. */
static rigid triangle_rigid(const plush_scene_bake *b, size_t t, size_t f)
{
    const float *key = b->keys[f * b->triangle_count + t], *c = b->centroids[t];
    double q[4] = {key[3], key[4], key[5], key[6]};
    rigid m;
    plush__quat_to_mat3(q, m.r, 3);
    double cc[3] = {c[0], c[1], c[2]}, rc[3];
    for (int r = 0; r < 3; r++)
        rc[r] = m.r[r] * cc[0] + m.r[3 + r] * cc[1] + m.r[6 + r] * cc[2];
    for (int k = 0; k < 3; k++)
        m.t[k] = c[k] + key[k] - rc[k];
    return m;
}

/* ---- start: clusters of triangles that move alike ----------------------------------------------------- */

static void cluster_triangles(fit_state *s, size_t bones, uint32_t *medoid)
{
    const plush_scene_bake *b = s->b;
    size_t T = b->triangle_count, P = s->sampled < PATH_FRAMES ? s->sampled : PATH_FRAMES, dim = 3 * P;
    double *feat = malloc(T * dim * sizeof *feat), *centre = malloc(bones * dim * sizeof *centre);
    double *near = malloc(T * sizeof *near);
    for (size_t t = 0; t < T; t++)
        for (size_t p = 0; p < P; p++) {
            size_t f = s->frame_of[p * s->sampled / P];
            const float *key = b->keys[f * T + t];
            for (int k = 0; k < 3; k++)
                feat[t * dim + 3 * p + (size_t)k] = (double)b->centroids[t][k] + key[k];
        }
    /* farthest-point seeds from triangle 0: deterministic, spread over the motion */
    for (size_t t = 0; t < T; t++)
        near[t] = INFINITY;
    size_t seed = 0;
    for (size_t j = 0; j < bones; j++) {
        memcpy(centre + j * dim, feat + seed * dim, dim * sizeof *feat);
        size_t far = 0;
        for (size_t t = 0; t < T; t++) {
            double d = 0;
            for (size_t k = 0; k < dim; k++) {
                double e = feat[t * dim + k] - centre[j * dim + k];
                d += e * e;
            }
            near[t] = d < near[t] ? d : near[t];
            if (near[t] > near[far])
                far = t;
        }
        seed = far;
    }
    size_t *count = calloc(bones, sizeof *count);
    for (int round = 0; round < 10; round++) {
        for (size_t t = 0; t < T; t++) {
            double best = INFINITY;
            for (size_t j = 0; j < bones; j++) {
                double d = 0;
                for (size_t k = 0; k < dim && d < best; k++) {
                    double e = feat[t * dim + k] - centre[j * dim + k];
                    d += e * e;
                }
                if (d < best)
                    best = d, s->cluster[t] = (uint32_t)j;
            }
        }
        memset(count, 0, bones * sizeof *count);
        for (size_t t = 0; t < T; t++)
            count[s->cluster[t]]++;
        for (size_t j = 0; j < bones; j++)
            if (count[j])
                memset(centre + j * dim, 0, dim * sizeof *centre);
        for (size_t t = 0; t < T; t++)
            for (size_t k = 0; k < dim; k++)
                if (count[s->cluster[t]])
                    centre[s->cluster[t] * dim + k] += feat[t * dim + k] / (double)count[s->cluster[t]];
    }
    /* each cluster's triangle nearest its centre (an empty cluster keeps its seed's nearest) */
    double *best = malloc(bones * sizeof *best);
    for (size_t j = 0; j < bones; j++)
        best[j] = INFINITY, medoid[j] = 0;
    for (size_t t = 0; t < T; t++) {
        size_t j = s->cluster[t];
        double d = 0;
        for (size_t k = 0; k < dim; k++) {
            double e = feat[t * dim + k] - centre[j * dim + k];
            d += e * e;
        }
        if (d < best[j])
            best[j] = d, medoid[j] = (uint32_t)t;
    }
    free(best);
    free(count);
    free(near);
    free(centre);
    free(feat);
}

/* Per row: the clusters of its triangles, then those clusters' neighbours over the cage (sharing a node). */
static void candidates(fit_state *s, size_t bones)
{
    const plush_scene_bake *b = s->b;
    const plush_scene_proxy *px = &b->binding->proxy;
    size_t T = b->triangle_count;
    uint8_t *adj = calloc(bones * bones, 1);
    int32_t *node_cluster = malloc(px->node_count * sizeof *node_cluster);
    for (int pass = 0; pass < 2; pass++) {
        for (size_t n = 0; n < px->node_count; n++)
            node_cluster[n] = -1;
        /* two passes in opposite orders catch a node shared by clusters met first and last */
        for (size_t i = 0; i < T; i++) {
            size_t t = pass ? T - 1 - i : i;
            for (int k = 0; k < 3; k++) {
                uint32_t n = px->triangles[t][k];
                if (node_cluster[n] >= 0 && (uint32_t)node_cluster[n] != s->cluster[t]) {
                    adj[(size_t)node_cluster[n] * bones + s->cluster[t]] = 1;
                    adj[s->cluster[t] * bones + (size_t)node_cluster[n]] = 1;
                }
                node_cluster[n] = (int32_t)s->cluster[t];
            }
        }
    }
    const plush_proxy_binding *pb = b->binding->binding;
    for (size_t row = 0; row < s->rows; row++) {
        int32_t *c = s->cand[row];
        int n = 0;
        for (int k = 0; k < CANDIDATES; k++)
            c[k] = -1;
        for (int k = 0; k < PLUSH_PROXY_INFLUENCES && n < CANDIDATES; k++) {
            int32_t t = pb->triangles[row][k];
            if (t < 0 || (size_t)t >= T || !(pb->weights[row][k] > 0))
                continue;
            int32_t j = (int32_t)s->cluster[t];
            bool seen = false;
            for (int i = 0; i < n; i++)
                seen |= c[i] == j;
            if (!seen)
                c[n++] = j;
        }
        for (int own = 0, owned = n; own < owned && n < CANDIDATES; own++)
            for (size_t j = 0; j < bones && n < CANDIDATES; j++)
                if (adj[(size_t)c[own] * bones + j]) {
                    bool seen = false;
                    for (int i = 0; i < n; i++)
                        seen |= c[i] == (int32_t)j;
                    if (!seen)
                        c[n++] = (int32_t)j;
                }
        /* start: all on the cluster of its strongest triangle */
        s->bone[row][0] = c[0];
        s->weight[row][0] = c[0] >= 0 ? 1.0f : 0.0f;
        for (int k = 1; k < 4; k++)
            s->bone[row][k] = -1, s->weight[row][k] = 0;
    }
    free(node_cluster);
    free(adj);
}

/* ---- the two alternating problems -------------------------------------------------------------------- */

/* Bone transforms at one frame (targets given per sampled row), weights fixed: Gauss-Seidel over bones. */
/* Sweeps over the bones per solve at most; a solve stops sooner once a sweep gains under 0.1%. */
enum { MAX_SWEEPS = 24 };
/* A bone whose weighted points spread little barely steers the vertices it carries: its rotation, fitted to
 * them alone, turned freely from frame to frame (Luka's hair, 32 bones, 600 frames: 1,526 of 17,627 consecutive
 * keys more than 90 degrees apart, on 18 bones; between two frames a player that slerps put the hair up to
 * 0.138 off its chord). So each bone's fit is pulled toward the rotation the frame started it at (the frame
 * before's) with this share of the strongest bone's spread (Horn's q^T N q plus prior (q . q_before)^2): a
 * strong bone's fit hardly moves for it, a weak one stays where it was unless its points ask. The same run: 16
 * such pairs, on 12 bones, 0.035 off the chord; RMS 0.0177 -> 0.0156, worst vertex 0.196 -> 0.208, keys 68,828
 * -> 68,587; the whole dance's default bake keeps its 32 bones within 0.033 where 0.052 (the fit's RMS 0.0183
 * -> 0.0145). A thousandth held the strong bones back too: the whole dance's 32 bones then lost to the exact
 * bake (0.277, 1.3% of her height). */
#define ROTATION_PRIOR 1e-4

/* The sampled rows' predicted positions under bones m. */
static void predict(const fit_state *s, const rigid *m, double (*pred)[3])
{
    for (size_t i = 0; i < s->sample_count; i++) {
        size_t row = s->sample_rows[i];
        pred[i][0] = pred[i][1] = pred[i][2] = 0;
        for (int k = 0; k < 4; k++)
            if (s->bone[row][k] >= 0) {
                double p[3];
                apply(&m[s->bone[row][k]], s->rest[row], p);
                for (int c = 0; c < 3; c++)
                    pred[i][c] += s->weight[row][k] * p[c];
            }
    }
}

/* The bones' rigid transforms that bring the sampled rows nearest their targets, the weights fixed: one
 * bone at a time, each the exact weighted Procrustes answer with the others as they stand (block
 * coordinate descent, as Le & Deng solve it), so every update lowers the error. Updating all bones at
 * once from the same residual let overlapping bones each take the whole of it: the solve overshot and
 * diverged on frames far from the sampled ones. */
static void solve_bones(const fit_state *s, const double (*tgt)[3], rigid *m, double (*pred)[3], size_t bones)
{
    const size_t n = s->sample_count;
    /* per bone, its (sample, slot) pairs: counting sort by bone; each pair's weight and rest point copied
     * beside it, and each bone's weighted moments of its rest points (fixed while the weights are) */
    typedef struct pair_row {
        size_t i;      /* the sample */
        double w;      /* its weight on the bone */
        double x[3];   /* its rest point */
    } pair_row;
    size_t *first = calloc(bones + 1, sizeof *first), *at = malloc((bones + 1) * sizeof *at);
    pair_row *pair = malloc((4 * n + 1) * sizeof *pair);
    double(*mom)[13] = calloc(bones ? bones : 1, sizeof *mom); /* sum ww, sum ww x, sum ww x x^T */
    double(*res)[3] = malloc((n ? n : 1) * sizeof *res);      /* tgt - pred, kept as the bones move */
    if (!first || !at || !pair || !mom || !res) {
        free(first), free(at), free(pair), free(mom), free(res);
        return; /* the bones stay as they came: the nearest sampled frame's */
    }
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 4; k++)
            if (s->bone[s->sample_rows[i]][k] >= 0)
                first[s->bone[s->sample_rows[i]][k] + 1]++;
    for (size_t j = 0; j < bones; j++)
        first[j + 1] += first[j];
    memcpy(at, first, (bones + 1) * sizeof *at);
    for (size_t i = 0; i < n; i++) {
        size_t row = s->sample_rows[i];
        for (int k = 0; k < 4; k++) {
            int32_t j = s->bone[row][k];
            if (j < 0)
                continue;
            pair_row *q = &pair[at[j]++];
            q->i = i, q->w = s->weight[row][k];
            memcpy(q->x, s->rest[row], sizeof q->x);
            if (!(q->w > 1e-6))
                continue; /* moves with its bone, too light to steer it */
            double ww = q->w * q->w, *mj = mom[j];
            mj[0] += ww;
            for (int c = 0; c < 3; c++) {
                mj[1 + c] += ww * q->x[c];
                for (int d = 0; d < 3; d++)
                    mj[4 + 3 * c + d] += ww * q->x[c] * q->x[d];
            }
        }
    }
    double spread = 0;
    for (size_t j = 0; j < bones; j++) {
        const double *mj = mom[j];
        if (mj[0] > 0)
            spread = fmax(spread, mj[4] + mj[8] + mj[12] - (mj[1] * mj[1] + mj[2] * mj[2] + mj[3] * mj[3]) / mj[0]);
    }
    double prior = ROTATION_PRIOR * spread;
    rigid *start = malloc((bones ? bones : 1) * sizeof *start); /* the rotations the frame starts from */
    if (start)
        memcpy(start, m, bones * sizeof *start);
    predict(s, m, pred);
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++)
            res[i][c] = tgt[i][c] - pred[i][c];
    double before = INFINITY;
    for (int sweep = 0; sweep < MAX_SWEEPS; sweep++) {
        double err = 0;
        for (size_t i = 0; i < n; i++)
            err += res[i][0] * res[i][0] + res[i][1] * res[i][1] + res[i][2] * res[i][2];
        /* settled: a sweep gains under 0.1%, or less RMS than settle */
        if (sweep >= 2 && (!(err < before * (1 - 1e-3)) || sqrt(before / (double)n) - sqrt(err / (double)n) < s->settle))
            break;
        before = err;
        for (size_t j = 0; j < bones; j++) {
            /* each pair's target for the bone, y = (r + w p) / w with p its point under the bone as it
             * stands, weighted by w^2: the sums split into the residual's part and the moments' part */
            const double *mj = mom[j];
            if (!(mj[0] > 0))
                continue;
            double wr[3] = {0, 0, 0}, xr[3][3] = {{0}};
            for (size_t q = first[j]; q < first[j + 1]; q++) {
                const pair_row *pq = &pair[q];
                if (!(pq->w > 1e-6))
                    continue;
                const double *r = res[pq->i];
                for (int c = 0; c < 3; c++) {
                    wr[c] += pq->w * r[c];
                    for (int d = 0; d < 3; d++)
                        xr[c][d] += pq->w * pq->x[c] * r[d];
                }
            }
            const rigid old = m[j];
            double sy[3], sxy[3][3];
            /* sum ww p = R sum ww x + t sum ww; sum ww x p^T = (sum ww x x^T) R^T + (sum ww x) t^T */
            for (int c = 0; c < 3; c++)
                sy[c] = wr[c] + old.r[c] * mj[1] + old.r[3 + c] * mj[2] + old.r[6 + c] * mj[3] + old.t[c] * mj[0];
            for (int c = 0; c < 3; c++)
                for (int d = 0; d < 3; d++)
                    sxy[c][d] = xr[c][d] + mj[4 + 3 * c] * old.r[d] + mj[4 + 3 * c + 1] * old.r[3 + d] +
                                mj[4 + 3 * c + 2] * old.r[6 + d] + mj[1 + c] * old.t[d];
            if (!procrustes(mj[0], mj + 1, sy, (const double(*)[3])sxy, prior, start ? start[j].r : old.r, &m[j]))
                continue;
            /* its rows' residuals, moved with it: r -= w (M' - M) x */
            rigid delta;
            for (int k = 0; k < 9; k++)
                delta.r[k] = m[j].r[k] - old.r[k];
            for (int k = 0; k < 3; k++)
                delta.t[k] = m[j].t[k] - old.t[k];
            for (size_t q = first[j]; q < first[j + 1]; q++) {
                const pair_row *pq = &pair[q];
                double dp[3];
                apply(&delta, pq->x, dp);
                for (int c = 0; c < 3; c++)
                    res[pq->i][c] -= pq->w * dp[c];
            }
        }
    }
    for (size_t i = 0; i < n; i++) /* the predictions the bones give now, for the caller */
        for (int c = 0; c < 3; c++)
            pred[i][c] = tgt[i][c] - res[i][c];
    free(first), free(at), free(pair), free(mom), free(res), free(start);
}

/* Solves q x = 1 for the k x k symmetric q (row-major, k <= 4) by Gaussian elimination with a ridge;
 * false when singular. */
static bool solve_ones(const double *q, int k, double ridge, double *x)
{
    double a[4][5];
    for (int i = 0; i < k; i++) {
        for (int j = 0; j < k; j++)
            a[i][j] = q[i * k + j] + (i == j ? ridge : 0.0);
        a[i][k] = 1.0;
    }
    for (int c = 0; c < k; c++) {
        int p = c;
        for (int r = c + 1; r < k; r++)
            if (fabs(a[r][c]) > fabs(a[p][c]))
                p = r;
        if (!(fabs(a[p][c]) > 1e-300))
            return false;
        for (int j = 0; j <= k; j++) {
            double t = a[c][j];
            a[c][j] = a[p][j], a[p][j] = t;
        }
        for (int r = c + 1; r < k; r++) {
            double f = a[r][c] / a[c][c];
            for (int j = c; j <= k; j++)
                a[r][j] -= f * a[c][j];
        }
    }
    for (int r = k - 1; r >= 0; r--) {
        double v = a[r][k];
        for (int j = r + 1; j < k; j++)
            v -= a[r][j] * x[j];
        x[r] = v / a[r][r];
    }
    return true;
}

/* One row's weights over the sampled frames. With the weights summing to one, the miss is
 * sum_j w_j (M_j v - p): the least squares over the simplex of q = D^T D, D's columns M_j v - p. Every
 * support of at most four candidates is solved exactly (w = q_S^-1 1 / 1^T q_S^-1 1, its miss 1 / 1^T
 * q_S^-1 1); the best whose weights are all non-negative wins. A vertex has at most 8 candidates: 162
 * supports of at most 4x4. */
static void solve_weights(fit_state *s, size_t row, const double (*tgt)[3])
{
    int32_t use[CANDIDATES];
    int k = 0;
    for (int c = 0; c < CANDIDATES; c++)
        if (s->cand[row][c] >= 0)
            use[k++] = s->cand[row][c];
    if (k == 0)
        return;
    double q[CANDIDATES][CANDIDATES] = {{0}}, col[CANDIDATES][3];
    for (size_t f = 0; f < s->sampled; f++) {
        for (int i = 0; i < k; i++) {
            apply(&s->m[f * s->bones + (size_t)use[i]], s->rest[row], col[i]);
            for (int c = 0; c < 3; c++)
                col[i][c] -= tgt[f][c];
        }
        for (int i = 0; i < k; i++)
            for (int j = i; j < k; j++)
                q[i][j] += col[i][0] * col[j][0] + col[i][1] * col[j][1] + col[i][2] * col[j][2];
    }
    double trace = 0;
    for (int i = 0; i < k; i++) {
        for (int j = 0; j < i; j++)
            q[i][j] = q[j][i];
        trace += q[i][i];
    }
    double ridge = 1e-9 * trace / k + 1e-300;
    double best = INFINITY, best_w[4] = {1, 0, 0, 0};
    int32_t best_b[4] = {use[0], -1, -1, -1};
    for (unsigned mask = 1; mask < (1u << k); mask++) {
        int n = 0, idx[4];
        for (int i = 0; i < k && n <= 4; i++)
            if (mask & (1u << i)) {
                if (n < 4)
                    idx[n] = i;
                n++;
            }
        if (n > 4)
            continue;
        double qs[16], x[4];
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                qs[i * n + j] = q[idx[i]][idx[j]];
        if (!solve_ones(qs, n, ridge, x))
            continue;
        double sum = 0;
        bool ok = true;
        for (int i = 0; i < n; i++) {
            sum += x[i];
            ok &= x[i] >= 0;
        }
        if (!ok || !(sum > 0))
            continue;
        double miss = 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                miss += x[i] / sum * qs[i * n + j] * x[j] / sum;
        if (miss < best) {
            best = miss;
            for (int i = 0; i < 4; i++) {
                best_w[i] = i < n ? x[i] / sum : 0;
                best_b[i] = i < n ? use[idx[i]] : -1;
            }
        }
    }
    for (int i = 0; i < 4; i++) {
        s->bone[row][i] = best_w[i] > 0 ? best_b[i] : -1;
        s->weight[row][i] = best_w[i] > 0 ? (float)best_w[i] : 0.0f;
    }
}

/* RMS (the worst frame's) and worst distance of the rows given, at the sampled frames. */
static void measure(const fit_state *s, const size_t *rows, size_t count, double *rms, double *worst)
{
    *rms = *worst = 0;
    for (size_t f = 0; f < s->sampled; f++) {
        double sq = 0;
        for (size_t i = 0; i < count; i++) {
            size_t row = rows ? rows[i] : i;
            double t[3], p[3] = {0, 0, 0};
            target(s, row, s->frame_of[f], t);
            for (int k = 0; k < 4; k++)
                if (s->bone[row][k] >= 0) {
                    double q[3];
                    apply(&s->m[f * s->bones + (size_t)s->bone[row][k]], s->rest[row], q);
                    for (int c = 0; c < 3; c++)
                        p[c] += s->weight[row][k] * q[c];
                }
            double d2 = (p[0] - t[0]) * (p[0] - t[0]) + (p[1] - t[1]) * (p[1] - t[1]) + (p[2] - t[2]) * (p[2] - t[2]);
            sq += d2;
            *worst = sqrt(d2) > *worst ? sqrt(d2) : *worst;
        }
        double r = count ? sqrt(sq / (double)count) : 0;
        *rms = r > *rms ? r : *rms;
    }
}

/* One round of the fit, in parts: the sampled frames' bones (weights fixed), the rows' weights (bones
 * fixed). Each part touches only its own frames or rows. */
typedef struct fit_job {
    fit_state *s;
    bool last, all_rows;
} fit_job;

static void bones_part(void *ctx, size_t from, size_t to)
{
    const fit_job *j = ctx;
    fit_state *s = j->s;
    double(*tgt)[3] = malloc((s->sample_count ? s->sample_count : 1) * sizeof *tgt),
          (*pred)[3] = malloc((s->sample_count ? s->sample_count : 1) * sizeof *pred);
    for (size_t f = from; tgt && pred && f < to; f++) {
        for (size_t i = 0; i < s->sample_count; i++)
            target(s, s->sample_rows[i], s->frame_of[f], tgt[i]);
        solve_bones(s, (const double(*)[3])tgt, s->m + f * s->bones, pred, s->bones);
    }
    free(pred), free(tgt); /* out of memory: these frames keep their bones */
}

static void weights_part(void *ctx, size_t from, size_t to)
{
    const fit_job *j = ctx;
    fit_state *s = j->s;
    double(*path)[3] = malloc((s->sampled ? s->sampled : 1) * sizeof *path);
    for (size_t i = from; path && i < to; i++) {
        size_t row = j->last && j->all_rows ? s->fit_rows[i] : s->sample_rows[i];
        for (size_t f = 0; f < s->sampled; f++)
            target(s, row, s->frame_of[f], path[f]);
        solve_weights(s, row, (const double(*)[3])path);
    }
    free(path); /* out of memory: these rows keep their weights */
}

/* Fits `bones` bones on the samples; every row's weights are solved when all_rows. */
static void fit_bones(fit_state *s, size_t bones, bool all_rows)
{
    const plush_scene_bake *b = s->b;
    s->bones = bones;
    uint32_t *medoid = malloc(bones * sizeof *medoid);
    cluster_triangles(s, bones, medoid);
    candidates(s, bones);
    for (size_t f = 0; f < s->sampled; f++)
        for (size_t j = 0; j < bones; j++)
            s->m[f * bones + j] = triangle_rigid(b, medoid[j], s->frame_of[f]);
    free(medoid);
    for (int round = 0; round < ROUNDS; round++) {
        /* each sampled frame's bones, then each row's weights: independent items, two threads each */
        fit_job job = {.s = s, .last = round == ROUNDS - 1, .all_rows = all_rows};
        plush__two_halves(bones_part, &job, s->sampled, 2);
        plush__two_halves(weights_part, &job, job.last && all_rows ? s->fit_count : s->sample_count, 64);
    }
}

/* ---- every recorded frame -------------------------------------------------------------------------------- */

/* A span of recorded frames solved one after the other on v's rows, each frame's bones started from the
 * frame before's (nearer than the sampled frame before it, which the motion may have left far behind) or,
 * at a sampled frame, from its fitted bones: per frame, how far the bones miss the budget (`miss`, when
 * not NULL) and the keys (`keys`, when not NULL; rotations not yet in one hemisphere). */
typedef struct span {
    const fit_state *v;
    double tolerance;
    double *miss;
    const float (*pivot)[3];
    float (*keys)[7];  /* frame f's at (f - first) * bones */
    size_t first;
    size_t stride;     /* every stride-th frame from a sampled one on (0: every frame) */
    bool failed[2];    /* the first part (from 0) or the second ran out of memory */
} span;

static void solve_span(void *arg, size_t from, size_t to)
{
    span *p = arg;
    const fit_state *v = p->v;
    size_t N = v->bones, n = v->sample_count;
    rigid *m = malloc(N * sizeof *m);
    double(*tgt)[3] = malloc((n ? n : 1) * sizeof *tgt), (*pred)[3] = malloc((n ? n : 1) * sizeof *pred);
    if (!m || !tgt || !pred)
        p->failed[from > 0] = true;
    size_t near = 0, stride = p->stride ? p->stride : 1;
    while (near + 1 < v->sampled && v->frame_of[near + 1] <= from)
        near++;
    for (size_t f = from; p->miss && f < to; f++)
        p->miss[f] = 0; /* frames between the ones solved: not checked */
    for (size_t f = from; m && tgt && pred && f < to; f += stride) {
        size_t was = near;
        while (near + 1 < v->sampled && v->frame_of[near + 1] <= f)
            near++;
        if (f == from || near != was) {
            f = f == from ? f : v->frame_of[near]; /* a sampled frame passed over: solved from there on */
            memcpy(m, v->m + near * N, N * sizeof *m);
        }
        for (size_t i = 0; i < n; i++)
            target(v, v->sample_rows[i], f, tgt[i]);
        solve_bones(v, (const double(*)[3])tgt, m, pred, N);
        if (p->miss) {
            predict(v, m, pred);
            double sq = 0, worst = 0;
            for (size_t i = 0; i < n; i++) {
                double d2 = 0;
                for (int k = 0; k < 3; k++)
                    d2 += (pred[i][k] - tgt[i][k]) * (pred[i][k] - tgt[i][k]);
                sq += d2;
                worst = d2 > worst ? d2 : worst;
            }
            p->miss[f] = n ? fmax(sqrt(sq / (double)n) / (0.5 * p->tolerance), sqrt(worst) / (2.0 * p->tolerance)) : 0;
        }
        for (size_t j = 0; p->keys && j < N; j++) {
            float *key = p->keys[(f - p->first) * N + j];
            double q[4], rc[3], c[3] = {p->pivot[j][0], p->pivot[j][1], p->pivot[j][2]};
            plush__mat3_to_quat(m[j].r, 3, q);
            apply(&m[j], c, rc);
            for (int k = 0; k < 3; k++)
                key[k] = (float)(rc[k] - c[k]);
            for (int k = 0; k < 4; k++)
                key[3 + k] = (float)q[k];
        }
    }
    free(pred), free(tgt), free(m);
}

/* Every recorded frame, as solve_span, in two parts on two threads split at a sampled frame: a solve
 * starts over from the sampled bones there anyway, so the frames come out as one thread would make them.
 * False when out of memory. */
static bool solve_frames(const fit_state *v, double tolerance, double *miss, const float (*pivot)[3], float (*keys)[7],
                         size_t stride)
{
    size_t F = v->b->frame_count, split = v->sampled > 2 ? v->frame_of[v->sampled / 2] : F;
    span job = {.v = v, .tolerance = tolerance, .miss = miss, .pivot = pivot, .keys = keys, .stride = stride};
    plush__two_parts(solve_span, &job, split, F);
    return !job.failed[0] && !job.failed[1];
}

/* ---- the frames the samples missed ---------------------------------------------------------------------- */

/* The check: every CHECK_STRIDE-th recorded frame from each sampled one, its bones solved as the final keys
 * are (from the frame checked before) but on at most CHECK_ROWS of the sampled rows; at most ADD_FRAMES
 * frames added per check, at most CHECKS checks. A frame between two checked ones lies next to one: the
 * long test motion's drops that stop short (tests/export/test_scene_bake_long.c) are found at every other
 * frame as at every frame, and missed at every third (8 bones chosen instead of 32, 0.38% of the height at
 * the worst vertex instead of 0.15%). */
enum { CHECK_ROWS = 400, ADD_FRAMES = 24, CHECKS = 3, CHECK_STRIDE = 2 };

static int by_score(const void *a, const void *b)
{
    double x = ((const double *)a)[0], y = ((const double *)b)[0];
    return x > y ? -1 : x < y;
}

/* Frames where the bones fitted on the samples miss the budget they were chosen by (RMS half the tolerance,
 * worst twice it): the worst first, none within two frames of another, none sampled already, at most `max` into add.
 * Uniformly spread samples miss the moments a motion moves most (a drop, a turn), and the weights fitted
 * without them do not carry the bones there. Returns how many; 0 when every frame checked is within. */
static size_t missed_frames(const fit_state *s, double tolerance, size_t *add, size_t max)
{
    size_t F = s->b->frame_count, found = 0, bad = 0;
    fit_state v = *s;
    v.sample_count = s->sample_count < CHECK_ROWS ? s->sample_count : CHECK_ROWS;
    size_t *rows = malloc((v.sample_count ? v.sample_count : 1) * sizeof *rows);
    double *miss = malloc(F * sizeof *miss), (*score)[2] = malloc(F * sizeof *score);
    bool *sampled = calloc(F, sizeof *sampled);
    if (!rows || !miss || !score || !sampled)
        goto done; /* nothing added: the fit stands as it is */
    for (size_t i = 0; i < v.sample_count; i++)
        rows[i] = s->sample_rows[i * s->sample_count / v.sample_count];
    v.sample_rows = rows;
    if (!solve_frames(&v, tolerance, miss, NULL, NULL, CHECK_STRIDE))
        goto done;
    for (size_t i = 0; i < s->sampled; i++)
        sampled[s->frame_of[i]] = true;
    for (size_t f = 0; f < F; f++)
        if (miss[f] > 1 && !sampled[f]) {
            score[bad][0] = miss[f];
            score[bad++][1] = (double)f;
        }
    qsort(score, bad, sizeof *score, by_score);
    for (size_t i = 0; i < bad && found < max; i++) {
        size_t f = (size_t)score[i][1];
        bool apart = true;
        for (size_t j = 0; apart && j < found; j++)
            apart = (f > add[j] ? f - add[j] : add[j] - f) > 2;
        if (apart)
            add[found++] = f;
    }
done:
    free(sampled), free(score), free(miss), free(rows);
    return found;
}

static int by_frame(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* The frames added to the samples, kept in order; false when out of memory (the samples stay as they were). */
static bool add_frames(fit_state *s, const size_t *add, size_t n, size_t triangles)
{
    size_t *frames = realloc(s->frame_of, (s->sampled + n) * sizeof *frames);
    if (!frames)
        return false;
    s->frame_of = frames;
    rigid *m = realloc(s->m, (s->sampled + n) * triangles * sizeof *m);
    if (!m)
        return false;
    s->m = m;
    memcpy(s->frame_of + s->sampled, add, n * sizeof *add);
    s->sampled += n;
    qsort(s->frame_of, s->sampled, sizeof *s->frame_of, by_frame);
    return true;
}

/* ---- the final bones at every other frame -------------------------------------------------------------- */

/* The final bones against the exact bake at every other recorded frame (as the check goes: a frame between
 * two measured ones lies next to one), over every fitted row: the RMS of the worst frame and the worst
 * vertex. The samples and the check see a few frames and rows: on the whole long dance Luka's hair's 32
 * bones missed by 0.169 there and by 0.44 (2.1% of her height, a strand's vertices off the samples) at
 * frames between them, the cape's 128 bones by 0.082 and 0.32. Each frame's triangles and bones are made
 * rigid maps once, for every row. */
typedef struct every_job {
    const fit_state *s;
    const plush__bake_fit *fit;
    double rms[2], worst[2]; /* per part: the first (from frame 0) and the second */
    double *row_worst[2];    /* per part, when not NULL: each fitted row's (fit_rows order) worst distance */
    bool failed[2];
} every_job;

static void every_part(void *ctx, size_t from, size_t to)
{
    every_job *j = ctx;
    const fit_state *s = j->s;
    const plush__bake_fit *fit = j->fit;
    const plush_proxy_binding *pb = s->b->binding->binding;
    size_t T = s->b->triangle_count, N = s->bones;
    int part = from > 0;
    rigid *tri = malloc(T * sizeof *tri), *bone = malloc((N ? N : 1) * sizeof *bone);
    if (!tri || !bone)
        j->failed[part] = true;
    for (size_t f = from + from % CHECK_STRIDE; tri && bone && f < to; f += CHECK_STRIDE) {
        for (size_t t = 0; t < T; t++)
            tri[t] = triangle_rigid(s->b, t, f);
        for (size_t k = 0; k < N; k++) {
            const float *key = fit->keys[f * N + k], *c = fit->pivot[k];
            double q[4] = {key[3], key[4], key[5], key[6]};
            plush__quat_to_mat3(q, bone[k].r, 3);
            const double *m = bone[k].r;
            for (int r = 0; r < 3; r++)
                bone[k].t[r] = c[r] + key[r] - (m[r] * c[0] + m[3 + r] * c[1] + m[6 + r] * c[2]);
        }
        double sq = 0;
        for (size_t i = 0; i < s->fit_count; i++) {
            size_t row = s->fit_rows[i];
            double t[3] = {0, 0, 0}, p[3] = {0, 0, 0}, q[3], sum = 0;
            for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++) { /* the target, as target() makes it */
                int32_t tt = pb->triangles[row][k];
                float w = pb->weights[row][k];
                if (tt < 0 || (size_t)tt >= T || !(w > 0))
                    continue;
                apply(&tri[tt], s->rest[row], q);
                for (int e = 0; e < 3; e++)
                    t[e] += w * q[e];
                sum += w;
            }
            for (int e = 0; e < 3; e++)
                t[e] = sum > 0 ? t[e] / sum : s->rest[row][e];
            for (int k = 0; k < 4; k++)
                if (s->bone[row][k] >= 0) {
                    apply(&bone[s->bone[row][k]], s->rest[row], q);
                    for (int e = 0; e < 3; e++)
                        p[e] += s->weight[row][k] * q[e];
                }
            double d2 = (p[0] - t[0]) * (p[0] - t[0]) + (p[1] - t[1]) * (p[1] - t[1]) + (p[2] - t[2]) * (p[2] - t[2]);
            sq += d2;
            j->worst[part] = fmax(j->worst[part], sqrt(d2));
            if (j->row_worst[part])
                j->row_worst[part][i] = fmax(j->row_worst[part][i], sqrt(d2));
        }
        j->rms[part] = fmax(j->rms[part], s->fit_count ? sqrt(sq / (double)s->fit_count) : 0);
    }
    free(tri), free(bone);
}

/* False when out of memory. row_worst (fit_count entries, or NULL): each fitted row's worst distance. */
static bool measure_every_frame(const fit_state *s, const plush__bake_fit *fit, double *rms, double *worst,
                                double *row_worst)
{
    every_job job = {.s = s, .fit = fit};
    double *second = row_worst ? calloc(s->fit_count ? s->fit_count : 1, sizeof *second) : NULL;
    if (row_worst && !second)
        return false;
    if (row_worst) {
        memset(row_worst, 0, s->fit_count * sizeof *row_worst);
        job.row_worst[0] = row_worst, job.row_worst[1] = second;
    }
    plush__two_halves(every_part, &job, s->b->frame_count, 2);
    *rms = fmax(job.rms[0], job.rms[1]);
    *worst = fmax(job.worst[0], job.worst[1]);
    for (size_t i = 0; second && i < s->fit_count; i++)
        row_worst[i] = fmax(row_worst[i], second[i]);
    free(second);
    return !job.failed[0] && !job.failed[1];
}

/* ---- the rows the bones do not follow ------------------------------------------------------------------ */

/* A few rows the fitted bones miss by more than `limit` somewhere (a thin strand that moves on its own,
 * which the sampled rows did not hold) are carried by the exact bake's pseudo-bones of their triangles
 * instead, appended after the fitted bones: bones N.. are those triangles, pivoted at their centroids and
 * keyed as the exact bake keys them, and such a row blends them with the binding's weights, so it moves
 * exactly as the exact bake moves it. The worst rows first, as long as their triangles number at most `most`
 * (beyond that the bones are no longer few); returns how many were added (0: none needed or carried, or out
 * of memory: fit unchanged). */
static size_t carry_missed_rows(fit_state *s, plush__bake_fit *fit, const double *row_worst, double limit,
                                size_t most)
{
    const plush_scene_bake *b = s->b;
    const plush_proxy_binding *pb = b->binding->binding;
    size_t T = b->triangle_count, N = fit->bones, F = b->frame_count, added = 0;
    int32_t *slot = malloc(T * sizeof *slot);
    bool *carry = calloc(s->fit_count ? s->fit_count : 1, sizeof *carry);
    double(*order)[2] = malloc((s->fit_count ? s->fit_count : 1) * sizeof *order);
    if (!slot || !carry || !order) {
        free(slot), free(carry), free(order);
        return 0;
    }
    for (size_t t = 0; t < T; t++)
        slot[t] = -1;
    /* the worst missed rows first, as long as their triangles keep within `most` */
    size_t over = 0;
    for (size_t i = 0; i < s->fit_count; i++)
        if (row_worst[i] > limit)
            order[over][0] = row_worst[i], order[over++][1] = (double)i;
    qsort(order, over, sizeof *order, by_score);
    for (size_t o = 0; o < over; o++) {
        size_t i = (size_t)order[o][1], row = s->fit_rows[i], more = 0;
        for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++) {
            int32_t t = pb->triangles[row][k];
            more += t >= 0 && (size_t)t < T && pb->weights[row][k] > 0 && slot[t] < 0;
        }
        if (added + more > most)
            break;
        carry[i] = true;
        for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++) {
            int32_t t = pb->triangles[row][k];
            if (t >= 0 && (size_t)t < T && pb->weights[row][k] > 0 && slot[t] < 0)
                slot[t] = (int32_t)(N + added++);
        }
    }
    free(order);
    float(*pivot)[3] = NULL, (*keys)[7] = NULL;
    double *reach = NULL;
    if (added) {
        pivot = realloc(fit->pivot, (N + added) * sizeof *pivot);
        fit->pivot = pivot ? pivot : fit->pivot;
        reach = pivot ? realloc(fit->reach, (N + added) * sizeof *reach) : NULL;
        fit->reach = reach ? reach : fit->reach;
        keys = reach ? malloc(F * (N + added) * sizeof *keys) : NULL;
    }
    if (!keys) {
        free(slot), free(carry);
        return 0;
    }
    for (size_t t = 0; t < T; t++)
        if (slot[t] >= 0) {
            memcpy(pivot[slot[t]], b->centroids[t], sizeof *pivot);
            reach[slot[t]] = 0;
        }
    /* the fitted bones' keys as they were, then the triangles' (a pseudo-bone's key is its centroid's
     * translation and its rotation: a fitted key's form with the centroid as pivot), one hemisphere along each */
    for (size_t f = 0; f < F; f++) {
        memcpy(keys[f * (N + added)], fit->keys[f * N], N * sizeof *keys);
        for (size_t t = 0; t < T; t++)
            if (slot[t] >= 0) {
                float *key = keys[f * (N + added) + (size_t)slot[t]];
                memcpy(key, b->keys[f * T + t], sizeof *keys);
                const float *before = f ? keys[(f - 1) * (N + added) + (size_t)slot[t]] : NULL;
                float dot = before ? key[3] * before[3] + key[4] * before[4] + key[5] * before[5] + key[6] * before[6]
                                   : key[6];
                for (int k = 3; dot < 0 && k < 7; k++)
                    key[k] = -key[k];
            }
    }
    free(fit->keys);
    fit->keys = keys;
    for (size_t i = 0; i < s->fit_count; i++) {
        if (!carry[i])
            continue;
        size_t row = s->fit_rows[i];
        double sum = 0;
        for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++) {
            int32_t t = pb->triangles[row][k];
            bool used = t >= 0 && (size_t)t < T && pb->weights[row][k] > 0;
            s->bone[row][k] = used ? slot[t] : -1;
            s->weight[row][k] = used ? pb->weights[row][k] : 0.0f;
            sum += s->weight[row][k];
        }
        for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++) {
            s->weight[row][k] = (float)(s->weight[row][k] / sum);
            if (s->bone[row][k] < 0)
                continue;
            double d = 0;
            for (int c = 0; c < 3; c++)
                d += (s->rest[row][c] - pivot[s->bone[row][k]][c]) * (s->rest[row][c] - pivot[s->bone[row][k]][c]);
            reach[s->bone[row][k]] = fmax(reach[s->bone[row][k]], sqrt(d));
        }
    }
    fit->bones = s->bones = N + added;
    free(slot), free(carry);
    return added;
}

/* ---- the count the budget gives ------------------------------------------------------------------------- */

/* The grid the budget's count is read off: at keys' tolerances tolerance times 1, 2, 4, ... (n points, up
 * to the first where the exact bake's keys fit), the mean keys of a pseudo-bone's track and the physics'. */
enum { GRID = 16, RATE_TRACKS = 48, WINDOW = 200 };
/* What a count costs: the fit solves each bone at every recorded frame over the sampled rows (at most
 * SAMPLE_ROWS), so its time grows with bones x sampled rows x frames: about 2.2e-8 s each on the two cores
 * here (Luka's hair, 32 bones on 2,500 of 2,995 rows over 7,404 frames: 12.4 s; the cape's 128 bones: about
 * 57 s, a count then given up). A count past FIT_WORK (about 30 s here) is not tried unless asked for
 * (--bake-bones): on 7,400 frames 64 bones at most. */
#define FIT_WORK 1.3e9
static bool within_work(const fit_state *s, size_t bones)
{
    double rows = (double)(s->fit_count < SAMPLE_ROWS ? s->fit_count : SAMPLE_ROWS);
    return (double)bones * rows * (double)s->b->frame_count <= FIT_WORK;
}

typedef struct key_grid {
    double tolerance, per_track[GRID];
    size_t physics[GRID], n;
} key_grid;

/* The least keys' tolerance on the grid's span at which keys[] (per grid point) keep within room, straight
 * between its points on log scales; 0 when even its last point does not. */
static double tolerance_for(const key_grid *g, const double *keys, size_t room)
{
    for (size_t i = 0; i < g->n; i++) {
        if (keys[i] > (double)room)
            continue;
        if (i == 0)
            return g->tolerance;
        double before = keys[i - 1], share = log(before / (double)room) / log(before / fmax(keys[i], 1.0));
        return g->tolerance * pow(2.0, (double)(i - 1) + (share > 0 && share < 1 ? share : 1.0));
    }
    return 0;
}

/* Each bone's pivot (its rows' weighted rest mean) and reach (the farthest of them from it), over rows[0 .. n)
 * (rows NULL: rows 0 .. n); pivot and reach have the bones' slots, reach zeroed. False when out of memory. */
static bool pivots_and_reaches(const fit_state *s, const size_t *rows, size_t n, float (*pivot)[3], double *reach)
{
    size_t N = s->bones;
    double *wsum = calloc(N ? N : 1, sizeof *wsum), (*acc)[3] = calloc(N ? N : 1, sizeof *acc);
    bool ok = wsum && acc;
    for (size_t i = 0; ok && i < n; i++) {
        size_t row = rows ? rows[i] : i;
        for (int k = 0; k < 4; k++)
            if (s->bone[row][k] >= 0) {
                size_t j = (size_t)s->bone[row][k];
                wsum[j] += s->weight[row][k];
                for (int c = 0; c < 3; c++)
                    acc[j][c] += s->weight[row][k] * s->rest[row][c];
            }
    }
    for (size_t j = 0; ok && j < N; j++)
        for (int c = 0; c < 3; c++)
            pivot[j][c] = (float)(wsum[j] > 0 ? acc[j][c] / wsum[j] : 0.0);
    for (size_t i = 0; ok && i < n; i++) {
        size_t row = rows ? rows[i] : i;
        for (int k = 0; k < 4; k++)
            if (s->bone[row][k] >= 0) {
                size_t j = (size_t)s->bone[row][k];
                double d = 0;
                for (int c = 0; c < 3; c++)
                    d += (s->rest[row][c] - pivot[j][c]) * (s->rest[row][c] - pivot[j][c]);
                reach[j] = fmax(reach[j], sqrt(d));
            }
    }
    free(wsum);
    free(acc);
    return ok;
}

/* The keys the fitted bones' tracks need against a pseudo-bone's, per grid point, into ratio: measured on
 * WINDOW recorded frames from the middle of the motion, the bones solved there as final_keys solves them
 * (the fitted tracks carry what a per-frame solve leaves in them, which a pseudo-bone's has not). */
static bool track_ratio(fit_state *s, const key_grid *g, double *ratio)
{
    const plush_scene_bake *b = s->b;
    size_t N = s->bones, T = b->triangle_count, F = b->frame_count, W = F < WINDOW ? F : WINDOW, w0 = (F - W) / 2;
    float(*pivot)[3] = calloc(N, sizeof *pivot), (*keys)[7] = malloc(W * N * sizeof *keys);
    double *reach = calloc(N, sizeof *reach);
    bool *keep = malloc(W * sizeof *keep);
    uint8_t(*curves)[4][4] = malloc(W * sizeof *curves);
    bool ok = pivot && keys && reach && keep && curves;
    /* the pivots and reaches as final_keys places them, over the sampled rows */
    ok = ok && pivots_and_reaches(s, s->sample_rows, s->sample_count, pivot, reach);
    if (ok) {
        span job = {.v = s, .pivot = (const float(*)[3])pivot, .keys = keys, .first = w0, .stride = 1};
        solve_span(&job, w0, w0 + W);
        ok = !job.failed[0] && !job.failed[1];
    }
    for (size_t f = 1; ok && f < W; f++) /* one hemisphere along each track */
        for (size_t j = 0; j < N; j++) {
            float *key = keys[f * N + j];
            const float *before = keys[(f - 1) * N + j];
            float dot = key[3] * before[3] + key[4] * before[4] + key[5] * before[5] + key[6] * before[6];
            for (int k = 3; dot < 0 && k < 7; k++)
                key[k] = -key[k];
        }
    size_t step = T > RATE_TRACKS ? T / RATE_TRACKS : 1;
    for (size_t i = 0; ok && i < g->n; i++) {
        double t = g->tolerance * pow(2.0, (double)i), fitted = 0, pseudo = 0, used = 0;
        for (size_t j = 0; j < N; j++)
            fitted += (double)plush__bake_reduce_track((const float(*)[7])keys + j, N, b->frames + w0, W, reach[j], t,
                                                       keep, curves);
        for (size_t k = step / 2; k < T; k += step, used++)
            pseudo += (double)plush__bake_reduce_track((const float(*)[7])b->keys + w0 * T + k, T, b->frames + w0, W,
                                                       b->reach[k], t, keep, curves);
        ratio[i] = pseudo > 0 ? (fitted / (double)N) / (pseudo / used) : 1.0;
    }
    free(pivot), free(keys), free(reach), free(keep), free(curves);
    return ok;
}

/* With the budget first (the default), a player's budget rather than the tolerance decides the error: when
 * the exact bake's keys do not fit it at the tolerance, every track's keys are thinned until they do, and
 * fewer bones leave each more keys. So each count of 8, 16, ... below the cage's triangles is fitted on the
 * samples and judged by its worst vertex there plus the keys' tolerance at which its tracks and the physics
 * fit the budget (the whole motion's pseudo-bone tracks, measured on RATE_TRACKS of them, times what a
 * fitted track needs against one on a window: track_ratio); the count that misses least wins (counts are
 * tried up from 8 until one misses more than the best before it), when it misses less than the exact
 * bake's keys alone. Returns 0 when the budget does not bind (the tolerance
 * decides), the triangle count when no fit wins, else the count, with *check the tolerance the frames are
 * checked against (half the error the count was judged by), *keys_error its keys' share of that error and
 * *exact_error the exact bake's. */
static size_t budget_count(fit_state *s, double tolerance, double *check, double *keys_error, double *exact_error)
{
    const plush_scene_bake *b = s->b;
    size_t T = b->triangle_count, room = plush__bake_track_room(b);
    if (room == SIZE_MAX)
        return 0;
    key_grid g = {.tolerance = tolerance};
    double t = tolerance, keys[GRID], ratio[GRID];
    for (; g.n < GRID; g.n++, t *= 2) {
        g.physics[g.n] = plush__bake_need_sampled(b, t, RATE_TRACKS, &g.per_track[g.n]);
        if (g.physics[g.n] == SIZE_MAX)
            return 0;
        if ((double)T * g.per_track[g.n] + (double)g.physics[g.n] <= (double)room) {
            g.n++;
            break;
        }
    }
    if (g.n == 1)
        return 0; /* the exact bake keeps within the budget at the tolerance */
    for (size_t i = 0; i < g.n; i++)
        keys[i] = (double)T * g.per_track[i] + (double)g.physics[i];
    double exact = tolerance_for(&g, keys, room);
    if (!(exact > 0))
        return T; /* not even the grid's last fits: none is known to do better than the exact bake */
    size_t best = T;
    double best_error = exact, best_keys = 0;
    for (size_t bones = 8; bones < T && within_work(s, bones); bones *= 2) {
        for (size_t i = 0; i < g.n; i++)
            keys[i] = (double)bones * g.per_track[i] + (double)g.physics[i];
        if (!(tolerance_for(&g, keys, room) < best_error))
            break; /* more bones only need more keys, even at a pseudo-bone's rate */
        fit_bones(s, bones, false);
        double rms, worst;
        measure(s, s->sample_rows, s->sample_count, &rms, &worst);
        if (!track_ratio(s, &g, ratio))
            break;
        for (size_t i = 0; i < g.n; i++)
            keys[i] = (double)bones * g.per_track[i] * ratio[i] + (double)g.physics[i];
        double need = tolerance_for(&g, keys, room);
        need = need > 0 ? fmax(need, 0.5 * tolerance) : INFINITY;
        if (worst + need < best_error)
            best = bones, best_error = worst + need, best_keys = need;
        else if (best < T)
            break; /* past the least: more bones' keys grow faster than their fit gains */
    }
    *check = best < T ? fmax(tolerance, 0.5 * best_error) : tolerance;
    *keys_error = best < T ? best_keys : 0;
    *exact_error = exact;
    return best;
}

/* ---- the fit as the bake holds it --------------------------------------------------------------------- */

void plush__bake_fit_free(plush__bake_fit *fit)
{
    if (!fit)
        return;
    free(fit->pivot);
    free(fit->keys);
    free(fit->bone);
    free(fit->weight);
    free(fit->reach);
    free(fit);
}

/* Every recorded frame's bone keys with the final weights, the pivots and reaches. */
static const double SETTLE = 0.03;
static bool final_keys(fit_state *s, double tolerance, plush__bake_fit *fit)
{
    const plush_scene_bake *b = s->b;
    size_t N = s->bones, F = b->frame_count;
    fit->pivot = calloc(N, sizeof *fit->pivot);
    fit->reach = calloc(N, sizeof *fit->reach);
    fit->keys = malloc(F * N * sizeof *fit->keys);
    bool ok = fit->pivot && fit->reach && fit->keys && pivots_and_reaches(s, NULL, s->rows, fit->pivot, fit->reach);
    /* every frame's bones stop gaining once a sweep lowers their RMS by less than SETTLE of the tolerance:
     * less than the keys can hold anyway */
    fit_state v = *s;
    v.settle = tolerance > 0 ? SETTLE * tolerance : 0;
    ok = ok && solve_frames(&v, 0, NULL, (const float(*)[3])fit->pivot, fit->keys, 1);
    /* one hemisphere along each track, so interpolation takes the short way */
    for (size_t f = 0; ok && f < F; f++)
        for (size_t j = 0; j < N; j++) {
            float *key = fit->keys[f * N + j];
            const float *before = f ? fit->keys[(f - 1) * N + j] : NULL;
            float dot = before ? key[3] * before[3] + key[4] * before[4] + key[5] * before[5] + key[6] * before[6] : key[6];
            for (int k = 3; dot < 0 && k < 7; k++)
                key[k] = -key[k];
        }
    return ok;
}

plush_status plush__bake_fit_run(const plush_scene_bake *b, size_t want, double tolerance, plush__bake_fit **out,
                                 plush_diag *diag)
{
    *out = NULL;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const plush_scene_binding *sb = b->binding;
    size_t rows = sb->vertex_count, T = b->triangle_count, F = b->frame_count;
    if (!rows || !F || T < 2)
        return PLUSH_OK;   /* nothing to gain: the exact bake */
    fit_state s = {.b = b, .rows = rows};
    s.sampled = F < SAMPLE_FRAMES ? F : SAMPLE_FRAMES;
    s.sample_count = rows < SAMPLE_ROWS ? rows : SAMPLE_ROWS;
    s.rest = malloc(rows * sizeof *s.rest);
    s.frame_of = malloc(s.sampled * sizeof *s.frame_of);
    s.sample_rows = malloc(s.sample_count * sizeof *s.sample_rows);
    s.cluster = malloc(T * sizeof *s.cluster);
    s.cand = malloc(rows * sizeof *s.cand);
    s.fit_rows = malloc(rows * sizeof *s.fit_rows);
    s.bone = malloc(rows * sizeof *s.bone);
    s.weight = malloc(rows * sizeof *s.weight);
    s.m = malloc(s.sampled * T * sizeof *s.m);
    plush__bake_fit *fit = calloc(1, sizeof *fit);
    if (!s.rest || !s.frame_of || !s.sample_rows || !s.cluster || !s.cand || !s.fit_rows || !s.bone || !s.weight || !s.m || !fit) {
        free(s.rest), free(s.frame_of), free(s.sample_rows), free(s.cluster), free(s.cand), free(s.fit_rows), free(s.bone);
        free(s.weight), free(s.m), free(fit);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory fitting the bake's bones");
    }
    for (size_t row = 0; row < rows; row++)
        for (int c = 0; c < 3; c++)
            s.rest[row][c] = sb->model->vertices[sb->vertices[row]].position[c];
    for (size_t f = 0; f < s.sampled; f++)
        s.frame_of[f] = s.sampled > 1 ? f * (F - 1) / (s.sampled - 1) : 0;
    /* rows on bone skinning alone (share 0, or no triangle) keep their bones: nothing to fit */
    const plush_proxy_binding *pb = sb->binding;
    for (size_t row = 0; row < rows; row++) {
        bool part = !pb->proxy_share || pb->proxy_share[row] > 0;
        bool any = false;
        for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++)
            any |= pb->triangles[row][k] >= 0 && (size_t)pb->triangles[row][k] < T && pb->weights[row][k] > 0;
        if (part && any)
            s.fit_rows[s.fit_count++] = row;
    }
    if (s.sample_count > s.fit_count)
        s.sample_count = s.fit_count;
    for (size_t i = 0; i < s.sample_count; i++)
        s.sample_rows[i] = s.fit_rows[i * s.fit_count / s.sample_count];

    /* the bone count: as asked; when the budget binds, the count whose fit and keys together miss least
     * (budget_count); else the fewest of 8, 16, 32, ... whose fit stays within half the tolerance (RMS) and
     * twice it (worst) on the samples, which leaves the keys the other half */
    size_t bones = want ? want : 8, asked = want;
    double check_tolerance = tolerance, keys_error = 0, exact_error = 0, worst = 0;
    bool budget = false;
    if (!want && b->budget_first && tolerance > 0) {
        size_t chosen = budget_count(&s, tolerance, &check_tolerance, &keys_error, &exact_error);
        if (chosen) /* the budget binds: chosen, or T when no fit beats the exact bake's keys */
            bones = chosen, want = chosen < T ? chosen : 0, budget = true;
    }
    for (int check = 0; bones < T; check++) {
        /* the fewest of 8, 16, 32, ... that fit the samples (from the count the last check chose) */
        for (; bones < T; bones *= 2) {
            if (!want && !within_work(&s, bones)) {
                bones = T;
                break;
            }
            fit_bones(&s, bones, false);
            double rms;
            measure(&s, s.sample_rows, s.sample_count, &rms, &worst);
            if (want || (rms <= 0.5 * tolerance && worst <= 2.0 * tolerance))
                break;
        }
        size_t add[ADD_FRAMES], n = 0;
        if (bones >= T || check == CHECKS || !(n = missed_frames(&s, check_tolerance, add, ADD_FRAMES)) ||
            !add_frames(&s, add, n, T))
            break;
    }
    /* a count the budget chose stays only if, with the frames the check added (the moments the samples
     * missed), its fit and keys still miss less than the exact bake's keys */
    if (budget && bones < T && !(worst + keys_error < exact_error))
        bones = T;
    if (bones >= T) {
        /* no fewer bones fit: the exact bake */
        free(s.rest), free(s.frame_of), free(s.sample_rows), free(s.cluster), free(s.cand), free(s.fit_rows), free(s.bone);
        free(s.weight), free(s.m), free(fit);
        return PLUSH_OK;
    }
    fit_bones(&s, bones, true);
    fit->bones = bones;
    double *row_worst = malloc((s.fit_count ? s.fit_count : 1) * sizeof *row_worst);
    bool ok = row_worst && final_keys(&s, tolerance, fit) &&
              measure_every_frame(&s, fit, &fit->rms, &fit->worst, row_worst);
    /* a count chosen here (not asked for) stays only if its bones, solved at every recorded frame, keep at
     * every other one what they were chosen by on the samples: the worst vertex within 2.5 times the
     * tolerance (the samples' twice and the keys' half), or with the budget, their worst vertex and keys
     * missing less than the exact bake's keys; else the exact bake. The samples see a few frames and rows: on
     * the whole long dance the cape's (pmx_tailor 04) 128 bones, within 0.082 there, missed by 0.32 at others
     * (1.6% of its height, its replay over 1% at 562 frames; its exact bake, within 0.112, replays within
     * 0.49%); Luka's hair's 32 bones, within 0.169 there, by 0.44 at one strand's vertices (2.1%, 348 frames
     * over 1%), where its exact bake, within 0.277, replays within 1.59% at the worst vertex but over 1% at
     * 4,169 frames and over 0.2% RMS at 1,063, where the bones' RMS stayed within 0.032%. */
    bool wins = budget ? fit->worst + keys_error < exact_error : fit->worst <= 2.5 * tolerance;
    /* A count that loses there only at a few rows (a strand the samples did not hold: Luka's hair's 32 bones
     * miss by 0.44 at one strand's vertices, within 0.17 everywhere else) keeps its bones with those rows on
     * their exact pseudo-bones, the worst first, on at most as many more tracks as there are bones: the rows the bones miss
     * by more than the samples' bar (twice the tolerance) or, with the budget, by more than four fifths of
     * the room the keys leave under the exact bake's error (so that the bones and keys still miss less). */
    if (ok && !asked && !wins) {
        double limit = budget ? 0.8 * (exact_error - keys_error) : 2.0 * tolerance;
        if (carry_missed_rows(&s, fit, row_worst, limit, bones)) {
            ok = measure_every_frame(&s, fit, &fit->rms, &fit->worst, NULL);
            fit->carried = fit->bones - bones;
            /* the budget's keys now go to more tracks: the keys' error taken as growing with their count */
            wins = budget ? fit->worst + keys_error * (double)fit->bones / (double)bones < exact_error
                          : fit->worst <= 2.5 * tolerance;
        }
    }
    free(row_worst);
    bool keep = ok && (asked || wins);
    if (keep) {
        fit->bone = s.bone, fit->weight = s.weight;
        s.bone = NULL, s.weight = NULL;
    }
    free(s.rest), free(s.frame_of), free(s.sample_rows), free(s.cluster), free(s.cand), free(s.fit_rows), free(s.bone);
    free(s.weight), free(s.m);
    if (!keep)
        plush__bake_fit_free(fit);
    if (!ok)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory fitting the bake's bones");
    if (!keep)
        return PLUSH_OK; /* the exact bake */
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fit->seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    *out = fit;
    return PLUSH_OK;
}
