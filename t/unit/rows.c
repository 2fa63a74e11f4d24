/* rows: logits streams read a row at a time (records, bare float32) */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "io/rec.h"
#include "io/rows.h"
#include "tap.h"

static char path[4096];

/* the file at path, written from f (a tmpfile) */
static void save(FILE *f)
{
	char buf[1 << 16];
	size_t n;
	FILE *o = fopen(path, "wb");

	rewind(f);
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		fwrite(buf, 1, n, o);
	fclose(o);
	fclose(f);
}

static void save_bytes(const void *p, size_t n)
{
	FILE *o = fopen(path, "wb");

	fwrite(p, 1, n, o);
	fclose(o);
}

/* every row of path: count, checks each against x (rows, cols) and the
 * positions against pos[] when given; returns the last tf_rows_next result */
static int read_rows(uint32_t raw, const float *x, uint32_t cols, const uint64_t *seq, const uint64_t *pos,
		     uint64_t *nrows)
{
	tf_rows r;
	int rc;

	*nrows = 0;
	if (tf_rows_open(&r, path, raw) < 0)
		return -2;
	while ((rc = tf_rows_next(&r)) > 0) {
		uint64_t i = *nrows;
		if (r.cols != cols || memcmp(r.row, x + i * cols, cols * sizeof *x) ||
		    (seq && (r.seq != seq[i] || r.pos != pos[i]))) {
			diag("row %llu differs (cols %u, seq %llu, pos %llu)", (unsigned long long)i, r.cols,
			     (unsigned long long)r.seq, (unsigned long long)r.pos);
			rc = -3;
			break;
		}
		(*nrows)++;
	}
	tf_rows_close(&r);
	return rc;
}

int main(void)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	float x[6][4];          /* (rows, cols) */
	uint64_t n;
	FILE *f;
	int fd;

	snprintf(path, sizeof path, "%s/rows.XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0)
		return 1;
	close(fd);
	for (int i = 0; i < 6; i++)
		for (int j = 0; j < 4; j++)
			x[i][j] = i * 10 + j + 0.25f;

	/* records: two sequences in one record each, then the same a row at a time */
	f = tmpfile();
	tf_rec_write(f, TF_REC_LOGITS, TF_DT_F32, 2, 4, 0, 0, x[0]);
	tf_rec_write(f, TF_REC_LOGITS, TF_DT_F32, 0, 7, 9, 0, NULL);   /* empty: skipped, width ignored */
	tf_rec_write(f, TF_REC_LOGITS, TF_DT_F32, 4, 4, 1, 3, x[2]);
	save(f);
	{
		const uint64_t seq[] = { 0, 0, 1, 1, 1, 1 }, pos[] = { 0, 1, 3, 4, 5, 6 };
		ok(read_rows(0, x[0], 4, seq, pos, &n) == 0 && n == 6, "records: rows, seq and pos");
		ok(read_rows(4, x[0], 4, seq, pos, &n) == 0 && n == 6, "records with --raw given are still records");
	}
	f = tmpfile();
	for (int i = 0; i < 6; i++)
		tf_rec_write(f, TF_REC_LOGITS, TF_DT_F32, 1, 4, i / 3, i % 3, x[i]);
	save(f);
	{
		const uint64_t seq[] = { 0, 0, 0, 1, 1, 1 }, pos[] = { 0, 1, 2, 0, 1, 2 };
		ok(read_rows(0, x[0], 4, seq, pos, &n) == 0 && n == 6, "one record a row");
	}

	/* bare float32 */
	save_bytes(x, sizeof x);
	ok(read_rows(4, x[0], 4, NULL, NULL, &n) == 0 && n == 6, "raw rows of 4");
	ok(read_rows(8, x[0], 8, NULL, NULL, &n) == 0 && n == 3, "raw rows of 8");
	ok(read_rows(0, x[0], 4, NULL, NULL, &n) == -1 && strstr(tf_errmsg(), "bad magic"),
	   "raw without a width is bad magic");
	ok(read_rows(5, x[0], 5, NULL, NULL, &n) == -1 && n == 4 &&
	   strstr(tf_errmsg(), "truncated: 16 bytes after 4 whole rows of 5"),
	   "raw stream not a whole number of rows: %s", tf_errmsg());
	save_bytes(x, 4);
	ok(read_rows(1, x[0], 1, NULL, NULL, &n) == 0 && n == 1, "raw stream shorter than the magic");
	save_bytes(x, 6);
	ok(read_rows(1, x[0], 1, NULL, NULL, &n) == -1 && n == 1, "raw stream of 6 bytes: one row, then short");
	save_bytes(x, 0);
	ok(read_rows(4, x[0], 4, NULL, NULL, &n) == 0 && n == 0, "empty raw stream");
	ok(read_rows(0, x[0], 4, NULL, NULL, &n) == 0 && n == 0, "empty records stream");

	/* damage */
	f = tmpfile();
	tf_rec_write(f, TF_REC_LOGITS, TF_DT_F32, 2, 4, 0, 0, x[0]);
	tf_rec_write(f, TF_REC_LOGITS, TF_DT_F32, 1, 3, 1, 0, x[2]);
	save(f);
	ok(read_rows(0, x[0], 4, NULL, NULL, &n) == -1 && n == 2 &&
	   strstr(tf_errmsg(), "record 1 has 3 values a row, earlier rows 4"), "width changes between records");
	f = tmpfile();
	{
		int32_t ids[2] = { 1, 2 };
		tf_rec_write(f, TF_REC_IDS, TF_DT_I32, 2, 1, 0, 0, ids);
	}
	save(f);
	ok(read_rows(0, x[0], 1, NULL, NULL, &n) == -1 && strstr(tf_errmsg(), "record 0 is not a logits record"),
	   "ids record in a logits stream");
	f = tmpfile();
	tf_rec_write(f, TF_REC_LOGITS, TF_DT_F32, 3, 4, 5, 0, x[0]);
	fflush(f);
	if (ftruncate(fileno(f), 48 + 16 + 16 + 8) < 0)
		return 1;
	save(f);
	ok(read_rows(0, x[0], 4, NULL, NULL, &n) == -1 && n == 2 &&
	   strstr(tf_errmsg(), "truncated record 5: got 8 of 16 bytes of the row at position 2"),
	   "record cut inside a row: %s", tf_errmsg());
	f = tmpfile();
	tf_rec_write(f, TF_REC_LOGITS, TF_DT_F32, 1, 0, 0, 0, NULL);
	save(f);
	ok(read_rows(0, x[0], 4, NULL, NULL, &n) == -1 && strstr(tf_errmsg(), "rows of 0 values"),
	   "logits rows of no values");
	unlink(path);
	{
		tf_rows r;
		ok(tf_rows_open(&r, path, 0) == -1 && strstr(tf_errmsg(), "cannot open"), "missing file");
	}
	return done();
}
