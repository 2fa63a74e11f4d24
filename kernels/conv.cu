/* conv.cu: a thread per channel walks the tokens in order, keeping the
 * window of K-1 earlier inputs in registers */
#include "common.cuh"
#include "conv.cuh"

#define KMAX 8

__global__ void conv_silu(const float *__restrict__ w, float *__restrict__ state, const float *__restrict__ m,
			  int64_t ldm, int n, int C, int K, float *__restrict__ c)
{
	pdl_wait();
	pdl_trigger();
	const int ch = blockIdx.x * blockDim.x + threadIdx.x;
	float win[KMAX], tap[KMAX];

	if (ch >= C)
		return;
	#pragma unroll
	for (int k = 0; k < KMAX; k++) {
		tap[k] = k < K ? w[(int64_t)ch * K + k] : 0.0f;
		win[k] = k < K - 1 ? state[(int64_t)k * C + ch] : 0.0f;
	}
	for (int t = 0; t < n; t++) {
		float x = m[t * ldm + ch], s = 0;
		#pragma unroll
		for (int k = 0; k < KMAX; k++)
			if (k < K)
				s += tap[k] * (k < K - 1 ? win[k] : x);
		c[(int64_t)t * C + ch] = silu(s);
		/* slide the window: drop the oldest, append x */
		#pragma unroll
		for (int k = 0; k < KMAX - 1; k++)
			if (k < K - 2)
				win[k] = win[k + 1];
		#pragma unroll
		for (int k = 0; k < KMAX; k++)
			if (k == K - 2)
				win[k] = x;
	}
	#pragma unroll
	for (int k = 0; k < KMAX; k++)
		if (k < K - 1)
			state[(int64_t)k * C + ch] = win[k];
}

int tf_cuda_conv(const float *w, float *state, const float *m, int64_t ldm, int n, int C, int K, float *c)
{
	if (n <= 0)
		return 0;
	if (K < 2 || K > KMAX)
		return tf_err("conv kernel of %d taps is not supported on the GPU", K);
	LAUNCH(conv_silu, (C + 127) / 128, 128, w, state, m, ldm, n, C, K, c);
	LAUNCH_CHECK();
	return 0;
}
