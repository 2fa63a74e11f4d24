/* expf_libm.cuh: expf with the bits of the host's libm, for the draws
 * (sample.cu, sample_top.cu; C++ only) */
#ifndef TF_EXPF_LIBM_CUH
#define TF_EXPF_LIBM_CUH

#include <stdint.h>

/*
 * expf as the host's libm computes it, bit for bit: the method of glibc's
 * expf (Arm's optimized-routines) with the fused multiply-adds where its
 * x86-64 FMA build has them. exp(x) = 2^(k/32) 2^(r/32) for x 32/ln2 =
 * k + r: the first from a table of 2^(i/32) with k's high bits added to the
 * exponent, the second a cubic in r. CUDA's expf is within 2 ulp of it but
 * not the same bits, and one ulp reorders near-equal probabilities in the
 * host's sort. Checked against glibc 2.36 on every float in [-104, 0], the
 * range a draw takes (logit - max <= 0); glibc's build without FMA differs
 * at one of those 1.1e9 inputs. The table is in global memory, not
 * __constant__: the lanes of a warp read different entries of it.
 */
static __device__ const uint64_t exp2_tab[32] = {
	0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
	0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
	0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
	0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
	0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
	0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
	0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
	0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
};

static __device__ float libm_expf(float x)
{
	/* 32/ln2, the shift that rounds to an integer in the low bits, the cubic */
	const double inv = 0x1.71547652b82fep+0 * 32, shift = 0x1.8p+52;
	const double c0 = 0x1.c6af84b912394p-5 / 32 / 32 / 32, c1 = 0x1.ebfce50fac4f3p-3 / 32 / 32,
		     c2 = 0x1.62e42ff0c52d6p-1 / 32;

	if (x < -0x1.9fe368p6f)         /* below log(2^-150): 0, as glibc; -inf too */
		return 0.0f;
	const double xd = x, kd = fma(inv, xd, shift);
	const uint64_t ki = __double_as_longlong(kd);
	const double k = __dsub_rn(kd, shift), r = fma(inv, xd, -k);
	const double s = __longlong_as_double(exp2_tab[ki % 32] + (ki << 47));
	const double y = fma(fma(c0, r, c1), __dmul_rn(r, r), fma(c2, r, 1.0));
	return (float)__dmul_rn(y, s);
}

#endif
