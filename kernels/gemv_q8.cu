/*
 * gemv_q8.cu: decode products of quantized weights on the CUDA cores, the
 * inputs as int8 (gemv_q8.cuh gives the sum).
 *
 * Why int8 inputs: at batch 1 a product reads each code once, and the H200
 * delivers 4-bit codes at about 8.4e12/s against about 3.3e13 thread
 * instructions/s. An fp32 multiply-add per code plus its unpacking spends
 * three instructions a code, so the kernel runs out of issue slots before
 * memory is busy. dp4a multiplies four code bytes by four input bytes and
 * adds them in one instruction; codes become bytes with one mask (4-bit),
 * a shift and a mask (2-bit) or one prmt that turns four sign bits into
 * four 0x00/0xff bytes (sign1), so a code costs well under one instruction.
 * The integer sums are exact; the only rounding the int8 form adds is the
 * inputs' own (about 2^-9 of a block's largest value), the same as
 * llama.cpp's q8_1 products, and the GPU is held to the CPU by KL.
 *
 * Layout and mapping. A row is read in lane steps: 16 bytes of a tiled row
 * (common.cuh) for lane t of a chunk (four lanes a chunk, so a warp's loads
 * are 512 contiguous bytes), or the bits of one 32-column block of an
 * untiled row (one lane a block). One warp owns RPW rows whole. The inputs
 * are staged once per block in shared memory, each lane step's input bytes
 * laid out in the order that lane's dp4a operands need them, so a lane
 * fetches its operands with a few 16-byte loads; 16-byte units are swizzled
 * (swz) so the eight lanes of a quarter warp hit distinct banks.
 *
 * Order. A lane takes its chunks in order, its blocks in order; the warp
 * adds its lanes with a fixed butterfly. Neither NB (input rows a pass),
 * RPW nor the grid changes the order of any (row, input) sum.
 */
#include <stdlib.h>

#include "common.cuh"
#include "gemv_q8.cuh"
#include "gemv_q8_forms.cuh"
#include "gemv_q8_stage.cuh"

/* One block of 16 warps a multiprocessor, not two of 8: every block stages
 * (and norms) the whole input, so one block a multiprocessor does that work
 * once there, with twice the threads. Measured on the 9B 4-bit step: 456.7
 * against 405.6 tokens/s, the products alone 74.6% of the roofline against
 * 69.1%. */
#define Q8_WARPS 16             /* warps a block */
#define Q8_SMEM (200 * 1024)    /* shared memory a block may take */

static __device__ __forceinline__ void prefetch_l2(const void *p)
{
	asm volatile("prefetch.global.L2 [%0];" :: "l"(p));
}

/* lane step ch of row p: the WORDS words of lane t */
template <class F>
static __device__ __forceinline__ void load_step(const uint8_t *p, int ch, int t, uint32_t *w)
{
	const uint8_t *a = p + ((int64_t)ch * F::LANES + t) * (F::WORDS * 4);
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

/* weight row r (0 .. RPW-1) of a warp's tile: consecutive rows, or with SWI
 * (SwiGLU on the output: gate rows, then as many up rows) the gate row p
 * and the up row p + rows/2 of pair p */
template <int RPW, bool SWI>
static __device__ __forceinline__ int tile_row(int tile, int warp, int r, int rows)
{
	if (SWI) {
		const int p = tile * Q8_WARPS + warp;
		return r ? p + rows / 2 : p;
	}
	const int r0 = (tile * Q8_WARPS + warp) * RPW;
	return r0 + r < rows ? r0 + r : r0;
}

/* the rows of this warp in tile `tile` and their scales (biases), into L2
 * (only the first tile: prefetching each next tile as well measured slower,
 * 2.50 against 2.72 TB/s on the 9B 4-bit products) */
template <class F, int G, int RPW, bool SWI>
static __device__ __forceinline__ void prefetch_tile(const uint8_t *wdata, const uint16_t *scales,
						     const uint16_t *biases, int rows, int cols, int tile)
{
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	const int t = lane % F::LANES, cl = lane / F::LANES, nch = cols / F::CC, ngroups = cols / G;
	const int trows = SWI ? rows / 2 : rows, per = SWI ? 1 : RPW;
	const int64_t rowbytes = (int64_t)cols * F::BITS / 8;

	if ((tile * Q8_WARPS + warp) * per >= trows)
		return;
	#pragma unroll
	for (int r = 0; r < RPW; r++) {
		const int64_t row = tile_row<RPW, SWI>(tile, warp, r, rows);
		for (int ch = cl; ch < nch; ch += WARP / F::LANES)
			prefetch_l2(wdata + row * rowbytes + ((int64_t)ch * F::LANES + t) * (F::WORDS * 4));
		for (int g = lane * 64; g < ngroups; g += WARP * 64) {
			prefetch_l2(scales + row * ngroups + g);
			if (!F::SIGN)
				prefetch_l2(biases + row * ngroups + g);
		}
	}
}

template <class F, int G, int RPW, int NB, bool SWI>
__global__ void __launch_bounds__(Q8_WARPS * WARP, 1)
gemv_q8(const uint8_t *__restrict__ wdata,     /* (rows, cols * BITS / 8) codes */
	const uint16_t *__restrict__ scales,    /* (rows, cols/G) bf16 */
	const uint16_t *__restrict__ biases,    /* (rows, cols/G) bf16 (affine) */
	int rows, int cols, q8_src src, int n,
	float *__restrict__ y,                  /* (n, rows) (SWI: (n, rows/2)): row i at y + i * ldy */
	int64_t ldy, int accumulate)
{
	constexpr int LU = F::XW / 4;                   /* 16-byte input units a lane step */
	constexpr int STEP = WARP / F::LANES;           /* chunks a warp takes at once */
	/* the wide-input forms hold half the steps when a pass has two rows */
	constexpr int U = NB > 1 && F::XW >= 16 && F::U > 1 ? F::U / 2 : F::U;
	constexpr int GPC = F::CC >= G ? F::CC / G : 1; /* groups a chunk */
	constexpr int SW = (GPC + 1) / 2;               /* 32-bit words of a chunk's bf16 scales */
	extern __shared__ uint4 sm[];
	const int units = cols / 16, nblk = cols / 32, ngroups = cols / G, nch = cols / F::CC;
	uint4 *sx = sm;                                 /* (NB, units) input bytes, lane order */
	uint8_t *qt = (uint8_t *)(sm + NB * units);     /* (NB, cols) input bytes, column order */
	float *sd = (float *)(qt + NB * cols);          /* (NB, nblk) input scales */
	float *ss = sd + NB * nblk;                     /* (NB, nblk) input block sums */
	float *red = ss + NB * nblk;                    /* (32) block sums */
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	const int t = lane % F::LANES, cl = lane / F::LANES;
	const int64_t rowbytes = (int64_t)cols * F::BITS / 8;
	/* a tile is Q8_WARPS warps' rows (SWIGLU: pairs) */
	const int trows = SWI ? rows / 2 : rows, per = SWI ? 1 : RPW;
	const int ntiles = (trows + Q8_WARPS * per - 1) / (Q8_WARPS * per);

	pdl_trigger();
	/* the weights need no earlier kernel: start the first tile's rows (and
	 * their scales) on their way to L2 while the kernel before this one
	 * finishes and the inputs are staged */
	prefetch_tile<F, G, RPW, SWI>(wdata, scales, biases, rows, cols, blockIdx.x);
	pdl_wait();
	for (int j0 = 0; j0 < n; j0 += NB) {
		__syncthreads();        /* the previous pass is done with the inputs */
		stage<F, NB>(src, j0, n, cols, sx, qt, sd, ss, red);

		for (int tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
			if ((tile * Q8_WARPS + warp) * per >= trows)
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
			for (int c0 = cl; c0 < nch; c0 += STEP * U) {
				uint32_t wv[U][RPW][F::WORDS];
				uint32_t sv[U][RPW][SW], bv[U][RPW][SW];        /* bf16 pairs */
				/* every load of the step first, so U * RPW lane steps are in flight */
				#pragma unroll
				for (int u = 0; u < U; u++) {
					const int ch = c0 + STEP * u;
					#pragma unroll
					for (int r = 0; r < RPW; r++) {
						#pragma unroll
						for (int i = 0; i < F::WORDS; i++)
							wv[u][r][i] = 0;
						#pragma unroll
						for (int i = 0; i < SW; i++)
							sv[u][r][i] = bv[u][r][i] = 0;
						if (ch < nch) {
							load_step<F>(wdata + row[r] * rowbytes, ch, t, wv[u][r]);
							/* a chunk's GPC scales (biases) are adjacent and
							 * aligned to their size: one load each */
							const int64_t g0 = (int64_t)row[r] * ngroups + (int64_t)ch * F::CC / G;
							load_bf16s<SW, GPC>(scales + g0, sv[u][r]);
							if (!F::SIGN)
								load_bf16s<SW, GPC>(biases + g0, bv[u][r]);
						}
					}
				}
				#pragma unroll
				for (int u = 0; u < U; u++) {
					const int ch = c0 + STEP * u;
					if (ch >= nch)
						break;
					const int R = ch * F::LANES + t;
					#pragma unroll
					for (int j = 0; j < NB; j++) {
						uint32_t x[F::XW];
						const uint4 *xp = sx + j * units + R * LU;
						#pragma unroll
						for (int k = 0; k < LU; k++) {
							const uint4 v = xp[k ^ swz<LU>(R)];
							x[4 * k] = v.x; x[4 * k + 1] = v.y; x[4 * k + 2] = v.z; x[4 * k + 3] = v.w;
						}
						const float *dj = sd + j * nblk + ch * F::NBLK, *sj = ss + j * nblk + ch * F::NBLK;
						#pragma unroll
						for (int r = 0; r < RPW; r++) {
							int I[F::NBLK];
							F::sums(wv[u][r], x, I);
							/* the blocks' integer sums, scaled; a sign1 block
							 * counts 2 (set) - (all), and -I is the set part */
							#pragma unroll
							for (int b = 0; b < F::NBLK; b++) {
								const float s = bf16_at(sv[u][r], b * 32 / G < GPC ? b * 32 / G : 0);
								acc[r][j] = fmaf(F::SIGN ? -2.0f * s : s, (float)I[b] * dj[b], acc[r][j]);
							}
							/* each lane of a chunk takes the bias (for sign1,
							 * the -scale) of its share of the blocks */
							#pragma unroll
							for (int q = 0; q < F::NBLK / F::LANES; q++) {
								const int b = t + F::LANES * q, gq = b * 32 / G < GPC ? b * 32 / G : 0;
								const float o = F::SIGN ? -bf16_at(sv[u][r], gq) : bf16_at(bv[u][r], gq);
								acc[r][j] = fmaf(o, sj[b], acc[r][j]);
							}
						}
					}
				}
			}
			#pragma unroll
			for (int j = 0; j < NB; j++) {
				float v[RPW];
				#pragma unroll
				for (int r = 0; r < RPW; r++)
					v[r] = warp_sum(acc[r][j]);
				if (lane || j0 + j >= n)
					continue;
				float *o = y + (int64_t)(j0 + j) * ldy;
				if (SWI) {
					o[row[0]] = silu(v[0]) * v[1];
					continue;
				}
				const int r0 = (tile * Q8_WARPS + warp) * RPW;
				#pragma unroll
				for (int r = 0; r < RPW; r++)
					if (r0 + r < rows)
						o[r0 + r] = accumulate ? o[r0 + r] + v[r] : v[r];
			}
		}
	}
}

typedef void (*q8_fn)(const uint8_t *, const uint16_t *, const uint16_t *, int, int, q8_src, int, float *, int64_t,
		      int);

/* NB input rows a pass, at most the form's NBMAX */
template <class F, int NB>
struct nbc {
	static constexpr int v = NB < F::NBMAX ? NB : F::NBMAX;
};

template <class F, int G, int RPW, bool SWI>
static q8_fn pick_nb(int nb)
{
	return nb >= 4 ? gemv_q8<F, G, RPW, nbc<F, 4>::v, SWI> : nb >= 2 ? gemv_q8<F, G, RPW, nbc<F, 2>::v, SWI>
		: gemv_q8<F, G, RPW, 1, SWI>;
}

template <class F, int G>
static q8_fn pick_rpw(int rpw, int swi, int nb)
{
	return swi ? pick_nb<F, G, 2, true>(nb) : rpw == 2 ? pick_nb<F, G, 2, false>(nb) : pick_nb<F, G, 1, false>(nb);
}

template <class F>
static q8_fn pick_g(int g, int rpw, int swi, int nb)
{
	return g == 32 ? pick_rpw<F, 32>(rpw, swi, nb) : g == 64 ? pick_rpw<F, 64>(rpw, swi, nb)
		: pick_rpw<F, 128>(rpw, swi, nb);
}

/* the kernel for w's form, NULL where none; its NBMAX in *nbmax */
static q8_fn pick(const tf_weight *w, int rpw, int swi, int nb, int *nbmax)
{
	const int tiled = !!(w->fmt & TF_TILED), fmt = w->fmt & ~TF_TILED;

#define FORM(F) (*nbmax = F::NBMAX, pick_g<F>(w->group, rpw, swi, nb))
#define FORM128(F) (*nbmax = F::NBMAX, pick_rpw<F, 128>(rpw, swi, nb))
	if (fmt == TF_SIGN1)
		return w->group != 128 ? NULL : tiled ? FORM128(F1T) : FORM128(F1P);
	if (fmt != TF_AFFINE || (w->group != 32 && w->group != 64 && w->group != 128))
		return NULL;
	if (tiled)
		return w->bits == 4 ? FORM(F4T) : w->bits == 2 ? FORM(F2T) : NULL;
	switch (w->bits) {
	case 2: return FORM(FAP<2>);
	case 3: return FORM(FAP<3>);
	case 4: return FORM(FAP<4>);
	case 5: return FORM(FAP<5>);
	case 6: return FORM(FAP<6>);
	case 8: return FORM(FAP<8>);
	}
#undef FORM
#undef FORM128
	return NULL;
}

static int disabled(void)
{
	static int off = -1;    /* TF_GEMV_Q8=0: the fp32-input kernels instead (for comparing) */
	if (off < 0) {
		const char *e = getenv("TF_GEMV_Q8");
		off = e && *e == '0';
	}
	return off;
}

int tf_cuda_gemv_q8_gnorm_takes(int d, int64_t cols)
{
	return d >= 4 && d <= 128 && !(d & (d - 1)) && cols % d == 0;
}

int tf_cuda_gemv_q8_takes(const tf_weight *w)
{
	const int fmt = w->fmt & ~TF_TILED;
	int nbmax;

	return !disabled() && (fmt == TF_AFFINE || fmt == TF_SIGN1) && w->group >= 32 && w->sdtype == TF_BF16 &&
	       w->cols % 32 == 0 && w->cols % w->group == 0 && w->rows <= INT32_MAX / 2 &&
	       !((uintptr_t)w->data & 15) && !((uintptr_t)w->scales & 15) && !((uintptr_t)w->biases & 15) &&
	       smem_for(1, (int)w->cols) <= Q8_SMEM && pick(w, 1, 0, 1, &nbmax) != NULL;
}

/* one launch for n <= 16 rows */
static int launch(const tf_weight *w, const q8_src &src, int n, float *y, int64_t ldy, int epi)
{
	const int rows = (int)w->rows, cols = (int)w->cols, swi = epi == TF_Q8_SWIGLU;
	int nb = n >= 4 ? 4 : n >= 2 ? 2 : 1, nbmax;

	if (swi && rows % 2)
		return tf_err("SwiGLU product of %d rows (not gate and up halves)", rows);
	pick(w, 2, swi, nb, &nbmax);
	if (nb > nbmax)
		nb = nbmax;
	while (nb > 1 && smem_for(nb, cols) > Q8_SMEM)
		nb /= 2;
	/* two rows a warp once there are a warp's worth of rows for every warp
	 * of the device: a 4096-row product is then one tile a block on 128
	 * blocks rather than two tiles a block on 132, which measured faster
	 * (464.9 against 448.0 tokens/s on the 9B 4-bit step) */
	const int rpw = swi || rows >= tf_cuda_sms() * Q8_WARPS ? 2 : 1, per = swi ? 1 : rpw;
	const int trows = swi ? rows / 2 : rows, tiles = (trows + Q8_WARPS * per - 1) / (Q8_WARPS * per);
	const int grid = tiles < tf_cuda_sms() ? tiles : tf_cuda_sms();
	CUDA_CHECK(launch_k(pick(w, rpw, swi, nb, &nbmax), dim3(grid), dim3(Q8_WARPS * WARP),
			    (size_t)smem_for(nb, cols), (const uint8_t *)w->data, (const uint16_t *)w->scales,
			    (const uint16_t *)w->biases, rows, cols, src, n, y, ldy, epi == TF_Q8_ACC));
	return 0;
}

int tf_cuda_gemv_q8(const tf_weight *w, const tf_q8_in *in, int n, float *y, int64_t ldy, int epi)
{
	const int64_t c = w->cols;

	if (!tf_cuda_gemv_q8_takes(w))
		return tf_err("no int8-input kernel for a %s%d g%d weight of %lld x %lld", tf_fmt_name(w->fmt & ~TF_TILED),
			      w->bits, w->group, (long long)w->rows, (long long)c);
	if (in->kind != TF_Q8_SPLIT && (((uintptr_t)in->x | (uintptr_t)in->w) & 15 || in->ldx % 4))
		return tf_err("int8-input product: f32 rows and factors must be 16-byte aligned");
	if (in->kind == TF_Q8_GNORM && !tf_cuda_gemv_q8_gnorm_takes(in->d, c))
		return tf_err("gated norm heads of %d over %lld columns: not a power of two of 4 to 128 that divides them",
			      in->d, (long long)c);
	for (int i = 0; i < n; i += 16) {
		const int m = n - i < 16 ? n - i : 16;
		q8_src s = { in->kind };
		if (in->kind == TF_Q8_SPLIT) {
			/* the parts after the planes (common.cuh), for all n rows */
			const float *xs = (const float *)(in->split + 2 * n * c), *xd = xs + n * c / 32;
			s.xs = xs + i * (c / 32);
			s.xd = xd + i * (c / 32);
			s.xq = (const int8_t *)(xd + n * c / 32) + i * c;
		} else {
			s.x = in->x + i * in->ldx;
			s.ldx = in->ldx;
			s.w = in->w;
			s.eps = in->eps;
			s.z = in->z ? in->z + i * in->ldz : NULL;
			s.ldz = in->ldz;
			s.d = in->d;
		}
		if (launch(w, s, m, y + i * ldy, ldy, epi) < 0)
			return -1;
	}
	return 0;
}

template <class F, int G, int RPW, bool SWI>
static cudaError_t allow(void)
{
	const void *fs[] = { (const void *)gemv_q8<F, G, RPW, 1, SWI>, (const void *)gemv_q8<F, G, RPW, nbc<F, 2>::v, SWI>,
			     (const void *)gemv_q8<F, G, RPW, nbc<F, 4>::v, SWI> };
	for (const void *f : fs) {
		cudaError_t e = cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, Q8_SMEM);
		if (e != cudaSuccess)
			return e;
	}
	return cudaSuccess;
}

template <class F, int G>
static cudaError_t allow_rpw(void)
{
	cudaError_t e = allow<F, G, 1, false>();
	if (e == cudaSuccess)
		e = allow<F, G, 2, false>();
	if (e == cudaSuccess)
		e = allow<F, G, 2, true>();
	return e;
}

template <class F>
static cudaError_t allow_g(void)
{
	cudaError_t e = allow_rpw<F, 32>();
	if (e == cudaSuccess)
		e = allow_rpw<F, 64>();
	if (e == cudaSuccess)
		e = allow_rpw<F, 128>();
	return e;
}

int tf_cuda_gemv_q8_setup(void)
{
	CUDA_CHECK((allow_rpw<F1T, 128>()));
	CUDA_CHECK((allow_rpw<F1P, 128>()));
	CUDA_CHECK(allow_g<F4T>());
	CUDA_CHECK(allow_g<F2T>());
	CUDA_CHECK(allow_g<FAP<2>>());
	CUDA_CHECK(allow_g<FAP<3>>());
	CUDA_CHECK(allow_g<FAP<4>>());
	CUDA_CHECK(allow_g<FAP<5>>());
	CUDA_CHECK(allow_g<FAP<6>>());
	CUDA_CHECK(allow_g<FAP<8>>());
	return 0;
}
