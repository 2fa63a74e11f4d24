/* rope.cu: one warp per (token, head): the norm's sum of squares by a fixed
 * butterfly, then each lane turns its pairs (j, j + rot/2); for a decode
 * step the same with the key and value rows appended to the cache */
#include "common.cuh"
#include "rope.cuh"

/* head vector v (D) of the token at position p: RMSNorm with factor w,
 * then rotary on its first rot dims; one warp */
static __device__ __forceinline__ void norm_rope(float *v, int D, const float *__restrict__ w, float eps, int rot,
						 float theta, float p)
{
	const int lane = threadIdx.x & 31;
	float ss = 0;
	for (int i = lane; i < D; i += WARP)
		ss += v[i] * v[i];
	ss = warp_sum(ss);
	const float inv = 1.0f / sqrtf(ss / (float)D + eps);
	for (int i = lane; i < D; i += WARP)
		v[i] = v[i] * inv * w[i];
	__syncwarp();
	/* the same formulas as the CPU: inv_freq = 1 / theta^(2j/rot) in fp32 */
	const int half = rot / 2;
	for (int j = lane; j < half; j += WARP) {
		float f = 1.0f / powf(theta, (float)(2 * j) / (float)rot);
		float ang = p * f, c = cosf(ang), s = sinf(ang);
		float a = v[j], b = v[j + half];
		v[j] = a * c - b * s;
		v[j + half] = b * c + a * s;
	}
	__syncwarp();
}

__global__ void qk_norm_rope(float *x, int n, int heads, int D, int64_t tstride, int64_t hstride,
			     const float *__restrict__ w, float eps, int rot, float theta,
			     const int64_t *__restrict__ pos)
{
	pdl_wait();
	pdl_trigger();
	const int64_t item = (int64_t)blockIdx.x * (blockDim.x / WARP) + (threadIdx.x >> 5);
	if (item >= (int64_t)n * heads)
		return;
	const int64_t t = item / heads, h = item % heads;
	norm_rope(x + t * tstride + h * hstride, D, w, eps, rot, theta, (float)(*pos + t));
}

/* one warp a (token, head): query heads normed and turned in place, key
 * heads normed, turned and copied into the cache, value heads copied */
__global__ void attn_prep(float *x, int n, int Hq, int Hkv, int D, int64_t T, const float *__restrict__ qw,
			  const float *__restrict__ kw, float eps, int rot, float theta, const int64_t *__restrict__ pos,
			  float *__restrict__ kc, float *__restrict__ vc)
{
	pdl_wait();
	pdl_trigger();
	const int lane = threadIdx.x & 31, per = Hq + 2 * Hkv;
	const int64_t item = (int64_t)blockIdx.x * (blockDim.x / WARP) + (threadIdx.x >> 5);
	if (item >= (int64_t)n * per)
		return;
	const int64_t t = item / per, at = *pos + t;
	const int h = (int)(item % per);
	float *q = x + t * T, *k = q + 2LL * Hq * D, *v = k + (int64_t)Hkv * D;
	const int64_t row = (int64_t)Hkv * D;
	if (h < Hq) {
		norm_rope(q + 2LL * h * D, D, qw, eps, rot, theta, (float)at);
	} else if (h < Hq + Hkv) {
		float *kh = k + (int64_t)(h - Hq) * D;
		norm_rope(kh, D, kw, eps, rot, theta, (float)at);
		for (int i = lane; i < D; i += WARP)
			kc[at * row + (int64_t)(h - Hq) * D + i] = kh[i];
	} else {
		const int64_t o = (int64_t)(h - Hq - Hkv) * D;
		for (int i = lane; i < D; i += WARP)
			vc[at * row + o + i] = v[o + i];
	}
}

int tf_cuda_attn_prep(float *x, int n, int Hq, int Hkv, int D, int64_t T, const float *qw, const float *kw,
		      float eps, int rot, float theta, const int64_t *pos, float *kc, float *vc)
{
	int64_t items = (int64_t)n * (Hq + 2 * Hkv);
	if (items <= 0)
		return 0;
	LAUNCH(attn_prep, (unsigned)((items + 7) / 8), 8 * WARP, x, n, Hq, Hkv, D, T, qw, kw, eps, rot, theta, pos,
	       kc, vc);
	LAUNCH_CHECK();
	return 0;
}

int tf_cuda_qk_norm_rope(float *x, int n, int heads, int D, int64_t tstride, int64_t hstride,
			 const float *w, float eps, int rot, float theta, const int64_t *pos)
{
	int64_t items = (int64_t)n * heads;

	if (items <= 0)
		return 0;
	LAUNCH(qk_norm_rope, (unsigned)((items + 7) / 8), 8 * WARP, x, n, heads, D, tstride, hstride, w, eps, rot,
	       theta, pos);
	LAUNCH_CHECK();
	return 0;
}
