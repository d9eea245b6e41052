/* Work on a second thread (src/core/halves.c): jobs run on kept threads, more jobs at once than there are
 * kept threads all run, a job waited for twice is fine, a run of jobs one after the other reuses the kept
 * threads instead of starting one each, and two parts (nested in a job too) cover every item once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/common.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct gate {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int arrived, want; /* each job waits here until `want` have arrived: they run at the same time */
    int met;           /* the jobs that saw all arrive */
    int ran;
    pthread_t who[64];
} gate;

/* Waits for all to arrive, for 30 s at most (a job run in line, with no thread to start, would wait for the
 * others for ever: the test then fails instead of hanging). */
static void meet(void *ctx)
{
    gate *g = ctx;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 30;
    pthread_mutex_lock(&g->lock);
    g->who[g->ran++] = pthread_self();
    g->arrived++;
    pthread_cond_broadcast(&g->cond);
    while (g->arrived < g->want)
        if (pthread_cond_timedwait(&g->cond, &g->lock, &until) != 0)
            break;
    g->met += g->arrived >= g->want;
    pthread_mutex_unlock(&g->lock);
}

static void gate_init(gate *g, int want)
{
    memset(g, 0, sizeof *g);
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->cond, NULL);
    g->want = want;
}

static void gate_fini(gate *g)
{
    pthread_cond_destroy(&g->cond);
    pthread_mutex_destroy(&g->lock);
}

/* Ten jobs that each wait for all ten to have started: with four kept threads, the other six must run on
 * threads of their own, or the waits would never end. */
static void test_more_jobs_than_kept_threads(void **state)
{
    (void)state;
    enum { JOBS = 10 };
    gate g;
    gate_init(&g, JOBS);
    plush__job jobs[JOBS];
    for (int i = 0; i < JOBS; i++)
        plush__job_start(&jobs[i], meet, &g);
    for (int i = 0; i < JOBS; i++)
        plush__job_wait(&jobs[i]);
    assert_int_equal(g.ran, JOBS);
    assert_int_equal(g.met, JOBS);
    for (int i = 0; i < JOBS; i++) /* none ran on the caller's thread */
        assert_false(pthread_equal(g.who[i], pthread_self()));
    gate_fini(&g);
}

/* Each thread's number, given the first time it runs count (a thread's pthread_t may be handed to the next one
 * started once it is joined: a number kept in the thread itself is not). */
static _Thread_local int thread_number;
static int threads_numbered;
static int numbers[64];

static void count(void *ctx)
{
    gate *g = ctx;
    pthread_mutex_lock(&g->lock);
    if (!thread_number)
        thread_number = ++threads_numbered;
    if (g->ran < 64)
        numbers[g->ran] = thread_number;
    g->ran++;
    pthread_mutex_unlock(&g->lock);
}

/* Jobs one after the other run on at most a few threads (the kept ones), and a second wait returns at once. */
static void test_jobs_reuse_threads(void **state)
{
    (void)state;
    gate g;
    gate_init(&g, 0);
    for (int i = 0; i < 64; i++) {
        plush__job job;
        plush__job_start(&job, count, &g);
        plush__job_wait(&job);
        plush__job_wait(&job);
    }
    assert_int_equal(g.ran, 64);
    int distinct = 0;
    for (int i = 0; i < 64; i++) {
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = numbers[i] == numbers[j];
        distinct += !seen;
    }
    assert_true(distinct >= 1 && distinct <= 4);
    gate_fini(&g);
}

typedef struct items {
    int hits[1000];
} items;

static void mark(void *ctx, size_t from, size_t to)
{
    items *it = ctx;
    for (size_t i = from; i < to; i++)
        it->hits[i]++;
}

static void nested(void *ctx)
{
    plush__two_halves(mark, ctx, 1000, 2);
}

/* Two halves cover every item once, on the caller's thread and in a job alike. */
static void test_two_halves_cover_once(void **state)
{
    (void)state;
    items *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    assert_non_null(a), assert_non_null(b);
    plush__two_halves(mark, a, 1000, 2);
    plush__two_parts(mark, a, 1, 1000);
    plush__job job;
    plush__job_start(&job, nested, b);
    plush__job_wait(&job);
    for (int i = 0; i < 1000; i++) {
        assert_int_equal(a->hits[i], 2);
        assert_int_equal(b->hits[i], 1);
    }
    free(a), free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_more_jobs_than_kept_threads),
        cmocka_unit_test(test_jobs_reuse_threads),
        cmocka_unit_test(test_two_halves_cover_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
