/*
 * attention.h: the gated full-attention mixer of the CPU reference, as
 * transformers' Qwen3_5Attention.forward: q with its gate, k and v from u;
 * per-head RMSNorm of q and k; rotary over the first partial_rotary_factor
 * of each head; keys and values appended to the state's caches; causal
 * softmax(q k^T / sqrt(D)) v over grouped KV heads; times sigmoid(gate);
 * the output projection.
 */
#ifndef TF_ATTENTION_H
#define TF_ATTENTION_H

#include <stdint.h>

#include "state.h"

/* out (n, H) from the normed input u (n, H) of layer `layer`: n positions
 * after the state's, or with sh the n nodes of a tree on top of it; the
 * new keys and values go to cache rows pos to pos + n - 1 either way */
void tf_attention(tf_state *st, int layer, const float *u, int64_t n, const tf_tree_shape *sh, float *out);

#endif
