/* sbuf.h: a growing byte string, always NUL-terminated */
#ifndef TF_SBUF_H
#define TF_SBUF_H

#include <stddef.h>

typedef struct {
	char *s;
	size_t len, cap;
} tf_sbuf;

void tf_sbuf_add(tf_sbuf *b, const char *s, size_t n);
void tf_sbuf_puts(tf_sbuf *b, const char *s);
void tf_sbuf_printf(tf_sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tf_sbuf_free(tf_sbuf *b);

#endif
