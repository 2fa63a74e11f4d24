/* attn_prompt.cuh: causal gated attention of a prompt pass on the tensor cores */
#ifndef TF_ATTN_PROMPT_CUH
#define TF_ATTN_PROMPT_CUH

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* whether tf_cuda_attn_prompt takes head_dim D with Hq/Hkv heads (D 64,
 * 128 or 256; Hq a multiple of Hkv) */
int tf_cuda_attn_prompt_takes(int D, int Hq, int Hkv);

/* tf_cuda_attention's contract (attn.cuh) for any n >= 1, a block of
 * query rows at a time. A row's result is the same whatever n is and
 * whichever rows share its block (cache tiles past its own last row add
 * exactly nothing), but agrees with attn_decode's only to about 2^-16 of
 * its size: the products are summed in another order, on the tensor cores */
int tf_cuda_attn_prompt(const float *qg, int64_t qstride, const float *kc, const float *vc, const int64_t *pos,
			int n, int Hq, int Hkv, int D, uint16_t *out);

/* kernel settings made once at start-up (tf_cuda_init calls it): the
 * kernels take more than 48 KB of shared memory */
int tf_cuda_attn_prompt_setup(void);

#ifdef __cplusplus
}
#endif

#endif
