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

/*
 * The recurrent state is the one large thing a decode step reads and
 * writes again at the next step: 2 MiB a layer on the 9B, 48 MiB over its
 * 24 Gated DeltaNet layers, against 60 MiB of L2 on the H200. Between a
 * layer's two steps a token's 4.5 GB of weights stream through L2, so with
 * the default policy the state's lines were gone by then: its stores went
 * back to memory and its loads came from there. Its loads and stores carry
 * an L2 evict_last policy, so the weights' lines, each used once, leave
 * first. The policy on the loads only, or on the stores only, gains as
 * much as on both.
 *
 * Tried and slower:
 * - a policy for a part of the lines (createpolicy's fraction 0.5 or 0.8);
 * - a persisting set-aside of L2 for the state (37.5 MiB, the most the H200
 *   allows): the weights' streaming wants the whole of L2.
 */
static __device__ __forceinline__ uint64_t l2_keep(void)
{
	uint64_t p;
	asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
	return p;
}

/* the thread's rows of column j of a head's state Sh (Dk, Dv), in and out */
template <int RPT>
static __device__ __forceinline__ void state_get(const float *Sh, int Dv, int j, float *s)
{
	const int sl = threadIdx.x >> 5;
	const uint64_t keep = l2_keep();
	#pragma unroll
	for (int r = 0; r < RPT; r++)
		asm volatile("ld.global.L2::cache_hint.f32 %0, [%1], %2;"
			     : "=f"(s[r]) : "l"(Sh + (int64_t)(sl * RPT + r) * Dv + j), "l"(keep));
}

template <int RPT>
static __device__ __forceinline__ void state_put(float *Sh, int Dv, int j, const float *s)
{
	const int sl = threadIdx.x >> 5;
	const uint64_t keep = l2_keep();
	#pragma unroll
	for (int r = 0; r < RPT; r++)
		asm volatile("st.global.L2::cache_hint.f32 [%0], %1, %2;"
			     :: "l"(Sh + (int64_t)(sl * RPT + r) * Dv + j), "f"(s[r]), "l"(keep) : "memory");
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
