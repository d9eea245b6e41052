/* A model's materials as a user finds them: by name (with the nearest names when one is not there), by
 * the soft body that owns one, by the bones that move one. */
#include "plush/pmx.h"
#include "plush/sys/core.h"
#include "plush/sys/pmx.h"

#include "core/text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool name_is(const plush_str *name, const char *s)
{
    size_t n = strlen(s);
    return name->len == n && (n == 0 || memcmp(name->s, s, n) == 0);
}

int32_t plush_pmx_material_find(const plush_pmx_model *model, const char *name)
{
    for (size_t m = 0; m < model->material_count; m++)
        if (name_is(&model->materials[m].name, name))
            return (int32_t)m;
    return -1;
}

/* How near a material's name is to what was asked: names holding the text first, then fewer edits, then a
 * longer shared beginning; the material's index last, so the order is total. */
typedef struct nearness {
    bool holds;
    size_t edits, prefix;
    size_t material;
} nearness;

static bool nearer(const nearness *a, const nearness *b)
{
    if (a->holds != b->holds)
        return a->holds;
    if (a->edits != b->edits)
        return a->edits < b->edits;
    if (a->prefix != b->prefix)
        return a->prefix > b->prefix;
    return a->material < b->material;
}

static size_t shared_prefix(const plush_str *name, const char *s, size_t len)
{
    size_t k = 0;
    while (k < name->len && k < len && name->s[k] == s[k])
        k++;
    /* whole characters only: back off to the start of a UTF-8 sequence */
    while (k > 0 && k < name->len && ((unsigned char)name->s[k] & 0xC0) == 0x80)
        k--;
    return k;
}

size_t plush_pmx_material_nearest(const plush_pmx_model *model, const char *name, size_t *out, size_t max)
{
    if (max == 0)
        return 0;
    nearness *best = malloc(max * sizeof *best);
    if (!best)
        return 0;
    size_t len = strlen(name), n = 0;
    for (size_t m = 0; m < model->material_count; m++) {
        const plush_str *s = &model->materials[m].name;
        const char *text = s->s ? s->s : "";
        /* one entry per name: a later material of the same name adds nothing */
        bool seen = false;
        for (size_t e = 0; e < m && !seen; e++) {
            const plush_str *t = &model->materials[e].name;
            seen = t->len == s->len && (s->len == 0 || memcmp(t->s, s->s, s->len) == 0);
        }
        if (seen)
            continue;
        size_t edits = plush__text_distance(text, s->len, name, len);
        if (edits == SIZE_MAX)
            break;
        nearness x = {.holds = len > 0 && plush__text_contains(text, s->len, name, len), .edits = edits,
                      .prefix = shared_prefix(s, name, len), .material = m};
        if (n == max && !nearer(&x, &best[n - 1]))
            continue;
        size_t k = n < max ? n++ : n - 1;
        for (; k > 0 && nearer(&x, &best[k - 1]); k--)
            best[k] = best[k - 1];
        best[k] = x;
    }
    for (size_t k = 0; k < n; k++)
        out[k] = best[k].material;
    free(best);
    return n;
}

plush_status plush_pmx_material_check(const plush_pmx_model *model, const char *name, plush_diag *diag)
{
    if (plush_pmx_material_find(model, name) >= 0)
        return PLUSH_OK;
    enum { SHOWN = 5 };
    size_t near[SHOWN];
    size_t n = plush_pmx_material_nearest(model, name, near, SHOWN);
    /* the names that fit the message whole, nearest first */
    char list[PLUSH_DIAG_MESSAGE] = "";
    size_t used = 0, len = strlen(name);
    size_t room = len + 48 < sizeof list ? sizeof list - len - 48 : 0;
    for (size_t k = 0; k < n; k++) {
        const plush_str *s = &model->materials[near[k]].name;
        size_t need = (k ? 2 : 0) + 2 + s->len;
        if (used + need >= room)
            break;
        used += (size_t)snprintf(list + used, sizeof list - used, "%s\"%.*s\"", k ? ", " : "", (int)s->len,
                                 s->s ? s->s : "");
    }
    if (used == 0)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no material named \"%s\"%s", name,
                               model->material_count ? "" : ": the model has no materials");
    return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no material named \"%s\"; nearest: %s", name,
                           list);
}

int32_t plush_pmx_material_soft_body(const plush_pmx_model *model, size_t material)
{
    for (size_t s = 0; s < model->soft_body_count; s++)
        if (model->soft_bodies[s].material >= 0 && (size_t)model->soft_bodies[s].material == material)
            return (int32_t)s;
    return -1;
}

/* A vertex's weight per bone slot, summing to 1 (BDEF4 and QDEF as stored may not); false when it has none
 * to give (every weight zero or not finite). */
static bool vertex_weights(const plush_pmx_vertex *v, float w[4])
{
    double sum = 0;
    for (int k = 0; k < 4; k++) {
        w[k] = isfinite(v->weights[k]) && v->weights[k] > 0 ? v->weights[k] : 0;
        sum += w[k];
    }
    if (v->weight_type == PLUSH_PMX_BDEF1)
        w[0] = 1, w[1] = w[2] = w[3] = 0, sum = 1;
    for (int k = 0; k < 4 && sum > 0; k++)
        w[k] = (float)(w[k] / sum);
    return sum > 0;
}

plush_status plush_pmx_material_bones(const plush_pmx_model *model, size_t material, plush_pmx_bone_share *out,
                                      size_t max, size_t *out_count, plush_diag *diag)
{
    *out_count = 0;
    plush_arena arena = {0};
    uint32_t *verts = NULL;
    size_t nv = 0;
    plush_status st = plush_pmx_material_vertices(model, material, &arena, &verts, &nv, diag);
    double *weight = st == PLUSH_OK ? calloc(model->bone_count ? model->bone_count : 1, sizeof *weight) : NULL;
    if (st == PLUSH_OK && !weight)
        st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "material", (int64_t)material, "out of memory");
    double total = 0;
    for (size_t i = 0; st == PLUSH_OK && i < nv; i++) {
        const plush_pmx_vertex *v = &model->vertices[verts[i]];
        float w[4];
        if (!vertex_weights(v, w))
            continue;
        for (int k = 0; k < 4; k++)
            if (w[k] > 0 && v->bones[k] >= 0 && (size_t)v->bones[k] < model->bone_count) {
                weight[v->bones[k]] += w[k];
                total += w[k];
            }
    }
    for (size_t b = 0; st == PLUSH_OK && b < model->bone_count; b++) {
        if (!(weight[b] > 0))
            continue;
        plush_pmx_bone_share x = {.bone = (int32_t)b, .share = (float)(weight[b] / total)};
        size_t n = *out_count;
        if (max == 0 || (n == max && !(weight[b] > weight[out[n - 1].bone])))
            continue;
        /* heaviest first; an equal weight keeps the lower bone index first */
        size_t k = n < max ? n : n - 1;
        for (; k > 0 && weight[b] > weight[out[k - 1].bone]; k--)
            out[k] = out[k - 1];
        out[k] = x;
        *out_count = n < max ? n + 1 : n;
    }
    free(weight);
    plush_arena_free(&arena);
    return st;
}
