/*
 * sample.cu: a block of 1024 threads per row. Each thread owns a contiguous
 * slice of the vocabulary, so "first maximum" and "running sum in id order"
 * become: per-slice results, then the slices in order.
 */
#include "common.cuh"
#include "sample.cuh"

#define ST 1024

__global__ void __launch_bounds__(ST) argmax_rows(const float *__restrict__ logits, int V, int32_t *out)
{
	__shared__ float bv[ST];
	__shared__ int bi[ST];
	const float *l = logits + (int64_t)blockIdx.x * V;
	const int per = (V + ST - 1) / ST, lo = threadIdx.x * per, hi = min(lo + per, V);
	float best = hi > lo ? l[lo] : -INFINITY;
	int idx = hi > lo ? lo : V;     /* V: an empty slice never wins */

	for (int i = lo + 1; i < hi; i++)
		if (l[i] > best) {
			best = l[i];
			idx = i;
		}
	bv[threadIdx.x] = best;
	bi[threadIdx.x] = idx;
	__syncthreads();
	/* tree over slices; ties go to the smaller id (the earlier slice) */
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
	if (threadIdx.x == 0)
		out[blockIdx.x] = bi[0] < V ? bi[0] : 0;
}

__global__ void __launch_bounds__(ST) sample_rows(const float *__restrict__ logits, int V, float temp,
						  const double *__restrict__ u, int32_t *out)
{
	__shared__ float sh[32];
	__shared__ double part[ST];
	__shared__ int pick;
	const float *l = logits + (int64_t)blockIdx.x * V;
	const int per = (V + ST - 1) / ST, lo = threadIdx.x * per, hi = min(lo + per, V);
	float mx = -INFINITY;
	double sum = 0;

	for (int i = lo; i < hi; i++)
		mx = fmaxf(mx, l[i]);
	mx = block_max(mx, sh);
	for (int i = lo; i < hi; i++)
		sum += expf((l[i] - mx) / temp);
	part[threadIdx.x] = sum;
	if (threadIdx.x == 0)
		pick = V - 1;
	__syncthreads();
	if (threadIdx.x == 0) {
		/* the slices' sums in id order, then the one slice that holds r */
		double total = 0, acc = 0, r;
		for (int s = 0; s < ST; s++)
			total += part[s];
		r = u[blockIdx.x] * total;
		for (int s = 0; s < ST; s++) {
			if (acc + part[s] > r) {
				int a = s * per, b = min(a + per, V);
				for (int i = a; i < b; i++)
					if ((acc += expf((l[i] - mx) / temp)) > r) {
						pick = i;
						break;
					}
				break;
			}
			acc += part[s];
		}
	}
	__syncthreads();
	if (threadIdx.x == 0)
		out[blockIdx.x] = pick;
}

int tf_cuda_argmax(const float *logits, int n, int V, int32_t *out)
{
	if (n <= 0)
		return 0;
	argmax_rows<<<n, ST, 0, tf_cuda_stream_get()>>>(logits, V, out);
	LAUNCH_CHECK();
	return 0;
}

int tf_cuda_sample(const float *logits, int n, int V, float temp, const double *u, int32_t *out)
{
	if (n <= 0)
		return 0;
	sample_rows<<<n, ST, 0, tf_cuda_stream_get()>>>(logits, V, temp, u, out);
	LAUNCH_CHECK();
	return 0;
}
