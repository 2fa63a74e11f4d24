/* tree_run.c: prompts and trees through a sequence (tree_run.h) */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "decode/sample.h"
#include "gpu/gpu.h"
#include "io/rec.h"
#include "run.h"
#include "tree_run.h"

void tf_tree_run_init(tf_tree_run *r, tf_decoder *d, const tf_tree_opts *o)
{
	int64_t V = tf_decoder_model(d)->c.vocab;

	memset(r, 0, sizeof *r);
	r->d = d;
	r->o = o;
	r->seq = -1;
	r->ctx = tf_malloc(V * sizeof *r->ctx);
	r->logits = NULL;
}

void tf_tree_run_free(tf_tree_run *r)
{
	tf_drafter_free(r->dr);
	free(r->ctx);
	free(r->logits);
}

int64_t tf_tree_best(const tf_tree *t, const tf_tree_shape *sh, const float *ctx, const float *logits, int64_t V,
		     int32_t *path)
{
	char *fit = tf_malloc(t->n);    /* (n) the node and all its ancestors are argmaxes */
	int64_t best = -1;

	// parents first, so a node's parent is settled before it
	for (int64_t x = 0; x < t->n; x++) {
		int32_t i = sh->order[x], p = sh->parent[i];
		if (p < 0)
			fit[i] = !ctx || t->id[i] == tf_argmax(ctx, V);
		else
			fit[i] = fit[p] && t->id[i] == tf_argmax(logits + (int64_t)p * V, V);
	}
	for (int64_t i = 0; i < t->n; i++)
		if (fit[i] && (best < 0 || sh->depth[i] > sh->depth[best]))
			best = i;
	free(fit);
	if (best < 0)
		return 0;
	memcpy(path, sh->anc + best * sh->width, (sh->depth[best] + 1) * sizeof *path);
	return sh->depth[best] + 1;
}

/* a new sequence: its prompt through the step path, so that every node's
 * logits are those of tf-run --mode step over the prompt and its branch */
static int prompt(tf_tree_run *r, const tf_seq *ids)
{
	r->seq++;
	tf_decoder_reset(r->d);
	r->has_ctx = ids->n > 0;
	if (!ids->n)
		return 0;
	return tf_decoder_forward(r->d, ids->ids, (int64_t)ids->n, r->ctx, TF_FWD_LAST);
}

static int write_nodes(tf_tree_run *r, int64_t n, int64_t V, int64_t pos)
{
	FILE *f = r->o->f;

	if (!r->o->text_k)
		return tf_rec_write(f, TF_REC_LOGITS, TF_DT_F32, (uint32_t)n, (uint32_t)V, r->seq, pos, r->logits);
	for (int64_t i = 0; i < n; i++)
		tf_write_top(f, r->logits + i * V, V, r->o->text_k, i);
	return ferror(f) ? tf_err("write error:") : 0;
}

/* the text form's line of the path kept, and the blank line ending a tree */
static int write_kept(tf_tree_run *r, const int32_t *path, int64_t len)
{
	FILE *f = r->o->f;

	if (!r->o->text_k)
		return 0;
	if (r->o->keep != TF_KEEP_NONE) {
		fputs("kept:", f);
		for (int64_t j = 0; j < len; j++)
			fprintf(f, " %d", path[j]);
		fputc('\n', f);
	}
	fputc('\n', f);
	return ferror(f) ? tf_err("write error:") : 0;
}

static int tree(tf_tree_run *r, const tf_item *it)
{
	const tf_tree t = { (int64_t)it->id.n, it->id.ids, it->parent.ids };
	int64_t V = tf_decoder_model(r->d)->c.vocab, pos = tf_decoder_pos(r->d), len = 0;
	tf_logits_into into;
	tf_tree_shape sh;
	int32_t *path = NULL;
	int rc;

	if (tf_tree_shape_of(&t, &sh) < 0)
		return -1;
	r->logits = tf_realloc(r->logits, t.n * V * sizeof *r->logits);
	into = (tf_logits_into){ r->logits, 0, V };
	rc = tf_decoder_tree(r->d, &t, tf_logits_copy, &into);
	if (!rc)
		rc = write_nodes(r, t.n, V, pos);
	if (!rc && r->o->keep == TF_KEEP_BEST) {
		path = tf_malloc(t.n * sizeof *path);
		len = tf_tree_best(&t, &sh, r->has_ctx ? r->ctx : NULL, r->logits, V, path);
	} else if (!rc && r->o->keep == TF_KEEP_PATH) {
		path = r->o->path;
		len = r->o->path_len;
	}
	if (!rc && r->o->keep != TF_KEEP_NONE) {
		rc = tf_decoder_commit(r->d, path, len);
		if (!rc && len) {
			memcpy(r->ctx, r->logits + (int64_t)path[len - 1] * V, V * sizeof *r->ctx);
			r->has_ctx = 1;
		}
	} else {
		tf_decoder_rollback(r->d);
	}
	if (!rc)
		rc = write_kept(r, path, len);
	if (path != r->o->path)
		free(path);
	tf_tree_shape_free(&sh);
	return rc;
}

/* the drafter's tree after a prompt, its root (the prompt's last id, fed
 * already) left out, as the tree of an input line */
static int drafted(tf_tree_run *r, const tf_seq *ids)
{
	const tf_draft_spec *sp = r->o->draft;
	int depth = tf_draft_depth_fit(r->d, sp->depth, 1);     /* within the context */
	int64_t nodes = 1 + (int64_t)sp->width * depth;
	tf_draft_tree t;
	tf_item it = { TF_ITEM_TREE, { 0 }, { 0 }, 0 };
	FILE *f = r->o->f;
	int rc = 0;

	tf_drafter_free(r->dr);
	if (!(r->dr = tf_drafter_new(sp, tf_decoder_model(r->d)->c.vocab, r->seq)))
		return -1;
	if (tf_decoder_on_gpu(r->d) && nodes > TF_GPU_TREE_MAX + 1)
		nodes = TF_GPU_TREE_MAX + 1;
	tf_drafter_propose(r->dr, ids->ids, (int64_t)ids->n, depth, nodes, &t);
	it.id.n = it.parent.n = t.n - 1;
	it.id.ids = t.id + 1;
	it.parent.ids = tf_malloc(t.n * sizeof *it.parent.ids);
	for (int64_t i = 1; i < t.n; i++)
		it.parent.ids[i - 1] = t.parent[i] - 1;
	if (r->o->text_k) {
		fputs("draft:", f);
		for (int64_t i = 1; i < t.n; i++)
			fprintf(f, " %d:%d", it.id.ids[i - 1], it.parent.ids[i - 1]);
		fputc('\n', f);
		if (t.n == 1)
			fputc('\n', f);
		rc = ferror(f) ? tf_err("write error:") : 0;
	}
	if (!rc && t.n > 1)
		rc = tree(r, &it);
	free(it.parent.ids);
	return rc;
}

int tf_tree_run_item(tf_tree_run *r, const tf_item *it)
{
	if (it->kind == TF_ITEM_TREE)
		return tree(r, it);
	if (prompt(r, &it->id) < 0)
		return -1;
	return r->o->draft && it->id.n ? drafted(r, &it->id) : 0;
}
