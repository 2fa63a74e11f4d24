/* records: tf-records(5) reading and writing, good and damaged */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "io/rec.h"
#include "tap.h"

/* a stream holding the n bytes at p, positioned at its start */
static FILE *stream(const void *p, size_t n)
{
	FILE *f = tmpfile();

	if (!f || fwrite(p, 1, n, f) != n)
		abort();
	rewind(f);
	return f;
}

static void put16(unsigned char *p, unsigned v) { p[0] = v; p[1] = v >> 8; }
static void put32(unsigned char *p, uint32_t v) { put16(p, v); put16(p + 2, v >> 16); }

/* a valid logits header for (rows, cols) */
static void header(unsigned char *h, uint32_t rows, uint32_t cols)
{
	memset(h, 0, TF_REC_HDR);
	memcpy(h, TF_REC_MAGIC, 8);
	put16(h + 8, 1);
	put16(h + 10, TF_REC_LOGITS);
	put16(h + 12, TF_DT_F32);
	put16(h + 14, 48);
	put32(h + 16, rows);
	put32(h + 20, cols);
}

/* reads one record from the n bytes at p; returns what tf_rec_read did */
static int read_bytes(const void *p, size_t n)
{
	FILE *f = stream(p, n);
	tf_rec r;
	int rc = tf_rec_read(f, "t", &r);

	if (rc > 0)
		tf_rec_free(&r);
	fclose(f);
	return rc;
}

static int fails_with(const void *p, size_t n, const char *want)
{
	int rc = read_bytes(p, n);

	if (rc != -1 || !strstr(tf_errmsg(), want)) {
		diag("rc %d, message '%s', wanted '%s'", rc, tf_errmsg(), want);
		return 0;
	}
	return 1;
}

int main(void)
{
	unsigned char h[TF_REC_HDR + 64];
	int32_t ids[3] = { 7, 0, 2147483647 };
	float logits[2][5] = { { 1, -2, 3.5f, 0, -0.0f }, { 1e30f, -1e-30f, 2, 3, 4 } };
	int32_t tree[2][4] = { { 5, 6, 7, 8 }, { -1, 0, 0, 1 } };
	tf_rec r;
	FILE *f;

	/* round trip: three kinds, fields and payloads, then a clean end */
	f = tmpfile();
	ok(tf_rec_write(f, TF_REC_IDS, TF_DT_I32, 3, 1, 0, 0, ids) == 0, "write ids record");
	ok(tf_rec_write(f, TF_REC_LOGITS, TF_DT_F32, 2, 5, 4, 17, logits) == 0, "write logits record");
	ok(tf_rec_write(f, TF_REC_TREE, TF_DT_I32, 2, 4, 1ull << 40, 3, tree) == 0, "write tree record");
	ok(tf_rec_write(f, TF_REC_LOGITS, TF_DT_F32, 0, 5, 5, 0, NULL) == 0, "write empty record");
	ok(ftell(f) == 4 * 48 + 12 + 40 + 32, "records take header plus payload bytes");
	rewind(f);
	ok(tf_rec_read(f, "t", &r) == 1 && r.kind == TF_REC_IDS && r.dtype == TF_DT_I32 && r.rows == 3 &&
	   r.cols == 1 && r.seq == 0 && r.pos == 0 && !memcmp(r.data, ids, sizeof ids), "ids record reads back");
	tf_rec_free(&r);
	ok(tf_rec_read(f, "t", &r) == 1 && r.kind == TF_REC_LOGITS && r.dtype == TF_DT_F32 && r.rows == 2 &&
	   r.cols == 5 && r.seq == 4 && r.pos == 17 && !memcmp(r.data, logits, sizeof logits),
	   "logits record reads back bit for bit");
	tf_rec_free(&r);
	ok(tf_rec_read(f, "t", &r) == 1 && r.kind == TF_REC_TREE && r.seq == 1ull << 40 && r.pos == 3 &&
	   !memcmp(r.data, tree, sizeof tree), "tree record reads back with a 64-bit seq");
	tf_rec_free(&r);
	ok(tf_rec_read(f, "t", &r) == 1 && r.rows == 0 && r.seq == 5, "empty record reads back");
	tf_rec_free(&r);
	ok(tf_rec_read(f, "t", &r) == 0, "clean end of stream");
	fclose(f);

	/* the byte layout is the one tf-records(5) gives */
	f = tmpfile();
	tf_rec_write(f, TF_REC_LOGITS, TF_DT_F32, 2, 5, 4, 17, logits);
	rewind(f);
	{
		unsigned char want[48];
		header(want, 2, 5);
		want[24] = 4;           /* seq */
		want[32] = 17;          /* pos */
		ok(fread(h, 1, 48, f) == 48 && !memcmp(h, want, 48),
		   "header bytes: magic, 1, 2, 2, 48, rows, cols, seq, pos, 0");
		ok(fread(h, 1, 40, f) == 40 && !memcmp(h, logits, 40), "payload: the float32 values, row-major");
	}
	fclose(f);

	ok(read_bytes("", 0) == 0, "empty stream is a clean end");

	header(h, 1, 1);
	memcpy(h, "\x89TFX\r\n\x1a\n", 8);
	ok(fails_with(h, 52, "bad magic"), "bad magic");
	header(h, 1, 1);
	h[4] = '\n';            /* CRLF turned into LF */
	ok(fails_with(h, 52, "bad magic"), "magic damaged by text-mode conversion");
	ok(fails_with("12 34\n", 6, "bad magic"), "short text input is bad magic, not a short header");
	ok(fails_with("\x89TF", 3, "truncated record header: got 3 of 48"), "three bytes of magic");

	header(h, 1, 1);
	put16(h + 8, 2);
	ok(fails_with(h, 52, "version 2 is not supported"), "bad version");
	header(h, 1, 1);
	put16(h + 8, 0);
	ok(fails_with(h, 52, "version 0"), "version 0");

	header(h, 1, 1);
	put16(h + 10, 7);
	ok(fails_with(h, 52, "unknown record kind 7"), "unknown kind");
	header(h, 1, 1);
	put16(h + 10, 0);
	ok(fails_with(h, 52, "unknown record kind 0"), "kind 0");
	header(h, 1, 1);
	put16(h + 12, 3);
	ok(fails_with(h, 52, "unknown record dtype 3"), "unknown dtype");
	header(h, 1, 1);
	put16(h + 12, TF_DT_I32);
	ok(fails_with(h, 52, "logits record with dtype 1"), "logits stored as int32");
	header(h, 1, 1);
	put16(h + 10, TF_REC_IDS);
	ok(fails_with(h, 52, "ids record with dtype 2"), "ids stored as float32");
	header(h, 1, 1);
	put16(h + 14, 64);
	ok(fails_with(h, 52 + 16, "header length 64"), "header length other than 48");

	for (int i = 40; i < 48; i++) {
		header(h, 1, 1);
		h[i] = 1;
		if (!fails_with(h, 52, "reserved header bytes"))
			break;
		if (i == 47)
			ok(1, "nonzero reserved byte, each of the 8");
	}

	header(h, 1, 1);
	ok(fails_with(h, 20, "truncated record header: got 20 of 48"), "truncated header");
	ok(fails_with(h, 8, "truncated record header: got 8 of 48"), "magic alone");
	ok(fails_with(h, 47, "truncated record header: got 47 of 48"), "header one byte short");

	header(h, 2, 5);
	ok(fails_with(h, 48 + 12, "truncated record 0: got 12 of 40 payload bytes"), "short payload");
	ok(fails_with(h, 48, "got 0 of 40"), "missing payload");
	ok(read_bytes(h, 48 + 40) == 1, "whole payload reads");

	header(h, 0xffffffffu, 0xffffffffu);
	ok(fails_with(h, 48, "too large"), "huge dimensions");
	header(h, 1, 0xffffffffu);
	ok(fails_with(h, 48, "truncated record 0: got 0 of"), "a row of 2^32-1 values within the cap: short, no crash");
	header(h, 1u << 16, (1u << 16) + 1);
	ok(fails_with(h, 48, "too large"), "just over 2^34 bytes");
	header(h, 1u << 16, 1u << 16);
	ok(fails_with(h, 48 + 64, "truncated record 0: got 64 of 17179869184"),
	   "exactly 2^34 bytes claimed, 64 there: truncated, memory only as bytes arrive");

	/* the writer refuses what a reader would reject */
	f = tmpfile();
	ok(tf_rec_write(f, TF_REC_LOGITS, TF_DT_I32, 1, 1, 0, 0, ids) == -1, "writer refuses int32 logits");
	ok(tf_rec_write(f, 9, TF_DT_I32, 1, 1, 0, 0, ids) == -1, "writer refuses unknown kind");
	ok(tf_rec_write(f, TF_REC_LOGITS, TF_DT_F32, 1u << 16, (1u << 16) + 1, 0, 0, logits) == -1,
	   "writer refuses records over 2^34 bytes");
	ok(ftell(f) == 0, "and writes nothing");
	fclose(f);

	f = fopen("/dev/full", "w");
	if (f) {
		setvbuf(f, NULL, _IONBF, 0);
		ok(tf_rec_write(f, TF_REC_LOGITS, TF_DT_F32, 2, 5, 0, 0, logits) == -1 &&
		   strstr(tf_errmsg(), "cannot write record"), "write error is reported: %s", tf_errmsg());
		fclose(f);
	} else {
		ok(1, "# SKIP no /dev/full");
	}

	/* tf_rec_head stops at the payload; tf_rec_read_after takes the magic */
	f = tmpfile();
	tf_rec_write(f, TF_REC_LOGITS, TF_DT_F32, 2, 5, 9, 1, logits);
	tf_rec_write(f, TF_REC_IDS, TF_DT_I32, 3, 1, 10, 0, ids);
	rewind(f);
	{
		float row[5];
		unsigned char first[8];
		ok(tf_rec_head(f, "t", NULL, 0, &r) == 1 && r.rows == 2 && r.cols == 5 && r.seq == 9 && !r.data,
		   "header alone");
		ok(fread(row, 4, 5, f) == 5 && !memcmp(row, logits[0], sizeof row), "stream left at the payload");
		fseek(f, 20, SEEK_CUR);
		ok(fread(first, 1, 8, f) == 8 && tf_rec_read_after(f, "t", first, &r) == 1 && r.kind == TF_REC_IDS &&
		   r.rows == 3 && !memcmp(r.data, ids, sizeof ids), "read after the magic was taken");
		tf_rec_free(&r);
	}
	fclose(f);
	return done();
}
