/*
 * round.h: many sequences of one model advanced together, a round at a
 * time. A round hands each sequence in it some ids (one for a decoding
 * stream, a chunk for a prompt being taken in) and gives each its logits,
 * as tf_decoder_forward_each would alone, bit for bit; the rows of all of
 * them go through the model in one pass where the device can, so each
 * weight is read once a round whatever the number of streams.
 *
 *   tf_round_part p[2] = {
 *           { d0, &id, 1, 0, got_logits, &s0 },                   a step
 *           { d1, prompt, 256, TF_FWD_CHUNKED | TF_FWD_LAST, got_logits, &s1 },
 *   };
 *   tf_decoder_round(p, 2);
 */
#ifndef TF_ROUND_H
#define TF_ROUND_H

#include <stdint.h>

#include "decoder.h"

typedef struct {
	tf_decoder *d;          /* distinct decoders of one model */
	const int32_t *ids;     /* (n) its ids this round; n 0 sits the round out */
	int64_t n;
	int flags;              /* TF_FWD_LAST, TF_FWD_CHUNKED, TF_FWD_APART, for this part alone */
	tf_logits_fn fn;        /* its rows' logits, rows counted from its first id; or NULL */
	void *ctx;
} tf_round_part;

/* one round over the k parts; -1 with a message (the round may then have
 * moved some parts on) */
int tf_decoder_round(const tf_round_part *p, int k);

#endif
