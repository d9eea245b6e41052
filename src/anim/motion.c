/* Motion: VMD / VPD keys bound to one model's bones and morphs, and sampling at any (fractional) frame.
 *
 * Facts this file relies on (MMD's behaviour, as saba, nanoem and babylon-mmd implement it):
 * - A bone key's translation and rotation are relative to the bone's rest pose (offset from the rest
 *   position in the parent's frame; rotation from the rest orientation).
 * - Between keys k0 and k1 the curves stored in k1 (the later key) shape the segment. Curve c of the
 *   64-byte block is read from its own row (x1, y1, x2, y2 at 16c, +4, +8, +12: plush_vmd_curves_read)
 *   on a 0..127 grid; the cubic Bezier (0,0) (x1,y1) (x2,y2) (1,1) maps linear time x to eased
 *   progress y. X, Y and Z of the
 *   translation are eased each by their own curve; the rotation is slerped on the eased parameter.
 * - Morph keys interpolate linearly. Property keys (visibility + IK on/off) are steps: the last key at
 *   or before the frame holds.
 * - Before the first key the first key holds, after the last the last.
 * - Names are matched as text; a VMD stores at most 15 bytes of Shift-JIS, so MMD matches a model name
 *   longer than that by its first 15 bytes (cut even inside a character).
 * - Two keys on one frame: the later one in the file wins. */
#include "anim/anim_internal.h"
#include "plush/sys/core.h"
#include "plush/sys/vmd.h"

#include <stdio.h>
#include <stdlib.h>

/* ---- Bezier easing --------------------------------------------------------------------------------- */

/* x(s) of the curve and its derivative, with control x values a and b (0..1). */
static double bezier_coord(double a, double b, double s)
{
    double u = 1.0 - s;
    return 3.0 * u * u * s * a + 3.0 * u * s * s * b + s * s * s;
}

static double bezier_slope(double a, double b, double s)
{
    double u = 1.0 - s;
    return 3.0 * u * u * a + 6.0 * u * s * (b - a) + 3.0 * s * s * (1.0 - b);
}

float plush__vmd_bezier(const uint8_t cp[4], float t)
{
    if (!(t > 0.0f))
        return 0.0f;   /* also NaN: never hand a NaN on */
    if (t >= 1.0f)
        return 1.0f;
    uint8_t c[4];
    for (int k = 0; k < 4; k++)
        c[k] = cp[k] > 127 ? 127 : cp[k];
    if (c[0] == c[1] && c[2] == c[3])
        return t;      /* the control points lie on the diagonal: the curve is the line y = x */
    double x1 = c[0] / 127.0, y1 = c[1] / 127.0, x2 = c[2] / 127.0, y2 = c[3] / 127.0;
    /* x(s) is monotone on 0..1 because x1 and x2 lie in 0..1, so the root is unique. Newton converges
     * in a few steps; the bracket [lo, hi] catches flat spots (x1 = 0 or x2 = 1 make x'(s) vanish at an
     * end) by bisecting whenever a Newton step would leave it. */
    double lo = 0.0, hi = 1.0, s = t;
    for (int it = 0; it < 64; it++) {
        double err = bezier_coord(x1, x2, s) - t;
        if (fabs(err) < 1e-9)
            break;
        if (err > 0)
            hi = s;
        else
            lo = s;
        double d = bezier_slope(x1, x2, s);
        double next = d > 1e-12 ? s - err / d : -1.0;
        s = (next > lo && next < hi) ? next : 0.5 * (lo + hi);
        if (hi - lo < 1e-12)
            break;
    }
    return (float)bezier_coord(y1, y2, s);
}

/* ---- binding ----------------------------------------------------------------------------------------- */

enum { NAME_CUT = 15 };  /* VMD bone and morph name fields */

/* A key on its way to a track. */
typedef struct bind_entry {
    const char *name;
    const uint8_t *raw;     /* the stored name field (NAME_CUT bytes), NULL when there is none */
    uint32_t frame;
    uint32_t index;         /* position in the source, for "the later key wins" */
    int32_t target;         /* model bone / morph, -1 when the model lacks the name */
} bind_entry;

typedef struct name_ref {
    const char *s;
    int32_t index;
} name_ref;

/* The model's names of one kind, sorted, plus their Shift-JIS cut to the VMD field for long names. */
typedef struct name_table {
    name_ref *sorted;
    size_t count;
    uint8_t (*cut)[NAME_CUT];   /* per item; NULL when no item is longer than the field */
    bool *is_long;
} name_table;

static int cmp_name_ref(const void *pa, const void *pb)
{
    const name_ref *a = pa, *b = pb;
    int c = strcmp(a->s, b->s);
    if (c)
        return c;
    return (a->index > b->index) - (a->index < b->index);
}

static int cmp_entry_name(const void *pa, const void *pb)
{
    const bind_entry *a = pa, *b = pb;
    int c = strcmp(a->name, b->name);
    if (c)
        return c;
    if (a->raw && b->raw) {
        c = memcmp(a->raw, b->raw, NAME_CUT);
        if (c)
            return c;
    } else if (a->raw != b->raw) {
        return a->raw ? 1 : -1;
    }
    return (a->index > b->index) - (a->index < b->index);
}

static int cmp_entry_target(const void *pa, const void *pb)
{
    const bind_entry *a = pa, *b = pb;
    if (a->target != b->target)
        return a->target < b->target ? -1 : 1;
    if (a->frame != b->frame)
        return a->frame < b->frame ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

/* Builds the table for names[i] (stride bytes apart, a plush_str at the start of each item). */
static plush_status name_table_build(plush_arena *arena, const void *items, size_t count, size_t stride,
                                     plush_sjis *sjis, name_table *out)
{
    memset(out, 0, sizeof *out);
    out->count = count;
    if (!count)
        return PLUSH_OK;
    out->sorted = plush_arena_array(arena, count, sizeof *out->sorted);
    out->cut = plush_arena_array(arena, count, sizeof *out->cut);
    out->is_long = plush_arena_array(arena, count, sizeof *out->is_long);
    if (!out->sorted || !out->cut || !out->is_long)
        return PLUSH_E_NOMEM;
    for (size_t i = 0; i < count; i++) {
        const plush_str *name = (const plush_str *)(const void *)((const char *)items + i * stride);
        out->sorted[i].s = name->s ? name->s : "";
        out->sorted[i].index = (int32_t)i;
        if (sjis && name->s) {
            uint8_t buf[256];
            size_t written = 0;
            /* A name CP932 cannot hold never matches by its cut (it matched as text or not at all). */
            if (plush_sjis_encode(sjis, name->s, name->len, buf, sizeof buf, true, &written) == PLUSH_OK &&
                written > NAME_CUT) {
                memcpy(out->cut[i], buf, NAME_CUT);
                out->is_long[i] = true;
            }
        }
    }
    qsort(out->sorted, count, sizeof *out->sorted, cmp_name_ref);
    return PLUSH_OK;
}

static int32_t name_table_find(const name_table *t, const char *name, const uint8_t *raw)
{
    size_t lo = 0, hi = t->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(t->sorted[mid].s, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < t->count && strcmp(t->sorted[lo].s, name) == 0)
        return t->sorted[lo].index;   /* the lowest index among equal names */
    /* A full field (no NUL) may be a longer model name cut to fit. */
    if (raw && memchr(raw, 0, NAME_CUT) == NULL) {
        for (size_t i = 0; i < t->count; i++)
            if (t->is_long[i] && memcmp(t->cut[i], raw, NAME_CUT) == 0)
                return (int32_t)i;
    }
    return -1;
}

typedef struct missing_count {
    size_t names, keys;
    const char *example;
} missing_count;

/* Resolves every entry's target; counts names (and their keys) the model lacks. */
static void resolve_entries(bind_entry *e, size_t n, const name_table *table, missing_count *missing)
{
    qsort(e, n, sizeof *e, cmp_entry_name);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && strcmp(e[j].name, e[i].name) == 0 &&
               (e[j].raw == e[i].raw || (e[j].raw && e[i].raw && memcmp(e[j].raw, e[i].raw, NAME_CUT) == 0)))
            j++;
        int32_t target = name_table_find(table, e[i].name, e[i].raw);
        for (size_t k = i; k < j; k++)
            e[k].target = target;
        if (target < 0) {
            missing->names++;
            missing->keys += j - i;
            if (!missing->example)
                missing->example = e[i].name;
        }
        i = j;
    }
}

/* Sorts resolved entries by target and frame and drops all but the last key of a frame. Returns the
 * kept count; entries 0..kept-1 are the kept keys in track order. */
static size_t compact_entries(bind_entry *e, size_t n)
{
    qsort(e, n, sizeof *e, cmp_entry_target);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        if (e[i].target < 0)
            continue;
        if (i + 1 < n && e[i + 1].target == e[i].target && e[i + 1].frame == e[i].frame)
            continue;   /* a later key on the same frame wins */
        e[kept++] = e[i];
    }
    return kept;
}

static plush_status motion_alloc(const plush_pmx_model *model, plush_motion **out)
{
    plush_motion *m = calloc(1, sizeof *m);
    if (!m)
        return PLUSH_E_NOMEM;
    m->bone_count = model->bone_count;
    m->morph_count = model->morph_count;
    m->bone_tracks = plush_arena_array(&m->arena, model->bone_count ? model->bone_count : 1, sizeof *m->bone_tracks);
    m->morph_tracks =
        plush_arena_array(&m->arena, model->morph_count ? model->morph_count : 1, sizeof *m->morph_tracks);
    if (!m->bone_tracks || !m->morph_tracks) {
        plush_motion_free(m);
        return PLUSH_E_NOMEM;
    }
    *out = m;
    return PLUSH_OK;
}

static void fill_tracks(anim_track *tracks, const bind_entry *e, size_t kept, size_t *track_count)
{
    for (size_t i = 0; i < kept; i++) {
        anim_track *t = &tracks[e[i].target];
        if (t->count == 0) {
            t->first = (uint32_t)i;
            (*track_count)++;
        }
        t->count++;
    }
}

static void warn_missing(plush_diag *diag, const missing_count *bones, const missing_count *morphs,
                         size_t missing_ik)
{
    if (!diag || (!bones->names && !morphs->names && !missing_ik))
        return;
    const char *example = bones->example ? bones->example : morphs->example;
    plush_diag_warn(diag, -1, "motion", -1,
                    "keys for names the model lacks: %zu bone name%s (%zu keys), %zu morph name%s (%zu keys), "
                    "%zu IK name%s%s%s%s",
                    bones->names, bones->names == 1 ? "" : "s", bones->keys, morphs->names,
                    morphs->names == 1 ? "" : "s", morphs->keys, missing_ik, missing_ik == 1 ? "" : "s",
                    example ? "; first \"" : "", example ? example : "", example ? "\"" : "");
}

static void curve_from_block(const uint8_t block[64], anim_bone_key *k)
{
    uint8_t curves[4][4];
    plush_vmd_curves_read(block, curves);
    k->linear = 0;
    for (int c = 0; c < 4; c++) {
        for (int p = 0; p < 4; p++)
            k->cp[c][p] = curves[c][p] > 127 ? 127 : curves[c][p];
        if (k->cp[c][0] == k->cp[c][1] && k->cp[c][2] == k->cp[c][3])
            k->linear |= (uint8_t)(1u << c);
    }
}

static plush_status bind_fail(plush_motion *m, bind_entry *entries, plush_sjis *sjis, plush_diag *diag)
{
    free(entries);
    plush_sjis_destroy(sjis);
    plush_motion_free(m);
    return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "motion", -1, "out of memory binding the motion");
}

/* Property keys: each IK state bound to an IK bone of the model; the later key of a frame wins. */
static plush_status bind_properties(plush_motion *m, const plush_pmx_model *model, const plush_vmd_motion *vmd,
                                    const name_table *bones, size_t *missing_ik)
{
    size_t n = vmd->property_key_count, states = 0;
    if (!n)
        return PLUSH_OK;
    for (size_t i = 0; i < n; i++)
        states += vmd->property_keys[i].ik_count;
    bind_entry *order = calloc(n, sizeof *order);
    m->property_keys = plush_arena_array(&m->arena, n, sizeof *m->property_keys);
    m->ik_switches = plush_arena_array(&m->arena, states ? states : 1, sizeof *m->ik_switches);
    if (!order || !m->property_keys || !m->ik_switches) {
        free(order);
        return PLUSH_E_NOMEM;
    }
    for (size_t i = 0; i < n; i++)
        order[i] = (bind_entry){.name = "", .frame = vmd->property_keys[i].frame, .index = (uint32_t)i, .target = 0};
    size_t kept = compact_entries(order, n);
    /* Distinct missing IK names (a model has few IK bones; the first 32 distinct ones are remembered,
     * further ones may count once per key). */
    const char *seen[32];
    size_t seen_count = 0;
    uint32_t next = 0;
    for (size_t i = 0; i < kept; i++) {
        const plush_vmd_property_key *src = &vmd->property_keys[order[i].index];
        anim_property_key *dst = &m->property_keys[i];
        dst->frame = (float)src->frame;
        dst->first = next;
        for (uint32_t s = 0; s < src->ik_count; s++) {
            const plush_vmd_ik_state *st = &src->ik[s];
            int32_t b = st->name.s ? name_table_find(bones, st->name.s, NULL) : -1;
            if (b >= 0 && !(model->bones[b].flags & PLUSH_PMX_BONE_IK))
                b = -1;
            if (b < 0) {
                bool known = false;
                for (size_t k = 0; k < seen_count; k++)
                    known = known || (seen[k] && st->name.s && strcmp(seen[k], st->name.s) == 0);
                if (!known) {
                    (*missing_ik)++;
                    if (seen_count < 32)
                        seen[seen_count++] = st->name.s;
                }
                continue;
            }
            m->ik_switches[next++] = (anim_ik_switch){.bone = b, .enabled = st->enabled != 0};
        }
        dst->count = next - dst->first;
    }
    m->property_key_count = kept;
    free(order);
    return PLUSH_OK;
}

/* A VMD key's entry: its text name, and the stored field when it holds any byte (a cut name may match). */
static bind_entry vmd_entry(const plush_str *name, const uint8_t raw[NAME_CUT], uint32_t frame, size_t index)
{
    bool has_raw = false;
    for (int b = 0; b < NAME_CUT; b++)
        has_raw = has_raw || raw[b];
    return (bind_entry){.name = name->s ? name->s : "", .raw = has_raw ? raw : NULL, .frame = frame,
                        .index = (uint32_t)index};
}

static void bone_entries(const plush_vmd_motion *vmd, bind_entry *e)
{
    for (size_t i = 0; i < vmd->bone_key_count; i++)
        e[i] = vmd_entry(&vmd->bone_keys[i].name, vmd->bone_keys[i].name_raw, vmd->bone_keys[i].frame, i);
}

static void morph_entries(const plush_vmd_motion *vmd, bind_entry *e)
{
    for (size_t i = 0; i < vmd->morph_key_count; i++)
        e[i] = vmd_entry(&vmd->morph_keys[i].name, vmd->morph_keys[i].name_raw, vmd->morph_keys[i].frame, i);
}

plush_status plush_motion_bind_vmd(const plush_pmx_model *model, const plush_vmd_motion *vmd, plush_motion **out,
                                   plush_diag *diag)
{
    if (out)
        *out = NULL;
    if (!model || !vmd || !out)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "motion", -1, "no model or motion to bind");
    plush_motion *m = NULL;
    if (motion_alloc(model, &m) != PLUSH_OK)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "motion", -1, "out of memory binding the motion");
    size_t nb = vmd->bone_key_count, nm = vmd->morph_key_count;
    bind_entry *entries = calloc(nb + nm + 1, sizeof *entries);
    plush_sjis *sjis = NULL;
    /* Without iconv long names can only match as whole text; that is a degraded match, not a failure. */
    if (plush_sjis_create(&sjis) != PLUSH_OK)
        sjis = NULL;
    name_table bones, morphs;
    if (!entries ||
        name_table_build(&m->arena, model->bones, model->bone_count, sizeof *model->bones, sjis, &bones) != PLUSH_OK ||
        name_table_build(&m->arena, model->morphs, model->morph_count, sizeof *model->morphs, sjis, &morphs) !=
            PLUSH_OK)
        return bind_fail(m, entries, sjis, diag);

    missing_count miss_bones = {0}, miss_morphs = {0};
    size_t missing_ik = 0;

    bone_entries(vmd, entries);
    resolve_entries(entries, nb, &bones, &miss_bones);
    size_t kept = compact_entries(entries, nb);
    m->bone_keys = plush_arena_array(&m->arena, kept ? kept : 1, sizeof *m->bone_keys);
    if (!m->bone_keys)
        return bind_fail(m, entries, sjis, diag);
    for (size_t i = 0; i < kept; i++) {
        const plush_vmd_bone_key *src = &vmd->bone_keys[entries[i].index];
        anim_bone_key *dst = &m->bone_keys[i];
        dst->frame = (float)src->frame;
        memcpy(dst->translation, src->translation, sizeof dst->translation);
        memcpy(dst->rotation, src->rotation, sizeof dst->rotation);
        anim_q_normalize(dst->rotation);
        curve_from_block(src->interpolation, dst);
        if (src->frame > m->stats.last_frame)
            m->stats.last_frame = src->frame;
    }
    fill_tracks(m->bone_tracks, entries, kept, &m->stats.bone_tracks);

    morph_entries(vmd, entries);
    resolve_entries(entries, nm, &morphs, &miss_morphs);
    kept = compact_entries(entries, nm);
    m->morph_keys = plush_arena_array(&m->arena, kept ? kept : 1, sizeof *m->morph_keys);
    if (!m->morph_keys)
        return bind_fail(m, entries, sjis, diag);
    for (size_t i = 0; i < kept; i++) {
        const plush_vmd_morph_key *src = &vmd->morph_keys[entries[i].index];
        m->morph_keys[i] = (anim_morph_key){.frame = (float)src->frame,
                                            .weight = isfinite(src->weight) ? src->weight : 0.0f};
        if (src->frame > m->stats.last_frame)
            m->stats.last_frame = src->frame;
    }
    fill_tracks(m->morph_tracks, entries, kept, &m->stats.morph_tracks);

    if (bind_properties(m, model, vmd, &bones, &missing_ik) != PLUSH_OK)
        return bind_fail(m, entries, sjis, diag);
    for (size_t i = 0; i < vmd->property_key_count; i++)
        if (vmd->property_keys[i].frame > m->stats.last_frame)
            m->stats.last_frame = vmd->property_keys[i].frame;

    m->stats.missing_bone_names = miss_bones.names;
    m->stats.missing_bone_keys = miss_bones.keys;
    m->stats.missing_morph_names = miss_morphs.names;
    m->stats.missing_morph_keys = miss_morphs.keys;
    m->stats.missing_ik_names = missing_ik;
    warn_missing(diag, &miss_bones, &miss_morphs, missing_ik);
    free(entries);
    plush_sjis_destroy(sjis);
    *out = m;
    return PLUSH_OK;
}

plush_status plush_motion_vmd_known(const plush_pmx_model *model, const plush_vmd_motion *vmd, bool *bone_known,
                                    bool *morph_known, plush_diag *diag)
{
    if (!model || !vmd || !bone_known || !morph_known)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "motion", -1, "no model, motion or place for the answer");
    size_t nb = vmd->bone_key_count, nm = vmd->morph_key_count;
    plush_arena arena = {0};
    bind_entry *entries = calloc(nb + nm + 1, sizeof *entries);
    plush_sjis *sjis = NULL;
    if (plush_sjis_create(&sjis) != PLUSH_OK)
        sjis = NULL;   /* long names then match as whole text only, as when binding */
    name_table bones, morphs;
    plush_status st = entries ? PLUSH_OK : PLUSH_E_NOMEM;
    if (st == PLUSH_OK)
        st = name_table_build(&arena, model->bones, model->bone_count, sizeof *model->bones, sjis, &bones);
    if (st == PLUSH_OK)
        st = name_table_build(&arena, model->morphs, model->morph_count, sizeof *model->morphs, sjis, &morphs);
    if (st == PLUSH_OK) {
        missing_count miss = {0};
        bone_entries(vmd, entries);
        resolve_entries(entries, nb, &bones, &miss);
        for (size_t i = 0; i < nb; i++)
            bone_known[entries[i].index] = entries[i].target >= 0;
        morph_entries(vmd, entries);
        resolve_entries(entries, nm, &morphs, &miss);
        for (size_t i = 0; i < nm; i++)
            morph_known[entries[i].index] = entries[i].target >= 0;
    }
    free(entries);
    plush_sjis_destroy(sjis);
    plush_arena_free(&arena);
    return st == PLUSH_OK ? st : plush_diag_fail(diag, st, -1, "motion", -1, "out of memory matching the motion's names");
}

plush_status plush_motion_bind_vpd(const plush_pmx_model *model, const plush_vpd_pose *pose, plush_motion **out,
                                   plush_diag *diag)
{
    if (out)
        *out = NULL;
    if (!model || !pose || !out)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "motion", -1, "no model or pose to bind");
    plush_motion *m = NULL;
    if (motion_alloc(model, &m) != PLUSH_OK)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "motion", -1, "out of memory binding the pose");
    size_t nb = pose->bone_count, nm = pose->morph_count;
    bind_entry *entries = calloc(nb + nm + 1, sizeof *entries);
    name_table bones, morphs;
    /* A VPD holds whole names (text lines, not fixed fields): no cut names to match. */
    if (!entries ||
        name_table_build(&m->arena, model->bones, model->bone_count, sizeof *model->bones, NULL, &bones) != PLUSH_OK ||
        name_table_build(&m->arena, model->morphs, model->morph_count, sizeof *model->morphs, NULL, &morphs) !=
            PLUSH_OK)
        return bind_fail(m, entries, NULL, diag);
    missing_count miss_bones = {0}, miss_morphs = {0};

    for (size_t i = 0; i < nb; i++)
        entries[i] = (bind_entry){.name = pose->bones[i].name.s ? pose->bones[i].name.s : "", .index = (uint32_t)i};
    resolve_entries(entries, nb, &bones, &miss_bones);
    size_t kept = compact_entries(entries, nb);
    m->bone_keys = plush_arena_array(&m->arena, kept ? kept : 1, sizeof *m->bone_keys);
    if (!m->bone_keys)
        return bind_fail(m, entries, NULL, diag);
    for (size_t i = 0; i < kept; i++) {
        const plush_vpd_bone *src = &pose->bones[entries[i].index];
        anim_bone_key *dst = &m->bone_keys[i];
        memcpy(dst->translation, src->translation, sizeof dst->translation);
        memcpy(dst->rotation, src->rotation, sizeof dst->rotation);
        anim_q_normalize(dst->rotation);
        dst->linear = 0x0f;
    }
    fill_tracks(m->bone_tracks, entries, kept, &m->stats.bone_tracks);

    for (size_t i = 0; i < nm; i++)
        entries[i] = (bind_entry){.name = pose->morphs[i].name.s ? pose->morphs[i].name.s : "", .index = (uint32_t)i};
    resolve_entries(entries, nm, &morphs, &miss_morphs);
    kept = compact_entries(entries, nm);
    m->morph_keys = plush_arena_array(&m->arena, kept ? kept : 1, sizeof *m->morph_keys);
    if (!m->morph_keys)
        return bind_fail(m, entries, NULL, diag);
    for (size_t i = 0; i < kept; i++) {
        float w = pose->morphs[entries[i].index].weight;
        m->morph_keys[i] = (anim_morph_key){.frame = 0.0f, .weight = isfinite(w) ? w : 0.0f};
    }
    fill_tracks(m->morph_tracks, entries, kept, &m->stats.morph_tracks);

    m->stats.missing_bone_names = miss_bones.names;
    m->stats.missing_bone_keys = miss_bones.keys;
    m->stats.missing_morph_names = miss_morphs.names;
    m->stats.missing_morph_keys = miss_morphs.keys;
    warn_missing(diag, &miss_bones, &miss_morphs, 0);
    free(entries);
    *out = m;
    return PLUSH_OK;
}

void plush_motion_stats_get(const plush_motion *motion, plush_motion_stats *out)
{
    if (!out)
        return;
    if (!motion) {
        memset(out, 0, sizeof *out);
        return;
    }
    *out = motion->stats;
}

void plush_motion_free(plush_motion *motion)
{
    if (!motion)
        return;
    plush_arena_free(&motion->arena);
    free(motion);
}

/* ---- sampling -------------------------------------------------------------------------------------- */

/* Index of the last key at or before frame, or 0 when frame precedes them all (O(log n)). */
static uint32_t bone_key_at(const anim_bone_key *keys, uint32_t count, float frame)
{
    uint32_t lo = 0, hi = count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (keys[mid].frame <= frame)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? lo - 1 : 0;
}

static uint32_t morph_key_at(const anim_morph_key *keys, uint32_t count, float frame)
{
    uint32_t lo = 0, hi = count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (keys[mid].frame <= frame)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? lo - 1 : 0;
}

static float ease(const anim_bone_key *k1, int curve, float t)
{
    return (k1->linear >> curve) & 1 ? t : plush__vmd_bezier(k1->cp[curve], t);
}

static void sample_bone(const anim_bone_key *keys, uint32_t count, float frame, float t_out[3], float q_out[4])
{
    uint32_t i = bone_key_at(keys, count, frame);
    const anim_bone_key *k0 = &keys[i];
    if (frame <= k0->frame || i + 1 >= count) {
        memcpy(t_out, k0->translation, 3 * sizeof(float));
        memcpy(q_out, k0->rotation, 4 * sizeof(float));
        return;
    }
    const anim_bone_key *k1 = &keys[i + 1];
    float t = (frame - k0->frame) / (k1->frame - k0->frame);
    for (int c = 0; c < 3; c++) {
        float y = ease(k1, c, t);
        t_out[c] = k0->translation[c] + (k1->translation[c] - k0->translation[c]) * y;
    }
    plush__anim_q_slerp(k0->rotation, k1->rotation, ease(k1, 3, t), q_out);
}

static float sample_morph(const anim_morph_key *keys, uint32_t count, float frame)
{
    uint32_t i = morph_key_at(keys, count, frame);
    const anim_morph_key *k0 = &keys[i];
    if (frame <= k0->frame || i + 1 >= count)
        return k0->weight;
    const anim_morph_key *k1 = &keys[i + 1];
    float t = (frame - k0->frame) / (k1->frame - k0->frame);
    return k0->weight + (k1->weight - k0->weight) * t;
}

void plush__anim_motion_sample(plush_anim *anim, const plush_motion *motion, float frame)
{
    if (!isfinite(frame))
        frame = 0.0f;
    size_t nb = anim->bone_count < motion->bone_count ? anim->bone_count : motion->bone_count;
    for (size_t b = 0; b < anim->bone_count; b++) {
        const anim_track *tr = b < nb ? &motion->bone_tracks[b] : NULL;
        if (!tr || !tr->count) {
            memset(anim->motion_t[b], 0, sizeof anim->motion_t[b]);
            anim_q_identity(anim->motion_q[b]);
            continue;
        }
        sample_bone(motion->bone_keys + tr->first, tr->count, frame, anim->motion_t[b], anim->motion_q[b]);
    }
    size_t nm = anim->morph_count < motion->morph_count ? anim->morph_count : motion->morph_count;
    for (size_t i = 0; i < anim->morph_count; i++) {
        const anim_track *tr = i < nm ? &motion->morph_tracks[i] : NULL;
        anim->weights_in[i] = tr && tr->count ? sample_morph(motion->morph_keys + tr->first, tr->count, frame) : 0.0f;
    }
    for (size_t b = 0; b < anim->bone_count; b++)
        anim->ik_enabled[b] = true;
    if (motion->property_key_count) {
        uint32_t lo = 0, hi = (uint32_t)motion->property_key_count;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (motion->property_keys[mid].frame <= frame)
                lo = mid + 1;
            else
                hi = mid;
        }
        const anim_property_key *p = &motion->property_keys[lo ? lo - 1 : 0];
        for (uint32_t s = 0; s < p->count; s++) {
            const anim_ik_switch *sw = &motion->ik_switches[p->first + s];
            if ((size_t)sw->bone < anim->bone_count)
                anim->ik_enabled[sw->bone] = sw->enabled != 0;
        }
    }
}

/* ---- quaternion helpers shared by the module -------------------------------------------------------- */

void plush__anim_q_slerp(const float a[4], const float b[4], float t, float out[4])
{
    double d = (double)a[0] * b[0] + (double)a[1] * b[1] + (double)a[2] * b[2] + (double)a[3] * b[3];
    double s = 1.0;
    if (d < 0) {   /* q and -q are one rotation: take the shorter arc */
        d = -d;
        s = -1.0;
    }
    double wa, wb;
    if (d > 0.9995) {
        wa = 1.0 - t;   /* nearly equal: normalised lerp avoids dividing by sin(~0) */
        wb = t;
    } else {
        double theta = acos(d), sn = sin(theta);
        wa = sin((1.0 - t) * theta) / sn;
        wb = sin(t * theta) / sn;
    }
    for (int k = 0; k < 4; k++)
        out[k] = (float)(wa * a[k] + wb * s * b[k]);
    anim_q_normalize(out);
}

void plush__anim_q_scale(const float q[4], float t, float out[4])
{
    double x = q[0], y = q[1], z = q[2], w = q[3];
    if (w < 0) {
        x = -x;
        y = -y;
        z = -z;
        w = -w;
    }
    double sn = sqrt(x * x + y * y + z * z);
    if (sn < 1e-12) {
        anim_q_identity(out);
        return;
    }
    double half = atan2(sn, w) * t;
    double k = sin(half) / sn;
    out[0] = (float)(x * k);
    out[1] = (float)(y * k);
    out[2] = (float)(z * k);
    out[3] = (float)cos(half);
}
