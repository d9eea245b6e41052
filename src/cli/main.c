/* plush: the command line. Dispatches to one file per subcommand (what they share: messages.c, args.c). */
#include "cli/cli.h"
#include "core/platform.h"
#include "plush/sys/core.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char main_usage[] =
    "usage: plush <command> [options] [arguments]\n"
    "       plush --help | --version\n";

static const char main_help[] =
    "\n"
    "plush makes MikuMikuDance (PMX) models move like plush toys: a soft part (a skirt, hair, a cape,\n"
    "a whole toy) is simulated as a coarse cage and the detailed mesh follows it, inside the full MMD\n"
    "pipeline (VMD motion, morphs, bones, rigid bodies), baked to files any MMD player or engine plays.\n"
    "\n"
    "  plush demo                                        the plush bear, to see what it does\n"
    "  plush info MODEL.pmx                              find the soft part's material name\n"
    "  plush run MODEL.pmx --cage skirt --motion dance.vmd -o out   make it soft and run the dance\n"
    "\n"
    "commands:\n"
    "  run MODEL.pmx [--motion M.vmd] [--cage MATERIAL] -o OUTDIR\n"
    "                                the main job: motion + physics + soft-body proxy skinning, baked to\n"
    "                                a PMX + VMD any MMD player can play (glTF, mesh sequences, a preview)\n"
    "  demo [-o OUTDIR]              the main job on the embedded plush bear (default ./plush-demo)\n"
    "  info FILE... [--bones] [--json]\n"
    "                                summary and validation of PMX, VMD and VPD files; a model's\n"
    "                                materials with their main bones (--bones: every bone)\n"
    "  proxy MODEL.pmx --triangles N -o OUT.obj|OUT.pmx   generate a soft-body cage for some materials\n"
    "  attach MODEL.pmx --proxy CAGE -o OUT.pmx          add a cage to the model as a PMX 2.1 soft body\n"
    "  compare MODEL.pmx [--motion M.vmd] -o REPORTDIR\n"
    "                                bones, proxy and direct on the same motion: error, speed, plots\n"
    "  pose MODEL.pmx [--motion M.vmd] --frame F [--bones OUT.csv] [--mesh OUT.obj]\n"
    "                                the model posed at one frame: bone table and skinned mesh\n"
    "  bind MODEL.pmx -o OUT.csv|OUT.im2\n"
    "                                bind the detailed vertices to the soft-body proxy's triangles\n"
    "  convert IN.pmx -o OUT.pmx     rewrite a PMX model (version, text encoding, index sizes)\n"
    "\n"
    "'plush <command> --help' describes a command.\n"
    "\n"
    "exit status: 0 success, 1 bad input (one 'plush: FILE: ...' line on stderr), 2 usage error\n";

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
} command;

static const command commands[] = {
    {"info", cli_info},
    {"convert", cli_convert},
    {"bind", cli_bind},
    {"proxy", cli_proxy},
    {"attach", cli_attach},
    {"pose", cli_pose},
    {"run", cli_run},
    {"demo", cli_demo},
    {"compare", cli_compare},
};

int main(int argc, char **argv)
{
    /* UTF-8 arguments everywhere (Windows hands them over as UTF-16), and a console that shows UTF-8. */
    if (!plush__os_args_utf8(argc, argv, &argc, &argv)) {
        fputs("plush: cannot read the command line\n", stderr);
        return CLI_FAILED;
    }
    /* Temporary files, staging folders and locks go away when the run is interrupted or ends. */
    plush_file_cleanup_on_signals();
    atexit(plush_file_cleanup_now);
    if (argc < 2)
        return cli_usage_error(main_usage, "no command given");
    const char *cmd = argv[1];
    if (cli_is_help(cmd) || strcmp(cmd, "help") == 0) {
        if (strcmp(cmd, "help") == 0 && argc > 2) {
            /* "plush help info" is "plush info --help". */
            for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
                if (strcmp(argv[2], commands[i].name) == 0) {
                    static char help_flag[] = "--help";
                    char *help_argv[] = {argv[2], help_flag, NULL};
                    return commands[i].run(2, help_argv);
                }
            return cli_usage_error(main_usage, "unknown command '%s'", argv[2]);
        }
        fputs(main_usage, stdout);
        fputs(main_help, stdout);
        return CLI_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("plush %s\n", PLUSH_CLI_VERSION);
        return CLI_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(cmd, commands[i].name) == 0) {
            int rc = commands[i].run(argc - 1, argv + 1);
            /* A full disk or closed pipe on stdout is a failure, not a silent success. */
            if (fflush(stdout) != 0 || ferror(stdout)) {
                fprintf(stderr, "plush: cannot write to standard output\n");
                return CLI_FAILED;
            }
            return rc;
        }
    }
    if (cmd[0] == '-')
        return cli_usage_error(main_usage, "unknown option '%s'", cmd);
    return cli_usage_error(main_usage, "unknown command '%s'", cmd);
}
