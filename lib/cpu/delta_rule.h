/*
 * delta_rule.h: the gated delta rule of a Gated DeltaNet layer alone, as
 * transformers' torch_recurrent_gated_delta_rule and
 * torch_chunk_gated_delta_rule compute it, per value head h with its key
 * head h / (Hv / Hk):
 *
 *   S = exp(g) S;  d = beta (v - S^T k);  S += k d^T;  o = S^T q
 */
#ifndef TF_DELTA_RULE_H
#define TF_DELTA_RULE_H

#include <stdint.h>

#include "model/config.h"
#include "model/tree.h"

/* n tokens: qkv (n, conv_dim) after the conv, q and k normalized; beta, g
 * (n, Hv); the state S (Hv, Dk, Dv) updated; o (n, Hv, Dv). chunked: in
 * chunks of 64 from the first token (even a single one), the same up to
 * float rounding; calls of a multiple of 64 tokens each, then the rest,
 * give the bits of one call over them all */
void tf_gdn_rule(const tf_config *c, const float *qkv, const float *beta, const float *g, float *S, int64_t n,
		 float *o, int chunked);
/* the same, token by token, over the n nodes of a tree (qkv, beta, g and o
 * by node): each node runs from its parent's state, a root from S, which
 * stays as it was */
void tf_gdn_rule_tree(const tf_config *c, const float *qkv, const float *beta, const float *g, const float *S,
		      const tf_tree_shape *sh, float *o);

#endif
