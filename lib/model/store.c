/* store.c: opening a checkpoint folder and finding its tensors by name */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/err.h"
#include "base/map.h"
#include "bundle.h"
#include "gguf.h"
#include "gguf_qwen35.h"
#include "store.h"

static char *join(const char *dir, const char *name)
{
	char *p = tf_malloc(strlen(dir) + strlen(name) + 2);

	sprintf(p, "%s/%s", dir, name);
	return p;
}

static int exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* whether path, which exists, is a regular file; else an error: opening a
 * FIFO named config.json would wait for a writer forever */
static int regular(const char *path)
{
	struct stat st;

	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return tf_err("'%s' is not a regular file", path), 0;
	return 1;
}

static json_t *load_json(const char *path, int required)
{
	json_error_t e;
	json_t *j;

	if (!exists(path)) {
		if (required)
			tf_err("cannot open '%s':", path);
		return NULL;
	}
	if (!regular(path))
		return NULL;
	j = json_load_file(path, JSON_REJECT_DUPLICATES, &e);
	if (!j)
		tf_err("'%s' is not valid JSON: %s (line %d)", path, e.text, e.line);
	else if (!json_is_object(j)) {
		tf_err("'%s' is not a JSON object", path);
		json_decref(j);
		j = NULL;
	}
	return j;
}

static char *slurp(const char *path)
{
	FILE *f;
	char *buf = NULL;
	size_t n = 0, cap = 0, got;

	if (!regular(path) || !(f = fopen(path, "rb")))
		return NULL;
	do {
		if (n + 65536 > cap)
			buf = tf_realloc(buf, cap = 2 * cap + 65536);
		got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
	} while (got);
	fclose(f);
	buf[n] = 0;
	return buf;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_tensor(const void *a, const void *b)
{
	return strcmp(((const tf_tensor *)a)->name, ((const tf_tensor *)b)->name);
}

static int cmp_weight(const void *a, const void *b)
{
	return strcmp(((const tf_named_weight *)a)->name, ((const tf_named_weight *)b)->name);
}

/* the shard files: the index's weight_map, else model*.safetensors, else *.safetensors */
static char **shard_list(const char *dir, int *count)
{
	char *ipath = join(dir, "model.safetensors.index.json"), **files = NULL;
	int n = 0;

	if (exists(ipath)) {
		json_t *idx = load_json(ipath, 1), *map, *v;
		const char *k;

		free(ipath);
		if (!idx)
			return NULL;
		map = json_object_get(idx, "weight_map");
		if (!json_is_object(map)) {
			tf_err("'%s/model.safetensors.index.json' has no weight_map object", dir);
			json_decref(idx);
			return NULL;
		}
		json_object_foreach(map, k, v) {
			const char *f = json_string_value(v);
			int seen = 0;
			if (!f || strchr(f, '/')) {
				tf_err("'%s/model.safetensors.index.json': bad shard name for '%s'", dir, k);
				json_decref(idx);
				return NULL;
			}
			for (int i = 0; i < n && !seen; i++)
				seen = !strcmp(files[i], f);
			if (!seen) {
				files = tf_realloc(files, (n + 1) * sizeof *files);
				files[n++] = tf_strdup(f);
			}
		}
		json_decref(idx);
	} else {
		DIR *d = opendir(dir);
		struct dirent *e;
		int pass;

		free(ipath);
		if (!d)
			return tf_err("cannot open '%s':", dir), NULL;
		for (pass = 0; pass < 2 && !n; pass++) {
			rewinddir(d);
			while ((e = readdir(d))) {
				size_t len = strlen(e->d_name);
				if (len < 12 || strcmp(e->d_name + len - 12, ".safetensors"))
					continue;
				if (pass == 0 && strncmp(e->d_name, "model", 5))
					continue;
				files = tf_realloc(files, (n + 1) * sizeof *files);
				files[n++] = tf_strdup(e->d_name);
			}
		}
		closedir(d);
	}
	if (!n) {
		tf_err("'%s' holds no safetensors files", dir);
		return NULL;
	}
	qsort(files, n, sizeof *files, cmp_str);
	*count = n;
	return files;
}

static int mlx_sign1(tf_store *s);

static tf_store *open_gguf(const char *path, const char *file)
{
	tf_store *s = tf_calloc(1, sizeof *s);

	s->path = tf_strdup(path);
	s->gguf = 1;
	if (tf_gguf_store_load(s, file) < 0) {
		tf_store_close(s);
		return NULL;
	}
	for (int i = 1; i < s->nt; i++)
		if (!strcmp(s->t[i].name, s->t[i - 1].name)) {
			tf_err("'%s': tensor '%s' is stored twice", file, s->t[i].name);
			tf_store_close(s);
			return NULL;
		}
	return s;
}

tf_store *tf_store_open(const char *path)
{
	struct stat st;
	tf_store *s;
	char **files, *p;
	int nf = 0;

	if (stat(path, &st) < 0)
		return tf_err("cannot open '%s':", path), NULL;
	if (!S_ISDIR(st.st_mode)) {
		int b = S_ISREG(st.st_mode) ? tf_bundle_is(path) : 0, g = 0;
		if (b < 0)
			return NULL;
		if (!b && S_ISREG(st.st_mode) && (g = tf_gguf_is(path)) < 0)
			return NULL;
		/* a .gguf that does not start "GGUF" is named as a damaged one */
		if (g || (!b && strlen(path) > 5 && !strcmp(path + strlen(path) - 5, ".gguf")))
			return open_gguf(path, path);
		if (!b)
			return tf_err("'%s' is neither a model folder, a tf-bundle nor a GGUF file", path), NULL;
		s = tf_calloc(1, sizeof *s);
		s->path = tf_strdup(path);
		if (tf_bundle_load(s, path) < 0)
			goto fail;
		return s;
	}
	/* a folder with no config.json but a GGUF (or one split set) is that GGUF */
	p = join(path, "config.json");
	if (!exists(p)) {
		int err;
		char *g = tf_gguf_in_dir(path, &err);
		if (g || err) {
			free(p);
			s = g ? open_gguf(path, g) : NULL;
			free(g);
			return s;
		}
	}
	s = tf_calloc(1, sizeof *s);
	s->path = tf_strdup(path);
	s->config = load_json(p, 1);
	free(p);
	if (!s->config)
		goto fail;
	/* optional, but when there it must be read: its end ids stop generation */
	p = join(path, "generation_config.json");
	s->gen_config = load_json(p, 0);
	if (!s->gen_config && exists(p)) {
		free(p);
		goto fail;
	}
	free(p);
	p = join(path, "tokenizer.json");
	if (!regular(p)) {
		free(p);
		goto fail;
	}
	s->tokenizer_json = slurp(p);
	free(p);
	files = shard_list(path, &nf);
	if (!files)
		goto fail;
	for (int i = 0; i < nf; i++) {
		char *f = join(path, files[i]);
		int rc = tf_st_load(s, f);
		free(f);
		if (rc < 0) {
			for (; i < nf; i++)
				free(files[i]);
			free(files);
			goto fail;
		}
		free(files[i]);
	}
	free(files);
	qsort(s->t, s->nt, sizeof *s->t, cmp_tensor);
	for (int i = 1; i < s->nt; i++)
		if (!strcmp(s->t[i].name, s->t[i - 1].name)) {
			tf_err("'%s': tensor '%s' is stored twice", path, s->t[i].name);
			goto fail;
		}
	if (mlx_sign1(s) < 0) {
		tf_errpre("'%s'", path);
		goto fail;
	}
	return s;
fail:
	tf_store_close(s);
	return NULL;
}

void tf_store_close(tf_store *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->nt; i++) {
		free(s->t[i].name);
		free(s->t[i].src);
	}
	for (int i = 0; i < s->nw; i++)
		free(s->wt[i].name);
	for (int i = 0; i < s->nmaps; i++)
		tf_map_close(s->maps[i]);
	for (int i = 0; i < s->nowned; i++)
		free(s->owned[i]);
	free(s->owned);
	free(s->t);
	free(s->wt);
	free(s->maps);
	json_decref(s->config);
	json_decref(s->gen_config);
	free(s->tokenizer_json);
	free(s->path);
	free(s);
}

/* both tables are sorted by name, their first member */
static int cmp_key(const void *key, const void *elem)
{
	return strcmp(key, *(char *const *)elem);
}

const tf_tensor *tf_store_find(const tf_store *s, const char *name)
{
	return s->nt ? bsearch(name, s->t, s->nt, sizeof *s->t, cmp_key) : NULL;
}

static const tf_named_weight *find_weight(const tf_store *s, const char *module)
{
	return s->nw ? bsearch(module, s->wt, s->nw, sizeof *s->wt, cmp_key) : NULL;
}

int tf_store_has_weight(const tf_store *s, const char *module)
{
	char name[512];

	snprintf(name, sizeof name, "%s.weight", module);
	return find_weight(s, module) || tf_store_find(s, name);
}

/* bits and group of an MLX-quantized module: a per-module override in the
 * top-level "quantization" (MLX module paths, no ".weight"), else the
 * global values, as mlx-lm's config writes them */
static int quant_lookup(const tf_store *s, const char *module, int *bits, int *group)
{
	json_t *q = json_object_get(s->config, "quantization"), *v;
	const char *k;

	if (!q)
		q = json_object_get(s->config, "quantization_config");
	if (!q)
		q = json_object_get(json_object_get(s->config, "text_config"), "quantization_config");
	if (!json_is_object(q))
		return tf_err("'%s' has scales but config.json has no quantization section", module);
	*bits = json_integer_value(json_object_get(q, "bits"));
	*group = json_integer_value(json_object_get(q, "group_size"));
	json_object_foreach(q, k, v) {
		char *key, *norm;
		size_t len;
		if (!json_is_object(v))
			continue;
		key = tf_malloc(strlen(k) + 9);
		sprintf(key, "%s.weight", k);
		norm = tf_norm_name(key);
		free(key);
		if (!norm)
			continue;
		len = strlen(norm) - 7;
		if (strlen(module) == len && !strncmp(norm, module, len)) {
			if (json_object_get(v, "bits"))
				*bits = json_integer_value(json_object_get(v, "bits"));
			if (json_object_get(v, "group_size"))
				*group = json_integer_value(json_object_get(v, "group_size"));
		}
		free(norm);
	}
	return 0;
}

static int quant_params(const tf_store *s, const char *module, int *bits, int *group)
{
	if (quant_lookup(s, module, bits, group) < 0)
		return -1;
	if (*bits < 2 || *bits > 8 || *bits == 7)
		return tf_err("'%s': quantization bits %d not supported (2, 3, 4, 5, 6 or 8)", module, *bits);
	if (*group != 32 && *group != 64 && *group != 128)
		return tf_err("'%s': quantization group_size %d not supported (32, 64 or 128)", module, *group);
	return 0;
}

static int is_float(int dt)
{
	return dt == TF_F32 || dt == TF_BF16 || dt == TF_F16;
}

/*
 * MLX 1-bit weights (affine with bits 1) as sign1. mlx-lm stores each
 * group's scale and bias; a binary weight of {-s, +s} is scale 2s and bias
 * -s, so w = 2s b - s = s (2b - 1), exactly. MLX packs the codes LSB-first
 * in u32 words, which on a little-endian machine are sign1's bits byte for
 * byte; what is made here is the one scale a group of 128, -bias. Taken
 * only when every group of a 128 holds that one s (groups of 32 and 64
 * included); a group that does not is named and the folder refused.
 */
static int mlx_sign1(tf_store *s)
{
	char base[512], name[600];
	int n0 = s->nw;

	for (int i = 0; i < s->nt; i++) {
		const tf_tensor *sc = &s->t[i], *w, *bi;
		size_t len = strlen(sc->name);
		int bits = 0, group = 0;
		int64_t rows, cols, ng;
		unsigned char *out;
		int es;

		if (len < 8 || strcmp(sc->name + len - 7, ".scales") || len - 7 >= sizeof base)
			continue;
		memcpy(base, sc->name, len - 7);
		base[len - 7] = 0;
		snprintf(name, sizeof name, "%s.weight", base);
		w = tf_store_find(s, name);
		snprintf(name, sizeof name, "%s.biases", base);
		bi = tf_store_find(s, name);
		/* anything amiss here is tf_store_weight's to name */
		if (!w || !bi || quant_lookup(s, base, &bits, &group) < 0)
			continue;
		if (bits != 1)
			continue;
		if (group != 32 && group != 64 && group != 128)
			return tf_err("'%s': 1-bit group_size %d not supported (32, 64 or 128)", base, group);
		if (w->dtype != TF_U32 || w->ndim != 2 || !is_float(sc->dtype) || bi->dtype != sc->dtype ||
		    sc->ndim != 2 || bi->ndim != 2 || sc->shape[0] != w->shape[0] || bi->shape[0] != w->shape[0] ||
		    bi->shape[1] != sc->shape[1] || w->shape[1] * 32 != sc->shape[1] * group)
			return tf_err("'%s': 1-bit codes, scales and biases of disagreeing shapes or types", base);
		rows = w->shape[0];
		cols = sc->shape[1] * group;
		if (cols % 128)
			return tf_err("'%s': %lld columns are not whole groups of 128, which sign1 needs", base,
				      (long long)cols);
		ng = cols / group;
		es = tf_dtype_bytes(sc->dtype);
		out = tf_malloc(rows * (cols / 128) * es + 1);
		s->owned = tf_realloc(s->owned, (s->nowned + 1) * sizeof *s->owned);
		s->owned[s->nowned++] = out;
		for (int64_t r = 0; r < rows; r++)
			for (int64_t g = 0; g < ng; g++) {
				int64_t first = r * ng + g / (128 / group) * (128 / group);
				float sv = -tf_load_scalar(bi->data, bi->dtype, first);
				float a = tf_load_scalar(sc->data, sc->dtype, r * ng + g);
				float b = tf_load_scalar(bi->data, bi->dtype, r * ng + g);
				if (!(a == 2 * sv && b == -sv))
					return tf_err("'%s': 1-bit group %lld of row %lld has scale %g and bias %g, not "
						      "2s and -s of the s of its 128 (%g): not a binary weight", base,
						      (long long)g, (long long)r, a, b, sv);
				if (first == r * ng + g) {
					const unsigned char *src = (const unsigned char *)bi->data + first * es;
					unsigned char *dst = out + (r * (cols / 128) + g / (128 / group)) * es;
					memcpy(dst, src, es);
					dst[es - 1] ^= 0x80;    /* -bias: the sign bit, exact */
				}
			}
		s->wt = tf_realloc(s->wt, (s->nw + 1) * sizeof *s->wt);
		s->wt[s->nw].name = tf_strdup(base);
		s->wt[s->nw++].w = (tf_weight){ .fmt = TF_SIGN1, .rows = rows, .cols = cols, .bits = 1, .group = 128,
						 .sdtype = sc->dtype, .data = w->data, .scales = out };
	}
	if (s->nw > n0)
		qsort(s->wt, s->nw, sizeof *s->wt, cmp_weight);
	return 0;
}

int tf_store_weight(const tf_store *s, const char *module, int64_t rows, int64_t cols, tf_weight *w)
{
	char name[512];
	const tf_named_weight *nw = find_weight(s, module);
	const tf_tensor *t, *sc, *bi;

	memset(w, 0, sizeof *w);
	if (nw) {
		*w = nw->w;
	} else {
		snprintf(name, sizeof name, "%s.weight", module);
		t = tf_store_find(s, name);
		if (!t)
			return tf_err("missing tensor '%s'", name);
		snprintf(name, sizeof name, "%s.scales", module);
		sc = tf_store_find(s, name);
		if (!sc) {
			if (!is_float(t->dtype) || t->ndim != 2)
				return tf_err("tensor '%s.weight' is %s with %d dimensions, expected a 2-D float matrix",
					      module, tf_dtype_str(t->dtype), t->ndim);
			*w = (tf_weight){ .fmt = t->dtype, .rows = t->shape[0], .cols = t->shape[1],
					  .data = t->data };
		} else {
			int bits = 0, group = 0;
			snprintf(name, sizeof name, "%s.biases", module);
			bi = tf_store_find(s, name);
			if (!bi)
				return tf_err("missing tensor '%s'", name);
			if (quant_params(s, module, &bits, &group) < 0)
				return -1;
			if (t->dtype != TF_U32 || t->ndim != 2)
				return tf_err("tensor '%s.weight' holds quantized codes but is not a 2-D U32 tensor", module);
			if (!is_float(sc->dtype) || sc->dtype != bi->dtype || sc->ndim != 2 || bi->ndim != 2)
				return tf_err("'%s': scales and biases must be 2-D float tensors of one dtype", module);
			*w = (tf_weight){ .fmt = TF_AFFINE, .rows = t->shape[0], .cols = sc->shape[1] * group,
					  .bits = bits, .group = group, .sdtype = sc->dtype, .data = t->data,
					  .scales = sc->data, .biases = bi->data };
			if (t->shape[1] * 32 != w->cols * bits || sc->shape[0] != w->rows ||
			    bi->shape[0] != w->rows || bi->shape[1] != sc->shape[1])
				return tf_err("'%s': codes [%lld, %lld] disagree with scales [%lld, %lld] at %d bits, group %d",
					      module, (long long)t->shape[0], (long long)t->shape[1],
					      (long long)sc->shape[0], (long long)sc->shape[1], bits, group);
		}
	}
	if ((rows && w->rows != rows) || (cols && w->cols != cols))
		return tf_err("tensor '%s' has shape [%lld, %lld], expected [%lld, %lld]", module,
			      (long long)w->rows, (long long)w->cols, (long long)rows, (long long)cols);
	return 0;
}
