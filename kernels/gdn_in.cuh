/* gdn_in.cuh: the inputs of the Gated DeltaNet recurrence for a decode
 * window in one launch: the conv, the q and k norms and the gates of
 * transformers' Qwen3_5GatedDeltaNet.forward */
#ifndef TF_GDN_IN_CUH
#define TF_GDN_IN_CUH

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* tf_cuda_conv followed by tf_cuda_gdn_prep, fused: c (n, C) = the conv of m
 * with SiLU, its q and k heads L2-normalized (q times 1/sqrt(Dk)); beta and
 * g in place of b and a. C = 2*Hk*Dk + Hv*Dv. Returns 1 (nothing launched)
 * where the shape is not one it takes: Dk a power of two from 32 to 128, C
 * a multiple of 128, n <= 16; the caller then runs the two kernels. */
int tf_cuda_gdn_in(const float *w, float *state, const float *m, int64_t ldm, int n, int C, int K, float *c,
		   float *b, float *a, int64_t ld, const float *A_log, const float *dt_bias, int Hk, int Hv, int Dk);

#ifdef __cplusplus
}
#endif

#endif
