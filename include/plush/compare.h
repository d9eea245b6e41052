/* Comparing runs of the pipeline (plush compare): the proxy against simulating the detailed mesh directly.
 *
 *   plush_compare_run_desc runs[] = {
 *       {.name = "bones", .kind = PLUSH_COMPARE_BONES},
 *       {.name = "proxy", .kind = PLUSH_COMPARE_PROXY},
 *       {.name = "direct", .kind = PLUSH_COMPARE_DIRECT, .optional = true},
 *   };
 *   plush_compare_pair pairs[] = {{1, 2}, {0, 2}};               // proxy vs direct, bones vs direct
 *   plush_compare *cmp = NULL;
 *   plush_compare_create(&(plush_compare_desc){.model = model, .motion = vmd, .runs = runs, .run_count = 3,
 *                                              .pairs = pairs, .pair_count = 2}, &cmp, &diag);
 *   for (uint32_t f = 0; f < frames; f++) {
 *       plush_compare_step(cmp, f, &diag);                      // every live run steps frame f
 *       const plush_compare_pair_frame *e = plush_compare_pair_frames(cmp);   // pair_count entries
 *       const plush_compare_run_frame *r = plush_compare_run_frames(cmp);     // run_count entries
 *   }
 *   plush_compare_destroy(cmp);
 *
 * The runs are stepped in lockstep, one frame at a time, and measured as they go: nothing keeps a run's
 * frames, so memory does not grow with the frame count. What is measured is the model's visible surface
 * (plush_compare_surface): the vertices that the faces of materials no soft body owns use (only those
 * desc.bind.bound names, when it names some: a part, which is then also all the runs bind), compared by
 * their index, so every run's model must hold the measured model's vertices first, in the same order
 * (plush_attach appends a cage after them, as it must).
 *
 * Metrics of a pair (a, b) at a frame, over the measured vertices:
 *   - vertex distance |a_v - b_v|: root mean square, 95th percentile (nearest rank: the value at rank
 *     ceil(0.95 n) in increasing order, 1-based) and maximum, in model units;
 *   - angle between the unit normals, in degrees: mean and maximum (a vertex whose normal is zero or not
 *     finite in either run is left out of the normal statistics);
 * and of a run: its time this frame in physics (pins, kinematic targets, the physics step, write-back) and
 * in skinning (bone skinning, proxy frames and proxy skinning), thread CPU seconds from plush_scene_timing;
 * and the volume ratio to rest: the signed volume (1/6 sum of p0 . (p1 x p2) over the faces) of the closed
 * pieces of the measured surface, divided by the same at rest.
 *
 * Closed pieces: the measured faces with their vertices welded by exact position (a PMX mesh splits
 * vertices at UV seams), split into pieces joined by shared edges; a piece is closed when every edge of it
 * is used by exactly two of its faces, once in each direction. A model that is not closed is measured on
 * its closed pieces alone (a bear's ellipsoids, a character's closed body; open hair, skirts and cloth
 * enclose nothing, and a volume "ratio" of an open sheet would be meaningless); with no closed piece, or
 * a rest volume of zero, the ratio is NaN ("not measured").
 */
#ifndef PLUSH_COMPARE_H
#define PLUSH_COMPARE_H

#include "plush/scene.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the measured surface and the metrics, on plain arrays ----------------------------------------- */

typedef struct plush_compare_surface {
    size_t vertex_count;          /* measured vertices: the ones the faces use */
    uint32_t *vertices;           /* increasing indices into the positions the metrics are given */
    size_t triangle_count;
    uint32_t (*triangles)[3];     /* the faces, by the model's vertex numbers (those vertices lists) */
    bool *triangle_closed;        /* per face: its piece is closed (the volume counts it) */
    size_t pieces, closed_pieces; /* edge-connected pieces after welding by position; closed ones */
    float diagonal;               /* bounding-box diagonal of the measured vertices at rest: the model's size */
    double rest_volume;           /* signed volume of the closed pieces at rest; NaN when there is none */
    plush_arena arena;            /* owns the arrays above */
} plush_compare_surface;

/* The visible surface of a model: the faces of every material no soft body owns. */
plush_status plush_compare_surface_from_model(const plush_pmx_model *model, plush_compare_surface **out,
                                              plush_diag *diag);
/* Frees a surface and its arrays; NULL is a no-op. */
void plush_compare_surface_free(plush_compare_surface *surface);


typedef struct plush_compare_error {
    double rms, p95, max;         /* vertex distance, model units */
    double normal_mean, normal_max; /* degrees */
} plush_compare_error;


/* ---- runs in lockstep ------------------------------------------------------------------------------ */

typedef enum plush_compare_kind {
    PLUSH_COMPARE_BONES = 0,      /* plain MMD: bones and rigid bodies, no soft bodies */
    PLUSH_COMPARE_PROXY = 1,      /* the soft-body proxy, the detailed mesh skinned to it */
    PLUSH_COMPARE_DIRECT = 2      /* the detailed mesh itself simulated as the soft body (the ground truth) */
} plush_compare_kind;

typedef struct plush_compare_run_desc {
    const char *name;             /* for messages and reports; copied */
    plush_compare_kind kind;
    const plush_pmx_model *model; /* NULL: the compare's model; else one holding its vertices first */
    bool optional;                /* a scene that cannot be made leaves the run unavailable (with the reason)
                                   * instead of failing plush_compare_create */
} plush_compare_run_desc;

typedef struct plush_compare_pair {
    size_t a, b;                  /* run indices; b is the reference (direct) */
    const plush_pmx_model *surface; /* NULL: measured on the compare's surface; else on this model's visible
                                     * surface (vertex numbers the compare model's; fewer vertices) */
} plush_compare_pair;

/* Zero fields mean the defaults. */
typedef struct plush_compare_desc {
    const plush_pmx_model *model;          /* the measured surface is its visible surface (bind.bound's
                                              materials when it names some); must outlive */
    const plush_vmd_motion *motion;        /* NULL: no motion */
    float fps;                             /* 0: 30 */
    plush_world_desc world;
    plush_scene_bind_options bind;
    plush_proxy_skin_options skin;
    const plush_im2_map *overrides;        /* proxy runs on the compare's own model only */
    const char *overrides_file;
    const plush_compare_run_desc *runs;
    size_t run_count;                      /* at least 1 */
    const plush_compare_pair *pairs;
    size_t pair_count;
    bool direct_cloth;                     /* direct runs: plush's cloth solver (plush_scene_desc.direct_cloth) */
} plush_compare_desc;

typedef struct plush_compare_run_frame {
    bool valid;                   /* the run has this frame */
    double physics, skinning;     /* seconds spent on this frame */
    double volume_ratio;          /* NaN when not measured */
} plush_compare_run_frame;

typedef struct plush_compare_pair_frame {
    bool valid;                   /* both runs have this frame */
    plush_compare_error error;
} plush_compare_pair_frame;

typedef struct plush_compare_run_info {
    const char *name;
    plush_compare_kind kind;
    bool available;               /* its scene was made */
    bool stopped;                 /* a step failed: the run has no frame from stopped_at on */
    uint32_t stopped_at;
    uint32_t frames;              /* frames it computed */
    size_t failures;              /* soft bodies that blew up (frozen, the run goes on) */
    int64_t first_failure;        /* their first frame, -1 when none */
    uint64_t cloth_solves;        /* stepped as cloth (plush's cloth reference): its linear solves, and those */
    uint64_t cloth_unfinished;    /* the iteration cap stopped short of their tolerance */
    char reason[PLUSH_DIAG_MESSAGE]; /* why it is unavailable or stopped */
} plush_compare_run_info;

typedef struct plush_compare plush_compare;

/* Makes every run's scene (warnings into diag). Fails on a run that is not optional and cannot be made, on
 * a run model with fewer vertices than the measured model, a pair naming a run out of range. */
plush_status plush_compare_create(const plush_compare_desc *desc, plush_compare **out, plush_diag *diag);
/* Steps every live run to frame f and measures. A run whose step fails stops there (its info says why);
 * this returns an error only for bad arguments. */
plush_status plush_compare_step(plush_compare *cmp, uint32_t frame, plush_diag *diag);
const plush_compare_run_frame *plush_compare_run_frames(const plush_compare *cmp);
const plush_compare_pair_frame *plush_compare_pair_frames(const plush_compare *cmp);
void plush_compare_get_run_info(const plush_compare *cmp, size_t run, plush_compare_run_info *out);
const plush_compare_surface *plush_compare_get_surface(const plush_compare *cmp);
/* A live run's current positions and normals (its model's vertex count); NULL for an unavailable run. */
const float (*plush_compare_positions(const plush_compare *cmp, size_t run))[3];
const float (*plush_compare_normals(const plush_compare *cmp, size_t run))[3];
/* A live run's scene (its binding, proxy nodes); NULL for an unavailable run. */
const plush_scene *plush_compare_scene(const plush_compare *cmp, size_t run);
/* This frame's per-vertex distances of a pair (its surface's vertex_count, in that surface's vertices order). */
const float *plush_compare_distances(const plush_compare *cmp, size_t pair);
void plush_compare_destroy(plush_compare *cmp);

/* ---- a cage made for a comparison --------------------------------------------------------------------- */

/* True when the model has a TriMesh soft body on a material: the proxy it can run (and copy). */
bool plush_compare_has_proxy(const plush_pmx_model *model);

/* ---- a whole comparison with its report (src/compare/compare_study.c, compare_report.c,
 * compare_pictures.c): what plush compare does between reading its inputs and printing its summary.
 *
 *   plush_compare_study *st = NULL;
 *   plush_compare_study_create(&(plush_compare_study_desc){.model = model, .model_file = "m.pmx",
 *                                                          .out_dir = "report"}, &st, &diag);
 *   for (uint32_t f = 0; f < plush_compare_study_frame_count(st); f++)
 *       plush_compare_study_step(st, f, &diag);
 *   plush_compare_study_finish(st, &diag);      // metrics.csv, error.png, time.png, ..., report.md
 *   plush_compare_study_destroy(st);
 *
 * Runs: bones, direct, the model's own proxy (when it has one), one per generated cage. Pairs: each proxy
 * against direct, bones against direct, each proxy against bones. Pictures of the middle and the last
 * frame are written to out_dir as those frames pass, the worst frame's at finish. Every file is the same
 * bytes for the same input, but for the times (thread CPU seconds) and what depends on them. */

/* Zero fields mean the defaults. */
typedef struct plush_compare_study_desc {
    const plush_pmx_model *model;          /* required; must outlive the study */
    const char *model_file;                /* the report's title (its last path part) and input line */
    const plush_vmd_motion *motion;        /* NULL: no motion */
    const char *motion_file;               /* for the report's input line */
    const plush_im2_map *overrides;        /* the model's own proxy run */
    const char *overrides_file;
    float fps;                             /* 0: 30 */
    float physics_hz;                      /* 0: 60 */
    uint32_t frames;                       /* 0: the motion's length at fps, or 300 without a motion; at
                                              most PLUSH_SCENE_MAX_FRAME either way (PLUSH_E_RANGE) */
    const size_t *cage_triangles;          /* generated cages of about these many triangles, in this order
                                              (the visible surface simplified and attached as plush compare
                                              --proxy-triangles makes them) */
    size_t cage_count;
    const char *out_dir;                   /* required, existing: where every file goes */
    bool seed;                             /* proxy runs bind and skin as the original method (plush run --original) */
    bool no_quarter;                       /* leave out the convergence run "direct/4"
                                            * (run last, paired with direct) */
    bool direct_cloth;                     /* direct (at four times the part's detail) and direct/4 (the
                                            * part) by plush's cloth solver (plush_scene_desc.direct_cloth)
                                            * whatever the part's size */
    bool direct_bullet;                    /* direct and direct/4 (a quarter simplified) by Bullet, calibrated,
                                            * whatever the part's size. Neither: the cloth solver when the part
                                            * at four times its detail has at most 12,000 vertices, else Bullet */
    const char *const *materials;          /* the part compared (plush run --materials): only these materials'
                                            * vertices are bound, simulated by direct and measured, and the
                                            * errors are a share of their size; NULL: every material no soft
                                            * body owns */
    size_t material_count;
    const char *const *cage_materials;     /* with cage_triangles: the cages are made for these materials as
                                            * plush run --cage makes one (automatic pins, pin_band); NULL:
                                            * materials, or without them the visible surface around the
                                            * model's soft body, its pins carried over */
    size_t cage_material_count;
    float pin_band;                        /* as plush_attach_options.pin_band (0: its default) */
    const float (*left_out)[3];            /* rest positions left unbound (plush_scene_bound_options) */
    size_t left_out_count;
} plush_compare_study_desc;

typedef struct plush_compare_study plush_compare_study;

/* Makes the cages and the runs (warnings into diag). Fails on what making a cage and
 * plush_compare_create fail on, and (PLUSH_E_UNSUPPORTED, section "soft body") on a model without a
 * TriMesh soft body when no cage is asked for. */
plush_status plush_compare_study_create(const plush_compare_study_desc *desc, plush_compare_study **out,
                                        plush_diag *diag);
/* The number of frames the study runs. */
uint32_t plush_compare_study_frame_count(const plush_compare_study *study);
/* Steps frame f (frames go 0, 1, ... in order), records its statistics and CSV rows, draws its picture
 * when it is one of the pictured frames. A picture that cannot be drawn or written is a warning (said
 * once: no more pictures after it). */
plush_status plush_compare_study_step(plush_compare_study *study, uint32_t frame, plush_diag *diag);
/* Draws the worst frame when not yet drawn, then writes metrics.csv, the plots and report.md into out_dir;
 * a failure names its file in diag->file (valid until the study is destroyed), success leaves diag->file
 * as it was. */
plush_status plush_compare_study_finish(plush_compare_study *study, plush_diag *diag);
/* The runs in lockstep (their names and infos, plush_compare_get_run_info) and how many there are. */
const plush_compare *plush_compare_study_runs(const plush_compare_study *study);
size_t plush_compare_study_run_count(const plush_compare_study *study);
/* Physics + skinning of a run in ms per frame over the frames it computed (NaN with none). */
double plush_compare_study_ms_per_frame(const plush_compare_study *study, size_t run);
void plush_compare_study_destroy(plush_compare_study *study);

#ifdef __cplusplus
}
#endif
#endif
