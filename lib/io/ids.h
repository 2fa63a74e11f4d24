/*
 * ids.h: reading token-id sequences, as text or as tf-records(5).
 *
 * Text: one sequence per line, decimal ids separated by blanks; '#' starts a
 * comment that runs to the end of the line, and a line that is only a
 * comment is no sequence; a blank line is a sequence of no ids (so outputs
 * made line by line stay in step with their inputs); a CR before the
 * newline is a blank. A NUL byte, a word that is not a decimal
 * number, or an id past int32 (or past vocab) is an error. A stream whose
 * first byte is 0x89 is read as binary ids records instead: one record
 * (kind ids, dtype int32, cols 1, rows = the ids) per sequence.
 */
#ifndef TF_IDS_H
#define TF_IDS_H

#include <stdint.h>
#include <stdio.h>

typedef struct {
	int32_t *ids;
	size_t n, cap;
} tf_seq;

typedef struct {
	FILE *f;
	const char *name;
	int binary;             /* -1 until the first byte was seen */
	long line;              /* text line of the last sequence read */
	char *buf;
	size_t cap;
} tf_ids_reader;

/*
 * The text's grammar a byte at a time, for a reader that hands ids on as
 * they come rather than a line at a time (tf-tok decode); tf_ids_next
 * reads its lines with it too.
 */
typedef struct {
	int64_t id;             /* the id being read, -1 = none */
	int comment;            /* in a '#' comment */
	int ids;                /* the line has an id */
	int line_ids;           /* of the line TF_IDS_EOL ended: it had an id, */
	int line_comment;       /* and a comment */
} tf_ids_lex;

enum { TF_IDS_ID = 1, TF_IDS_EOL = 2, TF_IDS_BAD = 4 };

void tf_ids_lex_init(tf_ids_lex *x);
/* takes byte c, or EOF after the last: what it completes, TF_IDS_* bits:
 * an id in *id (a number past int32 as INT32_MAX + 1), the end of a line
 * (at EOF only of one with an id), or a byte that is no digit, blank or
 * '#' and no part of a comment (then nothing else changes) */
int tf_ids_lex_byte(tf_ids_lex *x, int c, int64_t *id);

void tf_ids_open(tf_ids_reader *r, FILE *f, const char *name);
/* reads the next sequence into s; ids must lie in [0, vocab) unless vocab is
 * 0; returns 1 when read, 0 at end of input, -1 on error */
int tf_ids_next(tf_ids_reader *r, tf_seq *s, long vocab);
void tf_ids_close(tf_ids_reader *r);
/* the ids of text line p[0..len) (line `line` of `name`, for messages)
 * into s: 0, 1 for a line that is only a comment, -1 on bad input */
int tf_ids_parse(const char *name, long line, const char *p, size_t len, tf_seq *s, long vocab);
void tf_seq_push(tf_seq *s, int32_t id);
void tf_seq_free(tf_seq *s);
/* reads a whole file of sequences; returns the count or -1 */
long tf_ids_load(const char *path, tf_seq **out, long vocab);

#endif
