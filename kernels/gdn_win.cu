/*
 * gdn_win.cu: a decode window of Gated DeltaNet in one launch, in place of
 * gdn_in.cu's kernel (conv, gates, norms) followed by gdn.cu's delta rule.
 * Why: a decode step waits for each kernel before it to finish, and that
 * wait, not the work, is most of what the small kernels cost.
 *
 * A block owns 32 columns of one value head's state, as gdn_step's do, and
 * makes its own inputs: the conv with SiLU of its key head's q and k
 * channels and of its 32 v channels, a thread a channel (two where there
 * are more channels than threads), token after token, then the q and k
 * norms by one warp each and the gates of its head. The blocks of a key
 * head all make its q and k, which costs a few hundred reads from L2 and
 * saves the launch. The arithmetic is conv_win's, gdn_in's and gdn_step's,
 * term for term, so the values are theirs bit for bit.
 *
 * With split outputs (gdn_win.cuh) each block also makes its 32 columns'
 * block of the output projection's input: o w silu(z) as int16 codes with
 * their scale and sum, and the sum of o^2, by the warp that holds the
 * outputs, once the delta rule is done. The product takes the head's norm
 * from the four blocks' sums of squares, which this block cannot see: so
 * the output projection stages 8 KB of codes in place of norming 32 KB of
 * floats in every one of its blocks.
 *
 * The conv state of a v channel has one block, which writes it at the end.
 * The q and k channels of a key head are read by all its blocks: each
 * counts itself done in count[hk] once its first token has used the old
 * state, and the last to arrive writes the new one at its end (every block
 * has read the old one by then) and sets the counter back to zero for the
 * next launch.
 */
#include "common.cuh"
#include "gdn_rule.cuh"
#include "conv_win.cuh"
#include "gdn_win.cuh"


/* x (DK) times 1/sqrt(sum x^2 + 1e-6) times scale, by one warp: each 32
 * entries' warp sum, those added in order, as gdn_in sums a head's channels
 * (and DK a constant there too: the compiler folds a constant's 1/sqrt,
 * which can differ from the hardware's in the last bit) */
template <int DK>
static __device__ __forceinline__ void l2norm_warp(float *x, float scale)
{
	const int lane = threadIdx.x & 31;
	float ss = 0;

	#pragma unroll
	for (int w = 0; w < DK / WARP; w++) {
		const float v = x[w * WARP + lane], p = warp_sum(v * v);
		ss = w ? ss + p : p;
	}
	const float inv = 1.0f / sqrtf(ss + 1e-6f) * scale;
	#pragma unroll
	for (int w = 0; w < DK / WARP; w++)
		x[w * WARP + lane] *= inv;
}

/* K a constant: with a runtime K the compiler kept the conv windows in
 * local memory */
template <int RPT, int K>
__global__ void __launch_bounds__(SLICES * WARP, 1)
gdn_win(const float *__restrict__ m0, int64_t ld, int n0, const float *__restrict__ cw, float *cs0,
	const float *__restrict__ A_log, const float *__restrict__ dt_bias, float *S0, int Hk, int Hv,
	int Dv, float *__restrict__ o, unsigned *count0, const float *__restrict__ gw, int16_t *__restrict__ yq,
	float *__restrict__ yd, float *__restrict__ ys, float *__restrict__ ysq, const tf_gdn_segs segs)
{
	constexpr int DK = RPT * SLICES, NCH = 2 * DK + WARP;  /* channels a block makes */
	const int lane = threadIdx.x & 31, sl = threadIdx.x >> 5;
	const int jt = Dv / WARP, h = blockIdx.x / jt, j0 = (blockIdx.x % jt) * WARP, j = j0 + lane;
	const int hk = h / (Hv / Hk);
	const int64_t kd = (int64_t)Hk * DK, C = 2 * kd + (int64_t)Hv * Dv, bo = C + (int64_t)Hv * Dv;
	/* one sequence's window, or segment blockIdx.y of a pass over many
	 * (rows.cuh): its rows from t0, its states, its key heads' counts */
	const int sg = blockIdx.y, t0 = segs.S ? segs.first[sg] : 0, n = segs.S ? segs.n[sg] : n0;
	float *__restrict__ S = segs.S ? segs.S[sg] : S0;
	float *__restrict__ cs = segs.S ? segs.conv[sg] : cs0;
	unsigned *count = count0 + (int64_t)sg * Hk;
	const float *__restrict__ m = m0 + (int64_t)t0 * ld;
	float *Sh = S + (int64_t)h * DK * Dv;
	float s[RPT];
	/* xs: this token's q (DK), k (DK), then the block's 32 v channels */
	__shared__ float xs[NCH], red[2 * SLICES][WARP];
	__shared__ bool last;
	/* the thread that counts the block (lane 0 of the last slice: slices
	 * 0 and 1 norm q and k right after the count, and its fence would
	 * hold back the first of them) */
	const bool counter = threadIdx.x == (SLICES - 1) * WARP;
	unsigned arrived = 0;   /* counter: blocks of the key head counted before this one */

	/* channel i of the block: q, k of key head hk, then v columns j0.. of head h */
	int ch[2];
	conv_win w0, w1;        /* named, not an array: kept in registers */
	#pragma unroll
	for (int c = 0; c < 2; c++) {
		const int i = threadIdx.x + c * SLICES * WARP;
		ch[c] = i < DK ? hk * DK + i : i < 2 * DK ? (int)kd + hk * DK + i - DK
			: i < NCH ? (int)(2 * kd) + h * Dv + j0 + i - 2 * DK : -1;
	}
	/* the states (this kernel's own, from the step before), the taps and
	 * the gates' weights are read while the kernel before, the input
	 * projection, still runs (gdn_win.cuh: no launch right before this one
	 * writes them) */
	state_get<RPT>(Sh, Dv, j, s);
	if (ch[0] >= 0)
		w0.load(cw, cs, ch[0], (int)C, K);
	if (ch[1] >= 0)
		w1.load(cw, cs, ch[1], (int)C, K);
	const float Ah = A_log[h], dth = dt_bias[h];
	const float gwj = yq ? gw[j] : 0.0f;    /* the gated norm's factor of column j */
	pdl_wait();
	pdl_trigger();

	for (int t = 0; t < n; t++) {
		const float *mt = m + (int64_t)t * ld;

		if (t)
			__syncthreads();        /* the previous token is done with xs, red */
		if (ch[0] >= 0)
			xs[threadIdx.x] = silu(w0.step(mt[ch[0]], K));
		if (ch[1] >= 0)
			xs[threadIdx.x + SLICES * WARP] = silu(w1.step(mt[ch[1]], K));
		/* the gates: beta = sigmoid(b), g = -exp(A_log) softplus(a + dt_bias) */
		const float av = mt[bo + Hv + h] + dth;
		const float sp = av > 20.0f ? av : log1pf(expf(av));    /* torch's softplus */
		const float g = -expf(Ah) * sp, b = sigmoid(mt[bo + h]), alpha = expf(g);
		/* the gate of output column j, with the token's other inputs */
		const float zj = yq && sl == 0 ? mt[C + (int64_t)h * Dv + j] : 0.0f;
		__syncthreads();
		/* every thread has used the old q/k conv state (the first
		 * token's conv, then the barrier): the block counts itself done
		 * now, so that the count's trip overlaps the delta rule instead
		 * of following the state's writes (only its result waits, at
		 * the end) */
		if (t == 0 && counter)
			arrived = atomic_add_release(count + hk, 1u);
		if (sl < 2)
			l2norm_warp<DK>(xs + sl * DK, sl ? 1.0f : rsqrtf((float)DK));
		__syncthreads();
		const float *qs = xs, *ks = xs + DK, v = xs[2 * DK + lane];

		const float op = delta_token<RPT>(s, qs, ks, v, alpha, b, red);
		if (sl == 0) {
			o[((int64_t)(t0 + t) * Hv + h) * Dv + j] = op;
			/* the block's 32 columns are one 32-column block of the
			 * output projection's input (gdn_win.cuh) */
			if (yq) {
				const float v = op * gwj * silu_fast(zj), ss = warp_sum(op * op);
				const int64_t bi = (int64_t)(t0 + t) * gridDim.x + blockIdx.x;
				float sc, sm;
				yq[((int64_t)(t0 + t) * Hv + h) * Dv + j] = q16_warp(v, v, &sc, &sm);
				if (!lane) {
					yd[bi] = sc;
					ys[bi] = sm;
					ysq[bi] = ss;
				}
			}
		}
	}
	state_put<RPT>(Sh, Dv, j, s);

	/* the conv state: v channels are this block's alone; q and k channels
	 * are written by the key head's last block to finish */
	if (threadIdx.x >= 2 * DK && ch[0] >= 0)
		w0.store(cs, ch[0], (int)C, K);
	if (threadIdx.x + SLICES * WARP >= 2 * DK && ch[1] >= 0)
		w1.store(cs, ch[1], (int)C, K);
	if (counter) {
		last = arrived == Hv / Hk * jt - 1;     /* of the key head's blocks */
		if (last)
			count[hk] = 0;
	}
	__syncthreads();
	if (last) {
		if (threadIdx.x < 2 * DK)
			w0.store(cs, ch[0], (int)C, K);
		if (threadIdx.x + SLICES * WARP < 2 * DK)
			w1.store(cs, ch[1], (int)C, K);
	}
}

template <int RPT>
static int launch(const float *m, int64_t ld, int n, const float *conv_w, float *conv_state, int K, const float *A_log,
		  const float *dt_bias, float *S, int Hk, int Hv, int Dv, float *o, unsigned *count, const float *gw,
		  uint16_t *split, float *sq, const tf_gdn_segs &segs)
{
	const dim3 blocks((unsigned)(Hv * (Dv / WARP)), segs.S ? (unsigned)segs.nseg : 1u);
	const split_parts p = split ? split_parts_of(split, (int64_t)n * Hv * Dv) : split_parts{ NULL, NULL, NULL };

	switch (K) {
	case 2:
		LAUNCH((gdn_win<RPT, 2>), blocks, SLICES * WARP, m, ld, n, conv_w, conv_state, A_log, dt_bias, S, Hk, Hv,
		       Dv, o, count, gw, p.codes, p.scales, p.sums, sq, segs);
		break;
	case 3:
		LAUNCH((gdn_win<RPT, 3>), blocks, SLICES * WARP, m, ld, n, conv_w, conv_state, A_log, dt_bias, S, Hk, Hv,
		       Dv, o, count, gw, p.codes, p.scales, p.sums, sq, segs);
		break;
	case 4:
		LAUNCH((gdn_win<RPT, 4>), blocks, SLICES * WARP, m, ld, n, conv_w, conv_state, A_log, dt_bias, S, Hk, Hv,
		       Dv, o, count, gw, p.codes, p.scales, p.sums, sq, segs);
		break;
	default: return 1;
	}
	LAUNCH_CHECK();
	return 0;
}

static int takes(int n, int Hk, int Hv, int Dk, int Dv)
{
	return n <= 16 && Dv % WARP == 0 && Hv % Hk == 0 && (Dk == 32 || Dk == 64 || Dk == 128);
}

static int win(const float *m, int64_t ld, int n, const float *conv_w, float *conv_state, int K, const float *A_log,
	       const float *dt_bias, float *S, int Hk, int Hv, int Dk, int Dv, float *o, unsigned *count, const float *gw,
	       uint16_t *split, float *sq, const tf_gdn_segs &segs)
{
	if (n <= 0)
		return 0;
	if (!takes(n, Hk, Hv, Dk, Dv))
		return 1;
	switch (Dk) {
	case 32: return launch<4>(m, ld, n, conv_w, conv_state, K, A_log, dt_bias, S, Hk, Hv, Dv, o, count, gw, split,
				  sq, segs);
	case 64: return launch<8>(m, ld, n, conv_w, conv_state, K, A_log, dt_bias, S, Hk, Hv, Dv, o, count, gw, split,
				  sq, segs);
	default: return launch<16>(m, ld, n, conv_w, conv_state, K, A_log, dt_bias, S, Hk, Hv, Dv, o, count, gw,
				   split, sq, segs);
	}
}

int tf_cuda_gdn_win(const float *m, int64_t ld, int n, const float *conv_w, float *conv_state, int K,
		    const float *A_log, const float *dt_bias, float *S, int Hk, int Hv, int Dk, int Dv, float *o,
		    unsigned *count, const float *gw, uint16_t *split, float *sq)
{
	return win(m, ld, n, conv_w, conv_state, K, A_log, dt_bias, S, Hk, Hv, Dk, Dv, o, count, gw, split, sq,
		   tf_gdn_segs{});
}

int tf_cuda_gdn_win_takes(int Hk, int Hv, int Dk, int Dv, int K)
{
	return takes(1, Hk, Hv, Dk, Dv) && K >= 2 && K <= 4;
}

int tf_cuda_gdn_win_segs(const float *m, int64_t ld, int n, const tf_gdn_segs *segs, const float *conv_w, int K,
			 const float *A_log, const float *dt_bias, int Hk, int Hv, int Dk, int Dv, float *o,
			 unsigned *count, const float *gw, uint16_t *split, float *sq)
{
	if (segs->nseg < 1 || segs->nseg > n)
		return tf_err("a pass of %d rows in %d segments", n, segs->nseg);
	return win(m, ld, n, conv_w, NULL, K, A_log, dt_bias, NULL, Hk, Hv, Dk, Dv, o, count, gw, split, sq, *segs);
}
