/*
 * rope.cuh: per-head RMSNorm and partial rotary of queries and keys.
 *
 * Tried and slower for a decode step: the norm and the turns done in the
 * head's own memory (two more trips to L2); queries, keys and the cache
 * append as three kernels; one kernel for heads of any size taking heads
 * of 64, 128 and 256 as well.
 */
#ifndef TF_ROPE_CUH
#define TF_ROPE_CUH

#include <stdint.h>

#include "rows.cuh"

#ifdef __cplusplus
extern "C" {
#endif

/* the frequencies a head is turned by: plain rope when inv is NULL, each
 * pair's f = theta^(-2j/rot) made in the kernel by the expression it always
 * used (the same bits as before tables came); else inv (rot/2 floats on the
 * device, yarn's table from model/rope.h) gives f and cos and sin are times
 * scale, the attention factor */
typedef struct {
	float theta;
	const float *inv;
	float scale;
} tf_rope_freq;

/* For n tokens and `heads` heads, the head vector x[t*tstride + h*hstride ..
 * + D) is RMS-normed with factor w (D) and its first rot dims are turned
 * rotate-half style by position p = *pos + t at frequencies fr: for j <
 * rot/2, a = x[j], b = x[j + rot/2], f = theta^(-2j/rot) (or fr.inv[j]),
 * x[j] = a cos(p f) - b sin(p f), x[j + rot/2] = b cos(p f) + a sin(p f)
 * (transformers' apply_rotary_pos_emb; cos and sin times fr.scale with a
 * table). pos lives on the device so a captured step reads
 * the current one; it is copied in before the pass's first kernel (read
 * before the kernel's wait). D at most 512, rot at most D. */
int tf_cuda_qk_norm_rope(float *x, int n, int heads, int D, int64_t tstride, int64_t hstride,
			 const float *w, float eps, int rot, tf_rope_freq fr, const int64_t *pos);

/* The attention inputs of a decode step in one launch: in the fused
 * projection rows x (n rows of T: Hq query-and-gate pairs of 2D, then Hkv
 * keys and Hkv values of D), the queries normed (qw) and turned in place,
 * the keys normed (kw) and turned in place and copied with the values into
 * the caches kc, vc (cap, Hkv, D) at rows *pos .. *pos + n - 1: the same
 * values as tf_cuda_qk_norm_rope twice and tf_cuda_kv_append. */
int tf_cuda_attn_prep(float *x, int n, int Hq, int Hkv, int D, int64_t T, const float *qw, const float *kw,
		      float eps, int rot, tf_rope_freq fr, const int64_t *pos, float *kc, float *vc);
/* the same for rows each of its own sequence and position (rows.cuh):
 * row t's keys and values into rows->k[t], rows->v[t] at row rows->pos[t],
 * its turns by that position */
int tf_cuda_attn_prep_rows(float *x, int n, int Hq, int Hkv, int D, int64_t T, const float *qw, const float *kw,
			   float eps, int rot, tf_rope_freq fr, const tf_kv_rows *rows);

#ifdef __cplusplus
}
#endif

#endif
