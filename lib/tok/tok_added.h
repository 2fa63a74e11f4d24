/*
 * tok_added.h: added tokens (<|im_start|> and friends), found in the text
 * before anything else.
 *
 * The text is cut at every added token; the pieces between go on to the
 * normalizer and BPE, the tokens become their ids directly. As in Hugging
 * Face tokenizers the leftmost match wins and, among matches there, the
 * longest; tokens marked normalized are looked for in the normalized text,
 * the others in the raw text. lstrip/rstrip make a token swallow the
 * blanks beside it, single_word makes it match only between words.
 */
#ifndef TF_TOK_ADDED_H
#define TF_TOK_ADDED_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
	char *text;             /* (len) the token's text as given */
	size_t len;
	int32_t id;
	int special, lstrip, rstrip, single_word, normalized;
} tf_added_tok;

/* a node of the byte trie of the tokens' texts: the node of a text's
 * first k bytes; its children are a list through sibling */
typedef struct {
	int32_t child, sibling; /* node indices, 0 for none (node 0 is no child) */
	int32_t tok;            /* 1 + index of the token whose whole text ends here, or 0 */
	unsigned char byte;     /* the byte that leads here from the parent */
} tf_added_node;

typedef struct {
	tf_added_tok *tok;      /* (n) */
	size_t n;
	/* per kind (0 raw, 1 normalized): a trie of the texts, so that the
	 * longest token at a position is found in one walk over the bytes it
	 * spans, and memory grows with the texts' bytes, not their prefixes' */
	tf_added_node *node[2]; /* (nnode); node 0 unused */
	size_t nnode[2], capnode[2];
	int32_t root[2][256];   /* node of each first byte, 0 for none */
	size_t maxlen[2];
} tf_added;

void tf_added_init(tf_added *a);
void tf_added_free(tf_added *a);
/* adds tok (its text is copied), to be found where s[0..len) is: its text,
 * or for a normalized token that text normalized; a text given twice keeps
 * the later token */
void tf_added_add(tf_added *a, const char *s, size_t len, const tf_added_tok *tok);
/* the first added token of the kind in t[from..n): its id, and the span
 * [*start, *end) it takes, blanks it strips included; -1 when none */
/* the token whose text of the kind is exactly s[0..len): 1 + its index, or 0 */
int32_t tf_added_find(const tf_added *a, int normalized, const char *s, size_t len);
int32_t tf_added_next(const tf_added *a, int normalized, const char *t, size_t n, size_t from,
		      size_t *start, size_t *end);

#endif
