/* make bench: proxy skinning speed. A 1M-vertex mesh on a ~5k-triangle proxy (a UV sphere), four
 * influences per vertex: plush_proxy_skin_update (per triangle) and plush_proxy_skin_apply (positions +
 * normals) for each blend mode.
 *
 * References measured in the same run: the target of 100M vertices/s per core, and a memcpy of
 * the bytes apply reads per vertex (rest position and normal, four triangles, four weights, the
 * hand-over share, the bone-skinned position and normal: 84 bytes) into a second buffer. That copy
 * writes 84 bytes per vertex where apply writes 24, so it is a generous bandwidth ceiling. Each mode is
 * timed with the kernels the CPU gets (AVX2 where it has it) and with the portable ones (SSE2 on
 * x86-64) that a CPU without AVX2 runs.
 *
 * The binding is made here, not by plush_proxy_bind: vertices lie along the sphere in triangle order
 * (as a mesh's vertices roughly do) and each takes its triangle and three neighbours. */
#define _GNU_SOURCE
#include "plush/proxy.h"
#include "proxy/skin_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { RINGS = 50, SEGMENTS = 50, VERTICES = 1000000 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *xcalloc(size_t count, size_t size)
{
    void *p = calloc(count, size);
    if (!p) {
        fprintf(stderr, "bench: out of memory\n");
        exit(1);
    }
    return p;
}

static uint64_t rng = 88172645463325252u;
static float rnd(float lo, float hi)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return lo + (hi - lo) * (float)(rng >> 40) / 16777216.0f;
}

typedef struct scene {
    float (*nodes)[3], (*moved)[3];
    uint32_t (*tris)[3];
    size_t node_count, tri_count;
    float (*rest_p)[3], (*rest_n)[3], (*pos)[3], (*nrm)[3];
    plush_proxy_binding binding;
    plush_proxy_mesh mesh;
} scene;

/* UV sphere of radius 1: a pole node at each end and RINGS - 1 rings of SEGMENTS nodes. */
static void make_proxy(scene *s)
{
    s->node_count = 2 + (size_t)(RINGS - 1) * SEGMENTS;
    s->tri_count = 2 * (size_t)SEGMENTS * (RINGS - 1);
    s->nodes = xcalloc(s->node_count, sizeof *s->nodes);
    s->moved = xcalloc(s->node_count, sizeof *s->moved);
    s->tris = xcalloc(s->tri_count, sizeof *s->tris);
    s->nodes[0][2] = 1;
    s->nodes[1][2] = -1;
    for (int r = 1; r < RINGS; r++)
        for (int g = 0; g < SEGMENTS; g++) {
            double th = M_PI * r / RINGS, ph = 2 * M_PI * g / SEGMENTS;
            float *n = s->nodes[2 + (size_t)(r - 1) * SEGMENTS + (size_t)g];
            n[0] = (float)(sin(th) * cos(ph));
            n[1] = (float)(sin(th) * sin(ph));
            n[2] = (float)cos(th);
        }
    size_t t = 0;
    for (int r = 0; r < RINGS; r++)
        for (int g = 0; g < SEGMENTS; g++) {
            uint32_t g1 = (uint32_t)((g + 1) % SEGMENTS);
            uint32_t a = (uint32_t)(2 + (r - 1) * SEGMENTS), b = (uint32_t)(2 + r * SEGMENTS);
            if (r == 0) {
                s->tris[t][0] = 0, s->tris[t][1] = b + (uint32_t)g, s->tris[t][2] = b + g1, t++;
            } else if (r == RINGS - 1) {
                s->tris[t][0] = 1, s->tris[t][1] = a + g1, s->tris[t][2] = a + (uint32_t)g, t++;
            } else {
                s->tris[t][0] = a + (uint32_t)g, s->tris[t][1] = b + (uint32_t)g, s->tris[t][2] = b + g1, t++;
                s->tris[t][0] = a + (uint32_t)g, s->tris[t][1] = b + g1, s->tris[t][2] = a + g1, t++;
            }
        }
    s->mesh = (plush_proxy_mesh){.nodes = (const float(*)[3])s->nodes, .node_count = s->node_count,
                                 .triangles = (const uint32_t(*)[3])s->tris, .triangle_count = t};
    s->tri_count = t;
}

static void make_binding(scene *s)
{
    plush_proxy_binding *b = &s->binding;
    b->vertex_count = VERTICES;
    b->triangle_count = s->tri_count;
    b->triangles = xcalloc(VERTICES, sizeof *b->triangles);
    b->weights = xcalloc(VERTICES, sizeof *b->weights);
    b->proxy_share = xcalloc(VERTICES, sizeof *b->proxy_share);
    s->rest_p = xcalloc(VERTICES, sizeof *s->rest_p);
    s->rest_n = xcalloc(VERTICES, sizeof *s->rest_n);
    s->pos = xcalloc(VERTICES, sizeof *s->pos);
    s->nrm = xcalloc(VERTICES, sizeof *s->nrm);
    for (size_t v = 0; v < VERTICES; v++) {
        size_t t = v * s->tri_count / VERTICES;
        const uint32_t *tri = s->tris[t];
        float a = rnd(0, 1), c = rnd(0, 1 - a), h = rnd(0.98f, 1.05f), len = 0;
        for (int k = 0; k < 3; k++) {
            float p = s->nodes[tri[0]][k] * (1 - a - c) + s->nodes[tri[1]][k] * a + s->nodes[tri[2]][k] * c;
            s->rest_p[v][k] = p * h;
            s->rest_n[v][k] = p + rnd(-0.1f, 0.1f);
            len += s->rest_n[v][k] * s->rest_n[v][k];
        }
        for (int k = 0; k < 3; k++)
            s->rest_n[v][k] /= sqrtf(len);
        /* The triangle, its neighbours along the ring and one on the next ring. */
        size_t near[4] = {t, (t + 1) % s->tri_count, (t + s->tri_count - 1) % s->tri_count,
                          (t + 2 * SEGMENTS) % s->tri_count};
        float w[4] = {rnd(0.4f, 1), rnd(0.1f, 0.5f), rnd(0.1f, 0.5f), rnd(0.05f, 0.3f)}, sum = 0;
        for (int k = 0; k < 4; k++)
            sum += w[k];
        for (int k = 0; k < 4; k++) {
            b->triangles[v][k] = (int32_t)near[k];
            b->weights[v][k] = w[k] / sum;
        }
        b->proxy_share[v] = 1;
    }
}

/* The proxy swaying: a rotation that grows towards the top, a stretch and a translation. */
static void animate(scene *s, int frame)
{
    for (size_t i = 0; i < s->node_count; i++) {
        const float *p = s->nodes[i];
        float ang = 0.3f * sinf(0.1f * (float)frame) * (p[2] + 1), c = cosf(ang), sn = sinf(ang);
        s->moved[i][0] = (c * p[0] - sn * p[1]) * 1.1f + 0.01f * (float)frame;
        s->moved[i][1] = sn * p[0] + c * p[1];
        s->moved[i][2] = p[2] * 0.9f;
    }
}

typedef struct timing {
    double update_ns_per_triangle;
    double apply_vps;
} timing;

/* Best of several rounds, each long enough to time reliably. */
typedef void (*apply_fn)(const plush_proxy_skin *skin, float (*positions)[3], float (*normals)[3]);

static timing measure(scene *s, const plush_proxy_skin_options *opt, apply_fn apply)
{
    plush_proxy_skin *skin = NULL;
    plush_diag diag = {0};
    if (plush_proxy_skin_create(&s->mesh, &s->binding, (const float(*)[3])s->rest_p, (const float(*)[3])s->rest_n,
                                opt, &skin, &diag) != PLUSH_OK) {
        fprintf(stderr, "bench: skin_create failed: %s\n", diag.message);
        exit(1);
    }
    timing best = {INFINITY, 0};
    for (int round = 0; round < 7; round++) {
        int reps = 0;
        double t0 = now(), t;
        do {
            animate(s, reps);
            double u0 = now();
            plush_proxy_skin_update(skin, (const float(*)[3])s->moved);
            double u = (now() - u0) * 1e9 / (double)s->tri_count;
            if (u < best.update_ns_per_triangle)
                best.update_ns_per_triangle = u;
            reps++;
            t = now() - t0;
        } while (t < 0.05);
        reps = 0;
        t0 = now();
        do {
            apply(skin, s->pos, s->nrm);
            __asm__ __volatile__("" : : "r"(s->pos), "r"(s->nrm) : "memory");
            reps++;
            t = now() - t0;
        } while (t < 0.3);
        double vps = (double)VERTICES * reps / t;
        if (vps > best.apply_vps)
            best.apply_vps = vps;
    }
    plush_proxy_skin_destroy(skin);
    return best;
}

static double memcpy_vps(size_t bytes_per_vertex)
{
    size_t size = bytes_per_vertex * VERTICES;
    unsigned char *src = xcalloc(size, 1), *dst = xcalloc(size, 1);
    memset(src, 1, size);
    memset(dst, 2, size);
    /* Clang would otherwise see through memset + memcpy and time a memset instead. */
    __asm__ __volatile__("" : : "r"(src), "r"(dst) : "memory");
    double best = 0;
    for (int round = 0; round < 7; round++) {
        int reps = 0;
        double t0 = now(), t;
        do {
            memcpy(dst, src, size);
            __asm__ __volatile__("" : : "r"(dst) : "memory");
            reps++;
            t = now() - t0;
        } while (t < 0.3);
        double vps = (double)VERTICES * reps / t;
        if (vps > best)
            best = vps;
    }
    free(src);
    free(dst);
    return best;
}

int main(void)
{
    scene s = {0};
    make_proxy(&s);
    make_binding(&s);
    const size_t read_bytes = 2 * 12 + 16 + 16 + 4 + 2 * 12, written_bytes = 2 * 12;
    double copy = memcpy_vps(read_bytes);
    static const struct {
        const char *name;
        plush_proxy_skin_options opt;
    } modes[] = {
        {"linear", {.blend = PLUSH_PROXY_BLEND_LINEAR}},
        {"dual quaternion", {.blend = PLUSH_PROXY_BLEND_DUAL_QUATERNION}},
        {"stretch", {.blend = PLUSH_PROXY_BLEND_LINEAR, .stretch = true}},
    };
    printf("proxy skin  %zu triangles, %d vertices, 4 influences; memcpy of %zu B/vertex: %.0f M vertices/s\n",
           s.tri_count, VERTICES, read_bytes, copy / 1e6);
    for (int portable = 0; portable < 2; portable++)
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
            timing t = measure(&s, &modes[m].opt, portable ? plush__proxy_skin_apply_portable : plush_proxy_skin_apply);
            printf("proxy skin  %-16s %-8s update %5.1f ns/triangle  apply %6.1f M vertices/s = %5.2fx the 100M"
                   " target  (skin/memcpy %.2f, %.1f GB/s moved)\n",
                   modes[m].name, portable ? "portable" : "", t.update_ns_per_triangle, t.apply_vps / 1e6,
                   t.apply_vps / 1e8, t.apply_vps / copy, t.apply_vps * (double)(read_bytes + written_bytes) / 1e9);
        }
    free(s.nodes);
    free(s.moved);
    free(s.tris);
    free(s.rest_p);
    free(s.rest_n);
    free(s.pos);
    free(s.nrm);
    free(s.binding.triangles);
    free(s.binding.weights);
    free(s.binding.proxy_share);
    return 0;
}
