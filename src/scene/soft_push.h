/* Private to src/scene: keeping the proxy-skinned surface out of the body (soft_push.c). The cage collides
 * with the body's rigid bodies, but the detailed surface blended from its triangles' motions cuts its
 * corners and can lie inside a limb the cage stays out of; each frame the vertices inside are pushed out
 * through the cage triangles' own transforms (their translations), which a bake of one pseudo-bone per
 * triangle replays exactly, and those the triangles cannot bring out from behind the visible skin are then
 * moved out on their own in smooth bumps (the touch-up; not with triangles_only); no push stretches,
 * squeezes or bends the surface beyond its limits. */
#ifndef PLUSH_SCENE_SOFT_PUSH_H
#define PLUSH_SCENE_SOFT_PUSH_H

#include "plush/proxy.h"
#include "scene/soft_measure.h"

typedef struct plush__soft_push {
    plush__soft_measure *sm;            /* the bodies, and which bound vertex meets which */
    const plush_proxy_binding *binding; /* rows = the measure's bound vertices */
    size_t triangle_count;
    double margin;                      /* how far outside a body a pushed vertex ends */
    size_t *edge_first;                 /* count + 1: row r's edges are edge_other[edge_first[r] ..] */
    uint32_t *edge_other;
    float *edge_rest;
    float (*move)[3];                   /* per row: how far this round's offsets move it (then, once moved,
                                           where it was) */
    double *push;                       /* per row: how far it is pushed out when last looked at (0: not), */
    float (*push_dir)[3];               /* and along what */
    uint32_t *rows;                     /* the rows this round's offsets move */
    uint32_t *dirty;                    /* of those, the ones a triangle the guard held moves */
    uint64_t *near;                     /* per row: the bodies it may meet while it moves less than slack */
    float *travel;                      /* per row: how far the frame's rounds have moved it */
    float (*total)[3];                  /* per row: and by what (the sum of their moves) */
    int pass;                           /* the rounds' pass: soft_push.c's PASS_BODY, PASS_SKIN or PASS_STRAIN */
    float *skin_clear;                  /* per row: the travel at which it may reach the skin's margin (the
                                           skin holds still within a frame) */
    /* per row: the side of the body it lay in the margin of or shallow in, in the body's frame (the body's
     * outward normal there), the body (an index into the measure's bodies; -1: none) and the frame it was seen
     * so (frame: this frame's count) */
    float (*side)[3];
    int32_t *side_body;
    uint32_t *side_frame;
    uint32_t frame;
    float *body_clear;                  /* per row: the travel at which it may reach a body's margin (the
                                           bodies hold still within a frame; 0 at its start) */
    double slack;
    double frame_slope;                 /* frame_slope() of soft_push.c: the guard's limit on the body's pass's
                                           rounds of a frame together */
    double (*sum)[4];                   /* per triangle: the weighted pushes of its rows, and their weight */
    float (*step)[3];                   /* per triangle: this round's offset */
    float (*offset)[3];                 /* per triangle: this frame's offset, all rounds */
    float (*kept)[3];                   /* per triangle: the offset before this round (to undo it) */
    /* the warm start (soft_push.c's warm_start): */
    float (*last)[3];                   /* per triangle: the frame before's offset, all passes */
    bool last_ok;                       /* last holds a frame's */
    double fall;                        /* g dt^2: how much further a surface falling under the world's gravity
                                           goes each frame than the frame before (0: no warm start) */
    double advance;                     /* the frames since the frame before (1 stepping whole frames; the
                                           scene sets it) */
    float (*start)[3];                  /* per triangle: this frame's offset after the warm start */
    float *since;                       /* per triangle: the frames since the frame after a push last moved it */
    bool warming;                       /* the guard holds the warm start to the strain's limits alone (it is
                                           scaled within the slope as a whole) */
    float *scale;                       /* per triangle: the share of its step the guard lets through */
    uint8_t *moved, *held;              /* per triangle: its step is not zero; the halvings an edge it moves
                                           beyond a limit needs (0: none) */
    uint8_t *stopped;                   /* per triangle: a round of this pass that moved it was undone for a row
                                           it carried into a body (or behind the skin): it moves no more */
    uint8_t *was_in;                    /* per row, scratch: sp->in before this round moved it, */
    double *push_was;                   /* its push */
    float (*dir_was)[3];                /* and the push's direction (to undo the round's look with) */
    float (*step_was)[3];               /* per triangle, scratch: this round's step, */
    float *scale_was;                   /* the share of it the guard let through */
    uint8_t *moved_was;                 /* and whether it had one */
    uint8_t *in;                        /* per row: in a body (or within the margin) when last looked at; in the
                                           strain's pass 1 for an edge beyond the bar, 2 in a body or behind the
                                           skin */
    uint8_t *carry_count;               /* per row: the triangles that carry it (a slot with a triangle and a weight) */
    int32_t (*carry_triangle)[PLUSH_PROXY_INFLUENCES]; /* per row: those triangles first, */
    float (*carry_weight)[PLUSH_PROXY_INFLUENCES];     /* and how much each carries it */
    uint8_t *listed;                    /* per row, scratch: in the list the guard is looking at */
    size_t *carried_first;              /* triangle_count + 1: triangle t carries rows carried[carried_first[t] ..] */
    uint32_t *carried;
    uint8_t *mark;                      /* per row, scratch: 1 in this round's rows, 2 once listed as dirty */
    uint32_t *twin_of;                  /* per row: the row it always moves with (itself: it is looked at and
                                           moved; another: it takes that row's moves at the frame's end) */
    uint32_t *twin_next;                /* per row: the next of its row's twins (UINT32_MAX: no more) */
    uint8_t *alike;                     /* per twin, this frame: skinned where its row was (a morph may not) */
    size_t twin_count;                  /* rows that take another's moves */
    uint32_t *weight;                   /* per row: the rows it stands for (itself and its twins; 0 for a twin),
                                           as many votes in the push's means and counts as before twins */
    bool triangles_only;                /* no row moved on its own (the touch-up off): the cage triangles'
                                           transforms alone carry the push, as exact pseudo-bones replay it */
    float *bump;                        /* per row: how far the touch-up moves it out from behind the skin (the
                                           largest bump over it), */
    float (*bump_dir)[3];               /* and along what (the bumps' directions summed, weighted by them), */
    float *bump_sum;                    /* and those weights' sum */
    float (*bumped_by)[3];              /* per row: the frame's touch-up passes' moves so far */
    uint8_t *bump_state;                /* per row: listed in bumped (1 + the guard's halvings of its move) */
    uint8_t *rim;                       /* per row: on an edge to a vertex no row is (left on its bones) */
    uint8_t *bump_flag;                 /* per row, scratch: in the ring of one bump's spread */
    uint32_t *queue;                    /* the touch-up's rows to spread from, then a ring of one slot a row */
    uint32_t *bumped;                   /* the rows it moves */
    uint32_t *seen;                     /* scratch: the rows within one bump's reach, */
    float *seed_dist;                   /* and each one's distance from its seed along the edges (-1: none) */
} plush__soft_push;

/* Sets up the push for the scene's bound vertices (their faces among the model's give the edges the guard
 * keeps); mean_edge is the cage's. Nothing is pushed when the measure has no body and no skin. */
plush_status plush__soft_push_init(plush__soft_push *sp, plush__soft_measure *sm, const plush_proxy_binding *binding,
                                   size_t triangle_count, double mean_edge, plush_arena *arena, plush_diag *diag);
/* Pushes this frame's bound vertices (positions: the model's vertices, the bound ones proxy-skinned by skin;
 * normals: theirs, the skin's among them) out of the body, moving them and skin's transforms alike. Allocates
 * nothing. */
void plush__soft_push_frame(plush__soft_push *sp, plush_proxy_skin *skin, float (*positions)[3],
                            const float (*normals)[3]);

#endif
