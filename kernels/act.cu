/* act.cu: grid-stride element-wise kernels */
#include "common.cuh"
#include "act.cuh"

__global__ void swiglu(const float *__restrict__ g, const float *__restrict__ u, int64_t n,
		       uint16_t *__restrict__ y)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
		put_split(y, n, i, silu(g[i]) * u[i]);
}

__global__ void to_bf16(const float *__restrict__ x, int64_t n, uint16_t *__restrict__ y)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
		put_split(y, n, i, x[i]);
}

static unsigned blocks_for(int64_t n)
{
	int64_t b = (n + 255) / 256, cap = (int64_t)tf_cuda_sms() * 16;
	return (unsigned)(b < cap ? b : cap);
}

int tf_cuda_swiglu(const float *g, const float *u, int64_t n, uint16_t *y)
{
	if (n <= 0)
		return 0;
	swiglu<<<blocks_for(n), 256, 0, tf_cuda_stream_get()>>>(g, u, n, y);
	LAUNCH_CHECK();
	return 0;
}

int tf_cuda_to_bf16(const float *x, int64_t n, uint16_t *y)
{
	if (n <= 0)
		return 0;
	to_bf16<<<blocks_for(n), 256, 0, tf_cuda_stream_get()>>>(x, n, y);
	LAUNCH_CHECK();
	return 0;
}
