/* VMD motions: read and write.
 *
 *   plush_diag diag = { .file = "dance.vmd" };
 *   plush_vmd_motion *motion = NULL;
 *   if (plush_vmd_read(data, size, &motion, &diag) != PLUSH_OK) { ...diag... }
 *   for (size_t i = 0; i < motion->bone_key_count; i++) use(motion->bone_keys[i].name.s);
 *   plush_vmd_free(motion);
 *
 * Names are Shift-JIS (CP932) in the file and UTF-8 here. Each name also keeps its field as stored
 * (name_raw, padding included) so that an unchanged motion writes back byte for byte; names whose stored
 * bytes agree up to their NUL (bone, morph and IK names alike) share one name.s pointer, so comparing
 * pointers finds the keys of one bone. A name cut inside a character reads as far as it decodes (its
 * name.raw is then set). Keys stay in file order (not sorted).
 *
 * Reading fails (with the section "header", "bone key", "morph key", "camera key", "light key",
 * "shadow key" or "property key", the key index and the byte offset in diag) on a bad signature, a count
 * or record the data cannot hold, or a NaN/infinite float; a failed read sets *out = NULL.
 */
#ifndef PLUSH_VMD_H
#define PLUSH_VMD_H

#include "plush/core.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    PLUSH_VMD_BONE_NAME = 15,
    PLUSH_VMD_MORPH_NAME = 15,
    PLUSH_VMD_IK_NAME = 20,
    PLUSH_VMD_MODEL_NAME_V1 = 10, /* "Vocaloid Motion Data file" */
    PLUSH_VMD_MODEL_NAME_V2 = 20  /* "Vocaloid Motion Data 0002" */
};

/* The sections in file order; a file may end after any of them (older files do). */
enum {
    PLUSH_VMD_SECTION_BONES = 1,
    PLUSH_VMD_SECTION_MORPHS,
    PLUSH_VMD_SECTION_CAMERAS,
    PLUSH_VMD_SECTION_LIGHTS,
    PLUSH_VMD_SECTION_SHADOWS,
    PLUSH_VMD_SECTION_PROPERTIES
};

typedef struct plush_vmd_bone_key {
    plush_str name;
    uint8_t name_raw[PLUSH_VMD_BONE_NAME]; /* as stored; all zero in a key built in code */
    uint32_t frame;
    float translation[3];
    float rotation[4];                      /* quaternion x y z w */
    /* The 64-byte block as stored: four rows of 16 bytes, row c (0 X, 1 Y, 2 Z, 3 rotation) holding its
     * curve's control points x1, y1, x2, y2 (0..127) at bytes 16c, 16c + 4, 16c + 8, 16c + 12, as MMD
     * reads them (plush_vmd_curves_read in plush/sys/vmd.h). The other bytes repeat the curves (each row is the first
     * shifted by one byte more) except the first row's bytes 2 and 3, which current writers set apart
     * from the curves (zero in every file plush has seen) -- so the first row alone does not hold the Z
     * and rotation curves. */
    uint8_t interpolation[64];
} plush_vmd_bone_key;

typedef struct plush_vmd_morph_key {
    plush_str name;
    uint8_t name_raw[PLUSH_VMD_MORPH_NAME];
    uint32_t frame;
    float weight;
} plush_vmd_morph_key;

typedef struct plush_vmd_camera_key {
    uint32_t frame;
    float distance;
    float position[3];
    float rotation[3];          /* radians */
    uint8_t interpolation[24];
    uint32_t view_angle;        /* degrees */
    uint8_t perspective_off;    /* as stored: 0 perspective, 1 orthographic */
} plush_vmd_camera_key;

typedef struct plush_vmd_light_key {
    uint32_t frame;
    float color[3];
    float direction[3];
} plush_vmd_light_key;

typedef struct plush_vmd_shadow_key {
    uint32_t frame;
    uint8_t mode;               /* 0 off, 1 mode 1, 2 mode 2 */
    float distance;
} plush_vmd_shadow_key;

typedef struct plush_vmd_ik_state {
    plush_str name;
    uint8_t name_raw[PLUSH_VMD_IK_NAME];
    uint8_t enabled;
} plush_vmd_ik_state;

typedef struct plush_vmd_property_key {
    uint32_t frame;
    uint8_t visible;
    uint32_t ik_count;
    plush_vmd_ik_state *ik;
} plush_vmd_property_key;

typedef struct plush_vmd_motion {
    int header_version;                 /* 1 ("...file", 10-byte model name) or 2 ("...0002", 20 bytes) */
    uint8_t header_raw[30];             /* the signature field as stored */
    plush_str model_name;
    uint8_t model_name_raw[PLUSH_VMD_MODEL_NAME_V2];
    int sections_present;               /* last section the file held (PLUSH_VMD_SECTION_*); 0 when it
                                           ended after the header; plush_vmd_create sets the last one */

    size_t bone_key_count;
    plush_vmd_bone_key *bone_keys;
    size_t morph_key_count;
    plush_vmd_morph_key *morph_keys;
    size_t camera_key_count;
    plush_vmd_camera_key *camera_keys;
    size_t light_key_count;
    plush_vmd_light_key *light_keys;
    size_t shadow_key_count;
    plush_vmd_shadow_key *shadow_keys;
    size_t property_key_count;
    plush_vmd_property_key *property_keys;

    size_t trailing_size;               /* bytes after the property section (kept, with a warning; written
                                           back only behind a complete property section) */
    const uint8_t *trailing;

    plush_arena arena;
} plush_vmd_motion;

/* Reads a VMD from memory: every section, text decoded from Shift-JIS (raw bytes kept where it does not
 * decode), trailing bytes kept with a warning; errors name the section, key and byte offset. */
plush_status plush_vmd_read(const uint8_t *data, size_t size, plush_vmd_motion **out, plush_diag *diag);
/* plush_vmd_read on the file's bytes; sets diag->file to path when it is NULL. */
plush_status plush_vmd_read_file(const char *path, plush_vmd_motion **out, plush_diag *diag);
/* Highest frame number over all keys (0 for an empty motion). */
uint32_t plush_vmd_last_frame(const plush_vmd_motion *motion);

/* An empty version-2 motion; fill it with memory from plush_vmd_arena. */
plush_vmd_motion *plush_vmd_create(void);
plush_arena *plush_vmd_arena(plush_vmd_motion *motion);
void plush_vmd_free(plush_vmd_motion *motion);

typedef struct plush_vmd_write_options {
    bool truncate_names;     /* cut names that do not fit at a character boundary instead of failing */
} plush_vmd_write_options;

/* Appends VMD bytes to out; on failure nothing is appended. Sections are written up to sections_present,
 * and further when a later array holds keys. A name whose name_raw decodes (up to its NUL) to exactly
 * name.s is written as stored; any other is encoded to CP932 and zero-padded: PLUSH_E_RANGE (naming the
 * key) when it does not fit, unless truncate_names cuts it at a character boundary; PLUSH_E_ENCODING when
 * CP932 cannot hold a character. header_version must be 1 or 2 (PLUSH_E_ARGUMENT otherwise); header_raw
 * is written as stored while it holds that version's signature. */
plush_status plush_vmd_write(const plush_vmd_motion *motion, const plush_vmd_write_options *options, plush_buf *out,
                             plush_diag *diag);
/* plush_vmd_write into memory, then an atomic write (temporary file + rename) to path. */
plush_status plush_vmd_write_file(const plush_vmd_motion *motion, const plush_vmd_write_options *options,
                                  const char *path, plush_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
