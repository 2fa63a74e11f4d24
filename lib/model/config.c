/* config.c: reading config.json into tf_config */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "config.h"

/*
 * The largest value each count may take: far past any model of the family
 * (the 27B has 64 layers, 5120 hidden, 17408 intermediate, 248320 ids), and
 * small enough that every product the loader and the kernels form from
 * them (2 * heads * head_dim, the conv width 2 * Hk * Dk + Hv * Dv, vocab *
 * hidden as int64) stays within its type, so a hostile config.json fails
 * here with its field named rather than overflowing later.
 */
static const struct { const char *key; int max; } limits[] = {
	{ "vocab_size", 1 << 22 },
	{ "hidden_size", 1 << 16 },
	{ "intermediate_size", 1 << 18 },
	{ "num_hidden_layers", 1024 },
	{ "num_attention_heads", 1024 },
	{ "num_key_value_heads", 1024 },
	{ "head_dim", 4096 },
	{ "linear_num_key_heads", 1024 },
	{ "linear_num_value_heads", 1024 },
	{ "linear_key_head_dim", 1024 },
	{ "linear_value_head_dim", 1024 },
	{ "linear_conv_kernel_dim", 64 },
	{ "full_attention_interval", 1024 },
	/* positions are int64 everywhere; a float position stays exact to 2^24
	 * and rope's angle is a float product, as transformers makes it */
	{ "max_position_embeddings", 1 << 30 },
};

static int limit_of(const char *key)
{
	for (size_t i = 0; i < sizeof limits / sizeof *limits; i++)
		if (!strcmp(limits[i].key, key))
			return limits[i].max;
	return 1 << 30;
}

static int get_int(json_t *o, const char *key, int *out, int def)
{
	json_t *v = json_object_get(o, key);
	const int max = limit_of(key);

	if (!v || json_is_null(v)) {
		if (def < 0)
			return tf_err("config.json: missing field '%s'", key);
		*out = def;
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return tf_err("config.json: field '%s' is not a non-negative integer", key);
	if (json_integer_value(v) > max)
		return tf_err("config.json: field '%s' is %lld, more than %d", key, (long long)json_integer_value(v),
			      max);
	*out = (int)json_integer_value(v);
	return 0;
}

static int get_num(json_t *o, const char *key, double *out)
{
	json_t *v = json_object_get(o, key);

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_number(v))
		return tf_err("config.json: field '%s' is not a number", key);
	*out = json_number_value(v);
	return 1;
}

int tf_config_is_eos(const tf_config *c, int id)
{
	for (int i = 0; i < c->neos; i++)
		if (c->eos[i] == id)
			return 1;
	return 0;
}

int tf_config_check_ids(const tf_config *c, const int32_t *ids, int64_t n)
{
	for (int64_t t = 0; t < n; t++)
		if (ids[t] < 0 || ids[t] >= c->vocab)
			return tf_err("id %d is out of range (vocab_size %d)", ids[t], c->vocab);
	return 0;
}

/* the end ids of v (an id or a list of them) into c; an id past int32 is
 * an error, not an id truncated into range (2^40 + 345 is not 345); one
 * past the vocabulary is kept, and never drawn */
static int add_eos(tf_config *c, json_t *v, const char *file)
{
	if (json_is_integer(v)) {
		json_int_t id = json_integer_value(v);
		if (id < 0 || id > INT32_MAX)
			return tf_err("%s: eos_token_id %lld is not a token id", file, (long long)id);
		for (int i = 0; i < c->neos; i++)
			if (c->eos[i] == id)
				return 0;
		if (c->neos < TF_MAX_EOS)
			c->eos[c->neos++] = (int)id;
	} else if (json_is_array(v)) {
		size_t i;
		json_t *e;
		json_array_foreach(v, i, e)
			if (add_eos(c, e, file) < 0)
				return -1;
	} else if (v && !json_is_null(v)) {
		return tf_err("%s: eos_token_id is not an id or a list of ids", file);
	}
	return 0;
}

static int parse(json_t *cfg, json_t *gen, tf_config *c);

int tf_config_parse(json_t *cfg, json_t *gen, tf_config *c)
{
	/* a config refused halfway keeps nothing it allocated */
	if (parse(cfg, gen, c) < 0) {
		tf_config_free(c);
		return -1;
	}
	return 0;
}

static int parse(json_t *cfg, json_t *gen, tf_config *c)
{
	json_t *tc = json_object_get(cfg, "text_config"), *rp, *rs, *lt, *v;
	double theta = 0, prf = 0.25, eps = 1e-6;
	int interval = 4, r;

	memset(c, 0, sizeof *c);
	if (!json_is_object(tc))
		tc = cfg;
	if (json_object_get(tc, "num_experts"))
		return tf_err("config.json: mixture-of-experts models are not supported");
	if (get_int(tc, "vocab_size", &c->vocab, -1) || get_int(tc, "hidden_size", &c->hidden, -1) ||
	    get_int(tc, "intermediate_size", &c->inter, -1) ||
	    get_int(tc, "num_hidden_layers", &c->layers, -1) ||
	    get_int(tc, "num_attention_heads", &c->heads, -1) ||
	    get_int(tc, "num_key_value_heads", &c->kv_heads, -1))
		return -1;
	if (!c->heads)
		return tf_err("config.json: num_attention_heads is 0");
	if (get_int(tc, "head_dim", &c->head_dim, c->hidden / c->heads) ||
	    get_int(tc, "linear_num_key_heads", &c->lin_k_heads, 0) ||
	    get_int(tc, "linear_num_value_heads", &c->lin_v_heads, 0) ||
	    get_int(tc, "linear_key_head_dim", &c->lin_k_dim, 0) ||
	    get_int(tc, "linear_value_head_dim", &c->lin_v_dim, 0) ||
	    get_int(tc, "linear_conv_kernel_dim", &c->conv_k, 4) ||
	    get_int(tc, "full_attention_interval", &interval, 4))
		return -1;

	/* the context: max_position_embeddings, transformers' default when
	 * absent; rope (and yarn's stretch of it) is made for that many */
	if (get_int(tc, "max_position_embeddings", &c->max_pos, 32768))
		return -1;
	if (!c->max_pos)
		return tf_err("config.json: max_position_embeddings is 0");
	c->ctx = c->max_pos;

	/* rope: rope_parameters, else rope_theta, else rope_scaling: the
	 * places the configs of this family keep it (in the text config, or
	 * beside it in the wrapper) */
	rp = json_object_get(tc, "rope_parameters");
	if (!json_is_object(rp))
		rp = json_object_get(tc, "rope_scaling");
	if (!json_is_object(rp) && tc != cfg)
		rp = json_object_get(cfg, "rope_parameters");
	if (!json_is_object(rp) && tc != cfg)
		rp = json_object_get(cfg, "rope_scaling");
	if (!json_is_object(rp))
		rp = NULL;
	if ((r = get_num(rp, "rope_theta", &theta)) < 0 || (!r && (r = get_num(tc, "rope_theta", &theta)) < 0))
		return -1;
	if (!r)
		return tf_err("config.json: missing field 'rope_theta' (in rope_parameters)");
	if (get_num(rp, "partial_rotary_factor", &prf) < 0 ||
	    (!json_object_get(rp, "partial_rotary_factor") && get_num(tc, "partial_rotary_factor", &prf) < 0) ||
	    get_num(tc, "rms_norm_eps", &eps) < 0)
		return -1;
	/* checked as the floats they become: rope_theta 1e-300 is 0 as a float
	 * and every logit NaN, rms_norm_eps 1e300 is inf */
	c->rope_theta = (float)theta;
	c->eps = (float)eps;
	if (!(c->rope_theta > 0) || isinf(c->rope_theta))
		return tf_err("config.json: rope_theta %g is not a positive float", theta);
	if (!(c->eps > 0) || isinf(c->eps))
		return tf_err("config.json: rms_norm_eps %g is not a positive float", eps);
	if (!(prf >= 0 && prf <= 1))
		return tf_err("config.json: partial_rotary_factor %g is not in [0, 1]", prf);
	c->rot_dim = (int)(c->head_dim * prf);
	if (c->rot_dim % 2)
		return tf_err("config.json: partial_rotary_factor %g gives an odd rotary width %d", prf, c->rot_dim);
	/* the type (and yarn's figures) from the object that names one: a
	 * config may keep theta in rope_parameters and yarn in rope_scaling,
	 * and that yarn is not to be dropped */
	rs = json_object_get(tc, "rope_scaling");
	if (json_is_object(rs) && rs != rp && (json_object_get(rs, "rope_type") || json_object_get(rs, "type")) &&
	    !(json_object_get(rp, "rope_type") || json_object_get(rp, "type")))
		rp = rs;
	if (tf_rope_parse(rp, theta, c->rot_dim, c->max_pos, &c->rope) < 0)
		return -1;

	v = json_object_get(tc, "tie_word_embeddings");
	if (!v)
		v = json_object_get(cfg, "tie_word_embeddings");
	c->tied = json_is_true(v);

	/* layer schedule: layer_types, else layer i is full when
	 * (i + 1) % full_attention_interval == 0 */
	c->full = tf_calloc(c->layers ? c->layers : 1, 1);
	lt = json_object_get(tc, "layer_types");
	if (lt) {
		if (!json_is_array(lt) || json_array_size(lt) != (size_t)c->layers)
			return tf_err("config.json: layer_types is not a list of %d layer types", c->layers);
		for (int i = 0; i < c->layers; i++) {
			const char *s = json_string_value(json_array_get(lt, i));
			if (s && !strcmp(s, "full_attention"))
				c->full[i] = 1;
			else if (!s || strcmp(s, "linear_attention"))
				return tf_err("config.json: layer_types[%d] is not 'full_attention' or 'linear_attention'", i);
		}
	} else {
		if (!interval)
			return tf_err("config.json: full_attention_interval is 0");
		for (int i = 0; i < c->layers; i++)
			c->full[i] = (i + 1) % interval == 0;
	}
	for (int i = 0; i < c->layers; i++)
		if (!c->full[i] && (!c->lin_k_heads || !c->lin_v_heads || !c->lin_k_dim || !c->lin_v_dim ||
				    c->lin_v_heads % c->lin_k_heads || !c->conv_k))
			return tf_err("config.json: linear attention layers need linear_num_key_heads, "
				      "linear_num_value_heads (a multiple of it), linear_key_head_dim, "
				      "linear_value_head_dim and linear_conv_kernel_dim");
	if (!c->vocab || !c->hidden || !c->layers || !c->kv_heads || !c->head_dim || c->heads % c->kv_heads)
		return tf_err("config.json: vocab_size, hidden_size, num_hidden_layers, num_key_value_heads "
			      "and head_dim must be positive, num_attention_heads a multiple of num_key_value_heads");

	if (add_eos(c, json_object_get(tc, "eos_token_id"), "config.json") < 0 ||
	    (tc != cfg && add_eos(c, json_object_get(cfg, "eos_token_id"), "config.json") < 0) ||
	    (gen && add_eos(c, json_object_get(gen, "eos_token_id"), "generation_config.json") < 0))
		return -1;
	return 0;
}

void tf_config_free(tf_config *c)
{
	free(c->full);
	c->full = NULL;
	tf_rope_free(&c->rope);
}

int tf_config_set_ctx(tf_config *c, int64_t n)
{
	if (n < 1)
		return tf_err("a context of %lld positions is not positive", (long long)n);
	if (n > c->max_pos)
		return tf_err("--ctx %lld is more than the model's context of %d (max_position_embeddings)",
			      (long long)n, c->max_pos);
	c->ctx = (int)n;
	return 0;
}

int tf_config_check_ctx(const tf_config *c, int64_t n, const char *what)
{
	if (n <= c->ctx)
		return 0;
	if (c->ctx < c->max_pos)
		return tf_err("%s passes the context of %d that --ctx set", what, c->ctx);
	return tf_err("%s passes the model's context of %d", what, c->ctx);
}
