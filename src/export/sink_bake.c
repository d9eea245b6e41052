/* Export "pmx+vmd": the bake (scene.h, plush_scene_bake_*) as a sink -- a key per frame for every
 * pseudo-bone, both files written when the run ends, the textures named from OUTDIR (or copied there). */
#include "core/common.h"
#include "export/bake_internal.h"
#include "export/sink_internal.h"
#include "plush/sys/core.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct bake_sink {
    plush_scene_sink base;
    plush_scene_bake *bake;
    char *pmx, *vmd;
    char *model_file;         /* NULL: the texture paths stay as stored */
    char *final_dir;          /* the folder the bake ends in; NULL: where it is written */
    bool copy_textures;
    bool stretch;             /* the mesh exports use stretch-aware frames the bake cannot hold */
    double tolerance;         /* model units; < 0: every key */
    uint32_t bones;           /* fitted bones asked for; 0: chosen from the tolerance */
    bool physics;             /* --bake-physics */
    bool shared;              /* the bake is the scene's (shared with the glTF export) */
    size_t bodies;            /* the model's rigid bodies physics moves */
    plush_scene_bake_stats stats;   /* once written */
    bool written;
} bake_sink;

static plush_status bake_frame(plush_scene_sink *s, const plush_scene *scene, uint32_t frame, plush_diag *diag)
{
    bake_sink *b = (bake_sink *)s;
    plush_diag local = {.file = b->vmd};
    plush_status st = plush__sink_bake_frame(b->bake, scene, frame, &local);
    if (st == PLUSH_OK)
        st = plush__bake_physics_frame(b->bake, plush_scene_get_anim(scene), &local);
    return st == PLUSH_OK ? st : plush__sink_fail(diag, &local);
}

static plush_status bake_end(plush_scene_sink *s, const plush_scene *scene, plush_diag *diag)
{
    (void)scene;
    bake_sink *b = (bake_sink *)s;
    plush_diag local = {.file = b->pmx};
    plush_scene_bake_write_options opt = {.model_file = b->model_file, .copy_textures = b->copy_textures,
                                          .bake_dir = b->final_dir, .stats = &b->stats};
    plush_status st = plush_scene_bake_fit(b->bake, b->bones, &local);
    /* plush_scene_bake_write_with names the file at fault itself */
    if (st == PLUSH_OK)
        st = plush_scene_bake_write_with(b->bake, b->pmx, b->vmd, &opt, &local);
    b->written = st == PLUSH_OK;
    if (b->written && b->stats.over_budget) {
        char fix[160];
        if (b->stats.budget_error > 0)
            snprintf(fix, sizeof fix, "without --bake-tolerance the bake keeps within them, each vertex within "
                     "%.3g units", b->stats.budget_error);
        else
            snprintf(fix, sizeof fix, "no tolerance brings it under: fewer --frames or --bake-bones");
        plush_diag_warn(&local, -1, NULL, -1,
                        "the baked motion holds %zu keys, %zu more than a player's budget (MMD loads %u keys; "
                        "%u MB): %s", b->stats.keys, b->stats.over_budget, PLUSH__MMD_MAX_KEYS,
                        PLUSH__BAKE_MAX_BYTES / 1000000u, fix);
    }
    plush__diag_forward(diag, &local, NULL); /* the writer's warnings: missing textures */
    return st == PLUSH_OK ? st : plush__sink_fail(diag, &local);
}

/* The soft part's size, as the eye compares an error on it: its bound vertices' box diagonal at rest. */
static double part_size(const plush_scene_binding *b)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY}, d = 0;
    for (size_t i = 0; i < b->vertex_count; i++)
        for (int k = 0; k < 3; k++) {
            double v = b->model->vertices[b->vertices[i]].position[k];
            lo[k] = fmin(lo[k], v), hi[k] = fmax(hi[k], v);
        }
    for (int k = 0; b->vertex_count && k < 3; k++)
        d += (hi[k] - lo[k]) * (hi[k] - lo[k]);
    return sqrt(d);
}

static int bake_describe(const plush_scene_sink *s, char *buf, size_t size)
{
    const bake_sink *b = (const bake_sink *)s;
    char figures[1800] = "";
    if (b->written) {
        char tol[560] = "a key every frame", fit[320] = "";
        double height = plush_pmx_height(b->bake->binding->model), part = part_size(b->bake->binding);
        char share[96] = "";
        if (height > 0 && b->stats.error >= 0)
            snprintf(share, sizeof share, " (%.2g%% of the model's height%s", 100.0 * b->stats.error / height,
                     part > 0 ? "" : ")");
        if (height > 0 && part > 0 && b->stats.error >= 0)
            snprintf(share + strlen(share), sizeof share - strlen(share), ", %.2g%% of the soft part's size)",
                     100.0 * b->stats.error / part);
        if (b->stats.budget_limited)
            snprintf(tol, sizeof tol, "within %.3g units%s, raised from %.3g to keep within a player's budget: %u keys, "
                     "%u MB", b->stats.error, share, b->tolerance, PLUSH__MMD_MAX_KEYS, PLUSH__BAKE_MAX_BYTES / 1000000u);
        else if (b->stats.error >= 0)
            snprintf(tol, sizeof tol, "within %.3g units%s", b->stats.error, share);
        /* and where the budget raised it, the RMS the guard held (bake.c) */
        if (b->stats.budget_limited && b->stats.rms_bound > 0)
            snprintf(tol + strlen(tol), sizeof tol - strlen(tol), "; RMS over the soft part within %.3g at every frame%s",
                     b->stats.rms_bound, b->stats.rms_keys ? "" : " as they are");
        if (b->stats.budget_limited && b->stats.rms_keys)
            snprintf(tol + strlen(tol), sizeof tol - strlen(tol), " (%zu keys where it would pass %.3g)",
                     b->stats.rms_keys,
                     b->tolerance > 0 && b->stats.bones != b->stats.triangles ? 0.5 * b->tolerance : b->tolerance);
        /* The keys are reduced within the tolerance of the bones they key; the bones a count asked for
         * (--bake-bones) are not chosen to meet it, so a fit that misses by more is said to, beside the
         * tolerance -- with a tolerance of 0 a key every frame is no exact bake then. */
        bool fitted = b->stats.bones != b->stats.triangles;
        if (fitted && b->bones && (b->tolerance < 0 || b->stats.fit_worst > b->tolerance))
            snprintf(tol + strlen(tol), sizeof tol - strlen(tol),
                     " of the %zu bones asked for, which miss the exact bake by up to %.3g units", b->stats.bones,
                     b->stats.fit_worst);
        else if (fitted && b->stats.budget_limited && b->stats.fit_worst > b->tolerance)
            snprintf(tol + strlen(tol), sizeof tol - strlen(tol),
                     " with %zu bones, the count whose fit and keys miss least within the budget; the fit "
                     "misses the exact bake by up to %.3g units", b->stats.bones, b->stats.fit_worst);
        char carried[160] = "";
        if (b->stats.carried)
            snprintf(carried, sizeof carried, " (%zu of the bones are pseudo-bones of the triangles carrying "
                     "vertices the fitted ones miss)", b->stats.carried);
        if (b->stats.bones != b->stats.triangles)
            snprintf(fit, sizeof fit, "\nfitted to %zu cage triangles in %.2f s%s: RMS %.3g, worst vertex %.3g units",
                     b->stats.triangles, b->stats.fit_seconds, carried, b->stats.fit_rms, b->stats.fit_worst);
        else if (b->stats.fit_tried_seconds >= 0.1)
            snprintf(fit, sizeof fit, "\nno fewer bones fit or win against the exact bake (tried in %.2f s)",
                     b->stats.fit_tried_seconds);
        char physics[240] = "", renamed[120] = "";
        if (b->stats.physics_renamed)
            snprintf(renamed, sizeof renamed, " (%zu renamed: VMD keeps 15 bytes of a name, and theirs shared them)",
                     b->stats.physics_renamed);
        if (b->physics)
            snprintf(physics, sizeof physics, "\nphysics baked: %zu bones keyed as plush moved them%s, their %zu rigid "
                     "bodies follow them", b->stats.physics_bones, renamed, b->stats.physics_bodies);
        else if (b->bodies)
            snprintf(physics, sizeof physics, "\nphysics left to the player: %zu rigid bod%s simulate%s there "
                     "(--bake-physics keys %s instead)", b->bodies, b->bodies == 1 ? "y" : "ies",
                     b->bodies == 1 ? "s" : "", b->bodies == 1 ? "it" : "them");
        snprintf(figures, sizeof figures, "\n%zu bones, %zu keys (%zu recorded, %s)%s; PMX %.1f MB, VMD %.1f MB%s%s",
                 b->stats.bones, b->stats.keys, b->stats.keys_recorded, tol,
                 b->stats.over_budget ? ": too many for MMD" : "", b->stats.pmx_bytes / 1e6,
                 b->stats.vmd_bytes / 1e6, fit, physics);
    }
    return snprintf(buf, size, "%s\n%s%s%s", b->pmx, b->vmd, figures,
                    b->stretch ? "\n(stretch-aware frames cannot be bone keys: the bake uses rigid frames)" : "");
}

static void bake_destroy(plush_scene_sink *s)
{
    bake_sink *b = (bake_sink *)s;
    if (!b->shared)
        plush_scene_bake_destroy(b->bake);
    free(b->pmx);
    free(b->vmd);
    free(b->model_file);
    free(b->final_dir);
    free(b);
}

/* A key per frame and pseudo-bone, and with --bake-physics per frame and driven bone: 28 bytes recorded
 * (seven floats), then a VMD key in memory and 111 bytes in the file while the motion is written. */
static void bake_estimate(const plush_scene_sink *s, uint32_t frames, double *memory, double *disk)
{
    const bake_sink *b = (const bake_sink *)s;
    double bones = (double)b->bake->triangle_count + (b->physics ? (double)b->bake->physics_bone_count : 0.0);
    double keys = (double)frames * bones;
    *memory = keys * (28.0 + (double)sizeof(plush_vmd_bone_key) + 111.0);
    *disk = keys * 111.0;
}

static size_t bake_outputs(const plush_scene_sink *sink, const char **paths, size_t max)
{
    const bake_sink *b = (const bake_sink *)sink;
    if (max > 0)
        paths[0] = b->pmx;
    if (max > 1)
        paths[1] = b->vmd;
    return 2;
}

static const plush_scene_sink_ops bake_ops = {.frame = bake_frame,
                                              .end = bake_end,
                                              .describe = bake_describe,
                                              .destroy = bake_destroy,
                                              .estimate = bake_estimate,
                                              .outputs = bake_outputs};

static plush_status bake_create(const plush_scene *scene, const plush_scene_output *out, plush_scene_sink **sink,
                                plush_diag *diag)
{
    bake_sink *b = calloc(1, sizeof *b);
    if (b) {
        b->base.ops = &bake_ops;
        b->pmx = plush__sink_path(out, PLUSH__OUT_SUFFIX ".pmx");
        b->vmd = plush__sink_path(out, PLUSH__OUT_SUFFIX ".vmd");
        b->copy_textures = out->copy_textures;
        if (out->model_file)
            b->model_file = strdup(out->model_file);
        if (out->final_dir)
            b->final_dir = strdup(out->final_dir);
    }
    if (!b || !b->pmx || !b->vmd || (out->model_file && !b->model_file) || (out->final_dir && !b->final_dir)) {
        if (b)
            bake_destroy(&b->base);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    plush_scene_desc desc;
    plush_scene_get_desc(scene, &desc);
    b->stretch = desc.skin.stretch;
    plush_status st = plush__sink_bake_get(scene, out, &b->bake, &b->shared, diag);
    if (st != PLUSH_OK) {
        bake_destroy(&b->base);
        return st;
    }
    b->tolerance = b->bake->tolerance;
    b->bones = out->bake_bones;
    b->physics = out->bake_physics;
    if ((b->physics && (st = plush__bake_physics_begin(b->bake, diag)) != PLUSH_OK) ||
        (st = plush__bake_vmd_names(b->bake, diag)) != PLUSH_OK) {
        bake_destroy(&b->base);
        return st;
    }
    b->bodies = 0;
    for (size_t r = 0; r < desc.model->rigid_body_count; r++)
        b->bodies += desc.model->rigid_bodies[r].mode != PLUSH_PMX_RIGID_FOLLOW_BONE;
    *sink = &b->base;
    return PLUSH_OK;
}

const plush_scene_export plush__export_bake = {
    .name = "pmx+vmd",
    .label = "baked",
    .help = "OUTDIR/<model>_plush.pmx + .vmd: PMX 2.0 + a key per frame (any MMD player; proxy mode)",
    .modes = PLUSH_SCENE_MODE_BIT(PLUSH_SCENE_PROXY),
    .create = bake_create,
};
