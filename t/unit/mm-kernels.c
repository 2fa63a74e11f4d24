/*
 * mm-kernels: the affine and sign1 kernels give, bit for bit, what
 * dequantizing each row and summing with tf_dot gives (tf_matmul_generic),
 * for every bits value, group and scale dtype, odd shapes, unaligned data,
 * and any number of input rows; a row computed inside a batch equals the
 * same row computed alone.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/pool.h"
#include "cpu/matmul.h"
#include "pack/quant.h"
#include "tap.h"

static uint64_t st = 88172645463325252ull;

static uint64_t rnd(void)
{
	st ^= st << 13;
	st ^= st >> 7;
	st ^= st << 17;
	return st;
}

static float frand(void)        /* [-1, 1) */
{
	return (rnd() >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

/* a weight of fmt with random codes, scales (some negative) and biases;
 * data placed one byte off alignment, as in unpadded MLX files */
static unsigned char *make(tf_weight *w, int fmt, int bits, int group, int sdtype, int64_t rows, int64_t cols)
{
	int64_t ng = cols / group, cb = rows * cols * bits / 8, sb = rows * ng * (sdtype == TF_F32 ? 4 : 2);
	unsigned char *buf = malloc(1 + cb + 2 * sb + 16);

	for (int64_t i = 0; i < 1 + cb; i++)
		buf[i] = rnd();
	for (int64_t i = 0; i < rows * ng; i++) {
		tf_put_scalar(buf + 1 + cb, sdtype, i, frand() * 0.05f);
		tf_put_scalar(buf + 1 + cb + sb, sdtype, i, frand() * 0.5f);
	}
	*w = (tf_weight){ .fmt = fmt, .rows = rows, .cols = cols, .bits = bits, .group = group, .sdtype = sdtype,
			  .data = buf + 1, .scales = buf + 1 + cb, .biases = fmt == TF_AFFINE ? buf + 1 + cb + sb : NULL };
	return buf;
}

static int check(const tf_weight *w, int64_t n)
{
	float *x = malloc(n * w->cols * sizeof *x), *y = malloc(n * w->rows * sizeof *y),
	      *yr = malloc(n * w->rows * sizeof *yr), *y1 = malloc(w->rows * sizeof *y1);
	int same = 1;

	for (int64_t i = 0; i < n * w->cols; i++)
		x[i] = frand();
	tf_matmul(w, x, n, y);
	tf_matmul_generic(w, x, n, yr);
	same = !memcmp(y, yr, n * w->rows * sizeof *y);
	/* the last input alone gives its row of the batch */
	tf_matmul(w, x + (n - 1) * w->cols, 1, y1);
	same = same && !memcmp(y1, y + (n - 1) * w->rows, w->rows * sizeof *y1);
	free(x); free(y); free(yr); free(y1);
	return same;
}

int main(void)
{
	static const int bits[] = { 2, 3, 4, 5, 6, 8 }, groups[] = { 32, 64, 128 },
			 sd[] = { TF_BF16, TF_F16, TF_F32 }, ns[] = { 1, 3, 4, 5, 37 };
	tf_weight w;
	unsigned char *buf;

	tf_pool_init(2);
	for (int b = 0; b < 6; b++)
		for (int g = 0; g < 3; g++) {
			int ok_all = 1;
			for (int s = 0; s < 3; s++) {
				buf = make(&w, TF_AFFINE, bits[b], groups[g], sd[s], 29, 3 * groups[g] + 128);
				for (int k = 0; k < 5; k++)
					ok_all &= check(&w, ns[k]);
				free(buf);
			}
			ok(ok_all, "affine %d-bit group %d: kernel equals dequantize + tf_dot, 1..37 rows", bits[b],
			   groups[g]);
		}
	for (int s = 0; s < 3; s++) {
		int ok_all = 1;
		buf = make(&w, TF_SIGN1, 1, 128, sd[s], 31, 640);
		for (int k = 0; k < 5; k++)
			ok_all &= check(&w, ns[k]);
		free(buf);
		ok(ok_all, "sign1 with %s scales: kernel equals dequantize + tf_dot, 1..37 rows",
		   sd[s] == TF_F32 ? "f32" : sd[s] == TF_BF16 ? "bf16" : "f16");
	}
	/* a zero scale gives -0 weights where the bit is clear: still equal */
	buf = make(&w, TF_SIGN1, 1, 128, TF_BF16, 4, 256);
	memset((unsigned char *)w.scales, 0, 4 * 2 * 2);
	ok(check(&w, 3), "sign1 with zero scales equals the reference");
	free(buf);
	return done();
}
