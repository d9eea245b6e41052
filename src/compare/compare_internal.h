/* Between the compare study's files: compare_study.c steps the runs and keeps the statistics,
 * compare_report.c writes report.md from them, compare_pictures.c draws the plots and the pictures. */
#ifndef PLUSH_SCENE_COMPARE_INTERNAL_H
#define PLUSH_SCENE_COMPARE_INTERNAL_H

#include "plush/sys/render.h"
#include "plush/compare.h"
#include "plush/sys/core.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#if defined(__GNUC__)
#define PLUSH__PRINTF(fmt_arg, first_arg) __attribute__((format(printf, fmt_arg, first_arg)))
#else
#define PLUSH__PRINTF(fmt_arg, first_arg)
#endif

/* ---- the metrics on plain arrays, and the cages a comparison makes --------------------------------- */

/* The surface of an indexed triangle list over vertex_count rest positions (index_count a multiple of 3).
 * Fails with PLUSH_E_RANGE on an index out of range, PLUSH_E_ARGUMENT on a non-finite used position or an
 * index count that is not a multiple of 3, PLUSH_E_NOMEM. */
plush_status plush__compare_surface_create(const float (*rest)[3], size_t vertex_count, const uint32_t *indices,
                                          size_t index_count, plush_compare_surface **out, plush_diag *diag);
/* in_part[m] (model->material_count entries) for the materials a comparison measures: those the names
 * mean (plush_pmx_material_choose; count 0: every material) that no soft body owns. Fails as
 * plush_pmx_material_choose on a name that means no material. */
plush_status plush__compare_part_mask(const plush_pmx_model *model, const char *const *materials, size_t count,
                                      bool *in_part, plush_diag *diag);
/* The surface of those materials' faces (plush_compare_surface_from_model when count is 0). */
plush_status plush__compare_surface_of(const plush_pmx_model *model, const char *const *materials, size_t count,
                                      plush_compare_surface **out, plush_diag *diag);
/* Signed volume of the closed pieces with these positions (indexed like the rest positions); NaN when the
 * surface has no closed piece. */
double plush__compare_volume(const plush_compare_surface *surface, const float (*positions)[3]);
/* The surface's area-weighted vertex normals from positions (not unit length), into out at each measured
 * vertex (out holds an entry for every index the surface names). The compare measures normals this way
 * on both runs of a pair, whatever the runs' shading normals are. */
void plush__compare_surface_normals(const plush_compare_surface *surface, const float (*positions)[3],
                                   float (*out)[3]);
/* The error of b against a over the measured vertices. distances (surface->vertex_count floats, may be NULL)
 * gets each measured vertex's distance, in surface->vertices order; scratch (surface->vertex_count floats)
 * is working space for the percentile. With no measured vertex everything is 0. */
void plush__compare_measure(const plush_compare_surface *surface, const float (*pa)[3], const float (*na)[3],
                           const float (*pb)[3], const float (*nb)[3], float *distances, float *scratch,
                           plush_compare_error *out);

/* ---- a cage made for a comparison (src/compare/compare_variant.c) ------------------------------------ */

/* One proxy run on a cage of about `target` triangles made from the model's visible surface. */
typedef struct plush_compare_variant {
    size_t target, triangles;
    size_t pieces, pinned;        /* plush_attach's: soft bodies (edge-connected pieces) and pinned vertices */
    size_t source_pieces;         /* of the welded surface the cage was made from */
    bool wrapped;                 /* made as one wrap around those pieces (plush_cage_wrap) */
    float pin_y[2], cage_y[2];    /* heights of the pinned cage vertices and of the whole cage (min, max) */
    plush_cage_result made;       /* a part's cage (plush_attach_part_make): what the simplifier made */
    bool part;                    /* made for named materials, as plush run --cage makes a cage */
    plush_pmx_model base;         /* the model without its soft bodies and their materials (shares arrays) */
    plush_pmx_model *model;       /* base + the cage (plush_attach) */
    plush_arena arena;
} plush_compare_variant;


/* The model's first TriMesh soft body replaced by a generated cage (as plush compare --proxy-triangles):
 * the visible surface welded, simplified toward `target` triangles and pushed out by 2% of `size` (the
 * model's size, plush_compare_surface.diagonal) — one wrap around it when it is in several pieces — then
 * attached with the soft body's parameters, auto mask, and its pins and anchors carried over by nearest
 * node. out->target is set from `target`; out must be zeroed. Fails (PLUSH_E_UNSUPPORTED) when the model
 * has no TriMesh soft body, its soft-body materials are not after every visible one, or a material morph
 * changes them; otherwise with the cage's or attach's error. plush_attach's warnings go into diag.
 * The model must outlive out (out->base and out->model share its arrays). */
plush_status plush__compare_variant_make(const plush_pmx_model *model, size_t target, float size,
                                        plush_compare_variant *out, plush_diag *diag);
/* The cage of a part: the model without its soft bodies (as above), then plush_attach_part_make for these
 * materials toward `target` with the model's first TriMesh soft body's parameters (the "plush" preset
 * without one, or with own_preset: the model's cage is plush's own, made by --cage, and each cage gets the
 * preset as plush run --cage gives it, its bending links' reach and pieces' shape memory from its own size)
 * and pin_band. out->made says what the simplifier reached. Fails as plush_attach_part_make,
 * or as above on soft-body materials that are not last. */
plush_status plush__compare_part_variant_make(const plush_pmx_model *model, const char *const *materials,
                                             size_t count, size_t target, float pin_band, bool own_preset,
                                             plush_compare_variant *out, plush_diag *diag);
/* Direct at a quarter of the detail (plush compare's convergence run "direct/4"): the model with its
 * measured surface (plush__compare_part_mask of materials), welded, simplified (no offset, no wrap) toward a quarter of its triangles, on the same
 * vertices (meshoptimizer keeps vertex positions): out->model holds the simplified faces in the first measured
 * material and none in the other measured ones; its soft bodies are the model's. out->target is the quarter,
 * out->triangles what the simplifier made, out->source_pieces the full surface's triangle count. Fails as
 * plush__compare_variant_make (PLUSH_E_LIBRARY without meshoptimizer). */
plush_status plush__compare_quarter_make(const plush_pmx_model *model, const char *const *materials, size_t count,
                                        plush_compare_variant *out, plush_diag *diag);
/* Direct at four times the detail (plush compare's reference when its convergence run is the part's own
 * surface): the model with each measured face (plush__compare_part_mask of materials) split into four at its
 * edges' midpoints, the midpoints appended after the model's vertices (their bones both ends' at half weight,
 * the heaviest four) so that every vertex keeps its index. out->triangles is the split faces' count,
 * out->source_pieces the measured faces'. */
plush_status plush__compare_finer_make(const plush_pmx_model *model, const char *const *materials, size_t count,
                                      plush_compare_variant *out, plush_diag *diag);
/* Frees the cage model and the arena make built. NULL is a no-op. */
void plush__compare_variant_free(plush_compare_variant *variant);

enum { RUN_BONES, RUN_DIRECT, RUN_PROXY }; /* the first proxy run; generated cages follow it */

/* The largest part (vertices at four times its detail, some four times its own) whose direct reference is
 * plush's cloth solver by default: its cost grows with the nodes (0.07 ms a node a frame standing still,
 * 0.11 moving, at 16 substeps on the skirt of docs/compare.md, two shared cores), so 12,000 take some 0.9-1.3
 * s a frame, 300 frames in under 7 minutes; larger parts (the demo bear's 60,000 nodes) get Bullet's
 * calibrated reference. */
#define PLUSH__COMPARE_CLOTH_NODES 12000

/* The error pictures' red: this share of the model's size, the report's "clearly different motion". */
#define PLUSH__COMPARE_RED_SHARE 0.03f

typedef struct pair_stats {
    double sum[5], max[5];        /* rms, p95, max, normal mean, normal max */
    uint32_t frames;
    uint32_t worst_frame;         /* where the RMS was largest */
} pair_stats;

typedef struct run_stats {
    double physics, skinning;     /* sums, seconds */
    double vol_min, vol_max;
    uint32_t frames, vol_frames;
} run_stats;

typedef struct plush__compare_quality plush__compare_quality;

struct plush_compare_study {
    plush_compare_study_desc desc;
    const plush_pmx_model *model;
    plush_compare_variant *variants;
    size_t variant_count;
    plush_compare_variant quarter; /* direct at a quarter of the triangles: the convergence run, last */
    bool has_quarter;
    plush_compare_variant finer;  /* direct at four times the detail: the reference with the cloth solver */
    bool has_finer;               /* then direct/4 is the part as the model has it */
    size_t quarter_faces, direct_faces; /* the part's triangles in direct/4 and in direct */
    size_t cloth_nodes;           /* the part's vertices times four: what the cloth reference would simulate */
    bool reference_chosen;        /* the solver of direct went by cloth_nodes (neither asked for) */
    size_t quarter_run, quarter_pair; /* its run and its pair against direct (0 when none) */
    bool own_proxy;               /* the model has a soft body: run "proxy" on it */
    bool author_physics;          /* the model's own physics moves bones of the part (compare_study.c) */
    plush_compare_run_desc *runs;
    char (*run_names)[48];
    size_t run_count;
    plush_compare_pair *pairs;
    size_t pair_count;
    plush_compare *cmp;
    uint32_t frames;
    pair_stats *pstats;
    run_stats *rstats;
    double *series_pair;          /* frames x pairs: RMS per frame (NaN where missing) */
    double *series_normal;        /* frames x pairs: mean normal angle per frame (NaN where missing) */
    double *series_run;           /* frames x runs: physics + skinning ms per frame */
    plush_buf csv;
    char *failed_file;            /* the file a failure of finish names (diag->file points here) */
    /* pictures: the frames rendered as they pass, and a copy of the worst frame (proxy against the
     * reference) kept until the end, since which frame is worst is known only then */
    float size;
    uint32_t pictured[2];
    size_t pictured_count;
    double worst_rms, worst_p95;
    uint32_t worst_frame;
    float (*keep_pos)[3][3], (*keep_nrm)[3][3]; /* per vertex: bones, proxy, direct */
    float *keep_dist;
    float (*colors)[3];
    plush_image panel, sheet;
    bool render_failed;
    plush__compare_quality *quality; /* compare_quality.c */
};

/* Appends one formatted line of at most 1023 bytes (the report's and the CSV's lines are short). */
static inline void buf_printf(plush_buf *b, const char *fmt, ...) PLUSH__PRINTF(2, 3);
static inline void buf_printf(plush_buf *b, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    plush_buf_append(b, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* compare_files.c: dir/name in malloc'ed memory; NULL when out of memory. */
char *plush__compare_path(const char *dir, const char *name);
/* Sets diag->file to dir/name, kept in the study until the next call or destroy. */
void plush__compare_name_file(plush_compare_study *s, const char *name, plush_diag *diag);

static inline double ms_per_frame(const run_stats *r)
{
    return r->frames ? 1e3 * (r->physics + r->skinning) / r->frames : (double)NAN;
}

static inline const char *run_name(const plush_compare_study *s, size_t r)
{
    plush_compare_run_info info;
    plush_compare_get_run_info(s->cmp, r, &info);
    return info.name;
}

static inline bool run_available(const plush_compare_study *s, size_t r)
{
    plush_compare_run_info info;
    plush_compare_get_run_info(s->cmp, r, &info);
    return info.available;
}

static inline bool pair_shown(const plush_compare_study *s, size_t p)
{
    return run_available(s, s->pairs[p].a) && run_available(s, s->pairs[p].b);
}

plush_status plush__compare_write_report(const plush_compare_study *s, float size, const char *path,
                                         plush_diag *diag);
plush_status plush__compare_plots_over_time(plush_compare_study *s, plush_diag *diag);
plush_status plush__compare_plots_by_size(plush_compare_study *s, plush_diag *diag);
plush_status plush__compare_pictures_setup(plush_compare_study *s, plush_diag *diag);
void plush__compare_pictures_frame(plush_compare_study *s, uint32_t f, plush_diag *diag);
void plush__compare_pictures_finish(plush_compare_study *s, plush_diag *diag);

/* compare_quality.c: each run's surface (and cage) quality per frame -- metrics.csv's added columns,
 * quality.png, report.md's worst frames. setup after the runs exist; frame after each step, before the
 * rows; a row's columns for runs a and b after the row's own. */
plush_status plush__compare_quality_setup(plush_compare_study *s, plush_diag *diag);
void plush__compare_quality_frame(plush_compare_study *s, uint32_t frame);
void plush__compare_quality_csv_header(plush_buf *csv);
void plush__compare_quality_csv_row(const plush__compare_quality *q, plush_buf *csv, size_t a, size_t b);
plush_status plush__compare_quality_plot(plush_compare_study *s, plush_diag *diag);
void plush__compare_quality_report(const plush_compare_study *s, plush_buf *md);
/* Whether run's surface met the plush surface bar at frame f (plush_quality_meets_bar): 1, 0, or -1 when
 * it was not measured there. */
int plush__compare_quality_meets_bar(const plush__compare_quality *q, size_t run, uint32_t f);
void plush__compare_quality_free(plush__compare_quality *q);


#endif
