/*
 * pace: prompt chunks against decoding streams (decode/pace.h), on rounds
 * of given times: a chunk that costs several decode rounds waits until the
 * decoders have earned what the last one cost, so over an intake the
 * chunks take at most the share of the time (the decoders keep 1 - share
 * of their speed); with no one decoding every round may take a chunk; and
 * the first chunk is never held back.
 */
#include "decode/pace.h"
#include "tap.h"

/* an intake of `chunks` chunks of cost c (seconds beyond a decode round of
 * d) beside decoders, paced: the share of the time the chunks took, and
 * the rounds it took */
static double intake(double share, double d, double c, int chunks, int *rounds)
{
	tf_pace p;
	double total = 0, spent = 0;
	int left = chunks;

	tf_pace_init(&p, share);
	/* the decoders' rounds before the prompt arrives */
	for (int i = 0; i < 8; i++)
		tf_pace_took(&p, 4, 0, d);
	p.credit = 0;
	*rounds = 0;
	while (left) {
		int chunk = tf_pace_chunk_ok(&p, 4);
		double t = d + (chunk ? c : 0);
		tf_pace_took(&p, 4, chunk, t);
		total += t;
		spent += chunk ? c : 0;
		left -= chunk;
		++*rounds;
	}
	return spent / total;
}

int main(void)
{
	tf_pace p;
	int rounds;

	tf_pace_init(&p, 0.25);
	ok(tf_pace_chunk_ok(&p, 3), "the first chunk joins at once");
	tf_pace_took(&p, 3, 0, 0.01);
	tf_pace_took(&p, 3, 1, 0.0425);
	ok(!tf_pace_chunk_ok(&p, 3), "a chunk of three decode rounds' time holds the next one back");
	ok(tf_pace_chunk_ok(&p, 0), "with no one decoding a chunk joins anyway");
	int waited = 0;
	while (!tf_pace_chunk_ok(&p, 3) && waited < 100) {
		tf_pace_took(&p, 3, 0, 0.01);
		waited++;
	}
	/* the credit after the chunk, 2 x 0.01 / 3 - 0.0325, up to the
	 * chunk's 0.0325 at 0.01 / 3 a round: 17.5 rounds */
	ok(waited == 18, "it joins once the decoders have earned what it costs: 18 rounds (%d)", waited);

	double s = intake(0.25, 0.0065, 0.020, 8, &rounds);
	ok(s <= 0.25 + 1e-9 && s > 0.2, "9B-like: 8 chunks of 20 ms beside 6.5 ms rounds take %.3f of the time", s);
	diag("that intake took %d rounds", rounds);
	s = intake(0.25, 0.010, 0.001, 8, &rounds);
	ok(rounds == 8, "chunks cheaper than their credit join every round (%d rounds for 8)", rounds);
	s = intake(0.10, 0.005, 0.050, 4, &rounds);
	ok(s <= 0.10 + 1e-9, "a share of a tenth holds to it: %.3f", s);
	return done();
}
