/*
 * gemv_q16_forms.cuh: the weight forms of the int16-input products
 * (gemv_q16.cu, C++ only): for each, how a lane reads a step of a row and
 * which input meets which code byte in its dp2a sums, and where those
 * inputs sit in shared memory.
 */
#ifndef TF_GEMV_Q16_FORMS_CUH
#define TF_GEMV_Q16_FORMS_CUH

#include "common.cuh"
#include "model/weight.h"

/* the two 16-bit halves of x (signed) . the low (HI: high) two bytes of
 * b (UB: unsigned, else signed) + c, exact in 32 bits */
template <bool HI, bool UB>
static __device__ __forceinline__ int dp2a(uint32_t x, uint32_t b, int c)
{
	int d;
	if (HI && UB)
		asm("dp2a.hi.s32.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(x), "r"(b), "r"(c));
	else if (HI)
		asm("dp2a.hi.s32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(x), "r"(b), "r"(c));
	else if (UB)
		asm("dp2a.lo.s32.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(x), "r"(b), "r"(c));
	else
		asm("dp2a.lo.s32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(x), "r"(b), "r"(c));
	return d;
}

/* the four bytes of b (UB: unsigned, else signed) . the inputs x[0], x[1]
 * (two 16-bit halves each, in byte order) + c: two dp2a */
template <bool UB>
static __device__ __forceinline__ int dot4(uint32_t b, const uint32_t *x, int c)
{
	return dp2a<true, UB>(x[1], b, dp2a<false, UB>(x[0], b, c));
}

/* prmt with the selector's sign mode: a selector nibble with bit 3 set
 * gives 0xff or 0x00 by the top bit of the byte it picks (PTX ISA, prmt) */
template <uint32_t SEL>
static __device__ __forceinline__ uint32_t prmt(uint32_t a, uint32_t b)
{
	uint32_t d;
	asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "n"(SEL));
	return d;
}

/*
 * The forms. Each gives: a chunk of CC columns, one lane's; WORDS 32-bit
 * words of codes a lane step (a chunk); the lane step's int16 inputs as NG
 * groups of GW words, two inputs a word (XW = NG * GW words in all; col:
 * the column within the chunk of input k), a group meeting GB whole
 * 32-column blocks (NBLK = NG * GB a chunk); U lane steps a lane keeps in
 * flight and NBMAX input rows a pass (as many as registers allow);
 * and sums<NB>(), the exact integer dot product of group g's codes of each
 * of its blocks with the group's inputs (NB: the kernel's input rows a
 * pass, where a form's code depends on them). A group is loaded just
 * before its sums, so a lane holds one group of inputs, not a lane step's.
 *
 * The codes meet the inputs as bytes: a code word becomes four code bytes
 * (one mask, a shift and a mask, or a prmt that turns four sign bits into
 * 0x00/0xff bytes), each met by an input in its low or high two bytes
 * (dp2a.lo, .hi): the inputs are laid out in the order of those bytes.
 */

/* 4-bit as MLX packs it (code m of a word in bits 4m): one lane a 32-column
 * block, its four words, so a block's sum is one lane's and gets its scale
 * once (a tiled form of four lanes a block, each scaling its share, spent
 * three more float instructions a word and measured slower).
 * w & 0x0f0f0f0f holds the word's codes 0, 2, 4, 6 and w & 0xf0f0f0f0
 * sixteen times codes 1, 3, 5, 7; word i's inputs are x[4i .. 4i + 3] in
 * that order, one 16-byte unit a word.
 * The odd codes' sum t is then sixteen times theirs, exactly (a code byte
 * at most 240 times 16 inputs of at most 2^15 stays far inside 32 bits),
 * and t >> 4 is theirs: no shift a word, where (w >> 4) & 0x0f0f0f0f
 * measured slower (the same bits). Passes of two or four input rows (NB)
 * keep the shift: the second sum spilled the registers of the four-row
 * kernels. */
struct F4L {
	static constexpr int WORDS = 4, NG = 1, GW = 16, GB = 1, CC = 32, BITS = 4, U = 4, NBMAX = 4;
	static constexpr int XW = NG * GW, NBLK = NG * GB;
	static constexpr bool SIGN = false;
	static __device__ __forceinline__ int col(int k)
	{
		/* input k: half k % 2 of x word m = k % 8 / 2 of code word k / 8 */
		const int m = k % 8 / 2;
		return 8 * (k / 8) + 4 * (m % 2) + 2 * (k % 2) + m / 2;
	}
	template <int NB>
	static __device__ __forceinline__ void sums(int g, const uint32_t *w, const uint32_t *x, int *I)
	{
		int s = 0, t = 0;
		#pragma unroll
		for (int i = 0; i < 4; i++) {
			s = dot4<true>(w[i] & 0x0f0f0f0fu, x + 4 * i, s);
			if (NB == 1)
				t = dot4<true>(w[i] & 0xf0f0f0f0u, x + 4 * i + 2, t);
			else
				s = dot4<true>((w[i] >> 4) & 0x0f0f0f0fu, x + 4 * i + 2, s);
		}
		I[0] = s + (t >> 4);
	}
};

/* 2-bit as MLX packs it (code m of a word in bits 2m), rows of whole
 * 64-column chunks (FAP<2> takes the others): one lane two 32-column
 * blocks, two words each, so a block's sum is one lane's and gets its scale
 * once, as F4L (a tiled form of four lanes a chunk of 256 columns
 * measured slower). (w >> 2e) & 0x03030303 holds a word's codes e, e + 4,
 * e + 8, e + 12; block g of the lane step meets them with x[8i + 2e] of
 * its inputs (columns e, e + 4 of word i) and x[8i + 2e + 1] (e + 8,
 * e + 12). As F4L, one-row passes mask those codes in place,
 * w & (0x03030303 << 2e), 4^e times each, into a sum s[e] of their own,
 * exact (a byte at most 192), and add s[e] >> 2e at the end: no shift a
 * field (the shifts measured slower). */
struct F2L {
	static constexpr int WORDS = 4, NG = 2, GW = 16, GB = 1, CC = 64, BITS = 2, U = 4, NBMAX = 2;
	static constexpr int XW = NG * GW, NBLK = NG * GB;
	static constexpr bool SIGN = false;
	static __device__ __forceinline__ int col(int k)
	{
		/* input k: half k % 2 of x word r = k / 2 % 16 of group k / 32:
		 * code word r / 8 of the block, field e = r % 8 / 2, byte 2 (r % 2)
		 * + k % 2 */
		const int r = k / 2 % 16, e = r % 8 / 2, byte = 2 * (r % 2) + k % 2;
		return 32 * (k / 32) + 16 * (r / 8) + e + 4 * byte;
	}
	template <int NB>
	static __device__ __forceinline__ void sums(int g, const uint32_t *w, const uint32_t *x, int *I)
	{
		int s[4] = { 0, 0, 0, 0 };
		#pragma unroll
		for (int i = 0; i < 2; i++) {
			#pragma unroll
			for (int e = 0; e < 4; e++) {
				if (NB == 1)
					s[e] = dot4<true>(w[2 * g + i] & (0x03030303u << (2 * e)), x + 8 * i + 2 * e, s[e]);
				else
					s[0] = dot4<true>((w[2 * g + i] >> (2 * e)) & 0x03030303u, x + 8 * i + 2 * e, s[0]);
			}
		}
		I[0] = s[0] + (s[1] >> 2) + (s[2] >> 4) + (s[3] >> 6);
	}
};

/* sign1 as MLX packs it (column c in bit c % 32 of word c / 32), groups of
 * 128: one lane a group, its four words (blocks) in one 16-byte lane step,
 * the blocks summed as I d before the group's scale (BPS in q16_run).
 * w << s has bits 7 - s, 15 - s, 23 - s, 31 - s at the tops of its bytes,
 * which prmt's sign mode makes 0x00/0xff masks: mask . x = -(sum of x where
 * the bit is set). A tiled form of four lanes a chunk of 512 columns,
 * each lane's word spread over four blocks, measured slower. */
struct F1L {
	static constexpr int WORDS = 4, NG = 4, GW = 16, GB = 1, CC = 128, BITS = 1, U = 4, NBMAX = 2;
	static constexpr int XW = NG * GW, NBLK = NG * GB;
	static constexpr bool SIGN = true;
	static __device__ __forceinline__ int col(int k)
	{
		const int j = k % 32;   /* input j of block k / 32: bit 7 - j / 4 of byte j % 4 */
		return 32 * (k / 32) + 8 * (j % 4) + 7 - j / 4;
	}
	template <int NB>
	static __device__ __forceinline__ void sums(int g, const uint32_t *w, const uint32_t *x, int *I)
	{
		int s = 0;
		#pragma unroll
		for (int i = 0; i < 8; i++)
			s = dot4<false>(prmt<0xba98>(w[g] << i, 0), x + 2 * i, s);
		I[0] = s;
	}
};

/* affine B bits untiled (MLX order): one lane a block, B words; four codes
 * at a time go to the bytes of one word in column order */
template <int B>
struct FAP {
	static constexpr int WORDS = B, NG = 1, GW = 16, GB = 1, CC = 32, BITS = B, U = B > 4 ? 2 : 16 / B;
	static constexpr int NBMAX = B == 2 ? 2 : 4, XW = NG * GW, NBLK = NG * GB;
	static constexpr bool SIGN = false;
	static __device__ __forceinline__ int col(int k)
	{
		return k;
	}
	template <int NB>
	static __device__ __forceinline__ void sums(int g, const uint32_t *w, const uint32_t *x, int *I)
	{
		int s = 0;
		#pragma unroll
		for (int e = 0; e < 8; e++) {
			uint32_t p = 0;
			if (B == 8) {
				p = w[e];
			} else {
				#pragma unroll
				for (int q = 0; q < 4; q++) {
					const int bit = (4 * e + q) * B, wi = bit / 32, sh = bit % 32, to = 8 * q;
					uint32_t v;
					if (sh + B > 32)        /* the code runs into the next word */
						v = __funnelshift_r(w[wi], w[wi + 1], sh) << to;
					else
						v = to >= sh ? w[wi] << (to - sh) : w[wi] >> (sh - to);
					p |= v & (((1u << B) - 1) << to);
				}
			}
			s = dot4<true>(p, x + 2 * e, s);
		}
		I[0] = s;
	}
};

/* the physical slot of 16-byte unit k of lane region R, LU units a region:
 * the eight regions a quarter warp reads at once land on distinct banks
 * (regions of 128 bytes or more all start on the same banks: unit k of
 * each of eight consecutive ones goes to a different eighth) */
template <int LU>
static __device__ __forceinline__ int swz(int R)
{
	return LU == 1 ? 0 : LU >= 8 ? R % 8 : (R / (8 / LU)) % LU;
}

/* v.template go<F, G>() for w's form and group where a kernel takes them,
 * else v.none(): the one place the products of one row (gemv_q16.cu) and
 * of many (gemm_q16_mma.cu) pick a form */
template <class F, class V>
static typename V::ret visit_g(int g, V &v)
{
	return g == 32 ? v.template go<F, 32>() : g == 64 ? v.template go<F, 64>() : v.template go<F, 128>();
}

template <class V>
static typename V::ret visit_form(const tf_weight *w, V &v)
{
	const int fmt = w->fmt, g = w->group;

	if (fmt == TF_SIGN1)
		return g != 128 ? v.none() : v.template go<F1L, 128>();
	if (fmt != TF_AFFINE || (g != 32 && g != 64 && g != 128))
		return v.none();
	switch (w->bits) {
	case 2: return w->cols % F2L::CC ? visit_g<FAP<2>>(g, v) : visit_g<F2L>(g, v);
	case 3: return visit_g<FAP<3>>(g, v);
	case 4: return visit_g<F4L>(g, v);
	case 5: return visit_g<FAP<5>>(g, v);
	case 6: return visit_g<FAP<6>>(g, v);
	case 8: return visit_g<FAP<8>>(g, v);
	}
	return v.none();
}

#endif
