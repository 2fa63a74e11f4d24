/*
 * sample.cu: a block of 1024 threads per row. Each thread owns a contiguous
 * slice of the vocabulary, so "first maximum" and "running sum in id order"
 * become: per-slice results, then the slices in order. The probabilities
 * are the host's to the bit (libm_expf); their sums, a slice's in double
 * and then the slices', round apart from the host's one running sum only
 * in the last bits.
 */
#include "common.cuh"
#include "sample.cuh"

#define ST 1024

#define AB 64            /* blocks a row for the first argmax pass */

/* the first of the largest values among ids lo .. hi-1 of a row, as
 * (value, id) in bv[0], bi[0]; ties go to the smaller id */
static __device__ void argmax_block(const float *l, int lo, int hi, float *bv, int *bi)
{
	float best = -INFINITY;
	int idx = INT32_MAX;

	/* consecutive threads read consecutive ids (coalesced); each thread
	 * sees its ids in increasing order, so its first maximum wins */
	for (int i = lo + threadIdx.x; i < hi; i += ST)
		if (idx == INT32_MAX || l[i] > best) {
			best = l[i];
			idx = i;
		}
	bv[threadIdx.x] = best;
	bi[threadIdx.x] = idx;
	__syncthreads();
	for (int s = ST / 2; s > 0; s >>= 1) {
		if (threadIdx.x < s) {
			float ov = bv[threadIdx.x + s];
			int oi = bi[threadIdx.x + s];
			if (ov > bv[threadIdx.x] || (ov == bv[threadIdx.x] && oi < bi[threadIdx.x])) {
				bv[threadIdx.x] = ov;
				bi[threadIdx.x] = oi;
			}
		}
		__syncthreads();
	}
}

/* pass 1: AB blocks a row, each over a contiguous slice of ids */
__global__ void __launch_bounds__(ST) argmax_part(const float *__restrict__ logits, int V, float *pv, int *pi)
{
	pdl_wait();
	pdl_trigger();
	__shared__ float bv[ST];
	__shared__ int bi[ST];
	const int row = blockIdx.x / AB, part = blockIdx.x % AB, per = (V + AB - 1) / AB;
	const int lo = part * per, hi = min(lo + per, V);

	argmax_block(logits + (int64_t)row * V, lo, hi, bv, bi);
	if (threadIdx.x == 0) {
		pv[blockIdx.x] = bv[0];
		pi[blockIdx.x] = bi[0];
	}
}

/* pass 2: the slices of a row in order */
__global__ void argmax_join(const float *__restrict__ pv, const int *__restrict__ pi, int V, int32_t *out)
{
	pdl_wait();
	pdl_trigger();
	const int row = blockIdx.x;
	float best = pv[row * AB];
	int idx = pi[row * AB];

	if (threadIdx.x)
		return;
	for (int k = 1; k < AB; k++)
		if (idx == INT32_MAX || pv[row * AB + k] > best) {
			best = pv[row * AB + k];
			idx = pi[row * AB + k];
		}
	out[row] = idx < V ? idx : 0;
}

/*
 * expf as the host's libm computes it, bit for bit: the method of glibc's
 * expf (Arm's optimized-routines) with the fused multiply-adds where its
 * x86-64 FMA build has them. exp(x) = 2^(k/32) 2^(r/32) for x 32/ln2 =
 * k + r: the first from a table of 2^(i/32) with k's high bits added to the
 * exponent, the second a cubic in r. CUDA's expf is within 2 ulp of it but
 * not the same bits, and one ulp reorders near-equal probabilities in the
 * host's sort. Checked against glibc 2.36 on every float in [-104, 0], the
 * range a draw takes (logit - max <= 0); glibc's build without FMA differs
 * at one of those 1.1e9 inputs. The table is in global memory, not
 * __constant__: the lanes of a warp read different entries of it.
 */
static __device__ const uint64_t exp2_tab[32] = {
	0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
	0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
	0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
	0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
	0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
	0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
	0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
	0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
};

static __device__ float libm_expf(float x)
{
	/* 32/ln2, the shift that rounds to an integer in the low bits, the cubic */
	const double inv = 0x1.71547652b82fep+0 * 32, shift = 0x1.8p+52;
	const double c0 = 0x1.c6af84b912394p-5 / 32 / 32 / 32, c1 = 0x1.ebfce50fac4f3p-3 / 32 / 32,
		     c2 = 0x1.62e42ff0c52d6p-1 / 32;

	if (x < -0x1.9fe368p6f)         /* below log(2^-150): 0, as glibc; -inf too */
		return 0.0f;
	const double xd = x, kd = fma(inv, xd, shift);
	const uint64_t ki = __double_as_longlong(kd);
	const double k = __dsub_rn(kd, shift), r = fma(inv, xd, -k);
	const double s = __longlong_as_double(exp2_tab[ki % 32] + (ki << 47));
	const double y = fma(fma(c0, r, c1), __dmul_rn(r, r), fma(c2, r, 1.0));
	return (float)__dmul_rn(y, s);
}

__global__ void __launch_bounds__(ST) sample_rows(const float *__restrict__ logits, int V,
						  const tf_draw_args *__restrict__ a, int32_t *out)
{
	pdl_wait();
	pdl_trigger();
	pdl_wait();
	pdl_trigger();
	__shared__ float sh[32];
	__shared__ double part[ST];
	__shared__ int pick;
	const float *l = logits + (int64_t)blockIdx.x * V, temp = a[blockIdx.x].temp;
	const int per = (V + ST - 1) / ST, lo = threadIdx.x * per, hi = min(lo + per, V);
	float mx = -INFINITY;
	double sum = 0;

	for (int i = lo; i < hi; i++)
		mx = fmaxf(mx, l[i]);
	mx = block_max(mx, sh);
	for (int i = lo; i < hi; i++)
		sum += libm_expf((l[i] - mx) / temp);
	part[threadIdx.x] = sum;
	if (threadIdx.x == 0)
		pick = V - 1;
	__syncthreads();
	if (threadIdx.x == 0) {
		/* the slices' sums in id order, then the one slice that holds r */
		double total = 0, acc = 0, r;
		for (int s = 0; s < ST; s++)
			total += part[s];
		r = a[blockIdx.x].u * total;
		for (int s = 0; s < ST; s++) {
			if (acc + part[s] > r) {
				int a = s * per, b = min(a + per, V);
				for (int i = a; i < b; i++)
					if ((acc += libm_expf((l[i] - mx) / temp)) > r) {
						pick = i;
						break;
					}
				break;
			}
			acc += part[s];
		}
	}
	__syncthreads();
	if (threadIdx.x == 0)
		out[blockIdx.x] = pick;
}

static float *part_v;
static int *part_i;
static int part_rows;

int tf_cuda_draw_reserve(int n)
{
	if (n <= part_rows)
		return 0;
	/* scratch for the first pass, kept: a captured step points at it */
	CUDA_CHECK(cudaStreamSynchronize(tf_cuda_stream_get()));
	cudaFree(part_v);
	cudaFree(part_i);
	part_v = NULL;
	part_i = NULL;
	part_rows = 0;
	CUDA_CHECK(cudaMalloc(&part_v, sizeof(float) * AB * n));
	CUDA_CHECK(cudaMalloc(&part_i, sizeof(int) * AB * n));
	part_rows = n;
	return 0;
}

int tf_cuda_argmax(const float *logits, int n, int V, int32_t *out)
{
	cudaStream_t st = tf_cuda_stream_get();

	if (n <= 0)
		return 0;
	if (n > part_rows)
		return tf_err("argmax of %d rows without tf_cuda_draw_reserve", n);
	LAUNCH(argmax_part, n * AB, ST, logits, V, part_v, part_i);
	LAUNCH(argmax_join, n, 32, part_v, part_i, V, out);
	LAUNCH_CHECK();
	return 0;
}

int tf_cuda_sample(const float *logits, int n, int V, const tf_draw_args *a, int32_t *out)
{
	if (n <= 0)
		return 0;
	LAUNCH(sample_rows, n, ST, logits, V, a, out);
	LAUNCH_CHECK();
	return 0;
}
