/* Private to src/scene: the bake's recorded frames, shared by bake.c (frames, motion, files) and
 * bake_model.c (the re-weighted model); which vertices the bake keeps, shared with the mesh exports
 * (sink_mesh.c) so that a PLY/OBJ frame has the baked PMX's vertices in its order. */
#ifndef PLUSH_SCENE_BAKE_INTERNAL_H
#define PLUSH_SCENE_BAKE_INTERNAL_H

#include "scene/internal.h"
#include "plush/sys/core.h"

/* A few bones fitted to the recorded motion (bake_fit.c): they replace the pseudo-bones in the model and
 * the motion. */
typedef struct plush__bake_fit {
    size_t bones;
    float (*pivot)[3];       /* per bone: its rest position (its vertices' weighted mean) */
    float (*keys)[7];        /* frame_count * bones: translation of the pivot, rotation about it */
    double *reach;           /* per bone: the farthest rest vertex it carries from its pivot */
    int32_t (*bone)[4];      /* per binding row: its bones, -1 unused */
    float (*weight)[4];      /* non-negative, summing to one */
    size_t carried;          /* of the bones, the last are pseudo-bones of the exact bake carrying rows the
                                fitted ones miss (their triangles, pivoted at the centroids) */
    double rms, worst;       /* against the exact bake at every other recorded frame: the worst frame's RMS, worst */
    double seconds;          /* the fit's wall-clock time */
} plush__bake_fit;

/* Fits `bones` bones to what b recorded (0: with the budget first and binding, the count of 8, 16, 32, ...
 * whose fit plus the keys' tolerance its tracks fit the budget at is least; else the fewest within the
 * tolerance on samples; the frames that miss it added to the samples);
 * *out stays NULL when no fewer bones than the cage's triangles fit or win (the exact bake stays). */
plush_status plush__bake_fit_run(const struct plush_scene_bake *b, size_t bones, double tolerance,
                                 plush__bake_fit **out, plush_diag *diag);
void plush__bake_fit_free(plush__bake_fit *fit);

struct plush_scene_bake {
    const plush_scene_binding *binding;
    const plush_vmd_motion *motion;      /* may be NULL */
    size_t triangle_count;
    float (*centroids)[3];               /* rest centroid per triangle (the pseudo-bone's position) */
    double (*rest_axes)[3][3];           /* rest frame axes per triangle (columns X Y Z) */
    bool *rest_ok;                       /* false: degenerate at rest, its key stays the identity */
    plush_proxy_patch *patch;            /* patch frames (the skin's), or NULL for each triangle's own */
    const plush_proxy_patch *shared;     /* the scene's, read instead of updating patch; NULL: our own */
    bool uses_patch;                     /* keys from patch frames (patch or shared), not each triangle's own */
    const float (*offsets)[3];           /* the scene's push out of the body per triangle this frame, or NULL */
    float (*last)[7];                    /* last key per triangle: translation xyz, rotation xyzw */
    double *reach;                       /* per triangle: the farthest rest vertex it carries from its centroid */
    double tolerance;                    /* keys: model units at the vertices; < 0: every key */
    size_t key_budget;                   /* bone + morph keys a player loads at most (0: no budget) */
    size_t byte_budget;                  /* the VMD's bytes at most (0: no budget) */
    bool budget_first;                   /* the budget holds and the keys' tolerance gives (the default);
                                            else the tolerance holds and the summary says what it costs */
    plush__bake_fit *fit;                /* NULL: one pseudo-bone per triangle */
    bool fit_done;                       /* plush_scene_bake_fit ran for fit_asked bones over fit_frames frames */
    size_t fit_asked, fit_frames;
    double fit_tried_seconds;            /* the last plush_scene_bake_fit, wall clock (a fit given up included) */
    double fit_seconds_keys;             /* the last motion's key reduction, wall clock */
    /* bake_physics.c: with the physics baked, the bones rigid bodies drive, keyed per recorded frame */
    bool physics;
    bool *physics_driven;                /* per model bone */
    size_t physics_bone_count, physics_body_count;
    uint32_t *physics_bones;             /* the driven bones, in bone order */
    double *physics_reach;               /* per driven bone: the farthest rest vertex it or a bone below carries */
    size_t *physics_chain;               /* per driven bone: the most driven bones on a chain through it (>= 1) */
    float (*physics_keys)[7];            /* frame-major, physics_bone_count per frame: VMD translation, rotation */
    size_t physics_capacity;             /* frames physics_keys has room for */
    plush_str *physics_names;            /* per driven bone: its name in the bake when renamed, else NULL .s */
    size_t physics_renamed;              /* of them, those renamed because another bone shared their 15 bytes */
    /* bake_names.c: the model's name as the VMD holds it (NULL .s: not settled, the model's) */
    plush_str vmd_model_name;
    bool vmd_names_done;
    uint32_t *frames;                    /* recorded frame numbers */
    float (*keys)[7];                    /* frame_count * triangle_count keys */
    size_t frame_count, frame_capacity;
    plush_arena arena;                   /* everything but frames and keys (grown with realloc) */
};

/* Marks in keep (count entries) the keys of one track a player needs to follow it within tolerance
 * (model units, at vertices up to reach from the bone): the first and last always, then each as far from
 * the one before as interpolation allows (bake_keys.c says how the miss is bounded). keys[f * stride] is
 * frame frames[f]'s key (translation xyz, rotation xyzw). With curves (count entries, NULL: straight
 * segments only, as glTF's linear keys), a VMD key's four curves (X, Y, Z, rotation: x1, y1, x2, y2 in
 * 0..127) shaping the way from the key kept before. A negative tolerance keeps every key. Returns the
 * number kept. */
size_t plush__bake_reduce_track(const float (*keys)[7], size_t stride, const uint32_t *frames, size_t count,
                                double reach, double tolerance, bool *keep, uint8_t (*curves)[4][4]);
/* The same with a key at every frame forced marks (NULL: none): no segment passes one. */
size_t plush__bake_reduce_track_forced(const float (*keys)[7], size_t stride, const uint32_t *frames, size_t count,
                                       double reach, double tolerance, const bool *forced, bool *keep,
                                       uint8_t (*curves)[4][4]);
/* Per recorded frame, how far a track reduced to keep (curves as the reduction fitted them, NULL: straight) lies
 * off the recorded keys: its pivot's miss into move and 2 sin(phi / 2) of its turn's into turn (0 at kept keys):
 * a vertex at distance r from the pivot lies at most move + turn r off. */
void plush__bake_track_misses(const float (*keys)[7], size_t stride, const uint32_t *frames, size_t count,
                              const bool *keep, const uint8_t (*curves)[4][4], float *move, float *turn);

/* The least x from x0 up with keys(ctx, x) <= room, for a count that falls as x grows (a tolerance, a
 * factor on tolerances): doubling until it fits (at most `doublings` times, else 0), then `halvings`
 * halvings of the ratio between the last x that did not fit and the first that did. */
double plush__bake_least_fitting(size_t (*keys)(void *ctx, double x), void *ctx, double x0, size_t room,
                                 int doublings, int halvings);

/* For the fit's choice of a bone count against the budget (bake_fit.c): the bone keys the budget leaves the
 * baked tracks and the physics once the input's kept keys are counted (SIZE_MAX: no budget), and at keys'
 * tolerance tol the physics' keys (returned; SIZE_MAX when out of memory) and, into *per_track, the mean keys
 * of a pseudo-bone's track over about `tracks` of them spread over the cage (0: every one). */
size_t plush__bake_track_room(const struct plush_scene_bake *b);
size_t plush__bake_need_sampled(const struct plush_scene_bake *b, double tol, size_t tracks, double *per_track);

/* The bones a bake keys after plush_scene_bake_fit: the fitted ones, or one pseudo-bone per triangle. */
typedef struct plush__bake_tracks {
    size_t bones;
    const float (*keys)[7];      /* frame_count * bones, frame-major: translation of the pivot, rotation */
    const float (*pivot)[3];     /* per bone: its rest position (a child of plush_root at the origin) */
    const double *reach;         /* per bone: the farthest rest vertex it carries from its pivot */
    double tolerance;            /* the keys' share of the tolerance (half of it after a fit); < 0: every key */
} plush__bake_tracks;
void plush__bake_tracks_get(const struct plush_scene_bake *b, plush__bake_tracks *out);

/* How the motion's keys were reduced (plush__bake_motion): the keys' tolerance used (the bake's, or the
 * larger one the budget asked for: budget_limited), the error the motion keeps every vertex within (keys
 * plus a fit's share; < 0: every key), and when the keys break the budget, by how many and the error at
 * which they would meet it (0: not computed). */
typedef struct plush__bake_plan {
    double key_tolerance, error;
    bool budget_limited;
    size_t guard_keys;           /* keys the RMS guard added (budget_limited) */
    double guard_rms;            /* the bound it kept the tracks' RMS over the soft part within (0: no guard) */
    double unguarded_rms;        /* the same bound at the budget's tolerance with no key added */
    size_t budget, over;
    double budget_error;
} plush__bake_plan;
/* plush_scene_bake_motion, with the plan it followed (plan may be NULL). */
plush_status plush__bake_motion(const struct plush_scene_bake *b, plush__bake_plan *plan, plush_vmd_motion **out,
                                plush_diag *diag);

/* For the first `bones` bones of a model (parents among them), keyed by local transforms (keys[f * bones
 * + b]: translation from the parent's origin in the parent's frame, rotation; frames keys): per bone, how
 * far from it any vertex it or a bone below it carries can lie when posed (the vertex's rest distance from
 * its own bone plus the longest local translation recorded of every bone on the way up), into reach; returns
 * the most bones on one chain, so that keys each within tolerance / that keep every vertex within
 * tolerance (a vertex's miss is at most the sum of its chain's). */
size_t plush__bake_chain_reach(const plush_pmx_model *m, size_t bones, const float (*keys)[7], size_t frames,
                               double *reach);

/* A bone's global as (rotation columns 0..8, translation 9..11) in double, from a column-major mat4. */
void plush__bake_global(const float m[16], double g[12]);
/* A bone's local key from its global g and its parent's (NULL: none): parent^-1 * global as translation
 * (less offset, when not NULL: a VMD key's rest offset) and rotation, the rotation in the hemisphere of
 * prev's (a key, NULL: w >= 0) so that interpolation takes the short way. */
void plush__bake_local_key(const double g[12], const double *parent, const double *offset, const float *prev,
                           float key[7]);


/* bake_physics.c (bake_physics.c says what and why). begin: after plush_scene_bake_create, finds the
 * driven bones; frame: after each plush_scene_bake_add_frame, records their keys from the frame's anim;
 * key_count: the most keys the motion adds; keys: appends the kept ones to v (room: its bone_keys'
 * size); model: the baked model's rigid bodies, the driven ones following their bones (in o's arena), and
 * the driven bones' names a VMD can tell apart. */
plush_status plush__bake_physics_begin(struct plush_scene_bake *b, plush_diag *diag);
/* bake_names.c (it says what and why): the VMD's model name and, after plush__bake_physics_begin, the driven
 * bones' names, settled once before the first frame; one warning for the names it replaced characters of. */
plush_status plush__bake_vmd_names(struct plush_scene_bake *b, plush_diag *diag);
plush_status plush__bake_physics_frame(struct plush_scene_bake *b, const plush_anim *anim, plush_diag *diag);
size_t plush__bake_physics_key_count(const struct plush_scene_bake *b);
/* The keys plush__bake_physics_keys keeps at tolerance (curves fitted into curves when not NULL); keep and
 * curves have frame_count entries. */
size_t plush__bake_physics_key_need(const struct plush_scene_bake *b, double tolerance, bool *keep,
                                    uint8_t (*curves)[4][4]);
plush_status plush__bake_physics_keys(const struct plush_scene_bake *b, double tolerance, plush_vmd_motion *v,
                                      size_t room, plush_diag *diag);
plush_status plush__bake_physics_model(const struct plush_scene_bake *b, plush_pmx_model *o, plush_diag *diag);

/* "pb0001" for triangle 0: short ASCII that fits VMD's 15-byte bone names. */
void plush__bake_pseudo_name(size_t triangle, char name[16]);

/* Per material: a soft body owns it (the materials the model's soft bodies name; out-of-range ones are
 * ignored): the proxy's soft_material for a model that has a proxy. In arena; NULL when out of memory. */
bool *plush__bake_soft_materials(const plush_pmx_model *m, plush_arena *arena);

/* The vertices the bake keeps, in source order: every vertex a material no soft body owns draws, and
 * vertices no material draws (harmless, and a model may use them for morph tricks); a vertex only
 * soft-body materials draw goes. map[v] is v's index among the kept, -1 when it goes. In arena. */
plush_status plush__bake_keep_vertices(const plush_pmx_model *m, const bool *soft_material, plush_arena *arena,
                                       int32_t **map, size_t *kept, plush_diag *diag);
/* The faces every material draws but those soft bodies own (what the bake, the mesh frames and the quality
 * measure show), whole triangles in file order, as the model's vertex numbers. In arena. */
plush_status plush__bake_visible_faces(const plush_pmx_model *m, const bool *soft_material, plush_arena *arena,
                                       uint32_t (**faces)[3], size_t *count, plush_diag *diag);

/* Rewrites o's texture paths (new strings in o's arena) for a PMX written to pmx_path (beside vmd_path),
 * per options (NULL or no model_file: nothing changes); missing textures are warnings. With copy_textures
 * each texture is copied beside pmx_path as it goes (bake_textures.c says under which rules); a copy that
 * would replace a file plush did not write fails with PLUSH_E_EXISTS. */
plush_status plush__bake_textures(plush_pmx_model *o, const char *pmx_path, const char *vmd_path,
                                  const plush_scene_bake_write_options *options, plush_diag *diag);

/* plush_scene_bake_create reading its keys from shared (already updated to the frame being added: the scene's,
 * plush_scene_get_patch) rather than building and fitting a patch of its own; shared must come from the same
 * proxy and shape and outlive the bake. NULL, or a shape of each triangle's own frame: as
 * plush_scene_bake_create. */
plush_status plush__bake_create(const struct plush_scene_binding *binding, const plush_vmd_motion *motion,
                                plush_proxy_patch_shape patch, const plush_proxy_patch *shared,
                                struct plush_scene_bake **out, plush_diag *diag);
/* From now on each frame's keys move each triangle's pseudo-bone by offsets[i] too (the scene's push out of
 * the body for the frame being added, plush__scene_push_offsets: one per triangle, outliving the bake);
 * NULL: none. */
void plush__bake_share_offsets(struct plush_scene_bake *bake, const float (*offsets)[3]);

#endif
