/* Pins that hold, in one command, and a plush surface that stays smooth: plush attach's
 * automatic pins (in the library and on Alicia's hair), plush run --cage on a plush-like toy built in
 * code, hung by the head and swung for 300 frames, and the quality thresholds at every frame on the toy,
 * on Alicia's hair and on the demo bear's shake. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/plush.h"
#include "plush/sys/core.h"
#include "plush/sys/proxy.h"
#include "plush/sys/scene.h"
#include "support/characters.h"
#include "support/cli_run.h"
#include "support/mesh_fixture.h"
#include "support/pmx_fixture.h"
#include "support/shared_data.h"
#include "support/toy_fixture.h"
#include "proxy/cage_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static const char *const toy_materials[] = {"head", "body", "arms", "legs"};

static int setup(void **state)
{
    (void)state;
    return cli_tmp_setup("plush_cage");
}

static int teardown(void **state)
{
    (void)state;
    return cli_tmp_teardown();
}

static bool have_alicia(void)
{
    FILE *f = fopen(ALICIA, "rb"), *g = fopen(MOTION_0046, "rb");
    bool ok = f && g;
    if (f)
        fclose(f);
    if (g)
        fclose(g);
    if (!ok)
        print_message("skipped: %s or %s is absent\n", ALICIA, MOTION_0046);
    return ok;
}

/* Do three of the points lie off one line? */
static bool spans(const float (*p)[3], size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            for (size_t k = j + 1; k < n; k++) {
                double a[3], b[3], c[3];
                for (int x = 0; x < 3; x++)
                    a[x] = (double)p[j][x] - p[i][x], b[x] = (double)p[k][x] - p[i][x];
                c[0] = a[1] * b[2] - a[2] * b[1], c[1] = a[2] * b[0] - a[0] * b[2], c[2] = a[0] * b[1] - a[1] * b[0];
                if (sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]) > 1e-4)
                    return true;
            }
    return false;
}

/* Every soft body's pins: at least three, off one line. */
static void expect_held(const plush_pmx_model *m, size_t first_soft_body)
{
    for (size_t s = first_soft_body; s < m->soft_body_count; s++) {
        const plush_pmx_soft_body *sb = &m->soft_bodies[s];
        assert_true(sb->pin_count >= 3);
        float(*p)[3] = malloc(sb->pin_count * sizeof *p);
        for (size_t i = 0; i < sb->pin_count; i++)
            memcpy(p[i], m->vertices[sb->pins[i]].position, sizeof p[i]);
        assert_true(spans((const float(*)[3])p, sb->pin_count));
        free(p);
    }
}

/* The cage plush run --cage makes of the named materials of m, asked for 60 triangles (it must succeed). */
static void cage_of_60(const plush_pmx_model *m, const char *const *names, size_t count, plush_arena *arena,
                       plush_cage_mesh *cage, plush_attach_details *details)
{
    plush_diag d;
    plush_diag_reset(&d);
    plush_cage_result made;
    assert_int_equal(plush_attach_make_cage(m, names, count, 60, arena, cage, &made, details, &d), PLUSH_OK);
}

/* The details a made cage leaves out (pieces under a twentieth of the largest): a bead hanging 0.3 below the
 * sheet's edge, within a cage edge of it, is bound to the cage beside it; a clip five units away stays on bone
 * skinning, its positions listed for the binding to leave out. */
static void test_details_near_the_cage_bound(void **state)
{
    (void)state;
    enum { N = 10 }; /* a sheet of N x N quads, 1 apart, in the x-y plane hanging below y = 0 */
    mesh_fx sheet = mesh_fx_grid(N, N);
    for (size_t v = 0; v < sheet.vertex_count; v++) {
        sheet.positions[v][1] = -(sheet.positions[v][2] + N / 2.0f);
        sheet.positions[v][2] = 0;
    }
    /* and two triangles of its own in the same material */
    uint32_t first = (uint32_t)sheet.vertex_count;
    size_t k = sheet.index_count;
    sheet.vertex_count += 6, sheet.index_count += 6;
    sheet.positions = realloc(sheet.positions, sheet.vertex_count * sizeof *sheet.positions);
    sheet.indices = realloc(sheet.indices, sheet.index_count * sizeof *sheet.indices);
    assert_non_null(sheet.positions);
    assert_non_null(sheet.indices);
    const float bits[6][3] = {{0, -N - 0.3f, 0},   {0.3f, -N - 0.3f, 0}, {0, -N - 0.6f, 0}, /* the bead */
                              {0, -N - 5.0f, 0},   {0.3f, -N - 5.0f, 0}, {0, -N - 5.3f, 0}}; /* the clip */
    for (uint32_t v = 0; v < 6; v++) {
        memcpy(sheet.positions[first + v], bits[v], sizeof bits[v]);
        sheet.indices[k++] = first + v;
    }
    plush_pmx_model *m = mesh_fx_model(1);
    mesh_fx_add_material(m, "sheet", &sheet, 0);
    mesh_fx_free(&sheet);
    plush_arena arena = {0};
    plush_cage_mesh cage;
    plush_attach_details details;
    const char *names[] = {"sheet"};
    cage_of_60(m, names, 1, &arena, &cage, &details);
    print_message("      sheet of %d faces caged in %zu: details %zu faces bound, %zu left on bones (%zu positions)\n",
                  2 * N * N, cage.triangle_count, details.bound_triangles, details.triangles, details.count);
    assert_int_equal(details.bound_triangles, 1);
    assert_int_equal(details.triangles, 1);
    assert_int_equal(details.count, 3);
    for (size_t i = 0; i < details.count; i++)
        assert_true(details.positions[i][1] < -N - 4.9f); /* the clip's */
    plush_arena_free(&arena);
    plush_pmx_free(m);
}

/* A layer of a larger piece (every vertex within a cage edge of it, a third of its size, moved by the same
 * bones): a 4 x 4 patch 0.1 in front of a 10 x 10 sheet, both on bone 0 -- a trim on a dress -- is left out
 * of the cage and bound to the cage beside it, so the sheet's cage is the whole cage (caged as pieces of
 * their own, Luka's trims with her dress became one wrap round both). The same patch on bone 1 -- a lock on
 * a chain of its own lying along the hair -- keeps a cage of its own. */
static void test_layer_of_a_piece_bound(void **state)
{
    (void)state;
    enum { N = 10 };
    for (int own_bone = 0; own_bone < 2; own_bone++) {
        mesh_fx sheet = mesh_fx_grid(N, N), trim = mesh_fx_grid(4, 4);
        for (size_t v = 0; v < sheet.vertex_count; v++) {
            sheet.positions[v][1] = -(sheet.positions[v][2] + N / 2.0f);
            sheet.positions[v][2] = 0;
        }
        for (size_t v = 0; v < trim.vertex_count; v++) {
            trim.positions[v][1] = -(trim.positions[v][2] + N / 2.0f);
            trim.positions[v][2] = 0.1f;
        }
        plush_pmx_model *m = mesh_fx_model(2);
        mesh_fx_add_material(m, "sheet", &sheet, 0);
        mesh_fx_add_material(m, "trim", &trim, own_bone);
        size_t trim_faces = trim.index_count / 3;
        mesh_fx_free(&sheet);
        mesh_fx_free(&trim);
        plush_arena arena = {0};
        plush_cage_mesh cage;
        plush_attach_details details;
        const char *names[] = {"sheet", "trim"};
        cage_of_60(m, names, 2, &arena, &cage, &details);
        size_t in_front = 0;
        for (size_t v = 0; v < cage.vertex_count; v++)
            in_front += cage.positions[v][2] > 0.05f;
        print_message("      patch on bone %d: cage %zu triangles, %zu of its vertices on the patch; %zu faces bound as "
                      "details\n", own_bone, cage.triangle_count, in_front, details.bound_triangles);
        if (own_bone == 0) {
            assert_int_equal(details.bound_triangles, trim_faces);
            assert_int_equal(in_front, 0);
        } else {
            assert_int_equal(details.bound_triangles, 0);
            assert_true(in_front > 0);
        }
        plush_arena_free(&arena);
        plush_pmx_free(m);
    }
}

/* Appends src to dst, each position scaled by s then moved by t. */
static void append_mesh(mesh_fx *dst, const mesh_fx *src, const float s[3], const float t[3])
{
    uint32_t first = (uint32_t)dst->vertex_count;
    dst->positions = realloc(dst->positions, (dst->vertex_count + src->vertex_count) * sizeof *dst->positions);
    dst->indices = realloc(dst->indices, (dst->index_count + src->index_count) * sizeof *dst->indices);
    assert_non_null(dst->positions);
    assert_non_null(dst->indices);
    for (size_t v = 0; v < src->vertex_count; v++)
        for (int k = 0; k < 3; k++)
            dst->positions[dst->vertex_count + v][k] = src->positions[v][k] * s[k] + t[k];
    for (size_t i = 0; i < src->index_count; i++)
        dst->indices[dst->index_count + i] = first + src->indices[i];
    dst->vertex_count += src->vertex_count, dst->index_count += src->index_count;
}

/* A material of many closed pieces -- 240 strands, each a closed spindle of 64 faces, hanging round a head
 * under an open scalp -- caged at 100 and 300 triangles: within 20% of each (each strand kept whole at the
 * fewest triangles a piece keeps would be several times the target). */
static void test_many_closed_pieces_on_target(void **state)
{
    (void)state;
    mesh_fx hair = {0}, strand = mesh_fx_uv_sphere(1.0f, 6, 6), scalp = mesh_fx_grid(12, 6.0f);
    append_mesh(&hair, &scalp, (const float[3]){1, 1, 1}, (const float[3]){0, 12.5f, 0});
    enum { STRANDS = 240 };
    for (int i = 0; i < STRANDS; i++) {
        double a = 2 * M_PI * (i % 60) / 60.0, r = 2.6 + 0.12 * (i / 60);
        append_mesh(&hair, &strand, (const float[3]){0.1f, 1.2f, 0.1f},
                    (const float[3]){(float)(r * cos(a)), 11.0f - 0.3f * (float)(i / 60), (float)(r * sin(a))});
    }
    plush_pmx_model *m = mesh_fx_model(2);
    mesh_fx_add_material(m, "hair", &hair, 1);
    mesh_fx_free(&hair), mesh_fx_free(&strand), mesh_fx_free(&scalp);
    const char *const names[] = {"hair"};
    for (size_t target = 100; target <= 300; target += 200) {
        plush_arena arena = {0};
        plush_diag d;
        plush_diag_reset(&d);
        plush_cage_mesh cage;
        plush_cage_result made;
        assert_int_equal(plush_attach_make_cage(m, names, 1, target, &arena, &cage, &made, NULL, &d), PLUSH_OK);
        plush_cage_topology topo;
        assert_int_equal(plush_cage_check(&cage, &topo, &d), PLUSH_OK);
        print_message("      %d strands and a scalp, target %zu: %zu triangles in %zu pieces%s\n", STRANDS, target,
                      cage.triangle_count, topo.pieces, made.wrapped ? " (one wrap)" : "");
        assert_true(5 * cage.triangle_count >= 4 * target && 5 * cage.triangle_count <= 6 * target);
        assert_true(topo.pieces * PLUSH_CAGE_PIECE_FLOOR <= cage.triangle_count); /* pieces a pin can hold */
        plush_arena_free(&arena);
    }
    plush_pmx_free(m);
}

/* The default cage size: a fifth of the surface's faces, its layers counted once, at least 32 (every face of a
 * smaller one) and at most 300 -- sheets of 18, 200, 800 and 3,200 faces and two layers of 800 at the same
 * places; each cage within 20% of its target, and the result names it. */
static void test_default_target_from_faces(void **state)
{
    (void)state;
    static const struct {
        unsigned grid;
        int layers;
        size_t target;
    } cases[] = {{3, 1, 18}, {10, 1, 40}, {20, 1, 160}, {40, 1, 300}, {20, 2, 160}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mesh_fx g = mesh_fx_grid(cases[i].grid, 4.0f);
        plush_pmx_model *m = mesh_fx_model(1);
        mesh_fx_add_material(m, "cape", &g, 0);
        if (cases[i].layers == 2)
            mesh_fx_add_material(m, "lining", &g, 0);
        mesh_fx_free(&g);
        const char *const names[] = {"cape", "lining"};
        plush_arena arena = {0};
        plush_diag d;
        plush_diag_reset(&d);
        plush_cage_mesh cage;
        plush_cage_result made;
        assert_int_equal(plush_attach_make_cage(m, names, (size_t)cases[i].layers, 0, &arena, &cage, &made, NULL, &d),
                         PLUSH_OK);
        print_message("      %u x %u sheet, %d layer%s: %zu faces once, target %zu, cage %zu triangles\n",
                      cases[i].grid, cases[i].grid, cases[i].layers, cases[i].layers > 1 ? "s" : "",
                      made.surface_triangles, made.target, cage.triangle_count);
        assert_int_equal(made.surface_triangles, 2u * cases[i].grid * cases[i].grid);
        assert_int_equal(made.target, cases[i].target);
        assert_true(5 * cage.triangle_count >= 4 * made.target && 5 * cage.triangle_count <= 6 * made.target);
        plush_arena_free(&arena);
        plush_pmx_free(m);
    }
}

/* A real model's test plane (blender2pmxem's test_02_vertex_64009.pmx: 127,008 faces, flat, its border locked
 * by the simplifier, which leaves it in short edges) caged at 300 and 100: within 20% of each. The short edges'
 * pass after the simplifier had taken it from 247 to 184 for 300, each pass against the longer mean edge the one
 * before left; the cage is now asked again with them collapsed in each try. (A regular grid made here, in
 * another vertex order, never fell short.) */
static void test_fine_sheet_on_target(void **state)
{
    (void)state;
    const char *path = SHARED_MMD "/blender2pmxem/test_02_vertex_64009.pmx";
    if (!cli_exists(path))
        skip();
    plush_diag d;
    plush_diag_reset(&d);
    plush_pmx_model *m = NULL;
    assert_int_equal(plush_pmx_read_file(path, NULL, &m, &d), PLUSH_OK);
    assert_true(m->material_count >= 1);
    const char *const names[] = {m->materials[0].name.s};
    for (size_t target = 100; target <= 300; target += 200) {
        plush_arena arena = {0};
        plush_diag_reset(&d);
        plush_cage_mesh cage;
        plush_cage_result made;
        assert_int_equal(plush_attach_make_cage(m, names, 1, target, &arena, &cage, &made, NULL, &d), PLUSH_OK);
        print_message("      the 64,009-vertex test plane (%zu faces), target %zu: %zu triangles\n",
                      made.surface_triangles, target, cage.triangle_count);
        assert_true(5 * cage.triangle_count >= 4 * target && 5 * cage.triangle_count <= 6 * target);
        plush_arena_free(&arena);
    }
    plush_pmx_free(m);
}

/* The toy's cage is one wrap (its pieces are closed), pinned at the head alone: a patch of cage vertices
 * above the neck following the head bone. */
static void test_toy_auto_pins(void **state)
{
    (void)state;
    plush_pmx_model *m = toy_fx_model(), *out = NULL;
    plush_arena arena = {0};
    plush_diag d;
    plush_diag_reset(&d);
    plush_cage_mesh cage;
    plush_cage_result made;
    assert_int_equal(plush_attach_make_cage(m, toy_materials, 4, 0, &arena, &cage, &made, NULL, &d), PLUSH_OK);
    assert_true(made.wrapped);
    plush_attach_options o = {.cage = &cage, .auto_mask = true, .auto_pins = true, .require_hold = true};
    plush_attach_result r;
    assert_int_equal(plush_attach(m, &o, &out, &r, &d), PLUSH_OK);
    assert_int_equal(r.pieces, 1);
    const plush_attach_piece *pi = &r.piece_info[0];
    assert_true(pi->pinned >= 3 && pi->auto_pinned == pi->pinned && !pi->spins && !pi->physics);
    assert_int_equal(pi->bone_count, 1);
    assert_int_equal(pi->bones[0], 1); /* "head" */
    assert_true(pi->pinned < pi->vertices / 2); /* the head's part, not the whole toy */
    const plush_pmx_soft_body *sb = &out->soft_bodies[r.soft_body];
    for (size_t i = 0; i < sb->pin_count; i++) {
        const plush_pmx_vertex *v = &out->vertices[sb->pins[i]];
        assert_true(v->position[1] > TOY_FX_NECK_Y - 0.3f);
        assert_int_equal(v->weight_type, PLUSH_PMX_BDEF1);
        assert_int_equal(v->bones[0], 1);
    }
    expect_held(out, r.soft_body);
    printf("toy: %zu-triangle wrap, %zu of %zu cage vertices pinned to the head\n", cage.triangle_count, pi->pinned,
           pi->vertices);
    plush_pmx_free(out);

    /* Pinned by hand by one vertex: it spins (a warning); the body's piece of an unwrapped cage pinned to
     * the head bone alone is held by nothing: refused with require_hold, a warning without it. */
    uint32_t one = 0;
    plush_attach_options o1 = {.cage = &cage, .pin_vertices = &one, .pin_vertex_count = 1, .require_hold = true};
    plush_diag_reset(&d);
    assert_int_equal(plush_attach(m, &o1, &out, &r, &d), PLUSH_OK);
    assert_true(r.piece_info[0].spins && d.warning_count >= 1);
    plush_pmx_free(out);
    plush_cage_mesh skin, pieces;
    assert_int_equal(plush_scene_cage_weld(m, toy_materials, 4, &arena, &skin, &d), PLUSH_OK);
    assert_int_equal(plush_cage_simplify(&skin, &(plush_cage_options){.target_triangles = 600}, &arena, &pieces, &made, &d),
                     PLUSH_OK);
    const char *head[] = {"head"};
    plush_attach_options o2 = {.cage = &pieces, .pin_bones = head, .pin_bone_count = 1, .require_hold = true};
    assert_int_equal(plush_attach(m, &o2, &out, &r, &d), PLUSH_E_UNHELD);
    assert_null(out);
    o2.require_hold = false;
    plush_diag_reset(&d);
    assert_int_equal(plush_attach(m, &o2, &out, &r, &d), PLUSH_OK);
    assert_int_equal(r.pieces, 6);
    plush_pmx_free(out);
    /* with automatic pins every piece hangs from something: the head, or the body bone's chain */
    plush_attach_options o3 = {.cage = &pieces, .auto_pins = true, .require_hold = true};
    plush_diag_reset(&d);
    assert_int_equal(plush_attach(m, &o3, &out, &r, &d), PLUSH_OK);
    for (size_t p = 0; p < r.pieces; p++)
        assert_true(r.piece_info[p].pinned >= 3 && !r.piece_info[p].spins);
    plush_pmx_free(out);
    plush_arena_free(&arena);
    plush_pmx_free(m);
}

/* A tuft standing up from the toy's head (a spindle 0.4 wide from inside the top of the head up to 3.2 units
 * above it, on the head bone, a held bone): its top touches nothing of the model, so it is pinned where it
 * meets the head, not along its tip; with the tip band given by hand wide enough to reach the head, it keeps
 * its top. */
static void test_standing_tuft_pins(void **state)
{
    (void)state;
    plush_pmx_model *m = toy_fx_model(), *out = NULL;
    mesh_fx tuft = mesh_fx_uv_sphere(1.0f, 12, 12);
    for (size_t i = 0; i < tuft.vertex_count; i++) {
        float *p = tuft.positions[i];
        p[0] *= 0.2f, p[2] *= 0.2f, p[1] = 11.2f + 1.6f * (p[1] + 1);
    }
    mesh_fx_add_material(m, "tuft", &tuft, 1);
    mesh_fx_free(&tuft);
    plush_arena arena = {0};
    plush_diag d;
    plush_diag_reset(&d);
    const char *const mats[] = {"tuft"};
    plush_cage_mesh cage;
    plush_cage_result made;
    assert_int_equal(plush_attach_make_cage(m, mats, 1, 0, &arena, &cage, &made, NULL, &d), PLUSH_OK);
    plush_attach_options o = {.cage = &cage, .auto_pins = true, .require_hold = true, .materials = mats,
                              .material_count = 1};
    plush_attach_result r;
    assert_int_equal(plush_attach(m, &o, &out, &r, &d), PLUSH_OK);
    assert_int_equal(r.pieces, 1);
    const plush_attach_piece *pi = &r.piece_info[0];
    assert_true(pi->from_contact && !pi->physics && !pi->spins && pi->pinned >= 3);
    assert_int_equal(pi->bone_count, 1);
    assert_int_equal(pi->bones[0], 1); /* "head" */
    const plush_pmx_soft_body *sb = &out->soft_bodies[r.soft_body];
    float highest = -INFINITY;
    for (size_t i = 0; i < sb->pin_count; i++)
        highest = fmaxf(highest, out->vertices[sb->pins[i]].position[1]);
    printf("tuft: %zu of %zu cage vertices pinned, the highest at y %.2f (the tuft from 11.2 to 14.4)\n", pi->pinned,
           pi->vertices, highest);
    assert_true(highest < 11.2f + 0.3f * 3.2f); /* its lowest part, not its tip */
    plush_pmx_free(out);

    /* a band reaching down to the head: the top touches, and the tuft hangs from its top as before */
    o.pin_band = 0.99f;
    assert_int_equal(plush_attach(m, &o, &out, &r, &d), PLUSH_OK);
    assert_false(r.piece_info[0].from_contact);
    plush_pmx_free(out);
    plush_arena_free(&arena);
    plush_pmx_free(m);
}

/* The toy written to a file of the test's folder named `name` (its path into path). */
static void toy_file(char *path, size_t size, const char *name)
{
    cli_tmp_path(path, size, name);
    plush_diag d;
    plush_diag_reset(&d);
    plush_pmx_model *m = toy_fx_model();
    assert_int_equal(plush_pmx_write_file(m, NULL, path, &d), PLUSH_OK);
    plush_pmx_free(m);
}

/* A caged part whose vertices carry no usable weight (BDEF4, every weight 0: no held bone and no chain to hang
 * from) is pinned where it meets the rest of the model, following the bones there, instead of being refused
 * as a piece that would fall. */
static void test_weightless_piece_is_pinned(void **state)
{
    (void)state;
    char model[300], out[300];
    cli_tmp_path(model, sizeof model, "toy_weightless.pmx");
    cli_tmp_path(out, sizeof out, "weightless");
    plush_pmx_model *m = toy_fx_model();
    /* the arms: the third material */
    size_t start = 0, arms = 2;
    for (size_t i = 0; i < arms; i++)
        start += (size_t)m->materials[i].index_count;
    for (size_t i = start; i < start + (size_t)m->materials[arms].index_count; i++) {
        plush_pmx_vertex *v = &m->vertices[m->indices[i]];
        v->weight_type = PLUSH_PMX_BDEF4;
        for (int k = 0; k < 4; k++)
            v->bones[k] = k < 3 ? k : -1, v->weights[k] = 0;
    }
    plush_diag d;
    plush_diag_reset(&d);
    assert_int_equal(plush_pmx_write_file(m, NULL, model, &d), PLUSH_OK);
    plush_pmx_free(m);
    cli_result r;
    CLI_RUN(&r, "run", model, "--cage", "arms:60", "--frames", "3", "-o", out);
    cli_expect_code(&r, 0);
    assert_null(strstr(r.err, "would fall"));
    assert_non_null(strstr(r.out, "automatically (where it meets the model)"));
    cli_result_free(&r);
}

/* A piece more than half pinned is a warning with the way out: a narrower band, or, for a piece under six
 * vertices (three pins hold any piece), none -- it follows its bones. */
static void test_mostly_pinned_warnings(void **state)
{
    (void)state;
    char model[300], obj[300], soft[300];
    toy_file(model, sizeof model, "toy_pins.pmx");
    cli_tmp_path(obj, sizeof obj, "toy_pins_cage.obj");
    cli_tmp_path(soft, sizeof soft, "toy_pins_soft.pmx");
    FILE *f = fopen(obj, "w");
    assert_non_null(f);
    /* an octahedron round the head (6 vertices), and one triangle beside it */
    fputs("v 0 11.6 0\nv 1.6 10 0\nv 0 10 1.6\nv -1.6 10 0\nv 0 10 -1.6\nv 0 8.4 0\n"
          "f 1 2 3\nf 1 3 4\nf 1 4 5\nf 1 5 2\nf 6 3 2\nf 6 4 3\nf 6 5 4\nf 6 2 5\n"
          "v 1.5 10.5 0.2\nv 1.8 10.5 0.2\nv 1.5 10.8 0.2\nf 7 8 9\n",
          f);
    fclose(f);
    cli_result r;
    CLI_RUN(&r, "attach", model, "--proxy", obj, "--materials", "head", "-o", soft);
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.err, "cage piece 2 has 3 of its 3 vertices pinned"));
    assert_non_null(strstr(r.err, "fewer than six"));
    assert_null(strstr(r.err, "cage piece 1 has")); /* three of six: half, no more */
    cli_result_free(&r);
    CLI_RUN(&r, "attach", model, "--proxy", obj, "--materials", "head", "--pin-band", "0.9", "-o", soft);
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.err, "cage piece 1 has"));
    assert_non_null(strstr(r.err, "a narrower --pin-band frees more"));
    cli_result_free(&r);
    /* a band given is pinned whole, as --help says: 1 pins every vertex of the piece (the default's 40%
     * is the default's) */
    CLI_RUN(&r, "attach", model, "--proxy", obj, "--materials", "head", "--pin-band", "1", "-o", soft);
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.out, "6 pinned (100%)"));
    cli_result_free(&r);
}

/* The worst (largest) value of a column over the rows, NAN when the column is absent. */
static double worst(const char *csv, const char *name, size_t *rows)
{
    int c = cli_csv_column(csv, name);
    *rows = 0;
    if (c < 0)
        return NAN;
    double w = -INFINITY;
    for (const char *line = strchr(csv, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        const char *p = line + 1;
        for (int k = 0; k < c && p; k++)
            p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
        assert_non_null(p);
        double x = strtod(p, NULL);
        assert_true(isfinite(x));
        w = x > w ? x : w;
        (*rows)++;
    }
    return w;
}

/* The plush surface's bar at every frame of OUT/quality.csv: p99.9 strain at most 1.5, at most 0.5% of
 * the edges beyond 1.5x, crease p99 within 20 degrees of rest. Prints the worst figures; the frame count. */
static size_t expect_plush_surface(const char *out, const char *what)
{
    char csv[400];
    snprintf(csv, sizeof csv, "%s/quality.csv", out);
    size_t len, rows;
    char *text = cli_read_all(csv, &len);
    assert_non_null(text);
    double p999 = worst(text, "surface_strain_p999", &rows), outside = worst(text, "surface_strain_outside", &rows),
           crease = worst(text, "surface_crease_p99", &rows), cage = worst(text, "cage_strain_p999", &rows),
           cage_crease = worst(text, "cage_crease_p99", &rows);
    printf("%s, worst over %zu frames: surface strain p99.9 %g, beyond 1.5x %g, crease p99 %g deg; cage strain "
           "p99.9 %g, crease p99 %g deg\n",
           what, rows, p999, outside, crease, cage, cage_crease);
    assert_true(p999 <= 1.5 && outside <= 0.005 && crease <= 20);
    free(text);
    return rows;
}

/* The stress motion on the toy's root: two turns about y at 720 degrees a second (keys every 3 frames, 72
 * degrees apart), then a jump (up 3 units in 8 frames) and a landing (down in 6), held to frame 70 (71 frames). */
static plush_vmd_motion *stress_motion(void)
{
    plush_vmd_motion *v = plush_vmd_create();
    assert_non_null(v);
    enum { KEYS = 11 + 3 + 1 };
    v->bone_keys = plush_arena_array(plush_vmd_arena(v), KEYS, sizeof *v->bone_keys);
    assert_non_null(v->bone_keys);
    v->bone_key_count = 0;
    for (int k = 0; k < KEYS; k++) {
        plush_vmd_bone_key *key = &v->bone_keys[v->bone_key_count++];
        memset(key, 0, sizeof *key);
        key->name = (plush_str){.s = "root", .len = 4};
        uint32_t frame = k <= 10 ? (uint32_t)(3 * k) : k == 11 ? 38 : k == 12 ? 44 : k == 13 ? 50 : 70;
        key->frame = frame;
        double a = k <= 10 ? 72.0 * k * M_PI / 180.0 : 0; /* 720 degrees by frame 30: back where it began */
        key->rotation[1] = (float)sin(a / 2), key->rotation[3] = (float)cos(a / 2);
        key->translation[1] = k == 11 ? 3.0f : 0.0f;
        pmx_fx_linear_curves(key->interpolation);
    }
    return v;
}

/* A ribbon hanging behind the toy from its head to below its body (2 x ROWS quads), its upper rows weighted to
 * the head (held), its lower rows to the body (moved by the body's rigid body: a physics bone's chain). */
enum { RIBBON_ROWS = 28 };
static mesh_fx ribbon(void)
{
    mesh_fx r = {.vertex_count = 2 * (RIBBON_ROWS + 1), .index_count = 6 * RIBBON_ROWS};
    r.positions = malloc(r.vertex_count * sizeof *r.positions);
    r.indices = malloc(r.index_count * sizeof *r.indices);
    assert_non_null(r.positions);
    assert_non_null(r.indices);
    for (uint32_t y = 0; y <= RIBBON_ROWS; y++)
        for (uint32_t x = 0; x < 2; x++) {
            float *p = r.positions[2 * y + x];
            p[0] = 0.5f * (float)x - 0.25f, p[1] = 10.5f - 0.25f * (float)y, p[2] = 1.8f;
        }
    for (uint32_t y = 0, i = 0; y < RIBBON_ROWS; y++) {
        uint32_t a = 2 * y, b = a + 1, c = a + 2, d = a + 3;
        uint32_t f[6] = {a, c, d, a, d, b};
        for (int k = 0; k < 6; k++)
            r.indices[i++] = f[k];
    }
    return r;
}

/* Runs the toy with the ribbon and its cage (the ribbon's faces in rows `keep`) attached with automatic pins,
 * bridged first when `bridge`, through the stress motion; the largest stretch of the ribbon's detailed edges
 * (surface_strain_max, and across cage pieces crossing_stretch_max: 1 when none crosses) over the frames, and
 * the cage's pieces. */
static void run_ribbon(bool bridge, size_t *pieces, double *surface, double *crossing)
{
    plush_pmx_model *m = toy_fx_model(), *out = NULL;
    mesh_fx rb = ribbon();
    size_t mat = mesh_fx_add_material(m, "strand", &rb, 1);
    /* the lower rows on the body bone */
    size_t first = m->vertex_count - rb.vertex_count;
    for (size_t v = first; v < m->vertex_count; v++)
        if (m->vertices[v].position[1] < TOY_FX_NECK_Y)
            m->vertices[v].bones[0] = 2;
    (void)mat;
    /* the cage: the ribbon's faces but those of rows 12..15 (a strand whose middle the simplifier thinned
     * away), on the ribbon's own positions */
    uint32_t tri[2 * RIBBON_ROWS][3];
    unsigned idx[2 * 3 * 2 * RIBBON_ROWS + 6];
    size_t n = 0;
    for (uint32_t f = 0; f < 2 * RIBBON_ROWS; f++) {
        for (int k = 0; k < 3; k++)
            tri[f][k] = rb.indices[3 * f + (uint32_t)k];
        uint32_t row = f / 2;
        if (row < 12 || row >= 16)
            for (int k = 0; k < 3; k++)
                idx[n++] = tri[f][k];
    }
    plush_cage_mesh skin = {.vertex_count = rb.vertex_count, .positions = rb.positions, .triangle_count = 2 * RIBBON_ROWS,
                            .triangles = tri};
    if (bridge)
        assert_true(plush__cage_bridge_pieces(&skin, idx, &n, sizeof idx / sizeof idx[0]));
    /* the cage keeps the vertices its faces use */
    int32_t remap[2 * (RIBBON_ROWS + 1)];
    float pos[2 * (RIBBON_ROWS + 1)][3];
    uint32_t faces[2 * RIBBON_ROWS + 2][3];
    size_t nv = 0;
    for (size_t v = 0; v < rb.vertex_count; v++)
        remap[v] = -1;
    for (size_t i = 0; i < n; i++)
        if (remap[idx[i]] < 0) {
            memcpy(pos[nv], rb.positions[idx[i]], sizeof pos[nv]);
            remap[idx[i]] = (int32_t)nv++;
        }
    for (size_t i = 0; i < n; i++)
        faces[i / 3][i % 3] = (uint32_t)remap[idx[i]];
    plush_cage_mesh cage = {.vertex_count = nv, .positions = pos, .triangle_count = n / 3, .triangles = faces};
    const char *const mats[] = {"strand"};
    plush_attach_options o = {.cage = &cage, .auto_mask = true, .auto_pins = true, .require_hold = true,
                              .materials = mats, .material_count = 1};
    plush_attach_result r;
    plush_diag d;
    plush_diag_reset(&d);
    assert_int_equal(plush_attach(m, &o, &out, &r, &d), PLUSH_OK);
    *pieces = r.pieces;
    char model[300], motion[300], dir[300];
    cli_tmp_path(model, sizeof model, bridge ? "ribbon1.pmx" : "ribbon2.pmx");
    cli_tmp_path(motion, sizeof motion, "stress.vmd");
    cli_tmp_path(dir, sizeof dir, bridge ? "ribbon1" : "ribbon2");
    assert_int_equal(plush_pmx_write_file(out, &(plush_pmx_write_options){.version = PLUSH_PMX_WRITE_21}, model, &d),
                     PLUSH_OK);
    plush_vmd_motion *v = stress_motion();
    assert_int_equal(plush_vmd_write_file(v, NULL, motion, &d), PLUSH_OK);
    plush_vmd_free(v);
    plush_pmx_free(out);
    plush_pmx_free(m);
    mesh_fx_free(&rb);
    cli_result res;
    CLI_RUN(&res, "run", model, "--materials", "strand", "--motion", motion, "--export", "quality", "-o", dir);
    cli_expect_code(&res, 0);
    assert_null(strstr(res.out, "blow-ups"));
    cli_result_free(&res);
    char csv_path[400];
    snprintf(csv_path, sizeof csv_path, "%s/quality.csv", dir);
    size_t len, rows, rows2 = 0;
    char *text = cli_read_all(csv_path, &len);
    assert_non_null(text);
    *surface = worst(text, "surface_strain_max", &rows);
    /* the crossing column, empty where no edge crosses */
    int c = cli_csv_column(text, "crossing_stretch_max");
    assert_true(c >= 0);
    *crossing = 1;
    for (const char *line = strchr(text, '\n'); line && line[1]; line = strchr(line + 1, '\n'), rows2++) {
        const char *p = line + 1;
        for (int k = 0; k < c && p; k++)
            p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
        assert_non_null(p);
        if (*p != '\n' && *p != ',')
            *crossing = fmax(*crossing, strtod(p, NULL));
    }
    assert_int_equal(rows, 71); /* frames 0 .. 70 */
    assert_int_equal(rows2, 71);
    free(text);
}

/* One surface, one cage: a strand whose cage came in two pieces -- the upper one hung from the head and left
 * to plush, the lower one on the body's physics bone, pinned to its chain -- through a 720 degree-a-second spin,
 * a jump and a landing. Bridged into one piece (as plush's cages are, plush__cage_bridge_pieces), every detailed
 * edge of the strand stays within 1.5x of its rest length at every frame, those that crossed between the pieces
 * with them; the two pieces as they were are run too, and their crossing edges' stretch printed beside it. */
static void test_two_piece_strand_stress(void **state)
{
    (void)state;
    size_t pieces[2];
    double surface[2], crossing[2];
    run_ribbon(false, &pieces[0], &surface[0], &crossing[0]);
    run_ribbon(true, &pieces[1], &surface[1], &crossing[1]);
    print_message("      two-piece strand through a spin and a jump: as two pieces, edges across them stretched at most "
                  "%.3fx (every edge %.3fx); bridged into %zu piece, every edge at most %.3fx\n",
                  crossing[0], surface[0], pieces[1], surface[1]);
    assert_int_equal(pieces[0], 2);
    assert_true(crossing[0] > 1); /* the edges across the two pieces were measured */
    assert_int_equal(pieces[1], 1);
    assert_true(crossing[1] == 1); /* none crosses */
    assert_true(surface[1] <= 1.5);
}

/* A tail modelled as a flat fan sticking back and up at 45 degrees from the lower back, weighted to the hips
 * (the author gave it no physics), caged by plush run with no motion: its automatic pins hold it where it
 * touches the body, not at its top (its tip), and its shape memory is no stronger than a pendulum of its
 * length allows, so within 60 frames it droops under gravity -- its tip a quarter of its length or more lower
 * -- with its root kept on the body. Pinned at its tip, as every piece hung from its top before, its root fell
 * 1.0 unit off the body; pinned at its root with the preset's memory, it kept its angle (the tip 0.17 lower). */
enum { FAN_ROWS = 24, FAN_COLS = 8 };
static mesh_fx fan(float root_y, float root_z)
{
    mesh_fx r = {.vertex_count = (FAN_ROWS + 1) * (FAN_COLS + 1), .index_count = 6 * FAN_ROWS * FAN_COLS};
    r.positions = malloc(r.vertex_count * sizeof *r.positions);
    r.indices = malloc(r.index_count * sizeof *r.indices);
    assert_non_null(r.positions);
    assert_non_null(r.indices);
    const float length = 4.0f, c = 0.70710678f;
    for (uint32_t y = 0; y <= FAN_ROWS; y++)
        for (uint32_t x = 0; x <= FAN_COLS; x++) {
            float along = length * (float)y / FAN_ROWS, width = 0.5f + 1.5f * (float)y / FAN_ROWS;
            float *p = r.positions[y * (FAN_COLS + 1) + x];
            p[0] = width * ((float)x / FAN_COLS - 0.5f), p[1] = root_y + c * along, p[2] = root_z + c * along;
        }
    for (uint32_t y = 0, i = 0; y < FAN_ROWS; y++)
        for (uint32_t x = 0; x < FAN_COLS; x++) {
            uint32_t a = y * (FAN_COLS + 1) + x, b = a + 1, d = a + FAN_COLS + 1, e = d + 1;
            uint32_t f[6] = {a, d, e, a, e, b};
            for (int k = 0; k < 6; k++)
                r.indices[i++] = f[k];
        }
    return r;
}

static void test_tail_droops(void **state)
{
    (void)state;
    /* bones: root, hips at y 5; the body a sphere of radius 1.5 round the hips, following them */
    plush_pmx_model *m = mesh_fx_model(2);
    m->bones[1].position[1] = 5;
    mesh_fx body = mesh_fx_uv_sphere(1.5f, 16, 24);
    for (size_t i = 0; i < body.vertex_count; i++)
        body.positions[i][1] += 5;
    mesh_fx_add_material(m, "body", &body, 1);
    mesh_fx tail = fan(5.0f, 1.4f);
    mesh_fx_add_material(m, "tail", &tail, 1);
    size_t body_count = body.vertex_count, tail_count = tail.vertex_count;
    plush_pmx_rigid_body *rb = pmx_fx_rigid_bodies(m, 1);
    rb[0].name = rb[0].name_en = pmx_fx_str(m, "hips");
    rb[0].bone = 1, rb[0].mode = PLUSH_PMX_RIGID_FOLLOW_BONE, rb[0].shape = PLUSH_PMX_RIGID_SPHERE;
    rb[0].size[0] = 1.5f, rb[0].position[1] = 5, rb[0].mask = 0xFFFF;
    char model[300], dir[300];
    cli_tmp_path(model, sizeof model, "tail.pmx");
    cli_tmp_path(dir, sizeof dir, "tail");
    plush_diag d;
    plush_diag_reset(&d);
    assert_int_equal(plush_pmx_write_file(m, &(plush_pmx_write_options){.version = PLUSH_PMX_WRITE_21}, model, &d),
                     PLUSH_OK);
    mesh_fx_free(&body);
    mesh_fx_free(&tail);
    size_t tip = FAN_ROWS * (FAN_COLS + 1) + FAN_COLS / 2, root = FAN_COLS / 2;
    float tip_rest[3], root_rest[3];
    memcpy(tip_rest, m->vertices[m->vertex_count - tail_count + tip].position, sizeof tip_rest);
    memcpy(root_rest, m->vertices[m->vertex_count - tail_count + root].position, sizeof root_rest);
    plush_pmx_free(m);
    cli_result r;
    CLI_RUN(&r, "run", model, "--cage", "tail:100", "--frames", "61", "--every", "60", "--export", "obj", "-o", dir);
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.out, "1 piece"));
    cli_result_free(&r);
    /* the OBJ frames hold the model's vertices in order: the body's, then the tail's */
    char obj[400];
    snprintf(obj, sizeof obj, "%s/frames/frame_00060.obj", dir);
    size_t n = 0;
    float(*at)[3] = cli_obj_positions(obj, &n);
    assert_int_equal(n, body_count + tail_count);
    const float *tip_at = at[body_count + tip], *root_at = at[body_count + root];
    double root_moved = sqrt(pow(root_at[0] - root_rest[0], 2) + pow(root_at[1] - root_rest[1], 2) +
                             pow(root_at[2] - root_rest[2], 2));
    print_message("      45-degree tail after 60 frames: root moved %.3f, tip %.3f -> %.3f high\n", root_moved,
                  (double)tip_rest[1], (double)tip_at[1]);
    assert_true(root_moved < 0.25);                   /* held where it touches the body (a fan 4 long) */
    assert_true(tip_rest[1] - tip_at[1] >= 1.0f);      /* drooped by a quarter of its length or more */
    free(at);
}

/* The one command on the toy: plush run --cage makes, pins and runs the cage, 300 frames hung by the head
 * and swung; the model file is untouched. */
static void test_toy_run(void **state)
{
    (void)state;
    char model[300], motion[300], out[300];
    toy_file(model, sizeof model, "toy.pmx");
    cli_tmp_path(motion, sizeof motion, "swing.vmd");
    cli_tmp_path(out, sizeof out, "toy_run");
    plush_diag d;
    plush_diag_reset(&d);
    plush_vmd_motion *v = toy_fx_swing(300);
    assert_int_equal(plush_vmd_write_file(v, NULL, motion, &d), PLUSH_OK);
    plush_vmd_free(v);
    size_t before_len, after_len;
    char *before = cli_read_all(model, &before_len);

    cli_result r;
    CLI_RUN(&r, "run", model, "--cage", "head,body,arms,legs", "--motion", motion, "--frames", "300", "--export",
            "quality,pmx+vmd", "-o", out);
    cli_expect_code(&r, 0);
    assert_null(strstr(r.out, "blow-ups"));
    printf("%s", r.out);
    cli_result_free(&r);
    char *after = cli_read_all(model, &after_len);
    assert_int_equal(before_len, after_len);
    assert_memory_equal(before, after, before_len);
    free(before);
    free(after);

    assert_true(expect_plush_surface(out, "toy swing") >= 300);

    /* refused: a model with a TriMesh soft body already, and a material the model lacks */
    char soft[300], out2[300];
    cli_tmp_path(soft, sizeof soft, "toy_soft.pmx");
    cli_tmp_path(out2, sizeof out2, "toy_run2");
    CLI_RUN(&r, "attach", model, "--proxy", model, "-o", soft);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    CLI_RUN(&r, "run", soft, "--cage", "head", "--frames", "2", "-o", out2);
    cli_expect_one_error_line(&r);
    cli_result_free(&r);
    CLI_RUN(&r, "run", model, "--cage", "tail:200", "--frames", "2", "-o", out2);
    cli_expect_one_error_line(&r);
    cli_result_free(&r);
    assert_false(cli_exists(out2));
}

/* Head position of Alicia at frame f (the head is not on physics: plush pose gives it as plush run has it). */
static void head_at(int f, float p[3])
{
    char csv[300], frame[16];
    cli_tmp_path(csv, sizeof csv, "bones.csv");
    snprintf(frame, sizeof frame, "%d", f);
    cli_result r;
    CLI_RUN(&r, "pose", ALICIA, "--motion", MOTION_0046, "--frame", frame, "--bones", csv);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    size_t len;
    char *text = cli_read_all(csv, &len);
    char *at = strstr(text, ",\"頭\",");
    if (!at)
        at = strstr(text, ",頭,");
    assert_non_null(at);
    at = strchr(at + 1, ',') + 1; /* past the name */
    for (int k = 0; k < 3; k++) {
        p[k] = strtof(at, &at);
        at++;
    }
    free(text);
}

/* The largest distance of a cage PLY's nodes from p. */
static double farthest(const char *path, const float p[3])
{
    size_t len = 0;
    char *data = cli_read_all(path, &len);
    assert_non_null(data);
    char *end = strstr(data, "end_header\n"), *line = strstr(data, "element vertex ");
    assert_true(end && line);
    size_t n = strtoul(line + 15, NULL, 10), off = (size_t)(end - data) + 11;
    assert_true(off + n * 12 <= len);
    double most = 0;
    for (size_t i = 0; i < n; i++) {
        float q[3];
        memcpy(q, data + off + 12 * i, sizeof q);
        double dx = (double)q[0] - p[0], dy = (double)q[1] - p[1], dz = (double)q[2] - p[2];
        assert_true(isfinite(dx) && isfinite(dy) && isfinite(dz));
        double dist = sqrt(dx * dx + dy * dy + dz * dz);
        most = dist > most ? dist : most;
    }
    free(data);
    return most;
}

/* Alicia's hair, the README flow without --pin-bone: every piece held by at least three non-collinear
 * pins, and over the dance the hair cage stays around the head. */
static void test_alicia_hair_auto_pins(void **state)
{
    (void)state;
    if (!have_alicia())
        skip();
    char soft[300], out[300], ply[400];
    cli_tmp_path(soft, sizeof soft, "alicia_auto.pmx");
    cli_tmp_path(out, sizeof out, "alicia_auto_run");
    cli_result r;
    /* the head alone leaves the braid free: refused, nothing written */
    CLI_RUN(&r, "attach", ALICIA, "--proxy", "proxies/alicia_hair_cage.obj", "--pin-bone", "頭", "-o", soft);
    cli_expect_one_error_line(&r);
    cli_result_free(&r);
    assert_false(cli_exists(soft));

    CLI_RUN(&r, "attach", ALICIA, "--proxy", "proxies/alicia_hair_cage.obj", "--preset", "plush", "-o", soft);
    cli_expect_code(&r, 0);
    printf("%s", r.out);
    assert_null(strstr(r.err, "spin"));
    /* the summary's range of new model vertices: first .. first + added - 1 (241 cage vertices add 247) */
    const char *range = strstr(r.out, "model vertices ");
    assert_non_null(range);
    char *dots;
    unsigned long lo = strtoul(range + 15, &dots, 10), hi = strtoul(dots + 2, NULL, 10);
    cli_result_free(&r);
    plush_diag d;
    plush_diag_reset(&d);
    plush_pmx_model *m = NULL;
    assert_int_equal(plush_pmx_read_file(soft, NULL, &m, &d), PLUSH_OK);
    assert_int_equal(m->soft_body_count, 10);
    assert_int_equal(lo, 22311);
    assert_int_equal(hi, m->vertex_count - 1);
    assert_int_equal(hi - lo + 1, 247);
    expect_held(m, 0);
    plush_pmx_free(m);

    CLI_RUN(&r, "run", soft, "--motion", MOTION_0046, "--frames", "120", "--materials", "hair", "--export",
            "cage,quality", "--every", "20", "-o", out);
    cli_expect_code(&r, 0);
    assert_null(strstr(r.out, "blow-ups"));
    cli_result_free(&r);
    float head[3];
    head_at(0, head);
    snprintf(ply, sizeof ply, "%s/frames/cage_00000.ply", out);
    double rest = farthest(ply, head), most = 0;
    for (int f = 20; f < 120; f += 20) {
        head_at(f, head);
        snprintf(ply, sizeof ply, "%s/frames/cage_%05d.ply", out, f);
        double x = farthest(ply, head);
        most = x > most ? x : most;
    }
    printf("alicia hair, automatic pins: the cage reaches %.3f units from the head at rest, at most %.3f over "
           "120 frames\n",
           rest, most);
    assert_true(most < rest + 2.0); /* on the head, not falling away (Alicia is ~20 units tall) */

    /* The plush surface over 300 frames of a standard-skeleton motion that carries and tilts the whole
     * model by its centre bone (so the hair swings): the surface bar at every frame. */
    char motion[300], out3[300];
    cli_tmp_path(motion, sizeof motion, "centre_swing.vmd");
    cli_tmp_path(out3, sizeof out3, "alicia_swing_run");
    plush_vmd_motion *v = toy_fx_swing_bone("センター", 300);
    assert_int_equal(plush_vmd_write_file(v, NULL, motion, &d), PLUSH_OK);
    plush_vmd_free(v);
    CLI_RUN(&r, "run", soft, "--motion", motion, "--materials", "hair", "--export", "quality", "-o", out3);
    cli_expect_code(&r, 0);
    assert_null(strstr(r.out, "blow-ups"));
    cli_result_free(&r);
    assert_true(expect_plush_surface(out3, "alicia hair swung by the centre bone") >= 300);

    /* The same in one command. */
    char out2[300];
    cli_tmp_path(out2, sizeof out2, "alicia_cage_run");
    CLI_RUN(&r, "run", ALICIA, "--cage", "hair:300", "--motion", MOTION_0046, "--frames", "30", "--export", "quality", "-o",
            out2);
    cli_expect_code(&r, 0);
    assert_null(strstr(r.out, "blow-ups"));
    cli_result_free(&r);
}

/* A 10 x 10 sheet 2 units wide (200 triangles: a cage of all of them) whose left half hangs from bone 0 "root"
 * and right half from bone 1 "flap", and a motion of two linear keys on one of them (frames 0 and `last`; the
 * second key: `move` along x, `turn` radians about z). */
static plush_pmx_model *flap_sheet(void)
{
    plush_pmx_model *m = mesh_fx_model(2);
    m->bones[0].name = pmx_fx_str(m, "root");
    m->bones[1].name = pmx_fx_str(m, "flap");
    mesh_fx g = mesh_fx_grid(10, 2.0f);
    mesh_fx_add_material(m, "sheet", &g, 0);
    size_t first = m->vertex_count - g.vertex_count;
    for (size_t v = first; v < m->vertex_count; v++)
        if (m->vertices[v].position[0] > 0.01f)
            m->vertices[v].bones[0] = 1;
    mesh_fx_free(&g);
    return m;
}

static plush_vmd_motion *flap_motion(const char *bone, uint32_t last, float move, double turn)
{
    plush_vmd_motion *v = plush_vmd_create();
    assert_non_null(v);
    v->bone_keys = plush_arena_array(plush_vmd_arena(v), 2, sizeof *v->bone_keys);
    assert_non_null(v->bone_keys);
    v->bone_key_count = 2;
    for (int k = 0; k < 2; k++) {
        plush_vmd_bone_key *key = &v->bone_keys[k];
        memset(key, 0, sizeof *key);
        key->name = (plush_str){.s = bone, .len = strlen(bone)};
        key->frame = k ? last : 0;
        key->translation[0] = k ? move : 0.0f;
        double a = k ? turn : 0;
        key->rotation[2] = (float)sin(a / 2), key->rotation[3] = (float)cos(a / 2);
        pmx_fx_linear_curves(key->interpolation);
    }
    return v;
}

/* Writes m (PMX 2.1) and v into the suite's folder as STEM.pmx and STEM.vmd and frees both; out names STEM_run. */
static void flap_files(plush_pmx_model *m, plush_vmd_motion *v, const char *stem, char model[300], char motion[300],
                       char out[300])
{
    char name[64];
    snprintf(name, sizeof name, "%s.pmx", stem);
    cli_tmp_path(model, 300, name);
    snprintf(name, sizeof name, "%s.vmd", stem);
    cli_tmp_path(motion, 300, name);
    snprintf(name, sizeof name, "%s_run", stem);
    cli_tmp_path(out, 300, name);
    plush_diag d;
    plush_diag_reset(&d);
    assert_int_equal(plush_pmx_write_file(m, &(plush_pmx_write_options){.version = PLUSH_PMX_WRITE_21}, model, &d),
                     PLUSH_OK);
    assert_int_equal(plush_vmd_write_file(v, NULL, motion, &d), PLUSH_OK);
    plush_vmd_free(v);
    plush_pmx_free(m);
}

/* The summary's hints name what changes the run they follow: a sheet weighted half to a bone that turns by
 * 120 degrees, its middle torn by bone skinning alone, shown in mode bones with --cage (the author's part set
 * beside plush's) misses the surface bar, and the hint of a cage of half the triangles -- which bones mode never
 * skins to -- is not given; in proxy mode the same cage is the one skinned, and the hint is given when it misses. */
static void test_bar_hints_follow_the_mode(void **state)
{
    (void)state;
    char model[300], motion[300], out[300];
    flap_files(flap_sheet(), flap_motion("flap", 10, 0.0f, 120.0 * M_PI / 180.0), "flap", model, motion, out);
    static const char half[] = "a cage of half the triangles often meets it";
    cli_result r;
    CLI_RUN(&r, "run", model, "--cage", "sheet", "--mode", "bones", "--motion", motion, "--export", "quality", "-o", out);
    cli_expect_code(&r, 0);
    assert_non_null(strstr(r.out, "frames miss it")); /* the tear is there to be hinted at */
    assert_null(strstr(r.out, half));
    assert_null(strstr(r.out, "--physics-hz 120"));
    cli_result_free(&r);
    /* the sheet's 200 faces whole (by default its cage is a fifth of them, too small for the hint) */
    CLI_RUN(&r, "run", model, "--cage", "sheet:200", "--motion", motion, "--export", "quality", "-o", out);
    cli_expect_code(&r, 0);
    assert_true((strstr(r.out, "frames miss it") != NULL) == (strstr(r.out, half) != NULL));
    cli_result_free(&r);
}

/* The swing bar leaves out the frames where the author's own part tears: a sheet whose left half hangs from
 * "root" (a rigid body that follows it) and whose right half from "flap", driven by a rigid body no joint
 * holds, so the author's physics drops the right half away and tears the sheet down its middle while the
 * motion carries "root" along. The summary counts the frames torn as quality.csv's author_surface_strain
 * columns have them and judges the swing over the others; frame 0, before the drop, is whole. plush's sheet,
 * following the author's physics, follows it only as far as a whole surface can (plush__follow_whole): without
 * that it tore with the author's at 36 of the 40 frames (p99.9 strain 12.3); scaled by the frame before's figure,
 * at the one where the drop begins; scaled by the same frame's (the offsets' own), at none. */
static void test_swing_bar_leaves_torn_frames_out(void **state)
{
    (void)state;
    plush_pmx_model *m = flap_sheet();
    plush_pmx_rigid_body *rb = pmx_fx_rigid_bodies(m, 2);
    for (int k = 0; k < 2; k++) { /* small boxes above the sheet, apart from it and from each other */
        rb[k].bone = k;
        rb[k].shape = PLUSH_PMX_RIGID_BOX;
        rb[k].size[0] = rb[k].size[1] = rb[k].size[2] = 0.1f;
        rb[k].position[0] = k ? 0.5f : -0.5f, rb[k].position[1] = 1.0f, rb[k].position[2] = 0;
        rb[k].mode = k ? PLUSH_PMX_RIGID_PHYSICS : PLUSH_PMX_RIGID_FOLLOW_BONE;
        rb[k].group = (uint8_t)k;
        rb[k].mask = 0; /* collides with nothing */
    }
    char model[300], motion[300], out[300], csv_path[400];
    flap_files(m, flap_motion("root", 20, 2.0f, 0), "torn", model, motion, out); /* "root" carried 2 units along x */
    snprintf(csv_path, sizeof csv_path, "%s/quality.csv", out);
    cli_result r;
    CLI_RUN(&r, "run", model, "--cage", "sheet", "--motion", motion, "--frames", "40", "--export", "quality", "-o",
            out);
    cli_expect_code(&r, 0);
    size_t len = 0;
    char *csv = cli_read_all(csv_path, &len);
    assert_non_null(csv);
    double p999[64];
    assert_int_equal(characters_column(csv, "author_surface_strain_p999", p999, 64), 40);
    assert_true(p999[0] < 1.01); /* at rest the author's sheet is whole */
    size_t torn = characters_check_torn(r.out, csv);
    print_message("      the sheet torn by the author's physics at %zu of 40 frames (its p99.9 strain up to %.2f)\n",
                  torn, characters_max_of(p999, 40));
    assert_true(torn >= 20 && torn < 40); /* dropped away, not torn from the start */
    assert_non_null(strstr(r.out, "the swing bar leaves those frames out"));
    /* plush's sheet follows the author's flap only as far as a whole surface can: its strain keeps the bar at
     * every frame, the drop's first included (the offsets are scaled by the figure of the frame they are taken
     * of). Its free half folds down at the seam as a sheet held along a line does, so its crease is not held
     * here. */
    double mine[64], out_share[64];
    assert_int_equal(characters_column(csv, "surface_strain_p999", mine, 64), 40);
    assert_int_equal(characters_column(csv, "surface_strain_outside", out_share, 64), 40);
    size_t stretched = 0;
    for (int f = 0; f < 40; f++)
        stretched += mine[f] > 1.5 || out_share[f] > 0.005;
    print_message("      plush's sheet following it: p99.9 strain at most %.3f (%.3f from frame 6 on), past the bar's "
                  "strain at %zu of 40 frames\n", characters_max_of(mine, 40), characters_max_of(mine + 6, 34),
                  stretched);
    assert_true(stretched == 0 && characters_max_of(mine, 40) <= 1.5);
    free(csv);
    cli_result_free(&r);
}

/* The demo bear with its shake (the files make builds in proxies/): the plush surface bar at every
 * one of its 241 frames. */
static void test_demo_quality(void **state)
{
    (void)state;
    char out[300];
    cli_tmp_path(out, sizeof out, "demo_quality");
    cli_result r;
    CLI_RUN(&r, "run", "proxies/plush_bear.pmx", "--motion", "proxies/plush_bear_shake.vmd", "--im2",
            "proxies/plush_bear.im2", "--export", "quality", "-o", out);
    cli_expect_code(&r, 0);
    cli_result_free(&r);
    assert_int_equal(expect_plush_surface(out, "demo shake"), 241);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_details_near_the_cage_bound),
        cmocka_unit_test(test_layer_of_a_piece_bound),
        cmocka_unit_test(test_toy_auto_pins),
        cmocka_unit_test(test_many_closed_pieces_on_target),
        cmocka_unit_test(test_fine_sheet_on_target),
        cmocka_unit_test(test_default_target_from_faces),
        cmocka_unit_test(test_standing_tuft_pins),
        cmocka_unit_test(test_mostly_pinned_warnings),
        cmocka_unit_test(test_weightless_piece_is_pinned),
        cmocka_unit_test(test_toy_run),
        cmocka_unit_test(test_two_piece_strand_stress),
        cmocka_unit_test(test_tail_droops),
        cmocka_unit_test(test_demo_quality),
        cmocka_unit_test(test_bar_hints_follow_the_mode),
        cmocka_unit_test(test_swing_bar_leaves_torn_frames_out),
        cmocka_unit_test(test_alicia_hair_auto_pins),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
