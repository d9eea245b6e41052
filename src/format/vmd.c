/* VMD motions: reading, and the motion's life cycle.
 *
 * A VMD file is a signature, a model name and up to six sections, each a u32 count followed by records;
 * every record but the property key has a fixed size, so a count is checked against the bytes left
 * before anything is allocated. Older files simply stop after some section. */
#include "plush/vmd.h"
#include "plush/sys/core.h"
#include "plush/sys/vmd.h"

#include "format/cursor.h"
#include "format/vmd_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const plush__vmd_section_names[PLUSH_VMD_SECTION_PROPERTIES + 1] = {
    "header", "bone key", "morph key", "camera key", "light key", "shadow key", "property key",
};

/* ---- name map -------------------------------------------------------------------------------- */

static uint32_t name_hash(const uint8_t *key, size_t len, uint32_t tag)
{
    uint32_t h = 2166136261u ^ tag;
    for (size_t i = 0; i < len; i++)
        h = (h ^ key[i]) * 16777619u;
    return h;
}

static vmd_name_slot *probe(vmd_name_slot *slots, size_t cap, const uint8_t *key, size_t len, uint32_t hash,
                            uint32_t tag)
{
    size_t i = hash & (cap - 1);
    for (;;) {
        vmd_name_slot *s = &slots[i];
        if (!s->key || (s->hash == hash && s->len == len && s->tag == tag && memcmp(s->key, key, len) == 0))
            return s;
        i = (i + 1) & (cap - 1);
    }
}

static bool names_grow(vmd_name_map *map)
{
    size_t cap = map->cap ? map->cap * 2 : 64;
    vmd_name_slot *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i < map->cap; i++) {
        const vmd_name_slot *old = &map->slots[i];
        if (old->key)
            *probe(slots, cap, old->key, old->len, old->hash, old->tag) = *old;
    }
    free(map->slots);
    map->slots = slots;
    map->cap = cap;
    return true;
}

vmd_name_slot *plush__vmd_names_get(vmd_name_map *map, const uint8_t *key, size_t len, uint32_t tag, bool *is_new)
{
    *is_new = false;
    /* Keys are name fields (at most 20 bytes) or names held by a motion; an empty key is given a
     * stand-in address so that a NULL key always means an empty slot. */
    static const uint8_t empty = 0;
    if (!key)
        key = &empty;
    if ((map->used + 1) * 2 > map->cap && !names_grow(map))
        return NULL;
    uint32_t hash = name_hash(key, len, tag);
    vmd_name_slot *s = probe(map->slots, map->cap, key, len, hash, tag);
    if (!s->key) {
        s->key = key;
        s->len = (uint32_t)len;
        s->hash = hash;
        s->tag = tag;
        map->used++;
        *is_new = true;
    }
    return s;
}

void plush__vmd_names_free(vmd_name_map *map)
{
    free(map->slots);
    map->slots = NULL;
    map->cap = map->used = 0;
}

/* ---- life cycle ------------------------------------------------------------------------------ */

plush_vmd_motion *plush_vmd_create(void)
{
    plush_vmd_motion *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->header_version = 2;
    memcpy(m->header_raw, VMD_SIGNATURE_V2, sizeof VMD_SIGNATURE_V2 - 1);
    /* A motion made from scratch gets every section, as current MMD writes them. */
    m->sections_present = PLUSH_VMD_SECTION_PROPERTIES;
    m->model_name.s = "";
    return m;
}

plush_arena *plush_vmd_arena(plush_vmd_motion *motion) { return motion ? &motion->arena : NULL; }

void plush_vmd_free(plush_vmd_motion *motion)
{
    if (!motion)
        return;
    plush_arena_free(&motion->arena);
    free(motion);
}

uint32_t plush_vmd_last_frame(const plush_vmd_motion *motion)
{
    uint32_t last = 0;
    if (!motion)
        return 0;
#define PLUSH_VMD_MAX_FRAME(keys, count)            \
    for (size_t i = 0; i < motion->count; i++)     \
        if (motion->keys[i].frame > last)          \
            last = motion->keys[i].frame;
    PLUSH_VMD_MAX_FRAME(bone_keys, bone_key_count)
    PLUSH_VMD_MAX_FRAME(morph_keys, morph_key_count)
    PLUSH_VMD_MAX_FRAME(camera_keys, camera_key_count)
    PLUSH_VMD_MAX_FRAME(light_keys, light_key_count)
    PLUSH_VMD_MAX_FRAME(shadow_keys, shadow_key_count)
    PLUSH_VMD_MAX_FRAME(property_keys, property_key_count)
#undef PLUSH_VMD_MAX_FRAME
    return last;
}

/* ---- bone key curves --------------------------------------------------------------------------- */

void plush_vmd_curves_read(const uint8_t block[64], uint8_t curves[4][4])
{
    for (int c = 0; c < 4; c++)
        for (int p = 0; p < 4; p++)
            curves[c][p] = block[16 * c + 4 * p];
}

void plush_vmd_curves_write(const uint8_t curves[4][4], uint8_t block[64])
{
    uint8_t row[16];
    for (int p = 0; p < 4; p++)
        for (int c = 0; c < 4; c++)
            row[4 * p + c] = curves[c][p];
    memset(block, 0, 64);
    for (int r = 0; r < 4; r++)
        memcpy(block + 16 * r, row + r, (size_t)(16 - r));
    /* x1 of Z and of the rotation live in rows 2 and 3; the first row's copies are where current
     * writers keep something else (zero in every motion seen), so plush writes zero there too */
    block[2] = block[3] = 0;
}

bool plush_vmd_key_first_row_differs(const uint8_t block[64])
{
    for (int c = 0; c < 4; c++)
        for (int p = 0; p < 4; p++)
            if (block[4 * p + c] != block[16 * c + 4 * p])
                return true;
    return false;
}

/* ---- reader ---------------------------------------------------------------------------------- */

typedef struct vmd_reader {
    cursor cur;
    plush_vmd_motion *m;
    plush_diag *diag;
    plush_sjis *sjis;
    vmd_name_map names;
} vmd_reader;

static plush_status nomem(vmd_reader *r, int section, int64_t index)
{
    return plush_diag_fail(r->diag, PLUSH_E_NOMEM, (int64_t)r->cur.pos, plush__vmd_section_names[section], index,
                           "out of memory");
}

/* Decodes a name field once per distinct name: keys naming the same bone share the text. The map keys
 * point into the input, which outlives the map. */
static plush_status read_name(vmd_reader *r, const uint8_t *field, size_t size, plush_str *out)
{
    size_t len = vmd_field_len(field, size);
    bool is_new;
    vmd_name_slot *s = plush__vmd_names_get(&r->names, field, len, 0, &is_new);
    if (!s)
        return PLUSH_E_NOMEM;
    if (is_new) {
        plush_status st = plush_sjis_decode(r->sjis, &r->m->arena, field, len, &s->text, NULL);
        if (st != PLUSH_OK)
            return st;
    }
    *out = s->text;
    return PLUSH_OK;
}

/* Checks n floats just read (from byte at) and names the first one that is NaN or infinite. */
static bool check_finite(vmd_reader *r, const float *v, size_t n, size_t at, int section, size_t index,
                         const char *what)
{
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(v[i])) {
            plush_diag_fail(r->diag, PLUSH_E_FORMAT, (int64_t)(at + 4 * i), plush__vmd_section_names[section],
                            (int64_t)index, "%s is not a finite number", what);
            return false;
        }
    }
    return true;
}

static plush_status read_header(vmd_reader *r)
{
    plush_vmd_motion *m = r->m;
    if (!cur_need(&r->cur, VMD_SIGNATURE_SIZE))
        return plush_diag_fail(r->diag, PLUSH_E_TRUNCATED, 0, "header", -1,
                               "data ends inside the signature (%zu bytes)", r->cur.size);
    cur_bytes(&r->cur, m->header_raw, VMD_SIGNATURE_SIZE);
    size_t sig = sizeof VMD_SIGNATURE_V2 - 1;
    size_t name_size;
    if (memcmp(m->header_raw, VMD_SIGNATURE_V2, sig) == 0) {
        m->header_version = 2;
        name_size = PLUSH_VMD_MODEL_NAME_V2;
    } else if (memcmp(m->header_raw, VMD_SIGNATURE_V1, sig) == 0) {
        m->header_version = 1;
        name_size = PLUSH_VMD_MODEL_NAME_V1;
    } else if (memcmp(m->header_raw, "Vocaloid Motion Data ", 21) == 0) {
        return plush_diag_fail(r->diag, PLUSH_E_VERSION, 21, "header", -1, "unknown VMD version \"%.4s\"",
                               (const char *)m->header_raw + 21);
    } else {
        return plush_diag_fail(r->diag, PLUSH_E_FORMAT, 0, "header", -1,
                               "not a VMD file (no \"Vocaloid Motion Data\" signature)");
    }
    if (!cur_need(&r->cur, name_size))
        return plush_diag_fail(r->diag, PLUSH_E_TRUNCATED, VMD_SIGNATURE_SIZE, "header", -1,
                               "data ends inside the model name");
    cur_bytes(&r->cur, m->model_name_raw, name_size);
    plush_status st = plush_sjis_decode(r->sjis, &m->arena, m->model_name_raw, name_size, &m->model_name, NULL);
    if (st != PLUSH_OK)
        return plush_diag_fail(r->diag, st, VMD_SIGNATURE_SIZE, "header", -1, "cannot decode the model name");
    return PLUSH_OK;
}

/* Reads a section's count. Returns 1 with *count set, 0 when the file ended before the section, or -1.
 * min_record is the smallest size a record can have: a count that cannot fit is refused here, before
 * the caller allocates for it. */
static int begin_section(vmd_reader *r, int section, size_t min_record, uint32_t *count)
{
    const char *what = plush__vmd_section_names[section];
    size_t at = r->cur.pos;
    if (cur_left(&r->cur) == 0)
        return 0;
    if (!cur_need(&r->cur, 4)) {
        plush_diag_fail(r->diag, PLUSH_E_TRUNCATED, (int64_t)at, what, -1,
                        "data ends inside the key count (%zu of 4 bytes)", cur_left(&r->cur));
        return -1;
    }
    uint32_t n = cur_u32(&r->cur);
    size_t room = cur_left(&r->cur) / min_record;
    if (n > room) {
        size_t first = r->cur.pos + room * min_record;
        plush_diag_fail(r->diag, PLUSH_E_TRUNCATED, (int64_t)first, what, (int64_t)room,
                        "data ends %s the record (the count says %lu keys)",
                        first == r->cur.size ? "before" : "inside", (unsigned long)n);
        return -1;
    }
    r->m->sections_present = section;
    *count = n;
    return 1;
}

/* Allocates count records of size bytes each; NULL (with the error recorded) when memory runs out. */
static void *section_array(vmd_reader *r, int section, uint32_t count, size_t size)
{
    void *p = plush_arena_array(&r->m->arena, count, size);
    if (!p)
        nomem(r, section, -1);
    return p;
}

static plush_status read_bones(vmd_reader *r, uint32_t n)
{
    plush_vmd_motion *m = r->m;
    plush_vmd_bone_key *keys = section_array(r, PLUSH_VMD_SECTION_BONES, n, sizeof *keys);
    if (!keys)
        return PLUSH_E_NOMEM;
    for (uint32_t i = 0; i < n; i++) {
        plush_vmd_bone_key *k = &keys[i];
        size_t at = r->cur.pos;
        cur_bytes(&r->cur, k->name_raw, PLUSH_VMD_BONE_NAME);
        if (read_name(r, k->name_raw, PLUSH_VMD_BONE_NAME, &k->name) != PLUSH_OK)
            return nomem(r, PLUSH_VMD_SECTION_BONES, i);
        k->frame = cur_u32(&r->cur);
        cur_floats(&r->cur, k->translation, 3);
        cur_floats(&r->cur, k->rotation, 4);
        cur_bytes(&r->cur, k->interpolation, sizeof k->interpolation);
        if (!check_finite(r, k->translation, 3, at + 19, PLUSH_VMD_SECTION_BONES, i, "translation") ||
            !check_finite(r, k->rotation, 4, at + 31, PLUSH_VMD_SECTION_BONES, i, "rotation"))
            return PLUSH_E_FORMAT;
    }
    m->bone_keys = keys;
    m->bone_key_count = n;
    return PLUSH_OK;
}

static plush_status read_morphs(vmd_reader *r, uint32_t n)
{
    plush_vmd_morph_key *keys = section_array(r, PLUSH_VMD_SECTION_MORPHS, n, sizeof *keys);
    if (!keys)
        return PLUSH_E_NOMEM;
    for (uint32_t i = 0; i < n; i++) {
        plush_vmd_morph_key *k = &keys[i];
        size_t at = r->cur.pos;
        cur_bytes(&r->cur, k->name_raw, PLUSH_VMD_MORPH_NAME);
        if (read_name(r, k->name_raw, PLUSH_VMD_MORPH_NAME, &k->name) != PLUSH_OK)
            return nomem(r, PLUSH_VMD_SECTION_MORPHS, i);
        k->frame = cur_u32(&r->cur);
        k->weight = cur_f32(&r->cur);
        if (!check_finite(r, &k->weight, 1, at + 19, PLUSH_VMD_SECTION_MORPHS, i, "weight"))
            return PLUSH_E_FORMAT;
    }
    r->m->morph_keys = keys;
    r->m->morph_key_count = n;
    return PLUSH_OK;
}

static plush_status read_cameras(vmd_reader *r, uint32_t n)
{
    plush_vmd_camera_key *keys = section_array(r, PLUSH_VMD_SECTION_CAMERAS, n, sizeof *keys);
    if (!keys)
        return PLUSH_E_NOMEM;
    for (uint32_t i = 0; i < n; i++) {
        plush_vmd_camera_key *k = &keys[i];
        size_t at = r->cur.pos;
        k->frame = cur_u32(&r->cur);
        k->distance = cur_f32(&r->cur);
        cur_floats(&r->cur, k->position, 3);
        cur_floats(&r->cur, k->rotation, 3);
        cur_bytes(&r->cur, k->interpolation, sizeof k->interpolation);
        k->view_angle = cur_u32(&r->cur);
        k->perspective_off = cur_u8(&r->cur);
        if (!check_finite(r, &k->distance, 1, at + 4, PLUSH_VMD_SECTION_CAMERAS, i, "distance") ||
            !check_finite(r, k->position, 3, at + 8, PLUSH_VMD_SECTION_CAMERAS, i, "position") ||
            !check_finite(r, k->rotation, 3, at + 20, PLUSH_VMD_SECTION_CAMERAS, i, "rotation"))
            return PLUSH_E_FORMAT;
    }
    r->m->camera_keys = keys;
    r->m->camera_key_count = n;
    return PLUSH_OK;
}

static plush_status read_lights(vmd_reader *r, uint32_t n)
{
    plush_vmd_light_key *keys = section_array(r, PLUSH_VMD_SECTION_LIGHTS, n, sizeof *keys);
    if (!keys)
        return PLUSH_E_NOMEM;
    for (uint32_t i = 0; i < n; i++) {
        plush_vmd_light_key *k = &keys[i];
        size_t at = r->cur.pos;
        k->frame = cur_u32(&r->cur);
        cur_floats(&r->cur, k->color, 3);
        cur_floats(&r->cur, k->direction, 3);
        if (!check_finite(r, k->color, 3, at + 4, PLUSH_VMD_SECTION_LIGHTS, i, "colour") ||
            !check_finite(r, k->direction, 3, at + 16, PLUSH_VMD_SECTION_LIGHTS, i, "direction"))
            return PLUSH_E_FORMAT;
    }
    r->m->light_keys = keys;
    r->m->light_key_count = n;
    return PLUSH_OK;
}

static plush_status read_shadows(vmd_reader *r, uint32_t n)
{
    plush_vmd_shadow_key *keys = section_array(r, PLUSH_VMD_SECTION_SHADOWS, n, sizeof *keys);
    if (!keys)
        return PLUSH_E_NOMEM;
    for (uint32_t i = 0; i < n; i++) {
        plush_vmd_shadow_key *k = &keys[i];
        size_t at = r->cur.pos;
        k->frame = cur_u32(&r->cur);
        k->mode = cur_u8(&r->cur);
        k->distance = cur_f32(&r->cur);
        if (!check_finite(r, &k->distance, 1, at + 5, PLUSH_VMD_SECTION_SHADOWS, i, "distance"))
            return PLUSH_E_FORMAT;
    }
    r->m->shadow_keys = keys;
    r->m->shadow_key_count = n;
    return PLUSH_OK;
}

/* Property keys vary in size (each holds its own IK list), so every key checks its own room. */
static plush_status read_properties(vmd_reader *r, uint32_t n)
{
    const char *what = plush__vmd_section_names[PLUSH_VMD_SECTION_PROPERTIES];
    plush_vmd_property_key *keys = section_array(r, PLUSH_VMD_SECTION_PROPERTIES, n, sizeof *keys);
    if (!keys)
        return PLUSH_E_NOMEM;
    for (uint32_t i = 0; i < n; i++) {
        plush_vmd_property_key *k = &keys[i];
        size_t at = r->cur.pos;
        if (!cur_need(&r->cur, VMD_PROPERTY_FIXED))
            return plush_diag_fail(r->diag, PLUSH_E_TRUNCATED, (int64_t)at, what, i,
                                   "data ends %s the record", at == r->cur.size ? "before" : "inside");
        k->frame = cur_u32(&r->cur);
        k->visible = cur_u8(&r->cur);
        k->ik_count = cur_u32(&r->cur);
        size_t room = cur_left(&r->cur) / VMD_IK_RECORD;
        if (k->ik_count > room)
            return plush_diag_fail(r->diag, PLUSH_E_TRUNCATED, (int64_t)(r->cur.pos + room * VMD_IK_RECORD), what,
                                   i, "data ends inside IK state %zu (the key says %lu)", room,
                                   (unsigned long)k->ik_count);
        if (k->ik_count == 0)
            continue;
        k->ik = plush_arena_array(&r->m->arena, k->ik_count, sizeof *k->ik);
        if (!k->ik)
            return nomem(r, PLUSH_VMD_SECTION_PROPERTIES, i);
        for (uint32_t j = 0; j < k->ik_count; j++) {
            plush_vmd_ik_state *ik = &k->ik[j];
            cur_bytes(&r->cur, ik->name_raw, PLUSH_VMD_IK_NAME);
            if (read_name(r, ik->name_raw, PLUSH_VMD_IK_NAME, &ik->name) != PLUSH_OK)
                return nomem(r, PLUSH_VMD_SECTION_PROPERTIES, i);
            ik->enabled = cur_u8(&r->cur);
        }
    }
    r->m->property_keys = keys;
    r->m->property_key_count = n;
    return PLUSH_OK;
}

static plush_status read_sections(vmd_reader *r)
{
    static const size_t min_record[] = {
        0, VMD_BONE_RECORD, VMD_MORPH_RECORD, VMD_CAMERA_RECORD, VMD_LIGHT_RECORD, VMD_SHADOW_RECORD,
        VMD_PROPERTY_FIXED,
    };
    for (int section = PLUSH_VMD_SECTION_BONES; section <= PLUSH_VMD_SECTION_PROPERTIES; section++) {
        uint32_t n;
        int have = begin_section(r, section, min_record[section], &n);
        if (have < 0)
            return r->diag ? r->diag->status : PLUSH_E_TRUNCATED;
        if (have == 0)
            return PLUSH_OK;
        plush_status st;
        switch (section) {
        case PLUSH_VMD_SECTION_BONES: st = read_bones(r, n); break;
        case PLUSH_VMD_SECTION_MORPHS: st = read_morphs(r, n); break;
        case PLUSH_VMD_SECTION_CAMERAS: st = read_cameras(r, n); break;
        case PLUSH_VMD_SECTION_LIGHTS: st = read_lights(r, n); break;
        case PLUSH_VMD_SECTION_SHADOWS: st = read_shadows(r, n); break;
        default: st = read_properties(r, n); break;
        }
        if (st != PLUSH_OK)
            return st;
    }
    size_t left = cur_left(&r->cur);
    if (left > 0) {
        uint8_t *copy = plush_arena_alloc(&r->m->arena, left);
        if (!copy)
            return nomem(r, PLUSH_VMD_SECTION_PROPERTIES, -1);
        memcpy(copy, cur_ptr(&r->cur), left);
        r->m->trailing = copy;
        r->m->trailing_size = left;
        plush_diag_warn(r->diag, (int64_t)r->cur.pos, NULL, -1, "%zu bytes after the last section (kept)", left);
    }
    return PLUSH_OK;
}

plush_status plush_vmd_read(const uint8_t *data, size_t size, plush_vmd_motion **out, plush_diag *diag)
{
    if (!out || (!data && size))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no data or no place for the motion");
    *out = NULL;
    vmd_reader r = {.diag = diag};
    static const uint8_t nothing = 0;
    cur_init(&r.cur, data ? data : &nothing, size);
    r.m = calloc(1, sizeof *r.m);
    if (!r.m)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, 0, NULL, -1, "out of memory");
    plush_status st = plush_sjis_create(&r.sjis);
    if (st != PLUSH_OK)
        plush_diag_fail(diag, st, -1, NULL, -1, "no Shift-JIS converter (iconv CP932)");
    else
        st = read_header(&r);
    if (st == PLUSH_OK)
        st = read_sections(&r);
    plush_sjis_destroy(r.sjis);
    plush__vmd_names_free(&r.names);
    if (st != PLUSH_OK) {
        plush_vmd_free(r.m);
        return st;
    }
    *out = r.m;
    return PLUSH_OK;
}

static plush_status parse_vmd(const uint8_t *data, size_t size, void *out, plush_diag *diag)
{
    return plush_vmd_read(data, size, out, diag);
}

plush_status plush_vmd_read_file(const char *path, plush_vmd_motion **out, plush_diag *diag)
{
    if (out)
        *out = NULL;
    if (!path || !out)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no path or no place for the motion");
    return plush_file_parse(path, parse_vmd, out, diag);
}
