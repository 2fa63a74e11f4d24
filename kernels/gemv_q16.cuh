/*
 * gemv_q16.cuh: decode products of quantized weights (MLX affine 2..8 bits,
 * sign1) on the CUDA cores, with the inputs as int16 blocks of 32 columns
 * and the code-by-input products summed exactly in integers (dp2a).
 *
 * y[i][r] = sum over 32-column blocks b of
 *           scale(r, g(b)) * d[i][b] * sum_c q[r][c] qx[i][c]
 *         + bias(r, g(b)) * xs[i][b]
 * with d, qx the int16 form of the input and xs its exact 32-column sums
 * (common.cuh); a sign1 weight counts as scale * (2 [bit set] - 1).
 *
 * Rows are independent as in gemv.cuh: the sums for input row i read only
 * row i and are taken in an order neither n nor the grid changes.
 *
 * Tried and slower (gemv_q16.cu, gemv_q16_body.cuh, gemv_q16_forms.cuh):
 * - two blocks of 8 warps a multiprocessor, not one of 16;
 * - the first lane step loaded after the wait for the kernel before;
 * - a second lane step, or each next tile's first chunks, sent to L2;
 * - the whole of a tile sent to L2 where it passes 64 KiB;
 * - every chunk of a lane step checked against the row's end, and
 *   one-row passes asking at every step, where the row's steps are whole;
 * - tiled forms, four lanes a block each scaling its share (4-bit, 2-bit,
 *   sign1);
 * - SwiGLU's int16 outputs made by the last warp of a pair to finish,
 *   counted in shared memory.
 */
#ifndef TF_GEMV_Q16_CUH
#define TF_GEMV_Q16_CUH

#include <stdint.h>

#include "model/weight.h"

#ifdef __cplusplus
extern "C" {
#endif

/* where a product's inputs come from */
enum {
	TF_Q16_SPLIT,   /* the int16 form of a split input (common.cuh) */
	TF_Q16_NORM,    /* RMSNorm of f32 rows: x / sqrt(mean(x^2) + eps) * w */
	TF_Q16_GNORM,   /* gated RMSNorm of each head of d: norm(x) * w * silu(z) */
	TF_Q16_ROWS,    /* f32 rows as they are */
	TF_Q16_HSPLIT,  /* a split input of values whose heads of d the product norms (below) */
};

typedef struct {
	int kind;
	const uint16_t *split;  /* TF_Q16_SPLIT: the split input of the call's (n, cols) */
	const float *x;         /* the others: (n, cols) f32, row i at x + i * ldx
				   (x, w 16-byte aligned, ldx a multiple of 4) */
	int64_t ldx;
	const float *w;         /* TF_Q16_NORM: (cols) factors; TF_Q16_GNORM: (d) */
	float eps;
	const float *z;         /* TF_Q16_GNORM: gates, head h of row i at z + i * ldz + h * d */
	int64_t ldz;
	int d;                  /* TF_Q16_GNORM, TF_Q16_HSPLIT: head size (tf_cuda_gemv_q16_gnorm_takes,
				   tf_cuda_gemv_q16_hsplit_takes) */
	const float *sq;        /* TF_Q16_HSPLIT: (n, cols/32) sums of squares */
} tf_q16_in;

/*
 * TF_Q16_HSPLIT: the split input (split, as TF_Q16_SPLIT) holds values v
 * whose heads of d columns are to be scaled by 1/sqrt(mean(x^2) + eps) of
 * other values x of the head, and sq[i][b] is the sum of x^2 over 32-column
 * block b of row i: the product takes each block's scale and sum times
 * that factor of its head, the head's sq summed in block order. A block's
 * codes do not change with a positive factor and its scale and sum are
 * linear in it, so this is the product of the normed values, as with
 * TF_Q16_NORM. tf_cuda_gdn_win makes such an input for the gated RMSNorm
 * (v = o w silu(z), x = o), so that the output projection stages codes
 * rather than norming f32 rows in each of its blocks.
 */

/* what becomes of the products */
enum {
	TF_Q16_STORE,   /* y = p */
	TF_Q16_ACC,     /* y += p (a residual add) */
	TF_Q16_SWIGLU,  /* W stacks gate rows over as many up rows: y (n, rows/2) = silu(gate p) * up p */
};

/* y, row i at y + i * ldy, from the product above with the inputs of in,
 * made int16 per 32 columns (the norms computed in the same launch); any
 * n >= 1, taken 16 rows at a time. W must be one tf_cuda_gemv_q16_takes
 * accepts. */
int tf_cuda_gemv_q16(const tf_weight *w, const tf_q16_in *in, int n, float *y, int64_t ldy, int epi);
/* The SwiGLU product (TF_Q16_SWIGLU) with its outputs as their int16 form:
 * the scales, sums and codes of the split input of (n, rows/2) at split
 * (common.cuh; the bf16 planes are left as they are), what a product with
 * inputs of kind TF_Q16_SPLIT reads. The codes and scales are the ones the
 * f32 outputs would be given as TF_Q16_ROWS inputs; the sums are in another
 * order. Rows stay independent. */
int tf_cuda_gemv_q16_swiglu16(const tf_weight *w, const tf_q16_in *in, int n, uint16_t *split);
/* whether tf_cuda_gemv_q16_swiglu16 takes w: half its rows whole 32-column
 * blocks, not too many of them */
int tf_cuda_gemv_q16_swiglu16_takes(const tf_weight *w);
/* whether it takes w and is expected to be faster than the f32 outputs:
 * a block makes the 32 outputs of a block of them, two tiles of rows, so
 * the tiles go to blocks in pairs; not where that loads the busiest
 * block with more of them (few tiles a multiprocessor) */
int tf_cuda_gemv_q16_swiglu16_pays(const tf_weight *w);
/* whether tf_cuda_gemv_q16 takes w (same test it applies) */
int tf_cuda_gemv_q16_takes(const tf_weight *w);
/* whether TF_Q16_GNORM takes heads of d over cols: d a power of two from 4
 * to 128 dividing cols (a head is one warp's lanes or fewer) */
int tf_cuda_gemv_q16_gnorm_takes(int d, int64_t cols);
/* whether TF_Q16_HSPLIT takes heads of d over cols: 32, 64 or 128 columns
 * (1, 2 or 4 whole blocks) dividing them */
int tf_cuda_gemv_q16_hsplit_takes(int d, int64_t cols);
/* kernel settings made once at start-up */
int tf_cuda_gemv_q16_setup(void);

#ifdef __cplusplus
}
#endif

#endif
