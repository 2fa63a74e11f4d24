/* tree_log.c: what a tree pass leaves behind, and how the kept path of it
 * becomes the sequence's state (state.h) */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "delta_rule.h"
#include "state.h"

void tf_state_tree_begin(tf_state *st, tf_tree_shape *sh)
{
	const tf_model *m = st->m;
	tf_tree_log *lg = &st->tree;
	int L = m->c.layers, Hv = m->c.lin_v_heads;
	int64_t n = sh->n, C = m->conv_dim;

	tf_state_rollback(st);
	if (!lg->mq) {
		lg->mq = tf_calloc(L, sizeof *lg->mq);
		lg->qkv = tf_calloc(L, sizeof *lg->qkv);
		lg->beta = tf_calloc(L, sizeof *lg->beta);
		lg->g = tf_calloc(L, sizeof *lg->g);
	}
	for (int i = 0; i < L; i++)
		if (!m->c.full[i]) {
			lg->mq[i] = tf_realloc(lg->mq[i], n * C * sizeof(float));
			lg->qkv[i] = tf_realloc(lg->qkv[i], n * C * sizeof(float));
			lg->beta[i] = tf_realloc(lg->beta[i], n * Hv * sizeof(float));
			lg->g[i] = tf_realloc(lg->g[i], n * Hv * sizeof(float));
		}
	lg->sh = *sh;
	memset(sh, 0, sizeof *sh);
	lg->n = n;
	tf_state_reserve(st, n);
}

/* the pass wrote only past pos and into its log: dropping the log is all */
void tf_state_rollback(tf_state *st)
{
	tf_tree_shape_free(&st->tree.sh);
	st->tree.n = 0;
}

/* rows path[0..len) of x (n, w) into y (len, w), in path order */
static void gather(float *y, const float *x, const int32_t *path, int64_t len, int64_t w)
{
	for (int64_t j = 0; j < len; j++)
		memcpy(y + j * w, x + path[j] * w, w * sizeof *y);
}

int tf_state_commit(tf_state *st, const int32_t *path, int64_t len)
{
	const tf_model *m = st->m;
	const tf_config *c = &m->c;
	tf_tree_log *lg = &st->tree;
	int K = c->conv_k, Hv = c->lin_v_heads;
	int64_t C = m->conv_dim, kv = (int64_t)c->kv_heads * c->head_dim, n = lg->n;

	if (!n)
		return tf_err("no tree pass to commit");
	if (tf_tree_path_check(&lg->sh, path, len) < 0)
		return -1;
	// widest scratch: the path's rows of one log array, K-1 conv rows ahead
	float *tmp = tf_malloc((K - 1 + len) * (C > kv ? C : kv) * sizeof *tmp);
	float *bt = tf_malloc(len * Hv * sizeof *bt), *gt = tf_malloc(len * Hv * sizeof *gt);
	float *o = tf_malloc(len * Hv * c->lin_v_dim * sizeof *o);

	for (int i = 0; i < c->layers; i++) {
		if (c->full[i]) {
			// the kept nodes' keys and values become positions pos, pos + 1, ...
			float *cache[2] = { st->k[i] + st->pos * kv, st->v[i] + st->pos * kv };
			for (int a = 0; a < 2; a++) {
				gather(tmp, cache[a], path, len, kv);
				memcpy(cache[a], tmp, len * kv * sizeof *tmp);
			}
			continue;
		}
		// the conv keeps the last K-1 inputs of context and path together
		memcpy(tmp, st->conv[i], (K - 1) * C * sizeof *tmp);
		gather(tmp + (K - 1) * C, lg->mq[i], path, len, C);
		memcpy(st->conv[i], tmp + len * C, (K - 1) * C * sizeof *tmp);
		// the delta rule replays the kept nodes as the steps along the path
		// would: the same recurrence, token after token, from the same state
		gather(tmp, lg->qkv[i], path, len, C);
		gather(bt, lg->beta[i], path, len, Hv);
		gather(gt, lg->g[i], path, len, Hv);
		tf_gdn_rule(c, tmp, bt, gt, st->S[i], len, o, 0);
	}
	free(tmp);
	free(bt);
	free(gt);
	free(o);
	st->pos += len;
	tf_state_rollback(st);
	return 0;
}
