/* attention.c: gated full attention with q/k norm, partial rotary and
 * grouped KV heads (attention.h) */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/pool.h"
#include "attention.h"
#include "matmul.h"
#include "ops.h"

struct attn_job {
	const tf_config *c;
	const float *qg;        /* (n, Hq, 2, D): query, then gate, per head */
	const float *kc, *vc;   /* (pos + n, Hkv, D) this layer's cache */
	int64_t pos0;           /* position of row 0; with a tree, the context's length */
	const tf_tree_shape *sh;        /* a tree's rows, or NULL for consecutive ones */
	float *a;               /* (n, Hq, D) gated attention output */
};

/* the cache row of the s-th key row t sees: the context, then (in a tree)
 * the row's own branch from its root, whose nodes lie at pos0 + node */
static int64_t key_row(const struct attn_job *j, int64_t t, int64_t s)
{
	if (!j->sh || s < j->pos0)
		return s;
	return j->pos0 + j->sh->anc[t * j->sh->width + (s - j->pos0)];
}

/* one (row, head) pair: softmax over the causal prefix in fp32, then the
 * weighted values, summed in position order (a tree node's prefix is its
 * branch, summed in the order a step along it sums) */
static void attn_rows(void *ctx, int64_t b, int64_t e)
{
	const struct attn_job *j = ctx;
	const tf_config *c = j->c;
	int D = c->head_dim, Hq = c->heads, Hkv = c->kv_heads, grp = Hq / Hkv;
	float scale = 1.0f / sqrtf((float)D);
	int64_t maxlen = 0;
	float *p = NULL;

	for (int64_t it = b; it < e; it++) {
		int64_t t = it / Hq, h = it % Hq, len = j->pos0 + (j->sh ? j->sh->depth[t] : t) + 1;
		const float *q = j->qg + (t * Hq + h) * 2 * D, *gate = q + D;
		float *a = j->a + (t * Hq + h) * D, mx = -INFINITY, sum = 0;

		if (len > maxlen)
			p = tf_realloc(p, (maxlen = len) * sizeof *p);
		for (int64_t s = 0; s < len; s++) {
			p[s] = tf_dot(q, j->kc + (key_row(j, t, s) * Hkv + h / grp) * D, D) * scale;
			if (p[s] > mx)
				mx = p[s];
		}
		for (int64_t s = 0; s < len; s++)
			sum += p[s] = expf(p[s] - mx);
		memset(a, 0, D * sizeof *a);
		for (int64_t s = 0; s < len; s++) {
			const float *v = j->vc + (key_row(j, t, s) * Hkv + h / grp) * D;
			float w = p[s] / sum;
			for (int d = 0; d < D; d++)
				a[d] += w * v[d];
		}
		// output gate: sigmoid of the second half of the head's q_proj rows
		for (int d = 0; d < D; d++)
			a[d] *= tf_sigmoid(gate[d]);
	}
	free(p);
}

/* one sequence's rows of the pass: its new cache rows from k and v (n,
 * Hkv, D), q/k norm and rotary, then attention over its cache into a */
static void core(const tf_mix_part *p, int layer, float *qg, const float *k, const float *v, float *a)
{
	tf_state *st = p->st;
	const tf_model *m = st->m;
	const tf_config *c = &m->c;
	const tf_layer *l = &m->layer[layer];
	const tf_tree_shape *sh = p->sh;
	int D = c->head_dim, Hq = c->heads, Hkv = c->kv_heads;
	int64_t n = p->n;
	float *kc = st->k[layer] + st->pos * Hkv * D;           /* (n, Hkv, D) its new cache rows */
	float *vc = st->v[layer] + st->pos * Hkv * D;           /* (n, Hkv, D) */

	memcpy(kc, k, n * Hkv * D * sizeof *kc);
	memcpy(vc, v, n * Hkv * D * sizeof *vc);

	// per-head RMSNorm of q and k, then rotary on their first rot_dim dims
	// at the row's position (a tree node's: its depth past the context)
	for (int64_t t = 0; t < n; t++) {
		int64_t pos = st->pos + (sh ? sh->depth[t] : t);
		for (int h = 0; h < Hq; h++) {
			float *q = qg + (t * Hq + h) * 2 * D;
			tf_rmsnorm(q, q, l->q_norm, 1, D, c->eps);
			tf_rope(q, &c->rope, pos);
		}
		for (int h = 0; h < Hkv; h++) {
			float *kh = kc + (t * Hkv + h) * D;
			tf_rmsnorm(kh, kh, l->k_norm, 1, D, c->eps);
			tf_rope(kh, &c->rope, pos);
		}
	}

	// causal attention over the cache, gated by sigmoid(gate)
	struct attn_job j = { c, qg, st->k[layer], st->v[layer], st->pos, sh, a };
	tf_parallel(n * Hq, attn_rows, &j);
}

void tf_attention(const tf_mix_part *p, int np, int layer, const float *u, int64_t N, float *out)
{
	const tf_model *m = p[0].st->m;
	const tf_config *c = &m->c;
	const tf_layer *l = &m->layer[layer];
	int D = c->head_dim, Hq = c->heads, Hkv = c->kv_heads;
	float *qg = tf_malloc(N * Hq * 2 * D * sizeof *qg);    /* (N, Hq, 2, D) */
	float *k = tf_malloc(N * Hkv * D * sizeof *k);          /* (N, Hkv, D) new keys */
	float *v = tf_malloc(N * Hkv * D * sizeof *v);          /* (N, Hkv, D) new values */
	float *a = tf_malloc(N * Hq * D * sizeof *a);           /* (N, Hq, D) */

	// projections over every sequence's rows: query and gate interleaved
	// per head, keys and values
	tf_matmul(&l->q_proj, u, N, qg);
	tf_matmul(&l->k_proj, u, N, k);
	tf_matmul(&l->v_proj, u, N, v);

	// each sequence against its own cache
	for (int64_t i = 0, r = 0; i < np; r += p[i++].n)
		core(&p[i], layer, qg + r * Hq * 2 * D, k + r * Hkv * D, v + r * Hkv * D, a + r * Hq * D);

	// output projection
	tf_matmul(&l->o_proj, a, N, out);
	free(qg);
	free(k);
	free(v);
	free(a);
}
