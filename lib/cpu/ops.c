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

/* pairs (j, j + rot/2) turn by pos * inv[j] (theta^(-2j/rot) unless
 * scaled): the NeoX "rotate half" layout in fp32, cos and sin times the
 * table's scale as transformers multiplies them (by 1 exactly but for yarn) */
void tf_rope(float *x, const tf_rope_table *r, int64_t pos)
{
	int half = r->rot / 2;

	for (int j = 0; j < half; j++) {
		float ang = (float)pos * r->inv[j], c = cosf(ang) * r->scale, s = sinf(ang) * r->scale;
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
