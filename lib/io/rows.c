/* rows.c: logits streams, records or bare float32, one row at a time */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "rec.h"
#include "rows.h"

/* payloads are little-endian float32 and rows are used as read */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "tf-records payloads are little-endian; this host is not"
#endif

int tf_rows_open(tf_rows *r, const char *path, uint32_t raw_cols)
{
	memset(r, 0, sizeof *r);
	r->raw = -1;
	r->raw_cols = raw_cols;
	if (!strcmp(path, "-")) {
		r->f = stdin;
	} else if (!(r->f = fopen(path, "rb"))) {
		return tf_err("cannot open '%s':", path);
	}
	r->name = tf_strdup(path);
	return 0;
}

void tf_rows_close(tf_rows *r)
{
	if (r->f && r->f != stdin)
		fclose(r->f);
	free(r->name);
	free(r->row);
	memset(r, 0, sizeof *r);
}

/* reads up to n bytes, first from the bytes peeked at the start */
static size_t take(tf_rows *r, void *buf, size_t n, int *err)
{
	size_t got = 0;

	if (r->npeek) {
		got = n < r->npeek ? n : r->npeek;
		memcpy(buf, r->peek, got);
		memmove(r->peek, r->peek + got, r->npeek - got);
		r->npeek -= got;
	}
	if (got < n) {
		errno = 0;
		got += fread((char *)buf + got, 1, n - got, r->f);
		if (got < n && ferror(r->f))
			*err = errno ? errno : EIO;
	}
	return got;
}

static int set_cols(tf_rows *r, uint32_t cols)
{
	if (cols == 0)
		return tf_err("'%s': logits rows of 0 values", r->name);
	/* a row is held whole, so its width is bounded before the header's
	 * word for it is taken: 2^24 values, past any vocabulary */
	if (cols > 1u << 24)
		return tf_err("'%s': logits rows of %u values: more than any vocabulary (%u)", r->name, cols,
			      1u << 24);
	r->cols = cols;
	r->row = malloc((size_t)cols * sizeof *r->row);
	if (!r->row)
		return tf_err("'%s': out of memory for a row of %u values", r->name, cols);
	return 0;
}

/* decides between records and bare float32 from the first 8 bytes */
static int sniff(tf_rows *r)
{
	errno = 0;
	r->npeek = fread(r->peek, 1, 8, r->f);
	if (r->npeek < 8 && ferror(r->f)) {
		if (!errno)
			errno = EIO;
		return tf_err("cannot read '%s':", r->name);
	}
	if (r->raw_cols && (r->npeek < 8 || !tf_rec_is_magic(r->peek))) {
		r->raw = 1;
		return set_cols(r, r->raw_cols);
	}
	r->raw = 0;
	return 0;
}

/* moves to a record with rows left; returns 1, 0 at the end, -1 */
static int next_record(tf_rows *r)
{
	while (!r->left) {
		tf_rec h;
		int rc = tf_rec_head(r->f, r->name, r->peek, r->npeek, &h);

		r->npeek = 0;
		if (rc <= 0)
			return rc;
		if (h.kind != TF_REC_LOGITS)
			return tf_err("'%s': record %llu is not a logits record", r->name,
				      (unsigned long long)h.seq);
		if (!h.rows)
			continue;
		if (!r->cols) {
			if (set_cols(r, h.cols) < 0)
				return -1;
		} else if (h.cols != r->cols) {
			return tf_err("'%s': record %llu has %u values a row, earlier rows %u", r->name,
				      (unsigned long long)h.seq, h.cols, r->cols);
		}
		r->left = h.rows;
		r->rec_seq = h.seq;
		r->next_pos = h.pos;
	}
	return 1;
}

int tf_rows_next(tf_rows *r)
{
	size_t bytes, got;
	int err = 0, rc;

	if (r->raw < 0 && sniff(r) < 0)
		return -1;
	if (!r->raw && (rc = next_record(r)) <= 0)
		return rc;
	bytes = (size_t)r->cols * sizeof *r->row;
	got = take(r, r->row, bytes, &err);
	if (err)
		return errno = err, tf_err("cannot read '%s':", r->name);
	if (r->raw) {
		if (got == 0)
			return 0;
		if (got < bytes)
			return tf_err("'%s': truncated: %zu bytes after %llu whole rows of %u float32 values",
				      r->name, got, (unsigned long long)r->n, r->cols);
	} else {
		if (got < bytes)
			return tf_err("'%s': truncated record %llu: got %zu of %zu bytes of the row at position %llu",
				      r->name, (unsigned long long)r->rec_seq, got, bytes,
				      (unsigned long long)r->next_pos);
		r->left--;
		r->seq = r->rec_seq;
		r->pos = r->next_pos++;
	}
	r->n++;
	return 1;
}
