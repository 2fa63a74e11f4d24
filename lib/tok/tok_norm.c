/* tok_norm.c: Unicode normal forms, only where the text needs them */
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "base/err.h"
#include "base/utf8.h"
#include "tok_norm.h"

static const int options[] = {
	[TF_NFC] = UTF8PROC_STABLE | UTF8PROC_COMPOSE,
	[TF_NFD] = UTF8PROC_STABLE | UTF8PROC_DECOMPOSE,
	[TF_NFKC] = UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT,
	[TF_NFKD] = UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT,
};

/* every character below this is left alone by the form and is a boundary
 * it never rewrites across: no decomposition of the kind the form applies,
 * combining class 0, and never the second half of a composition */
static const int32_t stable_below[] = {
	[TF_NFC] = 0x300, [TF_NFD] = 0xc0, [TF_NFKC] = 0xa0, [TF_NFKD] = 0xa0,
};

static void append(char **buf, size_t *cap, size_t *len, const void *s, size_t n)
{
	if (!n)
		return;
	if (*len + n > *cap) {
		*cap = 2 * *cap + n + 256;
		*buf = tf_realloc(*buf, *cap);
	}
	memcpy(*buf + *len, s, n);
	*len += n;
}

/* one form; returns the length written to *buf, or -2 when s needs no
 * change, or -1 on error */
static long apply_one(int form, const char *s, size_t n, char **buf, size_t *cap)
{
	int32_t below = stable_below[form], cp;
	size_t i = 0, prev = 0, copied = 0, len = 0;

	while (i < n) {
		size_t start, end;
		utf8proc_uint8_t *dst;
		utf8proc_ssize_t got;
		int k;

		if ((unsigned char)s[i] < 0x80) {
			prev = i++;
			continue;
		}
		k = tf_utf8_next(s + i, n - i, &cp);
		if (cp < below) {
			prev = i;
			i += k;
			continue;
		}
		/* a run of characters at or above the bound, with the one before
		 * it (a combining mark may compose with it) */
		start = i > 0 ? prev : 0;
		end = i + k;
		while (end < n) {
			k = tf_utf8_next(s + end, n - end, &cp);
			if (cp < below)
				break;
			end += k;
		}
		got = utf8proc_map((const utf8proc_uint8_t *)s + start, end - start, &dst, options[form]);
		if (got < 0)
			return tf_err("cannot normalize text: %s", utf8proc_errmsg(got));
		append(buf, cap, &len, s + copied, start - copied);
		append(buf, cap, &len, dst, got);
		free(dst);
		copied = i = end;
	}
	if (!copied)
		return -2;
	append(buf, cap, &len, s + copied, n - copied);
	return len;
}

long tf_norm_apply(tf_norm *nm, const char *s, size_t n, const char **out)
{
	int which = 0;

	*out = s;
	for (int f = 0; f < nm->n; f++) {
		long len = apply_one(nm->form[f], s, n, &nm->buf[which], &nm->cap[which]);

		if (len == -1)
			return -1;
		if (len == -2)
			continue;
		*out = s = nm->buf[which];
		n = len;
		which ^= 1;
	}
	return n;
}

void tf_norm_free(tf_norm *nm)
{
	free(nm->buf[0]);
	free(nm->buf[1]);
	nm->buf[0] = nm->buf[1] = NULL;
	nm->cap[0] = nm->cap[1] = 0;
}
