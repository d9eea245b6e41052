/* What every subcommand shares with the others and with main: a diag for a file, the regular-file check,
 * messages and reports on stderr (one line each, long ones folded), usage errors, and the argument walk
 * (options, their values, --help). */
#include "cli/cli.h"
#include "plush/sys/core.h"
#include "core/platform.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_diag_init(plush_diag *diag, const char *file)
{
    memset(diag, 0, sizeof *diag);
    diag->file = file;
    plush_diag_reset(diag);
}

bool cli_regular_file(const char *path, plush_diag *diag)
{
    plush__os_info st;
    /* A missing file is left to the reader, whose message says why it cannot be opened. */
    if (!plush__os_stat(path, true, &st) || st.kind == PLUSH__OS_FILE)
        return true;
    plush_diag_fail(diag, PLUSH_E_IO, -1, NULL, -1, "not a regular file");
    return false;
}

/* "plush: " + text with its control characters escaped + a newline, in one write: text from files
 * (names in warnings, file names) must neither split the line nor reach the terminal as a command. */
static void print_line(const char *text)
{
    plush_buf line = {0};
    plush_buf_append(&line, "plush: ", 7);
    text_escape(&line, text, strlen(text), false);
    plush_buf_append(&line, "\n", 1);
    if (line.failed)
        fputs("plush: out of memory\n", stderr);
    else
        fwrite(line.data, 1, line.size, stderr);
    plush_buf_free(&line);
}

/* fmt formatted (malloc'd; NULL when out of memory). */
static char *format_v(const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *text = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (text)
        vsnprintf(text, (size_t)n + 1, fmt, again);
    va_end(again);
    return text;
}

void cli_line(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text = format_v(fmt, ap);
    va_end(ap);
    if (!text) {
        fputs("plush: out of memory\n", stderr);
        return;
    }
    text_write_escaped(stdout, text, strlen(text), false);
    fputc('\n', stdout);
    free(text);
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
