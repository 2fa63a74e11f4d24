/* gpu_model.c: the model's weights in one device arena, the executor the
 * model's sequences share (gpu_impl.h), and each sequence's device state
 * (caches, step buffers, captured steps) */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "gpu.h"

#ifndef TF_CUDA

#ifndef TF_NO_CUDA_WHY
#define TF_NO_CUDA_WHY "it was built without nvcc"
#endif

int tf_gpu_available(void) { return 0; }
int tf_gpu_attach(tf_model *m) { return tf_err("this build has no CUDA support: " TF_NO_CUDA_WHY); }
void tf_gpu_detach(tf_model *m) { }
uint64_t tf_gpu_weight_bytes(const tf_model *m) { return 0; }
uint64_t tf_gpu_free_bytes(void) { return 0; }
uint64_t tf_gpu_exec_bytes(const tf_model *m) { return 0; }
int tf_gpu_synth(tf_model *m, uint64_t seed) { return tf_err("this build has no CUDA support: " TF_NO_CUDA_WHY); }
tf_gpu_seq *tf_gpu_seq_new(const tf_model *m) { tf_err("built without CUDA"); return NULL; }
void tf_gpu_seq_reset(tf_gpu_seq *g) { }
int tf_gpu_seq_copy(tf_gpu_seq *dst, const tf_gpu_seq *src, int64_t pos) { return tf_err("built without CUDA"); }
void tf_gpu_seq_free(tf_gpu_seq *g) { }

#else

#include <math.h>

#include "fill.cuh"
#include "gemv.cuh"
#include "gpu_impl.h"
#include "sample.cuh"

int tf_gpu_available(void)
{
	return tf_cuda_count() > 0;
}

/* ---- weights ---- */

static uint64_t vec_bytes(int64_t n)
{
	return (4 * n + 255) & ~(uint64_t)255;
}

/* bytes of every weight and vector of the model, as the arena lays them out */
static uint64_t model_bytes(const tf_model *m)
{
	const tf_config *c = &m->c;
	uint64_t b = tf_cuda_weight_bytes(&m->embed) + vec_bytes(c->hidden);
	int64_t D = c->head_dim;

	if (m->head.data != m->embed.data)
		b += tf_cuda_weight_bytes(&m->head);
	if (c->rope.type != TF_ROPE_DEFAULT)
		b += vec_bytes(c->rot_dim / 2);
	for (int i = 0; i < c->layers; i++) {
		const tf_layer *l = &m->layer[i];
		b += 2 * vec_bytes(c->hidden);
		b += tf_cuda_weight_bytes(&l->gate) + tf_cuda_weight_bytes(&l->up) + tf_cuda_weight_bytes(&l->down);
		if (l->full)
			b += tf_cuda_weight_bytes(&l->q_proj) + tf_cuda_weight_bytes(&l->k_proj) +
			     tf_cuda_weight_bytes(&l->v_proj) + tf_cuda_weight_bytes(&l->o_proj) + 2 * vec_bytes(D);
		else
			b += tf_cuda_weight_bytes(&l->in_qkv) + tf_cuda_weight_bytes(&l->in_z) +
			     tf_cuda_weight_bytes(&l->in_b) + tf_cuda_weight_bytes(&l->in_a) +
			     tf_cuda_weight_bytes(&l->out_proj) + vec_bytes((int64_t)m->conv_dim * c->conv_k) +
			     2 * vec_bytes(c->lin_v_heads) + vec_bytes(c->lin_v_dim);
	}
	return b;
}

static int up_vec(tf_cuda_arena *a, const float *h, int64_t n, float **out)
{
	*out = tf_cuda_arena_take(a, 4 * n);
	return *out ? tf_cuda_upload(*out, h, 4 * n) : -1;
}

static int up_w(tf_cuda_arena *a, const tf_weight *h, tf_weight *d)
{
	return tf_cuda_weight_upload(a, h, d);
}

static int same_form(const tf_weight *a, const tf_weight *b)
{
	return a->fmt == b->fmt && a->cols == b->cols && a->bits == b->bits && a->group == b->group;
}

/* the parts of a fused product: stacked when they share a form (synth:
 * room taken and filled at random instead of copied) */
static int up_fused(tf_cuda_arena *a, const tf_weight *const *p, int np, tf_gpu_fused *f, uint64_t *seed);

static int up_fused_copy(tf_cuda_arena *a, const tf_weight *const *p, int np, tf_gpu_fused *f)
{
	return up_fused(a, p, np, f, NULL);
}

static int upload(tf_gpu_model *g, const tf_model *m)
{
	const tf_config *c = &m->c;
	tf_cuda_arena *a = &g->arena;
	int64_t D = c->head_dim;

	if (up_w(a, &m->embed, &g->embed) || up_vec(a, m->norm, c->hidden, &g->norm))
		return -1;
	// a scaled rope's table (yarn): plain rope keeps no table on the device
	if (c->rope.type != TF_ROPE_DEFAULT && up_vec(a, c->rope.inv, c->rot_dim / 2, &g->rope_inv))
		return -1;
	if (m->head.data == m->embed.data)
		g->head = g->embed;
	else if (up_w(a, &m->head, &g->head))
		return -1;
	for (int i = 0; i < c->layers; i++) {
		const tf_layer *l = &m->layer[i];
		tf_gpu_layer *d = &g->layer[i];
		const tf_weight *gu[2] = { &l->gate, &l->up };
		if (up_vec(a, l->in_norm, c->hidden, &d->in_norm) || up_vec(a, l->post_norm, c->hidden, &d->post_norm) ||
		    up_fused_copy(a, gu, 2, &d->gu) || up_w(a, &l->down, &d->down))
			return -1;
		if (l->full) {
			const tf_weight *qkv[3] = { &l->q_proj, &l->k_proj, &l->v_proj };
			if (up_fused_copy(a, qkv, 3, &d->qkv) || up_w(a, &l->o_proj, &d->o_proj) ||
			    up_vec(a, l->q_norm, D, &d->q_norm) || up_vec(a, l->k_norm, D, &d->k_norm))
				return -1;
		} else if (up_fused_copy(a, (const tf_weight *[]){ &l->in_qkv, &l->in_z, &l->in_b, &l->in_a }, 4, &d->in) ||
			   up_w(a, &l->out_proj, &d->out_proj) ||
			   up_vec(a, l->conv, (int64_t)m->conv_dim * c->conv_k, &d->conv) ||
			   up_vec(a, l->A_log, c->lin_v_heads, &d->A_log) ||
			   up_vec(a, l->dt_bias, c->lin_v_heads, &d->dt_bias) ||
			   up_vec(a, l->gnorm, c->lin_v_dim, &d->gnorm)) {
			return -1;
		}
	}
	return 0;
}

int tf_gpu_attach(tf_model *m)
{
	tf_gpu_model *g;

	if (m->gpu)
		return 0;
	if (tf_cuda_init() < 0)
		return -1;
	g = tf_calloc(1, sizeof *g);
	g->layer = tf_calloc(m->c.layers, sizeof *g->layer);
	g->bytes = model_bytes(m);
	if (tf_cuda_arena_open(&g->arena, g->bytes, "model") < 0 || upload(g, m) < 0) {
		tf_cuda_arena_close(&g->arena);
		free(g->layer);
		free(g);
		return -1;
	}
	m->gpu = g;
	return 0;
}

static void exec_free(tf_gpu_exec *e)
{
	if (!e)
		return;
	tf_cuda_sync();
	gpu_round_free(e->round);
	tf_cuda_free(e->x); tf_cuda_free(e->x16); tf_cuda_free(e->proj); tf_cuda_free(e->qkv);
	tf_cuda_free(e->o); tf_cuda_free(e->osq); tf_cuda_free(e->gu); tf_cuda_free(e->logits);
	tf_cuda_host_free(e->h_logits);
	tf_cuda_free(e->gdn_count);
	tf_cuda_attn_scratch_free(&e->attn);
	free(e);
}

void tf_gpu_detach(tf_model *m)
{
	tf_gpu_model *g = m->gpu;

	if (!g)
		return;
	exec_free(g->exec);
	tf_cuda_arena_close(&g->arena);
	free(g->layer);
	free(g);
	m->gpu = NULL;
}

uint64_t tf_gpu_exec_bytes(const tf_model *m)
{
	const tf_gpu_exec *e = m->gpu ? m->gpu->exec : NULL;

	return e ? e->bytes + gpu_round_bytes(e->round) : 0;
}

uint64_t tf_gpu_weight_bytes(const tf_model *m)
{
	return m->gpu ? m->gpu->bytes : 0;
}

uint64_t tf_gpu_free_bytes(void)
{
	/* cudaMemGetInfo's free bytes, on the device tf_cuda_init chose */
	return tf_cuda_init() < 0 ? 0 : tf_cuda_free_bytes();
}

/* ---- synthetic weights ---- */

/* weights of about unit-variance outputs: uniform codes times a scale of
 * about 2 / (2^B - 1) / sqrt(cols), centred by the bias */
static int synth_w(tf_cuda_arena *a, const tf_weight *shape, tf_weight *d, uint64_t *seed)
{
	uint64_t n = (uint64_t)shape->rows * shape->cols;
	float r = 1.0f / sqrtf((float)shape->cols);

	if (tf_cuda_weight_alloc(a, shape, d) < 0)
		return -1;
	switch (d->fmt) {
	case TF_BF16:
		return tf_cuda_fill_bf16((uint16_t *)d->data, n, 1.7f * r, ++*seed);
	case TF_AFFINE: {
		uint64_t g = n / d->group;
		float s = 2.0f / (float)((1 << d->bits) - 1) * r;
		return tf_cuda_fill_bits((void *)d->data, n * d->bits / 8, ++*seed) ||
		       tf_cuda_fill_bf16((uint16_t *)d->scales, g, s, ++*seed) ||
		       tf_cuda_fill_bf16((uint16_t *)d->biases, g, r, ++*seed) ? -1 : 0;
	}
	case TF_SIGN1:
		return tf_cuda_fill_bits((void *)d->data, n / 8, ++*seed) ||
		       tf_cuda_fill_bf16((uint16_t *)d->scales, n / d->group, r, ++*seed) ? -1 : 0;
	}
	return tf_err("synthetic weights of form %s are not supported", tf_fmt_name(d->fmt));
}

static int synth_v(tf_cuda_arena *a, int64_t n, float v, float **out)
{
	*out = tf_cuda_arena_take(a, 4 * n);
	return *out ? tf_cuda_fill_f32(*out, n, v) : -1;
}

static int up_fused(tf_cuda_arena *a, const tf_weight *const *p, int np, tf_gpu_fused *f, uint64_t *seed)
{
	int same = 1;

	memset(f, 0, sizeof *f);
	for (int k = 0; k < np; k++) {
		f->rows += p[k]->rows;
		same &= same_form(p[0], p[k]);
	}
	if (same) {
		f->n = 1;
		if (!seed)
			return tf_cuda_weight_upload_cat(a, p, np, &f->w[0]);
		tf_weight all = *p[0];
		all.rows = f->rows;
		return synth_w(a, &all, &f->w[0], seed);
	}
	f->n = np;
	for (int k = 0; k < np; k++)
		if ((seed ? synth_w(a, p[k], &f->w[k], seed) : tf_cuda_weight_upload(a, p[k], &f->w[k])) < 0)
			return -1;
	return 0;
}

int tf_gpu_synth(tf_model *m, uint64_t seed)
{
	const tf_config *c = &m->c;
	tf_gpu_model *g;
	tf_cuda_arena *a;
	int64_t D = c->head_dim;

	if (tf_cuda_init() < 0)
		return -1;
	g = tf_calloc(1, sizeof *g);
	g->layer = tf_calloc(c->layers, sizeof *g->layer);
	g->bytes = model_bytes(m);
	a = &g->arena;
	if (tf_cuda_arena_open(a, g->bytes, "model") < 0)
		goto fail;
	if (synth_w(a, &m->embed, &g->embed, &seed) || synth_v(a, c->hidden, 1, &g->norm))
		goto fail;
	if (c->rope.type != TF_ROPE_DEFAULT && up_vec(a, c->rope.inv, c->rot_dim / 2, &g->rope_inv))
		goto fail;
	if (m->head.data == m->embed.data)
		g->head = g->embed;
	else if (synth_w(a, &m->head, &g->head, &seed))
		goto fail;
	for (int i = 0; i < c->layers; i++) {
		const tf_layer *l = &m->layer[i];
		tf_gpu_layer *d = &g->layer[i];
		if (synth_v(a, c->hidden, 1, &d->in_norm) || synth_v(a, c->hidden, 1, &d->post_norm) ||
		    up_fused(a, (const tf_weight *[]){ &l->gate, &l->up }, 2, &d->gu, &seed) ||
		    synth_w(a, &l->down, &d->down, &seed))
			goto fail;
		if (l->full) {
			if (up_fused(a, (const tf_weight *[]){ &l->q_proj, &l->k_proj, &l->v_proj }, 3, &d->qkv, &seed) ||
			    synth_w(a, &l->o_proj, &d->o_proj, &seed) ||
			    synth_v(a, D, 1, &d->q_norm) || synth_v(a, D, 1, &d->k_norm))
				goto fail;
		} else if (up_fused(a, (const tf_weight *[]){ &l->in_qkv, &l->in_z, &l->in_b, &l->in_a }, 4, &d->in, &seed) ||
			   synth_w(a, &l->out_proj, &d->out_proj, &seed) ||
			   synth_v(a, (int64_t)m->conv_dim * c->conv_k, 0.25f, &d->conv) ||
			   synth_v(a, c->lin_v_heads, -1.0f, &d->A_log) ||
			   synth_v(a, c->lin_v_heads, 0.0f, &d->dt_bias) ||
			   synth_v(a, c->lin_v_dim, 1, &d->gnorm)) {
			goto fail;
		}
	}
	if (tf_cuda_sync() < 0)
		goto fail;
	m->gpu = g;
	return 0;
fail:
	tf_cuda_arena_close(a);
	free(g->layer);
	free(g);
	return -1;
}

/* ---- sequences ---- */

static int64_t kv_row(const tf_model *m)
{
	return (int64_t)m->c.kv_heads * m->c.head_dim;
}

static void drop_graphs(tf_gpu_seq *g)
{
	for (int n = 0; n <= GPU_WINDOW; n++)
		for (int k = 0; k < 3; k++) {
			tf_cuda_graph_free(g->graph[n][k]);
			g->graph[n][k] = NULL;
		}
}

/* the executor of m (gpu_impl.h): activations for a prompt slice */
static tf_gpu_exec *exec_of(const tf_model *m)
{
	const tf_config *c = &m->c;
	tf_gpu_exec *e = m->gpu->exec;
	int64_t rows = GPU_PROMPT_SLICE, H = c->hidden, I = c->inter, C = m->conv_dim;
	int64_t vd = (int64_t)c->lin_v_heads * c->lin_v_dim, qd = 2LL * c->heads * c->head_dim;
	int64_t ad = (int64_t)c->heads * c->head_dim, V = c->vocab, head = GPU_HEAD_BLOCK;
	int64_t counts = (int64_t)GPU_WINDOW * (c->lin_k_heads > 0 ? c->lin_k_heads : 1);
	/* one bf16 buffer serves every product's input: the widest one */
	int64_t w16 = H > ad ? H : ad;

	if (e)
		return e;
	e = tf_calloc(1, sizeof *e);
	e->rows = rows;
	if (vd > w16) w16 = vd;
	if (I > w16) w16 = I;
#define TAKE(p, n) (((p) = tf_cuda_alloc((n), "the step buffers")) ? (e->bytes += (n), 0) : -1)
	/* the widest fused mixer input: q, gate, k, v or in_proj_qkv, z, b, a */
	int64_t pw = qd + 2 * kv_row(m), pw2 = C + vd + 2LL * c->lin_v_heads;

	if (pw2 > pw)
		pw = pw2;
	if (TAKE(e->x, 4 * rows * H) || TAKE(e->x16, TF_SPLIT_BYTES(rows * w16)) || TAKE(e->proj, 4 * rows * pw) ||
	    TAKE(e->qkv, 4 * rows * C) || TAKE(e->o, 4 * rows * vd) || TAKE(e->osq, 4 * rows * (vd / 32)) ||
	    TAKE(e->gu, 8 * rows * I) || TAKE(e->logits, 4 * head * V) || TAKE(e->gdn_count, 4 * counts))
		goto fail;
#undef TAKE
	if (!(e->h_logits = tf_cuda_host_alloc(4 * head * V)) || tf_cuda_zero(e->gdn_count, 4 * counts) < 0 ||
	    tf_cuda_attn_scratch_init(&e->attn, c->heads, c->head_dim) < 0 ||
	    tf_cuda_draw_reserve(GPU_WINDOW, c->vocab) < 0)
		goto fail;
	e->bytes += sizeof(float) * GPU_WINDOW * c->heads * (TF_ATTN_SPLIT * (int64_t)(c->head_dim + 2) + 1);
	m->gpu->exec = e;
	return e;
fail:
	exec_free(e);
	return NULL;
}

/* a sequence's buffers of a pass: the executor's */
static int share_exec(tf_gpu_seq *g)
{
	tf_gpu_exec *e = exec_of(g->m);

	if (!e)
		return -1;
	g->rows = e->rows;
	g->x = e->x; g->x16 = e->x16; g->proj = e->proj; g->qkv = e->qkv; g->o = e->o; g->osq = e->osq;
	g->gu = e->gu; g->logits = e->logits; g->h_logits = e->h_logits;
	g->attn = e->attn;
	g->gdn_count = e->gdn_count;
	return 0;
}

/* a sequence's step buffers, and the executor's for its passes */
static int step_buffers(tf_gpu_seq *g)
{
	g->ids = tf_cuda_alloc(4 * GPU_PROMPT_SLICE, "the step buffers");
	g->pos = tf_cuda_alloc(8, "the step buffers");
	g->args = tf_cuda_alloc((1 + TF_STEPS_MAX) * sizeof *g->args, "the step buffers");
	g->loop = tf_cuda_alloc(sizeof *g->loop, "the step buffers");
	g->h_ids = tf_cuda_host_alloc(4 * GPU_PROMPT_SLICE);
	g->h_pos = tf_cuda_host_alloc(8);
	g->h_args = tf_cuda_host_alloc((1 + TF_STEPS_MAX) * sizeof *g->h_args);
	g->h_loop = tf_cuda_host_alloc(sizeof *g->h_loop);
	g->h_ring = tf_cuda_host_alloc(4 * TF_STEPS_MAX);
	/* the draws write their ids straight into host memory, so a step's
	 * graph ends with the draw's kernel, no copy after it */
	g->ring = g->h_ring ? (int32_t *)tf_cuda_host_mapped(g->h_ring) : NULL;
	if (!g->ids || !g->pos || !g->args || !g->loop || !g->ring || !g->h_ids || !g->h_pos || !g->h_args ||
	    !g->h_loop || !g->h_ring)
		return -1;
	return share_exec(g);
}

tf_gpu_seq *gpu_seq_bare(const tf_model *m)
{
	tf_gpu_seq *g = tf_calloc(1, sizeof *g);
	int L = m->c.layers;

	g->m = m;
	g->k = tf_calloc(L, sizeof *g->k);
	g->v = tf_calloc(L, sizeof *g->v);
	g->conv = tf_calloc(L, sizeof *g->conv);
	g->S = tf_calloc(L, sizeof *g->S);
	if (step_buffers(g) < 0) {
		tf_gpu_seq_free(g);
		return NULL;
	}
	return g;
}

tf_gpu_seq *tf_gpu_seq_new(const tf_model *m)
{
	const tf_config *c = &m->c;
	tf_gpu_seq *g = gpu_seq_bare(m);

	if (!g)
		return NULL;
	for (int i = 0; i < c->layers; i++)
		if (!c->full[i]) {
			g->conv[i] = tf_cuda_alloc(4 * (int64_t)(c->conv_k - 1) * m->conv_dim, "the recurrent state");
			g->S[i] = tf_cuda_alloc(4 * (int64_t)c->lin_v_heads * c->lin_k_dim * c->lin_v_dim,
						"the recurrent state");
			if (!g->conv[i] || !g->S[i]) {
				tf_gpu_seq_free(g);
				return NULL;
			}
		}
	tf_gpu_seq_reset(g);
	return g;
}

void tf_gpu_seq_reset(tf_gpu_seq *g)
{
	const tf_config *c = &g->m->c;

	g->tree_n = 0;
	for (int i = 0; i < c->layers; i++)
		if (!c->full[i]) {
			tf_cuda_zero(g->conv[i], 4 * (int64_t)(c->conv_k - 1) * g->m->conv_dim);
			tf_cuda_zero(g->S[i], 4 * (int64_t)c->lin_v_heads * c->lin_k_dim * c->lin_v_dim);
		}
}

int tf_gpu_reserve(tf_gpu_seq *g, int64_t need)
{
	const tf_model *m = g->m;
	int64_t cap = g->cap ? g->cap : 256, row = kv_row(m);

	if (need <= g->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	for (int i = 0; i < m->c.layers; i++)
		if (m->c.full[i]) {
			float *k = tf_cuda_alloc(4 * cap * row, "the KV cache"), *v = tf_cuda_alloc(4 * cap * row, "the KV cache");
			if (!k || !v || (g->cap && (tf_cuda_copy(k, g->k[i], 4 * g->cap * row) < 0 ||
						     tf_cuda_copy(v, g->v[i], 4 * g->cap * row) < 0))) {
				tf_cuda_free(k);
				tf_cuda_free(v);
				return -1;
			}
			tf_cuda_sync();
			tf_cuda_free(g->k[i]);
			tf_cuda_free(g->v[i]);
			g->k[i] = k;
			g->v[i] = v;
		}
	g->cap = cap;
	drop_graphs(g);         /* they point at the old caches */
	return 0;
}

int tf_gpu_seq_copy(tf_gpu_seq *dst, const tf_gpu_seq *src, int64_t pos)
{
	const tf_model *m = src->m;
	const tf_config *c = &m->c;

	dst->tree_n = 0;
	if (tf_gpu_reserve(dst, pos) < 0)
		return -1;
	for (int i = 0; i < c->layers; i++) {
		if (c->full[i]) {
			if (tf_cuda_copy(dst->k[i], src->k[i], 4 * pos * kv_row(m)) < 0 ||
			    tf_cuda_copy(dst->v[i], src->v[i], 4 * pos * kv_row(m)) < 0)
				return -1;
		} else if (tf_cuda_copy(dst->conv[i], src->conv[i], 4 * (int64_t)(c->conv_k - 1) * m->conv_dim) < 0 ||
			   tf_cuda_copy(dst->S[i], src->S[i],
					4 * (int64_t)c->lin_v_heads * c->lin_k_dim * c->lin_v_dim) < 0) {
			return -1;
		}
	}
	return tf_cuda_sync();
}

void tf_gpu_seq_free(tf_gpu_seq *g)
{
	if (!g)
		return;
	tf_cuda_sync();
	drop_graphs(g);
	gpu_tree_free(g);
	for (int i = 0; i < g->m->c.layers; i++) {
		tf_cuda_free(g->k[i]);
		tf_cuda_free(g->v[i]);
		tf_cuda_free(g->conv[i]);
		tf_cuda_free(g->S[i]);
	}
	free(g->k); free(g->v); free(g->conv); free(g->S);
	/* the activations are the executor's */
	tf_cuda_free(g->ids); tf_cuda_free(g->pos); tf_cuda_free(g->args); tf_cuda_free(g->loop);
	tf_cuda_host_free(g->h_ids); tf_cuda_host_free(g->h_pos); tf_cuda_host_free(g->h_args);
	tf_cuda_host_free(g->h_ring);
	tf_cuda_host_free(g->h_loop);
	free(g);
}

#endif
