/*
 * gguf_tok.c: the tokenizer.json that a GGUF's tokenizer.ggml.* keys stand
 * for, so tf-tok and tf-run read a GGUF's vocabulary through the same
 * parser as a checkpoint's.
 *
 * llama.cpp's converter writes a Hugging Face byte-level BPE as
 * tokenizer.ggml.model "gpt2", the tokens by id (tokens), their kinds
 * (token_type: 1 normal, 3 control for special added tokens, 4
 * user-defined for the other added tokens), the merges as "a b" strings,
 * and the pre-tokenizer by name (pre). The names taken are those of the
 * Qwen tokenizers, whose regexes are llama.cpp's for them (llama-vocab.cpp,
 * LLAMA_VOCAB_PRE_TYPE_QWEN2 and _QWEN35); their normalizer is NFC.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "gguf.h"
#include "gguf_qwen35.h"

static const struct { const char *name, *regex; } pres[] = {
	{ "qwen2", "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
		   "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" },
	{ "qwen35", "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+"
		    "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" },
};

enum { TT_NORMAL = 1, TT_UNKNOWN, TT_CONTROL, TT_USER, TT_UNUSED, TT_BYTE };

static const tf_gguf_kv *array_of(const tf_gguf *g, const char *key, int etype, uint64_t n)
{
	const tf_gguf_kv *kv = tf_gguf_find(g, key);

	if (!kv)
		return tf_err("'%s': missing metadata '%s'", g->path, key), NULL;
	if (kv->type != TF_GGUF_ARRAY || (etype >= 0 && kv->etype != etype) ||
	    (etype < 0 && (kv->etype == TF_GGUF_STRING || kv->etype == TF_GGUF_F32 || kv->etype == TF_GGUF_F64)))
		return tf_err("'%s': metadata '%s' is not an array of %s", g->path, key,
			      etype == TF_GGUF_STRING ? "strings" : "integers"), NULL;
	if (n && kv->count != n)
		return tf_err("'%s': metadata '%s' has %llu entries, the vocabulary %llu", g->path, key,
			      (unsigned long long)kv->count, (unsigned long long)n), NULL;
	return kv;
}

static json_t *jstr(tf_gguf_str s)
{
	/* NULL for text that is not UTF-8: the caller names it */
	return json_stringn(s.p, s.n);
}

char *tf_gguf_tokenizer_json(const tf_gguf *g)
{
	const tf_gguf_kv *tok = tf_gguf_find(g, "tokenizer.ggml.tokens"), *types = NULL, *merges;
	json_t *root = NULL, *vocab, *mlist, *added, *pre, *seq;
	char *model = NULL, *pname = NULL, *text = NULL;
	const char *regex = NULL;
	uint64_t at = 0;
	int bad;

	if (!tok)
		return NULL;
	model = tf_gguf_string(g, "tokenizer.ggml.model", &bad);
	if (!model || strcmp(model, "gpt2")) {
		if (!bad)
			tf_err("'%s': tokenizer.ggml.model is '%s': only byte-level BPE (gpt2) is read", g->path,
			       model ? model : "");
		goto out;
	}
	pname = tf_gguf_string(g, "tokenizer.ggml.pre", &bad);
	if (bad)
		goto out;
	for (size_t i = 0; i < sizeof pres / sizeof *pres; i++)
		if (pname && !strcmp(pname, pres[i].name))
			regex = pres[i].regex;
	if (!regex) {
		tf_err("'%s': tokenizer.ggml.pre '%s' is not read here (qwen2 and qwen35 are)", g->path,
		       pname ? pname : "");
		goto out;
	}
	if (!(tok = array_of(g, "tokenizer.ggml.tokens", TF_GGUF_STRING, 0)))
		goto out;
	if (tok->count > (1 << 24)) {
		tf_err("'%s': %llu tokens are too many", g->path, (unsigned long long)tok->count);
		goto out;
	}
	if (tf_gguf_find(g, "tokenizer.ggml.token_type") &&
	    !(types = array_of(g, "tokenizer.ggml.token_type", -1, tok->count)))
		goto out;
	if (!(merges = array_of(g, "tokenizer.ggml.merges", TF_GGUF_STRING, 0)))
		goto out;
	root = json_object();
	vocab = json_object();
	added = json_array();
	mlist = json_array();
	json_object_set_new(root, "version", json_string("1.0"));
	json_object_set_new(root, "added_tokens", added);
	json_object_set_new(root, "normalizer", json_pack("{s:s}", "type", "NFC"));
	seq = json_array();
	json_array_append_new(seq, json_pack("{s:s, s:{s:s}, s:s, s:b}", "type", "Split", "pattern", "Regex", regex,
					     "behavior", "Isolated", "invert", 0));
	json_array_append_new(seq, json_pack("{s:s, s:b, s:b, s:b}", "type", "ByteLevel", "add_prefix_space", 0,
					     "trim_offsets", 0, "use_regex", 0));
	pre = json_pack("{s:s, s:o}", "type", "Sequence", "pretokenizers", seq);
	json_object_set_new(root, "pre_tokenizer", pre);
	json_object_set_new(root, "post_processor", json_null());
	json_object_set_new(root, "decoder", json_pack("{s:s, s:b, s:b, s:b}", "type", "ByteLevel", "add_prefix_space",
						       1, "trim_offsets", 1, "use_regex", 1));
	for (uint64_t i = 0; i < tok->count; i++) {
		tf_gguf_str s = tf_gguf_arr_next_str(tok, &at);
		int64_t type = types ? tf_gguf_arr_int(types, i) : TT_NORMAL;
		json_t *js = jstr(s);
		if (!js) {
			tf_err("'%s': token %llu is not UTF-8", g->path, (unsigned long long)i);
			goto fail;
		}
		if (type == TT_CONTROL || type == TT_USER) {
			json_array_append_new(added, json_pack("{s:I, s:o, s:b, s:b, s:b, s:b, s:b}", "id",
							       (json_int_t)i, "content", js, "single_word", 0,
							       "lstrip", 0, "rstrip", 0, "normalized", 0,
							       "special", type == TT_CONTROL));
			continue;
		}
		if (json_object_getn(vocab, s.p, s.n)) {
			tf_err("'%s': token '%.*s' appears twice", g->path, (int)(s.n < 64 ? s.n : 64), s.p);
			json_decref(js);
			goto fail;
		}
		json_object_setn_new(vocab, s.p, s.n, json_integer(i));
		json_decref(js);
	}
	at = 0;
	for (uint64_t i = 0; i < merges->count; i++) {
		json_t *js = jstr(tf_gguf_arr_next_str(merges, &at));
		if (!js) {
			tf_err("'%s': merge %llu is not UTF-8", g->path, (unsigned long long)i);
			goto fail;
		}
		json_array_append_new(mlist, js);
	}
	json_object_set_new(root, "model", json_pack("{s:s, s:n, s:n, s:n, s:n, s:b, s:b, s:b, s:o, s:o}", "type",
						     "BPE", "dropout", "unk_token", "continuing_subword_prefix",
						     "end_of_word_suffix", "fuse_unk", 0, "byte_fallback", 0,
						     "ignore_merges", 0, "vocab", vocab, "merges", mlist));
	vocab = mlist = NULL;
	text = json_dumps(root, JSON_COMPACT);
	goto out;
fail:
	json_decref(vocab);
	json_decref(mlist);
out:
	json_decref(root);
	free(model);
	free(pname);
	return text;
}
