/* plush info FILE... [--bones] [--json]: what a file holds, and whether plush reads it without error. */
#include "cli/cli.h"
#include "plush/sys/core.h"
#include "plush/sys/vmd.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char info_usage[] = "usage: plush info FILE... [--bones] [--json]\n";

static const char info_help[] =
    "\n"
    "Reads each FILE (a PMX model, VMD motion or VPD pose, told apart by content, not by name),\n"
    "checks it, and prints a summary: for PMX the version, text encoding, additional UVs, index\n"
    "sizes, names, counts, weight/morph/joint type histograms, every material and every soft body;\n"
    "for VMD the model name, the key counts of each section, how many bone keys a reader of the\n"
    "first curve row alone would play wrong, and the last frame; for VPD the bone\n"
    "and morph counts. Warnings (text that did not decode, trailing bytes, ...) are listed.\n"
    "\n"
    "A material's line gives its index, name, English name (in parentheses when it differs), faces,\n"
    "texture, the bones that carry most of its weight (the three heaviest, each with at least 1%, with\n"
    "their shares) and the soft body that owns it. --cage and --materials take the name, the English\n"
    "name or the index: material 8 \"スカート\" (skirt) is --cage スカート, --cage skirt or --cage 8.\n"
    "On a model whose materials are called 材質1, 材質2, ... the bones tell which is the skirt (waist\n"
    "and skirt bones) and which the hair (head and hair).\n"
    "\n"
    "options:\n"
    "  --bones     also every bone: index, name, parent, and the rigid body that drives it with its\n"
    "              physics mode (physics; physics, bone position; or follows the bone)\n"
    "  --json      one JSON object per FILE, one per line (JSON Lines), in argument order.\n"
    "              Every object has \"file\". A file that reads gets \"format\" (\"pmx\", \"vmd\",\n"
    "              \"vpd\") and its fields; one that fails gets \"error\" (the message below)\n"
    "              and \"status\" instead. A PMX object has \"materials\" (and with --bones\n"
    "              \"bones\") as arrays of objects with the fields above.\n"
    "  -h, --help  this text\n"
    "\n"
    "A file that cannot be read gives one line 'plush: FILE: what went wrong (at byte N)' on\n"
    "stderr; the other files are still shown, and the exit status is 1.\n";

typedef enum file_kind { KIND_UNKNOWN, KIND_PMX, KIND_PMD, KIND_VMD, KIND_VPD } file_kind;

typedef struct signature {
    file_kind kind;
    const char *magic;
} signature;

/* VMD's signature continues with " file" (version 1) or " 0002" (version 2); the reader tells. */
static const signature signatures[] = {
    {KIND_PMX, "PMX "},
    {KIND_PMD, "Pmd"},
    {KIND_VMD, "Vocaloid Motion Data"},
    {KIND_VPD, "Vocaloid Pose Data file"},
};

static file_kind detect_kind(const uint8_t *data, size_t size, plush_diag *diag)
{
    const uint8_t *p = data;
    size_t n = size;
    for (size_t i = 0; i < sizeof signatures / sizeof signatures[0]; i++) {
        size_t len = strlen(signatures[i].magic);
        if (n >= len && memcmp(p, signatures[i].magic, len) == 0)
            return signatures[i].kind;
    }
    if (size == 0) {
        plush_diag_fail(diag, PLUSH_E_TRUNCATED, 0, "header", -1, "empty file");
        return KIND_UNKNOWN;
    }
    for (size_t i = 0; i < sizeof signatures / sizeof signatures[0]; i++) {
        size_t len = strlen(signatures[i].magic);
        if (n > 0 && n < len && memcmp(p, signatures[i].magic, n) == 0) {
            plush_diag_fail(diag, PLUSH_E_TRUNCATED, (int64_t)size, "header", -1,
                            "file ends inside the signature");
            return KIND_UNKNOWN;
        }
    }
    plush_diag_fail(diag, PLUSH_E_FORMAT, 0, "header", -1, "not a PMX, VMD or VPD file");
    return KIND_UNKNOWN;
}

/* ---- VMD and VPD ----------------------------------------------------------------------------- */

/* How the bone keys' curve blocks were written: keys whose first row alone gives other curves than
 * the rows (written by current tools, played wrong by readers of the first row), and the first row's
 * bytes 2-3, which are not curve data there (zero in every motion seen; a per-key switch some notes tie
 * to physics, which plush does not decode). */
typedef struct vmd_curve_counts {
    size_t first_row_differs, bytes23_zero, bytes23_set;
} vmd_curve_counts;

static vmd_curve_counts vmd_curves(const plush_vmd_motion *m)
{
    vmd_curve_counts c = {0};
    for (size_t i = 0; i < m->bone_key_count; i++) {
        const uint8_t *b = m->bone_keys[i].interpolation;
        c.first_row_differs += plush_vmd_key_first_row_differs(b);
        if (b[2] || b[3])
            c.bytes23_set++;
        else
            c.bytes23_zero++;
    }
    return c;
}

static void vmd_text(const plush_vmd_motion *m, const plush_diag *diag)
{
    vmd_curve_counts curves = vmd_curves(m);
    info_line("format", "VMD (version %d)", m->header_version);
    info_name_line("model name", &m->model_name);
    info_line("bone keys", "%zu", m->bone_key_count);
    info_line("morph keys", "%zu", m->morph_key_count);
    info_line("camera keys", "%zu", m->camera_key_count);
    info_line("light keys", "%zu", m->light_key_count);
    info_line("shadow keys", "%zu", m->shadow_key_count);
    info_line("property keys", "%zu", m->property_key_count);
    info_line("bone curves", "each read from its own row; the first row alone differs in %zu of %zu keys "
              "(its bytes 2-3 zero in %zu, set in %zu)", curves.first_row_differs, m->bone_key_count,
              curves.bytes23_zero, curves.bytes23_set);
    info_line("last frame", "%u", (unsigned)plush_vmd_last_frame(m));
    info_warnings_text(diag);
}

static void vmd_json(json_writer *w, const plush_vmd_motion *m, const plush_diag *diag)
{
    json_string(w, "format", "vmd");
    json_int(w, "version", m->header_version);
    json_string_n(w, "model_name", m->model_name.s, m->model_name.s ? m->model_name.len : 0);
    json_object_begin(w, "counts");
    json_uint(w, "bones", m->bone_key_count);
    json_uint(w, "morphs", m->morph_key_count);
    json_uint(w, "cameras", m->camera_key_count);
    json_uint(w, "lights", m->light_key_count);
    json_uint(w, "shadows", m->shadow_key_count);
    json_uint(w, "properties", m->property_key_count);
    json_object_end(w);
    vmd_curve_counts curves = vmd_curves(m);
    json_object_begin(w, "bone_curves");
    json_uint(w, "first_row_differs", curves.first_row_differs);
    json_uint(w, "first_row_bytes23_zero", curves.bytes23_zero);
    json_uint(w, "first_row_bytes23_set", curves.bytes23_set);
    json_object_end(w);
    json_uint(w, "last_frame", plush_vmd_last_frame(m));
    info_warnings_json(w, diag);
}

static void vpd_text(const plush_vpd_pose *p, const plush_diag *diag)
{
    info_line("format", "VPD");
    info_name_line("model name", &p->model_name);
    info_line("bones", "%zu", p->bone_count);
    info_line("morphs", "%zu", p->morph_count);
    info_warnings_text(diag);
}

static void vpd_json(json_writer *w, const plush_vpd_pose *p, const plush_diag *diag)
{
    json_string(w, "format", "vpd");
    json_string_n(w, "model_name", p->model_name.s, p->model_name.s ? p->model_name.len : 0);
    json_object_begin(w, "counts");
    json_uint(w, "bones", p->bone_count);
    json_uint(w, "morphs", p->morph_count);
    json_object_end(w);
    info_warnings_json(w, diag);
}

/* ---- one file -------------------------------------------------------------------------------- */

typedef struct info_output {
    bool json, bones;
    json_writer w;
} info_output;

static void begin_file(info_output *out, const char *path)
{
    if (out->json) {
        json_init(&out->w, stdout);
        json_object_begin(&out->w, NULL);
        json_string(&out->w, "file", path);
    } else {
        /* The path heads the block unquoted, its control characters escaped as every line's are. */
        cli_line("%s", path);
    }
}

static void end_file(info_output *out)
{
    /* JSON: the newline ends the object's line; text: a blank line between blocks. */
    if (out->json)
        json_object_end(&out->w);
    fputc('\n', stdout);
}

static bool report_failure(info_output *out, const char *path, const plush_diag *diag)
{
    if (out->json) {
        char line[1024];
        plush_diag_format(diag, line, sizeof line);
        json_init(&out->w, stdout);
        json_object_begin(&out->w, NULL);
        json_string(&out->w, "file", path);
        json_string(&out->w, "error", line);
        json_string(&out->w, "status", plush_status_text(diag->status));
        json_object_end(&out->w);
        fputc('\n', stdout);
    }
    /* Keep stdout and stderr in order when both go to one terminal or file. */
    fflush(stdout);
    cli_report(diag);
    return false;
}

static bool info_file(info_output *out, const char *path)
{
    plush_diag diag;
    cli_diag_init(&diag, path);
    plush_file_bytes bytes = {0}; /* mapped when large: a bad header costs one page, not the file */
    if (!cli_regular_file(path, &diag) || plush_file_map(path, &bytes, &diag) != PLUSH_OK)
        return report_failure(out, path, &diag);
    const uint8_t *data = bytes.data;
    size_t size = bytes.size;

    bool ok = false;
    switch (detect_kind(data, size, &diag)) {
    case KIND_PMX: {
        plush_pmx_model *model = NULL;
        /* read whole: a material's main bones come from its vertices' weights */
        if (plush_pmx_read(data, size, NULL, &model, &diag) != PLUSH_OK)
            break;
        begin_file(out, path);
        if (out->json)
            info_pmx_json(&out->w, model, out->bones, &diag);
        else
            info_pmx_text(model, out->bones, &diag);
        end_file(out);
        plush_pmx_free(model);
        ok = true;
        break;
    }
    case KIND_VMD: {
        plush_vmd_motion *motion = NULL;
        if (plush_vmd_read(data, size, &motion, &diag) != PLUSH_OK)
            break;
        begin_file(out, path);
        if (out->json)
            vmd_json(&out->w, motion, &diag);
        else
            vmd_text(motion, &diag);
        end_file(out);
        plush_vmd_free(motion);
        ok = true;
        break;
    }
    case KIND_VPD: {
        plush_vpd_pose *pose = NULL;
        if (plush_vpd_read(data, size, &pose, &diag) != PLUSH_OK)
            break;
        begin_file(out, path);
        if (out->json)
            vpd_json(&out->w, pose, &diag);
        else
            vpd_text(pose, &diag);
        end_file(out);
        plush_vpd_free(pose);
        ok = true;
        break;
    }
    case KIND_PMD:
        plush_diag_fail(&diag, PLUSH_E_UNSUPPORTED, 0, "header", -1,
                        "PMD (the format before PMX) is not supported; convert it to PMX first");
        break;
    case KIND_UNKNOWN:
        break;
    }
    plush_file_unmap(&bytes);
    if (!ok) {
        /* A reader that failed without saying why still owes the user a line. */
        if (diag.status == PLUSH_OK)
            plush_diag_fail(&diag, PLUSH_E_FORMAT, -1, NULL, -1, "cannot be read");
        return report_failure(out, path, &diag);
    }
    return true;
}

int cli_info(int argc, char **argv)
{
    cli_args args = {.argc = argc, .argv = argv, .next = 1, .usage = info_usage};
    info_output out = {0};
    int files = 0;
    const char *name, *value;
    cli_arg_kind kind;
    /* First pass: options only, so that "info a.pmx --json" prints a.pmx as JSON too. */
    while ((kind = cli_args_next(&args, &name, &value)) != CLI_ARG_END) {
        if (kind == CLI_ARG_OPERAND) {
            files++;
        } else if (cli_is_help(name)) {
            fputs(info_usage, stdout);
            fputs(info_help, stdout);
            return CLI_OK;
        } else if (strcmp(name, "--json") == 0) {
            if (value)
                return cli_usage_error(info_usage, "option '--json' takes no value");
            out.json = true;
        } else if (strcmp(name, "--bones") == 0) {
            if (value)
                return cli_usage_error(info_usage, "option '--bones' takes no value");
            out.bones = true;
        } else {
            return cli_usage_error(info_usage, "unknown option '%s'", name);
        }
    }
    if (files == 0)
        return cli_usage_error(info_usage, "no input file");

    int rc = CLI_OK;
    args.next = 1;
    args.operands_only = false;
    while ((kind = cli_args_next(&args, &name, &value)) != CLI_ARG_END) {
        if (kind == CLI_ARG_OPERAND && !info_file(&out, value))
            rc = CLI_FAILED;
    }
    return rc;
}
