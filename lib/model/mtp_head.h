/*
 * mtp_head.h: the multi-token-prediction head a Qwen3.5 checkpoint may carry
 * beside its text model (mtp.* tensors; config mtp_num_hidden_layers: 1).
 * Its form, as vLLM's qwen3_5_mtp.py and qwen3_next_mtp.py and SGLang's
 * qwen3_next_mtp.py run it (transformers skips these tensors on load):
 *
 *   x = fc([ pre_fc_norm_embedding(embed(id t+1)) , pre_fc_norm_hidden(h t) ])
 *   x = layers.0(x)             a full-attention decoder layer with its MLP,
 *                               on a KV cache of its own, at position t
 *   g = norm(x);  logits = head(g)
 *
 * h t is the model's last hidden state after its final norm at position
 * t (what those engines' models return and their MTP proposers take), so
 * the row of position t guesses the id at t + 2. The embedding and the
 * head are the model's own (mtp_use_dedicated_embeddings is false); every
 * norm is the model's RMSNorm with its (1 + w) convention. A chain feeds g
 * and the embedding of the id it guessed back in, one position on.
 */
#ifndef TF_MTP_H
#define TF_MTP_H

#include "model.h"

typedef struct {
	tf_weight fc;           /* (H, 2H): columns [0, H) the embedding's, [H, 2H) the hidden state's */
	float *norm_emb;        /* (H) factor of pre_fc_norm_embedding */
	float *norm_hid;        /* (H) factor of pre_fc_norm_hidden */
	tf_layer layer;         /* mtp.layers.0: full attention and the MLP */
	float *norm;            /* (H) factor of the final norm, before the head */
	tf_model view;          /* the model as the layer's code takes it: one full-attention
				   layer (this one), m's config, embedding and head */
} tf_mtp;

/* whether m's files hold any mtp.* tensor */
int tf_mtp_present(const tf_model *m);
/* m's head with every tensor and shape checked; NULL with a message
 * ("the model has no MTP head (mtp.* tensors)" when there is none) */
tf_mtp *tf_mtp_open(const tf_model *m);
void tf_mtp_close(tf_mtp *h);

#endif
