/*
 * state.h: what a sequence carries from one position to the next.
 *
 * Full-attention layers keep their keys (after q/k-norm and rotary) and
 * values; Gated DeltaNet layers keep the last K-1 pre-conv inputs and the
 * fp32 recurrent state (transformers keeps K conv rows, the oldest unused).
 */
#ifndef TF_STATE_H
#define TF_STATE_H

#include <stdint.h>

#include "model/model.h"
#include "model/tree.h"

/* what a tree pass leaves for its commit: the nodes' keys and values lie in
 * the KV caches past pos (node i at pos + i), and per DeltaNet layer what
 * the convolution and the delta rule take of each node */
typedef struct {
	int64_t n;              /* nodes of a pass neither committed nor dropped, 0 = none */
	tf_tree_shape sh;       /* its shape */
	float **mq;             /* per DeltaNet layer: (n, conv_dim) the nodes' inputs before the conv */
	float **qkv;            /* per DeltaNet layer: (n, conv_dim) after the conv, q and k normalized */
	float **beta, **g;      /* per DeltaNet layer: (n, Hv) */
} tf_tree_log;

typedef struct {
	const tf_model *m;
	int64_t pos;            /* positions already in the state */
	int64_t cap;            /* positions the KV caches can hold */
	float **k;              /* per full layer: (cap, Hkv, D) keys */
	float **v;              /* per full layer: (cap, Hkv, D) values */
	float **conv;           /* per DeltaNet layer: (K-1, conv_dim), oldest row first */
	float **S;              /* per DeltaNet layer: (Hv, Dk, Dv), S[i][j] with i over Dk */
	tf_tree_log tree;       /* the last tree pass, until it is committed or dropped */
} tf_state;

tf_state *tf_state_new(const tf_model *m);
/* back to an empty sequence, keeping the allocations */
void tf_state_reset(tf_state *st);
/* makes room for n more positions */
void tf_state_reserve(tf_state *st, int64_t n);
/* makes room for positions in all, exactly (no doubling): a sequence whose
 * length is known up front takes the bytes tf_state_bytes counts */
void tf_state_reserve_total(tf_state *st, int64_t positions);
/* the bytes of a sequence of m holding `positions`: the keys and values of
 * its full-attention layers, the conv tails and recurrent states of its
 * Gated DeltaNet layers */
uint64_t tf_state_bytes(const tf_model *m, int64_t positions);
/* readies st->tree for a pass of n nodes of shape sh (which it takes over) */
void tf_state_tree_begin(tf_state *st, tf_tree_shape *sh);
/* drops the last tree pass: the state is what it was before it, bit for bit */
void tf_state_rollback(tf_state *st);
/* keeps path[0..len) of the last tree pass (a chain from a root down, as
 * tf_tree_path_check takes it) and drops the rest: the state becomes the
 * one steps along the path would have made, bit for bit */
int tf_state_commit(tf_state *st, const int32_t *path, int64_t len);
/* dst becomes a copy of src (same model): forking a sequence; a tree pass
 * of src is not copied */
void tf_state_copy(tf_state *dst, const tf_state *src);
void tf_state_free(tf_state *st);

#endif
