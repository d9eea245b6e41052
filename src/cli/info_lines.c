/* The lines plush info prints, shared by its PMX, VMD and VPD summaries: a labelled line, a quoted name,
 * the warnings (as text and as JSON). */
#include "cli/cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void info_line(const char *label, const char *fmt, ...)
{
    /* values quote names from files (a material, a bone): escaped as every summary line is */
    char value[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(value, sizeof value, fmt, ap);
    va_end(ap);
    cli_line("  %-*s %s", INFO_LABEL_WIDTH, label, value);
}

void info_name_line(const char *label, const plush_str *name)
{
    printf("  %-*s ", INFO_LABEL_WIDTH, label);
    json_write_escaped(stdout, name->s ? name->s : "", name->s ? name->len : 0);
    fputc('\n', stdout);
}

static uint32_t kept_warnings(const plush_diag *diag)
{
    return diag->warning_count < PLUSH_DIAG_KEPT_WARNINGS ? diag->warning_count : PLUSH_DIAG_KEPT_WARNINGS;
}

void info_warnings_text(const plush_diag *diag)
{
    if (diag->warning_count == 0) {
        info_line("warnings", "none");
        return;
    }
    info_line("warnings", "%u", (unsigned)diag->warning_count);
    uint32_t kept = kept_warnings(diag);
    for (uint32_t i = 0; i < kept; i++) {
        /* Warnings quote file text; keep each on its own line whatever it holds. */
        fputs("    ", stdout);
        text_write_escaped(stdout, diag->warnings[i], strlen(diag->warnings[i]), false);
        fputc('\n', stdout);
    }
    if (diag->warning_count > kept)
        printf("    ... and %u more\n", (unsigned)(diag->warning_count - kept));
}

void info_warnings_json(json_writer *w, const plush_diag *diag)
{
    json_uint(w, "warning_count", diag->warning_count);
    json_array_begin(w, "warnings");
    uint32_t kept = kept_warnings(diag);
    for (uint32_t i = 0; i < kept; i++)
        json_string(w, NULL, diag->warnings[i]);
    json_array_end(w);
}
