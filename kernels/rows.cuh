/*
 * rows.cuh: where the rows of a pass over many sequences keep their
 * caches. A decode window is rows of one sequence at consecutive
 * positions; a round of streams (lib/gpu/round_cuda.c) is rows of several
 * sequences, each at its own position over its own caches. The kernels of
 * a window take these tables in place of one cache and one position, read
 * them on the device (so a captured pass replays with new ones) and do the
 * same arithmetic either way, so a row's bits do not depend on the rows
 * beside it.
 */
#ifndef TF_ROWS_CUH
#define TF_ROWS_CUH

#include <stdint.h>

/* the full-attention rows of a pass, one layer's tables (device memory) */
typedef struct tf_kv_rows {
	const int64_t *pos;             /* (n) row t's position in its sequence */
	float *const *k, *const *v;     /* (n) row t's sequence's key and value caches (cap, Hkv, D) */
} tf_kv_rows;

/* the Gated DeltaNet segments of a pass: runs of rows of one sequence,
 * taken token after token on that sequence's states (device memory) */
typedef struct tf_gdn_segs {
	const int32_t *first, *n;       /* (nseg) a segment's first row and its rows */
	float *const *S, *const *conv;  /* (nseg) its sequence's recurrent state and conv tail, this layer */
	int nseg;
} tf_gdn_segs;

#endif
