/* matmul.c: y = x W^T on the CPU for every weight form, split over threads */
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "base/err.h"
#include "base/pool.h"
#include "matmul.h"
#include "mm_affine.h"
#include "mm_sign1.h"
#include "simd.h"


/* Four 8-lane accumulators hide the add latency; they are folded in a fixed
 * order and the tail is added last, so the result depends only on a and b.
 * target_clones lets the same source run as AVX2 where the CPU has it; with
 * contraction off (no FMA) both clones round identically. */
__attribute__((target_clones("avx2", "default")))
float tf_dot(const float *a, const float *b, int64_t n)
{
	v8 s0 = { 0 }, s1 = { 0 }, s2 = { 0 }, s3 = { 0 }, x, y;
	int64_t i = 0;
	float tail = 0;

	for (; i + 32 <= n; i += 32) {
		memcpy(&x, a + i, 32); memcpy(&y, b + i, 32); s0 += x * y;
		memcpy(&x, a + i + 8, 32); memcpy(&y, b + i + 8, 32); s1 += x * y;
		memcpy(&x, a + i + 16, 32); memcpy(&y, b + i + 16, 32); s2 += x * y;
		memcpy(&x, a + i + 24, 32); memcpy(&y, b + i + 24, 32); s3 += x * y;
	}
	for (; i + 8 <= n; i += 8) {
		memcpy(&x, a + i, 32); memcpy(&y, b + i, 32); s0 += x * y;
	}
	for (; i < n; i++)
		tail += a[i] * b[i];
	return tf_fold(s0, s1, s2, s3, tail);
}


/* bf16 to fp32 is exact (the 16 bits become the high half), so converting
 * in registers gives the same products, summed in the same order, as
 * tf_dot on a converted row; it just reads the weights once, at 2 bytes each */
#define bf16x8(p) ({ u16x8 h_; memcpy(&h_, (p), 16); (v8)(__builtin_convertvector(h_, u32x8) << 16); })

__attribute__((target_clones("avx2", "default")))
static float dot_bf16(const uint16_t *a, const float *b, int64_t n)
{
	v8 s0 = { 0 }, s1 = { 0 }, s2 = { 0 }, s3 = { 0 }, y;
	int64_t i = 0;
	float tail = 0;

	for (; i + 32 <= n; i += 32) {
		memcpy(&y, b + i, 32); s0 += bf16x8(a + i) * y;
		memcpy(&y, b + i + 8, 32); s1 += bf16x8(a + i + 8) * y;
		memcpy(&y, b + i + 16, 32); s2 += bf16x8(a + i + 16) * y;
		memcpy(&y, b + i + 24, 32); s3 += bf16x8(a + i + 24) * y;
	}
	for (; i + 8 <= n; i += 8) {
		memcpy(&y, b + i, 32); s0 += bf16x8(a + i) * y;
	}
	for (; i < n; i++)
		tail += tf_bf16_to_f32(a[i]) * b[i];
	return tf_fold(s0, s1, s2, s3, tail);
}

/* inputs are taken in blocks so a block of x stays in cache while every
 * weight row of this thread's range streams past it once */
#define XBLOCK 32

struct mm_job {
	const tf_weight *w;
	const float *x;         /* (n, cols) */
	int64_t n;
	float *y;               /* (n, rows) */
	int generic;            /* dequantize each row, then tf_dot (the reference) */
};

static void mm_range(void *ctx, int64_t r0, int64_t r1)
{
	struct mm_job *j = ctx;
	int64_t cols = j->w->cols, rows = j->w->rows;
	float *row;

	/* quantized weights compute on their codes, same bits as below */
	if (j->w->fmt == TF_AFFINE && !j->generic) {
		tf_mm_affine(j->w, j->x, j->n, j->y, r0, r1);
		return;
	}
	if (j->w->fmt == TF_SIGN1 && !j->generic) {
		tf_mm_sign1(j->w, j->x, j->n, j->y, r0, r1);
		return;
	}
	if (j->w->fmt == TF_BF16 && !j->generic) {
		/* 2-byte aligned rows are the rule for bf16 checkpoints; an odd
		 * offset (possible in MLX files) takes the generic path below */
		const uint16_t *w = j->w->data;
		if (!((uintptr_t)w & 1)) {
			for (int64_t i0 = 0; i0 < j->n; i0 += XBLOCK) {
				int64_t i1 = i0 + XBLOCK < j->n ? i0 + XBLOCK : j->n;
				for (int64_t r = r0; r < r1; r++)
					for (int64_t i = i0; i < i1; i++)
						j->y[i * rows + r] = dot_bf16(w + r * cols, j->x + i * cols, cols);
			}
			return;
		}
	}
	row = tf_malloc(cols * sizeof *row);     /* (cols) dequantized weight row */
	for (int64_t i0 = 0; i0 < j->n; i0 += XBLOCK) {
		int64_t i1 = i0 + XBLOCK < j->n ? i0 + XBLOCK : j->n;
		for (int64_t r = r0; r < r1; r++) {
			tf_weight_row(j->w, r, row);
			for (int64_t i = i0; i < i1; i++)
				j->y[i * rows + r] = tf_dot(row, j->x + i * cols, cols);
		}
	}
	free(row);
}

void tf_matmul(const tf_weight *w, const float *x, int64_t n, float *y)
{
	struct mm_job j = { w, x, n, y, 0 };

	tf_parallel(w->rows, mm_range, &j);
}

void tf_matmul_generic(const tf_weight *w, const float *x, int64_t n, float *y)
{
	struct mm_job j = { w, x, n, y, 1 };

	tf_parallel(w->rows, mm_range, &j);
}

void tf_embed(const tf_weight *w, int64_t id, float *out)
{
	tf_weight_row(w, id, out);
}
