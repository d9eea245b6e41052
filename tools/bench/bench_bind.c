/* make bench: plush_proxy_bind speed, Embree BVH against the brute-force path, one thread.
 *
 * Proxy: an icosphere of 1280 or 5120 triangles ("1k and 5k"). Points: 100k on and around a
 * noisy sphere, in latitude-longitude order like a real mesh's vertices, and the same points shuffled
 * (no help from the previous vertex's answer). The BVH time is a whole plush_proxy_bind call (Embree
 * load and build included) over all 100k; the brute force would take long on the large proxy, so it
 * binds every tenth point (10k, spread like the whole) and is scaled by 10, and the two answers on those
 * 10k are compared. Every
 * figure is the best of three runs (the machine may be shared). ns/tri: brute-force time per
 * point-triangle distance. 
 * Targets: at least 30x the brute force, at least 1M vertices/s. */
#define _GNU_SOURCE
#include "plush/proxy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { POINTS = 100000, BRUTE_POINTS = 10000 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static double rnd(void)   /* xorshift64*, [0, 1) */
{
    rng_state ^= rng_state >> 12, rng_state ^= rng_state << 25, rng_state ^= rng_state >> 27;
    return (double)((rng_state * 0x2545f4914f6cdd1du) >> 11) / 9007199254740992.0;
}

typedef struct sphere {
    float (*nodes)[3];
    uint32_t (*tris)[3];
    size_t node_count, tri_count;
} sphere;

/* Shared edges get one midpoint node: an open-addressed table from the edge (as a 64-bit key) to it. */
typedef struct edge_table {
    uint64_t *key;
    uint32_t *node;
    size_t size;
} edge_table;

static uint32_t midpoint(sphere *s, edge_table *e, uint32_t a, uint32_t b)
{
    uint64_t key = a < b ? ((uint64_t)a << 32 | b) : ((uint64_t)b << 32 | a);
    size_t h = (size_t)((key * 0x9e3779b97f4a7c15u) >> 40) % e->size;
    while (e->key[h] != UINT64_MAX && e->key[h] != key)
        h = (h + 1) % e->size;
    if (e->key[h] == key)
        return e->node[h];
    double m[3], len = 0;
    for (int k = 0; k < 3; k++)
        m[k] = ((double)s->nodes[a][k] + s->nodes[b][k]) / 2, len += m[k] * m[k];
    for (int k = 0; k < 3; k++)
        s->nodes[s->node_count][k] = (float)(m[k] / sqrt(len));
    e->key[h] = key;
    e->node[h] = (uint32_t)s->node_count;
    return (uint32_t)s->node_count++;
}

static sphere icosphere(int levels)
{
    const double t = (1 + sqrt(5.0)) / 2;
    const double v[12][3] = {{-1, t, 0}, {1, t, 0}, {-1, -t, 0}, {1, -t, 0}, {0, -1, t}, {0, 1, t},
                             {0, -1, -t}, {0, 1, -t}, {t, 0, -1}, {t, 0, 1}, {-t, 0, -1}, {-t, 0, 1}};
    const uint32_t f[20][3] = {{0, 11, 5}, {0, 5, 1}, {0, 1, 7}, {0, 7, 10}, {0, 10, 11}, {1, 5, 9}, {5, 11, 4},
                               {11, 10, 2}, {10, 7, 6}, {7, 1, 8}, {3, 9, 4}, {3, 4, 2}, {3, 2, 6}, {3, 6, 8},
                               {3, 8, 9}, {4, 9, 5}, {2, 4, 11}, {6, 2, 10}, {8, 6, 7}, {9, 8, 1}};
    size_t max_tris = (size_t)20 << (2 * levels), max_nodes = max_tris / 2 + 2;
    sphere s = {malloc(max_nodes * sizeof *s.nodes), malloc(max_tris * sizeof *s.tris), 12, 20};
    for (int i = 0; i < 12; i++)
        for (int k = 0; k < 3; k++)
            s.nodes[i][k] = (float)(v[i][k] / sqrt(1 + t * t));
    memcpy(s.tris, f, sizeof f);
    edge_table e = {malloc(4 * max_tris * sizeof *e.key), malloc(4 * max_tris * sizeof *e.node), 4 * max_tris};
    uint32_t(*next)[3] = malloc(max_tris * sizeof *next);
    for (int l = 0; l < levels; l++) {
        memset(e.key, 0xff, e.size * sizeof *e.key);
        size_t n = 0;
        for (size_t i = 0; i < s.tri_count; i++) {
            uint32_t a = s.tris[i][0], b = s.tris[i][1], c = s.tris[i][2];
            uint32_t ab = midpoint(&s, &e, a, b), bc = midpoint(&s, &e, b, c), ca = midpoint(&s, &e, c, a);
            const uint32_t sub[4][3] = {{a, ab, ca}, {b, bc, ab}, {c, ca, bc}, {ab, bc, ca}};
            memcpy(next + n, sub, sizeof sub);
            n += 4;
        }
        memcpy(s.tris, next, n * sizeof *next);
        s.tri_count = n;
    }
    free(e.key);
    free(e.node);
    free(next);
    return s;
}

/* Latitude-longitude rows over a bumpy sphere: radius 1 with smooth bumps of +-5% (a few waves of the
 * direction) and points up to 3% inside or outside it, with 0.1% jitter, the way a detailed mesh wraps
 * its proxy. */
static float (*noisy_sphere(size_t n))[3]
{
    float(*p)[3] = malloc(n * sizeof *p);
    size_t cols = (size_t)sqrt((double)n * 2), rows = (n + cols - 1) / cols;
    for (size_t i = 0; i < n; i++) {
        double theta = 3.14159265358979 * ((double)(i / cols) + 0.5) / (double)rows;
        double phi = 6.28318530717959 * (double)(i % cols) / (double)cols;
        double x = sin(theta) * cos(phi), y = cos(theta), z = sin(theta) * sin(phi);
        double bump = 0.02 * sin(7 * x + 1) * cos(5 * y) + 0.02 * sin(9 * z + 4 * x) + 0.01 * cos(13 * y + 3 * z);
        double r = 1 + bump + 0.03 * sin(3 * phi + 2 * theta) + 0.001 * (2 * rnd() - 1);
        p[i][0] = (float)(r * x);
        p[i][1] = (float)(r * y);
        p[i][2] = (float)(r * z);
    }
    return p;
}

static double bind_seconds(const plush_proxy_mesh *m, const float (*pts)[3], size_t n, bool seed,
                           plush_proxy_search search, plush_proxy_binding **keep)
{
    plush_proxy_bind_options o = {.seed = seed, .search = search, .threads = 1};
    double best = 1e30;
    for (int round = 0; round < 3; round++) {
        plush_diag diag = {0};
        plush_proxy_binding *b = NULL;
        double t0 = now();
        if (plush_proxy_bind(m, pts, n, &o, &b, &diag) != PLUSH_OK || diag.warning_count) {
            fprintf(stderr, "bench_bind: bind failed: %s%s\n", diag.message, diag.warnings[0]);
            exit(1);
        }
        double t = now() - t0;
        best = t < best ? t : best;
        if (keep && !*keep)
            *keep = b;
        else
            plush_proxy_binding_free(b);
    }
    return best;
}

/* all binds every point, every_tenth every tenth of them. */
static bool same(const plush_proxy_binding *all, const plush_proxy_binding *every_tenth)
{
    for (size_t i = 0; i < every_tenth->vertex_count; i++)
        if (memcmp(all->triangles[10 * i], every_tenth->triangles[i], sizeof *all->triangles) ||
            memcmp(all->weights[10 * i], every_tenth->weights[i], sizeof *all->weights))
            return false;
    return true;
}

static int run(const sphere *s, float (*pts)[3], const char *order, bool seed)
{
    plush_proxy_mesh m = {(const float(*)[3])s->nodes, s->node_count, (const uint32_t(*)[3])s->tris, s->tri_count};
    const float(*cp)[3] = (const float(*)[3])pts;
    plush_proxy_binding *fast = NULL, *slow = NULL;
    double bvh = bind_seconds(&m, cp, POINTS, seed, PLUSH_PROXY_SEARCH_BVH, &fast);
    float(*tenth)[3] = malloc(BRUTE_POINTS * sizeof *tenth);
    for (size_t i = 0; i < BRUTE_POINTS; i++)
        memcpy(tenth[i], pts[10 * i], sizeof tenth[i]);
    double brute = bind_seconds(&m, (const float(*)[3])tenth, BRUTE_POINTS, seed, PLUSH_PROXY_SEARCH_BRUTE, &slow) *
                   POINTS / BRUTE_POINTS;
    free(tenth);
    bool ok = same(fast, slow);
    double rate = POINTS / bvh;
    printf("bind %4zu tris %-5s %-8s  bvh %6.1f ms %5.2f M vert/s  brute %7.1f ms (%4.1f ns/tri)  %6.1fx  %s%s%s\n",
           s->tri_count, seed ? "seed" : "exact", order, bvh * 1e3, rate / 1e6, brute * 1e3,
           brute / POINTS / (double)s->tri_count * 1e9, brute / bvh,
           ok ? "same" : "DIFFERENT", rate >= 1e6 ? "" : "  [below 1M/s]", brute / bvh >= 30 ? "" : "  [below 30x]");
    plush_proxy_binding_free(fast);
    plush_proxy_binding_free(slow);
    return ok ? 0 : 1;
}

int main(void)
{
    int bad = 0;
    float(*pts)[3] = noisy_sphere(POINTS);
    float(*shuffled)[3] = malloc(POINTS * sizeof *shuffled);
    memcpy(shuffled, pts, POINTS * sizeof *pts);
    for (size_t i = POINTS - 1; i > 0; i--) {
        size_t j = (size_t)(rnd() * (double)(i + 1));
        float tmp[3];
        memcpy(tmp, shuffled[i], sizeof tmp), memcpy(shuffled[i], shuffled[j], sizeof tmp),
            memcpy(shuffled[j], tmp, sizeof tmp);
    }
    printf("bench_bind: %d points, one thread; brute force timed on every tenth (%d) and scaled\n", POINTS,
           BRUTE_POINTS);
    for (int levels = 3; levels <= 4; levels++) {
        sphere s = icosphere(levels);
        for (int seed = 0; seed <= 1; seed++) {
            bad |= run(&s, pts, "mesh", seed);
            bad |= run(&s, shuffled, "shuffled", seed);
        }
        free(s.nodes);
        free(s.tris);
    }
    free(pts);
    free(shuffled);
    return bad;
}
