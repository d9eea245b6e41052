/* libFuzzer target: any bytes either fail cleanly or read as a map that writes and reads back the same. */
#include "plush/im2.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same_map(const plush_im2_map *a, const plush_im2_map *b)
{
    if (a->part_count != b->part_count)
        return false;
    for (size_t p = 0; p < a->part_count; p++) {
        const plush_im2_part *x = &a->parts[p], *y = &b->parts[p];
        if (x->name.len != y->name.len || memcmp(x->name.s, y->name.s, x->name.len) != 0 ||
            x->entry_count != y->entry_count)
            return false;
        for (size_t k = 0; k < x->entry_count; k++) {
            const plush_im2_entry *e = &x->entries[k], *f = &y->entries[k];
            if (e->vertex != f->vertex || e->child != f->child || e->parent != f->parent || e->method != f->method)
                return false;
        }
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    plush_diag diag = {0};
    plush_im2_map *map = NULL;
    if (plush_im2_read(data, size, &map, &diag) != PLUSH_OK) {
        bool syntax = diag.status == PLUSH_E_FORMAT || diag.status == PLUSH_E_TRUNCATED ||
                      diag.status == PLUSH_E_VERSION;
        if (map || diag.offset > (int64_t)size || (syntax && diag.index < 1))
            abort();
        return 0;
    }
    plush_buf out = {0};
    plush_diag wdiag = {0};
    if (plush_im2_write(map, &out, &wdiag) != PLUSH_OK)
        abort();
    plush_im2_map *back = NULL;
    plush_diag rdiag = {0};
    if (plush_im2_read(out.data, out.size, &back, &rdiag) != PLUSH_OK || !same_map(map, back))
        abort();
    plush_im2_free(back);
    plush_im2_free(map);
    plush_buf_free(&out);
    return 0;
}
