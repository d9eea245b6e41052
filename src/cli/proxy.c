/* plush proxy MODEL.pmx --triangles N [--materials NAME,...] [--offset D] [--wrap] -o PROXY.obj|PROXY.pmx: generate a
 * soft-body cage for some of a model's materials and say how well it fits. */
#include "cli/cli.h"
#include "plush/cage.h"
#include "plush/scene_proxy.h"
#include "plush/obj.h"
#include "plush/sys/attach.h"
#include "plush/sys/core.h"
#include "plush/sys/scene.h"

#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char proxy_usage[] =
    "usage: plush proxy MODEL.pmx --triangles N [--materials NAME,...] [--offset D] [--wrap] -o PROXY.obj|PROXY.pmx\n";

static const char proxy_help[] =
    "\n"
    "Generates a coarse cage around some of MODEL.pmx's materials, to become a soft body with\n"
    "'plush attach'. The chosen materials' faces are welded by position into one surface, simplified\n"
    "with meshoptimizer toward N triangles (first with the border locked, then letting border vertices\n"
    "slide along the border, then the sloppy simplifier when the target is still not reached) and\n"
    "optionally pushed outward along the area-weighted vertex normals so the cage encloses the skin.\n"
    "Materials made of separate closed pieces (body, head, ears, limbs) give a cage in as many pieces, and\n"
    "plush attach makes one soft body of each: a piece without a pin falls. --wrap makes one closed piece\n"
    "around all of them instead: the points of a grid within D of the surface are filled, with everything\n"
    "the outside cannot reach, pieces further apart are joined by thin tubes, and the boundary (a closed\n"
    "2-manifold about D out) is simplified toward N triangles.\n"
    "\n"
    "options:\n"
    "  --triangles N               the target triangle count (required); reached when the cage has at\n"
    "                              most N + 10%\n"
    "  --materials NAME,...        the materials to cage (repeatable; default: every material), each by\n"
    "                              its name, English name or number as plush info MODEL lists them with\n"
    "                              the bones that move each (e.g. --materials skirt or --materials 8)\n"
    "  --offset D                  push every cage vertex D model units outward (negative: inward); with\n"
    "                              --wrap the wrap's distance from the surface (default: 2% of the\n"
    "                              bounding box's diagonal)\n"
    "  --wrap                      one closed cage around every piece (see above)\n"
    "  -o, --output OUT            where to write (required), by extension:\n"
    "                                .obj  Wavefront OBJ: 'v x y z' and 'f a b c' lines (1-based), the\n"
    "                                      model's coordinates and winding\n"
    "                                .pmx  a PMX 2.0 model holding only the cage: one bone, one material\n"
    "  -h, --help                  this text\n"
    "\n"
    "Prints: the triangle count reached and how, whether the cage is a closed 2-manifold (border,\n"
    "non-manifold and mis-oriented edges otherwise), and the largest and mean exact distance from the\n"
    "detailed surface (the chosen materials' welded vertices) to the cage.\n"
    "Bad input gives one line 'plush: FILE: what went wrong' and exit status 1; OUT is then left as it was.\n";

typedef struct proxy_job {
    const char *model, *out;
    bool pmx, wrap;
    size_t triangles;
    float offset;
    cli_names materials;     /* --materials */
} proxy_job;

static int proxy_option(cli_args *args, const char *name, const char *inline_value, proxy_job *job)
{
    if (strcmp(name, "--wrap") == 0) {
        if (inline_value)
            return cli_usage_error(proxy_usage, "--wrap takes no value");
        job->wrap = true;
        return CLI_OK;
    }
    bool out = strcmp(name, "-o") == 0 || strcmp(name, "--output") == 0;
    if (!out && strcmp(name, "--triangles") != 0 && strcmp(name, "--offset") != 0 &&
        strcmp(name, "--materials") != 0)
        return cli_usage_error(proxy_usage, "unknown option '%s'", name);
    const char *v = cli_args_value(args, name, inline_value);
    if (!v)
        return CLI_USAGE;
    if (strcmp(name, "--materials") == 0)
        return cli_names_add(&job->materials, v);
    if (out) {
        if (job->out)
            return cli_usage_error(proxy_usage, "more than one output file");
        job->out = v;
        return CLI_OK;
    }
    char *end = NULL;
    errno = 0;
    if (strcmp(name, "--triangles") == 0) {
        unsigned long long n = cli_decimal_text(v, false) && v[0] != '-' && v[0] != '+' ? strtoull(v, &end, 10) : 0;
        if (errno || n == 0 || *end || n > (unsigned long long)UINT32_MAX / 3)
            return cli_usage_error(proxy_usage, "--triangles needs a whole number from 1 to %lu, not '%s'",
                                   (unsigned long)(UINT32_MAX / 3), v);
        job->triangles = (size_t)n;
        return CLI_OK;
    }
    double d = cli_decimal_text(v, true) ? strtod(v, &end) : NAN;
    if (errno || !isfinite(d) || *end || fabs(d) > 1e30)
        return cli_usage_error(proxy_usage, "--offset needs a finite number, not '%s'", v);
    job->offset = (float)d;
    return CLI_OK;
}

static int proxy_option_cb(cli_args *args, const char *name, const char *value, void *job)
{
    return proxy_option(args, name, value, job);
}

static int parse_proxy(int argc, char **argv, proxy_job *job, bool *help)
{
    int rc = cli_parse_model_command(argc, argv, proxy_usage, proxy_option_cb, job, &job->model, help);
    if (rc != CLI_OK || *help)
        return rc;
    if (job->triangles == 0)
        return cli_usage_error(proxy_usage, "no target triangle count (--triangles N)");
    if (!job->out)
        return cli_usage_error(proxy_usage, "no output file (-o PROXY.obj or -o PROXY.pmx)");
    if (job->wrap && job->offset < 0)
        return cli_usage_error(proxy_usage, "--wrap needs an offset of 0 or more, not %g", (double)job->offset);
    if (cli_ends_with(job->out, ".pmx"))
        job->pmx = true;
    else if (!cli_ends_with(job->out, ".obj"))
        return cli_usage_error(proxy_usage, "the output '%s' must end in .obj or .pmx", job->out);
    return CLI_OK;
}

/* ---- output ---------------------------------------------------------------------------------- */

static plush_status write_obj(const plush_cage_mesh *cage, plush_buf *out, plush_diag *diag)
{
    char comment[96];
    snprintf(comment, sizeof comment, "plush proxy cage: %zu vertices, %zu triangles", cage->vertex_count,
             cage->triangle_count);
    plush_obj_mesh mesh = {.vertex_count = cage->vertex_count,
                           .positions = (const float(*)[3])cage->positions,
                           .index_count = 3 * cage->triangle_count,
                           .indices = &cage->triangles[0][0],
                           .comment = comment};
    return plush_obj_write(&mesh, out, diag);
}

/* A PMX holding the cage alone: one bone every vertex hangs from, one material drawing every face. */
static plush_status write_pmx(const plush_cage_mesh *cage, plush_buf *out, plush_diag *diag)
{
    plush_pmx_model *m = plush_pmx_create();
    if (!m)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    plush_arena *a = plush_pmx_arena(m);
    float(*normals)[3] = plush_arena_array(a, cage->vertex_count ? cage->vertex_count : 1, sizeof *normals);
    m->vertices = plush_arena_array(a, cage->vertex_count ? cage->vertex_count : 1, sizeof *m->vertices);
    m->indices = plush_arena_array(a, 3 * cage->triangle_count + 1, sizeof *m->indices);
    m->materials = plush_arena_array(a, 1, sizeof *m->materials);
    m->bones = plush_arena_array(a, 1, sizeof *m->bones);
    plush_status st = PLUSH_E_NOMEM;
    if (normals && m->vertices && m->indices && m->materials && m->bones) {
        plush_cage_vertex_normals(cage, normals);
        m->name = (plush_str){.s = "plush cage", .len = 10};
        m->comment = (plush_str){.s = "made by plush proxy", .len = 19};
        m->vertex_count = cage->vertex_count;
        for (size_t v = 0; v < cage->vertex_count; v++)
            m->vertices[v] = (plush_pmx_vertex){.bones = {0, -1, -1, -1}, .weights = {1, 0, 0, 0}, .edge_scale = 1,
                                                .weight_type = PLUSH_PMX_BDEF1, .sdef = -1};
        for (size_t v = 0; v < cage->vertex_count; v++) {
            memcpy(m->vertices[v].position, cage->positions[v], sizeof cage->positions[v]);
            memcpy(m->vertices[v].normal, normals[v], sizeof normals[v]);
        }
        m->index_count = 3 * cage->triangle_count;
        memcpy(m->indices, cage->triangles, m->index_count * sizeof *m->indices);
        m->material_count = 1;
        m->materials[0] = (plush_pmx_material){.name = {.s = "cage", .len = 4}, .diffuse = {1, 1, 1, 1},
                                               .flags = PLUSH_PMX_MATERIAL_DOUBLE_SIDED, .texture = -1,
                                               .sphere_texture = -1, .toon = -1,
                                               .index_count = (int32_t)m->index_count};
        m->bone_count = 1;
        m->bones[0] = (plush_pmx_bone){.name = {.s = "cage", .len = 4}, .parent = -1,
                                       .flags = PLUSH_PMX_BONE_ROTATABLE | PLUSH_PMX_BONE_TRANSLATABLE |
                                                PLUSH_PMX_BONE_VISIBLE | PLUSH_PMX_BONE_ENABLED,
                                       .tail_bone = -1, .append_parent = -1, .external_key = -1, .ik_target = -1};
        st = plush_pmx_write(m, NULL, out, diag);
    } else {
        plush_diag_fail(diag, st, -1, NULL, -1, "out of memory");
    }
    plush_pmx_free(m);
    return st;
}

static const char *method_text(plush_cage_method m)
{
    switch (m) {
    case PLUSH_CAGE_COPY: return "copied: the materials have no more triangles than the target";
    case PLUSH_CAGE_LOCKED_BORDER: return "simplified with the border locked";
    case PLUSH_CAGE_BORDER: return "simplified, border vertices sliding along the border";
    default: return "sloppy simplifier (topology not kept)";
    }
}

static void report(const proxy_job *job, const plush_cage_mesh *skin, const plush_cage_result *res,
                   const plush_cage_topology *topo, float max, float mean)
{
    char note[200];
    char names[200] = "", quoted[190];
    if (job->materials.count) {
        /* the materials by the model's names, whatever the user typed (cli_check_materials) */
        cli_names_quoted(&job->materials, quoted, sizeof quoted);
        snprintf(names, sizeof names, " of %s", quoted);
    }
    info_line("source", "%zu triangles%s, %zu welded vertices", res->source_triangles, names, skin->vertex_count);
    /* within the tolerance: reached; within 20%: said how far (separate pieces keep eight triangles each,
     * and the slivers go after the simplifier); beyond: not reached, and why */
    bool near = res->triangles * 5 >= job->triangles * 4 && res->triangles * 5 <= job->triangles * 6;
    char off[48] = "NOT reached";
    if (res->reached)
        snprintf(off, sizeof off, "reached");
    else if (near)
        snprintf(off, sizeof off, "%+.0f%%, within 20%%",
                 100.0 * ((double)res->triangles - (double)job->triangles) / (double)job->triangles);
    info_line("triangles", "%zu (target %zu, %s%s)", res->triangles, job->triangles, off,
              plush_attach_target_note(res, job->triangles, "a larger target, or --wrap, fits them", note,
                                   sizeof note));
    if (res->wrapped)
        info_line("wrap", "%zu triangles on a grid of %g, %g out from the surface", res->wrap_triangles,
                  (double)res->wrap_cell, (double)res->wrap_offset);
    info_line("method", "%s", res->wrapped && res->method == PLUSH_CAGE_COPY
                                  ? "the wrap itself: it has no more triangles than the target"
                                  : method_text(res->method));
    info_line("vertices", "%zu", res->vertices);
    if (topo->closed_manifold)
        info_line("closed manifold", "yes");
    else
        info_line("closed manifold", "no (%zu border edges, %zu non-manifold edges, %zu mis-oriented edges, "
                                     "%zu non-manifold vertices)",
                  topo->border_edges, topo->nonmanifold_edges, topo->misoriented_edges, topo->nonmanifold_vertices);
    info_line("pieces", "%zu", topo->pieces);
    info_line("offset", "%g", res->wrapped ? (double)res->wrap_offset : (double)job->offset);
    info_line("distance", "max %.6g, mean %.6g (detailed vertices to the cage)", (double)max, (double)mean);
}

static int run_proxy(proxy_job *job)
{
    plush_diag model_diag, out_diag;
    cli_diag_init(&model_diag, job->model);
    cli_diag_init(&out_diag, job->out);
    plush_pmx_model *model = NULL;
    plush_arena arena = {0};
    plush_buf buf = {0};
    int rc = CLI_FAILED;
    if (!cli_regular_file(job->model, &model_diag) ||
        plush_pmx_read_file(job->model, NULL, &model, &model_diag) != PLUSH_OK) {
        cli_report(&model_diag);
        goto done;
    }
    if (!cli_check_materials(model, job->model, &job->materials))
        goto done;
    plush_cage_mesh skin, cage;
    plush_cage_result res;
    plush_cage_topology topo;
    float max = 0, mean = 0;
    plush_cage_options options = {.target_triangles = job->triangles, .offset = job->offset, .wrap = job->wrap};
    if (plush_scene_cage_weld(model, (const char *const *)job->materials.names, job->materials.count, &arena, &skin,
                        &model_diag) != PLUSH_OK ||
        plush_cage_simplify(&skin, &options, &arena, &cage, &res, &model_diag) != PLUSH_OK ||
        plush_cage_check(&cage, &topo, &model_diag) != PLUSH_OK ||
        plush_cage_distance(&cage, (const float(*)[3])skin.positions, skin.vertex_count, &max, &mean,
                            &model_diag) != PLUSH_OK) {
        cli_report(&model_diag);
        goto done;
    }
    plush_status st = job->pmx ? write_pmx(&cage, &buf, &out_diag) : write_obj(&cage, &buf, &out_diag);
    if (st == PLUSH_OK)
        st = plush_file_write_atomic(job->out, buf.data, buf.size, &out_diag);
    if (st != PLUSH_OK) {
        cli_report(&out_diag);
        goto done;
    }
    report(job, &skin, &res, &topo, max, mean);
    cli_report_warnings(&model_diag);
    rc = CLI_OK;
done:
    plush_buf_free(&buf);
    plush_arena_free(&arena);
    plush_pmx_free(model);
    return rc;
}

int cli_proxy(int argc, char **argv)
{
    proxy_job job = {.offset = 0};
    bool help = false;
    int rc = parse_proxy(argc, argv, &job, &help);
    if (rc == CLI_OK && help) {
        fputs(proxy_usage, stdout);
        fputs(proxy_help, stdout);
    } else if (rc == CLI_OK) {
        rc = run_proxy(&job);
    }
    cli_names_free(&job.materials);
    return rc;
}
