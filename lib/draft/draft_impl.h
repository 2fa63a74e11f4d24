/* draft_impl.h: what a drafter holds, for the files of draft/ alone */
#ifndef TF_DRAFT_IMPL_H
#define TF_DRAFT_IMPL_H

#include "draft.h"

struct tf_drafter {
	tf_draft_spec sp;
	int64_t vocab;
	uint64_t rng;           /* random: its state */
	tf_draft_tree t;        /* the last tree proposed */
	float *logits;          /* (cap, vocab) its nodes' logits */
	int64_t logits_cap;     /* rows */
	struct tf_mtp_draft *mtp;       /* mtp: the head's state for this sequence */
};

/* empties t down to its root */
void tf_draft_tree_root(tf_draft_tree *t, int32_t root);
/* a node of id under parent; its index */
int64_t tf_draft_tree_add(tf_draft_tree *t, int32_t id, int32_t parent);
/* the child of node p holding id, or -1 */
int64_t tf_draft_tree_child(const tf_draft_tree *t, int64_t p, int32_t id);

/* the drafters (draft.h's tf_drafter_propose for each kind) */
void tf_ngram_propose(tf_drafter *dr, const int32_t *ids, int64_t n, int depth, int64_t nodes);
void tf_random_propose(tf_drafter *dr, const int32_t *ids, int64_t n, int depth, int64_t nodes);
void tf_mtp_propose(tf_drafter *dr, const int32_t *ids, int64_t n, int depth, int64_t nodes);
int tf_mtp_bind(tf_drafter *dr, tf_decoder *d);
void tf_mtp_free(struct tf_mtp_draft *x);

#endif
