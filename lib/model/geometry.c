/* geometry.c: the published geometries, written once */
#include <string.h>

#include "base/err.h"
#include "geometry.h"

/*
 * What the sizes differ in: H, L, Hq, Hkv, I, Hv and whether the head is
 * the embedding. They share V 248320, D 256, Hk 16, Dk = Dv = 128, a conv
 * of 4 taps, full attention every fourth layer, rotary over a quarter of
 * each head at theta 1e7, eps 1e-6 and the end id 248044.
 */
static const struct geom {
	const char *name;
	int H, L, Hq, Hkv, I, Hv, tied;
} geoms[] = {
	{ "qwen3.5-0.8b", 1024, 24, 8, 2, 3584, 16, 1 },
	{ "qwen3.5-2b", 2048, 24, 8, 2, 6144, 16, 1 },
	{ "qwen3.5-4b", 2560, 32, 16, 4, 9216, 32, 1 },
	{ "qwen3.5-9b", 4096, 32, 16, 4, 12288, 32, 0 },
	{ "qwen3.5-27b", 5120, 64, 24, 4, 17408, 48, 0 },
};

json_t *tf_geometry_config(const char *name)
{
	for (size_t i = 0; i < sizeof geoms / sizeof *geoms; i++) {
		const struct geom *g = &geoms[i];
		if (strcmp(g->name, name))
			continue;
		return json_pack("{s:[s], s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, "
				 "s:s, s:f, s:i, s:{s:s, s:f, s:f}, s:b, s:b, s:i, s:s}",
				 "architectures", "Qwen3_5ForCausalLM", "model_type", "qwen3_5_text",
				 "vocab_size", 248320, "hidden_size", g->H, "intermediate_size", g->I,
				 "num_hidden_layers", g->L, "num_attention_heads", g->Hq,
				 "num_key_value_heads", g->Hkv, "head_dim", 256, "linear_num_key_heads", 16,
				 "linear_num_value_heads", g->Hv, "linear_key_head_dim", 128,
				 "linear_value_head_dim", 128, "linear_conv_kernel_dim", 4,
				 "full_attention_interval", 4, "hidden_act", "silu", "rms_norm_eps", 1e-6,
				 "max_position_embeddings", 262144, "rope_parameters", "rope_type", "default", "rope_theta", 1e7,
				 "partial_rotary_factor", 0.25, "tie_word_embeddings", g->tied,
				 "attention_bias", 0, "eos_token_id", 248044, "dtype", "bfloat16");
	}
	tf_err("unknown geometry '%s' (" TF_GEOMETRY_NAMES ")", name);
	return NULL;
}
