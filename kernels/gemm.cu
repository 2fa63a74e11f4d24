/*
 * gemm.cu: prompt GEMMs through cuBLASLt (bf16 inputs, fp32 accumulation
 * and output, tensor cores). Row-major Y (n, R) = X (n, K) W^T is, in
 * cuBLAS's column-major terms, Y^T (R x n) = op_T(W as K x R) . X^T (K x n).
 */
#include <cublasLt.h>

#include "common.cuh"
#include "gemm.cuh"

#define WORKSPACE (32u << 20)
#define SCRATCH_ELEMS (64ll << 20)      /* bf16 weights dequantized per slice: 128 MiB */

static cublasLtHandle_t lt;
static void *workspace;
static uint16_t *scratch;

static int gemm_init(void)
{
	if (lt)
		return 0;
	CUBLAS_CHECK(cublasLtCreate(&lt));
	CUDA_CHECK(cudaMalloc(&workspace, WORKSPACE));
	CUDA_CHECK(cudaMalloc(&scratch, SCRATCH_ELEMS * 2));
	return 0;
}

__global__ void dequant_rows(tf_weight w, int64_t r0, int64_t rows, uint16_t *__restrict__ out)
{
	const int64_t n = rows * w.cols;
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
		out[i] = f2bf(weight_at(w, r0 + i / w.cols, i % w.cols));
}

/* rows as MLX packs them: a thread a 32-bit word, its 32 / BITS codes
 * (code m in bits BITS m, all of one group) to as many consecutive
 * columns, 16-byte stores. BITS 2 or 4: s q + b; BITS 1, sign1: +-s, the
 * sign bit of the bf16 scale flipped for a clear bit (as f2bf(-s)). G the
 * group as a constant, so that it is a shift; 0: the weight's */
template <int BITS, int G>
__global__ void dequant_mlx(tf_weight w, int64_t r0, int64_t rows, uint16_t *__restrict__ out)
{
	constexpr int F = 32 / BITS;    /* codes a word */
	const int g = G ? G : w.group;
	const int64_t wpr = w.cols / F, n = rows * wpr, ng = w.cols / g;
	const uint32_t *src = (const uint32_t *)w.data + r0 * wpr;

	for (int64_t x = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; x < n; x += (int64_t)gridDim.x * blockDim.x) {
		const int64_t r = x / wpr, c = F * (x % wpr), gi = (r0 + r) * ng + c / g;
		const uint32_t word = src[x];
		const uint16_t sh = ((const uint16_t *)w.scales)[gi];
		uint32_t v[F / 2];
		if (BITS == 1) {
			const uint32_t m = sh ^ 0x8000u;
			#pragma unroll
			for (int q = 0; q < F / 2; q++)
				v[q] = ((word >> (2 * q)) & 1 ? sh : m) | ((word >> (2 * q + 1)) & 1 ? sh : m) << 16;
		} else {
			const float s = bf2f(sh), b = bf2f(((const uint16_t *)w.biases)[gi]);
			#pragma unroll
			for (int m = 0; m < F; m += 2)
				v[m / 2] = f2bf(s * (float)((word >> (BITS * m)) & ((1u << BITS) - 1)) + b) |
					   (uint32_t)f2bf(s * (float)((word >> (BITS * m + BITS)) & ((1u << BITS) - 1)) + b) << 16;
		}
		#pragma unroll
		for (int q = 0; q < F / 8; q++)
			((uint4 *)(out + r * w.cols + c))[q] = make_uint4(v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]);
	}
}

template <int BITS>
static void dequant_mlx_g(const tf_weight *w, int64_t r0, int64_t rows, uint16_t *out, unsigned grid, cudaStream_t st)
{
	(w->group == 32 ? dequant_mlx<BITS, 32> : w->group == 64 ? dequant_mlx<BITS, 64>
		: dequant_mlx<BITS, 128>)<<<grid, 256, 0, st>>>(*w, r0, rows, out);
}

int tf_cuda_dequant(const tf_weight *w, int64_t r0, int64_t rows, uint16_t *out)
{
	const unsigned grid = tf_cuda_sms() * 8;
	cudaStream_t st = tf_cuda_stream_get();

	if (w->fmt == TF_AFFINE && (w->bits == 2 || w->bits == 4) && w->sdtype == TF_BF16 &&
	    (w->group == 32 || w->group == 64 || w->group == 128) && w->cols % w->group == 0)
		(w->bits == 2 ? dequant_mlx_g<2> : dequant_mlx_g<4>)(w, r0, rows, out, grid, st);
	else if (w->fmt == TF_SIGN1 && w->sdtype == TF_BF16 && w->cols % w->group == 0 && w->group % 32 == 0)
		dequant_mlx<1, 0><<<grid, 256, 0, st>>>(*w, r0, rows, out);
	else
		dequant_rows<<<grid, 256, 0, st>>>(*w, r0, rows, out);
	LAUNCH_CHECK();
	return 0;
}

/* Y[:, r0 : r0+R] (ld ldy) = X . A^T with A (R, K) bf16 row-major */
static int lt_matmul(const uint16_t *A, int64_t R, int64_t K, const uint16_t *X, int n, float *Y, int64_t ldy,
		     int accumulate)
{
	cublasLtMatmulDesc_t op = NULL;
	cublasLtMatrixLayout_t la = NULL, lb = NULL, lc = NULL;
	cublasLtMatmulPreference_t pref = NULL;
	cublasLtMatmulHeuristicResult_t res;
	cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
	float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
	size_t ws = WORKSPACE;
	int count = 0, rc = -1;

	if (cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F) ||
	    cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta) ||
	    cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb) ||
	    cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, K, R, K) ||
	    cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, K, n, K) ||
	    cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, R, n, ldy) ||
	    cublasLtMatmulPreferenceCreate(&pref) ||
	    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws)) {
		tf_err("cannot set up a cuBLASLt product of %lld x %lld by %d rows", (long long)R, (long long)K, n);
		goto out;
	}
	if (cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &res, &count) || count < 1) {
		tf_err("cuBLASLt has no algorithm for %lld x %lld by %d rows", (long long)R, (long long)K, n);
		goto out;
	}
	{
		cublasStatus_t st = cublasLtMatmul(lt, op, &alpha, A, la, X, lb, &beta, Y, lc, Y, lc, &res.algo,
						   workspace, WORKSPACE, tf_cuda_stream_get());
		if (st != CUBLAS_STATUS_SUCCESS) {
			tf_cuda_fail("cublasLtMatmul", __func__, __FILE__, __LINE__, cublasLtGetStatusString(st));
			goto out;
		}
	}
	rc = 0;
out:
	if (pref) cublasLtMatmulPreferenceDestroy(pref);
	if (lc) cublasLtMatrixLayoutDestroy(lc);
	if (lb) cublasLtMatrixLayoutDestroy(lb);
	if (la) cublasLtMatrixLayoutDestroy(la);
	if (op) cublasLtMatmulDescDestroy(op);
	return rc;
}

int tf_cuda_gemm(const tf_weight *w, const uint16_t *x, int n, float *y, int accumulate)
{
	return tf_cuda_gemm_ld(w, x, n, y, w->rows, accumulate);
}

int tf_cuda_gemm_ld(const tf_weight *w, const uint16_t *x, int n, float *y, int64_t ldy, int accumulate)
{
	if (n <= 0)
		return 0;
	if (gemm_init() < 0)
		return -1;
	const uint16_t *xl = x + (int64_t)n * w->cols;  /* the lo plane: a second product adds it */

	if (w->fmt == TF_BF16 && ((uintptr_t)w->data & 15) == 0)
		return lt_matmul((const uint16_t *)w->data, w->rows, w->cols, x, n, y, ldy, accumulate) < 0 ||
		       lt_matmul((const uint16_t *)w->data, w->rows, w->cols, xl, n, y, ldy, 1) < 0 ? -1 : 0;
	/* slices of a multiple of 64 rows keep y + r0 aligned for cuBLASLt */
	int64_t slice = SCRATCH_ELEMS / w->cols / 64 * 64;
	if (slice < 64)
		return tf_err("weight rows of %lld columns are too long for the GPU prompt path", (long long)w->cols);
	for (int64_t r0 = 0; r0 < w->rows; r0 += slice) {
		int64_t R = w->rows - r0 < slice ? w->rows - r0 : slice;
		if (tf_cuda_dequant(w, r0, R, scratch) < 0 ||
		    lt_matmul(scratch, R, w->cols, x, n, y + r0, ldy, accumulate) < 0 ||
		    lt_matmul(scratch, R, w->cols, xl, n, y + r0, ldy, 1) < 0)
			return -1;
	}
	return 0;
}
