/*
 * mix.h: the sequences of one CPU pass (forward.c). Their rows lie one
 * after another in the pass's buffers, sequence by sequence; the token
 * mixers run each projection over all of them at once, so every weight is
 * read once a pass, and each core (attention over the sequence's cache,
 * the conv and delta rule over its state) on its own rows alone. A row's
 * bits never depend on the rows beside it (the products are row by row),
 * so a sequence gets the same logits in a pass of many as alone.
 */
#ifndef TF_MIX_H
#define TF_MIX_H

#include <stdint.h>

#include "model/tree.h"
#include "state.h"

typedef struct {
	tf_state *st;
	int64_t n;                      /* its rows: positions after st->pos, or a tree's nodes */
	const tf_tree_shape *sh;        /* the tree st->tree holds, or NULL for positions */
	int chunked;                    /* its delta rule in chunks of 64 (a prompt's) */
} tf_mix_part;

#endif
