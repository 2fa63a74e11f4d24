/* act.cuh: element-wise steps between products */
#ifndef TF_ACT_CUH
#define TF_ACT_CUH

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* y (2, n, I) split = silu(g) * u, the SwiGLU gate (transformers'
 * Qwen3_5MLP), with
 * token t's g at gu + t * ld and its u at gu + t * ld + I */
int tf_cuda_swiglu(const float *gu, int64_t ld, int n, int64_t I, uint16_t *y);
/* y (2, n) split = x (common.cuh): x to the form products take */
int tf_cuda_to_bf16(const float *x, int64_t n, uint16_t *y);

#ifdef __cplusplus
}
#endif

#endif
