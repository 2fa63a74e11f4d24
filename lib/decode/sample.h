/*
 * sample.h: choosing the next token from a row of logits.
 *
 * A sampled draw takes one uniform number, and the uniforms are
 * counter-based: draw k of a sequence (its k-th sampled id, from 0) takes
 * tf_sample_uniform_at(key, k), whatever was drawn or computed before it.
 * So a verifier that samples a drafted node of a tree with the uniform of
 * the node's draw, and keeps the draft while it matches, draws exactly the
 * ids decoding them one by one would.
 */
#ifndef TF_SAMPLE_H
#define TF_SAMPLE_H

#include <stdint.h>

typedef struct {
	float temp;             /* <= 0: greedy (the first of equal maxima) */
	int top_k;              /* keep the k most likely ids; 0 = all */
	float top_p;            /* keep the smallest set whose probability reaches p; 1 = all */
	uint64_t rng;           /* the key of the sequence's uniforms: --seed, or tf_sample_seed */
	uint64_t drawn;         /* sampled draws taken: the counter of the next */
} tf_sampler;

/* the key of sequence `index` (from 0) of a run seeded with seed:
 * splitmix64's finalizer over both, so that sequences of one seed,
 * identical prompts among them, draw apart, and a sequence draws the same
 * whatever runs beside it */
uint64_t tf_sample_seed(uint64_t seed, uint64_t index);

/* the uniform in [0, 1) of draw k under key: splitmix64's output k from
 * state key, fmix(key + (k + 1) * golden), a function of (key, k) alone */
double tf_sample_uniform_at(uint64_t key, uint64_t k);

int tf_argmax(const float *logits, int64_t V);
/* the next id: the argmax when greedy, else a draw with the uniform of
 * draw s->drawn, which then counts one more */
int tf_sample(tf_sampler *s, const float *logits, int64_t V);
/* the id that draw k of s takes from logits (the argmax when greedy),
 * moving nothing: tf_sample is tf_sample_at(s, logits, V, s->drawn) and a
 * count */
int tf_sample_at(const tf_sampler *s, const float *logits, int64_t V, uint64_t k);
/* whether s cuts the vocabulary before its draw (top-k below V or top-p
 * below 1): tf_sample sorts the probabilities only then */
int tf_sample_cuts(const tf_sampler *s, int64_t V);
/* the uniform of s's next draw, as tf_sample takes it; s counts the draw */
double tf_sample_uniform(tf_sampler *s);

#endif
