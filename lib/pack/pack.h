/*
 * pack.h: a checkpoint (folder or bundle) into a tf-bundle(5).
 *
 * Each tensor takes one path, recorded in the manifest:
 *   mlx        an MLX affine triplet, codes, scales and biases copied bit for bit
 *   sign1      a 2-D float weight whose every group of 128 along the input
 *              dimension holds exactly {-s, +s}: sign bits and s, error 0
 *   quantized  a 2-D float weight quantized at the bits asked for (--bits,
 *              --recipe), the way mlx.core.quantize does it
 *   kept       everything else, bytes unchanged (norms, conv1d, A_log,
 *              dt_bias, and weights nobody asked to quantize)
 */
#ifndef TF_PACK_H
#define TF_PACK_H

typedef struct {
	int bits;               /* 0: keep float weights; 2..8: quantize them */
	int group;              /* 32, 64 or 128 */
	const char *recipe;     /* recipe file or mixed_X_Y name, or NULL */
	int no_sign1;           /* do not look for binary weights */
	int progress;           /* redraw a progress line on stderr */
} tf_pack_opts;

int tf_pack(const char *src, const char *out, const tf_pack_opts *o);

#endif
