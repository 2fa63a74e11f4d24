/* synth.c: random models of a given geometry, written at disk speed */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "model/bundle.h"
#include "model/config.h"
#include "model/geometry.h"
#include "model/weight.h"
#include "quant.h"
#include "synth.h"

static void add(tf_synth_tensor **t, int *n, int kind, int ndim, int64_t d0, int64_t d1, int64_t d2,
		const char *fmt, int layer)
{
	tf_synth_tensor *x;

	*t = tf_realloc(*t, (*n + 1) * sizeof **t);
	x = &(*t)[(*n)++];
	memset(x, 0, sizeof *x);
	snprintf(x->name, sizeof x->name, fmt, layer);
	x->kind = kind;
	x->ndim = ndim;
	x->shape[0] = d0;
	x->shape[1] = d1;
	x->shape[2] = d2;
}

int tf_synth_plan(json_t *config, tf_synth_tensor **out, int *count)
{
	json_t *tc = json_object_get(config, "text_config"), *e;
	tf_synth_tensor *t = NULL;
	tf_config c;
	int n = 0;

	e = json_object_get(tc ? tc : config, "num_experts");
	if (json_integer_value(e) > 0)
		return tf_err("mixture-of-experts geometries are not supported");
	if (tf_config_parse(config, NULL, &c) < 0)
		return -1;
	int64_t H = c.hidden, I = c.inter, D = c.head_dim, kd = (int64_t)c.lin_k_heads * c.lin_k_dim,
		vd = (int64_t)c.lin_v_heads * c.lin_v_dim, conv = 2 * kd + vd, Hv = c.lin_v_heads;

	add(&t, &n, TF_SYN_MATRIX, 2, c.vocab, H, 0, "embed_tokens.weight", 0);
	for (int i = 0; i < c.layers; i++) {
		add(&t, &n, TF_SYN_NORM0, 1, H, 0, 0, "layers.%d.input_layernorm.weight", i);
		add(&t, &n, TF_SYN_NORM0, 1, H, 0, 0, "layers.%d.post_attention_layernorm.weight", i);
		if (c.full[i]) {
			add(&t, &n, TF_SYN_MATRIX, 2, 2 * c.heads * D, H, 0, "layers.%d.self_attn.q_proj.weight", i);
			add(&t, &n, TF_SYN_MATRIX, 2, c.kv_heads * D, H, 0, "layers.%d.self_attn.k_proj.weight", i);
			add(&t, &n, TF_SYN_MATRIX, 2, c.kv_heads * D, H, 0, "layers.%d.self_attn.v_proj.weight", i);
			add(&t, &n, TF_SYN_MATRIX, 2, H, c.heads * D, 0, "layers.%d.self_attn.o_proj.weight", i);
			add(&t, &n, TF_SYN_NORM0, 1, D, 0, 0, "layers.%d.self_attn.q_norm.weight", i);
			add(&t, &n, TF_SYN_NORM0, 1, D, 0, 0, "layers.%d.self_attn.k_norm.weight", i);
		} else {
			add(&t, &n, TF_SYN_MATRIX, 2, conv, H, 0, "layers.%d.linear_attn.in_proj_qkv.weight", i);
			add(&t, &n, TF_SYN_MATRIX, 2, vd, H, 0, "layers.%d.linear_attn.in_proj_z.weight", i);
			add(&t, &n, TF_SYN_MATRIX, 2, Hv, H, 0, "layers.%d.linear_attn.in_proj_b.weight", i);
			add(&t, &n, TF_SYN_MATRIX, 2, Hv, H, 0, "layers.%d.linear_attn.in_proj_a.weight", i);
			add(&t, &n, TF_SYN_CONV, 3, conv, 1, c.conv_k, "layers.%d.linear_attn.conv1d.weight", i);
			add(&t, &n, TF_SYN_DTBIAS, 1, Hv, 0, 0, "layers.%d.linear_attn.dt_bias", i);
			add(&t, &n, TF_SYN_ALOG, 1, Hv, 0, 0, "layers.%d.linear_attn.A_log", i);
			add(&t, &n, TF_SYN_NORM1, 1, c.lin_v_dim, 0, 0, "layers.%d.linear_attn.norm.weight", i);
			add(&t, &n, TF_SYN_MATRIX, 2, H, vd, 0, "layers.%d.linear_attn.out_proj.weight", i);
		}
		add(&t, &n, TF_SYN_MATRIX, 2, I, H, 0, "layers.%d.mlp.gate_proj.weight", i);
		add(&t, &n, TF_SYN_MATRIX, 2, I, H, 0, "layers.%d.mlp.up_proj.weight", i);
		add(&t, &n, TF_SYN_MATRIX, 2, H, I, 0, "layers.%d.mlp.down_proj.weight", i);
	}
	add(&t, &n, TF_SYN_NORM0, 1, H, 0, 0, "norm.weight", 0);
	if (!c.tied)
		add(&t, &n, TF_SYN_MATRIX, 2, c.vocab, H, 0, "lm_head.weight", 0);
	tf_config_free(&c);
	*out = t;
	*count = n;
	return 0;
}

/* splitmix64: tiny, fast, and every seed gives a full-period stream */
static uint64_t mix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static float uniform(uint64_t *s)    /* [0, 1) */
{
	return (mix(s) >> 40) * (1.0f / 16777216.0f);
}

#define CHUNK (1 << 22)

/* n random bytes into the open part */
static int random_bytes(tf_bw *bw, uint64_t *st, uint64_t n, unsigned char *buf)
{
	while (n) {
		uint64_t k = n < CHUNK ? n : CHUNK;
		for (uint64_t i = 0; i < k; i += 8) {
			uint64_t v = mix(st);
			memcpy(buf + i, &v, 8);
		}
		if (tf_bw_write(bw, buf, k) < 0)
			return -1;
		n -= k;
	}
	return tf_bw_part_end(bw);
}

/* n values of dtype: f(i) for the values */
static int values(tf_bw *bw, int dtype, uint64_t n, unsigned char *buf, float (*f)(uint64_t *, float), uint64_t *st,
		  float arg)
{
	int es = tf_dtype_bytes(dtype);

	while (n) {
		uint64_t k = n < CHUNK / 4 ? n : CHUNK / 4;
		for (uint64_t i = 0; i < k; i++)
			tf_put_scalar(buf, dtype, i, f(st, arg));
		if (tf_bw_write(bw, buf, k * es) < 0)
			return -1;
		n -= k;
	}
	return tf_bw_part_end(bw);
}

static float f_const(uint64_t *st, float a)
{
	return a;
}

static float f_uniform(uint64_t *st, float a)   /* [-a, a) */
{
	return (2 * uniform(st) - 1) * a;
}

static float f_alog(uint64_t *st, float a)      /* log of A in [1, 16) */
{
	return logf(1 + 15 * uniform(st));
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* a geometry's name (model/geometry.h), else a config.json file */
static json_t *load_config(const char *config)
{
	json_error_t je;
	json_t *cfg = tf_geometry_config(config);

	if (cfg)
		return cfg;
	if (!(cfg = json_load_file(config, JSON_REJECT_DUPLICATES, &je))) {
		tf_err("'%s' is not valid JSON: %s (line %d)", config, je.text, je.line);
		return NULL;
	}
	if (!json_is_object(cfg)) {
		json_decref(cfg);
		tf_err("'%s' is not a JSON object", config);
		return NULL;
	}
	return cfg;
}

int tf_synth(const char *config, int bits, int group, uint64_t seed, const char *out, int progress)
{
	json_t *cfg = load_config(config);
	tf_synth_tensor *t = NULL;
	unsigned char *buf = NULL;
	double last = 0;
	tf_bw *bw = NULL;
	int n = 0, rc = -1;

	if (!cfg)
		return -1;
	if (tf_synth_plan(cfg, &t, &n) < 0) {
		tf_errpre("'%s'", config);
		goto out;
	}
	for (int i = 0; i < n; i++)
		if (t[i].kind == TF_SYN_MATRIX && t[i].shape[1] % (bits == 1 ? 128 : bits == 16 ? 1 : group)) {
			tf_err("'%s': %lld columns are not a multiple of the group %d", t[i].name,
			       (long long)t[i].shape[1], bits == 1 ? 128 : group);
			goto out;
		}
	bw = tf_bw_begin(out, cfg, NULL, NULL, n);
	if (!bw)
		goto out;
	tf_bw_flag(bw, "synthetic");
	buf = tf_malloc(CHUNK);
	for (int i = 0; i < n; i++) {
		tf_synth_tensor *x = &t[i];
		tf_bundle_entry e = { 0 };
		uint64_t st = seed * 0x100000001b3ull + i, rows = x->shape[0], cols = x->shape[1];
		float a = sqrtf(3.0f / (x->ndim == 2 ? cols : 1));    /* uniform [-a, a): std 1/sqrt(cols) */
		int w;

		snprintf(e.name, sizeof e.name, "%s", x->name);
		e.ndim = x->ndim;
		memcpy(e.shape, x->shape, sizeof x->shape);
		e.path = "synth";
		e.fmt = x->kind == TF_SYN_ALOG ? TF_F32 : TF_BF16;
		if (x->kind == TF_SYN_MATRIX && bits < 16) {
			e.fmt = bits == 1 ? TF_SIGN1 : TF_AFFINE;
			e.bits = bits;
			e.group = bits == 1 ? 128 : group;
			e.sdtype = TF_BF16;
		}
		if (tf_bw_tensor_begin(bw, &e) < 0)
			goto out;
		switch (x->kind) {
		case TF_SYN_MATRIX:
			if (bits == 16) {
				w = values(bw, TF_BF16, rows * cols, buf, f_uniform, &st, a);
			} else if (bits == 1) {
				/* w = +-a/sqrt(3): the same std as the uniform weights */
				w = random_bytes(bw, &st, rows * cols / 8, buf) ||
				    values(bw, TF_BF16, rows * (cols / 128), buf, f_const, &st, a / sqrtf(3.0f));
			} else {
				/* codes uniform in [0, 2^B - 1]; w = s q - a spans [-a, a] */
				float s = 2 * a / ((1 << bits) - 1);
				uint64_t ng = rows * (cols / group);
				w = random_bytes(bw, &st, rows * cols * bits / 8, buf) ||
				    values(bw, TF_BF16, ng, buf, f_const, &st, s) ||
				    values(bw, TF_BF16, ng, buf, f_const, &st, -a);
			}
			break;
		case TF_SYN_NORM0:
			w = values(bw, TF_BF16, rows, buf, f_const, &st, 0);
			break;
		case TF_SYN_NORM1:
		case TF_SYN_DTBIAS:
			w = values(bw, TF_BF16, rows, buf, f_const, &st, 1);
			break;
		case TF_SYN_CONV:
			w = values(bw, TF_BF16, rows * x->shape[2], buf, f_uniform, &st, 0.5f);
			break;
		default:
			w = values(bw, TF_F32, rows, buf, f_alog, &st, 0);
			break;
		}
		if (w || tf_bw_tensor_end(bw, &e) < 0)
			goto out;
		if (progress && (now() - last > 0.1 || i == n - 1)) {
			last = now();
			fprintf(stderr, "\r%s: %d/%d tensors, %.1f MB written%s", tf_prog, i + 1, n,
				tf_bw_size(bw) / 1e6, i == n - 1 ? "\n" : "");
		}
	}
	rc = tf_bw_finish(bw);
	bw = NULL;
out:
	if (bw)
		tf_bw_abort(bw);
	free(buf);
	free(t);
	json_decref(cfg);
	return rc;
}
