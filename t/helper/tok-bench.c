/*
 * tok-bench: how fast tf-tok encodes, on one core.
 *
 *   tok-bench MODEL FILE [ROUNDS]
 *
 * Loads the tokenizer (timed), then encodes FILE as one text ROUNDS times
 * (default 5) with a fresh word cache each round, and prints the load time,
 * the tokens and the best round's MB/s (10^6 bytes a second). The first
 * round is shown too: it is the one a single `tf-tok encode` runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "base/err.h"
#include "base/map.h"
#include "tok/tok.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	int rounds = argc > 3 ? atoi(argv[3]) : 5;
	double t0, load, best = 1e30, first = 0;
	tf_seq s = { 0 };
	tf_map *m;
	tf_tok *t;

	tf_prog = "tok-bench";
	if (argc < 3 || rounds < 1) {
		fprintf(stderr, "usage: tok-bench MODEL FILE [ROUNDS]\n");
		return 2;
	}
	t0 = now();
	if (!(t = tf_tok_load(argv[1])))
		tf_die_err();
	load = now() - t0;
	if (!(m = tf_map_open(argv[2])))
		tf_die_err();
	for (int r = 0; r < rounds; r++) {
		double dt;
		tf_cache_free(&t->cache);
		tf_cache_init(&t->cache);
		s.n = 0;
		t0 = now();
		if (tf_tok_encode(t, m->data, m->size, &s) < 0)
			tf_die_err();
		dt = now() - t0;
		if (!r)
			first = dt;
		if (dt < best)
			best = dt;
	}
	printf("load %.3f s (%ld ids)\n", load, t->n_vocab);
	printf("encode %zu bytes -> %zu tokens (%.2f bytes/token)\n", m->size, s.n, (double)m->size / s.n);
	printf("first round %.1f MB/s, best of %d %.1f MB/s (%.0f tokens/s)\n", m->size / first / 1e6, rounds,
	       m->size / best / 1e6, s.n / best);
	tf_seq_free(&s);
	tf_map_close(m);
	tf_tok_free(t);
	return 0;
}
