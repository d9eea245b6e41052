/* Private to src/scene: the per-frame measure of the soft part against bone skinning and the body
 * (soft_measure.c), kept by the scene. */
#ifndef PLUSH_SCENE_SOFT_MEASURE_H
#define PLUSH_SCENE_SOFT_MEASURE_H

#include "plush/anim.h"
#include "plush/physics.h"
#include "plush/scene.h"
#include "plush/sys/core.h"
#include "plush/quality.h"
#include "plush/sys/quality.h"
#include "core/common.h"
#include "physics/rigid_shape.h"
#include "scene/internal.h"

/* One side's figures at a frame: vertices behind the skin (of those measured there) and the deepest, vertices
 * inside a body and the deepest. */
typedef struct plush__soft_side {
    size_t behind, measured, inside;
    double skin_deepest, deepest;
    size_t through, through_measured; /* sampled vertices that went through a limb since the frame before, of
                                         those measured (plush__rigid_passed_through) */
    double jitter;                    /* the sampled vertices' |x(f) - 2 x(f-1) + x(f-2)| summed, */
    size_t jitter_measured;           /* over so many (0: the frame does not follow two by steps) */
    size_t showing, show_measured;    /* the skin's points the part covers at rest that it does not cover now */
} plush__soft_side;

typedef struct plush__soft_measure {
    const plush_pmx_model *model;
    const plush_world_model *wm;
    const uint32_t *vertices;          /* the bound vertices */
    size_t count, sample_step;
    double size;                       /* the diagonal of their rest box */
    float (*scratch)[3];               /* bone-skinned positions, indexed by vertex */
    float (*kin_scratch)[3];           /* the same without physics (the sampled ones), indexed by vertex */
    double author_share;               /* bound vertices the author's physics moves (weighted to a bone a
                                          dynamic rigid body drives, or below one), 0..1 */
    uint32_t *bodies;                  /* the rigid bodies that follow bones */
    float (*poses)[16];                /* and their poses at the frame measured */
    bool poses_valid;                  /* poses holds a frame's (the last one posed) */
    /* through a limb: each side's sampled vertices at the frame before and the bodies' poses there, for the
     * frame measured when it follows that one by a step (consecutive: set by the scene before the measure's
     * start) */
    float (*prev_poses)[16];
    float (*prev_at[2])[3];            /* [side][sampled vertex] */
    bool prev_ok[2], prev_poses_ok;
    bool consecutive;                  /* the frame follows the one before by a step (the push's sides too) */
    /* jitter: each side's sampled vertices at the frame before prev_at's, how many frames before are kept
     * (0..2), and whether the frame measured follows the one before (consecutive, as the measure's start took
     * it: the scene sets consecutive for the next frame while this one is measured) */
    float (*before_prev[2])[3];
    int jitter_kept[2];
    bool jitter_follows;
    double *reach;                     /* and the radius about each one's origin that holds its shape */
    size_t body_count;
    uint8_t *left_out;                 /* bit i * body_count + body: bound vertex i is not measured against that body:
                                          inside it at rest, or the part lies into it at rest and the model's
                                          collision groups keep its physics apart from it
                                          (plush__rigid_vertex_meets) */
    plush_quality_skin *skin;          /* the visible skin (faces of visible materials with no bound vertex),
                                          measured on the sampled bound vertices; NULL without such faces */
    size_t skin_faces;
    /* the skin through the part: the part's faces as a cover over the skin's vertices whose way out along their
     * normal meets them within cover_reach (the skin's depth) at rest (every cover_step-th of them); NULL without
     * such faces or points */
    plush_quality_skin *cover;
    size_t cover_step, cover_points;
    double cover_reach;
    const float (*frame_at)[3];        /* the frame's positions and normals as the measure's start took them: the */
    const float (*frame_normals)[3];   /* skin's */
    plush_quality *author_surface;     /* the part's faces, measured on the author's skinning (the author's part
                                          moves: author_share at least PLUSH_SOFT_AUTHOR_MOVES_SHARE); NULL */
    bool skin_posed, bodies_posed;     /* the skin and the bodies were posed this frame (by the measure's start
                                          or the push): they are not posed again until the measure's end */
    /* the author's skinning of the frame and its tests, on a thread of their own from plush__soft_measure_begin
     * to plush__soft_measure_launch */
    plush__job author_job;
    bool author_running;
    plush__soft_side author_tests;     /* the author's side's figures at the frame */
    double author_seconds;             /* its tests' time on that thread, all frames so far */
    plush_quality_figures author_now;  /* the author's surface's strain at the frame launched (author_surface):
                                          measured on the run's thread as the author's skinning is taken in, so
                                          that a part that follows can be scaled by it before the next step */
    const plush_anim *anim;
    const float (*kinematic)[16];
    /* the frame's figures, measured on a thread of their own from plush__soft_measure_launch to
     * plush__soft_measure_collect (beside the next frame's motion and physics) */
    plush__job measure_job;
    bool measuring;
    const float (*at)[3];              /* the frame's positions the figures are taken of */
    plush_scene_soft_figures figures;
    double measure_seconds;            /* the measure's own thread, all frames so far */
} plush__soft_measure;

plush_status plush__soft_measure_init(plush__soft_measure *sm, const plush_pmx_model *m, const uint32_t *vertices,
                                      size_t count, const plush_world_model *wm, plush_arena *arena, plush_diag *diag);
/* Frees what init allocated outside the arena (the skin); a zeroed measure is fine. */
void plush__soft_measure_fini(plush__soft_measure *sm);
/* Poses the bodies measured against at this frame (the measure does it itself; plush__soft_measure_deepest
 * needs it first). */
void plush__soft_measure_pose_bodies(plush__soft_measure *sm);
/* Poses the visible skin at this frame (positions and normals of every vertex, borrowed for the frame), once:
 * a second call in the same frame (the measure's after the push's) does nothing. */
void plush__soft_measure_pose_skin(plush__soft_measure *sm, const float (*positions)[3], const float (*normals)[3]);
/* How far bound vertex i at p must go to lie margin outside every body it is measured against (0 when it
 * does), as posed by the last plush__soft_measure_pose_bodies, looking only at the bodies `near` names (bit
 * b: body b; UINT64_MAX: all; with more than 64 bodies every one is looked at); out, when not NULL, gets the
 * unit direction out of the deepest body (zero when none); when `near_out` is not NULL it gets the bodies
 * within slack more than their reach of p, so a vertex that has moved less than slack since can ask again with
 * that mask and get the same answer; when `clear` is not NULL it gets how far p can move, at least, and stay
 * margin outside the bodies of `near` (0 when it is not; INFINITY when there are none); when `deepest` is not
 * NULL it gets the deepest body (an index into sm->bodies; SIZE_MAX when p lies outside every margin). */
double plush__soft_measure_deepest_near(const plush__soft_measure *sm, size_t i, const float p[3], double margin,
                                        float out[3], uint64_t near, double slack, uint64_t *near_out, double *clear,
                                        size_t *deepest);
/* The bodies (bit b: body b, as plush__soft_measure_deepest_near takes them) whose reach plus pad meets the box
 * of bound vertices first .. first + n at positions (indexed by vertex), as posed by the last
 * plush__soft_measure_pose_bodies: no point of them lies within pad of another body's shape. Every body with
 * more than 64. */
uint64_t plush__soft_measure_box_mask(const plush__soft_measure *sm, const float (*positions)[3], size_t first,
                                      size_t n, double pad);
/* The run of bound vertices one box mask serves: neighbours in the model's order lie close together. */
enum { PLUSH__SOFT_MEASURE_BOX_RUN = 32 };
/* Starts this frame's measure once the model's vertices are skinned by bones (positions and normals of every
 * vertex: the skin's are final, the bound ones are not yet): poses the skin and the bodies, and skins the bound
 * vertices as the author's model has them (bone skinning with the author's physics, which no push moves; and
 * without physics) on a second thread while the proxy skins and pushes the bound ones. anim and kinematic
 * (the skinning matrices of the pose without physics, every rigid body at its bone as MMD's physics off shows
 * it, or NULL when nothing simulates) must stay as they are until plush__soft_measure_launch. The frame
 * before's measure must have been collected. */
void plush__soft_measure_begin(plush__soft_measure *sm, const plush_anim *anim, const float (*kinematic)[16],
                               const float (*positions)[3], const float (*normals)[3]);
/* Measures this frame (positions and normals: the frame's vertices, the bound ones skinned by the proxy) on a
 * thread of its own, which plush__soft_measure_collect waits for: until then the positions, the normals, the
 * skin's vertices and the bodies must stay as they are (the next frame's motion and physics may run). Starts
 * the frame with plush__soft_measure_begin when that was not called. Returns at once. */
void plush__soft_measure_launch(plush__soft_measure *sm, const plush_anim *anim, const float (*kinematic)[16],
                                const float (*positions)[3], const float (*normals)[3]);
/* Waits for the launched measure and gives its figures; false (out untouched) when none was launched since
 * the last collect. */
bool plush__soft_measure_collect(plush__soft_measure *sm, plush_scene_soft_figures *out);

#endif
