/* plush pose MODEL.pmx [--motion M.vmd|P.vpd] --frame F [--bones OUT.csv] [--mesh OUT.obj|OUT.ply]
 * [--physics]: the model posed at one frame, dumped for comparison with other programs. */
#include "cli/cli.h"
#include "plush/obj.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char pose_usage[] =
    "usage: plush pose MODEL.pmx [--motion M.vmd|P.vpd] --frame F [--bones OUT.csv] [--mesh OUT.obj|OUT.ply]\n"
    "                  [--physics]\n";

static const char pose_help[] =
    "\n"
    "Poses MODEL.pmx at frame F of a motion (at rest without one) through the whole bone pipeline --\n"
    "motion sampling, morphs, deform order, append, IK, BDEF1/2/4, SDEF and QDEF skinning -- and writes\n"
    "what it got, for checking against other programs.\n"
    "\n"
    "options:\n"
    "  --motion FILE               a VMD motion or a VPD pose (told by content); keys for bones or morphs\n"
    "                              the model lacks are reported once as a warning\n"
    "  --frame F                   the frame (30 per second; fractions allowed, e.g. 12.5), required\n"
    "  --bones OUT.csv             'index,name,x,y,z,qx,qy,qz,qw', one row per bone in model order: its\n"
    "                              global position and rotation after deform (quaternion with qw >= 0),\n"
    "                              nine significant digits; names in double quotes when they need it\n"
    "  --mesh OUT.obj|OUT.ply      the skinned mesh: positions, unit normals and the model's triangles\n"
    "                              (OBJ text, or binary little-endian PLY)\n"
    "  --physics                   simulate rigid bodies, joints and soft bodies from the rest pose at\n"
    "                              frame 0 up to F, one step per frame (30 fps, 60 Hz physics); without\n"
    "                              it physics is off and every bone follows the motion\n"
    "  -h, --help                  this text\n"
    "\n"
    "At least one of --bones and --mesh is needed. Coordinates are PMX's own (left-handed, Y up).\n"
    "Bad input gives one line 'plush: FILE: what went wrong (at byte N)' and exit status 1; outputs\n"
    "are written atomically, so a failed run leaves them as they were.\n";

typedef struct pose_job {
    const char *model, *motion, *bones, *mesh;
    double frame;
    bool have_frame, physics, ply;
} pose_job;

/* A frame is a finite number >= 0; a bound keeps float frames exact to a hundredth. */
enum { POSE_MAX_FRAME = 1000000 };

static int parse_frame(const char *v, pose_job *job)
{
    char *end = NULL;
    double f = strtod(v, &end);
    if (end == v || *end != '\0' || !isfinite(f) || f < 0 || f > POSE_MAX_FRAME)
        return cli_usage_error(pose_usage, "--frame needs a number from 0 to %d, not '%s'", POSE_MAX_FRAME, v);
    job->frame = f;
    job->have_frame = true;
    return CLI_OK;
}

static int pose_option(cli_args *args, const char *name, const char *inline_value, pose_job *job)
{
    if (strcmp(name, "--physics") == 0) {
        if (inline_value)
            return cli_usage_error(pose_usage, "option '--physics' takes no value");
        job->physics = true;
        return CLI_OK;
    }
    const char **slot = strcmp(name, "--motion") == 0  ? &job->motion
                        : strcmp(name, "--bones") == 0 ? &job->bones
                        : strcmp(name, "--mesh") == 0  ? &job->mesh
                                                       : NULL;
    if (!slot && strcmp(name, "--frame") != 0)
        return cli_usage_error(pose_usage, "unknown option '%s'", name);
    const char *v = cli_args_value(args, name, inline_value);
    if (!v)
        return CLI_USAGE;
    if (!slot) {
        if (job->have_frame)
            return cli_usage_error(pose_usage, "more than one --frame");
        return parse_frame(v, job);
    }
    if (*slot)
        return cli_usage_error(pose_usage, "more than one %s", name);
    *slot = v;
    return CLI_OK;
}

static int pose_option_cb(cli_args *args, const char *name, const char *value, void *job)
{
    return pose_option(args, name, value, job);
}

static int parse_pose(int argc, char **argv, pose_job *job, bool *help)
{
    int rc = cli_parse_model_command(argc, argv, pose_usage, pose_option_cb, job, &job->model, help);
    if (rc != CLI_OK || *help)
        return rc;
    if (!job->have_frame)
        return cli_usage_error(pose_usage, "no frame given (--frame F)");
    if (!job->bones && !job->mesh)
        return cli_usage_error(pose_usage, "nothing to write (--bones OUT.csv and/or --mesh OUT.obj)");
    if (job->bones && !cli_ends_with(job->bones, ".csv"))
        return cli_usage_error(pose_usage, "the bones output '%s' must end in .csv", job->bones);
    if (job->mesh) {
        job->ply = cli_ends_with(job->mesh, ".ply");
        if (!job->ply && !cli_ends_with(job->mesh, ".obj"))
            return cli_usage_error(pose_usage, "the mesh output '%s' must end in .obj or .ply", job->mesh);
    }
    if (job->bones && job->mesh && strcmp(job->bones, job->mesh) == 0)
        return cli_usage_error(pose_usage, "--bones and --mesh name the same file");
    return CLI_OK;
}

/* ---- inputs ------------------------------------------------------------------------------------ */

static const char vpd_magic[] = "Vocaloid Pose Data file";

/* Reads the motion (VMD or VPD, told by content) and binds it to the model. */
static plush_status read_motion(const char *path, const plush_pmx_model *model, plush_motion **out,
                                plush_diag *diag)
{
    if (!cli_regular_file(path, diag))
        return diag->status;
    uint8_t *data = NULL;
    size_t size = 0;
    plush_status st = plush_file_read(path, &data, &size, diag);
    if (st != PLUSH_OK)
        return st;
    if (size >= sizeof vpd_magic - 1 && memcmp(data, vpd_magic, sizeof vpd_magic - 1) == 0) {
        plush_vpd_pose *pose = NULL;
        st = plush_vpd_read(data, size, &pose, diag);
        if (st == PLUSH_OK)
            st = plush_motion_bind_vpd(model, pose, out, diag);
        plush_vpd_free(pose);
    } else {
        plush_vmd_motion *vmd = NULL;
        st = plush_vmd_read(data, size, &vmd, diag);
        if (st == PLUSH_OK)
            st = plush_motion_bind_vmd(model, vmd, out, diag);
        plush_vmd_free(vmd);
    }
    free(data);
    return st;
}

/* ---- the pose ---------------------------------------------------------------------------------- */

typedef struct pose_state {
    const plush_pmx_model *model;
    const plush_motion *motion;   /* NULL: rest */
    plush_anim *anim;
    float (*positions)[3], (*normals)[3];
    float (*globals)[16];         /* physics exchange */
    bool *driven;
    plush_world *world;
    plush_world_model *wm;
} pose_state;

static void pose_free(pose_state *s)
{
    plush_world_destroy(s->world);
    plush_anim_destroy(s->anim);
    free(s->positions);
    free(s->normals);
    free(s->globals);
    free(s->driven);
}

/* Motion, morphs and the bones that do not wait for physics. */
static void pose_before_physics(pose_state *s, float frame)
{
    if (s->motion)
        plush_anim_sample(s->anim, s->motion, frame);
    else
        plush_anim_reset(s->anim);
    plush_anim_update_morphs(s->anim);
    plush_anim_deform(s->anim, PLUSH_ANIM_BEFORE_PHYSICS);
}

static void pose_skin(pose_state *s)
{
    plush_anim_skin(s->anim, 0, s->model->vertex_count, s->positions, s->normals);
}

/* One motion step of dt seconds: bones and pins to the world, step, simulated bones back. */
static plush_status physics_step(pose_state *s, float frame, float dt, plush_diag *diag)
{
    pose_before_physics(s, frame);
    plush_world_set_bones(s->wm, plush_anim_bone_globals(s->anim));
    const plush_anim_impulse *impulses = NULL;
    size_t n = plush_anim_impulses(s->anim, &impulses);
    for (size_t i = 0; i < n; i++)
        plush_world_impulse(s->wm, impulses[i].rigid_body, impulses[i].velocity, impulses[i].torque,
                            impulses[i].local);
    if (s->model->soft_body_count) {
        /* Pinned soft-body nodes follow their vertices as the bones have them before the step. */
        pose_skin(s);
        plush_world_set_pins(s->wm, (const float(*)[3])s->positions);
    }
    plush_status st = plush_world_step(s->world, dt, diag);
    if (st != PLUSH_OK)
        return st;
    memcpy(s->globals, plush_anim_bone_globals(s->anim), s->model->bone_count * sizeof *s->globals);
    plush_world_get_bones(s->wm, s->globals, s->driven);
    plush_anim_apply_physics(s->anim, (const float(*)[16])s->globals, s->driven);
    plush_anim_deform(s->anim, PLUSH_ANIM_AFTER_PHYSICS);
    return PLUSH_OK;
}

/* From the pose at frame 0 (physics reset there, as MMD does at the start) to frame, one step per motion
 * frame and a last partial step for a fractional frame. */
static plush_status pose_with_physics(pose_state *s, float frame, plush_diag *diag)
{
    size_t nb = s->model->bone_count ? s->model->bone_count : 1;
    s->globals = malloc(nb * sizeof *s->globals);
    s->driven = calloc(nb, sizeof *s->driven);
    if (!s->globals || !s->driven)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    plush_status st = plush_world_create(&(plush_world_desc){0}, &s->world, diag);
    if (st != PLUSH_OK)
        return st;
    pose_before_physics(s, 0.0f);
    plush_anim_deform(s->anim, PLUSH_ANIM_AFTER_PHYSICS);
    st = plush_world_add_model(s->world, s->model, plush_anim_bone_globals(s->anim), &s->wm, diag);
    if (st != PLUSH_OK)
        return st;
    pose_skin(s);
    plush_world_reset(s->wm, plush_anim_bone_globals(s->anim), (const float(*)[3])s->positions);
    for (double t = 0.0; st == PLUSH_OK && t < frame;) {
        double next = t + 1.0 < frame ? t + 1.0 : frame;
        st = physics_step(s, (float)next, (float)((next - t) / 30.0), diag);
        t = next;
    }
    if (st != PLUSH_OK)
        return st;
    pose_skin(s);
    plush_world_soft_vertices(s->wm, s->positions, s->normals);
    return PLUSH_OK;
}

static plush_status pose_run(pose_state *s, const pose_job *job, plush_diag *diag)
{
    size_t nv = s->model->vertex_count ? s->model->vertex_count : 1;
    s->positions = malloc(nv * sizeof *s->positions);
    s->normals = malloc(nv * sizeof *s->normals);
    if (!s->positions || !s->normals)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    plush_status st = plush_anim_create(s->model, &s->anim, diag);
    if (st != PLUSH_OK)
        return st;
    if (job->physics)
        return pose_with_physics(s, (float)job->frame, diag);
    pose_before_physics(s, (float)job->frame);
    plush_anim_deform(s->anim, PLUSH_ANIM_AFTER_PHYSICS);
    pose_skin(s);
    return PLUSH_OK;
}

/* ---- outputs ----------------------------------------------------------------------------------- */

/* The rotation of a rigid column-major matrix, with qw >= 0 so that equal poses print equal rows. */
static void matrix_quat(const float *m, double q[4])
{
    double r00 = m[0], r10 = m[1], r20 = m[2], r01 = m[4], r11 = m[5], r21 = m[6], r02 = m[8], r12 = m[9],
           r22 = m[10];
    double trace = r00 + r11 + r22;
    if (trace > 0) {
        double s = 2 * sqrt(trace + 1);
        q[0] = (r21 - r12) / s, q[1] = (r02 - r20) / s, q[2] = (r10 - r01) / s, q[3] = 0.25 * s;
    } else if (r00 > r11 && r00 > r22) {
        double s = 2 * sqrt(1 + r00 - r11 - r22);
        q[0] = 0.25 * s, q[1] = (r01 + r10) / s, q[2] = (r02 + r20) / s, q[3] = (r21 - r12) / s;
    } else if (r11 > r22) {
        double s = 2 * sqrt(1 + r11 - r00 - r22);
        q[0] = (r01 + r10) / s, q[1] = 0.25 * s, q[2] = (r12 + r21) / s, q[3] = (r02 - r20) / s;
    } else {
        double s = 2 * sqrt(1 + r22 - r00 - r11);
        q[0] = (r02 + r20) / s, q[1] = (r12 + r21) / s, q[2] = 0.25 * s, q[3] = (r10 - r01) / s;
    }
    double len = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    double sign = q[3] < 0 ? -1.0 : 1.0;
    for (int k = 0; k < 4; k++)
        q[k] = sign * q[k] / len;
}

/* A CSV field: as is, or in double quotes (inner quotes doubled) when it holds a comma, a quote, a line
 * break or spaces at an end. */
static bool csv_name(plush_buf *out, const plush_str *name)
{
    const char *s = name->s ? name->s : "";
    size_t n = name->len;
    bool quote = n && (s[0] == ' ' || s[n - 1] == ' ');
    for (size_t i = 0; i < n && !quote; i++)
        quote = s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r';
    if (!quote)
        return plush_buf_append(out, s, n);
    bool ok = plush_buf_append(out, "\"", 1);
    for (size_t i = 0; ok && i < n; i++)
        ok = s[i] == '"' ? plush_buf_append(out, "\"\"", 2) : plush_buf_append(out, s + i, 1);
    return ok && plush_buf_append(out, "\"", 1);
}

/* "%.9g" with '.' as the decimal point whatever the locale. */
static int csv_float(char *dst, size_t cap, double v)
{
    int n = snprintf(dst, cap, ",%.9g", (double)(float)v);
    for (int i = 1; i < n && (size_t)i < cap; i++)
        if (dst[i] == ',')
            dst[i] = '.';
    return n;
}

static plush_status bones_csv(const pose_state *s, plush_buf *out, plush_diag *diag)
{
    static const char header[] = "index,name,x,y,z,qx,qy,qz,qw\n";
    bool ok = plush_buf_append(out, header, sizeof header - 1);
    const float (*g)[16] = plush_anim_bone_globals(s->anim);
    for (size_t b = 0; ok && b < s->model->bone_count; b++) {
        const float *m = g[b];
        for (int k = 0; k < 16; k++)
            if (!isfinite(m[k]))
                return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "bone", (int64_t)b, "pose is not finite");
        double q[4];
        matrix_quat(m, q);
        char line[256];
        int n = snprintf(line, sizeof line, "%zu,", b);
        ok = plush_buf_append(out, line, (size_t)n) && csv_name(out, &s->model->bones[b].name);
        n = 0;
        for (int k = 0; k < 3; k++)
            n += csv_float(line + n, sizeof line - (size_t)n, m[12 + k]);
        for (int k = 0; k < 4; k++)
            n += csv_float(line + n, sizeof line - (size_t)n, q[k]);
        line[n++] = '\n';
        ok = ok && plush_buf_append(out, line, (size_t)n);
    }
    return ok ? PLUSH_OK : plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
}

/* Both outputs are made in memory first; then each is written atomically. */
static int write_outputs(const pose_state *s, const pose_job *job, char *comment)
{
    plush_diag bones_diag, mesh_diag;
    cli_diag_init(&bones_diag, job->bones);
    cli_diag_init(&mesh_diag, job->mesh);
    plush_buf csv = {0}, mesh = {0};
    int rc = CLI_FAILED;
    if (job->bones && bones_csv(s, &csv, &bones_diag) != PLUSH_OK) {
        cli_report(&bones_diag);
        goto done;
    }
    if (job->mesh) {
        plush_obj_mesh m = {.vertex_count = s->model->vertex_count,
                            .positions = (const float(*)[3])s->positions,
                            .normals = (const float(*)[3])s->normals,
                            .index_count = s->model->index_count - s->model->index_count % 3,
                            .indices = s->model->indices,
                            .comment = comment};
        plush_status st = job->ply ? plush_ply_write(&m, &mesh, &mesh_diag) : plush_obj_write(&m, &mesh, &mesh_diag);
        if (st != PLUSH_OK) {
            cli_report(&mesh_diag);
            goto done;
        }
    }
    if (job->bones && plush_file_write_atomic(job->bones, csv.data, csv.size, &bones_diag) != PLUSH_OK) {
        cli_report(&bones_diag);
        goto done;
    }
    if (job->mesh && plush_file_write_atomic(job->mesh, mesh.data, mesh.size, &mesh_diag) != PLUSH_OK) {
        cli_report(&mesh_diag);
        goto done;
    }
    rc = CLI_OK;
done:
    plush_buf_free(&csv);
    plush_buf_free(&mesh);
    return rc;
}

/* ---- the command ------------------------------------------------------------------------------- */

static int run_pose(const pose_job *job)
{
    plush_diag model_diag, motion_diag, run_diag;
    cli_diag_init(&model_diag, job->model);
    cli_diag_init(&motion_diag, job->motion);
    cli_diag_init(&run_diag, job->model);
    plush_pmx_model *model = NULL;
    plush_motion *motion = NULL;
    pose_state s = {0};
    int rc = CLI_FAILED;
    if (!cli_regular_file(job->model, &model_diag) ||
        plush_pmx_read_file(job->model, NULL, &model, &model_diag) != PLUSH_OK) {
        cli_report(&model_diag);
        goto done;
    }
    if (job->motion && read_motion(job->motion, model, &motion, &motion_diag) != PLUSH_OK) {
        cli_report(&motion_diag);
        goto done;
    }
    s.model = model;
    s.motion = motion;
    if (pose_run(&s, job, &run_diag) != PLUSH_OK) {
        cli_report(&run_diag);
        goto done;
    }
    char comment[160];
    snprintf(comment, sizeof comment, "plush pose, frame %.9g%s", job->frame, job->physics ? ", physics" : "");
    rc = write_outputs(&s, job, comment);
    if (rc == CLI_OK) {
        cli_report_warnings(&model_diag);
        cli_report_warnings(&motion_diag);
        cli_report_warnings(&run_diag);
        char message[PLUSH_DIAG_MESSAGE];
        if (plush_anim_unsupported(s.anim, message, sizeof message))
            fprintf(stderr, "plush: warning: %s: %s\n", job->motion ? job->motion : job->model, message);
    }
done:
    pose_free(&s);
    plush_motion_free(motion);
    plush_pmx_free(model);
    return rc;
}

int cli_pose(int argc, char **argv)
{
    pose_job job = {0};
    bool help = false;
    int rc = parse_pose(argc, argv, &job, &help);
    if (rc == CLI_OK && help) {
        fputs(pose_usage, stdout);
        fputs(pose_help, stdout);
    } else if (rc == CLI_OK) {
        rc = run_pose(&job);
    }
    return rc;
}
