/*
 * forward.h: the CPU forward pass of a Qwen3.5 text model.
 *
 * tf_forward() runs n new tokens of one sequence through the model, reading
 * and extending its state, and writes logits; tf_forward_tree() runs a
 * token tree (model/tree.h) on top of it. Each row's arithmetic is the
 * same whether the n tokens come one per call or all together, so a window
 * of positions is bit-identical to stepping through them; only TF_FWD_CHUNKED
 * (the chunked delta rule for prompts) sums in another order.
 */
#ifndef TF_FORWARD_H
#define TF_FORWARD_H

#include "model/pass.h"
#include "mix.h"
#include "model/tree.h"
#include "state.h"

/* one sequence's share of a pass over several (tf_forward_multi) */
typedef struct {
	tf_state *st;
	const int32_t *ids;     /* (n) in [0, V); n 0: the sequence sits the pass out */
	int64_t n;
	int flags;              /* TF_FWD_LAST, TF_FWD_CHUNKED, for this sequence alone */
	tf_logits_fn fn;        /* its logits, rows counted from its first id; NULL for none */
	void *ctx;
	float *hidden;          /* (n, H) its rows' last hidden states after the final norm
				   (what the head multiplies), or NULL */
} tf_fwd_part;

/* ids (n) in [0, V); logits (n, V), or (1, V) with TF_FWD_LAST, or NULL */
int tf_forward(tf_state *st, const int32_t *ids, int64_t n, float *logits, int flags);
/* as tf_forward, handing the logits over in blocks of at most 64 rows so a
 * long prompt over a large vocabulary never holds all of them; told after
 * each layer, with pr (or NULL) */
int tf_forward_each(tf_state *st, const int32_t *ids, int64_t n, int flags, tf_logits_fn fn, void *ctx,
		    const tf_pass_progress *pr);

/* the np sequences p (distinct states of one model) in one pass: each
 * weight read once for all their rows (a decode round of many streams,
 * prompt chunks among them), each sequence's logits bit-identical to a
 * tf_forward_each of its own ids with its own flags; told after each
 * layer, with pr (or NULL) */
int tf_forward_multi(const tf_fwd_part *p, int np, const tf_pass_progress *pr);

/* the nodes of tree t on top of the state in one pass, their logits (n, V)
 * to fn in node order: each node's row bit-identical to a step along its
 * branch from the root; with hid (n, H) not NULL, their last hidden states
 * after the final norm there. The state stays as it was; tf_state_commit
 * keeps a path of it, tf_state_rollback (or the next pass) drops it. */
int tf_forward_tree(tf_state *st, const tf_tree *t, tf_logits_fn fn, void *ctx, float *hid);

/* layer i of the stack over x (N, H), the rows of the np sequences p (mix.h)
 * on top of their states (which then hold the rows' keys and values, the
 * positions not yet counted): x += mixer(norm(x)), x += mlp(norm(x)); u
 * and mix (N, H) are scratch. The MTP head's layer runs through it. */
void tf_forward_layer(const tf_mix_part *p, int np, int i, float *x, float *u, float *mix, int64_t N);

#endif
