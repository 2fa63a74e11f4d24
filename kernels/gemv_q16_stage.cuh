/*
 * gemv_q16_stage.cuh: the inputs of the int16-input products (gemv_q16.cu,
 * C++ only), staged in shared memory by each block: copied from a split
 * input or made from f32 rows (norms in the same launch), then laid out
 * in each form's lane order.
 */
#ifndef TF_GEMV_Q16_STAGE_CUH
#define TF_GEMV_Q16_STAGE_CUH

#include "common.cuh"
#include "gemv_q16.cuh"
#include "gemv_q16_forms.cuh"

/* where the inputs come from (gemv_q16.cuh, tf_q16_in), as the kernel sees it */
struct q16_src {
	int kind;
	const int16_t *xq;              /* TF_Q16_SPLIT, TF_Q16_HSPLIT: (n, cols) codes */
	const float *xd, *xs;           /* and (n, cols/32) scales and sums */
	const float *sq;                /* TF_Q16_HSPLIT: (n, cols/32) sums of squares (else NULL) */
	const float *x;                 /* the others: (n, cols) f32, row i at x + i * ldx */
	int64_t ldx;
	const float *w;                 /* TF_Q16_NORM: (cols) factors; TF_Q16_GNORM: (d) */
	float eps;
	const float *z;                 /* TF_Q16_GNORM: gate of row i, head h at z + i * ldz + h * d */
	int64_t ldz;
	int d;                          /* TF_Q16_GNORM, TF_Q16_HSPLIT: head size (eps: their norms') */
};

/* rint(v * inv) (|v * inv| <= 32767.5) in the low two bytes: adding
 * 1.5 * 2^23 leaves the product rounded to an integer, ties to even as
 * rint, in the low bits of the sum, for an add in place of a conversion
 * (which issues at a quarter of the rate). The product is rounded first,
 * as the host's rint(v * inv): __fmul_rn keeps the compiler from fusing it
 * into the add. */
static __device__ __forceinline__ uint32_t q16_code(float v, float inv)
{
	return __float_as_uint(__fadd_rn(__fmul_rn(v, inv), 12582912.0f));
}

/* the int16 form of 32 values held 4 a lane by 8 consecutive lanes (the
 * largest magnitude and the sum over the 8 lanes in a fixed butterfly):
 * the lane's 4 codes as two words, the block's scale and sum in d and sum */
static __device__ __forceinline__ uint2 q16_quad(float4 v, float *d, float *sum)
{
	float m = fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w)));
	float s = (v.x + v.y) + (v.z + v.w);
	for (int o = 1; o < 8; o <<= 1) {
		m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
		s += __shfl_xor_sync(0xffffffff, s, o);
	}
	const float inv = m > 0.0f ? q16_inv(m) : 0.0f;
	*d = q16_scale(m);
	*sum = s;
	return make_uint2(prmt<0x5410>(q16_code(v.x, inv), q16_code(v.y, inv)),
			  prmt<0x5410>(q16_code(v.z, inv), q16_code(v.w, inv)));
}

/* a 16-byte unit of the 4-bit form's inputs (F4L), code word k of a block:
 * columns c, c+2, c+4, c+6, c+1, c+3, c+5, c+7 (c = 8k) from a = c .. c+3
 * and b = c+4 .. c+7, two codes a word */
static __device__ __forceinline__ uint4 f4l_unit(uint2 a, uint2 b)
{
	return make_uint4(prmt<0x5410>(a.x, a.y), prmt<0x5410>(b.x, b.y), prmt<0x7632>(a.x, a.y),
			  prmt<0x7632>(b.x, b.y));
}

/* v.x^2 + v.y^2 + v.z^2 + v.w^2 with the multiply-adds written out: left
 * to the compiler, which of a * a + b * b it contracts may differ between
 * the kernels that inline this code (one for each NB), and a row's codes
 * must not depend on which kernel made them */
static __device__ __forceinline__ float sumsq4(float4 v)
{
	return fmaf(v.w, v.w, fmaf(v.z, v.z, fmaf(v.y, v.y, v.x * v.x)));
}

/* a global load (__ldcg: the addresses held across the wait below no
 * longer tell the compiler where they point, and a generic load costs a
 * lookup of the space) */
static __device__ __forceinline__ float4 ld4(const float *p)
{
	return __ldcg((const float4 *)p);
}

/* a thread's quads q0 + i * blockDim + tid (i < N) of row x, zeros past the
 * row: every load issued before any is used */
template <int N>
static __device__ __forceinline__ void load_quads(const float *x, int q0, int quads, bool in, float4 *v)
{
	#pragma unroll
	for (int i = 0; i < N; i++) {
		const int qd = q0 + i * blockDim.x + threadIdx.x;
		v[i] = in && qd < quads ? ld4(x + 4 * qd) : make_float4(0, 0, 0, 0);
	}
}

/* the same of the gates, which need no alignment (vec: they have it) */
template <int N>
static __device__ __forceinline__ void load_gates(const float *z, bool vec, int q0, int quads, bool in, float4 *v)
{
	if (vec) {
		load_quads<N>(z, q0, quads, in, v);
		return;
	}
	#pragma unroll
	for (int i = 0; i < N; i++) {
		const int qd = q0 + i * blockDim.x + threadIdx.x;
		v[i] = in && qd < quads ? make_float4(__ldcg(z + 4 * qd), __ldcg(z + 4 * qd + 1), __ldcg(z + 4 * qd + 2),
						      __ldcg(z + 4 * qd + 3))
					: make_float4(0, 0, 0, 0);
	}
}

/*
 * The int16 form of f32 rows j0 .. j0 + NB - 1 of kind K (a NORM, GNORM or
 * ROWS input): qt, sd, ss as stage() says, or (DIRECT, the 4-bit form)
 * the codes straight into sx in lane order. A thread holds QH quads
 * at once, every load issued before any is used: one trip to L2 for a row
 * of up to QH * blockDim quads (left to the compiler, the loads of each
 * next quad waited for the shuffles of the one before, a trip each). K and
 * QH are constants so that each kind holds only the arrays it uses.
 *
 * The norm factors are weights, which no kernel writes: they are loaded
 * before pdl_wait, so their trip (to memory: a token's weights stream
 * through L2) overlaps the kernel before instead of following the row's.
 *
 * RMSNorm: the int16 form is made of x * w, not of x * w / rms. The codes of
 * a block do not change with a positive factor, and its scale and sum are
 * linear in it, so the product of x * w times 1/rms is the product of the
 * normed row: the kernel applies 1/rms to each output (q16_row_scales). So
 * the codes need not wait for the row's sum of squares, a block-wide sum
 * (two barriers after every thread's loads): each warp leaves its share of
 * it in red (Q16_RED a row), and the barrier that ends the staging is the
 * only one.
 */
#define Q16_RED 16              /* a row's shares of its sum of squares: a block's warps (Q16_WARPS) */

template <int NB, int K, int QH, bool DIRECT>
static __device__ __forceinline__ void stage_rows(const q16_src &s, int j0, int n, int cols, uint4 *sx, int16_t *qt,
						  float *sd, float *ss, float *red)
{
	const int nblk = cols / 32, quads = cols / 4, round = QH * blockDim.x;
	/* the gates sit inside a wider row: 16-byte loads where aligned */
	const bool zv = !(((uintptr_t)s.z | (uintptr_t)s.ldz * 4) & 15);
	float4 v[QH], u[QH];    /* u: NORM factors (of the first round until reloaded), GNORM gates */
	float4 g = make_float4(0, 0, 0, 0);

	/* a GNORM thread's quads all sit at the same place in their heads
	 * (blockDim and each round's start are multiples of d/4): one quad of
	 * factors serves them all */
	if (K == TF_Q16_NORM)
		load_quads<QH>(s.w, 0, quads, true, u);
	if (K == TF_Q16_GNORM)
		g = ld4(s.w + 4 * threadIdx.x % s.d);
	/* the pass's first row and gates, their addresses made before the
	 * wait and held (the empty asm: the compiler, short of registers,
	 * made them again from the launch's values for each quad after it, a
	 * 64-bit product each, 70 instructions before a thread's first load) */
	const float *x0 = s.x + (int64_t)j0 * s.ldx, *z0 = s.z + (int64_t)j0 * s.ldz;
	asm volatile("" : "+l"(x0));
	if (K == TF_Q16_GNORM)
		asm volatile("" : "+l"(z0));
	pdl_wait();
	for (int j = 0; j < NB; j++) {
		const bool in = j0 + j < n;
		const float *xr = x0 + (int64_t)j * s.ldx, *zr = z0 + (int64_t)j * s.ldz;
		float share = 0.0f;     /* NORM: the thread's share of the row's sum of squares */
		for (int q0 = 0; q0 < quads; q0 += round) {
			load_quads<QH>(xr, q0, quads, in, v);
			if (K == TF_Q16_NORM && quads > round)
				load_quads<QH>(s.w, q0, quads, true, u);
			if (K == TF_Q16_GNORM)
				load_gates<QH>(zr, zv, q0, quads, in, u);
			/* whole warps in every trip (the shuffles below): quads is a
			 * multiple of 8 and of d/4, so a lane's partners are all in
			 * range or all out */
			#pragma unroll
			for (int i = 0; i < QH; i++) {
				if (q0 + i * (int)blockDim.x >= quads)
					break;
				const int qd = q0 + i * blockDim.x + threadIdx.x;
				const bool live = qd < quads;
				float4 x = v[i];
				if (K == TF_Q16_NORM) {
					share += sumsq4(x);     /* + 0 past the row */
					x = make_float4(x.x * u[i].x, x.y * u[i].y, x.z * u[i].z, x.w * u[i].w);
				} else if (K == TF_Q16_GNORM) {
					/* a head is d/4 consecutive lanes (d <= 128) */
					float a = sumsq4(x);
					for (int o = 1; o < s.d / 4; o <<= 1)
						a += __shfl_xor_sync(0xffffffff, a, o);
					/* the hardware's approximate 1/sqrt and exp (a few
					 * units in the last place, far below the int16 form's
					 * 2^-16 of a block's largest value): every block makes
					 * these values again, and the IEEE forms cost some
					 * twenty instructions each */
					const float hi = rsqrtf(a / (float)s.d + s.eps);
					x = make_float4(x.x * hi * g.x * silu_fast(u[i].x), x.y * hi * g.y * silu_fast(u[i].y),
							x.z * hi * g.z * silu_fast(u[i].z), x.w * hi * g.w * silu_fast(u[i].w));
				}
				float dq, sq;
				const uint2 q4 = q16_quad(x, &dq, &sq);
				/* DIRECT: the lane order of F4L (stage's permutation),
				 * made here: the quad of the next lane brings the
				 * unit's other half (block R's code word k, columns
				 * 8k .. 8k + 7 of it), and the even lane writes the
				 * unit, so the codes skip qt, a barrier and a pass
				 * over shared memory */
				uint2 hi4 = make_uint2(0, 0);
				if (DIRECT) {
					hi4.x = __shfl_down_sync(0xffffffff, q4.x, 1);
					hi4.y = __shfl_down_sync(0xffffffff, q4.y, 1);
				}
				if (live) {
					if (!DIRECT) {
						((uint2 *)qt)[j * quads + qd] = q4;
					} else if (!(qd & 1)) {
						const int R = qd / 8, k = qd % 8 / 2;
						sx[(int64_t)j * (cols / 8) + R * 4 + (k ^ swz<4>(R))] = f4l_unit(q4, hi4);
					}
					if ((threadIdx.x & 7) == 0) {
						sd[j * nblk + qd / 8] = dq;
						ss[j * nblk + qd / 8] = sq;
					}
				}
			}
		}
		if (K == TF_Q16_NORM) {
			share = warp_sum(share);
			if (!(threadIdx.x & 31))
				red[j * Q16_RED + (threadIdx.x >> 5)] = share;
		}
	}
}

/* the row (of NB, each of per items) that item i of a pass falls in:
 * compares, where a division by a value known only at run time is some
 * twenty instructions */
template <int NB>
static __device__ __forceinline__ int row_of(int i, int per)
{
	int j = 0;
	#pragma unroll
	for (int q = 1; q < NB; q++)
		j += i >= q * per;
	return j;
}

/*
 * Stages a split input's rows j0 .. j0 + NB - 1 (zeros past n): their
 * codes, scales and sums, every load of a trip issued before any store,
 * so that a 4-row pass of up to 4K columns, or one row of up to 16K (8K
 * for sign1), is one trip to L2. The pass's rows are consecutive in each
 * part, so item i of the pass is item i past row j0's first. DIRECT (the
 * 4-bit form): a thread makes 16-byte units of sx in lane order from
 * the two 8-byte pieces of codes they hold (f4l_unit), so the codes
 * skip qt, a barrier and the pass that permutes them; else 8-byte copies
 * into qt (the int16 plane is 8-byte aligned, common.cuh).
 */
template <class F, int NB, bool DIRECT>
static __device__ __forceinline__ void stage_split(const q16_src &s, int j0, int n, int cols, uint4 *sx, int16_t *qt,
						   float *sd, float *ss)
{
	/* items a thread a trip: 8-byte loads, two an item if DIRECT; four
	 * for the sign1 products, whose registers eight would spill */
	constexpr int CU = DIRECT || F::XW >= 64 ? 4 : 8;
	const int nblk = cols / 32, units = cols / 8, per = DIRECT ? units : cols / 4;
	const int live = (n - j0 < NB ? n - j0 : NB), total = NB * per, nsc = NB * nblk;
	const int16_t *xq = s.xq + (int64_t)j0 * cols;
	const float *xd = s.xd + (int64_t)j0 * nblk, *xs = s.xs + (int64_t)j0 * nblk;

	/* TF_Q16_HSPLIT: blocks a head; its sums of squares are read in the
	 * same trip as the scales (gemv_q16.cuh) */
	const int hb = s.sq ? s.d / 32 : 0;
	const float *xsq = s.sq ? s.sq + (int64_t)j0 * nblk : NULL;
	const float inv_d = s.sq ? 1.0f / (float)s.d : 0.0f;    /* d a power of two: exact */

	/* the thread's addresses made before the wait and held, as
	 * stage_rows does, with global loads (__ldcg) */
	const uint2 *pa = (const uint2 *)xq + (DIRECT ? 2 : 1) * threadIdx.x;
	const float *pd = xd + threadIdx.x, *ps = xs + threadIdx.x;
	asm volatile("" : "+l"(pa), "+l"(pd), "+l"(ps));
	pdl_wait();
	for (int i0 = 0; i0 < total || i0 < nsc; i0 += CU * blockDim.x) {
		uint2 a[CU], b[CU];
		float dv[CU], sv[CU], hq[CU];
		#pragma unroll
		for (int u = 0; u < CU; u++) {
			const int o = i0 + u * blockDim.x, i = o + threadIdx.x;
			const bool in = i < live * per;
			if (DIRECT) {
				/* unit i: columns 8i .. 8i + 7 */
				a[u] = in ? __ldcg(pa + 2 * o) : make_uint2(0, 0);
				b[u] = in ? __ldcg(pa + 2 * o + 1) : make_uint2(0, 0);
			} else {
				a[u] = in ? __ldcg(pa + o) : make_uint2(0, 0);
			}
			dv[u] = i < live * nblk ? __ldcg(pd + o) : 0.0f;
			sv[u] = i < live * nblk ? __ldcg(ps + o) : 0.0f;
			/* the head's blocks in order from its first (a head is
			 * whole blocks of one row: nblk is a multiple of hb, a
			 * power of two) */
			hq[u] = 0.0f;
			if (hb && i < live * nblk) {
				const float *h0 = xsq + (i & ~(hb - 1));
				#pragma unroll
				for (int k = 0; k < 4; k++)
					if (k < hb)
						hq[u] = k ? hq[u] + h0[k] : h0[k];
			}
		}
		/* only where there is a block: done for every item of the
		 * trip (8 items a thread, a division each), it measured
		 * slower on a 2-bit out_proj */
		if (hb) {
			#pragma unroll
			for (int u = 0; u < CU; u++) {
				if (i0 + u * (int)blockDim.x + (int)threadIdx.x >= live * nblk)
					break;
				const float f = rsqrtf(hq[u] * inv_d + s.eps);
				dv[u] *= f;
				sv[u] *= f;
			}
		}
		#pragma unroll
		for (int u = 0; u < CU; u++) {
			const int i = i0 + u * blockDim.x + threadIdx.x;
			if (i < total) {
				if (DIRECT) {
					const int j = row_of<NB>(i, units), R = (i - j * units) / 4;
					sx[j * units + R * 4 + ((i % 4) ^ swz<4>(R))] = f4l_unit(a[u], b[u]);
				} else {
					((uint2 *)qt)[i] = a[u];
				}
			}
			if (i < nsc) {
				sd[i] = dv[u];
				ss[i] = sv[u];
			}
		}
	}
}

/*
 * Stages input rows j0 .. j0 + NB - 1 (zeros past n) for the lane order of
 * form F: first each row's int16 codes in column order in qt, with their
 * scales sd and sums ss (copied from a split input, or made here from f32
 * rows: x w of a row for RMSNorm, the shares of its sum of squares left
 * in red for q16_row_scales; the gated RMSNorm of each head of d; or the
 * values as they are), then the codes permuted into sx (the 4-bit form:
 * straight into sx). It calls pdl_wait before it reads an input.
 *
 * The f32 rows are read 4 columns a thread (stage_rows). A row's sum of
 * squares is each warp's butterfly, those added in warp order, and a
 * head's a butterfly over its d/4 lanes, all in fixed orders, so a row's
 * codes and factor never depend on the other rows of the pass.
 */
template <class F, int NB>
static __device__ __forceinline__ void stage(const q16_src &s, int j0, int n, int cols, uint4 *sx, int16_t *qt,
					     float *sd, float *ss, float *red)
{
	constexpr int LU = F::XW / 4;
	/* quads a thread holds in one array (ROWS) or two (the norms): a
	 * 12288-column row of the 9B's MLP, a 4096- or 5120-column stream row
	 * in one trip; fewer for the widest inputs (sign1), whose products
	 * leave the fewest registers */
	constexpr int QH1 = F::XW >= 64 ? 3 : 6, QH2 = F::XW >= 64 ? 2 : 4;
	const int units = cols / 8;

	/* 4-bit (F4L, the one 4-bit form): every kind writes sx itself */
	constexpr bool direct = F::BITS == 4;

	if (s.kind == TF_Q16_SPLIT || s.kind == TF_Q16_HSPLIT)
		stage_split<F, NB, direct>(s, j0, n, cols, sx, qt, sd, ss);
	else if (s.kind == TF_Q16_NORM)
		stage_rows<NB, TF_Q16_NORM, QH2, direct>(s, j0, n, cols, sx, qt, sd, ss, red);
	else if (s.kind == TF_Q16_GNORM)
		stage_rows<NB, TF_Q16_GNORM, QH2, direct>(s, j0, n, cols, sx, qt, sd, ss, red);
	else
		stage_rows<NB, TF_Q16_ROWS, QH1, direct>(s, j0, n, cols, sx, qt, sd, ss, red);
	__syncthreads();
	if constexpr (!direct) {
		for (int i = threadIdx.x; i < NB * units; i += blockDim.x) {
			const int j = row_of<NB>(i, units), u = i - j * units, R = u / LU, k = (u % LU) ^ swz<LU>(R);
			const int16_t *xr = qt + j * cols + R * F::CC;
			uint32_t v[4] = { 0, 0, 0, 0 };
			#pragma unroll
			for (int b = 0; b < 8; b++)
				v[b / 2] |= (uint32_t)(uint16_t)xr[F::col(8 * k + b)] << (16 * (b % 2));
			sx[i] = make_uint4(v[0], v[1], v[2], v[3]);
		}
		__syncthreads();
	}
}

/* what each output of input row j0 + j is multiplied by (after stage()'s
 * barrier): 1/rms of the row for RMSNorm inputs (stage_rows), its warps'
 * shares summed in warp order, else 1 */
template <int NB>
static __device__ __forceinline__ void q16_row_scales(const q16_src &s, int cols, const float *red, float *rs)
{
	#pragma unroll
	for (int j = 0; j < NB; j++) {
		rs[j] = 1.0f;
		if (s.kind == TF_Q16_NORM) {
			float a = red[j * Q16_RED];
			#pragma unroll
			for (int w = 1; w < Q16_RED; w++)
				a += red[j * Q16_RED + w];
			rs[j] = rsqrtf(a / (float)cols + s.eps);
		}
	}
}

#define Q16_ROUNDS 16           /* SwiGLU outputs made int16: output blocks a block may take */

/* shared memory of a pass of nb rows: sx and qt (2 cols bytes each), sd and
 * ss (cols/32 floats each) and Q16_RED floats (red: shares of its sum of
 * squares) a row, then (gemv_q16_body.cuh) Q16_ROUNDS * nb * 32 floats for
 * SwiGLU outputs made int16 */
static __host__ __device__ __forceinline__ int smem_for(int nb, int cols)
{
	return nb * (4 * cols + 2 * (cols / 32) * 4 + Q16_RED * 4) + Q16_ROUNDS * nb * 32 * 4;
}

#endif
