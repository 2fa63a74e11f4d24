/* tree: token trees on the CPU reference (tf_forward_tree), on tiny-q35
 * and shakespeare-q35: every node's logits bit-identical to steps along its
 * branch from the same state, for chains, stars, full binary trees, forests
 * and random trees whose parents come after their children; a commit of a
 * path gives the state (every cache, bit for bit) and the later logits of
 * steps along it; a rollback gives back the state before the tree; contexts
 * on both sides of 128 and 256 keys; bad trees and bad paths refused */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "cpu/forward.h"
#include "cpu/state.h"
#include "model/model.h"
#include "tap.h"

#define DIE_IF(x) do { if ((x) < 0) { fprintf(stderr, "%s\n", tf_errmsg()); exit(1); } } while (0)
#define NMAX 64

static tf_model *m;
static int64_t V;
static uint64_t rng = 12345;

static uint32_t rnd(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng >> 33);
}

/* whether two states of the model hold the same sequence, bit for bit */
static int same_state(const tf_state *a, const tf_state *b)
{
	const tf_config *c = &m->c;
	int64_t kv = (int64_t)c->kv_heads * c->head_dim;
	int64_t conv = (int64_t)(c->conv_k - 1) * m->conv_dim;
	int64_t S = (int64_t)c->lin_v_heads * c->lin_k_dim * c->lin_v_dim;

	if (a->pos != b->pos)
		return 0;
	for (int i = 0; i < c->layers; i++) {
		if (c->full[i]) {
			if (memcmp(a->k[i], b->k[i], a->pos * kv * 4) || memcmp(a->v[i], b->v[i], a->pos * kv * 4))
				return 0;
		} else if (memcmp(a->conv[i], b->conv[i], conv * 4) || memcmp(a->S[i], b->S[i], S * 4)) {
			return 0;
		}
	}
	return 1;
}

/* a state after ctx ids of a fixed random prompt, through the step path */
static tf_state *context(int64_t ctx)
{
	tf_state *st = tf_state_new(m);
	int32_t *ids = malloc((ctx + 1) * sizeof *ids);

	for (int64_t t = 0; t < ctx; t++)
		ids[t] = (int32_t)(rnd() % V);
	DIE_IF(tf_forward(st, ids, ctx, NULL, 0));
	free(ids);
	return st;
}

/* the logits of node i reached by steps from base along its branch */
static void steps_to(const tf_state *base, const int32_t *id, const int32_t *parent, int i, float *out)
{
	tf_state *st = tf_state_new(m);
	int32_t branch[NMAX];
	int d = 0;

	for (int x = i; x >= 0; x = parent[x])
		branch[d++] = id[x];
	tf_state_copy(st, base);
	for (int k = d - 1; k >= 0; k--)
		DIE_IF(tf_forward(st, &branch[k], 1, k ? NULL : out, 0));
	tf_state_free(st);
}

/* every node of the tree against its steps; then the deepest node's path
 * committed against steps along it and two more, and a rollback */
static void check_tree(const char *what, const tf_state *base, const int32_t *id, const int32_t *parent, int n)
{
	tf_state *st = tf_state_new(m), *ref = tf_state_new(m);
	float *got = malloc(n * V * 4), *want = malloc(V * 4), *l1 = malloc(V * 4), *l2 = malloc(V * 4);
	tf_logits_into into = { got, 0, V };
	tf_tree t = { n, id, parent };
	int bad = -1, deepest = 0, depth[NMAX];
	int32_t path[NMAX], more[2] = { 7 % (int32_t)V, 11 % (int32_t)V };

	tf_state_copy(st, base);
	DIE_IF(tf_forward_tree(st, &t, tf_logits_copy, &into, NULL));
	for (int i = 0; i < n && bad < 0; i++) {
		steps_to(base, id, parent, i, want);
		if (memcmp(got + (int64_t)i * V, want, V * 4))
			bad = i;
	}
	ok(bad < 0, "%s: %d nodes, each one's logits those of steps along its branch%s", what, n,
	   bad < 0 ? "" : " (a node differs)");
	if (bad >= 0)
		diag("node %d differs", bad);
	ok(same_state(st, base), "%s: the pass leaves the state as it was", what);

	// the deepest node's path, root first
	for (int i = 0; i < n; i++) {
		depth[i] = 0;
		for (int x = parent[i]; x >= 0; x = parent[x])
			depth[i]++;
		if (depth[i] > depth[deepest])
			deepest = i;
	}
	int len = depth[deepest] + 1;
	for (int x = deepest, k = len - 1; x >= 0; x = parent[x])
		path[k--] = x;
	DIE_IF(tf_state_commit(st, path, len));
	tf_state_copy(ref, base);
	for (int k = 0; k < len; k++)
		DIE_IF(tf_forward(ref, &id[path[k]], 1, NULL, 0));
	ok(same_state(st, ref), "%s: the commit of a path of %d is the state of steps along it", what, len);
	DIE_IF(tf_forward(st, more, 2, NULL, 0));
	DIE_IF(tf_forward(st, more, 1, l1, 0));
	DIE_IF(tf_forward(ref, more, 2, NULL, 0));
	DIE_IF(tf_forward(ref, more, 1, l2, 0));
	ok(!memcmp(l1, l2, V * 4), "%s: steps after the commit give the logits of steps along the path", what);

	// a pass, then its rollback: the state before it
	tf_state_copy(st, base);
	DIE_IF(tf_forward_tree(st, &t, NULL, NULL, NULL));
	tf_state_rollback(st);
	ok(same_state(st, base) && st->tree.n == 0, "%s: a rollback gives back the state before the tree", what);
	ok(tf_state_commit(st, path, len) < 0 && strstr(tf_errmsg(), "no tree pass"),
	   "%s: nothing to commit after a rollback: %s", what, tf_errmsg());

	tf_state_free(st);
	tf_state_free(ref);
	free(got);
	free(want);
	free(l1);
	free(l2);
}

static void ids_of(int32_t *id, int n)
{
	for (int i = 0; i < n; i++)
		id[i] = (int32_t)(rnd() % V);
}

static void shapes(const char *model, const tf_state *base)
{
	int32_t id[NMAX], parent[NMAX], perm[NMAX], inv[NMAX], p2[NMAX], id2[NMAX];
	char what[128];

	ids_of(id, 16);
	for (int i = 0; i < 16; i++)
		parent[i] = i - 1;
	snprintf(what, sizeof what, "%s chain", model);
	check_tree(what, base, id, parent, 16);

	ids_of(id, 17);
	for (int i = 0; i < 17; i++)
		parent[i] = i ? 0 : -1;
	snprintf(what, sizeof what, "%s star of 16 children", model);
	check_tree(what, base, id, parent, 17);

	ids_of(id, 15);
	for (int i = 0; i < 15; i++)
		parent[i] = i ? (i - 1) / 2 : -1;
	snprintf(what, sizeof what, "%s full binary tree", model);
	check_tree(what, base, id, parent, 15);

	ids_of(id, 6);
	int forest[6] = { -1, 0, -1, 2, 2, -1 };
	snprintf(what, sizeof what, "%s forest of three roots", model);
	check_tree(what, base, id, forest, 6);

	// random trees, then the same with the node order shuffled so that
	// parents often come after their children
	for (int r = 0; r < 3; r++) {
		int n = 8 + (int)(rnd() % 17);
		ids_of(id, n);
		parent[0] = -1;
		for (int i = 1; i < n; i++)
			parent[i] = (rnd() % 8 == 0) ? -1 : (int32_t)(rnd() % i);
		snprintf(what, sizeof what, "%s random tree %d", model, r);
		check_tree(what, base, id, parent, n);
		for (int i = 0; i < n; i++)
			perm[i] = i;
		for (int i = n - 1; i > 0; i--) {
			int j = (int)(rnd() % (i + 1)), x = perm[i];
			perm[i] = perm[j];
			perm[j] = x;
		}
		for (int i = 0; i < n; i++)
			inv[perm[i]] = i;
		for (int i = 0; i < n; i++) {
			id2[inv[i]] = id[i];
			p2[inv[i]] = parent[i] < 0 ? -1 : inv[parent[i]];
		}
		snprintf(what, sizeof what, "%s random tree %d, nodes shuffled", model, r);
		check_tree(what, base, id2, p2, n);
	}
}

static void refused(const tf_state *base)
{
	tf_state *st = tf_state_new(m);
	int32_t id[4] = { 1, 2, 3, 4 }, parent[4];
	tf_tree t = { 4, id, parent };

	tf_state_copy(st, base);
	memcpy(parent, (int32_t[]){ -1, 0, 4, 1 }, sizeof parent);
	ok(tf_forward_tree(st, &t, NULL, NULL, NULL) < 0 && strstr(tf_errmsg(), "node 2: parent 4 is not a node"),
	   "a parent past the tree: %s", tf_errmsg());
	memcpy(parent, (int32_t[]){ -1, 0, -2, 1 }, sizeof parent);
	ok(tf_forward_tree(st, &t, NULL, NULL, NULL) < 0 && strstr(tf_errmsg(), "parent -2"),
	   "a parent below -1: %s", tf_errmsg());
	memcpy(parent, (int32_t[]){ -1, 1, 0, 1 }, sizeof parent);
	ok(tf_forward_tree(st, &t, NULL, NULL, NULL) < 0 && strstr(tf_errmsg(), "node 1 is its own parent"),
	   "a node its own parent: %s", tf_errmsg());
	memcpy(parent, (int32_t[]){ -1, 3, 1, 2 }, sizeof parent);
	ok(tf_forward_tree(st, &t, NULL, NULL, NULL) < 0 && strstr(tf_errmsg(), "own ancestor"),
	   "a cycle: %s", tf_errmsg());
	memcpy(parent, (int32_t[]){ -1, 0, 1, 2 }, sizeof parent);
	id[3] = (int32_t)V;
	ok(tf_forward_tree(st, &t, NULL, NULL, NULL) < 0 && strstr(tf_errmsg(), "out of range"),
	   "an id past the vocabulary: %s", tf_errmsg());
	t.n = 0;
	ok(tf_forward_tree(st, &t, NULL, NULL, NULL) < 0 && strstr(tf_errmsg(), "a tree of 0 nodes"),
	   "an empty tree: %s", tf_errmsg());
	t.n = TF_TREE_MAX + 1;
	ok(tf_forward_tree(st, &t, NULL, NULL, NULL) < 0 && strstr(tf_errmsg(), "nodes (1 to"),
	   "a tree past the limit: %s", tf_errmsg());
	ok(same_state(st, base), "refused trees leave the state as it was");

	id[3] = 4;
	t.n = 4;
	memcpy(parent, (int32_t[]){ -1, 0, 0, 2 }, sizeof parent);
	DIE_IF(tf_forward_tree(st, &t, NULL, NULL, NULL));
	ok(tf_state_commit(st, (int32_t[]){ 1 }, 1) < 0 && strstr(tf_errmsg(), "no root"),
	   "a path that starts below a root: %s", tf_errmsg());
	ok(tf_state_commit(st, (int32_t[]){ 0, 1, 3 }, 3) < 0 && strstr(tf_errmsg(), "not a child of 1"),
	   "a path that jumps branches: %s", tf_errmsg());
	ok(tf_state_commit(st, (int32_t[]){ 0, 9 }, 2) < 0 && strstr(tf_errmsg(), "not a node"),
	   "a path through no node: %s", tf_errmsg());
	ok(same_state(st, base) && st->tree.n == 4, "refused paths keep the state and the tree");
	DIE_IF(tf_state_commit(st, (int32_t[]){ 0 }, 0));
	ok(same_state(st, base), "a path of no nodes keeps nothing");
	tf_state_free(st);
}

static tf_model *open_model(const char *argv0, const char *name)
{
	char path[4096];
	tf_model *x;

	snprintf(path, sizeof path, "%s/../data/%s", dirname(strdup(argv0)), name);
	x = tf_model_open(path);
	DIE_IF(x ? 0 : -1);
	return x;
}

int main(int argc, char **argv)
{
	static const int64_t ctx[] = { 0, 1, 127, 128, 129, 255, 256, 257 };
	tf_state *base;

	(void)argc;
	m = open_model(argv[0], "tiny-q35");
	V = m->c.vocab;
	for (size_t k = 0; k < sizeof ctx / sizeof *ctx; k++) {
		char what[64];
		int32_t id[16], parent[16];

		base = context(ctx[k]);
		ids_of(id, 16);
		for (int i = 0; i < 16; i++)
			parent[i] = i < 2 ? -1 : (int32_t)(rnd() % i);
		snprintf(what, sizeof what, "tiny, context of %lld", (long long)ctx[k]);
		check_tree(what, base, id, parent, 16);
		tf_state_free(base);
	}
	base = context(40);
	shapes("tiny", base);
	refused(base);
	tf_state_free(base);
	tf_model_close(m);

	m = open_model(argv[0], "shakespeare-q35");
	V = m->c.vocab;
	base = context(33);
	shapes("shakespeare", base);
	tf_state_free(base);
	tf_model_close(m);
	return done();
}
