/*
 * round: many sequences in shared rounds (decode/round.h) on the CPU
 * reference, against each sequence alone, bit for bit, on tiny-q35 and
 * the two Shakespeare models.
 *
 * First the prompt split the rounds rely on: a prompt fed in pieces of a
 * multiple of 64 ids (the chunked delta rule's chunk), the last piece
 * whatever is left, even one id, gives the logits of every row and the
 * whole state (keys, values, conv tails, recurrent states) of one call.
 *
 * Then streams of other prompt lengths (1 to 300 ids, so the prompts and
 * the steps cross the chunk boundaries of 64 at other times), fed in
 * pieces of other sizes, entering at other rounds (a prompt taken in while
 * others decode, several prompts in one round) and ending at other rounds
 * (a stream done mid-way, the rest going on, one sitting a round out):
 * every logits row of every stream equals the row of the stream alone, a
 * whole prompt and then one step at a time.
 */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "cpu/forward.h"
#include "cpu/state.h"
#include "decode/decoder.h"
#include "decode/round.h"
#include "decode/sample.h"
#include "model/model.h"
#include "tap.h"

#define DIE_IF(x) do { if ((x) < 0) { fprintf(stderr, "%s\n", tf_errmsg()); exit(1); } } while (0)
#define NS 7

static tf_model *m;
static int64_t V;

#include "rounds.h"

static int same_state(const tf_state *a, const tf_state *b)
{
	const tf_config *c = &m->c;
	int64_t kv = (int64_t)c->kv_heads * c->head_dim, cs = (int64_t)(c->conv_k - 1) * m->conv_dim,
		ss = (int64_t)c->lin_v_heads * c->lin_k_dim * c->lin_v_dim;

	if (a->pos != b->pos)
		return 0;
	for (int i = 0; i < c->layers; i++)
		if (c->full[i] ? memcmp(a->k[i], b->k[i], 4 * a->pos * kv) || memcmp(a->v[i], b->v[i], 4 * a->pos * kv)
			       : memcmp(a->conv[i], b->conv[i], 4 * cs) || memcmp(a->S[i], b->S[i], 4 * ss))
			return 0;
	return 1;
}

static void split_prompt(const char *name, int n, int piece)
{
	int32_t *ids = malloc(4 * n);
	float *a = malloc(4 * V * n), *b = malloc(4 * V * n);
	tf_state *whole = tf_state_new(m), *parts = tf_state_new(m);

	some_ids(ids, n, n * 31 + piece);
	DIE_IF(tf_forward(whole, ids, n, a, TF_FWD_CHUNKED));
	for (int t = 0; t < n; t += piece) {
		int k = n - t < piece ? n - t : piece;
		DIE_IF(tf_forward(parts, ids + t, k, b + (int64_t)t * V, TF_FWD_CHUNKED));
	}
	ok(!memcmp(a, b, 4 * V * n) && same_state(whole, parts),
	   "%s: a prompt of %d ids in pieces of %d: every row's logits and the state of one call", name, n, piece);
	tf_state_free(whole);
	tf_state_free(parts);
	free(ids);
	free(a);
	free(b);
}

/* the stream alone: its whole prompt in one call, then one step at a time */
static void solo(struct stream *s)
{
	tf_decoder *d = tf_decoder_new(m);

	DIE_IF(tf_decoder_forward(d, s->prompt, s->np, s->solo, TF_FWD_LAST | TF_FWD_CHUNKED));
	solo_steps(s, d);
	tf_decoder_free(d);
}

static void all_rounds(const char *name)
{
	static const int np[NS] = { 1, 47, 64, 130, 300, 65, 200 };
	static const int steps[NS] = { 70, 5, 90, 20, 30, 3, 66 };
	static const int piece[NS] = { 256, 64, 128, 64, 256, 64, 192 };
	static const int start[NS] = { 0, 0, 3, 7, 12, 20, 20 };

	rounds(name, NS, np, steps, piece, start);
}

int main(int argc, char **argv)
{
	static const char *models[] = { "tiny-q35", "shakespeare-q35", "shakespeare-q35-1bit" };
	char path[4096];
	const char *dir = dirname(strdup(argv[0]));

	for (unsigned i = 0; i < sizeof models / sizeof *models; i++) {
		snprintf(path, sizeof path, "%s/../data/%s", dir, models[i]);
		m = tf_model_open(path);
		DIE_IF(m ? 0 : -1);
		V = m->c.vocab;
		split_prompt(models[i], 257, 256);
		split_prompt(models[i], 129, 64);
		split_prompt(models[i], 300, 128);
		split_prompt(models[i], 65, 64);
		split_prompt(models[i], 1, 64);
		all_rounds(models[i]);
		tf_model_close(m);
	}
	return done();
}
