/*
 * round_cuda.c: a round of many sequences in one pass on the GPU (gpu.h).
 *
 * The rows of every sequence in the round go through the model together,
 * on the executor's buffers (gpu_impl.h), so each weight is read once a
 * round. Products, norms, the MLP and the head are row by row already; the
 * mixers take tables (kernels/rows.cuh) in place of one sequence's caches:
 * each full-attention row its position and its sequence's key and value
 * caches, each Gated DeltaNet segment (a sequence's rows) its states. The
 * kernels are a decode window's, doing the same arithmetic from the
 * tables, so every row has the bits of its sequence's own window, and so
 * of its steps. The tables live on the device and are copied in before
 * each pass: a pass captured once for its number of rows and of sequences
 * replays for any sequences at any positions.
 */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "gpu.h"

#ifndef TF_CUDA

int tf_gpu_round_takes(const tf_model *m)
{
	return 0;
}

int tf_gpu_round(const tf_gpu_part *p, int k, const float **logits)
{
	return tf_err("built without CUDA");
}

#else

#include "attn.cuh"
#include "embed.cuh"
#include "gdn_win.cuh"
#include "gpu_impl.h"
#include "rope.cuh"

#define TRY(x) do { if ((x) < 0) return -1; } while (0)
#define W GPU_WINDOW

struct gpu_round {
	tf_gpu_seq *g;                  /* the pass's ids, on the executor's buffers */
	uint8_t *tab, *h_tab;           /* the tables below on the device, and their page-locked staging */
	size_t bytes;
	/* offsets into tab: per layer i, entries i * W .. of k, v (full
	 * layers: a row's), S, conv (DeltaNet: a segment's) */
	size_t o_pos, o_k, o_v, o_S, o_conv, o_first, o_n;
	tf_cuda_graph *graph[W + 1][W + 1];     /* [rows][sequences] */
};

void gpu_round_free(gpu_round *r)
{
	if (!r)
		return;
	for (int n = 0; n <= W; n++)
		for (int s = 0; s <= W; s++)
			tf_cuda_graph_free(r->graph[n][s]);
	tf_gpu_seq_free(r->g);
	tf_cuda_free(r->tab);
	tf_cuda_host_free(r->h_tab);
	free(r);
}

uint64_t gpu_round_bytes(const gpu_round *r)
{
	return r ? r->bytes + 4 * GPU_PROMPT_SLICE + 8 : 0;
}

static gpu_round *round_of(const tf_model *m)
{
	tf_gpu_exec *e = m->gpu->exec;
	gpu_round *r;
	size_t L = (size_t)m->c.layers, pt = sizeof(float *);

	if (e->round)
		return e->round;
	r = tf_calloc(1, sizeof *r);
	r->o_pos = 0;
	r->o_k = r->o_pos + 8 * W;
	r->o_v = r->o_k + pt * L * W;
	r->o_S = r->o_v + pt * L * W;
	r->o_conv = r->o_S + pt * L * W;
	r->o_first = r->o_conv + pt * L * W;
	r->o_n = r->o_first + 4 * W;
	r->bytes = r->o_n + 4 * W;
	r->tab = tf_cuda_alloc(r->bytes, "a round's tables");
	r->h_tab = tf_cuda_host_alloc(r->bytes);
	if (!r->tab || !r->h_tab || !(r->g = gpu_seq_bare(m))) {
		gpu_round_free(r);
		return NULL;
	}
	memset(r->h_tab, 0, r->bytes);
	e->round = r;
	return r;
}

/* a table of the device copy, or of its staging */
#define TAB(base, r, o, type) ((type)((base) + (r)->o))

/* gated full attention of the pass's rows, each over its own sequence's
 * cache (attention() in forward_cuda.c, for a decode window) */
static int attention(gpu_round *r, int i, int n)
{
	tf_gpu_seq *g = r->g;
	const tf_config *c = &g->m->c;
	const tf_gpu_layer *l = &g->m->gpu->layer[i];
	int D = c->head_dim, Hq = c->heads, Hkv = c->kv_heads;
	int64_t T = l->qkv.rows;
	float *q = g->proj;                     /* (n, Hq, 2, D) query and gate, then keys and values, stride T */
	tf_kv_rows kr = { TAB(r->tab, r, o_pos, const int64_t *), TAB(r->tab, r, o_k, float **) + (size_t)i * W,
			  TAB(r->tab, r, o_v, float **) + (size_t)i * W };

	TRY(gpu_normed(g, l->in_norm, &l->qkv, n, g->proj, 0));
	TRY(tf_cuda_attn_prep_rows(q, n, Hq, Hkv, D, T, l->q_norm, l->k_norm, c->eps, c->rot_dim, gpu_rope_freq(g->m), &kr));
	TRY(tf_cuda_attention_rows(q, T, &kr, n, Hq, Hkv, D, g->x16, &g->attn));
	return gpu_product(&l->o_proj, g->x16, n, g->x, c->hidden, 1, 0);
}

/* Gated DeltaNet of the pass's segments, each on its own sequence's states
 * (deltanet() in forward_cuda.c, for a decode window) */
static int deltanet(gpu_round *r, int i, int n, int nseg)
{
	tf_gpu_seq *g = r->g;
	const tf_model *m = g->m;
	const tf_config *c = &m->c;
	const tf_gpu_layer *l = &m->gpu->layer[i];
	int Hk = c->lin_k_heads, Hv = c->lin_v_heads, Dk = c->lin_k_dim, Dv = c->lin_v_dim;
	const int g16 = gpu_gnorm16(&l->out_proj, Dv, (int64_t)Hv * Dv);
	tf_gdn_segs sg = { TAB(r->tab, r, o_first, const int32_t *), TAB(r->tab, r, o_n, const int32_t *),
			   TAB(r->tab, r, o_S, float **) + (size_t)i * W, TAB(r->tab, r, o_conv, float **) + (size_t)i * W,
			   nseg };

	TRY(gpu_normed(g, l->in_norm, &l->in, n, g->proj, 0));
	int win = tf_cuda_gdn_win_segs(g->proj, l->in.rows, n, &sg, l->conv, c->conv_k, l->A_log, l->dt_bias, Hk, Hv,
				       Dk, Dv, g->o, g->gdn_count, l->gnorm, g16 ? g->x16 : NULL, g->osq);
	if (win < 0)
		return -1;
	if (win)
		return tf_err("the Gated DeltaNet of a round does not take this model's shapes");
	return gpu_gdn_tail(g, i, n, 0, g16);
}

/* the pass of n rows in nseg sequences: layers, head, every row's logits to
 * the executor's h_logits */
static int pass(gpu_round *r, int n, int nseg)
{
	tf_gpu_seq *g = r->g;
	const tf_model *m = g->m;

	TRY(tf_cuda_embed(&m->gpu->embed, g->ids, n, g->x));
	for (int i = 0; i < m->c.layers; i++) {
		TRY(m->c.full[i] ? attention(r, i, n) : deltanet(r, i, n, nseg));
		TRY(gpu_mlp(g, i, n, 0));
	}
	TRY(gpu_head(g, 0, n, 0));
	return tf_cuda_download_async(g->h_logits, g->logits, 4 * (uint64_t)n * m->c.vocab);
}

int tf_gpu_round_takes(const tf_model *m)
{
	const tf_config *c = &m->c;

	for (int i = 0; i < c->layers; i++)
		if (!c->full[i])
			return tf_cuda_gdn_win_takes(c->lin_k_heads, c->lin_v_heads, c->lin_k_dim, c->lin_v_dim,
						     c->conv_k);
	return 1;
}

int tf_gpu_round(const tf_gpu_part *p, int k, const float **logits)
{
	const tf_model *m = k > 0 ? p[0].g->m : NULL;
	const tf_config *c = m ? &m->c : NULL;
	gpu_round *r;
	int rows = 0;

	if (k < 1 || k > W)
		return tf_err("a round of %d sequences on the GPU (1 to %d)", k, W);
	for (int s = 0; s < k; s++) {
		if (p[s].g->m != m)
			return tf_err("a round's sequences must be of one model");
		if (p[s].n < 1 || (rows += p[s].n) > W)
			return tf_err("a round of more than %d rows on the GPU", W);
		if (tf_config_check_ids(c, p[s].ids, p[s].n) < 0)
			return -1;
	}
	if (!tf_gpu_round_takes(m))
		return tf_err("rounds of this model's shapes do not run as one pass on the GPU");
	if (!(r = round_of(m)))
		return -1;
	/* the tables: each row's position and caches, each sequence's rows
	 * and states; the caches grown first (which moves them) */
	int64_t *pos = TAB(r->h_tab, r, o_pos, int64_t *);
	float **kt = TAB(r->h_tab, r, o_k, float **), **vt = TAB(r->h_tab, r, o_v, float **);
	float **St = TAB(r->h_tab, r, o_S, float **), **ct = TAB(r->h_tab, r, o_conv, float **);
	int32_t *first = TAB(r->h_tab, r, o_first, int32_t *), *nt = TAB(r->h_tab, r, o_n, int32_t *);
	int t = 0;
	for (int s = 0; s < k; s++) {
		tf_gpu_seq *g = p[s].g;
		TRY(tf_gpu_reserve(g, p[s].pos + p[s].n));
		g->tree_n = 0;          /* the rows past its positions are overwritten */
		g->fed = 0;             /* its step buffers no longer hold its next id */
		first[s] = t;
		nt[s] = p[s].n;
		for (int i = 0; i < c->layers; i++) {
			St[i * W + s] = g->S[i];
			ct[i * W + s] = g->conv[i];
		}
		for (int j = 0; j < p[s].n; j++, t++) {
			pos[t] = p[s].pos + j;
			r->g->h_ids[t] = p[s].ids[j];
			for (int i = 0; i < c->layers; i++) {
				kt[i * W + t] = g->k[i];
				vt[i * W + t] = g->v[i];
			}
		}
	}
	TRY(tf_cuda_upload_async(r->tab, r->h_tab, r->bytes));
	TRY(tf_cuda_upload_async(r->g->ids, r->g->h_ids, 4 * (uint64_t)rows));
	tf_cuda_graph **gr = &r->graph[rows][k];
	if (!*gr) {
		TRY(tf_cuda_capture_begin());
		if (pass(r, rows, k) < 0) {
			char msg[1024];
			tf_cuda_graph *junk;
			snprintf(msg, sizeof msg, "%s", tf_errmsg());
			tf_cuda_capture_end(&junk);
			tf_cuda_graph_free(junk);
			return tf_err("%s", msg);
		}
		TRY(tf_cuda_capture_end(gr));
	}
	TRY(tf_cuda_graph_run(*gr));
	TRY(tf_cuda_sync());
	*logits = r->g->h_logits;
	return 0;
}

#endif
