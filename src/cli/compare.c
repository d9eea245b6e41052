/* plush compare MODEL.pmx -o REPORTDIR: bones, proxy and direct on the same motion, stepped in lockstep and
 * measured frame by frame; metrics.csv, report.md, plots and pictures. */
#include "cli/cli.h"
#include "core/platform.h"
#include "plush/compare.h"
#include "plush/sys/core.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char compare_usage[] =
    "usage: plush compare MODEL.pmx -o REPORTDIR [--motion M.vmd] [--frames N] [--proxy-triangles N1,N2,...]\n"
    "                     [--cage MATERIAL,...[:N]] [--materials NAME,...] [--fps 30] [--physics-hz 60]\n"
    "                     [--im2 OVERRIDES.im2] [--original] [--direct-cloth | --direct-bullet]\n";

static const char compare_help[] =
    "\n"
    "Runs MODEL.pmx three ways on the same motion and measures how far apart they are, frame by frame:\n"
    "  bones   plain MMD: bones and rigid bodies, no soft body (the baseline)\n"
    "  proxy   the soft-body cage simulated, the detailed mesh skinned to it (what plush run does)\n"
    "  direct  the detailed mesh itself simulated (the expensive ground truth): for a part of up to 3,000\n"
    "          vertices plush's cloth solver, the proxy's material in physical units, at four times the\n"
    "          part's detail (each face split in four); larger, Bullet's soft body with the proxy's\n"
    "          parameters calibrated to the resolution\n"
    "  direct/4  direct on a quarter of the triangles (the part as the model has it; with Bullet, the\n"
    "          surface simplified): how well direct converges\n"
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
    "  --cage MATERIAL,...[:N]     compare a part: a cage of about N triangles (as plush run's) made for\n"
    "                              these materials and attached as plush run --cage does (pins where the\n"
    "                              part hangs); the proxy and direct simulate that part only, the rest of\n"
    "                              the model follows its bones, errors are measured on the part and given\n"
    "                              as a share of its size; --proxy-triangles then makes its cages for it\n"
    "  --materials NAME,...        the part bound, simulated and measured (default: --cage's materials, else\n"
    "                              every material no soft body owns), named as plush run takes them\n"
    "  --fps F, --physics-hz H     as plush run (defaults 30 and 60)\n"
    "  --im2 OVERRIDES.im2         Influence Map overrides for the model's own proxy run\n"
    "  --original (or --seed)      the proxy runs bind and skin as the original method (nearest four\n"
    "                              triangles, percent weights, each triangle's own frame): the 'before' of\n"
    "                              the smooth surface\n"
    "  --direct-cloth              the cloth solver's reference whatever the part's size (slow: some\n"
    "                              0.1 ms a vertex a frame, more on large parts; docs/compare.md)\n"
    "  --direct-bullet             Bullet's calibrated reference whatever the part's size (fast, but its\n"
    "                              result depends on the resolution: it rarely converges)\n"
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
    "The vertices measured are those of the part (--cage, --materials), else of every material no soft body\n"
    "owns.\n";

typedef struct compare_job {
    const char *model, *motion, *out_dir, *overrides;
    const char *cage;             /* --cage MATERIAL,...[:N] */
    cli_names materials;          /* --materials */
    uint32_t frames;
    bool frames_set, seed, direct_cloth, direct_bullet;
    float fps, physics_hz;
    size_t *triangles;            /* --proxy-triangles */
    size_t triangle_count;
} compare_job;

static int parse_triangles(const char *list, compare_job *job)
{
    for (const char *p = list;;) {
        char *end = NULL;
        errno = 0;
        unsigned long long n = *p >= '0' && *p <= '9' ? strtoull(p, &end, 10) : 0;
        if (errno || end == p || !end || n < 4 || n > 10000000 || (*end && *end != ','))
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
    if (strcmp(name, "--original") == 0 || strcmp(name, "--seed") == 0) {
        if (inline_value)
            return cli_usage_error(compare_usage, "option '%s' takes no value", name);
        job->seed = true;
        return CLI_OK;
    }
    if (strcmp(name, "--direct-cloth") == 0 || strcmp(name, "--direct-bullet") == 0) {
        if (inline_value)
            return cli_usage_error(compare_usage, "option '%s' takes no value", name);
        bool cloth = strcmp(name, "--direct-cloth") == 0;
        if (cloth ? job->direct_bullet : job->direct_cloth)
            return cli_usage_error(compare_usage, "--direct-cloth and --direct-bullet choose one reference: give one");
        job->direct_cloth |= cloth;
        job->direct_bullet |= !cloth;
        return CLI_OK;
    }
    static const char *const valued[] = {"-o", "--output", "--motion", "--frames", "--fps", "--physics-hz",
                                         "--proxy-triangles", "--im2", "--cage", "--materials"};
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
    else if (strcmp(name, "--cage") == 0 && (rc = cli_cage_spec_check(compare_usage, v)) == CLI_OK)
        job->cage = v;
    else if (strcmp(name, "--materials") == 0)
        rc = cli_names_add(&job->materials, v);
    else if (strcmp(name, "--frames") == 0) {
        uint64_t n = 0;
        if ((rc = cli_parse_count(compare_usage, name, v, 1, (uint64_t)PLUSH_SCENE_MAX_FRAME, &n)) == CLI_OK)
            job->frames = (uint32_t)n, job->frames_set = true;
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

typedef struct compare_inputs {
    compare_job *job;
    plush_pmx_model *model;       /* with --cage: the model with the cage attached */
    plush_pmx_model *source;      /* with --cage: the model as read */
    cli_cage cage;
    plush_vmd_motion *motion;
    plush_im2_map *overrides;
} compare_inputs;

static bool read_inputs(compare_inputs *s)
{
    compare_job *job = s->job;
    plush_diag d;
    cli_diag_init(&d, job->model);
    if (!cli_regular_file(job->model, &d) || plush_pmx_read_file(job->model, NULL, &s->model, &d) != PLUSH_OK) {
        cli_report(&d);
        return false;
    }
    /* the part, as plush run takes it: names checked before anything is made, then the cage */
    if (!cli_check_materials(s->model, job->model, &job->materials))
        return false;
    if (job->cage) {
        if (!cli_cage_attach(compare_usage, s->model, job->model, job->cage, 0, &s->cage, &d))
            return false;
        cli_report_warnings(&d);
        s->source = s->model;
        s->model = s->cage.part.model;
        s->cage.part.model = NULL; /* freed as s->model */
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

static void print_summary(const compare_inputs *in, const plush_compare_study *st)
{
    const compare_job *job = in->job;
    const plush_compare *cmp = plush_compare_study_runs(st);
    cli_line("plush compare: %s, %u frames", job->model, plush_compare_study_frame_count(st));
    if (job->cage) {
        char names[200], note[320];
        /* the materials by the model's names, whatever the user typed (cli_check_materials) */
        cli_names_quoted(&in->cage.materials, names, sizeof names);
        const plush_attach_part *c = &in->cage.part;
        cli_line("  cage            %zu triangles for %s, %zu piece%s, %zu pinned nodes%s", c->cage.triangle_count,
                 names, c->attached.pieces, c->attached.pieces == 1 ? "" : "s", c->attached.pinned,
                 plush_attach_target_note(&c->made, c->made.target,
                                          "a larger --cage target fits them", note, sizeof note));
        cli_cage_report_joined(in->source ? in->source : in->model, &in->cage);
    }
    for (size_t r = 0; r < plush_compare_study_run_count(st); r++) {
        plush_compare_run_info info;
        plush_compare_get_run_info(cmp, r, &info);
        if (info.available)
            printf("  %-14s  %.3f ms per frame (physics + skinning)%s\n", info.name,
                   plush_compare_study_ms_per_frame(st, r), info.stopped ? ", stopped early" : "");
        else
            printf("  %-14s  not run: %s\n", info.name, info.reason);
    }
    cli_line("  report          %s/report.md", job->out_dir);
}

static int simulate(const compare_inputs *in, cli_outdir *outdir, plush_compare_study **st)
{
    const compare_job *job = in->job;
    bool own_proxy = plush_compare_has_proxy(in->model);
    if (!own_proxy) {
        /* the next command is the user's own, with a part named: the sizes asked for make that part's cages */
        char sizes[160] = "";
        for (size_t i = 0, at = 0; i < job->triangle_count && at < sizeof sizes - 24; i++)
            at += (size_t)snprintf(sizes + at, sizeof sizes - at, "%s%zu", i ? "," : " --proxy-triangles ",
                                   job->triangles[i]);
        cli_message("%s: no TriMesh soft body%s — compare a part with a cage made for it (plush info %s lists the "
                    "materials): plush compare %s --cage MATERIAL[:TRIANGLES]%s -o %s; or attach one with "
                    "`plush attach` and compare that model",
                    job->model, job->triangle_count ? " for --proxy-triangles to copy" : "", job->model, job->model,
                    sizes, job->out_dir);
        return CLI_FAILED;
    }
    /* a made cage's part is its materials unless --materials says otherwise (as plush run binds) */
    const cli_names *part = job->materials.count || !job->cage ? &job->materials : &in->cage.materials;
    plush_diag d;
    cli_diag_init(&d, job->model);
    plush_compare_study_desc desc = {.model = in->model,
                                     .model_file = job->model,
                                     .motion = in->motion,
                                     .motion_file = job->motion,
                                     .overrides = in->overrides,
                                     .overrides_file = job->overrides,
                                     .fps = job->fps,
                                     .physics_hz = job->physics_hz,
                                     .frames = job->frames_set ? job->frames : 0,
                                     .cage_triangles = job->triangles,
                                     .cage_count = job->triangle_count,
                                     .seed = job->seed,
                                     .direct_cloth = job->direct_cloth,
                                     .direct_bullet = job->direct_bullet,
                                     .materials = (const char *const *)part->names,
                                     .material_count = part->count,
                                     .cage_materials = (const char *const *)in->cage.materials.names,
                                     .cage_material_count = in->cage.materials.count,
                                     .left_out = (const float(*)[3])in->cage.part.details.positions,
                                     .left_out_count = in->cage.part.details.count,
                                     .out_dir = cli_outdir_stage(outdir)};
    if (plush_compare_study_create(&desc, st, &d) != PLUSH_OK) {
        cli_report_warnings(&d);
        /* without a soft body of its own, the first generated cage said why it cannot copy one */
        if (own_proxy && d.status == PLUSH_E_NO_PROXY)
            cli_message("%s: no usable TriMesh soft body — add one with `plush attach`", job->model);
        else
            cli_report(&d);
        return CLI_FAILED;
    }
    uint32_t frames = plush_compare_study_frame_count(*st);
    bool bar = plush__os_stderr_is_terminal();
    for (uint32_t f = 0; f < frames; f++) {
        if (plush_compare_study_step(*st, f, &d) != PLUSH_OK) {
            cli_report(&d);
            return CLI_FAILED;
        }
        if (bar && (f % 4 == 0 || f + 1 == frames)) {
            fprintf(stderr, "\r  compare: %u/%u frames", f + 1, frames);
            if (f + 1 == frames)
                fputc('\n', stderr);
        }
    }
    plush_diag od;
    cli_diag_init(&od, job->model);
    plush_status done = plush_compare_study_finish(*st, &od);
    cli_report_warnings(&d);
    cli_report_warnings(&od);
    if (done != PLUSH_OK) {
        char shown[4096];
        od.file = cli_outdir_shown(outdir, od.file, shown, sizeof shown);
        cli_report(&od);
        return CLI_FAILED;
    }
    /* the report, CSV, plots and pictures appear together or not at all */
    if (!cli_outdir_commit(outdir))
        return CLI_FAILED;
    print_summary(in, *st);
    return CLI_OK;
}

static int run_compare(compare_job *job)
{
    compare_inputs in = {.job = job};
    plush_compare_study *st = NULL;
    cli_outdir outdir = {0};
    int rc = CLI_FAILED;
    /* the inputs are kept from the commit when OUTDIR holds them */
    if (read_inputs(&in) && cli_outdir_open(&outdir, job->out_dir) && cli_outdir_protect(&outdir, job->model) &&
        (!job->motion || cli_outdir_protect(&outdir, job->motion)) &&
        (!job->overrides || cli_outdir_protect(&outdir, job->overrides)))
        rc = simulate(&in, &outdir, &st);
    plush_compare_study_destroy(st);
    cli_outdir_close(&outdir);
    plush_im2_free(in.overrides);
    plush_vmd_free(in.motion);
    plush_pmx_free(in.model);
    plush_pmx_free(in.source);
    cli_cage_free(&in.cage);
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
    cli_names_free(&job.materials);
    return rc;
}
