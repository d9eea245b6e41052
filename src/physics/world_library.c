/* Finding and opening libplush_physics.so (Bullet behind plush's C ABI) through the core loader.
 *
 * The library is opened on first use, once per process, never linked: programs that never simulate never
 * map Bullet or libstdc++ (core/loader.h says why it is never closed). It is plush's own plugin, found by
 * path in the places physics.h promises, and accepted only when its table has this build's ABI version
 * and Bullet uses single precision. */
#include "physics/world_internal.h"

#include "core/loader.h"
#include "core/platform.h"
#include "plush/sys/physics.h"
#include "plush/sys/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PATH_CAP = PLUSH__OS_PATH_MAX };

#ifndef PLUSH_PHYSICS_INSTALL_DIR
#define PLUSH_PHYSICS_INSTALL_DIR "/usr/local/lib/plush"
#endif

/* The candidates physics.h promises, in its order. paths holds the storage. */
static size_t library_candidates(char paths[3][PATH_CAP], const char *candidates[4])
{
    size_t n = 0;
    const char *env = getenv("PLUSH_PHYSICS_LIB");
    if (env && env[0])
        candidates[n++] = env;
    char exe[PATH_CAP];
    if (plush__os_exe_dir(exe, sizeof exe)) {
        snprintf(paths[0], PATH_CAP, "%.*s/" PLUSH_PHYSICS_LIBRARY, PATH_CAP - 32, exe);
        candidates[n++] = paths[0];
        const char *slash = plush__os_last_separator(exe);
        if (slash) {
            exe[slash - exe] = 0;
            snprintf(paths[1], PATH_CAP, "%.*s/" PLUSH_PHYSICS_LIBRARY, PATH_CAP - 32, exe[0] ? exe : "");
            candidates[n++] = paths[1];
        }
    }
    /* an installed plush (make install); a Windows build has no such place and names none */
    if (PLUSH_PHYSICS_INSTALL_DIR[0]) {
        snprintf(paths[2], PATH_CAP, "%s/" PLUSH_PHYSICS_LIBRARY, PLUSH_PHYSICS_INSTALL_DIR);
        candidates[n++] = paths[2];
    }
    return n;
}

/* The loader's last word on a candidate: the table must be this build's and Bullet single precision. */
static const char *check_table(void *const *functions, void *ctx)
{
    plush_bulletc_get_fn get;
    PLUSH__FN_SET(get, functions[0]);
    const plush_bulletc_api *table = get(PLUSH_BULLETC_VERSION);
    if (!table || table->version != PLUSH_BULLETC_VERSION)
        return "built for another ABI version";
    if (!table->scalar_is_float || !table->scalar_is_float())
        return "Bullet built with double precision";
    *(const plush_bulletc_api **)ctx = table;
    return NULL;
}

plush_status plush__world_library_open(const char *const *candidates, size_t count, const plush_bulletc_api **api,
                                       plush_diag *diag)
{
    static const char *const symbols[] = {PLUSH_BULLETC_SYMBOL};
    char hint[PATH_CAP + 120];
    snprintf(hint, sizeof hint, "; put it beside the program%s%s%s, or set PLUSH_PHYSICS_LIB to its path",
             PLUSH_PHYSICS_INSTALL_DIR[0] ? " or in " : "", PLUSH_PHYSICS_INSTALL_DIR,
             PLUSH_PHYSICS_INSTALL_DIR[0] ? " (make install)" : "");
    *api = NULL;
    const plush_bulletc_api *table = NULL;
    void *fn[1];
    const plush__library lib = {.name = PLUSH_PHYSICS_LIBRARY, .candidates = candidates, .candidate_count = count,
                                .symbols = symbols, .symbol_count = 1, .check = check_table, .ctx = &table,
                                .hint = hint};
    plush_status st = plush__library_open(&lib, fn, diag);
    if (st == PLUSH_OK)
        *api = table;
    return st;
}

/* The process's one table, and the outcome of finding it. */
static struct {
    plush__library_cache cache;
    const plush_bulletc_api *api;
} physics = {.cache = {.once = PTHREAD_ONCE_INIT}};

static void physics_init(void)
{
    char paths[3][PATH_CAP];
    const char *candidates[4];
    size_t n = library_candidates(paths, candidates);
    plush_diag d = {0};
    plush_status st = plush__world_library_open(candidates, n, &physics.api, &d);
    plush__library_cache_keep(&physics.cache, st, &d);
}

const plush_bulletc_api *plush__world_library(plush_diag *diag)
{
    return plush__library_cache_get(&physics.cache, physics_init, diag) == PLUSH_OK ? physics.api : NULL;
}

bool plush_world_available(plush_diag *diag)
{
    return plush__world_library(diag) != NULL;
}
