/* libFuzzer target: any bytes either fail cleanly (a line number and an offset inside the input) or read
 * as a mesh whose every index is in range and every position finite; written back with plush_obj_write,
 * it reads as the same mesh. */
#include "plush/obj.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same_mesh(const plush_obj_model *a, const plush_obj_model *b)
{
    return a->vertex_count == b->vertex_count && a->triangle_count == b->triangle_count &&
           memcmp(a->positions, b->positions, a->vertex_count * sizeof *a->positions) == 0 &&
           memcmp(a->triangles, b->triangles, a->triangle_count * sizeof *a->triangles) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    plush_diag diag = {0};
    plush_obj_model *obj = NULL;
    if (plush_obj_read(data, size, &obj, &diag) != PLUSH_OK) {
        if (obj || diag.offset < 0 || diag.offset > (int64_t)size || diag.index < 1)
            abort();
        return 0;
    }
    for (size_t v = 0; v < obj->vertex_count; v++)
        for (int k = 0; k < 3; k++)
            if (!isfinite(obj->positions[v][k]))
                abort();
    for (size_t t = 0; t < obj->triangle_count; t++)
        for (int k = 0; k < 3; k++)
            if (obj->triangles[t][k] >= obj->vertex_count)
                abort();
    plush_obj_mesh mesh = {.vertex_count = obj->vertex_count,
                           .positions = (const float(*)[3])obj->positions,
                           .index_count = 3 * obj->triangle_count,
                           .indices = &obj->triangles[0][0]};
    plush_buf out = {0};
    plush_diag wdiag = {0};
    if (plush_obj_write(&mesh, &out, &wdiag) != PLUSH_OK)
        abort();
    plush_obj_model *back = NULL;
    plush_diag rdiag = {0};
    if (plush_obj_read(out.data, out.size, &back, &rdiag) != PLUSH_OK || !same_mesh(obj, back))
        abort();
    plush_obj_model_free(back);
    plush_obj_model_free(obj);
    plush_buf_free(&out);
    return 0;
}
