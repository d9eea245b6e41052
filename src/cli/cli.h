/* Internal to the plush command line: subcommands and the helpers they share.
 *
 * Exit codes: 0 success, 1 bad input (one "plush: FILE: ..." line on stderr), 2 usage error.
 * Only this folder prints or exits; the library reports through plush_diag.
 */
#ifndef PLUSH_CLI_H
#define PLUSH_CLI_H

#include "cli/json.h"
#include "plush/plush.h"
#include "plush/sys/attach.h"
#include "plush/sys/core.h"
#include "plush/sys/scene.h"

#include <stdbool.h>
#include <stdio.h>

#if defined(__GNUC__)
#define CLI_PRINTF(fmt_arg, first_arg) __attribute__((format(printf, fmt_arg, first_arg)))
#else
#define CLI_PRINTF(fmt_arg, first_arg)
#endif

#define PLUSH_CLI_VERSION "0.1.0"

enum { CLI_OK = 0, CLI_FAILED = 1, CLI_USAGE = 2 };

/* A subcommand: argv[0] is the subcommand's name, the rest its arguments. Returns the exit code. */
int cli_info(int argc, char **argv);
int cli_convert(int argc, char **argv);
int cli_bind(int argc, char **argv);
int cli_proxy(int argc, char **argv);
int cli_attach(int argc, char **argv);
int cli_pose(int argc, char **argv);
int cli_compare(int argc, char **argv);

/* Prints "plush: " + the diagnostic as one line on stderr. */
void cli_report(const plush_diag *diag);
/* Prints each kept warning as "plush: warning: FILE: ..." on stderr, then how many were not kept. */
void cli_report_warnings(const plush_diag *diag);
/* Prints "plush: " + the formatted text as one line on stderr, its control characters escaped
 * (text_write_escaped): every message that may hold text from a file goes through here. */
void cli_message(const char *fmt, ...) CLI_PRINTF(1, 2);
/* Prints the formatted text as one line on stdout, its control characters escaped as cli_message's: every
 * summary line that may hold a name or path goes through here (or info_line, which does the same). */
void cli_line(const char *fmt, ...) CLI_PRINTF(1, 2);
/* A progress bar on stderr, redrawn in place ("  [####    ] 12/40 frames"); the line ends at done == total.
 * Callers draw it only when stderr is a terminal. */
void cli_progress_bar(uint64_t done, uint64_t total, const char *unit);
/* Prints "plush: <message>" and the usage text on stderr; returns CLI_USAGE. */
int cli_usage_error(const char *usage, const char *fmt, ...) CLI_PRINTF(2, 3);

/* A diag ready for a reader: no error yet, offset and index unknown, warnings cleared. */
void cli_diag_init(plush_diag *diag, const char *file);

/* False (with diag set) when path names something other than a regular file: opening a FIFO for
 * reading would wait for a writer forever. */
bool cli_regular_file(const char *path, plush_diag *diag);

/* True when arg is "--help" or "-h". */
bool cli_is_help(const char *arg);

/* Option parsing over argv, shared by the subcommands. Options and operands may come in any order;
 * "--" ends the options. */
typedef struct cli_args {
    int argc;
    char **argv;
    int next;                 /* index of the next argument to look at */
    bool operands_only;       /* after "--" */
    const char *usage;        /* printed with usage errors */
} cli_args;

typedef enum cli_arg_kind {
    CLI_ARG_END,              /* no more arguments */
    CLI_ARG_OPERAND,          /* *value is the operand */
    CLI_ARG_OPTION,           /* *name is the option, *value its "=value" part or NULL */
} cli_arg_kind;

cli_arg_kind cli_args_next(cli_args *args, const char **name, const char **value);
/* The value of an option that needs one: its "=value" part, or the next argument. NULL (after a
 * usage message on stderr) when it is missing. */
const char *cli_args_value(cli_args *args, const char *name, const char *inline_value);

/* ---- args.c: what the subcommands' argument handling shares ------------------------------------ */

/* Handles one option (argv is the command's); returns CLI_OK or the exit code. */
typedef int (*cli_option_fn)(cli_args *args, const char *name, const char *value, void *job);
/* The loop of every command taking one model: --help anywhere before "--" sets *help (nothing else is
 * looked at); the one operand is *model; every option goes to option. A second model or none is a usage
 * error. */
int cli_parse_model_command(int argc, char **argv, const char *usage, cli_option_fn option, void *job,
                            const char **model, bool *help);

/* Names from repeatable "a,b,c" options (--materials): names point into copies of the texts. */
typedef struct cli_names {
    char **names;
    size_t count;
    char **texts;
    size_t text_count;
} cli_names;
int cli_names_add(cli_names *list, const char *text);
void cli_names_free(cli_names *list);
/* "a", "b" (each quoted), whole names only, cut with "..." to fit size. */
void cli_names_quoted(const cli_names *list, char *buf, size_t size);
/* True when every text in names means materials of model (a name, English name or number:
 * plush_pmx_material_lookup), each English name or number then rewritten into the material's name;
 * otherwise one line on stderr (the nearest materials, or the materials an ambiguous text could mean) with
 * the `plush info` command that lists them all, and false. Every command checks its names so, before any
 * work is done. */
bool cli_check_materials(const plush_pmx_model *model, const char *path, cli_names *names);

/* True when s is a plain decimal number: an optional sign, digits, and (fraction) a decimal point and an
 * exponent; no spaces, no hexadecimal, no inf or nan. */
bool cli_decimal_text(const char *s, bool fraction);
/* A finite decimal number within lo..hi, else a usage error naming the option. */
int cli_parse_number(const char *usage, const char *name, const char *text, double lo, double hi, double *out);
/* A whole decimal number (digits only: no sign, fraction, exponent or hexadecimal) within lo..hi, else a usage
 * error naming the option. */
int cli_parse_count(const char *usage, const char *name, const char *text, uint64_t lo, uint64_t hi, uint64_t *out);
/* True when s ends in suffix (any case) after at least one other character. */
bool cli_ends_with(const char *s, const char *suffix);
/* mkdir for one level; an existing directory is fine. False with diag set otherwise. */
bool cli_make_dir(const char *path, plush_diag *diag);

/* An output folder written as one set: made when missing, locked against a second writer
 * (OUTDIR/.plush.lock), the outputs staged inside it and moved in place together by cli_outdir_commit
 * (stale outputs of an earlier run go); cli_outdir_close removes what was not committed, the lock, and
 * the folder itself when this command made it and nothing was committed. */
typedef struct cli_outdir {
    const char *dir;
    plush_file_lock *lock;
    plush_file_stage *stage;
} cli_outdir;
/* One line on stderr and false on failure (including "locked by process N"). */
bool cli_outdir_open(cli_outdir *o, const char *dir);
/* Where the command writes its outputs until the commit. */
const char *cli_outdir_stage(const cli_outdir *o);
bool cli_outdir_commit(cli_outdir *o);
/* Marks an input of the command (a model, motion, texture): nothing in OUTDIR that is it, or holds it, is
 * removed or replaced (plush_file_stage_protect). One line on stderr and false when out of memory. */
bool cli_outdir_protect(cli_outdir *o, const char *path);
/* Whether an output at path (inside the staging folder) may take its place in OUTDIR: nothing is there, or
 * plush's own entry that is no input (plush_file_stage_check); otherwise one line naming the entry and
 * false. Commands check their outputs so before the work begins. */
bool cli_outdir_check(const cli_outdir *o, const char *path);
void cli_outdir_close(cli_outdir *o);
/* path as the user will find it: the staging folder's prefix replaced by the output folder. */
const char *cli_outdir_shown(const cli_outdir *o, const char *path, char *buf, size_t size);
/* Text (a summary, a message) with every mention of the staging folder replaced by the output folder, into
 * out (size bytes, cut to fit). */
void cli_outdir_shown_text(const cli_outdir *o, const char *in, char *out, size_t size);
/* The same for a diag's message and warnings, in place (a message cut at its buffer's size). */
void cli_outdir_shown_diag(const cli_outdir *o, plush_diag *diag);

/* plush run's job (run.c), shared with plush demo. Zero fields mean the defaults. */
typedef struct cli_run_job {
    const char *model, *motion, *out_dir, *overrides;
    uint32_t frames;
    bool frames_set;
    float fps, physics_hz;
    plush_scene_mode mode;
    bool seed, stretch;
    bool no_push;             /* --no-push: the skinned surface left inside the body where the cage puts it */
    bool follow_author;       /* --follow-author: the default, kept as a name (soft parts on the author's physics
                                 keep the shape it gives them) */
    bool own_shape;           /* --own-shape: soft parts keep their cage's rest shape, not the author's physics' */
    bool copy_textures;       /* --copy-textures: the bake's textures copied into OUTDIR */
    bool bake_physics;        /* --bake-physics: the bake keys the bones rigid bodies drive */
    const char *exports;      /* --export's list of registry names; NULL: plush_scene_default_exports */
    uint32_t every;
    bool ground;
    float ground_y;
    cli_names materials;      /* --materials: the bound set */
    const char *cage;         /* --cage MATERIAL,...[:TRIANGLES]: a cage made, attached and run */
    float pin_band;           /* --pin-band: the automatic pins' band (0: the default) */
    plush_scene_preview_frame preview_frame; /* --preview-frame: what the preview's camera follows */
    plush_scene_preview_view preview_view;   /* --preview-view: where it looks from */
    uint32_t preview_width, preview_height;  /* --preview-size (0: the default) */
    double bake_tolerance;    /* --bake-tolerance (0: the default; < 0: every key) */
    uint32_t bake_bones;      /* --bake-bones (0: chosen from the tolerance) */
} cli_run_job;
int cli_run(int argc, char **argv);
int cli_demo(int argc, char **argv);
int cli_run_execute(const cli_run_job *job);

/* --cage MATERIAL,...[:TRIANGLES] of plush run and plush compare (cage.c). */
enum { CLI_CAGE_JOINED_MAX = 8 };
typedef struct cli_cage {
    cli_names materials;          /* the names as the model spells them (cli_check_materials), and after them
                                   * the materials joined (below) */
    size_t triangles;             /* the count after the colon; 0 when none was given */
    plush_arena arena;
    plush_attach_part part;       /* the cage and the model with it attached */
    /* Materials the named part is sewn onto that the model's physics swings there (a trim on a dress), caged
     * with it as one garment: caged apart, the seam's vertices follow the cage and the rest of the piece the
     * author's physics, and the piece tears there. Each with how many of its vertices the part shares. */
    size_t joined_count;
    size_t joined[CLI_CAGE_JOINED_MAX];
    size_t joined_seam[CLI_CAGE_JOINED_MAX];
} cli_cage;
/* The syntax: at least one name before the colon and, after it, a whole number of at least one triangle.
 * A usage error otherwise, before any file is read. */
int cli_cage_spec_check(const char *usage, const char *spec);
/* The cage made for the spec's materials and attached (plush_attach_part_make with pin_band), into out
 * (zeroed by the caller). One line on stderr and false when the model has a TriMesh soft body already, a
 * name means no material, or the cage cannot be made or held. */
bool cli_cage_attach(const char *usage, const plush_pmx_model *model, const char *path, const char *spec,
                     float pin_band, cli_cage *out, plush_diag *diag);
/* One line per material joined to the cage (cli_cage.joined): the summary's "joined"; and, for a cage finer
 * than the default, the bending links it was given (the summary's "bending"). */
void cli_cage_report_joined(const plush_pmx_model *model, const cli_cage *cage);
void cli_cage_free(cli_cage *cage);

/* attach's per-piece lines (piece N: triangles, vertices, pins and the bones they follow), for run --cage too. */
struct plush_attach_result;
void cli_attach_report_pieces(const plush_pmx_model *out, const struct plush_attach_result *result);


/* info's text output: "  label           value" lines with the values in one column. */
enum { INFO_LABEL_WIDTH = 16 };
void info_line(const char *label, const char *fmt, ...) CLI_PRINTF(2, 3);
/* A name, quoted and escaped so that control characters cannot break the layout. */
void info_name_line(const char *label, const plush_str *name);
void info_warnings_text(const plush_diag *diag);
void info_warnings_json(json_writer *w, const plush_diag *diag);

/* The PMX part of info (info_pmx.c): the fields after "file"; every material, and with bones every bone. */
void info_pmx_text(const plush_pmx_model *model, bool bones, const plush_diag *diag);
void info_pmx_json(json_writer *w, const plush_pmx_model *model, bool bones, const plush_diag *diag);

#endif
