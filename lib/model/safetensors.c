/*
 * safetensors.c: the safetensors container.
 *
 *   offset 0   u64 LE N, the JSON header's length (at most 100,000,000)
 *   offset 8   N bytes of JSON: {"name": {"dtype", "shape", "data_offsets": [b, e]}, ...}
 *   offset 8+N the byte buffer; a tensor's bytes are [8+N+b, 8+N+e)
 *
 * The file is mapped read-only; every header field is checked against the
 * file before any tensor is used: offsets inside the buffer, end - begin equal
 * to the shape's bytes, no two tensors overlapping.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "base/map.h"
#include "store.h"

static const struct { const char *s; int dt, size; } dtypes[] = {
	{ "F32", TF_F32, 4 }, { "BF16", TF_BF16, 2 }, { "F16", TF_F16, 2 },
	{ "U32", TF_U32, 4 }, { "I32", TF_I32, 4 }, { "U8", TF_U8, 1 }, { "I8", TF_I8, 1 },
	{ "U16", TF_U16, 2 }, { "I16", TF_I16, 2 }, { "F64", TF_F64, 8 }, { "I64", TF_I64, 8 },
	{ "U64", TF_U64, 8 }, { "BOOL", TF_BOOL, 1 },
};

int tf_dtype_parse(const char *s)
{
	for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++)
		if (!strcmp(s, dtypes[i].s))
			return dtypes[i].dt;
	return 0;
}

int tf_dtype_bytes(int dt)
{
	for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++)
		if (dt == dtypes[i].dt)
			return dtypes[i].size;
	return 0;
}

const char *tf_dtype_str(int dt)
{
	for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++)
		if (dt == dtypes[i].dt)
			return dtypes[i].s;
	return "?";
}

static const char *prefixes[] = { "model.language_model.", "language_model.model.", "model." };
/* mtp.* (the multi-token-prediction head) is kept under its own name for
 * the mtp drafter (model/mtp_head.h); the vision tower is never used */
static const char *skipped[] = { "model.visual.", "vision_tower.", "model.language_model.visual.",
				 "visual." };

char *tf_norm_name(const char *src)
{
	for (size_t i = 0; i < sizeof skipped / sizeof *skipped; i++)
		if (!strncmp(src, skipped[i], strlen(skipped[i])))
			return NULL;
	if (!strncmp(src, "language_model.lm_head.", 23))
		src += 15;
	for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
		if (!strncmp(src, prefixes[i], strlen(prefixes[i])))
			return tf_strdup(src + strlen(prefixes[i]));
	return tf_strdup(src);
}

static int cmp_begin(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return x[0] < y[0] ? -1 : x[0] > y[0];
}

static int parse_entry(tf_store *s, const char *file, const char *key, json_t *v,
		       const unsigned char *buf, uint64_t buflen, uint64_t *range)
{
	json_t *dt = json_object_get(v, "dtype"), *shape = json_object_get(v, "shape"),
	       *off = json_object_get(v, "data_offsets");
	tf_tensor t = { 0 };
	uint64_t n = 1, b, e;
	size_t i;

	if (!json_is_object(v) || !json_is_string(dt) || !json_is_array(shape) || !json_is_array(off) ||
	    json_array_size(off) != 2)
		return tf_err("'%s': tensor '%s': header entry lacks dtype, shape or data_offsets", file, key);
	t.dtype = tf_dtype_parse(json_string_value(dt));
	if (!t.dtype)
		return tf_err("'%s': tensor '%s': unknown dtype '%s'", file, key, json_string_value(dt));
	if (json_array_size(shape) > 8)
		return tf_err("'%s': tensor '%s': rank %zu is too high", file, key, json_array_size(shape));
	t.ndim = json_array_size(shape);
	for (i = 0; i < (size_t)t.ndim; i++) {
		json_t *d = json_array_get(shape, i);
		if (!json_is_integer(d) || json_integer_value(d) < 0 || json_integer_value(d) > (1ll << 40))
			return tf_err("'%s': tensor '%s': bad shape", file, key);
		t.shape[i] = json_integer_value(d);
		if (t.shape[i] && n > (UINT64_MAX >> 8) / (uint64_t)t.shape[i])
			return tf_err("'%s': tensor '%s': shape too large", file, key);
		n *= t.shape[i];
	}
	if (!json_is_integer(json_array_get(off, 0)) || !json_is_integer(json_array_get(off, 1)) ||
	    json_integer_value(json_array_get(off, 0)) < 0 || json_integer_value(json_array_get(off, 1)) < 0)
		return tf_err("'%s': tensor '%s': data_offsets are not two non-negative integers", file, key);
	b = json_integer_value(json_array_get(off, 0));
	e = json_integer_value(json_array_get(off, 1));
	if (b > e || e > buflen)
		return tf_err("'%s': tensor '%s': data_offsets [%llu, %llu] outside the %llu-byte data buffer",
			      file, key, (unsigned long long)b, (unsigned long long)e, (unsigned long long)buflen);
	t.bytes = n * tf_dtype_bytes(t.dtype);
	if (e - b != t.bytes)
		return tf_err("'%s': tensor '%s': data_offsets span %llu bytes, shape and dtype need %llu", file,
			      key, (unsigned long long)(e - b), (unsigned long long)t.bytes);
	range[0] = b;
	range[1] = e;
	t.name = tf_norm_name(key);
	if (!t.name)
		return 0;
	t.src = tf_strdup(key);
	t.data = buf + b;
	s->t = tf_realloc(s->t, (s->nt + 1) * sizeof *s->t);
	s->t[s->nt++] = t;
	return 0;
}

int tf_st_load(tf_store *s, const char *file)
{
	tf_map *m = tf_map_open(file);
	const unsigned char *p;
	uint64_t n, buflen, (*ranges)[2] = NULL;
	json_error_t jerr;
	json_t *h = NULL, *v;
	const char *key;
	size_t nr = 0;
	int rc = -1;

	if (!m)
		return -1;
	s->maps = tf_realloc(s->maps, (s->nmaps + 1) * sizeof *s->maps);
	s->maps[s->nmaps++] = m;
	p = m->data;
	if (m->size < 8)
		return tf_err("'%s': truncated safetensors file: %zu bytes", file, m->size);
	memcpy(&n, p, 8);
	if (n > 100000000 || n > m->size - 8)
		return tf_err("'%s': header length %llu runs past the end of the %zu-byte file", file,
			      (unsigned long long)n, m->size);
	h = json_loadb((const char *)p + 8, n, JSON_REJECT_DUPLICATES, &jerr);
	if (!h || !json_is_object(h)) {
		tf_err("'%s': header is not a JSON object: %s", file, h ? "wrong type" : jerr.text);
		goto out;
	}
	buflen = m->size - 8 - n;
	ranges = tf_malloc((json_object_size(h) + 1) * sizeof *ranges);
	json_object_foreach(h, key, v) {
		if (!strcmp(key, "__metadata__"))
			continue;
		if (parse_entry(s, file, key, v, p + 8 + n, buflen, ranges[nr]) < 0)
			goto out;
		nr++;
	}
	/* no two tensors may share bytes (empty tensors share nothing): each
	 * begins at or past the furthest end before it, not only its
	 * neighbour's, which a small or empty tensor between them would hide */
	qsort(ranges, nr, sizeof *ranges, cmp_begin);
	uint64_t end = 0;
	for (size_t i = 0; i < nr; i++) {
		if (ranges[i][1] == ranges[i][0])
			continue;
		if (ranges[i][0] < end) {
			tf_err("'%s': tensors overlap at data offset %llu", file, (unsigned long long)ranges[i][0]);
			goto out;
		}
		end = ranges[i][1];
	}
	rc = 0;
out:
	free(ranges);
	json_decref(h);
	return rc;
}
