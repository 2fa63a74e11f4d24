/*
 * gdnref.h: the Gated DeltaNet delta rule in float64, token by token, as
 * transformers' torch_recurrent_gated_delta_rule runs it: the reference the CPU forms and the GPU
 * kernels of the rule are held to.
 *
 * Value head h reads key head h / (Hv / Hk). Token t's q heads, k heads
 * and v heads lie at qkv + t * C, C = 2 Hk Dk + Hv Dv; its decay exp(g)
 * and beta at alpha and beta + t * ld + h. S (Hv, Dk, Dv) is carried from
 * token to token; o (n, Hv, Dv).
 *
 * Also the inputs those tests feed it, from a fixed random stream.
 */
#ifndef TF_T_GDNREF_H
#define TF_T_GDNREF_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "cpu/ops.h"

static inline void delta_rule64(int Hk, int Hv, int Dk, int Dv, int64_t n, const float *qkv,
				const double *alpha, const double *beta, int64_t ld, double *S, double *o)
{
	const int64_t kd = (int64_t)Hk * Dk, C = 2 * kd + (int64_t)Hv * Dv;

	for (int64_t t = 0; t < n; t++)
		for (int h = 0; h < Hv; h++) {
			const float *q = qkv + t * C + (h / (Hv / Hk)) * Dk, *k = q + kd;
			const float *v = qkv + t * C + 2 * kd + (int64_t)h * Dv;
			const double a = alpha[t * ld + h], b = beta[t * ld + h];
			double *Sh = S + (int64_t)h * Dk * Dv;
			for (int j = 0; j < Dv; j++) {
				double mv = 0, op = 0;
				for (int i = 0; i < Dk; i++)
					mv += (Sh[i * Dv + j] *= a) * k[i];
				const double d = b * (v[j] - mv);
				for (int i = 0; i < Dk; i++)
					op += (Sh[i * Dv + j] += k[i] * d) * q[i];
				o[(t * Hv + h) * Dv + j] = op;
			}
		}
}

/* the same from float gates g (the decay's log) and beta, token t's at
 * + t * ld + h */
static inline void delta_rule64_f(int Hk, int Hv, int Dk, int Dv, int64_t n, const float *qkv,
				  const float *beta, const float *g, int64_t ld, double *S, double *o)
{
	double *al = malloc(8 * n * ld), *be = malloc(8 * n * ld);

	for (int64_t i = 0; i < n * ld; i++) {
		al[i] = exp((double)g[i]);
		be[i] = beta[i];
	}
	delta_rule64(Hk, Hv, Dk, Dv, n, qkv, al, be, ld, S, o);
	free(al);
	free(be);
}

/* max |got - want| over max |want| (a NaN in got sticks) */
static inline double rel_err64(const float *got, const double *want, int64_t n)
{
	double md = 0, mw = 0;

	for (int64_t i = 0; i < n; i++) {
		double d = fabs(got[i] - want[i]);
		if (!(d <= md))
			md = d;
		if (fabs(want[i]) > mw)
			mw = fabs(want[i]);
	}
	return mw > 0 ? md / mw : md;
}

static uint64_t ref_rng = 0x2545f4914f6cdd1dull;

static inline double ref_unit(void)     /* [0, 1) */
{
	ref_rng ^= ref_rng << 13;
	ref_rng ^= ref_rng >> 7;
	ref_rng ^= ref_rng << 17;
	return (ref_rng >> 11) * (1.0 / 9007199254740992.0);
}

static inline float ref_gauss(void)     /* roughly normal, sd 1 */
{
	return (float)((ref_unit() + ref_unit() + ref_unit() - 1.5) * 2.0);
}

/*
 * The rule's inputs as tf_deltanet makes them: qkv (n, 2 Hk Dk + Hv Dv)
 * with q (times 1/sqrt(Dk)) and k L2-normed per key head, beta =
 * sigmoid(b), g = -exp(A_log) softplus(a + dt_bias) with A_log in [-5, 1):
 * per-token decays from near 1 to near 0. parallel: the keys of each head
 * near one common direction, beta near 1 and slow decay, the case that
 * strains the chunked form's inverse.
 */
static inline void ref_inputs(int Hk, int Hv, int Dk, int Dv, int64_t n, int parallel, float *qkv, float *beta,
			      float *g)
{
	const int64_t kd = (int64_t)Hk * Dk, C = 2 * kd + (int64_t)Hv * Dv;
	float A_log[64], dt[64], *base = NULL;

	for (int h = 0; h < Hv; h++) {
		A_log[h] = (float)(ref_unit() * 6 - 5);
		dt[h] = ref_gauss();
	}
	if (parallel) {
		base = malloc(4 * kd);
		for (int64_t i = 0; i < kd; i++)
			base[i] = ref_gauss();
	}
	for (int64_t i = 0; i < n * C; i++)
		qkv[i] = ref_gauss();
	for (int64_t t = 0; t < n; t++)
		for (int hh = 0; hh < 2 * Hk; hh++) {
			float *x = qkv + t * C + hh * Dk, ss = 0;
			float scale = hh < Hk ? 1.0f / sqrtf((float)Dk) : 1.0f;
			if (parallel && hh >= Hk)
				for (int i = 0; i < Dk; i++)
					x[i] = base[(hh - Hk) * Dk + i] + 0.3f * ref_gauss();
			for (int i = 0; i < Dk; i++)
				ss += x[i] * x[i];
			for (int i = 0; i < Dk; i++)
				x[i] *= 1.0f / sqrtf(ss + 1e-6f) * scale;
		}
	for (int64_t i = 0; i < n * Hv; i++) {
		beta[i] = parallel ? 0.9f + 0.1f * (float)ref_unit() : tf_sigmoid(2 * ref_gauss());
		g[i] = parallel ? -0.01f * (float)ref_unit() : -expf(A_log[i % Hv]) * tf_softplus(ref_gauss() + dt[i % Hv]);
	}
	free(base);
}

#endif
