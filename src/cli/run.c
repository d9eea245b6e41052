/* plush run MODEL.pmx -o OUTDIR: the main job -- motion, physics, soft-body proxy skinning -- and its
 * exports: a baked PMX 2.0 + VMD any MMD player can play, mesh sequences, the binding. */
#include "cli/cli.h"
#include "core/platform.h"
#include "plush/obj.h"
#include "plush/attach.h"
#include "plush/sys/core.h"
#include "plush/sys/scene.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static const char run_usage[] =
    "usage: plush run MODEL.pmx -o OUTDIR [--motion M.vmd] [--frames N] [--fps 30] [--physics-hz 60]\n"
    "                 [--mode proxy|direct|bones] [--original] [--stretch] [--im2 OVERRIDES.im2] [--materials NAME,...]\n"
    "                 [--cage MATERIAL,...[:TRIANGLES]] [--pin-band S] [--no-push] [--own-shape]\n"
    "                 [--export pmx+vmd,gltf,obj,ply,cage,im2,quality,preview] [--every K] [--ground Y] [--copy-textures]\n"
    "                 [--bake-tolerance D] [--bake-bones N] [--bake-physics]\n"
    "                 [--preview-frame model|soft] [--preview-view front|side|back|orbit] [--preview-size WxH]\n";

static const char run_help[] =
    "\n"
    "Plays MODEL.pmx: bones and morphs from the motion, rigid bodies and joints, and (mode proxy, the\n"
    "default) its PMX 2.1 TriMesh soft bodies, with every detailed vertex skinned to the simulated proxy\n"
    "(each proxy triangle acts as a bone). Mode bones is plain MMD behaviour without soft bodies, the\n"
    "baseline. Mode direct is the reference the proxy stands in for: the detailed mesh itself, welded, is\n"
    "the soft body, with the proxy soft body's parameters (mass, config, iterations, stiffness, B-link), its\n"
    "pins and anchors moved to the detailed vertices around the pinned/anchored proxy nodes, and separate\n"
    "pieces sewn where they meet. It is slow on large meshes (the demo bear: ~60k nodes); if it blows up,\n"
    "the run stops there, says at which frame, and keeps the frames already written.\n"
    "\n";

static const char run_help_options[] =
    "options:\n"
    "  -o, --output OUTDIR         where the exports go (created when missing; required)\n"
    "  --motion M.vmd              the motion (default: none, the model at rest under physics)\n"
    "  --frames N                  frames to compute (default: the motion's length, or 300)\n"
    "  --fps F                     output frames per second (default 30; VMD keys are at 30 per second)\n"
    "  --physics-hz H              fixed physics rate (default 60; 120 works too)\n"
    "  --mode proxy|direct|bones   see above (default proxy)\n"
    "  --original (or --seed)      bind as the original method does (integer percent weights)\n"
    "  --stretch                   stretch-aware proxy frames for the mesh exports (the bake stays rigid)\n"
    "  --im2 OVERRIDES.im2         Influence Map overrides applied to the binding (e.g. rigid eyes)\n"
    "  --materials NAME,...        only these materials' vertices follow the proxy (default: every\n"
    "                              material no soft body owns); use it when the cage covers one part,\n"
    "                              e.g. --materials hair for a cage made with plush proxy --materials hair\n"
    "                              (materials named as for --cage)\n"
    "  --cage MATERIAL,...[:N]     make a cage of about N triangles (default 300; for a part the author\n"
    "                              gave no physics a fifth of its faces when fewer, at least 32) for these\n"
    "                              materials as plush proxy does (several closed pieces wrapped into one),\n"
    "                              attach it with automatic pins as plush attach does, and run that; the\n"
    "                              model file is not changed. The materials become the bound set unless\n"
    "                              --materials says otherwise, and so does a material they are sewn onto\n"
    "                              where the model's physics swings it (a trim on a dress: one garment, one\n"
    "                              cage; the summary's joined line). A model with a TriMesh soft body is\n"
    "                              refused.\n"
    "                              A material is named by its name, its English name or its number as\n"
    "                              plush info MODEL lists them with the bones that move each (a skirt:\n"
    "                              the waist and skirt bones): on sample_finish.pmx --cage スカート,\n"
    "                              --cage skirt and --cage 8 are one. An unknown name is refused with the\n"
    "                              nearest ones, an ambiguous one with the materials it could mean\n";

/* The options in two strings: C11 promises 4095 characters in one. */
static const char run_help_more_options[] =
    "  --pin-band S                with --cage: the band pinned at the top of each cage piece (where a\n"
    "                              skirt, cape or strand attaches), a share of its height (default 0.15,\n"
    "                              pinning at most 40% of its nodes; a band given is pinned whole, so 1\n"
    "                              pins every node); e.g. 0.3 holds more, 0.05 less\n"
    "  --no-push                   leave the proxy-skinned surface where the cage's triangles put it: by\n"
    "                              default vertices inside the model's rigid bodies that follow bones or\n"
    "                              behind its visible skin are pushed out, and edges the blend stretched\n"
    "                              past 1.5x pulled back, through those triangles (the bake and glTF move\n"
    "                              alike); then, with no bake exported (pmx+vmd, gltf: their bones carry\n"
    "                              the triangles only), those still behind the skin are moved out on their\n"
    "                              own in smooth bumps\n"
    "  --own-shape                 a soft part the model's own physics moves (hair or a skirt on rigid-body\n"
    "                              chains) keeps its cage's rest shape, turned with its pins: stiffer, it\n"
    "                              swings a fifth to a half of what the author's part does. By default it\n"
    "                              keeps the shape the author's physics gives it, softly, and swings as\n"
    "                              the author's part does (where that tears, on a fast spin, so does it);\n"
    "                              --follow-author names the default\n"
    "  --export LIST               comma-separated, default pmx+vmd (modes bones and direct: ply); below\n"
    "  --every K                   mesh exports every K-th frame only (default 1)\n"
    "  --copy-textures             copy the model's textures into OUTDIR (same sub-folders) and name the\n"
    "                              copies in the baked PMX (default: it names them where they are); only\n"
    "                              pictures inside the model's folder, never over a file plush did not write\n"
    "  --bake-tolerance D          the bake and glTF key only where interpolation would move a vertex by\n"
    "                              more than D model units (default 0.1% of the model's height; 0: a key\n"
    "                              every frame)\n"
    "  --bake-bones N              the bake moves the mesh with N bones fitted to the motion (default: the\n"
    "                              fewest within --bake-tolerance; when a player's budget binds, the count\n"
    "                              whose fit and keys miss least within it; one per cage triangle when none\n"
    "                              fit or win)\n"
    "  --bake-physics              the bake also keys every bone the model's rigid bodies drive (hair, skirt,\n"
    "                              ribbons) as this run moved them, and makes those bodies follow their bones,\n"
    "                              so a player shows this run's physics instead of simulating its own\n"
    "                              (default: the player simulates them)\n"
    "  --ground Y                  a static ground whose top is at height Y (default: none)\n"
    "  --preview-frame model|soft  what the preview's camera follows: the whole model (default) or, up\n"
    "                              close, the soft part (the bound vertices; mode bones: the model)\n"
    "  --preview-view front|side|back|orbit  where the preview's camera looks from: MMD's front\n"
    "                              (default), the model's left side, its back, or turning round it every 10 s\n"
    "  --preview-size WxH          the preview's size in pixels, even (default 640x480)\n"
    "  -h, --help                  this text\n"
    "\n"
    "exports:\n";

static const char run_help_end[] =
    "\n"
    "At the end a summary: frames, time per frame by stage, warnings (missing bone names, skipped soft\n"
    "bodies, blow-ups with their frame) and the quality of the worst frame (edge strain, crease, volume of\n"
    "the surface and the cage: always measured, --export quality writes every frame). A progress bar is\n"
    "shown on stderr when it is a terminal.\n"
    "A model without a usable TriMesh soft body in mode proxy is an error (add one with plush attach).\n";

/* Every name in the list is an export of the registry (plush_scene_exports) that works in the mode. */
static int check_exports(const char *list, plush_scene_mode mode)
{
    const char *p = list;
    if (!*p)
        return cli_usage_error(run_usage, "--export needs at least one export (plush run --help lists them)");
    while (*p) {
        size_t n = strcspn(p, ",");
        const plush_scene_export *e = plush_scene_export_find(p, n);
        if (!e)
            return cli_usage_error(run_usage, "unknown export '%.*s' (plush run --help lists them)", (int)n, p);
        if (!(e->modes & (1u << (unsigned)mode)))
            return cli_usage_error(run_usage, "%s exports the proxy: it needs --mode proxy (mode %s exports obj and ply)",
                                   e->name, mode == PLUSH_SCENE_BONES ? "bones" : "direct");
        p += n;
        if (*p == ',')
            p++;
    }
    return CLI_OK;
}

static void print_exports(void)
{
    size_t n = 0;
    const plush_scene_export *const *all = plush_scene_exports(&n);
    for (size_t i = 0; i < n; i++)
        printf("  %-9s %s\n", all[i]->name, all[i]->help);
}

static int run_option(cli_args *args, const char *name, const char *inline_value, cli_run_job *job)
{
    bool *flag = strcmp(name, "--original") == 0 || strcmp(name, "--seed") == 0 ? &job->seed
                 : strcmp(name, "--stretch") == 0       ? &job->stretch
                 : strcmp(name, "--no-push") == 0       ? &job->no_push
                 : strcmp(name, "--follow-author") == 0 ? &job->follow_author
                 : strcmp(name, "--own-shape") == 0     ? &job->own_shape
                 : strcmp(name, "--copy-textures") == 0 ? &job->copy_textures
                 : strcmp(name, "--bake-physics") == 0 ? &job->bake_physics
                                                        : NULL;
    if (flag) {
        if (inline_value)
            return cli_usage_error(run_usage, "option '%s' takes no value", name);
        *flag = true;
        return CLI_OK;
    }
    static const char *const valued[] = {"-o", "--output", "--motion", "--frames", "--fps", "--physics-hz", "--mode",
                                         "--im2", "--export", "--every", "--ground", "--materials", "--cage",
                                         "--pin-band", "--preview-frame", "--preview-view", "--preview-size",
                                         "--bake-tolerance", "--bake-bones"};
    bool known = false;
    for (size_t i = 0; i < sizeof valued / sizeof *valued; i++)
        known |= strcmp(name, valued[i]) == 0;
    if (!known)
        return cli_usage_error(run_usage, "unknown option '%s'", name);
    const char *v = cli_args_value(args, name, inline_value);
    if (!v)
        return CLI_USAGE;
    double x = 0;
    uint64_t n = 0;
    int rc = CLI_OK;
    if (strcmp(name, "-o") == 0 || strcmp(name, "--output") == 0)
        job->out_dir = v;
    else if (strcmp(name, "--motion") == 0)
        job->motion = v;
    else if (strcmp(name, "--cage") == 0 && (rc = cli_cage_spec_check(run_usage, v)) == CLI_OK)
        job->cage = v;
    else if (strcmp(name, "--im2") == 0)
        job->overrides = v;
    else if (strcmp(name, "--materials") == 0)
        rc = cli_names_add(&job->materials, v);
    else if (strcmp(name, "--frames") == 0 && (rc = cli_parse_count(run_usage, name, v, 1, (uint64_t)PLUSH_SCENE_MAX_FRAME, &n)) == CLI_OK) {
        job->frames = (uint32_t)n;
        job->frames_set = true;
    }
    else if (strcmp(name, "--fps") == 0 && (rc = cli_parse_number(run_usage, name, v, 1, 1000, &x)) == CLI_OK)
        job->fps = (float)x;
    else if (strcmp(name, "--physics-hz") == 0 && (rc = cli_parse_number(run_usage, name, v, 10, 10000, &x)) == CLI_OK)
        job->physics_hz = (float)x;
    else if (strcmp(name, "--every") == 0 && (rc = cli_parse_count(run_usage, name, v, 1, (uint64_t)PLUSH_SCENE_MAX_FRAME, &n)) == CLI_OK)
        job->every = (uint32_t)n;
    else if (strcmp(name, "--ground") == 0 && (rc = cli_parse_number(run_usage, name, v, -1e6, 1e6, &x)) == CLI_OK)
        job->ground = true, job->ground_y = (float)x;
    else if (strcmp(name, "--export") == 0)
        job->exports = v;
    else if (strcmp(name, "--pin-band") == 0 && (rc = cli_parse_number(run_usage, name, v, 0.001, 1, &x)) == CLI_OK)
        job->pin_band = (float)x;
    else if (strcmp(name, "--bake-tolerance") == 0 &&
             (rc = cli_parse_number(run_usage, name, v, 0, 1e6, &x)) == CLI_OK)
        job->bake_tolerance = x > 0 ? x : -1.0;   /* 0 asks for every key; the job's 0 is the default */
    else if (strcmp(name, "--bake-bones") == 0 && (rc = cli_parse_count(run_usage, name, v, 1, 100000, &n)) == CLI_OK)
        job->bake_bones = (uint32_t)n;
    else if (strcmp(name, "--preview-frame") == 0) {
        if (strcmp(v, "model") == 0)
            job->preview_frame = PLUSH_SCENE_PREVIEW_MODEL;
        else if (strcmp(v, "soft") == 0)
            job->preview_frame = PLUSH_SCENE_PREVIEW_SOFT;
        else
            rc = cli_usage_error(run_usage, "--preview-frame is model or soft, not '%s'", v);
    }
    else if (strcmp(name, "--preview-view") == 0) {
        static const char *const views[] = {"front", "side", "back", "orbit"};
        size_t k = 0;
        while (k < 4 && strcmp(v, views[k]) != 0)
            k++;
        if (k < 4)
            job->preview_view = (plush_scene_preview_view)k;
        else
            rc = cli_usage_error(run_usage, "--preview-view is front, side, back or orbit, not '%s'", v);
    }
    else if (strcmp(name, "--preview-size") == 0) {
        unsigned w = 0, h = 0;
        int used = 0;
        if (sscanf(v, "%4ux%4u%n", &w, &h, &used) != 2 || v[used] != '\0' || w % 2 || h % 2 || w < 16 || h < 16 ||
            w > 3840 || h > 2160)
            rc = cli_usage_error(run_usage, "--preview-size is WIDTHxHEIGHT, even, 16x16 to 3840x2160, not '%s'", v);
        else
            job->preview_width = w, job->preview_height = h;
    }
    else if (strcmp(name, "--mode") == 0) {
        if (strcmp(v, "proxy") == 0)
            job->mode = PLUSH_SCENE_PROXY;
        else if (strcmp(v, "bones") == 0)
            job->mode = PLUSH_SCENE_BONES;
        else if (strcmp(v, "direct") == 0)
            job->mode = PLUSH_SCENE_DIRECT;
        else
            rc = cli_usage_error(run_usage, "--mode is proxy, direct or bones, not '%s'", v);
    }
    return rc;
}

static int run_option_cb(cli_args *args, const char *name, const char *value, void *job)
{
    return run_option(args, name, value, job);
}

static int parse_run(int argc, char **argv, cli_run_job *job, bool *help)
{
    int rc = cli_parse_model_command(argc, argv, run_usage, run_option_cb, job, &job->model, help);
    if (rc != CLI_OK || *help)
        return rc;
    if (!job->out_dir)
        return cli_usage_error(run_usage, "no output directory (-o OUTDIR)");
    if (job->exports && check_exports(job->exports, job->mode) != CLI_OK)
        return CLI_USAGE;
    if (job->mode == PLUSH_SCENE_DIRECT && job->overrides)
        return cli_usage_error(run_usage, "--im2 overrides change the proxy binding: they need --mode proxy");
    if (job->follow_author && job->own_shape)
        return cli_usage_error(run_usage, "--follow-author (the default) and --own-shape ask for opposite shapes: "
                                          "give one");
    return CLI_OK;
}

/* ---- the run ------------------------------------------------------------------------------------ */

/* The model file's name without its directory and ".pmx": the outputs' names start with it. */
static char *model_stem(const char *model)
{
    const char *base = plush__os_last_separator(model);
    base = base ? base + 1 : model;
    size_t n = strlen(base);
    if (cli_ends_with(base, ".pmx"))
        n -= 4;
    char *p = malloc(n + 1);
    if (p)
        memcpy(p, base, n), p[n] = '\0';
    return p;
}

static void progress(void *user, uint32_t done, uint32_t total)
{
    (void)user;
    if (done % 8 == 1 || done == total)
        cli_progress_bar(done, total, "frames");
}

enum { RUN_MAX_SINKS = 16 };

typedef struct run_state {
    const cli_run_job *job;
    plush_pmx_model *model;
    plush_vmd_motion *motion;
    plush_im2_map *overrides;
    plush_scene *scene;
    plush_pmx_model *source;      /* with --cage: the model as read (s->model is it with the cage attached) */
    cli_cage made;                /* with --cage: the cage, its materials and the count asked (0: the default) */
    plush_scene_sink *sinks[RUN_MAX_SINKS];
    size_t sink_count;
    char *stem;
    char *frames_dir;             /* OUTDIR/frames, for messages */
    cli_outdir outdir;            /* OUTDIR, locked; the sinks write into its staging folder */
    bool mesh_frames;             /* an obj or ply export is on */
    bool bakes;                   /* a bake is exported (pmx+vmd, gltf): the push goes through the triangles alone */
    size_t *pulled;               /* per material: vertices bound as a layer of the named materials */
    size_t *sewn;                 /* per material: of those, the ones sewn onto a piece physics swings */
} run_state;

static bool read_inputs(run_state *s, plush_diag *model_diag)
{
    const cli_run_job *job = s->job;
    if (!cli_regular_file(job->model, model_diag) || plush_pmx_read_file(job->model, NULL, &s->model, model_diag) != PLUSH_OK) {
        cli_report(model_diag);
        return false;
    }
    plush_diag d;
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

/* --cage: the cage made, attached with automatic pins in memory; s->model becomes the attached model. */
static bool make_cage(run_state *s, plush_diag *model_diag)
{
    if (!cli_cage_attach(run_usage, s->model, s->job->model, s->job->cage, s->job->pin_band, &s->made, model_diag))
        return false;
    s->source = s->model;
    s->model = s->made.part.model;
    s->made.part.model = NULL; /* freed as s->model */
    return true;
}

/* One sink per name of the export list, in its order (a name given twice counts once). */
/* Whether the list asks for a bake (pmx+vmd, gltf): its bones replay the cage triangles' motions, the push through
 * them included, but not a vertex moved on its own, so such a run pushes through the triangles alone. */
static bool exports_bake(const char *list)
{
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        const plush_scene_export *e = plush_scene_export_find(p, n);
        if (e && (e == plush_scene_export_find("pmx+vmd", 7) || e == plush_scene_export_find("gltf", 4)))
            return true;
        p += n;
        if (*p == ',')
            p++;
    }
    return false;
}

static plush_status make_sinks(run_state *s, const char *list, plush_diag *diag)
{
    plush_scene_output out = {.dir = cli_outdir_stage(&s->outdir), .stem = s->stem, .every = s->job->every,
                              .model_file = s->job->model, .copy_textures = s->job->copy_textures,
                              .final_dir = s->job->out_dir, .preview_frame = s->job->preview_frame,
                              .preview_view = s->job->preview_view, .preview_width = s->job->preview_width,
                              .preview_height = s->job->preview_height,
                              .bake_tolerance = s->job->bake_tolerance, .bake_bones = s->job->bake_bones,
                              .bake_physics = s->job->bake_physics};
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        const plush_scene_export *e = plush_scene_export_find(p, n);
        bool again = false;
        for (size_t i = 0; i < s->sink_count; i++)
            again |= s->sinks[i]->kind == e;
        if (e && !again && s->sink_count < RUN_MAX_SINKS) {
            plush_status st = plush_scene_sink_create(e, s->scene, &out, &s->sinks[s->sink_count], diag);
            if (st != PLUSH_OK)
                return st;
            s->sink_count++;
            s->mesh_frames |= e == plush_scene_export_find("obj", 3) || e == plush_scene_export_find("ply", 3);
        }
        p += n;
        if (*p == ',')
            p++;
    }
    /* the quality measure always runs (the summary's worst frame); --export quality adds its file */
    bool quality = false;
    for (size_t i = 0; i < s->sink_count; i++)
        quality |= s->sinks[i]->kind == plush_scene_export_find("quality", 7);
    if (!quality && s->sink_count < RUN_MAX_SINKS) {
        plush_status st = plush_scene_quality_sink_create(s->scene, &s->sinks[s->sink_count], diag);
        if (st != PLUSH_OK)
            return st;
        s->sink_count++;
    }
    return PLUSH_OK;
}

/* The run's inputs, kept safe from its commit when OUTDIR holds them (-o . beside the model): the model,
 * its motion and overrides, and every texture the model names (as a path from the model's folder, either
 * separator; one that leads elsewhere is simply no entry of OUTDIR). */
static bool protect_inputs(run_state *s)
{
    const cli_run_job *job = s->job;
    if (!cli_outdir_protect(&s->outdir, job->model) || (job->motion && !cli_outdir_protect(&s->outdir, job->motion)) ||
        (job->overrides && !cli_outdir_protect(&s->outdir, job->overrides)))
        return false;
    const plush_pmx_model *m = s->source ? s->source : s->model;
    const char *slash = plush__os_last_separator(job->model);
    int dir = slash ? (int)(slash - job->model) + 1 : 0;
    for (size_t i = 0; i < m->texture_count; i++) {
        size_t n = (size_t)dir + m->textures[i].len + 1;
        char *path = malloc(n);
        if (!path) {
            fprintf(stderr, "plush: out of memory\n");
            return false;
        }
        snprintf(path, n, "%.*s%.*s", dir, job->model, (int)m->textures[i].len, m->textures[i].s);
        for (char *c = path + dir; *c; c++)
            *c = *c == '\\' ? '/' : *c;
        bool ok = cli_outdir_protect(&s->outdir, path);
        free(path);
        if (!ok)
            return false;
    }
    return true;
}

/* Every output's place in OUTDIR is free or plush's own: a file of the user's in the way stops the run here,
 * before its first frame, with one line naming it. */
static bool outputs_free(const run_state *s)
{
    for (size_t i = 0; i < s->sink_count; i++) {
        const char *paths[8];
        size_t n = plush_scene_sink_outputs(s->sinks[i], paths, 8);
        for (size_t k = 0; k < n && k < 8; k++)
            if (!cli_outdir_check(&s->outdir, paths[k]))
                return false;
    }
    return true;
}

static const char *mode_name(plush_scene_mode mode)
{
    return mode == PLUSH_SCENE_BONES ? "bones" : mode == PLUSH_SCENE_DIRECT ? "direct" : "proxy";
}

/* How much of a --cage spec names its materials: all of it but a ":TRIANGLES" at its end. */
static int cage_names(const char *spec)
{
    const char *colon = strrchr(spec, ':');
    return colon ? (int)(colon - spec) : (int)strlen(spec);
}

/* A run whose surface missed the bar at some frames. With a made cage: a cage of half the triangles often
 * meets it (docs/measured.md: of the shared characters' 68 materials that missed it at 300 with a cage of 100
 * triangles or more, half the cage missed it at fewer frames on 52, at none on 35, at more on 12). In proxy
 * mode below 120 Hz: a finer physics step, where a fast move outran the cage's links and contacts between
 * steps (docs/measured.md, "No cage fold": on the first 600 frames of the long dance and the five stress
 * motions every soak part but Luka's trims met the bar at 120 Hz, which missed it at 1-9 frames of a run at
 * 60; the trims 598 -> 440 of 600 on the dance; the bob on test.vmd 17 -> 2 of 25), at twice the physics'
 * cost and with the cage stiffer for its more iterations a second (its swing about half). */
static void bar_hints(const run_state *s, const plush_scene_soft_summary *soft)
{
    uint64_t measured = 0, over = 0;
    for (size_t i = 0; i < s->sink_count && !measured; i++)
        over = plush_scene_quality_sink_over(s->sinks[i], &measured);
    if (!over)
        return;
    plush_scene_desc desc;
    plush_scene_get_desc(s->scene, &desc);
    /* modes bones and direct skin no vertex to the cage: a smaller one changes nothing they show */
    if (s->source && desc.mode == PLUSH_SCENE_PROXY && s->made.part.cage.triangle_count >= 100) {
        const char *spec = s->job->cage;
        cli_line("  hint            where the surface misses its bar, a cage of half the triangles often meets it: "
                 "--cage %.*s:%zu",
                 cage_names(spec), spec, s->made.part.cage.triangle_count / 2);
    }
    if (desc.mode == PLUSH_SCENE_PROXY && desc.world.physics_hz > 0 && desc.world.physics_hz < 120)
        cli_line("  hint            a finer physics step often meets it too, at twice the physics' cost and with "
                 "less swing: --physics-hz 120");
    if (desc.mode == PLUSH_SCENE_PROXY && soft->following)
        cli_line("  hint            it follows the author's physics, and misses the bar where the author's part swings "
                 "fastest or begins to tear; its cage's own rest shape keeps the bar, swinging less: --own-shape");
}

/* A caged part sewn onto a piece the model's own physics swings (a trim on a dress): the piece's vertices at
 * the seam move with the cage and the rest with the author's physics, so the two part and the piece tears
 * there (Luka's trims alone miss the surface bar at 448 of the long dance's first 450 frames). Caged as one
 * garment the piece's cage carries the part lying along it (a layer of the piece: attach_cage.c), and meets
 * the bar: --cage joins such a piece itself (cli_cage_attach), so this speaks where --materials leaves the
 * joined piece unbound (or more pieces are sewn on than it joins). The hint names the first such material. */
static void sewn_hint(const run_state *s)
{
    if (!s->sewn || !s->source || !s->job->cage)
        return;
    for (size_t m = 0; m < s->model->material_count; m++) {
        if (!s->sewn[m])
            continue;
        const plush_str *joined = NULL;
        for (size_t j = 0; j < s->made.joined_count; j++)
            if (s->made.joined[j] == m)
                joined = &s->model->materials[m].name;
        if (joined) { /* caged with the part, but --materials leaves it on the author's physics */
            cli_line("  hint            the part is sewn onto \"%.*s\", caged with it but not bound: the model's own "
                     "physics swings the rest of it, so the two part there; name it in --materials too",
                     (int)joined->len, joined->s);
            return;
        }
        const char *spec = s->job->cage;
        int n = cage_names(spec);
        const plush_str *name = &s->model->materials[m].name;
        bool plain = name->len > 0 && !memchr(name->s, ',', name->len) && !memchr(name->s, ':', name->len);
        char ref[32];
        snprintf(ref, sizeof ref, "%zu", m);
        cli_line("  hint            the part is sewn onto \"%.*s\" at %zu vertices, which move with the cage while "
                 "the model's own physics swings the rest of it, so the two part there: cage them as one garment: "
                 "--cage %.*s,%.*s",
                 (int)name->len, name->s, s->sewn[m], n, spec, plain ? (int)name->len : (int)strlen(ref),
                 plain ? name->s : ref);
        return;
    }
}

/* The materials bound as layers of the named ones (they share rest positions with them), if any. */
static void layers_line(const run_state *s)
{
    size_t total = 0, shown = 0;
    for (size_t m = 0; s->pulled && m < s->model->material_count; m++)
        total += s->pulled[m];
    if (total == 0)
        return;
    char names[2048] = "";
    size_t at = 0;
    for (size_t m = 0; m < s->model->material_count; m++)
        if (s->pulled[m] && shown++ < 8 && at < sizeof names) {
            int k = snprintf(names + at, sizeof names - at, "%s \"%s\" %zu", shown > 1 ? "," : "",
                             s->model->materials[m].name.s, s->pulled[m]);
            at += k > 0 ? (size_t)k : 0;
        }
    cli_line("  layers          %zu vertices of other materials share their rest position with bound ones and move "
             "with them:%s%s",
             total, names, shown > 8 ? ", ..." : "");
    sewn_hint(s);
}

/* A motion none of whose keys moves a bone of this model (a camera motion, another model's bones, a face's
 * morphs alone): one line, since every figure of such a run reads perfect for a model standing still. What
 * the scene's binding found. */
static void still_motion_line(const run_state *s, const plush_motion_stats *st)
{
    const plush_vmd_motion *v = s->motion;
    if (!v || st->bone_tracks)
        return;
    char what[200];
    if (st->morph_tracks)
        snprintf(what, sizeof what,
                 "no key in it moves a bone of this model (it changes %zu of its morphs; %zu bone keys)",
                 st->morph_tracks, v->bone_key_count);
    else if (v->bone_key_count || v->morph_key_count)
        snprintf(what, sizeof what, "nothing in it moves this model: its %zu bone and %zu morph keys are all for names "
                 "this model lacks", v->bone_key_count, v->morph_key_count);
    else
        snprintf(what, sizeof what, "nothing in it moves this model: it has no bone or morph key (%zu camera keys)",
                 v->camera_key_count);
    cli_line("  motion          %s; the model stands in its rest pose, physics alone moving it (--motion takes a "
             "motion for this model's bones)", what);
}

/* Behind the visible skin, next to the author's model at the same frames (plush_scene_soft_summary). */
static void skin_line(const plush_scene_soft_summary *soft)
{
    if (!soft->skin_faces) {
        cli_line("  skin            no visible face outside the part: nothing to pass behind");
        return;
    }
    if (!soft->skin_measured || soft->worst_skin_frame < 0) {
        cli_line("  skin            every sampled vertex lies behind or on the visible skin at rest: not measured");
        return;
    }
    double gap = soft->mean_skin_share - soft->mean_author_skin_share;
    bool met = soft->skin_frames_over == 0 && gap <= PLUSH_SOFT_SKIN_MEAN_BAR;
    cli_line("  skin            behind the visible skin (%zu faces) on average %.2f%% of the vertices, the author's "
             "model %.2f%%; worst frame %lld: %.2f%% against %.2f%%; %s (bar: within %.0f points at every frame, "
             "%.1f on average; %zu sampled vertices, %zu behind or on it at rest left out)",
             soft->skin_faces, 100 * soft->mean_skin_share, 100 * soft->mean_author_skin_share,
             (long long)soft->worst_skin_frame, 100 * soft->worst_skin_share, 100 * soft->worst_author_skin_share,
             met ? "within the bar"
                 : soft->skin_frames_over ? "over the bar" : "over the bar on average",
             100 * PLUSH_SOFT_SKIN_FRAME_BAR, 100 * PLUSH_SOFT_SKIN_MEAN_BAR, soft->skin_measured + soft->skin_left_out,
             soft->skin_left_out);
    if (soft->skin_frames_over)
        cli_line("                  %llu frames more than %.0f points above the author's", 
                 (unsigned long long)soft->skin_frames_over, 100 * PLUSH_SOFT_SKIN_FRAME_BAR);
}

/* The skin through the part, next to the author's model at the same frames: the skin's vertices the part covers at
 * rest that it does not cover at the frame (plush_scene_soft_summary), judged on average where the author's part
 * has physics (PLUSH_SOFT_SHOW_MEAN_BAR). */
static void show_line(const plush_scene_soft_summary *soft)
{
    if (soft->worst_show_frame < 0)
        return;
    char verdict[160];
    if (soft->author_share >= PLUSH_SOFT_AUTHOR_MOVES_SHARE)
        snprintf(verdict, sizeof verdict, "%s (bar: within %.0f points on average)",
                 soft->mean_show_share - soft->mean_author_show_share <= PLUSH_SOFT_SHOW_MEAN_BAR ? "within the bar"
                                                                                                : "over the bar",
                 100 * PLUSH_SOFT_SHOW_MEAN_BAR);
    else
        snprintf(verdict, sizeof verdict, "no bar: the author gave it no physics, so its part moves with the bones alone");
    cli_line("  showing         the skin under the part at rest (%zu sampled vertices) shows through it on average "
             "%.2f%%, the author's model %.2f%%; %s; worst frame %lld: %.2f%% against %.2f%%; more than %.0f points "
             "above the author's at %llu of %llu frames",
             soft->show_points, 100 * soft->mean_show_share, 100 * soft->mean_author_show_share, verdict,
             (long long)soft->worst_show_frame, 100 * soft->worst_show_share, 100 * soft->worst_author_show_share,
             100 * PLUSH_SOFT_SKIN_FRAME_BAR, (unsigned long long)soft->show_frames_over,
             (unsigned long long)soft->show_frames);
}

/* How the soft part moves next to the author's own physics: its swing from the pose without physics against
 * the author's, and, standing still, where it settles against where the author's physics lets it hang. */
static void behaviour_lines(const run_state *s, const plush_motion_stats *st, const plush_scene_soft_summary *u)
{
    bool still = !s->motion || !st->bone_tracks; /* morphs alone leave the body standing */
    bool author = u->author_share >= PLUSH_SOFT_AUTHOR_MOVES_SHARE;
    char follows[96] = "";
    if (u->following)
        snprintf(follows, sizeof follows, "; following it: %zu of %zu soft bod%s", u->following,
                 s->model->soft_body_count, s->model->soft_body_count == 1 ? "y" : "ies");
    if (!author) {
        cli_line("  soft part       the author gave it no physics (%.0f%% of it hangs from bones rigid bodies move), "
                 "so gravity judges it: it %s %.2f%% of its size from the pose without physics on average, %.2f%% at "
                 "the last frame%s",
                 100 * u->author_share, still ? "droops" : "swings", 100 * u->mean_swing_share,
                 100 * u->last_swing_share, follows);
        return;
    }
    if (still) {
        bool ok = u->last_offset_share <= PLUSH_SOFT_SETTLE_BAR;
        cli_line("  settle          after %llu frames standing still it lies %.2f%% of its size from where the "
                 "author's physics lets it hang (bar %.0f%%%s); it droops %.2f%% from the pose without physics, the "
                 "author's %.2f%%",
                 (unsigned long long)u->frames, 100 * u->last_offset_share, 100 * PLUSH_SOFT_SETTLE_BAR,
                 ok ? ": meets it" : ": misses it", 100 * u->last_swing_share, 100 * u->last_author_swing_share);
        return;
    }
    /* The bar is judged over the frames where the author's part stays whole: where its chains fling it apart
     * (its surface past the surface bar's strain), no whole surface swings as it does. */
    char verdict[200] = "";
    bool stiff = false, torn = u->torn_frames > 0;
    double mine = torn ? u->whole_swing_share : u->mean_swing_share;
    double theirs = torn ? u->whole_author_swing_share : u->mean_author_swing_share;
    int at = 0;
    if (torn && u->whole_frames)
        at = snprintf(verdict, sizeof verdict, "; where the author's part stays whole (%llu of %llu frames) %.2f%% "
                      "against %.2f%%", (unsigned long long)u->whole_frames, (unsigned long long)u->frames,
                      100 * mine, 100 * theirs);
    if (theirs >= PLUSH_SOFT_AUTHOR_MOVES_SWING) { /* no whole frame: theirs is 0 */
        double r = mine / theirs;
        bool ok = r >= PLUSH_SOFT_SWING_RATIO_LO && r <= PLUSH_SOFT_SWING_RATIO_HI;
        snprintf(verdict + at, sizeof verdict - (size_t)at, " (ratio %.2f, bar %g-%g: %s)", r,
                 PLUSH_SOFT_SWING_RATIO_LO, PLUSH_SOFT_SWING_RATIO_HI, ok ? "meets it" : "misses it");
        stiff = r < PLUSH_SOFT_SWING_RATIO_LO;
    } else if (torn && u->mean_author_swing_share >= PLUSH_SOFT_AUTHOR_MOVES_SWING) {
        snprintf(verdict + at, sizeof verdict - (size_t)at, " (no ratio judged: %s)",
                 u->whole_frames ? "where it stays whole the author's part barely moves"
                                 : "the author's part tears at every frame");
    }
    cli_line("  swing           %.2f%% of its size from the pose without physics on average, the author's physics "
             "%.2f%%%s; %.2f%% from where the author's physics puts it%s",
             100 * u->mean_swing_share, 100 * u->mean_author_swing_share, verdict, 100 * u->mean_offset_share,
             follows);
    if (torn) {
        char all[64] = "";
        if (u->mean_author_swing_share >= PLUSH_SOFT_AUTHOR_MOVES_SWING)
            snprintf(all, sizeof all, " (over every frame: ratio %.2f)",
                     u->mean_swing_share / u->mean_author_swing_share);
        cli_line("                  the author's part tears at %llu of %llu frames (its own surface's p99.9 strain up "
                 "to %.2f at frame %lld, past the surface bar's %g): no whole surface can swing as it does there, so "
                 "the swing bar leaves those frames out%s",
                 (unsigned long long)u->torn_frames, (unsigned long long)u->frames, u->torn_strain_p999,
                 (long long)u->torn_frame, PLUSH_QUALITY_BAR_STRAIN_P999, all);
    }
    /* a part stiffer than the author's made it (hair on chains, held to its rest shape by its cage): the
     * default that follows the author's physics instead, with what it costs */
    if (stiff && s->job->own_shape && s->job->mode == PLUSH_SCENE_PROXY)
        cli_line("  hint            it swings under half as much as the author's part: without --own-shape it keeps the "
                 "shape the author's physics gives that part, softly (where the author's part tears, as far as a whole "
                 "surface can)");
}

static void summary(const run_state *s, uint32_t frames, const plush_diag *diag)
{
    const cli_run_job *job = s->job;
    plush_scene_desc desc;
    plush_scene_get_desc(s->scene, &desc);
    plush_scene_timing t;
    plush_scene_get_timing(s->scene, &t);
    double n = t.steps ? (double)t.steps : 1, ms = 1000.0 / n;
    double total = t.motion + t.physics + t.frames + t.skinning + t.exports;
    cli_line("plush run: %s", job->model);
    cli_line("  frames          %u at %g fps, physics %g Hz, mode %s", frames, (double)desc.fps,
             (double)desc.world.physics_hz, mode_name(desc.mode));
    plush_motion_stats moves; /* what the scene's binding of the motion found */
    plush_scene_motion_stats(s->scene, &moves);
    still_motion_line(s, &moves);
    if (s->source) {
        char note[320], names[200];
        /* the materials by the model's names, whatever the user typed (cli_check_materials) */
        cli_names_quoted(&s->made.materials, names, sizeof names);
        const plush_cage_result *made = &s->made.part.made;
        char aim[200] = "";
        /* the default target below the usual 300: say why (plush_attach_make_cage) */
        if (!s->made.triangles && made->target < PLUSH_ATTACH_CAGE_TRIANGLES && made->surface_triangles > made->target)
            snprintf(aim, sizeof aim, "; target %zu, a fifth of the surface's %zu faces (the author gave it no "
                     "physics: its cage keeps its own shape, and one as fine as the surface shows its folds as "
                     "creases)", made->target, made->surface_triangles);
        cli_line("  cage            %zu triangles, %zu nodes (%s %s), %zu piece%s, %zu pinned nodes%s%s",
                 s->made.part.cage.triangle_count, s->made.part.cage.vertex_count,
                 made->wrapped ? "one wrap around the pieces of" : "simplified from", names,
                 s->made.part.attached.pieces, s->made.part.attached.pieces == 1 ? "" : "s", s->made.part.attached.pinned,
                 aim, plush_attach_target_note(made, made->target,
                                      "a larger --cage target fits them, or a wrap: plush proxy --wrap, then plush "
                                      "attach --proxy and plush run on what it writes",
                                      note, sizeof note));
        cli_attach_report_pieces(s->model, &s->made.part.attached);
        cli_cage_report_joined(s->model, &s->made);
    }
    if (s->made.part.details.triangles || s->made.part.details.bound_triangles)
        cli_line("  details         %zu faces in pieces under a twentieth of the largest one's size or lying along a larger "
                 "one, not caged: %zu "
                 "within a cage edge of it bound to it, %zu left on bone skinning",
                 s->made.part.details.triangles + s->made.part.details.bound_triangles, s->made.part.details.bound_triangles, s->made.part.details.triangles);
    layers_line(s);
    plush_scene_direct_stats ds;
    if (plush_scene_direct_model(s->scene, &ds))
        cli_line("  direct          %zu soft bod%s: %zu nodes, %zu faces, %zu pieces sewn by %zu seam links, %zu pinned "
                 "and %zu anchored nodes",
                 ds.bodies, ds.bodies == 1 ? "y" : "ies", ds.nodes, ds.faces, ds.pieces, ds.seam_links, ds.pinned_nodes,
                 ds.anchored_nodes);
    cli_line("  per frame       %.3f ms: motion+bones %.3f, physics %.3f, proxy frames %.3f, skinning %.3f (of it the "
             "push out of the body %.3f, the soft measure %.3f), export %.3f",
             total * ms, t.motion * ms, t.physics * ms, t.frames * ms, t.skinning * ms, t.push * ms, t.measure * ms,
             t.exports * ms);
    if (t.measure_beside > 0)
        cli_line("                  and on threads of their own, beside the push and the next frame's physics: the soft "
                 "measure's tests %.3f", t.measure_beside * ms);
    int64_t first = -1;
    size_t failed = plush_scene_failures(s->scene, &first);
    if (failed) {
        size_t frozen = plush_scene_frozen(s->scene);
        char after[64] = "";
        if (frozen)
            snprintf(after, sizeof after, "; %zu frozen there after %d", frozen, PLUSH_WORLD_SOFT_RESETS);
        cli_line("  blow-ups        %zu, the first at frame %lld: each soft body put back to its last good state, at "
                 "rest, and on%s",
                 failed, (long long)first, after);
    }
    plush_scene_soft_summary soft;
    plush_scene_soft(s->scene, NULL, &soft);
    if (soft.frames) {
        behaviour_lines(s, &moves, &soft);
        if (soft.worst_inside_frame >= 0 && soft.bodies > 0)
            cli_line("  body            %zu rigid bodies that follow bones; worst frame %lld: %.2f%% of the bound vertices "
                     "inside them (bone skinning: %.2f%%), %.3g deep; over the run deepest %.3g, bone skinning at most "
                     "%.2f%%",
                     soft.bodies, (long long)soft.worst_inside_frame, 100 * soft.worst_inside_share,
                     100 * soft.worst_bones_inside_share, soft.worst_inside_depth, soft.deepest,
                     100 * soft.most_bones_inside_share);
        skin_line(&soft);
        show_line(&soft);
        if (soft.worst_through_frame >= 0)
            cli_line("  through         of the %llu frames that follow the one before, %llu where part of it went "
                     "through a limb since (the author's model: %llu), on average %.2f%% of the vertices (the author's "
                     "%.2f%%); worst frame %lld: %.2f%% against %.2f%%",
                     (unsigned long long)soft.through_frames, (unsigned long long)soft.through_frames_plush,
                     (unsigned long long)soft.through_frames_author, 100 * soft.mean_through_share,
                     100 * soft.mean_author_through_share, (long long)soft.worst_through_frame,
                     100 * soft.worst_through_share, 100 * soft.worst_author_through_share);
        if (soft.worst_jitter_frame >= 0)
            cli_line("  jitter          of the %llu frames that follow two by steps: its way changes from one frame to "
                     "the next by %.3f%% of its size on average (the author's model %.3f%%, ratio %.2f); worst frame "
                     "%lld: %.3f%% against %.3f%%",
                     (unsigned long long)soft.jitter_frames, 100 * soft.mean_jitter_share,
                     100 * soft.mean_author_jitter_share,
                     soft.mean_author_jitter_share > 0 ? soft.mean_jitter_share / soft.mean_author_jitter_share : 0.0,
                     (long long)soft.worst_jitter_frame, 100 * soft.worst_jitter_share,
                     100 * soft.worst_author_jitter_share);
        if (soft.skin_faces && s->bakes && s->job->mode == PLUSH_SCENE_PROXY && !s->job->no_push && !s->job->seed)
            cli_line("                  pushed out from behind it through the cage's triangles alone, which the bake "
                     "replays; without a bake export (--export ply,preview,quality) what they leave behind it is "
                     "moved out too, vertex by vertex");
    }
    if (diag->warning_count)
        cli_line("  warnings        %u (on stderr)", diag->warning_count);
    for (size_t i = 0; i < s->sink_count; i++) {
        char text[8192];
        char raw[8192];
        plush_scene_sink_describe(s->sinks[i], raw, sizeof raw);
        cli_outdir_shown_text(&s->outdir, raw, text, sizeof text);
        /* continuation lines line up under the first */
        const char *line = text;
        for (int k = 0; line; k++) {
            const char *nl = strchr(line, '\n');
            int len = nl ? (int)(nl - line) : (int)strlen(line);
            cli_line("  %-16s%.*s", k ? "" : s->sinks[i]->kind->label, len, line);
            line = nl ? nl + 1 : NULL;
        }
    }
    bar_hints(s, &soft);
}

/* How far a direct run got before it had to stop at frame f. */
static void stopped_early(const run_state *s, uint32_t f, uint32_t frames, const char *what)
{
    const cli_run_job *job = s->job;
    if (f == 0 || !s->mesh_frames)
        cli_message("%s: direct mode: the detailed soft body %s at frame %u of %u; no frame written", job->model,
                    what, f, frames);
    else
        cli_message("%s: direct mode: the detailed soft body %s at frame %u of %u; frames 0..%u are kept in %s",
                    job->model, what, f, frames, (f - 1) / job->every * job->every, s->frames_dir);
}

static int simulate(run_state *s, plush_diag *model_diag)
{
    const cli_run_job *job = s->job;
    /* a made cage binds its own materials unless --materials says otherwise */
    const cli_names *bound = job->materials.count || !s->source ? &job->materials : &s->made.materials;
    s->bakes = exports_bake(job->exports ? job->exports : plush_scene_default_exports(job->mode));
    s->pulled = calloc(s->model->material_count ? s->model->material_count : 1, sizeof *s->pulled);
    s->sewn = calloc(s->model->material_count ? s->model->material_count : 1, sizeof *s->sewn);
    plush_scene_desc desc = {
        .model = s->model,
        .motion = s->motion,
        .mode = job->mode,
        .fps = job->fps,
        .world = {.physics_hz = job->physics_hz, .ground = job->ground, .ground_y = job->ground_y},
        .bind = {.proxy = {.seed = job->seed},
                 .bound = {.materials = (const char *const *)bound->names, .material_count = bound->count,
                           .pulled = s->pulled, .sewn = s->sewn, .left_out = (const float(*)[3])s->made.part.details.positions,
                           .left_out_count = s->made.part.details.count}},
        .skin = {.stretch = job->stretch},
        .no_push = job->no_push,
        .push_triangles_only = s->bakes,
        .follow_author = !job->own_shape,
        .overrides = s->overrides,
        .overrides_file = job->overrides,
    };
    plush_status st = plush_scene_create(&desc, &s->scene, model_diag);
    /* the scene's refusal of a model without a proxy, as the contract words it */
    if (st == PLUSH_E_NO_PROXY) {
        cli_report_warnings(model_diag); /* the soft bodies skipped, and why */
        cli_message("%s: no TriMesh soft body — add one with `plush attach`", job->model);
        return CLI_FAILED;
    }
    uint32_t frames = job->frames;
    if (st == PLUSH_OK && !job->frames_set)
        st = plush_scene_default_frames(s->scene, &frames, model_diag);
    if (st != PLUSH_OK) {
        cli_report(model_diag);
        return CLI_FAILED;
    }
    /* OUTDIR only once the model is known to run, so a refused model leaves no empty directory; locked
     * against a second run, the outputs staged and put in place together at the end */
    if (!cli_outdir_open(&s->outdir, job->out_dir) || !protect_inputs(s))
        return CLI_FAILED;
    if (make_sinks(s, job->exports ? job->exports : plush_scene_default_exports(job->mode), model_diag) != PLUSH_OK) {
        cli_report(model_diag);
        return CLI_FAILED;
    }
    if (!outputs_free(s))
        return CLI_FAILED;
    /* a direct run is a reference: a frozen, blown-up body is no answer, so it ends there */
    plush_scene_run_options ro = {.frames = frames,
                                  .sinks = s->sinks,
                                  .sink_count = s->sink_count,
                                  .stop_on_blow_up = job->mode == PLUSH_SCENE_DIRECT,
                                  .progress = plush__os_stderr_is_terminal() ? progress : NULL,
                                  .out_dir = cli_outdir_stage(&s->outdir)};
    plush_scene_run_result res;
    st = plush_scene_run(s->scene, &ro, &res, model_diag);
    cli_outdir_shown_diag(&s->outdir, model_diag); /* the files where the user will find them */
    if (res.blew_up) {
        if (ro.progress)
            fputc('\n', stderr);
        cli_report_warnings(model_diag);
        /* the frames before the blow-up are the reference's answer so far: they are kept */
        if (res.stopped_at > 0 && s->mesh_frames && !cli_outdir_commit(&s->outdir))
            return CLI_FAILED;
        stopped_early(s, (uint32_t)res.stopped_at, frames, "blew up");
        return CLI_FAILED;
    }
    if (st != PLUSH_OK) {
        char shown[4096];
        model_diag->file = cli_outdir_shown(&s->outdir, model_diag->file, shown, sizeof shown);
        cli_report(model_diag);
        if (job->mode == PLUSH_SCENE_DIRECT && !res.failed_sink && res.stopped_at >= 0)
            stopped_early(s, (uint32_t)res.stopped_at, frames, "failed");
        return CLI_FAILED;
    }
    if (!cli_outdir_commit(&s->outdir))
        return CLI_FAILED;
    cli_report_warnings(model_diag);
    summary(s, frames, model_diag);
    return CLI_OK;
}

int cli_run_execute(const cli_run_job *in)
{
    cli_run_job job = *in;
    if (!job.every)
        job.every = 1;
    run_state s = {.job = &job};
    plush_diag model_diag;
    cli_diag_init(&model_diag, job.model);
    int rc = CLI_FAILED;
    s.stem = model_stem(job.model);
    size_t n = strlen(job.out_dir) + sizeof "/frames";
    s.frames_dir = malloc(n);
    if (!s.stem || !s.frames_dir) {
        fprintf(stderr, "plush: out of memory\n");
        goto done;
    }
    snprintf(s.frames_dir, n, "%s/frames", job.out_dir);
    /* a name the model does not have is told before anything else is made */
    if (!read_inputs(&s, &model_diag) || !cli_check_materials(s.model, job.model, &job.materials) ||
        (job.cage && !make_cage(&s, &model_diag)))
        goto done;
    rc = simulate(&s, &model_diag);
done:
    for (size_t i = 0; i < s.sink_count; i++)
        plush_scene_sink_destroy(s.sinks[i]);
    cli_outdir_close(&s.outdir);
    plush_scene_destroy(s.scene);
    plush_im2_free(s.overrides);
    plush_vmd_free(s.motion);
    plush_pmx_free(s.model);
    plush_pmx_free(s.source);
    cli_cage_free(&s.made);
    free(s.stem);
    free(s.pulled);
    free(s.sewn);
    free(s.frames_dir);
    return rc;
}

int cli_run(int argc, char **argv)
{
    cli_run_job job = {.mode = PLUSH_SCENE_PROXY};
    bool help = false;
    int rc = parse_run(argc, argv, &job, &help);
    if (rc == CLI_OK && help) {
        fputs(run_usage, stdout);
        fputs(run_help, stdout);
        fputs(run_help_options, stdout);
        fputs(run_help_more_options, stdout);
        print_exports();
        fputs(run_help_end, stdout);
    } else if (rc == CLI_OK) {
        rc = cli_run_execute(&job);
    }
    cli_names_free(&job.materials);
    return rc;
}
