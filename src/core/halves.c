/* Work in two halves on two threads (plush__two_halves): the per-frame loops of the proxy path (patch
 * frames, skinning), whose items are independent. */
#include "core/common.h"

#include <pthread.h>

typedef struct half {
    void (*fn)(void *ctx, size_t from, size_t to);
    void *ctx;
    size_t from, to;
} half;

static void *run_half(void *arg)
{
    half *h = arg;
    h->fn(h->ctx, h->from, h->to);
    return NULL;
}

void plush__two_halves(void (*fn)(void *ctx, size_t from, size_t to), void *ctx, size_t count, size_t least)
{
    size_t mid = count / 2;
    half second = {fn, ctx, mid, count};
    pthread_t thread;
    if (count < least || count < 2 || pthread_create(&thread, NULL, run_half, &second) != 0) {
        fn(ctx, 0, count);
        return;
    }
    fn(ctx, 0, mid);
    pthread_join(thread, NULL);
}
