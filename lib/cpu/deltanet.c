/* deltanet.c: the Gated DeltaNet mixer (deltanet.h) */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "delta_rule.h"
#include "deltanet.h"
#include "matmul.h"
#include "ops.h"


/* depthwise causal conv over time, then SiLU: c (n, C) from m (n, C) and
 * the state's K-1 earlier rows, which are then replaced by the last K-1
 * inputs (pre-conv, pre-activation) */
static void causal_conv(const float *w, float *state, const float *m, int64_t n, int64_t C, int K, float *c)
{
	float *ext = tf_malloc((K - 1 + n) * C * sizeof *ext);  /* (K-1+n, C) state rows, then m */

	memcpy(ext, state, (K - 1) * C * sizeof *ext);
	memcpy(ext + (K - 1) * C, m, n * C * sizeof *ext);
	for (int64_t t = 0; t < n; t++)
		for (int64_t ch = 0; ch < C; ch++) {
			float s = 0;
			for (int k = 0; k < K; k++)
				s += w[ch * K + k] * ext[(t + k) * C + ch];
			c[t * C + ch] = tf_silu(s);
		}
	memcpy(state, ext + n * C, (K - 1) * C * sizeof *ext);
	free(ext);
}

/* the same conv over a tree's nodes: each node's K taps are its own input,
 * its parent's, ... back to its root, then the state's newest rows, summed
 * oldest first as a step sums them; the state stays as it was */
static void tree_conv(const float *w, const float *state, const float *m, const tf_tree_shape *sh, int64_t C,
		      int K, float *c)
{
	const float **tap = tf_malloc(K * sizeof *tap);         /* (K) the rows a node's taps read, oldest first */

	for (int64_t t = 0; t < sh->n; t++) {
		int k = K - 1;
		for (int64_t x = t; k >= 0 && x >= 0; x = sh->parent[x])
			tap[k--] = m + x * C;
		for (int r = K - 2; k >= 0; k--, r--)
			tap[k] = state + r * C;
		for (int64_t ch = 0; ch < C; ch++) {
			float s = 0;
			for (k = 0; k < K; k++)
				s += w[ch * K + k] * tap[k][ch];
			c[t * C + ch] = tf_silu(s);
		}
	}
	free(tap);
}

/* x / sqrt(sum x^2 + 1e-6) * scale, the kernel's L2 norm of q and k */
static void l2norm(float *x, int d, float scale)
{
	float inv = 1.0f / sqrtf(tf_dot(x, x, d) + 1e-6f) * scale;

	for (int i = 0; i < d; i++)
		x[i] *= inv;
}

void tf_deltanet(const tf_mix_part *p, int np, int layer, const float *u, int64_t N, float *out)
{
	const tf_model *m = p[0].st->m;
	const tf_config *c = &m->c;
	const tf_layer *l = &m->layer[layer];
	int Dk = c->lin_k_dim, Dv = c->lin_v_dim, Hk = c->lin_k_heads, Hv = c->lin_v_heads;
	int64_t C = m->conv_dim, kd = (int64_t)Hk * Dk, vd = (int64_t)Hv * Dv;
	float *mq = tf_malloc(N * C * sizeof *mq);      /* (N, conv_dim) projections before the conv */
	float *qkv = tf_malloc(N * C * sizeof *qkv);    /* (N, conv_dim) after conv and SiLU */
	float *z = tf_malloc(N * vd * sizeof *z);       /* (N, Hv, Dv) output gate */
	float *beta = tf_malloc(N * Hv * sizeof *beta); /* (N, Hv) */
	float *g = tf_malloc(N * Hv * sizeof *g);       /* (N, Hv) */
	float *o = tf_malloc(N * vd * sizeof *o);       /* (N, Hv, Dv) */

	// projections over every sequence's rows
	tf_matmul(&l->in_qkv, u, N, mq);
	tf_matmul(&l->in_z, u, N, z);
	tf_matmul(&l->in_b, u, N, beta);
	tf_matmul(&l->in_a, u, N, g);

	// causal conv with SiLU over q, k and v channels, each sequence over
	// its own conv tail (a tree's nodes along their branches, their inputs
	// kept for the commit)
	for (int64_t i = 0, r = 0; i < np; r += p[i++].n) {
		tf_state *st = p[i].st;
		if (p[i].sh) {
			tree_conv(l->conv, st->conv[layer], mq + r * C, p[i].sh, C, c->conv_k, qkv + r * C);
			memcpy(st->tree.mq[layer], mq + r * C, p[i].n * C * sizeof *mq);
		} else {
			causal_conv(l->conv, st->conv[layer], mq + r * C, p[i].n, C, c->conv_k, qkv + r * C);
		}
	}

	// L2-normalized q (scaled by 1/sqrt(Dk)) and k, per key head
	for (int64_t t = 0; t < N; t++)
		for (int h = 0; h < Hk; h++) {
			l2norm(qkv + t * C + h * Dk, Dk, 1.0f / sqrtf((float)Dk));
			l2norm(qkv + t * C + kd + h * Dk, Dk, 1.0f);
		}

	// beta = sigmoid(b), g = A softplus(a + dt_bias), A = -exp(A_log)
	for (int64_t t = 0; t < N; t++)
		for (int h = 0; h < Hv; h++) {
			beta[t * Hv + h] = tf_sigmoid(beta[t * Hv + h]);
			g[t * Hv + h] = l->A[h] * tf_softplus(g[t * Hv + h] + l->dt_bias[h]);
		}

	// the delta rule per value head, each sequence on its own state (a
	// tree's nodes each from its parent's state, what the commit replays
	// kept)
	for (int64_t i = 0, r = 0; i < np; r += p[i++].n) {
		tf_state *st = p[i].st;
		int64_t n = p[i].n;
		if (p[i].sh) {
			tf_gdn_rule_tree(c, qkv + r * C, beta + r * Hv, g + r * Hv, st->S[layer], p[i].sh, o + r * vd);
			memcpy(st->tree.qkv[layer], qkv + r * C, n * C * sizeof *qkv);
			memcpy(st->tree.beta[layer], beta + r * Hv, n * Hv * sizeof *beta);
			memcpy(st->tree.g[layer], g + r * Hv, n * Hv * sizeof *g);
		} else {
			tf_gdn_rule(c, qkv + r * C, beta + r * Hv, g + r * Hv, st->S[layer], n, o + r * vd, p[i].chunked);
		}
	}

	// gated RMSNorm: norm(o) * w * silu(z), per value head
	for (int64_t t = 0; t < N; t++)
		for (int h = 0; h < Hv; h++) {
			float *oh = o + (t * Hv + h) * Dv;
			const float *zh = z + (t * Hv + h) * Dv;
			tf_rmsnorm(oh, oh, l->gnorm, 1, Dv, c->eps);
			for (int d = 0; d < Dv; d++)
				oh[d] *= tf_silu(zh[d]);
		}

	// output projection
	tf_matmul(&l->out_proj, o, N, out);
	free(mq); free(qkv); free(z); free(beta); free(g); free(o);
}
