/* sample.cuh: choosing tokens on the device */
#ifndef TF_SAMPLE_CUH
#define TF_SAMPLE_CUH

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* makes the draws' scratch room for n rows; call before capturing a step */
int tf_cuda_draw_reserve(int n);
/* out[r] = the first index of the largest of logits (n, V) row r */
int tf_cuda_argmax(const float *logits, int n, int V, int32_t *out);
/* out[r] = a draw from softmax(row r / temp) by the inverse CDF at u[r] in
 * [0, 1) (u on the device): the first id whose running sum, in id order,
 * exceeds u times the total, as tf_sample does without top-k or top-p */
int tf_cuda_sample(const float *logits, int n, int V, float temp, const double *u, int32_t *out);

#ifdef __cplusplus
}
#endif

#endif
