/*
 * tok.h: a Hugging Face tokenizer.json for byte-level BPE, both ways.
 *
 * Encoding runs the same stages as tokenizers' Tokenizer::encode with no
 * post-processing:
 *
 *   text -> added tokens found in the raw text (tok_added)
 *        -> the rest normalized (tok_norm), added tokens found again
 *        -> pre-tokenizer words (tok_pre, its regexes through tok_regex)
 *        -> each word's bytes as byte-level characters (tok_bytes)
 *        -> BPE merges by rank (tok_bpe), memoized per word (tok_cache)
 *
 * (tok_enc.c runs these.) Decoding maps every id to the bytes it stands
 * for (tok_dec). The tokenizer is read from a JSON text in memory (tok.c,
 * with tok_model.c and tok_pipeline.c for the sections), so the file can
 * come from a folder or from inside a bundle alike. Only what byte-level
 * BPE needs is supported; anything else in the file is refused by name,
 * never guessed.
 */
#ifndef TF_TOK_H
#define TF_TOK_H

#include <stddef.h>
#include <stdint.h>

#include "io/ids.h"
#include "tok_added.h"
#include "tok_bpe.h"
#include "tok_cache.h"
#include "tok_norm.h"
#include "tok_pre.h"
#include "tok_vocab.h"

#define TF_TOK_MAXID (1 << 24)  /* ids at or past this are refused on load */

enum { TF_PIECE_TOKEN = 1, TF_PIECE_SPECIAL = 2 };

typedef struct {
	char *name;             /* where it came from, for messages */
	tf_vocab vocab;         /* model.vocab: token string -> id */
	tf_bpe bpe;             /* model.merges: (id, id) -> rank, merged id */
	tf_added added;         /* added_tokens */
	tf_norm norm;           /* normalizer */
	tf_pretok pre;          /* pre_tokenizer */
	tf_cache cache;         /* word bytes -> ids */
	int32_t byte_id[256];   /* the token of each byte's character, -1 = none */
	int32_t unk;            /* model.unk_token's id, -1 = none */
	int fuse_unk, ignore_merges;
	long n_vocab;           /* 1 + the largest id */
	/* decoding */
	char *piece;            /* the bytes of every id back to back */
	uint32_t *piece_off;    /* (n_vocab + 1) id i is piece[off[i] .. off[i+1]) */
	uint8_t *piece_flag;    /* (n_vocab) TF_PIECE_* bits; 0 = no token has this id */
	/* encoding scratch */
	tf_seq *out;            /* where the ids of the current encode go */
	int32_t *sym;           /* (sym_cap) the symbols of one word */
	size_t sym_cap;
	char *spelled;          /* (spelled_cap) one word in byte-level characters */
	size_t spelled_cap;
} tf_tok;

/* MODEL is a folder holding tokenizer.json, a tf-bundle(5) that carries
 * one, or a tokenizer.json itself */
tf_tok *tf_tok_load(const char *model);
/* from the JSON text json[0..len); name is used in messages */
tf_tok *tf_tok_load_json(const char *json, size_t len, const char *name);
void tf_tok_free(tf_tok *t);

/* appends the ids of text[0..len) to out; the text must be valid UTF-8
 * (the error says where it is not) */
int tf_tok_encode(tf_tok *t, const char *text, size_t len, tf_seq *out);

/* the bytes id stands for; NULL when no token has that id (or there is
 * no tokenizer: t NULL, as tf-serve --no-tokenizer runs) */
static inline const char *tf_tok_piece(const tf_tok *t, int32_t id, size_t *len)
{
	if (!t || id < 0 || id >= t->n_vocab || !t->piece_flag[id])
		return NULL;
	*len = t->piece_off[id + 1] - t->piece_off[id];
	return t->piece + t->piece_off[id];
}

static inline int tf_tok_special(const tf_tok *t, int32_t id)
{
	return t && id >= 0 && id < t->n_vocab && (t->piece_flag[id] & TF_PIECE_SPECIAL);
}

/* the id of an added token's text, -1 if there is none (or no tokenizer) */
int32_t tf_tok_added_id(const tf_tok *t, const char *content);

#endif
