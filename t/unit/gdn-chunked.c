/*
 * gdn-chunked: the CPU delta rule in chunks of 64 (prompt mode, as
 * transformers' torch_chunk_gated_delta_rule) against the same rule token by token and against a float64
 * recurrence, on realistic gates (exp(g) in (0, 1), beta in (0, 1), q and k
 * L2-normed as tf_deltanet leaves them) from a nonzero state, for lengths
 * around the chunk size and value/key head ratios 1, 2 and 3: the outputs
 * and the final state.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/delta_rule.h"
#include "cpu/ops.h"
#include "gdnref.h"
#include "tap.h"

static void check(int Hk, int Hv, int D, int64_t n)
{
	tf_config c = { .lin_k_heads = Hk, .lin_v_heads = Hv, .lin_k_dim = D, .lin_v_dim = D };
	int64_t C = 2LL * Hk * D + (int64_t)Hv * D, sn = (int64_t)Hv * D * D, on = n * Hv * D;
	float *qkv = malloc(4 * n * C), *beta = malloc(4 * n * Hv), *g = malloc(4 * n * Hv);
	float *S0 = malloc(4 * sn), *Sr = malloc(4 * sn), *Sc = malloc(4 * sn), *orr = malloc(4 * on), *oc = malloc(4 * on);
	double *Sd = malloc(8 * sn), *od = malloc(8 * on);
	char what[80];

	snprintf(what, sizeof what, "Hk %d Hv %d D %d, %lld tokens", Hk, Hv, D, (long long)n);
	ref_inputs(Hk, Hv, D, D, n, 0, qkv, beta, g);
	for (int64_t i = 0; i < sn; i++) {
		S0[i] = 0.1f * ref_gauss();
		Sd[i] = S0[i];
	}
	memcpy(Sr, S0, 4 * sn);
	memcpy(Sc, S0, 4 * sn);
	delta_rule64_f(c.lin_k_heads, c.lin_v_heads, c.lin_k_dim, c.lin_v_dim, n, qkv, beta, g, c.lin_v_heads, Sd, od);
	tf_gdn_rule(&c, qkv, beta, g, Sr, n, orr, 0);
	tf_gdn_rule(&c, qkv, beta, g, Sc, n, oc, 1);

	/* float rounding only: both forms sum a few hundred products of
	 * magnitude <= 1 per value, and exp of sums of g (the chunked form's
	 * decays exp(gam_i - gam_j)) carry |gam| * 2^-24 relative, so a few
	 * 1e-6 of the largest value; 1e-5 leaves room without hiding a wrong
	 * index, which moves values by their own size */
	double er = rel_err64(orr, od, on), ec = rel_err64(oc, od, on);
	double sr = rel_err64(Sr, Sd, sn), sc = rel_err64(Sc, Sd, sn);
	diag("%s: outputs %.3g (token by token) %.3g (chunked), state %.3g %.3g", what, er, ec, sr, sc);
	ok(er <= 1e-5 && ec <= 1e-5, "%s: outputs within 1e-5 of float64", what);
	ok(sr <= 1e-5 && sc <= 1e-5, "%s: final state within 1e-5 of float64", what);
	free(qkv); free(beta); free(g); free(S0); free(Sr); free(Sc); free(orr); free(oc); free(Sd); free(od);
}

int main(void)
{
	static const int64_t lens[] = { 1, 63, 64, 65, 200 };

	for (unsigned l = 0; l < sizeof lens / sizeof *lens; l++) {
		check(2, 4, 32, lens[l]);       /* tiny-q35 */
		check(2, 4, 64, lens[l]);       /* shakespeare-q35 */
		check(2, 2, 128, lens[l]);      /* the 0.8B's ratio */
		check(2, 4, 128, lens[l]);      /* the 9B's */
		check(2, 6, 128, lens[l]);      /* the 27B's */
	}
	return done();
}
