/*
 * gemm_q16_mma.cu: int16-input products of quantized weights for passes
 * of 2 to 16 input rows on the tensor cores (gemm_q16_mma.cuh), each
 * weight read once for all the rows.
 *
 * Why: the CUDA-core kernels (gemv_q16.cu) spend about half an instruction
 * a code and an input row, so a pass of 16 rows is bound by the issue
 * rate, not by the weights. An integer mma (m16n8k32, 8-bit operands, s32
 * sums) makes 16 weight rows times 8 input rows times 32 columns in one
 * instruction.
 *
 * Exactness. The one-row kernels take, for each (weight row, input row)
 * and 32-column block b, the exact integer I = sum_c q[c] x[c] of the
 * codes and the int16 inputs, then float sums over those in a fixed order.
 * Here each int16 input is split into a signed high byte and an unsigned
 * low byte, x = 256 hi + lo, and one mma each gives sum q hi and sum q lo,
 * both exact (at most 32 * 255 * 255 in magnitude), so I = 256 sum q hi +
 * sum q lo exactly, in 32 bits. Being exact, I does not depend on the
 * order of its 32 terms: the columns of a block may be put in any order
 * (k slots), the same for the codes and the inputs, and each form takes
 * the one in which a thread's mma fragment is the code bytes of one word
 * it loaded (mf<F> below); the staging puts the inputs in that order.
 * The float part is then the one-row kernels' own: lane l of their warp
 * sums chunks l, l + 32, ... of a row into one accumulator with
 * q16_fsum/q16_fbias (q16_float.cuh), and the warp adds its 32 lanes in
 * warp_sum's butterfly. Here warp w keeps the accumulators of lanes w
 * and w + 16 for every row and input of its fragments, takes chunks w,
 * w + 16, w + 32, ... in that order with the same calls, adds its two
 * lanes as the butterfly's first level does, and at the end of a tile the
 * 16 sums of each (row, input) meet in shared memory where one thread
 * adds them in the order of the butterfly's other levels (serial_fold),
 * then takes the same factor (1/rms of a normed input) and the same
 * epilogue.
 *
 * Inputs: a first small kernel makes each input row's int16 form with the
 * staging code of the one-row kernels (gemv_q16_stage.cuh, one block a
 * row, the same threads, so the same codes, scales, sums and norms), and
 * writes it in k-slot order as high and low bytes; the product kernel
 * reads that from L2. SwiGLU outputs as their int16 form go through f32
 * and a third kernel that makes the form with q16_out's code (q16_warp).
 *
 * Mapping: a block owns a tile of 32 weight rows (SwiGLU: 16 gate rows and
 * their 16 up rows) and all input rows of the pass, so each weight is read
 * once a pass; a warp's mma fragments are the tile's two 16-row halves
 * times one or two 8-row halves of the inputs.
 */

#include "common.cuh"
#include "base/env.h"
#include "gemm_q16_mma.cuh"
#include "mma.cuh"

#include <type_traits>

#define MMA_WARPS 16
#define MMA_COLS 65536          /* input columns the scratch holds */
#define MMA_OUT 65536           /* SwiGLU outputs of a row the scratch holds */
#define MMA_RED_LD 17           /* a (row, input)'s 16 sums, one padding float */
/*
 * The fewest rows a pass takes these kernels with (TF_Q16_MMA unset): the
 * CUDA-core kernels take NBMAX rows at a time, 4 or 2, and cost about a
 * one-row pass each time, these about the same for 2 rows as for 8 (the
 * mma's eight input rows) and for 9 as for 16; on the H200 these are the
 * faster from 5 rows where NBMAX is 4 and from 3 where it is 2.
 */
#define MMA_MIN_ROWS4 5         /* forms of NBMAX 4 */
#define MMA_MIN_ROWS2 3         /* forms of NBMAX 2: sign1, 2-bit */

/* the scratch of a pass: the inputs' int16 form as 8-bit halves in k-slot
 * order, (16, cols/32) scales and sums, 16 row factors; f32 SwiGLU outputs */
static uint4 *s_xb;
static float *s_xd, *s_xs, *s_rs, *s_y;

/* what the product kernel reads */
struct mma_op {
	const uint8_t *wdata;
	const uint16_t *scales, *biases;
	int rows, cols, n;
	const uint4 *xb;        /* (cols/32, 16, 4) units: block, input row, thread t of a quad's hi k 4t..,
				   hi 16+4t.., lo, lo (a warp's loads of a block are 4 lines) */
	const float *xd, *xs;   /* (n, cols/32) */
	const float *rs;        /* (n) */
	float *y;
	int64_t ldy;
	int accumulate;
	int nbuf;               /* tiles of scales the shared memory holds: 2, the next tile's copied in
				   while the warps work on this one, or 1 */
	int words;              /* the scales may be copied in 4-byte words (even groups a row, aligned) */
};

/*
 * The forms' k slots. m16n8k32 with 8-bit operands (PTX ISA, "Matrix
 * Fragments for mma.m16n8k32"), lane = 4 g + t: A (16 x 32) a0 = (row g,
 * k 4t .. 4t+3), a1 = (row g+8, same k), a2 = (row g, k 16+4t .. 16+4t+3),
 * a3 = (row g+8, same k); B (32 x 8) b0 = (k 4t .., col g), b1 = (k 16+4t
 * .., col g); C c0, c1 = (row g, cols 2t, 2t+1), c2, c3 = (row g+8, same).
 * mf<F>::ld loads what a thread needs of block blk of a row (raw, so that
 * the loads of the next chunk can be in flight while this one is worked
 * on) and mf<F>::ex makes its two words of codes from it (k 4t.. and
 * k 16+4t.., each byte one code); col(k) is the column of the block that
 * k slot k holds.
 */
template <class F>
struct mf;

/* 4-bit: word t of the block; its low nibbles are columns 8t, 8t+2, 8t+4,
 * 8t+6, its high ones 8t+1, 8t+3, ... */
template <>
struct mf<F4L> {
	typedef uint32_t raw;
	static __device__ __forceinline__ raw ld(const uint8_t *row, int blk, int t)
	{
		return __ldg((const uint32_t *)(row + 16 * blk) + t);
	}
	static __device__ __forceinline__ void ex(raw w, int t, uint32_t &lo, uint32_t &hi)
	{
		lo = w & 0x0f0f0f0fu;
		hi = (w >> 4) & 0x0f0f0f0fu;
	}
	static __host__ __device__ __forceinline__ int col(int k)
	{
		return 8 * (k % 16 / 4) + 2 * (k % 4) + k / 16;
	}
};

/* 2-bit of whole 64-column chunks: word t/2 of the block holds columns
 * 16 (t/2) + m in bits 2m; field e = (w >> 2e) & 0x03030303 is columns
 * e, e+4, e+8, e+12 of it; thread t takes fields 2 (t%2) and 2 (t%2) + 1 */
template <>
struct mf<F2L> {
	typedef uint32_t raw;
	static __device__ __forceinline__ raw ld(const uint8_t *row, int blk, int t)
	{
		return __ldg((const uint32_t *)(row + 8 * blk) + t / 2);
	}
	static __device__ __forceinline__ void ex(raw w, int t, uint32_t &lo, uint32_t &hi)
	{
		const int e = 2 * (t % 2);
		lo = (w >> (2 * e)) & 0x03030303u;
		hi = (w >> (2 * e + 2)) & 0x03030303u;
	}
	static __host__ __device__ __forceinline__ int col(int k)
	{
		const int t = k % 16 / 4;
		return 16 * (t / 2) + 2 * (t % 2) + k / 16 + 4 * (k % 4);
	}
};

/* four bits (v < 16) to four 0/1 bytes, bit i to byte i: the copies at
 * shifts 0, 7, 14, 21 put bit i of copy i at 8i, and nothing overlaps */
static __device__ __forceinline__ uint32_t bits_to_bytes(uint32_t v)
{
	return (v * 0x00204081u) & 0x01010101u;
}

/* sign1: byte t of the block's word, columns 8t .. 8t+7, as 0/1 bytes for
 * the set bits (the block's I is minus their sum, as in F1L) */
template <>
struct mf<F1L> {
	typedef uint32_t raw;
	static __device__ __forceinline__ raw ld(const uint8_t *row, int blk, int t)
	{
		return __ldg(row + 4 * blk + t);
	}
	static __device__ __forceinline__ void ex(raw x, int t, uint32_t &lo, uint32_t &hi)
	{
		lo = bits_to_bytes(x & 15);
		hi = bits_to_bytes(x >> 4);
	}
	static __host__ __device__ __forceinline__ int col(int k)
	{
		return 8 * (k % 16 / 4) + 4 * (k / 16) + k % 4;
	}
};

/* affine B bits in column order: k slot k is column k, so thread t takes
 * columns 4t .. 4t+3 and 16+4t .. 16+4t+3, bits 4eB .. 4eB + 4B - 1 of
 * the block's B words for e = t and 4 + t: the one or two words each
 * four codes lie in */
template <int B>
struct mf<FAP<B>> {
	struct raw {
		uint32_t v[2][2];
	};
	static __device__ __forceinline__ void four_ld(const uint32_t *w, int e, uint32_t *v)
	{
		const int bit = 4 * e * B, wi = bit >> 5, sh = bit & 31;
		v[0] = __ldg(w + wi);
		v[1] = B != 8 && sh + 4 * B > 32 ? __ldg(w + wi + 1) : 0;
	}
	static __device__ __forceinline__ uint32_t four(const uint32_t *v, int e)
	{
		if (B == 8)
			return v[0];
		const int sh = (4 * e * B) & 31;
		const uint32_t x = (uint32_t)((((uint64_t)v[1] << 32) | v[0]) >> sh);
		uint32_t p = 0;
		#pragma unroll
		for (int q = 0; q < 4; q++)
			p |= ((x >> (q * B)) & ((1u << B) - 1)) << (8 * q);
		return p;
	}
	static __device__ __forceinline__ raw ld(const uint8_t *row, int blk, int t)
	{
		const uint32_t *w = (const uint32_t *)(row + 4 * B * blk);
		raw r;
		four_ld(w, t, r.v[0]);
		four_ld(w, 4 + t, r.v[1]);
		return r;
	}
	static __device__ __forceinline__ void ex(const raw &r, int t, uint32_t &lo, uint32_t &hi)
	{
		lo = four(r.v[0], t);
		hi = four(r.v[1], 4 + t);
	}
	static __host__ __device__ __forceinline__ int col(int k)
	{
		return k;
	}
};

/*
 * Sums as floats without a conversion. An s32 mma adds its integer sum
 * to the bits of its start value, and the bits of a float F plus an
 * integer v are the float F + v u while they stay in F's binade, u its
 * unit in the last place. The low half starts at the bits of M = 1.5 *
 * 2^23 (u = 1), the high half at those of H = 1.5 * 2^31 (u = 256), so
 * they come out as the floats M + sum q lo and H + 256 sum q hi, exactly:
 * 0 <= sum q lo <= 32 * 255 * 255 and |sum q hi| <= 32 * 255 * 128 are
 * below 2^22. Then (hi - (H + M)) + lo: the first difference is 256 sum q
 * hi - M, a multiple of 256 below 2^32 in size, so exact, and the add
 * rounds the exact I = 256 sum q hi + sum q lo once to nearest even, the
 * value (float)I of the one-row kernels, in two adds. A conversion issues
 * at an eighth of the rate of an add on Hopper, and a pass of 16 rows
 * takes one for each (weight row, input row, block).
 */
#define MMA_MAGIC_LO 0x4b400000 /* 1.5 * 2^23 */
#define MMA_MAGIC_HI 0x4f400000 /* 1.5 * 2^31 */

/* c = a (16 x 32 unsigned bytes) b (32 x 8, signed bytes if SB, else
 * unsigned) + MMA_MAGIC_HI (SB) or MMA_MAGIC_LO, exact in s32 */
template <bool SB>
static __device__ __forceinline__ void mma_u8(int *c, const uint32_t *a, uint32_t b0, uint32_t b1)
{
	if (SB)
		asm("mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
		    "{%10,%10,%10,%10};"
		    : "=r"(c[0]), "=r"(c[1]), "=r"(c[2]), "=r"(c[3])
		    : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "r"(MMA_MAGIC_HI));
	else
		asm("mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
		    "{%10,%10,%10,%10};"
		    : "=r"(c[0]), "=r"(c[1]), "=r"(c[2]), "=r"(c[3])
		    : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "r"(MMA_MAGIC_LO));
}

/* the float (float)I of a block's I = 256 hi + lo from mma_u8's sums */
static __device__ __forceinline__ float mma_sum(int hi, int lo)
{
	return (__int_as_float(hi) - 3233808384.0f) + __int_as_float(lo);   /* H + M */
}

/*
 * Input row blockIdx.x of n: its int16 form made as the one-row kernels
 * make it (stage_split, stage_rows with one row a pass, Q16_WARPS warps, so
 * the same codes, scales, sums and row factor), then written for form F:
 * for each block, thread t's 16 bytes of the fragments (high bytes of k
 * slots 4t.. and 16+4t.., then the low bytes of the same).
 */
template <class F>
__global__ void __launch_bounds__(Q16_WARPS * WARP, 1) q16_mma_stage(const __grid_constant__ q16_src src, int n,
								     int cols, uint4 *xb, float *xd, float *xs, float *rs)
{
	extern __shared__ uint4 sm[];
	const int nblk = cols / 32, j = blockIdx.x;
	int16_t *qt = (int16_t *)sm;
	float *sd = (float *)(qt + cols), *ss = sd + nblk, *red = ss + nblk;

	pdl_trigger();
	if (src.kind == TF_Q16_SPLIT || src.kind == TF_Q16_HSPLIT)
		stage_split<FAP<8>, 1, false>(src, j, n, cols, sm, qt, sd, ss);
	else if (src.kind == TF_Q16_NORM)
		stage_rows<1, TF_Q16_NORM, 4, false>(src, j, n, cols, sm, qt, sd, ss, red);
	else if (src.kind == TF_Q16_GNORM)
		stage_rows<1, TF_Q16_GNORM, 4, false>(src, j, n, cols, sm, qt, sd, ss, red);
	else
		stage_rows<1, TF_Q16_ROWS, 6, false>(src, j, n, cols, sm, qt, sd, ss, red);
	__syncthreads();
	if (!threadIdx.x) {
		float r[1];
		q16_row_scales<1>(src, cols, red, r);
		rs[j] = r[0];
	}
	for (int u = threadIdx.x; u < 4 * nblk; u += blockDim.x) {
		const int b = u >> 2, t = u & 3;
		const int16_t *x = qt + 32 * b;
		uint32_t v[4] = { 0, 0, 0, 0 };
		#pragma unroll
		for (int q = 0; q < 4; q++) {
			const int x0 = x[mf<F>::col(4 * t + q)], x1 = x[mf<F>::col(16 + 4 * t + q)];
			v[0] |= (uint32_t)((x0 >> 8) & 0xff) << (8 * q);
			v[1] |= (uint32_t)((x1 >> 8) & 0xff) << (8 * q);
			v[2] |= (uint32_t)(x0 & 0xff) << (8 * q);
			v[3] |= (uint32_t)(x1 & 0xff) << (8 * q);
		}
		xb[((int64_t)b * Q16_MMA_ROWS + j) * 4 + t] = make_uint4(v[0], v[1], v[2], v[3]);
	}
	for (int b = threadIdx.x; b < nblk; b += blockDim.x) {
		xd[(int64_t)j * nblk + b] = sd[b];
		xs[(int64_t)j * nblk + b] = ss[b];
	}
}

/* weight row k (0 .. 31) of tile `tile` (past the end, row 0): rows
 * tile * 32 + k, or SWI the gate rows p of tile * 16 + k % 16, then their
 * up rows p + trows */
template <bool SWI>
static __device__ __forceinline__ int tile_row32(int tile, int k, int rows)
{
	if (SWI) {
		const int p = tile * 16 + k % 16, trows = rows / 2;
		return p < trows ? p + (k >= 16 ? trows : 0) : 0;
	}
	const int r = tile * 32 + k;
	return r < rows ? r : 0;
}

/* the codes, scales and biases of a tile into L2, 32-byte sectors spread
 * over the block's threads: the block then streams them from L2, and asks
 * for the next tile's while it works on this one, so that its warps'
 * loads, a few in flight each, are not all trips to memory */
template <class F, int G, bool SWI>
static __device__ __forceinline__ void prefetch_tile32(const mma_op &op, int tile, int ntiles)
{
	if (tile >= ntiles)
		return;
	const int64_t rowbytes = (int64_t)op.cols * F::BITS / 8, sbytes = (int64_t)(op.cols / G) * 2;
	const int cs = (int)((rowbytes + 31) / 32), ss = (int)((sbytes + 31) / 32), per = cs + (F::SIGN ? 1 : 2) * ss;

	/* a warp a row, its lanes over the row's sectors (no division) */
	for (int k = threadIdx.x >> 5; k < 32; k += MMA_WARPS) {
		const int64_t r = tile_row32<SWI>(tile, k, op.rows);
		for (int o = threadIdx.x & 31; o < per; o += WARP)
			if (o < cs)
				prefetch_l2(op.wdata + r * rowbytes + 32 * o);
			else if (o < cs + ss)
				prefetch_l2((const uint8_t *)op.scales + r * sbytes + 32 * (o - cs));
			else
				prefetch_l2((const uint8_t *)op.biases + r * sbytes + 32 * (o - cs - ss));
	}
}

/* whether the kernel takes a warp's two chunks in one iteration (the forms
 * of one 32-column block a chunk, but 2-bit), else one (q16_mma's loop) */
template <class F>
static __host__ __device__ constexpr bool q16_mma_paired(void)
{
	return F::NBLK == 1 && F::BITS != 2;
}

/* whether the paired loop has each chunk's loads in flight under the
 * chunk before it: the 8-bit form, of one word of codes a fragment row
 * (the others' two chunks of loads spilled registers; 4-bit has a ring) */
template <class F>
static __host__ __device__ constexpr bool q16_mma_ahead(void)
{
	return q16_mma_paired<F>() && F::BITS == 8;
}

/* what a thread loads of a chunk: its codes of each block and fragment
 * row, and its units of the staged inputs of each block and 8-row half */
template <class F, int NT>
struct chunk_raw {
	typename mf<F>::raw w[F::NBLK][2][2];
	uint4 x[F::NBLK][NT];
};

/*
 * The ring of the 4-bit form: each warp copies its next chunks, the codes
 * of the tile's 32 rows and the staged inputs, into MMA_NS stages of its
 * own in shared memory (cp.async, three 16-byte copies a lane a chunk),
 * MMA_NS - 1 chunks ahead of the one it works on, and reads them back
 * from there. Why: chunk loads from L2 into registers hid their latency
 * under one chunk's math at most (two chunks held spilled registers), and
 * their 64-bit addresses cost some 60 instructions a chunk; the copies
 * take a few, and the reads back are at offsets fixed in the code.
 */
#define MMA_NS 3                        /* stages a warp */
#define MMA_STAGE (32 * 16 + 64 * 16)   /* a chunk: 32 rows of 16 code bytes, 16 input rows of 4 units */

template <class F>
static __host__ __device__ constexpr bool q16_mma_ring(void)
{
	return std::is_same<F, F4L>::value;
}

template <class F>
static __host__ __device__ constexpr size_t mma_ring_bytes(void)
{
	return q16_mma_ring<F>() ? (size_t)MMA_WARPS * MMA_NS * MMA_STAGE : 0;
}

/* chunk j of the warp's (w + 16 j) into its stage j % MMA_NS: lane l
 * copies row l's 16 code bytes (from wl, its row's start) and input units
 * l and l + 32; past the chunks, nothing (zeros), so that every lane
 * commits one group a chunk and the waits count chunks */
static __device__ __forceinline__ void ring_issue(const mma_op &op, uint8_t *ring, const uint8_t *wl, int j, int nch)
{
	const int lane = threadIdx.x & 31, ch = (threadIdx.x >> 5) + 16 * j, v = ch < nch, c = v ? ch : 0;
	uint8_t *st = ring + (j % MMA_NS) * MMA_STAGE;
	const uint4 *x = op.xb + (int64_t)c * (Q16_MMA_ROWS * 4) + lane;

	cp_async16(st + 16 * lane, wl + 16 * c, v);
	cp_async16(st + 512 + 16 * lane, x, v);
	cp_async16(st + 1024 + 16 * lane, x + 32, v);
	cp_commit();
}

/* the thread's codes and input units of the chunk in stage st */
template <class F, int NT>
static __device__ __forceinline__ void ring_read(const uint8_t *st, chunk_raw<F, NT> &r)
{
	const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;

	#pragma unroll
	for (int mt = 0; mt < 2; mt++)
		#pragma unroll
		for (int h = 0; h < 2; h++)
			r.w[0][mt][h] = *(const uint32_t *)(st + (16 * mt + 8 * h + g) * 16 + 4 * t);
	#pragma unroll
	for (int nt = 0; nt < NT; nt++)
		r.x[0][nt] = *(const uint4 *)(st + 512 + ((8 * nt + g) * 4 + t) * 16);
}

template <int NT>
static __device__ __forceinline__ void swap_acc(float (&acc)[2][2][NT][4])
{
	#pragma unroll
	for (int mt = 0; mt < 2; mt++)
		#pragma unroll
		for (int nt = 0; nt < NT; nt++)
			#pragma unroll
			for (int i = 0; i < 4; i++) {
				const float v = acc[0][mt][nt][i];
				acc[0][mt][nt][i] = acc[1][mt][nt][i];
				acc[1][mt][nt][i] = v;
			}
}

/* the shared memory of a block (gemm_q16_mma): the accumulators of a
 * tile's (row, input) pairs, the inputs' scales and sums, the tile's
 * weight scales and biases; strides odd in words, so that the eight rows
 * or four inputs a warp's load meets fall on distinct banks */
struct mma_smem {
	float *red;             /* (32 rows, 16 inputs, MMA_RED_LD) */
	float *xd, *xs;         /* (16, xld) */
	uint16_t *sc, *bi;      /* (32, sld) a tile's, then (nbuf 2) the next tile's at + sbuf */
	uint8_t *ring;          /* (MMA_WARPS, MMA_NS, MMA_STAGE) bytes: mma_ring's chunks, 16-byte aligned */
	int xld, sld, sbuf;
};

static __host__ __device__ __forceinline__ int mma_xld(int cols)
{
	return cols / 32 | 1;
}

static __host__ __device__ __forceinline__ int mma_sld(int cols, int g)
{
	const int e = (cols / g + 1) / 2 * 2;   /* even: whole words a row */
	return e / 2 % 2 ? e : e + 2;
}

/* bytes of the shared memory before the ring (mma_smem_of) */
static __host__ __device__ __forceinline__ size_t mma_smem_head(int cols, int g, int nbuf)
{
	return (4 * ((size_t)32 * 16 * MMA_RED_LD + 2 * 16 * (size_t)mma_xld(cols)) +
		nbuf * 2 * 2 * 32 * (size_t)mma_sld(cols, g) + 15) / 16 * 16;
}

/* ring: the form's bytes of mma_ring (mma_ring_bytes), 0 if it has none */
static __host__ __device__ __forceinline__ size_t mma_smem_bytes(int cols, int g, int nbuf, size_t ring)
{
	return mma_smem_head(cols, g, nbuf) + ring;
}

static __device__ __forceinline__ mma_smem mma_smem_of(float *base, int cols, int g, int nbuf)
{
	mma_smem m;

	m.xld = mma_xld(cols);
	m.sld = mma_sld(cols, g);
	m.red = base;
	m.xd = m.red + 32 * 16 * MMA_RED_LD;
	m.xs = m.xd + 16 * m.xld;
	m.sc = (uint16_t *)(m.xs + 16 * m.xld);
	m.bi = m.sc + 32 * m.sld;
	m.sbuf = 2 * 32 * m.sld;
	m.ring = (uint8_t *)base + mma_smem_head(cols, g, nbuf);
	return m;
}

/* a 4-byte copy from global to shared that lands while the thread goes on
 * (cp.async, PTX ISA "Data Movement and Conversion Instructions"): the
 * next tile's scales come in under this tile's work instead of as loads
 * every warp waits for at the tile's barrier */
static __device__ __forceinline__ void cp_async4(void *dst, const void *src)
{
	const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
	asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(d), "l"(src) : "memory");
}

static __device__ __forceinline__ void cp_async_commit(void)
{
	asm volatile("cp.async.commit_group;" ::: "memory");
}

/* until at most N of the thread's groups of copies are in flight */
template <int N>
static __device__ __forceinline__ void cp_async_wait(void)
{
	asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

/* the weight scales and biases of tile `tile` into sc, bi: a warp a row
 * (no division), its lanes over the row's words, as copies in flight;
 * without op.words, loads and stores of single values. One group of
 * copies either way, so that the waits count tiles. */
template <class F, int G, bool SWI>
static __device__ __forceinline__ void tile_scales(const mma_op &op, int tile, uint16_t *sc, uint16_t *bi, int sld)
{
	const int ngroups = op.cols / G, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

	for (int k = warp; k < 32; k += MMA_WARPS) {
		const int64_t o = (int64_t)tile_row32<SWI>(tile, k, op.rows) * ngroups;
		if (op.words) {
			for (int i = 2 * lane; i < ngroups; i += 2 * WARP) {
				cp_async4(sc + k * sld + i, op.scales + o + i);
				if (!F::SIGN)
					cp_async4(bi + k * sld + i, op.biases + o + i);
			}
		} else {
			for (int i = lane; i < ngroups; i += WARP) {
				sc[k * sld + i] = __ldg(op.scales + o + i);
				if (!F::SIGN)
					bi[k * sld + i] = __ldg(op.biases + o + i);
			}
		}
	}
	cp_async_commit();
}

/* N (1 or 2) bf16 values at shared p (aligned to their size) into a word */
template <int N>
static __device__ __forceinline__ void lds_bf16s(const uint16_t *p, uint32_t *v)
{
	v[0] = N == 1 ? (uint32_t)*p : *(const uint32_t *)p;
}

/* the thread's unit of staged inputs of block blk and 8-row half nt:
 * input rows past n too (the scratch holds Q16_MMA_ROWS rows), whose
 * values reach only their own mma columns, whose sums are never stored;
 * a test of the row cost more instructions than the load */
static __device__ __forceinline__ uint4 mma_load_x(const mma_op &op, int blk, int nt)
{
	const int lane = threadIdx.x & 31;

	return __ldg(op.xb + ((int64_t)blk * Q16_MMA_ROWS + 8 * nt + (lane >> 2)) * 4 + (lane & 3));
}

/* the codes of block blk of the thread's rows (at offsets wr,
 * gemm_q16_mma) into block bb of r */
template <class F, int NT>
static __device__ __forceinline__ void mma_load_w(const mma_op &op, const uint32_t (&wr)[2][2], int blk,
						  chunk_raw<F, NT> &r, int bb)
{
	#pragma unroll
	for (int mt = 0; mt < 2; mt++)
		#pragma unroll
		for (int h = 0; h < 2; h++)
			r.w[bb][mt][h] = mf<F>::ld(op.wdata + wr[mt][h], blk, threadIdx.x & 3);
}

/* chunk ch of the thread's rows into r */
template <class F, int NT>
static __device__ __forceinline__ void mma_load(const mma_op &op, const uint32_t (&wr)[2][2], int ch,
						chunk_raw<F, NT> &r)
{
	#pragma unroll
	for (int bb = 0; bb < F::NBLK; bb++) {
		mma_load_w<F, NT>(op, wr, ch * F::NBLK + bb, r, bb);
		#pragma unroll
		for (int nt = 0; nt < NT; nt++)
			r.x[bb][nt] = mma_load_x(op, ch * F::NBLK + bb, nt);
	}
}

/* chunk ch into the accumulators of its lane: each block's mma, the
 * exact sums I, then the one-row kernels' float steps; PRE: its loads are
 * in r, else each block's are made from wr as the block is reached (the
 * forms whose loads of a whole chunk spilled registers) */
template <class F, int G, int NT, bool PRE>
static __device__ __forceinline__ void mma_math(const mma_op &op, const mma_smem &sm, const uint16_t *sc,
						const uint16_t *bi, const uint32_t (&wr)[2][2],
						const chunk_raw<F, NT> &r, int ch, float (&acc)[2][NT][4])
{
	constexpr int GPC = F::CC >= G ? F::CC / G : 1, SW = (GPC + 1) / 2, NBLK = F::NBLK;
	static_assert(GPC <= 2, "a chunk's scales are one word");
	const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3, n = op.n;
	uint32_t sv[2][2][SW], bv[2][2][SW];

	#pragma unroll
	for (int mt = 0; mt < 2; mt++)
		#pragma unroll
		for (int h = 0; h < 2; h++) {
			const int o = (16 * mt + 8 * h + g) * sm.sld + ch * F::CC / G;
			lds_bf16s<GPC>(sc + o, sv[mt][h]);
			if (!F::SIGN)
				lds_bf16s<GPC>(bi + o, bv[mt][h]);
		}
	/* inputs past n read row 0's scales (their sums are never stored) */
	int in[NT][2];
	#pragma unroll
	for (int nt = 0; nt < NT; nt++)
		#pragma unroll
		for (int e = 0; e < 2; e++)
			in[nt][e] = (8 * nt + 2 * t + e < n ? 8 * nt + 2 * t + e : 0) * sm.xld;
	float sd[2][NT][4];
	#pragma unroll
	for (int bb = 0; bb < NBLK; bb++) {
		const int blk = ch * NBLK + bb;
		chunk_raw<F, NT> rb;
		if (!PRE)
			mma_load_w<F, NT>(op, wr, blk, rb, 0);
		const chunk_raw<F, NT> &rr = PRE ? r : rb;
		const int ib = PRE ? bb : 0;
		uint32_t a[2][4];
		#pragma unroll
		for (int mt = 0; mt < 2; mt++) {
			mf<F>::ex(rr.w[ib][mt][0], t, a[mt][0], a[mt][2]);
			mf<F>::ex(rr.w[ib][mt][1], t, a[mt][1], a[mt][3]);
		}
		#pragma unroll
		for (int nt = 0; nt < NT; nt++) {
			/* without PRE the test of the row keeps each load beside its
			 * use: loads free to move were hoisted and spilled registers */
			const uint4 x = PRE ? r.x[bb][nt] : 8 * nt + g < n ? mma_load_x(op, blk, nt) : make_uint4(0, 0, 0, 0);
			float d[2];
			#pragma unroll
			for (int e = 0; e < 2; e++)
				d[e] = sm.xd[in[nt][e] + blk];
			#pragma unroll
			for (int mt = 0; mt < 2; mt++) {
				int hi[4], lo[4];
				mma_u8<true>(hi, a[mt], x.x, x.y);
				mma_u8<false>(lo, a[mt], x.z, x.w);
				#pragma unroll
				for (int i = 0; i < 4; i++) {
					const float I = mma_sum(hi[i], lo[i]);
					q16_fsum<F, G>(bb, F::SIGN ? -I : I, d[i & 1], sv[mt][i >> 1], sd[mt][nt][i],
						       acc[mt][nt][i]);
				}
			}
		}
	}
	#pragma unroll
	for (int bb = 0; bb < NBLK; bb++)
		#pragma unroll
		for (int nt = 0; nt < NT; nt++) {
			float xs[2];
			#pragma unroll
			for (int e = 0; e < 2; e++)
				xs[e] = sm.xs[in[nt][e] + ch * NBLK + bb];
			#pragma unroll
			for (int mt = 0; mt < 2; mt++)
				#pragma unroll
				for (int i = 0; i < 4; i++)
					q16_fbias<F, G>(bb, xs[i & 1], sv[mt][i >> 1], bv[mt][i >> 1], acc[mt][nt][i]);
		}
}

/*
 * The product: form F, groups of G, NT halves of 8 input rows (n <= 8 NT),
 * SWI: W stacks gate rows over up rows and y is silu(gate) up. Block
 * tiles as the file's head says. Warp w takes the chunks of the one-row
 * kernels' lanes w and w + 16 (w, w + 16, w + 32, ...) into acc[0] and
 * acc[1]: warp_sum's butterfly adds those two lanes first, so the warp
 * adds them itself and a tile's reduction meets 16 sums a (row, input),
 * not 32.
 */
template <class F, int G, int NT, bool SWI>
__global__ void __launch_bounds__(MMA_WARPS * WARP, 1) gemm_q16_mma(const __grid_constant__ mma_op op)
{
	constexpr int TP = SWI ? 16 : 32;       /* outputs a tile */
	extern __shared__ float smem[];
	const mma_smem sm = mma_smem_of(smem, op.cols, G, op.nbuf);
	float *red = sm.red;
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
	const int rows = op.rows, n = op.n, nch = op.cols / F::CC;
	const int trows = SWI ? rows / 2 : rows, ntiles = (trows + TP - 1) / TP;
	const int64_t rowbytes = (int64_t)op.cols * F::BITS / 8;

	pdl_trigger();
	/* the weights need no earlier kernel: the first tile's codes on their
	 * way to L2 and its scales to shared memory while the staging ends */
	prefetch_tile32<F, G, SWI>(op, blockIdx.x, ntiles);
	if (blockIdx.x < ntiles)
		tile_scales<F, G, SWI>(op, blockIdx.x, sm.sc, sm.bi, sm.sld);
	pdl_wait();
	/* the inputs' scales and sums, once a block, as copies in flight
	 * together (loads and stores of one value at a time wait for each
	 * load in turn) */
	const int nblk = op.cols / 32;
	for (int j = warp; j < n; j += MMA_WARPS)
		for (int b = lane; b < nblk; b += WARP) {
			cp_async4(sm.xd + j * sm.xld + b, op.xd + (int64_t)j * nblk + b);
			cp_async4(sm.xs + j * sm.xld + b, op.xs + (int64_t)j * nblk + b);
		}
	cp_async_commit();
	/* the weight scales and biases of a tile come in while the one
	 * before it is worked on: with two buffers under its chunks, with
	 * one under its reduction */
	for (int tile = blockIdx.x, it = 0; tile < ntiles; tile += gridDim.x, it++) {
		const int next = tile + gridDim.x, b = op.nbuf > 1 ? it & 1 : 0;
		prefetch_tile32<F, G, SWI>(op, next, ntiles);
		if (op.nbuf > 1 && next < ntiles) {
			/* buffer b ^ 1 was last read before the barriers
			 * that ended the tile before this one */
			tile_scales<F, G, SWI>(op, next, sm.sc + (b ^ 1) * sm.sbuf, sm.bi + (b ^ 1) * sm.sbuf, sm.sld);
			cp_async_wait<1>();
		} else {
			cp_async_wait<0>();
		}
		__syncthreads();
		const uint16_t *sc = sm.sc + b * sm.sbuf, *bi = sm.bi + b * sm.sbuf;
		/* where the weight rows of the thread's fragments start: half
		 * mt of the tile, row g (h = 0) or g + 8 (h = 1) of it; past the
		 * end, row 0 (offsets in 32 bits, which q16_mma_takes checks:
		 * pointers spilled registers) */
		uint32_t wr[2][2];
		#pragma unroll
		for (int mt = 0; mt < 2; mt++)
			#pragma unroll
			for (int h = 0; h < 2; h++)
				wr[mt][h] = (uint32_t)(tile_row32<SWI>(tile, 16 * mt + 8 * h + g, rows) * rowbytes);
		float acc[2][2][NT][4];
		#pragma unroll
		for (int s = 0; s < 2; s++)
			#pragma unroll
			for (int mt = 0; mt < 2; mt++)
				#pragma unroll
				for (int nt = 0; nt < NT; nt++)
					#pragma unroll
					for (int i = 0; i < 4; i++)
						acc[s][mt][nt][i] = 0.0f;
		chunk_raw<F, NT> ra, rb;
		if constexpr (q16_mma_ring<F>()) {
			/* chunk j into acc[j % 2]: wait for its copies (one
			 * newer group may still be in flight), then the stage
			 * the warp read last is free for chunk j + MMA_NS - 1 */
			uint8_t *ring = sm.ring + warp * (MMA_NS * MMA_STAGE);
			const uint8_t *wl = op.wdata + (uint32_t)(tile_row32<SWI>(tile, lane, rows) * rowbytes);
			const int nj = warp < nch ? (nch - warp + 15) / 16 : 0;
			static_assert(MMA_NS == 3, "the waits below leave MMA_NS - 2 groups in flight");
			#pragma unroll
			for (int j = 0; j < MMA_NS - 1; j++)
				ring_issue(op, ring, wl, j, nch);
			for (int j = 0; j < nj; j += 2) {
				cp_async_wait<1>();
				__syncwarp();
				ring_issue(op, ring, wl, j + MMA_NS - 1, nch);
				ring_read<F, NT>(ring + (j % MMA_NS) * MMA_STAGE, ra);
				mma_math<F, G, NT, true>(op, sm, sc, bi, wr, ra, warp + 16 * j, acc[0]);
				if (j + 1 < nj) {
					cp_async_wait<1>();
					__syncwarp();
					ring_issue(op, ring, wl, j + MMA_NS, nch);
					ring_read<F, NT>(ring + ((j + 1) % MMA_NS) * MMA_STAGE, ra);
					mma_math<F, G, NT, true>(op, sm, sc, bi, wr, ra, warp + 16 * (j + 1), acc[1]);
				}
			}
			cp_async_wait<0>();
		} else if (q16_mma_ahead<F>()) {
			/* chunks c (lane w) and c + 16 (lane w + 16) an iteration,
			 * each one's loads issued before the chunk before it is
			 * worked on, so that a warp has a chunk's loads in flight
			 * under every chunk's math */
			if (warp < nch)
				mma_load<F, NT>(op, wr, warp, ra);
			for (int c = warp; c < nch; c += 32) {
				const bool hb = c + 16 < nch;
				if (hb)
					mma_load<F, NT>(op, wr, c + 16, rb);
				mma_math<F, G, NT, true>(op, sm, sc, bi, wr, ra, c, acc[0]);
				if (c + 32 < nch)
					mma_load<F, NT>(op, wr, c + 32, ra);
				if (hb)
					mma_math<F, G, NT, true>(op, sm, sc, bi, wr, rb, c + 16, acc[1]);
			}
		} else if (q16_mma_paired<F>()) {
			for (int c = warp; c < nch; c += 32) {
				mma_math<F, G, NT, false>(op, sm, sc, bi, wr, ra, c, acc[0]);
				if (c + 16 < nch)
					mma_math<F, G, NT, false>(op, sm, sc, bi, wr, ra, c + 16, acc[1]);
			}
		} else {
			/* one chunk an iteration, w + 16 j, lane w's for even j
			 * and lane w + 16's for odd j: the two lanes'
			 * accumulators swapped after each (a pair of chunks an
			 * iteration spilled registers) */
			int j = 0;
			#pragma unroll 1
			for (int ch = warp; ch < nch; ch += 16, j++) {
				mma_math<F, G, NT, false>(op, sm, sc, bi, wr, ra, ch, acc[0]);
				swap_acc<NT>(acc);
			}
			if (j & 1)
				swap_acc<NT>(acc);
		}
		__syncthreads();        /* the last tile's sums and scales are read */
		if (op.nbuf == 1 && next < ntiles)
			tile_scales<F, G, SWI>(op, next, sm.sc, sm.bi, sm.sld);
		#pragma unroll
		for (int mt = 0; mt < 2; mt++)
			#pragma unroll
			for (int nt = 0; nt < NT; nt++)
				#pragma unroll
				for (int i = 0; i < 4; i++) {
					const int local = 16 * mt + 8 * (i >> 1) + g, x = 8 * nt + 2 * t + (i & 1);
					if (x < n)
						red[(local * 16 + x) * MMA_RED_LD + warp] =
							acc[0][mt][nt][i] + acc[1][mt][nt][i];
				}
		__syncthreads();
		/* a thread a (row, input) sum: q = o n + x puts the 32 pairs
		 * of a warp's loads on distinct banks (row stride MMA_RED_LD) */
		for (int q = threadIdx.x; q < TP * n; q += blockDim.x) {
			const int o = q / n, x = q - o * n;
			const float v = serial_fold<16>(red + (o * 16 + x) * MMA_RED_LD) * op.rs[x];
			float *y = op.y + (int64_t)x * op.ldy;
			if (SWI) {
				const float u = serial_fold<16>(red + ((o + 16) * 16 + x) * MMA_RED_LD) * op.rs[x];
				const int p = tile * 16 + o;
				if (p < trows)
					y[p] = silu(v) * u;
			} else {
				const int r = tile * 32 + o;
				if (r < rows)
					y[r] = op.accumulate ? y[r] + v : v;
			}
		}
	}
}

/* the int16 form of f32 SwiGLU outputs (n, out), as q16_out makes it: a
 * warp an output block */
__global__ void q16_mma_out(const float *__restrict__ y, int n, int out, int16_t *yq, float *yd, float *ys,
			    int64_t ldq)
{
	const int wid = (int)((blockIdx.x * blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31, nb = out / 32;

	pdl_trigger();
	pdl_wait();
	if (wid >= n * nb)
		return;
	const int i = wid / nb, b = wid - i * nb;
	const float x = y[(int64_t)i * out + 32 * b + lane];
	float sc, sm;
	yq[i * ldq + 32 * b + lane] = q16_warp(x, x, &sc, &sm);
	if (!lane) {
		yd[i * (ldq / 32) + b] = sc;
		ys[i * (ldq / 32) + b] = sm;
	}
}

/* the fewest rows a pass of a form of NBMAX takes the kernels with:
 * TF_Q16_MMA=0 none, 1 two, else MMA_MIN_ROWS4 or MMA_MIN_ROWS2 */
static int mma_min_rows(int nbmax)
{
	static int v = -1;

	if (v < 0)
		v = tf_env_off("TF_Q16_MMA") ? Q16_MMA_ROWS + 1 : tf_env_on("TF_Q16_MMA") ? 2 : 0;
	return v ? v : nbmax > 2 ? MMA_MIN_ROWS4 : MMA_MIN_ROWS2;
}

static size_t stage_smem(int cols)
{
	return (size_t)cols * 2 + (size_t)(cols / 32) * 8 + Q16_RED * 4;
}

#define MMA_SMEM (220 * 1024)    /* shared memory a product block may take */

/* the form's NBMAX (gemv_q16_forms.cuh), 0 where no kernel takes it */
struct mma_has {
	typedef int ret;
	size_t ring;
	template <class F, int G>
	int go(void)
	{
		ring = mma_ring_bytes<F>();
		return F::NBMAX;
	}
	int none(void)
	{
		return 0;
	}
};

int q16_mma_takes(const tf_weight *w, int n, int epi, int qo)
{
	mma_has h;
	const int nbmax = visit_form(w, h);

	return s_xb && nbmax && n >= mma_min_rows(nbmax) && w->cols <= MMA_COLS &&
	       w->rows * (w->cols * w->bits / 8) < ((int64_t)1 << 32) &&
	       stage_smem((int)w->cols) <= Q16_SMEM && mma_smem_bytes((int)w->cols, w->group, 1, h.ring) <= MMA_SMEM &&
	       (!qo || w->rows / 2 <= MMA_OUT);
}

int tf_cuda_gemv_q16_mma_takes(const tf_weight *w, int epi, int qo)
{
	return tf_cuda_gemv_q16_takes(w) && q16_mma_takes(w, Q16_MMA_ROWS, epi, qo);
}

typedef void (*mma_fn)(const mma_op);
typedef void (*stage_fn)(const q16_src, int, int, uint4 *, float *, float *, float *);

struct mma_pick {
	typedef int ret;
	int nt, swi;
	mma_fn f;
	stage_fn st;
	size_t ring;
	template <class F, int G>
	int go(void)
	{
		st = q16_mma_stage<F>;
		ring = mma_ring_bytes<F>();
		if (swi)
			f = nt == 1 ? gemm_q16_mma<F, G, 1, true> : gemm_q16_mma<F, G, 2, true>;
		else
			f = nt == 1 ? gemm_q16_mma<F, G, 1, false> : gemm_q16_mma<F, G, 2, false>;
		return 1;
	}
	int none(void)
	{
		return 0;
	}
};

int q16_mma(const tf_weight *w, const q16_op &op, int epi)
{
	const int n = op.n, cols = op.cols, rows = op.rows, swi = epi == TF_Q16_SWIGLU, qo = op.yq != NULL;
	const int out = swi ? rows / 2 : rows, tp = swi ? 16 : 32, ntiles = (out + tp - 1) / tp;
	mma_pick p = { n > 8 ? 2 : 1, swi, NULL, NULL, 0 };

	if (!visit_form(w, p))
		return tf_err("no tensor-core kernel for a %s%d g%d weight", tf_fmt_name(w->fmt), w->bits, w->group);
	CUDA_CHECK(launch_k(p.st, dim3(n), dim3(Q16_WARPS * WARP), stage_smem(cols), op.src, n, cols, s_xb, s_xd, s_xs,
			    s_rs));
	const int nbuf = mma_smem_bytes(cols, w->group, 2, p.ring) <= MMA_SMEM ? 2 : 1;
	/* 4-byte copies need whole words a row and aligned arrays */
	const int words = (cols / w->group) % 2 == 0 && (uintptr_t)op.scales % 4 == 0 &&
			  (!op.biases || (uintptr_t)op.biases % 4 == 0);
	mma_op m = { op.wdata, op.scales, op.biases, rows, cols, n, s_xb, s_xd, s_xs, s_rs,
		     qo ? s_y : op.y, qo ? (int64_t)out : op.ldy, op.accumulate, nbuf, words };
	const int grid = ntiles < tf_cuda_sms() ? ntiles : tf_cuda_sms();
	CUDA_CHECK(launch_k(p.f, dim3(grid), dim3(MMA_WARPS * WARP), mma_smem_bytes(cols, w->group, nbuf, p.ring), m));
	if (qo) {
		const int warps = n * (out / 32);
		CUDA_CHECK(launch_k(q16_mma_out, dim3((warps + 7) / 8), dim3(256), 0, (const float *)s_y, n, out, op.yq,
				    op.yd, op.ys, op.ldq));
	}
	return 0;
}

/* every kernel of a form may take its shared memory */
struct mma_allow {
	typedef cudaError_t ret;
	template <class F, int G>
	cudaError_t go(void)
	{
		const void *fs[] = { (const void *)gemm_q16_mma<F, G, 1, false>, (const void *)gemm_q16_mma<F, G, 2, false>,
				     (const void *)gemm_q16_mma<F, G, 1, true>, (const void *)gemm_q16_mma<F, G, 2, true> };
		for (const void *f : fs) {
			cudaError_t e = cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)MMA_SMEM);
			if (e != cudaSuccess)
				return e;
		}
		return cudaFuncSetAttribute((const void *)q16_mma_stage<F>, cudaFuncAttributeMaxDynamicSharedMemorySize,
					    Q16_SMEM);
	}
	cudaError_t none(void)
	{
		return cudaSuccess;
	}
};

int q16_mma_setup(void)
{
	static const struct { int fmt, bits, group, cols; } forms[] = {
		{ TF_SIGN1, 1, 128, 128 }, { TF_AFFINE, 2, 32, 64 }, { TF_AFFINE, 2, 64, 64 }, { TF_AFFINE, 2, 128, 128 },
		{ TF_AFFINE, 2, 32, 32 }, { TF_AFFINE, 2, 64, 192 },
	};
	mma_allow a;

	for (const auto &f : forms) {
		tf_weight w = {};
		w.fmt = f.fmt; w.bits = f.bits; w.group = f.group; w.cols = f.cols;
		CUDA_CHECK(visit_form(&w, a));
	}
	static const int bits[] = { 3, 4, 5, 6, 8 }, groups[] = { 32, 64, 128 };
	for (int b : bits)
		for (int g : groups) {
			tf_weight w = {};
			w.fmt = TF_AFFINE; w.bits = b; w.group = g; w.cols = 128;
			CUDA_CHECK(visit_form(&w, a));
		}
	if (s_xb)
		return 0;
	const size_t nb = (size_t)Q16_MMA_ROWS * (MMA_COLS / 32);
	CUDA_CHECK(cudaMalloc(&s_xb, (size_t)Q16_MMA_ROWS * MMA_COLS * 2));
	/* rows past a pass's n are read, never used: zeros, not whatever was there */
	CUDA_CHECK(cudaMemset(s_xb, 0, (size_t)Q16_MMA_ROWS * MMA_COLS * 2));
	CUDA_CHECK(cudaMalloc(&s_xd, nb * 4));
	CUDA_CHECK(cudaMalloc(&s_xs, nb * 4));
	CUDA_CHECK(cudaMalloc(&s_rs, Q16_MMA_ROWS * 4));
	CUDA_CHECK(cudaMalloc(&s_y, (size_t)Q16_MMA_ROWS * MMA_OUT * 4));
	return 0;
}
