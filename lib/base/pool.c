/* pool.c: worker threads that split a range of work items */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "err.h"
#include "pool.h"

#define MAXTHREADS 256

static int nthreads;
static pthread_t threads[MAXTHREADS];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t start_cv = PTHREAD_COND_INITIALIZER, done_cv = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t call_mu = PTHREAD_MUTEX_INITIALIZER;   /* one tf_parallel at a time */

static struct {
	tf_range_fn fn;
	void *ctx;
	int64_t n;
	unsigned long gen;      /* bumped for every job */
	int pending;            /* workers still running the job */
} job;

static void slice(int i, int64_t n, int64_t *b, int64_t *e)
{
	*b = n * i / nthreads;
	*e = n * (i + 1) / nthreads;
}

static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	unsigned long seen = 0;

	for (;;) {
		int64_t b, e;

		pthread_mutex_lock(&mu);
		while (job.gen == seen)
			pthread_cond_wait(&start_cv, &mu);
		seen = job.gen;
		pthread_mutex_unlock(&mu);
		slice(id, job.n, &b, &e);
		if (b < e)
			job.fn(job.ctx, b, e);
		pthread_mutex_lock(&mu);
		if (--job.pending == 0)
			pthread_cond_signal(&done_cv);
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

void tf_pool_init(int n)
{
	if (nthreads)
		return;
	if (n <= 0) {
		const char *env = getenv("TF_THREADS");
		char *end;
		long v = env && *env ? strtol(env, &end, 10) : 0;
		/* a value that is not a count is refused, not read as 0 (all CPUs) */
		if (env && *env && (*end || v < 1 || v > 256))
			tf_usage_die("TF_THREADS must be a number of threads from 1 to 256, not '%s'", env);
		n = (int)v;
	}
	if (n <= 0)
		n = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (n <= 0)
		n = 1;
	if (n > MAXTHREADS)
		n = MAXTHREADS;
	nthreads = n;
	for (int i = 1; i < n; i++)
		if (pthread_create(&threads[i], NULL, worker, (void *)(intptr_t)i)) {
			nthreads = i;   /* run with the threads we got */
			break;
		}
}

int tf_pool_threads(void)
{
	if (!nthreads)
		tf_pool_init(0);
	return nthreads;
}

void tf_parallel(int64_t n, tf_range_fn fn, void *ctx)
{
	int64_t b, e;

	if (!nthreads)
		tf_pool_init(0);
	/* small jobs are not worth waking anyone */
	if (nthreads == 1 || n < 2) {
		if (n > 0)
			fn(ctx, 0, n);
		return;
	}
	pthread_mutex_lock(&call_mu);
	pthread_mutex_lock(&mu);
	job.fn = fn;
	job.ctx = ctx;
	job.n = n;
	job.pending = nthreads - 1;
	job.gen++;
	pthread_cond_broadcast(&start_cv);
	pthread_mutex_unlock(&mu);
	slice(0, n, &b, &e);
	if (b < e)
		fn(ctx, b, e);
	pthread_mutex_lock(&mu);
	while (job.pending)
		pthread_cond_wait(&done_cv, &mu);
	pthread_mutex_unlock(&mu);
	pthread_mutex_unlock(&call_mu);
}
