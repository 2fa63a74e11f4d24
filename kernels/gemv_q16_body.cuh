/*
 * gemv_q16_body.cuh: the work of one int16-input product (gemv_q16.cu, C++
 * only) for a block of Q16_WARPS warps: stage the inputs, then every tile of
 * rows the block owns.
 */
#ifndef TF_GEMV_Q16_BODY_CUH
#define TF_GEMV_Q16_BODY_CUH

#include "common.cuh"
#include "gemv_q16.cuh"
#include "gemv_q16_forms.cuh"
#include "gemv_q16_stage.cuh"

/* one product as the kernels see it (tf_cuda_gemv_q16's arguments) */
struct q16_op {
	const uint8_t *wdata;           /* (rows, cols * BITS / 8) codes */
	const uint16_t *scales;         /* (rows, cols/G) bf16 */
	const uint16_t *biases;         /* (rows, cols/G) bf16 (affine) */
	int rows, cols;
	q16_src src;                    /* n <= 16 input rows */
	int n;
	float *y;                       /* (n, rows) (SWI: (n, rows/2)): row i at y + i * ldy */
	int64_t ldy;
	int accumulate;                 /* y += p */
	/* SWI with yq: the int16 form of the outputs (common.cuh) in place of
	 * y, row i's codes at yq + i * ldq, its 32-column scales and sums at
	 * yd, ys + i * ldq / 32 */
	int16_t *yq;
	float *yd, *ys;
	int64_t ldq;
};

/* One block of 16 warps a multiprocessor, not two of 8: every block stages
 * (and norms) the whole input, so one block a multiprocessor does that work
 * once there, with twice the threads. */
#define Q16_WARPS 16            /* warps a block */
#define Q16_SMEM (200 * 1024)   /* shared memory a block may take */
static_assert(Q16_RED == Q16_WARPS, "a row's shares of its sum of squares are the block's warps'");
static_assert(Q16_ROUNDS <= Q16_WARPS, "a warp makes each int16 output block of a pass");

/* lane step ch of row p: its WORDS words */
template <class F>
static __device__ __forceinline__ void load_step(const uint8_t *p, int ch, uint32_t *w)
{
	const uint8_t *a = p + (int64_t)ch * (F::WORDS * 4);
	if (F::WORDS % 4 == 0) {
		#pragma unroll
		for (int i = 0; i < F::WORDS / 4; i++) {
			const uint4 v = ld_stream((const uint4 *)a + i);
			w[4 * i] = v.x; w[4 * i + 1] = v.y; w[4 * i + 2] = v.z; w[4 * i + 3] = v.w;
		}
	} else if (F::WORDS % 2 == 0) {
		#pragma unroll
		for (int i = 0; i < F::WORDS / 2; i++) {
			const uint2 v = __ldg((const uint2 *)a + i);
			w[2 * i] = v.x; w[2 * i + 1] = v.y;
		}
	} else {
		#pragma unroll
		for (int i = 0; i < F::WORDS; i++)
			w[i] = __ldg((const uint32_t *)a + i);
	}
}

/* N bf16 values at p (aligned to their size) into SW words, two a word */
template <int SW, int N>
static __device__ __forceinline__ void load_bf16s(const uint16_t *p, uint32_t *v)
{
	if (N == 1) {
		v[0] = __ldg(p);
	} else if (N == 2) {
		v[0] = __ldg((const uint32_t *)p);
	} else if (N == 4) {
		const uint2 a = __ldg((const uint2 *)p);
		v[0] = a.x; v[SW > 1 ? 1 : 0] = a.y;
	} else {
		const uint4 a = __ldg((const uint4 *)p);
		v[0] = a.x; v[SW > 1 ? 1 : 0] = a.y; v[SW > 2 ? 2 : 0] = a.z; v[SW > 3 ? 3 : 0] = a.w;
	}
}

/* bf16 number i of words v, as float */
static __device__ __forceinline__ float bf16_at(const uint32_t *v, int i)
{
	return __uint_as_float(i % 2 ? v[i / 2] & 0xffff0000u : v[i / 2] << 16);
}

#include "q16_float.cuh"

/* lane steps a warp has in flight: a lane holds a whole block of inputs a
 * group, so a pass of two rows or more holds half the steps */
template <class F, int NB>
static __host__ __device__ constexpr int q16_u(void)
{
	return NB > 1 && F::U > 1 ? F::U / 2 : F::U;
}

/* whether a warp holds its first lane step of weights through the staging
 * (q16_run): for one input row a pass (a decode step) of the forms whose
 * lane steps are whole 16-byte units; the others then spilled registers */
template <class F, int NB>
static __host__ __device__ constexpr bool q16_holds(void)
{
	return NB == 1 && F::WORDS % 4 == 0;
}

/* the block's k-th tile, or past the last: every gridDim.x-th from the
 * block's own; paired (SWI with int16 outputs), two at a time, tiles 2s
 * and 2s + 1 of s = blockIdx.x, + gridDim.x, ..., the 32 pairs of output
 * block s, so that one block has all 32 values of each output block it
 * makes */
static __device__ __forceinline__ int tile_of(int k, bool paired)
{
	return paired ? 2 * ((int)blockIdx.x + (k >> 1) * (int)gridDim.x) + (k & 1) : (int)blockIdx.x + k * (int)gridDim.x;
}

/* weight row r (0 .. RPW-1) of a warp's tile: consecutive rows, or with SWI
 * (SwiGLU on the output: gate rows, then as many up rows) the gate row p
 * and the up row p + rows/2 of pair p */
template <int RPW, bool SWI>
static __device__ __forceinline__ int tile_row(int tile, int warp, int r, int rows)
{
	if (SWI) {
		const int p = tile * Q16_WARPS + warp;
		return r ? p + rows / 2 : p;
	}
	const int r0 = (tile * Q16_WARPS + warp) * RPW;
	return r0 + r < rows ? r0 + r : r0;
}

/* chunks ch0 .. nchp - 1 of the rows of this warp in tile `tile` and the
 * scales (biases) of the first nchp, into L2 (only the first tile: each
 * next tile's as well measured slower) */
template <class F, int G, int RPW, bool SWI>
static __device__ __forceinline__ void prefetch_tile(const uint8_t *wdata, const uint16_t *scales,
						     const uint16_t *biases, int rows, int cols, int tile, int ch0, int nchp)
{
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	const int ngroups = cols / G;
	const int trows = SWI ? rows / 2 : rows, per = SWI ? 1 : RPW;
	const int64_t rowbytes = (int64_t)cols * F::BITS / 8;
	const int gp = (int)((int64_t)ngroups * nchp * F::CC / cols);  /* groups of those chunks */

	if ((tile * Q16_WARPS + warp) * per >= trows)
		return;
	#pragma unroll
	for (int r = 0; r < RPW; r++) {
		const int64_t row = tile_row<RPW, SWI>(tile, warp, r, rows);
		for (int ch = ch0 + lane; ch < nchp; ch += WARP)
			prefetch_l2(wdata + row * rowbytes + (int64_t)ch * (F::WORDS * 4));
		for (int g = lane * 64; g < gp; g += WARP * 64) {
			prefetch_l2(scales + row * ngroups + g);
			if (!F::SIGN)
				prefetch_l2(biases + row * ngroups + g);
		}
	}
}

/* The 32 values of output block b (SWI with yq) of the pass's NB rows are
 * in slot, once the block's tiles are done (a barrier): one warp makes
 * their int16 form, a value a lane (q16_warp): the same codes and scale
 * the staging of those rows as f32 would make (q16_quad), the sum in a
 * butterfly over the 32 lanes. */
template <int NB>
static __device__ __forceinline__ void q16_out(const q16_op &op, const float *slot, int b, int j0, int n)
{
	const int lane = threadIdx.x & 31;

	#pragma unroll
	for (int j = 0; j < NB; j++) {
		if (j0 + j >= n)
			break;
		const float x = slot[j * 32 + lane];
		const int64_t i = j0 + j;
		float sc, sm;
		op.yq[i * op.ldq + 32 * b + lane] = q16_warp(x, x, &sc, &sm);
		if (!lane) {
			op.yd[i * (op.ldq / 32) + b] = sc;
			op.ys[i * (op.ldq / 32) + b] = sm;
		}
	}
}

/* a where B, else b */
template <bool B, class T>
static __device__ __forceinline__ T &either(T &a, T &b)
{
	if constexpr (B)
		return a;
	else
		return b;
}

/* the lane's U chunks from c0 (every WARP-th) of each of its RPW rows:
 * codes into wv, scales and biases (bf16 pairs) into sv, bv; zeros past
 * the row's chunks */
template <class F, int G, int U, int RPW, int SW>
static __device__ __forceinline__ void load_lane_step(const uint8_t *__restrict__ wdata,
						      const uint16_t *__restrict__ scales,
						      const uint16_t *__restrict__ biases, int64_t rowbytes, int ngroups,
						      int nch, const int *row, int c0, uint32_t (*wv)[RPW][F::WORDS],
						      uint32_t (*sv)[RPW][SW], uint32_t (*bv)[RPW][SW])
{
	constexpr int GPC = F::CC >= G ? F::CC / G : 1; /* groups a chunk */

	#pragma unroll
	for (int u = 0; u < U; u++) {
		const int ch = c0 + WARP * u;
		#pragma unroll
		for (int r = 0; r < RPW; r++) {
			#pragma unroll
			for (int i = 0; i < F::WORDS; i++)
				wv[u][r][i] = 0;
			#pragma unroll
			for (int i = 0; i < SW; i++)
				sv[u][r][i] = bv[u][r][i] = 0;
			if (ch < nch) {
				load_step<F>(wdata + row[r] * rowbytes, ch, wv[u][r]);
				/* a chunk's GPC scales (biases) are adjacent and
				 * aligned to their size: one load each */
				const int64_t g0 = (int64_t)row[r] * ngroups + (int64_t)ch * F::CC / G;
				load_bf16s<SW, GPC>(scales + g0, sv[u][r]);
				if (!F::SIGN)
					load_bf16s<SW, GPC>(biases + g0, bv[u][r]);
			}
		}
	}
}

/* load_lane_step where the step's first nu chunks of every lane lie in
 * the rows and the others past them (q16_load): one address a row for its
 * codes, one for its scales and one for its biases, each chunk at a
 * constant offset from them, and no zeros (q16_run's sums stop at the
 * rows' end). load_lane_step's checks and zeros for each chunk, and its
 * address for each, cost some 175 instructions a lane step of two rows,
 * against some 50 here and 300 for the step's sums (cuobjdump -sass). */
template <class F, int G, int U, int RPW, int SW>
static __device__ __forceinline__ void load_lane_full(const uint8_t *__restrict__ wdata,
						      const uint16_t *__restrict__ scales,
						      const uint16_t *__restrict__ biases, int64_t rowbytes, int ngroups,
						      const int *row, int c0, int nu, uint32_t (*wv)[RPW][F::WORDS],
						      uint32_t (*sv)[RPW][SW], uint32_t (*bv)[RPW][SW])
{
	constexpr int GPC = F::CC >= G ? F::CC / G : 1; /* groups a chunk */
	constexpr int CB = F::WORDS * 4;                /* code bytes a chunk */
	constexpr int GU = WARP * F::CC / G;            /* groups between a lane's chunks u and u + 1 */
	static_assert(WARP * F::CC % G == 0, "a lane's chunks are whole groups apart");

	#pragma unroll
	for (int r = 0; r < RPW; r++) {
		const uint8_t *p = wdata + row[r] * rowbytes + (int64_t)c0 * CB;
		const int64_t g0 = (int64_t)row[r] * ngroups + (int64_t)c0 * F::CC / G;
		const uint16_t *ps = scales + g0, *pb = biases + g0;
		#pragma unroll
		for (int u = 0; u < U; u++) {
			if (u >= nu)
				break;
			load_step<F>(p + u * WARP * CB, 0, wv[u][r]);
			load_bf16s<SW, GPC>(ps + u * GU, sv[u][r]);
			if (!F::SIGN)
				load_bf16s<SW, GPC>(pb + u * GU, bv[u][r]);
		}
	}
}

/* whether the passes of form F with NB input rows take load_lane_full:
 * those of one row of the 16-byte forms (q16_holds), but sign1, whose
 * products are bound by their sums and measured slower with it */
template <class F, int NB>
static __host__ __device__ constexpr bool q16_whole_form(void)
{
	return q16_holds<F, NB>() && !F::SIGN;
}

/*
 * How a kernel's lane steps meet the end of its rows, fixed when it is
 * built (the host picks it from the row's columns, gemv_q16.cu):
 * Q16_STEPS_ANY: each step asks where the row ends (load_lane_full where
 * its chunks are whole for every lane, else load_lane_step, and the sums
 * stop at the row's end); Q16_STEPS_CHUNKS: every step is whole chunks,
 * all U of them in the row or the first few (a row of a multiple of WARP *
 * F::CC columns), so load_lane_full always; Q16_STEPS_WHOLE: every step is
 * U whole chunks a lane (a multiple of WARP * U * F::CC columns, as every
 * 4-bit row of the 9B is), so nothing asks. Why: with nothing asking, a
 * step's sums over its chunks are one stretch of code the compiler
 * schedules as a whole, and the fallback's loads are not in the kernel at
 * all. Built for one input row where q16_whole_form says so; passes of
 * several rows (windows) take Q16_STEPS_ANY, the same sums.
 */
#define Q16_STEPS_ANY 0
#define Q16_STEPS_CHUNKS 1
#define Q16_STEPS_WHOLE 2

/* a warp's lane step from chunk c0 (that of lane 0 is c0 - lane), as STEPS
 * says */
template <class F, int G, int U, int RPW, int NB, int SW, int STEPS>
static __device__ __forceinline__ void q16_load(const uint8_t *__restrict__ wdata,
						const uint16_t *__restrict__ scales, const uint16_t *__restrict__ biases,
						int64_t rowbytes, int ngroups, int nch, const int *row, int c0,
						uint32_t (*wv)[RPW][F::WORDS], uint32_t (*sv)[RPW][SW], uint32_t (*bv)[RPW][SW])
{
	const int left = nch - (c0 - (int)(threadIdx.x & 31));  /* chunks from lane 0's */

	if (q16_whole_form<F, NB>() && (STEPS != Q16_STEPS_ANY || left >= WARP * U || left % WARP == 0))
		load_lane_full<F, G, U, RPW, SW>(wdata, scales, biases, rowbytes, ngroups, row, c0,
						 STEPS == Q16_STEPS_WHOLE ? U : left / WARP, wv, sv, bv);
	else
		load_lane_step<F, G, U, RPW, SW>(wdata, scales, biases, rowbytes, ngroups, nch, row, c0, wv, sv, bv);
}

/* form F, weight groups of G, RPW rows a warp (SWI: SwiGLU pairs), NB
 * input rows a pass; QO: the SwiGLU outputs as their int16 form (op.yq);
 * STEPS: how its lane steps meet the end of its rows (q16_load) */
template <class F, int G, int RPW, int NB, bool SWI, bool QO, int STEPS>
static __device__ __forceinline__ void q16_run(const q16_op &op)
{
	const uint8_t *__restrict__ wdata = op.wdata;
	const uint16_t *__restrict__ scales = op.scales, *__restrict__ biases = op.biases;
	const int rows = op.rows, cols = op.cols, n = op.n, accumulate = op.accumulate;
	const q16_src &src = op.src;
	float *__restrict__ y = op.y;
	const int64_t ldy = op.ldy;
	constexpr int LU = F::XW / 4;                   /* 16-byte input units a lane step */
	constexpr int STEP = WARP;                      /* chunks a warp takes at once, one a lane */
	constexpr int U = q16_u<F, NB>();
	constexpr bool HOLD = q16_holds<F, NB>();
	constexpr int GPC = F::CC >= G ? F::CC / G : 1; /* groups a chunk */
	constexpr int SW = (GPC + 1) / 2;               /* 32-bit words of a chunk's bf16 scales */
	extern __shared__ uint4 sm[];
	const int units = cols / 8, nblk = cols / 32, ngroups = cols / G, nch = cols / F::CC;
	uint4 *sx = sm;                                 /* (NB, units) int16 inputs, lane order */
	int16_t *qt = (int16_t *)(sm + NB * units);     /* (NB, cols) int16 inputs, column order */
	float *sd = (float *)(qt + NB * cols);          /* (NB, nblk) input scales */
	float *ss = sd + NB * nblk;                     /* (NB, nblk) input block sums */
	float *red = ss + NB * nblk;                    /* (NB, Q16_RED) shares of sums of squares */
	float *slot = red + NB * Q16_RED;               /* (Q16_ROUNDS, NB, 32) SWI outputs for yq */
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	const int64_t rowbytes = (int64_t)cols * F::BITS / 8;
	/* a tile is Q16_WARPS warps' rows (SWIGLU: pairs) */
	const int trows = SWI ? rows / 2 : rows, per = SWI ? 1 : RPW;
	const int ntiles = (trows + Q16_WARPS * per - 1) / (Q16_WARPS * per);

	/* the codes, scales and biases of the warp's first lane step are
	 * loaded now, before the staging waits for the kernel before this
	 * one: no kernel writes weights, so they may arrive while it ends,
	 * and the sums start once the inputs are staged, not one trip to L2
	 * later (the L2 is where prefetch_tile sent them) */
	uint32_t hw[U][RPW][F::WORDS];
	uint32_t hs[U][RPW][SW], hb[U][RPW][SW];
	bool held = false;
	if (HOLD) {
		const int tile = tile_of(0, QO);
		if (tile < ntiles && (tile * Q16_WARPS + warp) * per < trows) {
			int row[RPW];
			#pragma unroll
			for (int r = 0; r < RPW; r++)
				row[r] = tile_row<RPW, SWI>(tile, warp, r, rows);
			q16_load<F, G, U, RPW, NB, SW, STEPS>(wdata, scales, biases, rowbytes, ngroups, nch, row, lane, hw,
							      hs, hb);
			held = true;
		}
	}

	for (int j0 = 0; j0 < n; j0 += NB) {
		__syncthreads();        /* the previous pass is done with the inputs */
		stage<F, NB>(src, j0, n, cols, sx, qt, sd, ss, red);
		float rs[NB];           /* each input row's factor for its outputs */
		q16_row_scales<NB>(src, cols, red, rs);

		/* (the loop of every other product as it was: the sign1
		 * kernels, short of registers, measured slower with one loop
		 * for both) */
		for (int k = 0, tile = tile_of(0, QO); tile < ntiles;
		     k++, tile = QO ? tile_of(k, true) : tile + (int)gridDim.x) {
			if ((tile * Q16_WARPS + warp) * per >= trows)
				continue;       /* whole warps: the block syncs only outside this loop */
			float acc[RPW][NB];
			int row[RPW];
			#pragma unroll
			for (int r = 0; r < RPW; r++) {
				row[r] = tile_row<RPW, SWI>(tile, warp, r, rows);
				#pragma unroll
				for (int j = 0; j < NB; j++)
					acc[r][j] = 0.0f;
			}
			/* the outputs a residual add (TF_Q16_ACC) adds to, loaded
			 * by lane 0 now, so that their trip to L2 overlaps the
			 * streaming rather than following the last sums (a
			 * product of one tile a block waited for it at its end) */
			float prev[RPW][NB];
			#pragma unroll
			for (int r = 0; r < RPW; r++) {
				const int r0 = (tile * Q16_WARPS + warp) * RPW;
				#pragma unroll
				for (int j = 0; j < NB; j++)
					prev[r][j] = !SWI && accumulate && !lane && r0 + r < rows && j0 + j < n
						     ? y[(int64_t)(j0 + j) * ldy + r0 + r] : 0.0f;
			}
			for (int c0 = lane; c0 < nch; c0 += STEP * U) {
				/* the arrays of a step live in the loop, or where it
				 * holds the first step, outside (the same registers:
				 * copying the held ones into the loop's spilled) */
				uint32_t lw[U][RPW][F::WORDS];
				uint32_t ls[U][RPW][SW], lb[U][RPW][SW];        /* bf16 pairs */
				auto &wv = either<HOLD>(hw, lw);
				auto &sv = either<HOLD>(hs, ls);
				auto &bv = either<HOLD>(hb, lb);
				/* every load of the step first, so U * RPW lane steps
				 * are in flight (the block's first step may be held) */
				if (!held)
					q16_load<F, G, U, RPW, NB, SW, STEPS>(wdata, scales, biases, rowbytes, ngroups, nch,
									      row, c0, wv, sv, bv);
				held = false;
				#pragma unroll
				for (int u = 0; u < U; u++) {
					const int ch = c0 + STEP * u;
					if (STEPS != Q16_STEPS_WHOLE && ch >= nch)
						break;
					#pragma unroll
					for (int j = 0; j < NB; j++) {
						const uint4 *xp = sx + j * units + ch * LU;
						const float *dj = sd + j * nblk + ch * F::NBLK, *sj = ss + j * nblk + ch * F::NBLK;
						/* sign1: the blocks that share a scale summed as
						 * I d first (sd_r), then once times -2 scale
						 * (q16_fsum). The affine forms keep a scale a
						 * block: summing the blocks of a group first
						 * measured slower there. */
						float sd_r[RPW];
						/* a group's inputs serve every row of the warp */
						#pragma unroll
						for (int g = 0; g < F::NG; g++) {
							uint32_t x[F::GW];
							#pragma unroll
							for (int k = 0; k < F::GW / 4; k++) {
								const uint4 v = xp[(g * F::GW / 4 + k) ^ swz<LU>(ch)];
								x[4 * k] = v.x; x[4 * k + 1] = v.y; x[4 * k + 2] = v.z; x[4 * k + 3] = v.w;
							}
							#pragma unroll
							for (int r = 0; r < RPW; r++) {
								int I[F::GB];
								F::template sums<NB>(g, wv[u][r], x, I);
								/* the blocks' integer sums, scaled; a sign1 block
								 * counts 2 (set) - (all), and -I is the set part */
								#pragma unroll
								for (int bb = 0; bb < F::GB; bb++)
									q16_fsum<F, G>(g * F::GB + bb, (float)I[bb], dj[g * F::GB + bb],
										       sv[u][r], sd_r[r], acc[r][j]);
							}
						}
						/* the bias (for sign1, the -scale) of each of the
						 * chunk's blocks */
						#pragma unroll
						for (int r = 0; r < RPW; r++) {
							#pragma unroll
							for (int b = 0; b < F::NBLK; b++)
								q16_fbias<F, G>(b, sj[b], sv[u][r], bv[u][r], acc[r][j]);
						}
					}
				}
			}
			#pragma unroll
			for (int j = 0; j < NB; j++) {
				float v[RPW];
				#pragma unroll
				for (int r = 0; r < RPW; r++)
					v[r] = warp_sum(acc[r][j]) * rs[j];
				if (QO) {
					/* the warp's output waits in shared memory for
					 * the block's other 31 of the output block
					 * (q16_out) */
					if (!lane)
						slot[((k >> 1) * NB + j) * 32 + (tile & 1) * Q16_WARPS + warp] = silu(v[0]) * v[1];
					continue;
				}
				if (lane || j0 + j >= n)
					continue;
				float *o = y + (int64_t)(j0 + j) * ldy;
				if (SWI) {
					o[row[0]] = silu(v[0]) * v[1];
					continue;
				}
				const int r0 = (tile * Q16_WARPS + warp) * RPW;
				#pragma unroll
				for (int r = 0; r < RPW; r++)
					if (r0 + r < rows)
						o[r0 + r] = accumulate ? prev[r][j] + v[r] : v[r];
			}
		}
		if (QO) {
			/* output block s of tile pair k is made once the block's
			 * tiles are done, by warp k / 2. Why not by the last warp
			 * to finish the pair, counted in shared memory: each warp
			 * then waited on the count's atomic after every tile, and
			 * the product streamed slower than with f32 outputs. */
			__syncthreads();
			const int k = 2 * warp, tile = tile_of(k, true);
			if (warp < Q16_ROUNDS && tile < ntiles)
				q16_out<NB>(op, slot + warp * NB * 32, tile >> 1, j0, n);
		}
	}
}

#endif
