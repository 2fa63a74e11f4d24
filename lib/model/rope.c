/* rope.c: rotary frequency tables, plain and yarn (rope.h) */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "rope.h"

void tf_rope_default(tf_rope_table *r, float theta, int rot)
{
	int half = rot / 2;

	memset(r, 0, sizeof *r);
	r->type = TF_ROPE_DEFAULT;
	r->theta = theta;
	r->rot = rot;
	r->scale = 1.0f;
	r->inv = tf_malloc((half ? half : 1) * sizeof *r->inv);
	/* the expression the CPU and GPU paths always used: the same bits */
	for (int j = 0; j < half; j++)
		r->inv[j] = 1.0f / powf(theta, (float)(2 * j) / (float)rot);
}

/* the dimension whose pair turns n times in ctx positions, in double */
static double correction_dim(double n, int dim, double base, int ctx)
{
	return dim * log(ctx / (n * 2 * M_PI)) / (2 * log(base));
}

/* transformers' get_mscale: the attention factor of a stretch by s */
static double mscale_of(double s, double m)
{
	return s <= 1 ? 1.0 : 0.1 * m * log(s) + 1.0;
}

int tf_rope_yarn(tf_rope_table *r, double theta, int rot, double factor, int orig_ctx, double beta_fast,
		 double beta_slow, double attn, int truncate)
{
	int half = rot / 2;
	double low, high;

	/* checked as the floats they become: a factor of 1e-300 is 0 as a
	 * float, and every frequency it divides infinite */
	if (!((float)factor > 0) || isinf((float)factor))
		return tf_err("config.json: rope_parameters.factor %g is not a positive number", factor);
	if (orig_ctx < 1)
		return tf_err("config.json: rope_parameters.original_max_position_embeddings %d is not positive",
			      orig_ctx);
	if (!(beta_fast > 0) || !(beta_slow > 0) || isinf(beta_fast) || isinf(beta_slow))
		return tf_err("config.json: rope_parameters.beta_fast %g and beta_slow %g are not positive numbers",
			      beta_fast, beta_slow);
	if (attn < 0)
		attn = mscale_of(factor, 1);
	else if (!((float)attn > 0) || isinf((float)attn))
		return tf_err("config.json: rope_parameters.attention_factor %g is not a positive number", attn);
	tf_rope_default(r, (float)theta, rot);
	r->type = TF_ROPE_YARN;
	r->factor = factor;
	r->orig_ctx = orig_ctx;
	r->beta_fast = beta_fast;
	r->beta_slow = beta_slow;
	r->truncate = truncate;
	r->scale = (float)attn;

	/* the pairs turning more than beta_fast times in the original
	 * context keep their frequency, those turning fewer than beta_slow
	 * times are slowed by factor, a linear ramp between */
	low = correction_dim(beta_fast, rot, theta, orig_ctx);
	high = correction_dim(beta_slow, rot, theta, orig_ctx);
	if (truncate) {
		low = floor(low);
		high = ceil(high);
	}
	if (low < 0)
		low = 0;
	if (high > rot - 1)
		high = rot - 1;
	if (low == high)
		high += 0.001;  /* transformers' guard against a zero-width ramp */
	/* fp32 from here, each step rounded as torch rounds it */
	for (int j = 0; j < half; j++) {
		float pos = powf((float)theta, (float)(2 * j) / (float)rot);
		float extra = 1.0f / pos, inter = 1.0f / ((float)factor * pos);
		float ramp = ((float)j - (float)low) / (float)(high - low);
		ramp = ramp < 0 ? 0.0f : ramp > 1 ? 1.0f : ramp;
		float keep = 1.0f - ramp;       /* the share of the plain frequency */
		r->inv[j] = inter * (1.0f - keep) + extra * keep;
	}
	return 0;
}

/* a number field of rp: 1 read, 0 absent or null, -1 not a number */
static int num(json_t *rp, const char *key, double *out)
{
	json_t *v = json_object_get(rp, key);

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_number(v))
		return tf_err("config.json: rope_parameters.%s is not a number", key);
	*out = json_number_value(v);
	return 1;
}

int tf_rope_parse(json_t *rp, double theta, int rot, int max_pos, tf_rope_table *r)
{
	json_t *t = json_object_get(rp, "rope_type");
	const char *type;
	double factor = 0, orig = 0, fast = 0, slow = 0, attn = 0, ms = 0, msa = 0;
	int rc, ra;

	memset(r, 0, sizeof *r);
	if (!t)
		t = json_object_get(rp, "type");        /* the older key */
	if (t && !json_is_string(t))
		return tf_err("config.json: rope_type is not a string");
	type = t ? json_string_value(t) : "default";
	if (!strcmp(type, "default") || !strcmp(type, "mrope")) {
		tf_rope_default(r, (float)theta, rot);
		return 0;
	}
	if (strcmp(type, "yarn"))
		return tf_err("config.json: rope_type '%s' is not supported (default, mrope and yarn are)", type);

	if (num(rp, "factor", &factor) < 0 || (rc = num(rp, "original_max_position_embeddings", &orig)) < 0 ||
	    num(rp, "beta_fast", &fast) < 0 || num(rp, "beta_slow", &slow) < 0 ||
	    (ra = num(rp, "attention_factor", &attn)) < 0 || num(rp, "mscale", &ms) < 0 ||
	    num(rp, "mscale_all_dim", &msa) < 0)
		return -1;
	if (!rc)
		return tf_err("config.json: yarn needs rope_parameters.original_max_position_embeddings");
	if (!(orig >= 1 && orig <= 1 << 30) || orig != floor(orig))
		return tf_err("config.json: rope_parameters.original_max_position_embeddings %g is not a positive "
			      "integer", orig);
	/* transformers: no factor is the ratio of the two contexts */
	if (!json_object_get(rp, "factor") || json_is_null(json_object_get(rp, "factor")))
		factor = (double)max_pos / orig;
	/* and 0 or null betas are its defaults, 32 and 1 */
	if (!fast)
		fast = 32;
	if (!slow)
		slow = 1;
	if (ra && !(attn > 0))
		return tf_err("config.json: rope_parameters.attention_factor %g is not a positive number", attn);
	if (!ra && ms && msa && factor > 0) {
		attn = mscale_of(factor, ms) / mscale_of(factor, msa);
		if (!(attn > 0))
			return tf_err("config.json: rope_parameters.mscale %g and mscale_all_dim %g give an attention "
				      "factor of %g", ms, msa, attn);
	} else if (!ra) {
		attn = -1;
	}
	t = json_object_get(rp, "truncate");
	if (t && !json_is_boolean(t) && !json_is_null(t))
		return tf_err("config.json: rope_parameters.truncate is not true or false");
	if (tf_rope_yarn(r, theta, rot, factor, (int)orig, fast, slow, attn, !t || !json_is_false(t)) < 0) {
		tf_rope_free(r);
		return -1;
	}
	return 0;
}

void tf_rope_free(tf_rope_table *r)
{
	free(r->inv);
	r->inv = NULL;
}
