/* Texture files: their headers, their texels for drawing, texels as pictures a glTF file embeds (render.h,
 * plush_image_texture_info, plush_image_decode_texture, plush_image_encode_texture).
 *
 * stb_image is compiled into this file alone, static (STB_IMAGE_STATIC), reading from memory only and only
 * the four formats MMD models use; its warnings are silenced around the include (its code is not ours). */
#include "plush/sys/render.h"
#include "plush/sys/core.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_NO_STDIO
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_ONLY_BMP
#define STBI_ONLY_TGA
#define STBI_NO_GIF
/* said outright (they are stb_image's defaults): a decoded texture is handed on and released with free() */
#define STBI_MALLOC(size) malloc(size)
#define STBI_REALLOC(p, size) realloc(p, size)
#define STBI_FREE(p) free(p)
#include "render/stb_quiet.h"
PLUSH_STB_QUIET_BEGIN
#include <stb/stb_image.h>
PLUSH_STB_QUIET_END
#if defined(__GNUC__)
/* stb_image 2.27 declares stbi_set_unpremultiply_on_load_thread static without defining it; the compiler
 * says so at the end of the file, outside the push/pop above */
#pragma GCC diagnostic ignored "-Wunused-function"
#endif

static bool is_jpeg(const uint8_t *d, size_t n) { return n >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF; }

/* Whether every Huffman table of a JPEG (each DHT segment, before and between scans) holds at most 256
 * codes. The stb_image Debian ships writes one byte per code into a 257-byte table without checking: a
 * hostile file would write past it. Segments are walked by their lengths; a scan's entropy-coded data is
 * skipped up to the next marker that is not a restart or a stuffed byte. */
static bool jpeg_tables_fit(const uint8_t *d, size_t n)
{
    size_t i = 2;
    while (i + 1 < n) {
        if (d[i] != 0xFF) {
            i++; /* stb_image looks past bytes that are no marker, so this does too */
            continue;
        }
        uint8_t m = d[i + 1];
        if (m == 0xFF) {
            i++; /* fill byte */
            continue;
        }
        if (m == 0xD9)
            return true;
        if (m == 0x01 || (m >= 0xD0 && m <= 0xD8)) {
            i += 2;
            continue;
        }
        if (i + 4 > n)
            return true;
        size_t len = (size_t)d[i + 2] << 8 | d[i + 3], end = i + 2 + len;
        if (len < 2)
            return true;
        if (m == 0xC4) /* stb_image reads past the end as zeros: so does this */
            for (size_t t = i + 4; t < end && t < n;) {
                size_t codes = 0;
                for (size_t k = 1; k <= 16 && t + k < n; k++)
                    codes += d[t + k];
                if (codes > 256)
                    return false;
                t += 17 + codes;
            }
        i = end;
        if (m == 0xDA) /* a scan: its data runs to the next real marker */
            while (i + 1 < n && !(d[i] == 0xFF && d[i + 1] != 0 && !(d[i + 1] >= 0xD0 && d[i + 1] <= 0xD7)))
                i++;
    }
    return true;
}

plush_status plush_image_texture_info(const uint8_t *data, size_t size, int *width, int *height, bool *jpeg,
                                      plush_diag *diag)
{
    *width = *height = 0;
    *jpeg = false;
    if (!data)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "image", -1, "no texture bytes");
    if (size > INT_MAX)
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "image", -1, "texture of %zu bytes is too large", size);
    /* before stb_image reads the header: reading it builds the tables */
    if (size >= 2 && data[0] == 0xFF && data[1] == 0xD8 && !jpeg_tables_fit(data, size))
        return plush_diag_fail(diag, PLUSH_E_FORMAT, 0, "image", -1, "a JPEG Huffman table of more than 256 codes");
    int w = 0, h = 0, comp = 0;
    if (!stbi_info_from_memory(data, (int)size, &w, &h, &comp) || w <= 0 || h <= 0)
        return plush_diag_fail(diag, PLUSH_E_FORMAT, 0, "image", -1, "not a BMP, TGA, PNG or JPEG picture");
    if (w > PLUSH_IMAGE_MAX_SIZE || h > PLUSH_IMAGE_MAX_SIZE)
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "image", -1, "%dx%d texels is over the %dx%d limit", w, h,
                               PLUSH_IMAGE_MAX_SIZE, PLUSH_IMAGE_MAX_SIZE);
    /* A 36-byte TGA may promise 1800x1800 texels, which the decoder then makes up from nothing: no picture of
     * the four formats packs more than PLUSH_IMAGE_MAX_PACKING texels into a byte (a one-colour PNG at one
     * bit a texel, deflated at its best, packs about 8,000), so a header promising more lies. */
    if ((uint64_t)w * (uint64_t)h > (uint64_t)size * PLUSH_IMAGE_MAX_PACKING)
        return plush_diag_fail(diag, PLUSH_E_FORMAT, 0, "image", -1,
                               "%dx%d texels promised by %zu bytes: more than any BMP, TGA, PNG or JPEG holds", w, h,
                               size);
    *width = w, *height = h;
    *jpeg = is_jpeg(data, size);
    return PLUSH_OK;
}

plush_status plush_image_encode_texture(const plush_render_texture *texture, plush_buf *out, bool *translucent,
                                        plush_diag *diag)
{
    if (!texture || !texture->rgba || !out || !translucent)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "image", -1, "no texels or no output");
    size_t n = (size_t)texture->width * (size_t)texture->height;
    bool alpha = false;
    for (size_t i = 0; i < n && !alpha; i++)
        alpha = texture->rgba[4 * i + 3] != 255;
    *translucent = alpha;
    if (alpha)
        return plush_image_encode_png_pixels(texture->rgba, texture->width, texture->height, 4, out, diag);
    /* opaque: RGB, a smaller PNG, and viewers need not blend */
    uint8_t *rgb = malloc(n ? 3 * n : 1);
    if (!rgb)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "image", -1, "out of memory");
    for (size_t i = 0; i < n; i++)
        memcpy(rgb + 3 * i, texture->rgba + 4 * i, 3);
    plush_status st = plush_image_encode_png_pixels(rgb, texture->width, texture->height, 3, out, diag);
    free(rgb);
    return st;
}

plush_status plush_image_decode_texture(const uint8_t *data, size_t size, int max_side, plush_render_texture *out,
                                        plush_diag *diag)
{
    if (!out)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "image", -1, "no texture to decode into");
    *out = (plush_render_texture){0};
    if (!data)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "image", -1, "no texture bytes");
    int w = 0, h = 0, comp = 0;
    bool jpeg = false;
    plush_status st = plush_image_texture_info(data, size, &w, &h, &jpeg, diag);
    if (st != PLUSH_OK)
        return st;
    /* asked before decoding: the header alone says how much memory the texels would take */
    if (w > max_side || h > max_side)
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "image", -1, "%dx%d texels is over the %dx%d limit", w, h,
                               max_side, max_side);
    uint8_t *px = stbi_load_from_memory(data, (int)size, &w, &h, &comp, 4);
    if (!px)
        return plush_diag_fail(diag, PLUSH_E_FORMAT, 0, "image", -1, "cannot decode: %s", stbi_failure_reason());
    size_t n = (size_t)w * (size_t)h;
    bool cutout = false;
    for (size_t i = 0; i < n && !cutout; i++)
        cutout = px[4 * i + 3] < 128;
    *out = (plush_render_texture){.width = w, .height = h, .rgba = px, .cutout = cutout};
    return PLUSH_OK;
}

void plush_render_texture_free(plush_render_texture *texture)
{
    if (!texture)
        return;
    free(texture->rgba);
    *texture = (plush_render_texture){0};
}
