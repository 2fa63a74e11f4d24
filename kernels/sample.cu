/*
 * sample.cu: a row's next id chosen on the device, the id tf_sample
 * (lib/decode/sample.c) chooses on the host from the same logits and uniform.
 *
 * Greedy and plain temperature draws: a block of 1024 threads per row. Each
 * thread owns a contiguous slice of the vocabulary, so "first maximum" and
 * "running sum in id order" become: per-slice results, then the slices in
 * order. The probabilities are the host's to the bit (libm_expf); their
 * sums, a slice's in double and then the slices', round apart from the
 * host's one running sum only in the last bits. Top-k and top-p draws are
 * sample_top.cu's.
 */
#include "common.cuh"
#include "expf_libm.cuh"
#include "sample.cuh"
#include "sample_top.cuh"

#define ST 1024

#define AB 64            /* blocks a row for the first argmax pass */

/* the first of the largest values among ids lo .. hi-1 of a row, as
 * (value, id) in bv[0], bi[0]; ties go to the smaller id */
static __device__ void argmax_block(const float *l, int lo, int hi, float *bv, int *bi)
{
	float best = -INFINITY;
	int idx = INT32_MAX;

	/* consecutive threads read consecutive ids (coalesced); each thread
	 * sees its ids in increasing order, so its first maximum wins */
	for (int i = lo + threadIdx.x; i < hi; i += ST)
		if (idx == INT32_MAX || l[i] > best) {
			best = l[i];
			idx = i;
		}
	bv[threadIdx.x] = best;
	bi[threadIdx.x] = idx;
	__syncthreads();
	for (int s = ST / 2; s > 0; s >>= 1) {
		if (threadIdx.x < s) {
			float ov = bv[threadIdx.x + s];
			int oi = bi[threadIdx.x + s];
			if (ov > bv[threadIdx.x] || (ov == bv[threadIdx.x] && oi < bi[threadIdx.x])) {
				bv[threadIdx.x] = ov;
				bi[threadIdx.x] = oi;
			}
		}
		__syncthreads();
	}
}

/* pass 1: AB blocks a row, each over a contiguous slice of ids */
__global__ void __launch_bounds__(ST) argmax_part(const float *__restrict__ logits, int V, float *pv, int *pi)
{
	pdl_wait();
	pdl_trigger();
	__shared__ float bv[ST];
	__shared__ int bi[ST];
	const int row = blockIdx.x / AB, part = blockIdx.x % AB, per = (V + AB - 1) / AB;
	const int lo = part * per, hi = min(lo + per, V);

	argmax_block(logits + (int64_t)row * V, lo, hi, bv, bi);
	if (threadIdx.x == 0) {
		pv[blockIdx.x] = bv[0];
		pi[blockIdx.x] = bi[0];
	}
}

/* pass 2: the slices of a row in order. A warp loads every slice's result
 * at once into shared memory, one trip to L2, and lane 0 takes them in
 * order from there. As one thread's loop over the slices in memory, each
 * id was loaded only where its compare took it, and the next compare
 * tests that id, so the loads made a chain of a trip a slice. Launched
 * with one warp a row. */
__global__ void argmax_join(const float *__restrict__ pv, const int *__restrict__ pi, int V, int32_t *out,
			    tf_draw_next nx)
{
	static_assert(AB % WARP == 0, "whole warps of a row's slices");
	__shared__ float v[AB];
	__shared__ int ix[AB];
	const tf_loop_count c = loop_count(nx);
	pdl_wait();
	pdl_trigger();
	const int row = blockIdx.x, lane = threadIdx.x;
	float a[AB / WARP];
	int b[AB / WARP];

	#pragma unroll
	for (int k = 0; k < AB / WARP; k++) {
		a[k] = pv[row * AB + k * WARP + lane];
		b[k] = pi[row * AB + k * WARP + lane];
	}
	#pragma unroll
	for (int k = 0; k < AB / WARP; k++) {
		v[k * WARP + lane] = a[k];
		ix[k * WARP + lane] = b[k];
	}
	__syncwarp();
	if (lane)
		return;
	float best = v[0];
	int idx = ix[0];
	for (int k = 1; k < AB; k++)
		if (idx == INT32_MAX || v[k] > best) {
			best = v[k];
			idx = ix[k];
		}
	const int32_t id = idx < V ? idx : 0;
	if (out)
		out[row] = id;
	put_next_at(nx, row, gridDim.x, id, c);
}

__global__ void __launch_bounds__(ST) sample_rows(const float *__restrict__ logits, int V,
						  const tf_draw_args *__restrict__ a, int32_t *out, tf_draw_next nx)
{
	pdl_wait();
	pdl_trigger();
	pdl_wait();
	pdl_trigger();
	__shared__ float sh[32];
	__shared__ double part[ST];
	__shared__ int pick;
	const float *l = logits + (int64_t)blockIdx.x * V, temp = a[blockIdx.x].temp;
	const int per = (V + ST - 1) / ST, lo = threadIdx.x * per, hi = min(lo + per, V);
	float mx = -INFINITY;
	double sum = 0;

	for (int i = lo; i < hi; i++)
		mx = fmaxf(mx, l[i]);
	mx = block_max(mx, sh);
	for (int i = lo; i < hi; i++)
		sum += libm_expf((l[i] - mx) / temp);
	part[threadIdx.x] = sum;
	if (threadIdx.x == 0)
		pick = V - 1;
	__syncthreads();
	if (threadIdx.x == 0) {
		/* the slices' sums in id order, then the one slice that holds r */
		double total = 0, acc = 0, r;
		for (int s = 0; s < ST; s++)
			total += part[s];
		r = a[blockIdx.x].u * total;
		for (int s = 0; s < ST; s++) {
			if (acc + part[s] > r) {
				int a = s * per, b = min(a + per, V);
				for (int i = a; i < b; i++)
					if ((acc += libm_expf((l[i] - mx) / temp)) > r) {
						pick = i;
						break;
					}
				break;
			}
			acc += part[s];
		}
	}
	__syncthreads();
	if (threadIdx.x == 0) {
		if (out)
			out[blockIdx.x] = pick;
		put_next(nx, blockIdx.x, gridDim.x, pick);
	}
}

/* ---- entries ---- */

static float *part_v;
static int *part_i;
static int part_rows;

int tf_cuda_draw_reserve(int n, int V)
{
	if (n > part_rows) {
		/* scratch of the draws, kept: a captured step points at it */
		part_rows = 0;
		if (tf_cuda_regrow((void **)&part_v, sizeof(float) * AB * n, "the draws") < 0 ||
		    tf_cuda_regrow((void **)&part_i, sizeof(int) * AB * n, "the draws") < 0)
			return -1;
		part_rows = n;
	}
	return tf_cuda_top_reserve(n, V);
}

int tf_cuda_argmax(const float *logits, int n, int V, int32_t *out, const tf_draw_next *next)
{
	cudaStream_t st = tf_cuda_stream_get();

	if (n <= 0)
		return 0;
	if (n > part_rows)
		return tf_err("argmax of %d rows without tf_cuda_draw_reserve", n);
	LAUNCH(argmax_part, n * AB, ST, logits, V, part_v, part_i);
	LAUNCH(argmax_join, n, 32, part_v, part_i, V, out, next_or_none(next));
	LAUNCH_CHECK();
	return 0;
}

int tf_cuda_sample(const float *logits, int n, int V, const tf_draw_args *a, int32_t *out, const tf_draw_next *next)
{
	if (n <= 0)
		return 0;
	LAUNCH(sample_rows, n, ST, logits, V, a, out, next_or_none(next));
	LAUNCH_CHECK();
	return 0;
}
