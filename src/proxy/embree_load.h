/* Embree, opened with dlopen on first use and never linked: linking would map it (and TBB) into every
 * plush process, 4.4 MB of resident memory that `plush info` cannot afford. <embree3/rtcore.h> is used for
 * its types only; each entry point comes from dlsym into a table the caller keeps for as long as it uses
 * Embree. dlopen is reference counted, so two users at once (a binding and a render) share the library.
 * RTLD_NODELETE keeps it mapped after the last dlclose: Embree's TBB worker threads outlive the device,
 * and unmapping the code they sleep in crashes them. A process that uses Embree once keeps paying for it;
 * one that never does (plush info) never maps it.
 *
 *   embree_lib rtc;
 *   if (!embree_lib_open(&rtc, why, sizeof why)) ... why says what is missing ...
 *   RTCDevice device = rtc.rtcNewDevice("threads=1");
 *   ...
 *   rtc.rtcReleaseDevice(device);
 *   embree_lib_close(&rtc);
 *
 * Shared by the binding's point queries (src/proxy/bvh_embree.c) and the renderer (src/render/render.c). */
#ifndef PLUSH_PROXY_EMBREE_LOAD_H
#define PLUSH_PROXY_EMBREE_LOAD_H

#include <embree3/rtcore.h>

#include <stdbool.h>
#include <stddef.h>

#define EMBREE_LIBRARY "libembree3.so.3"

/* The Embree entry points plush uses, with their prototypes from rtcore.h. */
#define EMBREE_FUNCTIONS(X)                                                                                   \
    X(RTCDevice, rtcNewDevice, (const char *))                                                                \
    X(void, rtcReleaseDevice, (RTCDevice))                                                                    \
    X(enum RTCError, rtcGetDeviceError, (RTCDevice))                                                          \
    X(RTCScene, rtcNewScene, (RTCDevice))                                                                     \
    X(void, rtcReleaseScene, (RTCScene))                                                                      \
    X(void, rtcCommitScene, (RTCScene))                                                                       \
    X(unsigned int, rtcAttachGeometry, (RTCScene, RTCGeometry))                                               \
    X(RTCGeometry, rtcNewGeometry, (RTCDevice, enum RTCGeometryType))                                         \
    X(void, rtcReleaseGeometry, (RTCGeometry))                                                                \
    X(void, rtcCommitGeometry, (RTCGeometry))                                                                 \
    X(void *, rtcSetNewGeometryBuffer, (RTCGeometry, enum RTCBufferType, unsigned int, enum RTCFormat, size_t, \
                                        size_t))                                                              \
    X(bool, rtcPointQuery, (RTCScene, struct RTCPointQuery *, struct RTCPointQueryContext *,                  \
                            RTCPointQueryFunction, void *))                                                   \
    X(void, rtcIntersect1, (RTCScene, struct RTCIntersectContext *, struct RTCRayHit *))

typedef struct embree_lib {
    void *library;
#define EMBREE_FIELD(ret, name, args) ret(*name) args;
    EMBREE_FUNCTIONS(EMBREE_FIELD)
#undef EMBREE_FIELD
} embree_lib;

/* Opens the library and fills the table; false (why says what failed, the table is closed) when the
 * library or one of its symbols is missing. */
bool embree_lib_open(embree_lib *rtc, char *why, size_t why_size);
/* Drops this user's reference; a zeroed or failed table is a no-op. */
void embree_lib_close(embree_lib *rtc);
/* A short phrase for a device error ("out of memory"). */
const char *embree_error_text(enum RTCError e);

#endif
