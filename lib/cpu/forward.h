/*
 * forward.h: the CPU forward pass of a Qwen3.5 text model.
 *
 * tf_forward() runs n new tokens of one sequence through the model, reading
 * and extending its state, and writes logits. Each row's arithmetic is the
 * same whether the n tokens come one per call or all together, so a window
 * of positions is bit-identical to stepping through them; only TF_FWD_CHUNKED
 * (the chunked delta rule for prompts) sums in another order.
 */
#ifndef TF_FORWARD_H
#define TF_FORWARD_H

#include "state.h"

enum {
	TF_FWD_LAST = 1,        /* logits of the last row only: (1, V) */
	TF_FWD_CHUNKED = 2,     /* Gated DeltaNet in chunks of 64 (prompt mode) */
};

/* receives logits (rows, V) of the sequence's rows [row0, row0 + rows)
 * counted from the first of the call's n tokens; returns -1 to stop */
typedef int (*tf_logits_fn)(void *ctx, int64_t row0, int64_t rows, const float *logits);

/* ids (n) in [0, V); logits (n, V), or (1, V) with TF_FWD_LAST, or NULL */
int tf_forward(tf_state *st, const int32_t *ids, int64_t n, float *logits, int flags);
/* as tf_forward, handing the logits over in blocks of at most 64 rows so a
 * long prompt over a large vocabulary never holds all of them */
int tf_forward_each(tf_state *st, const int32_t *ids, int64_t n, int flags, tf_logits_fn fn, void *ctx);

/* the mixers, each writing out (n, H) from the normed input u (n, H) */
void tf_attention(tf_state *st, int layer, const float *u, int64_t n, float *out);
void tf_deltanet(tf_state *st, int layer, const float *u, int64_t n, float *out, int chunked);
/* the delta rule alone (spec 3.6 step 7) for n tokens: qkv (n, conv_dim)
 * after the conv, q and k normalized; beta, g (n, Hv); state S (Hv, Dk, Dv)
 * updated; o (n, Hv, Dv). chunked: in chunks of 64 (spec 3.7), the same up
 * to float rounding */
void tf_gdn_rule(const tf_config *c, const float *qkv, const float *beta, const float *g, float *S, int64_t n,
		 float *o, int chunked);

#endif
