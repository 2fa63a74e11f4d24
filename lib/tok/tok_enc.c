/* tok_enc.c: text to ids, the stages of tok.h in order */
#include <stdlib.h>

#include "base/err.h"
#include "base/utf8.h"
#include "tok.h"
#include "tok_bytes.h"

static void push(tf_tok *t, const int32_t *ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		tf_seq_push(t->out, ids[i]);
}

/* one pre-tokenizer word: its bytes, each standing for its byte-level
 * character, merged by BPE */
static int encode_word(void *ctx, const char *s, size_t n)
{
	tf_tok *t = ctx;
	uint64_t h = tf_hash(s, n);
	const int32_t *hit;
	size_t m = 0, k;
	int prev_unk = 0;

	if ((hit = tf_cache_get(&t->cache, s, n, h, &k))) {
		push(t, hit, k);
		return 0;
	}
	if (n > t->sym_cap) {
		t->sym_cap = 2 * n;
		t->sym = tf_realloc(t->sym, t->sym_cap * sizeof *t->sym);
		t->spelled = tf_realloc(t->spelled, 2 * t->sym_cap);
	}
	/* ignore_merges: a word the vocab has whole is that token */
	if (t->ignore_merges) {
		int32_t id = tf_vocab_get(&t->vocab, t->spelled, tf_bytelevel_encode(s, n, t->spelled));
		if (id >= 0) {
			push(t, &id, 1);
			tf_cache_put(&t->cache, s, n, h, &id, 1);
			return 0;
		}
	}
	for (size_t i = 0; i < n; i++) {
		int32_t id = t->byte_id[(unsigned char)s[i]];
		/* a byte the vocab lacks becomes unk_token (one for a run of
		 * them with fuse_unk), or nothing when there is none, as in
		 * tokenizers */
		if (id < 0) {
			if (t->unk >= 0 && !(t->fuse_unk && prev_unk))
				t->sym[m++] = t->unk;
			prev_unk = 1;
			continue;
		}
		t->sym[m++] = id;
		prev_unk = 0;
	}
	m = tf_bpe_merge(&t->bpe, t->sym, m);
	push(t, t->sym, m);
	tf_cache_put(&t->cache, s, n, h, t->sym, m);
	return 0;
}

/* a piece between raw added tokens: normalized, then cut at the
 * normalized added tokens, then pre-tokenized */
static int encode_piece(tf_tok *t, const char *s, size_t n)
{
	const char *ns;
	long nn = tf_norm_apply(&t->norm, s, n, &ns);
	size_t from = 0, a, b;

	if (nn < 0)
		return -1;
	for (;;) {
		int32_t id = tf_added_next(&t->added, 1, ns, nn, from, &a, &b);
		size_t stop = id >= 0 ? a : (size_t)nn;

		if (stop > from && tf_pretok_run(&t->pre, ns + from, stop - from, encode_word, t) < 0)
			return -1;
		if (id < 0)
			return 0;
		tf_seq_push(t->out, id);
		from = b;
	}
}

int tf_tok_encode(tf_tok *t, const char *text, size_t len, tf_seq *out)
{
	size_t bad = tf_utf8_valid(text, len), from = 0, a, b;

	if (bad < len)
		return tf_err("the text is not valid UTF-8 at byte %zu", bad);
	t->out = out;
	for (;;) {
		int32_t id = tf_added_next(&t->added, 0, text, len, from, &a, &b);
		size_t stop = id >= 0 ? a : len;

		if (stop > from && encode_piece(t, text + from, stop - from) < 0)
			return -1;
		if (id < 0)
			return 0;
		tf_seq_push(out, id);
		from = b;
	}
}
