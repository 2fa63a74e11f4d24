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

/* fixed pseudo-random ids */
static void some_ids(int32_t *ids, int n, uint64_t seed)
{
	for (int i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		ids[i] = (int32_t)((seed >> 33) % (uint64_t)V);
	}
}

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

/* a stream of the test: its prompt, steps, pieces, first round */
struct stream {
	int np, steps, piece, start;
	int32_t prompt[300];
	float *solo;            /* (steps + 1, V) its rows alone: the prompt's last, then each step's */
	float *got;             /* (steps + 1, V) its rows in the rounds */
	int rows;               /* rows got so far */
	int fed;                /* prompt ids fed */
	int32_t next;           /* the id its last row chose */
	tf_decoder *d;
};

static int take(void *ctx, int64_t row0, int64_t rows, const float *logits)
{
	struct stream *s = ctx;

	memcpy(s->got + (int64_t)s->rows * V, logits, 4 * V);
	s->next = tf_argmax(logits, V);
	s->rows++;
	return 0;
}

static void solo(struct stream *s)
{
	tf_decoder *d = tf_decoder_new(m);
	int32_t id;

	DIE_IF(tf_decoder_forward(d, s->prompt, s->np, s->solo, TF_FWD_LAST | TF_FWD_CHUNKED));
	for (int k = 1; k <= s->steps; k++) {
		id = tf_argmax(s->solo + (int64_t)(k - 1) * V, V);
		DIE_IF(tf_decoder_forward(d, &id, 1, s->solo + (int64_t)k * V, 0));
	}
	tf_decoder_free(d);
}

static void rounds(const char *name)
{
	static const int np[NS] = { 1, 47, 64, 130, 300, 65, 200 };
	static const int steps[NS] = { 70, 5, 90, 20, 30, 3, 66 };
	static const int piece[NS] = { 256, 64, 128, 64, 256, 64, 192 };
	static const int start[NS] = { 0, 0, 3, 7, 12, 20, 20 };
	struct stream s[NS];
	tf_round_part p[NS];
	int live = NS, round = 0, mixed = 0;

	for (int i = 0; i < NS; i++) {
		s[i] = (struct stream){ .np = np[i], .steps = steps[i], .piece = piece[i], .start = start[i] };
		some_ids(s[i].prompt, np[i], 1000 + i);
		s[i].solo = malloc(4 * V * (steps[i] + 1));
		s[i].got = malloc(4 * V * (steps[i] + 1));
		s[i].d = tf_decoder_new(m);
		solo(&s[i]);
	}
	while (live) {
		int k = 0, prompts = 0, decodes = 0;
		for (int i = 0; i < NS; i++) {
			struct stream *x = &s[i];
			if (round < x->start || x->rows > x->steps)
				continue;
			/* stream 1 sits every third round out once it decodes */
			if (i == 1 && x->fed == x->np && round % 3 == 0) {
				p[k++] = (tf_round_part){ x->d, NULL, 0, 0, take, x };
				continue;
			}
			if (x->fed < x->np) {
				int n = x->np - x->fed < x->piece ? x->np - x->fed : x->piece;
				int last = x->fed + n == x->np;
				p[k++] = (tf_round_part){ x->d, x->prompt + x->fed, n,
							  TF_FWD_CHUNKED | TF_FWD_LAST, last ? take : NULL, x };
				x->fed += n;
				prompts++;
			} else {
				p[k++] = (tf_round_part){ x->d, &x->next, 1, 0, take, x };
				decodes++;
			}
		}
		mixed += prompts && decodes;
		if (k)
			DIE_IF(tf_decoder_round(p, k));
		for (int i = 0; i < NS; i++)
			if (s[i].rows > s[i].steps && s[i].d) {
				tf_decoder_free(s[i].d);
				s[i].d = NULL;
				live--;
			}
		round++;
	}
	diag("%s: %d rounds, %d with prompt chunks beside decode steps", name, round, mixed);
	for (int i = 0; i < NS; i++) {
		ok(s[i].rows == s[i].steps + 1 && !memcmp(s[i].solo, s[i].got, 4 * V * (s[i].steps + 1)),
		   "%s: stream %d (prompt %d ids in pieces of %d, from round %d, %d steps): its logits alone, bit for bit",
		   name, i, s[i].np, s[i].piece, s[i].start, s[i].steps);
		free(s[i].solo);
		free(s[i].got);
	}
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
		rounds(models[i]);
		tf_model_close(m);
	}
	return done();
}
