/*
 * ids.h: reading token-id sequences, as text or as tf-records(5).
 *
 * Text: one sequence per line, decimal ids separated by blanks; '#' starts a
 * comment that runs to the end of the line; blank lines are skipped; a CR
 * before the newline is a blank. A NUL byte, a word that is not a decimal
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

void tf_ids_open(tf_ids_reader *r, FILE *f, const char *name);
/* reads the next sequence into s; ids must lie in [0, vocab) unless vocab is
 * 0; returns 1 when read, 0 at end of input, -1 on error */
int tf_ids_next(tf_ids_reader *r, tf_seq *s, long vocab);
void tf_ids_close(tf_ids_reader *r);
void tf_seq_push(tf_seq *s, int32_t id);
void tf_seq_free(tf_seq *s);
/* reads a whole file of sequences; returns the count or -1 */
long tf_ids_load(const char *path, tf_seq **out, long vocab);

#endif
