/* forward_cuda.c: the decoder stack on the GPU, one launch per step of the
 * math, in the order of forward.c (transformers'
 * Qwen3_5DecoderLayer.forward) */
#include <stdlib.h>
#include <string.h>

#include "base/env.h"
#include "base/err.h"
#include "gpu.h"

#ifndef TF_CUDA

int tf_gpu_forward_each(tf_gpu_seq *g, int64_t pos, const int32_t *ids, int64_t n, int flags, tf_logits_fn fn,
			void *ctx, const tf_pass_progress *pr)
{
	return tf_err("built without CUDA");
}

int tf_gpu_steps_draw(tf_gpu_seq *g, int64_t pos, int32_t id, tf_sampler *s, int n, int stop, tf_id_fn each,
		      void *ctx, int32_t *out, int *got)
{
	return tf_err("built without CUDA");
}

int tf_gpu_gemv_sweep(tf_gpu_seq *g, int rows, int reps, double *ms, uint64_t *bytes)
{
	return tf_err("built without CUDA");
}

#else

#include "act.cuh"
#include "attn.cuh"
#include "conv.cuh"
#include "embed.cuh"
#include "gdn.cuh"
#include "gdn_chunk.cuh"
#include "gdn_in.cuh"
#include "gdn_win.cuh"
#include "gemm.cuh"
#include "gemv.cuh"
#include "gemv_q16.cuh"
#include "gpu_impl.h"
#include "norm.cuh"
#include "rope.cuh"
#include "sample.cuh"
#include "sample_top.cuh"

/* y (n, rows) [+]= x (n, cols) W^T, row i of y at y + i * ldy: the
 * row-independent decode kernel, or a cuBLASLt GEMM for prompt passes of
 * more than a window of rows */
int gpu_product(const tf_weight *w, const uint16_t *x, int n, float *y, int64_t ldy, int acc, int prompt)
{
	if (prompt && n > GPU_WINDOW)
		return tf_cuda_gemm_ld(w, x, n, y, ldy, acc);
	return tf_cuda_gemv_ld(w, x, n, y, ldy, acc);
}

#define TRY(x) do { if ((x) < 0) return -1; } while (0)

/* y (n, f->rows) = x W^T for a fused product: one launch when its parts are
 * stacked, else one per part into its column slice */
static int fused(const tf_gpu_fused *f, const uint16_t *x, int n, float *y, int prompt)
{
	int64_t off = 0;

	for (int k = 0; k < f->n; k++) {
		TRY(gpu_product(&f->w[k], x, n, y + off, f->rows, 0, prompt));
		off += f->w[k].rows;
	}
	return 0;
}

/* whether every part of a fused product takes the int16-input kernel, so a
 * decode step can hand it f32 rows and let it make its own inputs (the
 * norm in the same launch) */
static int q16_fused(const tf_gpu_fused *f)
{
	for (int k = 0; k < f->n; k++)
		if (!tf_cuda_gemv_q16_takes(&f->w[k]))
			return 0;
	return 1;
}

/* y (n, f->rows) = in W^T for a fused product on the int16 kernel */
static int fused_q16(const tf_gpu_fused *f, const tf_q16_in *in, int n, float *y)
{
	int64_t off = 0;

	for (int k = 0; k < f->n; k++) {
		TRY(tf_cuda_gemv_q16(&f->w[k], in, n, y + off, f->rows, TF_Q16_STORE));
		off += f->w[k].rows;
	}
	return 0;
}

/* y (n, f->rows) = RMSNorm(g->x) W^T (norm factors w): in one launch for a
 * decode window where the int16 kernel takes f, else the norm to the split
 * input, then the product */
int gpu_normed(tf_gpu_seq *g, const float *w, const tf_gpu_fused *f, int n, float *y, int prompt)
{
	const tf_config *c = &g->m->c;

	if (!prompt && q16_fused(f)) {
		tf_q16_in in = { .kind = TF_Q16_NORM, .x = g->x, .ldx = c->hidden, .w = w, .eps = c->eps };
		return fused_q16(f, &in, n, y);
	}
	TRY(tf_cuda_rmsnorm(g->x, w, n, c->hidden, c->eps, NULL, g->x16));
	return fused(f, g->x16, n, y, prompt);
}

/* gated full attention; adds its output projection into the stream g->x */
static int attention(tf_gpu_seq *g, int i, int n, int prompt)
{
	const tf_config *c = &g->m->c;
	const tf_gpu_layer *l = &g->m->gpu->layer[i];
	int D = c->head_dim, Hq = c->heads, Hkv = c->kv_heads;
	int64_t T = l->qkv.rows, kvr = (int64_t)Hkv * D;
	float *q = g->proj;                     /* (n, Hq, 2, D) query and gate, token stride T */
	float *k = q + 2LL * Hq * D, *v = k + kvr;      /* (n, Hkv, D) each, token stride T */

	// projections of the normed stream: query and gate interleaved per
	// head, keys, values (one fused product)
	TRY(gpu_normed(g, l->in_norm, &l->qkv, n, g->proj, prompt));
	// per-head RMSNorm of q and k, then rotary on their first rot_dim dims;
	// keys and values into the cache at rows pos .. pos + n - 1
	if (!prompt) {
		TRY(tf_cuda_attn_prep(q, n, Hq, Hkv, D, T, l->q_norm, l->k_norm, c->eps, c->rot_dim, gpu_rope_freq(g->m),
				      g->pos, g->k[i], g->v[i]));
	} else {
		TRY(tf_cuda_qk_norm_rope(q, n, Hq, D, T, 2 * D, l->q_norm, c->eps, c->rot_dim, gpu_rope_freq(g->m), g->pos));
		TRY(tf_cuda_qk_norm_rope(k, n, Hkv, D, T, D, l->k_norm, c->eps, c->rot_dim, gpu_rope_freq(g->m), g->pos));
		TRY(tf_cuda_kv_append(k, v, T, n, kvr, g->pos, g->k[i], g->v[i]));
	}
	// causal attention over the cache, gated by sigmoid(gate)
	TRY(tf_cuda_attention(q, T, g->k[i], g->v[i], g->pos, n, Hq, Hkv, D, g->x16, &g->attn));
	// output projection, added into the residual stream
	return gpu_product(&l->o_proj, g->x16, n, g->x, c->hidden, 1, prompt);
}

/* whether a decode window's Gated DeltaNet makes the output projection's
 * input as int16 codes (a TF_Q16_HSPLIT input) rather than the product
 * norming f32 rows (TF_Q16_GNORM) in each of its blocks */
int gpu_gnorm16(const tf_weight *w, int d, int64_t cols)
{
	return tf_cuda_gemv_q16_takes(w) && tf_cuda_gemv_q16_hsplit_takes(d, cols);
}

/* The conv, gates, q and k norms and the delta rule of n decode rows of
 * fused projections mq (stride in.rows) on the states S and cs of layer i,
 * their outputs o (n, Hv*Dv); with split (when gnorm16) also the output
 * projection's TF_Q16_HSPLIT input and its sums of squares sq. Returns 0
 * when that one launch did it all, 1 when the separate kernels did and o
 * alone was made (the shapes gdn_win does not take). The b and a parts of
 * mq are overwritten then. */
int gpu_gdn_core(tf_gpu_seq *g, int i, float *mq, int n, float *S, float *cs, float *o, uint16_t *split, float *sq)
{
	const tf_model *m = g->m;
	const tf_config *c = &m->c;
	const tf_gpu_layer *l = &m->gpu->layer[i];
	int Hk = c->lin_k_heads, Hv = c->lin_v_heads, Dk = c->lin_k_dim, Dv = c->lin_v_dim, C = m->conv_dim;
	int64_t T = l->in.rows;
	float *b = mq + C + (int64_t)Hv * Dv;   /* (n, Hv) beta logits (then beta, but for tf_cuda_gdn_win) */
	float *a = b + Hv;                      /* (n, Hv) decay logits (then g, likewise) */

	// one launch where the shapes allow (the same bits as the kernels below)
	int win = tf_cuda_gdn_win(mq, T, n, l->conv, cs, c->conv_k, l->A_log, l->dt_bias, S, Hk, Hv, Dk, Dv, o,
				  g->gdn_count, l->gnorm, split, sq);
	if (win <= 0)
		return win;
	// causal conv with SiLU over q, k and v channels (updates the conv state);
	// L2-normalized q and k; beta = sigmoid(b), g = -exp(A_log) softplus(a + dt_bias)
	int one = tf_cuda_gdn_in(l->conv, cs, mq, T, n, C, c->conv_k, g->qkv, b, a, T, l->A_log, l->dt_bias, Hk, Hv, Dk);
	if (one < 0)
		return -1;
	if (one) {
		TRY(tf_cuda_conv(l->conv, cs, mq, T, n, C, c->conv_k, g->qkv));
		TRY(tf_cuda_gdn_prep(g->qkv, b, a, T, l->A_log, l->dt_bias, n, Hk, Hv, Dk, Dv));
	}
	// the delta rule token by token (updates the recurrent state): a decode
	// window's rows must not depend on the window size
	TRY(tf_cuda_gdn_step(g->qkv, b, a, T, S, n, Hk, Hv, Dk, Dv, o));
	return 1;
}

/* the gated RMSNorm of a decode window's o, norm(o) * w * silu(z) per value
 * head, and the output projection of it added into the residual stream:
 * from gpu_gdn_core's split input where it made one (win 0, g16) */
int gpu_gdn_tail(tf_gpu_seq *g, int i, int n, int win, int g16)
{
	const tf_config *c = &g->m->c;
	const tf_gpu_layer *l = &g->m->gpu->layer[i];
	int Hv = c->lin_v_heads, Dv = c->lin_v_dim;
	const float *z = g->proj + g->m->conv_dim;      /* (n, Hv, Dv) output gate, token stride in.rows */

	if (!win && g16) {
		tf_q16_in in = { .kind = TF_Q16_HSPLIT, .split = g->x16, .sq = g->osq, .d = Dv, .eps = c->eps };
		return tf_cuda_gemv_q16(&l->out_proj, &in, n, g->x, c->hidden, TF_Q16_ACC);
	}
	if (tf_cuda_gemv_q16_takes(&l->out_proj) && tf_cuda_gemv_q16_gnorm_takes(Dv, (int64_t)Hv * Dv)) {
		tf_q16_in in = { .kind = TF_Q16_GNORM, .x = g->o, .ldx = (int64_t)Hv * Dv, .w = l->gnorm, .eps = c->eps,
				.z = z, .ldz = l->in.rows, .d = Dv };
		return tf_cuda_gemv_q16(&l->out_proj, &in, n, g->x, c->hidden, TF_Q16_ACC);
	}
	TRY(tf_cuda_gated_norm(g->o, z, l->in.rows, l->gnorm, n, Hv, Dv, c->eps, g->x16));
	return gpu_product(&l->out_proj, g->x16, n, g->x, c->hidden, 1, 0);
}

/* Gated DeltaNet; adds its output projection into the stream g->x */
static int deltanet(tf_gpu_seq *g, int i, int n, int prompt)
{
	const tf_model *m = g->m;
	const tf_config *c = &m->c;
	const tf_gpu_layer *l = &m->gpu->layer[i];
	int Hk = c->lin_k_heads, Hv = c->lin_v_heads, Dk = c->lin_k_dim, Dv = c->lin_v_dim, C = m->conv_dim;
	int64_t T = l->in.rows;
	float *mq = g->proj;                    /* (n, conv_dim) before the conv, token stride T */
	float *z = mq + C;                      /* (n, Hv, Dv) output gate */
	float *b = z + (int64_t)Hv * Dv;        /* (n, Hv) beta logits, then beta */
	float *a = b + Hv;                      /* (n, Hv) decay logits, then g */

	// projections of the normed stream: in_proj_qkv, z, b, a (one fused product)
	TRY(gpu_normed(g, l->in_norm, &l->in, n, g->proj, prompt));
	// a decode window: the conv, gates, norms and the delta rule, and with
	// them the output projection's input as int16 codes of each head
	// before its norm, where that product takes it (gnorm16)
	if (!prompt) {
		const int g16 = gpu_gnorm16(&l->out_proj, Dv, (int64_t)Hv * Dv);
		int win = gpu_gdn_core(g, i, mq, n, g->S[i], g->conv[i], g->o, g16 ? g->x16 : NULL, g->osq);
		if (win < 0)
			return -1;
		return gpu_gdn_tail(g, i, n, win, g16);
	}
	// a prompt slice: the conv, gates and norms, then the delta rule in
	// chunks of 64 on the tensor cores for more than a window of rows
	TRY(tf_cuda_conv(l->conv, g->conv[i], mq, T, n, C, c->conv_k, g->qkv));
	TRY(tf_cuda_gdn_prep(g->qkv, b, a, T, l->A_log, l->dt_bias, n, Hk, Hv, Dk, Dv));
	if (n > GPU_WINDOW)
		TRY(tf_cuda_gdn_chunk(g->qkv, b, a, T, g->S[i], n, Hk, Hv, Dk, Dv, g->o));
	else
		TRY(tf_cuda_gdn_step(g->qkv, b, a, T, g->S[i], n, Hk, Hv, Dk, Dv, g->o));
	TRY(tf_cuda_gated_norm(g->o, z, T, l->gnorm, n, Hv, Dv, c->eps, g->x16));
	return gpu_product(&l->out_proj, g->x16, n, g->x, c->hidden, 1, prompt);
}

/* whether the SwiGLU product makes its outputs int16 for down: where that
 * pays (tf_cuda_gemv_q16_swiglu16_pays); TF_CUDA_SWIGLU16=0 never, 1 wherever
 * it can (for tests and comparison) */
static int swiglu16(const tf_weight *w)
{
	if (tf_env_off("TF_CUDA_SWIGLU16"))
		return 0;
	return tf_env_on("TF_CUDA_SWIGLU16") ? tf_cuda_gemv_q16_swiglu16_takes(w) : tf_cuda_gemv_q16_swiglu16_pays(w);
}

/* SwiGLU on the normed stream; down_proj adds into g->x */
int gpu_mlp(tf_gpu_seq *g, int i, int n, int prompt)
{
	const tf_config *c = &g->m->c;
	const tf_gpu_layer *l = &g->m->gpu->layer[i];
	int64_t I = c->inter;

	// a decode window where gate and up are one stacked weight: the norm,
	// gate, up and silu(gate) * up in one launch, then down on those rows
	if (!prompt && l->gu.n == 1 && q16_fused(&l->gu) && tf_cuda_gemv_q16_takes(&l->down)) {
		tf_q16_in in = { .kind = TF_Q16_NORM, .x = g->x, .ldx = c->hidden, .w = l->post_norm, .eps = c->eps };
		// down's inputs made int16 by the product that makes them, once,
		// rather than from f32 rows in each of down's blocks
		if (swiglu16(&l->gu.w[0])) {
			TRY(tf_cuda_gemv_q16_swiglu16(&l->gu.w[0], &in, n, g->x16));
			tf_q16_in h = { .kind = TF_Q16_SPLIT, .split = g->x16 };
			return tf_cuda_gemv_q16(&l->down, &h, n, g->x, c->hidden, TF_Q16_ACC);
		}
		TRY(tf_cuda_gemv_q16(&l->gu.w[0], &in, n, g->gu, I, TF_Q16_SWIGLU));
		tf_q16_in h = { .kind = TF_Q16_ROWS, .x = g->gu, .ldx = I };
		return tf_cuda_gemv_q16(&l->down, &h, n, g->x, c->hidden, TF_Q16_ACC);
	}
	// gate and up (one fused product), silu(gate) * up, down added into the stream
	TRY(gpu_normed(g, l->post_norm, &l->gu, n, g->gu, prompt));
	TRY(tf_cuda_swiglu(g->gu, 2 * I, n, I, g->x16));
	return gpu_product(&l->down, g->x16, n, g->x, c->hidden, 1, prompt);
}

/* n tokens (ids and first position already on the device) through every
 * layer; the final residual stream stays in g->x */
static int layers(tf_gpu_seq *g, int n, int prompt)
{
	const tf_model *m = g->m;
	const tf_config *c = &m->c;

	// embedding rows, no scaling
	TRY(tf_cuda_embed(&m->gpu->embed, g->ids, n, g->x));
	for (int i = 0; i < c->layers; i++) {
		// token mixer on the normed stream, residual add
		TRY(c->full[i] ? attention(g, i, n, prompt) : deltanet(g, i, n, prompt));
		// feed-forward on the normed stream, residual add
		TRY(gpu_mlp(g, i, n, prompt));
	}
	return 0;
}

/* logits (rows, V) of stream rows [first, first + rows), rows <= GPU_HEAD_BLOCK:
 * final norm, then the head */
int gpu_head(tf_gpu_seq *g, int64_t first, int rows, int prompt)
{
	const tf_model *m = g->m;
	int H = m->c.hidden;

	if (!prompt && tf_cuda_gemv_q16_takes(&m->gpu->head)) {
		tf_q16_in in = { .kind = TF_Q16_NORM, .x = g->x + first * H, .ldx = H, .w = m->gpu->norm, .eps = m->c.eps };
		return tf_cuda_gemv_q16(&m->gpu->head, &in, rows, g->logits, m->c.vocab, TF_Q16_STORE);
	}
	TRY(tf_cuda_rmsnorm(g->x + first * H, m->gpu->norm, rows, H, m->c.eps, NULL, g->x16));
	return gpu_product(&m->gpu->head, g->x16, rows, g->logits, m->c.vocab, 0, prompt);
}

/* puts ids and the first position of a pass on the device */
int gpu_stage(tf_gpu_seq *g, const int32_t *ids, int n, int64_t pos)
{
	g->fed = 0;
	memcpy(g->h_ids, ids, 4 * (size_t)n);
	*g->h_pos = pos;
	TRY(tf_cuda_upload_async(g->ids, g->h_ids, 4 * (size_t)n));
	return tf_cuda_upload_async(g->pos, g->h_pos, 8);
}

/* ends a capture (a loop's when loop) that failed part way and drops what
 * it recorded, keeping the message of the failure; returns -1 */
static int capture_abort(int loop)
{
	tf_cuda_graph *junk;
	char msg[1024];

	snprintf(msg, sizeof msg, "%s", tf_errmsg());
	if (loop)
		tf_cuda_loop_end(&junk);
	else
		tf_cuda_capture_end(&junk);
	tf_cuda_graph_free(junk);
	return tf_err("%s", msg);
}

/* A window of n <= 16 rows: layers, then no logits (want 0), the last row's
 * (1) or every row's (2), copied to h_logits; captured once per (n, want)
 * and replayed, since every input it reads is on the device. */
static int window(tf_gpu_seq *g, int n, int want)
{
	tf_cuda_graph **gr = &g->graph[n][want];
	int64_t V = g->m->c.vocab;

	if (!*gr) {
		int rows = want == 2 ? n : 1;
		TRY(tf_cuda_capture_begin());
		if (layers(g, n, 0) < 0 || (want && gpu_head(g, want == 2 ? 0 : n - 1, rows, 0) < 0) ||
		    (want && tf_cuda_download_async(g->h_logits, g->logits, 4 * rows * V) < 0)) {
			return capture_abort(0);
		}
		TRY(tf_cuda_capture_end(gr));
	}
	return tf_cuda_graph_run(*gr);
}

int tf_gpu_forward_each(tf_gpu_seq *g, int64_t pos, const int32_t *ids, int64_t n, int flags, tf_logits_fn fn,
			void *ctx, const tf_pass_progress *pr)
{
	int64_t V = g->m->c.vocab;
	int last = flags & TF_FWD_LAST, prompt = (flags & TF_FWD_CHUNKED) && n > GPU_WINDOW;
	int64_t step = prompt ? g->rows : GPU_WINDOW;

	if (tf_config_check_ids(&g->m->c, ids, n) < 0)
		return -1;
	TRY(tf_gpu_reserve(g, pos + n));
	for (int64_t r0 = 0; r0 < n; r0 += step) {
		int rows = (int)(n - r0 < step ? n - r0 : step);
		int has_last = r0 + rows == n;
		/* which logits this pass hands over */
		int want = !fn ? 0 : !last ? 2 : has_last ? 1 : 0;

		TRY(gpu_stage(g, ids + r0, rows, pos + r0));
		if (!prompt) {
			TRY(window(g, rows, want));
			TRY(tf_cuda_sync());
			if (want && fn(ctx, want == 2 ? r0 : n - 1, want == 2 ? rows : 1, g->h_logits) < 0)
				return -1;
			continue;
		}
		TRY(layers(g, rows, 1));
		if (!want)
			TRY(tf_cuda_sync());    /* before the next slice's ids overwrite h_ids */
		if (want) {
			int64_t first = want == 2 ? 0 : rows - 1;
			for (int64_t b = first; b < rows; b += GPU_HEAD_BLOCK) {
				int hr = (int)(rows - b < GPU_HEAD_BLOCK ? rows - b : GPU_HEAD_BLOCK);
				TRY(gpu_head(g, b, hr, 1));
				TRY(tf_cuda_download_async(g->h_logits, g->logits, 4 * hr * V));
				TRY(tf_cuda_sync());
				if (fn(ctx, r0 + b, hr, g->h_logits) < 0)
					return -1;
			}
		}
		if (pr && pr->fn)
			pr->fn(pr->ctx, r0 + rows, n);
	}
	TRY(tf_cuda_sync());
	return 0;
}

/* the captured draw step a sampler takes (gpu_impl.h): 1 greedy, 2 plain
 * temperature, 0 top-k/top-p, as tf_sample tells them apart */
static int draw_kind(const tf_sampler *s, int V)
{
	if (s->temp <= 0)
		return 1;
	return tf_sample_cuts(s, V) ? 0 : 2;
}

/* hands the loop's ids to each as the device writes them into the ring (an
 * entry stays -1 until its step's draw): the host polls the ring until the
 * stream is idle, so a loop that ended early (an end id) ends the handing
 * too; the first failure of each stops the handing, and the loop's own end
 * is still waited for by the caller */
static int hand_out(tf_gpu_seq *g, int n, tf_id_fn each, void *ctx)
{
	volatile int32_t *ring = g->h_ring;
	int k = 0, idle = 0;

	while (k < n) {
		int32_t v = ring[k];
		if (v < 0) {
			if (idle)
				break;  /* the loop ended before step k */
			if ((idle = tf_cuda_idle()) < 0)
				return -1;
			continue;       /* one more look, now that the writes are in */
		}
		if (each(ctx, v) < 0)
			return -1;
		k++;
	}
	return 0;
}

/*
 * Up to n decode steps, each next id drawn on the device, in one launch of
 * a graph that loops on the device (tf_cuda_loop_begin): the body is a
 * step (layers, head, draw) whose draw feeds the next turn its id and
 * position, writes its id straight into host memory (g->ring) and ends the
 * loop after n steps or, with stop, after an end id. Only the ids come
 * back, never a row of logits, and the host waits once for the n steps
 * rather than once a step. A loop that ends
 * on an end id has taken exactly the steps up to it, as one step a launch
 * would: the recurrent state never goes past the last id drawn.
 */
int tf_gpu_steps_draw(tf_gpu_seq *g, int64_t pos, int32_t id, tf_sampler *s, int n, int stop, tf_id_fn each,
		      void *ctx, int32_t *out, int *got)
{
	const tf_config *c = &g->m->c;
	int V = c->vocab, kind = draw_kind(s, V);
	tf_cuda_graph **gr = &g->graph[0][kind];
	tf_sampler s0 = *s;

	*got = 0;
	if (n < 1 || n > TF_STEPS_MAX)
		return tf_err("%d decode steps in one loop (1 to %d)", n, TF_STEPS_MAX);
	TRY(tf_gpu_reserve(g, pos + n));
	*g->h_loop = (tf_loop_count){ .limit = n, .stop = !!stop };
	TRY(tf_cuda_upload_async(g->loop, g->h_loop, sizeof *g->loop));
	if (s->temp > 0) {
		/* each step's uniform, in the order tf_sample takes them; the
		 * draws read them from device memory, so a loop captured for
		 * other values replays with these */
		for (int k = 0; k < n; k++)
			g->h_args[1 + k] = tf_draw_args_of(s);
		g->h_args[0] = g->h_args[1];
		TRY(tf_cuda_upload_async(g->args, g->h_args, (1 + n) * sizeof *g->args));
	}
	/* each step's draw also leaves its id and the next position on the
	 * device as the next step's inputs, so a loop that takes the id drawn
	 * before copies nothing in */
	if (!(g->fed && g->fed_id == id && g->fed_pos == pos))
		TRY(gpu_stage(g, &id, 1, pos));
	g->fed = 0;     /* until this loop's draws are back */
	if (!*gr) {
		tf_draw_next feed = { .ids = g->ids, .pos = g->pos, .loop = g->loop, .ring = g->ring,
				      .args = kind == 1 ? NULL : g->args };

		feed.neos = c->neos;
		memcpy(feed.eos, c->eos, sizeof feed.eos);
		TRY(tf_cuda_loop_begin(&feed.cond));
		if (layers(g, 1, 0) < 0 || gpu_head(g, 0, 1, 0) < 0 ||
		    (kind == 1 ? tf_cuda_argmax(g->logits, 1, V, NULL, &feed)
		     : kind == 2 ? tf_cuda_sample(g->logits, 1, V, g->args, NULL, &feed)
		     : tf_cuda_sample_top(g->logits, 1, V, g->args, NULL, &feed)) < 0) {
			return capture_abort(1);
		}
		TRY(tf_cuda_loop_end(gr));
	}
	for (int k = 0; k < n; k++)
		g->h_ring[k] = -1;
	TRY(tf_cuda_graph_run(*gr));
	int handed = each ? hand_out(g, n, each, ctx) : 0;
	TRY(tf_cuda_sync());
	/* the steps the loop took: n, or up to the first end id, as its draws
	 * decided (the entries past its last step are still -1) */
	int k = 0;
	while (k < n && g->h_ring[k] >= 0)
		out[k] = g->h_ring[k], k++;
	if (!k)
		return tf_err("a loop of decode steps drew no id");
	if (s->temp > 0) {
		*s = s0;        /* the uniforms of the steps taken, no more */
		for (int j = 0; j < k; j++)
			tf_sample_uniform(s);
	}
	*got = k;
	g->fed = 1;
	g->fed_id = out[k - 1];
	g->fed_pos = pos + k;
	return handed;
}

static int sweep(tf_gpu_seq *g, int rows, uint64_t *bytes)
{
	const tf_model *m = g->m;
	const tf_gpu_model *d = m->gpu;
	uint64_t b = 0;

#define W(w) do { \
		tf_weight h_ = (w); \
		TRY(tf_cuda_gemv(&h_, g->x16, rows, g->logits, 0)); \
		b += tf_weight_bytes(&h_); \
	} while (0)
#define F(f) do { for (int k = 0; k < (f).n; k++) W((f).w[k]); } while (0)
	for (int i = 0; i < m->c.layers; i++) {
		const tf_gpu_layer *l = &d->layer[i];
		if (m->c.full[i]) {
			F(l->qkv); W(l->o_proj);
		} else {
			F(l->in); W(l->out_proj);
		}
		F(l->gu); W(l->down);
	}
#undef F
	W(d->head);
#undef W
	*bytes = b;
	return 0;
}

int tf_gpu_gemv_sweep(tf_gpu_seq *g, int rows, int reps, double *ms, uint64_t *bytes)
{
	tf_cuda_graph *gr = NULL;
	tf_cuda_timer *t = tf_cuda_timer_new();
	int rc = -1;

	if (!t)
		return -1;
	if (rows < 1 || rows > GPU_WINDOW) {
		tf_err("a sweep of %d rows (1 to %d)", rows, GPU_WINDOW);
		goto out;
	}
	if (tf_cuda_zero(g->x16, 5 * (uint64_t)rows * g->m->c.inter) < 0 || tf_cuda_capture_begin() < 0)
		goto out;
	if (sweep(g, rows, bytes) < 0) {
		tf_cuda_capture_end(&gr);
		goto out;
	}
	if (tf_cuda_capture_end(&gr) < 0 || tf_cuda_graph_run(gr) < 0 || tf_cuda_timer_start(t) < 0)
		goto out;
	for (int i = 0; i < reps; i++)
		if (tf_cuda_graph_run(gr) < 0)
			goto out;
	*ms = tf_cuda_timer_stop(t) / reps;
	rc = *ms > 0 ? 0 : -1;
out:
	tf_cuda_graph_free(gr);
	tf_cuda_timer_free(t);
	return rc;
}

#endif
