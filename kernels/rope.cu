/* rope.cu: one warp per (token, head): the norm's sum of squares by a fixed
 * butterfly, then each lane turns its pairs (j, j + rot/2) */
#include "common.cuh"
#include "rope.cuh"

__global__ void qk_norm_rope(float *x, int n, int heads, int D, int64_t tstride, int64_t hstride,
			     const float *__restrict__ w, float eps, int rot, float theta,
			     const int64_t *__restrict__ pos)
{
	pdl_wait();
	pdl_trigger();
	const int lane = threadIdx.x & 31;
	const int64_t item = (int64_t)blockIdx.x * (blockDim.x / WARP) + (threadIdx.x >> 5);
	if (item >= (int64_t)n * heads)
		return;
	const int64_t t = item / heads, h = item % heads;
	float *v = x + t * tstride + h * hstride;
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
	const float p = (float)(*pos + t);
	for (int j = lane; j < half; j += WARP) {
		float f = 1.0f / powf(theta, (float)(2 * j) / (float)rot);
		float ang = p * f, c = cosf(ang), s = sinf(ang);
		float a = v[j], b = v[j + half];
		v[j] = a * c - b * s;
		v[j + half] = b * c + a * s;
	}
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
