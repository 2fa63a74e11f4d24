/*
 * gguf_blocks.h: GGUF tensors as weights in our forms (gguf_blocks.c says
 * which types become which form, exactly).
 */
#ifndef TF_GGUF_BLOCKS_H
#define TF_GGUF_BLOCKS_H

#include <stdint.h>

#include "gguf.h"
#include "weight.h"

/* where our rows and columns come from in the stored tensor: row r is
 * stored row row[r] (NULL: r); column block k of colblk columns is stored
 * block col[k] (colblk 0: columns as stored) */
typedef struct {
	const int64_t *row;
	const int64_t *col;
	int64_t colblk;
} tf_gguf_map;

/* our TF_F32/TF_F16/TF_BF16 of a float ggml type, else 0 */
int tf_ggml_dtype(int type);
/* the matrix t (ne = [cols, rows]) as a weight, reordered by m (or NULL);
 * *owned is what the weight's data lives in when it is not the file
 * (free it with the store); -1 with a message naming the tensor and its
 * type when the type has no exact form */
int tf_gguf_weight(const tf_gguf_tensor *t, const tf_gguf_map *m, tf_weight *w, void **owned);
/* every value of t as ggml dequantizes it into out[n]; -1 when t does not
 * hold n values or its type has no exact form */
int tf_gguf_floats(const tf_gguf_tensor *t, float *out, int64_t n);

#endif
