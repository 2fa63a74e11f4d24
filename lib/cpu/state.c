/* state.c: per-sequence caches */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "state.h"

static int64_t kv_row(const tf_model *m)
{
	return (int64_t)m->c.kv_heads * m->c.head_dim;
}

static int64_t conv_size(const tf_model *m)
{
	return (int64_t)(m->c.conv_k - 1) * m->conv_dim;
}

static int64_t s_size(const tf_model *m)
{
	return (int64_t)m->c.lin_v_heads * m->c.lin_k_dim * m->c.lin_v_dim;
}

tf_state *tf_state_new(const tf_model *m)
{
	tf_state *st = tf_calloc(1, sizeof *st);
	int L = m->c.layers;

	st->m = m;
	st->k = tf_calloc(L, sizeof *st->k);
	st->v = tf_calloc(L, sizeof *st->v);
	st->conv = tf_calloc(L, sizeof *st->conv);
	st->S = tf_calloc(L, sizeof *st->S);
	for (int i = 0; i < L; i++)
		if (!m->c.full[i]) {
			st->conv[i] = tf_calloc(conv_size(m), sizeof(float));
			st->S[i] = tf_calloc(s_size(m), sizeof(float));
		}
	return st;
}

void tf_state_reset(tf_state *st)
{
	const tf_model *m = st->m;

	st->pos = 0;
	tf_state_rollback(st);
	for (int i = 0; i < m->c.layers; i++)
		if (!m->c.full[i]) {
			memset(st->conv[i], 0, conv_size(m) * sizeof(float));
			memset(st->S[i], 0, s_size(m) * sizeof(float));
		}
}

static void grow(tf_state *st, int64_t cap)
{
	const tf_model *m = st->m;

	for (int i = 0; i < m->c.layers; i++)
		if (m->c.full[i]) {
			st->k[i] = tf_realloc(st->k[i], cap * kv_row(m) * sizeof(float));
			st->v[i] = tf_realloc(st->v[i], cap * kv_row(m) * sizeof(float));
		}
	st->cap = cap;
}

void tf_state_reserve(tf_state *st, int64_t n)
{
	int64_t need = st->pos + n, cap = st->cap ? st->cap : 64;

	if (need <= st->cap)
		return;
	while (cap < need)
		cap *= 2;
	grow(st, cap);
}

void tf_state_reserve_total(tf_state *st, int64_t positions)
{
	if (positions > st->cap)
		grow(st, positions);
}

uint64_t tf_state_bytes(const tf_model *m, int64_t positions)
{
	uint64_t b = 0;

	for (int i = 0; i < m->c.layers; i++)
		if (m->c.full[i])
			b += 2 * sizeof(float) * (uint64_t)positions * kv_row(m);
		else
			b += sizeof(float) * (uint64_t)(conv_size(m) + s_size(m));
	return b;
}

void tf_state_copy(tf_state *dst, const tf_state *src)
{
	const tf_model *m = src->m;

	dst->pos = 0;
	tf_state_rollback(dst);
	tf_state_reserve(dst, src->pos);
	dst->pos = src->pos;
	for (int i = 0; i < m->c.layers; i++) {
		if (m->c.full[i]) {
			memcpy(dst->k[i], src->k[i], src->pos * kv_row(m) * sizeof(float));
			memcpy(dst->v[i], src->v[i], src->pos * kv_row(m) * sizeof(float));
		} else {
			memcpy(dst->conv[i], src->conv[i], conv_size(m) * sizeof(float));
			memcpy(dst->S[i], src->S[i], s_size(m) * sizeof(float));
		}
	}
}

void tf_state_free(tf_state *st)
{
	if (!st)
		return;
	tf_state_rollback(st);
	for (int i = 0; i < st->m->c.layers; i++) {
		if (st->tree.mq) {
			free(st->tree.mq[i]);
			free(st->tree.qkv[i]);
			free(st->tree.beta[i]);
			free(st->tree.g[i]);
		}
		free(st->k[i]);
		free(st->v[i]);
		free(st->conv[i]);
		free(st->S[i]);
	}
	free(st->k);
	free(st->v);
	free(st->conv);
	free(st->S);
	free(st->tree.mq);
	free(st->tree.qkv);
	free(st->tree.beta);
	free(st->tree.g);
	free(st);
}
