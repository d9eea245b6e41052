/* Shift-JIS (CP932), as VMD and VPD store their text: the platform's converter (iconv, or Windows' own code
 * page 932) behind the cut-character and replacement rules every reader shares. */
#include "core/platform.h"
#include "plush/core.h"
#include "plush/sys/core.h"

#include <stdlib.h>
#include <string.h>

struct plush_sjis {
    plush__os_cp932 *codec;
};

plush_status plush_sjis_create(plush_sjis **out)
{
    *out = NULL;
    plush_sjis *s = calloc(1, sizeof *s);
    if (!s)
        return PLUSH_E_NOMEM;
    s->codec = plush__os_cp932_open();
    if (!s->codec) {
        plush_sjis_destroy(s);
        return PLUSH_E_LIBRARY;
    }
    *out = s;
    return PLUSH_OK;
}

void plush_sjis_destroy(plush_sjis *sjis)
{
    if (!sjis)
        return;
    plush__os_cp932_close(sjis->codec);
    free(sjis);
}

plush_status plush_sjis_decode(plush_sjis *sjis, plush_arena *arena, const uint8_t *src, size_t n,
                               plush_str *out, bool *lossy)
{
    memset(out, 0, sizeof *out);
    bool bad = false;
    size_t len = 0;
    while (len < n && src[len])
        len++;
    if (len > (SIZE_MAX - 4) / 3)
        return PLUSH_E_RANGE;
    /* A CP932 byte never gives more than 3 UTF-8 bytes (U+FFFD included). */
    size_t cap = len * 3 + 4;
    char *d = plush_arena_alloc(arena, cap);
    if (!d)
        return PLUSH_E_NOMEM;
    bool ascii = true;
    for (size_t i = 0; i < len; i++)
        ascii &= src[i] < 0x80;
    size_t o = 0;
    if (ascii) {
        memcpy(d, src, len);
        o = len;
    } else {
        o = plush__os_cp932_decode(sjis->codec, src, len, d, cap - 1, &bad);
    }
    d[o] = 0;
    out->s = d;
    out->len = (uint32_t)o;
    if (bad) {
        uint8_t *raw = plush_arena_alloc(arena, len ? len : 1);
        if (!raw)
            return PLUSH_E_NOMEM;
        memcpy(raw, src, len);
        out->raw = raw;
        out->raw_len = (uint32_t)len;
    }
    if (lossy)
        *lossy = bad;
    return PLUSH_OK;
}

/* Length of the CP932 character starting with lead byte c. */
static size_t sjis_char_len(uint8_t c)
{
    return ((c >= 0x81 && c <= 0x9F) || (c >= 0xE0 && c <= 0xFC)) ? 2 : 1;
}

plush_status plush_sjis_encode(plush_sjis *sjis, const char *s, size_t len, uint8_t *dst, size_t cap,
                               bool truncate, size_t *written)
{
    *written = 0;
    /* CP932 never needs more bytes than UTF-8 for the same text. */
    uint8_t small[64];
    uint8_t *tmp = len + 4 <= sizeof small ? small : malloc(len + 4);
    if (!tmp)
        return PLUSH_E_NOMEM;
    size_t n = 0;
    bool ascii = true;
    for (size_t i = 0; i < len; i++)
        ascii &= (uint8_t)s[i] < 0x80;
    plush_status st = PLUSH_OK;
    if (ascii) {
        memcpy(tmp, s, len);
        n = len;
    } else {
        if (!plush__os_cp932_encode(sjis->codec, s, len, tmp, len + 4, &n))
            st = PLUSH_E_ENCODING;
    }
    if (st == PLUSH_OK && n > cap) {
        if (!truncate) {
            st = PLUSH_E_RANGE;
        } else {
            size_t k = 0;
            while (k < n && k + sjis_char_len(tmp[k]) <= cap)
                k += sjis_char_len(tmp[k]);
            n = k;
        }
    }
    if (st == PLUSH_OK) {
        memcpy(dst, tmp, n);
        *written = n;
    }
    if (tmp != small)
        free(tmp);
    return st;
}
