/*
 * attn.cuh: causal gated attention over a KV cache, grouped KV heads.
 *
 * Tried and slower in the decode kernel (attn.cu):
 * - one cache row at a time a warp (its rows then a chain of trips to L2);
 * - one block a (token, head) at any depth, not split over TF_ATTN_SPLIT;
 * - every row of a block's first chunk sent to L2 before the wait;
 * - the kernels for heads of any size taking heads of 64 to 512 as well.
 */
#ifndef TF_ATTN_CUH
#define TF_ATTN_CUH

#include <stdint.h>

#include "rows.cuh"

#ifdef __cplusplus
extern "C" {
#endif

/* Room for decode attention split over TF_ATTN_SPLIT blocks a (token, head)
 * once a context passes a chunk of cache rows: each block's softmax state,
 * and arrival counts (zero between launches) so the last block merges them.
 * For up to 16 rows of up to `heads` heads of up to `dim`; without it (NULL
 * or too small) a (token, head) is one block. The sequences of a model
 * share one (their passes run one at a time): a captured step points at it. */
#define TF_ATTN_SPLIT 8
typedef struct tf_attn_scratch {
	float *part;            /* (16 * heads, TF_ATTN_SPLIT, dim + 2) */
	unsigned *count;        /* (16 * heads) */
	int heads, dim;
} tf_attn_scratch;

/* For n new tokens at positions *pos .. *pos + n - 1 (their keys and values
 * already in the cache; *pos copied in before the pass's first kernel, so
 * that the kernel reads it before its wait for the kernel before it,
 * kernels/common.cuh): query head h of token t attends to cache rows 0 ..
 * *pos + t of KV head h / (Hq / Hkv) with scale 1/sqrt(D), softmax in fp32,
 * and the result is gated by sigmoid(gate) (transformers'
 * Qwen3_5Attention.forward).
 *   qg  (n, Hq, 2, D)  query (normed, rotated), then gate, per head; token
 *                      t's at qg + t * qstride
 *   kc, vc (cap, Hkv, D) the layer's cache
 *   out (2, n, Hq, D) split
 * For n <= 16 (decode steps and windows) each (token, head) is computed
 * alone, bit-identical for any such n. Longer passes run the tensor-core
 * kernel of attn_prompt.cuh where it takes D (64, 128, 256): its rows agree
 * with the short passes' to about 2^-16 relative, not bit for bit. sc: the
 * sequence's scratch for splitting a long context (or NULL). */
int tf_cuda_attention(const float *qg, int64_t qstride, const float *kc, const float *vc, const int64_t *pos,
		      int n, int Hq, int Hkv, int D, uint16_t *out, const tf_attn_scratch *sc);

/* the same for n <= 16 rows each of its own sequence (rows.cuh): row t
 * attends to rows 0 .. rows->pos[t] of rows->k[t], rows->v[t], its bits
 * those of the row in a window of its own sequence */
int tf_cuda_attention_rows(const float *qg, int64_t qstride, const tf_kv_rows *rows, int n, int Hq, int Hkv, int D,
			   uint16_t *out, const tf_attn_scratch *sc);

int tf_cuda_attn_scratch_init(tf_attn_scratch *sc, int heads, int dim);
void tf_cuda_attn_scratch_free(tf_attn_scratch *sc);

/* appends n rows of keys and values (row = Hkv*D values each, token t's at
 * k + t * ld and v + t * ld) to the cache at rows *pos .. *pos + n - 1 (the
 * position read on the device) */
int tf_cuda_kv_append(const float *k, const float *v, int64_t ld, int n, int64_t row, const int64_t *pos,
		      float *kc, float *vc);

#ifdef __cplusplus
}
#endif

#endif
