/*
 * streams.h: what tf-run -n does with its input: up to P sequences in
 * flight at once, advanced in shared rounds (decode/round.h), each
 * sequence's line written in input order.
 *
 * A round gives every stream past its prompt one decode step and may take
 * in one prompt chunk (TF_STREAM_CHUNK ids, the oldest stream still in its
 * prompt first), paced so that chunks take at most a quarter of the
 * decoding streams' time (decode/pace.h). Every prompt is fed in those chunks,
 * whatever P, and the chunked delta rule sums a prompt fed in pieces of a
 * multiple of 64 as in one call: a sequence's logits, and so its ids
 * (its sampler seeded by tf_sample_seed(seed, its index)), are the same
 * for every P.
 *
 * With a drafter (so->draft) a round verifies each decoding stream's
 * drafted tree in a pass of its own and takes the ids the target draws
 * along the path it keeps: more than one a round where the draft was
 * right, and the same ids whatever the drafter proposed.
 *
 * A stream is admitted only when its cache (tf_decoder_cache_bytes of its
 * prompt plus -n positions) fits the budget beside the streams in flight;
 * the next line waits, in order, until it does. A line whose cache would
 * not fit even alone is an error.
 */
#ifndef TF_STREAMS_H
#define TF_STREAMS_H

#include <stdint.h>

#include "draft/draft.h"
#include "io/ids.h"
#include "model/model.h"
#include "run.h"

/* prompt ids a round takes in at most: a multiple of 64 */
#define TF_STREAM_CHUNK 256

typedef struct {
	int parallel;           /* sequences in flight at most, >= 1 */
	uint64_t budget;        /* cache bytes of the sequences in flight at most; 0: no bound */
	/* told after each prompt chunk: sequence index (from 0), its prompt's
	 * ids, those fed so far; fn NULL for none */
	void (*progress)(void *ctx, long index, int64_t tokens, int64_t fed);
	void *progress_ctx;
	/* a drafter for every sequence (draft.h), or NULL: each round a
	 * stream past its prompt verifies its draft in a tree pass of its own
	 * (a stream with nothing drafted steps in the shared pass), and its
	 * ids are still those it would make without */
	const tf_draft_spec *draft;
	tf_draft_stats *stats;  /* the decoding rounds' figures added here, or NULL */
} tf_streams_opts;

/* generates o->gen ids for every sequence rd reads, one text line each
 * into o->f in input order; -1 with a message */
int tf_run_streams(const tf_model *m, tf_ids_reader *rd, const tf_run_opts *o, const tf_streams_opts *so);

#endif
