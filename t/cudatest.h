/*
 * cudatest.h: what the kernel tests (t/unit/cuda-*.c) share, header only:
 * the skip when there is no GPU, random inputs, random weights of every
 * form, and a comparison that reports max abs error, NMSE and the first
 * mismatches.
 */
#ifndef TF_CUDATEST_H
#define TF_CUDATEST_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* not every test uses every helper */
#pragma GCC diagnostic ignored "-Wunused-function"

#include "base/err.h"
#include "model/weight.h"
#include "tap.h"

#ifdef TF_CUDA
#include "runtime.cuh"

/* skips the whole file without a device; starts the device otherwise */
static void cuda_or_skip(void)
{
	if (tf_cuda_count() <= 0)
		skip_all("no CUDA device");
	if (tf_cuda_init() < 0) {
		printf("1..0 # SKIP %s\n", tf_errmsg());
		exit(0);
	}
}

/* a device copy of n bytes of host memory; the test stops on failure */
static void *dev_copy(const void *h, uint64_t n)
{
	void *d = tf_cuda_alloc(n, "test data");
	if (!d || tf_cuda_upload(d, h, n) < 0) {
		printf("Bail out! %s\n", tf_errmsg());
		exit(1);
	}
	return d;
}

static void dev_get(void *h, const void *d, uint64_t n)
{
	if (tf_cuda_sync() < 0 || tf_cuda_download(h, d, n) < 0) {
		printf("Bail out! %s\n", tf_errmsg());
		exit(1);
	}
}

/* fills device memory with NaN so an output element nothing wrote shows */
static void dev_poison(void *d, uint64_t n)
{
	void *h = malloc(n);
	memset(h, 0xff, n);
	tf_cuda_upload(d, h, n);
	free(h);
}

#define DIE_IF(x) do { if ((x) < 0) { printf("Bail out! %s\n", tf_errmsg()); exit(1); } } while (0)
#endif

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng_next(void)
{
	uint64_t x = rng_state;
	x ^= x << 13; x ^= x >> 7; x ^= x << 17;
	return rng_state = x;
}

/* uniform in [-1, 1) */
static float rng_unit(void)
{
	return (float)((rng_next() >> 40) * (1.0 / 8388608.0)) - 1.0f;
}

/* roughly normal, mean 0, sd 1 */
static float rng_norm(void)
{
	return (rng_unit() + rng_unit() + rng_unit()) * 1.0f;
}

static void fill_f32(float *p, int64_t n, float scale)
{
	for (int64_t i = 0; i < n; i++)
		p[i] = rng_norm() * scale;
}

/* values rounded to bf16 and stored both ways: what a bf16 input holds */
static void fill_bf16(uint16_t *h, float *f, int64_t n, float scale)
{
	for (int64_t i = 0; i < n; i++) {
		h[i] = tf_f32_to_bf16(rng_norm() * scale);
		if (f)
			f[i] = tf_bf16_to_f32(h[i]);
	}
}

/* bytes of n split activations (kernels/common.cuh): two bf16 planes, a
 * float sum of each 32, then the int16 form (a float scale of each 32 and
 * two bytes a value) */
static inline size_t split_bytes(int64_t n)
{
	return 4 * n + 4 * ((n + 31) / 32) + 4 * ((n + 31) / 32) + 2 * n;
}

/* the parts of split activations of n values that follow the planes */
static float *split_sums(uint16_t *planes, int64_t n) { return (float *)(planes + 2 * n); }
static float *split_scales(uint16_t *planes, int64_t n) { return split_sums(planes, n) + (n + 31) / 32; }
static int16_t *split_q16(uint16_t *planes, int64_t n) { return (int16_t *)(split_scales(planes, n) + (n + 31) / 32); }

/* the int16 form put_split writes, computed the same way: per 32 values
 * the largest magnitude m, scale m * (1 / 32767), codes
 * rint(x * (32767 * (1 / m))) (q16_inv and q16_scale of common.cuh) */
static void q16_block(const float *x, int16_t *q, float *scale)
{
	float m = 0;

	for (int i = 0; i < 32; i++)
		m = fmaxf(m, fabsf(x[i]));
	float inv = 32767.0f * (1.0f / m);
	for (int i = 0; i < 32; i++)
		q[i] = m > 0 ? (int16_t)lrintf(x[i] * inv) : 0;
	*scale = m * (1.0f / 32767.0f);
}

/* split activations: planes (2, n) hold hi = bf16(x) and lo = bf16(x - hi)
 * of random x, then the sums of hi + lo over each 32, then the int16 form of
 * x; xf gets hi + lo, the value the GPU's float products see */
static void fill_split(uint16_t *planes, float *xf, int64_t n, float scale)
{
	float *sums = split_sums(planes, n), *x = malloc(4 * n);

	for (int64_t i = 0; i < n; i++) {
		x[i] = rng_norm() * scale;
		planes[i] = tf_f32_to_bf16(x[i]);
		planes[n + i] = tf_f32_to_bf16(x[i] - tf_bf16_to_f32(planes[i]));
		xf[i] = tf_bf16_to_f32(planes[i]) + tf_bf16_to_f32(planes[n + i]);
	}
	for (int64_t k = 0; k < (n + 31) / 32; k++) {
		double s = 0;
		for (int64_t i = 32 * k; i < 32 * k + 32 && i < n; i++)
			s += xf[i];
		sums[k] = (float)s;
	}
	if (n % 32 == 0)
		for (int64_t k = 0; k < n / 32; k++)
			q16_block(x + 32 * k, split_q16(planes, n) + 32 * k, split_scales(planes, n) + k);
	free(x);
}

/* out (n) = hi + lo of split planes (2, n) */
static void join_split(const uint16_t *planes, int64_t n, float *out)
{
	for (int64_t i = 0; i < n; i++)
		out[i] = tf_bf16_to_f32(planes[i]) + tf_bf16_to_f32(planes[n + i]);
}

/* rows [i, i + m) of split activations (n, cols) as their own (m, cols) */
static void sub_split(const uint16_t *planes, int64_t n, int64_t cols, int64_t i, int64_t m, uint16_t *out)
{
	uint16_t *p = (uint16_t *)planes;

	memcpy(out, planes + i * cols, 2 * m * cols);
	memcpy(out + m * cols, planes + n * cols + i * cols, 2 * m * cols);
	if (cols % 32 == 0) {
		memcpy(split_sums(out, m * cols), split_sums(p, n * cols) + i * cols / 32, 4 * m * cols / 32);
		memcpy(split_scales(out, m * cols), split_scales(p, n * cols) + i * cols / 32, 4 * m * cols / 32);
		memcpy(split_q16(out, m * cols), split_q16(p, n * cols) + i * cols, 2 * m * cols);
	}
}

/* a random weight of the given form; free with free_weight */
static tf_weight make_weight(int fmt, int64_t rows, int64_t cols, int bits, int group)
{
	tf_weight w = { .fmt = fmt, .rows = rows, .cols = cols, .bits = bits, .group = group,
			.sdtype = TF_BF16 };
	uint64_t n = (uint64_t)rows * cols;

	switch (fmt) {
	case TF_F32: {
		float *d = malloc(4 * n);
		fill_f32(d, n, 0.05f);
		w.data = d;
		break;
	}
	case TF_BF16:
	case TF_F16: {
		uint16_t *d = malloc(2 * n);
		for (uint64_t i = 0; i < n; i++)
			d[i] = fmt == TF_BF16 ? tf_f32_to_bf16(rng_norm() * 0.05f) : tf_f32_to_f16(rng_norm() * 0.05f);
		w.data = d;
		break;
	}
	case TF_AFFINE:
	case TF_SIGN1: {
		uint64_t nb = fmt == TF_AFFINE ? n * bits / 8 : n / 8, ng = n / group;
		uint8_t *d = malloc(nb);
		uint16_t *s = malloc(2 * ng), *b = malloc(2 * ng);
		for (uint64_t i = 0; i < nb; i++)
			d[i] = (uint8_t)rng_next();
		for (uint64_t i = 0; i < ng; i++) {
			/* MLX scales may be negative; biases are the group's edge */
			s[i] = tf_f32_to_bf16(rng_norm() * 0.01f);
			b[i] = tf_f32_to_bf16(rng_norm() * 0.05f);
		}
		w.data = d;
		w.scales = s;
		w.biases = fmt == TF_AFFINE ? b : NULL;
		if (fmt == TF_SIGN1)
			free(b);
		break;
	}
	}
	return w;
}

static void free_weight(tf_weight *w)
{
	free((void *)w->data);
	free((void *)w->scales);
	free((void *)w->biases);
}

/* code (r, c) of an affine weight (MLX order, LSB first) or bit of a sign1 one */
static uint32_t weight_code(const tf_weight *w, int64_t r, int64_t c)
{
	const uint32_t *row = (const uint32_t *)w->data + r * (w->cols * w->bits / 32);
	int64_t bit = c * w->bits;
	uint64_t v = row[bit / 32];

	if (bit % 32 + w->bits > 32)
		v |= (uint64_t)row[bit / 32 + 1] << 32;
	return (uint32_t)(v >> (bit % 32)) & ((1u << w->bits) - 1);
}

/* what the int16-input kernels compute (gemv_q16.cuh), in double, from the
 * int16 form qx (n, cols), its scales d and exact sums xs (n, cols/32): per
 * 32-column block b of group g, scale(g) d[b] sum(q qx) + bias(g) xs[b]; a
 * sign1 block is scale(g) (2 d[b] sum over set bits of qx - xs[b]) */
static void q16_reference(const tf_weight *w, const int16_t *qx, const float *d, const float *xs, int64_t n, float *y)
{
	const int64_t cols = w->cols, nb = cols / 32;

	for (int64_t i = 0; i < n; i++)
		for (int64_t r = 0; r < w->rows; r++) {
			double acc = 0;
			for (int64_t b = 0; b < nb; b++) {
				int64_t gi = r * (cols / w->group) + b * 32 / w->group, dot = 0;
				double sc = tf_load_scalar(w->scales, w->sdtype, gi);
				for (int64_t c = 32 * b; c < 32 * b + 32; c++)
					dot += (int64_t)weight_code(w, r, c) * qx[i * cols + c];
				if (w->fmt == TF_SIGN1)
					acc += sc * (2.0 * d[i * nb + b] * dot - xs[i * nb + b]);
				else
					acc += sc * d[i * nb + b] * dot +
					       tf_load_scalar(w->biases, w->sdtype, gi) * xs[i * nb + b];
			}
			y[i * w->rows + r] = (float)acc;
		}
}

/*
 * compares got against want (n floats): ok when NMSE <= nmse_max and max abs
 * error <= abs_max; prints the figures and, on failure, the first 20
 * mismatches (|d| > abs_max) with their row and column for a cols-wide
 * layout
 */
static int close_enough(const char *what, const float *got, const float *want, int64_t n, int64_t cols,
			double nmse_max, double abs_max)
{
	double se = 0, sr = 0, maxd = 0;
	int64_t bad = 0, nan = 0;

	for (int64_t i = 0; i < n; i++) {
		double d = (double)got[i] - want[i];
		if (isnan(got[i]) != isnan(want[i]))
			nan++;
		se += d * d;
		sr += (double)want[i] * want[i];
		if (fabs(d) > maxd)
			maxd = fabs(d);
	}
	double nmse = sr > 0 ? se / sr : se;
	int good = !nan && !isnan(nmse) && nmse <= nmse_max && maxd <= abs_max;
	diag("%s: max abs %.3g, nmse %.3g%s", what, maxd, nmse, nan ? ", NaN mismatch" : "");
	if (!good)
		for (int64_t i = 0; i < n && bad < 20; i++)
			if (!(fabs((double)got[i] - want[i]) <= abs_max)) {
				diag("  at row %lld col %lld: got %.9g, want %.9g", (long long)(i / cols),
				     (long long)(i % cols), got[i], want[i]);
				bad++;
			}
	return good;
}

/* bit equality of two float arrays; reports the first difference */
static int same_bits(const char *what, const float *a, const float *b, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		if (memcmp(a + i, b + i, 4)) {
			diag("%s: first difference at %lld: %.9g vs %.9g", what, (long long)i, a[i], b[i]);
			return 0;
		}
	return 1;
}

#endif
