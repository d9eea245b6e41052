/* The one loader (loader.h says why dlopen, why once per process, why never closed). */
#include "core/loader.h"
#include "core/platform.h"
#include "plush/sys/core.h"

#include <stdio.h>
#include <stdlib.h>

enum { TRIED_MAX = 160 };

/* Appends text to the tried list, ending it with "..." when the next name would not fit. */
static void add_tried(char *tried, size_t size, const char *text, size_t len)
{
    size_t k = strlen(tried);
    if (k >= 3 && strcmp(tried + k - 3, "...") == 0)
        return;
    size_t sep = k ? 2 : 0;
    if (k + sep + len + 4 > size) {
        snprintf(tried + k, size - k, "%s...", k ? ", " : "");
        return;
    }
    snprintf(tried + k, size - k, "%s%.*s", k ? ", " : "", (int)len, text);
}

/* A path candidate named like the library shows as its directory: four full paths would not fit. */
static void add_candidate(char *tried, size_t size, const plush__library *lib, const char *c)
{
    size_t n = strlen(c), k = strlen(lib->name);
    if (n > k && strchr("/\\", c[n - k - 1]) && strcmp(c + n - k, lib->name) == 0)
        n -= k;
    add_tried(tried, size, c, n);
}

/* Opens one candidate and resolves its symbols; NULL when it will not do (reason says why, and whether
 * the file existed: a "not found" is weaker than anything a real file said). */
static void *try_one(const plush__library *lib, const char *c, void **functions, char *reason, size_t size,
                     bool *strong)
{
    bool missing;
    void *h = plush__os_library_open(c, reason, size, &missing);
    /* A library that is not installed is as weak as a missing path. */
    *strong = !missing;
    if (!h)
        return NULL;
    for (size_t i = 0; i < lib->symbol_count; i++) {
        functions[i] = plush__os_library_symbol(h, lib->symbols[i]);
        if (!functions[i]) {
            snprintf(reason, size, "%s: no symbol %s", c, lib->symbols[i]);
            plush__os_library_close(h);
            return NULL;
        }
    }
    const char *refused = lib->check ? lib->check(functions, lib->ctx) : NULL;
    if (refused) {
        snprintf(reason, size, "%s: %s", c, refused);
        plush__os_library_close(h);
        return NULL;
    }
    return h;
}

plush_status plush__library_open(const plush__library *lib, void **functions, plush_diag *diag)
{
    char tried[TRIED_MAX] = "", reason[PLUSH_DIAG_MESSAGE] = "nothing to try", why[PLUSH_DIAG_MESSAGE];
    bool have_strong = false;
    for (size_t i = 0; i < lib->candidate_count; i++) {
        const char *c = lib->candidates[i];
        if (!c || !c[0])
            continue;
        add_candidate(tried, sizeof tried, lib, c);
        bool strong;
        if (try_one(lib, c, functions, why, sizeof why, &strong))
            return PLUSH_OK;
        if (strong || !have_strong)
            snprintf(reason, sizeof reason, "%s", why);
        have_strong |= strong;
    }
    for (size_t i = 0; i < lib->symbol_count; i++)
        functions[i] = NULL;
    return plush_diag_fail(diag, PLUSH_E_LIBRARY, -1, NULL, -1, "%s: cannot load (tried %s): %s%s", lib->name, tried,
                           reason, lib->hint ? lib->hint : "");
}

void plush__library_cache_keep(plush__library_cache *cache, plush_status status, const plush_diag *diag)
{
    cache->status = status;
    snprintf(cache->message, sizeof cache->message, "%s", status == PLUSH_OK ? "" : diag->message);
}

plush_status plush__library_cache_get(plush__library_cache *cache, void (*init)(void), plush_diag *diag)
{
    if (pthread_once(&cache->once, init) != 0)
        return plush_diag_fail(diag, PLUSH_E_LIBRARY, -1, NULL, -1, "cannot run a library's set-up");
    if (cache->status != PLUSH_OK)
        return plush_diag_fail(diag, cache->status, -1, NULL, -1, "%s", cache->message);
    return PLUSH_OK;
}

/* ---- Embree ---------------------------------------------------------------------------------------- */

static struct {
    plush__library_cache cache;
    plush__embree table;
} embree = {.cache = {.once = PTHREAD_ONCE_INIT}};

static void embree_init(void)
{
    static const char *const sonames[] = {PLUSH__OS_EMBREE_NAMES};
    static const char *const symbols[] = {
#define PLUSH__NAME(name) #name,
        PLUSH__EMBREE_FUNCTIONS(PLUSH__NAME)
#undef PLUSH__NAME
    };
    enum { COUNT = sizeof symbols / sizeof *symbols };
    void *fn[COUNT];
    const plush__library lib = {.name = "embree", .candidates = sonames,
                                .candidate_count = sizeof sonames / sizeof *sonames,
                                .symbols = symbols, .symbol_count = COUNT};
    plush_diag d = {0};
    plush_status st = plush__library_open(&lib, fn, &d);
    if (st == PLUSH_OK) {
        size_t i = 0;
#define PLUSH__SET(name) PLUSH__FN_SET(embree.table.name, fn[i]), i++;
        PLUSH__EMBREE_FUNCTIONS(PLUSH__SET)
#undef PLUSH__SET
    }
    plush__library_cache_keep(&embree.cache, st, &d);
}

const plush__embree *plush__embree_load(plush_diag *diag)
{
    return plush__library_cache_get(&embree.cache, embree_init, diag) == PLUSH_OK ? &embree.table : NULL;
}

const char *plush__embree_error_text(enum RTCError e)
{
    switch (e) {
    case RTC_ERROR_OUT_OF_MEMORY: return "out of memory";
    case RTC_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case RTC_ERROR_INVALID_OPERATION: return "invalid operation";
    case RTC_ERROR_UNSUPPORTED_CPU: return "unsupported CPU";
    default: return "unknown error";
    }
}

/* ---- meshoptimizer --------------------------------------------------------------------------------- */

static struct {
    plush__library_cache cache;
    plush__meshopt table;
} meshopt = {.cache = {.once = PTHREAD_ONCE_INIT}};

static void meshopt_init(void)
{
    static const char *const sonames[] = {PLUSH__OS_MESHOPT_NAMES};
    static const char *const symbols[] = {
#define PLUSH__NAME(name) #name,
        PLUSH__MESHOPT_FUNCTIONS(PLUSH__NAME)
#undef PLUSH__NAME
    };
    enum { COUNT = sizeof symbols / sizeof *symbols };
    void *fn[COUNT];
    const plush__library lib = {.name = "meshoptimizer", .candidates = sonames,
                                .candidate_count = sizeof sonames / sizeof *sonames,
                                .symbols = symbols, .symbol_count = COUNT};
    plush_diag d = {0};
    plush_status st = plush__library_open(&lib, fn, &d);
    if (st == PLUSH_OK) {
        size_t i = 0;
#define PLUSH__SET(name) PLUSH__FN_SET(meshopt.table.name, fn[i]), i++;
        PLUSH__MESHOPT_FUNCTIONS(PLUSH__SET)
#undef PLUSH__SET
    }
    plush__library_cache_keep(&meshopt.cache, st, &d);
}

const plush__meshopt *plush__meshopt_load(plush_diag *diag)
{
    return plush__library_cache_get(&meshopt.cache, meshopt_init, diag) == PLUSH_OK ? &meshopt.table : NULL;
}
