/*
 * tree_cuda.c: a token tree's pass on the GPU (gpu.h). The products of all
 * nodes run as one decode window's, reading each weight once for the
 * tree; the mixers run node by node, with the kernels and the inputs of a
 * one-row step, so every node's bits are a step's:
 *
 * - The nodes are visited depth first. A node at depth d writes its keys
 *   and values at cache row pos + d, where a step along its branch would:
 *   rows pos .. pos + d - 1 then hold its ancestors, written by the nodes
 *   visited last at those depths, and its attention is a step's at
 *   position pos + d. A copy of its row goes to row pos + 16 + node for
 *   the commit.
 * - The Gated DeltaNet states of the depths of the branch being visited
 *   live in slots: a node at depth d starts from a copy of slot d - 1 (its
 *   parent's, the last node visited at that depth) or of the sequence's
 *   own state, and its step leaves slot d for its children.
 * - A commit moves the kept nodes' cache rows into place and replays their
 *   logged projections onto the sequence's states as a decode window of
 *   the path, which gives the states of steps along it bit for bit (the
 *   rows of a window do not depend on its size).
 */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "gpu.h"

#ifndef TF_CUDA

int tf_gpu_tree(tf_gpu_seq *g, int64_t pos, const tf_tree *t, tf_logits_fn fn, void *ctx)
{
	return tf_err("built without CUDA");
}

int tf_gpu_tree_commit(tf_gpu_seq *g, const int32_t *path, int64_t len)
{
	return tf_err("built without CUDA");
}

void tf_gpu_tree_drop(tf_gpu_seq *g)
{
}

#else

#include "embed.cuh"
#include "gpu_impl.h"
#include "rope.cuh"

#define TRY(x) do { if ((x) < 0) return -1; } while (0)

void gpu_tree_free(tf_gpu_seq *g)
{
	if (g->tlog)
		for (int i = 0; i < g->m->c.layers; i++)
			tf_cuda_free(g->tlog[i]);
	free(g->tlog);
	tf_cuda_free(g->tpos);
	tf_cuda_host_free(g->h_tpos);
	tf_cuda_free(g->tS);
	tf_cuda_free(g->tconv);
	tf_cuda_free(g->tsplit);
	tf_cuda_free(g->tsq);
}

void tf_gpu_tree_drop(tf_gpu_seq *g)
{
	if (g)
		g->tree_n = 0;
}

static int64_t state_floats(const tf_model *m)
{
	return (int64_t)m->c.lin_v_heads * m->c.lin_k_dim * m->c.lin_v_dim;
}

static int64_t conv_floats(const tf_model *m)
{
	return (int64_t)(m->c.conv_k - 1) * m->conv_dim;
}

/* the buffers of a tree pass, made at the first */
static int scratch(tf_gpu_seq *g)
{
	const tf_model *m = g->m;
	const tf_config *c = &m->c;
	int64_t d = (int64_t)c->heads * c->head_dim, dv = (int64_t)c->lin_v_heads * c->lin_v_dim;

	if (g->tpos)
		return 0;
	if (dv > d)
		d = dv;
	g->tlog = tf_calloc(c->layers, sizeof *g->tlog);
	g->tpos = tf_cuda_alloc(8 * GPU_WINDOW, "a tree's buffers");
	g->h_tpos = tf_cuda_host_alloc(8 * GPU_WINDOW);
	g->tS = tf_cuda_alloc(4 * GPU_WINDOW * (state_floats(m) + 1), "a tree's states");
	g->tconv = tf_cuda_alloc(4 * GPU_WINDOW * (conv_floats(m) + 1), "a tree's states");
	g->tsplit = tf_cuda_alloc(8 * d + 256, "a tree's buffers");
	g->tsq = tf_cuda_alloc(4 * (d / 32 + 1), "a tree's buffers");
	if (!g->tpos || !g->h_tpos || !g->tS || !g->tconv || !g->tsplit || !g->tsq)
		return -1;
	for (int i = 0; i < c->layers; i++)
		if (!c->full[i] && !(g->tlog[i] = tf_cuda_alloc(4 * GPU_WINDOW * m->gpu->layer[i].in.rows,
								 "a tree's buffers")))
			return -1;
	return 0;
}

/* row t of a split product input of n rows of d values (common.cuh: two
 * bf16 planes, then sums and scales a 32 values, then int16 codes) from a
 * split input of one row */
static int split_row(uint16_t *dst, int n, int t, const uint16_t *src, int64_t d)
{
	int64_t N = (int64_t)n * d, b = d / 32;
	float *ds = (float *)(dst + 2 * N);
	const float *ss = (const float *)(src + 2 * d);

	TRY(tf_cuda_copy(dst + t * d, src, 2 * d));
	TRY(tf_cuda_copy(dst + N + t * d, src + d, 2 * d));
	TRY(tf_cuda_copy(ds + t * b, ss, 4 * b));
	TRY(tf_cuda_copy(ds + N / 32 + t * b, ss + b, 4 * b));
	return tf_cuda_copy((int16_t *)(ds + 2 * (N / 32)) + t * d, (const int16_t *)(ss + 2 * b), 2 * d);
}

/* gated full attention of the nodes in visiting order dfs; adds the output
 * projection into g->x */
static int attention(tf_gpu_seq *g, int i, int n, const int32_t *dfs)
{
	const tf_config *c = &g->m->c;
	const tf_gpu_layer *l = &g->m->gpu->layer[i];
	int D = c->head_dim, Hq = c->heads, Hkv = c->kv_heads;
	int64_t T = l->qkv.rows, kvr = (int64_t)Hkv * D;

	TRY(gpu_normed(g, l->in_norm, &l->qkv, n, g->proj, 0));
	for (int x = 0; x < n; x++) {
		int t = dfs[x];
		float *q = g->proj + t * T;     /* (Hq, 2, D) then keys and values, as a step's */
		int64_t row = g->tree_pos + g->tree_depth[t], keep = g->tree_pos + GPU_WINDOW + t;

		TRY(tf_cuda_attn_prep(q, 1, Hq, Hkv, D, T, l->q_norm, l->k_norm, c->eps, c->rot_dim, gpu_rope_freq(g->m),
				      g->tpos + t, g->k[i], g->v[i]));
		TRY(tf_cuda_copy(g->k[i] + keep * kvr, g->k[i] + row * kvr, 4 * kvr));
		TRY(tf_cuda_copy(g->v[i] + keep * kvr, g->v[i] + row * kvr, 4 * kvr));
		TRY(tf_cuda_attention(q, T, g->k[i], g->v[i], g->tpos + t, 1, Hq, Hkv, D, g->tsplit, &g->attn));
		TRY(split_row(g->x16, n, t, g->tsplit, (int64_t)Hq * D));
	}
	return gpu_product(&l->o_proj, g->x16, n, g->x, c->hidden, 1, 0);
}

/* Gated DeltaNet of the nodes in visiting order dfs; adds the output
 * projection into g->x and logs the nodes' projections */
static int deltanet(tf_gpu_seq *g, int i, int n, const int32_t *dfs)
{
	const tf_model *m = g->m;
	const tf_config *c = &m->c;
	const tf_gpu_layer *l = &m->gpu->layer[i];
	int64_t T = l->in.rows, hs = state_floats(m), cs = conv_floats(m), d = (int64_t)c->lin_v_heads * c->lin_v_dim;
	const int g16 = gpu_gnorm16(&l->out_proj, c->lin_v_dim, d);
	int win = 0;

	TRY(gpu_normed(g, l->in_norm, &l->in, n, g->proj, 0));
	TRY(tf_cuda_copy(g->tlog[i], g->proj, 4 * n * T));
	for (int x = 0; x < n; x++) {
		int t = dfs[x], dep = g->tree_depth[t];
		float *S = g->tS + dep * hs, *cv = g->tconv + dep * cs;

		TRY(tf_cuda_copy(S, dep ? S - hs : g->S[i], 4 * hs));
		TRY(tf_cuda_copy(cv, dep ? cv - cs : g->conv[i], 4 * cs));
		win = gpu_gdn_core(g, i, g->proj + t * T, 1, S, cv, g->o + t * d, g16 ? g->tsplit : NULL, g->tsq);
		if (win < 0)
			return -1;
		if (!win && g16) {
			TRY(split_row(g->x16, n, t, g->tsplit, d));
			TRY(tf_cuda_copy(g->osq + t * (d / 32), g->tsq, 4 * (d / 32)));
		}
	}
	return gpu_gdn_tail(g, i, n, win, g16);
}

/* the nodes depth first, the roots and each node's children in node order */
static void visit_order(const int32_t *parent, int n, int32_t *dfs)
{
	int32_t stack[GPU_WINDOW];
	int sp = 0, k = 0;

	for (int i = n - 1; i >= 0; i--)
		if (parent[i] < 0)
			stack[sp++] = i;
	while (sp) {
		int x = stack[--sp];
		dfs[k++] = x;
		for (int i = n - 1; i >= 0; i--)
			if (parent[i] == x)
				stack[sp++] = i;
	}
}

int tf_gpu_tree(tf_gpu_seq *g, int64_t pos, const tf_tree *t, tf_logits_fn fn, void *ctx)
{
	const tf_model *m = g->m;
	const tf_config *c = &m->c;
	int64_t V = c->vocab;
	int n = (int)t->n;
	tf_tree_shape sh;
	int32_t dfs[GPU_WINDOW];

	g->tree_n = 0;
	if (t->n > TF_GPU_TREE_MAX)
		return tf_err("a tree of %lld nodes on the GPU (1 to %d: its products are one decode window's)",
			      (long long)t->n, TF_GPU_TREE_MAX);
	if (tf_config_check_ids(c, t->id, t->n) < 0 || scratch(g) < 0 || tf_gpu_reserve(g, pos + 2 * GPU_WINDOW) < 0 ||
	    tf_tree_shape_of(t, &sh) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		g->tree_parent[i] = t->parent[i];
		g->tree_depth[i] = sh.depth[i];
		g->h_tpos[i] = pos + sh.depth[i];
	}
	tf_tree_shape_free(&sh);
	g->tree_pos = pos;
	visit_order(t->parent, n, dfs);

	TRY(gpu_stage(g, t->id, n, pos));
	TRY(tf_cuda_upload_async(g->tpos, g->h_tpos, 8 * (size_t)n));
	TRY(tf_cuda_embed(&m->gpu->embed, g->ids, n, g->x));
	for (int i = 0; i < c->layers; i++) {
		TRY(c->full[i] ? attention(g, i, n, dfs) : deltanet(g, i, n, dfs));
		TRY(gpu_mlp(g, i, n, 0));
	}
	TRY(gpu_head(g, 0, n, 0));
	if (fn)
		TRY(tf_cuda_download_async(g->h_logits, g->logits, 4 * n * V));
	TRY(tf_cuda_sync());
	if (fn)
		TRY(fn(ctx, 0, n, g->h_logits));
	g->tree_n = n;
	return 0;
}

int tf_gpu_tree_commit(tf_gpu_seq *g, const int32_t *path, int64_t len)
{
	const tf_model *m = g->m;
	const tf_config *c = &m->c;
	int64_t kvr = (int64_t)c->kv_heads * c->head_dim;

	/* the pass keeps its tree's parents, all the path check reads */
	const tf_tree_shape sh = { .n = g->tree_n, .parent = g->tree_parent };

	if (!g->tree_n)
		return tf_err("no tree pass to commit");
	if (tf_tree_path_check(&sh, path, len) < 0)
		return -1;
	for (int i = 0; i < c->layers && len; i++) {
		if (c->full[i]) {
			for (int64_t j = 0; j < len; j++) {
				int64_t from = g->tree_pos + GPU_WINDOW + path[j], to = g->tree_pos + j;
				TRY(tf_cuda_copy(g->k[i] + to * kvr, g->k[i] + from * kvr, 4 * kvr));
				TRY(tf_cuda_copy(g->v[i] + to * kvr, g->v[i] + from * kvr, 4 * kvr));
			}
			continue;
		}
		int64_t T = m->gpu->layer[i].in.rows;
		for (int64_t j = 0; j < len; j++)
			TRY(tf_cuda_copy(g->proj + j * T, g->tlog[i] + path[j] * T, 4 * T));
		TRY(gpu_gdn_core(g, i, g->proj, (int)len, g->S[i], g->conv[i], g->o, NULL, NULL));
	}
	TRY(tf_cuda_sync());
	g->tree_n = 0;
	g->fed = 0;
	return 0;
}

#endif
