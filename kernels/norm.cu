/* norm.cu: a block per row; the sum of squares is a fixed-order block sum,
 * so a row's result does not depend on the other rows of the call */
#include "common.cuh"
#include "norm.cuh"

__global__ void rmsnorm_f32(const float *__restrict__ x, const float *__restrict__ w, int d, float eps,
			    float *y32, uint16_t *__restrict__ y16, int64_t plane)
{
	pdl_wait();
	pdl_trigger();
	__shared__ float sh[32];
	const int64_t row = blockIdx.x;
	const float *xr = x + row * d;
	float ss = 0;

	for (int i = threadIdx.x; i < d; i += blockDim.x)
		ss += xr[i] * xr[i];
	ss = block_sum(ss, sh);
	const float inv = 1.0f / sqrtf(ss / (float)d + eps);
	for (int i = threadIdx.x; i < d; i += blockDim.x) {
		float v = xr[i] * inv * w[i];
		if (y16)
			put_split(y16, plane, d, row * d + i, v);
		if (y32)
			y32[row * d + i] = v;
	}
}

__global__ void gated_norm_f32(const float *__restrict__ o, const float *__restrict__ z, int64_t ldz, int heads,
			       const float *__restrict__ w, int d, float eps, uint16_t *__restrict__ y, int64_t plane)
{
	pdl_wait();
	pdl_trigger();
	__shared__ float sh[32];
	const int64_t row = blockIdx.x;
	const float *orow = o + row * d, *zrow = z + row / heads * ldz + row % heads * d;
	float ss = 0;

	for (int i = threadIdx.x; i < d; i += blockDim.x)
		ss += orow[i] * orow[i];
	ss = block_sum(ss, sh);
	const float inv = 1.0f / sqrtf(ss / (float)d + eps);
	for (int i = threadIdx.x; i < d; i += blockDim.x)
		put_split(y, plane, d, row * d + i, orow[i] * inv * w[i] * silu(zrow[i]));
}

static int threads_for(int d)
{
	int t = 32;
	while (t < d && t < 1024)
		t *= 2;
	return t;
}

int tf_cuda_rmsnorm(const float *x, const float *w, int n, int d, float eps, float *y32, uint16_t *y16)
{
	if (n <= 0)
		return 0;
	LAUNCH(rmsnorm_f32, n, threads_for(d), x, w, d, eps, y32, y16, (int64_t)n * d);
	LAUNCH_CHECK();
	return 0;
}

int tf_cuda_gated_norm(const float *o, const float *z, int64_t ldz, const float *w, int n, int heads, int d,
		       float eps, uint16_t *y16)
{
	int rows = n * heads;

	if (rows <= 0)
		return 0;
	LAUNCH(gated_norm_f32, rows, threads_for(d), o, z, ldz, heads, w, d, eps, y16, (int64_t)rows * d);
	LAUNCH_CHECK();
	return 0;
}
