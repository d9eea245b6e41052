/* plush attach MODEL.pmx --proxy PROXY.obj|PROXY.pmx [--pin-bone NAME]... [--pin-vertices LIST]
 * [--anchor RIGIDBODY]... [--materials NAME,...] [--allow-free] [--preset plush|jelly|cloth] [--set FIELD=VALUE]...
 * -o OUT.pmx: write the model with the cage added as a PMX 2.1 soft body, pinned automatically unless told
 * where. */
#include "cli/cli.h"
#include "core/platform.h"
#include "plush/attach.h"
#include "plush/sys/core.h"
#include "plush/sys/attach.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char attach_usage[] =
    "usage: plush attach MODEL.pmx --proxy PROXY.obj|PROXY.pmx [--pin-bone NAME]... [--pin-vertices LIST]\n"
    "                    [--anchor RIGIDBODY]... [--materials NAME,...] [--allow-free]\n"
    "                    [--preset plush|jelly|cloth] [--set FIELD=VALUE]... -o OUT.pmx\n";

static const char attach_help[] =
    "\n"
    "Adds a cage (from 'plush proxy' or any 3D tool) to MODEL.pmx as a soft body and writes PMX 2.1:\n"
    "the cage's vertices (each with the skin weights of the nearest model vertex, so the cage follows\n"
    "the skeleton), one invisible material drawing its faces (diffuse alpha 0, no edge, no shadows) and\n"
    "a TriMesh soft body on that material; a cage in several separate pieces gets one material and one\n"
    "soft body per piece (named 'NAME 1', 'NAME 2', ...). Everything the model held is kept unchanged.\n"
    "\n"
    "options:\n"
    "  --proxy FILE                the cage (required): PMX (every material's faces) or OBJ ('v' and\n"
    "                              'f' lines; n-gons become fans). Vertices at the same position are\n"
    "                              joined, unused ones dropped; cage vertex k is the k-th that remains\n"
    "  (no --pin-bone or --pin-vertices) automatic pins where each piece attaches: a piece hangs from\n"
    "                              its top (a skirt's waistband, a cape's collar, hair's crown), so the\n"
    "                              band at its top (--pin-band) is pinned and follows the held bones\n"
    "                              (no dynamic rigid body moves them or an ancestor) its vertices are\n"
    "                              weighted to; a piece standing out from the model (a tuft, a tail\n"
    "                              at any angle; its top touches nothing) is pinned where it meets it\n"
    "                              (flat, it droops as its length does under gravity); a\n"
    "                              piece on physics bones only (a braid) is pinned where it is nearest\n"
    "                              the bone its chain hangs from, and follows that bone\n"
    "  --materials NAME,...        the materials the cage covers, for the automatic pins (repeatable;\n"
    "                              default: those at least half of whose vertices lie near the cage),\n"
    "                              each by its name, English name or number as plush info MODEL lists\n"
    "                              them\n"
    "  --pin-band S                automatic pins: the band pinned at the top of each piece, a share of\n"
    "                              its height (default 0.15, pinning at most 40% of its vertices; a\n"
    "                              band given is pinned whole, so 1 pins every vertex);\n"
    "                              e.g. --pin-band 0.3 for a wider waistband, 0.05 for a looser one\n"
    "  --pin-bone NAME             pin the cage vertices whose copied weights give the pin bones at least\n"
    "                              half of their weight (repeatable; each bone must pin something)\n"
    "  --pin-share S               that share instead of 0.5 (above 0, at most 1)\n"
    "  --pin-vertices LIST         pin these cage vertices too: '0,4,10-20' (0-based)\n"
    "  --allow-free                let a piece nothing pins or anchors fall (refused otherwise)\n"
    "  --anchor RIGIDBODY          anchor the cage vertices inside the rigid body's shape to it\n"
    "                              (repeatable; pinned vertices are not anchored)\n"
    ;

static const char attach_help_params[] =
    "  --preset NAME               soft-body parameters: plush (default), jelly or cloth\n"
    "  --set FIELD=VALUE           one soft-body field by its 'plush info --json' name, after the preset\n"
    "                              (repeatable); '--FIELD VALUE' works too. Fields: group mask flags\n"
    "                              blink_distance clusters total_mass margin aero_model config.vcf dp dg\n"
    "                              lf pr vc df mt chr khr shr ahr srhr_cl skhr_cl sshr_cl sr_splt_cl\n"
    "                              sk_splt_cl ss_splt_cl iterations.v p d c material_params.lst ast vst\n"
    "                              (the part after the dot alone also works)\n"
    "  --name NAME                 the new material's and soft body's name (default 'plush cage')\n"
    "  -o, --output OUT.pmx        where to write (required)\n"
    "  -h, --help                  this text\n"
    "\n"
    "presets (total_mass margin aero_model | dp dg lf pr vc df mt | iterations v p | lst ast vst):\n"
    "  plush   1   -0.1  0 | 0.05 0    0    0 0  0.2 0.05 | 0 16 | 0.5  0.5  0.5\n"
    "  jelly   1   -0.1  0 | 0.01 0    0    0 20 0.5 0.05 | 1 8  | 0.45 0.45 1\n"
    "  cloth   0.2 -0.04 1 | 0.02 0.01 0.05 0 0  0.5 0    | 1 8  | 0.9  0.9  1\n"
    "  a negative margin is in mean edges of each cage piece (0.1: a tenth of an edge).\n"
    "  all: group 15, B-link at distance 2 (flags 1), no clusters, vcf 1, chr 1, khr 0.1, shr 1, ahr 0.7,\n"
    "  cluster values 0.1 1 0.5 0.5 0.5 0.5, iterations d 0 c 4. The faces collide with every rigid body\n"
    "  that follows a bone (legs, hips, torso, arms, head) whatever the mask, except a body a face already\n"
    "  touches at rest. Unless --set mask is given, the mask (for rigid bodies physics moves) collides with\n"
    "  every group but 15 and the groups of such bodies that hold a free cage vertex at rest.\n"
    "\n"
    "Prints per piece its triangles, vertices, pins and the bones they follow. A piece pinned by fewer than\n"
    "three vertices off one line and anchored by none is a warning (it can spin about them).\n"
    "\n"
    "Errors (one line 'plush: FILE: ...', exit status 1, no output file): an unknown bone, material or rigid\n"
    "body, a pin bone that pins nothing, an anchor body that holds no cage vertex, a piece nothing pins or\n"
    "anchors (unless --allow-free), a proxy with no triangles, a model whose counts would pass what PMX\n"
    "indices hold.\n";

typedef struct attach_job {
    const char *model, *proxy, *out, *preset, *name;
    const char **pin_bones, **anchors;
    size_t pin_bone_count, anchor_count;
    uint32_t *pin_vertices;
    size_t pin_vertex_count;
    const char **sets;                 /* "FIELD=VALUE" or FIELD then VALUE (pairs) */
    size_t set_count;
    bool mask_set, allow_free;
    float pin_share, pin_band;
    cli_names materials;               /* --materials */
} attach_job;

static void job_free(attach_job *job)
{
    free(job->pin_bones);
    free(job->anchors);
    free(job->pin_vertices);
    free(job->sets);
    cli_names_free(&job->materials);
}

static bool push(const char ***list, size_t *count, const char *item)
{
    const char **l = realloc(*list, (*count + 1) * sizeof *l);
    if (!l)
        return false;
    l[(*count)++] = item;
    *list = l;
    return true;
}

static bool push_vertex(attach_job *job, unsigned long v)
{
    uint32_t *l = realloc(job->pin_vertices, (job->pin_vertex_count + 1) * sizeof *l);
    if (!l)
        return false;
    l[job->pin_vertex_count++] = (uint32_t)v;
    job->pin_vertices = l;
    return true;
}

/* "0,4,10-20". */
static int add_vertices(attach_job *job, const char *list)
{
    const char *p = list;
    for (;;) {
        char *end;
        errno = 0;
        if (*p < '0' || *p > '9')
            return cli_usage_error(attach_usage, "--pin-vertices: expected a vertex number at '%s'", p);
        unsigned long a = strtoul(p, &end, 10), b = a;
        if (!errno && *end == '-') {
            p = end + 1;
            if (*p < '0' || *p > '9')
                return cli_usage_error(attach_usage, "--pin-vertices: expected a vertex number at '%s'", p);
            b = strtoul(p, &end, 10);
        }
        if (errno || a > UINT32_MAX - 1 || b > UINT32_MAX - 1 || b < a || b - a > 10000000)
            return cli_usage_error(attach_usage, "--pin-vertices: bad range in '%s'", list);
        for (unsigned long v = a; v <= b; v++)
            if (!push_vertex(job, v)) {
                fprintf(stderr, "plush: out of memory\n");
                return CLI_FAILED;
            }
        if (*end == '\0')
            return CLI_OK;
        if (*end != ',')
            return cli_usage_error(attach_usage, "--pin-vertices: unexpected '%s'", end);
        p = end + 1;
    }
}

static bool is_field(const char *name)
{
    size_t count;
    const char *const *names = plush_attach_field_names(&count);
    for (size_t i = 0; i < count; i++) {
        const char *dot = strchr(names[i], '.');
        if (strcmp(name, names[i]) == 0 || (dot && strcmp(name, dot + 1) == 0))
            return true;
    }
    return false;
}

static bool field_is_mask(const char *set)
{
    return strncmp(set, "mask=", 5) == 0 || strcmp(set, "mask") == 0;
}

static int take_value(attach_job *job, const char *name, const char *v)
{
    bool ok = true;
    if (strcmp(name, "--proxy") == 0 || strcmp(name, "-o") == 0 || strcmp(name, "--output") == 0 ||
        strcmp(name, "--preset") == 0 || strcmp(name, "--name") == 0) {
        const char **slot = strcmp(name, "--proxy") == 0    ? &job->proxy
                            : strcmp(name, "--preset") == 0 ? &job->preset
                            : strcmp(name, "--name") == 0   ? &job->name
                                                            : &job->out;
        if (*slot)
            return cli_usage_error(attach_usage, "option '%s' given twice", name);
        *slot = v;
    } else if (strcmp(name, "--pin-bone") == 0) {
        ok = push(&job->pin_bones, &job->pin_bone_count, v);
    } else if (strcmp(name, "--anchor") == 0) {
        ok = push(&job->anchors, &job->anchor_count, v);
    } else if (strcmp(name, "--pin-vertices") == 0) {
        return add_vertices(job, v);
    } else if (strcmp(name, "--materials") == 0) {
        return cli_names_add(&job->materials, v);
    } else if (strcmp(name, "--pin-share") == 0) {
        char *end = NULL;
        double s = cli_decimal_text(v, true) ? strtod(v, &end) : NAN;
        if (!end || *end || !(s > 0 && s <= 1))
            return cli_usage_error(attach_usage, "--pin-share needs a number above 0 and at most 1, not '%s'", v);
        job->pin_share = (float)s;
    } else if (strcmp(name, "--pin-band") == 0) {
        double band;
        if (cli_parse_number(attach_usage, name, v, 0.001, 1, &band) != CLI_OK)
            return CLI_USAGE;
        job->pin_band = (float)band;
    } else if (strcmp(name, "--set") == 0) {
        if (!strchr(v, '='))
            return cli_usage_error(attach_usage, "--set needs FIELD=VALUE, not '%s'", v);
        job->mask_set |= field_is_mask(v);
        ok = push(&job->sets, &job->set_count, v) && push(&job->sets, &job->set_count, NULL);
    } else {
        /* "--FIELD VALUE" */
        job->mask_set |= strcmp(name + 2, "mask") == 0;
        ok = push(&job->sets, &job->set_count, name + 2) && push(&job->sets, &job->set_count, v);
    }
    if (!ok) {
        fprintf(stderr, "plush: out of memory\n");
        return CLI_FAILED;
    }
    return CLI_OK;
}

static int attach_option(cli_args *args, const char *name, const char *value, void *ctx)
{
    static const char *const known[] = {"--proxy",  "-o",           "--output",    "--preset", "--name",     "--pin-bone",
                                        "--anchor", "--pin-vertices", "--pin-share", "--pin-band", "--set",  "--materials"};
    if (strcmp(name, "--allow-free") == 0) {
        if (value)
            return cli_usage_error(attach_usage, "--allow-free takes no value");
        ((attach_job *)ctx)->allow_free = true;
        return CLI_OK;
    }
    bool ok = strncmp(name, "--", 2) == 0 && is_field(name + 2);
    for (size_t i = 0; i < sizeof known / sizeof known[0] && !ok; i++)
        ok = strcmp(name, known[i]) == 0;
    if (!ok)
        return cli_usage_error(attach_usage, "unknown option '%s'", name);
    const char *v = cli_args_value(args, name, value);
    return v ? take_value(ctx, name, v) : CLI_USAGE;
}

static int parse_attach(int argc, char **argv, attach_job *job, bool *help)
{
    int rc = cli_parse_model_command(argc, argv, attach_usage, attach_option, job, &job->model, help);
    if (rc != CLI_OK || *help)
        return rc;
    if (!job->proxy)
        return cli_usage_error(attach_usage, "no proxy given (--proxy PROXY.obj or PROXY.pmx)");
    if (!job->out)
        return cli_usage_error(attach_usage, "no output file (-o OUT.pmx)");
    size_t n = strlen(job->out);
    if (n < 5 || strcasecmp(job->out + n - 4, ".pmx") != 0)
        return cli_usage_error(attach_usage, "the output '%s' must end in .pmx", job->out);
    return CLI_OK;
}

/* The preset, then every field in order. Field problems are usage errors: they are in the command line. */
static int soft_params(const attach_job *job, plush_pmx_soft_body *sb)
{
    const char *preset = job->preset ? job->preset : "plush";
    if (!plush_attach_preset(preset, sb))
        return cli_usage_error(attach_usage, "unknown preset '%s' (plush, jelly or cloth)", preset);
    for (size_t i = 0; i < job->set_count; i += 2) {
        char field[64];
        const char *text = job->sets[i + 1];
        if (!text) { /* "FIELD=VALUE" */
            const char *eq = strchr(job->sets[i], '=');
            size_t len = (size_t)(eq - job->sets[i]);
            if (len >= sizeof field)
                return cli_usage_error(attach_usage, "no soft-body field '%s'", job->sets[i]);
            memcpy(field, job->sets[i], len);
            field[len] = '\0';
            text = eq + 1;
        } else {
            snprintf(field, sizeof field, "%s", job->sets[i]);
        }
        char *end = NULL;
        errno = 0;
        double v = cli_decimal_text(text, true) ? strtod(text, &end) : NAN;
        if (errno || !end || *end)
            return cli_usage_error(attach_usage, "%s: '%s' is not a decimal number", field, text);
        plush_diag d;
        cli_diag_init(&d, NULL);
        if (plush_attach_set_field(sb, field, v, &d) != PLUSH_OK)
            return cli_usage_error(attach_usage, "%s", d.message);
    }
    return CLI_OK;
}

static void report(const attach_job *job, const plush_cage_mesh *cage, const plush_pmx_model *out,
                   const plush_attach_result *r)
{
    const plush_pmx_soft_body *sb = &out->soft_bodies[r->soft_body];
    /* the new model vertices: a vertex two pieces share is copied into each, so they can outnumber the cage's */
    info_line("cage", "%zu vertices, %zu triangles (model vertices %zu..%zu)", cage->vertex_count,
              cage->triangle_count, r->first_vertex, r->first_vertex + r->vertex_count - 1);
    if (r->pieces > 1)
        info_line("pieces", "%zu, each its own material and soft body", r->pieces);
    info_line("materials", "%zu..%zu \"%s\"... (invisible)", r->material, r->material + r->pieces - 1, sb->name.s);
    info_line("soft bodies", "%zu..%zu, TriMesh, preset %s, mass %g each, group %u, mask 0x%04x", r->soft_body,
              r->soft_body + r->pieces - 1, job->preset ? job->preset : "plush", (double)sb->total_mass,
              (unsigned)sb->group, (unsigned)sb->mask);
    info_line("pinned", "%zu cage vertices%s", r->pinned, r->auto_pinned ? " (automatic pins)" : "");
    info_line("anchored", "%zu cage vertices", r->anchored);
    cli_attach_report_pieces(out, r);
}

static void progress(void *user, size_t done, size_t total)
{
    (void)user;
    cli_progress_bar(done, total, "vertices matched");
}

static int run_attach(attach_job *job, const plush_pmx_soft_body *soft)
{
    plush_diag model_diag, proxy_diag, out_diag;
    cli_diag_init(&model_diag, job->model);
    cli_diag_init(&proxy_diag, job->proxy);
    cli_diag_init(&out_diag, job->out);
    plush_pmx_model *model = NULL, *out = NULL;
    plush_arena arena = {0};
    plush_cage_mesh cage;
    int rc = CLI_FAILED;
    if (!cli_regular_file(job->model, &model_diag) ||
        plush_pmx_read_file(job->model, NULL, &model, &model_diag) != PLUSH_OK) {
        cli_report(&model_diag);
        goto done;
    }
    if (!cli_check_materials(model, job->model, &job->materials))
        goto done;
    if (!cli_regular_file(job->proxy, &proxy_diag) ||
        plush_attach_read_proxy_file(job->proxy, &arena, &cage, &proxy_diag) != PLUSH_OK) {
        cli_report(&proxy_diag);
        goto done;
    }
    plush_attach_options o = {.cage = &cage, .name = job->name, .soft = *soft, .auto_mask = !job->mask_set,
                              .pin_bones = job->pin_bones, .pin_bone_count = job->pin_bone_count,
                              .pin_share = job->pin_share, .pin_band = job->pin_band, .pin_vertices = job->pin_vertices,
                              .pin_vertex_count = job->pin_vertex_count, .anchors = job->anchors,
                              .anchor_count = job->anchor_count,
                              .auto_pins = job->pin_bone_count == 0 && job->pin_vertex_count == 0,
                              .materials = (const char *const *)job->materials.names,
                              .material_count = job->materials.count, .require_hold = !job->allow_free,
                              .progress = plush__os_stderr_is_terminal() ? progress : NULL};
    plush_attach_result r;
    if (plush_attach(model, &o, &out, &r, &model_diag) != PLUSH_OK) {
        cli_report(&model_diag);
        goto done;
    }
    plush_pmx_write_options wo = {.version = PLUSH_PMX_WRITE_21};
    if (plush_pmx_write_file(out, &wo, job->out, &out_diag) != PLUSH_OK) {
        cli_report(&out_diag);
        goto done;
    }
    report(job, &cage, out, &r);
    cli_report_warnings(&proxy_diag);
    cli_report_warnings(&model_diag);
    cli_report_warnings(&out_diag);
    rc = CLI_OK;
done:
    plush_pmx_free(out);
    plush_pmx_free(model);
    plush_arena_free(&arena);
    return rc;
}

void cli_attach_report_pieces(const plush_pmx_model *out, const plush_attach_result *r)
{
    for (size_t p = 0; p < r->pieces; p++) {
        const plush_attach_piece *pi = &r->piece_info[p];
        char label[32], bones[512] = "";
        size_t at = 0;
        for (size_t b = 0; b < pi->bone_count && at < sizeof bones; b++) {
            const plush_str *name = &out->bones[pi->bones[b]].name;
            int n = snprintf(bones + at, sizeof bones - at, "%s\"%.*s\"", b ? ", " : " to ", (int)name->len, name->s);
            at += n > 0 ? (size_t)n : 0;
        }
        snprintf(label, sizeof label, "piece %zu", p + 1);
        double share = pi->vertices ? (double)pi->pinned / (double)pi->vertices : 0;
        char fitted[64] = "";
        if (pi->fitted)
            snprintf(fitted, sizeof fitted, " (%zu where it fits the body)", pi->fitted);
        info_line(label, "%zu triangles, %zu vertices, %zu pinned (%.0f%%)%s%s%s, %zu anchored%s; free %.3g along the cage",
                  pi->triangles, pi->vertices, pi->pinned, 100 * share,
                  pi->auto_pinned ? (pi->physics        ? " automatically (physics bones)"
                                     : pi->from_contact ? " automatically (where it meets the model)"
                                                        : " automatically")
                                  : "",
                  bones, fitted,
                  pi->anchored, pi->pinned + pi->anchored == 0 ? " (free: it falls)" : pi->spins ? " (it can spin)" : "",
                  (double)pi->free_length);
        /* three pins off one line keep a piece from spinning: under six vertices that is more than half; a piece
         * pinned where it fits the body (a stocking) is meant to follow its bones there */
        if (pi->vertices && (double)(pi->pinned - pi->fitted) / (double)pi->vertices > 0.5)
            cli_message("warning: cage piece %zu has %zu of its %zu vertices pinned: most of it cannot move (%s)",
                        p + 1, pi->pinned, pi->vertices,
                        !pi->auto_pinned   ? "pin fewer vertices"
                        : pi->vertices < 6 ? "three pins hold a piece, and it has fewer than six: it follows its bones"
                                           : "a narrower --pin-band frees more");
    }
}

int cli_attach(int argc, char **argv)
{
    attach_job job = {0};
    bool help = false;
    plush_pmx_soft_body soft;
    int rc = parse_attach(argc, argv, &job, &help);
    if (rc == CLI_OK && help) {
        fputs(attach_usage, stdout);
        fputs(attach_help, stdout);
        fputs(attach_help_params, stdout);
    } else if (rc == CLI_OK && (rc = soft_params(&job, &soft)) == CLI_OK) {
        rc = run_attach(&job, &soft);
    }
    job_free(&job);
    return rc;
}
