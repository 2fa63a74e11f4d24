/*
 * attn_prompt.cu: causal gated attention for prompt passes on the tensor
 * cores, flash-attention style (FlashAttention-2's loop order: a block
 * holds its query rows in registers and walks the cache in tiles with an
 * online softmax, so the scores never leave the chip).
 *
 * attn_decode reads the cache once per (token, head), n^2 traffic for a
 * prompt of n tokens, and multiplies on the CUDA cores. Here a block takes
 * PR "packed" query rows of one KV head, row r = G t + j for token t and
 * query head j of the G = Hq/Hkv heads that share that KV head (GQA), so
 * each tile of keys and values it stages serves every head of the group.
 * A block reads the cache only up to its last token: tiles past the
 * diagonal are never loaded, and only tiles past its first token are masked.
 *
 * Precision. Queries and cache are f32; bf16 operands alone would put
 * errors near 2^-9 |q| |k| in the scores and 2^-9 p |v| in the output,
 * far above the f32 path's. So every operand is split hi + lo (mma.cuh
 * split2, as common.cuh's split activations) and each product is three
 * mma, hi hi + hi lo + lo hi (lo lo, under 2^-16 of the product, left out):
 * about 16 significant bits a term, summed in f32 by the tensor cores, for
 * the scores q k and for the probabilities times the values p v alike. The
 * running max m and sum l of the softmax are f32 registers.
 *
 * Tiling. Four row groups of 16 rows, a warp each for D <= 128. For D = 256
 * one warp cannot hold a group's split query (16 x 256 as hi and lo words:
 * 128 registers a lane) and output (128 f32 a lane), so DS = 2 warps share
 * a group, each owning half of D: each sums its half of the dot products,
 * the halves are added through shared memory (every warp of the group adds
 * them in the same order, so all hold bitwise the same scores and softmax
 * state), and each multiplies the probabilities by its half of the values.
 *
 * A tile of KT cache rows: cp.async brings the f32 keys and values (the
 * next tile's copies fly while this one is computed); then the block splits
 * them once into bf16 hi/lo pairs stored in fragment order, lane L's B
 * operands of an mma as one 16-byte word {b0 hi, b0 lo, b1 hi, b1 lo} at
 * slot L, so each warp reads them with conflict-free 16-byte loads and no
 * lane splits a value twice.
 */
#include "common.cuh"
#include "mma.cuh"
#include "attn_prompt.cuh"

#define PR      64      /* packed query rows a block: 4 row groups of 16 */
#define KT      32      /* cache rows a tile */
/* staged rows are padded so that the splitting pass reads them without bank
 * conflicts: a key row stride of 8 mod 32 words puts the 4 rows a half-warp
 * reads (8 floats each) on distinct banks, a value row stride of 4 mod 32
 * the 4 rows of one load (8 floats each); the output rows' stride of 8 does
 * the same for the float2 stores of a half-warp */
#define KPAD    8
#define VPAD    4
#define OPAD    8

template <int D> struct ap_shape {
	static constexpr int DS = D > 128 ? 2 : 1;      /* warps that share a row group */
	static constexpr int DW = D / DS;               /* columns of D a warp owns */
	static constexpr int WARPS = 4 * DS;
	/* blocks an SM the register cap must allow: 3 at D = 64 (a cap for 4
	 * spills); D = 128 spills at 3, so it and D = 256 take up to 255 */
	static constexpr int MINB = D == 64 ? 3 : 1;
	static constexpr int SK = D + KPAD, SV = D + VPAD, SO = D + OPAD;      /* row strides, floats */
	static constexpr int SLOTS = KT * D / 4;        /* 16-byte fragment slots of a tile's keys (or values) */
	/* shared memory, bytes: the staged keys and values, then their fragments
	 * (the epilogue's output rows go over both), then the partial scores */
	static constexpr int STAGE = KT * (SK + SV) * 4;
	static constexpr int FRAGS = 2 * SLOTS * 16;
	static constexpr int ROWS = PR * SO * 4;
	static constexpr int XCH = DS > 1 ? WARPS * KT / 2 * WARP * 4 : 0;
	static constexpr int SMEM = (STAGE + FRAGS > ROWS ? STAGE + FRAGS : ROWS) + XCH;
};

/* starts the copies of tile j's key and value rows (len rows exist) into
 * sk, sv; rows past len are zero-filled, not read */
template <int D>
static __device__ __forceinline__ void stage_tile(const float *kc, const float *vc, int Hkv, int kvh, int64_t len,
						  int j, float *sk, float *sv)
{
	typedef ap_shape<D> S;
	constexpr int NT = S::WARPS * WARP;
	static_assert(KT * D / 4 % NT == 0, "whole rounds of 16-byte copies");

	#pragma unroll
	for (int i = 0; i < KT * D / 4 / NT; i++) {
		const int c = i * NT + threadIdx.x, r = c / (D / 4), x = c % (D / 4) * 4;
		const int64_t key = (int64_t)j * KT + r;
		const bool ok = key < len;
		const int64_t at = ((ok ? key : 0) * Hkv + kvh) * D + x;

		cp_async16(sk + r * S::SK + x, kc + at, ok);
		cp_async16(sv + r * S::SV + x, vc + at, ok);
	}
	cp_commit();
}

/* the staged tile split into fragment slots (mma.cuh layouts), lane
 * L = 4 g + t: key slot (nb, ks) holds L's B operands for keys 8 nb + g as
 * the score mma's columns and d 16 ks + {2t, 2t+1, 2t+8, 2t+9} as its k;
 * value slot (kb, nd) those for keys 16 kb + {2t, 2t+1, 2t+8, 2t+9} as the
 * output mma's k and d 8 nd + g as its columns */
template <int D>
static __device__ __forceinline__ void split_tile(const float *sk, const float *sv, uint4 *fk, uint4 *fv)
{
	typedef ap_shape<D> S;
	constexpr int NT = S::WARPS * WARP;
	static_assert(S::SLOTS % NT == 0, "whole rounds of slots");

	#pragma unroll
	for (int i = 0; i < S::SLOTS / NT; i++) {
		const int c = i * NT + threadIdx.x, f = c >> 5, g = (c >> 2) & 7, t = c & 3;
		const float2 *k = (const float2 *)(sk + (f / (D / 16) * 8 + g) * S::SK + f % (D / 16) * 16 + 2 * t);
		const float *v = sv + (f / (D / 8) * 16 + 2 * t) * S::SV + f % (D / 8) * 8 + g;
		const float2 k0 = k[0], k1 = k[4];
		uint4 w;

		split2(k0.x, k0.y, w.x, w.y);
		split2(k1.x, k1.y, w.z, w.w);
		fk[c] = w;
		split2(v[0], v[S::SV], w.x, w.y);
		split2(v[8 * S::SV], v[9 * S::SV], w.z, w.w);
		fv[c] = w;
	}
}

/*
 * grid: Hkv * ceil(n G / PR) blocks, ap_shape<D>::WARPS warps each. Warp
 * w takes the rows 16 (w / DS) .. +15 of its block and the columns
 * DW (w % DS) .. +DW-1 of D.
 */
template <int D>
__global__ void __launch_bounds__(ap_shape<D>::WARPS * WARP, ap_shape<D>::MINB)
attn_prompt(const float *__restrict__ qg, int64_t qstride, const float *__restrict__ kc,
	    const float *__restrict__ vc, const int64_t *__restrict__ pos, int n, int Hq, int Hkv,
	    uint16_t *__restrict__ out)
{
	typedef ap_shape<D> S;
	constexpr int KS = S::DW / 16, NB = KT / 8, ND = S::DW / 8;  /* a warp's k-steps, key and column blocks */
	extern __shared__ float4 smem[];
	float *sk = (float *)smem, *sv = sk + KT * S::SK;
	uint4 *fk = (uint4 *)(sv + KT * S::SV), *fv = fk + S::SLOTS;
	float *xch = (float *)((char *)smem + S::SMEM - S::XCH);
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
	const int rg = warp / S::DS, half = warp % S::DS;
	const int G = Hq / Hkv, kvh = blockIdx.x % Hkv, nr = n * G;
	/* the blocks of the last rows, which read the most tiles, start first,
	 * so that the short ones fill the tail */
	const int r0 = ((nr + PR - 1) / PR - 1 - (int)(blockIdx.x / Hkv)) * PR;
	const float scale = 1.0f / sqrtf((float)D);

	pdl_wait();
	pdl_trigger();
	const int64_t p0 = *pos;
	const int tmin = r0 / G, tmax = min(n - 1, (r0 + PR - 1) / G);   /* the block's first and last token */
	const int64_t len = p0 + tmax + 1;                                 /* cache rows it reads */
	const int ntiles = (int)((len + KT - 1) / KT);

	stage_tile<D>(kc, vc, Hkv, kvh, len, 0, sk, sv);

	/* the query rows g and g + 8 of the warp's 16 (padding rows past nr
	 * read zeros and the last token's bound), split into A fragments */
	uint32_t qh[KS][4], ql[KS][4];
	int64_t lim[2];         /* the last cache row each row attends to */
	{
		const float *q[2];
		#pragma unroll
		for (int i = 0; i < 2; i++) {
			const int R = r0 + 16 * rg + g + 8 * i, tk = R < nr ? R / G : tmax;
			lim[i] = p0 + tk;
			q[i] = R < nr ? qg + tk * qstride + (int64_t)(kvh * G + R % G) * 2 * D + half * S::DW : NULL;
		}
		#pragma unroll
		for (int ks = 0; ks < KS; ks++)
			#pragma unroll
			for (int p = 0; p < 4; p++) {
				const float *r = q[p & 1];
				const int c = 16 * ks + 2 * t + 8 * (p >> 1);
				split2(r ? r[c] : 0.0f, r ? r[c + 1] : 0.0f, qh[ks][p], ql[ks][p]);
			}
	}

	float o[ND][4], m[2] = { -INFINITY, -INFINITY }, l[2] = { 0.0f, 0.0f };
	#pragma unroll
	for (int nd = 0; nd < ND; nd++)
		o[nd][0] = o[nd][1] = o[nd][2] = o[nd][3] = 0.0f;

	for (int j = 0; j < ntiles; j++) {
		cp_wait<0>();
		__syncthreads();        /* tile j staged; every warp done with tile j - 1's fragments */
		split_tile<D>(sk, sv, fk, fv);
		__syncthreads();        /* fragments ready; the staging rows free */
		if (j + 1 < ntiles)
			stage_tile<D>(kc, vc, Hkv, kvh, len, j + 1, sk, sv);

		/* scores of the warp's 16 rows and the tile's KT keys over its
		 * part of D: s[nb] holds keys 8 nb .. 8 nb + 7 (C layout) */
		float s[NB][4];
		#pragma unroll
		for (int nb = 0; nb < NB; nb++)
			s[nb][0] = s[nb][1] = s[nb][2] = s[nb][3] = 0.0f;
		#pragma unroll
		for (int ks = 0; ks < KS; ks++)
			#pragma unroll
			for (int nb = 0; nb < NB; nb++) {
				const uint4 b = fk[(nb * (D / 16) + half * KS + ks) * WARP + lane];
				mma_bf16(s[nb], ql[ks][0], ql[ks][1], ql[ks][2], ql[ks][3], b.x, b.z);
				mma_bf16(s[nb], qh[ks][0], qh[ks][1], qh[ks][2], qh[ks][3], b.y, b.w);
				mma_bf16(s[nb], qh[ks][0], qh[ks][1], qh[ks][2], qh[ks][3], b.x, b.z);
			}
		if (S::DS > 1) {
			/* the group's partial scores, added in warp order by each */
			float *mine = xch + warp * (NB * 4) * WARP;
			#pragma unroll
			for (int i = 0; i < NB * 4; i++)
				mine[i * WARP + lane] = s[i / 4][i % 4];
			__syncthreads();
			#pragma unroll
			for (int i = 0; i < NB * 4; i++) {
				float a = 0.0f;
				#pragma unroll
				for (int u = 0; u < S::DS; u++)
					a += xch[((rg * S::DS + u) * NB * 4 + i) * WARP + lane];
				s[i / 4][i % 4] = a;
			}
		}

		/* online softmax: lane (g, t) holds keys 8 nb + 2t + {0, 1} of
		 * rows g (s[nb][0..1]) and g + 8 (s[nb][2..3]); the other keys
		 * of a row are in the lanes of its quad */
		const int64_t k0 = (int64_t)j * KT + 2 * t;
		const bool edge = (int64_t)j * KT + KT - 1 > p0 + tmin;        /* a row of the block ends here */
		float mx[2] = { -INFINITY, -INFINITY };
		#pragma unroll
		for (int nb = 0; nb < NB; nb++)
			#pragma unroll
			for (int e = 0; e < 4; e++) {
				float x = s[nb][e] * scale;
				if (edge && k0 + 8 * nb + (e & 1) > lim[e >> 1])
					x = -INFINITY;
				s[nb][e] = x;
				mx[e >> 1] = fmaxf(mx[e >> 1], x);
			}
		float corr[2];
		#pragma unroll
		for (int i = 0; i < 2; i++) {
			mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffff, mx[i], 1));
			mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffff, mx[i], 2));
			/* finite: key 0 is in every row's first tile; a later tile
			 * masked whole leaves m as it was (corr 1, p 0) */
			const float mn = fmaxf(m[i], mx[i]);
			corr[i] = expf(m[i] - mn);
			m[i] = mn;
			l[i] *= corr[i];
		}
		#pragma unroll
		for (int nb = 0; nb < NB; nb++)
			#pragma unroll
			for (int e = 0; e < 4; e++) {
				const float p = expf(s[nb][e] - m[e >> 1]);
				l[e >> 1] += p;
				s[nb][e] = p;
			}
		#pragma unroll
		for (int nd = 0; nd < ND; nd++)
			#pragma unroll
			for (int e = 0; e < 4; e++)
				o[nd][e] *= corr[e >> 1];

		/* o += p v over the warp's columns: the C fragments of keys
		 * 16 kb .. +7 and +8 .. +15 are the A fragment of k-step kb */
		#pragma unroll
		for (int kb = 0; kb < KT / 16; kb++) {
			uint32_t ah[4], al[4];
			split2(s[2 * kb][0], s[2 * kb][1], ah[0], al[0]);
			split2(s[2 * kb][2], s[2 * kb][3], ah[1], al[1]);
			split2(s[2 * kb + 1][0], s[2 * kb + 1][1], ah[2], al[2]);
			split2(s[2 * kb + 1][2], s[2 * kb + 1][3], ah[3], al[3]);
			#pragma unroll
			for (int nd = 0; nd < ND; nd++) {
				const uint4 b = fv[(kb * (D / 8) + half * ND + nd) * WARP + lane];
				mma_bf16(o[nd], al[0], al[1], al[2], al[3], b.x, b.z);
				mma_bf16(o[nd], ah[0], ah[1], ah[2], ah[3], b.y, b.w);
				mma_bf16(o[nd], ah[0], ah[1], ah[2], ah[3], b.x, b.z);
			}
		}
	}

	/* a row's sum from its quad's partial sums; the rows through shared
	 * memory, so whole warps can write 32 consecutive columns (put_split) */
	#pragma unroll
	for (int i = 0; i < 2; i++) {
		l[i] += __shfl_xor_sync(0xffffffff, l[i], 1);
		l[i] += __shfl_xor_sync(0xffffffff, l[i], 2);
	}
	float *so = (float *)smem;
	__syncthreads();        /* every warp done with the tiles the rows go over */
	#pragma unroll
	for (int nd = 0; nd < ND; nd++) {
		float *r = so + (16 * rg + g) * S::SO + half * S::DW + 8 * nd + 2 * t;
		*(float2 *)r = make_float2(o[nd][0] / l[0], o[nd][1] / l[0]);
		*(float2 *)(r + 8 * S::SO) = make_float2(o[nd][2] / l[1], o[nd][3] / l[1]);
	}
	__syncthreads();
	const int64_t plane = (int64_t)n * Hq * D;
	for (int c = warp; c < PR * D / WARP; c += S::WARPS) {
		const int i = c / (D / WARP), d = c % (D / WARP) * WARP + lane, R = r0 + i;
		if (R >= nr)
			break;          /* rows grow with c: the rest are padding */
		const int tk = R / G, h = kvh * G + R % G;
		const float *gate = qg + tk * qstride + (int64_t)h * 2 * D + D;
		put_split(out, plane, D, ((int64_t)tk * Hq + h) * D + d, so[i * S::SO + d] * sigmoid(gate[d]));
	}
}

/* the head_dims instantiated: those of the Qwen3.5 models (256) and of the
 * test models (64), and 128 */
#define EACH_D(X) X(64) X(128) X(256)

int tf_cuda_attn_prompt_takes(int D, int Hq, int Hkv)
{
	return (D == 64 || D == 128 || D == 256) && Hkv > 0 && Hq % Hkv == 0;
}

template <int D>
static int launch(const float *qg, int64_t qstride, const float *kc, const float *vc, const int64_t *pos, int n,
		  int Hq, int Hkv, uint16_t *out)
{
	const int64_t blocks = ((int64_t)n * (Hq / Hkv) + PR - 1) / PR * Hkv;

	CUDA_CHECK(launch_k(attn_prompt<D>, dim3((unsigned)blocks), dim3(ap_shape<D>::WARPS * WARP),
			    ap_shape<D>::SMEM, qg, qstride, kc, vc, pos, n, Hq, Hkv, out));
	LAUNCH_CHECK();
	return 0;
}

int tf_cuda_attn_prompt(const float *qg, int64_t qstride, const float *kc, const float *vc, const int64_t *pos,
			int n, int Hq, int Hkv, int D, uint16_t *out)
{
	if (n <= 0)
		return 0;
	if (!tf_cuda_attn_prompt_takes(D, Hq, Hkv) || (int64_t)n * Hq > INT32_MAX)
		return tf_err("prompt attention with head_dim %d, %d/%d heads and %d rows is not supported on the GPU",
			      D, Hq, Hkv, n);
#define CASE(d) \
	if (D == d) \
		return launch<d>(qg, qstride, kc, vc, pos, n, Hq, Hkv, out);
	EACH_D(CASE)
#undef CASE
	return 0;
}

int tf_cuda_attn_prompt_setup(void)
{
#define ALLOW(d) \
	CUDA_CHECK(cudaFuncSetAttribute(attn_prompt<d>, cudaFuncAttributeMaxDynamicSharedMemorySize, ap_shape<d>::SMEM));
	EACH_D(ALLOW)
#undef ALLOW
	return 0;
}
