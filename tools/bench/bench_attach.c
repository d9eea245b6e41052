/* make bench: plush attach on Alicia Solid (22k vertices) with a cage of about a million triangles -- her
 * 1000-triangle cage as plush run --cage makes it, each triangle split in four five times (shared edges
 * split once, so the cage stays one surface) -- against the 10 s target, with automatic pins (each model
 * vertex's nearest cage vertex, each cage vertex's nearest model vertex: the searches the point grid
 * answers). Wall time, one run (a scan of every model vertex for every cage vertex took minutes). */
#include "plush/pmx.h"
#include "plush/attach.h"
#include "plush/sys/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MMD "../shared/data/mmd"
#define TARGET_SECONDS 10.0

static void die(const char *what, const plush_diag *d)
{
    char line[600];
    plush_diag_format(d, line, sizeof line);
    fprintf(stderr, "bench_attach: %s: %s\n", what, line);
    exit(1);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The midpoint of edge a-b, made once: an open-addressed table keyed by the edge. */
typedef struct splitter {
    uint64_t *keys;
    uint32_t *mid;
    size_t mask;
    float (*pos)[3];
    size_t count;
} splitter;

static uint32_t midpoint(splitter *s, uint32_t a, uint32_t b)
{
    uint64_t key = a < b ? ((uint64_t)a << 32 | b) : ((uint64_t)b << 32 | a);
    size_t i = (size_t)(key * 0x9E3779B97F4A7C15ull) & s->mask;
    while (s->keys[i] != UINT64_MAX && s->keys[i] != key)
        i = (i + 1) & s->mask;
    if (s->keys[i] == key)
        return s->mid[i];
    s->keys[i] = key;
    s->mid[i] = (uint32_t)s->count;
    for (int k = 0; k < 3; k++)
        s->pos[s->count][k] = 0.5f * (s->pos[a][k] + s->pos[b][k]);
    return (uint32_t)s->count++;
}

/* cage with each triangle split in four (malloc'd arrays). */
static plush_cage_mesh split(const plush_cage_mesh *c)
{
    size_t edges = 3 * c->triangle_count, cap = 16;
    while (cap < 2 * edges)
        cap *= 2;
    splitter s = {.keys = malloc(cap * sizeof *s.keys), .mid = malloc(cap * sizeof *s.mid), .mask = cap - 1,
                  .pos = malloc((c->vertex_count + edges) * sizeof *s.pos), .count = c->vertex_count};
    uint32_t(*tri)[3] = malloc(4 * c->triangle_count * sizeof *tri);
    if (!s.keys || !s.mid || !s.pos || !tri) {
        fprintf(stderr, "bench_attach: out of memory\n");
        exit(1);
    }
    memset(s.keys, 0xFF, cap * sizeof *s.keys);
    memcpy(s.pos, c->positions, c->vertex_count * sizeof *s.pos);
    for (size_t t = 0; t < c->triangle_count; t++) {
        uint32_t a = c->triangles[t][0], b = c->triangles[t][1], d = c->triangles[t][2];
        uint32_t ab = midpoint(&s, a, b), bd = midpoint(&s, b, d), da = midpoint(&s, d, a);
        uint32_t quads[4][3] = {{a, ab, da}, {ab, b, bd}, {da, bd, d}, {ab, bd, da}};
        memcpy(tri[4 * t], quads, sizeof quads);
    }
    free(s.keys);
    free(s.mid);
    return (plush_cage_mesh){.vertex_count = s.count, .positions = s.pos, .triangle_count = 4 * c->triangle_count,
                             .triangles = tri};
}

int main(void)
{
    plush_diag d = {0};
    plush_diag_reset(&d);
    plush_pmx_model *m = NULL;
    if (plush_pmx_read_file(MMD "/alicia/Alicia_solid.pmx", NULL, &m, &d) != PLUSH_OK)
        die("Alicia", &d);
    plush_arena arena = {0};
    plush_cage_mesh cage;
    plush_cage_result made;
    if (plush_attach_make_cage(m, NULL, 0, 1000, &arena, &cage, &made, NULL, &d) != PLUSH_OK)
        die("cage", &d);
    plush_cage_mesh dense = cage;
    for (int round = 0; round < 5; round++) {
        plush_cage_mesh next = split(&dense);
        if (round > 0) {
            free(dense.positions);
            free(dense.triangles);
        }
        dense = next;
    }
    plush_attach_options o = {.cage = &dense, .auto_mask = true, .auto_pins = true};
    plush_pmx_model *out = NULL;
    plush_attach_result r;
    double t0 = now();
    if (plush_attach(m, &o, &out, &r, &d) != PLUSH_OK)
        die("attach", &d);
    double t = now() - t0;
    printf("attach: Alicia Solid with a cage of %zu triangles (%zu vertices, %zu pieces): %.2f s, %s the %.0f s "
           "target\n",
           dense.triangle_count, dense.vertex_count, r.pieces, t, t < TARGET_SECONDS ? "under" : "OVER",
           TARGET_SECONDS);
    plush_pmx_free(out);
    free(dense.positions);
    free(dense.triangles);
    plush_arena_free(&arena);
    plush_pmx_free(m);
    return 0;
}
