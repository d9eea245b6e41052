/* VMD motions: writing.
 *
 * The whole file is sized first, reserved once and filled in place; only a complete file is committed to
 * the caller's buffer, so a failure appends nothing. */
#include "plush/vmd.h"
#include "plush/sys/core.h"

#include "format/cursor.h"
#include "format/vmd_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct vmd_writer {
    const plush_vmd_motion *m;
    bool truncate;
    plush_diag *diag;
    plush_sjis *sjis;
    plush_arena scratch;     /* decoded stored names, alive while the maps are */
    vmd_name_map stored;     /* stored field (to its NUL) -> its decoded text */
    vmd_name_map encoded;    /* text + field size -> encoded bytes or the reason it failed */
} vmd_writer;

static const char *str_text(const plush_str *s, size_t *len)
{
    *len = s->s ? s->len : 0;
    return s->s ? s->s : "";
}

/* True when the stored field reads back as exactly the text, so writing the field keeps its padding. */
static plush_status stored_matches(vmd_writer *w, const uint8_t *field, size_t size, const char *text, size_t len,
                                   bool *match)
{
    size_t flen = vmd_field_len(field, size);
    bool is_new;
    vmd_name_slot *s = plush__vmd_names_get(&w->stored, field, flen, 0, &is_new);
    if (!s)
        return PLUSH_E_NOMEM;
    if (is_new) {
        plush_status st = plush_sjis_decode(w->sjis, &w->scratch, field, flen, &s->text, NULL);
        if (st != PLUSH_OK)
            return st;
    }
    *match = s->text.len == len && memcmp(s->text.s, text, len) == 0;
    return PLUSH_OK;
}

/* Fills a name field of size bytes: the stored bytes when they still say the same, else the text in CP932
 * followed by zeros. */
static plush_status put_name(vmd_writer *w, uint8_t *dst, size_t size, const plush_str *name, const uint8_t *raw,
                             int section, int64_t index)
{
    const char *what = plush__vmd_section_names[section];
    size_t len;
    const char *text = str_text(name, &len);
    bool match = false;
    plush_status st = raw ? stored_matches(w, raw, size, text, len, &match) : PLUSH_OK;
    if (st != PLUSH_OK)
        return plush_diag_fail(w->diag, st, -1, what, index, "out of memory");
    if (match) {
        memcpy(dst, raw, size);
        return PLUSH_OK;
    }
    bool is_new;
    vmd_name_slot *s = plush__vmd_names_get(&w->encoded, (const uint8_t *)text, len, (uint32_t)size, &is_new);
    if (!s)
        return plush_diag_fail(w->diag, PLUSH_E_NOMEM, -1, what, index, "out of memory");
    if (is_new) {
        size_t n = 0;
        s->status = plush_sjis_encode(w->sjis, text, len, s->bytes, size, w->truncate, &n);
        s->byte_count = (uint8_t)n;
    }
    int shown = len > 64 ? 64 : (int)len;
    switch (s->status) {
    case PLUSH_OK:
        break;
    case PLUSH_E_RANGE:
        return plush_diag_fail(w->diag, PLUSH_E_RANGE, -1, what, index,
                               "name \"%.*s\" does not fit in %zu bytes of Shift-JIS", shown, text, size);
    case PLUSH_E_ENCODING:
        return plush_diag_fail(w->diag, PLUSH_E_ENCODING, -1, what, index,
                               "name \"%.*s\" has a character Shift-JIS cannot hold", shown, text);
    default:
        return plush_diag_fail(w->diag, s->status, -1, what, index, "cannot encode name \"%.*s\"", shown, text);
    }
    memcpy(dst, s->bytes, s->byte_count);
    memset(dst + s->byte_count, 0, size - s->byte_count);
    return PLUSH_OK;
}

/* The last section to write: as many as were read, and more when later arrays hold keys. */
static int last_section(const plush_vmd_motion *m)
{
    int last = m->sections_present < 0 ? 0 : m->sections_present;
    if (last > PLUSH_VMD_SECTION_PROPERTIES)
        last = PLUSH_VMD_SECTION_PROPERTIES;
    const size_t counts[] = {0, m->bone_key_count, m->morph_key_count, m->camera_key_count,
                             m->light_key_count, m->shadow_key_count, m->property_key_count};
    for (int s = PLUSH_VMD_SECTION_PROPERTIES; s > last; s--)
        if (counts[s] > 0)
            return s;
    return last;
}

/* Adds count records of size bytes plus a 4-byte count to *total; false on overflow or a count the
 * format cannot hold. */
static bool add_section(size_t *total, size_t count, size_t size)
{
    if (count > UINT32_MAX || count > (SIZE_MAX - 4 - *total) / size)
        return false;
    *total += 4 + count * size;
    return true;
}

static plush_status file_size(vmd_writer *w, int last, size_t *out)
{
    const plush_vmd_motion *m = w->m;
    const size_t counts[] = {0, m->bone_key_count, m->morph_key_count, m->camera_key_count,
                             m->light_key_count, m->shadow_key_count, m->property_key_count};
    const void *const arrays[] = {NULL, m->bone_keys, m->morph_keys, m->camera_keys,
                                  m->light_keys, m->shadow_keys, m->property_keys};
    const size_t sizes[] = {0, VMD_BONE_RECORD, VMD_MORPH_RECORD, VMD_CAMERA_RECORD,
                            VMD_LIGHT_RECORD, VMD_SHADOW_RECORD, VMD_PROPERTY_FIXED};
    size_t total = VMD_SIGNATURE_SIZE + (m->header_version == 1 ? PLUSH_VMD_MODEL_NAME_V1 : PLUSH_VMD_MODEL_NAME_V2);
    for (int s = 1; s <= last; s++) {
        if (!add_section(&total, counts[s], sizes[s]))
            return plush_diag_fail(w->diag, PLUSH_E_RANGE, -1, plush__vmd_section_names[s], -1, "too many keys (%zu)",
                                   counts[s]);
        if (counts[s] > 0 && !arrays[s])
            return plush_diag_fail(w->diag, PLUSH_E_ARGUMENT, -1, plush__vmd_section_names[s], -1,
                                   "%zu keys but no array", counts[s]);
    }
    if (last == PLUSH_VMD_SECTION_PROPERTIES) {
        for (size_t i = 0; i < m->property_key_count; i++) {
            const plush_vmd_property_key *k = &m->property_keys[i];
            if (k->ik_count > 0 && !k->ik)
                return plush_diag_fail(w->diag, PLUSH_E_ARGUMENT, -1, "property key", (int64_t)i,
                                       "%lu IK states but no array", (unsigned long)k->ik_count);
            if (k->ik_count > (SIZE_MAX - total) / VMD_IK_RECORD)
                return plush_diag_fail(w->diag, PLUSH_E_RANGE, -1, "property key", (int64_t)i, "too many IK states");
            total += (size_t)k->ik_count * VMD_IK_RECORD;
        }
    }
    if (m->trailing_size > SIZE_MAX - total || (m->trailing_size > 0 && !m->trailing))
        return plush_diag_fail(w->diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "bad trailing bytes");
    /* Trailing bytes only make sense behind a complete file: anywhere else they would read as keys. */
    if (last == PLUSH_VMD_SECTION_PROPERTIES)
        total += m->trailing_size;
    *out = total;
    return PLUSH_OK;
}

static plush_status put_header(vmd_writer *w, uint8_t **pp)
{
    const plush_vmd_motion *m = w->m;
    const char *sig = m->header_version == 1 ? VMD_SIGNATURE_V1 : VMD_SIGNATURE_V2;
    size_t sig_len = sizeof VMD_SIGNATURE_V2 - 1;
    uint8_t *p = *pp;
    /* The stored field is kept (MMD leaves bytes behind the signature's NUL) while it is the right one. */
    if (memcmp(m->header_raw, sig, sig_len) == 0) {
        memcpy(p, m->header_raw, VMD_SIGNATURE_SIZE);
    } else {
        memset(p, 0, VMD_SIGNATURE_SIZE);
        memcpy(p, sig, sig_len);
    }
    p += VMD_SIGNATURE_SIZE;
    size_t name_size = m->header_version == 1 ? PLUSH_VMD_MODEL_NAME_V1 : PLUSH_VMD_MODEL_NAME_V2;
    plush_status st = put_name(w, p, name_size, &m->model_name, m->model_name_raw, 0, -1);
    *pp = p + name_size;
    return st;
}

static plush_status put_keys(vmd_writer *w, uint8_t *p, int last, uint8_t **end)
{
    const plush_vmd_motion *m = w->m;
    plush_status st = PLUSH_OK;
    if (last >= PLUSH_VMD_SECTION_BONES) {
        p = put_u32(p, (uint32_t)m->bone_key_count);
        for (size_t i = 0; i < m->bone_key_count && st == PLUSH_OK; i++) {
            const plush_vmd_bone_key *k = &m->bone_keys[i];
            st = put_name(w, p, PLUSH_VMD_BONE_NAME, &k->name, k->name_raw, PLUSH_VMD_SECTION_BONES, (int64_t)i);
            p = put_u32(p + PLUSH_VMD_BONE_NAME, k->frame);
            p = put_f32s(p, k->translation, 3);
            p = put_f32s(p, k->rotation, 4);
            memcpy(p, k->interpolation, sizeof k->interpolation);
            p += sizeof k->interpolation;
        }
        if (st != PLUSH_OK)
            return st;
    }
    if (last >= PLUSH_VMD_SECTION_MORPHS) {
        p = put_u32(p, (uint32_t)m->morph_key_count);
        for (size_t i = 0; i < m->morph_key_count && st == PLUSH_OK; i++) {
            const plush_vmd_morph_key *k = &m->morph_keys[i];
            st = put_name(w, p, PLUSH_VMD_MORPH_NAME, &k->name, k->name_raw, PLUSH_VMD_SECTION_MORPHS, (int64_t)i);
            p = put_u32(p + PLUSH_VMD_MORPH_NAME, k->frame);
            p = put_f32s(p, &k->weight, 1);
        }
        if (st != PLUSH_OK)
            return st;
    }
    if (last >= PLUSH_VMD_SECTION_CAMERAS) {
        p = put_u32(p, (uint32_t)m->camera_key_count);
        for (size_t i = 0; i < m->camera_key_count; i++) {
            const plush_vmd_camera_key *k = &m->camera_keys[i];
            p = put_u32(p, k->frame);
            p = put_f32s(p, &k->distance, 1);
            p = put_f32s(p, k->position, 3);
            p = put_f32s(p, k->rotation, 3);
            memcpy(p, k->interpolation, sizeof k->interpolation);
            p = put_u32(p + sizeof k->interpolation, k->view_angle);
            p = put_u8(p, k->perspective_off);
        }
    }
    if (last >= PLUSH_VMD_SECTION_LIGHTS) {
        p = put_u32(p, (uint32_t)m->light_key_count);
        for (size_t i = 0; i < m->light_key_count; i++) {
            const plush_vmd_light_key *k = &m->light_keys[i];
            p = put_u32(p, k->frame);
            p = put_f32s(p, k->color, 3);
            p = put_f32s(p, k->direction, 3);
        }
    }
    if (last >= PLUSH_VMD_SECTION_SHADOWS) {
        p = put_u32(p, (uint32_t)m->shadow_key_count);
        for (size_t i = 0; i < m->shadow_key_count; i++) {
            const plush_vmd_shadow_key *k = &m->shadow_keys[i];
            p = put_u32(p, k->frame);
            p = put_u8(p, k->mode);
            p = put_f32s(p, &k->distance, 1);
        }
    }
    if (last >= PLUSH_VMD_SECTION_PROPERTIES) {
        p = put_u32(p, (uint32_t)m->property_key_count);
        for (size_t i = 0; i < m->property_key_count && st == PLUSH_OK; i++) {
            const plush_vmd_property_key *k = &m->property_keys[i];
            p = put_u32(p, k->frame);
            p = put_u8(p, k->visible);
            p = put_u32(p, k->ik_count);
            for (uint32_t j = 0; j < k->ik_count && st == PLUSH_OK; j++) {
                const plush_vmd_ik_state *ik = &k->ik[j];
                st = put_name(w, p, PLUSH_VMD_IK_NAME, &ik->name, ik->name_raw, PLUSH_VMD_SECTION_PROPERTIES,
                              (int64_t)i);
                p = put_u8(p + PLUSH_VMD_IK_NAME, ik->enabled);
            }
        }
        if (st != PLUSH_OK)
            return st;
        if (m->trailing_size > 0) {
            memcpy(p, m->trailing, m->trailing_size);
            p += m->trailing_size;
        }
    }
    *end = p;
    return st;
}

plush_status plush_vmd_write(const plush_vmd_motion *motion, const plush_vmd_write_options *options, plush_buf *out,
                             plush_diag *diag)
{
    if (!motion || !out)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no motion or no output buffer");
    if (motion->header_version != 1 && motion->header_version != 2)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "header", -1, "header version %d (1 or 2 expected)",
                               motion->header_version);
    vmd_writer w = {.m = motion, .truncate = options && options->truncate_names, .diag = diag};
    int last = last_section(motion);
    size_t total = 0;
    plush_status st = file_size(&w, last, &total);
    if (st != PLUSH_OK)
        return st;
    if (!plush_buf_reserve(out, total))
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "cannot hold %zu bytes in memory", total);
    st = plush_sjis_create(&w.sjis);
    if (st != PLUSH_OK)
        return plush_diag_fail(diag, st, -1, NULL, -1, "no Shift-JIS converter (iconv CP932)");
    uint8_t *start = out->data + out->size, *p = start;
    st = put_header(&w, &p);
    if (st == PLUSH_OK)
        st = put_keys(&w, p, last, &p);
    plush_sjis_destroy(w.sjis);
    plush__vmd_names_free(&w.stored);
    plush__vmd_names_free(&w.encoded);
    plush_arena_free(&w.scratch);
    if (st != PLUSH_OK)
        return st;
    if ((size_t)(p - start) != total)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "internal size mismatch");
    out->size += total;
    return PLUSH_OK;
}

plush_status plush_vmd_write_file(const plush_vmd_motion *motion, const plush_vmd_write_options *options,
                                  const char *path, plush_diag *diag)
{
    if (!path)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no path");
    if (diag && !diag->file)
        diag->file = path;
    plush_buf buf = {0};
    plush_status st = plush_vmd_write(motion, options, &buf, diag);
    if (st == PLUSH_OK)
        st = plush_file_write_atomic(path, buf.data, buf.size, diag);
    plush_buf_free(&buf);
    return st;
}
