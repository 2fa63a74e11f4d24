/*
 * deltanet.h: the Gated DeltaNet mixer of the CPU reference, as
 * transformers' Qwen3_5GatedDeltaNet.forward: the q, k, v, z, b and a
 * projections of u; a depthwise causal conv with SiLU over q, k and v;
 * q and k L2-normed (q also by 1/sqrt(Dk)); beta = sigmoid(b),
 * g = -exp(A_log) softplus(a + dt_bias); the delta rule (delta_rule.h);
 * RMSNorm(o) w silu(z) per value head; the output projection.
 */
#ifndef TF_DELTANET_H
#define TF_DELTANET_H

#include <stdint.h>

#include "mix.h"

/* out (N, H) from the normed input u (N, H) of layer `layer`, N the rows
 * of the np sequences p (mix.h) in order: each sequence's n positions
 * after its state's, which they extend (chunked: the delta rule in chunks
 * of 64), or with sh the n nodes of a tree on top of it, which leave the
 * state as it was and what a commit needs in st->tree */
void tf_deltanet(const tf_mix_part *p, int np, int layer, const float *u, int64_t N, float *out);

#endif
