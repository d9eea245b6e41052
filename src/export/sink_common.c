/* What the sinks share: their output paths and the names they must not take, the bake the pmx+vmd and
 * glTF exports share (made once per run, fed once per frame), failures carried from a sink's own diag,
 * folders made on the way. */
#include "export/bake_internal.h"
#include "export/sink_internal.h"
#include "plush/sys/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

char *plush__sink_path(const plush_scene_output *out, const char *suffix)
{
    size_t n = strlen(out->dir) + 1 + strlen(out->stem) + strlen(suffix) + 1;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s%s", out->dir, out->stem, suffix);
    return p;
}

double plush__sink_bake_tolerance(const plush_scene_output *out, const plush_pmx_model *model)
{
    if (out->bake_tolerance != 0)
        return out->bake_tolerance;
    double h = plush_pmx_height(model);
    return h > 0 ? 0.001 * h : -1.0;   /* a model of no height has nothing to measure a share of */
}

plush_status plush__sink_bake_get(const plush_scene *scene, const plush_scene_output *out, plush_scene_bake **bake,
                                  bool *shared, plush_diag *diag)
{
    plush_scene_desc desc;
    plush_scene_get_desc(scene, &desc);
    double tolerance = plush__sink_bake_tolerance(out, desc.model);
    plush__bake_share *share = plush__scene_bake_share(scene);
    *shared = share->bake == NULL || share->tolerance == tolerance;
    if (*shared && share->bake) {
        *bake = share->bake;
        return PLUSH_OK;
    }
    /* the skin's patch and fit, not a second one */
    plush_status st = plush__bake_create(plush_scene_get_binding(scene), desc.motion, plush_scene_patch(&desc),
                                         plush_scene_get_patch(scene), bake, diag);
    if (st != PLUSH_OK)
        return st;
    plush__bake_share_offsets(*bake, plush__scene_push_offsets(scene));
    plush_scene_bake_set_tolerance(*bake, tolerance);
    /* what a player loads: MMD's keys, and a file size engines and editors take without trouble; by default
     * the budget holds and the error gives, a --bake-tolerance holds and the summary says what it costs */
    (*bake)->key_budget = PLUSH__MMD_MAX_KEYS;
    (*bake)->byte_budget = PLUSH__BAKE_MAX_BYTES;
    (*bake)->budget_first = out->bake_tolerance == 0;
    if (*shared)
        *share = (plush__bake_share){*bake, tolerance, plush_scene_bake_destroy};
    return PLUSH_OK;
}

plush_status plush__sink_bake_frame(plush_scene_bake *bake, const plush_scene *scene, uint32_t frame,
                                    plush_diag *diag)
{
    if (bake->frame_count && bake->frames[bake->frame_count - 1] == frame)
        return PLUSH_OK;
    return plush_scene_bake_add_frame(bake, frame, plush_scene_proxy_nodes(scene), diag);
}

static bool same_name(const char *name, size_t len, const char *want)
{
    return strlen(want) == len && strncasecmp(name, want, len) == 0;
}

bool plush__sink_reserved(const char *name, size_t len, const char *stem)
{
    size_t sn = stem ? strlen(stem) : 0, xn = strlen(PLUSH__OUT_SUFFIX);
    return (len >= 6 && strncasecmp(name, ".plush", 6) == 0) || same_name(name, len, PLUSH__OUT_FRAMES) ||
           same_name(name, len, PLUSH__OUT_PREVIEW) || same_name(name, len, PLUSH__OUT_QUALITY) ||
           (stem && len > sn + xn && strncasecmp(name, stem, sn) == 0 &&
            strncasecmp(name + sn, PLUSH__OUT_SUFFIX ".", xn + 1) == 0);
}

char *plush__sink_file(const plush_scene_output *out, const char *name)
{
    size_t n = strlen(out->dir) + 1 + strlen(name) + 1;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", out->dir, name);
    return p;
}

plush_status plush__sink_fail(plush_diag *diag, const plush_diag *local)
{
    if (!diag || diag->status != PLUSH_OK)
        return local->status;
    diag->file = local->file;
    plush_diag_fail(diag, local->status, local->offset, local->section, local->index, "%s", local->message);
    return local->status;
}

plush_status plush__sink_make_dir(const char *dir, plush_diag *diag)
{
    plush_diag local = {.file = dir};
    return plush_file_make_dir(dir, &local) == PLUSH_OK ? PLUSH_OK : plush__sink_fail(diag, &local);
}
