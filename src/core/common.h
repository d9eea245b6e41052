/* Helpers every module uses, defined once: the out-of-memory failure, warnings passed between diags, work
 * in two halves on two threads, the finite-point test. */
#ifndef PLUSH_CORE_COMMON_H
#define PLUSH_CORE_COMMON_H

#include "plush/core.h"
#include "plush/sys/core.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

/* Fails diag with PLUSH_E_NOMEM, "out of memory" (no section or item), and returns PLUSH_E_NOMEM. */
plush_status plush__no_memory(plush_diag *diag);

/* Passes from's warnings on to to (NULL: nothing), each led by "prefix: " when prefix is not NULL; those
 * from did not keep are added to to's count, so the total stays true (the CLI says how many it did not
 * show). */
void plush__diag_forward(plush_diag *to, const plush_diag *from, const char *prefix);

/* Items 0 .. count - 1 in two halves: fn(ctx, 0, half) on the calling thread and fn(ctx, half, count) on a
 * second one at the same time, when count is at least `least` (else, or when no thread starts, all on the
 * calling thread). fn must touch only the items it is given, so the result is the same either way. */
void plush__two_halves(void (*fn)(void *ctx, size_t from, size_t to), void *ctx, size_t count, size_t least);
/* The same split at `split`: fn(ctx, 0, split) here and fn(ctx, split, count) on a second thread (both here,
 * one after the other, when one part is empty or no thread starts). */
void plush__two_parts(void (*fn)(void *ctx, size_t from, size_t to), void *ctx, size_t split, size_t count);

/* One piece of work on a second thread while the caller goes on: plush__job_start runs fn(ctx) there (or,
 * when no thread starts, here at once), plush__job_wait returns once it has run (a second wait returns at
 * once). fn must not touch what the caller touches until the wait. The threads are kept between jobs, a few
 * of them (halves.c): a frame hands out several jobs, and starting a thread costs about as much as a small
 * one. */
typedef struct plush__job {
    pthread_t thread;
    bool running;                 /* on a thread of its own (no kept one was free) */
    struct plush__worker *worker; /* on a kept thread */
    void (*fn)(void *ctx);
    void *ctx;
} plush__job;
void plush__job_start(plush__job *job, void (*fn)(void *ctx), void *ctx);
void plush__job_wait(plush__job *job);

/* Wall-clock seconds from a monotonic clock, for the stage timings (work on several threads counts once). */
static inline double plush__seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* All three coordinates finite. */
static inline bool plush__finite3(const float p[3])
{
    return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]);
}

#endif
