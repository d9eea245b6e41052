/* Private to the VMD reader and writer: a small open-addressing map from a name field's bytes to what
 * was made of them, so that each distinct name is converted once however many keys carry it. */
#ifndef PLUSH_FORMAT_VMD_INTERNAL_H
#define PLUSH_FORMAT_VMD_INTERNAL_H

#include "plush/vmd.h"
#include "plush/sys/core.h"

typedef struct vmd_name_slot {
    const uint8_t *key;      /* NULL while the slot is empty; points at memory that outlives the map */
    uint32_t len;
    uint32_t hash;
    uint32_t tag;            /* separates entries of one key made for different field sizes */
    plush_str text;          /* reader: the decoded name; writer: what a stored field decodes to */
    plush_status status;     /* writer: how encoding the key went */
    uint8_t bytes[PLUSH_VMD_IK_NAME]; /* writer: the encoded field (byte_count bytes, no padding) */
    uint8_t byte_count;
} vmd_name_slot;

typedef struct vmd_name_map {
    vmd_name_slot *slots;
    size_t cap;              /* a power of two, or 0 before the first use */
    size_t used;
} vmd_name_map;

/* The slot for (key, len, tag). A new slot has *is_new set and must be filled by the caller before the
 * next call; its pointer stays valid until then. NULL when out of memory. */
vmd_name_slot *plush__vmd_names_get(vmd_name_map *map, const uint8_t *key, size_t len, uint32_t tag, bool *is_new);
void plush__vmd_names_free(vmd_name_map *map);

/* Bytes of a name field before its first NUL. */
static inline size_t vmd_field_len(const uint8_t *field, size_t size)
{
    size_t n = 0;
    while (n < size && field[n])
        n++;
    return n;
}

extern const char *const plush__vmd_section_names[PLUSH_VMD_SECTION_PROPERTIES + 1];

enum {
    VMD_SIGNATURE_SIZE = 30,
    VMD_BONE_RECORD = 111,
    VMD_MORPH_RECORD = 23,
    VMD_CAMERA_RECORD = 61,
    VMD_LIGHT_RECORD = 28,
    VMD_SHADOW_RECORD = 9,
    VMD_PROPERTY_FIXED = 9,  /* frame, visible, IK count; then the IK states */
    VMD_IK_RECORD = 21
};

#define VMD_SIGNATURE_V1 "Vocaloid Motion Data file"
#define VMD_SIGNATURE_V2 "Vocaloid Motion Data 0002"

#endif
