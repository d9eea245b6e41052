/* PMX mesh geometry: material faces and vertices, welding, the soft-body proxy, the bound set; materials
 * found by name, English name or number (and the nearest names when none fits), by owner, by the bones that
 * move them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/text.h"
#include "plush/scene_proxy.h"
#include "plush/sys/core.h"
#include "plush/sys/pmx.h"
#include "plush/sys/scene.h"
#include "support/mesh_fixture.h"
#include "support/pmx_fixture.h"
#include "support/shared_data.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Two materials: 0 a cube (24 split vertices), 1 a single triangle. */
static plush_pmx_model *cube_model(void)
{
    plush_pmx_model *m = mesh_fx_model(1);
    mesh_fx cube = mesh_fx_cube(1.0f);
    mesh_fx_add_material(m, "cube", &cube, 0);
    mesh_fx_free(&cube);
    mesh_fx tri = {.vertex_count = 3, .index_count = 3,
                   .positions = (float[3][3]){{5, 0, 0}, {6, 0, 0}, {5, 1, 0}},
                   .indices = (uint32_t[3]){0, 1, 2}};
    mesh_fx_add_material(m, "tri", &tri, 0);
    return m;
}

static void test_material_faces(void **state)
{
    (void)state;
    plush_pmx_model *m = cube_model();
    plush_diag d = pmx_fx_diag();
    size_t first, count;
    assert_int_equal(plush_pmx_material_faces(m, 0, &first, &count, &d), PLUSH_OK);
    assert_int_equal(first, 0);
    assert_int_equal(count, 36);
    assert_int_equal(plush_pmx_material_faces(m, 1, &first, &count, &d), PLUSH_OK);
    assert_int_equal(first, 36);
    assert_int_equal(count, 3);
    assert_int_equal(plush_pmx_material_faces(m, 2, &first, &count, &d), PLUSH_E_RANGE);
    d = pmx_fx_diag();
    m->materials[0].index_count = 39; /* leaves material 1 running past the face list */
    assert_int_equal(plush_pmx_material_faces(m, 1, &first, &count, &d), PLUSH_E_RANGE);
    assert_int_equal(d.index, 1);
    d = pmx_fx_diag();
    m->materials[0].index_count = 35; /* not whole triangles */
    assert_int_equal(plush_pmx_material_faces(m, 0, &first, &count, &d), PLUSH_E_RANGE);
    plush_pmx_free(m);
}

static void test_material_vertices(void **state)
{
    (void)state;
    plush_pmx_model *m = cube_model();
    plush_arena arena = {0};
    plush_diag d = pmx_fx_diag();
    uint32_t *v;
    size_t n;
    /* Reverse face 0's winding: the first use order follows the faces, not the vertex numbers. */
    uint32_t swap = m->indices[0];
    m->indices[0] = m->indices[2], m->indices[2] = swap;
    assert_int_equal(plush_pmx_material_vertices(m, 0, &arena, &v, &n, &d), PLUSH_OK);
    assert_int_equal(n, 24);
    assert_int_equal(v[0], m->indices[0]);
    uint8_t seen[24] = {0};
    size_t k = 0;
    for (size_t i = 0; i < 36; i++)
        if (!seen[m->indices[i]]) {
            seen[m->indices[i]] = 1;
            assert_int_equal(v[k++], m->indices[i]);
        }
    assert_int_equal(plush_pmx_material_vertices(m, 1, &arena, &v, &n, &d), PLUSH_OK);
    assert_int_equal(n, 3);
    assert_int_equal(v[0], 24);
    m->indices[37] = 99; /* out of range */
    assert_int_equal(plush_pmx_material_vertices(m, 1, &arena, &v, &n, &d), PLUSH_E_RANGE);
    plush_arena_free(&arena);
    plush_pmx_free(m);
}

/* The cube's 24 seam-split vertices weld to its 8 corners; faces keep their order. */
static void test_weld_cube(void **state)
{
    (void)state;
    plush_pmx_model *m = cube_model();
    plush_arena arena = {0};
    plush_diag d = pmx_fx_diag();
    plush_pmx_welded_mesh w;
    assert_int_equal(plush_pmx_weld(m, 0, &arena, &w, &d), PLUSH_OK);
    assert_int_equal(w.material, 0);
    assert_int_equal(w.node_count, 8);
    assert_int_equal(w.triangle_count, 12);
    assert_int_equal(w.vertex_count, m->vertex_count);
    /* Nodes numbered by first use, and each triangle is the face it came from. */
    uint32_t next = 0;
    for (size_t t = 0; t < 12; t++)
        for (int k = 0; k < 3; k++) {
            uint32_t v = m->indices[t * 3 + (size_t)k], node = w.triangles[t][k];
            assert_true(node <= next);
            if (node == next)
                next++;
            assert_int_equal(w.vertex_node[v], (int32_t)node);
            assert_memory_equal(w.nodes[node], m->vertices[v].position, sizeof w.nodes[node]);
        }
    /* node -> the first vertex welded into it, in face order */
    for (size_t n = 0; n < 8; n++) {
        int32_t v = w.node_vertex[n];
        assert_int_equal(w.vertex_node[v], (int32_t)n);
        for (size_t i = 0; i < 36 && m->indices[i] != (uint32_t)v; i++)
            assert_int_not_equal(w.vertex_node[m->indices[i]], (int32_t)n);
    }
    for (size_t v = 24; v < m->vertex_count; v++)
        assert_int_equal(w.vertex_node[v], -1);
    /* Every corner holds exactly three vertices (one per face meeting there). */
    int per_node[8] = {0};
    for (size_t v = 0; v < 24; v++)
        per_node[w.vertex_node[v]]++;
    for (int n = 0; n < 8; n++)
        assert_int_equal(per_node[n], 3);
    assert_true(plush_pmx_welded_mesh_usable(&w));
    plush_arena_free(&arena);
    plush_pmx_free(m);
}

/* Exactly equal only: -0 welds with +0, a nearby position does not, NaN never welds. */
static void test_weld_exact(void **state)
{
    (void)state;
    plush_pmx_model *m = mesh_fx_model(1);
    mesh_fx tris = {.vertex_count = 6, .index_count = 6,
                    .positions = (float[6][3]){{0.0f, 0, 0}, {1, 0, 0}, {0, 1, 0},
                                               {-0.0f, 0, 0}, {1, 1e-7f, 0}, {NAN, 1, 0}},
                    .indices = (uint32_t[6]){0, 1, 2, 3, 4, 5}};
    mesh_fx_add_material(m, "m", &tris, 0);
    plush_arena arena = {0};
    plush_diag d = pmx_fx_diag();
    plush_pmx_welded_mesh w;
    assert_int_equal(plush_pmx_weld(m, 0, &arena, &w, &d), PLUSH_OK);
    assert_int_equal(w.node_count, 5);
    assert_int_equal(w.vertex_node[3], 0);
    assert_int_equal(w.vertex_node[4], 3);
    assert_int_equal(w.vertex_node[5], 4);
    assert_false(plush_pmx_welded_mesh_usable(&w)); /* a NaN node */

    /* The UV sphere: seam column and pole rows weld, the rest stays. */
    plush_pmx_model *s = mesh_fx_model(1);
    mesh_fx sphere = mesh_fx_uv_sphere(1.0f, 6, 8);
    mesh_fx_add_material(s, "sphere", &sphere, 0);
    mesh_fx_free(&sphere);
    assert_int_equal(plush_pmx_weld(s, 0, &arena, &w, &d), PLUSH_OK);
    assert_int_equal(w.node_count, 2 + 5 * 8);
    assert_int_equal(w.triangle_count, 6 * 8 * 2);
    assert_true(plush_pmx_welded_mesh_usable(&w));
    plush_arena_free(&arena);
    plush_pmx_free(s);
    plush_pmx_free(m);
}

/* body (bound), two usable cages, and the soft bodies that must be skipped. */
static plush_pmx_model *proxy_model(void)
{
    plush_pmx_model *m = mesh_fx_model(2);
    mesh_fx sphere = mesh_fx_uv_sphere(1.0f, 4, 6);
    mesh_fx cube = mesh_fx_cube(2.0f);
    mesh_fx ico = mesh_fx_icosahedron(1.5f);
    mesh_fx flat = {.vertex_count = 3, .index_count = 3,
                    .positions = (float[3][3]){{0, 0, 0}, {1, 1, 1}, {2, 2, 2}},
                    .indices = (uint32_t[3]){0, 1, 2}};
    mesh_fx none = {0};
    mesh_fx_add_material(m, "body", &sphere, 1);       /* 0 */
    mesh_fx_add_material(m, "cage A", &cube, 0);       /* 1 */
    mesh_fx_add_material(m, "flat", &flat, 0);         /* 2: collinear, degenerate */
    mesh_fx_add_material(m, "empty", &none, 0);        /* 3 */
    mesh_fx_add_material(m, "cage B", &ico, 0);        /* 4 */
    mesh_fx_add_material(m, "rope mat", &flat, 0);     /* 5 */
    mesh_fx_add_material(m, "eyes", &cube, 1);         /* 6 */
    mesh_fx_free(&sphere);
    mesh_fx_free(&cube);
    mesh_fx_free(&ico);
    mesh_fx_add_soft_body(m, 1, 0);   /* part 0 */
    mesh_fx_add_soft_body(m, -1, 0);  /* skipped: no material */
    mesh_fx_add_soft_body(m, 2, 0);   /* skipped: degenerate */
    mesh_fx_add_soft_body(m, 5, 1);   /* a rope: not part of the proxy, no warning */
    mesh_fx_add_soft_body(m, 3, 0);   /* skipped: no faces */
    mesh_fx_add_soft_body(m, 4, 0);   /* part 1 */
    return m;
}

static void test_proxy_build(void **state)
{
    (void)state;
    plush_pmx_model *m = proxy_model();
    plush_arena arena = {0};
    plush_diag d = pmx_fx_diag();
    plush_scene_proxy p;
    assert_int_equal(plush_scene_proxy_build(m, &arena, &p, &d), PLUSH_OK);
    assert_int_equal(d.warning_count, 3);
    assert_non_null(strstr(d.warnings[0], "soft body 1"));
    assert_non_null(strstr(d.warnings[1], "soft body 2"));
    assert_non_null(strstr(d.warnings[2], "soft body 4"));
    assert_int_equal(p.part_count, 2);
    assert_int_equal(p.parts[0].soft_body, 0);
    assert_int_equal(p.parts[1].soft_body, 5);
    assert_int_equal(p.parts[0].mesh.material, 1);
    assert_int_equal(p.parts[1].mesh.material, 4);
    assert_int_equal(p.parts[0].mesh.node_count, 8);
    assert_int_equal(p.parts[1].mesh.node_count, 12);
    assert_int_equal(p.node_count, 20);
    assert_int_equal(p.triangle_count, 12 + 20);
    assert_int_equal(p.parts[1].first_node, 8);
    assert_int_equal(p.parts[1].first_triangle, 12);
    /* Triangle index = position in the part's material faces, parts in file order. */
    size_t first;
    size_t count;
    for (size_t k = 0; k < 2; k++) {
        const plush_scene_proxy_part *part = &p.parts[k];
        assert_int_equal(plush_pmx_material_faces(m, (size_t)part->mesh.material, &first, &count, &d), PLUSH_OK);
        for (size_t t = 0; t < count / 3; t++)
            for (int c = 0; c < 3; c++) {
                uint32_t node = p.triangles[part->first_triangle + t][c];
                uint32_t v = m->indices[first + t * 3 + (size_t)c];
                assert_memory_equal(p.nodes[node], m->vertices[v].position, sizeof p.nodes[node]);
                assert_int_equal(node - part->first_node, (uint32_t)part->mesh.vertex_node[v]);
            }
    }
    for (size_t n = 0; n < p.node_count; n++)
        assert_memory_equal(p.nodes[n], m->vertices[p.node_vertex[n]].position, sizeof p.nodes[n]);
    bool want[7] = {false, true, true, true, true, true, false};
    assert_int_equal(p.material_count, 7);
    for (size_t k = 0; k < 7; k++)
        assert_int_equal(p.soft_material[k], want[k]);

    /* A soft body whose material does not exist is an error, not a skip. */
    m->soft_bodies[0].material = 70;
    d = pmx_fx_diag();
    assert_int_equal(plush_scene_proxy_build(m, &arena, &p, &d), PLUSH_E_RANGE);
    assert_string_equal(d.section, "soft body");
    assert_int_equal(d.index, 0);
    plush_arena_free(&arena);
    plush_pmx_free(m);
}

static void test_proxy_none(void **state)
{
    (void)state;
    plush_pmx_model *m = cube_model();
    plush_arena arena = {0};
    plush_diag d = pmx_fx_diag();
    plush_scene_proxy p;
    assert_int_equal(plush_scene_proxy_build(m, &arena, &p, &d), PLUSH_OK);
    assert_int_equal(p.part_count, 0);
    assert_int_equal(p.triangle_count, 0);
    assert_int_equal(d.warning_count, 0);
    uint32_t *bound;
    size_t n;
    assert_int_equal(plush_scene_bound_vertices(m, &p, NULL, &arena, &bound, &n, &d), PLUSH_OK);
    assert_int_equal(n, m->vertex_count);
    plush_arena_free(&arena);
    plush_pmx_free(m);
}

static void test_bound_vertices(void **state)
{
    (void)state;
    plush_pmx_model *m = proxy_model();
    plush_arena arena = {0};
    plush_diag d = pmx_fx_diag();
    plush_scene_proxy p;
    assert_int_equal(plush_scene_proxy_build(m, &arena, &p, &d), PLUSH_OK);
    size_t body_first, body_count, eyes_first, eyes_count;
    assert_int_equal(plush_pmx_material_faces(m, 0, &body_first, &body_count, &d), PLUSH_OK);
    assert_int_equal(plush_pmx_material_faces(m, 6, &eyes_first, &eyes_count, &d), PLUSH_OK);
    uint32_t *bound;
    size_t n;
    assert_int_equal(plush_scene_bound_vertices(m, &p, NULL, &arena, &bound, &n, &d), PLUSH_OK);
    /* body: 5 x 7 sphere vertices first in the model; eyes: the last 24. */
    assert_int_equal(n, 35 + 24);
    for (size_t i = 0; i < 35; i++)
        assert_int_equal(bound[i], i);
    for (size_t i = 0; i < 24; i++)
        assert_int_equal(bound[35 + i], m->vertex_count - 24 + i);

    const char *eyes[] = {"eyes"};
    plush_scene_bound_options only = {.materials = eyes, .material_count = 1};
    assert_int_equal(plush_scene_bound_vertices(m, &p, &only, &arena, &bound, &n, &d), PLUSH_OK);
    assert_int_equal(n, 24);
    assert_int_equal(bound[0], m->vertex_count - 24);

    const char *unknown[] = {"eyes", "tail"};
    plush_scene_bound_options bad = {.materials = unknown, .material_count = 2};
    assert_int_equal(plush_scene_bound_vertices(m, &p, &bad, &arena, &bound, &n, &d), PLUSH_E_ARGUMENT);
    assert_null(d.section); /* a name that matches nothing; a soft body's own material names its index */
    d = pmx_fx_diag();
    const char *cage[] = {"cage B"};
    plush_scene_bound_options soft = {.materials = cage, .material_count = 1};
    assert_int_equal(plush_scene_bound_vertices(m, &p, &soft, &arena, &bound, &n, &d), PLUSH_E_ARGUMENT);
    assert_int_equal(d.index, 4);
    plush_arena_free(&arena);
    plush_pmx_free(m);
}

/* A cube cage (its material and TriMesh soft body) added to m. */
static void add_cube_cage(plush_pmx_model *m)
{
    mesh_fx cage = mesh_fx_cube(1.0f);
    size_t c = mesh_fx_add_material(m, "cage", &cage, 0);
    mesh_fx_free(&cage);
    mesh_fx_add_soft_body(m, (int32_t)c, 0);
}

/* m's proxy built into p, then the vertices bound when "skirt" is named, with pulled per material (4
 * entries); their count. */
static size_t skirt_bound(const plush_pmx_model *m, plush_scene_proxy *p, plush_arena *arena, size_t *pulled,
                          uint32_t **bound)
{
    plush_diag d = pmx_fx_diag();
    assert_int_equal(plush_scene_proxy_build(m, arena, p, &d), PLUSH_OK);
    const char *names[] = {"skirt"};
    plush_scene_bound_options only = {.materials = names, .material_count = 1, .pulled = pulled};
    size_t n;
    assert_int_equal(plush_scene_bound_vertices(m, p, &only, arena, bound, &n, &d), PLUSH_OK);
    return n;
}

/* Layers move as one, whole: a trim sewn onto a skirt's hem at two vertices, hanging below it in two quads
 * that meet only at a position (split vertices, as hard edges split them), lies within a cage edge of the
 * skirt and is bound whole; a body's skin meeting the skirt at one waist vertex and reaching far above it
 * keeps its own skinning but for that vertex. */
static void test_layers_pulled_whole(void **state)
{
    (void)state;
    plush_pmx_model *m = mesh_fx_model(2);
    mesh_fx skirt = {.vertex_count = 6, .index_count = 12,
                     .positions = (float[6][3]){{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {0, 1, 0}, {1, 1, 0}, {2, 1, 0}},
                     .indices = (uint32_t[12]){0, 1, 4, 0, 4, 3, 1, 2, 5, 1, 5, 4}};
    mesh_fx trim = {.vertex_count = 8, .index_count = 12,
                    .positions = (float[8][3]){{0, 0, 0}, {1, 0, 0}, {1, -0.5f, 0}, {0, -0.5f, 0},
                                               {1, -0.5f, 0}, {2, -0.5f, 0}, {2, -1, 0}, {1, -1, 0}},
                    .indices = (uint32_t[12]){0, 1, 2, 0, 2, 3, 4, 5, 6, 4, 6, 7}};
    mesh_fx body = {.vertex_count = 3, .index_count = 3,
                    .positions = (float[3][3]){{0, 1, 0}, {0, 10, 0}, {1, 10, 0}},
                    .indices = (uint32_t[3]){0, 1, 2}};
    mesh_fx_add_material(m, "skirt", &skirt, 1);
    mesh_fx_add_material(m, "trim", &trim, 1);
    mesh_fx_add_material(m, "body", &body, 1);
    add_cube_cage(m);
    plush_arena arena = {0};
    plush_scene_proxy p;
    size_t pulled[4];
    uint32_t *bound;
    size_t n = skirt_bound(m, &p, &arena, pulled, &bound);
    /* the skirt's 6, the trim's 8 (both quads), the body's one vertex at the waist */
    assert_int_equal(n, 6 + 8 + 1);
    assert_int_equal(pulled[0], 0);
    assert_int_equal(pulled[1], 8);
    assert_int_equal(pulled[2], 1);
    assert_int_equal(bound[6 + 8], 14); /* the body's vertex (0, 1, 0) */
    /* the trim hanging further below the skirt than a cage edge (the cube's: 2 and 2.8) is not the skirt's:
     * only its two vertices at the hem are */
    for (int k = 2; k < 8; k++)
        m->vertices[6 + k].position[1] -= 2.5f;
    n = skirt_bound(m, &p, &arena, pulled, &bound);
    assert_int_equal(pulled[1], 2);
    plush_arena_free(&arena);
    plush_pmx_free(m);
}

/* What plush run --cage joins (cli_cage_attach): a trim named alone, sewn at two hem vertices onto a skirt that
 * reaches further than a cage edge from it, counts those two as sewn when a simulated rigid body moves the
 * skirt's bone (here, or above it), and none when the body follows its bone or the skirt lies within a cage
 * edge of the trim (it is then bound whole). */
static void test_sewn_onto_a_swung_piece(void **state)
{
    (void)state;
    for (int c = 0; c < 4; c++) {
        plush_pmx_model *m = mesh_fx_model(2);
        mesh_fx trim = {.vertex_count = 4, .index_count = 6,
                        .positions = (float[4][3]){{0, 0, 0}, {1, 0, 0}, {1, -0.5f, 0}, {0, -0.5f, 0}},
                        .indices = (uint32_t[6]){0, 1, 2, 0, 2, 3}};
        /* the skirt above the trim's upper edge, up to 4 units (1 in case 3: within the cube cage's edges) */
        float top = c == 3 ? 1.0f : 4.0f;
        mesh_fx skirt = {.vertex_count = 4, .index_count = 6,
                         .positions = (float[4][3]){{0, 0, 0}, {1, 0, 0}, {1, top, 0}, {0, top, 0}},
                         .indices = (uint32_t[6]){0, 1, 2, 0, 2, 3}};
        mesh_fx_add_material(m, "trim", &trim, 0);
        mesh_fx_add_material(m, "skirt", &skirt, 1);
        add_cube_cage(m);
        plush_pmx_rigid_body *rb = pmx_fx_rigid_bodies(m, 1);
        rb->bone = c == 1 ? 0 : 1; /* case 1: on the skirt bone's parent */
        rb->mode = c == 2 ? PLUSH_PMX_RIGID_FOLLOW_BONE : PLUSH_PMX_RIGID_PHYSICS;
        plush_arena arena = {0};
        plush_scene_proxy p;
        plush_diag d = pmx_fx_diag();
        assert_int_equal(plush_scene_proxy_build(m, &arena, &p, &d), PLUSH_OK);
        const char *names[] = {"trim"};
        size_t pulled[3] = {0}, sewn[3] = {0};
        plush_scene_bound_options only = {.materials = names, .material_count = 1, .pulled = pulled, .sewn = sewn};
        uint32_t *bound;
        size_t n;
        assert_int_equal(plush_scene_bound_vertices(m, &p, &only, &arena, &bound, &n, &d), PLUSH_OK);
        assert_int_equal(sewn[0], 0);
        assert_int_equal(sewn[1], c < 2 ? 2 : 0);
        assert_int_equal(pulled[1], c == 3 ? 4 : 2); /* within a cage edge, the skirt is bound whole */
        plush_arena_free(&arena);
        plush_pmx_free(m);
    }
}

/* Layers of layers: a lining that shares positions only with a trim the skirt brought along (not with the
 * skirt) moves with the trim at those positions, as the trim moves with the skirt; its vertex that shares
 * none keeps its own skinning. Before, the lining stayed on bones and parted from the trim (Luka's 材質14 on
 * 材質4, 1.6 units). */
static void test_layers_of_layers(void **state)
{
    (void)state;
    plush_pmx_model *m = mesh_fx_model(2);
    mesh_fx skirt = {.vertex_count = 4, .index_count = 6,
                     .positions = (float[4][3]){{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}},
                     .indices = (uint32_t[6]){0, 1, 2, 0, 2, 3}};
    mesh_fx trim = {.vertex_count = 4, .index_count = 6,
                    .positions = (float[4][3]){{0, 0, 0}, {1, 0, 0}, {1, -0.5f, 0}, {0, -0.5f, 0}},
                    .indices = (uint32_t[6]){0, 1, 2, 0, 2, 3}};
    mesh_fx lining = {.vertex_count = 3, .index_count = 3, /* on the trim's lower edge, and far below */
                      .positions = (float[3][3]){{1, -0.5f, 0}, {0, -0.5f, 0}, {0.5f, -20, 0}},
                      .indices = (uint32_t[3]){0, 1, 2}};
    mesh_fx_add_material(m, "skirt", &skirt, 1);
    mesh_fx_add_material(m, "trim", &trim, 1);
    mesh_fx_add_material(m, "lining", &lining, 1);
    add_cube_cage(m);
    plush_arena arena = {0};
    plush_scene_proxy p;
    size_t pulled[4];
    uint32_t *bound;
    size_t n = skirt_bound(m, &p, &arena, pulled, &bound);
    assert_int_equal(pulled[1], 4); /* the trim, whole */
    assert_int_equal(pulled[2], 2); /* the lining at the trim's two positions */
    assert_int_equal(n, 4 + 4 + 2);
    assert_int_equal(bound[n - 1], 9); /* the lining's second vertex; its third (10) is not bound */
    plush_arena_free(&arena);
    plush_pmx_free(m);
}

/* Materials named as many models name them (材質1 .. 材質31), and two with names of words. */
static plush_pmx_model *named_model(void)
{
    plush_pmx_model *m = mesh_fx_model(3);
    mesh_fx tri = {.vertex_count = 3, .index_count = 3,
                   .positions = (float[3][3]){{0, 0, 0}, {1, 0, 0}, {0, 1, 0}},
                   .indices = (uint32_t[3]){0, 1, 2}};
    char name[32];
    for (int i = 1; i <= 31; i++) {
        snprintf(name, sizeof name, "材質%d", i);
        mesh_fx_add_material(m, name, &tri, 0);
    }
    mesh_fx_add_material(m, "Hair_front", &tri, 1);
    mesh_fx_add_material(m, "skirt", &tri, 2);
    mesh_fx_add_material(m, "skirt", &tri, 2);
    return m;
}

static void test_text_distance(void **state)
{
    (void)state;
    assert_int_equal(plush__text_distance("材質99", strlen("材質99"), "材質9", strlen("材質9")), 1);
    assert_int_equal(plush__text_distance("材質99", strlen("材質99"), "材質19", strlen("材質19")), 1);
    assert_int_equal(plush__text_distance("材質99", strlen("材質99"), "材質1", strlen("材質1")), 2);
    assert_int_equal(plush__text_distance("Skirt", 5, "skirt", 5), 0); /* ASCII without case */
    assert_int_equal(plush__text_distance("", 0, "髪", strlen("髪")), 1);
    assert_int_equal(plush__text_distance("kitten", 6, "sitting", 7), 3);
    assert_true(plush__text_contains("Hair_front", 10, "hair", 4));
    assert_false(plush__text_contains("Hai", 3, "hair", 4));
}

static void test_material_names(void **state)
{
    (void)state;
    plush_pmx_model *m = named_model();
    assert_int_equal(plush_pmx_material_find(m, "材質18"), 17);
    assert_int_equal(plush_pmx_material_find(m, "skirt"), 32);
    assert_int_equal(plush_pmx_material_find(m, "材質99"), -1);
    size_t near[5];
    /* one character off: 材質9, 材質19, 材質29 (the one sharing the longer beginning first) */
    assert_int_equal(plush_pmx_material_nearest(m, "材質99", near, 5), 5);
    assert_int_equal(near[0], 8);
    assert_int_equal(near[1], 18);
    assert_int_equal(near[2], 28);
    /* a name that holds what was asked comes first, whatever the case; a name given twice is listed once */
    assert_int_equal(plush_pmx_material_nearest(m, "hair", near, 2), 2);
    assert_int_equal(near[0], 31);
    assert_int_equal(plush_pmx_material_nearest(m, "skirts", near, 5), 5);
    assert_int_equal(near[0], 32);
    for (int k = 1; k < 5; k++)
        assert_int_not_equal(near[k], 33);
    assert_int_equal(plush_pmx_material_nearest(m, "x", near, 0), 0);

    plush_diag d = pmx_fx_diag();
    assert_int_equal(plush_pmx_material_check(m, "材質18", &d), PLUSH_OK);
    assert_int_equal(plush_pmx_material_check(m, "材質99", &d), PLUSH_E_ARGUMENT);
    assert_null(d.section);
    plush_pmx_free(m);
    /* a model without materials */
    m = mesh_fx_model(1);
    assert_int_equal(plush_pmx_material_nearest(m, "x", near, 5), 0);
    d = pmx_fx_diag();
    assert_int_equal(plush_pmx_material_check(m, "x", &d), PLUSH_E_ARGUMENT);
    plush_pmx_free(m);
}

/* Materials a user names by name, English name or number: each rule and the order they are tried in. */
static plush_pmx_model *english_model(void)
{
    static const char *const names[][2] = {
        {"髪", "hair"},    /* 0 */
        {"スカート", "skirt"}, /* 1 */
        {"1", "one"},      /* 2: a name that is another material's number */
        {"hair", ""},      /* 3: a name that is another material's English name */
        {"袖", "2"},       /* 4: an English name that is another material's number */
        {"リボン", "ribbon"}, /* 5, 6: one English name, two names */
        {"リボン2", "ribbon"},
        {"靴", "shoe"},    /* 7, 8: one name, one English name */
        {"靴", "shoe"},
        {"帯", "belt"},    /* 9, 10: one name, two English names */
        {"帯", "sash"},
    };
    plush_pmx_model *m = mesh_fx_model(1);
    mesh_fx tri = {.vertex_count = 3, .index_count = 3,
                   .positions = (float[3][3]){{0, 0, 0}, {1, 0, 0}, {0, 1, 0}},
                   .indices = (uint32_t[3]){0, 1, 2}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t k = mesh_fx_add_material(m, names[i][0], &tri, 0);
        m->materials[k].name_en = pmx_fx_str(m, names[i][1]);
    }
    return m;
}

static plush_status lookup(const plush_pmx_model *m, const char *text, size_t *out)
{
    plush_diag d = pmx_fx_diag();
    *out = SIZE_MAX;
    plush_status st = plush_pmx_material_lookup(m, text, out, &d);
    assert_int_equal(d.status, st);
    if (st != PLUSH_OK)
        assert_int_equal(*out, SIZE_MAX);
    return st;
}

static void test_material_lookup(void **state)
{
    (void)state;
    plush_pmx_model *m = english_model();
    size_t k;
    assert_int_equal(lookup(m, "スカート", &k), PLUSH_OK);
    assert_int_equal(k, 1);
    assert_int_equal(lookup(m, "skirt", &k), PLUSH_OK); /* the English name */
    assert_int_equal(k, 1);
    assert_int_equal(lookup(m, "0", &k), PLUSH_OK); /* the number plush info lists */
    assert_int_equal(k, 0);
    /* a name before an English name before a number */
    assert_int_equal(lookup(m, "hair", &k), PLUSH_OK);
    assert_int_equal(k, 3);
    assert_int_equal(lookup(m, "1", &k), PLUSH_OK);
    assert_int_equal(k, 2);
    assert_int_equal(lookup(m, "2", &k), PLUSH_OK);
    assert_int_equal(k, 4);
    assert_int_equal(lookup(m, "3", &k), PLUSH_OK);
    assert_int_equal(k, 3);
    /* English names compare exactly, numbers are digits alone */
    assert_int_equal(lookup(m, "Skirt", &k), PLUSH_E_ARGUMENT);
    assert_int_equal(lookup(m, "11", &k), PLUSH_E_ARGUMENT); /* one past the last */
    assert_int_equal(lookup(m, "99999999999999999999999", &k), PLUSH_E_ARGUMENT);
    const char *not_numbers[] = {"-1", "+1", " 1", "1 ", "1.0", "0x1", ""};
    for (size_t i = 0; i < sizeof not_numbers / sizeof not_numbers[0]; i++)
        assert_int_equal(lookup(m, not_numbers[i], &k), PLUSH_E_ARGUMENT);
    /* two names under one English name; a number or English name that would take a name's other
     * materials too */
    assert_int_equal(lookup(m, "ribbon", &k), PLUSH_E_AMBIGUOUS);
    assert_int_equal(lookup(m, "belt", &k), PLUSH_E_AMBIGUOUS);
    assert_int_equal(lookup(m, "9", &k), PLUSH_E_AMBIGUOUS);
    assert_int_equal(lookup(m, "7", &k), PLUSH_E_AMBIGUOUS);
    /* ... but an English name that every material of a name carries means them all, as the name does */
    assert_int_equal(lookup(m, "shoe", &k), PLUSH_OK);
    assert_int_equal(k, 7);
    assert_int_equal(lookup(m, "帯", &k), PLUSH_OK);
    assert_int_equal(k, 9);
    /* blank English names name nothing */
    m->materials[0].name_en = m->materials[1].name_en = pmx_fx_lit("");
    assert_int_equal(lookup(m, "", &k), PLUSH_E_ARGUMENT);
    /* names longer than a message holds are cut in their messages, not overrun */
    char name[301] = "";
    for (int i = 0; i < 100; i++)
        strcat(name, "長");
    m->materials[5].name = m->materials[9].name = m->materials[10].name = pmx_fx_str(m, name);
    assert_int_equal(lookup(m, "ribbon", &k), PLUSH_E_AMBIGUOUS);
    assert_int_equal(lookup(m, "9", &k), PLUSH_E_AMBIGUOUS);
    plush_pmx_free(m);
}

/* What the callers select: every material of the name the text leads to; a failure marks nothing. */
static void test_material_choose(void **state)
{
    (void)state;
    plush_pmx_model *m = english_model();
    bool chosen[11] = {0};
    plush_diag d = pmx_fx_diag();
    assert_int_equal(plush_pmx_material_choose(m, "shoe", chosen, &d), PLUSH_OK);
    assert_int_equal(plush_pmx_material_choose(m, "10", chosen, &d), PLUSH_E_AMBIGUOUS);
    d = pmx_fx_diag();
    assert_int_equal(plush_pmx_material_choose(m, "4", chosen, &d), PLUSH_OK);
    for (size_t i = 0; i < 11; i++)
        assert_int_equal(chosen[i], i == 4 || i == 7 || i == 8);
    assert_int_equal(plush_pmx_material_check(m, "skirt", &d), PLUSH_OK);
    assert_int_equal(plush_pmx_material_check(m, "ribbon", &d), PLUSH_E_AMBIGUOUS);
    plush_pmx_free(m);
}

/* The nearest names count English names: on an English keyboard "Skirt" finds スカート (skirt). */
static void test_material_nearest_english(void **state)
{
    (void)state;
    plush_pmx_model *m = english_model();
    size_t near[5];
    assert_int_equal(plush_pmx_material_nearest(m, "Skirt", near, 5), 5);
    assert_int_equal(near[0], 1);
    assert_int_equal(plush_pmx_material_nearest(m, "ribbons", near, 2), 2);
    assert_int_equal(near[0], 5);
    assert_int_equal(near[1], 6);
    /* one entry per name and English name: the second 靴 "shoe" adds nothing, the second 帯 does */
    assert_int_equal(plush_pmx_material_nearest(m, "帯", near, 5), 5);
    assert_int_equal(near[0], 9);
    assert_int_equal(near[1], 10);
    assert_int_equal(plush_pmx_material_nearest(m, "shoes", near, 5), 5);
    assert_int_equal(near[0], 7);
    for (int k = 1; k < 5; k++)
        assert_int_not_equal(near[k], 8);
    plush_pmx_free(m);
}

/* The shared models' materials by English name and number: sample_finish's skirt, Luka's dress. */
static void test_material_lookup_shared(void **state)
{
    (void)state;
    const struct {
        const char *path, *text;
        size_t material;
    } cases[] = {
        {SHARED_MMD "/blender2pmxem/sample_finish.pmx", "skirt", 8},
        {SHARED_MMD "/blender2pmxem/sample_finish.pmx", "8", 8},
        {SHARED_CHARACTERS "/blender_mmd_tools/巡音ルカ_f14b5a4.pmx", "Material8", 7},
        {SHARED_CHARACTERS "/blender_mmd_tools/巡音ルカ_f14b5a4.pmx", "7", 7},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        plush_pmx_model *m = NULL;
        plush_diag d = pmx_fx_diag();
        if (plush_pmx_read_file(cases[i].path, NULL, &m, &d) == PLUSH_E_IO) {
            print_message("missing fixture %s\n", cases[i].path);
            skip();
        }
        assert_non_null(m);
        size_t k;
        assert_int_equal(lookup(m, cases[i].text, &k), PLUSH_OK);
        assert_int_equal(k, cases[i].material);
        plush_pmx_free(m);
    }
}

/* The bones that carry a material, heaviest first, and the soft body that owns one. */
static void test_material_bones(void **state)
{
    (void)state;
    plush_pmx_model *m = named_model();
    plush_pmx_bone_share b[3];
    size_t n = 0;
    plush_diag d = pmx_fx_diag();
    assert_int_equal(plush_pmx_material_bones(m, 31, b, 3, &n, &d), PLUSH_OK);
    assert_int_equal(n, 1);
    assert_int_equal(b[0].bone, 1);
    assert_float_equal(b[0].share, 1, 1e-6);
    /* material 0's three vertices: BDEF2 3/4 on bone 2; BDEF4 4:2:1:1 over bones 2, 1, 0, 0 (scaled to sum 1);
     * BDEF1 on bone 0 */
    plush_pmx_vertex *v = m->vertices;
    v[0] = (plush_pmx_vertex){.bones = {2, 0, -1, -1}, .weights = {0.75f, 0.25f}, .weight_type = PLUSH_PMX_BDEF2};
    v[1] = (plush_pmx_vertex){.bones = {2, 1, 0, 0}, .weights = {1, 0.5f, 0.25f, 0.25f}, .weight_type = PLUSH_PMX_BDEF4};
    v[2].bones[0] = 0;
    assert_int_equal(plush_pmx_material_bones(m, 0, b, 3, &n, &d), PLUSH_OK);
    assert_int_equal(n, 3);
    assert_int_equal(b[0].bone, 0);
    assert_float_equal(b[0].share, (0.25 + 0.25 + 1) / 3, 1e-6);
    assert_int_equal(b[1].bone, 2);
    assert_float_equal(b[1].share, (0.75 + 0.5) / 3, 1e-6);
    assert_int_equal(b[2].bone, 1);
    assert_float_equal(b[2].share, 0.25 / 3, 1e-6);
    assert_int_equal(plush_pmx_material_bones(m, 0, b, 1, &n, &d), PLUSH_OK);
    assert_int_equal(n, 1);
    assert_int_equal(b[0].bone, 0);
    assert_int_equal(plush_pmx_material_bones(m, 99, b, 3, &n, &d), PLUSH_E_RANGE);

    assert_int_equal(plush_pmx_material_soft_body(m, 32), -1);
    mesh_fx_add_soft_body(m, 32, PLUSH_PMX_SOFT_TRIMESH);
    assert_int_equal(plush_pmx_material_soft_body(m, 32), 0);
    assert_int_equal(plush_pmx_material_soft_body(m, 33), -1);
    plush_pmx_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_material_faces),
        cmocka_unit_test(test_material_vertices),
        cmocka_unit_test(test_weld_cube),
        cmocka_unit_test(test_weld_exact),
        cmocka_unit_test(test_proxy_build),
        cmocka_unit_test(test_proxy_none),
        cmocka_unit_test(test_bound_vertices),
        cmocka_unit_test(test_layers_pulled_whole),
        cmocka_unit_test(test_layers_of_layers),
        cmocka_unit_test(test_sewn_onto_a_swung_piece),
        cmocka_unit_test(test_text_distance),
        cmocka_unit_test(test_material_names),
        cmocka_unit_test(test_material_lookup),
        cmocka_unit_test(test_material_choose),
        cmocka_unit_test(test_material_nearest_english),
        cmocka_unit_test(test_material_lookup_shared),
        cmocka_unit_test(test_material_bones),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
