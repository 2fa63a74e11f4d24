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
 *   tf-test-tool weights MODEL > weights.bin
 *       every weight of the loaded model as the forward sees it, dequantized:
 *       for each, a line "NAME ROWS COLS" then ROWS x COLS float32 (the
 *       norms as the factor they multiply by, the DeltaNet's A as -exp(A_log))
 *   tf-test-tool hidden MODEL < ids > rows.f32
 *       the model's last hidden states after its final norm (what the head
 *       multiplies, what the MTP head feeds on) at every position of each
 *       line, bare float32 rows of H values, line after line (the CPU, a
 *       prompt pass of each line)
 *
 * Binary output is refused on a terminal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "base/pool.h"
#include "decode/decoder.h"
#include "io/ids.h"
#include "io/out.h"
#include "io/rec.h"
#include "model/model.h"

static void usage(void)
{
	tf_usage_die("usage: tf-test-tool raw2rec [-s] COLS [LEN...] | ids2rec | ids2text | weights MODEL | hidden MODEL");
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

static void put_floats(const char *name, int64_t rows, int64_t cols, const float *v)
{
	printf("%s %lld %lld\n", name, (long long)rows, (long long)cols);
	fwrite(v, sizeof *v, rows * cols, stdout);
}

static void put_weight(const char *name, const tf_weight *w)
{
	float *row = tf_malloc(w->cols * sizeof *row);

	printf("%s %lld %lld\n", name, (long long)w->rows, (long long)w->cols);
	for (int64_t r = 0; r < w->rows; r++) {
		tf_weight_row(w, r, row);
		fwrite(row, sizeof *row, w->cols, stdout);
	}
	free(row);
}

static int weights(const char *path)
{
	tf_model *m = tf_model_open(path);
	const tf_config *c;
	char n[128];

	if (!m)
		tf_die_err();
	if (isatty(1))
		tf_die("will not write binary to a terminal");
	c = &m->c;
	put_weight("embed_tokens", &m->embed);
	put_weight("lm_head", &m->head);
	put_floats("norm", 1, c->hidden, m->norm);
	for (int i = 0; i < c->layers; i++) {
		const tf_layer *l = &m->layer[i];
		int64_t Hv = c->lin_v_heads, D = c->head_dim;
#define W(x) (snprintf(n, sizeof n, "layers.%d." #x, i), put_weight(n, &l->x))
#define V(x, len) (snprintf(n, sizeof n, "layers.%d." #x, i), put_floats(n, 1, len, l->x))
		V(in_norm, c->hidden); V(post_norm, c->hidden);
		W(gate); W(up); W(down);
		if (l->full) {
			W(q_proj); W(k_proj); W(v_proj); W(o_proj); V(q_norm, D); V(k_norm, D);
		} else {
			W(in_qkv); W(in_z); W(in_b); W(in_a); W(out_proj);
			V(conv, (int64_t)m->conv_dim * c->conv_k); V(A, Hv); V(dt_bias, Hv);
			V(gnorm, c->lin_v_dim);
		}
#undef W
#undef V
	}
	if (fflush(stdout) || ferror(stdout))
		tf_die("cannot write the weights:");
	tf_model_close(m);
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
	if (!strcmp(argv[1], "weights") && argc == 3)
		return weights(argv[2]);
	if (!strcmp(argv[1], "hidden") && argc == 3)
		return hidden(argv[2]);
	usage();
}
