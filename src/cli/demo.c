/* plush demo [-o OUTDIR]: the main job on the embedded plush bear. The bear is generated in this process
 * (src/demo, plush/demo.h), written beside the results, then run like any model. */
#include "cli/cli.h"
#include "core/platform.h"
#include "plush/demo.h"

#include <errno.h>
#include <string.h>

static const char demo_usage[] = "usage: plush demo [-o OUTDIR]\n";

static const char demo_help[] =
    "\n"
    "Writes the embedded plush demo into OUTDIR (default ./plush-demo): a teddy bear of 60k vertices whose\n"
    "PMX 2.1 soft-body cage of 1,000 triangles hangs from a hook bone (plush_bear.pmx), a motion that\n"
    "swings, drops and settles the hook (plush_bear_shake.vmd) and an override that keeps the eyes and\n"
    "nose rigid (plush_bear.im2). Then runs the main job on them, as\n"
    "  plush run OUTDIR/plush_bear.pmx --motion OUTDIR/plush_bear_shake.vmd --im2 OUTDIR/plush_bear.im2\n"
    "            --export pmx+vmd,gltf,ply,preview --every 10 -o OUTDIR\n"
    "and says how to open the results.\n";

int cli_demo(int argc, char **argv)
{
    const char *dir = "plush-demo";
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            fputs(demo_usage, stdout);
            fputs(demo_help, stdout);
            return CLI_OK;
        }
        if ((strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) && i + 1 < argc)
            dir = argv[++i];
        else if (strncmp(argv[i], "--output=", 9) == 0)
            dir = argv[i] + 9;
        else
            return cli_usage_error(demo_usage, "unexpected argument '%s'", argv[i]);
    }
    if (plush__os_mkdir(dir) != 0 && errno != EEXIST) {
        cli_message("%s: cannot create the directory: %s", dir, strerror(errno));
        return CLI_FAILED;
    }
    plush_diag diag;
    cli_diag_init(&diag, dir);
    plush_demo_files files;
    if (plush_demo_write_files(dir, &files, &diag) != PLUSH_OK) {
        cli_report(&diag);
        return CLI_FAILED;
    }
    printf("plush demo: the plush bear (%zu vertices, a %zu-triangle soft-body cage pinned to a hook)\n",
           files.vertex_count, files.cage_triangles);
    cli_run_job job = {.model = files.pmx,
                       .motion = files.vmd,
                       .overrides = files.im2,
                       .out_dir = dir,
                       .mode = PLUSH_SCENE_PROXY,
                       .exports = "pmx+vmd,gltf,ply,preview",
                       .every = 10};
    int rc = cli_run_execute(&job);
    if (rc != CLI_OK)
        return rc;
    printf("\nopen the results:\n"
           "  MMD / nanoem / Blender mmd_tools: load %s/plush_bear_plush.pmx, then the motion\n"
           "      %s/plush_bear_plush.vmd -- the plush animation plays as plain bones, no soft bodies needed\n"
           "  game engines and DCC tools (Blender, Godot, Unity, three.js): %s/plush_bear_plush.glb (glTF 2.0)\n"
           "  any mesh viewer (MeshLab, Blender): %s/frames/frame_00000.ply ... every 10th frame\n",
           dir, dir, dir, dir);
    char preview[4096];
    snprintf(preview, sizeof preview, "%s/preview.mp4", dir);
    plush__os_info st;
    if (plush__os_stat(preview, true, &st))
        cli_line("  any video player or browser: %s", preview);
    cli_line("  the input model with its soft body: %s (PMX 2.1: PMX Editor; plush info shows it)", files.pmx);
    return CLI_OK;
}
