/*
 * rows.h: a logits stream read one row at a time.
 *
 * A stream is tf-records(5) logits records (rows are positions, cols the
 * vocabulary) or bare little-endian float32 rows of a width given by the
 * caller. Only one row is held in memory, so a stream of gigabytes with a
 * vocabulary of 248320 costs about a megabyte.
 */
#ifndef TF_ROWS_H
#define TF_ROWS_H

#include <stdint.h>
#include <stdio.h>

typedef struct {
	FILE *f;
	char *name;
	uint32_t raw_cols;      /* width for a stream without the record magic, 0: records only */
	int raw;                /* 1 bare float32, 0 records, -1 not yet known */
	uint32_t cols;          /* values a row; 0 until the first row */
	uint64_t left;          /* rows left in the current record */
	uint64_t rec_seq;       /* sequence number of the current record */
	uint64_t next_pos;      /* position of its next row */
	uint64_t seq, pos;      /* of the row last returned (records only) */
	uint64_t n;             /* rows returned so far */
	unsigned char peek[8];  /* bytes read while telling records from raw */
	size_t npeek;
	float *row;             /* (cols) the row last returned, as read */
} tf_rows;

/* opens path ("-" is stdin); with raw_cols > 0 a stream that does not begin
 * with the record magic is read as bare float32 rows of raw_cols values */
int tf_rows_open(tf_rows *r, const char *path, uint32_t raw_cols);
/* reads the next row into r->row (r->cols values; r->seq and r->pos say
 * where it lies when the stream is records); returns 1, 0 at the end of
 * the stream, -1 on error (not logits, width changes, truncated) */
int tf_rows_next(tf_rows *r);
void tf_rows_close(tf_rows *r);

#endif
