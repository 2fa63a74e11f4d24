/*
 * tree_run.h: what tf-tree does with its input: each prompt starts a
 * sequence; each tree after it runs in one pass on top of the sequence
 * and its nodes' logits are written (a logits record: rows the nodes,
 * seq the sequence, pos its length before the tree; or the top K of each
 * node as text); then a path of it is kept, or none.
 */
#ifndef TF_TREE_RUN_H
#define TF_TREE_RUN_H

#include <stdio.h>

#include "decode/decoder.h"
#include "draft/draft.h"
#include "io/trees.h"
#include "model/tree.h"

enum { TF_KEEP_NONE, TF_KEEP_BEST, TF_KEEP_PATH };

typedef struct {
	int text_k;             /* > 0: the top K of each node as text, not records */
	int keep;               /* TF_KEEP_*: what each tree leaves in the sequence */
	int32_t *path;          /* TF_KEEP_PATH: node indices, root first */
	int64_t path_len;
	/* a drafter, or NULL: each prompt is followed by the tree it drafts
	 * after the prompt (its root, the prompt's last id, left out: the
	 * drafted ids become the tree's nodes, those under the root roots),
	 * run as a tree of the input would be; text output shows it first as
	 * a line "draft: ID:PARENT ...", which tf-tree reads as that tree */
	const tf_draft_spec *draft;
	FILE *f;
} tf_tree_opts;

typedef struct {
	tf_decoder *d;
	const tf_tree_opts *o;
	long seq;               /* the sequence, from 0; -1 before the first prompt */
	int has_ctx;            /* ctx holds the logits at the sequence's end */
	float *ctx;             /* (V) */
	float *logits;          /* (TF_TREE_MAX, V) the last tree's nodes */
	tf_drafter *dr;         /* o->draft's, for the sequence */
} tf_tree_run;

void tf_tree_run_init(tf_tree_run *r, tf_decoder *d, const tf_tree_opts *o);
void tf_tree_run_free(tf_tree_run *r);
/* one item of the input: a prompt or a tree; -1 with a message */
int tf_tree_run_item(tf_tree_run *r, const tf_item *it);

/* the longest path from a root on which every node's id is the argmax of
 * the logits before it (ctx for a root, or any root when ctx is NULL; its
 * parent's row of logits (n, V) otherwise), the first in node order among
 * the longest; its nodes to path (n), root first; its length returned */
int64_t tf_tree_best(const tf_tree *t, const tf_tree_shape *sh, const float *ctx, const float *logits, int64_t V,
		     int32_t *path);

#endif
