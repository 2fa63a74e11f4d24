/* weight.c: scalar conversions and row dequantization for every weight form */
#include <math.h>
#include <string.h>

#include "weight.h"

float tf_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
	union { uint32_t u; float f; } v;

	if (exp == 0) {
		/* zero or subnormal: man * 2^-24, exact in float */
		float f = ldexpf((float)man, -24);
		return sign ? -f : f;
	}
	if (exp == 31)
		v.u = sign | 0x7f800000 | (man << 13);
	else
		v.u = sign | ((exp + 112) << 23) | (man << 13);
	return v.f;
}

uint16_t tf_f32_to_f16(float f)
{
	union { float f; uint32_t u; } v = { f };
	uint32_t sign = (v.u >> 16) & 0x8000, a = v.u & 0x7fffffff;

	if (a > 0x7f800000)
		return sign | 0x7e00;
	if (a >= 0x477ff000)    /* rounds to beyond the largest half */
		return sign | 0x7c00;
	if (a < 0x38800000) {   /* subnormal half: round man * 2^24 to an integer */
		float m = fabsf(f) * 16777216.0f;
		return sign | (uint16_t)nearbyintf(m);
	}
	/* normal: round to nearest even on the 13 dropped bits */
	a = a - 0x38000000;
	a = (a + 0xfff + ((a >> 13) & 1)) >> 13;
	return sign | a;
}

const char *tf_fmt_name(int fmt)
{
	switch (fmt) {
	case TF_F32: return "f32";
	case TF_BF16: return "bf16";
	case TF_F16: return "f16";
	case TF_AFFINE: return "affine";
	case TF_SIGN1: return "sign1";
	}
	return "?";
}

float tf_load_scalar(const void *p, int sdtype, int64_t i)
{
	const unsigned char *b = p;
	uint16_t h;
	float f;

	switch (sdtype) {
	case TF_F32:
		memcpy(&f, b + 4 * i, 4);
		return f;
	case TF_BF16:
		memcpy(&h, b + 2 * i, 2);
		return tf_bf16_to_f32(h);
	case TF_F16:
		memcpy(&h, b + 2 * i, 2);
		return tf_f16_to_f32(h);
	}
	return NAN;
}

/* code j of a row of B-bit codes: bits [j*B, j*B + B) of the row's
 * little-endian, LSB-first stream of 32-bit words, as mlx packs them;
 * words are loaded with memcpy (unaligned) */
static inline uint32_t code_at(const unsigned char *row, int64_t j, int bits)
{
	int64_t bit = j * bits;
	uint32_t w0, w1, v;
	int s = bit & 31;

	memcpy(&w0, row + 4 * (bit >> 5), 4);
	v = w0 >> s;
	if (s + bits > 32) {
		memcpy(&w1, row + 4 * ((bit >> 5) + 1), 4);
		v |= w1 << (32 - s);
	}
	return v & ((1u << bits) - 1);
}

void tf_weight_row(const tf_weight *w, int64_t r, float *out)
{
	const unsigned char *d = w->data;
	int64_t n = w->cols;

	switch (w->fmt) {
	case TF_F32:
		memcpy(out, d + 4 * r * n, 4 * n);
		break;
	case TF_BF16: {
		const unsigned char *row = d + 2 * r * n;
		for (int64_t c = 0; c < n; c++) {
			uint16_t h;
			memcpy(&h, row + 2 * c, 2);
			out[c] = tf_bf16_to_f32(h);
		}
		break;
	}
	case TF_F16:
		for (int64_t c = 0; c < n; c++)
			out[c] = tf_load_scalar(d, TF_F16, r * n + c);
		break;
	case TF_AFFINE: {
		const unsigned char *row = d + 4 * r * (n * w->bits / 32);
		int64_t ng = n / w->group;
		for (int64_t g = 0; g < ng; g++) {
			float s = tf_load_scalar(w->scales, w->sdtype, r * ng + g);
			float b = tf_load_scalar(w->biases, w->sdtype, r * ng + g);
			for (int64_t c = g * w->group; c < (g + 1) * w->group; c++)
				out[c] = s * (float)code_at(row, c, w->bits) + b;
		}
		break;
	}
	case TF_SIGN1: {
		const unsigned char *row = d + r * (n / 8);
		int64_t ng = n / w->group;
		for (int64_t g = 0; g < ng; g++) {
			float s = tf_load_scalar(w->scales, w->sdtype, r * ng + g);
			for (int64_t c = g * w->group; c < (g + 1) * w->group; c++)
				out[c] = (row[c >> 3] >> (c & 7)) & 1 ? s : -s;
		}
		break;
	}
	}
}

uint64_t tf_weight_bytes(const tf_weight *w)
{
	uint64_t n = (uint64_t)w->rows * w->cols, ss = w->sdtype == TF_F32 ? 4 : 2;

	switch (w->fmt) {
	case TF_F32: return 4 * n;
	case TF_BF16:
	case TF_F16: return 2 * n;
	case TF_AFFINE: return n * w->bits / 8 + 2 * ss * (n / w->group);
	case TF_SIGN1: return n / 8 + ss * (n / w->group);
	}
	return 0;
}
