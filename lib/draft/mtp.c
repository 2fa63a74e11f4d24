/*
 * mtp.c: drafting with the model's own multi-token-prediction head
 * (model/mtp_head.h), on the CPU.
 *
 * The head keeps a KV cache of its own, a row for each position t of the
 * sequence once the id at t + 1 is known: the model's hidden state at t
 * (kept by the decoder, tf_decoder_keep_hidden) and the embedding of the
 * id at t + 1. Before each proposal it takes in the rows of the positions
 * the target took since the last one (the prompt, then each verify's kept
 * path), the last of them being the position before the root: its output
 * guesses the id after the root. A chain feeds the head's own output
 * state and the id it guessed back in, one position on, as vLLM's MTP
 * proposer does; those rows are dropped again after the proposal. A tree
 * WIDTHxDEPTH takes the head's WIDTH likeliest first ids (the first its
 * argmax, so a tree's first branch is the chain), each the root of a
 * greedy chain DEPTH long.
 *
 * The drafts are the head's argmax at every step, sampling or not: the
 * verifier draws the target's own ids, so what is drafted only moves how
 * many of them a pass makes.
 */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "cpu/forward.h"
#include "cpu/matmul.h"
#include "cpu/ops.h"
#include "draft_impl.h"
#include "model/mtp_head.h"

struct tf_mtp_draft {
	tf_mtp *head;
	tf_decoder *d;          /* the target's sequence, keeping its hidden states */
	tf_state *st;           /* the head's KV cache: st->pos rows, one a position taken in */
	int have;               /* g and logits hold the last row's */
	float *g;               /* (H) the last row's output after the head's norm */
	float *logits;          /* (V) its logits */
	int32_t top[TF_DRAFT_WIDTH_MAX];        /* a tree's first ids */
};

void tf_mtp_free(struct tf_mtp_draft *x)
{
	if (!x)
		return;
	tf_state_free(x->st);
	tf_mtp_close(x->head);
	free(x->g);
	free(x->logits);
	free(x);
}

int tf_mtp_bind(tf_drafter *dr, tf_decoder *d)
{
	const tf_model *m = tf_decoder_model(d);
	struct tf_mtp_draft *x;

	if (tf_decoder_on_gpu(d))
		return tf_err("drafter 'mtp' runs on the CPU only, and the sequence is on the GPU: use --device cpu");
	x = tf_calloc(1, sizeof *x);
	if (!(x->head = tf_mtp_open(m))) {
		free(x);
		return tf_errpre("drafter 'mtp'");
	}
	if (tf_decoder_keep_hidden(d) < 0) {
		tf_mtp_free(x);
		return -1;
	}
	x->d = d;
	x->st = tf_state_new(&x->head->view);
	x->g = tf_malloc(m->c.hidden * sizeof *x->g);
	x->logits = tf_malloc(m->c.vocab * sizeof *x->logits);
	tf_mtp_free(dr->mtp);
	dr->mtp = x;
	return 0;
}

/*
 * n rows through the head on top of its cache: row r from the hidden
 * state hid (n, H) and the id next[r] after its position. The rows stay
 * in the cache; the last one's output state goes to x->g and its logits
 * to x->logits.
 */
static void rows(struct tf_mtp_draft *x, const float *hid, const int32_t *next, int64_t n)
{
	const tf_mtp *h = x->head;
	const tf_model *m = &h->view;
	int64_t H = m->c.hidden;
	float *in = tf_malloc(n * 2 * H * sizeof *in);  /* (n, 2H) [normed embedding, normed hidden] */
	float *e = tf_malloc(H * sizeof *e);            /* (H) */
	float *xs = tf_malloc(n * H * sizeof *xs);      /* (n, H) the layer's stream */
	float *u = tf_malloc(n * H * sizeof *u);        /* (n, H) scratch */
	float *mix = tf_malloc(n * H * sizeof *mix);    /* (n, H) scratch */

	// [pre_fc_norm_embedding(embed(next)), pre_fc_norm_hidden(hid)], then fc
	for (int64_t r = 0; r < n; r++) {
		tf_embed(&m->embed, next[r], e);
		tf_rmsnorm(in + r * 2 * H, e, h->norm_emb, 1, H, m->c.eps);
		tf_rmsnorm(in + r * 2 * H + H, hid + r * H, h->norm_hid, 1, H, m->c.eps);
	}
	tf_matmul(&h->fc, in, n, xs);

	// the decoder layer at the rows' positions, its keys and values kept
	tf_mix_part p = { x->st, n, NULL, 0 };
	tf_state_reserve(x->st, n);
	tf_forward_layer(&p, 1, 0, xs, u, mix, n);
	x->st->pos += n;

	// the last row: the head's norm, then the model's head
	tf_rmsnorm(x->g, xs + (n - 1) * H, h->norm, 1, H, m->c.eps);
	tf_matmul(&m->head, x->g, 1, x->logits);
	x->have = 1;
	free(in);
	free(e);
	free(xs);
	free(u);
	free(mix);
}

/* the w likeliest ids of l (V), the likeliest first, ties to the lower id */
static int top_ids(const float *l, int64_t V, int w, int32_t *out)
{
	int k = 0;

	for (; k < w && k < V; k++) {
		int64_t best = -1;
		for (int64_t i = 0; i < V; i++) {
			int taken = 0;
			for (int j = 0; j < k && !taken; j++)
				taken = out[j] == i;
			if (!taken && (best < 0 || l[i] > l[best]))
				best = i;
		}
		out[k] = (int32_t)best;
	}
	return k;
}

void tf_mtp_propose(tf_drafter *dr, const int32_t *ids, int64_t n, int depth, int64_t nodes)
{
	struct tf_mtp_draft *x = dr->mtp;
	tf_draft_tree *t = &dr->t;
	int64_t first, nh, P, H, V;
	const float *hid;

	if (!x)
		return;
	H = x->head->view.c.hidden;
	V = x->head->view.c.vocab;
	P = tf_decoder_pos(x->d);
	hid = tf_decoder_hidden(x->d, &first, &nh);
	// the rows the target took since the last proposal: positions up to P - 1,
	// each with the id after it (ids[P] is the root); nothing to draft from
	// a sequence whose ids are not the positions it took
	if (first != x->st->pos || first + nh != P || n != P + 1)
		return;
	if (nh > 0) {
		rows(x, hid, ids + first + 1, nh);
		tf_decoder_hidden_drop(x->d);
	}
	if (!x->have)
		return;

	int w = top_ids(x->logits, V, dr->sp.width, x->top);
	float *g0 = tf_malloc(H * sizeof *g0), *l0 = tf_malloc(V * sizeof *l0);   /* (H), (V) the committed row's */
	memcpy(g0, x->g, H * sizeof *g0);
	memcpy(l0, x->logits, V * sizeof *l0);
	for (int b = 0; b < w && t->n < nodes; b++) {
		int32_t at = (int32_t)tf_draft_tree_add(t, x->top[b], 0), id = x->top[b];
		// a chain from this first id: each step the head's output state and
		// the id it just guessed, one position on
		for (int k = 1; k < depth && t->n < nodes; k++) {
			rows(x, x->g, &id, 1);
			id = tf_argmax(x->logits, V);
			at = (int32_t)tf_draft_tree_add(t, id, at);
		}
		// the guessed rows leave the cache; the committed row's output is back
		x->st->pos = P;
		memcpy(x->g, g0, H * sizeof *g0);
	}
	memcpy(x->logits, l0, V * sizeof *l0);
	free(g0);
	free(l0);
}
