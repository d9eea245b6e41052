/* libFuzzer target: any bytes either fail cleanly or read as a motion that writes back byte for byte. */
#include "plush/vmd.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    plush_diag diag = {0};
    plush_vmd_motion *motion = NULL;
    if (plush_vmd_read(data, size, &motion, &diag) == PLUSH_OK) {
        plush_buf out = {0};
        plush_vmd_last_frame(motion);
        if (plush_vmd_write(motion, NULL, &out, &diag) != PLUSH_OK || out.size != size ||
            memcmp(out.data, data, size) != 0)
            abort();
        plush_buf_free(&out);
    } else if (motion || diag.offset > (int64_t)size) {
        abort();
    }
    plush_vmd_free(motion);
    return 0;
}
