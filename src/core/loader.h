/* The one loader for plush's optional libraries: Embree (nearest triangles, ray casting), meshoptimizer
 * (cage simplification) and libplush_physics.so (Bullet behind plush's C ABI).
 *
 *   const plush__embree *rtc = plush__embree_load(&diag);
 *   if (!rtc)
 *       return diag.status;                         // PLUSH_E_LIBRARY, "embree: cannot load (tried ...): ..."
 *   RTCDevice device = rtc->rtcNewDevice("threads=1");
 *
 * None of them is linked: linking would map Embree and TBB (4.4 MB resident), or Bullet and libstdc++, into
 * every plush process, and `plush info` cannot afford that. Each is opened with dlopen on first use, by
 * its versioned soname (never the unversioned .so, which only a -dev package installs) or, for plush's own
 * physics plugin, by path; the table of entry points is filled once per process (pthread_once) and kept,
 * as is a failure and its message, so every later caller gets the same answer at no cost. RTLD_NODELETE
 * and never closing: Embree's TBB workers outlive the device and must not lose their code, and nothing a
 * library registered (atexit handlers of Bullet's statics) may outlive it.
 *
 * The tables are typed from the libraries' own headers (__typeof__(&rtcNewDevice)), so a prototype that
 * changes between versions is a compile error, not a crash. */
#ifndef PLUSH_CORE_LOADER_H
#define PLUSH_CORE_LOADER_H

#include "plush/core.h"
#include "plush/sys/core.h"

#include <embree3/rtcore.h>
#include <meshoptimizer.h>
#include <pthread.h>
#include <string.h>

/* ---- the generic part: open the first candidate that works ---------------------------------------- */

typedef struct plush__library {
    const char *name;                 /* leads the message: "embree", "meshoptimizer", "libplush_physics.so" */
    const char *const *candidates;    /* versioned sonames or absolute paths, in order; NULL or "" skipped */
    size_t candidate_count;
    const char *const *symbols;       /* every one must resolve */
    size_t symbol_count;
    /* Optional last word on a candidate whose symbols resolved (an ABI version, say): NULL accepts it,
     * otherwise a short reason, and the next candidate is tried. */
    const char *(*check)(void *const *functions, void *ctx);
    void *ctx;
    const char *hint;                 /* ends the failure message when not NULL ("; set X to its path") */
} plush__library;

/* Opens lib's first acceptable candidate and puts the address of symbols[i] in functions[i]. On failure
 * every candidate is closed again and diag gets PLUSH_E_LIBRARY with one line:
 * "<name>: cannot load (tried A, B, ...): <reason>", the reason being the first candidate that exists but
 * would not load (dlerror, a missing symbol, the check's answer), else the last one's. A path candidate
 * whose file name is lib->name shows as its directory ("/usr/local/lib/plush/"), so four paths fit. */
plush_status plush__library_open(const plush__library *lib, void **functions, plush_diag *diag);

/* A library's outcome, kept for the whole process. Static storage, zero except once:
 *   static plush__library_cache cache = {.once = PTHREAD_ONCE_INIT};
 * The init routine given to pthread_once fills status and message (plush__library_cache_keep). */
typedef struct plush__library_cache {
    pthread_once_t once;
    plush_status status;
    char message[PLUSH_DIAG_MESSAGE];
} plush__library_cache;

/* Stores a load's outcome in cache (the init routine's last step). */
void plush__library_cache_keep(plush__library_cache *cache, plush_status status, const plush_diag *diag);
/* Runs init once per process, then gives the cached status; a failure is repeated into diag (may be NULL). */
plush_status plush__library_cache_get(plush__library_cache *cache, void (*init)(void), plush_diag *diag);

/* dlsym gives a data pointer; copying its bytes into a function pointer is the conversion POSIX
 * guarantees and the one ISO C does not warn about. */
#define PLUSH__FN_SET(dst, sym) memcpy(&(dst), &(sym), sizeof(dst))

/* ---- Embree ---------------------------------------------------------------------------------------- */

/* The entry points plush uses (inline helpers such as rtcInitPointQueryContext come with the header). */
#define PLUSH__EMBREE_FUNCTIONS(X)                                                                        \
    X(rtcNewDevice) X(rtcReleaseDevice) X(rtcGetDeviceError) X(rtcNewScene) X(rtcReleaseScene)            \
    X(rtcCommitScene) X(rtcAttachGeometry) X(rtcNewGeometry) X(rtcReleaseGeometry) X(rtcCommitGeometry)  \
    X(rtcSetNewGeometryBuffer) X(rtcPointQuery) X(rtcIntersect1) X(rtcUpdateGeometryBuffer)                \
    X(rtcSetGeometryBuildQuality) X(rtcSetSceneFlags) X(rtcSetSceneBuildQuality)                        \
    X(rtcSetGeometryIntersectFilterFunction) X(rtcSetGeometryUserData) X(rtcIntersect1M)

typedef struct plush__embree {
#define PLUSH__EMBREE_FIELD(name) __typeof__(&name) name;
    PLUSH__EMBREE_FUNCTIONS(PLUSH__EMBREE_FIELD)
#undef PLUSH__EMBREE_FIELD
} plush__embree;

/* The process's Embree table; NULL (diag: PLUSH_E_LIBRARY) when libembree3.so.3 or a symbol is missing. */
const plush__embree *plush__embree_load(plush_diag *diag);
/* A short phrase for a device error ("out of memory"). */
const char *plush__embree_error_text(enum RTCError e);

/* ---- meshoptimizer --------------------------------------------------------------------------------- */

#define PLUSH__MESHOPT_FUNCTIONS(X) X(meshopt_simplify) X(meshopt_simplifySloppy) X(meshopt_simplifyScale)

typedef struct plush__meshopt {
#define PLUSH__MESHOPT_FIELD(name) __typeof__(&name) name;
    PLUSH__MESHOPT_FUNCTIONS(PLUSH__MESHOPT_FIELD)
#undef PLUSH__MESHOPT_FIELD
} plush__meshopt;

/* The process's meshoptimizer table; NULL (diag: PLUSH_E_LIBRARY) when it cannot be loaded. */
const plush__meshopt *plush__meshopt_load(plush_diag *diag);

#endif
