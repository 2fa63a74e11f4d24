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

typedef struct {
	const tf_model *m;
	int64_t pos;            /* positions already in the state */
	int64_t cap;            /* positions the KV caches can hold */
	float **k;              /* per full layer: (cap, Hkv, D) keys */
	float **v;              /* per full layer: (cap, Hkv, D) values */
	float **conv;           /* per DeltaNet layer: (K-1, conv_dim), oldest row first */
	float **S;              /* per DeltaNet layer: (Hv, Dk, Dv), S[i][j] with i over Dk */
} tf_state;

tf_state *tf_state_new(const tf_model *m);
/* back to an empty sequence, keeping the allocations */
void tf_state_reset(tf_state *st);
/* makes room for n more positions */
void tf_state_reserve(tf_state *st, int64_t n);
/* dst becomes a copy of src (same model): forking a sequence */
void tf_state_copy(tf_state *dst, const tf_state *src);
void tf_state_free(tf_state *st);

#endif
