/*
 * pool.h: a fixed pool of worker threads for the CPU backend.
 *
 * tf_parallel(n, fn, ctx) calls fn(ctx, begin, end) on disjoint slices that
 * cover [0, n) and returns when all are done. The split never changes what a
 * single item computes, so results do not depend on the thread count.
 */
#ifndef TF_POOL_H
#define TF_POOL_H

#include <stdint.h>

typedef void (*tf_range_fn)(void *ctx, int64_t begin, int64_t end);

/* threads: 0 = TF_THREADS from the environment, else the online CPUs */
void tf_pool_init(int threads);
int tf_pool_threads(void);
void tf_parallel(int64_t n, tf_range_fn fn, void *ctx);

#endif
