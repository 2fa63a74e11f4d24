/*
 * matmul.h: CPU products with weights in any tf_weight form.
 *
 * Every output element is one dot product summed in a fixed order (8 lanes,
 * then the lanes pairwise), the same whether the call has one input row or
 * many and whatever the thread count: decoding a position alone or inside a
 * window gives bit-identical results.
 */
#ifndef TF_MATMUL_H
#define TF_MATMUL_H

#include "model/weight.h"

/* y (n, w->rows) = x (n, w->cols) . W^T */
void tf_matmul(const tf_weight *w, const float *x, int64_t n, float *y);
/* the same product by dequantizing each row and tf_dot: the reference the
 * format kernels (mm_affine.c, mm_sign1.c, bf16) equal bit for bit */
void tf_matmul_generic(const tf_weight *w, const float *x, int64_t n, float *y);
/* out (cols) = row id of W, dequantized (embedding lookup) */
void tf_embed(const tf_weight *w, int64_t id, float *out);

/* sum of a[i]*b[i] in the fixed order every product in libtf uses */
float tf_dot(const float *a, const float *b, int64_t n);

#endif
