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

void tf_deltanet(tf_state *st, int layer, const float *u, int64_t n, const tf_tree_shape *sh, float *out,
		 int use_chunks)
{
	const tf_model *m = st->m;
	const tf_config *c = &m->c;
	const tf_layer *l = &m->layer[layer];
	int Dk = c->lin_k_dim, Dv = c->lin_v_dim, Hk = c->lin_k_heads, Hv = c->lin_v_heads;
	int64_t C = m->conv_dim, kd = (int64_t)Hk * Dk, vd = (int64_t)Hv * Dv;
	float *mq = tf_malloc(n * C * sizeof *mq);      /* (n, conv_dim) projections before the conv */
	float *qkv = tf_malloc(n * C * sizeof *qkv);    /* (n, conv_dim) after conv and SiLU */
	float *z = tf_malloc(n * vd * sizeof *z);       /* (n, Hv, Dv) output gate */
	float *beta = tf_malloc(n * Hv * sizeof *beta); /* (n, Hv) */
	float *g = tf_malloc(n * Hv * sizeof *g);       /* (n, Hv) */
	float *o = tf_malloc(n * vd * sizeof *o);       /* (n, Hv, Dv) */

	// projections
	tf_matmul(&l->in_qkv, u, n, mq);
	tf_matmul(&l->in_z, u, n, z);
	tf_matmul(&l->in_b, u, n, beta);
	tf_matmul(&l->in_a, u, n, g);

	// causal conv with SiLU over q, k and v channels (a tree's nodes along
	// their branches, their inputs kept for the commit)
	if (sh) {
		tree_conv(l->conv, st->conv[layer], mq, sh, C, c->conv_k, qkv);
		memcpy(st->tree.mq[layer], mq, n * C * sizeof *mq);
	} else {
		causal_conv(l->conv, st->conv[layer], mq, n, C, c->conv_k, qkv);
	}

	// L2-normalized q (scaled by 1/sqrt(Dk)) and k, per key head
	for (int64_t t = 0; t < n; t++)
		for (int h = 0; h < Hk; h++) {
			l2norm(qkv + t * C + h * Dk, Dk, 1.0f / sqrtf((float)Dk));
			l2norm(qkv + t * C + kd + h * Dk, Dk, 1.0f);
		}

	// beta = sigmoid(b), g = -exp(A_log) softplus(a + dt_bias)
	for (int64_t t = 0; t < n; t++)
		for (int h = 0; h < Hv; h++) {
			beta[t * Hv + h] = tf_sigmoid(beta[t * Hv + h]);
			g[t * Hv + h] = -expf(l->A_log[h]) * tf_softplus(g[t * Hv + h] + l->dt_bias[h]);
		}

	// the delta rule per value head (a tree's nodes each from its parent's
	// state, what the commit replays kept)
	if (sh) {
		tf_gdn_rule_tree(c, qkv, beta, g, st->S[layer], sh, o);
		memcpy(st->tree.qkv[layer], qkv, n * C * sizeof *qkv);
		memcpy(st->tree.beta[layer], beta, n * Hv * sizeof *beta);
		memcpy(st->tree.g[layer], g, n * Hv * sizeof *g);
	} else {
		tf_gdn_rule(c, qkv, beta, g, st->S[layer], n, o, use_chunks);
	}

	// gated RMSNorm: norm(o) * w * silu(z), per value head
	for (int64_t t = 0; t < n; t++)
		for (int h = 0; h < Hv; h++) {
			float *oh = o + (t * Hv + h) * Dv;
			const float *zh = z + (t * Hv + h) * Dv;
			tf_rmsnorm(oh, oh, l->gnorm, 1, Dv, c->eps);
			for (int d = 0; d < Dv; d++)
				oh[d] *= tf_silu(zh[d]);
		}

	// output projection
	tf_matmul(&l->out_proj, o, n, out);
	free(mq); free(qkv); free(z); free(beta); free(g); free(o);
}
