/*
 * mm_affine.h: y = x W^T straight from MLX affine codes.
 *
 * No dequantized copy of W: eight codes at a time become eight floats in
 * registers, w = s*q + b exactly as tf_weight_row computes it, and each
 * output is summed in tf_dot's fixed order (four 8-lane accumulators over
 * blocks of 32, folded pairwise). So the result is bit for bit the one of
 * dequantize-then-tf_dot, for one input row or many, on any thread count.
 */
#ifndef TF_MM_AFFINE_H
#define TF_MM_AFFINE_H

#include "model/weight.h"

/* y (n, w->rows): columns r0..r1-1 of x (n, w->cols) . W^T */
void tf_mm_affine(const tf_weight *w, const float *x, int64_t n, float *y, int64_t r0, int64_t r1);

#endif
