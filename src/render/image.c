/* RGB images: create, blit, the error colour map, and PNG files through stb_image_write.
 *
 * stb_image_write is compiled into this file alone, static (STB_IMAGE_WRITE_STATIC) so its symbols cannot
 * clash with another copy in the host program. The PNG is built in memory and written with
 * plush_file_write_atomic, so a failed run never leaves half a file; its stdio writers stay compiled in
 * (unused) because STBI_WRITE_NO_STDIO in v1.16 also hides stbi_write_hdr_to_func's body but not its
 * declaration, which -Werror refuses. Its code is not ours to fix, so its warnings are silenced around the
 * include only. */
#include "plush/sys/render.h"
#include "plush/sys/core.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#include "render/stb_quiet.h"
PLUSH_STB_QUIET_BEGIN
#include <stb/stb_image_write.h>
PLUSH_STB_QUIET_END

plush_status plush_image_create(int width, int height, plush_image *out, plush_diag *diag)
{
    if (!out)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "image", -1, "no image to create");
    memset(out, 0, sizeof *out);
    if (width <= 0 || height <= 0 || width > PLUSH_IMAGE_MAX_SIZE || height > PLUSH_IMAGE_MAX_SIZE)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "image", -1,
                               "size %dx%d out of range (1 to %d pixels a side)", width, height,
                               PLUSH_IMAGE_MAX_SIZE);
    size_t bytes = (size_t)width * (size_t)height * 3;
    out->rgb = malloc(bytes);
    if (!out->rgb)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "image", -1, "out of memory for %dx%d pixels", width,
                               height);
    memset(out->rgb, 0xff, bytes);
    out->width = width;
    out->height = height;
    return PLUSH_OK;
}

void plush_image_free(plush_image *image)
{
    if (!image)
        return;
    free(image->rgb);
    memset(image, 0, sizeof *image);
}

static bool image_usable(const plush_image *image)
{
    return image && image->rgb && image->width > 0 && image->height > 0 && image->width <= PLUSH_IMAGE_MAX_SIZE &&
           image->height <= PLUSH_IMAGE_MAX_SIZE;
}

void plush_image_fill(plush_image *image, const uint8_t rgb[3])
{
    if (!image_usable(image))
        return;
    size_t n = (size_t)image->width * (size_t)image->height;
    for (size_t i = 0; i < n; i++)
        memcpy(image->rgb + 3 * i, rgb, 3);
}

void plush_image_blit(plush_image *dst, const plush_image *src, int x, int y)
{
    if (!image_usable(dst) || !image_usable(src))
        return;
    /* Clip in 64-bit so x + width cannot overflow. */
    int64_t x0 = x < 0 ? 0 : x, y0 = y < 0 ? 0 : y;
    int64_t x1 = (int64_t)x + src->width, y1 = (int64_t)y + src->height;
    if (x1 > dst->width)
        x1 = dst->width;
    if (y1 > dst->height)
        y1 = dst->height;
    if (x0 >= x1 || y0 >= y1)
        return;
    size_t row = (size_t)(x1 - x0) * 3;
    /* An image blitted onto itself further down is copied bottom row first, so no row is overwritten
     * before it is read (memmove takes care of overlap within a row). */
    bool upward = src->rgb == dst->rgb && y > 0;
    for (int64_t i = 0; i < y1 - y0; i++) {
        int64_t r = upward ? y1 - 1 - i : y0 + i;
        const uint8_t *s = src->rgb + ((size_t)(r - y) * (size_t)src->width + (size_t)(x0 - x)) * 3;
        uint8_t *d = dst->rgb + ((size_t)r * (size_t)dst->width + (size_t)x0) * 3;
        memmove(d, s, row);
    }
}

/* ColorBrewer's RdYlBu, 11 classes, reversed: a diverging scheme chosen for even perceived steps and for
 * staying readable to the common forms of colour blindness. Its lightness rises from dark blue to pale
 * yellow and falls to dark red, so "small" and "large" read apart even in greyscale. */
static const uint8_t colormap_stops[11][3] = {
    {49, 54, 149},   {69, 117, 180}, {116, 173, 209}, {171, 217, 233}, {224, 243, 248}, {255, 255, 191},
    {254, 224, 144}, {253, 174, 97}, {244, 109, 67},  {215, 48, 39},   {165, 0, 38},
};

void plush_colormap(float t, float rgb[3])
{
    if (isnan(t)) { /* a neutral grey that belongs to neither end */
        rgb[0] = rgb[1] = rgb[2] = 0.5f;
        return;
    }
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    float s = t * 10.0f;
    int i = (int)s;
    if (i > 9)
        i = 9;
    float f = s - (float)i;
    for (int k = 0; k < 3; k++) {
        float a = colormap_stops[i][k], b = colormap_stops[i + 1][k];
        rgb[k] = (a + (b - a) * f) / 255.0f;
    }
}

typedef struct png_sink {
    plush_buf *buf;
    bool failed;
} png_sink;

static void append_png(void *context, void *data, int size)
{
    png_sink *sink = context;
    if (size > 0 && !plush_buf_append(sink->buf, data, (size_t)size))
        sink->failed = true;
}

plush_status plush_image_encode_png_pixels(const uint8_t *pixels, int width, int height, int channels, plush_buf *out,
                                           plush_diag *diag)
{
    if (!pixels || !out || width <= 0 || height <= 0 || width > PLUSH_IMAGE_MAX_SIZE || height > PLUSH_IMAGE_MAX_SIZE ||
        channels < 1 || channels > 4)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "image", -1, "no image to write");
    size_t keep = out->size;
    png_sink sink = {.buf = out};
    int ok = stbi_write_png_to_func(append_png, &sink, width, height, channels, pixels, width * channels);
    if (!ok || sink.failed) {
        out->size = keep;
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "image", -1, "out of memory encoding a %dx%d PNG", width,
                               height);
    }
    return PLUSH_OK;
}

plush_status plush_image_encode_png(const plush_image *image, plush_buf *out, plush_diag *diag)
{
    if (!image_usable(image) || !out)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "image", -1, "no image to write");
    return plush_image_encode_png_pixels(image->rgb, image->width, image->height, 3, out, diag);
}

plush_status plush_image_write_png(const plush_image *image, const char *path, plush_diag *diag)
{
    if (!path)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "image", -1, "no path to write to");
    if (diag && !diag->file)
        diag->file = path;
    plush_buf buf = {0};
    plush_status st = plush_image_encode_png(image, &buf, diag);
    if (st == PLUSH_OK)
        st = plush_file_write_atomic(path, buf.data, buf.size, diag);
    plush_buf_free(&buf);
    return st;
}
