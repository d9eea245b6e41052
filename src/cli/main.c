/* plush: the command line. Dispatches to one file per subcommand and holds what they share. */
#include "cli/cli.h"
#include "plush/sys/core.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

void cli_diag_init(plush_diag *diag, const char *file)
{
    memset(diag, 0, sizeof *diag);
    diag->file = file;
    plush_diag_reset(diag);
}

bool cli_regular_file(const char *path, plush_diag *diag)
{
    struct stat st;
    /* A missing file is left to the reader, whose message says why it cannot be opened. */
    if (stat(path, &st) != 0 || S_ISREG(st.st_mode))
        return true;
    plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "not a regular file");
    return false;
}

/* "plush: " + text with its control characters escaped + a newline, in one write: text from files
 * (names in warnings, file names) must neither split the line nor reach the terminal as a command. */
static void print_line(const char *text)
{
    char *line = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&line, &size);
    if (mem) {
        fputs("plush: ", mem);
        text_write_escaped(mem, text, strlen(text), false);
        fputc('\n', mem);
    }
    if (!mem || fclose(mem) != 0 || !line) {
        free(line);
        fputs("plush: out of memory\n", stderr);
        return;
    }
    fwrite(line, 1, size, stderr);
    free(line);
}

void cli_message(const char *fmt, ...)
{
    char text[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    print_line(text);
}

void cli_report(const plush_diag *diag)
{
    char line[1024];
    plush_diag shown = *diag;
    /* A failure the library did not explain still gets a line that says it failed. */
    if (shown.status == PLUSH_OK)
        plush_diag_fail(&shown, PLUSH_E_FORMAT, -1, NULL, -1, "failed");
    plush_diag_format(&shown, line, sizeof line);
    /* The contract is exactly one line: a newline inside a file name or message is escaped. */
    print_line(line);
}

void cli_report_warnings(const plush_diag *diag)
{
    uint32_t kept = diag->warning_count < PLUSH_DIAG_KEPT_WARNINGS ? diag->warning_count
                                                                   : PLUSH_DIAG_KEPT_WARNINGS;
    const char *file = diag->file ? diag->file : "-";
    for (uint32_t i = 0; i < kept; i++)
        cli_message("warning: %s: %s", file, diag->warnings[i]);
    if (diag->warning_count > kept)
        cli_message("warning: %s: %u more warnings not shown", file, (unsigned)(diag->warning_count - kept));
}

int cli_usage_error(const char *usage, const char *fmt, ...)
{
    char text[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    print_line(text);
    fputs(usage, stderr);
    return CLI_USAGE;
}

bool cli_is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

cli_arg_kind cli_args_next(cli_args *args, const char **name, const char **value)
{
    *name = NULL;
    *value = NULL;
    while (args->next < args->argc) {
        const char *arg = args->argv[args->next++];
        if (args->operands_only || arg[0] != '-' || arg[1] == '\0') {
            *value = arg;
            return CLI_ARG_OPERAND;
        }
        if (strcmp(arg, "--") == 0) {
            args->operands_only = true;
            continue;
        }
        *name = arg;
        const char *eq = arg[1] == '-' ? strchr(arg, '=') : NULL;
        if (eq) {
            /* Cut "=value" off in place: C lets a program modify its argv strings. */
            args->argv[args->next - 1][eq - arg] = '\0';
            *value = eq + 1;
        }
        return CLI_ARG_OPTION;
    }
    return CLI_ARG_END;
}

const char *cli_args_value(cli_args *args, const char *name, const char *inline_value)
{
    if (inline_value)
        return inline_value;
    if (args->next >= args->argc) {
        cli_usage_error(args->usage, "option '%s' needs a value", name);
        return NULL;
    }
    return args->argv[args->next++];
}

int main(int argc, char **argv)
{
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
