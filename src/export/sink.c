/* The export registry and the run loop that feeds the sinks. */
#include "export/bake_internal.h"
#include "export/sink_internal.h"
#include "plush/sys/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/statvfs.h>
#include <time.h>

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
    plush_status st = plush_scene_bake_create(plush_scene_get_binding(scene), desc.motion, plush_scene_patch(&desc),
                                              bake, diag);
    if (st != PLUSH_OK)
        return st;
    plush__bake_share_patch(*bake, plush_scene_get_patch(scene)); /* the skin's fit, not a second one */
    plush_scene_bake_set_tolerance(*bake, tolerance);
    if (*shared)
        share->bake = *bake, share->tolerance = tolerance;
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

void plush_scene_sink_destroy(plush_scene_sink *sink)
{
    if (sink)
        sink->ops->destroy(sink);
}

/* Wall-clock time: the sinks mostly wait on files. */
static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
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

/* Memory the system can give without swapping (MemAvailable), in bytes; 0 when unknown. */
static double memory_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    double kb = 0;
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb * 1024.0;
}

static double disk_available(const char *dir)
{
    struct statvfs v;
    return dir && statvfs(dir, &v) == 0 ? (double)v.f_bavail * (double)v.f_frsize : 0;
}

static const char *bytes_text(double b, char *buf, size_t size)
{
    if (b >= 1e9)
        snprintf(buf, size, "%.1f GB", b / 1e9);
    else
        snprintf(buf, size, "%.1f MB", b / 1e6);
    return buf;
}

/* The run's outputs must fit: refused before the first frame rather than after hours or a killed process. */
static plush_status check_budget(const plush_scene_run_options *o, plush_diag *diag)
{
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
    if (have_memory > 0 && memory > 0.9 * have_memory)
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, NULL, -1,
                               "%u frames of these exports would hold about %s in memory; %s are available "
                               "(fewer frames, or fewer exports)",
                               o->frames, bytes_text(memory, need, sizeof need), bytes_text(have_memory, have, sizeof have));
    if ((o->out_dir || o->disk_available > 0) && have_disk > 0 && disk > have_disk)
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, NULL, -1,
                               "%u frames of these exports would write about %s; %s are free there", o->frames,
                               bytes_text(disk, need, sizeof need), bytes_text(have_disk, have, sizeof have));
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
        st = check_budget(&o, diag);
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
