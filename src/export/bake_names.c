/* The names the baked VMD holds, settled when the bake is made (before the first frame). A VMD stores text
 * in Shift-JIS (CP932): the model's name in 20 bytes, a bone's in 15, and a player matches a key to the bone
 * whose name starts with those 15 bytes. So:
 *
 * - A character CP932 cannot hold (é, ♡, Hangul) is replaced: a Latin letter by its letter without the
 *   accent, anything else by '_'. The VMD names the model so; a driven bone keyed with --bake-physics is
 *   renamed so in the baked PMX too, or its keys would find no bone. One warning lists them.
 * - A driven bone whose 15 bytes another bone's name (or a pseudo-bone's) also starts with is renamed to as
 *   much of its name as fits beside '_' and its index in 15 bytes (Alicia's スカート１０＿１ and スカート１０＿２,
 *   16 bytes each, agree in their first 15); a new name that still meets another bone's takes a letter after
 *   the index. So every keyed bone's 15 bytes are its own, by construction. */
#include "core/common.h"
#include "export/bake_internal.h"
#include "plush/sys/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { VMD_BONE = 15 };

/* U+00C0 .. U+017F without their accents (NFD's first letter), '_' where there is no letter. */
static const char latin_base[] = "AAAAAA_CEEEEIIII_NOOOOO__UUUUY__aaaaaa_ceeeeiiii_nooooo__uuuuy_y"
                                 "AaAaAaCcCcCcCcDd__EeEeEeEeEeGgGgGgGgHh__IiIiIiIiI___JjKk_LlLlLl_"
                                 "___NnNnNn___OoOoOo__RrRrRrSsSsSsSsTtTt__UuUuUuUuUuUuWwYyYZzZzZz_";

/* The length of the UTF-8 sequence at s (at most n bytes), and its code point; 1 and -1 when malformed. */
static size_t utf8_next(const uint8_t *s, size_t n, int32_t *cp)
{
    size_t len = s[0] < 0x80 ? 1 : (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3 : (s[0] & 0xF8) == 0xF0 ? 4 : 0;
    if (len == 0 || len > n) {
        *cp = -1;
        return 1;
    }
    int32_t c = len == 1 ? s[0] : s[0] & (0x3F >> (len - 1));
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            *cp = -1;
            return 1;
        }
        c = (c << 6) | (s[i] & 0x3F);
    }
    *cp = c;
    return len;
}

/* name with every character CP932 cannot hold replaced (*replaced says whether any was), in arena. */
static plush_status fold(plush_sjis *sjis, plush_arena *arena, const plush_str *name, plush_str *out, bool *replaced)
{
    *replaced = false;
    *out = *name;
    out->raw = NULL, out->raw_len = 0;
    const uint8_t *s = (const uint8_t *)(name->s ? name->s : "");
    size_t n = name->s ? name->len : 0;
    char *text = plush_arena_alloc(arena, n + 1);
    if (!text)
        return PLUSH_E_NOMEM;
    size_t w = 0;
    for (size_t i = 0; i < n;) {
        int32_t cp;
        size_t len = utf8_next(s + i, n - i, &cp);
        uint8_t bytes[8];
        size_t got = 0;
        if (cp >= 0 && (cp < 0x80 || plush_sjis_encode(sjis, (const char *)s + i, len, bytes, sizeof bytes, false,
                                                       &got) == PLUSH_OK)) {
            memcpy(text + w, s + i, len), w += len;
        } else {
            text[w++] = cp >= 0xC0 && cp < 0xC0 + (int32_t)(sizeof latin_base - 1) ? latin_base[cp - 0xC0] : '_';
            *replaced = true;
        }
        i += len;
    }
    text[w] = '\0';
    out->s = text, out->len = (uint32_t)w;
    return PLUSH_OK;
}

/* A bone's key in a VMD: the first 15 bytes of its CP932 name (cut at a character), zero-padded. */
typedef struct vmd_key {
    uint8_t b[VMD_BONE];
} vmd_key;

static bool key_of(plush_sjis *sjis, const char *s, size_t len, vmd_key *k)
{
    size_t n = 0;
    memset(k->b, 0, sizeof k->b);
    return plush_sjis_encode(sjis, s ? s : "", s ? len : 0, k->b, sizeof k->b, true, &n) == PLUSH_OK;
}

/* An open-addressing set of keys, each with how many bones hold it. */
typedef struct key_set {
    vmd_key *keys;
    uint32_t *count;
    size_t mask;
} key_set;

static size_t key_slot(const key_set *set, const vmd_key *k)
{
    uint64_t h = 1469598103934665603u;
    for (int i = 0; i < VMD_BONE; i++)
        h = (h ^ k->b[i]) * 1099511628211u;
    size_t at = (size_t)h & set->mask;
    while (set->count[at] && memcmp(set->keys[at].b, k->b, VMD_BONE) != 0)
        at = (at + 1) & set->mask;
    return at;
}

static void key_add(key_set *set, const vmd_key *k)
{
    size_t at = key_slot(set, k);
    set->keys[at] = *k;
    set->count[at]++;
}

static uint32_t key_count(const key_set *set, const vmd_key *k)
{
    return set->count[key_slot(set, k)];
}

/* A new name for driven bone `bone` (name its folded name): its longest prefix that fits beside "_<bone>" (and
 * a letter when that is taken) in 15 bytes, not yet in set; added to set. */
static plush_status unique_name(plush_sjis *sjis, plush_arena *arena, const plush_str *name, size_t bone,
                                key_set *set, plush_str *out)
{
    for (int extra = 0; extra <= 26; extra++) {
        char suffix[32];
        int sn = extra ? snprintf(suffix, sizeof suffix, "_%zu%c", bone, 'a' + extra - 1)
                       : snprintf(suffix, sizeof suffix, "_%zu", bone);
        if (sn <= 0 || sn >= VMD_BONE)
            break;
        /* the prefix: whole characters of the name within 15 - suffix bytes of CP932 */
        uint8_t head[VMD_BONE];
        size_t hn = 0;
        if (plush_sjis_encode(sjis, name->s, name->len, head, (size_t)(VMD_BONE - sn), true, &hn) != PLUSH_OK)
            hn = 0;
        plush_str prefix = {0};
        bool lossy = false;
        if (hn && plush_sjis_decode(sjis, arena, head, hn, &prefix, &lossy) != PLUSH_OK)
            return PLUSH_E_NOMEM;
        char text[64];
        int w = snprintf(text, sizeof text, "%s%s", prefix.s ? prefix.s : "", suffix);
        vmd_key k;
        if (w <= 0 || !key_of(sjis, text, (size_t)w, &k) || key_count(set, &k))
            continue;
        char *copy = plush_arena_strdup(arena, text, (size_t)w);
        if (!copy)
            return PLUSH_E_NOMEM;
        key_add(set, &k);
        *out = (plush_str){.s = copy, .len = (uint32_t)w};
        return PLUSH_OK;
    }
    return PLUSH_E_RANGE; /* 27 names of this bone all taken: cannot happen with fewer than 27 bones */
}

/* The warning's list: "the model's "Café" as "Cafe", bone "Miku ♡" as "Miku _"" (cut to fit). */
static void list_add(char *list, size_t cap, size_t *shown, const char *what, const plush_str *from,
                     const plush_str *to)
{
    size_t n = strlen(list);
    if (*shown >= 3 || n + 1 >= cap)
        return;
    snprintf(list + n, cap - n, "%s%s \"%.*s\" as \"%.*s\"", *shown ? ", " : "", what, (int)(from->len > 40 ? 40 : from->len),
             from->s ? from->s : "", (int)(to->len > 40 ? 40 : to->len), to->s ? to->s : "");
    (*shown)++;
}

/* The driven bones' names: folded, then made unique in their 15 bytes. */
static plush_status bone_names(plush_scene_bake *b, plush_sjis *sjis, size_t *replaced, char *list, size_t cap,
                               size_t *shown)
{
    const plush_pmx_model *m = b->binding->model;
    size_t nb = m->bone_count, np = b->physics_bone_count, pseudo = b->triangle_count;
    size_t slots = 1;
    while (slots < 2 * (nb + pseudo + np) + 2)
        slots *= 2;
    key_set set = {.keys = calloc(slots, sizeof *set.keys), .count = calloc(slots, sizeof *set.count), .mask = slots - 1};
    plush_str *folded = malloc((np ? np : 1) * sizeof *folded);
    bool *renamed = calloc(np ? np : 1, sizeof *renamed);
    b->physics_names = plush_arena_array(&b->arena, np ? np : 1, sizeof *b->physics_names);
    plush_status st = set.keys && set.count && folded && renamed && b->physics_names ? PLUSH_OK : PLUSH_E_NOMEM;
    /* every name a key may be matched against: the model's bones (driven ones as folded) and the pseudo-bones */
    for (size_t k = 0; st == PLUSH_OK && k < np; k++) {
        bool lossy = false;
        b->physics_names[k] = (plush_str){0};
        st = fold(sjis, &b->arena, &m->bones[b->physics_bones[k]].name, &folded[k], &lossy);
        renamed[k] = lossy;
    }
    for (size_t i = 0, k = 0; st == PLUSH_OK && i < nb; i++) {
        bool driven = k < np && b->physics_bones[k] == i;
        const plush_str *name = driven ? &folded[k] : &m->bones[i].name;
        vmd_key key;
        if (key_of(sjis, name->s, name->len, &key))
            key_add(&set, &key);
        k += driven;
    }
    for (size_t t = 0; st == PLUSH_OK && t < pseudo; t++) {
        char name[16];
        plush__bake_pseudo_name(t, name);
        vmd_key key;
        if (key_of(sjis, name, strlen(name), &key))
            key_add(&set, &key);
    }
    /* a driven bone whose 15 bytes another bone shares gets a name of its own */
    for (size_t k = 0; st == PLUSH_OK && k < np; k++) {
        vmd_key key;
        if (!key_of(sjis, folded[k].s, folded[k].len, &key) || key_count(&set, &key) < 2) {
            if (renamed[k]) {
                b->physics_names[k] = folded[k];
                (*replaced)++;
                list_add(list, cap, shown, "bone", &m->bones[b->physics_bones[k]].name, &folded[k]);
            }
            continue;
        }
        st = unique_name(sjis, &b->arena, &folded[k], b->physics_bones[k], &set, &b->physics_names[k]);
        b->physics_renamed++;
        if (renamed[k]) {
            (*replaced)++;
            list_add(list, cap, shown, "bone", &m->bones[b->physics_bones[k]].name, &b->physics_names[k]);
        }
    }
    free(set.keys), free(set.count), free(folded), free(renamed);
    return st;
}

plush_status plush__bake_vmd_names(plush_scene_bake *b, plush_diag *diag)
{
    const plush_pmx_model *m = b->binding->model;
    if (b->vmd_names_done) /* a bake two exports share */
        return PLUSH_OK;
    b->vmd_names_done = true;
    plush_sjis *sjis = NULL;
    if (plush_sjis_create(&sjis) != PLUSH_OK)
        return PLUSH_OK; /* no converter: the names stay (the VMD writer fails the same way on its own) */
    size_t replaced = 0, shown = 0;
    char list[200] = "";
    bool lossy = false;
    plush_status st = fold(sjis, &b->arena, &m->name, &b->vmd_model_name, &lossy);
    if (st == PLUSH_OK && lossy) {
        replaced++;
        list_add(list, sizeof list, &shown, "the model's name", &m->name, &b->vmd_model_name);
    }
    if (st == PLUSH_OK && b->physics)
        st = bone_names(b, sjis, &replaced, list, sizeof list, &shown);
    plush_sjis_destroy(sjis);
    if (st == PLUSH_E_NOMEM)
        return plush__no_memory(diag);
    if (st != PLUSH_OK)
        return plush_diag_fail(diag, st, -1, "bone", -1, "no VMD name of its own for a driven bone");
    if (replaced)
        plush_diag_warn(diag, -1, NULL, -1,
                        "%zu name%s with characters Shift-JIS cannot hold go into the baked VMD (a driven bone's "
                        "into the PMX too) with them replaced: %s%s",
                        replaced, replaced == 1 ? "" : "s", list,
                        replaced > shown ? ", ..." : "");
    return PLUSH_OK;
}
