/* libFuzzer: parse -> (write back, parse the output again) -> free. Any crash, leak or sanitizer
 * report is a bug; a model that reads must also write and read back. Every input is read a second
 * time summary-only (what plush info does), and the two reads must agree: the same diagnostic (status,
 * section, item, byte offset, message) on a failure, the same counts and weight-type histogram on
 * success. */
#include "plush/pmx.h"
#include "plush/sys/core.h"

#include <stdlib.h>
#include <string.h>

static void same_summary(const uint8_t *data, size_t size, const plush_pmx_model *full, const plush_diag *fd)
{
    plush_diag d = {0};
    plush_pmx_model *s = NULL;
    plush_status st = plush_pmx_read(data, size, &(plush_pmx_read_options){.summary_only = true}, &s, &d);
    if (st != fd->status || d.offset != fd->offset || d.index != fd->index || strcmp(d.message, fd->message) ||
        (d.section != fd->section && (!d.section || !fd->section || strcmp(d.section, fd->section))) ||
        d.warning_count != fd->warning_count)
        abort();
    if (st != PLUSH_OK)
        return;
    size_t hist[PLUSH_PMX_QDEF + 1] = {0};
    for (size_t i = 0; i < full->vertex_count; i++)
        hist[full->vertices[i].weight_type]++;
    if (!s->summary_only || s->vertices || s->indices || s->vertex_count != full->vertex_count ||
        s->index_count != full->index_count || s->sdef_count != full->sdef_count ||
        s->bone_count != full->bone_count || s->morph_count != full->morph_count ||
        s->soft_body_count != full->soft_body_count || s->trailing_size != full->trailing_size ||
        memcmp(hist, s->summary.weight_types, sizeof hist) != 0)
        abort();
    plush_buf out = {0};
    if (plush_pmx_write(s, NULL, &out, NULL) != PLUSH_E_NO_GEOMETRY || out.size != 0)
        abort();
    plush_pmx_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    plush_diag d = {0};
    plush_pmx_model *m = NULL;
    plush_status st = plush_pmx_read(data, size, NULL, &m, &d);
    same_summary(data, size, m, &d);
    if (st != PLUSH_OK)
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
