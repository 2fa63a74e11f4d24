/*
 * mm-bench: time tf_matmul (format kernels) against tf_matmul_generic
 * (dequantize a row, then tf_dot) on a random weight.
 *
 *   mm-bench FORMAT ROWS COLS N [REPS]     FORMAT: affine2..affine8, sign1, bf16
 *
 * Prints one line: format, shape, inputs, ms per product for both paths,
 * weight bytes read per second for the kernel, and the speedup.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/pool.h"
#include "cpu/matmul.h"
#include "pack/quant.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double bench(void (*f)(const tf_weight *, const float *, int64_t, float *), const tf_weight *w,
		    const float *x, int64_t n, float *y, int reps)
{
	double best = 1e30;

	for (int k = 0; k < reps; k++) {
		double t = now();
		f(w, x, n, y);
		t = now() - t;
		if (t < best)
			best = t;
	}
	return best;
}

int main(int argc, char **argv)
{
	tf_weight w = { 0 };
	int64_t rows, cols, n, bytes;
	int reps = argc > 5 ? atoi(argv[5]) : 5;
	unsigned char *buf;
	float *x, *y;
	double tk, tg;

	if (argc < 5) {
		fprintf(stderr, "usage: mm-bench FORMAT ROWS COLS N [REPS]\n");
		return 2;
	}
	rows = atoll(argv[2]);
	cols = atoll(argv[3]);
	n = atoll(argv[4]);
	if (!strncmp(argv[1], "affine", 6))
		w = (tf_weight){ .fmt = TF_AFFINE, .bits = atoi(argv[1] + 6), .group = 64 };
	else if (!strcmp(argv[1], "sign1"))
		w = (tf_weight){ .fmt = TF_SIGN1, .bits = 1, .group = 128 };
	else
		w = (tf_weight){ .fmt = TF_BF16, .bits = 16, .group = 1 };
	w.rows = rows;
	w.cols = cols;
	w.sdtype = TF_BF16;
	bytes = rows * cols * w.bits / 8 + (w.fmt == TF_BF16 ? 0 : 4 * rows * (cols / w.group));
	buf = malloc(bytes);
	for (int64_t i = 0; i < bytes; i++)
		buf[i] = rand();
	w.data = buf;
	if (w.fmt != TF_BF16) {
		w.scales = buf + rows * cols * w.bits / 8;
		w.biases = (unsigned char *)w.scales + 2 * rows * (cols / w.group);
		for (int64_t i = 0; i < 2 * rows * (cols / w.group); i++)
			tf_put_scalar((void *)w.scales, TF_BF16, i, 0.01f * (i % 7 - 3));
	}
	x = malloc(n * cols * sizeof *x);
	y = malloc(n * rows * sizeof *y);
	for (int64_t i = 0; i < n * cols; i++)
		x[i] = (i % 13) * 0.1f - 0.6f;
	tf_pool_init(0);
	tk = bench(tf_matmul, &w, x, n, y, reps);
	tg = bench(tf_matmul_generic, &w, x, n, y, reps);
	printf("%-8s %6lldx%-6lld n=%-4lld threads=%d  kernel %8.3f ms  generic %8.3f ms  %6.2f GB/s  %5.2fx\n",
	       argv[1], (long long)rows, (long long)cols, (long long)n, tf_pool_threads(), tk * 1e3, tg * 1e3,
	       bytes / tk / 1e9, tg / tk);
	return 0;
}
