/* plush_scene_run: steps the scene frame by frame and feeds every frame to the sinks asked for, after
 * checking that the run's memory and disk fit (a budget), timing the exports. */
#include "export/bake_internal.h"
#include "export/sink_internal.h"
#include "core/common.h"
#include "core/platform.h"
#include "plush/sys/core.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Wall-clock time: the sinks mostly wait on files. */
static double wall(void)
{
    return plush__seconds();
}

typedef enum sink_call { SINK_BEGIN, SINK_FRAME, SINK_END } sink_call;

static plush_status call_sinks(plush_scene *sc, const plush_scene_run_options *o, sink_call call, uint32_t frame,
                               plush_scene_run_result *r, plush_diag *diag)
{
    double t0 = wall();
    plush_status st = PLUSH_OK;
    for (size_t i = 0; st == PLUSH_OK && i < o->sink_count; i++) {
        plush_scene_sink *s = o->sinks[i];
        st = call == SINK_BEGIN ? (s->ops->begin ? s->ops->begin(s, sc, diag) : PLUSH_OK)
             : call == SINK_FRAME ? s->ops->frame(s, sc, frame, diag)
                                  : s->ops->end(s, sc, diag);
        if (st != PLUSH_OK)
            r->failed_sink = s;
    }
    plush__scene_add_export_time(sc, wall() - t0);
    return st;
}

static double memory_available(void)
{
    return plush__os_memory_available();
}

static double disk_available(const char *dir)
{
    return plush__os_disk_free(dir);
}

static const char *bytes_text(double b, char *buf, size_t size)
{
    if (b >= 1e9)
        snprintf(buf, size, "%.1f GB", b / 1e9);
    else
        snprintf(buf, size, "%.1f MB", b / 1e6);
    return buf;
}

/* The run's work and outputs must fit: refused before the first frame rather than after hours or a killed
 * process. */
static plush_status check_budget(const plush_scene *sc, const plush_scene_run_options *o, plush_diag *diag)
{
    plush_scene_desc desc;
    plush_scene_get_desc(sc, &desc);
    plush_status st = plush_scene_check_budget(&desc, o->frames, NULL, diag);
    if (st != PLUSH_OK)
        return st;
    double memory = 0, disk = 0;
    for (size_t i = 0; i < o->sink_count; i++) {
        double m = 0, d = 0;
        if (o->sinks[i]->ops->estimate)
            o->sinks[i]->ops->estimate(o->sinks[i], o->frames, &m, &d);
        memory += m, disk += d;
    }
    double have_memory = o->memory_available > 0 ? o->memory_available : memory_available();
    double have_disk = o->disk_available > 0 ? o->disk_available : o->out_dir ? disk_available(o->out_dir) : 0;
    char need[32], have[32];
    /* the exports grow with the frames: the most that fit is what to ask for */
    if (have_memory > 0 && memory > 0.9 * have_memory)
        return plush_diag_fail(diag, PLUSH_E_BUDGET, -1, NULL, -1,
                               "%u frames of these exports would hold about %s in memory; %s are available: "
                               "--frames %.0f, or fewer exports",
                               o->frames, bytes_text(memory, need, sizeof need), bytes_text(have_memory, have, sizeof have),
                               floor(0.9 * have_memory / memory * o->frames));
    if ((o->out_dir || o->disk_available > 0) && have_disk > 0 && disk > have_disk)
        return plush_diag_fail(diag, PLUSH_E_BUDGET, -1, NULL, -1,
                               "%u frames of these exports would write about %s; %s are free there: --frames %.0f, "
                               "a larger --every, or fewer exports",
                               o->frames, bytes_text(disk, need, sizeof need), bytes_text(have_disk, have, sizeof have),
                               floor(have_disk / disk * o->frames));
    return PLUSH_OK;
}

plush_status plush_scene_run(plush_scene *sc, const plush_scene_run_options *options, plush_scene_run_result *result,
                             plush_diag *diag)
{
    plush_scene_run_options o = options ? *options : (plush_scene_run_options){0};
    plush_scene_run_result r = {.stopped_at = -1};
    if (result)
        *result = r;
    if (!sc || (o.sink_count && !o.sinks))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no scene or no sinks");
    plush_status st = o.frames ? PLUSH_OK : plush_scene_default_frames(sc, &o.frames, diag);
    r.frames = o.frames;
    if (st == PLUSH_OK)
        st = check_budget(sc, &o, diag);
    if (st == PLUSH_OK)
        st = call_sinks(sc, &o, SINK_BEGIN, 0, &r, diag);
    for (uint32_t f = 0; st == PLUSH_OK && f < o.frames; f++) {
        st = plush_scene_step(sc, f, diag);
        if (st == PLUSH_OK && o.stop_on_blow_up && plush_scene_failures(sc, NULL)) {
            r.blew_up = true;
            r.stopped_at = f;
            break;
        }
        if (st == PLUSH_OK)
            st = call_sinks(sc, &o, SINK_FRAME, f, &r, diag);
        if (st != PLUSH_OK) {
            r.stopped_at = f;
            break;
        }
        r.done = f + 1;
        if (o.progress)
            o.progress(o.user, f + 1, o.frames);
    }
    if (st == PLUSH_OK && !r.blew_up)
        st = call_sinks(sc, &o, SINK_END, 0, &r, diag);
    if (result)
        *result = r;
    return st;
}
