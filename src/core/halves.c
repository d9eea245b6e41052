/* Work in two halves on two threads (plush__two_halves): the per-frame loops of the proxy path (patch
 * frames, skinning), whose items are independent; and one job on a second thread (plush__job_start). */
#include "core/common.h"

#include <pthread.h>

typedef struct half {
    void (*fn)(void *ctx, size_t from, size_t to);
    void *ctx;
    size_t from, to;
} half;

static void run_half(void *arg)
{
    half *h = arg;
    h->fn(h->ctx, h->from, h->to);
}

void plush__two_parts(void (*fn)(void *ctx, size_t from, size_t to), void *ctx, size_t split, size_t count)
{
    split = split < count ? split : count;
    if (split == 0 || split == count) {
        fn(ctx, 0, split);
        if (split < count)
            fn(ctx, split, count);
        return;
    }
    /* the second part as a job (run here first when no thread starts: the parts touch different items) */
    half second = {fn, ctx, split, count};
    plush__job job;
    plush__job_start(&job, run_half, &second);
    fn(ctx, 0, split);
    plush__job_wait(&job);
}

void plush__two_halves(void (*fn)(void *ctx, size_t from, size_t to), void *ctx, size_t count, size_t least)
{
    if (count < least || count < 2)
        fn(ctx, 0, count);
    else
        plush__two_parts(fn, ctx, count / 2, count);
}

static void *run_job(void *arg)
{
    plush__job *job = arg;
    job->fn(job->ctx);
    return NULL;
}

void plush__job_start(plush__job *job, void (*fn)(void *ctx), void *ctx)
{
    job->fn = fn;
    job->ctx = ctx;
    job->running = pthread_create(&job->thread, NULL, run_job, job) == 0;
    if (!job->running)
        fn(ctx);
}

void plush__job_wait(plush__job *job)
{
    if (job->running)
        pthread_join(job->thread, NULL);
    job->running = false;
}
