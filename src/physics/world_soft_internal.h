/* Private to world_soft*.c: one PMX 2.1 soft body as the world keeps it. world_soft_build.c makes it
 * (plush__world_soft_add) and world_soft_bullet.c its Bullet body; world_soft.c steps it, guards it and reads it
 * back. */
#ifndef PLUSH_PHYSICS_WORLD_SOFT_INTERNAL_H
#define PLUSH_PHYSICS_WORLD_SOFT_INTERNAL_H

#include "physics/world_internal.h"
#include "plush/sys/core.h"

typedef struct soft_pin {
    uint32_t node;
    int32_t vertex;               /* the PMX vertex whose skinned position the node follows */
    float from[3];                /* where the node was when the current plush_world_step began */
    float to[3];                  /* target handed in by plush_world_set_pins */
} soft_pin;

typedef struct soft_anchor {
    uint32_t node;
    int32_t body;                 /* rigid body index */
    bool near_mode;
    float local[3];               /* the node's rest position in the body's frame at add time */
} soft_anchor;

struct world_soft {
    plush_world_soft_state state;
    int64_t failed_step;          /* the last blow-up's step, -1 */
    uint32_t resets;              /* blow-ups it went on from */
    bc_soft *bc;
    bool rope;
    size_t node_count;
    float (*rest)[3];
    int32_t *node_vertex;         /* node -> a PMX vertex welded into it */
    size_t member_count;          /* the PMX vertices with a node, increasing: write-back walks only these */
    uint32_t *members;
    int32_t *member_node;         /* members[i]'s node (a body keeps no map over all the model's vertices) */
    size_t triangle_count;        /* every face of the material as plush_pmx_weld numbers it; 0 for a rope */
    uint32_t (*triangles)[3];
    bool *pinned;                 /* per node */
    size_t pin_count;
    soft_pin *pins;
    size_t anchor_count;
    soft_anchor *anchors;
    size_t anchored_nodes;        /* distinct nodes among the anchors */
    size_t near_dynamic_count;    /* near-mode anchors on simulated (mode 1) bodies, by body then file order */
    uint32_t *near_dynamic;       /* indices into anchors */
    /* The last good state, what every reader sees: buffers sized once, so a step allocates nothing. */
    float (*x)[3], (*v)[3];
    float (*normals)[3];          /* TriMesh: unit area-weighted node normals of x; rope: zero */
    float (*scratch_x)[3], (*scratch_v)[3]; /* the state Bullet left after a fixed step, before checking */
    float dt;                     /* the fixed step, as world.c last handed it */
    float carry_reach;            /* the rest nodes' farthest distance from their centre (< 0: not yet known) */
    int8_t closed;                /* its faces close it (each edge shared by two): 1; 0 not; -1 not yet known */
    double rest_volume;           /* closed: its signed volume at rest */
    /* Faces against the body (world_soft_collide.c): the rigid bodies that follow bones in this soft body's
     * mask, and per body and face the margin kept. */
    float margin;
    size_t collide_count;
    uint32_t *collide_bodies;
    float *collide_rest;          /* [slot * triangle_count + face]: the face's rest clearance from that body
                                     (the most of the margin it keeps; negative: how deep it lay into it);
                                     -INFINITY: apart by the model's collision groups, left alone */
    float (*collide_poses)[16];   /* per slot: the body's pose this substep */
    float (*collide_side)[3];     /* [slot * triangle_count + face]: the side of the body the face lay on when
                                     last within its reach and not through it, as the body's outward normal at
                                     its deepest sample in the body's frame (zero: not known) */
    size_t collide_edge_count;    /* the faces' distinct edges (the links) and rest lengths */
    uint32_t (*collide_edges)[2];
    float *collide_rest_length;
    int32_t *pin_of;              /* per node: its pin (an index into pins), -1 when free */
    uint32_t *near;               /* slot * triangle_count + face: the pairs within reach this substep */
    float *near_gap;              /* scratch: each pair's deepest sample inside the margin (first pass) */
    size_t near_count, near_capacity;
    bool near_overflow;           /* more than fit: later passes scan every pair */
    uint8_t *touched;             /* per node, scratch for one substep */
    float *push_cap;              /* per node: how far the pushes of one substep may take it (a share of its
                                     shortest edge at rest) */
    float (*pushed)[3];           /* per node, scratch: the substep's pushes on it so far */
    uint32_t *pusher;             /* per node, scratch: the slot + 1 of the body that pushed it this substep,
                                     UINT32_MAX once two have (then its cap holds) */
    uint64_t contacts;            /* faces pushed out, over the run */
    /* Bullet's pose matching done by plush, where Bullet's own would go non-finite (world_soft_shape.c). */
    float pose_k;                 /* its kMT, or 0: Bullet does it, or nobody */
    float (*pose_rest)[3];        /* the rest nodes about their centre, weighted as Bullet's setPose */
    double pose_pin_weight;       /* a pinned node's weight over a free one's */
    double pose_q[4];             /* the last turn fitted */
    /* Following the author's physics (plush_world_soft_follow): per node, how far the author's physics moves
     * the part there from the pose without physics (plush_world_set_goal_offsets), added to its goal; the
     * centre of the frame the goal turns with (pose_q its turn), led by the pins alone; scratch for the goal
     * shape; the body's Bullet config, kept to hand Bullet's matching over to plush's. */
    float (*goal_off)[3];
    float (*goal_base)[3];        /* per node: where the bones carry its place when no physics moves it
                                     (plush_world_set_goal_bases; NaN: not given, the rest shape turned instead) */
    double pose_c[3];
    float (*goal_shape)[3];
    bc_soft_config config;
    struct world_cloth *cloth;    /* stepped as cloth by plush (world_soft_cloth.c), not Bullet; NULL */
    size_t fold_count;            /* the guards of the edges two faces share (world_soft_fold.c) */
    struct soft_fold *folds;
    uint8_t *fold_moved;          /* per node, scratch for one substep */
};

/* An edge two faces share (node[0], node[1]) and the nodes facing it (node[2], node[3]): the faces' opening
 * angle there is kept within least..most radians (world_soft_fold.c). */
typedef struct soft_fold {
    uint32_t node[4];
    float least, most;
} soft_fold;

/* world_soft_build.c and world_soft_bullet.c: one soft body while it is built. */
typedef struct soft_ctx {
    plush_world_model *wm;
    const plush_pmx_soft_body *sb;
    size_t index;
    const char *name;
    world_soft *s;
    plush_diag *diag;
    size_t pieces;                /* TriMesh: edge-connected pieces of its faces with area */
} soft_ctx;

/* "out of memory" for the soft body being built. */
static inline plush_status world_soft_no_memory(soft_ctx *c)
{
    return plush_diag_fail(c->diag, PLUSH_E_NOMEM, -1, "soft body", (int64_t)c->index, "\"%s\": out of memory",
                           c->name);
}

/* world_soft_bullet.c: whether face f of the rest positions has area (computed in double); the nodes' side
 * (world_soft_build.c) skips the faces without, the Bullet side makes the faces with. */
bool plush__world_soft_has_area(const float (*rest)[3], const uint32_t f[3]);

/* world_soft_bullet.c: the soft body's links in the order they are appended to Bullet (a rope's nodes one
 * after another; a TriMesh's every triangle edge once, in face order); *out is malloc'd. */
bool plush__world_soft_links(const world_soft *s, uint32_t (**out)[2], size_t *out_count);

/* world_soft_bullet.c: creates c's Bullet soft body from the built nodes, pins and anchors, with every PMX
 * field (repairs are warnings), and adds it to the world. */
plush_status plush__world_soft_create_bullet(soft_ctx *c);

/* world_soft_collide.c: the faces' links and bodies for c's soft body (after its Bullet body exists: Bullet is
 * told to leave those pairs to plush), and one substep's pushes of the faces out of them, its links held to
 * the strain limit. */
plush_status plush__world_soft_collide_init(soft_ctx *c);
void plush__world_soft_collide(plush_world_model *wm, world_soft *s);
/* world_soft_collide.c: every link of a TriMesh's faces stretched beyond STRAIN_LIMIT brought back to it by its
 * free ends (marked in s->touched), as the end of each substep and a reset do, when the body has bodies to
 * meet (collide_count): one without is left as Bullet steps it. */
void plush__world_soft_limit_strain(world_soft *s);
/* Two nodes (places, speeds, and 1 free or 0 held each, not both 0) brought to at most `most` apart by moving the
 * free ones toward each other, losing the speed that parts them: 0 when they were within it, 1 when held, 2 when
 * they were over it by more than a thousandth (world_soft_collide.c; the links' and the ties' strain limit). */
int plush__world_soft_hold_within(float xa[3], float va[3], double wa, float xb[3], float vb[3], double wb, double most);
/* world_soft_fold.c: the fold guards of a TriMesh's edges (after the body is built), and their hold: up to
 * `rounds` rounds of the guards' passes and the strain limit (PLUSH__SOFT_FOLD_ROUNDS a substep; a reset, whose
 * first pose can fold a face further than a substep does, more), Bullet's nodes set. */
enum { PLUSH__SOFT_FOLD_ROUNDS = 3 };
plush_status plush__world_soft_fold_init(soft_ctx *c);
void plush__world_soft_hold_folds(plush_world_model *wm, world_soft *s, int rounds);
/* The links between two pinned nodes held to the same limit on the pins' targets (both ends moved), as
 * plush_world_set_pins and a reset do, on the same bodies. */
void plush__world_soft_limit_pin_targets(world_soft *s);

/* world_soft_shape.c: Bullet's pose matching with stiffness k (its kMT) done by plush for a body whose nodes,
 * or pins, lie close to a plane or a line: the rest offsets taken (false when out of memory), and before
 * each step each free node's speed given k of the pull toward the rest shape turned and moved as the body
 * is (its pins leading), over dt, which lands it where Bullet's match would have. */
bool plush__world_soft_pose_init(plush_world_model *wm, world_soft *s, float k);
/* After a fixed step: the ties between soft bodies that lay against each other at rest (world_soft_tie.c). */
void plush__world_soft_tie(plush_world_model *wm);
void plush__world_soft_pose_before_step(plush_world_model *wm, world_soft *s, float dt);
/* world_soft_shape.c: s follows the author's physics from now on (plush_world_soft_follow); false when out of
 * memory or it keeps no shape (kMT 0, or no free node). */
bool plush__world_soft_follow_init(plush_world_model *wm, world_soft *s);

/* world_soft_cloth.c: c's soft body made cloth stepped by plush (plush_world_cloth), after its Bullet body,
 * pins, anchors and contact bodies exist; the Bullet body is then taken out of the simulation by the caller. */
plush_status plush__world_soft_cloth_init(soft_ctx *c, const plush_world_cloth *cloth);
/* One fixed step k of n (dt seconds) from s->x, s->v into s->scratch_x, s->scratch_v: the pins on their path
 * to their targets, anchored nodes toward their bodies, contacts with the bodies that follow bones. */
void plush__world_soft_cloth_step(plush_world_model *wm, world_soft *s, int k, int n, float dt);
/* Forgets the solve's last change of speed (its next start), as the world resets the nodes; nothing when s is
 * not stepped as cloth. */
void plush__world_soft_cloth_reset(world_soft *s);
/* Its linear solves so far and those stopped short (0 and 0 when not stepped as cloth). */
void plush__world_soft_cloth_counts(const world_soft *s, uint64_t *solves, uint64_t *unfinished);

/* Area-weighted unit node normals of s->x into s->normals (zero for a rope or a node without area). */
void plush__world_soft_update_normals(world_soft *s);
/* The signed volume the faces enclose at x, by the divergence theorem about origin (any origin, for a closed
 * mesh), in double. */
double plush__world_soft_volume(const world_soft *s, const float (*x)[3], const double origin[3]);
/* Whether the rest mesh encloses a volume (over 1e-4 of its largest extent cubed; world_soft_bullet.c). */
bool plush__world_soft_encloses(const world_soft *s);

#endif
