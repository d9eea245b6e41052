/* Soft parts that follow the author's physics (plush run --follow-author).
 *
 * A model's author gives hair, skirts and ribbons physics of their own: chains of rigid bodies that swing each
 * lock or panel. plush's cage of such a part keeps its own rest shape (shape memory turned with its pins) and
 * bending links three edges long, so it hangs like one stiff shell where the author's chains swing and spread
 * (Luka's hair swings 0.15-0.22 of what the author's does on the long dance, sample_finish's hair and skirt a
 * fifth). Asked to, a soft body whose part the author's physics moves keeps the shape the author's rig gives
 * it instead: each free node's goal is its rest shape turned as its pins turn plus how far the author's physics
 * moves the detailed vertex nearest the node at rest (that vertex bone-skinned after physics, less the same
 * vertex skinned with the bones before physics), and its links' rest lengths follow the goal within a few
 * percent (PLUSH_WORLD_FOLLOW_STRETCH; world_soft_shape.c). A node whose nearest vertex the author carried with
 * bones alone (no physics bone: a dress's front weighted to the legs, between rows on the skirt's chains) takes
 * where those bones carry its rest place this frame instead of the turned rest shape (its base,
 * plush__follow_base): one turn of the whole piece cannot follow two legs. Its pins move the same way (a pin near a chain's
 * first link goes where the author's physics takes that link; one on the head, where the head goes), and the
 * soft body adds what plush is for: it lags, squashes and settles, collides with the body and keeps the
 * surface smooth -- where the author's own part tears (its chains flung apart on a fast spin), only as far as
 * a whole surface can (plush__follow_whole). The offsets are the frame before's (the author's physics and
 * plush's step together). A part no simulated rigid body moves keeps its own shape. */
#include "scene/follow.h"
#include "core/geom.h"
#include "plush/quality.h"
#include "physics/rigid_shape.h"
#include "plush/sys/anim.h"
#include "plush/sys/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool moved_by(const plush_pmx_vertex *v, const bool *driven, size_t nb)
{
    for (int k = 0; k < 4; k++)
        if (v->bones[k] >= 0 && (size_t)v->bones[k] < nb && v->weights[k] > 0 && driven[v->bones[k]])
            return true;
    return false;
}

plush_status plush__follow_init(plush__follow *f, const plush_pmx_model *m, const plush_scene_binding *binding,
                                plush_world_model *wm, plush_arena *arena, plush_diag *diag)
{
    memset(f, 0, sizeof *f);
    if (!wm || !binding || !binding->vertex_count || !m->soft_body_count || !m->rigid_body_count)
        return PLUSH_OK;
    size_t nv = m->vertex_count;
    bool *driven = calloc(m->bone_count ? m->bone_count : 1, sizeof *driven); /* physics moves the bone */
    int32_t *body_of = malloc((nv ? nv : 1) * sizeof *body_of); /* per vertex: the soft body whose material draws it */
    uint32_t *src = malloc((nv ? nv : 1) * sizeof *src);
    bool *follows = calloc(m->soft_body_count, 1);
    if (!driven || !body_of || !src || !follows) {
        free(driven), free(body_of), free(src), free(follows);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    plush__rigid_moved_bones(m, driven);
    for (size_t v = 0; v < nv; v++)
        body_of[v] = -1;
    size_t first = 0, listed = 0;
    for (size_t mi = 0; mi < m->material_count; mi++) {
        size_t count = m->materials[mi].index_count > 0 ? (size_t)m->materials[mi].index_count : 0;
        int32_t body = -1;
        for (size_t s = 0; s < m->soft_body_count && body < 0; s++)
            if (m->soft_bodies[s].material == (int32_t)mi && m->soft_bodies[s].shape == PLUSH_PMX_SOFT_TRIMESH)
                body = (int32_t)s;
        for (size_t k = first; body >= 0 && k < first + count && k < m->index_count; k++)
            if (m->indices[k] < nv && body_of[m->indices[k]] < 0)
                body_of[m->indices[k]] = body, listed++;
        first += count;
    }
    /* each listed vertex's nearest bound vertex at rest, through a grid (a scan costs listed x bound distances:
     * 3.6 billion for a soft body of 60,000 vertices bound whole), and whether the author's physics moves it */
    float (*bound)[3] = malloc(binding->vertex_count * sizeof *bound);
    plush__point_grid grid = {0};
    for (size_t r = 0; bound && r < binding->vertex_count; r++)
        memcpy(bound[r], m->vertices[binding->vertices[r]].position, sizeof bound[r]);
    if (!bound || !plush__point_grid_init(&grid, &bound[0][0], binding->vertex_count, sizeof *bound)) {
        plush__point_grid_free(&grid);
        free(bound), free(driven), free(body_of), free(src), free(follows);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    for (size_t v = 0; v < nv; v++) {
        if (body_of[v] < 0)
            continue;
        size_t r = plush__point_grid_nearest(&grid, m->vertices[v].position);
        uint32_t at = binding->vertices[r < binding->vertex_count ? r : 0];
        src[v] = at;
        if (moved_by(&m->vertices[at], driven, m->bone_count))
            follows[body_of[v]] = true;
    }
    plush__point_grid_free(&grid);
    free(bound);
    for (size_t s = 0; s < m->soft_body_count; s++)
        if (follows[s]) {
            follows[s] = plush_world_soft_follow(wm, s);
            f->bodies += follows[s];
        }
    if (f->bodies) {
        f->vertex = plush_arena_array(arena, listed ? listed : 1, sizeof *f->vertex);
        f->source = plush_arena_array(arena, listed ? listed : 1, sizeof *f->source);
        f->offset = plush_arena_array(arena, nv ? nv : 1, sizeof *f->offset);
        f->follows = plush_arena_array(arena, nv ? nv : 1, sizeof *f->follows);
        f->base = plush_arena_array(arena, nv ? nv : 1, sizeof *f->base);
        f->shift = plush_arena_array(arena, nv ? nv : 1, sizeof *f->shift);
        f->carried = plush_arena_array(arena, listed ? listed : 1, sizeof *f->carried);
        if (!f->vertex || !f->source || !f->offset || !f->follows || !f->base || !f->shift || !f->carried) {
            free(driven), free(body_of), free(src), free(follows);
            return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        }
        memset(f->follows, 0, nv ? nv : 1);
        for (size_t v = 0; v < nv; v++) {
            f->base[v][0] = f->base[v][1] = f->base[v][2] = NAN; /* none but the carried entries', set each frame */
            if (body_of[v] >= 0 && follows[body_of[v]]) {
                f->carried[f->count] = !moved_by(&m->vertices[src[v]], driven, m->bone_count);
                f->carried_count += f->carried[f->count];
                f->vertex[f->count] = (uint32_t)v, f->source[f->count++] = src[v], f->follows[v] = 1;
            }
        }
    }
    free(driven), free(body_of), free(src), free(follows);
    return PLUSH_OK;
}

/* A following part takes the author's chains' motion; where they fling its surface apart (sample_finish's skirt
 * on a 720 degree/s spin: p99.9 2.46; Luka's hair 6.12, an edge 30 times its length), the goal pulled the cage
 * apart with them and plush's surface missed the bar at every frame the author's tore (54 of the skirt's 65
 * torn frames, Luka's hair's 53 of 112) and at none other. A stretch grows with the offsets that make it (an
 * edge's length goes by the difference of its ends' offsets), so offsets scaled by (bar - 1) / (p - 1) stretch
 * that surface to the bar and no further: the part follows the author's motion as far as a whole surface can,
 * all of it alike, so the goal keeps its shape. The figure is the larger of the offsets' own frame's (the
 * author's surface is measured as its skinning is taken in, before the next step takes the offsets: a tear
 * that opens within a frame is scaled at once) and the frame before's (the goal goes from that frame's offsets
 * to these within the step, and an author's surface that flickers across the bar, Luka's hair's p99.9 1.54,
 * 1.46, 1.63 at frames 108-110 of the spin, is not let go whole at one frame between torn ones). */
void plush__follow_whole(plush__follow *f, double author_p999)
{
    double p = author_p999 > f->last_p999 ? author_p999 : f->last_p999;
    f->last_p999 = author_p999;
    if (!f->ready || !(p > PLUSH_QUALITY_BAR_STRAIN_P999))
        return;
    float k = (float)((PLUSH_QUALITY_BAR_STRAIN_P999 - 1.0) / (p - 1.0));
    for (size_t i = 0; i < f->count; i++)
        for (int d = 0; d < 3; d++)
            f->offset[f->vertex[i]][d] *= k;
}

void plush__follow_frame(plush__follow *f, const plush_pmx_model *m, const plush_anim *anim,
                         const float (*kinematic)[16])
{
    if (!f->count || !kinematic)
        return;
    const float(*morphs)[3] = plush_anim_vertex_offsets(anim);
    for (size_t i = 0; i < f->count; i++) {
        uint32_t v = f->vertex[i], u = f->source[i];
        float now[3];
        plush_anim_skin(anim, u, 1, f->offset, NULL); /* into u's entry, scratch */
        memcpy(now, f->offset[u], sizeof now);
        plush_anim_skin_vertices(m, kinematic, morphs, u, 1, f->offset, NULL);
        for (int d = 0; d < 3; d++)
            f->offset[v][d] = now[d] - f->offset[u][d];
    }
    f->ready = true;
}

void plush__follow_base(plush__follow *f, const plush_pmx_model *m, const plush_anim *anim,
                        const float (*kinematic)[16])
{
    if (!f->carried_count || !kinematic)
        return;
    const float(*morphs)[3] = plush_anim_vertex_offsets(anim);
    for (size_t i = 0; i < f->count; i++) {
        uint32_t v = f->vertex[i], u = f->source[i];
        if (!f->carried[i])
            continue;
        for (int d = 0; d < 3; d++)
            f->shift[u][d] = (morphs ? morphs[u][d] : 0.0f) + m->vertices[v].position[d] - m->vertices[u].position[d];
        plush_anim_skin_vertices(m, kinematic, (const float(*)[3])f->shift, u, 1, f->base, NULL); /* into u's entry */
        memcpy(f->base[v], f->base[u], sizeof f->base[v]);
    }
    f->based = true;
}
