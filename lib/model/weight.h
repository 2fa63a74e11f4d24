/*
 * weight.h: a typed, read-only view of one weight tensor, in whatever form it
 * is stored. Data usually points into a mapped file and may be unaligned (MLX
 * safetensors are not padded), so kernels load through memcpy.
 *
 * A 2-D weight is W[rows][cols] = W[out][in], used as y = x W^T. A 1-D
 * weight (norm, bias-like vectors) has rows = 1.
 */
#ifndef TF_WEIGHT_H
#define TF_WEIGHT_H

#include <stdint.h>

enum {
	TF_F32 = 1,     /* data: (rows, cols) float32 */
	TF_BF16,        /* data: (rows, cols) bfloat16 */
	TF_F16,         /* data: (rows, cols) IEEE half */
	TF_AFFINE,      /* MLX affine: data (rows, cols*bits/32) uint32 LSB-first codes,
			   scales and biases (rows, cols/group) of sdtype;
			   w = scale * q + bias per group */
	TF_SIGN1,       /* one bit a weight: data (rows, cols/8) bytes, bit j%8 of byte j/8
			   set = +s, clear = -s; scales (rows, cols/group) of sdtype, group 128 */
};

typedef struct {
	int fmt;
	int64_t rows, cols;
	int bits, group;        /* TF_AFFINE: 2..8 and 32/64/128; TF_SIGN1: 1 and 128 */
	int sdtype;             /* TF_F32, TF_BF16 or TF_F16: dtype of scales and biases */
	const void *data;
	const void *scales;
	const void *biases;
} tf_weight;

static inline float tf_bf16_to_f32(uint16_t h)
{
	union { uint32_t u; float f; } v = { (uint32_t)h << 16 };
	return v.f;
}

/* round to nearest even, NaN kept quiet */
static inline uint16_t tf_f32_to_bf16(float f)
{
	union { float f; uint32_t u; } v = { f };
	if ((v.u & 0x7fffffff) > 0x7f800000)
		return (v.u >> 16) | 0x40;
	return (v.u + 0x7fff + ((v.u >> 16) & 1)) >> 16;
}

float tf_f16_to_f32(uint16_t h);
uint16_t tf_f32_to_f16(float f);
const char *tf_fmt_name(int fmt);
/* element c of a scale/bias vector stored as sdtype */
float tf_load_scalar(const void *p, int sdtype, int64_t i);
/* dequantizes row r of w into out[cols] */
void tf_weight_row(const tf_weight *w, int64_t r, float *out);
/* bytes the view's data, scales and biases occupy */
uint64_t tf_weight_bytes(const tf_weight *w);

#endif
