/* sample_top.cuh: top-k and top-p draws on the device */
#ifndef TF_SAMPLE_TOP_CUH
#define TF_SAMPLE_TOP_CUH

#include <stdint.h>

#include "sample.cuh"

#ifdef __cplusplus
extern "C" {
#endif

/* out[r] = tf_sample's draw with a[r]'s top-k and top-p (at least one of
 * them on): the same order (probability, then id), cuts and inverse CDF */
int tf_cuda_sample_top(const float *logits, int n, int V, const tf_draw_args *a, int32_t *out,
		       const tf_draw_next *next);
/* the scratch of those draws for n rows of V (tf_cuda_draw_reserve calls it) */
int tf_cuda_top_reserve(int n, int V);

#ifdef __cplusplus
}
#endif

#endif
