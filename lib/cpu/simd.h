/*
 * simd.h: the 8-lane vectors of the CPU products and the one way they are
 * folded into a sum. Every product in libtf ends with tf_fold, so a dot
 * product rounds the same whichever kernel computed it.
 *
 * The helpers pass 32-byte vectors by value; they are always inlined, so
 * the AVX and non-AVX calling conventions never meet.
 */
#ifndef TF_SIMD_H
#define TF_SIMD_H

#include <stdint.h>
#include <string.h>

#include "model/weight.h"

#pragma GCC diagnostic ignored "-Wpsabi"

typedef float v8 __attribute__((vector_size(32)));
typedef uint32_t u32x8 __attribute__((vector_size(32)));
typedef int32_t i32x8 __attribute__((vector_size(32)));
typedef uint16_t u16x8 __attribute__((vector_size(16)));

/* the four accumulators pairwise, the lanes pairwise, then the tail */
static inline __attribute__((always_inline)) float tf_fold(v8 s0, v8 s1, v8 s2, v8 s3, float tail)
{
	float r;

	s0 = (s0 + s1) + (s2 + s3);
	r = ((s0[0] + s0[4]) + (s0[1] + s0[5])) + ((s0[2] + s0[6]) + (s0[3] + s0[7]));
	return r + tail;
}

/* four accumulators take 32 columns: a_k += w_k * x[8k .. 8k+7]; the
 * weight vectors are decoded once and shared by every input row */
static inline __attribute__((always_inline)) void tf_acc32(v8 *a0, v8 *a1, v8 *a2, v8 *a3, v8 w0, v8 w1,
							    v8 w2, v8 w3, const float *x)
{
	v8 xv;

	memcpy(&xv, x, 32); *a0 += w0 * xv;
	memcpy(&xv, x + 8, 32); *a1 += w1 * xv;
	memcpy(&xv, x + 16, 32); *a2 += w2 * xv;
	memcpy(&xv, x + 24, 32); *a3 += w3 * xv;
}

/* a scale or bias, inline: a call per group would spill every vector
 * register (they are all caller-saved) */
static inline __attribute__((always_inline)) float tf_scalar(const void *p, int sdtype, int64_t i)
{
	const unsigned char *b = p;
	uint16_t h;
	float f;

	if (sdtype == TF_BF16) {
		memcpy(&h, b + 2 * i, 2);
		return tf_bf16_to_f32(h);
	}
	if (sdtype == TF_F32) {
		memcpy(&f, b + 4 * i, 4);
		return f;
	}
	memcpy(&h, b + 2 * i, 2);
	return tf_f16_to_f32(h);
}

#endif
