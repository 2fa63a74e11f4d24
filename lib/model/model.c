/* model.c: finding and checking every weight of a Qwen3.5 text model */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "model.h"

/* a 1-D float tensor of n values as floats, plus `add` (1 for zero-centered norms) */
static float *load_vec(const tf_store *s, const char *name, int64_t n, float add)
{
	const tf_tensor *t = tf_store_find(s, name);
	int64_t count = 1;
	float *v;

	if (!t)
		return tf_err("missing tensor '%s'", name), NULL;
	for (int i = 0; i < t->ndim; i++)
		count *= t->shape[i];
	if (t->dtype != TF_F32 && t->dtype != TF_BF16 && t->dtype != TF_F16)
		return tf_err("tensor '%s' is %s, expected a float type", name, tf_dtype_str(t->dtype)), NULL;
	if (count != n)
		return tf_err("tensor '%s' has %lld values, expected %lld", name, (long long)count, (long long)n),
		       NULL;
	v = tf_malloc(n * sizeof *v);
	for (int64_t i = 0; i < n; i++)
		v[i] = tf_load_scalar(t->data, t->dtype, i) + add;
	return v;
}

static int weight(const tf_store *s, tf_weight *w, int64_t rows, int64_t cols, const char *pre, const char *name)
{
	char full[256];

	snprintf(full, sizeof full, "%s%s", pre, name);
	return tf_store_weight(s, full, rows, cols, w);
}

static int vec(const tf_store *s, float **out, int64_t n, float add, const char *pre, const char *name)
{
	char full[256];

	snprintf(full, sizeof full, "%s%s", pre, name);
	*out = load_vec(s, full, n, add);
	return *out ? 0 : -1;
}

/* HF files keep conv1d as [C, 1, K] and zero-centered norms; MLX files keep
 * [C, K, 1] and norms with the 1 added (mlx-lm's TextModel.sanitize): the
 * conv's last dimension
 * tells them apart. A model without DeltaNet layers counts as MLX when it
 * is quantized. */
static int norm_offset(const tf_model *m)
{
	char name[64];

	for (int i = 0; i < m->c.layers; i++)
		if (!m->c.full[i]) {
			const tf_tensor *t;
			snprintf(name, sizeof name, "layers.%d.linear_attn.conv1d.weight", i);
			t = tf_store_find(m->store, name);
			return !t || t->ndim < 3 || t->shape[t->ndim - 1] != 1;
		}
	return m->embed.fmt != TF_AFFINE;
}

static int load_conv(const tf_model *m, const char *pre, float **out)
{
	char name[256];
	const tf_tensor *t;
	int64_t C = m->conv_dim, K = m->c.conv_k;

	snprintf(name, sizeof name, "%slinear_attn.conv1d.weight", pre);
	t = tf_store_find(m->store, name);
	if (!t)
		return tf_err("missing tensor '%s'", name);
	/* [C, 1, K], [C, K, 1] and [C, K] all flatten to c*K + k */
	if (!((t->ndim == 3 && t->shape[0] == C && ((t->shape[1] == 1 && t->shape[2] == K) ||
						    (t->shape[1] == K && t->shape[2] == 1))) ||
	      (t->ndim == 2 && t->shape[0] == C && t->shape[1] == K)))
		return tf_err("tensor '%s' does not have shape [%lld, 1, %lld]", name, (long long)C, (long long)K);
	*out = load_vec(m->store, name, C * K, 0);
	return *out ? 0 : -1;
}

/* A = -exp(A_log) from a checkpoint's A_log, or A as a GGUF stores it
 * (ssm_a): the CPU multiplies by A, so a GGUF's values are used as they
 * are; the GPU kernels take A_log and get log(-A) */
static int load_decay(const tf_model *m, const char *pre, tf_layer *l)
{
	char name[256];
	int64_t Hv = m->c.lin_v_heads;

	snprintf(name, sizeof name, "%slinear_attn.A", pre);
	if (tf_store_find(m->store, name)) {
		if (!(l->A = load_vec(m->store, name, Hv, 0)))
			return -1;
		l->A_log = tf_malloc(Hv * sizeof *l->A_log);
		for (int64_t h = 0; h < Hv; h++)
			l->A_log[h] = logf(-l->A[h]);
		return 0;
	}
	if (vec(m->store, &l->A_log, Hv, 0, pre, "linear_attn.A_log") < 0)
		return -1;
	l->A = tf_malloc(Hv * sizeof *l->A);
	for (int64_t h = 0; h < Hv; h++)
		l->A[h] = -expf(l->A_log[h]);
	return 0;
}

int tf_layer_load(const tf_model *m, tf_layer *l, const char *pre, int full)
{
	const tf_config *c = &m->c;
	const tf_store *s = m->store;
	float one = m->norm_add;
	int64_t H = c->hidden, D = c->head_dim, kd = (int64_t)c->lin_k_heads * c->lin_k_dim,
		vd = (int64_t)c->lin_v_heads * c->lin_v_dim;

	l->full = full;
	if (vec(s, &l->in_norm, H, one, pre, "input_layernorm.weight") ||
	    vec(s, &l->post_norm, H, one, pre, "post_attention_layernorm.weight") ||
	    weight(s, &l->gate, c->inter, H, pre, "mlp.gate_proj") ||
	    weight(s, &l->up, c->inter, H, pre, "mlp.up_proj") ||
	    weight(s, &l->down, H, c->inter, pre, "mlp.down_proj"))
		return -1;
	if (l->full)
		return weight(s, &l->q_proj, 2 * c->heads * D, H, pre, "self_attn.q_proj") ||
		       weight(s, &l->k_proj, c->kv_heads * D, H, pre, "self_attn.k_proj") ||
		       weight(s, &l->v_proj, c->kv_heads * D, H, pre, "self_attn.v_proj") ||
		       weight(s, &l->o_proj, H, c->heads * D, pre, "self_attn.o_proj") ||
		       vec(s, &l->q_norm, D, one, pre, "self_attn.q_norm.weight") ||
		       vec(s, &l->k_norm, D, one, pre, "self_attn.k_norm.weight") ? -1 : 0;
	return weight(s, &l->in_qkv, 2 * kd + vd, H, pre, "linear_attn.in_proj_qkv") ||
	       weight(s, &l->in_z, vd, H, pre, "linear_attn.in_proj_z") ||
	       weight(s, &l->in_b, c->lin_v_heads, H, pre, "linear_attn.in_proj_b") ||
	       weight(s, &l->in_a, c->lin_v_heads, H, pre, "linear_attn.in_proj_a") ||
	       weight(s, &l->out_proj, H, vd, pre, "linear_attn.out_proj") ||
	       load_conv(m, pre, &l->conv) ||
	       load_decay(m, pre, l) ||
	       vec(s, &l->dt_bias, c->lin_v_heads, 0, pre, "linear_attn.dt_bias") ||
	       vec(s, &l->gnorm, c->lin_v_dim, 0, pre, "linear_attn.norm.weight") ? -1 : 0;
}

void tf_layer_free(tf_layer *l)
{
	free(l->in_norm); free(l->post_norm); free(l->q_norm); free(l->k_norm);
	free(l->conv); free(l->A); free(l->A_log); free(l->dt_bias); free(l->gnorm);
}

float *tf_model_vec(const tf_model *m, const char *name, int64_t n, float add)
{
	return load_vec(m->store, name, n, add);
}

tf_model *tf_model_open(const char *path)
{
	tf_model *m = tf_calloc(1, sizeof *m);

	m->store = tf_store_open(path);
	if (!m->store)
		goto fail;
	if (tf_config_parse(m->store->config, m->store->gen_config, &m->c) < 0)
		goto fail;
	m->conv_dim = 2 * m->c.lin_k_heads * m->c.lin_k_dim + m->c.lin_v_heads * m->c.lin_v_dim;
	if (tf_store_weight(m->store, "embed_tokens", m->c.vocab, m->c.hidden, &m->embed) < 0)
		goto fail;
	if (tf_store_has_weight(m->store, "lm_head")) {
		if (tf_store_weight(m->store, "lm_head", m->c.vocab, m->c.hidden, &m->head) < 0)
			goto fail;
	} else {
		m->head = m->embed;     /* tied: no lm_head tensor to read */
	}
	m->norm_add = norm_offset(m) ? 1.0f : 0.0f;
	m->norm = load_vec(m->store, "norm.weight", m->c.hidden, m->norm_add);
	if (!m->norm)
		goto fail;
	m->layer = tf_calloc(m->c.layers, sizeof *m->layer);
	for (int i = 0; i < m->c.layers; i++) {
		char pre[32];
		snprintf(pre, sizeof pre, "layers.%d.", i);
		if (tf_layer_load(m, &m->layer[i], pre, m->c.full[i]) < 0)
			goto fail;
	}
	return m;
fail:
	tf_errpre("cannot load model '%s'", path);
	tf_model_close(m);
	return NULL;
}

void tf_model_close(tf_model *m)
{
	if (!m)
		return;
	for (int i = 0; m->layer && i < m->c.layers; i++)
		tf_layer_free(&m->layer[i]);
	free(m->layer);
	free(m->norm);
	tf_config_free(&m->c);
	tf_store_close(m->store);
	free(m);
}
