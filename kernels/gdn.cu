/*
 * gdn.cu: the Gated DeltaNet recurrence.
 *
 * A block owns 32 columns j of one value head's state and keeps them in
 * registers for all the call's tokens: lane j of slice s holds rows
 * i = s*RPT .. s*RPT+RPT-1 of column j. Per token the two reductions over i
 * (S^T k and S^T q) add the 8 slices' partial sums in slice order through
 * shared memory. The state is read and written once per call, not once per
 * token, and 32-column blocks give Hv * Dv/32 blocks (192 for the 27B)
 * instead of Hv.
 */
#include "common.cuh"
#include "gdn_rule.cuh"
#include "gdn.cuh"

__global__ void gdn_prep(float *qkv, float *b, float *a, int64_t ld, const float *__restrict__ A_log,
			 const float *__restrict__ dt_bias, int n, int Hk, int Hv, int Dk, int Dv)
{
	pdl_wait();
	pdl_trigger();
	const int lane = threadIdx.x & 31;
	const int64_t item = (int64_t)blockIdx.x * (blockDim.x / WARP) + (threadIdx.x >> 5);
	const int64_t kd = (int64_t)Hk * Dk, C = 2 * kd + (int64_t)Hv * Dv;

	if (item < (int64_t)n * 2 * Hk) {
		/* q heads first, then k heads: x / sqrt(sum x^2 + 1e-6) * scale */
		const int64_t t = item / (2 * Hk), hh = item % (2 * Hk);
		float *x = qkv + t * C + hh * Dk;
		float scale = hh < Hk ? 1.0f / sqrtf((float)Dk) : 1.0f, ss = 0;
		for (int i = lane; i < Dk; i += WARP)
			ss += x[i] * x[i];
		ss = warp_sum(ss);
		const float inv = 1.0f / sqrtf(ss + 1e-6f) * scale;
		for (int i = lane; i < Dk; i += WARP)
			x[i] *= inv;
	}
	/* the gates: one thread per (token, value head) */
	const int64_t gi = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (gi < (int64_t)n * Hv) {
		const int h = gi % Hv;
		const int64_t at = gi / Hv * ld + h;
		float av = a[at] + dt_bias[h];
		float sp = av > 20.0f ? av : log1pf(expf(av));  /* torch's softplus */
		b[at] = sigmoid(b[at]);
		a[at] = -expf(A_log[h]) * sp;
	}
}

template <int RPT>
__global__ void __launch_bounds__(SLICES * WARP)
gdn_step(const float *__restrict__ qkv, const float *__restrict__ beta, const float *__restrict__ g, int64_t ld,
	 float *__restrict__ S, int n, int Hk, int Hv, int Dk, int Dv, float *__restrict__ o)
{
	const int lane = threadIdx.x & 31, sl = threadIdx.x >> 5;
	const int jt = Dv / WARP, h = blockIdx.x / jt, j = (blockIdx.x % jt) * WARP + lane;
	const int hk = h / (Hv / Hk);
	const int64_t kd = (int64_t)Hk * Dk, C = 2 * kd + (int64_t)Hv * Dv;
	float *Sh = S + (int64_t)h * Dk * Dv;
	float s[RPT];
	__shared__ float qs[SLICES * RPT], ks[SLICES * RPT], red[2 * SLICES][WARP];

	/* the state is this kernel's own, from an earlier step, so it is read
	 * while the kernel before (the conv and gates) still runs: that one
	 * lets this launch only once its own wait has returned, when every
	 * earlier kernel is complete */
	state_get<RPT>(Sh, Dv, j, s);
	pdl_wait();
	pdl_trigger();

	for (int t = 0; t < n; t++) {
		const float *q = qkv + (int64_t)t * C + hk * Dk, *k = q + kd;
		const float alpha = expf(g[t * ld + h]), b = beta[t * ld + h];
		const float v = qkv[(int64_t)t * C + 2 * kd + (int64_t)h * Dv + j];

		if (t)
			__syncthreads();        /* the previous token is done with qs, ks, red */
		for (int i = threadIdx.x; i < Dk; i += blockDim.x) {
			qs[i] = q[i];
			ks[i] = k[i];
		}
		__syncthreads();

		const float op = delta_token<RPT>(s, qs, ks, v, alpha, b, red);
		if (sl == 0)
			o[((int64_t)t * Hv + h) * Dv + j] = op;
	}
	state_put<RPT>(Sh, Dv, j, s);
}

int tf_cuda_gdn_prep(float *qkv, float *b, float *a, int64_t ld, const float *A_log, const float *dt_bias,
		     int n, int Hk, int Hv, int Dk, int Dv)
{
	int64_t warps = (int64_t)n * 2 * Hk, gates = (int64_t)n * Hv;
	int64_t blocks = (warps + 7) / 8;

	if (n <= 0)
		return 0;
	if ((gates + 255) / 256 > blocks)
		blocks = (gates + 255) / 256;
	LAUNCH(gdn_prep, (unsigned)blocks, 256, qkv, b, a, ld, A_log, dt_bias, n, Hk, Hv, Dk, Dv);
	LAUNCH_CHECK();
	return 0;
}

int tf_cuda_gdn_step(const float *qkv, const float *beta, const float *g, int64_t ld, float *S, int n, int Hk,
		     int Hv, int Dk, int Dv, float *o)
{
	unsigned blocks = (unsigned)(Hv * (Dv / WARP));
	cudaStream_t st = tf_cuda_stream_get();

	if (n <= 0)
		return 0;
	if (Dv % WARP || Hv % Hk)
		return tf_err("Gated DeltaNet with Dv %d and %d/%d heads is not supported on the GPU", Dv, Hk, Hv);
	switch (Dk) {
	case 32: LAUNCH(gdn_step<4>, blocks, SLICES * WARP, qkv, beta, g, ld, S, n, Hk, Hv, Dk, Dv, o); break;
	case 64: LAUNCH(gdn_step<8>, blocks, SLICES * WARP, qkv, beta, g, ld, S, n, Hk, Hv, Dk, Dv, o); break;
	case 128: LAUNCH(gdn_step<16>, blocks, SLICES * WARP, qkv, beta, g, ld, S, n, Hk, Hv, Dk, Dv, o); break;
	case 256: LAUNCH(gdn_step<32>, blocks, SLICES * WARP, qkv, beta, g, ld, S, n, Hk, Hv, Dk, Dv, o); break;
	default: return tf_err("Gated DeltaNet key dim %d is not supported on the GPU", Dk);
	}
	LAUNCH_CHECK();
	return 0;
}
