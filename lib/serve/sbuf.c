/* sbuf.c: a growing byte string (sbuf.h) */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "sbuf.h"

static void room(tf_sbuf *b, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->s = tf_realloc(b->s, b->cap);
	}
}

void tf_sbuf_add(tf_sbuf *b, const char *s, size_t n)
{
	room(b, n);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = 0;
}

void tf_sbuf_puts(tf_sbuf *b, const char *s)
{
	tf_sbuf_add(b, s, strlen(s));
}

void tf_sbuf_printf(tf_sbuf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	room(b, n);
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, n + 1, fmt, ap);
	va_end(ap);
	b->len += n;
}

void tf_sbuf_free(tf_sbuf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
}
