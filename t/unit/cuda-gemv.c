/* cuda-gemv: decode products on the GPU against the CPU's tf_matmul, every
 * weight form, odd shapes, 1..17 input rows; windows bit-identical to rows
 * alone; the accumulate (residual) mode */
#include "cpu/matmul.h"
#include "cudatest.h"

#ifndef TF_CUDA
int main(void)
{
	skip_all("built without CUDA");
}
#else
#include "gemv.cuh"
#include "gemv_q16.cuh"

#define NX 17   /* input rows: one more than a launch takes */

struct form {
	int fmt, bits, group;
	double nmse;    /* affine weights are dequantized to bf16: about 2^-18;
			   the others and the split inputs are exact to fp32 */
};

static void run(const struct form *f, int64_t rows, int64_t cols)
{
	tf_weight w = make_weight(f->fmt, rows, cols, f->bits, f->group), dw;
	uint16_t *xh = malloc(split_bytes(NX * cols)), *xs = malloc(split_bytes(NX * cols));
	float *xf = malloc(4 * NX * cols), *want = malloc(4 * NX * rows), *got = malloc(4 * NX * rows);
	float *one = malloc(4 * NX * rows), *y0 = malloc(4 * NX * rows);
	char what[160];
	tf_cuda_arena a;

	snprintf(what, sizeof what, "%s%d g%d %lld x %lld", tf_fmt_name(f->fmt), f->bits, f->group,
		 (long long)rows, (long long)cols);
	fill_split(xh, xf, NX * cols, 1.0f);
	tf_matmul(&w, xf, NX, want);

	DIE_IF(tf_cuda_arena_open(&a, tf_cuda_weight_bytes(&w), "test weight"));
	DIE_IF(tf_cuda_weight_upload(&a, &w, &dw));
	uint16_t *dx = dev_copy(xh, split_bytes(NX * cols)), *dsub = tf_cuda_alloc(split_bytes(NX * cols), "test input");
	float *dy = tf_cuda_alloc(4 * NX * rows, "test output");

	/* all 17 rows in one call (a launch of 16 and one of 1) */
	dev_poison(dy, 4 * NX * rows);
	DIE_IF(tf_cuda_gemv(&dw, dx, NX, dy, 0));
	dev_get(got, dy, 4 * NX * rows);
	if (tf_cuda_gemv_q16_takes(&dw)) {
		/* int16 inputs: the exact sum of their products, and near the
		 * CPU's float product: the inputs' rounding is at most 2^-16
		 * of a block's largest value, which left every form and shape
		 * here within a normalized squared error of 1.9e-9 (the int8
		 * form, 2^-9, needed 2e-4) */
		float *q16want = malloc(4 * NX * rows);
		q16_reference(&w, split_q16(xh, NX * cols), split_scales(xh, NX * cols), split_sums(xh, NX * cols), NX,
			      q16want);
		ok(close_enough(what, got, q16want, NX * rows, rows, 1e-11, 1e30),
		   "%s: 17 rows equal the int16-input sum", what);
		ok(close_enough(what, got, want, NX * rows, rows, 1e-8, 1e30),
		   "%s: 17 rows are near the CPU's float product", what);
		free(q16want);
	} else {
		ok(close_enough(what, got, want, NX * rows, rows, f->nmse, 1e30), "%s: 17 rows match the CPU", what);
	}

	/* each row alone, then windows of 2, 3, 8, 9, 16: bit-identical */
	for (int i = 0; i < NX; i++) {
		sub_split(xh, NX, cols, i, 1, xs);
		DIE_IF(tf_cuda_upload(dsub, xs, split_bytes(cols)));
		DIE_IF(tf_cuda_gemv(&dw, dsub, 1, dy + i * rows, 0));
	}
	dev_get(one, dy, 4 * NX * rows);
	ok(same_bits(what, one, got, NX * rows), "%s: rows alone equal the window", what);
	static const int wins[] = { 2, 3, 8, 9, 16 };
	int same = 1;
	for (unsigned k = 0; k < sizeof wins / sizeof *wins; k++) {
		int m = wins[k];
		dev_poison(dy, 4 * NX * rows);
		for (int i = 0; i < NX; i += m) {
			int cnt = NX - i < m ? NX - i : m;
			sub_split(xh, NX, cols, i, cnt, xs);
			DIE_IF(tf_cuda_upload(dsub, xs, split_bytes(cnt * cols)));
			DIE_IF(tf_cuda_gemv(&dw, dsub, cnt, dy + i * rows, 0));
		}
		dev_get(got, dy, 4 * NX * rows);
		same &= same_bits(what, one, got, NX * rows);
	}
	ok(same, "%s: windows of 2, 3, 8, 9, 16 equal rows alone", what);

	/* a column slice of a wider output (ldy = rows + 5): the same bits */
	{
		int64_t ld = rows + 5;
		float *dw2 = tf_cuda_alloc(4 * NX * ld, "test output"), *wide = malloc(4 * NX * ld);
		dev_poison(dw2, 4 * NX * ld);
		DIE_IF(tf_cuda_gemv_ld(&dw, dx, NX, dw2, ld, 0));
		dev_get(wide, dw2, 4 * NX * ld);
		int eq = 1;
		for (int i = 0; i < NX; i++)
			eq &= same_bits(what, wide + i * ld, one + i * rows, rows);
		ok(eq, "%s: output rows at a stride hold the same values", what);
		tf_cuda_free(dw2);
		free(wide);
	}

	/* accumulate: y = y0 + x W^T */
	fill_f32(y0, NX * rows, 1.0f);
	DIE_IF(tf_cuda_upload(dy, y0, 4 * NX * rows));
	DIE_IF(tf_cuda_gemv(&dw, dx, NX, dy, 1));
	dev_get(got, dy, 4 * NX * rows);
	for (int64_t i = 0; i < NX * rows; i++)
		y0[i] += one[i];
	ok(same_bits(what, got, y0, NX * rows), "%s: accumulate adds to y", what);

	tf_cuda_free(dx);
	tf_cuda_free(dsub);
	tf_cuda_free(dy);
	tf_cuda_arena_close(&a);
	free_weight(&w);
	free(xh); free(xs); free(xf); free(want); free(got); free(one); free(y0);
}

int main(void)
{
	static const struct form forms[] = {
		{ TF_BF16, 16, 0, 1e-11 },
		{ TF_F32, 32, 0, 1e-11 },
		{ TF_F16, 16, 0, 1e-11 },
		{ TF_SIGN1, 1, 128, 1e-11 },
		{ TF_AFFINE, 2, 32, 2e-5 }, { TF_AFFINE, 2, 64, 2e-5 }, { TF_AFFINE, 2, 128, 2e-5 },
		{ TF_AFFINE, 3, 32, 2e-5 }, { TF_AFFINE, 3, 64, 2e-5 }, { TF_AFFINE, 3, 128, 2e-5 },
		{ TF_AFFINE, 4, 32, 2e-5 }, { TF_AFFINE, 4, 64, 2e-5 }, { TF_AFFINE, 4, 128, 2e-5 },
		{ TF_AFFINE, 5, 32, 2e-5 }, { TF_AFFINE, 5, 64, 2e-5 }, { TF_AFFINE, 5, 128, 2e-5 },
		{ TF_AFFINE, 6, 32, 2e-5 }, { TF_AFFINE, 6, 64, 2e-5 }, { TF_AFFINE, 6, 128, 2e-5 },
		{ TF_AFFINE, 8, 32, 2e-5 }, { TF_AFFINE, 8, 64, 2e-5 }, { TF_AFFINE, 8, 128, 2e-5 },
	};
	/* rows: 1, 3, 118 (partial 16-row tiles), 4097; columns: one unit,
	 * units not a multiple of the split, a long row; 96 and 200 take the
	 * any-shape kernel for the float forms. 4096, 8192 and 12288 columns
	 * are whole lane steps of the 4-bit, 2-bit (8192) and 8-bit forms,
	 * 5120 and 12288 (2-bit) whole chunks but not whole steps: a row alone
	 * takes kernels built for that (gemv_q16_body.cuh, q16_load), windows
	 * the ones that ask at every step, and the two must agree bit for bit */
	static const int64_t shapes[][2] = {
		{ 1, 128 }, { 3, 640 }, { 118, 1152 }, { 4097, 4096 }, { 33, 96 }, { 5, 200 },
		{ 37, 8192 }, { 19, 12288 }, { 7, 5120 },
	};
	int nf = sizeof forms / sizeof *forms, ns = sizeof shapes / sizeof *shapes;

	cuda_or_skip();
	for (int i = 0; i < nf; i++)
		for (int j = 0; j < ns; j++) {
			const struct form *f = &forms[i];
			int64_t c = shapes[j][1];
			int fg = f->group ? f->group : 1;
			if (c % fg || (f->fmt == TF_AFFINE && (c * f->bits) % 32))
				continue;
			run(f, shapes[j][0], c);
		}
	return done();
}
#endif
