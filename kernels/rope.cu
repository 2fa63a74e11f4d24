/* rope.cu: one warp per (token, head): the norm's sum of squares by a fixed
 * butterfly, then each lane turns its pairs (j, j + rot/2); for a decode
 * step the same with the key and value rows appended to the cache. The
 * factors and turns are made before the wait for the kernel before. */
#include "common.cuh"
#include "rope.cuh"

#define ROPE_DMAX 512    /* head_dim a lane's registers take (attention's too) */

/* (rope_prepare and norm_rope: DW the floats a lane holds of a head, at
 * least D / WARP; DW past that costs each loop its tests) */

/* what a head vector's norm and rotary need that no kernel writes, made
 * before pdl_wait so that it overlaps the kernel before: the lane's norm
 * factors (from memory: a token's weights stream through L2) and the turns
 * of its pairs at position p (the position is copied in before the pass's
 * first kernel) */
struct rope_pre {
	float w[ROPE_DMAX / WARP], c[ROPE_DMAX / 2 / WARP], s[ROPE_DMAX / 2 / WARP];
};

template <int DW = ROPE_DMAX / WARP>
static __device__ __forceinline__ void rope_prepare(rope_pre &r, int D, const float *__restrict__ w, int rot,
						    const tf_rope_freq &fr, float p)
{
	const int lane = threadIdx.x & 31, half = rot / 2;

	#pragma unroll
	for (int k = 0; k < DW; k++)
		r.w[k] = lane + k * WARP < D ? w[lane + k * WARP] : 0.0f;
	/* the same formulas as the CPU: inv_freq = 1 / theta^(2j/rot) in fp32,
	 * or the table's (made once on the host, never written by a kernel, so
	 * read before the wait) with cos and sin times its scale */
	#pragma unroll
	for (int k = 0; k < DW / 2; k++) {
		const int j = lane + k * WARP;
		r.c[k] = r.s[k] = 0.0f;
		if (j < half && !fr.inv) {
			const float f = 1.0f / powf(fr.theta, (float)(2 * j) / (float)rot), ang = p * f;
			r.c[k] = cosf(ang);
			r.s[k] = sinf(ang);
		} else if (j < half) {
			const float ang = p * fr.inv[j];
			r.c[k] = cosf(ang) * fr.scale;
			r.s[k] = sinf(ang) * fr.scale;
		}
	}
}

/* head vector v (D) RMS-normed, then its first rot dims turned, with r
 * from rope_prepare, written back to v and (where it is not NULL) to also;
 * one warp, with sh (ROPE_DMAX floats of shared memory) its own.
 *
 * The head is read from v once and the turns take their pairs from sh.
 * Done in v, each step after the first read v back from L2, two trips
 * more.
 *
 * The multiply-adds are written out: left to the compiler, which products
 * it contracts may differ between the kernels that inline this, and their
 * values must be the same bits. */
template <int DW = ROPE_DMAX / WARP>
static __device__ __forceinline__ void norm_rope(float *v, int D, const rope_pre &r, float eps, int rot, float *sh,
						 float *also)
{
	const int lane = threadIdx.x & 31, half = rot / 2;
	float x[DW], ss = 0;

	#pragma unroll
	for (int k = 0; k < DW; k++)
		x[k] = lane + k * WARP < D ? v[lane + k * WARP] : 0.0f;
	#pragma unroll
	for (int k = 0; k < DW; k++)
		if (lane + k * WARP < D)
			ss = fmaf(x[k], x[k], ss);
	ss = warp_sum(ss);
	const float inv = 1.0f / sqrtf(ss / (float)D + eps);
	#pragma unroll
	for (int k = 0; k < DW; k++)
		if (lane + k * WARP < D)
			sh[lane + k * WARP] = x[k] * inv * r.w[k];
	__syncwarp();
	#pragma unroll
	for (int k = 0; k < DW / 2; k++) {
		const int j = lane + k * WARP;
		if (j < half) {
			const float a = sh[j], b = sh[j + half];
			sh[j] = fmaf(a, r.c[k], -(b * r.s[k]));
			sh[j + half] = fmaf(b, r.c[k], a * r.s[k]);
		}
	}
	__syncwarp();
	#pragma unroll
	for (int k = 0; k < DW; k++)
		if (lane + k * WARP < D) {
			v[lane + k * WARP] = sh[lane + k * WARP];
			if (also)
				also[lane + k * WARP] = sh[lane + k * WARP];
		}
}

#define ROPE_WARPS 8    /* warps a block of the kernels below */

static int shape_ok(int D, int rot)
{
	if (D > ROPE_DMAX || rot > D)
		return tf_err("rotary of %d dims of a %d-dim head is not supported on the GPU (head_dim at most %d)", rot,
			      D, ROPE_DMAX);
	return 0;
}

__global__ void qk_norm_rope(float *x, int n, int heads, int D, int64_t tstride, int64_t hstride,
			     const float *__restrict__ w, float eps, int rot, const tf_rope_freq fr,
			     const int64_t *__restrict__ pos)
{
	const int64_t item = (int64_t)blockIdx.x * (blockDim.x / WARP) + (threadIdx.x >> 5);
	const int64_t t = item / heads, h = item % heads;
	__shared__ float sh[ROPE_WARPS][ROPE_DMAX];
	rope_pre r;

	if (item < (int64_t)n * heads)
		rope_prepare(r, D, w, rot, fr, (float)(*pos + t));
	pdl_wait();
	pdl_trigger();
	if (item >= (int64_t)n * heads)
		return;
	norm_rope(x + t * tstride + h * hstride, D, r, eps, rot, sh[threadIdx.x >> 5], NULL);
}

/* one warp a (token, head): query heads normed and turned in place, key
 * heads normed, turned and copied into the cache, value heads copied.
 * DW: the floats a lane holds of a head, ROPE_DMAX / WARP for any D; EXACT:
 * D is DW lanes' floats exactly (heads of 64, 128 and 256), so that a lane's
 * loops stop at the head's end rather than testing each index past it */
template <int DW, bool EXACT>
__global__ void attn_prep(float *x, int n, int Hq, int Hkv, int Dr, int64_t T, const float *__restrict__ qw,
			  const float *__restrict__ kw, float eps, int rot, const tf_rope_freq fr,
			  const int64_t *__restrict__ pos,
			  float *kc0, float *vc0, const tf_kv_rows rows)
{
	const int D = EXACT ? DW * WARP : Dr;
	const int lane = threadIdx.x & 31, per = Hq + 2 * Hkv;
	const int64_t item = (int64_t)blockIdx.x * (blockDim.x / WARP) + (threadIdx.x >> 5);
	const int64_t t = item / per;
	const int h = (int)(item % per);
	__shared__ float sh[ROPE_WARPS][ROPE_DMAX];
	rope_pre r;

	if (item >= (int64_t)n * per) {
		pdl_wait();
		pdl_trigger();
		return;
	}
	/* row t of one sequence's window, or of its own (rows.cuh) */
	const int64_t at = rows.k ? rows.pos[t] : *pos + t;
	float *kc = rows.k ? rows.k[t] : kc0, *vc = rows.k ? rows.v[t] : vc0;
	if (h < Hq + Hkv)
		rope_prepare<DW>(r, D, h < Hq ? qw : kw, rot, fr, (float)at);
	pdl_wait();
	pdl_trigger();
	float *q = x + t * T, *k = q + 2LL * Hq * D, *v = k + (int64_t)Hkv * D;
	const int64_t row = (int64_t)Hkv * D;
	if (h < Hq) {
		norm_rope<DW>(q + 2LL * h * D, D, r, eps, rot, sh[threadIdx.x >> 5], NULL);
	} else if (h < Hq + Hkv) {
		norm_rope<DW>(k + (int64_t)(h - Hq) * D, D, r, eps, rot, sh[threadIdx.x >> 5],
			  kc + at * row + (int64_t)(h - Hq) * D);
	} else {
		const int64_t o = (int64_t)(h - Hq - Hkv) * D;
		for (int i = lane; i < D; i += WARP)
			vc[at * row + o + i] = v[o + i];
	}
}

static int attn_prep_launch(float *x, int n, int Hq, int Hkv, int D, int64_t T, const float *qw, const float *kw,
			    float eps, int rot, tf_rope_freq fr, const int64_t *pos, float *kc, float *vc,
			    const tf_kv_rows &rows)
{
	int64_t items = (int64_t)n * (Hq + 2 * Hkv);
	if (items <= 0)
		return 0;
	if (shape_ok(D, rot) < 0)
		return -1;
	const unsigned grid = (unsigned)((items + ROPE_WARPS - 1) / ROPE_WARPS);
	/* the kernel built for the head's size where there is one */
	auto k = D == 256 ? attn_prep<8, true> : D == 128 ? attn_prep<4, true> : D == 64 ? attn_prep<2, true>
		 : attn_prep<ROPE_DMAX / WARP, false>;
	LAUNCH(k, grid, ROPE_WARPS * WARP, x, n, Hq, Hkv, D, T, qw, kw, eps, rot, fr, pos, kc, vc, rows);
	LAUNCH_CHECK();
	return 0;
}

int tf_cuda_attn_prep(float *x, int n, int Hq, int Hkv, int D, int64_t T, const float *qw, const float *kw,
		      float eps, int rot, tf_rope_freq fr, const int64_t *pos, float *kc, float *vc)
{
	return attn_prep_launch(x, n, Hq, Hkv, D, T, qw, kw, eps, rot, fr, pos, kc, vc, tf_kv_rows{});
}

int tf_cuda_attn_prep_rows(float *x, int n, int Hq, int Hkv, int D, int64_t T, const float *qw, const float *kw,
			   float eps, int rot, tf_rope_freq fr, const tf_kv_rows *rows)
{
	return attn_prep_launch(x, n, Hq, Hkv, D, T, qw, kw, eps, rot, fr, NULL, NULL, NULL, *rows);
}

int tf_cuda_qk_norm_rope(float *x, int n, int heads, int D, int64_t tstride, int64_t hstride,
			 const float *w, float eps, int rot, tf_rope_freq fr, const int64_t *pos)
{
	int64_t items = (int64_t)n * heads;

	if (items <= 0)
		return 0;
	if (shape_ok(D, rot) < 0)
		return -1;
	LAUNCH(qk_norm_rope, (unsigned)((items + ROPE_WARPS - 1) / ROPE_WARPS), ROPE_WARPS * WARP, x, n, heads, D,
	       tstride, hstride, w, eps, rot, fr, pos);
	LAUNCH_CHECK();
	return 0;
}
