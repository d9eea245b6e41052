/* A model's materials as a user finds them: by name, English name or number (with the nearest names when
 * none fits), by the soft body that owns one, by the bones that move one. */
#include "plush/pmx.h"
#include "plush/sys/core.h"
#include "plush/sys/pmx.h"

#include "core/text.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool name_is(const plush_str *name, const char *s)
{
    size_t n = strlen(s);
    return name->len == n && (n == 0 || memcmp(name->s, s, n) == 0);
}

static bool same_str(const plush_str *a, const plush_str *b)
{
    return a->len == b->len && (a->len == 0 || memcmp(a->s, b->s, a->len) == 0);
}

const plush_str *plush_pmx_material_english(const plush_pmx_model *model, size_t material)
{
    const plush_pmx_material *mat = &model->materials[material];
    /* a blank English name or a copy of the name tells the reader nothing */
    return mat->name_en.len > 0 && !same_str(&mat->name_en, &mat->name) ? &mat->name_en : NULL;
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

/* k, or less when byte k of s is inside a UTF-8 character: where that character starts. */
static size_t char_start(const plush_str *s, size_t k)
{
    while (k > 0 && k < s->len && ((unsigned char)s->s[k] & 0xC0) == 0x80)
        k--;
    return k;
}

static size_t shared_prefix(const plush_str *name, const char *s, size_t len)
{
    size_t k = 0;
    while (k < name->len && k < len && name->s[k] == s[k])
        k++;
    return char_start(name, k); /* whole characters only */
}

static nearness nearness_of(const plush_str *s, const char *name, size_t len, size_t material)
{
    const char *text = s->s ? s->s : "";
    return (nearness){.holds = len > 0 && plush__text_contains(text, s->len, name, len),
                      .edits = plush__text_distance(text, s->len, name, len),
                      .prefix = shared_prefix(s, name, len), .material = material};
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
        const plush_pmx_material *mat = &model->materials[m];
        /* one entry per name and English name: a later material with both the same adds nothing */
        bool seen = false;
        for (size_t e = 0; e < m && !seen; e++)
            seen = same_str(&model->materials[e].name, &mat->name) &&
                   same_str(&model->materials[e].name_en, &mat->name_en);
        if (seen)
            continue;
        /* a user on an English keyboard types the English name: it counts as much as the name */
        nearness x = nearness_of(&mat->name, name, len, m);
        if (x.edits == SIZE_MAX)
            break;
        const plush_str *english = plush_pmx_material_english(model, m);
        if (english) {
            nearness y = nearness_of(english, name, len, m);
            if (y.edits == SIZE_MAX)
                break;
            if (nearer(&y, &x))
                x = y;
        }
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

/* ---- what a user's text means ------------------------------------------------------------------ */

/* Appends text to the list in buf when it fits whole with room for ", ..." after it; once one does not,
 * the list ends in "..." and takes nothing more. */
static void list_add(char *buf, size_t size, size_t *used, const char *text)
{
    size_t n = strlen(text), sep = *used ? 2 : 0;
    if (*used == SIZE_MAX)
        return;
    if (*used + sep + n + 5 >= size) {
        snprintf(buf + *used, size - *used, "%s...", sep ? ", " : "");
        *used = SIZE_MAX;
        return;
    }
    *used += (size_t)snprintf(buf + *used, size - *used, "%s%s", sep ? ", " : "", text);
}

/* How many bytes of s to quote in a message: at most max, whole characters only. */
static int quoted_len(const plush_str *s, size_t max)
{
    return (int)char_start(s, s->len < max ? s->len : max);
}

/* The indices of the materials whose name (or, english, English name) is s, "8, 12" (with quoted names,
 * "3 "スカート", 5 "スカート2""), into buf. */
static void list_materials(const plush_pmx_model *model, const plush_str *s, bool english, bool with_names,
                           char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t m = 0; m < model->material_count; m++) {
        const plush_pmx_material *mat = &model->materials[m];
        if (!same_str(english ? &mat->name_en : &mat->name, s))
            continue;
        char item[160];
        if (with_names)
            snprintf(item, sizeof item, "%zu \"%.*s\"", m, quoted_len(&mat->name, 120), mat->name.s ? mat->name.s : "");
        else
            snprintf(item, sizeof item, "%zu", m);
        list_add(buf, size, &used, item);
    }
}

static size_t count_named(const plush_pmx_model *model, const plush_str *name, bool english)
{
    size_t n = 0;
    for (size_t m = 0; m < model->material_count; m++)
        n += same_str(english ? &model->materials[m].name_en : &model->materials[m].name, name);
    return n;
}

/* Text means material m (by its English name: every material carrying that English name, all of m's name;
 * by its number: m alone). Callers choose materials by name, so when other materials share m's name they
 * would take more than text meant: that is refused rather than widened in silence. */
static plush_status sole_name(const plush_pmx_model *model, const char *text, size_t m, bool english, size_t *out,
                              plush_diag *diag)
{
    const plush_pmx_material *mat = &model->materials[m];
    size_t meant = english ? count_named(model, &mat->name_en, true) : 1;
    if (count_named(model, &mat->name, false) == meant) {
        *out = m;
        return PLUSH_OK;
    }
    char meant_list[64], named_list[96];
    if (english)
        list_materials(model, &mat->name_en, true, false, meant_list, sizeof meant_list);
    else
        snprintf(meant_list, sizeof meant_list, "%zu", m);
    list_materials(model, &mat->name, false, false, named_list, sizeof named_list);
    int name_len = quoted_len(&mat->name, 80);
    const char *name = mat->name.s ? mat->name.s : "";
    return plush_diag_fail(diag, PLUSH_E_AMBIGUOUS, -1, NULL, -1,
                           "\"%s\" means material%s %s, whose name \"%.*s\" materials %s share; materials are "
                           "chosen by name: \"%.*s\" takes them all",
                           text, meant > 1 ? "s" : "", meant_list, name_len, name, named_list, name_len, name);
}

/* Text as a material number: digits only (no sign, blank or point), as plush info lists them. */
static bool material_number(const char *text, size_t *out)
{
    if (*text == '\0')
        return false;
    size_t n = 0;
    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        /* saturate: any number past the count is out of range all the same */
        n = n > (SIZE_MAX - 9) / 10 ? SIZE_MAX : n * 10 + (size_t)(*p - '0');
    }
    *out = n;
    return true;
}

/* The unknown text's message: the nearest names (with their English names) that fit it whole. */
static plush_status no_material(const plush_pmx_model *model, const char *name, plush_diag *diag)
{
    size_t number;
    if (model->material_count && material_number(name, &number))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1,
                               "no material named \"%s\", and material numbers go from 0 to %zu", name,
                               model->material_count - 1);
    enum { SHOWN = 5 };
    size_t near[SHOWN];
    size_t n = plush_pmx_material_nearest(model, name, near, SHOWN);
    char list[PLUSH_DIAG_MESSAGE] = "";
    size_t used = 0, len = strlen(name);
    size_t room = len + 48 < sizeof list ? sizeof list - len - 48 : 0;
    for (size_t k = 0; k < n; k++) {
        const plush_str *s = &model->materials[near[k]].name, *english = plush_pmx_material_english(model, near[k]);
        size_t need = (k ? 2 : 0) + 2 + s->len + (english ? 3 + english->len : 0);
        if (used + need >= room)
            break;
        used += (size_t)snprintf(list + used, sizeof list - used, "%s\"%.*s\"", k ? ", " : "", (int)s->len,
                                 s->s ? s->s : "");
        if (english)
            used += (size_t)snprintf(list + used, sizeof list - used, " (%.*s)", (int)english->len, english->s);
    }
    if (used == 0)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no material named \"%s\"%s", name,
                               model->material_count ? "" : ": the model has no materials");
    return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no material named \"%s\"; nearest: %s", name,
                           list);
}

plush_status plush_pmx_material_lookup(const plush_pmx_model *model, const char *text, size_t *out,
                                       plush_diag *diag)
{
    int32_t named = plush_pmx_material_find(model, text);
    if (named >= 0) {
        *out = (size_t)named;
        return PLUSH_OK;
    }
    /* an English name: blank ones name nothing (many models leave every one blank) */
    size_t first = SIZE_MAX;
    for (size_t m = 0; *text && m < model->material_count; m++) {
        const plush_pmx_material *mat = &model->materials[m];
        if (!name_is(&mat->name_en, text))
            continue;
        if (first == SIZE_MAX) {
            first = m;
        } else if (!same_str(&mat->name, &model->materials[first].name)) {
            char list[160];
            list_materials(model, &mat->name_en, true, true, list, sizeof list);
            return plush_diag_fail(diag, PLUSH_E_AMBIGUOUS, -1, NULL, -1,
                                   "\"%s\" is the English name of materials of different names: %s", text, list);
        }
    }
    if (first != SIZE_MAX)
        return sole_name(model, text, first, true, out, diag);
    size_t number;
    if (material_number(text, &number) && number < model->material_count)
        return sole_name(model, text, number, false, out, diag);
    return no_material(model, text, diag);
}

plush_status plush_pmx_material_choose(const plush_pmx_model *model, const char *text, bool *chosen,
                                       plush_diag *diag)
{
    size_t m;
    plush_status st = plush_pmx_material_lookup(model, text, &m, diag);
    for (size_t k = 0; st == PLUSH_OK && k < model->material_count; k++)
        if (same_str(&model->materials[k].name, &model->materials[m].name))
            chosen[k] = true;
    return st;
}

plush_status plush_pmx_material_check(const plush_pmx_model *model, const char *name, plush_diag *diag)
{
    size_t m;
    return plush_pmx_material_lookup(model, name, &m, diag);
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
