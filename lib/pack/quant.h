/*
 * quant.h: the numbers tf-pack writes.
 *
 * MLX affine codes (w = scale * q + bias, a scale and bias a group): a row
 * of K codes of B bits is one little-endian, LSB-first bit stream folded
 * into 32-bit words; code j holds stream bits [j*B, j*B + B). Quantization
 * follows mlx.core.quantize step for step in fp32, so the codes, scales
 * and biases are the ones mlx writes.
 *
 * Exact 1-bit: a row whose every group of 128 holds one magnitude s with
 * either sign becomes sign bits (bit c%8 of byte c/8, set = +s) and s, copied
 * bit for bit from the source dtype.
 */
#ifndef TF_QUANT_H
#define TF_QUANT_H

#include <stdint.h>

/* packs n codes (each < 2^bits) into (n*bits/32) words; n*bits % 32 == 0 */
void tf_codes_pack(const uint8_t *q, int64_t n, int bits, uint32_t *out);
/* code j of a packed row (unaligned bytes allowed) */
uint32_t tf_code_get(const void *row, int64_t j, int bits);

/* stores f rounded to dtype (TF_F32, TF_BF16, TF_F16) at element i; the
 * inverse of weight.h's tf_load_scalar */
void tf_put_scalar(void *p, int dtype, int64_t i, float f);

/*
 * Affine quantization of src (rows, cols) of dtype (f32/bf16/f16):
 * codes (rows, cols*bits/32) u32, scales and biases (rows, cols/group) of
 * the same dtype as src. Returns the largest |w - (s*q + b)| with the stored
 * (rounded) s and b, the error a reader sees.
 */
double tf_affine_quantize(const void *src, int dtype, int64_t rows, int64_t cols, int bits, int group,
			  uint32_t *codes, void *scales, void *biases);

/*
 * Exact 1-bit repack of src (rows, cols) with groups of 128 along cols:
 * 1 when every group holds exactly {-s, +s}; then bits (rows, cols/8) and
 * scales (rows, cols/128) of src's dtype are filled. 0 when some group does
 * not; *bad_row and *bad_col tell the first element that breaks it.
 * bits and scales may be NULL to only test.
 */
int tf_sign1_repack(const void *src, int dtype, int64_t rows, int64_t cols, uint8_t *bits, void *scales,
		    int64_t *bad_row, int64_t *bad_col);

#endif
