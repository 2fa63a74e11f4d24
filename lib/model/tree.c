/* tree.c: the shape of a token tree (tree.h) */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "tree.h"

void tf_tree_shape_free(tf_tree_shape *sh)
{
	free(sh->parent);
	free(sh->depth);
	free(sh->order);
	free(sh->anc);
	memset(sh, 0, sizeof *sh);
}

/* depth[] of every node, walking each one's parents up to a node whose
 * depth is known; a walk longer than the tree is a cycle */
static int depths(const int32_t *parent, int64_t n, int32_t *depth)
{
	int32_t *up = tf_malloc(n * sizeof *up);        /* (n) the nodes of one walk, newest last */

	for (int64_t i = 0; i < n; i++)
		depth[i] = -1;
	for (int64_t i = 0; i < n; i++) {
		int64_t k = 0;
		int32_t x = (int32_t)i;

		while (x >= 0 && depth[x] < 0) {
			if (k == n) {
				free(up);
				return tf_err("tree node %lld is its own ancestor (a cycle)", (long long)i);
			}
			up[k++] = x;
			x = parent[x];
		}
		int32_t d = x < 0 ? -1 : depth[x];
		while (k > 0)
			depth[up[--k]] = ++d;
	}
	free(up);
	return 0;
}

int tf_tree_shape_of(const tf_tree *t, tf_tree_shape *sh)
{
	int64_t n = t->n;

	memset(sh, 0, sizeof *sh);
	if (n < 1 || n > TF_TREE_MAX)
		return tf_err("a tree of %lld nodes (1 to %d are taken)", (long long)n, TF_TREE_MAX);
	for (int64_t i = 0; i < n; i++) {
		if (t->parent[i] < -1 || t->parent[i] >= n)
			return tf_err("tree node %lld: parent %d is not a node of the tree (-1 to %lld)", (long long)i,
				      t->parent[i], (long long)n - 1);
		if (t->parent[i] == i)
			return tf_err("tree node %lld is its own parent", (long long)i);
	}
	sh->n = n;
	sh->parent = tf_malloc(n * sizeof *sh->parent);
	sh->depth = tf_malloc(n * sizeof *sh->depth);
	sh->order = tf_malloc(n * sizeof *sh->order);
	memcpy(sh->parent, t->parent, n * sizeof *sh->parent);
	if (depths(t->parent, n, sh->depth) < 0) {
		tf_tree_shape_free(sh);
		return -1;
	}

	// nodes by depth, ties in node order: a counting sort
	sh->width = 0;
	for (int64_t i = 0; i < n; i++)
		if (sh->depth[i] + 1 > sh->width)
			sh->width = sh->depth[i] + 1;
	int64_t k = 0;
	for (int32_t d = 0; d < sh->width; d++)
		for (int64_t i = 0; i < n; i++)
			if (sh->depth[i] == d)
				sh->order[k++] = (int32_t)i;

	// each node's branch, root first
	sh->anc = tf_malloc(n * sh->width * sizeof *sh->anc);
	for (int64_t i = 0; i < n; i++) {
		int32_t x = (int32_t)i;
		for (int32_t d = sh->depth[i]; d >= 0; d--, x = sh->parent[x])
			sh->anc[i * sh->width + d] = x;
	}
	return 0;
}

int tf_tree_path_check(const tf_tree_shape *sh, const int32_t *path, int64_t len)
{
	for (int64_t j = 0; j < len; j++) {
		int32_t x = path[j], want = j ? path[j - 1] : -1;
		if (x < 0 || x >= sh->n)
			return tf_err("path node %d is not a node of the tree (0 to %lld)", x, (long long)sh->n - 1);
		if (sh->parent[x] != want) {
			if (!j)
				return tf_err("path node %d is no root: its parent is %d", x, sh->parent[x]);
			return tf_err("path node %d is not a child of %d", x, want);
		}
	}
	return 0;
}
