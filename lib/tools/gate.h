/*
 * gate.h: tf-gate(1), comparing two logit streams (or scoring one) and
 * holding the figures to thresholds.
 *
 * Rows are read in step from both streams (io/rows.h) and folded into the
 * figures of compare.h; nothing but the current pair of rows is held.
 * The report (a table, one JSON object, or TAP) goes to stdout.
 */
#ifndef TF_GATE_H
#define TF_GATE_H

#include <stdint.h>

typedef struct {
	const char *a, *b;      /* streams, "-" for stdin; b NULL: score a alone */
	uint32_t raw;           /* --raw V: width of a stream without the record magic */
	const char *targets;    /* --targets IDS or NULL */
	int hash;               /* a sha256 of every row */
	int json, tap;          /* report form; both 0: a table */
	/* thresholds: exact is a flag, the others NAN when not given */
	int exact;
	double max_abs, kl, top1, ppl_tol;
} tf_gate_opts;

/* tf-gate's exit status: cmp(1)'s contract */
enum { TF_GATE_WITHIN = 0, TF_GATE_OUTSIDE = 1, TF_GATE_TROUBLE = 2 };

/* runs the comparison and writes the report; returns TF_GATE_WITHIN when
 * every threshold holds, TF_GATE_OUTSIDE when one does not, TF_GATE_TROUBLE
 * (message in tf_errmsg()) when the streams could not be compared or the
 * report could not be written */
int tf_gate_run(const tf_gate_opts *o);

#endif
