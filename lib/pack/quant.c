/* quant.c: MLX affine codes and exact 1-bit repack */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "model/weight.h"
#include "quant.h"

void tf_codes_pack(const uint8_t *q, int64_t n, int bits, uint32_t *out)
{
	uint64_t acc = 0;       /* stream bits not yet stored, LSB first */
	int have = 0;
	int64_t w = 0;

	for (int64_t j = 0; j < n; j++) {
		acc |= (uint64_t)(q[j] & ((1u << bits) - 1)) << have;
		have += bits;
		if (have >= 32) {
			out[w++] = (uint32_t)acc;
			acc >>= 32;
			have -= 32;
		}
	}
	if (have)
		out[w] = (uint32_t)acc;
}

uint32_t tf_code_get(const void *row, int64_t j, int bits)
{
	const unsigned char *p = row;
	int64_t bit = j * bits;
	uint32_t w0, w1, v;
	int s = bit & 31;

	memcpy(&w0, p + 4 * (bit >> 5), 4);
	v = w0 >> s;
	if (s + bits > 32) {
		memcpy(&w1, p + 4 * ((bit >> 5) + 1), 4);
		v |= w1 << (32 - s);
	}
	return v & ((1u << bits) - 1);
}

void tf_put_scalar(void *p, int dtype, int64_t i, float f)
{
	unsigned char *b = p;
	uint16_t h;

	switch (dtype) {
	case TF_F32:
		memcpy(b + 4 * i, &f, 4);
		break;
	case TF_BF16:
		h = tf_f32_to_bf16(f);
		memcpy(b + 2 * i, &h, 2);
		break;
	case TF_F16:
		h = tf_f32_to_f16(f);
		memcpy(b + 2 * i, &h, 2);
		break;
	}
}

/*
 * One group, as mlx's CPU quantize does it: the extremes with
 * std::max/std::min semantics (the first of equal values wins, which decides
 * the sign of a zero), the scale from the range, the edge of larger
 * magnitude made exact by choosing scale = edge / q0, then round half to
 * even of (w - bias) / scale clamped to [0, 2^B - 1]. All in fp32.
 */
static void quantize_group(const float *w, int group, int bits, uint8_t *q, float *scale_out, float *bias_out)
{
	float n_bins = (float)((1 << bits) - 1), eps = 1e-7f;
	float w_min = INFINITY, w_max = -INFINITY, scale, edge, q0, bias = 0;
	int mask;

	for (int j = 0; j < group; j++) {
		w_max = w_max < w[j] ? w[j] : w_max;
		w_min = w[j] < w_min ? w[j] : w_min;
	}
	mask = fabsf(w_min) > fabsf(w_max);
	scale = (w_max - w_min) / n_bins;
	scale = scale < eps ? eps : scale;
	scale = mask ? scale : -scale;
	edge = mask ? w_min : w_max;
	q0 = rintf(edge / scale);
	if (q0 != 0) {
		scale = edge / q0;
		bias = edge;
	}
	for (int j = 0; j < group; j++) {
		float v = rintf((w[j] - bias) / scale);
		v = v < 0.0f ? 0.0f : v;
		v = n_bins < v ? n_bins : v;
		q[j] = v == v ? (uint8_t)v : 0;
	}
	*scale_out = scale;
	*bias_out = bias;
}

double tf_affine_quantize(const void *src, int dtype, int64_t rows, int64_t cols, int bits, int group,
			  uint32_t *codes, void *scales, void *biases)
{
	int64_t ng = cols / group, words = cols * bits / 32;
	float w[128];           /* (group) one group as fp32 */
	uint8_t *qrow = tf_malloc(cols);        /* (cols) codes of one row, packed below */
	double maxerr = 0;

	for (int64_t r = 0; r < rows; r++) {
		for (int64_t g = 0; g < ng; g++) {
			float s, b, sr, br;
			for (int j = 0; j < group; j++)
				w[j] = tf_load_scalar(src, dtype, r * cols + g * group + j);
			quantize_group(w, group, bits, qrow + g * group, &s, &b);
			tf_put_scalar(scales, dtype, r * ng + g, s);
			tf_put_scalar(biases, dtype, r * ng + g, b);
			/* the error a reader sees: stored (rounded) scale and bias */
			sr = tf_load_scalar(scales, dtype, r * ng + g);
			br = tf_load_scalar(biases, dtype, r * ng + g);
			for (int j = 0; j < group; j++) {
				double e = fabs((double)w[j] - (double)(sr * (float)qrow[g * group + j] + br));
				if (e > maxerr || e != e)
					maxerr = e;
			}
		}
		tf_codes_pack(qrow, cols, bits, codes + r * words);
	}
	free(qrow);
	return maxerr;
}

int tf_sign1_repack(const void *src, int dtype, int64_t rows, int64_t cols, uint8_t *bits, void *scales,
		    int64_t *bad_row, int64_t *bad_col)
{
	const unsigned char *p = src;
	int64_t ng;

	if (cols % 128 || rows < 1) {
		*bad_row = 0;
		*bad_col = cols;
		return 0;
	}
	ng = cols / 128;
	for (int64_t r = 0; r < rows; r++) {
		for (int64_t g = 0; g < ng; g++) {
			int64_t c0 = g * 128;
			/* compare magnitudes as bits: exact, and a NaN never matches */
			if (dtype == TF_F32) {
				uint32_t v[128], mag;
				memcpy(v, p + 4 * (r * cols + c0), sizeof v);
				mag = v[0] & 0x7fffffff;
				for (int j = 0; j < 128; j++)
					if ((v[j] & 0x7fffffff) != mag || mag > 0x7f800000) {
						*bad_row = r;
						*bad_col = c0 + j;
						return 0;
					}
				if (scales)
					memcpy((unsigned char *)scales + 4 * (r * ng + g), &mag, 4);
				if (bits)
					for (int j = 0; j < 128; j += 8) {
						uint8_t b = 0;
						for (int k = 0; k < 8; k++)
							b |= (uint8_t)(!(v[j + k] >> 31)) << k;
						bits[r * (cols / 8) + (c0 + j) / 8] = b;
					}
			} else {
				uint16_t v[128], mag, nanmin = dtype == TF_BF16 ? 0x7f80 : 0x7c00;
				memcpy(v, p + 2 * (r * cols + c0), sizeof v);
				mag = v[0] & 0x7fff;
				for (int j = 0; j < 128; j++)
					if ((v[j] & 0x7fff) != mag || mag > nanmin) {
						*bad_row = r;
						*bad_col = c0 + j;
						return 0;
					}
				if (scales)
					memcpy((unsigned char *)scales + 2 * (r * ng + g), &mag, 2);
				if (bits)
					for (int j = 0; j < 128; j += 8) {
						uint8_t b = 0;
						for (int k = 0; k < 8; k++)
							b |= (uint8_t)(!(v[j + k] >> 15)) << k;
						bits[r * (cols / 8) + (c0 + j) / 8] = b;
					}
			}
		}
	}
	return 1;
}
