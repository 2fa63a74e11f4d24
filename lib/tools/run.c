/* run.c: scoring one sequence */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "io/rec.h"
#include "run.h"

struct sink {
	const tf_run_opts *o;
	int64_t V, pos0;
};

static int by_logit_desc(const void *a, const void *b, void *ctx)
{
	const float *l = ctx;
	int x = *(const int *)a, y = *(const int *)b;

	if (l[x] != l[y])
		return l[x] < l[y] ? 1 : -1;
	return x - y;
}

int tf_write_top(FILE *f, const float *row, int64_t V, int k, int64_t pos)
{
	int *idx = tf_malloc(V * sizeof *idx);

	for (int64_t i = 0; i < V; i++)
		idx[i] = (int)i;
	qsort_r(idx, V, sizeof *idx, by_logit_desc, (void *)row);
	fprintf(f, "%lld:", (long long)pos);
	for (int i = 0; i < k && i < V; i++)
		fprintf(f, " %d %.9g", idx[i], row[idx[i]]);
	fputc('\n', f);
	free(idx);
	return 0;
}

static int emit(void *ctx, int64_t row0, int64_t rows, const float *logits)
{
	struct sink *s = ctx;
	FILE *f = s->o->f;

	if (s->o->out == TF_OUT_TEXT) {
		for (int64_t r = 0; r < rows; r++)
			tf_write_top(f, logits + r * s->V, s->V, s->o->text_k, s->pos0 + row0 + r);
	} else if (fwrite(logits, sizeof *logits, rows * s->V, f) != (size_t)(rows * s->V)) {
		return tf_err("write error:");
	}
	if (ferror(f))
		return tf_err("write error:");
	return 0;
}

/* the header of the one logits record this sequence writes */
static int begin_record(const tf_run_opts *o, int64_t rows, int64_t V, long index, int64_t pos)
{
	if (o->out != TF_OUT_RECORDS)
		return 0;
	if (tf_rec_write_header(o->f, TF_REC_LOGITS, TF_DT_F32, rows, V, index, pos) < 0)
		return -1;
	return 0;
}

static int score(tf_decoder *d, const tf_seq *s, long index, const tf_run_opts *o)
{
	int64_t V = tf_decoder_model(d)->c.vocab, n = s->n;
	struct sink k = { o, V, 0 };

	if (begin_record(o, o->last ? 1 : n, V, index, o->last ? n - 1 : 0) < 0)
		return -1;
	int64_t w = o->step ? 1 : o->window;

	if (!w)
		return tf_decoder_forward_each(d, s->ids, n, (o->last ? TF_FWD_LAST : 0) | TF_FWD_CHUNKED, emit, &k);
	/* windows of w tokens through the row-independent path: the same logits
	 * as one token at a time, bit for bit */
	for (int64_t t = 0; t < n; t += w) {
		int64_t m = n - t < w ? n - t : w;
		k.pos0 = t;
		if (tf_decoder_forward_each(d, s->ids + t, m, o->last ? TF_FWD_LAST : 0,
					    o->last && t + m < n ? NULL : emit, &k) < 0)
			return -1;
	}
	return 0;
}

int tf_run_seq(tf_decoder *d, const tf_seq *s, long index, const tf_run_opts *o)
{
	char what[64];

	snprintf(what, sizeof what, "sequence %ld: prompt of %zu ids", index + 1, s->n);
	if (tf_config_check_ctx(&tf_decoder_model(d)->c, (int64_t)s->n, what) < 0)
		return -1;
	tf_decoder_reset(d);
	/* an empty line still gets its empty record, so that the outputs of
	 * a pipeline stay in step with its inputs */
	if (!s->n)
		return begin_record(o, 0, tf_decoder_model(d)->c.vocab, index, 0);
	return score(d, s, index, o);
}
