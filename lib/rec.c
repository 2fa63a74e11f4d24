/* rec.c: reading and writing tf-records(5) */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "rec.h"

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

/* reads n bytes; returns bytes read, sets *err on a read error */
static size_t readn(FILE *f, void *buf, size_t n, int *err)
{
	size_t got = fread(buf, 1, n, f);

	if (got < n && ferror(f))
		*err = errno ? errno : EIO;
	return got;
}

int tf_rec_read_after(FILE *f, const char *name, const unsigned char *first, tf_rec *r)
{
	unsigned char h[TF_REC_HDR];
	size_t got, bytes;
	int err = 0;

	memset(r, 0, sizeof *r);
	memcpy(h, first, 8);
	got = readn(f, h + 8, TF_REC_HDR - 8, &err);
	if (err)
		return errno = err, tf_err("cannot read '%s':", name);
	if (got < TF_REC_HDR - 8)
		return tf_err("'%s': truncated record header: got %zu of %d bytes", name, got + 8, TF_REC_HDR);
	if (memcmp(h, TF_REC_MAGIC, 8))
		return tf_err("'%s': bad magic: not a tf-records stream", name);
	if (get16(h + 8) != TF_REC_VERSION)
		return tf_err("'%s': record version %u is not supported (need %d)", name, get16(h + 8), TF_REC_VERSION);
	r->kind = get16(h + 10);
	r->dtype = get16(h + 12);
	if (r->kind < TF_REC_IDS || r->kind > TF_REC_TREE)
		return tf_err("'%s': unknown record kind %d", name, r->kind);
	if (!tf_dtype_size(r->dtype))
		return tf_err("'%s': unknown record dtype %d", name, r->dtype);
	if (get16(h + 14) != TF_REC_HDR)
		return tf_err("'%s': record header length %u, expected %d", name, get16(h + 14), TF_REC_HDR);
	if (get64(h + 40))
		return tf_err("'%s': reserved header bytes are not zero", name);
	r->rows = get32(h + 16);
	r->cols = get32(h + 20);
	r->seq = get64(h + 24);
	r->pos = get64(h + 32);
	if ((uint64_t)r->rows * r->cols > (1ull << 32))
		return tf_err("'%s': record of %u x %u values is too large", name, r->rows, r->cols);
	bytes = (size_t)r->rows * r->cols * tf_dtype_size(r->dtype);
	r->data = malloc(bytes ? bytes : 1);
	if (!r->data)
		return tf_err("'%s': out of memory for a record of %zu bytes", name, bytes);
	got = readn(f, r->data, bytes, &err);
	if (err || got < bytes) {
		free(r->data);
		r->data = NULL;
		if (err)
			return errno = err, tf_err("cannot read '%s':", name);
		return tf_err("'%s': truncated record %llu: got %zu of %zu payload bytes", name,
			      (unsigned long long)r->seq, got, bytes);
	}
	return 1;
}

int tf_rec_read(FILE *f, const char *name, tf_rec *r)
{
	unsigned char first[8];
	size_t got;
	int err = 0;

	got = readn(f, first, 8, &err);
	if (err)
		return errno = err, tf_err("cannot read '%s':", name);
	if (got == 0)
		return 0;
	if (got < 8)
		return tf_err("'%s': truncated record header: got %zu of %d bytes", name, got, TF_REC_HDR);
	return tf_rec_read_after(f, name, first, r);
}

int tf_rec_write_header(FILE *f, int kind, int dtype, uint32_t rows, uint32_t cols,
			uint64_t seq, uint64_t pos)
{
	unsigned char h[TF_REC_HDR] = { 0 };

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
		return tf_err("write error:");
	return 0;
}

int tf_rec_write(FILE *f, int kind, int dtype, uint32_t rows, uint32_t cols,
		 uint64_t seq, uint64_t pos, const void *data)
{
	size_t bytes = (size_t)rows * cols * tf_dtype_size(dtype);

	if (tf_rec_write_header(f, kind, dtype, rows, cols, seq, pos) < 0)
		return -1;
	if (fwrite(data, 1, bytes, f) != bytes)
		return tf_err("write error:");
	return 0;
}

void tf_rec_free(tf_rec *r)
{
	free(r->data);
	r->data = NULL;
}
