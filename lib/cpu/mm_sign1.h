/*
 * mm_sign1.h: y = x W^T straight from sign bits.
 *
 * Eight sign bits become eight copies of the group's scale with the sign
 * flipped where the bit is clear (w = bit ? s : -s, exactly what
 * tf_weight_row gives), and each output is summed in tf_dot's fixed order:
 * bit for bit the dequantize-then-tf_dot result, for one input row or many.
 */
#ifndef TF_MM_SIGN1_H
#define TF_MM_SIGN1_H

#include "model/weight.h"

/* y (n, w->rows): columns r0..r1-1 of x (n, w->cols) . W^T */
void tf_mm_sign1(const tf_weight *w, const float *x, int64_t n, float *y, int64_t r0, int64_t r1);

#endif
