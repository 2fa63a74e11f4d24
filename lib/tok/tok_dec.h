/*
 * tok_dec.h: ids back to bytes, and a stream that never splits a character.
 *
 * Every id's bytes are worked out once at load time (the ByteLevel
 * decoder: each character of the token back to its byte; a token with a
 * character outside the alphabet, such as an added token with a space,
 * stands for its own UTF-8 bytes, as in tokenizers).
 *
 * One token often ends in the middle of a UTF-8 character (a byte-level
 * vocabulary splits emoji and CJK across tokens), so a writer that flushes
 * after every token holds back such an unfinished tail until the bytes
 * that complete it arrive, or the text ends. The bytes written are exactly
 * the tokens' bytes, valid UTF-8 or not.
 */
#ifndef TF_TOK_DEC_H
#define TF_TOK_DEC_H

#include <stdio.h>

#include "tok.h"

/* fills t->piece, t->piece_off and t->piece_flag */
void tf_tok_dec_build(tf_tok *t);

typedef struct {
	FILE *f;
	char held[4];           /* an unfinished character, at most 3 bytes */
	int n;
} tf_detok;

void tf_detok_init(tf_detok *d, FILE *f);
/* writes s[0..n) except an unfinished character at its end, which is
 * kept for the next call; -1 on a write error */
int tf_detok_put(tf_detok *d, const char *s, size_t n);
/* the text ends: writes whatever is held */
int tf_detok_end(tf_detok *d);

#endif
