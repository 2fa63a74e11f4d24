/* tok_added.c: finding added tokens, leftmost then longest */
#include <stdlib.h>
#include <utf8proc.h>

#include "base/err.h"
#include "base/utf8.h"
#include "tok_added.h"

void tf_added_init(tf_added *a)
{
	memset(a, 0, sizeof *a);
	tf_vocab_init(&a->prefix[0]);
	tf_vocab_init(&a->prefix[1]);
}

void tf_added_free(tf_added *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->tok[i].text);
	free(a->tok);
	tf_vocab_free(&a->prefix[0]);
	tf_vocab_free(&a->prefix[1]);
	memset(a, 0, sizeof *a);
}

void tf_added_add(tf_added *a, const char *s, size_t len, const tf_added_tok *tok)
{
	int kind = !!tok->normalized;
	tf_vocab *p = &a->prefix[kind];

	if (!len)
		return;         /* an empty token can never be matched */
	a->tok = tf_realloc(a->tok, (a->n + 1) * sizeof *a->tok);
	a->tok[a->n] = *tok;
	a->tok[a->n].text = tf_malloc(tok->len);
	memcpy(a->tok[a->n++].text, tok->text, tok->len);
	for (size_t k = 1; k < len; k++)
		if (tf_vocab_get(p, s, k) < 0)
			tf_vocab_add(p, s, k, 0);
	tf_vocab_add(p, s, len, a->n);
	a->first[kind][(unsigned char)s[0]] = 1;
	if (len > a->maxlen[kind])
		a->maxlen[kind] = len;
}

/* Rust's char::is_whitespace (the Unicode White_Space property), which
 * tokenizers uses for lstrip and rstrip */
static int is_white(int32_t c)
{
	return (c >= 9 && c <= 13) || c == ' ' || c == 0x85 || c == 0xa0 || c == 0x1680 ||
	       (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f ||
	       c == 0x205f || c == 0x3000;
}

/* a letter or digit, for single_word's word boundaries */
static int is_word(int32_t c)
{
	int cat = utf8proc_category(c);

	return (cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO) ||
	       (cat >= UTF8PROC_CATEGORY_ND && cat <= UTF8PROC_CATEGORY_NO);
}

/* the character that ends t[0..i) */
static int32_t char_before(const char *t, size_t i)
{
	size_t j = i - 1;
	int32_t c;

	while (j > 0 && ((unsigned char)t[j] & 0xc0) == 0x80)
		j--;
	tf_utf8_next(t + j, i - j, &c);
	return c;
}

int32_t tf_added_next(const tf_added *a, int normalized, const char *t, size_t n, size_t from,
		      size_t *start, size_t *end)
{
	int kind = !!normalized;
	const tf_vocab *p = &a->prefix[kind];
	size_t i = from;

	if (!a->maxlen[kind])
		return -1;
	while (i < n) {
		const tf_added_tok *tok = NULL;
		size_t len = 0, s, e;
		int32_t c;

		if (!a->first[kind][(unsigned char)t[i]]) {
			i++;
			continue;
		}
		for (size_t k = 1; k <= a->maxlen[kind] && i + k <= n; k++) {
			int32_t v = tf_vocab_get(p, t + i, k);
			if (v < 0)
				break;
			if (v > 0) {
				tok = &a->tok[v - 1];
				len = k;
			}
		}
		if (!tok) {
			i++;
			continue;
		}
		s = i;
		e = i + len;
		if (tok->single_word) {
			int word_before = s > 0 && is_word(char_before(t, s));
			int word_after = e < n && (tf_utf8_next(t + e, n - e, &c), is_word(c));
			if (word_before || word_after) {
				i = e;  /* matches do not overlap: go on after it */
				continue;
			}
		}
		if (tok->lstrip)       /* not back into the previous match */
			while (s > from && is_white(char_before(t, s)))
				do
					s--;
				while (s > from && ((unsigned char)t[s] & 0xc0) == 0x80);
		if (tok->rstrip) {
			int k;
			while (e < n && (k = tf_utf8_next(t + e, n - e, &c), is_white(c)))
				e += k;
		}
		*start = s;
		*end = e;
		return tok->id;
	}
	return -1;
}
