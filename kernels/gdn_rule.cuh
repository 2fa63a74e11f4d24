/*
 * gdn_rule.cuh: one token of the Gated DeltaNet delta rule on a block's 32
 * columns of one value head's state (C++ only; gdn.cu's step kernel and
 * gdn_win.cu's window kernel both run it, so their sums are the same).
 *
 * The block is SLICES warps; lane j of slice sl holds rows sl*RPT ..
 * sl*RPT+RPT-1 of column j in s. The two reductions over rows (S^T k and
 * S^T q) add the slices' partial sums in slice order through red, each in
 * its own half, so that the second need not wait for the first's reads.
 */
#ifndef TF_GDN_RULE_CUH
#define TF_GDN_RULE_CUH

#include "common.cuh"

#define SLICES 8

/* the thread's rows of column j of a head's state Sh (Dk, Dv), in and out */
template <int RPT>
static __device__ __forceinline__ void state_get(const float *Sh, int Dv, int j, float *s)
{
	const int sl = threadIdx.x >> 5;
	#pragma unroll
	for (int r = 0; r < RPT; r++)
		s[r] = Sh[(int64_t)(sl * RPT + r) * Dv + j];
}

template <int RPT>
static __device__ __forceinline__ void state_put(float *Sh, int Dv, int j, const float *s)
{
	const int sl = threadIdx.x >> 5;
	#pragma unroll
	for (int r = 0; r < RPT; r++)
		Sh[(int64_t)(sl * RPT + r) * Dv + j] = s[r];
}

/* S = alpha S; d = b (v - S^T k); S += k d^T; returns (S^T q)[j] in slice
 * 0 (q, k: the token's Dk = SLICES*RPT values, in shared memory, which the
 * caller has synced; red: 2 SLICES rows, free until the block's next
 * barrier after this) */
template <int RPT>
static __device__ __forceinline__ float delta_token(float *s, const float *qs, const float *ks, float v, float alpha,
						    float b, float (*red)[WARP])
{
	const int lane = threadIdx.x & 31, sl = threadIdx.x >> 5;

	// decay, then the memory's prediction of v: S^T k
	float mv = 0;
	#pragma unroll
	for (int r = 0; r < RPT; r++) {
		s[r] *= alpha;
		mv += s[r] * ks[sl * RPT + r];
	}
	red[sl][lane] = mv;
	__syncthreads();
	mv = 0;
	#pragma unroll
	for (int x = 0; x < SLICES; x++)
		mv += red[x][lane];
	const float d = b * (v - mv);

	// rank-1 update, then the read-out S^T q
	float op = 0;
	#pragma unroll
	for (int r = 0; r < RPT; r++) {
		s[r] += ks[sl * RPT + r] * d;
		op += s[r] * qs[sl * RPT + r];
	}
	red[SLICES + sl][lane] = op;
	__syncthreads();
	op = 0;
	if (sl == 0) {
		#pragma unroll
		for (int x = 0; x < SLICES; x++)
			op += red[SLICES + x][lane];
	}
	return op;
}

#endif
