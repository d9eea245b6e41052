/* plush convert IN.pmx -o OUT.pmx [...]: rewrite a PMX model with another version, encoding or
 * index sizes. With no options the output is the input, byte for byte. */
#include "cli/cli.h"
#include "plush/sys/core.h"

#include <string.h>

static const char convert_usage[] =
    "usage: plush convert IN.pmx -o OUT.pmx [--pmx-version 2.0|2.1] [--encoding utf8|utf16]\n"
    "                     [--index-sizes keep|minimal] [--lossy]\n";

static const char convert_help[] =
    "\n"
    "Reads and checks IN.pmx, then writes it to OUT.pmx (through a temporary file and a rename, so\n"
    "OUT.pmx is either complete or untouched; it is not created when IN.pmx cannot be read).\n"
    "Without options OUT.pmx is identical to IN.pmx.\n"
    "\n"
    "options:\n"
    "  -o, --output OUT.pmx        where to write (required; may be IN.pmx itself)\n"
    "  --pmx-version 2.0|2.1       the PMX version to write (default: the input's)\n"
    "  --encoding utf8|utf16       the text encoding to write (default: the input's)\n"
    "  --index-sizes keep|minimal  keep the input's index sizes (grown if too small), or use the\n"
    "                              smallest that fit (default: keep)\n"
    "  --lossy                     with --pmx-version 2.0: drop what PMX 2.0 cannot hold (soft\n"
    "                              bodies, 2.1 morph and joint kinds, ...) with a warning each,\n"
    "                              instead of failing\n"
    "  -h, --help                  this text\n"
    "\n"
    "Warnings go to stderr as 'plush: warning: FILE: ...'. Bad input gives one line\n"
    "'plush: FILE: what went wrong (at byte N)' and exit status 1.\n";

typedef struct convert_job {
    const char *in;
    const char *out;
    plush_pmx_write_options options;
} convert_job;

/* Reads one option of convert; returns CLI_OK, or CLI_USAGE after the usage message. */
static int convert_option(cli_args *args, const char *name, const char *inline_value, convert_job *job)
{
    if (strcmp(name, "-o") == 0 || strcmp(name, "--output") == 0) {
        const char *v = cli_args_value(args, name, inline_value);
        if (!v)
            return CLI_USAGE;
        if (job->out)
            return cli_usage_error(convert_usage, "more than one output file");
        job->out = v;
        return CLI_OK;
    }
    if (strcmp(name, "--lossy") == 0) {
        if (inline_value)
            return cli_usage_error(convert_usage, "option '--lossy' takes no value");
        job->options.lossy = true;
        return CLI_OK;
    }
    const char *v;
    if (strcmp(name, "--pmx-version") == 0) {
        if (!(v = cli_args_value(args, name, inline_value)))
            return CLI_USAGE;
        if (strcmp(v, "2.0") == 0 || strcmp(v, "2") == 0)
            job->options.version = PLUSH_PMX_WRITE_20;
        else if (strcmp(v, "2.1") == 0)
            job->options.version = PLUSH_PMX_WRITE_21;
        else
            return cli_usage_error(convert_usage, "--pmx-version must be 2.0 or 2.1, not '%s'", v);
        return CLI_OK;
    }
    if (strcmp(name, "--encoding") == 0) {
        if (!(v = cli_args_value(args, name, inline_value)))
            return CLI_USAGE;
        if (strcmp(v, "utf8") == 0 || strcmp(v, "utf-8") == 0)
            job->options.encoding = PLUSH_PMX_WRITE_UTF8;
        else if (strcmp(v, "utf16") == 0 || strcmp(v, "utf-16") == 0 || strcmp(v, "utf16le") == 0 ||
                 strcmp(v, "utf-16le") == 0)
            job->options.encoding = PLUSH_PMX_WRITE_UTF16;
        else
            return cli_usage_error(convert_usage, "--encoding must be utf8 or utf16, not '%s'", v);
        return CLI_OK;
    }
    if (strcmp(name, "--index-sizes") == 0) {
        if (!(v = cli_args_value(args, name, inline_value)))
            return CLI_USAGE;
        if (strcmp(v, "keep") == 0)
            job->options.minimal_indices = false;
        else if (strcmp(v, "minimal") == 0)
            job->options.minimal_indices = true;
        else
            return cli_usage_error(convert_usage, "--index-sizes must be keep or minimal, not '%s'", v);
        return CLI_OK;
    }
    return cli_usage_error(convert_usage, "unknown option '%s'", name);
}

static int parse_convert(int argc, char **argv, convert_job *job, bool *help)
{
    cli_args args = {.argc = argc, .argv = argv, .next = 1, .usage = convert_usage};
    const char *name, *value;
    cli_arg_kind kind;
    /* --help anywhere wins over any mistake elsewhere on the line. */
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (cli_is_help(argv[i])) {
            *help = true;
            return CLI_OK;
        }
    while ((kind = cli_args_next(&args, &name, &value)) != CLI_ARG_END) {
        if (kind == CLI_ARG_OPERAND) {
            if (job->in)
                return cli_usage_error(convert_usage, "more than one input file ('%s' and '%s')", job->in, value);
            job->in = value;
            continue;
        }
        int rc = convert_option(&args, name, value, job);
        if (rc != CLI_OK)
            return rc;
    }
    if (!job->in)
        return cli_usage_error(convert_usage, "no input file");
    if (!job->out)
        return cli_usage_error(convert_usage, "no output file (-o OUT.pmx)");
    return CLI_OK;
}

int cli_convert(int argc, char **argv)
{
    convert_job job = {0};
    bool help = false;
    int rc = parse_convert(argc, argv, &job, &help);
    if (rc != CLI_OK)
        return rc;
    if (help) {
        fputs(convert_usage, stdout);
        fputs(convert_help, stdout);
        return CLI_OK;
    }

    plush_diag read_diag;
    cli_diag_init(&read_diag, job.in);
    plush_pmx_model *model = NULL;
    /* Nothing touches OUT before the input has been read and checked in full. */
    if (!cli_regular_file(job.in, &read_diag) ||
        plush_pmx_read_file(job.in, NULL, &model, &read_diag) != PLUSH_OK) {
        cli_report(&read_diag);
        return CLI_FAILED;
    }
    plush_diag write_diag;
    cli_diag_init(&write_diag, job.out);
    plush_status st = plush_pmx_write_file(model, &job.options, job.out, &write_diag);
    plush_pmx_free(model);
    if (st != PLUSH_OK) {
        /* Exactly one line on failure: the read warnings are not the story any more. */
        cli_report(&write_diag);
        return CLI_FAILED;
    }
    cli_report_warnings(&read_diag);
    cli_report_warnings(&write_diag);
    return CLI_OK;
}
