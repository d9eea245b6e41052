/* --cage MATERIAL,...[:TRIANGLES], as plush run and plush compare take it: the syntax checked with the
 * options, then the names checked against the model and the cage made and attached in memory. */
#include "cli/cli.h"
#include "core/platform.h"
#include "plush/sys/attach.h"
#include "plush/sys/core.h"

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
    return true;
}

void cli_cage_free(cli_cage *cage)
{
    plush_pmx_free(cage->part.model);
    cage->part.model = NULL;
    plush_arena_free(&cage->arena);
    cli_names_free(&cage->materials);
}
