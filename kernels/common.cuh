/*
 * common.cuh: what every kernel file shares, C++ only (never included from
 * lib/): the one status check for every CUDA-family call, the stream all
 * work goes to, and small device helpers (bf16, codes, reductions).
 *
 * Library rule: a failed call records a message through tf_err() and the
 * entry point returns -1; only programs exit.
 */
#ifndef TF_KERNELS_COMMON_CUH
#define TF_KERNELS_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>

/* err.h is C11; its _Noreturn is GNU noreturn in C++ */
#define _Noreturn __attribute__((noreturn))
extern "C" {
#include "base/err.h"
#include "model/weight.h"
}
#undef _Noreturn
#include "runtime.cuh"

/* records "CUDA call failed: WHY (STMT in FUNC at FILE:LINE)"; returns -1 */
int tf_cuda_fail(const char *stmt, const char *func, const char *file, int line, const char *why);

/* one check for cudaError_t and cublasStatus_t (ggml's CUDA_CHECK_GEN): the
 * statement's text, function, file and line go into the message */
#define TF_CHECK_GEN(stmt, success, strfn) \
	do { \
		auto err_ = (stmt); \
		if (err_ != (success)) \
			return tf_cuda_fail(#stmt, __func__, __FILE__, __LINE__, strfn(err_)); \
	} while (0)
#define CUDA_CHECK(stmt)   TF_CHECK_GEN(stmt, cudaSuccess, cudaGetErrorString)
#define CUBLAS_CHECK(stmt) TF_CHECK_GEN(stmt, CUBLAS_STATUS_SUCCESS, cublasLtGetStatusString)
/* after every launch: a bad configuration shows here, a fault at the next sync */
#define LAUNCH_CHECK()     CUDA_CHECK(cudaGetLastError())

/* the stream every launch and copy goes to, so one capture records a step */
cudaStream_t tf_cuda_stream_get(void);
/* multiprocessors of the device, for grid sizing */
int tf_cuda_sms(void);

#define WARP 32

/*
 * Programmatic dependent launch (PTX griddepcontrol, CUDA 12.3+ in graphs):
 * kernels of a step are launched so that the next one's blocks may start
 * while this one finishes. Every kernel calls pdl_wait() before it reads
 * anything an earlier kernel wrote (it returns once that kernel has
 * completed and its writes are visible); what needs no earlier result (a
 * product's weights, norm factors, a position copied in before the pass's
 * first kernel) can be loaded before it, which hides the gap between
 * kernels, and lines can be sent to L2 (prefetch_l2) whatever wrote them.
 * pdl_trigger() lets the next kernel launch. Both are no-ops for a
 * kernel launched without the attribute.
 */
static __device__ __forceinline__ void pdl_wait(void)
{
	asm volatile("griddepcontrol.wait;" ::: "memory");
}

static __device__ __forceinline__ void pdl_trigger(void)
{
	asm volatile("griddepcontrol.launch_dependents;");
}

/*
 * "This block is done" for a last-block-to-arrive count: an add with
 * release semantics at GPU scope (atom.release.gpu), so the thread's
 * earlier reads and writes, and after a __syncthreads the block's, are
 * ordered before it. __threadfence() before a relaxed atomicAdd orders
 * the same at more cost: it is a sequentially consistent fence
 * (MEMBAR.SC.GPU, and an L1 invalidate), where release is MEMBAR.ALL.GPU.
 * gdn_win's count is on the critical path once a layer, where the lighter
 * fence measured faster. No fence at all would not do: the block's reads
 * of the old conv state would then not be ordered before the count.
 */
static __device__ __forceinline__ unsigned atomic_add_release(unsigned *p, unsigned v)
{
	unsigned r;

	asm volatile("atom.release.gpu.global.add.u32 %0, [%1], %2;" : "=r"(r) : "l"(p), "r"(v) : "memory");
	return r;
}

/* the other side: what this thread reads after it has seen every block's
 * count is ordered after their releases (fence.acq_rel.gpu) */
static __device__ __forceinline__ void fence_acquire(void)
{
	asm volatile("fence.acq_rel.gpu;" ::: "memory");
}

/* the line of p from memory into L2, nothing waiting for it */
static __device__ __forceinline__ void prefetch_l2(const void *p)
{
	asm volatile("prefetch.global.L2 [%0];" :: "l"(p));
}

template <typename... KArgs, typename... Args>
static cudaError_t launch_k(void (*k)(KArgs...), dim3 grid, dim3 block, size_t smem, Args... args)
{
	cudaLaunchConfig_t cfg = {};
	cudaLaunchAttribute at[1];

	cfg.gridDim = grid;
	cfg.blockDim = block;
	cfg.dynamicSmemBytes = smem;
	cfg.stream = tf_cuda_stream_get();
	at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
	at[0].val.programmaticStreamSerializationAllowed = 1;
	cfg.attrs = at;
	cfg.numAttrs = 1;
	return cudaLaunchKernelEx(&cfg, k, static_cast<KArgs>(args)...);
}

/* launches kernel k on the stream (with PDL) and checks the launch */
#define LAUNCH(k, grid, block, ...) CUDA_CHECK(launch_k(k, dim3(grid), dim3(block), 0, __VA_ARGS__))

/* weights are read once per token: bypass L1 so the input rows, which every
 * warp reads, stay resident there (ld.global.nc.L1::no_allocate) */
static __device__ __forceinline__ uint4 ld_stream(const uint4 *p)
{
	uint4 v;
	asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
		     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
	return v;
}

static __device__ __forceinline__ float bf2f(uint16_t h)
{
	return __uint_as_float((uint32_t)h << 16);
}

/* round to nearest even, as tf_f32_to_bf16 on the CPU */
static __device__ __forceinline__ uint16_t f2bf(float f)
{
	return __bfloat16_as_ushort(__float2bfloat16_rn(f));
}

/* The int16 form's factors for a block whose largest magnitude is m > 0:
 * 32767 times the correctly rounded 1/m, and m times the float nearest
 * 1/32767. IEEE divisions, each a call to a routine with a slow path, cost
 * a sixth of the time of a kernel staging a normed 4096-column row; these
 * are a reciprocal and a multiply, and the host makes the same bits
 * (t/cudatest.h). |v| <= m gives codes within +-32767: m fl(1/m) is
 * within 2^-24 of 1. */
static __host__ __device__ __forceinline__ float q16_inv(float m)
{
#ifdef __CUDA_ARCH__
	return 32767.0f * __frcp_rn(m);
#else
	return 32767.0f * (1.0f / m);
#endif
}

static __host__ __device__ __forceinline__ float q16_scale(float m)
{
	return m * (1.0f / 32767.0f);
}

/* the int16 form of 32 values, v one a lane of a whole warp: the lane's
 * code, and in every lane the block's scale and the sum of the lanes' s
 * in a fixed butterfly (the order of warp_sum) */
static __device__ __forceinline__ int16_t q16_warp(float v, float s, float *scale, float *sum)
{
	float m = fabsf(v);

	for (int o = 16; o > 0; o >>= 1) {
		s += __shfl_xor_sync(0xffffffff, s, o);
		m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
	}
	*scale = q16_scale(m);
	*sum = s;
	return m > 0.0f ? (int16_t)__float2int_rn(v * q16_inv(m)) : 0;
}

/*
 * Activations that feed a product are stored "split": (2, n, d) bf16, the
 * value rounded to bf16 in the first plane (hi) and what that rounding left
 * out, rounded again, in the second (lo), then (n, d/32) f32 sums of hi + lo
 * over each 32 columns (when d is a multiple of 32). hi + lo carries 16
 * significant bits, so the tensor-core products see activations about as
 * exact as the CPU's fp32 ones (relative error near 2^-17 instead of bf16's
 * 2^-9), at the price of a second mma on the same weight fragments; the
 * sums let quantized products apply a group's bias once per group.
 *
 * After the sums come the same values as int16 for the CUDA-core products
 * of quantized weights (gemv_q16.cu): (n, d/32) f32 scales, then (n, d)
 * int16 codes, each 32 columns scaled by their largest magnitude, x ~
 * scale * q with q = rint(x * q16_inv(max|x|)) and scale q16_scale(max|x|)
 * (llama.cpp's q8_1 blocks with twice the bits: the error of int8 codes,
 * 2^-9 of a block's largest value, compounded through the recurrent state,
 * moved decode steps by a mean KL of 1e-3 from the CPU's).
 * TF_SPLIT_BYTES (gemv.cuh) is the size of the whole.
 */

/* the parts after the planes of a split input of size values: sums,
 * scales, codes */
struct split_parts {
	float *sums, *scales;
	int16_t *codes;
};

static __host__ __device__ __forceinline__ split_parts split_parts_of(const uint16_t *split, int64_t size)
{
	float *sums = (float *)(split + 2 * size), *scales = sums + size / 32;

	return { sums, scales, (int16_t *)(scales + size / 32) };
}

/* element i of a split input of size = n*d values: callers run it with
 * whole warps over 32 consecutive i starting at a multiple of 32 */
static __device__ __forceinline__ void put_split(uint16_t *plane, int64_t size, int d, int64_t i, float v)
{
	uint16_t h = f2bf(v), l = f2bf(v - bf2f(h));
	plane[i] = h;
	plane[size + i] = l;
	if ((d & 31) == 0) {
		const split_parts p = split_parts_of(plane, size);
		float sc, sm;
		p.codes[i] = q16_warp(v, bf2f(h) + bf2f(l), &sc, &sm);
		if ((threadIdx.x & 31) == 0) {
			p.sums[i >> 5] = sm;
			p.scales[i >> 5] = sc;
		}
	}
}

static __device__ __forceinline__ float half2f(uint16_t h)
{
	return __half2float(__ushort_as_half(h));
}

/* element i of a scale/bias vector stored as sdtype (weight.h) */
static __device__ __forceinline__ float load_scalar(const void *p, int sdtype, int64_t i)
{
	if (sdtype == TF_BF16)
		return bf2f(((const uint16_t *)p)[i]);
	if (sdtype == TF_F16)
		return half2f(((const uint16_t *)p)[i]);
	return ((const float *)p)[i];
}

/* code j of a row of B-bit codes, LSB-first across 32-bit words (as MLX
 * packs them: bits j*B .. j*B + B - 1 of the row) */
static __device__ __forceinline__ uint32_t code_at(const uint32_t *row, int64_t j, int bits)
{
	int64_t bit = j * bits;
	int s = bit & 31;
	uint32_t v = row[bit >> 5] >> s;

	if (s + bits > 32)
		v |= row[(bit >> 5) + 1] << (32 - s);
	return v & ((1u << bits) - 1);
}

/* element (r, c) of any weight form, dequantized to float; the slow path for
 * shapes and forms the fast kernels do not take, and for embedding rows */
static __device__ __forceinline__ float weight_at(const tf_weight &w, int64_t r, int64_t c)
{
	switch (w.fmt) {
	case TF_F32:
		return ((const float *)w.data)[r * w.cols + c];
	case TF_BF16:
		return bf2f(((const uint16_t *)w.data)[r * w.cols + c]);
	case TF_F16:
		return half2f(((const uint16_t *)w.data)[r * w.cols + c]);
	case TF_AFFINE: {
		const uint32_t *row = (const uint32_t *)w.data + r * (w.cols * w.bits / 32);
		int64_t gi = r * (w.cols / w.group) + c / w.group;
		float s = load_scalar(w.scales, w.sdtype, gi), b = load_scalar(w.biases, w.sdtype, gi);
		return s * (float)code_at(row, c, w.bits) + b;
	}
	case TF_SIGN1: {
		const uint8_t *row = (const uint8_t *)w.data + r * (w.cols / 8);
		float s = load_scalar(w.scales, w.sdtype, r * (w.cols / w.group) + c / w.group);
		return (row[c >> 3] >> (c & 7)) & 1 ? s : -s;
	}
	}
	return 0.0f;
}

/* sum over a warp in a fixed butterfly order: every lane gets the same value,
 * and the value depends only on the 32 inputs */
static __device__ __forceinline__ float warp_sum(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffff, v, o);
	return v;
}

/* warp_sum of the 32 values p[0 .. 31] (p[l] lane l's) in one thread:
 * level o of the butterfly leaves in lanes l and l ^ o the same sum of
 * theirs (a float add is commutative), so lanes l < o carry the level and
 * the last leaves lane 0's bits, which are every lane's. Why: a tile's
 * (row, input) sums met one warp each, ten instructions a warp for one
 * sum; here a thread takes a sum, a warp 32 of them. */
/* one level of the butterfly, then the next: O a template argument so that
 * every level unrolls and v stays in registers wherever it is inlined */
template <int O, int N>
static __device__ __forceinline__ void butterfly_fold(float (&v)[N])
{
	#pragma unroll
	for (int l = 0; l < O; l++)
		v[l] = v[l] + v[l + O];
	if constexpr (O > 1)
		butterfly_fold<O / 2>(v);
}

/* the butterfly's last levels over the N (32, or 16 when its first level
 * is already taken) values p[0 .. N-1], in one thread */
template <int N>
static __device__ __forceinline__ float serial_fold(const float *p)
{
	float v[N];

	#pragma unroll
	for (int l = 0; l < N; l++)
		v[l] = p[l];
	butterfly_fold<N / 2>(v);
	return v[0];
}

static __device__ __forceinline__ float serial_warp_sum(const float *p)
{
	return serial_fold<32>(p);
}

static __device__ __forceinline__ float warp_max(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
	return v;
}

/* sum (MAX: largest) over a block of blockDim.x threads (a multiple of 32,
 * at most 1024): warps fold, then warp 0 folds the warp results in warp
 * order; every thread gets the result. sh must hold 32 floats. */
template <bool MAX>
static __device__ __forceinline__ float block_fold(float v, float *sh)
{
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;

	v = MAX ? warp_max(v) : warp_sum(v);
	__syncthreads();
	if (lane == 0)
		sh[warp] = v;
	__syncthreads();
	v = lane < nw ? sh[lane] : MAX ? -INFINITY : 0.0f;
	return MAX ? warp_max(v) : warp_sum(v);
}

static __device__ __forceinline__ float block_sum(float v, float *sh)
{
	return block_fold<false>(v, sh);
}

static __device__ __forceinline__ float block_max(float v, float *sh)
{
	return block_fold<true>(v, sh);
}

static __device__ __forceinline__ float silu(float x)
{
	return x / (1.0f + expf(-x));
}

/* x sigmoid(x) with the approximate exp and division (0 where exp(-x)
 * overflows, the limit) */
static __device__ __forceinline__ float silu_fast(float x)
{
	return __fdividef(x, 1.0f + __expf(-x));
}

static __device__ __forceinline__ float sigmoid(float x)
{
	return 1.0f / (1.0f + expf(-x));
}

#endif
