/* rec.c: reading and writing tf-records(5) */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "rec.h"

/* payloads are read in pieces of this size, so memory grows only as fast
 * as bytes arrive: a header that lies about its size costs nothing */
#define CHUNK (16u << 20)

static uint16_t get16(const unsigned char *p) { return p[0] | p[1] << 8; }
static uint32_t get32(const unsigned char *p) { return get16(p) | (uint32_t)get16(p + 2) << 16; }
static uint64_t get64(const unsigned char *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }
static void put16(unsigned char *p, uint16_t v) { p[0] = v; p[1] = v >> 8; }
static void put32(unsigned char *p, uint32_t v) { put16(p, v); put16(p + 2, v >> 16); }
static void put64(unsigned char *p, uint64_t v) { put32(p, v); put32(p + 4, v >> 32); }

size_t tf_dtype_size(int dtype)
{
	return dtype == TF_DT_I32 || dtype == TF_DT_F32 ? 4 : 0;
}

int tf_rec_is_magic(const unsigned char *p)
{
	return !memcmp(p, TF_REC_MAGIC, 8);
}

/* the one dtype each kind is stored in; 0 for an unknown kind */
static int kind_dtype(int kind)
{
	switch (kind) {
	case TF_REC_IDS:
	case TF_REC_TREE:
		return TF_DT_I32;
	case TF_REC_LOGITS:
		return TF_DT_F32;
	}
	return 0;
}

static const char *kind_name(int kind)
{
	return kind == TF_REC_IDS ? "ids" : kind == TF_REC_LOGITS ? "logits" : "tree";
}

/* whether rows x cols values of dtype stay within TF_REC_MAX_BYTES; the
 * product is bounded before it is formed, since 2^31 x 2^31 x 4 wraps to 0
 * in 64 bits */
static int fits(uint32_t rows, uint32_t cols, int dtype)
{
	uint64_t per_row = (uint64_t)cols * tf_dtype_size(dtype);

	return !per_row || rows <= TF_REC_MAX_BYTES / per_row;
}

/* reads n bytes; returns bytes read, sets *err on a read error */
static size_t readn(FILE *f, void *buf, size_t n, int *err)
{
	size_t got;

	errno = 0;
	got = fread(buf, 1, n, f);
	if (got < n && ferror(f))
		*err = errno ? errno : EIO;
	return got;
}

int tf_rec_head(FILE *f, const char *name, const unsigned char *first, size_t nfirst, tf_rec *r)
{
	unsigned char h[TF_REC_HDR];
	size_t have, got;
	int err = 0;

	memset(r, 0, sizeof *r);
	if (nfirst > 8)
		nfirst = 8;
	if (nfirst)
		memcpy(h, first, nfirst);
	have = nfirst + readn(f, h + nfirst, 8 - nfirst, &err);
	if (err)
		return errno = err, tf_err("cannot read '%s':", name);
	if (have == 0)
		return 0;
	/* the magic first: input that is not records at all should say so,
	 * not that its header is short */
	if (memcmp(h, TF_REC_MAGIC, have))
		return tf_err("'%s': bad magic: not a tf-records stream", name);
	if (have < 8)
		return tf_err("'%s': truncated record header: got %zu of %d bytes", name, have, TF_REC_HDR);
	got = readn(f, h + 8, TF_REC_HDR - 8, &err);
	if (err)
		return errno = err, tf_err("cannot read '%s':", name);
	if (got < TF_REC_HDR - 8)
		return tf_err("'%s': truncated record header: got %zu of %d bytes", name, got + 8, TF_REC_HDR);
	if (get16(h + 8) != TF_REC_VERSION)
		return tf_err("'%s': record version %u is not supported (need %d)", name, get16(h + 8), TF_REC_VERSION);
	r->kind = get16(h + 10);
	r->dtype = get16(h + 12);
	if (!kind_dtype(r->kind))
		return tf_err("'%s': unknown record kind %d", name, r->kind);
	if (!tf_dtype_size(r->dtype))
		return tf_err("'%s': unknown record dtype %d", name, r->dtype);
	if (kind_dtype(r->kind) != r->dtype)
		return tf_err("'%s': %s record with dtype %d (need %d)", name, kind_name(r->kind), r->dtype,
			      kind_dtype(r->kind));
	if (get16(h + 14) != TF_REC_HDR)
		return tf_err("'%s': record header length %u, expected %d", name, get16(h + 14), TF_REC_HDR);
	if (get64(h + 40))
		return tf_err("'%s': reserved header bytes are not zero", name);
	r->rows = get32(h + 16);
	r->cols = get32(h + 20);
	r->seq = get64(h + 24);
	r->pos = get64(h + 32);
	if (!fits(r->rows, r->cols, r->dtype))
		return tf_err("'%s': record of %u x %u values is too large", name, r->rows, r->cols);
	return 1;
}

static int read_payload(FILE *f, const char *name, tf_rec *r)
{
	size_t bytes = (size_t)r->rows * r->cols * tf_dtype_size(r->dtype);
	size_t cap = bytes < CHUNK ? bytes : CHUNK, got = 0;
	unsigned char *buf = malloc(cap ? cap : 1);
	int err = 0;

	if (!buf)
		return tf_err("'%s': out of memory for a record of %zu bytes", name, bytes);
	while (got < bytes) {
		size_t want, n;

		if (got == cap) {
			size_t ncap = bytes - cap < cap ? bytes : 2 * cap;
			unsigned char *p = realloc(buf, ncap);
			if (!p) {
				free(buf);
				return tf_err("'%s': out of memory for a record of %zu bytes", name, bytes);
			}
			buf = p;
			cap = ncap;
		}
		want = cap - got;
		n = readn(f, buf + got, want, &err);
		got += n;
		if (n < want)
			break;
	}
	if (err || got < bytes) {
		free(buf);
		if (err)
			return errno = err, tf_err("cannot read '%s':", name);
		return tf_err("'%s': truncated record %llu: got %zu of %zu payload bytes", name,
			      (unsigned long long)r->seq, got, bytes);
	}
	r->data = buf;
	return 1;
}

int tf_rec_read_after(FILE *f, const char *name, const unsigned char *first, tf_rec *r)
{
	int rc = tf_rec_head(f, name, first, first ? 8 : 0, r);

	return rc <= 0 ? rc : read_payload(f, name, r);
}

int tf_rec_read(FILE *f, const char *name, tf_rec *r)
{
	return tf_rec_read_after(f, name, NULL, r);
}

int tf_rec_write_header(FILE *f, int kind, int dtype, uint32_t rows, uint32_t cols,
			uint64_t seq, uint64_t pos)
{
	unsigned char h[TF_REC_HDR] = { 0 };

	/* never write what a reader must reject */
	if (!kind_dtype(kind) || kind_dtype(kind) != dtype)
		return tf_err("cannot write a record of kind %d with dtype %d", kind, dtype);
	if (!fits(rows, cols, dtype))
		return tf_err("cannot write a record of %u x %u values: too large", rows, cols);
	memcpy(h, TF_REC_MAGIC, 8);
	put16(h + 8, TF_REC_VERSION);
	put16(h + 10, kind);
	put16(h + 12, dtype);
	put16(h + 14, TF_REC_HDR);
	put32(h + 16, rows);
	put32(h + 20, cols);
	put64(h + 24, seq);
	put64(h + 32, pos);
	if (fwrite(h, 1, sizeof h, f) != sizeof h)
		return tf_err("cannot write record:");
	return 0;
}

int tf_rec_write(FILE *f, int kind, int dtype, uint32_t rows, uint32_t cols,
		 uint64_t seq, uint64_t pos, const void *data)
{
	size_t bytes = (size_t)rows * cols * tf_dtype_size(dtype);

	if (tf_rec_write_header(f, kind, dtype, rows, cols, seq, pos) < 0)
		return -1;
	if (bytes && fwrite(data, 1, bytes, f) != bytes)
		return tf_err("cannot write record:");
	return 0;
}

void tf_rec_free(tf_rec *r)
{
	free(r->data);
	r->data = NULL;
}
