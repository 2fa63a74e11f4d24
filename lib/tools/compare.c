/* compare.c: per-row figures for comparing two logit streams */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "compare.h"

int tf_cmp_init(tf_cmp *c, uint32_t cols)
{
	memset(c, 0, sizeof *c);
	c->cols = cols;
	c->max_abs = -1;
	c->kl_max = -INFINITY;
	c->ea = malloc((size_t)cols * sizeof *c->ea);
	if (!c->ea) {
		tf_cmp_free(c);
		return tf_err("out of memory for rows of %u values", cols);
	}
	return 0;
}

void tf_cmp_free(tf_cmp *c)
{
	free(c->ea);
	c->ea = NULL;
}

double tf_logsumexp(const float *x, uint32_t n, double *p)
{
	double m = -INFINITY, s = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (isnan(x[i]))
			return NAN;
		if (x[i] > m)
			m = x[i];
	}
	/* +inf or all -inf: no probability distribution */
	if (!isfinite(m))
		return NAN;
	for (uint32_t i = 0; i < n; i++) {
		double v = exp((double)x[i] - m);
		if (p)
			p[i] = v;
		s += v;
	}
	if (p)
		for (uint32_t i = 0; i < n; i++)
			p[i] /= s;
	return m + log(s);
}

static uint32_t argmax(const float *x, uint32_t n)
{
	uint32_t best = 0;

	for (uint32_t i = 1; i < n; i++)
		if (x[i] > x[best])
			best = i;
	return best;
}

void tf_cmp_row(tf_cmp *c, const float *a, const float *b, long target)
{
	uint32_t n = c->cols;
	double la, lb, kl, row_max = 0, sq_diff = 0, sq_a = 0;

	/* ea = softmax(a), for KL below */

	la = tf_logsumexp(a, n, b ? c->ea : NULL);
	if (target >= 0)
		c->nll_a += la - a[target];
	if (!b) {
		c->scored += target >= 0;
		c->rows++;
		return;
	}
	lb = tf_logsumexp(b, n, NULL);
	if (target >= 0) {
		c->nll_b += lb - b[target];
		c->scored++;
	}

	c->equal += !memcmp(a, b, (size_t)n * sizeof *a);
	c->top1 += argmax(a, n) == argmax(b, n);
	for (uint32_t i = 0; i < n; i++) {
		double d = fabs((double)a[i] - (double)b[i]);
		if (isnan(d))
			/* NaN == NaN (same bits) and inf == inf are no difference;
			 * a NaN against anything else is as far off as can be */
			d = memcmp(&a[i], &b[i], sizeof *a) ? INFINITY : 0;
		if (d > row_max)
			row_max = d;
		sq_diff += d * d;
		sq_a += (double)a[i] * a[i];
	}
	if (row_max > c->max_abs) {
		c->max_abs = row_max;
		c->max_abs_row = c->rows;
	}
	c->sq_diff += sq_diff;
	c->sq_a += sq_a;

	/* KL(A||B) = sum p_i ((a_i - la) - (b_i - lb)); a value whose p_i
	 * underflowed to 0 adds nothing (and must not add 0 * -inf) */
	kl = NAN;
	if (!isnan(la) && !isnan(lb)) {
		kl = 0;
		for (uint32_t i = 0; i < n; i++)
			if (c->ea[i] > 0)
				kl += c->ea[i] * (((double)a[i] - la) - ((double)b[i] - lb));
	}
	c->kl_sum += kl;
	if (kl > c->kl_max || (isnan(kl) && !isnan(c->kl_max))) {
		c->kl_max = kl;
		c->kl_max_row = c->rows;
	}
	c->rows++;
}

double tf_cmp_nmse(const tf_cmp *c)
{
	if (c->sq_a == 0)
		return c->sq_diff == 0 ? 0 : INFINITY;
	return c->sq_diff / c->sq_a;
}

double tf_cmp_kl_mean(const tf_cmp *c)
{
	return c->rows ? c->kl_sum / c->rows : NAN;
}

double tf_cmp_top1(const tf_cmp *c)
{
	return c->rows ? (double)c->top1 / c->rows : NAN;
}

double tf_cmp_ppl_a(const tf_cmp *c)
{
	return c->scored ? exp(c->nll_a / c->scored) : NAN;
}

double tf_cmp_ppl_b(const tf_cmp *c)
{
	return c->scored ? exp(c->nll_b / c->scored) : NAN;
}
