/* verify.c: a drafted tree through the target, and the path it keeps
 * (draft.h) */
#include <stdlib.h>
#include <time.h>

#include "base/err.h"
#include "draft_impl.h"

double tf_draft_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int tf_draft_verify(tf_decoder *d, tf_drafter *dr, tf_sampler *s, const tf_draft_tree *t, int32_t *out)
{
	int64_t V = tf_decoder_model(d)->c.vocab;
	tf_tree tree = { t->n, t->id, t->parent };
	int32_t path[TF_TREE_MAX];      /* root first */
	int64_t at = 0, k = 0;

	if (t->n > dr->logits_cap) {
		dr->logits_cap = t->n;
		dr->logits = tf_realloc(dr->logits, dr->logits_cap * V * sizeof *dr->logits);
	}
	tf_logits_into into = { dr->logits, 0, V };
	if (tf_decoder_tree(d, &tree, tf_logits_copy, &into) < 0)
		return -1;
	// at each node the id the target draws there; on to its child of that id
	for (;;) {
		int32_t want = tf_sample_at(s, dr->logits + at * V, V, s->drawn + k);
		path[k] = (int32_t)at;
		out[k++] = want;
		if ((at = tf_draft_tree_child(t, at, want)) < 0)
			break;
	}
	if (tf_decoder_commit(d, path, k) < 0)
		return -1;
	if (s->temp > 0)
		s->drawn += k;
	return (int)k;
}
