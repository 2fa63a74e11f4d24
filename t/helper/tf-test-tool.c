/*
 * tf-test-tool: library pieces as small commands, for the shell tests.
 *
 *   tf-test-tool raw2rec [-s] COLS [LEN...] < rows.f32 > logits.rec
 *       bare float32 rows of COLS values to logits records: one record per
 *       LEN rows (sequence 0, 1, ... at position 0), or one record of every
 *       row without LENs; -s writes one record per row (as a model decoding
 *       step by step would), at its position within its sequence
 *   tf-test-tool ids2rec < ids.txt > ids.rec
 *       token ids, text or records, to ids records (one per sequence)
 *   tf-test-tool ids2text < ids > ids.txt
 *       token ids, text or records, to text lines
 *   tf-test-tool hidden MODEL < ids > rows.f32
 *       the model's last hidden states after its final norm (what the head
 *       multiplies, what the MTP head feeds on) at every position of each
 *       line, bare float32 rows of H values, line after line (the CPU, a
 *       prompt pass of each line)
 *
 * Binary output is refused on a terminal.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "base/pool.h"
#include "decode/decoder.h"
#include "io/ids.h"
#include "io/out.h"
#include "io/rec.h"

static void usage(void)
{
	tf_usage_die("usage: tf-test-tool raw2rec [-s] COLS [LEN...] | ids2rec | ids2text | hidden MODEL");
}

static unsigned long number(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (end == s || *end || s[0] == '-')
		tf_usage_die("'%s' is not a number", s);
	return v;
}

/* all of stdin */
static unsigned char *slurp(size_t *len)
{
	size_t cap = 1 << 16, n = 0, got;
	unsigned char *buf = tf_malloc(cap);

	while ((got = fread(buf + n, 1, cap - n, stdin)) > 0) {
		n += got;
		if (n == cap)
			buf = tf_realloc(buf, cap *= 2);
	}
	if (ferror(stdin))
		tf_die("cannot read stdin:");
	*len = n;
	return buf;
}

/* one sequence of n rows x (n, cols) as one record, or one record a row */
static void write_seq(FILE *f, int step, size_t cols, uint64_t seq, size_t n, const float *x)
{
	if (!step) {
		if (tf_rec_write(f, TF_REC_LOGITS, TF_DT_F32, n, cols, seq, 0, x) < 0)
			tf_die_err();
		return;
	}
	for (size_t t = 0; t < n; t++)
		if (tf_rec_write(f, TF_REC_LOGITS, TF_DT_F32, 1, cols, seq, t, x + t * cols) < 0)
			tf_die_err();
}

static int raw2rec(int argc, char **argv)
{
	tf_out out;
	int step = 0;
	size_t len, rows, cols, done = 0;
	unsigned char *data;
	float *x;

	if (argc > 1 && !strcmp(argv[1], "-s")) {
		step = 1;
		argc--;
		argv++;
	}
	if (argc < 2)
		usage();
	cols = number(argv[1]);
	if (!cols)
		tf_usage_die("COLS must be at least 1");
	data = slurp(&len);
	if (len % (4 * cols))
		tf_die("stdin holds %zu bytes, not whole rows of %zu float32 values", len, cols);
	rows = len / (4 * cols);
	x = (float *)data;      /* (rows, cols) */
	if (tf_out_open(&out, "-", 1, 0) < 0)
		tf_die_err();
	if (argc == 2)
		write_seq(out.f, step, cols, 0, rows, x);
	for (int s = 0; s < argc - 2; s++) {
		size_t n = number(argv[2 + s]);
		if (n > rows - done)
			tf_die("the LENs ask for more than the %zu rows", rows);
		write_seq(out.f, step, cols, s, n, x + done * cols);
		done += n;
	}
	if (argc > 2 && done < rows)
		tf_die("the LENs cover %zu of %zu rows", done, rows);
	free(data);
	if (tf_out_close(&out) < 0)
		tf_die_err();
	return 0;
}

static int ids_convert(int binary)
{
	tf_ids_reader r;
	tf_seq s = { 0 };
	tf_out out;
	uint64_t n = 0;
	int rc;

	if (tf_out_open(&out, "-", binary, 0) < 0)
		tf_die_err();
	tf_ids_open(&r, stdin, "-");
	while ((rc = tf_ids_next(&r, &s, 0)) > 0) {
		if (binary) {
			if (tf_rec_write(out.f, TF_REC_IDS, TF_DT_I32, s.n, 1, n, 0, s.ids) < 0)
				tf_die_err();
		} else {
			for (size_t i = 0; i < s.n; i++)
				fprintf(out.f, "%s%d", i ? " " : "", s.ids[i]);
			fputc('\n', out.f);
		}
		n++;
	}
	if (rc < 0)
		tf_die_err();
	tf_seq_free(&s);
	tf_ids_close(&r);
	if (tf_out_close(&out) < 0)
		tf_die_err();
	return 0;
}

static int hidden(const char *path)
{
	tf_model *m;
	tf_decoder *d;
	tf_ids_reader r;
	tf_seq s = { 0 };
	tf_out out;
	int rc;

	tf_pool_init(0);
	if (!(m = tf_model_open(path)) || !(d = tf_decoder_new(m)))
		tf_die_err();
	if (tf_out_open(&out, "-", 1, 0) < 0)
		tf_die_err();
	tf_ids_open(&r, stdin, "-");
	while ((rc = tf_ids_next(&r, &s, m->c.vocab)) > 0) {
		int64_t first, n;
		const float *h;
		tf_decoder_reset(d);
		if (tf_decoder_keep_hidden(d) < 0 || tf_decoder_forward(d, s.ids, s.n, NULL, TF_FWD_CHUNKED) < 0)
			tf_die_err();
		h = tf_decoder_hidden(d, &first, &n);
		if (n && fwrite(h, sizeof *h * m->c.hidden, n, out.f) != (size_t)n)
			tf_die("write error:");
	}
	if (rc < 0)
		tf_die_err();
	tf_seq_free(&s);
	tf_ids_close(&r);
	tf_decoder_free(d);
	tf_model_close(m);
	if (tf_out_close(&out) < 0)
		tf_die_err();
	return 0;
}

int main(int argc, char **argv)
{
	tf_prog = "tf-test-tool";
	tf_out_init();
	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "raw2rec"))
		return raw2rec(argc - 1, argv + 1);
	if (!strcmp(argv[1], "ids2rec") && argc == 2)
		return ids_convert(1);
	if (!strcmp(argv[1], "ids2text") && argc == 2)
		return ids_convert(0);
	if (!strcmp(argv[1], "hidden") && argc == 3)
		return hidden(argv[2]);
	usage();
}
