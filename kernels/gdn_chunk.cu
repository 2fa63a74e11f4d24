/*
 * gdn_chunk.cu: the delta rule of a prompt pass, 64 tokens at a time
 * (transformers' torch_chunk_gated_delta_rule), on the tensor cores.
 *
 * Per chunk of CH = 64 tokens (rows i, j), entering state S (Dk x Dv), with
 * gam the running sum of g over the chunk and Dec[i][j] = exp(gam_i - gam_j):
 *   A  = strict_lower(diag(beta) K K^T . Dec),  T = (I + A)^-1
 *   W  = T diag(beta exp(gam)) K,  U = T diag(beta) V,  Vn = U - W S
 *   O  = diag(exp(gam)) Q S + lower(Q K^T . Dec) Vn
 *   S  = exp(gam_last) S + K^T diag(exp(gam_last - gam)) Vn
 * A chunk past the prompt's end is padded with k = q = v = 0, beta = 0,
 * g = 0, which change nothing. Columns of S never mix, so a block owns one
 * value head and DS of its Dv columns, keeps them in registers across all
 * chunks, and computes the chunk-only parts (A, T, W, the masked Q K^T)
 * again in each of the head's Dv/DS blocks rather than in a second launch
 * with W's round trip through memory. DS is 32, or 64 where Hv * Dv/32
 * blocks would need more than one wave (the 27B: 96 blocks instead of 192).
 *
 * Precision: the products run on mma.sync m16n8k16 with f32 accumulation,
 * each operand split as common.cuh splits activations (hi = bf16(x),
 * lo = bf16(x - hi)) into three mma, hi*hi + hi*lo + lo*hi (lo*lo, near
 * 2^-18 relative, is dropped). The operands carry 16 significant bits and
 * the result stays within 2e-5 of the largest value of a float64
 * recurrence (4e-5 when a chunk's keys are nearly parallel), where bf16
 * operands alone give 4e-3 to 7e-3 and tf32 ones 4e-4 to 9e-4, against 2e-6
 * for the CPU's f32 forms (t/helper/gdn-chunk-model runs the same steps in
 * C with each rounding): the rest of the GPU path agrees with the CPU at
 * f32 level through split activations, and this keeps it near there. The
 * triangular inverse, the decays and the state stay f32.
 *
 * Shared memory holds the operands as split bf16 matrices, a hi plane then
 * a lo plane, each stored as its fragment wants it, A as [m][k] and B as
 * [n][k], so that every fragment register is one aligned 32-bit load of a
 * k-pair; K is kept twice for that, [token][Dk] and [Dk][token]. Rows are
 * padded by 8 elements (16 bytes): the 8 rows of a fragment load then start
 * in 8 different groups of 4 banks, and the 32 lanes never conflict.
 *
 * t/helper/gdn-chunk-emu.sh runs this file on the CPU (threads, barriers
 * and mma emulated) for a machine without a GPU.
 */
#include "common.cuh"
#include "gdn.cuh"
#include "gdn_chunk.cuh"
#include "mma.cuh"

#define CH 64           /* tokens a chunk */
#define NW 8            /* warps a block */
#define LDC (CH + 8)    /* row of a [.][CH] split matrix, in elements */
#define LDF (CH + 1)    /* row of an f32 [CH][CH] matrix: a column walk changes bank every row */

/* bytes of a split matrix of r rows of ld elements: two bf16 planes */
static constexpr int split_bytes(int r, int ld)
{
	return r * ld * 4;
}

/* where each matrix lives, in bytes; a region is reused once what it held
 * is dead (a barrier between) */
template <int DK, int DS> struct lay {
	static constexpr int LDK = DK + 8;                       /* row of a [.][DK] split matrix */
	static constexpr int F32 = 2 * CH * LDF * 4;             /* A, then T, in f32 */
	static constexpr int K = 0;                              /* K [CH][DK], then A and T, then -W */
	static constexpr int KT = K + (split_bytes(CH, LDK) > F32 ? split_bytes(CH, LDK) : F32);  /* K [DK][CH] */
	static constexpr int Q = KT + split_bytes(DK, LDC);      /* Q [CH][DK] */
	static constexpr int V = Q + split_bytes(CH, LDK);       /* diag(beta) V as [DS][CH] */
	static constexpr int S = V + split_bytes(DS, LDC);       /* the state as [DS][DK] */
	static constexpr int P = S + split_bytes(DS, LDK);       /* lower(Q K^T . Dec) [CH][CH] */
	static constexpr int T = P + split_bytes(CH, LDC);       /* T [CH][CH], then Vn as [DS][CH] */
	static constexpr int TB = T + split_bytes(CH, LDC);      /* the inverse's scratch, then
								    T diag(beta exp(gam)), then the
								    decayed Vn as [DS][CH] */
	static constexpr int G = TB + split_bytes(CH, LDC);      /* gam, beta: CH f32 each */
	static constexpr int BYTES = G + 2 * CH * 4;
	static_assert(BYTES <= 227 * 1024, "more shared memory than an H100/H200 block has");
};

/* a split bf16 matrix in shared memory: element (r, c) at p[r * ld + c],
 * what its rounding left out at p[lo + r * ld + c] */
struct smat {
	uint16_t *p;
	int ld, lo;
};

static __device__ __forceinline__ uint32_t ld32(const uint16_t *p)
{
	return *(const uint32_t *)p;
}

/* the A fragment of rows m0.., k-slots k0.. of plane x (mma.cuh, mma_bf16) */
static __device__ __forceinline__ void frag_a(uint32_t (&a)[4], const uint16_t *x, int ld, int m0, int k0)
{
	const int lane = threadIdx.x & 31;
	const uint16_t *p = x + (m0 + (lane >> 2)) * ld + k0 + 2 * (lane & 3);

	a[0] = ld32(p);
	a[1] = ld32(p + 8 * ld);
	a[2] = ld32(p + 8);
	a[3] = ld32(p + 8 * ld + 8);
}

/* the B fragment of columns n0.. (rows of x), k-slots k0.. */
static __device__ __forceinline__ void frag_b(uint32_t (&b)[2], const uint16_t *x, int ld, int n0, int k0)
{
	const int lane = threadIdx.x & 31;
	const uint16_t *p = x + (n0 + (lane >> 2)) * ld + k0 + 2 * (lane & 3);

	b[0] = ld32(p);
	b[1] = ld32(p + 8);
}

/* acc[j] (rows m0 + 0..15, columns n0 + 8j + 0..7) += sum over k-slots
 * [k0, k1) of A[m][k] B[n][k], for the first nt of NT column tiles (nt the
 * same in the whole warp); three mma a step: lo*hi, hi*lo, hi*hi */
template <int NT>
static __device__ __forceinline__ void mma_split(float (&acc)[NT][4], smat A, int m0, smat B, int n0, int k0,
						 int k1, int nt = NT)
{
	for (int k = k0; k < k1; k += 16) {
		uint32_t ah[4], al[4];
		frag_a(ah, A.p, A.ld, m0, k);
		frag_a(al, A.p + A.lo, A.ld, m0, k);
		#pragma unroll
		for (int j = 0; j < NT; j++) {
			if (j >= nt)
				break;
			uint32_t bh[2], bl[2];
			frag_b(bh, B.p, B.ld, n0 + 8 * j, k);
			frag_b(bl, B.p + B.lo, B.ld, n0 + 8 * j, k);
			mma_bf16(acc[j], al[0], al[1], al[2], al[3], bh[0], bh[1]);
			mma_bf16(acc[j], ah[0], ah[1], ah[2], ah[3], bl[0], bl[1]);
			mma_bf16(acc[j], ah[0], ah[1], ah[2], ah[3], bh[0], bh[1]);
		}
	}
}

/* x split into element (r, c) of m */
static __device__ __forceinline__ void put1(smat m, int r, int c, float x)
{
	const uint16_t h = f2bf(x);

	m.p[r * m.ld + c] = h;
	m.p[m.lo + r * m.ld + c] = f2bf(x - bf2f(h));
}

/* x0, x1 split into elements (r, c), (r, c + 1) of m; c even */
static __device__ __forceinline__ void put2(smat m, int r, int c, float x0, float x1)
{
	const uint16_t h0 = f2bf(x0), h1 = f2bf(x1);

	*(uint32_t *)(m.p + r * m.ld + c) = h0 | (uint32_t)h1 << 16;
	*(uint32_t *)(m.p + m.lo + r * m.ld + c) = f2bf(x0 - bf2f(h0)) | (uint32_t)f2bf(x1 - bf2f(h1)) << 16;
}

template <int DK, int DS>
__global__ void __launch_bounds__(NW * WARP, 1)
gdn_chunk(const float *__restrict__ qkv, const float *__restrict__ beta, const float *__restrict__ g, int64_t ld,
	  float *__restrict__ S, int n, int Hk, int Hv, int Dv, float *__restrict__ o)
{
	typedef lay<DK, DS> L;
	extern __shared__ uint4 smem[];
	uint8_t *sb = (uint8_t *)smem;
	const smat Ks = { (uint16_t *)(sb + L::K), L::LDK, CH * L::LDK };
	const smat Ws = Ks;
	const smat Kt = { (uint16_t *)(sb + L::KT), LDC, DK * LDC };
	const smat Qs = { (uint16_t *)(sb + L::Q), L::LDK, CH * L::LDK };
	const smat Vt = { (uint16_t *)(sb + L::V), LDC, DS * LDC };
	const smat St = { (uint16_t *)(sb + L::S), L::LDK, DS * L::LDK };
	const smat Ps = { (uint16_t *)(sb + L::P), LDC, CH * LDC };
	const smat Ts = { (uint16_t *)(sb + L::T), LDC, CH * LDC };
	const smat Tb = { (uint16_t *)(sb + L::TB), LDC, CH * LDC };
	const smat Vn = { (uint16_t *)(sb + L::T), LDC, DS * LDC };
	const smat Vd = { (uint16_t *)(sb + L::TB), LDC, DS * LDC };
	float *Af = (float *)(sb + L::K), *Tf = Af + CH * LDF, *Xf = (float *)(sb + L::TB);
	float *gam = (float *)(sb + L::G), *bt = gam + CH;

	pdl_wait();
	pdl_trigger();
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, r8 = lane >> 2, c2 = 2 * (lane & 3);
	const int h = blockIdx.x / (Dv / DS), j0 = blockIdx.x % (Dv / DS) * DS;
	const int64_t kd = (int64_t)Hk * DK, C = 2 * kd + (int64_t)Hv * Dv;
	const float *qh = qkv + (int64_t)(h / (Hv / Hk)) * DK;         /* q of the key head, k at + kd */
	const float *vh = qkv + 2 * kd + (int64_t)h * Dv + j0;          /* v of this block's columns */
	float *Sh = S + (int64_t)h * DK * Dv + j0;

	// the warp's tiles: of the chunk's CH x DS results (U, Vn, O) the rows
	// m0.. and DS/16 column tiles from nv; of the state (DK x DS) the rows
	// sm0.. and SNT column tiles from sn0
	constexpr int MT = DK / 16, SNT = DS / 8 / (NW / MT);
	const int mi = warp & 3, m0 = 16 * mi, nv = (warp >> 2) * (DS / 2);
	const int sm0 = 16 * (warp % MT), sn0 = warp / MT * SNT * 8;
	float s[SNT][4];

	#pragma unroll
	for (int j = 0; j < SNT; j++)
		#pragma unroll
		for (int e = 0; e < 4; e += 2) {
			const int d = sm0 + r8 + 4 * e, c = sn0 + 8 * j + c2;   /* e = 2: row + 8 */
			const float2 x = *(const float2 *)(Sh + (int64_t)d * Dv + c);
			s[j][e] = x.x;
			s[j][e + 1] = x.y;
			put1(St, c, d, x.x);
			put1(St, c + 1, d, x.y);
		}

	for (int t0 = 0; t0 < n; t0 += CH) {
		// the chunk's k (both ways), q and beta v, split; zeros past the
		// end. All loads first, so they are in flight together.
		constexpr int QV = CH * DK / 4 / (NW * WARP), VV = CH * DS / 4 / (NW * WARP);
		float4 kq[QV], qq[QV], vv[VV];
		float bv[VV];
		#pragma unroll
		for (int x = 0; x < QV; x++) {
			const int e = threadIdx.x + x * NW * WARP, i = e / (DK / 4), d = e % (DK / 4) * 4;
			kq[x] = qq[x] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
			if (t0 + i < n) {
				const float *row = qh + (int64_t)(t0 + i) * C + d;
				qq[x] = *(const float4 *)row;
				kq[x] = *(const float4 *)(row + kd);
			}
		}
		#pragma unroll
		for (int x = 0; x < VV; x++) {
			const int e = threadIdx.x + x * NW * WARP, i = e / (DS / 4), c = e % (DS / 4) * 4;
			vv[x] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
			bv[x] = 0.0f;
			if (t0 + i < n) {
				vv[x] = *(const float4 *)(vh + (int64_t)(t0 + i) * C + c);
				bv[x] = beta[(int64_t)(t0 + i) * ld + h];
			}
		}
		if (threadIdx.x < CH) {
			const int i = threadIdx.x, in = t0 + i < n;
			gam[i] = in ? g[(int64_t)(t0 + i) * ld + h] : 0.0f;     /* summed below */
			bt[i] = in ? beta[(int64_t)(t0 + i) * ld + h] : 0.0f;
		}
		#pragma unroll
		for (int x = 0; x < QV; x++) {
			const int e = threadIdx.x + x * NW * WARP, i = e / (DK / 4), d = e % (DK / 4) * 4;
			put2(Ks, i, d, kq[x].x, kq[x].y);
			put2(Ks, i, d + 2, kq[x].z, kq[x].w);
			put2(Qs, i, d, qq[x].x, qq[x].y);
			put2(Qs, i, d + 2, qq[x].z, qq[x].w);
			put1(Kt, d, i, kq[x].x);
			put1(Kt, d + 1, i, kq[x].y);
			put1(Kt, d + 2, i, kq[x].z);
			put1(Kt, d + 3, i, kq[x].w);
		}
		#pragma unroll
		for (int x = 0; x < VV; x++) {
			const int e = threadIdx.x + x * NW * WARP, i = e / (DS / 4), c = e % (DS / 4) * 4;
			put1(Vt, c, i, bv[x] * vv[x].x);
			put1(Vt, c + 1, i, bv[x] * vv[x].y);
			put1(Vt, c + 2, i, bv[x] * vv[x].z);
			put1(Vt, c + 3, i, bv[x] * vv[x].w);
		}
		__syncthreads();

		// K K^T (warps 0-3) and Q K^T (warps 4-7) for row tile mi, only the
		// column tiles on or left of the diagonal; thread 0 meanwhile sums g
		// in token order, as the CPU does
		{
			float acc[8][4] = {};
			mma_split<8>(acc, warp < 4 ? Ks : Qs, m0, Ks, 0, 0, DK, 2 * mi + 2);
			if (threadIdx.x == 0) {
				float a = 0.0f;
				for (int i = 0; i < CH; i++)
					gam[i] = a += gam[i];
			}
			__syncthreads();        /* K [CH][DK] is read: A and T take its place */
			#pragma unroll
			for (int j = 0; j < 8; j++) {
				if (j >= 2 * mi + 2)
					break;
				#pragma unroll
				for (int e = 0; e < 4; e += 2) {
					const int i = m0 + r8 + 4 * e, c = 8 * j + c2;
					// the decays, masked before exp: above the diagonal it overflows
					const float d0 = i >= c ? expf(gam[i] - gam[c]) : 0.0f;
					const float d1 = i >= c + 1 ? expf(gam[i] - gam[c + 1]) : 0.0f;
					if (warp < 4) {
						Af[i * LDF + c] = i > c ? bt[i] * acc[j][e] * d0 : 0.0f;
						Af[i * LDF + c + 1] = i > c + 1 ? bt[i] * acc[j][e + 1] * d1 : 0.0f;
					} else {
						put2(Ps, i, c, acc[j][e] * d0, acc[j][e + 1] * d1);
					}
				}
			}
		}
		__syncthreads();

		// T = (I + A)^-1 in f32: the four 16 x 16 diagonal blocks by
		// substitution, a thread a column; then the blocks below them by
		// distance from the diagonal, T_rc = -T_rr sum_{c <= k < r} A_rk T_kc,
		// the sum through Xf first, a thread an element
		if (threadIdx.x < CH) {
			const int b0 = threadIdx.x & ~15, c = threadIdx.x & 15;
			float x[16];
			#pragma unroll
			for (int i = 0; i < 16; i++)
				x[i] = i == c ? 1.0f : 0.0f;
			#pragma unroll
			for (int k = 0; k < 15; k++)
				#pragma unroll
				for (int i = k + 1; i < 16; i++)
					x[i] -= Af[(b0 + i) * LDF + b0 + k] * x[k];
			#pragma unroll
			for (int i = 0; i < 16; i++)
				Tf[(b0 + i) * LDF + b0 + c] = x[i];
		}
		__syncthreads();
		for (int dist = 1; dist < 4; dist++) {
			const int ne = (4 - dist) * 256;
			for (int e = threadIdx.x; e < ne; e += NW * WARP) {
				const int r = 16 * (dist + e / 256), cb = r - 16 * dist, i = e / 16 % 16, c = e % 16;
				float a = 0.0f;
				for (int k = cb; k < r; k++)
					a += Af[(r + i) * LDF + k] * Tf[k * LDF + cb + c];
				Xf[e] = a;
			}
			__syncthreads();
			for (int e = threadIdx.x; e < ne; e += NW * WARP) {
				const int r = 16 * (dist + e / 256), cb = r - 16 * dist, i = e / 16 % 16, c = e % 16;
				float a = 0.0f;
				#pragma unroll
				for (int k = 0; k < 16; k++)
					a += Tf[(r + i) * LDF + r + k] * Xf[e / 256 * 256 + k * 16 + c];
				Tf[(r + i) * LDF + cb + c] = -a;
			}
			__syncthreads();
		}
		// T and T diag(beta exp(gam)), split; zeros above the diagonal (the
		// blocks there hold whatever K left)
		for (int e = threadIdx.x; e < CH * CH / 2; e += NW * WARP) {
			const int i = e / (CH / 2), c = e % (CH / 2) * 2;
			const float x0 = c <= i ? Tf[i * LDF + c] : 0.0f, x1 = c + 1 <= i ? Tf[i * LDF + c + 1] : 0.0f;
			put2(Ts, i, c, x0, x1);
			put2(Tb, i, c, x0 * (bt[c] * expf(gam[c])), x1 * (bt[c + 1] * expf(gam[c + 1])));
		}
		__syncthreads();

		// W = T diag(beta exp(gam)) K (half of its columns a warp) and
		// U = T diag(beta) V for the warp's tiles; T is lower triangular, so
		// the k-slots end with the row tile. -W goes where K was: U - W S
		// is then one more product into U's registers.
		float v[DS / 16][4] = {};
		{
			const int nw = (warp >> 2) * (DK / 2);
			float w[DK / 16][4] = {};
			mma_split<DK / 16>(w, Tb, m0, Kt, nw, 0, m0 + 16);
			mma_split<DS / 16>(v, Ts, m0, Vt, nv, 0, m0 + 16);
			#pragma unroll
			for (int j = 0; j < DK / 16; j++)
				#pragma unroll
				for (int e = 0; e < 4; e += 2)
					put2(Ws, m0 + r8 + 4 * e, nw + 8 * j + c2, -w[j][e], -w[j][e + 1]);
		}
		__syncthreads();

		// Vn = U - W S and Q S; Vn and exp(gam_last - gam) Vn go where T and
		// T diag(...) were, as [DS][CH], the B of the last two products
		const float gl = gam[CH - 1];
		float qs[DS / 16][4] = {};
		mma_split<DS / 16>(v, Ws, m0, St, nv, 0, DK);
		mma_split<DS / 16>(qs, Qs, m0, St, nv, 0, DK);
		#pragma unroll
		for (int j = 0; j < DS / 16; j++)
			#pragma unroll
			for (int e = 0; e < 4; e += 2) {
				const int i = m0 + r8 + 4 * e, c = nv + 8 * j + c2;
				const float dl = expf(gl - gam[i]);
				put1(Vn, c, i, v[j][e]);
				put1(Vn, c + 1, i, v[j][e + 1]);
				put1(Vd, c, i, dl * v[j][e]);
				put1(Vd, c + 1, i, dl * v[j][e + 1]);
			}
		__syncthreads();

		// O = diag(exp(gam)) Q S + P Vn, the rows inside the prompt
		{
			const float e0 = expf(gam[m0 + r8]), e1 = expf(gam[m0 + r8 + 8]);
			#pragma unroll
			for (int j = 0; j < DS / 16; j++) {
				qs[j][0] *= e0;
				qs[j][1] *= e0;
				qs[j][2] *= e1;
				qs[j][3] *= e1;
			}
			mma_split<DS / 16>(qs, Ps, m0, Vn, nv, 0, m0 + 16);
			#pragma unroll
			for (int j = 0; j < DS / 16; j++)
				#pragma unroll
				for (int e = 0; e < 4; e += 2) {
					const int i = m0 + r8 + 4 * e;
					if (t0 + i < n)
						*(float2 *)(o + ((int64_t)(t0 + i) * Hv + h) * Dv + j0 + nv + 8 * j + c2) =
							make_float2(qs[j][e], qs[j][e + 1]);
				}
		}
		// S = exp(gam_last) S + K^T diag(exp(gam_last - gam)) Vn, and its
		// split copy for the next chunk's products (no one reads it now)
		{
			const float el = expf(gl);
			#pragma unroll
			for (int j = 0; j < SNT; j++)
				#pragma unroll
				for (int e = 0; e < 4; e++)
					s[j][e] *= el;
			mma_split<SNT>(s, Kt, sm0, Vd, sn0, 0, CH);
			#pragma unroll
			for (int j = 0; j < SNT; j++)
				#pragma unroll
				for (int e = 0; e < 4; e += 2) {
					const int d = sm0 + r8 + 4 * e, c = sn0 + 8 * j + c2;
					put1(St, c, d, s[j][e]);
					put1(St, c + 1, d, s[j][e + 1]);
				}
		}
		__syncthreads();        /* before the next chunk's rows replace K, P, Vn, gam */
	}
	#pragma unroll
	for (int j = 0; j < SNT; j++)
		#pragma unroll
		for (int e = 0; e < 4; e += 2) {
			const int d = sm0 + r8 + 4 * e, c = sn0 + 8 * j + c2;
			*(float2 *)(Sh + (int64_t)d * Dv + c) = make_float2(s[j][e], s[j][e + 1]);
		}
}

template <int DK, int DS>
static int launch(const float *qkv, const float *beta, const float *g, int64_t ld, float *S, int n, int Hk, int Hv,
		  int Dv, float *o)
{
	CUDA_CHECK(launch_k(gdn_chunk<DK, DS>, dim3((unsigned)(Hv * (Dv / DS))), dim3(NW * WARP), lay<DK, DS>::BYTES,
			    qkv, beta, g, ld, S, n, Hk, Hv, Dv, o));
	LAUNCH_CHECK();
	return 0;
}

int tf_cuda_gdn_chunk(const float *qkv, const float *beta, const float *g, int64_t ld, float *S, int n, int Hk,
		      int Hv, int Dk, int Dv, float *o)
{
	if (n <= 0)
		return 0;
	if (Dv % 32 || Hv % Hk || (Dk != 32 && Dk != 64 && Dk != 128) || (uintptr_t)qkv % 16)
		return tf_cuda_gdn_step(qkv, beta, g, ld, S, n, Hk, Hv, Dk, Dv, o);
	if (Dk == 128 && Dv % 64 == 0 && (int64_t)Hv * (Dv / 32) > tf_cuda_sms())
		return launch<128, 64>(qkv, beta, g, ld, S, n, Hk, Hv, Dv, o);
	switch (Dk) {
	case 32: return launch<32, 32>(qkv, beta, g, ld, S, n, Hk, Hv, Dv, o);
	case 64: return launch<64, 32>(qkv, beta, g, ld, S, n, Hk, Hv, Dv, o);
	default: return launch<128, 32>(qkv, beta, g, ld, S, n, Hk, Hv, Dv, o);
	}
}

/* more than 48 KB of shared memory a block: allowed once, at start-up */
template <int DK, int DS>
static cudaError_t allow(void)
{
	return cudaFuncSetAttribute(gdn_chunk<DK, DS>, cudaFuncAttributeMaxDynamicSharedMemorySize, lay<DK, DS>::BYTES);
}

int tf_cuda_gdn_chunk_setup(void)
{
	CUDA_CHECK((allow<32, 32>()));
	CUDA_CHECK((allow<64, 32>()));
	CUDA_CHECK((allow<128, 32>()));
	CUDA_CHECK((allow<128, 64>()));
	return 0;
}
