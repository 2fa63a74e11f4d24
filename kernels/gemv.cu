/*
 * gemv.cu: decode matrix-vector products on the tensor cores, for the
 * weights the int16-input kernels (gemv_q16.cu) do not take: bf16, f16 and
 * f32, quantized weights with f16 or f32 scales, odd shapes, and every
 * form when TF_GEMV_Q16=0.
 *
 * Batch-1 decode reads every weight once per token, so the product runs at
 * the speed of memory as long as (a) loads are wide and many are in flight
 * and (b) turning codes into numbers costs fewer instructions than the
 * memory system delivers codes. At 4.3 TB/s a 4-bit matrix delivers 8.6e12
 * codes/s; the H200 issues about 3.3e13 thread-instructions/s, so there is
 * room for about three instructions per code. A CUDA-core dot product needs
 * four or more (extract, convert, un-bias, fma); here each pair of codes
 * becomes a bf16x2 weight pair in three (lop3 to a biased bf16, subtract,
 * fma with scale and bias) and mma.sync does the multiply-adds with fp32
 * accumulation.
 *
 * Mapping (PTX ISA, "Matrix Fragments for mma.m16n8k16", .bf16):
 *   A (16x16) = 16 weight rows x 16 k-slots, B (16x8) = 16 k-slots x 8
 *   input rows, C (16x8) f32. The inputs come split (common.cuh): one mma
 *   takes their bf16 part, a second their remainder, on the same A. Lane = 4*g + t holds A rows g and g+8 and B
 *   column g at k-slots {2t, 2t+1, 2t+8, 2t+9}.
 * A k-slot need not be a fixed column: lane (g, t) fills its slots from its
 * own "unit" of UNIT consecutive columns, and since all lanes with the same
 * t share the unit and the order of pairs inside it, A and B agree on which
 * column each slot holds. So every lane loads whole 16-byte vectors of its
 * two rows (coalesced across the 8 g-lanes? no: across units; each lane's
 * 16-byte loads are contiguous in its own row, which is what the memory
 * system needs), and the pairs are taken in whatever order unpacks cheapest
 * for the bit width; the x pairs are permuted to match with one prmt each.
 *
 * A block of S warps owns 16 weight rows; its warps split the units of a
 * row (split-K) so small matrices still put enough bytes in flight, and
 * warp 0 adds the S partial sums in warp order. S depends only on the
 * matrix shape, never on the number of input rows: the sums for one input
 * row are the same whether it is alone or in a window (padding rows of B
 * are zeros and a column of an mma result depends only on its own column
 * of B).
 */
#include <stdlib.h>

#include "common.cuh"
#include "gemv.cuh"
#include "gemv_q16.cuh"
#include "mma.cuh"

enum { K_BF16, K_AFF, K_SIGN };

#define NMAX 16         /* input rows per launch */
#define SMAX 8          /* split-K warps per block */

template <int LUT>
static __device__ __forceinline__ uint32_t lop3(uint32_t a, uint32_t b, uint32_t c)
{
	uint32_t d;
	asm("lop3.b32 %0, %1, %2, %3, %4;" : "=r"(d) : "r"(a), "r"(b), "r"(c), "n"(LUT));
	return d;
}

/* lop3 truth tables: a = 0xf0, b = 0xcc, c = 0xaa */
#define LUT_AND_OR      ((0xf0 & 0xcc) | 0xaa)          /* (a & b) | c */
#define LUT_NAND_XOR    ((~0xf0 & 0xcc & 0xff) ^ 0xaa)  /* (~a & b) ^ c */

/* d = a * b + c on bf16 pairs, one rounding */
static __device__ __forceinline__ uint32_t bfma2(uint32_t a, uint32_t b, uint32_t c)
{
	uint32_t d;
	asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
	return d;
}

#define BF_ONE2         0x3f803f80u     /* bf16 (1, 1) */
#define BF_M128_2       0xc300c300u     /* bf16 (-128, -128) */
#define BF_MAGIC2       0x43004300u     /* bf16 (128, 128): a code q in the low
					   mantissa bits reads as 128 + q, q < 128 */

/* shape of one unit: UNIT columns of a row per lane, NV 16-byte vectors,
 * taken in sub-blocks of 32 columns (WPS words a sub-block); pair p of a
 * sub-block holds columns (lo, lo + PD) with lo = 2*PD*(p / PD) + p % PD */
template <int KIND, int BITS> struct unit_shape {
	static constexpr int UNIT = KIND == K_BF16 ? 32 : 128;
	static constexpr int NV = KIND == K_BF16 ? 4 : KIND == K_SIGN ? 1 : BITS;
	static constexpr int WPS = KIND == K_BF16 ? 16 : KIND == K_SIGN ? 1 : BITS;
	static constexpr int PD = KIND == K_SIGN ? 16 : KIND == K_BF16 ? 1 : BITS == 2 ? 8 : 1;
};

/* bits [s, s + B) of the sub-block's words (a code), at the bottom of a word */
template <int B>
static __device__ __forceinline__ uint32_t bits_at(const uint32_t *wd, int o)
{
	int k = o >> 5, s = o & 31;
	if (s + B <= 32)
		return wd[k] >> s;
	return __funnelshift_r(wd[k], wd[k + 1], s);
}

/* weight pair p of a sub-block as bf16x2; s2/b2 are (scale, scale) and
 * (bias, bias) in bf16, sf/bf the same as floats */
template <int KIND, int BITS>
static __device__ __forceinline__ uint32_t wpair(const uint32_t *wd, int p, uint32_t s2, uint32_t b2,
						 float sf, float bf)
{
	if (KIND == K_BF16)
		return wd[p];
	if (KIND == K_SIGN) {
		/* bits p and p+16 to the two sign bits, then flip the sign of
		 * (s, s) where a bit is clear: one shift, one lop3 */
		uint32_t t = wd[0] << (15 - p);
		return lop3<LUT_NAND_XOR>(t, 0x80008000u, s2);
	}
	if (BITS == 4) {
		/* columns 2p, 2p+1 are the two nibbles of byte p: one prmt puts
		 * the byte and the byte shifted by 4 (shared by the word's four
		 * pairs) 16 bits apart, so the pairs come in column order and the
		 * inputs need no permuting; one lop3 lifts both into bf16 128 + q,
		 * one fma removes the 128, one fma applies scale and bias */
		const uint32_t w = wd[p / 4];
		const int k = p % 4;
		uint32_t t = __byte_perm(w, w >> 4, k | k << 4 | (4 + k) << 8 | (4 + k) << 12);
		t = lop3<LUT_AND_OR>(t, 0x000f000fu, BF_MAGIC2);
		return bfma2(bfma2(t, BF_ONE2, BF_M128_2), s2, b2);
	}
	if (BITS == 2) {
		/* codes i and i + 8 of a word sit 16 bits apart: one lop3 lifts
		 * both into bf16 128 + q, one fma removes the 128, one fma applies
		 * scale and bias; the inputs are paired to match */
		constexpr int PER = 32 / BITS / 2;      /* pairs a word */
		constexpr uint32_t M = (1u << BITS) - 1;
		uint32_t t = lop3<LUT_AND_OR>(wd[p / PER] >> (BITS * (p % PER)), M | M << 16, BF_MAGIC2);
		uint32_t q = bfma2(t, BF_ONE2, BF_M128_2);
		return bfma2(q, s2, b2);
	}
	if (BITS == 8) {
		/* q < 256 does not fit the bf16 trick: make 2^23 + q as a float
		 * with one prmt, subtract, scale in fp32, round the pair once */
		uint32_t w = wd[p / 2];
		int k = 2 * (p % 2);
		float q0 = __uint_as_float(__byte_perm(w, 0x4b000000u, 0x7440 + k)) - 8388608.0f;
		float q1 = __uint_as_float(__byte_perm(w, 0x4b000000u, 0x7441 + k)) - 8388608.0f;
		__nv_bfloat162 h = __floats2bfloat162_rn(fmaf(q0, sf, bf), fmaf(q1, sf, bf));
		return *(uint32_t *)&h;
	}
	/* 3, 5, 6 bits: codes straddle words; take columns 2p and 2p+1 with a
	 * funnel shift each and put them 16 bits apart with one prmt */
	{
		constexpr uint32_t M = (1u << BITS) - 1;
		uint32_t lo = bits_at<BITS>(wd, 2 * p * BITS), hi = bits_at<BITS>(wd, (2 * p + 1) * BITS);
		uint32_t t = lop3<LUT_AND_OR>(__byte_perm(lo, hi, 0x5410), M | M << 16, BF_MAGIC2);
		uint32_t q = bfma2(t, BF_ONE2, BF_M128_2);
		return bfma2(q, s2, b2);
	}
}

/* the input pair matching weight pair p: xr holds the sub-block's 32 inputs
 * as 16 bf16 pairs in column order */
template <int PD>
static __device__ __forceinline__ uint32_t xpair(const uint32_t *xr, int p)
{
	if (PD == 1)
		return xr[p];
	int lo = 2 * PD * (p / PD) + p % PD, hi = lo + PD;
	return __byte_perm(xr[lo >> 1], xr[hi >> 1], (p & 1) ? 0x7632 : 0x5410);
}

/* one unit's weights and scales for a lane's two rows, in registers */
template <int KIND, int BITS> struct unit_regs {
	typedef unit_shape<KIND, BITS> U;
	uint32_t w0[U::NV * 4], w1[U::NV * 4];  /* rows g, g+8 */
	uint32_t sb0[U::UNIT / 32], sb1[U::UNIT / 32]; /* per sub-block: bf16 scale | bias << 16 */
};

/* issues every load of unit u (weights streaming, scales cached), once
 * the unit before is summed: the other warps of the multiprocessor cover
 * their trip */
template <int KIND, int BITS>
static __device__ __forceinline__ void load_unit(unit_regs<KIND, BITS> &R, int u, bool uv, int r0, int r1,
						 int rows, const uint4 *w0p, const uint4 *w1p,
						 const uint16_t *__restrict__ scales, const uint16_t *__restrict__ biases,
						 int group, int ngroups)
{
	typedef unit_shape<KIND, BITS> U;
	#pragma unroll
	for (int v = 0; v < U::NV; v++) {
		uint4 a = make_uint4(0, 0, 0, 0), b = a;
		if (uv && r0 < rows)
			a = ld_stream(w0p + (int64_t)u * U::NV + v);
		if (uv && r1 < rows)
			b = ld_stream(w1p + (int64_t)u * U::NV + v);
		R.w0[4 * v] = a.x; R.w0[4 * v + 1] = a.y; R.w0[4 * v + 2] = a.z; R.w0[4 * v + 3] = a.w;
		R.w1[4 * v] = b.x; R.w1[4 * v + 1] = b.y; R.w1[4 * v + 2] = b.z; R.w1[4 * v + 3] = b.w;
	}
	#pragma unroll
	for (int sb = 0; sb < U::UNIT / 32; sb++) {
		R.sb0[sb] = R.sb1[sb] = 0;
		if (KIND != K_BF16 && uv) {
			int gi = (u * U::UNIT + sb * 32) / group;
			if (r0 < rows)
				R.sb0[sb] = scales[(int64_t)r0 * ngroups + gi] |
					    (KIND == K_AFF ? (uint32_t)biases[(int64_t)r0 * ngroups + gi] << 16 : 0);
			if (r1 < rows)
				R.sb1[sb] = scales[(int64_t)r1 * ngroups + gi] |
					    (KIND == K_AFF ? (uint32_t)biases[(int64_t)r1 * ngroups + gi] << 16 : 0);
		}
	}
}

/* the products of unit u: the inputs of this lane's column (the hi and lo
 * planes) from L1, then two mma a k-step on the same weight pairs, each
 * into its own accumulator so the two chains overlap */
template <int KIND, int BITS, int NT>
static __device__ __forceinline__ void compute_unit(const unit_regs<KIND, BITS> &R, int u, bool uv, int g,
						    const uint16_t *__restrict__ x,
						    const uint16_t *__restrict__ xl, int n, int cols,
						    float (&acc)[2][NT][4])
{
	typedef unit_shape<KIND, BITS> U;
	#pragma unroll
	for (int sb = 0; sb < U::UNIT / 32; sb++) {
		const int col = u * U::UNIT + sb * 32;
		/* (scale, scale) and (bias, bias) pairs, and the same as floats */
		const uint32_t s20 = __byte_perm(R.sb0[sb], 0, 0x1010), b20 = __byte_perm(R.sb0[sb], 0, 0x3232);
		const uint32_t s21 = __byte_perm(R.sb1[sb], 0, 0x1010), b21 = __byte_perm(R.sb1[sb], 0, 0x3232);
		const float sf0 = __uint_as_float(R.sb0[sb] << 16), bf0 = __uint_as_float(R.sb0[sb] & 0xffff0000u);
		const float sf1 = __uint_as_float(R.sb1[sb] << 16), bf1 = __uint_as_float(R.sb1[sb] & 0xffff0000u);
		uint32_t xr[NT][16], xq[NT][16];

		#pragma unroll
		for (int j = 0; j < NT; j++) {
			const int xi = j * 8 + g;
			#pragma unroll
			for (int v = 0; v < 4; v++) {
				uint4 a = make_uint4(0, 0, 0, 0), b = a;
				if (uv && xi < n) {
					a = __ldg((const uint4 *)(x + (int64_t)xi * cols + col) + v);
					b = __ldg((const uint4 *)(xl + (int64_t)xi * cols + col) + v);
				}
				xr[j][4 * v] = a.x; xr[j][4 * v + 1] = a.y;
				xr[j][4 * v + 2] = a.z; xr[j][4 * v + 3] = a.w;
				xq[j][4 * v] = b.x; xq[j][4 * v + 1] = b.y;
				xq[j][4 * v + 2] = b.z; xq[j][4 * v + 3] = b.w;
			}
		}
		const uint32_t *wd0 = R.w0 + sb * U::WPS, *wd1 = R.w1 + sb * U::WPS;
		#pragma unroll
		for (int k = 0; k < 8; k++) {
			uint32_t a0 = wpair<KIND, BITS>(wd0, 2 * k, s20, b20, sf0, bf0);
			uint32_t a1 = wpair<KIND, BITS>(wd1, 2 * k, s21, b21, sf1, bf1);
			uint32_t a2 = wpair<KIND, BITS>(wd0, 2 * k + 1, s20, b20, sf0, bf0);
			uint32_t a3 = wpair<KIND, BITS>(wd1, 2 * k + 1, s21, b21, sf1, bf1);
			#pragma unroll
			for (int j = 0; j < NT; j++) {
				mma_bf16(acc[0][j], a0, a1, a2, a3,
					 xpair<U::PD>(xr[j], 2 * k), xpair<U::PD>(xr[j], 2 * k + 1));
				mma_bf16(acc[1][j], a0, a1, a2, a3,
					 xpair<U::PD>(xq[j], 2 * k), xpair<U::PD>(xq[j], 2 * k + 1));
			}
		}
	}
}

/* the end of an mma kernel: warp 0 adds the other warps' partial sums
 * (acc: this lane's NT x 4 accumulators) in warp order through red, then
 * writes y (c0, c1: row r0, inputs 2t, 2t+1 of each 8; c2, c3: row r1) */
template <int NT>
static __device__ __forceinline__ void warps_store(float (&acc)[NT][4], float (*red)[NT * 4][WARP], int nwarp, int n,
						   int rows, int r0, int r1, int t, float *y, int64_t ldy,
						   int accumulate)
{
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

	if (warp > 0) {
		#pragma unroll
		for (int j = 0; j < NT; j++)
			#pragma unroll
			for (int e = 0; e < 4; e++)
				red[warp - 1][j * 4 + e][lane] = acc[j][e];
	}
	__syncthreads();
	if (warp > 0)
		return;
	for (int w = 1; w < nwarp; w++)
		#pragma unroll
		for (int j = 0; j < NT; j++)
			#pragma unroll
			for (int e = 0; e < 4; e++)
				acc[j][e] += red[w - 1][j * 4 + e][lane];
	#pragma unroll
	for (int j = 0; j < NT; j++)
		#pragma unroll
		for (int e = 0; e < 4; e++) {
			int xi = j * 8 + 2 * t + (e & 1), r = e < 2 ? r0 : r1;
			if (xi < n && r < rows) {
				float *o = y + xi * ldy + r;
				*o = accumulate ? *o + acc[j][e] : acc[j][e];
			}
		}
}

/* two units in registers at once (the next one loading while this one
 * computes) for 16-bit float weights: their second unit in flight gains
 * more than the second block a multiprocessor it costs; the quantized
 * forms, whose units need more registers to expand, keep the two blocks */
template <int KIND, int BITS>
static __host__ __device__ constexpr bool double_buffered(void)
{
	return KIND == K_BF16;
}

template <int KIND, int BITS, int NT>
__global__ void __launch_bounds__(SMAX * WARP, double_buffered<KIND, BITS>() || NT == 2 ? 1 : 2)
gemv_mma(const void *__restrict__ wdata,        /* (rows, cols) in the form's layout */
	 const uint16_t *__restrict__ scales,   /* (rows, cols/group) bf16 */
	 const uint16_t *__restrict__ biases,   /* (rows, cols/group) bf16 */
	 int group, int rows, int cols,
	 const uint16_t *__restrict__ x,        /* (n, cols) bf16, the inputs' hi plane */
	 const uint16_t *__restrict__ xl,       /* (n, cols) bf16, their lo plane */
	 int n,
	 float *__restrict__ y,                 /* (n, rows): row xi at y + xi * ldy */
	 int64_t ldy, int accumulate)
{
	typedef unit_shape<KIND, BITS> U;
	constexpr bool DB = double_buffered<KIND, BITS>();
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarp = blockDim.x >> 5;
	const int g = lane >> 2, t = lane & 3;
	const int r0 = blockIdx.x * 16 + g, r1 = r0 + 8;
	const int nunits = cols / U::UNIT, ngroups = KIND == K_BF16 ? 0 : cols / group;
	const int64_t rowvec = (int64_t)(cols / U::UNIT) * U::NV;       /* 16-byte vectors a row */
	const uint4 *w0p = (const uint4 *)wdata + (int64_t)(r0 < rows ? r0 : 0) * rowvec;
	const uint4 *w1p = (const uint4 *)wdata + (int64_t)(r1 < rows ? r1 : 0) * rowvec;
	float acc[2][NT][4];
	__shared__ float red[SMAX - 1][NT * 4][WARP];

	#pragma unroll
	for (int c = 0; c < 2; c++)
		#pragma unroll
		for (int j = 0; j < NT; j++)
			acc[c][j][0] = acc[c][j][1] = acc[c][j][2] = acc[c][j][3] = 0.0f;

	/* unit of iteration `it` for this lane: all lanes with the same t share it */
	const int niter = (nunits + 4 * nwarp - 1) / (4 * nwarp);
#define UNIT_OF(it) (((it) * nwarp + warp) * 4 + t)
	unit_regs<KIND, BITS> A, B;
	load_unit(A, UNIT_OF(0), UNIT_OF(0) < nunits, r0, r1, rows, w0p, w1p, scales, biases, group, ngroups);
	/* the weights need nothing from the previous kernel: their first loads
	 * are in flight before this waits for it (PDL, common.cuh) */
	pdl_trigger();
	pdl_wait();
	for (int it = 0; it < niter; it += DB ? 2 : 1) {
		if (DB && it + 1 < niter)
			load_unit(B, UNIT_OF(it + 1), UNIT_OF(it + 1) < nunits, r0, r1, rows, w0p, w1p, scales, biases,
				  group, ngroups);
		compute_unit<KIND, BITS, NT>(A, UNIT_OF(it), UNIT_OF(it) < nunits, g, x, xl, n, cols, acc);
		if (!DB) {
			if (it + 1 < niter)
				load_unit(A, UNIT_OF(it + 1), UNIT_OF(it + 1) < nunits, r0, r1, rows, w0p, w1p, scales,
					  biases, group, ngroups);
			continue;
		}
		if (it + 1 >= niter)
			break;
		if (it + 2 < niter)
			load_unit(A, UNIT_OF(it + 2), UNIT_OF(it + 2) < nunits, r0, r1, rows, w0p, w1p, scales, biases,
				  group, ngroups);
		compute_unit<KIND, BITS, NT>(B, UNIT_OF(it + 1), UNIT_OF(it + 1) < nunits, g, x, xl, n, cols, acc);
	}
#undef UNIT_OF

	/* the two chains, then warp 0 adds the other warps' partial sums in warp order */
	#pragma unroll
	for (int j = 0; j < NT; j++)
		#pragma unroll
		for (int e = 0; e < 4; e++)
			acc[0][j][e] += acc[1][j][e];
	warps_store<NT>(acc[0], red, nwarp, n, rows, r0, r1, t, y, ldy, accumulate);
}

/* any form, any shape: a warp per weight row, lanes stride the columns and
 * every input row has its own accumulator, summed by a fixed butterfly */
__global__ void gemv_any(tf_weight w, const uint16_t *__restrict__ x, const uint16_t *__restrict__ xl, int n,
			 float *__restrict__ y, int64_t ldy, int accumulate)
{
	pdl_wait();
	pdl_trigger();
	const int lane = threadIdx.x & 31;
	const int64_t r = (int64_t)blockIdx.x * (blockDim.x / WARP) + (threadIdx.x >> 5);
	float acc[NMAX];

	if (r >= w.rows)
		return;
	#pragma unroll
	for (int j = 0; j < NMAX; j++)
		acc[j] = 0.0f;
	for (int64_t c = lane; c < w.cols; c += WARP) {
		float v = weight_at(w, r, c);
		#pragma unroll
		for (int j = 0; j < NMAX; j++)
			if (j < n)
				acc[j] = fmaf(v, bf2f(x[j * w.cols + c]) + bf2f(xl[j * w.cols + c]), acc[j]);
	}
	#pragma unroll
	for (int j = 0; j < NMAX; j++) {
		float s = warp_sum(acc[j]);
		if (j < n && lane == 0) {
			float *o = y + j * ldy + r;
			*o = accumulate ? *o + s : s;
		}
	}
}

typedef void (*gemv_fn)(const void *, const uint16_t *, const uint16_t *, int, int, int,
			const uint16_t *, const uint16_t *, int, float *, int64_t, int);

template <int KIND, int BITS>
static gemv_fn pick_nt(int n)
{
	return n <= 8 ? gemv_mma<KIND, BITS, 1> : gemv_mma<KIND, BITS, 2>;
}

/* the tensor-core kernel for w, or NULL where only gemv_any applies */
static gemv_fn pick(const tf_weight *w, int n, int *unit)
{
	if (((uintptr_t)w->data & 15) != 0)
		return NULL;
	if (w->fmt == TF_BF16 && w->cols % 32 == 0) {
		*unit = 32;
		return pick_nt<K_BF16, 16>(n);
	}
	if (w->cols % 128 != 0)
		return NULL;
	*unit = 128;
	if (w->fmt == TF_SIGN1 && w->group == 128 && w->sdtype == TF_BF16)
		return pick_nt<K_SIGN, 1>(n);
	if (w->fmt != TF_AFFINE || w->sdtype != TF_BF16 || (w->group != 32 && w->group != 64 && w->group != 128))
		return NULL;
	switch (w->bits) {
	case 2: return pick_nt<K_AFF, 2>(n);
	case 3: return pick_nt<K_AFF, 3>(n);
	case 4: return pick_nt<K_AFF, 4>(n);
	case 5: return pick_nt<K_AFF, 5>(n);
	case 6: return pick_nt<K_AFF, 6>(n);
	case 8: return pick_nt<K_AFF, 8>(n);
	}
	return NULL;
}

/* split-K warps: enough warps in flight to cover memory latency on every
 * multiprocessor (about 16 each), at most one unit a lane. Depends on the
 * matrix shape only. */
static int split_for(int rows, int cols, int unit)
{
	int blocks = (rows + 15) / 16, quads = cols / unit / 4, s = 1;
	int want = (tf_cuda_sms() * 16 + blocks - 1) / blocks;

	while (s * 2 <= SMAX && s * 2 <= want && s * 2 <= (quads > 0 ? quads : 1))
		s *= 2;
	return s;
}

static int gemv_cuda(const tf_weight *w, const uint16_t *x, const uint16_t *xl, int n, float *y,
		     int64_t ldy, int accumulate)
{
	int unit = 0;
	gemv_fn f = pick(w, n, &unit);

	if (f) {
		int s = split_for((int)w->rows, (int)w->cols, unit);
		LAUNCH(f, (unsigned)((w->rows + 15) / 16), s * WARP, w->data, (const uint16_t *)w->scales,
		       (const uint16_t *)w->biases, w->group, (int)w->rows, (int)w->cols, x, xl, n, y, ldy, accumulate);
	} else {
		LAUNCH(gemv_any, (unsigned)((w->rows + 7) / 8), 8 * WARP, *w, x, xl, n, y, ldy, accumulate);
	}
	LAUNCH_CHECK();
	return 0;
}

int tf_cuda_gemv_setup(void)
{
	return tf_cuda_gemv_q16_setup();
}

int tf_cuda_gemv(const tf_weight *w, const uint16_t *x, int n, float *y, int accumulate)
{
	return tf_cuda_gemv_ld(w, x, n, y, w->rows, accumulate);
}

int tf_cuda_gemv_ld(const tf_weight *w, const uint16_t *x, int n, float *y, int64_t ldy, int accumulate)
{
	if (w->rows > INT32_MAX / 2 || w->cols > INT32_MAX / 2)
		return tf_err("weight of %lld x %lld is too large for the GPU kernels",
			      (long long)w->rows, (long long)w->cols);
	const int64_t c = w->cols;
	const uint16_t *xl = x + n * c;                         /* the lo plane */

	if (tf_cuda_gemv_q16_takes(w)) {
		tf_q16_in in = { .kind = TF_Q16_SPLIT, .split = x };
		return tf_cuda_gemv_q16(w, &in, n, y, ldy, accumulate ? TF_Q16_ACC : TF_Q16_STORE);
	}
	for (int i = 0; i < n; i += NMAX) {
		int m = n - i < NMAX ? n - i : NMAX;
		if (gemv_cuda(w, x + i * c, xl + i * c, m, y + i * ldy, ldy, accumulate) < 0)
			return -1;
	}
	return 0;
}
