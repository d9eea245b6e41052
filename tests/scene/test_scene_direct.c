/* Direct mode (plush_scene_direct_build, PLUSH_SCENE_DIRECT): the detailed mesh as the soft body. The
 * derived model on the small plush (faces, seams, pins with the proxy's weights), the run against proxy
 * mode (same sag, same lag), determinism, pins that hold, the demo bear for a few frames (ms per step
 * against proxy mode printed; which is faster is make bench's, tools/bench/bench_compare.c), the bending
 * links plush finds for large bodies against Bullet's own, and plush run --mode direct. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "compare/compare_internal.h"
#include "physics/bulletc.h"
#include "plush/plush.h"
#include "plush/sys/core.h"
#include "plush/sys/proxy.h"
#include "support/cli_run.h"
#include "support/mesh_fixture.h"
#include "support/pmx_fixture.h"
#include "support/scene_fixture.h"
#include "support/shared_data.h"

#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* Private to the physics module (src/physics/world_soft_build.c), declared there for this test. */
plush_status plush__world_soft_bending_pairs(size_t node_count, const uint32_t (*links)[2], size_t link_count, int distance,
                                      uint64_t budget, uint32_t (**out)[2], size_t *out_count);

enum { SPHERE_VERTICES = 9 * 13, SPHERE_FACES = 8 * 12 * 2, EYE_FACES = 12 };

static float dist2(const float a[3], const float b[3])
{
    float d0 = a[0] - b[0], d1 = a[1] - b[1], d2 = a[2] - b[2];
    return d0 * d0 + d1 * d1 + d2 * d2;
}

/* The shared pinned plush (support/scene_fixture.h) with bending links. */
static plush_pmx_model *pinned_plush(void)
{
    plush_pmx_model *m = scene_fx_pinned_plush();
    plush_pmx_soft_body *s = &m->soft_bodies[0];
    s->flags |= PLUSH_PMX_SOFT_BLINK;
    s->blink_distance = 2;
    return m;
}

/* m bound and its direct model built, both checked; the caller frees the binding and the model. */
static plush_pmx_model *direct_of(const plush_pmx_model *m, plush_scene_binding **b, plush_scene_direct_stats *st)
{
    plush_diag d = pmx_fx_diag();
    pmx_fx_ok(plush_scene_bind(m, NULL, b, &d), &d);
    plush_pmx_model *dm = NULL;
    pmx_fx_ok(plush_scene_direct_build(*b, &dm, st, &d), &d);
    return dm;
}

static void test_derived_model_of_the_small_plush(void **state)
{
    (void)state;
    plush_pmx_model *m = pinned_plush();
    plush_scene_binding *b = NULL;
    plush_scene_direct_stats st;
    plush_pmx_model *dm = direct_of(m, &b, &st);
    assert_int_equal(st.bodies, 1);
    assert_int_equal(st.faces, SPHERE_FACES + EYE_FACES);
    /* the sphere (welded across its seam and poles) and the eye cube (welded across its faces) */
    assert_int_equal(st.nodes, 7 * 12 + 2 + 8);
    assert_int_equal(st.pieces, 2);
    /* the cube sits in the sphere's surface: sewn, nothing left loose */
    assert_true(st.seam_links > 0);
    assert_int_equal(st.loose_pieces, 0);
    assert_true(st.pinned_nodes >= 1);
    assert_int_equal(st.anchored_nodes, 0);

    /* one new material after the source's, holding the faces and the seams (degenerate faces a, b, b) */
    assert_int_equal(dm->material_count, m->material_count + 1);
    assert_int_equal(dm->materials[3].index_count, 3 * (SPHERE_FACES + EYE_FACES + st.seam_links));
    assert_int_equal(dm->index_count, m->index_count + (size_t)dm->materials[3].index_count);
    assert_memory_equal(dm->indices, m->indices, m->index_count * sizeof *m->indices);
    assert_int_equal(dm->soft_body_count, 1);
    const plush_pmx_soft_body *sb = &dm->soft_bodies[0], *src = &m->soft_bodies[0];
    assert_int_equal(sb->material, 3);
    /* the proxy's parameters unchanged but for the stiffness: iterations scaled by the edge-length ratio,
     * LST the stiffness the proxy's links reach in one step; and the pressure, the proxy's per-node
     * acceleration divided by that ratio (a finer mesh, more area per node mass and volume: lower kPR) */
    assert_true(sb->total_mass == src->total_mass && sb->blink_distance == src->blink_distance &&
                sb->flags == src->flags && sb->margin == src->margin && sb->config.mt == src->config.mt);
    assert_true(sb->config.pr > 0 && sb->config.pr < src->config.pr / st.resolution * 2);
    assert_float_equal(st.pressure, sb->config.pr, 0);
    assert_true(st.resolution >= 1);
    assert_int_equal(sb->p_iterations, (int32_t)ceil(src->p_iterations * st.resolution));
    assert_int_equal(st.p_iterations, sb->p_iterations);
    assert_float_equal(sb->lst, 1 - pow(1 - src->lst, src->p_iterations), 1e-6);
    /* pins on detailed vertices near the cage's top, carrying the cage pin's bone (0) instead of the body's (1) */
    assert_int_equal(sb->pin_count, st.pinned_nodes);
    const float *cage_top = m->vertices[src->pins[0]].position;
    size_t cage_first = (size_t)m->materials[0].index_count, cage_count = (size_t)m->materials[1].index_count;
    for (uint32_t i = 0; i < sb->pin_count; i++) {
        int32_t v = sb->pins[i];
        assert_true(v >= 0 && (size_t)v < SPHERE_VERTICES);
        /* nearer to the pinned cage vertex than to any other, and within its edge (1.4 * 1.0515) */
        const float *x = m->vertices[v].position;
        float to_top = dist2(x, cage_top);
        assert_true(to_top <= 1.4f * 1.0515f * 1.4f * 1.0515f);
        for (size_t k = cage_first; k < cage_first + cage_count; k++)
            assert_true(to_top <= dist2(x, m->vertices[m->indices[k]].position));
        assert_int_equal(m->vertices[v].bones[0], 1);
        assert_int_equal(dm->vertices[v].bones[0], 0);
        assert_memory_equal(dm->vertices[v].position, m->vertices[v].position, sizeof m->vertices[v].position);
    }
    /* everything else is the source's */
    size_t changed = 0;
    for (size_t v = 0; v < m->vertex_count; v++)
        changed += memcmp(&dm->vertices[v], &m->vertices[v], sizeof m->vertices[v]) != 0;
    assert_true(changed >= sb->pin_count && changed <= 4 * sb->pin_count);
    assert_true(dm->bones == m->bones && dm->bone_count == m->bone_count);
    plush_pmx_free(dm);
    plush_scene_binding_free(b);
    plush_pmx_free(m);
}

static bool same_position(const plush_pmx_model *m, uint32_t a, uint32_t b)
{
    const float *x = m->vertices[a].position, *y = m->vertices[b].position;
    return x[0] == y[0] && x[1] == y[1] && x[2] == y[2];   /* not memcmp: the poles have -0 and 0 */
}

/* Nearest distance from x to the cage's triangles (material 1), over those fully pinned (want 1), those
 * not (want 0) or all (want -1). */
static float cage_triangle_distance(const plush_pmx_model *m, const bool *pinned, const float x[3], int want)
{
    size_t first = (size_t)m->materials[0].index_count, count = (size_t)m->materials[1].index_count;
    float best = INFINITY;
    for (size_t i = first; i + 2 < first + count; i += 3) {
        const uint32_t *f = &m->indices[i];
        int full = pinned[f[0]] && pinned[f[1]] && pinned[f[2]];
        if (want >= 0 && full != want)
            continue;
        float d = plush_proxy_point_triangle_distance(x, m->vertices[f[0]].position, m->vertices[f[1]].position,
                                                      m->vertices[f[2]].position);
        best = d < best ? d : best;
    }
    return best;
}

/* Where the cage is pinned over whole triangles (here the fan round its top), direct pins the detailed
 * surface under them and not the rest of the pinned nodes' share: a link from a pinned node to a free one
 * stretches in the proxy, so the detailed surface under it must stay free too. */
static void test_pinned_patch_holds_only_the_surface_under_it(void **state)
{
    (void)state;
    plush_pmx_model *m = pinned_plush();
    plush_pmx_soft_body *s = &m->soft_bodies[0];
    size_t first = (size_t)m->materials[0].index_count, count = (size_t)m->materials[1].index_count;
    uint32_t top = (uint32_t)s->pins[0];
    /* pin every cage vertex of a triangle that has the top as a corner */
    bool *pinned = calloc(m->vertex_count, sizeof *pinned);
    assert_non_null(pinned);
    for (size_t i = first; i + 2 < first + count; i += 3) {
        const uint32_t *f = &m->indices[i];
        if (same_position(m, f[0], top) || same_position(m, f[1], top) || same_position(m, f[2], top))
            pinned[f[0]] = pinned[f[1]] = pinned[f[2]] = true;
    }
    for (size_t i = first; i < first + count; i++)   /* welded copies of a pinned vertex are pinned too */
        for (size_t j = first; j < first + count; j++)
            if (pinned[m->indices[j]] && same_position(m, m->indices[i], m->indices[j]))
                pinned[m->indices[i]] = true;
    uint32_t n = 0;
    for (size_t v = 0; v < m->vertex_count; v++)
        n += pinned[v];
    s->pins = plush_arena_array(plush_pmx_arena(m), n, sizeof *s->pins);
    assert_non_null(s->pins);
    s->pin_count = 0;
    for (size_t v = 0; v < m->vertex_count; v++)
        if (pinned[v])
            s->pins[s->pin_count++] = (int32_t)v;
    assert_true(s->pin_count >= 4);

    plush_scene_binding *b = NULL;
    plush_scene_direct_stats st;
    plush_pmx_model *dm = direct_of(m, &b, &st);
    const plush_pmx_soft_body *sb = &dm->soft_bodies[0];
    assert_int_equal(sb->pin_count, st.pinned_nodes);
    assert_true(sb->pin_count >= 1);
    /* every pin lies under a pinned triangle: none nearer that is not */
    bool *is_pin = calloc(m->vertex_count, sizeof *is_pin);
    assert_non_null(is_pin);
    for (uint32_t i = 0; i < sb->pin_count; i++) {
        uint32_t v = (uint32_t)sb->pins[i];
        assert_true(v < SPHERE_VERTICES);
        const float *x = m->vertices[v].position;
        assert_true(cage_triangle_distance(m, pinned, x, 1) <= cage_triangle_distance(m, pinned, x, -1) + 1e-6f);
        assert_int_equal(dm->vertices[v].bones[0], 0);   /* the cage pin's bone */
        for (size_t u = 0; u < SPHERE_VERTICES; u++)
            is_pin[u] = is_pin[u] || same_position(m, (uint32_t)u, v);
    }
    /* the free sphere vertices nearest a pinned cage vertex (its share before) lie under a triangle with a
     * free corner, or as near one as to any pinned triangle */
    size_t share = 0, freed = 0;
    for (size_t u = 0; u < SPHERE_VERTICES; u++) {
        const float *x = m->vertices[u].position;
        float bd = INFINITY;
        bool near_pinned = false;
        for (size_t i = first; i < first + count; i++) {
            float dd = dist2(x, m->vertices[m->indices[i]].position);
            if (dd < bd)
                bd = dd, near_pinned = pinned[m->indices[i]];
        }
        if (!near_pinned)
            continue;
        share++;
        if (is_pin[u])
            continue;
        freed++;
        assert_true(cage_triangle_distance(m, pinned, x, 0) <= cage_triangle_distance(m, pinned, x, -1) + 1e-6f);
    }
    print_message("pinned patch: %zu pinned cage vertices, %u detailed pins; %zu sphere vertices nearest a pinned "
                  "one, %zu of them left free\n", (size_t)s->pin_count, sb->pin_count, share, freed);
    assert_true(freed > 0);
    free(is_pin);
    free(pinned);
    plush_pmx_free(dm);
    plush_scene_binding_free(b);
    plush_pmx_free(m);
}

/* A piece that touches nothing and holds to nothing is reported: it would fall away from the toy. */
static void test_loose_piece_is_reported(void **state)
{
    (void)state;
    plush_pmx_model *m = pinned_plush();
    mesh_fx cube = mesh_fx_cube(0.2f);
    for (size_t i = 0; i < cube.vertex_count; i++)
        cube.positions[i][0] += 3.0f;
    mesh_fx_add_material(m, "far", &cube, 1);
    mesh_fx_free(&cube);
    plush_diag d = pmx_fx_diag();
    plush_scene_binding *b = NULL;
    pmx_fx_ok(plush_scene_bind(m, NULL, &b, &d), &d);
    plush_pmx_model *dm = NULL;
    plush_scene_direct_stats st;
    uint32_t warnings = d.warning_count;
    pmx_fx_ok(plush_scene_direct_build(b, &dm, &st, &d), &d);
    assert_int_equal(st.pieces, 3);
    assert_int_equal(st.loose_pieces, 1);
    assert_int_equal(d.warning_count, warnings + 1);
    plush_pmx_free(dm);
    plush_scene_binding_free(b);
    plush_pmx_free(m);
}

typedef struct run_out {
    float (*positions)[3];
    double ms_per_step;
    double mean_y, lag_x;        /* body (sphere) centroid: y at the end; x minus the root's offset at frame 15 */
} run_out;

/* Runs a mode for frames frames; checks finite output and no blow-up on every frame, pins (direct mode)
 * at their bone-skinned position. */
static void run_mode(const plush_pmx_model *m, const plush_vmd_motion *v, int mode, uint32_t frames, run_out *out)
{
    plush_diag d = pmx_fx_diag();
    plush_scene *sc = NULL;
    pmx_fx_ok(plush_scene_create(&(plush_scene_desc){.model = m, .motion = v, .mode = mode}, &sc, &d), &d);
    const plush_pmx_model *dm = plush_scene_direct_model(sc, NULL);
    assert_true(mode == PLUSH_SCENE_DIRECT ? dm != NULL : dm == NULL);
    float(*want)[3] = calloc(m->vertex_count, sizeof *want); /* plush_anim_skin indexes by vertex */
    for (uint32_t f = 0; f < frames; f++) {
        pmx_fx_ok(plush_scene_step(sc, f, &d), &d);
        const float(*p)[3] = plush_scene_positions(sc);
        assert_true(mesh_fx_all_finite(p, m->vertex_count));
        assert_true(mesh_fx_all_finite(plush_scene_normals(sc), m->vertex_count));
        if (f == 15) {
            double x = 0;
            for (size_t i = 0; i < SPHERE_VERTICES; i++)
                x += p[i][0];
            /* the root is at x = 3 * 15 / 20 at frame 15 */
            out->lag_x = x / SPHERE_VERTICES - 3.0 * 15 / 20;
        }
        if (dm) {
            /* pins end each step exactly where the bones put them */
            const plush_pmx_soft_body *sb = &dm->soft_bodies[0];
            for (uint32_t i = 0; i < sb->pin_count; i++) {
                size_t pv = (size_t)sb->pins[i];
                plush_anim_skin(plush_scene_get_anim(sc), pv, 1, want, NULL);
                for (int k = 0; k < 3; k++)
                    assert_float_equal(p[pv][k], want[pv][k], 1e-4);
            }
        }
    }
    free(want);
    int64_t first = 0;
    assert_int_equal(plush_scene_failures(sc, &first), 0);
    const float(*p)[3] = plush_scene_positions(sc);
    double y = 0;
    for (size_t i = 0; i < SPHERE_VERTICES; i++)
        y += p[i][1];
    out->mean_y = y / SPHERE_VERTICES;
    if (out->positions)
        memcpy(out->positions, p, m->vertex_count * sizeof *out->positions);
    plush_scene_timing t;
    plush_scene_get_timing(sc, &t);
    out->ms_per_step = 1000.0 * (t.motion + t.physics + t.frames + t.skinning) / (double)t.steps;
    plush_scene_destroy(sc);
}

/* The calibrated reference on the small plush swaying: its volume stays near rest at every frame, and
 * direct on a quarter of the triangles lies nearer to it than the proxy does (plush compare's figures). */
static void test_direct_converges(void **state)
{
    (void)state;
    plush_pmx_model *m = pinned_plush();
    plush_vmd_motion *v = scene_fx_sway();
    plush_compare_variant q = {0};
    plush_diag d = pmx_fx_diag();
    pmx_fx_ok(plush__compare_quarter_make(m, NULL, 0, &q, &d), &d);
    assert_true(q.triangles < q.source_pieces);
    plush_compare_run_desc runs[] = {{.name = "direct", .kind = PLUSH_COMPARE_DIRECT},
                                     {.name = "proxy", .kind = PLUSH_COMPARE_PROXY},
                                     {.name = "direct/4", .kind = PLUSH_COMPARE_DIRECT, .model = q.model}};
    plush_compare_pair pairs[] = {{.a = 1, .b = 0, .surface = q.model}, {.a = 2, .b = 0, .surface = q.model}};
    plush_compare *c = NULL;
    pmx_fx_ok(plush_compare_create(&(plush_compare_desc){.model = m, .motion = v, .runs = runs, .run_count = 3,
                                                         .pairs = pairs, .pair_count = 2},
                                   &c, &d),
              &d);
    double proxy = 0, quarter = 0, lo = 1, hi = 1;
    for (uint32_t f = 0; f < 40; f++) {
        pmx_fx_ok(plush_compare_step(c, f, &d), &d);
        const plush_compare_run_frame *rf = plush_compare_run_frames(c);
        const plush_compare_pair_frame *pf = plush_compare_pair_frames(c);
        assert_true(rf[0].valid && pf[0].valid && pf[1].valid);
        lo = fmin(lo, rf[0].volume_ratio), hi = fmax(hi, rf[0].volume_ratio);
        proxy += pf[0].error.rms, quarter += pf[1].error.rms;
    }
    print_message("small plush: direct volume %.3f .. %.3f; RMS to direct: direct/4 %.4f, proxy %.4f\n", lo, hi,
                  quarter / 40, proxy / 40);
    assert_true(lo >= 0.8 && hi <= 1.25);
    assert_true(quarter < proxy);
    plush_compare_destroy(c);
    plush__compare_variant_free(&q);
    plush_vmd_free(v);
    plush_pmx_free(m);
}

static void test_direct_moves_like_proxy(void **state)
{
    (void)state;
    plush_pmx_model *m = pinned_plush();
    plush_vmd_motion *v = scene_fx_sway();
    run_out a = {.positions = calloc(m->vertex_count, sizeof *a.positions)};
    run_out b = {.positions = calloc(m->vertex_count, sizeof *b.positions)};
    run_mode(m, v, PLUSH_SCENE_DIRECT, 30, &a);
    run_mode(m, v, PLUSH_SCENE_DIRECT, 30, &b);
    /* deterministic to the bit */
    assert_memory_equal(a.positions, b.positions, m->vertex_count * sizeof *a.positions);
    run_out proxy = {.positions = calloc(m->vertex_count, sizeof *proxy.positions)};
    run_mode(m, v, PLUSH_SCENE_PROXY, 30, &proxy);
    /* both hang below their rest height (0) from the pin at the top, and both lag behind the root's move */
    print_message("small plush: mean y direct %.3f proxy %.3f; lag at frame 15 direct %.3f proxy %.3f\n", a.mean_y,
                  proxy.mean_y, a.lag_x, proxy.lag_x);
    assert_true(a.mean_y < -0.01 && proxy.mean_y < -0.01);
    /* the proxy swings from its one pinned node; the calibrated direct body, as stiff as the cage but held
     * by the patch of detailed nodes around that node, follows the root without running ahead of it */
    assert_true(a.lag_x < 0.05 && proxy.lag_x < -0.01);
    /* and stays a plush near the proxy's: within the body's radius (1) of it everywhere */
    double far = 0;
    for (size_t i = 0; i < SPHERE_VERTICES; i++)
        for (int k = 0; k < 3; k++)
            far = fmax(far, fabs((double)a.positions[i][k] - proxy.positions[i][k]));
    print_message("small plush: largest direct - proxy difference %.3f\n", far);
    assert_true(far < 1.0);
    free(proxy.positions);
    free(a.positions);
    free(b.positions);
    plush_vmd_free(v);
    plush_pmx_free(m);
}

/* The small plush hanging by an anchor instead of a pin: its cage's top vertex on a kinematic box (bone 0). */
static void test_anchors_move_to_the_detailed_mesh(void **state)
{
    (void)state;
    plush_pmx_model *m = pinned_plush();
    plush_pmx_soft_body *s = &m->soft_bodies[0];
    int32_t top = s->pins[0];
    s->pin_count = 0;
    plush_pmx_rigid_body *rb = pmx_fx_rigid_bodies(m, 1);
    rb->name = pmx_fx_str(m, "hook");
    rb->bone = 0;
    rb->mode = 0;
    rb->shape = 1;
    rb->size[0] = rb->size[1] = rb->size[2] = 0.3f;
    memcpy(rb->position, m->vertices[top].position, sizeof rb->position);
    rb->mass = 1;
    rb->group = 1;
    rb->mask = 0xFFFF & ~1u; /* the box ignores the plush's group 0 */
    s->mask = 0xFFFF & ~2u;
    plush_pmx_soft_anchor *a = pmx_fx_alloc(m, 1, sizeof *a);
    a[0] = (plush_pmx_soft_anchor){.rigid_body = 0, .vertex = top, .near_mode = 0};
    s->anchors = a;
    s->anchor_count = 1;

    plush_vmd_motion *v = scene_fx_sway();
    plush_diag d = pmx_fx_diag();
    plush_scene *sc = NULL;
    pmx_fx_ok(plush_scene_create(&(plush_scene_desc){.model = m, .motion = v, .mode = PLUSH_SCENE_DIRECT}, &sc, &d), &d);
    plush_scene_direct_stats st;
    const plush_pmx_model *dm = plush_scene_direct_model(sc, &st);
    assert_int_equal(st.pinned_nodes, 0);
    assert_true(st.anchored_nodes >= 1);
    const plush_pmx_soft_body *dsb = &dm->soft_bodies[0];
    assert_int_equal(dsb->pin_count, 0);
    assert_int_equal(dsb->anchor_count, st.anchored_nodes);
    for (uint32_t i = 0; i < dsb->anchor_count; i++) {
        assert_int_equal(dsb->anchors[i].rigid_body, 0);
        assert_true(dsb->anchors[i].vertex >= 0 && dsb->anchors[i].vertex < SPHERE_VERTICES);
        /* anchored vertices keep their own weights: the body, not the bones, holds them */
        assert_memory_equal(&dm->vertices[dsb->anchors[i].vertex], &m->vertices[dsb->anchors[i].vertex],
                            sizeof *m->vertices);
    }
    for (uint32_t f = 0; f < 30; f++) {
        pmx_fx_ok(plush_scene_step(sc, f, &d), &d);
        assert_true(mesh_fx_all_finite(plush_scene_positions(sc), m->vertex_count));
    }
    assert_int_equal(plush_scene_failures(sc, NULL), 0);
    /* it hangs from the box, which is at x = 3 * 11 / 20 at frame 29 on its way back: the body followed it
     * sideways rather than falling away (30 frames of free fall would take it 49 units down) */
    const float(*p)[3] = plush_scene_positions(sc);
    double x = 0, y = 0;
    for (size_t i = 0; i < SPHERE_VERTICES; i++)
        x += p[i][0], y += p[i][1];
    x /= SPHERE_VERTICES, y /= SPHERE_VERTICES;
    print_message("anchored small plush at frame 29: centroid x %.3f y %.3f\n", x, y);
    assert_true(x > 0.3 && y > -5.0);
    plush_scene_destroy(sc);
    plush_vmd_free(v);
    plush_pmx_free(m);
}

static void test_direct_errors(void **state)
{
    (void)state;
    plush_pmx_model *m = mesh_fx_plush();
    plush_diag d = pmx_fx_diag();
    plush_scene *sc = NULL;
    assert_int_equal(
        plush_scene_create(&(plush_scene_desc){.model = m, .mode = PLUSH_SCENE_DIRECT, .no_physics = true}, &sc, &d),
        PLUSH_E_ARGUMENT);
    assert_null(sc);
    /* no soft body: no parameters to take */
    m->soft_body_count = 0;
    d = pmx_fx_diag();
    assert_int_equal(plush_scene_create(&(plush_scene_desc){.model = m, .mode = PLUSH_SCENE_DIRECT}, &sc, &d),
                     PLUSH_E_NO_PROXY);
    assert_null(sc);
    m->soft_body_count = 1;
    /* --materials narrows the detailed mesh: only the eyes become the soft body */
    const char *only_eyes[] = {"eyes"};
    d = pmx_fx_diag();
    pmx_fx_ok(plush_scene_create(&(plush_scene_desc){.model = m, .mode = PLUSH_SCENE_DIRECT,
                                              .bind = {.bound = {.materials = only_eyes, .material_count = 1}}},
                          &sc, &d),
       &d);
    plush_scene_direct_stats st;
    assert_non_null(plush_scene_direct_model(sc, &st));
    assert_int_equal(st.faces, EYE_FACES);
    /* this proxy has no pin: a body that holds nowhere has no loose pieces to report */
    assert_int_equal(st.loose_pieces, 0);
    pmx_fx_ok(plush_scene_step(sc, 0, &d), &d);
    plush_scene_destroy(sc);
    assert_int_equal(plush_scene_direct_build(NULL, NULL, NULL, &d), PLUSH_E_ARGUMENT);
    plush_pmx_free(m);
}

/* ---- the demo bear --------------------------------------------------------------------------------- */

static void test_bear_direct_few_frames(void **state)
{
    (void)state;
    plush_diag d = pmx_fx_diag();
    d.file = BEAR;
    plush_pmx_model *m = NULL;
    plush_vmd_motion *v = NULL;
    pmx_fx_ok(plush_pmx_read_file(BEAR, NULL, &m, &d), &d);
    pmx_fx_ok(plush_vmd_read_file(BEAR_VMD, &v, &d), &d);
    enum { FRAMES = 4 };
    double ms[2];
    for (int k = 0; k < 2; k++) {
        plush_scene *sc = NULL;
        int mode = k ? PLUSH_SCENE_PROXY : PLUSH_SCENE_DIRECT;
        pmx_fx_ok(plush_scene_create(&(plush_scene_desc){.model = m, .motion = v, .mode = mode}, &sc, &d), &d);
        if (mode == PLUSH_SCENE_DIRECT) {
            plush_scene_direct_stats st;
            assert_non_null(plush_scene_direct_model(sc, &st));
            /* 15 ellipsoids, sewn into one hanging toy: every piece holds */
            assert_int_equal(st.pieces, 15);
            assert_true(st.seam_links > 15);
            assert_int_equal(st.loose_pieces, 0);
            assert_true(st.nodes > 50000 && st.pinned_nodes > 8);
            print_message("bear direct: %zu nodes, %zu faces, %zu seam links, %zu pinned nodes\n", st.nodes, st.faces,
                          st.seam_links, st.pinned_nodes);
        }
        for (uint32_t f = 0; f < FRAMES; f++) {
            pmx_fx_ok(plush_scene_step(sc, f, &d), &d);
            assert_true(mesh_fx_all_finite(plush_scene_positions(sc), m->vertex_count));
        }
        assert_int_equal(plush_scene_failures(sc, NULL), 0);
        plush_scene_timing t;
        plush_scene_get_timing(sc, &t);
        assert_int_equal(t.steps, FRAMES);
        ms[k] = 1000.0 * (t.motion + t.physics + t.frames + t.skinning) / (double)t.steps;
        plush_scene_destroy(sc);
    }
    print_message("bear: direct %.1f ms per frame, proxy %.2f ms per frame (%.0fx)\n", ms[0], ms[1], ms[0] / ms[1]);
    plush_vmd_free(v);
    plush_pmx_free(m);
}

/* ---- bending links: plush's pairs against Bullet's generateBendingConstraints ---------------------- */

typedef struct bullet_so {
    void *so;
    const plush_bulletc_api *bc;
} bullet_so;

static bool load_bullet(bullet_so *b)
{
    const char *path = getenv("PLUSH_PHYSICS_LIB"); /* this build's plugin (tests/support/physics_plugin.c) */
    if (!path)
        return false;
    b->so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!b->so)
        return false;
    plush_bulletc_get_fn get;
    *(void **)&get = dlsym(b->so, PLUSH_BULLETC_SYMBOL);
    b->bc = get ? get(PLUSH_BULLETC_VERSION) : NULL;
    return b->bc != NULL;
}

enum { GRID = 11, GRID_NODES = GRID * GRID };

/* A sheet of GRID x GRID nodes, two triangles per cell, its links every triangle edge once in face order. */
static size_t sheet(float (*pos)[3], uint32_t (*tris)[3], uint32_t (*links)[2])
{
    for (int i = 0; i < GRID; i++)
        for (int j = 0; j < GRID; j++)
            pos[i * GRID + j][0] = (float)j * 0.5f, pos[i * GRID + j][1] = 5.0f, pos[i * GRID + j][2] = (float)i * 0.5f;
    size_t t = 0;
    for (uint32_t i = 0; i + 1 < GRID; i++)
        for (uint32_t j = 0; j + 1 < GRID; j++) {
            uint32_t a = i * GRID + j, b = a + 1, c = a + GRID, e = c + 1;
            tris[t][0] = a, tris[t][1] = b, tris[t++][2] = e;
            tris[t][0] = a, tris[t][1] = e, tris[t++][2] = c;
        }
    size_t n = 0;
    for (size_t k = 0; k < t; k++)
        for (int e = 0; e < 3; e++) {
            uint32_t a = tris[k][e], b = tris[k][(e + 1) % 3];
            bool seen = false;
            for (size_t l = 0; l < n && !seen; l++)
                seen = (links[l][0] == a && links[l][1] == b) || (links[l][0] == b && links[l][1] == a);
            if (!seen)
                links[n][0] = a, links[n++][1] = b;
        }
    return n;
}

/* Steps a pinned sheet with bending links from Bullet (pairs == NULL) or from the given pairs. */
static void simulate_sheet(const plush_bulletc_api *bc, int distance, const uint32_t (*pairs)[2], size_t pair_count,
                           float (*x)[3])
{
    static float pos[GRID_NODES][3];
    static uint32_t tris[2 * (GRID - 1) * (GRID - 1)][3];
    static uint32_t links[3 * 2 * (GRID - 1) * (GRID - 1)][2];
    size_t link_count = sheet(pos, tris, links);
    float masses[GRID_NODES];
    for (int i = 0; i < GRID_NODES; i++)
        masses[i] = i == 0 || i == GRID - 1 ? 0.0f : 1.0f;
    char err[BC_ERR] = "";
    bc_world *w = bc->world_create(&(bc_world_desc){.gravity = {0, -98, 0}, .air_density = 1.2f}, err);
    assert_non_null(w);
    bc_soft *s = bc->soft_create(w, &(bc_soft_desc){.node_count = GRID_NODES, .positions = (const float(*)[3])pos,
                                                    .masses = masses, .group = 1, .mask = -1},
                                 err);
    assert_non_null(s);
    for (size_t l = 0; l < link_count; l++)
        bc->soft_append_link(s, links[l][0], links[l][1]);
    for (size_t t = 0; t < 2 * (GRID - 1) * (GRID - 1); t++)
        bc->soft_append_face(s, tris[t][0], tris[t][1], tris[t][2]);
    bc->soft_set_material(s, 0.6f, 0.6f, 0.6f);
    if (pairs)
        for (size_t k = 0; k < pair_count; k++)
            bc->soft_append_bending_link(s, pairs[k][0], pairs[k][1]);
    else
        bc->soft_bending(s, distance);
    bc->soft_set_total_mass(s, 2.0f);
    bc_soft_config cfg = {.kVCF = 1, .kDP = 0.05f, .kDF = 0.2f, .kCHR = 1, .kKHR = 0.1f, .kSHR = 1, .kAHR = 0.7f,
                          .kSRHR_CL = 0.1f, .kSKHR_CL = 1, .kSSHR_CL = 0.5f, .kSR_SPLT_CL = 0.5f,
                          .kSK_SPLT_CL = 0.5f, .kSS_SPLT_CL = 0.5f, .piterations = 6, .collisions = 1,
                          .margin = 0.05f};
    bc->soft_set_config(s, &cfg);
    bc->soft_finish(s);
    for (int i = 0; i < 60; i++)
        bc->world_step(w, 1.0f / 60);
    bc->soft_get_nodes(s, 0, GRID_NODES, x, NULL, NULL);
    bc->world_destroy(w);
}

static void test_bending_pairs_equal_bullets(void **state)
{
    (void)state;
    bullet_so b = {0};
    assert_true(load_bullet(&b));
    static float pos[GRID_NODES][3];
    static uint32_t tris[2 * (GRID - 1) * (GRID - 1)][3];
    static uint32_t links[3 * 2 * (GRID - 1) * (GRID - 1)][2];
    size_t link_count = sheet(pos, tris, links);
    for (int distance = 2; distance <= 4; distance++) {
        uint32_t(*pairs)[2] = NULL;
        size_t count = 0;
        assert_int_equal(plush__world_soft_bending_pairs(GRID_NODES, (const uint32_t(*)[2])links, link_count, distance,
                                                  UINT64_MAX, &pairs, &count),
                         PLUSH_OK);
        assert_true(count > 0);
        float want[GRID_NODES][3], got[GRID_NODES][3];
        simulate_sheet(b.bc, distance, NULL, 0, want);
        simulate_sheet(b.bc, distance, (const uint32_t(*)[2])pairs, count, got);
        /* the sheet sagged, and the same links in the same order give the same simulation, to the bit */
        assert_true(want[GRID_NODES / 2][1] < 4.5f);
        assert_memory_equal(want, got, sizeof want);
        free(pairs);
    }
    /* the budget: a search that would visit too much is refused, not run */
    uint32_t(*pairs)[2] = NULL;
    size_t count = 0;
    assert_int_equal(plush__world_soft_bending_pairs(GRID_NODES, (const uint32_t(*)[2])links, link_count, 50, 100, &pairs,
                                              &count),
                     PLUSH_E_RANGE);
    assert_null(pairs);
    dlclose(b.so);
}

/* ---- plush run --mode direct ------------------------------------------------------------------------ */

static int cli_setup(void **state)
{
    (void)state;
    return cli_tmp_setup("plush_direct");
}

static int cli_teardown(void **state)
{
    (void)state;
    return cli_tmp_teardown();
}

static void test_cli_run_direct(void **state)
{
    (void)state;
    char model[512], out[512], frame[700];
    cli_tmp_path(model, sizeof model, "plush.pmx");
    cli_tmp_path(out, sizeof out, "out");
    plush_pmx_model *m = pinned_plush();
    plush_diag d = pmx_fx_diag();
    pmx_fx_ok(plush_pmx_write_file(m, NULL, model, &d), &d);
    plush_pmx_free(m);

    cli_result r;
    CLI_RUN(&r, "run", model, "--mode", "direct", "--frames", "6", "--export", "obj,ply", "-o", out);
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.out, "mode direct"));
    assert_non_null(strstr(r.out, "direct          1 soft body"));
    cli_result_free(&r);
    snprintf(frame, sizeof frame, "%s/frames/frame_00005.obj", out);
    assert_true(cli_exists(frame));
    snprintf(frame, sizeof frame, "%s/frames/frame_00000.ply", out);
    assert_true(cli_exists(frame));

    /* the default export of mode direct is ply */
    char out2[512];
    cli_tmp_path(out2, sizeof out2, "out2");
    CLI_RUN(&r, "run", model, "--mode", "direct", "--frames", "2", "-o", out2);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    snprintf(frame, sizeof frame, "%s/frames/frame_00001.ply", out2);
    assert_true(cli_exists(frame));

    /* pmx+vmd and im2 bake / describe the proxy: usage errors in mode direct */
    CLI_RUN(&r, "run", model, "--mode", "direct", "--export", "pmx+vmd", "-o", out);
    cli_expect_code(&r, 2);
    cli_result_free(&r);
    CLI_RUN(&r, "run", model, "--mode", "direct", "--export", "obj,im2", "-o", out);
    cli_expect_code(&r, 2);
    cli_result_free(&r);
    CLI_RUN(&r, "run", model, "--mode", "direct", "--im2", model, "-o", out);
    cli_expect_code(&r, 2);
    cli_result_free(&r);
    CLI_RUN(&r, "run", model, "--mode", "sideways", "-o", out);
    cli_expect_code(&r, 2);
    cli_result_free(&r);

    /* a direct body that blows up (a pressure no solver holds, on links without stiffness solved once): the
     * run stops at that frame, says so, and keeps the frames before it */
    m = pinned_plush();
    m->soft_bodies[0].config.pr = 1e12f;
    m->soft_bodies[0].lst = 0;
    m->soft_bodies[0].p_iterations = 1;
    pmx_fx_ok(plush_pmx_write_file(m, NULL, model, &d), &d);
    plush_pmx_free(m);
    char out3[512];
    cli_tmp_path(out3, sizeof out3, "out3");
    CLI_RUN(&r, "run", model, "--mode", "direct", "--frames", "30", "--export", "obj", "-o", out3);
    cli_expect_code(&r, 1);
    const char *line = strstr(r.err, "direct mode: the detailed soft body blew up at frame ");
    if (!line)
        fail_msg("no blow-up message:\n%s", r.err);
    unsigned at = 0;
    assert_int_equal(sscanf(line, "direct mode: the detailed soft body blew up at frame %u", &at), 1);
    assert_true(at < 30);
    snprintf(frame, sizeof frame, "%s/frames/frame_%05u.obj", out3, at);
    assert_false(cli_exists(frame));
    if (at > 0) {
        snprintf(frame, sizeof frame, "%s/frames/frame_%05u.obj", out3, at - 1);
        assert_true(cli_exists(frame));
    }
    cli_result_free(&r);

    /* a model without a soft body: one line naming the file */
    m = mesh_fx_plush();
    m->soft_body_count = 0;
    pmx_fx_ok(plush_pmx_write_file(m, NULL, model, &d), &d);
    plush_pmx_free(m);
    CLI_RUN(&r, "run", model, "--mode", "direct", "--export", "obj", "-o", out);
    cli_expect_one_error_line(&r);
    cli_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_derived_model_of_the_small_plush),
        cmocka_unit_test(test_pinned_patch_holds_only_the_surface_under_it),
        cmocka_unit_test(test_loose_piece_is_reported),
        cmocka_unit_test(test_direct_moves_like_proxy),
        cmocka_unit_test(test_direct_converges),
        cmocka_unit_test(test_anchors_move_to_the_detailed_mesh),
        cmocka_unit_test(test_direct_errors),
        cmocka_unit_test(test_bending_pairs_equal_bullets),
        cmocka_unit_test(test_bear_direct_few_frames),
        cmocka_unit_test_setup_teardown(test_cli_run_direct, cli_setup, cli_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
