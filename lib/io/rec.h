/*
 * rec.h: tf-records(5), the binary stream the tools pipe to each other.
 *
 * A stream is a sequence of records. Each record is a 48-byte header and a
 * payload, all little-endian:
 *
 *   off size field
 *    0   8   magic    "\x89TFR\r\n\x1a\n"  (PNG-style: catches text-mode damage)
 *    8   2   version  1
 *   10   2   kind     1 ids, 2 logits, 3 tree (row 0 ids, row 1 parent indices)
 *   12   2   dtype    1 int32, 2 float32 (ids and tree are int32, logits float32)
 *   14   2   hdr_len  48 (payload starts here; readers reject other values)
 *   16   4   rows     positions in this record (u32)
 *   20   4   cols     values per row: 1 for ids, vocab for logits (u32)
 *   24   8   seq      sequence number, 0-based (u64)
 *   32   8   pos      position of the first row within its sequence (u64)
 *   40   8   reserved must be 0
 *   48  ...  payload  rows*cols values of dtype, row-major
 *
 * One record holds one sequence (or one step of it): tf-run writes one logits
 * record per sequence with rows = positions. rows*cols*size is capped at 2^34
 * bytes, and a reader allocates only as the payload actually arrives, so a
 * damaged header cannot ask for absurd memory.
 */
#ifndef TF_REC_H
#define TF_REC_H

#include <stdint.h>
#include <stdio.h>

#define TF_REC_MAGIC "\x89TFR\r\n\x1a\n"
#define TF_REC_VERSION 1
#define TF_REC_HDR 48
#define TF_REC_MAX_BYTES (1ull << 34)

enum { TF_REC_IDS = 1, TF_REC_LOGITS = 2, TF_REC_TREE = 3 };
enum { TF_DT_I32 = 1, TF_DT_F32 = 2 };

typedef struct {
	int kind, dtype;
	uint32_t rows, cols;
	uint64_t seq, pos;
	void *data;             /* (rows, cols) of dtype, owned by the record */
} tf_rec;

/* reads the next record of f; returns 1 when one was read, 0 at a clean end
 * of stream, -1 on error (bad magic, version, kind, dtype, reserved bytes,
 * size, short payload) */
int tf_rec_read(FILE *f, const char *name, tf_rec *r);
/* as tf_rec_read, but the first 8 bytes were already read into first[] */
int tf_rec_read_after(FILE *f, const char *name, const unsigned char *first, tf_rec *r);
/* reads and checks only the header (r->data stays NULL), leaving f at the
 * payload, for readers that stream rows; the first nfirst (0 to 8) bytes
 * were already read into first[]; returns as tf_rec_read */
int tf_rec_head(FILE *f, const char *name, const unsigned char *first, size_t nfirst, tf_rec *r);
/* writes one record; data holds rows*cols values of dtype */
int tf_rec_write(FILE *f, int kind, int dtype, uint32_t rows, uint32_t cols,
		 uint64_t seq, uint64_t pos, const void *data);
/* the header alone, for a payload the caller streams after it */
int tf_rec_write_header(FILE *f, int kind, int dtype, uint32_t rows, uint32_t cols,
			uint64_t seq, uint64_t pos);
void tf_rec_free(tf_rec *r);
size_t tf_dtype_size(int dtype);
/* 1 when the 8 bytes at p are the record magic */
int tf_rec_is_magic(const unsigned char *p);

#endif
