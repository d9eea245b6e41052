/* The embedded demo's generator (src/demo): its three files read back with plush's readers,
 * the model's size, the proxy cage (closed, 2-manifold, facing out, around the fur), the soft body and its
 * pins on the hook, the shake motion, binding with the rigid-eyes override, and determinism.
 *
 * The generator is $PLUSH_GEN_BEAR, else tools/gen_bear beside $PLUSH_BIN (make test builds both). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/anim.h"
#include "plush/physics.h"
#include "plush/pmx.h"
#include "plush/scene.h"
#include "plush/vmd.h"
#include "plush/sys/physics.h"
#include "plush/sys/core.h"
#include "plush/sys/pmx.h"
#include "plush/sys/anim.h"
#include "support/cli_run.h"

#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

extern char **environ;

enum { CAGE_MATERIAL = 9, BONE_HOOK = 1, BONE_COUNT = 12, MAX_CAGE_TRIANGLES = 1000, MIN_VERTICES = 50000 };
enum { BEAR_FRAMES = 240, BEAR_STILL_FROM = 157 }; /* the shake's length, and where it holds still */

static const char *const files[3] = {"plush_bear.pmx", "plush_bear_shake.vmd", "plush_bear.im2"};

typedef struct demo {
    char dir[2][600];           /* two generator runs */
    plush_pmx_model *model;     /* from the first run */
    plush_vmd_motion *motion;
    plush_im2_map *map;
    plush_arena arena;
    plush_pmx_welded_mesh cage; /* the cage material, welded */
    size_t detail;              /* vertices before the cage's (the fur); the cage's come last */
} demo;

static const char *generator(char *buf, size_t size)
{
    const char *g = getenv("PLUSH_GEN_BEAR");
    if (g && *g)
        return g;
    const char *bin = getenv("PLUSH_BIN");
    if (!bin || !*bin)
        bin = "build/plush";
    const char *slash = strrchr(bin, '/');
    int n = slash ? (int)(slash - bin) : 1;
    snprintf(buf, size, "%.*s/tools/gen_bear", n, slash ? bin : ".");
    return buf;
}

/* Runs the generator with args (stdout dropped, stderr too when quiet); returns its exit status (-1 when
 * it did not exit normally). */
static int run_generator(const char *const *args, bool quiet)
{
    char buf[600];
    const char *gen = generator(buf, sizeof buf);
    char *argv[8] = {(char *)gen};
    int argc = 1;
    for (; *args && argc < 7; args++)
        argv[argc++] = (char *)*args;
    pid_t pid;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    if (quiet)
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    int rc = posix_spawn(&pid, gen, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        print_error("cannot run %s: %s (set PLUSH_GEN_BEAR or PLUSH_BIN)\n", gen, strerror(rc));
        return -1;
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void diag_fail(const char *what, const plush_diag *d)
{
    char line[600];
    plush_diag_format(d, line, sizeof line);
    fail_msg("%s: %s", what, line);
}

static int setup(void **state)
{
    if (cli_tmp_setup("plush_demo_bear") != 0)
        return -1;
    demo *d = calloc(1, sizeof *d);
    if (!d)
        return -1;
    *state = d;
    for (int r = 0; r < 2; r++) {
        cli_tmp_path(d->dir[r], sizeof d->dir[r], r ? "b" : "a");
        if (mkdir(d->dir[r], 0755) != 0)
            return -1;
        if (run_generator((const char *const[]){"-o", d->dir[r], NULL}, false) != 0)
            return -1;
    }
    char path[700];
    plush_diag diag = {0};
    plush_diag_reset(&diag);
    snprintf(path, sizeof path, "%s/%s", d->dir[0], files[0]);
    if (plush_pmx_read_file(path, NULL, &d->model, &diag) != PLUSH_OK)
        return -1;
    snprintf(path, sizeof path, "%s/%s", d->dir[0], files[1]);
    diag.file = NULL;
    if (plush_vmd_read_file(path, &d->motion, &diag) != PLUSH_OK)
        return -1;
    snprintf(path, sizeof path, "%s/%s", d->dir[0], files[2]);
    diag.file = NULL;
    if (plush_im2_read_file(path, &d->map, &diag) != PLUSH_OK)
        return -1;
    if (d->model->material_count <= CAGE_MATERIAL ||
        plush_pmx_weld(d->model, CAGE_MATERIAL, &d->arena, &d->cage, &diag) != PLUSH_OK)
        return -1;
    d->detail = d->model->vertex_count;
    while (d->detail > 0 && d->cage.vertex_node[d->detail - 1] >= 0)
        d->detail--;
    return 0;
}

static int teardown(void **state)
{
    demo *d = *state;
    if (d) {
        plush_pmx_free(d->model);
        plush_vmd_free(d->motion);
        plush_im2_free(d->map);
        plush_arena_free(&d->arena);
        free(d);
    }
    return cli_tmp_teardown();
}

static void test_deterministic(void **state)
{
    demo *d = *state;
    for (int f = 0; f < 3; f++) {
        char pa[700], pb[700];
        snprintf(pa, sizeof pa, "%s/%s", d->dir[0], files[f]);
        snprintf(pb, sizeof pb, "%s/%s", d->dir[1], files[f]);
        size_t na = 0, nb = 0;
        char *a = cli_read_all(pa, &na), *b = cli_read_all(pb, &nb);
        assert_non_null(a);
        assert_non_null(b);
        assert_int_equal(na, nb);
        assert_memory_equal(a, b, na);
        /* The copy make put in proxies/ came from this source, possibly built with other flags (make check
         * builds with sanitizers at -O1): it must be the same bytes too. */
        char pp[700];
        snprintf(pp, sizeof pp, "proxies/%s", files[f]);
        size_t np = 0;
        char *p = cli_read_all(pp, &np);
        if (p) {
            assert_int_equal(np, na);
            assert_memory_equal(p, a, na);
        }
        free(p);
        free(a);
        free(b);
    }
}

static void test_bad_output_directory(void **state)
{
    (void)state;
    char path[600];
    cli_tmp_path(path, sizeof path, "no/such/dir");
    assert_int_equal(run_generator((const char *const[]){"-o", path, NULL}, true), 1);
    assert_int_equal(run_generator((const char *const[]){"--bogus", NULL}, true), 2);
}

static void test_model(void **state)
{
    demo *d = *state;
    const plush_pmx_model *m = d->model;
    plush_diag diag = {0};
    plush_diag_reset(&diag);
    assert_int_equal(plush_pmx_validate(m, &diag), PLUSH_OK);
    assert_true(m->version == 2.1f);
    assert_true(d->detail >= MIN_VERTICES);
    assert_int_equal(m->material_count, CAGE_MATERIAL + 1);
    assert_int_equal(m->bone_count, BONE_COUNT);
    assert_string_equal(m->bones[BONE_HOOK].name.s, "フック");
    assert_string_equal(m->bones[2].name.s, "センター");
    static const char *const names[][2] = {{"体", "body"}, {"頭", "head"},   {"口元", "muzzle"}, {"耳", "ears"},
                                           {"腕", "arms"}, {"足", "legs"},   {"左目", "eye_L"},  {"右目", "eye_R"},
                                           {"鼻", "nose"}, {"物理プロキシ", "proxy cage"}};
    for (size_t k = 0; k < m->material_count; k++) {
        const plush_pmx_material *mat = &m->materials[k];
        assert_string_equal(mat->name.s, names[k][0]);
        assert_string_equal(mat->name_en.s, names[k][1]);
        assert_int_equal(mat->texture, -1);
        if (k == CAGE_MATERIAL) {
            assert_true(mat->diffuse[3] == 0.0f);
            assert_int_equal(mat->flags, 0); /* no edge, no shadows, single-sided */
            assert_true(mat->edge_size == 0.0f);
        } else {
            assert_true(mat->diffuse[3] == 1.0f);
            assert_true(mat->flags & PLUSH_PMX_MATERIAL_EDGE);
            assert_true(mat->index_count > 0);
        }
    }
}

/* The fur: outward faces, unit normals, plain bone skinning on the body bones (never the hook). */
static void test_detail_mesh(void **state)
{
    demo *d = *state;
    const plush_pmx_model *m = d->model;
    size_t first = 0, count = 0;
    plush_diag diag = {0};
    plush_diag_reset(&diag);
    assert_int_equal(plush_pmx_material_faces(m, CAGE_MATERIAL, &first, &count, &diag), PLUSH_OK);
    assert_int_equal(first + count, m->index_count); /* the cage draws last */
    size_t outward = 0;
    for (size_t f = 0; f < first; f += 3) {
        const plush_pmx_vertex *v[3] = {&m->vertices[m->indices[f]], &m->vertices[m->indices[f + 1]],
                                        &m->vertices[m->indices[f + 2]]};
        float u[3], w[3];
        for (int a = 0; a < 3; a++)
            u[a] = v[1]->position[a] - v[0]->position[a], w[a] = v[2]->position[a] - v[0]->position[a];
        float n[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
        float s = 0;
        for (int k = 0; k < 3; k++)
            s += n[0] * v[k]->normal[0] + n[1] * v[k]->normal[1] + n[2] * v[k]->normal[2];
        assert_true(n[0] * n[0] + n[1] * n[1] + n[2] * n[2] > 0); /* no degenerate faces at the poles */
        outward += s > 0;
    }
    assert_int_equal(outward, first / 3);
    size_t detail = d->detail;
    for (size_t i = 0; i < m->vertex_count; i++) {
        const plush_pmx_vertex *v = &m->vertices[i];
        float len = sqrtf(v->normal[0] * v->normal[0] + v->normal[1] * v->normal[1] + v->normal[2] * v->normal[2]);
        assert_true(fabsf(len - 1.0f) < 1e-4f);
        assert_true(v->weight_type == PLUSH_PMX_BDEF1 || v->weight_type == PLUSH_PMX_BDEF2);
        if (i >= detail) { /* the cage: on the hook alone */
            assert_int_equal(d->cage.vertex_node[i] >= 0, 1);
            assert_int_equal(v->weight_type, PLUSH_PMX_BDEF1);
            assert_int_equal(v->bones[0], BONE_HOOK);
            continue;
        }
        assert_int_equal(d->cage.vertex_node[i], -1);
        int used = v->weight_type == PLUSH_PMX_BDEF1 ? 1 : 2;
        for (int k = 0; k < used; k++)
            assert_true(v->bones[k] > BONE_HOOK && v->bones[k] < BONE_COUNT);
        assert_true(fabsf(v->weights[0] + v->weights[1] - 1.0f) < 1e-6f);
    }
}

typedef struct half_edge {
    uint32_t from, to;
} half_edge;

static int half_edge_order(const void *a, const void *b)
{
    const half_edge *x = a, *y = b;
    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    return (x->to > y->to) - (x->to < y->to);
}

static bool has_half_edge(const half_edge *e, size_t n, uint32_t from, uint32_t to)
{
    half_edge key = {from, to};
    return bsearch(&key, e, n, sizeof *e, half_edge_order) != NULL;
}

static uint32_t root(uint32_t *parent, uint32_t v)
{
    while (parent[v] != v)
        v = parent[v] = parent[parent[v]];
    return v;
}

/* Closed 2-manifold facing out: every edge in exactly two faces, once each way (so orientation agrees),
 * one fan around every node, one piece, Euler characteristic 2 and a positive enclosed volume. */
static void test_cage_closed_manifold(void **state)
{
    demo *d = *state;
    const plush_pmx_welded_mesh *c = &d->cage;
    assert_true(c->triangle_count > 100);
    assert_true(c->triangle_count <= MAX_CAGE_TRIANGLES);
    assert_true(plush_pmx_welded_mesh_usable(c));
    size_t n = 3 * c->triangle_count;
    half_edge *e = malloc(n * sizeof *e);
    uint32_t *parent = malloc(c->node_count * sizeof *parent);
    size_t *out_degree = calloc(c->node_count, sizeof *out_degree);
    assert_non_null(e);
    assert_non_null(parent);
    assert_non_null(out_degree);
    for (uint32_t v = 0; v < c->node_count; v++)
        parent[v] = v;
    double volume = 0;
    for (size_t t = 0; t < c->triangle_count; t++) {
        const uint32_t *tri = c->triangles[t];
        for (int k = 0; k < 3; k++) {
            e[3 * t + (size_t)k] = (half_edge){tri[k], tri[(k + 1) % 3]};
            out_degree[tri[k]]++;
            parent[root(parent, tri[k])] = root(parent, tri[(k + 1) % 3]);
        }
        const float *a = c->nodes[tri[0]], *b = c->nodes[tri[1]], *p = c->nodes[tri[2]];
        volume += (double)a[0] * ((double)b[1] * p[2] - (double)b[2] * p[1]) -
                  (double)a[1] * ((double)b[0] * p[2] - (double)b[2] * p[0]) +
                  (double)a[2] * ((double)b[0] * p[1] - (double)b[1] * p[0]);
    }
    qsort(e, n, sizeof *e, half_edge_order);
    for (size_t i = 0; i < n; i++) {
        assert_true(e[i].from != e[i].to);
        if (i + 1 < n)
            assert_false(e[i].from == e[i + 1].from && e[i].to == e[i + 1].to); /* an edge twice one way */
        assert_true(has_half_edge(e, n, e[i].to, e[i].from));                  /* and never the other */
    }
    /* One fan per node: in face (v, a, b) the next face around v is the one with edge v -> b. */
    for (uint32_t v = 0; v < c->node_count; v++) {
        assert_true(out_degree[v] >= 3);
        uint32_t start = 0, cur;
        for (size_t t = 0; t < c->triangle_count; t++)
            for (int k = 0; k < 3; k++)
                if (c->triangles[t][k] == v)
                    start = c->triangles[t][(k + 1) % 3];
        size_t steps = 0;
        cur = start;
        do {
            uint32_t next = UINT32_MAX;
            for (size_t t = 0; t < c->triangle_count && next == UINT32_MAX; t++)
                for (int k = 0; k < 3; k++)
                    if (c->triangles[t][k] == v && c->triangles[t][(k + 1) % 3] == cur)
                        next = c->triangles[t][(k + 2) % 3];
            assert_true(next != UINT32_MAX);
            cur = next;
            steps++;
        } while (cur != start && steps <= out_degree[v]);
        assert_int_equal(steps, out_degree[v]);
        assert_int_equal(root(parent, v), root(parent, 0));
    }
    /* No slivers: a soft body's links and bending constraints misbehave on them. */
    for (size_t t = 0; t < c->triangle_count; t++)
        for (int k = 0; k < 3; k++) {
            const float *a = c->nodes[c->triangles[t][k]], *b = c->nodes[c->triangles[t][(k + 1) % 3]],
                        *p = c->nodes[c->triangles[t][(k + 2) % 3]];
            float u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, w[3] = {p[0] - a[0], p[1] - a[1], p[2] - a[2]};
            float cosine = (u[0] * w[0] + u[1] * w[1] + u[2] * w[2]) /
                           sqrtf((u[0] * u[0] + u[1] * u[1] + u[2] * u[2]) * (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]));
            assert_true(cosine < 0.9659f); /* every corner above 15 degrees */
        }
    /* Mirror-symmetric about x = 0, like the bear, so it hangs straight. */
    for (size_t v = 0; v < c->node_count; v++) {
        float best = INFINITY;
        for (size_t w = 0; w < c->node_count; w++) {
            float dx = c->nodes[w][0] + c->nodes[v][0], dy = c->nodes[w][1] - c->nodes[v][1],
                  dz = c->nodes[w][2] - c->nodes[v][2];
            best = fminf(best, dx * dx + dy * dy + dz * dz);
        }
        assert_true(best < 1e-3f * 1e-3f);
    }
    long euler = (long)c->node_count - (long)(n / 2) + (long)c->triangle_count;
    assert_int_equal(euler, 2);
    assert_true(volume > 0); /* (p1 - p0) x (p2 - p0) points out: PMX's front faces */
    free(e);
    free(parent);
    free(out_degree);
}

static float dot3(const float a[3], const float b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* Squared distance from p to triangle (a, b, c) (closest point by Voronoi regions). */
static float triangle_distance2(const float p[3], const float a[3], const float b[3], const float c[3])
{
    float ab[3], ac[3], ap[3], bp[3], cp[3], x[3];
    for (int i = 0; i < 3; i++)
        ab[i] = b[i] - a[i], ac[i] = c[i] - a[i], ap[i] = p[i] - a[i], bp[i] = p[i] - b[i], cp[i] = p[i] - c[i];
    float d1 = dot3(ab, ap), d2 = dot3(ac, ap), d3 = dot3(ab, bp), d4 = dot3(ac, bp), d5 = dot3(ab, cp),
          d6 = dot3(ac, cp);
    if (d1 <= 0 && d2 <= 0)
        return dot3(ap, ap);
    if (d3 >= 0 && d4 <= d3)
        return dot3(bp, bp);
    if (d6 >= 0 && d5 <= d6)
        return dot3(cp, cp);
    float vc = d1 * d4 - d3 * d2, vb = d5 * d2 - d1 * d6, va = d3 * d6 - d5 * d4, s, t;
    if (vc <= 0 && d1 >= 0 && d3 <= 0)
        s = d1 / (d1 - d3), t = 0;
    else if (vb <= 0 && d2 >= 0 && d6 <= 0)
        s = 0, t = d2 / (d2 - d6);
    else if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0)
        t = (d4 - d3) / ((d4 - d3) + (d5 - d6)), s = 1 - t;
    else
        s = vb / (va + vb + vc), t = vc / (va + vb + vc);
    for (int i = 0; i < 3; i++)
        x[i] = p[i] - (a[i] + s * ab[i] + t * ac[i]);
    return dot3(x, x);
}

/* Crossings of the ray from p along +X (tilted a little so it never runs along an edge) with the cage. */
static int ray_crossings(const plush_pmx_welded_mesh *c, const float p[3])
{
    const double dir[3] = {1.0, 1.3e-3, 0.7e-3};
    int hits = 0;
    for (size_t t = 0; t < c->triangle_count; t++) {
        const float *v0 = c->nodes[c->triangles[t][0]], *v1 = c->nodes[c->triangles[t][1]],
                    *v2 = c->nodes[c->triangles[t][2]];
        if (v0[0] < p[0] && v1[0] < p[0] && v2[0] < p[0])
            continue;
        double e1[3], e2[3], s[3];
        for (int a = 0; a < 3; a++)
            e1[a] = (double)v1[a] - v0[a], e2[a] = (double)v2[a] - v0[a], s[a] = (double)p[a] - v0[a];
        double h[3] = {dir[1] * e2[2] - dir[2] * e2[1], dir[2] * e2[0] - dir[0] * e2[2], dir[0] * e2[1] - dir[1] * e2[0]};
        double det = e1[0] * h[0] + e1[1] * h[1] + e1[2] * h[2];
        if (fabs(det) < 1e-12)
            continue;
        double u = (s[0] * h[0] + s[1] * h[1] + s[2] * h[2]) / det;
        if (u < 0 || u > 1)
            continue;
        double q[3] = {s[1] * e1[2] - s[2] * e1[1], s[2] * e1[0] - s[0] * e1[2], s[0] * e1[1] - s[1] * e1[0]};
        double v = (dir[0] * q[0] + dir[1] * q[1] + dir[2] * q[2]) / det;
        if (v < 0 || u + v > 1)
            continue;
        if ((e2[0] * q[0] + e2[1] * q[1] + e2[2] * q[2]) / det > 0)
            hits++;
    }
    return hits;
}

/* The fur lies inside the cage (or within a hair of it), and the cage stays close to the fur. */
static void test_cage_encloses_fur(void **state)
{
    demo *d = *state;
    const plush_pmx_model *m = d->model;
    const plush_pmx_welded_mesh *c = &d->cage;
    size_t detail = d->detail, outside = 0;
    float worst = 0;
    for (size_t i = 0; i < detail; i++) {
        const float *p = m->vertices[i].position;
        if (ray_crossings(c, p) % 2 == 1)
            continue;
        outside++;
        float best = INFINITY;
        for (size_t t = 0; t < c->triangle_count; t++)
            best = fminf(best, triangle_distance2(p, c->nodes[c->triangles[t][0]], c->nodes[c->triangles[t][1]],
                                                  c->nodes[c->triangles[t][2]]));
        worst = fmaxf(worst, sqrtf(best));
    }
    print_message("fur vertices outside the cage: %zu of %zu, at most %.4f units out\n", outside, detail,
                  (double)worst);
    assert_true(worst <= 0.05f);
    /* Every cage node within 1.2 units (about 10 cm) of the fur. */
    for (size_t v = 0; v < c->node_count; v++) {
        float best = INFINITY;
        for (size_t i = 0; i < detail; i++) {
            const float *p = m->vertices[i].position;
            float dx = p[0] - c->nodes[v][0], dy = p[1] - c->nodes[v][1], dz = p[2] - c->nodes[v][2];
            best = fminf(best, dx * dx + dy * dy + dz * dz);
        }
        assert_true(best <= 1.2f * 1.2f);
    }
}

/* The soft body is what the generator means it to be, and its pins hang on the hook. */
static void test_soft_body(void **state)
{
    demo *d = *state;
    const plush_pmx_model *m = d->model;
    assert_int_equal(m->soft_body_count, 1);
    const plush_pmx_soft_body *s = &m->soft_bodies[0];
    assert_string_equal(s->name.s, "ぬいぐるみ");
    assert_int_equal(s->shape, 0);
    assert_int_equal(s->material, CAGE_MATERIAL);
    assert_int_equal(s->flags, PLUSH_PMX_SOFT_BLINK);
    assert_int_equal(s->blink_distance, 2);
    assert_int_equal(s->cluster_count, 0);
    assert_true(s->total_mass == 2.0f);
    assert_true(s->config.pr == 1200.0f);
    /* pose matching 0.2 and 16 position iterations since the smooth surface: they keep the cage from creasing by the
     * pins while it still sways (test_shake_simulates) */
    assert_true(s->config.vcf == 1.0f && s->config.dp == 0.1f && s->config.df == 0.2f && s->config.mt == 0.2f);
    assert_true(s->lst == 0.5f && s->ast == 0.5f && s->vst == 0.5f);
    assert_int_equal(s->p_iterations, 16);
    assert_int_equal(s->anchor_count, 0);
    assert_true(s->pin_count >= 3 && s->pin_count <= 16);
    /* The pins: cage vertices at the top of the head, on the hook bone alone, which the motion moves. */
    for (uint32_t k = 0; k < s->pin_count; k++) {
        int32_t v = s->pins[k];
        assert_true(v >= 0 && (size_t)v < m->vertex_count);
        assert_true(d->cage.vertex_node[v] >= 0);
        const plush_pmx_vertex *x = &m->vertices[v];
        assert_int_equal(x->weight_type, PLUSH_PMX_BDEF1);
        assert_int_equal(x->bones[0], BONE_HOOK);
        const float *hook = m->bones[BONE_HOOK].position;
        float dx = x->position[0] - hook[0], dy = x->position[1] - hook[1], dz = x->position[2] - hook[2];
        assert_true(x->position[1] > 9.5f);                  /* the top of the head */
        assert_true(dx * dx + dy * dy + dz * dz < 2.0f * 2.0f); /* right under the hook */
    }
    size_t hook_keys = 0;
    for (size_t k = 0; k < d->motion->bone_key_count; k++)
        hook_keys += !strcmp(d->motion->bone_keys[k].name.s, m->bones[BONE_HOOK].name.s);
    assert_true(hook_keys >= 4);
}

/* Swing (sideways), squash (a drop stopped short), twist, and still from frame 157 to the end. */
static void test_motion(void **state)
{
    demo *d = *state;
    const plush_vmd_motion *v = d->motion;
    assert_string_equal(v->model_name.s, d->model->name.s);
    assert_int_equal(plush_vmd_last_frame(v), BEAR_FRAMES);
    float swing = 0, drop_speed = 0;
    const plush_vmd_bone_key *last = NULL;
    for (size_t k = 0; k < v->bone_key_count; k++) {
        const plush_vmd_bone_key *key = &v->bone_keys[k];
        assert_string_equal(key->name.s, "フック");
        swing = fmaxf(swing, fabsf(key->translation[0]));
        if (last) {
            assert_true(key->frame > last->frame);
            float dy = last->translation[1] - key->translation[1];
            drop_speed = fmaxf(drop_speed, dy / (float)(key->frame - last->frame));
        }
        float q = 0;
        for (int a = 0; a < 4; a++)
            q += key->rotation[a] * key->rotation[a];
        assert_true(fabsf(q - 1) < 1e-5f);
        if (key->frame >= BEAR_STILL_FROM) {
            static const float rest_t[3] = {0, 0, 0}, rest_q[4] = {0, 0, 0, 1};
            assert_memory_equal(key->translation, rest_t, sizeof rest_t);
            assert_memory_equal(key->rotation, rest_q, sizeof rest_q);
        }
        last = key;
    }
    assert_true(swing >= 3.0f);
    assert_true(drop_speed >= 0.5f); /* units per frame: 15 units/s, a fall of about a metre per second */
}

/* plush_scene_bind takes the model; the override pins each eye and the nose to one proxy triangle. */
static void test_bind_and_im2(void **state)
{
    demo *d = *state;
    const plush_pmx_model *m = d->model;
    plush_scene_binding *b = NULL;
    plush_diag diag = {0};
    plush_diag_reset(&diag);
    if (plush_scene_bind(m, NULL, &b, &diag) != PLUSH_OK)
        diag_fail("bind", &diag);
    assert_int_equal(b->proxy.triangle_count, d->cage.triangle_count);
    assert_int_equal(b->vertex_count, d->detail);
    assert_int_equal(d->map->part_count, 3);
    diag.file = "plush_bear.im2";
    if (plush_scene_binding_apply_im2(b, d->map, &diag) != PLUSH_OK)
        diag_fail("apply im2", &diag);
    static const char *const rigid[] = {"左目", "右目", "鼻"};
    size_t offset = 0;
    int32_t first_of[3] = {-1, -1, -1};
    for (size_t k = 0; k < m->material_count; k++) {
        size_t n = (size_t)m->materials[k].index_count;
        for (int r = 0; r < 3; r++) {
            if (strcmp(m->materials[k].name.s, rigid[r]) != 0)
                continue;
            for (size_t f = offset; f < offset + n; f++) {
                int64_t row = plush_scene_binding_row(b, m->indices[f]);
                assert_true(row >= 0);
                const int32_t *t = b->binding->triangles[row];
                assert_true(t[0] >= 0 && t[1] == -1 && t[2] == -1 && t[3] == -1);
                assert_true(b->binding->weights[row][0] == 1.0f);
                assert_true(b->binding->proxy_share[row] == 1.0f);
                if (first_of[r] < 0)
                    first_of[r] = t[0];
                assert_int_equal(t[0], first_of[r]); /* one triangle for the whole part */
            }
        }
        offset += n;
    }
    for (int r = 0; r < 3; r++)
        assert_true(first_of[r] >= 0);
    assert_true(first_of[0] != first_of[1]);
    /* Each is the triangle right in front of its part, facing forward (-Z). */
    offset = 0;
    for (size_t k = 0; k < m->material_count; k++) {
        size_t nk = (size_t)m->materials[k].index_count;
        for (int r = 0; r < 3; r++) {
            if (strcmp(m->materials[k].name.s, rigid[r]) != 0)
                continue;
            const uint32_t *t = b->proxy.triangles[first_of[r]];
            const float *p0 = b->proxy.nodes[t[0]], *p1 = b->proxy.nodes[t[1]], *p2 = b->proxy.nodes[t[2]];
            float u[3], w[3];
            for (int a = 0; a < 3; a++)
                u[a] = p1[a] - p0[a], w[a] = p2[a] - p0[a];
            assert_true(u[0] * w[1] - u[1] * w[0] < 0); /* z of the outward normal */
            float far = 0;
            for (size_t f = offset; f < offset + nk; f++)
                far = fmaxf(far, triangle_distance2(m->vertices[m->indices[f]].position, p0, p1, p2));
            print_message("%s: proxy triangle %d, farthest vertex %.3f units away\n", rigid[r], first_of[r],
                          (double)sqrtf(far));
            assert_true(far < 1.0f); /* within a unit (8 cm): the eye is a bead on the cage's face */
        }
        offset += nk;
    }
    plush_scene_binding_free(b);

    /* The command line takes the pair too. */
    char pmx[700], im2[700], out[700];
    snprintf(pmx, sizeof pmx, "%s/%s", d->dir[0], files[0]);
    snprintf(im2, sizeof im2, "%s/%s", d->dir[0], files[2]);
    cli_tmp_path(out, sizeof out, "binding.csv");
    cli_result r;
    CLI_RUN(&r, "bind", pmx, "--im2", im2, "-o", out);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    assert_true(cli_exists(out));
}

static double cage_volume(const plush_pmx_welded_mesh *c, const float (*pos)[3])
{
    double v = 0;
    for (size_t t = 0; t < c->triangle_count; t++) {
        const float *a = pos[c->node_vertex[c->triangles[t][0]]], *b = pos[c->node_vertex[c->triangles[t][1]]],
                    *p = pos[c->node_vertex[c->triangles[t][2]]];
        v += (double)a[0] * ((double)b[1] * p[2] - (double)b[2] * p[1]) -
             (double)a[1] * ((double)b[0] * p[2] - (double)b[2] * p[0]) +
             (double)a[2] * ((double)b[0] * p[1] - (double)b[1] * p[0]);
    }
    return v / 6;
}

/* The shake through plush's own bone pipeline and physics: the motion binds to the hook, the pins follow
 * it (to the skinned position, every frame), nothing blows up, the cage lags visibly behind the hook
 * while it moves, keeps its volume (pressure), and is still by the end. */
static void test_shake_simulates(void **state)
{
    demo *d = *state;
    const plush_pmx_model *m = d->model;
    plush_diag diag = {0};
    plush_diag_reset(&diag);
    plush_motion *motion = NULL;
    plush_anim *anim = NULL;
    plush_world *world = NULL;
    plush_world_model *wm = NULL;
    if (plush_motion_bind_vmd(m, d->motion, &motion, &diag) != PLUSH_OK)
        diag_fail("bind motion", &diag);
    plush_motion_stats stats;
    plush_motion_stats_get(motion, &stats);
    assert_int_equal(stats.bone_tracks, 1);
    assert_int_equal(stats.missing_bone_names, 0);
    assert_int_equal(stats.last_frame, 240);
    if (plush_anim_create(m, &anim, &diag) != PLUSH_OK)
        diag_fail("anim", &diag);
    if (plush_world_create(&(plush_world_desc){0}, &world, &diag) != PLUSH_OK)
        diag_fail("physics", &diag);
    plush_anim_reset(anim);
    plush_anim_deform(anim, PLUSH_ANIM_BEFORE_PHYSICS);
    plush_anim_deform(anim, PLUSH_ANIM_AFTER_PHYSICS);
    if (plush_world_add_model(world, m, plush_anim_bone_globals(anim), &wm, &diag) != PLUSH_OK)
        diag_fail("add model", &diag);
    assert_int_equal(diag.warning_count, 0);
    plush_world_soft_info info;
    plush_world_soft_get_info(wm, 0, &info);
    assert_int_equal(info.state, PLUSH_SOFT_ACTIVE);
    assert_int_equal(info.pinned_count, m->soft_bodies[0].pin_count);

    const size_t n = m->vertex_count, first = d->detail, count = n - first;
    float (*skinned)[3] = calloc(n, sizeof *skinned), (*sim)[3] = calloc(n, sizeof *sim),
          (*prev)[3] = calloc(n, sizeof *prev);
    assert_non_null(skinned);
    assert_non_null(sim);
    assert_non_null(prev);
    double volume0 = 0, lag = 0, still = 0, vmin = INFINITY, vmax = 0;
    int vmin_frame = 0, lag_frame = 0;
    for (int f = 0; f <= BEAR_FRAMES; f++) {
        plush_anim_sample(anim, motion, (float)f);
        plush_anim_update_morphs(anim);
        plush_anim_deform(anim, PLUSH_ANIM_BEFORE_PHYSICS);
        plush_anim_deform(anim, PLUSH_ANIM_AFTER_PHYSICS);
        plush_anim_skin(anim, first, count, skinned, NULL);
        if (f == 0) {
            plush_world_reset(wm, plush_anim_bone_globals(anim), (const float (*)[3])skinned);
            volume0 = cage_volume(&d->cage, (const float (*)[3])skinned);
        }
        plush_world_set_bones(wm, plush_anim_bone_globals(anim));
        plush_world_set_pins(wm, (const float (*)[3])skinned);
        assert_int_equal(plush_world_step(world, 1.0f / 30, &diag), PLUSH_OK);
        plush_world_soft_vertices(wm, sim, NULL);
        const plush_pmx_soft_body *s = &m->soft_bodies[0];
        for (uint32_t k = 0; k < s->pin_count; k++) {
            const float *want = skinned[s->pins[k]], *rest = m->vertices[s->pins[k]].position;
            for (int a = 0; a < 3; a++)
                assert_true(fabsf(sim[s->pins[k]][a] - want[a]) < 1e-4f);
            if (f == 40) { /* the hook's key there: (6, 1, 0), no rotation */
                static const float hook_offset[3] = {6, 1, 0};
                for (int a = 0; a < 3; a++)
                    assert_true(fabsf(want[a] - rest[a] - hook_offset[a]) < 1e-4f);
            }
        }
        double frame_lag = 0, frame_motion = 0;
        for (size_t i = first; i < n; i++) {
            double dl = 0, dm = 0;
            for (int a = 0; a < 3; a++) {
                assert_true(isfinite(sim[i][a]));
                dl += ((double)sim[i][a] - skinned[i][a]) * ((double)sim[i][a] - skinned[i][a]);
                dm += ((double)sim[i][a] - prev[i][a]) * ((double)sim[i][a] - prev[i][a]);
            }
            frame_lag = fmax(frame_lag, sqrt(dl));
            frame_motion = fmax(frame_motion, sqrt(dm));
        }
        memcpy(prev, sim, n * sizeof *sim);
        if (f >= 15 && f < BEAR_STILL_FROM && frame_lag > lag)
            lag = frame_lag, lag_frame = f;
        if (f >= BEAR_FRAMES - 10)
            still = fmax(still, frame_motion);
        double v = cage_volume(&d->cage, (const float (*)[3])sim);
        if (v < vmin)
            vmin = v, vmin_frame = f;
        vmax = fmax(vmax, v);
    }
    plush_world_soft_get_info(wm, 0, &info);
    assert_int_equal(info.state, PLUSH_SOFT_ACTIVE);
    print_message("cage: lags the hook by up to %.2f units (frame %d), moves at most %.4f units/frame over the "
                  "last 10 frames, volume %.3f (frame %d) .. %.3f of rest\n",
                  lag, lag_frame, still, vmin / volume0, vmin_frame, vmax / volume0);
    assert_true(lag >= 1.0);   /* about 8 cm: plainly visible */
    assert_true(still < 0.01); /* settled: under a millimetre per frame */
    assert_true(vmin > 0.8 * volume0 && vmax < 1.2 * volume0); /* squashed, never collapsed or blown up */
    free(skinned);
    free(sim);
    free(prev);
    plush_world_destroy(world);
    plush_anim_destroy(anim);
    plush_motion_free(motion);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deterministic),    cmocka_unit_test(test_bad_output_directory),
        cmocka_unit_test(test_model),            cmocka_unit_test(test_detail_mesh),
        cmocka_unit_test(test_cage_closed_manifold), cmocka_unit_test(test_cage_encloses_fur),
        cmocka_unit_test(test_soft_body),        cmocka_unit_test(test_motion),
        cmocka_unit_test(test_bind_and_im2),     cmocka_unit_test(test_shake_simulates),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
