/*
 * config.h: the geometry of a Qwen3.5 text model, read from config.json.
 * The text model's fields live in "text_config" when the file is a
 * multimodal wrapper, else at the top level.
 */
#ifndef TF_CONFIG_H
#define TF_CONFIG_H

#include <jansson.h>
#include <stdint.h>

#include "rope.h"

#define TF_MAX_EOS 8

typedef struct {
	int vocab;              /* V: embedding rows and logits */
	int hidden;             /* H */
	int inter;              /* I: MLP width */
	int layers;             /* L */
	int heads;              /* Hq: full-attention query heads */
	int kv_heads;           /* Hkv */
	int head_dim;           /* D */
	int rot_dim;            /* Dr = D * partial_rotary_factor: rotated dims of each head */
	float rope_theta;
	tf_rope_table rope;     /* the rotary frequencies (default or yarn) and their scale */
	int max_pos;            /* max_position_embeddings: the model's context */
	int ctx;                /* the context enforced: max_pos, or less (tf_config_set_ctx) */
	float eps;              /* rms_norm_eps, every RMSNorm */
	int lin_k_heads;        /* Hk: Gated DeltaNet key heads */
	int lin_v_heads;        /* Hv: value heads; Hv / Hk value heads share a key head */
	int lin_k_dim;          /* Dk */
	int lin_v_dim;          /* Dv */
	int conv_k;             /* K: causal conv taps */
	int tied;               /* config says the head is the embedding */
	unsigned char *full;    /* (L) 1 = full attention, 0 = Gated DeltaNet */
	int eos[TF_MAX_EOS];    /* ids that end generation */
	int neos;
} tf_config;

/* fills c from config.json (and generation_config.json's eos ids when gen
 * is not NULL); -1 with a message naming the missing or bad field */
int tf_config_parse(json_t *cfg, json_t *gen, tf_config *c);
void tf_config_free(tf_config *c);
/* makes n (1 to the model's max_position_embeddings) the context the
 * decoders enforce; -1 with a message for one past the model's */
int tf_config_set_ctx(tf_config *c, int64_t n);
/* 0 when a sequence of n positions fits the context, else -1 with "WHAT
 * passes the model's context of C" (what: "a prompt of 9000 ids plus -n
 * 100", as the caller puts it) */
int tf_config_check_ctx(const tf_config *c, int64_t n, const char *what);
/* whether id is one of c's end-of-sequence ids */
int tf_config_is_eos(const tf_config *c, int id);
/* 0 when every one of ids (n) is in [0, vocab), else -1 with a message */
int tf_config_check_ids(const tf_config *c, const int32_t *ids, int64_t n);

#endif
