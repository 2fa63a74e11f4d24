/* mm_sign1.c: sign-bit products in tf_dot's summation order */
#include <string.h>

#include "mm_sign1.h"
#include "simd.h"

/* inputs in blocks of XBLOCK stay in cache while this thread's weight rows
 * stream past; within a block they go two at a time past each row */
#define XBLOCK 16

/* the weights of one byte of sign bits: s where bit k is set, -s where clear
 * (the sign bit of s flipped: -s exactly) */
static inline __attribute__((always_inline)) v8 signs8(unsigned b, u32x8 sbits)
{
	const u32x8 lane = { 0, 1, 2, 3, 4, 5, 6, 7 };
	u32x8 bit = ((u32x8){ b, b, b, b, b, b, b, b } >> lane) & 1;

	return (v8)(sbits ^ ((bit ^ 1) << 31));
}

/* one weight row against two input rows (x and x + cols), or one when two
 * is 0; accumulators are named variables so they stay in registers */
static inline __attribute__((always_inline)) void row_dot(const unsigned char *row, const void *scales,
							   int sdtype, int64_t r, int64_t cols, const float *x,
							   const int two, float *y, int64_t ystride)
{
	v8 a0 = { 0 }, a1 = { 0 }, a2 = { 0 }, a3 = { 0 }, b0 = { 0 }, b1 = { 0 }, b2 = { 0 }, b3 = { 0 };
	const float *x2 = x + cols;
	int64_t ng = cols / 128;

	for (int64_t g = 0; g < ng; g++) {
		float s = tf_scalar(scales, sdtype, r * ng + g);
		uint32_t si;
		memcpy(&si, &s, 4);
		u32x8 sb = { si, si, si, si, si, si, si, si };
		for (int64_t c = g * 128; c < (g + 1) * 128; c += 32) {
			const unsigned char *p = row + c / 8;
			v8 w0 = signs8(p[0], sb), w1 = signs8(p[1], sb), w2 = signs8(p[2], sb), w3 = signs8(p[3], sb);
			tf_acc32(&a0, &a1, &a2, &a3, w0, w1, w2, w3, x + c);
			if (two)
				tf_acc32(&b0, &b1, &b2, &b3, w0, w1, w2, w3, x2 + c);
		}
	}
	y[0] = tf_fold(a0, a1, a2, a3, 0);
	if (two)
		y[ystride] = tf_fold(b0, b1, b2, b3, 0);
}

__attribute__((target_clones("avx2", "default")))
void tf_mm_sign1(const tf_weight *w, const float *x, int64_t n, float *y, int64_t r0, int64_t r1)
{
	const unsigned char *d = w->data;
	int64_t cols = w->cols, rows = w->rows;

	for (int64_t i0 = 0; i0 < n; i0 += XBLOCK) {
		int64_t i1 = i0 + XBLOCK < n ? i0 + XBLOCK : n;
		for (int64_t r = r0; r < r1; r++) {
			const unsigned char *row = d + r * (cols / 8);
			int64_t i = i0;
			for (; i + 2 <= i1; i += 2)
				row_dot(row, w->scales, w->sdtype, r, cols, x + i * cols, 1, y + i * rows + r, rows);
			for (; i < i1; i++)
				row_dot(row, w->scales, w->sdtype, r, cols, x + i * cols, 0, y + i * rows + r, rows);
		}
	}
}
