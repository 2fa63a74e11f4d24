/*
 * text.h: a job's ids as the text a client is sent, piece by piece.
 *
 * The text is the ids' bytes (special tokens left out, as OpenAI-style
 * servers skip them), cut at the first stop string, which is not sent. A
 * piece is released only when no later id can change it: the bytes of an
 * unfinished UTF-8 character, and an end of the text that may be the start
 * of a stop string, wait for the next id. What is released is valid
 * UTF-8 (a byte sequence that is not becomes U+FFFD), as JSON needs.
 */
#ifndef TF_SERVE_TEXT_H
#define TF_SERVE_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "tok/tok.h"

#define TF_STOPS_MAX 4          /* stop strings at most, as OpenAI allows */

typedef struct {
	const tf_tok *tok;
	char *stop[TF_STOPS_MAX];
	int nstop;
	char *buf;              /* (len) the text so far, raw bytes */
	size_t len, cap;
	size_t sent;            /* bytes of buf released */
	int stopped;            /* a stop string was found; the text ends before it */
	long ids_in_text;       /* ids whose bytes are in the text (all but those after a stop) */
} tf_text;

void tf_text_init(tf_text *t, const tf_tok *tok);
/* a stop string (copied; an empty one is ignored) */
void tf_text_stop(tf_text *t, const char *s, size_t n);
/* the next id; ignored once stopped */
void tf_text_push(tf_text *t, int32_t id);
/* the text that may be released now (all of it when `end`), as valid
 * UTF-8 into a new string; its length to *n */
char *tf_text_take(tf_text *t, int end, size_t *n);
void tf_text_free(tf_text *t);

/* s[0..n) with every invalid sequence replaced by U+FFFD, new string */
char *tf_utf8_clean(const char *s, size_t n, size_t *out_n);

#endif
