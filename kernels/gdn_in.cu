/*
 * gdn_in.cu: conv, SiLU, q/k L2 norms and gates of a decode window in one
 * launch. A block of 128 threads owns 128 channels, a thread one channel,
 * and walks the tokens in order (conv_win.cuh). A q or k head of Dk <= 128
 * channels lies inside one block, so its sum of squares per token is a
 * warp sum, then (Dk > 32) the head's warps added in warp order through
 * shared memory: fixed orders, so a token's values do not depend on the
 * other tokens of the window. The last block computes the gates.
 */
#include "common.cuh"
#include "conv_win.cuh"
#include "gdn_in.cuh"

#define TILE 128

template <int DK>
__global__ void __launch_bounds__(TILE)
gdn_in(const float *__restrict__ w, float *__restrict__ state, const float *__restrict__ m, int64_t ldm, int n,
       int C, int K, float *__restrict__ c, float *b, float *a, int64_t ld, const float *__restrict__ A_log,
       const float *__restrict__ dt_bias, int Hk, int Hv)
{
	__shared__ float part[TILE / WARP];
	const int ch = blockIdx.x * TILE + threadIdx.x, warp = threadIdx.x / WARP;
	conv_win cw;

	/* the conv weights, and the state only this kernel writes (at the
	 * step before, which ended before this step began), need no result
	 * of the product it waits for: read them first */
	if (blockIdx.x < gridDim.x - 1)
		cw.load(w, state, ch, C, K);
	pdl_wait();
	pdl_trigger();
	if (blockIdx.x == gridDim.x - 1) {
		/* the gates: beta = sigmoid(b), g = -exp(A_log) softplus(a + dt_bias) */
		for (int i = threadIdx.x; i < n * Hv; i += blockDim.x) {
			const int h = i % Hv;
			const int64_t at = i / Hv * ld + h;
			const float av = a[at] + dt_bias[h];
			const float sp = av > 20.0f ? av : log1pf(expf(av));   /* torch's softplus */
			b[at] = sigmoid(b[at]);
			a[at] = -expf(A_log[h]) * sp;
		}
		return;
	}
	const int kd = Hk * DK;
	const bool qk = blockIdx.x * TILE < 2 * kd;     /* whole blocks: 2*kd is a multiple of TILE */
	const float scale = ch < kd ? rsqrtf((float)DK) : 1.0f;

	for (int t = 0; t < n; t++) {
		float v = silu(cw.step(m[t * ldm + ch], K));
		if (qk) {
			float ss = warp_sum(v * v);
			if (DK > WARP) {
				__syncthreads();        /* the previous token is done with part */
				if ((threadIdx.x & 31) == 0)
					part[warp] = ss;
				__syncthreads();
				const int w0 = warp / (DK / WARP) * (DK / WARP);
				ss = part[w0];
				#pragma unroll
				for (int k = 1; k < DK / WARP; k++)
					ss += part[w0 + k];
			}
			v *= 1.0f / sqrtf(ss + 1e-6f) * scale;
		}
		c[(int64_t)t * C + ch] = v;
	}
	cw.store(state, ch, C, K);
}

int tf_cuda_gdn_in(const float *w, float *state, const float *m, int64_t ldm, int n, int C, int K, float *c,
		   float *b, float *a, int64_t ld, const float *A_log, const float *dt_bias, int Hk, int Hv, int Dk)
{
	if (n <= 0)
		return 0;
	if (n > 16 || C % TILE || (Dk != 32 && Dk != 64 && Dk != 128) || K < 2 || K > CONV_KMAX)
		return 1;
	const unsigned blocks = C / TILE + 1;
	switch (Dk) {
	case 32: LAUNCH(gdn_in<32>, blocks, TILE, w, state, m, ldm, n, C, K, c, b, a, ld, A_log, dt_bias, Hk, Hv); break;
	case 64: LAUNCH(gdn_in<64>, blocks, TILE, w, state, m, ldm, n, C, K, c, b, a, ld, A_log, dt_bias, Hk, Hv); break;
	default: LAUNCH(gdn_in<128>, blocks, TILE, w, state, m, ldm, n, C, K, c, b, a, ld, A_log, dt_bias, Hk, Hv); break;
	}
	LAUNCH_CHECK();
	return 0;
}
