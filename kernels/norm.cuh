/* norm.cuh: RMSNorm of rows, and the gated RMSNorm of Gated DeltaNet */
#ifndef TF_NORM_CUH
#define TF_NORM_CUH

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* y = x / sqrt(mean(x^2) + eps) * w for n rows of d (transformers'
 * Qwen3_5RMSNorm);
 * w (d) is the factor (1 + w for zero-centered files); writes y32 (n, d)
 * f32 and/or y16 (2, n, d) split (common.cuh), either may be NULL;
 * y32 may be x */
int tf_cuda_rmsnorm(const float *x, const float *w, int n, int d, float eps, float *y32, uint16_t *y16);
/* y16 (2, n, heads, d) split = rmsnorm(o) * w * silu(z) for each of
 * the n * heads rows of d of o (transformers' Qwen3_5RMSNormGated, w
 * plain, not 1 + w); z of token t, head h at
 * z + t * ldz + h * d */
int tf_cuda_gated_norm(const float *o, const float *z, int64_t ldz, const float *w, int n, int heads, int d,
		       float eps, uint16_t *y16);

#ifdef __cplusplus
}
#endif

#endif
