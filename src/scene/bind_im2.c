/* Influence Map File 2 overrides on a binding: each line pins a vertex to one triangle, gives it back its
 * computed blend, or hands it back to bone skinning. The work happens on a copy of the rows that
 * replaces the binding's only when every line has passed, so a bad file changes nothing. */
#include "scene/internal.h"
#include "plush/sys/core.h"
#include "plush/sys/proxy.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct apply_rows {
    int32_t (*triangles)[PLUSH_PROXY_INFLUENCES];
    float (*weights)[PLUSH_PROXY_INFLUENCES];
    float (*distances)[PLUSH_PROXY_INFLUENCES];
    uint8_t (*percent)[PLUSH_PROXY_INFLUENCES];
    float *share;
} apply_rows;

typedef struct apply_state {
    plush_scene_binding *b;
    apply_rows rows;
    scene_material_vertices *materials;
    bool *taken;                  /* per material: a part already names it */
    int64_t bones;                /* model bones + proxy triangles: the numbers a line may use */
    plush_diag *diag;
} apply_state;

/* Where a problem is: the file's line when the map was read, the part when it was built in code. */
#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static plush_status fail_at(apply_state *s, uint32_t line, int64_t offset, size_t part, const char *fmt, ...)
{
    char what[PLUSH_DIAG_MESSAGE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (line > 0)
        return plush_diag_fail(s->diag, PLUSH_E_RANGE, offset, "line", line, "%s", what);
    return plush_diag_fail(s->diag, PLUSH_E_RANGE, -1, "part", (int64_t)part, "%s", what);
}

static bool copy_rows(apply_rows *dst, const plush_proxy_binding *src, plush_arena *arena)
{
    size_t n = src->vertex_count ? src->vertex_count : 1, rows = src->vertex_count;
    dst->triangles = plush_arena_array(arena, n, sizeof *dst->triangles);
    dst->weights = plush_arena_array(arena, n, sizeof *dst->weights);
    dst->distances = plush_arena_array(arena, n, sizeof *dst->distances);
    dst->share = plush_arena_array(arena, n, sizeof *dst->share);
    dst->percent = src->percent ? plush_arena_array(arena, n, sizeof *dst->percent) : NULL;
    if (!dst->triangles || !dst->weights || !dst->distances || !dst->share || (src->percent && !dst->percent))
        return false;
    memcpy(dst->triangles, src->triangles, rows * sizeof *dst->triangles);
    memcpy(dst->weights, src->weights, rows * sizeof *dst->weights);
    memcpy(dst->distances, src->distances, rows * sizeof *dst->distances);
    memcpy(dst->share, src->proxy_share, rows * sizeof *dst->share);
    if (dst->percent)
        memcpy(dst->percent, src->percent, rows * sizeof *dst->percent);
    return true;
}

static void restore_computed(apply_state *s, size_t row)
{
    const struct plush_scene_computed *c = s->b->computed;
    memcpy(s->rows.triangles[row], c->triangles[row], sizeof s->rows.triangles[row]);
    memcpy(s->rows.weights[row], c->weights[row], sizeof s->rows.weights[row]);
    memcpy(s->rows.distances[row], c->distances[row], sizeof s->rows.distances[row]);
    if (s->rows.percent)
        memcpy(s->rows.percent[row], c->percent[row], sizeof s->rows.percent[row]);
    s->rows.share[row] = c->share[row];
}

/* The vertex's distance to triangle t, measured the way the binding measures. */
static float distance_to(const apply_state *s, size_t row, int32_t t)
{
    const struct plush_scene_computed *c = s->b->computed;
    for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++)
        if (c->triangles[row][k] == t)
            return c->distances[row][k];
    const plush_scene_proxy *p = &s->b->proxy;
    const float *v = s->b->model->vertices[s->b->vertices[row]].position;
    const uint32_t *tri = p->triangles[t];
    return s->b->binding->seed ? plush_proxy_seed_distance(v, p->nodes[tri[0]], p->nodes[tri[1]], p->nodes[tri[2]])
                               : plush_proxy_point_triangle_distance(v, p->nodes[tri[0]], p->nodes[tri[1]],
                                                                     p->nodes[tri[2]]);
}

static void apply_to_row(apply_state *s, size_t row, const plush_im2_entry *e)
{
    restore_computed(s, row);
    if (e->child < (int64_t)s->b->model->bone_count) {
        s->rows.share[row] = 0;
        return;
    }
    if (e->method == PLUSH_IM2_ONESKIN)
        return;
    int32_t t = (int32_t)(e->child - (int64_t)s->b->model->bone_count);
    float d = distance_to(s, row, t);
    for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++) {
        s->rows.triangles[row][k] = k == 0 ? t : -1;
        s->rows.weights[row][k] = k == 0 ? 1.0f : 0.0f;
        s->rows.distances[row][k] = k == 0 ? d : 0.0f;
        if (s->rows.percent)
            s->rows.percent[row][k] = k == 0 ? 100 : 0;
    }
    s->rows.share[row] = 1;
}

static bool same_name(const plush_str *a, const plush_str *b)
{
    return a->len == b->len && (a->len == 0 || memcmp(a->s, b->s, a->len) == 0);
}

/* The material a part names: the first one with that name and bound vertices not named by an earlier part. */
static plush_status find_material(apply_state *s, const plush_im2_part *part, size_t p, size_t *out)
{
    const plush_pmx_model *model = s->b->model;
    size_t named = 0, eligible = 0;
    for (size_t m = 0; m < model->material_count; m++) {
        if (!same_name(&model->materials[m].name, &part->name))
            continue;
        named++;
        if (s->materials[m].count == 0)
            continue;
        eligible++;
        if (!s->taken[m]) {
            s->taken[m] = true;
            *out = m;
            return PLUSH_OK;
        }
    }
    const char *name = part->name.s ? part->name.s : "";
    if (named == 0)
        return fail_at(s, part->line, part->offset, p, "part \"%.60s\": no material has this name", name);
    if (eligible == 0)
        return fail_at(s, part->line, part->offset, p, "part \"%.60s\": its material has no vertex bound to the proxy",
                       name);
    return fail_at(s, part->line, part->offset, p,
                   "part \"%.60s\": more parts than the %zu materials of this name with bound vertices", name, eligible);
}

static bool triangle_usable(const apply_state *s, size_t t)
{
    const plush_scene_proxy *p = &s->b->proxy;
    const uint32_t *tri = p->triangles[t];
    float frame[16];
    return plush_proxy_triangle_frame(p->nodes[tri[0]], p->nodes[tri[1]], p->nodes[tri[2]], frame);
}

static plush_status check_entry(apply_state *s, const plush_im2_part *part, size_t p, const plush_im2_entry *e,
                                size_t vertices)
{
    if (e->child == -1)
        return fail_at(s, e->line, e->offset, p, "child bone -1: a line needs a child bone");
    if (e->child < -1 || e->child >= s->bones)
        return fail_at(s, e->line, e->offset, p, "child bone %ld out of range (%lld bones and proxy triangles)",
                       (long)e->child, (long long)s->bones);
    if (e->parent < -1 || e->parent >= s->bones)
        return fail_at(s, e->line, e->offset, p, "parent bone %ld out of range (%lld bones and proxy triangles)",
                       (long)e->parent, (long long)s->bones);
    int64_t t = e->child - (int64_t)s->b->model->bone_count;
    if (e->method == PLUSH_IM2_NOSKIN && t >= 0 && !triangle_usable(s, (size_t)t))
        return fail_at(s, e->line, e->offset, p, "child bone %ld is proxy triangle %lld, which has no area to follow",
                       (long)e->child, (long long)t);
    if (e->vertex < -1 || (e->vertex >= 0 && (size_t)e->vertex >= vertices))
        return fail_at(s, e->line, e->offset, p, "vertex %ld out of range (part \"%.60s\" has %zu vertices)",
                       (long)e->vertex, part->name.s ? part->name.s : "", vertices);
    return PLUSH_OK;
}

static plush_status apply_part(apply_state *s, const plush_im2_part *part, size_t p)
{
    size_t m = 0;
    plush_status st = find_material(s, part, p, &m);
    if (st != PLUSH_OK)
        return st;
    const scene_material_vertices *mv = &s->materials[m];
    for (size_t k = 0; k < part->entry_count; k++) {
        const plush_im2_entry *e = &part->entries[k];
        if ((st = check_entry(s, part, p, e, mv->count)) != PLUSH_OK)
            return st;
        size_t first = e->vertex < 0 ? 0 : (size_t)e->vertex, end = e->vertex < 0 ? mv->count : first + 1;
        for (size_t v = first; v < end; v++) {
            int64_t row = plush_scene_binding_row(s->b, mv->vertices[v]);
            if (row >= 0)
                apply_to_row(s, (size_t)row, e);
            else if (e->vertex >= 0)
                return fail_at(s, e->line, e->offset, p, "vertex %ld (PMX vertex %lu) is not bound to the proxy",
                               (long)e->vertex, (unsigned long)mv->vertices[v]);
        }
    }
    return PLUSH_OK;
}

plush_status plush_scene_binding_apply_im2(plush_scene_binding *binding, const plush_im2_map *map,
                                           plush_diag *diag)
{
    if (!binding || !map)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no binding or no map");
    plush_arena scratch = {0};
    const plush_pmx_model *model = binding->model;
    apply_state s = {.b = binding, .diag = diag,
                     .bones = (int64_t)model->bone_count + (int64_t)binding->proxy.triangle_count};
    s.taken = plush_arena_array(&scratch, model->material_count ? model->material_count : 1, sizeof *s.taken);
    plush_status st = s.taken && copy_rows(&s.rows, binding->binding, &scratch)
                          ? PLUSH_OK
                          : plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    if (st == PLUSH_OK)
        st = plush__scene_im2_materials(binding, &scratch, &s.materials, diag);
    for (size_t p = 0; st == PLUSH_OK && p < map->part_count; p++)
        st = apply_part(&s, &map->parts[p], p);
    if (st == PLUSH_OK) {
        plush_proxy_binding *dst = binding->binding;
        size_t rows = dst->vertex_count;
        memcpy(dst->triangles, s.rows.triangles, rows * sizeof *dst->triangles);
        memcpy(dst->weights, s.rows.weights, rows * sizeof *dst->weights);
        memcpy(dst->distances, s.rows.distances, rows * sizeof *dst->distances);
        memcpy(dst->proxy_share, s.rows.share, rows * sizeof *dst->proxy_share);
        if (dst->percent)
            memcpy(dst->percent, s.rows.percent, rows * sizeof *dst->percent);
    }
    plush_arena_free(&scratch);
    return st;
}
