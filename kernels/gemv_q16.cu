/*
 * gemv_q16.cu: decode products of quantized weights on the CUDA cores, the
 * inputs as int16 (gemv_q16.cuh gives the sum).
 *
 * Why integer inputs: at batch 1 a product reads each code once, and the
 * H200 delivers 4-bit codes at about 8.4e12/s against about 3.3e13 thread
 * instructions/s. An fp32 multiply-add per code plus its unpacking spends
 * three instructions a code, so the kernel runs out of issue slots before
 * memory is busy. dp2a multiplies two code bytes by two 16-bit inputs and
 * adds them in one instruction; codes become bytes with one mask (4-bit),
 * a shift and a mask (2-bit) or one prmt that turns four sign bits into
 * four 0x00/0xff bytes (sign1), so a code costs about half an instruction.
 *
 * Why int16 and not int8 (dp4a, four bytes by four bytes, as llama.cpp's
 * q8_1 products): the integer sums are exact, so the only rounding is the
 * inputs' own, 2^-9 of a block's largest value for int8, 2^-16 for int16.
 * Through the recurrent state int8 inputs moved the Shakespeare bundles'
 * decode steps by a mean KL of 0.9e-3 to 1.8e-3 from the CPU's (top-1
 * 96.3% to 97.5%); int16 inputs put them within 3e-8 and at 100%
 * (t9100). A second int8 plane for the residual costs the same dp4a
 * count and a second accumulator.
 *
 * Layout and mapping. Rows are read as MLX packs them, in lane steps: the
 * bits of one or more 32-column blocks a lane, consecutive lanes on
 * consecutive blocks. 4-bit rows, 2-bit rows of whole 64-column chunks and
 * sign1 (a group of 128 columns) take 16 bytes a lane, so a warp's loads
 * are 512 contiguous bytes; the other widths one block a lane (B words). A
 * block's sum is one lane's, scaled once. One warp owns RPW rows whole. The
 * inputs are staged once per block in shared memory, each lane step's
 * inputs laid out in the order its code bytes meet them, so a lane fetches
 * a group of them with one or a few 16-byte loads; 16-byte units are
 * swizzled (swz) so the eight lanes of a quarter warp hit distinct banks.
 *
 * Order. A lane takes its chunks in order, its blocks in order; the warp
 * adds its lanes with a fixed butterfly. Neither NB (input rows a pass),
 * RPW nor the grid changes the order of any (row, input) sum.
 */

#include "common.cuh"
#include "base/env.h"
#include "gemv_q16.cuh"
#include "gemv_q16_body.cuh"
#include "gemm_q16_mma.cuh"

template <class F, int G, int RPW, int NB, bool SWI, bool QO = false, int STEPS = Q16_STEPS_ANY>
__global__ void __launch_bounds__(Q16_WARPS * WARP, 1) gemv_q16(const __grid_constant__ q16_op op)
{
	pdl_trigger();
	/* the weights need no earlier kernel: start the first 64 KiB of codes
	 * of the block's first tile (the first chunks of each of its rows, one
	 * at least, and their scales) on their way to L2 while the kernel
	 * before this one finishes and the inputs are staged. The copies also
	 * take bandwidth from the kernel still running, which measured a loss
	 * where wider tiles went whole. */
	constexpr int ROWBYTES = 64 * 1024 / (Q16_WARPS * RPW), CB = F::CC * F::BITS / 8;
	const int nch = op.cols / F::CC;
	const int nchp = ROWBYTES / CB < 1 ? 1 : ROWBYTES / CB < nch ? ROWBYTES / CB : nch;
	/* (past the first lane step where q16_run loads that itself) */
	const int ch0 = q16_holds<F, NB>() ? WARP * q16_u<F, NB>() : 0;
	prefetch_tile<F, G, RPW, SWI>(op.wdata, op.scales, op.biases, op.rows, op.cols, tile_of(0, QO), ch0, nchp);
	/* pdl_wait is in the staging, after the loads of the norm factors */
	q16_run<F, G, RPW, NB, SWI, QO, STEPS>(op);
}

/* v.template go<F, G>() for every form and group visit_form reaches, up to
 * the first that fails */
template <class F, class V>
static cudaError_t each_g(V &v)
{
	cudaError_t e = v.template go<F, 32>();
	if (e == cudaSuccess)
		e = v.template go<F, 64>();
	return e == cudaSuccess ? v.template go<F, 128>() : e;
}

template <class V>
static cudaError_t each_form(V &v)
{
	cudaError_t e = v.template go<F1L, 128>();
	if (e == cudaSuccess) e = each_g<F2L>(v);
	if (e == cudaSuccess) e = each_g<FAP<2>>(v);
	if (e == cudaSuccess) e = each_g<FAP<3>>(v);
	if (e == cudaSuccess) e = each_g<F4L>(v);
	if (e == cudaSuccess) e = each_g<FAP<5>>(v);
	if (e == cudaSuccess) e = each_g<FAP<6>>(v);
	if (e == cudaSuccess) e = each_g<FAP<8>>(v);
	return e;
}

/* rows a warp takes: two once there are a warp's worth of rows for every
 * warp of the device (and always for SwiGLU pairs). A 4096-row product is
 * then one tile a block on 128 blocks rather than two tiles a block on
 * 132, which measured faster. */
static int q16_rpw(int rows, int swi)
{
	return swi || rows >= tf_cuda_sms() * Q16_WARPS ? 2 : 1;
}

/* tiles of Q16_WARPS warps' rows in a product */
static int q16_tiles(int rows, int swi, int rpw)
{
	const int per = swi ? 1 : rpw, trows = swi ? rows / 2 : rows;
	return (trows + Q16_WARPS * per - 1) / (Q16_WARPS * per);
}

/* whether the product kernels take w with inputs in; says why not */
static int q16_check(const tf_weight *w, const tf_q16_in *in, int epi)
{
	const int64_t c = w->cols;

	if (!tf_cuda_gemv_q16_takes(w))
		return tf_err("no int16-input kernel for a %s%d g%d weight of %lld x %lld", tf_fmt_name(w->fmt),
			      w->bits, w->group, (long long)w->rows, (long long)c);
	if (in->kind != TF_Q16_SPLIT && in->kind != TF_Q16_HSPLIT &&
	    (((uintptr_t)in->x | (uintptr_t)in->w) & 15 || in->ldx % 4))
		return tf_err("int16-input product: f32 rows and factors must be 16-byte aligned");
	if (in->kind == TF_Q16_HSPLIT && (!in->sq || !tf_cuda_gemv_q16_hsplit_takes(in->d, c)))
		return tf_err("int16-input product: a split input normed by heads of %d over %lld columns needs heads of "
			      "32, 64 or 128 columns that divide them, and their sums of squares", in->d,
			      (long long)c);
	if (in->kind == TF_Q16_GNORM && !tf_cuda_gemv_q16_gnorm_takes(in->d, c))
		return tf_err("gated norm heads of %d over %lld columns: not a power of two of 4 to 128 that divides them",
			      in->d, (long long)c);
	if (epi == TF_Q16_SWIGLU && w->rows % 2)
		return tf_err("SwiGLU product of %lld rows (not gate and up halves)", (long long)w->rows);
	return 0;
}

/* the kernels' view of input rows i, i + 1, ... of a call on n rows of c
 * columns */
static q16_src q16_src_of(const tf_q16_in *in, int n, int i, int64_t c)
{
	q16_src s = { in->kind };

	if (in->kind == TF_Q16_SPLIT || in->kind == TF_Q16_HSPLIT) {
		const split_parts p = split_parts_of(in->split, n * c);
		s.xs = p.sums + i * (c / 32);
		s.xd = p.scales + i * (c / 32);
		s.xq = p.codes + i * c;
		s.sq = in->kind == TF_Q16_HSPLIT ? in->sq + i * (c / 32) : NULL;
		s.d = in->d;
		s.eps = in->eps;
	} else {
		s.x = in->x + i * in->ldx;
		s.ldx = in->ldx;
		s.w = in->w;
		s.eps = in->eps;
		s.z = in->z ? in->z + i * in->ldz : NULL;
		s.ldz = in->ldz;
		s.d = in->d;
	}
	return s;
}

static q16_op q16_op_of(const tf_weight *w, const q16_src &s, int n, float *y, int64_t ldy, int epi)
{
	return q16_op{ (const uint8_t *)w->data, (const uint16_t *)w->scales, (const uint16_t *)w->biases,
		       (int)w->rows, (int)w->cols, s, n, y, ldy, epi == TF_Q16_ACC, NULL, NULL, NULL, 0 };
}

typedef void (*q16_fn)(const q16_op);

/* NB input rows a pass, at most the form's NBMAX */
template <class F, int NB>
struct nbc {
	static constexpr int v = NB < F::NBMAX ? NB : F::NBMAX;
};

/* the kernel for a form (visit_form): RPW rows a warp or SwiGLU pairs, NB
 * input rows a pass (at most the form's NBMAX, given in nbmax) */
struct picker {
	typedef q16_fn ret;
	int rpw, swi, nb, nbmax, qo;
	int64_t cols;

	/* the lane steps of a one-row pass of form F (q16_load) */
	template <class F>
	int steps(void)
	{
		if (!q16_whole_form<F, 1>() || cols % (WARP * F::CC))
			return Q16_STEPS_ANY;
		return cols % (WARP * F::U * F::CC) ? Q16_STEPS_CHUNKS : Q16_STEPS_WHOLE;
	}
	template <class F, int G, int RPW, bool SWI, bool QO = false>
	q16_fn nb_of(void)
	{
		constexpr bool W = q16_whole_form<F, 1>();
		const int st = nb < 2 ? steps<F>() : Q16_STEPS_ANY;
		if (st == Q16_STEPS_WHOLE)
			return gemv_q16<F, G, RPW, 1, SWI, QO, W ? Q16_STEPS_WHOLE : Q16_STEPS_ANY>;
		if (st == Q16_STEPS_CHUNKS)
			return gemv_q16<F, G, RPW, 1, SWI, QO, W ? Q16_STEPS_CHUNKS : Q16_STEPS_ANY>;
		return nb >= 4 ? gemv_q16<F, G, RPW, nbc<F, 4>::v, SWI, QO> : nb >= 2 ? gemv_q16<F, G, RPW, nbc<F, 2>::v, SWI, QO>
			: gemv_q16<F, G, RPW, 1, SWI, QO>;
	}
	template <class F, int G>
	q16_fn go(void)
	{
		nbmax = F::NBMAX;
		if (swi)
			return qo ? nb_of<F, G, 2, true, true>() : nb_of<F, G, 2, true>();
		return rpw == 2 ? nb_of<F, G, 2, false>() : nb_of<F, G, 1, false>();
	}
	q16_fn none(void)
	{
		return NULL;
	}
};

/* the kernel for w's form, NULL where none; its NBMAX in *nbmax (qo:
 * the SwiGLU outputs as their int16 form) */
static q16_fn pick(const tf_weight *w, int rpw, int swi, int nb, int *nbmax, int qo = 0)
{
	picker p = { rpw, swi, nb, 0, qo, w->cols };
	q16_fn f = visit_form(w, p);

	*nbmax = p.nbmax;
	return f;
}

static int disabled(void)
{
	static int off = -1;    /* TF_GEMV_Q16=0: the fp32-input kernels instead (for comparing) */

	return tf_env_off_once("TF_GEMV_Q16", &off);
}

int tf_cuda_gemv_q16_gnorm_takes(int d, int64_t cols)
{
	return d >= 4 && d <= 128 && !(d & (d - 1)) && cols % d == 0;
}

int tf_cuda_gemv_q16_hsplit_takes(int d, int64_t cols)
{
	return (d == 32 || d == 64 || d == 128) && cols % d == 0;
}

int tf_cuda_gemv_q16_takes(const tf_weight *w)
{
	const int fmt = w->fmt;
	int nbmax;

	return !disabled() && (fmt == TF_AFFINE || fmt == TF_SIGN1) && w->group >= 32 && w->sdtype == TF_BF16 &&
	       w->cols % 32 == 0 && w->cols % w->group == 0 && w->rows <= INT32_MAX / 2 &&
	       !((uintptr_t)w->data & 15) && !((uintptr_t)w->scales & 15) && !((uintptr_t)w->biases & 15) &&
	       smem_for(1, (int)w->cols) <= Q16_SMEM && pick(w, 1, 0, 1, &nbmax) != NULL;
}

/* what a launch hands out: tiles, or pairs of tiles (SwiGLU with int16
 * outputs, tile_of) */
static int q16_units(int rows, int swi, int paired)
{
	const int tiles = q16_tiles(rows, swi, q16_rpw(rows, swi));

	return paired ? (tiles + 1) / 2 : tiles;
}

/* blocks of a launch: one a unit, at most one a multiprocessor */
static int q16_grid(int rows, int swi, int paired)
{
	const int units = q16_units(rows, swi, paired);

	return units < tf_cuda_sms() ? units : tf_cuda_sms();
}

/* tiles the busiest block takes */
static int q16_rounds(int rows, int swi, int paired)
{
	const int units = q16_units(rows, swi, paired), grid = q16_grid(rows, swi, paired);

	return (units + grid - 1) / grid * (paired ? 2 : 1);
}

/* one launch for n <= 16 rows (op: its output, q16_op_of's fields) */
static int launch(const tf_weight *w, int n, int epi, const q16_op &op)
{
	const int rows = (int)w->rows, cols = (int)w->cols, swi = epi == TF_Q16_SWIGLU;
	int nb = n >= 4 ? 4 : n >= 2 ? 2 : 1, nbmax;

	if (n >= 2 && q16_mma_takes(w, n, epi, op.yq != NULL))
		return q16_mma(w, op, epi);
	pick(w, 2, swi, nb, &nbmax);
	if (nb > nbmax)
		nb = nbmax;
	while (nb > 1 && smem_for(nb, cols) > Q16_SMEM)
		nb /= 2;
	const int qo = op.yq != NULL;
	CUDA_CHECK(launch_k(pick(w, q16_rpw(rows, swi), swi, nb, &nbmax, qo), dim3(q16_grid(rows, swi, qo)),
			    dim3(Q16_WARPS * WARP), (size_t)smem_for(nb, cols), op));
	return 0;
}

/* one(i, m) for the launches of rows i .. i + m - 1, 16 at a time, up to
 * the first that fails */
template <class L>
static int by16(int n, L one)
{
	for (int i = 0; i < n; i += 16)
		if (one(i, n - i < 16 ? n - i : 16) < 0)
			return -1;
	return 0;
}

int tf_cuda_gemv_q16(const tf_weight *w, const tf_q16_in *in, int n, float *y, int64_t ldy, int epi)
{
	if (q16_check(w, in, epi) < 0)
		return -1;
	return by16(n, [&](int i, int m) {
		return launch(w, m, epi, q16_op_of(w, q16_src_of(in, n, i, w->cols), m, y + i * ldy, ldy, epi));
	});
}

int tf_cuda_gemv_q16_swiglu16_takes(const tf_weight *w)
{
	const int64_t out = w->rows / 2;

	return tf_cuda_gemv_q16_takes(w) && w->rows % 2 == 0 && out % 32 == 0 &&
	       out / 32 <= (int64_t)Q16_ROUNDS * q16_grid((int)w->rows, 1, 1);
}

int tf_cuda_gemv_q16_swiglu16_pays(const tf_weight *w)
{
	/* pairs of tiles must not leave the busiest block more tiles: the
	 * 27B's 1088 tiles are 9 rounds of 132 blocks, its 544 pairs 10
	 * tiles' worth, which measured slower */
	return tf_cuda_gemv_q16_swiglu16_takes(w) && q16_rounds((int)w->rows, 1, 1) <= q16_rounds((int)w->rows, 1, 0);
}

int tf_cuda_gemv_q16_swiglu16(const tf_weight *w, const tf_q16_in *in, int n, uint16_t *split)
{
	const int64_t out = w->rows / 2;

	if (q16_check(w, in, TF_Q16_SWIGLU) < 0)
		return -1;
	if (!tf_cuda_gemv_q16_swiglu16_takes(w))
		return tf_err("SwiGLU product of %lld rows: no int16 outputs (half the rows not whole 32-column blocks, "
			      "or more than %d of those a block)", (long long)w->rows, Q16_ROUNDS);
	const split_parts p = split_parts_of(split, n * out);
	return by16(n, [&](int i, int m) {
		q16_op op = q16_op_of(w, q16_src_of(in, n, i, w->cols), m, NULL, 0, TF_Q16_SWIGLU);
		op.yq = p.codes + i * out;
		op.yd = p.scales + i * (out / 32);
		op.ys = p.sums + i * (out / 32);
		op.ldq = out;
		return launch(w, m, TF_Q16_SWIGLU, op);
	});
}

/* every kernel of a form may take Q16_SMEM of shared memory */
struct allower {
	template <class F, int G, int RPW, bool SWI, bool QO = false>
	cudaError_t one(void)
	{
		constexpr bool W = q16_whole_form<F, 1>();
		const void *fs[] = { (const void *)gemv_q16<F, G, RPW, 1, SWI, QO>,
				     (const void *)gemv_q16<F, G, RPW, 1, SWI, QO, W ? Q16_STEPS_CHUNKS : Q16_STEPS_ANY>,
				     (const void *)gemv_q16<F, G, RPW, 1, SWI, QO, W ? Q16_STEPS_WHOLE : Q16_STEPS_ANY>,
				     (const void *)gemv_q16<F, G, RPW, nbc<F, 2>::v, SWI, QO>,
				     (const void *)gemv_q16<F, G, RPW, nbc<F, 4>::v, SWI, QO> };
		for (const void *f : fs) {
			cudaError_t e = cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, Q16_SMEM);
			if (e != cudaSuccess)
				return e;
		}
		return cudaSuccess;
	}
	template <class F, int G>
	cudaError_t go(void)
	{
		cudaError_t e = one<F, G, 1, false>();
		if (e == cudaSuccess)
			e = one<F, G, 2, false>();
		if (e == cudaSuccess)
			e = one<F, G, 2, true>();
		return e == cudaSuccess ? one<F, G, 2, true, true>() : e;
	}
};

int tf_cuda_gemv_q16_setup(void)
{
	allower a;

	CUDA_CHECK(each_form(a));
	return q16_mma_setup();
}
