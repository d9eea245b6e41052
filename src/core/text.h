/* Text helpers the library shares (internal; not installed): how near two names are, for messages that
 * name what the user may have meant, and decimal numbers as the text formats (OBJ, VPD) write them.
 *
 *     size_t d = plush__text_distance("材質99", 8, "材質9", 7);   // 1: one character deleted
 */
#ifndef PLUSH_CORE_TEXT_H
#define PLUSH_CORE_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* The edit distance between two UTF-8 texts over characters (insert, delete or replace one), ASCII
 * letters compared without case; a broken byte counts as one character. SIZE_MAX when out of memory. */
size_t plush__text_distance(const char *a, size_t alen, const char *b, size_t blen);
/* True when needle occurs in the len bytes of text, ASCII letters compared without case (an empty
 * needle occurs everywhere). */
bool plush__text_contains(const char *text, size_t len, const char *needle, size_t needle_len);
/* The n characters of s as a decimal number, without the C library's locale (a file always uses '.'):
 * [sign] digits [. digits] [e [sign] digits], or [sign] . digits. Up to 19 significant digits are kept
 * exactly, far more than a float holds; an exponent beyond +-400 gives 0 or infinity. False when the
 * characters are not such a number (all n must belong to it). */
bool plush__parse_decimal(const char *s, size_t n, double *out);

#endif
