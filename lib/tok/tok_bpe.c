/* tok_bpe.c: the merge table and the merge loop */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "tok_bpe.h"

#define EMPTY UINT64_MAX

static uint64_t pair_key(int32_t a, int32_t b)
{
	return (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
}

static size_t pair_hash(uint64_t k)
{
	k *= 0x9e3779b97f4a7c15ull;
	return k ^ (k >> 31);
}

void tf_bpe_init(tf_bpe *b)
{
	memset(b, 0, sizeof *b);
	b->mask = 1023;
	b->slot = tf_malloc((b->mask + 1) * sizeof *b->slot);
	memset(b->slot, 0xff, (b->mask + 1) * sizeof *b->slot);
}

void tf_bpe_free(tf_bpe *b)
{
	free(b->slot);
	free(b->prev);
	free(b->next);
	free(b->heap);
	memset(b, 0, sizeof *b);
}

static tf_merge *find(const tf_bpe *b, uint64_t key)
{
	size_t i = pair_hash(key) & b->mask;

	while (b->slot[i].key != EMPTY && b->slot[i].key != key)
		i = (i + 1) & b->mask;
	return &b->slot[i];
}

static void grow(tf_bpe *b)
{
	tf_merge *old = b->slot;
	size_t n = b->mask + 1;

	b->mask = 2 * n - 1;
	b->slot = tf_malloc(2 * n * sizeof *b->slot);
	memset(b->slot, 0xff, 2 * n * sizeof *b->slot);
	for (size_t i = 0; i < n; i++)
		if (old[i].key != EMPTY)
			*find(b, old[i].key) = old[i];
	free(old);
}

void tf_bpe_add(tf_bpe *b, int32_t a, int32_t bb, int32_t rank, int32_t id)
{
	uint64_t key = pair_key(a, bb);
	tf_merge *m = find(b, key);

	if (m->key == EMPTY)
		b->n++;
	*m = (tf_merge){ key, rank, id };
	if (2 * b->n > b->mask)
		grow(b);
}

const tf_merge *tf_bpe_get(const tf_bpe *b, int32_t a, int32_t bb)
{
	const tf_merge *m = find(b, pair_key(a, bb));

	return m->key == EMPTY ? NULL : m;
}

/* the candidate heap: smallest (rank, position) on top */
static void push(tf_bpe *b, size_t *n, const tf_merge *m, int32_t pos)
{
	tf_bpe_cand c = { (uint64_t)(uint32_t)m->rank << 32 | (uint32_t)pos, m->id };
	size_t i = (*n)++;

	while (i > 0 && b->heap[(i - 1) / 2].key > c.key) {
		b->heap[i] = b->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	b->heap[i] = c;
}

static tf_bpe_cand pop(tf_bpe *b, size_t *n)
{
	tf_bpe_cand top = b->heap[0], last = b->heap[--*n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && b->heap[c + 1].key < b->heap[c].key)
			c++;
		if (b->heap[c].key >= last.key)
			break;
		b->heap[i] = b->heap[c];
		i = c;
	}
	if (*n)
		b->heap[i] = last;
	return top;
}

size_t tf_bpe_merge(tf_bpe *b, int32_t *sym, size_t n)
{
	const tf_merge *m;
	size_t nheap = 0, out = 0;

	if (n < 2)
		return n;
	if (n > b->cap) {
		b->cap = n + n / 2;
		b->prev = tf_realloc(b->prev, b->cap * sizeof *b->prev);
		b->next = tf_realloc(b->next, b->cap * sizeof *b->next);
		b->heap = tf_realloc(b->heap, 3 * b->cap * sizeof *b->heap);
	}
	for (size_t i = 0; i < n; i++) {
		b->prev[i] = (int32_t)i - 1;
		b->next[i] = i + 1 < n ? (int32_t)i + 1 : -1;
	}
	for (size_t i = 0; i + 1 < n; i++)
		if ((m = tf_bpe_get(b, sym[i], sym[i + 1])))
			push(b, &nheap, m, i);
	/* a merged-away symbol has sym = -1; a candidate whose pair changed
	 * since it was pushed no longer names its merge and is dropped */
	while (nheap) {
		tf_bpe_cand c = pop(b, &nheap);
		int32_t pos = c.key & 0xffffffff, right = b->next[pos];

		if (sym[pos] < 0 || right < 0)
			continue;
		m = tf_bpe_get(b, sym[pos], sym[right]);
		if (!m || m->id != c.id)
			continue;
		sym[pos] = c.id;
		sym[right] = -1;
		b->next[pos] = b->next[right];
		if (b->next[pos] >= 0)
			b->prev[b->next[pos]] = pos;
		if (b->prev[pos] >= 0 && (m = tf_bpe_get(b, sym[b->prev[pos]], sym[pos])))
			push(b, &nheap, m, b->prev[pos]);
		if (b->next[pos] >= 0 && (m = tf_bpe_get(b, sym[pos], sym[b->next[pos]])))
			push(b, &nheap, m, pos);
	}
	for (size_t i = 0; i < n; i++)
		if (sym[i] >= 0)
			sym[out++] = sym[i];
	return out;
}
