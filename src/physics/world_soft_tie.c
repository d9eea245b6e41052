/* Soft bodies that lie against each other at rest, tied: a bob of 23 locks, each its own cage piece on three pins
 * at its root, had nothing between the locks. At a whip of the head (03's bob on test.vmd: 2.1 units aside in four
 * frames, 3.9 back in five) each lock swung on its own, through its neighbours and over the head, and the surface
 * bound across two locks tore. A bob's locks lie side by side and move as one mass; a skirt's circumference keeps
 * it from flaring past what its cloth allows, and so does the ring of locks once each holds its neighbours.
 *
 * A tie joins a free node of one body to the nearest node of another that lay within the smaller of the two
 * bodies' mean edges of it at rest. After each fixed step (the bodies' own contacts done), a tie longer than
 * STRAIN_TIE times its rest length (plus a share of the reach, for nodes that lay nearly on each other) is brought
 * back to that by moving its free ends toward each other, and the ends lose the speed that parted them: the limit
 * the cage's own links are held to (world_soft_collide.c). Within it a tie pulls nothing: locks slide along
 * each other, a layer lifts from the one under it by half again their gap. A tie gives way to the bodies' own
 * links and fold guards: where one stretched them past their limit, or folded two faces past their guard (03's bob,
 * at the long dance's frame 478: a lock's faces back to back), they are held to it again after the ties. */
#include "core/geom.h"
#include "physics/world_soft_internal.h"
#include "plush/sys/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define STRAIN_TIE 1.5
/* the slack of a tie whose ends lay (nearly) on each other at rest, in its reach */
#define TIE_SLACK 0.25
/* rounds of the limit a fixed step, at most */
enum { TIE_ROUNDS = 8 };

struct world_soft_tie {
    uint32_t body[2], node[2];
    float most;                   /* the longest it may be */
};

static double mean_edge(const world_soft *s)
{
    double sum = 0;
    size_t n = 0;
    for (size_t t = 0; t < s->triangle_count; t++)
        for (int k = 0; k < 3; k++) {
            const float *a = s->rest[s->triangles[t][k]], *b = s->rest[s->triangles[t][(k + 1) % 3]];
            double d = 0;
            for (int j = 0; j < 3; j++)
                d += ((double)a[j] - b[j]) * ((double)a[j] - b[j]);
            sum += sqrt(d), n++;
        }
    return n ? sum / (double)n : 0;
}

static bool tieable(const world_soft *s)
{
    return s && s->state == PLUSH_SOFT_ACTIVE && !s->rope && !s->cloth && s->triangle_count > 0 && s->node_count > 0;
}

/* The ties of every pair of bodies; false when out of memory (no ties then). */
static bool make_ties(plush_world_model *wm)
{
    size_t bodies = wm->model->soft_body_count, count = 0, room = 0;
    struct world_soft_tie *ties = NULL;
    double *edge = calloc(bodies ? bodies : 1, sizeof *edge);
    if (!edge)
        return false;
    for (size_t b = 0; b < bodies; b++)
        edge[b] = tieable(&wm->soft[b]) ? mean_edge(&wm->soft[b]) : 0;
    bool ok = true;
    for (size_t b = 0; ok && b < bodies; b++) {
        if (!(edge[b] > 0))
            continue;
        const world_soft *sb = &wm->soft[b];
        plush__point_grid grid;
        if (!plush__point_grid_init(&grid, &sb->rest[0][0], sb->node_count, sizeof sb->rest[0])) {
            ok = false;
            break;
        }
        for (size_t a = 0; ok && a < bodies; a++) {
            if (a == b || !(edge[a] > 0))
                continue;
            const world_soft *sa = &wm->soft[a];
            double reach = edge[a] < edge[b] ? edge[a] : edge[b];
            for (size_t i = 0; ok && i < sa->node_count; i++) {
                if (sa->pinned[i])
                    continue;
                size_t j = plush__point_grid_nearest(&grid, sa->rest[i]);
                if (j == SIZE_MAX)
                    continue;
                double d = 0;
                for (int k = 0; k < 3; k++)
                    d += ((double)sa->rest[i][k] - sb->rest[j][k]) * ((double)sa->rest[i][k] - sb->rest[j][k]);
                d = sqrt(d);
                if (!(d <= reach))
                    continue;
                if (count == room) {
                    size_t more = room ? 2 * room : 64;
                    struct world_soft_tie *grown = realloc(ties, more * sizeof *ties);
                    if (!grown) {
                        ok = false;
                        break;
                    }
                    ties = grown, room = more;
                }
                ties[count++] = (struct world_soft_tie){.body = {(uint32_t)a, (uint32_t)b},
                                                        .node = {(uint32_t)i, (uint32_t)j},
                                                        .most = (float)(STRAIN_TIE * d + TIE_SLACK * reach)};
            }
        }
        plush__point_grid_free(&grid);
    }
    free(edge);
    if (ok && count) {
        wm->ties = plush_arena_array(&wm->arena, count, sizeof *wm->ties);
        wm->tie_moved = wm->ties ? plush_arena_array(&wm->arena, bodies, sizeof *wm->tie_moved) : NULL;
        ok = wm->tie_moved != NULL;
        if (ok)
            memcpy(wm->ties, ties, count * sizeof *ties);
    }
    wm->tie_count = ok ? count : 0;
    free(ties);
    return ok;
}

void plush__world_soft_tie(plush_world_model *wm)
{
    if (!wm->soft || wm->model->soft_body_count < 2)
        return;
    if (!wm->ties_made) {
        wm->ties_made = true;
        if (!make_ties(wm))
            return; /* out of memory: the bodies go untied */
    }
    if (!wm->tie_count)
        return;
    memset(wm->tie_moved, 0, wm->model->soft_body_count * sizeof *wm->tie_moved);
    for (int round = 0; round < TIE_ROUNDS; round++) {
        bool any = false;
        for (size_t t = 0; t < wm->tie_count; t++) {
            const struct world_soft_tie *tie = &wm->ties[t];
            world_soft *sa = &wm->soft[tie->body[0]], *sb = &wm->soft[tie->body[1]];
            if (sa->state != PLUSH_SOFT_ACTIVE || sb->state != PLUSH_SOFT_ACTIVE)
                continue;
            uint32_t i = tie->node[0], j = tie->node[1];
            double wa = !sa->pinned[i], wb = !sb->pinned[j];
            if (wa + wb == 0)
                continue;
            int held = plush__world_soft_hold_within(sa->x[i], sa->v[i], wa, sb->x[j], sb->v[j], wb, tie->most);
            if (!held)
                continue;
            any |= held > 1;
            wm->tie_moved[tie->body[0]] |= wa > 0, wm->tie_moved[tie->body[1]] |= wb > 0;
        }
        if (!any)
            break;
    }
    /* a tie must not stretch a body's own links past their limit, nor fold its faces past their guards: those
     * are held again, after (a body no tie moved is left as it was) */
    const plush_bulletc_api *bc = wm->world->bc;
    for (size_t b = 0; b < wm->model->soft_body_count; b++) {
        world_soft *s = &wm->soft[b];
        if (!wm->tie_moved[b])
            continue;
        plush__world_soft_limit_strain(s);
        plush__world_soft_hold_folds(wm, s, PLUSH__SOFT_FOLD_ROUNDS);
        bc->soft_set_all_nodes(s->bc, (const float(*)[3])s->x, (const float(*)[3])s->v);
    }
}
