/* fill.cu: counter-based random fills (splitmix64 of the index), so the
 * same seed gives the same data whatever the launch shape */
#include "common.cuh"
#include "fill.cuh"

static __device__ __forceinline__ uint64_t mix(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

__global__ void fill_bits(uint64_t *p, uint64_t n, uint64_t seed)
{
	for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
	     i += (uint64_t)gridDim.x * blockDim.x)
		p[i] = mix(seed ^ mix(i));
}

__global__ void fill_tail(uint8_t *p, uint64_t from, uint64_t n, uint64_t seed)
{
	uint64_t i = from + threadIdx.x;
	if (i < n)
		p[i] = (uint8_t)mix(seed ^ mix(i));
}

__global__ void fill_bf16(uint16_t *p, uint64_t n, float scale, uint64_t seed)
{
	for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
	     i += (uint64_t)gridDim.x * blockDim.x) {
		float u = (float)(mix(seed ^ mix(i)) >> 40) * (1.0f / 8388608.0f) - 1.0f;
		p[i] = f2bf(u * scale);
	}
}

__global__ void fill_f32(float *p, uint64_t n, float v)
{
	for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
	     i += (uint64_t)gridDim.x * blockDim.x)
		p[i] = v;
}

int tf_cuda_fill_f32(float *p, uint64_t n, float v)
{
	fill_f32<<<tf_cuda_sms() * 4, 256, 0, tf_cuda_stream_get()>>>(p, n, v);
	LAUNCH_CHECK();
	return 0;
}

int tf_cuda_fill_bits(void *p, uint64_t bytes, uint64_t seed)
{
	uint64_t n = bytes / 8;
	cudaStream_t st = tf_cuda_stream_get();

	if (n)
		fill_bits<<<tf_cuda_sms() * 8, 256, 0, st>>>((uint64_t *)p, n, seed);
	if (bytes % 8)
		fill_tail<<<1, 8, 0, st>>>((uint8_t *)p, n * 8, bytes, seed);
	LAUNCH_CHECK();
	return 0;
}

int tf_cuda_fill_bf16(uint16_t *p, uint64_t n, float scale, uint64_t seed)
{
	fill_bf16<<<tf_cuda_sms() * 8, 256, 0, tf_cuda_stream_get()>>>(p, n, scale, seed);
	LAUNCH_CHECK();
	return 0;
}
