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

#include "state.h"

/* out (n, H) from the normed input u (n, H) of layer `layer`: n positions
 * after the state's, which they extend (chunked: the delta rule in chunks
 * of 64), or with sh the n nodes of a tree on top of it, which leave the
 * state as it was and what a commit needs in st->tree */
void tf_deltanet(tf_state *st, int layer, const float *u, int64_t n, const tf_tree_shape *sh, float *out,
		 int chunked);

#endif
