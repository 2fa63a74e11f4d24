/* conv.cu: a thread per channel walks the tokens in order, keeping the
 * window of K-1 earlier inputs in registers */
#include "common.cuh"
#include "conv.cuh"
#include "conv_win.cuh"

__global__ void conv_silu(const float *__restrict__ w, float *__restrict__ state, const float *__restrict__ m,
			  int64_t ldm, int n, int C, int K, float *__restrict__ c)
{
	pdl_wait();
	pdl_trigger();
	const int ch = blockIdx.x * blockDim.x + threadIdx.x;
	conv_win cw;
	if (ch >= C)
		return;
	cw.load(w, state, ch, C, K);
	for (int t = 0; t < n; t++)
		c[(int64_t)t * C + ch] = silu(cw.step(m[t * ldm + ch], K));
	cw.store(state, ch, C, K);
}

int tf_cuda_conv(const float *w, float *state, const float *m, int64_t ldm, int n, int C, int K, float *c)
{
	if (n <= 0)
		return 0;
	if (K < 2 || K > CONV_KMAX)
		return tf_err("conv kernel of %d taps is not supported on the GPU", K);
	LAUNCH(conv_silu, (C + 127) / 128, 128, w, state, m, ldm, n, C, K, c);
	LAUNCH_CHECK();
	return 0;
}
