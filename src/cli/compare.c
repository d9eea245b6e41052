/* plush compare MODEL.pmx -o REPORTDIR: bones, proxy and direct on the same motion, stepped in lockstep and
 * measured frame by frame; metrics.csv, report.md, plots and pictures. */
#include "cli/cli.h"
#include "plush/attach.h"
#include "plush/cage.h"
#include "plush/compare.h"
#include "plush/image.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char compare_usage[] =
    "usage: plush compare MODEL.pmx -o REPORTDIR [--motion M.vmd] [--frames N] [--proxy-triangles N1,N2,...]\n"
    "                     [--fps 30] [--physics-hz 60] [--im2 OVERRIDES.im2]\n";

static const char compare_help[] =
    "\n"
    "Runs MODEL.pmx three ways on the same motion and measures how far apart they are, frame by frame:\n"
    "  bones   plain MMD: bones and rigid bodies, no soft body (the baseline)\n"
    "  proxy   the soft-body cage simulated, the detailed mesh skinned to it (what plush run does)\n"
    "  direct  the detailed mesh itself simulated as the soft body (the expensive ground truth)\n"
    "The runs are stepped together, one frame at a time, so memory does not grow with the frame count.\n"
    "\n"
    "options:\n"
    "  -o, --output REPORTDIR      where the report goes (created when missing; required)\n"
    "  --motion M.vmd              the motion (default: none, the model at rest under physics)\n"
    "  --frames N                  frames to compare (default: the motion's length, or 300)\n"
    "  --proxy-triangles N1,...    also generate cages of about N triangles (plush proxy's simplifier, pushed\n"
    "                              out by 2% of the model's size; a surface in several pieces gets one\n"
    "                              wrap around them all, as plush proxy --wrap), attach each in place of\n"
    "                              the model's own soft body (same parameters; pins and anchors carried\n"
    "                              over by nearest node) and compare them too: error and time against\n"
    "                              proxy size\n"
    "  --fps F, --physics-hz H     as plush run (defaults 30 and 60)\n"
    "  --im2 OVERRIDES.im2         Influence Map overrides for the model's own proxy run\n"
    "  -h, --help                  this text\n"
    "\n"
    "REPORTDIR gets:\n"
    "  report.md      the verdict (how much faster the proxy is than direct, how far its surface lies from\n"
    "                 it in model units and as a share of the model's size), a summary table, what it means\n"
    "  metrics.csv    one row per frame and run pair: RMS, 95th percentile and max vertex distance, mean\n"
    "                 and max normal angle (degrees), each run's volume ratio to rest (closed pieces of the\n"
    "                 surface only; empty when there is none) and its physics and skinning time (ms)\n"
    "  error.png, time.png                plots over time\n"
    "  error_by_size.png, time_by_size.png  with --proxy-triangles: against the proxy's triangle count\n"
    "  frame_NNNNN.png  chosen frames side by side: bones | proxy | direct | proxy error as colours\n"
    "The vertices measured are those of every material no soft body owns.\n";

typedef struct compare_job {
    const char *model, *motion, *out_dir, *overrides;
    uint32_t frames;
    bool frames_set;
    float fps, physics_hz;
    size_t *triangles;            /* --proxy-triangles */
    size_t triangle_count;
} compare_job;

static int parse_triangles(const char *list, compare_job *job)
{
    for (const char *p = list;;) {
        char *end = NULL;
        errno = 0;
        unsigned long long n = strtoull(p, &end, 10);
        if (errno || end == p || *p == '-' || *p == '+' || n < 4 || n > 10000000 || (*end && *end != ','))
            return cli_usage_error(compare_usage, "--proxy-triangles wants whole numbers from 4 to 10000000, not '%s'",
                                   list);
        size_t *t = realloc(job->triangles, (job->triangle_count + 1) * sizeof *t);
        if (!t) {
            fprintf(stderr, "plush: out of memory\n");
            return CLI_FAILED;
        }
        job->triangles = t;
        job->triangles[job->triangle_count++] = (size_t)n;
        if (!*end)
            return CLI_OK;
        p = end + 1;
    }
}

static int compare_option(cli_args *args, const char *name, const char *inline_value, compare_job *job)
{
    static const char *const valued[] = {"-o", "--output", "--motion", "--frames", "--fps", "--physics-hz",
                                         "--proxy-triangles", "--im2"};
    bool known = false;
    for (size_t i = 0; i < sizeof valued / sizeof *valued; i++)
        known |= strcmp(name, valued[i]) == 0;
    if (!known)
        return cli_usage_error(compare_usage, "unknown option '%s'", name);
    const char *v = cli_args_value(args, name, inline_value);
    if (!v)
        return CLI_USAGE;
    double x = 0;
    int rc = CLI_OK;
    if (strcmp(name, "-o") == 0 || strcmp(name, "--output") == 0)
        job->out_dir = v;
    else if (strcmp(name, "--motion") == 0)
        job->motion = v;
    else if (strcmp(name, "--im2") == 0)
        job->overrides = v;
    else if (strcmp(name, "--frames") == 0 && (rc = cli_parse_number(compare_usage, name, v, 1, 1e7, &x)) == CLI_OK) {
        if (x != floor(x))
            return cli_usage_error(compare_usage, "--frames wants a whole number, not '%s'", v);
        job->frames = (uint32_t)x;
        job->frames_set = true;
    } else if (strcmp(name, "--fps") == 0 && (rc = cli_parse_number(compare_usage, name, v, 1, 1000, &x)) == CLI_OK)
        job->fps = (float)x;
    else if (strcmp(name, "--physics-hz") == 0 && (rc = cli_parse_number(compare_usage, name, v, 10, 10000, &x)) == CLI_OK)
        job->physics_hz = (float)x;
    else if (strcmp(name, "--proxy-triangles") == 0)
        rc = parse_triangles(v, job);
    return rc;
}

static int compare_option_cb(cli_args *args, const char *name, const char *value, void *job)
{
    return compare_option(args, name, value, job);
}

static int parse_compare(int argc, char **argv, compare_job *job, bool *help)
{
    int rc = cli_parse_model_command(argc, argv, compare_usage, compare_option_cb, job, &job->model, help);
    if (rc != CLI_OK || *help)
        return rc;
    if (!job->out_dir)
        return cli_usage_error(compare_usage, "no report directory (-o REPORTDIR)");
    return CLI_OK;
}

/* ---- generated cages ----------------------------------------------------------------------------- */

/* One proxy run on a cage of about `target` triangles made here. */
typedef struct cage_variant {
    size_t target, triangles;
    size_t pieces, pinned;        /* plush_attach's: soft bodies (edge-connected pieces) and pinned vertices */
    size_t source_pieces;         /* of the welded surface the cage was made from */
    bool wrapped;                 /* made as one wrap around those pieces (plush_cage_wrap) */
    float pin_y[2], cage_y[2];    /* heights of the pinned cage vertices and of the whole cage (min, max) */
    plush_pmx_model base;         /* the model without its soft bodies and their materials (shares arrays) */
    plush_pmx_model *model;       /* base + the cage (plush_attach) */
    plush_arena arena;
} cage_variant;

/* The model seen without its soft bodies and the materials they own. Those materials must come last (as
 * plush attach and the demo put them): removing one from the middle would renumber the rest, and every
 * morph and soft body naming a material would have to follow. */
static plush_status strip_soft_bodies(const plush_pmx_model *m, plush_pmx_model *out, plush_diag *diag)
{
    *out = *m;
    memset(&out->arena, 0, sizeof out->arena);
    bool *soft = calloc(m->material_count ? m->material_count : 1, 1);
    if (!soft)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    for (size_t s = 0; s < m->soft_body_count; s++)
        if (m->soft_bodies[s].material >= 0 && (size_t)m->soft_bodies[s].material < m->material_count)
            soft[m->soft_bodies[s].material] = true;
    size_t keep = m->material_count, faces = m->index_count;
    while (keep > 0 && soft[keep - 1])
        faces -= (size_t)m->materials[--keep].index_count;
    for (size_t i = 0; i < keep; i++)
        if (soft[i]) {
            free(soft);
            return plush_diag_fail(diag, PLUSH_E_UNSUPPORTED, -1, "material", (int64_t)i,
                                   "--proxy-triangles: the soft body's material is not after every visible one");
        }
    free(soft);
    for (size_t i = 0; i < m->morph_count; i++)
        if (m->morphs[i].kind == PLUSH_PMX_MORPH_MATERIAL)
            for (uint32_t k = 0; k < m->morphs[i].offset_count; k++)
                if (m->morphs[i].offsets.material[k].material >= (int32_t)keep)
                    return plush_diag_fail(diag, PLUSH_E_UNSUPPORTED, -1, "morph", (int64_t)i,
                                           "--proxy-triangles: a material morph changes the soft body's material");
    out->material_count = keep;
    out->index_count = faces;
    out->soft_body_count = 0;
    out->soft_bodies = NULL;
    return PLUSH_OK;
}

/* Pins and anchors carried from the model's soft bodies to the new cage: a cage vertex is pinned when the
 * nearest node of the old cages is pinned, and the nearest cage vertex of every old pinned node is pinned
 * too, so a coarse cage still holds where the old one held. Anchors go by rigid body (plush_attach anchors
 * the cage vertices inside it). */
static plush_status carry_pins(const plush_pmx_model *m, const plush_cage_mesh *cage, plush_arena *arena,
                               plush_attach_options *opt, plush_diag *diag)
{
    size_t nodes = 0, pins = 0, anchors = 0;
    bool *pinned = calloc(m->vertex_count ? m->vertex_count : 1, 1);
    bool *on_cage = calloc(m->vertex_count ? m->vertex_count : 1, 1);
    uint32_t *old = NULL;
    uint32_t *out = plush_arena_array(arena, cage->vertex_count + 1, sizeof *out);
    bool *take = calloc(cage->vertex_count ? cage->vertex_count : 1, 1);
    const char **names = NULL;
    plush_status st = PLUSH_OK;
    if (!pinned || !on_cage || !out || !take) {
        st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        goto done;
    }
    for (size_t s = 0; s < m->soft_body_count; s++) {
        const plush_pmx_soft_body *sb = &m->soft_bodies[s];
        for (uint32_t k = 0; k < sb->pin_count; k++)
            if (sb->pins[k] >= 0 && (size_t)sb->pins[k] < m->vertex_count)
                pinned[sb->pins[k]] = true;
        anchors += sb->anchor_count;
        size_t first = 0, count = 0;
        if (sb->material < 0 || plush_pmx_material_faces(m, (size_t)sb->material, &first, &count, diag) != PLUSH_OK)
            continue;
        for (size_t i = first; i < first + count; i++)
            on_cage[m->indices[i]] = true;
    }
    for (size_t v = 0; v < m->vertex_count; v++)
        nodes += on_cage[v], pins += pinned[v];
    old = malloc((nodes ? nodes : 1) * sizeof *old);
    if (!old) {
        st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        goto done;
    }
    nodes = 0;
    for (size_t v = 0; v < m->vertex_count; v++)
        if (on_cage[v] || pinned[v])
            old[nodes++] = (uint32_t)v;
    for (size_t c = 0; c < cage->vertex_count && nodes; c++) {
        float best = INFINITY;
        uint32_t which = 0;
        for (size_t i = 0; i < nodes; i++) {
            const float *p = m->vertices[old[i]].position;
            float dx = p[0] - cage->positions[c][0], dy = p[1] - cage->positions[c][1], dz = p[2] - cage->positions[c][2];
            float d = dx * dx + dy * dy + dz * dz;
            if (d < best)
                best = d, which = old[i];
        }
        take[c] = pinned[which];
    }
    for (size_t i = 0; i < nodes; i++) {
        if (!pinned[old[i]])
            continue;
        const float *p = m->vertices[old[i]].position;
        float best = INFINITY;
        size_t which = 0;
        for (size_t c = 0; c < cage->vertex_count; c++) {
            float dx = p[0] - cage->positions[c][0], dy = p[1] - cage->positions[c][1], dz = p[2] - cage->positions[c][2];
            float d = dx * dx + dy * dy + dz * dz;
            if (d < best)
                best = d, which = c;
        }
        take[which] = true;
    }
    opt->pin_vertex_count = 0;
    for (size_t c = 0; c < cage->vertex_count; c++)
        if (take[c])
            out[opt->pin_vertex_count++] = (uint32_t)c;
    opt->pin_vertices = out;
    if (anchors) {
        names = plush_arena_array(arena, anchors, sizeof *names);
        if (!names) {
            st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
            goto done;
        }
        size_t n = 0;
        for (size_t s = 0; s < m->soft_body_count; s++)
            for (uint32_t k = 0; k < m->soft_bodies[s].anchor_count; k++) {
                int32_t rb = m->soft_bodies[s].anchors[k].rigid_body;
                if (rb < 0 || (size_t)rb >= m->rigid_body_count)
                    continue;
                bool seen = false;
                for (size_t j = 0; j < n; j++)
                    seen |= strcmp(names[j], m->rigid_bodies[rb].name.s) == 0;
                if (!seen)
                    names[n++] = m->rigid_bodies[rb].name.s;
            }
        opt->anchors = names;
        opt->anchor_count = n;
    }
    (void)pins;
done:
    free(pinned);
    free(on_cage);
    free(old);
    free(take);
    return st;
}

static const plush_pmx_soft_body *first_trimesh(const plush_pmx_model *m)
{
    for (size_t s = 0; s < m->soft_body_count; s++)
        if (m->soft_bodies[s].shape == 0 && m->soft_bodies[s].material >= 0)
            return &m->soft_bodies[s];
    return NULL;
}

static plush_status make_variant(const plush_pmx_model *m, float size, cage_variant *v, plush_diag *diag)
{
    const plush_pmx_soft_body *sb = first_trimesh(m);
    if (!sb)
        return plush_diag_fail(diag, PLUSH_E_UNSUPPORTED, -1, "soft body", -1,
                               "--proxy-triangles copies the model's TriMesh soft body, and it has none");
    plush_status st = strip_soft_bodies(m, &v->base, diag);
    plush_cage_mesh skin, cage;
    plush_cage_result res;
    plush_cage_options copt = {.target_triangles = v->target, .offset = 0.02f * size};
    plush_cage_topology topo;
    if (st == PLUSH_OK)
        st = plush_cage_weld(&v->base, NULL, 0, &v->arena, &skin, diag);
    /* A surface in several pieces would give a cage in as many pieces, one soft body each, and those
     * without a pin fall: one wrap around them all instead, at the same distance. */
    if (st == PLUSH_OK)
        st = plush_cage_check(&skin, &topo, diag);
    if (st == PLUSH_OK) {
        v->source_pieces = topo.pieces;
        copt.wrap = v->wrapped = topo.pieces > 1;
        st = plush_cage_simplify(&skin, &copt, &v->arena, &cage, &res, diag);
    }
    plush_attach_options opt = {.cage = &cage, .soft = *sb, .auto_mask = true};
    if (st == PLUSH_OK)
        st = carry_pins(m, &cage, &v->arena, &opt, diag);
    plush_attach_result ares;
    if (st == PLUSH_OK)
        st = plush_attach(&v->base, &opt, &v->model, &ares, diag);
    if (st == PLUSH_OK)
        v->triangles = cage.triangle_count, v->pieces = ares.pieces, v->pinned = ares.pinned;
    /* where the pins landed, for the report: a cage held away from where the model's own was swings */
    v->pin_y[0] = v->cage_y[0] = INFINITY;
    v->pin_y[1] = v->cage_y[1] = -INFINITY;
    for (size_t i = 0; st == PLUSH_OK && i < cage.vertex_count; i++)
        v->cage_y[0] = fminf(v->cage_y[0], cage.positions[i][1]), v->cage_y[1] = fmaxf(v->cage_y[1], cage.positions[i][1]);
    for (size_t i = 0; st == PLUSH_OK && i < opt.pin_vertex_count; i++) {
        float y = cage.positions[opt.pin_vertices[i]][1];
        v->pin_y[0] = fminf(v->pin_y[0], y), v->pin_y[1] = fmaxf(v->pin_y[1], y);
    }
    return st;
}

/* ---- the job ------------------------------------------------------------------------------------- */

enum { RUN_BONES, RUN_DIRECT, RUN_PROXY }; /* the first proxy run; generated cages follow it */

typedef struct pair_stats {
    double sum[5], max[5];        /* rms, p95, max, normal mean, normal max */
    uint32_t frames;
} pair_stats;

typedef struct run_stats {
    double physics, skinning;     /* sums, seconds */
    double vol_min, vol_max;
    uint32_t frames, vol_frames;
} run_stats;

typedef struct compare_state {
    const compare_job *job;
    plush_pmx_model *model;
    plush_vmd_motion *motion;
    plush_im2_map *overrides;
    cage_variant *variants;
    size_t variant_count;
    bool own_proxy;               /* the model has a soft body: run "proxy" on it */
    plush_compare_run_desc *runs;
    char (*run_names)[48];
    size_t run_count;
    plush_compare_pair *pairs;
    size_t pair_count;
    plush_compare *cmp;
    uint32_t frames;
    pair_stats *pstats;
    run_stats *rstats;
    double *series_pair;          /* frames x pairs: RMS per frame (NaN where missing) */
    double *series_run;           /* frames x runs: physics + skinning ms per frame */
    plush_buf csv;
    /* pictures: the frames rendered as they pass, and a copy of the worst frame (proxy against the
     * reference) kept until the end, since which frame is worst is known only then */
    float size;
    uint32_t pictured[2];
    size_t pictured_count;
    double worst_rms, worst_p95;
    uint32_t worst_frame;
    float (*keep_pos)[3][3], (*keep_nrm)[3][3]; /* per vertex: bones, proxy, direct */
    float *keep_dist;
    float (*colors)[3];
    plush_image panel, sheet;
    bool render_failed;
} compare_state;

static void buf_printf(plush_buf *b, const char *fmt, ...) CLI_PRINTF(2, 3);
static void buf_printf(plush_buf *b, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    plush_buf_append(b, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

static bool make_dir(const char *path)
{
    plush_diag d;
    cli_diag_init(&d, path);
    if (cli_make_dir(path, &d))
        return true;
    cli_report(&d);
    return false;
}

static char *out_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static bool read_inputs(compare_state *s)
{
    const compare_job *job = s->job;
    plush_diag d;
    cli_diag_init(&d, job->model);
    if (!cli_regular_file(job->model, &d) || plush_pmx_read_file(job->model, NULL, &s->model, &d) != PLUSH_OK) {
        cli_report(&d);
        return false;
    }
    if (job->motion) {
        cli_diag_init(&d, job->motion);
        if (!cli_regular_file(job->motion, &d) || plush_vmd_read_file(job->motion, &s->motion, &d) != PLUSH_OK) {
            cli_report(&d);
            return false;
        }
        cli_report_warnings(&d);
    }
    if (job->overrides) {
        cli_diag_init(&d, job->overrides);
        if (!cli_regular_file(job->overrides, &d) || plush_im2_read_file(job->overrides, &s->overrides, &d) != PLUSH_OK) {
            cli_report(&d);
            return false;
        }
        cli_report_warnings(&d);
    }
    return true;
}

static bool make_variants(compare_state *s, float size)
{
    const compare_job *job = s->job;
    s->variants = calloc(job->triangle_count ? job->triangle_count : 1, sizeof *s->variants);
    if (!s->variants) {
        fprintf(stderr, "plush: out of memory\n");
        return false;
    }
    for (size_t i = 0; i < job->triangle_count; i++) {
        cage_variant *v = &s->variants[s->variant_count++];
        v->target = job->triangles[i];
        plush_diag d;
        cli_diag_init(&d, job->model);
        if (make_variant(s->model, size, v, &d) != PLUSH_OK) {
            cli_report(&d);
            return false;
        }
        cli_report_warnings(&d); /* plush_attach's: a cage piece nothing holds falls */
    }
    return true;
}

/* Runs: bones, direct, the model's own proxy (when it has one), one per generated cage. Pairs: each proxy
 * against direct, bones against direct, each proxy against bones (the soft body's own effect, measured
 * even when direct cannot run). */
static bool plan_runs(compare_state *s)
{
    size_t proxies = (s->own_proxy ? 1 : 0) + s->variant_count;
    s->run_count = 2 + proxies;
    s->pair_count = 1 + 2 * proxies;
    s->runs = calloc(s->run_count, sizeof *s->runs);
    s->run_names = calloc(s->run_count, sizeof *s->run_names);
    s->pairs = calloc(s->pair_count, sizeof *s->pairs);
    if (!s->runs || !s->run_names || !s->pairs) {
        fprintf(stderr, "plush: out of memory\n");
        return false;
    }
    s->runs[RUN_BONES] = (plush_compare_run_desc){.name = "bones", .kind = PLUSH_COMPARE_BONES};
    /* direct simulates the model's own soft body on the detailed mesh; a model without one borrows the first
     * generated cage's (the same parameters every cage gets) */
    s->runs[RUN_DIRECT] = (plush_compare_run_desc){.name = "direct", .kind = PLUSH_COMPARE_DIRECT, .optional = true,
                                                   .model = s->own_proxy ? NULL : s->variants[0].model};
    size_t r = RUN_PROXY;
    if (s->own_proxy)
        s->runs[r++] = (plush_compare_run_desc){.name = "proxy", .kind = PLUSH_COMPARE_PROXY};
    for (size_t i = 0; i < s->variant_count; i++, r++) {
        snprintf(s->run_names[r], sizeof s->run_names[r], "proxy %zu", s->variants[i].triangles);
        s->runs[r] = (plush_compare_run_desc){.name = s->run_names[r], .kind = PLUSH_COMPARE_PROXY,
                                              .model = s->variants[i].model};
    }
    size_t p = 0;
    s->pairs[p++] = (plush_compare_pair){RUN_PROXY, RUN_DIRECT};
    s->pairs[p++] = (plush_compare_pair){RUN_BONES, RUN_DIRECT};
    for (size_t k = 1; k < proxies; k++)
        s->pairs[p++] = (plush_compare_pair){RUN_PROXY + k, RUN_DIRECT};
    for (size_t k = 0; k < proxies; k++)
        s->pairs[p++] = (plush_compare_pair){RUN_PROXY + k, RUN_BONES};
    return true;
}

static uint32_t default_frames(const compare_job *job, const plush_vmd_motion *motion, float fps)
{
    if (job->frames_set)
        return job->frames;
    if (!motion)
        return 300;
    return (uint32_t)ceil((double)plush_vmd_last_frame(motion) * fps / 30.0) + 1;
}

static const char *run_name(const compare_state *s, size_t r)
{
    plush_compare_run_info info;
    plush_compare_get_run_info(s->cmp, r, &info);
    return info.name;
}

static bool run_available(const compare_state *s, size_t r)
{
    plush_compare_run_info info;
    plush_compare_get_run_info(s->cmp, r, &info);
    return info.available;
}

static bool pair_shown(const compare_state *s, size_t p)
{
    return run_available(s, s->pairs[p].a) && run_available(s, s->pairs[p].b);
}

static void csv_number(plush_buf *b, double v, double scale)
{
    if (isfinite(v))
        buf_printf(b, ",%.9g", v * scale);
    else
        buf_printf(b, ",");
}

static void record_frame(compare_state *s, uint32_t f)
{
    const plush_compare_run_frame *rf = plush_compare_run_frames(s->cmp);
    const plush_compare_pair_frame *pf = plush_compare_pair_frames(s->cmp);
    for (size_t r = 0; r < s->run_count; r++) {
        run_stats *st = &s->rstats[r];
        s->series_run[(size_t)f * s->run_count + r] = rf[r].valid ? 1e3 * (rf[r].physics + rf[r].skinning) : NAN;
        if (!rf[r].valid)
            continue;
        st->physics += rf[r].physics, st->skinning += rf[r].skinning, st->frames++;
        if (isfinite(rf[r].volume_ratio)) {
            st->vol_min = st->vol_frames ? fmin(st->vol_min, rf[r].volume_ratio) : rf[r].volume_ratio;
            st->vol_max = st->vol_frames ? fmax(st->vol_max, rf[r].volume_ratio) : rf[r].volume_ratio;
            st->vol_frames++;
        }
    }
    for (size_t p = 0; p < s->pair_count; p++) {
        s->series_pair[(size_t)f * s->pair_count + p] = pf[p].valid ? pf[p].error.rms : NAN;
        if (!pair_shown(s, p))
            continue;
        size_t a = s->pairs[p].a, b = s->pairs[p].b;
        buf_printf(&s->csv, "%u,%s,%s", f, run_name(s, a), run_name(s, b));
        const plush_compare_error *e = &pf[p].error;
        double v[5] = {e->rms, e->p95, e->max, e->normal_mean, e->normal_max};
        for (int k = 0; k < 5; k++)
            csv_number(&s->csv, pf[p].valid ? v[k] : NAN, 1);
        csv_number(&s->csv, rf[a].valid ? rf[a].volume_ratio : NAN, 1);
        csv_number(&s->csv, rf[b].valid ? rf[b].volume_ratio : NAN, 1);
        csv_number(&s->csv, rf[a].valid ? rf[a].physics : NAN, 1e3);
        csv_number(&s->csv, rf[a].valid ? rf[a].skinning : NAN, 1e3);
        csv_number(&s->csv, rf[b].valid ? rf[b].physics : NAN, 1e3);
        csv_number(&s->csv, rf[b].valid ? rf[b].skinning : NAN, 1e3);
        buf_printf(&s->csv, "\n");
        if (!pf[p].valid)
            continue;
        pair_stats *ps = &s->pstats[p];
        for (int k = 0; k < 5; k++) {
            ps->sum[k] += v[k];
            ps->max[k] = ps->frames ? fmax(ps->max[k], v[k]) : v[k];
        }
        ps->frames++;
    }
}

/* ---- report.md ----------------------------------------------------------------------------------- */

static double ms_per_frame(const run_stats *r) { return r->frames ? 1e3 * (r->physics + r->skinning) / r->frames : NAN; }

static void verdict(const compare_state *s, plush_buf *md, float size)
{
    const run_stats *proxy = &s->rstats[RUN_PROXY], *direct = &s->rstats[RUN_DIRECT];
    const pair_stats *err = &s->pstats[0];
    plush_compare_run_info dinfo;
    plush_compare_get_run_info(s->cmp, RUN_DIRECT, &dinfo);
    const char *pname = run_name(s, RUN_PROXY);
    if (!dinfo.available || err->frames == 0) {
        buf_printf(md, "**The direct simulation did not run** (%s), so there is no speed-up and no error "
                       "against the ground truth in this report. The tables give the %s run against plain bones "
                       "(how far the soft body moves the surface) and the time of each run.\n\n",
                   dinfo.reason[0] ? dinfo.reason : "it has no frame", pname);
        return;
    }
    double tp = ms_per_frame(proxy), td = ms_per_frame(direct);
    double rms = err->sum[0] / err->frames, p95 = err->sum[1] / err->frames, worst = err->max[2];
    buf_printf(md, "**%s is %.1f× faster than direct**: physics + skinning take %.3f ms per frame against "
                   "%.3f ms (thread CPU time, the same run).\n",
               pname, td / tp, tp, td);
    buf_printf(md, "Its surface lies **%.3g model units** from the direct simulation (RMS over the vertices, mean "
                   "over %u frames) = **%.2f%% of the model's size** (its %.3g-unit bounding-box diagonal); "
                   "95%% of the vertices within %.3g (%.2f%%) on average, the worst vertex at the worst frame "
                   "%.3g (%.2f%%).\n\n",
               rms, err->frames, 100 * rms / size, (double)size, p95, 100 * p95 / size, worst, 100 * worst / size);
    if (dinfo.stopped)
        buf_printf(md, "The direct run stopped at frame %u (%s): the comparison covers the %u frames before it.\n\n",
                   dinfo.stopped_at, dinfo.reason, dinfo.frames);
}

static void runs_table(const compare_state *s, plush_buf *md)
{
    buf_printf(md, "## Runs\n\n| run | frames | physics ms/frame | skinning ms/frame | total ms/frame | "
                   "volume ratio to rest (min … max) | notes |\n|---|---:|---:|---:|---:|---|---|\n");
    for (size_t r = 0; r < s->run_count; r++) {
        plush_compare_run_info info;
        plush_compare_get_run_info(s->cmp, r, &info);
        const run_stats *st = &s->rstats[r];
        if (!info.available) {
            buf_printf(md, "| %s | 0 | | | | | not run: %s |\n", info.name, info.reason);
            continue;
        }
        char vol[64] = "not measured";
        if (st->vol_frames)
            snprintf(vol, sizeof vol, "%.4f … %.4f", st->vol_min, st->vol_max);
        char notes[PLUSH_DIAG_MESSAGE + 256] = "";
        if (info.stopped)
            snprintf(notes, sizeof notes, "stopped at frame %u: %s", info.stopped_at, info.reason);
        else if (info.failures)
            snprintf(notes, sizeof notes, "%zu soft bodies blew up (first at frame %lld) and stayed frozen; ",
                     info.failures, (long long)info.first_failure);
        size_t vi = r - RUN_PROXY - (s->own_proxy ? 1 : 0);
        if (r >= RUN_PROXY + (s->own_proxy ? 1 : 0) && vi < s->variant_count) {
            /* a cage in several pieces is several soft bodies, and a piece without a pin falls */
            const cage_variant *v = &s->variants[vi];
            size_t used = strlen(notes);
            char how[96];
            if (v->wrapped)
                snprintf(how, sizeof how, "one wrap around the surface's %zu pieces", v->source_pieces);
            else
                snprintf(how, sizeof how, "the surface (%zu piece%s) simplified", v->source_pieces,
                         v->source_pieces == 1 ? "" : "s");
            char where[96] = "";
            if (v->pinned)
                snprintf(where, sizeof where, " (y %.2f … %.2f; the cage spans y %.2f … %.2f)", (double)v->pin_y[0],
                         (double)v->pin_y[1], (double)v->cage_y[0], (double)v->cage_y[1]);
            snprintf(notes + used, sizeof notes - used, "generated cage (%s): %zu triangles (asked %zu) in %zu "
                     "piece%s, %zu pinned vertices%s", how, v->triangles, v->target, v->pieces,
                     v->pieces == 1 ? "" : "s", v->pinned, where);
        }
        buf_printf(md, "| %s | %u | %.3f | %.3f | %.3f | %s | %s |\n", info.name, st->frames,
                   st->frames ? 1e3 * st->physics / st->frames : 0.0, st->frames ? 1e3 * st->skinning / st->frames : 0.0,
                   ms_per_frame(st), vol, notes);
    }
    buf_printf(md, "\n");
}

static void pairs_table(const compare_state *s, plush_buf *md, float size)
{
    buf_printf(md, "## Error, mean over frames / max over frames\n\n| pair | RMS distance | 95th percentile | "
                   "max distance | RMS / size | normal angle mean (°) | normal angle max (°) |\n"
                   "|---|---|---|---|---:|---|---|\n");
    for (size_t p = 0; p < s->pair_count; p++) {
        if (!pair_shown(s, p))
            continue;
        const pair_stats *ps = &s->pstats[p];
        buf_printf(md, "| %s vs %s", run_name(s, s->pairs[p].a), run_name(s, s->pairs[p].b));
        if (!ps->frames) {
            buf_printf(md, " | no common frame | | | | | |\n");
            continue;
        }
        for (int k = 0; k < 5; k++) {
            buf_printf(md, " | %.4g / %.4g", ps->sum[k] / ps->frames, ps->max[k]);
            if (k == 2)
                buf_printf(md, " | %.2f%%", 100 * ps->sum[0] / ps->frames / size);
        }
        buf_printf(md, " |\n");
    }
    buf_printf(md, "\n");
}

static void speedups(const compare_state *s, plush_buf *md)
{
    if (!s->rstats[RUN_DIRECT].frames)
        return;
    buf_printf(md, "## Speed-up over direct (physics + skinning per frame)\n\n| run | ms/frame | speed-up |\n"
                   "|---|---:|---:|\n");
    double td = ms_per_frame(&s->rstats[RUN_DIRECT]);
    for (size_t r = 0; r < s->run_count; r++)
        if (r != RUN_DIRECT && s->rstats[r].frames)
            buf_printf(md, "| %s | %.3f | %.1f× |\n", run_name(s, r), ms_per_frame(&s->rstats[r]),
                       td / ms_per_frame(&s->rstats[r]));
    buf_printf(md, "| direct | %.3f | 1× |\n\n", td);
}

static void meaning(const compare_state *s, plush_buf *md, float size)
{
    const plush_compare_surface *surf = plush_compare_get_surface(s->cmp);
    buf_printf(md, "## What it means\n\n");
    const pair_stats *pd = &s->pstats[0], *bd = &s->pstats[1];
    if (pd->frames && bd->frames && bd->sum[0] > 0) {
        double share = pd->sum[0] / bd->sum[0];
        buf_printf(md, "- Plain bones (no soft body) lie %.3g units (RMS) from direct; the proxy %.3g. The proxy %s "
                       "%.0f%% of the soft motion plain bones miss.\n",
                   bd->sum[0] / bd->frames, pd->sum[0] / pd->frames, share <= 1 ? "reproduces" : "misses more than",
                   share <= 1 ? 100 * (1 - share) : 100 * (share - 1));
    }
    if (pd->frames) {
        double rel = pd->sum[0] / pd->frames / size;
        buf_printf(md, "- An RMS error of %.2f%% of the model's size is %s.\n", 100 * rel,
                   rel < 0.01   ? "hard to tell apart from the direct simulation when watched at full size"
                   : rel < 0.03 ? "visible side by side but keeps the same character of motion"
                                : "a clearly different motion: try a finer cage (--proxy-triangles)");
    }
    buf_printf(md, "- Distances are in model units (1 unit ≈ 8 cm); the model's size is its bounding-box "
                   "diagonal at rest, %.4g units, over %zu measured vertices (those of every material no soft "
                   "body owns).\n",
               (double)size, surf->vertex_count);
    buf_printf(md, "- The normal angle says how differently the surface is lit: a few degrees are invisible, "
                   "tens of degrees show as creases or flat spots.\n");
    if (surf->closed_pieces)
        buf_printf(md, "- The volume ratio is measured on the %zu closed pieces of the surface (of %zu); below 1 "
                       "the toy is squashed, above 1 inflated.%s\n",
                   surf->closed_pieces, surf->pieces,
                   surf->closed_pieces < surf->pieces ? " Open pieces enclose nothing and are left out." : "");
    else
        buf_printf(md, "- The volume ratio is not measured: no piece of the surface is closed (welded by position, "
                       "every edge shared by two faces in opposite directions).\n");
    buf_printf(md, "- Times are thread CPU time of the physics step (pins, kinematic bodies, Bullet, write-back) "
                   "and of skinning (bones, proxy frames, proxy skinning), per frame.\n\n");
}

static plush_status write_report(const compare_state *s, float size, const char *path, plush_diag *diag)
{
    plush_buf md = {0};
    const char *base = strrchr(s->job->model, '/');
    buf_printf(&md, "# plush compare: %s\n\n", base ? base + 1 : s->job->model);
    verdict(s, &md, size);
    runs_table(s, &md);
    pairs_table(s, &md, size);
    speedups(s, &md);
    meaning(s, &md, size);
    buf_printf(&md, "## Files\n\n- `metrics.csv`: one row per frame and run pair (columns: frame, run_a, run_b, "
                    "rms, p95, max, normal_mean_deg, normal_max_deg, volume_ratio_a, volume_ratio_b, physics_ms_a, "
                    "skinning_ms_a, physics_ms_b, skinning_ms_b).\n");
    buf_printf(&md, "- `error.png`, `time.png`: RMS distance of each pair and physics + skinning of each run, per "
                    "frame.%s\n", s->variant_count ? " `error_by_size.png`, `time_by_size.png`: the same against the "
                                                     "proxy's triangle count." : "");
    buf_printf(&md, "- Pictures (bones | %s | direct | its error as colours, blue 0 to red at that frame's 95th "
                    "percentile):", run_name(s, RUN_PROXY));
    for (size_t i = 0; i < s->pictured_count; i++)
        buf_printf(&md, " `frame_%05u.png`", s->pictured[i]);
    bool drawn = false;
    for (size_t i = 0; i < s->pictured_count; i++)
        drawn |= s->pictured[i] == s->worst_frame;
    if (s->worst_rms >= 0)
        buf_printf(&md, drawn ? "; the largest RMS error is at frame %u" : " and the frame with the largest RMS error, "
                                "`frame_%05u.png`", s->worst_frame);
    buf_printf(&md, ".\n");
    buf_printf(&md, "- Input: `%s`%s%s, %u frames at %g fps, physics %g Hz.\n", s->job->model,
               s->job->motion ? ", motion " : "", s->job->motion ? s->job->motion : "", s->frames,
               (double)(s->job->fps ? s->job->fps : 30), (double)(s->job->physics_hz ? s->job->physics_hz : 60));
    plush_status st = md.failed ? plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory")
                                : plush_file_write_atomic(path, md.data, md.size, diag);
    plush_buf_free(&md);
    return st;
}


/* ---- plots --------------------------------------------------------------------------------------- */

/* Draws and writes one plot; a failure is reported here, naming the file. */
static plush_status write_plot(const compare_state *s, const char *name, const plush_plot *plot, plush_diag *diag)
{
    plush_image img = {0};
    char *path = out_path(s->job->out_dir, name);
    if (!path)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    cli_diag_init(diag, path);
    plush_status st = plush_image_create(900, 520, &img, diag);
    if (st == PLUSH_OK)
        st = plush_plot_draw(plot, &img, diag);
    if (st == PLUSH_OK)
        st = plush_image_write_png(&img, path, diag);
    if (st != PLUSH_OK)
        cli_report(diag);
    diag->file = NULL;
    plush_image_free(&img);
    free(path);
    return st;
}

/* error.png and time.png: one line per pair (RMS) and per run (ms per frame). */
static plush_status plots_over_time(const compare_state *s, plush_diag *diag)
{
    size_t n = s->frames, np = 0, nr = 0;
    double *x = malloc(n * sizeof *x), *ys = malloc(n * (s->pair_count + s->run_count) * sizeof *ys);
    plush_plot_series *series = calloc(s->pair_count + s->run_count, sizeof *series);
    char (*names)[112] = calloc(s->pair_count, sizeof *names);
    plush_status st = PLUSH_OK;
    if (!x || !ys || !series || !names) {
        st = plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        goto done;
    }
    for (size_t f = 0; f < n; f++)
        x[f] = (double)f;
    for (size_t p = 0; p < s->pair_count; p++) {
        if (!pair_shown(s, p))
            continue;
        double *y = ys + np * n;
        for (size_t f = 0; f < n; f++)
            y[f] = s->series_pair[f * s->pair_count + p];
        snprintf(names[np], sizeof names[np], "%s vs %s", run_name(s, s->pairs[p].a), run_name(s, s->pairs[p].b));
        series[np] = (plush_plot_series){.name = names[np], .x = x, .y = y, .count = n};
        np++;
    }
    st = write_plot(s, "error.png",
                    &(plush_plot){.title = "RMS vertex distance over time", .x_label = "frame",
                                  .y_label = "model units", .series = series, .series_count = np, .y_from_zero = true},
                    diag);
    for (size_t r = 0; st == PLUSH_OK && r < s->run_count; r++) {
        if (!run_available(s, r))
            continue;
        double *y = ys + (np + nr) * n;
        for (size_t f = 0; f < n; f++)
            y[f] = s->series_run[f * s->run_count + r];
        series[np + nr] = (plush_plot_series){.name = run_name(s, r), .x = x, .y = y, .count = n};
        nr++;
    }
    if (st == PLUSH_OK)
        st = write_plot(s, "time.png",
                        &(plush_plot){.title = "physics + skinning per frame", .x_label = "frame", .y_label = "ms",
                                      .series = series + np, .series_count = nr, .y_from_zero = true},
                        diag);
done:
    free(x);
    free(ys);
    free(series);
    free(names);
    return st;
}

/* error_by_size.png and time_by_size.png: the generated cages (and the model's own) by triangle count. */
static plush_status plots_by_size(const compare_state *s, plush_diag *diag)
{
    size_t k = s->variant_count + (s->own_proxy ? 1 : 0);
    double x[64], rms_d[64], max_d[64], rms_b[64], t[64], td[2], tx[2];
    if (s->variant_count == 0 || k > 64)
        return PLUSH_OK;
    /* sorted by size: the model's own cage has its soft body's triangle count */
    size_t order[64];
    for (size_t i = 0; i < k; i++) {
        size_t r = RUN_PROXY + i;
        size_t tri = 0;
        if (s->own_proxy && i == 0) {
            const plush_compare_surface *surf = plush_compare_get_surface(s->cmp);
            (void)surf;
            const plush_pmx_model *m = s->model;
            for (size_t b = 0; b < m->soft_body_count; b++)
                if (m->soft_bodies[b].shape == 0 && m->soft_bodies[b].material >= 0 &&
                    (size_t)m->soft_bodies[b].material < m->material_count)
                    tri += (size_t)m->materials[m->soft_bodies[b].material].index_count / 3;
        } else {
            tri = s->variants[i - (s->own_proxy ? 1 : 0)].triangles;
        }
        x[i] = (double)tri;
        order[i] = r;
    }
    for (size_t i = 1; i < k; i++) /* insertion sort of a handful */
        for (size_t j = i; j > 0 && x[j] < x[j - 1]; j--) {
            double tx0 = x[j];
            x[j] = x[j - 1], x[j - 1] = tx0;
            size_t to = order[j];
            order[j] = order[j - 1], order[j - 1] = to;
        }
    for (size_t i = 0; i < k; i++) {
        size_t r = order[i], pd = 0, pb = 0;
        for (size_t p = 0; p < s->pair_count; p++) {
            if (s->pairs[p].a == r && s->pairs[p].b == RUN_DIRECT)
                pd = p;
            if (s->pairs[p].a == r && s->pairs[p].b == RUN_BONES)
                pb = p;
        }
        const pair_stats *a = &s->pstats[pd], *b = &s->pstats[pb];
        rms_d[i] = a->frames ? a->sum[0] / a->frames : NAN;
        max_d[i] = a->frames ? a->max[2] : NAN;
        rms_b[i] = b->frames ? b->sum[0] / b->frames : NAN;
        t[i] = ms_per_frame(&s->rstats[r]);
    }
    plush_plot_series es[3] = {{.name = "RMS vs direct (mean)", .x = x, .y = rms_d, .count = k},
                               {.name = "max vs direct (worst)", .x = x, .y = max_d, .count = k},
                               {.name = "RMS vs bones (mean)", .x = x, .y = rms_b, .count = k}};
    plush_status st = write_plot(s, "error_by_size.png",
                                 &(plush_plot){.title = "error against proxy size", .x_label = "proxy triangles",
                                               .y_label = "model units", .series = es, .series_count = 3,
                                               .markers = true, .y_from_zero = true},
                                 diag);
    tx[0] = x[0], tx[1] = x[k - 1];
    td[0] = td[1] = ms_per_frame(&s->rstats[RUN_DIRECT]);
    plush_plot_series ts[2] = {{.name = "proxy", .x = x, .y = t, .count = k},
                               {.name = "direct", .x = tx, .y = td, .count = 2}};
    if (st == PLUSH_OK)
        st = write_plot(s, "time_by_size.png",
                        &(plush_plot){.title = "physics + skinning per frame against proxy size",
                                      .x_label = "proxy triangles", .y_label = "ms", .series = ts,
                                      .series_count = s->rstats[RUN_DIRECT].frames ? 2 : 1, .markers = true,
                                      .y_from_zero = true},
                        diag);
    return st;
}

/* ---- pictures ------------------------------------------------------------------------------------ */

enum { PANEL_W = 300, PANEL_H = 380, LABEL_H = 44, PANELS = 4 };
static const uint8_t ink[3] = {20, 20, 20}, paper[3] = {255, 255, 255}, mute[3] = {120, 120, 120};

/* The pair whose error the fourth panel shows: proxy against direct, or against bones without direct. */
static size_t picture_pair(const compare_state *s)
{
    return run_available(s, RUN_DIRECT) ? 0 : 1 + (s->pair_count - 1) / 2;
}

static void render_panel(compare_state *s, int slot, const float (*pos)[3], const float (*nrm)[3],
                         const float (*colors)[3], const plush_render_view *view, const char *label)
{
    const plush_compare_surface *surf = plush_compare_get_surface(s->cmp);
    plush_image_fill(&s->panel, paper);
    plush_diag d;
    cli_diag_init(&d, s->job->model);
    if (pos) {
        plush_render_mesh mesh = {.vertex_count = s->model->vertex_count, .positions = pos, .normals = nrm,
                                  .index_count = 3 * surf->triangle_count, .indices = &surf->triangles[0][0],
                                  .colors = colors};
        if (plush_render(&mesh, view, &s->panel, &d) != PLUSH_OK && !s->render_failed) {
            s->render_failed = true; /* said once: Embree missing fails every picture the same way */
            fprintf(stderr, "plush: warning: no pictures: ");
            cli_report(&d);
        }
    } else {
        const char *none = "not run";
        plush_image_text(&s->panel, (PANEL_W - plush_image_text_width(none, 2)) / 2, PANEL_H / 2, none, 2, mute);
    }
    plush_image_blit(&s->sheet, &s->panel, slot * PANEL_W, LABEL_H);
    plush_image_text(&s->sheet, slot * PANEL_W + (PANEL_W - plush_image_text_width(label, 2)) / 2, 12, label, 2, ink);
}

/* One picture: bones | proxy | direct | the pair's per-vertex distance as colours on the proxy surface. */
static void picture(compare_state *s, uint32_t frame, const float (*const pos[3])[3], const float (*const nrm[3])[3],
                    const float *dist, double p95)
{
    if (s->render_failed)
        return;
    const plush_compare_surface *surf = plush_compare_get_surface(s->cmp);
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int r = 0; r < 3; r++)
        for (size_t i = 0; pos[r] && i < surf->vertex_count; i++)
            for (int k = 0; k < 3; k++) {
                float v = pos[r][surf->vertices[i]][k];
                if (isfinite(v))
                    lo[k] = fminf(lo[k], v), hi[k] = fmaxf(hi[k], v);
            }
    plush_render_view view;
    plush_render_view_fit_box(lo, hi, (float)PANEL_W / PANEL_H, &view);
    /* red from the frame's 95th percentile on: a fixed scale would paint a large error red all over and
     * hide where it is largest; the bar under the panel says what red means in this picture */
    float scale = fmaxf((float)p95, 1e-3f * s->size);
    for (size_t i = 0; i < surf->vertex_count; i++)
        plush_colormap(dist ? dist[i] / scale : NAN, s->colors[surf->vertices[i]]);
    plush_image_fill(&s->sheet, paper);
    size_t pp = picture_pair(s);
    char label[128];
    render_panel(s, 0, pos[0], nrm[0], NULL, &view, "bones");
    render_panel(s, 1, pos[1], nrm[1], NULL, &view, run_name(s, RUN_PROXY));
    render_panel(s, 2, pos[2], nrm[2], NULL, &view, "direct");
    snprintf(label, sizeof label, "error vs %s", run_name(s, s->pairs[pp].b));
    render_panel(s, 3, pos[1], nrm[1], (const float(*)[3])s->colors, &view, label);
    /* the colour bar under the error panel */
    int bx = 3 * PANEL_W + 20, bw = PANEL_W - 40, by = LABEL_H + PANEL_H + 8;
    for (int i = 0; i < bw; i++) {
        float c[3];
        plush_colormap((float)i / (float)(bw - 1), c);
        uint8_t rgb[3] = {(uint8_t)lroundf(255 * c[0]), (uint8_t)lroundf(255 * c[1]), (uint8_t)lroundf(255 * c[2])};
        plush_image_rect(&s->sheet, bx + i, by, 1, 14, rgb);
    }
    snprintf(label, sizeof label, "0 .. %.3g units (%.1f%% of size)", (double)scale, 100.0 * scale / s->size);
    plush_image_text(&s->sheet, bx, by + 20, label, 1, ink);
    snprintf(label, sizeof label, "frame %u", frame);
    plush_image_text(&s->sheet, 10, by + 8, label, 2, ink);
    snprintf(label, sizeof label, "frame_%05u.png", frame);
    char *path = out_path(s->job->out_dir, label);
    plush_diag d;
    cli_diag_init(&d, path);
    if (!path || plush_image_write_png(&s->sheet, path, &d) != PLUSH_OK) {
        s->render_failed = true;
        cli_report(&d);
    }
    free(path);
}

static bool pictures_setup(compare_state *s)
{
    size_t nv = s->model->vertex_count ? s->model->vertex_count : 1;
    plush_diag d;
    cli_diag_init(&d, s->job->out_dir);
    s->keep_pos = calloc(nv, sizeof *s->keep_pos);
    s->keep_nrm = calloc(nv, sizeof *s->keep_nrm);
    s->keep_dist = calloc(plush_compare_get_surface(s->cmp)->vertex_count + 1, sizeof *s->keep_dist);
    s->colors = calloc(nv, sizeof *s->colors);
    if (!s->keep_pos || !s->keep_nrm || !s->keep_dist || !s->colors ||
        plush_image_create(PANEL_W, PANEL_H, &s->panel, &d) != PLUSH_OK ||
        plush_image_create(PANELS * PANEL_W, LABEL_H + PANEL_H + 44, &s->sheet, &d) != PLUSH_OK) {
        fprintf(stderr, "plush: out of memory\n");
        return false;
    }
    /* the middle and the last frame as they pass; the worst at the end */
    s->pictured[s->pictured_count++] = s->frames / 2;
    if (s->frames - 1 != s->frames / 2)
        s->pictured[s->pictured_count++] = s->frames - 1;
    s->worst_rms = -1;
    return true;
}

static const size_t picture_runs[3] = {RUN_BONES, RUN_PROXY, RUN_DIRECT};

static void pictures_frame(compare_state *s, uint32_t f)
{
    const float(*pos[3])[3], (*nrm[3])[3];
    for (int r = 0; r < 3; r++) {
        pos[r] = plush_compare_run_frames(s->cmp)[picture_runs[r]].valid ? plush_compare_positions(s->cmp, picture_runs[r]) : NULL;
        nrm[r] = pos[r] ? plush_compare_normals(s->cmp, picture_runs[r]) : NULL;
    }
    size_t pp = picture_pair(s);
    const plush_compare_pair_frame *pf = &plush_compare_pair_frames(s->cmp)[pp];
    const float *dist = pf->valid ? plush_compare_distances(s->cmp, pp) : NULL;
    for (size_t i = 0; i < s->pictured_count; i++)
        if (s->pictured[i] == f)
            picture(s, f, pos, nrm, dist, pf->valid ? pf->error.p95 : 0);
    if (!pf->valid || pf->error.rms <= s->worst_rms)
        return;
    /* a new worst frame: keep what its picture needs */
    s->worst_rms = pf->error.rms;
    s->worst_p95 = pf->error.p95;
    s->worst_frame = f;
    size_t nv = s->model->vertex_count;
    for (size_t v = 0; v < nv; v++)
        for (int r = 0; r < 3; r++)
            if (pos[r]) {
                memcpy(s->keep_pos[v][r], pos[r][v], sizeof s->keep_pos[v][r]);
                memcpy(s->keep_nrm[v][r], nrm[r][v], sizeof s->keep_nrm[v][r]);
            }
    memcpy(s->keep_dist, dist, plush_compare_get_surface(s->cmp)->vertex_count * sizeof *dist);
}

static void pictures_finish(compare_state *s)
{
    if (s->worst_rms < 0)
        return;
    for (size_t i = 0; i < s->pictured_count; i++)
        if (s->pictured[i] == s->worst_frame)
            return; /* already drawn */
    /* the kept copy is interleaved per vertex (one allocation, every run in reach); the renderer wants one
     * array per run, so unpack into the colour buffer's neighbour arrays one run at a time */
    size_t nv = s->model->vertex_count;
    float(*p)[3] = malloc((nv ? nv : 1) * 6 * sizeof *p);
    if (!p) {
        fprintf(stderr, "plush: out of memory\n");
        return;
    }
    const float(*pos[3])[3], (*nrm[3])[3];
    for (int r = 0; r < 3; r++) {
        bool have = plush_compare_positions(s->cmp, picture_runs[r]) != NULL;
        pos[r] = nrm[r] = NULL;
        if (!have)
            continue;
        float(*pr)[3] = p + (size_t)(2 * r) * nv, (*nr)[3] = p + (size_t)(2 * r + 1) * nv;
        for (size_t v = 0; v < nv; v++) {
            memcpy(pr[v], s->keep_pos[v][r], sizeof pr[v]);
            memcpy(nr[v], s->keep_nrm[v][r], sizeof nr[v]);
        }
        pos[r] = (const float(*)[3])pr, nrm[r] = (const float(*)[3])nr;
    }
    picture(s, s->worst_frame, pos, nrm, s->keep_dist, s->worst_p95);
    free(p);
}

/* ---- main ---------------------------------------------------------------------------------------- */

static int simulate(compare_state *s)
{
    const compare_job *job = s->job;
    plush_diag d;
    cli_diag_init(&d, job->model);
    s->own_proxy = first_trimesh(s->model) != NULL;
    if (!s->own_proxy && job->triangle_count == 0) {
        fprintf(stderr, "plush: %s: no TriMesh soft body — add one with `plush attach`\n", job->model);
        return CLI_FAILED;
    }
    plush_compare_surface *surf = NULL;
    if (plush_compare_surface_from_model(s->model, &surf, &d) != PLUSH_OK) {
        cli_report(&d);
        return CLI_FAILED;
    }
    float size = surf->diagonal > 0 ? surf->diagonal : 1;
    plush_compare_surface_free(surf);
    if (!make_variants(s, size) || !plan_runs(s))
        return CLI_FAILED;
    plush_compare_desc desc = {.model = s->model,
                               .motion = s->motion,
                               .fps = job->fps,
                               .world = {.physics_hz = job->physics_hz},
                               .overrides = s->overrides,
                               .overrides_file = job->overrides,
                               .runs = s->runs,
                               .run_count = s->run_count,
                               .pairs = s->pairs,
                               .pair_count = s->pair_count};
    if (plush_compare_create(&desc, &s->cmp, &d) != PLUSH_OK) {
        if (d.status == PLUSH_E_NO_PROXY)
            fprintf(stderr, "plush: %s: no usable TriMesh soft body — add one with `plush attach`\n", job->model);
        else
            cli_report(&d);
        return CLI_FAILED;
    }
    s->frames = default_frames(job, s->motion, job->fps ? job->fps : 30);
    s->pstats = calloc(s->pair_count, sizeof *s->pstats);
    s->rstats = calloc(s->run_count, sizeof *s->rstats);
    s->series_pair = malloc((size_t)s->frames * s->pair_count * sizeof *s->series_pair);
    s->series_run = malloc((size_t)s->frames * s->run_count * sizeof *s->series_run);
    if (!s->pstats || !s->rstats || !s->series_pair || !s->series_run) {
        fprintf(stderr, "plush: out of memory\n");
        return CLI_FAILED;
    }
    s->size = size;
    if (!pictures_setup(s))
        return CLI_FAILED;
    buf_printf(&s->csv, "frame,run_a,run_b,rms,p95,max,normal_mean_deg,normal_max_deg,volume_ratio_a,volume_ratio_b,"
                        "physics_ms_a,skinning_ms_a,physics_ms_b,skinning_ms_b\n");
    bool bar = isatty(STDERR_FILENO);
    for (uint32_t f = 0; f < s->frames; f++) {
        if (plush_compare_step(s->cmp, f, &d) != PLUSH_OK) {
            cli_report(&d);
            return CLI_FAILED;
        }
        record_frame(s, f);
        pictures_frame(s, f);
        if (bar && (f % 4 == 0 || f + 1 == s->frames)) {
            fprintf(stderr, "\r  compare: %u/%u frames", f + 1, s->frames);
            if (f + 1 == s->frames)
                fputc('\n', stderr);
        }
    }
    cli_report_warnings(&d);
    pictures_finish(s);
    char *csv_path = out_path(job->out_dir, "metrics.csv"), *md_path = out_path(job->out_dir, "report.md");
    int rc = CLI_FAILED;
    plush_diag od;
    if (!csv_path || !md_path || s->csv.failed) {
        fprintf(stderr, "plush: out of memory\n");
        goto done;
    }
    cli_diag_init(&od, csv_path);
    if (plush_file_write_atomic(csv_path, s->csv.data, s->csv.size, &od) != PLUSH_OK) {
        cli_report(&od);
        goto done;
    }
    cli_diag_init(&od, NULL);
    if (plots_over_time(s, &od) != PLUSH_OK || plots_by_size(s, &od) != PLUSH_OK) {
        if (od.status == PLUSH_E_NOMEM)
            fprintf(stderr, "plush: out of memory\n");
        goto done; /* anything else was reported by write_plot, naming its file */
    }
    cli_diag_init(&od, md_path);
    if (write_report(s, size, md_path, &od) != PLUSH_OK) {
        cli_report(&od);
        goto done;
    }
    printf("plush compare: %s, %u frames\n", job->model, s->frames);
    for (size_t r = 0; r < s->run_count; r++) {
        plush_compare_run_info info;
        plush_compare_get_run_info(s->cmp, r, &info);
        if (info.available)
            printf("  %-14s  %.3f ms per frame (physics + skinning)%s\n", info.name, ms_per_frame(&s->rstats[r]),
                   info.stopped ? ", stopped early" : "");
        else
            printf("  %-14s  not run: %s\n", info.name, info.reason);
    }
    printf("  report          %s\n", md_path);
    rc = CLI_OK;
done:
    free(csv_path);
    free(md_path);
    return rc;
}

static int run_compare(const compare_job *job)
{
    compare_state s = {.job = job};
    int rc = CLI_FAILED;
    if (read_inputs(&s) && make_dir(job->out_dir))
        rc = simulate(&s);
    plush_compare_destroy(s.cmp);
    for (size_t i = 0; i < s.variant_count; i++) {
        plush_pmx_free(s.variants[i].model);
        plush_arena_free(&s.variants[i].arena);
    }
    free(s.variants);
    free(s.runs);
    free(s.run_names);
    free(s.pairs);
    free(s.pstats);
    free(s.rstats);
    free(s.series_pair);
    free(s.series_run);
    plush_buf_free(&s.csv);
    free(s.keep_pos);
    free(s.keep_nrm);
    free(s.keep_dist);
    free(s.colors);
    plush_image_free(&s.panel);
    plush_image_free(&s.sheet);
    plush_im2_free(s.overrides);
    plush_vmd_free(s.motion);
    plush_pmx_free(s.model);
    return rc;
}

int cli_compare(int argc, char **argv)
{
    compare_job job = {0};
    bool help = false;
    int rc = parse_compare(argc, argv, &job, &help);
    if (rc == CLI_OK && help) {
        fputs(compare_usage, stdout);
        fputs(compare_help, stdout);
    } else if (rc == CLI_OK) {
        rc = run_compare(&job);
    }
    free(job.triangles);
    return rc;
}
