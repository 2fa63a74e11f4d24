/*
 * gemv_q8_forms.cuh: the weight forms of the int8-input products
 * (gemv_q8.cu, C++ only): for each, how a lane reads a step of a row and
 * which input byte meets which code in its dp4a sums, and where those
 * input bytes sit in shared memory.
 */
#ifndef TF_GEMV_Q8_FORMS_CUH
#define TF_GEMV_Q8_FORMS_CUH

#include "common.cuh"

/* a (4 bytes, unsigned) . b (4 bytes, signed) + c */
static __device__ __forceinline__ int dp4a_us(uint32_t a, uint32_t b, int c)
{
	int d;
	asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
	return d;
}

/* a (4 bytes, signed) . b (4 bytes, signed) + c */
static __device__ __forceinline__ int dp4a_ss(uint32_t a, uint32_t b, int c)
{
	int d;
	asm("dp4a.s32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
	return d;
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

/* column within its chunk of field F of word wi of lane t, in the tiled
 * form of TC columns a chunk (the inverse of tile_pos in common.cuh) */
static __host__ __device__ __forceinline__ int tiled_col(int tc, int bits, int t, int wi, int F)
{
	const int kw = tc / 64, half = 16 / bits;
	const int i = F % half, e = F / half, j = wi * kw + i / 2;
	return 16 * j + 4 * t + 2 * (i % 2) + e;
}

/*
 * The forms. Each gives: LANES lanes a chunk of CC columns; WORDS 32-bit
 * words of codes a lane step; XW 32-bit words of input bytes a lane step
 * (col: the column of input byte k of lane t); NBLK 32-column blocks a
 * chunk; U lane steps a lane keeps in flight and NBMAX input rows a pass
 * (as many as registers allow);
 * and sums(), the exact integer dot product of each block's codes that the
 * lane holds with its input bytes.
 */

/* 4-bit tiled: word wi is block wi; w & 0x0f0f0f0f holds fields 0, 2, 4, 6
 * and (w >> 4) & 0x0f0f0f0f fields 1, 3, 5, 7 */
struct F4T {
	static constexpr int LANES = 4, WORDS = 4, XW = 8, CC = 128, NBLK = 4, BITS = 4, U = 4, NBMAX = 4;
	static constexpr bool SIGN = false;
	static __device__ __forceinline__ int col(int t, int k)
	{
		return tiled_col(CC, BITS, t, k / 8, 2 * (k % 4) + (k / 4) % 2);
	}
	static __device__ __forceinline__ void sums(const uint32_t *w, const uint32_t *x, int *I)
	{
		#pragma unroll
		for (int wi = 0; wi < 4; wi++) {
			I[wi] = dp4a_ss(w[wi] & 0x0f0f0f0fu, x[2 * wi], 0);
			I[wi] = dp4a_ss((w[wi] >> 4) & 0x0f0f0f0fu, x[2 * wi + 1], I[wi]);
		}
	}
};

/* 2-bit tiled: word wi is blocks 2wi (bytes 0, 2) and 2wi + 1 (bytes 1, 3);
 * (w >> 2e) & 0x03030303 holds fields e, e + 4, e + 8, e + 12, and one
 * input word serves both blocks, each masked to its two bytes */
struct F2T {
	static constexpr int LANES = 4, WORDS = 4, XW = 16, CC = 256, NBLK = 8, BITS = 2, U = 2, NBMAX = 2;
	static constexpr bool SIGN = false;
	static __device__ __forceinline__ int col(int t, int k)
	{
		return tiled_col(CC, BITS, t, k / 16, (k / 4) % 4 + 4 * (k % 4));
	}
	static __device__ __forceinline__ void sums(const uint32_t *w, const uint32_t *x, int *I)
	{
		#pragma unroll
		for (int wi = 0; wi < 4; wi++) {
			I[2 * wi] = I[2 * wi + 1] = 0;
			#pragma unroll
			for (int e = 0; e < 4; e++) {
				const uint32_t c = w[wi] >> (2 * e);
				I[2 * wi] = dp4a_ss(c & 0x00030003u, x[4 * wi + e], I[2 * wi]);
				I[2 * wi + 1] = dp4a_ss(c & 0x03000300u, x[4 * wi + e], I[2 * wi + 1]);
			}
		}
	}
};

/* sign1 tiled: word wi is one 128-column group, blocks 4wi .. 4wi + 3; the
 * byte pairs (0, 2) hold blocks 0 and 1 of the word, (1, 3) blocks 2 and 3.
 * prmt of w << s and w << (s + 1) picks bits 7 - s and 6 - s of two bytes
 * as four 0x00/0xff masks: dp4a(mask, x) = -(sum of x where the bit is set) */
struct F1T {
	static constexpr int LANES = 4, WORDS = 4, XW = 32, CC = 512, NBLK = 16, BITS = 1, U = 4, NBMAX = 2;
	static constexpr bool SIGN = true;
	static __device__ __forceinline__ int col(int t, int k)
	{
		const int d = (k / 4) % 8, b = k % 4, src = d / 4 + 2 * (b % 2), sh = 2 * (d % 4) + b / 2;
		return tiled_col(CC, BITS, t, k / 32, 8 * src + 7 - sh);
	}
	static __device__ __forceinline__ void sums(const uint32_t *w, const uint32_t *x, int *I)
	{
		#pragma unroll
		for (int wi = 0; wi < 4; wi++) {
			uint32_t v[8];
			#pragma unroll
			for (int s = 0; s < 8; s++)
				v[s] = w[wi] << s;
			/* the block of mask d within the word: bits 7..4 of a byte
			 * are the second block of its pair, 3..0 the first */
			I[4 * wi + 1] = dp4a_ss(prmt<0xeca8>(v[0], v[1]), x[8 * wi + 0], 0);
			I[4 * wi + 1] = dp4a_ss(prmt<0xeca8>(v[2], v[3]), x[8 * wi + 1], I[4 * wi + 1]);
			I[4 * wi + 0] = dp4a_ss(prmt<0xeca8>(v[4], v[5]), x[8 * wi + 2], 0);
			I[4 * wi + 0] = dp4a_ss(prmt<0xeca8>(v[6], v[7]), x[8 * wi + 3], I[4 * wi + 0]);
			I[4 * wi + 3] = dp4a_ss(prmt<0xfdb9>(v[0], v[1]), x[8 * wi + 4], 0);
			I[4 * wi + 3] = dp4a_ss(prmt<0xfdb9>(v[2], v[3]), x[8 * wi + 5], I[4 * wi + 3]);
			I[4 * wi + 2] = dp4a_ss(prmt<0xfdb9>(v[4], v[5]), x[8 * wi + 6], 0);
			I[4 * wi + 2] = dp4a_ss(prmt<0xfdb9>(v[6], v[7]), x[8 * wi + 7], I[4 * wi + 2]);
		}
	}
};

/* sign1 untiled: one lane a block, one word; w << s has bits 7 - s, 15 - s,
 * 23 - s, 31 - s at the tops of its bytes */
struct F1P {
	static constexpr int LANES = 1, WORDS = 1, XW = 8, CC = 32, NBLK = 1, BITS = 1, U = 8, NBMAX = 4;
	static constexpr bool SIGN = true;
	static __device__ __forceinline__ int col(int t, int k)
	{
		return 8 * (k % 4) + 7 - k / 4;
	}
	static __device__ __forceinline__ void sums(const uint32_t *w, const uint32_t *x, int *I)
	{
		int s = 0;
		#pragma unroll
		for (int i = 0; i < 8; i++)
			s = dp4a_ss(prmt<0xba98>(w[0] << i, 0), x[i], s);
		I[0] = s;
	}
};

/* affine B bits untiled (MLX order): one lane a block, B words; four codes
 * at a time go to the bytes of one word in column order */
template <int B>
struct FAP {
	static constexpr int LANES = 1, WORDS = B, XW = 8, CC = 32, NBLK = 1, BITS = B, U = B > 4 ? 2 : 16 / B, NBMAX = B == 2 ? 2 : 4;
	static constexpr bool SIGN = false;
	static __device__ __forceinline__ int col(int t, int k)
	{
		return k;
	}
	static __device__ __forceinline__ void sums(const uint32_t *w, const uint32_t *x, int *I)
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
			s = dp4a_us(p, x[e], s);
		}
		I[0] = s;
	}
};

/* the physical slot of 16-byte unit k of lane region R, LU units a region:
 * the eight regions a quarter warp reads at once land on distinct banks */
template <int LU>
static __device__ __forceinline__ int swz(int R)
{
	return LU == 1 ? 0 : (R / (8 / LU)) % LU;
}

#endif
