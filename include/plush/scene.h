/* Scene: one PMX model instance with its proxy. The binding of the model's detailed vertices to the proxy
 * its TriMesh soft bodies make and its Influence Map File 2 view; the bake; the frame pipeline; direct
 * mode. The exports fed each frame are in scene_sink.h.
 *
 *   plush_scene_binding *b = NULL;
 *   plush_scene_bind_options opt = { .proxy = { .seed = true } };
 *   if (plush_scene_bind(model, &opt, &b, &diag) == PLUSH_OK) {
 *       plush_scene_binding_apply_im2(b, overrides, &im2_diag);      // optional, from a .im2 file
 *       for (size_t i = 0; i < b->vertex_count; i++)
 *           use(b->vertices[i], b->binding->triangles[i], b->binding->weights[i]);
 *   }
 *   plush_scene_binding_free(b);
 *
 * Proxy triangle t is pseudo-bone bone_count + t: in an Influence Map File a bone number below the model's
 * bone count is a model bone, the numbers after it are the proxy's triangles (plush_scene_proxy order).
 * The pseudo-bones hang from one root of their own that is not numbered, so their parent is -1.
 *
 * Parts are PMX materials by name, matched among the materials that have bound vertices, in material
 * order: the k-th part with a name is the k-th such material with that name (so a model with two
 * materials of the same name exports and imports without confusion). A part's vertex v is the v-th
 * distinct vertex of the material's faces in order of first use; -1 is every vertex of the part.
 */
#ifndef PLUSH_SCENE_H
#define PLUSH_SCENE_H

#include "plush/anim.h"
#include "plush/cage.h"
#include "plush/im2.h"
#include "plush/physics.h"
#include "plush/proxy.h"
#include "plush/scene_proxy.h"
#include "plush/vmd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Zero fields mean the defaults. */
typedef struct plush_scene_bind_options {
    plush_proxy_bind_options proxy;   /* seed mode, drop ratio, falloff, maximum distance, search, threads */
    plush_scene_bound_options bound;    /* only these materials' vertices (default: every non-soft material) */
    plush_proxy_smooth_options smooth;  /* default mode: the weights diffused along the model's surface */
    bool rough;                         /* default mode without the smoothing: the nearest-four weights as they are */
} plush_scene_bind_options;

/* A model's detailed vertices bound to its soft-body proxy. Row i of binding is PMX vertex vertices[i].
 * The model must outlive the binding. */
typedef struct plush_scene_binding {
    const plush_pmx_model *model;
    plush_scene_proxy proxy;
    size_t vertex_count;              /* bound vertices */
    uint32_t *vertices;               /* increasing PMX vertex indices */
    plush_proxy_binding *binding;     /* vertex_count rows */
    struct plush_scene_computed *computed; /* private: the rows as plush_proxy_bind made them */
    plush_arena arena;                /* owns everything above but the model and binding */
} plush_scene_binding;

/* Builds the proxy (skipped soft bodies become warnings in diag), picks the bound vertices and binds their
 * rest positions. A model without a usable TriMesh soft body fails with PLUSH_E_NO_PROXY. */
plush_status plush_scene_bind(const plush_pmx_model *model, const plush_scene_bind_options *options,
                              plush_scene_binding **out, plush_diag *diag);
/* Frees a binding made by plush_scene_bind; NULL is a no-op. */
void plush_scene_binding_free(plush_scene_binding *binding);

/* The row of a PMX vertex, or -1 when it is not bound. */
int64_t plush_scene_binding_row(const plush_scene_binding *binding, uint32_t vertex);

/* Export: one part per material with bound vertices, one line per bound vertex of it:
 * - on the proxy (proxy_share > 0): child = the pseudo-bone of its strongest triangle, parent -1,
 *   CALC_NOSKIN0 when that triangle is its only influence, CALC_ONESKIN0 otherwise;
 * - left to bone skinning (proxy_share 0): child = its strongest PMX bone, parent = that bone's parent,
 *   CALC_ONESKIN0 (a vertex without any bone is left out, with a warning).
 * Names are the materials' names; writing them needs Shift-JIS (plush_im2_write says which cannot). */
plush_status plush_scene_binding_to_im2(const plush_scene_binding *binding, plush_im2_map **out, plush_diag *diag);

/* Import: applies each line in file order, a later line overriding an earlier one for the same vertex.
 * - child a pseudo-bone, CALC_NOSKIN0: the vertex follows that triangle alone (weight 1), on the proxy;
 * - child a pseudo-bone, CALC_ONESKIN0: the vertex keeps (or gets back) the blend plush_proxy_bind computed;
 * - child a model bone (either method): the vertex leaves the proxy (proxy_share 0) for its own PMX bone
 *   weights; the bone number is checked, not used to rewrite the weights.
 * The parent is checked for range and otherwise not used. Errors name the line (diag section "line", the
 * line number, its byte offset; set diag->file to the im2 file): a part that names no material with bound
 * vertices, a vertex out of the part's range or not bound, a child of -1, a bone number out of range.
 * On failure the binding is left as it was. */
plush_status plush_scene_binding_apply_im2(plush_scene_binding *binding, const plush_im2_map *map,
                                           plush_diag *diag);

/* ---- bake: the proxy animation as plain bones + a VMD any MMD player can play ----------------------
 *
 *   plush_scene_bake *bake = NULL;
 *   plush_scene_bake_create(binding, motion, (plush_proxy_patch_shape){0}, &bake, &diag);  // motion may be NULL; {0}: own frames
 *   each frame f: plush_scene_bake_add_frame(bake, f, simulated_proxy_nodes);
 *   plush_scene_bake_write(bake, "out/bear_plush.pmx", "out/bear_plush.vmd", &diag);
 *   plush_scene_bake_destroy(bake);
 *
 * The model: PMX 2.0 (MMD reads no 2.1) without soft bodies and without the materials soft bodies own
 * (their faces, and vertices no other material uses, are removed; morph offsets on removed vertices or
 * materials go with them), 2.1-only elements dropped with a warning each; plus one root bone
 * "plush_root" at the origin and one pseudo-bone per proxy triangle ("pb0001", ... short ASCII names that
 * fit VMD's 15 bytes) at the triangle's rest centroid, parented to the root, listed in a display frame
 * "plush". Bound vertices are re-weighted to the pseudo-bones of their triangles: BDEF1/2/4 by the number
 * of influences; a vertex in the hand-over band (0 < proxy share < 1) keeps the four largest of its
 * pseudo-bone and PMX-bone weights (scaled by share and 1 - share), renormalised.
 * The motion: the input motion's keys, plus a key per frame for every pseudo-bone: translation
 * c(t) - c(0) and rotation R(t) R(0)^-1 of the triangle's rigid frame F(t) F(0)^-1, linear interpolation.
 * Stretch-aware frames cannot be expressed as bone keys: the bake always uses rigid frames. A triangle
 * degenerate at some frame keeps its last key (identity until it has one). */
typedef struct plush_scene_bake plush_scene_bake;

/* The binding and motion must outlive the bake. */
plush_status plush_scene_bake_create(const plush_scene_binding *binding, const plush_vmd_motion *motion, plush_proxy_patch_shape patch,
                                     plush_scene_bake **out, plush_diag *diag);
/* Records one frame (frame numbers increasing) from the proxy's node positions (binding->proxy order). */
plush_status plush_scene_bake_add_frame(plush_scene_bake *bake, uint32_t frame, const float (*nodes)[3],
                                        plush_diag *diag);
/* How closely the baked keys follow the recorded motion: a pseudo-bone key is written only where
 * interpolating the keys around it would move some vertex the bone carries by more than tolerance (model
 * units; the first and last frame are always keyed). Negative (the default): a key every frame. */
void plush_scene_bake_set_tolerance(plush_scene_bake *bake, double tolerance);
/* Replaces the pseudo-bones by `bones` bones fitted to the frames recorded so far (skinning decomposition:
 * per-frame rigid bones, at most four non-negative weights per vertex summing to one), 0: the fewest of
 * 8, 16, 32, ... that follow the exact bake within half the tolerance (RMS over vertices) and twice it
 * (worst vertex) on a sample of frames and vertices; the keys then get the other half of the tolerance.
 * Without a positive tolerance and with bones 0, or when no fewer bones than triangles fit, the bake stays
 * exact. Call it after the last frame; the model and motion follow it. */
plush_status plush_scene_bake_fit(plush_scene_bake *bake, size_t bones, plush_diag *diag);
/* The baked model alone (owned by the caller, plush_pmx_free); it points into the source model's arrays
 * where they are unchanged, so the source model must outlive it. */
plush_status plush_scene_bake_model(const plush_scene_bake *bake, plush_pmx_model **out, plush_diag *diag);
/* The baked motion alone (owned by the caller, plush_vmd_free). */
plush_status plush_scene_bake_motion(const plush_scene_bake *bake, plush_vmd_motion **out, plush_diag *diag);
/* Both files, each written atomically; on failure neither is left half-written. The texture paths stay as
 * the source model stores them: plush_scene_bake_write_with names them from the bake's folder. */
plush_status plush_scene_bake_write(const plush_scene_bake *bake, const char *pmx_path, const char *vmd_path,
                                    plush_diag *diag);

/* Where the baked PMX's textures point. Zero fields: the paths as the source model stores them. */
typedef struct plush_scene_bake_write_options {
    /* The source model's path: its textures are named relative to its folder ('\' and '/' both separate,
     * ".." is taken lexically, as MMD on Windows does). Set, each path is rewritten to name the same file
     * from the baked PMX's folder, with the separator the original used ("../models/bear/tex\fur.png");
     * a texture that is not there is a warning (section "texture", its index) and is rewritten all the
     * same; an absolute path stays, a Windows drive path stays with a warning. */
    const char *model_file;
    /* With model_file: copy each texture beside the PMX being written, under the same sub-path
     * (tex/fur.png for "tex\fur.png"), and name the copy. Only what the texture rules let through is copied
     * (a file inside the model's folder, symbolic links resolved; a regular file; a BMP, TGA, PNG or JPEG
     * picture within the size budget): anything else is a warning and is named where it is. A copy never
     * takes a name plush's outputs use (".plush*", frames, preview.mp4, quality.csv, <stem>_plush.*: a
     * warning) and never replaces an entry of bake_dir the last commit there did not write (fails with
     * PLUSH_E_EXISTS). Copies are written as they are made: write the bake into a staging folder
     * (plush_file_stage) to have them appear with it or not at all. */
    bool copy_textures;
    /* The folder the baked PMX will end up in when it is written elsewhere first (a staging folder that
     * is moved in place as a whole): texture paths and copies are made for this folder. NULL: the PMX's
     * own folder. */
    const char *bake_dir;
    /* When set, filled with the written bake's figures. */
    struct plush_scene_bake_stats *stats;
} plush_scene_bake_write_options;

/* What a written bake holds. */
typedef struct plush_scene_bake_stats {
    size_t bones;             /* pseudo-bones or fitted bones */
    size_t triangles;         /* the cage's triangles (one pseudo-bone each without a fit) */
    size_t carried;           /* a fit: of its bones, the exact bake's pseudo-bones carrying the rows the fitted
                                 ones miss (0: none) */
    double fit_rms, fit_worst;   /* a fit: its RMS (worst frame) and worst vertex distance to the exact
                                    bake at every other recorded frame, model units; 0 without a fit */
    double fit_seconds;       /* a fit: how long it took */
    double fit_tried_seconds; /* no fit kept: how long trying counts took before the exact bake stayed (0: none
                                 tried) */
    size_t keys_recorded;     /* pseudo-bone keys recorded: one per bone and frame */
    size_t keys;              /* bone keys in the VMD, the input motion's included */
    size_t pmx_bytes, vmd_bytes;
    size_t physics_bones;     /* --bake-physics: the bones rigid bodies drive, keyed (0: not baked) */
    size_t physics_bodies;    /* and their rigid bodies, set to follow them in the baked PMX */
    size_t physics_renamed;   /* driven bones renamed so that VMD's 15-byte names tell them apart */
    double error;             /* every vertex of the baked motion within this of the recorded frames (model
                                 units: the keys' tolerance plus a fit's share); < 0: a key every frame */
    bool budget_limited;      /* the keys' tolerance was raised until they fit the budget */
    size_t key_budget;        /* the budget's keys (0: none) */
    size_t over_budget;       /* keys beyond the budget (its keys or its bytes), 0 within it */
    double budget_error;      /* over the budget: the error at which the keys would fit it (0: none does) */
    size_t rms_keys;          /* budget_limited: keys added where the keys' RMS over the soft part would pass the
                                 tolerance asked */
    double rms_bound;         /* and the most the keys' RMS over the soft part's vertices can be at any frame
                                 with them (0: not worked out) */
} plush_scene_bake_stats;

/* plush_scene_bake_write with the textures named per options (NULL: as plush_scene_bake_write). */
plush_status plush_scene_bake_write_with(const plush_scene_bake *bake, const char *pmx_path, const char *vmd_path,
                                         const plush_scene_bake_write_options *options, plush_diag *diag);
/* Frees a bake and what it recorded; NULL is a no-op. */
void plush_scene_bake_destroy(plush_scene_bake *bake);

/* ---- the pipeline: one model instance stepped frame by frame (docs/run.md) ----------------
 *
 *   plush_scene *sc = NULL;
 *   plush_scene_create(&(plush_scene_desc){ .model = model, .motion = vmd }, &sc, &diag);
 *   for (uint32_t f = 0; f < frames; f++) {
 *       plush_scene_step(sc, f, &diag);
 *       use(plush_scene_positions(sc), plush_scene_normals(sc));   // model->vertex_count each
 *   }
 *   plush_scene_destroy(sc);
 *
 * Per frame: motion sample, morphs, bones before physics; pinned soft-body vertices skinned and handed
 * to the world; kinematic bodies set; physics advanced to the frame; simulated bodies write their bones;
 * bones after physics; every vertex skinned (BDEF/SDEF/QDEF); soft-body material vertices from their
 * nodes; in proxy mode the proxy frames from the TriMesh nodes and the bound vertices skinned to them.
 * plush_scene_run (scene_sink.h) is the same loop with the exports ("sinks") fed each frame; plush run,
 * plush demo and plush pose all go through these calls, and no caller orders a pipeline stage itself. */
typedef enum plush_scene_mode {
    PLUSH_SCENE_PROXY = 0,    /* bones, rigid bodies, soft bodies, bound vertices on the proxy */
    PLUSH_SCENE_BONES = 1,    /* plain MMD: bones and rigid bodies, no soft bodies (the baseline) */
    PLUSH_SCENE_DIRECT = 2,   /* the bound detailed vertices are the soft body themselves (the reference;
                                 see plush_scene_direct_build) */
    PLUSH_SCENE_PLAIN = 3     /* the model as a PMX 2.1 player shows it: bones, rigid bodies and its soft
                                 bodies simulated as they are, nothing bound to a proxy (plush pose) */
} plush_scene_mode;

/* Frame numbers a scene accepts: 0 up to this (a bound that keeps float frames exact to a hundredth). */
#define PLUSH_SCENE_MAX_FRAME 10000000.0
/* Output frames per second when none is given: VMD keys are at 30 per second. */
#define PLUSH_SCENE_DEFAULT_FPS 30
/* The patch a triangle's frame is fitted to by default (plush_proxy_patch_shape): the cage nodes within 4
 * edge steps and those within 0.4 of their piece's bounding-box diagonal, along the cage's edges. */
#define PLUSH_SCENE_PATCH_RINGS 4
#define PLUSH_SCENE_PATCH_REACH 0.4f

/* Zero fields mean the defaults; plush_scene_get_desc gives them back resolved. */
typedef struct plush_scene_desc {
    const plush_pmx_model *model;          /* must outlive the scene */
    const plush_vmd_motion *motion;        /* NULL: no motion (a pose, or rest) */
    const plush_vpd_pose *pose;            /* used when motion is NULL; NULL: rest */
    plush_scene_mode mode;
    float fps;                             /* output frames per second; 0: PLUSH_SCENE_DEFAULT_FPS */
    bool no_physics;                       /* no world at all: bones and morphs only (mode bones) */
    plush_world_desc world;                /* physics rate (0: 60 Hz), ground, blow-up guard */
    plush_scene_bind_options bind;         /* proxy and direct modes: binding options (seed mode, materials
                                              -- in direct mode the materials that become the soft body) */
    plush_proxy_skin_options skin;         /* proxy mode: blending, stretch-aware frames, patch frames
                                              (patch {0, 0}: PLUSH_SCENE_PATCH_RINGS and _REACH unless the
                                              binding is seed or the frames stretch-aware; patch.rings -1:
                                              each triangle's own) */
    bool no_push;                          /* proxy mode: leave the skinned surface where the cage's triangles
                                              put it; by default bound vertices inside the body's rigid bodies
                                              are pushed out through those triangles' transforms (never with a
                                              seed binding, which stays the original method), and the vertices
                                              still behind the visible skin after it moved out on their own, each
                                              in a smooth bump (the touch-up) */
    bool push_triangles_only;              /* proxy mode: no touch-up: the push moves the surface only through
                                              the cage triangles' transforms, which a bake of one pseudo-bone per
                                              triangle (plush run --bake-tolerance 0) replays exactly */
    bool follow_author;                    /* proxy mode: a soft body whose part the model's own physics moves
                                              keeps the shape that physics gives it (plush_world_soft_follow),
                                              not its rest shape: it swings as the author's part does */
    const plush_im2_map *overrides;        /* proxy mode: Influence Map overrides, may be NULL (direct mode
                                              ignores them: it simulates every bound vertex) */
    const char *overrides_file;            /* its name, for messages */
    bool direct_cloth;                     /* direct mode: plush's own cloth solver steps the detailed soft body,
                                              the proxy's material in physical units (plush_world_cloth, an
                                              experiment); by default Bullet does, the proxy's parameters
                                              calibrated */
} plush_scene_desc;

/* A run's limits (docs/run.md derives each figure). A run over one is refused with PLUSH_E_BUDGET before
 * anything is built for it, from the inputs alone:
 *   PLUSH_SCENE_MAX_SOFT_BODIES     soft bodies of a model (an attached cage has one per piece)
 *   PLUSH_CAGE_MAX_TRIANGLES        triangles of a model's TriMesh soft bodies together in proxy mode, and of
 *                                   a cage plush makes or attaches (plush/cage.h)
 *   PLUSH_SCENE_FRAME_REAL_TIMES    a frame's estimated work (IK, soft bodies) at most this many times the
 *                                   frame's own duration (1 / fps)
 *   PLUSH_SCENE_MAX_RUN_SECONDS     a whole run's estimated work (frames times a frame's) */
enum { PLUSH_SCENE_MAX_SOFT_BODIES = 1000 };
#define PLUSH_SCENE_FRAME_REAL_TIMES 10.0
#define PLUSH_SCENE_MAX_RUN_SECONDS (24.0 * 3600.0)

/* The work of one frame of a scene made from desc, estimated from its model alone (measured unit costs,
 * docs/run.md): IK (loops times the bones each link's turn moves) and soft bodies (their links and nodes
 * times their solver iterations, and their faces, per physics step). Direct mode's detailed body is not
 * counted (it is the reference, slow by design). */
typedef struct plush_scene_estimate {
    double ik_seconds;            /* per frame */
    double soft_seconds;          /* per frame */
    double frame_seconds;         /* their sum */
    int64_t worst_ik;             /* the IK bone that costs most, -1 when none */
    int64_t worst_soft;           /* the soft body that costs most, -1 when none */
} plush_scene_estimate;

/* Estimates desc's frame (out may be NULL) and checks it against the limits above: PLUSH_E_BUDGET with the
 * figure, the limit and what brings the run under it when one is passed; PLUSH_E_ARGUMENT without a model.
 * plush_scene_create calls it first; frames (0: not known yet) adds the whole run's limit. */
plush_status plush_scene_check_budget(const plush_scene_desc *desc, uint32_t frames, plush_scene_estimate *out,
                                      plush_diag *diag);

/* The patch a scene made from desc fits its frames to: what plush_proxy_skin_create and the bake are
 * given ({0, 0}: each triangle's own frame). */
plush_proxy_patch_shape plush_scene_patch(const plush_scene_desc *desc);

/* Seconds spent (wall clock), summed over the steps so far. */
typedef struct plush_scene_timing {
    double motion;      /* motion sampling, morphs, bone deform */
    double physics;     /* pins, kinematic targets, the physics step, write-back */
    double frames;      /* proxy frames from the simulated nodes */
    double skinning;    /* vertex skinning (bones and proxy), the push out of the body and the soft measure */
    double push;        /* of skinning: the push of the proxy-skinned surface out of the body */
    double measure;     /* of skinning: the soft measure's share of this thread (posing the skin and the bodies,
                         * waiting for the author's side -- its skinning and tests -- and for the frame before's
                         * figures) */
    double measure_beside; /* the soft measure's tests against the body and the skin on threads of their own:
                         * the author's side beside the push, plush's beside the next frame's motion and
                         * physics; not part of any stage above */
    double exports;     /* plush_scene_run: the sinks */
    uint64_t steps;
} plush_scene_timing;

typedef struct plush_scene plush_scene;

/* How the soft part moved in one frame (proxy and direct modes; zero in bones mode). */
typedef struct plush_scene_soft_figures {
    double offset;        /* mean distance of the bound vertices from where bone skinning puts them (model
                           * units; over at most 1,024 of them spread evenly) */
    double offset_share;  /* offset over the diagonal of the bound vertices' rest box: the distance from where
                           * the author's physics puts the part */
    double swing_share;   /* mean distance of the (sampled) bound vertices from where bone skinning puts them
                           * without physics (every rigid body at its bone: MMD's physics off), over the same
                           * diagonal: how far the part swings or droops */
    double author_swing_share; /* the same of bone skinning with the author's physics: its swing */
    double inside_share;  /* bound vertices inside the rigid bodies that follow bones, posed at the frame
                           * (0..1; a vertex inside a body already at rest is not counted for that body) */
    double inside_depth;  /* the deepest of them below the shape's surface (model units) */
    double bones_inside_share; /* the same share where plain bone skinning puts the bound vertices: what
                                * the model's own weights do against its own body at this frame */
    double skin_share;    /* the (sampled) bound vertices behind the visible skin, the faces of the other drawn
                           * materials (0..1, of those measured: a vertex behind or touching it at rest is left
                           * out, so the model at rest reads 0) */
    double skin_depth;    /* the deepest of them behind it (model units) */
    double author_skin_share; /* the same share where bone skinning with the author's physics puts them */
    /* Through a limb: the (sampled) bound vertices that went through a rigid body that follows a bone since the
     * frame before -- in the body's frame their way from there passes through its core, half its thickness
     * about its axis, and ends on its other side (a skirt's front left behind a leg that kicked through it,
     * which the skin's share reads as in front of the skin) -- 0..1, and the same of bone skinning with the
     * author's physics; measured only on a frame that follows the one before by a step */
    bool through_measured;
    double through_share, author_through_share;
    /* Jitter: the mean over the (sampled) bound vertices of how much their way changes from one frame to the next
     * (|x(f) - 2 x(f-1) + x(f-2)|, the frame's three places), as a share of the part's size, and the same of bone
     * skinning with the author's physics: a surface that shimmers where the author's moves smoothly reads
     * higher; measured only on a frame that follows the two before by steps */
    bool jitter_measured;
    double jitter_share, author_jitter_share;
    /* The skin through the part: of the visible skin's vertices the part covers at rest (the way out from one
     * along its normal meets a face of the part within the skin's depth; about 256 of them, spread evenly), the
     * share whose way out meets none at the frame -- the skin showing through the part where a face between its
     * vertices dips behind it or a panel slides round a limb, which skin_share, counting the part's vertices,
     * does not see -- and the same of the author's part (bone skinning with the author's physics) over the same
     * skin. Not measured without such faces or points. */
    bool show_measured;
    double show_share, author_show_share;
    /* The author's own surface of the part (its bound vertices bone-skinned with the author's physics): the
     * p99.9 edge strain and the share of edges outside [2/3, 3/2], as plush's surface is measured; both 0 when
     * not measured (the author gave the part no physics). Where they miss the surface bar's strain figures,
     * the author's part tears there (chains flung apart) and no whole surface can swing as it does. */
    bool author_surface;      /* measured */
    double author_strain_p999, author_strain_outside;
} plush_scene_soft_figures;

/* The bars the soft part's behaviour is judged by against the author's physics (docs/measured.md): standing
 * still, it settles within PLUSH_SOFT_SETTLE_BAR of its size of where the author's physics lets it hang; where
 * the author's part moves, plush's mean swing over the author's lies within PLUSH_SOFT_SWING_RATIO_LO..HI. */
/* PLUSH_SOFT_SETTLE_BAR: plush/physics.h (a following piece's shape memory is held to it) */
#define PLUSH_SOFT_SWING_RATIO_LO 0.5
#define PLUSH_SOFT_SWING_RATIO_HI 2.0
/* The author's part "moves" when at least this share of its vertices hangs from physics bones and their
 * mean swing is at least this share of its size (below it a ratio says nothing). */
#define PLUSH_SOFT_AUTHOR_MOVES_SHARE 0.1
#define PLUSH_SOFT_AUTHOR_MOVES_SWING 0.005
/* The author's part is whole at a frame when its surface meets the strain figures of the surface bar
 * (PLUSH_QUALITY_BAR_STRAIN_P999 and PLUSH_QUALITY_BAR_OUTSIDE, plush/quality.h); the swing bar is judged over
 * those frames (plush_scene_soft_author_whole, plush/sys/scene.h). */
/* Behind the visible skin, against the author's model at the same frame: at every frame at most
 * PLUSH_SOFT_SKIN_FRAME_BAR more of the measured vertices, and over the run PLUSH_SOFT_SKIN_MEAN_BAR more on
 * average (shares: 2 and 0.5 points). */
#define PLUSH_SOFT_SKIN_FRAME_BAR 0.02
#define PLUSH_SOFT_SKIN_MEAN_BAR 0.005
/* The skin through the part (the show figures below), where the author's part has physics (at least
 * PLUSH_SOFT_AUTHOR_MOVES_SHARE of it hangs from physics bones): over the run, plush's part shows at most this
 * share more of the skin it covers at rest than the author's does, on average (5 points). Only on average: a part
 * the author swings wide shows the skin too, at other moments than plush's, so a frame's gap says little. Where the
 * author gave the part no physics its part is carried like a helmet, and a part that swings shows more by design:
 * no bar. */
#define PLUSH_SOFT_SHOW_MEAN_BAR 0.05

/* Over the steps so far: the mean offset_share, swing_share and author_swing_share, the last step's, and the
 * frame with the largest inside_share. */
typedef struct plush_scene_soft_summary {
    uint64_t frames;
    double mean_offset_share;
    double mean_swing_share, mean_author_swing_share;
    double last_offset_share, last_swing_share, last_author_swing_share;
    /* the frames where the author's part is whole (plush_scene_soft_author_whole) and the two swings' means over
     * them; the frames where it tears, its largest p99.9 strain and the frame of it (-1: none torn) */
    uint64_t whole_frames, torn_frames;
    double whole_swing_share, whole_author_swing_share;
    double torn_strain_p999;
    int64_t torn_frame;
    double author_share;          /* bound vertices the author's physics moves (weighted to a bone a dynamic
                                   * rigid body drives, or below one), 0..1: 0, the author gave it none */
    double worst_inside_share, worst_inside_depth, deepest;
    double worst_bones_inside_share; /* bone skinning's share at the worst frame */
    double most_bones_inside_share;  /* bone skinning's largest share over the steps */
    int64_t worst_inside_frame;   /* -1: no step yet */
    size_t bodies;                /* the rigid bodies measured */
    size_t following;             /* follow_author: the soft bodies that keep the shape the author's physics
                                     gives their part */
    /* behind the visible skin: the faces it is made of and the bound vertices measured (sampled; those
     * behind or touching it at rest left out), the means of plush's share and the author's, the frame where
     * plush's lies furthest above the author's (-1: none measured) with both shares there, and the frames
     * where it lies more than PLUSH_SOFT_SKIN_FRAME_BAR above */
    size_t skin_faces, skin_measured, skin_left_out;
    double mean_skin_share, mean_author_skin_share, skin_deepest;
    double worst_skin_share, worst_author_skin_share;
    int64_t worst_skin_frame;
    uint64_t skin_frames_over;
    /* through a limb: the frames measured, those where some of plush's part went through one and those where
     * some of the author's did, the means of the two shares, and the frame where plush's share lies furthest
     * above the author's (-1: none measured) with both shares there */
    uint64_t through_frames, through_frames_plush, through_frames_author;
    double mean_through_share, mean_author_through_share;
    double worst_through_share, worst_author_through_share;
    int64_t worst_through_frame;
    /* jitter: the frames measured, the means of the two shares, and the frame where plush's lies furthest
     * above the author's (-1: none measured) with both shares there */
    uint64_t jitter_frames;
    double mean_jitter_share, mean_author_jitter_share;
    double worst_jitter_share, worst_author_jitter_share;
    int64_t worst_jitter_frame;
    /* the skin through the part: the skin's points measured (under it at rest, sampled), the frames measured,
     * the means of the two shares, the frame where plush's lies furthest above the author's (-1: none measured)
     * with both shares there, and the frames where it lies more than PLUSH_SOFT_SKIN_FRAME_BAR above */
    size_t show_points;
    uint64_t show_frames, show_frames_over;
    double mean_show_share, mean_author_show_share;
    double worst_show_share, worst_author_show_share;
    int64_t worst_show_frame;
} plush_scene_soft_summary;

/* Builds everything the mode needs (anim, motion binding, world, binding, proxy skin; in direct mode the
 * model of plush_scene_direct_build); warnings (missing names, skipped soft bodies, unsupported features)
 * go to diag. Proxy and direct modes without a usable TriMesh soft body fail with PLUSH_E_NO_PROXY. */
plush_status plush_scene_create(const plush_scene_desc *desc, plush_scene **out, plush_diag *diag);
/* Computes frame f (fractions allowed, 0 <= f <= PLUSH_SCENE_MAX_FRAME). When f follows the previous
 * frame by at most one (0 < f - previous <= 1), physics advances by (f - previous) / fps; otherwise (the
 * first call, a jump) physics is reset at f: every rigid body at its bone and every soft-body node at its
 * vertex, as MMD does at the start, with no step. So frame f of a run from 0 shows f / fps seconds of
 * simulation. A soft body that blows up becomes a warning in diag (with its frame) and stays frozen. */
plush_status plush_scene_step(plush_scene *scene, double frame, plush_diag *diag);
/* Computes frame f as a run from frame 0 would: the reset at 0, then one step per frame up to f (the
 * last one partial for a fractional f). Without physics it is plush_scene_step(f). */
plush_status plush_scene_seek(plush_scene *scene, double frame, plush_diag *diag);
/* The description with every default resolved (fps, physics rate, fixed-step cap). */
void plush_scene_get_desc(const plush_scene *scene, plush_scene_desc *out);
/* Frames a run computes by default: the motion's last key in output frames, included (a motion's
 * length), or 300 without a motion. Fails (PLUSH_E_RANGE) beyond PLUSH_SCENE_MAX_FRAME. */
plush_status plush_scene_default_frames(const plush_scene *scene, uint32_t *frames, plush_diag *diag);
/* This frame's vertex positions and unit normals (model->vertex_count entries). */
const float (*plush_scene_positions(const plush_scene *scene))[3];
const float (*plush_scene_normals(const plush_scene *scene))[3];
/* Proxy and direct modes: the binding (direct mode: which vertices the detailed soft bodies hold); NULL
 * in bones mode. Proxy mode: this frame's proxy node positions (binding->proxy order); NULL otherwise. */
const plush_scene_binding *plush_scene_get_binding(const plush_scene *scene);
/* Proxy mode: the patch frames the scene's skin fitted this frame (NULL otherwise), which a bake made with the
 * same rings can share instead of fitting them again. */
const plush_proxy_patch *plush_scene_get_patch(const plush_scene *scene);
const float (*plush_scene_proxy_nodes(const plush_scene *scene))[3];
const plush_anim *plush_scene_get_anim(const plush_scene *scene);
void plush_scene_get_timing(const plush_scene *scene, plush_scene_timing *out);
/* The last step's soft figures, and their summary over the steps so far. */
void plush_scene_soft(const plush_scene *scene, plush_scene_soft_figures *frame, plush_scene_soft_summary *summary);
/* Blow-ups so far (a soft body put back to its last good state counts each time, one frozen for good once
 * more), and the first one's frame (-1 when none); the soft bodies frozen for good. */
size_t plush_scene_failures(const plush_scene *scene, int64_t *first_frame);
size_t plush_scene_frozen(const plush_scene *scene);
void plush_scene_destroy(plush_scene *scene);

/* ---- direct mode: the detailed mesh simulated as the soft body (the reference) --------------------
 *
 *   plush_pmx_model *direct = NULL;
 *   plush_scene_direct_stats stats;
 *   plush_scene_direct_build(binding, &direct, &stats, &diag);   // what plush_scene_create does in
 *   ... simulate direct like any model ...                        // PLUSH_SCENE_DIRECT
 *   plush_pmx_free(direct);
 *
 * The derived model is the source model (sharing its unchanged arrays) with, per proxy part (TriMesh soft
 * body of the proxy), one new material appended after the source's materials, and that soft body moved
 * onto it with its parameters (total mass, margin, aero model, config, AST / VST, B-link distance,
 * clusters, flags, group, mask) unchanged but for the stiffness (iterations, LST) and the pressure
 * (kPR): see below; the proxy's cages stay as plain, bone-skinned materials. Other soft bodies (ropes,
 * skipped ones) are kept as they are.
 * - Faces: every face of the source's materials that no soft body owns whose three vertices are all
 *   bound; the face goes to the part of the proxy triangle its first vertex binds to most (the nearest).
 *   The world welds them by position as any TriMesh, so the bound vertices, welded, are the nodes.
 * - Pieces: a detailed mesh is often several separate closed surfaces (the demo bear: 15 ellipsoids
 *   pushed into one another; a jacket over a body). Unjoined, every piece but the pinned one would fall
 *   away, so pieces are sewn where they meet: each node gets one seam link to the nearest node of another
 *   piece when that node lies within the mean length of its own edges (capped at 4 times the mesh's mean).
 *   A seam link is written as a degenerate face (a, b, b): the world makes a link of every face edge and
 *   a face only of triangles with area. Pieces that still hold to no pin or anchor get a warning.
 * - Pins: a detailed node is pinned when its nearest proxy node (rest positions) is pinned and lies
 *   within that proxy node's longest edge: the pinned node's share of the surface. Where the proxy node
 *   is a corner of a triangle whose three nodes are pinned (the cage held over a patch), only the detailed
 *   nodes whose nearest proxy triangle is such a triangle are: the proxy holds that patch rigid, but a
 *   link from a pinned node to a free one stretches, so the surface under it stays free (the demo bear:
 *   1,049 pinned nodes instead of 1,906; hanging at rest, its ears just outside the pinned cap tilted 4
 *   degrees on the head with the whole shares, 0.4-1.0 now, 1.4 in the cage). A pin alone or pins on a
 *   line keep their whole share: one detailed node would tear out. A pinned proxy node no detailed node
 *   chose pins its nearest detailed node, so no pin is lost. Pinned detailed vertices take the bone
 *   weights of the pinned proxy vertex: they follow exactly what the proxy's pins follow.
 * - Anchors: the same rule for anchored proxy nodes; each anchor of the proxy node (rigid body, near mode)
 *   is repeated for each detailed node it covers.
 * - Mass and pressure: the total mass is spread over many more nodes (each lighter). Bullet's pressure
 *   (kPR) and volume conservation (kVC) use the body's total enclosed volume, summed over its faces: with
 *   several closed pieces that is the sum of their volumes, so the pieces share one pressure as if their
 *   insides were connected (p = kPR / V_total); for open pieces the volume means little. kPR is
 *   calibrated (below).
 * - Bending: B-link distance over the detailed links; above 1500 nodes the physics module finds the
 *   pairs itself (Bullet's table would need n^2 memory) and appends the same links Bullet would.
 * - Self-collision (VF_SS) is off when the faces are several pieces (Bullet cannot build it), as the
 *   world decides for any soft body.
 * - Stiffness (with the pressure below, the calibration; every other parameter is copied unchanged):
 *   the same LST and iterations make a much softer body at this resolution -- Bullet solves the links
 *   a few Gauss-Seidel sweeps per step and a correction travels about one link per sweep, so a mesh
 *   ten times finer stretches far more under the same load (the demo bear inflated to 3.9 times its volume). So the
 *   position iterations are multiplied by the ratio of the proxy's mean edge length to the detailed
 *   mesh's (at least 1; capped at 1000), and LST becomes the stiffness the proxy's links reach in one
 *   step, 1 - (1 - LST)^P for its P iterations (LST 0.5, P 8: 0.996). Measured on the demo bear's shake:
 *   volume ratio 1.08 at rest against the proxy's 1.08 (it was 3.8), and direct on a quarter of the
 *   triangles lies nearer to it than the proxy does (plush compare's convergence figure).
 * - Pressure: Bullet pushes a node by kPR x its area / the body's volume, so a node's pressure
 *   acceleration (over its mass, total / nodes) goes with the mesh's area / volume, and the link solver
 *   holds a smooth stretch about (ratio of edge lengths) times less well at the iterations above. kPR
 *   becomes kPR x (A/V of the proxy) / (A/V of the detailed mesh) / that ratio (the demo: 1200 -> 76).
 *   At the proxy's kPR the bear's 15 sewn pieces pushed one another apart (legs down, arms out): hanging
 *   at rest its centroid sank 0.098 against the proxy's 0.084 and lay 0.075 (RMS) from it; calibrated,
 *   0.090 and 0.042 (pinned by whole shares; with the pins above it sinks 0.098, the body below the head
 *   0.106 against the proxy's 0.087, and no Bullet parameter tried closes that: see README).
 * The model must outlive the derived one. Fails on no usable TriMesh soft body (PLUSH_E_NO_PROXY),
 * no bound face (PLUSH_E_GEOMETRY), out of memory. */
typedef struct plush_scene_direct_stats {
    size_t bodies;             /* direct soft bodies made (proxy parts with faces) */
    size_t faces;              /* detailed faces in them */
    size_t nodes;              /* welded detailed nodes */
    size_t pieces;             /* edge-connected pieces before sewing */
    size_t seam_links;
    size_t loose_pieces;       /* pieces (after sewing) holding to no pin or anchor, in bodies that have some */
    size_t pinned_nodes;
    size_t anchored_nodes;
    double resolution;         /* largest ratio of proxy to detailed mean edge length (iterations scale) */
    int32_t p_iterations;      /* the largest calibrated position iteration count */
    float lst;                 /* the calibrated link stiffness (of the last body) */
    float pressure;            /* the calibrated pressure kPR (of the last body) */
    bool cloth;                /* stepped by plush's cloth solver (desc.direct_cloth; the fields below) */
    float stretch;             /* its stretch modulus (of the last body) */
    float bending_length;      /* its bending length: the proxy's mean edge (of the last body) */
} plush_scene_direct_stats;

/* The direct mode's model: the bound detailed mesh, welded, as the soft body in place of the proxy, with
 * the proxy's parameters, pins and anchors carried over (plush run --help, mode direct); its statistics. */
plush_status plush_scene_direct_build(const plush_scene_binding *binding, plush_pmx_model **out,
                                      plush_scene_direct_stats *stats, plush_diag *diag);
/* Direct mode: the model as simulated and its statistics; NULL / zeros in other modes. */
const plush_pmx_model *plush_scene_direct_model(const plush_scene *scene, plush_scene_direct_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
