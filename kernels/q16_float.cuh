/*
 * q16_float.cuh: the float steps of the int16-input products (C++ only),
 * shared by the one-row kernels (gemv_q16_body.cuh) and the tensor-core
 * ones (gemm_q16_mma.cu), so that both take a chunk's float sums in the
 * same operations: with the same exact integer block sums they give the
 * same bits. Included after bf16_at.
 *
 * For (weight row, input row) and one chunk of F::CC columns, a lane's
 * accumulator acc takes, block b = 0 .. F::NBLK - 1 of the chunk in
 * order, q16_fsum(b, I_b, d_b, ...), then q16_fbias(b, xs_b, ...) in the
 * same order: acc += scale * (I d) per block (sign1: the blocks sharing a
 * scale summed as I d first, then times -2 scale), then bias * xs (sign1:
 * -scale * xs) per block, each a fmaf.
 */
#ifndef TF_Q16_FLOAT_CUH
#define TF_Q16_FLOAT_CUH

/* block b of a chunk: its integer sum I (as the float nearest it, (float)I)
 * times the input's scale d into sd (sign1: summed over the blocks that
 * share a scale), and once those are all in, sd times the group's scale
 * (in sv, bf16 pairs) into acc */
template <class F, int G>
static __device__ __forceinline__ void q16_fsum(int b, float I, float d, const uint32_t *sv, float &sd, float &acc)
{
	constexpr int GPC = F::CC >= G ? F::CC / G : 1;         /* groups a chunk */
	constexpr int BPS = F::SIGN ? (F::CC < G ? F::CC : G) / 32 : 1;

	sd = b % BPS ? fmaf(I, d, sd) : I * d;
	if ((b + 1) % BPS)
		return;
	const float s = bf16_at(sv, b * 32 / G < GPC ? b * 32 / G : 0);
	acc = fmaf(F::SIGN ? -2.0f * s : s, sd, acc);
}

/* block b's bias (sign1: -scale) times the input's block sum xs into acc */
template <class F, int G>
static __device__ __forceinline__ void q16_fbias(int b, float xs, const uint32_t *sv, const uint32_t *bv, float &acc)
{
	constexpr int GPC = F::CC >= G ? F::CC / G : 1;
	const int gq = b * 32 / G < GPC ? b * 32 / G : 0;
	const float o = F::SIGN ? -bf16_at(sv, gq) : bf16_at(bv, gq);

	acc = fmaf(o, xs, acc);
}

#endif
