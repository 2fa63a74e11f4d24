/*
 * tree.h: a token tree on top of a sequence, the pass a verifier runs.
 *
 * Node i holds token id[i]; its parent is node parent[i] of the same tree,
 * or -1 for the end of the sequence's committed context (a tree may have
 * several such roots). A node sees the context and its own ancestors, in
 * root-to-node order, as the tokens before it: its position is the
 * context's length plus its depth (0 for a root). Parents may come before
 * or after their children in the node order; a cycle or a node that is its
 * own parent is no tree.
 *
 * The shape is derived once per tree and shared by every layer of both
 * backends: the nodes in an order where each parent comes first, and each
 * node's ancestors, so that attention, the causal convolution and the
 * delta rule walk the node's own branch rather than the row order.
 */
#ifndef TF_TREE_H
#define TF_TREE_H

#include <stdint.h>

/* nodes a tree may have: the CPU keeps every node's recurrent state of one
 * value head while it runs a layer, nodes x Dk x Dv floats a thread */
#define TF_TREE_MAX 1024

typedef struct {
	int64_t n;              /* nodes */
	const int32_t *id;      /* (n) token ids */
	const int32_t *parent;  /* (n) parent node, -1 = the context's end */
} tf_tree;

typedef struct {
	int64_t n;
	int32_t *parent;        /* (n) a copy of the tree's parents */
	int32_t *depth;         /* (n) 0 for a root */
	int32_t *order;         /* (n) nodes by depth, ties in node order: parents first */
	int32_t *anc;           /* (n, width) anc[i * width + d] = node i's ancestor at depth d, i at depth[i] */
	int32_t width;          /* 1 + the deepest node's depth */
} tf_tree_shape;

/* checks t (n in [1, TF_TREE_MAX], parents in [-1, n), no node its own
 * ancestor) and derives its shape into sh; -1 with a message naming the
 * node. tf_tree_shape_free frees what it holds. */
int tf_tree_shape_of(const tf_tree *t, tf_tree_shape *sh);
void tf_tree_shape_free(tf_tree_shape *sh);

/* 0 when path[0..len) runs from a root down, each node the parent of the
 * next (a path of 0 nodes keeps nothing); -1 with a message otherwise */
int tf_tree_path_check(const tf_tree_shape *sh, const int32_t *path, int64_t len);

#endif
