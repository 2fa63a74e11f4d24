/*
 * gguf_blocks.c: llama.cpp's block types as our weight forms, exactly.
 *
 *   Q8_0  32 a block: f16 d, int8 q[32];            w = d q
 *         -> affine 8 bits, group 32: code q + 128, scale d, bias -128 d
 *   Q4_0  32 a block: f16 d, u8 qs[16], weight j in the low nibble of
 *         qs[j] and weight j + 16 in its high nibble; w = d (q - 8)
 *         -> affine 4 bits, group 32: code q, scale d, bias -8 d
 *   Q1_0  128 a block: f16 d, u8 qs[16], bit j % 8 of qs[j / 8]; w = +d
 *         when set, -d when clear -> sign1, the very same bits
 *   F32, F16, BF16 as they are
 *
 * Each form gives llama.cpp's dequantized value bit for bit: d (an f16)
 * times an 8-bit code is exact in float, and so is adding the bias, a
 * power-of-two multiple of d; -128 d and -8 d are exact in f16 unless they
 * overflow it, and then the tensor's scales and biases are f32. A tensor
 * whose scale is not finite, or whose V-head reordering (gguf_qwen35.c)
 * would split a group, is dequantized into f32 instead, also exactly.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "gguf_blocks.h"
#include "store.h"

static const struct { int type, block, bytes; const char *name; } types[] = {
	{ TF_GGML_F32, 1, 4, "F32" }, { TF_GGML_F16, 1, 2, "F16" }, { TF_GGML_Q4_0, 32, 18, "Q4_0" },
	{ TF_GGML_Q4_1, 32, 20, "Q4_1" }, { TF_GGML_Q5_0, 32, 22, "Q5_0" }, { TF_GGML_Q5_1, 32, 24, "Q5_1" },
	{ TF_GGML_Q8_0, 32, 34, "Q8_0" }, { TF_GGML_Q8_1, 32, 36, "Q8_1" }, { TF_GGML_Q2_K, 256, 84, "Q2_K" },
	{ TF_GGML_Q3_K, 256, 110, "Q3_K" }, { TF_GGML_Q4_K, 256, 144, "Q4_K" },
	{ TF_GGML_Q5_K, 256, 176, "Q5_K" }, { TF_GGML_Q6_K, 256, 210, "Q6_K" },
	{ TF_GGML_Q8_K, 256, 292, "Q8_K" }, { TF_GGML_IQ2_XXS, 256, 66, "IQ2_XXS" },
	{ TF_GGML_IQ2_XS, 256, 74, "IQ2_XS" }, { TF_GGML_IQ3_XXS, 256, 98, "IQ3_XXS" },
	{ TF_GGML_IQ1_S, 256, 50, "IQ1_S" }, { TF_GGML_IQ4_NL, 32, 18, "IQ4_NL" },
	{ TF_GGML_IQ3_S, 256, 110, "IQ3_S" }, { TF_GGML_IQ2_S, 256, 82, "IQ2_S" },
	{ TF_GGML_IQ4_XS, 256, 136, "IQ4_XS" }, { TF_GGML_I8, 1, 1, "I8" }, { TF_GGML_I16, 1, 2, "I16" },
	{ TF_GGML_I32, 1, 4, "I32" }, { TF_GGML_I64, 1, 8, "I64" }, { TF_GGML_F64, 1, 8, "F64" },
	{ TF_GGML_IQ1_M, 256, 56, "IQ1_M" }, { TF_GGML_BF16, 1, 2, "BF16" },
	{ TF_GGML_TQ1_0, 256, 54, "TQ1_0" }, { TF_GGML_TQ2_0, 256, 66, "TQ2_0" },
	{ TF_GGML_MXFP4, 32, 17, "MXFP4" }, { TF_GGML_NVFP4, 64, 36, "NVFP4" }, { TF_GGML_Q1_0, 128, 18, "Q1_0" },
};

const char *tf_ggml_type_name(int type)
{
	for (size_t i = 0; i < sizeof types / sizeof *types; i++)
		if (types[i].type == type)
			return types[i].name;
	return "?";
}

int tf_ggml_block(int type, int *bytes)
{
	for (size_t i = 0; i < sizeof types / sizeof *types; i++)
		if (types[i].type == type) {
			*bytes = types[i].bytes;
			return types[i].block;
		}
	return 0;
}

int tf_ggml_dtype(int type)
{
	return type == TF_GGML_F32 ? TF_F32 : type == TF_GGML_F16 ? TF_F16 : type == TF_GGML_BF16 ? TF_BF16 : 0;
}

static uint16_t le16(const unsigned char *p)
{
	return p[0] | p[1] << 8;
}

/* the value of weight j of a block, as ggml's dequantize_row_* gives it */
static float block_value(int type, const unsigned char *b, int j)
{
	float d = tf_f16_to_f32(le16(b));

	switch (type) {
	case TF_GGML_Q8_0: return (float)(int8_t)b[2 + j] * d;
	case TF_GGML_Q4_0: return (float)((j < 16 ? b[2 + j] & 15 : b[2 + j - 16] >> 4) - 8) * d;
	case TF_GGML_Q1_0: return b[2 + j / 8] >> (j % 8) & 1 ? d : -d;
	}
	return 0;
}

/* the source bytes of logical (row r, column c) of t: rows and columns
 * through the maps; c is a multiple of blk */
static const unsigned char *src_at(const tf_gguf_tensor *t, const tf_gguf_map *m, int64_t r, int64_t c, int blk,
				   int bsz)
{
	int64_t cols = t->ne[0], rb = cols / blk * bsz;
	int64_t sr = m && m->row ? m->row[r] : r, sc = c;

	if (m && m->colblk) {
		int64_t k = c / m->colblk;
		sc = m->col[k] * m->colblk + c % m->colblk;
	}
	return t->data + sr * rb + sc / blk * bsz;
}

int tf_gguf_weight(const tf_gguf_tensor *t, const tf_gguf_map *m, tf_weight *w, void **owned)
{
	int64_t rows = t->ne[1], cols = t->ne[0];
	int bsz = 0, blk = tf_ggml_block(t->type, &bsz), dt = tf_ggml_dtype(t->type);
	int quant = t->type == TF_GGML_Q8_0 || t->type == TF_GGML_Q4_0 || t->type == TF_GGML_Q1_0;
	int f32 = 0, wide = 0;

	*owned = NULL;
	memset(w, 0, sizeof *w);
	if (t->ndim != 2 && !(t->ndim > 2 && t->ne[2] == 1 && t->ne[3] == 1))
		return tf_err("tensor '%s' is not a matrix", t->name);
	if (!dt && !quant)
		return tf_err("tensor '%s' is %s, which has no exact form here (F32, F16, BF16, Q8_0, Q4_0 and "
			      "Q1_0 are taken)", t->name, tf_ggml_type_name(t->type));
	if (m && m->colblk && cols % m->colblk)
		return tf_err("tensor '%s': %lld columns are not whole heads", t->name, (long long)cols);
	w->rows = rows;
	w->cols = cols;
	if (dt) {
		int es = tf_dtype_bytes(dt);
		w->fmt = dt;
		if (!m || (!m->row && !m->colblk)) {
			w->data = t->data;
			return 0;
		}
		unsigned char *out = *owned = tf_malloc(rows * cols * es);
		int64_t step = m->colblk ? m->colblk : cols;
		for (int64_t r = 0; r < rows; r++)
			for (int64_t c = 0; c < cols; c += step)
				memcpy(out + (r * cols + c) * es, src_at(t, m, r, c, 1, es), step * es);
		w->data = out;
		return 0;
	}
	/* a permutation of columns must move whole groups */
	if (m && m->colblk && m->colblk % blk)
		f32 = 1;
	for (int64_t r = 0; r < rows && !f32; r++)
		for (int64_t c = 0; c < cols; c += blk) {
			float d = tf_f16_to_f32(le16(src_at(t, m, r, c, blk, bsz)));
			if (!isfinite(d))
				f32 = 1;
			else if (fabsf(d) * (t->type == TF_GGML_Q8_0 ? 128 : 8) > 65504)
				wide = 1;
		}
	if (f32) {
		float *out = *owned = tf_malloc(rows * cols * sizeof *out);
		for (int64_t r = 0; r < rows; r++)
			for (int64_t c = 0; c < cols; c += blk) {
				const unsigned char *b = src_at(t, m, r, c, blk, bsz);
				for (int j = 0; j < blk; j++)
					out[r * cols + c + j] = block_value(t->type, b, j);
			}
		w->fmt = TF_F32;
		w->data = out;
		return 0;
	}
	int64_t ng = cols / blk, es = wide ? 4 : 2;
	int bits = t->type == TF_GGML_Q8_0 ? 8 : t->type == TF_GGML_Q4_0 ? 4 : 1;
	uint64_t cb = (uint64_t)rows * cols * bits / 8, sb = (uint64_t)rows * ng * es;
	unsigned char *buf = *owned = tf_calloc(1, cb + 2 * sb + 1);
	unsigned char *codes = buf, *sc = buf + cb, *bi = sc + sb;

	w->fmt = bits == 1 ? TF_SIGN1 : TF_AFFINE;
	w->bits = bits;
	w->group = blk;
	w->sdtype = wide ? TF_F32 : TF_F16;
	w->data = codes;
	w->scales = sc;
	w->biases = bits == 1 ? NULL : bi;
	for (int64_t r = 0; r < rows; r++)
		for (int64_t g = 0; g < ng; g++) {
			const unsigned char *b = src_at(t, m, r, g * blk, blk, bsz);
			uint16_t dh = le16(b);
			int64_t at = r * ng + g;
			unsigned char *row = codes + (uint64_t)(r * cols + g * blk) * bits / 8;

			if (bits == 1) {
				memcpy(row, b + 2, 16);
			} else if (bits == 8) {
				for (int j = 0; j < 32; j++)
					row[j] = (uint8_t)((int8_t)b[2 + j] + 128);
			} else {
				/* MLX order: weight j in the nibble j of the row, low first */
				for (int j = 0; j < 32; j += 2) {
					int lo = j < 16 ? b[2 + j] & 15 : b[2 + j - 16] >> 4;
					int hi = j + 1 < 16 ? b[2 + j + 1] & 15 : b[2 + j + 1 - 16] >> 4;
					row[j / 2] = lo | hi << 4;
				}
			}
			if (wide) {
				float d = tf_f16_to_f32(dh), bias = -(float)(bits == 8 ? 128 : 8) * d;
				memcpy(sc + at * 4, &d, 4);
				memcpy(bi + at * 4, &bias, 4);
			} else {
				uint16_t bias = 0;
				memcpy(sc + at * 2, &dh, 2);
				if (bits > 1)
					bias = tf_f32_to_f16(-(float)(bits == 8 ? 128 : 8) * tf_f16_to_f32(dh));
				memcpy(bi + at * 2, &bias, 2);
			}
		}
	return 0;
}

int tf_gguf_floats(const tf_gguf_tensor *t, float *out, int64_t n)
{
	int bsz = 0, blk = tf_ggml_block(t->type, &bsz), dt = tf_ggml_dtype(t->type);
	int64_t count = t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3];

	if (count != n)
		return tf_err("tensor '%s' has %lld values, expected %lld", t->name, (long long)count, (long long)n);
	if (dt) {
		for (int64_t i = 0; i < n; i++)
			out[i] = tf_load_scalar(t->data, dt, i);
		return 0;
	}
	if (t->type != TF_GGML_Q8_0 && t->type != TF_GGML_Q4_0 && t->type != TF_GGML_Q1_0)
		return tf_err("tensor '%s' is %s, which has no exact form here (F32, F16, BF16, Q8_0, Q4_0 and "
			      "Q1_0 are taken)", t->name, tf_ggml_type_name(t->type));
	for (int64_t i = 0; i < n; i += blk)
		for (int j = 0; j < blk; j++)
			out[i + j] = block_value(t->type, t->data + i / blk * bsz, j);
	return 0;
}
