/* mm_affine.c: affine-code products in tf_dot's summation order */
#include <string.h>

#include "mm_affine.h"
#include "simd.h"

/* codes 8k..8k+7 of a row as floats: 8 codes of B bits are exactly B bytes
 * (8B bits), the first four in the low 4B bits, the next four above them */
static inline __attribute__((always_inline)) v8 codes8(const unsigned char *p, const int B, int whole)
{
	uint64_t v = 0;
	uint32_t lo, hi;
	u32x8 t, sh = { 0, B, 2 * B, 3 * B, 0, B, 2 * B, 3 * B };

	if (B == 2 || B == 4) {
		/* the eight codes are one 16- or 32-bit word: one broadcast */
		uint32_t u = 0;
		u32x8 s1 = { 0, B, 2 * B, 3 * B, 4 * B, 5 * B, 6 * B, 7 * B };
		memcpy(&u, p, B);
		t = ((u32x8){ u, u, u, u, u, u, u, u } >> s1) & ((1u << B) - 1);
		return __builtin_convertvector((i32x8)t, v8);
	}
	/* one 8-byte load (the bytes past the B used are masked off) unless
	 * that would read past the end of the codes */
	if (whole || B == 8)
		memcpy(&v, p, 8);
	else
		memcpy(&v, p, B);
	lo = (uint32_t)v;
	hi = (uint32_t)(v >> (4 * B));
	t = (u32x8){ lo, lo, lo, lo, hi, hi, hi, hi };
	t = (t >> sh) & ((1u << B) - 1);
	return __builtin_convertvector((i32x8)t, v8);
}

/* one weight row against two input rows (x and x + cols), or one when
 * two is 0; accumulators are named variables so they stay in registers */
static inline __attribute__((always_inline)) void row_dot(const unsigned char *row, const unsigned char *end,
							   const void *scales, const void *biases, int sdtype,
							   int64_t r, int64_t cols, int group, const int B,
							   const float *x, const int two, float *y, int64_t ystride)
{
	v8 a0 = { 0 }, a1 = { 0 }, a2 = { 0 }, a3 = { 0 }, b0 = { 0 }, b1 = { 0 }, b2 = { 0 }, b3 = { 0 };
	const float *x2 = x + cols;
	int64_t ng = cols / group;

	for (int64_t g = 0; g < ng; g++) {
		float s = tf_scalar(scales, sdtype, r * ng + g), b = tf_scalar(biases, sdtype, r * ng + g);
		v8 sv = { s, s, s, s, s, s, s, s }, bv = { b, b, b, b, b, b, b, b };
		for (int64_t c = g * group; c < (g + 1) * group; c += 32) {
			const unsigned char *p = row + c / 8 * B;
			int whole = end - p >= 3 * B + 8;
			/* s * q + b, two roundings, as tf_weight_row (contraction is off) */
			v8 w0 = sv * codes8(p, B, whole) + bv, w1 = sv * codes8(p + B, B, whole) + bv,
			   w2 = sv * codes8(p + 2 * B, B, whole) + bv, w3 = sv * codes8(p + 3 * B, B, whole) + bv;
			tf_acc32(&a0, &a1, &a2, &a3, w0, w1, w2, w3, x + c);
			if (two)
				tf_acc32(&b0, &b1, &b2, &b3, w0, w1, w2, w3, x2 + c);
		}
	}
	y[0] = tf_fold(a0, a1, a2, a3, 0);
	if (two)
		y[ystride] = tf_fold(b0, b1, b2, b3, 0);
}

/* inputs in blocks of XBLOCK, so a block stays in cache while this
 * thread's weight rows stream past it once; within the block, inputs go
 * two at a time past each weight row, decoded in registers (AVX2's 16
 * registers hold 8 accumulators, 4 weight vectors and an input) */
#define XBLOCK 16

#define RANGE(B)                                                                                           \
	for (int64_t i0 = 0; i0 < n; i0 += XBLOCK) {                                                       \
		int64_t i1 = i0 + XBLOCK < n ? i0 + XBLOCK : n;                                            \
		for (int64_t r = r0; r < r1; r++) {                                                        \
			const unsigned char *row = d + r * (cols / 8 * B);                                 \
			int64_t i = i0;                                                                    \
			for (; i + 2 <= i1; i += 2)                                                        \
				row_dot(row, end, w->scales, w->biases, w->sdtype, r, cols, w->group, B,   \
					x + i * cols, 1, y + i * rows + r, rows);                          \
			for (; i < i1; i++)                                                                \
				row_dot(row, end, w->scales, w->biases, w->sdtype, r, cols, w->group, B,   \
					x + i * cols, 0, y + i * rows + r, rows);                          \
		}                                                                                          \
	}

__attribute__((target_clones("avx2", "default")))
void tf_mm_affine(const tf_weight *w, const float *x, int64_t n, float *y, int64_t r0, int64_t r1)
{
	const unsigned char *d = w->data, *end = d + w->rows * (w->cols / 8 * w->bits);
	int64_t cols = w->cols, rows = w->rows;

	switch (w->bits) {
	case 2: RANGE(2); break;
	case 3: RANGE(3); break;
	case 4: RANGE(4); break;
	case 5: RANGE(5); break;
	case 6: RANGE(6); break;
	case 8: RANGE(8); break;
	}
}
