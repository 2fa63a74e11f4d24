/*
 * tok_bpe.h: BPE merges by rank.
 *
 * The merges of tokenizer.json are a ranked list of pairs (a, b) whose
 * concatenation is itself a token. Here they are a hash table keyed on the
 * pair of ids, giving the rank and the id of the merged token, and
 * tf_bpe_merge() applies them to a word the way Hugging Face tokenizers
 * does: always the lowest-ranked adjacent pair, the leftmost on a tie,
 * until no adjacent pair has a merge.
 */
#ifndef TF_TOK_BPE_H
#define TF_TOK_BPE_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
	uint64_t key;           /* (uint64)a << 32 | b; UINT64_MAX = empty */
	int32_t rank, id;       /* rank of the merge, id of the merged token */
} tf_merge;

typedef struct {
	uint64_t key;           /* (uint64)rank << 32 | position of the left symbol */
	int32_t id;             /* the merged token the candidate would make */
} tf_bpe_cand;

typedef struct {
	tf_merge *slot;         /* (mask + 1) */
	size_t n, mask;
	/* scratch for tf_bpe_merge, grown as needed */
	int32_t *prev, *next;   /* (cap) neighbours of each symbol, -1 = none */
	tf_bpe_cand *heap;      /* (3 cap) candidate merges, a min-heap */
	size_t cap;
} tf_bpe;

void tf_bpe_init(tf_bpe *b);
void tf_bpe_free(tf_bpe *b);
/* adds merge (a, b) -> id at rank; a pair given again takes the new rank */
void tf_bpe_add(tf_bpe *b, int32_t a, int32_t bb, int32_t rank, int32_t id);
/* the merge of (a, b), NULL if none */
const tf_merge *tf_bpe_get(const tf_bpe *b, int32_t a, int32_t bb);
/* merges sym[0..n) in place; returns the number of symbols left */
size_t tf_bpe_merge(tf_bpe *b, int32_t *sym, size_t n);

#endif
