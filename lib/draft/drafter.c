/* drafter.c: a drafter and the trees it proposes (draft.h) */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "draft_impl.h"

tf_drafter *tf_drafter_new(const tf_draft_spec *sp, int64_t vocab, long index)
{
	tf_drafter *dr;

	if (sp->kind != TF_DRAFT_NGRAM && sp->kind != TF_DRAFT_RANDOM) {
		tf_err("no drafter of kind %d", sp->kind);
		return NULL;
	}
	dr = tf_calloc(1, sizeof *dr);
	dr->sp = *sp;
	dr->vocab = vocab;
	dr->rng = tf_sample_seed(sp->seed, (uint64_t)index);
	return dr;
}

void tf_drafter_free(tf_drafter *dr)
{
	if (!dr)
		return;
	free(dr->t.id);
	free(dr->t.parent);
	free(dr->logits);
	free(dr);
}

void tf_drafter_propose(tf_drafter *dr, const int32_t *ids, int64_t n, int depth, int64_t nodes,
			tf_draft_tree *t)
{
	tf_draft_tree_root(&dr->t, ids[n - 1]);
	if (depth > 0 && nodes > 1) {
		if (dr->sp.kind == TF_DRAFT_NGRAM)
			tf_ngram_propose(dr, ids, n, depth, nodes);
		else
			tf_random_propose(dr, ids, n, depth, nodes);
	}
	*t = dr->t;
}

int tf_draft_depth_fit(const tf_decoder *d, int depth, int fed)
{
	/* a branch's ids take the positions after the root's */
	int64_t room = tf_decoder_model(d)->c.ctx - tf_decoder_pos(d) - (fed ? 0 : 1);

	return room < depth ? (room > 0 ? (int)room : 0) : depth;
}

void tf_draft_tree_root(tf_draft_tree *t, int32_t root)
{
	t->n = 0;
	tf_draft_tree_add(t, root, -1);
}

int64_t tf_draft_tree_add(tf_draft_tree *t, int32_t id, int32_t parent)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->id = tf_realloc(t->id, t->cap * sizeof *t->id);
		t->parent = tf_realloc(t->parent, t->cap * sizeof *t->parent);
	}
	t->id[t->n] = id;
	t->parent[t->n] = parent;
	return t->n++;
}

int64_t tf_draft_tree_child(const tf_draft_tree *t, int64_t p, int32_t id)
{
	for (int64_t i = p + 1; i < t->n; i++)
		if (t->parent[i] == p && t->id[i] == id)
			return i;
	return -1;
}
