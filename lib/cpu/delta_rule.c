/* delta_rule.c: the gated delta rule of the Gated DeltaNet mixer, token by
 * token or in chunks */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/pool.h"
#include "delta_rule.h"
#include "matmul.h"
#include "ops.h"

#define CHUNK 64

struct gdn_job {
	const tf_config *c;
	const float *qkv;       /* (n, conv_dim) normalized q, k heads, then v heads */
	const float *beta;      /* (n, Hv) */
	const float *g;         /* (n, Hv) log-decay, <= 0 */
	float *S;               /* (Hv, Dk, Dv) state */
	float *o;               /* (n, Hv, Dv) */
	int64_t n;
	const tf_tree_shape *sh;        /* over_tree: the nodes' shape */
};

/* one token of the delta rule on one value head's state S (Dk, Dv):
 *   S = alpha S;  d = beta (v - S^T k);  S += k d^T;  o = S^T q
 * with mv (Dv) scratch: the one place steps, windows, tree nodes and the
 * commit of a kept path all do this arithmetic, so they agree bit for bit */
static void rule_token(int Dk, int Dv, float *S, const float *q, const float *k, const float *v, float alpha,
		       float beta, float *o, float *mv)
{
	memset(mv, 0, Dv * sizeof *mv);
	for (int i = 0; i < Dk; i++) {
		float *Si = S + i * Dv;
		for (int d = 0; d < Dv; d++) {
			Si[d] *= alpha;
			mv[d] += Si[d] * k[i];
		}
	}
	for (int d = 0; d < Dv; d++)
		mv[d] = beta * (v[d] - mv[d]);
	memset(o, 0, Dv * sizeof *o);
	for (int i = 0; i < Dk; i++) {
		float *Si = S + i * Dv;
		for (int d = 0; d < Dv; d++) {
			Si[d] += k[i] * mv[d];
			o[d] += Si[d] * q[i];
		}
	}
}

/* the delta rule one token at a time, for value heads [b, e) */
static void recurrent(void *ctx, int64_t b, int64_t e)
{
	const struct gdn_job *j = ctx;
	const tf_config *c = j->c;
	int Dk = c->lin_k_dim, Dv = c->lin_v_dim, Hv = c->lin_v_heads, r = Hv / c->lin_k_heads;
	int64_t kd = (int64_t)c->lin_k_heads * Dk, C = 2 * kd + (int64_t)Hv * Dv;
	float *mv = tf_malloc(Dv * sizeof *mv);

	for (int64_t h = b; h < e; h++) {
		float *S = j->S + h * Dk * Dv;
		for (int64_t t = 0; t < j->n; t++) {
			const float *q = j->qkv + t * C + (h / r) * Dk, *k = q + kd, *v = j->qkv + t * C + 2 * kd + h * Dv;
			rule_token(Dk, Dv, S, q, k, v, expf(j->g[t * Hv + h]), j->beta[t * Hv + h],
				   j->o + (t * Hv + h) * Dv, mv);
		}
	}
	free(mv);
}

/* the delta rule over a tree's nodes, for value heads [b, e): each node
 * from a copy of its parent's state (the context's for a root), parents
 * first, the sequence's own state left as it was */
static void over_tree(void *ctx, int64_t b, int64_t e)
{
	const struct gdn_job *j = ctx;
	const tf_config *c = j->c;
	const tf_tree_shape *sh = j->sh;
	int Dk = c->lin_k_dim, Dv = c->lin_v_dim, Hv = c->lin_v_heads, r = Hv / c->lin_k_heads;
	int64_t kd = (int64_t)c->lin_k_heads * Dk, C = 2 * kd + (int64_t)Hv * Dv, hs = (int64_t)Dk * Dv;
	float *mv = tf_malloc(Dv * sizeof *mv);
	float *slot = tf_malloc(sh->n * hs * sizeof *slot);     /* (n, Dk, Dv) each node's state of head h */

	for (int64_t h = b; h < e; h++) {
		for (int64_t x = 0; x < sh->n; x++) {
			int64_t t = sh->order[x], p = sh->parent[t];
			const float *q = j->qkv + t * C + (h / r) * Dk, *k = q + kd, *v = j->qkv + t * C + 2 * kd + h * Dv;
			memcpy(slot + t * hs, p < 0 ? j->S + h * hs : slot + p * hs, hs * sizeof *slot);
			rule_token(Dk, Dv, slot + t * hs, q, k, v, expf(j->g[t * Hv + h]), j->beta[t * Hv + h],
				   j->o + (t * Hv + h) * Dv, mv);
		}
	}
	free(slot);
	free(mv);
}

/* The same recurrence, a chunk of up to 64 tokens at a time, as
 * transformers' torch_chunk_gated_delta_rule: within a chunk,
 * gam_i = sum of g up to i, Dec[i][j] = exp(gam_i - gam_j);
 * (I + A) U = diag(beta) V and (I + A) W = diag(beta exp(gam)) K with
 * A = strict_lower((diag(beta) K K^T) . Dec) by forward substitution;
 * Vn = U - W S;  O = diag(exp(gam)) Q S + lower(Q K^T . Dec) Vn;
 * S = exp(gam_last) S + sum_i exp(gam_last - gam_i) k_i Vn_i^T. */
static void chunked(void *ctx, int64_t b, int64_t e)
{
	const struct gdn_job *j = ctx;
	const tf_config *c = j->c;
	int Dk = c->lin_k_dim, Dv = c->lin_v_dim, Hv = c->lin_v_heads, r = Hv / c->lin_k_heads;
	int64_t kd = (int64_t)c->lin_k_heads * Dk, C = 2 * kd + (int64_t)Hv * Dv;
	float *gam = tf_malloc(CHUNK * sizeof *gam);                    /* (CHUNK) */
	float *A = tf_malloc(CHUNK * CHUNK * sizeof *A);                /* (CHUNK, CHUNK) */
	float *U = tf_malloc(CHUNK * Dv * sizeof *U);                   /* (CHUNK, Dv) */
	float *W = tf_malloc(CHUNK * Dk * sizeof *W);                   /* (CHUNK, Dk) */

	for (int64_t h = b; h < e; h++) {
		float *S = j->S + h * Dk * Dv;
		for (int64_t t0 = 0; t0 < j->n; t0 += CHUNK) {
			int cn = j->n - t0 < CHUNK ? (int)(j->n - t0) : CHUNK;
#define Q(i) (j->qkv + (t0 + (i)) * C + (h / r) * Dk)
#define K(i) (Q(i) + kd)
#define V(i) (j->qkv + (t0 + (i)) * C + 2 * kd + h * Dv)
#define BETA(i) (j->beta[(t0 + (i)) * Hv + h])
			float acc = 0;
			for (int i = 0; i < cn; i++)
				gam[i] = acc += j->g[(t0 + i) * Hv + h];
			// A and the two triangular solves, row by row
			for (int i = 0; i < cn; i++) {
				float eg = expf(gam[i]);
				for (int jj = 0; jj < i; jj++)
					A[i * CHUNK + jj] = BETA(i) * tf_dot(K(i), K(jj), Dk) * expf(gam[i] - gam[jj]);
				for (int d = 0; d < Dv; d++)
					U[i * Dv + d] = BETA(i) * V(i)[d];
				for (int d = 0; d < Dk; d++)
					W[i * Dk + d] = BETA(i) * eg * K(i)[d];
				for (int jj = 0; jj < i; jj++) {
					float a = A[i * CHUNK + jj];
					for (int d = 0; d < Dv; d++)
						U[i * Dv + d] -= a * U[jj * Dv + d];
					for (int d = 0; d < Dk; d++)
						W[i * Dk + d] -= a * W[jj * Dk + d];
				}
			}
			// Vn = U - W S, kept in U
			for (int i = 0; i < cn; i++)
				for (int d = 0; d < Dk; d++) {
					float w = W[i * Dk + d];
					const float *Sd = S + d * Dv;
					for (int v = 0; v < Dv; v++)
						U[i * Dv + v] -= w * Sd[v];
				}
			// outputs: the carried state read by q, plus the chunk's own part
			for (int i = 0; i < cn; i++) {
				float *o = j->o + ((t0 + i) * Hv + h) * Dv, eg = expf(gam[i]);
				memset(o, 0, Dv * sizeof *o);
				for (int d = 0; d < Dk; d++) {
					float qd = Q(i)[d] * eg;
					const float *Sd = S + d * Dv;
					for (int v = 0; v < Dv; v++)
						o[v] += qd * Sd[v];
				}
				for (int jj = 0; jj <= i; jj++) {
					float p = tf_dot(Q(i), K(jj), Dk) * expf(gam[i] - gam[jj]);
					for (int v = 0; v < Dv; v++)
						o[v] += p * U[jj * Dv + v];
				}
			}
			// the state after the chunk
			float last = gam[cn - 1], el = expf(last);
			for (int64_t x = 0; x < (int64_t)Dk * Dv; x++)
				S[x] *= el;
			for (int i = 0; i < cn; i++) {
				float w = expf(last - gam[i]);
				for (int d = 0; d < Dk; d++) {
					float kw = K(i)[d] * w;
					float *Sd = S + d * Dv;
					for (int v = 0; v < Dv; v++)
						Sd[v] += kw * U[i * Dv + v];
				}
			}
#undef Q
#undef K
#undef V
#undef BETA
		}
	}
	free(gam);
	free(A);
	free(U);
	free(W);
}

void tf_gdn_rule(const tf_config *c, const float *qkv, const float *beta, const float *g, float *S, int64_t n,
		 float *o, int use_chunks)
{
	struct gdn_job j = { c, qkv, beta, g, S, o, n, NULL };

	/* a prompt's last piece may be a single token: it still goes the
	 * chunked way, so a prompt fed in pieces of a multiple of 64 sums
	 * exactly as the whole prompt in one call does */
	tf_parallel(c->lin_v_heads, use_chunks ? chunked : recurrent, &j);
}

void tf_gdn_rule_tree(const tf_config *c, const float *qkv, const float *beta, const float *g, const float *S,
		      const tf_tree_shape *sh, float *o)
{
	struct gdn_job j = { c, qkv, beta, g, (float *)S, o, sh->n, sh };

	tf_parallel(c->lin_v_heads, over_tree, &j);
}
