/* tok_cache.c: a bounded word -> ids hash table */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "tok_cache.h"

#define SLOTS (1u << 16)
#define MAXUSED (SLOTS / 2)

void tf_cache_init(tf_cache *c)
{
	memset(c, 0, sizeof *c);
	c->mask = SLOTS - 1;
	c->slot = tf_calloc(SLOTS, sizeof *c->slot);
	c->bytes_cap = (size_t)MAXUSED * 16;
	c->bytes = tf_malloc(c->bytes_cap);
	c->ids_cap = (size_t)MAXUSED * 4;
	c->ids = tf_malloc(c->ids_cap * sizeof *c->ids);
}

void tf_cache_free(tf_cache *c)
{
	free(c->slot);
	free(c->bytes);
	free(c->ids);
	memset(c, 0, sizeof *c);
}

static void clear(tf_cache *c)
{
	memset(c->slot, 0, (c->mask + 1) * sizeof *c->slot);
	c->used = c->bytes_len = c->ids_len = 0;
}

static size_t find(const tf_cache *c, const char *s, size_t len, uint64_t h)
{
	size_t i = h & c->mask;

	for (;; i = (i + 1) & c->mask) {
		const tf_cache_slot *x = &c->slot[i];
		if (!x->hash)
			return i;
		if (x->hash == h && x->len == len && !memcmp(c->bytes + x->off, s, len))
			return i;
	}
}

const int32_t *tf_cache_get(const tf_cache *c, const char *s, size_t len, uint64_t h, size_t *n)
{
	const tf_cache_slot *x = &c->slot[find(c, s, len, h | 1)];

	if (!x->hash)
		return NULL;
	*n = x->n;
	return c->ids + x->ids;
}

void tf_cache_put(tf_cache *c, const char *s, size_t len, uint64_t h, const int32_t *ids, size_t n)
{
	size_t i;

	if (len > TF_CACHE_MAXWORD)
		return;
	if (c->used >= MAXUSED || c->bytes_len + len > c->bytes_cap || c->ids_len + n > c->ids_cap)
		clear(c);
	i = find(c, s, len, h | 1);
	if (c->slot[i].hash)
		return;
	memcpy(c->bytes + c->bytes_len, s, len);
	memcpy(c->ids + c->ids_len, ids, n * sizeof *ids);
	c->slot[i] = (tf_cache_slot){ h | 1, c->bytes_len, len, c->ids_len, n };
	c->bytes_len += len;
	c->ids_len += n;
	c->used++;
}
