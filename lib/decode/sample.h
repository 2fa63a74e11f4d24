/* sample.h: choosing the next token from a row of logits */
#ifndef TF_SAMPLE_H
#define TF_SAMPLE_H

#include <stdint.h>

typedef struct {
	float temp;             /* <= 0: greedy (the first of equal maxima) */
	int top_k;              /* keep the k most likely ids; 0 = all */
	float top_p;            /* keep the smallest set whose probability reaches p; 1 = all */
	uint64_t rng;           /* splitmix64 state, from --seed */
} tf_sampler;

/* the sampler state of sequence `index` (from 0) of a run seeded with
 * seed: splitmix64's finalizer over both, so that sequences of one seed,
 * identical prompts among them, draw apart, and a sequence draws the same
 * whatever runs beside it */
uint64_t tf_sample_seed(uint64_t seed, uint64_t index);

int tf_argmax(const float *logits, int64_t V);
int tf_sample(tf_sampler *s, const float *logits, int64_t V);
/* whether s cuts the vocabulary before its draw (top-k below V or top-p
 * below 1): tf_sample sorts the probabilities only then */
int tf_sample_cuts(const tf_sampler *s, int64_t V);
/* the next uniform draw in [0, 1) of s, as tf_sample takes it */
double tf_sample_uniform(tf_sampler *s);

#endif
