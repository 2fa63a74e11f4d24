/*
 * model.h: a Qwen3.5 text model's weights, as views into its store.
 *
 * Shapes use W[out, in] (y = x W^T). Small 1-D weights are converted to
 * float at load time; norm weights are stored as the factor the norm
 * multiplies by (1+w for HF files, which keep them zero-centered; w for MLX
 * files, which add the 1 when converting). transformers' Qwen3_5RMSNorm
 * computes x / sqrt(mean(x^2) + eps) * (1 + w).
 */
#ifndef TF_MODEL_H
#define TF_MODEL_H

#include "config.h"
#include "store.h"

typedef struct {
	int full;               /* 1 = gated full attention, 0 = Gated DeltaNet */
	float *in_norm;         /* (H) factor of the input RMSNorm */
	float *post_norm;       /* (H) factor of the post-attention RMSNorm */

	/* full attention */
	tf_weight q_proj;       /* (Hq*2*D, H) per head: D query rows then D gate rows */
	tf_weight k_proj;       /* (Hkv*D, H) */
	tf_weight v_proj;       /* (Hkv*D, H) */
	tf_weight o_proj;       /* (H, Hq*D) */
	float *q_norm;          /* (D) factor of the per-head query RMSNorm */
	float *k_norm;          /* (D) factor of the per-head key RMSNorm */

	/* Gated DeltaNet */
	tf_weight in_qkv;       /* (2*Hk*Dk + Hv*Dv, H) rows: q heads, k heads, v heads */
	tf_weight in_z;         /* (Hv*Dv, H) output gate */
	tf_weight in_b;         /* (Hv, H) beta logits */
	tf_weight in_a;         /* (Hv, H) decay logits */
	float *conv;            /* (conv_dim, K) depthwise taps; tap K-1 is the current token */
	float *A;               /* (Hv) the decay rate -exp(A_log), which the CPU takes */
	float *A_log;           /* (Hv) log(-A), which the GPU takes */
	float *dt_bias;         /* (Hv) */
	float *gnorm;           /* (Dv) gated RMSNorm weight, plain */
	tf_weight out_proj;     /* (H, Hv*Dv) */

	/* SwiGLU MLP */
	tf_weight gate;         /* (I, H) */
	tf_weight up;           /* (I, H) */
	tf_weight down;         /* (H, I) */
} tf_layer;

typedef struct {
	tf_config c;
	tf_store *store;
	tf_weight embed;        /* (V, H) */
	tf_weight head;         /* (V, H); the embedding itself when tied */
	float *norm;            /* (H) factor of the final RMSNorm */
	tf_layer *layer;        /* (L) */
	int conv_dim;           /* 2*Hk*Dk + Hv*Dv */
	float norm_add;         /* 1 when norm weights are stored zero-centered (HF), 0 (MLX) */
	struct tf_gpu_model *gpu;       /* the weights on the CUDA device (gpu/gpu.h), or NULL;
					   whoever put them there takes them off before closing */
} tf_model;

/* opens a checkpoint folder or bundle and checks every tensor's shape */
tf_model *tf_model_open(const char *path);
void tf_model_close(tf_model *m);

/* a decoder layer of m's geometry from the tensors named PRE + its usual
 * names ("layers.3.", "mtp.layers.0."): full attention or Gated DeltaNet,
 * every shape checked; -1 with a message naming the tensor */
int tf_layer_load(const tf_model *m, tf_layer *l, const char *pre, int full);
void tf_layer_free(tf_layer *l);
/* a 1-D float tensor of n values as floats plus add, or NULL with a message */
float *tf_model_vec(const tf_model *m, const char *name, int64_t n, float add);

#endif
