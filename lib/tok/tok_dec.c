/* tok_dec.c: the bytes of every id, and writing them as a stream */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/utf8.h"
#include "tok_bytes.h"
#include "tok_dec.h"

void tf_tok_dec_build(tf_tok *t)
{
	const char **src = tf_calloc(t->n_vocab + 1, sizeof *src);
	size_t *src_len = tf_calloc(t->n_vocab + 1, sizeof *src_len), len = 0, cap = 1024;

	/* what each id is spelled as: an added token's text wins over the
	 * vocab's (tokenizers asks the added vocabulary first) */
	for (size_t i = 0; i < t->vocab.n; i++) {
		const tf_vocab_ent *e = &t->vocab.ent[i];
		src[e->id] = t->vocab.arena + e->off;
		src_len[e->id] = e->len;
	}
	for (size_t i = 0; i < t->added.n; i++) {
		const tf_added_tok *a = &t->added.tok[i];
		src[a->id] = a->text;
		src_len[a->id] = a->len;
	}
	for (size_t i = 0; i < (size_t)t->n_vocab; i++)
		cap += src_len[i];
	t->piece = tf_malloc(cap);
	t->piece_off = tf_calloc(t->n_vocab + 1, sizeof *t->piece_off);
	t->piece_flag = tf_calloc(t->n_vocab ? t->n_vocab : 1, 1);
	for (long id = 0; id < t->n_vocab; id++) {
		long got;

		t->piece_off[id] = len;
		if (!src[id])
			continue;
		got = tf_bytelevel_decode(src[id], src_len[id], t->piece + len);
		if (got < 0) {
			memcpy(t->piece + len, src[id], src_len[id]);
			got = src_len[id];
		}
		len += got;
		t->piece_flag[id] = TF_PIECE_TOKEN;
	}
	t->piece_off[t->n_vocab] = len;
	for (size_t i = 0; i < t->added.n; i++)
		if (t->added.tok[i].special)
			t->piece_flag[t->added.tok[i].id] |= TF_PIECE_SPECIAL;
	free(src);
	free(src_len);
}

void tf_detok_init(tf_detok *d, FILE *f)
{
	d->f = f;
	d->n = 0;
}

static int write_all(tf_detok *d, const char *s, size_t n)
{
	if (n && fwrite(s, 1, n, d->f) != n)
		return tf_err("write to stdout:");
	return 0;
}

int tf_detok_put(tf_detok *d, const char *s, size_t n)
{
	char buf[4];
	size_t keep;

	/* feed the held beginning of a character one byte at a time: it
	 * grows, is completed (and written), or turns out never to become a
	 * character (and is written as it is, the byte going on below) */
	while (d->n && n) {
		size_t m = d->n + 1;
		memcpy(buf, d->held, d->n);
		buf[d->n] = s[0];
		if (tf_utf8_pending(buf, m) == m) {
			d->held[d->n++] = s[0];
			s++, n--;
			continue;
		}
		if (tf_utf8_valid(buf, m) == m) {
			if (write_all(d, buf, m) < 0)
				return -1;
			s++, n--;
		} else if (write_all(d, d->held, d->n) < 0) {
			return -1;
		}
		d->n = 0;
	}
	keep = tf_utf8_pending(s, n);
	if (write_all(d, s, n - keep) < 0)
		return -1;
	memcpy(d->held + d->n, s + n - keep, keep);
	d->n += keep;
	return 0;
}

int tf_detok_end(tf_detok *d)
{
	int rc = write_all(d, d->held, d->n);

	d->n = 0;
	return rc;
}
