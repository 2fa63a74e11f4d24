/* drafter.c: a drafter and the trees it proposes (draft.h) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "draft_impl.h"
#include "model/mtp_head.h"

tf_drafter *tf_drafter_new(const tf_draft_spec *sp, int64_t vocab, long index)
{
	tf_drafter *dr;

	if (sp->kind != TF_DRAFT_NGRAM && sp->kind != TF_DRAFT_RANDOM && sp->kind != TF_DRAFT_MTP) {
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
	tf_mtp_free(dr->mtp);
	free(dr);
}

int tf_drafter_bind(tf_drafter *dr, tf_decoder *d)
{
	return dr->sp.kind == TF_DRAFT_MTP ? tf_mtp_bind(dr, d) : 0;
}

int tf_draft_check(const tf_draft_spec *sp, const tf_model *m)
{
	tf_mtp *h;

	if (sp->kind != TF_DRAFT_MTP)
		return 0;
	if (m->gpu)
		return tf_err("drafter 'mtp' runs on the CPU only, and the model is on the GPU: use --device cpu");
	if (!(h = tf_mtp_open(m)))
		return tf_errpre("drafter 'mtp'");
	tf_mtp_close(h);
	return 0;
}

/* TF_TEST_DRAFTS=FILE: each tree proposed, a line of ID:PARENT of its
 * drafted nodes (the root left out, parents counted from it as 0) */
static void log_tree(const tf_draft_tree *t)
{
	const char *path = getenv("TF_TEST_DRAFTS");
	FILE *f;

	if (!path || !*path || !(f = fopen(path, "a")))
		return;
	for (int64_t i = 1; i < t->n; i++)
		fprintf(f, "%s%d:%d", i > 1 ? " " : "", t->id[i], t->parent[i]);
	fputc('\n', f);
	fclose(f);
}

void tf_drafter_propose(tf_drafter *dr, const int32_t *ids, int64_t n, int depth, int64_t nodes,
			tf_draft_tree *t)
{
	tf_draft_tree_root(&dr->t, ids[n - 1]);
	if (depth > 0 && nodes > 1) {
		if (dr->sp.kind == TF_DRAFT_NGRAM)
			tf_ngram_propose(dr, ids, n, depth, nodes);
		else if (dr->sp.kind == TF_DRAFT_MTP)
			tf_mtp_propose(dr, ids, n, depth, nodes);
		else
			tf_random_propose(dr, ids, n, depth, nodes);
		log_tree(&dr->t);
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
