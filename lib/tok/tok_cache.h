/*
 * tok_cache.h: the ids of words already encoded.
 *
 * Text repeats its words, so most pre-tokens were seen before: a hash table
 * from the word's bytes to its ids skips the byte mapping and the merges.
 * It has a fixed size; when it fills up it is emptied and starts again, so
 * memory stays bounded on any input.
 */
#ifndef TF_TOK_CACHE_H
#define TF_TOK_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define TF_CACHE_MAXWORD 64     /* longer words are not cached */

typedef struct {
	uint64_t hash;          /* 0 = empty slot */
	uint32_t off, len;      /* the word in bytes */
	uint32_t ids, n;        /* its ids in ids */
} tf_cache_slot;

typedef struct {
	tf_cache_slot *slot;    /* (mask + 1) */
	size_t used, mask;
	char *bytes;            /* (bytes_cap) words back to back */
	size_t bytes_len, bytes_cap;
	int32_t *ids;           /* (ids_cap) ids back to back */
	size_t ids_len, ids_cap;
} tf_cache;

void tf_cache_init(tf_cache *c);
void tf_cache_free(tf_cache *c);
/* the ids of word s (hash h = tf_hash(s, len)); NULL if not cached */
const int32_t *tf_cache_get(const tf_cache *c, const char *s, size_t len, uint64_t h, size_t *n);
void tf_cache_put(tf_cache *c, const char *s, size_t len, uint64_t h, const int32_t *ids, size_t n);

#endif
