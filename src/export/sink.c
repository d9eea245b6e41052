/* The export registry: every sink kind by name (PLUSH_SCENE_SINKS in sink_internal.h), a sink made of
 * one, described and destroyed. */
#include "export/sink_internal.h"
#include "plush/sys/scene.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PLUSH_SCENE_SINK_ENTRY(name) &plush__export_##name,
static const plush_scene_export *const registry[] = {PLUSH_SCENE_SINKS(PLUSH_SCENE_SINK_ENTRY)};
#undef PLUSH_SCENE_SINK_ENTRY

const plush_scene_export *const *plush_scene_exports(size_t *count)
{
    *count = sizeof registry / sizeof *registry;
    return registry;
}

const plush_scene_export *plush_scene_export_find(const char *name, size_t len)
{
    for (size_t i = 0; name && i < sizeof registry / sizeof *registry; i++)
        if (strlen(registry[i]->name) == len && strncmp(registry[i]->name, name, len) == 0)
            return registry[i];
    return NULL;
}

const char *plush_scene_default_exports(plush_scene_mode mode)
{
    return mode == PLUSH_SCENE_PROXY ? "pmx+vmd" : "ply";
}

plush_status plush_scene_sink_create(const plush_scene_export *kind, const plush_scene *scene,
                                     const plush_scene_output *out, plush_scene_sink **sink, plush_diag *diag)
{
    if (!kind || !scene || !out || !out->dir || !out->stem || !sink)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no export, scene or output");
    *sink = NULL;
    plush_scene_desc desc;
    plush_scene_get_desc(scene, &desc);
    if (!(kind->modes & PLUSH_SCENE_MODE_BIT(desc.mode)))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "export %s does not work in this mode",
                               kind->name);
    plush_status st = kind->create(scene, out, sink, diag);
    if (st == PLUSH_OK)
        (*sink)->kind = kind;
    return st;
}

int plush_scene_sink_describe(const plush_scene_sink *sink, char *buf, size_t size)
{
    if (!sink || !sink->ops->describe) {
        if (size)
            buf[0] = '\0';
        return 0;
    }
    return sink->ops->describe(sink, buf, size);
}

size_t plush_scene_sink_outputs(const plush_scene_sink *sink, const char **paths, size_t max)
{
    return sink && sink->ops->outputs ? sink->ops->outputs(sink, paths, max) : 0;
}

void plush_scene_sink_destroy(plush_scene_sink *sink)
{
    if (sink)
        sink->ops->destroy(sink);
}
