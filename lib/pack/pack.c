/*
 * pack.c: tf-pack's work, one tensor at a time.
 *
 * Tensors are visited in name order and written as they are made, so the
 * memory needed is one tensor's output (codes are streamed in blocks of
 * rows; only scales and biases of a whole tensor are held). The source
 * checksum is the sha256 of the source bytes: the tensor's bytes, or for an
 * MLX triplet codes, scales and biases in that order.
 */
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "base/pool.h"
#include "model/bundle.h"
#include "model/model.h"
#include "model/store.h"
#include "pack.h"
#include "quant.h"
#include "recipe.h"

/* one thing to write: a raw tensor, or a quantized weight (MLX triplet or
 * a prebuilt weight of a source bundle) */
typedef struct {
	const tf_tensor *t;     /* the tensor, or the codes of a weight */
	const tf_tensor *sc, *bi;
	tf_weight w;            /* quantized source: its view */
	int quantized;
	char module[512];
} item;

static int is_float(int dt)
{
	return dt == TF_F32 || dt == TF_BF16 || dt == TF_F16;
}

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);

	return n >= m && !strcmp(s + n - m, suf);
}

/* ---------------------------------------------------------------------------
 * progress on a terminal */

static int progress_on;
static double progress_last;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void progress(int done, int total, uint64_t bytes, int force)
{
	double t;

	if (!progress_on)
		return;
	t = now();
	if (!force && t - progress_last < 0.1)
		return;
	progress_last = t;
	fprintf(stderr, "\r%s: %d/%d tensors, %.1f MB written%s", tf_prog, done, total, bytes / 1e6,
		force ? "\n" : "");
}

/* ---------------------------------------------------------------------------
 * source checks */

static void sha_hex(EVP_MD_CTX *c, char out[65])
{
	unsigned char md[32];
	unsigned int n = 0;

	EVP_DigestFinal_ex(c, md, &n);
	for (int i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", md[i]);
}

static void sha_of(const void *a, uint64_t na, const void *b, uint64_t nb, const void *c, uint64_t nc,
		   char out[65])
{
	EVP_MD_CTX *x = EVP_MD_CTX_new();

	EVP_DigestInit_ex(x, EVP_sha256(), NULL);
	EVP_DigestUpdate(x, a, na);
	if (b)
		EVP_DigestUpdate(x, b, nb);
	if (c)
		EVP_DigestUpdate(x, c, nc);
	sha_hex(x, out);
	EVP_MD_CTX_free(x);
}

/* every per-module override in config.json's quantization must name a
 * module of the checkpoint (a typo would otherwise silently change bits) */
static int check_overrides(const tf_store *s)
{
	json_t *q = json_object_get(s->config, "quantization"), *v;
	const char *k;

	if (!q)
		q = json_object_get(s->config, "quantization_config");
	if (!json_is_object(q))
		return 0;
	json_object_foreach(q, k, v) {
		char *key, *norm;
		if (!json_is_object(v) && !json_is_true(v))
			continue;
		key = tf_malloc(strlen(k) + 8);
		sprintf(key, "%s.weight", k);
		norm = tf_norm_name(key);
		free(key);
		if (norm && !tf_store_find(s, norm)) {
			tf_err("config.json quantization names module '%s', which the checkpoint does not have", k);
			free(norm);
			return -1;
		}
		free(norm);
	}
	return 0;
}

/* the things to write, in name order; scales and biases join their codes */
static item *list_items(const tf_store *s, int *count)
{
	item *it = tf_calloc(s->nt + 1, sizeof *it);
	int n = 0;

	for (int i = 0; i < s->nt; i++) {
		const tf_tensor *t = &s->t[i];
		char base[512], name[600];
		size_t len = strlen(t->name);

		if ((ends_with(t->name, ".scales") || ends_with(t->name, ".biases")) && len - 7 < sizeof base) {
			memcpy(base, t->name, len - 7);
			base[len - 7] = 0;
			snprintf(name, sizeof name, "%s.weight", base);
			if (tf_store_find(s, name))
				continue;       /* written with its codes */
		}
		it[n].t = t;
		if (ends_with(t->name, ".weight") && len - 7 < sizeof it[n].module) {
			memcpy(it[n].module, t->name, len - 7);
			it[n].module[len - 7] = 0;
			snprintf(name, sizeof name, "%s.scales", it[n].module);
			if (tf_store_find(s, name)) {
				if (tf_store_weight(s, it[n].module, 0, 0, &it[n].w) < 0) {
					free(it);
					return NULL;
				}
				it[n].quantized = 1;
				it[n].sc = tf_store_find(s, name);
				snprintf(name, sizeof name, "%s.biases", it[n].module);
				it[n].bi = tf_store_find(s, name);
			}
		}
		n++;
	}
	*count = n;
	return it;
}

/* ---------------------------------------------------------------------------
 * quantization over the thread pool */

struct qjob {
	const unsigned char *src;       /* (rows, cols) of dtype, this block */
	int dtype, bits, group;
	int64_t cols;
	uint32_t *codes;                /* (rows, cols*bits/32) */
	unsigned char *scales, *biases; /* (rows, cols/group) of dtype, this block */
	double maxerr;
	pthread_mutex_t mu;
};

static void qrange(void *ctx, int64_t r0, int64_t r1)
{
	struct qjob *j = ctx;
	int64_t ng = j->cols / j->group, es = tf_dtype_bytes(j->dtype);
	double e;

	if (r1 <= r0)
		return;
	e = tf_affine_quantize(j->src + r0 * j->cols * es, j->dtype, r1 - r0, j->cols, j->bits, j->group,
			       j->codes + r0 * (j->cols * j->bits / 32), j->scales + r0 * ng * es,
			       j->biases + r0 * ng * es);
	pthread_mutex_lock(&j->mu);
	if (e > j->maxerr || e != e)
		j->maxerr = e;
	pthread_mutex_unlock(&j->mu);
}

/* quantizes a float weight and writes codes, scales, biases */
static int write_quantized(tf_bw *bw, tf_bundle_entry *e, const tf_tensor *t)
{
	int64_t rows = t->shape[0], cols = t->shape[1], ng = cols / e->group;
	int64_t es = tf_dtype_bytes(t->dtype), wpr = cols * e->bits / 32;
	int64_t block = (1 << 24) / (cols * es) + 1;    /* rows per block: ~16 MB of source */
	unsigned char *scales = tf_malloc(rows * ng * es), *biases = tf_malloc(rows * ng * es);
	uint32_t *codes = tf_malloc(block * wpr * 4);
	struct qjob j = { .dtype = t->dtype, .bits = e->bits, .group = e->group, .cols = cols };
	int rc = 0;

	pthread_mutex_init(&j.mu, NULL);
	for (int64_t r = 0; r < rows && !rc; r += block) {
		int64_t n = rows - r < block ? rows - r : block;
		j.src = (const unsigned char *)t->data + r * cols * es;
		j.codes = codes;
		j.scales = scales + r * ng * es;
		j.biases = biases + r * ng * es;
		tf_parallel(n, qrange, &j);
		rc = tf_bw_write(bw, codes, n * wpr * 4);
	}
	if (!rc)
		rc = tf_bw_part_end(bw);
	if (!rc)
		rc = tf_bw_write(bw, scales, rows * ng * es);
	if (!rc)
		rc = tf_bw_part_end(bw);
	if (!rc)
		rc = tf_bw_write(bw, biases, rows * ng * es);
	if (!rc)
		rc = tf_bw_part_end(bw);
	e->max_error = j.maxerr;
	pthread_mutex_destroy(&j.mu);
	free(codes);
	free(scales);
	free(biases);
	return rc;
}

static int write_sign1(tf_bw *bw, const tf_bundle_entry *e, const tf_tensor *t)
{
	int64_t rows = t->shape[0], cols = t->shape[1], br, bc;
	int64_t es = tf_dtype_bytes(t->dtype);
	uint8_t *bits = tf_malloc(rows * cols / 8);
	unsigned char *scales = tf_malloc(rows * (cols / 128) * es);
	int rc = -1;

	if (tf_sign1_repack(t->data, t->dtype, rows, cols, bits, scales, &br, &bc) == 1 &&
	    !tf_bw_write(bw, bits, rows * cols / 8) && !tf_bw_part_end(bw) &&
	    !tf_bw_write(bw, scales, rows * (cols / 128) * es) && !tf_bw_part_end(bw))
		rc = 0;
	free(bits);
	free(scales);
	return rc;
}

static int write_bytes(tf_bw *bw, const void *p, uint64_t n)
{
	const unsigned char *b = p;

	/* in pieces, so a huge tensor's pages are read in order */
	for (uint64_t at = 0; at < n;) {
		uint64_t k = n - at < (1 << 24) ? n - at : (1 << 24);
		if (tf_bw_write(bw, b + at, k) < 0)
			return -1;
		at += k;
	}
	return tf_bw_part_end(bw);
}

/* the bits asked for a float weight: 0 keep */
static int wanted_bits(const tf_pack_opts *o, tf_recipe *r, const char *module, int *group)
{
	int b = -1, g = 0;

	if (r)
		b = tf_recipe_bits(r, module, &g);
	if (b < 0)
		b = o->bits;
	*group = g ? g : o->group;
	return b;
}

/* an MLX triplet (or a bundle's weight) into e: every byte as it is, so
 * bits asked for it must be the bits it has */
static int put_coded(tf_bw *bw, const tf_store *s, const tf_pack_opts *o, tf_recipe *rp, const item *x,
		     tf_bundle_entry *e)
{
	const tf_weight *w = &x->w;
	uint64_t part[3], total;
	int group, want = wanted_bits(o, rp, x->module, &group), wrc;

	if (want > 0 && (w->fmt != TF_AFFINE || want != w->bits)) {
		char has[32];
		if (w->fmt == TF_AFFINE)
			snprintf(has, sizeof has, "%d-bit", w->bits);
		else
			snprintf(has, sizeof has, "sign1");
		return tf_err("'%s' is already %s: tf-pack copies quantized weights as they are, and %d bits "
			      "apply to float weights only", x->module, has, want);
	}
	e->fmt = w->fmt;
	e->ndim = 2;
	e->shape[0] = w->rows;
	e->shape[1] = w->cols;
	e->bits = w->bits;
	e->group = w->group;
	e->sdtype = w->sdtype;
	/* a bundle's weights are kept; a GGUF's blocks became these codes */
	e->path = s->gguf ? "gguf" : w->fmt == TF_AFFINE && !s->nw ? "mlx" : "kept";
	e->flags[0] = "exact";
	if (tf_bundle_parts(e, part, &total) < 0)
		return -1;
	sha_of(w->data, part[0], w->scales, part[1], w->biases, part[2], e->sha256);
	wrc = tf_bw_tensor_begin(bw, e);
	for (int k = 0; k < 3 && !wrc; k++)
		if (part[k])
			wrc = write_bytes(bw, k == 0 ? w->data : k == 1 ? w->scales : w->biases, part[k]);
	return wrc;
}

/* a float or integer tensor into e: exact sign1 when its every group of
 * 128 is {-s, +s}, quantized when the options ask for bits, else kept */
static int put_float(tf_bw *bw, const tf_pack_opts *o, tf_recipe *rp, const item *x, tf_bundle_entry *e)
{
	const tf_tensor *t = x->t;
	int64_t br, bc;
	int bits = 0, group = 0, wrc;
	int weight2d = is_float(t->dtype) && t->ndim == 2 && ends_with(t->name, ".weight");

	e->fmt = t->dtype;
	e->ndim = t->ndim;
	memcpy(e->shape, t->shape, sizeof e->shape);
	e->path = "kept";
	e->flags[0] = "exact";
	sha_of(t->data, t->bytes, NULL, 0, NULL, 0, e->sha256);
	if (weight2d)
		bits = wanted_bits(o, rp, x->module, &group);
	if (weight2d && !o->no_sign1 && t->shape[1] % 128 == 0 && t->shape[0] > 0 &&
	    tf_sign1_repack(t->data, t->dtype, t->shape[0], t->shape[1], NULL, NULL, &br, &bc) == 1) {
		e->fmt = TF_SIGN1;
		e->bits = 1;
		e->group = 128;
		e->sdtype = t->dtype;
		e->path = "sign1";
		e->flags[1] = "no_rotation";
		wrc = tf_bw_tensor_begin(bw, e);
		return wrc ? wrc : write_sign1(bw, e, t);
	}
	if (weight2d && bits > 0 && t->shape[1] % group == 0) {
		e->fmt = TF_AFFINE;
		e->bits = bits;
		e->group = group;
		e->sdtype = t->dtype;
		e->path = "quantized";
		e->flags[0] = NULL;
		wrc = tf_bw_tensor_begin(bw, e);
		return wrc ? wrc : write_quantized(bw, e, t);
	}
	if (weight2d && bits > 0)
		tf_warn("'%s': %lld columns are not a multiple of group %d; kept as %s", t->name,
			(long long)t->shape[1], group, tf_dtype_str(t->dtype));
	wrc = tf_bw_tensor_begin(bw, e);
	return wrc ? wrc : write_bytes(bw, t->data, t->bytes);
}

/* whether config.json speaks of a model's geometry at all */
static int describes_model(const json_t *cfg)
{
	const json_t *tc = json_object_get(cfg, "text_config");

	return json_object_get(cfg, "num_hidden_layers") || json_object_get(tc, "num_hidden_layers") ||
	       json_object_get(cfg, "vocab_size") || json_object_get(tc, "vocab_size");
}

int tf_pack(const char *src, const char *out, const tf_pack_opts *o)
{
	tf_recipe recipe, *rp = NULL;
	tf_bw *bw = NULL;
	item *it = NULL;
	int n = 0, rc = -1;

	tf_store *s = tf_store_open(src);
	progress_on = o->progress;
	if (!s)
		return -1;
	/* a checkpoint whose config describes a model must be one tf-run can
	 * load (every shape the config gives, no tensor missing): refused
	 * before anything is written. A folder of tensors with no model in
	 * its config is packed as tensors. */
	if (describes_model(s->config)) {
		tf_model *check = tf_model_open(src);
		if (!check) {
			tf_errpre("'%s' is not a model tf-run can load", src);
			goto out;
		}
		tf_model_close(check);
	}
	if (check_overrides(s) < 0)
		goto out;
	if (o->recipe) {
		if (tf_recipe_load(&recipe, o->recipe, s->config) < 0)
			goto out;
		rp = &recipe;
	}
	it = list_items(s, &n);
	if (!it)
		goto out;
	bw = tf_bw_begin(out, s->config, s->gen_config, s->tokenizer_json, n);
	if (!bw)
		goto out;
	if (!tf_store_find(s, "lm_head.weight"))
		tf_bw_flag(bw, "tied_head");
	for (int i = 0; i < n; i++) {
		const tf_tensor *t = it[i].t;
		tf_bundle_entry e = { 0 };
		int wrc;

		snprintf(e.name, sizeof e.name, "%s", t->name);
		snprintf(e.source, sizeof e.source, "%s", t->src ? t->src : t->name);
		wrc = it[i].quantized ? put_coded(bw, s, o, rp, &it[i], &e) : put_float(bw, o, rp, &it[i], &e);
		if (wrc || tf_bw_tensor_end(bw, &e) < 0)
			goto out;
		progress(i + 1, n, tf_bw_size(bw), 0);
	}
	progress(n, n, tf_bw_size(bw), 1);
	if (rp && tf_recipe_check_used(rp) < 0)
		goto out;
	rc = tf_bw_finish(bw);
	bw = NULL;
out:
	if (bw)
		tf_bw_abort(bw);
	if (rp)
		tf_recipe_free(rp);
	free(it);
	tf_store_close(s);
	return rc;
}
