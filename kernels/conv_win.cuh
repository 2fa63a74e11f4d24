/*
 * conv_win.cuh: one channel of the causal depthwise conv of Gated DeltaNet
 * held in registers (C++ only; conv.cu and gdn_in.cu step it token by
 * token): the K taps and the K-1 earlier inputs, oldest first.
 */
#ifndef TF_CONV_WIN_CUH
#define TF_CONV_WIN_CUH

#include "common.cuh"

#define CONV_KMAX 8     /* taps a window holds */

struct conv_win {
	float win[CONV_KMAX], tap[CONV_KMAX];

	/* taps w[ch] (C, K) and the state's K-1 rows (K-1, C) of channel ch */
	__device__ __forceinline__ void load(const float *w, const float *state, int ch, int C, int K)
	{
		#pragma unroll
		for (int k = 0; k < CONV_KMAX; k++) {
			tap[k] = k < K ? w[(int64_t)ch * K + k] : 0.0f;
			win[k] = k < K - 1 ? state[(int64_t)k * C + ch] : 0.0f;
		}
	}

	/* the conv at the next token x (before SiLU); x joins the window */
	__device__ __forceinline__ float step(float x, int K)
	{
		float s = 0;
		#pragma unroll
		for (int k = 0; k < CONV_KMAX; k++)
			if (k < K)
				s += tap[k] * (k < K - 1 ? win[k] : x);
		/* slide the window: drop the oldest, append x */
		#pragma unroll
		for (int k = 0; k < CONV_KMAX - 1; k++)
			if (k < K - 2)
				win[k] = win[k + 1];
		#pragma unroll
		for (int k = 0; k < CONV_KMAX; k++)
			if (k == K - 2)
				win[k] = x;
		return s;
	}

	/* the window back into the state */
	__device__ __forceinline__ void store(float *state, int ch, int C, int K)
	{
		#pragma unroll
		for (int k = 0; k < CONV_KMAX; k++)
			if (k < K - 1)
				state[(int64_t)k * C + ch] = win[k];
	}
};

#endif
