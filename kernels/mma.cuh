/*
 * mma.cuh: what the tensor-core kernels share, C++ only: the bf16 mma,
 * asynchronous copies to shared memory, and f32 pairs rounded into the
 * bf16 pairs the mma takes.
 *
 * mma.m16n8k16 .bf16 fragments (PTX ISA, "Matrix Fragments for
 * mma.m16n8k16 with floating point type"), lane = 4 g + t:
 *   A (16x16, row major) a0 = (row g, k 2t, 2t+1), a1 = (row g+8, k 2t, 2t+1),
 *                        a2 = (row g, k 2t+8, 2t+9), a3 = (row g+8, k 2t+8, 2t+9)
 *   B (16x8, col major)  b0 = (k 2t, 2t+1; col g), b1 = (k 2t+8, 2t+9; col g)
 *   C (16x8, f32)        c0, c1 = (row g, col 2t, 2t+1), c2, c3 = (row g+8, same cols)
 * A pair's lower k (or col) sits in the register's low half.
 */
#ifndef TF_MMA_CUH
#define TF_MMA_CUH

#include "common.cuh"

/* 16 bytes global -> shared without registers (cp.async.cg: cached in L2
 * only, as streamed weights should be); zero-filled when !valid. The copies
 * complete in commit groups; a lane reads back only what it copied, so a
 * per-thread wait is enough (PTX ISA, "cp.async") */
static __device__ __forceinline__ void cp_async16(void *smem, const void *gmem, bool valid)
{
	uint32_t s = (uint32_t)__cvta_generic_to_shared(smem);
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(s), "l"(gmem), "r"(valid ? 16 : 0));
}

static __device__ __forceinline__ void cp_commit(void)
{
	asm volatile("cp.async.commit_group;");
}

template <int N>
static __device__ __forceinline__ void cp_wait(void)
{
	asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory");
}

/* c (16x8 f32) += a (16x16 bf16) b (16x8 bf16), fragments as above */
static __device__ __forceinline__ void mma_bf16(float *c, uint32_t a0, uint32_t a1, uint32_t a2,
						 uint32_t a3, uint32_t b0, uint32_t b1)
{
	asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
	    "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
	    : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
	    : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

/* (a, b) rounded to nearest even as one bf16 pair, a in the low half: one
 * cvt for two values (cvt.rn.bf16x2.f32 puts its first source in the high
 * half, so b goes first) */
static __device__ __forceinline__ uint32_t bf2_pack(float a, float b)
{
	uint32_t d;
	asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(b), "f"(a));
	return d;
}

/* a pair of f32 split as common.cuh's split activations are: hi their
 * bf16 rounding, lo the rounding of what hi left out, so hi + lo carries 16
 * significant bits and three mma (hi hi, hi lo, lo hi) give a product
 * about as exact as an f32 one */
static __device__ __forceinline__ void split2(float a, float b, uint32_t &hi, uint32_t &lo)
{
	hi = bf2_pack(a, b);
	lo = bf2_pack(a - __uint_as_float(hi << 16), b - __uint_as_float(hi & 0xffff0000u));
}

#endif
