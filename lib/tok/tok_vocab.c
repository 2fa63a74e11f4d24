/* tok_vocab.c: the string <-> id hash table */
#include <stdlib.h>

#include "base/err.h"
#include "tok_vocab.h"

void tf_vocab_init(tf_vocab *v)
{
	memset(v, 0, sizeof *v);
	v->mask = 1023;
	v->slot = tf_calloc(v->mask + 1, sizeof *v->slot);
}

void tf_vocab_free(tf_vocab *v)
{
	free(v->arena);
	free(v->ent);
	free(v->slot);
	free(v->by_id);
	memset(v, 0, sizeof *v);
}

/* the slot that holds s, or the empty slot where it belongs */
static size_t find(const tf_vocab *v, const char *s, size_t len)
{
	size_t i = tf_hash(s, len) & v->mask;

	for (;; i = (i + 1) & v->mask) {
		uint32_t e = v->slot[i];
		if (!e)
			return i;
		const tf_vocab_ent *x = &v->ent[e - 1];
		if (x->len == len && !memcmp(v->arena + x->off, s, len))
			return i;
	}
}

static void grow(tf_vocab *v)
{
	size_t cap = 2 * (v->mask + 1);

	free(v->slot);
	v->mask = cap - 1;
	v->slot = tf_calloc(cap, sizeof *v->slot);
	for (size_t k = 0; k < v->n; k++) {
		const tf_vocab_ent *x = &v->ent[k];
		size_t i = tf_hash(v->arena + x->off, x->len) & v->mask;
		while (v->slot[i])
			i = (i + 1) & v->mask;
		v->slot[i] = k + 1;
	}
}

static void set_id(tf_vocab *v, int32_t id, size_t k)
{
	if ((size_t)id >= v->n_ids) {
		size_t n = v->n_ids ? v->n_ids : 1024;
		while (n <= (size_t)id)
			n *= 2;
		v->by_id = tf_realloc(v->by_id, n * sizeof *v->by_id);
		for (size_t i = v->n_ids; i < n; i++)
			v->by_id[i] = -1;
		v->n_ids = n;
	}
	v->by_id[id] = k;
}

void tf_vocab_add(tf_vocab *v, const char *s, size_t len, int32_t id)
{
	size_t i = find(v, s, len);

	if (v->slot[i]) {
		v->ent[v->slot[i] - 1].id = id;
		set_id(v, id, v->slot[i] - 1);
		return;
	}
	if (v->arena_len + len > v->arena_cap) {
		v->arena_cap = 2 * v->arena_cap + len + 4096;
		v->arena = tf_realloc(v->arena, v->arena_cap);
	}
	if (v->n == v->ent_cap) {
		v->ent_cap = v->ent_cap ? 2 * v->ent_cap : 1024;
		v->ent = tf_realloc(v->ent, v->ent_cap * sizeof *v->ent);
	}
	memcpy(v->arena + v->arena_len, s, len);
	v->ent[v->n] = (tf_vocab_ent){ v->arena_len, len, id };
	v->arena_len += len;
	v->slot[i] = ++v->n;
	set_id(v, id, v->n - 1);
	if (2 * v->n > v->mask)
		grow(v);
}

int32_t tf_vocab_get(const tf_vocab *v, const char *s, size_t len)
{
	uint32_t e = v->slot[find(v, s, len)];

	return e ? v->ent[e - 1].id : -1;
}

const char *tf_vocab_str(const tf_vocab *v, int32_t id, size_t *len)
{
	const tf_vocab_ent *x;

	if (id < 0 || (size_t)id >= v->n_ids || v->by_id[id] < 0)
		return NULL;
	x = &v->ent[v->by_id[id]];
	if (x->id != id)        /* the string was given another id later */
		return NULL;
	*len = x->len;
	return v->arena + x->off;
}
