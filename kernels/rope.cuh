/* rope.cuh: per-head RMSNorm and partial rotary of queries and keys */
#ifndef TF_ROPE_CUH
#define TF_ROPE_CUH

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* For n tokens and `heads` heads, the head vector x[t*tstride + h*hstride ..
 * + D) is RMS-normed with factor w (D) and its first rot dims are turned
 * rotate-half style by position *pos + t at base theta (spec 3.4 step 3-4,
 * 3.5). pos lives on the device so a captured step reads the current one. */
int tf_cuda_qk_norm_rope(float *x, int n, int heads, int D, int64_t tstride, int64_t hstride,
			 const float *w, float eps, int rot, float theta, const int64_t *pos);

#ifdef __cplusplus
}
#endif

#endif
