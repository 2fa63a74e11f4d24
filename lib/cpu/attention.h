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

#include "mix.h"

/* out (N, H) from the normed input u (N, H) of layer `layer`, N the rows
 * of the np sequences p (mix.h) in order: each sequence's n positions
 * after its state's, or with sh the n nodes of a tree on top of it; its
 * new keys and values go to its cache rows pos to pos + n - 1 either way */
void tf_attention(const tf_mix_part *p, int np, int layer, const float *u, int64_t N, float *out);

#endif
