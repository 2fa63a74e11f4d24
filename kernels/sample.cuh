/* sample.cuh: choosing tokens on the device */
#ifndef TF_SAMPLE_CUH
#define TF_SAMPLE_CUH

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "model/config.h"
#include "decode/sample.h"

/* what a sampled draw of one row takes, in device memory: the kernels read
 * it when they run, so a captured draw replays with new values */
typedef struct {
	double u;               /* the uniform number in [0, 1) tf_sample takes */
	float temp;             /* > 0 */
	float top_p;            /* < 1: the fewest most likely ids reaching it */
	int32_t top_k;          /* in (0, V): the k most likely ids */
	int32_t pad;
} tf_draw_args;

/* the args of s's next draw (its uniform number taken from s) */
static inline tf_draw_args tf_draw_args_of(tf_sampler *s)
{
	tf_draw_args a = { 0 };

	a.u = tf_sample_uniform(s);
	a.temp = s->temp;
	a.top_p = s->top_p;
	a.top_k = s->top_k;
	return a;
}

/* makes the draws' scratch room for n rows of V; call before capturing a step */
int tf_cuda_draw_reserve(int n, int V);

/* where a loop of decode steps (tf_cuda_loop_begin) stands, in device
 * memory: each step's draw counts itself there */
typedef struct {
	int32_t step;                   /* steps drawn in this run of the loop */
	int32_t limit;                  /* steps it draws at most */
	int32_t stop;                   /* 1: it ends after drawing an end id */
	int32_t pad;
} tf_loop_count;

/* Each draw of n rows writes the ids to out (unless NULL) and, with next
 * non-NULL, also makes them the next decode step's inputs: next->ids[r] =
 * the id of row r and *next->pos += n. So a step that feeds its draw to the next needs no
 * copy from the host. In a loop of steps (loop set, one row) the draw also
 * puts its id in ring[step], moves the sampler on to the next step's (a
 * sampled draw reads args[0]; step s's are args[1 + s]), counts the step
 * and sets cond to whether the loop goes on: not past limit steps, not past
 * an end id (eos) when stop is set. */
typedef struct {
	int32_t *ids;                   /* (n) a pass's input ids */
	int64_t *pos;                   /* its first position */
	tf_loop_count *loop;            /* NULL outside a loop */
	int32_t *ring;                  /* (limit) each step's id: host memory, mapped */
	tf_draw_args *args;             /* (1 + limit) or NULL for a greedy loop */
	uint64_t cond;                  /* the loop's condition */
	int32_t neos;
	int32_t eos[TF_MAX_EOS];
} tf_draw_next;

#ifdef __CUDACC__
/* what a draw kernel is handed for next: *next, or no fields where NULL */
static inline tf_draw_next next_or_none(const tf_draw_next *next)
{
	tf_draw_next none = {};

	return next ? *next : none;
}

/* the loop's count as this step finds it (nothing outside a loop): no
 * kernel of the step writes it before its draw does, so a draw may load
 * it before it waits for the kernel before */
static __device__ __forceinline__ tf_loop_count loop_count(const tf_draw_next &nx)
{
	tf_loop_count none = {};

	return nx.loop ? *nx.loop : none;
}

/* row r's id (of n) where a draw feeds the next step (nx's fields set);
 * c: loop_count(nx), loaded ahead */
static __device__ __forceinline__ void put_next_at(const tf_draw_next &nx, int r, int n, int32_t id, tf_loop_count c)
{
	if (!nx.ids)
		return;
	nx.ids[r] = id;
	if (r)
		return;
	*nx.pos += n;
	if (!nx.loop)
		return;
	int go = c.step + 1 < c.limit;
	for (int e = 0; e < nx.neos; e++)
		if (c.stop && id == nx.eos[e])
			go = 0;
	nx.ring[c.step] = id;
	nx.loop->step = c.step + 1;
	if (go && nx.args)
		nx.args[0] = nx.args[2 + c.step];
	cudaGraphSetConditional(nx.cond, go);
}

static __device__ __forceinline__ void put_next(const tf_draw_next &nx, int r, int n, int32_t id)
{
	put_next_at(nx, r, n, id, r || !nx.ids ? tf_loop_count{} : loop_count(nx));
}
#endif

/* out[r] = the first index of the largest of logits (n, V) row r */
int tf_cuda_argmax(const float *logits, int n, int V, int32_t *out, const tf_draw_next *next);
/* out[r] = a draw from softmax(row r / temp) by the inverse CDF at u (a[r]):
 * the first id whose running sum, in id order, exceeds u times the total,
 * as tf_sample does without top-k or top-p (a[r].top_k and top_p unread) */
int tf_cuda_sample(const float *logits, int n, int V, const tf_draw_args *a, int32_t *out, const tf_draw_next *next);
/* top-k and top-p draws: sample_top.cuh */

#ifdef __cplusplus
}
#endif

#endif
