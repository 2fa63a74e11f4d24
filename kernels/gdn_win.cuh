/* gdn_win.cuh: a decode window of Gated DeltaNet in one launch: the conv,
 * the gates, the q and k norms and the delta rule (transformers'
 * Qwen3_5GatedDeltaNet.forward with torch_recurrent_gated_delta_rule) */
#ifndef TF_GDN_WIN_CUH
#define TF_GDN_WIN_CUH

#include <stdint.h>

#include "rows.cuh"

#ifdef __cplusplus
extern "C" {
#endif

/* tf_cuda_gdn_in, then tf_cuda_gdn_step, as one kernel with the same
 * arithmetic, so the same bits: o (n, Hv, Dv) and the states S and
 * conv_state updated, for n <= 16 tokens whose fused projection rows are
 * at m + t * ld (C = 2*Hk*Dk + Hv*Dv conv inputs, then Hv*Dv of z, Hv of b,
 * Hv of a; m is only read). count: Hk counters, zero, that the launch
 * leaves zero. The states are read before the kernel waits for the launch
 * before it, which therefore must not write them: a decode step has the
 * layer's other kernels between two of these (one after another, sync in
 * between). Returns 1 (nothing launched) where the shape is not one it
 * takes: Dk 32, 64 or 128, Dv a multiple of 32, K from 2 to 4.
 *
 * split non-NULL: also the input of the output projection after the gated
 * RMSNorm, as a TF_Q16_HSPLIT input (gemv_q16.cuh) of (n, Hv*Dv) with heads
 * of Dv: the int16 form of o w silu(z) per 32 columns (gw: the norm's Dv
 * factors; z: the Hv*Dv values of m's rows after the conv inputs) in
 * split's scales, sums and codes (common.cuh; its planes are not written),
 * and the sums of o^2 of each 32 columns in sq (n, Hv*Dv/32). Each block
 * owns 32 columns of a head, so it makes its own block of the form, and
 * the product, not this kernel, takes the norm across the head's blocks. */
int tf_cuda_gdn_win(const float *m, int64_t ld, int n, const float *conv_w, float *conv_state, int K,
		    const float *A_log, const float *dt_bias, float *S, int Hk, int Hv, int Dk, int Dv, float *o,
		    unsigned *count, const float *gw, uint16_t *split, float *sq);

/* whether tf_cuda_gdn_win takes a model of these shapes */
int tf_cuda_gdn_win_takes(int Hk, int Hv, int Dk, int Dv, int K);

/* the same over the segments of a pass of n <= 16 rows of several
 * sequences (rows.cuh): segment s's rows, m's rows first[s] .., on the
 * states S[s] and conv[s], their outputs at the same rows of o, split and
 * sq, each row's bits those of its sequence's window; count: Hk counters
 * a segment (nseg * Hk), zero */
int tf_cuda_gdn_win_segs(const float *m, int64_t ld, int n, const tf_gdn_segs *segs, const float *conv_w, int K,
			 const float *A_log, const float *dt_bias, int Hk, int Hv, int Dk, int Dv, float *o,
			 unsigned *count, const float *gw, uint16_t *split, float *sq);

#ifdef __cplusplus
}
#endif

#endif
