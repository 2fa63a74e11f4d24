/*
 * gemv.cuh: decode products y = x W^T for 1 to 16 input rows at once, with
 * W in any weight form (bf16, f16, f32, MLX affine 2..8 bits, sign1).
 *
 * Rows are independent: the arithmetic that makes y[i][r] reads only x[i]
 * and W and is the same whatever n is, so a position decoded alone or in a
 * window of up to 16 gives bit-identical results.
 *
 * 16-bit float weights keep two units of a lane in registers at once, the
 * next loading while this one sums, at one block a multiprocessor; the
 * quantized forms (float inputs) keep one unit and two blocks (gemv.cu).
 */
#ifndef TF_GEMV_CUH
#define TF_GEMV_CUH

#include <stdint.h>

#include "model/weight.h"

/* bytes of the split input of n elements (n a multiple of 32): the hi and lo
 * bf16 planes, the 32-column sums, the int16 scales and the int16 codes */
#define TF_SPLIT_BYTES(n) (6 * (int64_t)(n) + (int64_t)(n) / 4)

#ifdef __cplusplus
extern "C" {
#endif

/* y (n, w->rows) f32 = x . W^T, plus y's old value when accumulate (a
 * residual add); x the split input of (n, w->cols) (hi plane, lo plane,
 * the sums of 32 columns, the int16 form, as common.cuh describes); w a device view from tf_cuda_weight_upload; any
 * n >= 1 (taken 16 rows at a time) */
int tf_cuda_gemv(const tf_weight *w, const uint16_t *x, int n, float *y, int accumulate);
/* the same with row i of y at y + i * ldy (ldy >= w->rows): products that
 * fill column slices of one wider output */
/* kernel settings made once at start-up (tf_cuda_init calls it) */
int tf_cuda_gemv_setup(void);
int tf_cuda_gemv_ld(const tf_weight *w, const uint16_t *x, int n, float *y, int64_t ldy, int accumulate);

#ifdef __cplusplus
}
#endif

#endif
