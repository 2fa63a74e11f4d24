/*
 * gdnref.h: the Gated DeltaNet delta rule in float64, token by token, as
 * qwen35-spec 3.7 states it: the reference the CPU forms and the GPU
 * kernels of the rule are held to.
 *
 * Value head h reads key head h / (Hv / Hk). Token t's q heads, k heads
 * and v heads lie at qkv + t * C, C = 2 Hk Dk + Hv Dv; its decay exp(g)
 * and beta at alpha and beta + t * ld + h. S (Hv, Dk, Dv) is carried from
 * token to token; o (n, Hv, Dv).
 */
#ifndef TF_T_GDNREF_H
#define TF_T_GDNREF_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

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
 * + t * Hv + h */
static inline void delta_rule64_f(int Hk, int Hv, int Dk, int Dv, int64_t n, const float *qkv,
				  const float *beta, const float *g, double *S, double *o)
{
	double *al = malloc(8 * n * Hv), *be = malloc(8 * n * Hv);

	for (int64_t i = 0; i < n * Hv; i++) {
		al[i] = exp((double)g[i]);
		be[i] = beta[i];
	}
	delta_rule64(Hk, Hv, Dk, Dv, n, qkv, al, be, Hv, S, o);
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

#endif
