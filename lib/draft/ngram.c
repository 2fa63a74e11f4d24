/*
 * ngram.c: prompt-lookup drafting. The sequence's last N ids (the root
 * among them) are looked for earlier in its own ids, the latest
 * occurrence first; what followed each occurrence is a guess at what
 * follows now. A chain takes the latest occurrence's continuation; a tree
 * of width W merges up to W continuations that differ into a trie under
 * the root, the latest first, so a branch point is a place where the
 * sequence went on in different ways before.
 */
#include <string.h>

#include "draft_impl.h"

/* puts the continuation c[0..len) under the root, sharing the nodes of
 * those already there; whether it made a node */
static int insert(tf_draft_tree *t, const int32_t *c, int64_t len, int64_t nodes)
{
	int64_t at = 0;
	int made = 0;

	for (int64_t i = 0; i < len; i++) {
		int64_t next = tf_draft_tree_child(t, at, c[i]);
		if (next < 0) {
			if (t->n >= nodes)
				break;
			next = tf_draft_tree_add(t, c[i], (int32_t)at);
			made = 1;
		}
		at = next;
	}
	return made;
}

void tf_ngram_propose(tf_drafter *dr, const int32_t *ids, int64_t n, int depth, int64_t nodes)
{
	int64_t N = dr->sp.n, found = 0;
	const int32_t *tail = ids + n - N;

	if (n <= N)
		return;
	/* an occurrence at j: ids[j..j+N) equals the tail, ids[j+N] follows */
	for (int64_t j = n - N - 1; j >= 0 && found < dr->sp.width && dr->t.n < nodes; j--) {
		if (ids[j + N - 1] != tail[N - 1] || memcmp(ids + j, tail, N * sizeof *ids))
			continue;
		int64_t len = n - (j + N) < depth ? n - (j + N) : depth;
		found += insert(&dr->t, ids + j + N, len, nodes);
	}
}
