/*
 * tok_norm.h: the normalizer of tokenizer.json (NFC, NFD, NFKC, NFKD or a
 * sequence of them), through utf8proc.
 *
 * Text is mostly ASCII, and a character below U+0300 is a boundary that
 * NFC never moves across (it has no decomposition, combining class 0, and
 * composes only with what follows). So only the runs of higher characters,
 * with the character before each, go through utf8proc; the rest is copied.
 */
#ifndef TF_TOK_NORM_H
#define TF_TOK_NORM_H

#include <stddef.h>

enum { TF_NFC = 1, TF_NFD, TF_NFKC, TF_NFKD };

typedef struct {
	int form[8];            /* normal forms applied in order */
	int n;
	char *buf[2];           /* (cap[i]) the text after odd and even forms */
	size_t cap[2];
} tf_norm;

/* normalizes s[0..n) (valid UTF-8); *out is s itself when nothing changes,
 * else one of nm->buf; returns the new length, or -1 with an error */
long tf_norm_apply(tf_norm *nm, const char *s, size_t n, const char **out);
void tf_norm_free(tf_norm *nm);

#endif
