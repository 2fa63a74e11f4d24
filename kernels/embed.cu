/* embed.cu: gathers and dequantizes the rows of the tokens, a block for
 * each 256 columns of a row: a column is a chain of dependent loads (id,
 * code, scale, bias), so a thread takes one, not one in 256 of the row */
#include "common.cuh"
#include "embed.cuh"

__global__ void embed_rows(tf_weight w, const int32_t *__restrict__ ids, float *__restrict__ out)
{
	pdl_wait();
	pdl_trigger();
	const int64_t c = (int64_t)blockIdx.y * blockDim.x + threadIdx.x;

	if (c < w.cols)
		out[(int64_t)blockIdx.x * w.cols + c] = weight_at(w, ids[blockIdx.x], c);
}

int tf_cuda_embed(const tf_weight *w, const int32_t *ids, int n, float *out)
{
	if (n <= 0)
		return 0;
	if (w->cols > 65535LL * 256)
		return tf_err("embedding rows of %lld columns are too wide for the GPU kernel", (long long)w->cols);
	LAUNCH(embed_rows, dim3(n, (unsigned)((w->cols + 255) / 256)), 256, *w, ids, out);
	LAUNCH_CHECK();
	return 0;
}
