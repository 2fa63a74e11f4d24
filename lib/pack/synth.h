/*
 * synth.h: deterministic random models of any Qwen3.5 geometry.
 *
 * For benchmarks where real weights are not at hand: the tensors a dense
 * Qwen3.5 text model of that config.json has (the Hugging Face layout),
 * filled from a seeded generator so the same seed gives the same bytes.
 * Quantized weights are random codes with one scale and bias a tensor,
 * chosen so w is uniform with standard deviation 1/sqrt(in): activations
 * stay of order one through the layers and the logits are finite.
 */
#ifndef TF_SYNTH_H
#define TF_SYNTH_H

#include <jansson.h>
#include <stdint.h>

enum { TF_SYN_MATRIX = 1, TF_SYN_NORM0, TF_SYN_NORM1, TF_SYN_CONV, TF_SYN_ALOG, TF_SYN_DTBIAS };

typedef struct {
	char name[96];          /* normalized name */
	int kind;               /* TF_SYN_* */
	int ndim;
	int64_t shape[3];
} tf_synth_tensor;

/* the tensors of the model a config describes; -1 with a message */
int tf_synth_plan(json_t *config, tf_synth_tensor **t, int *n);
/* writes a bundle of the geometry config names (a config.json, or a
 * geometry of model/geometry.h): bits 1 (sign1), 2..8 (affine, group), 16
 * (bf16) */
int tf_synth(const char *config, int bits, int group, uint64_t seed, const char *out, int progress);

#endif
