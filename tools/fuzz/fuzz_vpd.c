/* libFuzzer target: any bytes either fail cleanly or read as a pose of finite numbers. */
#include "plush/vpd.h"

#include <math.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    plush_diag diag = {0};
    plush_vpd_pose *pose = NULL;
    if (plush_vpd_read(data, size, &pose, &diag) == PLUSH_OK) {
        for (size_t i = 0; i < pose->bone_count; i++)
            if (!pose->bones[i].name.s || !isfinite(pose->bones[i].rotation[3]))
                abort();
    } else if (pose || diag.offset > (int64_t)size) {
        abort();
    }
    plush_vpd_free(pose);
    return 0;
}
