/* gemm.cuh: prompt products, many input rows at once */
#ifndef TF_GEMM_CUH
#define TF_GEMM_CUH

#include <stdint.h>

#include "model/weight.h"

#ifdef __cplusplus
extern "C" {
#endif

/* y (n, w->rows) f32 = x (2, n, w->cols) split . W^T, plus y's old
 * value when accumulate; one GEMM for each plane of x. bf16 weights go straight to cuBLASLt; other forms are
 * dequantized to bf16 a slice of rows at a time first. The sums are in
 * cuBLASLt's order, which may depend on n: prompt mode only. */
int tf_cuda_gemm(const tf_weight *w, const uint16_t *x, int n, float *y, int accumulate);
/* the same with row i of y at y + i * ldy */
int tf_cuda_gemm_ld(const tf_weight *w, const uint16_t *x, int n, float *y, int64_t ldy, int accumulate);
/* out (rows, cols) bf16 = rows [r0, r0 + rows) of W dequantized */
int tf_cuda_dequant(const tf_weight *w, int64_t r0, int64_t rows, uint16_t *out);

#ifdef __cplusplus
}
#endif

#endif
