/* act.cu: grid-stride element-wise kernels */
#include "common.cuh"
#include "act.cuh"

__global__ void swiglu(const float *__restrict__ gu, int64_t ld, int64_t I, int64_t n,
		       uint16_t *__restrict__ y)
{
	pdl_wait();
	pdl_trigger();
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
		put_split(y, n, (int)(I & 31 ? 1 : 32), i, silu(gu[i / I * ld + i % I]) * gu[i / I * ld + I + i % I]);
}

__global__ void to_bf16(const float *__restrict__ x, int64_t n, uint16_t *__restrict__ y)
{
	pdl_wait();
	pdl_trigger();
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
		put_split(y, n, (int)(n & 31 ? 1 : 32), i, x[i]);
}

static unsigned blocks_for(int64_t n)
{
	int64_t b = (n + 255) / 256, cap = (int64_t)tf_cuda_sms() * 16;
	return (unsigned)(b < cap ? b : cap);
}

int tf_cuda_swiglu(const float *gu, int64_t ld, int rows, int64_t I, uint16_t *y)
{
	int64_t n = rows * I;

	if (n <= 0)
		return 0;
	LAUNCH(swiglu, blocks_for(n), 256, gu, ld, I, n, y);
	LAUNCH_CHECK();
	return 0;
}

int tf_cuda_to_bf16(const float *x, int64_t n, uint16_t *y)
{
	if (n <= 0)
		return 0;
	LAUNCH(to_bf16, blocks_for(n), 256, x, n, y);
	LAUNCH_CHECK();
	return 0;
}
