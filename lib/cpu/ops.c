/* ops.c: norms, rotary and other element-wise steps */
#include "matmul.h"
#include "ops.h"

void tf_rmsnorm(float *y, const float *x, const float *w, int64_t n, int64_t d, float eps)
{
	for (int64_t r = 0; r < n; r++) {
		const float *xr = x + r * d;
		float *yr = y + r * d;
		float inv = 1.0f / sqrtf(tf_dot(xr, xr, d) / (float)d + eps);
		for (int64_t i = 0; i < d; i++)
			yr[i] = xr[i] * inv * w[i];
	}
}

/* pairs (j, j + rot/2) turn by pos * theta^(-2j/rot): the NeoX "rotate
 * half" layout, computed in fp32 the way transformers computes inv_freq */
void tf_rope(float *x, int rot, int64_t pos, float theta)
{
	int half = rot / 2;

	for (int j = 0; j < half; j++) {
		float inv = 1.0f / powf(theta, (float)(2 * j) / (float)rot);
		float ang = (float)pos * inv, c = cosf(ang), s = sinf(ang);
		float a = x[j], b = x[j + half];
		x[j] = a * c - b * s;
		x[j + half] = b * c + a * s;
	}
}

void tf_add(float *x, const float *y, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		x[i] += y[i];
}
