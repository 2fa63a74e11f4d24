/*
 * attn.cu: flash-decoding style attention. A block of 16 warps per (token,
 * head); warp w takes cache rows w, w+16, ... with an online softmax (running
 * max m, running sum l, running weighted values in registers, D/32 a lane),
 * so any context length runs in fixed memory; the partial states are
 * merged in warp order. A warp's rows are a chain of dependent trips (the
 * dot product's sum, then the softmax update), so a step's attention time
 * grows with the rows a warp takes: 16 warps rather than 4 cut it for the
 * contexts of a decode. Keys and values are read once per (token, head) as
 * whole 128-byte lines (lane-strided floats of a row). That suits decode
 * windows; a prompt pass of hundreds of rows goes to attn_prompt.cu, which
 * reads each cache tile once for a block of 64 rows, on the tensor cores.
 */
#include "common.cuh"
#include "attn.cuh"
#include "attn_prompt.cuh"
#include "env.h"

#define AW 16           /* warps a block */
#define DMAX 512        /* head_dim the registers hold */
/* passes of up to this many rows (decode steps and windows) stay here: their
 * rows must be bit-identical whatever the window; longer ones (prompts) go to
 * the tensor-core kernel of attn_prompt.cu where it takes the shape */
#define WINDOW_ROWS 16

/* the attention state's update by one cache row: its score dot (scaled),
 * its values vr */
template <int P>
static __device__ __forceinline__ void online(float dot, const float *vr, int per, float &m, float &l, float *acc)
{
	const float mn = fmaxf(m, dot), corr = expf(m - mn), p = expf(dot - mn);

	l = l * corr + p;
	#pragma unroll
	for (int i = 0; i < P; i++)
		if (i < per)
			acc[i] = acc[i] * corr + p * vr[i];
	m = mn;
}

/* P: D/32 rounded up to a power of two, the floats a lane holds of a row;
 * R: rows a warp takes at once */
template <int P, int R>
__global__ void __launch_bounds__(AW * WARP)
attn_decode(const float *__restrict__ qg, int64_t qstride, const float *__restrict__ kc, const float *__restrict__ vc,
	    const int64_t *__restrict__ pos, int Hq, int Hkv, int D, uint16_t *__restrict__ out)
{
	pdl_wait();
	pdl_trigger();
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	const int t = blockIdx.x / Hq, h = blockIdx.x % Hq, kvh = h / (Hq / Hkv);
	const int64_t len = *pos + t + 1;
	const float *q = qg + t * qstride + (int64_t)h * 2 * D, *gate = q + D;
	const float scale = 1.0f / sqrtf((float)D);
	const int64_t plane = (int64_t)gridDim.x * D;   /* n * Hq * D */
	const int per = D / WARP;       /* D is a multiple of 32 */
	float qr[P], acc[P], m = -INFINITY, l = 0;
	__shared__ float sm[AW], sl[AW], sacc[AW][DMAX];

	#pragma unroll
	for (int i = 0; i < P; i++) {
		qr[i] = i < per ? q[i * WARP + lane] : 0.0f;
		acc[i] = 0.0f;
	}
	/* rows s, s + AW, ... s + (R-1) AW at once: their loads and sums are
	 * in flight together, then the state takes them in order, as it would
	 * one by one (so R changes no result). Measured on the 9B 4-bit at
	 * depth 4096: 161 tokens/s one row at a time, 351 two, 374 four. */
	for (int64_t s = warp; s < len; s += R * AW) {
		float kr[R][P], vr[R][P], d[R];
		#pragma unroll
		for (int r = 0; r < R; r++) {
			const int64_t row = s + r * AW < len ? s + r * AW : s;
			const float *k = kc + (row * Hkv + kvh) * D, *v = vc + (row * Hkv + kvh) * D;
			#pragma unroll
			for (int i = 0; i < P; i++)
				if (i < per) {
					kr[r][i] = k[i * WARP + lane];
					vr[r][i] = v[i * WARP + lane];
				}
		}
		#pragma unroll
		for (int r = 0; r < R; r++) {
			d[r] = 0;
			#pragma unroll
			for (int i = 0; i < P; i++)
				if (i < per)
					d[r] += qr[i] * kr[r][i];
		}
		#pragma unroll
		for (int r = 0; r < R; r++)
			d[r] = warp_sum(d[r]) * scale;
		#pragma unroll
		for (int r = 0; r < R; r++)
			if (s + r * AW < len)
				online<P>(d[r], vr[r], per, m, l, acc);
	}
	if (lane == 0) {
		sm[warp] = m;
		sl[warp] = l;
	}
	#pragma unroll
	for (int i = 0; i < P; i++)
		if (i < per)
			sacc[warp][i * WARP + lane] = acc[i];
	__syncthreads();

	/* merge the warps' softmax states in warp order */
	float M = sm[0];
	for (int w = 1; w < AW; w++)
		M = fmaxf(M, sm[w]);
	float L = 0;
	for (int w = 0; w < AW; w++)
		if (sl[w] > 0)
			L += sl[w] * expf(sm[w] - M);
	const int64_t o = ((int64_t)t * Hq + h) * D;
	for (int d = threadIdx.x; d < D; d += AW * WARP) {
		float a = 0;
		for (int w = 0; w < AW; w++)
			if (sl[w] > 0)
				a += sacc[w][d] * expf(sm[w] - M);
		put_split(out, plane, D, o + d, a / L * sigmoid(gate[d]));
	}
}

/* TF_ATTN_PROMPT=0: prompt passes here too (for comparing) */
static int prompt_kernel(void)
{
	return !tf_env_off("TF_ATTN_PROMPT");
}

int tf_cuda_attention(const float *qg, int64_t qstride, const float *kc, const float *vc, const int64_t *pos,
		      int n, int Hq, int Hkv, int D, uint16_t *out)
{
	if (n <= 0)
		return 0;
	if (D % WARP || D > DMAX || Hq % Hkv)
		return tf_err("attention with head_dim %d and %d/%d heads is not supported on the GPU", D, Hq, Hkv);
	if (n > WINDOW_ROWS && tf_cuda_attn_prompt_takes(D, Hq, Hkv) && prompt_kernel())
		return tf_cuda_attn_prompt(qg, qstride, kc, vc, pos, n, Hq, Hkv, D, out);
	/* four rows at once while a lane holds 8 floats of a row or fewer; the
	 * registers of 512 threads take two of the widest */
	const int per = D / WARP;
	if (per <= 2)
		LAUNCH((attn_decode<2, 4>), n * Hq, AW * WARP, qg, qstride, kc, vc, pos, Hq, Hkv, D, out);
	else if (per <= 4)
		LAUNCH((attn_decode<4, 4>), n * Hq, AW * WARP, qg, qstride, kc, vc, pos, Hq, Hkv, D, out);
	else if (per <= 8)
		LAUNCH((attn_decode<8, 4>), n * Hq, AW * WARP, qg, qstride, kc, vc, pos, Hq, Hkv, D, out);
	else
		LAUNCH((attn_decode<DMAX / WARP, 2>), n * Hq, AW * WARP, qg, qstride, kc, vc, pos, Hq, Hkv, D, out);
	LAUNCH_CHECK();
	return 0;
}

__global__ void kv_append(const float *__restrict__ k, const float *__restrict__ v, int64_t ld, int64_t total,
			  int64_t row, const int64_t *__restrict__ pos, float *__restrict__ kc, float *__restrict__ vc)
{
	pdl_wait();
	pdl_trigger();
	const int64_t base = *pos * row;
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
		const int64_t src = i / row * ld + i % row;
		kc[base + i] = k[src];
		vc[base + i] = v[src];
	}
}

int tf_cuda_kv_append(const float *k, const float *v, int64_t ld, int n, int64_t row, const int64_t *pos,
		      float *kc, float *vc)
{
	int64_t total = n * row;

	if (total <= 0)
		return 0;
	LAUNCH(kv_append, (unsigned)((total + 255) / 256 < 1024 ? (total + 255) / 256 : 1024), 256,
	       k, v, ld, total, row, pos, kc, vc);
	LAUNCH_CHECK();
	return 0;
}
