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

/* Kept threads: each waits for a job, runs it, says so and waits again; a job takes a free one, or starts one
 * while there are fewer than WORKERS, or else a thread of its own. They live until the process ends. */
enum { WORKERS = 4 };
typedef enum { WORKER_FREE, WORKER_GIVEN, WORKER_DONE } worker_state;
typedef struct plush__worker {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    worker_state state;
    bool taken; /* given a job and not yet waited for (under pool_lock) */
    void (*fn)(void *ctx);
    void *ctx;
} plush__worker;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static plush__worker pool[WORKERS];
static size_t pool_count;

static void *worker_main(void *arg)
{
    plush__worker *w = arg;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (w->state != WORKER_GIVEN)
            pthread_cond_wait(&w->cond, &w->lock);
        pthread_mutex_unlock(&w->lock);
        w->fn(w->ctx);
        pthread_mutex_lock(&w->lock);
        w->state = WORKER_DONE;
        pthread_cond_broadcast(&w->cond);
    }
    return NULL;
}

/* A free kept thread, taken (NULL: none, and no more may start). */
static plush__worker *take_worker(void)
{
    plush__worker *w = NULL;
    pthread_mutex_lock(&pool_lock);
    for (size_t i = 0; i < pool_count && !w; i++)
        if (!pool[i].taken)
            w = &pool[i];
    if (!w && pool_count < WORKERS) {
        plush__worker *n = &pool[pool_count];
        bool ok = pthread_mutex_init(&n->lock, NULL) == 0;
        if (ok && pthread_cond_init(&n->cond, NULL) != 0) {
            pthread_mutex_destroy(&n->lock);
            ok = false;
        }
        pthread_t t;
        n->state = WORKER_FREE;
        if (ok && pthread_create(&t, NULL, worker_main, n) == 0) {
            pthread_detach(t);
            pool_count++;
            w = n;
        } else if (ok) {
            pthread_cond_destroy(&n->cond);
            pthread_mutex_destroy(&n->lock);
        }
    }
    if (w)
        w->taken = true;
    pthread_mutex_unlock(&pool_lock);
    return w;
}

void plush__job_start(plush__job *job, void (*fn)(void *ctx), void *ctx)
{
    job->fn = fn;
    job->ctx = ctx;
    job->running = false;
    job->worker = take_worker();
    if (job->worker) {
        plush__worker *w = job->worker;
        pthread_mutex_lock(&w->lock);
        w->fn = fn;
        w->ctx = ctx;
        w->state = WORKER_GIVEN;
        pthread_cond_broadcast(&w->cond);
        pthread_mutex_unlock(&w->lock);
        return;
    }
    job->running = pthread_create(&job->thread, NULL, run_job, job) == 0;
    if (!job->running)
        fn(ctx);
}

void plush__job_wait(plush__job *job)
{
    plush__worker *w = job->worker;
    if (w) {
        pthread_mutex_lock(&w->lock);
        while (w->state != WORKER_DONE)
            pthread_cond_wait(&w->cond, &w->lock);
        w->state = WORKER_FREE;
        pthread_mutex_unlock(&w->lock);
        pthread_mutex_lock(&pool_lock);
        w->taken = false;
        pthread_mutex_unlock(&pool_lock);
        job->worker = NULL;
    }
    if (job->running)
        pthread_join(job->thread, NULL);
    job->running = false;
}
