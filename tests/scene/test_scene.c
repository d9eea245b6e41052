/* Scene binding: the model's proxy and bound vertices, bound; its Influence Map File 2 export and the
 * export read back as overrides (which must change nothing). Overrides that do change things are in
 * test_im2.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/plush.h"
#include "plush/sys/physics.h"
#include "plush/sys/core.h"
#include "plush/sys/pmx.h"
#include "plush/sys/scene.h"
#include "plush/sys/anim.h"
#include "support/pmx_fixture.h"
#include "support/mesh_fixture.h"

#include <math.h>
#include <string.h>

enum { SPHERE_VERTICES = 9 * 13, CAGE_VERTICES = 60, EYE_VERTICES = 24, CAGE_TRIANGLES = 20 };

static plush_scene_binding *bind_ok(const plush_pmx_model *m, const plush_scene_bind_options *o)
{
    plush_scene_binding *b = NULL;
    plush_diag d = pmx_fx_diag();
    plush_status st = plush_scene_bind(m, o, &b, &d);
    if (st != PLUSH_OK) {
        char line[600];
        plush_diag_format(&d, line, sizeof line);
        fail_msg("bind failed: %s", line);
    }
    return b;
}

static void test_bind_plush(void **state)
{
    (void)state;
    plush_pmx_model *m = mesh_fx_plush();
    plush_scene_binding *b = bind_ok(m, NULL);
    assert_int_equal(b->proxy.triangle_count, CAGE_TRIANGLES);
    assert_int_equal(b->proxy.node_count, 12);
    assert_int_equal(b->vertex_count, SPHERE_VERTICES + EYE_VERTICES);
    assert_int_equal(b->binding->vertex_count, b->vertex_count);
    for (size_t i = 0; i < b->vertex_count; i++) {
        uint32_t want = i < SPHERE_VERTICES ? (uint32_t)i : (uint32_t)(i + CAGE_VERTICES);
        assert_int_equal(b->vertices[i], want);
        assert_int_equal(plush_scene_binding_row(b, want), (int64_t)i);
        float sum = 0;
        for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++) {
            int32_t t = b->binding->triangles[i][k];
            assert_true(t >= -1 && t < CAGE_TRIANGLES);
            sum += b->binding->weights[i][k];
        }
        assert_true(fabsf(sum - 1.0f) < 1e-5f);
        assert_true(b->binding->triangles[i][0] >= 0);
        assert_true(b->binding->proxy_share[i] == 1.0f);
    }
    assert_int_equal(plush_scene_binding_row(b, SPHERE_VERTICES), -1); /* the cage */
    assert_int_equal(plush_scene_binding_row(b, (uint32_t)m->vertex_count), -1);
    plush_scene_binding_free(b);
    plush_scene_binding_free(NULL);

    plush_scene_bind_options seed = {.proxy = {.seed = true}};
    b = bind_ok(m, &seed);
    assert_non_null(b->binding->percent);
    for (size_t i = 0; i < b->vertex_count; i++) {
        unsigned sum = 0;
        for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++)
            sum += b->binding->percent[i][k];
        assert_int_equal(sum, 100);
    }
    plush_scene_binding_free(b);

    const char *eyes[] = {"eyes"};
    plush_scene_bind_options only = {.bound = {.materials = eyes, .material_count = 1}};
    b = bind_ok(m, &only);
    assert_int_equal(b->vertex_count, EYE_VERTICES);
    assert_int_equal(b->vertices[0], SPHERE_VERTICES + CAGE_VERTICES);
    plush_scene_binding_free(b);
    plush_pmx_free(m);
}

static void test_bind_without_proxy(void **state)
{
    (void)state;
    plush_pmx_model *m = mesh_fx_plush();
    plush_scene_binding *b = (plush_scene_binding *)1;
    plush_diag d = pmx_fx_diag();
    m->soft_bodies[0].material = -1;
    assert_int_equal(plush_scene_bind(m, NULL, &b, &d), PLUSH_E_NO_PROXY);
    assert_null(b);
    assert_int_equal(d.warning_count, 1);
    m->soft_body_count = 0;
    d = pmx_fx_diag();
    assert_int_equal(plush_scene_bind(m, NULL, &b, &d), PLUSH_E_NO_PROXY);
    assert_int_equal(d.warning_count, 0);
    m->soft_body_count = 1;
    m->soft_bodies[0].material = 1;
    const char *cage[] = {"cage"};
    plush_scene_bind_options o = {.bound = {.materials = cage, .material_count = 1}};
    d = pmx_fx_diag();
    assert_int_equal(plush_scene_bind(m, &o, &b, &d), PLUSH_E_ARGUMENT);
    plush_pmx_free(m);
}

/* The strongest slot of a row (first of equal weights) and how many slots it uses. */
static int strongest(const plush_proxy_binding *pb, size_t row, int *used)
{
    int best = 0;
    *used = 0;
    for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++)
        if (pb->triangles[row][k] >= 0) {
            (*used)++;
            if (pb->weights[row][k] > pb->weights[row][best])
                best = k;
        }
    return best;
}

static void expect_same_rows(const plush_proxy_binding *a, const plush_proxy_binding *b)
{
    size_t n = a->vertex_count;
    assert_int_equal(n, b->vertex_count);
    assert_memory_equal(a->triangles, b->triangles, n * sizeof *a->triangles);
    assert_memory_equal(a->weights, b->weights, n * sizeof *a->weights);
    assert_memory_equal(a->distances, b->distances, n * sizeof *a->distances);
    assert_memory_equal(a->proxy_share, b->proxy_share, n * sizeof *a->proxy_share);
    if (a->percent)
        assert_memory_equal(a->percent, b->percent, n * sizeof *a->percent);
}

static void check_export(const plush_pmx_model *m, const plush_scene_binding *b, const plush_im2_map *map)
{
    assert_int_equal(map->part_count, 2);
    assert_string_equal(map->parts[0].name.s, "body");
    assert_string_equal(map->parts[1].name.s, "eyes");
    assert_int_equal(map->parts[0].entry_count, SPHERE_VERTICES);
    assert_int_equal(map->parts[1].entry_count, EYE_VERTICES);
    plush_arena arena = {0};
    plush_diag d = pmx_fx_diag();
    for (size_t p = 0; p < 2; p++) {
        uint32_t *order;
        size_t n;
        assert_int_equal(plush_pmx_material_vertices(m, p == 0 ? 0 : 2, &arena, &order, &n, &d), PLUSH_OK);
        for (size_t k = 0; k < n; k++) {
            const plush_im2_entry *e = &map->parts[p].entries[k];
            size_t row = (size_t)plush_scene_binding_row(b, order[k]);
            assert_int_equal(e->vertex, (int32_t)k);
            if (b->binding->proxy_share[row] == 0) {
                assert_int_equal(e->child, 1); /* the body bone, child of root */
                assert_int_equal(e->parent, 0);
                assert_int_equal(e->method, PLUSH_IM2_ONESKIN);
                continue;
            }
            int used, s = strongest(b->binding, row, &used);
            assert_int_equal(e->child, 2 + b->binding->triangles[row][s]);
            assert_int_equal(e->parent, -1);
            assert_int_equal(e->method, used == 1 ? PLUSH_IM2_NOSKIN : PLUSH_IM2_ONESKIN);
        }
    }
    plush_arena_free(&arena);
}

/* Export, write, read, apply to a fresh binding: nothing changes. */
static void export_round_trip(const plush_scene_bind_options *o, bool expect_off_proxy)
{
    plush_pmx_model *m = mesh_fx_plush();
    plush_scene_binding *b = bind_ok(m, o);
    bool off = false;
    for (size_t i = 0; i < b->vertex_count; i++)
        off |= b->binding->proxy_share[i] == 0;
    assert_int_equal(off, expect_off_proxy);
    plush_im2_map *map = NULL;
    plush_diag d = pmx_fx_diag();
    assert_int_equal(plush_scene_binding_to_im2(b, &map, &d), PLUSH_OK);
    check_export(m, b, map);
    plush_buf bytes = {0};
    assert_int_equal(plush_im2_write(map, &bytes, &d), PLUSH_OK);
    plush_im2_map *back = NULL;
    assert_int_equal(plush_im2_read(bytes.data, bytes.size, &back, &d), PLUSH_OK);
    plush_scene_binding *again = bind_ok(m, o);
    assert_int_equal(plush_scene_binding_apply_im2(again, back, &d), PLUSH_OK);
    expect_same_rows(b->binding, again->binding);
    plush_buf_free(&bytes);
    plush_im2_free(back);
    plush_im2_free(map);
    plush_scene_binding_free(again);
    plush_scene_binding_free(b);
    plush_pmx_free(m);
}

static void test_export_round_trip(void **state)
{
    (void)state;
    export_round_trip(NULL, false);
    export_round_trip(&(plush_scene_bind_options){.proxy = {.seed = true}}, false);
    export_round_trip(&(plush_scene_bind_options){.proxy = {.max_distance = 0.2f, .handover = 0.05f}}, true);
}

/* Single influences export as NOSKIN: a vertex lying on the cage binds to that triangle alone. */
static void test_export_noskin(void **state)
{
    (void)state;
    plush_pmx_model *m = mesh_fx_plush();
    /* Move body vertex 20 onto the centroid of cage triangle 3. */
    const plush_pmx_vertex *cage = &m->vertices[SPHERE_VERTICES];
    for (int c = 0; c < 3; c++)
        m->vertices[20].position[c] = (cage[9].position[c] + cage[10].position[c] + cage[11].position[c]) / 3.0f;
    /* The nearest-four binding (no smoothing): a vertex on a triangle binds to it alone, which the map
     * writes as NOSKIN. */
    plush_scene_bind_options rough = {.rough = true};
    plush_scene_binding *b = bind_ok(m, &rough);
    assert_int_equal(b->binding->triangles[20][0], 3);
    assert_int_equal(b->binding->triangles[20][1], -1);
    plush_im2_map *map = NULL;
    plush_diag d = pmx_fx_diag();
    assert_int_equal(plush_scene_binding_to_im2(b, &map, &d), PLUSH_OK);
    bool found = false;
    uint32_t order_index = 0;
    plush_arena arena = {0};
    uint32_t *order;
    size_t n;
    assert_int_equal(plush_pmx_material_vertices(m, 0, &arena, &order, &n, &d), PLUSH_OK);
    for (size_t k = 0; k < n; k++)
        if (order[k] == 20)
            order_index = (uint32_t)k, found = true;
    assert_true(found);
    const plush_im2_entry *e = &map->parts[0].entries[order_index];
    assert_int_equal(e->child, 2 + 3);
    assert_int_equal(e->method, PLUSH_IM2_NOSKIN);
    plush_arena_free(&arena);
    plush_im2_free(map);
    plush_scene_binding_free(b);
    plush_pmx_free(m);
}

/* A summary-only model (what plush info reads: counts without vertices or faces) is refused with
 * PLUSH_E_NO_GEOMETRY by everything that needs the geometry, instead of reading through NULL. */
static void expect_refused(plush_status st, const plush_diag *d)
{
    assert_int_equal(st, PLUSH_E_NO_GEOMETRY);
    assert_int_equal(d->status, PLUSH_E_NO_GEOMETRY);
}

static void test_summary_model_refused(void **state)
{
    (void)state;
    plush_pmx_model *full = mesh_fx_plush();
    plush_buf bytes = {0};
    plush_diag d = pmx_fx_diag();
    assert_int_equal(plush_pmx_write(full, &(plush_pmx_write_options){.version = PLUSH_PMX_WRITE_21}, &bytes, &d),
                     PLUSH_OK);
    plush_pmx_model *m = NULL;
    assert_int_equal(plush_pmx_read(bytes.data, bytes.size, &(plush_pmx_read_options){.summary_only = true}, &m, &d),
                     PLUSH_OK);
    assert_true(m->summary_only);
    assert_int_equal(m->vertex_count, full->vertex_count);
    assert_true(m->soft_body_count > 0);

    plush_scene_binding *b = (plush_scene_binding *)&d;
    d = pmx_fx_diag();
    expect_refused(plush_scene_bind(m, NULL, &b, &d), &d);
    assert_null(b);
    plush_scene *sc = (plush_scene *)&d;
    d = pmx_fx_diag();
    expect_refused(plush_scene_create(&(plush_scene_desc){.model = m, .mode = PLUSH_SCENE_PROXY}, &sc, &d), &d);
    assert_null(sc);
    d = pmx_fx_diag();
    expect_refused(plush_scene_create(&(plush_scene_desc){.model = m, .mode = PLUSH_SCENE_BONES, .no_physics = true},
                                      &sc, &d),
                   &d);
    plush_anim *anim = (plush_anim *)&d;
    d = pmx_fx_diag();
    expect_refused(plush_anim_create(m, &anim, &d), &d);
    assert_null(anim);
    float positions[1][3] = {{7, 7, 7}};
    plush_anim_skin_vertices(m, NULL, NULL, 0, 1, positions, NULL);
    assert_true(positions[0][0] == 7 && positions[0][1] == 7 && positions[0][2] == 7);

    plush_world *world = NULL;
    d = pmx_fx_diag();
    assert_int_equal(plush_world_create(&(plush_world_desc){0}, &world, &d), PLUSH_OK);
    plush_world_model *wm = (plush_world_model *)&d;
    expect_refused(plush_world_add_model(world, m, NULL, &wm, &d), &d);
    assert_null(wm);
    plush_world_destroy(world);

    plush_compare_surface *surface = (plush_compare_surface *)&d;
    d = pmx_fx_diag();
    expect_refused(plush_compare_surface_from_model(m, &surface, &d), &d);
    assert_null(surface);
    plush_pmx_model *attached = (plush_pmx_model *)&d;
    plush_attach_result result;
    plush_cage_mesh cage = {0};
    d = pmx_fx_diag();
    expect_refused(plush_attach(m, &(plush_attach_options){.cage = &cage}, &attached, &result, &d), &d);
    assert_null(attached);

    plush_arena arena = {0};
    plush_pmx_welded_mesh welded;
    d = pmx_fx_diag();
    expect_refused(plush_pmx_weld(m, 0, &arena, &welded, &d), &d);
    uint32_t *list = NULL;
    size_t count = 0;
    d = pmx_fx_diag();
    expect_refused(plush_pmx_material_vertices(m, 0, &arena, &list, &count, &d), &d);
    plush_scene_proxy proxy;
    d = pmx_fx_diag();
    expect_refused(plush_scene_proxy_build(m, &arena, &proxy, &d), &d);
    d = pmx_fx_diag();
    assert_int_equal(plush_scene_proxy_build(full, &arena, &proxy, &d), PLUSH_OK);
    expect_refused(plush_scene_bound_vertices(m, &proxy, NULL, &arena, &list, &count, &d), &d);
    plush_arena_free(&arena);

    plush_pmx_free(m);
    plush_buf_free(&bytes);
    plush_pmx_free(full);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bind_plush),
        cmocka_unit_test(test_bind_without_proxy),
        cmocka_unit_test(test_export_round_trip),
        cmocka_unit_test(test_export_noskin),
        cmocka_unit_test(test_summary_model_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
