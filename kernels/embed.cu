/* embed.cu: one block per token gathers and dequantizes its row */
#include "common.cuh"
#include "embed.cuh"

__global__ void embed_rows(tf_weight w, const int32_t *__restrict__ ids, float *__restrict__ out)
{
	pdl_wait();
	pdl_trigger();
	const int64_t row = ids[blockIdx.x];
	float *o = out + (int64_t)blockIdx.x * w.cols;

	for (int64_t c = threadIdx.x; c < w.cols; c += blockDim.x)
		o[c] = weight_at(w, row, c);
}

int tf_cuda_embed(const tf_weight *w, const int32_t *ids, int n, float *out)
{
	if (n <= 0)
		return 0;
	LAUNCH(embed_rows, n, 256, *w, ids, out);
	LAUNCH_CHECK();
	return 0;
}
