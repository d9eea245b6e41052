/* Status texts and diagnostics: the first error wins, warnings are counted. */
#include "core/common.h"
#include "plush/core.h"
#include "plush/sys/core.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const status_texts[] = {
#define PLUSH_X_TEXT(name, text) text,
    PLUSH_STATUS_LIST(PLUSH_X_TEXT)
#undef PLUSH_X_TEXT
};

const char *plush_status_text(plush_status status)
{
    if ((unsigned)status >= PLUSH_STATUS_COUNT)
        return "unknown status";
    return status_texts[status];
}

plush_status plush_diag_fail(plush_diag *diag, plush_status status, int64_t offset, const char *section,
                             int64_t index, const char *fmt, ...)
{
    if (!diag || diag->status != PLUSH_OK)
        return diag ? diag->status : status;
    diag->status = status;
    diag->offset = offset;
    diag->section = section;
    diag->index = index;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(diag->message, sizeof diag->message, fmt, ap);
    va_end(ap);
    return status;
}

void plush_diag_warn(plush_diag *diag, int64_t offset, const char *section, int64_t index, const char *fmt, ...)
{
    if (!diag)
        return;
    uint32_t n = diag->warning_count++;
    if (n >= PLUSH_DIAG_KEPT_WARNINGS)
        return;
    char what[PLUSH_DIAG_MESSAGE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    /* Composed in a buffer big enough for every part, then cut to the kept size. */
    char full[3 * PLUSH_DIAG_MESSAGE];
    size_t k = 0;
    if (section && index >= 0)
        k += (size_t)snprintf(full, 128, "%.80s %lld: ", section, (long long)index);
    else if (section)
        k += (size_t)snprintf(full, 128, "%.80s: ", section);
    if (offset >= 0)
        snprintf(full + k, sizeof full - k, "%s (at byte %lld)", what, (long long)offset);
    else
        snprintf(full + k, sizeof full - k, "%s", what);
    size_t len = strlen(full);
    if (len >= PLUSH_DIAG_MESSAGE)
        len = PLUSH_DIAG_MESSAGE - 1;
    memcpy(diag->warnings[n], full, len);
    diag->warnings[n][len] = 0;
}

void plush_diag_reset(plush_diag *diag)
{
    if (!diag)
        return;
    const char *file = diag->file;
    memset(diag, 0, sizeof *diag);
    diag->file = file;
    diag->offset = -1;
    diag->index = -1;
}

int plush_diag_format(const plush_diag *diag, char *buf, size_t size)
{
    const char *msg = diag->message[0] ? diag->message : plush_status_text(diag->status);
    char where[96] = "";
    if (diag->section && diag->index >= 0)
        snprintf(where, sizeof where, "%s %lld: ", diag->section, (long long)diag->index);
    else if (diag->section)
        snprintf(where, sizeof where, "%s: ", diag->section);
    char at[48] = "";
    if (diag->offset >= 0)
        snprintf(at, sizeof at, " (at byte %lld)", (long long)diag->offset);
    if (diag->file)
        return snprintf(buf, size, "%s: %s%s%s", diag->file, where, msg, at);
    return snprintf(buf, size, "%s%s%s", where, msg, at);
}

plush_status plush__no_memory(plush_diag *diag)
{
    return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
}

void plush__diag_forward(plush_diag *to, const plush_diag *from, const char *prefix)
{
    if (!to || !from)
        return;
    uint32_t kept = from->warning_count < PLUSH_DIAG_KEPT_WARNINGS ? from->warning_count : PLUSH_DIAG_KEPT_WARNINGS;
    for (uint32_t i = 0; i < kept; i++) {
        if (prefix)
            plush_diag_warn(to, -1, NULL, -1, "%s: %s", prefix, from->warnings[i]);
        else
            plush_diag_warn(to, -1, NULL, -1, "%s", from->warnings[i]);
    }
    to->warning_count += from->warning_count - kept;
}
