/*
 * run.h: what tf-run does with one sequence: score it (logits of every
 * position, or of the last). Generation (-n) runs many sequences at once
 * (streams.h).
 */
#ifndef TF_RUN_H
#define TF_RUN_H

#include <stdio.h>

#include "decode/decoder.h"
#include "decode/sample.h"
#include "io/ids.h"

enum { TF_OUT_RECORDS, TF_OUT_RAW, TF_OUT_TEXT };

typedef struct {
	int step;               /* feed the prompt one token at a time */
	int window;             /* > 0: feed the prompt this many tokens at a time, row-independent */
	int out;                /* TF_OUT_*: how logits are written */
	int last;               /* only the last row of each sequence */
	int text_k;             /* TF_OUT_TEXT: top ids per row */
	long gen;               /* > 0: generate this many ids instead of logits (streams.h) */
	int ignore_eos;
	int stream;             /* write each generated id as it is made */
	tf_sampler sampler;
	FILE *f;
} tf_run_opts;

/* one text line of a row of logits (V): "LABEL: id logit id logit ..." for
 * its k largest, the smaller id first among equals */
int tf_write_top(FILE *f, const float *row, int64_t V, int k, int64_t label);

/* scores sequence number `index` from an empty state; -1 with a message */
int tf_run_seq(tf_decoder *d, const tf_seq *s, long index, const tf_run_opts *o);

#endif
