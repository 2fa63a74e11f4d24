/* tok_pipeline.c: normalizer, pre_tokenizer, decoder and post_processor of
 * tokenizer.json */
#include <string.h>

#include "tok_json.h"
#include "tok_pipeline.h"

int tf_tok_json_normalizer(tf_tok *t, json_t *n)
{
	static const char *forms[] = { [TF_NFC] = "NFC", [TF_NFD] = "NFD", [TF_NFKC] = "NFKC", [TF_NFKD] = "NFKD" };
	const char *type;

	if (!n || json_is_null(n))
		return 0;
	if (!(type = tf_json_type(n)))
		return tf_err("a normalizer has no type");
	if (!strcmp(type, "Sequence")) {
		json_t *list = json_object_get(n, "normalizers"), *x;
		size_t i;
		if (!json_is_array(list))
			return tf_err("normalizer Sequence has no list");
		json_array_foreach(list, i, x)
			if (tf_tok_json_normalizer(t, x) < 0)
				return -1;
		return 0;
	}
	for (int f = TF_NFC; f <= TF_NFKD; f++)
		if (!strcmp(type, forms[f])) {
			if (t->norm.n == (int)(sizeof t->norm.form / sizeof t->norm.form[0]))
				return tf_err("too many normalizers");
			t->norm.form[t->norm.n++] = f;
			return 0;
		}
	return tf_err("normalizer '%s' is not supported (only NFC, NFD, NFKC, NFKD)", type);
}

static int add_split(tf_tok *t, json_t *p)
{
	static const char *behaviors[] = {
		[TF_SPLIT_REMOVED] = "Removed", [TF_SPLIT_ISOLATED] = "Isolated",
		[TF_SPLIT_MERGED_PREV] = "MergedWithPrevious", [TF_SPLIT_MERGED_NEXT] = "MergedWithNext",
		[TF_SPLIT_CONTIGUOUS] = "Contiguous",
	};
	json_t *pat = json_object_get(p, "pattern"), *re = json_object_get(pat, "Regex"),
	       *str = json_object_get(pat, "String"), *b = json_object_get(p, "behavior");
	int behavior = -1;

	if (!json_is_string(re) && !json_is_string(str))
		return tf_err("Split has no Regex or String pattern");
	for (int k = 0; k <= TF_SPLIT_CONTIGUOUS; k++)
		if (json_is_string(b) && !strcmp(json_string_value(b), behaviors[k]))
			behavior = k;
	if (behavior < 0)
		return tf_err("Split behavior '%s' is not known",
			      json_is_string(b) ? json_string_value(b) : "(none)");
	if (json_is_string(re))
		return tf_pretok_add_split(&t->pre, json_string_value(re), json_string_length(re), 0,
					   behavior, tf_json_bool(p, "invert", 0));
	return tf_pretok_add_split(&t->pre, json_string_value(str), json_string_length(str), 1, behavior,
				   tf_json_bool(p, "invert", 0));
}

static int add_pretok(tf_tok *t, json_t *p)
{
	const char *type;

	if (!(type = tf_json_type(p)))
		return tf_err("a pre_tokenizer has no type");
	if (t->pre.n && t->pre.step[t->pre.n - 1].bytelevel)
		return tf_err("pre_tokenizer '%s' after ByteLevel is not supported", type);
	if (!strcmp(type, "Sequence")) {
		json_t *list = json_object_get(p, "pretokenizers"), *x;
		size_t i;
		if (!json_is_array(list))
			return tf_err("pre_tokenizer Sequence has no list");
		json_array_foreach(list, i, x)
			if (add_pretok(t, x) < 0)
				return -1;
		return 0;
	}
	if (!strcmp(type, "Split"))
		return add_split(t, p);
	if (!strcmp(type, "ByteLevel"))
		return tf_pretok_add_bytelevel(&t->pre, tf_json_bool(p, "add_prefix_space", 1),
					       tf_json_bool(p, "use_regex", 1));
	return tf_err("pre_tokenizer '%s' is not supported (only Split, ByteLevel, Sequence)", type);
}

int tf_tok_json_pipeline(tf_tok *t, json_t *root)
{
	json_t *pre = json_object_get(root, "pre_tokenizer"), *dec = json_object_get(root, "decoder"),
	       *post = json_object_get(root, "post_processor");
	const char *type;

	if (!json_is_object(pre))
		return tf_err("no pre_tokenizer (byte-level BPE needs ByteLevel)");
	if (add_pretok(t, pre) < 0)
		return -1;
	if (!t->pre.n || !t->pre.step[t->pre.n - 1].bytelevel)
		return tf_err("the pre_tokenizer has no ByteLevel step");
	if (!json_is_object(dec) || !(type = tf_json_type(dec)) || strcmp(type, "ByteLevel"))
		return tf_err("decoder '%s' is not supported (only ByteLevel)",
			      json_is_object(dec) && tf_json_type(dec) ? tf_json_type(dec) : "(none)");
	if (post && !json_is_null(post) && (!(type = tf_json_type(post)) || strcmp(type, "ByteLevel")))
		return tf_err("post_processor '%s' is not supported (only ByteLevel or none)",
			      type ? type : "(none)");
	return 0;
}
