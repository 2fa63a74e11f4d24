/*
 * random.c: a drafter of garbage, for the tests: each branch is ids drawn
 * uniformly from the vocabulary. What it proposes almost never matches,
 * so the target's own id is all a round makes; the output must be plain
 * decoding's all the same.
 */
#include "draft_impl.h"

static uint64_t next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void tf_random_propose(tf_drafter *dr, const int32_t *ids, int64_t n, int depth, int64_t nodes)
{
	tf_draft_tree *t = &dr->t;

	/* width branches from the root, each of depth ids */
	for (int b = 0; b < dr->sp.width && t->n < nodes; b++) {
		int32_t at = 0;
		for (int k = 0; k < depth && t->n < nodes; k++)
			at = (int32_t)tf_draft_tree_add(t, (int32_t)(next(&dr->rng) % (uint64_t)dr->vocab), at);
	}
}
