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

int tf_forward_each(tf_state *st, const int32_t *ids, int64_t n, int flags, tf_logits_fn fn, void *ctx,
		    const tf_pass_progress *pr)
{
	const tf_model *m = st->m;
	const tf_config *c = &m->c;
	int64_t H = c->hidden;
	float *x, *u, *mix;

	if (n <= 0)
		return 0;
	if (tf_config_check_ids(c, ids, n) < 0)
		return -1;
	tf_state_reserve(st, n);
	x = tf_malloc(n * H * sizeof *x);       /* (n, H) residual stream */
	u = tf_malloc(n * H * sizeof *u);       /* (n, H) normed input of a block */
	mix = tf_malloc(n * H * sizeof *mix);   /* (n, H) output of a block */

	// embedding rows, no scaling
	for (int64_t t = 0; t < n; t++)
		tf_embed(&m->embed, ids[t], x + t * H);

	for (int i = 0; i < c->layers; i++) {
		const tf_layer *l = &m->layer[i];

		// token mixer on the normed stream, residual add
		tf_rmsnorm(u, x, l->in_norm, n, H, c->eps);
		if (l->full)
			tf_attention(st, i, u, n, mix);
		else
			tf_deltanet(st, i, u, n, mix, flags & TF_FWD_CHUNKED);
		tf_add(x, mix, n * H);

		// feed-forward on the normed stream, residual add
		tf_rmsnorm(u, x, l->post_norm, n, H, c->eps);
		mlp(l, u, n, mix);
		tf_add(x, mix, n * H);
		if (pr && pr->fn)
			pr->fn(pr->ctx, i + 1, c->layers);
	}
	st->pos += n;

	// final norm and the head, a block of rows at a time
	int rc = 0;
	if (fn) {
		int64_t first = flags & TF_FWD_LAST ? n - 1 : 0, V = c->vocab;
		float *logits = tf_malloc((n - first < HEAD_BLOCK ? n - first : HEAD_BLOCK) * V * sizeof *logits);
		tf_rmsnorm(u, x + first * H, m->norm, n - first, H, c->eps);
		for (int64_t r = first; r < n && !rc; r += HEAD_BLOCK) {
			int64_t rows = n - r < HEAD_BLOCK ? n - r : HEAD_BLOCK;
			tf_matmul(&m->head, u + (r - first) * H, rows, logits);
			rc = fn(ctx, r, rows, logits);
		}
		free(logits);
	}
	free(x);
	free(u);
	free(mix);
	return rc;
}

int tf_forward(tf_state *st, const int32_t *ids, int64_t n, float *logits, int flags)
{
	tf_logits_into b = { logits, flags & TF_FWD_LAST ? n - 1 : 0, st->m->c.vocab };

	return tf_forward_each(st, ids, n, flags, logits ? tf_logits_copy : NULL, &b, NULL);
}
