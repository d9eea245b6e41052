/* libFuzzer target: a model's texture file as the texture rules read it (scene/textures.h) -- its header
 * first, then decoded within the per-picture budget, then encoded for glTF -- fails cleanly or gives the
 * picture its header promised, never more than the budget. */
#include "plush/sys/render.h"
#include "scene/textures.h"

#include <stdlib.h>

/* Smaller than the run's PLUSH__TEXTURE_MAX_SIDE: the code paths are the same, and an input stays fast under
 * the sanitizers (a megatexel of made-up TGA takes seconds there). */
enum { FUZZ_MAX_SIDE = 1024 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > PLUSH__TEXTURE_MAX_BYTES)
        return 0; /* refused before reading */
    plush_diag diag = {0};
    int w = 0, h = 0;
    bool jpeg = false;
    if (plush_image_texture_info(data, size, &w, &h, &jpeg, &diag) != PLUSH_OK) {
        if (w || h)
            abort();
        return 0;
    }
    if (w <= 0 || h <= 0)
        abort();
    plush_render_texture tex;
    plush_diag_reset(&diag);
    if (plush_image_decode_texture(data, size, FUZZ_MAX_SIDE, &tex, &diag) == PLUSH_OK) {
        if (!tex.rgba || tex.width != w || tex.height != h || w > FUZZ_MAX_SIDE || h > FUZZ_MAX_SIDE ||
            (uint64_t)w * (uint64_t)h > (uint64_t)size * PLUSH_IMAGE_MAX_PACKING)
            abort();
        plush_buf png = {0};
        bool translucent = false;
        plush_diag_reset(&diag);
        if (plush_image_encode_texture(&tex, &png, &translucent, &diag) != PLUSH_OK && diag.status != PLUSH_E_NOMEM)
            abort();
        plush_buf_free(&png);
    } else if (tex.rgba || (diag.status == PLUSH_E_RANGE && w <= FUZZ_MAX_SIDE && h <= FUZZ_MAX_SIDE)) {
        abort();
    }
    plush_render_texture_free(&tex);
    return 0;
}
