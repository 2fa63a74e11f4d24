/* gdn.cuh: Gated DeltaNet on the GPU (transformers'
 * Qwen3_5GatedDeltaNet.forward) */
#ifndef TF_GDN_CUH
#define TF_GDN_CUH

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* After the conv: L2-normalizes q (times 1/sqrt(Dk)) and k of every key head
 * in place in qkv (n, 2*Hk*Dk + Hv*Dv); beta = sigmoid(b) and
 * g = -exp(A_log) softplus(a + dt_bias), in place of b and a (n rows of Hv,
 * token t's at b + t * ld and a + t * ld). */
int tf_cuda_gdn_prep(float *qkv, float *b, float *a, int64_t ld, const float *A_log, const float *dt_bias,
		     int n, int Hk, int Hv, int Dk, int Dv);

/* The delta rule token by token for value heads of state S (Hv, Dk, Dv):
 *   S = exp(g) S;  d = beta (v - S^T k);  S += k d^T;  o = S^T q
 * with value head h reading key head h / (Hv / Hk); beta and g as prep left
 * them (token t's at + t * ld). o (n, Hv, Dv) f32.
 * A token's arithmetic is the same whether it comes alone or with others. */
int tf_cuda_gdn_step(const float *qkv, const float *beta, const float *g, int64_t ld, float *S, int n, int Hk,
		     int Hv, int Dk, int Dv, float *o);

#ifdef __cplusplus
}
#endif

#endif
