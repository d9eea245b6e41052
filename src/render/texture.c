/* Texture files to embeddable pictures and to texels for drawing (render.h, plush_image_convert_texture,
 * plush_image_decode_texture).
 *
 * stb_image is compiled into this file alone, static (STB_IMAGE_STATIC), reading from memory only and only
 * the four formats MMD models use; its warnings are silenced around the include (its code is not ours). */
#include "plush/render.h"

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

plush_status plush_image_convert_texture(const uint8_t *data, size_t size, plush_buf *out, const char **mime_type,
                                         bool *translucent, plush_diag *diag)
{
    if (!data || !out || !mime_type || !translucent)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "image", -1, "no texture or no output");
    if (size > INT_MAX)
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "image", -1, "texture of %zu bytes is too large", size);
    int w = 0, h = 0, comp = 0;
    if (!stbi_info_from_memory(data, (int)size, &w, &h, &comp) || w <= 0 || h <= 0 || w > PLUSH_IMAGE_MAX_SIZE ||
        h > PLUSH_IMAGE_MAX_SIZE)
        return plush_diag_fail(diag, PLUSH_E_FORMAT, 0, "image", -1, "not a picture stb_image reads (BMP, TGA, PNG, JPEG)");
    if (is_jpeg(data, size)) {
        /* JPEG has no alpha and is already what glTF embeds: keep its bytes (and its size) */
        if (!plush_buf_append(out, data, size))
            return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "image", -1, "out of memory");
        *mime_type = "image/jpeg";
        *translucent = false;
        return PLUSH_OK;
    }
    uint8_t *px = stbi_load_from_memory(data, (int)size, &w, &h, &comp, 4);
    if (!px)
        return plush_diag_fail(diag, PLUSH_E_FORMAT, 0, "image", -1, "cannot decode: %s", stbi_failure_reason());
    size_t n = (size_t)w * (size_t)h;
    bool alpha = false;
    for (size_t i = 0; i < n && !alpha; i++)
        alpha = px[4 * i + 3] != 255;
    if (!alpha) /* RGB in place: a smaller PNG, and viewers need not blend */
        for (size_t i = 0; i < n; i++)
            memmove(px + 3 * i, px + 4 * i, 3);
    plush_status st = plush_image_encode_png_pixels(px, w, h, alpha ? 4 : 3, out, diag);
    stbi_image_free(px);
    if (st == PLUSH_OK) {
        *mime_type = "image/png";
        *translucent = alpha;
    }
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
    if (size > INT_MAX)
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "image", -1, "texture of %zu bytes is too large", size);
    int w = 0, h = 0, comp = 0;
    if (!stbi_info_from_memory(data, (int)size, &w, &h, &comp) || w <= 0 || h <= 0)
        return plush_diag_fail(diag, PLUSH_E_FORMAT, 0, "image", -1, "not a picture stb_image reads (BMP, TGA, PNG, JPEG)");
    /* asked before decoding: the header alone says how much memory the texels would take */
    if (w > max_side || h > max_side || w > PLUSH_IMAGE_MAX_SIZE || h > PLUSH_IMAGE_MAX_SIZE)
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
