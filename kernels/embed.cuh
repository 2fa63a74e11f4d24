/* embed.cuh: embedding rows of any weight form (token id -> hidden vector) */
#ifndef TF_EMBED_CUH
#define TF_EMBED_CUH

#include <stdint.h>

#include "model/weight.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out (n, w->cols) f32 = rows ids[0..n) of W, dequantized; ids on the device */
int tf_cuda_embed(const tf_weight *w, const int32_t *ids, int n, float *out);

#ifdef __cplusplus
}
#endif

#endif
