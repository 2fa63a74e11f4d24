/* cuda-gemv-q16-inputs: the int16-input decode products making their own
 * inputs from f32 rows in the same launch (RMSNorm of the row, gated
 * RMSNorm per head, the rows as they are) or norming a split input's heads,
 * and the SwiGLU output (as f32, or as the int16 form the next product
 * reads), against the same steps on the CPU; windows bit-identical to rows
 * alone */
#include "cpu/matmul.h"
#include "cpu/ops.h"
#include "cudatest.h"

#ifndef TF_CUDA
int main(void)
{
	skip_all("built without CUDA");
}
#else
#include "gemv_q16.cuh"

#define NX 17
#define EPS 1e-6f

struct form {
	int fmt, bits, group;
};

/* the values a kind hands to the int16 form, on the CPU: v (n, cols) */
static void values(int kind, const float *x, const float *w, const float *z, int64_t ldz, int d, int64_t n,
		   int64_t cols, float *v)
{
	for (int64_t i = 0; i < n; i++) {
		const float *xr = x + i * cols;
		int per = kind == TF_Q16_NORM ? (int)cols : kind == TF_Q16_GNORM ? d : 0;
		float inv = 1.0f;
		for (int64_t c = 0; c < cols; c++) {
			if (per && c % per == 0) {      /* 1/rms of the row or head starting here */
				double ss = 0;
				for (int64_t k = c; k < c + per; k++)
					ss += (double)xr[k] * xr[k];
				inv = 1.0f / sqrtf((float)(ss / per) + EPS);
			}
			float val = xr[c];
			if (kind == TF_Q16_NORM)
				val = val * inv * w[c];
			else if (kind == TF_Q16_GNORM)
				val = val * inv * w[c % d] * tf_silu(z[i * ldz + c]);
			v[i * cols + c] = val;
		}
	}
}

/* the int16 form of v and the exact block sums, as the kernel makes them */
static void int16_form(const float *v, int64_t n, int64_t cols, int16_t *q, float *d, float *xs)
{
	for (int64_t b = 0; b < n * cols / 32; b++) {
		double s = 0;
		q16_block(v + 32 * b, q + 32 * b, d + b);
		for (int k = 0; k < 32; k++)
			s += v[32 * b + k];
		xs[b] = (float)s;
	}
}

/* the products of w with inputs v (n, cols): p through their int16 form,
 * as the kernels sum (q16_reference), and pf in floats (tf_matmul) */
static void products(const tf_weight *w, const float *v, int64_t n, int64_t cols, float *p, float *pf)
{
	float *qd = malloc(4 * n * cols / 32), *xs = malloc(4 * n * cols / 32);
	int16_t *q = malloc(2 * n * cols);

	int16_form(v, n, cols, q, qd, xs);
	q16_reference(w, q, qd, xs, n, p);
	tf_matmul(w, v, n, pf);
	free(qd); free(xs); free(q);
}

static const char *kind_name[] = { "split", "norm", "gated norm", "rows", "split normed by heads" };

static void run(const struct form *f, int kind, int epi, int64_t rows, int64_t cols)
{
	tf_weight w = make_weight(f->fmt, rows, cols, f->bits, f->group), dw;
	const int d = 128;
	const int64_t ldz = cols + 7, out = epi == TF_Q16_SWIGLU ? rows / 2 : rows;
	float *x = malloc(4 * NX * cols), *nw = malloc(4 * cols), *z = malloc(4 * NX * ldz), *v = malloc(4 * NX * cols);
	float *p = malloc(4 * NX * rows), *pf = malloc(4 * NX * rows), *want = malloc(4 * NX * out), *wantf = malloc(4 * NX * out);
	float *got = malloc(4 * NX * out), *one = malloc(4 * NX * out), *y0 = malloc(4 * NX * out);
	char what[200];
	tf_cuda_arena a;

	snprintf(what, sizeof what, "%s%d g%d %lld x %lld, %s input%s", tf_fmt_name(f->fmt), f->bits, f->group,
		 (long long)rows, (long long)cols, kind_name[kind],
		 epi == TF_Q16_SWIGLU ? ", SwiGLU" : epi == TF_Q16_ACC ? ", added" : "");
	fill_f32(x, NX * cols, 3.0f);
	fill_f32(nw, cols, 1.0f);
	fill_f32(z, NX * ldz, 2.0f);
	fill_f32(y0, NX * out, 1.0f);
	values(kind, x, nw, z, ldz, d, NX, cols, v);
	products(&w, v, NX, cols, p, pf);
	for (int64_t i = 0; i < NX; i++)
		for (int64_t r = 0; r < out; r++) {
			float *o = want + i * out + r, *of = wantf + i * out + r;
			if (epi == TF_Q16_SWIGLU) {
				*o = tf_silu(p[i * rows + r]) * p[i * rows + out + r];
				*of = tf_silu(pf[i * rows + r]) * pf[i * rows + out + r];
			} else {
				*o = p[i * rows + r] + (epi == TF_Q16_ACC ? y0[i * out + r] : 0.0f);
				*of = pf[i * rows + r] + (epi == TF_Q16_ACC ? y0[i * out + r] : 0.0f);
			}
		}

	DIE_IF(tf_cuda_arena_open(&a, tf_cuda_weight_bytes(&w), "test weight"));
	DIE_IF(tf_cuda_weight_upload(&a, &w, &dw));
	if (!tf_cuda_gemv_q16_takes(&dw)) {
		ok(0, "%s: the int16-input kernel takes the weight", what);
		goto out;
	}
	float *dx = dev_copy(x, 4 * NX * cols), *dnw = dev_copy(nw, 4 * cols), *dz = dev_copy(z, 4 * NX * ldz);
	float *dy = tf_cuda_alloc(4 * NX * out, "test output");
	tf_q16_in in = { .kind = kind, .x = dx, .ldx = cols, .w = dnw, .eps = EPS, .z = dz, .ldz = ldz, .d = d };

	DIE_IF(tf_cuda_upload(dy, y0, 4 * NX * out));
	DIE_IF(tf_cuda_gemv_q16(&dw, &in, NX, dy, out, epi));
	dev_get(got, dy, 4 * NX * out);
	/* the norms are summed in another order here, and the kernel makes
	 * RMSNorm codes of x w with 1/rms applied to its outputs, so a code at
	 * a rounding edge may differ by one: near, not equal, to the
	 * int16-input sum */
	ok(close_enough(what, got, want, NX * out, out, 1e-10, 1e30), "%s: equals the int16-input sum of the CPU's inputs",
	   what);
	/* measured at most 2.9e-9 (the int8 form was held to 4e-4) */
	ok(close_enough(what, got, wantf, NX * out, out, 2e-8, 1e30), "%s: near the CPU's float product", what);

	/* each row alone, then windows of 2, 3, 8, 9, 16: bit-identical */
	DIE_IF(tf_cuda_upload(dy, y0, 4 * NX * out));
	for (int i = 0; i < NX; i++) {
		tf_q16_in r = in;
		r.x = dx + i * cols;
		r.z = dz + i * ldz;
		DIE_IF(tf_cuda_gemv_q16(&dw, &r, 1, dy + i * out, out, epi));
	}
	dev_get(one, dy, 4 * NX * out);
	int same = same_bits(what, one, got, NX * out);
	static const int wins[] = { 2, 3, 8, 9, 16 };
	for (unsigned k = 0; k < sizeof wins / sizeof *wins; k++) {
		DIE_IF(tf_cuda_upload(dy, y0, 4 * NX * out));
		for (int i = 0; i < NX; i += wins[k]) {
			tf_q16_in r = in;
			r.x = dx + i * cols;
			r.z = dz + i * ldz;
			DIE_IF(tf_cuda_gemv_q16(&dw, &r, NX - i < wins[k] ? NX - i : wins[k], dy + i * out, out, epi));
		}
		dev_get(got, dy, 4 * NX * out);
		same &= same_bits(what, one, got, NX * out);
	}
	ok(same, "%s: rows alone and windows of 2, 3, 8, 9, 16 give the same bits", what);
	tf_cuda_free(dx); tf_cuda_free(dnw); tf_cuda_free(dz); tf_cuda_free(dy);
out:
	tf_cuda_arena_close(&a);
	free_weight(&w);
	free(x); free(nw); free(z); free(v); free(p); free(pf); free(want); free(wantf); free(got); free(one);
	free(y0);
}

/* a split input normed by heads (TF_Q16_HSPLIT, what the Gated DeltaNet
 * window makes for its output projection): the int16 form of x w silu(z)
 * with the sums of x^2 of each 32 columns, heads of d, against the
 * int16-input sum of the gated RMSNorm's values and the float product;
 * windows as rows alone */
static void run_hsplit(const struct form *f, int64_t rows, int64_t cols, int d)
{
	tf_weight w = make_weight(f->fmt, rows, cols, f->bits, f->group), dw;
	const int64_t nb = NX * cols / 32;
	float *x = malloc(4 * NX * cols), *nw = malloc(4 * d), *z = malloc(4 * NX * cols), *v = malloc(4 * NX * cols);
	float *u = malloc(4 * NX * cols), *sq = malloc(4 * nb), *p = malloc(4 * NX * rows), *pf = malloc(4 * NX * rows);
	float *y0 = malloc(4 * NX * rows), *want = malloc(4 * NX * rows), *wantf = malloc(4 * NX * rows);
	float *got = malloc(4 * NX * rows), *one = malloc(4 * NX * rows);
	uint16_t *h = calloc(1, split_bytes(NX * cols)), *hw = malloc(split_bytes(NX * cols));
	char what[200];
	tf_cuda_arena a;

	snprintf(what, sizeof what, "%s%d g%d %lld x %lld, split input normed by heads of %d", tf_fmt_name(f->fmt),
		 f->bits, f->group, (long long)rows, (long long)cols, d);
	fill_f32(x, NX * cols, 3.0f);
	fill_f32(nw, d, 1.0f);
	fill_f32(z, NX * cols, 2.0f);
	fill_f32(y0, NX * rows, 1.0f);
	/* the normed values and their int16-input sum, as for TF_Q16_GNORM */
	values(TF_Q16_GNORM, x, nw, z, cols, d, NX, cols, v);
	products(&w, v, NX, cols, p, pf);
	for (int64_t i = 0; i < NX * rows; i++) {
		want[i] = p[i] + y0[i];
		wantf[i] = pf[i] + y0[i];
	}
	/* the input: x w silu(z) before the norm, and the sums of x^2 */
	for (int64_t i = 0; i < NX * cols; i++)
		u[i] = x[i] * nw[i % d] * tf_silu(z[i]);
	int16_form(u, NX, cols, split_q16(h, NX * cols), split_scales(h, NX * cols), split_sums(h, NX * cols));
	for (int64_t b = 0; b < nb; b++) {
		double ss = 0;
		for (int k = 0; k < 32; k++)
			ss += (double)x[32 * b + k] * x[32 * b + k];
		sq[b] = (float)ss;
	}

	DIE_IF(tf_cuda_arena_open(&a, tf_cuda_weight_bytes(&w), "test weight"));
	DIE_IF(tf_cuda_weight_upload(&a, &w, &dw));
	uint16_t *ds = dev_copy(h, split_bytes(NX * cols));
	float *dsq = dev_copy(sq, 4 * nb), *dy = dev_copy(y0, 4 * NX * rows);
	tf_q16_in in = { .kind = TF_Q16_HSPLIT, .split = ds, .sq = dsq, .d = d, .eps = EPS };

	DIE_IF(tf_cuda_gemv_q16(&dw, &in, NX, dy, rows, TF_Q16_ACC));
	dev_get(got, dy, 4 * NX * rows);
	/* codes of the values before the norm, scaled after: a code at a
	 * rounding edge may differ by one, as for TF_Q16_NORM */
	ok(close_enough(what, got, want, NX * rows, rows, 1e-10, 1e30), "%s: equals the int16-input sum of the CPU's inputs",
	   what);
	ok(close_enough(what, got, wantf, NX * rows, rows, 2e-8, 1e30), "%s: near the CPU's float product", what);

	/* each row alone, then windows of 2, 3, 8, 9, 16 (each window's split
	 * input its own rows'): bit-identical */
	static const int wins[] = { 1, 2, 3, 8, 9, 16 };
	int same = 1;
	for (unsigned k = 0; k < sizeof wins / sizeof *wins; k++) {
		DIE_IF(tf_cuda_upload(dy, y0, 4 * NX * rows));
		for (int i = 0; i < NX; i += wins[k]) {
			const int m = NX - i < wins[k] ? NX - i : wins[k];
			sub_split(h, NX, cols, i, m, hw);
			DIE_IF(tf_cuda_upload(ds, hw, split_bytes((int64_t)m * cols)));
			tf_q16_in r = in;
			r.sq = dsq + i * cols / 32;
			DIE_IF(tf_cuda_gemv_q16(&dw, &r, m, dy + i * rows, rows, TF_Q16_ACC));
		}
		dev_get(one, dy, 4 * NX * rows);
		same &= same_bits(what, one, got, NX * rows);
	}
	ok(same, "%s: rows alone and windows of 2, 3, 8, 9, 16 give the same bits", what);
	/* heads of other than 1, 2 or 4 whole blocks are refused */
	in.d = 16;
	int refused = tf_cuda_gemv_q16(&dw, &in, 1, dy, rows, TF_Q16_ACC) < 0 && strstr(tf_errmsg(), "32, 64 or 128");
	in.d = 96;
	refused &= tf_cuda_gemv_q16(&dw, &in, 1, dy, rows, TF_Q16_ACC) < 0 && strstr(tf_errmsg(), "32, 64 or 128");
	ok(refused, "%s: heads of 16 and 96 refused: %s", what, tf_errmsg());
	tf_cuda_free(ds); tf_cuda_free(dsq); tf_cuda_free(dy);
	tf_cuda_arena_close(&a);
	free_weight(&w);
	free(x); free(nw); free(z); free(v); free(u); free(sq); free(p); free(pf); free(y0); free(want); free(wantf);
	free(got); free(one); free(h); free(hw);
}

/* the warp's butterfly sum of 32 values (lane l adds lane l ^ o, o = 16 .. 1) */
static float butterfly_sum(const float *x)
{
	float v[32], t[32];

	memcpy(v, x, sizeof v);
	for (int o = 16; o > 0; o >>= 1) {
		for (int l = 0; l < 32; l++)
			t[l] = v[l] + v[l ^ o];
		memcpy(v, t, sizeof v);
	}
	return v[0];
}

/* the SwiGLU product with int16 outputs (down's inputs in a decode step):
 * the int16 form of the f32 outputs the same product gives, codes and
 * scales bit for bit and sums in the warp's order; windows as rows alone */
static void run_swiglu16(const struct form *f, int64_t rows, int64_t cols)
{
	tf_weight w = make_weight(f->fmt, rows, cols, f->bits, f->group), dw;
	const int64_t out = rows / 2, nb = NX * out / 32;
	float *x = malloc(4 * NX * cols), *nw = malloc(4 * cols), *y = malloc(4 * NX * out), *d = malloc(4 * nb);
	uint16_t *h = malloc(split_bytes(NX * out)), *h1 = malloc(split_bytes(NX * out));
	int16_t *q = malloc(2 * NX * out);
	char what[200];
	tf_cuda_arena a;

	snprintf(what, sizeof what, "%s%d g%d %lld x %lld, SwiGLU to int16", tf_fmt_name(f->fmt), f->bits, f->group,
		 (long long)rows, (long long)cols);
	fill_f32(x, NX * cols, 3.0f);
	fill_f32(nw, cols, 1.0f);
	DIE_IF(tf_cuda_arena_open(&a, tf_cuda_weight_bytes(&w), "test weight"));
	DIE_IF(tf_cuda_weight_upload(&a, &w, &dw));
	if (!tf_cuda_gemv_q16_swiglu16_takes(&dw)) {
		ok(0, "%s: the kernel takes the weight", what);
		goto out;
	}
	float *dx = dev_copy(x, 4 * NX * cols), *dnw = dev_copy(nw, 4 * cols), *dy = tf_cuda_alloc(4 * NX * out, "test");
	uint16_t *ds = tf_cuda_alloc(split_bytes(NX * out), "test");
	tf_q16_in in = { .kind = TF_Q16_NORM, .x = dx, .ldx = cols, .w = dnw, .eps = EPS };

	DIE_IF(tf_cuda_gemv_q16(&dw, &in, NX, dy, out, TF_Q16_SWIGLU));
	DIE_IF(tf_cuda_gemv_q16_swiglu16(&dw, &in, NX, ds));
	dev_get(y, dy, 4 * NX * out);
	dev_get(h, ds, split_bytes(NX * out));
	int sums = 1;
	for (int64_t b = 0; b < nb; b++) {
		q16_block(y + 32 * b, q + 32 * b, d + b);
		sums &= split_sums(h, NX * out)[b] == butterfly_sum(y + 32 * b);
	}
	int same = !memcmp(q, split_q16(h, NX * out), 2 * NX * out) && !memcmp(d, split_scales(h, NX * out), 4 * nb);
	ok(same, "%s: codes and scales those of the f32 outputs", what);
	ok(sums, "%s: sums those of the f32 outputs in the warp's order", what);

	/* each row alone, then windows of 2, 3, 8, 9, 16: bit-identical */
	static const int wins[] = { 1, 2, 3, 8, 9, 16 };
	same = 1;
	for (unsigned k = 0; k < sizeof wins / sizeof *wins; k++) {
		/* a window's int16 parts sit after the planes of its own rows:
		 * gather them row by row */
		memset(h1, 0, split_bytes(NX * out));
		for (int i = 0; i < NX; i += wins[k]) {
			const int m = NX - i < wins[k] ? NX - i : wins[k];
			tf_q16_in r = in;
			r.x = dx + i * cols;
			DIE_IF(tf_cuda_gemv_q16_swiglu16(&dw, &r, m, ds));
			uint16_t *hw = malloc(split_bytes((int64_t)m * out));
			dev_get(hw, ds, split_bytes((int64_t)m * out));
			memcpy(split_q16(h1, NX * out) + i * out, split_q16(hw, m * out), 2 * m * out);
			memcpy(split_scales(h1, NX * out) + i * out / 32, split_scales(hw, m * out), 4 * m * out / 32);
			memcpy(split_sums(h1, NX * out) + i * out / 32, split_sums(hw, m * out), 4 * m * out / 32);
			free(hw);
		}
		same &= !memcmp(split_sums(h1, NX * out), split_sums(h, NX * out), 8 * nb + 2 * NX * out);
	}
	ok(same, "%s: rows alone and windows of 2, 3, 8, 9, 16 give the same bits", what);
	tf_cuda_free(dx); tf_cuda_free(dnw); tf_cuda_free(dy); tf_cuda_free(ds);
out:
	tf_cuda_arena_close(&a);
	free_weight(&w);
	free(x); free(nw); free(y); free(d); free(h); free(h1); free(q);
}

int main(void)
{
	static const struct form forms[] = {
		{ TF_AFFINE, 4, 64 }, { TF_AFFINE, 4, 32 }, { TF_AFFINE, 2, 128 }, { TF_AFFINE, 3, 64 },
		{ TF_AFFINE, 8, 32 }, { TF_SIGN1, 1, 128 },
	};

	cuda_or_skip();
	for (unsigned i = 0; i < sizeof forms / sizeof *forms; i++) {
		/* 1024 columns; the rows input also on a group more */
		run(&forms[i], TF_Q16_NORM, TF_Q16_STORE, 96, 1024);
		run(&forms[i], TF_Q16_NORM, TF_Q16_SWIGLU, 4098, 1024);
		run(&forms[i], TF_Q16_GNORM, TF_Q16_ACC, 77, 1024);
		run(&forms[i], TF_Q16_ROWS, TF_Q16_ACC, 300, forms[i].group == 32 ? 1056 : forms[i].group == 64 ? 1088 : 1152);
	}
	/* the 4-bit form puts the codes of f32 rows in lane order as it
	 * makes them: rows taken in one trip a thread and in two (past 12288
	 * columns plain, 8192 normed) */
	run(&forms[0], TF_Q16_ROWS, TF_Q16_STORE, 40, 1024);
	run(&forms[0], TF_Q16_ROWS, TF_Q16_ACC, 40, 12928);
	run(&forms[0], TF_Q16_NORM, TF_Q16_STORE, 40, 8320);
	run(&forms[0], TF_Q16_GNORM, TF_Q16_ACC, 40, 8320);
	/* a row's lane steps of whole chunks for every lane, all U of them
	 * or fewer (gemv_q16_body.cuh, load_lane_full), against windows,
	 * which load each chunk with its check: the 27B's 5120 columns (four
	 * chunks a lane, then one), 4096 columns of 2 bits (two), and 8 bits
	 * over 2080 (two, then a step of one chunk for lane 0 alone) */
	run(&forms[0], TF_Q16_NORM, TF_Q16_ACC, 300, 5120);
	run(&forms[2], TF_Q16_NORM, TF_Q16_STORE, 300, 4096);
	run(&forms[4], TF_Q16_NORM, TF_Q16_STORE, 300, 2080);
	/* more tiles than blocks: 9000 rows at two a warp are 282 tiles, so
	 * a block takes two or three, its outputs and residual adds at each
	 * tile's rows */
	run(&forms[0], TF_Q16_NORM, TF_Q16_ACC, 9000, 1024);
	run(&forms[5], TF_Q16_ROWS, TF_Q16_STORE, 9000, 1024);
	/* split inputs normed by heads: the 9B's 128 and heads of 32 and 64,
	 * every form; one row of 4096 columns */
	for (unsigned i = 0; i < sizeof forms / sizeof *forms; i++)
		run_hsplit(&forms[i], 96, 1024, 128);
	run_hsplit(&forms[0], 300, 1024, 32);
	run_hsplit(&forms[3], 77, 2048, 64);
	run_hsplit(&forms[0], 4096, 4096, 128);
	/* SwiGLU outputs made int16: 32-column output blocks one a block and
	 * several (37 pairs of tiles; 500 on at most 132 blocks) */
	for (unsigned i = 0; i < sizeof forms / sizeof *forms; i++)
		run_swiglu16(&forms[i], 2 * 32 * 37, 1024);
	run_swiglu16(&forms[0], 2 * 32 * 500, 1024);
	{
		tf_weight w = make_weight(TF_AFFINE, 2 * 48, 128, 4, 64), dw;
		tf_cuda_arena a;
		float *dx = tf_cuda_alloc(4 * 128, "test");
		uint16_t *ds = tf_cuda_alloc(split_bytes(48), "test");
		DIE_IF(tf_cuda_arena_open(&a, tf_cuda_weight_bytes(&w), "test weight"));
		DIE_IF(tf_cuda_weight_upload(&a, &w, &dw));
		tf_q16_in in = { .kind = TF_Q16_ROWS, .x = dx, .ldx = 128 };
		ok(!tf_cuda_gemv_q16_swiglu16_takes(&dw) && tf_cuda_gemv_q16_swiglu16(&dw, &in, 1, ds) < 0 &&
		   strstr(tf_errmsg(), "32-column blocks"), "48 SwiGLU outputs are not made int16: %s", tf_errmsg());
		tf_cuda_arena_close(&a);
		free_weight(&w);
		tf_cuda_free(dx); tf_cuda_free(ds);
	}
	/* an odd number of rows is not gate and up halves */
	{
		tf_weight w = make_weight(TF_AFFINE, 5, 128, 4, 64), dw;
		tf_cuda_arena a;
		float *dx = tf_cuda_alloc(4 * 128, "test"), *dy = tf_cuda_alloc(4 * 8, "test");
		DIE_IF(tf_cuda_arena_open(&a, tf_cuda_weight_bytes(&w), "test weight"));
		DIE_IF(tf_cuda_weight_upload(&a, &w, &dw));
		tf_q16_in in = { .kind = TF_Q16_ROWS, .x = dx, .ldx = 128 };
		ok(tf_cuda_gemv_q16(&dw, &in, 1, dy, 2, TF_Q16_SWIGLU) < 0 && strstr(tf_errmsg(), "gate and up"),
		   "a SwiGLU product of 5 rows is refused: %s", tf_errmsg());
		tf_cuda_arena_close(&a);
		free_weight(&w);
	}
	return done();
}
#endif
