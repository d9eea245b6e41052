/* The one place Embree is opened (see embree_load.h for why it is dlopen'ed). */
#define _GNU_SOURCE
#include "proxy/embree_load.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* dlsym gives a data pointer; copying its bytes is the conversion POSIX guarantees to work and the
 * one ISO C does not warn about. */
static bool load_functions(embree_lib *rtc, char *why, size_t why_size)
{
#define EMBREE_LOAD(ret, name, args)                                                             \
    {                                                                                            \
        void *sym = dlsym(rtc->library, #name);                                                  \
        if (!sym) {                                                                              \
            snprintf(why, why_size, "%s has no symbol '%s'", EMBREE_LIBRARY, #name);             \
            return false;                                                                        \
        }                                                                                        \
        memcpy(&rtc->name, &sym, sizeof rtc->name);                                              \
    }
    EMBREE_FUNCTIONS(EMBREE_LOAD)
#undef EMBREE_LOAD
    return true;
}

bool embree_lib_open(embree_lib *rtc, char *why, size_t why_size)
{
    memset(rtc, 0, sizeof *rtc);
    rtc->library = dlopen(EMBREE_LIBRARY, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!rtc->library) {
        const char *err = dlerror();
        snprintf(why, why_size, "cannot load %s: %s", EMBREE_LIBRARY, err ? err : "unknown error");
        return false;
    }
    if (load_functions(rtc, why, why_size))
        return true;
    embree_lib_close(rtc);
    return false;
}

void embree_lib_close(embree_lib *rtc)
{
    if (rtc->library)
        dlclose(rtc->library);
    memset(rtc, 0, sizeof *rtc);
}

const char *embree_error_text(enum RTCError e)
{
    switch (e) {
    case RTC_ERROR_OUT_OF_MEMORY: return "out of memory";
    case RTC_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case RTC_ERROR_INVALID_OPERATION: return "invalid operation";
    case RTC_ERROR_UNSUPPORTED_CPU: return "unsupported CPU";
    default: return "unknown error";
    }
}
