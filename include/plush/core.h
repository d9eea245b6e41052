/* plush core: status codes, diagnostics, and the arena, buffer and text types the other headers use.
 *
 *   plush_diag diag = {0};
 *   plush_pmx_model *model;
 *   if (plush_pmx_read_file("model.pmx", NULL, &model, &diag) != PLUSH_OK) {
 *       char line[512];
 *       plush_diag_format(&diag, line, sizeof line);   // "model.pmx: cannot open: No such file"
 *   }
 *
 * Every reader takes a plush_diag: on failure it holds the status, the byte offset, the section and
 * the item index; warnings (kept, not fatal) are counted and the first few kept as text.
 */
#ifndef PLUSH_CORE_H
#define PLUSH_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One list makes both the enum and the message table; one status per condition, so callers branch on
 * codes, never on message text. New codes go at the end (the values are kept).
 *   UNSUPPORTED  a format or feature plush does not read (PMD)
 *   LIBRARY      an optional library (Embree, meshoptimizer, libplush_physics.so, iconv's CP932) is missing
 *   NO_PROXY     the model has no usable TriMesh soft body to serve as the proxy
 *   CONFLICT     options or inputs that cannot go together (stretch with dual quaternions, 2.1 content
 *                written as 2.0 without lossy)
 *   GEOMETRY     a mesh cannot be made as asked (a wrap that stays in pieces or is not closed, a direct mesh
 *                with no bound face)
 *   NO_GEOMETRY  a summary-only model (counts without vertices or faces) given to what reads them
 *   LOCKED       the output directory is locked by another live plush process
 *   UNHELD       a soft-body piece nothing pins or anchors (plush attach refuses it without --allow-free)
 *   OUTSIDE      a file a model names lies outside the model's folder (an absolute path, or one leading out
 *                through ".." or a symbolic link): a downloaded model must not make plush read other files
 *   AMBIGUOUS    a name that means more than one thing (an English name materials of different names carry),
 *                or fewer things than choosing by name would take (the number of one of two materials of a name)
 *   BUDGET       a run over one of its documented limits, estimated from the inputs before anything is built
 *                (a cage far beyond its size, soft bodies, IK or exports beyond the time or memory a run may
 *                take: docs/run.md lists the limits and their figures) */
#define PLUSH_STATUS_LIST(X)                                   \
    X(PLUSH_OK, "ok")                                          \
    X(PLUSH_E_IO, "input/output error")                        \
    X(PLUSH_E_NOMEM, "out of memory")                          \
    X(PLUSH_E_TRUNCATED, "unexpected end of data")             \
    X(PLUSH_E_FORMAT, "malformed data")                        \
    X(PLUSH_E_VERSION, "unsupported version")                  \
    X(PLUSH_E_RANGE, "value out of range")                     \
    X(PLUSH_E_ENCODING, "text cannot be encoded")              \
    X(PLUSH_E_UNSUPPORTED, "unsupported feature")              \
    X(PLUSH_E_ARGUMENT, "invalid argument")                    \
    X(PLUSH_E_LIBRARY, "optional library missing")             \
    X(PLUSH_E_NO_PROXY, "no usable TriMesh soft body")         \
    X(PLUSH_E_CONFLICT, "options that cannot go together")     \
    X(PLUSH_E_GEOMETRY, "mesh cannot be made as asked")       \
    X(PLUSH_E_NO_GEOMETRY, "model read without its geometry")  \
    X(PLUSH_E_LOCKED, "output directory in use by another run") \
    X(PLUSH_E_UNHELD, "soft-body piece nothing holds")         \
    X(PLUSH_E_OUTSIDE, "file outside the model's folder")      \
    X(PLUSH_E_EXISTS, "a file plush did not write is in the way") \
    X(PLUSH_E_AMBIGUOUS, "name that means more than one thing") \
    X(PLUSH_E_BUDGET, "over a limit of the run")

typedef enum plush_status {
#define PLUSH_X_ENUM(name, text) name,
    PLUSH_STATUS_LIST(PLUSH_X_ENUM)
#undef PLUSH_X_ENUM
    PLUSH_STATUS_COUNT
} plush_status;

/* A short English phrase for a status ("unexpected end of data"). */
const char *plush_status_text(plush_status status);

enum { PLUSH_DIAG_MESSAGE = 256, PLUSH_DIAG_KEPT_WARNINGS = 8 };

typedef struct plush_diag {
    plush_status status;          /* PLUSH_OK until the first error */
    const char *file;             /* set by the caller (not copied); may be NULL */
    int64_t offset;               /* byte offset of the failure, -1 when unknown */
    const char *section;          /* static string: "header", "vertex", "bone", ... or NULL */
    int64_t index;                /* item index inside the section, -1 when none */
    char message[PLUSH_DIAG_MESSAGE];
    uint32_t warning_count;       /* all warnings seen */
    char warnings[PLUSH_DIAG_KEPT_WARNINGS][PLUSH_DIAG_MESSAGE]; /* the first few, formatted */
} plush_diag;

/* Records the first error only; later calls are ignored so the root cause is reported. Returns status. */
plush_status plush_diag_fail(plush_diag *diag, plush_status status, int64_t offset, const char *section,
                             int64_t index, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;
/* Counts a warning and keeps its text if there is room. */
void plush_diag_warn(plush_diag *diag, int64_t offset, const char *section, int64_t index, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* Resets the error part (status, offset, section, index, message) and the warnings, keeps file. */
void plush_diag_reset(plush_diag *diag);
/* "FILE: section 12: message (at byte N)"; returns the length it wanted (like snprintf). */
int plush_diag_format(const plush_diag *diag, char *buf, size_t size);

/* ---- arena: many allocations, one free (what a model or binding keeps; freed with it) -------- */

typedef struct plush_arena_block plush_arena_block;
typedef struct plush_arena {
    plush_arena_block *head;
    size_t block_size;            /* 0 means 64 KiB */
    size_t total;                 /* bytes handed out, for statistics */
} plush_arena;

/* ---- growable byte buffer (writers build into memory, then write atomically) ---------------- */

typedef struct plush_buf {
    uint8_t *data;
    size_t size;
    size_t capacity;
    bool failed;                  /* sticky: an allocation failed */
} plush_buf;

/* Frees what a writer put in buf (the buffer itself is the caller's). */
void plush_buf_free(plush_buf *buf);

/* ---- text ------------------------------------------------------------------------------------ */

/* A piece of text as plush holds it: UTF-8, NUL-terminated, len without the NUL. When the source
 * bytes could not be decoded exactly (unpaired surrogate, invalid UTF-8, undecodable Shift-JIS),
 * the broken parts read as U+FFFD and raw/raw_len keep the original bytes so that a writer using
 * the same encoding gives them back unchanged. Build new text with raw = NULL. */
typedef struct plush_str {
    const char *s;
    uint32_t len;
    uint32_t raw_len;
    const uint8_t *raw;
} plush_str;

typedef enum plush_encoding { PLUSH_ENC_UTF16LE = 0, PLUSH_ENC_UTF8 = 1 } plush_encoding;

#ifdef __cplusplus
}
#endif
#endif
