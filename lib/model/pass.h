/*
 * pass.h: what a pass over a sequence is asked for, the same on every
 * device: which rows' logits, how the prompt's delta rule is summed, and
 * where the logits or drawn ids go.
 */
#ifndef TF_PASS_H
#define TF_PASS_H

#include <stdint.h>

enum {
	TF_FWD_LAST = 1,        /* logits of the last row only: (1, V) */
	TF_FWD_CHUNKED = 2,     /* Gated DeltaNet in chunks of 64 (prompt mode) */
	/* tf_decoder_round: the part's fn may run on a pool thread, beside
	 * the fns of the round's other parts that say so, in any order */
	TF_FWD_APART = 4,
};

/* receives logits (rows, V) of the sequence's rows [row0, row0 + rows)
 * counted from the first of the call's n tokens; returns -1 to stop */
typedef int (*tf_logits_fn)(void *ctx, int64_t row0, int64_t rows, const float *logits);

/* the tf_logits_fn of a call that wants its logits in one buffer: with
 * ctx a tf_logits_into, rows go to dst, row `first` of the call at dst */
typedef struct {
	float *dst;
	int64_t first, V;
} tf_logits_into;
int tf_logits_copy(void *ctx, int64_t row0, int64_t rows, const float *logits);

/* receives each id a run of decode steps draws, as it comes; < 0 to fail */
typedef int (*tf_id_fn)(void *ctx, int32_t id);

/* told how far a prompt pass is, each time a unit of its work ends (a layer
 * over all rows on the CPU, a slice of rows on the GPU): done of total */
typedef struct {
	void (*fn)(void *ctx, int64_t done, int64_t total);
	void *ctx;
} tf_pass_progress;

/* decode steps one call runs at most */
#define TF_STEPS_MAX 32

#endif
