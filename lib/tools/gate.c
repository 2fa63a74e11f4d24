/* gate.c: tf-gate's row loop, targets, thresholds and reports */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "base/err.h"
#include "compare.h"
#include "gate.h"
#include "io/ids.h"
#include "io/rows.h"

typedef unsigned long long ull;

/* one threshold and how the streams fared against it */
typedef struct {
	const char *name;       /* JSON name: "exact", "max_abs", "kl", "top1", "ppl_tol" */
	double value, limit;
	int pass;
	char what[160];         /* "max abs 0.00012 <= 0.001", for the table and TAP */
} check;

typedef struct {
	const tf_gate_opts *o;
	int two;                /* two streams, else one scored against targets */
	tf_rows ra, rb;
	tf_cmp c;
	int started;            /* c is set up (the first row was read) */
	/* targets: row t of sequence s predicts seqs[s].ids[t + 1] */
	tf_seq *seqs;
	long nseq, s;
	size_t t;
	json_t *hashes;         /* --hash --json: one object a row */
	check ck[5];
	int nck;
} gate;

static int write_failed(void)
{
	if (!errno)
		errno = EIO;
	return tf_err("write to stdout:");
}

/* --------------------------------------------------------------------- */
/* rows */

static int sha256_hex(const float *row, uint32_t cols, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;

	if (!EVP_Digest(row, (size_t)cols * sizeof *row, md, &len, EVP_sha256(), NULL) || len != 32)
		return tf_err("cannot compute sha256");
	for (unsigned int i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", md[i]);
	return 0;
}

/* prints (or keeps, for JSON) the sha256 of the current row of each stream */
static int row_hash(gate *g, ull row)
{
	char ha[65], hb[65] = "";
	int eq = 0;

	if (sha256_hex(g->ra.row, g->ra.cols, ha) < 0 || (g->two && sha256_hex(g->rb.row, g->rb.cols, hb) < 0))
		return -1;
	if (g->two)
		eq = !memcmp(g->ra.row, g->rb.row, (size_t)g->ra.cols * sizeof *g->ra.row);
	if (g->o->json) {
		json_t *h = json_object();
		json_object_set_new(h, "row", json_integer(row));
		json_object_set_new(h, "sha256_a", json_string(ha));
		if (g->two) {
			json_object_set_new(h, "sha256_b", json_string(hb));
			json_object_set_new(h, "equal", json_boolean(eq));
		}
		json_array_append_new(g->hashes, h);
		return 0;
	}
	if (g->two)
		printf("%srow %llu %s %s %s\n", g->o->tap ? "# " : "", row, ha, hb, eq ? "equal" : "differs");
	else
		printf("%srow %llu %s\n", g->o->tap ? "# " : "", row, ha);
	/* a reader that went away should stop a long run now, not at the end */
	errno = 0;
	if (fflush(stdout))
		return write_failed();
	return 0;
}

/* the target of the current row: an id, -1 when the row predicts nothing,
 * -2 on error */
static long next_target(gate *g)
{
	tf_rows *st[2] = { &g->ra, &g->rb };
	ull row = g->ra.n - 1;
	long id = -1;
	tf_seq *q;

	while (g->s < g->nseq && !g->seqs[g->s].n)
		g->s++;
	if (g->s == g->nseq)
		return tf_err("'%s' has more rows than the targets in '%s' (%llu)", g->ra.name, g->o->targets, row), -2;
	q = &g->seqs[g->s];
	for (int i = 0; i < 1 + g->two; i++)
		if (!st[i]->raw && st[i]->pos != g->t)
			return tf_err("row %llu of '%s' is at position %llu, but the targets in '%s' put it at position %zu of sequence %ld",
				      row, st[i]->name, (ull)st[i]->pos, g->o->targets, g->t, g->s), -2;
	if (g->t + 1 < q->n) {
		id = q->ids[g->t + 1];
		if (id >= (long)g->ra.cols)
			return tf_err("target id %ld (sequence %ld of '%s') is past the row width %u",
				      id, g->s, g->o->targets, g->ra.cols), -2;
	}
	if (++g->t == q->n) {
		g->s++;
		g->t = 0;
	}
	return id;
}

static int first_row(gate *g)
{
	if (g->two && g->ra.cols != g->rb.cols)
		return tf_err("rows differ in width: '%s' has %u values a row, '%s' has %u",
			      g->ra.name, g->ra.cols, g->rb.name, g->rb.cols);
	if (tf_cmp_init(&g->c, g->ra.cols) < 0)
		return -1;
	g->started = 1;
	return 0;
}

static int read_rows(gate *g)
{
	const tf_gate_opts *o = g->o;

	for (;;) {
		int ka, kb;
		long target = -1;
		ull row;

		if ((ka = tf_rows_next(&g->ra)) < 0)
			return -1;
		kb = ka;
		if (g->two && (kb = tf_rows_next(&g->rb)) < 0)
			return -1;
		if (!ka && !kb)
			break;
		if (ka != kb) {
			tf_rows *more = ka ? &g->ra : &g->rb, *fewer = ka ? &g->rb : &g->ra;
			return tf_err("'%s' has more rows than '%s' (%llu)", more->name, fewer->name, (ull)fewer->n);
		}
		row = g->ra.n - 1;
		if (!g->started && first_row(g) < 0)
			return -1;
		if (g->two && !g->ra.raw && !g->rb.raw && g->ra.pos != g->rb.pos)
			return tf_err("row %llu is at position %llu in '%s' but at %llu in '%s'", row,
				      (ull)g->ra.pos, g->ra.name, (ull)g->rb.pos, g->rb.name);
		if (o->targets && (target = next_target(g)) < -1)
			return -1;
		if (o->hash && row_hash(g, row) < 0)
			return -1;
		tf_cmp_row(&g->c, g->ra.row, g->two ? g->rb.row : NULL, target);
	}
	if (!g->started)
		return tf_err(g->two ? "'%s' and '%s' hold no rows" : "'%s' holds no rows", g->ra.name, g->rb.name);
	if (o->targets) {
		while (g->s < g->nseq && !g->seqs[g->s].n)
			g->s++;
		if (g->s < g->nseq)
			return tf_err("the targets in '%s' hold more rows than '%s' (%llu)", o->targets, g->ra.name,
				      (ull)g->ra.n);
		if (!g->c.scored)
			return tf_err("the targets in '%s' leave no row to score", o->targets);
	}
	return 0;
}

/* --------------------------------------------------------------------- */
/* thresholds */

static double ppl_diff_pct(const tf_cmp *c)
{
	return 100 * (tf_cmp_ppl_b(c) - tf_cmp_ppl_a(c)) / tf_cmp_ppl_a(c);
}

static void add_check(gate *g, const char *name, double value, double limit, int pass, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

static void add_check(gate *g, const char *name, double value, double limit, int pass, const char *fmt, ...)
{
	check *k = &g->ck[g->nck++];
	va_list ap;

	k->name = name;
	k->value = value;
	k->limit = limit;
	k->pass = pass;
	va_start(ap, fmt);
	vsnprintf(k->what, sizeof k->what, fmt, ap);
	va_end(ap);
}

/* a NaN figure fails every threshold: the comparisons are written so */
static void run_checks(gate *g)
{
	const tf_gate_opts *o = g->o;
	const tf_cmp *c = &g->c;
	double v;

	if (o->exact)
		add_check(g, "exact", c->equal, c->rows, c->equal == c->rows,
			  "bit-equal rows %llu of %llu", (ull)c->equal, (ull)c->rows);
	if (!isnan(o->max_abs))
		add_check(g, "max_abs", c->max_abs, o->max_abs, c->max_abs <= o->max_abs,
			  "max abs %.6g <= %g", c->max_abs, o->max_abs);
	if (!isnan(o->kl)) {
		v = tf_cmp_kl_mean(c);
		add_check(g, "kl", v, o->kl, v <= o->kl, "mean kl %.6g <= %g", v, o->kl);
	}
	if (!isnan(o->top1)) {
		v = tf_cmp_top1(c);
		add_check(g, "top1", v, o->top1, v >= o->top1, "top-1 agreement %.6g >= %g", v, o->top1);
	}
	if (!isnan(o->ppl_tol)) {
		v = ppl_diff_pct(c);
		add_check(g, "ppl_tol", v, o->ppl_tol, fabs(v) <= o->ppl_tol,
			  "perplexity difference %+.4g%% within %g%%", v, o->ppl_tol);
	}
}

static int all_pass(const gate *g)
{
	for (int i = 0; i < g->nck; i++)
		if (!g->ck[i].pass)
			return 0;
	return 1;
}

/* --------------------------------------------------------------------- */
/* reports */

static void print_table(const gate *g, const char *pre)
{
	const tf_cmp *c = &g->c;

	printf("%srows        %llu of %u values\n", pre, (ull)c->rows, c->cols);
	if (g->two) {
		printf("%sbit-equal   %llu of %llu\n", pre, (ull)c->equal, (ull)c->rows);
		printf("%smax abs     %.6g (row %llu)\n", pre, c->max_abs, (ull)c->max_abs_row);
		printf("%snmse        %.6g\n", pre, tf_cmp_nmse(c));
		printf("%skl mean     %.6g\n", pre, tf_cmp_kl_mean(c));
		printf("%skl max      %.6g (row %llu)\n", pre, c->kl_max, (ull)c->kl_max_row);
		printf("%stop-1       %.6g (%llu of %llu)\n", pre, tf_cmp_top1(c), (ull)c->top1, (ull)c->rows);
	}
	if (g->o->targets && g->two) {
		printf("%sscored      %llu rows\n", pre, (ull)c->scored);
		printf("%sppl a       %.6g\n", pre, tf_cmp_ppl_a(c));
		printf("%sppl b       %.6g (%+.4g%%)\n", pre, tf_cmp_ppl_b(c), ppl_diff_pct(c));
	} else if (g->o->targets) {
		printf("%sscored      %llu rows\n", pre, (ull)c->scored);
		printf("%snll mean    %.6g\n", pre, c->nll_a / c->scored);
		printf("%sppl         %.6g\n", pre, tf_cmp_ppl_a(c));
	}
}

static void report_text(const gate *g)
{
	print_table(g, "");
	for (int i = 0; i < g->nck; i++)
		printf("%-6s %s\n", g->ck[i].pass ? "ok" : "FAIL", g->ck[i].what);
}

static void report_tap(const gate *g)
{
	print_table(g, "# ");
	for (int i = 0; i < g->nck; i++)
		printf("%sok %d - %s\n", g->ck[i].pass ? "" : "not ", i + 1, g->ck[i].what);
	if (g->nck)
		printf("1..%d\n", g->nck);
	else
		printf("1..0 # SKIP no thresholds given\n");
}

/* JSON has no NaN or infinity: such a figure is null */
static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static void set(json_t *o, const char *key, json_t *v)
{
	json_object_set_new(o, key, v);
}

static int report_json(gate *g)
{
	const tf_cmp *c = &g->c;
	json_t *o = json_object(), *cks = json_array();
	int rc;

	set(o, "a", json_string(g->o->a));
	if (g->two)
		set(o, "b", json_string(g->o->b));
	set(o, "rows", json_integer(c->rows));
	set(o, "cols", json_integer(c->cols));
	if (g->two) {
		set(o, "rows_equal", json_integer(c->equal));
		set(o, "max_abs", num(c->max_abs));
		set(o, "max_abs_row", json_integer(c->max_abs_row));
		set(o, "nmse", num(tf_cmp_nmse(c)));
		set(o, "kl_mean", num(tf_cmp_kl_mean(c)));
		set(o, "kl_max", num(c->kl_max));
		set(o, "kl_max_row", json_integer(c->kl_max_row));
		set(o, "top1", num(tf_cmp_top1(c)));
		set(o, "top1_rows", json_integer(c->top1));
	}
	if (g->o->targets) {
		set(o, "targets", json_string(g->o->targets));
		set(o, "scored_rows", json_integer(c->scored));
		set(o, "nll_a", num(c->nll_a / c->scored));
		set(o, "ppl_a", num(tf_cmp_ppl_a(c)));
		if (g->two) {
			set(o, "nll_b", num(c->nll_b / c->scored));
			set(o, "ppl_b", num(tf_cmp_ppl_b(c)));
			set(o, "ppl_diff_pct", num(ppl_diff_pct(c)));
		}
	}
	for (int i = 0; i < g->nck; i++) {
		json_t *k = json_object();
		set(k, "check", json_string(g->ck[i].name));
		set(k, "value", num(g->ck[i].value));
		set(k, "limit", num(g->ck[i].limit));
		set(k, "pass", json_boolean(g->ck[i].pass));
		json_array_append_new(cks, k);
	}
	set(o, "checks", cks);
	set(o, "pass", json_boolean(all_pass(g)));
	if (g->hashes) {
		set(o, "row_sha256", g->hashes);
		g->hashes = NULL;
	}
	/* 17 digits: every double reads back as itself */
	rc = json_dumpf(o, stdout, JSON_REAL_PRECISION(17));
	json_decref(o);
	if (rc < 0 || putchar('\n') == EOF)
		return write_failed();
	return 0;
}

/* --------------------------------------------------------------------- */

int tf_gate_run(const tf_gate_opts *o)
{
	gate g = { .o = o, .two = o->b != NULL };
	int rc = TF_GATE_TROUBLE;

	if (o->targets && (g.nseq = tf_ids_load(o->targets, &g.seqs, 0)) < 0)
		return TF_GATE_TROUBLE;
	if (tf_rows_open(&g.ra, o->a, o->raw) < 0)
		goto out;
	if (g.two && tf_rows_open(&g.rb, o->b, o->raw) < 0)
		goto out;
	if (o->hash && o->json)
		g.hashes = json_array();
	if (read_rows(&g) < 0)
		goto out;
	run_checks(&g);
	errno = 0;
	if (o->json) {
		if (report_json(&g) < 0)
			goto out;
	} else if (o->tap) {
		report_tap(&g);
	} else {
		report_text(&g);
	}
	if (fflush(stdout) || ferror(stdout)) {
		write_failed();
		goto out;
	}
	rc = all_pass(&g) ? TF_GATE_WITHIN : TF_GATE_OUTSIDE;
out:
	tf_rows_close(&g.ra);
	if (g.two)
		tf_rows_close(&g.rb);
	tf_cmp_free(&g.c);
	json_decref(g.hashes);
	for (long i = 0; i < g.nseq; i++)
		tf_seq_free(&g.seqs[i]);
	free(g.seqs);
	return rc;
}
