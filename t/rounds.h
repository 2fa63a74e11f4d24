/*
 * rounds.h: the streams of the round tests (t/unit/round.c on the CPU,
 * t/unit/cuda-round.c on the GPU), header only: streams of given prompt
 * lengths, prompt pieces, first rounds and steps, run in shared rounds
 * (decode/round.h) with one stream sitting every third round out once it
 * decodes, each stream's logits rows against its rows alone, bit for bit.
 * The includer defines m and V (the model and its vocabulary) and DIE_IF,
 * and gives the rows alone: solo(s) fills s->solo.
 */
#ifndef TF_ROUNDS_H
#define TF_ROUNDS_H

#include <stdlib.h>
#include <string.h>

#include "decode/decoder.h"
#include "decode/round.h"
#include "decode/sample.h"
#include "tap.h"

#define ROUNDS_MAX 24   /* streams a test at most */

/* fixed pseudo-random ids */
static void some_ids(int32_t *ids, int n, uint64_t seed)
{
	for (int i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		ids[i] = (int32_t)((seed >> 33) % (uint64_t)V);
	}
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

/* the steps after a stream's prompt, alone, on d: rows 1 .. steps of s->solo */
static void solo_steps(struct stream *s, tf_decoder *d)
{
	for (int k = 1; k <= s->steps; k++) {
		int32_t id = tf_argmax(s->solo + (int64_t)(k - 1) * V, V);
		DIE_IF(tf_decoder_forward(d, &id, 1, s->solo + (int64_t)k * V, 0));
	}
}

static void solo(struct stream *s);

static void rounds(const char *name, int ns, const int *np, const int *steps, const int *piece, const int *start)
{
	struct stream s[ROUNDS_MAX];
	tf_round_part p[ROUNDS_MAX];
	int live = ns, round = 0, mixed = 0, most = 0;

	for (int i = 0; i < ns; i++) {
		s[i] = (struct stream){ .np = np[i], .steps = steps[i], .piece = piece[i], .start = start[i] };
		some_ids(s[i].prompt, np[i], 1000 + i);
		s[i].solo = malloc(4 * V * (steps[i] + 1));
		s[i].got = malloc(4 * V * (steps[i] + 1));
		solo(&s[i]);
		s[i].d = tf_decoder_new(m);
		DIE_IF(s[i].d ? 0 : -1);
	}
	while (live) {
		int k = 0, prompts = 0, decodes = 0;
		for (int i = 0; i < ns; i++) {
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
				p[k++] = (tf_round_part){ x->d, x->prompt + x->fed, n, TF_FWD_CHUNKED | TF_FWD_LAST,
							  last ? take : NULL, x };
				x->fed += n;
				prompts++;
			} else {
				p[k++] = (tf_round_part){ x->d, &x->next, 1, 0, take, x };
				decodes++;
			}
		}
		mixed += prompts && decodes;
		most = decodes > most ? decodes : most;
		if (k)
			DIE_IF(tf_decoder_round(p, k));
		for (int i = 0; i < ns; i++)
			if (s[i].rows > s[i].steps && s[i].d) {
				tf_decoder_free(s[i].d);
				s[i].d = NULL;
				live--;
			}
		round++;
	}
	diag("%s: %d rounds, %d with prompt pieces beside decode steps, at most %d steps a round", name, round, mixed,
	     most);
	for (int i = 0; i < ns; i++) {
		int bad = -1;
		for (int r = 0; r <= s[i].steps && bad < 0; r++)
			if (memcmp(s[i].solo + r * V, s[i].got + r * V, 4 * V))
				bad = r;
		ok(s[i].rows == s[i].steps + 1 && bad < 0,
		   "%s: stream %d (prompt %d ids in pieces of %d, from round %d, %d steps): its logits alone, bit for bit",
		   name, i, s[i].np, s[i].piece, s[i].start, s[i].steps);
		if (bad >= 0)
			diag("first row that differs: %d of %d", bad, s[i].steps + 1);
		free(s[i].solo);
		free(s[i].got);
	}
}

#endif
