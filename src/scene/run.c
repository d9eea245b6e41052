/* The pipeline: one model instance stepped frame by frame (docs/run.md: the stages of a frame). */
#include "scene/internal.h"
#include "core/common.h"
#include "core/geom.h"
#include "scene/soft_measure.h"
#include "scene/follow.h"
#include "scene/soft_push.h"
#include "scene/textures.h"
#include "plush/sys/physics.h"
#include "plush/sys/core.h"
#include "plush/sys/pmx.h"
#include "plush/sys/quality.h"
#include "plush/sys/scene.h"
#include "plush/sys/anim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* VMD keys count frames at 30 per second whatever the output rate. */
#define VMD_FPS 30.0 /* VMD keys are at 30 per second, whatever the output rate */

struct plush_scene {
    plush_scene_desc desc;
    const plush_pmx_model *model;        /* the model simulated: desc.model, or in direct mode direct_model */
    plush_pmx_model physics_model;       /* bones mode: the model seen without its soft bodies */
    plush_pmx_model *direct_model;       /* direct mode: the detailed mesh as the soft body */
    plush_scene_direct_stats direct_stats;
    plush_world_cloth *direct_cloth;     /* direct mode with desc.direct_cloth: per soft body, the world's */
    plush_motion *motion;
    plush_anim *anim;
    plush_world *world;
    plush_world_model *wm;
    plush_scene_binding *binding;
    plush_proxy_skin *skin;
    float (*positions)[3], (*normals)[3];
    float (*globals)[16];
    float (*kinematic)[16];              /* skinning matrices of the pose without physics (the soft measure's) */
    bool *driven;
    float (*pin_positions)[3];           /* only pinned vertices' entries are kept current */
    uint32_t *pinned;                    /* vertices pins refer to */
    size_t pinned_count;
    float (*proxy_nodes)[3];
    float (*node_buf)[3];                /* one soft body's nodes, as large as the largest */
    float (*rest_bound)[3], (*rest_bound_normals)[3];
    float (*bound)[3], (*bound_normals)[3];
    bool bound_in_order;                 /* the bound vertices are the model's vertices[first .. first + count) */
    plush_world_soft_state *soft_state;  /* per soft body, to see new failures */
    uint32_t *soft_resets;               /* and its blow-ups it went on from, seen so far */
    size_t (*bone_runs)[2];              /* first, count: the vertices bone skinning must do (those the
                                            proxy takes over entirely are skipped) */
    size_t bone_run_count;
    double last_frame;                   /* the previous step's frame, when have_frame */
    bool have_frame;
    size_t failures;
    int64_t first_failure;
    plush_scene_timing timing;
    plush__soft_measure soft_measure;    /* with a binding */
    plush__soft_push soft_push;          /* with a skin: out of the body */
    plush__follow follow;                /* proxy mode: the soft bodies that follow the author's physics */
    plush_scene_soft_figures soft_frame; /* the last frame's figures taken in, of frame soft_at (-1: none) */
    plush_scene_soft_figures soft_before; /* and the ones before them, of frame soft_before_at */
    double soft_at, soft_before_at, measure_at; /* measure_at: the frame the measure under way is of */
    plush_scene_soft_summary soft_summary;
    plush__texture_store *textures;      /* the model's textures the sinks decode: each file once a run */
    plush__bake_share bake_share;        /* the bake the pmx+vmd and glTF exports share (sink.c) */
    plush_arena arena;
};

/* Wall-clock time: the proxy frames and the skinning run on two threads (the rest of the pipeline on one),
 * so this thread's CPU time would leave out the other's share. */
static double now(void)
{
    return plush__seconds();
}

static plush_status alloc_buffers(plush_scene *sc, plush_diag *diag)
{
    const plush_pmx_model *m = sc->model;
    size_t nv = m->vertex_count ? m->vertex_count : 1, nb = m->bone_count ? m->bone_count : 1;
    sc->positions = plush_arena_array(&sc->arena, nv, sizeof *sc->positions);
    sc->normals = plush_arena_array(&sc->arena, nv, sizeof *sc->normals);
    sc->globals = plush_arena_array(&sc->arena, nb, sizeof *sc->globals);
    sc->driven = plush_arena_array(&sc->arena, nb, sizeof *sc->driven);
    sc->pin_positions = plush_arena_array(&sc->arena, nv, sizeof *sc->pin_positions);
    sc->soft_state = plush_arena_array(&sc->arena, m->soft_body_count ? m->soft_body_count : 1, sizeof *sc->soft_state);
    sc->soft_resets = plush_arena_array(&sc->arena, m->soft_body_count ? m->soft_body_count : 1,
                                        sizeof *sc->soft_resets);
    if (!sc->positions || !sc->normals || !sc->globals || !sc->driven || !sc->pin_positions || !sc->soft_state)
        return plush__no_memory(diag);
    for (size_t v = 0; v < m->vertex_count; v++)
        memcpy(sc->pin_positions[v], m->vertices[v].position, sizeof sc->pin_positions[v]);
    return PLUSH_OK;
}

/* The vertices pins name (valid ones; the world warns about the rest), each once. */
static plush_status collect_pins(plush_scene *sc, plush_diag *diag)
{
    const plush_pmx_model *m = sc->model;
    size_t total = 0;
    for (size_t s = 0; s < m->soft_body_count; s++)
        total += m->soft_bodies[s].pin_count;
    sc->pinned = plush_arena_array(&sc->arena, total ? total : 1, sizeof *sc->pinned);
    bool *seen = calloc(m->vertex_count ? m->vertex_count : 1, 1);
    if (!sc->pinned || !seen) {
        free(seen);
        return plush__no_memory(diag);
    }
    for (size_t s = 0; s < m->soft_body_count; s++)
        for (uint32_t k = 0; k < m->soft_bodies[s].pin_count; k++) {
            int32_t v = m->soft_bodies[s].pins[k];
            if (v >= 0 && (size_t)v < m->vertex_count && !seen[v]) {
                seen[v] = true;
                sc->pinned[sc->pinned_count++] = (uint32_t)v;
            }
        }
    free(seen);
    return PLUSH_OK;
}

static plush_status setup_proxy(plush_scene *sc, plush_diag *diag)
{
    plush_status st = plush_scene_bind(sc->model, &sc->desc.bind, &sc->binding, diag);
    if (st != PLUSH_OK)
        return st;
    if (sc->desc.overrides) {
        /* the overrides' own file name goes into its messages */
        const char *file = diag->file;
        diag->file = sc->desc.overrides_file;
        st = plush_scene_binding_apply_im2(sc->binding, sc->desc.overrides, diag);
        if (st != PLUSH_OK)
            return st;
        diag->file = file;
    }
    const plush_scene_binding *b = sc->binding;
    size_t n = b->vertex_count ? b->vertex_count : 1, largest = 1;
    sc->rest_bound = plush_arena_array(&sc->arena, n, sizeof *sc->rest_bound);
    sc->rest_bound_normals = plush_arena_array(&sc->arena, n, sizeof *sc->rest_bound_normals);
    sc->bound = plush_arena_array(&sc->arena, n, sizeof *sc->bound);
    sc->bound_normals = plush_arena_array(&sc->arena, n, sizeof *sc->bound_normals);
    sc->proxy_nodes = plush_arena_array(&sc->arena, b->proxy.node_count ? b->proxy.node_count : 1,
                                        sizeof *sc->proxy_nodes);
    for (size_t p = 0; p < b->proxy.part_count; p++)
        largest = b->proxy.parts[p].mesh.node_count > largest ? b->proxy.parts[p].mesh.node_count : largest;
    sc->node_buf = plush_arena_array(&sc->arena, largest, sizeof *sc->node_buf);
    if (!sc->rest_bound || !sc->rest_bound_normals || !sc->bound || !sc->bound_normals || !sc->proxy_nodes ||
        !sc->node_buf)
        return plush__no_memory(diag);
    sc->bound_in_order = b->vertex_count > 0;
    for (size_t i = 0; i < b->vertex_count; i++)
        sc->bound_in_order = sc->bound_in_order && b->vertices[i] == b->vertices[0] + i;
    for (size_t i = 0; i < b->vertex_count; i++) {
        const plush_pmx_vertex *v = &sc->model->vertices[b->vertices[i]];
        memcpy(sc->rest_bound[i], v->position, sizeof sc->rest_bound[i]);
        memcpy(sc->rest_bound_normals[i], v->normal, sizeof sc->rest_bound_normals[i]);
    }
    memcpy(sc->proxy_nodes, b->proxy.nodes, b->proxy.node_count * sizeof *sc->proxy_nodes);
    plush_proxy_mesh mesh = {.nodes = (const float(*)[3])b->proxy.nodes, .node_count = b->proxy.node_count,
                             .triangles = (const uint32_t(*)[3])b->proxy.triangles,
                             .triangle_count = b->proxy.triangle_count};
    plush_proxy_skin_options skin = sc->desc.skin;
    skin.patch = plush_scene_patch(&sc->desc);
    return plush_proxy_skin_create(&mesh, b->binding, (const float(*)[3])sc->rest_bound,
                                   (const float(*)[3])sc->rest_bound_normals, &skin, &sc->skin, diag);
}

/* Direct mode: the binding says which vertices are detailed; the derived model makes them the soft body
 * and is what the scene simulates from here on (same vertices, bones and bodies as desc.model). */
static plush_status setup_direct(plush_scene *sc, plush_diag *diag)
{
    plush_status st = plush_scene_bind(sc->model, &sc->desc.bind, &sc->binding, diag);
    if (st == PLUSH_OK)
        st = plush__scene_direct_build(sc->binding, sc->desc.world.physics_hz, &sc->direct_model, &sc->direct_stats,
                                       sc->desc.direct_cloth ? &sc->direct_cloth : NULL, diag);
    if (st == PLUSH_OK)
        sc->model = sc->direct_model;
    if (st == PLUSH_OK && sc->direct_cloth) {
        sc->desc.world.cloth = sc->direct_cloth;
        sc->desc.world.cloth_count = sc->direct_model->soft_body_count;
    }
    return st;
}

/* Direct mode: the vertices of the direct soft bodies the world built; their positions come from it. */
static void mark_direct_vertices(const plush_scene *sc, bool *skip)
{
    const plush_pmx_model *m = sc->model;
    size_t source_materials = sc->desc.model->material_count;
    for (size_t s = 0; s < m->soft_body_count; s++) {
        int32_t mat = m->soft_bodies[s].material;
        plush_world_soft_info info;
        plush_world_soft_get_info(sc->wm, s, &info);
        size_t first = 0, count = 0;
        plush_diag ignored = {0};
        if (mat < 0 || (size_t)mat < source_materials || info.state != PLUSH_SOFT_ACTIVE ||
            plush_pmx_material_faces(m, (size_t)mat, &first, &count, &ignored) != PLUSH_OK)
            continue;
        for (size_t i = first; i < first + count; i++)
            skip[m->indices[i]] = true;
    }
}

/* Runs of consecutive vertices that need bone skinning: all of them, except bound vertices the proxy
 * moves entirely (share 1), whose bone-skinned positions would be thrown away. */
static plush_status plan_bone_skinning(plush_scene *sc, plush_diag *diag)
{
    size_t n = sc->model->vertex_count;
    bool *skip = calloc(n ? n : 1, 1);
    if (!skip)
        return plush__no_memory(diag);
    if (sc->direct_model && sc->wm) {
        mark_direct_vertices(sc, skip);
    } else if (sc->binding) {
        const plush_proxy_binding *pb = sc->binding->binding;
        for (size_t i = 0; i < sc->binding->vertex_count; i++)
            skip[sc->binding->vertices[i]] = !pb->proxy_share || pb->proxy_share[i] >= 1.0f;
    }
    size_t runs = 0;
    for (size_t v = 0; v < n; v++)
        runs += !skip[v] && (v == 0 || skip[v - 1]);
    sc->bone_runs = plush_arena_array(&sc->arena, runs ? runs : 1, sizeof *sc->bone_runs);
    if (!sc->bone_runs) {
        free(skip);
        return plush__no_memory(diag);
    }
    for (size_t v = 0; v < n; v++) {
        if (skip[v])
            continue;
        if (v == 0 || skip[v - 1])
            sc->bone_runs[sc->bone_run_count++][0] = v, sc->bone_runs[sc->bone_run_count - 1][1] = 0;
        sc->bone_runs[sc->bone_run_count - 1][1]++;
    }
    free(skip);
    return PLUSH_OK;
}

/* Motion, morphs and the bones that do not wait for physics, at a frame. */
static void pose_before_physics(plush_scene *sc, double frame)
{
    plush_anim_reset(sc->anim);
    if (sc->motion)
        plush_anim_sample(sc->anim, sc->motion, (float)(frame * VMD_FPS / sc->desc.fps));
    plush_anim_update_morphs(sc->anim);
    plush_anim_deform(sc->anim, PLUSH_ANIM_BEFORE_PHYSICS);
}

/* The bodies are made where the motion has them at frame 0, where runs start: the first reset then
 * moves nothing, and Bullet's broadphase is built around the bodies as they will be. */
static plush_status add_to_world(plush_scene *sc, plush_diag *diag)
{
    pose_before_physics(sc, 0.0);
    plush_anim_deform(sc->anim, PLUSH_ANIM_AFTER_PHYSICS);
    return plush_world_add_model(sc->world, &sc->physics_model, plush_anim_bone_globals(sc->anim), &sc->wm, diag);
}

plush_status plush_scene_create(const plush_scene_desc *desc, plush_scene **out, plush_diag *diag)
{
    if (!desc || !desc->model || !out)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no model or no place for the scene");
    *out = NULL;
    plush_status geometry = plush_pmx_require_geometry(desc->model, diag);
    if (geometry != PLUSH_OK)
        return geometry;
    if (desc->mode != PLUSH_SCENE_PROXY && desc->mode != PLUSH_SCENE_BONES && desc->mode != PLUSH_SCENE_DIRECT &&
        desc->mode != PLUSH_SCENE_PLAIN)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "unknown scene mode %d", (int)desc->mode);
    if (desc->fps < 0 || !isfinite(desc->fps))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "frame rate must be positive");
    if (desc->mode != PLUSH_SCENE_BONES && desc->no_physics)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "%s mode needs physics",
                               desc->mode == PLUSH_SCENE_PROXY    ? "proxy"
                               : desc->mode == PLUSH_SCENE_DIRECT ? "direct"
                                                                  : "plain");
    /* what the run will cost, from the model alone, before anything is built for it */
    plush_status budget = plush_scene_check_budget(desc, 0, NULL, diag);
    if (budget != PLUSH_OK)
        return budget;
    plush_scene *sc = calloc(1, sizeof *sc);
    if (!sc || plush__texture_store_create(&sc->textures) != PLUSH_OK) {
        free(sc);
        return plush__no_memory(diag);
    }
    sc->desc = *desc;
    /* the defaults, resolved once: plush_scene_get_desc hands them to every caller */
    if (sc->desc.fps == 0)
        sc->desc.fps = PLUSH_SCENE_DEFAULT_FPS;
    if (sc->desc.world.physics_hz == 0)
        sc->desc.world.physics_hz = PLUSH_WORLD_DEFAULT_HZ;
    if (sc->desc.world.max_substeps == 0)
        sc->desc.world.max_substeps = PLUSH_WORLD_MAX_SUBSTEPS;
    sc->model = desc->model;
    sc->first_failure = -1;
    plush_status st = desc->mode == PLUSH_SCENE_DIRECT ? setup_direct(sc, diag) : PLUSH_OK;
    if (st == PLUSH_OK)
        st = alloc_buffers(sc, diag);
    if (st == PLUSH_OK && desc->mode == PLUSH_SCENE_PROXY)
        st = setup_proxy(sc, diag);
    if (st == PLUSH_OK)
        st = plush_anim_create(sc->model, &sc->anim, diag);
    if (st == PLUSH_OK && desc->motion)
        st = plush_motion_bind_vmd(sc->model, desc->motion, &sc->motion, diag);
    else if (st == PLUSH_OK && desc->pose)
        st = plush_motion_bind_vpd(sc->model, desc->pose, &sc->motion, diag);
    if (st == PLUSH_OK && !desc->no_physics) {
        /* bones mode: the same model, seen without its soft bodies */
        sc->physics_model = *sc->model;
        if (desc->mode == PLUSH_SCENE_BONES) {
            sc->physics_model.soft_body_count = 0;
            sc->physics_model.soft_bodies = NULL;
        }
        memset(&sc->physics_model.arena, 0, sizeof sc->physics_model.arena);
        st = plush_world_create(&sc->desc.world, &sc->world, diag);
        if (st == PLUSH_OK)
            st = add_to_world(sc, diag);
        if (st == PLUSH_OK && desc->mode != PLUSH_SCENE_BONES)
            st = collect_pins(sc, diag);
    }
    /* after the world: direct mode skips only the vertices of soft bodies it built */
    if (st == PLUSH_OK)
        st = plan_bone_skinning(sc, diag);
    sc->soft_at = sc->soft_before_at = -1;
    sc->soft_summary.worst_inside_frame = -1;
    sc->soft_summary.worst_skin_frame = -1;
    sc->soft_summary.worst_through_frame = -1;
    sc->soft_summary.worst_jitter_frame = -1;
    sc->soft_summary.worst_show_frame = -1;
    sc->soft_summary.torn_frame = -1;
    if (st == PLUSH_OK && sc->binding)
        st = plush__soft_measure_init(&sc->soft_measure, sc->model, sc->binding->vertices, sc->binding->vertex_count,
                                      sc->wm, &sc->arena, diag);
    if (st == PLUSH_OK && sc->binding && sc->wm) {
        sc->kinematic = plush_arena_array(&sc->arena, sc->model->bone_count ? sc->model->bone_count : 1,
                                          sizeof *sc->kinematic);
        if (!sc->kinematic)
            st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    if (st == PLUSH_OK && desc->follow_author && sc->binding && sc->wm && sc->kinematic && desc->mode == PLUSH_SCENE_PROXY)
        st = plush__follow_init(&sc->follow, sc->model, sc->binding, sc->wm, &sc->arena, diag);
    sc->soft_summary.bodies = sc->soft_measure.body_count;
    sc->soft_summary.following = sc->follow.bodies;
    sc->soft_summary.author_share = sc->soft_measure.author_share;
    sc->soft_summary.skin_faces = sc->soft_measure.skin_faces;
    sc->soft_summary.skin_measured = plush_quality_skin_measured(sc->soft_measure.skin, sc->soft_measure.sample_step);
    sc->soft_summary.skin_left_out = plush_quality_skin_left_out(sc->soft_measure.skin, sc->soft_measure.sample_step);
    sc->soft_summary.show_points = sc->soft_measure.cover_points;
    if (st == PLUSH_OK && sc->skin && !desc->no_push && !desc->bind.proxy.seed) {
        const plush_scene_proxy *px = &sc->binding->proxy;
        double edge = px->triangle_count ? plush__mean_edge(&px->nodes[0][0], sizeof px->nodes[0],
                                                            &px->triangles[0][0], 3 * px->triangle_count)
                                         : 0;
        st = plush__soft_push_init(&sc->soft_push, &sc->soft_measure, sc->binding->binding, px->triangle_count, edge,
                                   &sc->arena, diag);
        sc->soft_push.triangles_only = desc->push_triangles_only;
        /* the warm start's fall: the world's gravity over a frame */
        sc->soft_push.fall = plush_world_gravity(sc->world) / ((double)sc->desc.fps * sc->desc.fps);
    }
    if (st != PLUSH_OK) {
        plush_scene_destroy(sc);
        return st;
    }
    *out = sc;
    return PLUSH_OK;
}

/* This frame's proxy nodes from the simulated TriMesh soft bodies of the proxy's parts. */
static void gather_proxy_nodes(plush_scene *sc)
{
    const plush_scene_proxy *p = &sc->binding->proxy;
    for (size_t k = 0; k < p->part_count; k++) {
        const plush_scene_proxy_part *part = &p->parts[k];
        plush_world_soft_info info;
        plush_world_soft_get_info(sc->wm, (size_t)part->soft_body, &info);
        if (info.node_count != part->mesh.node_count)
            continue; /* never built: the proxy keeps its rest nodes there */
        plush_world_soft_nodes(sc->wm, (size_t)part->soft_body, sc->node_buf, NULL);
        memcpy(sc->proxy_nodes + part->first_node, sc->node_buf, info.node_count * sizeof *sc->node_buf);
    }
}

static void note_failures(plush_scene *sc, double frame)
{
    for (size_t s = 0; s < sc->model->soft_body_count; s++) {
        plush_world_soft_info info;
        plush_world_soft_get_info(sc->wm, s, &info);
        size_t now = (info.resets - sc->soft_resets[s]) +
                     (info.state == PLUSH_SOFT_FAILED && sc->soft_state[s] != PLUSH_SOFT_FAILED);
        if (now) {
            sc->failures += now;
            if (sc->first_failure < 0)
                sc->first_failure = (int64_t)frame;
        }
        sc->soft_state[s] = info.state;
        sc->soft_resets[s] = info.resets;
    }
}

/* The pose without physics the soft measure compares with: every bone where the motion puts it before a
 * rigid body moves it (bones deformed after physics keep the last frame's: none a soft part hangs from in
 * the models seen). */
static void kinematic_skin(plush_scene *sc)
{
    if (!sc->kinematic)
        return;
    const plush_pmx_model *m = sc->model;
    for (size_t b = 0; b < m->bone_count; b++) {
        const float *g = sc->globals[b], *p = m->bones[b].position;
        float *o = sc->kinematic[b];
        memcpy(o, g, 12 * sizeof *o);
        for (int k = 0; k < 3; k++)
            o[12 + k] = g[12 + k] - (g[k] * p[0] + g[4 + k] * p[1] + g[8 + k] * p[2]);
        o[15] = 1;
    }
}

/* Physics to the frame: a reset when the frame does not follow the previous one, else one advance. */
static plush_status physics_to(plush_scene *sc, double frame, plush_diag *diag)
{
    const plush_pmx_model *m = sc->model;
    double advance = frame - sc->last_frame;
    memcpy(sc->globals, plush_anim_bone_globals(sc->anim), m->bone_count * sizeof *sc->globals);
    kinematic_skin(sc);
    plush__follow_base(&sc->follow, m, sc->anim, (const float(*)[16])sc->kinematic);
    if (!sc->have_frame || !(advance > 0 && advance <= 1)) {
        /* "reset physics": every body at its bone as the motion has it, every soft node at its
         * bone-skinned vertex; the frame shows that state */
        plush_anim_deform(sc->anim, PLUSH_ANIM_AFTER_PHYSICS);
        plush_anim_skin(sc->anim, 0, m->vertex_count, sc->positions, NULL);
        plush_world_reset(sc->wm, plush_anim_bone_globals(sc->anim), (const float(*)[3])sc->positions);
        return PLUSH_OK;
    }
    const plush_anim_impulse *imp = NULL;
    size_t ni = plush_anim_impulses(sc->anim, &imp);
    for (size_t i = 0; i < ni; i++)
        plush_world_impulse(sc->wm, imp[i].rigid_body, imp[i].velocity, imp[i].torque, imp[i].local);
    for (size_t i = 0; i < sc->pinned_count; i++)
        plush_anim_skin(sc->anim, sc->pinned[i], 1, sc->pin_positions, NULL); /* indexed by vertex */
    /* a following part's pins go where the author's physics moves them (a pin near a chain's first link) */
    if (sc->follow.ready)
        for (size_t i = 0; i < sc->pinned_count; i++)
            for (int d = 0; sc->follow.follows[sc->pinned[i]] && d < 3; d++)
                sc->pin_positions[sc->pinned[i]][d] += sc->follow.offset[sc->pinned[i]][d];
    plush_world_set_pins(sc->wm, (const float(*)[3])sc->pin_positions);
    if (sc->follow.ready)
        plush_world_set_goal_offsets(sc->wm, (const float(*)[3])sc->follow.offset);
    if (sc->follow.based)
        plush_world_set_goal_bases(sc->wm, (const float(*)[3])sc->follow.base);
    plush_world_set_bones(sc->wm, (const float(*)[16])sc->globals);
    plush_status st = plush_world_step(sc->world, (float)(advance / sc->desc.fps), diag);
    if (st != PLUSH_OK)
        return st;
    plush_world_get_bones(sc->wm, sc->globals, sc->driven);
    plush_anim_apply_physics(sc->anim, (const float(*)[16])sc->globals, sc->driven);
    return PLUSH_OK;
}

/* This frame's bound vertices from the simulated proxy, over their bone-skinned positions. */
static void skin_to_proxy(plush_scene *sc)
{
    const plush_scene_binding *b = sc->binding;
    if (sc->bound_in_order) { /* in place (a toy bound whole): no copies */
        plush_proxy_skin_apply(sc->skin, sc->positions + b->vertices[0], sc->normals + b->vertices[0]);
        return;
    }
    for (size_t i = 0; i < b->vertex_count; i++) {
        memcpy(sc->bound[i], sc->positions[b->vertices[i]], sizeof sc->bound[i]);
        memcpy(sc->bound_normals[i], sc->normals[b->vertices[i]], sizeof sc->bound_normals[i]);
    }
    plush_proxy_skin_apply(sc->skin, sc->bound, sc->bound_normals);
    for (size_t i = 0; i < b->vertex_count; i++) {
        memcpy(sc->positions[b->vertices[i]], sc->bound[i], sizeof sc->bound[i]);
        memcpy(sc->normals[b->vertices[i]], sc->bound_normals[i], sizeof sc->bound_normals[i]);
    }
}

/* Takes in the figures of the soft measure under way, when there is one (waiting for it), and adds them to the
 * run's summary. */
static void take_soft(plush_scene *sc)
{
    plush_scene_soft_figures fig;
    if (!plush__soft_measure_collect(&sc->soft_measure, &fig))
        return;
    sc->soft_before = sc->soft_frame;
    sc->soft_before_at = sc->soft_at;
    sc->soft_frame = fig;
    sc->soft_at = sc->measure_at;
    double frame = sc->measure_at;
    plush_scene_soft_summary *u = &sc->soft_summary;
    const plush_scene_soft_figures *f = &sc->soft_frame;
    double w = 1.0 / (double)(u->frames + 1);
    u->mean_offset_share += (f->offset_share - u->mean_offset_share) * w;
    u->mean_swing_share += (f->swing_share - u->mean_swing_share) * w;
    u->mean_author_swing_share += (f->author_swing_share - u->mean_author_swing_share) * w;
    u->mean_skin_share += (f->skin_share - u->mean_skin_share) * w;
    u->mean_author_skin_share += (f->author_skin_share - u->mean_author_skin_share) * w;
    u->skin_deepest = f->skin_depth > u->skin_deepest ? f->skin_depth : u->skin_deepest;
    if (u->skin_measured) {
        double gap = f->skin_share - f->author_skin_share;
        if (u->worst_skin_frame < 0 || gap > u->worst_skin_share - u->worst_author_skin_share) {
            u->worst_skin_share = f->skin_share;
            u->worst_author_skin_share = f->author_skin_share;
            u->worst_skin_frame = (int64_t)frame;
        }
        u->skin_frames_over += gap > PLUSH_SOFT_SKIN_FRAME_BAR;
    }
    if (f->through_measured) {
        double wt = 1.0 / (double)(u->through_frames + 1), gap = f->through_share - f->author_through_share;
        u->mean_through_share += (f->through_share - u->mean_through_share) * wt;
        u->mean_author_through_share += (f->author_through_share - u->mean_author_through_share) * wt;
        u->through_frames++;
        u->through_frames_plush += f->through_share > 0;
        u->through_frames_author += f->author_through_share > 0;
        if (u->worst_through_frame < 0 || gap > u->worst_through_share - u->worst_author_through_share) {
            u->worst_through_share = f->through_share;
            u->worst_author_through_share = f->author_through_share;
            u->worst_through_frame = (int64_t)frame;
        }
    }
    if (f->show_measured) {
        double ws = 1.0 / (double)(u->show_frames + 1), gap = f->show_share - f->author_show_share;
        u->mean_show_share += (f->show_share - u->mean_show_share) * ws;
        u->mean_author_show_share += (f->author_show_share - u->mean_author_show_share) * ws;
        u->show_frames++;
        u->show_frames_over += gap > PLUSH_SOFT_SKIN_FRAME_BAR;
        if (u->worst_show_frame < 0 || gap > u->worst_show_share - u->worst_author_show_share) {
            u->worst_show_share = f->show_share;
            u->worst_author_show_share = f->author_show_share;
            u->worst_show_frame = (int64_t)frame;
        }
    }
    if (f->jitter_measured) {
        double wj = 1.0 / (double)(u->jitter_frames + 1), gap = f->jitter_share - f->author_jitter_share;
        u->mean_jitter_share += (f->jitter_share - u->mean_jitter_share) * wj;
        u->mean_author_jitter_share += (f->author_jitter_share - u->mean_author_jitter_share) * wj;
        u->jitter_frames++;
        if (u->worst_jitter_frame < 0 || gap > u->worst_jitter_share - u->worst_author_jitter_share) {
            u->worst_jitter_share = f->jitter_share;
            u->worst_author_jitter_share = f->author_jitter_share;
            u->worst_jitter_frame = (int64_t)frame;
        }
    }
    if (f->author_surface && !plush_scene_soft_author_whole(f)) {
        if (u->torn_frame < 0 || f->author_strain_p999 > u->torn_strain_p999) {
            u->torn_strain_p999 = f->author_strain_p999;
            u->torn_frame = (int64_t)frame;
        }
        u->torn_frames++;
    } else {
        double ww = 1.0 / (double)(u->whole_frames + 1);
        u->whole_swing_share += (f->swing_share - u->whole_swing_share) * ww;
        u->whole_author_swing_share += (f->author_swing_share - u->whole_author_swing_share) * ww;
        u->whole_frames++;
    }
    u->last_offset_share = f->offset_share;
    u->last_swing_share = f->swing_share;
    u->last_author_swing_share = f->author_swing_share;
    u->frames++;
    if (u->worst_inside_frame < 0 || sc->soft_frame.inside_share > u->worst_inside_share) {
        u->worst_inside_share = sc->soft_frame.inside_share;
        u->worst_inside_depth = sc->soft_frame.inside_depth;
        u->worst_bones_inside_share = sc->soft_frame.bones_inside_share;
        u->worst_inside_frame = (int64_t)frame;
    }
    if (sc->soft_frame.bones_inside_share > u->most_bones_inside_share)
        u->most_bones_inside_share = sc->soft_frame.bones_inside_share;
    u->deepest = sc->soft_frame.inside_depth > u->deepest ? sc->soft_frame.inside_depth : u->deepest;
}

plush_status plush_scene_step(plush_scene *sc, double frame, plush_diag *diag)
{
    if (!sc)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no scene");
    if (!(frame >= 0 && frame <= PLUSH_SCENE_MAX_FRAME))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "frame %g is outside 0..%.0f", frame,
                               PLUSH_SCENE_MAX_FRAME);
    double t0 = now();
    /* this frame follows the one before by a step (else physics is reset at it) */
    bool follows = sc->have_frame && frame - sc->last_frame > 0 && frame - sc->last_frame <= 1;
    /* The frame before's soft measure runs beside this frame's motion and physics, up to the vertices' skinning;
     * a physics reset skins them at once, so it waits for it first. */
    double reset_wait = 0;
    if (sc->soft_measure.measuring && sc->wm && !follows) {
        take_soft(sc);
        reset_wait = now() - t0;
    }
    pose_before_physics(sc, frame);
    double t1 = now();
    if (sc->wm) {
        plush_status st = physics_to(sc, frame, diag);
        if (st != PLUSH_OK)
            return st;
        note_failures(sc, frame);
    }
    double t2 = now();
    plush_anim_deform(sc->anim, PLUSH_ANIM_AFTER_PHYSICS);
    if (sc->wm)
        plush__follow_frame(&sc->follow, sc->model, sc->anim, (const float(*)[16])sc->kinematic);
    double t3 = now();
    take_soft(sc);
    double waited = reset_wait + now() - t3;

    for (size_t r = 0; r < sc->bone_run_count; r++)
        plush_anim_skin(sc->anim, sc->bone_runs[r][0], sc->bone_runs[r][1], sc->positions, sc->normals);
    if (sc->wm)
        plush_world_soft_vertices(sc->wm, sc->positions, sc->normals);
    double tb = now();
    bool measure = sc->binding && sc->soft_measure.count;
    sc->soft_measure.consecutive = follows; /* a vertex's way since the frame before is measured then */
    sc->soft_push.advance = follows ? frame - sc->last_frame : 1.0; /* the push's warm start falls as far */
    if (measure) /* the author's skinning, on a second thread while the proxy skins and pushes */
        plush__soft_measure_begin(&sc->soft_measure, sc->anim, sc->wm ? (const float(*)[16])sc->kinematic : NULL,
                                  (const float(*)[3])sc->positions, (const float(*)[3])sc->normals);
    else /* a push without the measure poses the skin and the bodies itself, afresh each frame */
        sc->soft_measure.skin_posed = sc->soft_measure.bodies_posed = false;
    double t4 = now(), t5 = t4;
    if (sc->skin) {
        gather_proxy_nodes(sc);
        plush_proxy_skin_update(sc->skin, (const float(*)[3])sc->proxy_nodes);
        t5 = now();
        skin_to_proxy(sc);
        double tp = now();
        plush__soft_push_frame(&sc->soft_push, sc->skin, sc->positions, (const float(*)[3])sc->normals);
        sc->timing.push += now() - tp;
    }
    double t7 = now();
    if (measure) /* its figures come in at the next frame (or when asked for): beside its motion and physics */
        plush__soft_measure_launch(&sc->soft_measure, sc->anim, sc->wm ? (const float(*)[16])sc->kinematic : NULL,
                                   (const float(*)[3])sc->positions, (const float(*)[3])sc->normals);
    if (measure && sc->wm && sc->soft_measure.author_surface) /* this frame's, measured as the launch took it in */
        plush__follow_whole(&sc->follow, sc->soft_measure.author_now.strain_p999);
    sc->measure_at = frame;
    double t6 = now();
    /* the soft measure's share of this thread (posing the skin and the bodies, waiting for the author's skinning
     * and for the frame before's figures) counts as skinning; its own thread does not (plush_scene_timing) */
    sc->timing.measure += (t6 - t7) + (t4 - tb) + waited;
    sc->timing.motion += (t1 - t0 - reset_wait) + (t3 - t2);
    sc->timing.physics += t2 - t1;
    sc->timing.frames += t5 - t4;
    sc->timing.skinning += (t4 - t3) + (t6 - t5) + reset_wait;
    sc->timing.steps++;
    sc->last_frame = frame;
    sc->have_frame = true;
    return PLUSH_OK;
}

plush_status plush_scene_seek(plush_scene *sc, double frame, plush_diag *diag)
{
    if (!sc)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no scene");
    if (!sc->wm)
        return plush_scene_step(sc, frame, diag);
    plush_status st = plush_scene_step(sc, 0.0, diag);
    for (double t = 0.0; st == PLUSH_OK && t < frame;) {
        t = t + 1.0 < frame ? t + 1.0 : frame;
        st = plush_scene_step(sc, t, diag);
    }
    return st;
}

void plush_scene_get_desc(const plush_scene *sc, plush_scene_desc *out) { *out = sc->desc; }

void plush_scene_motion_stats(const plush_scene *sc, plush_motion_stats *out)
{
    *out = (plush_motion_stats){0};
    if (sc && sc->motion)
        plush_motion_stats_get(sc->motion, out);
}

plush_proxy_patch_shape plush_scene_patch(const plush_scene_desc *desc)
{
    if (desc->skin.patch.rings < 0)
        return (plush_proxy_patch_shape){0, 0};
    if (desc->skin.patch.rings > 0 || desc->skin.patch.reach > 0)
        return desc->skin.patch;
    return desc->skin.stretch || desc->bind.proxy.seed
               ? (plush_proxy_patch_shape){0, 0}
               : (plush_proxy_patch_shape){PLUSH_SCENE_PATCH_RINGS, PLUSH_SCENE_PATCH_REACH};
}

plush_status plush__scene_motion_frames(const plush_vmd_motion *motion, double fps, uint32_t *frames,
                                       plush_diag *diag)
{
    *frames = 300;
    if (!motion)
        return PLUSH_OK;
    /* the motion's last key, in output frames, included */
    double n = ceil((double)plush_vmd_last_frame(motion) * fps / VMD_FPS) + 1;
    if (!(n <= PLUSH_SCENE_MAX_FRAME))
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "motion", -1,
                               "its last key makes %.0f frames, more than the %.0f a run may have", n,
                               PLUSH_SCENE_MAX_FRAME);
    *frames = (uint32_t)n;
    return PLUSH_OK;
}

plush_status plush_scene_default_frames(const plush_scene *sc, uint32_t *frames, plush_diag *diag)
{
    return plush__scene_motion_frames(sc->desc.motion, sc->desc.fps, frames, diag);
}

const float (*plush_scene_positions(const plush_scene *sc))[3] { return (const float(*)[3])sc->positions; }
const float (*plush_scene_normals(const plush_scene *sc))[3] { return (const float(*)[3])sc->normals; }
const plush_scene_binding *plush_scene_get_binding(const plush_scene *sc) { return sc->binding; }

const plush_proxy_patch *plush_scene_get_patch(const plush_scene *sc) { return plush_proxy_skin_patch(sc->skin); }
const float (*plush_scene_proxy_nodes(const plush_scene *sc))[3]
{
    return sc->skin ? (const float(*)[3])sc->proxy_nodes : NULL;
}
bool plush_scene_hold_cage_folds(const plush_scene *sc, plush_quality *cage)
{
    if (!sc->skin)
        return true;
    const plush_scene_proxy *p = &sc->binding->proxy;
    bool *held = calloc(p->node_count ? p->node_count : 1, sizeof *held);
    if (!held)
        return false;
    for (size_t k = 0; k < p->part_count; k++) {
        const plush_scene_proxy_part *part = &p->parts[k];
        plush_world_soft_info info;
        plush_world_soft_get_info(sc->wm, (size_t)part->soft_body, &info);
        for (size_t n = 0; info.pinned && info.node_count == part->mesh.node_count && n < info.node_count; n++)
            held[part->first_node + n] = info.pinned[n];
    }
    plush_quality_hold_folds(cage, held);
    free(held);
    return true;
}
const plush_anim *plush_scene_get_anim(const plush_scene *sc) { return sc->anim; }

const plush_pmx_model *plush_scene_direct_model(const plush_scene *sc, plush_scene_direct_stats *stats)
{
    if (stats)
        *stats = sc->direct_stats;
    return sc->direct_model;
}
/* The soft measure under way finishes here when asked for (the scene's figures are only complete with it): a
 * const scene is taken in as the sinks' caches are filled (plush__scene_bake_share). */
void plush_scene_soft(const plush_scene *sc, plush_scene_soft_figures *frame, plush_scene_soft_summary *summary)
{
    take_soft((plush_scene *)sc);
    if (frame)
        *frame = sc->soft_frame;
    if (summary)
        *summary = sc->soft_summary;
}

bool plush_scene_soft_at(const plush_scene *sc, double frame, plush_scene_soft_figures *out)
{
    if (sc->soft_measure.measuring && sc->measure_at == frame)
        take_soft((plush_scene *)sc);
    if (sc->soft_at >= 0 && sc->soft_at == frame)
        *out = sc->soft_frame;
    else if (sc->soft_before_at >= 0 && sc->soft_before_at == frame)
        *out = sc->soft_before;
    else
        return false;
    return true;
}

void plush_scene_get_timing(const plush_scene *sc, plush_scene_timing *out)
{
    *out = sc->timing;
    out->measure_beside = sc->soft_measure.measure_seconds + sc->soft_measure.author_seconds;
}
void plush__scene_add_export_time(plush_scene *sc, double seconds) { sc->timing.exports += seconds; }

size_t plush_scene_failures(const plush_scene *sc, int64_t *first_frame)
{
    if (first_frame)
        *first_frame = sc->first_failure;
    return sc->failures;
}

uint64_t plush_scene_cloth_solves(const plush_scene *sc, uint64_t *unfinished)
{
    uint64_t solves = 0, short_of = 0;
    for (size_t s = 0; sc && sc->wm && s < sc->model->soft_body_count; s++) {
        plush_world_soft_info info;
        plush_world_soft_get_info(sc->wm, s, &info);
        solves += info.cloth_solves;
        short_of += info.cloth_unfinished;
    }
    if (unfinished)
        *unfinished = short_of;
    return solves;
}

size_t plush_scene_frozen(const plush_scene *sc)
{
    size_t n = 0;
    for (size_t s = 0; sc && s < sc->model->soft_body_count; s++)
        n += sc->soft_state[s] == PLUSH_SOFT_FAILED;
    return n;
}

plush__texture_store *plush__scene_textures(const plush_scene *scene)
{
    return scene->textures;
}

const float (*plush__scene_push_offsets(const plush_scene *scene))[3]
{
    return scene && scene->soft_push.sm ? (const float(*)[3])scene->soft_push.offset : NULL;
}

/* A cache the sinks fill through a const scene, as the texture store is. */
plush__bake_share *plush__scene_bake_share(const plush_scene *scene)
{
    return (plush__bake_share *)&scene->bake_share;
}

void plush_scene_destroy(plush_scene *sc)
{
    if (!sc)
        return;
    plush__soft_measure_fini(&sc->soft_measure); /* first: its thread reads the model, the world's poses */
    plush__texture_store_destroy(sc->textures);
    if (sc->bake_share.bake && sc->bake_share.destroy)
        sc->bake_share.destroy(sc->bake_share.bake);
    plush_world_destroy(sc->world);
    plush_proxy_skin_destroy(sc->skin);
    plush_scene_binding_free(sc->binding);
    plush_anim_destroy(sc->anim);
    plush_motion_free(sc->motion);
    plush_pmx_free(sc->direct_model);  /* after everything that reads it */
    free(sc->direct_cloth);
    plush_arena_free(&sc->arena);
    free(sc);
}
