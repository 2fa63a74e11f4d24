/* tok_model.c: the model section of tokenizer.json (vocab, merges) and its
 * added tokens */
#include <stdlib.h>
#include <string.h>

#include "tok_json.h"
#include "tok_model.h"

static int load_vocab(tf_tok *t, json_t *model)
{
	json_t *vocab = json_object_get(model, "vocab"), *v;
	const char *key;
	size_t klen;

	if (!json_is_object(vocab))
		return tf_err("the model has no vocab");
	json_object_keylen_foreach(vocab, key, klen, v) {
		int32_t id = -1;
		if (tf_json_id(v, "vocab entry", key, &id) < 0)
			return -1;
		tf_vocab_add(&t->vocab, key, klen, id);
	}
	return 0;
}

/* one merge, "a b" or ["a", "b"], into the ids of a, b and a+b */
static int merge_ids(tf_tok *t, json_t *m, size_t rank, int32_t ids[3])
{
	const char *part[2];
	size_t len[2];
	char *joined;

	if (json_is_string(m)) {
		const char *s = json_string_value(m), *sp = strchr(s, ' ');
		if (!sp || strchr(sp + 1, ' '))
			return tf_err("merge %zu '%s' is not two tokens", rank, s);
		part[0] = s, len[0] = sp - s;
		part[1] = sp + 1, len[1] = json_string_length(m) - len[0] - 1;
	} else if (json_is_array(m) && json_array_size(m) == 2 &&
		   json_is_string(json_array_get(m, 0)) && json_is_string(json_array_get(m, 1))) {
		for (int k = 0; k < 2; k++) {
			part[k] = json_string_value(json_array_get(m, k));
			len[k] = json_string_length(json_array_get(m, k));
		}
	} else {
		return tf_err("merge %zu is neither \"a b\" nor [\"a\", \"b\"]", rank);
	}
	joined = tf_malloc(len[0] + len[1]);
	memcpy(joined, part[0], len[0]);
	memcpy(joined + len[0], part[1], len[1]);
	ids[0] = tf_vocab_get(&t->vocab, part[0], len[0]);
	ids[1] = tf_vocab_get(&t->vocab, part[1], len[1]);
	ids[2] = tf_vocab_get(&t->vocab, joined, len[0] + len[1]);
	free(joined);
	for (int k = 0; k < 3; k++)
		if (ids[k] < 0)
			return tf_err("merge %zu: '%.*s' is not in the vocab", rank,
				      k < 2 ? (int)len[k] : (int)(len[0] + len[1]), k < 2 ? part[k] : part[0]);
	return 0;
}

int tf_tok_json_model(tf_tok *t, json_t *root)
{
	json_t *model = json_object_get(root, "model"), *merges, *v;
	const char *type;
	size_t i;

	if (!json_is_object(model))
		return tf_err("no model in the tokenizer");
	type = tf_json_type(model);
	if (type ? strcmp(type, "BPE") : !json_object_get(model, "merges"))
		return tf_err("model type '%s' is not supported (only BPE)", type ? type : "unknown");
	if (tf_json_bool(model, "byte_fallback", 0))
		return tf_err("BPE byte_fallback is not supported");
	if (json_is_number(json_object_get(model, "dropout")) &&
	    json_number_value(json_object_get(model, "dropout")) > 0)
		return tf_err("BPE dropout is not supported");
	for (const char **k = (const char *[]){ "continuing_subword_prefix", "end_of_word_suffix", NULL }; *k; k++)
		if (json_is_string(v = json_object_get(model, *k)) && json_string_length(v))
			return tf_err("BPE %s is not supported", *k);
	t->fuse_unk = tf_json_bool(model, "fuse_unk", 0);
	t->ignore_merges = tf_json_bool(model, "ignore_merges", 0);
	if (load_vocab(t, model) < 0)
		return -1;
	t->unk = -1;
	if (json_is_string(v = json_object_get(model, "unk_token")))
		t->unk = tf_vocab_get(&t->vocab, json_string_value(v), json_string_length(v));
	merges = json_object_get(model, "merges");
	if (!json_is_array(merges))
		return tf_err("the model has no merges");
	json_array_foreach(merges, i, v) {
		int32_t ids[3] = { -1, -1, -1 };
		if (merge_ids(t, v, i, ids) < 0)
			return -1;
		tf_bpe_add(&t->bpe, ids[0], ids[1], i, ids[2]);
	}
	return 0;
}

int tf_tok_json_added(tf_tok *t, json_t *root)
{
	json_t *added = json_object_get(root, "added_tokens"), *a;
	size_t i;

	if (!added || json_is_null(added))
		return 0;
	if (!json_is_array(added))
		return tf_err("added_tokens is not a list");
	json_array_foreach(added, i, a) {
		json_t *content = json_object_get(a, "content");
		tf_added_tok tok;
		const char *s;
		size_t len;

		if (!json_is_string(content))
			return tf_err("added token %zu has no content", i);
		s = json_string_value(content);
		len = json_string_length(content);
		if (tf_json_id(json_object_get(a, "id"), "added token", s, &tok.id) < 0)
			return -1;
		tok.text = (char *)s;
		tok.len = len;
		/* tokenizers gives a text the model knows the model's id */
		int32_t known = tf_vocab_get(&t->vocab, s, len);
		if (known >= 0)
			tok.id = known;
		tok.special = tf_json_bool(a, "special", 0);
		tok.lstrip = tf_json_bool(a, "lstrip", 0);
		tok.rstrip = tf_json_bool(a, "rstrip", 0);
		tok.single_word = tf_json_bool(a, "single_word", 0);
		tok.normalized = tf_json_bool(a, "normalized", !tok.special);
		if (tok.normalized) {
			const char *norm;
			long n = tf_norm_apply(&t->norm, s, len, &norm);
			if (n < 0)
				return -1;
			tf_added_add(&t->added, norm, n, &tok);
		} else {
			tf_added_add(&t->added, s, len, &tok);
		}
	}
	return 0;
}
