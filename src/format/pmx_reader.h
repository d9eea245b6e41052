/* The PMX reader's shared state and helpers (internal to src/format): pmx_read.c holds the cursor
 * helpers and the entry points, pmx_read_geometry.c and pmx_read_physics.c the sections. */
#ifndef PLUSH_FORMAT_PMX_READER_H
#define PLUSH_FORMAT_PMX_READER_H

#include "cursor.h"
#include "pmx_internal.h"
#include "plush/sys/core.h"

#include <string.h>

typedef struct reader {
    cursor c;
    plush_pmx_model *m;
    plush_diag *diag;
    const char *section;
    int64_t index;
    /* Locating: when set, the walk stops at the start of this item and records its offset. */
    const char *find_section;
    int64_t find_index;
    int64_t found_offset;
    /* Vertices, additional UVs, SDEF data and faces are read and checked but not kept (a
     * summary-only read, and every locate walk); unkept, when set, collects what validation needs. */
    bool drop_geometry;
    pmx_unkept *unkept;
    plush_pmx_value_issue *issues; /* m->value_issues, writable; allocated at the first issue */
} reader;

/* Stops the walk when the locate target is reached. */
#define ITEM(r, sec, i)                                                                             \
    do {                                                                                            \
        (r)->section = (sec);                                                                       \
        (r)->index = (int64_t)(i);                                                                  \
        if ((r)->find_section && (r)->find_index == (int64_t)(i) && !strcmp((r)->find_section, sec)) { \
            (r)->found_offset = (int64_t)(r)->c.pos;                                                \
            return false;                                                                           \
        }                                                                                           \
    } while (0)

/* For a helper called once per vertex from more than one place, which GCC would otherwise call. */
#if defined(__GNUC__)
#define PMX_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define PMX_ALWAYS_INLINE inline
#endif

static inline int32_t idx_signed(cursor *c, uint8_t size)
{
    switch (size) {
    case 1: return (int8_t)cur_u8(c);
    case 2: return (int16_t)cur_u16(c);
    default: return cur_i32(c);
    }
}

static inline int32_t idx_vertex(cursor *c, uint8_t size)
{
    switch (size) {
    case 1: return (int32_t)cur_u8(c);
    case 2: return (int32_t)cur_u16(c);
    default: return cur_i32(c);
    }
}

bool plush__pmx_rd_fail(reader *r, plush_status st, size_t offset, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Room for n bytes of `what`; a short file is PLUSH_E_TRUNCATED at the field's offset. */
bool plush__pmx_rd_need(reader *r, size_t n, const char *what);
bool plush__pmx_rd_text(reader *r, plush_str *out, const char *what);
/* Starts a section (r->section set); stops a locate walk aimed at the section itself. */
bool plush__pmx_rd_section_start(reader *r);
/* An i32 count, checked against the bytes left for count records of at least min_size bytes. */
bool plush__pmx_rd_count(reader *r, const char *what, size_t min_size, size_t *out);
void *plush__pmx_rd_alloc(reader *r, size_t n, size_t size);

/* pmx_read_values.c: a value issue of the current item at offset (a warning, kept in the model). */
void plush__pmx_rd_note(reader *r, size_t offset, const char *what);
/* False (and one note at the first bad float) when one of the n floats read from offset is not finite. */
bool plush__pmx_rd_finite(reader *r, const float *v, size_t n, size_t offset, const char *what);
/* Every value of one vertex read from start (type_at: its weight type byte). */
void plush__pmx_rd_check_vertex(reader *r, const plush_pmx_vertex *v, const float *uvs, size_t auv,
                                const plush_pmx_sdef *sdef, size_t start, size_t type_at, uint8_t bs);
/* Weights are fractions; files from editors hold rounding a little outside 0..1. */
#define PMX_WEIGHT_SLACK 1e-3f

/* The common case, cheaply: the n floats stored at p are all finite when no exponent is all ones (an
 * all-ones exponent plus one carries into the sign bit; the ORs do not depend on each other). */
#define PMX_NONFINITE_BIT(u) (((u) & 0x7f800000u) + 0x00800000u) /* bit 31 set for NaN and inf */
static PMX_ALWAYS_INLINE bool pmx_stored_finite(const uint8_t *p, size_t n)
{
    uint32_t bad = 0;
    for (size_t k = 0; k < n; k++) {
        uint32_t u;
        memcpy(&u, p + 4 * k, 4);
        bad |= PMX_NONFINITE_BIT(u);
    }
    return !(bad & 0x80000000u);
}

/* Whether the vertex read from start (position, normal, UV, additional UVs, weights, edge scale) needs
 * no closer look (plush__pmx_rd_check_vertex). */
static PMX_ALWAYS_INLINE bool pmx_vertex_values_ok(const reader *r, const plush_pmx_vertex *v, size_t start,
                                                   size_t auv)
{
    if (!pmx_stored_finite(r->c.base + start, 8 + 4 * auv) || !pmx_stored_finite(r->c.base + r->c.pos - 4, 1))
        return false;
    if (v->weight_type == PLUSH_PMX_BDEF1)
        return true;
    bool weights = true;
    for (int k = 0; k < 4; k++)
        weights &= v->weights[k] >= -PMX_WEIGHT_SLACK && v->weights[k] <= 1 + PMX_WEIGHT_SLACK;
    /* SDEF's C, R0, R1 lie just before the edge scale */
    return weights && (v->weight_type != PLUSH_PMX_SDEF || pmx_stored_finite(r->c.base + r->c.pos - 40, 9));
}

/* The n vertices from offset first again, each looked at closely where pmx_vertex_values_ok says so. */
void plush__pmx_rd_check_vertices(reader *r, size_t first, size_t n);
/* A note for the lowest-numbered bone of every parent cycle, at its parent index (parent_at[bone]). */
void plush__pmx_rd_check_bone_cycles(reader *r, const size_t *parent_at);

bool plush__pmx_rd_header(reader *r);
bool plush__pmx_rd_vertices(reader *r);
bool plush__pmx_rd_faces(reader *r);
bool plush__pmx_rd_textures(reader *r);
bool plush__pmx_rd_materials(reader *r);
bool plush__pmx_rd_bones(reader *r);
bool plush__pmx_rd_morphs(reader *r);
bool plush__pmx_rd_frames(reader *r);
bool plush__pmx_rd_rigid_bodies(reader *r);
bool plush__pmx_rd_joints(reader *r);
bool plush__pmx_rd_soft_bodies(reader *r);

#endif
