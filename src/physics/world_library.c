/* Finding and opening libplush_physics.so (Bullet behind plush's C ABI).
 *
 * The library is opened per world with dlopen, never linked: programs that never simulate never map
 * Bullet or libstdc++. dlopen is reference counted, so worlds share one mapping; RTLD_NODELETE keeps it
 * mapped after the last world closes it, so a process that creates worlds in a loop does not pay for
 * the relocation again, and nothing Bullet registered (atexit handlers of its statics) can outlive its
 * code. Nothing global: the handle and the function table belong to the world. */
#define _GNU_SOURCE
#include "physics/world_internal.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Appends "; text" (or text when first) to why, cutting at the end rather than overflowing. */
static void add_reason(char *why, size_t why_size, const char *fmt, const char *a, const char *b)
{
    size_t k = strlen(why);
    if (k + 1 >= why_size)
        return;
    snprintf(why + k, why_size - k, fmt, a, b);
}

/* dlerror repeats the path in front of its reason ("PATH: cannot open shared object file: ..."); the
 * message already names the path, so keep the reason only. */
static const char *short_reason(const char *path, const char *err)
{
    if (!err)
        return "unknown error";
    size_t n = strlen(path);
    if (strncmp(err, path, n) == 0 && err[n] == ':' && err[n + 1] == ' ')
        return err + n + 2;
    return err;
}

/* A diagnostic holds 255 characters and four paths can exceed that: a candidate named like the library
 * is shown as its directory ("/usr/local/lib/plush/"). */
static void shown_name(const char *path, char *out, size_t out_size)
{
    size_t n = strlen(path), k = strlen(PLUSH_PHYSICS_LIBRARY);
    if (n > k && path[n - k - 1] == '/' && strcmp(path + n - k, PLUSH_PHYSICS_LIBRARY) == 0)
        n -= k;
    snprintf(out, out_size, "%.*s", (int)n, path);
}

static bool try_one(const char *path, void **handle, const plush_bulletc_api **api, char *why, size_t why_size)
{
    char shown[PATH_MAX];
    shown_name(path, shown, sizeof shown);
    if (access(path, F_OK) != 0) {
        add_reason(why, why_size, "%s%s (not found)", shown, "");
        return false;
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!h) {
        add_reason(why, why_size, "%s (%s)", shown, short_reason(path, dlerror()));
        return false;
    }
    void *sym = dlsym(h, PLUSH_BULLETC_SYMBOL);
    if (!sym) {
        add_reason(why, why_size, "%s (no symbol " PLUSH_BULLETC_SYMBOL "%s)", shown, "");
        dlclose(h);
        return false;
    }
    /* dlsym gives a data pointer; copying its bytes is the conversion POSIX guarantees. */
    plush_bulletc_get_fn get;
    memcpy(&get, &sym, sizeof get);
    const plush_bulletc_api *table = get(PLUSH_BULLETC_VERSION);
    if (!table || table->version != PLUSH_BULLETC_VERSION) {
        add_reason(why, why_size, "%s (%s)", shown, "built for another ABI version");
        dlclose(h);
        return false;
    }
    if (!table->scalar_is_float || !table->scalar_is_float()) {
        add_reason(why, why_size, "%s (%s)", shown, "Bullet built with double precision");
        dlclose(h);
        return false;
    }
    *handle = h;
    *api = table;
    return true;
}

bool world_library_load(const char *const *candidates, size_t count, void **handle, const plush_bulletc_api **api,
                        char *why, size_t why_size)
{
    static const char lead[] = "cannot load " PLUSH_PHYSICS_LIBRARY "; tried ";
    if (why_size)
        snprintf(why, why_size, "%s", lead);
    for (size_t i = 0; i < count; i++) {
        if (!candidates[i] || !candidates[i][0])
            continue;
        if (strlen(why) > sizeof lead - 1)
            add_reason(why, why_size, "%s%s", ", ", "");
        if (try_one(candidates[i], handle, api, why, why_size))
            return true;
    }
    return false;
}
