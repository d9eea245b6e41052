/* The main job on the demo bear, in process (the CLI would write hundreds of megabytes of frames): the
 * bake replayed by the bone pipeline against the proxy-skinned mesh at every frame of the shake, the
 * bear's softness against the bones-mode baseline, its settling, its rigid eyes and nose; and bones mode
 * on a real model (Alicia), whose rigid bodies and joints move hair and skirt without blowing up.
 * The bear is made by `make` (proxies/); every figure measured is printed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/plush.h"
#include "plush/sys/core.h"
#include "plush/sys/pmx.h"
#include "plush/sys/anim.h"
#include "support/mesh_fixture.h"
#include "support/pmx_fixture.h"
#include "support/cli_run.h"
#include "support/shared_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The patch rings the scene's skin uses, for a bake made beside it. */
static plush_proxy_patch_shape scene_patch(const plush_scene *sc)
{
    plush_scene_desc desc;
    plush_scene_get_desc(sc, &desc);
    return plush_scene_patch(&desc);
}


/* The shake: 240 frames (241 with frame 0); the hook holds still from frame 157 on. */
enum { BEAR_FRAMES = 241, BEAR_STILL_FROM = 157, ALICIA_FRAMES = 90 };

typedef struct demo {
    plush_pmx_model *bear;
    plush_vmd_motion *shake;
    plush_im2_map *rigid;       /* eyes and nose follow one cage triangle each */
    bool *kept;                 /* bear vertex -> it survives the bake (used by a material no soft body owns) */
    size_t kept_count;
} demo;

static double dist(const float a[3], const float b[3])
{
    double x = (double)a[0] - b[0], y = (double)a[1] - b[1], z = (double)a[2] - b[2];
    return sqrt(x * x + y * y + z * z);
}

/* The vertices the bake keeps: those some material without a soft body draws. */
static void mark_kept(demo *d)
{
    const plush_pmx_model *m = d->bear;
    d->kept = calloc(m->vertex_count, sizeof *d->kept);
    assert_non_null(d->kept);
    size_t first = 0;
    for (size_t mat = 0; mat < m->material_count; mat++) {
        size_t n = (size_t)m->materials[mat].index_count;
        bool soft = false;
        for (size_t s = 0; s < m->soft_body_count; s++)
            soft |= m->soft_bodies[s].material == (int32_t)mat;
        for (size_t i = first; !soft && i < first + n; i++)
            d->kept[m->indices[i]] = true;
        first += n;
    }
    for (size_t v = 0; v < m->vertex_count; v++)
        d->kept_count += d->kept[v];
}

static int setup(void **state)
{
    demo *d = calloc(1, sizeof *d);
    plush_diag diag = pmx_fx_diag();
    if (plush_pmx_read_file(BEAR, NULL, &d->bear, &diag) != PLUSH_OK ||
        plush_vmd_read_file(BEAR_VMD, &d->shake, &diag) != PLUSH_OK ||
        plush_im2_read_file(BEAR_IM2, &d->rigid, &diag) != PLUSH_OK) {
        char line[600];
        plush_diag_format(&diag, line, sizeof line);
        fprintf(stderr, "the demo bear is missing (make builds it into proxies/): %s\n", line);
        return -1;
    }
    mark_kept(d);
    if (cli_tmp_setup("plush_demo_run") != 0)
        return -1;
    *state = d;
    return 0;
}

static int teardown(void **state)
{
    demo *d = *state;
    cli_tmp_teardown();
    free(d->kept);
    plush_im2_free(d->rigid);
    plush_vmd_free(d->shake);
    plush_pmx_free(d->bear);
    free(d);
    return 0;
}

static plush_scene *bear_scene(const demo *d, int mode)
{
    plush_diag diag = pmx_fx_diag();
    plush_scene *sc = NULL;
    plush_scene_desc desc = {.model = d->bear, .motion = d->shake, .mode = mode};
    if (mode == PLUSH_SCENE_PROXY)
        desc.overrides = d->rigid, desc.overrides_file = BEAR_IM2;
    pmx_fx_ok(plush_scene_create(&desc, &sc, &diag), &diag);
    assert_int_equal(diag.warning_count, 0);
    return sc;
}

static void test_shake_length(void **state)
{
    demo *d = *state;
    assert_int_equal(plush_vmd_last_frame(d->shake) + 1, BEAR_FRAMES);
    /* the cage is the last material and its vertices come after the fur's: the bake drops exactly them */
    assert_true(d->kept_count < d->bear->vertex_count);
    for (size_t v = 0; v < d->bear->vertex_count; v++)
        assert_int_equal(d->kept[v], v < d->kept_count);
}

/* ---- 1. the bake replays as the proxy run, every frame ------------------------------------------------ */

/* Runs the shake in proxy mode and bakes every frame into pmx / vmd (files, as plush run writes them). */
static void bake_shake(const demo *d, const char *pmx, const char *vmd)
{
    plush_diag diag = pmx_fx_diag();
    plush_scene *sc = bear_scene(d, PLUSH_SCENE_PROXY);
    plush_scene_bake *bake = NULL;
    pmx_fx_ok(plush_scene_bake_create(plush_scene_get_binding(sc), d->shake, scene_patch(sc), &bake, &diag), &diag);
    for (uint32_t f = 0; f < BEAR_FRAMES; f++) {
        pmx_fx_ok(plush_scene_step(sc, f, &diag), &diag);
        pmx_fx_ok(plush_scene_bake_add_frame(bake, f, plush_scene_proxy_nodes(sc), &diag), &diag);
    }
    pmx_fx_ok(plush_scene_bake_write(bake, pmx, vmd, &diag), &diag);
    plush_scene_bake_destroy(bake);
    plush_scene_destroy(sc);
}

static void test_bake_replays_every_frame(void **state)
{
    demo *d = *state;
    char pmx[600], vmd[600];
    cli_tmp_path(pmx, sizeof pmx, "bear_plush.pmx");
    cli_tmp_path(vmd, sizeof vmd, "bear_plush.vmd");
    bake_shake(d, pmx, vmd);

    plush_diag diag = pmx_fx_diag();
    plush_pmx_model *baked = NULL;
    plush_vmd_motion *keys = NULL;
    pmx_fx_ok(plush_pmx_read_file(pmx, NULL, &baked, &diag), &diag);
    pmx_fx_ok(plush_vmd_read_file(vmd, &keys, &diag), &diag);
    assert_true(baked->version == 2.0f);
    assert_int_equal(baked->soft_body_count, 0);
    assert_int_equal(baked->rigid_body_count, 0); /* so replaying without physics is all a player does */
    /* the baked model keeps the fur's vertices in their order: bear vertex v is baked vertex map[v] */
    assert_int_equal(baked->vertex_count, d->kept_count);
    uint32_t *map = calloc(d->bear->vertex_count, sizeof *map);
    assert_non_null(map);
    for (size_t v = 0, k = 0; v < d->bear->vertex_count; v++) {
        if (!d->kept[v])
            continue;
        map[v] = (uint32_t)k;
        assert_memory_equal(baked->vertices[k].position, d->bear->vertices[v].position, sizeof(float[3]));
        k++;
    }

    /* The proxy run again (it is deterministic), frame by frame beside the bone pipeline playing the bake:
     * every kept vertex at every frame, with no per-frame storage. */
    plush_scene *sc = bear_scene(d, PLUSH_SCENE_PROXY);
    plush_motion *motion = NULL;
    plush_anim *anim = NULL;
    pmx_fx_ok(plush_motion_bind_vmd(baked, keys, &motion, &diag), &diag);
    pmx_fx_ok(plush_anim_create(baked, &anim, &diag), &diag);
    plush_motion_stats stats;
    plush_motion_stats_get(motion, &stats);
    assert_int_equal(stats.missing_bone_names, 0);
    float(*replay)[3] = calloc(baked->vertex_count, sizeof *replay);
    assert_non_null(replay);
    double worst = 0, moved = 0;
    uint32_t worst_frame = 0;
    for (uint32_t f = 0; f < BEAR_FRAMES; f++) {
        pmx_fx_ok(plush_scene_step(sc, f, &diag), &diag);
        plush_anim_reset(anim);
        plush_anim_sample(anim, motion, (float)f);
        plush_anim_update_morphs(anim);
        plush_anim_deform(anim, PLUSH_ANIM_BEFORE_PHYSICS);
        plush_anim_deform(anim, PLUSH_ANIM_AFTER_PHYSICS);
        plush_anim_skin(anim, 0, baked->vertex_count, replay, NULL);
        const float(*want)[3] = plush_scene_positions(sc);
        for (size_t v = 0; v < d->bear->vertex_count; v++) {
            if (!d->kept[v])
                continue;
            const float *got = replay[map[v]];
            for (int k = 0; k < 3; k++) {
                double e = fabs((double)got[k] - want[v][k]);
                if (e > worst)
                    worst = e, worst_frame = f;
                moved = fmax(moved, fabs((double)want[v][k] - d->bear->vertices[v].position[k]));
            }
        }
    }
    printf("replay: %d frames x %zu vertices, worst error %.3g units (frame %u), largest movement %.3g\n",
           BEAR_FRAMES, d->kept_count, worst, worst_frame, moved);
    assert_true(moved > 3.0); /* the fur follows the hook (6 units sideways, 5 up) */
    assert_true(worst < 1e-3);
    free(replay);
    free(map);
    plush_anim_destroy(anim);
    plush_motion_free(motion);
    plush_scene_destroy(sc);
    plush_vmd_free(keys);
    plush_pmx_free(baked);
}

/* ---- 2. soft, settling, finite, rigid eyes ---------------------------------------------------------- */

/* The distinct vertices of the material whose English name is name_en. */
static uint32_t *material_vertices(const plush_pmx_model *m, const char *name_en, plush_arena *arena, size_t *count)
{
    for (size_t mat = 0; mat < m->material_count; mat++)
        if (strcmp(m->materials[mat].name_en.s, name_en) == 0) {
            uint32_t *v = NULL;
            plush_diag diag = pmx_fx_diag();
            pmx_fx_ok(plush_pmx_material_vertices(m, mat, arena, &v, count, &diag), &diag);
            return v;
        }
    fail_msg("the bear has no material '%s'", name_en);
    return NULL;
}

/* A rigid part: sampled vertex pairs and their rest distances. */
typedef struct rigid_part {
    const char *name;
    size_t pair_count;
    uint32_t (*pairs)[2];
    float *rest;
    double worst;               /* largest |distance - rest| seen */
} rigid_part;

enum { MAX_PAIRS = 20000 };

/* Every pair when there are few enough, otherwise pairs (i, i + s) for a spread of strides s: far and
 * near vertices of the part both appear. */
static void rigid_part_init(rigid_part *p, const plush_pmx_model *m, const char *name_en, plush_arena *arena)
{
    size_t n = 0;
    const uint32_t *v = material_vertices(m, name_en, arena, &n);
    assert_true(n >= 4);
    p->name = name_en;
    p->pairs = plush_arena_array(arena, MAX_PAIRS, sizeof *p->pairs);
    p->rest = plush_arena_array(arena, MAX_PAIRS, sizeof *p->rest);
    assert_non_null(p->pairs);
    assert_non_null(p->rest);
    size_t stride_step = n * (n - 1) / 2 <= MAX_PAIRS ? 1 : (n * n / 2 + MAX_PAIRS - 1) / MAX_PAIRS;
    for (size_t s = 1; s < n && p->pair_count < MAX_PAIRS; s += stride_step)
        for (size_t i = 0; i + s < n && p->pair_count < MAX_PAIRS; i++) {
            p->pairs[p->pair_count][0] = v[i];
            p->pairs[p->pair_count][1] = v[i + s];
            p->rest[p->pair_count] = (float)dist(m->vertices[v[i]].position, m->vertices[v[i + s]].position);
            p->pair_count++;
        }
}

static void rigid_part_check(rigid_part *p, const float (*pos)[3])
{
    for (size_t k = 0; k < p->pair_count; k++) {
        double e = fabs(dist(pos[p->pairs[k][0]], pos[p->pairs[k][1]]) - p->rest[k]);
        p->worst = e > p->worst ? e : p->worst;
    }
}

static void test_soft_settles_eyes_rigid(void **state)
{
    demo *d = *state;
    const plush_pmx_model *m = d->bear;
    plush_arena arena = {0};
    rigid_part parts[3] = {{0}};
    const char *const rigid_names[3] = {"eye_L", "eye_R", "nose"};
    for (int k = 0; k < 3; k++)
        rigid_part_init(&parts[k], m, rigid_names[k], &arena);

    plush_diag diag = pmx_fx_diag();
    plush_scene *soft = bear_scene(d, PLUSH_SCENE_PROXY), *bones = bear_scene(d, PLUSH_SCENE_BONES);
    float(*prev)[3] = calloc(m->vertex_count, sizeof *prev);
    assert_non_null(prev);
    double soft_max = 0, soft_still_end = 0, step_max = 0, rest_step = 0, pin_error = 0;
    double hook_travel = 0, fur_travel = 0, centroid0[2][3] = {{0}};
    uint32_t soft_frame = 0;
    const plush_pmx_soft_body *sb = &m->soft_bodies[0];
    for (uint32_t f = 0; f < BEAR_FRAMES; f++) {
        pmx_fx_ok(plush_scene_step(soft, f, &diag), &diag);
        pmx_fx_ok(plush_scene_step(bones, f, &diag), &diag);
        const float(*p)[3] = plush_scene_positions(soft), (*b)[3] = plush_scene_positions(bones);
        assert_true(mesh_fx_all_finite(p, m->vertex_count));
        assert_true(mesh_fx_all_finite(plush_scene_normals(soft), m->vertex_count));
        assert_true(mesh_fx_all_finite(plush_scene_proxy_nodes(soft), plush_scene_get_binding(soft)->proxy.node_count));
        /* the pins are where the hook holds them */
        for (uint32_t k = 0; k < sb->pin_count; k++)
            pin_error = fmax(pin_error, dist(p[sb->pins[k]], b[sb->pins[k]]));
        /* softness: how far the fur is from where the bones alone put it */
        double dev = 0, step = 0, centroid[2][3] = {{0}};
        for (size_t v = 0; v < d->kept_count; v++) {
            dev = fmax(dev, dist(p[v], b[v]));
            if (f > 0)
                step = fmax(step, dist(p[v], prev[v]));
            for (int k = 0; k < 3; k++)
                centroid[0][k] += p[v][k] / (double)d->kept_count, centroid[1][k] += b[v][k] / (double)d->kept_count;
        }
        /* and it comes along: the fur's centroid travels with the bones-mode bear's */
        if (f == 0)
            memcpy(centroid0, centroid, sizeof centroid0);
        float c[2][3], c0[2][3];
        for (int i = 0; i < 2; i++)
            for (int k = 0; k < 3; k++)
                c[i][k] = (float)centroid[i][k], c0[i][k] = (float)centroid0[i][k];
        fur_travel = fmax(fur_travel, dist(c[0], c0[0]));
        hook_travel = fmax(hook_travel, dist(c[1], c0[1]));
        if (f < BEAR_STILL_FROM && dev > soft_max)
            soft_max = dev, soft_frame = f;
        if (f + 1 == BEAR_FRAMES)
            soft_still_end = dev;
        step_max = fmax(step_max, step);
        if (f + 10 >= BEAR_FRAMES) /* the last ten frames */
            rest_step = fmax(rest_step, step);
        for (int k = 0; k < 3; k++)
            rigid_part_check(&parts[k], p);
        memcpy(prev, p, m->vertex_count * sizeof *prev);
    }
    assert_int_equal(plush_scene_failures(soft, NULL), 0);
    printf("softness: fur up to %.3g units from the bones-mode pose while the hook moves (frame %u), "
           "%.3g at the end (hanging stretched)\n",
           soft_max, soft_frame, soft_still_end);
    printf("following: pins within %.3g units of the hook's pose; fur centroid travels %.3g units, the "
           "bones-mode bear's %.3g (ratio %.3g)\n",
           pin_error, fur_travel, hook_travel, fur_travel / hook_travel);
    printf("settling: largest frame-to-frame movement %.3g units, %.3g over the last ten frames (ratio %.3g)\n",
           step_max, rest_step, rest_step / step_max);
    for (int k = 0; k < 3; k++)
        printf("rigid %-5s: %zu vertex pairs, worst distance change %.3g units\n", parts[k].name,
               parts[k].pair_count, parts[k].worst);
    assert_true(pin_error < 1e-3);
    assert_true(fur_travel > 0.5 * hook_travel);
    assert_true(soft_max > 0.5);
    assert_true(rest_step < 0.01 * step_max);
    assert_true(rest_step < 2e-3);
    for (int k = 0; k < 3; k++)
        assert_true(parts[k].worst < 1e-4);
    free(prev);
    plush_scene_destroy(bones);
    plush_scene_destroy(soft);
    plush_arena_free(&arena);
}

/* ---- 5. bones mode on Alicia: rigid bodies and joints move hair and skirt -------------------------- */

static void test_alicia_bones_mode_physics(void **state)
{
    (void)state;
    plush_diag diag = pmx_fx_diag();
    plush_pmx_model *m = NULL;
    plush_vmd_motion *dance = NULL;
    pmx_fx_ok(plush_pmx_read_file(ALICIA, NULL, &m, &diag), &diag);
    pmx_fx_ok(plush_vmd_read_file(MOTION_0046, &dance, &diag), &diag);

    /* Bones physics drives (rigid bodies in mode 1 or 2), and every bone that inherits their motion
     * through a parent or an append parent. */
    bool *driven = calloc(m->bone_count, 1), *follows = calloc(m->bone_count, 1);
    bool *swinging = calloc(m->vertex_count, 1), *still = calloc(m->vertex_count, 1);
    assert_true(driven && follows && swinging && still);
    for (size_t r = 0; r < m->rigid_body_count; r++)
        if (m->rigid_bodies[r].mode != 0 && m->rigid_bodies[r].bone >= 0)
            driven[m->rigid_bodies[r].bone] = follows[m->rigid_bodies[r].bone] = true;
    for (bool grew = true; grew;) {
        grew = false;
        for (size_t b = 0; b < m->bone_count; b++) {
            const plush_pmx_bone *x = &m->bones[b];
            bool from_parent = x->parent >= 0 && follows[x->parent];
            bool from_append = (x->flags & (PLUSH_PMX_BONE_APPEND_ROTATE | PLUSH_PMX_BONE_APPEND_TRANSLATE)) &&
                               x->append_parent >= 0 && follows[x->append_parent];
            if (!follows[b] && (from_parent || from_append))
                follows[b] = grew = true;
        }
    }
    size_t n_swinging = 0, n_still = 0;
    for (size_t v = 0; v < m->vertex_count; v++) {
        const plush_pmx_vertex *x = &m->vertices[v];
        bool any_driven = false, any_follows = false;
        for (int k = 0; k < 4; k++)
            if (x->bones[k] >= 0 && x->weights[k] > 0) {
                any_driven |= driven[x->bones[k]];
                any_follows |= follows[x->bones[k]];
            }
        swinging[v] = any_driven;
        still[v] = !any_follows;
        n_swinging += swinging[v];
        n_still += still[v];
    }
    assert_true(n_swinging > 1000);  /* hair and skirt */
    assert_true(n_still > 1000);     /* face, body, limbs */

    plush_scene *phys = NULL, *none = NULL;
    pmx_fx_ok(plush_scene_create(&(plush_scene_desc){.model = m, .motion = dance, .mode = PLUSH_SCENE_BONES}, &phys, &diag),
       &diag);
    pmx_fx_ok(plush_scene_create(&(plush_scene_desc){.model = m, .motion = dance, .mode = PLUSH_SCENE_BONES,
                                              .no_physics = true},
                          &none, &diag),
       &diag);
    double swing = 0, body = 0, anywhere = 0, height = 0;
    uint32_t swing_frame = 0;
    for (uint32_t f = 0; f < ALICIA_FRAMES; f++) {
        pmx_fx_ok(plush_scene_step(phys, f, &diag), &diag);
        pmx_fx_ok(plush_scene_step(none, f, &diag), &diag);
        const float(*p)[3] = plush_scene_positions(phys), (*q)[3] = plush_scene_positions(none);
        assert_true(mesh_fx_all_finite(p, m->vertex_count));
        assert_true(mesh_fx_all_finite(plush_scene_normals(phys), m->vertex_count));
        for (size_t v = 0; v < m->vertex_count; v++) {
            double e = dist(p[v], q[v]);
            anywhere = fmax(anywhere, e);
            if (swinging[v] && e > swing)
                swing = e, swing_frame = f;
            if (still[v])
                body = fmax(body, e);
        }
    }
    for (size_t v = 0; v < m->vertex_count; v++)
        height = fmax(height, m->vertices[v].position[1]);
    printf("alicia: %zu hair/skirt vertices move up to %.3g units from the no-physics pose (frame %u); "
           "anywhere %.3g (model height %.3g); %zu vertices no physics bone reaches differ by %.3g\n",
           n_swinging, swing, swing_frame, anywhere, height, n_still, body);
    assert_int_equal(plush_scene_failures(phys, NULL), 0);
    assert_true(swing > 0.3);              /* visibly: 1 unit is about 8 cm */
    assert_true(anywhere < 0.25 * height); /* swinging, not flying off */
    assert_true(body < 1e-4);              /* physics moves only what hangs from physics bones */
    plush_scene_destroy(phys);
    plush_scene_destroy(none);
    free(driven);
    free(follows);
    free(swinging);
    free(still);
    plush_vmd_free(dance);
    plush_pmx_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shake_length),
        cmocka_unit_test(test_bake_replays_every_frame),
        cmocka_unit_test(test_soft_settles_eyes_rigid),
        cmocka_unit_test(test_alicia_bones_mode_physics),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
