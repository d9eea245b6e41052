/* Private to src/scene: soft parts that follow the author's physics (follow.c). */
#ifndef PLUSH_SCENE_FOLLOW_H
#define PLUSH_SCENE_FOLLOW_H

#include "plush/anim.h"
#include "plush/scene.h"
#include "plush/sys/physics.h"

typedef struct plush__follow {
    size_t count;               /* vertices of the following soft bodies' materials */
    uint32_t *vertex;           /* those PMX vertices */
    uint32_t *source;           /* per entry: the bound vertex nearest it at rest, whose motion it takes */
    float (*offset)[3];         /* per PMX vertex (model->vertex_count): this frame's offsets, for the world;
                                   the sources' entries are scratch */
    float (*base)[3];           /* per PMX vertex: where the bones carry each of vertex[] whose source no physics
                                   moves (its rest place skinned with its source's weights; NaN for the others);
                                   the sources' entries are scratch */
    float (*shift)[3];          /* per PMX vertex, scratch: a source's rest offset to skin a vertex[] with */
    uint8_t *carried;           /* per entry: its source is carried by bones no physics moves */
    size_t carried_count;       /* entries carried so (none: no base is ever set) */
    uint8_t *follows;           /* per PMX vertex: 1 when it is one of vertex[] */
    size_t bodies;              /* soft bodies that follow */
    bool ready;                 /* a frame's offsets are in */
    bool based;                 /* this frame's bases are in */
    double last_p999;           /* the author's surface's p99.9 strain at the frame before (plush__follow_whole) */
} plush__follow;

/* Finds the soft bodies a simulated rigid body's bone moves (a bone of one, or below one, carries a bound
 * vertex nearest one of their vertices at rest) and tells the world they follow (plush_world_soft_follow). */
plush_status plush__follow_init(plush__follow *f, const plush_pmx_model *m, const plush_scene_binding *binding,
                                plush_world_model *wm, plush_arena *arena, plush_diag *diag);
/* After the frame's bones after physics: each vertex's offset, how far the author's physics moves its source
 * (the source skinned by anim less skinned by the kinematic skinning matrices, with anim's vertex morphs). */
void plush__follow_frame(plush__follow *f, const plush_pmx_model *m, const plush_anim *anim,
                         const float (*kinematic)[16]);

/* Before the frame's physics, with its bones without physics (kinematic skinning matrices) and anim's vertex
 * morphs: the base of each vertex whose source the bones alone carry, its rest place skinned with its source's
 * weights (plush_world_set_goal_bases). */
void plush__follow_base(plush__follow *f, const plush_pmx_model *m, const plush_anim *anim,
                        const float (*kinematic)[16]);

/* Where the author's own part tears (author_p999: its surface's p99.9 strain at the frame the offsets were
 * taken of; p: the larger of it and the frame before's, past the surface bar's), the offsets are scaled down so
 * that the same motion would stretch it to the bar: by (bar - 1) / (p - 1), every vertex alike. Called once a
 * frame, after plush__follow_frame. */
void plush__follow_whole(plush__follow *f, double author_p999);

#endif
