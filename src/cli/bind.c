/* plush bind MODEL.pmx -o OUT.csv|OUT.im2: bind the detailed vertices to the soft-body proxy and write
 * the binding as a table or as an Influence Map File 2. */
#include "cli/cli.h"
#include "plush/sys/core.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char bind_usage[] =
    "usage: plush bind MODEL.pmx -o OUT.csv|OUT.im2 [--original] [--im2 OVERRIDES.im2] [--materials NAME,...]\n";

static const char bind_help[] =
    "\n"
    "Binds every detailed vertex of MODEL.pmx to its four nearest proxy triangles. The proxy is every\n"
    "TriMesh soft body's mesh (vertices welded by position), soft bodies in file order, each one's\n"
    "triangles in its material's face order; the bound vertices are those used by the faces of every\n"
    "material no soft body owns.\n"
    "\n"
    "options:\n"
    "  -o, --output OUT            where to write (required), by extension:\n"
    "                                .csv  'vertex,t0,t1,t2,t3,w0,w1,w2,w3', one row per bound vertex in\n"
    "                                      increasing order; unused slots -1 and 0; a vertex that stays\n"
    "                                      on bone skinning has no triangle at all\n"
    "                                .im2  Influence Map File 2 (Shift-JIS): per material, per vertex its\n"
    "                                      strongest triangle as pseudo-bone (model bones first, then one\n"
    "                                      per proxy triangle), CALC_NOSKIN0 when it is the only one\n"
    "  --original (or --seed)      the original method: its distance routine and tie order, weights as\n"
    "                              integer percents summing to 100 (the CSV prints them as integers)\n"
    "  --im2 OVERRIDES.im2         overrides, applied line by line after binding: CALC_NOSKIN0 on a\n"
    "                              pseudo-bone pins a vertex to that triangle alone; CALC_ONESKIN0 keeps\n"
    "                              the computed blend; a model bone as child leaves the vertex on bone\n"
    "                              skinning\n"
    "  --materials NAME,...        bind only these materials' vertices (repeatable), each by its name,\n"
    "                              English name or number as plush info MODEL lists them\n"
    "  -h, --help                  this text\n"
    "\n"
    "A model without a usable TriMesh soft body is an error. Skipped soft bodies (no material, empty or\n"
    "degenerate mesh) are warnings. Bad input gives one line 'plush: FILE: what went wrong (at byte N)'\n"
    "(for an .im2 file: 'line N: ...') and exit status 1; OUT is then left as it was.\n";

typedef enum bind_format { BIND_CSV, BIND_IM2 } bind_format;

typedef struct bind_job {
    const char *model, *out, *overrides;
    bind_format format;
    bool seed;
    cli_names materials;     /* --materials */
} bind_job;

static int bind_option(cli_args *args, const char *name, const char *inline_value, bind_job *job)
{
    if (strcmp(name, "--original") == 0 || strcmp(name, "--seed") == 0) {
        if (inline_value)
            return cli_usage_error(bind_usage, "option '%s' takes no value", name);
        job->seed = true;
        return CLI_OK;
    }
    bool out = strcmp(name, "-o") == 0 || strcmp(name, "--output") == 0;
    if (!out && strcmp(name, "--im2") != 0 && strcmp(name, "--materials") != 0)
        return cli_usage_error(bind_usage, "unknown option '%s'", name);
    const char *v = cli_args_value(args, name, inline_value);
    if (!v)
        return CLI_USAGE;
    if (strcmp(name, "--materials") == 0)
        return cli_names_add(&job->materials, v);
    const char **slot = out ? &job->out : &job->overrides;
    if (*slot)
        return cli_usage_error(bind_usage, "more than one %s file", out ? "output" : "--im2");
    *slot = v;
    return CLI_OK;
}

static int bind_option_cb(cli_args *args, const char *name, const char *value, void *job)
{
    return bind_option(args, name, value, job);
}

static int parse_bind(int argc, char **argv, bind_job *job, bool *help)
{
    int rc = cli_parse_model_command(argc, argv, bind_usage, bind_option_cb, job, &job->model, help);
    if (rc != CLI_OK || *help)
        return rc;
    if (!job->out)
        return cli_usage_error(bind_usage, "no output file (-o OUT.csv or -o OUT.im2)");
    if (cli_ends_with(job->out, ".csv"))
        job->format = BIND_CSV;
    else if (cli_ends_with(job->out, ".im2"))
        job->format = BIND_IM2;
    else
        return cli_usage_error(bind_usage, "the output '%s' must end in .csv or .im2", job->out);
    return CLI_OK;
}

/* ---- output ---------------------------------------------------------------------------------- */

static bool csv_row(plush_buf *out, const plush_scene_binding *b, size_t i)
{
    const plush_proxy_binding *pb = b->binding;
    bool off = pb->proxy_share[i] == 0; /* on bone skinning: no triangle moves it */
    char line[256];
    int n = snprintf(line, sizeof line, "%lu", (unsigned long)b->vertices[i]);
    for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++)
        n += snprintf(line + n, sizeof line - (size_t)n, ",%ld", off ? -1L : (long)pb->triangles[i][k]);
    for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++) {
        if (off || pb->triangles[i][k] < 0)
            n += snprintf(line + n, sizeof line - (size_t)n, ",0");
        else if (pb->percent)
            n += snprintf(line + n, sizeof line - (size_t)n, ",%u", (unsigned)pb->percent[i][k]);
        else
            n += snprintf(line + n, sizeof line - (size_t)n, ",%.9g", (double)pb->weights[i][k]);
    }
    line[n++] = '\n';
    return plush_buf_append(out, line, (size_t)n);
}

static plush_status write_csv(const plush_scene_binding *b, plush_buf *out, plush_diag *diag)
{
    static const char header[] = "vertex,t0,t1,t2,t3,w0,w1,w2,w3\n";
    bool ok = plush_buf_append(out, header, sizeof header - 1);
    for (size_t i = 0; ok && i < b->vertex_count; i++)
        ok = csv_row(out, b, i);
    return ok ? PLUSH_OK : plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
}

static plush_status write_output(const bind_job *job, const plush_scene_binding *b, plush_diag *diag)
{
    plush_buf buf = {0};
    plush_status st;
    if (job->format == BIND_CSV) {
        st = write_csv(b, &buf, diag);
    } else {
        plush_im2_map *map = NULL;
        st = plush_scene_binding_to_im2(b, &map, diag);
        if (st == PLUSH_OK)
            st = plush_im2_write(map, &buf, diag);
        plush_im2_free(map);
    }
    if (st == PLUSH_OK)
        st = plush_file_write_atomic(job->out, buf.data, buf.size, diag);
    plush_buf_free(&buf);
    return st;
}

/* ---- the command ----------------------------------------------------------------------------- */

/* Reads the model and the overrides; false after reporting. */
static bool read_inputs(bind_job *job, plush_pmx_model **model, plush_im2_map **map, plush_diag *model_diag)
{
    if (!cli_regular_file(job->model, model_diag) || plush_pmx_read_file(job->model, NULL, model, model_diag) != PLUSH_OK) {
        cli_report(model_diag);
        return false;
    }
    if (!cli_check_materials(*model, job->model, &job->materials))
        return false;
    if (!job->overrides)
        return true;
    plush_diag im2_diag;
    cli_diag_init(&im2_diag, job->overrides);
    if (!cli_regular_file(job->overrides, &im2_diag) || plush_im2_read_file(job->overrides, map, &im2_diag) != PLUSH_OK) {
        cli_report(&im2_diag);
        return false;
    }
    cli_report_warnings(&im2_diag);
    return true;
}

static int run_bind(bind_job *job)
{
    plush_diag model_diag, im2_diag, out_diag;
    cli_diag_init(&model_diag, job->model);
    cli_diag_init(&im2_diag, job->overrides);
    cli_diag_init(&out_diag, job->out);
    plush_pmx_model *model = NULL;
    plush_im2_map *map = NULL;
    plush_scene_binding *b = NULL;
    int rc = CLI_FAILED;
    if (!read_inputs(job, &model, &map, &model_diag))
        goto done;
    plush_scene_bind_options options = {
        .proxy = {.seed = job->seed},
        .bound = {.materials = (const char *const *)job->materials.names, .material_count = job->materials.count},
    };
    if (plush_scene_bind(model, &options, &b, &model_diag) != PLUSH_OK) {
        cli_report(&model_diag);
        goto done;
    }
    if (map && plush_scene_binding_apply_im2(b, map, &im2_diag) != PLUSH_OK) {
        cli_report(&im2_diag);
        goto done;
    }
    if (write_output(job, b, &out_diag) != PLUSH_OK) {
        cli_report(&out_diag);
        goto done;
    }
    cli_report_warnings(&model_diag);
    cli_report_warnings(&out_diag);
    rc = CLI_OK;
done:
    plush_scene_binding_free(b);
    plush_im2_free(map);
    plush_pmx_free(model);
    return rc;
}

int cli_bind(int argc, char **argv)
{
    bind_job job = {0};
    bool help = false;
    int rc = parse_bind(argc, argv, &job, &help);
    if (rc == CLI_OK && help) {
        fputs(bind_usage, stdout);
        fputs(bind_help, stdout);
    } else if (rc == CLI_OK) {
        rc = run_bind(&job);
    }
    cli_names_free(&job.materials);
    return rc;
}
