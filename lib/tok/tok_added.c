/* tok_added.c: finding added tokens, leftmost then longest */
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "base/err.h"
#include "base/utf8.h"
#include "tok_added.h"

void tf_added_init(tf_added *a)
{
	memset(a, 0, sizeof *a);
}

void tf_added_free(tf_added *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->tok[i].text);
	free(a->tok);
	free(a->node[0]);
	free(a->node[1]);
	memset(a, 0, sizeof *a);
}

/* the child of node v (0: the root) along byte c, or 0 */
static int32_t child_of(const tf_added *a, int kind, int32_t v, unsigned char c)
{
	if (!v)
		return a->root[kind][c];
	for (int32_t w = a->node[kind][v].child; w; w = a->node[kind][w].sibling)
		if (a->node[kind][w].byte == c)
			return w;
	return 0;
}

/* the child of v along c, made when missing */
static int32_t child_make(tf_added *a, int kind, int32_t v, unsigned char c)
{
	int32_t w = child_of(a, kind, v, c);

	if (w)
		return w;
	if (a->nnode[kind] + 1 >= a->capnode[kind]) {
		a->capnode[kind] = a->capnode[kind] ? 2 * a->capnode[kind] : 64;
		a->node[kind] = tf_realloc(a->node[kind], a->capnode[kind] * sizeof *a->node[kind]);
	}
	if (!a->nnode[kind])
		a->nnode[kind] = 1;     /* node 0 stands for none */
	w = (int32_t)a->nnode[kind]++;
	a->node[kind][w] = (tf_added_node){ .byte = c };
	if (v) {
		a->node[kind][w].sibling = a->node[kind][v].child;
		a->node[kind][v].child = w;
	} else {
		a->root[kind][c] = w;
	}
	return w;
}

int32_t tf_added_find(const tf_added *a, int normalized, const char *s, size_t len)
{
	int kind = !!normalized;
	int32_t v = 0;

	for (size_t k = 0; k < len; k++)
		if (!(v = child_of(a, kind, v, (unsigned char)s[k])))
			return 0;
	return len ? a->node[kind][v].tok : 0;
}

void tf_added_add(tf_added *a, const char *s, size_t len, const tf_added_tok *tok)
{
	int kind = !!tok->normalized;
	int32_t v = 0;

	if (!len)
		return;         /* an empty token can never be matched */
	a->tok = tf_realloc(a->tok, (a->n + 1) * sizeof *a->tok);
	a->tok[a->n] = *tok;
	a->tok[a->n].text = tf_malloc(tok->len);
	memcpy(a->tok[a->n++].text, tok->text, tok->len);
	for (size_t k = 0; k < len; k++)
		v = child_make(a, kind, v, (unsigned char)s[k]);
	a->node[kind][v].tok = (int32_t)a->n;   /* a text given twice: the later token */
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
	size_t i = from;

	if (!a->maxlen[kind])
		return -1;
	while (i < n) {
		const tf_added_tok *tok = NULL;
		size_t len = 0, s, e;
		int32_t c;

		if (!a->root[kind][(unsigned char)t[i]]) {
			i++;
			continue;
		}
		/* the longest token from i: one walk down the trie */
		int32_t v = 0;
		for (size_t k = 0; i + k < n; k++) {
			if (!(v = child_of(a, kind, v, (unsigned char)t[i + k])))
				break;
			if (a->node[kind][v].tok) {
				tok = &a->tok[a->node[kind][v].tok - 1];
				len = k + 1;
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
