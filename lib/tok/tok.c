/* tok.c: a tf_tok from tokenizer.json, its sections read by tok_model.c and
 * tok_pipeline.c */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/err.h"
#include "base/map.h"
#include "model/bundle.h"
#include "model/gguf.h"
#include "model/gguf_qwen35.h"
#include "tok.h"
#include "tok_bytes.h"
#include "tok_dec.h"
#include "tok_model.h"
#include "tok_pipeline.h"

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
	if (tf_tok_json_normalizer(t, json_object_get(root, "normalizer")) < 0 ||
	    tf_tok_json_model(t, root) < 0 || tf_tok_json_pipeline(t, root) < 0 ||
	    tf_tok_json_added(t, root) < 0)
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

/* the tokenizer.json text a tf-bundle(5) carries in its manifest */
static tf_tok *load_bundle(const char *path)
{
	json_t *m = tf_bundle_manifest(path, NULL), *v;
	tf_tok *t;

	if (!m)
		return NULL;
	v = json_object_get(m, "tokenizer");
	if (!json_is_string(v)) {
		json_decref(m);
		tf_err("'%s': the bundle carries no tokenizer", path);
		return NULL;
	}
	t = tf_tok_load_json(json_string_value(v), json_string_length(v), path);
	json_decref(m);
	return t;
}

/* the tokenizer a GGUF's tokenizer.ggml.* keys describe */
static tf_tok *load_gguf(const char *path)
{
	tf_gguf *g = tf_gguf_open(path);
	char *json;
	tf_tok *t = NULL;

	if (!g)
		return NULL;
	json = tf_gguf_tokenizer_json(g);
	if (json)
		t = tf_tok_load_json(json, strlen(json), path);
	else if (!tf_gguf_find(g, "tokenizer.ggml.tokens"))
		tf_err("'%s': the GGUF carries no tokenizer", path);
	free(json);
	tf_gguf_close(g);
	return t;
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
		/* a folder of one GGUF (or one split set) and no tokenizer.json */
		if (stat(path, &st) < 0) {
			int err;
			char *g = tf_gguf_in_dir(model, &err);
			if (g || err) {
				free(path);
				t = g ? load_gguf(g) : NULL;
				free(g);
				return t;
			}
		}
	} else {
		int bundle = tf_bundle_is(model), gguf = 0;
		if (bundle < 0)
			return NULL;
		if (bundle)
			return load_bundle(model);
		if (S_ISREG(st.st_mode) && (gguf = tf_gguf_is(model)) < 0)
			return NULL;
		if (gguf)
			return load_gguf(model);
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
	if (!t)
		return -1;
	for (int k = 0; k < 2; k++) {
		int32_t v = tf_added_find(&t->added, k, content, strlen(content));
		if (v > 0)
			return t->added.tok[v - 1].id;
	}
	return -1;
}
