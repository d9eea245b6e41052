/* plush compare's job: the generated cages, the runs in lockstep, per-frame statistics and CSV rows, then
 * the files (report.md in compare_report.c, plots and pictures in compare_pictures.c). */
#include "compare/compare_internal.h"
#include "scene/internal.h"
#include "physics/rigid_shape.h"
#include "plush/sys/attach.h"
#include "plush/sys/core.h"
#include "plush/sys/render.h"
#include "plush/sys/scene.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void csv_number(plush_buf *b, double v, double scale)
{
    if (isfinite(v))
        buf_printf(b, ",%.9g", v * scale);
    else
        buf_printf(b, ",");
}

static void record_frame(plush_compare_study *s, uint32_t f)
{
    plush__compare_quality_frame(s, f);
    const plush_compare_run_frame *rf = plush_compare_run_frames(s->cmp);
    const plush_compare_pair_frame *pf = plush_compare_pair_frames(s->cmp);
    for (size_t r = 0; r < s->run_count; r++) {
        run_stats *st = &s->rstats[r];
        s->series_run[(size_t)f * s->run_count + r] = rf[r].valid ? 1e3 * (rf[r].physics + rf[r].skinning) : NAN;
        if (!rf[r].valid)
            continue;
        st->physics += rf[r].physics, st->skinning += rf[r].skinning, st->frames++;
        if (isfinite(rf[r].volume_ratio)) {
            st->vol_min = st->vol_frames ? fmin(st->vol_min, rf[r].volume_ratio) : rf[r].volume_ratio;
            st->vol_max = st->vol_frames ? fmax(st->vol_max, rf[r].volume_ratio) : rf[r].volume_ratio;
            st->vol_frames++;
        }
    }
    for (size_t p = 0; p < s->pair_count; p++) {
        s->series_pair[(size_t)f * s->pair_count + p] = pf[p].valid ? pf[p].error.rms : NAN;
        s->series_normal[(size_t)f * s->pair_count + p] = pf[p].valid ? pf[p].error.normal_mean : NAN;
        if (!pair_shown(s, p))
            continue;
        size_t a = s->pairs[p].a, b = s->pairs[p].b;
        buf_printf(&s->csv, "%u,%s,%s", f, run_name(s, a), run_name(s, b));
        const plush_compare_error *e = &pf[p].error;
        double v[5] = {e->rms, e->p95, e->max, e->normal_mean, e->normal_max};
        for (int k = 0; k < 5; k++)
            csv_number(&s->csv, pf[p].valid ? v[k] : NAN, 1);
        csv_number(&s->csv, rf[a].valid ? rf[a].volume_ratio : NAN, 1);
        csv_number(&s->csv, rf[b].valid ? rf[b].volume_ratio : NAN, 1);
        csv_number(&s->csv, rf[a].valid ? rf[a].physics : NAN, 1e3);
        csv_number(&s->csv, rf[a].valid ? rf[a].skinning : NAN, 1e3);
        csv_number(&s->csv, rf[b].valid ? rf[b].physics : NAN, 1e3);
        csv_number(&s->csv, rf[b].valid ? rf[b].skinning : NAN, 1e3);
        plush__compare_quality_csv_row(s->quality, &s->csv, a, b);
        buf_printf(&s->csv, "\n");
        if (!pf[p].valid)
            continue;
        pair_stats *ps = &s->pstats[p];
        if (!ps->frames || v[0] > ps->max[0])
            ps->worst_frame = f;
        for (int k = 0; k < 5; k++) {
            ps->sum[k] += v[k];
            ps->max[k] = ps->frames ? fmax(ps->max[k], v[k]) : v[k];
        }
        ps->frames++;
    }
}

/* Runs: bones, direct, the model's own proxy (when it has one), one per generated cage. Pairs: each proxy
 * against direct, bones against direct, each proxy against bones (the soft body's own effect, measured
 * even when direct cannot run). */
static plush_status plan_runs(plush_compare_study *s, plush_diag *diag)
{
    size_t proxies = (s->own_proxy ? 1 : 0) + s->variant_count;
    s->run_count = 2 + proxies + s->has_quarter;
    s->pair_count = 1 + 2 * proxies + s->has_quarter;
    s->runs = calloc(s->run_count, sizeof *s->runs);
    s->run_names = calloc(s->run_count, sizeof *s->run_names);
    s->pairs = calloc(s->pair_count, sizeof *s->pairs);
    if (!s->runs || !s->run_names || !s->pairs)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    s->runs[RUN_BONES] = (plush_compare_run_desc){.name = "bones", .kind = PLUSH_COMPARE_BONES};
    /* direct simulates the model's own soft body on the detailed mesh; a model without one borrows the first
     * generated cage's (the same parameters every cage gets) */
    s->runs[RUN_DIRECT] = (plush_compare_run_desc){.name = "direct", .kind = PLUSH_COMPARE_DIRECT, .optional = true,
                                                   .model = s->has_finer ? s->finer.model
                                                            : s->own_proxy ? NULL : s->variants[0].model};
    size_t r = RUN_PROXY;
    if (s->own_proxy)
        s->runs[r++] = (plush_compare_run_desc){.name = "proxy", .kind = PLUSH_COMPARE_PROXY};
    for (size_t i = 0; i < s->variant_count; i++, r++) {
        snprintf(s->run_names[r], sizeof s->run_names[r], "proxy %zu", s->variants[i].triangles);
        s->runs[r] = (plush_compare_run_desc){.name = s->run_names[r], .kind = PLUSH_COMPARE_PROXY,
                                              .model = s->variants[i].model};
    }
    size_t p = 0;
    s->pairs[p++] = (plush_compare_pair){.a = RUN_PROXY, .b = RUN_DIRECT};
    s->pairs[p++] = (plush_compare_pair){.a = RUN_BONES, .b = RUN_DIRECT};
    for (size_t k = 1; k < proxies; k++)
        s->pairs[p++] = (plush_compare_pair){.a = RUN_PROXY + k, .b = RUN_DIRECT};
    for (size_t k = 0; k < proxies; k++)
        s->pairs[p++] = (plush_compare_pair){.a = RUN_PROXY + k, .b = RUN_BONES};
    /* convergence: direct at a quarter of the triangles against direct, on the vertices both simulate (with
     * the finer reference, direct/4 is the model's own part and simulates every vertex measured) */
    if (s->has_quarter) {
        s->quarter_run = r, s->quarter_pair = p;
        s->runs[r] = (plush_compare_run_desc){.name = "direct/4", .kind = PLUSH_COMPARE_DIRECT, .optional = true,
                                              .model = s->has_finer ? NULL : s->quarter.model};
        s->pairs[p++] = (plush_compare_pair){.a = r, .b = RUN_DIRECT, .surface = s->has_finer ? NULL : s->quarter.model};
    }
    return PLUSH_OK;
}

/* Every generated cage, each made as the CLI asked it (its warnings, plush_attach's, go into diag). */
static plush_status make_variants(plush_compare_study *s, float size, plush_diag *diag)
{
    const plush_compare_study_desc *desc = &s->desc;
    s->variants = calloc(desc->cage_count ? desc->cage_count : 1, sizeof *s->variants);
    if (!s->variants)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    /* a part's cages are made as plush run --cage makes one, for the cage's materials or the part's */
    const char *const *names = desc->cage_material_count ? desc->cage_materials : desc->materials;
    size_t count = desc->cage_material_count ? desc->cage_material_count : desc->material_count;
    for (size_t i = 0; i < desc->cage_count; i++) {
        plush_compare_variant *v = &s->variants[s->variant_count++];
        size_t target = desc->cage_triangles[i];
        /* a cage --cage made has the preset as run --cage gives it: each of these gets it for its own size */
        plush_status st = count ? plush__compare_part_variant_make(s->model, names, count, target, desc->pin_band,
                                                                   desc->cage_material_count > 0, v, diag)
                                : plush__compare_variant_make(s->model, target, size, v, diag);
        if (st != PLUSH_OK)
            return st;
        /* a target the part cannot meet is said, with why */
        char note[320];
        if (v->part && plush_attach_target_note(&v->made, target, "each piece keeps its own cage", note,
                                                sizeof note)[0])
            plush_diag_warn(diag, -1, "cage", (int64_t)i, "--proxy-triangles %zu: the cage has %zu triangles%s",
                            target, v->triangles, note);
    }
    return PLUSH_OK;
}

/* The frames asked for, or those a run of the motion computes (plush_scene_default_frames): within
 * PLUSH_SCENE_MAX_FRAME either way, before anything is allocated per frame. */
static plush_status study_frames(const plush_compare_study_desc *desc, float fps, uint32_t *frames, plush_diag *diag)
{
    if (!desc->frames)
        return plush__scene_motion_frames(desc->motion, fps, frames, diag);
    if (!(desc->frames <= PLUSH_SCENE_MAX_FRAME))
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "frames", -1, "%u frames, more than the %.0f a run may have",
                               desc->frames, PLUSH_SCENE_MAX_FRAME);
    *frames = desc->frames;
    return PLUSH_OK;
}

static plush_status study_start(plush_compare_study *s, plush_diag *diag)
{
    const plush_compare_study_desc *desc = &s->desc;
    plush_status st = study_frames(desc, desc->fps ? desc->fps : PLUSH_SCENE_DEFAULT_FPS, &s->frames, diag);
    if (st != PLUSH_OK)
        return st;
    s->own_proxy = plush_compare_has_proxy(s->model);
    if (!s->own_proxy && desc->cage_count == 0)
        return plush_diag_fail(diag, PLUSH_E_NO_PROXY, -1, "soft body", -1,
                               "no TriMesh soft body and no cage to generate");
    /* the size errors are a share of: the part's, when one is compared */
    plush_compare_surface *surf = NULL;
    st = plush__compare_surface_of(s->model, desc->materials, desc->material_count, &surf, diag);
    if (st != PLUSH_OK)
        return st;
    float size = surf->diagonal > 0 ? surf->diagonal : 1;
    /* the reference: plush's cloth solver, a material in physical units, where its cost is affordable */
    s->cloth_nodes = 4 * surf->vertex_count;
    s->reference_chosen = !desc->direct_bullet && !desc->direct_cloth;
    s->desc.direct_cloth = !desc->direct_bullet &&
                           (desc->direct_cloth || s->cloth_nodes <= PLUSH__COMPARE_CLOTH_NODES);
    s->author_physics = plush__rigid_moved_share(s->model, surf->vertices, surf->vertex_count) > 0;
    st = make_variants(s, size, diag);
    plush_compare_surface_free(surf);
    if (st != PLUSH_OK)
        return st;
    /* The convergence run needs the model's own soft body. With the cloth solver (a material in physical
     * units) the reference is the part at four times its detail, each face split at its edges' midpoints, and
     * the convergence run the detailed mesh itself: a nested refinement, where a quarter simplified by
     * meshoptimizer is slivers that bend only along them. With Bullet's calibrated reference (a
     * resolution-dependent solver either way) the quarter is simplified, which costs a fraction of direct. */
    if (s->own_proxy && !desc->no_quarter) {
        plush_diag local = {.offset = -1, .index = -1};
        if (desc->direct_cloth) {
            s->has_finer = s->has_quarter =
                plush__compare_finer_make(s->model, desc->materials, desc->material_count, &s->finer, &local) ==
                PLUSH_OK;
            s->quarter_faces = s->finer.source_pieces, s->direct_faces = s->finer.triangles;
        } else {
            s->has_quarter = plush__compare_quarter_make(s->model, desc->materials, desc->material_count,
                                                         &s->quarter, &local) == PLUSH_OK;
            s->quarter_faces = s->quarter.triangles, s->direct_faces = s->quarter.source_pieces;
        }
        if (!s->has_quarter)
            plush_diag_warn(diag, -1, NULL, -1, "direct/4 (convergence) not run: %s", local.message);
    }
    if ((st = plan_runs(s, diag)) != PLUSH_OK)
        return st;
    plush_compare_desc cdesc = {.model = s->model,
                                .motion = desc->motion,
                                .fps = desc->fps,
                                .world = {.physics_hz = desc->physics_hz},
                                .bind = {.proxy = {.seed = desc->seed},
                                         .bound = {.materials = desc->materials,
                                                   .material_count = desc->material_count,
                                                   .left_out = desc->left_out,
                                                   .left_out_count = desc->left_out_count}},
                                .overrides = desc->overrides,
                                .direct_cloth = desc->direct_cloth,
                                .overrides_file = desc->overrides_file,
                                .runs = s->runs,
                                .run_count = s->run_count,
                                .pairs = s->pairs,
                                .pair_count = s->pair_count};
    if ((st = plush_compare_create(&cdesc, &s->cmp, diag)) != PLUSH_OK)
        return st;
    s->pstats = calloc(s->pair_count, sizeof *s->pstats);
    s->rstats = calloc(s->run_count, sizeof *s->rstats);
    s->series_pair = malloc((size_t)s->frames * s->pair_count * sizeof *s->series_pair);
    s->series_normal = malloc((size_t)s->frames * s->pair_count * sizeof *s->series_normal);
    s->series_run = malloc((size_t)s->frames * s->run_count * sizeof *s->series_run);
    if (!s->pstats || !s->rstats || !s->series_pair || !s->series_normal || !s->series_run)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    s->size = size;
    if ((st = plush__compare_pictures_setup(s, diag)) != PLUSH_OK ||
        (st = plush__compare_quality_setup(s, diag)) != PLUSH_OK)
        return st;
    buf_printf(&s->csv, "frame,run_a,run_b,rms,p95,max,normal_mean_deg,normal_max_deg,volume_ratio_a,"
                                   "volume_ratio_b,physics_ms_a,skinning_ms_a,physics_ms_b,skinning_ms_b");
    plush__compare_quality_csv_header(&s->csv);
    buf_printf(&s->csv, "\n");
    return PLUSH_OK;
}

plush_status plush_compare_study_create(const plush_compare_study_desc *desc, plush_compare_study **out,
                                        plush_diag *diag)
{
    *out = NULL;
    if (!desc || !desc->model || !desc->out_dir || (desc->cage_count && !desc->cage_triangles))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no model, report directory or cage sizes");
    plush_compare_study *s = calloc(1, sizeof *s);
    if (!s)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    s->desc = *desc;
    if (!s->desc.model_file)
        s->desc.model_file = "model";
    s->model = desc->model;
    plush_status st = study_start(s, diag);
    if (st != PLUSH_OK) {
        plush_compare_study_destroy(s);
        return st;
    }
    *out = s;
    return PLUSH_OK;
}

uint32_t plush_compare_study_frame_count(const plush_compare_study *study)
{
    return study->frames;
}

plush_status plush_compare_study_step(plush_compare_study *s, uint32_t frame, plush_diag *diag)
{
    if (frame >= s->frames)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "frame", frame, "past the study's %u frames", s->frames);
    plush_status st = plush_compare_step(s->cmp, frame, diag);
    if (st != PLUSH_OK)
        return st;
    record_frame(s, frame);
    plush__compare_pictures_frame(s, frame, diag);
    return PLUSH_OK;
}

plush_status plush_compare_study_finish(plush_compare_study *s, plush_diag *diag)
{
    const char *file = diag->file;
    plush__compare_pictures_finish(s, diag);
    plush__compare_name_file(s, "metrics.csv", diag);
    if (!s->failed_file || s->csv.failed)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    plush_status st = plush_file_write_atomic(s->failed_file, s->csv.data, s->csv.size, diag);
    if (st == PLUSH_OK)
        st = plush__compare_plots_over_time(s, diag);
    if (st == PLUSH_OK)
        st = plush__compare_plots_by_size(s, diag);
    if (st == PLUSH_OK)
        st = plush__compare_quality_plot(s, diag);
    if (st != PLUSH_OK)
        return st;
    plush__compare_name_file(s, "report.md", diag);
    if (!s->failed_file)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    st = plush__compare_write_report(s, s->size, s->failed_file, diag);
    if (st == PLUSH_OK)
        diag->file = file;
    return st;
}

const plush_compare *plush_compare_study_runs(const plush_compare_study *study)
{
    return study->cmp;
}

size_t plush_compare_study_run_count(const plush_compare_study *study)
{
    return study->run_count;
}

double plush_compare_study_ms_per_frame(const plush_compare_study *study, size_t run)
{
    return run < study->run_count ? ms_per_frame(&study->rstats[run]) : NAN;
}

void plush_compare_study_destroy(plush_compare_study *s)
{
    if (!s)
        return;
    plush_compare_destroy(s->cmp);
    for (size_t i = 0; i < s->variant_count; i++)
        plush__compare_variant_free(&s->variants[i]);
    plush__compare_variant_free(&s->quarter);
    plush__compare_variant_free(&s->finer);
    free(s->variants);
    free(s->runs);
    free(s->run_names);
    free(s->pairs);
    free(s->pstats);
    free(s->rstats);
    free(s->series_pair);
    free(s->series_normal);
    free(s->series_run);
    plush_buf_free(&s->csv);
    free(s->failed_file);
    free(s->keep_pos);
    free(s->keep_nrm);
    free(s->keep_dist);
    free(s->colors);
    plush_image_free(&s->panel);
    plush_image_free(&s->sheet);
    plush__compare_quality_free(s->quality);
    free(s);
}
