/* Argument handling the subcommands share: the one-model argument loop, comma-separated name lists,
 * numbers, file-name extensions and output directories. */
#include "cli/cli.h"
#include "core/platform.h"
#include "plush/sys/core.h"
#include "plush/sys/pmx.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int cli_parse_model_command(int argc, char **argv, const char *usage, cli_option_fn option, void *job,
                            const char **model, bool *help)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (cli_is_help(argv[i])) {
            *help = true;
            return CLI_OK;
        }
    cli_args args = {.argc = argc, .argv = argv, .next = 1, .usage = usage};
    const char *name, *value;
    cli_arg_kind kind;
    while ((kind = cli_args_next(&args, &name, &value)) != CLI_ARG_END) {
        int rc;
        if (kind == CLI_ARG_OPERAND) {
            if (*model)
                return cli_usage_error(usage, "more than one model ('%s' and '%s')", *model, value);
            *model = value;
        } else if ((rc = option(&args, name, value, job)) != CLI_OK) {
            return rc;
        }
    }
    return *model ? CLI_OK : cli_usage_error(usage, "no model given");
}

/* A copy of the n bytes of s that list keeps (freed with it); NULL, after a message, when out of memory. */
static char *keep_copy(cli_names *list, const char *s, size_t n)
{
    char *copy = plush__os_strndup(s, n);
    char **texts = realloc(list->texts, (list->text_count + 1) * sizeof *texts);
    if (texts)
        list->texts = texts;
    if (!copy || !texts) {
        free(copy);
        fprintf(stderr, "plush: out of memory\n");
        return NULL;
    }
    list->texts[list->text_count++] = copy;
    return copy;
}

int cli_names_add(cli_names *list, const char *text)
{
    char *copy = keep_copy(list, text, strlen(text));
    if (!copy)
        return CLI_FAILED;
    for (char *item = copy;;) {
        char **names = realloc(list->names, (list->count + 1) * sizeof *names);
        if (!names) {
            fprintf(stderr, "plush: out of memory\n");
            return CLI_FAILED;
        }
        list->names = names;
        list->names[list->count++] = item;
        char *comma = strchr(item, ',');
        if (!comma)
            return CLI_OK;
        *comma = '\0';
        item = comma + 1;
    }
}

void cli_names_quoted(const cli_names *list, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < list->count; i++) {
        size_t n = strlen(list->names[i]), sep = i ? 2 : 0;
        /* whole names only, with room left for ", ..." */
        if (used + sep + n + 2 + 5 >= size) {
            if (used + sep + 3 < size)
                snprintf(buf + used, size - used, "%s...", sep ? ", " : "");
            return;
        }
        used += (size_t)snprintf(buf + used, size - used, "%s\"%s\"", sep ? ", " : "", list->names[i]);
    }
}

/* path as a shell reads it back: as it is when it holds nothing a shell treats specially, else in single
 * quotes (a quote inside written as '\''). */
static void shell_word(const char *path, char *buf, size_t size)
{
    bool plain = *path != '\0';
    for (const unsigned char *c = (const unsigned char *)path; *c; c++)
        plain &= *c >= 0x80 || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                 strchr("._-/+,:@%", *c) != NULL;
    if (plain) {
        snprintf(buf, size, "%s", path);
        return;
    }
    size_t k = 0;
    if (k + 1 < size)
        buf[k++] = '\'';
    for (const char *c = path; *c && k + 5 < size; c++) {
        if (*c == '\'') {
            memcpy(buf + k, "'\\''", 4);
            k += 4;
        } else {
            buf[k++] = *c;
        }
    }
    if (k + 1 < size)
        buf[k++] = '\'';
    buf[k < size ? k : size - 1] = '\0';
}

bool cli_check_materials(const plush_pmx_model *model, const char *path, cli_names *names)
{
    for (size_t i = 0; i < names->count; i++) {
        plush_diag d;
        cli_diag_init(&d, path);
        size_t m;
        if (plush_pmx_material_lookup(model, names->names[i], &m, &d) != PLUSH_OK) {
            char line[1024], word[1024];
            plush_diag_format(&d, line, sizeof line);
            shell_word(path, word, sizeof word);
            cli_message("%s; plush info %s lists every material and its main bones", line, word);
            return false;
        }
        /* The library's callers take English names and numbers as well (plush_pmx_material_choose, the one
         * helper they share), so the rewrite is for the user: the summary and any later message name the
         * material as the model does, and one who typed "8" reads "スカート" there. The copy is the list's
         * own, so it does not hang on the model's lifetime (run replaces its model by the attached one). */
        if (plush_pmx_material_find(model, names->names[i]) >= 0)
            continue;
        const plush_str *name = &model->materials[m].name;
        char *copy = keep_copy(names, name->s ? name->s : "", name->len);
        if (!copy)
            return false;
        names->names[i] = copy;
    }
    return true;
}

void cli_names_free(cli_names *list)
{
    for (size_t i = 0; i < list->text_count; i++)
        free(list->texts[i]);
    free(list->texts);
    free(list->names);
    *list = (cli_names){0};
}

bool cli_decimal_text(const char *s, bool fraction)
{
    const char *p = s + (*s == '-' || *s == '+');
    size_t digits = 0;
    for (; *p >= '0' && *p <= '9'; p++)
        digits++;
    if (fraction && *p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++)
            digits++;
    if (!digits)
        return false;
    if (fraction && (*p == 'e' || *p == 'E')) {
        p += 1 + (p[1] == '-' || p[1] == '+');
        if (*p < '0' || *p > '9')
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return *p == '\0';
}

int cli_parse_number(const char *usage, const char *name, const char *text, double lo, double hi, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = cli_decimal_text(text, true) ? strtod(text, &end) : NAN;
    if (errno || !end || *end || !isfinite(v) || v < lo || v > hi)
        return cli_usage_error(usage, "%s wants a number from %g to %g, not '%s'", name, lo, hi, text);
    *out = v;
    return CLI_OK;
}

int cli_parse_count(const char *usage, const char *name, const char *text, uint64_t lo, uint64_t hi, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = text[0] != '-' && text[0] != '+' && cli_decimal_text(text, false)
                               ? strtoull(text, &end, 10)
                               : 0;
    if (errno || !end || *end || v < lo || v > hi)
        return cli_usage_error(usage, "%s wants a whole number from %llu to %llu, not '%s'", name,
                               (unsigned long long)lo, (unsigned long long)hi, text);
    *out = v;
    return CLI_OK;
}

bool cli_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && strcasecmp(s + n - k, suffix) == 0;
}

bool cli_make_dir(const char *path, plush_diag *diag)
{
    return plush_file_make_dir(path, diag) == PLUSH_OK;
}

void cli_progress_bar(uint64_t done, uint64_t total, const char *unit)
{
    enum { WIDTH = 40 };
    int fill = (int)(done * WIDTH / (total ? total : 1));
    fprintf(stderr, "\r  [%.*s%*s] %llu/%llu %s", fill, "########################################", WIDTH - fill, "",
            (unsigned long long)done, (unsigned long long)total, unit);
    if (done == total)
        fputc('\n', stderr);
    fflush(stderr);
}

bool cli_outdir_open(cli_outdir *o, const char *dir)
{
    memset(o, 0, sizeof *o);
    o->dir = dir;
    plush_diag d;
    cli_diag_init(&d, dir);
    /* the lock makes OUTDIR when missing, and removes it again when the run leaves it empty */
    if (plush_file_lock_dir(dir, &o->lock, &d) != PLUSH_OK ||
        plush_file_stage_begin(dir, &o->stage, &d) != PLUSH_OK) {
        cli_report(&d);
        cli_outdir_close(o);
        return false;
    }
    cli_report_warnings(&d); /* a stale lock taken over */
    return true;
}

const char *cli_outdir_stage(const cli_outdir *o) { return plush_file_stage_path(o->stage); }

bool cli_outdir_commit(cli_outdir *o)
{
    plush_diag d;
    cli_diag_init(&d, o->dir);
    if (plush_file_stage_commit(o->stage, &d) != PLUSH_OK) {
        cli_report(&d);
        return false;
    }
    cli_report_warnings(&d); /* what .plush-set lists that is not plush's own, left alone */
    return true;
}

bool cli_outdir_protect(cli_outdir *o, const char *path)
{
    plush_diag d;
    cli_diag_init(&d, path);
    if (plush_file_stage_protect(o->stage, path, &d) != PLUSH_OK) {
        cli_report(&d);
        return false;
    }
    return true;
}

bool cli_outdir_check(const cli_outdir *o, const char *path)
{
    const char *stage = plush_file_stage_path(o->stage);
    size_t n = strlen(stage);
    if (strncmp(path, stage, n) != 0 || path[n] != '/')
        return true; /* not in OUTDIR: written where it is asked for */
    const char *name = path + n + 1, *slash = strchr(name, '/');
    char *top = plush__os_strndup(name, slash ? (size_t)(slash - name) : strlen(name));
    plush_diag d;
    cli_diag_init(&d, NULL);
    bool ok = top && plush_file_stage_check(o->stage, top, &d) == PLUSH_OK;
    if (!ok)
        cli_report(&d);
    free(top);
    return ok;
}

void cli_outdir_close(cli_outdir *o)
{
    plush_file_stage_destroy(o->stage);
    o->stage = NULL;
    plush_file_unlock(o->lock);
    o->lock = NULL;
}

void cli_outdir_shown_text(const cli_outdir *o, const char *in, char *out, size_t size)
{
    const char *stage = o->stage ? plush_file_stage_path(o->stage) : "";
    size_t k = 0, n = strlen(stage), d = strlen(o->dir);
    while (*in && k + 1 < size) {
        if (n && strncmp(in, stage, n) == 0 && k + d + 1 < size) {
            memcpy(out + k, o->dir, d);
            k += d, in += n;
        } else {
            out[k++] = *in++;
        }
    }
    out[k] = '\0';
}

void cli_outdir_shown_diag(const cli_outdir *o, plush_diag *diag)
{
    char text[PLUSH_DIAG_MESSAGE];
    cli_outdir_shown_text(o, diag->message, text, sizeof text);
    memcpy(diag->message, text, sizeof text);
    for (uint32_t i = 0; i < diag->warning_count && i < PLUSH_DIAG_KEPT_WARNINGS; i++) {
        cli_outdir_shown_text(o, diag->warnings[i], text, sizeof text);
        memcpy(diag->warnings[i], text, sizeof text);
    }
}

const char *cli_outdir_shown(const cli_outdir *o, const char *path, char *buf, size_t size)
{
    const char *stage = o->stage ? plush_file_stage_path(o->stage) : NULL;
    size_t n = stage ? strlen(stage) : 0;
    if (!path || !n || strncmp(path, stage, n) != 0 || (path[n] != '/' && path[n] != '\0'))
        return path;
    snprintf(buf, size, "%s%s", o->dir, path + n);
    return buf;
}
