/*
 * gemm_q16_mma.cuh: the int16-input products of quantized weights (MLX
 * affine 2..8 bits, sign1) for passes of 2 to 16 input rows on the tensor
 * cores, each weight read once for all the rows (C++ only: gemv_q16.cu
 * sends such passes here).
 *
 * The sum is gemv_q16.cuh's, y[i][r] = sum_b scale(r, g(b)) d[i][b] I[i][r][b]
 * + bias(r, g(b)) xs[i][b], and every row's outputs have the bits of the
 * same row alone in the one-row kernels: the block sums I are the same
 * exact integers (summed in another order, which an exact sum does not
 * see), and the float sums over them are taken in the one-row kernels'
 * order with their code (q16_float.cuh).
 */
#ifndef TF_GEMM_Q16_MMA_CUH
#define TF_GEMM_Q16_MMA_CUH

#include "model/weight.h"

#ifdef __cplusplus
extern "C" {
#endif
/* whether passes of 16 rows of w's products (epi: gemv_q16.cuh's; qo:
 * SwiGLU outputs as their int16 form) take the tensor-core kernels */
int tf_cuda_gemv_q16_mma_takes(const tf_weight *w, int epi, int qo);
#ifdef __cplusplus
}

#include "gemv_q16_body.cuh"

/* input rows a pass takes at most */
#define Q16_MMA_ROWS 16

/* whether the products of w (epi: gemv_q16.cuh's) with a pass of n rows
 * (2 to 16) take the tensor-core kernels: where they measured faster, 5
 * rows or more (3 for sign1 and 2-bit rows); TF_Q16_MMA=0 never, 1 every
 * pass of 2 or more (for comparison and tests) */
int q16_mma_takes(const tf_weight *w, int n, int epi, int qo);
/* op's product (n = op.n of 1 to Q16_MMA_ROWS rows, its src those rows';
 * op.yq: the SwiGLU outputs as their int16 form) on the tensor cores */
int q16_mma(const tf_weight *w, const q16_op &op, int epi);
/* the scratch buffers and kernel settings, once at start-up */
int q16_mma_setup(void);
#endif

#endif
