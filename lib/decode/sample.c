/* sample.c: greedy and temperature / top-k / top-p draws */
#include <math.h>
#include <stdlib.h>

#include "base/err.h"
#include "sample.h"

int tf_argmax(const float *logits, int64_t V)
{
	int64_t best = 0;

	for (int64_t i = 1; i < V; i++)
		if (logits[i] > logits[best])
			best = i;
	return (int)best;
}

static uint64_t fmix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t tf_sample_seed(uint64_t seed, uint64_t index)
{
	return fmix(fmix(seed) + (index + 1) * 0x9e3779b97f4a7c15ull);
}

/* splitmix64 steps its state by the golden ratio and mixes it, so its
 * output k is a function of the start and k: small, fast, the same
 * everywhere, and random access */
double tf_sample_uniform_at(uint64_t key, uint64_t k)
{
	return (fmix(key + (k + 1) * 0x9e3779b97f4a7c15ull) >> 11) * (1.0 / 9007199254740992.0);
}

double tf_sample_uniform(tf_sampler *s)
{
	return tf_sample_uniform_at(s->rng, s->drawn++);
}

typedef struct { float p; int id; } cand;

static int by_prob(const void *a, const void *b)
{
	const cand *x = a, *y = b;

	if (x->p != y->p)
		return x->p < y->p ? 1 : -1;
	return x->id - y->id;
}

int tf_sample_cuts(const tf_sampler *s, int64_t V)
{
	return (s->top_k > 0 && s->top_k < V) || s->top_p < 1;
}

/* the draw at uniform u from logits by s's temperature and cuts */
static int draw(const tf_sampler *s, const float *logits, int64_t V, double u)
{
	cand *c;
	double sum = 0, r, acc = 0;
	float mx;
	int64_t n = V, i;
	int id;

	c = tf_malloc(V * sizeof *c);
	mx = logits[tf_argmax(logits, V)];
	for (i = 0; i < V; i++) {
		c[i].p = expf((logits[i] - mx) / s->temp);
		c[i].id = (int)i;
	}
	if (tf_sample_cuts(s, V)) {
		qsort(c, V, sizeof *c, by_prob);
		if (s->top_k > 0 && s->top_k < n)
			n = s->top_k;
	}
	for (i = 0; i < n; i++)
		sum += c[i].p;
	if (s->top_p < 1) {
		double keep = 0;
		for (i = 0; i < n; i++)
			if ((keep += c[i].p) >= s->top_p * sum) {
				n = i + 1;
				break;
			}
		sum = keep < sum ? keep : sum;
	}
	r = u * sum;
	id = c[n - 1].id;
	for (i = 0; i < n; i++)
		if ((acc += c[i].p) > r) {
			id = c[i].id;
			break;
		}
	free(c);
	return id;
}

int tf_sample_at(const tf_sampler *s, const float *logits, int64_t V, uint64_t k)
{
	if (s->temp <= 0)
		return tf_argmax(logits, V);
	return draw(s, logits, V, tf_sample_uniform_at(s->rng, k));
}

int tf_sample(tf_sampler *s, const float *logits, int64_t V)
{
	int id = tf_sample_at(s, logits, V, s->drawn);

	if (s->temp > 0)
		s->drawn++;
	return id;
}
