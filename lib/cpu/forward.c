/* forward.c: the decoder stack, layer by layer, as transformers'
 * Qwen3_5TextModel.forward: x = embed(ids); per layer
 * x += mixer(rmsnorm(x)), x += mlp(rmsnorm(x)); logits = rmsnorm(x) W_head^T */
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "base/err.h"
#include "deltanet.h"
#include "forward.h"
#include "matmul.h"
#include "ops.h"

/* SwiGLU: out (n, H) = (silu(u Wg^T) * (u Wu^T)) Wd^T */
static void mlp(const tf_layer *l, const float *u, int64_t n, float *out)
{
	int64_t I = l->gate.rows;
	float *g = tf_malloc(n * I * sizeof *g);        /* (n, I) */
	float *up = tf_malloc(n * I * sizeof *up);      /* (n, I) */

	tf_matmul(&l->gate, u, n, g);
	tf_matmul(&l->up, u, n, up);
	for (int64_t i = 0; i < n * I; i++)
		g[i] = tf_silu(g[i]) * up[i];
	tf_matmul(&l->down, g, n, out);
	free(g);
	free(up);
}

#define HEAD_BLOCK 64

/* the decoder stack over x (n, H), the embedded rows: n positions after the
 * state's, or the nodes of the tree st->tree holds (sh); x becomes the
 * last layer's residual stream */
static void stack(tf_state *st, float *x, int64_t n, const tf_tree_shape *sh, int flags,
		  const tf_pass_progress *pr)
{
	const tf_model *m = st->m;
	const tf_config *c = &m->c;
	int64_t H = c->hidden;
	float *u = tf_malloc(n * H * sizeof *u);       /* (n, H) normed input of a block */
	float *mix = tf_malloc(n * H * sizeof *mix);   /* (n, H) output of a block */

	for (int i = 0; i < c->layers; i++) {
		const tf_layer *l = &m->layer[i];

		// token mixer on the normed stream, residual add
		tf_rmsnorm(u, x, l->in_norm, n, H, c->eps);
		if (l->full)
			tf_attention(st, i, u, n, sh, mix);
		else
			tf_deltanet(st, i, u, n, sh, mix, flags & TF_FWD_CHUNKED);
		tf_add(x, mix, n * H);

		// feed-forward on the normed stream, residual add
		tf_rmsnorm(u, x, l->post_norm, n, H, c->eps);
		mlp(l, u, n, mix);
		tf_add(x, mix, n * H);
		if (pr && pr->fn)
			pr->fn(pr->ctx, i + 1, c->layers);
	}
	free(u);
	free(mix);
}

/* final norm and the head over rows [first, n) of x (n, H), a block of rows
 * at a time to fn */
static int head(const tf_model *m, const float *x, int64_t first, int64_t n, tf_logits_fn fn, void *ctx)
{
	const tf_config *c = &m->c;
	int64_t H = c->hidden, V = c->vocab;
	float *u = tf_malloc((n - first) * H * sizeof *u);     /* (n - first, H) */
	float *logits = tf_malloc((n - first < HEAD_BLOCK ? n - first : HEAD_BLOCK) * V * sizeof *logits);
	int rc = 0;

	tf_rmsnorm(u, x + first * H, m->norm, n - first, H, c->eps);
	for (int64_t r = first; r < n && !rc; r += HEAD_BLOCK) {
		int64_t rows = n - r < HEAD_BLOCK ? n - r : HEAD_BLOCK;
		tf_matmul(&m->head, u + (r - first) * H, rows, logits);
		rc = fn(ctx, r, rows, logits);
	}
	free(logits);
	free(u);
	return rc;
}

/* x (n, H): embedding rows, no scaling */
static float *embed(const tf_model *m, const int32_t *ids, int64_t n)
{
	int64_t H = m->c.hidden;
	float *x = tf_malloc(n * H * sizeof *x);

	for (int64_t t = 0; t < n; t++)
		tf_embed(&m->embed, ids[t], x + t * H);
	return x;
}

int tf_forward_each(tf_state *st, const int32_t *ids, int64_t n, int flags, tf_logits_fn fn, void *ctx,
		    const tf_pass_progress *pr)
{
	float *x;               /* (n, H) residual stream */
	int rc = 0;

	if (n <= 0)
		return 0;
	if (tf_config_check_ids(&st->m->c, ids, n) < 0)
		return -1;
	tf_state_rollback(st);
	tf_state_reserve(st, n);
	x = embed(st->m, ids, n);
	stack(st, x, n, NULL, flags, pr);
	st->pos += n;
	if (fn)
		rc = head(st->m, x, flags & TF_FWD_LAST ? n - 1 : 0, n, fn, ctx);
	free(x);
	return rc;
}

int tf_forward_tree(tf_state *st, const tf_tree *t, tf_logits_fn fn, void *ctx)
{
	tf_tree_shape sh;
	float *x;               /* (n, H) residual stream of the nodes */
	int rc = 0;

	if (tf_tree_shape_of(t, &sh) < 0)
		return -1;
	if (tf_config_check_ids(&st->m->c, t->id, t->n) < 0) {
		tf_tree_shape_free(&sh);
		return -1;
	}
	tf_state_tree_begin(st, &sh);
	x = embed(st->m, t->id, t->n);
	stack(st, x, t->n, &st->tree.sh, 0, NULL);
	if (fn)
		rc = head(st->m, x, 0, t->n, fn, ctx);
	free(x);
	return rc;
}

int tf_forward(tf_state *st, const int32_t *ids, int64_t n, float *logits, int flags)
{
	tf_logits_into b = { logits, flags & TF_FWD_LAST ? n - 1 : 0, st->m->c.vocab };

	return tf_forward_each(st, ids, n, flags, logits ? tf_logits_copy : NULL, &b, NULL);
}
