/* compare: tf-gate's per-row figures on rows with known answers */
#include <math.h>
#include <string.h>

#include "tap.h"
#include "tools/compare.h"

static int near(double got, double want, double tol)
{
	if (fabs(got - want) <= tol)
		return 1;
	diag("got %.17g, wanted %.17g", got, want);
	return 0;
}

int main(void)
{
	tf_cmp c;
	double p[4];

	/* logsumexp: stable for large logits, exact where it can be */
	{
		float x[2] = { 1000, 1001 }, y[3] = { -INFINITY, 0, 0 }, z[2] = { 0, 0 };
		ok(near(tf_logsumexp(x, 2, NULL), 1001 + log1p(exp(-1)), 1e-12), "logsumexp of 1000, 1001 without overflow");
		ok(near(tf_logsumexp(y, 3, p), log(2), 1e-15) && p[0] == 0 && p[1] == 0.5 && p[2] == 0.5,
		   "a -inf logit has probability 0");
		ok(near(tf_logsumexp(z, 2, NULL), log(2), 0), "logsumexp of two zeros is log 2");
	}
	{
		float n[2] = { 0, NAN }, pinf[2] = { 0, INFINITY }, minf[2] = { -INFINITY, -INFINITY };
		ok(isnan(tf_logsumexp(n, 2, NULL)), "NaN row: no softmax");
		ok(isnan(tf_logsumexp(pinf, 2, NULL)), "+inf row: no softmax");
		ok(isnan(tf_logsumexp(minf, 2, NULL)), "all -inf row: no softmax");
	}

	/* identical rows: everything zero, bit-equal, top-1 agrees */
	{
		float a[4] = { 0.5f, -1, 3, 2 };
		tf_cmp_init(&c, 4);
		tf_cmp_row(&c, a, a, 1);
		ok(c.rows == 1 && c.equal == 1 && c.max_abs == 0 && c.kl_sum == 0 && c.top1 == 1 && tf_cmp_nmse(&c) == 0,
		   "identical rows: equal, max abs 0, KL exactly 0");
		ok(near(c.nll_a, tf_logsumexp(a, 4, NULL) + 1, 0) && c.nll_a == c.nll_b && c.scored == 1,
		   "NLL is logsumexp minus the target's logit");
		tf_cmp_free(&c);
	}

	/* two-way distributions with closed forms */
	{
		/* p = (1/2, 1/2), q = (1/(1+e^t), e^t/(1+e^t)) for t = (float)log 3,
		 * about (1/4, 3/4): KL = sum p log(p/q) */
		float a[2] = { 0, 0 }, b[2] = { 0, (float)log(3) };
		double t = b[1], q0 = 1 / (1 + exp(t)), q1 = exp(t) / (1 + exp(t));
		tf_cmp_init(&c, 2);
		tf_cmp_row(&c, a, b, -1);
		ok(near(c.kl_sum, 0.5 * log(0.5 / q0) + 0.5 * log(0.5 / q1), 1e-15), "KL of (1/2,1/2) against (1/4,3/4)");
		ok(c.top1 == 0, "tie in a goes to its first index, b's argmax is 1: disagree");
		ok(c.max_abs == t && c.max_abs_row == 0, "max abs is the one difference");
		ok(tf_cmp_nmse(&c) == INFINITY, "NMSE against an all-zero a is infinite");
		tf_cmp_row(&c, b, b, -1);
		ok(c.rows == 2 && c.equal == 1 && c.top1 == 1 && near(tf_cmp_kl_mean(&c), c.kl_sum / 2, 0) &&
		   c.kl_max_row == 0 && near(tf_cmp_top1(&c), 0.5, 0), "second row equal: mean KL halves, top-1 1 of 2");
		ok(near(tf_cmp_nmse(&c), t * t / (t * t), 0), "NMSE sums over all rows");
		tf_cmp_free(&c);
	}

	/* ties and NaN/inf handling */
	{
		float a[4] = { 1, 3, 3, 0 }, b[4] = { 1, 3, 3, -1 };
		tf_cmp_init(&c, 4);
		tf_cmp_row(&c, a, b, -1);
		ok(c.top1 == 1, "same tie in both rows: first index in both, agree");
		tf_cmp_free(&c);
	}
	{
		float a[3] = { -INFINITY, 1, 2 }, b[3] = { -INFINITY, 1, 2.5f };
		tf_cmp_init(&c, 3);
		tf_cmp_row(&c, a, b, 2);
		ok(c.max_abs == 0.5 && isfinite(c.kl_sum) && c.kl_sum > 0, "-inf at the same place: no difference there");
		tf_cmp_free(&c);
	}
	{
		float a[3] = { 0, 1, 2 }, b[3] = { -INFINITY, 1, 2 };
		tf_cmp_init(&c, 3);
		tf_cmp_row(&c, a, b, -1);
		ok(c.max_abs == INFINITY && c.kl_sum == INFINITY, "b rules out what a allows: KL and max abs infinite");
		tf_cmp_free(&c);
		tf_cmp_init(&c, 3);
		tf_cmp_row(&c, b, a, -1);
		ok(c.max_abs == INFINITY && isfinite(c.kl_sum) && c.kl_sum > 0,
		   "a rules out what b allows: KL finite, max abs infinite");
		tf_cmp_free(&c);
	}
	{
		float a[3] = { 0, NAN, 2 }, b[3] = { 0, 1, 2 };
		tf_cmp_init(&c, 3);
		tf_cmp_row(&c, a, b, 0);
		ok(c.max_abs == INFINITY && isnan(c.kl_sum) && isnan(c.kl_max) && isnan(c.nll_a),
		   "NaN against a number: infinitely far, KL and NLL NaN");
		ok(!(tf_cmp_kl_mean(&c) <= 1), "a NaN KL fails any bound");
		tf_cmp_row(&c, b, b, 0);
		ok(isnan(c.kl_max) && c.kl_max_row == 0, "a NaN row stays the KL max");
		tf_cmp_free(&c);
		tf_cmp_init(&c, 3);
		tf_cmp_row(&c, a, a, -1);
		ok(c.equal == 1 && c.max_abs == 0, "the same NaN in both: bit-equal, no difference");
		tf_cmp_free(&c);
	}

	/* one stream scored alone */
	{
		float a[4] = { 0, 0, 0, 0 };
		tf_cmp_init(&c, 4);
		tf_cmp_row(&c, a, NULL, 3);
		tf_cmp_row(&c, a, NULL, -1);
		ok(c.rows == 2 && c.scored == 1 && near(tf_cmp_ppl_a(&c), 4, 1e-12),
		   "uniform over 4: perplexity 4, a row without target unscored");
		tf_cmp_free(&c);
	}
	return done();
}
