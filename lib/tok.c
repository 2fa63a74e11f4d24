/* tok.c: loading tokenizer.json (jansson) into a tf_tok */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "err.h"
#include "map.h"
#include "tok.h"
#include "tok_bytes.h"
#include "tok_dec.h"

/* every loader step returns 0 or -1 with the message set; the name of the
 * file is put in front once, by tf_tok_load_json */

static const char *type_of(json_t *o)
{
	json_t *t = json_object_get(o, "type");

	return json_is_string(t) ? json_string_value(t) : NULL;
}

/* a boolean field that may be absent (then def) */
static int get_bool(json_t *o, const char *key, int def)
{
	json_t *v = json_object_get(o, key);

	return json_is_boolean(v) ? json_is_true(v) : def;
}

static int get_id(json_t *v, const char *what, const char *key, int32_t *id)
{
	json_int_t x;

	if (!json_is_integer(v))
		return tf_err("%s '%s' has no integer id", what, key);
	x = json_integer_value(v);
	if (x < 0 || x >= TF_TOK_MAXID)
		return tf_err("%s '%s' has id %lld, out of range", what, key, (long long)x);
	*id = x;
	return 0;
}

static int load_vocab(tf_tok *t, json_t *model)
{
	json_t *vocab = json_object_get(model, "vocab"), *v;
	const char *key;
	size_t klen;

	if (!json_is_object(vocab))
		return tf_err("the model has no vocab");
	json_object_keylen_foreach(vocab, key, klen, v) {
		int32_t id;
		if (get_id(v, "vocab entry", key, &id) < 0)
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

static int load_model(tf_tok *t, json_t *root)
{
	json_t *model = json_object_get(root, "model"), *merges, *v;
	const char *type;
	size_t i;

	if (!json_is_object(model))
		return tf_err("no model in the tokenizer");
	type = type_of(model);
	if (type ? strcmp(type, "BPE") : !json_object_get(model, "merges"))
		return tf_err("model type '%s' is not supported (only BPE)", type ? type : "unknown");
	if (get_bool(model, "byte_fallback", 0))
		return tf_err("BPE byte_fallback is not supported");
	if (json_is_number(json_object_get(model, "dropout")) &&
	    json_number_value(json_object_get(model, "dropout")) > 0)
		return tf_err("BPE dropout is not supported");
	for (const char **k = (const char *[]){ "continuing_subword_prefix", "end_of_word_suffix", NULL }; *k; k++)
		if (json_is_string(v = json_object_get(model, *k)) && json_string_length(v))
			return tf_err("BPE %s is not supported", *k);
	t->fuse_unk = get_bool(model, "fuse_unk", 0);
	t->ignore_merges = get_bool(model, "ignore_merges", 0);
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

static int load_added(tf_tok *t, json_t *root)
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
		if (get_id(json_object_get(a, "id"), "added token", s, &tok.id) < 0)
			return -1;
		tok.text = (char *)s;
		tok.len = len;
		/* tokenizers gives a text the model knows the model's id */
		int32_t known = tf_vocab_get(&t->vocab, s, len);
		if (known >= 0)
			tok.id = known;
		tok.special = get_bool(a, "special", 0);
		tok.lstrip = get_bool(a, "lstrip", 0);
		tok.rstrip = get_bool(a, "rstrip", 0);
		tok.single_word = get_bool(a, "single_word", 0);
		tok.normalized = get_bool(a, "normalized", !tok.special);
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

static int add_normalizer(tf_tok *t, json_t *n)
{
	static const char *forms[] = { [TF_NFC] = "NFC", [TF_NFD] = "NFD", [TF_NFKC] = "NFKC", [TF_NFKD] = "NFKD" };
	const char *type;

	if (!n || json_is_null(n))
		return 0;
	if (!(type = type_of(n)))
		return tf_err("a normalizer has no type");
	if (!strcmp(type, "Sequence")) {
		json_t *list = json_object_get(n, "normalizers"), *x;
		size_t i;
		if (!json_is_array(list))
			return tf_err("normalizer Sequence has no list");
		json_array_foreach(list, i, x)
			if (add_normalizer(t, x) < 0)
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
					   behavior, get_bool(p, "invert", 0));
	return tf_pretok_add_split(&t->pre, json_string_value(str), json_string_length(str), 1, behavior,
				   get_bool(p, "invert", 0));
}

static int add_pretok(tf_tok *t, json_t *p)
{
	const char *type;

	if (!(type = type_of(p)))
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
		return tf_pretok_add_bytelevel(&t->pre, get_bool(p, "add_prefix_space", 1),
					       get_bool(p, "use_regex", 1));
	return tf_err("pre_tokenizer '%s' is not supported (only Split, ByteLevel, Sequence)", type);
}

static int load_pipeline(tf_tok *t, json_t *root)
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
	if (!json_is_object(dec) || !(type = type_of(dec)) || strcmp(type, "ByteLevel"))
		return tf_err("decoder '%s' is not supported (only ByteLevel)",
			      json_is_object(dec) && type_of(dec) ? type_of(dec) : "(none)");
	if (post && !json_is_null(post) && (!(type = type_of(post)) || strcmp(type, "ByteLevel")))
		return tf_err("post_processor '%s' is not supported (only ByteLevel or none)",
			      type ? type : "(none)");
	return 0;
}

static void finish(tf_tok *t)
{
	long top = -1;

	for (int b = 0; b < 256; b++) {
		char s[4];
		size_t n = tf_bytelevel_encode((char *)&(unsigned char){ b }, 1, s);
		t->byte_id[b] = tf_vocab_get(&t->vocab, s, n);
	}
	for (size_t i = 0; i < t->vocab.n; i++)
		if (t->vocab.ent[i].id > top)
			top = t->vocab.ent[i].id;
	for (size_t i = 0; i < t->added.n; i++)
		if (t->added.tok[i].id > top)
			top = t->added.tok[i].id;
	t->n_vocab = top + 1;
	tf_tok_dec_build(t);
}

tf_tok *tf_tok_load_json(const char *json, size_t len, const char *name)
{
	json_error_t je;
	json_t *root = json_loadb(json, len, 0, &je);
	tf_tok *t;

	if (!root) {
		tf_err("'%s' is not JSON: line %d column %d: %s", name, je.line, je.column, je.text);
		return NULL;
	}
	t = tf_calloc(1, sizeof *t);
	t->name = tf_strdup(name);
	tf_vocab_init(&t->vocab);
	tf_bpe_init(&t->bpe);
	tf_added_init(&t->added);
	tf_pretok_init(&t->pre);
	tf_cache_init(&t->cache);
	if (!json_is_object(root)) {
		tf_err("the top level is not an object");
		goto fail;
	}
	/* the normalizer comes before the added tokens: those marked
	 * normalized are stored in normal form */
	if (add_normalizer(t, json_object_get(root, "normalizer")) < 0 || load_model(t, root) < 0 ||
	    load_pipeline(t, root) < 0 || load_added(t, root) < 0)
		goto fail;
	json_decref(root);
	finish(t);
	return t;
fail:
	tf_errpre("'%s'", name);
	json_decref(root);
	tf_tok_free(t);
	return NULL;
}

tf_tok *tf_tok_load(const char *model)
{
	struct stat st;
	char *path;
	tf_map *m;
	tf_tok *t;

	if (stat(model, &st) < 0)
		return tf_err("cannot open '%s':", model), NULL;
	if (S_ISDIR(st.st_mode)) {
		path = tf_malloc(strlen(model) + 32);
		sprintf(path, "%s/tokenizer.json", model);
	} else {
		path = tf_strdup(model);
	}
	if (!(m = tf_map_open(path))) {
		free(path);
		return NULL;
	}
	t = tf_tok_load_json(m->data ? m->data : "", m->size, path);
	tf_map_close(m);
	free(path);
	return t;
}

void tf_tok_free(tf_tok *t)
{
	if (!t)
		return;
	tf_vocab_free(&t->vocab);
	tf_bpe_free(&t->bpe);
	tf_added_free(&t->added);
	tf_norm_free(&t->norm);
	tf_pretok_free(&t->pre);
	tf_cache_free(&t->cache);
	free(t->piece);
	free(t->piece_off);
	free(t->piece_flag);
	free(t->sym);
	free(t->spelled);
	free(t->name);
	free(t);
}

int32_t tf_tok_added_id(const tf_tok *t, const char *content)
{
	for (int k = 0; k < 2; k++) {
		int32_t v = tf_vocab_get(&t->added.prefix[k], content, strlen(content));
		if (v > 0)
			return t->added.tok[v - 1].id;
	}
	return -1;
}
