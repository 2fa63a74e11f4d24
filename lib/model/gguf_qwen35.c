/*
 * gguf_qwen35.c: a GGUF of llama.cpp's qwen35 architecture as a store of
 * our tensors.
 *
 * llama.cpp's converter (convert_hf_to_gguf.py, Qwen3NextModel and
 * _LinearAttentionVReorderBase) renames every tensor and changes some:
 *   - every RMSNorm weight but the DeltaNet's gated norm gets its 1 added,
 *     as MLX files have it, so the store's conv1d says MLX ([C, K, 1]) and
 *     the model adds nothing;
 *   - A_log is stored as ssm_a = -exp(A_log): it becomes our
 *     linear_attn.A, which the model takes as it is;
 *   - conv1d is squeezed to [C, K] (ne = [K, C]);
 *   - where there are more value heads than key heads, the value heads are
 *     reordered from grouped by key head (k r + j) to tiled (j Hk + k) in
 *     attn_qkv's v rows, attn_gate, ssm_alpha, ssm_beta, ssm_a, ssm_dt,
 *     conv1d's v channels and ssm_out's columns: undone here.
 * The config comes from the qwen35.* metadata, written out as the
 * config.json a checkpoint folder would hold, so a bundle packed from a
 * GGUF carries it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "gguf.h"
#include "gguf_blocks.h"
#include "gguf_qwen35.h"
#include "store.h"

enum { K_MAT, K_VEC, K_CONV };  /* a matrix, a vector of floats, the conv taps */
enum { R_NONE, R_QKV, R_ROWS, R_ROWS1, R_COLS };        /* which V-head reordering */

static const struct { const char *gguf, *ours; int kind, reorder; } names[] = {
	{ "attn_norm.weight", "input_layernorm.weight", K_VEC, R_NONE },
	{ "post_attention_norm.weight", "post_attention_layernorm.weight", K_VEC, R_NONE },
	{ "attn_q.weight", "self_attn.q_proj.weight", K_MAT, R_NONE },
	{ "attn_k.weight", "self_attn.k_proj.weight", K_MAT, R_NONE },
	{ "attn_v.weight", "self_attn.v_proj.weight", K_MAT, R_NONE },
	{ "attn_output.weight", "self_attn.o_proj.weight", K_MAT, R_NONE },
	{ "attn_q_norm.weight", "self_attn.q_norm.weight", K_VEC, R_NONE },
	{ "attn_k_norm.weight", "self_attn.k_norm.weight", K_VEC, R_NONE },
	{ "attn_qkv.weight", "linear_attn.in_proj_qkv.weight", K_MAT, R_QKV },
	{ "attn_gate.weight", "linear_attn.in_proj_z.weight", K_MAT, R_ROWS },
	{ "ssm_beta.weight", "linear_attn.in_proj_b.weight", K_MAT, R_ROWS1 },
	{ "ssm_alpha.weight", "linear_attn.in_proj_a.weight", K_MAT, R_ROWS1 },
	{ "ssm_conv1d.weight", "linear_attn.conv1d.weight", K_CONV, R_QKV },
	{ "ssm_a", "linear_attn.A", K_VEC, R_ROWS1 },
	{ "ssm_dt.bias", "linear_attn.dt_bias", K_VEC, R_ROWS1 },
	{ "ssm_norm.weight", "linear_attn.norm.weight", K_VEC, R_NONE },
	{ "ssm_out.weight", "linear_attn.out_proj.weight", K_MAT, R_COLS },
	{ "ffn_gate.weight", "mlp.gate_proj.weight", K_MAT, R_NONE },
	{ "ffn_up.weight", "mlp.up_proj.weight", K_MAT, R_NONE },
	{ "ffn_down.weight", "mlp.down_proj.weight", K_MAT, R_NONE },
};

static const struct { const char *gguf, *ours; int kind; } globals[] = {
	{ "token_embd.weight", "embed_tokens.weight", K_MAT },
	{ "output.weight", "lm_head.weight", K_MAT },
	{ "output_norm.weight", "norm.weight", K_VEC },
};

typedef struct {
	int64_t L, Hk, Hv, Dk, Dv;
} geo;

static void *own(tf_store *s, void *p)
{
	s->owned = tf_realloc(s->owned, (s->nowned + 1) * sizeof *s->owned);
	s->owned[s->nowned++] = p;
	return p;
}

static void add_tensor(tf_store *s, const char *name, const char *src, int dtype, int ndim, const int64_t *shape,
		       const void *data, uint64_t bytes)
{
	tf_tensor *t;

	s->t = tf_realloc(s->t, (s->nt + 1) * sizeof *s->t);
	t = &s->t[s->nt++];
	memset(t, 0, sizeof *t);
	t->name = tf_strdup(name);
	t->src = tf_strdup(src);
	t->dtype = dtype;
	t->ndim = ndim;
	memcpy(t->shape, shape, ndim * sizeof *shape);
	t->data = data;
	t->bytes = bytes;
}

/* our index of value head g (= k r + j) element d -> the stored one */
static int64_t vidx(const geo *g, int64_t i, int64_t hd)
{
	int64_t r = g->Hv / g->Hk, h = i / hd, k = h / r, j = h % r;
	return (j * g->Hk + k) * hd + i % hd;
}

/* the stored index of each of our n rows (or channels) under reordering
 * ro; NULL when there is none */
static int64_t *row_map(const geo *g, int ro, int64_t n)
{
	int64_t *m, off = 0, hd;

	if (g->Hk <= 0 || g->Hv == g->Hk || ro == R_NONE || ro == R_COLS)
		return NULL;
	hd = ro == R_ROWS1 ? 1 : g->Dv;
	if (ro == R_QKV)
		off = 2 * g->Hk * g->Dk;
	if (n != off + g->Hv * hd)
		return NULL;    /* the shape check names it */
	m = tf_malloc(n * sizeof *m);
	for (int64_t i = 0; i < n; i++)
		m[i] = i < off ? i : off + vidx(g, i - off, hd);
	return m;
}

static int put_matrix(tf_store *s, const geo *g, const tf_gguf_tensor *t, const char *name, int ro)
{
	tf_gguf_map map = { 0 };
	int64_t *rows = NULL, *cols = NULL;
	tf_weight w;
	void *owned;
	int rc;

	if (t->ndim != 2)
		return tf_err("tensor '%s' has %d dimensions, expected 2", t->name, t->ndim);
	map.row = rows = row_map(g, ro, t->ne[1]);
	if (ro == R_COLS && g->Hk > 0 && g->Hv != g->Hk && t->ne[0] == g->Hv * g->Dv) {
		cols = tf_malloc(g->Hv * sizeof *cols);
		for (int64_t h = 0; h < g->Hv; h++)
			cols[h] = vidx(g, h, 1);
		map.col = cols;
		map.colblk = g->Dv;
	}
	rc = tf_gguf_weight(t, &map, &w, &owned);
	free(rows);
	free(cols);
	if (rc < 0)
		return -1;
	if (owned)
		own(s, owned);
	if (w.fmt == TF_F32 || w.fmt == TF_BF16 || w.fmt == TF_F16) {
		int64_t shape[2] = { w.rows, w.cols };
		add_tensor(s, name, t->name, w.fmt, 2, shape, w.data, tf_weight_bytes(&w));
		return 0;
	}
	/* codes, scales and biases as tensors too, as a bundle's weights are,
	 * so tf-pack writes them as they are */
	size_t n = strlen(name) - 7;        /* without ".weight" */
	char part[600];
	int64_t cshape[2] = { w.rows, w.fmt == TF_AFFINE ? w.cols * w.bits / 32 : w.cols / 8 };
	int64_t sshape[2] = { w.rows, w.cols / w.group };
	uint64_t sb = (uint64_t)sshape[0] * sshape[1] * tf_dtype_bytes(w.sdtype);
	tf_named_weight *nw;

	add_tensor(s, name, t->name, w.fmt == TF_AFFINE ? TF_U32 : TF_U8, 2, cshape, w.data,
		   (uint64_t)w.rows * w.cols * w.bits / 8);
	snprintf(part, sizeof part, "%.*s.scales", (int)n, name);
	add_tensor(s, part, t->name, w.sdtype, 2, sshape, w.scales, sb);
	if (w.biases) {
		snprintf(part, sizeof part, "%.*s.biases", (int)n, name);
		add_tensor(s, part, t->name, w.sdtype, 2, sshape, w.biases, sb);
	}
	s->wt = tf_realloc(s->wt, (s->nw + 1) * sizeof *s->wt);
	nw = &s->wt[s->nw++];
	nw->name = tf_malloc(n + 1);
	memcpy(nw->name, name, n);
	nw->name[n] = 0;
	nw->w = w;
	return 0;
}

static int put_vector(tf_store *s, const geo *g, const tf_gguf_tensor *t, const char *name, int ro)
{
	int64_t n = t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3], *m = row_map(g, ro, n);
	int dt = tf_ggml_dtype(t->type);
	float *v, *u;

	if (dt && !m) {
		add_tensor(s, name, t->name, dt, 1, &n, t->data, t->bytes);
		return 0;
	}
	v = tf_malloc(n * sizeof *v);
	if (tf_gguf_floats(t, v, n) < 0) {
		free(v);
		free(m);
		return -1;
	}
	u = own(s, tf_malloc(n * sizeof *u));
	for (int64_t i = 0; i < n; i++)
		u[i] = v[m ? m[i] : i];
	free(v);
	free(m);
	add_tensor(s, name, t->name, TF_F32, 1, &n, u, n * sizeof *u);
	return 0;
}

/* ne = [K, C]: channel c's taps are c K + k, as in [C, K, 1] */
static int put_conv(tf_store *s, const geo *g, const tf_gguf_tensor *t, const char *name)
{
	int64_t K = t->ne[0], C = t->ne[1], *m;
	float *v, *u;

	if (t->ndim != 2 && !(t->ndim == 3 && t->ne[1] == 1))
		return tf_err("tensor '%s' has %d dimensions, expected 2", t->name, t->ndim);
	if (t->ndim == 3)
		C = t->ne[2];
	m = row_map(g, R_QKV, C);
	v = tf_malloc(K * C * sizeof *v);
	if (tf_gguf_floats(t, v, K * C) < 0) {
		free(v);
		free(m);
		return -1;
	}
	u = own(s, tf_malloc(K * C * sizeof *u));
	for (int64_t c = 0; c < C; c++)
		memcpy(u + c * K, v + (m ? m[c] : c) * K, K * sizeof *u);
	free(v);
	free(m);
	add_tensor(s, name, t->name, TF_F32, 3, (int64_t[]){ C, K, 1 }, u, K * C * sizeof *u);
	return 0;
}

/* an integer key as a JSON field; absent: not set, or def when def >= 0 */
static int field(const tf_gguf *g, json_t *cfg, const char *arch, const char *key, const char *as, int64_t def,
		 int64_t *out)
{
	char k[160];
	int64_t v = def;
	int r;

	snprintf(k, sizeof k, "%s.%s", arch, key);
	if ((r = tf_gguf_int(g, k, &v)) < 0)
		return -1;
	if (!r && def < 0)
		return tf_err("'%s': missing metadata '%s'", g->path, k);
	if (v < 0 || v > (1 << 30))
		return tf_err("'%s': metadata '%s' is %lld, out of range", g->path, k, (long long)v);
	if (as)
		json_object_set_new(cfg, as, json_integer(v));
	if (out)
		*out = v;
	return 0;
}

static json_t *make_config(const tf_gguf *g, const char *arch, geo *ge)
{
	json_t *cfg = json_object(), *lt = json_array(), *rp = json_object();
	int64_t blocks, nextn = 0, heads, hd, rot = -1, inner, interval, embd, eos;
	double theta = 10000, eps = 1e-6;
	const tf_gguf_tensor *emb = tf_gguf_tensor_find(g, "token_embd.weight");
	char k[160];

	json_object_set_new(cfg, "architectures", json_pack("[s]", "Qwen3_5ForCausalLM"));
	json_object_set_new(cfg, "model_type", json_string("qwen3_5_text"));
	if (field(g, cfg, arch, "block_count", NULL, -1, &blocks) < 0 ||
	    field(g, cfg, arch, "nextn_predict_layers", NULL, 0, &nextn) < 0 ||
	    field(g, cfg, arch, "embedding_length", "hidden_size", -1, &embd) < 0 ||
	    field(g, cfg, arch, "feed_forward_length", "intermediate_size", -1, NULL) < 0 ||
	    field(g, cfg, arch, "attention.head_count", "num_attention_heads", -1, &heads) < 0 ||
	    field(g, cfg, arch, "attention.head_count_kv", "num_key_value_heads", -1, NULL) < 0 ||
	    field(g, cfg, arch, "attention.key_length", "head_dim", heads ? embd / heads : 0, &hd) < 0 ||
	    field(g, cfg, arch, "rope.dimension_count", NULL, hd / 4, &rot) < 0 ||
	    field(g, cfg, arch, "ssm.conv_kernel", "linear_conv_kernel_dim", 4, NULL) < 0 ||
	    field(g, cfg, arch, "ssm.state_size", "linear_key_head_dim", 0, &ge->Dk) < 0 ||
	    field(g, cfg, arch, "ssm.group_count", "linear_num_key_heads", 0, &ge->Hk) < 0 ||
	    field(g, cfg, arch, "ssm.time_step_rank", "linear_num_value_heads", 0, &ge->Hv) < 0 ||
	    field(g, cfg, arch, "ssm.inner_size", NULL, 0, &inner) < 0 ||
	    field(g, cfg, arch, "full_attention_interval", NULL, 4, &interval) < 0)
		goto fail;
	if (nextn > blocks) {
		tf_err("'%s': %s.nextn_predict_layers %lld is more than the %lld blocks", g->path, arch,
		       (long long)nextn, (long long)blocks);
		goto fail;
	}
	ge->L = blocks - nextn;
	/* far past any model of the family, and a bound on the walk below */
	if (ge->L > 4096) {
		tf_err("'%s': %s.block_count %lld is more than 4096", g->path, arch, (long long)blocks);
		goto fail;
	}
	ge->Dv = ge->Hv ? inner / ge->Hv : 0;
	if (ge->Hv && inner % ge->Hv) {
		tf_err("'%s': %s.ssm.inner_size %lld is not a multiple of the %lld value heads", g->path, arch,
		       (long long)inner, (long long)ge->Hv);
		goto fail;
	}
	if (ge->Hk && ge->Hv % ge->Hk) {
		tf_err("'%s': %lld value heads are not a multiple of the %lld key heads", g->path,
		       (long long)ge->Hv, (long long)ge->Hk);
		goto fail;
	}
	json_object_set_new(cfg, "num_hidden_layers", json_integer(ge->L));
	json_object_set_new(cfg, "linear_value_head_dim", json_integer(ge->Dv));
	snprintf(k, sizeof k, "%s.rope.freq_base", arch);
	if (tf_gguf_float(g, k, &theta) < 0)
		goto fail;
	snprintf(k, sizeof k, "%s.attention.layer_norm_rms_epsilon", arch);
	if (tf_gguf_float(g, k, &eps) < 0)
		goto fail;
	json_object_set_new(rp, "rope_theta", json_real(theta));
	json_object_set_new(rp, "partial_rotary_factor", json_real(hd ? (double)rot / hd : 0));
	json_object_set_new(rp, "rope_type", json_string("default"));
	json_object_set_new(cfg, "rope_parameters", rp);
	rp = NULL;
	json_object_set_new(cfg, "rms_norm_eps", json_real(eps));
	if (!emb || emb->ndim != 2) {
		tf_err("'%s': no 2-D tensor 'token_embd.weight'", g->path);
		goto fail;
	}
	json_object_set_new(cfg, "vocab_size", json_integer(emb->ne[1]));
	json_object_set_new(cfg, "tie_word_embeddings", json_boolean(!tf_gguf_tensor_find(g, "output.weight")));
	/* a block with attention tensors is a full-attention layer */
	for (int64_t i = 0; i < ge->L; i++) {
		char n[64];
		snprintf(n, sizeof n, "blk.%lld.attn_q.weight", (long long)i);
		int full = tf_gguf_tensor_find(g, n) ? 1 : 0;
		snprintf(n, sizeof n, "blk.%lld.ssm_a", (long long)i);
		if (!full && !tf_gguf_tensor_find(g, n))
			full = interval && (i + 1) % interval == 0;
		json_array_append_new(lt, json_string(full ? "full_attention" : "linear_attention"));
	}
	json_object_set_new(cfg, "layer_types", lt);
	lt = NULL;
	eos = -1;
	if (tf_gguf_int(g, "tokenizer.ggml.eos_token_id", &eos) < 0)
		goto fail;
	if (eos >= 0) {
		json_t *ids = json_pack("[I]", (json_int_t)eos);
		int64_t eot = -1;
		if (tf_gguf_int(g, "tokenizer.ggml.eot_token_id", &eot) < 0) {
			json_decref(ids);
			goto fail;
		}
		if (eot >= 0 && eot != eos)
			json_array_append_new(ids, json_integer(eot));
		json_object_set_new(cfg, "eos_token_id", ids);
	}
	return cfg;
fail:
	json_decref(rp);
	json_decref(lt);
	json_decref(cfg);
	return NULL;
}

/* what our name is for a stored one; NULL to skip it (the MTP blocks
 * past the model's layers), "" when it has no mapping */
static const char *map_name(const geo *ge, const char *src, char *buf, size_t cap, int *kind, int *ro)
{
	long long b;
	int at = 0;

	*ro = R_NONE;
	for (size_t i = 0; i < sizeof globals / sizeof *globals; i++)
		if (!strcmp(src, globals[i].gguf)) {
			*kind = globals[i].kind;
			return globals[i].ours;
		}
	if (sscanf(src, "blk.%lld.%n", &b, &at) != 1 || !at || b < 0 || strncmp(src, "blk.", 4))
		return "";
	if (b >= ge->L)
		return NULL;
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (!strcmp(src + at, names[i].gguf)) {
			*kind = names[i].kind;
			*ro = names[i].reorder;
			snprintf(buf, cap, "layers.%lld.%s", b, names[i].ours);
			return buf;
		}
	return "";
}

static int cmp_tensor(const void *a, const void *b)
{
	return strcmp(((const tf_tensor *)a)->name, ((const tf_tensor *)b)->name);
}

static int cmp_weight(const void *a, const void *b)
{
	return strcmp(((const tf_named_weight *)a)->name, ((const tf_named_weight *)b)->name);
}

int tf_gguf_store_load(tf_store *s, const char *path)
{
	tf_gguf *g = tf_gguf_open(path);
	char *arch = NULL, buf[256];
	int bad, rc = -1;
	geo ge = { 0 };

	if (!g)
		return -1;
	arch = tf_gguf_string(g, "general.architecture", &bad);
	if (!arch) {
		if (!bad)
			tf_err("'%s': no general.architecture", path);
		goto out;
	}
	if (strcmp(arch, "qwen35")) {
		tf_err("'%s': architecture '%s' is not read here (qwen35 is)", path, arch);
		goto out;
	}
	s->config = make_config(g, arch, &ge);
	if (!s->config)
		goto out;
	s->tokenizer_json = tf_gguf_tokenizer_json(g);
	if (!s->tokenizer_json && tf_gguf_find(g, "tokenizer.ggml.tokens"))
		goto out;
	for (int64_t i = 0; i < g->nt; i++) {
		const tf_gguf_tensor *t = &g->t[i];
		int kind = K_VEC, ro = R_NONE, r;
		const char *name = map_name(&ge, t->name, buf, sizeof buf, &kind, &ro);

		if (!name)
			continue;
		if (!*name) {
			tf_err("'%s': tensor '%s' has no place in a qwen35 model", path, t->name);
			goto out;
		}
		r = kind == K_MAT ? put_matrix(s, &ge, t, name, ro) :
		    kind == K_CONV ? put_conv(s, &ge, t, name) : put_vector(s, &ge, t, name, ro);
		if (r < 0) {
			tf_errpre("'%s'", path);
			goto out;
		}
	}
	if (s->nt)
		qsort(s->t, s->nt, sizeof *s->t, cmp_tensor);
	if (s->nw)
		qsort(s->wt, s->nw, sizeof *s->wt, cmp_weight);
	/* the mappings hold the tensor data: the store keeps them */
	s->maps = tf_realloc(s->maps, (s->nmaps + g->nfiles) * sizeof *s->maps);
	for (int i = 0; i < g->nfiles; i++)
		s->maps[s->nmaps++] = g->maps[i];
	g->nfiles = 0;
	rc = 0;
out:
	free(arch);
	tf_gguf_close(g);
	return rc;
}

int tf_gguf_show(const char *path, FILE *out)
{
	tf_gguf *g = tf_gguf_open(path);
	tf_store *s;
	char buf[256];
	int bad;
	char *arch;
	geo ge = { 0 };

	if (!g)
		return -1;
	arch = tf_gguf_string(g, "general.architecture", &bad);
	if (arch && !strcmp(arch, "qwen35")) {
		json_t *c = make_config(g, arch, &ge);
		json_decref(c);
	}
	/* the forms come from loading it as tf-run would; a file that will
	 * not load is still listed, its error after the table */
	s = tf_store_open(path);
	fprintf(out, "%-28s %-7s %-14s %-44s %s\n", "gguf tensor", "type", "shape", "tensor", "form");
	for (int64_t i = 0; i < g->nt; i++) {
		const tf_gguf_tensor *t = &g->t[i];
		char shape[64], form[64] = "-";
		int kind, ro;
		const char *name = map_name(&ge, t->name, buf, sizeof buf, &kind, &ro);
		int n = 0;

		/* rows first, as our shapes are written */
		for (int d = t->ndim - 1; d >= 0; d--)
			n += snprintf(shape + n, sizeof shape - n, "%s%lld", d == t->ndim - 1 ? "" : "x",
				      (long long)t->ne[d]);
		if (!name)
			name = "(skipped: past the layers)";
		else if (!*name)
			name = "(no mapping)";
		else if (s) {
			const tf_named_weight *w = NULL;
			size_t len = strlen(name);
			for (int k = 0; k < s->nw; k++)
				if (len > 7 && strlen(s->wt[k].name) == len - 7 && !strncmp(s->wt[k].name, name, len - 7))
					w = &s->wt[k];
			if (w && w->w.fmt == TF_AFFINE)
				snprintf(form, sizeof form, "affine%d g%d, %s scales", w->w.bits, w->w.group,
					 w->w.sdtype == TF_F32 ? "f32" : "f16");
			else if (w)
				snprintf(form, sizeof form, "sign1 g128");
			else {
				const tf_tensor *ft = tf_store_find(s, name);
				if (ft)
					snprintf(form, sizeof form, "%s", tf_fmt_name(ft->dtype));
			}
		}
		fprintf(out, "%-28s %-7s %-14s %-44s %s\n", t->name, tf_ggml_type_name(t->type), shape, name, form);
	}
	fprintf(out, "# %lld tensors in %d file%s\n", (long long)g->nt, g->nfiles, g->nfiles == 1 ? "" : "s");
	free(arch);
	tf_gguf_close(g);
	if (!s)
		return -1;
	tf_store_close(s);
	return 0;
}
