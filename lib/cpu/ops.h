/* ops.h: the small CPU operations the forward pass is built from */
#ifndef TF_OPS_H
#define TF_OPS_H

#include <math.h>
#include <stdint.h>

#include "model/rope.h"

static inline float tf_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
static inline float tf_silu(float x) { return x / (1.0f + expf(-x)); }
/* torch's softplus: the input itself above 20 */
static inline float tf_softplus(float x) { return x > 20.0f ? x : log1pf(expf(x)); }

/* y (n, d) = x / sqrt(mean(x^2) + eps) * w, row by row; y may be x */
void tf_rmsnorm(float *y, const float *x, const float *w, int64_t n, int64_t d, float eps);
/* rotate-half rotary on the first r->rot dims of one head vector at
 * position pos, by r's frequencies */
void tf_rope(float *x, const tf_rope_table *r, int64_t pos);
/* x (n) += y (n) */
void tf_add(float *x, const float *y, int64_t n);

#endif
