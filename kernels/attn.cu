/*
 * attn.cu: flash-decoding style attention. Blocks of 16 warps per (token,
 * head), one for a context of up to 256 cache rows and TF_ATTN_SPLIT past
 * that (attn_decode says how they share it); in a block, warp w takes cache
 * rows w, w+16, ... with an online softmax (running
 * max m, running sum l, running weighted values in registers, D/32 a lane),
 * so any context length runs in fixed memory; the partial states are
 * merged in warp order. A warp's rows are a chain of dependent trips (the
 * dot product's sum, then the softmax update), so a step's attention time
 * grows with the rows a warp takes: 16 warps rather than 4 cut it for the
 * contexts of a decode. Keys and values are read once per (token, head) as
 * whole 128-byte lines (lane-strided floats of a row). That suits decode
 * windows; a prompt pass of hundreds of rows goes to attn_prompt.cu, which
 * reads each cache tile once for a block of 64 rows, on the tensor cores.
 */
#include "common.cuh"
#include "attn.cuh"
#include "attn_prompt.cuh"
#include "base/env.h"

#define AW 16           /* warps a block */
#define CHUNK 256       /* cache rows a split block takes at once */
#define DMAX 512        /* head_dim the registers hold */
static_assert(DMAX <= AW * WARP, "a thread makes at most one output column of a head");
/* passes of up to this many rows (decode steps and windows) stay here: their
 * rows must be bit-identical whatever the window; longer ones (prompts) go to
 * the tensor-core kernel of attn_prompt.cu where it takes the shape */
#define WINDOW_ROWS 16

/* the attention state's update by one cache row: its score dot (scaled),
 * its values vr */
template <int P>
static __device__ __forceinline__ void online(float dot, const float *vr, int per, float &m, float &l, float *acc)
{
	const float mn = fmaxf(m, dot), corr = expf(m - mn), p = expf(dot - mn);

	l = l * corr + p;
	#pragma unroll
	for (int i = 0; i < P; i++)
		if (i < per)
			acc[i] = acc[i] * corr + p * vr[i];
	m = mn;
}

/*
 * P: D/32 rounded up to a power of two, the floats a lane holds of a row;
 * R: rows a warp takes at once.
 *
 * Split: with S = TF_ATTN_SPLIT blocks a (token, head), block b takes the
 * chunks of CHUNK cache rows b, b + S, b + 2S, ... and leaves its merged
 * state in part; the last block to arrive merges the S states in block
 * order. A context of one chunk is block 0's alone, written directly. The
 * chunks, and so every sum, depend on the position only, never on the
 * window. Why: one block a (token, head) keeps as few multiprocessors busy
 * as there are heads (16 on the 9B), far too few to stream a deep cache.
 */
/* EXACT: D is exactly P floats a lane (a power of two from 64 to 512), so
 * every test of a lane's index against it folds away. */
template <int P, int R, bool EXACT>
__global__ void __launch_bounds__(AW * WARP)
attn_decode(const float *__restrict__ qg, int64_t qstride, const float *kc0, const float *vc0,
	    const int64_t *__restrict__ pos, const tf_kv_rows rows, int Hq, int Hkv, int Dr, uint16_t *__restrict__ out,
	    float *part, unsigned *count, int S)
{
	const int D = EXACT ? P * WARP : Dr;
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	const int th = blockIdx.x / S, b = blockIdx.x % S;       /* (token, head), its block */
	const int t = th / Hq, h = th % Hq, kvh = h / (Hq / Hkv);
	/* the position is on the device before the pass's first kernel
	 * (attn.cuh), and the cache rows before it are earlier passes': while
	 * the kernel before runs, the rows of this warp's first two trips go
	 * from memory (a token's weights stream through L2) to L2 (every row
	 * of a block's first chunk measured slower at depth 4096) */
	/* row t of one sequence's window (the rows before it its cache's
	 * rows up to p0 + t), or of its own (rows.cuh): the same context of
	 * len rows either way, so the same sums */
	const int64_t p0 = rows.k ? rows.pos[t] : *pos, len = rows.k ? p0 + 1 : p0 + t + 1;
	const float *__restrict__ kc = rows.k ? rows.k[t] : kc0;
	const float *__restrict__ vc = rows.k ? rows.v[t] : vc0;
	const bool alone = S == 1 || len <= CHUNK;
	if (alone && b)
		return;
	if (lane < D / WARP)
		for (int64_t s = (int64_t)b * CHUNK + warp, e = s + 2 * R * AW; s < p0 && s < e; s += AW) {
			prefetch_l2(kc + (s * Hkv + kvh) * D + lane * WARP);
			prefetch_l2(vc + (s * Hkv + kvh) * D + lane * WARP);
		}
	pdl_wait();
	pdl_trigger();
	const float *q = qg + t * qstride + (int64_t)h * 2 * D, *gate = q + D;
	const float scale = 1.0f / sqrtf((float)D);
	const int64_t plane = (int64_t)gridDim.x / S * D;       /* n * Hq * D */
	const int per = EXACT ? P : D / WARP;   /* D is a multiple of 32 */
	float qr[P], acc[P], m = -INFINITY, l = 0;
	__shared__ float sm[AW], sl[AW], fw[AW], sacc[AW][DMAX];

	#pragma unroll
	for (int i = 0; i < P; i++) {
		qr[i] = i < per ? q[i * WARP + lane] : 0.0f;
		acc[i] = 0.0f;
	}
	/* the gate of the output column this thread makes (D <= DMAX, one a
	 * thread), loaded with the query: read where it is used, after the
	 * merge's barriers, its trip to L2 ended the kernel */
	const float gt = threadIdx.x < D ? gate[threadIdx.x] : 0.0f;
	/* rows s, s + AW, ... s + (R-1) AW at once: their loads and sums are
	 * in flight together, then the state takes them in order, as it would
	 * one by one (so R changes no result); one row at a time, a warp's
	 * rows were a chain of trips to L2, at less than half the speed at
	 * depth 4096. */
	for (int64_t c0 = alone ? 0 : (int64_t)b * CHUNK; c0 < len; c0 += alone ? len : (int64_t)S * CHUNK)
	for (int64_t s = c0 + warp, end = alone || c0 + CHUNK > len ? len : c0 + CHUNK; s < end; s += R * AW) {
		float kr[R][P], vr[R][P], d[R];
		#pragma unroll
		for (int r = 0; r < R; r++) {
			const int64_t row = s + r * AW < end ? s + r * AW : s;
			const float *k = kc + (row * Hkv + kvh) * D, *v = vc + (row * Hkv + kvh) * D;
			#pragma unroll
			for (int i = 0; i < P; i++)
				if (i < per) {
					kr[r][i] = k[i * WARP + lane];
					vr[r][i] = v[i * WARP + lane];
				}
		}
		#pragma unroll
		for (int r = 0; r < R; r++) {
			d[r] = 0;
			#pragma unroll
			for (int i = 0; i < P; i++)
				if (i < per)
					d[r] += qr[i] * kr[r][i];
		}
		#pragma unroll
		for (int r = 0; r < R; r++)
			d[r] = warp_sum(d[r]) * scale;
		#pragma unroll
		for (int r = 0; r < R; r++)
			if (s + r * AW < end)
				online<P>(d[r], vr[r], per, m, l, acc);
	}
	if (lane == 0) {
		sm[warp] = m;
		sl[warp] = l;
	}
	#pragma unroll
	for (int i = 0; i < P; i++)
		if (i < per)
			sacc[warp][i * WARP + lane] = acc[i];
	__syncthreads();

	/* merge the warps' softmax states in warp order, each warp's factor
	 * exp(m - M) made once, not by every thread for L and again for each
	 * of its columns (the same values) */
	float M = sm[0];
	for (int w = 1; w < AW; w++)
		M = fmaxf(M, sm[w]);
	if (threadIdx.x < AW)
		fw[threadIdx.x] = expf(sm[threadIdx.x] - M);
	__syncthreads();
	float L = 0;
	for (int w = 0; w < AW; w++)
		if (sl[w] > 0)
			L += sl[w] * fw[w];
	const int64_t o = ((int64_t)t * Hq + h) * D;
	float *mine = part + ((int64_t)th * S + b) * (D + 2);
	for (int d = threadIdx.x; d < D; d += AW * WARP) {
		float a = 0;
		for (int w = 0; w < AW; w++)
			if (sl[w] > 0)
				a += sacc[w][d] * fw[w];
		if (alone)
			put_split(out, plane, D, o + d, a / L * sigmoid(gt));
		else
			mine[2 + d] = a;
	}
	if (alone)
		return;

	/* the last block of the (token, head) to arrive merges */
	__shared__ bool last;
	if (threadIdx.x == 0) {
		mine[0] = M;
		mine[1] = L;
	}
	__syncthreads();        /* the block's part written: thread 0's release covers it */
	if (threadIdx.x == 0) {
		last = atomic_add_release(count + th, 1u) == (unsigned)S - 1;
		if (last)
			count[th] = 0;  /* every block has arrived: ready for the next launch */
	}
	__syncthreads();
	if (!last)
		return;
	fence_acquire();
	const float *all = part + (int64_t)th * S * (D + 2);
	M = -INFINITY;
	for (int k = 0; k < S; k++)
		if (__ldcg(all + k * (D + 2) + 1) > 0)
			M = fmaxf(M, __ldcg(all + k * (D + 2)));
	L = 0;
	for (int k = 0; k < S; k++) {
		const float lk = __ldcg(all + k * (D + 2) + 1);
		if (lk > 0)
			L += lk * expf(__ldcg(all + k * (D + 2)) - M);
	}
	for (int d = threadIdx.x; d < D; d += AW * WARP) {
		float a = 0;
		for (int k = 0; k < S; k++)
			if (__ldcg(all + k * (D + 2) + 1) > 0)
				a += __ldcg(all + k * (D + 2) + 2 + d) * expf(__ldcg(all + k * (D + 2)) - M);
		put_split(out, plane, D, o + d, a / L * sigmoid(gt));
	}
}

/* attn_decode for P floats a lane (per of them used), R rows at once */
template <int P, int R>
static int launch_p(unsigned grid, int per, const float *qg, int64_t qstride, const float *kc, const float *vc,
		    const int64_t *pos, const tf_kv_rows &rows, int Hq, int Hkv, int D, uint16_t *out, float *part,
		    unsigned *count, int S)
{
	if (per == P)
		LAUNCH((attn_decode<P, R, true>), grid, AW * WARP, qg, qstride, kc, vc, pos, rows, Hq, Hkv, D, out, part,
		       count, S);
	else
		LAUNCH((attn_decode<P, R, false>), grid, AW * WARP, qg, qstride, kc, vc, pos, rows, Hq, Hkv, D, out, part,
		       count, S);
	LAUNCH_CHECK();
	return 0;
}

/* TF_ATTN_PROMPT=0: prompt passes here too (for comparing) */
static int prompt_kernel(void)
{
	return !tf_env_off("TF_ATTN_PROMPT");
}

int tf_cuda_attn_scratch_init(tf_attn_scratch *sc, int heads, int dim)
{
	const int64_t th = (int64_t)WINDOW_ROWS * heads;

	sc->heads = heads;
	sc->dim = dim;
	sc->part = (float *)tf_cuda_alloc(sizeof(float) * th * TF_ATTN_SPLIT * (dim + 2), "the attention scratch");
	sc->count = (unsigned *)tf_cuda_alloc(sizeof(unsigned) * th, "the attention scratch");
	if (!sc->part || !sc->count || tf_cuda_zero(sc->count, sizeof(unsigned) * th) < 0) {
		tf_cuda_attn_scratch_free(sc);
		return -1;
	}
	return 0;
}

void tf_cuda_attn_scratch_free(tf_attn_scratch *sc)
{
	tf_cuda_free(sc->part);
	tf_cuda_free(sc->count);
	sc->part = NULL;
	sc->count = NULL;
}

static int decode(const float *qg, int64_t qstride, const float *kc, const float *vc, const int64_t *pos,
		  const tf_kv_rows &rows, int n, int Hq, int Hkv, int D, uint16_t *out, const tf_attn_scratch *sc)
{
	/* four rows at once while a lane holds 8 floats of a row or fewer; the
	 * registers of 512 threads take two of the widest */
	const int per = D / WARP;
	const int S = n <= WINDOW_ROWS && sc && sc->part && Hq <= sc->heads && D <= sc->dim ? TF_ATTN_SPLIT : 1;
	float *part = S > 1 ? sc->part : NULL;
	unsigned *count = S > 1 ? sc->count : NULL;
	const unsigned grid = (unsigned)(n * Hq * S);
	if (per <= 2)
		return launch_p<2, 4>(grid, per, qg, qstride, kc, vc, pos, rows, Hq, Hkv, D, out, part, count, S);
	if (per <= 4)
		return launch_p<4, 4>(grid, per, qg, qstride, kc, vc, pos, rows, Hq, Hkv, D, out, part, count, S);
	if (per <= 8)
		return launch_p<8, 4>(grid, per, qg, qstride, kc, vc, pos, rows, Hq, Hkv, D, out, part, count, S);
	return launch_p<DMAX / WARP, 2>(grid, per, qg, qstride, kc, vc, pos, rows, Hq, Hkv, D, out, part, count, S);
}

static int shape_ok(int Hq, int Hkv, int D)
{
	if (D % WARP || D > DMAX || Hq % Hkv)
		return tf_err("attention with head_dim %d and %d/%d heads is not supported on the GPU", D, Hq, Hkv);
	return 0;
}

int tf_cuda_attention(const float *qg, int64_t qstride, const float *kc, const float *vc, const int64_t *pos,
		      int n, int Hq, int Hkv, int D, uint16_t *out, const tf_attn_scratch *sc)
{
	if (n <= 0)
		return 0;
	if (shape_ok(Hq, Hkv, D) < 0)
		return -1;
	if (n > WINDOW_ROWS && tf_cuda_attn_prompt_takes(D, Hq, Hkv) && prompt_kernel())
		return tf_cuda_attn_prompt(qg, qstride, kc, vc, pos, n, Hq, Hkv, D, out);
	return decode(qg, qstride, kc, vc, pos, tf_kv_rows{}, n, Hq, Hkv, D, out, sc);
}

int tf_cuda_attention_rows(const float *qg, int64_t qstride, const tf_kv_rows *rows, int n, int Hq, int Hkv, int D,
			   uint16_t *out, const tf_attn_scratch *sc)
{
	if (n <= 0)
		return 0;
	if (n > WINDOW_ROWS)
		return tf_err("attention over the caches of %d rows at once (at most %d)", n, WINDOW_ROWS);
	if (shape_ok(Hq, Hkv, D) < 0)
		return -1;
	return decode(qg, qstride, NULL, NULL, NULL, *rows, n, Hq, Hkv, D, out, sc);
}

__global__ void kv_append(const float *__restrict__ k, const float *__restrict__ v, int64_t ld, int64_t total,
			  int64_t row, const int64_t *__restrict__ pos, float *__restrict__ kc, float *__restrict__ vc)
{
	pdl_wait();
	pdl_trigger();
	const int64_t base = *pos * row;
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
		const int64_t src = i / row * ld + i % row;
		kc[base + i] = k[src];
		vc[base + i] = v[src];
	}
}

int tf_cuda_kv_append(const float *k, const float *v, int64_t ld, int n, int64_t row, const int64_t *pos,
		      float *kc, float *vc)
{
	int64_t total = n * row;

	if (total <= 0)
		return 0;
	LAUNCH(kv_append, (unsigned)((total + 255) / 256 < 1024 ? (total + 255) / 256 : 1024), 256,
	       k, v, ld, total, row, pos, kc, vc);
	LAUNCH_CHECK();
	return 0;
}
