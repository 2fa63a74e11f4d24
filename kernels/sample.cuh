/* sample.cuh: choosing tokens on the device */
#ifndef TF_SAMPLE_CUH
#define TF_SAMPLE_CUH

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "sample.h"

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
/* Each draw of n rows writes the ids to out and, with next non-NULL, also
 * makes them the next decode step's inputs: next->ids[r] = the id of row r
 * and *next->pos += n. So a step that feeds its draw to the next needs no
 * copy from the host. */
typedef struct {
	int32_t *ids;                   /* (n) a pass's input ids */
	int64_t *pos;                   /* its first position */
} tf_draw_next;

#ifdef __CUDACC__
/* what a draw kernel is handed for next: *next, or no fields where NULL */
static inline tf_draw_next next_or_none(const tf_draw_next *next)
{
	return next ? *next : tf_draw_next{ NULL, NULL };
}

/* row r's id (of n) where a draw feeds the next step (nx's fields set) */
static __device__ __forceinline__ void put_next(const tf_draw_next &nx, int r, int n, int32_t id)
{
	if (!nx.ids)
		return;
	nx.ids[r] = id;
	if (!r)
		*nx.pos += n;
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
