/* libFuzzer: parse -> (write back, parse the output again) -> free. Any crash, leak or sanitizer
 * report is a bug; a model that reads must also write and read back. */
#include "plush/pmx.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    plush_pmx_model *m = NULL;
    if (plush_pmx_read(data, size, NULL, &m, NULL) != PLUSH_OK)
        return 0;
    plush_buf out = {0};
    if (plush_pmx_write(m, NULL, &out, NULL) != PLUSH_OK)
        abort();
    plush_pmx_model *again = NULL;
    if (plush_pmx_read(out.data, out.size, NULL, &again, NULL) != PLUSH_OK)
        abort();
    plush_pmx_free(again);
    plush_buf_free(&out);
    plush_pmx_free(m);
    return 0;
}
