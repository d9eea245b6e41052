/* Block arena: parsed files live in a few large blocks freed by one call. */
#include "plush/core.h"
#include "plush/sys/core.h"

#include <stdlib.h>
#include <string.h>

struct plush_arena_block {
    plush_arena_block *next;
    size_t size;
    size_t used;
    _Alignas(16) unsigned char data[];
};

enum { ARENA_ALIGN = 16, ARENA_DEFAULT_BLOCK = 64 * 1024 };

static plush_arena_block *block_new(size_t size)
{
    if (size > SIZE_MAX - sizeof(plush_arena_block))
        return NULL;
    plush_arena_block *b = malloc(sizeof(plush_arena_block) + size);
    if (!b)
        return NULL;
    b->next = NULL;
    b->size = size;
    b->used = 0;
    return b;
}

void *plush_arena_alloc(plush_arena *arena, size_t size)
{
    if (size == 0)
        size = 1;
    if (size > SIZE_MAX - ARENA_ALIGN)
        return NULL;
    size_t need = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    plush_arena_block *b = arena->head;
    if (!b || b->size - b->used < need) {
        size_t bs = arena->block_size ? arena->block_size : ARENA_DEFAULT_BLOCK;
        /* A big request gets a block of its own, placed behind the current one so the current
         * block's free space is not wasted. */
        if (need > bs / 4 && b) {
            plush_arena_block *big = block_new(need);
            if (!big)
                return NULL;
            big->used = need;
            big->next = b->next;
            b->next = big;
            arena->total += size;
            memset(big->data, 0, need);
            return big->data;
        }
        plush_arena_block *nb = block_new(need > bs ? need : bs);
        if (!nb)
            return NULL;
        nb->next = b;
        arena->head = nb;
        b = nb;
    }
    void *p = b->data + b->used;
    b->used += need;
    arena->total += size;
    memset(p, 0, need);
    return p;
}

void *plush_arena_array(plush_arena *arena, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return NULL;
    return plush_arena_alloc(arena, count * size);
}

char *plush_arena_strdup(plush_arena *arena, const char *s, size_t len)
{
    if (len == SIZE_MAX)
        return NULL;
    char *p = plush_arena_alloc(arena, len + 1);
    if (p && len)
        memcpy(p, s, len);
    return p;
}

void plush_arena_free(plush_arena *arena)
{
    if (!arena)
        return;
    plush_arena_block *b = arena->head;
    while (b) {
        plush_arena_block *n = b->next;
        free(b);
        b = n;
    }
    arena->head = NULL;
    arena->total = 0;
}

bool plush_buf_reserve(plush_buf *buf, size_t extra)
{
    if (buf->failed)
        return false;
    if (extra <= buf->capacity - buf->size)
        return true;
    if (extra > SIZE_MAX / 2 - buf->size) {
        buf->failed = true;
        return false;
    }
    size_t cap = buf->capacity ? buf->capacity : 4096;
    while (cap < buf->size + extra)
        cap *= 2;
    uint8_t *p = realloc(buf->data, cap);
    if (!p) {
        buf->failed = true;
        return false;
    }
    buf->data = p;
    buf->capacity = cap;
    return true;
}

bool plush_buf_append(plush_buf *buf, const void *data, size_t size)
{
    if (!plush_buf_reserve(buf, size))
        return false;
    if (size)
        memcpy(buf->data + buf->size, data, size);
    buf->size += size;
    return true;
}

void plush_buf_free(plush_buf *buf)
{
    free(buf->data);
    buf->data = NULL;
    buf->size = buf->capacity = 0;
    buf->failed = false;
}
