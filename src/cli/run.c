/* plush run MODEL.pmx -o OUTDIR: the main job -- motion, physics, soft-body proxy skinning -- and its
 * exports: a baked PMX 2.0 + VMD any MMD player can play, mesh sequences, the binding. */
#include "cli/cli.h"
#include "plush/obj.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char run_usage[] =
    "usage: plush run MODEL.pmx -o OUTDIR [--motion M.vmd] [--frames N] [--fps 30] [--physics-hz 60]\n"
    "                 [--mode proxy|direct|bones] [--seed] [--stretch] [--im2 OVERRIDES.im2] [--materials NAME,...]\n"
    "                 [--export pmx+vmd,obj,ply,im2] [--every K] [--ground Y]\n";

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
    "\n"
    "options:\n"
    "  -o, --output OUTDIR         where the exports go (created when missing; required)\n"
    "  --motion M.vmd              the motion (default: none, the model at rest under physics)\n"
    "  --frames N                  frames to compute (default: the motion's length, or 300)\n"
    "  --fps F                     output frames per second (default 30; VMD keys are at 30 per second)\n"
    "  --physics-hz H              fixed physics rate (default 60; 120 works too)\n"
    "  --mode proxy|direct|bones   see above (default proxy)\n"
    "  --seed                      bind as the original method does (integer percent weights)\n"
    "  --stretch                   stretch-aware proxy frames for the mesh exports (the bake stays rigid)\n"
    "  --im2 OVERRIDES.im2         Influence Map overrides applied to the binding (e.g. rigid eyes)\n"
    "  --materials NAME,...        only these materials' vertices follow the proxy (default: every\n"
    "                              material no soft body owns); use it when the cage covers one part,\n"
    "                              e.g. --materials hair for a cage made with plush proxy --materials hair\n"
    "  --export LIST               comma-separated, default pmx+vmd (modes bones and direct: ply):\n"
    "                                pmx+vmd  OUTDIR/<model>_plush.pmx (PMX 2.0: the model without soft\n"
    "                                         bodies and proxy material, plus one pseudo-bone per proxy\n"
    "                                         triangle) and OUTDIR/<model>_plush.vmd (the motion plus a\n"
    "                                         key per frame for every pseudo-bone): plays in MMD, nanoem,\n"
    "                                         mmd_tools without soft-body support (mode proxy only:\n"
    "                                         it bakes the proxy, which modes direct and bones lack)\n"
    "                                obj|ply  OUTDIR/frames/frame_00000.obj|ply ... every vertex's\n"
    "                                         position and normal, the faces of every material but the\n"
    "                                         soft bodies' own\n"
    "                                im2      OUTDIR/<model>_plush.im2, the binding (mode proxy only)\n"
    "  --every K                   mesh exports every K-th frame only (default 1)\n"
    "  --ground Y                  a static ground whose top is at height Y (default: none)\n"
    "  -h, --help                  this text\n"
    "\n"
    "At the end a summary: frames, time per frame by stage, warnings (missing bone names, skipped soft\n"
    "bodies, blow-ups with their frame). A progress bar is shown on stderr when it is a terminal.\n"
    "A model without a usable TriMesh soft body in mode proxy is an error (add one with plush attach).\n";

/* cli_run_job.exports bits (plush demo spells them as numbers) */
enum { EXPORT_PMX_VMD = 1, EXPORT_OBJ = 2, EXPORT_PLY = 4, EXPORT_IM2 = 8 };

static int parse_exports(const char *list, unsigned *out)
{
    *out = 0;
    const char *p = list;
    while (*p) {
        size_t n = strcspn(p, ",");
        if (n == 7 && strncmp(p, "pmx+vmd", n) == 0)
            *out |= EXPORT_PMX_VMD;
        else if (n == 3 && strncmp(p, "obj", n) == 0)
            *out |= EXPORT_OBJ;
        else if (n == 3 && strncmp(p, "ply", n) == 0)
            *out |= EXPORT_PLY;
        else if (n == 3 && strncmp(p, "im2", n) == 0)
            *out |= EXPORT_IM2;
        else
            return cli_usage_error(run_usage, "unknown export '%.*s' (pmx+vmd, obj, ply, im2)", (int)n, p);
        p += n;
        if (*p == ',')
            p++;
    }
    return *out ? CLI_OK : cli_usage_error(run_usage, "--export needs at least one of pmx+vmd, obj, ply, im2");
}

static int run_option(cli_args *args, const char *name, const char *inline_value, cli_run_job *job)
{
    bool *flag = strcmp(name, "--seed") == 0 ? &job->seed : strcmp(name, "--stretch") == 0 ? &job->stretch : NULL;
    if (flag) {
        if (inline_value)
            return cli_usage_error(run_usage, "option '%s' takes no value", name);
        *flag = true;
        return CLI_OK;
    }
    static const char *const valued[] = {"-o", "--output", "--motion", "--frames", "--fps", "--physics-hz", "--mode",
                                         "--im2", "--export", "--every", "--ground", "--materials"};
    bool known = false;
    for (size_t i = 0; i < sizeof valued / sizeof *valued; i++)
        known |= strcmp(name, valued[i]) == 0;
    if (!known)
        return cli_usage_error(run_usage, "unknown option '%s'", name);
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
    else if (strcmp(name, "--materials") == 0)
        rc = cli_names_add(&job->materials, v);
    else if (strcmp(name, "--frames") == 0 && (rc = cli_parse_number(run_usage, name, v, 1, 1e7, &x)) == CLI_OK) {
        if (x != floor(x))
            return cli_usage_error(run_usage, "--frames wants a whole number, not '%s'", v);
        job->frames = (uint32_t)x;
        job->frames_set = true;
    }
    else if (strcmp(name, "--fps") == 0 && (rc = cli_parse_number(run_usage, name, v, 1, 1000, &x)) == CLI_OK)
        job->fps = (float)x;
    else if (strcmp(name, "--physics-hz") == 0 && (rc = cli_parse_number(run_usage, name, v, 10, 10000, &x)) == CLI_OK)
        job->physics_hz = (float)x;
    else if (strcmp(name, "--every") == 0 && (rc = cli_parse_number(run_usage, name, v, 1, 1e7, &x)) == CLI_OK)
        job->every = (uint32_t)floor(x);
    else if (strcmp(name, "--ground") == 0 && (rc = cli_parse_number(run_usage, name, v, -1e6, 1e6, &x)) == CLI_OK)
        job->ground = true, job->ground_y = (float)x;
    else if (strcmp(name, "--export") == 0)
        rc = parse_exports(v, &job->exports);
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
    if (job->mode != PLUSH_SCENE_PROXY && (job->exports & (EXPORT_PMX_VMD | EXPORT_IM2)))
        return cli_usage_error(run_usage, "pmx+vmd and im2 export the proxy: they need --mode proxy (mode %s "
                               "exports obj and ply)", job->mode == PLUSH_SCENE_BONES ? "bones" : "direct");
    if (job->mode == PLUSH_SCENE_DIRECT && job->overrides)
        return cli_usage_error(run_usage, "--im2 overrides change the proxy binding: they need --mode proxy");
    return CLI_OK;
}

/* ---- outputs ------------------------------------------------------------------------------------ */

/* "dir/stem<suffix>" where stem is the model file's name without its extension. */
static char *output_path(const char *dir, const char *model, const char *suffix)
{
    const char *base = strrchr(model, '/');
    base = base ? base + 1 : model;
    size_t stem = strlen(base);
    if (cli_ends_with(base, ".pmx"))
        stem -= 4;
    size_t n = strlen(dir) + 1 + stem + strlen(suffix) + 1;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%.*s%s", dir, (int)stem, base, suffix);
    return p;
}

/* The faces a mesh export shows: every material's but those soft bodies own (an invisible cage would
 * hide the model in viewers that ignore alpha). */
static uint32_t *visible_faces(const plush_pmx_model *m, size_t *count)
{
    bool *soft = calloc(m->material_count ? m->material_count : 1, 1);
    uint32_t *faces = malloc((m->index_count ? m->index_count : 1) * sizeof *faces);
    if (!soft || !faces) {
        free(soft);
        free(faces);
        return NULL;
    }
    for (size_t s = 0; s < m->soft_body_count; s++) {
        int32_t mat = m->soft_bodies[s].material;
        if (mat >= 0 && (size_t)mat < m->material_count)
            soft[mat] = true;
    }
    size_t first = 0, n = 0;
    for (size_t mat = 0; mat < m->material_count; mat++) {
        size_t c = (size_t)m->materials[mat].index_count;
        if (!soft[mat])
            for (size_t i = first; i < first + c && i < m->index_count; i++)
                faces[n++] = m->indices[i];
        first += c;
    }
    free(soft);
    *count = n;
    return faces;
}

static void progress(uint32_t done, uint32_t total)
{
    enum { WIDTH = 40 };
    int fill = (int)((uint64_t)done * WIDTH / (total ? total : 1));
    fprintf(stderr, "\r  [%.*s%*s] %u/%u frames", fill, "########################################", WIDTH - fill, "",
            done, total);
    if (done == total)
        fputc('\n', stderr);
    fflush(stderr);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct run_state {
    const cli_run_job *job;
    plush_pmx_model *model;
    plush_vmd_motion *motion;
    plush_im2_map *overrides;
    plush_scene *scene;
    plush_scene_bake *bake;
    uint32_t *faces;
    size_t face_count;
    char *pmx_out, *vmd_out, *im2_out, *frames_dir;
    char frame_path[4096];               /* the mesh frame being written (its diag names it) */
    double export_time;
    uint32_t frames;
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

static plush_status export_frame(run_state *s, uint32_t f, plush_diag *diag)
{
    const cli_run_job *job = s->job;
    double t0 = now();
    plush_status st = PLUSH_OK;
    if (s->bake)
        st = plush_scene_bake_add_frame(s->bake, f, plush_scene_proxy_nodes(s->scene), diag);
    if (st == PLUSH_OK && (job->exports & (EXPORT_OBJ | EXPORT_PLY)) && f % job->every == 0) {
        plush_obj_mesh mesh = {.vertex_count = s->model->vertex_count,
                               .positions = plush_scene_positions(s->scene),
                               .normals = plush_scene_normals(s->scene),
                               .index_count = s->face_count,
                               .indices = s->faces};
        char comment[64], *path = s->frame_path; /* the diag keeps pointing at it after we return */
        snprintf(comment, sizeof comment, "plush run, frame %u", f);
        mesh.comment = comment;
        for (int k = 0; st == PLUSH_OK && k < 2; k++) {
            if (!(job->exports & (k ? EXPORT_PLY : EXPORT_OBJ)))
                continue;
            snprintf(path, sizeof s->frame_path, "%s/frame_%05u.%s", s->frames_dir, f, k ? "ply" : "obj");
            plush_diag fd;
            cli_diag_init(&fd, path);
            st = k ? plush_ply_write_file(&mesh, path, &fd) : plush_obj_write_file(&mesh, path, &fd);
            if (st != PLUSH_OK)
                *diag = fd;
        }
    }
    s->export_time += now() - t0;
    return st;
}

static uint32_t default_frames(const cli_run_job *job, const plush_vmd_motion *motion, float fps)
{
    if (job->frames_set)
        return job->frames;
    if (!motion)
        return 300;
    /* the motion's last key, in output frames, included */
    return (uint32_t)ceil((double)plush_vmd_last_frame(motion) * fps / 30.0) + 1;
}

static void summary(const run_state *s, const plush_diag *diag)
{
    const cli_run_job *job = s->job;
    plush_scene_timing t;
    plush_scene_get_timing(s->scene, &t);
    double n = t.steps ? (double)t.steps : 1, ms = 1000.0 / n;
    double total = t.motion + t.physics + t.frames + t.skinning + s->export_time;
    printf("plush run: %s\n", job->model);
    printf("  frames          %u at %g fps, physics %g Hz, mode %s\n", s->frames, (double)(job->fps ? job->fps : 30),
           (double)(job->physics_hz ? job->physics_hz : 60),
           job->mode == PLUSH_SCENE_BONES ? "bones" : job->mode == PLUSH_SCENE_DIRECT ? "direct" : "proxy");
    plush_scene_direct_stats ds;
    if (plush_scene_direct_model(s->scene, &ds))
        printf("  direct          %zu soft bod%s: %zu nodes, %zu faces, %zu pieces sewn by %zu seam links, %zu pinned "
               "and %zu anchored nodes\n",
               ds.bodies, ds.bodies == 1 ? "y" : "ies", ds.nodes, ds.faces, ds.pieces, ds.seam_links, ds.pinned_nodes,
               ds.anchored_nodes);
    printf("  per frame       %.3f ms: motion+bones %.3f, physics %.3f, proxy frames %.3f, skinning %.3f, "
           "export %.3f\n",
           total * ms, t.motion * ms, t.physics * ms, t.frames * ms, t.skinning * ms, s->export_time * ms);
    int64_t first = -1;
    size_t failed = plush_scene_failures(s->scene, &first);
    if (failed)
        printf("  blow-ups        %zu soft bod%s, the first at frame %lld (frozen from then on)\n", failed,
               failed == 1 ? "y" : "ies", (long long)first);
    if (diag->warning_count)
        printf("  warnings        %u (on stderr)\n", diag->warning_count);
    if (s->bake) {
        printf("  baked           %s\n                  %s\n", s->pmx_out, s->vmd_out);
        if (job->stretch)
            printf("                  (stretch-aware frames cannot be bone keys: the bake uses rigid frames)\n");
    }
    if (job->exports & (EXPORT_OBJ | EXPORT_PLY))
        printf("  mesh frames     %s/frame_NNNNN.%s (every %u)\n", s->frames_dir,
               (job->exports & EXPORT_OBJ) ? ((job->exports & EXPORT_PLY) ? "obj|ply" : "obj") : "ply", job->every);
    if (job->exports & EXPORT_IM2)
        printf("  binding         %s\n", s->im2_out);
}

static plush_status write_im2(const run_state *s, plush_diag *diag)
{
    plush_im2_map *map = NULL;
    plush_status st = plush_scene_binding_to_im2(plush_scene_get_binding(s->scene), &map, diag);
    if (st == PLUSH_OK)
        st = plush_im2_write_file(map, s->im2_out, diag);
    plush_im2_free(map);
    return st;
}

/* How far a direct run got before it had to stop at frame f. */
static void stopped_early(const run_state *s, uint32_t f, const char *what)
{
    const cli_run_job *job = s->job;
    if (f == 0 || !(job->exports & (EXPORT_OBJ | EXPORT_PLY)))
        fprintf(stderr, "plush: %s: direct mode: the detailed soft body %s at frame %u of %u; no frame written\n",
                job->model, what, f, s->frames);
    else
        fprintf(stderr,
                "plush: %s: direct mode: the detailed soft body %s at frame %u of %u; frames 0..%u are kept in %s\n",
                job->model, what, f, s->frames, (f - 1) / job->every * job->every, s->frames_dir);
}

static int simulate(run_state *s, plush_diag *model_diag)
{
    const cli_run_job *job = s->job;
    plush_diag out_diag;
    cli_diag_init(&out_diag, job->out_dir);
    plush_scene_desc desc = {
        .model = s->model,
        .motion = s->motion,
        .mode = job->mode,
        .fps = job->fps,
        .world = {.physics_hz = job->physics_hz, .ground = job->ground, .ground_y = job->ground_y},
        .bind = {.proxy = {.seed = job->seed},
                 .bound = {.materials = (const char *const *)job->materials.names, .material_count = job->materials.count}},
        .skin = {.stretch = job->stretch},
        .overrides = s->overrides,
        .overrides_file = job->overrides,
    };
    plush_status st = plush_scene_create(&desc, &s->scene, model_diag);
    /* plush_scene_bind's refusal, as the contract words it */
    if (st == PLUSH_E_NO_PROXY && job->mode != PLUSH_SCENE_BONES) {
        cli_report_warnings(model_diag); /* the soft bodies skipped, and why */
        fprintf(stderr, "plush: %s: no TriMesh soft body — add one with `plush attach`\n", job->model);
        return CLI_FAILED;
    }
    if (st != PLUSH_OK) {
        cli_report(model_diag);
        return CLI_FAILED;
    }
    /* OUTDIR only once the model is known to run, so a refused model leaves no empty directory */
    if (!cli_make_dir(job->out_dir, &out_diag) ||
        ((job->exports & (EXPORT_OBJ | EXPORT_PLY)) && !cli_make_dir(s->frames_dir, &out_diag))) {
        cli_report(&out_diag);
        return CLI_FAILED;
    }
    if ((job->exports & EXPORT_PMX_VMD) &&
        plush_scene_bake_create(plush_scene_get_binding(s->scene), s->motion, &s->bake, model_diag) != PLUSH_OK) {
        cli_report(model_diag);
        return CLI_FAILED;
    }
    bool bar = isatty(STDERR_FILENO);
    for (uint32_t f = 0; f < s->frames; f++) {
        if (plush_scene_step(s->scene, f, model_diag) != PLUSH_OK) {
            cli_report(model_diag);
            if (job->mode == PLUSH_SCENE_DIRECT)
                stopped_early(s, f, "failed");
            return CLI_FAILED;
        }
        /* a direct run is a reference: a frozen, blown-up body is no answer, so it ends there */
        if (job->mode == PLUSH_SCENE_DIRECT && plush_scene_failures(s->scene, NULL)) {
            if (bar)
                fputc('\n', stderr);
            cli_report_warnings(model_diag);
            stopped_early(s, f, "blew up");
            return CLI_FAILED;
        }
        if (export_frame(s, f, &out_diag) != PLUSH_OK) {
            cli_report(&out_diag);
            return CLI_FAILED;
        }
        if (bar && (f % 8 == 0 || f + 1 == s->frames))
            progress(f + 1, s->frames);
    }
    double t0 = now();
    if (s->bake && plush_scene_bake_write(s->bake, s->pmx_out, s->vmd_out, &out_diag) != PLUSH_OK) {
        cli_report(&out_diag);
        return CLI_FAILED;
    }
    if ((job->exports & EXPORT_IM2) && write_im2(s, &out_diag) != PLUSH_OK) {
        cli_report(&out_diag);
        return CLI_FAILED;
    }
    s->export_time += now() - t0;
    cli_report_warnings(model_diag);
    cli_report_warnings(&out_diag);
    summary(s, model_diag);
    return CLI_OK;
}

int cli_run_execute(const cli_run_job *in)
{
    cli_run_job job = *in;
    if (!job.exports)
        job.exports = job.mode == PLUSH_SCENE_PROXY ? EXPORT_PMX_VMD : EXPORT_PLY;
    if (!job.every)
        job.every = 1;
    run_state s = {.job = &job};
    plush_diag model_diag;
    cli_diag_init(&model_diag, job.model);
    int rc = CLI_FAILED;
    s.pmx_out = output_path(job.out_dir, job.model, "_plush.pmx");
    s.vmd_out = output_path(job.out_dir, job.model, "_plush.vmd");
    s.im2_out = output_path(job.out_dir, job.model, "_plush.im2");
    size_t n = strlen(job.out_dir) + sizeof "/frames";
    s.frames_dir = malloc(n);
    if (!s.pmx_out || !s.vmd_out || !s.im2_out || !s.frames_dir) {
        fprintf(stderr, "plush: out of memory\n");
        goto done;
    }
    snprintf(s.frames_dir, n, "%s/frames", job.out_dir);
    if (!read_inputs(&s, &model_diag))
        goto done;
    s.frames = default_frames(&job, s.motion, job.fps ? job.fps : 30);
    s.faces = visible_faces(s.model, &s.face_count);
    if (!s.faces) {
        fprintf(stderr, "plush: out of memory\n");
        goto done;
    }
    rc = simulate(&s, &model_diag);
done:
    plush_scene_bake_destroy(s.bake);
    plush_scene_destroy(s.scene);
    plush_im2_free(s.overrides);
    plush_vmd_free(s.motion);
    plush_pmx_free(s.model);
    free(s.faces);
    free(s.pmx_out);
    free(s.vmd_out);
    free(s.im2_out);
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
    } else if (rc == CLI_OK) {
        rc = cli_run_execute(&job);
    }
    cli_names_free(&job.materials);
    return rc;
}
