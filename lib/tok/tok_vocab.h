/*
 * tok_vocab.h: token strings to ids and back.
 *
 * An open-addressing hash table over a string arena, so a 248k-token
 * vocabulary loads in one pass and each lookup is one hash and a compare.
 * Strings are byte strings (any bytes, length given).
 */
#ifndef TF_TOK_VOCAB_H
#define TF_TOK_VOCAB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
	uint32_t off, len;      /* the string in arena */
	int32_t id;
} tf_vocab_ent;

typedef struct {
	char *arena;            /* (arena_len) token strings back to back */
	size_t arena_len, arena_cap;
	tf_vocab_ent *ent;      /* (n) entries in insertion order */
	size_t n, ent_cap;
	uint32_t *slot;         /* (mask + 1) entry index + 1, 0 = empty */
	size_t mask;
	int32_t *by_id;         /* (n_ids) entry index of each id, -1 = none */
	size_t n_ids;
} tf_vocab;

/* a fast hash for short byte strings (words, tokens) */
static inline uint64_t tf_hash(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ (n * 0x100000001b3ull), w;

	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, s, n);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 29);
}

void tf_vocab_init(tf_vocab *v);
void tf_vocab_free(tf_vocab *v);
/* adds s -> id; a string already present takes the new id (as a JSON object
 * read twice would); ids must be >= 0 */
void tf_vocab_add(tf_vocab *v, const char *s, size_t len, int32_t id);
/* the id of s, -1 if absent */
int32_t tf_vocab_get(const tf_vocab *v, const char *s, size_t len);
/* the string of id (not NUL-terminated), NULL if no string has that id */
const char *tf_vocab_str(const tf_vocab *v, int32_t id, size_t *len);

#endif
