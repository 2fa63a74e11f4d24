/* gdn_chunk.cuh: the Gated DeltaNet delta rule of a prompt pass in chunks of
 * 64 tokens on the tensor cores (transformers' torch_chunk_gated_delta_rule) */
#ifndef TF_GDN_CHUNK_CUH
#define TF_GDN_CHUNK_CUH

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What tf_cuda_gdn_step computes (same arguments, qkv 16-byte aligned), in
 * the chunked form: the same up to rounding (products of operands carried
 * to 16 significant bits, near 1e-5 of the largest value), but a token's
 * result depends on where the chunks start, so decode windows keep
 * tf_cuda_gdn_step. Shapes it does not take (Dk other than 32, 64, 128;
 * Dv not a multiple of 32) go to tf_cuda_gdn_step. */
int tf_cuda_gdn_chunk(const float *qkv, const float *beta, const float *g, int64_t ld, float *S, int n, int Hk,
		      int Hv, int Dk, int Dv, float *o);

/* kernel settings made once at start-up (tf_cuda_init calls it) */
int tf_cuda_gdn_chunk_setup(void);

#ifdef __cplusplus
}
#endif

#endif
