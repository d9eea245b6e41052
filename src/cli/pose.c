/* plush pose MODEL.pmx [--motion M.vmd|P.vpd] --frame F [--bones OUT.csv] [--mesh OUT.obj|OUT.ply]
 * [--physics]: the model posed at one frame, dumped for comparison with other programs. */
#include "cli/cli.h"
#include "core/geom.h"
#include "plush/obj.h"
#include "plush/sys/core.h"
#include "plush/sys/anim.h"

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
    double f = cli_decimal_text(v, true) ? strtod(v, &end) : NAN;
    if (!end || *end != '\0' || !isfinite(f) || f < 0 || f > POSE_MAX_FRAME)
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

/* The motion file: a VMD motion or a VPD pose, told by content. */
typedef struct pose_motion {
    plush_vmd_motion *vmd;
    plush_vpd_pose *vpd;
} pose_motion;

static plush_status read_motion(const char *path, pose_motion *out, plush_diag *diag)
{
    if (!cli_regular_file(path, diag))
        return diag->status;
    plush_file_bytes bytes;
    plush_status st = plush_file_map(path, &bytes, diag);
    if (st != PLUSH_OK)
        return st;
    const uint8_t *data = bytes.data;
    size_t size = bytes.size;
    if (size >= sizeof vpd_magic - 1 && memcmp(data, vpd_magic, sizeof vpd_magic - 1) == 0)
        st = plush_vpd_read(data, size, &out->vpd, diag);
    else
        st = plush_vmd_read(data, size, &out->vmd, diag);
    plush_file_unmap(&bytes);
    return st;
}

/* ---- the pose: the scene computes it (plain mode with physics, bones alone without) -------------- */

static plush_status pose_run(const pose_job *job, const plush_pmx_model *model, const pose_motion *motion,
                             plush_scene **scene, plush_diag *diag)
{
    plush_scene_desc desc = {.model = model,
                             .motion = motion->vmd,
                             .pose = motion->vpd,
                             .mode = job->physics ? PLUSH_SCENE_PLAIN : PLUSH_SCENE_BONES,
                             .no_physics = !job->physics};
    plush_status st = plush_scene_create(&desc, scene, diag);
    return st == PLUSH_OK ? plush_scene_seek(*scene, job->frame, diag) : st;
}

/* ---- outputs ----------------------------------------------------------------------------------- */

/* The rotation of a rigid column-major matrix, with qw >= 0 so that equal poses print equal rows. */
static void matrix_quat(const float *m, double q[4])
{
    double d[16];
    for (int k = 0; k < 16; k++)
        d[k] = m[k];
    plush__mat3_to_quat(d, 4, q);
    if (q[3] < 0)
        for (int k = 0; k < 4; k++)
            q[k] = -q[k];
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

static plush_status bones_csv(const plush_pmx_model *model, const plush_anim *anim, plush_buf *out, plush_diag *diag)
{
    static const char header[] = "index,name,x,y,z,qx,qy,qz,qw\n";
    bool ok = plush_buf_append(out, header, sizeof header - 1);
    const float (*g)[16] = plush_anim_bone_globals(anim);
    for (size_t b = 0; ok && b < model->bone_count; b++) {
        const float *m = g[b];
        for (int k = 0; k < 16; k++)
            if (!isfinite(m[k]))
                return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "bone", (int64_t)b, "pose is not finite");
        double q[4];
        matrix_quat(m, q);
        char line[256];
        int n = snprintf(line, sizeof line, "%zu,", b);
        ok = plush_buf_append(out, line, (size_t)n) && csv_name(out, &model->bones[b].name);
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
static int write_outputs(const plush_pmx_model *model, const plush_scene *scene, const pose_job *job, char *comment)
{
    plush_diag bones_diag, mesh_diag;
    cli_diag_init(&bones_diag, job->bones);
    cli_diag_init(&mesh_diag, job->mesh);
    plush_buf csv = {0}, mesh = {0};
    int rc = CLI_FAILED;
    if (job->bones && bones_csv(model, plush_scene_get_anim(scene), &csv, &bones_diag) != PLUSH_OK) {
        cli_report(&bones_diag);
        goto done;
    }
    if (job->mesh) {
        plush_obj_mesh m = {.vertex_count = model->vertex_count,
                            .positions = plush_scene_positions(scene),
                            .normals = plush_scene_normals(scene),
                            .index_count = model->index_count - model->index_count % 3,
                            .indices = model->indices,
                            .comment = comment};
        plush_status st = job->ply ? plush_ply_write(&m, &mesh, &mesh_diag) : plush_obj_write(&m, &mesh, &mesh_diag);
        if (st != PLUSH_OK) {
            cli_report(&mesh_diag);
            goto done;
        }
    }
    /* both outputs or neither: temporary files first, renamed as one set */
    plush_file_set *set = NULL;
    plush_diag *at = &bones_diag;
    plush_status st = plush_file_set_create(&set, at);
    if (st == PLUSH_OK && job->bones)
        st = plush_file_set_add(set, job->bones, csv.data, csv.size, at);
    if (st == PLUSH_OK && job->mesh)
        st = plush_file_set_add(set, job->mesh, mesh.data, mesh.size, at = &mesh_diag);
    if (st == PLUSH_OK)
        st = plush_file_set_commit(set, at);
    plush_file_set_destroy(set);
    if (st != PLUSH_OK) {
        cli_report(at);
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
    pose_motion motion = {0};
    plush_scene *scene = NULL;
    int rc = CLI_FAILED;
    if (!cli_regular_file(job->model, &model_diag) ||
        plush_pmx_read_file(job->model, NULL, &model, &model_diag) != PLUSH_OK) {
        cli_report(&model_diag);
        goto done;
    }
    if (job->motion && read_motion(job->motion, &motion, &motion_diag) != PLUSH_OK) {
        cli_report(&motion_diag);
        goto done;
    }
    /* the motion's binding to the model (missing names) is reported against the motion file */
    if (pose_run(job, model, &motion, &scene, &run_diag) != PLUSH_OK) {
        cli_report(&run_diag);
        goto done;
    }
    char comment[160];
    snprintf(comment, sizeof comment, "plush pose, frame %.9g%s", job->frame, job->physics ? ", physics" : "");
    rc = write_outputs(model, scene, job, comment);
    if (rc == CLI_OK) {
        cli_report_warnings(&model_diag);
        cli_report_warnings(&motion_diag);
        cli_report_warnings(&run_diag);
        char message[PLUSH_DIAG_MESSAGE];
        if (plush_anim_unsupported(plush_scene_get_anim(scene), message, sizeof message))
            cli_message("warning: %s: %s", job->motion ? job->motion : job->model, message);
    }
done:
    plush_scene_destroy(scene);
    plush_vmd_free(motion.vmd);
    plush_vpd_free(motion.vpd);
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
