/*
 * rope: the rotary tables of model/rope.h. The plain table is the
 * expression the forward always used, bit for bit; yarn's tables equal
 * transformers' _compute_yarn_parameters (5.25.0, printed by
 * t/helper/yarn-fixture.py and by the same call with the figures below)
 * for tiny-q35's 16 rotated dims at theta 1e4, factor 4 over an original
 * 64; config.json's rope fields and context are read, and refused with the
 * field named.
 */
#include <math.h>
#include <string.h>

#include "base/err.h"
#include "model/config.h"
#include "model/rope.h"
#include "tap.h"

/* a table against transformers' figures (%.9g: each float read back exactly) */
static int same(const tf_rope_table *r, const float *want, float scale)
{
	for (int j = 0; j < r->rot / 2; j++)
		if (r->inv[j] != want[j]) {
			diag("inv[%d] %.9g, transformers %.9g", j, r->inv[j], want[j]);
			return 0;
		}
	if (r->scale != scale)
		diag("scale %.9g, transformers %.9g", r->scale, scale);
	return r->scale == scale;
}

/* a config.json of tiny-q35's shape with `extra` fields in the text config */
static int parse(const char *rope, const char *extra, tf_config *c)
{
	char buf[2048];
	json_error_t e;

	snprintf(buf, sizeof buf,
		 "{\"vocab_size\": 1024, \"hidden_size\": 256, \"intermediate_size\": 512, "
		 "\"num_hidden_layers\": 4, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "
		 "\"head_dim\": 64, \"linear_num_key_heads\": 2, \"linear_num_value_heads\": 4, "
		 "\"linear_key_head_dim\": 32, \"linear_value_head_dim\": 32, %s%s"
		 "\"rope_parameters\": {\"rope_theta\": 10000.0, \"partial_rotary_factor\": 0.25%s}}",
		 extra, *extra ? ", " : "", rope);
	json_t *j = json_loads(buf, 0, &e);
	int rc = tf_config_parse(j, NULL, c);
	json_decref(j);
	return rc;
}

static int refused(const char *rope, const char *extra, const char *msg)
{
	tf_config c;
	int rc = parse(rope, extra, &c);

	if (rc == 0) {
		tf_config_free(&c);
		return 0;
	}
	if (!strstr(tf_errmsg(), msg))
		diag("message: %s", tf_errmsg());
	return strstr(tf_errmsg(), msg) != NULL;
}

int main(void)
{
	static const float yarn4[8] = { 1, 0.237170815f, 0.049999997f, 0.00790569466f, 0.00249999994f,
					0.000790569466f, 0.000250000012f, 7.90569466e-05f };
	static const float untrunc[8] = { 1, 0.198583528f, 0.0255952496f, 0.00790569466f, 0.00249999994f,
					  0.000790569466f, 0.000250000012f, 7.90569466e-05f };
	static const float betas[8] = { 1, 0.19171688f, 0.0399999991f, 0.0126491114f, 0.00400000019f,
					0.00126491114f, 0.00039999999f, 0.000126491112f };
	tf_rope_table r;
	tf_config c;
	int good = 1;

	plan(18);

	tf_rope_default(&r, 1e7f, 64);
	for (int j = 0; j < 32; j++)
		good &= r.inv[j] == 1.0f / powf(1e7f, (float)(2 * j) / 64.0f);
	ok(good && r.scale == 1.0f && r.type == TF_ROPE_DEFAULT, "default: inv[j] = 1 / theta^(2j/rot), scale 1");
	tf_rope_free(&r);

	ok(tf_rope_yarn(&r, 1e4, 16, 4, 64, 32, 1, -1, 1) == 0 && same(&r, yarn4, 1.13862944f),
	   "yarn factor 4 over 64: transformers' table and attention factor 0.1 ln 4 + 1");
	tf_rope_free(&r);
	ok(tf_rope_yarn(&r, 1e4, 16, 4, 64, 32, 1, -1, 0) == 0 && same(&r, untrunc, 1.13862944f),
	   "yarn, truncate false: the ramp between fractional dims");
	tf_rope_free(&r);
	ok(tf_rope_yarn(&r, 1e4, 16, 2.5, 64, 8, 2, -1, 0) == 0 && same(&r, betas, 1.09162907f),
	   "yarn, beta_fast 8, beta_slow 2, factor 2.5");
	tf_rope_free(&r);

	ok(parse(", \"rope_type\": \"yarn\", \"factor\": 4.0, \"original_max_position_embeddings\": 64",
		 "\"max_position_embeddings\": 256", &c) == 0 &&
	   c.rope.type == TF_ROPE_YARN && same(&c.rope, yarn4, 1.13862944f) && c.max_pos == 256 && c.ctx == 256,
	   "config.json's yarn rope_parameters make the table; max_position_embeddings the context");
	tf_config_free(&c);
	ok(parse(", \"rope_type\": \"yarn\", \"original_max_position_embeddings\": 64, \"mscale\": 1.0, "
		 "\"mscale_all_dim\": 0.5", "\"max_position_embeddings\": 256", &c) == 0 &&
	   same(&c.rope, yarn4, 1.06482163f),
	   "no factor: the ratio of the contexts; mscale and mscale_all_dim set the attention factor");
	tf_config_free(&c);
	ok(parse(", \"rope_type\": \"yarn\", \"factor\": 4.0, \"original_max_position_embeddings\": 64, "
		 "\"attention_factor\": 1.5", "", &c) == 0 && c.rope.scale == 1.5f,
	   "attention_factor given is the scale");
	tf_config_free(&c);

	ok(parse(", \"rope_type\": \"default\", \"mrope_section\": [11, 11, 10]", "", &c) == 0 &&
	   c.rope.type == TF_ROPE_DEFAULT && c.max_pos == 32768 && c.ctx == 32768,
	   "default rope with an mrope_section is plain rope; no max_position_embeddings: 32768");
	tf_config_free(&c);
	ok(parse(", \"type\": \"mrope\"", "\"max_position_embeddings\": 8192", &c) == 0 &&
	   c.rope.type == TF_ROPE_DEFAULT && c.ctx == 8192, "the older key 'type', mrope: plain rope");
	{
		int k = tf_config_set_ctx(&c, 100) == 0 && c.ctx == 100 && c.max_pos == 8192;
		k = k && tf_config_check_ctx(&c, 100, "x") == 0 && tf_config_check_ctx(&c, 101, "a prompt of 101 ids") < 0 &&
		    strstr(tf_errmsg(), "a prompt of 101 ids passes the context of 100 that --ctx set");
		k = k && tf_config_set_ctx(&c, 8193) < 0 &&
		    strstr(tf_errmsg(), "--ctx 8193 is more than the model's context of 8192");
		c.ctx = 8192;
		k = k && tf_config_check_ctx(&c, 9000, "a prompt of 9000 ids") < 0 &&
		    strstr(tf_errmsg(), "a prompt of 9000 ids passes the model's context of 8192");
		ok(k, "--ctx below the model's is set, above refused; a length past it named");
	}
	tf_config_free(&c);

	ok(refused(", \"rope_type\": \"linear\", \"factor\": 2.0", "", "rope_type 'linear' is not supported"),
	   "rope_type linear is refused");
	ok(refused(", \"rope_type\": \"longrope\"", "", "rope_type 'longrope' is not supported"),
	   "rope_type longrope is refused");
	ok(refused(", \"rope_type\": \"yarn\", \"factor\": 4.0", "", "original_max_position_embeddings"),
	   "yarn without original_max_position_embeddings is refused");
	ok(refused(", \"rope_type\": \"yarn\", \"factor\": -1, \"original_max_position_embeddings\": 64", "",
		   "factor -1 is not a positive number"),
	   "a negative yarn factor is refused");
	ok(refused(", \"rope_type\": \"yarn\", \"factor\": 1e-300, \"original_max_position_embeddings\": 64", "",
		   "factor 1e-300 is not a positive number"),
	   "a yarn factor that is 0 as a float is refused");
	ok(refused(", \"rope_type\": \"yarn\", \"factor\": 4, \"original_max_position_embeddings\": 64, "
		   "\"mscale\": -20, \"mscale_all_dim\": 1", "", "give an attention factor of"),
	   "mscale figures that give a negative attention factor are refused");
	ok(refused(", \"rope_type\": 7", "", "rope_type is not a string"), "a rope_type that is not a string");
	ok(refused("", "\"max_position_embeddings\": 0", "max_position_embeddings is 0"),
	   "max_position_embeddings 0 is refused");
	return done();
}
