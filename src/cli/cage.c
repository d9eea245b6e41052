/* --cage MATERIAL,...[:TRIANGLES], as plush run and plush compare take it: the syntax checked with the
 * options, then the names checked against the model and the cage made and attached in memory. */
#include "cli/cli.h"
#include "core/platform.h"
#include "plush/sys/attach.h"
#include "plush/sys/core.h"
#include "plush/sys/scene.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_cage_spec_check(const char *usage, const char *spec)
{
    const char *colon = strrchr(spec, ':');
    if (colon == spec || !*spec)
        return cli_usage_error(usage, "--cage needs at least one material: --cage NAME,...[:TRIANGLES]");
    uint64_t t = 0;
    if (colon && cli_parse_count(usage, "--cage", colon + 1, 1, UINT32_MAX / 3, &t) != CLI_OK)
        return CLI_USAGE;
    return CLI_OK;
}

/* The names before the colon into names, the count after it into *triangles (0 when there is none). */
static bool parse_spec(const char *usage, const char *spec, cli_names *names, size_t *triangles)
{
    const char *colon = strrchr(spec, ':');
    size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
    *triangles = 0;
    if (cli_cage_spec_check(usage, spec) != CLI_OK)
        return false;
    char *text = plush__os_strndup(spec, n);
    if (!text) {
        fprintf(stderr, "plush: out of memory\n");
        return false;
    }
    int rc = cli_names_add(names, text);
    free(text);
    if (rc != CLI_OK)
        return false;
    uint64_t t = 0;
    if (colon && cli_parse_count(usage, "--cage", colon + 1, 1, UINT32_MAX / 3, &t) != CLI_OK)
        return false;
    *triangles = (size_t)t;
    return true;
}

/* The materials the part as made (out->part) is sewn onto where the model's physics swings them
 * (plush_scene_bound_options.sewn, as a run binds the part), added to out->materials and out->joined; how many
 * were added (0 when out of memory for the look, which then changes nothing). */
static size_t join_sewn(cli_cage *out)
{
    /* the attached model: the source's materials, then the cage's */
    size_t nm = out->part.model->material_count, added = 0;
    size_t *sewn = calloc(nm ? nm : 1, sizeof *sewn);
    plush_arena arena = {0};
    plush_scene_proxy proxy;
    plush_diag quiet;
    cli_diag_init(&quiet, NULL);
    uint32_t *bound = NULL;
    size_t bound_count = 0;
    plush_scene_bound_options opt = {.materials = (const char *const *)out->materials.names,
                                     .material_count = out->materials.count,
                                     .sewn = sewn,
                                     .left_out = (const float(*)[3])out->part.details.positions,
                                     .left_out_count = out->part.details.count};
    if (sewn && plush_scene_proxy_build(out->part.model, &arena, &proxy, &quiet) == PLUSH_OK &&
        plush_scene_bound_vertices(out->part.model, &proxy, &opt, &arena, &bound, &bound_count, &quiet) == PLUSH_OK)
        for (size_t m = 0; m < nm && out->joined_count < CLI_CAGE_JOINED_MAX; m++) {
            if (!sewn[m])
                continue;
            /* named as the model names it where that name is its alone (and a list can hold it), else by its
             * number: the summary names it so, and no other material comes along */
            const plush_str *name = &out->part.model->materials[m].name;
            bool alone = name->len > 0 && !memchr(name->s, ',', name->len) && !memchr(name->s, ':', name->len);
            for (size_t k = 0; alone && k < nm; k++)
                alone = k == m || out->part.model->materials[k].name.len != name->len ||
                        memcmp(out->part.model->materials[k].name.s, name->s, name->len) != 0;
            char text[256];
            if (alone && name->len < sizeof text)
                snprintf(text, sizeof text, "%.*s", (int)name->len, name->s);
            else
                snprintf(text, sizeof text, "%zu", m);
            if (cli_names_add(&out->materials, text) != CLI_OK)
                continue;
            out->joined[out->joined_count] = m;
            out->joined_seam[out->joined_count++] = sewn[m];
            added++;
        }
    plush_arena_free(&arena);
    free(sewn);
    return added;
}

bool cli_cage_attach(const char *usage, const plush_pmx_model *model, const char *path, const char *spec,
                     float pin_band, cli_cage *out, plush_diag *diag)
{
    for (size_t i = 0; i < model->soft_body_count; i++)
        if (model->soft_bodies[i].shape == PLUSH_PMX_SOFT_TRIMESH) {
            cli_message("%s: --cage makes a cage, and the model has a TriMesh soft body already: run it without "
                        "--cage",
                        path);
            return false;
        }
    if (!parse_spec(usage, spec, &out->materials, &out->triangles) ||
        !cli_check_materials(model, path, &out->materials))
        return false;
    if (plush_attach_part_make(model, (const char *const *)out->materials.names, out->materials.count, out->triangles,
                               NULL, pin_band, &out->arena, &out->part, diag) != PLUSH_OK) {
        cli_report(diag);
        return false;
    }
    /* one garment, one cage: what the part is sewn onto where the author's physics swings it is caged with
     * it (a round for what that is sewn onto in turn, as far as the list holds) */
    for (int round = 0; round < 2 && join_sewn(out); round++) {
        plush_pmx_free(out->part.model);
        out->part.model = NULL;
        if (plush_attach_part_make(model, (const char *const *)out->materials.names, out->materials.count,
                                   out->triangles, NULL, pin_band, &out->arena, &out->part, diag) != PLUSH_OK) {
            cli_report(diag);
            return false;
        }
    }
    return true;
}

void cli_cage_report_joined(const plush_pmx_model *model, const cli_cage *cage)
{
    for (size_t i = 0; i < cage->joined_count; i++) {
        const plush_str *name = &model->materials[cage->joined[i]].name;
        cli_line("  joined          \"%.*s\": the part is sewn onto it at %zu vertices the model's own physics swings "
                 "there, so it is caged with it as one garment (caged apart, the seam would follow the cage and the "
                 "rest of it the author's physics, tearing it)",
                 (int)name->len, name->s, cage->joined_seam[i]);
    }
}

void cli_cage_free(cli_cage *cage)
{
    plush_pmx_free(cage->part.model);
    cage->part.model = NULL;
    plush_arena_free(&cage->arena);
    cli_names_free(&cage->materials);
}
