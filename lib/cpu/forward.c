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

void tf_forward_layer(const tf_mix_part *p, int np, int i, float *x, float *u, float *mix, int64_t N)
{
	const tf_model *m = p[0].st->m;
	const tf_config *c = &m->c;
	const tf_layer *l = &m->layer[i];
	int64_t H = c->hidden;

	// token mixer on the normed stream, residual add
	tf_rmsnorm(u, x, l->in_norm, N, H, c->eps);
	if (l->full)
		tf_attention(p, np, i, u, N, mix);
	else
		tf_deltanet(p, np, i, u, N, mix);
	tf_add(x, mix, N * H);

	// feed-forward on the normed stream, residual add
	tf_rmsnorm(u, x, l->post_norm, N, H, c->eps);
	mlp(l, u, N, mix);
	tf_add(x, mix, N * H);
}

/* the decoder stack over x (N, H), the embedded rows of the np sequences p
 * in order (mix.h): the norms, the projections and the MLP over all N rows
 * at once, the mixers' cores per sequence; x becomes the last layer's
 * residual stream */
static void stack(const tf_mix_part *p, int np, float *x, int64_t N, const tf_pass_progress *pr)
{
	const tf_model *m = p[0].st->m;
	const tf_config *c = &m->c;
	int64_t H = c->hidden;
	float *u = tf_malloc(N * H * sizeof *u);       /* (N, H) normed input of a block */
	float *mix = tf_malloc(N * H * sizeof *mix);   /* (N, H) output of a block */

	for (int i = 0; i < c->layers; i++) {
		tf_forward_layer(p, np, i, x, u, mix, N);
		if (pr && pr->fn)
			pr->fn(pr->ctx, i + 1, c->layers);
	}
	free(u);
	free(mix);
}

/* the last hidden states after the final norm of the parts that ask for
 * them (p[i].hidden), every row of each: the rows the head takes, normed
 * the same way row by row, so the logits' bits are untouched */
static void hidden(const tf_model *m, const tf_fwd_part *p, int np, const float *x)
{
	for (int64_t i = 0, r = 0; i < np; r += p[i++].n)
		if (p[i].hidden && p[i].n > 0)
			tf_rmsnorm(p[i].hidden, x + r * m->c.hidden, m->norm, p[i].n, m->c.hidden, m->c.eps);
}

/* the rows of x (N, H) the np sequences p want logits of (all of a
 * sequence's, or with TF_FWD_LAST its last, none without fn): final norm
 * and head over them together, a block of up to HEAD_BLOCK rows at a time,
 * each block's rows handed to their sequences' fn in runs */
static int head(const tf_model *m, const tf_fwd_part *p, int np, const float *x)
{
	const tf_config *c = &m->c;
	int64_t H = c->hidden, V = c->vocab, M = 0;
	int rc = 0;

	for (int i = 0; i < np; i++)
		if (p[i].fn && p[i].n > 0)
			M += p[i].flags & TF_FWD_LAST ? 1 : p[i].n;
	if (!M)
		return 0;

	float *u = tf_malloc(M * H * sizeof *u);               /* (M, H) the wanted rows, normed */
	int *part = tf_malloc(M * sizeof *part);               /* (M) the sequence of each */
	int64_t *row = tf_malloc(M * sizeof *row);             /* (M) its row in that sequence */
	float *logits = tf_malloc((M < HEAD_BLOCK ? M : HEAD_BLOCK) * V * sizeof *logits);
	int64_t k = 0;

	for (int64_t i = 0, r = 0; i < np; r += p[i++].n) {
		if (!p[i].fn || p[i].n <= 0)
			continue;
		for (int64_t t = p[i].flags & TF_FWD_LAST ? p[i].n - 1 : 0; t < p[i].n; t++, k++) {
			memcpy(u + k * H, x + (r + t) * H, H * sizeof *u);
			part[k] = (int)i;
			row[k] = t;
		}
	}
	tf_rmsnorm(u, u, m->norm, M, H, c->eps);
	for (int64_t b = 0; b < M && !rc; b += HEAD_BLOCK) {
		int64_t rows = M - b < HEAD_BLOCK ? M - b : HEAD_BLOCK;
		tf_matmul(&m->head, u + b * H, rows, logits);
		for (int64_t s = 0, e; s < rows && !rc; s = e) {
			for (e = s + 1; e < rows && part[b + e] == part[b + s]; e++)
				;
			const tf_fwd_part *q = &p[part[b + s]];
			rc = q->fn(q->ctx, row[b + s], e - s, logits + s * V);
		}
	}
	free(logits);
	free(row);
	free(part);
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

int tf_forward_multi(const tf_fwd_part *p, int np, const tf_pass_progress *pr)
{
	tf_mix_part *mp = tf_malloc((np ? np : 1) * sizeof *mp);       /* (np) the sequences with rows */
	int64_t N = 0, H;
	float *x;               /* (N, H) residual stream, sequence after sequence */
	int k = 0, rc = 0;

	for (int i = 0; i < np; i++) {
		if (p[i].n <= 0)
			continue;
		if (tf_config_check_ids(&p[i].st->m->c, p[i].ids, p[i].n) < 0) {
			free(mp);
			return -1;
		}
		mp[k++] = (tf_mix_part){ p[i].st, p[i].n, NULL, !!(p[i].flags & TF_FWD_CHUNKED) };
		N += p[i].n;
	}
	if (!N) {
		free(mp);
		return 0;
	}
	const tf_model *m = mp[0].st->m;
	H = m->c.hidden;
	x = tf_malloc(N * H * sizeof *x);
	for (int i = 0; i < k; i++) {
		tf_state_rollback(mp[i].st);
		tf_state_reserve(mp[i].st, mp[i].n);
	}
	int64_t r = 0;
	for (int i = 0; i < np; i++)
		for (int64_t t = 0; t < p[i].n; t++, r++)
			tf_embed(&m->embed, p[i].ids[t], x + r * H);
	stack(mp, k, x, N, pr);
	for (int i = 0; i < k; i++)
		mp[i].st->pos += mp[i].n;
	hidden(m, p, np, x);
	rc = head(m, p, np, x);
	free(x);
	free(mp);
	return rc;
}

int tf_forward_each(tf_state *st, const int32_t *ids, int64_t n, int flags, tf_logits_fn fn, void *ctx,
		    const tf_pass_progress *pr)
{
	tf_fwd_part p = { st, ids, n, flags, fn, ctx, NULL };

	return tf_forward_multi(&p, 1, pr);
}

int tf_forward_tree(tf_state *st, const tf_tree *t, tf_logits_fn fn, void *ctx, float *hid)
{
	tf_tree_shape sh;
	tf_fwd_part p = { st, t->id, t->n, 0, fn, ctx, hid };
	float *x;               /* (n, H) residual stream of the nodes */
	int rc = 0;

	if (tf_tree_shape_of(t, &sh) < 0)
		return -1;
	if (tf_config_check_ids(&st->m->c, t->id, t->n) < 0) {
		tf_tree_shape_free(&sh);
		return -1;
	}
	tf_state_tree_begin(st, &sh);
	tf_mix_part mp = { st, t->n, &st->tree.sh, 0 };
	x = embed(st->m, t->id, t->n);
	stack(&mp, 1, x, t->n, NULL);
	hidden(st->m, &p, 1, x);
	rc = head(st->m, &p, 1, x);
	free(x);
	return rc;
}

int tf_forward(tf_state *st, const int32_t *ids, int64_t n, float *logits, int flags)
{
	tf_logits_into b = { logits, flags & TF_FWD_LAST ? n - 1 : 0, st->m->c.vocab };

	return tf_forward_each(st, ids, n, flags, logits ? tf_logits_copy : NULL, &b, NULL);
}
