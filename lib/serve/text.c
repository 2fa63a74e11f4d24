/* text.c: ids to released text, stop strings and UTF-8 (text.h) */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/utf8.h"
#include "text.h"

void tf_text_init(tf_text *t, const tf_tok *tok)
{
	memset(t, 0, sizeof *t);
	t->tok = tok;
}

void tf_text_stop(tf_text *t, const char *s, size_t n)
{
	if (!n || t->nstop == TF_STOPS_MAX)
		return;
	char *c = tf_malloc(n + 1);
	memcpy(c, s, n);
	c[n] = 0;
	t->stop[t->nstop++] = c;
}

/* the first stop string in buf that ends past `from`: its start, or -1 */
static long find_stop(const tf_text *t, size_t from)
{
	long best = -1;

	for (int k = 0; k < t->nstop; k++) {
		size_t sl = strlen(t->stop[k]);
		size_t start = from >= sl ? from - sl + 1 : 0;
		for (size_t i = start; i + sl <= t->len; i++)
			if (!memcmp(t->buf + i, t->stop[k], sl)) {
				if (best < 0 || (long)i < best)
					best = (long)i;
				break;
			}
	}
	return best;
}

void tf_text_push(tf_text *t, int32_t id)
{
	size_t n;
	const char *p;

	if (t->stopped)
		return;
	t->ids_in_text++;
	if (tf_tok_special(t->tok, id) || !(p = tf_tok_piece(t->tok, id, &n)) || !n)
		return;
	size_t old = t->len;
	if (t->len + n > t->cap) {
		t->cap = (t->len + n) * 2 + 64;
		t->buf = tf_realloc(t->buf, t->cap);
	}
	memcpy(t->buf + t->len, p, n);
	t->len += n;
	long at = find_stop(t, old);
	if (at >= 0) {
		t->len = (size_t)at;
		t->stopped = 1;
	}
}

/* bytes at the end of buf that may begin a stop string */
static size_t stop_prefix(const tf_text *t)
{
	size_t keep = 0;

	for (int k = 0; k < t->nstop; k++) {
		size_t sl = strlen(t->stop[k]);
		for (size_t m = sl - 1; m > keep; m--)
			if (m <= t->len && !memcmp(t->buf + t->len - m, t->stop[k], m)) {
				keep = m;
				break;
			}
	}
	return keep;
}

char *tf_utf8_clean(const char *s, size_t n, size_t *out_n)
{
	char *o = tf_malloc(3 * n + 1);
	size_t k = 0;

	while (n) {
		size_t v = tf_utf8_valid(s, n);
		memcpy(o + k, s, v);
		k += v;
		s += v, n -= v;
		if (n) {
			/* one bad byte becomes one U+FFFD */
			k += tf_utf8_put(o + k, 0xFFFD);
			s++, n--;
		}
	}
	o[k] = 0;
	*out_n = k;
	return o;
}

char *tf_text_take(tf_text *t, int end, size_t *n)
{
	size_t upto = t->len;

	if (!end && !t->stopped) {
		size_t hold = stop_prefix(t), pend = tf_utf8_pending(t->buf, t->len);
		if (pend > hold)
			hold = pend;
		upto = t->len - hold;
	}
	if (upto < t->sent)
		upto = t->sent;
	char *s = tf_utf8_clean(t->buf + t->sent, upto - t->sent, n);
	t->sent = upto;
	return s;
}

void tf_text_free(tf_text *t)
{
	for (int k = 0; k < t->nstop; k++)
		free(t->stop[k]);
	free(t->buf);
	memset(t, 0, sizeof *t);
}
