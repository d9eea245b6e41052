/* A bounded little-endian reader shared by the binary parsers (internal to src/format).
 *
 * Callers check room once per record with cur_need() and then read the record's fixed fields with
 * the unchecked cur_*() getters; a failed check marks the cursor and records where data ran out.
 * After the first failure every cur_need() fails, so one error reaches the caller. */
#ifndef PLUSH_FORMAT_CURSOR_H
#define PLUSH_FORMAT_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct cursor {
    const uint8_t *base;
    size_t size;
    size_t pos;
    bool failed;
} cursor;

static inline void cur_init(cursor *c, const uint8_t *data, size_t size)
{
    c->base = data;
    c->size = size;
    c->pos = 0;
    c->failed = false;
}

static inline size_t cur_left(const cursor *c) { return c->size - c->pos; }

/* True when n more bytes are there; otherwise marks the cursor failed. */
static inline bool cur_need(cursor *c, size_t n)
{
    if (c->failed || n > c->size - c->pos) {
        c->failed = true;
        return false;
    }
    return true;
}

static inline const uint8_t *cur_ptr(const cursor *c) { return c->base + c->pos; }
static inline void cur_skip(cursor *c, size_t n) { c->pos += n; }

static inline uint8_t cur_u8(cursor *c) { return c->base[c->pos++]; }
static inline uint16_t cur_u16(cursor *c)
{
    uint16_t v;
    memcpy(&v, c->base + c->pos, 2); /* x86-64 and every target plush builds for is little-endian */
    c->pos += 2;
    return v;
}
static inline uint32_t cur_u32(cursor *c)
{
    uint32_t v;
    memcpy(&v, c->base + c->pos, 4);
    c->pos += 4;
    return v;
}
static inline int32_t cur_i32(cursor *c) { return (int32_t)cur_u32(c); }
static inline float cur_f32(cursor *c)
{
    float v;
    memcpy(&v, c->base + c->pos, 4);
    c->pos += 4;
    return v;
}
static inline void cur_floats(cursor *c, float *dst, size_t n)
{
    memcpy(dst, c->base + c->pos, n * 4);
    c->pos += n * 4;
}
static inline void cur_bytes(cursor *c, void *dst, size_t n)
{
    memcpy(dst, c->base + c->pos, n);
    c->pos += n;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "plush's readers assume a little-endian host"
#endif

/* Little-endian appenders for writers (buffer space reserved by the caller). */
static inline uint8_t *put_u8(uint8_t *p, uint8_t v) { *p = v; return p + 1; }
static inline uint8_t *put_u16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); return p + 2; }
static inline uint8_t *put_u32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); return p + 4; }
static inline uint8_t *put_f32s(uint8_t *p, const float *v, size_t n) { memcpy(p, v, n * 4); return p + n * 4; }

#endif
