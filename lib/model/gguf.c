/*
 * gguf.c: reading GGUF files (gguf.h has the layout).
 *
 * A cursor walks the mapping; every read checks the bytes left first, and
 * every size is formed with overflow checks, so a count of 2^63 strings or
 * a tensor whose extent wraps around fails as "truncated" or "out of
 * bounds" rather than reading past the file.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/err.h"
#include "gguf.h"

#define MAX_NAME 1024           /* a tensor name longer than this is damage */

typedef struct {
	const unsigned char *p, *end;
	const char *file;
} cur;

static int need(cur *c, uint64_t n, const char *what)
{
	if ((uint64_t)(c->end - c->p) < n)
		return tf_err("'%s': truncated GGUF file: %s runs past the end", c->file, what);
	return 0;
}

/* n bytes of the file into v (little-endian, as GGUF and the host are) */
static int rd(cur *c, void *v, size_t n, const char *what)
{
	if (need(c, n, what) < 0)
		return -1;
	memcpy(v, c->p, n);
	c->p += n;
	return 0;
}

static int rd_u32(cur *c, uint32_t *v, const char *what)
{
	return rd(c, v, 4, what);
}

static int rd_u64(cur *c, uint64_t *v, const char *what)
{
	return rd(c, v, 8, what);
}

static int rd_str(cur *c, tf_gguf_str *s, const char *what)
{
	if (rd_u64(c, &s->n, what) < 0 || need(c, s->n, what) < 0)
		return -1;
	s->p = (const char *)c->p;
	c->p += s->n;
	return 0;
}

static const int scalar_size[TF_GGUF_NTYPES] = { 1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8 };

/* skips one value of type t (no arrays), counting its bytes */
static int skip_value(cur *c, int t, const char *what)
{
	tf_gguf_str s;

	if (t == TF_GGUF_STRING)
		return rd_str(c, &s, what);
	if (need(c, scalar_size[t], what) < 0)
		return -1;
	c->p += scalar_size[t];
	return 0;
}

static int read_kv(cur *c, tf_gguf_kv *kv)
{
	uint32_t t, et;
	char what[160];

	if (rd_str(c, &kv->key, "a metadata key") < 0)
		return -1;
	snprintf(what, sizeof what, "metadata '%.*s'", (int)(kv->key.n < 100 ? kv->key.n : 100), kv->key.p);
	if (rd_u32(c, &t, what) < 0)
		return -1;
	if (t >= TF_GGUF_NTYPES)
		return tf_err("'%s': %s has unknown value type %u", c->file, what, t);
	kv->type = t;
	kv->v = c->p;
	if (t != TF_GGUF_ARRAY) {
		if (skip_value(c, t, what) < 0)
			return -1;
	} else {
		if (rd_u32(c, &et, what) < 0 || rd_u64(c, &kv->count, what) < 0)
			return -1;
		if (et >= TF_GGUF_NTYPES)
			return tf_err("'%s': %s is an array of unknown type %u", c->file, what, et);
		if (et == TF_GGUF_ARRAY)
			return tf_err("'%s': %s is an array of arrays, which no model key is", c->file, what);
		kv->etype = et;
		kv->v = c->p;
		if (et != TF_GGUF_STRING) {
			if (kv->count > UINT64_MAX / 8 || need(c, kv->count * scalar_size[et], what) < 0)
				return tf_err("'%s': truncated GGUF file: %s's %llu elements run past the end",
					      c->file, what, (unsigned long long)kv->count);
			c->p += kv->count * scalar_size[et];
		} else {
			/* each string needs at least its 8-byte length: a count
			 * past that is damage, found before the walk */
			if (kv->count > (uint64_t)(c->end - c->p) / 8)
				return tf_err("'%s': truncated GGUF file: %s's %llu strings run past the end",
					      c->file, what, (unsigned long long)kv->count);
			for (uint64_t i = 0; i < kv->count; i++)
				if (skip_value(c, TF_GGUF_STRING, what) < 0)
					return -1;
		}
	}
	kv->vbytes = c->p - kv->v;
	return 0;
}

static int key_is(const tf_gguf_kv *kv, const char *key)
{
	size_t n = strlen(key);
	return kv->key.n == n && !memcmp(kv->key.p, key, n);
}

static const tf_gguf_kv *find_in(const tf_gguf_kv *kv, int64_t n, const char *key)
{
	for (int64_t i = 0; i < n; i++)
		if (key_is(&kv[i], key))
			return &kv[i];
	return NULL;
}

const tf_gguf_kv *tf_gguf_find(const tf_gguf *g, const char *key)
{
	return find_in(g->kv, g->nkv, key);
}

static int is_int_type(int t)
{
	return t <= TF_GGUF_I32 || t == TF_GGUF_BOOL || t == TF_GGUF_U64 || t == TF_GGUF_I64;
}

static int64_t int_at(const unsigned char *p, int t)
{
	switch (t) {
	case TF_GGUF_U8: case TF_GGUF_BOOL: return p[0];
	case TF_GGUF_I8: return (int8_t)p[0];
	case TF_GGUF_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
	case TF_GGUF_I16: { int16_t v; memcpy(&v, p, 2); return v; }
	case TF_GGUF_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
	case TF_GGUF_I32: { int32_t v; memcpy(&v, p, 4); return v; }
	case TF_GGUF_U64: { uint64_t v; memcpy(&v, p, 8); return v > INT64_MAX ? -1 : (int64_t)v; }
	case TF_GGUF_I64: { int64_t v; memcpy(&v, p, 8); return v; }
	}
	return 0;
}

static int kv_int(const tf_gguf_kv *kv, const char *file, int64_t *out)
{
	if (!is_int_type(kv->type))
		return tf_err("'%s': metadata '%.*s' is not an integer", file, (int)kv->key.n, kv->key.p);
	*out = int_at(kv->v, kv->type);
	return 1;
}

int tf_gguf_int(const tf_gguf *g, const char *key, int64_t *out)
{
	const tf_gguf_kv *kv = tf_gguf_find(g, key);

	return kv ? kv_int(kv, g->path, out) : 0;
}

int tf_gguf_float(const tf_gguf *g, const char *key, double *out)
{
	const tf_gguf_kv *kv = tf_gguf_find(g, key);

	if (!kv)
		return 0;
	if (kv->type == TF_GGUF_F32) {
		float f;
		memcpy(&f, kv->v, 4);
		*out = f;
	} else if (kv->type == TF_GGUF_F64) {
		memcpy(out, kv->v, 8);
	} else if (is_int_type(kv->type)) {
		*out = (double)int_at(kv->v, kv->type);
	} else {
		return tf_err("'%s': metadata '%s' is not a number", g->path, key);
	}
	return 1;
}

char *tf_gguf_string(const tf_gguf *g, const char *key, int *bad)
{
	const tf_gguf_kv *kv = tf_gguf_find(g, key);
	tf_gguf_str s;
	char *r;

	*bad = 0;
	if (!kv)
		return NULL;
	if (kv->type != TF_GGUF_STRING) {
		*bad = 1;
		return tf_err("'%s': metadata '%s' is not a string", g->path, key), NULL;
	}
	memcpy(&s.n, kv->v, 8);
	s.p = (const char *)kv->v + 8;
	r = tf_malloc(s.n + 1);
	memcpy(r, s.p, s.n);
	r[s.n] = 0;
	return r;
}

int64_t tf_gguf_arr_int(const tf_gguf_kv *kv, uint64_t i)
{
	return int_at(kv->v + i * scalar_size[kv->etype], kv->etype);
}

tf_gguf_str tf_gguf_arr_next_str(const tf_gguf_kv *kv, uint64_t *at)
{
	tf_gguf_str s;

	/* the walk in read_kv proved every length in bounds */
	memcpy(&s.n, kv->v + *at, 8);
	s.p = (const char *)kv->v + *at + 8;
	*at += 8 + s.n;
	return s;
}

const tf_gguf_tensor *tf_gguf_tensor_find(const tf_gguf *g, const char *name)
{
	for (int64_t i = 0; i < g->nt; i++)
		if (!strcmp(g->t[i].name, name))
			return &g->t[i];
	return NULL;
}

int tf_gguf_is(const char *path)
{
	FILE *f = fopen(path, "rb");
	char m[4];
	int r;

	if (!f)
		return tf_err("cannot open '%s':", path), -1;
	r = fread(m, 1, 4, f) == 4 && !memcmp(m, "GGUF", 4);
	fclose(f);
	return r;
}

static int cmp_key(const void *a, const void *b)
{
	const tf_gguf_kv *x = *(tf_gguf_kv *const *)a, *y = *(tf_gguf_kv *const *)b;
	int c = memcmp(x->key.p, y->key.p, x->key.n < y->key.n ? x->key.n : y->key.n);
	return c ? c : (x->key.n > y->key.n) - (x->key.n < y->key.n);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp((*(tf_gguf_tensor *const *)a)->name, (*(tf_gguf_tensor *const *)b)->name);
}

/* the first name given twice among n tensors, or NULL: sorted, so a file
 * of many thousand hostile tensors is checked in n log n */
static const char *twice(tf_gguf_tensor *t, int64_t n)
{
	tf_gguf_tensor **by = tf_malloc((n + 1) * sizeof *by);
	const char *dup = NULL;

	for (int64_t i = 0; i < n; i++)
		by[i] = &t[i];
	qsort(by, n, sizeof *by, cmp_name);
	for (int64_t i = 1; i < n && !dup; i++)
		if (!strcmp(by[i - 1]->name, by[i]->name))
			dup = by[i]->name;
	free(by);
	return dup;
}

static int cmp_range(const void *a, const void *b)
{
	const tf_gguf_tensor *x = *(tf_gguf_tensor *const *)a, *y = *(tf_gguf_tensor *const *)b;
	return x->data < y->data ? -1 : x->data > y->data;
}

/* reads one file: its metadata (kept when keep_kv) and its tensors */
static int load_file(tf_gguf *g, const char *file, int fi, int keep_kv, int64_t *split_no, int64_t *split_n)
{
	tf_map *m = tf_map_open(file);
	cur c;
	uint32_t ver, align = 32;
	uint64_t nt, nkv, start;
	tf_gguf_kv *kv = NULL;
	tf_gguf_tensor **order = NULL;
	const tf_gguf_kv *a;
	int64_t t0 = g->nt;
	int rc = -1;

	if (!m)
		return -1;
	g->maps = tf_realloc(g->maps, (g->nfiles + 1) * sizeof *g->maps);
	g->maps[g->nfiles++] = m;
	/* an empty file is mapped as NULL: no cursor into it */
	if (m->size < 4 || memcmp(m->data, "GGUF", 4))
		return tf_err("'%s': not a GGUF file: wrong magic", file);
	c = (cur){ m->data, (const unsigned char *)m->data + m->size, file };
	c.p += 4;
	if (rd_u32(&c, &ver, "the version") < 0)
		return -1;
	if (ver != 2 && ver != 3)
		return tf_err("'%s': GGUF version %u is not read here (2 and 3 are)", file, ver);
	if (rd_u64(&c, &nt, "the tensor count") < 0 || rd_u64(&c, &nkv, "the metadata count") < 0)
		return -1;
	/* a key is at least 12 bytes, a tensor info at least 24 */
	if (nkv > (uint64_t)(c.end - c.p) / 12)
		return tf_err("'%s': truncated GGUF file: %llu metadata entries cannot fit in it", file,
			      (unsigned long long)nkv);
	if (nt > (uint64_t)(c.end - c.p) / 24)
		return tf_err("'%s': truncated GGUF file: %llu tensor infos cannot fit in it", file,
			      (unsigned long long)nt);
	kv = tf_calloc(nkv + 1, sizeof *kv);
	for (uint64_t i = 0; i < nkv; i++)
		if (read_kv(&c, &kv[i]) < 0)
			goto out;
	if (nkv > 1) {
		const tf_gguf_kv **by = tf_malloc(nkv * sizeof *by), *dup = NULL;
		for (uint64_t i = 0; i < nkv; i++)
			by[i] = &kv[i];
		qsort(by, nkv, sizeof *by, cmp_key);
		for (uint64_t i = 1; i < nkv && !dup; i++)
			if (!cmp_key(&by[i - 1], &by[i]))
				dup = by[i];
		free(by);
		if (dup) {
			tf_err("'%s': metadata '%.*s' appears twice", file, (int)(dup->key.n < 100 ? dup->key.n : 100),
			       dup->key.p);
			goto out;
		}
	}
	if ((a = find_in(kv, nkv, "general.alignment"))) {
		if (a->type != TF_GGUF_U32) {
			tf_err("'%s': general.alignment is not a u32", file);
			goto out;
		}
		memcpy(&align, a->v, 4);
		if (!align || (align & (align - 1))) {
			tf_err("'%s': general.alignment %u is not a power of two", file, align);
			goto out;
		}
	}
	*split_no = 0;
	*split_n = 1;
	if ((a = find_in(kv, nkv, "split.no")) && kv_int(a, file, split_no) < 0)
		goto out;
	if ((a = find_in(kv, nkv, "split.count")) && kv_int(a, file, split_n) < 0)
		goto out;
	g->t = tf_realloc(g->t, (g->nt + nt + 1) * sizeof *g->t);
	for (uint64_t i = 0; i < nt; i++) {
		tf_gguf_tensor *t = &g->t[g->nt];
		tf_gguf_str name;
		uint32_t nd, type;
		uint64_t n = 1, ne;
		int bsz, blk;

		memset(t, 0, sizeof *t);
		if (rd_str(&c, &name, "a tensor name") < 0)
			goto out;
		if (name.n > MAX_NAME || memchr(name.p, 0, name.n)) {
			tf_err("'%s': tensor %llu has a bad name", file, (unsigned long long)i);
			goto out;
		}
		t->name = tf_malloc(name.n + 1);
		memcpy(t->name, name.p, name.n);
		t->name[name.n] = 0;
		g->nt++;
		t->file = fi;
		if (rd_u32(&c, &nd, "a tensor info") < 0)
			goto out;
		if (nd < 1 || nd > 4) {
			tf_err("'%s': tensor '%s' has %u dimensions (1 to 4 are read)", file, t->name, nd);
			goto out;
		}
		t->ndim = nd;
		for (uint32_t d = 0; d < nd; d++) {
			if (rd_u64(&c, &ne, "a tensor info") < 0)
				goto out;
			if (ne > (1ull << 40) || (ne && n > (1ull << 48) / ne)) {
				tf_err("'%s': tensor '%s' has a bad shape", file, t->name);
				goto out;
			}
			t->ne[d] = ne;
			n *= ne;
		}
		for (uint32_t d = nd; d < 4; d++)
			t->ne[d] = 1;
		if (rd_u32(&c, &type, "a tensor info") < 0 || rd_u64(&c, &start, "a tensor info") < 0)
			goto out;
		t->type = type;
		blk = tf_ggml_block(type, &bsz);
		if (!blk) {
			tf_err("'%s': tensor '%s' has unknown type %u", file, t->name, type);
			goto out;
		}
		if (t->ne[0] % blk) {
			tf_err("'%s': tensor '%s': %lld columns are not whole %s blocks of %d", file, t->name,
			       (long long)t->ne[0], tf_ggml_type_name(type), blk);
			goto out;
		}
		t->bytes = n / blk * bsz;
		if (start % align) {
			tf_err("'%s': tensor '%s': offset %llu is not a multiple of the alignment %u", file,
			       t->name, (unsigned long long)start, align);
			goto out;
		}
		t->offset = start;      /* checked against the data below */
	}
	/* the data starts at the next multiple of the alignment */
	start = c.p - (const unsigned char *)m->data;
	start = (start + align - 1) / align * align;
	if (start > m->size && nt) {
		tf_err("'%s': truncated GGUF file: the tensor data starts past the end", file);
		goto out;
	}
	order = tf_malloc((g->nt - t0 + 1) * sizeof *order);
	for (int64_t j = t0; j < g->nt; j++) {
		tf_gguf_tensor *t = &g->t[j];
		uint64_t off = t->offset, room = m->size - start;
		if (off > room || t->bytes > room - off) {
			tf_err("'%s': tensor '%s' is out of bounds: %llu bytes at data offset %llu, the data holds %llu",
			       file, t->name, (unsigned long long)t->bytes, (unsigned long long)off,
			       (unsigned long long)room);
			goto out;
		}
		t->data = (const unsigned char *)m->data + start + off;
		order[j - t0] = t;
	}
	/* no two tensors share bytes */
	qsort(order, g->nt - t0, sizeof *order, cmp_range);
	for (int64_t j = 1; j < g->nt - t0; j++)
		if (order[j - 1]->bytes && order[j - 1]->data + order[j - 1]->bytes > order[j]->data) {
			tf_err("'%s': tensors '%s' and '%s' overlap", file, order[j - 1]->name, order[j]->name);
			goto out;
		}
	if (keep_kv) {
		g->kv = kv;
		g->nkv = nkv;
		kv = NULL;
	}
	rc = 0;
out:
	free(order);
	free(kv);
	return rc;
}

/* "NAME-00001-of-00003.gguf" (llama.cpp's llama_split_path): the prefix
 * length, the part and the count */
static int split_name(const char *base, size_t *pre, int *no, int *count)
{
	static const char form[] = "-#####-of-#####.gguf";
	size_t n = strlen(base), k = sizeof form - 1;
	const char *t = base + n - k;

	if (n <= k)
		return 0;
	for (size_t i = 0; i < k; i++)
		if (form[i] == '#' ? t[i] < '0' || t[i] > '9' : t[i] != form[i])
			return 0;
	*pre = n - k;
	*no = atoi(t + 1);
	*count = atoi(t + 10);
	return 1;
}

tf_gguf *tf_gguf_open(const char *path)
{
	tf_gguf *g = tf_calloc(1, sizeof *g);
	int64_t no, count;
	const char *dup;

	g->path = tf_strdup(path);
	if (load_file(g, path, 0, 1, &no, &count) < 0)
		goto fail;
	if (count < 1 || count > 9999 || no < 0 || no >= count) {
		tf_err("'%s': split.no %lld of split.count %lld", path, (long long)no, (long long)count);
		goto fail;
	}
	if (count > 1) {
		const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
		size_t pre;
		int fno, fcount;
		if (no != 0) {
			tf_err("'%s' is part %lld of a split model: open the first part", path, (long long)no + 1);
			goto fail;
		}
		if (!split_name(base, &pre, &fno, &fcount) || fno != 1 || fcount != count) {
			tf_err("'%s': split.count is %lld but the name is not NAME-00001-of-%05lld.gguf", path,
			       (long long)count, (long long)count);
			goto fail;
		}
		for (int i = 1; i < count; i++) {
			size_t dl = base - path;
			char *f = tf_malloc(strlen(path) + 32);
			int64_t ino, icount;
			int rc;
			sprintf(f, "%.*s%.*s-%05d-of-%05lld.gguf", (int)dl, path, (int)pre, base, i + 1,
				(long long)count);
			rc = load_file(g, f, i, 0, &ino, &icount);
			if (!rc && (ino != i || icount != count)) {
				tf_err("'%s': split.no %lld of %lld, expected %d of %lld", f, (long long)ino,
				       (long long)icount, i, (long long)count);
				rc = -1;
			}
			free(f);
			if (rc < 0)
				goto fail;
		}
	}
	if ((dup = twice(g->t, g->nt))) {
		tf_err("'%s': tensor '%s' appears twice", path, dup);
		goto fail;
	}
	return g;
fail:
	tf_gguf_close(g);
	return NULL;
}

void tf_gguf_close(tf_gguf *g)
{
	if (!g)
		return;
	for (int i = 0; i < g->nfiles; i++)
		tf_map_close(g->maps[i]);
	for (int64_t i = 0; i < g->nt; i++)
		free(g->t[i].name);
	free(g->maps);
	free(g->kv);
	free(g->t);
	free(g->path);
	free(g);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char *tf_gguf_in_dir(const char *dir, int *err)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL, *r = NULL;
	int n = 0;

	*err = 0;
	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len > 5 && !strcmp(e->d_name + len - 5, ".gguf") && e->d_name[0] != '.') {
			names = tf_realloc(names, (n + 1) * sizeof *names);
			names[n++] = tf_strdup(e->d_name);
		}
	}
	closedir(d);
	if (!n)
		return NULL;
	qsort(names, n, sizeof *names, cmp_str);
	if (n > 1) {
		size_t pre, p2;
		int no, count, no2, c2, one = split_name(names[0], &pre, &no, &count) && no == 1 && count == n;
		for (int i = 1; one && i < n; i++)
			one = split_name(names[i], &p2, &no2, &c2) && p2 == pre && c2 == count && no2 == i + 1 &&
			      !strncmp(names[i], names[0], pre);
		if (!one) {
			tf_err("'%s' holds %d GGUF files that are not one split set: name one", dir, n);
			*err = 1;
			goto out;
		}
	}
	r = tf_malloc(strlen(dir) + strlen(names[0]) + 2);
	sprintf(r, "%s/%s", dir, names[0]);
out:
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return r;
}
