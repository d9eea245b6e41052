/* UTF-16LE <-> UTF-8. Broken input never fails: it reads as U+FFFD and keeps its raw bytes. And how near
 * two names are (core/text.h). */
#include "core/text.h"
#include "plush/core.h"
#include "plush/sys/core.h"

#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Decodes one UTF-8 sequence; returns bytes consumed (>= 1) and *cp, U+FFFD for a bad sequence. */
static size_t utf8_next(const uint8_t *s, size_t n, uint32_t *cp)
{
    uint8_t c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t len;
    uint32_t v, min;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        v = c & 0x1F;
        min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        v = c & 0x0F;
        min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        v = c & 0x07;
        min = 0x10000;
    } else {
        *cp = 0xFFFD;
        return 1;
    }
    if (len > n) {
        *cp = 0xFFFD;
        return 1;
    }
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            *cp = 0xFFFD;
            return 1;
        }
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
        *cp = 0xFFFD;
        return 1;
    }
    *cp = v;
    return len;
}

static size_t utf8_put(uint32_t cp, uint8_t *d)
{
    if (cp < 0x80) {
        d[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        d[0] = (uint8_t)(0xC0 | (cp >> 6));
        d[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        d[0] = (uint8_t)(0xE0 | (cp >> 12));
        d[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        d[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    d[0] = (uint8_t)(0xF0 | (cp >> 18));
    d[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    d[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    d[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

bool plush_utf8_valid(const char *s, size_t len)
{
    const uint8_t *p = (const uint8_t *)s;
    size_t i = 0;
    while (i < len) {
        if (p[i] < 0x80) {
            i++;
            continue;
        }
        uint32_t cp;
        size_t k = utf8_next(p + i, len - i, &cp);
        if (cp == 0xFFFD && !(k == 3 && p[i] == 0xEF && p[i + 1] == 0xBF && p[i + 2] == 0xBD))
            return false;
        i += k;
    }
    return true;
}

static plush_status decode_utf16(plush_arena *arena, const uint8_t *src, size_t n, plush_str *out, bool *lossy)
{
    size_t units = n / 2;
    if (units > (SIZE_MAX - 4) / 3)
        return PLUSH_E_NOMEM;
    /* Each unit gives at most 3 bytes (a pair gives 4 for 2 units); an odd tail byte gives U+FFFD. */
    uint8_t *d = plush_arena_alloc(arena, units * 3 + 4);
    if (!d)
        return PLUSH_E_NOMEM;
    bool bad = (n & 1) != 0;
    size_t o = 0;
    for (size_t i = 0; i < units; i++) {
        uint32_t u = (uint32_t)src[2 * i] | ((uint32_t)src[2 * i + 1] << 8);
        if (u < 0x80) {
            d[o++] = (uint8_t)u;
            continue;
        }
        if (u >= 0xD800 && u <= 0xDBFF && i + 1 < units) {
            uint32_t u2 = (uint32_t)src[2 * i + 2] | ((uint32_t)src[2 * i + 3] << 8);
            if (u2 >= 0xDC00 && u2 <= 0xDFFF) {
                o += utf8_put(0x10000 + ((u - 0xD800) << 10) + (u2 - 0xDC00), d + o);
                i++;
                continue;
            }
        }
        if (u >= 0xD800 && u <= 0xDFFF) {
            u = 0xFFFD;
            bad = true;
        }
        o += utf8_put(u, d + o);
    }
    if (n & 1)
        o += utf8_put(0xFFFD, d + o);
    d[o] = 0;
    out->s = (const char *)d;
    out->len = (uint32_t)o;
    *lossy = bad;
    return PLUSH_OK;
}

static plush_status decode_utf8(plush_arena *arena, const uint8_t *src, size_t n, plush_str *out, bool *lossy)
{
    if (plush_utf8_valid((const char *)src, n)) {
        char *d = plush_arena_strdup(arena, (const char *)src, n);
        if (!d)
            return PLUSH_E_NOMEM;
        out->s = d;
        out->len = (uint32_t)n;
        *lossy = false;
        return PLUSH_OK;
    }
    if (n > (SIZE_MAX - 1) / 3)
        return PLUSH_E_NOMEM;
    uint8_t *d = plush_arena_alloc(arena, n * 3 + 1);
    if (!d)
        return PLUSH_E_NOMEM;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        i += utf8_next(src + i, n - i, &cp);
        o += utf8_put(cp, d + o);
    }
    d[o] = 0;
    out->s = (const char *)d;
    out->len = (uint32_t)o;
    *lossy = true;
    return PLUSH_OK;
}

plush_status plush_text_decode(plush_arena *arena, plush_encoding enc, const uint8_t *src, size_t n,
                               plush_str *out, bool *lossy)
{
    bool bad = false;
    memset(out, 0, sizeof *out);
    if (n > UINT32_MAX / 4)
        return PLUSH_E_RANGE;
    plush_status st = enc == PLUSH_ENC_UTF8 ? decode_utf8(arena, src, n, out, &bad)
                                            : decode_utf16(arena, src, n, out, &bad);
    if (st != PLUSH_OK)
        return st;
    if (bad) {
        uint8_t *raw = plush_arena_alloc(arena, n);
        if (!raw)
            return PLUSH_E_NOMEM;
        memcpy(raw, src, n);
        out->raw = raw;
        out->raw_len = (uint32_t)n;
    }
    if (lossy)
        *lossy = bad;
    return PLUSH_OK;
}

size_t plush_text_encoded_size(plush_encoding enc, const char *s, size_t len)
{
    const uint8_t *p = (const uint8_t *)s;
    size_t bytes = 0;
    if (enc == PLUSH_ENC_UTF8) {
        if (plush_utf8_valid(s, len))
            return len;
        uint8_t tmp[4];
        for (size_t i = 0; i < len;) {
            uint32_t cp;
            i += utf8_next(p + i, len - i, &cp);
            bytes += utf8_put(cp, tmp);
        }
        return bytes;
    }
    for (size_t i = 0; i < len;) {
        if (p[i] < 0x80) {
            bytes += 2;
            i++;
            continue;
        }
        uint32_t cp;
        i += utf8_next(p + i, len - i, &cp);
        bytes += cp >= 0x10000 ? 4 : 2;
    }
    return bytes;
}

size_t plush_text_encode(plush_encoding enc, const char *s, size_t len, uint8_t *dst)
{
    const uint8_t *p = (const uint8_t *)s;
    size_t o = 0;
    if (enc == PLUSH_ENC_UTF8) {
        if (plush_utf8_valid(s, len)) {
            if (len)
                memcpy(dst, s, len);
            return len;
        }
        for (size_t i = 0; i < len;) {
            uint32_t cp;
            i += utf8_next(p + i, len - i, &cp);
            o += utf8_put(cp, dst + o);
        }
        return o;
    }
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        if (p[i] < 0x80)
            cp = p[i++];
        else
            i += utf8_next(p + i, len - i, &cp);
        if (cp >= 0x10000) {
            uint32_t v = cp - 0x10000;
            uint32_t hi = 0xD800 + (v >> 10), lo = 0xDC00 + (v & 0x3FF);
            dst[o++] = (uint8_t)hi;
            dst[o++] = (uint8_t)(hi >> 8);
            dst[o++] = (uint8_t)lo;
            dst[o++] = (uint8_t)(lo >> 8);
        } else {
            dst[o++] = (uint8_t)cp;
            dst[o++] = (uint8_t)(cp >> 8);
        }
    }
    return o;
}

/* ---- nearness of names ------------------------------------------------------------------------------ */

static uint32_t fold_ascii(uint32_t c)
{
    return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/* The characters of s, folded; *count of them. NULL when out of memory. */
static uint32_t *characters(const char *s, size_t len, size_t *count)
{
    uint32_t *out = malloc((len ? len : 1) * sizeof *out);
    size_t n = 0;
    for (size_t i = 0; out && i < len;) {
        uint32_t cp;
        i += utf8_next((const uint8_t *)s + i, len - i, &cp);
        out[n++] = fold_ascii(cp);
    }
    *count = n;
    return out;
}

size_t plush__text_distance(const char *a, size_t alen, const char *b, size_t blen)
{
    size_t na, nb;
    uint32_t *ca = characters(a, alen, &na), *cb = characters(b, blen, &nb);
    size_t *row = malloc((nb + 1) * sizeof *row);
    size_t d = SIZE_MAX;
    if (ca && cb && row) {
        /* one row of the table at a time: row[j] is the distance between a's first i and b's first j */
        for (size_t j = 0; j <= nb; j++)
            row[j] = j;
        for (size_t i = 1; i <= na; i++) {
            size_t diagonal = row[0];
            row[0] = i;
            for (size_t j = 1; j <= nb; j++) {
                size_t above = row[j];
                size_t best = diagonal + (ca[i - 1] != cb[j - 1]);
                best = above + 1 < best ? above + 1 : best;
                best = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
                row[j] = best;
                diagonal = above;
            }
        }
        d = row[nb];
    }
    free(ca), free(cb), free(row);
    return d;
}

bool plush__text_contains(const char *text, size_t len, const char *needle, size_t needle_len)
{
    for (size_t i = 0; needle_len <= len && i <= len - needle_len; i++) {
        size_t k = 0;
        while (k < needle_len && fold_ascii((unsigned char)text[i + k]) == fold_ascii((unsigned char)needle[k]))
            k++;
        if (k == needle_len)
            return true;
    }
    return false;
}

bool plush__parse_decimal(const char *s, size_t n, double *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '+' || s[i] == '-'))
        neg = s[i++] == '-';
    uint64_t mant = 0;
    int digits = 0;
    long exp10 = 0;
    bool any = false;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, any = true) {
        if (digits < 19) {
            mant = mant * 10 + (uint64_t)(s[i] - '0');
            digits += mant != 0;
        } else {
            exp10++;
        }
    }
    if (i < n && s[i] == '.')
        for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, any = true)
            if (digits < 19) {
                mant = mant * 10 + (uint64_t)(s[i] - '0');
                digits += mant != 0;
                exp10--;
            }
    if (!any)
        return false;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        bool eneg = false;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            eneg = s[i++] == '-';
        if (i >= n || s[i] < '0' || s[i] > '9')
            return false;
        long e = 0;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            if (e < 100000)
                e = e * 10 + (s[i] - '0');
        exp10 += eneg ? -e : e;
    }
    if (i != n)
        return false;
    double v = (double)mant;
    if (mant != 0 && exp10 != 0) {
        if (exp10 < -400)
            v = 0;
        else if (exp10 > 400)
            v = INFINITY;
        else
            v = exp10 < 0 ? v / pow(10.0, (double)-exp10) : v * pow(10.0, (double)exp10);
    }
    *out = neg ? -v : v;
    return true;
}
