/*
 * bundle.c: reading tf-bundle(5) files.
 *
 * The reader trusts nothing: the header is checked against the file size,
 * the manifest is parsed with duplicates rejected, and every tensor's
 * format, shape, offset and byte count is checked against the data region
 * before any tensor is handed out. Tensors may not overlap.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/map.h"
#include "bundle.h"

static uint64_t align_up(uint64_t n, uint64_t a)
{
	return (n + a - 1) / a * a;
}

const char *tf_bundle_fmt_name(int fmt)
{
	static char buf[16][8];
	static int next;
	const char *s;
	char *b;
	int i;

	if (fmt == TF_AFFINE)
		return "affine";
	if (fmt == TF_SIGN1)
		return "sign1";
	s = tf_dtype_str(fmt);
	b = buf[next++ & 15];
	for (i = 0; i < 7 && s[i]; i++)
		b[i] = tolower((unsigned char)s[i]);
	b[i] = 0;
	return b;
}

static int fmt_parse(const char *s)
{
	char up[16];
	size_t n = strlen(s);

	if (!strcmp(s, "affine"))
		return TF_AFFINE;
	if (!strcmp(s, "sign1"))
		return TF_SIGN1;
	if (n >= sizeof up)
		return 0;
	for (size_t i = 0; i <= n; i++)
		up[i] = toupper((unsigned char)s[i]);
	return tf_dtype_parse(up);
}

static int is_float(int dt)
{
	return dt == TF_F32 || dt == TF_BF16 || dt == TF_F16;
}

int tf_bundle_parts(const tf_bundle_entry *e, uint64_t part[3], uint64_t *total)
{
	uint64_t n = 1, rows, cols, ss;

	part[0] = part[1] = part[2] = 0;
	if (e->ndim < 0 || e->ndim > 8)
		return tf_err("tensor '%s': rank %d", e->name, e->ndim);
	for (int i = 0; i < e->ndim; i++) {
		if (e->shape[i] < 0 || e->shape[i] > (1ll << 40))
			return tf_err("tensor '%s': bad shape", e->name);
		if (e->shape[i] && n > (UINT64_MAX >> 8) / (uint64_t)e->shape[i])
			return tf_err("tensor '%s': shape too large", e->name);
		n *= e->shape[i];
	}
	if (e->fmt == TF_AFFINE || e->fmt == TF_SIGN1) {
		if (e->ndim != 2)
			return tf_err("tensor '%s': %s weights are 2-D, not %d-D", e->name,
				      tf_bundle_fmt_name(e->fmt), e->ndim);
		if (!is_float(e->sdtype))
			return tf_err("tensor '%s': scales must be f32, bf16 or f16", e->name);
		rows = e->shape[0];
		cols = e->shape[1];
		ss = tf_dtype_bytes(e->sdtype);
		if (e->fmt == TF_AFFINE) {
			if (e->bits < 2 || e->bits > 8 || e->bits == 7)
				return tf_err("tensor '%s': affine bits %d not supported (2, 3, 4, 5, 6 or 8)",
					      e->name, e->bits);
			if (e->group != 32 && e->group != 64 && e->group != 128)
				return tf_err("tensor '%s': affine group %d not supported (32, 64 or 128)",
					      e->name, e->group);
		} else if (e->bits != 1 || e->group != 128) {
			return tf_err("tensor '%s': sign1 needs bits 1 and group 128, not %d and %d", e->name,
				      e->bits, e->group);
		}
		if (cols % e->group)
			return tf_err("tensor '%s': %llu columns are not a multiple of the group %d", e->name,
				      (unsigned long long)cols, e->group);
		part[0] = rows * cols * e->bits / 8;
		part[1] = rows * (cols / e->group) * ss;
		if (e->fmt == TF_AFFINE)
			part[2] = part[1];
	} else {
		int sz = tf_dtype_bytes(e->fmt);
		if (!sz)
			return tf_err("tensor '%s': unknown format", e->name);
		part[0] = n * sz;
	}
	*total = part[0];
	if (part[1])
		*total = align_up(*total, TF_BUNDLE_PART_ALIGN) + part[1];
	if (part[2])
		*total = align_up(*total, TF_BUNDLE_PART_ALIGN) + part[2];
	return 0;
}

static uint64_t le64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint32_t le32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

int tf_bundle_is(const char *path)
{
	unsigned char m[8];
	FILE *f = fopen(path, "rb");
	int yes;

	if (!f)
		return tf_err("cannot open '%s':", path);
	yes = fread(m, 1, 8, f) == 8 && !memcmp(m, TF_BUNDLE_MAGIC, 8);
	fclose(f);
	return yes;
}

/* the header checked against the file; the manifest parsed */
static json_t *check_header(const char *path, const unsigned char *p, uint64_t size, uint64_t *data_off,
			    uint64_t *data_len)
{
	uint64_t moff, mlen;
	json_error_t je;
	json_t *m;

	if (size < 8 || memcmp(p, TF_BUNDLE_MAGIC, 8))
		return tf_err("'%s' is not a tf-bundle (bad magic)", path), NULL;
	if (size < TF_BUNDLE_HDR)
		return tf_err("'%s': truncated bundle: %llu bytes, the header alone needs %d", path,
			      (unsigned long long)size, TF_BUNDLE_HDR), NULL;
	if (le32(p + 8) != TF_BUNDLE_VERSION)
		return tf_err("'%s': tf-bundle version %u not supported (this reader knows %d)", path,
			      le32(p + 8), TF_BUNDLE_VERSION), NULL;
	if (le32(p + 12) != TF_BUNDLE_HDR)
		return tf_err("'%s': header length %u, expected %d", path, le32(p + 12), TF_BUNDLE_HDR), NULL;
	moff = le64(p + 16);
	mlen = le64(p + 24);
	*data_off = le64(p + 32);
	*data_len = le64(p + 40);
	for (int i = 48; i < 64; i++)
		if (p[i])
			return tf_err("'%s': reserved header bytes are not zero", path), NULL;
	if (moff != TF_BUNDLE_HDR || mlen > TF_BUNDLE_MAX_MANIFEST || mlen < 2)
		return tf_err("'%s': bad manifest position %llu+%llu", path, (unsigned long long)moff,
			      (unsigned long long)mlen), NULL;
	if (*data_off % TF_BUNDLE_ALIGN || *data_off < moff + mlen || *data_off > (1ull << 62) ||
	    *data_len > (1ull << 62))
		return tf_err("'%s': bad data offset %llu", path, (unsigned long long)*data_off), NULL;
	if (size < *data_off + *data_len || size < moff + mlen)
		return tf_err("'%s': truncated bundle: %llu bytes, the header says %llu", path,
			      (unsigned long long)size, (unsigned long long)(*data_off + *data_len)), NULL;
	if (size > *data_off + *data_len)
		return tf_err("'%s': %llu bytes after the end the header gives", path,
			      (unsigned long long)(size - *data_off - *data_len)), NULL;
	m = json_loadb((const char *)p + moff, mlen, JSON_REJECT_DUPLICATES, &je);
	if (!m)
		return tf_err("'%s': manifest is not valid JSON: %s (byte %d)", path, je.text, je.position), NULL;
	if (!json_is_object(m)) {
		json_decref(m);
		return tf_err("'%s': manifest is not a JSON object", path), NULL;
	}
	return m;
}

static int get_int(json_t *o, const char *k, int64_t lo, int64_t hi, int64_t *v)
{
	json_t *x = json_object_get(o, k);

	if (!json_is_integer(x) || json_integer_value(x) < lo || json_integer_value(x) > hi)
		return -1;
	*v = json_integer_value(x);
	return 0;
}

/* one manifest entry into e, checked against the data region */
static int parse_entry(const char *path, json_t *t, size_t idx, uint64_t data_len, tf_bundle_entry *e)
{
	json_t *name = json_object_get(t, "name"), *shape = json_object_get(t, "shape"),
	       *fmt = json_object_get(t, "format"), *sd = json_object_get(t, "scales_dtype");
	uint64_t part[3], total;
	int64_t v;

	memset(e, 0, sizeof *e);
	if (!json_is_object(t))
		return tf_err("'%s': tensor %zu of the manifest is not an object", path, idx);
	if (!json_is_string(name) || !json_string_length(name) || json_string_length(name) >= sizeof e->name - 8 ||
	    strlen(json_string_value(name)) != json_string_length(name))
		return tf_err("'%s': tensor %zu has no usable name", path, idx);
	strcpy(e->name, json_string_value(name));
	if (!json_is_string(fmt) || !(e->fmt = fmt_parse(json_string_value(fmt))))
		return tf_err("'%s': tensor '%s': unknown format", path, e->name);
	if (!json_is_array(shape) || json_array_size(shape) > 8)
		return tf_err("'%s': tensor '%s': shape is not an array of at most 8 sizes", path, e->name);
	e->ndim = json_array_size(shape);
	for (int i = 0; i < e->ndim; i++) {
		json_t *d = json_array_get(shape, i);
		if (!json_is_integer(d) || json_integer_value(d) < 0 || json_integer_value(d) > (1ll << 40))
			return tf_err("'%s': tensor '%s': bad shape", path, e->name);
		e->shape[i] = json_integer_value(d);
	}
	if (e->fmt == TF_AFFINE || e->fmt == TF_SIGN1) {
		if (get_int(t, "bits", 1, 8, &v) < 0)
			return tf_err("'%s': tensor '%s': bits missing or outside 1..8", path, e->name);
		e->bits = v;
		if (get_int(t, "group", 1, 1 << 20, &v) < 0)
			return tf_err("'%s': tensor '%s': group missing or not a positive integer", path, e->name);
		e->group = v;
		if (!json_is_string(sd) || !(e->sdtype = fmt_parse(json_string_value(sd))))
			return tf_err("'%s': tensor '%s': scales_dtype missing or unknown", path, e->name);
	}
	if (tf_bundle_parts(e, part, &total) < 0)
		return tf_errpre("'%s'", path);
	if (get_int(t, "offset", 0, INT64_MAX, &v) < 0 || v % TF_BUNDLE_ALIGN)
		return tf_err("'%s': tensor '%s': offset is not a non-negative multiple of %d", path, e->name,
			      TF_BUNDLE_ALIGN);
	e->offset = v;
	if (get_int(t, "bytes", 0, INT64_MAX, &v) < 0)
		return tf_err("'%s': tensor '%s': bytes is not a non-negative integer", path, e->name);
	e->bytes = v;
	if (e->bytes != total)
		return tf_err("'%s': tensor '%s': %llu bytes, its shape and format need %llu", path, e->name,
			      (unsigned long long)e->bytes, (unsigned long long)total);
	if (e->offset > data_len || e->bytes > data_len - e->offset)
		return tf_err("'%s': tensor '%s': bytes [%llu, %llu) point past the end of the %llu-byte data",
			      path, e->name, (unsigned long long)e->offset,
			      (unsigned long long)(e->offset + e->bytes), (unsigned long long)data_len);
	return 0;
}

static int cmp_off(const void *a, const void *b)
{
	const tf_bundle_entry *x = *(tf_bundle_entry *const *)a, *y = *(tf_bundle_entry *const *)b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* all entries, checked; NULL with a message */
static tf_bundle_entry *parse_entries(const char *path, json_t *m, uint64_t data_len, size_t *count)
{
	json_t *ts = json_object_get(m, "tensors");
	tf_bundle_entry *e, **by_off;
	size_t n;
	json_int_t ver;

	ver = json_integer_value(json_object_get(m, "tf_bundle"));
	if (ver != TF_BUNDLE_VERSION)
		return tf_err("'%s': manifest lacks \"tf_bundle\": %d", path, TF_BUNDLE_VERSION), NULL;
	if (!json_is_object(json_object_get(m, "config")))
		return tf_err("'%s': manifest has no config object", path), NULL;
	if (!json_is_array(ts))
		return tf_err("'%s': manifest has no tensors array", path), NULL;
	n = json_array_size(ts);
	e = tf_calloc(n, sizeof *e);
	for (size_t i = 0; i < n; i++)
		if (parse_entry(path, json_array_get(ts, i), i, data_len, &e[i]) < 0) {
			free(e);
			return NULL;
		}
	/* no two tensors share a byte or a name */
	by_off = tf_malloc(n * sizeof *by_off);
	for (size_t i = 0; i < n; i++)
		by_off[i] = &e[i];
	qsort(by_off, n, sizeof *by_off, cmp_off);
	/* against the furthest end so far, not the neighbour's: an empty or
	 * small tensor between two that overlap would hide them */
	for (size_t i = 0, last = n; i < n; i++) {
		if (!by_off[i]->bytes)
			continue;
		if (last < n && by_off[i]->offset < by_off[last]->offset + by_off[last]->bytes) {
			tf_err("'%s': tensors '%s' and '%s' overlap", path, by_off[last]->name, by_off[i]->name);
			free(by_off);
			free(e);
			return NULL;
		}
		if (last == n || by_off[i]->offset + by_off[i]->bytes > by_off[last]->offset + by_off[last]->bytes)
			last = i;
	}
	free(by_off);
	*count = n;
	return e;
}

json_t *tf_bundle_manifest(const char *path, uint64_t *file_size)
{
	tf_map *mp = tf_map_open(path);
	uint64_t doff, dlen;
	tf_bundle_entry *e;
	json_t *m;
	size_t n;

	if (!mp)
		return NULL;
	m = check_header(path, mp->data, mp->size, &doff, &dlen);
	if (m) {
		e = parse_entries(path, m, dlen, &n);
		if (!e) {
			json_decref(m);
			m = NULL;
		}
		free(e);
	}
	if (file_size)
		*file_size = mp->size;
	tf_map_close(mp);
	return m;
}

static void add_tensor(tf_store *s, const char *name, const char *suffix, int dtype, int ndim,
		       const int64_t *shape, const void *data, uint64_t bytes)
{
	tf_tensor *t;
	size_t n = strlen(name);

	s->t = tf_realloc(s->t, (s->nt + 1) * sizeof *s->t);
	t = &s->t[s->nt++];
	memset(t, 0, sizeof *t);
	t->name = tf_malloc(n + strlen(suffix) + 1);
	strcpy(t->name, name);
	/* "<module>.weight" becomes "<module>.scales" for the other parts */
	if (*suffix && n > 7 && !strcmp(name + n - 7, ".weight"))
		t->name[n - 7] = 0;
	strcat(t->name, suffix);
	t->src = tf_strdup(t->name);
	t->dtype = dtype;
	t->ndim = ndim;
	memcpy(t->shape, shape, ndim * sizeof *shape);
	t->data = data;
	t->bytes = bytes;
}

static int cmp_tensor(const void *a, const void *b)
{
	return strcmp(((const tf_tensor *)a)->name, ((const tf_tensor *)b)->name);
}

static int cmp_weight(const void *a, const void *b)
{
	return strcmp(((const tf_named_weight *)a)->name, ((const tf_named_weight *)b)->name);
}

int tf_bundle_load(tf_store *s, const char *path)
{
	tf_map *mp = tf_map_open(path);
	const unsigned char *data;
	tf_bundle_entry *e = NULL;
	uint64_t doff, dlen;
	json_t *m, *v;
	size_t n = 0;
	int rc = -1;

	if (!mp)
		return -1;
	s->maps = tf_realloc(s->maps, (s->nmaps + 1) * sizeof *s->maps);
	s->maps[s->nmaps++] = mp;
	m = check_header(path, mp->data, mp->size, &doff, &dlen);
	if (!m)
		return -1;
	e = parse_entries(path, m, dlen, &n);
	if (!e)
		goto out;
	s->config = json_incref(json_object_get(m, "config"));
	v = json_object_get(m, "generation_config");
	if (json_is_object(v))
		s->gen_config = json_incref(v);
	v = json_object_get(m, "tokenizer");
	if (json_is_string(v))
		s->tokenizer_json = tf_strdup(json_string_value(v));
	data = (const unsigned char *)mp->data + doff;
	for (size_t i = 0; i < n; i++) {
		uint64_t part[3], total;
		const unsigned char *p = data + e[i].offset;
		tf_bundle_parts(&e[i], part, &total);
		if (e[i].fmt == TF_AFFINE || e[i].fmt == TF_SIGN1) {
			int64_t rows = e[i].shape[0], cols = e[i].shape[1];
			int64_t cshape[2] = { rows, e[i].fmt == TF_AFFINE ? cols * e[i].bits / 32 : cols / 8 };
			int64_t sshape[2] = { rows, cols / e[i].group };
			const unsigned char *sp = p + (part[0] + TF_BUNDLE_PART_ALIGN - 1) / TF_BUNDLE_PART_ALIGN *
							      TF_BUNDLE_PART_ALIGN;
			const unsigned char *bp = sp + (part[1] + TF_BUNDLE_PART_ALIGN - 1) / TF_BUNDLE_PART_ALIGN *
							       TF_BUNDLE_PART_ALIGN;
			tf_named_weight *nw;
			size_t len = strlen(e[i].name);

			add_tensor(s, e[i].name, "", e[i].fmt == TF_AFFINE ? TF_U32 : TF_U8, 2, cshape, p, part[0]);
			add_tensor(s, e[i].name, ".scales", e[i].sdtype, 2, sshape, sp, part[1]);
			if (e[i].fmt == TF_AFFINE)
				add_tensor(s, e[i].name, ".biases", e[i].sdtype, 2, sshape, bp, part[2]);
			s->wt = tf_realloc(s->wt, (s->nw + 1) * sizeof *s->wt);
			nw = &s->wt[s->nw++];
			nw->name = tf_strdup(e[i].name);
			if (len > 7 && !strcmp(e[i].name + len - 7, ".weight"))
				nw->name[len - 7] = 0;
			nw->w = (tf_weight){ .fmt = e[i].fmt, .rows = rows, .cols = cols, .bits = e[i].bits,
					     .group = e[i].group, .sdtype = e[i].sdtype, .data = p,
					     .scales = sp, .biases = e[i].fmt == TF_AFFINE ? bp : NULL };
		} else {
			add_tensor(s, e[i].name, "", e[i].fmt, e[i].ndim, e[i].shape, p, part[0]);
		}
	}
	if (s->nt)
		qsort(s->t, s->nt, sizeof *s->t, cmp_tensor);
	if (s->nw)
		qsort(s->wt, s->nw, sizeof *s->wt, cmp_weight);
	for (int i = 1; i < s->nt; i++)
		if (!strcmp(s->t[i].name, s->t[i - 1].name)) {
			tf_err("'%s': tensor '%s' is stored twice", path, s->t[i].name);
			goto out;
		}
	for (int i = 1; i < s->nw; i++)
		if (!strcmp(s->wt[i].name, s->wt[i - 1].name)) {
			tf_err("'%s': weight '%s' is stored twice", path, s->wt[i].name);
			goto out;
		}
	rc = 0;
out:
	free(e);
	json_decref(m);
	return rc;
}
