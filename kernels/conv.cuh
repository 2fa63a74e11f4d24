/* conv.cuh: the causal depthwise conv of Gated DeltaNet, with SiLU */
#ifndef TF_CONV_CUH
#define TF_CONV_CUH

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* c (n, C) = silu(sum_k w[ch][k] * ext[t + k][ch]) where ext is the state's
 * K-1 rows (oldest first) followed by m (n rows of C, token t's at m + t *
 * ldm); the state then holds the last K-1 rows of ext (transformers'
 * torch_causal_conv1d_update). w (C, K): tap K-1 multiplies the current
 * token. */
int tf_cuda_conv(const float *w, float *state, const float *m, int64_t ldm, int n, int C, int K, float *c);

#ifdef __cplusplus
}
#endif

#endif
