/* A rigid body's shape as plain geometry (rigid_shape.h). */
#include "physics/rigid_shape.h"

#include "plush/physics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void unit_or(double v[3], double len, int axis, double sign)
{
    if (len > 1e-12) {
        for (int k = 0; k < 3; k++)
            v[k] /= len;
        return;
    }
    v[0] = v[1] = v[2] = 0; /* at the centre (or on the axis): any direction is as good; this one is fixed */
    v[axis] = sign;
}

double plush__rigid_shape_distance(const plush_pmx_rigid_body *rb, const double p[3], double normal[3])
{
    double n[3] = {0, 0, 0}, d;
    switch (rb->shape) {
    case PLUSH_PMX_RIGID_SPHERE: {
        double len = sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
        d = len - rb->size[0];
        n[0] = p[0], n[1] = p[1], n[2] = p[2];
        unit_or(n, len, 1, 1);
        break;
    }
    case PLUSH_PMX_RIGID_BOX: {
        double out = 0, in = -INFINITY;
        int axis = 0;
        for (int k = 0; k < 3; k++) {
            double e = fabs(p[k]) - rb->size[k];
            if (e > 0) {
                out += e * e;
                n[k] = p[k] < 0 ? -e : e;
            }
            if (e > in)
                in = e, axis = k;
        }
        if (out > 0) {
            d = sqrt(out);
            unit_or(n, d, 1, 1);
        } else {
            d = in; /* inside: out through the nearest face */
            n[0] = n[1] = n[2] = 0;
            n[axis] = p[axis] < 0 ? -1 : 1;
        }
        break;
    }
    case PLUSH_PMX_RIGID_CAPSULE: {
        /* radius size[0], the cylinder's height size[1] along the local Y axis (as MMD and Bullet) */
        double h = rb->size[1] * 0.5, y = p[1] < -h ? -h : p[1] > h ? h : p[1];
        n[0] = p[0], n[1] = p[1] - y, n[2] = p[2];
        double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        d = len - rb->size[0];
        unit_or(n, len, 0, 1);
        break;
    }
    default:
        d = INFINITY;
        break;
    }
    if (normal)
        normal[0] = n[0], normal[1] = n[1], normal[2] = n[2];
    return d;
}

double plush__rigid_shape_reach(const plush_pmx_rigid_body *rb)
{
    switch (rb->shape) {
    case PLUSH_PMX_RIGID_SPHERE:
        return rb->size[0];
    case PLUSH_PMX_RIGID_BOX:
        return sqrt((double)rb->size[0] * rb->size[0] + (double)rb->size[1] * rb->size[1] +
                    (double)rb->size[2] * rb->size[2]);
    default:
        return rb->size[0] + 0.5 * fabs((double)rb->size[1]);
    }
}

void plush__rigid_local(const float m[16], const float p[3], double out[3])
{
    double d[3] = {(double)p[0] - m[12], (double)p[1] - m[13], (double)p[2] - m[14]};
    for (int i = 0; i < 3; i++)
        out[i] = m[4 * i] * d[0] + m[4 * i + 1] * d[1] + m[4 * i + 2] * d[2];
}

bool plush__rigid_inside(const plush_pmx_rigid_body *rb, const float pose[16], const float p[3])
{
    /* first against the shape's bounding sphere: most points asked are far from most bodies */
    double r = plush__rigid_shape_reach(rb), d2 = 0;
    for (int k = 0; k < 3; k++)
        d2 += ((double)p[k] - pose[12 + k]) * ((double)p[k] - pose[12 + k]);
    if (d2 > r * r * (1 + 1e-6) + 1e-12)
        return false;
    double local[3];
    plush__rigid_local(pose, p, local);
    return plush__rigid_shape_distance(rb, local, NULL) <= 0;
}

void plush__rigid_dynamic_per_bone(const plush_pmx_model *m, int32_t *map)
{
    for (size_t b = 0; b < m->bone_count; b++)
        map[b] = -1;
    for (size_t r = 0; r < m->rigid_body_count; r++) {
        int32_t bone = m->rigid_bodies[r].bone;
        if (m->rigid_bodies[r].mode != PLUSH_PMX_RIGID_FOLLOW_BONE && bone >= 0 && (size_t)bone < m->bone_count &&
            map[bone] < 0)
            map[bone] = (int32_t)r;
    }
}

void plush__rigid_moved_bones(const plush_pmx_model *m, bool *moved)
{
    size_t n = m->bone_count;
    for (size_t b = 0; b < n; b++)
        moved[b] = false;
    for (size_t r = 0; r < m->rigid_body_count; r++) {
        int32_t bone = m->rigid_bodies[r].bone;
        if (m->rigid_bodies[r].mode != PLUSH_PMX_RIGID_FOLLOW_BONE && bone >= 0 && (size_t)bone < n)
            moved[bone] = true;
    }
    /* a bone is moved when an ancestor is: marking as it goes only marks what is below a moved bone (the
     * walk stops after n steps: a parent cycle) */
    for (size_t b = 0; b < n; b++) {
        int64_t x = m->bones[b].parent;
        for (size_t steps = 0; !moved[b] && x >= 0 && (size_t)x < n && steps < n; steps++, x = m->bones[x].parent)
            moved[b] = moved[x];
    }
}

static bool pair_collides(const plush_pmx_rigid_body *a, const plush_pmx_rigid_body *b)
{
    return (a->mask >> (b->group & 15) & 1u) && (b->mask >> (a->group & 15) & 1u);
}

bool plush__rigid_vertex_meets(const plush_pmx_model *m, const int32_t *dynamic, uint32_t v, uint32_t body)
{
    const plush_pmx_vertex *x = &m->vertices[v];
    bool carried = false;
    for (int i = 0; i < 4; i++) {
        int32_t bone = x->bones[i];
        if (bone < 0 || (size_t)bone >= m->bone_count || !(x->weights[i] > 0) || dynamic[bone] < 0)
            continue;
        carried = true;
        if (pair_collides(&m->rigid_bodies[dynamic[bone]], &m->rigid_bodies[body]))
            return true;
    }
    return !carried;
}

bool plush__rigid_skin_vertices(const plush_pmx_model *m, bool *skin)
{
    size_t nv = m->vertex_count, nb = m->bone_count;
    bool *moved = calloc(nb ? nb : 1, sizeof *moved);
    if (!moved)
        return false;
    memset(skin, 0, nv * sizeof *skin);
    plush__rigid_moved_bones(m, moved);
    size_t first = 0;
    for (size_t mat = 0; mat < m->material_count; mat++) {
        size_t n = m->materials[mat].index_count > 0 ? (size_t)m->materials[mat].index_count : 0;
        bool drawn = m->materials[mat].diffuse[3] > 0;
        for (size_t s = 0; drawn && s < m->soft_body_count; s++)
            drawn = m->soft_bodies[s].material != (int32_t)mat;
        for (size_t f = first; drawn && m->indices && f < first + n && f < m->index_count; f++)
            if (m->indices[f] < nv)
                skin[m->indices[f]] = true;
        first += n;
    }
    for (size_t v = 0; v < nv; v++)
        for (int j = 0; j < 4 && skin[v]; j++) {
            int32_t b = m->vertices[v].bones[j];
            skin[v] = !(b >= 0 && (size_t)b < nb && m->vertices[v].weights[j] > 0 && moved[b]);
        }
    free(moved);
    return true;
}

double plush__rigid_shape_thickness(const plush_pmx_rigid_body *rb)
{
    if (rb->shape == PLUSH_PMX_RIGID_BOX)
        return fmin(rb->size[0], fmin(rb->size[1], rb->size[2]));
    return rb->size[0];
}

double plush__rigid_moved_share(const plush_pmx_model *m, const uint32_t *vertices, size_t count)
{
    size_t n = m->bone_count, moved = 0;
    bool *below = calloc(n ? n : 1, sizeof *below);
    if (!below || !count) {
        free(below);
        return 0;
    }
    plush__rigid_moved_bones(m, below);
    for (size_t i = 0; i < count; i++) {
        const plush_pmx_vertex *v = &m->vertices[vertices[i]];
        bool hit = false;
        for (int j = 0; j < 4 && !hit; j++)
            hit = v->bones[j] >= 0 && (size_t)v->bones[j] < n && v->weights[j] > 0 && below[v->bones[j]];
        moved += hit;
    }
    free(below);
    return (double)moved / (double)count;
}

/* The least distance from the segment from + s d (s in [0, 1]) to the point c. */
static double segment_point_distance(const double from[3], const double d[3], const double c[3])
{
    double dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2], s = 0;
    if (dd > 0)
        s = ((c[0] - from[0]) * d[0] + (c[1] - from[1]) * d[1] + (c[2] - from[2]) * d[2]) / dd;
    s = s < 0 ? 0 : s > 1 ? 1 : s;
    double e = 0;
    for (int k = 0; k < 3; k++)
        e += (from[k] + s * d[k] - c[k]) * (from[k] + s * d[k] - c[k]);
    return sqrt(e);
}

bool plush__rigid_passed_through(const plush_pmx_rigid_body *rb, const double from[3], const double to[3])
{
    if (rb->shape != PLUSH_PMX_RIGID_SPHERE && rb->shape != PLUSH_PMX_RIGID_CAPSULE)
        return false;
    double r = plush__rigid_shape_thickness(rb), core = 0.5 * r, h = 0, d[3], a[3], b[3];
    if (!(core > 0))
        return false;
    if (rb->shape == PLUSH_PMX_RIGID_CAPSULE)
        h = 0.5 * fabs((double)rb->size[1]);
    for (int k = 0; k < 3; k++)
        d[k] = to[k] - from[k];
    /* both ends outside the core (a point that stays deep inside is not going through: the body's count has it),
     * and on the other side: their directions from the axis turn more than a right angle */
    if (!(plush__rigid_shape_distance(rb, from, a) >= core - r) ||
        !(plush__rigid_shape_distance(rb, to, b) >= core - r) || !(a[0] * b[0] + a[1] * b[1] + a[2] * b[2] < 0))
        return false;
    /* the path's least distance from the axis: from its two ends (a sphere's one), or where the path runs
     * alongside the axis (its height within the segment's) across it, a quadratic in s over that span */
    const double top[3] = {0, h, 0}, bottom[3] = {0, -h, 0};
    double least = fmin(segment_point_distance(from, d, top), segment_point_distance(from, d, bottom));
    double lo = 0, hi = 1;
    if (d[1] != 0) {
        double s0 = (-h - from[1]) / d[1], s1 = (h - from[1]) / d[1];
        lo = fmax(lo, fmin(s0, s1));
        hi = fmin(hi, fmax(s0, s1));
    } else if (fabs(from[1]) > h) {
        hi = -1; /* beside the axis nowhere */
    }
    double across = d[0] * d[0] + d[2] * d[2];
    if (lo <= hi) {
        double s = across > 0 ? -(from[0] * d[0] + from[2] * d[2]) / across : lo;
        s = s < lo ? lo : s > hi ? hi : s;
        double x = from[0] + s * d[0], z = from[2] + s * d[2];
        least = fmin(least, sqrt(x * x + z * z));
    }
    return least < core;
}

double plush__rigid_way_out(const plush_pmx_rigid_body *rb, const double p[3], const float dir[3], double margin)
{
    double thickness = plush__rigid_shape_thickness(rb), travel = 0, most = 2 * thickness + fabs(margin);
    if (dir[0] == 0 && dir[1] == 0 && dir[2] == 0)
        return 0;
    for (int it = 0; it < 16; it++) {
        double q[3];
        for (int k = 0; k < 3; k++)
            q[k] = p[k] + travel * dir[k];
        /* the distance grows at most as fast as the point moves: each step falls short or lands */
        double step = margin - plush__rigid_shape_distance(rb, q, NULL);
        if (!(step > 1e-4 * thickness))
            return travel;
        travel += step;
        if (!(travel <= most))
            return 0;
    }
    return 0;
}
